"""The primal-dual interior-point method on LIBSVM's general dual (any ``GeneralDualProblem``).

The form (:class:`~problems.general_dual.GeneralDual`, dense ``Q`` of m × m)::

    min_α ½αᵀQα + pᵀα    s.t.  0 ≤ α ≤ u,   Aα = Δ

with k = 0 ("none"), 1 ("one": ``A = zᵀ``) or 2 ("nu": one indicator row per sign) equality
rows. Lagrangian ``½αᵀQα + pᵀα + λᵀ(Aα − Δ) − z_lᵀα + z_uᵀ(α − u)``; Mehrotra's
predictor-corrector [Wright97, ch. 10; GW03] as on the binary duals
(:mod:`solvers.barrier.primal_dual`), with k equality rows in the Newton system::

    H Δα + AᵀΔλ = −r_d + r_l/α − r_u/(u − α),   AΔα = −r_p,   H = Q + diag(z_l/α + z_u/(u − α))

solved by one Cholesky factor of H (ridge retries and refinement as the binary duals,
:func:`~solvers.barrier.normal_equations.dense_hessian_solver`) and the k × k Schur complement
``S = AH⁻¹Aᵀ``: ``Δλ = S⁻¹(AH⁻¹g + r_p)``, ``Δα = H⁻¹(g − AᵀΔλ)``.

The start is strictly inside the box and on the equalities: the centre ``α_t = c_{z_t} u_t``
(one fraction per sign, ``c₊ = ½ + s``, ``c₋ = ½ − s`` with ``s`` putting ``zᵀα = Δ`` for "one";
``c_± = Δ_±/U_±`` for "nu"; ½ for "none"), averaged with the form's ``alpha0`` projected onto
the feasible set (LIBSVM's one-class start lies on the bounds, so it is never used alone).
Variables with ``u_t = 0``, and a sign group whose equality forces every variable to a bound
(one-class with ν = 1, ``Δ = U₊``), are fixed there and leave the iteration.

LIBSVM's offset ρ from the equality multipliers (the decision value is ``Σ z_t α_t K − ρ``):
"one": ``ρ = −λ``; "nu": ``ρ = (λ₋ − λ₊)/2``; "none": 0, the signs of ``GeneralDual.to_qp``.
A multiplier whose row was fixed out is the end of its KKT interval that the bounds give.

References
----------
.. [Wright97] S. J. Wright, *Primal-Dual Interior-Point Methods*, SIAM, 1997, ch. 10.
.. [GW03] E. M. Gertz and S. J. Wright, "Object-oriented software for quadratic programming"
   (OOQP), ACM TOMS 29(1), 2003.
.. [CL11] C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM TIST
   2(3), 2011, §4.1 (the general form, ρ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from svmbench.problems.general_dual import GeneralDual
from svmbench.problems.general_qp import project
from svmbench.problems.kernel_dual import GRAM_MEMORY_LIMIT_MB
from svmbench.solvers.barrier.normal_equations import dense_hessian_solver
from svmbench.solvers.barrier.primal_dual import pd_max_step

#: A sign group whose equality is within this fraction of its bound sum is fixed at the bound.
FIXED_GROUP_RTOL = 1e-12
#: Multipliers and slacks are kept at least this large (their products enter 1/α).
PD_FLOOR = 1e-300


def sign_groups(form: GeneralDual) -> tuple[np.ndarray, np.ndarray]:
    """The masks of the variables with ``z = +1`` and ``z = −1``."""
    return form.sign > 0, form.sign < 0


def equality_rows(form: GeneralDual) -> tuple[np.ndarray, np.ndarray]:
    """``(A, Δ)`` of the equalities (k × m, k ∈ {0, 1, 2})."""
    m = form.n_variables
    if form.equality == "one":
        return form.sign[None, :].astype(float), np.array([form.delta])
    if form.equality == "nu":
        pos, neg = sign_groups(form)
        A = np.vstack([pos.astype(float), neg.astype(float)])
        return A, np.array([form.delta, form.delta_neg])
    return np.zeros((0, m)), np.zeros(0)


def general_form_reason(problem) -> str | None:
    """Why the barrier cannot solve a ``GeneralDualProblem``, or None: an indefinite problem,
    a dense Hessian beyond the kernel dual's memory rule, a linear term or right-hand side that
    is not finite, equalities that no point of the box meets."""
    if not problem.convex:
        return "the problem is not convex: the barrier method needs a PSD Q"
    form = problem.smo_form()
    if not (np.all(np.isfinite(form.p)) and np.isfinite(form.delta + form.delta_neg)):
        return "the general form's p, delta and delta_neg must be finite"
    m = form.n_variables
    if m * m * 8 > GRAM_MEMORY_LIMIT_MB * 2**20:
        return (
            f"the dense {m}×{m} Hessian of the general form exceeds GRAM_MEMORY_LIMIT_MB="
            f"{GRAM_MEMORY_LIMIT_MB} (the kernel dual's rule); use smo or a reference"
        )
    pos, neg = sign_groups(form)
    U_pos, U_neg = float(form.upper[pos].sum()), float(form.upper[neg].sum())
    slack = FIXED_GROUP_RTOL * max(1.0, U_pos + U_neg)
    if form.equality == "one" and not (-U_neg - slack <= form.delta <= U_pos + slack):
        return (
            f"no α in the box meets zᵀα = Δ = {form.delta:.6g} "
            f"(feasible: {0.0 - U_neg:.6g} ≤ Δ ≤ {U_pos:.6g})"
        )
    if form.equality == "nu":
        for name, target, U in (("Δ₊", form.delta, U_pos), ("Δ₋", form.delta_neg, U_neg)):
            if not (-slack <= target <= U + slack):
                return (
                    f"no α in the box meets {name} = {target:.6g} (feasible: 0 ≤ {name} ≤ {U:.6g})"
                )
    return None


@dataclass
class GeneralPDState:
    """Primal-dual state on the free variables (``active``) of a general dual.

    ``Q, p, u, A, target`` are those of the free variables (the fixed ones moved into the
    targets); ``lam`` the multipliers of the kept equality rows (``rows``: their indices among
    the form's); ``alpha_fixed`` the full-length point with the fixed variables' values.
    """

    form: GeneralDual
    Q: np.ndarray
    p: np.ndarray
    u: np.ndarray
    A: np.ndarray
    target: np.ndarray
    rows: np.ndarray
    active: np.ndarray
    alpha_fixed: np.ndarray
    Q_fixed: np.ndarray
    alpha: np.ndarray
    slack: np.ndarray
    z_l: np.ndarray
    z_u: np.ndarray
    lam: np.ndarray
    Qa: np.ndarray = field(default=None, repr=False)
    mu: float = math.nan
    iterations: int = 0
    step: float = math.nan
    sigma: float = math.nan
    residual_dual: float = math.nan
    residual_primal: float = math.nan

    def objective(self) -> float:
        a = self.alpha
        return float(0.5 * a @ self.Qa + self.p @ a)

    def full_alpha(self) -> np.ndarray:
        out = self.alpha_fixed.copy()
        out[self.active] = self.alpha
        return out


def _fixed_variables(form: GeneralDual) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The variables fixed before the iteration (``u_t = 0``, or a sign group forced to a
    bound by its equality), their values, and the equality rows kept."""
    u = form.upper.astype(float)
    fixed = u <= 0.0
    value = np.zeros(form.n_variables)
    pos, neg = sign_groups(form)
    U_pos, U_neg = float(u[pos].sum()), float(u[neg].sum())
    slack = FIXED_GROUP_RTOL * max(1.0, U_pos + U_neg)
    rows: list[int] = []
    if form.equality == "one":
        if form.delta >= U_pos - slack:  # every z = +1 at u, every z = −1 at 0
            fixed[:] = True
            value[pos] = u[pos]
        elif form.delta <= -U_neg + slack:
            fixed[:] = True
            value[neg] = u[neg]
        else:
            rows = [0]
    elif form.equality == "nu":
        for row, (mask, target, U) in enumerate(
            ((pos, form.delta, U_pos), (neg, form.delta_neg, U_neg))
        ):
            if target <= slack:
                fixed[mask] = True
            elif target >= U - slack:
                fixed[mask] = True
                value[mask] = u[mask]
            else:
                rows.append(row)
    return fixed, value, rows


def _centre(sign: np.ndarray, u: np.ndarray, equality: str, rows, target) -> np.ndarray:
    """A strictly interior point on the kept equalities: ``α_t = c_{z_t} u_t`` (module notes;
    a kept "nu" row's group has a positive bound sum)."""
    pos = sign > 0
    U_pos, U_neg = float(u[pos].sum()), float(u[~pos].sum())
    c_pos = c_neg = 0.5
    if equality == "one" and len(rows):
        s = (float(target[0]) - 0.5 * (U_pos - U_neg)) / (U_pos + U_neg)
        c_pos, c_neg = 0.5 + s, 0.5 - s
    elif equality == "nu":
        for row, value in zip(rows, target, strict=True):
            if row == 0:
                c_pos = float(value) / U_pos
            else:
                c_neg = float(value) / U_neg
    return np.where(pos, c_pos, c_neg) * u


def general_start(form: GeneralDual, Q_full: np.ndarray) -> GeneralPDState:
    """The primal-dual state at the interior start of the module notes. Multipliers: λ the
    least-squares fit of ``Qα + p + Aᵀλ = 0``, then ``z_l − z_u`` the rest of the gradient, each
    at least ``max(1, mean|g|)`` (as :func:`~solvers.barrier.primal_dual.pd_start`)."""
    fixed, value, rows = _fixed_variables(form)
    active = ~fixed
    A_all, delta_all = equality_rows(form)
    A_full, target_full = A_all[rows], delta_all[rows]
    target = target_full - A_full[:, fixed] @ value[fixed]
    A = np.ascontiguousarray(A_full[:, active])
    u = form.upper[active].astype(float)
    Q = Q_full if np.all(active) else Q_full[np.ix_(active, active)]
    p = form.p[active].astype(float) + Q_full[np.ix_(active, fixed)] @ value[fixed]
    centre = _centre(form.sign[active], u, form.equality, rows, target)
    start = project(form, form.alpha0)[active]
    alpha = 0.5 * (centre + np.clip(start, 0.0, u))
    slack = u - alpha
    Qa = Q @ alpha
    g = Qa + p
    lam = np.zeros(len(rows))
    if len(rows) and alpha.size:
        lam = np.linalg.lstsq(A.T, -g, rcond=None)[0]
        g = g + A.T @ lam
    floor = max(1.0, float(np.mean(np.abs(g)))) if g.size else 1.0
    Q_fixed = Q_full[fixed] if np.any(fixed) else np.zeros((0, form.n_variables))
    return GeneralPDState(
        form=form,
        Q=Q,
        p=p,
        u=u,
        A=A,
        target=target,
        rows=np.asarray(rows, dtype=int),
        active=active,
        alpha_fixed=value,
        Q_fixed=Q_fixed,
        alpha=alpha,
        slack=slack,
        z_l=np.maximum(g, 0.0) + floor,
        z_u=np.maximum(-g, 0.0) + floor,
        lam=lam,
        Qa=Qa,
    )


def _residuals(s: GeneralPDState) -> tuple[np.ndarray, np.ndarray]:
    """``r_d = Qα + p + Aᵀλ − z_l + z_u`` and ``r_p = Aα − Δ``; their sizes stored."""
    r_d = s.Qa + s.p + s.A.T @ s.lam - s.z_l + s.z_u
    r_p = s.A @ s.alpha - s.target
    s.residual_dual = float(np.max(np.abs(r_d), initial=0.0))
    s.residual_primal = float(np.max(np.abs(r_p), initial=0.0))
    return r_d, r_p


def general_converged(s: GeneralPDState, tol: float) -> bool:
    """Native rule: complementarity ``αᵀz_l + (u − α)ᵀz_u ≤ tol · max(1, |f₀|)`` and residuals
    ``≤ tol · max(1, max u, max|Δ|)``."""
    _residuals(s)
    comp = float(s.alpha @ s.z_l + s.slack @ s.z_u)
    scale = max(1.0, float(np.max(s.u, initial=1.0)), float(np.max(np.abs(s.target), initial=0)))
    small = max(s.residual_dual, s.residual_primal) <= tol * scale
    return small and comp <= tol * max(1.0, abs(s.objective()))


def general_iteration(s: GeneralPDState, fraction: float) -> str | None:
    """One Mehrotra predictor-corrector iteration; returns None, or a sentence when the step
    is not finite (the state is then left at the previous point)."""
    a, sl, A = s.alpha, s.slack, s.A
    if a.size == 0:
        return None
    r_d, r_p = _residuals(s)
    comp = float(a @ s.z_l + sl @ s.z_u)
    s.mu = comp / (2 * a.size)
    solve = dense_hessian_solver(s.Q, s.z_l / a + s.z_u / sl)
    k = A.shape[0]
    if k:
        HA = solve(A.T)
        S = A @ HA  # the Schur complement on λ (k × k)

    def direction(r_l, r_u):
        v = solve(-r_d + r_l / a - r_u / sl)
        dlam = np.zeros(k)
        if k:
            dlam = np.linalg.solve(S, A @ v + r_p)
            v = v - HA @ dlam
        return v, dlam, (r_l - s.z_l * v) / a, (r_u + s.z_u * v) / sl

    def max_step(da, dz_l, dz_u):
        return min(
            pd_max_step(a, da), pd_max_step(sl, -da), pd_max_step(s.z_l, dz_l),
            pd_max_step(s.z_u, dz_u),
        )  # fmt: skip

    # Predictor (affine scaling), then the corrector centred at σμ with the second-order term.
    ra_l, ra_u = -a * s.z_l, -sl * s.z_u
    da, _, dz_l, dz_u = direction(ra_l, ra_u)
    st = max_step(da, dz_l, dz_u)
    comp_aff = float((a + st * da) @ (s.z_l + st * dz_l) + (sl - st * da) @ (s.z_u + st * dz_u))
    sigma = min(1.0, (comp_aff / comp) ** 3) if comp > 0 else 0.0
    tau = sigma * s.mu
    da, dlam, dz_l, dz_u = direction(ra_l + tau - da * dz_l, ra_u + tau + da * dz_u)
    st = min(1.0, fraction * max_step(da, dz_l, dz_u))
    moves = (da, dlam, dz_l, dz_u)
    if not (math.isfinite(st) and all(np.all(np.isfinite(v)) for v in moves)):
        return "numerical failure: the Newton direction is not finite"
    s.alpha = np.maximum(a + st * da, PD_FLOOR)
    s.slack = np.maximum(sl - st * da, PD_FLOOR)  # u − α kept apart, as on the binary duals
    s.Qa = s.Q @ s.alpha
    s.z_l = np.maximum(s.z_l + st * dz_l, PD_FLOOR)
    s.z_u = np.maximum(s.z_u + st * dz_u, PD_FLOOR)
    s.lam = s.lam + st * dlam
    s.step, s.sigma = st, sigma
    s.iterations += 1
    return None


def _bound_multiplier(g: np.ndarray, coef: np.ndarray, at_upper: np.ndarray) -> float:
    """The multiplier μ of a row whose variables are all at bounds: KKT asks
    ``g_t + c_t μ ≥ 0`` at 0 and ``≤ 0`` at u; the end of that interval nearest 0 (0 inside)."""
    lo, hi = -math.inf, math.inf
    for gt, ct, up in zip(g, coef, at_upper, strict=True):
        bound = -gt / ct
        # at 0: c μ ≥ −g; at u: c μ ≤ −g (dividing by c < 0 flips the sense)
        if (ct > 0) != bool(up):
            lo = max(lo, bound)
        else:
            hi = min(hi, bound)
    if lo <= 0.0 <= hi:
        return 0.0
    return lo if lo > 0.0 else hi


def general_rho(s: GeneralPDState) -> float:
    """LIBSVM's ρ from the equality multipliers (module notes)."""
    form = s.form
    if form.equality == "none":
        return 0.0
    A_all, _ = equality_rows(form)
    mult = np.zeros(A_all.shape[0])
    mult[s.rows] = s.lam
    alpha = s.full_alpha()
    fixed = ~s.active
    g_fixed = s.Q_fixed @ alpha + form.p[fixed]
    at_upper = alpha[fixed] > 0.0
    for row in set(range(A_all.shape[0])) - set(s.rows.tolist()):
        coef = A_all[row][fixed]
        inside = coef != 0
        mult[row] = _bound_multiplier(g_fixed[inside], coef[inside], at_upper[inside])
    if form.equality == "one":
        return -float(mult[0])
    return 0.5 * float(mult[1] - mult[0])


def bound_counts(alpha: np.ndarray, upper: np.ndarray, rel: float = 0.0) -> dict:
    """How many multipliers lie within ``rel · u_t`` of 0, of ``u_t``, and in between (an
    interior point keeps every one strictly inside: the model then keeps every row)."""
    lower = alpha <= rel * upper
    at_upper = ~lower & (alpha >= (1.0 - rel) * upper)
    return {
        "threshold": rel,
        "near_lower": int(lower.sum()),
        "near_upper": int(at_upper.sum()),
        "between": int((~lower & ~at_upper).sum()),
    }
