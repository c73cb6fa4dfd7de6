"""Jitted epochs of Pegasos (Shalev-Shwartz, Singer, Srebro, Cotter, Math. Prog. 127, 2011).

One call runs one epoch: the steps ``t0 + 1, …, t0 + ⌈len(order)/k⌉`` over the examples
``order`` taken in consecutive mini-batches ``A_t`` of size ``k`` (the last one may be smaller).
With ``η_t = 1/(λ t)`` and ``A_t⁺ = {i ∈ A_t : y_i (w_t·x̃_i + b_t) < 1}`` (margins at ``w_t``):

.. math::

    w_{t+1/2} = (1 - \\eta_t \\lambda)\\, w_t
               + \\frac{\\eta_t}{|A_t|} \\sum_{i \\in A_t^+} c_i\\, y_i\\, \\tilde x_i, \\qquad
    w_{t+1} = \\min\\Bigl(1, \\frac{\\rho}{\\lVert w_{t+1/2}\\rVert}\\Bigr) w_{t+1/2}
    \\quad(\\text{if projecting}),

and, for a free bias, ``b_{t+1} = b_t + (η_t/|A_t|) Σ_{A_t⁺} c_i y_i`` (same step, loss
subgradient only, no shrink, no projection). ``x̃_i = (x_i, s)`` carries the constant feature of a
regularized bias as the last coordinate of ``w̃``.

Scaled representation: ``w̃ = a·v``. The shrink ``(1 − 1/t)`` and the projection only change the
scalar ``a`` (O(1)); an update ``w̃ += g x̃_i`` is ``v += (g/a) x̃_i`` and touches the non-zeros of
``x_i`` only. ``‖v‖²`` is kept current (``+= 2 (g/a) v·x̃_i + (g/a)² ‖x̃_i‖²``) for the projection.
When ``a`` falls below ``RENORM`` the scale is folded into ``v``. At ``t = 1`` the shrink factor
is exactly 0: ``v`` is zeroed and ``a`` reset to 1.

Averaging (lazily, so that CSR epochs stay sparse; Xu 2011, as in scikit-learn's ASGD): the
weighted sum of the iterates since the last reset, ``S = Σ_t ρ_t w̃_{t+1}``, is kept as
``S = acc + β v − u`` with the scalar ``β = Σ ρ_t a_t`` and a vector ``u`` that changes only
where ``v`` does (``u += β Δv`` for each change ``Δv``). When ``a`` is folded into ``v`` the lazy
part is first flushed into the dense accumulator (``acc += β v − u``; ``β, u ← 0``), which bounds
the cancellation in ``β v − u`` (see ``RENORM``). Weights: ``ρ_t = 1`` (uniform and suffix
averaging) or ``ρ_t = Γ(t + η)/Γ(t)`` (∝ t^η, polynomial-decay averaging of Shamir & Zhang,
ICML 2013: for integer η it is ``t(t+1)…(t+η−1)``, exactly the weights of their recursion
``w̄_t = (1 − (η+1)/(t+η)) w̄_{t−1} + ((η+1)/(t+η)) w_t``).

The scalars live in ``scal`` (indices below) so that one epoch call reads and writes them all.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from svmbench.solvers._jit.rows import row_axpy, row_dot

#: Index in ``scal`` of the scale a (w̃ = a·v).
A = 0
#: Index of ‖v‖².
VSQ = 1
#: Index of the free bias b.
B = 2
#: Index of β (averaging: S = β v − u).
BETA = 3
#: Index of Σ ρ_t b_{t+1} (averaging of the free bias).
BSUM = 4
#: Index of Σ ρ_t (the total weight of the averaged iterates).
RHOSUM = 5
N_SCALARS = 6

#: The scale a is folded into v when it falls below this. It also bounds the cancellation in
#: ``S = β v − u``: between two renormalizations ``a_s/a_t ≤ 1/RENORM``, so at most ~4 digits
#: are lost (the early projected steps shrink ``a`` by ~100× each, so that a much smaller
#: threshold loses the average's digits: docs/measurements.md, "pegasos").
RENORM = 1e-4

#: Averaging codes: none, ρ_t = 1, ρ_t = Γ(t+η)/Γ(t).
AVG_NONE = 0
AVG_FLAT = 1
AVG_POLY = 2


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _weight(avg_mode, t, poly_eta):
    """ρ_t for step t ≥ 1."""
    if avg_mode == AVG_POLY:
        return math.exp(math.lgamma(t + poly_eta) - math.lgamma(t))
    return 1.0


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _after_step(scal, v, u, acc, avg_mode, t, poly_eta, radius, project, n_w):
    """Projection, renormalization and averaging after the update of step t (shared code)."""
    a = scal[A]
    if project:
        norm = a * math.sqrt(max(scal[VSQ], 0.0))
        if norm > radius:
            a *= radius / norm  # [Pegasos] eq. (the optional projection step)
    if a < RENORM:
        beta = scal[BETA]
        for j in range(n_w):
            if avg_mode != AVG_NONE:  # flush the lazy sum: acc += β v − u, then β = 0, u = 0
                acc[j] += beta * v[j] - u[j]
                u[j] = 0.0
            v[j] *= a
        scal[VSQ] *= a * a
        scal[BETA] = 0.0
        a = 1.0
    scal[A] = a
    if avg_mode != AVG_NONE:
        rho = _weight(avg_mode, t, poly_eta)
        scal[BETA] += rho * a  # S += ρ_t a v
        scal[BSUM] += rho * scal[B]
        scal[RHOSUM] += rho


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _zero_v(scal, v, u, avg_mode, n_w):
    """The shrink factor of step 1 is 0: w̃ ← 0 as v ← 0, a ← 1 (u absorbs Δv = −v)."""
    beta = scal[BETA]
    for j in range(n_w):
        if avg_mode != AVG_NONE:
            u[j] -= beta * v[j]
        v[j] = 0.0
    scal[VSQ] = 0.0
    scal[A] = 1.0


# a function of its own, not inlined: row_dot inlined twice into one body trips Numba's SSA check
@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _dot_tilde(X, i, v, s, d):
    """``x̃_i·v = x_i·v[:d] + s v[d]`` (no bias coordinate when ``s = 0``)."""
    dot = row_dot(X, i, v, 0.0)
    if s > 0.0:
        dot += s * v[d]
    return dot


@numba.njit(cache=True, no_cfunc_wrapper=True)
def pegasos_epoch(
    X,
    y,
    c,
    xsq,
    order,
    k,
    lam,
    t0,
    s,
    free_bias,
    project,
    radius,
    avg_mode,
    poly_eta,
    v,
    u,
    acc,
    scal,
):
    """One epoch of mini-batch Pegasos; returns the step counter after it. A step costs
    O(Σ_{i ∈ A_t} nnz(x_i)) on CSR rows.

    Parameters
    ----------
    X : dense rows (n_samples, n_features), C-contiguous float64, or the CSR tuple
        ``(indptr, indices, data)`` (:mod:`solvers._jit.rows`)
    y : ndarray of shape (n_samples,), labels ±1
    c : ndarray of shape (n_samples,), per-example loss weights (``sample_weight``; ones)
    xsq : ndarray of shape (n_samples,), ``‖x̃_i‖² = ‖x_i‖² + s²``
    order : ndarray of int64, the examples of this epoch, consecutive batches of ``k``
    k : int, mini-batch size
    lam : float, λ = 1/(nC)
    t0 : int, steps done before this epoch
    s : float, constant feature of a regularized bias (0: no bias coordinate in ``v``)
    free_bias : bool, learn an unregularized ``b`` (``scal[B]``)
    project : bool, project onto the ball of radius ``radius``
    radius : float
    avg_mode : int, ``AVG_NONE``, ``AVG_FLAT`` or ``AVG_POLY``
    poly_eta : float, η of the polynomial-decay weights
    v : ndarray of shape (n_features + (s > 0),), updated in place (``w̃ = scal[A]·v``)
    u : ndarray like ``v``, averaging correction, updated in place
    acc : ndarray like ``v``, flushed part of the weighted sum of iterates, updated in place
    scal : ndarray of shape (N_SCALARS,), the scalars, updated in place

    Returns
    -------
    int
        ``t0`` plus the number of steps done.
    """
    n_batch = order.shape[0]
    n_w = v.shape[0]
    has_wb = s > 0.0
    d = n_w - 1 if has_wb else n_w
    margins = np.empty(k)
    t = t0
    p = 0
    while p < n_batch:
        q = min(p + k, n_batch)
        m = q - p
        t += 1
        eta = 1.0 / (lam * t)  # [Pegasos] η_t = 1/(λt)
        a = scal[A]
        b = scal[B]
        for r in range(m):  # margins at w_t, before the update
            i = order[p + r]
            margins[r] = y[i] * (a * _dot_tilde(X, i, v, s, d) + b)
        shrink = 1.0 - 1.0 / t  # 1 − η_t λ
        if shrink == 0.0:
            _zero_v(scal, v, u, avg_mode, n_w)
        else:
            scal[A] = a * shrink
        a = scal[A]
        beta = scal[BETA]
        for r in range(m):
            if margins[r] < 1.0:
                i = order[p + r]
                g = eta * c[i] * y[i] / m  # w̃ += g x̃_i
                coef = g / a
                dot = _dot_tilde(X, i, v, s, d)
                scal[VSQ] += 2.0 * coef * dot + coef * coef * xsq[i]
                row_axpy(X, i, coef, v)
                if has_wb:
                    v[d] += coef * s
                if avg_mode != AVG_NONE:
                    bc = beta * coef
                    row_axpy(X, i, bc, u)
                    if has_wb:
                        u[d] += bc * s
                if free_bias:
                    scal[B] += g
        _after_step(scal, v, u, acc, avg_mode, t, poly_eta, radius, project, n_w)
        p = q
    return t
