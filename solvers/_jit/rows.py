"""One way for the jitted loops to read a row of X: dense or CSR, written once, summed one way.

A row set ``X`` is either a C-contiguous float64 array (n, d) or a CSR tuple whose first three
entries are ``(indptr, indices, data)``, column indices sorted within each row (further entries,
such as the transpose that :mod:`solvers._jit.kernel_columns` carries, are ignored). Each helper
below is an ``@overload``: Numba picks the dense or the CSR body when the caller is compiled, so
an epoch is written once and compiled once per storage. The bodies are inlined into the caller's
Numba IR (``inline="always"``): left as calls, ``row_axpy`` was not inlined by LLVM and paid
array reference counting on every row.

One summation order for both storages: :func:`row_dot` returns
``(((start + x_{i j_1} w_{j_1}) + x_{i j_2} w_{j_2}) + …)`` over the row's entries in increasing
column order, in one accumulator (no ``fastmath``). A zero entry of a dense row adds an exact
zero, so a dense row and its CSR form give the same bits (a zero sum may differ in its sign
only), and so do the iterates of every loop built on these helpers. :func:`row_sqnorm` is
``row_dot`` of the row with itself from 0; :func:`row_axpy` (``w += c x_i``) has no reduction.

One exception, :func:`row_dot4`, for loops that promise no bitwise dense/CSR agreement (the
barrier's passes): a dense row is summed in four partial sums ``t_r`` over the columns
``j ≡ r (mod 4)`` below ``4⌊d/4⌋``, the last ``d mod 4`` columns into ``t_0``, and
``start + ((t_0 + t_1) + (t_2 + t_3))`` returned; a CSR row as :func:`row_dot`. The single
accumulator is a chain of d dependent additions; four chains run side by side, which makes the
barrier's passes faster. Sharing that order with CSR would mean choosing the partial sum of every
entry from its column, which made the CSR passes slower (docs/measurements.md, "barrier").
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload
from scipy import sparse

from svmbench.solvers._jit.common import prefetch, prefetch_span


def _dense(X) -> bool:
    return isinstance(X, types.Array)


def _csr(X) -> bool:
    return isinstance(X, types.BaseTuple) and len(X) >= 3


def n_rows(X):
    """The number of rows of ``X``; jitted callers only."""
    raise NotImplementedError("n_rows is resolved inside jitted code only")


def row_span(X, i):
    """``(start, stop)``: the positions of row ``i``'s stored entries, for :func:`row_entry`."""
    raise NotImplementedError("row_span is resolved inside jitted code only")


def row_entry(X, i, p):
    """``(j, x_ij)`` of the stored entry at position ``p`` of row ``i``."""
    raise NotImplementedError("row_entry is resolved inside jitted code only")


def row_dot(X, i, w, start):
    """``start + x_i·w``, summed left to right in increasing column order."""
    raise NotImplementedError("row_dot is resolved inside jitted code only")


def row_dot4(X, i, w, start):
    """``start + x_i·w`` in four partial sums for dense rows (see the module notes); CSR rows
    as :func:`row_dot`."""
    raise NotImplementedError("row_dot4 is resolved inside jitted code only")


def row_axpy(X, i, c, w):
    """``w[j] += c x_ij`` over the stored entries of row ``i``."""
    raise NotImplementedError("row_axpy is resolved inside jitted code only")


def row_sqnorm(X, i):
    """``‖x_i‖²`` (:func:`row_dot` of the row with itself, from 0)."""
    raise NotImplementedError("row_sqnorm is resolved inside jitted code only")


def prefetch_row(X, i):
    """Hint the CPU to load row ``i``'s entries (a hint: no value changes)."""
    raise NotImplementedError("prefetch_row is resolved inside jitted code only")


def prefetch_offsets(X, i):
    """Hint the CPU to load where row ``i`` starts (CSR's ``indptr[i]``; nothing for dense)."""
    raise NotImplementedError("prefetch_offsets is resolved inside jitted code only")


@overload(n_rows, inline="always")
def _n_rows(X):
    if _dense(X):
        return lambda X: X.shape[0]
    if _csr(X):
        return lambda X: X[0].shape[0] - 1
    return None


