"""The dense linear systems of the exact finish (solvers/exact_finish.py): the KKT equations of
the free multipliers, ``[Q_FF y_F; y_Fᵀ 0][α_F; b] = rhs`` for a free bias, else
``Q_FF α_F = rhs``.

Three solves, the cheapest that applies: Jacobi's iteration where ``Q_FF`` is strictly
diagonally dominant (an RBF kernel nearly the identity), LAPACK's Cholesky factorization where it
is positive definite and well-conditioned (the solution then unique), else the minimum-norm
correction of the point's own multipliers by LAPACK's rank-revealing ``gelsy`` (a singular
system, α not unique: the solution nearest the point).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import get_lapack_funcs

#: Relative cut-off of the rank-revealing solve (singular values below are dropped).
RANK_RTOL = 1e-12
#: The KKT system is solved by a Cholesky factorization where the free block's reciprocal
#: condition number (LAPACK's estimate) is at least this, far from the rank-revealing solve's
#: cut-off; by the rank-revealing solve otherwise.
DEFINITE_RCOND = 1e-8
#: Jacobi's iteration solves the KKT system where the free block's off-diagonal row sums are
#: at most this fraction of its diagonal, in at most ``JACOBI_STEPS`` steps (ρ^50 ≤ 1e-30).
DOMINANCE, JACOBI_STEPS = 0.25, 50
#: The unit roundoff of float64, ``u = 2⁻⁵³``.
UNIT_ROUNDOFF = float(np.finfo(np.float64).eps) / 2.0


def kkt_solve(problem, alpha, free, x0, b0, K_FF, r_F, margin: float = 1.0):
    """The free multipliers (and b, for a free bias) solving the KKT equations with the others
    at ``alpha`` (``K_FF`` the kernel block of the free set, ``r_F`` the other multipliers' part
    of its decision values, ``margin`` the hinge's margin asked): the unique solution where
    :func:`definite_solution` applies, else the minimum-norm correction of ``(x0, b0)``; None
    if not finite."""
    y = problem.y
    yF = y[free]
    Q = K_FF * np.outer(yF, yF)
    if problem.loss == "squared_hinge":
        Q[np.diag_indices_from(Q)] += 1.0 / (2.0 * problem.upper_bounds[free])
    rhs = margin - yF * r_F
    m = free.size
    if problem.bias == "free":
        M = np.empty((m + 1, m + 1))
        M[:m, :m] = Q
        M[:m, m] = yF
        M[m, :m] = yF
        M[m, m] = 0.0
        tail, rhs = rhs, np.empty(m + 1)
        rhs[:m], rhs[m] = tail, -float(y @ alpha)
        start = np.empty(m + 1)
        start[:m], start[m] = x0, 0.0 if b0 is None else float(b0)
    else:
        M, start = Q, x0
    residual = rhs - M @ start
    delta = definite_solution(Q, yF if problem.bias == "free" else None, residual)
    if delta is None:  # singular or ill-conditioned: the rank-revealing solve
        cut = RANK_RTOL * max(1.0, float(abs(M).max()))
        delta = min_norm_solution(M, residual, cut)
    if delta is None:
        return None
    x = start + delta
    if not np.isfinite(x).all():
        return None
    if problem.bias == "free":
        return x[:m], float(x[m])
    return x, None


def definite_solution(Q: np.ndarray, y: np.ndarray | None, rhs: np.ndarray) -> np.ndarray | None:
    """The solution of ``Q δ = rhs``, or for a free bias (``y`` given) of the bordered system
    ``[Q y; yᵀ 0][δ; δ_b] = rhs``, by :func:`dominant_solution` where it applies, else by
    LAPACK's Cholesky factorization of ``Q`` (``potrf``, ``m³/3`` flops, against ``gelsy``'s
    pivoted QR at about five times the time for 360 free multipliers): ``z₁ = Q⁻¹ rhs_F``,
    ``z₂ = Q⁻¹ y``, ``δ_b = (yᵀz₁ − rhs_b)/yᵀz₂``, ``δ = z₁ − δ_b z₂`` (the Schur complement
    ``yᵀQ⁻¹y > 0``). Only where ``Q`` is positive definite (dominant, or with LAPACK's estimate
    of its reciprocal condition number, ``pocon``, at least :data:`DEFINITE_RCOND`): the system
    is then non-singular, its solution unique, the one the rank-revealing solve would give;
    None otherwise (that solve then runs)."""
    m = Q.shape[0]
    both = dominant_solution(Q, rhs if y is None else np.column_stack((rhs[:m], y)))
    if both is None:
        factor, info = _POTRF(Q, lower=1, clean=0)
        if info != 0:
            return None
        rcond, info = _POCON(factor, float(np.abs(Q).sum(axis=0).max()), uplo="L")
        if info != 0 or not rcond >= DEFINITE_RCOND:
            return None
        both, info = _POTRS(factor, rhs if y is None else np.column_stack((rhs[:m], y)), lower=1)
        if info != 0:
            return None
    if y is None:
        return both
    z1, z2 = both[:, 0], both[:, 1]
    schur = float(y @ z2)
    if not schur > 0.0:
        return None
    step = (float(y @ z1) - float(rhs[m])) / schur
    out = np.empty(m + 1)
    out[:m] = z1 - step * z2
    out[m] = step
    return out


def dominant_solution(Q: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """``Q⁻¹ rhs`` by Jacobi's iteration ``x ← x + D⁻¹(rhs − Qx)`` where ``Q`` is strictly
    diagonally dominant, ``Σ_{j≠i} |Q_ij| ≤ ρ Q_ii`` with ``ρ ≤`` :data:`DOMINANCE` (an RBF
    kernel nearly the identity: digits pairs at γ = 1e3, some at γ = 10): the error contracts by
    ρ a step, and each step costs one product with ``Q`` where the factorization costs ``m/3``
    of them. None where ``Q`` is not so dominant or the steps do not fall to rounding within
    :data:`JACOBI_STEPS` (the factorization then runs)."""
    diag = Q.diagonal().copy()
    if not (diag > 0.0).all():
        return None
    off = np.abs(Q).sum(axis=1) - diag
    if not (off <= DOMINANCE * diag).all():
        return None
    scale = diag if rhs.ndim == 1 else diag[:, None]
    x = rhs / scale
    for _ in range(JACOBI_STEPS):
        step = (rhs - Q @ x) / scale
        x += step
        if np.all(np.abs(step).max(axis=0) <= 4.0 * UNIT_ROUNDOFF * np.abs(x).max(axis=0)):
            return x
    return None


#: LAPACK's Cholesky factorization, its condition estimate and its solve, for float64.
_POTRF, _POCON, _POTRS = get_lapack_funcs(("potrf", "pocon", "potrs"), (np.zeros((1, 1)),))


def min_norm_solution(M: np.ndarray, rhs: np.ndarray, cond: float) -> np.ndarray | None:
    """The minimum-norm least-squares solution of the square system ``M δ = rhs``, singular
    values below ``cond`` times the largest dropped: LAPACK's rank-revealing ``gelsy`` called
    directly (SciPy's ``lstsq`` around it costs several times the solve of a small system);
    None when LAPACK fails."""
    gelsy, gelsy_lwork = _GELSY if M.dtype == rhs.dtype == np.float64 else _gelsy_of(M, rhs)
    m = M.shape[0]
    lwork, info = gelsy_lwork(m, m, 1, cond)
    if info != 0:
        return None
    pivots = np.zeros(m, dtype=np.int32)
    _, x, _, _, info = gelsy(M, rhs, pivots, cond, int(lwork))
    return x if info == 0 else None


def _gelsy_of(M, rhs):
    return get_lapack_funcs(("gelsy", "gelsy_lwork"), (M, rhs))


#: LAPACK's gelsy for float64 systems, looked up once.
_GELSY = _gelsy_of(np.zeros((1, 1)), np.zeros(1))
