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

from svmbench.problems import MulticlassHinge, datasets
from svmbench.solvers import Status, registry
from svmbench.solvers._jit.common import shuffle_active as shuffle_prefix
from svmbench.solvers._jit.multiclass import (
    cs_dcd_epoch,
    cs_dcd_scratch,
    cs_sgd_epoch,
    project_scaled_simplex,
)
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning

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
    t = cs_sgd_epoch(X, y, weight, cost, s, True, lam, order, 0, U, Ub, V, Vb, H)
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


def test_shuffle_prefix_is_a_seeded_uniform_permutation():
    index = np.arange(10, dtype=np.int64)
    state = np.array([12345], dtype=np.uint64)
    counts = np.zeros((5, 5))
    for _ in range(5000):
        index[:5] = np.arange(5)
        shuffle_prefix(index, 5, state)
        counts[np.arange(5), index[:5]] += 1
        assert sorted(index[:5]) == list(range(5)) and list(index[5:]) == list(range(5, 10))
    np.testing.assert_allclose(counts / 5000, 0.2, atol=0.03)  # each position: each value 1/5
    again, other = np.arange(10, dtype=np.int64), np.arange(10, dtype=np.int64)
    shuffle_prefix(again, 10, np.array([7], dtype=np.uint64))
    shuffle_prefix(other, 10, np.array([7], dtype=np.uint64))
    assert list(again) == list(other)


def _dcd_epoch_state(rng, n, d, k, *, zeros=0.4):
    """A small Crammer–Singer instance (some x_ij = 0, graded cost, weights, bias s = 1.5) and
    the solver's starting point β_i = C_i e_{y_i}, W̃ = 0."""
    X = rng.normal(size=(n, d)) * (rng.uniform(size=(n, d)) > zeros)
    y = rng.integers(0, k, size=n).astype(np.int64)
    C = rng.uniform(0.5, 2.0, size=n)
    s = 1.5
    A = np.einsum("ij,ij->i", X, X) + s * s
    beta = np.zeros((n, k))
    beta[np.arange(n), y] = C
    return X, y, C, _cost(k), A, s, beta


def _run_epoch(dense, X, y, C, cost, A, s, beta, Wt, wb, index, active_size, active_i, cls, shr):
    """One ``cs_dcd_epoch`` (the one body) on X's dense rows or on its CSR tuple."""
    rows = as_rows(X) if dense else as_rows(sparse.csr_matrix(X), np.int64)
    return cs_dcd_epoch(
        rows, y, C, np.ascontiguousarray(cost.T), A, s, True, beta, Wt, wb, index, active_size,
        active_i, cls, shr, *cs_dcd_scratch(len(y), cost.shape[0]),
    )  # fmt: skip


@pytest.mark.parametrize("dense", [True, False])
def test_dcd_epoch_matches_numpy(rng, dense):
    """Without shrinking, an epoch of the jitted kernel (W̃ stored as Wt (d, k) and wb) is the
    plain block update ``β_i ← Proj_{C_i·simplex}(β_i + g_i / A_i)``, ``W̃ −= δ x̃_iᵀ`` in NumPy."""
    n, d, k = 25, 6, 4
    X, y, C, cost, A, s, beta = _dcd_epoch_state(rng, n, d, k)
    cost = cost * (1.0 + np.triu(np.ones((k, k)), 1))  # Δ(r, y) ≠ Δ(y, r): the epoch's costT
    Wt, wb = np.zeros((d, k)), np.zeros(k)
    Xt = np.hstack([X, np.full((n, 1), s)])
    b_ref, W_ref = beta.copy(), np.zeros((k, d + 1))
    active_i = np.full(n, k, dtype=np.int64)
    cls = np.tile(np.arange(k, dtype=np.int64), (n, 1))
    out, buf = np.empty(k), np.empty(k)
    for _ in range(4):
        order = rng.permutation(n).astype(np.int64)
        index = order.copy()
        active, stopping = _run_epoch(
            dense, X, y, C, cost, A, s, beta, Wt, wb, index, n, active_i, cls, False
        )
        assert active == n and sorted(index) == list(range(n))
        viol = 0.0
        for i in order:
            g = cost[:, y[i]] + W_ref @ Xt[i]
            viol = max(viol, g.max() - g[b_ref[i] > 0].min())
            project_scaled_simplex(b_ref[i] + g / A[i], k, C[i], out, buf)
            W_ref -= np.outer(out - b_ref[i], Xt[i])
            b_ref[i] = out
        np.testing.assert_allclose(beta, b_ref, atol=1e-12)
        np.testing.assert_allclose(np.hstack([Wt.T, wb[:, None]]), W_ref, atol=1e-12)
        assert stopping == pytest.approx(viol, abs=1e-12)


