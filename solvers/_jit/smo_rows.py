"""The general form's kernel columns: kernel rows cached by row of X, expanded to the variables.

LIBSVM's general dual (:mod:`solvers.smo_general`) has m variables on the rows of X (ε-SVR: 2n
variables, α_r and α*_r on row r), ``Q_st = z_s z_t (K(x_{r_s}, x_{r_t}) + s²)``. As LIBSVM's
``SVR_Q`` (Chang & Lin, ACM TIST 2011, §4), the kernel row ``K(x_r, ·) + s²`` over the n rows is
computed once per row and cached by row (float32 as LIBSVM's ``Qfloat`` when the driver chooses
so, else float64; an LRU cache of its own), and a variable's column ``Q_:i`` is expanded from it
with the signs into the loops' column cache (float64, a few columns, LRU): the variables of one
row share one kernel evaluation and the row cache holds twice as many rows per byte as columns of
m. The row cache is ``rowcache = (rows, krows, kslots, krow_slot)``: the row of each variable,
the cached kernel rows (slots × n), each slot's row (−1: free) and LRU stamp, and each row's
slot (−1: not cached).
"""

from __future__ import annotations

import numba

from svmbench.solvers._jit.kernel_columns import column_full
from svmbench.solvers._jit.smo_counters import (
    CLOCK,
    HITS,
    MISSES,
    N_ACTIVE,
    ROW_HITS,
    ROW_MISSES,
)


@numba.njit(cache=True)
def kernel_row_slot(r, XT, sqn, kint, kflt, ist, tmp, krows, kslots, krow_slot):
    """Slot of ``krows`` holding ``K(x_r, x_k) + s²`` for every row k of X (LRU over the slots;
    ``kslots[0]`` the row in each slot, −1 free, ``kslots[1]`` its stamp). A kernel row serves
    every variable on row r: ε-SVR's α_r and α*_r read one row, as LIBSVM's ``SVR_Q``."""
    ist[CLOCK] += 1
    ks = krow_slot[r]
    if ks >= 0:
        kslots[1, ks] = ist[CLOCK]
        ist[ROW_HITS] += 1
        return ks
    ist[ROW_MISSES] += 1
    ks = 0
    oldest = ist[CLOCK] + 1
    for s in range(kslots.shape[1]):
        if kslots[0, s] < 0:
            ks = s
            break
        if kslots[1, s] < oldest:
            oldest = kslots[1, s]
            ks = s
    if kslots[0, ks] >= 0:
        krow_slot[kslots[0, ks]] = -1
    kslots[0, ks] = r
    kslots[1, ks] = ist[CLOCK]
    krow_slot[r] = ks
    n_rows = krows.shape[1]
    column_full(XT, sqn, r, tmp[:n_rows], kint[0], kflt[0], kflt[1], kint[1], kint[2])
    s2 = kflt[2]
    out = krows[ks]
    for k in range(n_rows):
        out[k] = tmp[k] + s2
    return ks


@numba.njit(cache=True)
def expand_row(i, idx, row, y, QD, krow, rows):
    """``row[k] = Q_ki = z_i z_k krow[r_k]`` for k in ``idx`` (``row[i] = Q_ii`` always)."""
    zi = y[i]
    if idx.shape[0] == row.shape[0]:  # every variable (idx is 0, 1, …, m − 1): contiguous
        for k in range(row.shape[0]):
            row[k] = zi * y[k] * krow[rows[k]]
    else:
        for s in range(idx.shape[0]):
            k = idx[s]
            row[k] = zi * y[k] * krow[rows[k]]
    row[i] = QD[i]


@numba.njit(cache=True)
def general_column(
    i, need_full, XT, sqn, kint, kflt, y, QD, active, all_idx, cache, slot_col, col_slot,
    slot_full, stamp, ist, tmp, rowcache,
):  # fmt: skip
    """:func:`get_column` of the general form: the variable's column ``Q_:i`` expanded from the
    kernel row of its row (:func:`kernel_row_slot`) on the active variables (on all if
    ``need_full`` or none is shrunk)."""
    rows, krows, kslots, krow_slot = rowcache
    n = y.shape[0]
    n_active = ist[N_ACTIVE]
    ist[CLOCK] += 1
    slot = col_slot[i]
    if slot >= 0:
        stamp[slot] = ist[CLOCK]
        ist[HITS] += 1
        if need_full and slot_full[slot] == 0:
            ks = kernel_row_slot(rows[i], XT, sqn, kint, kflt, ist, tmp, krows, kslots, krow_slot)
            expand_row(i, all_idx, cache[slot], y, QD, krows[ks], rows)
            slot_full[slot] = 1
        return slot
    ist[MISSES] += 1
    slot = -1
    oldest = ist[CLOCK] + 1
    for s in range(slot_col.shape[0]):
        if slot_col[s] < 0:
            slot = s
            break
        if stamp[s] < oldest:
            oldest = stamp[s]
            slot = s
    if slot_col[slot] >= 0:
        col_slot[slot_col[slot]] = -1
    slot_col[slot] = i
    col_slot[i] = slot
    stamp[slot] = ist[CLOCK]
    ks = kernel_row_slot(rows[i], XT, sqn, kint, kflt, ist, tmp, krows, kslots, krow_slot)
    if need_full or n_active == n:
        expand_row(i, all_idx, cache[slot], y, QD, krows[ks], rows)
        slot_full[slot] = 1
    else:
        expand_row(i, active[:n_active], cache[slot], y, QD, krows[ks], rows)
        slot_full[slot] = 0
    return slot
