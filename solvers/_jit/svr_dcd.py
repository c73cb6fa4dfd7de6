"""Jitted epochs of dual coordinate descent for linear ε-SVR (Ho & Lin 2012, Algorithm 4).

The dual solved (problems/svr_linear.py), over the examples ``i`` of the active index set, is

    min_β f(β) = ½ βᵀ(Q̄ + Λ)β − yᵀβ + ε‖β‖₁,   −U_i ≤ β_i ≤ U_i,
    Q̄_ij = x_i·x_j + s²,

with ``Λ_ii = 0, U_i = C_i`` (plain ε-insensitive loss) or ``Λ_ii = 1/(2 C_i), U_i = ∞`` (squared),
and ``s`` the constant bias feature (0 without a bias). The primal weights ``w = Σ β_i x_i`` and
``w_b = s Σ β_i`` are kept current, so that a step costs one dot product and one axpy over
``x_i``.

The one-variable problem of coordinate i, ``min_d ½H d² + G d + ε|β_i + d|`` with ``G = ∇_i
(½βᵀ(Q̄ + Λ)β − yᵀβ)`` and ``H = Q̄_ii + Λ_ii``, is piecewise quadratic; its minimizer is closed
form ([Ho12] eq. (25)): ``d = −(G + ε)/H`` if ``G + ε < Hβ_i``, ``−(G − ε)/H`` if ``G − ε > Hβ_i``,
else ``−β_i``, then clipped to the box. The violation of the optimality conditions (the minimum-norm
subgradient, [Ho12] eq. (27)) drives LIBLINEAR's shrinking (``solve_l2r_l1l2_svr``) and its
stopping rule ``‖v‖₁ ≤ eps · ‖v⁰‖₁`` (the sum of violations over the active set against the first
epoch's). Randomness (the per-epoch permutation) comes from a ``uint64`` state (splitmix64,
:mod:`solvers._jit.common`): a seed reproduces every iterate. No ``fastmath``.

References
----------
C.-H. Ho, C.-J. Lin. Large-scale linear support vector regression. JMLR 13, 2012 (Algorithm 4).
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.common import shuffle_active
from svmbench.solvers._jit.rows import prefetch_offsets, prefetch_row, row_axpy, row_dot

#: A step ``|d|`` below this is not taken (LIBLINEAR's 1e-12).
STEP_ZERO = 1e-12
#: The row this many places ahead in the shuffled order is prefetched (as in :mod:`dcd`).
PREFETCH_AHEAD = 4
#: A shrunk active set is reset to the full set at least once every this many epochs.
FORCED_RECHECK_EPOCHS = 200


@numba.njit(cache=True, error_model="numpy", inline="always")
def svr_epoch(
    X, y, C, upper, lam, qd, eps_tube, s, beta, w, wb, sums, index, active_size, gmax_old, rng
):  # fmt: skip
    """One epoch over ``index[:active_size]`` in a shuffled order, in place.

    ``C`` holds ``C_i``, ``upper`` ``U_i``, ``lam`` ``Λ_ii``, ``qd`` ``H_i = ‖x_i‖² + s² + Λ_ii``;
    ``sums = [Σ y_i β_i, Σ |β_i|, Σ Λ_ii β_i²]`` is kept current. A coordinate at 0 whose
    ``G ± ε`` straddle 0 by more than ``gmax_old``, or at a bound with its gradient pointing out
    by more than ``gmax_old``, is shrunk (moved past the active set's end). Returns
    ``(active_size, largest violation, sum of violations, gap estimate)``, the estimate being
    the sum of :func:`gap_term` over the coordinates visited, each at the point its step starts
    from (a shrunk coordinate's term is 0 when it is shrunk).
    """
    shuffle_active(index, active_size, rng)
    gmax_new = 0.0
    gnorm1 = 0.0
    gap = 0.0
    k = 0
    while k < active_size:
        if k + 2 * PREFETCH_AHEAD < active_size:
            prefetch_offsets(X, index[k + 2 * PREFETCH_AHEAD])
        if k + PREFETCH_AHEAD < active_size:
            prefetch_row(X, index[k + PREFETCH_AHEAD])
        i = index[k]
        b_i = beta[i]
        G = row_dot(X, i, w, s * wb[0]) - y[i] + lam[i] * b_i
        H = qd[i]
        U = upper[i]
        Gp = G + eps_tube
        Gn = G - eps_tube
        violation = 0.0
        shrink = False
        if b_i == 0.0:
            if Gp < 0.0:
                violation = -Gp
            elif Gn > 0.0:
                violation = Gn
            elif Gp > gmax_old and Gn < -gmax_old:
                shrink = True
        elif b_i >= U:
            if Gp > 0.0:
                violation = Gp
            elif Gp < -gmax_old:
                shrink = True
        elif b_i <= -U:
            if Gn < 0.0:
                violation = -Gn
            elif Gn > gmax_old:
                shrink = True
        elif b_i > 0.0:
            violation = abs(Gp)
        else:
            violation = abs(Gn)
        if shrink:
            active_size -= 1
            index[k] = index[active_size]
            index[active_size] = i
            continue  # re-examine the coordinate swapped into slot k
        gmax_new = max(gmax_new, violation)
        gnorm1 += violation
        k += 1
        # the closed-form minimizer of the one-variable problem ([Ho12] eq. (25))
        if Gp < H * b_i:
            d = -Gp / H
        elif Gn > H * b_i:
            d = -Gn / H
        else:
            d = -b_i
        # the share of the gap before the step (after it, it is 0: the step is exact)
        gap += gap_term(lam[i] * b_i - G, b_i, C[i], lam[i], eps_tube)
        if abs(d) < STEP_ZERO:
            continue
        b_new = min(max(b_i + d, -U), U)
        delta = b_new - b_i
        if delta != 0.0:
            beta[i] = b_new
            row_axpy(X, i, delta, w)
            wb[0] += s * delta
            sums[0] += y[i] * delta
            sums[1] += abs(b_new) - abs(b_i)
            sums[2] += lam[i] * (b_new * b_new - b_i * b_i)
    return active_size, gmax_new, gnorm1, gap


@numba.njit(cache=True, error_model="numpy", inline="always")
def gap_term(r, b, C, lam, eps_tube):
    """Example i's share of the duality gap at ``w̃ = Σ β_j x̃_j``, ``r = y_i − x̃_i·w̃``:
    ``C ℓ(r) − β r + ε|β| + ½Λ β²`` (≥ 0, Fenchel–Young; ``ℓ`` squared when ``Λ > 0``). Their
    sum over every example is ``P(w̃) − D(β)``: ``‖w̃‖² = Σ β_i (y_i − r_i)``."""
    xi = max(0.0, abs(r) - eps_tube)
    loss = C * xi * xi if lam > 0.0 else C * xi
    return loss - b * r + eps_tube * abs(b) + 0.5 * lam * b * b


#: What :func:`svr_dcd_epochs` reports it stopped on.
RAN_OUT, NATIVE_MET, ESTIMATE_MET = 0, 1, 2


@numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
def svr_dcd_epochs(
    X, y, C, upper, lam, qd, eps_tube, s, beta, w, wb, sums, index, rng, row_nnz, counts, norms,
    eps, gap_target, shrinking, max_epochs,
):  # fmt: skip
    """Up to ``max_epochs`` epochs with LIBLINEAR's bookkeeping between them, stopping early when
    ``Σ violations ≤ eps · Σ violations of the first epoch`` holds on the full set, or when the
    epoch's gap estimate (:func:`svr_epoch`) is at most ``gap_target · max(1, |D(β) + estimate|)``
    over the full set (``gap_target < 0``: never). Either rule met on a shrunk set resets it to
    the full set instead.

    ``counts = [active_size, n_free, resets, forced_resets, since_full]`` (int64) and
    ``norms = [Gmax_old, first epoch's Σ violations (< 0: not yet), last Σ violations, last gap
    estimate, D(β)]`` are updated in place. A shrunk set that meets the rule is reset to the
    full set (``counts[2]``), as is one left shrunk for :data:`FORCED_RECHECK_EPOCHS` epochs
    (``counts[3]``). Returns ``(epochs, nonzeros of the rows visited, RAN_OUT | NATIVE_MET |
    ESTIMATE_MET)``.
    """
    inf = np.inf
    n_free = counts[1]
    work = 0.0
    for epoch in range(max_epochs):
        if counts[0] < n_free and counts[4] >= FORCED_RECHECK_EPOCHS:
            counts[0] = n_free
            norms[0] = inf
            counts[3] += 1
        counts[4] = 0 if counts[0] == n_free else counts[4] + 1
        active = counts[0]
        full = active == n_free
        for k in range(active):
            work += row_nnz[index[k]]
        gmax_old = norms[0] if shrinking else inf
        active, gmax_new, gnorm1, gap = svr_epoch(
            X, y, C, upper, lam, qd, eps_tube, s, beta, w, wb, sums, index, active, gmax_old, rng
        )
        counts[0] = active
        if norms[1] < 0.0:
            norms[1] = gnorm1
        norms[2] = gnorm1
        norms[3] = gap
        if gap_target >= 0.0:
            # D(β) = yᵀβ − ε‖β‖₁ − ½‖w̃‖² − ½ΣΛβ², from the sums kept current
            dual = sums[0] - eps_tube * sums[1] - 0.5 * (w @ w + wb[0] * wb[0] + sums[2])
            norms[4] = dual
            if gap <= gap_target * max(1.0, abs(dual + gap)):
                norms[0] = gmax_new
                if full:
                    return epoch + 1, work, ESTIMATE_MET
                counts[0] = n_free  # the shrunk set meets it: an epoch over the full set next
                counts[2] += 1
                continue
        if gnorm1 <= eps * norms[1]:
            norms[0] = inf
            if active == n_free:
                return epoch + 1, work, NATIVE_MET
            counts[0] = n_free  # the shrunk set meets the rule: re-check the full set
            counts[2] += 1
        else:
            norms[0] = gmax_new
    return max_epochs, work, RAN_OUT
