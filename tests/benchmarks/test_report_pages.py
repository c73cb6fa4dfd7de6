"""The report's HTML page and figures, ``select --plot``'s figure, and the exports.

Every figure is inspected as a matplotlib Figure: a title, labelled axes (with units where the
axis has any), a legend or a colour bar, ticks of a readable size; the page for embedded images
and no external asset.
"""

from __future__ import annotations

import base64
import math
import re
import sqlite3
import subprocess

import numpy as np
import pytest

from svmbench.benchmarks.cli import main as cli
from svmbench.benchmarks.harness.cases import Case
from svmbench.benchmarks.harness.execution import run_cases
from svmbench.benchmarks.harness.report import HTML_NAME, write_report
from svmbench.benchmarks.harness.report_figures import (
    anchors_figure,
    boundary_figure,
    confusion_figure,
    gap_figure,
    pyplot,
    scaling_figure,
)
from svmbench.benchmarks.harness.report_labels import solver_color
from svmbench.benchmarks.harness.report_page import Page
from svmbench.benchmarks.harness.settings import Settings
from svmbench.benchmarks.harness.store import Store
from svmbench.problems.datasets import load

FAKES = "tests.benchmarks._fake_solvers"
SMALL, LARGE = "gaussian:n=60,d=2,sep=2,seed=0", "gaussian:n=120,d=2,sep=2,seed=0"
IRIS = "iris:split=0.3,seed=0"
LINEAR = {"kind": "soft_margin_primal", "C": 1.0, "bias": "regularized"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A database of a tiny suite: two sizes of 2-D binary data (a traced method, a reference,
    an anchor) and iris (two references)."""
    tmp = tmp_path_factory.mktemp("report")
    cases = [
        Case(LINEAR, data, solver, {"tol": 1e-6})
        for data in (SMALL, LARGE)
        for solver in ("osqp", "test_traced", "sklearn_linearsvc")
    ]
    cases += [Case({"kind": "multiclass_hinge", "C": 1.0}, IRIS, s) for s in ("clarabel", "osqp")]
    records = run_cases(cases, Settings(imports=(FAKES,)), in_process=True, cache_dir=tmp)
    path = tmp / "r.sqlite"
    with Store(path) as store:
        for r in records:
            store.add(r, suite="tiny")
    return path


@pytest.fixture(scope="module")
def rows(db):
    with Store(db, create=False) as store:
        return store.records()


def _of(rows, data, kind=None):
    return [r for r in rows if r["data"] == data and (kind is None or r["problem_kind"] == kind)]


def _check_axes(ax, *, units: tuple[str, ...] = ()):
    """A title, both axis labels (``units`` among them), readable ticks."""
    assert ax.get_title(), "no title"
    assert ax.get_xlabel() and ax.get_ylabel(), "an axis without a label"
    for unit in units:
        assert unit in ax.get_xlabel() + ax.get_ylabel(), f"no unit {unit!r}"
    for label in ax.get_xticklabels() + ax.get_yticklabels():
        assert label.get_fontsize() >= 6


def _plotting_axes(fig):
    """The axes that draw data (not the colour bars, not the hidden spare panels)."""
    return [
        ax for ax in fig.axes if ax.get_visible() and ax.axison and ax.get_label() != "<colorbar>"
    ]


def test_gap_figure_has_the_tol_line_a_legend_and_one_colour_per_solver(rows):
    fig, absent = gap_figure(_of(rows, SMALL), "gap")
    (ax,) = fig.axes
    _check_axes(ax, units=("(s)",))
    assert ax.get_xscale() == ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "requested tol = 1e-06" in labels
    tol_line = next(line for line in ax.get_lines() if line.get_label().startswith("requested"))
    assert list(tol_line.get_ydata()) == [1e-6, 1e-6]
    assert any(label.startswith("test_traced") for label in labels)
    traced = next(line for line in ax.get_lines() if line.get_label() == "test_traced")
    assert traced.get_color() == solver_color("test_traced")
    assert len(traced.get_xdata()) == 4 and absent == []
    pyplot().close(fig)


@pytest.fixture(scope="module")
def report(tmp_path_factory, rows):
    """A report of the tiny database, rendered as the shipped default suite's."""
    out = tmp_path_factory.mktemp("rendered") / "r"
    write_report(rows, out, title="tiny", suite="default")
    return out


def test_every_solver_is_drawn_or_listed_with_the_reason(report):
    md = (report / "README.md").read_text()
    # clarabel ran only on iris: the binary figures say why it is missing, by its declaration
    assert "Not in this figure: no record for this problem: clarabel" in md
    # the binary solvers are missing from iris: sklearn_linearsvc does not solve multiclass
    assert "does not solve multiclass_hinge: sklearn_linearsvc, test_traced" in md
    assert "Rendered by svmbench " in md and "commit `" in md


def test_colours_are_fixed_per_solver_across_figures(rows):
    colours = {}
    for data in (SMALL, LARGE):
        fig, _ = gap_figure(_of(rows, data), "gap")
        for line in fig.axes[0].get_lines():
            name = line.get_label().split(" ")[0].split(":")[0]
            if name != "requested":
                assert colours.setdefault(name, line.get_color()) == line.get_color()
        pyplot().close(fig)
    fig, exponents = scaling_figure(_of(rows, SMALL) + _of(rows, LARGE), "scaling")
    for line in fig.axes[0].get_lines():
        name = line.get_label().split(" ")[0]
        if name in colours:
            assert tuple(line.get_color()) == tuple(colours[name])
    assert set(exponents) >= {"osqp", "test_traced"}
    assert solver_color("osqp") != solver_color("ovo") != solver_color("smo")
    pyplot().close(fig)


def test_scaling_figure_has_units_a_legend_and_the_exponents(rows):
    fig, exponents = scaling_figure(_of(rows, SMALL) + _of(rows, LARGE), "time vs n")
    (ax,) = fig.axes
    _check_axes(ax, units=("(s)", "n (training points)"))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"a = {exponents['osqp']:.2f}" in label for label in labels)
    pyplot().close(fig)


