"""Kernel columns ``K(x_i, x_k)`` for a list of indices k, jitted (the cost centre of SMO).

Codes of the kernels (``KERNEL_CODES``) and their formulas, as in :mod:`problems.kernels`, each
computed from an inner product by :func:`problems._kernel_products.kernel_from_dot` (one formula
for these columns and for the certificates' products; its exponential is the vectorizable
:func:`~problems._kernel_products.exp_nonpositive`):

- 0 ``linear``: ``x·x'``
- 1 ``poly``: ``(γ x·x' + c₀)^p``
- 2 ``rbf``: ``exp(−γ‖x − x'‖²)`` computed as ``exp(−γ(‖x‖² + ‖x'‖² − 2x·x'))`` from the
  precomputed squared norms (clipped at 0, and exactly 0 on the diagonal, as scikit-learn's
  ``euclidean_distances``)
- 3 ``sigmoid``: ``tanh(γ x·x' + c₀)``
- 4 ``precomputed``: ``X`` is the Gram matrix and the column is read from it.

Dense rows: ``X`` is C-contiguous float64. A column is long work when ``len(idx) · d`` is large:
then :func:`kernel_column` hands it to :func:`_kernel_column_parallel`, which splits it over the
Numba threads with ``prange`` (each thread writes its own entries, no reduction).

CSR rows (``*_csr``, float64 values, int64 indices sorted within each row, no duplicates): a column
gathered on a list of indices scatters row i into a zero vector of length d and takes one dot
product per row k over its non-zeros (:func:`kernel_column_csr`); a whole column is computed by
the columns of X, i.e. the rows of Xᵀ in CSR, touching only the features of x_i
(:func:`kernel_column_full_csr`): ``O(n + Σ_{f ∈ x_i} nnz(X_:f))`` instead of ``O(nnz(X))``. Every
dot product sums over ascending features, as the dense loop does, so the values are the dense
ones bit for bit given the same squared norms. The jitted callers (:mod:`solvers._jit.smo`) take
either kind of rows through :func:`column`, :func:`column_full` and :func:`dot_rows`, resolved when
they are compiled (one specialization per kind); CSR rows travel as the tuple of
:data:`CSR_FIELDS`.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload

from svmbench.problems._kernel_products import kernel_from_dot

KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}

#: Columns with ``len(idx) · d`` at least this are computed by all Numba threads.
PARALLEL_MIN_WORK = 100_000


@numba.njit(cache=True, inline="always")
def _entry(X, sqn, i, k, kind, gamma, coef0, degree):
    """``K(x_i, x_k)`` for one pair (kind < 4)."""
    d = X.shape[1]
    dot = 0.0
    for f in range(d):
        dot += X[i, f] * X[k, f]
    return _from_dot(dot, sqn[i], sqn[k], i == k, kind, gamma, coef0, degree)


@numba.njit(cache=True, inline="always")
def _from_gathered_dots(out, sqn, i, idx, kind, gamma, coef0, degree):
    """``out[t] = K(x_i, x_{idx[t]})`` from ``out[t] = x_i·x_{idx[t]}`` (kind < 4), one loop per
    kind so that each vectorizes; :func:`_from_dot`'s values."""
    m = idx.shape[0]
    si = sqn[i]
    if kind == 1:
        for t in range(m):
            out[t] = kernel_from_dot(out[t], si, sqn[idx[t]], 1, gamma, coef0, degree)
    elif kind == 2:
        for t in range(m):
            v = kernel_from_dot(out[t], si, sqn[idx[t]], 2, gamma, coef0, degree)
            out[t] = 1.0 if idx[t] == i else v
    elif kind == 3:
        for t in range(m):
            out[t] = kernel_from_dot(out[t], si, sqn[idx[t]], 3, gamma, coef0, degree)


@numba.njit(cache=True)
def _kernel_column_serial(X, sqn, i, idx, out, kind, gamma, coef0, degree):
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
    _from_gathered_dots(out, sqn, i, idx, kind, gamma, coef0, degree)


@numba.njit(cache=True, parallel=True)
def _kernel_column_parallel(X, sqn, i, idx, out, kind, gamma, coef0, degree):
    m = idx.shape[0]
    if kind == 4:
        for t in numba.prange(m):
            out[t] = X[i, idx[t]]
        return
    for t in numba.prange(m):
        out[t] = _entry(X, sqn, i, idx[t], kind, gamma, coef0, degree)


@numba.njit(cache=True)
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
    if threads > 1 and idx.shape[0] * X.shape[1] >= PARALLEL_MIN_WORK:
        _kernel_column_parallel(X, sqn, i, idx, out, kind, gamma, coef0, degree)
    else:
        _kernel_column_serial(X, sqn, i, idx, out, kind, gamma, coef0, degree)


