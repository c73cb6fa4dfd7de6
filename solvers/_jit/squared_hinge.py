"""Jitted O(n) passes of the squared hinge's finite Newton method (solvers/squared_hinge_newton.py):
the KKT map with the loss, and the exact line search (Keerthi & DeCoste, JMLR 2005, §3).

Along a direction δ the margins move as ``m + tΔm``, and
``φ'(t) = a₀ + t q₀ + Σ_{i: m_i + tΔm_i < 1} 2C_i Δm_i (m_i − 1 + tΔm_i)``: linear in t between
the breakpoints ``t_i = (1 − m_i)/Δm_i`` where an example enters or leaves the active set, and
increasing (f is convex). The search sweeps the breakpoints in order and returns the root of φ'.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
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


def exact_line_search(m, dm, C, a0, q0, times, rows):
    """The minimizer ``t ≥ 0`` of ``f(v + tδ)``; ``a0 = vᵀRδ``, ``q0 = δᵀRδ`` (the regularizer's
    part of ``φ'(t) = a + tq``); ``times`` (float64) and ``rows`` (int64) are scratch of n. The
    breakpoints are sorted by NumPy between two jitted passes (:func:`breakpoints`,
    :func:`sweep`): a sort compiled into the search cost more to compile than the rest of it."""
    k, a, q = breakpoints(m, dm, C, a0, q0, times, rows)
    if k == 0:
        return -a / q if q > 0.0 else 1.0
    first = times[:k].min()
    if q > 0.0 and -a / q <= first:
        return max(-a / q, 0.0)
    return sweep(m, dm, C, a, q, times, rows, np.argsort(times[:k]))


@numba.njit(cache=True)
def breakpoints(m, dm, C, a0, q0, times, rows):
    """``φ'(0) = a`` and its slope q, and the k breakpoints ``t_i > 0`` where an example leaves
    or enters the active set into ``times[:k]``, their examples into ``rows[:k]``; returns
    ``(k, a, q)``."""
    a, q = a0, q0
    k = 0
    for i in range(m.shape[0]):
        c = 2.0 * C[i] * dm[i]
        if m[i] < 1.0:
            a += c * (m[i] - 1.0)
            q += c * dm[i]
            if dm[i] > 0.0:  # leaves the active set at t_i
                times[k] = (1.0 - m[i]) / dm[i]
                rows[k] = i
                k += 1
        elif dm[i] < 0.0:  # enters it at t_i
            times[k] = (1.0 - m[i]) / dm[i]
            rows[k] = i
            k += 1
    return k, a, q


@numba.njit(cache=True)
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
