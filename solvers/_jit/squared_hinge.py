"""Jitted O(n) passes of the squared hinge's finite Newton method (solvers/squared_hinge_newton.py):
the exact line search (Keerthi & DeCoste, JMLR 2005, §3), the step along it with the KKT map, the
gradient and the active set (dense rows), and the Newton matrix's update by the rows that changed.

Along a direction δ the margins move as ``m + tΔm``, ``Δm = y ∘ X̃δ``, and
``φ'(t) = a₀ + t q₀ + Σ_{i: m_i + tΔm_i < 1} 2C_i Δm_i (m_i − 1 + tΔm_i)``, ``a₀ = vᵀRδ``,
``q₀ = δᵀRδ``: linear in t between the breakpoints ``t_i = (1 − m_i)/Δm_i`` where an example enters
or leaves the active set, and increasing (f is convex). The search sweeps the breakpoints in order
and returns the root of φ'.
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: ``bias`` codes of :func:`advance`: no bias column, a regularized one, a free one.
NO_BIAS, REGULARIZED_BIAS, FREE_BIAS = 0, 1, 2


@numba.njit(cache=True, no_cfunc_wrapper=True)
def kkt_map(m, C, alpha):
    """``α_i = 2C_i max(0, 1 − m_i)`` into ``alpha``; returns ``Σ C_i max(0, 1 − m_i)²``."""
    loss = 0.0
    for i in range(m.shape[0]):
        slack = 1.0 - m[i]
        if slack > 0.0:
            alpha[i] = 2.0 * C[i] * slack
            loss += C[i] * slack * slack
        else:
            alpha[i] = 0.0
    return loss


def exact_line_search(m, z, y, shift, C, v, delta, free_bias, times, rows, dm):
    """The minimizer ``t ≥ 0`` of ``f(v + tδ)`` from ``z = Xδ_w`` and ``shift`` (the bias
    column's ``s·δ_b``, 0 without one); ``Δm = y ∘ (z + shift)`` is written into ``dm``;
    ``times`` (float64) and ``rows`` (int64) are scratch of n. The breakpoints are sorted by
    NumPy between two jitted passes (:func:`breakpoints`, :func:`sweep`), and only when the root
    lies past the first of them: a sort compiled into the search cost more to compile than the
    rest of it."""
    k, a, q, first = breakpoints(m, z, y, shift, C, v, delta, free_bias, times, rows, dm)
    if k == 0:
        return -a / q if q > 0.0 else 1.0
    if q > 0.0 and -a / q <= first:
        return max(-a / q, 0.0)
    return sweep(m, dm, C, a, q, times, rows, np.argsort(times[:k]))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def breakpoints(m, z, y, shift, C, v, delta, free_bias, times, rows, dm):
    """``Δm_i = y_i (z_i + shift)`` into ``dm``; ``φ'(0) = a`` and its slope q (with ``a₀ = vᵀRδ``,
    ``q₀ = δᵀRδ``, R without the last entry when ``free_bias``), the k breakpoints ``t_i > 0``
    where an example leaves or enters the active set into ``times[:k]``, their examples into
    ``rows[:k]``, and the first of them; returns ``(k, a, q, first)``."""
    a, q = 0.0, 0.0
    last = delta.shape[0] - 1 if free_bias else delta.shape[0]
    for j in range(last):
        a += v[j] * delta[j]
        q += delta[j] * delta[j]
    k = 0
    first = np.inf
    for i in range(m.shape[0]):
        dmi = y[i] * (z[i] + shift)
        dm[i] = dmi
        c = 2.0 * C[i] * dmi
        if m[i] < 1.0:
            a += c * (m[i] - 1.0)
            q += c * dmi
            if dmi > 0.0:  # leaves the active set at t_i
                times[k] = (1.0 - m[i]) / dmi
                rows[k] = i
                first = min(first, times[k])
                k += 1
        elif dmi < 0.0:  # enters it at t_i
            times[k] = (1.0 - m[i]) / dmi
            rows[k] = i
            first = min(first, times[k])
            k += 1
    return k, a, q, first


@numba.njit(cache=True, no_cfunc_wrapper=True)
def sweep(m, dm, C, a, q, times, rows, order):
    """The root of φ' from ``φ'(t) = a + tq`` at ``t = 0``, the breakpoints visited in
    ``order`` (increasing times), φ' updated at each."""
    start = 0.0
    for j in order:
        t = times[j]
        if a + t * q >= 0.0:  # the root lies on [start, t]
            return start if q <= 0.0 else max(start, -a / q)
        i = rows[j]
        c = 2.0 * C[i] * dm[i]
        if m[i] < 1.0:
            a -= c * (m[i] - 1.0)
            q -= c * dm[i]
        else:
            a += c * (m[i] - 1.0)
            q += c * dm[i]
        start = t
    return start if q <= 0.0 else max(start, -a / q)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def advance(X, y, C, col, bias, t, v, delta, m, dm, v_new, m_new, g, alpha, active, changed):
    """The step to ``v + tδ`` on dense rows, in one pass: the margins ``m + tΔm``, the KKT map
    ``α_i = 2C_i max(0, 1 − m_i)``, ``u = X̃ᵀ(y∘α)`` over the active rows, the gradient
    ``∇f = Rv − u`` into ``g``, and the active set ``{i : m_i < 1, C_i > 0}`` into ``active``,
    the rows that entered it into ``changed[:n_in]``, those that left into
    ``changed[n − n_out:]``. ``bias`` is one of :data:`NO_BIAS`, :data:`REGULARIZED_BIAS`,
    :data:`FREE_BIAS` (the bias column of value ``col``). Returns ``(f, loss, Σα, ‖u‖², ‖∇f‖²,
    finite, |I|, n_in, n_out)``, ``‖u‖²`` without the bias entry of a free bias (the dual
    estimate's), ``finite`` whether f and every entry of ∇f are finite."""
    n, d = X.shape
    dim = v.shape[0]
    for j in range(dim):
        v_new[j] = v[j] + t * delta[j]
        g[j] = 0.0
    loss, total, u_bias = 0.0, 0.0, 0.0
    count, n_in, n_out = 0, 0, 0
    for i in range(n):
        mi = m[i] + t * dm[i]
        m_new[i] = mi
        slack = 1.0 - mi
        inside = slack > 0.0 and C[i] > 0.0
        if slack > 0.0:
            a = 2.0 * C[i] * slack
            alpha[i] = a
            loss += C[i] * slack * slack
            total += a
            c = y[i] * a
            for j in range(d):  # u += y_i α_i x_i
                g[j] += c * X[i, j]
            u_bias += c
        else:
            alpha[i] = 0.0
        if inside:
            count += 1
        if inside != active[i]:
            if inside:
                changed[n_in] = i
                n_in += 1
            else:
                n_out += 1
                changed[n - n_out] = i
            active[i] = inside
    uu, vv, gg = 0.0, 0.0, 0.0
    for j in range(d):
        uu += g[j] * g[j]
        vv += v_new[j] * v_new[j]
        g[j] = v_new[j] - g[j]
        gg += g[j] * g[j]
    if bias != NO_BIAS:
        u_b = col * u_bias
        if bias == REGULARIZED_BIAS:
            uu += u_b * u_b
            vv += v_new[d] * v_new[d]
            g[d] = v_new[d] - u_b
        else:
            g[d] = -u_b
        gg += g[d] * g[d]
    f = 0.5 * vv + loss
    finite = math.isfinite(f)
    for j in range(dim):
        finite = finite and math.isfinite(g[j])
    return f, loss, total, uu, gg, finite, count, n_in, n_out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def rank_update(H, X, C, col, has_bias, changed, n_in, n_out):
    """``H += Σ_E 2C_i x̃_i x̃_iᵀ − Σ_L 2C_i x̃_i x̃_iᵀ`` (lower triangle) over the rows that entered
    (``changed[:n_in]``) and left (``changed[n − n_out:]``) the active set, ``x̃_i = (x_i, col)``
    with the bias column."""
    n, d = X.shape
    for s in range(n_in + n_out):
        if s < n_in:
            i, c = changed[s], 2.0 * C[changed[s]]
        else:
            i = changed[n - n_out + (s - n_in)]
            c = -2.0 * C[i]
        for a in range(d):
            ca = c * X[i, a]
            for b in range(a + 1):
                H[a, b] += ca * X[i, b]
        if has_bias:
            cb = c * col
            for b in range(d):
                H[d, b] += cb * X[i, b]
            H[d, d] += cb * col
