"""The general form's kernel columns: kernel rows cached by row of X, expanded per variable.

LIBSVM's general dual (:mod:`solvers.smo_general`) has m variables on the rows of X (ε-SVR: 2n
variables, α_r and α*_r on row r), ``Q_st = z_s z_t (K(x_{r_s}, x_{r_t}) + s²)``. As LIBSVM's
``SVR_Q`` (Chang & Lin, ACM TIST 2011, §4), the kernel row ``K(x_r, ·) + s²`` over the n rows is
computed once per row and cached by row (float32 as LIBSVM's ``Qfloat`` when the driver chooses
so, else float64; LRU): the variables of one row share one kernel evaluation, and the cache holds
twice as many rows per byte as it would columns of m. A variable's column ``Q_:i`` is expanded
from its row's kernel row into a few column slots of the loops' own column cache
(``Q_ti = z_t z_i krow[r_t]``, exact: the signs are ±1), so that the loops of
:mod:`solvers._jit.smo` and :mod:`solvers._jit.smo_nu` read ``cache[slot]`` for C-SVC and the
general form alike and compile once for both.

The general form's ``rowmap = (rows, krows, kslots, krow_slot)`` holds the row of each variable;
the cached kernel rows, slots × n; each slot's row (−1 free) and its LRU stamp; each row's slot
(−1 not cached). C-SVC passes :func:`no_rows` (every array empty): :func:`has_rows` tells the two
apart at run time.
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.kernel_columns import column_full
from svmbench.solvers._jit.smo_counters import CLOCK, HITS, MISSES, N_ACTIVE


def no_rows(dtype) -> tuple:
    """The row map of a problem without one (C-SVC): empty arrays of the general form's types,
    the kernel rows in the column cache's ``dtype``, so that both share the loops' signature."""
    return (
        np.empty(0, dtype=np.int64),
        np.empty((0, 0), dtype=dtype),
        np.empty((2, 0), dtype=np.int64),
        np.empty(0, dtype=np.int64),
    )


@numba.njit(cache=True, inline="always")
def has_rows(rowmap):
    """Whether ``rowmap`` is a general form's row map (not :func:`no_rows`)."""
    return rowmap[0].shape[0] > 0


@numba.njit(cache=True)
def lru_slot(key, slot_key, key_slot, stamp, clock):
    """A slot for ``key``: a free one (``slot_key`` −1), else the least recently used (smallest
    ``stamp``), whose key is unlinked; ``key`` is linked to it and stamped with ``clock``."""
    slot = 0
    oldest = clock + 1
    for s in range(slot_key.shape[0]):
        if slot_key[s] < 0:
            slot = s
            break
        if stamp[s] < oldest:
            oldest = stamp[s]
            slot = s
    if slot_key[slot] >= 0:
        key_slot[slot_key[slot]] = -1
    slot_key[slot] = key
    key_slot[key] = slot
    stamp[slot] = clock
    return slot


@numba.njit(cache=True)
def kernel_row_slot(r, XT, sqn, kint, kflt, ist, tmp, krows, kslots, krow_slot):
    """Slot of ``krows`` holding ``K(x_r, x_k) + s²`` for every row k of X (LRU over the slots;
    ``kslots[0]`` the row in each slot, −1 free, ``kslots[1]`` its stamp). A kernel row serves
    every variable on row r: ε-SVR's α_r and α*_r read one row, as LIBSVM's ``SVR_Q``."""
    ist[CLOCK] += 1
    ks = krow_slot[r]
    if ks >= 0:
        kslots[1, ks] = ist[CLOCK]
        ist[HITS] += 1
        return ks
    ist[MISSES] += 1
    ks = lru_slot(r, kslots[0], krow_slot, kslots[1], ist[CLOCK])
    n_rows = krows.shape[1]
    column_full(XT, sqn, r, tmp[:n_rows], kint[0], kflt[0], kflt[1], kint[1], kint[2])
    s2 = kflt[2]
    out = krows[ks]
    for k in range(n_rows):
        out[k] = tmp[k] + s2
    return ks


@numba.njit(cache=True)
def expand(i, idx, out, y, XT, sqn, kint, kflt, ist, tmp, rowmap):
    """``out[t] = Q_ti = z_t z_i krow[r_t]`` for t in ``idx``, from the kernel row of i's row."""
    rows, krows, kslots, krow_slot = rowmap
    krow = krows[kernel_row_slot(rows[i], XT, sqn, kint, kflt, ist, tmp, krows, kslots, krow_slot)]
    zi = y[i]
    for s in range(idx.shape[0]):
        t = idx[s]
        out[t] = zi * y[t] * krow[rows[t]]


@numba.njit(cache=True)
def general_column(
    i,
    need_full,
    XT,
    sqn,
    kint,
    kflt,
    y,
    active,
    is_active,
    all_idx,
    cache,
    slot_col,
    col_slot,
    slot_full,
    stamp,
    ist,
    idx_buf,
    tmp,
    rowmap,
):
    """The general form's :func:`~solvers._jit.smo_shrink.get_column`: the slot of ``cache``
    holding ``Q_:i`` on the active set (on every variable if ``need_full``), expanded from the
    kernel row of i's row on a miss (:func:`expand`). The hits and misses counted are the kernel
    rows' (:func:`kernel_row_slot`)."""
    m = y.shape[0]
    n_active = ist[N_ACTIVE]
    ist[CLOCK] += 1
    slot = col_slot[i]
    if slot >= 0:
        stamp[slot] = ist[CLOCK]
        if need_full and slot_full[slot] == 0:
            # the entries missing: those of variables inactive when the column was expanded
            k = 0
            for t in range(m):
                if is_active[t] == 0:
                    idx_buf[k] = t
                    k += 1
            expand(i, idx_buf[:k], cache[slot], y, XT, sqn, kint, kflt, ist, tmp, rowmap)
            slot_full[slot] = 1
        return slot
    slot = lru_slot(i, slot_col, col_slot, stamp, ist[CLOCK])
    if need_full or n_active == m:
        expand(i, all_idx, cache[slot], y, XT, sqn, kint, kflt, ist, tmp, rowmap)
        slot_full[slot] = 1
    else:
        expand(i, active[:n_active], cache[slot], y, XT, sqn, kint, kflt, ist, tmp, rowmap)
        slot_full[slot] = 0
    return slot
