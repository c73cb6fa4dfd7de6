"""What the ν-SVC, ν-SVR and one-class problems share: the kernel input, the kernel products, the
ν checks, LIBSVM's greedy starting point and the exact best offset of a piecewise-linear primal.

The best offset (:func:`best_offset`) minimizes ``φ(t) = −Δ·t + Σ_i w_i max(0, t − s_i)`` over a
real t: its slope ``−Δ + Σ_{s_i < t} w_i`` does not decrease, so the minimizers are the weighted
quantile ``[s_(k), s_(k+1)]`` at mass Δ (one point unless the mass falls exactly between two
scores). Each certificate of the family reduces its offsets (ρ, b, ε) to such terms; taking the
midpoint of the interval is LIBSVM's rule when no multiplier is free (Chang & Lin 2001, §4).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy import sparse

from svmbench.problems.kernel_dual import EIGEN_CHECK_MAX_N, GRAM_MEMORY_LIMIT_MB, PSD_RTOL
from svmbench.problems.kernels import KERNELS, Kernel, resolve_gamma
from svmbench.problems.kernels import squared_norms as _squared_norms
from svmbench.problems.models import KernelModel, finite
from svmbench.problems.validation import check_option, check_real, check_X

#: A model keeps the coefficients above this fraction of the largest bound: an interior-point
#: solver leaves every multiplier strictly inside its box (1e-12 off the margin), and a model
#: over every training row would be no support-vector model. Dropping them moves a decision
#: value by at most ``n · SUPPORT_RTOL · max c_i · max |K|``.
SUPPORT_RTOL = 1e-8
#: A mass within this relative distance of a cumulative weight counts as equal to it.
MASS_RTOL = 1e-12


def kernel_input(X, kernel, gamma, degree, coef0, sample_weight):
    """``(X, Kernel)``: X checked (a square symmetric Gram matrix for ``"precomputed"``), γ
    resolved by the one rule (:func:`~svmbench.problems.kernels.resolve_gamma`)."""
    check_option("kernel", kernel, KERNELS)
    if kernel == "precomputed":
        K = check_X(X, name="X (precomputed kernel)", allow_sparse=False)
        if K.shape[0] != K.shape[1]:
            raise ValueError(
                f"X must be a square Gram matrix for kernel='precomputed', got shape {K.shape}"
            )
        scale = max(1.0, float(np.max(np.abs(K))))
        if np.max(np.abs(K - K.T)) > 1e-10 * scale:
            raise ValueError("X must be a symmetric Gram matrix for kernel='precomputed'")
        X = np.ascontiguousarray(0.5 * (K + K.T))
    else:
        X = check_X(X, allow_sparse=True)
    return X, Kernel(kernel, resolve_gamma(gamma, X, sample_weight), degree, coef0)


def check_targets(y, n_samples: int) -> np.ndarray:
    """Regression targets: a finite float64 vector of length ``n_samples``."""
    try:
        t = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("y must be a 1-D array of real targets") from None
    if t.ndim != 1 or t.shape[0] != n_samples:
        raise ValueError(f"y must be 1-D of length n_samples={n_samples}, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("y must contain only finite targets (a regression target is NaN or inf)")
    return np.ascontiguousarray(t)


def check_nu(nu) -> float:
    """ν as a float in (0, 1] (a TypeError or ValueError naming ``nu`` otherwise)."""
    return check_real("nu", nu, low=0.0, high=1.0, closed="right")


def greedy_start(upper: np.ndarray, total: float) -> np.ndarray:
    """LIBSVM's starting point: in order, ``α_i = min(u_i, what is left of total)``."""
    filled = np.minimum(np.cumsum(upper), total)
    # differences of rounded partial sums can exceed u_i by an ulp: the start must be in the box
    return np.clip(np.diff(np.concatenate([[0.0], filled])), 0.0, upper)


def best_offset(scores: np.ndarray, weights: np.ndarray, mass: float) -> tuple[float, float]:
    """The minimizer interval's midpoint of ``φ(t) = −mass·t + Σ w_i max(0, t − s_i)`` and
    ``φ`` there (see the module docstring); ``mass`` at most ``Σ w_i`` (else φ is unbounded)."""
    keep = weights > 0
    s, w = scores[keep], weights[keep]
    order = np.argsort(s, kind="stable")
    s, cum = s[order], np.cumsum(w[order])
    k = int(np.searchsorted(cum, mass * (1.0 - MASS_RTOL), side="left"))
    k = min(k, s.size - 1)
    lo = s[k]
    if abs(cum[k] - mass) <= MASS_RTOL * max(mass, 1.0) and k + 1 < s.size:
        t = 0.5 * (lo + s[k + 1])
    else:
        t = lo
    return float(t), float(-mass * t + w @ np.maximum(0.0, t - s))