#: Entries per block of :func:`kernel_column_full` (the block of ``out`` stays in L1/L2 while the
#: d rows of ``XT`` stream through it).
FULL_BLOCK = 2048


@numba.njit(cache=True)
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
    # the sum runs over f in the same order as _entry's (identical rounding), but the inner loop
    # over t is contiguous and vectorizes
    for f in range(d):
        xf = XT[f, i]
        r = XT[f, lo:hi]
        for t in range(m):
            o[t] += xf * r[t]
    _from_dots_block(out, sqn, i, lo, hi, kind, gamma, coef0, degree)


@numba.njit(cache=True, parallel=True)
def _kernel_column_full_parallel(XT, sqn, i, out, kind, gamma, coef0, degree):
    n = out.shape[0]
    nb = (n + FULL_BLOCK - 1) // FULL_BLOCK
    for b in numba.prange(nb):
        lo = b * FULL_BLOCK
        _full_block(XT, sqn, i, out, lo, min(n, lo + FULL_BLOCK), kind, gamma, coef0, degree)


@numba.njit(cache=True)
def kernel_column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
    """``out[t] = K(x_i, x_t)`` for every t, from ``XT`` = the rows transposed (d × n,
    C-contiguous; the Gram matrix itself for ``kind == 4``).

    Equal to :func:`kernel_column` on all indices to the last bit (same order of the sums), about
    twice as fast: the loops over t are contiguous and vectorize. ``out`` has length n.
    """
    n = out.shape[0]
    if threads > 1 and n * XT.shape[0] >= PARALLEL_MIN_WORK:
        _kernel_column_full_parallel(XT, sqn, i, out, kind, gamma, coef0, degree)
        return
    for lo in range(0, n, FULL_BLOCK):
        _full_block(XT, sqn, i, out, lo, min(n, lo + FULL_BLOCK), kind, gamma, coef0, degree)


@numba.njit(cache=True)
def kernel_rows(X, sqn, rows, idx, kind, gamma, coef0, degree, threads):
    """Dense block ``K[rows][:, idx]`` (tests and small blocks; one column per row)."""
    out = np.empty((rows.shape[0], idx.shape[0]))
    for r in range(rows.shape[0]):
        kernel_column(X, sqn, rows[r], idx, out[r], kind, gamma, coef0, degree, threads)
    return out


def squared_norms(X: np.ndarray) -> np.ndarray:
    """``‖x_k‖²`` of every row (float64, contiguous)."""
    return np.ascontiguousarray(np.einsum("ij,ij->i", X, X))


@numba.njit(cache=True, parallel=True)
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
                acc += coef[c] * (_entry(X, sqn, i, cols[c], kind, gamma, coef0, degree) + shift)
        out[r] = acc
    return out


@numba.njit(cache=True)
def kernel_diag(X, sqn, kind, gamma, coef0, degree):
    """``K(x_t, x_t)`` for every t."""
    n = X.shape[0]
    out = np.empty(n)
    for t in range(n):
        if kind == 4:
            out[t] = X[t, t]
        else:
            out[t] = _entry(X, sqn, t, t, kind, gamma, coef0, degree)
    return out


# ---- CSR rows ------------------------------------------------------------------------------------
@numba.njit(cache=True, inline="always")
def _from_dot(dot, sqi, sqk, same, kind, gamma, coef0, degree):
    """``K(x_i, x_k)`` from ``x_i·x_k`` (kind < 4): the formula of
    :func:`~problems._kernel_products.kernel_from_dot`, and exactly 1 for the RBF kernel of a row
    with itself (``same``), where rounding could leave ``‖x‖² + ‖x‖² − 2x·x`` above 0."""
    if kind == 2 and same:
        return 1.0
    return kernel_from_dot(dot, sqi, sqk, kind, gamma, coef0, degree)


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def kernel_diag_csr(indptr, data, kind, gamma, coef0, degree):
    """``K(x_t, x_t)`` for every CSR row (kind < 4)."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for t in range(n):
        dot = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            dot += data[p] * data[p]
        out[t] = _from_dot(dot, dot, dot, True, kind, gamma, coef0, degree)
    return out


@numba.njit(cache=True, inline="always")
def _scatter(indptr, indices, data, i, scratch, clear):
    """``scratch[f] = x_if`` on row i's non-zeros (0 again if ``clear``)."""
    for p in range(indptr[i], indptr[i + 1]):
        scratch[indices[p]] = 0.0 if clear else data[p]


