"""SMO on the kernel dual: agreement with Clarabel, kernels, biases, weights, warm starts,
shrinking, the cache, the native rule and the jitted kernel columns."""

from __future__ import annotations

import dataclasses
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import KernelDual, datasets
from svmbench.problems.kernels import kernel_matrix
from svmbench.solvers import clock, registry
from svmbench.solvers import smo as smo_module
from svmbench.solvers._jit import kernel_columns as kc
from svmbench.solvers._jit import smo as jit
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning, Status
from svmbench.solvers.smo import DENSE_MAX_BYTES, use_dense_rows
from tests.conftest import BINARY_SETS
from tests.solvers.kernel_grid import BIASES, KERNELS, RTOL, SETS
from tests.solvers.kernel_grid import agrees_with_reference as _agrees
from tests.solvers.kernel_grid import kernel_problem as _problem


def _solve(problem, **options):
    options.setdefault("trace", False)
    options.setdefault("tol", 1e-7)  # a margin below the 1e-6 agreement asserted
    return registry.get("smo", **options).solve(problem)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", SETS)
def test_agrees_with_the_reference(name, kernel, bias):
    problem = _problem(name, kernel, bias)
    result = _solve(problem)
    _agrees(result, problem)
    assert result.iteration_unit == "pair updates" and result.iterations > 0


def test_squared_hinge_agrees_with_the_reference():
    for bias in ("free", "none"):
        problem = _problem("gaussian_overlap", "rbf", bias, loss="squared_hinge")
        _agrees(_solve(problem), problem)


def test_free_bias_keeps_the_equality_and_the_box():
    problem = _problem("quadrant")
    r = _solve(problem)
    assert abs(r.alpha @ problem.y) <= 1e-10 * max(1.0, r.alpha.sum())
    assert r.alpha.min() >= 0.0 and np.all(r.alpha <= problem.upper_bounds)
    assert r.residuals["dual_infeasibility"] <= 1e-12


def test_precomputed_kernel_equals_the_computed_kernel():
    problem = _problem("breast_cancer", "rbf")
    pre = KernelDual(problem.gram, problem.y, C=problem.C, kernel="precomputed")
    a, b = _solve(problem), _solve(pre)
    assert b.status is Status.OPTIMAL and b.certified
    assert b.primal == pytest.approx(a.primal, rel=1e-6)
    np.testing.assert_allclose(b.alpha, a.alpha, atol=1e-4 * problem.C)


def test_dense_csr_rows_are_densified():
    X, y = BINARY_SETS["quadrant"]
    dense = KernelDual(X, y, C=1.0, kernel="rbf", gamma=0.3)
    csr = KernelDual(sparse.csr_matrix(X), y, C=1.0, kernel="rbf", gamma=0.3)
    a, b = _solve(dense), _solve(csr)
    assert b.info["rows"] == "dense"  # density 1: the dense columns are faster
    assert b.iterations == a.iterations
    np.testing.assert_allclose(b.alpha, a.alpha, rtol=0, atol=1e-12)


