"""OSQP and Clarabel agree on every problem kind and bias, and their optima certify themselves.

Each reference optimum is judged by the problem: the certificate built from its primal point
alone and from its dual point alone must both close the gap, and ``primal_from_dual`` of the
optimal dual point must reproduce the optimal primal objective.
"""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems import HardMarginPrimal, KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.solvers import Checkpoint, SolveResult, Status, registry
from svmbench.solvers._reference import ReferenceCache, reference_solution
from tests.conftest import BINARY_SETS, SET_C

RTOL_AGREE = 1e-6  # OSQP vs Clarabel optimal values
RTOL_GAP = 1e-6  # certificate from one side alone


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _problems_on(name):
    X, y = BINARY_SETS[name]
    C = SET_C[name]
    out = []
    for bias in ("free", "regularized", "none"):
        for loss in ("hinge", "squared_hinge"):
            out.append(SoftMarginPrimal(X, y, C=C, loss=loss, bias=bias))
        out.append(SoftMarginDual(X, y, C=C, loss="hinge", bias=bias))
        out.append(KernelDual(X, y, C=C, kernel="rbf", bias=bias))
    out.append(KernelDual(X, y, C=C, kernel="poly", degree=2, coef0=1.0, loss="squared_hinge"))
    out.append(KernelDual(X, y, C=C, kernel="linear", bias="free"))
    return out


CASES = [(name, i) for name in sorted(BINARY_SETS) for i in range(len(_problems_on(name)))]


@pytest.fixture(scope="module")
def problems_by_set():
    return {name: _problems_on(name) for name in BINARY_SETS}


@pytest.mark.parametrize(("name", "index"), CASES)
def test_references_agree_and_certify(problems_by_set, name, index):
    problem = problems_by_set[name][index]
    clar = reference_solution(problem, "clarabel")
    osqp = reference_solution(problem, "osqp")
    assert clar.status is Status.OPTIMAL and osqp.status is Status.OPTIMAL
    assert clar.certified and osqp.certified
    assert rel(osqp.primal, clar.primal) <= RTOL_AGREE, (osqp.primal, clar.primal)

    if isinstance(problem, KernelDual):
        from_primal = problem.certificate(alpha=clar.alpha, b=clar.b)
    else:
        from_primal = problem.certificate(w=clar.w, b=clar.b)
    from_dual = problem.certificate(alpha=clar.alpha)
    assert from_primal.rel_gap <= RTOL_GAP
    assert from_dual.rel_gap <= RTOL_GAP
    assert -1e-9 <= from_dual.gap

    if isinstance(problem, KernelDual):
        primal = problem.primal_objective(*problem.primal_from_dual(clar.alpha))
    else:
        primal = problem.primal_objective(*problem.primal_from_dual(clar.alpha))
    assert rel(primal, clar.primal) <= RTOL_GAP


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_primal_and_dual_views_share_one_optimum(bias):
    X, y = BINARY_SETS["quadrant"]
    values = [
        reference_solution(SoftMarginPrimal(X, y, C=1.0, bias=bias), "clarabel").primal,
        reference_solution(SoftMarginDual(X, y, C=1.0, bias=bias), "clarabel").primal,
        reference_solution(KernelDual(X, y, C=1.0, kernel="linear", bias=bias), "clarabel").primal,
    ]
    assert max(values) - min(values) <= 1e-7 * max(1.0, abs(values[0]))


def test_hard_margin_separable_agree():
    X, y = BINARY_SETS["gaussian_separable"]
    for bias in ("free", "regularized", "none"):
        p = HardMarginPrimal(X, y, bias=bias)
        a, b = reference_solution(p, "clarabel"), reference_solution(p, "osqp")
        assert a.status is Status.OPTIMAL and b.status is Status.OPTIMAL
        assert rel(a.primal, b.primal) <= RTOL_AGREE
        assert p.certificate(alpha=a.alpha).rel_gap <= RTOL_GAP
        assert p.certificate(w=a.w, b=a.b).rel_gap <= RTOL_GAP


