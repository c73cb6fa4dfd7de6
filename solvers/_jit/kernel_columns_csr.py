"""Kernel columns ``K(x_i, x_k)`` for CSR rows (float64 values, int64 indices sorted within each
row, no duplicates), jitted: the CSR half of :mod:`solvers._jit.kernel_columns`.

A column gathered on a list of indices scatters row i into a zero vector of length d and takes
one dot product per row k over its non-zeros (:func:`kernel_column_csr`); a whole column is
computed by the columns of X, i.e. the rows of Xᵀ in CSR, touching only the features of x_i
(:func:`kernel_column_full_csr`): ``O(n + Σ_{f ∈ x_i} nnz(X_:f))`` instead of ``O(nnz(X))``. Every
dot product sums over ascending features, as the dense loop does, so the values are the dense
ones bit for bit given the same squared norms. The kernel formulas are those of
:mod:`solvers._jit.kernel_values`; the jitted callers take these rows as the tuple of
:data:`CSR_FIELDS` (:func:`csr_rows`). The dense functions named here (:func:`kernel_column`,
:func:`kernel_column_full`, :func:`kernel_dot_rows`, :func:`kernel_rows`) are in
:mod:`solvers._jit.kernel_columns`, :func:`kernel_entry` in :mod:`solvers._jit.kernel_values`.
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.kernel_values import (
    PARALLEL_MIN_WORK,
    from_dot,
    from_dots_block,
    from_dots_parallel,
    from_gathered_dots,
)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def squared_norms_csr(indptr, data):
    """``‖x_k‖²`` of every CSR row."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for k in range(n):
        acc = 0.0
        for p in range(indptr[k], indptr[k + 1]):
            acc += data[p] * data[p]
        out[k] = acc
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_diag_csr(indptr, data, kind, gamma, coef0, degree):
    """``K(x_t, x_t)`` for every CSR row (kind < 4)."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for t in range(n):
        dot = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            dot += data[p] * data[p]
        out[t] = from_dot(dot, dot, dot, True, kind, gamma, coef0, degree)
    return out


@numba.njit(cache=True, inline="always")
def scatter(indptr, indices, data, i, scratch, clear):
    """``scratch[f] = x_if`` on row i's non-zeros (0 again if ``clear``)."""
    for p in range(indptr[i], indptr[i + 1]):
        scratch[indices[p]] = 0.0 if clear else data[p]