def test_sigmoid_and_indefinite_kernels_terminate():
    X, y = BINARY_SETS["gaussian_overlap"]
    sig = KernelDual(X, y, C=1.0, kernel="sigmoid", gamma=0.5, coef0=-1.0)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((len(y), len(y)))
    K = 0.5 * (A + A.T)  # symmetric, strongly indefinite
    ind = KernelDual(K, y, C=1.0, kernel="precomputed")
    assert not ind.convex
    for problem in (sig, ind):
        for stop_rule in ("gap", "native"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter is allowed
                r = _solve(problem, stop_rule=stop_rule, max_iter=200_000)
            assert r.status in (Status.NOT_CERTIFIED, Status.MAX_ITER)
            if not problem.convex:  # a stationary point, never called optimal
                assert r.certified is False and r.status is not Status.OPTIMAL
            assert np.all(np.isfinite(r.alpha))


def test_sample_weights_match_the_reference():
    X, y = BINARY_SETS["gaussian_overlap"]
    w = np.random.default_rng(1).uniform(0.0, 3.0, len(y))
    w[::17] = 0.0  # examples that do not count
    for bias in ("free", "none"):
        problem = KernelDual(X, y, C=1.0, kernel="rbf", bias=bias, sample_weight=w)
        r = _solve(problem)
        _agrees(r, problem)
        assert np.all(r.alpha[w == 0.0] == 0.0)


def test_warm_start_from_a_nearby_C_needs_fewer_updates():
    near = _problem("gaussian_overlap", C=0.9)
    problem = _problem("gaussian_overlap", C=1.0)
    start = _solve(near)
    cold = _solve(problem)
    warm = registry.get("smo", trace=False).solve(problem, warm_start=start)
    _agrees(warm, problem)
    assert warm.iterations < cold.iterations
    warm_array = registry.get("smo", trace=False).solve(problem, warm_start=start.alpha)
    assert warm_array.iterations == warm.iterations


@pytest.mark.parametrize("bias", ("free", "none"))
def test_shrinking_on_and_off_give_the_same_optimum(bias, monkeypatch):
    problem = _problem("digits", "rbf", bias)
    monkeypatch.setattr(smo_module, "SHRINK_MIN_N", 0)  # shrink whatever the size
    on, off = _solve(problem, shrinking=True), _solve(problem, shrinking=False)
    _agrees(on, problem)
    _agrees(off, problem)
    assert on.info["reconstructions"] >= 1  # shrinking did happen (and was undone)
    assert off.info["reconstructions"] == 0


def test_problems_up_to_shrink_min_n_are_not_shrunk():
    problem = _problem("digits", "rbf", "free")
    assert problem.n_samples <= smo_module.SHRINK_MIN_N
    on, off = _solve(problem, shrinking=True), _solve(problem, shrinking=False)
    assert on.info["reconstructions"] == 0  # no variable was shrunk, none grown back
    assert on.iterations == off.iterations
    np.testing.assert_array_equal(on.alpha, off.alpha)


def test_same_inputs_same_iterations():
    problem = _problem("quadrant", "rbf")
    a, b = _solve(problem), _solve(problem)
    assert a.iterations == b.iterations
    np.testing.assert_array_equal(a.alpha, b.alpha)


def test_tiny_cache_gives_the_same_optimum():
    problem = _problem("digits", "rbf")
    n = problem.n_samples
    tiny = _solve(problem, cache_mb=3 * 4 * n / 2**20)  # three float32 columns
    assert tiny.info["cache_columns"] == 3
    assert tiny.info["cache_misses"] > n  # columns were evicted and recomputed
    _agrees(tiny, problem)
    big = _solve(problem)
    assert big.info["cache_misses"] <= n


@pytest.mark.parametrize("kernel", ("linear", "poly", "rbf", "sigmoid"))
@pytest.mark.parametrize("threads", (1, 2))
def test_kernel_columns_equal_sklearn_rows(kernel, threads):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((5000, 24))  # n·d above the parallel threshold
    X[3] = X[1]  # a duplicated row: the RBF distance must be 0
    params = {"gamma": 0.07, "coef0": 0.5, "degree": 3}
    sqn = kc.squared_norms(X)
    idx = np.arange(X.shape[0], dtype=np.int64)[::-1].copy()
    rows = np.array([0, 1, 4999], dtype=np.int64)
    code = kc.KERNEL_CODES[kernel]
    ours = kc.kernel_rows(X, sqn, rows, idx, code, 0.07, 0.5, 3, threads)
    ref = kernel_matrix(X[rows], X[idx], kernel=kernel, **params)
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
    coef = rng.standard_normal(idx.size)
    dot = kc.kernel_dot_rows(X, sqn, rows, idx, coef, code, 0.07, 0.5, 3, 0.0)
    np.testing.assert_allclose(dot, ref @ coef, rtol=1e-10, atol=1e-10)
    assert len(X) * X.shape[1] >= kc.PARALLEL_MIN_WORK


def test_native_rule_stops_and_reports_a_certified_gap():
    problem = _problem("gaussian_overlap", "rbf")
    native = _solve(problem, stop_rule="native", eps=1e-3)
    tight = _solve(problem)
    # the native rule held, but its loose eps leaves a gap above tol: the status says so
    assert native.status is Status.NOT_CERTIFIED and native.certified
    assert native.rel_gap > 1e-6 and "rel" in native.message
    assert native.info["native_converged"]
    assert native.iterations < tight.iterations
    cert = problem.certificate(alpha=native.alpha, b=native.b)
    assert native.gap == pytest.approx(cert.gap, rel=1e-9)
    assert 0.0 <= native.rel_gap < 1e-2  # loose, but a real gap


def test_max_iter_is_exact():
    problem = _problem("digits", "rbf")
    with pytest.warns(ConvergenceWarning):
        r = _solve(problem, max_iter=37, chunk=10)
    assert r.status is Status.MAX_ITER and r.iterations == 37


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("eps", -1.0),
        ("cache_mb", -5.0),
        ("chunk", 0),
        ("stop_rule", "mvp"),
        ("tol", -1e-3),
        ("storage", "csc"),
    ],
)
def test_bad_options_raise_value_error(option, value):
    with pytest.raises(ValueError, match=option):
        registry.get("smo", **{option: value})


