"""The rounding allowance of ε-SVR (kernel and linear), the ν family, one-class, Crammer–Singer,
the logistic loss and the hard margin (problems/rounding_scores.py; issue 25: nothing may weaken
a certificate or a status).

Each certificate's gap is recomputed in long double at the points it judged (the kernel's
entries from the differences of the rows); the difference from the float64 gap must lie within
the allowance. Near the floor (large C or weights, duplicated rows) the two differ; on an
ordinary problem the allowance is taken from maxima alone and stays below 1e-11 of |P|."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import svmbench.problems.rounding_scores as rs
from svmbench.problems import MulticlassHinge
from svmbench.problems.hard_margin import HardMarginPrimal
from svmbench.problems.logistic import Logistic
from svmbench.problems.multinomial_logistic import MultinomialLogistic
from svmbench.problems.nu_svc import NuSVCDual
from svmbench.problems.nu_svr import NuSVRDual
from svmbench.problems.one_class import OneClassDual
from svmbench.problems.svr import SVRDual
from svmbench.problems.svr_linear import SVRPrimal
from svmbench.solvers import registry

LONG = np.longdouble
needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is float64 here: no more precise reference",
)


def _solve(problem, solver="clarabel", tol=1e-9):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return registry.get(solver, tol=tol).solve(problem)


def _rbf(X, gamma):
    XL = np.asarray(X, dtype=LONG)
    D = ((XL[:, None, :] - XL[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-LONG(gamma) * D)


def _hinge(t):
    return np.maximum(LONG(0.0), t)


# ---- the gaps in long double, at the points each certificate judged ------------------------------
def _svr_gap(p, cert):
    beta = np.asarray(cert.dual_point, dtype=LONG)
    g = _rbf(p.X, p.gamma) @ beta
    y, C, eps = p.y.astype(LONG), p.upper_bounds.astype(LONG), LONG(p.epsilon)
    b = LONG(cert.primal_point["b"])
    P = beta @ g / 2 + C @ _hinge(np.abs(y - g - b) - eps)
    D = y @ beta - eps * np.abs(beta).sum() - beta @ g / 2
    return P - D


def _nu_svc_gap(p, cert):
    a = np.asarray(cert.dual_point, dtype=np.float64)
    u, v, _ = p._offsets(p.kernel_times(a * p.y))  # the offsets the certificate took
    y, c = p.y.astype(LONG), p.upper_bounds.astype(LONG)
    coef = a.astype(LONG) * y
    g = _rbf(p.X, p.gamma) @ coef
    pos, mass = p.y > 0, LONG(p.class_mass)
    phi = -mass * (LONG(u) + LONG(v))
    phi += c[pos] @ _hinge(LONG(u) - g[pos]) + c[~pos] @ _hinge(LONG(v) + g[~pos])
    return coef @ g + phi


def _nu_svr_gap(p, cert):
    a = np.asarray(cert.dual_point, dtype=np.float64)
    coef64 = p.coefficients(a)
    t, low, _ = p._edges(p.kernel_times(coef64))
    coef = coef64.astype(LONG)
    g = _rbf(p.X, p.gamma) @ coef
    y, c, mass = p.y.astype(LONG), p.upper_bounds.astype(LONG), LONG(p.side_mass)
    r = y - g
    phi = -mass * (LONG(t) + LONG(low)) + c @ (_hinge(LONG(t) + r) + _hinge(LONG(low) - r))
    return coef @ g + phi - y @ coef


def _one_class_gap(p, cert):
    a = np.asarray(cert.dual_point, dtype=LONG)
    s = _rbf(p.X, p.gamma) @ a
    rho = LONG(cert.primal_point["rho"])
    return a @ s - LONG(p.mass) * rho + p.upper_bounds.astype(LONG) @ _hinge(rho - s)


def _tilde(p, v, total):
    out = v @ v
    if p.bias == "regularized":
        out += (LONG(p.bias_scale) * total) ** 2
    return out


def _svr_linear_gap(p, cert):
    XL, y, C = p.X.astype(LONG), p.y.astype(LONG), p.upper_bounds.astype(LONG)
    w, b = cert.primal_point["w"].astype(LONG), LONG(cert.primal_point["b"])
    beta = np.asarray(cert.dual_point, dtype=LONG)
    eps = LONG(p.epsilon)
    xi = _hinge(np.abs(y - XL @ w - b) - eps)
    if p.squared:
        xi = xi * xi
    P = w @ w / 2 + C @ xi
    if p.bias == "regularized":
        P += (b / LONG(p.bias_scale)) ** 2 / 2
    D = y @ beta - eps * np.abs(beta).sum() - _tilde(p, XL.T @ beta, beta.sum()) / 2
    if p.squared:
        D -= np.sum(beta**2 / (4 * C))
    return P - D


def _entropy(a, c):
    rest = c - a
    part = np.where(a > 0, a * np.log(c / np.where(a > 0, a, 1)), 0)
    return np.sum(part + np.where(rest > 0, rest * np.log(c / np.where(rest > 0, rest, 1)), 0))


def _logistic_gap(p, cert):
    XL, y, C = p.X.astype(LONG), p.y.astype(LONG), p.upper_bounds.astype(LONG)
    w, b = cert.primal_point["w"].astype(LONG), LONG(cert.primal_point["b"])
    a = np.asarray(cert.dual_point, dtype=LONG)
    m = y * (XL @ w + b)
    P = w @ w / 2 + C @ np.log1p(np.exp(-m))
    if p.bias == "regularized":
        P += (b / LONG(p.bias_scale)) ** 2 / 2
    ay = a * y
    D = -_tilde(p, XL.T @ ay, ay.sum()) / 2 + _entropy(a, C)
    return P - D


def _hard_margin_gap(p, cert):
    XL, y = p.X.astype(LONG), p.y.astype(LONG)
    w, b = cert.primal_point["w"].astype(LONG), LONG(cert.primal_point["b"])
    a = np.asarray(cert.dual_point, dtype=LONG)
    P = w @ w / 2 + ((b / LONG(p.bias_scale)) ** 2 / 2 if p.bias == "regularized" else 0)
    ay = a * y
    return P - (a.sum() - _tilde(p, XL.T @ ay, ay.sum()) / 2)


def _multiclass_gap(p, cert):
    XL, C = p.X.astype(LONG), p.upper_bounds.astype(LONG)
    W, b = cert.primal_point["W"].astype(LONG), cert.primal_point["b"].astype(LONG)
    beta = np.asarray(cert.dual_point, dtype=LONG)
    n = p.n_samples
    rows = np.arange(n)
    cost = p.cost[:, p.y].T.astype(LONG)
    F = XL @ W.T + b
    P = np.sum(W * W) / 2 + C @ np.max(cost + F - F[rows, p.y][:, None], axis=1)
    if p.bias == "regularized":
        P += (b @ b) / LONG(p.bias_scale) ** 2 / 2
    G = -beta
    G[rows, p.y] += C
    V = G.T @ XL
    D = np.sum(beta * cost) - np.sum(V * V) / 2
    if p.bias == "regularized":
        s = G.sum(axis=0)
        D -= LONG(p.bias_scale) ** 2 * (s @ s) / 2
    return P - D


def _multinomial_gap(p, cert):
    XL, C = p.X.astype(LONG), p.upper_bounds.astype(LONG)
    W, b = cert.primal_point["W"].astype(LONG), cert.primal_point["b"].astype(LONG)
    beta = np.asarray(cert.dual_point, dtype=LONG)
    rows = np.arange(p.n_samples)
    F = XL @ W.T + b
    top = F.max(axis=1)
    lse = top + np.log(np.exp(F - top[:, None]).sum(axis=1))
    P = np.sum(W * W) / 2 + C @ (lse - F[rows, p.y])
    if p.bias == "regularized":
        P += (b @ b) / LONG(p.bias_scale) ** 2 / 2
    G = -beta
    G[rows, p.y] += C
    V = G.T @ XL
    ratio = np.where(beta > 0, C[:, None] / np.where(beta > 0, beta, 1), 1)
    D = -np.sum(V * V) / 2 + np.sum(beta * np.log(ratio))
    if p.bias == "regularized":
        s = G.sum(axis=0)
        D -= LONG(p.bias_scale) ** 2 * (s @ s) / 2
    return P - D


def _check(cert, exact_gap, *, differ=True):
    """The allowance bounds the float64 gap's error (and is not vacuous: below 1e-6 of |P|)."""
    assert cert.certified
    diff = abs(float(LONG(cert.gap) - exact_gap))
    if differ:
        assert diff > 0.0
    assert diff <= cert.rounding
    assert cert.rounding <= 1e-6 * max(1.0, abs(cert.primal))
    return diff