class KernelFamilyMixin:
    """Kernel access of a family problem. The host is a frozen dataclass with ``X``, ``kernel``,
    ``gamma`` (resolved), ``degree``, ``coef0``."""

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @cached_property
    def kernel_spec(self) -> Kernel:
        return Kernel(self.kernel, self.gamma, self.degree, self.coef0)

    @property
    def kernel_params(self) -> dict:
        return self.kernel_spec.parameters

    @cached_property
    def squared_norms(self) -> np.ndarray:
        return _squared_norms(self.X)

    @cached_property
    def gram(self) -> np.ndarray:
        """The kernel matrix K (n × n), computed once."""
        if self.kernel == "precomputed":
            return self.X
        return self.kernel_spec(self.X)

    def kernel_times(self, coef: np.ndarray) -> np.ndarray:
        """``K @ coef`` over the non-zero coefficients, in bounded memory."""
        if self.kernel == "precomputed" or "gram" in self.__dict__:
            return self.gram @ coef
        nz = np.flatnonzero(coef)
        if nz.size == 0:
            return np.zeros(self.n_samples)
        sqn_Z = self.squared_norms[nz] if self.kernel == "rbf" else None
        return self.kernel_spec.dot(
            self.X, self.X[nz], coef[nz], sqn_X=self.squared_norms, sqn_Z=sqn_Z
        )

    @property
    def gram_fits_in_memory(self) -> bool:
        """Whether the dense Hessian of the general form (m² entries) fits the Gram limit."""
        m = self.smo_form().n_variables
        return m * m * 8 <= GRAM_MEMORY_LIMIT_MB * 2**20

    @cached_property
    def min_eigenvalue(self) -> float:
        """Smallest eigenvalue of K (0 for kernels PSD by construction; ``-inf`` beyond
        ``EIGEN_CHECK_MAX_N``: treated as indefinite)."""
        if self.kernel_spec.psd_by_construction:
            return 0.0
        if self.n_samples > EIGEN_CHECK_MAX_N:
            return -np.inf
        return float(np.linalg.eigvalsh(self.gram)[0])

    @property
    def convex(self) -> bool:  # type: ignore[override]
        """Whether K is positive semi-definite (weak duality holds)."""
        if self.kernel_spec.psd_by_construction:
            return True
        scale = max(1.0, float(np.max(np.abs(self.kernel_spec.diagonal(self.X)))))
        return self.min_eigenvalue >= -PSD_RTOL * scale

    def kernel_model(self, coef: np.ndarray, b: float, scale: float = 1.0) -> KernelModel | None:
        """``f(x) = Σ_j c_j K(x_j, x) + b`` over the coefficients above ``SUPPORT_RTOL · max
        c_i``, all divided by ``scale``; None for a non-finite point."""
        if not finite(coef, b, scale) or scale == 0.0:
            return None
        support = np.flatnonzero(np.abs(coef) > SUPPORT_RTOL * float(np.max(self.upper_bounds)))
        vectors = None if self.kernel == "precomputed" else self.X[support]
        if vectors is not None and not sparse.issparse(vectors):
            vectors = np.ascontiguousarray(vectors)
        return KernelModel(
            support_vectors=vectors,
            dual_coef=coef[support] / scale,
            b=float(b) / scale,
            kernel=self.kernel,
            support=support,
            n_train=self.n_samples,
            gamma=float(self.gamma),
            degree=self.degree,
            coef0=float(self.coef0),
        )

    def _given(self, name: str, value, length: int) -> np.ndarray:
        a = np.asarray(value, dtype=np.float64).ravel()
        if a.shape[0] != length:
            raise ValueError(f"{name} must have length {length}, got {a.shape[0]}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must contain only finite values")
        return a


__all__ = [
    "KernelFamilyMixin",
    "best_offset",
    "check_nu",
    "check_targets",
    "greedy_start",
    "kernel_input",
]
