"""Primal-dual interior-point method with Mehrotra's predictor-corrector, on the duals' box QP.

Primal-dual variant (``method="primal-dual"``, the default for every form) [BV, §11.7], with
Mehrotra's predictor-corrector [Wright97, ch. 10; GW03]: each iteration factors one matrix and
solves with it twice, for the affine-scaling direction (centring τ = 0) and for the corrected one
(``τ = σμ`` with Mehrotra's ``σ = (μ_aff/μ)³``, μ the mean complementarity product, plus the
second-order terms of the affine step); a common step for the primal variables and the
multipliers goes 0.995 of the way to the boundary of the positive orthant. One
predictor-corrector iteration is counted as one Newton step and is one chunk of the template
(one gap check, one trace point). This module runs it on the duals;
:mod:`solvers.barrier.primal_dual_margins` on the primal forms.

Duals (the box QP of :mod:`solvers.barrier.forms`): Lagrangian
``½αᵀQ̃α − Σα + b yᵀα − z_lᵀα + z_uᵀ(α − u)`` (Q̃ includes ``diag(δ)``), multipliers
``z_l, z_u ≥ 0`` of the two bounds (no z_u where ``u = ∞``) and b of ``yᵀα = 0`` (the model's
bias). Each iteration linearizes ``r_d = Q̃α − 1 + b y − z_l + z_u = 0``, ``yᵀα = 0``,
``α z_l = τ``, ``(u − α) z_u = τ`` and eliminates ``Δz_l, Δz_u``:
``(Q̃ + diag(z_l/α + z_u/(u − α))) Δα + y Δb = −r_d + r_l/α − r_u/(u − α)``, ``yᵀΔα = −yᵀα``.
H is factored once per iteration (dense Cholesky, or the Woodbury form with t = 1 for a
low-rank Q̃: :func:`~solvers.barrier.normal_equations.dual_hessian_solver`) and used for three
solves: with y (the Schur complement on b, ``Δb = (yᵀH⁻¹r + yᵀα)/(yᵀH⁻¹y)``) and the two
right-hand sides. The start is α of the barrier method scaled to minimize the objective along
its ray, with ``z_l − z_u = Q̃α − 1`` (zero dual residual), each at least
``max(1, mean|Q̃α − 1|)``.

References
----------
.. [BV] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004,
   §11.7 (primal-dual interior-point methods).
.. [Wright97] S. J. Wright, *Primal-Dual Interior-Point Methods*, SIAM, 1997, ch. 10
   (Mehrotra's predictor-corrector algorithm).
.. [GW03] E. M. Gertz and S. J. Wright, "Object-oriented software for quadratic programming"
   (OOQP), ACM TOMS 29(1), 2003 (the box-constrained QP form).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from svmbench.solvers.barrier.forms import DualState
from svmbench.solvers.barrier.normal_equations import dual_hessian_solver

#: Primal-dual variant: fraction of the step to the boundary of the positive orthant.
PD_TO_BOUNDARY = 0.995
#: Primal-dual start of the duals: smallest scale applied to the barrier method's starting α.
PD_MIN_START_SCALE = 1e-3


# ---- dual forms: Mehrotra predictor-corrector ----------------------------------------------------
@dataclass
class PDState:
    """Primal-dual state of the box QP of :class:`DualState` (whose ``t`` stays 1).

    Lagrangian ``½αᵀQ̃α − Σα + b yᵀα − z_lᵀα + z_uᵀ(α − u)``: ``z_l, z_u ≥ 0`` are the
    multipliers of ``α ≥ 0`` and ``α ≤ u`` (``z_u = 0`` where ``u = ∞``), b that of ``yᵀα = 0``
    (the model's bias; 0 without the equality). The upper slack ``u − α`` is ``qp.slack``.
    """

    qp: DualState
    z_l: np.ndarray
    z_u: np.ndarray
    b: float = 0.0
    mu: float = math.nan
    iterations: int = 0
    step: float = math.nan
    sigma: float = math.nan
    residual_dual: float = math.nan
    residual_primal: float = math.nan


def _pd_complementarity(s: PDState) -> tuple[float, int]:
    """``αᵀz_l + (u − α)ᵀz_u`` and the number m of finite bounds."""
    qp = s.qp
    fin = np.isfinite(qp.u)
    total = float(qp.alpha @ s.z_l + qp.slack[fin] @ s.z_u[fin])
    return total, len(qp.alpha) + int(fin.sum())


def pd_start(qp: DualState) -> PDState:
    """Interior start. α: the start of the barrier method (``yᵀα = 0``, ``0 < α ≤ u/2``) scaled
    by the minimizer ``κ = Σα/αᵀQ̃α`` of the objective along the ray, clipped to
    ``[PD_MIN_START_SCALE, 1]`` (so α stays in the box and ``yᵀα = 0`` holds). Multipliers: they
    cancel the gradient ``g = Q̃α − 1`` (``z_l − z_u = g``, so ``r_d = 0`` at the start), each at
    least ``max(1, mean|g|)`` so that no complementarity product starts near 0. Fewer iterations
    than the unscaled α with a floor ``max|g|`` (docs/measurements.md, "barrier")."""
    a = qp.alpha
    aQa = float(a @ qp.Qa + qp.delta @ (a * a))
    kappa = min(1.0, max(PD_MIN_START_SCALE, float(a.sum()) / max(aQa, 1e-300)))
    qp.alpha = kappa * a
    qp.slack = qp.u - qp.alpha
    qp.Qa = qp.q_times(qp.alpha)
    g = qp.Qa + qp.delta * qp.alpha - 1.0
    fin = np.isfinite(qp.u)
    floor = max(1.0, float(np.mean(np.abs(g))))
    z_l = np.maximum(g, 0.0) + floor
    z_u = np.where(fin, np.maximum(-g, 0.0) + floor, 0.0)
    return PDState(qp=qp, z_l=z_l, z_u=z_u)


def _pd_residuals(s: PDState) -> tuple[np.ndarray, float]:
    """``r_d = Q̃α − 1 + b y − z_l + z_u`` and ``r_p = yᵀα`` (0 without the equality); their
    sizes are stored in the state."""
    qp = s.qp
    r_d = qp.Qa + qp.delta * qp.alpha - 1.0 - s.z_l + s.z_u
    if qp.equality:
        r_d = r_d + s.b * qp.y
    r_p = float(qp.y @ qp.alpha) if qp.equality else 0.0
    s.residual_dual, s.residual_primal = float(np.max(np.abs(r_d))), abs(r_p)
    return r_d, r_p


def pd_converged(s: PDState, tol: float) -> bool:
    """Native rule: complementarity ``≤ tol · max(1, |f₀|)`` and residuals
    ``≤ tol · max(1, max_i u_i)`` (finite u_i)."""
    _pd_residuals(s)
    comp, _ = _pd_complementarity(s)
    u = s.qp.u[np.isfinite(s.qp.u)]
    scale = max(1.0, float(np.max(u, initial=1.0)))
    small = max(s.residual_dual, s.residual_primal) <= tol * scale
    return small and comp <= tol * max(1.0, abs(s.qp.objective()))


def pd_max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """Largest s ≤ 1 with ``x + s dx ≥ 0`` (x > 0): ``1/max(1, max_i(−dx_i/x_i))``, no masks."""
    worst = float(np.max(-dx / x, initial=0.0))
    return 1.0 if worst <= 1.0 else 1.0 / worst


def pd_iteration(s: PDState, fraction: float) -> None:
    """One Mehrotra predictor-corrector iteration [Wright97, ch. 10; GW03]: one factorization
    of ``H = Q̃ + diag(δ + z_l/α + z_u/(u − α))``, solves with ``y`` (Schur complement on b),
    the affine-scaling right-hand side and the corrected one."""
    qp = s.qp
    a, sl, y = qp.alpha, qp.slack, qp.y
    fin = np.isfinite(qp.u)
    sl0 = np.where(fin, sl, 0.0)  # u − α, 0 where u = ∞ (z_u = 0 there)
    inv_sl = np.where(fin, 1.0 / sl, 0.0)
    r_d, r_p = _pd_residuals(s)
    comp, m = _pd_complementarity(s)
    s.mu = comp / m
    h = qp.delta + s.z_l / a + s.z_u * inv_sl
    solve = dual_hessian_solver(qp, h)  # qp.t = 1: H = Q̃ + diag(h)
    Hy = solve(y) if qp.equality else None
    yHy = float(y @ Hy) if qp.equality else 1.0

    def direction(r_l, r_u):
        # Complementarity rows z_l Δα + α Δz_l = r_l, −z_u Δα + (u − α) Δz_u = r_u eliminated:
        # H Δα + y Δb = −r_d + r_l/α − r_u/(u − α),  yᵀΔα = −r_p.
        v = solve(-r_d + r_l / a - r_u * inv_sl)
        db = 0.0
        if qp.equality:
            db = (float(y @ v) + r_p) / yHy
            v = v - db * Hy
        dz_l = (r_l - s.z_l * v) / a
        dz_u = (r_u + s.z_u * v) * inv_sl
        return v, db, dz_l, dz_u

    def max_step(da, dz_l, dz_u):
        return min(
            pd_max_step(a, da),
            pd_max_step(sl[fin], -da[fin]),
            pd_max_step(s.z_l, dz_l),
            pd_max_step(s.z_u[fin], dz_u[fin]),
        )

    # Predictor (affine scaling, σ = 0).
    ra_l, ra_u = -a * s.z_l, -sl0 * s.z_u
    da, _, dz_l, dz_u = direction(ra_l, ra_u)
    st = max_step(da, dz_l, dz_u)
    comp_aff = float(
        (a + st * da) @ (s.z_l + st * dz_l)
        + (sl[fin] - st * da[fin]) @ (s.z_u[fin] + st * dz_u[fin])
    )
    sigma = min(1.0, (comp_aff / comp) ** 3)  # Mehrotra's centering heuristic
    # Corrector: centring at σμ and the second-order term of the affine step.
    tau = sigma * s.mu
    r_l = ra_l + tau - da * dz_l
    r_u = np.where(fin, ra_u + tau + da * dz_u, 0.0)  # Δ(u − α) = −Δα
    da, db, dz_l, dz_u = direction(r_l, r_u)
    st = min(1.0, fraction * max_step(da, dz_l, dz_u))
    qp.alpha = np.maximum(a + st * da, 1e-300)
    qp.slack = np.maximum(sl - st * da, 1e-300)  # u − α kept apart, as in the barrier path
    qp.Qa = qp.q_times(qp.alpha)  # recomputed, not updated: no drift over the iterations
    s.z_l = np.maximum(s.z_l + st * dz_l, 1e-300)
    s.z_u = np.where(fin, np.maximum(s.z_u + st * dz_u, 1e-300), 0.0)
    s.b += st * db
    s.step, s.sigma = st, sigma
    s.iterations += 1
