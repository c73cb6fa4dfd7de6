"""Jitted epochs of dual coordinate descent for L2-regularized logistic regression (Yu, Huang &
Lin 2011, Algorithms 3 and 4).

The dual (problems/logistic.py), over the examples of the active index set::

    min_α ½ αᵀQ̄α + Σ_i [α_i log α_i + (C_i − α_i) log(C_i − α_i)],   0 ≤ α_i ≤ C_i,

with ``Q̄_ij = y_i y_j (x_i·x_j + s²)`` (``s`` the constant bias feature, 0 without one). Each
coordinate keeps both ``α_i`` and ``α'_i = C_i − α_i``, so that the smaller of the two is never
the difference of two large numbers. The one-variable problem of coordinate i, ``α_i + z``,

    min_z (α_i + z) log(α_i + z) + (α'_i − z) log(α'_i − z) + ½ Q̄_ii z² + G_i z,

``G_i = y_i w̃·x̃_i``, has its minimizer in the half of ``(−α_i, α'_i)`` given by the sign of its
derivative's linear part at the midpoint ``z_m = (α'_i − α_i)/2``: ``½Q̄_ii(α'_i − α_i) + G_i ≥
0`` puts it where the new ``α_i ≤ C_i/2``, else where the new ``α'_i ≤ C_i/2``. Newton's method
then runs on that smaller variable ``v ∈ (0, C_i/2]``, whose derivative ``Q̄_ii(v − v_old) ±
G_i + log(v/(C_i − v))`` is increasing and concave there: a step from the left of the root stays
left of it, a step that would leave ``(0, C_i)`` multiplies ``v`` by ``ξ = 0.1`` instead
(Algorithm 4). Every logarithm has a positive argument: no ``log 0``.

The primal weights ``w = Σ α_i y_i x_i`` and ``w_b = s Σ α_i y_i`` are kept current; a step
costs two passes over ``x_i``. Randomness (the per-epoch permutation) comes from a ``uint64``
state (splitmix64, :mod:`solvers._jit.common`): a seed reproduces every iterate.
"""

from __future__ import annotations

import math

import numba

from svmbench.solvers._jit.common import shuffle_active
from svmbench.solvers._jit.rows import row_axpy, row_dot

#: ξ of Algorithm 4: the factor applied to ``v`` when a Newton step would leave ``(0, C_i)``.
SHRINK = 0.1


@numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
def logistic_dcd_epochs(
    X, y, upper, qd, s, alpha, rest, w, wb, index, rng_state, inner, max_inner, n_epochs
):
    """Run ``n_epochs`` epochs over ``index`` (the examples with ``C_i > 0``), in place.

    Parameters
    ----------
    X : dense rows or the CSR tuple
    y, upper, qd : ndarray of shape (n,)
        Labels, ``C_i`` and ``Q̄_ii = ‖x_i‖² + s²``.
    s : float
        The constant bias feature (0 without a bias in the dual).
    alpha, rest : ndarray of shape (n,)
        ``α_i`` and ``C_i − α_i``, both strictly positive on ``index``.
    w : ndarray of shape (d,); wb : ndarray of shape (1,)
        ``Σ α_i y_i x_i`` and ``s Σ α_i y_i``.
    index : int64 ndarray; rng_state : uint64 ndarray of shape (1,)
    inner : ndarray of shape (2,)
        ``[ε_inner, ε_min]``: a one-variable Newton loop stops once its derivative is below
        ``ε_inner``; an epoch that took at most one Newton step per ten coordinates divides it
        by 10, down to ``ε_min`` (LIBLINEAR's rule).
    max_inner : int
        Newton steps per coordinate at most.

    Returns
    -------
    (epochs, largest |derivative| of the last epoch at its starting points, Newton steps)
    """
    m = index.shape[0]
    gmax = 0.0
    newton = 0
    for _ in range(n_epochs):
        shuffle_active(index, m, rng_state)
        gmax = 0.0
        epoch_steps = 0
        for k in range(m):
            i = index[k]
            c = upper[i]
            a = qd[i]
            yi = y[i]
            g = yi * row_dot(X, i, w, s * wb[0])
            if 0.5 * a * (rest[i] - alpha[i]) + g < 0.0:
                sign = -1.0  # the new α'_i is the smaller variable
                v_old, partner = rest[i], alpha[i]
            else:
                sign = 1.0
                v_old, partner = alpha[i], rest[i]
            grad = sign * g + math.log(v_old / partner)
            gmax = max(gmax, abs(grad))
            v = v_old
            if partner < 0.5 * c:
                v = SHRINK * v
                grad = a * (v - v_old) + sign * g + math.log(v / (c - v))
            steps = 0
            while steps < max_inner and abs(grad) >= inner[0]:
                curvature = a + c / ((c - v) * v)
                trial = v - grad / curvature
                if trial <= 0.0:
                    v = SHRINK * v
                elif trial >= c:
                    v = 0.5 * (v + c)
                else:
                    v = trial
                grad = a * (v - v_old) + sign * g + math.log(v / (c - v))
                steps += 1
            epoch_steps += steps
            if steps > 0 and v != v_old:
                if sign > 0.0:
                    alpha[i] = v
                    rest[i] = c - v
                else:
                    rest[i] = v
                    alpha[i] = c - v
                delta = sign * (v - v_old) * yi
                row_axpy(X, i, delta, w)
                wb[0] += s * delta
        newton += epoch_steps
        if epoch_steps <= m // 10:
            inner[0] = max(inner[1], 0.1 * inner[0])
    return n_epochs, gmax, newton
