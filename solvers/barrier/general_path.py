"""The log-barrier path on LIBSVM's general dual (``method="barrier"`` on a ``GeneralDualProblem``).

Boyd & Vandenberghe, *Convex Optimization*, Alg. 11.1 [BV] on the form of
:mod:`solvers.barrier.general`: for t ← μt (outer steps), Newton's method on::

    ψ_t(α) = t(½αᵀQα + pᵀα) − Σ log α_t − Σ log(u_t − α_t)    s.t.  Aα = Δ

from the interior start of :func:`~solvers.barrier.general.general_start`. Each Newton step
solves ``[H Aᵀ; A 0][Δα; ν] = [−∇ψ; Δ − Aα]``, ``H = tQ + diag(1/α² + 1/(u − α)²)``, by one
Cholesky factor and the k × k Schur complement [BV, §10.4.2]; backtracking (Armijo) from the
largest step that keeps α strictly inside, the unit step in the quadratic phase (decrement
below ¼) [BV, §9.6.4], ψ's change summed term by term. The multipliers of the equalities are
``λ = ν/t`` of the last step (the linearized centrality condition divided by t), those of the
bounds ``1/(tα)`` and ``1/(t(u − α))``; at a centre the gap is ``2m/t`` [BV, §11.2.2], the native
rule ``2m/t ≤ tol · max(1, |f₀|)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from svmbench.solvers.barrier.general import GeneralPDState
from svmbench.solvers.barrier.normal_equations import dense_hessian_solver
from svmbench.solvers.barrier.path import (
    ARMIJO,
    BACKTRACK,
    DUAL_FLOOR,
    FULL_STEP_DECREMENT,
    MAX_NEWTON_PER_CENTERING,
    TO_BOUNDARY,
)


@dataclass
class GeneralPathState:
    """The barrier path on the free variables of ``qp`` (its ``lam`` the equality multipliers,
    ``z_l, z_u`` those of the bounds, kept up to date for the record)."""

    qp: GeneralPDState
    t: float
    mu: float
    t_center: float = math.nan
    newton_steps: int = 0
    outer_steps: int = 0
    stalled: bool = False

    @property
    def n_constraints(self) -> int:
        return 2 * self.qp.alpha.size


def path_start(qp: GeneralPDState, t0: float, mu: float) -> GeneralPathState:
    """``t = t0 · 2m / max(1, f₀(α₀) − p̂)`` [BV, §11.3.1] with the lower bound
    ``p̂ = Σ min(0, p_t) u_t ≤ p*`` (Q is PSD)."""
    lower = float(np.minimum(qp.p, 0.0) @ qp.u)
    t = t0 * 2 * qp.alpha.size / max(1.0, qp.objective() - lower)
    return GeneralPathState(qp=qp, t=t, mu=mu)


def _newton_step(s: GeneralPathState) -> tuple[np.ndarray, float]:
    """The Newton step under ``AΔ = Δ − Aα`` and its decrement ``λ² = −∇ψᵀΔ``; sets the
    multipliers ``λ = ν/t``."""
    q, t = s.qp, s.t
    a, sl, A = q.alpha, q.slack, q.A
    grad = t * (q.Qa + q.p) - 1.0 / a + 1.0 / sl
    solve = dense_hessian_solver(q.Q, 1.0 / (a * a) + 1.0 / (sl * sl), t)
    step = solve(-grad)
    if A.shape[0]:
        HA = solve(A.T)
        nu = np.linalg.solve(A @ HA, A @ step + (A @ a - q.target))
        step = step - HA @ nu
        q.lam = nu / t
    return step, float(-grad @ step)


def _line_search(s: GeneralPathState, step: np.ndarray, decrement2: float, Qd) -> float:
    """Backtracking on ``ψ_t`` from the largest step keeping ``0 < α < u``."""
    q, t = s.qp, s.t
    a, sl = q.alpha, q.slack
    largest = 1.0
    down, up = step < 0, step > 0
    if np.any(down):
        largest = min(largest, TO_BOUNDARY * float(np.min(a[down] / -step[down])))
    if np.any(up):
        largest = min(largest, TO_BOUNDARY * float(np.min(sl[up] / step[up])))
    if math.sqrt(max(decrement2, 0.0)) < FULL_STEP_DECREMENT and largest == 1.0:
        return 1.0
    lin = float((q.Qa + q.p) @ step)
    quad = float(step @ Qd)
    size = largest
    for _ in range(60):
        change = t * (size * lin + 0.5 * size * size * quad)
        change -= float(np.sum(np.log1p(size * step / a)) + np.sum(np.log1p(-size * step / sl)))
        if change <= -ARMIJO * size * decrement2:
            return size
        size *= BACKTRACK
    return 0.0


def path_outer_step(s: GeneralPathState, max_iter: int, newton_tol: float, tol: float):
    """Centre at t (at most ``MAX_NEWTON_PER_CENTERING`` Newton steps and what ``max_iter``
    leaves), then ``t ← μt``. Returns the Newton steps, the native rule, and a sentence when a
    step is not finite (the point is then left as it was)."""
    q = s.qp
    if q.alpha.size == 0:
        return 0, True, None
    budget = max(1, min(MAX_NEWTON_PER_CENTERING, max_iter - s.newton_steps))
    steps = 0
    while steps < budget:
        step, decrement2 = _newton_step(s)
        if not (np.all(np.isfinite(step)) and np.all(np.isfinite(q.lam))):
            return steps, False, "numerical failure: the Newton direction is not finite"
        Qd = q.Q @ step
        size = _line_search(s, step, decrement2, Qd)
        steps += 1
        if size == 0.0:
            s.stalled = decrement2 / 2.0 > newton_tol
            break
        q.alpha = np.maximum(q.alpha + size * step, DUAL_FLOOR)
        q.slack = np.maximum(q.slack - size * step, DUAL_FLOOR)
        q.Qa = q.Q @ q.alpha
        if decrement2 / 2.0 <= newton_tol:
            break
    s.newton_steps += steps
    q.z_l, q.z_u = 1.0 / (s.t * q.alpha), 1.0 / (s.t * q.slack)
    s.t_center = s.t
    s.t *= s.mu
    s.outer_steps += 1
    q.iterations = s.newton_steps
    native = s.n_constraints / s.t_center <= tol * max(1.0, abs(q.objective()))
    return steps, native, None