@pytest.mark.parametrize("solver", ["osqp", "clarabel"])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_hard_margin_overlap_is_infeasible_with_checked_certificate(solver, bias):
    X, y = BINARY_SETS["gaussian_overlap"]
    p = HardMarginPrimal(X, y, bias=bias)
    r = registry.get(solver).solve(p)
    assert r.status is Status.INFEASIBLE
    assert r.farkas is not None
    assert p.is_infeasibility_certificate(r.farkas)
    lam = r.farkas
    assert np.all(lam >= 0) and abs(lam.sum() - 1) < 1e-9
    comb = X.T @ (lam * y)
    assert np.linalg.norm(comb) <= 1e-6 * np.max(np.linalg.norm(X, axis=1))
    if bias == "free":
        assert abs(lam @ y) <= 1e-6


def test_reference_is_cached_by_problem_hash(tmp_path):
    X, y = BINARY_SETS["gaussian_overlap"]
    cache = ReferenceCache(tmp_path)
    p1 = SoftMarginPrimal(X, y, C=0.5)
    p2 = SoftMarginPrimal(X.copy(), y.copy(), C=0.5)  # same bytes, another object
    solver = registry.get("clarabel")
    r1 = cache.get(p1, solver)
    assert cache.get(p2, solver) is r1
    assert len(list(tmp_path.glob("*.npz"))) == 1
    fresh = ReferenceCache(tmp_path)  # a new process would read the file
    assert fresh.get(p2, solver).primal == r1.primal
    other = cache.get(SoftMarginPrimal(X, y, C=0.25), solver)
    assert other.primal != r1.primal


def test_results_have_one_type_for_every_solver():
    X, y = BINARY_SETS["quadrant"]
    p = SoftMarginPrimal(X, y, C=1.0)
    for name in ("osqp", "clarabel"):
        r = registry.get(name).solve(p)
        assert type(r) is SolveResult
        assert all(type(c) is Checkpoint for c in r.trace)
        assert r.solver == name and r.problem == p.kind and r.problem_key == p.key
        assert r.iterations > 0 and r.solve_time > 0


def test_osqp_warm_start_from_nearby_C_takes_fewer_iterations():
    X, y = BINARY_SETS["gaussian_overlap"]
    solver = registry.get("osqp")
    cold = solver.solve(SoftMarginPrimal(X, y, C=1.0))
    again = solver.solve(SoftMarginPrimal(X, y, C=1.0), warm_start=cold)
    assert again.iterations < cold.iterations / 10  # from its own optimum: one check interval
    near = solver.solve(SoftMarginPrimal(X, y, C=1.01))
    warm = solver.solve(SoftMarginPrimal(X, y, C=1.01), warm_start=cold)
    assert warm.status is Status.OPTIMAL
    assert rel(warm.primal, near.primal) <= 1e-6
    assert warm.iterations < near.iterations
    with pytest.raises(ValueError, match="warm_start"):
        solver.solve(SoftMarginPrimal(X[:50], y[:50], C=1.0), warm_start=cold)


def test_references_refuse_indefinite_kernels():
    X, y = BINARY_SETS["gaussian_overlap"]
    p = KernelDual(X, y, kernel="sigmoid", gamma=1.0, coef0=0.0)
    assert not p.convex
    for name in ("osqp", "clarabel"):
        with pytest.raises(TypeError, match="indefinite"):
            registry.get(name).solve(p)
    assert "osqp" not in registry.solvers_for(p)


def test_osqp_max_iter_is_a_status_not_an_exception():
    X, y = BINARY_SETS["digits"]
    with pytest.warns(UserWarning, match="max_iter"):
        r = registry.get("osqp", max_iter=10, polish=False).solve(SoftMarginDual(X, y))
    assert r.status is Status.MAX_ITER
    assert np.isfinite(r.primal) and r.gap >= -1e-9 * max(1, abs(r.primal))


