"""The certificates' rounding allowance (issue 25: nothing may weaken a certificate or a status).

Where C multiplies the margins, their float64 rounding moves the gap by up to C times it; the
certificate bounds that (``Certificate.rounding``) and ``optimal`` needs the gap plus the
allowance within tol. The bound is checked against the same gap computed in long double."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual, SoftMarginDual
from svmbench.problems.base import make_certificate
from svmbench.solvers import registry
from svmbench.solvers.records import Status
from svmbench.solvers.status_rules import settled_status

LONG = np.longdouble
needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is float64 here: no more precise reference",
)


@pytest.fixture(scope="module")
def overlapping_iris():
    """Versicolor against virginica, standardized: 100 rows that overlap."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = y > 0
    return np.ascontiguousarray(X[keep]), np.where(y[keep] == 1, 1.0, -1.0)


def _exact_kernel(problem, X):
    """The kernel matrix in long double, the distances from the differences."""
    XL = np.asarray(X, dtype=LONG)
    if problem.kernel == "linear":
        return XL @ XL.T
    if problem.kernel == "poly":
        return (LONG(problem.gamma) * (XL @ XL.T) + LONG(problem.coef0)) ** int(problem.degree)
    D = ((XL[:, None, :] - XL[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-LONG(problem.gamma) * D)


def _exact_kernel_gap(problem, alpha, b):
    """``P − D`` of the kernel dual at ``(α, b)`` (α feasible), in long double."""
    K = _exact_kernel(problem, problem.X)
    if problem.bias == "regularized":
        K = K + LONG(problem.bias_scale) ** 2
    y = problem.y.astype(LONG)
    c = np.asarray(alpha, dtype=LONG) * y
    g = K @ c
    if problem.bias == "regularized":
        b = LONG(0.0)  # in K̃
    m = y * (g + LONG(b))
    xi = np.maximum(LONG(0.0), 1 - m)
    C = problem.upper_bounds.astype(LONG)
    a = np.asarray(alpha, dtype=LONG)
    if problem.loss == "squared_hinge":
        loss, extra = np.sum(C * xi * xi), np.sum(a * a / (4 * C))
    else:
        loss, extra = np.sum(C * xi), LONG(0.0)
    return (c @ g) + loss - a.sum() + extra


def test_a_certified_gap_within_an_allowance_above_tol_is_not_certified(overlapping_iris):
    """RBF, γ = 1, at C = 1e10 on overlapping rows: ``active_set`` ends on its own rule at a
    certified gap under tol = 1e-8, but C times the margins' rounding, even recomputed in long
    double, is above it."""
    X, y = overlapping_iris
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=1.0, bias="none")
    result = registry.get("active_set", tol=1e-8).solve(problem)
    scale = max(1.0, abs(result.primal))
    rounding = result.residuals["rounding"]
    assert result.rel_gap <= 1e-8 < rounding / scale
    assert result.status is Status.NOT_CERTIFIED
    assert "rounding floor" in result.message and "tol=1e-08" in result.message
    # another arithmetic path to the same (α, b): a fresh problem, the same verdict
    fresh = KernelDual(X, y, C=1e10, kernel="rbf", gamma=1.0, bias="none")
    again = fresh.certificate(alpha=result.alpha, b=result.b)
    assert abs(again.gap - result.gap) <= rounding + again.rounding
    assert settled_status(fresh, Status.OPTIMAL, again, 1e-8, "")[0] is Status.NOT_CERTIFIED


@needs_long_double
def test_the_linear_kernel_s_margins_in_long_double_certify_it_at_large_C(overlapping_iris):
    """The linear kernel at C = 5e9 on the same rows: its float64 bound alone (the entries'
    and sums' ``γ_{d+k+1}‖x_i‖Σα_j‖x_j‖``, 2.5e-4 of |P|) left ``active_set``'s point
    ``not_certified`` at tol 1e-6; the margins that weigh, recomputed in long double
    (``accurate_linear_sums``), bound the gap to 1.2e-7 of |P| and the point is ``optimal``.
    The allowance still covers the gap computed in long double from the kernel entries."""
    X, y = overlapping_iris
    problem = KernelDual(X, y, C=5e9, kernel="linear", bias="none")
    result = registry.get("active_set", tol=1e-6).solve(problem)
    scale = max(1.0, abs(result.primal))
    assert result.status is Status.OPTIMAL
    assert result.rel_gap + result.residuals["rounding"] / scale <= 1e-6
    cert = problem.certificate(alpha=result.alpha, b=result.b)
    exact = float(_exact_kernel_gap(problem, cert.dual_point, cert.primal_point["b"]))
    assert abs(cert.gap - exact) <= cert.rounding <= 1e-6 * scale


def test_the_repro_two_paths_to_one_point_agree_within_the_allowance(overlapping_iris):
    """RBF, γ = 10, C = 1e10 (issue 25's one-vs-one finding, one pair): the record's
    certificate and a fresh problem's agree within their allowances, and so do their
    statuses; the margins that weigh are recomputed in long double, so the gap is the exact
    one to within the allowance, not 2e-5 off it."""
    X, y = overlapping_iris
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=10.0, bias="none")
    result = registry.get("active_set", tol=1e-6).solve(problem)
    fresh = KernelDual(X, y, C=1e10, kernel="rbf", gamma=10.0, bias="none")
    again = fresh.certificate(alpha=result.alpha, b=result.b)
    assert abs(again.gap - result.gap) <= result.residuals["rounding"] + again.rounding
    status = settled_status(fresh, Status.OPTIMAL, again, 1e-6, "")[0]
    assert status is result.status
    exact = float(_exact_kernel_gap(fresh, again.dual_point, again.primal_point["b"]))
    assert abs(again.gap - exact) <= again.rounding


