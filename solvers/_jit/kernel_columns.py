"""Kernel columns ``K(x_i, x_k)`` for a list of indices k, jitted (the cost centre of SMO).

Codes of the kernels (``KERNEL_CODES``) and their formulas, as in :mod:`problems.kernels`:

- 0 ``linear``: ``x·x'``
- 1 ``poly``: ``(γ x·x' + c₀)^p``
- 2 ``rbf``: ``exp(−γ‖x − x'‖²)`` computed as ``exp(−γ(‖x‖² + ‖x'‖² − 2x·x'))`` from the
  precomputed squared norms (clipped at 0, and exactly 0 on the diagonal, as scikit-learn's
  ``euclidean_distances``)
- 3 ``sigmoid``: ``tanh(γ x·x' + c₀)``
- 4 ``precomputed``: ``X`` is the Gram matrix and the column is read from it.

``X`` is dense, C-contiguous float64 (a CSR matrix is densified by the caller,
:func:`solvers.smo.dense_rows`). A column is long work when ``len(idx) · d`` is large: then
:func:`kernel_column` hands it to :func:`_kernel_column_parallel`, which splits it over the Numba
threads with ``prange`` (each thread writes its own entries, no reduction).
"""

from __future__ import annotations

import math

import numba
import numpy as np

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
    if kind == 0:
        return dot
    if kind == 1:
        base = gamma * dot + coef0
        out = 1.0
        for _ in range(degree):
            out *= base
        return out
    if kind == 2:
        if i == k:
            return 1.0
        dist = sqn[i] + sqn[k] - 2.0 * dot
        if dist < 0.0:
            dist = 0.0
        return math.exp(-gamma * dist)
    return math.tanh(gamma * dot + coef0)


@numba.njit(cache=True)
def _kernel_column_serial(X, sqn, i, idx, out, kind, gamma, coef0, degree):
    if kind == 4:
        for t in range(idx.shape[0]):
            out[t] = X[i, idx[t]]
        return
    for t in range(idx.shape[0]):
        out[t] = _entry(X, sqn, i, idx[t], kind, gamma, coef0, degree)


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
    if kind == 0:
        return
    if kind == 1:
        for t in range(m):
            base = gamma * o[t] + coef0
            v = 1.0
            for _ in range(degree):
                v *= base
            o[t] = v
        return
    if kind == 2:
        si = sqn[i]
        q = sqn[lo:hi]
        for t in range(m):
            dist = si + q[t] - 2.0 * o[t]
            if dist < 0.0:
                dist = 0.0
            o[t] = math.exp(-gamma * dist)
        if lo <= i < hi:
            out[i] = 1.0
        return
    for t in range(m):
        o[t] = math.tanh(gamma * o[t] + coef0)


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