def test_rbf_columns_are_cached_in_float32_and_still_agree():
    # float32 columns (LIBSVM's Qfloat) hold twice the columns of the budget; the 1e-6 agreement
    # holds, with shrinking on and off, and for the pair and the single-variable updates
    for bias in ("free", "none"):
        problem = _problem("digits", "rbf", bias)
        n = problem.n_samples
        for shrinking in (True, False):
            r = _solve(problem, shrinking=shrinking, cache_mb=100 * 4 * n / 2**20)
            assert r.info["cache_bytes_per_entry"] == 4 and r.info["cache_columns"] == 100
            _agrees(r, problem)
    # kernels with unbounded entries keep float64 columns
    linear = _solve(_problem("breast_cancer", "linear"))
    assert linear.info["cache_bytes_per_entry"] == 8


@pytest.mark.parametrize("kernel", ("linear", "poly", "rbf", "sigmoid", "precomputed"))
@pytest.mark.parametrize("threads", (1, 2))
def test_whole_columns_equal_gathered_columns_bitwise(kernel, threads):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5003, 24))  # n·d above the parallel threshold, n not a block multiple
    X[3] = X[1]
    code = kc.KERNEL_CODES[kernel]
    if kernel == "precomputed":
        X = kernel_matrix(X[:700], X[:700], kernel="rbf", gamma=0.07)
    sqn = kc.squared_norms(X) if kernel != "precomputed" else np.zeros(X.shape[0])
    XT = X if kernel == "precomputed" else np.ascontiguousarray(X.T)
    n = X.shape[0]
    idx = np.arange(n, dtype=np.int64)
    for i in (0, 1, 3, n - 1):
        ref, out = np.empty(n), np.empty(n)
        kc.kernel_column(X, sqn, i, idx, ref, code, 0.07, 0.5, 3, 1)
        kc.kernel_column_full(XT, sqn, i, out, code, 0.07, 0.5, 3, threads)
        np.testing.assert_array_equal(out, ref)


# ---- CSR rows -----------------------------------------------------------------------------------
def _awkward_csr(n, d, density, seed):
    """CSR rows with an empty row (0), a row with every feature (1), duplicated rows (2 = 5,
    7 = 1), and row 5 stored out of order with one entry split in two halves (scipy accepts
    such non-canonical input; the halves sum back exactly)."""
    rng = np.random.default_rng(seed)
    A = sparse.random(n, d, density=density, format="lil", random_state=seed)
    A[0, :] = 0.0
    A[1, :] = 1.0
    A = sparse.csr_matrix(A)
    A.data = rng.standard_normal(A.nnz)
    perm = np.arange(n)
    perm[2], perm[7] = 5, 1
    A = A[perm]
    indptr, indices, data = A.indptr.copy(), A.indices.copy(), A.data.copy()
    lo, hi = indptr[5], indptr[6]
    assert hi - lo >= 2
    seg_i = np.r_[indices[lo:hi][::-1], indices[lo]]
    seg_v = np.r_[data[lo:hi][::-1], 0.5 * data[lo]]
    seg_v[hi - lo - 1] = 0.5 * data[lo]
    indices = np.r_[indices[:lo], seg_i, indices[hi:]]
    data = np.r_[data[:lo], seg_v, data[hi:]]
    indptr[6:] += 1
    return sparse.csr_matrix((data, indices, indptr), shape=(n, d))


