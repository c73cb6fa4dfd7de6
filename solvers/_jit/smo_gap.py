"""SMO's O(n) gap estimate and its free bias, from the maintained gradient, in one jitted pass each.

For the hinge (:mod:`solvers.smo`), with ``G = Q̃α − 1`` and ``r_t = G_t + y_t b``::

    P − D ≈ Σ_t α_t r_t + C_t max(0, −r_t),    P ≈ ½(Σ_t α_t G_t + Σ_t α_t) + Σ_t C_t max(0, −r_t)

A free bias is LIBSVM's: ``b = mean(−y_t G_t)`` over the free multipliers (bound status 3:
``0 < α_t < C_t``), else the midpoint of ``[max_{I_up} −y_t G_t, min_{I_low} −y_t G_t]``, over
the active set. :func:`free_terms` gathers the mean's terms (their sum is NumPy's
``np.add.reduce``, taken beside it, so that b is the value NumPy computed, bit for bit) and the
extremes. The estimate's sums run in index order (NumPy's dot products are BLAS's, whose order
is the library's): they decide only when SMO asks for a certificate, and how far it tightens
eps. Neither allocates nor sums pairwise (a
jitted copy of NumPy's pairwise sum cost more compile time than the NumPy call it saves): each
compiles in a fraction of a second.
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.smo_counters import N_ACTIVE


@numba.njit(cache=True, no_cfunc_wrapper=True)
def free_terms(y, G, status, active, n_active, terms):
    """``(k, lo, hi)``: the terms ``y_t G_t`` of the free multipliers, in ``terms[:k]`` (over
    the active set: all of it in index order when nothing is shrunk, else ``active[:n_active]``
    in that order), and the extremes ``lo = max_{I_up} −y_t G_t``, ``hi = min_{I_low} −y_t G_t``
    (−inf and inf over an empty set, NaN where a term is NaN, as NumPy's max and min)."""
    whole = n_active == y.shape[0]
    k = 0
    lo, hi = -np.inf, np.inf
    lo_nan, hi_nan = False, False
    for s in range(n_active):
        t = s if whole else active[s]
        bits = status[t]
        if bits == 3:
            terms[k] = y[t] * G[t]
            k += 1
        v = -y[t] * G[t]
        if bits & 1:
            lo_nan |= v != v
            if v > lo:
                lo = v
        if bits & 2:
            hi_nan |= v != v
            if v < hi:
                hi = v
    return k, np.nan if lo_nan else lo, np.nan if hi_nan else hi


def free_bias(y, G, status, active, n_active, terms) -> float:
    """LIBSVM's free b, as :meth:`solvers.smo.SMO._bias_of` computed it with NumPy (``terms``
    a float64 array of at least ``n_active`` entries, overwritten): the mean by
    ``np.add.reduce`` of the same terms in the same order, or the midpoint of the extremes."""
    k, lo, hi = free_terms(y, G, status, active, n_active, terms)
    if k:
        return float(-np.add.reduce(terms[:k]) / k)  # Σ(−v) = −Σv exactly
    if not np.isfinite(lo):
        return float(hi) if np.isfinite(hi) else 0.0
    if not np.isfinite(hi):
        return float(lo)
    return float(0.5 * (lo + hi))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hinge_estimates(alpha, y, G, Cw, b):
    """``(P, P − D)`` of the hinge's point at the bias ``b`` (0 where the estimate takes
    none), as in the module's formula, over every variable."""
    ar, hinge, ag, total = 0.0, 0.0, 0.0, 0.0
    for t in range(y.shape[0]):
        r = y[t] * b + G[t]
        ar += alpha[t] * r
        if r < 0.0 or r != r:  # min(r, 0), NaN kept
            hinge += Cw[t] * r
        ag += alpha[t] * G[t]
        total += alpha[t]
    return 0.5 * (ag + total) - hinge, ar - hinge


def compile_estimates(core) -> None:
    """Compile (or load) :func:`free_terms` and :func:`hinge_estimates` on a warm-up's record
    (:class:`~solvers._jit.smo.Core`), with the driver's argument types."""
    free_bias(core.y, core.G, core.status, core.active, core.ist[N_ACTIVE], np.empty(core.y.size))
    hinge_estimates(core.alpha, core.y, core.G, core.C, 0.0)
