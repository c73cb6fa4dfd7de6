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

import numpy as np
from scipy.linalg.lapack import dpotrf

from svmbench.problems.validation import check_X

#: ``max|K − Kᵀ|`` above this share of ``max(1, max|K_ij|)`` is not rounding: the matrix is refused.
SYMMETRY_RTOL = 1e-10


def symmetric_gram(K) -> np.ndarray:
    """``½(K + Kᵀ)`` (C-contiguous float64) of the Gram matrix ``K``, checked: finite, dense,
    square, symmetric within :data:`SYMMETRY_RTOL` of its largest entry (``ValueError`` or
    ``TypeError`` naming X otherwise)."""
    K = check_X(K, name="X (precomputed kernel)", allow_sparse=False)
    if K.shape[0] != K.shape[1]:
        raise ValueError(
            f"X must be a square Gram matrix for kernel='precomputed', got shape {K.shape}"
        )
    scale = max(1.0, float(K.max()), -float(K.min()))  # max(1, max|K_ij|), no |K| array
    work = np.subtract(K, K.T)
    np.abs(work, out=work)
    if float(work.max()) > SYMMETRY_RTOL * scale:
        raise ValueError("X must be a symmetric Gram matrix for kernel='precomputed'")
    np.add(K, K.T, out=work)
    work *= 0.5  # 0.5 · (K + Kᵀ), entry for entry
    return work


def cholesky_bound(K: np.ndarray, tau: float) -> float | None:
    """``−τ`` if LAPACK factors ``K + τI`` (then every eigenvalue of the symmetric K is above
    ``−τ``), else None. The shifted copy is made in Fortran order, the order LAPACK reads, so
    that no second copy is made for the call."""
    n = K.shape[0]
    shifted = np.asfortranarray(K)
    if shifted is K:
        shifted = K.copy(order="F")
    shifted.reshape(-1, order="F")[:: n + 1] += tau  # the diagonal, in place
    _, info = dpotrf(shifted, lower=1, clean=0, overwrite_a=1)
    return -tau if info == 0 else None