# ---- data ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def doubled():
    """30 points in 2-D, each twice, and a noisy smooth target."""
    rng = np.random.default_rng(3)
    X0 = rng.normal(size=(30, 2))
    X = np.ascontiguousarray(np.vstack([X0, X0]))
    return X, np.sin(X[:, 0]) + 0.3 * rng.normal(size=60), np.where(X[:, 1] > 0.2, 1.0, -1.0)


@pytest.fixture(scope="module")
def iris():
    X, t = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), t


def _with_targets(iris):
    X, t = iris
    keep = t > 0
    return (
        np.ascontiguousarray(X[keep]),
        np.where(t[keep] == 1, 1.0, -1.0),
        np.ascontiguousarray(X[:, :3]),
        X[:, 3].copy(),
    )


# ---- near the floor ------------------------------------------------------------------------------
@needs_long_double
@pytest.mark.parametrize("C", [1e4, 1e6])
def test_kernel_svr_allowance_covers_the_exact_gap_at_large_C(doubled, C):
    X, y, _ = doubled
    p = SVRDual(X, y, C=C, epsilon=0.05, gamma=1.0)
    cert = p.certificate(**_solve(p).variables)
    _check(cert, _svr_gap(p, cert))


@needs_long_double
@pytest.mark.parametrize("weight", [1e4, 1e6])
def test_nu_svc_allowance_covers_the_exact_gap_at_large_weights(doubled, weight):
    X, _, labels = doubled
    p = NuSVCDual(X, labels, nu=0.3, gamma=1.0, sample_weight=np.full(60, weight))
    cert = p.certificate(**_solve(p).variables)
    _check(cert, _nu_svc_gap(p, cert))


