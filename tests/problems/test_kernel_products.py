"""The kernel products ``K(X, Z) c`` against the dense ``K @ c`` (every kernel, dense and CSR
rows, every edge of the blocks; dense rows by both paths: BLAS for small products, the fused
jitted product beyond), the one kernel-from-inner-product formula against
scikit-learn's kernels, the vectorized exponential against the C library's, and the certificate
built on them against one built from the Gram matrix."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import KernelDual, datasets, kernels
from svmbench.problems import _kernel_products as kp
from svmbench.problems.kernels import kernel_dot, kernel_matrix, squared_norms

KERNEL_PARAMS = {
    "linear": {},
    "poly": {"gamma": 0.3, "degree": 3, "coef0": 1.0},
    "rbf": {"gamma": 0.2},
    "sigmoid": {"gamma": 0.1, "coef0": -0.5},
}
RTOL = 1e-12


def _data(n, m, d, seed, density=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Z = rng.normal(size=(m, d))
    if density is not None:
        X[rng.random(X.shape) > density] = 0.0
        Z[rng.random(Z.shape) > density] = 0.0
    c = rng.normal(size=m)
    return X, Z, c


@pytest.fixture(params=["blas", "fused"])
def path(request, monkeypatch):
    """Each path of ``kernel_dot`` on dense rows, whatever the size: BLAS and NumPy's kernel
    formula, or the fused jitted product."""
    limit = 10**15 if request.param == "blas" else 0
    monkeypatch.setattr(kernels, "NUMPY_MAX_ENTRIES", limit)
    return request.param


def _close(got, K, c):
    """Relative to the scale of the terms ``Σ_j |K_ij c_j|`` (the sums cancel)."""
    want = K @ c
    scale = np.abs(K) @ np.abs(c)
    assert np.all(np.abs(got - want) <= RTOL * np.maximum(scale, 1e-300)), np.max(
        np.abs(got - want) / scale
    )


@pytest.mark.parametrize("storage", ["dense", "csr", "mixed"])
@pytest.mark.parametrize("kernel", sorted(KERNEL_PARAMS))
def test_fused_product_equals_the_dense_product(kernel, storage, path):
    # 601 rows: two blocks and a ragged one; 37 columns: the tail of the 4-wide tiles
    X, Z, c = _data(601, 37, 9, seed=1, density=0.4 if storage != "dense" else None)
    K = kernel_matrix(X, Z, kernel=kernel, **KERNEL_PARAMS[kernel])
    Xs = sparse.csr_matrix(X) if storage != "dense" else X
    Zs = sparse.csr_matrix(Z) if storage == "csr" else Z
    _close(kernel_dot(Xs, Zs, c, kernel=kernel, **KERNEL_PARAMS[kernel]), K, c)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 8])
def test_every_tail_of_the_tiles(m, path):
    X, Z, c = _data(40, m, 3, seed=m)
    for kernel in ("rbf", "poly"):
        K = kernel_matrix(X, Z, kernel=kernel, **KERNEL_PARAMS[kernel])
        _close(kernel_dot(X, Z, c, kernel=kernel, **KERNEL_PARAMS[kernel]), K, c)


def test_wide_rows(path):
    X, Z, c = _data(70, 11, 3000, seed=3)
    K = kernel_matrix(X, Z, kernel="rbf", gamma=1e-4)
    _close(kernel_dot(X, Z, c, kernel="rbf", gamma=1e-4), K, c)


@pytest.mark.parametrize("kernel", sorted(KERNEL_PARAMS))
def test_blocks_of_rows_and_support_vectors(kernel):
    # rows: two full blocks and a ragged one; support vectors: 4 · 3 + 1; features: 4 + 3
    X, Z, c = _data(2 * kp.MAX_ROWS + 3, 13, 7, seed=13)
    K = kernel_matrix(X, Z, kernel=kernel, **KERNEL_PARAMS[kernel])
    params = KERNEL_PARAMS[kernel]
    args = (
        X,
        squared_norms(X),
        Z,
        squared_norms(Z),
        c,
        kernels.KERNEL_CODES[kernel],
        float(params.get("gamma", 1.0)),
        float(params.get("coef0", 0.0)),
        int(params.get("degree", 3)),
    )
    serial = kp.kernel_dot_dense(*args)
    _close(serial, K, c)
    # the threads split the blocks of rows; each block's sums are the serial ones
    np.testing.assert_array_equal(kp.kernel_dot_dense_parallel(*args), serial)


@pytest.mark.parametrize("kernel", sorted(KERNEL_PARAMS))
def test_kernel_from_dot_is_the_kernel(kernel):
    X, Z, _ = _data(25, 30, 5, seed=14)
    X[3] = Z[7]  # a zero distance
    params = KERNEL_PARAMS[kernel]
    K = kernel_matrix(X, Z, kernel=kernel, **params)
    got = np.array(
        [
            [
                kp.kernel_from_dot(
                    float(x @ z),
                    float(x @ x),
                    float(z @ z),
                    kernels.KERNEL_CODES[kernel],
                    float(params.get("gamma", 1.0)),
                    float(params.get("coef0", 0.0)),
                    int(params.get("degree", 3)),
                )
                for z in Z
            ]
            for x in X
        ]
    )
    np.testing.assert_allclose(got, K, rtol=1e-12, atol=1e-15)
    if kernel == "rbf":
        assert got[3, 7] == 1.0


def test_kernel_columns_share_the_formula():
    """SMO's columns (dense gathered, dense whole, CSR) give the formula's values bit for bit."""
    from svmbench.solvers._jit import kernel_columns as kc

    X, _, _ = _data(40, 1, 7, seed=15)
    sqn = kc.squared_norms(X)
    idx = np.arange(40, dtype=np.int64)
    for kernel, params in KERNEL_PARAMS.items():
        g, c0, p = params.get("gamma", 1.0), params.get("coef0", 0.0), params.get("degree", 3)
        code = kernels.KERNEL_CODES[kernel]
        i = 5
        col, full = np.empty(40), np.empty(40)
        kc.kernel_column(X, sqn, i, idx, col, code, g, c0, p, 1)
        kc.kernel_column_full(np.ascontiguousarray(X.T), sqn, i, full, code, g, c0, p, 1)
        want = np.array(
            [
                kp.kernel_from_dot(
                    float(sum(X[i, f] * X[k, f] for f in range(7))), sqn[i], sqn[k], code, g, c0, p
                )
                for k in range(40)
            ]
        )
        if kernel == "rbf":
            want[i] = 1.0
        np.testing.assert_array_equal(col, want)
        np.testing.assert_array_equal(full, want)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_large_products_split_over_the_threads_with_the_serial_values(kernel, monkeypatch):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread on this machine: no parallel path to take")
    monkeypatch.setattr(kernels, "NUMPY_MAX_ENTRIES", 0)  # the fused product at any size
    X, Z, c = _data(700, 60, 9, seed=21)
    params = KERNEL_PARAMS[kernel]
    serial = kernel_dot(X, Z, c, kernel=kernel, **params)
    called = []
    parallel = kp.kernel_dot_dense_parallel
    monkeypatch.setattr(
        kp, "kernel_dot_dense_parallel", lambda *a: called.append(1) or parallel(*a)
    )
    monkeypatch.setattr(kernels, "PARALLEL_MIN_WORK", 700 * 60 * 9)  # exactly this product
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(2)
        split = kernel_dot(X, Z, c, kernel=kernel, **params)
        numba.set_num_threads(1)
        one = kernel_dot(X, Z, c, kernel=kernel, **params)
    finally:
        numba.set_num_threads(threads)
    assert called == [1]  # two threads take the parallel product, one thread the serial one
    np.testing.assert_array_equal(split, serial)
    np.testing.assert_array_equal(one, serial)
    _close(split, kernel_matrix(X, Z, kernel=kernel, **params), c)


def test_given_norms_are_used(path):
    X, Z, c = _data(50, 7, 4, seed=4)
    right = kernel_dot(X, Z, c, kernel="rbf", gamma=0.5, sqn_X=squared_norms(X))
    wrong = kernel_dot(X, Z, c, kernel="rbf", gamma=0.5, sqn_X=squared_norms(X) + 1.0)
    K = kernel_matrix(X, Z, kernel="rbf", gamma=0.5)
    _close(right, K, c)
    _close(wrong, K * math.exp(-0.5), c)  # ‖x‖² + 1 scales every entry by e^{-γ}


def test_squared_norms_dense_and_csr():
    X, _, _ = _data(30, 1, 6, seed=5, density=0.5)
    want = (X * X).sum(axis=1)
    np.testing.assert_allclose(squared_norms(X), want, rtol=1e-15)
    np.testing.assert_allclose(squared_norms(sparse.csr_matrix(X)), want, rtol=1e-15)


def test_exponential_within_two_ulps_and_zero_below_its_range():  # one ulp measured
    rng = np.random.default_rng(6)
    x = -np.concatenate([rng.random(200_000) * 40.0, rng.random(20_000) * 708.0, [0.0, 1e-300]])
    out = np.empty_like(x)
    kp.exp_nonpositive_array(x, out)
    want = np.exp(x)
    assert np.all(np.abs(out - want) <= 2.0 * np.spacing(want))
    tiny = np.array([-708.5, -745.2, -1e4, -np.inf])
    out = np.empty(4)
    kp.exp_nonpositive_array(tiny, out)
    assert np.all(out == 0.0)


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
@pytest.mark.parametrize("sparse_X", [False, True])
def test_certificate_agrees_with_the_gram_matrix(kernel, sparse_X, path):
    data = datasets.gaussian(300, 5, 1.0, seed=7, density=0.6 if sparse_X else None)
    kw = {"gamma": 0.1} if kernel != "linear" else {}
    fused = KernelDual(data.X, data.y, C=1.0, kernel=kernel, **kw)
    gram = KernelDual(data.X, data.y, C=1.0, kernel=kernel, **kw)
    gram.gram  # noqa: B018 - the cached Gram matrix makes kernel_times a plain product
    alpha = np.random.default_rng(8).random(300) * (np.random.default_rng(9).random(300) < 0.5)
    a, b = fused.certificate(alpha=alpha), gram.certificate(alpha=alpha)
    assert "gram" not in fused.__dict__
    scale = max(1.0, abs(b.primal))
    assert a.primal == pytest.approx(b.primal, abs=1e-12 * scale)
    assert a.dual == pytest.approx(b.dual, abs=1e-12 * scale)


def test_small_products_never_call_the_jitted_product(monkeypatch):
    """Up to NUMPY_MAX_ENTRIES entries (a small fit's certificate), no jitted code runs: a first
    fit never waits for its compilation."""

    def refuse(*args):
        raise AssertionError("the fused product was called")

    monkeypatch.setattr(kp, "kernel_dot_dense", refuse)
    monkeypatch.setattr(kp, "kernel_dot_dense_parallel", refuse)
    n, m = 1024, kernels.NUMPY_MAX_ENTRIES // 1024
    X, Z, c = _data(n, m, 3, seed=30)
    K = kernel_matrix(X, Z, kernel="rbf", gamma=0.5)
    _close(kernel_dot(X, Z, c, kernel="rbf", gamma=0.5), K, c)
    with pytest.raises(AssertionError, match="fused product was called"):
        kernel_dot(X, np.vstack([Z, Z[:1]]), np.append(c, 1.0), kernel="rbf", gamma=0.5)


def test_decision_function_on_new_rows():
    data = datasets.gaussian(200, 4, 1.0, seed=10)
    problem = KernelDual(data.X, data.y, C=1.0, kernel="rbf", gamma=0.3)
    alpha = np.random.default_rng(11).random(200)
    Xnew = np.random.default_rng(12).normal(size=(33, 4))
    K = kernel_matrix(Xnew, data.X, kernel="rbf", gamma=0.3)
    _close(problem.decision_function(alpha, 0.0, Xnew), K, alpha * data.y)
