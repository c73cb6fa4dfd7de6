"""Log-barrier Newton method (path following), Boyd & Vandenberghe, *Convex Optimization*, ch. 11.

For a problem ``min f₀(x) s.t. f_i(x) ≤ 0`` (m inequalities, optionally ``Ax = b``) the barrier
method minimizes ``ψ_t(x) = t f₀(x) + φ(x)``, ``φ(x) = −Σ log(−f_i(x))``, for an increasing
sequence ``t ← μ t`` (the *outer steps*); each minimization (*centering*) is Newton's method with
a backtracking line search started from the previous centre [BV, Alg. 11.1]. At the centre
``x*(t)`` the multipliers ``λ_i = 1/(−t f_i(x*(t)))`` are dual feasible and the duality gap is
exactly ``m/t`` [BV, §11.2.2]. Iterations are counted in Newton steps; every outer step is one
chunk of :class:`~solvers.base.IterativeSolver` and one point of the trace.

Formulations (docs/ARCHITECTURE.md §2; ``x̃_i = (x_i, 1)`` for a free bias, ``(x_i, s)`` for a
regularized one, ``x_i`` for none; ``z = (w, b)`` or ``(w, w_b)``; ``m_i = y_i x̃_i·z``):

- Soft-margin primal, hinge: ``min ½‖w‖² (+ ½w_b²) + Σ C_i ξ_i`` s.t. ``ξ_i ≥ 0``,
  ``ξ_i ≥ 1 − m_i`` (m = 2n). The slacks are eliminated *exactly*: given ``u_i = 1 − m_i`` the
  1-D problem ``min_ξ tC_i ξ − log ξ − log(ξ − u_i)`` has the closed-form root
  ``ξ = [(cu + 2) + √(c²u² + 4)]/(2c)``, ``c = tC_i`` (the larger root of
  ``cξ² − (cu + 2)ξ + u = 0``), and the margin slack ``r_i = ξ_i − u_i`` is the same formula at
  ``−u_i``. The reduced function ``ψ_t(z) = t ½ zᵀPz + Σ g_i(m_i)`` is smooth and unconstrained,
  with ``g_i' = −1/r_i`` and ``g_i'' = 1/(r_i² + ξ_i²)`` (envelope theorem), so Newton's system is
  the (d+1)×(d+1) matrix ``t P + X̃ᵀ D X̃``, ``D = diag(1/(r² + ξ²))``, ``P = diag(I_d, ρ)`` with
  ρ = 1 (regularized) or 0 (free). It is exactly the Schur complement onto ``(w, b)`` of the
  Hessian in ``(w, b, ξ)``, whose ξ-block is diagonal. Cost O(n d²) per Newton step; when
  d > n, O(n²d + n³) through the n×n system of the multipliers
  (:func:`~solvers.barrier.normal_equations.normal_solver`).
- Soft-margin primal, squared hinge: ``min ½‖w‖² + Σ C_i ξ_i²`` s.t. ``ξ_i ≥ 1 − m_i``, ξ free
  (m = n). Eliminated the same way: ``ξ(ξ − u) = 1/(2tC)``, ``g'' = 2tC/(2tC r² + 1)``.
- Hard margin: ``min ½‖w‖²`` s.t. ``m_i ≥ 1`` (m = n), ``g = −log(m − 1)``, started from a
  strictly feasible point found by the phase I problem ``min s s.t. m_i ≥ 1 − s``
  [BV, §11.4.1] (:mod:`solvers.barrier.phase_one`).
- Duals (soft-margin dual, kernel dual): ``min t(½αᵀQ̃α + ½Σδ_iα_i² − Σα_i) − Σ log α_i −
  Σ log(C_i − α_i)`` with ``yᵀα = 0`` for a free bias (δ_i = 1/(2C_i) and no upper bound for the
  squared hinge; m = 2n or n). The equality is kept in Newton's KKT system
  ``[H y; yᵀ 0][Δ; ν] = [−∇ψ; 0]`` [BV, §10.2], solved by two solves with ``H``
  (:func:`~solvers.barrier.normal_equations.dual_hessian_solver`: dense Cholesky of
  ``H = tQ̃ + diag(h)``, or the Woodbury identity for a low-rank Q̃).

Newton details: the decrement ``λ(x)² = −∇ψᵀΔ`` ends a centering when ``λ²/2 ≤ newton_tol``
(that last step is applied too: every Newton system solved is one counted, applied step);
when ``λ < 1/4`` the unit step is taken without line search (quadratic phase of a
self-concordant function, [BV, §9.6.4]; ``λ < 1`` keeps ``x + Δ`` inside the Dikin ellipsoid, hence
in the domain), otherwise backtracking (Armijo α = 0.01, β = 0.5) from the largest step that keeps
the iterate strictly inside the domain. Function differences ``ψ(x + sΔ) − ψ(x)`` are computed
term by term, never as a difference of two large values, so that the Armijo test stays meaningful
at t ~ 10¹⁰. Before each centering a free predictor extrapolates the last two centres along the
path (``x*(μt) − x*(t) ≈ (x*(t) − x*(t/μ))/μ``, exact for the ``c/t`` decay of the multipliers
and slacks), kept only if it lowers ``ψ`` at the new t.

Multipliers handed to the certificate (primal forms): ``λ⁺ = (1/r − g''⊙Δm)/t``
from the last Newton step, which satisfy ``P(z + Δ) = X̃ᵀ(y ⊙ λ⁺)`` exactly (so
``Σ y_i λ⁺_i = 0`` for a free bias whatever the centering error); ``newton_tol`` can then be
loose (default 1e-2, see the benchmark). In the duals ``u − α`` is stored separately from α:
near the upper bound it is far below the resolution of α.

References
----------
.. [BV] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004,
   ch. 9 (Newton's method, self-concordance), ch. 10 (equality constraints) and ch. 11
   (barrier method, phase I).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from svmbench.solvers.barrier.forms import DualState
from svmbench.solvers.barrier.normal_equations import (
    Features,
    dual_hessian_solver,
    normal_solver,
)

#: Default initial barrier parameter, as a multiple of ``m / max(1, f₀(x₀) − p̂)`` [BV, §11.3.1].
T0 = 10.0
#: Default factor by which t grows at each outer step (benchmarks/studies/bench_barrier.py, grid).
MU = 15.0
#: Centering ends when the Newton decrement satisfies ``λ²/2 ≤ NEWTON_TOL``.
NEWTON_TOL = 1e-2
#: Armijo fraction α and backtracking factor β of the line search [BV, Alg. 9.2].
ARMIJO, BACKTRACK = 0.01, 0.5
#: Below this decrement the unit Newton step is taken (quadratic phase, [BV, §9.6.4]).
FULL_STEP_DECREMENT = 0.25
#: Fraction of the distance to the boundary a damped step may cover (domain of log).
TO_BOUNDARY = 0.99
#: At most this many Newton steps per centering.
MAX_NEWTON_PER_CENTERING = 100


# ---- the eliminated slacks ---------------------------------------------------------------------
def _larger_root(c: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The root ξ > max(0, u) of ``c = 1/ξ + 1/(ξ − u)``, i.e. of ``cξ² − (cu + 2)ξ + u = 0``,
    computed without cancellation (product of the roots ``u/c`` when ``cu + 2 < 0``)."""
    a = c * u + 2.0
    s = np.sqrt((c * u) ** 2 + 4.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a >= 0, (a + s) / (2.0 * c), 2.0 * u / (a - s))


