"""Log-barrier Newton method (path following), Boyd & Vandenberghe, *Convex Optimization*, ch. 11.

For a problem ``min f₀(x) s.t. f_i(x) ≤ 0`` (m inequalities, optionally ``Ax = b``) the barrier
method minimizes ``ψ_t(x) = t f₀(x) + φ(x)``, ``φ(x) = −Σ log(−f_i(x))``, for an increasing
sequence ``t ← μ t`` (the *outer steps*); each minimization (*centering*) is Newton's method with
a backtracking line search started from the previous centre [BV, Alg. 11.1]. At the centre
``x*(t)`` the multipliers ``λ_i = 1/(−t f_i(x*(t)))`` are dual feasible and the duality gap is
exactly ``m/t`` [BV, §11.2.2]. Iterations are counted in Newton steps; every outer step is one
chunk of :class:`~solvers.base.IterativeSolver` and one point of the trace.

Formulations (ARCHITECTURE.md §2; ``x̃_i = (x_i, 1)`` for a free bias, ``(x_i, s)`` for a
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
  d > n, O(n²d + n³) through the n×n system of the multipliers (:func:`_normal_solver`).
- Soft-margin primal, squared hinge: ``min ½‖w‖² + Σ C_i ξ_i²`` s.t. ``ξ_i ≥ 1 − m_i``, ξ free
  (m = n). Eliminated the same way: ``ξ(ξ − u) = 1/(2tC)``, ``g'' = 2tC/(2tC r² + 1)``.
- Hard margin: ``min ½‖w‖²`` s.t. ``m_i ≥ 1`` (m = n), ``g = −log(m − 1)``, started from a
  strictly feasible point found by the phase I problem ``min s s.t. m_i ≥ 1 − s``
  [BV, §11.4.1], stopped as soon as ``s < 0``. The phase I dual is
  ``max Σλ_i s.t. Σλ_i = 1, Σλ_i y_i x̃_i = 0, λ ≥ 0``: at every phase I centre the normalized
  multipliers ``λ_i ∝ 1/(m_i − 1 + s)`` satisfy these equations (stationarity in ``s`` and
  ``z``), i.e. they are the Farkas certificate of ARCHITECTURE.md §2 when the data are not
  separable (and no centre exists when they are: the phase I problem is then unbounded).
- Duals (soft-margin dual, kernel dual): ``min t(½αᵀQ̃α + ½Σδ_iα_i² − Σα_i) − Σ log α_i −
  Σ log(C_i − α_i)`` with ``yᵀα = 0`` for a free bias (δ_i = 1/(2C_i) and no upper bound for the
  squared hinge; m = 2n or n). The equality is kept in Newton's KKT system
  ``[H y; yᵀ 0][Δ; ν] = [−∇ψ; 0]`` [BV, §10.2], solved by two solves with ``H``:
  dense Cholesky of ``H = tQ̃ + diag(h)`` (n×n), or, for ``Q̃ = GGᵀ`` of rank r (linear features,
  or a Nyström / pivoted-Cholesky kernel factor), the Woodbury identity
  ``H⁻¹ = h⁻¹ − h⁻¹G(I/t + Gᵀh⁻¹G)⁻¹Gᵀh⁻¹`` in O(n r²). With a factor the problem solved is the
  linear SVM on the features of the factor, and the certified gap refers to that approximate
  kernel (the result says so).

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

Primal-dual variant (``method="primal-dual"``, the default for every form) [BV, §11.7], with
Mehrotra's predictor-corrector [Wright97, ch. 10; GW03]: each iteration factors one matrix and
solves with it twice, for the affine-scaling direction (centring τ = 0) and for the corrected one
(``τ = σμ`` with Mehrotra's ``σ = (μ_aff/μ)³``, μ the mean complementarity product, plus the
second-order terms of the affine step); a common step for the primal variables and the
multipliers goes 0.995 of the way to the boundary of the positive orthant. One
predictor-corrector iteration is counted as one Newton step and is one chunk of the template
(one gap check, one trace point).

- Duals: Lagrangian ``½αᵀQ̃α − Σα + b yᵀα − z_lᵀα + z_uᵀ(α − u)`` (Q̃ includes ``diag(δ)``),
  multipliers ``z_l, z_u ≥ 0`` of the two bounds (no z_u where ``u = ∞``) and b of ``yᵀα = 0``
  (the model's bias). Each iteration linearizes ``r_d = Q̃α − 1 + b y − z_l + z_u = 0``,
  ``yᵀα = 0``, ``α z_l = τ``, ``(u − α) z_u = τ`` and eliminates ``Δz_l, Δz_u``:
  ``(Q̃ + diag(z_l/α + z_u/(u − α))) Δα + y Δb = −r_d + r_l/α − r_u/(u − α)``, ``yᵀΔα = −yᵀα``.
  H is factored once per iteration (dense Cholesky, or the Woodbury form above with t = 1 for a
  low-rank Q̃) and used for three solves: with y (the Schur complement on b,
  ``Δb = (yᵀH⁻¹r + yᵀα)/(yᵀH⁻¹y)``) and the two right-hand sides. The start is α of the barrier
  method scaled to minimize the objective along its ray, with ``z_l − z_u = Q̃α − 1`` (zero dual
  residual), each at least ``max(1, mean|Q̃α − 1|)``.
- Primal forms: ``min ½zᵀPz + Σ C_i ℓ(ξ_i)`` s.t. ``s_i = m_i + ξ_i − 1 ≥ 0`` with multipliers
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
  the jitted passes of :mod:`solvers._jit.barrier` (:func:`_ppd_fused_iteration`: X read three
  times per iteration instead of six, ``Aᵀλ`` updated with the steps); the NumPy
  :func:`_ppd_iteration` (d > n, and the reference of the tests) is the same iteration. The
  certificate is asked only when a gap estimate of O(d) cost (:func:`_ppd_gap_estimate`) is
  within ``PD_CERTIFY_FACTOR`` of tol, or every ``PD_CERTIFY_EVERY`` iterations: at n = 10⁶ it
  cost more than a third of an iteration.

Multipliers handed to the certificate (primal forms). Barrier path: ``λ⁺ = (1/r − g''⊙Δm)/t``
from the last Newton step, which satisfy ``P(z + Δ) = X̃ᵀ(y ⊙ λ⁺)`` exactly (so
``Σ y_i λ⁺_i = 0`` for a free bias whatever the centering error); ``newton_tol`` can then be
loose (default 1e-2, see the benchmark). Primal-dual: λ clipped to ``[0, C_i]`` and, for a free
bias, with ``yᵀλ = 0`` made exact in floating point (:func:`_feasible_multipliers`), so that the
problem's projection, which would otherwise cost a bisection of ~100 passes over n per check,
only confirms it; the raw ``Σ y_i λ_i`` is part of ``r_z`` (``info["residual_dual"]``). In the
duals ``u − α`` is stored separately from α: near the upper bound it is far below the resolution
of α.

Stopping: by default the certified relative gap of the problem (``problem.certificate`` with the
multipliers as the dual point, projected by the problem) ≤ ``tol`` after each outer step or
primal-dual iteration; ``stop_rule="native"`` stops the barrier path when
``m/t ≤ tol · max(1, |f₀|)`` (the gap bound of the central path), the primal-dual variant when the
complementarity (``αᵀz_l + (u − α)ᵀz_u``, or ``sᵀλ + ξᵀν``) is ``≤ tol · max(1, |f₀|)`` and the
residuals are small: ``‖r_d‖_∞, |yᵀα| ≤ tol · max(1, max u_i)`` (duals),
``‖r_z‖_∞, ‖r_ξ‖_∞ ≤ tol · max(1, max C_i)`` and ``‖r_p‖_∞ ≤ tol`` (primal forms, margin units).
On the duals both variants hand α alone to the certificate (the problem takes the exactly
minimizing bias; the primal-dual b is reported in ``info``); on the primal forms ``(w, b)`` and α.

References
----------
.. [BV] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004,
   ch. 9 (Newton's method, self-concordance), ch. 10 (equality constraints) and ch. 11
   (barrier method, phase I).
.. [Wright97] S. J. Wright, *Primal-Dual Interior-Point Methods*, SIAM, 1997, ch. 10
   (Mehrotra's predictor-corrector algorithm).
.. [GW03] E. M. Gertz and S. J. Wright, "Object-oriented software for quadratic programming"
   (OOQP), ACM TOMS 29(1), 2003 (the box-constrained QP form).
.. [WS] C. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines",
   NIPS 2001; S. Fine and K. Scheinberg, "Efficient SVM training using low-rank kernel
   representations", JMLR 2001 (pivoted incomplete Cholesky).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.linalg as sla
from scipy import sparse

from svmbench.problems import HardMarginPrimal, KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems._validation import check_int, check_option, check_real
from svmbench.problems.kernels import kernel_matrix
from svmbench.solvers._jit import barrier as jit
from svmbench.solvers.base import IterativeSolver, Outcome, Prepared, Status, StepOutcome
from svmbench.solvers.registry import register

#: Default initial barrier parameter, as a multiple of ``m / max(1, f₀(x₀) − p̂)`` [BV, §11.3.1].
T0 = 10.0
#: Default factor by which t grows at each outer step (see benchmarks/bench_barrier.py, grid).
MU = 15.0
#: Centering ends when the Newton decrement satisfies ``λ²/2 ≤ NEWTON_TOL``.
NEWTON_TOL = 1e-2
#: Phase I centres tightly: its multipliers are the Farkas certificate.
PHASE1_NEWTON_TOL = 1e-12
#: Armijo fraction α and backtracking factor β of the line search [BV, Alg. 9.2].
ARMIJO, BACKTRACK = 0.01, 0.5
#: Below this decrement the unit Newton step is taken (quadratic phase, [BV, §9.6.4]).
FULL_STEP_DECREMENT = 0.25
#: Fraction of the distance to the boundary a damped step may cover (domain of log).
TO_BOUNDARY = 0.99
#: At most this many Newton steps per centering.
MAX_NEWTON_PER_CENTERING = 100
#: Bytes of X per block when forming X̃ᵀDX̃ of a dense X: the scaled copy stays in cache (at
#: n = 10⁶, d = 20 one product took 33 ms in blocks of 1-2.5 MB, 47 ms in blocks of 10 MB).
GRAM_BLOCK_BYTES = 2**20
#: A linear dual (features of rank r) uses the dense n×n Q up to this n, the Woodbury form of
#: ``tGGᵀ + diag(h)`` beyond (O(n r²) per step, but it loses digits when h spans many decades).
DENSE_DUAL_MAX_N = 2000
KERNEL_APPROXIMATIONS = ("none", "nystrom", "cholesky")
#: Algorithms: log-barrier path following, or the primal-dual predictor-corrector variant.
METHODS = ("barrier", "primal-dual")
#: Primal-dual variant: fraction of the step to the boundary of the positive orthant.
PD_TO_BOUNDARY = 0.995
#: Primal-dual start of the duals: smallest scale applied to the barrier method's starting α.
PD_MIN_START_SCALE = 1e-3
#: Primal-dual variant, primal forms: the certificate is asked when the gap estimate
#: (:func:`_ppd_gap_estimate`) is ≤ this factor times tol, and at least every
#: ``PD_CERTIFY_EVERY`` iterations.
PD_CERTIFY_FACTOR = 10.0
PD_CERTIFY_EVERY = 10


# ---- linear algebra ----------------------------------------------------------------------------
class _Features:
    """The rows ``x̃_i = (x_i, e_i)``: X (dense or CSR, n×d) and k dense extra columns E (n×k).

    Provides ``X̃ z``, ``X̃ᵀ u`` and ``X̃ᵀ D X̃`` without ever building ``[X E]``.
    """

    def __init__(self, X, E: np.ndarray | None = None):
        self.X = X
        self.sparse = sparse.issparse(X)
        self.n, self.d = X.shape
        self.E = np.zeros((self.n, 0)) if E is None else np.ascontiguousarray(E, dtype=float)
        self.k = self.E.shape[1]
        self._xxt = None

    @property
    def dim(self) -> int:
        return self.d + self.k

    def with_column(self, col: np.ndarray) -> _Features:
        """The same rows with one more extra column."""
        return _Features(self.X, np.column_stack([self.E, col]))

    def dot(self, z: np.ndarray) -> np.ndarray:
        """``X̃ z``."""
        out = np.asarray(self.X @ z[: self.d]).ravel()
        if self.k:
            out = out + self.E @ z[self.d :]
        return out

    def tdot(self, u: np.ndarray) -> np.ndarray:
        """``X̃ᵀ u``."""
        top = np.asarray(self.X.T @ u).ravel()
        return np.concatenate([top, self.E.T @ u]) if self.k else top

    def gram(self, D: np.ndarray) -> np.ndarray:
        """``X̃ᵀ diag(D) X̃`` ((d+k)×(d+k)), D ≥ 0 (:meth:`gram_tdot` with ``√D``)."""
        return self.gram_tdot(np.sqrt(D))[0]

    def gram_tdot(self, sq: np.ndarray, V: np.ndarray | None = None):
        """``(X̃ᵀ diag(sq²) X̃, X̃ᵀV)`` (the second None without V, n×c) in one pass over X: BLAS
        ``YᵀY`` with ``Y = sq ⊙ X`` and ``YᵀF``, ``FᵀF`` with ``F = sq ⊙ E``, in row blocks of
        ``GRAM_BLOCK_BYTES``, and ``X̃ᵀV`` on each block while it is in cache."""
        X, d, k = self.X, self.d, self.k
        H = np.zeros((self.dim, self.dim))
        XtV = None if V is None else np.zeros((self.dim, V.shape[1]))
        if self.sparse:
            Y = sparse.diags(sq) @ X
            H[:d, :d] = (Y.T @ Y).toarray()
            if k:
                F = sq[:, None] * self.E
                H[:d, d:] = np.asarray(Y.T @ F).reshape(d, k)
                H[d:, d:] = F.T @ F
            if V is not None:
                XtV[:d] = np.asarray(X.T @ V).reshape(d, -1)
                XtV[d:] = self.E.T @ V
        else:
            rows = max(256, GRAM_BLOCK_BYTES // (8 * max(d, 1)))
            for a in range(0, self.n, rows):
                s = sq[a : a + rows, None]
                Xa = X[a : a + rows]
                Y = Xa * s
                H[:d, :d] += Y.T @ Y
                if k:
                    F = self.E[a : a + rows] * s
                    H[:d, d:] += Y.T @ F
                    H[d:, d:] += F.T @ F
                if V is not None:
                    Va = V[a : a + rows]
                    XtV[:d] += Xa.T @ Va
                    if k:
                        XtV[d:] += self.E[a : a + rows].T @ Va
        H[d:, :d] = H[:d, d:].T
        return H, XtV

    def xxt(self) -> np.ndarray:
        """``XXᵀ`` (n×n), computed once (the Woodbury form when d > n)."""
        if self._xxt is None:
            G = self.X @ self.X.T
            self._xxt = np.asarray(G.toarray() if sparse.issparse(G) else G)
        return self._xxt


def _cholesky(H: np.ndarray):
    """``cho_factor`` of a symmetric positive definite H; on failure a growing ridge
    ``10⁻¹⁴ … 10⁻⁸ · max diag(H)`` is added (round-off in a nearly singular Schur complement)."""
    try:
        return sla.cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    scale = max(float(np.max(np.abs(np.diag(H)))), 1e-300)
    for rel in (1e-14, 1e-12, 1e-10, 1e-8):
        try:
            return sla.cho_factor(H + rel * scale * np.eye(H.shape[0]), lower=True)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("the Newton system is not positive definite")


def _normal_solver(feat: _Features, D: np.ndarray, p: np.ndarray):
    """Factor the normal system of the primal forms ``H = diag(p) + X̃ᵀ D X̃`` (D > 0) once.

    Returns ``solve(a, b, rhs=None) -> (x, q, X̃x)`` with ``H x = a + X̃ᵀb`` (``rhs`` may pass
    that sum when the caller has it) and ``q = b − D ⊙ X̃x``: x is a Newton step of the primal
    variables, ``y ⊙ q`` the multipliers (barrier) or their step (primal-dual) that the slack
    rows give back. In block form ``diag(p) x − X̃ᵀq = a``, ``X̃x + D⁻¹q = D⁻¹b``.

    d ≤ n: dense Cholesky of the (d+k)×(d+k) matrix H, O(n d²), then ``q = b − D ⊙ X̃x``.
    d > n: the n×n system for q, ``M q = p_w D⁻¹b − X a_w − p_w E x_e`` with
    ``M = p_w D⁻¹ + XXᵀ`` (O(n²d + n³)), then ``x_w = (a_w + Xᵀq)/p_w``; the k extra columns
    (bias, phase I's s) by the Schur complement ``S = diag(p_e) + p_w EᵀM⁻¹E``,
    ``S x_e = a_e + Eᵀq₀`` (``q₀`` the solution for ``x_e = 0``): no Woodbury form around the
    singular block ρ = 0 of a free bias. Solving for q, rather than forming
    ``A⁻¹ = (I − XᵀM⁻¹X)/p_w`` on the w-block, avoids the cancellation of that difference when
    D spans many decades late in a solve (the multipliers then kept only a few digits: the
    primal-dual variant stalled at a certified gap of 10⁻⁴ on 50 raw digits, d = 64).
    """
    d = feat.d
    if d <= feat.n:
        H = feat.gram(D)
        H[np.diag_indices_from(H)] += p
        cf = _cholesky(H)

        def solve_small(a, b, rhs=None):
            if rhs is None:
                rhs = a + feat.tdot(b)
            x = sla.cho_solve(cf, rhs, check_finite=False)
            Xx = feat.dot(x)
            return x, b - D * Xx, Xx

        return solve_small
    pw = float(p[0])
    X = feat.X
    cf = _cholesky(feat.xxt() + np.diag(pw / D))  # M = p_w D⁻¹ + XXᵀ (n×n)

    def m_inv(V):
        return sla.cho_solve(cf, V, check_finite=False)

    def x_dot(v):
        out = X @ v
        return out.toarray().ravel() if sparse.issparse(out) else np.asarray(out).ravel()

    if feat.k:
        MiE = m_inv(feat.E)
        cs = _cholesky(np.diag(p[d:]) + pw * (feat.E.T @ MiE))

    def solve_large(a, b, rhs=None):
        q = m_inv(pw * b / D - x_dot(a[:d]))
        x_e = np.zeros(0)
        if feat.k:
            x_e = sla.cho_solve(cs, a[d:] + feat.E.T @ q, check_finite=False)
            q = q - pw * (MiE @ x_e)
        x_w = (a[:d] + np.asarray(X.T @ q).ravel()) / pw
        x = np.concatenate([x_w, x_e])
        return x, q, feat.dot(x)

    return solve_large


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
class _PrimalState:
    """Barrier state of the primal forms (soft margin, hard margin, phase I).

    ``f₀(z) = ½ zᵀ diag(p) z + cᵀz``; the barrier is on the margins ``m = y ⊙ X̃z``.
    """

    feat: _Features
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


def _primal_direction(state: _PrimalState):
    """Newton step of ``ψ_t(z) = t f₀(z) + Σ g_i(m_i)`` and the decrement ``λ²``."""
    t = state.t
    g, r, h = _barrier_terms(state.loss, t, state.C, state.m)
    a = -t * (state.p * state.z + state.c)
    b = state.y / r
    grad = -(a + state.feat.tdot(b))
    solve = _normal_solver(state.feat, h, t * state.p + state.ridge)
    delta, q, Xd = solve(a, b, rhs=-grad)
    # Multipliers linearized along the step, λ⁺ = (1/r − g''·Δm)/t = y ⊙ q/t: the Newton
    # equation says P(z + Δ) = X̃ᵀ(y ⊙ λ⁺) exactly, so Σ y_i λ⁺_i = 0 for a free bias whatever
    # the centering error.
    state.lam = state.y * q / t
    return delta, float(-grad @ delta), g, r, state.y * Xd


def _primal_line_search(state: _PrimalState, delta, decrement2, g, r, dm) -> tuple[float, Any]:
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


def _center_primal(state: _PrimalState, budget: int, newton_tol: float, stop=None) -> int:
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


def _predict_primal(state: _PrimalState) -> None:
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


def _linear_features(problem) -> tuple[_Features, np.ndarray]:
    """Rows ``x̃_i`` and the regularization pattern p (1 for w and w_b, 0 for a free b)."""
    n, d = problem.n_samples, problem.n_features
    if problem.bias == "free":
        return _Features(problem.X, np.ones((n, 1))), np.append(np.ones(d), 0.0)
    if problem.bias == "regularized":
        E = np.full((n, 1), problem.bias_scale)
        return _Features(problem.X, E), np.ones(d + 1)
    return _Features(problem.X), np.ones(d)


def _split_z(problem, z) -> tuple[np.ndarray, float]:
    d = problem.n_features
    if problem.bias == "free":
        return z[:d], float(z[d])
    if problem.bias == "regularized":
        return z[:d], problem.bias_scale * float(z[d])
    return z[:d], 0.0


# ---- primal forms: primal-dual interior point (Mehrotra predictor-corrector) -------------------
@dataclass
class _PrimalPDState:
    """Primal-dual state of the primal forms: ``min ½zᵀPz + Σ C_i ℓ(ξ_i)`` s.t.
    ``s = Az + ξ − 1 ≥ 0``, ``A = diag(y) X̃`` (rows of the active examples).

    ``loss``: ``"hinge"`` (``ℓ(ξ) = ξ``, ``ξ ≥ 0`` with multiplier ν), ``"squared_hinge"``
    (``ℓ(ξ) = ξ²``, ξ free and kept equal to ``λ/(2C)``, its stationarity condition) or
    ``"hard"`` (no ξ). λ is the multiplier of ``s ≥ 0`` (the dual α). s is a variable of its own:
    ``r_p = Az + ξ − 1 − s`` need not vanish (infeasible start), and near the boundary s keeps the
    digits that ``Az + ξ − 1`` loses to cancellation.
    """

    feat: _Features
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
    #: Jitted passes over the rows (d ≤ n: :func:`_ppd_fused_iteration`), else None (NumPy).
    passes: _RowPasses | None = field(default=None, repr=False)
    #: Residuals ``r_z = Pz − Aᵀλ``, ``r_p`` and (hinge) ``r_ξ = C − λ − ν`` at the current point
    #: (the fused iteration keeps ``Aᵀλ = X̃ᵀ(y ⊙ λ)`` in ``a_lam``, updated with the steps, and
    #: recomputes r_p, r_ξ row by row: it does not store them).
    a_lam: np.ndarray = field(default=None, repr=False)
    r_z: np.ndarray = field(default=None, repr=False)
    #: ``(Σ C_i ℓ(max(0, 1 − m_i)), Σ λ_i, Σ λ_i²/(4C_i), min m)`` for :func:`_ppd_gap_estimate`.
    sums: np.ndarray = field(default_factory=lambda: np.zeros(4), repr=False)
    r_p: np.ndarray = field(default=None, repr=False)
    r_xi: np.ndarray | None = field(default=None, repr=False)
    mu: float = math.nan
    step: float = math.nan
    sigma: float = math.nan
    residual_dual: float = math.nan
    residual_primal: float = math.nan
    complementarity: float = math.nan

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
        self.a_lam = self.feat.tdot(self.y * self.lam)
        self.r_z = self.p * self.z - self.a_lam
        self.r_p = self.m - 1.0 - self.s
        xi = self.xi_of_loss
        if xi is not None:
            self.r_p += xi
        dual = float(np.max(np.abs(self.r_z), initial=0.0))
        if self.loss == "hinge":
            self.r_xi = self.C - self.lam - self.nu
            dual = max(dual, float(np.max(np.abs(self.r_xi), initial=0.0)))
        self.residual_dual = dual
        self.residual_primal = float(np.max(np.abs(self.r_p), initial=0.0))
        comp, pairs = _ppd_complementarity(self)
        self.complementarity, self.mu = comp, comp / pairs
        u = np.maximum(1.0 - self.m, 0.0)
        self.sums[:] = (
            float(self.C @ (u if self.loss == "hinge" else u * u)),
            float(self.lam.sum()),
            float(self.lam @ (self.lam / (4.0 * self.C))) if self.loss == "squared_hinge" else 0.0,
            float(np.min(self.m, initial=np.inf)),
        )


def _ppd_complementarity(s: _PrimalPDState) -> tuple[float, int]:
    """``sᵀλ + ξᵀν`` (hinge) and the number of complementarity pairs."""
    total = float(s.s @ s.lam)
    if s.loss == "hinge":
        return total + float(s.xi @ s.nu), 2 * len(s.lam)
    return total, len(s.lam)


def _ppd_start(feat, y, C, loss, p, z, active, equality) -> _PrimalPDState:
    """Interior start of the primal-dual variant on the primal forms.

    Soft margin: ``z = 0``, so ``m = 0``; hinge ``ξ = 2``, ``s = 1`` (``r_p = 0``),
    ``λ = ν = C/2`` (``r_ξ = 0``); squared hinge ``s = 1``, ``λ = C``. (Multipliers capped at 1
    instead did better at C = 10⁴ on breast_cancer, 22 iterations against 30, but worse over 96
    primal problems with C from 10⁻² to 10⁴: 1077 iterations in all against 989.) Hard margin: z
    of phase I (smallest margin 1.1), ``s = m − 1``, ``λ_i = max(1, f₀)/(n s_i)`` (the
    multipliers of the barrier's centre at ``m/t = f₀``).
    """
    m = y * feat.dot(z)
    if loss == "hard":
        sl = m - 1.0
        f0 = 0.5 * float(z @ (p * z))
        state = _PrimalPDState(feat, y, C, loss, p, z, m, sl, max(f0, 1.0) / (len(y) * sl))
    elif loss == "hinge":
        xi = np.maximum(1.0 - m, 0.0) + 1.0
        state = _PrimalPDState(feat, y, C, loss, p, z, m, m + xi - 1.0, 0.5 * C, xi=xi, nu=0.5 * C)
    else:
        sl = np.maximum(m - 1.0, 0.0) + 1.0
        state = _PrimalPDState(feat, y, C, loss, p, z, m, sl, C.copy())
    state.active, state.equality = active, equality
    if feat.d <= feat.n:
        state.passes = _RowPasses(feat)
    state.update_residuals()
    return state


def _ppd_estimate(s: _PrimalPDState) -> float:
    """The primal-dual's own measure of convergence, ``max(sᵀλ + ξᵀν)/max(1, |f₀|),
    ‖r_z‖_∞/c, ‖r_ξ‖_∞/c, ‖r_p‖_∞)`` with ``c = max(1, max C_i)`` (1 for the hard margin): the
    native rule is ``≤ tol``."""
    scale = 1.0 if s.loss == "hard" else max(1.0, float(np.max(s.C, initial=1.0)))
    comp = s.complementarity / max(1.0, abs(s.objective()))
    return max(comp, s.residual_dual / scale, s.residual_primal)


def _ppd_gap_estimate(s: _PrimalPDState) -> float:
    """Relative duality gap ``(P − D)/max(1, |P|)`` estimated from the iterate at O(d) cost (the
    sums come with the step): ``P = ½zᵀPz + Σ C_i ℓ(max(0, 1 − m_i))`` (hard margin:
    ``½zᵀPz / min(1, min m)²``, z scaled to feasibility), ``D = Σλ − ½ (Aᵀλ)ᵀP(Aᵀλ)``
    (``− Σλ²/(4C)`` for the squared hinge), λ taken as it is (not clipped, ``yᵀλ`` not
    projected). It decides when to ask the problem's certificate, never the status: measured
    on the test sets' primal forms and the benchmark's hinge primals (n ≤ 10⁵), at most 1.32
    times the certified gap, and ≤ tol at the first iterate the certificate accepted."""
    loss_sum, lam_sum, lam2_sum, m_min = s.sums
    zPz = float(s.z @ (s.p * s.z))
    if s.loss != "hard":
        primal = 0.5 * zPz + loss_sum
    elif m_min > 0.0:
        primal = 0.5 * zPz / min(1.0, m_min) ** 2
    else:
        return math.inf
    dual = lam_sum - 0.5 * float(s.a_lam @ (s.p * s.a_lam)) - lam2_sum
    return (primal - dual) / max(1.0, abs(primal))


def _ppd_converged(s: _PrimalPDState, tol: float) -> bool:
    """Native rule: complementarity ``sᵀλ + ξᵀν ≤ tol · max(1, |f₀|)``, ``‖r_p‖_∞ ≤ tol`` (margin
    units) and ``‖r_z‖_∞, ‖r_ξ‖_∞ ≤ tol · max(1, max C_i)`` (1 for the hard margin). The fused
    iteration's ``r_z`` is updated with the steps: it is recomputed before the rule is granted."""
    if _ppd_estimate(s) > tol:
        return False
    if s.passes is not None:
        s.update_residuals()
        return _ppd_estimate(s) <= tol
    return True


def _ppd_iteration(s: _PrimalPDState, fraction: float) -> None:
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
    solve = _normal_solver(feat, D, s.p)

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
        st = min(_pd_max_step(s.s, ds), _pd_max_step(s.lam, dlam))
        if hinge:
            st = min(st, _pd_max_step(s.xi, dxi), _pd_max_step(s.nu, dnu))
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
    """The rows of X̃ for the jitted passes of :func:`_ppd_fused_iteration` (dense X as a
    C-contiguous float64 array, CSR as ``(indptr, indices, data)`` with one index dtype; E
    apart), and their O(n) work arrays."""

    def __init__(self, feat: _Features):
        X = feat.X
        if feat.sparse:
            indptr, indices = X.indptr, X.indices
            if indptr.dtype != indices.dtype or indptr.dtype not in (np.int32, np.int64):
                indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
            data = np.ascontiguousarray(X.data, dtype=np.float64)
            self.rows = (np.ascontiguousarray(indptr), np.ascontiguousarray(indices), data)
        else:
            self.rows = (np.ascontiguousarray(X, dtype=np.float64),)
        self.sparse = feat.sparse
        self.E = feat.E
        n, dim = feat.n, feat.dim
        self.sqD, self.V = np.empty(n), np.empty((n, 2))
        self.dm_aff, self.dm = np.empty(n), np.empty(n)  # y ⊙ X̃Δz of the two directions
        self.acc_aff, self.acc = np.empty(dim), np.empty(dim)
        self.buf = np.empty((5, jit.BLOCK))  # per-row results of a block

    def affine(self, code, s: _PrimalPDState, xi, nu, dz) -> tuple[float, float, float]:
        run = jit.ppd_affine_csr if self.sparse else jit.ppd_affine_dense
        args = (s.y, s.C, s.m, s.s, s.lam, xi, nu, dz, self.dm_aff, self.acc_aff, self.buf)
        return run(code, *self.rows, self.E, *args)

    def corrector(self, code, s: _PrimalPDState, xi, nu, tau, dz) -> float:
        run = jit.ppd_corrector_csr if self.sparse else jit.ppd_corrector_dense
        state = (s.y, s.C, s.m, s.s, s.lam, xi, nu)
        return run(
            code, *self.rows, self.E, *state, self.dm_aff, tau, dz, self.dm, self.acc, self.buf
        )


_WARM = False  # the jitted passes are compiled (BarrierSolver.warm_up)
_LOSS_CODES = {"hinge": jit.HINGE, "squared_hinge": jit.SQUARED_HINGE, "hard": jit.HARD}
_NO_ROWS = np.empty(0)  # ξ, ν of the losses without them


def _ppd_fused_iteration(s: _PrimalPDState, fraction: float) -> None:
    """:func:`_ppd_iteration` (d ≤ n) with its O(n) work in the jitted passes of
    :mod:`solvers._jit.barrier`: X is read three times per iteration (``X̃ᵀDX̃`` with the
    right-hand sides, then ``X̃Δz`` of each direction) instead of six.

    By linearity in ``(r_s, r_c)`` the corrector's right-hand side is the affine one plus
    ``τ X̃ᵀ(y ⊙ D(1/λ − 1/ν)) − X̃ᵀ(y ⊙ D(Δs_aΔλ_a/λ − Δξ_aΔν_a/ν))``: the first product comes
    with the Gram matrix, the second with ``X̃Δz_a``. The affine complementarity is the quadratic
    ``sᵀλ + ξᵀν + α lin + α² quad`` of the step α, and ``Aᵀλ`` is updated with
    ``X̃ᵀ(y ⊙ Δλ)`` from the corrector's pass (``r_z = Pz − Aᵀλ``)."""
    rp, code = s.passes, _LOSS_CODES[s.loss]
    xi, nu = (s.xi, s.nu) if s.loss == "hinge" else (_NO_ROWS, _NO_ROWS)
    jit.ppd_prepare(code, s.y, s.C, s.m, s.s, s.lam, xi, nu, rp.sqD, rp.V)
    H, B = s.feat.gram_tdot(rp.sqD, rp.V)
    H[np.diag_indices_from(H)] += s.p
    cf = _cholesky(H)
    # Predictor (affine scaling, σ = 0).
    rhs = B[:, 0] - s.r_z
    worst, lin, quad = rp.affine(code, s, xi, nu, sla.cho_solve(cf, rhs, check_finite=False))
    st = 1.0 if worst <= 1.0 else 1.0 / worst
    comp_aff = max(s.complementarity + st * lin + st * st * quad, 0.0)
    sigma = min(1.0, (comp_aff / max(s.complementarity, 1e-300)) ** 3)  # Mehrotra's heuristic
    # Corrector: centring at σμ and the second-order terms of the affine step.
    tau = sigma * s.mu
    dz = sla.cho_solve(cf, rhs + tau * B[:, 1] - rp.acc_aff, check_finite=False)
    worst = rp.corrector(code, s, xi, nu, tau, dz)
    st = min(1.0, fraction * (1.0 if worst <= 1.0 else 1.0 / worst))
    comp, rp_max, rxi_max = jit.ppd_update(
        code, s.C, s.m, s.s, s.lam, xi, nu, rp.dm_aff, rp.dm, tau, st, rp.buf, s.sums
    )
    s.z = s.z + st * dz
    s.a_lam = s.a_lam + st * rp.acc
    s.r_z = s.p * s.z - s.a_lam
    s.residual_dual = max(float(np.max(np.abs(s.r_z), initial=0.0)), rxi_max)
    s.residual_primal = rp_max
    s.complementarity, s.mu = comp, comp / (2 * len(s.lam) if s.loss == "hinge" else len(s.lam))
    s.step, s.sigma = st, sigma


def _feasible_multipliers(lam: np.ndarray, y: np.ndarray, upper: np.ndarray, equality: bool):
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
    total = float(a.sum())
    if not equality or not 1e-200 < total < 1e200:
        return a
    q = 2.0 ** (math.ceil(math.log2(total)) - 52)
    a_grid = np.floor(a / q) * q
    excess = float(y @ a_grid)  # exact
    if excess != 0.0:
        cls = np.flatnonzero(y == math.copysign(1.0, excess))
        j = cls[np.argmax(a_grid[cls])]
        if a_grid[j] < abs(excess):
            return a
        a_grid[j] -= abs(excess)  # exact: both are multiples of q below 2⁵³q
    return a_grid


# ---- dual forms --------------------------------------------------------------------------------
@dataclass
class _DualState:
    """Barrier state of the box QP ``min ½αᵀQα + ½Σδα² − Σα``, ``0 < α < u`` (+ ``yᵀα = 0``).

    Q is given dense (``Q``) or as ``Q = GGᵀ`` with ``G = diag(y) F`` (``feat``).
    """

    y: np.ndarray
    u: np.ndarray
    delta: np.ndarray
    equality: bool
    Q: np.ndarray | None
    feat: _Features | None
    alpha: np.ndarray
    t: float
    mu: float
    n_constraints: int
    active: np.ndarray
    n_all: int
    t_center: float = math.nan
    Qa: np.ndarray = field(default=None, repr=False)
    #: ``u − α`` kept as its own array (updated by the same steps): near the upper bound
    #: ``C − α`` is far below the resolution of α itself (C · 2⁻⁵² = 2e-14 for C = 100).
    slack: np.ndarray = field(default=None, repr=False)
    previous_center: np.ndarray | None = field(default=None, repr=False)
    newton_steps: int = 0
    outer_steps: int = 0
    stalled: bool = False

    def q_times(self, v: np.ndarray) -> np.ndarray:
        if self.Q is not None:
            return self.Q @ v
        return self.y * self.feat.dot(self.feat.tdot(self.y * v))

    def objective(self) -> float:
        a = self.alpha
        return float(0.5 * a @ self.Qa + 0.5 * self.delta @ (a * a) - a.sum())


def _dual_hessian_solver(state: _DualState, h: np.ndarray):
    """A function applying ``H⁻¹``, ``H = tQ + diag(h)``: dense Cholesky, or Woodbury
    ``H⁻¹ = h⁻¹ − h⁻¹G(I/t + Gᵀh⁻¹G)⁻¹Gᵀh⁻¹`` (O(n r²)) for ``Q = GGᵀ``."""
    t = state.t
    if state.Q is not None:
        H = t * state.Q
        H[np.diag_indices_from(H)] += h
        cf = _cholesky(H)
        return lambda v: sla.cho_solve(cf, v, check_finite=False)
    feat, y = state.feat, state.y
    hinv = 1.0 / h
    M = feat.gram(hinv)
    M[np.diag_indices_from(M)] += 1.0 / t
    cf = _cholesky(M)

    def woodbury(v):
        w = hinv * v
        corr = feat.dot(sla.cho_solve(cf, feat.tdot(y * w), check_finite=False))
        return w - hinv * (y * corr)

    def solve_one(v):
        # Woodbury loses digits when h spans many orders of magnitude (late outer steps): two
        # steps of iterative refinement on the residual v − Hx, with Hx = t·y⊙F(Fᵀ(y⊙x)) + h⊙x.
        x = woodbury(v)
        for _ in range(2):
            x = x + woodbury(v - (t * (y * feat.dot(feat.tdot(y * x))) + h * x))
        return x

    return lambda V: np.column_stack([solve_one(v) for v in V.T]) if V.ndim == 2 else solve_one(V)


def _dual_direction(state: _DualState):
    """Newton step of ``ψ_t(α)`` under ``yᵀΔ = 0`` (KKT elimination [BV, §10.4.2])."""
    t, a = state.t, state.alpha
    inv_up = 1.0 / state.slack  # 0 where u = inf
    grad = t * (state.Qa + state.delta * a - 1.0) - 1.0 / a + inv_up
    h = t * state.delta + 1.0 / (a * a) + inv_up * inv_up
    solve = _dual_hessian_solver(state, h)
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


def _dual_line_search(state: _DualState, delta, decrement2, Qd) -> float:
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


def _dual_move(state: _DualState, step: np.ndarray, Q_step: np.ndarray) -> None:
    """``α += step`` and ``u − α −= step`` (both kept positive), ``Qα += Q step``."""
    state.alpha = np.maximum(state.alpha + step, 1e-300)
    state.slack = np.maximum(state.slack - step, 1e-300)
    state.Qa = state.Qa + Q_step


def _dual_change(state: _DualState, d, Qd, s: float) -> float:
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


def _predict_dual(state: _DualState) -> None:
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


def _center_dual(state: _DualState, budget: int, newton_tol: float) -> int:
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


def _dual_start(y: np.ndarray, C: np.ndarray, equality: bool) -> np.ndarray:
    """A strictly feasible α: ``α_i = κ C_i / S_{y_i}`` with ``S_± = Σ_{y_i=±1} C_i`` and
    ``κ = ½ min(S₊, S₋)``, so that ``yᵀα = 0`` and ``0 < α_i ≤ C_i/2``."""
    if not equality:
        return 0.5 * C
    S_pos, S_neg = C[y > 0].sum(), C[y < 0].sum()
    kappa = 0.5 * min(S_pos, S_neg)
    return kappa * C / np.where(y > 0, S_pos, S_neg)


# ---- dual forms: primal-dual interior point (Mehrotra predictor-corrector) ---------------------
@dataclass
class _PDState:
    """Primal-dual state of the box QP of :class:`_DualState` (whose ``t`` stays 1).

    Lagrangian ``½αᵀQ̃α − Σα + b yᵀα − z_lᵀα + z_uᵀ(α − u)``: ``z_l, z_u ≥ 0`` are the
    multipliers of ``α ≥ 0`` and ``α ≤ u`` (``z_u = 0`` where ``u = ∞``), b that of ``yᵀα = 0``
    (the model's bias; 0 without the equality). The upper slack ``u − α`` is ``qp.slack``.
    """

    qp: _DualState
    z_l: np.ndarray
    z_u: np.ndarray
    b: float = 0.0
    mu: float = math.nan
    iterations: int = 0
    step: float = math.nan
    sigma: float = math.nan
    residual_dual: float = math.nan
    residual_primal: float = math.nan


def _pd_complementarity(s: _PDState) -> tuple[float, int]:
    """``αᵀz_l + (u − α)ᵀz_u`` and the number m of finite bounds."""
    qp = s.qp
    fin = np.isfinite(qp.u)
    total = float(qp.alpha @ s.z_l + qp.slack[fin] @ s.z_u[fin])
    return total, len(qp.alpha) + int(fin.sum())


def _pd_start(qp: _DualState) -> _PDState:
    """Interior start. α: the start of the barrier method (``yᵀα = 0``, ``0 < α ≤ u/2``) scaled
    by the minimizer ``κ = Σα/αᵀQ̃α`` of the objective along the ray, clipped to
    ``[PD_MIN_START_SCALE, 1]`` (so α stays in the box and ``yᵀα = 0`` holds). Multipliers: they
    cancel the gradient ``g = Q̃α − 1`` (``z_l − z_u = g``, so ``r_d = 0`` at the start), each at
    least ``max(1, mean|g|)`` so that no complementarity product starts near 0. Measured on the
    84 dual QPs of the test sets (free and no bias), 851 iterations in all against 1008 for the
    unscaled α with a floor ``max|g|``; 19 against 27 on a linear dual with n = 20 000."""
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
    return _PDState(qp=qp, z_l=z_l, z_u=z_u)


def _pd_residuals(s: _PDState) -> tuple[np.ndarray, float]:
    """``r_d = Q̃α − 1 + b y − z_l + z_u`` and ``r_p = yᵀα`` (0 without the equality); their
    sizes are stored in the state."""
    qp = s.qp
    r_d = qp.Qa + qp.delta * qp.alpha - 1.0 - s.z_l + s.z_u
    if qp.equality:
        r_d = r_d + s.b * qp.y
    r_p = float(qp.y @ qp.alpha) if qp.equality else 0.0
    s.residual_dual, s.residual_primal = float(np.max(np.abs(r_d))), abs(r_p)
    return r_d, r_p


def _pd_converged(s: _PDState, tol: float) -> bool:
    """Native rule: complementarity ``≤ tol · max(1, |f₀|)`` and residuals
    ``≤ tol · max(1, max_i u_i)`` (finite u_i)."""
    _pd_residuals(s)
    comp, _ = _pd_complementarity(s)
    u = s.qp.u[np.isfinite(s.qp.u)]
    scale = max(1.0, float(np.max(u, initial=1.0)))
    small = max(s.residual_dual, s.residual_primal) <= tol * scale
    return small and comp <= tol * max(1.0, abs(s.qp.objective()))


def _pd_max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """Largest s ≤ 1 with ``x + s dx ≥ 0`` (x > 0): ``1/max(1, max_i(−dx_i/x_i))``, no masks."""
    worst = float(np.max(-dx / x, initial=0.0))
    return 1.0 if worst <= 1.0 else 1.0 / worst


def _pd_iteration(s: _PDState, fraction: float) -> None:
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
    solve = _dual_hessian_solver(qp, h)  # qp.t = 1: H = Q̃ + diag(h)
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
            _pd_max_step(a, da),
            _pd_max_step(sl[fin], -da[fin]),
            _pd_max_step(s.z_l, dz_l),
            _pd_max_step(s.z_u[fin], dz_u[fin]),
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


# ---- kernel factors ----------------------------------------------------------------------------
def _kernel_columns(problem: KernelDual, idx: np.ndarray) -> np.ndarray:
    if problem.kernel == "precomputed":
        return problem.X[:, idx]
    return kernel_matrix(problem.X, problem.X[idx], **problem.kernel_params)


def _kernel_diagonal(problem: KernelDual) -> np.ndarray:
    X, kp = problem.X, problem.kernel_params
    if problem.kernel == "precomputed":
        return np.diag(X).copy()
    if problem.kernel == "rbf":
        return np.ones(problem.n_samples)
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sparse.issparse(X) else (X * X).sum(1)
    if problem.kernel == "linear":
        return sq
    if problem.kernel == "poly":
        return (kp["gamma"] * sq + kp["coef0"]) ** kp["degree"]
    return np.tanh(kp["gamma"] * sq + kp["coef0"])


def nystrom_factor(problem: KernelDual, rank: int, seed: int = 0) -> np.ndarray:
    """Nyström factor F (n×r') with ``K ≈ FFᵀ = K_{nm} K_{mm}⁺ K_{mn}`` on r landmarks drawn
    uniformly without replacement [WS]; eigenvalues of ``K_mm`` below ``10⁻¹² · max`` are
    dropped (r' ≤ r). O(n r d + n r²)."""
    n = problem.n_samples
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(n, size=min(rank, n), replace=False))
    Knm = _kernel_columns(problem, idx)
    ev, V = np.linalg.eigh(Knm[idx])
    keep = ev > 1e-12 * max(float(ev[-1]), 1e-300)
    return Knm @ (V[:, keep] / np.sqrt(ev[keep]))