@pytest.mark.parametrize("kernel", ("linear", "poly", "rbf", "sigmoid"))
@pytest.mark.parametrize("threads", (1, 2))
def test_csr_columns_equal_dense_columns(kernel, threads):
    # n reaches the parallel thresholds of the CSR columns (gathered and whole)
    n, d = kc.PARALLEL_MIN_N_CSR, 64
    A = _awkward_csr(n, d, 0.1, seed=11)
    X = A.toarray()
    np.testing.assert_array_equal(X[5], X[2])
    S = kc.csr_rows(A)
    indptr, indices, data, scratch = S[0], S[1], S[2], S[6]
    assert np.all(np.diff(indices[indptr[5] : indptr[6]]) > 0)  # sorted, duplicates summed
    code, g, c0, p = kc.KERNEL_CODES[kernel], 0.07, 0.5, 3
    sqn, sqs = kc.squared_norms(X), kc.squared_norms_csr(indptr, data)
    np.testing.assert_allclose(sqs, sqn, rtol=1e-14, atol=0)
    np.testing.assert_allclose(
        kc.kernel_diag_csr(indptr, data, code, g, c0, p),
        kc.kernel_diag(X, sqn, code, g, c0, p),
        rtol=1e-12,
        atol=1e-12,
    )
    idx = np.arange(n, dtype=np.int64)[::-1].copy()
    rows = np.array([0, 1, 2, 5, 7, n - 1], dtype=np.int64)
    ref = kc.kernel_rows(X, sqn, rows, idx, code, g, c0, p, 1)
    ours = kc.kernel_rows_csr(
        indptr, indices, data, scratch, sqs, rows, idx, code, g, c0, p, threads
    )
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
    assert not scratch.any()  # the scratch vector is left as found
    if kernel == "rbf":
        assert ours[2, n - 1 - 5] == 1.0 and ours[3, n - 1 - 2] == 1.0  # duplicated rows
    for r, i in enumerate(rows):
        full = np.empty(n)
        kc.kernel_column_full_csr(*S[:6], sqs, i, full, code, g, c0, p, threads)
        np.testing.assert_array_equal(full[idx], ours[r])  # whole = gathered, bit for bit
    cols = np.arange(0, n, 37, dtype=np.int64)  # more columns than one block of dot_rows
    assert cols.size * n > kc.DOT_ROWS_BLOCK_ENTRIES
    coef = np.random.default_rng(2).standard_normal(cols.size)
    some = np.arange(0, n, 13, dtype=np.int64)
    want = kc.kernel_dot_rows(X, sqn, some, cols, coef, code, g, c0, p, 0.5)
    got = kc.kernel_dot_rows_csr(*S[:6], sqs, some, cols, coef, code, g, c0, p, 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(coef).sum())


def _sparse_problem(kernel, bias):
    ds = datasets.gaussian(200, 50, 3.0, seed=5, density=0.05)
    return KernelDual(ds.X, ds.y, C=1.0, kernel=kernel, bias=bias)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_csr_rows_reach_the_dense_and_the_reference_optimum(kernel, bias):
    problem = _sparse_problem(kernel, bias)
    assert sparse.issparse(problem.X) and problem.X.nnz < 0.06 * 200 * 50
    assert not use_dense_rows(problem.X)  # sparse: kept as CSR by default
    csr = _solve(problem)
    assert csr.info["rows"] == "csr"
    ref = reference_solution(problem, "clarabel")
    _agrees(csr, problem)
    densified = KernelDual(
        problem.X.toarray(), problem.y, C=1.0, bias=bias, **problem.kernel_params
    )
    dense = _solve(densified)
    assert dense.info["rows"] == "dense"
    scale = max(1.0, abs(ref.primal))
    assert abs(dense.primal - csr.primal) <= RTOL * scale
    if kernel != "rbf":  # the same sums in the same order: the same iterates
        assert csr.iterations == dense.iterations
        np.testing.assert_array_equal(csr.alpha, dense.alpha)


def test_csr_rows_warm_start_and_shrinking(monkeypatch):
    monkeypatch.setattr(smo_module, "SHRINK_MIN_N", 0)  # shrink whatever the size
    problem = _sparse_problem("rbf", "free")
    near = KernelDual(problem.X, problem.y, C=0.9, kernel="rbf")
    start = _solve(near)
    for shrinking in (True, False):
        r = registry.get("smo", trace=False, tol=1e-7, shrinking=shrinking).solve(
            problem, warm_start=start
        )
        _agrees(r, problem)
        assert r.info["rows"] == "csr"
        assert (r.info["reconstructions"] >= 1) == shrinking


def test_forced_storage():
    X, y = BINARY_SETS["gaussian_overlap"]
    problem = KernelDual(X, y, C=1.0, kernel="poly")
    csr = _solve(problem, storage="csr")  # a dense X converted to CSR
    dense = _solve(problem, storage="dense")
    assert (csr.info["rows"], dense.info["rows"]) == ("csr", "dense")
    np.testing.assert_array_equal(csr.alpha, dense.alpha)
    n, d = 2000, DENSE_MAX_BYTES // (2 * 8 * 2000) + 1  # two dense copies just over the budget
    big = sparse.csr_matrix(([1.0, 1.0], ([0, 1], [0, 1])), shape=(n, d))
    assert not use_dense_rows(big) and not use_dense_rows(big, "csr")
    with pytest.raises(ValueError, match="DENSE_MAX_BYTES"):
        use_dense_rows(big, "dense")
    assert use_dense_rows(sparse.csr_matrix(np.ones((4, 3))))


