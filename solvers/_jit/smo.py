"""Jitted loops of SMO: working-set selection and updates, pairs (free bias) or single variables.

The problem, in minimization form (docs/ARCHITECTURE.md §2, with ``f = −D``)::

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

Shrinking and gradient reconstruction (Chang & Lin, LIBSVM, ACM TIST 2011, §5), the LRU cache of
kernel columns ``Q̃_:i`` (float32 as LIBSVM's ``Qfloat``, or float64) and the violations of the two
rules live in :mod:`solvers._jit.smo_shrink`, which both loops share (:func:`shrink_active`,
:func:`grow_back`, :func:`get_column`, :func:`update_gbar`); their names are re-exported here.

LIBSVM's general dual (:mod:`solvers.smo_general`: ``min ½αᵀQα + pᵀα``, signs z in ``y``, bounds
u in ``C``, a row of X per variable) runs on the same loops: the record's ``p`` (the linear term,
read where the gradient is rebuilt: ``G = Qα + p``; empty for C-SVC, whose term is −1) and
``rowmap`` (the row of each variable and the kernel rows cached by row of X,
:mod:`solvers._jit.smo_rows`, LIBSVM's ``SVR_Q``). The loops read ``Q_ti = z_t z_i K[r_i, r_t]``
from the kernel row of i's row. C-SVC passes ``rowmap = None`` and the general form ``cache =
None``: the loops' branches on ``rowmap is not None`` and ``cache is not None`` are pruned by the
arguments' types before Numba types the loop, so each kind compiles its own variant without the
other's code (:func:`second_index` and :func:`pair_gradient` inlined once, the kind a constant).

The driver keeps the loops' arrays as one record, :class:`Core`, unpacked into the loops'
arguments (the record passed whole into the jitted code ran as fast but compiled 1.5x slower: see
``benchmarks/studies/bench_smo_record.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from svmbench.solvers._jit.smo_rows import general_column, no_rows  # noqa: F401 (no_rows: C-SVC's)
from svmbench.solvers._jit.smo_shrink import (  # noqa: F401 (the loops' helpers, re-exported)
    CLOCK,
    FULL_FRACTION,
    HITS,
    MISSES,
    N_ACTIVE,
    N_IST,
    PARTIAL,
    PENDING_SHRINK,
    RECONSTRUCT,
    RECONSTRUCTIONS,
    SHRINK_COUNTER,
    UNSHRUNK,
    WHOLE,
    bound_status,
    compile_reconstruct,
    fill,
    fill_full,
    get_column,
    grow_back,
    in_low,
    in_up,
    projected_gradient,
    reconstruct,
    remove_shrunk,
    shrink_active,
    update_gbar,
    violation_pairs,
    violation_single,
)

#: Curvature used in place of a non-positive ``a_ij`` (indefinite kernels), Fan et al. (2005) §4.
TAU = 1e-12

# "No index" is written np.int64(-1), never the literal -1: an index variable that may hold the
# literal would type the callees (get_column, update_gbar and theirs) once for Literal[int](-1)
# and once for int64, compiling each twice.

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
    kint: tuple  # (kernel code, degree, Numba threads or None: serial columns only)
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
    cache: np.ndarray | None  # (n_slots × n) float32 or float64: Q̃_:i (None: the general form)
    slot_col: np.ndarray  # column in each slot (−1: free)
    col_slot: np.ndarray  # slot of each column (−1: not cached)
    slot_full: np.ndarray  # uint8: 1 if the slot's column was computed on every index
    stamp: np.ndarray  # LRU stamp of each slot
    ist: np.ndarray  # int64 counters, positions N_ACTIVE … RECONSTRUCTIONS
    idx_buf: np.ndarray  # int64 scratch of n
    tmp: np.ndarray  # float64 scratch of n
    shrink_buf: np.ndarray  # bool scratch of n
    status: np.ndarray  # uint8: bit 0 t ∈ I_up, bit 1 t ∈ I_low (free bias only)
    p: np.ndarray  # the general form's linear term (empty: −1, C-SVC)
    # the general form's row of each variable and its kernel rows cached by row, the tuple
    # ``(rows, krows, kslots, krow_slot)`` of :mod:`solvers._jit.smo_rows` (C-SVC: None)
    rowmap: tuple | None


def run_loop(loop, max_updates, eps, shrinking, core: Core) -> tuple[int, int]:
    """``loop(max_updates, eps, shrinking, *core)`` (:func:`smo_pairs`, :func:`smo_single` or
    the ν loop), with the gradient reconstructions it returns for (:data:`RECONSTRUCT`) done
    here and the loop called again for the updates left: ``(updates done, BUDGET or
    CONVERGED)``. Without ``shrinking`` the loop is given None, by whose type Numba prunes its
    shrinking and Ḡ's updates (a variant that small problems, which never shrink, compile
    alone; the warm-ups run the variant of their problem). The loops do not link
    :func:`reconstruct` (rarely run, about a fifth of their compiled code), so that a first fit
    compiles it once instead of again inside each loop."""
    done = 0
    while True:
        step, code = loop(max_updates - done, eps, True if shrinking else None, *core)
        done += step
        if code != RECONSTRUCT:
            return done, code
        reconstruct(
            core.X, core.sqn, core.kint, core.kflt, core.y, core.C, core.alpha, core.G, core.Gbar,
            core.active, core.is_active, core.all_idx, core.slot_col, core.col_slot,
            core.slot_full, core.ist, core.rowmap, core.p,
        )  # fmt: skip


# ---- free bias: pair updates ---------------------------------------------------------------------
@numba.njit(cache=True, inline="always")
def second_index(i, gmax, Qi, rows, general, y, G, QD, status, active, n_active):
    """j by WSS2 over the active set and ``−M(α) = max_{I_low} y_t G_t``: ``(j, −M(α))``.
    ``Qi`` is i's cached column (``general`` False) or the kernel row of i's row, read at
    ``rows[t]`` (``Q_ti = z_t z_i K[r_i, r_t]``); inlined once per kind with ``general`` a
    constant, so that each scan reads its column directly."""
    j = np.int64(-1)
    gmax2 = -np.inf
    obj_min = np.inf
    for s in range(n_active):
        t = active[s]
        if status[t] & 2:  # t ∈ I_low
            v = y[t] * G[t]
            if v > gmax2:
                gmax2 = v
            b = gmax + v
            if b > 0.0:
                q = y[i] * y[t] * Qi[rows[t]] if general else Qi[t]
                a = QD[i] + QD[t] - 2.0 * y[i] * y[t] * q
                if a <= 0.0:
                    a = TAU
                obj = -b * b / a
                if obj <= obj_min:
                    obj_min = obj
                    j = t
    return j, gmax2


@numba.njit(cache=True, inline="always")
def pair_gradient(i, j, da_i, da_j, Qi, Qj, rows, general, y, G, status, active, n_active):
    """``G += Q_:i Δα_i + Q_:j Δα_j`` on the active set (columns read as in
    :func:`second_index`); with a shrunk active set, the same pass finds the next i, the maximal
    violation over I_up in the scan's order and ties. Returns ``(found, next i, its value)``."""
    n = y.shape[0]
    if n_active == n:  # contiguous: the loop vectorizes
        if general:
            for t in range(n):
                r = rows[t]
                G[t] += y[i] * y[t] * Qi[r] * da_i + y[j] * y[t] * Qj[r] * da_j
        else:
            for t in range(n):
                G[t] += Qi[t] * da_i + Qj[t] * da_j
        return False, np.int64(-1), -np.inf
    next_gmax = -np.inf
    next_i = np.int64(-1)
    for s in range(n_active):
        t = active[s]
        if general:
            r = rows[t]
            g = G[t] + (y[i] * y[t] * Qi[r] * da_i + y[j] * y[t] * Qj[r] * da_j)
        else:
            g = G[t] + (Qi[t] * da_i + Qj[t] * da_j)
        G[t] = g
        if status[t] & 1:
            v = -y[t] * g
            if v >= next_gmax:
                next_gmax = v
                next_i = t
    return True, next_i, next_gmax


