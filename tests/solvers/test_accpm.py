"""ACCPM (analytic-center cutting-plane method) against the Clarabel reference.

Every run is judged twice: by the problem's certificate of the returned point, and by ACCPM's own
bounds ``l ≤ f* ≤ u``, which must bracket the reference optimum at every oracle call.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linprog

import svmbench.solvers.accpm as accpm
from svmbench.problems import SoftMarginPrimal
from svmbench.solvers import registry
from svmbench.solvers._accpm_polytope import (
    Cuts,
    analytic_center,
    box_relevance,
    lp_bound,
    outer_radius,
    relevance,
)
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.accpm import ACCPM, _localization_box, _problem_data
from svmbench.solvers.base import ConvergenceWarning, Status
from tests.conftest import BINARY_SETS, SET_C

SETS = ("gaussian_overlap", "quadrant", "breast_cancer")
DROPPING = ("none", "relevance", "keep")
TOL = 1e-6


def _problem(name, **kw):
    X, y = BINARY_SETS[name]
    return SoftMarginPrimal(X, y, C=SET_C[name], **kw)


@functools.cache
def _solve(name, dropping, **kw):
    problem = _problem(name)
    solver = ACCPM(tol=TOL, dropping=dropping, check_every=25, lp_every=10, **kw)
    return problem, solver.solve(problem)


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _z(problem, w, b):
    """The ACCPM variables of ``(w, b)``: ``w``, ``(w, b)`` or ``(w, b/s)``."""
    if problem.bias == "none":
        return np.asarray(w)
    last = b / problem.bias_scale if problem.bias == "regularized" else b
    return np.append(w, last)


@pytest.mark.parametrize("dropping", DROPPING)
@pytest.mark.parametrize("name", SETS)
def test_reaches_the_reference_objective(name, dropping):
    problem, r = _solve(name, dropping)
    ref = reference_solution(problem)
    assert r.status is Status.OPTIMAL, r.message
    assert r.solver == "accpm" and r.iteration_unit == "oracle calls"
    assert r.certified and r.rel_gap <= TOL
    assert _rel(r.primal, ref.primal) <= 10 * TOL
    # the reported gap is the problem's certificate of the returned point, not ACCPM's bounds
    cert = problem.certificate(w=r.w, b=r.b)
    assert r.gap == pytest.approx(cert.gap, rel=1e-9, abs=1e-12)
    assert r.certified and r.rel_gap <= 1e-4
    assert r.info["upper"] == pytest.approx(problem.primal_objective(r.w, r.b), rel=1e-12)
    assert len(r.info["history"]["call"]) == r.iterations


@pytest.mark.parametrize("dropping", DROPPING)
@pytest.mark.parametrize("name", SETS)
def test_bounds_bracket_the_optimum_at_every_call(name, dropping):
    problem, r = _solve(name, dropping)
    f_star = reference_solution(problem).primal
    slack = 1e-9 * max(1.0, abs(f_star))  # the reference's own accuracy
    h = r.info["history"]
    for key in ("lower", "lower_dikin", "lower_dual"):
        assert np.all(h[key] <= f_star + slack), key
    lp = h["lower_lp"][np.isfinite(h["lower_lp"])]
    assert lp.size and np.all(lp <= f_star + slack)
    assert np.all(h["upper"] >= f_star - slack)
    assert np.all(h["f"] >= h["upper"])
    # the bounds are monotone and the history's last entry is the result's
    assert np.all(np.diff(h["lower"]) >= 0) and np.all(np.diff(h["upper"]) <= 0)
    assert h["upper"][-1] == r.info["upper"] and h["lower"][-1] == r.info["lower"]


@pytest.mark.parametrize("name", SETS)
def test_dropping_reaches_the_same_objective(name):
    values = [_solve(name, d)[1].primal for d in DROPPING]
    assert max(values) - min(values) <= 2 * TOL * max(1.0, abs(values[0]))


@pytest.mark.parametrize("name", SETS)
def test_dropping_bounds_the_number_of_cuts(name):
    problem, none = _solve(name, "none")
    _, keep = _solve(name, "keep")
    _, relevance = _solve(name, "relevance")
    n_limit = 3 * (problem.n_features + 1)
    assert keep.info["keep_limit"] == n_limit
    assert keep.info["max_cuts_held"] <= n_limit
    assert np.max(keep.info["history"]["cuts"]) <= n_limit
    # without dropping every oracle call but the last leaves its cut
    assert none.info["cuts_held"] == none.iterations - 1
    assert relevance.info["max_cuts_held"] <= none.info["max_cuts_held"]
    assert np.sum(relevance.info["history"]["dropped"]) > 0


def _max_over_polytope(c, A, b, rho):
    """``max cᵀz`` over ``{Az ≤ b, |z| ≤ ρ}`` (HiGHS)."""
    res = linprog(-c, A_ub=A, b_ub=b, bounds=[(-r, r) for r in rho], method="highs")
    assert res.status == 0, res.message
    return -res.fun, res.x


@pytest.mark.parametrize("name", SETS)
def test_relevance_drops_only_cuts_that_cannot_touch_the_polytope(name, monkeypatch):
    """Every cut ``relevance`` drops is redundant: an LP over the cuts it keeps (and the box)
    stays on the safe side of the dropped cut's hyperplane."""
    events = []
    drop = accpm._drop

    def recording(state, strategy, keep, every):
        cuts = state.cuts
        A, b, born = cuts.A.copy(), cuts.rhs(state.upper), cuts.born[: cuts.size].copy()
        dropped = drop(state, strategy, keep, every)
        if dropped:
            events.append((A, b, state.rho.copy(), np.isin(born, cuts.born[: cuts.size])))
        return dropped

    monkeypatch.setattr(accpm, "_drop", recording)
    problem = _problem(name)
    tol = 1e-6 if name == "breast_cancer" else 1e-9  # 127 and ~50 LPs
    r = ACCPM(tol=tol, dropping="relevance", relevance_every=1, trace=False).solve(problem)
    assert r.status is Status.OPTIMAL
    checked = 0
    for A, b, rho, kept in events:
        for j in np.flatnonzero(~kept):
            top, _ = _max_over_polytope(A[j], A[kept], b[kept], rho)
            assert top <= b[j] + 1e-9 * max(1.0, abs(b[j])), (j, top, b[j])
            checked += 1
    assert checked >= 10 and checked == np.sum(r.info["history"]["dropped"])


