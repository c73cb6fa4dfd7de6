"""The harness with the one-class SVM and the family suite: outlier-detection data go to the
one-class kind only and labelled data to the others; a case runs end to end (a reference,
accuracy against the inlier and outlier labels, the check); the command line takes ``--nu`` and
saves and reads back the linear SVR's and the one-class model; the family suite puts each kind
beside its anchors."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.benchmarks.harness.cases import Case, expand
from svmbench.benchmarks.harness.check import judge
from svmbench.benchmarks.harness.evaluation import execute_case
from svmbench.benchmarks.harness.settings import Settings
from svmbench.benchmarks.harness.suite_files import load_suite
from svmbench.problems import OneClassDual, SVRDual, problem_on_data
from svmbench.problems.dataset_record import Dataset
from svmbench.problems.datasets import load

OUTLIERS = "outliers:n=80,d=2,fraction=0.1,seed=0,split=0.25"
ONE_CLASS = {"kind": "one_class", "nu": 0.2, "kernel": "rbf", "gamma": 0.5}


def test_outlier_data_meet_the_one_class_kind_only():
    gauss = "gaussian:n=30,d=2,sep=2,seed=0"
    suite = {
        "data": [OUTLIERS, gauss],
        "solvers": ["clarabel"],
        "problems": [ONE_CLASS, {"kind": "kernel_dual", "C": 1.0}],
    }
    cases, skipped = expand(suite, Settings.from_suite(suite))
    assert sorted((c.problem["kind"], c.data) for c in cases) == [
        ("kernel_dual", gauss),
        ("one_class", OUTLIERS),
    ]
    assert sorted(s.reason for s in skipped) == ["labelled data set", "outlier-detection data set"]


def test_a_tiny_one_class_case_runs_end_to_end_and_is_scored_by_the_labels():
    data = load(OUTLIERS)
    for solver in ("smo", "libsvm_nu"):
        options = {"eps": 1e-10} if solver == "libsvm_nu" else {}
        record = execute_case(Case(ONE_CLASS, OUTLIERS, solver, options), Settings())
        assert record.result.status.value == "optimal", record.message
        assert record.reference_solver == "clarabel" and judge(record).ok
        # the test accuracy is the model's own predictions against the +1/−1 labels
        expected = np.mean(record.result.model.predict(data.X_test) == data.y_test)
        assert record.accuracy_on == "test" and record.accuracy == pytest.approx(expected)
        train = record.result.model.predict(data.X)  # outliers are flagged far more often
        assert np.mean(train[data.y < 0] < 0) > 0.8 > 0.3 > np.mean(train[data.y > 0] < 0)


def test_the_default_suite_runs_the_one_class_svm_on_outlier_data():
    cases, _ = expand(load_suite("default"))
    one_class = {c.data for c in cases if c.problem["kind"] == "one_class"}
    assert one_class and all(spec.startswith("outliers:") for spec in one_class)
    assert not [
        c for c in cases if c.data.startswith("outliers:") and c.problem_kind != "one_class"
    ]


def test_problem_on_data_takes_X_alone_for_the_one_class_svm():
    data = load(OUTLIERS)
    problem = problem_on_data("one_class", data.X, data.y, nu=0.3)
    assert isinstance(problem, OneClassDual) and problem.nu == 0.3
    friedman = load("friedman1:n=30,seed=0")
    assert isinstance(problem_on_data("svr_dual", friedman.X, friedman.y), SVRDual)
    with pytest.raises(ValueError, match="unknown problem kind 'one_klass'"):
        problem_on_data("one_klass", data.X, data.y)


def test_outlier_detection_labels_must_be_plus_and_minus_one():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="outlier-detection labels must be float64"):
        Dataset("x", "x", X, np.array([0, 1, 1]), ("outlier", "inlier"), task="outlier_detection")
    with pytest.raises(ValueError, match=r"float64 labels must be in \{-1, \+1\}"):
        Dataset("x", "x", X, np.array([0.0, 1.0, 1.0]), ("o", "i"), task="outlier_detection")
    ok = Dataset("x", "x", X, np.array([-1.0, 1.0, 1.0]), ("o", "i"), task="outlier_detection")
    assert ok.is_outlier_detection and ok.is_binary and not ok.is_regression


def test_the_command_line_takes_nu_and_reads_back_what_it_saves(tmp_path, capsys):
    from svmbench.benchmarks.cli import main as cli

    model = tmp_path / "oc.npz"
    args = ["solve", "--problem", "one_class", "--nu", "0.3", "--data", OUTLIERS,
            "--solver", "smo", "--save", str(model)]  # fmt: skip
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "nu=0.3" in out and "test accuracy" in out
    assert cli.main(["predict", str(model), "--data", OUTLIERS, "--part", "test"]) == 0
    capsys.readouterr()
    # a saved linear SVR is a regression model for `predict` (it was refused as a classifier)
    friedman = "friedman1:n=60,seed=0,split=0.25"
    linear = tmp_path / "lsvr.npz"
    args = ["solve", "--problem", "svr_primal", "--loss", "squared_epsilon_insensitive",
            "--data", friedman, "--solver", "clarabel", "--save", str(linear)]  # fmt: skip
    assert cli.main(args) == 0
    capsys.readouterr()
    assert cli.main(["predict", str(linear), "--data", friedman, "--part", "test"]) == 0
    assert "R²: " in capsys.readouterr().out


def test_compare_takes_the_family_s_parameters(capsys):
    from svmbench.benchmarks.cli import main as cli

    args = ["compare", "--problem", "nu_svc", "--nu", "0.4", "--data",
            "gaussian:n=40,d=2,sep=1,seed=0", "--solvers", "smo", "--repeat", "1",
            "--no-reference"]  # fmt: skip
    assert cli.main(args) == 0
    assert "nu=0.4" in capsys.readouterr().out


def test_the_family_suite_puts_each_kind_beside_its_anchors():
    suite = load_suite("family")
    cases, _ = expand(suite, Settings.from_suite(suite))
    by_kind: dict[str, set[str]] = {}
    for case in cases:
        by_kind.setdefault(case.problem["kind"], set()).add(case.solver)
    assert set(by_kind) == {"nu_svc", "nu_svr", "one_class", "svr_primal"}
    for kind in ("nu_svc", "nu_svr", "one_class"):
        assert {"smo", "clarabel", "libsvm_nu", "sklearn_nu"} <= by_kind[kind], kind
    assert {"svr_dcd", "liblinear_svr", "liblinear_svr_primal", "sklearn_linearsvr"} <= (
        by_kind["svr_primal"]
    )
