"""Kernel columns read from a table of kernel rows shared by several problems on one X.

A one-vs-one reduction's pairs hold overlapping rows of one X
(:class:`~problems.kernel_rows.KernelRows`): the table keeps ``K(x_r, x_t)`` for the rows of X
sorted by class, row r's block of class g (its columns ``starts[g] ≤ t < starts[g + 1]``)
computed once, when a pair holding classes of both asks for it. A pair's SMO runs on its own
column cache as any kernel dual (:mod:`solvers._jit.smo_shrink`, the contiguous loops of C-SVC);
only its columns come from the table: the column of variable i is the table row of i's row,
gathered over the pair's rows.

The jitted callers see the table as the rows ``X`` (and ``XT``) of the columns: the tuple
``(pos, krows, done, starts, want, XT, sqn)`` (the table row of each variable, the table, the
blocks computed per row, the blocks' bounds, the blocks the pair reads, the table's transposed
rows and their squared norms), recognized by :func:`is_table` where
:func:`~solvers._jit.kernel_columns.column` and ``column_full`` choose their code by the rows'
type.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

from svmbench.solvers._jit.kernel_values import dots_block, from_dots_block, nonzero_features

#: The length of the table tuple (:func:`is_table`).
TABLE_FIELDS = 7


def is_table(X) -> bool:
    """Whether the Numba type ``X`` is the table tuple (its second field a 2-D array; the CSR
    tuple's is 1-D)."""
    return (
        isinstance(X, types.BaseTuple)
        and len(X) == TABLE_FIELDS
        and isinstance(X[1], types.Array)
        and X[1].ndim == 2
    )


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def table_block(XT, sqn, r, out, lo, hi, kind, gamma, coef0, degree, feats):
    """``out[t] = K(x_r, x_t)`` for ``lo ≤ t < hi`` from the dense transposed rows ``XT``
    (d × n) over the features where ``x_r`` is not 0 (listed in the scratch ``feats``): the
    values of a whole kernel column, entry for entry
    (:func:`~solvers._jit.kernel_values.dots_block`)."""
    dots_block(XT, r, out, lo, hi, feats, nonzero_features(XT, r, feats))
    from_dots_block(out, sqn, r, lo, hi, kind, gamma, coef0, degree)


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def table_row(table, r, kind, gamma, coef0, degree):
    """Row r of the table with the blocks the problem reads computed (those missing now)."""
    krows, done, starts, want, XT, sqn = table[1:]
    out = krows[r]
    missing = 0
    for w in range(want.shape[0]):
        missing += done[r, want[w]] == 0
    if missing == 0:
        return out
    feats = np.empty(XT.shape[0], dtype=np.int64)
    for w in range(want.shape[0]):
        g = want[w]
        if done[r, g] == 0:
            lo, hi = starts[g], starts[g + 1]
            table_block(XT, sqn, r, out, lo, hi, kind, gamma, coef0, degree, feats)
            done[r, g] = 1
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def table_column(table, i, idx, out, kind, gamma, coef0, degree):
    """``out[t] = K(x_i, x_{idx[t]})`` for the problem's variables i and ``idx``."""
    pos = table[0]
    row = table_row(table, pos[i], kind, gamma, coef0, degree)
    for t in range(idx.shape[0]):
        out[t] = row[pos[idx[t]]]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def table_column_full(table, i, out, kind, gamma, coef0, degree):
    """``out[t] = K(x_i, x_t)`` for every variable t of the problem."""
    pos = table[0]
    row = table_row(table, pos[i], kind, gamma, coef0, degree)
    for t in range(out.shape[0]):
        out[t] = row[pos[t]]
