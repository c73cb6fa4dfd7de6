"""Primal-dual interior-point method with Mehrotra's predictor-corrector, on the primal forms.

The iteration of :mod:`solvers.barrier.primal_dual` [BV, §11.7; Wright97, ch. 10], here on the
primal forms (notation of :mod:`solvers.barrier.forms`):
Primal forms: ``min ½zᵀPz + Σ C_i ℓ(ξ_i)`` s.t. ``s_i = m_i + ξ_i − 1 ≥ 0`` with multipliers
λ (the dual α), for the hinge (``ℓ(ξ) = ξ``, ``ξ ≥ 0`` with multipliers ν, ``λ + ν = C`` at the
optimum), the squared hinge (``ℓ(ξ) = ξ²``, ξ free and kept at ``λ/(2C)``) and phase II of the
hard margin (no ξ). Residuals ``r_z = Pz − Aᵀλ`` (``A = diag(y)X̃``), ``r_p = Az + ξ − 1 − s``,
``r_ξ = C − λ − ν``; complementarity ``sλ = τ``, ``ξν = τ``. The diagonal slack blocks
eliminate per example to ``Δλ = g − D AΔz``, ``D = 1/(s/λ + e)`` with ``e = ξ/ν``,
``1/(2C)`` or 0, leaving the normal system ``(P + X̃ᵀDX̃) Δz = −r_z + Aᵀg`` of the barrier
path (with t = 1), O(n d²) per iteration, linear in n; s is a variable of its own (an
infeasible-start method), so that the complementarity products keep their digits near the
boundary. Start: ``z = 0`` (``m = 0``), hinge ``ξ = 2``, ``s = 1``, ``λ = ν = C/2``; squared
hinge ``s = 1``, ``λ = C``; hard margin phase I's point (smallest margin 1.1),
``s = m − 1``, ``λ = max(1, f₀)/(n s)``. Phase I itself stays on the barrier path (its
multipliers are the Farkas certificate). When d ≤ n the O(n) work of an iteration runs in
the jitted passes of :mod:`solvers._jit.barrier` (:func:`ppd_fused_iteration`: X read three
times per iteration instead of six, ``Aᵀλ`` updated with the steps); the NumPy
:func:`ppd_iteration` (d > n, and the reference of the tests) is the same iteration. The
certificate is asked only when a gap estimate of O(d) cost (:func:`ppd_gap_estimate`) is
within ``PD_CERTIFY_FACTOR`` of tol, or every ``PD_CERTIFY_EVERY`` iterations: at n = 10⁶ it
cost more than a third of an iteration.

Multipliers handed to the certificate: λ clipped to ``[0, C_i]`` and, for a free
bias, with ``yᵀλ = 0`` made exact in floating point (:func:`feasible_multipliers`), so that the
problem's projection, which would otherwise cost a bisection of ~100 passes over n per check,
only confirms it; the raw ``Σ y_i λ_i`` is part of ``r_z`` (``info["residual_dual"]``).

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
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from scipy import sparse
from scipy.linalg import blas, lapack

from svmbench.problems import HardMarginPrimal
from svmbench.problems._qp import exact_label_sum
from svmbench.solvers._jit import barrier as jit
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers.barrier.forms import active_rows
from svmbench.solvers.barrier.normal_equations import Features, cholesky, normal_solver
from svmbench.solvers.barrier.primal_dual import PD_TO_BOUNDARY, pd_max_step

#: Primal-dual variant, primal forms: the certificate is asked when the gap estimate
#: (:func:`ppd_gap_estimate`) is ≤ this factor times tol, and at least every
#: ``PD_CERTIFY_EVERY`` iterations.
PD_CERTIFY_FACTOR = 10.0
PD_CERTIFY_EVERY = 10
#: After this many iterations in a row whose gap estimate fell by less than 1 % the variant
#: reports that it can go no further: on a separable digits pair at C = 1e10 the margins sit at
#: 1 − 1e-15, which the hinge weighs C times; the estimate stayed at 2.18e-5 from the 15th
#: iteration to the 500th while μ fell to 1e-290.
PD_STALL_ITERATIONS = 20
#: Dense rows ``[X E]`` of at most this many bytes are copied once for the lean normal system of
#: :meth:`_RowPasses.normal_system` (one syrk per iteration instead of the blocked products).
LEAN_BYTES = 2**21


# ---- primal forms: Mehrotra predictor-corrector --------------------------------------------------
@dataclass
class PrimalPDState:
    """Primal-dual state of the primal forms: ``min ½zᵀPz + Σ C_i ℓ(ξ_i)`` s.t.
    ``s = Az + ξ − 1 ≥ 0``, ``A = diag(y) X̃`` (rows of the active examples).

    ``loss``: ``"hinge"`` (``ℓ(ξ) = ξ``, ``ξ ≥ 0`` with multiplier ν), ``"squared_hinge"``
    (``ℓ(ξ) = ξ²``, ξ free and kept equal to ``λ/(2C)``, its stationarity condition) or
    ``"hard"`` (no ξ). λ is the multiplier of ``s ≥ 0`` (the dual α). s is a variable of its own:
    ``r_p = Az + ξ − 1 − s`` need not vanish (infeasible start), and near the boundary s keeps the
    digits that ``Az + ξ − 1`` loses to cancellation.
    """

    feat: Features
    y: np.ndarray
    C: np.ndarray
    loss: str  # "hinge" | "squared_hinge" | "hard"
    p: np.ndarray  # diagonal of P
    z: np.ndarray
    m: np.ndarray  # margins Az, updated with the steps (as in the barrier path)
    s: np.ndarray  # margin slacks
    lam: np.ndarray  # their multipliers
    xi: np.ndarray | None = None  # hinge only
    nu: np.ndarray | None = None  # hinge only: multipliers of ξ ≥ 0
    active: np.ndarray | None = None
    equality: bool = False  # free bias: the dual has yᵀα = 0
    #: Jitted passes over the rows (d ≤ n: :func:`ppd_fused_iteration`), else None (NumPy).
    passes: _RowPasses | None = field(default=None, repr=False)
    #: Residuals ``r_z = Pz − Aᵀλ``, ``r_p`` and (hinge) ``r_ξ = C − λ − ν`` at the current point
    #: (the fused iteration keeps ``Aᵀλ = X̃ᵀ(y ⊙ λ)`` in ``a_lam``, updated with the steps, and
    #: recomputes r_p, r_ξ row by row: it does not store them).
    a_lam: np.ndarray = field(default=None, repr=False)
    r_z: np.ndarray = field(default=None, repr=False)
    #: ``(Σ C_i ℓ(max(0, 1 − m_i)), Σ λ_i, Σ λ_i²/(4C_i), min m)`` for :func:`ppd_gap_estimate`.
    sums: np.ndarray = field(default_factory=lambda: np.zeros(4), repr=False)
    r_p: np.ndarray = field(default=None, repr=False)
    r_xi: np.ndarray | None = field(default=None, repr=False)
    mu: float = math.nan
    step: float = math.nan
    sigma: float = math.nan
    residual_dual: float = math.nan
    residual_primal: float = math.nan
    complementarity: float = math.nan
    #: The exact finish of an iterate (:mod:`~solvers.barrier.early_finish`), once certified at
    #: tol: ``(variables, certificate, report)``; and the gap estimate below which it is tried.
    finished: tuple | None = field(default=None, repr=False)
    next_finish_try: float = math.inf
    #: The last gap estimate and the iterations in a row it fell by less than 1 %
    #: (:func:`ppd_stalled`).
    last_estimate: float = math.inf
    stalled: int = 0

    @property
    def xi_of_loss(self) -> np.ndarray | None:
        """ξ: the hinge's variable, ``λ/(2C)`` (squared hinge) or None (hard margin: 0)."""
        if self.loss == "hinge":
            return self.xi
        if self.loss == "squared_hinge":
            return self.lam / (2.0 * self.C)
        return None

    def objective(self) -> float:
        f = 0.5 * float(self.z @ (self.p * self.z))
        xi = self.xi_of_loss
        if self.loss == "hinge":
            f += float(self.C @ xi)
        elif self.loss == "squared_hinge":
            f += float(self.C @ (xi * xi))
        return f

    def update_residuals(self) -> None:
        """Recompute the residuals (one product with X̃ᵀ) and their ∞-norms: ``residual_dual``
        for ``r_z`` and ``r_ξ``, ``residual_primal`` for ``r_p``."""
        u = self.y * self.lam
        Z = self.passes.Z if self.passes is not None else None
        self.a_lam = Z.T @ u if Z is not None else self.feat.tdot(u)
        self.r_z = self.p * self.z - self.a_lam
        self.r_p = self.m - 1.0 - self.s
        xi = self.xi_of_loss
        if xi is not None:
            self.r_p += xi
        dual = _max_abs(self.r_z)
        if self.loss == "hinge":
            self.r_xi = self.C - self.lam - self.nu
            dual = max(dual, _max_abs(self.r_xi))
        self.residual_dual = dual
        self.residual_primal = _max_abs(self.r_p)
        comp, pairs = _ppd_complementarity(self)
        self.complementarity, self.mu = comp, comp / pairs
        u = np.maximum(1.0 - self.m, 0.0)
        self.sums[:] = (
            float(self.C @ (u if self.loss == "hinge" else u * u)),
            float(self.lam.sum()),
            float(self.lam @ (self.lam / (4.0 * self.C))) if self.loss == "squared_hinge" else 0.0,
            float(self.m.min()) if self.m.size else math.inf,
        )


