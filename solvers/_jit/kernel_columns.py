"""Kernel columns ``K(x_i, x_k)`` for a list of indices k, jitted (the cost centre of SMO).

Three modules: the kernel formulas from inner products and their codes (``KERNEL_CODES``) are in
:mod:`solvers._jit.kernel_values`; CSR rows in :mod:`solvers._jit.kernel_columns_csr`; dense rows
here, with the one name the jitted callers use for either kind. Every name of the other two is
importable from here as well.

Dense rows: ``X`` is C-contiguous float64. A column is long work when ``len(idx) · d`` is large:
then :func:`kernel_column` hands it to :func:`kernel_column_parallel`, which splits it over the
Numba threads with ``prange`` (each thread writes its own entries, no reduction).

The jitted callers (:mod:`solvers._jit.smo_shrink`) take either kind of rows through :func:`column`
and :func:`column_full`, resolved when they are compiled (one specialization per kind, and per
``threads``: None compiles the serial loops alone, :func:`parallel_threads`); CSR rows travel as
the tuple of :data:`CSR_FIELDS`, whose dot products sum in the dense loops' order (the same
values bit for bit).
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload

from svmbench.problems._kernel_products import kernel_from_dot  # noqa: F401
from svmbench.solvers._jit.kernel_columns_csr import (  # noqa: F401
    CSR_FIELDS,
    DOT_ROWS_BLOCK_ENTRIES,
    FULL_FRACTION_CSR,
    PARALLEL_MIN_N_CSR,
    csr_rows,
    dot_scattered,
    dots_csr,
    kernel_column_csr,
    kernel_column_csr_parallel,
    kernel_column_full_csr,
    kernel_diag_csr,
    kernel_dot_rows_csr,
    kernel_rows_csr,
    scatter,
    squared_norms_csr,
)
from svmbench.solvers._jit.kernel_table import is_table, table_column, table_column_full
from svmbench.solvers._jit.kernel_values import (  # noqa: F401
    FULL_BLOCK,
    KERNEL_CODES,
    PARALLEL_MIN_WORK,
    from_dot,
    from_dots_block,
    from_dots_parallel,
    from_gathered_dots,
    kernel_entry,
)


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def kernel_column_serial(X, sqn, i, idx, out, kind, gamma, coef0, degree):
    if kind == 4:
        for t in range(idx.shape[0]):
            out[t] = X[i, idx[t]]
        return
    # the inner products first, then the kernel in its own loop (which vectorizes: the
    # exponential of an entry at a time had been the larger part of a gathered column)
    m = idx.shape[0]
    d = X.shape[1]
    for t in range(m):
        k = idx[t]
        dot = 0.0
        for f in range(d):
            dot += X[i, f] * X[k, f]
        out[t] = dot
    from_gathered_dots(out, sqn, i, idx, kind, gamma, coef0, degree)


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def kernel_column_parallel(X, sqn, i, idx, out, kind, gamma, coef0, degree):
    m = idx.shape[0]
    if kind == 4:
        for t in numba.prange(m):
            out[t] = X[i, idx[t]]
        return
    for t in numba.prange(m):
        out[t] = kernel_entry(X, sqn, i, idx[t], kind, gamma, coef0, degree)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_column(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
    """Write ``out[t] = K(x_i, x_{idx[t]})`` for ``t < len(idx)``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Dense rows (the Gram matrix itself for ``kind == 4``).
    sqn : ndarray of shape (n_samples,)
        ``‖x_k‖²`` (used by the RBF kernel only).
    i : int
        The column's example.
    idx : ndarray of int64
        Examples k whose entries are wanted.
    out : ndarray of float64, length ≥ len(idx)
    kind : int
        Kernel code (``KERNEL_CODES``).
    gamma, coef0 : float
    degree : int
    threads : int
        Numba threads available (``numba.get_num_threads()``, read by the caller: a jitted
        function that reads it cannot be cached); 1 keeps the serial loop.
    """
    if threads is not None and threads > 1 and idx.shape[0] * X.shape[1] >= PARALLEL_MIN_WORK:
        kernel_column_parallel(X, sqn, i, idx, out, kind, gamma, coef0, degree)
    else:
        kernel_column_serial(X, sqn, i, idx, out, kind, gamma, coef0, degree)


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _full_block(XT, sqn, i, out, lo, hi, kind, gamma, coef0, degree):
    """``out[t] = K(x_i, x_t)`` for ``lo ≤ t < hi`` from the transposed rows ``XT`` (d × n).

    The loops run over views from index 0 (``range(m)``: Numba then knows the index is not
    negative and LLVM vectorizes; over ``range(lo, hi)`` it did not, 4× slower).
    """
    m = hi - lo
    o = out[lo:hi]
    if kind == 4:  # XT is the Gram matrix (symmetric): its row i is the column
        g = XT[i, lo:hi]
        for t in range(m):
            o[t] = g[t]
        return
    d = XT.shape[0]
    for t in range(m):
        o[t] = 0.0
    # the sum runs over f in the same order as kernel_entry's (identical rounding), but the inner
    # loop over t is contiguous and vectorizes
    for f in range(d):
        xf = XT[f, i]
        r = XT[f, lo:hi]
        for t in range(m):
            o[t] += xf * r[t]
    from_dots_block(out, sqn, i, lo, hi, kind, gamma, coef0, degree)


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def kernel_column_full_parallel(XT, sqn, i, out, kind, gamma, coef0, degree):
    n = out.shape[0]
    nb = (n + FULL_BLOCK - 1) // FULL_BLOCK
    for b in numba.prange(nb):
        lo = b * FULL_BLOCK
        _full_block(XT, sqn, i, out, lo, min(n, lo + FULL_BLOCK), kind, gamma, coef0, degree)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
    """``out[t] = K(x_i, x_t)`` for every t, from ``XT`` = the rows transposed (d × n,
    C-contiguous; the Gram matrix itself for ``kind == 4``).

    Equal to :func:`kernel_column` on all indices to the last bit (same order of the sums), about
    twice as fast: the loops over t are contiguous and vectorize. ``out`` has length n.
    """
    if threads is not None and threads > 1 and out.shape[0] * XT.shape[0] >= PARALLEL_MIN_WORK:
        kernel_column_full_parallel(XT, sqn, i, out, kind, gamma, coef0, degree)
    else:
        kernel_column_full_serial(XT, sqn, i, out, kind, gamma, coef0, degree)


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def kernel_column_full_serial(XT, sqn, i, out, kind, gamma, coef0, degree):
    """:func:`kernel_column_full` in this thread alone (block after block)."""
    n = out.shape[0]
    for lo in range(0, n, FULL_BLOCK):
        _full_block(XT, sqn, i, out, lo, min(n, lo + FULL_BLOCK), kind, gamma, coef0, degree)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_rows(X, sqn, rows, idx, kind, gamma, coef0, degree, threads):
    """Dense block ``K[rows][:, idx]`` (tests and small blocks; one column per row)."""
    out = np.empty((rows.shape[0], idx.shape[0]))
    for r in range(rows.shape[0]):
        kernel_column(X, sqn, rows[r], idx, out[r], kind, gamma, coef0, degree, threads)
    return out


def squared_norms(X: np.ndarray) -> np.ndarray:
    """``‖x_k‖²`` of every row (float64, contiguous)."""
    return np.ascontiguousarray(np.einsum("ij,ij->i", X, X))


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def kernel_dot_rows(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift):
    """``out[r] = Σ_c coef[c] (K(x_{rows[r]}, x_{cols[c]}) + shift)``, rows split over threads.

    Used to build a gradient from a warm start and to reconstruct the gradient of shrunk
    variables; each thread sums its own rows in a fixed order (deterministic).
    """
    m = rows.shape[0]
    out = np.zeros(m)
    for r in numba.prange(m):
        i = rows[r]
        acc = 0.0
        if kind == 4:
            for c in range(cols.shape[0]):
                acc += coef[c] * (X[i, cols[c]] + shift)
        else:
            for c in range(cols.shape[0]):
                acc += coef[c] * (
                    kernel_entry(X, sqn, i, cols[c], kind, gamma, coef0, degree) + shift
                )
        out[r] = acc
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_diag(X, sqn, kind, gamma, coef0, degree):
    """``K(x_t, x_t)`` for every t."""
    n = X.shape[0]
    out = np.empty(n)
    for t in range(n):
        if kind == 4:
            out[t] = X[t, t]
        else:
            out[t] = kernel_entry(X, sqn, t, t, kind, gamma, coef0, degree)
    return out


def kernel_diagonal(X, sqn, kind, gamma, coef0, degree) -> np.ndarray:
    """:func:`kernel_diag`'s values, those known without arithmetic in NumPy (no jitted code to
    compile or load): 1 for the RBF kernel (:func:`from_dot` of a row with itself), the Gram
    matrix's own diagonal for a precomputed one."""
    if kind == KERNEL_CODES["rbf"]:
        return np.ones(X.shape[0])
    if kind == KERNEL_CODES["precomputed"]:
        return np.diagonal(X).astype(np.float64, copy=True)
    return kernel_diag(X, sqn, kind, gamma, coef0, degree)


