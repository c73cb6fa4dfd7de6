"""SVM kernels ``K(x, x')`` and their Gram matrices.

- ``"linear"``: ``x·x'``
- ``"poly"``: ``(γ x·x' + c₀)^p``
- ``"rbf"``: ``exp(−γ‖x − x'‖²)`` (the lecture notes' Gaussian kernel)
- ``"sigmoid"``: ``tanh(γ x·x' + c₀)`` (the lecture notes' tanh kernel; not positive semi-definite
  in general)
- ``"precomputed"``: the caller gives the Gram matrix (kernels on sets, strings, graphs).

Matrices are computed by scikit-learn's pairwise kernels, in row blocks when they would be large.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import pairwise

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")

#: Row blocks of a kernel product hold at most this many entries (32 MB of float64), so that a
#: certificate adds little to a solver's own memory (SMO: its column cache plus O(n)).
BLOCK_ENTRIES = 4_000_000


def kernel_matrix(
    X, Y=None, *, kernel: str, gamma: float = 1.0, degree: int = 3, coef0: float = 0.0
) -> np.ndarray:
    """Dense ``K(X, Y)`` of shape (n_X, n_Y) for a kernel other than ``"precomputed"``."""
    Y = X if Y is None else Y
    if kernel == "linear":
        K = pairwise.linear_kernel(X, Y)
    elif kernel == "poly":
        K = pairwise.polynomial_kernel(X, Y, degree=degree, gamma=gamma, coef0=coef0)
    elif kernel == "rbf":
        K = pairwise.rbf_kernel(X, Y, gamma=gamma)
    elif kernel == "sigmoid":
        K = pairwise.sigmoid_kernel(X, Y, gamma=gamma, coef0=coef0)
    else:
        raise ValueError(f"kernel must be one of {KERNELS[:-1]} here, got {kernel!r}")
    return np.asarray(K, dtype=np.float64)


def kernel_dot(X, Z, coef: np.ndarray, **params) -> np.ndarray:
    """``K(X, Z) @ coef`` computed in row blocks of bounded memory (never the full matrix)."""
    n = X.shape[0]
    out = np.empty(n)
    rows = max(1, BLOCK_ENTRIES // max(1, Z.shape[0]))
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        out[start:stop] = kernel_matrix(X[start:stop], Z, **params) @ coef
    return out


def is_psd_by_construction(kernel: str, degree: float, coef0: float) -> bool:
    """True for kernels that are positive semi-definite for every data set.

    Linear and RBF always are; the polynomial kernel is for an integer degree ≥ 1 and c₀ ≥ 0.
    Sigmoid and precomputed kernels must be checked numerically.
    """
    if kernel in ("linear", "rbf"):
        return True
    if kernel == "poly":
        return float(degree).is_integer() and degree >= 1 and coef0 >= 0
    return False