def _max_abs(v: np.ndarray) -> float:
    """``‖v‖_∞`` (0 for an empty v)."""
    return float(np.abs(v).max()) if v.size else 0.0


def _ppd_complementarity(s: PrimalPDState) -> tuple[float, int]:
    """``sᵀλ + ξᵀν`` (hinge) and the number of complementarity pairs."""
    total = float(s.s @ s.lam)
    if s.loss == "hinge":
        return total + float(s.xi @ s.nu), 2 * len(s.lam)
    return total, len(s.lam)


def ppd_start(feat, y, C, loss, p, z, active, equality) -> PrimalPDState:
    """Interior start of the primal-dual variant on the primal forms.

    Soft margin: ``z = 0``, so ``m = 0``; hinge ``ξ = 2``, ``s = 1`` (``r_p = 0``),
    ``λ = ν = C/2`` (``r_ξ = 0``); squared hinge ``s = 1``, ``λ = C``. (Multipliers capped at 1
    took more iterations over a range of C: docs/measurements.md, "barrier".) The hinge on
    small rows (``[X E]`` within ``LEAN_BYTES``, dense or CSR) starts instead from the
    least-squares fit of the margins (:func:`_least_squares_start`). Hard margin: z of phase I
    (smallest margin 1.1), ``s = m − 1``, ``λ_i = max(1, f₀)/(n s_i)`` (the multipliers of the
    barrier's centre at ``m/t = f₀``).
    """
    passes = _RowPasses(feat) if feat.d <= feat.n else None
    if loss == "hard":
        m = y * feat.dot(z)
        sl = m - 1.0
        f0 = 0.5 * float(z @ (p * z))
        state = PrimalPDState(feat, y, C, loss, p, z, m, sl, max(f0, 1.0) / (len(y) * sl))
    elif loss == "hinge":
        state = _least_squares_start(feat, passes, y, C, p) if passes is not None else None
        if state is None:
            m = y * feat.dot(z)
            xi = np.maximum(1.0 - m, 0.0) + 1.0
            lam, nu = 0.5 * C, 0.5 * C
            state = PrimalPDState(feat, y, C, loss, p, z, m, m + xi - 1.0, lam, xi=xi, nu=nu)
        state.feat = feat
    else:
        m = y * feat.dot(z)
        sl = np.maximum(m - 1.0, 0.0) + 1.0
        state = PrimalPDState(feat, y, C, loss, p, z, m, sl, C.copy())
    state.active, state.equality, state.passes = active, equality, passes
    state.update_residuals()
    return state


