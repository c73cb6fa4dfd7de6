"""The pair updates of :mod:`solvers.linear_smo` on the rows of a Gram matrix ``K = X Xᵀ``.

Dual of the hinge with a free bias, ``min ½αᵀQα − Σα`` over ``0 ≤ α_t ≤ C_t``, ``yᵀα = 0``,
``Q_ts = y_t y_s K_ts``, gradient ``G = Qα − 1``. Each update takes LIBSVM's working pair
(Fan, Chen & Lin, JMLR 6, 2005, WSS 2): ``i`` the maximal violator of ``I_up``, ``j`` the
member of ``I_low`` whose pair step decreases the dual most by the second-order model
``−(−y_iG_i + y_jG_j)²/(K_ii + K_jj − 2K_ij)``; the step is the pair's exact minimizer clipped
to the box, and G follows it with two rows of K. The loop stops when
``max_{I_up} −y_tG_t − min_{I_low} −y_tG_t < eps`` (the native rule) or after ``budget``
updates; :func:`shrinking_updates` adds LIBSVM's shrinking. A row of K is computed when a
pair first needs it and kept (LIBSVM's kernel cache, never evicted: n² entries at most): a
run touches the rows of its support vectors and a few more, 61 of breast cancer's 569. The
loops keep ``F = −y ⊙ G`` (LIBSVM's ``−y_tG_t``), which a step moves by
``−(K_i Δα_iy_i + K_j Δα_jy_j)`` whatever the labels.
"""

from __future__ import annotations

import numba
import numpy as np

#: LIBSVM's ``TAU``: the curvature taken where ``K_ii + K_jj − 2K_ij`` is not positive.
TAU = 1e-12
#: Updates between two shrinking passes (LIBSVM: min(n, 1000)).
SHRINK_PERIOD = 100


@numba.njit(cache=True, no_cpython_wrapper=True)
def _none():
    """−1, "no index", typed as any index is: a literal −1 would have the helpers it reaches
    compiled once more for it (``Literal[int](-1)`` signatures)."""
    return np.int64(-1)


@numba.njit(cache=True)
def pair_updates(XT, K, have, kd, y, C, alpha, F, eps, budget):
    """``(updates, converged)``: at most ``budget`` pair updates of α and ``F = −y ⊙ G`` in
    place, until the native rule holds at ``eps``. ``K``: the rows of the Gram matrix marked
    in ``have``, the others computed from ``XT = Xᵀ`` when a pair first needs them
    (:func:`_row`); ``kd``: its diagonal. The sets enter as offsets, 0 for a member and ∓∞
    otherwise; the curvature is computed for the candidates only."""
    n = y.shape[0]
    up, low = np.empty(n), np.empty(n)
    for t in range(n):
        _offsets(y, C, alpha, up, low, t)
    gmax, i = -np.inf, _none()
    for t in range(n):
        v = F[t] + up[t]
        if v > gmax:
            gmax, i = v, t
    for it in range(budget):
        if i < 0:
            return it, True
        gmin, j, best = np.inf, _none(), 0.0
        kii, Ki = kd[i], _row(XT, K, have, i)
        for t in range(n):
            v = F[t] + low[t]
            gmin = min(gmin, v)
            diff = gmax - v
            if diff > 0.0:
                quad = max(kii + kd[t] - 2.0 * Ki[t], TAU)
                obj = -(diff * diff) / quad
                if obj < best:
                    best, j = obj, t
        if gmax - gmin < eps or j < 0:
            return it, True
        di, dj = _step(K, kd, y, C, alpha, F, i, j)
        _offsets(y, C, alpha, up, low, i)
        _offsets(y, C, alpha, up, low, j)
        # F follows the step, and the next maximal violator is read in the same pass
        Kj = _row(XT, K, have, j)
        gmax, i = -np.inf, _none()
        for t in range(n):
            f = F[t] - (Ki[t] * di + Kj[t] * dj)
            F[t] = f
            v = f + up[t]
            if v > gmax:
                gmax, i = v, t
    return budget, False


