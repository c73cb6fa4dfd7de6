"""Jitted core of SMO: working-set selection, updates, kernel-column cache, shrinking.

The problem, in minimization form (ARCHITECTURE.md §2, with ``f = −D``)::

    min_α  f(α) = ½ αᵀQ̃α − Σ_t α_t      s.t.  0 ≤ α_t ≤ C_t   (and yᵀα = 0 for a free bias)

    Q̃_tk = y_t y_k (K_tk + s²) + δ_tk / (2 C_t)

with ``s² = bias_scale²`` for a regularized bias (0 otherwise) and the diagonal term only for the
squared hinge (then ``C_t = ∞``). The gradient ``G = Q̃α − 1`` is kept up to date.

Free bias: pairs (Platt 1998) chosen by the second-order rule WSS2 of Fan, Chen & Lin (JMLR 2005)::

    I_up  = {t : y_t = +1, α_t < C_t  or  y_t = −1, α_t > 0}
    I_low = {t : y_t = +1, α_t > 0    or  y_t = −1, α_t < C_t}
    i = argmax_{t ∈ I_up} −y_t G_t                                     (m(α) = that max)
    j = argmin_{t ∈ I_low, −y_t G_t < m(α)} −b_it² / a_it,   b_it = m(α) + y_t G_t,
        a_it = Q̃_ii + Q̃_tt − 2 y_i y_t Q̃_it   (replaced by τ = 1e-12 when ≤ 0)

then α moves along ``d_i = y_i, d_j = −y_j`` (which keeps yᵀα) by ``min(b_ij / a_ij, room)``.
The stopping rule is LIBSVM's maximal violating pair: ``m(α) − M(α) ≤ eps`` with
``M(α) = min_{t ∈ I_low} −y_t G_t``.

No or regularized bias (no equality): one variable per update, the one whose clipped Newton step
``d_t = clip(α_t − G_t/Q̃_tt, 0, C_t) − α_t`` decreases f most (``−G_t d_t − ½Q̃_tt d_t²``, a
second-order greedy rule); the stopping rule is ``max_t |PG_t| ≤ eps`` (projected gradient).

Shrinking and gradient reconstruction follow Chang & Lin (LIBSVM, ACM TIST 2011, §5): every
``min(n, 1000)`` updates the variables at a bound whose gradient pushes them into it harder than
the current maximal violation are removed from the active set; ``Ḡ = Σ_{α_j = C_j} C_j Q̃_:j`` is
kept so that ``G_t = Ḡ_t − 1 + Σ_{j free} α_j Q̃_tj`` rebuilds the gradient of shrunk variables
(once when the violation first falls below ``10·eps``, and before declaring convergence).

Kernel columns ``Q̃_:i`` live in an LRU cache of ``n_slots`` rows of length n. Between two
reconstructions the active set only shrinks, so a column computed on an earlier active set is
valid on the current one; a column is "full" when computed on every index (needed for Ḡ).
Columns that are not full are dropped when the active set grows back. A column wanted on at least
``FULL_FRACTION·n`` indices is computed whole from the transposed rows ``XT`` (contiguous loops
that vectorize, the same sums in the same order) rather than gathered over the active list. ``X``
and ``XT`` are dense arrays, or both the CSR tuple of :mod:`solvers._jit.kernel_columns` (then a
column is computed whole from ``FULL_FRACTION_CSR·n`` wanted entries on). The cache is float32
(LIBSVM's ``Qfloat``) or float64, as the driver chose (``solvers.smo``); the gradient arithmetic
is float64 either way.

The driver keeps these arrays as one record, :class:`Core`, unpacked into the loops' arguments
(the record passed whole into the jitted code ran as fast but compiled 1.5x slower: see
``benchmarks/bench_smo_record.py``); the two loops share the shrinking (:func:`_shrink`) and the
growing back (:func:`_grow_back`).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from svmbench.solvers._jit.kernel_columns import column, column_full, dot_rows, full_fraction

#: Curvature used in place of a non-positive ``a_ij`` (indefinite kernels), Fan et al. (2005) §4.
TAU = 1e-12

#: A missing column is computed whole (contiguous, from ``XT``) when at least this fraction of
#: its entries is wanted: an entry over a gathered index list costs about twice one of a whole
#: column (RBF, d = 20: 9.8 against 5.3 ns), and a whole column stays valid when the active set
#: grows back (measured on gaussian n = 10 000: 0.2-0.5 alike, 1.0 about 35% slower).
FULL_FRACTION = 0.3

# Integer state ``ist``: positions.
N_ACTIVE = 0  # size of the active set (its indices are active[:n_active])
CLOCK = 1  # LRU clock
HITS = 2  # cache hits
MISSES = 3  # cache misses (columns computed)
SHRINK_COUNTER = 4  # updates left before the next shrinking
UNSHRUNK = 5  # 1 once the active set was grown back at 10·eps in this phase
RECONSTRUCTIONS = 6  # gradient reconstructions done
N_IST = 7

# Return codes of the chunk runners.
BUDGET = 0  # the update budget of the chunk was spent
CONVERGED = 1  # the native rule holds on every variable (G is then complete)


class Core(NamedTuple):
    """The arrays the loops read and update in place, in the order of their arguments: the
    driver keeps them as one record and calls ``smo_pairs(max_updates, eps, shrinking, *core)``
    (n examples, ``n_slots`` cached columns)."""

    X: np.ndarray | tuple  # dense rows (n × d), the CSR tuple of kernel_columns, or the Gram
    XT: np.ndarray | tuple  # X transposed, C-contiguous (d × n); X itself if CSR or Gram
    sqn: np.ndarray  # ‖x_t‖²
    kint: np.ndarray  # (kernel code, degree, Numba threads)
    kflt: np.ndarray  # (γ, coef0, s²)
    y: np.ndarray
    C: np.ndarray  # upper bounds C_t (∞ for the squared hinge)
    QD: np.ndarray  # Q̃_tt
    alpha: np.ndarray
    G: np.ndarray  # ∇f = Q̃α − 1 (exact on the active set)
    Gbar: np.ndarray  # Ḡ = Σ_{α_j = C_j} C_j Q̃_:j (kept only when shrinking)
    active: np.ndarray  # int64: the active set is active[:ist[N_ACTIVE]]
    is_active: np.ndarray  # uint8
    all_idx: np.ndarray  # 0, …, n − 1
    cache: np.ndarray  # (n_slots × n) float32 or float64: the cached columns Q̃_:i
    slot_col: np.ndarray  # column in each slot (−1: free)
    col_slot: np.ndarray  # slot of each column (−1: not cached)
    slot_full: np.ndarray  # uint8: 1 if the slot's column was computed on every index
    stamp: np.ndarray  # LRU stamp of each slot
    ist: np.ndarray  # int64 counters, positions N_ACTIVE … RECONSTRUCTIONS
    idx_buf: np.ndarray  # int64 scratch of n
    tmp: np.ndarray  # float64 scratch of n
    shrink_buf: np.ndarray  # bool scratch of n
    status: np.ndarray  # uint8: bit 0 t ∈ I_up, bit 1 t ∈ I_low (free bias only)


# ---- kernel-column cache -------------------------------------------------------------------------
@numba.njit(cache=True)
def _fill(i, idx, row, tmp, X, sqn, kint, kflt, y, QD):
    """``row[k] = Q̃_ki`` for k in idx (``row[i] = Q̃_ii`` always)."""
    m = idx.shape[0]
    column(X, sqn, i, idx, tmp[:m], kint[0], kflt[0], kflt[1], kint[1], kint[2])
    s2 = kflt[2]
    yi = y[i]
    for t in range(m):
        k = idx[t]
        row[k] = yi * y[k] * (tmp[t] + s2)
    row[i] = QD[i]


@numba.njit(cache=True)
def _fill_full(i, row, tmp, XT, sqn, kint, kflt, y, QD):
    """``row[k] = Q̃_ki`` for every k, from the transposed rows (contiguous loops)."""
    n = y.shape[0]
    column_full(XT, sqn, i, tmp, kint[0], kflt[0], kflt[1], kint[1], kint[2])
    s2 = kflt[2]
    yi = y[i]
    for k in range(n):
        row[k] = yi * y[k] * (tmp[k] + s2)
    row[i] = QD[i]


@numba.njit(cache=True)
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

    A miss takes a free slot or evicts the least recently used one (smallest ``stamp``).
    """
    n = y.shape[0]
    n_active = ist[N_ACTIVE]
    ist[CLOCK] += 1
    slot = col_slot[i]
    if slot >= 0:
        stamp[slot] = ist[CLOCK]
        ist[HITS] += 1
        if need_full and slot_full[slot] == 0:
            # entries missing are those of indices inactive when the column was computed, a
            # subset of the indices inactive now
            m = n - n_active
            if m >= full_fraction(X, FULL_FRACTION) * n:
                _fill_full(i, cache[slot], tmp, XT, sqn, kint, kflt, y, QD)
            else:
                m = 0
                for k in range(n):
                    if is_active[k] == 0:
                        idx_buf[m] = k
                        m += 1
                _fill(i, idx_buf[:m], cache[slot], tmp, X, sqn, kint, kflt, y, QD)
            slot_full[slot] = 1
        return slot
    ist[MISSES] += 1
    n_slots = slot_col.shape[0]
    slot = -1
    oldest = ist[CLOCK] + 1
    for s in range(n_slots):
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
    if need_full or n_active >= full_fraction(X, FULL_FRACTION) * n:
        # the whole column costs less than the active part gathered: it is then full
        _fill_full(i, cache[slot], tmp, XT, sqn, kint, kflt, y, QD)
        slot_full[slot] = 1
    else:
        _fill(i, active[:n_active], cache[slot], tmp, X, sqn, kint, kflt, y, QD)
        slot_full[slot] = 0
    return slot


