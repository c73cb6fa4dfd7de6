"""Kernel access for the kernel problems beyond C-SVC (ε-SVR and the family of issue 27).

:class:`KernelAccessMixin` gives a frozen problem with fields ``X, kernel, gamma, degree, coef0``
(γ resolved) its kernel description, diagonal, Gram matrix (within
:data:`~svmbench.problems.kernel_dual.GRAM_MEMORY_LIMIT_MB`), fused products ``K @ coef`` over
the non-zero coefficients, and the PSD test of docs/ARCHITECTURE.md §2 (the rules of
:class:`~svmbench.problems.kernel_dual.KernelDual`). :func:`checked_kernel_input` validates ``X``
or a precomputed Gram matrix as the kernel dual does.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy.sparse.linalg import eigsh

from svmbench.problems.kernel_dual import EIGEN_CHECK_MAX_N, GRAM_MEMORY_LIMIT_MB, PSD_RTOL
from svmbench.problems.kernels import Kernel, squared_norms
from svmbench.problems.validation import check_X

__all__ = ["KernelAccessMixin", "checked_kernel_input"]


def checked_kernel_input(X, kernel: str):
    """``X`` as ``check_X`` returns it, or for ``kernel="precomputed"`` a dense, square,
    symmetric (to 1e-10 relative) Gram matrix, symmetrized exactly."""
    if kernel != "precomputed":
        return check_X(X, allow_sparse=True)
    K = check_X(X, name="X (precomputed kernel)", allow_sparse=False)
    if K.shape[0] != K.shape[1]:
        raise ValueError(
            f"X must be a square Gram matrix for kernel='precomputed', got shape {K.shape}"
        )
    scale = max(1.0, float(np.max(np.abs(K))))
    if np.max(np.abs(K - K.T)) > 1e-10 * scale:
        raise ValueError("X must be a symmetric Gram matrix for kernel='precomputed'")
    return np.ascontiguousarray(0.5 * (K + K.T))


class KernelAccessMixin:
    """Kernel products of a problem over ``X`` (see the module docstring)."""

    X: np.ndarray
    kernel: str
    gamma: float
    degree: int
    coef0: float

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @cached_property
    def kernel_spec(self) -> Kernel:
        """The kernel and its parameters (γ resolved)."""
        return Kernel(self.kernel, self.gamma, self.degree, self.coef0)

    @property
    def kernel_params(self) -> dict:
        return self.kernel_spec.parameters

    @cached_property
    def squared_norms(self) -> np.ndarray:
        """``‖x_i‖²`` of every example, computed once."""
        return squared_norms(self.X)

    @cached_property
    def kernel_diagonal(self) -> np.ndarray:
        """``K(x_i, x_i)`` of every example, computed once."""
        if self.kernel in ("linear", "poly", "sigmoid"):
            return self.kernel_spec.diagonal(self.X, self.squared_norms)
        return self.kernel_spec.diagonal(self.X)

    @property
    def gram_fits_in_memory(self) -> bool:
        return self.n_samples**2 * 8 <= GRAM_MEMORY_LIMIT_MB * 2**20

    @cached_property
    def gram(self) -> np.ndarray:
        """The kernel matrix K (n×n), computed once; only within ``GRAM_MEMORY_LIMIT_MB``."""
        if self.kernel == "precomputed":
            return self.X
        if not self.gram_fits_in_memory:
            raise MemoryError(
                f"the {self.n_samples}×{self.n_samples} Gram matrix exceeds "
                f"GRAM_MEMORY_LIMIT_MB={GRAM_MEMORY_LIMIT_MB}"
            )
        return self.kernel_spec(self.X)

    def kernel_times(self, coef: np.ndarray) -> np.ndarray:
        """``K @ coef`` over the non-zero coefficients, in bounded memory."""
        if self.kernel == "precomputed" or "gram" in self.__dict__:
            return self.gram @ coef
        nz = np.flatnonzero(coef)
        if nz.size == 0:
            return np.zeros(self.n_samples)
        return self.kernel_against(self.X, nz, coef[nz], self.squared_norms)

    def kernel_against(self, X, nz, coef, sqn_X=None) -> np.ndarray:
        """``K(X, X_nz) @ coef`` (the training rows' cached norms for RBF)."""
        sqn_Z = self.squared_norms[nz] if self.kernel == "rbf" else None
        return self.kernel_spec.dot(X, self.X[nz], coef, sqn_X=sqn_X, sqn_Z=sqn_Z)

    @cached_property
    def min_eigenvalue(self) -> float:
        """Smallest eigenvalue of K (``-inf`` when too large to compute: indefinite)."""
        if self.kernel_spec.psd_by_construction:
            return 0.0
        n = self.n_samples
        if n > EIGEN_CHECK_MAX_N:
            return -np.inf
        if n <= 2000:
            return float(np.linalg.eigvalsh(self.gram)[0])
        return float(eigsh(self.gram, k=1, which="SA", return_eigenvectors=False)[0])

    @property
    def convex(self) -> bool:  # type: ignore[override]
        """Whether K is positive semi-definite (weak duality holds)."""
        if self.kernel_spec.psd_by_construction:
            return True
        scale = (
            max(1.0, float(np.max(np.abs(self.kernel_diagonal))))
            if np.isfinite(self.min_eigenvalue)
            else 1.0
        )
        return self.min_eigenvalue >= -PSD_RTOL * scale
