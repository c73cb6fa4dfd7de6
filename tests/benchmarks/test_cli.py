"""The first commands: ``svmbench list``, ``solve`` and ``run``, through ``main(argv)``."""

from __future__ import annotations

import re

import numpy as np
import pytest

from svmbench import SVMClassifier
from svmbench.benchmarks.cli import main as cli
from svmbench.benchmarks.harness.cases import expand
from svmbench.benchmarks.harness.suite_files import load_suite
from svmbench.problems.datasets import load as load_dataset
from svmbench.problems.model_files import save_model


def run(capsys, *argv):
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def fail(capsys, *argv):
    """A command that must fail: its exit code and its one line on stderr (``error: ...``)."""
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    assert code != 0, captured.out
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    assert "error" not in captured.out
    return code, captured.err


def test_list_names_problems_solvers_and_datasets(capsys):
    code, out = run(capsys, "list")
    assert code == 0
    for name in ("soft_margin_primal", "kernel_dual", "multiclass_hinge", "osqp", "clarabel"):
        assert name in out
    for name in ("gaussian", "quadrant", "breast_cancer", "digits", "libsvm"):
        assert name in out


def test_solve_prints_the_certified_record(capsys):
    code, out = run(
        capsys,
        "solve",
        "--problem", "soft_margin_primal",
        "--data", "gaussian:n=100,d=3,sep=1,seed=0",
        "--solver", "clarabel",
        "--C", "0.5",
    )  # fmt: skip
    assert code == 0
    assert "optimal" in out
    gap = float(re.search(r"relative gap\s*│?\s*([-0-9.e+]+)", out).group(1))
    assert abs(gap) <= 1e-8
    assert "True" in out  # certified


def test_solve_reports_bad_input_as_an_error(capsys):
    code, err = fail(
        capsys, "solve", "--problem", "kernel_dual", "--data", "iris", "--solver", "osqp"
    )
    assert code == 2
    assert "y must contain only -1 and +1" in err
    code, err = fail(capsys, "solve", "--problem", "soft_margin_primal", "--data", "nosuch",
                     "--solver", "osqp")  # fmt: skip
    assert code == 2 and "nosuch" in err


def test_run_on_a_small_suite_prints_a_row_per_case(capsys, tmp_path):
    suite = tmp_path / "tiny.toml"
    suite.write_text(
        """
name = "tiny"
data = ["gaussian:n=60,d=3,sep=1,seed=0", "iris"]
solvers = ["osqp", "clarabel"]
[[problems]]
kind = "soft_margin_primal"
C = [0.5, 1.0]
[[problems]]
kind = "multiclass_hinge"
"""
    )
    db, report = tmp_path / "tiny.sqlite", tmp_path / "report"
    argv = ["run", str(suite), "-v", "--db", str(db), "--report", str(report), "--in-process"]
    code, out = run(capsys, *argv)
    assert code == 0
    assert "6 cases" in out and "6 to run" in out
    assert out.count("done:") == 6
    assert "skipped" in out and "multiclass data set" in out
    assert (report / "README.md").exists()
    code, out = run(capsys, *argv)  # everything is in the database already
    assert code == 0 and "6 already in" in out and "0 to run" in out
    assert "done:" not in out and "6 records" in out


def test_suite_expansion_is_a_product_with_reasons():
    suite = {
        "data": ["gaussian:n=40,d=2,sep=1,seed=0", "iris"],
        "solvers": ["osqp", {"name": "clarabel", "tol": [1e-8, 1e-10]}],
        "problems": [
            {"kind": "soft_margin_primal", "C": [0.1, 1.0], "bias": ["free", "none"]},
            {"kind": "kernel_dual", "kernel": "sigmoid", "gamma": 1.0},
        ],
    }
    cases, skipped = expand(suite)
    primal = [c for c in cases if c.problem_kind == "soft_margin_primal"]
    assert len(primal) == 4 * 3  # 2 C × 2 bias on the binary set, 3 solver settings
    assert len({c.key for c in cases}) == len(cases)
    reasons = " ".join(s.reason for s in skipped)
    assert "indefinite" in reasons  # the references refuse the sigmoid kernel
    assert "multiclass data set" in reasons


def test_default_suite_is_shipped_and_covers_every_problem_kind():
    suite = load_suite("default")
    kinds = {p["kind"] for p in suite["problems"]}
    assert kinds == {
        "hard_margin",
        "soft_margin_primal",
        "soft_margin_dual",
        "kernel_dual",
        "multiclass_hinge",
    }
    with pytest.raises(ValueError, match="unknown suite 'nosuch'.*default"):
        load_suite("nosuch")