@numba.njit(cache=True, no_cpython_wrapper=True)
def _offsets(y, C, alpha, up, low, t):
    """``up[t]`` 0 if t is in I_up (``y_t = 1, α_t < C_t`` or ``y_t = −1, α_t > 0``), else −∞;
    ``low[t]`` 0 if t is in I_low (the mirror), else ∞."""
    below, above = alpha[t] < C[t], alpha[t] > 0.0
    if y[t] > 0.0:
        up[t] = 0.0 if below else -np.inf
        low[t] = 0.0 if above else np.inf
    else:
        up[t] = 0.0 if above else -np.inf
        low[t] = 0.0 if below else np.inf


@numba.njit(cache=True, no_cpython_wrapper=True)
def _step(K, kd, y, C, alpha, F, i, j):
    """The pair ``(i, j)``'s exact step in the box (LIBSVM's ``Solver::Solve``): α updated,
    ``(Δα_i y_i, Δα_j y_j)`` returned for F."""
    ai, aj, ci, cj = alpha[i], alpha[j], C[i], C[j]
    gi, gj = -y[i] * F[i], -y[j] * F[j]
    quad = kd[i] + kd[j] - 2.0 * K[i, j]
    if quad <= 0.0:
        quad = TAU
    if y[i] != y[j]:
        delta = (-gi - gj) / quad
        diff = ai - aj
        ni, nj = ai + delta, aj + delta
        if diff > 0.0:
            if nj < 0.0:
                nj, ni = 0.0, diff
        elif ni < 0.0:
            ni, nj = 0.0, -diff
        if diff > ci - cj:
            if ni > ci:
                ni, nj = ci, ci - diff
        elif nj > cj:
            nj, ni = cj, cj + diff
    else:
        delta = (gi - gj) / quad
        total = ai + aj
        ni, nj = ai - delta, aj + delta
        if total > ci:
            if ni > ci:
                ni, nj = ci, total - ci
        elif nj < 0.0:
            nj, ni = 0.0, total
        if total > cj:
            if nj > cj:
                nj, ni = cj, total - cj
        elif ni < 0.0:
            ni, nj = 0.0, total
    alpha[i], alpha[j] = ni, nj
    return (ni - ai) * y[i], (nj - aj) * y[j]


@numba.njit(cache=True)
def free_bias(y, F, alpha, C):
    """LIBSVM's b: the mean of ``F_t = −y_tG_t`` over the free multipliers, else the midpoint
    of the interval the bounded ones leave."""
    total, count = 0.0, 0
    lo, hi = -np.inf, np.inf  # b ≥ lo, b ≤ hi from the multipliers at a bound
    for t in range(y.shape[0]):
        v = F[t]
        if alpha[t] >= C[t]:  # y_t f_t ≤ 1
            if y[t] > 0.0:
                hi = min(hi, v)
            else:
                lo = max(lo, v)
        elif alpha[t] <= 0.0:  # y_t f_t ≥ 1
            if y[t] > 0.0:
                lo = max(lo, v)
            else:
                hi = min(hi, v)
        else:
            total += v
            count += 1
    if count > 0:
        return total / count
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    return lo if np.isfinite(lo) else (hi if np.isfinite(hi) else 0.0)