#: The least-squares start's slack beyond the margin: ``ξ_i = max(0, 1 − m_i) + LS_SLACK``.
#: (docs/measurements.md, "barrier": the Newton steps of each choice).
LS_SLACK = 1.0


def _best_multiple(q: float, m: np.ndarray, C: np.ndarray) -> float:
    """The minimizer ``t ≥ 0`` of the hinge's ``½t²q + Σ C_i max(0, 1 − t m_i)`` (the primal
    objective along the ray of a point with ``zᵀPz = q`` and margins m): the root of its
    slope ``qt − Σ_{t m_i < 1} C_i m_i``, whose sum drops at the breakpoints ``1/m_i``
    (``m_i > 0``) swept in order."""
    pos = m > 0.0
    breaks = 1.0 / m[pos]
    order = np.argsort(breaks)
    breaks, drops = breaks[order], (C[pos] * m[pos])[order]
    sums = float(C @ m) - np.concatenate(([0.0], np.cumsum(drops)))  # the sum on each piece
    if not q > 0.0:
        return 0.0
    roots = sums / q
    ends = np.append(breaks, np.inf)
    k = int(np.argmax(roots < ends))  # the first piece whose root is before its end
    starts = np.concatenate(([0.0], breaks))
    return float(max(roots[k], starts[k]))