# ---- models: solve --save, predict ------------------------------------------------------------
def _accuracy(out: str, which: str) -> float:
    return float(re.search(rf"{which} accuracy\s*│?\s*([0-9.]+)", out).group(1))


@pytest.mark.parametrize(
    ("problem", "data", "solver", "extra"),
    [
        ("soft_margin_primal", "gaussian:n=120,d=3,sep=1,seed=0,split=0.3", "dcd",
         ["--bias", "regularized"]),
        ("kernel_dual", "circles:n=120,seed=0,split=0.3", "smo", ["--kernel", "rbf"]),
        ("multiclass_hinge", "blobs:n=150,d=3,k=3,seed=0,split=0.3", "cs_dcd", []),
        ("soft_margin_primal", "gaussian:n=120,d=3,sep=1,seed=0,split=0.3", "liblinear",
         ["--bias", "regularized"]),
    ],
    ids=["linear", "kernel", "multiclass", "anchor"],
)  # fmt: skip
def test_solve_save_then_predict_gives_the_same_test_accuracy(
    capsys, tmp_path, problem, data, solver, extra
):
    model = tmp_path / "model.npz"
    code, out = run(
        capsys, "solve", "--problem", problem, "--data", data, "--solver", solver, *extra,
        "--save", str(model),
    )  # fmt: skip
    assert code == 0, out
    test = _accuracy(out, "test")
    assert "wall time" in out and "certify time" in out
    code, out = run(capsys, "predict", str(model), "--data", data, "--part", "test")
    assert code == 0, out
    assert float(re.search(r"accuracy: ([0-9.]+)", out).group(1)) == pytest.approx(test, abs=1e-4)
    assert "confusion matrix" in out


def test_predict_refuses_a_model_that_does_not_fit_the_data(capsys, tmp_path):
    model = tmp_path / "m.npz"
    data = "blobs:n=90,d=3,k=3,seed=0"
    assert run(capsys, "solve", "--problem", "multiclass_hinge", "--data", data,
               "--solver", "cs_dcd", "--save", str(model))[0] == 0  # fmt: skip
    code, err = fail(capsys, "predict", str(model), "--data", "gaussian:n=40,d=3,sep=1")
    assert code == 2 and "multiclass but the data set is binary" in err
    code, err = fail(capsys, "predict", str(model), "--data", "blobs:n=90,d=5,k=3,seed=0")
    assert code == 2 and "X must have 3 features" in err
    code, err = fail(capsys, "predict", str(tmp_path / "missing.npz"), "--data", data)
    assert code == 2 and "no such model file" in err
    (tmp_path / "bad.npz").write_text("not a model")
    code, err = fail(capsys, "predict", str(tmp_path / "bad.npz"), "--data", data)
    assert code == 2 and "not an svmbench model file" in err


def _fit_and_save(path, spec, labels=None, **params):
    """An SVMClassifier fitted on the data set of ``spec`` (its labels mapped through
    ``labels(dataset, y)``, by default the data set's class names), saved to ``path``."""
    dataset = load_dataset(spec)
    if labels is None:
        labels = _names
    params = {"kernel": "linear", "bias": "regularized", **params}
    model = SVMClassifier(**params).fit(dataset.X, labels(dataset, dataset.y))
    save_model(model, path)
    return dataset, model


def _names(dataset, y):
    index = (y > 0).astype(int) if dataset.is_binary else y
    return np.asarray(dataset.classes)[index]


