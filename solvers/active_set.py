"""A primal active-set method for small kernel duals, on the dense Gram matrix (§4).

Problem (docs/ARCHITECTURE.md §2), as the minimization of ``f = −D``::

    min_α  ½ αᵀQ̃α − Σ_t α_t   s.t.  0 ≤ α_t ≤ C_t   (+ yᵀα = 0 for a free bias)

with ``Q̃_tk = y_t y_k (K(x_t, x_k) + s²) + δ_tk/(2C_t)`` as in :mod:`solvers.smo`. The method is
the primal active-set method for convex QPs (Nocedal & Wright, *Numerical Optimization*, 2006,
Algorithm 16.3), started at ``α = 0``: each multiplier is at 0, at ``C_t`` or free; each iteration
minimizes ``f`` over the free multipliers, the others held at their bounds, from the KKT system
``[Q̃_FF y_F; y_Fᵀ 0][p; ν] = [−g_F; 0]`` (``g = Q̃α − 1``, the last row only for a free bias, ``ν``
the bias b), solved on the reduced Hessian by a pivoted Cholesky factorization whose null space is
that of a singular face (duplicated points, a kernel of low numerical rank;
:mod:`solvers.face_systems`), by a symmetric eigendecomposition only where LAPACK fails. A warm
start's α (auto's SMO probe) sets the first active set. A step that would
leave the box stops at the first bound it meets, which joins the active set; when the system is
singular and inconsistent, ``f`` decreases without curvature along the null-space part of the
right-hand side, followed to the first bound. At the minimizer of a face, the bounded multipliers
whose margins ``r_t = g_t + ν y_t = y_t f(x_t) − 1`` have the wrong sign (``r_t < 0`` at 0,
``r_t > 0`` at ``C_t``) are the KKT violations; the worst is freed (the method proper), or the point
is optimal. While freed multipliers all stay free, the next release frees twice as many of the worst
(a face with many free multipliers is reached in a few solves); once one meets a bound, or a release
does not decrease ``f``, it frees one again. With a free bias and no multiplier free, one freed
alone could not move (``yᵀα = 0`` holds it), so the worst violator on the other side of the label
sum is freed with it, as SMO's pair.

The end point is the certificate's choice among the optimum and its padded points
(:data:`PAD_MARGINS`: at C = 1e10 rounding in the margins alone costs a gap of 1e-6), with the
solve's b and, for a free bias, the problem's exact b.

Each iteration costs one ``m³`` factorization on the ``m`` free multipliers and one pass over
the ``n×n`` Gram matrix, and the number of iterations follows the changes of the active set, not
C: at C = 1e10 on 100 points it takes as long as at C = 1. Hence the method for small n (the
Gram matrix fits, :data:`MAX_SAMPLES`), where SMO's pair updates grow with C. The result is
certified by the problem like every other; a point that the certificate does not hold to ``tol``
is reported ``numerical_error``, never optimal.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from scipy import sparse
from scipy.spatial.distance import cdist

from svmbench.problems import KernelDual
from svmbench.problems._qp import absorb_label_sum
from svmbench.solvers.base import Outcome, Solver, Status
from svmbench.solvers.face_systems import face_step
from svmbench.solvers.registry import register

#: Largest n solved: the dense Gram matrix and one m³ decomposition per iteration stay cheap.
MAX_SAMPLES = 1000
#: Eigenvalues below this times the largest are the null space of the face's KKT matrix.
RANK_RTOL = 1e-12
#: A margin violation ``|r_t|`` of at most this is rounding: the multiplier stays bounded (and so
#: is one within the rounding of its margin's terms, :func:`_drop_rounding`).
VIOLATION_TOL = 1e-12
#: The unit roundoff of float64, ``2⁻⁵³``.
UNIT_ROUNDOFF = float(np.finfo(np.float64).eps) / 2.0
#: Padded margins ``η`` tried, smallest first: the free multipliers solved for margins ``1 + η``
#: rather than 1, so that rounding leaves none of them below 1 (the hinge ``C_t max(0, 1 − m_t)``
#: of a margin 1 − 1e-16 is 1e-6 at C = 1e10); the point stays dual feasible, its gap grows by
#: ``η Σ_F α_t`` only.
PAD_MARGINS = tuple(10.0**k for k in range(-15, -6))
#: The certificates of the padded points stop at the first at most this (or tol).
GOOD_GAP = 1e-12
#: Multipliers above this are summed apart from the others in the gradient
#: (:class:`_Gradient`); below, their partial sums cost a margin 1e-8 at most, which C
#: weighs into 1 or less (breast cancer at C = 1e6-1e8 paid 10-20 ms for the split).
SPLIT_GRADIENT_C = 1e8
#: The product of the large multipliers is updated by the columns that changed up to this
#: fraction of them (:class:`_Gradient`).
UPDATE_FRACTION = 0.125
#: Newton steps that refine the optimum's free multipliers (and the label sum) before its
#: padded points are built.
REFINE_STEPS = 2
#: The null-space part of the right-hand side counts (a direction without curvature) above this
#: times its norm.
INCONSISTENT_RTOL = 1e-9


def _small_convex(problem) -> str | None:
    if problem.n_samples > MAX_SAMPLES:
        return f"n={problem.n_samples} exceeds MAX_SAMPLES={MAX_SAMPLES} (a dense Gram matrix)"
    if not problem.convex:
        return "an indefinite kernel (the active-set method needs a convex QP)"
    return None


def dense_hessian(problem: KernelDual) -> np.ndarray:
    """``Q̃`` of the dual, dense: ``y_t y_k (K_tk + s²)``, plus ``1/(2C_t)`` on the diagonal for
    the squared hinge.

    For a free bias, ``αᵀQ̃α`` does not change on ``yᵀα = 0`` when a constant is added to K, so
    the RBF kernel enters as ``K − 1 = expm1(−γ‖x − x'‖²)``: at a small γ, where K is 1 to
    within 1e-7, its information is kept to full precision (``exp`` rounds it away) and the
    face systems lose the constant eigenvalue that made them ill-conditioned."""
    return _hessian(problem)[0]


def _hessian(problem: KernelDual):
    """``(Q̃, D)``: :func:`dense_hessian` and the squared distances it read (None unshifted)."""
    D, y = None, problem.y
    if _shifted(problem):
        D = cdist(problem.X, problem.X, "sqeuclidean")
        Q = np.multiply(D, -problem.kernel_params["gamma"])
        np.expm1(Q, out=Q)
        # y_t y_k K_tk, in place: a product by ±1 is exact
        Q *= y[:, None]
        Q *= y
    else:
        K = problem.gram
        if problem.bias == "regularized":
            K = K + problem.bias_scale**2
        Q = K * np.outer(y, y)
    if problem.loss == "squared_hinge":
        C = problem.upper_bounds
        Q[np.diag_indices_from(Q)] += np.where(C > 0, 0.5 / np.maximum(C, 1e-300), 0.0)
    return Q, D


def _shifted(problem: KernelDual) -> bool:
    return problem.bias == "free" and problem.kernel == "rbf" and not sparse.issparse(problem.X)


def bounded_parts(problem: KernelDual, Q: np.ndarray, D: np.ndarray):
    """``(T, N)`` with ``T − N = Q̃`` for the shifted kernel of :func:`dense_hessian` (``D`` its
    squared distances), or None where no entry of K is below ½: ``T = y_t y_k K_tk`` where
    ``K_tk < ½`` (else ``Q̃_tk``), ``N = y_t y_k [K_tk < ½]``. Stored as ``K − 1``, an entry
    ``K = 4e-18`` (γ = 0.1 on 200 features) is rounded to −1: times a multiplier at C = 1e10
    that drops 4e-8 of a margin, a gap of 1e-6 over 40 of them; the multipliers above
    :data:`SPLIT_GRADIENT_C` go through ``T`` and ``N`` instead (:class:`_Gradient`)."""
    gamma = problem.kernel_params["gamma"]
    if not np.exp(-gamma * np.max(D, initial=0.0)) < 0.5:  # the smallest entry of K
        return None
    K = np.exp(-gamma * D)
    small = K < 0.5
    if not small.any():  # T = Q̃, N = 0
        return None
    signs = np.outer(problem.y, problem.y)
    return np.where(small, signs * K, Q), signs * small


class _Gradient:
    """``g = Q̃α − 1`` with the multipliers above :data:`SPLIT_GRADIENT_C` (at ``C_t`` or free)
    summed apart from the others: at C = 1e10 their terms, 1e10 apiece, mostly cancel, and an
    O(1) term added to such a partial sum kept 1e-6 of itself only (margins 1 − 3e-5 at the
    hard set's γ = 1e3, whose rows repeated under both labels hold 40 multipliers at C). For
    the shifted kernel they go through :func:`bounded_parts`, built when first needed. Their
    product is kept and updated by the columns whose multipliers changed (at most a
    :data:`UPDATE_FRACTION` of them; else, and with ``fresh``, it is computed anew)."""

    def __init__(self, Q: np.ndarray, problem: KernelDual, D: np.ndarray | None):
        self.Q, self.problem, self.D = Q, problem, D
        self.parts, self.last = None, None

    def _product(self, large: np.ndarray, columns=None) -> np.ndarray:
        if self.D is not None:  # built once: None where no entry of K is below ½
            self.parts, self.D = bounded_parts(self.problem, self.Q, self.D), None
        if self.parts is None:
            return self.Q @ large if columns is None else self.Q[:, columns] @ large[columns]
        T, N = self.parts
        if columns is None:
            return T @ large - N @ large
        return T[:, columns] @ large[columns] - N[:, columns] @ large[columns]

    def __call__(self, alpha: np.ndarray, fresh: bool = False) -> np.ndarray:
        large = np.where(alpha > SPLIT_GRADIENT_C, alpha, 0.0)
        if not large.any():
            return self.Q @ alpha - 1.0
        changed = None if self.last is None or fresh else np.flatnonzero(large != self.last[0])
        if changed is None or changed.size > UPDATE_FRACTION * large.size:
            product = self._product(large)
        elif changed.size:
            product = self.last[1] + self._product(large - self.last[0], changed)
        else:
            product = self.last[1]
        self.last = (large, product)
        return (self.Q @ (alpha - large) - 1.0) + product


@register
class ActiveSet(Solver):
    """The primal active-set method on the dense dual of a small kernel SVM.

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for (the method itself runs to its exact optimum).
    max_iter : int or None, default=None
        Active-set changes (None: ``20·n + 100``).
    time_limit : float or None
        Seconds, checked between iterations.
    """

    name = "active_set"
    iteration_unit = "active-set changes"
    supported: ClassVar = {
        KernelDual: {"loss": ("hinge", "squared_hinge"), "n_samples": _small_convex}
    }
    reports_progress = False
    default_max_iter = 0  # 0: 20·n + 100
    warm_start_uses = ("alpha",)
    warm_start_sets_active_set = True

    @classmethod
    def memory_estimate(cls, problem, **options) -> float | None:
        return 5.0 * 8.0 * problem.n_samples**2  # Q̃, and at large C its bounded parts

    def _run(self, problem, warm_start, clock, callback) -> Outcome:
        n = problem.n_samples
        limit = self.max_iter or 20 * n + 100
        Q, D = _hessian(problem)
        y = problem.y
        upper = problem.dual_box()[1]
        free_bias = problem.bias == "free"
        start = None if warm_start is None else warm_start.alpha
        grad = _Gradient(Q, problem, D)
        alpha, state, nu, status, iterations = _solve(
            Q, y, upper, free_bias, limit, clock, self, start, grad
        )
        cert, (alpha, b) = self._certified(problem, Q, alpha, state, nu, upper, status, grad)
        message = ""
        if status is Status.OPTIMAL and not (cert.certified and cert.rel_gap <= self.tol):
            status = Status.NUMERICAL_ERROR
            message = (
                f"the active set settled, but its point is certified at {cert.rel_gap:.3g} only, "
                f"short of tol={self.tol:g} (rounding in the KKT solves)"
            )
        return Outcome(
            status=status,
            variables={"alpha": alpha, "b": b},
            iterations=iterations,
            certificate=cert,
            message=message,
            info={
                "free": int(np.count_nonzero(state == 1)),
                "at_C": int(np.count_nonzero(state == 2)),
            },
        )

    def _certified(self, problem, Q, alpha, state, nu, upper, status, grad):
        """The certificate and ``(α, b)`` of the best certified of the optimum and its padded
        points (:data:`PAD_MARGINS`, hinge only), tried in order until one certifies to
        :data:`GOOD_GAP`, or the gaps grow again past one that met ``tol``; for a free bias
        with the solve's b, then, if none met ``tol``, with the problem's exact one."""
        y, free_bias = problem.y, problem.bias == "free"
        points = [(alpha, nu)]
        if status is Status.OPTIMAL and problem.loss == "hinge" and np.any(state == 1):
            line = _padded_direction(Q, y, alpha, state, nu, upper, free_bias, grad)
            if line is not None:
                base, nu0, d, d_nu = line
                for eta in PAD_MARGINS:
                    # a multiplier that rounding left just outside its box is put back on it
                    # (a projection, dual feasible; the certificate judges the point)
                    a = np.clip(base + eta * d, 0.0, upper)
                    points.append((a, nu0 + eta * d_nu))
        cert, best = None, None
        # the choice among the points is the method's: its certificates are solve time; with a
        # free bias, the KKT solve's b first, then (if that is short of tol) the problem's own
        # minimizing b, whose margins rounding may favour
        for exact_b in (False, True) if free_bias else (False,):
            if exact_b and cert is not None and cert.meets(self.tol):
                break
            last = None
            for point in points:
                a = absorb_label_sum(point[0], y, upper) if free_bias else point[0]
                b = None if exact_b or not free_bias else point[1]
                c = problem.certificate(alpha=a, b=b)
                if not c.certified:
                    continue
                if last is not None and last.meets(self.tol) and c.rel_gap >= last.rel_gap:
                    break  # past the padding that rounding needed: the gaps grow again
                last = c
                if cert is None or c.rel_gap < cert.rel_gap:
                    cert, best = c, (a, c.primal_point.get("b") if free_bias else None)
                if cert.rel_gap <= GOOD_GAP:
                    break
        if best is None:  # nothing certified (rounding made a point non-finite)
            b = nu if free_bias else None
            cert, best = problem.certificate(alpha=alpha, b=b), (alpha, b)
        return cert, best


def _start(y, upper, free_bias: bool, start):
    """The first point and its active set: 0, or a warm start's α in the box (its label sum
    made 0 for a free bias); a multiplier at a bound is bounded, the others free."""
    n = y.size
    if start is None:
        return np.zeros(n), np.zeros(n, dtype=np.int8)
    alpha = np.clip(np.asarray(start, dtype=np.float64), 0.0, upper)
    if free_bias:
        alpha = absorb_label_sum(alpha, y, upper)
    state = np.where(alpha <= 0.0, 0, np.where(alpha >= upper, 2, 1)).astype(np.int8)
    state[upper <= 0] = 0
    return alpha, state


def _solve(Q, y, upper, free_bias: bool, limit: int, clock, solver, start, grad):
    """``(α, state, ν, status, iterations)``; ``state`` 0 at 0, 1 free, 2 at ``C_t``; ``grad``
    a :class:`_Gradient` of Q̃.

    Anti-cycling: a multiplier freed alone has, in exact arithmetic, a face step into the box
    (Nocedal & Wright, Theorem 16.5); a step of length 0 that sends it straight back to its
    bound proves its violation to be rounding. From then on the violations within their
    margins' rounding (:func:`_drop_rounding`) are not released: freed again, such a multiplier
    cycled (the hard set at C = 1e10, γ = 1e-5 less an ulp: a violation of 2e-10 against a
    rounding of 2e-7, 178 cycles). Before such a step nothing changes."""
    alpha, state = _start(y, upper, free_bias, start)
    g = grad(alpha)
    largest = None  # max |Q̃|, once a degenerate step calls for it
    nu, last_value = 0.0, np.inf
    batch, blocked = 1, False  # violators freed at once, doubled while none meets a bound
    freed, bounced = np.zeros(0, dtype=np.intp), False
    for iteration in range(1, limit + 1):
        if clock.wall >= solver.time_limit:
            return alpha, state, nu, Status.TIME_LIMIT, iteration - 1
        F = np.flatnonzero(state == 1)
        if F.size:
            just_freed, freed = freed, freed[:0]
            p, nu_face, consistent = _face_step(Q, g, y, F, free_bias)
            t, block = _step_length(alpha[F], p, upper[F], consistent)
            line_minimum = False
            if not consistent:
                t, block, line_minimum = _curvature_capped(Q, g, F, p, t, block)
            if not np.isfinite(t):
                return alpha, state, nu, Status.NUMERICAL_ERROR, iteration
            alpha[F] = np.clip(alpha[F] + t * p, 0.0, upper[F])
            if block >= 0:  # the first bound met joins the active set
                i = F[block]
                at_upper = p[block] > 0
                # the one multiplier just freed sent back at once: its violation was noise
                bounced |= t == 0.0 and just_freed.size == 1 and i == just_freed[0]
                alpha[i] = upper[i] if at_upper else 0.0
                state[i] = 2 if at_upper else 0
                blocked = True
                g = grad(alpha)
                continue
            if line_minimum:  # not the face's minimizer yet: solve the face again
                g = grad(alpha)
                continue
            nu = nu_face
        g = grad(alpha)
        nu = _bias(g, y, state, upper, nu, free_bias)
        r = g + nu * y if free_bias else g
        violation = np.where(state == 0, -r, np.where(state == 2, r, 0.0))
        violation[upper <= 0] = 0.0
        if bounced:
            if largest is None:
                largest = float(np.max(np.abs(Q), initial=0.0))
            _drop_rounding(violation, Q, alpha, largest)
        worst = int(np.argmax(violation))
        if violation[worst] <= VIOLATION_TOL:
            return alpha, state, nu, Status.OPTIMAL, iteration
        value = 0.5 * float(alpha @ g) - 0.5 * float(alpha.sum())
        if value < last_value and not blocked:  # freed ones all stayed free: free more
            batch = 2 * batch
        else:  # a freed one met a bound, or no progress: back to the method proper
            batch = 1
        order = np.argsort(-violation)[:batch]
        freed = order[violation[order] > VIOLATION_TOL]
        if free_bias and freed.size == 1 and not np.any(state == 1):
            freed = np.append(freed, _partner(violation, state, y, int(freed[0])))
        state[freed] = 1
        last_value, blocked = value, False
    return alpha, state, nu, Status.MAX_ITER, limit


def _drop_rounding(violation, Q, alpha, largest: float) -> None:
    """Sets to 0, in place, the violations within the rounding of their own margins: at most
    ``u Σ_k |Q̃_tk| α_k`` (``u = 2⁻⁵³``), one unit roundoff of the terms that the margin
    ``r_t`` sums (Higham 2002, §3.1: a sum's error is up to ``γ_n ≥ u`` of that). Called once a
    degenerate step showed such noise (:func:`_solve`); a violation above it is kept, so that
    a real violator is never held. ``largest`` is ``max |Q̃|``: rows whose violation exceeds
    ``u·largest·Σα`` are not looked at."""
    bound = UNIT_ROUNDOFF * largest * float(np.sum(alpha))
    rows = np.flatnonzero((violation > VIOLATION_TOL) & (violation <= bound))
    if rows.size:
        rounding = UNIT_ROUNDOFF * (np.abs(Q[rows]) @ alpha)
        violation[rows[violation[rows] <= rounding]] = 0.0


def _partner(violation, state, y, freed: int) -> int:
    """For a free bias, the multiplier to free beside ``freed`` when it would be free alone: the
    worst violator that moves the label sum the other way (``y_s d_s = −y_t d_t``, ``d`` = +1
    leaving 0, −1 leaving C), or ``freed`` itself when none violates. Alone, ``yᵀα = 0`` holds
    it still, and the sign of a zero step's rounding decided whether it left its bound (a cycle
    on some machines, not others)."""
    direction = np.where(state == 2, -1.0, 1.0)
    other_side = y * direction == -y[freed] * direction[freed]
    candidates = np.where(other_side & (state != 1), violation, 0.0)
    partner = int(np.argmax(candidates))
    return partner if candidates[partner] > VIOLATION_TOL else freed


def _bias(g, y, state, upper, nu: float, free_bias: bool) -> float:
    """ν at the minimizer of a face: the least-squares ``−y_F g_F`` of the free multipliers, or,
    with none free, the midpoint of the interval the bounded ones' margins allow (which
    minimizes the largest violation when the interval is empty)."""
    if not free_bias:
        return 0.0
    F = state == 1
    if F.any():
        return float(-np.mean(y[F] * g[F]))
    # r_t = g_t + ν y_t ≥ 0 at 0, ≤ 0 at C: bounds on ν from each
    low = np.full(y.size, -np.inf)
    high = np.full(y.size, np.inf)
    at0, atC = (state == 0) & (upper > 0), state == 2
    pos, neg = y > 0, y < 0
    bound = -g * y  # ν ≥ bound (y > 0, at 0), ν ≤ bound (y < 0, at 0); reversed at C
    low[at0 & pos], high[at0 & neg] = bound[at0 & pos], bound[at0 & neg]
    high[atC & pos], low[atC & neg] = bound[atC & pos], bound[atC & neg]
    lo, hi = float(np.max(low, initial=-np.inf)), float(np.min(high, initial=np.inf))
    if not np.isfinite(lo) and not np.isfinite(hi):
        return nu
    if not np.isfinite(lo):
        return hi
    if not np.isfinite(hi):
        return lo
    return 0.5 * (lo + hi)


def _padded_direction(Q, y, alpha, state, nu: float, upper, free_bias: bool, grad):
    """``(α₀, ν₀, d, d_ν)``: the optimum's free multipliers (and ν) solved for margins ``1 + η``
    (the bounded ones kept) are ``α₀ + η d`` (and ``ν₀ + η d_ν``), the system being linear in
    η; None when the face's system is singular."""
    F = np.flatnonzero(state == 1)
    base, nu0 = alpha.copy(), nu
    for _ in range(REFINE_STEPS):
        g = grad(base, fresh=True)
        residual = _label_sum(y, base) if free_bias else 0.0
        p, nu0, consistent = _face_step(Q, g, y, F, free_bias, residual)
        if not consistent:
            return None
        base[F] += p
    d, d_nu, consistent_d = _face_step(Q, -np.ones_like(alpha), y, F, free_bias)
    if not consistent_d:
        return None
    direction = np.zeros_like(alpha)
    direction[F] = d
    return base, (nu0 if free_bias else 0.0), direction, (d_nu if free_bias else 0.0)


