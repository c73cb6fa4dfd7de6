"""Crammer–Singer by dual CD and SGD against the references; one-vs-rest and one-vs-one against
scikit-learn's LinearSVC / SVC on held-out splits.

Every optimum is judged by ``MulticlassHinge.certificate`` and compared with
``reference_solution`` (Clarabel); digits is subsampled to n = 300 where a reference is solved.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import sparse

from problems import MulticlassHinge, datasets
from solvers import Status, registry
from solvers._jit.multiclass import cs_sgd_epoch, project_scaled_simplex
from solvers._reference import reference_solution
from solvers.base import ConvergenceWarning
from solvers.multiclass import predict

RTOL_REF = 1e-6  # |P − P*| / max(1, |P*|) for cs_dcd against Clarabel
SGD_EPOCHS = 50
SGD_RTOL = 5e-2  # (P(W̄) − P*) / P* of cs_sgd's uniform average after SGD_EPOCHS on iris
ACC_TOL = 0.01  # one percentage point of held-out accuracy

SETS = {
    "iris": datasets.load("iris"),
    "wine": datasets.load("wine"),
    "digits": datasets.load("digits:n=300,seed=0"),
}


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _cost(k: int) -> np.ndarray:
    """A non-uniform cost: Δ(r, y) = 1 + |r − y| / k off the diagonal ("near" classes cheaper)."""
    r = np.arange(k)
    cost = 1.0 + np.abs(r[:, None] - r[None, :]) / k
    np.fill_diagonal(cost, 0.0)
    return cost


# ---- the jitted pieces against plain NumPy ---------------------------------------------------
def test_projection_matches_bisection(rng):
    buf, out = np.empty(7), np.empty(7)
    for _ in range(50):
        v = rng.normal(size=7) * 3
        radius = rng.uniform(0.1, 5.0)
        project_scaled_simplex(v, 7, radius, out, buf)
        lo, hi = v.min() - radius, v.max()  # τ with Σ max(v − τ, 0) = radius, by bisection
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.maximum(v - mid, 0).sum() > radius else (lo, mid)
        np.testing.assert_allclose(out, np.maximum(v - 0.5 * (lo + hi), 0.0), atol=1e-12)
        assert abs(out.sum() - radius) <= 1e-12 * max(1.0, radius)


def test_sgd_epoch_matches_the_lecture_iteration(rng):
    """The jitted U/V bookkeeping equals ``w ← (1 − 1/t) w − (1/(2λt)) u_t`` and the average."""
    n, d, k, lam, s = 12, 4, 3, 0.05, 1.0
    X = rng.normal(size=(n, d))
    y = rng.integers(0, k, size=n).astype(np.int64)
    weight = rng.uniform(0.5, 2.0, size=n)
    cost = _cost(k)
    order = rng.permutation(n).astype(np.int64)
    U, V = np.zeros((d, k)), np.zeros((d, k))
    Ub, Vb, H = np.zeros(k), np.zeros(k), np.zeros(1)
    Xs = sparse.csr_matrix(X)
    t = cs_sgd_epoch(
        Xs.indptr.astype(np.int64), Xs.indices.astype(np.int64), Xs.data, X, True, y, weight,
        cost, s, True, lam, order, 0, U, Ub, V, Vb, H,
    )  # fmt: skip
    assert t == n
    Xt = np.hstack([X, np.full((n, 1), s)])
    w = np.zeros((k, d + 1))
    total = w.copy()
    for step, i in enumerate(order, start=1):
        z = cost[:, y[i]] + w @ Xt[i] - w[y[i]] @ Xt[i]
        yhat = int(np.argmax(z)) if z.max() > 0 else y[i]
        u = np.zeros_like(w)
        u[yhat] += weight[i] * Xt[i]
        u[y[i]] -= weight[i] * Xt[i]
        w = (1 - 1 / step) * w - u / (2 * lam * step)
        total += w
    np.testing.assert_allclose(-np.vstack([U, Ub]).T / (2 * lam * n), w, atol=1e-10)
    np.testing.assert_allclose(
        -(H[0] * np.vstack([U, Ub]) - np.vstack([V, Vb])).T / (2 * lam), total, atol=1e-9
    )


# ---- cs_dcd against the reference ------------------------------------------------------------
CASES = [
    (name, bias, cost)
    for name in sorted(SETS)
    for bias in ("none", "regularized")
    for cost in ("zero_one", "graded")
]


def _problem(name, bias, cost, **kw):
    ds = SETS[name]
    k = int(ds.y.max()) + 1
    return MulticlassHinge(
        ds.X, ds.y, C=1.0, bias=bias, cost=None if cost == "zero_one" else _cost(k), **kw
    )


@pytest.mark.parametrize(("name", "bias", "cost"), CASES)
def test_cs_dcd_matches_reference(name, bias, cost):
    problem = _problem(name, bias, cost)
    ref = reference_solution(problem)
    res = registry.get("cs_dcd", tol=1e-7, check_every=10, trace=False).solve(problem)
    assert res.status is Status.OPTIMAL
    assert res.certified and res.rel_gap <= 1e-7
    assert rel(res.primal, ref.primal) <= RTOL_REF, (res.primal, ref.primal)
    # the reported numbers are the problem's, recomputed here from the variables
    cert = problem.certificate(W=res.W, b=res.b, beta=res.beta)
    assert cert.primal == pytest.approx(res.primal, rel=1e-12)
    assert cert.residuals["dual_infeasibility"] <= 1e-10
    if bias == "none":
        assert np.all(res.b == 0.0)


def test_cs_dcd_sample_weights_and_sparse_input():
    ds = SETS["wine"]
    sw = np.random.default_rng(0).uniform(0.0, 3.0, size=ds.y.size)
    dense = MulticlassHinge(ds.X, ds.y, C=0.5, bias="regularized", bias_scale=2.0, sample_weight=sw)
    csr = MulticlassHinge(
        sparse.csr_matrix(ds.X), ds.y, C=0.5, bias="regularized", bias_scale=2.0, sample_weight=sw
    )
    ref = reference_solution(dense)
    for problem in (dense, csr):
        res = registry.get("cs_dcd", tol=1e-8, trace=False).solve(problem)
        assert res.status is Status.OPTIMAL
        assert rel(res.primal, ref.primal) <= RTOL_REF


@pytest.mark.parametrize("shrinking", [True, False])
def test_cs_dcd_native_rule_and_shrinking(shrinking):
    problem = _problem("iris", "regularized", "graded")
    ref = reference_solution(problem)
    res = registry.get(
        "cs_dcd", stop_rule="native", tol=1e-4, shrinking=shrinking, trace=True
    ).solve(problem)
    assert res.status is Status.OPTIMAL and res.info["native_stopping"] < 1e-4
    assert res.certified and res.gap >= 0
    assert rel(res.primal, ref.primal) <= 1e-3
    duals = [c.dual for c in res.trace]  # exact block maximization: D never decreases
    assert all(b >= a - 1e-9 * max(1.0, abs(a)) for a, b in itertools.pairwise(duals))


def test_cs_dcd_warm_start_and_max_iter():
    problem = _problem("wine", "none", "zero_one")
    with pytest.warns(ConvergenceWarning):
        first = registry.get("cs_dcd", max_iter=3, trace=False).solve(problem)
    assert first.status is Status.MAX_ITER and first.iterations == 3
    res = registry.get("cs_dcd", tol=1e-8, trace=False).solve(problem, warm_start=first)
    cold = registry.get("cs_dcd", tol=1e-8, trace=False).solve(problem)
    assert res.status is Status.OPTIMAL and rel(res.primal, cold.primal) <= 1e-7


# ---- cs_sgd ------------------------------------------------------------------------------------
def test_cs_sgd_decreases_and_gets_close():
    problem = _problem("iris", "none", "zero_one")
    ref = reference_solution(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = registry.get("cs_sgd", max_iter=SGD_EPOCHS, seed=1).solve(problem)
        again = registry.get("cs_sgd", max_iter=SGD_EPOCHS, seed=1).solve(problem)
        suffix = registry.get("cs_sgd", max_iter=SGD_EPOCHS, averaging="suffix").solve(problem)
    assert res.iterations == SGD_EPOCHS and res.certified
    assert res.primal == again.primal  # seeded
    primals = [c.primal for c in res.trace]
    assert primals[-1] < 0.5 * primals[0]
    assert (res.primal - ref.primal) / ref.primal <= SGD_RTOL
    assert (suffix.primal - ref.primal) / ref.primal <= SGD_RTOL
    assert res.primal >= ref.primal * (1 - 1e-9)  # nothing beats the optimum


def test_cs_sgd_gap_rule_stops_early():
    problem = _problem("iris", "regularized", "zero_one")
    res = registry.get("cs_sgd", stop_rule="gap", tol=0.5, max_iter=200).solve(problem)
    assert res.status is Status.OPTIMAL and res.rel_gap <= 0.5 and res.iterations < 200


# ---- reductions ------------------------------------------------------------------------------
SPLITS = {
    "iris": datasets.load("iris:split=0.3,seed=0"),
    "wine": datasets.load("wine:split=0.3,seed=0"),
    "digits": datasets.load("digits:n=900,split=0.3,seed=0"),
}


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_ovr_matches_linear_svc(name):
    from sklearn.svm import LinearSVC

    ds = SPLITS[name]
    problem = MulticlassHinge(ds.X, ds.y, C=1.0, bias="regularized")
    res = registry.get("ovr", binary_solver="clarabel").solve(problem)
    assert res.status is Status.OPTIMAL and res.iterations == problem.n_classes
    assert max(res.info["binary_rel_gaps"]) <= 1e-6
    # the stacked W is certified on the Crammer–Singer problem: valid, and not its optimum
    assert res.certified and res.W.shape == (problem.n_classes, problem.n_features)
    sk = LinearSVC(C=1.0, loss="hinge", tol=1e-8, max_iter=200_000).fit(ds.X, ds.y)
    ours = np.mean(predict(res, ds.X_test) == ds.y_test)
    assert abs(ours - sk.score(ds.X_test, ds.y_test)) <= ACC_TOL


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_ovo_kernel_matches_svc(name):
    from sklearn.svm import SVC

    ds = SPLITS[name]
    problem = MulticlassHinge(ds.X, ds.y, C=1.0)
    res = registry.get("ovo", kernel="rbf", bias="free").solve(problem)
    k = problem.n_classes
    assert res.status is Status.OPTIMAL and res.iterations == k * (k - 1) // 2
    assert not res.certified and np.isnan(res.primal)  # no Crammer–Singer certificate
    assert all(res.info["binary_certified"]) and max(res.info["binary_rel_gaps"]) <= 1e-6
    sk = SVC(C=1.0, kernel="rbf", gamma="scale", tol=1e-8).fit(ds.X, ds.y)
    ours = np.mean(predict(res, ds.X_test) == ds.y_test)
    assert abs(ours - sk.score(ds.X_test, ds.y_test)) <= ACC_TOL


def test_ovr_kernel_and_ovo_linear_beat_chance():
    ds = SPLITS["wine"]
    problem = MulticlassHinge(ds.X, ds.y, C=1.0)
    for res in (
        registry.get("ovr", kernel="rbf", binary_solver="osqp").solve(problem),
        registry.get("ovo", view="dual").solve(problem),
    ):
        assert res.status is Status.OPTIMAL
        assert np.mean(predict(res, ds.X_test) == ds.y_test) >= 0.9


def test_reduction_options_are_checked():
    problem = _problem("iris", "none", "graded")
    with pytest.raises(TypeError, match="cost matrix"):
        registry.get("ovr").solve(problem)
    with pytest.raises(ValueError, match="unknown solver"):
        registry.get("ovr", binary_solver="nope")
    with pytest.raises(ValueError, match="kernel"):
        registry.get("ovo", kernel="cubic")