# ---- rows given as a dense array or as CSR: one name for the jitted callers ----------------------
def _is_dense(X) -> bool:
    return isinstance(X, numba.types.Array)


def _serial(threads) -> bool:
    return isinstance(threads, numba.types.NoneType)


def parallel_threads(n: int, d: int, nnz: int | None, threads: int) -> int | None:
    """The ``threads`` the jitted callers pass to :func:`column` and :func:`column_full` for n
    rows of d entries (dense, or CSR with ``nnz`` non-zeros; d = n for a Gram matrix): None
    when no column reaches the parallel loops' thresholds (:data:`PARALLEL_MIN_WORK`,
    :data:`PARALLEL_MIN_N_CSR`), or for one thread. A caller compiled with None links no
    parallel loop (they compile slowly, and small problems never run them); the values are the
    same bit for bit either way."""
    if threads <= 1:
        return None
    if nnz is None:
        return threads if n * d >= PARALLEL_MIN_WORK else None
    gathered = n * (nnz // max(1, n) + 1)  # kernel_column_csr's work on every index
    return threads if gathered >= PARALLEL_MIN_WORK or n >= PARALLEL_MIN_N_CSR else None


def column_threads(X, threads: int) -> int | None:
    """:func:`parallel_threads` of the jitted callers' rows ``X`` (dense rows, Gram matrix, or
    the CSR tuple of :data:`CSR_FIELDS`)."""
    if isinstance(X, tuple):
        n = X[0].shape[0] - 1
        return parallel_threads(n, X[6].shape[0], int(X[0][-1]), threads)
    return parallel_threads(X.shape[0], X.shape[1], None, threads)


def column(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
    """:func:`kernel_column` (dense rows) or :func:`kernel_column_csr` (CSR tuple), their serial
    loop alone when ``threads`` is None (:func:`column_threads`); jitted callers only (the
    choice is made when the caller is compiled)."""
    raise NotImplementedError("column is resolved inside jitted code only")


@overload(column, inline="always")
def _column(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
    if is_table(X):  # shared kernel rows (solvers._jit.kernel_table)

        def impl(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
            table_column(X, i, idx, out, kind, gamma, coef0, degree)

    elif _is_dense(X) and _serial(threads):

        def impl(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
            kernel_column_serial(X, sqn, i, idx, out, kind, gamma, coef0, degree)

    elif _is_dense(X):

        def impl(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
            kernel_column(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads)

    else:

        def impl(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
            kernel_column_csr(
                X[0], X[1], X[2], X[6], sqn, i, idx, out, kind, gamma, coef0, degree, threads
            )

    return impl


def column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
    """:func:`kernel_column_full` (``XT`` dense) or :func:`kernel_column_full_csr` (CSR tuple),
    serial when ``threads`` is None; jitted callers only."""
    raise NotImplementedError("column_full is resolved inside jitted code only")


@overload(column_full, inline="always")
def _column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
    if is_table(XT):  # shared kernel rows (solvers._jit.kernel_table)

        def impl(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
            table_column_full(XT, i, out, kind, gamma, coef0, degree)

    elif _is_dense(XT) and _serial(threads):

        def impl(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
            n = out.shape[0]
            for lo in range(0, n, FULL_BLOCK):
                hi = min(n, lo + FULL_BLOCK)
                _full_block(XT, sqn, i, out, lo, hi, kind, gamma, coef0, degree)

    elif _is_dense(XT):

        def impl(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
            kernel_column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads)

    else:

        def impl(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
            kernel_column_full_csr(*XT[:6], sqn, i, out, kind, gamma, coef0, degree, threads)

    return impl


def full_fraction(X, dense_fraction):
    """``dense_fraction`` for dense rows and shared kernel rows, :data:`FULL_FRACTION_CSR` for
    CSR; jitted only."""
    raise NotImplementedError("full_fraction is resolved inside jitted code only")


@overload(full_fraction)
def _full_fraction(X, dense_fraction):
    if _is_dense(X) or is_table(X):
        return lambda X, dense_fraction: dense_fraction
    return lambda X, dense_fraction: FULL_FRACTION_CSR
