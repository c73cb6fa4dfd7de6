"""A solve's certificates refine their rounding allowance only as far as its tol needs
(``rounding.refinement_tol``), and a point the early finish solved on its own active set is not
solved again (issue 25, the hard set at large C). Nothing may weaken a certificate: the coarser
allowance still bounds the gap computed in long double, and its verdict at tol is the refined
one's."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.benchmarks.studies.bench_extreme_grids import hard_data
from svmbench.problems import KernelDual
from svmbench.problems.rounding import refinement_tol
from svmbench.solvers import registry
from svmbench.solvers.margin_lift import FINISHED_EARLY
from svmbench.solvers.records import Status

LONG = np.longdouble
needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is float64 here: no more precise reference",
)


def _problem(C, gamma):
    X, y = hard_data()
    return KernelDual(X, np.where(y == 1, 1.0, -1.0), C=C, kernel="rbf", gamma=gamma)


def _long_double_gap(problem, alpha, b):
    """``P − D`` of the hinge's kernel dual at ``(α, b)``, every sum in long double, the
    distances from the differences."""
    XL = np.asarray(problem.X, dtype=LONG)
    D = np.empty((XL.shape[0], XL.shape[0]), dtype=LONG)
    for i in range(XL.shape[0]):
        diff = XL - XL[i]
        D[i] = np.einsum("ij,ij->i", diff, diff)
    K = np.exp(-LONG(problem.gamma) * D)
    y = problem.y.astype(LONG)
    a = np.asarray(alpha, dtype=LONG)
    g = K @ (a * y)
    m = y * (g + LONG(b))
    loss = np.sum(problem.upper_bounds.astype(LONG) * np.maximum(LONG(0.0), 1 - m))
    return float((a * y) @ g + loss - a.sum())


@needs_long_double
def test_a_coarse_allowance_that_meets_tol_is_kept_and_still_bounds_the_gap():
    problem = _problem(1e4, 1e-3)
    result = registry.get("auto", tol=1e-6).solve(problem)
    assert result.status is Status.OPTIMAL
    alpha, b = result.alpha, result.b
    refined = _problem(1e4, 1e-3).certificate(alpha=alpha, b=b)
    with refinement_tol(1e-6):
        coarse = _problem(1e4, 1e-3).certificate(alpha=alpha, b=b)
    with refinement_tol(1e-13):  # the first bound does not meet it: refined as without a tol
        tight = _problem(1e4, 1e-3).certificate(alpha=alpha, b=b)
    assert coarse.rounding > 10.0 * refined.rounding  # the long-double margins were skipped
    assert coarse.meets(1e-6) and refined.meets(1e-6)
    assert tight.rounding == refined.rounding and tight.gap == refined.gap
    assert tight.meets(1e-13) == refined.meets(1e-13)
    exact = _long_double_gap(problem, coarse.dual_point, coarse.primal_point["b"])
    assert abs(exact - coarse.gap) <= coarse.rounding
    assert abs(exact - refined.gap) <= refined.rounding


def test_outside_a_solve_the_allowance_is_refined_as_before():
    problem = _problem(1e4, 1e-3)
    result = registry.get("auto", tol=1e-6).solve(problem)
    plain = _problem(1e4, 1e-3).certificate(alpha=result.alpha, b=result.b)
    with refinement_tol(None):
        none = _problem(1e4, 1e-3).certificate(alpha=result.alpha, b=result.b)
    assert none.rounding == plain.rounding
    # the record's allowance was drawn inside the solve, at its tol: it meets it
    assert result.rel_gap + result.residuals["rounding"] / max(1.0, abs(result.primal)) <= 1e-6


@pytest.mark.parametrize("C, gamma", [(1e6, 1e-3), (1e8, 1e-5)])
def test_the_early_finish_s_point_is_not_finished_again(monkeypatch, C, gamma):
    problem = _problem(C, gamma)
    drawn = []
    original = KernelDual.certificate

    def counted(self, **variables):
        drawn.append(1)
        return original(self, **variables)

    monkeypatch.setattr(KernelDual, "certificate", counted)
    result = registry.get("smo", tol=1e-6).solve(problem)
    monkeypatch.setattr(KernelDual, "certificate", original)
    assert result.status is Status.OPTIMAL
    assert result.info["margin_lift"]["early"] is True
    assert result.info["exact_finish"]["skipped"] == FINISHED_EARLY
    # SMO's point and the early finish's (the record's reused): the finish drew six before
    assert len(drawn) <= 3
    again = registry.get("smo", tol=1e-6).certify_result(_problem(C, gamma), result)
    assert again.meets(1e-6)
