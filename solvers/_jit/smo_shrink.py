"""Shared by SMO's two loops: the kernel-column cache, shrinking and gradient reconstruction.

The problem is :mod:`solvers._jit.smo`'s, in minimization form::

    min_α  f(α) = ½ αᵀQ̃α − Σ_t α_t      s.t.  0 ≤ α_t ≤ C_t   (and yᵀα = 0 for a free bias)

with the gradient ``G = Q̃α − 1``, the index sets (free bias; ``status`` keeps them per variable,
:func:`bound_status`)::

    I_up  = {t : y_t = +1, α_t < C_t  or  y_t = −1, α_t > 0}
    I_low = {t : y_t = +1, α_t > 0    or  y_t = −1, α_t < C_t}

and the violations the stopping rules and the shrinking measure: ``m(α) − M(α)`` with
``m(α) = max_{I_up} −y_t G_t``, ``M(α) = min_{I_low} −y_t G_t`` (:func:`violation_pairs`), and
without the equality ``max_t |PG_t|``, the projected gradient of the box (:func:`violation_single`).

Shrinking and gradient reconstruction follow Chang & Lin (LIBSVM, ACM TIST 2011, §5): every
``min(n, 1000)`` updates the variables at a bound whose gradient pushes them into it harder than
the current maximal violation are removed from the active set (:func:`shrink_active`);
``Ḡ = Σ_{α_j = C_j} C_j Q̃_:j`` is kept (:func:`update_gbar`) so that
``G_t = Ḡ_t − 1 + Σ_{j free} α_j Q̃_tj`` rebuilds the gradient of shrunk variables
(:func:`reconstruct`: once when the violation first falls below ``10·eps``, and before declaring
convergence, :func:`grow_back`). The loops do not link it: they return :data:`RECONSTRUCT` and
the driver calls it between two calls of the loop (:func:`solvers._jit.smo.run_loop`), so
that its code is compiled once instead of again inside every loop that would link it.

Kernel columns ``Q̃_:i`` live in an LRU cache of ``n_slots`` rows of length n (:func:`get_column`).
Between two reconstructions the active set only shrinks, so a column computed on an earlier active
set is valid on the current one; a column is "full" when computed on every index (needed for Ḡ).
Columns that are not full are dropped when the active set grows back. The general form reads
kernel rows cached by row instead (:mod:`solvers._jit.smo_rows`). A column
wanted on at least ``FULL_FRACTION·n`` indices is computed whole from the transposed rows ``XT``
(contiguous loops that vectorize, the same sums in the same order) rather than gathered over the
active list. ``X`` and ``XT`` are dense arrays, or both the CSR tuple of
:mod:`solvers._jit.kernel_columns` (then a column is computed whole from ``FULL_FRACTION_CSR·n``
wanted entries on). The cache is float32 (LIBSVM's ``Qfloat``) or float64, as the driver chose
(``solvers.smo``); the gradient arithmetic is float64 either way. The integer counters ``ist``
(positions :data:`N_ACTIVE` … :data:`RECONSTRUCTIONS`) hold the size of the active set, the LRU
clock and the statistics.
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.kernel_columns import (
    column,
    column_full,
    full_fraction,
    kernel_column_serial,
)
from svmbench.solvers._jit.smo_counters import (  # noqa: F401 (re-exported: the loops' counters)
    CLOCK,
    HITS,
    MISSES,
    N_ACTIVE,
    N_IST,
    PENDING_SHRINK,
    RECONSTRUCTIONS,
    SHRINK_COUNTER,
    UNSHRUNK,
)
from svmbench.solvers._jit.smo_rows import general_column, lru_slot

#: A missing column is computed whole (contiguous, from ``XT``) when at least this fraction of
#: its entries is wanted: an entry over a gathered index list costs about twice one of a whole
#: column, and a whole column stays valid when the active set grows back; 0.2 to 0.5 measured
#: alike (docs/measurements.md, "smo").
FULL_FRACTION = 0.3

# ``need_full`` of get_column, as NumPy booleans: the literals True and False would type (and
# compile) get_column and its callees once for each.
PARTIAL = np.bool_(False)
WHOLE = np.bool_(True)


#: Return code of the loops (:mod:`solvers._jit.smo`) asking the driver for :func:`reconstruct`
#: before it calls them again (:func:`solvers._jit.smo.run_loop`).
RECONSTRUCT = 2


# ---- kernel-column cache -------------------------------------------------------------------------
@numba.njit(cache=True, inline="always")
def fill(i, idx, row, tmp, X, sqn, kint, kflt, y, QD):
    """``row[k] = Q̃_ki`` for k in idx (``row[i] = Q̃_ii`` always)."""
    m = idx.shape[0]
    column(X, sqn, i, idx, tmp[:m], kint[0], kflt[0], kflt[1], kint[1], kint[2])
    s2 = kflt[2]
    yi = y[i]
    for t in range(m):
        k = idx[t]
        row[k] = yi * y[k] * (tmp[t] + s2)
    row[i] = QD[i]


@numba.njit(cache=True, inline="always")
def fill_full(i, row, tmp, XT, sqn, kint, kflt, y, QD):
    """``row[k] = Q̃_ki`` for every k, from the transposed rows (contiguous loops)."""
    n = y.shape[0]
    s2 = kflt[2]
    yi = y[i]
    column_full(XT, sqn, i, tmp, kint[0], kflt[0], kflt[1], kint[1], kint[2])
    for k in range(n):
        row[k] = yi * y[k] * (tmp[k] + s2)
    row[i] = QD[i]


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def get_column(
    i,
    need_full,
    X,
    XT,
    sqn,
    kint,
    kflt,
    y,
    QD,
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
):
    """Slot of ``cache`` holding column ``Q̃_:i``, valid on the active set (on all if need_full).

    A miss takes a free slot or evicts the least recently used one (smallest ``stamp``). C-SVC's
    columns only: the general form reads the kernel row of i's row
    (:func:`~solvers._jit.smo_rows.general_column`).
    """
    n = y.shape[0]
    n_active = ist[N_ACTIVE]
    ist[CLOCK] += 1
    slot = col_slot[i]
    # one fill_full and one fill below (each is inlined: one copy of each in this function)
    if slot >= 0:
        stamp[slot] = ist[CLOCK]
        ist[HITS] += 1
        if not need_full or slot_full[slot] == 1:
            return slot
        # entries missing are those of indices inactive when the column was computed, a subset
        # of the indices inactive now; the column is full afterwards either way
        whole = n - n_active >= full_fraction(X, FULL_FRACTION) * n
        m = 0
        if not whole:
            for k in range(n):
                if is_active[k] == 0:
                    idx_buf[m] = k
                    m += 1
        idx = idx_buf[:m]
        full = 1
    else:
        ist[MISSES] += 1
        slot = lru_slot(i, slot_col, col_slot, stamp, ist[CLOCK])
        # the whole column costs less than the active part gathered: it is then full
        whole = need_full or n_active >= full_fraction(X, FULL_FRACTION) * n
        idx = active[:n_active]
        full = 1 if whole else 0
    if whole:
        fill_full(i, cache[slot], tmp, XT, sqn, kint, kflt, y, QD)
    else:
        fill(i, idx, cache[slot], tmp, X, sqn, kint, kflt, y, QD)
    slot_full[slot] = full
    return slot


# ---- gradient reconstruction and shrinking -------------------------------------------------------
def reconstruct(
    X,
    sqn,
    kint,
    kflt,
    y,
    C,
    alpha,
    G,
    Gbar,
    active,
    is_active,
    all_idx,
    slot_col,
    col_slot,
    slot_full,
    ist,
    rowmap,
    p,
):
    """Rebuild G on the inactive set, make every variable active, drop partial columns.

    ``G_t = Ḡ_t + p_t + Σ_{j free} α_j Q̃_tj`` with the linear term p (−1 when ``p`` is empty:
    C-SVC); with the general form's row map (``rowmap[0]``), the kernel is read on the
    variables' rows. Called by the driver between two calls of a loop (rarely: the loops do
    not link it): the bookkeeping in NumPy, the sums in :func:`kernel_sums`."""
    n = y.shape[0]
    n_active = int(ist[N_ACTIVE])
    if n_active < n:
        live = active[:n_active]
        cols = live[(alpha[live] > 0.0) & (alpha[live] < C[live])]  # the free, in active order
        coef = alpha[cols] * y[cols]
        rows = np.flatnonzero(is_active == 0)
        rows_x, cols_x = rows, cols
        if rowmap is not None:  # the general form: the kernel's rows of X
            rows_x, cols_x = rowmap[0][rows], rowmap[0][cols]
        sums = np.zeros(rows.shape[0])
        sums_of(X, kint)(X, sqn, kint, kflt, cols_x, coef, rows_x, np.empty(rows.shape[0]), sums)
        # inactive variables sit at a bound: at 0 they add nothing, at C_t they are in Ḡ
        if p.shape[0] == 0:
            G[rows] = Gbar[rows] - 1.0 + y[rows] * sums
        else:
            G[rows] = Gbar[rows] + p[rows] + y[rows] * sums
        ist[RECONSTRUCTIONS] += 1
    active[:] = all_idx
    is_active[:] = 1
    ist[N_ACTIVE] = n
    partial = (slot_col >= 0) & (slot_full == 0)
    col_slot[slot_col[partial]] = -1
    slot_col[partial] = -1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_sums(X, sqn, kint, kflt, cols, coef, rows, vals, sums):
    """``sums[r] += Σ_j coef_j (K(x_{rows[r]}, x_{cols[j]}) + s²)``, a kernel column per j on
    the rows (the columns' own code, no other kernel loop to compile), each sum in the order of
    ``cols``; ``vals`` is scratch of ``len(rows)``."""
    s2 = kflt[2]
    for j in range(cols.shape[0]):
        column(X, sqn, cols[j], rows, vals, kint[0], kflt[0], kflt[1], kint[1], kint[2])
        for r in range(rows.shape[0]):
            sums[r] += coef[j] * (vals[r] + s2)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kernel_sums_dense(X, sqn, kint, kflt, cols, coef, rows, vals, sums):
    """:func:`kernel_sums` of dense rows and serial columns, calling their loop directly: the
    ``column`` overload's body, inlined, is compiled again for each caller that types it."""
    s2 = kflt[2]
    for j in range(cols.shape[0]):
        kernel_column_serial(X, sqn, cols[j], rows, vals, kint[0], kflt[0], kflt[1], kint[1])
        for r in range(rows.shape[0]):
            sums[r] += coef[j] * (vals[r] + s2)


def sums_of(X, kint):
    """The kernel sums' function for the loops' rows ``X`` and ``kint``: :func:`kernel_sums_dense`
    for dense rows (or a Gram matrix) with serial columns, else :func:`kernel_sums`."""
    return kernel_sums_dense if isinstance(X, np.ndarray) and kint[2] is None else kernel_sums


def compile_reconstruct(core) -> None:
    """Compile the kernel sums of the loops' record ``core`` (:func:`sums_of`; the warm-ups: a run
    of the loops on a tiny problem may never shrink)."""
    none = np.empty(0, dtype=np.int64)
    empty = np.empty(0)
    sums_of(core.X, core.kint)(
        core.X, core.sqn, core.kint, core.kflt, none, empty, none, empty, empty
    )


@numba.njit(cache=True, inline="always")
def in_up(yt, at, ct):
    return (yt > 0.0 and at < ct) or (yt < 0.0 and at > 0.0)


@numba.njit(cache=True, inline="always")
def in_low(yt, at, ct):
    return (yt > 0.0 and at > 0.0) or (yt < 0.0 and at < ct)


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def bound_status(yt, at, ct):
    """Bit 0: t ∈ I_up; bit 1: t ∈ I_low (kept for each variable, as LIBSVM's alpha_status)."""
    return (1 if in_up(yt, at, ct) else 0) | (2 if in_low(yt, at, ct) else 0)


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def shrink_active(eps, pairs, y, C, alpha, G, active, ist, tmp):
    """Every ``min(n, 1000)`` updates (both loops): measure the maximal violation on the active
    set, keep it in ``tmp[0]``, ``tmp[1]`` for :func:`remove_shrunk` (``ist[PENDING_SHRINK]``),
    and return True when the active set must first grow back, once at ``10·eps``
    (:func:`reconstruct`, which the loops do not link: they return :data:`RECONSTRUCT`, the
    driver calls it and then the loop again, which finishes the shrinking). ``pairs``: the
    violation of the pair loop, else of the single one."""
    n_active = ist[N_ACTIVE]
    ist[SHRINK_COUNTER] = min(y.shape[0], 1000)
    if pairs:
        g1, g2 = violation_pairs(y, C, alpha, G, active, n_active)
        violation = g1 + g2
    else:
        g1 = violation_single(C, alpha, G, active, n_active)
        g2 = g1
        violation = g1
    tmp[0] = g1
    tmp[1] = g2
    ist[PENDING_SHRINK] = 1
    if ist[UNSHRUNK] == 0 and violation <= 10.0 * eps:
        ist[UNSHRUNK] = 1
        return True
    return False


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def remove_shrunk(pairs, y, C, alpha, G, active, is_active, ist, tmp, shrink):
    """Remove from the active set the variables at a bound whose gradient pushes them into it
    harder than the violations :func:`shrink_active` measured (Chang & Lin 2011, §5.1; the
    order kept)."""
    ist[PENDING_SHRINK] = 0
    g1 = tmp[0]
    g2 = tmp[1]
    n_active = ist[N_ACTIVE]
    for s in range(n_active):
        t = active[s]
        if pairs:
            up = in_up(y[t], alpha[t], C[t])
            low = in_low(y[t], alpha[t], C[t])
            if up and low:
                shrink[t] = False
            elif up:
                shrink[t] = y[t] * G[t] > g2
            elif low:
                shrink[t] = -y[t] * G[t] > g1
            else:
                shrink[t] = True  # C_t = 0: fixed at 0
        else:
            shrink[t] = (
                C[t] <= 0.0 or (alpha[t] <= 0.0 and G[t] > g1) or (alpha[t] >= C[t] and G[t] < -g1)
            )
    m = 0
    for s in range(n_active):
        t = active[s]
        if shrink[t]:
            is_active[t] = 0
        else:
            active[m] = t
            m += 1
    ist[N_ACTIVE] = m


@numba.njit(cache=True, inline="always")
def grow_back(y, ist):
    """Where the native rule holds on the active set (both loops): if variables are shrunk,
    their gradient must be rebuilt and all made active again (True: the loop returns
    :data:`RECONSTRUCT`, then goes on); else the rule holds on every variable (False)."""
    if ist[N_ACTIVE] == y.shape[0]:
        return False
    ist[SHRINK_COUNTER] = 2  # select on all variables before shrinking again
    return True


# ---- the violations of the native rules and Ḡ ----------------------------------------------------
@numba.njit(cache=True, inline="always")
def violation_pairs(y, C, alpha, G, active, n_active):
    """``(m(α), −M(α))`` on the active set: ``max_{I_up} −y_t G_t`` and ``max_{I_low} y_t G_t``."""
    gmax1 = -np.inf
    gmax2 = -np.inf
    for s in range(n_active):
        t = active[s]
        if in_up(y[t], alpha[t], C[t]):
            v = -y[t] * G[t]
            if v > gmax1:
                gmax1 = v
        if in_low(y[t], alpha[t], C[t]):
            v = y[t] * G[t]
            if v > gmax2:
                gmax2 = v
    return gmax1, gmax2


@numba.njit(cache=True, inline="always")
def projected_gradient(g, a, c):
    """The projected gradient of the box ``0 ≤ a ≤ c`` at one variable: ``min(g, 0)`` at
    ``a = 0``, ``max(g, 0)`` at ``a = c`` (0 when ``c = 0``), ``g`` inside."""
    if a <= 0.0:
        g = min(g, 0.0)
    if a >= c:
        g = max(g, 0.0)
    return g


@numba.njit(cache=True, inline="always")
def violation_single(C, alpha, G, active, n_active):
    """``max_t |PG_t|`` on the active set (projected gradient of the box)."""
    m = 0.0
    for s in range(n_active):
        t = active[s]
        m = max(m, abs(projected_gradient(G[t], alpha[t], C[t])))
    return m


@numba.njit(cache=True, inline="always")
def update_gbar(
    i,
    old,
    X,
    XT,
    sqn,
    kint,
    kflt,
    y,
    C,
    QD,
    alpha,
    Gbar,
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
    """Keep ``Ḡ = Σ_{α_j = C_j} C_j Q̃_:j`` when α_i enters or leaves its upper bound (rarely:
    the change itself, :func:`gbar_change`, is a compiled callee)."""
    if (old >= C[i]) != (alpha[i] >= C[i]):
        gbar_change(
            i,
            X,
            XT,
            sqn,
            kint,
            kflt,
            y,
            C,
            QD,
            alpha,
            Gbar,
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
        )


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def gbar_change(
    i,
    X,
    XT,
    sqn,
    kint,
    kflt,
    y,
    C,
    QD,
    alpha,
    Gbar,
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
    """``Ḡ += ±C_i Q̃_:i`` as α_i enters (+) or leaves (−) its upper bound. The general form
    (``rowmap`` not None) reads the kernel row of i's row, C-SVC (``cache`` not None) its
    column: each test is decided by the argument's type when this is compiled."""
    c = C[i] if alpha[i] >= C[i] else -C[i]
    if rowmap is not None:  # the kernel row of i's row: Q_ti = z_t z_i K[r_i, r_t]
        Qi = rowmap[1][general_column(i, XT, sqn, kint, kflt, ist, tmp, rowmap)]
        rows = rowmap[0]
        for t in range(y.shape[0]):
            Gbar[t] += c * (y[i] * y[t] * Qi[rows[t]])
    if cache is not None:
        s = get_column(
            i,
            WHOLE,
            X,
            XT,
            sqn,
            kint,
            kflt,
            y,
            QD,
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
        )
        Qi = cache[s]
        for t in range(y.shape[0]):
            Gbar[t] += c * Qi[t]