# ---- gradient reconstruction and shrinking -------------------------------------------------------
@numba.njit(cache=True)
def _reconstruct(
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
):
    """Rebuild G on the inactive set, make every variable active, drop partial columns."""
    n = y.shape[0]
    n_active = ist[N_ACTIVE]
    if n_active < n:
        n_free = 0
        for s in range(n_active):
            t = active[s]
            if alpha[t] > 0.0 and alpha[t] < C[t]:
                n_free += 1
        cols = np.empty(n_free, dtype=np.int64)
        coef = np.empty(n_free)
        f = 0
        for s in range(n_active):
            t = active[s]
            if alpha[t] > 0.0 and alpha[t] < C[t]:
                cols[f] = t
                coef[f] = alpha[t] * y[t]
                f += 1
        rows = np.empty(n - n_active, dtype=np.int64)
        r = 0
        for t in range(n):
            if is_active[t] == 0:
                rows[r] = t
                r += 1
        sums = dot_rows(X, sqn, rows, cols, coef, kint[0], kflt[0], kflt[1], kint[1], kflt[2])
        for r in range(rows.shape[0]):
            t = rows[r]
            # inactive variables sit at a bound: at 0 they add nothing, at C_t they are in Ḡ
            G[t] = Gbar[t] - 1.0 + y[t] * sums[r]
        ist[RECONSTRUCTIONS] += 1
    for t in range(n):
        active[t] = all_idx[t]
        is_active[t] = 1
    ist[N_ACTIVE] = n
    for s in range(slot_col.shape[0]):
        if slot_col[s] >= 0 and slot_full[s] == 0:
            col_slot[slot_col[s]] = -1
            slot_col[s] = -1


