"""The pathological-cell study (benchmarks/studies/bench_extreme_grids.py) at a tiny size: its
flags follow the times and fits it measured, a fit made slow is caught, and what it says of a
cell is what the estimators say."""

from __future__ import annotations

import csv
import time

import numpy as np
import pytest
from sklearn.svm import SVC

from svmbench import SVMClassifier
from svmbench.benchmarks.studies import bench_extreme_grids as study
from svmbench.solvers import reductions


@pytest.fixture(scope="module")
def iris():
    return study.datasets(["iris"])["iris"]


class _Slowed(SVMClassifier):
    """An SVMClassifier whose fit takes at least 60 ms more."""

    def fit(self, X, y, sample_weight=None):
        time.sleep(0.06)
        return super().fit(X, y, sample_weight)


def test_a_fit_made_slow_is_flagged_and_counted(iris):
    X, y = iris
    cell = study.time_cell(
        lambda: (_Slowed(C=1.0), SVC(C=1.0)), X, y, repeats=2, label=("iris", "rbf", 1.0, None)
    )
    assert cell.ours >= 0.06 and cell.slow and cell.flagged
    assert cell.ratio == cell.ours / cell.theirs
    assert cell.far == (cell.ours / cell.theirs > study.SLOW_RATIO)
    fast = study.time_cell(
        lambda: (SVMClassifier(C=1.0), SVC(C=1.0)),
        X,
        y,
        repeats=1,
        label=("iris", "rbf", 1.0, None),
    )
    summary = study.summarize([cell, fast])
    assert cell in summary.slow and summary.worst.ratio == max(cell.ratio, fast.ratio)
    assert summary.slow == [c for c in (cell, fast) if c.ours > study.SLOW_CELL]
    assert summary.total_ours == cell.ours + fast.ours
    assert summary.statuses == {"optimal": 2}


def test_support_and_predictions_are_compared_with_the_fitted_estimators(iris):
    X, y = iris
    # SVC at a C a thousand times smaller: more support vectors, other predictions
    cell = study.time_cell(
        lambda: (SVMClassifier(C=10.0, gamma=0.5), SVC(C=0.01, gamma=0.5)), X, y, repeats=1
    )
    ours = SVMClassifier(C=10.0, gamma=0.5).fit(X, y)
    theirs = SVC(C=0.01, gamma=0.5).fit(X, y)
    assert cell.n_support == "differs"
    assert (cell.ours_sv, cell.theirs_sv) == (ours.n_support_.sum(), theirs.n_support_.sum())
    assert cell.predictions_differ == np.sum(ours.predict(X) != theirs.predict(X)) > 0
    assert cell.status == ours.result_.status.value == "optimal"
    assert cell.chose == "ovo/auto"


def test_the_hard_data_are_not_separable_and_wider_than_long():
    X, y = study.hard_data()
    n, d = X.shape
    assert d > n and set(np.unique(y)) == {0, 1}
    rows = {}
    conflicts = 0
    for row, label in zip(map(bytes, X), y, strict=True):
        if row in rows and rows[row] != label:
            conflicts += 1
        rows.setdefault(row, label)
    assert len(rows) < n and conflicts == 20  # the same point under both labels


def test_the_table_and_csv_agree_with_the_cells(tmp_path, capsys):
    path = tmp_path / "cells.csv"
    study.main(["--quick", "--data", "iris", "--family", "rbf,squared_hinge", "--csv", str(path)])
    out = capsys.readouterr().out
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(study.grid("rbf", True)) + len(study.grid("squared_hinge", True))
    for row in rows:
        ours, theirs = float(row["ours"]), float(row["theirs"])
        assert row["slow"] == str(ours > study.SLOW_CELL)
        assert row["far"] == str(ours / theirs > study.SLOW_RATIO)
        assert float(row["ratio"]) == pytest.approx(ours / theirs)
    lines = {line.split()[1]: line.split() for line in out.splitlines() if line.startswith("iris")}
    for family in ("rbf", "squared_hinge"):
        mine = [r for r in rows if r["family"] == family]
        fields = lines[family]
        assert int(fields[2]) == len(mine)
        assert int(fields[8]) == sum(r["slow"] == "True" for r in mine)
        assert int(fields[9]) == sum(r["far"] == "True" for r in mine)
        statuses = dict(item.split(":") for item in fields[12:])
        assert statuses == {
            s: str(sum(r["status"] == s for r in mine)) for s in {r["status"] for r in mine}
        }
    assert lines["squared_hinge"][10] == "n/a"  # LinearSVC has no n_support_


def test_explain_names_each_pair_and_leaves_the_reduction_as_it_was(iris):
    X, y = iris
    before = reductions._binary_solve
    cell = study.Cell("iris", "rbf", 1.0, 0.1, 0.0, 1.0, "", "", None, None, 0, "")
    lines = study.explain(cell, X, y)
    assert reductions._binary_solve is before
    pairs = [line for line in lines if line.lstrip().startswith("pair")]
    assert len(pairs) == 3 and all("optimal" in line for line in pairs)
    assert "chose ovo/auto" in lines[0]


def test_unknown_data_or_family_is_refused_by_name(capsys):
    with pytest.raises(SystemExit):
        study.main(["--data", "irises"])
    assert "irises" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        study.main(["--family", "poly"])
    assert "poly" in capsys.readouterr().err
