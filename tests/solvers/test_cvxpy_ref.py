"""The CVXPY reference, written from the definitions, agrees with Clarabel on ``to_qp()``.

The two share nothing but the data: an error in a problem's QP export (or its map back) would
show here as a disagreement. Every optimum is judged by the problem's certificate.
"""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems import (
    HardMarginPrimal,
    KernelDual,
    MulticlassHinge,
    SoftMarginDual,
    SoftMarginPrimal,
    datasets,
)
from svmbench.solvers import Status, registry
from svmbench.solvers._reference import reference_solution
from tests.conftest import BINARY_SETS, SET_C

RTOL_AGREE = 1e-7
RTOL_GAP = 1e-6


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _problems(name):
    X, y = BINARY_SETS[name]
    C = SET_C[name]
    out = [HardMarginPrimal(X, y, bias="free")]
    for bias in ("free", "regularized", "none"):
        for loss in ("hinge", "squared_hinge"):
            out.append(SoftMarginPrimal(X, y, C=C, loss=loss, bias=bias))
            out.append(SoftMarginDual(X, y, C=C, loss=loss, bias=bias))
        out.append(KernelDual(X, y, C=C, kernel="rbf", bias=bias))
    out.append(KernelDual(X, y, C=C, kernel="poly", degree=2, coef0=1.0, loss="squared_hinge"))
    return out


CASES = [(name, i) for name in sorted(BINARY_SETS) for i in range(len(_problems(name)))]


@pytest.mark.parametrize(("name", "index"), CASES)
def test_cvxpy_agrees_with_clarabel_on_the_qp_export(name, index):
    problem = _problems(name)[index]
    ref = reference_solution(problem, "clarabel")
    result = registry.get("cvxpy").solve(problem)
    assert result.status is ref.status, result.message
    if ref.status is Status.INFEASIBLE:  # hard margin on overlapping classes
        assert problem.is_infeasibility_certificate(result.farkas)
        return
    assert result.certified and result.rel_gap <= RTOL_GAP
    assert rel(result.primal, ref.primal) <= RTOL_AGREE, (result.primal, ref.primal)
    assert result.iterations > 0 and result.solve_time > 0


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_hard_margin_infeasibility_certificate_is_the_dual_ray(bias):
    X, y = BINARY_SETS["gaussian_overlap"]
    problem = HardMarginPrimal(X, y, bias=bias)
    result = registry.get("cvxpy").solve(problem)
    assert result.status is Status.INFEASIBLE
    lam = result.farkas
    assert np.all(lam >= 0) and abs(lam.sum() - 1.0) <= 1e-9
    assert np.linalg.norm(X.T @ (lam * y)) <= 1e-6 * np.max(np.linalg.norm(X, axis=1))
    if bias == "free":
        assert abs(lam @ y) <= 1e-6


@pytest.mark.parametrize("bias", ["none", "regularized"])
def test_multiclass_with_a_cost_matrix(bias):
    ds = datasets.load("blobs:n=90,d=3,k=3,seed=4")
    cost = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    weights = np.linspace(0.5, 2.0, ds.X.shape[0])
    problem = MulticlassHinge(ds.X, ds.y, C=2.0, cost=cost, bias=bias, sample_weight=weights)
    ref = reference_solution(problem, "clarabel")
    result = registry.get("cvxpy").solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= RTOL_GAP
    assert rel(result.primal, ref.primal) <= RTOL_AGREE
    assert result.W.shape == (3, 3)


def test_sparse_data_and_per_example_weights():
    ds = datasets.gaussian(120, 30, 1.0, seed=3, density=0.2)
    weights = np.ones(120)
    weights[::5] = 0.0
    weights[1::7] = 4.0
    for problem in (
        SoftMarginPrimal(ds.X, ds.y, C=0.7, sample_weight=weights),
        SoftMarginDual(ds.X, ds.y, C=0.7, bias="regularized", sample_weight=weights),
    ):
        ref = reference_solution(problem, "clarabel")
        result = registry.get("cvxpy").solve(problem)
        assert result.status is Status.OPTIMAL
        assert rel(result.primal, ref.primal) <= RTOL_AGREE


def test_scs_backend_reaches_a_looser_optimum():
    X, y = BINARY_SETS["quadrant"]
    problem = SoftMarginPrimal(X, y, C=1.0)
    result = registry.get("cvxpy", solver="SCS", tol=1e-9, max_iter=100_000).solve(problem)
    assert result.info["conic_solver"] == "SCS"
    assert result.status is Status.OPTIMAL
    assert rel(result.primal, reference_solution(problem, "clarabel").primal) <= 1e-6


def test_bad_options_and_indefinite_kernels_are_refused():
    with pytest.raises(ValueError, match="solver"):
        registry.get("cvxpy", solver="MOSEK")
    X, y = BINARY_SETS["gaussian_overlap"]
    problem = KernelDual(X, y, kernel="sigmoid", gamma=1.0, coef0=0.0)
    with pytest.raises(TypeError, match="indefinite"):
        registry.get("cvxpy").solve(problem)
    assert "cvxpy" not in registry.solvers_for(problem)


def test_iteration_limit_is_a_status_not_an_exception():
    X, y = BINARY_SETS["digits"]
    with pytest.warns(UserWarning, match="max_iter"):
        result = registry.get("cvxpy", max_iter=2).solve(SoftMarginPrimal(X, y))
    assert result.status is Status.MAX_ITER