@needs_long_double
@pytest.mark.parametrize("C", [1e4, 1e6])
def test_nu_svr_allowance_covers_the_exact_gap_at_large_C(doubled, C):
    X, y, _ = doubled
    p = NuSVRDual(X, y, C=C, nu=0.3, gamma=1.0)
    cert = p.certificate(**_solve(p).variables)
    _check(cert, _nu_svr_gap(p, cert))


@needs_long_double
@pytest.mark.parametrize("weight", [1e4, 1e6])
def test_one_class_allowance_covers_the_exact_gap_at_large_weights(doubled, weight):
    X, _, _ = doubled
    p = OneClassDual(X, nu=0.2, gamma=1.0, sample_weight=np.full(60, weight))
    cert = p.certificate(**_solve(p).variables)
    _check(cert, _one_class_gap(p, cert))


_KERNEL_SVRS = [
    (lambda X, y, C: SVRDual(X, y, C=C, epsilon=0.05, gamma=1.0), _svr_gap),
    (lambda X, y, C: NuSVRDual(X, y, C=C, nu=0.3, gamma=1.0), _nu_svr_gap),
]


@needs_long_double
@pytest.mark.parametrize(("problem", "exact"), _KERNEL_SVRS, ids=["svr", "nu_svr"])
def test_at_the_floor_the_scores_that_weigh_are_recomputed_in_long_double(
    doubled, monkeypatch, problem, exact
):
    """At C = 1e6 the per-row bound exceeds 1e-9 of |P|: the scores that weigh are recomputed
    in long double, and the allowance that results still bounds the gap's error."""
    X, y, _ = doubled
    p = problem(X, y, 1e6)
    calls = []
    accurate = rs.accurate_rbf_sums
    monkeypatch.setattr(rs, "accurate_rbf_sums", lambda *a: calls.append(1) or accurate(*a))
    cert = p.certificate(**_solve(p).variables)
    assert calls
    _check(cert, exact(p, cert))


