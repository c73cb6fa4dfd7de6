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
its Cholesky factorization failed on every face.)
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import get_lapack_funcs

#: A Cholesky factor whose smallest squared pivot is below this times its largest is singular
#: enough for the caller's eigendecomposition instead.
CHOLESKY_RCOND = 1e-12

#: LAPACK's Cholesky factorization and solve, for float64.
_POTRF, _POTRS = get_lapack_funcs(("potrf", "potrs"), (np.zeros((1, 1)),))


def definite_solve(A: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """``A⁻¹ rhs`` by a Cholesky factorization where ``A`` is clearly positive definite (its
    squared pivots within :data:`CHOLESKY_RCOND` of each other), else None."""
    if A.shape[0] == 0:
        return np.zeros_like(rhs)
    factor, info = _POTRF(A, lower=1, clean=0)
    if info != 0:
        return None
    pivots = np.abs(np.diagonal(factor))
    if not pivots.min() ** 2 > CHOLESKY_RCOND * pivots.max() ** 2:
        return None
    x, info = _POTRS(factor, rhs, lower=1)
    return x if info == 0 and np.isfinite(x).all() else None


def face_step(A: np.ndarray, g: np.ndarray, y: np.ndarray | None, residual: float = 0.0):
    """``(p, ν)`` of the face whose block of Q̃ is ``A`` (``g`` the gradient on it, ``y`` its
    labels for a free bias, else None; ``residual`` the label sum to remove), or None where the
    face's reduced Hessian is not clearly positive definite (a singular face: the caller's
    eigendecomposition then finds its null space)."""
    m = A.shape[0]
    if y is None:
        p = definite_solve(A, -g)
        return None if p is None else (p, 0.0)
    if m < 2:
        return None  # the label sum alone fixes p: the caller's general solve
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
    z1 = sigma * residual / root
    z2 = definite_solve(H[1:, 1:], -(c[1:] + H[1:, 0] * z1))
    if z2 is None:
        return None
    z = np.empty(m)
    z[0], z[1:] = z1, z2
    nu = (float(H[0] @ z) + float(c[0])) / (sigma * root)
    p = z - (beta * float(v @ z)) * v
    if not (np.isfinite(p).all() and math.isfinite(nu)):
        return None
    return p, nu
