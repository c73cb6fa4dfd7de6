"""Jitted epochs of dual coordinate descent for the linear SVM (Hsieh et al., ICML 2008, Alg. 3).

The dual solved, over the examples ``i`` of the active index set, is

.. math::

    \\min_\\alpha \\tfrac12 \\alpha^T (\\bar Q + D) \\alpha - e^T \\alpha,
    \\quad 0 \\le \\alpha_i \\le U_i,
    \\qquad \\bar Q_{ij} = y_i y_j (x_i \\cdot x_j + s^2),

with ``D_ii = 0, U_i = C_i`` (hinge) or ``D_ii = 1/(2 C_i), U_i = ∞`` (squared hinge), and ``s``
the constant bias feature (0 when there is no bias). The primal weights are kept up to date,
``w = Σ_i α_i y_i x_i`` and ``w_b = s Σ_i α_i y_i``, so that one coordinate step costs one sparse
dot product and one axpy over the row ``x_i``; the constant feature is never materialized.

One call of :func:`dcd_epoch` is one outer iteration of
Algorithm 3: a seeded shuffle of the active set, then one projected Newton step per active
coordinate, with LIBLINEAR's shrinking test against the previous epoch's projected-gradient bounds
``PGmax_old``/``PGmin_old``. The kernels take arrays and scalars only; randomness comes from a
``uint64`` state array owned by the caller (splitmix64, :mod:`solvers._jit.common`), so a seed
reproduces every epoch. In a
random order every row is a cache miss once ``X`` exceeds the cache, so the row a few places ahead
is prefetched (``llvm.prefetch``, a hint that changes no value), which shortens the epochs over
an ``X`` larger than the cache (docs/measurements.md, "dcd"). No ``fastmath``: the arithmetic is
the plain loop's, bit for bit. The rows are read through :mod:`solvers._jit.rows` (one body for
dense and CSR rows, one summation order), so dense and CSR storage of the same data give
identical iterates.

References
----------
C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi, S. Sundararajan. A dual coordinate descent
method for large-scale linear SVM. ICML 2008.
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.common import next_uniform, shuffle_active  # noqa: F401 (re-exported)
from svmbench.solvers._jit.rows import (
    n_rows,
    prefetch_offsets,
    prefetch_row,
    row_axpy,
    row_dot,
    row_sqnorm,
)

#: ``|PG|`` below this is treated as zero: no step is taken (LIBLINEAR uses the same 1e-12).
PG_ZERO = 1e-12
#: The row ``PREFETCH_AHEAD`` places ahead in the shuffled order is prefetched while the current
#: one is processed (CSR: where the row starts, twice as far ahead): in a random order every row
#: is a cache miss once ``X`` exceeds the cache.
PREFETCH_AHEAD = 4


@numba.njit(cache=True, no_cfunc_wrapper=True)
def row_sq_norms(X):
    """``‖x_i‖²`` for every row of ``X`` (dense rows or the CSR tuple)."""
    n = n_rows(X)
    out = np.empty(n)
    for i in range(n):
        out[i] = row_sqnorm(X, i)
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def weights(X, coef, out):
    """``out = Σ_i coef_i x_i`` (``coef_i = α_i y_i``); rows with ``coef_i = 0`` are skipped."""
    out[:] = 0.0
    for i in range(n_rows(X)):
        c = coef[i]
        if c != 0.0:
            row_axpy(X, i, c, out)


# inlined into dcd_epochs's Numba IR: compiled there once, not a second time as a callee, for a
# shorter cold warm-up and the same iterates (docs/measurements.md, "dcd")
@numba.njit(cache=True, error_model="numpy", inline="always")
def dcd_epoch(
    X, y, upper, diag, qd, s, alpha, w, wb, index, active_size, pg_max_old, pg_min_old, rng_state
):
    """One epoch of dual CD (Hsieh et al. 2008, Algorithm 3, one outer pass).

    For each active ``i`` in a shuffled order: ``G = y_i (w·x_i + s w_b) − 1 + D_ii α_i``
    ([Hsieh08] eq. (7)), the projected gradient ``PG`` (eq. (8)), then
    ``α_i ← min(max(α_i − G/Q̄_ii, 0), U_i)`` and ``w += (Δα_i y_i) x_i``, ``w_b += Δα_i y_i s``.
    A coordinate at a bound whose gradient points outside by more than last epoch's bound
    (``G > PGmax_old`` at 0, ``G < PGmin_old`` at ``U_i``) is shrunk: swapped to the end of the
    active set (Section 3.2 of the paper, LIBLINEAR's rule). The row ``PREFETCH_AHEAD`` places
    ahead in the order is prefetched (a cache hint: no value changes).

    Parameters
    ----------
    X : ndarray of shape (n, d), float64, C-contiguous, or the CSR tuple ``(indptr, indices,
        data)`` (sorted indices); a step touches only the stored entries of ``x_i``.
    y : ndarray of shape (n,), float64 in {-1, +1}
    upper : ndarray of shape (n,)
        ``U_i``: ``C_i`` (hinge) or ``inf`` (squared hinge).
    diag : ndarray of shape (n,)
        ``D_ii``: 0 (hinge) or ``1/(2 C_i)`` (squared hinge).
    qd : ndarray of shape (n,)
        ``Q̄_ii = ‖x_i‖² + s² + D_ii``.
    s : float
        The constant bias feature (0 for no bias).
    alpha, w : ndarray, updated in place.
    wb : ndarray of shape (1,)
        Weight of the bias feature, updated in place.
    index : ndarray of shape (n,), int64
        The active set is ``index[:active_size]``; shuffled and reordered in place.
    active_size : int
    pg_max_old, pg_min_old : float
        Shrinking bounds from the previous epoch (``inf``, ``-inf`` disable shrinking).
    rng_state : ndarray of shape (1,), uint64

    Returns
    -------
    active_size : int
        Size of the active set after shrinking.
    pg_max_new, pg_min_new : float
        Largest and smallest projected gradient met in this epoch.
    """
    shuffle_active(index, active_size, rng_state)
    pg_max_new = -np.inf
    pg_min_new = np.inf
    k = 0
    while k < active_size:
        if k + 2 * PREFETCH_AHEAD < active_size:
            prefetch_offsets(X, index[k + 2 * PREFETCH_AHEAD])
        if k + PREFETCH_AHEAD < active_size:
            prefetch_row(X, index[k + PREFETCH_AHEAD])
        i = index[k]
        yi = y[i]
        G = yi * row_dot(X, i, w, s * wb[0]) - 1.0 + diag[i] * alpha[i]  # ∂D/∂α_i
        C = upper[i]
        PG = 0.0  # projected gradient, for shrinking and stopping
        a = alpha[i]
        if a == 0.0:
            if G > pg_max_old:
                active_size -= 1
                index[k] = index[active_size]
                index[active_size] = i
                continue  # re-examine the coordinate swapped into slot k
            elif G < 0.0:
                PG = G
        elif a == C:
            if G < pg_min_old:
                active_size -= 1
                index[k] = index[active_size]
                index[active_size] = i
                continue
            elif G > 0.0:
                PG = G
        else:
            PG = G
        if PG > pg_max_new:
            pg_max_new = PG
        if PG < pg_min_new:
            pg_min_new = PG
        if abs(PG) > PG_ZERO:
            a_new = min(max(a - G / qd[i], 0.0), C)
            alpha[i] = a_new
            delta = (a_new - a) * yi
            row_axpy(X, i, delta, w)
            wb[0] += delta * s
        k += 1
    return active_size, pg_max_new, pg_min_new


#: A shrunk active set is reset to the full set at least once every this many epochs (see
#: :data:`solvers.dcd.FORCED_RECHECK_EPOCHS`, which re-exports it).
FORCED_RECHECK_EPOCHS = 200


@numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
def dcd_epochs(
    X, y, upper, diag, qd, s, alpha, w, wb, index, rng_state, row_nnz, counts, bounds, eps,
    shrinking, max_epochs,
):  # fmt: skip
    """Up to ``max_epochs`` calls of :func:`dcd_epoch` with LIBLINEAR's bookkeeping between
    them, stopping early when the native rule ``PGmax − PGmin ≤ eps`` holds on the full set.

    Between epochs: the new shrinking bounds are last epoch's ``PGmax`` (if > 0, else ``inf``)
    and ``PGmin`` (if < 0, else ``−inf``); a shrunk set that meets the rule is reset to the full
    set (a re-check, ``counts[2]``), and so is one left shrunk for
    :data:`FORCED_RECHECK_EPOCHS` epochs (``counts[3]``). Several epochs per call spare small
    problems the interpreter's cost per epoch; the epochs are those of one call each.

    ``counts = [active_size, n_free, resets, forced_resets, since_full]`` (int64) and
    ``bounds = [PGmax_old, PGmin_old]`` are updated in place; ``row_nnz`` holds the nonzeros of
    each row. Returns ``(epochs, work, converged)``: epochs run, nonzeros of the rows they
    visited, and whether the rule held on the full set at the last one.
    """
    inf = np.inf
    n_free = counts[1]
    work = 0.0
    for epoch in range(max_epochs):
        if counts[0] < n_free and counts[4] >= FORCED_RECHECK_EPOCHS:
            counts[0] = n_free
            bounds[0], bounds[1] = inf, -inf
            counts[3] += 1
        counts[4] = 0 if counts[0] == n_free else counts[4] + 1
        active = counts[0]
        for k in range(active):
            work += row_nnz[index[k]]
        old_max, old_min = (bounds[0], bounds[1]) if shrinking else (inf, -inf)
        active, pg_max, pg_min = dcd_epoch(
            X, y, upper, diag, qd, s, alpha, w, wb, index, active, old_max, old_min, rng_state
        )
        counts[0] = active
        if pg_max - pg_min <= eps:
            # a further epoch starts without shrinking bounds, like a fresh full pass
            bounds[0], bounds[1] = inf, -inf
            if active == n_free:
                return epoch + 1, work, True
            counts[0] = n_free  # the shrunk set meets the rule: re-check the full set
            counts[2] += 1
        else:
            bounds[0] = pg_max if pg_max > 0 else inf
            bounds[1] = pg_min if pg_min < 0 else -inf
    return max_epochs, work, False