def _label_sum(y: np.ndarray, alpha: np.ndarray) -> float:
    """``yᵀα`` correctly rounded (``math.fsum``): with multipliers of 1e10 a plain sum is off
    by 1e-5, and a face step removing that residue moved the free ones by noise (the hard set
    at γ = 1e-5 cycled to ``max_iter``)."""
    return math.fsum(y * alpha)


def _face_step(Q, g, y, F, free_bias: bool, residual: float = 0.0):
    """The step ``p`` to the minimizer of ``f`` on the face of free set F, ν of that minimizer,
    and whether the KKT system was consistent (else ``p`` is a descent direction without
    curvature, to follow up to a bound). For a free bias the step also removes ``residual``
    from the label sum (``y_Fᵀp = −residual``), a Newton step back onto ``yᵀα = 0``."""
    m = F.size
    fast = _cholesky_step(Q, g, y, F, free_bias, residual)
    if fast is not None:
        return fast
    if free_bias:
        M = np.empty((m + 1, m + 1))
        M[:m, :m] = Q[np.ix_(F, F)]
        M[:m, m] = y[F]
        M[m, :m] = y[F]
        M[m, m] = 0.0
        rhs = np.append(-g[F], -residual)
    else:
        M, rhs = Q[np.ix_(F, F)], -g[F]
    values, vectors = np.linalg.eigh(M)
    keep = np.abs(values) > RANK_RTOL * max(float(np.max(np.abs(values))), 1e-300)
    coords = vectors.T @ rhs
    null_part = vectors[:, ~keep] @ coords[~keep]
    if np.linalg.norm(null_part[:m]) > INCONSISTENT_RTOL * max(np.linalg.norm(rhs), 1e-300):
        return null_part[:m], 0.0, False
    x = vectors[:, keep] @ (coords[keep] / values[keep])
    return x[:m], (float(x[m]) if free_bias else 0.0), True