def _barrier_terms(loss: str, t: float, C: np.ndarray, m: np.ndarray):
    """Per-example reduced barrier terms at margins m.

    Returns ``(g, r, h)``: the value ``g_i(m_i)`` (slacks minimized out), the slack ``r_i`` of
    the margin constraint (``g_i' = −1/r_i``; the multiplier is ``1/(t r_i)``) and ``g_i''``.
    """
    u = 1.0 - m
    if loss == "hinge":
        c = t * C
        xi = _larger_root(c, u)
        r = _larger_root(c, -u)
        return c * xi - np.log(xi) - np.log(r), r, 1.0 / (r * r + xi * xi)
    if loss == "squared_hinge":
        c2 = 2.0 * t * C
        s = np.sqrt(u * u + 4.0 / c2)
        xi = np.where(u >= 0, 0.5 * (u + s), (2.0 / c2) / (s - u))
        r = 1.0 / (c2 * xi)  # ξ(ξ − u) = 1/(2tC)
        return t * C * xi * xi - np.log(r), r, c2 / (c2 * r * r + 1.0)
    r = m - 1.0  # hard margin (and phase I with m ← m + s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return -np.log(r), r, 1.0 / (r * r)


def _barrier_change(loss: str, t: float, C, m, r_old, g_old, m_new) -> float:
    """``Σ g_i(m_new) − Σ g_i(m)`` term by term (no cancellation between large totals);
    ``+inf`` outside the domain (hard margin)."""
    if loss == "hard":
        r_new = m_new - 1.0
        if np.any(r_new <= 0):
            return math.inf
        return float(-np.sum(np.log(r_new / r_old)))
    g_new, _, _ = _barrier_terms(loss, t, C, m_new)
    return float(np.sum(g_new - g_old))