@numba.njit(cache=True, no_cfunc_wrapper=True)
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
    p,
    rowmap,
):
    """Run at most ``max_updates`` pair updates; return ``(updates done, code)``.

    ``code`` is ``CONVERGED`` when ``m(α) − M(α) < eps`` on all variables (gradient complete),
    ``RECONSTRUCT`` when the gradient of the shrunk variables must be rebuilt before the loop
    goes on (call it through :func:`run_loop`), ``BUDGET`` otherwise. Arrays are updated in
    place.
    """
    # the kind, decided by the arguments' types when compiled (Numba prunes the other's code)
    general = rowmap is not None
    columns = cache is not None
    done = 0
    # i of the next update found during the gradient update (the same scan, fused), valid until
    # the active set or G changes otherwise (shrinking, reconstruction)
    have_next = False
    next_i = np.int64(-1)
    next_gmax = -np.inf
    while True:
        if shrinking is not None and shrinking:
            if ist[PENDING_SHRINK] == 0:
                ist[SHRINK_COUNTER] -= 1
                if ist[SHRINK_COUNTER] <= 0 and shrink_active(
                    eps, True, y, C, alpha, G, active, ist, tmp
                ):
                    return done, RECONSTRUCT
            if ist[PENDING_SHRINK] == 1:
                have_next = False
                remove_shrunk(True, y, C, alpha, G, active, is_active, ist, tmp, shrink_buf)
        if done >= max_updates:
            return done, BUDGET
        # ---- working set: i by the maximal violation, j by WSS2
        n_active = ist[N_ACTIVE]
        if have_next:
            gmax = next_gmax
            i = next_i
        else:
            gmax = -np.inf
            i = np.int64(-1)
            for s in range(n_active):
                t = active[s]
                if status[t] & 1:  # t ∈ I_up
                    v = -y[t] * G[t]
                    if v >= gmax:
                        gmax = v
                        i = t
        have_next = False
        j = np.int64(-1)
        gmax2 = -np.inf
        if i >= 0:
            # the general form reads the kernel row of i's row, Q_ti = z_t z_i K[r_i, r_t]
            # (solvers._jit.smo_rows); C-SVC its cached column: one scan each
            if general:
                si = general_column(i, XT, sqn, kint, kflt, ist, tmp, rowmap)
                j, gmax2 = second_index(
                    i, gmax, rowmap[1][si], rowmap[0], True, y, G, QD, status, active, n_active
                )
            if columns:
                si = get_column(
                    i, PARTIAL, X, XT, sqn, kint, kflt, y, QD, active, is_active, all_idx,
                    cache, slot_col, col_slot, slot_full, stamp, ist, idx_buf, tmp,
                )  # fmt: skip
                j, gmax2 = second_index(
                    i, gmax, cache[si], all_idx, False, y, G, QD, status, active, n_active
                )
        if j < 0 or gmax + gmax2 < eps:
            # check the shrunk variables too before declaring convergence
            if grow_back(y, ist):
                return done, RECONSTRUCT
            return done, CONVERGED
        # ---- update along d_i = y_i, d_j = −y_j (keeps yᵀα)
        # i's column (or its row's kernel row) is still cached: the most recent before j's
        if general:
            sj = general_column(j, XT, sqn, kint, kflt, ist, tmp, rowmap)
            Qi = rowmap[1][rowmap[3][rowmap[0][i]]]
            Qj = rowmap[1][sj]
            q = y[i] * y[j] * Qi[rowmap[0][j]]
        if columns:
            sj = get_column(
                j, PARTIAL, X, XT, sqn, kint, kflt, y, QD, active, is_active, all_idx, cache,
                slot_col, col_slot, slot_full, stamp, ist, idx_buf, tmp,
            )  # fmt: skip
            Qi = cache[col_slot[i]]
            Qj = cache[sj]
            q = Qi[j]
        a = QD[i] + QD[j] - 2.0 * y[i] * y[j] * q
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
        if general:
            have_next, next_i, next_gmax = pair_gradient(
                i, j, da_i, da_j, Qi, Qj, rowmap[0], True, y, G, status, active, ist[N_ACTIVE]
            )
        if columns:
            have_next, next_i, next_gmax = pair_gradient(
                i, j, da_i, da_j, Qi, Qj, all_idx, False, y, G, status, active, ist[N_ACTIVE]
            )
        if shrinking is not None and shrinking:
            update_gbar(
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
                rowmap,
            )
            update_gbar(
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
                rowmap,
            )
        done += 1


