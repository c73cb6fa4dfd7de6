"""Solving QPs in OSQP's form with Clarabel, and projections onto the dual feasible sets.

Used by the problems (to build a dual point that closes the gap, from a small QP over the
near-margin multipliers) and by the Clarabel reference solver, so that the conversion from
OSQP's form ``l ≤ Ax ≤ u`` to Clarabel's cones lives in one place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

#: Clarabel's statuses, mapped once: the names are those of ``solvers.base.Status`` (plus
#: ``"optimal_inaccurate"``, which the certificate judges).
_CLARABEL_STATUS_NAMES = {
    "Solved": "optimal",
    "AlmostSolved": "optimal_inaccurate",
    "PrimalInfeasible": "infeasible",
    "AlmostPrimalInfeasible": "infeasible",
    "DualInfeasible": "unbounded",
    "AlmostDualInfeasible": "unbounded",
    "MaxIterations": "max_iter",
    "MaxTime": "time_limit",
    "NumericalError": "numerical_error",
    "InsufficientProgress": "numerical_error",
    "CallbackTerminated": "numerical_error",
}


@dataclass(frozen=True)
class ClarabelOutcome:
    """What Clarabel returned, mapped back to OSQP's conventions.

    ``y`` holds OSQP-signed multipliers of ``l ≤ Ax ≤ u`` (``Px + q + Aᵀy = 0``); when the
    status is ``"infeasible"`` it holds the infeasibility certificate in OSQP's sign convention
    (``Aᵀy = 0``, ``uᵀy₊ + lᵀy₋ < 0``).
    """

    status: str
    raw_status: str
    x: np.ndarray
    y: np.ndarray
    iterations: int
    solve_time: float


def solve_osqp_form_with_clarabel(
    P, q, A, l, u, *, tol: float = 1e-10, max_iter: int = 200, time_limit: float | None = None
) -> ClarabelOutcome:
    """Solve ``min ½xᵀPx + qᵀx s.t. l ≤ Ax ≤ u`` with Clarabel's interior-point method.

    Equality rows (``l == u``) become a zero cone; each finite bound becomes a row of the
    non-negative cone (``Ax + s = u`` or ``-Ax + s = -l``, ``s ≥ 0``).
    """
    import clarabel

    A = sparse.csr_matrix(A)
    l = np.asarray(l, dtype=float)
    u = np.asarray(u, dtype=float)
    eq = np.flatnonzero(np.isfinite(l) & (l == u))
    up = np.flatnonzero(np.isfinite(u) & ~(l == u))
    lo = np.flatnonzero(np.isfinite(l) & ~(l == u))
    blocks = [A[eq], A[up], -A[lo]]
    rhs = np.concatenate([u[eq], u[up], -l[lo]])
    A_cl = sparse.vstack(blocks, format="csc") if A.shape[0] else sparse.csc_matrix((0, len(q)))
    cones = []
    if eq.size:
        cones.append(clarabel.ZeroConeT(eq.size))
    if up.size + lo.size:
        cones.append(clarabel.NonnegativeConeT(up.size + lo.size))
    P = sparse.triu(sparse.csc_matrix(P), format="csc")

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = tol
    settings.tol_gap_rel = tol
    settings.tol_feas = tol
    settings.tol_infeas_abs = tol
    settings.tol_infeas_rel = tol
    settings.tol_ktratio = min(1e-6, tol)
    settings.max_iter = max_iter
    settings.max_threads = 1
    if time_limit is not None and np.isfinite(time_limit):
        settings.time_limit = float(time_limit)
    solver = clarabel.DefaultSolver(P, np.asarray(q, dtype=float), A_cl, rhs, cones, settings)
    sol = solver.solve()
    raw = str(sol.status).split(".")[-1]
    z = np.asarray(sol.z, dtype=float)
    y = np.zeros(A.shape[0])
    ne, nu = eq.size, up.size
    y[eq] = z[:ne]
    y[up] += z[ne : ne + nu]
    y[lo] -= z[ne + nu :]
    return ClarabelOutcome(
        status=_CLARABEL_STATUS_NAMES.get(raw, "numerical_error"),
        raw_status=raw,
        x=np.asarray(sol.x, dtype=float),
        y=y,
        iterations=int(sol.iterations),
        solve_time=float(sol.solve_time),
    )


#: Machine epsilon of float64.
_EPS = float(np.finfo(np.float64).eps)


def exact_label_sum(alpha: np.ndarray, y: np.ndarray, movable: np.ndarray):
    """``α`` rounded down to multiples of ``q = 2^⌈log₂ Σα⌉ / 2⁵²`` with ``yᵀα = 0`` exactly in
    floating point, or None where that cannot be done.

    Every partial sum of ``±α_i`` on that grid is a multiple of q below ``2⁵³q`` in magnitude,
    hence exact in any order; the exact imbalance is taken off the largest ``movable`` multiplier
    of the class in excess (None when it is smaller than the imbalance, or ``Σα`` is 0 or
    beyond the float range). The caller checks that the fixed multipliers are on the grid.
    """
    total = float(alpha.sum())
    if not 1e-200 < total < 1e200:
        return None
    q = 2.0 ** (math.ceil(math.log2(total)) - 52)
    grid = np.floor(alpha / q) * q
    excess = float(y @ grid)  # exact
    if excess != 0.0:
        cls = np.flatnonzero(movable & (y == math.copysign(1.0, excess)))
        if not cls.size:
            return None
        j = cls[np.argmax(grid[cls])]
        if grid[j] < abs(excess):
            return None
        grid[j] -= abs(excess)  # exact: both are multiples of q below 2⁵³q
    return grid


def absorb_label_sum(alpha: np.ndarray, y: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Most of the rounding residue of ``yᵀα`` removed in place: a multiplier strictly inside
    its box absorbs it, three times at most (what is left is a few ulps of ``Σα_i``; the box
    projection of :func:`project_box_hyperplane` removes the rest)."""
    for _ in range(3):
        res = float(y @ alpha)
        inside = np.flatnonzero((alpha > 0) & (alpha < upper))
        if res == 0.0 or not inside.size:
            break
        i = inside[np.argmax(np.minimum(alpha[inside], upper[inside] - alpha[inside]))]
        alpha[i] = min(max(alpha[i] - y[i] * res, 0.0), upper[i])
    return alpha