def test_dcd_epoch_dense_and_csr_agree_with_shrinking(rng):
    """With shrinking (active classes gathered one by one, shrunk examples moved past the active
    end), the one epoch body compiled for dense rows and for CSR rows visits the same examples and
    produces the same iterates."""
    n, d, k = 40, 5, 6
    X, y, C, cost, A, s, beta0 = _dcd_epoch_state(rng, n, d, k)
    runs = []
    for dense in (True, False):
        beta, Wt, wb = beta0.copy(), np.zeros((d, k)), np.zeros(k)
        index = np.arange(n, dtype=np.int64)
        active_i = np.full(n, k, dtype=np.int64)
        cls = np.tile(np.arange(k, dtype=np.int64), (n, 1))
        active, sizes = n, []
        for epoch in range(8):
            perm = np.random.default_rng(epoch).permutation(active)
            index[:active] = index[:active][perm]
            active, _ = _run_epoch(
                dense, X, y, C, cost, A, s, beta, Wt, wb, index, active, active_i, cls, True
            )
            sizes.append(int(active))
        assert sorted(index) == list(range(n))
        assert np.all(active_i[index[:active]] > 1)
        runs.append((beta, Wt, wb, sizes))
    assert runs[0][3] == runs[1][3] and runs[0][3][-1] < n  # something was shrunk
    for a, b in zip(runs[0][:3], runs[1][:3], strict=True):
        np.testing.assert_array_equal(a, b)  # the same bits (rows.py: one summation order)


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


@pytest.mark.parametrize("sparse_input", [False, True])
def test_cs_dcd_shrinking_on_and_off_reach_the_same_optimum(sparse_input):
    """Shrinking (of classes per example and of examples) changes the path, not the optimum."""
    ds = SETS["digits"]
    X = sparse.csr_matrix(ds.X) if sparse_input else ds.X
    problem = MulticlassHinge(X, ds.y, C=1.0, bias="regularized", cost=_cost(10))
    res = {
        shrinking: registry.get("cs_dcd", tol=1e-8, shrinking=shrinking, trace=False).solve(problem)
        for shrinking in (True, False)
    }
    assert all(r.status is Status.OPTIMAL and r.rel_gap <= 1e-8 for r in res.values())
    assert rel(res[True].primal, res[False].primal) <= 1e-8
    assert rel(res[True].dual, res[False].dual) <= 1e-8
    assert res[True].info["reactivations"] > 0


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
    # the record's own certificate is the binary problems' (optimal ⇔ certified at tol); the
    # stacked W's on the Crammer–Singer problem is valid, and not its optimum
    assert res.certified and res.rel_gap == max(res.info["binary_rel_gaps"]) <= 1e-6
    cs = res.info["crammer_singer"]
    assert cs["certified"] and cs["rel_gap"] > res.rel_gap
    assert res.W.shape == (problem.n_classes, problem.n_features)
    sk = LinearSVC(C=1.0, loss="hinge", tol=1e-8, max_iter=200_000).fit(ds.X, ds.y)
    ours = np.mean(res.model.predict(ds.X_test) == ds.y_test)
    assert abs(ours - sk.score(ds.X_test, ds.y_test)) <= ACC_TOL