def test_anchors_figure_hatches_the_anchors(rows):
    fig = anchors_figure(_of(rows, SMALL), "anchors")
    (ax,) = fig.axes
    _check_axes(ax, units=("(s)",))
    assert ax.get_legend() is not None
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    hatched = [ticks[i] for i, bar in enumerate(ax.patches) if bar.get_hatch()]
    assert hatched and all(t.startswith("sklearn_linearsvc") for t in hatched)
    assert anchors_figure([r for r in _of(rows, SMALL) if r["solver"] == "osqp"], "x") is None
    pyplot().close(fig)


def test_boundary_figure_labels_axes_classes_margins_and_support_vectors(rows):
    fig, absent = boundary_figure(_of(rows, SMALL), "boundaries", load(SMALL))
    panels = _plotting_axes(fig)
    assert len(panels) == 3 and absent == []
    for ax in panels:
        _check_axes(ax, units=("x₁", "x₂"))
        assert ax.collections, "nothing drawn"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(label.startswith("class") and "y = −1" in label for label in labels)
    assert "f(x) = ±1 (margins)" in labels and any("support vector" in lab for lab in labels)
    assert fig.get_suptitle()
    pyplot().close(fig)


def test_confusion_figure_has_class_names_integer_counts_and_contrast(rows):
    fig, _ = confusion_figure(_of(rows, IRIS), "confusions", ("setosa", "versicolor", "virginica"))
    panels = _plotting_axes(fig)
    assert len(panels) == 2
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 2 and all(bar.get_ylabel() == "examples (count)" for bar in bars)
    for ax in panels:
        _check_axes(ax)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["setosa", "versicolor", "virginica"]
        texts = [t for t in ax.texts if t.get_text()]
        assert all(re.fullmatch(r"\d+", t.get_text()) for t in texts)
        colours = {str(t.get_color()) for t in texts}
        assert len(colours) == 2  # light text on dark cells, dark on light
    pyplot().close(fig)