def test_every_clarabel_status_name_is_a_status_of_the_record():
    """Clarabel's statuses are mapped once (problems._qp); the reference reads the names as
    ``Status`` values, so a name outside them would raise instead of giving a status."""
    from svmbench.problems._qp import _CLARABEL_STATUS_NAMES

    names = set(_CLARABEL_STATUS_NAMES.values()) - {"optimal_inaccurate"}
    assert names <= {s.value for s in Status}
    assert {"Solved", "PrimalInfeasible", "MaxIterations", "InsufficientProgress"} <= set(
        _CLARABEL_STATUS_NAMES
    )


# ---- tol: the certified gap asked for; eps: the library's own tolerance ------------------------


def _tol_problems():
    X, y = BINARY_SETS["breast_cancer"]
    return {
        "linear": SoftMarginPrimal(X, y, C=1.0),
        "rbf": KernelDual(X, y, C=1.0, kernel="rbf"),
        "hard_margin": HardMarginPrimal(*BINARY_SETS["gaussian_separable"]),
    }


@pytest.mark.parametrize("kind", ["linear", "rbf", "hard_margin"])
@pytest.mark.parametrize("tol", [1e-3, 1e-6, 1e-9])
@pytest.mark.parametrize("name", ["clarabel", "osqp", "cvxpy"])
def test_optimal_means_certified_at_tol(name, tol, kind):
    """``optimal`` ⇒ certified with rel_gap ≤ tol, whatever the library's own ``eps``; a
    status short of it is ``not_certified``, never ``optimal``."""
    problem = _tol_problems()[kind]
    result = registry.get(name, tol=tol).solve(problem)
    assert result.status in (Status.OPTIMAL, Status.NOT_CERTIFIED), result.message
    if result.status is Status.OPTIMAL:
        assert result.certified and result.rel_gap <= tol
    else:
        assert result.rel_gap > tol and f"tol={tol:g}" in result.message
    if kind != "hard_margin" and tol >= 1e-6:  # the tight library and the exact finish
        assert result.status is Status.OPTIMAL


def test_the_library_tolerance_is_eps_and_tol_judges_it():
    """A loose ``eps`` with a tight ``tol``: the library stops early and the record says
    ``not_certified`` where no exact finish applies (the hard margin); the defaults are a
    certified 1e-6 judged on a tight library (Clarabel 1e-10, OSQP 1e-7)."""
    clarabel, osqp = registry.get("clarabel"), registry.get("osqp")
    assert (clarabel.tol, clarabel.eps, osqp.tol, osqp.eps) == (1e-6, 1e-10, 1e-6, 1e-7)
    problem = _tol_problems()["hard_margin"]
    loose = registry.get("clarabel", eps=1e-2, tol=1e-12).solve(problem)
    assert loose.status is Status.NOT_CERTIFIED and loose.certified
    assert loose.rel_gap > 1e-12 and "clarabel status" in loose.message
    assert registry.get("clarabel", eps=1e-2, tol=1.0).solve(problem).status is Status.OPTIMAL
    with pytest.raises(TypeError, match="'gap_check' is now 'tol'"):
        registry.get("osqp", gap_check=1e-6)


def test_renamed_options_map_the_former_names_once():
    renamed, notes = registry.renamed_options("osqp", {"tol": 1e-9, "gap_check": 1e-8})
    assert renamed == {"eps": 1e-9, "tol": 1e-8} and len(notes) == 2
    # today's names come back as given; a stored record of before is renamed
    assert registry.renamed_options("clarabel", {"tol": 1e-8}) == ({"tol": 1e-8}, [])
    assert registry.renamed_options("libsvm", {"tol": 1e-3}, written_before=True)[0] == {
        "eps": 1e-3
    }
    assert registry.renamed_options("smo", {"tol": 1e-3}, written_before=True)[0] == {"tol": 1e-3}
    with pytest.raises(ValueError, match="mix former and current names"):
        registry.renamed_options("osqp", {"gap_check": 1e-8, "tol": 1e-9, "eps": 1e-7})