def pivoted_cholesky_factor(problem: KernelDual, rank: int, rtol: float = 1e-12) -> np.ndarray:
    """Incomplete Cholesky with greedy diagonal pivoting [WS]: F (n×r') with ``K ≈ FFᵀ``,
    stopped at r columns or when the trace of the residual ``K − FFᵀ`` is below
    ``rtol · trace(K)``. Needs r kernel columns; O(n r² + n r d)."""
    n = problem.n_samples
    r = min(rank, n)
    res = _kernel_diagonal(problem).astype(float)
    total = float(res.sum())
    F = np.zeros((n, r))
    for j in range(r):
        i = int(np.argmax(res))
        if res[i] <= 0 or float(res.sum()) <= rtol * total:
            return F[:, :j].copy()
        col = _kernel_columns(problem, np.array([i]))[:, 0]
        col = col - F[:, :j] @ F[i, :j]
        F[:, j] = col / math.sqrt(res[i])
        res = np.maximum(res - F[:, j] ** 2, 0.0)
        res[i] = 0.0
    return F


def _psd_kernel_only(problem: KernelDual) -> str | None:
    if not problem.convex:
        return (
            f"the {problem.kernel} kernel matrix is indefinite (smallest eigenvalue "
            f"{problem.min_eigenvalue:.3g}): the barrier method needs a convex QP"
        )
    return None


