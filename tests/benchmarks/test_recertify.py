"""Every record of the default suite, re-certified from the variables it returns.

A record's own fields must obey ``optimal ⇔ certified and rel_gap ≤ tol``, and the problem's
certificate of its returned variables, computed anew (``Solver.certify_result``), must say the
same: a solver cannot report a gap its variables do not have. The default suite covers every
registered method on every problem kind; the reductions (with several binary solvers and views)
and ``low_rank`` (at a C where its approximation is far from the exact problem) get cases of
their own.
"""

from __future__ import annotations

import math
import warnings

import pytest

from svmbench.benchmarks.harness.cases import Case, expand
from svmbench.benchmarks.harness.check import status_contradiction
from svmbench.benchmarks.harness.evaluation import execute_case
from svmbench.benchmarks.harness.settings import Settings
from svmbench.benchmarks.harness.suite_files import load_suite
from svmbench.problems import PROBLEMS, MulticlassHinge
from svmbench.problems.datasets import load
from svmbench.solvers import registry
from svmbench.solvers.base import Status

DEFAULT_CASES, _ = expand(load_suite("default"))

IRIS = "iris:split=0.3,seed=0"
BLOBS = "blobs:n=90,d=3,k=3,seed=1"
MULTICLASS = {"kind": "multiclass_hinge", "C": 1.0, "bias": "none"}
KERNEL = {"kind": "kernel_dual", "C": 1.0, "kernel": "rbf", "bias": "free"}
EXTRA_CASES = [
    Case(MULTICLASS, IRIS, "ovo", {"kernel": "rbf", "binary_solver": "smo", "bias": "free"}),
    Case(MULTICLASS, BLOBS, "ovr", {"kernel": "rbf", "binary_solver": "smo", "bias": "free"}),
    Case(MULTICLASS, BLOBS, "ovr", {"binary_solver": "dcd", "view": "dual"}),
    Case(MULTICLASS, BLOBS, "ovo", {"binary_solver": "barrier", "support_vectors": True}),
    Case(MULTICLASS, BLOBS, "ovr", {"binary_solver": "dcd", "max_iter": 2, "tol": 1e-9}),
    Case({**KERNEL, "C": 1e10}, "gaussian:n=60,d=2,sep=1,seed=3", "low_rank", {"rank": 20}),
    Case(KERNEL, "gaussian:n=120,d=5,sep=1,seed=4", "low_rank", {"rank": 40}),
    Case(KERNEL, "gaussian:n=120,d=5,sep=1,seed=4", "low_rank", {"rank": 120}),
]
# The default suite runs LIBSVM's family, the linear SVR and the multinomial loss with every
# solver that takes them; ε-SVR also through the barrier's other entry (auto on a larger set).
EXTRA_CASES += [
    Case({"kind": "svr_dual", "C": 10.0, "epsilon": 0.1, "kernel": "rbf"}, "friedman1:n=80,seed=0",
         "auto", {}),
    Case({"kind": "svr_primal", "C": 1.0, "epsilon": 0.1, "bias": "free",
          "loss": "squared_epsilon_insensitive"}, "friedman1:n=80,seed=0", "svr_newton", {}),
]  # fmt: skip
# the squared hinge's finite Newton method: its (w, b), the multipliers built by the problem
SQUARED_HINGE = {"kind": "soft_margin_primal", "C": 10.0, "loss": "squared_hinge"}
EXTRA_CASES += [
    Case(
        {**SQUARED_HINGE, "bias": bias},
        "gaussian:n=80,d=3,sep=1,seed=5",
        "squared_hinge_newton",
        {},
    )
    for bias in ("free", "regularized")
]


