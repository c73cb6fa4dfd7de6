"""The kernel columns in three modules (formulas, dense rows, CSR rows): every name still comes
from ``kernel_columns``, the jitted caches follow every one of the three files, and dense and CSR
rows give the same columns bit for bit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

import svmbench.solvers._jit as jit_package
from svmbench.solvers._jit import kernel_columns as kc
from svmbench.solvers._jit import kernel_columns_csr, kernel_values

MOVED = {
    kernel_values: ("KERNEL_CODES", "PARALLEL_MIN_WORK", "FULL_BLOCK", "kernel_entry", "from_dot",
                    "from_gathered_dots", "from_dots_block", "from_dots_parallel"),
    kernel_columns_csr: ("CSR_FIELDS", "DOT_ROWS_BLOCK_ENTRIES", "FULL_FRACTION_CSR",
                         "PARALLEL_MIN_N_CSR", "csr_rows", "kernel_column_csr",
                         "kernel_column_full_csr", "kernel_diag_csr", "kernel_dot_rows_csr",
                         "kernel_rows_csr", "squared_norms_csr", "kernel_column_csr_parallel",
                         "dots_csr", "scatter", "dot_scattered"),
}  # fmt: skip


def test_moved_names_are_the_same_objects_in_kernel_columns():
    for module, names in MOVED.items():
        for name in names:
            assert getattr(kc, name) is getattr(module, name), name


@pytest.mark.parametrize("name", ["kernel_values.py", "kernel_columns_csr.py"])
def test_sources_digest_follows_the_new_modules(tmp_path, name):
    src = Path(jit_package.__file__).parent
    copy = tmp_path / "_jit"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = jit_package._sources_digest(copy)
    assert before == jit_package._sources_digest(src)
    (copy / name).write_text((copy / name).read_text() + "\n# an edit of a callee\n")
    assert jit_package._sources_digest(copy) != before


def test_new_modules_cache_under_the_keyed_dir():
    functions = (
        kernel_columns_csr.kernel_column_csr,
        kernel_columns_csr.kernel_dot_rows_csr,
        kernel_values.from_dots_parallel,
        kc.kernel_column,
    )
    root = str(jit_package.CACHE_DIR) + os.sep
    assert root.startswith(os.path.join(str(jit_package._cache_root()), "src-"))
    assert all(f._cache._cache_path.startswith(root) for f in functions)


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid"])
def test_dense_and_csr_columns_agree_bit_for_bit(rng, kernel):
    n, d = 30, 12
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.6] = 0.0
    S = kc.csr_rows(sparse.csr_matrix(X))
    sqn = kc.squared_norms_csr(S[0], S[2])
    code, g, c0, p = kc.KERNEL_CODES[kernel], 0.3, 0.5, 3
    idx = rng.permutation(n)[:17].astype(np.int64)
    i = int(idx[4])
    dense, csr = np.empty(17), np.empty(17)
    kc.kernel_column(X, sqn, i, idx, dense, code, g, c0, p, 1)
    kc.kernel_column_csr(S[0], S[1], S[2], S[6], sqn, i, idx, csr, code, g, c0, p, 1)
    np.testing.assert_array_equal(dense, csr)
    full_dense, full_csr = np.empty(n), np.empty(n)
    kc.kernel_column_full(np.ascontiguousarray(X.T), sqn, i, full_dense, code, g, c0, p, 1)
    kc.kernel_column_full_csr(*S[:6], sqn, i, full_csr, code, g, c0, p, 1)
    np.testing.assert_array_equal(full_dense, full_csr)
    np.testing.assert_array_equal(full_dense[idx], dense)
    assert not S[6].any()  # the scratch vector is zero again


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid", "precomputed"])
def test_the_numpy_diagonal_is_the_jitted_one_bit_for_bit(rng, kernel):
    X = rng.normal(size=(25, 7))
    if kernel == "precomputed":
        X = np.ascontiguousarray(X @ X.T + np.diag(rng.random(25)))
    sqn = kc.squared_norms(X)
    code, g, c0, p = kc.KERNEL_CODES[kernel], 0.3, 0.5, 3
    want = kc.kernel_diag(X, sqn, code, g, c0, p)
    got = kc.kernel_diagonal(X, sqn, code, g, c0, p)
    assert got.dtype == np.float64 and got.flags.c_contiguous and got.shape == (25,)
    np.testing.assert_array_equal(got, want)
    if kernel == "precomputed":
        got[0] = -1.0
        assert X[0, 0] != -1.0  # a copy, not a view of the Gram matrix


def test_small_rows_compile_the_serial_columns_only():
    """``threads`` is None (serial loops alone, no parallel loop compiled) unless a column can
    reach the parallel thresholds with more than one thread."""
    work = kc.PARALLEL_MIN_WORK
    assert kc.parallel_threads(569, 30, None, 8) is None  # breast cancer: 17 070 < work
    assert kc.parallel_threads(work // 50, 50, None, 8) == 8
    assert kc.parallel_threads(work // 50, 50, None, 1) is None
    assert kc.parallel_threads(work // 50 - 1, 50, None, 8) is None
    # CSR: a gathered column's work n·(nnz/n + 1), or a whole column of PARALLEL_MIN_N_CSR rows
    assert kc.parallel_threads(1000, 10**6, 5000, 4) is None
    assert kc.parallel_threads(1000, 10**6, work, 4) == 4
    assert kc.parallel_threads(kc.PARALLEL_MIN_N_CSR, 10**6, 0, 4) == 4
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 5))
    assert kc.column_threads(X, 8) is None
    assert kc.column_threads(kc.csr_rows(sparse.csr_matrix(X)), 8) is None
    big = np.zeros((work // 10, 10))  # n·d = work, n below PARALLEL_MIN_N_CSR
    assert kc.column_threads(big, 2) == 2
    assert kc.column_threads(kc.csr_rows(sparse.csr_matrix(big)), 2) is None  # no non-zeros


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid"])
def test_whole_columns_of_several_blocks_are_the_gathered_ones_bit_for_bit(rng, kernel):
    """A whole column over more than one block (:data:`FULL_BLOCK` rows, each block's kernel
    transform from its own offset) equals the gathered column of every index, the example in
    the second block, and the kernel's formula."""
    n = kc.FULL_BLOCK + 37
    X = rng.normal(size=(n, 3))
    sqn = kc.squared_norms(X)
    code, g, c0, p = kc.KERNEL_CODES[kernel], 0.3, 0.5, 3
    i = kc.FULL_BLOCK + 5
    full, gathered = np.empty(n), np.empty(n)
    kc.kernel_column_full(np.ascontiguousarray(X.T), sqn, i, full, code, g, c0, p, 1)
    kc.kernel_column(X, sqn, i, np.arange(n, dtype=np.int64), gathered, code, g, c0, p, 1)
    np.testing.assert_array_equal(full, gathered)
    if kernel == "rbf":
        assert full[i] == 1.0
    want = {"linear": X @ X[i], "poly": (g * (X @ X[i]) + c0) ** p,
            "sigmoid": np.tanh(g * (X @ X[i]) + c0),
            "rbf": np.exp(-g * np.maximum(((X - X[i]) ** 2).sum(axis=1), 0.0))}[kernel]  # fmt: skip
    np.testing.assert_allclose(full, want, rtol=1e-12, atol=1e-14)
