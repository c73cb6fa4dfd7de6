"""SMO's O(n) gap estimate and its free bias, from the maintained gradient, in one jitted call.

For the hinge (:mod:`solvers.smo`), with ``G = Q̃α − 1`` and ``r_t = G_t + y_t b``::

    P − D ≈ Σ_t α_t r_t + C_t max(0, −r_t),    P ≈ ½(Σ_t α_t G_t + Σ_t α_t) + Σ_t C_t max(0, −r_t)

A free bias is LIBSVM's: ``b = mean(−y_t G_t)`` over the free multipliers (bound status 3:
``0 < α_t < C_t``), else the midpoint of ``[max_{I_up} −y_t G_t, min_{I_low} −y_t G_t]``, over
the active set. Its mean is NumPy's ``np.add.reduce`` of the same terms in the same order
(:func:`numpy_sum`), so that b is the value NumPy computes, bit for bit. The estimate's sums
run in index order (NumPy's dot products are BLAS's, whose order is the library's): they decide
only when SMO asks for a certificate, and how far it tightens eps.
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.problems._sums import numpy_sum
from svmbench.solvers._jit.smo_counters import N_ACTIVE


@numba.njit(cache=True, no_cfunc_wrapper=True)
def free_bias(y, G, status, active, n_active):
    """LIBSVM's free b over the active set (all of it in index order when nothing is shrunk,
    else ``active[:n_active]`` in that order), as :meth:`solvers.smo.SMO._bias_of` computed it
    with NumPy: the same terms, sums and comparisons (a NaN term gives the extremes NumPy's
    max and min give)."""
    whole = n_active == y.shape[0]
    terms = np.empty(n_active)
    n_free = 0
    lo, hi = -np.inf, np.inf
    lo_nan, hi_nan = False, False
    for s in range(n_active):
        t = s if whole else active[s]
        bits = status[t]
        if bits == 3:
            terms[n_free] = y[t] * G[t]
            n_free += 1
        v = -y[t] * G[t]
        if bits & 1:
            lo_nan |= v != v
            if v > lo:
                lo = v
        if bits & 2:
            hi_nan |= v != v
            if v < hi:
                hi = v
    if n_free:
        return -numpy_sum(terms, 0, n_free) / n_free
    lo = np.nan if lo_nan else lo
    hi = np.nan if hi_nan else hi
    if not np.isfinite(lo):
        return hi if np.isfinite(hi) else 0.0
    if not np.isfinite(hi):
        return lo
    return 0.5 * (lo + hi)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hinge_estimates(alpha, y, G, Cw, status, active, ist, free):
    """``(b, P, P − D)`` of the hinge's current point: b the free bias (:func:`free_bias`;
    0 without ``free``, where the estimate takes no bias), P and the gap as in the module's
    formula, over every variable."""
    b = free_bias(y, G, status, active, ist[N_ACTIVE]) if free else 0.0
    ar, hinge, ag = 0.0, 0.0, 0.0
    for t in range(y.shape[0]):
        r = y[t] * b + G[t]
        ar += alpha[t] * r
        if r < 0.0 or r != r:  # min(r, 0), NaN kept
            hinge += Cw[t] * r
        ag += alpha[t] * G[t]
    total = numpy_sum(alpha, 0, alpha.shape[0])
    return b, 0.5 * (ag + total) - hinge, ar - hinge


def compile_estimates(core) -> None:
    """Compile (or load) :func:`hinge_estimates` and :func:`free_bias` on a warm-up's
    record (:class:`~solvers._jit.smo.Core`), with the driver's argument types."""
    hinge_estimates(core.alpha, core.y, core.G, core.C, core.status, core.active, core.ist, True)
    free_bias(core.y, core.G, core.status, core.active, core.ist[N_ACTIVE])
