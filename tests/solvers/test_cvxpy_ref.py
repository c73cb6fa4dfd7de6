"""The CVXPY reference, written from the definitions, agrees with Clarabel on ``to_qp()``.

The two share nothing but the data: an error in a problem's QP export (or its map back) would
show here as a disagreement. Every optimum is judged by the problem's certificate.
"""

from __future__ import annotations

import warnings

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
from svmbench.solvers.base import ConvergenceWarning
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
    result = registry.get("cvxpy", solver="SCS", eps=1e-9, max_iter=100_000).solve(problem)
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


# ---- hostile input: every status true, never a raw exception -----------------------------------

#: Hard margins no hyperplane satisfies: a point present with both labels, and XOR quadrants.
NON_SEPARABLE = {
    "duplicated_point": (np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), np.array([1.0, -1, -1])),
    "xor": (np.array([[1.0, 1.0], [-1, -1], [1, -1], [-1, 1]]), np.array([1.0, 1, -1, -1])),
}


def _near_separable(e):
    """Separable by the line x₁ = 0 with margin e, the classes' hulls e apart."""
    return np.array([[e, 0.0], [-e, 0.0], [e, 1.0], [-e, 1.0]]), np.array([1.0, -1, 1, -1])


@pytest.mark.parametrize("conic", ["CLARABEL", "SCS"])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("name", sorted(NON_SEPARABLE))
def test_non_separable_hard_margin_is_infeasible_with_a_checked_farkas_vector(name, bias, conic):
    X, y = NON_SEPARABLE[name]
    problem = HardMarginPrimal(X, y, bias=bias)
    result = registry.get("cvxpy", solver=conic).solve(problem)
    assert result.status is Status.INFEASIBLE, result.message
    assert problem.is_infeasibility_certificate(result.farkas)
    assert problem.separating_point() is None


@pytest.mark.parametrize("conic", ["CLARABEL", "SCS"])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("e", [1e-3, 1e-6, 1e-9, 1e-12])
def test_near_separable_hard_margin_is_never_called_infeasible(e, bias, conic):
    # SCS called e = 1e-3 infeasible with a ray that fails check_farkas: the record had no
    # variables and certificate() raised TypeError
    problem = HardMarginPrimal(*_near_separable(e), bias=bias)
    assert problem.separating_point() is not None  # feasible for every e > 0
    result = registry.get("cvxpy", solver=conic).solve(problem)
    honest = (Status.OPTIMAL, Status.NOT_CERTIFIED, Status.NUMERICAL_ERROR)
    assert result.status in honest, result.message
    if result.status is Status.OPTIMAL:
        assert result.certified and result.rel_gap <= RTOL_GAP
        assert np.all(problem.margins(result.w, result.b) >= 1.0 - 1e-9)
    elif result.status is Status.NOT_CERTIFIED:  # a claimed optimum short of tol
        assert result.rel_gap > RTOL_GAP or not result.certified
    else:
        assert "near-separable" in result.message or "fails the check" in result.message


@pytest.mark.parametrize(
    "ray", [None, np.ones(4), np.array(0.5), np.full(3, np.nan), np.zeros(3), -np.ones(3)]
)
def test_an_unusable_dual_ray_is_a_numerical_error(monkeypatch, ray):
    # the conic solver says "infeasible" but hands no usable ray (HiGHS, through CVXPY, gives
    # None): before, the check of that ray raised ValueError from inside the problem
    import cvxpy as cp

    monkeypatch.setattr(cp.constraints.Inequality, "dual_value", property(lambda self: ray))
    problem = HardMarginPrimal(*NON_SEPARABLE["duplicated_point"])
    result = registry.get("cvxpy").solve(problem)
    assert result.status is Status.NUMERICAL_ERROR
    assert "infeasibility certificate" in result.message
    assert result.farkas is None or not problem.is_infeasibility_certificate(result.farkas)