def test_relevance_is_tested_every_relevance_every_calls():
    problem = _problem("gaussian_overlap")
    r = ACCPM(tol=1e-9, dropping="relevance", relevance_every=7, trace=False).solve(problem)
    h = r.info["history"]
    dropped_at = h["call"][h["dropped"] > 0]
    assert r.status is Status.OPTIMAL
    assert dropped_at.size and np.all(dropped_at % 7 == 0)


def _random_polytope(seed, p=5, m=80):
    """Unit normals, right-hand sides spread over four decades (most are redundant), a box."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, p))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    b = np.exp(rng.uniform(0.0, np.log(1e4), m))
    rho = np.full(p, 1e3)
    out = analytic_center(A, b, rho, np.zeros(p), b.copy(), 1e-12)
    assert out is not None
    x, s, chol, _, lam2 = out
    return A, b, rho, x, s, chol, lam2


@pytest.mark.parametrize("seed", range(4))
def test_outer_radius_contains_the_polytope(seed):
    """Vertices of the polytope lie within ``‖z − x‖_H < r``; every cut with ``η ≥ r`` is
    redundant (LP); and ``r`` is sharper than Boyd–Vandenberghe's ``sqrt(m(m−1))``."""
    A, b, rho, x, s, chol, lam2 = _random_polytope(seed)
    eta = relevance(A, s, chol)
    eta_all = np.concatenate([eta, box_relevance(x, rho, chol)])
    r = outer_radius(eta_all, np.sqrt(lam2))
    m = eta_all.size
    assert r < 0.6 * np.sqrt(m * (m - 1))
    assert np.sum(eta >= r) > np.sum(eta >= np.sqrt(m * (m - 1)))
    L = np.tril(chol[0])
    rng = np.random.default_rng(seed)
    directions = np.vstack([rng.standard_normal((40, x.size)), A, np.eye(x.size), -np.eye(x.size)])
    for c in directions:
        _, z = _max_over_polytope(c, A, b, rho)
        assert np.linalg.norm(L.T @ (z - x)) < r
    redundant = np.flatnonzero(eta >= r)
    assert redundant.size > 0
    for j in redundant:
        assert _max_over_polytope(A[j], A, b, rho)[0] < b[j]