def test_a_gap_test_under_the_rounding_floor_stops_at_once(monkeypatch, overlapping_iris):
    """An allowance of 1e-5·|P| (forced; above tol, below the gap where allowances are refined,
    ``REFINE_GAP_RTOL``): the gap test ends the run as ``not_certified`` at the first check whose
    gap is within it, not at ``max_iter``."""
    from svmbench.problems import soft_margin

    X, y = overlapping_iris
    problem = SoftMarginDual(X, y, C=1.0, bias="none")
    monkeypatch.setattr(
        soft_margin, "linear_rounding", lambda p, w, b, m, loss, P, D, **_: (P, D, 1e-5 * abs(P))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        result = registry.get("dcd", tol=1e-6, max_iter=100_000).solve(problem)
    assert result.status is Status.NOT_CERTIFIED
    assert result.message.startswith("the rounding floor of float64 exceeds tol=1e-06")
    assert result.iterations < 1000 and 0 <= result.gap <= 1e-5 * abs(result.primal)


def test_at_C_1_the_allowance_is_negligible_and_the_status_and_gap_unchanged(overlapping_iris):
    X, y = overlapping_iris
    problem = KernelDual(X, y, C=1.0, kernel="rbf", gamma=10.0, bias="none")
    result = registry.get("smo", tol=1e-6).solve(problem)
    assert result.status is Status.OPTIMAL
    scale = max(1.0, abs(result.primal))
    assert result.residuals["rounding"] <= 1e-10 * scale
    a = result.alpha
    K = problem.gram
    c = a * y
    g = K @ c
    plain = float(c @ g + np.maximum(0.0, 1.0 - y * g).sum() - a.sum())
    assert result.gap == pytest.approx(plain, rel=1e-9, abs=1e-12 * scale)


def _points(problem, rng):
    """A solved point and a perturbed one (some multipliers at 0 and at C_i)."""
    solved = registry.get("clarabel", tol=1e-8).solve(problem)
    a = np.asarray(solved.alpha, dtype=np.float64)
    other = a * rng.uniform(0.5, 1.5, size=a.size)
    return [(a, solved.b), (other, solved.b)]


@needs_long_double
@pytest.mark.parametrize(
    "kernel, params",
    [
        ("rbf", {"gamma": 10.0}),
        ("rbf", {"gamma": 0.3}),
        ("rbf", {"gamma": 1e-6}),  # float64's distances in the long-double entries
        ("linear", {}),
        ("poly", {"degree": 2}),
    ],
)
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("bias", ["none", "free", "regularized"])
@pytest.mark.parametrize("C", [1.0, 1e8])
def test_the_allowance_bounds_the_gap_s_rounding_against_long_double(kernel, params, loss, bias, C):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(16, 3)) + np.array([3.0, 0.0, -2.0])  # off the origin: cancellation
    y = np.where(X[:, 0] + rng.normal(size=16) > 3.0, 1.0, -1.0)
    problem = KernelDual(X, y, C=C, kernel=kernel, loss=loss, bias=bias, **params)
    for alpha, b in _points(problem, rng):
        cert = problem.certificate(alpha=alpha, b=b)
        feasible, b_used = cert.dual_point, cert.primal_point["b"]
        exact = float(_exact_kernel_gap(problem, feasible, b_used))
        assert abs(cert.gap - exact) <= cert.rounding
        assert cert.rounding <= 1e-3 * max(1.0, abs(cert.primal))