# ---- primal forms ------------------------------------------------------------------------------
@dataclass
class PrimalState:
    """Barrier state of the primal forms (soft margin, hard margin, phase I).

    ``f₀(z) = ½ zᵀ diag(p) z + cᵀz``; the barrier is on the margins ``m = y ⊙ X̃z``.
    """

    feat: Features
    y: np.ndarray
    C: np.ndarray  # C_i of the active rows (unused for "hard")
    loss: str  # "hinge" | "squared_hinge" | "hard"
    p: np.ndarray
    c: np.ndarray
    z: np.ndarray
    t: float
    mu: float
    n_constraints: int
    ridge: float = 0.0  # added to diag(p) in the Newton system only (phase I)
    active: np.ndarray | None = None  # rows with C_i > 0 among all examples
    t_center: float = math.nan
    m: np.ndarray = field(default=None, repr=False)
    lam: np.ndarray = field(default=None, repr=False)
    previous_center: np.ndarray | None = field(default=None, repr=False)
    newton_steps: int = 0
    outer_steps: int = 0
    stalled: bool = False

    def objective(self) -> float:
        return float(0.5 * self.z @ (self.p * self.z) + self.c @ self.z)


def _primal_direction(state: PrimalState):
    """Newton step of ``ψ_t(z) = t f₀(z) + Σ g_i(m_i)`` and the decrement ``λ²``."""
    t = state.t
    g, r, h = _barrier_terms(state.loss, t, state.C, state.m)
    a = -t * (state.p * state.z + state.c)
    b = state.y / r
    grad = -(a + state.feat.tdot(b))
    solve = normal_solver(state.feat, h, t * state.p + state.ridge)
    delta, q, Xd = solve(a, b, rhs=-grad)
    # Multipliers linearized along the step, λ⁺ = (1/r − g''·Δm)/t = y ⊙ q/t: the Newton
    # equation says P(z + Δ) = X̃ᵀ(y ⊙ λ⁺) exactly, so Σ y_i λ⁺_i = 0 for a free bias whatever
    # the centering error.
    state.lam = state.y * q / t
    return delta, float(-grad @ delta), g, r, state.y * Xd


def _primal_line_search(state: PrimalState, delta, decrement2, g, r, dm) -> tuple[float, Any]:
    """Backtracking [BV, Alg. 9.2] on ``ψ_t``, unit step in the quadratic phase (``dm`` the
    change of the margins along ``delta``)."""
    t, z, P = state.t, state.z, state.p
    s = 1.0
    if state.loss == "hard":  # stay strictly inside m > 1
        neg = dm < 0
        if np.any(neg):
            s = min(1.0, TO_BOUNDARY * float(np.min((state.m[neg] - 1.0) / -dm[neg])))
    if math.sqrt(max(decrement2, 0.0)) < FULL_STEP_DECREMENT and s == 1.0:
        return 1.0, dm
    zPd, dPd, cd = float(z @ (P * delta)), float(delta @ (P * delta)), float(state.c @ delta)
    for _ in range(60):
        quad = t * (s * zPd + 0.5 * s * s * dPd + s * cd)
        change = quad + _barrier_change(state.loss, t, state.C, state.m, r, g, state.m + s * dm)
        if change <= -ARMIJO * s * decrement2:
            return s, dm
        s *= BACKTRACK
    return 0.0, dm


def center_primal(state: PrimalState, budget: int, newton_tol: float, stop=None) -> int:
    """Newton's method on ``ψ_t`` from the current point; returns the Newton steps taken.

    ``stop(state)`` (phase I: ``s < 0``) ends the centering early.
    """
    steps = 0
    while steps < budget:
        # Every Newton system solved is a counted step and is used: the one whose decrement says
        # "centred" is applied too (a unit step in the quadratic phase), and its λ⁺ match z + Δ.
        delta, dec2, g, r, dm = _primal_direction(state)
        centred = dec2 / 2.0 <= newton_tol
        s, dm = _primal_line_search(state, delta, dec2, g, r, dm)
        steps += 1
        if s == 0.0:
            state.stalled = not centred
            break
        state.z = state.z + s * delta
        state.m = state.m + s * dm
        if centred or (stop is not None and stop(state)):
            break
    state.newton_steps += steps
    return steps