def project_box_hyperplane(
    v: np.ndarray, lower: np.ndarray, upper: np.ndarray, a: np.ndarray, rhs: float = 0.0
) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{x : lower ≤ x ≤ upper, aᵀx = rhs}``, ``a_i ∈ {±1}``.

    The projection is ``clip(v - t·a)`` for the scalar t solving the monotone equation
    ``aᵀclip(v - t·a) = rhs`` (the continuous quadratic knapsack), found to machine precision
    (:func:`_knapsack_root`: Newton steps, then a bisection of a few ulps). Raises ``ValueError``
    when the set is empty.
    """
    clipped = np.clip(v, lower, upper)
    h0 = float(a @ clipped) - rhs  # h(0): the clipped point is feasible when it is 0
    if h0 == 0.0:
        return clipped
    lo_sum = np.sum(np.where(a > 0, lower, -upper))
    hi_sum = np.sum(np.where(a > 0, upper, -lower))
    if not (lo_sum <= rhs <= hi_sum):
        raise ValueError("the dual feasible set {box, aᵀx = rhs} is empty")

    def h(t: float) -> float:
        return float(a @ np.clip(v - t * a, lower, upper)) - rhs

    inside = bool(np.all((v >= lower) & (v <= upper)))
    if inside and abs(h0) <= 64 * np.finfo(float).eps * float(np.abs(v).sum()):
        # feasible up to rounding (a solver's own point): its residue goes onto one coordinate
        # instead of shifting every free one, so that a warm start keeps the exact values it had
        return _drop_residue(v.astype(float, copy=True), lower, upper, a, rhs)
    # h is non-increasing in t; bracket the root.
    step = max(1.0, float(np.max(np.abs(v[np.isfinite(v)]), initial=0.0)))
    t_lo, t_hi = -step, step
    while h(t_lo) < 0:
        t_lo *= 2
    while h(t_hi) > 0:
        t_hi *= 2
    t = _knapsack_root(v, lower, upper, a, rhs, t_lo, t_hi)
    return _drop_residue(np.clip(v - t * a, lower, upper), lower, upper, a, rhs)


def _knapsack_root(v, lower, upper, a, rhs, t_lo, t_hi) -> float:
    """The largest t of the bracket ``[t_lo, t_hi]`` with ``h(t) = aᵀclip(v − t·a) − rhs > 0``
    up to the next float, as a bisection to machine precision finds it, in a few passes over
    the data instead of about 60. h is piecewise linear of slope −(number of coordinates
    strictly inside their box): Newton steps from 0 land on its root once they start on the
    root's piece (a step that leaves the bracket, or one from a flat piece where every
    coordinate is at a bound, is a bisection instead); the bisection then runs in a bracket of
    a few ulps around that root."""

    def h(t: float) -> float:
        return float(a @ np.clip(v - t * a, lower, upper)) - rhs

    t = 0.0
    for _ in range(100):  # safeguarded Newton: the root to the rounding of h
        value = h(t)
        if value > 0:
            t_lo = t
        elif value < 0:
            t_hi = t
        else:
            break
        z = v - t * a
        slope = int(np.count_nonzero((z > lower) & (z < upper)))
        if not slope:  # h is flat at t (every coordinate at a bound): bisect the bracket
            new = 0.5 * (t_lo + t_hi)
            if new in (t_lo, t_hi):
                return t_lo
            t = new
            continue
        new = t + value / slope
        if abs(new - t) <= 4 * _EPS * abs(t):  # rounding steps: h's noise floor
            break
        if not t_lo < new < t_hi:
            new = 0.5 * (t_lo + t_hi)
            if new in (t_lo, t_hi):
                return t_lo
        t = new
    # a bracket of a few ulps around t (widened while the root lies outside), then bisection
    width = 4 * _EPS * max(abs(t), 1e-300)
    while t_lo < t - width or t_hi > t + width:
        if t - width > t_lo and h(t - width) > 0:
            t_lo = t - width
        if t + width < t_hi and h(t + width) <= 0:
            t_hi = t + width
        width *= 16
    for _ in range(200):
        mid = 0.5 * (t_lo + t_hi)
        if mid in (t_lo, t_hi):
            break
        if h(mid) > 0:
            t_lo = mid
        else:
            t_hi = mid
    return t_lo


def _drop_residue(x, lower, upper, a, rhs):
    """Remove the last rounding residue of ``aᵀx = rhs`` on the coordinate farthest inside
    its box (in place)."""
    r = float(a @ x) - rhs
    free = np.flatnonzero((x > lower) & (x < upper))
    if free.size and r != 0.0:
        i = free[np.argmax(np.minimum(x[free] - lower[free], upper[free] - x[free]))]
        x[i] = np.clip(x[i] - a[i] * r, lower[i], upper[i])
    return x


def maximize_dual_on_subset(
    c: np.ndarray,
    upper: np.ndarray,
    *,
    H: np.ndarray | None = None,
    g: np.ndarray | None = None,
    A_sub=None,
    v0: np.ndarray | None = None,
    eq: np.ndarray | sparse.spmatrix | None = None,
    eq_rhs: float | np.ndarray = 0.0,
) -> np.ndarray:
    """Maximize a dual over a few free multipliers θ with all others fixed.

    Solves ``min_θ ½θᵀHθ + (g − c)ᵀθ  s.t.  0 ≤ θ ≤ upper, eqᵀθ = eq_rhs`` given the dense
    Hessian ``H`` (m×m) and ``g``, or, when m is large against the dimension p, the same problem
    written ``min ½‖v‖² − cᵀθ  s.t.  v − A_sub θ = v0`` with ``A_sub`` (p×m, sparse or dense) and
    the fixed multipliers' contribution ``v0``. Infinite ``upper`` entries are unbounded.
    ``eq`` is one equality row (length m, ``eq_rhs`` a float) or several (a dense or sparse
    array of shape (n_eq, m), ``eq_rhs`` of length n_eq): ``eq @ θ = eq_rhs``.
    """
    m = c.shape[0]
    finite_up = np.isfinite(upper)
    cons, lows, ups = [], [], []
    if H is not None:
        P = sparse.csc_matrix(0.5 * (H + H.T))
        q = g - c
        n_var = m
    else:
        p = A_sub.shape[0]
        P = sparse.block_diag([sparse.csc_matrix((m, m)), sparse.identity(p)], format="csc")
        q = np.concatenate([-c, np.zeros(p)])
        n_var = m + p
        cons.append(sparse.hstack([-sparse.csc_matrix(A_sub), sparse.identity(p)], format="csc"))
        lows.append(v0)
        ups.append(v0)
    cons.append(
        sparse.hstack([sparse.identity(m), sparse.csc_matrix((m, n_var - m))], format="csc")
    )
    lows.append(np.zeros(m))
    ups.append(np.where(finite_up, upper, np.inf))
    if eq is not None:
        E = sparse.csr_matrix(eq) if sparse.issparse(eq) else np.atleast_2d(np.asarray(eq, float))
        if E.ndim != 2 or E.shape[1] != m:
            raise ValueError(f"eq must have m={m} columns, got shape {E.shape}")
        rhs = np.broadcast_to(np.asarray(eq_rhs, dtype=float).ravel(), (E.shape[0],))
        cons.append(
            sparse.hstack(
                [sparse.csr_matrix(E), sparse.csr_matrix((E.shape[0], n_var - m))], format="csc"
            )
        )
        lows.append(np.array(rhs))
        ups.append(np.array(rhs))
    A = sparse.vstack(cons, format="csc")
    out = solve_osqp_form_with_clarabel(
        P, q, A, np.concatenate(lows), np.concatenate(ups), tol=1e-11, max_iter=100
    )
    return out.x[:m]
