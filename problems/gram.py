"""A precomputed Gram matrix, checked once: square, symmetric, and how far below 0 its spectrum
may reach.

A kernel dual with ``kernel="precomputed"`` reads ``X`` as the Gram matrix K. K must be square and
symmetric up to rounding, ``max|K − Kᵀ| ≤ 1e-10 · max(1, max|K_ij|)``, and the problem keeps
``½(K + Kᵀ)``, exactly symmetric (:func:`symmetric_gram`). A principal sub-block of that matrix
(a one-vs-one pair's rows and columns) is exactly symmetric too, so a reduction checks the user's
matrix once per fit and hands each pair its block (``KernelDual._on_checked_gram``).

Convexity (:func:`cholesky_bound`): K is taken as positive semi-definite when every eigenvalue
is at least ``−τ``; LAPACK's Cholesky factorization of ``K + τI`` succeeding proves it (the
factor exists only for a positive definite matrix), so the eigenvalues are computed only where
it fails (Golub & Van Loan, Matrix Computations, §4.2).
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
from scipy.linalg.lapack import dpotrf

from svmbench.problems.validation import check_X, validated_input

#: ``max|K − Kᵀ|`` above this share of ``max(1, max|K_ij|)`` is not rounding: the matrix is refused.
SYMMETRY_RTOL = 1e-10


#: The side of the square tiles :func:`symmetric_gram` reads K in: a tile and its mirror image
#: stay in cache together (a whole transposed K was read twice as slowly at n = 1797).
TILE = 256


def symmetric_gram(K, checked: bool = False) -> np.ndarray:
    """``½(K + Kᵀ)`` (C-contiguous float64) of the Gram matrix ``K``, checked: finite, dense,
    square, symmetric within :data:`SYMMETRY_RTOL` of its largest entry (``ValueError`` or
    ``TypeError`` naming X otherwise). Read tile by tile beside each tile's mirror image, the
    same values as ``0.5 * (K + K.T)``; an exactly symmetric K (a Gram matrix BLAS computed as
    ``X Xᵀ``, or one symmetrized already) is returned as it is, its own values, without a copy.
    ``max|K_ij|`` is read only where ``max|K − Kᵀ|`` exceeds ``SYMMETRY_RTOL`` itself (below it,
    the test holds whatever the scale ≥ 1). ``checked``: K is a problem's X found finite
    already (a multiclass problem's), not scanned again."""
    with validated_input(K) if checked else nullcontext():
        K = check_X(K, name="X (precomputed kernel)", allow_sparse=False)
    n = K.shape[0]
    if n != K.shape[1]:
        raise ValueError(
            f"X must be a square Gram matrix for kernel='precomputed', got shape {K.shape}"
        )
    S = None  # ½(K + Kᵀ), made at the first tile where K and Kᵀ differ
    work = np.empty((min(n, TILE), min(n, TILE)))
    worst = 0.0
    for i in range(0, n, TILE):
        rows = slice(i, min(n, i + TILE))
        for j in range(i, n, TILE):
            cols = slice(j, min(n, j + TILE))
            A, B = K[rows, cols], K[cols, rows].T
            w = work[: A.shape[0], : A.shape[1]]
            np.subtract(A, B, out=w)
            np.abs(w, out=w)
            differs = float(w.max())
            worst = max(worst, differs)
            if S is None:
                if differs == 0.0:
                    continue  # K = Kᵀ on this tile and on those before it
                S = K.copy()
            np.add(A, B, out=w)
            w *= 0.5  # 0.5 · (K_ij + K_ji), entry for entry
            S[rows, cols] = w
            S[cols, rows] = w.T
    if worst > SYMMETRY_RTOL and worst > SYMMETRY_RTOL * max(1.0, float(np.max(np.abs(K)))):
        raise ValueError("X must be a symmetric Gram matrix for kernel='precomputed'")
    return K if S is None else S


def cholesky_bound(K: np.ndarray, tau: float, symmetric: bool = False) -> float | None:
    """``−τ`` if LAPACK factors ``K + τI`` (then every eigenvalue of the symmetric K is above
    ``−τ``), else None. The shifted copy is made in Fortran order, the order LAPACK reads, so
    that no second copy is made for the call; ``symmetric``: K is exactly symmetric (a
    precomputed kernel's checked matrix or its block), so that its plain copy, read transposed,
    is already that Fortran-order copy, entry for entry."""
    n = K.shape[0]
    if symmetric:
        shifted = K.copy().T  # Kᵀ = K: the same bytes as np.asfortranarray(K)
    else:
        shifted = np.asfortranarray(K)
        if shifted is K:
            shifted = K.copy(order="F")
    shifted.reshape(-1, order="F")[:: n + 1] += tau  # the diagonal, in place
    _, info = dpotrf(shifted, lower=1, clean=0, overwrite_a=1)
    return -tau if info == 0 else None