def _predict_primal(state: PrimalState) -> None:
    """Free predictor along the central path before centering at the new t.

    Near the solution ``z*(t) = z* + a/t + O(1/t²)``, so ``z*(μt) − z*(t) ≈ (z*(t) − z*(t/μ))/μ``
    from the two last centres. The extrapolated point is kept (with backtracking) only if it
    lowers ``ψ_t`` at the new t; it costs O(nd) and no linear solve (not a Newton step).
    """
    if state.previous_center is None:
        return
    d = (state.z - state.previous_center) / state.mu
    dm = state.y * state.feat.dot(d)
    t, z, P = state.t, state.z, state.p
    g, _, _ = _barrier_terms(state.loss, t, state.C, state.m)
    r = state.m - 1.0
    zPd, dPd, cd = float(z @ (P * d)), float(d @ (P * d)), float(state.c @ d)
    s = 1.0
    for _ in range(4):
        quad = t * (s * zPd + 0.5 * s * s * dPd + s * cd)
        if quad + _barrier_change(state.loss, t, state.C, state.m, r, g, state.m + s * dm) < 0:
            state.z = z + s * d
            state.m = state.m + s * dm
            return
        s *= 0.5


def primal_path_start(feat, y, C, loss, p, z, active, t0: float, mu: float) -> PrimalState:
    """The barrier state of a primal form at z, with ``t = t0 · m / max(1, |f₀|)``
    [BV, §11.3.1] (soft margin: ``f₀ = Σ C_i``, the loss at z = 0)."""
    if loss == "hard":
        n_cons, f0 = len(y), 0.5 * float(z @ (p * z))
    else:
        n_cons = (2 if loss == "hinge" else 1) * len(y)
        f0 = float(C.sum())  # the loss at z = 0 (ξ = 1)
    state = PrimalState(
        feat=feat,
        y=y,
        C=C,
        loss=loss,
        p=p,
        c=np.zeros(feat.dim),
        z=z,
        t=t0 * n_cons / max(1.0, abs(f0)),
        mu=mu,
        n_constraints=n_cons,
    )
    state.m = y * feat.dot(z)
    state.active = active
    return state


# ---- dual forms ----------------------------------------------------------------------------------
def _dual_direction(state: DualState):
    """Newton step of ``ψ_t(α)`` under ``yᵀΔ = 0`` (KKT elimination [BV, §10.4.2])."""
    t, a = state.t, state.alpha
    inv_up = 1.0 / state.slack  # 0 where u = inf
    grad = t * (state.Qa + state.delta * a - 1.0) - 1.0 / a + inv_up
    h = t * state.delta + 1.0 / (a * a) + inv_up * inv_up
    solve = dual_hessian_solver(state, h)
    if state.equality:
        V = solve(np.column_stack([-grad, state.y]))
        v1, v2 = V[:, 0], V[:, 1]
        delta = v1 - (state.y @ v1) / (state.y @ v2) * v2
        # Round-off in an ill-conditioned H lets yᵀα drift: restore yᵀ(α + Δ) = 0 exactly,
        # moving the variables in the diagonal metric h (the free ones, h small, move most).
        c = state.y / h
        delta -= (state.y @ (a + delta)) / (state.y @ c) * c
    else:
        delta = solve(-grad)
    return delta, float(-grad @ delta)


def _dual_line_search(state: DualState, delta, decrement2, Qd) -> float:
    """Backtracking on ``ψ_t`` from the largest step keeping ``0 < α < u``."""
    a, u, t, slack = state.alpha, state.u, state.t, state.slack
    s = 1.0
    lo = delta < 0
    if np.any(lo):
        s = min(s, TO_BOUNDARY * float(np.min(a[lo] / -delta[lo])))
    hi = (delta > 0) & np.isfinite(u)
    if np.any(hi):
        s = min(s, TO_BOUNDARY * float(np.min(slack[hi] / delta[hi])))
    if math.sqrt(max(decrement2, 0.0)) < FULL_STEP_DECREMENT and s == 1.0:
        return 1.0
    lin = float(state.Qa @ delta + state.delta @ (a * delta) - delta.sum())
    quad = float(delta @ Qd + state.delta @ (delta * delta))
    fin = np.isfinite(u)
    for _ in range(60):
        change = t * (s * lin + 0.5 * s * s * quad)
        change -= float(np.sum(np.log1p(s * delta / a)))
        change -= float(np.sum(np.log1p(-s * delta[fin] / slack[fin])))
        if change <= -ARMIJO * s * decrement2:
            return s
        s *= BACKTRACK
    return 0.0