def test_outer_radius_is_exact_on_a_simplex():
    """The regular simplex attains Boyd–Vandenberghe's bound ``sqrt(m(m − 1))``: its vertices
    lie at that ``H``-distance from the center, so no valid radius can be smaller."""
    p = 4
    m = p + 1
    basis = np.linalg.svd(np.eye(m) - 1.0 / m)[0][:, :p]  # orthonormal basis of 1^⊥ in R^m
    A = (np.eye(m) - 1.0 / m) @ basis  # the facet normals e_i − 1/m, in that basis
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    H = A.T @ A  # slacks 1 at the center 0 (the centroid)
    chol = (np.linalg.cholesky(H), True)
    eta = relevance(A, np.ones(m), chol)
    vertex = -p * A[0]  # tight on every facet but the first
    assert np.allclose(A[1:] @ vertex, 1.0)
    t = np.sqrt(vertex @ H @ vertex)
    assert t == pytest.approx(np.sqrt(m * (m - 1)), rel=1e-12)
    r = outer_radius(eta, 0.0)
    assert t <= r <= t * (1 + 1e-9)


def test_lp_bound_is_the_kelley_lp_value():
    """The dual LP's weights, evaluated exactly, give the primal LP's optimum (and never more)."""
    rng = np.random.default_rng(0)
    p, n = 4, 30
    cuts = Cuts.empty(p)
    for _ in range(n):
        x = rng.uniform(-1.0, 1.0, p)
        g = x + 0.3 * rng.standard_normal(p)  # subgradients of ½‖z‖² + noise: a bowl
        cuts.add(g, 0.5 * x @ x + rng.uniform(0.0, 0.1), x, 0)
    rho = np.full(p, 2.0)
    a_ub = np.hstack([cuts.A, -1.0 / cuts.norm[:n, None]])
    cost = np.r_[np.zeros(p), 1.0]
    primal = linprog(cost, A_ub=a_ub, b_ub=-cuts.c[:n], bounds=[(-2, 2)] * p + [(None, None)])
    bound = lp_bound(cuts, rho)
    assert bound <= primal.fun + 1e-12 * max(1.0, abs(primal.fun))
    assert bound == pytest.approx(primal.fun, rel=1e-9, abs=1e-9)


def test_keep_factor_two_holds_2p_cuts_and_converges():
    problem = _problem("gaussian_overlap")
    r = ACCPM(tol=1e-5, dropping="keep", keep_factor=2, trace=False).solve(problem)
    ref = reference_solution(problem)
    assert r.status is Status.OPTIMAL
    assert r.info["max_cuts_held"] <= 2 * (problem.n_features + 1)
    assert _rel(r.primal, ref.primal) <= 1e-4


def test_keep_factor_one_stalls_but_its_bounds_stay_valid():
    """With at most p cuts the model cannot bound f below away from the box: no progress, but
    dropping only enlarges the set, so the bounds still bracket the optimum."""
    problem = _problem("gaussian_overlap")
    with pytest.warns(ConvergenceWarning):
        r = ACCPM(dropping="keep", keep_factor=1, max_iter=150, trace=False).solve(problem)
    f_star = reference_solution(problem).primal
    h = r.info["history"]
    assert r.status is Status.MAX_ITER and r.info["max_cuts_held"] <= problem.n_features + 1
    assert np.all(h["lower"] <= f_star) and np.all(h["upper"] >= f_star)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("name", SETS)
def test_localization_box_contains_the_reference_optimum(name, bias, loss):
    problem = _problem(name, bias=bias, loss=loss, bias_scale=2.0)
    ref = reference_solution(problem)
    box = _localization_box(_problem_data(problem))
    z = _z(problem, ref.w, ref.b)
    assert z.shape == box.shape
    assert np.all(np.abs(z) < box / 1.01)  # the proven bound, before the 1% padding