def _least_squares_start(feat, passes: _RowPasses | None, y, C, p) -> PrimalPDState | None:
    """The hinge's start from ``z`` fitting the margins to 1, ``(P + X̃ᵀX̃) z = X̃ᵀy``, on small
    rows (``[X E]`` within ``LEAN_BYTES`` as dense, for dense and CSR X alike, so that both
    storages of one problem take the same path), scaled by the best multiple
    (:func:`_best_multiple`): ``ξ = max(0, 1 − m) + LS_SLACK``, ``s = m + ξ − 1``
    (``r_p = 0``), ``λ = Cξ/(s + ξ)`` and ``ν = C − λ`` (``r_ξ = 0``; ``λs = νξ``: a point
    violating its margin starts with λ near C, one beyond it near 0). None for larger rows, or
    when the system cannot be solved (the caller starts from ``z = 0``)."""
    if passes is None:
        return None
    if passes.Z is not None:
        Z = passes.Z
        H = Z.T @ Z
        rhs = Z.T @ y
    elif feat.sparse and 8 * feat.n * feat.dim <= LEAN_BYTES:
        H, B = feat.gram_tdot(np.ones(feat.n), y[:, None])
        rhs = B[:, 0]
    else:
        return None
    H.flat[:: H.shape[0] + 1] += p
    # LU for both storages: syrk and a Cholesky factor here gave CSR rows a start a few ulps off
    # the dense one's, enough to flip a tie of one-vs-one votes (scikit-learn's sparse tests);
    # LAPACK's dgesv directly (NumPy's solve wraps it in checks costing more than the solve)
    _, _, z, info = lapack.dgesv(H, rhs, overwrite_a=1, overwrite_b=1)
    if info != 0:  # an exactly singular factor
        return None
    m = y * (passes.Z @ z if passes.Z is not None else feat.dot(z))
    if not np.all(np.isfinite(m)):
        return None
    t = _best_multiple(float(z @ (p * z)), m, C)
    if not t > 0.0:
        return None
    z, m = t * z, t * m
    xi = np.maximum(1.0 - m, 0.0) + LS_SLACK
    sl = m + xi - 1.0
    lam = C * xi / (sl + xi)
    return PrimalPDState(None, y, C, "hinge", p, z, m, sl, lam, xi=xi, nu=C - lam)


def _ppd_estimate(s: PrimalPDState) -> float:
    """The primal-dual's own measure of convergence, ``max(sᵀλ + ξᵀν)/max(1, |f₀|),
    ‖r_z‖_∞/c, ‖r_ξ‖_∞/c, ‖r_p‖_∞)`` with ``c = max(1, max C_i)`` (1 for the hard margin): the
    native rule is ``≤ tol``."""
    scale = 1.0 if s.loss == "hard" else max(1.0, float(np.max(s.C, initial=1.0)))
    comp = s.complementarity / max(1.0, abs(s.objective()))
    return max(comp, s.residual_dual / scale, s.residual_primal)


def ppd_estimates(s: PrimalPDState) -> tuple[float, float] | None:
    """``(P, D)`` estimated from the iterate at O(d) cost (the sums come with the step):
    ``P = ½zᵀPz + Σ C_i ℓ(max(0, 1 − m_i))`` (hard margin: ``½zᵀPz / min(1, min m)²``, z
    scaled to feasibility; None before a margin is positive), ``D = Σλ − ½ (Aᵀλ)ᵀP(Aᵀλ)``
    (``− Σλ²/(4C)`` for the squared hinge), λ taken as it is (not clipped, ``yᵀλ`` not
    projected): no certificate, an estimate."""
    loss_sum, lam_sum, lam2_sum, m_min = s.sums
    zPz = float(s.z @ (s.p * s.z))
    if s.loss != "hard":
        primal = 0.5 * zPz + loss_sum
    elif m_min > 0.0:
        primal = 0.5 * zPz / min(1.0, m_min) ** 2
    else:
        return None
    return primal, lam_sum - 0.5 * float(s.a_lam @ (s.p * s.a_lam)) - lam2_sum


