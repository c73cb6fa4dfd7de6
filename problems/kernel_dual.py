"""The kernel SVM dual: ``max D(α) = Σα_i − ½ αᵀQα`` with ``Q_ij = y_i y_j K(x_i, x_j)``.

Box ``0 ≤ α_i ≤ C_i`` (hinge) or ``α ≥ 0`` with ``Q + diag(1/(2C_i))`` (squared hinge), plus
``yᵀα = 0`` for a free bias; a regularized bias adds ``s²`` to every kernel entry. The primal
value of the model ``f(x) = Σ_j α_j y_j K(x_j, x) + b`` is ``½αᵀQα + Σ_i C_i loss(y_i f(x_i))``,
with b the exact minimizer when free (docs/ARCHITECTURE.md §2). Sigmoid and precomputed kernels
may be indefinite: weak duality then fails and certificates say ``certified=False``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import eigsh

from svmbench.problems._binary import BinaryDualMixin
from svmbench.problems._linear import BIASES, LOSSES, optimal_bias
from svmbench.problems.base import QP, Certificate, Problem, make_certificate
from svmbench.problems.gram import cholesky_bound, symmetric_gram
from svmbench.problems.kernel_dual_qp import kernel_dual_qp
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import (
    KERNELS,
    NUMPY_MAX_ENTRIES,
    Kernel,
    kernel_block,
    resolve_gamma,
)
from svmbench.problems.kernels import squared_norms as _squared_norms
from svmbench.problems.models import KernelModel, finite
from svmbench.problems.rounding import kernel_dual_rounding
from svmbench.problems.validation import (
    check_bias_scale,
    check_binary_labels,
    check_C_range,
    check_option,
    check_real,
    check_sample_weight,
    check_X,
    per_example_C,
)

#: The Gram matrix is kept in memory (and exported by ``to_qp``) only up to this size.
GRAM_MEMORY_LIMIT_MB = 2048
#: Eigenvalues below ``-PSD_RTOL · max|K_ii|`` make a kernel matrix indefinite.
PSD_RTOL = 1e-10
#: Beyond this n the smallest eigenvalue of a kernel that is not PSD by construction is not
#: computed and the problem is treated as indefinite (uncertifiable).
EIGEN_CHECK_MAX_N = 6000


#: The largest ``max C_i · max K̃_ii`` a kernel dual may have. On overlapping data with the linear
#: kernel (C = 1, features scaled up), the barrier certified 1e-6 at 9.9e10 and stopped at
#: ``max_iter`` at 9.9e12; Clarabel and OSQP gave up from 1e9 and 1e11, SMO's epochs grow with it.
MAX_C_TIMES_DIAGONAL = 1e11


#: ``x.min()`` without ndarray's Python wrapper (the same value, NaN included)
_smallest = np.minimum.reduce

#: A solver's α on ``yᵀα = 0`` up to rounding: ``|yᵀα| ≤ 64 ε Σα_i`` (the projection's test).
_ROUNDING_RESIDUE = 64 * np.finfo(np.float64).eps


@dataclass(frozen=True, eq=False)
class KernelDual(BinaryDualMixin, Problem):
    """Kernel SVM, dual view: variable ``alpha`` (n_samples,), plus ``b`` for a free bias.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), or the Gram matrix (n_samples, n_samples)
        when ``kernel="precomputed"`` (square and symmetric).
    y : ndarray of shape (n_samples,), labels in {-1, +1}
    C : float, default=1.0
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
        Kernel coefficient (> 0); ``"scale"`` is ``1/(d·Var(X))`` with every entry weighted by its
        example's ``sample_weight`` (a weight of 2 gives the γ of the row twice; without weights
        scikit-learn's SVC value), ``"auto"`` is ``1/d``
        (:func:`~svmbench.problems.kernels.resolve_gamma`). Stored resolved to a float.
    degree : int, default=3
        Degree p of the polynomial kernel.
    coef0 : float, default=0.0
        c₀ of the polynomial and sigmoid kernels.
    loss : {"hinge", "squared_hinge"}, default="hinge"
    bias : {"free", "regularized", "none"}, default="free"
    bias_scale : float, default=1.0
    sample_weight : ndarray of shape (n_samples,), default=None
    """

    kind: ClassVar[str] = "kernel_dual"
    #: ``(table, rows, blocks)`` when the kernel entries come from rows shared with other
    #: problems on rows of one X (:meth:`share_rows`; ``rows`` the table's rows of the examples,
    #: ``blocks`` their groups); None: computed for this problem alone.
    shared_rows: ClassVar[tuple[KernelRows, np.ndarray, np.ndarray] | None] = None

    X: np.ndarray
    y: np.ndarray
    C: float = 1.0
    kernel: str = "rbf"
    gamma: float | str = "scale"
    degree: int = 3
    coef0: float = 0.0
    loss: str = "hinge"
    bias: str = "free"
    bias_scale: float = 1.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        check_option("kernel", self.kernel, KERNELS)
        if self.kernel == "precomputed":
            X = symmetric_gram(self.X)  # checked, ½(K + Kᵀ)
        else:
            X = check_X(self.X, allow_sparse=True)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", check_binary_labels(self.y, X.shape[0]))
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
        check_option("loss", self.loss, LOSSES)
        check_option("bias", self.bias, BIASES)
        object.__setattr__(self, "bias_scale", check_bias_scale(self.bias_scale))
        sw = (
            None
            if self.sample_weight is None
            else check_sample_weight(self.sample_weight, X.shape[0])
        )
        object.__setattr__(self, "sample_weight", sw)
        # γ, p, c₀ checked and normalized by the kernel's description, γ by the one rule
        kernel = Kernel(self.kernel, resolve_gamma(self.gamma, X, sw), self.degree, self.coef0)
        for name in ("gamma", "degree", "coef0"):
            object.__setattr__(self, name, getattr(kernel, name))
        self.__dict__["kernel_spec"] = kernel  # the cached property's value, built once
        check_C_range(self.C, self.sample_weight, weighted=True)
        self._check_conditioning()

    def _on_checked_rows(self, X: np.ndarray, y: np.ndarray) -> KernelDual:
        """This problem's C, kernel, loss and bias on other rows, trusted: the constructor
        without the checks that ``X`` and ``y`` already passed. Only for what a reduction builds
        from a checked multiclass problem: ``X`` C-contiguous float64 rows of its checked X
        (same features, finite), ``y`` float64 in {−1, +1} with both classes, no sample
        weights and a kernel of rows; ``max C_i · max K̃_ii`` is still checked (it depends on
        the rows). Anything else goes through the constructor."""
        if self.kernel == "precomputed" or self.sample_weight is not None:
            raise TypeError("a trusted pair needs a kernel of rows and no sample weights")
        pair = object.__new__(type(self))
        # the frozen fields set at once (no __post_init__ runs), γ resolved once for every pair
        pair.__dict__.update(
            X=X, y=y, C=self.C, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
            coef0=self.coef0, loss=self.loss, bias=self.bias, bias_scale=self.bias_scale,
            sample_weight=None, kernel_spec=self.kernel_spec,
        )  # fmt: skip
        pair._check_conditioning()
        return pair

    def _on_checked_gram(self, K: np.ndarray, y: np.ndarray) -> KernelDual:
        """This problem's C, loss and bias on another block of one checked Gram matrix,
        trusted: ``K`` a principal sub-block (C-contiguous float64) of a matrix that
        :func:`~problems.gram.symmetric_gram` returned (finite and exactly symmetric, as the
        constructor would leave it), ``y`` float64 in {−1, +1} with both classes, no sample
        weights. Only for a reduction's pairs of one precomputed kernel; ``max C_i · max K̃_ii``
        and the block's convexity are its own."""
        if self.kernel != "precomputed" or self.sample_weight is not None:
            raise TypeError("a trusted Gram block needs a precomputed kernel, no sample weights")
        pair = object.__new__(type(self))
        pair.__dict__.update(
            X=K, y=y, C=self.C, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
            coef0=self.coef0, loss=self.loss, bias=self.bias, bias_scale=self.bias_scale,
            sample_weight=None, kernel_spec=self.kernel_spec,
        )  # fmt: skip
        pair._check_conditioning()
        return pair

    def _check_conditioning(self) -> None:
        """Refuse ``max C_i · max K̃_ii`` above :data:`MAX_C_TIMES_DIAGONAL` (K̃ = K + s² for a
        regularized bias), naming C and the range that works."""
        if not self.n_samples:
            return
        # the RBF diagonal is 1: no array of ones built for its maximum
        diag = 1.0 if self.kernel == "rbf" else float(np.max(np.abs(self.kernel_diagonal)))
        if self.bias == "regularized":
            diag += self.bias_scale**2
        sw = self.sample_weight  # max C·w_i = C·max w_i exactly (rounding is monotone)
        largest = self.C * (1.0 if sw is None else float(np.max(sw)))
        if largest * diag > MAX_C_TIMES_DIAGONAL:
            raise ValueError(
                f"C · max K̃_ii = {largest:.3g} · {diag:.3g} = {largest * diag:.3g} is over "
                f"{MAX_C_TIMES_DIAGONAL:g}: beyond, no solver here reached a certified optimum "
                f"of the kernel dual; use C ≤ {MAX_C_TIMES_DIAGONAL / diag:.3g} for these data "
                "and this kernel, or scale the features down"
            )

    # ---- sizes and kernel access -----------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @cached_property
    def kernel_spec(self) -> Kernel:
        """The kernel and its parameters (γ resolved): its code, Gram matrix, products and
        diagonal."""
        return Kernel(self.kernel, self.gamma, self.degree, self.coef0)

    @property
    def kernel_params(self) -> dict:
        """``kernel``, ``gamma``, ``degree``, ``coef0`` (:attr:`Kernel.parameters`)."""
        return self.kernel_spec.parameters

    @cached_property
    def kernel_diagonal(self) -> np.ndarray:
        """``K(x_i, x_i)`` of every example (:meth:`Kernel.diagonal`), computed once."""
        if self.kernel in ("linear", "poly", "sigmoid"):
            return self.kernel_spec.diagonal(self.X, self.squared_norms)
        return self.kernel_spec.diagonal(self.X)

    @property
    def upper_bounds(self) -> np.ndarray:
        """``C_i = C · sample_weight_i``."""
        return per_example_C(self.C, self.sample_weight, self.n_samples)

    @property
    def loss_kind(self) -> str:
        return self.loss

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

    @cached_property
    def squared_norms(self) -> np.ndarray:
        """``‖x_i‖²`` of every example, computed once (the RBF kernel products use them)."""
        return _squared_norms(self.X)

    def share_rows(self, table: KernelRows, rows: np.ndarray) -> None:
        """Read this problem's kernel entries from ``table``, whose X holds this problem's
        examples as its rows ``rows`` of X (a one-vs-one pair's rows of the multiclass X): the
        certificate's ``K(αy)`` and SMO's columns then use the entries computed once for every
        problem on that X (:class:`~svmbench.problems.kernel_rows.KernelRows`). Not for a
        precomputed kernel or a regularized bias (the table holds K without ``s²``)."""
        if not isinstance(table, KernelRows):
            raise TypeError(f"table must be a KernelRows, got {type(table).__name__}")
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if self.kernel == "precomputed" or self.bias == "regularized":
            raise ValueError("shared kernel rows need a kernel of rows and no regularized bias")
        if table.kernel != self.kernel_spec:
            raise ValueError(f"table's kernel {table.kernel} is not this problem's")
        if rows.shape != (self.n_samples,) or table.X.shape[1] != self.n_features:
            raise ValueError(
                f"rows must index the table's X once per example ({self.n_samples} rows of "
                f"{self.n_features} features), got {rows.shape[0]} rows of a table with "
                f"{table.X.shape[1]} features"
            )
        if rows.size and (rows.min() < 0 or rows.max() >= table.n_rows):
            raise ValueError(f"rows must lie in [0, {table.n_rows}), the table's rows")
        rows = table.position[rows]
        object.__setattr__(self, "shared_rows", (table, rows, table.blocks(rows)))

    def _share_checked_rows(self, table: KernelRows, rows: np.ndarray, blocks) -> None:
        """:meth:`share_rows` for rows a reduction computed itself, trusted: ``rows`` the int64
        rows of the table's X holding this problem's examples in order (a pair's rows of the
        checked multiclass X the table was built from, with this problem's kernel), ``blocks``
        their groups, ascending. No checks; anything else goes through :meth:`share_rows`.
        The rows being the table's, so are their ``‖x_i‖²`` (the same values, computed row by
        row), unless this problem computed its own already."""
        rows = table.position[rows]
        self.__dict__.setdefault("squared_norms", table.sqn[rows])
        object.__setattr__(self, "shared_rows", (table, rows, np.asarray(blocks, dtype=np.int64)))

    def kernel_times(self, coef: np.ndarray) -> np.ndarray:
        """``K @ coef``, using only the non-zero coefficients, in bounded memory (fused, see
        :func:`~svmbench.problems.kernels.kernel_dot`), or from the shared rows
        (:meth:`share_rows`)."""
        if self.kernel == "precomputed" or "gram" in self.__dict__:
            return self.gram @ coef
        nz = np.flatnonzero(coef)
        if nz.size == 0:
            return np.zeros(self.n_samples)
        if self.shared_rows is not None:
            table, rows, blocks = self.shared_rows
            return table.times(rows, rows[nz], coef[nz], blocks)
        return self._kernel_dot(self.X, nz, coef[nz], self.squared_norms)

    def _kernel_dot(self, X, nz, coef, sqn_X) -> np.ndarray:
        """``K(X, X_nz) @ coef`` with the training rows' cached norms. A small dense product of
        the training rows (:data:`~svmbench.problems.kernels.NUMPY_MAX_ENTRIES`, a kernel but
        the linear one) is :func:`~svmbench.problems.kernels.kernel_dot`'s BLAS path, taken
        without its checks of arrays the problem holds checked."""
        rbf = self.kernel == "rbf"
        sqn_Z = self.squared_norms[nz] if rbf else None
        Z = self.X[nz]
        if (
            X is self.X
            and (sqn_X is not None or not rbf)
            and self.kernel in ("rbf", "poly", "sigmoid")
            and not sparse.issparse(X)
            and 0 < nz.size
            and X.shape[0] * nz.size <= NUMPY_MAX_ENTRIES
        ):
            spec = self.kernel_spec
            return kernel_block(
                X @ Z.T, sqn_X, sqn_Z, self.kernel, spec.gamma, spec.degree, spec.coef0
            ) @ np.ascontiguousarray(coef, dtype=np.float64)
        return self.kernel_spec.dot(X, Z, coef, sqn_X=sqn_X, sqn_Z=sqn_Z)

    @cached_property
    def min_eigenvalue(self) -> float:
        """Smallest eigenvalue of K (``-inf`` when too large to compute: treated as indefinite),
        or ``−τ`` (τ = PSD_RTOL·max(1, max |K_ii|), :attr:`convex`'s own threshold) where LAPACK's
        Cholesky factorization of ``K + τI`` succeeds, all that :attr:`convex` asks (a precomputed
        Gram of 537 rows: 3.5 ms, against 24 ms for every eigenvalue)."""
        if self.kernel_spec.psd_by_construction:
            return 0.0
        n = self.n_samples
        if n > EIGEN_CHECK_MAX_N:
            return -np.inf
        K = self.gram
        if n <= 2000:
            bound = cholesky_bound(K, self._psd_tau(), self.kernel == "precomputed")
            return float(np.linalg.eigvalsh(K)[0]) if bound is None else bound
        return float(eigsh(K, k=1, which="SA", return_eigenvectors=False)[0])

    def _psd_tau(self) -> float:
        """τ = PSD_RTOL · max(1, max |K_ii|): eigenvalues down to −τ count as rounding."""
        return PSD_RTOL * max(1.0, float(np.max(np.abs(self.kernel_diagonal))))

    @cached_property
    def convex(self) -> bool:  # type: ignore[override]
        """Whether the dual is a concave maximization (K positive semi-definite); computed
        once (the solvers and certificates ask it several times a solve)."""
        if self.kernel_spec.psd_by_construction:
            return True
        tau = self._psd_tau() if np.isfinite(self.min_eigenvalue) else PSD_RTOL
        return self.min_eigenvalue >= -tau

    # ---- objectives ------------------------------------------------------------------------------
    def _model(self, alpha) -> tuple[np.ndarray, float]:
        """``g = K(αy)`` (without bias) and ``Σ α_i y_i``."""
        ay = alpha * self.y
        return self.kernel_times(ay), float(ay.sum())

    def _quadratic(self, alpha, g, sum_ay) -> float:
        """``½ αᵀQ̃α`` from ``g = K(αy)``."""
        quad = 0.5 * float((alpha * self.y) @ g)
        if self.bias == "regularized":
            quad += 0.5 * (self.bias_scale * sum_ay) ** 2
        return quad

    def _loss_term(self, m) -> float:
        """``Σ C_i loss(m_i)`` of the margins ``m``: ``C Σ max(0, 1 − m_i)`` (squared) when
        every ``C_i = C``, without the array of C_i."""
        xi = np.subtract(1.0, m)
        np.maximum(xi, 0.0, out=xi)
        if self.loss == "squared_hinge":
            xi *= xi
        if self.sample_weight is None:
            return self.C * float(np.add.reduce(xi))  # xi.sum(), without its wrapper
        return float(self.upper_bounds @ xi)

    def _bias_of(self, alpha, g, sum_ay, b) -> float:
        if self.bias == "none":
            return 0.0
        if self.bias == "regularized":
            return self.bias_scale**2 * sum_ay
        if b is not None:
            return float(b)
        return optimal_bias(g, self.y, self.upper_bounds, self.loss)

    def primal_objective(self, alpha, b: float | None = None) -> float:
        """``½αᵀQ̃α + Σ C_i loss(y_i f(x_i))`` for the model with coefficients α and bias b.

        For a free bias a missing b is the exact minimizer; a regularized bias is ``s²Σα_i y_i``.
        """
        alpha = self._check_alpha(alpha)
        g, sum_ay = self._model(alpha)
        b = self._bias_of(alpha, g, sum_ay, b)
        return self._quadratic(alpha, g, sum_ay) + self._loss_term(self.y * (g + b))

    def dual_objective(self, alpha) -> float:
        """``D(α) = Σα_i − ½αᵀQ̃α`` (− ``Σ α_i²/(4C_i)`` for the squared hinge)."""
        alpha = self._check_alpha(alpha)
        g, sum_ay = self._model(alpha)
        return self._dual_value(alpha, g, sum_ay)

    def _dual_value(self, alpha, g, sum_ay) -> float:
        return (
            float(alpha.sum()) - self._quadratic(alpha, g, sum_ay) - self._squared_hinge_term(alpha)
        )

    def primal_from_dual(self, alpha) -> tuple[np.ndarray, float]:
        """The model ``(α, b)`` of a dual point: its coefficients and its (exact) bias."""
        alpha = self._check_alpha(alpha)
        g, sum_ay = self._model(alpha)
        return alpha, self._bias_of(alpha, g, sum_ay, None)

    def dual_from_primal(self, alpha, b: float | None = None) -> np.ndarray:
        """A feasible dual point from a model's coefficients: their projection (exact at the
        optimum, where the coefficients are the optimal multipliers)."""
        return self.project_dual(alpha)

    def model_from(self, variables) -> KernelModel | None:
        """The :class:`~svmbench.problems.models.KernelModel` of ``(α, b)``: the support vectors
        (``α_j ≠ 0``) and their ``α_j y_j`` only, never the whole training set; None without a
        finite α."""
        alpha, b = variables.get("alpha"), variables.get("b")
        if alpha is None or not finite(alpha, b):
            return None
        return self._model_of(np.asarray(alpha, dtype=np.float64), 0.0 if b is None else float(b))

    def _model_of(self, alpha: np.ndarray, b: float) -> KernelModel:
        """:meth:`model_from` of a finite float64 α and a float b, taken as they are (a
        solver's own point, already found finite)."""
        support = alpha.ravel().nonzero()[0].astype(np.int64, copy=False)
        X = self.X
        if self.kernel == "precomputed":
            vectors = None
        elif type(X) is np.ndarray:  # the same rows as X[support], gathered in half the time
            vectors = X.take(support, axis=0)
        else:
            vectors = X[support]
        if vectors is not None and not sparse.issparse(vectors):
            vectors = np.ascontiguousarray(vectors)
        # the problem's checked rows, labels and kernel parameters: no second check
        return KernelModel.of_checked(
            vectors, alpha[support] * self.y[support], b, self.kernel, support, self.n_samples,
            float(self.gamma), int(self.degree), float(self.coef0),
        )  # fmt: skip

    def decision_function(self, alpha, b: float = 0.0, X=None) -> np.ndarray:
        """``f(x) = Σ_j α_j y_j K(x_j, x) + b`` on the training data or on ``X`` (for a
        precomputed kernel, ``X`` is the (n_test, n_samples) kernel against the training set)."""
        alpha = self._check_alpha(alpha)
        ay = alpha * self.y
        if X is None:
            g = self.kernel_times(ay)
        elif self.kernel == "precomputed":
            g = np.asarray(X) @ ay
        else:
            nz = np.flatnonzero(ay)
            g = self._kernel_dot(X, nz, ay[nz], None)
        return g + b

    def certificate(self, *, alpha=None, b=None) -> Certificate:
        """Gap of the model ``(α, b)`` against the projected α.

        The given α is projected onto the dual feasible set (``residuals["dual_infeasibility"]``)
        and the projected point serves as both the model's coefficients and the dual point.
        """
        if alpha is None:
            raise TypeError("certificate needs alpha for a kernel problem")
        shared = self.shared_rows is not None and self.loss == "hinge" and self.bias == "free"
        if shared and b is not None and "gram" not in self.__dict__:  # as kernel_times reads
            return self._pair_certificate(*self._pair_repair(alpha), float(b))
        a, residuals = self._repair_alpha(alpha)
        return self._certificate_of(a, b, residuals)

    def _pair_repair(self, alpha) -> tuple[np.ndarray, dict[str, float]]:
        """:meth:`_repair_alpha` of a pair on shared rows: for a float64 α of n entries and one
        C, its arithmetic in one jitted pass beside NumPy's ``yᵀα`` (the same values)."""
        n = self.n_samples
        plain = type(alpha) is np.ndarray and alpha.dtype == np.float64 and alpha.shape == (n,)
        if not plain or self.sample_weight is not None:
            return self._repair_alpha(alpha)
        from svmbench.problems._pair_passes import box_repair  # jitted: Numba is loaded

        residue = float(self.y @ alpha)
        limit = _ROUNDING_RESIDUE * float(np.add.reduce(alpha)) if residue != 0.0 else 0.0
        a = alpha.copy()
        moved = box_repair(alpha, a, float(self.C), self.y, residue, limit)
        if moved < 0.0:  # out of the box, not finite, or off yᵀα = 0 beyond rounding
            return super()._repair_alpha(alpha)
        return a, {"dual_infeasibility": moved}

    def _certificate_of(self, a, b, residuals) -> Certificate:
        """:meth:`certificate` of the projected ``a`` (every loss, bias and kernel)."""
        g, sum_ay = self._model(a)  # K(αy): the kernel's own entries, never a solver's sums
        b = self._bias_of(a, g, sum_ay, b)
        quad = self._quadratic(a, g, sum_ay)  # once, for both sides
        m = g + b
        m *= self.y  # the margins y_i f(x_i)
        loss = self._loss_term(m)
        squared = self._squared_hinge_term(a)
        # the margins that weigh recomputed accurately where C magnifies their rounding, and
        # the bound on what rounding can still move the gap by (problems/rounding.py)
        P, D, rounding = kernel_dual_rounding(self, a, g, m, b, sum_ay, quad, loss, squared)
        return self._certificate_at(a, b, P, D, rounding, residuals)

    def _pair_certificate(self, a, residuals, b: float) -> Certificate:
        """:meth:`certificate`'s arithmetic, step for step, for a hinge on shared rows with b
        given and free (a one-vs-one pair's): ``g = K(αy)`` from the table's entries, the
        margins ``y(g + b)``, ``½(αy)ᵀg`` and ``Σ C_i max(0, 1 − m_i)``, without the general
        path's branches for the other losses, biases and kernels."""
        y = self.y
        ay = a * y
        nz = ay.nonzero()[0]
        if nz.size:
            table, rows, blocks = self.shared_rows
            g = table.times(rows, rows[nz], ay[nz], blocks)
        else:
            g = np.zeros(self.n_samples)
        quad = 0.5 * float(ay @ g)
        # Σα_i y_i: read by the rounding bound only for a regularized bias, never for a pair's
        if self.sample_weight is not None:
            m = g + b
            m *= y
            loss = self._loss_term(m)
            P, D, rounding = kernel_dual_rounding(self, a, g, m, b, 0.0, quad, loss, 0.0)
            return self._certificate_at(a, b, P, D, rounding, residuals)
        from svmbench.problems._pair_passes import hinge_margins  # jitted: Numba is loaded

        # the margins, the hinge terms and the rounding screen's maxima in one pass, the sums
        # NumPy's: the values of the NumPy formulas, bit for bit
        m, xi = np.empty(self.n_samples), np.empty(self.n_samples)
        widest, g_max = hinge_margins(g, b, y, self.squared_norms, m, xi)
        loss = self.C * float(np.add.reduce(xi))
        sums = (float(np.add.reduce(a)), widest, g_max)
        P, D, rounding = kernel_dual_rounding(self, a, g, m, b, 0.0, quad, loss, 0.0, sums)
        return self._certificate_at(a, b, P, D, rounding, residuals)

    def _certificate_at(self, a, b, P, D, rounding, residuals) -> Certificate:
        """The certificate of ``(P, D)`` at the projected ``a`` and its bias ``b``."""
        return make_certificate(
            P,
            D,
            convex=self.convex,
            residuals=residuals,
            primal_point={"alpha": a, "b": b},
            dual_point=a,
            rounding=rounding,
        )

    def _repair_alpha(self, alpha) -> tuple[np.ndarray, dict[str, float]]:
        """The projected α and how far the given one was (``BinaryDualMixin``'s), read
        directly for a hinge with a free bias whose α is in its box and on ``yᵀα = 0`` up to
        rounding (a solver's own point): the projection's residue step on one coordinate,
        the same values as :func:`~problems._qp.project_box_hyperplane` gives, without its
        bracket and the box's arrays.

        ``room_i = min(α_i, C_i − α_i)`` says all of it: ``min room ≥ 0`` is the box (NaN and
        ±inf fail it and go to the general path, which refuses them), and the free coordinate
        farthest inside its box, which absorbs the residue, is ``argmax room`` when
        ``room > 0`` there."""
        if self.bias != "free" or self.loss != "hinge":
            return super()._repair_alpha(alpha)
        n = self.n_samples
        plain = type(alpha) is np.ndarray and alpha.dtype == np.float64 and alpha.shape == (n,)
        raw = alpha if plain else self._check_alpha(alpha)
        upper = self.C if self.sample_weight is None else self.upper_bounds
        room = np.minimum(raw, upper - raw)
        if not _smallest(room) >= 0.0:  # out of the box, or not finite
            return super()._repair_alpha(raw)
        y = self.y
        residue = float(y @ raw)
        a = raw.copy()
        if residue == 0.0:
            return a, {"dual_infeasibility": 0.0}
        if abs(residue) > _ROUNDING_RESIDUE * float(np.add.reduce(raw)):
            return super()._repair_alpha(raw)
        i = int(room.argmax())
        if not room[i] > 0.0:  # no free coordinate: the residue stays (as the projection's)
            return a, {"dual_infeasibility": 0.0}
        cap = upper if self.sample_weight is None else upper[i]
        a[i] = min(max(a[i] - y[i] * residue, 0.0), cap)
        return a, {"dual_infeasibility": float(abs(a[i] - raw[i]))}

    def to_qp(self) -> QP:
        """The dense QP of this dual (:func:`~problems.kernel_dual_qp.kernel_dual_qp`)."""
        return kernel_dual_qp(self)