@numba.njit(cache=True, inline="always")
def _dot_scattered(indptr, indices, data, k, scratch):
    """``x_k · scratch`` over row k's non-zeros (ascending features when the indices are sorted:
    the order of :func:`_entry`'s sum, zeros left out)."""
    acc = 0.0
    for p in range(indptr[k], indptr[k + 1]):
        acc += data[p] * scratch[indices[p]]
    return acc


@numba.njit(cache=True, parallel=True)
def _kernel_column_csr_parallel(
    indptr, indices, data, scratch, sqn, i, idx, out, kind, gamma, coef0, degree
):
    m = idx.shape[0]
    si = sqn[i]
    for t in numba.prange(m):
        k = idx[t]
        dot = _dot_scattered(indptr, indices, data, k, scratch)
        out[t] = _from_dot(dot, si, sqn[k], i == k, kind, gamma, coef0, degree)


@numba.njit(cache=True)
def kernel_column_csr(
    indptr, indices, data, scratch, sqn, i, idx, out, kind, gamma, coef0, degree, threads
):
    """:func:`kernel_column` for CSR rows (sorted indices): row i is scattered into ``scratch``
    (length d, all zeros on entry and on return), then each entry is a dot over row k's
    non-zeros, ``O(nnz_i + Σ_t nnz_{idx[t]})``."""
    _scatter(indptr, indices, data, i, scratch, False)
    m = idx.shape[0]
    work = m * (indptr[-1] // max(1, indptr.shape[0] - 1) + 1)
    if threads > 1 and work >= PARALLEL_MIN_WORK:
        _kernel_column_csr_parallel(
            indptr, indices, data, scratch, sqn, i, idx, out, kind, gamma, coef0, degree
        )
    else:  # the inner products, then the kernel in a loop that vectorizes
        for t in range(m):
            out[t] = _dot_scattered(indptr, indices, data, idx[t], scratch)
        _from_gathered_dots(out, sqn, i, idx, kind, gamma, coef0, degree)
    _scatter(indptr, indices, data, i, scratch, True)


@numba.njit(cache=True)
def _dots_csr(indptr, indices, data, t_indptr, t_indices, t_data, i, out):
    """``out[t] = x_i · x_t`` for every t, by columns: for each non-zero ``x_if`` of row i, add
    ``x_if x_tf`` over column f of X (row f of ``Xᵀ`` in CSR), ``O(n + Σ_{f ∈ x_i} nnz(X_:f))``.
    The sum of ``out[t]`` runs over ascending f, as :func:`_entry`'s."""
    for t in range(out.shape[0]):
        out[t] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        f = indices[p]
        xf = data[p]
        for q in range(t_indptr[f], t_indptr[f + 1]):
            out[t_indices[q]] += xf * t_data[q]


@numba.njit(cache=True, inline="always")
def _from_dots_block(out, sqn, i, lo, hi, kind, gamma, coef0, degree):
    """``out[t] = K(x_i, x_t)`` from ``out[t] = x_i·x_t`` for ``lo ≤ t < hi`` (kind < 4), one
    loop per kind so that each vectorizes."""
    m = hi - lo
    o = out[lo:hi]
    q = sqn[lo:hi]
    si = sqn[i]
    if kind == 1:
        for t in range(m):
            o[t] = kernel_from_dot(o[t], si, q[t], 1, gamma, coef0, degree)
    elif kind == 2:
        for t in range(m):
            o[t] = kernel_from_dot(o[t], si, q[t], 2, gamma, coef0, degree)
        if lo <= i < hi:
            out[i] = 1.0
    elif kind == 3:
        for t in range(m):
            o[t] = kernel_from_dot(o[t], si, q[t], 3, gamma, coef0, degree)


@numba.njit(cache=True, parallel=True)
def _from_dots_parallel(out, sqn, i, kind, gamma, coef0, degree):
    n = out.shape[0]
    nb = (n + FULL_BLOCK - 1) // FULL_BLOCK
    for b in numba.prange(nb):
        lo = b * FULL_BLOCK
        _from_dots_block(out, sqn, i, lo, min(n, lo + FULL_BLOCK), kind, gamma, coef0, degree)


#: Whole CSR columns pass their O(n) kernel transform (``exp``, ``tanh``, powers) to all Numba
#: threads from this n on (the sparse dot products stay serial).
PARALLEL_MIN_N_CSR = 20_000


@numba.njit(cache=True)
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
    :func:`_dots_csr`. Equal to :func:`kernel_column_csr` on all indices to the last bit."""
    _dots_csr(indptr, indices, data, t_indptr, t_indices, t_data, i, out)
    n = out.shape[0]
    if kind == 0:
        return
    if threads > 1 and n >= PARALLEL_MIN_N_CSR:
        _from_dots_parallel(out, sqn, i, kind, gamma, coef0, degree)
        return
    _from_dots_block(out, sqn, i, 0, n, kind, gamma, coef0, degree)


#: Entries of the block of whole columns :func:`kernel_dot_rows_csr` holds at a time (8 MB).
DOT_ROWS_BLOCK_ENTRIES = 1_000_000


@numba.njit(cache=True, parallel=True)
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
    (:func:`_dots_csr`, one column per thread), then each thread adds the block's terms to its
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
            _dots_csr(indptr, indices, data, t_indptr, t_indices, t_data, cols[c0 + b], buf[b])
        for r in numba.prange(m):
            i = rows[r]
            acc = out[r]
            for b in range(size):
                c = cols[c0 + b]
                k = _from_dot(buf[b, i], sqn[i], sqn[c], i == c, kind, gamma, coef0, degree)
                acc += coef[c0 + b] * (k + shift)
            out[r] = acc
    return out


@numba.njit(cache=True)
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


# ---- rows given as a dense array or as CSR: one name for the jitted callers ----------------------
#: CSR rows, as the jitted callers take them: a tuple ``(indptr, indices, data, t_indptr,
#: t_indices, t_data, scratch)`` holding X and Xᵀ in CSR (int64 indices, sorted, no duplicates,
#: float64 values) and a zero vector of length d (see :func:`kernel_column_csr`). Built by
#: :func:`csr_rows`; the same tuple stands for the rows and for their transpose.
CSR_FIELDS = ("indptr", "indices", "data", "t_indptr", "t_indices", "t_data", "scratch")

#: For CSR rows, a missing column is computed whole (from Xᵀ) when at least this fraction of its
#: entries is wanted (``FULL_FRACTION`` of :mod:`solvers._jit.smo` for dense rows). Measured, RBF,
#: n = 5000, one thread: a whole column cost 0.08-0.30 of one gathered on every index at
#: densities 0.5-10 % (d = 100 and 10⁴), 0.45-0.6 at 50 % (which is densified anyway).
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


def _is_dense(X) -> bool:
    return isinstance(X, numba.types.Array)


def column(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
    """:func:`kernel_column` (dense rows) or :func:`kernel_column_csr` (CSR tuple); jitted
    callers only (the choice is made when the caller is compiled)."""
    raise NotImplementedError("column is resolved inside jitted code only")


@overload(column)
def _column(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
    if _is_dense(X):

        def impl(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
            kernel_column(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads)

    else:

        def impl(X, sqn, i, idx, out, kind, gamma, coef0, degree, threads):
            kernel_column_csr(
                X[0], X[1], X[2], X[6], sqn, i, idx, out, kind, gamma, coef0, degree, threads
            )

    return impl


def column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
    """:func:`kernel_column_full` (``XT`` dense) or :func:`kernel_column_full_csr` (CSR tuple);
    jitted callers only."""
    raise NotImplementedError("column_full is resolved inside jitted code only")


@overload(column_full)
def _column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
    if _is_dense(XT):

        def impl(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
            kernel_column_full(XT, sqn, i, out, kind, gamma, coef0, degree, threads)

    else:

        def impl(XT, sqn, i, out, kind, gamma, coef0, degree, threads):
            kernel_column_full_csr(
                XT[0],
                XT[1],
                XT[2],
                XT[3],
                XT[4],
                XT[5],
                sqn,
                i,
                out,
                kind,
                gamma,
                coef0,
                degree,
                threads,
            )

    return impl


def dot_rows(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift):
    """:func:`kernel_dot_rows` or :func:`kernel_dot_rows_csr`; jitted callers only."""
    raise NotImplementedError("dot_rows is resolved inside jitted code only")


@overload(dot_rows)
def _dot_rows(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift):
    if _is_dense(X):

        def impl(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift):
            return kernel_dot_rows(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift)

    else:

        def impl(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift):
            return kernel_dot_rows_csr(
                X[0],
                X[1],
                X[2],
                X[3],
                X[4],
                X[5],
                sqn,
                rows,
                cols,
                coef,
                kind,
                gamma,
                coef0,
                degree,
                shift,
            )

    return impl


def full_fraction(X, dense_fraction):
    """``dense_fraction`` for dense rows, :data:`FULL_FRACTION_CSR` for CSR; jitted only."""
    raise NotImplementedError("full_fraction is resolved inside jitted code only")


@overload(full_fraction)
def _full_fraction(X, dense_fraction):
    if _is_dense(X):
        return lambda X, dense_fraction: dense_fraction
    return lambda X, dense_fraction: FULL_FRACTION_CSR
