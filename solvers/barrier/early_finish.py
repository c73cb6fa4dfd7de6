"""The exact finish as the primal-dual method's stopping test, tried before its gap reaches tol.

An interior point tells the active set of a soft-margin problem (multipliers at 0, at C_i, free)
long before its gap is small. :func:`try_early_finish` makes the iterate exact on a guess of
that set, the free multipliers from their KKT equations
(:func:`~solvers.exact_finish.solve_free_set`; at most ``d + 2`` free: a linear problem in
general position has at most d + 1 free multipliers with a free bias). The first guess is read
from the iterate's margins, ``m_i > 1 + δ`` at 0, ``m_i < 1 − δ`` at C_i, the band
``δ = MARGIN_BAND·√estimate`` free; the second, if the first leads nowhere, from its
multipliers' loosest threshold (``EPS_LOOSE`` of :mod:`~solvers.exact_finish`). Each finished
point's gap is read from its margins, ``P − D = Σ_i g_i`` with
``g_i = α_i(m_i − 1) + C_i ℓ(m_i) (+ α_i²/(4C_i))`` for ``w = Σ α_i y_i x̃_i`` (every term ≥ 0:
a multiplier at 0 below its margin, at C_i above it, weighs); where that is above tol, the
examples whose ``g_i`` exceeds ``tol·max(1, |P|)/n`` join the free set and the equations are
solved again, while the gap falls and stays within ``SECOND_SET_GAP`` (``EARLY_ROUNDS`` sets at
most: active-set steps from the interior point's guess). Only a point whose margins give a gap
within tol is handed to the problem's certificate, once, and it stops the method only if the
problem certifies it at ``tol``. Otherwise the iterations go on, and the next try waits until
the gap estimate has fallen by ``RETRY_FACTOR``: a try that fails has cost a few small KKT
solves and products with X, no certificate. On standardized breast cancer the first tries
(estimates 0.03-0.07) certify at C = 0.01/0.1/0.3/1 after 4/6/7/7 Newton steps, where the
sets of α's thresholds alone needed 7/8/8/8 and the candidates certified one by one 9/9/9/8.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from svmbench.problems._qp import exact_label_sum
from svmbench.solvers.exact_finish import (
    EPS_LOOSE,
    ROUNDING_ZERO,
    active_set,
    finish_applies,
    solve_free_set,
    variables_of,
    zero_label_sum,
)
from svmbench.solvers.margin_lift import lift_of

#: The first try comes when the iterate's own gap estimate is at most this.
EARLY_FINISH_GAP = 0.1
#: The active sets solved at most from each of a try's two first sets.
EARLY_ROUNDS = 4
#: A later try waits until the gap estimate is this many times smaller than at the last one.
RETRY_FACTOR = 4.0
#: Rounds go on only while the relative gap is at most this and falls: further off, freeing
#: the violators took breast cancer's gap from 0.064 to 0.6 and from 0.42 to 1.0, where the
#: rounds that certified followed gaps of 3e-5 to 3e-3.
SECOND_SET_GAP = 1e-2
#: The margins' band of the first set: ``|m_i − 1| ≤ MARGIN_BAND·√estimate`` free.
MARGIN_BAND = 0.1


def early_finish_applies(problem) -> bool:
    """Whether the problem's dual is one the exact finish handles (hinge or squared hinge on a
    primal form)."""
    return finish_applies(problem)


def try_early_finish(
    problem,
    variables,
    tol: float,
    free_limit: int,
    estimate: float,
    m=None,
    band=None,
    starts=("margins", "alpha"),
):
    """``(variables, certificate, report)`` of the finished point when the problem certifies it
    at ``tol``, else None. ``variables``: the iterate's ``w, b, alpha`` (α in its box, and on
    ``yᵀα = 0`` for a free bias); ``free_limit``: the largest free set solved; ``estimate``:
    the iterate's relative gap estimate (the margins' band ``MARGIN_BAND·√estimate``, unless
    ``band`` gives it); ``m``: its margins, if known; ``starts``: the first guesses tried, in
    order (``"margins"``, ``"alpha"``)."""
    alpha = np.asarray(variables["alpha"], dtype=np.float64)
    _, upper = problem.dual_box()
    b0 = variables.get("b")
    if m is None:
        m = problem.margins(variables["w"], 0.0 if b0 is None else b0)
    if band is None:
        band = MARGIN_BAND * math.sqrt(max(estimate, 0.0))
    tried = []
    for name in starts:
        if name == "margins":
            at0 = (m > 1.0 + band) | (upper <= 0.0)
            atC = np.isfinite(upper) & ~at0 & (m < 1.0 - band)
        else:
            at0, atC = active_set(alpha, upper, EPS_LOOSE)
        found = _rounds(problem, alpha, b0, upper, at0, atC, tol, free_limit, tried)
        if found is None:
            continue
        point, cert, report = found
        if not cert.meets(tol):
            return None
        return point, cert, {**report, "start": name, "tried": tried}
    return None


def _rounds(problem, alpha, b0, upper, at0, atC, tol, free_limit, tried):
    """Solve the set ``(at0, atC)``, then that set with its violators freed, while the gap
    falls (at most ``EARLY_ROUNDS`` sets); ``(point, certificate, report)`` of the first point
    whose margins give a gap within tol, else None. ``tried`` gets ``[free, gap]`` of each."""
    previous = math.inf
    lift = lift_of(problem, alpha, tol)  # at a large C, margins asked at 1 + lift
    for _ in range(EARLY_ROUNDS):
        free = np.flatnonzero(~(at0 | atC))
        if free.size > free_limit:
            return None
        fixed = np.where(atC, upper, 0.0)
        finished, b, method = solve_free_set(problem, fixed, free, alpha[free], b0, upper, lift)
        size = np.abs(finished)
        finished[size <= ROUNDING_ZERO * size.max()] = 0.0  # as the exact finish rounds them
        on0, onC = finished == 0.0, finished == upper  # the bounds (before the rounding below)
        inside = ~(on0 | onC)
        finished = _on_label_sum(problem, finished, upper, inside)
        point = variables_of(problem, finished, b)
        if problem.bias == "free":
            point["b"] = _free_bias(problem, point["w"], finished, inside, lift)
        best = point["b"] is None  # the equations left b open: the iterate's, then the best
        if best:
            point["b"] = b0
        parts, scale = gap_parts(problem, point)
        gap = float(parts.sum()) / scale
        tried.append([int(free.size), gap])
        if gap <= tol:
            if best:
                point["b"] = problem.best_bias(point["w"])
            cert = problem.certificate(**point)
            report = {
                "early": True,
                "accepted": cert.meets(tol),
                "fixed_at_0": int(np.count_nonzero(on0)),
                "fixed_at_C": int(np.count_nonzero(onC)),
                "free": int(np.count_nonzero(inside)),
                "method": method,
                "rel_gap_after": float(cert.rel_gap),
                "support": int(np.count_nonzero(finished)),
            }
            return point, cert, report
        weigh = parts > tol * scale / parts.size
        if gap > SECOND_SET_GAP or not gap < previous or not weigh.any():
            return None
        previous = gap
        at0, atC, alpha = on0 & ~weigh, onC & ~weigh, finished
    return None


def _on_label_sum(problem, alpha, upper, inside):
    """For a free bias, ``yᵀα = 0`` made exact in floating point: every multiplier rounded down
    to the grid of :func:`~problems._qp.exact_label_sum` (``q = 2^⌈log₂ Σα⌉ / 2⁵²``), the
    imbalance taken off a free one, as the iterate's multipliers are
    (:func:`~solvers.barrier.primal_dual_margins.feasible_multipliers`). A bound ``C_i`` off
    the grid (C = 0.1: no sum of its copies is exact) becomes the grid point below it, within
    the box, ``C_i − δ_i`` with ``δ_i < q``: its share of the gap is ``δ_i(1 − m_i)``, and the
    certificate takes the point as its own projection instead of projecting it (a bisection).
    Where that cannot be done, :func:`~solvers.exact_finish.zero_label_sum`."""
    if problem.bias != "free":
        return alpha
    grid = exact_label_sum(alpha, problem.y, inside) if inside.any() else None
    return grid if grid is not None else zero_label_sum(problem, alpha, upper)


def _free_bias(problem, w, alpha, inside, lift: float = 0.0) -> float | None:
    """LIBSVM's free b of the finished point, ``mean_F(y_i t_i − x_i·w)`` over its free
    multipliers F (``t_i`` the margin they are held at: ``1 + lift``, or ``1 − α_i/(2C_i)`` for
    the squared hinge), from the final w rather than the equations' own b, whose rounding followed
    multipliers of 1e-17 that are then set to 0 (a dense and a CSR fit of one problem then
    agree on b; on a point at a pair's boundary their one-vs-one votes did not). None without
    a free multiplier."""
    if not inside.any():
        return None
    X, y = problem.X[inside], problem.y[inside]
    f = X @ w if not sparse.issparse(X) else np.asarray(X @ w).ravel()
    target = y * (1.0 + lift)
    if problem.loss == "squared_hinge":
        target = y * (1.0 - alpha[inside] / (2.0 * problem.upper_bounds[inside]))
    return float(np.mean(target - f))


def gap_parts(problem, point) -> tuple[np.ndarray, float]:
    """``(g, max(1, |P|))`` of a point ``(w, b, α)`` with ``w = Σ α_i y_i x_i`` (and, for a
    regularized bias, ``b = s² Σ α_i y_i``; for a free one ``yᵀα = 0``): the duality gap
    ``P − D = Σ_i g_i``, ``g_i = α_i(m_i − 1) + C_i ℓ(m_i)`` (hinge ``ℓ = max(0, 1 − m)``),
    ``+ α_i²/(4C_i)`` for the squared hinge (``ℓ = max(0, 1 − m)²``), every term ≥ 0 in exact
    arithmetic. An estimate in float64, which decides whether the certificate is asked."""
    w, b, alpha = point["w"], point["b"], point["alpha"]
    m = problem.margins(w, b)
    C = problem.upper_bounds
    xi = np.maximum(0.0, 1.0 - m)
    parts = alpha * (m - 1.0)
    if problem.loss == "squared_hinge":
        loss = C * xi * xi
        parts += loss + np.divide(alpha * alpha, 4.0 * C, out=np.zeros_like(C), where=C > 0)
    else:
        loss = C * xi
        parts += loss
    primal = problem.regularizer(w, b) + float(loss.sum())
    return parts, max(1.0, abs(primal))