@numba.njit(cache=True, inline="always")
def _in_up(yt, at, ct):
    return (yt > 0.0 and at < ct) or (yt < 0.0 and at > 0.0)


@numba.njit(cache=True, inline="always")
def _in_low(yt, at, ct):
    return (yt > 0.0 and at > 0.0) or (yt < 0.0 and at < ct)


@numba.njit(cache=True)
def bound_status(yt, at, ct):
    """Bit 0: t ∈ I_up; bit 1: t ∈ I_low (kept for each variable, as LIBSVM's alpha_status)."""
    return (1 if _in_up(yt, at, ct) else 0) | (2 if _in_low(yt, at, ct) else 0)


@numba.njit(cache=True)
def _shrink(
    eps,
    pairs,
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
    shrink,
):
    """Every ``min(n, 1000)`` updates (both loops): grow back once at ``10·eps``
    (:func:`_reconstruct`), then remove from the active set the variables at a bound whose
    gradient pushes them into it harder than the current maximal violation (Chang & Lin 2011,
    §5.1; the order kept). ``pairs``: the violation of the pair loop, else of the single one."""
    n_active = ist[N_ACTIVE]
    ist[SHRINK_COUNTER] = min(y.shape[0], 1000)
    if pairs:
        g1, g2 = violation_pairs(y, C, alpha, G, active, n_active)
        violation = g1 + g2
    else:
        g1 = violation_single(C, alpha, G, active, n_active)
        g2 = g1
        violation = g1
    if ist[UNSHRUNK] == 0 and violation <= 10.0 * eps:
        ist[UNSHRUNK] = 1
        _reconstruct(
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
        )
    n_active = ist[N_ACTIVE]
    for s in range(n_active):
        t = active[s]
        if pairs:
            up = _in_up(y[t], alpha[t], C[t])
            low = _in_low(y[t], alpha[t], C[t])
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


