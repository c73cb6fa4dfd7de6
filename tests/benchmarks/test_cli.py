"""The first commands: ``svmbench list``, ``solve`` and ``run``, through ``main(argv)``."""

from __future__ import annotations

import re

import pytest

from svmbench.benchmarks import cli
from svmbench.benchmarks.cases import expand, load_suite


def run(capsys, *argv):
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


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
    code, out = run(
        capsys, "solve", "--problem", "kernel_dual", "--data", "iris", "--solver", "osqp"
    )
    assert code == 2
    assert "y must contain only -1 and +1" in out
    code, out = run(capsys, "solve", "--problem", "soft_margin_primal", "--data", "nosuch",
                    "--solver", "osqp")  # fmt: skip
    assert code == 2 and "nosuch" in out


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