def ppd_gap_estimate(s: PrimalPDState) -> float:
    """Relative duality gap ``(P − D)/max(1, |P|)`` of :func:`ppd_estimates` (inf when it has
    none). It decides when to ask the problem's certificate, never the status; measured close
    to the certified gap (docs/measurements.md, "barrier")."""
    estimates = ppd_estimates(s)
    if estimates is None:
        return math.inf
    primal, dual = estimates
    return (primal - dual) / max(1.0, abs(primal))


def ppd_stalled(s: PrimalPDState, estimate: float) -> str | None:
    """The failure to report once the gap estimate has fallen by less than 1 % in
    :data:`PD_STALL_ITERATIONS` iterations in a row (the loop certifies such points every
    ``PD_CERTIFY_EVERY`` iterations, and would have stopped at one meeting tol), else None."""
    still = math.isfinite(estimate) and not estimate < 0.99 * s.last_estimate
    s.stalled = s.stalled + 1 if still else 0
    s.last_estimate = estimate
    if s.stalled < PD_STALL_ITERATIONS:
        return None
    return (
        f"no progress: the gap estimate stayed at {estimate:.3g} for {s.stalled} iterations "
        f"(μ = {s.mu:.1e}); the iterates are at the limits of float64"
    )


def ppd_converged(s: PrimalPDState, tol: float) -> bool:
    """Native rule: complementarity ``sᵀλ + ξᵀν ≤ tol · max(1, |f₀|)``, ``‖r_p‖_∞ ≤ tol`` (margin
    units) and ``‖r_z‖_∞, ‖r_ξ‖_∞ ≤ tol · max(1, max C_i)`` (1 for the hard margin). The fused
    iteration's ``r_z`` is updated with the steps: it is recomputed before the rule is granted."""
    if _ppd_estimate(s) > tol:
        return False
    if s.passes is not None:
        s.update_residuals()
        return _ppd_estimate(s) <= tol
    return True


def ppd_iteration(s: PrimalPDState, fraction: float) -> None:
    """One Mehrotra predictor-corrector iteration on the primal forms [Wright97, ch. 10].

    Newton's equations of the KKT system at ``(z, ξ, s, λ, ν)``: ``PΔz − AᵀΔλ = −r_z``,
    ``AΔz + Δξ − Δs = −r_p``, ``Δλ + Δν = r_ξ`` (hinge; squared hinge ``Δξ = Δλ/(2C)``, hard
    ``Δξ = 0``), ``λΔs + sΔλ = r_s``, ``νΔξ + ξΔν = r_c``. Per example the slack rows give
    ``Δλ = g − D AΔz`` with ``D = 1/(s/λ + e)``, ``e = ξ/ν`` (hinge), ``1/(2C)`` (squared hinge)
    or 0 (hard) and ``g = D (r_s/λ − r_p − (r_c − ξ r_ξ)/ν)`` (last term: hinge only), which
    leaves the normal system ``(P + X̃ᵀDX̃) Δz = −r_z + X̃ᵀ(y ⊙ g)``: one factorization, two
    solves (the affine-scaling and the corrected right-hand sides).
    """
    feat, y, hinge = s.feat, s.y, s.loss == "hinge"
    r_z, r_p, r_xi = s.r_z, s.r_p, s.r_xi
    if hinge:
        e = s.xi / s.nu
    elif s.loss == "squared_hinge":
        e = 1.0 / (2.0 * s.C)
    else:
        e = 0.0
    D = 1.0 / (s.s / s.lam + e)
    solve = normal_solver(feat, D, s.p)

    def direction(r_s, r_c):
        g = r_s / s.lam - r_p
        if hinge:
            g -= (r_c - s.xi * r_xi) / s.nu
        g *= D
        dz, q, Xdz = solve(-r_z, y * g)
        dlam = y * q  # g − D ⊙ AΔz
        ds = (r_s - s.s * dlam) / s.lam  # from the complementarity rows: relative accuracy in s
        if not hinge:
            return dz, y * Xdz, ds, dlam, None, None
        dnu = r_xi - dlam
        return dz, y * Xdz, ds, dlam, (r_c - s.xi * dnu) / s.nu, dnu

    def max_step(ds, dlam, dxi, dnu):
        st = min(pd_max_step(s.s, ds), pd_max_step(s.lam, dlam))
        if hinge:
            st = min(st, pd_max_step(s.xi, dxi), pd_max_step(s.nu, dnu))
        return st

    # Predictor (affine scaling, σ = 0).
    rs_aff = -s.s * s.lam
    rc_aff = -s.xi * s.nu if hinge else None
    _, _, ds, dlam, dxi, dnu = direction(rs_aff, rc_aff)
    st = max_step(ds, dlam, dxi, dnu)
    comp_aff = float((s.s + st * ds) @ (s.lam + st * dlam))
    if hinge:
        comp_aff += float((s.xi + st * dxi) @ (s.nu + st * dnu))
    sigma = min(1.0, (comp_aff / max(s.complementarity, 1e-300)) ** 3)  # Mehrotra's heuristic
    # Corrector: centring at σμ and the second-order terms of the affine step.
    tau = sigma * s.mu
    r_s = rs_aff + tau - ds * dlam
    r_c = rc_aff + tau - dxi * dnu if hinge else None
    dz, dm, ds, dlam, dxi, dnu = direction(r_s, r_c)
    st = min(1.0, fraction * max_step(ds, dlam, dxi, dnu))
    s.z = s.z + st * dz
    s.m = s.m + st * dm
    s.s = np.maximum(s.s + st * ds, 1e-300)
    s.lam = np.maximum(s.lam + st * dlam, 1e-300)
    if hinge:
        s.xi = np.maximum(s.xi + st * dxi, 1e-300)
        s.nu = np.maximum(s.nu + st * dnu, 1e-300)
    s.step, s.sigma = st, sigma
    s.update_residuals()