def test_large_sparse_problem_is_never_densified():
    # n = 2000, d = 2·10⁶, ≈ 20 non-zeros per row: the dense rows would take 32 GB (64 with Xᵀ)
    n, d, k = 2000, 2_000_000, 20
    rng = np.random.default_rng(0)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    cols = rng.integers(0, d, size=(n, k))
    vals = rng.standard_normal((n, k))
    # three features in 100 carry the class (the rows overlap: the kernel is not the identity)
    cols[:, :3] = np.where(
        y[:, None] > 0, rng.integers(0, 50, (n, 3)), rng.integers(50, 100, (n, 3))
    )
    vals[:, :3] = 1.0
    X = sparse.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * k + 1, k)), shape=(n, d))
    problem = KernelDual(X, y, C=1.0, kernel="rbf", gamma=0.05)
    assert not use_dense_rows(problem.X)  # checked first: densifying would exhaust the memory
    solver = registry.get("smo", trace=False, tol=1e-3, max_iter=2000)
    solver.warm_up()
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = solver.solve(problem)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.info["rows"] == "csr"
    assert r.status in (Status.OPTIMAL, Status.MAX_ITER) and r.iterations > 0
    assert r.certified and np.isfinite(r.gap) and 0.0 <= r.rel_gap < 0.1
    # O(nnz + n + d) arrays and the column cache, not n·d: below 1/100 of one dense copy
    assert peak < n * d * 8 / 100, peak


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_trace_estimates_match_the_certificates_they_stand_for(kernel, monkeypatch):
    # float64 columns and no shrinking: the maintained gradient is exact, so SMO's O(n) estimate
    # of a trace point equals the certificate drawn at the same iterate (trace="every"); the
    # trace's time budget lifted, so that the points drawn do not depend on the machine's speed
    monkeypatch.setattr(clock, "TRACE_BUDGET", 1e9)
    problem = _problem("gaussian_overlap", kernel)
    opts = {"tol": 1e-8, "chunk": 20, "shrinking": False}
    cheap = _solve(problem, trace=True, **opts)
    every = _solve(problem, trace="every", **opts)
    assert cheap.iterations == every.iterations and np.array_equal(cheap.alpha, every.alpha)
    certified = {p.iteration: p for p in every.trace}
    assert all(p.certified for p in every.trace)
    estimated = [p for p in cheap.trace if not p.certified]
    assert len(estimated) >= 3
    for p in estimated:
        q = certified[p.iteration]
        scale = max(1.0, abs(q.primal))
        assert p.primal == pytest.approx(q.primal, abs=1e-9 * scale)
        assert p.dual == pytest.approx(q.dual, abs=1e-9 * scale)
    last = cheap.trace[-1]
    assert last.certified and last.iteration == cheap.iterations and last.gap == cheap.gap


