"""SVM kernels ``K(x, x')`` and their Gram matrices.

- ``"linear"``: ``x·x'``
- ``"poly"``: ``(γ x·x' + c₀)^p``
- ``"rbf"``: ``exp(−γ‖x − x'‖²)`` (the lecture notes' Gaussian kernel)
- ``"sigmoid"``: ``tanh(γ x·x' + c₀)`` (the lecture notes' tanh kernel; not positive semi-definite
  in general)
- ``"precomputed"``: the caller gives the Gram matrix (kernels on sets, strings, graphs).

Matrices are computed by scikit-learn's pairwise kernels. Products ``K(X, Z) c`` (certificates,
predictions) of dense rows are fused (:mod:`problems._kernel_products`): no kernel block is
stored, and the squared norms of the rows can be passed in, computed once.
"""

from __future__ import annotations

import numba
import numpy as np
from scipy import sparse
from sklearn.metrics import pairwise

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")

#: Row blocks of a kernel product hold at most this many entries (32 MB of float64), so that a
#: certificate adds little to a solver's own memory (SMO: its column cache plus O(n)).
BLOCK_ENTRIES = 4_000_000

#: Dense fused products of at least this many multiply-adds (rows × support vectors × features)
#: split their row blocks over the Numba threads, with the serial sums in each block (the values
#: do not depend on the thread count). Below, a parallel launch costs more than it saves.
PARALLEL_MIN_WORK = 20_000_000


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


def squared_norms(X) -> np.ndarray:
    """``‖x_i‖²`` of every row of a dense or CSR X (float64, contiguous)."""
    if sparse.issparse(X):
        return np.ascontiguousarray(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    X = np.asarray(X, dtype=np.float64)
    return np.ascontiguousarray(np.einsum("ij,ij->i", X, X))


def kernel_dot(
    X,
    Z,
    coef: np.ndarray,
    *,
    kernel: str,
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
    sqn_X: np.ndarray | None = None,
    sqn_Z: np.ndarray | None = None,
) -> np.ndarray:
    """``f = K(X, Z) @ coef``, ``f_i = Σ_j coef_j K(x_i, z_j)``, in bounded memory.

    Linear: one product through ``w = Zᵀ coef``. Other kernels, dense rows: the inner products,
    the kernel and the sum fused in float64 (:mod:`problems._kernel_products`), no kernel value
    stored, the row blocks over the Numba threads from :data:`PARALLEL_MIN_WORK` on (same
    values); ``sqn_X``, ``sqn_Z`` are the rows' squared norms, if already known (RBF). CSR rows
    (X or Z): blocks of at most :data:`BLOCK_ENTRIES` kernel entries (scikit-learn's kernels).
    """
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    n = X.shape[0]
    if kernel == "linear":
        w = Z.T @ coef
        return np.asarray(X @ w, dtype=np.float64).ravel()
    if kernel not in KERNELS[:-1]:
        raise ValueError(f"kernel must be one of {KERNELS[:-1]} here, got {kernel!r}")
    if Z.shape[0] == 0:
        return np.zeros(n)
    if sparse.issparse(X) or sparse.issparse(Z):
        # scikit-learn's kernels in row blocks: a sparse product of a block followed by the
        # jitted kernel-and-sum pass measured 2-2.5x slower (RBF, n = 5000, 3020 support
        # vectors, d = 200 at density 0.1 and d = 20 at 0.5) and even at d = 2000, density 0.01
        out = np.empty(n)
        rows = max(1, BLOCK_ENTRIES // Z.shape[0])
        params = {"kernel": kernel, "gamma": gamma, "degree": degree, "coef0": coef0}
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            out[start:stop] = kernel_matrix(X[start:stop], Z, **params) @ coef
        return out
    from svmbench.problems import _kernel_products as kp

    X = np.ascontiguousarray(X, dtype=np.float64)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    if kernel == "rbf":
        sqn_X = squared_norms(X) if sqn_X is None else sqn_X
        sqn_Z = squared_norms(Z) if sqn_Z is None else sqn_Z
    else:  # unused
        sqn_X, sqn_Z = np.zeros(n), np.zeros(Z.shape[0])
    code = kp.KERNEL_CODES[kernel]
    product = kp.kernel_dot_dense
    if numba.get_num_threads() > 1 and n * Z.shape[0] * X.shape[1] >= PARALLEL_MIN_WORK:
        product = kp.kernel_dot_dense_parallel
    return product(X, sqn_X, Z, sqn_Z, coef, code, float(gamma), float(coef0), int(degree))


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