class _RowPasses:
    """The rows of X̃ for the jitted passes of :func:`ppd_fused_iteration` (X as
    :func:`~solvers._jit.rows.as_rows` gives it, dense or CSR; E apart), and their O(n) work
    arrays."""

    def __init__(self, feat: Features):
        self.rows = as_rows(feat.X)
        self.E = feat.E
        n, dim = feat.n, feat.dim
        self.sqD, self.V = np.empty(n), np.empty((n, 2))
        self.dm_aff, self.dm = np.empty(n), np.empty(n)  # y ⊙ X̃Δz of the two directions
        self.acc_aff, self.acc = np.empty(dim), np.empty(dim)
        self.buf = np.empty((5, jit.BLOCK))  # per-row results of a block
        #: Whether ``sqD`` and ``V`` hold ``prepare``'s values at the state's current point (the
        #: step's pass computes them): the next iteration then skips ``prepare``. Code that
        #: changes the state's m, s, λ, ξ or ν between iterations sets it to False.
        self.prepared = False
        # small dense rows: [X E] once, and its scaled copy (normal_system)
        self.Z = self.Y = None
        if not feat.sparse and 8 * n * dim <= LEAN_BYTES:
            # Fortran order: BLAS reads it as it is (a C-ordered copy is transposed per call)
            self.Z = np.empty((n, dim), order="F")
            self.Z[:, : feat.d], self.Z[:, feat.d :] = feat.X, feat.E
            self.Y = np.empty_like(self.Z)
            self.B = np.empty((dim, 2))

    def normal_system(self, feat: Features, p: np.ndarray):
        """Factor ``P + X̃ᵀDX̃`` (``√D`` in ``sqD``) and return ``(solve, X̃ᵀV)``. Small dense rows
        (``[X E]`` within ``LEAN_BYTES``) take one jitted pass for the scaled copy and ``X̃ᵀV``
        (:func:`~solvers._jit.barrier.scale_rows`), BLAS ``syrk`` into the lower triangle and
        LAPACK's Cholesky without SciPy's checks: their iteration costs a few array calls
        rather than :meth:`Features.gram_tdot`'s blocks, two
        :func:`~scipy.linalg.cho_solve` and a diagonal index."""
        if self.Z is None:
            H, B = feat.gram_tdot(self.sqD, self.V)
            H.flat[:: H.shape[0] + 1] += p
            cf = cholesky(H)
            return (lambda rhs: sla.cho_solve(cf, rhs, check_finite=False)), B
        jit.scale_rows(self.Z, self.sqD, self.V, self.Y, self.B)
        B = self.B
        H = blas.dsyrk(1.0, self.Y, trans=1, lower=1)
        H.flat[:: H.shape[0] + 1] += p
        factor, info = lapack.dpotrf(H, lower=1, overwrite_a=1)
        if info != 0:  # the ridge retries of cholesky() on the whole symmetric matrix
            H = blas.dsyrk(1.0, self.Y, trans=1, lower=1)
            H.flat[:: H.shape[0] + 1] += p
            cf = cholesky(np.tril(H) + np.tril(H, -1).T)
            return (lambda rhs: sla.cho_solve(cf, rhs, check_finite=False)), B
        return (lambda rhs: lapack.dpotrs(factor, rhs, lower=1)[0]), B