def test_the_html_page_embeds_every_figure_and_links_no_asset(report):
    out = report
    page = (out / HTML_NAME).read_text()
    pngs = sorted(p.name for p in out.glob("*.png"))
    images = re.findall(r'<img [^>]*src="([^"]+)"', page)
    assert len(images) == len(pngs) >= 5
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert base64.b64decode(images[0].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http" not in page and "<script" not in page and "<link" not in page
    assert "svmbench run default --no-resume --report reports/default" in page
    assert "<table>" in page and "Environment" in page
    md = (out / "README.md").read_text()
    assert "svmbench run default --no-resume --report reports/default" in md


def test_the_page_respects_its_size_cap():
    plt = pyplot()
    page = Page("capped", cap_bytes=60_000)
    for k in range(4):
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.imshow(np.random.default_rng(k).random((200, 300)))  # noise: a PNG that hardly shrinks
        ax.set_title(f"noise {k}")
        page.figure(f"gap_noise{k}.png", fig, f"noise {k}")
    text = page.html()
    assert len(text.encode()) <= 60_000
    assert "left out" in text or "resolution" in text
    assert "gap_noise3.png" in text  # the note names the file beside the page
    assert len(page.files) == 4  # the Markdown keeps every figure


def test_report_writes_outside_tracked_folders_by_default(tmp_path, monkeypatch, db):
    """In a git checkout, ``svmbench report`` leaves ``git status`` as it was."""
    from pathlib import Path

    gitignore = Path(__file__).resolve().parents[2] / ".gitignore"
    if not gitignore.exists():
        pytest.skip("the tests run outside a checkout")
    monkeypatch.chdir(tmp_path)
    try:
        subprocess.run(["git", "init", "-q"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    (tmp_path / ".gitignore").write_text(gitignore.read_text())
    (tmp_path / "r.sqlite").write_bytes(Path(db).read_bytes())
    before = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True)
    assert cli.main(["report", "--db", "r.sqlite", "--suite", "tiny"]) == 0
    assert (tmp_path / "svmbench-report" / "tiny" / HTML_NAME).exists()
    assert not (tmp_path / "reports").exists()
    after = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True)
    assert after.stdout == before.stdout


# ---- select --plot ---------------------------------------------------------------------------


class _Chosen:
    def __init__(self, C, gamma):
        self.C_, self.gamma_ = C, gamma


def _results(gammas):
    Cs = [0.1, 1.0, 10.0]
    rows = [(C, g) for g in gammas for C in Cs]
    return {
        "C": [C for C, _ in rows],
        "gamma": [g for _, g in rows],
        "error": [0.1 + 0.05 * i for i in range(len(rows))],
        "time": [0.01 * (i + 1) for i in range(len(rows))],
        "max_rel_gap": [1e-7] * len(rows),
    }


def test_select_plot_with_a_gamma_grid_is_a_heat_map_with_the_chosen_point():
    from svmbench.benchmarks.cli.select import select_figure

    results = _results([0.01, 0.1])
    fig = select_figure(results, [5] * 6, _Chosen(1.0, 0.1), "3-fold on x")
    heat, times = _plotting_axes(fig)
    _check_axes(heat, units=("C (", "γ ("))
    assert heat.collections and heat.get_xscale() == heat.get_yscale() == "log"
    star = next(line for line in heat.get_lines() if line.get_label().startswith("chosen"))
    assert list(star.get_xdata()) == [1.0] and list(star.get_ydata()) == [0.1]
    assert heat.get_legend() is not None
    bar = next(ax for ax in fig.axes if ax.get_label() == "<colorbar>")
    assert "validation error" in bar.get_ylabel()
    _check_axes(times, units=("(s",))
    assert len(times.get_lines()) == 2 and times.get_legend() is not None
    # the measured times are drawn as they are, not spread evenly
    assert sorted(times.get_lines()[0].get_ydata()) == [0.01, 0.02, 0.03]
    pyplot().close(fig)


def test_select_plot_without_a_gamma_grid_is_a_C_curve_with_support_vectors():
    from svmbench.benchmarks.cli.select import select_figure

    fig = select_figure(_results(["scale"]), [30, 20, 10], _Chosen(0.1, "scale"), "loo on x")
    curve, times = [ax for ax in _plotting_axes(fig) if ax.get_title()]
    _check_axes(curve, units=("C (",))
    labels = [t.get_text() for t in curve.get_legend().get_texts()]
    assert labels == ["validation error", "chosen: C = 0.1", "support vectors (full data)"]
    _check_axes(times, units=("(s",))
    pyplot().close(fig)


def test_leave_one_out_times_each_C():
    from svmbench.model_selection import SVMClassifierCV

    data = load("gaussian:n=30,d=2,sep=1,seed=0")
    model = SVMClassifierCV(Cs=[0.01, 1.0, 100.0], cv="loo", solver="clarabel", kernel="linear")
    model.fit(data.X, data.y)
    times = model.cv_results_["time"]
    assert len(set(times)) == 3 and all(t > 0 for t in times)
    assert sum(times) <= model.loo_.wall_time * (1 + 1e-9)
    assert sum(times) >= 0.9 * model.loo_.wall_time


# ---- exports ---------------------------------------------------------------------------------


def _stored_columns(db) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[1] for row in conn.execute("PRAGMA table_info(records)")]


def test_csv_export_has_every_stored_column(db, capsys):
    assert cli.main(["results", "--db", str(db), "--csv", "-"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert set(header) == set(_stored_columns(db))
    assert header[:3] == ["id", "suite", "case_key"]
    assert {"wall_time", "solve_time", "certify_time", "trace", "environment"} <= set(header)


def test_parquet_export_round_trips(db, tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "r.parquet"
    assert cli.main(["results", "--db", str(db), "--parquet", str(path)]) == 0
    table = pq.read_table(path)
    assert table.num_rows == 8 and set(table.column_names) == set(_stored_columns(db))
    wall = table.column("wall_time").to_pylist()
    assert all(isinstance(t, float) and math.isfinite(t) for t in wall)


def test_parquet_without_pyarrow_names_the_extra(db, tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = tmp_path / "r.parquet"
    assert cli.main(["results", "--db", str(db), "--parquet", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--parquet" in err and "svmbench[parquet]" in err
    assert not path.exists()