def _solve(case: Case):
    solver = registry.get(case.solver, **case.solver_options)
    solver.warm_up()
    problem = case.build_problem(load(case.data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solver.solve(problem)
    return solver, problem, result


def _check(solver, problem, result) -> None:
    optimal = result.status is Status.OPTIMAL
    assert optimal == (result.certified and result.rel_gap <= solver.tol), (
        f"{result.status.value} with certified={result.certified}, rel_gap={result.rel_gap:.3g},"
        f" tol={solver.tol:g}"
    )
    again = solver.certify_result(problem, result)
    if again is None:
        assert result.status in (Status.INFEASIBLE, Status.NUMERICAL_ERROR), result.status
        return
    assert again.certified == result.certified
    if again.certified:
        assert math.isclose(again.rel_gap, result.rel_gap, rel_tol=1e-6, abs_tol=1e-14), (
            f"the record says {result.rel_gap:.10g}, its variables {again.rel_gap:.10g}"
        )
    assert optimal == (again.certified and again.rel_gap <= solver.tol * (1 + 1e-6))


def test_the_default_suite_covers_every_method_and_kind():
    """Every registered method has a case here, the default suite's or an extra one
    (``ssvm_sgd`` solves structured-output problems,
    which suites do not run; its certificate is tested with them)."""
    covered = {c.solver for c in DEFAULT_CASES + EXTRA_CASES}
    shipped = {  # other tests register stand-ins of their own
        name
        for name in registry.names()
        if registry.solver_class(name).__module__.startswith("svmbench.solvers.")
    }
    assert shipped - covered == {"ssvm_sgd"}
    assert {c.problem_kind for c in DEFAULT_CASES} == set(PROBLEMS)


@pytest.mark.parametrize("case", DEFAULT_CASES + EXTRA_CASES, ids=lambda c: c.label())
def test_record_agrees_with_its_variables_certificate(case):
    _check(*_solve(case))


def test_reductions_certify_their_binary_problems_anew():
    """The reduction's summed objectives are the binary problems' own, and a tampered binary
    point changes the certificate computed anew (so the check reads the variables)."""
    solver, problem, result = _solve(EXTRA_CASES[2])
    assert isinstance(problem, MulticlassHinge)
    again = solver.certify_result(problem, result)
    assert math.isclose(again.primal, result.primal, rel_tol=1e-9)
    assert math.isclose(again.dual, result.dual, rel_tol=1e-9)
    tampered = dict(result.info)
    first = dict(tampered["binary_variables"][0])
    first["alpha"] = first["alpha"] * 0.5
    tampered["binary_variables"] = (first, *tampered["binary_variables"][1:])
    from dataclasses import replace

    worse = solver.certify_result(problem, replace(result, info=tampered))
    assert worse.rel_gap > 10 * result.rel_gap


def test_check_fails_a_record_whose_variables_do_not_certify(tmp_path):
    """``svmbench check`` holds a record to the certificate the harness computed anew: the same
    record with a tampered re-certification is a contradiction."""
    case = Case(KERNEL, "gaussian:n=40,d=2,sep=1,seed=0", "smo", {"tol": 1e-8})
    record = execute_case(case, Settings(reference="none"), cache_dir=str(tmp_path))
    assert record.result.status is Status.OPTIMAL
    assert record.extras["recertified"]["certified"]
    assert status_contradiction(record) is None
    record.extras["recertified"] = {**record.extras["recertified"], "rel_gap": 1e-3}
    assert "computed anew" in status_contradiction(record)


def test_check_counts_the_rounding_allowance_as_meets_does(tmp_path):
    """A record's and a re-certificate's rounding allowance count as in ``Certificate.meets``:
    a gap within tol whose allowance takes it over tol is a contradiction, in the record's
    fields and in the certificate computed anew alike."""
    case = Case(KERNEL, "gaussian:n=40,d=2,sep=1,seed=0", "smo", {"tol": 1e-8})
    record = execute_case(case, Settings(reference="none"), cache_dir=str(tmp_path))
    again = record.extras["recertified"]
    assert again["rounding"] > 0.0
    assert status_contradiction(record) is None
    scale = max(1.0, abs(again["primal"]))
    over = 2e-8 * scale  # the gap stays below tol·|P|; the allowance takes it over
    record.extras["recertified"] = {**again, "rounding": over}
    assert "rounding allowance" in status_contradiction(record)
    record.extras["recertified"] = again
    r = record.result
    from dataclasses import replace

    floor = 2e-8 * max(1.0, abs(r.primal))
    tampered = replace(record, result=replace(r, residuals={**r.residuals, "rounding": floor}))
    assert "rounding allowance" in status_contradiction(tampered)


def test_a_reduction_keeps_its_pairs_rounding_allowance():
    """The reduction's certificate, in its record and computed anew, carries the sum of its
    binary problems' allowances (plus the sums' own rounding), not 0; both bound the same
    arithmetic, so they agree within a factor of two."""
    solver, problem, result = _solve(EXTRA_CASES[0])
    again = solver.certify_result(problem, result)
    assert result.residuals["rounding"] > 0.0
    assert again.rounding > 0.0
    assert 0.5 <= again.rounding / result.residuals["rounding"] <= 2.0