#: The (storage, loss) variants of the jitted passes compiled in this process
#: (:func:`compile_row_passes`).
_WARM_VARIANTS: set[tuple[str, str]] = set()
_LOSS_CODES = {"hinge": jit.HINGE, "squared_hinge": jit.SQUARED_HINGE, "hard": jit.HARD}
#: The losses of the passes (the hard margin: its phase II).
LOSSES = tuple(_LOSS_CODES)
_NO_ROWS = np.empty(0)  # ξ, ν of the losses without them


def ppd_fused_iteration(s: PrimalPDState, fraction: float) -> None:
    """:func:`ppd_iteration` (d ≤ n) with its O(n) work in the jitted passes of
    :mod:`solvers._jit.barrier`: X is read three times per iteration (``X̃ᵀDX̃`` with the
    right-hand sides, then ``X̃Δz`` of each direction) instead of six.

    By linearity in ``(r_s, r_c)`` the corrector's right-hand side is the affine one plus
    ``τ X̃ᵀ(y ⊙ D(1/λ − 1/ν)) − X̃ᵀ(y ⊙ D(Δs_aΔλ_a/λ − Δξ_aΔν_a/ν))``: the first product comes
    with the Gram matrix, the second with ``X̃Δz_a``. The affine complementarity is the quadratic
    ``sᵀλ + ξᵀν + α lin + α² quad`` of the step α, and ``Aᵀλ`` is updated with
    ``X̃ᵀ(y ⊙ Δλ)`` from the corrector's pass (``r_z = Pz − Aᵀλ``). The step's pass leaves ``D``
    and the right-hand sides' vectors of the next iteration (``prepare``'s) in place."""
    rp, passes = s.passes, jit.PASSES[_LOSS_CODES[s.loss]]
    xi, nu = (s.xi, s.nu) if s.loss == "hinge" else (_NO_ROWS, _NO_ROWS)
    y, C, m, sl, lam, buf = s.y, s.C, s.m, s.s, s.lam, rp.buf
    if not rp.prepared:
        passes.prepare(y, C, m, sl, lam, xi, nu, rp.sqD, rp.V)
    rp.prepared = False  # until the step's pass prepares the next iteration
    solve, B = rp.normal_system(s.feat, s.p)
    # Predictor (affine scaling, σ = 0).
    rhs = B[:, 0] - s.r_z
    dz = solve(rhs)
    worst, lin, quad = passes.affine(
        rp.rows, rp.E, y, C, m, sl, lam, xi, nu, dz, rp.dm_aff, rp.acc_aff, buf
    )
    st = 1.0 if worst <= 1.0 else 1.0 / worst
    comp = s.complementarity
    comp_aff = max(comp + st * lin + st * st * quad, 0.0)
    sigma = min(1.0, (comp_aff / max(comp, 1e-300)) ** 3)  # Mehrotra's heuristic
    # Corrector: centring at σμ and the second-order terms of the affine step.
    tau = sigma * s.mu
    dz = solve(rhs + tau * B[:, 1] - rp.acc_aff)
    worst = passes.corrector(
        rp.rows, rp.E, y, C, m, sl, lam, xi, nu, rp.dm_aff, tau, dz, rp.dm, rp.acc, buf
    )
    st = min(1.0, fraction * (1.0 if worst <= 1.0 else 1.0 / worst))
    comp, rp_max, rxi_max = passes.update(
        y, C, m, sl, lam, xi, nu, rp.dm_aff, rp.dm, tau, st, buf, s.sums, rp.sqD, rp.V
    )
    rp.prepared = True
    s.z = s.z + st * dz
    s.a_lam = s.a_lam + st * rp.acc
    s.r_z = s.p * s.z - s.a_lam
    s.residual_dual = max(float(np.abs(s.r_z).max()), rxi_max)  # z has d + k ≥ 1 entries
    s.residual_primal = rp_max
    s.complementarity, s.mu = comp, comp / (2 * len(lam) if s.loss == "hinge" else len(lam))
    s.step, s.sigma = st, sigma


