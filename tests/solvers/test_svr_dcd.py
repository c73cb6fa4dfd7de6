"""svr_dcd (Ho & Lin's dual coordinate descent for linear ε-SVR) and the linear-SVR anchors:
certified optima equal to Clarabel's on both losses, each bias it takes, dense and CSR data,
d > n, duplicated rows, ε above the spread and a large C; the one-variable step against a brute
minimization; warm starts, limits and refusals."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import SoftMarginPrimal, SVRPrimal
from svmbench.solvers import registry
from svmbench.solvers._jit.svr_dcd import gap_term, svr_dcd_epochs
from svmbench.solvers.base import ConvergenceWarning, Status

TOL = 1e-6
LOSSES = ("epsilon_insensitive", "squared_epsilon_insensitive")
BIASES = ("regularized", "none")


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _data(kind: str):
    rng = np.random.default_rng(11)
    if kind == "wide":  # d > n
        X = rng.normal(size=(30, 80))
        return X, X @ rng.normal(size=80) + rng.normal(size=30)
    X = rng.normal(size=(120, 6))
    y = X @ rng.normal(size=6) * 4.0 + 1.0 + 3.0 * rng.normal(size=120)
    if kind == "duplicated":
        return np.vstack([X, X[:40]]), np.r_[y, y[:40]]
    if kind == "sparse":
        X[np.abs(X) < 0.8] = 0.0
        return sparse.csr_matrix(X), y
    return X, y


#: name → (data, C, ε). Dual CD needs many more epochs as C grows when n ≫ d (as LIBLINEAR's
#: own -s 12/13, which stop at their cap there): C = 1e4 is held on d > n data.
SETS = {
    "dense": ("dense", 1.0, 0.5),
    "csr": ("sparse", 1.0, 0.5),
    "duplicated": ("duplicated", 1.0, 0.5),
    "wide_large_C": ("wide", 1e4, 0.1),
    "epsilon_above_spread": ("dense", 1.0, 1e3),
}


def problem_on(name, loss, bias):
    kind, C, eps = SETS[name]
    X, y = _data(kind)
    return SVRPrimal(X, y, C=C, epsilon=eps, loss=loss, bias=bias)


def reference(problem):
    result = registry.get("clarabel", tol=1e-8).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    return result


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", sorted(SETS))
def test_svr_dcd_reaches_a_certified_optimum_equal_to_clarabels(name, loss, bias):
    problem = problem_on(name, loss, bias)
    result = registry.get("svr_dcd", tol=TOL, max_iter=100_000, trace=False).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and result.rel_gap <= TOL
    assert rel(result.primal, reference(problem).primal) <= TOL
    # the record's own β: feasible, and w = Σ β_i x_i
    lower, upper = problem.dual_box()
    assert np.all(result.beta >= lower) and np.all(result.beta <= upper)
    assert np.allclose(result.w, problem.X.T @ result.beta, atol=1e-8 * max(1, abs(result.w).max()))


def test_the_record_agrees_with_the_certificate_of_its_variables():
    problem = problem_on("duplicated", "epsilon_insensitive", "none")
    solver = registry.get("svr_dcd", trace=False)
    result = solver.solve(problem)
    again = solver.certify_result(problem, result)
    assert again.primal == pytest.approx(result.primal, rel=1e-12)
    assert again.dual == pytest.approx(result.dual, rel=1e-12)
    tampered = solver.certify_result(problem, dataclasses.replace(result, beta=0.5 * result.beta))
    assert tampered.dual < result.dual  # the check reads the record's β


def test_dense_and_csr_data_give_the_same_iterates():
    X, y = _data("sparse")
    runs = [
        registry.get("svr_dcd", tol=TOL, trace=False).solve(
            SVRPrimal(Z, y, epsilon=0.5, bias="regularized")
        )
        for Z in (X, X.toarray())
    ]
    assert runs[0].iterations == runs[1].iterations
    assert np.allclose(runs[0].beta, runs[1].beta, rtol=0, atol=1e-12)


def _brute_step(beta_i, G, H, eps, U):
    """argmin over a fine grid of ``½H d² + G d + ε|β_i + d|`` with ``|β_i + d| ≤ U``."""
    grid = np.linspace(-U - beta_i, U - beta_i, 400_001)
    f = 0.5 * H * grid**2 + G * grid + eps * np.abs(beta_i + grid)
    return beta_i + grid[np.argmin(f)]


@pytest.mark.parametrize("beta0", [0.0, 0.7, -0.4, 2.0])
@pytest.mark.parametrize("target", [-5.0, -0.3, 0.0, 0.2, 4.0])
def test_one_coordinate_step_solves_its_one_variable_problem(beta0, target):
    # one example, one feature: the epoch is exactly one closed-form step
    X = np.array([[1.5]])
    y = np.array([target])
    U, eps = 2.0, 0.3
    beta = np.array([beta0])
    w = np.array([1.5 * beta0])
    G = 1.5 * w[0] - target
    expected = _brute_step(beta0, G, 1.5**2, eps, U)
    svr_dcd_epochs(
        X, y, np.array([U]), np.array([U]), np.zeros(1), np.array([1.5**2]), eps, 0.0, beta, w,
        np.zeros(1), np.zeros(3), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.uint64),
        np.ones(1), np.array([1, 1, 0, 0, 0], dtype=np.int64), np.array([np.inf, -1.0, 0, 0, 0]),
        0.0, -1.0, False, 1,
    )  # fmt: skip
    assert beta[0] == pytest.approx(expected, abs=2e-5)
    assert w[0] == pytest.approx(1.5 * beta[0], rel=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_the_gap_terms_of_the_estimate_sum_to_the_certified_gap(loss):
    # P(w(β)) − D(β) = Σ_i [C_i ℓ(r_i) − β_i r_i + ε|β_i| + β_i²/(4C_i)] at any feasible β
    problem = problem_on("duplicated", loss, "regularized")
    C = problem.upper_bounds * np.linspace(0.5, 1.5, problem.n_samples)
    problem = dataclasses.replace(problem, sample_weight=C / problem.C)
    rng = np.random.default_rng(4)
    beta = problem.project_dual(rng.uniform(-1.5, 1.5, problem.n_samples) * C)
    w, b = problem.primal_from_dual(beta)
    r = problem.residuals(w, b)
    lam = 0.5 / C if problem.squared else np.zeros_like(C)
    terms = [gap_term(r[i], beta[i], C[i], lam[i], problem.epsilon) for i in range(r.size)]
    assert min(terms) >= -1e-9
    cert = problem.certificate(w=w, b=b, beta=beta)
    assert sum(terms) == pytest.approx(cert.gap, rel=1e-9)


@pytest.mark.parametrize("loss", LOSSES)
def test_the_gap_estimate_stops_near_the_first_epoch_that_certifies(loss):
    # a certificate after every epoch finds the first epoch that meets tol; the estimate, a
    # sum the epochs compute anyway, asks for the certificate within a few epochs of it
    rng = np.random.default_rng(5)
    X = sparse.random(3000, 300, density=0.02, format="csr", random_state=2)
    y = X @ rng.normal(size=300) + rng.normal(size=3000)
    problem = SVRPrimal(X, y, loss=loss, bias="regularized")
    every = registry.get("svr_dcd", tol=TOL, check_every=1, trace=False).solve(problem)
    default = registry.get("svr_dcd", tol=TOL, trace=False).solve(problem)
    assert every.status is default.status is Status.OPTIMAL
    assert default.iterations <= 1.15 * every.iterations + 3
    assert default.info["estimates_refused"] <= 2


def test_a_warm_start_at_the_optimum_stops_at_once():
    problem = problem_on("dense", "epsilon_insensitive", "regularized")
    first = registry.get("svr_dcd", tol=1e-9, trace=False).solve(problem)
    for start in (first, first.beta, (first.w, first.b)):
        again = registry.get("svr_dcd", tol=TOL, trace=False).solve(problem, warm_start=start)
        assert again.status is Status.OPTIMAL
        assert again.iterations <= 32  # one chunk


def test_the_limits_and_the_native_rule_end_with_an_honest_status():
    problem = problem_on("duplicated", "squared_epsilon_insensitive", "none")
    with pytest.warns(ConvergenceWarning):
        capped = registry.get("svr_dcd", tol=1e-12, max_iter=3, trace=False).solve(problem)
    assert capped.status is Status.MAX_ITER and capped.certified
    native = registry.get("svr_dcd", stop_rule="native", eps=0.1, trace=False).solve(problem)
    assert native.status in (Status.OPTIMAL, Status.NOT_CERTIFIED)
    assert native.certified and native.rel_gap > 0


def test_svr_dcd_refuses_a_free_bias_and_other_problems():
    X, y = _data("dense")
    solver = registry.get("svr_dcd")
    with pytest.raises(TypeError, match=r"svr_dcd.*bias='free'"):
        solver.solve(SVRPrimal(X, y, bias="free"))
    labels = np.where(y > np.median(y), 1.0, -1.0)
    with pytest.raises(TypeError, match="svr_dcd"):
        solver.solve(SoftMarginPrimal(X, labels, bias="none"))
    assert "svr_dcd" in registry.solvers_for(SVRPrimal(X, y, bias="none"))


def test_the_model_predicts_the_regression_values():
    problem = problem_on("dense", "epsilon_insensitive", "regularized")
    result = registry.get("svr_dcd", trace=False).solve(problem)
    f = problem.X @ result.w + result.b
    assert np.allclose(result.model.predict(problem.X), f)


#: anchor → (options, the losses it takes, the biases it takes)
ANCHORS = {
    "liblinear_svr": ({"eps": 1e-7}, LOSSES, BIASES),
    "liblinear_svr_primal": ({"eps": 1e-12}, LOSSES[1:], ("free", *BIASES)),
    "sklearn_linearsvr": ({"eps": 1e-9, "max_iter": 100_000}, LOSSES, BIASES),
}


@pytest.mark.parametrize("anchor", sorted(ANCHORS))
def test_the_anchors_reach_the_reference_optimum_at_their_tight_eps(anchor):
    if registry.missing_reason(anchor):
        pytest.skip(registry.missing_reason(anchor))
    options, losses, biases = ANCHORS[anchor]
    for loss in losses:
        for bias in biases:
            problem = problem_on("csr", loss, bias)  # within liblinear 2.50's 300 epochs
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                result = registry.get(anchor, tol=TOL, **options).solve(problem)
            assert result.certified and result.rel_gap <= TOL, (loss, bias, result.message)
            assert rel(result.primal, reference(problem).primal) <= TOL, (loss, bias)


def test_the_anchors_refuse_what_their_library_cannot_solve():
    X, y = _data("dense")
    with pytest.raises(TypeError, match="liblinear_svr.*bias='free'"):
        registry.get("liblinear_svr").solve(SVRPrimal(X, y, bias="free"))
    with pytest.raises(TypeError, match="squared"):
        registry.get("liblinear_svr_primal").solve(SVRPrimal(X, y))
    weighted = SVRPrimal(X, y, bias="none", sample_weight=np.linspace(0.5, 1.5, y.size))
    with pytest.raises(TypeError, match="per-example weights"):
        registry.get("liblinear_svr").solve(weighted)