@numba.njit(cache=True)
def shrinking_updates(XT, K, have, kd, y, C, alpha, F, eps, budget):
    """:func:`pair_updates` with LIBSVM's shrinking (Chang & Lin 2011, §5.1; Joachims 1999):
    every ``min(n, 1000)`` updates a multiplier at a bound that cannot enter a violating pair
    (in ``I_up`` only with ``F_t`` below ``min_{I_low} F``, in ``I_low`` only with ``F_t`` above
    ``max_{I_up} F``) leaves the active set, whose F alone the steps then move. Once the rule
    holds within ``10·eps`` on the active set, and before returning, F of the others is
    computed anew from α (``F_t = y_t − Σ_s K_ts α_s y_s``) and every multiplier is active
    again, so that the rule and F returned are the whole problem's."""
    n = y.shape[0]
    up, low = np.empty(n), np.empty(n)
    for t in range(n):
        _offsets(y, C, alpha, up, low, t)
    active = np.arange(n)
    na = n
    period = min(n, SHRINK_PERIOD)
    counter = period
    unshrunk = False
    gmax, i, gmin = _scan(F, up, low, active, na)
    it = 0
    while it < budget:
        near = gmax - gmin <= 10.0 * eps
        if (near and not unshrunk) or gmax - gmin < eps or i < 0:
            unshrunk = unshrunk or near
            if na < n:  # the whole problem's F and rule
                na = _unshrink(K, y, alpha, F, active, na)
                gmax, i, gmin = _scan(F, up, low, active, na)
                continue
            if gmax - gmin < eps or i < 0:
                return it, True
        counter -= 1
        if counter == 0:
            counter = period
            kept = 0
            for a in range(na):
                t = active[a]
                if (up[t] == 0.0 and low[t] == 0.0) or not (
                    (up[t] == 0.0 and F[t] < gmin) or (low[t] == 0.0 and F[t] > gmax)
                ):
                    active[kept] = t
                    kept += 1
            na = kept
        j, best = _none(), 0.0
        kii, Ki = kd[i], _row(XT, K, have, i)
        for a in range(na):
            t = active[a]
            diff = gmax - (F[t] + low[t])
            if diff > 0.0:
                quad = max(kii + kd[t] - 2.0 * Ki[t], TAU)
                obj = -(diff * diff) / quad
                if obj < best:
                    best, j = obj, t
        if j < 0:  # no violating pair on the active set
            gmin = gmax
            continue
        di, dj = _step(K, kd, y, C, alpha, F, i, j)
        _offsets(y, C, alpha, up, low, i)
        _offsets(y, C, alpha, up, low, j)
        # F follows the step on the active set, the next pair's bounds read in the same pass
        Kj = _row(XT, K, have, j)
        gmax, i, gmin = -np.inf, _none(), np.inf
        for a in range(na):
            t = active[a]
            f = F[t] - (Ki[t] * di + Kj[t] * dj)
            F[t] = f
            if f + up[t] > gmax:
                gmax, i = f + up[t], t
            gmin = min(gmin, f + low[t])
        it += 1
    if na < n:
        _unshrink(K, y, alpha, F, active, na)
    return budget, False


@numba.njit(cache=True, no_cpython_wrapper=True)
def _scan(F, up, low, active, na):
    """``(max_{I_up} F, its index, min_{I_low} F)`` over ``active[:na]``."""
    gmax, i, gmin = -np.inf, _none(), np.inf
    for a in range(na):
        t = active[a]
        if F[t] + up[t] > gmax:
            gmax, i = F[t] + up[t], t
        gmin = min(gmin, F[t] + low[t])
    return gmax, i, gmin


@numba.njit(cache=True, no_cpython_wrapper=True)
def _unshrink(K, y, alpha, F, active, na):
    """F of the multipliers outside ``active[:na]`` from α (``F_t = y_t − Σ_s K_st α_s y_s``
    over the support, in the order of s: the support's rows of K, which the caller computed),
    and every one active again: n."""
    n = y.shape[0]
    if na == n:
        return n
    inside = np.zeros(n, dtype=np.bool_)
    for a in range(na):
        inside[active[a]] = True
    support = np.empty(n, dtype=np.int64)
    m = 0
    for s in range(n):
        if alpha[s] > 0.0:  # its row computed: α_s moved in a pair, or a warm start's
            support[m] = s
            m += 1
    for t in range(n):
        if not inside[t]:
            total = 0.0
            for k in range(m):
                s = support[k]
                total += K[s, t] * alpha[s] * y[s]
            F[t] = y[t] - total
        active[t] = t
    return n


@numba.njit(cache=True, no_cpython_wrapper=True)
def _row(XT, K, have, i):
    """Row i of the Gram matrix the first time it is asked, from the columns ``XT = Xᵀ``:
    ``K_it = Σ_k x_ik x_tk`` summed in the order of k (as ``K_ti`` is: K stays symmetric)."""
    Ki = K[i]
    if not have[i]:
        n = Ki.shape[0]
        for t in range(n):
            Ki[t] = 0.0
        for k in range(XT.shape[0]):
            xk, xik = XT[k], XT[k, i]
            for t in range(n):
                Ki[t] += xk[t] * xik
        have[i] = True
    return Ki
