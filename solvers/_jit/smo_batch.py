"""Jitted parts of the batched working-set SMO (:mod:`solvers.smo_batch`).

The problem is :mod:`solvers._jit.smo`'s, in minimization form::

    min_α  ½ αᵀQ̃α − Σ_t α_t   s.t.  0 ≤ α_t ≤ C_t   (and yᵀα = 0 for a free bias)

    Q̃_tk = y_t y_k (K_tk + s²) + δ_tk / (2 C_t),     G = Q̃α − 1 kept in float64.

One outer iteration (Wen et al., "ThunderSVM", JMLR 19, 2018; Joachims' working sets, 1999):

1. a working set B of q variables (the driver picks them, :func:`merge_candidates`);
2. the rows ``Q̃_B,:`` that the row cache lacks, in one batched call
   (:func:`fill_rows_dense`: blocks of rows, each a BLAS product against the transposed data,
   then the kernel, the blocks shared among the Numba threads;
   :func:`fill_rows_columns`: one whole column at a time, for CSR rows and Gram matrices);
3. SMO on the q×q block ``Q̃_BB`` (:func:`inner_pairs`, WSS2 pairs; :func:`inner_single`, greedy
   single variables without the equality) until its violation is below the driver's target,
   a row of the block gathered from the cache when an update first reads it;
4. ``G += Q̃_:B Δα_B`` in one pass over the rows (:func:`update_gradient`, threads over blocks of
   G).
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.problems._kernel_products import exp_nonpositive, kernel_from_dot
from svmbench.solvers._jit.kernel_columns import column_full
from svmbench.solvers._jit.smo_shrink import projected_gradient

#: Curvature used in place of a non-positive ``a_ij`` (indefinite kernels), as in SMO.
TAU = 1e-12

#: Entries of G per block of :func:`update_gradient` (one thread's share at a time).
BLOCK = 1024

#: Rows per BLAS product in :func:`fill_rows_dense`: faster per entry, on one thread and two, than
#: four rows at a time against blocks of Xᵀ in Numba loops (docs/measurements.md, "smo_batch").
GEMM_ROWS = 32


# ---- the row cache -------------------------------------------------------------------------------
@numba.njit(cache=True, no_cfunc_wrapper=True)
def assign_slots(ws, m, col_slot, slot_col, stamp, clock, slots, missing):
    """Slots of the cache rows of ``ws[:m]``: hits keep theirs, misses take a free slot or the
    least recently used one outside the working set. Writes ``slots[k]`` and the positions k of
    the misses into ``missing``; returns ``(number of misses, clock)``."""
    for k in range(m):
        s = col_slot[ws[k]]
        if s >= 0:
            clock += 1
            stamp[s] = clock  # the working set is the most recent: never evicted below
    n_miss = 0
    for k in range(m):
        i = ws[k]
        s = col_slot[i]
        if s < 0:
            best = -1
            oldest = clock + 2
            for c in range(slot_col.shape[0]):
                if slot_col[c] < 0:
                    best = c
                    break
                if stamp[c] < oldest:
                    oldest = stamp[c]
                    best = c
            if slot_col[best] >= 0:
                col_slot[slot_col[best]] = -1
            slot_col[best] = i
            col_slot[i] = best
            clock += 1
            stamp[best] = clock
            s = best
            missing[n_miss] = k
            n_miss += 1
        slots[k] = s
    return n_miss, clock


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _store(row, dots, tmp, i, act, sqn_a, y_a, sqn, y, kind, gamma, coef0, degree, s2, qdi):
    """``row[act[t]] = y_i y_t (K(x_i, x_t) + s²)`` from the inner products ``dots[t]`` with the
    active rows (``sqn_a``, ``y_a``: their squared norms and labels), through the float64
    ``tmp`` so that the kernel loop vectorizes whatever the row's dtype; the diagonal entry is
    ``Q̃_ii`` exactly. Entries of inactive indices are left as they were."""
    na = act.shape[0]
    qi = sqn[i]
    if kind == 2:  # one loop per kind, so that each vectorizes
        for t in range(na):
            tmp[t] = exp_nonpositive(-gamma * max(qi + sqn_a[t] - 2.0 * dots[t], 0.0))
    else:
        for t in range(na):
            tmp[t] = kernel_from_dot(dots[t], qi, sqn_a[t], kind, gamma, coef0, degree)
    yi = y[i]
    if na == row.shape[0]:  # every index active (act is 0, 1, ..., n−1): contiguous
        for t in range(na):
            row[t] = yi * y_a[t] * (tmp[t] + s2)
    else:
        for t in range(na):
            row[act[t]] = yi * y_a[t] * (tmp[t] + s2)
    row[i] = qdi


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _fill_block(
    X, XT_a, act, sqn_a, y_a, sqn, y, QD, ws, slots, missing, lo, hi, cache, kind, gamma, coef0,
    degree, s2,
):  # fmt: skip
    """Misses ``missing[lo:hi]`` of :func:`fill_rows_dense`: one BLAS product of their rows
    with ``XT_a``, then the kernel (the rows gathered by loops: an array assigned to a slice
    compiles NumPy's shape-mismatch message, a string formatter, into every caller)."""
    d = X.shape[1]
    A = np.empty((hi - lo, d))
    for r in range(lo, hi):
        src = X[ws[missing[r]]]
        dst = A[r - lo]
        for f in range(d):
            dst[f] = src[f]
    D = np.dot(A, XT_a)
    tmp = np.empty(act.shape[0])
    for r in range(lo, hi):
        k = missing[r]
        i = ws[k]
        _store(
            cache[slots[k]], D[r - lo], tmp, i, act, sqn_a, y_a, sqn, y, kind, gamma, coef0,
            degree, s2, QD[i],
        )  # fmt: skip


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def fill_rows_dense(
    X, XT_a, act, sqn_a, y_a, sqn, y, QD, ws, slots, missing, n_miss, cache, kind, gamma, coef0,
    degree, s2,
):  # fmt: skip
    """``cache[slots[k]][act] = Q̃_{ws[k], act}`` for the misses ``k ∈ missing[:n_miss]`` (dense
    rows, kinds 0-3) on the active indices ``act`` (``XT_a``: their rows transposed, d × |act|,
    C-contiguous): blocks of ``GEMM_ROWS`` rows, each one BLAS product ``X_block · XT_a``
    followed by the kernel (:func:`_fill_block`), the blocks shared among the Numba threads."""
    nc = (n_miss + GEMM_ROWS - 1) // GEMM_ROWS
    for c in numba.prange(nc):
        lo = c * GEMM_ROWS
        _fill_block(
            X, XT_a, act, sqn_a, y_a, sqn, y, QD, ws, slots, missing, lo,
            min(n_miss, lo + GEMM_ROWS), cache, kind, gamma, coef0, degree, s2,
        )  # fmt: skip


@numba.njit(cache=True, no_cfunc_wrapper=True)
def fill_rows_dense_serial(
    X, XT_a, act, sqn_a, y_a, sqn, y, QD, ws, slots, missing, n_miss, cache, kind, gamma, coef0,
    degree, s2,
):  # fmt: skip
    """:func:`fill_rows_dense` in this thread alone, block after block (the same values bit for
    bit; no parallel loop to compile for problems too small to split)."""
    for lo in range(0, n_miss, GEMM_ROWS):
        _fill_block(
            X, XT_a, act, sqn_a, y_a, sqn, y, QD, ws, slots, missing, lo,
            min(n_miss, lo + GEMM_ROWS), cache, kind, gamma, coef0, degree, s2,
        )  # fmt: skip


@numba.njit(cache=True, no_cfunc_wrapper=True)
def fill_rows_columns(
    XT, sqn, y, QD, ws, slots, missing, n_miss, cache, tmp, kind, gamma, coef0, degree, s2, threads
):
    """As :func:`fill_rows_dense`, one whole kernel column at a time through
    :func:`~solvers._jit.kernel_columns.column_full` (dense or CSR rows, or the Gram matrix for
    ``kind == 4``): the same values as SMO's columns."""
    n = y.shape[0]
    for r in range(n_miss):
        k = missing[r]
        i = ws[k]
        column_full(XT, sqn, i, tmp, kind, gamma, coef0, degree, threads)
        row = cache[slots[k]]
        yi = y[i]
        for t in range(n):
            row[t] = yi * y[t] * (tmp[t] + s2)
        row[i] = QD[i]


# ---- the gradient --------------------------------------------------------------------------------
@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _nonzero_changes(delta, m):
    """The k < m with ``delta[k] ≠ 0``, in order."""
    nz = 0
    for k in range(m):
        if delta[k] != 0.0:
            nz += 1
    ks = np.empty(nz, dtype=np.int64)
    nz = 0
    for k in range(m):
        if delta[k] != 0.0:
            ks[nz] = k
            nz += 1
    return ks


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _gradient_block(G, cache, slots, delta, ks, act, lo, hi):
    """``G[act[lo:hi]] += Σ_k delta[k] · cache[slots[k]][act[lo:hi]]`` over ``k ∈ ks``, two rows
    a pass, in the order of ``ks``."""
    nz = ks.shape[0]
    full = act.shape[0] == G.shape[0]
    w = hi - lo
    c = 0
    while c + 2 <= nz:
        k0, k1 = ks[c], ks[c + 1]
        d0, d1 = delta[k0], delta[k1]
        r0, r1 = cache[slots[k0]], cache[slots[k1]]
        if full:
            g, s0, s1 = G[lo:hi], r0[lo:hi], r1[lo:hi]
            for t in range(w):
                g[t] += d0 * s0[t] + d1 * s1[t]
        else:
            for t in range(lo, hi):
                j = act[t]
                G[j] += d0 * r0[j] + d1 * r1[j]
        c += 2
    if c < nz:
        k0 = ks[c]
        d0 = delta[k0]
        r0 = cache[slots[k0]]
        for t in range(lo, hi):
            j = act[t]
            G[j] += d0 * r0[j]


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def update_gradient(G, cache, slots, delta, m, act):
    """``G[act] += Σ_k delta[k] · cache[slots[k]][act]`` over the k with ``delta[k] ≠ 0``, all
    threads over blocks of the active indices (each writes its own entries; rows are summed in a
    fixed order). ``act`` of length n means every index, in order (contiguous loops)."""
    ks = _nonzero_changes(delta, m)
    na = act.shape[0]
    nb = (na + BLOCK - 1) // BLOCK
    for b in numba.prange(nb):
        lo = b * BLOCK
        _gradient_block(G, cache, slots, delta, ks, act, lo, min(na, lo + BLOCK))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def update_gradient_serial(G, cache, slots, delta, m, act):
    """:func:`update_gradient` in this thread alone, block after block (the same values bit for
    bit)."""
    ks = _nonzero_changes(delta, m)
    na = act.shape[0]
    for lo in range(0, na, BLOCK):
        _gradient_block(G, cache, slots, delta, ks, act, lo, min(na, lo + BLOCK))


def row_passes(threads):
    """``(fill_rows_dense, update_gradient)`` for the kernel columns' ``threads``
    (:func:`~solvers._jit.kernel_columns.column_threads`): the parallel loops, or for None (rows
    too small to split, or one thread) their serial twins, which compile several times faster."""
    if threads is None:
        return fill_rows_dense_serial, update_gradient_serial
    return fill_rows_dense, update_gradient


# ---- selection -----------------------------------------------------------------------------------
@numba.njit(cache=True, no_cfunc_wrapper=True)
def pair_scores(act, y_a, alpha, C, G, su, sl):
    """Over the active indices ``act`` (labels ``y_a``): ``su[t] = −y_t G_t`` where t may move
    up (I_up: ``y_t = +1, α_t < C_t`` or ``y_t = −1, α_t > 0``), ``sl[t] = y_t G_t`` where it may
    move down (I_low), −∞ elsewhere. Returns ``(max su, max sl)``, whose sum is the violation
    ``m(α) − M(α)``: one pass instead of a dozen NumPy temporaries."""
    top_u = -np.inf
    top_l = -np.inf
    for t in range(act.shape[0]):
        i = act[t]
        yt = y_a[t]
        a = alpha[i]
        v = -yt * G[i]
        up = a < C[i] if yt > 0 else a > 0.0
        low = a > 0.0 if yt > 0 else a < C[i]
        su[t] = v if up else -np.inf
        sl[t] = -v if low else -np.inf
        top_u = max(top_u, su[t])
        top_l = max(top_l, sl[t])
    return top_u, top_l


@numba.njit(cache=True, no_cfunc_wrapper=True)
def single_scores(act, alpha, C, G, pg):
    """``pg[t] = |projected gradient|`` of the active index ``act[t]`` (``min(G, 0)`` at α = 0,
    ``max(G, 0)`` at α = C); returns its maximum (0 for none)."""
    top = 0.0
    for t in range(act.shape[0]):
        i = act[t]
        pg[t] = abs(projected_gradient(G[i], alpha[i], C[i]))
        top = max(top, pg[t])
    return top


@numba.njit(cache=True, no_cfunc_wrapper=True)
def merge_candidates(
    keep, n_keep, cand_a, score_a, cand_b, score_b, floor_a, floor_b, q, in_ws, ws
):
    """The working set: ``keep[:n_keep]`` (the previous iteration's newer half), then
    alternately the next of ``cand_a`` and of ``cand_b`` (each sorted by decreasing score) that
    is not in yet, while its score beats the floor (``floor = −∞``: no second list), until ``q``.
    ``in_ws`` (uint8, all 0 on entry and on return) marks members. Returns the size; the new
    members come after the kept ones."""
    m = 0
    for k in range(n_keep):
        i = keep[k]
        if in_ws[i] == 0:
            in_ws[i] = 1
            ws[m] = i
            m += 1
    pa = 0
    pb = 0
    na = cand_a.shape[0]
    nb = cand_b.shape[0]
    turn = 0
    while m < q and (pa < na or pb < nb):
        if turn == 0 or pb >= nb:
            if pa < na:
                i = cand_a[pa]
                ok = score_a[pa] > floor_a
                pa += 1
                if not ok:
                    pa = na
                elif in_ws[i] == 0:
                    in_ws[i] = 1
                    ws[m] = i
                    m += 1
            turn = 1
        else:
            i = cand_b[pb]
            ok = score_b[pb] > floor_b
            pb += 1
            if not ok:
                pb = nb
            elif in_ws[i] == 0:
                in_ws[i] = 1
                ws[m] = i
                m += 1
            turn = 0
    for k in range(m):
        in_ws[ws[k]] = 0
    return m


# ---- SMO inside the working set ------------------------------------------------------------------
@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _gather(ws, m, y, C, QD, alpha, G, a, g, yb, cb, qb, have):
    """The working set's entries of α, G, y, C and Q̃_tt; no row of ``Q̃_BB`` gathered yet."""
    for k in range(m):
        i = ws[k]
        a[k] = alpha[i]
        g[k] = G[i]
        yb[k] = y[i]
        cb[k] = C[i]
        qb[k] = QD[i]
        have[k] = 0.0


#: The row map of C-SVC's block loops (:data:`NO_ROWMAP`: empty, its cached rows are Q̃'s own).
NO_ROWMAP = np.empty(0, dtype=np.int64)


@numba.njit(cache=True, inline="always")
def _block_row(Qb, have, k, ws, rowmap, yb, m, slots, cache):
    """Row k of the block, gathered from its cached row on first use: an update reads the rows
    of its two variables only, and the gather (scattered reads of rows of n) cost more than the
    updates when it took all m rows up front. An empty ``rowmap`` (C-SVC, :data:`NO_ROWMAP`):
    the cached row is ``Q̃``'s own; else (a general form, kernel rows cached by row of X)
    ``Q_kc = z_k z_c row[rowmap[ws[c]]]``. Both kinds pass an int64 array, so that they run one
    compiled loop (the branch is taken once per row gathered, outside its loop)."""
    if have[k] == 0.0:
        row = cache[slots[k]]
        out = Qb[k]
        if rowmap.shape[0] == 0:
            for c in range(m):
                out[c] = row[ws[c]]
        else:
            zk = yb[k]
            for c in range(m):
                out[c] = zk * yb[c] * row[rowmap[ws[c]]]
        have[k] = 1.0
    return Qb[k]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def inner_pairs(ws, rowmap, m, slots, cache, y, C, QD, alpha, delta, G, target, max_steps, work):
    """WSS2 pair updates on the block ``Q̃_BB`` (B = ``ws[:m]``) until ``m_B(α) − M_B(α) ≤
    target`` or ``max_steps``; ``alpha[B]`` takes the new values, ``delta[:m]`` the changes
    (G is left to :func:`update_gradient`). Member k's row is ``cache[slots[k]]``: Q̃'s own
    (``rowmap`` empty), or the kernel row of its row of X (a general form: :func:`_block_row`).
    Returns the updates done."""
    Qb = work[: m * m].reshape((m, m))
    a, g = work[m * m : m * m + m], work[m * m + m : m * m + 2 * m]
    yb, cb = work[m * m + 2 * m : m * m + 3 * m], work[m * m + 3 * m : m * m + 4 * m]
    qb, have = work[m * m + 4 * m : m * m + 5 * m], work[m * m + 5 * m : m * m + 6 * m]
    _gather(ws, m, y, C, QD, alpha, G, a, g, yb, cb, qb, have)
    steps = 0
    while steps < max_steps:
        gmax = -np.inf
        i = -1
        for t in range(m):
            if (yb[t] > 0.0 and a[t] < cb[t]) or (yb[t] < 0.0 and a[t] > 0.0):  # I_up
                v = -yb[t] * g[t]
                if v >= gmax:
                    gmax = v
                    i = t
        if i < 0:
            break
        j = -1
        gmax2 = -np.inf
        obj_min = np.inf
        Qi = _block_row(Qb, have, i, ws, rowmap, yb, m, slots, cache)
        for t in range(m):
            if (yb[t] > 0.0 and a[t] > 0.0) or (yb[t] < 0.0 and a[t] < cb[t]):  # I_low
                v = yb[t] * g[t]
                if v > gmax2:
                    gmax2 = v
                bb = gmax + v
                if bb > 0.0:
                    aa = qb[i] + qb[t] - 2.0 * yb[i] * yb[t] * Qi[t]
                    if aa <= 0.0:
                        aa = TAU
                    obj = -bb * bb / aa
                    if obj <= obj_min:
                        obj_min = obj
                        j = t
        if j < 0 or gmax + gmax2 <= target:
            break
        aa = qb[i] + qb[j] - 2.0 * yb[i] * yb[j] * Qi[j]
        if aa <= 0.0:
            aa = TAU
        step = (-yb[i] * g[i] + yb[j] * g[j]) / aa
        room_i = cb[i] - a[i] if yb[i] > 0.0 else a[i]
        room_j = a[j] if yb[j] > 0.0 else cb[j] - a[j]
        if room_i < step:
            step = room_i
        if room_j < step:
            step = room_j
        old_i, old_j = a[i], a[j]
        if step == room_i:  # a variable whose room limits the step lands on its bound
            a[i] = cb[i] if yb[i] > 0.0 else 0.0
        else:
            a[i] = old_i + yb[i] * step
        if step == room_j:
            a[j] = 0.0 if yb[j] > 0.0 else cb[j]
        else:
            a[j] = old_j - yb[j] * step
        da_i = a[i] - old_i
        da_j = a[j] - old_j
        Qj = _block_row(Qb, have, j, ws, rowmap, yb, m, slots, cache)
        for t in range(m):
            g[t] += Qi[t] * da_i + Qj[t] * da_j
        steps += 1
    for k in range(m):
        i = ws[k]
        delta[k] = a[k] - alpha[i]
        alpha[i] = a[k]
    return steps


@numba.njit(cache=True, no_cfunc_wrapper=True)
def inner_single(ws, rowmap, m, slots, cache, y, C, QD, alpha, delta, G, target, max_steps, work):
    """Greedy single-variable updates on the block (no equality): the variable whose clipped
    Newton step decreases f most, until ``max |PG_B| ≤ target`` or ``max_steps``. As
    :func:`inner_pairs` otherwise."""
    Qb = work[: m * m].reshape((m, m))
    a, g = work[m * m : m * m + m], work[m * m + m : m * m + 2 * m]
    yb, cb = work[m * m + 2 * m : m * m + 3 * m], work[m * m + 3 * m : m * m + 4 * m]
    qb, have = work[m * m + 4 * m : m * m + 5 * m], work[m * m + 5 * m : m * m + 6 * m]
    _gather(ws, m, y, C, QD, alpha, G, a, g, yb, cb, qb, have)
    steps = 0
    while steps < max_steps:
        best = 0.0
        viol = 0.0
        i = -1
        new_i = 0.0
        for t in range(m):
            gt = g[t]
            pg = projected_gradient(gt, a[t], cb[t])
            if pg == 0.0:
                continue
            if abs(pg) > viol:
                viol = abs(pg)
            qq = qb[t] if qb[t] > 0.0 else TAU
            new = min(max(a[t] - gt / qq, 0.0), cb[t])
            dd = new - a[t]
            dec = -(gt * dd + 0.5 * qq * dd * dd)
            if dec > best:
                best = dec
                i = t
                new_i = new
        if i < 0 or viol <= target:
            break
        da = new_i - a[i]
        a[i] = new_i
        Qi = _block_row(Qb, have, i, ws, rowmap, yb, m, slots, cache)
        for t in range(m):
            g[t] += Qi[t] * da
        steps += 1
    for k in range(m):
        i = ws[k]
        delta[k] = a[k] - alpha[i]
        alpha[i] = a[k]
    return steps