@pytest.mark.parametrize(
    ("spec", "labels", "shown"),
    [
        ("gaussian:n=120,d=3,sep=1,seed=0,split=0.3", None, ["-u", "+u"]),
        ("gaussian:n=120,d=3,sep=1,seed=0,split=0.3", lambda d, y: y.astype(int), ["-1", "1"]),
        ("iris:split=0.3,seed=0", None, ["setosa", "versicolor", "virginica"]),
    ],
    ids=["names", "numbers", "multiclass-names"],
)
def test_predict_with_a_saved_estimator_compares_its_labels_with_the_data_sets(
    capsys, tmp_path, spec, labels, shown
):
    path = tmp_path / "clf.npz"
    dataset, model = _fit_and_save(path, spec, labels)
    truth = (labels or _names)(dataset, dataset.y_test)
    expected = model.score(dataset.X_test, truth)
    assert 0.5 < expected < 1.0  # a figure the comparison can get wrong
    out_csv = tmp_path / "pred.csv"
    code, out = run(
        capsys, "predict", str(path), "--data", spec, "--part", "test", "--out", str(out_csv)
    )
    assert code == 0, out
    assert float(re.search(r"accuracy: ([0-9.]+)", out).group(1)) == pytest.approx(
        expected, abs=1e-4
    )
    assert f"with labels {model.classes_.tolist()}" in out
    table = out[out.index("confusion matrix") :]
    assert all(label in table for label in shown)
    written = out_csv.read_text().split()
    assert written == [str(v) for v in model.predict(dataset.X_test).tolist()]


def test_predict_with_a_saved_estimator_of_other_labels_gives_no_accuracy(capsys, tmp_path):
    spec = "gaussian:n=60,d=3,sep=1,seed=0"
    path = tmp_path / "clf.npz"
    _fit_and_save(path, spec, lambda d, y: np.where(y > 0, "yes", "no"))
    code, out = run(capsys, "predict", str(path), "--data", spec)
    assert code == 0, out
    assert "no accuracy: the model's labels ['no', 'yes'] are not the data set's labels" in out
    assert re.search(r"accuracy: [0-9]", out) is None and "confusion matrix" not in out
    _fit_and_save(path, spec, lambda d, y: (y > 0).astype(int))  # 0/1 against -1/+1
    code, out = run(capsys, "predict", str(path), "--data", spec)
    assert code == 0 and "no accuracy: the model's labels [0, 1]" in out
    _fit_and_save(path, "iris", None)
    code, err = fail(capsys, "predict", str(path), "--data", "gaussian:n=40,d=4,sep=1")
    assert code == 2 and "multiclass but the data set is binary" in err
    _fit_and_save(path, "iris")
    code, err = fail(capsys, "predict", str(path), "--data", "blobs:n=90,d=4,k=4,seed=0")
    assert code == 2 and "the model has 3 classes but the data set has 4" in err


def test_list_shows_every_problem_kind_and_the_anchors(capsys):
    code, out = run(capsys, "list")
    assert code == 0
    assert "Anchors" in out and "liblinear" in out and "libsvm" in out
    assert "chain_structured_hinge" in out and "ranking" in out


def test_select_marks_the_chosen_C(capsys, tmp_path):
    plot = tmp_path / "select.png"
    code, out = run(
        capsys, "select", "--data", "gaussian:n=60,d=3,sep=1.5,seed=0", "--C-grid",
        "1e-2:1e1:4", "--cv", "loo", "--bias", "regularized", "--plot", str(plot),
    )  # fmt: skip
    assert code == 0, out
    chosen = float(re.search(r"chosen: C = ([0-9.e+-]+)", out).group(1))
    assert any(line.startswith("│ →") and f"{chosen:.4g}" in line for line in out.splitlines())
    assert "folds skipped by the certified margin" in out and plot.stat().st_size > 0


@pytest.mark.parametrize(
    "argv",
    [
        ["select", "--data", "gaussian:n=40", "--C-grid", "1:0.1:3"],
        ["select", "--data", "gaussian:n=40", "--C-grid", "a:b:c"],
        ["select", "--data", "gaussian:n=40", "--cv", "1"],
        ["run", "--jobs", "0"],
        ["run", "--memory-limit", "-5"],
        ["check", "--rtol", "-1"],
        ["run", "--tol", "nan"],
        ["results", "--db", "typo-does-not-exist.sqlite"],
    ],
    ids=["grid-decreasing", "grid-text", "cv-one", "jobs-0", "memory-negative", "rtol-negative",
         "tol-nan", "results-missing-db"],
)  # fmt: skip
def test_bad_flags_are_one_line_errors(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, err = fail(capsys, *argv)
    assert code == 2 and err.startswith("error:")
    assert not (tmp_path / "typo-does-not-exist.sqlite").exists()


def test_ctrl_c_is_one_line(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    parser = cli.build_parser()
    parser.set_defaults(func=interrupted)  # every command is interrupted at once
    parser._subparsers._group_actions[0].choices["list"].set_defaults(func=interrupted)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    code = cli.main(["list"])
    captured = capsys.readouterr()
    assert code == 130 and captured.err == "interrupted\n" and captured.out == ""