@needs_long_double
@pytest.mark.parametrize(("problem", "exact"), _KERNEL_SVRS, ids=["svr", "nu_svr"])
def test_the_long_double_scores_correct_the_gap_and_still_bound_it(
    doubled, monkeypatch, problem, exact
):
    """The refinement forced at C = 1e4 (no screen, every allowance worth refining): P and D
    corrected from the scores recomputed in long double come nearer the exact gap, the
    allowance does not grow, and it still bounds what is left."""
    X, y, _ = doubled
    p = problem(X, y, 1e4)
    variables = _solve(p).variables
    plain = p.certificate(**variables)
    monkeypatch.setattr(rs, "settled_by_screen", lambda bound, P, D: False)
    monkeypatch.setattr(rs, "refine_above", lambda P, D: 0.0)
    calls = []
    accurate = rs.accurate_rbf_sums
    monkeypatch.setattr(rs, "accurate_rbf_sums", lambda *a: calls.append(1) or accurate(*a))
    refined = p.certificate(**variables)
    assert calls
    truth = exact(p, refined)
    assert abs(float(LONG(refined.gap) - truth)) <= abs(float(LONG(plain.gap) - truth))
    assert refined.rounding <= plain.rounding
    _check(refined, truth, differ=False)


@needs_long_double
@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
@pytest.mark.parametrize("bias", ["free", "regularized"])
def test_linear_svr_allowance_covers_the_exact_gap_at_large_C(doubled, loss, bias):
    X, y, _ = doubled
    p = SVRPrimal(X, y, C=1e6, epsilon=0.05, loss=loss, bias=bias)
    cert = p.certificate(**_solve(p).variables)
    _check(cert, _svr_linear_gap(p, cert))


@needs_long_double
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_logistic_allowance_covers_the_exact_gap_at_large_C(doubled, bias):
    X, _, labels = doubled
    p = Logistic(X, labels, C=1e6, bias=bias)
    result = _solve(p, "logistic_newton", 1e-12)
    for variables in (
        {"w": result.w, "b": result.b},
        {"w": result.w, "b": result.b, "alpha": p.dual_from_primal(result.w, result.b)},
    ):
        cert = p.certificate(**variables)
        _check(cert, _logistic_gap(p, cert))


@needs_long_double
@pytest.mark.parametrize("bias", ["free", "regularized"])
def test_hard_margin_allowance_covers_the_exact_gap(iris, bias):
    X, t = iris
    keep = t < 2
    y = np.where(t[keep] == 0, 1, -1.0)
    p = HardMarginPrimal(np.ascontiguousarray(X[keep] * 1e3), y, bias=bias)
    cert = p.certificate(**_solve(p).variables)
    _check(cert, _hard_margin_gap(p, cert))


@needs_long_double
@pytest.mark.parametrize("bias", ["none", "regularized"])
def test_crammer_singer_allowance_covers_the_exact_gap_with_a_cost_matrix(iris, bias):
    X, t = iris
    cost = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [3.0, 0.5, 0.0]])
    X2 = np.ascontiguousarray(np.vstack([X, X]))
    p = MulticlassHinge(X2, np.r_[t, t], C=1e5, cost=cost, bias=bias)
    cert = p.certificate(**_solve(p).variables)
    _check(cert, _multiclass_gap(p, cert))


@needs_long_double
@pytest.mark.parametrize("bias", ["none", "regularized"])
def test_multinomial_allowance_covers_the_exact_gap_at_large_C(iris, bias):
    X, t = iris
    X2 = np.ascontiguousarray(np.vstack([X, X]))
    p = MultinomialLogistic(X2, np.r_[t, t], C=1e4, bias=bias)
    result = _solve(p, "multinomial_newton", 1e-12)
    cert = p.certificate(W=result.W, b=result.b)
    _check(cert, _multinomial_gap(p, cert))


# ---- an ordinary problem: the screen from maxima settles it, below 1e-11 of |P| ------------------
def _ordinary(iris):
    Xb, yb, Xr, yr = _with_targets(iris)
    X, t = iris
    return [
        ("nu_svc", NuSVCDual(Xb, yb), "clarabel"),
        ("one_class", OneClassDual(Xr), "clarabel"),
        ("svr_linear", SVRPrimal(Xr, yr, C=1.0, epsilon=0.1), "clarabel"),
        ("logistic", Logistic(Xb, yb), "logistic_newton"),
        (
            "hard_margin",
            HardMarginPrimal(np.ascontiguousarray(X[t < 2]), np.where(t[t < 2], 1, -1.0)),
            "clarabel",
        ),
        ("crammer_singer", MulticlassHinge(X, t), "clarabel"),
        ("multinomial", MultinomialLogistic(X, t), "multinomial_newton"),
    ]