#: The smallest value α and u − α are kept at: the barrier's Hessian holds 1/α², which overflows
#: below 1e-154. Fraction-to-the-boundary steps can drive a multiplier that belongs at its bound
#: that low (one BLAS kernel's rounding did, another's did not); pinned here, the variable stays
#: frozen at its bound (its Hessian entry, 1e300, dominates), and every kernel gives finite steps.
DUAL_FLOOR = 1e-150


def _dual_move(state: DualState, step: np.ndarray, Q_step: np.ndarray) -> None:
    """``α += step`` and ``u − α −= step`` (both kept positive), ``Qα += Q step``."""
    state.alpha = np.maximum(state.alpha + step, DUAL_FLOOR)
    state.slack = np.maximum(state.slack - step, DUAL_FLOOR)
    state.Qa = state.Qa + Q_step


def _dual_change(state: DualState, d, Qd, s: float) -> float:
    """``ψ_t(α + s d) − ψ_t(α)`` term by term (``+inf`` outside the box)."""
    a, u, t = state.alpha, state.u, state.t
    fin = np.isfinite(u)
    x_lo = s * d / a
    x_hi = -s * d[fin] / state.slack[fin]
    if np.any(x_lo <= -1.0) or np.any(x_hi <= -1.0):
        return math.inf
    lin = float(state.Qa @ d + state.delta @ (a * d) - d.sum())
    quad = float(d @ Qd + state.delta @ (d * d))
    barrier = float(np.sum(np.log1p(x_lo)) + np.sum(np.log1p(x_hi)))
    return t * (s * lin + 0.5 * s * s * quad) - barrier


def _predict_dual(state: DualState) -> None:
    """The free predictor of :func:`_predict_primal` for the dual forms (one product with Q)."""
    if state.previous_center is None:
        return
    a, mu = state.alpha, state.mu
    d = (a - state.previous_center) / mu
    # Components that would leave the box (still in transition to a bound) are clipped to
    # [α/μ², u − (u − α)/μ²]; yᵀd = 0 is then restored in the metric of the barrier, moving the
    # components far from their bounds (weights min(α, u − α)²).
    d = np.clip(d, a / mu**2 - a, state.slack * (1.0 - 1.0 / mu**2))
    if state.equality:
        wgt = np.minimum(a, state.slack) ** 2
        d -= (state.y @ d) / (state.y @ (state.y * wgt)) * (state.y * wgt)
    Qd = state.q_times(d)
    s = 1.0
    for _ in range(4):
        if _dual_change(state, d, Qd, s) < 0:
            _dual_move(state, s * d, s * Qd)
            return
        s *= 0.5


def _center_dual(state: DualState, budget: int, newton_tol: float) -> int:
    """Newton's method on the dual ``ψ_t`` from the current point; returns the steps taken."""
    steps = 0
    while steps < budget:
        delta, dec2 = _dual_direction(state)
        centred = dec2 / 2.0 <= newton_tol
        Qd = state.q_times(delta)
        s = _dual_line_search(state, delta, dec2, Qd)
        steps += 1
        if s == 0.0:
            state.stalled = not centred
            break
        _dual_move(state, s * delta, s * Qd)
        if centred:
            break
    state.newton_steps += steps
    return steps


# ---- the outer step ------------------------------------------------------------------------------
def outer_step(state, max_iter: int, newton_tol: float, tol: float) -> tuple[int, bool]:
    """One outer step [BV, Alg. 11.1] of a primal (:class:`PrimalState`) or dual
    (:class:`~solvers.barrier.forms.DualState`) form: the free predictor, centering at t (at most
    ``MAX_NEWTON_PER_CENTERING`` Newton steps, and what ``max_iter`` leaves), then ``t ← μ t``.

    Returns the Newton steps taken and the native rule, ``m/t ≤ tol · max(1, |f₀|)`` (the gap
    bound of the central path)."""
    budget = max(1, min(MAX_NEWTON_PER_CENTERING, max_iter - state.newton_steps))
    if isinstance(state, PrimalState):
        center = state.z.copy()
        _predict_primal(state)
        steps = center_primal(state, budget, newton_tol)
        state.previous_center = center if state.outer_steps > 0 else None
    else:
        center = state.alpha.copy()
        state.Qa = state.q_times(state.alpha)  # refreshed once per outer step (no drift)
        _predict_dual(state)
        steps = _center_dual(state, budget, newton_tol)
        state.previous_center = center if state.outer_steps > 0 else None
    state.t_center = state.t
    state.t *= state.mu
    state.outer_steps += 1

    bound = state.n_constraints / state.t_center
    return steps, bound <= tol * max(1.0, abs(state.objective()))
