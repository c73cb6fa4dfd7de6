"""The inner products of the shared table's blocks (solvers._jit.kernel_values.dots_block): four
features per pass, the features where x_r is 0 left out, and still the sum over the features in
ascending order, one rounding per product and per addition, as the whole kernel columns'."""

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


def _table_rows(X, groups, kernel, gamma):
    """Every row of the shared table of ``X`` computed by the jitted loops, the blocks asked for
    in several calls (one group at a time and several at once)."""
    rows = KernelRows(X, Kernel(kernel, gamma, 3, 0.0), groups)
    code = LINEAR if kernel == "linear" else RBF
    n = X.shape[0]
    everything = np.arange(n, dtype=np.int64)
    for want in ([0, 2], [1, 2, 3], [0, 1, 2, 3]):
        table = rows.columns(everything, np.array(want))
        for i in range(n):
            table_column(table, i, everything, np.empty(n), code, gamma, 0.0, 3)
    assert rows.done.all()
    return rows


@pytest.mark.parametrize("d", [1, 3, 4, 5, 7, 8, 9, 13, 20, 64])
def test_table_entries_are_the_sequential_sums_bit_for_bit(rng, d):
    """Four features per pass and the zeros of x_r left out: still every product and every
    addition rounded in ascending order of the features."""
    X = _rows(rng, 45, d)
    rows = _table_rows(X, rng.integers(0, 4, size=45), "linear", 1.0)
    for r in range(45):
        np.testing.assert_array_equal(rows.krows[r], _sequential(rows.X, r))
        # the zeros left out leave no -0.0 where the full sum has +0.0
        assert not np.signbit(rows.krows[r][rows.krows[r] == 0.0]).any()
    # the order matters on these rows: the reversed sum differs somewhere
    if d >= 8:
        assert not np.array_equal(_sequential(X[:, ::-1], 0), _sequential(X, 0))


def test_zero_features_of_the_row_are_left_out_without_changing_a_bit(rng):
    """x_r all zero but one feature, the other rows' products with x_r's zeros -0.0, and a row
    of zeros."""
    n, d = 30, 17
    X = -np.abs(rng.normal(size=(n, d)))
    X[0] = 0.0
    X[0, 11] = 2.0
    X[2, :] = 0.0
    rows = _table_rows(X, np.arange(n) % 4, "linear", 1.0)
    got = rows.krows[rows.position[0]][rows.position]
    np.testing.assert_array_equal(got, 2.0 * X[:, 11])
    np.testing.assert_array_equal(np.signbit(got), np.signbit(_sequential(X, 0)))
    np.testing.assert_array_equal(rows.krows[rows.position[2]], np.zeros(n))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_tables_blocks_are_the_whole_columns_bit_for_bit(rng, kernel):
    """The shared table's rows, computed block by block, equal whole kernel columns (one pass
    over the features at a time, every feature)."""
    n, d = 70, 20
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    rows = _table_rows(X, rng.integers(0, 4, size=n), kernel, 0.05)
    code = LINEAR if kernel == "linear" else RBF
    for r in range(n):
        whole = np.empty(n)
        kc.kernel_column_full(rows.XT, rows.sqn, r, whole, code, 0.05, 0.0, 3, 1)
        np.testing.assert_array_equal(rows.krows[r], whole)