@numba.njit(cache=True, inline="always")
def dot_scattered(indptr, indices, data, k, scratch):
    """``x_k · scratch`` over row k's non-zeros (ascending features when the indices are sorted:
    the order of :func:`kernel_entry`'s sum, zeros left out)."""
    acc = 0.0
    for p in range(indptr[k], indptr[k + 1]):
        acc += data[p] * scratch[indices[p]]
    return acc


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def kernel_column_csr_parallel(
    indptr, indices, data, scratch, sqn, i, idx, out, kind, gamma, coef0, degree
):
    m = idx.shape[0]
    si = sqn[i]
    for t in numba.prange(m):
        k = idx[t]
        dot = dot_scattered(indptr, indices, data, k, scratch)
        out[t] = from_dot(dot, si, sqn[k], i == k, kind, gamma, coef0, degree)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_column_csr(
    indptr, indices, data, scratch, sqn, i, idx, out, kind, gamma, coef0, degree, threads
):
    """:func:`kernel_column` for CSR rows (sorted indices): row i is scattered into ``scratch``
    (length d, all zeros on entry and on return), then each entry is a dot over row k's
    non-zeros, ``O(nnz_i + Σ_t nnz_{idx[t]})``."""
    scatter(indptr, indices, data, i, scratch, False)
    m = idx.shape[0]
    work = m * (indptr[-1] // max(1, indptr.shape[0] - 1) + 1)
    if threads is not None and threads > 1 and work >= PARALLEL_MIN_WORK:
        kernel_column_csr_parallel(
            indptr, indices, data, scratch, sqn, i, idx, out, kind, gamma, coef0, degree
        )
    else:  # the inner products, then the kernel in a loop that vectorizes
        for t in range(m):
            out[t] = dot_scattered(indptr, indices, data, idx[t], scratch)
        from_gathered_dots(out, sqn, i, idx, kind, gamma, coef0, degree)
    scatter(indptr, indices, data, i, scratch, True)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def dots_csr(indptr, indices, data, t_indptr, t_indices, t_data, i, out):
    """``out[t] = x_i · x_t`` for every t, by columns: for each non-zero ``x_if`` of row i, add
    ``x_if x_tf`` over column f of X (row f of ``Xᵀ`` in CSR), ``O(n + Σ_{f ∈ x_i} nnz(X_:f))``.
    The sum of ``out[t]`` runs over ascending f, as :func:`kernel_entry`'s."""
    for t in range(out.shape[0]):
        out[t] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        f = indices[p]
        xf = data[p]
        for q in range(t_indptr[f], t_indptr[f + 1]):
            out[t_indices[q]] += xf * t_data[q]


#: Whole CSR columns pass their O(n) kernel transform (``exp``, ``tanh``, powers) to all Numba
#: threads from this n on (the sparse dot products stay serial).
PARALLEL_MIN_N_CSR = 20_000


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_column_full_csr(
    indptr,
    indices,
    data,
    t_indptr,
    t_indices,
    t_data,
    sqn,
    i,
    out,
    kind,
    gamma,
    coef0,
    degree,
    threads,
):
    """:func:`kernel_column_full` for CSR rows: ``out[t] = K(x_i, x_t)`` for every t from the
    columns of X (``Xᵀ`` in CSR with sorted indices: ``t_indptr, t_indices, t_data``), see
    :func:`dots_csr`. Equal to :func:`kernel_column_csr` on all indices to the last bit."""
    dots_csr(indptr, indices, data, t_indptr, t_indices, t_data, i, out)
    n = out.shape[0]
    if kind == 0:
        return
    if threads is not None and threads > 1 and n >= PARALLEL_MIN_N_CSR:
        from_dots_parallel(out, sqn, i, kind, gamma, coef0, degree)
        return
    from_dots_block(out, sqn, i, 0, n, kind, gamma, coef0, degree)


#: Entries of the block of whole columns :func:`kernel_dot_rows_csr` holds at a time (8 MB).
DOT_ROWS_BLOCK_ENTRIES = 1_000_000


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def kernel_dot_rows_csr(
    indptr,
    indices,
    data,
    t_indptr,
    t_indices,
    t_data,
    sqn,
    rows,
    cols,
    coef,
    kind,
    gamma,
    coef0,
    degree,
    shift,
):
    """:func:`kernel_dot_rows` for CSR rows: ``out[r] = Σ_c coef[c] (K(x_{rows[r]}, x_{cols[c]})
    + shift)``.

    The columns ``x_c·x_t`` (all t) of a block of ``cols`` are computed from ``Xᵀ``
    (:func:`dots_csr`, one column per thread), then each thread adds the block's terms to its
    own rows in the order of ``cols``: the sums are :func:`kernel_dot_rows`'s, term by term, for
    any number of threads.
    """
    n = sqn.shape[0]
    m = rows.shape[0]
    nc = cols.shape[0]
    out = np.zeros(m)
    nb = max(1, min(nc, DOT_ROWS_BLOCK_ENTRIES // max(1, n)))
    buf = np.empty((nb, n))
    for c0 in range(0, nc, nb):
        size = min(nb, nc - c0)
        for b in numba.prange(size):
            dots_csr(indptr, indices, data, t_indptr, t_indices, t_data, cols[c0 + b], buf[b])
        for r in numba.prange(m):
            i = rows[r]
            acc = out[r]
            for b in range(size):
                c = cols[c0 + b]
                k = from_dot(buf[b, i], sqn[i], sqn[c], i == c, kind, gamma, coef0, degree)
                acc += coef[c0 + b] * (k + shift)
            out[r] = acc
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_rows_csr(
    indptr, indices, data, scratch, sqn, rows, idx, kind, gamma, coef0, degree, threads
):
    """:func:`kernel_rows` for CSR rows (tests and small blocks)."""
    out = np.empty((rows.shape[0], idx.shape[0]))
    for r in range(rows.shape[0]):
        kernel_column_csr(
            indptr,
            indices,
            data,
            scratch,
            sqn,
            rows[r],
            idx,
            out[r],
            kind,
            gamma,
            coef0,
            degree,
            threads,
        )
    return out


#: CSR rows, as the jitted callers take them: a tuple ``(indptr, indices, data, t_indptr,
#: t_indices, t_data, scratch)`` holding X and Xᵀ in CSR (int64 indices, sorted, no duplicates,
#: float64 values) and a zero vector of length d (see :func:`kernel_column_csr`). Built by
#: :func:`csr_rows`; the same tuple stands for the rows and for their transpose.
CSR_FIELDS = ("indptr", "indices", "data", "t_indptr", "t_indices", "t_data", "scratch")


#: For CSR rows, a missing column is computed whole (from Xᵀ) when at least this fraction of its
#: entries is wanted (``FULL_FRACTION`` of :mod:`solvers._jit.smo_shrink` for dense rows): at
#: low densities a whole CSR column costs a fraction of one gathered on every index
#: (docs/measurements.md, "smo").
FULL_FRACTION_CSR = 0.1


def csr_rows(X) -> tuple:
    """The CSR tuple of ``CSR_FIELDS`` for a scipy sparse (or dense) matrix X (copies)."""
    from scipy import sparse

    A = sparse.csr_matrix(X, dtype=np.float64, copy=True)
    A.sum_duplicates()
    A.sort_indices()
    T = A.T.tocsr()
    T.sort_indices()

    def i64(a):
        return np.ascontiguousarray(a, dtype=np.int64)

    def f64(a):
        return np.ascontiguousarray(a, dtype=np.float64)

    return (
        i64(A.indptr),
        i64(A.indices),
        f64(A.data),
        i64(T.indptr),
        i64(T.indices),
        f64(T.data),
        np.zeros(A.shape[1]),
    )