# ---- no or regularized bias: single-variable updates ---------------------------------------------
@numba.njit(cache=True, no_cfunc_wrapper=True)
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
    p,
    rowmap,
):
    """Run at most ``max_updates`` single-variable updates; return ``(updates done, code)``, the
    codes of :func:`smo_pairs`."""
    done = 0
    while True:
        if shrinking is not None and shrinking:
            if ist[PENDING_SHRINK] == 0:
                ist[SHRINK_COUNTER] -= 1
                if ist[SHRINK_COUNTER] <= 0 and shrink_active(
                    eps, False, y, C, alpha, G, active, ist, tmp
                ):
                    return done, RECONSTRUCT
            if ist[PENDING_SHRINK] == 1:
                remove_shrunk(False, y, C, alpha, G, active, is_active, ist, tmp, shrink_buf)
        if done >= max_updates:
            return done, BUDGET
        n_active = ist[N_ACTIVE]
        best = 0.0
        viol = 0.0
        i = np.int64(-1)
        new_i = 0.0
        for s in range(n_active):
            t = active[s]
            g = G[t]
            pg = projected_gradient(g, alpha[t], C[t])
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
            if grow_back(y, ist):
                return done, RECONSTRUCT
            return done, CONVERGED
        old = alpha[i]
        alpha[i] = new_i
        da = new_i - old
        if rowmap is not None:  # the kernel row of i's row (as in smo_pairs)
            Qi = rowmap[1][general_column(i, XT, sqn, kint, kflt, ist, tmp, rowmap)]
            rows = rowmap[0]
            for s in range(ist[N_ACTIVE]):
                t = active[s]
                G[t] += y[i] * y[t] * Qi[rows[t]] * da
        if cache is not None:
            si = get_column(
                i, PARTIAL, X, XT, sqn, kint, kflt, y, QD, active, is_active, all_idx, cache,
                slot_col, col_slot, slot_full, stamp, ist, idx_buf, tmp,
            )  # fmt: skip
            Qi = cache[si]
            for s in range(ist[N_ACTIVE]):
                t = active[s]
                G[t] += Qi[t] * da
        if shrinking is not None and shrinking:
            update_gbar(
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
            )
        done += 1
