"""The exact finish of an ε-SVR point (:class:`~svmbench.problems.svr.SVRDual`), as
:mod:`~svmbench.solvers.exact_finish` does for the binary duals.

An interior-point method stops with every β_i strictly inside ``(−C_i, C_i)`` and none at 0, so
its model keeps every training row. From a point certified at ``tol``, the finish sets the
coefficients near a bound exactly (``|β_i| ≤ ε·min(C_i, max|β|)`` → 0, ``|β_i| ≥ (1 − ε)C_i`` →
``±C_i``) and solves the KKT equations of the free ones, each on its side of the tube::

    (K̃_FF β_F)_i + b = y_i − ε_tube·sign(β_i) − (K̃_FB β_B)_i,   Σβ = 0 (free bias)

as a minimum-norm correction of the point's own β_F (rank-revealing least squares: duplicated
rows keep the solution nearest the point). Thresholds ε from ``√rel_gap`` up to 1e-2 by factors
of 10; the problem certifies each candidate, and the best replaces the point only if it meets
``tol``. A point certified to ``EXACT_GAP`` whose given coefficients near a bound (at the
threshold ``min(√rel_gap, EXACT_GAP)``) are at it exactly, in the box, is kept as it is (SMO's
points: its bounds are exact), as :mod:`~svmbench.solvers.exact_finish` keeps the binary duals'.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from svmbench.problems.base import Certificate
from svmbench.problems.svr import SVRDual

#: Thresholds tried: from √rel_gap (clipped to [EPS_MIN, EPS_MAX]) by factors of 10.
EPS_MIN, EPS_MAX = 1e-12, 1e-2
#: The dense KKT solve runs up to this many free coefficients.
MAX_FREE = 2000
#: A candidate certified to this is exact to rounding: the search stops.
STOP_GAP = 1e-12
#: A point certified to this whose coefficients near a bound are at it is kept as it is.
EXACT_GAP = 1e-6


def _kernel_rows(problem: SVRDual, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``K̃[rows][:, cols]`` (dense; K + s² for a regularized bias)."""
    if rows.size == 0 or cols.size == 0:
        return np.zeros((rows.size, cols.size))
    if problem.kernel == "precomputed" or "gram" in problem.__dict__:
        block = problem.gram[np.ix_(rows, cols)]
    else:
        block = problem.kernel_spec(problem.X[rows], problem.X[cols])
    return np.asarray(block, dtype=np.float64) + problem.s2


def _finished(problem: SVRDual, beta: np.ndarray, eps: float):
    """The KKT point of the active set at threshold ``eps``: ``(β, b)`` or None."""
    C = problem.upper_bounds
    size = np.abs(beta)
    at0 = size <= eps * np.minimum(C, np.max(size, initial=0.0))
    atC = ~at0 & (size >= (1.0 - eps) * C)
    free = np.flatnonzero(~at0 & ~atC)
    if free.size > MAX_FREE:
        return None
    fixed = np.where(atC, np.sign(beta) * C, 0.0)
    bounded = np.flatnonzero(fixed)
    side = np.sign(beta[free])
    rhs = problem.y[free] - problem.epsilon * side
    if bounded.size:
        rhs = rhs - _kernel_rows(problem, free, bounded) @ fixed[bounded]
    K = _kernel_rows(problem, free, free)
    if problem.bias == "free":
        A = np.block([[K, np.ones((free.size, 1))], [np.ones((1, free.size)), np.zeros((1, 1))]])
        rhs = np.r_[rhs, -fixed.sum()]
        x0 = np.r_[beta[free], 0.0]
    else:
        A, x0 = K, beta[free]
    if A.size == 0:
        solution = x0
    else:
        correction = np.linalg.lstsq(A, rhs - A @ x0, rcond=1e-12)[0]
        solution = x0 + correction
    if not np.all(np.isfinite(solution)):
        return None
    out = fixed.copy()
    # a coefficient that crossed 0 or its bound is set there: the certificate judges the rest
    out[free] = np.clip(solution[: free.size], np.minimum(0.0, side * C[free]),
                        np.maximum(0.0, side * C[free]))  # fmt: skip
    b = float(solution[-1]) if problem.bias == "free" and free.size else None
    return out, b


def _bounds_exact(problem: SVRDual, variables: dict[str, Any], eps: float) -> bool:
    """Whether the given β (``coef``, or α − α* of ``alpha``) lies in the box and every
    coefficient within ``eps`` of 0 or ``±C_i`` (relative) is exactly there."""
    given = {k: variables.get(k) for k in ("coef", "alpha")}
    if (given["coef"] is None) == (given["alpha"] is None):
        return False
    beta = problem.coefficients(**given)
    C = problem.upper_bounds
    size = np.abs(beta)
    near0 = size <= eps * np.minimum(C, np.max(size, initial=0.0))
    nearC = size >= (1.0 - eps) * C
    return bool(
        np.all(size <= C) and np.all(beta[near0] == 0.0) and np.all(size[nearC] == C[nearC])
    )


def svr_exact_finish(
    problem: SVRDual, variables: dict[str, Any], certificate: Certificate | None, *, tol: float
) -> tuple[dict[str, Any], Certificate, dict[str, Any]]:
    """The finished ``(variables, certificate, report)`` of a certified ε-SVR point (see the
    module docstring); the given ones, with the reason, when nothing better is found."""
    tic = time.perf_counter()
    variables = dict(variables)
    cert = certificate if certificate is not None else problem.certificate(**variables)
    if not cert.certified or not math.isfinite(cert.rel_gap) or cert.rel_gap > tol:
        return variables, cert, {"skipped": "the point is not certified at tol"}
    beta = np.asarray(cert.dual_point, dtype=np.float64)
    C = problem.upper_bounds
    eps0 = float(np.clip(math.sqrt(max(cert.rel_gap, 0.0)), EPS_MIN, EPS_MAX))
    if cert.rel_gap <= EXACT_GAP and _bounds_exact(problem, variables, min(eps0, EXACT_GAP)):
        return (
            variables,
            cert,
            {"skipped": "already exact: every coefficient near a bound is at it"},
        )
    size = np.abs(beta)
    near0 = size <= eps0 * np.minimum(C, np.max(size, initial=0.0))
    nearC = size >= (1.0 - eps0) * C
    if np.all(beta[near0] == 0.0) and np.all(size[nearC] == C[nearC]):
        return (
            variables,
            cert,
            {"skipped": "already exact: every coefficient near a bound is at it"},
        )
    report: dict[str, Any] = {"rel_gap_before": float(cert.rel_gap), "tried": []}
    best = None
    eps = eps0
    while eps <= EPS_MAX * (1 + 1e-9):
        found = _finished(problem, beta, eps)
        if found is not None:
            new_vars = {"alpha": problem.split(found[0]), "b": found[1]}
            new_cert = problem.certificate(**new_vars)
            report["tried"].append([eps, float(new_cert.rel_gap)])
            if new_cert.certified and (best is None or new_cert.rel_gap < best[1].rel_gap):
                best = (new_vars, new_cert, eps, found[0])
            if best is not None and best[1].rel_gap <= STOP_GAP:
                break
        eps *= 10.0
    report["seconds"] = time.perf_counter() - tic
    if best is None or best[1].rel_gap > tol:
        report["accepted"] = False
        return variables, cert, report
    new_vars, new_cert, eps, finished = best
    report.update(
        accepted=True, eps=eps, rel_gap_after=float(new_cert.rel_gap),
        support=int(np.count_nonzero(finished)),
    )  # fmt: skip
    return {**variables, **new_vars}, new_cert, report