@pytest.mark.parametrize("raw", ["infeasible", "infeasible_inaccurate", "unbounded"])
def test_a_soft_margin_called_infeasible_or_unbounded_is_a_numerical_error(monkeypatch, raw):
    # a soft margin has no margin constraint: its Farkas code read constraints[0] of an empty
    # list (IndexError), and "unbounded" with finite values stayed "unbounded"
    import cvxpy as cp

    monkeypatch.setattr(cp.Problem, "status", property(lambda self: raw))
    X, y = BINARY_SETS["quadrant"]
    result = registry.get("cvxpy").solve(SoftMarginPrimal(X, y, C=1.0))
    # never infeasible; optimal only when the certificate says so (the library's word aside)
    if result.status is Status.OPTIMAL:
        assert result.certified and result.rel_gap <= 1e-6
    else:
        assert result.status is Status.NUMERICAL_ERROR
    assert "soft_margin_primal is never" in result.message


def test_scs_calling_a_squared_hinge_infeasible_is_a_numerical_error():
    # the natural case of the IndexError: SCS at the largest C a problem accepts
    ds = datasets.gaussian(30, 3, 1.0, seed=1)
    problem = SoftMarginPrimal(ds.X, ds.y, C=1e10, loss="squared_hinge")
    result = registry.get("cvxpy", solver="SCS").solve(problem)
    assert result.status not in (Status.INFEASIBLE, Status.UNBOUNDED)
    if result.status is Status.OPTIMAL:
        assert result.certified and result.rel_gap <= RTOL_GAP


def _extreme_problems():
    ds = datasets.gaussian(30, 3, 1.0, seed=1)
    mc = datasets.load("blobs:n=30,d=3,k=3,seed=4")
    settings = [(1e-300, None), (1e10, None), (1e-2, np.full(30, 1e12))]
    settings.append((1e-2, np.r_[np.full(15, 1e12), np.full(15, 1e-12)]))
    for C, sw in settings:
        for loss in ("hinge", "squared_hinge"):
            yield SoftMarginPrimal(ds.X, ds.y, C=C, loss=loss, sample_weight=sw)
            yield SoftMarginDual(ds.X, ds.y, C=C, loss=loss, bias="none", sample_weight=sw)
        yield KernelDual(ds.X, ds.y, C=C, kernel="rbf", bias="regularized", sample_weight=sw)
        yield MulticlassHinge(mc.X, mc.y, C=C, sample_weight=sw)


@pytest.mark.parametrize("conic", ["CLARABEL", "SCS"])
def test_extreme_C_and_weights_end_in_a_true_status(conic):
    bad = []
    for problem in _extreme_problems():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = registry.get("cvxpy", solver=conic).solve(problem)
        if result.status is Status.OPTIMAL:
            ok = result.certified and result.rel_gap <= RTOL_GAP
        else:
            honest = (Status.NOT_CERTIFIED, Status.NUMERICAL_ERROR, Status.MAX_ITER)
            ok = result.status in (*honest, Status.TIME_LIMIT)
        if not ok:
            bad.append((problem.describe(), result.status.value, result.message))
    assert not bad, bad


@pytest.mark.parametrize("name", sorted(NON_SEPARABLE))
def test_the_dual_ray_of_every_installed_cvxpy_solver_is_read_or_refused(name):
    # only CLARABEL and SCS are offered, but the ray's reading must not depend on their
    # conventions: every installed solver that takes the QP gives a candidate λ (Σλ = 1, λ ≥ 0,
    # then checked by the problem) or a reason (HiGHS gives no ray; before, a 0-d NaN)
    import cvxpy as cp

    from svmbench.solvers.cvxpy_ref import _formulate

    problem = HardMarginPrimal(*NON_SEPARABLE[name])
    seen = 0
    for conic in cp.installed_solvers():
        model, _, farkas_of = _formulate(cp, problem)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.solve(solver=conic)
        except cp.error.SolverError:
            continue  # an LP or MIP solver that cannot take the quadratic objective
        seen += 1
        if not model.status.startswith("infeasible"):
            continue
        lam = farkas_of()
        if not isinstance(lam, str):
            assert lam.shape == (problem.n_samples,) and np.all(lam >= 0), (conic, lam)
            assert abs(lam.sum() - 1.0) <= 1e-12, (conic, lam)
    assert seen >= 2