def test_trace_with_a_callback_is_certified():
    problem = _problem("gaussian_overlap")
    seen = []
    r = registry.get("smo", chunk=20).solve(problem, callback=seen.append)
    assert seen and all(p.certified for p in seen) and all(p.certified for p in r.trace)


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "sigmoid", "linear"])
@pytest.mark.parametrize("bias", ["free", "regularized"])
def test_a_warm_starts_gradients_match_the_dense_kernel(kernel, bias, storage):
    """G = Q̃α − 1 and Ḡ = Σ_{α_j = C_j} C_j Q̃_:j, from the fused product (dense rows) or the
    kernel rows (CSR), against Q̃ = yyᵀ ∘ (K + s²) built densely."""
    from svmbench.solvers.smo import _gradients

    data = datasets.load("gaussian:n=120,d=5,sep=1,seed=3")
    problem = KernelDual(data.X, data.y, C=1.0, kernel=kernel, gamma=0.2, coef0=0.5, bias=bias)
    rng = np.random.default_rng(0)
    alpha = np.where(rng.random(120) < 0.3, 1.0, rng.random(120) * (rng.random(120) < 0.5))
    state = registry.get("smo")._make_state(problem, None, pairs=True, n_slots=2, storage=storage)
    c = state.core
    G, Gbar = _gradients(c.X, c.sqn, c.kint, c.kflt, c.y, c.C, 0 * alpha, alpha)
    s2 = problem.bias_scale**2 if bias == "regularized" else 0.0
    K = kernel_matrix(data.X, data.X, kernel=kernel, gamma=0.2, degree=3, coef0=0.5) + s2
    Q = np.outer(data.y, data.y) * K
    np.testing.assert_allclose(G, Q @ alpha - 1.0, rtol=0, atol=1e-11 * np.abs(Q).sum(axis=1).max())
    upper = alpha >= 1.0
    np.testing.assert_allclose(Gbar, Q[:, upper].sum(axis=1), rtol=0, atol=1e-11 * np.abs(Q).sum())


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_a_warm_starts_gradient_updated_from_the_last_solve(kernel, monkeypatch):
    """Along a path over C, G is the last solve's plus Q̃(α − α₀) over the changed coordinates:
    equal to the dense Q̃α − 1, and no kernel product when α is the last optimum itself."""
    from svmbench.solvers import smo as smo_module
    from svmbench.solvers import smo_arrays

    data = datasets.load("gaussian:n=120,d=5,sep=1,seed=3")
    problem = KernelDual(data.X, data.y, C=1.0, kernel=kernel, gamma=0.2, coef0=0.5)
    state = registry.get("smo")._make_state(problem, None, pairs=True, n_slots=2)
    rng = np.random.default_rng(1)
    alpha0 = rng.random(120) * (rng.random(120) < 0.6)
    c = state.core
    args = (c.X, c.sqn, c.kint, c.kflt, c.y, c.C, 0 * alpha0)
    G0, _ = smo_module._gradients(*args, alpha0)
    alpha = alpha0.copy()
    alpha[[3, 17, 40]] = [0.0, 0.7, 1.0]  # one leaves the support, one moves, one at C
    K = kernel_matrix(data.X, data.X, kernel=kernel, gamma=0.2, degree=3, coef0=0.5)
    Q = np.outer(data.y, data.y) * K
    G, Gbar = smo_module._gradients(*args, alpha, (alpha0, G0))
    scale = np.abs(Q).sum(axis=1).max()
    np.testing.assert_allclose(G, Q @ alpha - 1.0, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(Gbar, Q[:, alpha >= 1.0].sum(axis=1), rtol=0, atol=1e-11 * scale)
    calls = []
    original = smo_arrays._kernel_times
    monkeypatch.setattr(smo_arrays, "_kernel_times", lambda *a: calls.append(a) or original(*a))
    G_same, _ = smo_module._gradients(*args, alpha, (alpha, G))
    # only Ḡ's column (α_40 = C) is computed: G itself costs no kernel work
    assert [list(c[2]) for c in calls] == [[40]] and np.array_equal(G_same, G)


def test_a_path_over_C_reuses_the_gradient_and_reaches_the_cold_optima():
    data = datasets.load("gaussian:n=300,d=5,sep=1,seed=2")
    base = KernelDual(data.X, data.y, kernel="rbf", gamma=0.2)
    engine = registry.get("smo", tol=1e-8)
    previous = None
    for C in (0.1, 1.0, 10.0):
        problem = dataclasses.replace(base, C=C)
        warm = engine.solve(problem, warm_start=previous)
        cold = registry.get("smo", tol=1e-8).solve(problem)
        ref = reference_solution(problem).primal
        for r in (warm, cold):
            assert r.status.value == "optimal" and r.certified and r.rel_gap <= 1e-8
            assert abs(r.primal - ref) <= 1e-7 * max(1.0, abs(ref))
        previous = warm


def test_columns_are_float64_when_the_whole_matrix_fits_the_cache():
    """float32 columns make the maintained gradient drift (a hidden part of the gap); they are
    used only where they buy columns: when n float64 columns exceed the budget."""
    from svmbench.solvers.smo import cache_dtype

    data = datasets.load("gaussian:n=600,d=5,sep=1,seed=2")
    problem = KernelDual(data.X, data.y, kernel="rbf", gamma=0.2)
    assert cache_dtype(problem, cache_mb=200.0) is np.float64
    assert cache_dtype(problem, cache_mb=1.0) is np.float32  # 600² × 8 bytes = 2.7 MB
    assert cache_dtype(dataclasses.replace(problem, kernel="poly"), cache_mb=1.0) is np.float64
    tight = registry.get("smo", tol=1e-8, cache_mb=1.0).solve(dataclasses.replace(problem, C=30))
    loose = registry.get("smo", tol=1e-8).solve(dataclasses.replace(problem, C=30))
    assert tight.info["cache_bytes_per_entry"] == 4 and loose.info["cache_bytes_per_entry"] == 8
    for r in (tight, loose):
        assert r.status.value == "optimal" and r.certified and r.rel_gap <= 1e-8
    assert abs(tight.primal - loose.primal) <= 2e-8 * abs(loose.primal)


@pytest.mark.parametrize("rows", ("dense", "csr"))
def test_reconstruct_rebuilds_the_gradient_of_the_shrunk_variables(rows):
    """The gradient of shrunk variables at a bound, rebuilt from Ḡ and the free variables'
    kernel columns, is Q̃α − 1 from the kernel matrix in NumPy."""
    problem = _problem("gaussian_overlap", "rbf")
    if rows == "csr":
        problem = KernelDual(
            sparse.csr_matrix(problem.X), problem.y, C=problem.C, kernel="rbf", gamma=problem.gamma
        )
    solver = registry.get("smo", tol=1e-9, storage=rows)
    alpha = solver.solve(problem).alpha
    state = solver._make_state(problem, alpha, pairs=True, n_slots=2, storage=rows)
    c = state.core
    assert c.kint[2] is None  # a small problem: the serial columns' variant
    at_bound = np.flatnonzero((alpha <= 0.0) | (alpha >= c.C))
    free = np.flatnonzero((alpha > 0.0) & (alpha < c.C))
    shrunk = at_bound[::2]
    assert shrunk.size > 10 and free.size > 3
    kept = np.setdiff1d(np.arange(problem.n_samples), shrunk)
    c.active[: kept.size] = kept
    c.is_active[:] = 1
    c.is_active[shrunk] = 0
    c.ist[jit.N_ACTIVE] = kept.size
    c.G[shrunk] = np.nan
    jit.reconstruct(
        c.X, c.sqn, c.kint, c.kflt, c.y, c.C, c.alpha, c.G, c.Gbar, c.active, c.is_active,
        c.all_idx, c.slot_col, c.col_slot, c.slot_full, c.ist, c.rowmap, c.p,
    )  # fmt: skip
    assert c.ist[jit.N_ACTIVE] == problem.n_samples and c.ist[jit.RECONSTRUCTIONS] == 1
    X = problem.X.toarray() if rows == "csr" else problem.X
    Q = np.outer(c.y, c.y) * kernel_matrix(X, X, kernel="rbf", gamma=problem.gamma)
    np.testing.assert_allclose(c.G, Q @ alpha - 1.0, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("pairs", (True, False))
def test_the_loops_leave_the_reconstruction_to_their_driver(pairs):
    """A loop stops where the gradient of shrunk variables must be rebuilt (RECONSTRUCT, the
    shrinking it began left pending); ``run_loop`` rebuilds it and finishes the run: the same
    updates and α, bit for bit, as one ``run_loop`` call from the same start, and G complete."""
    problem = _problem("digits", "rbf", "free" if pairs else "none")
    loop = jit.smo_pairs if pairs else jit.smo_single
    solver = registry.get("smo")

    def core():
        n_slots = solver._n_slots(problem.n_samples)
        return solver._make_state(problem, None, pairs=pairs, n_slots=n_slots).core

    split = core()
    done, code = loop(10**7, 1e-6, True, *split)
    assert code == jit.RECONSTRUCT and split.ist[jit.RECONSTRUCTIONS] == 0
    rest, code = jit.run_loop(loop, 10**7 - done, 1e-6, True, split)
    assert code == jit.CONVERGED and split.ist[jit.PENDING_SHRINK] == 0
    assert split.ist[jit.N_ACTIVE] == problem.n_samples and split.ist[jit.RECONSTRUCTIONS] >= 1
    whole = core()
    updates, code = jit.run_loop(loop, 10**7, 1e-6, True, whole)
    assert code == jit.CONVERGED and updates == done + rest
    np.testing.assert_array_equal(split.alpha, whole.alpha)
    np.testing.assert_array_equal(split.G, whole.G)
    Q = np.outer(split.y, split.y) * kernel_matrix(
        problem.X, problem.X, kernel="rbf", gamma=problem.gamma
    )
    np.testing.assert_allclose(split.G, Q @ split.alpha - 1.0, rtol=1e-9, atol=1e-9)


_REBUILT_AFTER_WARM_UP = """
import numpy as np
from svmbench.problems import KernelDual
from svmbench.solvers import registry
from svmbench.solvers._jit import smo_shrink
rng = np.random.default_rng(0)
X = rng.standard_normal((300, 5))
y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
from svmbench.solvers import smo
smo.SHRINK_MIN_N = {shrink_min_n}
problem = KernelDual(X, y, C=10.0, kernel="rbf", gamma=0.5, bias="{bias}")
solver = registry.get("smo")
solver.warm_up_for(problem)
print("WARM", len(smo_shrink.kernel_sums.overloads) + len(smo_shrink.kernel_sums_dense.overloads))
result = solver.solve(problem)
print("SHRUNK", result.info["reconstructions"] > 0)
print("AFTER", len(smo_shrink.kernel_sums.overloads) + len(smo_shrink.kernel_sums_dense.overloads))
"""


@pytest.mark.parametrize("bias", ("free", "none"))
@pytest.mark.parametrize("shrink_min_n", (100, 10_000))
def test_the_warm_up_compiles_the_reconstruction_where_the_loops_shrink(
    tmp_path, bias, shrink_min_n
):
    """The loops do not link the reconstruction's kernel sums, which a tiny warm-up problem may
    never run: the warm-up compiles (or loads) them itself where the problem's loops shrink
    (300 examples above ``SHRINK_MIN_N``), so that no solve compiles them, and only there (a
    small fit, which never shrinks, does not pay for them)."""
    from tests.fresh_process import run_python

    program = _REBUILT_AFTER_WARM_UP.format(bias=bias, shrink_min_n=shrink_min_n)
    done = run_python(program, tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    shrinks = shrink_min_n < 300
    assert f"WARM {int(shrinks)}" in done.stdout, done.stdout[-2000:]
    assert f"SHRUNK {shrinks}" in done.stdout, done.stdout[-2000:]
    assert f"AFTER {int(shrinks)}" in done.stdout, done.stdout[-2000:]  # the solve compiled none


_KINDS_APART = """
import numpy as np
from svmbench.problems import KernelDual
from svmbench.problems.svr import SVRDual
from svmbench.solvers import registry
from svmbench.solvers._jit import smo
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 4))
y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
def kinds(loop):
    # (rowmap's type, cache's type) of every signature of the loop compiled or loaded so far
    return sorted({(str(s[-1]).lower()[:5], str(s[17]).lower()[:5]) for s in loop.signatures})
for bias in ("free", "none"):
    registry.get("smo").solve(KernelDual(X, y, C=10.0, kernel="rbf", gamma=0.5, bias=bias))
print("CSVC", kinds(smo.smo_pairs), kinds(smo.smo_single))
for bias in ("free", "none"):
    registry.get("smo").solve(SVRDual(X, X[:, 2], C=10.0, kernel="rbf", gamma=0.5, bias=bias))
print("BOTH", kinds(smo.smo_pairs), kinds(smo.smo_single))
"""


def test_each_kind_runs_its_own_loop(tmp_path):
    """C-SVC passes no row map (None) and the general form no column cache (None): the loops
    are compiled per kind, each without the other's branches (pruned by the argument's type
    before typing; the general form's reads of a row map could not be typed on None). A new
    process's C-SVC fits load or compile no loop of the general form, whose fit then adds its
    own (pairs with a free bias, single updates without)."""
    from tests.fresh_process import run_python

    done = run_python(_KINDS_APART, tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    csvc = "[('none', 'array')]"
    both = "[('none', 'array'), ('tuple', 'none')]"
    assert f"CSVC {csvc} {csvc}" in done.stdout, done.stdout[-2000:]
    assert f"BOTH {both} {both}" in done.stdout, done.stdout[-2000:]


def test_warm_up_compiles_the_loops_that_shrink_and_those_that_never_do():
    """``warm_up()`` leaves nothing to compile for a solve: the loops of problems too small to
    shrink are compiled apart from the shrinking ones (None prunes the shrinking), so it
    compiles both; a solve after it (measured under tracemalloc in the memory tests) then
    compiles nothing."""
    solver = registry.get("smo")
    solver.warm_up()
    for storage in ("dense", "csr"):
        for dtype in (np.float32, np.float64):
            for pairs in (True, False):
                variant = (storage, dtype, pairs, False)
                assert variant in smo_module._WARM_VARIANTS, variant
                assert variant in smo_module._WARM_RECONSTRUCT, variant
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [0.5, 0.5], [1.0, 2.0]])
    small = KernelDual(X, np.array([1.0, -1.0, 1.0, -1.0, -1.0]), C=1.0, kernel="rbf")
    assert not solver.shrinks(small.n_samples)
    assert solver.warm_up_for(small) == 0.0
