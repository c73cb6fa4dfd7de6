"""NumPy's float64 sum, jitted bit for bit, and the hinge certificate's pass over its margins.

:func:`numpy_sum` is ``np.add.reduce`` of a contiguous float64 array in NumPy's own order
(pairwise summation: blocks of at most 128 terms by eight accumulators), so that jitted code
computes the sums a NumPy formula computed, to the last bit. :func:`hinge_margins` is what a
one-vs-one pair's certificate (``KernelDual._pair_certificate``) computed from ``g = K(αy)``
with some ten NumPy calls: the margins ``m = y(g + b)``, ``Σ max(0, 1 − m_i)``, ``Σ α_i``,
``max ‖x_i‖²`` and ``max |g_i|``, each the value NumPy gave. Imported only where Numba is
(SMO on shared rows).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _block_sum(a, start, n):
    """NumPy's sum of at most 128 terms: fewer than eight in order from 0.0, else eight
    accumulators over the groups of eight, combined pairwise, then the rest in order."""
    if n < 8:
        res = 0.0
        for i in range(start, start + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    stop = start + n - n % 8
    i = start + 8
    while i < stop:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < start + n:
        res += a[i]
        i += 1
    return res


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def numpy_sum(a, start, n):
    """``np.add.reduce(a[start:start + n])`` of a contiguous float64 array, bit for bit: NumPy's
    pairwise summation, a run of more than 128 terms split at half its length (rounded down to
    a multiple of eight) and its halves summed apart (:func:`_block_sum` at the leaves). The
    recursion is walked with an explicit stack (a recursive jitted function failed to load from
    Numba's cache)."""
    if n <= 128:
        return _block_sum(a, start, n)
    first = np.empty(64, dtype=np.int64)  # each open run: its start, length, left half's sum
    length = np.empty(64, dtype=np.int64)
    left = np.empty(64)
    right_done = np.zeros(64, dtype=np.bool_)  # its left half summed, its right one open
    top = 0
    first[0], length[0] = start, n
    while True:
        while length[top] > 128:  # open the left halves down to a leaf
            half = length[top] // 2
            half -= half % 8
            right_done[top] = False
            first[top + 1], length[top + 1] = first[top], half
            top += 1
        value = _block_sum(a, first[top], length[top])
        top -= 1
        while top >= 0 and right_done[top]:  # both halves summed: the run's sum
            value = left[top] + value
            top -= 1
        if top < 0:
            return value
        left[top], right_done[top] = value, True  # then its right half
        half = length[top] // 2
        half -= half % 8
        first[top + 1], length[top + 1] = first[top] + half, length[top] - half
        top += 1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hinge_margins(g, b, y, a, sqn, m):
    """Fill ``m`` with the margins ``y_i (g_i + b)`` and return ``(Σ max(0, 1 − m_i), Σ α_i,
    max(0, max_i ‖x_i‖²), max(0, max_i |g_i|))``: NumPy's ``(g + b) * y``,
    ``np.add.reduce(np.maximum(1 − m, 0))``, ``np.add.reduce(a)`` and the maxima by
    ``np.maximum.reduce(·, initial=0.0)`` (a NaN kept as NumPy keeps it), bit for bit."""
    n = g.shape[0]
    xi = np.empty(n)
    g_max, widest = 0.0, 0.0
    for i in range(n):
        m[i] = (g[i] + b) * y[i]
        x = 1.0 - m[i]
        xi[i] = x if (x >= 0.0 or x != x) else 0.0
        v = abs(g[i])
        if v > g_max or v != v:
            g_max = v
    for i in range(sqn.shape[0]):
        if sqn[i] > widest or sqn[i] != sqn[i]:
            widest = sqn[i]
    return numpy_sum(xi, 0, n), numpy_sum(a, 0, a.shape[0]), widest, g_max


@numba.njit(cache=True, no_cfunc_wrapper=True)
def box_repair(raw, upper, y, residue, rtol):
    """``KernelDual._repair_alpha``'s one-coordinate step for a free bias and one bound C
    (``upper``), with ``residue = yᵀα`` given (NumPy's dot): ``(a, dual_infeasibility)``, or
    ``(raw's copy, -1.0)`` where the general projection must run (α out of its box or not
    finite, or a residue beyond rounding, ``|yᵀα| > rtol · Σα``). ``room_t = min(α_t, C − α_t)``
    and its first largest entry as NumPy's ``minimum`` and ``argmax`` give them, the step
    ``min(max(α_i − y_i·residue, 0), C)`` as Python's ``min`` and ``max``, bit for bit."""
    n = raw.shape[0]
    a = raw.copy()
    best, i = -np.inf, 0
    for t in range(n):
        other = upper - raw[t]
        room = raw[t] if (raw[t] <= other or raw[t] != raw[t]) else other
        if not room >= 0.0:
            return a, -1.0
        if room > best:
            best, i = room, t
    if residue == 0.0:
        return a, 0.0
    if abs(residue) > rtol * numpy_sum(raw, 0, n):
        return a, -1.0
    if not best > 0.0:  # no free coordinate: the residue stays (as the projection's)
        return a, 0.0
    x = a[i] - y[i] * residue
    if 0.0 > x:
        x = 0.0
    if upper < x:
        x = upper
    a[i] = x
    return a, abs(x - raw[i])