# ---- the solver --------------------------------------------------------------------------------
@register
class BarrierSolver(IterativeSolver):
    """Interior-point methods: log-barrier path following with Newton centering [BV, Alg. 11.1]
    and its primal-dual (Mehrotra predictor-corrector) variant [BV, §11.7; Wright97].

    Accepts the soft-margin primal (hinge, squared hinge; any bias; dense or CSR X), the
    soft-margin dual, the kernel dual (PSD kernels; exact dense Gram or a low-rank factor) and
    the hard margin (with a phase I; status ``infeasible`` and a Farkas vector on data that no
    hyperplane separates). Every form is solved by default with the primal-dual variant,
    ``method="primal-dual"``; ``method="barrier"`` follows the log-barrier path.

    Parameters
    ----------
    tol : float, default=1e-8
        Target of the certified relative gap ``(P − D)/max(1, |P|)`` checked after every outer
        step of the barrier path and every primal-dual iteration (with ``stop_rule="native"``:
        of ``m/t``, or of the complementarity and residuals, see the module notes).
    t0 : float, default=10.0
        Barrier path only. Initial barrier parameter as a multiple of
        ``m / max(1, f₀(x₀) − p̂)`` (m inequalities, x₀ the starting point, p̂ ≤ p* a lower
        bound: 0 for the primal forms, ``−Σ C_i`` for the duals), so that the first central path
        gap ``m/t`` is of the order of the initial suboptimality [BV, §11.3.1].
    mu : float, default=15.0
        Barrier path only. Growth factor of t per outer step (> 1).
    newton_tol : float, default=1e-2
        Barrier path only. Centering stops when ``λ²/2 ≤ newton_tol`` (λ the Newton decrement).
    kernel_approximation : {"none", "nystrom", "cholesky"}, default="none"
        Kernel dual only: ``"none"`` uses the dense Gram matrix (n×n Cholesky per Newton step);
        the others factor ``K ≈ FFᵀ`` (rank ≤ ``rank``) and solve the linear SVM on F, O(n r²)
        per Newton step; the certified gap then refers to the approximate kernel.
    rank : int, default=200
        Rank of the kernel factor.
    seed : int, default=0
        Landmarks of the Nyström factor.
    method : {"primal-dual", "barrier"}, default="primal-dual"
        Mehrotra's predictor-corrector primal-dual method [BV, §11.7] or log-barrier path
        following, on every form (phase I of the hard margin always follows the barrier path:
        its multipliers are the Farkas certificate). Measured to a certified gap of 1e-8
        (``tests/solvers/test_barrier.py``, ``benchmarks/bench_barrier.py``): on the dual QPs of
        the test sets 3-16 iterations (the barrier 48-93 Newton steps), 4-6 times less CPU time
        than the barrier and 2.7-4 times less than Clarabel on RBF duals with n = 500 … 2000;
        on the primal forms of the test sets 7-13 iterations (the barrier 13-58), 15-16 on the
        full breast_cancer hinge primal (the barrier 65-73), 11-12 on a d > n hard margin (50
        raw digits; the barrier 55-70), and on the hinge primal with n = 20 000, d = 50
        19 iterations in 0.09 s against 52 Newton steps in 0.24 s (Clarabel's own solve: 5.3 s).
    max_iter : int, default=500
        Newton steps (phase I's counted apart, in ``info``). A primal-dual iteration (one
        factorization, used for the predictor and the corrector) counts as one Newton step.
    check_every : int or None, default=None
        Chunks between two certificates (``stop_rule="gap"``). None: after every outer step of
        the barrier path and every primal-dual iteration on the duals; on the primal forms the
        primal-dual variant asks when its gap estimate is ≤ ``PD_CERTIFY_FACTOR · tol``, and at
        least every ``PD_CERTIFY_EVERY`` iterations. The status always comes from the
        certificate.
    stop_rule, trace, time_limit
        See :class:`~solvers.base.IterativeSolver`.
    """

    name = "barrier"
    iteration_unit = "Newton steps"
    default_max_iter = 500
    supported: ClassVar = {
        SoftMarginPrimal: {},
        SoftMarginDual: {},
        KernelDual: {"kernel": _psd_kernel_only},
        HardMarginPrimal: {},
    }

    def __init__(
        self,
        *,
        tol: float = 1e-8,
        t0: float = T0,
        mu: float = MU,
        newton_tol: float = NEWTON_TOL,
        kernel_approximation: str = "none",
        rank: int = 200,
        seed: int = 0,
        method: str = "primal-dual",
        check_every: int | None = None,
        **common,
    ):
        # None: every chunk, but for the primal-dual variant on the primal forms (see _step).
        self._auto_check = check_every is None
        every = PD_CERTIFY_EVERY if check_every is None else check_every
        super().__init__(tol=tol, check_every=every, **common)
        self.t0 = check_real("t0", t0, low=0.0)
        self.mu = check_real("mu", mu, low=1.0)
        if self.mu <= 1.0:
            raise ValueError(f"mu must be > 1, got {mu}")
        self.newton_tol = check_real("newton_tol", newton_tol, low=0.0)
        self.kernel_approximation = check_option(
            "kernel_approximation", kernel_approximation, KERNEL_APPROXIMATIONS
        )
        self.rank = check_int("rank", rank, low=1)
        self.seed = check_int("seed", seed, low=0)
        self.method = check_option("method", method, METHODS)

    def check_accepts(self, problem) -> None:
        super().check_accepts(problem)
        if (
            isinstance(problem, KernelDual)
            and self.kernel_approximation == "none"
            and not problem.gram_fits_in_memory
        ):
            raise TypeError(
                f"solver 'barrier' cannot solve {problem.describe()}: the dense Gram matrix "
                "exceeds the memory limit; use kernel_approximation='nystrom' or 'cholesky'"
            )

    # ---- preparation (timed): low-rank factors, phase I ---------------------------------------
    def _prepare(self, problem, warm_start) -> Prepared:
        if isinstance(problem, HardMarginPrimal):
            return self._phase_one(problem)
        if isinstance(problem, KernelDual) and self.kernel_approximation != "none":
            return self._low_rank_surrogate(problem)
        return Prepared(problem)

    def _low_rank_surrogate(self, problem: KernelDual) -> Prepared:
        """Factor ``K ≈ FFᵀ``, then solve the linear SVM on F: the same dual with the
        approximate kernel, certified by that problem."""
        tic = time.perf_counter()
        if self.kernel_approximation == "nystrom":
            F = nystrom_factor(problem, self.rank, self.seed)
        else:
            F = pivoted_cholesky_factor(problem, self.rank)
        surrogate = SoftMarginDual(
            F,
            problem.y,
            C=problem.C,
            loss=problem.loss,
            bias=problem.bias,
            bias_scale=problem.bias_scale,
            sample_weight=problem.sample_weight,
        )
        note = (
            f"gap certified for the rank-{F.shape[1]} {self.kernel_approximation} approximation "
            f"K ≈ FFᵀ of the {problem.kernel} kernel (as soft_margin_dual on F), not for the "
            "exact kernel"
        )
        info = dict(
            kernel_approximation=self.kernel_approximation,
            factor_rank=F.shape[1],
            factor_time=time.perf_counter() - tic,
            approximates=problem.key,
            factor=F,
        )
        return Prepared(surrogate, info=info, message=note)

    def _phase_one(self, problem: HardMarginPrimal) -> Prepared:
        """Phase I: either ``infeasible`` with its Farkas vector, or a strictly feasible start
        for phase II."""
        tic = time.perf_counter()
        feat, _ = _linear_features(problem)
        n, dim = problem.n_samples, feat.dim
        phase1 = _PrimalState(
            feat=feat.with_column(problem.y),  # m_i + s = y_i x̃_i·(z, s)·(.., y_i)
            y=problem.y,
            C=np.ones(n),
            loss="hard",
            p=np.zeros(dim + 1),
            c=np.append(np.zeros(dim), 1.0),
            z=np.append(np.zeros(dim), 2.0),
            t=float(n),
            mu=self.mu,
            n_constraints=n,
        )
        phase1.m = np.full(n, 2.0)
        farkas, steps = None, 0
        while steps < self.max_iter:
            # A tiny ridge keeps the system definite where X̃ᵀDX̃ is singular (p = 0 here).
            row_scale = float(np.mean(1.0 / (phase1.m - 1.0) ** 2))
            phase1.ridge = (1e-10 if feat.d <= n else 1e-6) * row_scale
            steps += _center_primal(
                phase1, self.max_iter - steps, PHASE1_NEWTON_TOL, stop=lambda s: s.z[-1] < 0
            )
            if phase1.z[-1] < 0:
                break
            # λ⁺ of the last Newton step: Σλ⁺_i y_i x̃_i = ridge·Δz/t ≈ 0 and Σλ⁺_i ≈ 1.
            lam = np.maximum(phase1.lam, 0.0)
            lam /= lam.sum()
            if problem.is_infeasibility_certificate(lam):
                farkas = lam
                break
            if phase1.stalled:
                break
            phase1.t *= self.mu
        info1 = {"phase1_newton_steps": steps, "phase1_time": time.perf_counter() - tic}
        if farkas is not None or phase1.z[-1] >= 0:
            status = Status.INFEASIBLE if farkas is not None else Status.MAX_ITER
            if farkas is None and phase1.stalled:
                status = Status.NUMERICAL_ERROR
            final = Outcome(
                status=status,
                variables={} if farkas is not None else {"w": phase1.z[: feat.d]},
                iterations=steps,
                farkas=farkas,
                info=info1,
            )
            return Prepared(problem, iterations=steps, info=info1, final=final)
        # Phase I stops on an unbounded ray (s → −∞): the margins are homogeneous in z, so
        # z / min_i(m_i) · (1 + 1/10) is strictly feasible with min margin 1.1 and a small norm.
        z = phase1.z[:dim]
        z = z * (1.1 / float(np.min(problem.y * feat.dot(z))))
        # phase II's steps are counted on their own, as before (info holds phase I's)
        return Prepared(problem, warm_start=z, info=info1)

    # ---- IterativeSolver hooks -------------------------------------------------------------------
    def warm_up(self) -> float:
        """Compile the jitted passes of the primal-dual variant (every loss; dense rows, CSR
        with int32 and int64 indices) on a 4×2 problem, once per process; untimed."""
        global _WARM
        if _WARM:
            return 0.0
        start = time.perf_counter()
        X = np.array([[2.0, 0.0], [-2.0, 0.0], [2.0, 1.0], [-2.0, -1.0]])
        y = np.array([1.0, -1.0, 1.0, -1.0])
        csr = sparse.csr_matrix(X)
        csr64 = sparse.csr_matrix(
            (csr.data, csr.indices.astype(np.int64), csr.indptr.astype(np.int64)), shape=X.shape
        )
        p = np.array([1.0, 1.0, 0.0])
        for rows in (X, csr, csr64):
            feat = _Features(rows, np.ones((4, 1)))
            for loss in _LOSS_CODES:
                z = np.array([1.0 if loss == "hard" else 0.0, 0.0, 0.0])  # hard: margins 2
                state = _ppd_start(feat, y, np.ones(4), loss, p, z, None, True)
                _ppd_fused_iteration(state, PD_TO_BOUNDARY)
        _WARM = True
        return time.perf_counter() - start

    def _init_state(self, problem, warm_start):
        if isinstance(problem, (SoftMarginPrimal, HardMarginPrimal)) and not isinstance(
            problem, SoftMarginDual
        ):
            return self._init_primal(problem, warm_start)
        state = self._init_dual(problem)
        if self.method == "primal-dual":
            state.t = 1.0  # H = Q̃ + diag(h) in _dual_hessian_solver
            return _pd_start(state)
        return state

    def _init_primal(self, problem, warm_start):
        feat, p = _linear_features(problem)
        hard = isinstance(problem, HardMarginPrimal)
        C = np.ones(problem.n_samples) if hard else problem.upper_bounds
        y = problem.y
        active = C > 0
        if not np.all(active):  # C_i = 0: the example does not enter the problem
            X = problem.X[active]
            feat = _Features(X, feat.E[active] if feat.k else None)
            C, y = C[active], y[active]
        # The hard margin starts from phase I's strictly feasible point, the soft margin from 0.
        z = np.asarray(warm_start, dtype=float).copy() if hard else np.zeros(feat.dim)
        loss = "hard" if hard else problem.loss
        if self.method == "primal-dual":
            return _ppd_start(feat, y, C, loss, p, z, active, problem.bias == "free")
        if hard:
            n_cons, f0 = len(y), 0.5 * float(z @ (p * z))
        else:
            n_cons = (2 if loss == "hinge" else 1) * len(y)
            f0 = float(C.sum())  # the loss at z = 0 (ξ = 1)
        state = _PrimalState(
            feat=feat,
            y=y,
            C=C,
            loss=loss,
            p=p,
            c=np.zeros(feat.dim),
            z=z,
            t=self.t0 * n_cons / max(1.0, abs(f0)),
            mu=self.mu,
            n_constraints=n_cons,
        )
        state.m = y * feat.dot(z)
        state.active = active
        return state

    def _init_dual(self, problem):
        C_all = problem.upper_bounds
        active = C_all > 0
        y = problem.y[active]
        C = C_all[active]
        hinge = problem.loss == "hinge"
        equality = problem.bias == "free"
        n = len(y)
        Q, feat = None, None
        if isinstance(problem, SoftMarginDual):
            fe, _ = _linear_features(problem)
            X = problem.X[active] if not np.all(active) else problem.X
            E = fe.E[active] if problem.bias == "regularized" else None
            feat = _Features(X, E)
            if n <= DENSE_DUAL_MAX_N or feat.dim >= n:  # small or not low rank: dense Q
                G = feat.X @ feat.X.T
                Q = np.asarray(G.toarray() if sparse.issparse(G) else G)
                if feat.k:
                    Q += feat.E @ feat.E.T
                Q *= np.outer(y, y)
                feat = None
        else:
            K = problem.gram if np.all(active) else problem.gram[np.ix_(active, active)]
            Q = K + problem.bias_scale**2 if problem.bias == "regularized" else K.copy()
            Q *= np.outer(y, y)
        delta = np.zeros(n) if hinge else 1.0 / (2.0 * C)
        u = C.copy() if hinge else np.full(n, np.inf)
        alpha = _dual_start(y, C, equality)
        n_cons = (2 if hinge else 1) * n
        state = _DualState(
            y=y,
            u=u,
            delta=delta,
            equality=equality,
            Q=Q,
            feat=feat,
            alpha=alpha,
            t=1.0,
            mu=self.mu,
            n_constraints=n_cons,
            active=active,
            n_all=problem.n_samples,
        )
        state.Qa = state.q_times(alpha)
        state.slack = u - alpha
        # [BV §11.3.1]: m/t₀ of the order of f₀(α₀) − p*, and p* ≥ −Σ C_i (½αᵀQα ≥ 0, and
        # α²/(4C) − α ≥ −C for the squared hinge), so f₀(α₀) + Σ C_i bounds that difference.
        state.t = self.t0 * n_cons / max(1.0, state.objective() + float(C.sum()))
        return state

    def _step(self, problem, state) -> StepOutcome:
        """One outer step: centre at t (Newton), then ``t ← μ t``; or one predictor-corrector
        iteration of the primal-dual variant. The flag is the native rule with
        ``stop_rule="native"``; with ``"gap"`` it asks for the certificate (every chunk by default,
        but the primal-dual variant on the primal forms asks only when its own estimate is within
        ``PD_CERTIFY_FACTOR`` of tol: the certificate costs more than its iteration at large n)."""
        if isinstance(state, _PrimalPDState):
            if state.passes is not None:
                _ppd_fused_iteration(state, PD_TO_BOUNDARY)
            else:
                _ppd_iteration(state, PD_TO_BOUNDARY)
            if self.stop_rule == "native":
                return StepOutcome(1, converged=_ppd_converged(state, self.tol))
            return StepOutcome(
                1, converged=_ppd_gap_estimate(state) <= PD_CERTIFY_FACTOR * self.tol
            )
        every_chunk = self.stop_rule == "gap" and self._auto_check
        if isinstance(state, _PDState):
            _pd_iteration(state, PD_TO_BOUNDARY)
            native = _pd_converged(state, self.tol)  # also the residuals of the info
            return StepOutcome(1, converged=every_chunk or native)
        budget = max(1, min(MAX_NEWTON_PER_CENTERING, self.max_iter - state.newton_steps))
        if isinstance(state, _PrimalState):
            center = state.z.copy()
            _predict_primal(state)
            steps = _center_primal(state, budget, self.newton_tol)
            state.previous_center = center if state.outer_steps > 0 else None
        else:
            center = state.alpha.copy()
            state.Qa = state.q_times(state.alpha)  # refreshed once per outer step (no drift)
            _predict_dual(state)
            steps = _center_dual(state, budget, self.newton_tol)
            state.previous_center = center if state.outer_steps > 0 else None
        state.t_center = state.t
        state.t *= state.mu
        state.outer_steps += 1
        bound = state.n_constraints / state.t_center
        native = bound <= self.tol * max(1.0, abs(state.objective()))
        return StepOutcome(steps, converged=every_chunk or native)

    def _variables(self, problem, state) -> dict[str, Any]:
        if isinstance(state, _PrimalPDState):
            w, b = _split_z(problem, state.z)
            upper = state.C if state.loss == "hinge" else np.inf
            lam = np.zeros(len(state.active))
            lam[state.active] = _feasible_multipliers(state.lam, state.y, upper, state.equality)
            return {"w": w, "b": b, "alpha": lam}
        if isinstance(state, _PrimalState):
            w, b = _split_z(problem, state.z)
            lam = np.zeros(len(state.active))
            lam[state.active] = state.lam  # multipliers of m_i + ξ_i ≥ 1 (λ⁺ of the last step)
            return {"w": w, "b": b, "alpha": lam}
        if isinstance(state, _PDState):
            state = state.qp
        alpha = np.zeros(state.n_all)
        alpha[state.active] = state.alpha
        return {"alpha": alpha}

    def _info(self, state) -> dict[str, Any]:
        if isinstance(state, (_PDState, _PrimalPDState)):
            info = {
                "method": "primal-dual",
                "mu": state.mu,
                "last_step": state.step,
                "last_sigma": state.sigma,
                "residual_dual": state.residual_dual,
                "residual_primal": state.residual_primal,
            }
            if isinstance(state, _PDState):
                info["bias_multiplier"] = state.b
            else:
                info["complementarity"] = state.complementarity
            return info
        return {
            "method": "barrier",
            "outer_steps": state.outer_steps,
            "t": state.t_center,
            "central_path_gap_bound": state.n_constraints / state.t_center,
            "stalled": state.stalled,
        }