@overload(row_span, inline="always")
def _row_span(X, i):
    if _dense(X):
        return lambda X, i: (0, X.shape[1])
    if _csr(X):
        return lambda X, i: (X[0][i], X[0][i + 1])
    return None


@overload(row_entry, inline="always")
def _row_entry(X, i, p):
    if _dense(X):
        return lambda X, i, p: (p, X[i, p])
    if _csr(X):
        return lambda X, i, p: (X[1][p], X[2][p])
    return None


@overload(row_dot, inline="always")
def _row_dot(X, i, w, start):
    if _dense(X):

        def dense(X, i, w, start):
            acc = start
            for j in range(X.shape[1]):
                acc += X[i, j] * w[j]
            return acc

        return dense
    if _csr(X):

        def csr(X, i, w, start):
            indptr, indices, data = X[0], X[1], X[2]
            acc = start
            for p in range(indptr[i], indptr[i + 1]):
                acc += data[p] * w[indices[p]]
            return acc

        return csr
    return None


@overload(row_dot4, inline="always")
def _row_dot4(X, i, w, start):
    if _dense(X):

        def dense(X, i, w, start):
            d = X.shape[1]
            t0, t1, t2, t3 = 0.0, 0.0, 0.0, 0.0
            j = 0
            while j + 4 <= d:
                t0 += X[i, j] * w[j]
                t1 += X[i, j + 1] * w[j + 1]
                t2 += X[i, j + 2] * w[j + 2]
                t3 += X[i, j + 3] * w[j + 3]
                j += 4
            while j < d:  # a loop, not three ifs: these kept array references alive per row
                t0 += X[i, j] * w[j]
                j += 1
            return start + ((t0 + t1) + (t2 + t3))

        return dense
    if _csr(X):
        return lambda X, i, w, start: row_dot(X, i, w, start)
    return None


@overload(row_axpy, inline="always")
def _row_axpy(X, i, c, w):
    if _dense(X):

        def dense(X, i, c, w):
            for j in range(X.shape[1]):
                w[j] += c * X[i, j]

        return dense
    if _csr(X):

        def csr(X, i, c, w):
            indptr, indices, data = X[0], X[1], X[2]
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += c * data[p]

        return csr
    return None


@overload(row_sqnorm, inline="always")
def _row_sqnorm(X, i):
    if _dense(X):

        def dense(X, i):
            acc = 0.0
            for j in range(X.shape[1]):
                acc += X[i, j] * X[i, j]
            return acc

        return dense
    if _csr(X):

        def csr(X, i):
            indptr, data = X[0], X[2]
            acc = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                acc += data[p] * data[p]
            return acc

        return csr
    return None


@overload(prefetch_row, inline="always")
def _prefetch_row(X, i):
    if _dense(X):

        def dense(X, i):
            d = X.shape[1]
            prefetch_span(X, i * d, i * d + d)

        return dense
    if _csr(X):

        def csr(X, i):
            start, stop = X[0][i], X[0][i + 1]
            prefetch_span(X[2], start, stop)
            prefetch_span(X[1], start, stop)

        return csr
    return None


@overload(prefetch_offsets, inline="always")
def _prefetch_offsets(X, i):
    if _dense(X):
        return lambda X, i: None
    if _csr(X):
        return lambda X, i: prefetch(X[0], i)
    return None


def as_rows(X, index_dtype=None):
    """``X`` as the jitted loops take it: a C-contiguous float64 array, or the CSR tuple
    ``(indptr, indices, data)`` in canonical form (sorted indices, no duplicates) with float64
    ``data`` and ``indptr``, ``indices`` of one integer type: ``index_dtype`` if given, else
    int32 when both are int32, else int64."""
    if not sparse.issparse(X):
        return np.ascontiguousarray(X, dtype=np.float64)
    X = sparse.csr_matrix(X)
    if not X.has_canonical_format:  # duplicates summed, indices sorted (on a copy)
        X = X.copy()
        X.sum_duplicates()
    indptr, indices = X.indptr, X.indices
    if index_dtype is None and (indptr.dtype != indices.dtype or indptr.dtype != np.int32):
        index_dtype = np.int64
    if index_dtype is not None:
        indptr = indptr.astype(index_dtype, copy=False)
        indices = indices.astype(index_dtype, copy=False)
    return (
        np.ascontiguousarray(indptr),
        np.ascontiguousarray(indices),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )
