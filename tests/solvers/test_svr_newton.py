"""svr_newton (Newton's method with an exact line search for the squared ε-insensitive loss,
LIBLINEAR ``-s 11``'s method): certified optima equal to Clarabel's on friedman1, diabetes,
d > n, duplicated rows, CSR data, per-example weights and a large C (C = 1e5 on d > n too), every
bias; the jitted passes and the line search against NumPy; warm starts, limits, the native rule
and refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import SoftMarginPrimal, SVRPrimal
from svmbench.problems.datasets import load
from svmbench.solvers import registry
from svmbench.solvers._jit.svr_newton import hessian_rows, line_search, weighted_rows
from svmbench.solvers.base import ConvergenceWarning, Status
from svmbench.solvers.svr_newton import SVRObjective, unsigned_rows

TOL = 1e-6
SQUARED = "squared_epsilon_insensitive"
BIASES = ("free", "regularized", "none")


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _data(name: str):
    rng = np.random.default_rng(3)
    if name in ("friedman1", "diabetes"):
        spec = "friedman1:n=300,noise=1,seed=0" if name == "friedman1" else "diabetes"
        data = load(spec)
        return data.X, data.y
    if name == "wide":  # d > n
        X = rng.normal(size=(40, 120))
        return X, X @ rng.normal(size=120) + rng.normal(size=40)
    X = rng.normal(size=(150, 8))
    y = X @ rng.normal(size=8) * 3.0 + 2.0 + 2.0 * rng.normal(size=150)
    if name == "duplicated":
        return np.vstack([X, X[:50], X[:20]]), np.r_[y, y[:50], y[:20]]
    if name == "csr":
        X[np.abs(X) < 0.9] = 0.0
        return sparse.csr_matrix(X), y
    return X, y


#: name → (data, C, ε, weighted)
SETS = {
    "friedman1": ("friedman1", 1.0, 0.1, False),
    "diabetes": ("diabetes", 10.0, 0.1, False),
    "wide": ("wide", 1.0, 0.1, False),
    "duplicated": ("duplicated", 1.0, 0.5, False),
    "csr": ("csr", 1.0, 0.5, False),
    "large_C": ("friedman1", 1e5, 0.1, False),
    # d > n, C = 1e5: the residuals crowd the tube's edge, where the curvature along a
    # direction jumps from 1 to 2C‖x‖² (the trust region of LIBLINEAR's old -s 11 collapsed here)
    "wide_large_C": ("wide", 1e5, 0.1, False),
    "weighted": ("dense", 1.0, 0.5, True),
    "epsilon_above_spread": ("dense", 1.0, 1e3, False),
}


def problem_on(name, bias):
    data, C, eps, weighted = SETS[name]
    X, y = _data(data)
    weights = np.linspace(0.0, 2.0, y.size) if weighted else None
    return SVRPrimal(X, y, C=C, epsilon=eps, loss=SQUARED, bias=bias, sample_weight=weights)


def reference(problem):
    result = registry.get("clarabel", tol=1e-9).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    return result


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("name", sorted(SETS))
def test_svr_newton_reaches_a_certified_optimum_equal_to_clarabels(name, bias):
    problem = problem_on(name, bias)
    result = registry.get("svr_newton", tol=TOL, trace=False).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and result.rel_gap <= TOL
    ref = reference(problem)
    assert rel(result.primal, ref.primal) <= TOL
    # the objective is strongly convex in w (and b, unless free on an empty tube): one model
    scale = max(1.0, float(np.abs(ref.w).max()))
    assert np.allclose(result.w, ref.w, rtol=0, atol=1e-3 * scale)
    if bias == "none":
        assert result.b == 0.0


def test_the_jitted_passes_equal_numpys_products_dense_and_csr():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 7))
    X[rng.random(X.shape) < 0.5] = 0.0
    rows = np.array([0, 3, 4, 10, 29], dtype=np.int64)
    D = rng.uniform(0.5, 2.0, rows.size)
    v = rng.normal(size=8)
    col = 0.7
    Xt = np.hstack([X, np.full((30, 1), col)])[rows]
    for data in (X, unsigned_rows(sparse.csr_matrix(X))):
        out = np.empty(8)
        hessian_rows(data, rows, D, v, col, True, out)
        assert np.allclose(out, Xt.T @ (D * (Xt @ v)), rtol=1e-13, atol=1e-13)
        weighted_rows(data, rows, D, col, True, out)
        assert np.allclose(out, Xt.T @ D, rtol=1e-13, atol=1e-13)
        short = np.empty(7)
        hessian_rows(data, rows, D, v[:7], col, False, short)
        assert np.allclose(short, X[rows].T @ (D * (X[rows] @ v[:7])), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("bias", BIASES)
def test_the_gradient_and_hessian_match_finite_differences(bias):
    problem = problem_on("weighted", bias)
    objective = SVRObjective(problem)
    rng = np.random.default_rng(1)
    v = rng.normal(size=objective.size)
    f, g = objective.gradient(v)
    for k in range(objective.size):
        e = np.zeros_like(v)
        e[k] = 1e-6
        fd = (objective.value(v + e) - objective.value(v - e)) / 2e-6
        assert fd == pytest.approx(g[k], rel=1e-5, abs=1e-4)
    # the objective is quadratic on the region where I does not change: H v is exact there
    u = 1e-7 * rng.normal(size=v.size)
    _, g2 = objective.gradient(v + u)
    objective.gradient(v)  # I back at v
    assert np.allclose(g2 - g, objective.hessian_times(u), rtol=1e-4, atol=1e-10)
    w, b = objective.variables(v).values()
    assert f == pytest.approx(problem.primal_objective(w, b), rel=1e-12)


def test_dense_and_csr_data_give_the_same_optimum():
    X, y = _data("csr")
    runs = [
        registry.get("svr_newton", tol=1e-10, trace=False).solve(
            SVRPrimal(Z, y, epsilon=0.5, loss=SQUARED, bias="free")
        )
        for Z in (X, X.toarray())
    ]
    assert runs[0].status is runs[1].status is Status.OPTIMAL
    assert np.allclose(runs[0].w, runs[1].w, rtol=0, atol=1e-7)


def test_a_warm_start_at_the_optimum_stops_at_once():
    problem = problem_on("diabetes", "free")
    first = registry.get("svr_newton", tol=1e-10, trace=False).solve(problem)
    beta = problem.certificate(w=first.w, b=first.b).dual_point  # the KKT map's β
    for start in (first, (first.w, first.b), beta):
        again = registry.get("svr_newton", tol=TOL, trace=False).solve(problem, warm_start=start)
        assert again.status is Status.OPTIMAL
        assert again.iterations <= 1


def test_the_limits_and_the_native_rule_end_with_an_honest_status():
    problem = problem_on("large_C", "regularized")
    with pytest.warns(ConvergenceWarning):
        capped = registry.get("svr_newton", tol=1e-12, max_iter=1, trace=False).solve(problem)
    assert capped.status is Status.MAX_ITER and capped.certified and capped.rel_gap > 1e-12
    native = registry.get("svr_newton", stop_rule="native", eps=1e-2, trace=False).solve(problem)
    assert native.status in (Status.OPTIMAL, Status.NOT_CERTIFIED)
    assert native.certified and native.rel_gap > 0
    tight = registry.get("svr_newton", stop_rule="native", eps=1e-10, trace=False).solve(problem)
    assert tight.rel_gap < native.rel_gap


@pytest.mark.parametrize("seed", range(4))
def test_the_line_search_finds_the_minimum_of_the_piecewise_quadratic(seed):
    rng = np.random.default_rng(seed)
    n, eps = 60, 0.3
    r, z = rng.normal(size=n), rng.normal(size=n)
    C = rng.uniform(0.0, 1e3 if seed % 2 else 1.0, n)
    q0 = rng.uniform(0.1, 2.0)
    a0 = -abs(rng.normal()) - 2.0 * float(C @ (np.maximum(0.0, np.abs(r) - eps) * np.sign(r) * z))

    def phi(t):
        xi = np.maximum(0.0, np.abs(r[:, None] - np.outer(z, t)) - eps)
        return a0 * t + 0.5 * q0 * t * t + C @ (xi * xi)

    t, evaluations = line_search(r, z, C, eps, a0, q0)
    grid = np.linspace(0.0, 4.0 * max(t, 1.0), 400_001)
    best = grid[np.argmin(phi(grid))]
    assert phi(np.array([t]))[0] <= phi(np.array([best]))[0] + 1e-9 * max(1.0, abs(phi(grid)).max())
    assert abs(t - best) <= 1e-4 * max(1.0, best)
    assert 1 <= evaluations <= 100


def test_at_large_C_on_wide_data_the_line_search_reaches_the_optimum_trust_regions_miss():
    problem = problem_on("wide_large_C", "regularized")
    result = registry.get("svr_newton", tol=1e-9, trace=False).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert rel(result.primal, reference(problem).primal) <= 1e-8
    assert result.info["last_step"] > 0.0


def test_svr_newton_refuses_the_plain_loss_and_other_problems():
    X, y = _data("dense")
    solver = registry.get("svr_newton")
    with pytest.raises(TypeError, match=r"svr_newton.*squared ε-insensitive loss only"):
        solver.solve(SVRPrimal(X, y, loss="epsilon_insensitive"))
    assert "svr_newton" in registry.solvers_for(SVRPrimal(X, y, loss=SQUARED, bias="free"))
    assert "svr_newton" not in registry.solvers_for(SVRPrimal(X, y))
    labels = np.where(y > np.median(y), 1.0, -1.0)
    with pytest.raises(TypeError, match="svr_newton"):
        solver.solve(SoftMarginPrimal(X, labels, bias="none"))
    with pytest.raises(ValueError, match="eps"):
        registry.get("svr_newton", eps=-1.0)
    with pytest.raises(ValueError, match="max_cg"):
        registry.get("svr_newton", max_cg=0)


def test_it_agrees_with_liblinear_s11_at_a_tight_eps():
    if registry.missing_reason("liblinear_svr_primal"):
        pytest.skip(registry.missing_reason("liblinear_svr_primal"))
    for bias in BIASES:
        problem = problem_on("friedman1", bias)
        ours = registry.get("svr_newton", tol=1e-10, trace=False).solve(problem)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            theirs = registry.get("liblinear_svr_primal", eps=1e-10).solve(problem)
        assert rel(theirs.primal, ours.primal) <= 1e-8
        assert np.allclose(ours.w, theirs.w, rtol=0, atol=1e-4)
