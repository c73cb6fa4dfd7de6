"""The kernel columns' inner products (solvers._jit.kernel_values): eight features or eight
entries at a time, the features where x_i is 0 left out, and still the sum over the features in
ascending order, one rounding per product and per addition, on every path (gathered, whole
column, shared table)."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel
from svmbench.solvers._jit import kernel_columns as kc
from svmbench.solvers._jit.kernel_table import table_column

LINEAR, RBF = kc.KERNEL_CODES["linear"], kc.KERNEL_CODES["rbf"]


def _rows(rng, n, d):
    """Rows whose sums depend on their order: magnitudes over 16 decades, half the entries 0
    (some -0.0), and a row that cancels the first one's leading features exactly."""
    X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-8, 8, size=(n, d))
    X[rng.random((n, d)) < 0.5] = 0.0
    X[rng.random((n, d)) < 0.1] = -0.0
    X[1] = -X[0]
    X[1, d // 2 :] = rng.normal(size=d - d // 2)
    return X


def _sequential(X, i):
    """``Σ_f x_i[f] x_t[f]`` for every t, f ascending, every product and every addition
    rounded by NumPy (the reference order)."""
    s = np.zeros(X.shape[0])
    for f in range(X.shape[1]):
        s = s + X[i, f] * X[:, f]
    return s


@pytest.mark.parametrize("d", [1, 3, 4, 7, 8, 9, 12, 13, 20, 30, 64])
def test_whole_and_gathered_columns_are_the_sequential_sums_bit_for_bit(rng, d):
    n = 45  # five groups of eight entries and a tail of five
    X = _rows(rng, n, d)
    XT = np.ascontiguousarray(X.T)
    sqn = kc.squared_norms(X)
    idx = rng.permutation(n).astype(np.int64)
    for i in (0, 1, 7):
        want = _sequential(X, i)
        full, gathered = np.empty(n), np.empty(n)
        kc.kernel_column_full(XT, sqn, i, full, LINEAR, 1.0, 0.0, 1, 1)
        kc.kernel_column(X, sqn, i, idx, gathered, LINEAR, 1.0, 0.0, 1, 1)
        np.testing.assert_array_equal(full, want)
        np.testing.assert_array_equal(gathered, want[idx])
        # the zeros skipped leave no -0.0 where the full sum has +0.0
        assert not np.signbit(full[full == 0.0]).any()
    # the order matters on these rows: the reversed sum differs somewhere
    if d >= 8:
        assert not np.array_equal(_sequential(X[:, ::-1], 0), _sequential(X, 0))


def test_zero_features_of_the_column_row_are_left_out_without_changing_a_bit(rng):
    """x_i all zero but one feature, and the other rows' products with x_i's zeros -0.0."""
    n, d = 30, 17
    X = -np.abs(rng.normal(size=(n, d)))
    X[0] = 0.0
    X[0, 11] = 2.0
    X[2, :] = 0.0
    XT = np.ascontiguousarray(X.T)
    out = np.empty(n)
    kc.kernel_column_full(XT, kc.squared_norms(X), 0, out, LINEAR, 1.0, 0.0, 1, 1)
    np.testing.assert_array_equal(out, 2.0 * X[:, 11])
    np.testing.assert_array_equal(np.signbit(out), np.signbit(_sequential(X, 0)))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_tables_blocks_are_the_whole_columns_bit_for_bit(rng, kernel):
    """The shared table's rows, computed block by block (one group at a time, the non-zero
    features of the row once), equal whole kernel columns, and linear entries the sequential
    sums."""
    n, d = 70, 20
    X = (
        _rows(rng, n, d)
        if kernel == "linear"
        else rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    )
    groups = rng.integers(0, 4, size=n)
    gamma = 0.05
    rows = KernelRows(X, Kernel(kernel, gamma, 3, 0.0), groups)
    code = LINEAR if kernel == "linear" else RBF
    everything = np.arange(n, dtype=np.int64)
    for want in ([0, 2], [1, 2, 3], [0, 1, 2, 3]):  # blocks asked for in several calls
        table = rows.columns(everything, np.array(want))
        for i in range(n):
            table_column(table, i, everything, np.empty(n), code, gamma, 0.0, 3)
    assert rows.done.all()
    for r in range(n):
        whole = np.empty(n)
        kc.kernel_column_full(rows.XT, rows.sqn, r, whole, code, gamma, 0.0, 3, 1)
        np.testing.assert_array_equal(rows.krows[r], whole)
        if kernel == "linear":
            np.testing.assert_array_equal(rows.krows[r], _sequential(rows.X, r))