@needs_long_double
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("bias", ["none", "free", "regularized"])
@pytest.mark.parametrize("C", [1.0, 1e8])
def test_the_linear_allowance_bounds_its_rounding_against_long_double(loss, bias, C):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 5)) + 2.0
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 2.0, 1.0, -1.0)
    problem = SoftMarginDual(X, y, C=C, loss=loss, bias=bias)
    solved = registry.get("clarabel", tol=1e-8).solve(problem)
    for w, b, alpha in [
        (solved.w, solved.b, solved.alpha),
        (solved.w * 1.001, solved.b, solved.alpha * 0.999),
    ]:
        cert = problem.certificate(w=w, b=b, alpha=alpha)
        a = np.asarray(cert.dual_point, dtype=LONG)
        XL, yL = X.astype(LONG), y.astype(LONG)
        wL, bL = np.asarray(cert.primal_point["w"], dtype=LONG), LONG(cert.primal_point["b"])
        m = yL * (XL @ wL + bL)
        xi = np.maximum(LONG(0.0), 1 - m)
        CL = problem.upper_bounds.astype(LONG)
        v = XL.T @ (a * yL)
        s = LONG(problem.bias_scale)
        P = (wL @ wL) / 2 + (np.sum(CL * xi * xi) if loss == "squared_hinge" else CL @ xi)
        D = a.sum() - (v @ v) / 2
        if bias == "regularized":
            P += (bL / s) ** 2 / 2
            D -= (s * (a @ yL)) ** 2 / 2
        if loss == "squared_hinge":
            D -= np.sum(a * a / (4 * CL))
        assert abs(cert.gap - float(P - D)) <= cert.rounding


def test_meets_and_the_rounding_floor():
    cert = make_certificate(100.0, 100.0 - 5e-5, rounding=2e-4)
    assert cert.certified and cert.rel_gap == pytest.approx(5e-7)
    assert not cert.meets(1e-6) and cert.meets(1e-5)
    assert cert.under_rounding_floor(1e-6) and not cert.under_rounding_floor(1e-5)
    big_gap = make_certificate(100.0, 90.0, rounding=2e-4)
    assert not big_gap.under_rounding_floor(1e-6)  # the gap itself still says more
    assert make_certificate(1.0, 1.0).rounding == 0.0
    assert not make_certificate(1.0, 1.0, rounding=np.inf).certified


def test_the_estimator_warns_when_its_fit_ends_at_the_rounding_floor(overlapping_iris):
    """A user of the estimator hears of the floor (a ConvergenceWarning a grid search can
    filter, with what to do), and the fit keeps its model."""
    from sklearn.exceptions import ConvergenceWarning

    from svmbench import SVMClassifier

    X, y = overlapping_iris
    with pytest.warns(ConvergenceWarning, match="rounding floor.*smaller C or a looser tol"):
        clf = SVMClassifier(gamma=1.0, C=1e10, tol=1e-8, solver="active_set").fit(X, y)
    assert clf.result_.status is Status.NOT_CERTIFIED and clf.result_.certified
    assert np.mean(clf.predict(X) == y) > 0.9


@needs_long_double
def test_with_every_row_free_and_k_nearly_the_identity_the_block_bound_suffices():
    """300 rows of 64 features at γ = 1e3 (K nearly the identity, every row a free support vector)
    and C = 1e10: 5.8 M differences, above what the long-double margins take, so the allowance
    stopped at its first bound, Σα for every row's error, 4e3·|P| and C's slope on each margin
    (SMO then ended ``numerical_error``). The float64 block of the rows that weigh bounds each
    row by its own ``Σ_j K_ij α_j`` and its slopes on those narrower intervals: a point lifted
    off its margins certifies, and the allowance still holds the gap computed in long double."""
    rng = np.random.default_rng(11)
    X = rng.uniform(0.0, 1.0, size=(300, 64))
    y = np.where(np.arange(300) % 2 == 0, 1.0, -1.0)
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=1e3)
    result = registry.get("smo", tol=1e-6).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    cert = problem.certificate(alpha=result.alpha, b=result.b)
    assert np.count_nonzero(cert.dual_point) == 300
    assert cert.rounding <= 1e-6 * abs(cert.primal)
    exact = float(_exact_kernel_gap(problem, cert.dual_point, cert.primal_point["b"]))
    assert abs(cert.gap - exact) <= cert.rounding
