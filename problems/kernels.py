"""SVM kernels ``K(x, x')`` and their Gram matrices.

- ``"linear"``: ``x·x'``
- ``"poly"``: ``(γ x·x' + c₀)^p``
- ``"rbf"``: ``exp(−γ‖x − x'‖²)`` (the lecture notes' Gaussian kernel)
- ``"sigmoid"``: ``tanh(γ x·x' + c₀)`` (the lecture notes' tanh kernel; not positive semi-definite
  in general)
- ``"precomputed"``: the caller gives the Gram matrix (kernels on sets, strings, graphs).

A kernel and its parameters travel as one :class:`Kernel` (``KernelDual.kernel_spec``): its
code in the jitted cores, its Gram matrix, its products and its diagonal ``K(x_i, x_i)``.
``gamma="scale"``/``"auto"`` is resolved by :func:`resolve_gamma`, the one rule of the problems,
the reductions and the estimators.

Matrices are computed by scikit-learn's pairwise kernels. Products ``K(X, Z) c`` (certificates,
predictions) of dense rows with more than :data:`NUMPY_MAX_ENTRIES` kernel entries are fused
(:mod:`problems._kernel_products`): no kernel block is stored, and the squared norms of the rows
can be passed in, computed once; smaller ones are a BLAS product and NumPy's kernel formula, so
that a small fit never waits for the fused product's compilation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from svmbench.problems.validation import check_int, check_option, check_real

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")

#: The code of each kernel in the jitted cores (:mod:`problems._kernel_products` and the
#: solvers' kernel columns), LIBSVM's numbering; codes 0-3 are computed from inner products.
KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}

#: Row blocks of a kernel product hold at most this many entries (32 MB of float64), so that a
#: certificate adds little to a solver's own memory (SMO: its column cache plus O(n)).
BLOCK_ENTRIES = 4_000_000

#: Dense products of at most this many kernel entries (rows × support vectors) are computed by
#: BLAS and NumPy (:func:`kernel_dot`), larger ones by the fused jitted product; a product of this
#: size costs milliseconds either way.
NUMPY_MAX_ENTRIES = 1 << 20

#: Dense fused products of at least this many multiply-adds (rows × support vectors × features)
#: split their row blocks over the Numba threads, with the serial sums in each block (the values
#: do not depend on the thread count). Below, a parallel launch costs more than it saves.
PARALLEL_MIN_WORK = 20_000_000


def kernel_matrix(
    X, Y=None, *, kernel: str, gamma: float = 1.0, degree: int = 3, coef0: float = 0.0
) -> np.ndarray:
    """Dense ``K(X, Y)`` of shape (n_X, n_Y) for a kernel other than ``"precomputed"``."""
    from sklearn.metrics import pairwise  # only here: a fit may never build a kernel matrix

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

    Linear: one product through ``w = Zᵀ coef``. Other kernels, dense rows: up to
    :data:`NUMPY_MAX_ENTRIES` kernel entries, ``K`` from the BLAS inner products
    (:func:`kernel_block`) times ``coef``; beyond, the inner products, the kernel and the sum
    fused in float64 (:mod:`problems._kernel_products`), no kernel value stored, the row blocks
    over the Numba threads from :data:`PARALLEL_MIN_WORK` on (same values); ``sqn_X``, ``sqn_Z``
    are the rows' squared norms, if already known (RBF). CSR rows (X or Z): blocks of at most
    :data:`BLOCK_ENTRIES` kernel entries (scikit-learn's kernels).
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
    X = np.ascontiguousarray(X, dtype=np.float64)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    if kernel == "rbf":
        sqn_X = squared_norms(X) if sqn_X is None else sqn_X
        sqn_Z = squared_norms(Z) if sqn_Z is None else sqn_Z
    else:  # unused
        sqn_X, sqn_Z = np.zeros(n), np.zeros(Z.shape[0])
    if n * Z.shape[0] <= NUMPY_MAX_ENTRIES:
        return kernel_block(X @ Z.T, sqn_X, sqn_Z, kernel, gamma, degree, coef0) @ coef
    import numba

    from svmbench.problems import _kernel_products as kp

    code = KERNEL_CODES[kernel]
    product = kp.kernel_dot_dense
    if numba.get_num_threads() > 1 and n * Z.shape[0] * X.shape[1] >= PARALLEL_MIN_WORK:
        product = kp.kernel_dot_dense_parallel
    return product(X, sqn_X, Z, sqn_Z, coef, code, float(gamma), float(coef0), int(degree))


def needs_fused_product(n_samples: int) -> bool:
    """Whether a certificate or prediction over ``n_samples`` rows may take the fused jitted
    product (its support vectors are at most the rows): more than :data:`NUMPY_MAX_ENTRIES`
    entries in ``K(X, X)``."""
    return n_samples * n_samples > NUMPY_MAX_ENTRIES


def compile_fused_product() -> None:
    """Compile (or load from Numba's cache) the serial fused product on four rows: untimed
    warm-ups call it for the problems that may need it (:func:`needs_fused_product`)."""
    from svmbench.problems import _kernel_products as kp

    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    sqn = squared_norms(X)
    kp.kernel_dot_dense(X, sqn, X, sqn, np.ones(4), KERNEL_CODES["rbf"], 0.5, 0.0, 3)


def kernel_block(dots, sqn_X, sqn_Z, kernel: str, gamma: float, degree: int, coef0: float):
    """The kernel values from the inner products ``dots = X Zᵀ`` (overwritten), in the fused
    product's formulas: RBF ``exp(−γ max(‖x‖² + ‖z‖² − 2x·z, 0))``, poly ``(γ x·z + c₀)^p``,
    sigmoid ``tanh(γ x·z + c₀)``."""
    if kernel == "rbf":
        dots *= -2.0
        dots += sqn_X[:, None]
        dots += sqn_Z[None, :]
        np.maximum(dots, 0.0, out=dots)
        dots *= -gamma
        return np.exp(dots, out=dots)
    dots *= gamma
    dots += coef0
    if kernel == "sigmoid":
        return np.tanh(dots, out=dots)
    return dots ** int(degree)


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


def resolve_gamma(gamma, X, sample_weight=None) -> float:
    """γ as a float: a given real (> 0), ``"auto"``: ``1/d``, ``"scale"``: ``1/(d·Var X)``.

    The variance is that of all n·d entries of X, each weighted by its example's weight w_i:
    ``m = Σ_i w_i Σ_j x_ij / (d Σ_i w_i)``, ``Var X = Σ_i w_i Σ_j (x_ij − m)² / (d Σ_i w_i)``, so
    that an integer weight k gives the γ of the row repeated k times (weight 0: the row left
    out). Without weights, or with equal ones, it is scikit-learn's SVC value, computed as SVC
    does (``X.var()``; ``E[x²] − E[x]²`` for CSR). A variance of 0 gives γ = 1.
    """
    if not isinstance(gamma, str):
        return check_real("gamma", gamma, low=0.0)
    check_option("gamma", gamma, ("scale", "auto"))
    d = X.shape[1]
    if gamma == "auto":
        return 1.0 / d
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w is None or w.size == 0 or np.all(w == w[0]):
        var = X.multiply(X).mean() - X.mean() ** 2 if sparse.issparse(X) else X.var()
    else:
        total = float(w.sum()) * d
        if not total > 0:
            raise ValueError(f"sample_weight must have a positive sum, got {w.sum()!r}")
        if sparse.issparse(X):
            row_sum = np.asarray(X.sum(axis=1)).ravel()
        else:
            row_sum = X.sum(axis=1)
        mean = float(w @ row_sum) / total
        if sparse.issparse(X):
            # Σ_j (x_ij − m)² over the stored entries, plus m² for each of the row's zeros
            centered = X.copy()
            centered.data = (centered.data - mean) ** 2
            row_sq = np.asarray(centered.sum(axis=1)).ravel()
            row_sq += (d - np.diff(X.indptr)) * mean**2
        else:
            centered = X - mean
            row_sq = np.einsum("ij,ij->i", centered, centered)
        var = float(w @ row_sq) / total
    return 1.0 / (d * var) if var > 0 else 1.0


@dataclass(frozen=True)
class Kernel:
    """One kernel and its parameters, γ resolved (see the module docstring for the formulas).

    Parameters
    ----------
    name : {"linear", "poly", "rbf", "sigmoid", "precomputed"}
    gamma : float, default=1.0
        γ > 0 (:func:`resolve_gamma` turns ``"scale"``/``"auto"`` into one).
    degree : int, default=3
        p ≥ 1 of the polynomial kernel.
    coef0 : float, default=0.0
        c₀ of the polynomial and sigmoid kernels.
    """

    name: str
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0

    def __post_init__(self) -> None:
        check_option("kernel", self.name, KERNELS)
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, low=0.0))
        object.__setattr__(self, "degree", check_int("degree", self.degree, low=1))
        object.__setattr__(self, "coef0", check_real("coef0", self.coef0))

    @property
    def code(self) -> int:
        """The kernel's code in the jitted cores (:data:`KERNEL_CODES`)."""
        return KERNEL_CODES[self.name]

    @property
    def parameters(self) -> dict:
        """``kernel``, ``gamma``, ``degree``, ``coef0``: the keywords of :func:`kernel_matrix`
        and :func:`kernel_dot`."""
        return {
            "kernel": self.name,
            "gamma": self.gamma,
            "degree": self.degree,
            "coef0": self.coef0,
        }

    @property
    def psd_by_construction(self) -> bool:
        """:func:`is_psd_by_construction` of this kernel."""
        return is_psd_by_construction(self.name, self.degree, self.coef0)

    def __call__(self, A, B=None) -> np.ndarray:
        """Dense ``K(A, B)`` (``K(A, A)`` without B); not for a precomputed kernel."""
        return kernel_matrix(A, B, **self.parameters)

    def dot(self, X, Z, coef, *, sqn_X=None, sqn_Z=None) -> np.ndarray:
        """``K(X, Z) @ coef`` in bounded memory (:func:`kernel_dot`)."""
        return kernel_dot(X, Z, coef, sqn_X=sqn_X, sqn_Z=sqn_Z, **self.parameters)

    def diagonal(self, X, sqn=None) -> np.ndarray:
        """``K(x_i, x_i)`` of every row of X: ``‖x_i‖²`` (linear), ``(γ‖x_i‖² + c₀)^p``, 1 (RBF),
        ``tanh(γ‖x_i‖² + c₀)``, or the diagonal of the Gram matrix X (precomputed); ``sqn`` the
        rows' squared norms, if already known (:func:`squared_norms`)."""
        if self.name == "precomputed":
            diag = X.diagonal() if sparse.issparse(X) else np.diagonal(X)
            return np.array(diag, dtype=np.float64)
        if self.name == "rbf":
            return np.ones(X.shape[0])
        sq = squared_norms(X) if sqn is None else np.array(sqn, dtype=np.float64)
        if self.name == "linear":
            return sq
        z = self.gamma * sq + self.coef0
        return z**self.degree if self.name == "poly" else np.tanh(z)