@numba.njit(cache=True)
def _grow_back(
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
):
    """Where the native rule holds on the active set (both loops): if variables are shrunk,
    rebuild their gradient and make them all active again (True: go on); else the rule holds on
    every variable (False)."""
    if ist[N_ACTIVE] == y.shape[0]:
        return False
    _reconstruct(
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
    )
    ist[SHRINK_COUNTER] = 2  # select on all variables before shrinking again
    return True


# ---- free bias: pair updates ---------------------------------------------------------------------
@numba.njit(cache=True)
def violation_pairs(y, C, alpha, G, active, n_active):
    """``(m(α), −M(α))`` on the active set: ``max_{I_up} −y_t G_t`` and ``max_{I_low} y_t G_t``."""
    gmax1 = -np.inf
    gmax2 = -np.inf
    for s in range(n_active):
        t = active[s]
        if _in_up(y[t], alpha[t], C[t]):
            v = -y[t] * G[t]
            if v > gmax1:
                gmax1 = v
        if _in_low(y[t], alpha[t], C[t]):
            v = y[t] * G[t]
            if v > gmax2:
                gmax2 = v
    return gmax1, gmax2


@numba.njit(cache=True)
def smo_pairs(
    max_updates,
    eps,
    shrinking,
    X,
    XT,
    sqn,
    kint,
    kflt,
    y,
    C,
    QD,
    alpha,
    G,
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
    shrink_buf,
    status,
):
    """Run at most ``max_updates`` pair updates; return ``(updates done, code)``.

    ``code`` is ``CONVERGED`` when ``m(α) − M(α) < eps`` on all variables (gradient complete),
    ``BUDGET`` otherwise. Arrays are updated in place.
    """
    n = y.shape[0]
    done = 0
    # i of the next update found during the gradient update (the same scan, fused), valid until
    # the active set or G changes otherwise (shrinking, reconstruction)
    have_next = False
    next_i = -1
    next_gmax = -np.inf
    while True:
        if shrinking:
            ist[SHRINK_COUNTER] -= 1
            if ist[SHRINK_COUNTER] <= 0:
                have_next = False
                _shrink(
                    eps,
                    True,
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
                    shrink_buf,
                )
        if done >= max_updates:
            return done, BUDGET
        # ---- working set: i by the maximal violation, j by WSS2
        n_active = ist[N_ACTIVE]
        if have_next:
            gmax = next_gmax
            i = next_i
        else:
            gmax = -np.inf
            i = -1
            for s in range(n_active):
                t = active[s]
                if status[t] & 1:  # t ∈ I_up
                    v = -y[t] * G[t]
                    if v >= gmax:
                        gmax = v
                        i = t
        have_next = False
        j = -1
        gmax2 = -np.inf
        if i >= 0:
            si = get_column(
                i,
                False,
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
            Qi = cache[si]
            obj_min = np.inf
            for s in range(n_active):
                t = active[s]
                if status[t] & 2:  # t ∈ I_low
                    v = y[t] * G[t]
                    if v > gmax2:
                        gmax2 = v
                    b = gmax + v
                    if b > 0.0:
                        a = QD[i] + QD[t] - 2.0 * y[i] * y[t] * Qi[t]
                        if a <= 0.0:
                            a = TAU
                        obj = -b * b / a
                        if obj <= obj_min:
                            obj_min = obj
                            j = t
        if j < 0 or gmax + gmax2 < eps:
            # check the shrunk variables too before declaring convergence
            if _grow_back(
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
            ):
                continue
            return done, CONVERGED
        # ---- update along d_i = y_i, d_j = −y_j (keeps yᵀα)
        sj = get_column(
            j,
            False,
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
        si = col_slot[i]  # still cached: it was the most recent column before j's
        Qi = cache[si]
        Qj = cache[sj]
        a = QD[i] + QD[j] - 2.0 * y[i] * y[j] * Qi[j]
        if a <= 0.0:
            a = TAU
        b = -y[i] * G[i] + y[j] * G[j]
        step = b / a
        room_i = C[i] - alpha[i] if y[i] > 0.0 else alpha[i]
        room_j = alpha[j] if y[j] > 0.0 else C[j] - alpha[j]
        if room_i < step:
            step = room_i
        if room_j < step:
            step = room_j
        old_i = alpha[i]
        old_j = alpha[j]
        # a variable whose room limits the step lands exactly on its bound
        if step == room_i:
            alpha[i] = C[i] if y[i] > 0.0 else 0.0
        else:
            alpha[i] = old_i + y[i] * step
        if step == room_j:
            alpha[j] = 0.0 if y[j] > 0.0 else C[j]
        else:
            alpha[j] = old_j - y[j] * step
        status[i] = bound_status(y[i], alpha[i], C[i])
        status[j] = bound_status(y[j], alpha[j], C[j])
        da_i = alpha[i] - old_i
        da_j = alpha[j] - old_j
        if ist[N_ACTIVE] == n:  # contiguous: the loop vectorizes
            for t in range(n):
                G[t] += Qi[t] * da_i + Qj[t] * da_j
        else:
            # with the scan for the next i (the same order and ties as the scan above)
            next_gmax = -np.inf
            next_i = -1
            for s in range(ist[N_ACTIVE]):
                t = active[s]
                g = G[t] + (Qi[t] * da_i + Qj[t] * da_j)
                G[t] = g
                if status[t] & 1:
                    v = -y[t] * g
                    if v >= next_gmax:
                        next_gmax = v
                        next_i = t
            have_next = True
        if shrinking:
            _update_gbar(
                i,
                old_i,
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
            )
            _update_gbar(
                j,
                old_j,
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
            )
        done += 1


@numba.njit(cache=True)
def _update_gbar(
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
):
    """Keep ``Ḡ = Σ_{α_j = C_j} C_j Q̃_:j`` when α_i enters or leaves its upper bound."""
    was_up = old >= C[i]
    is_up = alpha[i] >= C[i]
    if was_up == is_up:
        return
    s = get_column(
        i,
        True,
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
    c = C[i] if is_up else -C[i]
    for t in range(y.shape[0]):
        Gbar[t] += c * Qi[t]


# ---- no or regularized bias: single-variable updates ---------------------------------------------
@numba.njit(cache=True)
def violation_single(C, alpha, G, active, n_active):
    """``max_t |PG_t|`` on the active set (projected gradient of the box)."""
    m = 0.0
    for s in range(n_active):
        t = active[s]
        g = G[t]
        if alpha[t] <= 0.0:
            g = min(g, 0.0)
        if alpha[t] >= C[t]:
            g = max(g, 0.0)
        if abs(g) > m:
            m = abs(g)
    return m


@numba.njit(cache=True)
def smo_single(
    max_updates,
    eps,
    shrinking,
    X,
    XT,
    sqn,
    kint,
    kflt,
    y,
    C,
    QD,
    alpha,
    G,
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
    shrink_buf,
    status,
):
    """Run at most ``max_updates`` single-variable updates; return ``(updates done, code)``."""
    done = 0
    while True:
        if shrinking:
            ist[SHRINK_COUNTER] -= 1
            if ist[SHRINK_COUNTER] <= 0:
                _shrink(
                    eps,
                    False,
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
                    shrink_buf,
                )
        if done >= max_updates:
            return done, BUDGET
        n_active = ist[N_ACTIVE]
        best = 0.0
        viol = 0.0
        i = -1
        new_i = 0.0
        for s in range(n_active):
            t = active[s]
            g = G[t]
            pg = g
            if alpha[t] <= 0.0:
                pg = min(g, 0.0)
            if alpha[t] >= C[t]:
                pg = max(g, 0.0)
            if pg == 0.0:
                continue
            if abs(pg) > viol:
                viol = abs(pg)
            q = QD[t] if QD[t] > 0.0 else TAU
            new = min(max(alpha[t] - g / q, 0.0), C[t])
            d = new - alpha[t]
            dec = -(g * d + 0.5 * q * d * d)  # decrease of f by the clipped Newton step
            if dec > best:
                best = dec
                i = t
                new_i = new
        if i < 0 or viol < eps:
            if _grow_back(
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
            ):
                continue
            return done, CONVERGED
        si = get_column(
            i,
            False,
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
        Qi = cache[si]
        old = alpha[i]
        alpha[i] = new_i
        da = new_i - old
        for s in range(ist[N_ACTIVE]):
            t = active[s]
            G[t] += Qi[t] * da
        if shrinking:
            _update_gbar(
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
            )
        done += 1