@pytest.mark.parametrize(
    ("bias", "loss"),
    [
        ("regularized", "hinge"),
        ("none", "hinge"),
        ("free", "squared_hinge"),
        ("none", "squared_hinge"),
    ],
)
def test_other_biases_and_the_squared_hinge(bias, loss):
    problem = _problem("gaussian_overlap", bias=bias, loss=loss, bias_scale=2.0)
    r = ACCPM(tol=TOL, trace=False).solve(problem)
    ref = reference_solution(problem)
    assert r.status is Status.OPTIMAL
    assert _rel(r.primal, ref.primal) <= 10 * TOL
    assert np.all(r.info["history"]["lower"] <= ref.primal + 1e-9 * max(1, ref.primal))
    if bias == "none":
        assert r.b == 0.0


def test_sparse_input_gives_the_dense_result():
    X, y = BINARY_SETS["quadrant"]
    dense = ACCPM(trace=False).solve(SoftMarginPrimal(X, y))
    csr = ACCPM(trace=False).solve(SoftMarginPrimal(sparse.csr_matrix(X), y))
    assert csr.iterations == dense.iterations
    assert csr.primal == pytest.approx(dense.primal, rel=1e-10)


def test_trace_is_certified_every_check_every_calls():
    problem = _problem("quadrant")
    r = ACCPM(tol=TOL, check_every=7, stop_rule="native").solve(problem)
    its = [c.iteration for c in r.trace]
    assert all(i % 7 == 0 for i in its[:-1]) and its[-1] == r.iterations
    assert r.trace[-1].gap == pytest.approx(r.gap)
    # trace points are the problem's certificates (primal ≥ reference optimum)
    ref = reference_solution(problem)
    assert all(c.primal >= ref.primal - 1e-9 * ref.primal for c in r.trace)


def test_gap_stop_rule_stops_on_the_certified_gap():
    problem = _problem("gaussian_overlap")
    r = ACCPM(tol=1e-5, stop_rule="gap", check_every=5, trace=False).solve(problem)
    assert r.status is Status.OPTIMAL and r.rel_gap <= 1e-5


def test_warm_start_from_the_optimum():
    problem = _problem("gaussian_overlap")
    ref = reference_solution(problem)
    r = ACCPM(tol=TOL, trace=False).solve(problem, warm_start=(ref.w, ref.b))
    assert r.info["history"]["upper"][0] == pytest.approx(ref.primal, rel=1e-8)
    assert np.isneginf(r.info["history"]["lower_dikin"][0])  # not a center: no Dikin bound
    assert r.status is Status.OPTIMAL and _rel(r.primal, ref.primal) <= 10 * TOL


def test_registered_under_accpm():
    solver = registry.get("accpm", dropping="keep")
    assert type(solver) is ACCPM and solver.dropping == "keep"
    assert solver.stop_rule == "gap"  # the default certifies
    assert "accpm" in registry.solvers_for(_problem("quadrant"))


@pytest.mark.parametrize(
    "options",
    [
        {"dropping": "sometimes"},
        {"keep_factor": 0},
        {"lp_every": -1},
        {"tol": -1e-3},
        {"center_tol": -1.0},
        {"relevance_every": 0},
        {"stop_rule": "kkt"},
        {"check_every": 0},
        {"max_iter": 0},
    ],
)
def test_bad_options_raise_value_error(options):
    with pytest.raises(ValueError):
        ACCPM(**options)


def test_a_failed_centering_is_a_numerical_error(monkeypatch):
    """A polytope that Newton cannot center ends the run honestly, never as ``optimal``."""
    import svmbench.solvers.accpm as accpm

    monkeypatch.setattr(accpm, "analytic_center", lambda *args: None)
    r = ACCPM(trace=False).solve(_problem("quadrant"))
    assert r.status is Status.NUMERICAL_ERROR and "centering failed" in r.message
    assert r.iterations == 1 and math.isfinite(r.primal)
