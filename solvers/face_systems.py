"""The face systems of the active-set method (solvers/active_set.py): the step to the minimizer
of ``f = ½ αᵀQ̃α − Σα`` over the free multipliers F, the others held at their bounds.

Without an equality the step solves ``Q̃_FF p = −g_F`` (``g = Q̃α − 1``). For a free bias it
also keeps ``yᵀα = 0`` (up to a residual ``r`` it removes, ``y_Fᵀp = −r``), and the KKT system
is bordered, ``[Q̃_FF y_F; y_Fᵀ 0][p; ν] = [−g_F; −r]``. Here the border is eliminated by the
null-space method (Nocedal & Wright, *Numerical Optimization*, 2006, §16.2): the Householder
reflection ``P = I − β v vᵀ`` with ``P y_F = −σ√m e₁`` (``σ = sign y₁``) turns the constraint
into the first coordinate of ``z = P p``, ``z₁ = σ r/√m``, and the rest solves the reduced
system ``H₂₂ z₂ = −(c₂ + H₂₁ z₁)`` with ``H = P Q̃_FF P`` (a rank-two update of ``Q̃_FF``,
``m²`` work) and ``c = P g_F``; then ``ν = (H₁· z + c₁)/(σ√m)``. ``H₂₂`` is the Hessian of ``f``
on ``y_Fᵀp = 0``: positive definite wherever the face is non-singular, and unchanged when a
constant is added to the kernel (``Q̃ + κ y yᵀ``), so that the shifted RBF kernel of
:func:`~solvers.active_set.dense_hessian` needs no shift back. (Adding ``ρ y_F y_Fᵀ`` to
``Q̃_FF`` instead, with ``ρ`` its largest entry, left the matrix indefinite where ``Q̃_FF``
holds ``expm1(−γ‖x − x'‖²)`` at a small γ, one negative eigenvalue of the distance matrix, and
its Cholesky factorization failed on every face.) A singular face (rows repeated, a kernel of
low numerical rank) is told by the pivoted factorization itself, whose null space gives the
minimum-norm step or, for an inconsistent system, the direction without curvature: no
eigendecomposition.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import get_lapack_funcs

#: A pivot of the pivoted Cholesky factorization whose square is at most this times the
#: largest diagonal entry ends it: the rest of the face is its null space.
CHOLESKY_RCOND = 1e-12
#: The right-hand side's part in the null space counts (a direction without curvature) above
#: this times its norm.
INCONSISTENT_RTOL = 1e-9

#: LAPACK's pivoted Cholesky factorization, its solve and a triangular solve, for float64.
_PSTRF, _POTRS, _TRTRS = get_lapack_funcs(("pstrf", "potrs", "trtrs"), (np.zeros((1, 1)),))


def semidefinite_solve(H: np.ndarray, b: np.ndarray):
    """``(x, consistent)`` for ``H x = b``, ``H`` symmetric positive semidefinite, by the
    pivoted Cholesky factorization ``Πᵀ H Π = L Lᵀ`` (LAPACK's ``pstrf``, Higham 2002, §10.3),
    stopped where the remaining diagonal is at most :data:`CHOLESKY_RCOND` of the largest: of
    rank r, with ``L = [L₁₁; L₂₁]``, the null space of ``H`` is spanned by the columns of
    ``N = Π [−L₁₁⁻ᵀ L₂₁ᵀ; I]``. Where ``b``'s projection onto it is at most
    :data:`INCONSISTENT_RTOL` of ``b`` the system is consistent and ``x`` its minimum-norm
    solution; else ``x`` is that projection, along which ``½xᵀHx − bᵀx`` decreases without
    curvature, and ``consistent`` False. None where LAPACK fails."""
    n = H.shape[0]
    if n == 0:
        return np.zeros(0), True
    largest = float(np.max(np.diagonal(H)))
    if not (largest > 0.0 and np.isfinite(largest)):
        return None
    factor, piv, rank, info = _PSTRF(H, tol=CHOLESKY_RCOND * largest, lower=1)
    if info < 0:
        return None
    order = piv[:n] - 1
    bp = b[order]
    x = np.empty(n)
    if rank == n:
        xp, info = _POTRS(factor, bp, lower=1)
        if info != 0:
            return None
        x[order] = xp
        return x, True
    L11, L21 = factor[:rank, :rank], factor[rank:, :rank]
    W, info = _TRTRS(L11, np.ascontiguousarray(L21.T), lower=1, trans=1)  # L₁₁⁻ᵀ L₂₁ᵀ
    if info != 0:
        return None
    N = np.vstack((-W, np.eye(n - rank)))
    gram = N.T @ N  # I + WᵀW: positive definite

    def projected(v):
        return N @ np.linalg.solve(gram, N.T @ v)

    null_part = projected(bp)
    if np.linalg.norm(null_part) > INCONSISTENT_RTOL * max(float(np.linalg.norm(b)), 1e-300):
        x[order] = null_part
        return x, False
    basic = np.zeros(n)
    if rank:
        basic[:rank], info = _POTRS(L11, bp[:rank], lower=1)
        if info != 0:
            return None
    x[order] = basic - projected(basic)
    return x, True


def face_step(A: np.ndarray, g: np.ndarray, y: np.ndarray | None, residual: float = 0.0):
    """``(p, ν, consistent)`` of the face whose block of Q̃ is ``A`` (``g`` the gradient on it,
    ``y`` its labels for a free bias, else None; ``residual`` the label sum to remove): the
    step to the face's minimizer and its bias, the minimum-norm one where the face is
    singular (:func:`semidefinite_solve` on the reduced Hessian); where the face's system is
    inconsistent, ``p`` is a direction of decrease without curvature (on ``y_Fᵀp = 0``), ``ν``
    0 and ``consistent`` False. None where LAPACK fails (the caller's eigendecomposition then
    runs)."""
    m = A.shape[0]
    if y is None:
        solved = semidefinite_solve(A, -g)
        return None if solved is None else (solved[0], 0.0, solved[1])
    root = math.sqrt(m)
    sigma = 1.0 if y[0] > 0 else -1.0
    v = y.astype(np.float64, copy=True)
    v[0] += sigma * root
    beta = 1.0 / (sigma * root * v[0])  # 2/vᵀv, vᵀv = 2m + 2σ√m y₁ = 2σ√m v₁
    w = A @ v
    s = beta * float(v @ w)
    # H = P A P = A − β(v wᵀ + w vᵀ) + β² (vᵀw) v vᵀ
    u = w - (0.5 * s) * v
    H = A - beta * (np.outer(v, u) + np.outer(u, v))
    c = g - (beta * float(v @ g)) * v
    z = np.empty(m)
    z[0] = sigma * residual / root
    solved = semidefinite_solve(H[1:, 1:], -(c[1:] + H[1:, 0] * z[0]))
    if solved is None:
        return None
    z[1:], consistent = solved
    if consistent:
        nu = (float(H[0] @ z) + float(c[0])) / (sigma * root)
    else:  # a direction on y_Fᵀp = 0, the residual left to the next solve
        z[0], nu = 0.0, 0.0
    p = z - (beta * float(v @ z)) * v
    if not (np.isfinite(p).all() and math.isfinite(nu)):
        return None
    return p, nu, consistent
