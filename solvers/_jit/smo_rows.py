"""The general form's kernel columns: kernel rows cached by row of X, read through the row map.

LIBSVM's general dual (:mod:`solvers.smo_general`) has m variables on the rows of X (ε-SVR: 2n
variables, α_r and α*_r on row r), ``Q_st = z_s z_t (K(x_{r_s}, x_{r_t}) + s²)``. As LIBSVM's
``SVR_Q`` (Chang & Lin, ACM TIST 2011, §4), the kernel row ``K(x_r, ·) + s²`` over the n rows is
computed once per row and cached by row (float32 as LIBSVM's ``Qfloat`` when the driver chooses
so, else float64; LRU): the variables of one row share one kernel evaluation, and the cache holds
twice as many rows per byte as it would columns of m. The loops read ``Q_ti`` as
``z_t z_i krow_i[r_t]`` instead of expanding a column of m per fetch (LIBSVM's ``get_Q`` does,
which took a quarter more time per ε-SVR solve here).

The loops of :mod:`solvers._jit.smo` and :mod:`solvers._jit.smo_nu` read the general form's
``rowmap = (rows, krows, kslots, krow_slot)`` (the row of each variable; the cached kernel rows,
slots × n; each slot's row, −1 free, and its LRU stamp; each row's slot, −1 not cached) through
:func:`general_column`. C-SVC passes ``rowmap = None`` (:func:`no_rows`) and the general form
``cache = None`` (no column cache): the loops test ``rowmap is not None`` and ``cache is not
None``, which Numba's branch pruning decides from the arguments' types before typing, so that
each kind compiles its own code alone (C-SVC's fit compiles none of the general form's reads).
"""

from __future__ import annotations

import numba

from svmbench.solvers._jit.kernel_columns import column_full
from svmbench.solvers._jit.smo_counters import CLOCK, HITS, MISSES


def no_rows(dtype) -> None:
    """The row map of a problem without one (C-SVC, whatever the column cache's ``dtype``):
    None, by whose type Numba prunes the general form's branches from the loops."""
    return None


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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


@numba.njit(cache=True, inline="always")
def general_column(i, XT, sqn, kint, kflt, ist, tmp, rowcache):
    """The general form's :func:`~solvers._jit.smo_shrink.get_column`: the slot of the kernel
    row of variable i's row (computed on a miss, :func:`kernel_row_slot`), a whole row (a
    one-line wrapper, inlined at its call sites)."""
    rows, krows, kslots, krow_slot = rowcache
    return kernel_row_slot(rows[i], XT, sqn, kint, kflt, ist, tmp, krows, kslots, krow_slot)
