"""The jitted passes of a one-vs-one pair's certificate (``KernelDual._pair_certificate``).

What the certificate computed with some twenty NumPy calls beside its kernel product and its
sums, in two passes over n that give the same values bit for bit: :func:`box_repair`, the
repair of a solver's α for a free bias and one C (``KernelDual._repair_alpha``'s short path),
and :func:`hinge_margins`, the margins ``m = y(g + b)`` of ``g = K(αy)``, the hinge terms
``max(0, 1 − m_i)`` and the rounding screen's maxima ``max ‖x_i‖²`` and ``max |g_i|``. The sums
stay NumPy's (``np.add.reduce``, its pairwise order), taken by the caller; nothing here
allocates, so each pass compiles in a fraction of a second. Imported only where Numba is
(SMO on shared rows).
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, no_cfunc_wrapper=True)
def box_repair(raw, a, upper, y, residue, limit):
    """``_repair_alpha``'s one-coordinate step in ``a`` (a copy of ``raw``) for a free bias and
    one bound C (``upper``), ``residue = yᵀα`` and ``limit = 64 ε Σα`` given (NumPy's):
    returns the dual infeasibility, or -1.0 where the general projection must run (α out of its
    box or not finite, or ``|residue| > limit``). ``room_t = min(α_t, C − α_t)`` and its first
    largest entry as NumPy's ``minimum`` and ``argmax`` give them, the step
    ``min(max(α_i − y_i·residue, 0), C)`` as Python's ``min`` and ``max``, bit for bit."""
    best, i = -1.0, 0
    for t in range(raw.shape[0]):
        other = upper - raw[t]
        room = raw[t] if (raw[t] <= other or raw[t] != raw[t]) else other
        if not room >= 0.0:  # out of the box, or NaN
            return -1.0
        if room > best:
            best, i = room, t
    if residue == 0.0:
        return 0.0
    if abs(residue) > limit:
        return -1.0
    if not best > 0.0:  # no free coordinate: the residue stays (as the projection's)
        return 0.0
    x = a[i] - y[i] * residue
    if 0.0 > x:
        x = 0.0
    if upper < x:
        x = upper
    a[i] = x
    return abs(x - raw[i])


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hinge_margins(g, b, y, sqn, m, xi):
    """Fill ``m`` with the margins ``y_i (g_i + b)`` and ``xi`` with ``max(0, 1 − m_i)``, and
    return ``(max(0, max_i ‖x_i‖²), max(0, max_i |g_i|))``: NumPy's ``(g + b) * y``,
    ``np.maximum(1 − m, 0)`` and ``np.maximum.reduce(·, initial=0.0)`` (a NaN kept as NumPy
    keeps it), bit for bit."""
    g_max, widest = 0.0, 0.0
    for i in range(g.shape[0]):
        m[i] = (g[i] + b) * y[i]
        x = 1.0 - m[i]
        xi[i] = x if (x >= 0.0 or x != x) else 0.0
        v = abs(g[i])
        if v > g_max or v != v:
            g_max = v
    for i in range(sqn.shape[0]):
        if sqn[i] > widest or sqn[i] != sqn[i]:
            widest = sqn[i]
    return widest, g_max