def test_an_ordinary_allowance_is_small_and_taken_from_maxima(iris, monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("the per-row bound ran where the screen should settle it")

    monkeypatch.setattr(rs, "kernel_row_errors", refused)
    monkeypatch.setattr(rs, "_dual_exact", refused)
    for name, problem, solver in _ordinary(iris):
        result = _solve(problem, solver)
        cert = problem.certificate(**result.variables)
        assert cert.certified, name
        assert 0.0 < cert.rounding <= 1e-11 * max(1.0, abs(cert.primal)), name


@pytest.mark.parametrize("kind", ["svr", "nu_svr"])
def test_an_ordinary_kernel_svr_allowance_is_small(iris, kind):
    """ε-SVR and ν-SVR on iris: the free support vectors sit on the tube's edges, where a score's
    error weighs ``max(|β_i|, C_i − |β_i|)``, so the per-row bound runs; it stays small."""
    _, _, Xr, yr = _with_targets(iris)
    p = SVRDual(Xr, yr, C=1.0, epsilon=0.1) if kind == "svr" else NuSVRDual(Xr, yr)
    cert = p.certificate(**_solve(p).variables)
    assert cert.certified
    assert 0.0 < cert.rounding <= 1e-11 * max(1.0, abs(cert.primal))


def test_hinge_slopes_take_every_side_within_reach():
    """A score at a kink weighs on both sides; away from it, only the side it is on."""
    g = np.array([0.0, 1.0, -1.0, 0.0])
    e = np.array([0.1, 0.1, 0.1, 0.0])
    coef = np.array([0.3, 0.3, 0.3, 0.3])
    # one hinge max(0, g) of weight 1: slopes 0.3 + {0, 1}
    s = rs.hinge_slopes(g, e, coef, [(np.ones(4), 1.0, 0.0)])
    np.testing.assert_array_equal(s, [1.3, 1.3, 0.3, 0.3])
    # max(0, −g) of weight 1: slope 0.3 − 1 on its active side
    s = rs.hinge_slopes(g, e, coef, [(np.ones(4), -1.0, 0.0)])
    np.testing.assert_allclose(s, [0.7, 0.3, 0.7, 0.3])


@needs_long_double
def test_the_linear_kernel_svr_s_scores_are_recomputed_in_long_double(monkeypatch):
    """ε-SVR with the linear kernel on diabetes at C = 1e6 (``auto``'s point was
    ``not_certified`` at tol 1e-6 by the float64 bound alone, 7e-6 of |P|): at Clarabel's point
    the scores that weigh, recomputed in long double as ``x_i·v`` (``accurate_linear_sums``),
    bring the allowance below 1e-8 of |P| and correct the gap, which it still covers."""
    from sklearn.datasets import load_diabetes

    X, t = load_diabetes(return_X_y=True)
    X = np.ascontiguousarray(StandardScaler().fit_transform(X))
    t = (t - t.mean()) / t.std()
    p = SVRDual(X, t, C=1e6, epsilon=0.1, kernel="linear")
    variables = _solve(p).variables
    cert = p.certificate(**variables)
    beta = np.asarray(cert.dual_point, dtype=LONG)
    XL = X.astype(LONG)
    g = XL @ (XL.T @ beta)
    y, C, eps = t.astype(LONG), p.upper_bounds.astype(LONG), LONG(p.epsilon)
    b = LONG(cert.primal_point["b"])
    exact = (beta @ g + C @ _hinge(np.abs(y - g - b) - eps)) - (y @ beta - eps * np.abs(beta).sum())
    scale = max(1.0, abs(cert.primal))
    assert abs(float(LONG(cert.gap) - exact)) <= cert.rounding <= 1e-8 * scale
    monkeypatch.setattr(rs, "refine_above", lambda P, D: np.inf)
    first = p.certificate(**variables)
    assert first.rounding > 1e-6 * scale
