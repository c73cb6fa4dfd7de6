"""The harness with ε-SVR: regression data go to the regression kinds only, a case runs end to
end (a reference, R² on the test split, the check), and the shipped suite expands."""

from __future__ import annotations

import math

from svmbench.benchmarks.harness.cases import Case, expand
from svmbench.benchmarks.harness.check import judge
from svmbench.benchmarks.harness.evaluation import execute_case
from svmbench.benchmarks.harness.settings import Settings
from svmbench.benchmarks.harness.suite_files import load_suite

TINY = "friedman2:n=40,seed=0,split=0.25"
SVR_CASE = {"kind": "svr_dual", "C": 1.0, "epsilon": 0.1, "kernel": "rbf"}


def test_a_tiny_svr_case_runs_end_to_end():
    for solver in ("sklearn_svr", "clarabel"):
        case = Case(SVR_CASE, TINY, solver, {"eps": 1e-8} if solver == "sklearn_svr" else {})
        record = execute_case(case, Settings(reference="osqp"))
        assert record.result.status.value == "optimal", record.message
        assert record.reference_solver == "osqp" and judge(record).ok
        assert math.isnan(record.accuracy)  # a regression has no accuracy, its score is R²
        assert record.extras["r2_on"] == "test" and 0.5 < record.extras["r2"] <= 1.0


def test_regression_data_meet_the_regression_kinds_only():
    suite = {
        "data": [TINY, "gaussian:n=30,d=2,sep=2,seed=0"],
        "solvers": ["clarabel"],
        "problems": [SVR_CASE, {"kind": "kernel_dual", "C": 1.0}],
    }
    cases, skipped = expand(suite, Settings.from_suite(suite))
    assert sorted((c.problem["kind"], c.data) for c in cases) == [
        ("kernel_dual", "gaussian:n=30,d=2,sep=2,seed=0"),
        ("svr_dual", TINY),
    ]
    reasons = sorted(s.reason for s in skipped)
    assert reasons == ["classification data set", "regression data set"]


def test_the_shipped_regression_suite_expands_without_skips():
    suite = load_suite("regression")
    cases, skipped = expand(suite, Settings.from_suite(suite))
    assert len(cases) == 3 * 4 * 3 and not skipped  # data × (C, kernel) × solvers
    assert {c.solver for c in cases} == {"clarabel", "libsvm_svr", "sklearn_svr"}


def test_solve_and_predict_speak_r2_for_a_regression(tmp_path, capsys):
    from svmbench.benchmarks.cli import main as cli

    model = tmp_path / "m.npz"
    code = cli.main(
        ["solve", "--problem", "svr_dual", "--data", TINY, "--solver", "clarabel",
         "--epsilon", "0.2", "--save", str(model)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "test R²" in out and "accuracy" not in out
    code = cli.main(["predict", str(model), "--data", TINY, "--part", "test"])
    assert code == 0 and "R²: 0." in capsys.readouterr().out
    assert cli.main(["predict", str(model), "--data", "iris"]) == 2
    assert "the model is a regression but the data set is a classification" in (
        capsys.readouterr().err
    )