def _cholesky_step(Q, g, y, F, free_bias: bool, residual: float = 0.0):
    """The face step from a pivoted Cholesky factorization (None where LAPACK fails):
    :func:`~solvers.face_systems.face_step`, which for a free bias eliminates the label sum by a
    Householder reflection and factors the reduced Hessian, its null space that of the face."""
    return face_step(Q[np.ix_(F, F)], g[F], y[F] if free_bias else None, residual)


def _curvature_capped(Q, g, F, p, t: float, block: int):
    """The step along a null-space direction ``p`` of the face, capped at the minimizer of ``f``
    on its line, ``t* = −g_Fᵀp / pᵀQ̃_FF p``, where ``pᵀQ̃_FF p`` is not 0 after all (a kernel
    of low numerical rank: eigenvalues of 1e-21 taken for null at the face's scale). Followed to
    the bound instead, such a step overshoots, ``f`` does not decrease, and the bound met is
    released again: a cycle (iris, C = 1e10, γ = 1e-7). Returns ``(t, block, line_minimum)``;
    from a line minimum the face is solved again. Where ``p`` is no descent direction at all
    (rounding), no step."""
    slope = float(g[F] @ p)
    curvature = float(p @ (Q[np.ix_(F, F)] @ p))
    if slope >= 0.0:
        return 0.0, -1, False
    if curvature > 0.0 and -slope / curvature < t:
        return -slope / curvature, -1, True
    return t, block, False


def _step_length(a, p, u, capped: bool):
    """The largest ``t`` (≤ 1 when ``capped``) keeping ``a + t p`` in ``[0, u]``, and the index
    of the bound that stops it (−1: none, the full step)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        to_bound = np.where(p < 0, -a / p, np.where(p > 0, (u - a) / p, np.inf))
    to_bound = np.maximum(to_bound, 0.0)
    block = int(np.argmin(to_bound)) if to_bound.size else -1
    t_block = float(to_bound[block]) if block >= 0 else np.inf
    if capped and t_block >= 1.0:
        return 1.0, -1
    return t_block, block