def test_ovr_without_the_stacked_gap_solves_the_same_binary_problems(monkeypatch):
    from sklearn.datasets import load_wine

    from svmbench import SVMClassifier

    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    problem = MulticlassHinge(X, y, C=1.0, bias="regularized")
    options = dict(binary_solver="auto", loss="squared_hinge")
    full = registry.get("ovr", **options).solve(problem)
    lean = registry.get("ovr", stacked_gap=False, **options).solve(problem)
    assert "crammer_singer" in full.info and "crammer_singer" not in lean.info
    assert lean.status is full.status is Status.OPTIMAL
    np.testing.assert_array_equal(lean.W, full.W)
    assert lean.info["binary_rel_gaps"] == full.info["binary_rel_gaps"]
    # the estimator asks no Crammer–Singer certificate of its one-vs-rest fit
    asked = []
    certificate = MulticlassHinge.certificate
    monkeypatch.setattr(
        MulticlassHinge, "certificate", lambda p, **k: asked.append(k) or certificate(p, **k)
    )
    model = SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized").fit(X, y)
    assert asked == [] and model.fit_status_ == 0
    np.testing.assert_allclose(model.coef_, full.W, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_ovo_kernel_matches_svc(name):
    from sklearn.svm import SVC

    ds = SPLITS[name]
    problem = MulticlassHinge(ds.X, ds.y, C=1.0)
    res = registry.get("ovo", kernel="rbf", bias="free").solve(problem)
    k = problem.n_classes
    assert res.status is Status.OPTIMAL and res.iterations == k * (k - 1) // 2
    assert "crammer_singer" not in res.info  # no stacked W: no Crammer–Singer certificate
    assert all(res.info["binary_certified"]) and max(res.info["binary_rel_gaps"]) <= 1e-6
    # optimal ⇔ certified and rel_gap ≤ tol, on the record's own fields
    assert res.certified and res.rel_gap == max(res.info["binary_rel_gaps"]) <= 1e-6
    assert np.isfinite(res.primal) and res.gap >= 0  # the binary objectives, summed
    sk = SVC(C=1.0, kernel="rbf", gamma="scale", tol=1e-8).fit(ds.X, ds.y)
    ours = np.mean(res.model.predict(ds.X_test) == ds.y_test)
    assert abs(ours - sk.score(ds.X_test, ds.y_test)) <= ACC_TOL


def test_reductions_resolve_gamma_once_on_all_classes():
    """``gamma="scale"`` is SVC's, from the whole X (and its weights), for every binary problem,
    not from each pair's rows."""
    from sklearn.svm import SVC

    ds = SPLITS["iris"]
    problem = MulticlassHinge(ds.X, ds.y, C=1.0)
    svc = SVC(gamma="scale").fit(ds.X, ds.y)._gamma
    for name in ("ovo", "ovr"):
        res = registry.get(name, kernel="rbf", bias="free", binary_solver="smo").solve(problem)
        assert {m.gamma for m in res.model.models} == {svc}
    w = np.where(ds.y == 0, 2.0, 1.0)
    weighted = MulticlassHinge(ds.X, ds.y, C=1.0, sample_weight=w)
    res = registry.get("ovo", kernel="rbf", bias="free", binary_solver="smo").solve(weighted)
    twice = np.r_[ds.X, ds.X[ds.y == 0]]
    (gamma,) = {m.gamma for m in res.model.models}
    repeated = SVC(gamma="scale").fit(twice, np.r_[ds.y, ds.y[ds.y == 0]])._gamma
    assert gamma == pytest.approx(repeated, rel=1e-12) and gamma != pytest.approx(svc, rel=1e-3)


def test_ovr_kernel_and_ovo_linear_beat_chance():
    ds = SPLITS["wine"]
    problem = MulticlassHinge(ds.X, ds.y, C=1.0)
    for res in (
        registry.get("ovr", kernel="rbf", binary_solver="osqp").solve(problem),
        registry.get("ovo", view="dual").solve(problem),
    ):
        assert res.status is Status.OPTIMAL
        assert np.mean(res.model.predict(ds.X_test) == ds.y_test) >= 0.9


def test_reduction_options_are_checked():
    problem = _problem("iris", "none", "graded")
    with pytest.raises(TypeError, match="cost matrix"):
        registry.get("ovr").solve(problem)
    with pytest.raises(ValueError, match="unknown solver"):
        registry.get("ovr", binary_solver="nope")
    with pytest.raises(ValueError, match="kernel"):
        registry.get("ovo", kernel="cubic")


def test_warm_up_for_compiles_the_epoch_of_the_problems_rows_only(tmp_path):
    """cs_dcd and cs_sgd compile (or load) one epoch signature for the rows the problem runs on
    (cs_dcd: CSR for mostly-zero dense rows too); ``warm_up`` compiles both."""
    import json

    from tests.fresh_process import run_python

    code = (
        "import json, numpy as np\n"
        "from svmbench.problems import MulticlassHinge\n"
        "from svmbench.solvers import registry\n"
        "from svmbench.solvers._jit import multiclass as jit\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(30, 4)); y = np.arange(30) % 3\n"
        "sparse_X = X * (rng.random(X.shape) < 0.3)\n"
        "seen = []\n"
        "for name, epoch in (('cs_dcd', jit.cs_dcd_epoch), ('cs_sgd', jit.cs_sgd_epoch)):\n"
        "    solver = registry.get(name)\n"
        "    solver.warm_up_for(MulticlassHinge(X, y, C=1.0))\n"
        "    one = [str(s[0]) for s in epoch.signatures]\n"
        "    solver.warm_up()\n"
        "    seen.append([one, len(epoch.signatures)])\n"
        "print(json.dumps(seen))\n"
    )
    done = run_python(code, tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    (dcd_one, dcd_all), (sgd_one, sgd_all) = json.loads(done.stdout)
    assert len(dcd_one) == 1 and "array(float64, 2d" in dcd_one[0] and dcd_all == 2
    assert len(sgd_one) == 1 and "array(float64, 2d" in sgd_one[0] and sgd_all == 2


def test_cs_dcd_runs_mostly_zero_dense_rows_as_csr():
    from svmbench.solvers import multiclass as module

    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 5))
    assert not module._runs_on_csr(X)
    X[rng.random(X.shape) < 0.5] = 0.0
    assert module._runs_on_csr(X) and module._runs_on_csr(
        sparse.csr_matrix(rng.normal(size=(4, 3)))
    )