def feasible_multipliers(lam: np.ndarray, y: np.ndarray, upper: np.ndarray, equality: bool):
    """λ made dual feasible: clipped to ``[0, upper]`` and, with ``yᵀα = 0`` (free bias), that
    equality made *exact* in floating point, so that the problem's projection (a bisection of
    O(n) passes, which dominated the time per iteration at n = 3·10⁵) is only a check.

    The values are rounded down to multiples of ``q = 2^⌈log₂ Σλ⌉ / 2⁵²``: every partial sum of
    ``±λ_i`` is then a multiple of q below ``2⁵³q`` in magnitude, hence exact in any order; the
    exact imbalance ``yᵀλ`` is taken off the largest multiplier of the class in excess. Where that
    multiplier is smaller than the imbalance (early iterations), the clipped λ is returned and
    the problem projects it.
    """
    a = np.clip(lam, 0.0, upper)
    if not equality:
        return a
    grid = exact_label_sum(a, y, np.ones(a.shape, dtype=bool))
    return a if grid is None else grid


#: The storages of the rows the passes run over (:func:`row_storage`).
ROW_STORAGES = ("dense", "csr-int32", "csr-int64")


def row_storage(rows) -> str:
    """The storage of rows as :func:`~solvers._jit.rows.as_rows` gives them: ``"dense"``,
    ``"csr-int32"`` or ``"csr-int64"`` (each compiles its own passes)."""
    if not isinstance(rows, tuple):
        return "dense"
    return "csr-int32" if rows[1].dtype == np.int32 else "csr-int64"


def passes_variant(problem) -> tuple[str, str] | None:
    """``(storage, loss)`` of the jitted passes the primal-dual variant runs on ``problem`` (a
    primal form with d ≤ n over the examples with ``C_i > 0``), or None when it runs none."""
    feat, _, _, _, _ = active_rows(problem)
    if feat.d > feat.n:
        return None
    loss = "hard" if isinstance(problem, HardMarginPrimal) else problem.loss
    return row_storage(as_rows(feat.X)), loss


def compiled_passes() -> frozenset[tuple[str, str]]:
    """The ``(storage, loss)`` variants of the passes compiled in this process."""
    return frozenset(_WARM_VARIANTS)


def compile_row_passes(storages=ROW_STORAGES, losses=LOSSES) -> float:
    """Compile the jitted passes of :func:`ppd_fused_iteration` for each of ``storages`` and
    ``losses`` on a 4×2 problem, once per process and variant; untimed. Returns the seconds it
    took (0 when all were compiled)."""
    wanted = [(st, loss) for st in storages for loss in losses]
    wanted = [v for v in wanted if v not in _WARM_VARIANTS]
    if not wanted:
        return 0.0
    start = time.perf_counter()
    X = np.array([[2.0, 0.0], [-2.0, 0.0], [2.0, 1.0], [-2.0, -1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    csr = sparse.csr_matrix(X)
    tiny = {
        "dense": X,
        "csr-int32": sparse.csr_matrix(
            (csr.data, csr.indices.astype(np.int32), csr.indptr.astype(np.int32)), shape=X.shape
        ),
        "csr-int64": sparse.csr_matrix(
            (csr.data, csr.indices.astype(np.int64), csr.indptr.astype(np.int64)), shape=X.shape
        ),
    }
    p = np.array([1.0, 1.0, 0.0])
    for storage, loss in wanted:
        feat = Features(tiny[storage], np.ones((4, 1)))
        z = np.array([1.0 if loss == "hard" else 0.0, 0.0, 0.0])  # hard: margins 2
        state = ppd_start(feat, y, np.ones(4), loss, p, z, None, True)
        ppd_fused_iteration(state, PD_TO_BOUNDARY)
        _WARM_VARIANTS.add((storage, loss))
    return time.perf_counter() - start
