"""ε-support vector regression with kernels (LIBSVM ``-s 3``; Vapnik 1995, Smola & Schölkopf,
"A tutorial on support vector regression", Statistics and Computing 2004).

Primal of the model ``f = Kβ + b`` (β = α − α*, K̃ = K + s² for a regularized bias)::

    P(β, b) = ½ βᵀK̃β + Σ_i C_i max(0, |y_i − f_i| − ε)

with b the exact minimizer when free (a weighted median: the loss is convex and piecewise linear
in b), ``s²Σβ`` when regularized, 0 for none. Dual over ``|β_i| ≤ C_i`` (and ``Σβ = 0`` for a
free bias)::

    D(β) = yᵀβ − ε‖β‖₁ − ½ βᵀK̃β

In LIBSVM's general form (:class:`~svmbench.problems.general_dual.GeneralDual`; Chang & Lin, ACM
TIST 2011, §2.3) the 2n variables ``(α, α*)`` have signs ``z = (+1ⁿ, −1ⁿ)``, linear term
``p = (ε − y, ε + y)``, bounds ``C_i`` twice and ``zᵀα = 0``; its minimum is ``−max D`` and its
offset ρ gives ``b = −ρ``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems._linear import BIASES
from svmbench.problems.base import Certificate, make_certificate
from svmbench.problems.general_dual import GeneralDual, GeneralDualProblem
from svmbench.problems.kernel_access import KernelAccessMixin, checked_kernel_input
from svmbench.problems.kernel_dual import MAX_C_TIMES_DIAGONAL
from svmbench.problems.kernels import KERNELS, Kernel, resolve_gamma
from svmbench.problems.models import finite
from svmbench.problems.regression_model import KernelRegressionModel
from svmbench.problems.rounding import gamma
from svmbench.problems.rounding_scores import kernel_score_rounding
from svmbench.problems.validation import (
    check_bias_scale,
    check_C_range,
    check_option,
    check_real,
    check_sample_weight,
    per_example_C,
)

__all__ = ["SVRDual", "check_targets", "epsilon_insensitive_bias", "project_coefficients"]

#: Bisection steps of the projection onto ``{|β_i| ≤ C_i, Σβ = 0}`` (each halves the bracket).
PROJECTION_STEPS = 200


def check_targets(y, n_samples: int, *, name: str = "y") -> np.ndarray:
    """Real regression targets: a 1-D float64 array of length ``n_samples``, all finite."""
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-D array of real targets") from None
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(
            f"{name} must be a 1-D array of n_samples={n_samples} real targets, got shape {y.shape}"
        )
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} must contain only finite targets (no NaN or inf)")
    return np.ascontiguousarray(y)


def epsilon_insensitive_bias(r: np.ndarray, C: np.ndarray, epsilon: float) -> float:
    """The b minimizing ``Σ C_i max(0, |r_i − b| − ε)``.

    Its slope is ``−ΣC + Σ_k w_k [p_k < b]`` over the 2n breakpoints ``p = (r − ε, r + ε)``,
    each weighted ``C_i``: a weighted median. Where the slope is 0 on an interval, its midpoint.
    """
    points = np.concatenate([r - epsilon, r + epsilon])
    weights = np.concatenate([C, C])
    order = np.argsort(points, kind="stable")
    points, cumulative = points[order], np.cumsum(weights[order])
    half = float(C.sum())
    k = int(np.searchsorted(cumulative, half, side="left"))
    k = min(k, points.size - 1)
    if cumulative[k] == half and k + 1 < points.size:
        return 0.5 * (float(points[k]) + float(points[k + 1]))
    return float(points[k])


def project_coefficients(beta: np.ndarray, C: np.ndarray, equality: bool) -> np.ndarray:
    """The point of ``{|β_i| ≤ C_i}`` (and ``Σβ = 0`` when ``equality``) nearest ``beta``:
    ``clip(β − τ, −C, C)`` with τ found by bisection (``Σ`` decreases with τ)."""
    beta = np.asarray(beta, dtype=np.float64)
    clipped = np.clip(beta, -C, C)
    if not equality or clipped.size == 0 or clipped.sum() == 0.0:
        return clipped
    hi = float(np.max(np.abs(beta)) + np.max(C)) + 1.0
    lo = -hi
    for _ in range(PROJECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if np.clip(beta - mid, -C, C).sum() > 0.0:
            lo = mid
        else:
            hi = mid
    return np.clip(beta - 0.5 * (lo + hi), -C, C)


@dataclass(frozen=True, eq=False)
class SVRDual(KernelAccessMixin, GeneralDualProblem):
    """ε-SVR with kernels: ``max yᵀβ − ε‖β‖₁ − ½βᵀK̃β`` over ``|β_i| ≤ C_i`` (``Σβ = 0``).

    Variables ``coef`` β (n,) or ``alpha`` (α, α*) (2n,), plus ``b``.

    A result record carries ``alpha`` (2n,) and ``b``: the certificate's primal point is
    ``(max(β, 0), max(−β, 0))`` and its b.

    Parameters
    ----------
    X : ndarray or CSR of shape (n_samples, n_features), or the Gram matrix
        (n_samples, n_samples) when ``kernel="precomputed"`` (square and symmetric).
    y : ndarray of shape (n_samples,)
        Real, finite targets.
    C : float, default=1.0
    epsilon : float, default=0.1
        Half-width ε ≥ 0 of the tube where errors cost nothing.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
        As :class:`~svmbench.problems.KernelDual` (``"scale"``: scikit-learn's SVR value).
    degree : int, default=3
    coef0 : float, default=0.0
    bias : {"free", "regularized", "none"}, default="free"
    bias_scale : float, default=1.0
    sample_weight : ndarray of shape (n_samples,), default=None
        ``C_i = C · sample_weight_i``.
    """

    kind: ClassVar[str] = "svr_dual"

    X: np.ndarray
    y: np.ndarray
    C: float = 1.0
    epsilon: float = 0.1
    kernel: str = "rbf"
    gamma: float | str = "scale"
    degree: int = 3
    coef0: float = 0.0
    bias: str = "free"
    bias_scale: float = 1.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        check_option("kernel", self.kernel, KERNELS)
        X = checked_kernel_input(self.X, self.kernel)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", check_targets(self.y, X.shape[0]))
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
        object.__setattr__(self, "epsilon", check_real("epsilon", self.epsilon, low=0.0,
                                                       closed="left"))  # fmt: skip
        check_option("bias", self.bias, BIASES)
        object.__setattr__(self, "bias_scale", check_bias_scale(self.bias_scale))
        sw = (
            None
            if self.sample_weight is None
            else check_sample_weight(self.sample_weight, X.shape[0])
        )
        object.__setattr__(self, "sample_weight", sw)
        kernel = Kernel(self.kernel, resolve_gamma(self.gamma, X, sw), self.degree, self.coef0)
        for name in ("gamma", "degree", "coef0"):
            object.__setattr__(self, name, getattr(kernel, name))
        check_C_range(self.C, self.sample_weight)
        self._check_conditioning()

    def _check_conditioning(self) -> None:
        """Refuse ``max C_i · max K̃_ii`` above the kernel dual's limit, naming the range."""
        diag = float(np.max(np.abs(self.kernel_diagonal)))
        if self.bias == "regularized":
            diag += self.bias_scale**2
        largest = float(np.max(self.upper_bounds))
        if largest * diag > MAX_C_TIMES_DIAGONAL:
            raise ValueError(
                f"C · max K̃_ii = {largest:.3g} · {diag:.3g} = {largest * diag:.3g} is over "
                f"{MAX_C_TIMES_DIAGONAL:g}: beyond, no solver here reached a certified optimum "
                f"of a kernel dual; use C ≤ {MAX_C_TIMES_DIAGONAL / diag:.3g} for these data "
                "and this kernel, or scale the features down"
            )

    @property
    def upper_bounds(self) -> np.ndarray:
        """``C_i = C · sample_weight_i``."""
        return per_example_C(self.C, self.sample_weight, self.n_samples)

    @property
    def s2(self) -> float:
        """``s²`` of a regularized bias (0 otherwise)."""
        return self.bias_scale**2 if self.bias == "regularized" else 0.0

    # ---- the general form ------------------------------------------------------------------------
    def smo_form(self) -> GeneralDual:
        """The 2n-variable form of the module docstring ("none" without a free bias)."""
        n = self.n_samples
        C = self.upper_bounds
        return GeneralDual(
            X=self.X,
            kernel=self.kernel_spec,
            rows=np.concatenate([np.arange(n), np.arange(n)]).astype(np.int64),
            sign=np.concatenate([np.ones(n), -np.ones(n)]),
            p=np.concatenate([self.epsilon - self.y, self.epsilon + self.y]),
            upper=np.concatenate([C, C]),
            equality="one" if self.bias == "free" else "none",
            alpha0=np.zeros(2 * n),
            s2=self.s2,
        )

    def variables_from_smo(self, alpha, rho) -> dict:
        """``alpha = (α, α*)`` as given and, for a free bias, ``b = −ρ``."""
        b = -float(rho) if self.bias == "free" else None
        return {"alpha": np.asarray(alpha, dtype=np.float64), "b": b}

    @staticmethod
    def split(beta: np.ndarray) -> np.ndarray:
        """``(α, α*) = (max(β, 0), max(−β, 0))``: the 2n-vector of β (α_i α*_i = 0), the form a
        result record carries."""
        return np.concatenate([np.maximum(beta, 0.0), np.maximum(-beta, 0.0)])

    # ---- objectives ------------------------------------------------------------------------------
    def coefficients(self, coef=None, alpha=None) -> np.ndarray:
        """β from ``coef`` (n,) or ``alpha`` = (α, α*) (2n,), checked for shape and finiteness."""
        n = self.n_samples
        if (coef is None) == (alpha is None):
            raise TypeError("give exactly one of coef (β, n values) or alpha ((α, α*), 2n values)")
        name, value, length = ("coef", coef, n) if alpha is None else ("alpha", alpha, 2 * n)
        value = np.asarray(value, dtype=np.float64)
        if value.shape != (length,):
            raise ValueError(f"{name} must have shape ({length},), got {value.shape}")
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{name} must contain only finite values")
        return value if alpha is None else value[:n] - value[n:]

    def _bias_of(self, beta, g, b) -> float:
        if self.bias == "none":
            return 0.0
        if self.bias == "regularized":
            return self.s2 * float(beta.sum())
        if b is not None:
            return float(b)
        return epsilon_insensitive_bias(self.y - g, self.upper_bounds, self.epsilon)

    def _quadratic(self, beta, g) -> float:
        """``½ βᵀK̃β`` from ``g = Kβ``."""
        return 0.5 * float(beta @ g) + 0.5 * self.s2 * float(beta.sum()) ** 2

    def _loss(self, residual) -> float:
        return float(self.upper_bounds @ np.maximum(0.0, np.abs(residual) - self.epsilon))

    def primal_objective(self, coef=None, b=None, *, alpha=None) -> float:
        """``P(β, b)``; a missing free b is the exact minimizer."""
        beta = self.coefficients(coef, alpha)
        g = self.kernel_times(beta)
        b = self._bias_of(beta, g, b)
        return self._quadratic(beta, g) + self._loss(self.y - g - b)

    def dual_objective(self, coef=None, *, alpha=None) -> float:
        """``D(β) = yᵀβ − ε‖β‖₁ − ½βᵀK̃β`` (β assumed feasible)."""
        beta = self.coefficients(coef, alpha)
        g = self.kernel_times(beta)
        return self._dual_value(beta, g)

    def _dual_value(self, beta, g) -> float:
        return (
            float(self.y @ beta)
            - self.epsilon * float(np.abs(beta).sum())
            - self._quadratic(beta, g)
        )

    @property
    def dual_size(self) -> int:
        """The length of the ``alpha`` a record and a warm start carry: 2n, (α, α*)."""
        return 2 * self.n_samples

    def project_dual(self, beta) -> np.ndarray:
        """The nearest β of the dual feasible set; given (α, α*) (2n), the split of that of
        ``α − α*`` (what a warm start's α becomes)."""
        beta = np.asarray(beta, dtype=np.float64)
        if beta.shape == (self.dual_size,):
            return self.split(self.project_dual(beta[: self.n_samples] - beta[self.n_samples :]))
        return project_coefficients(beta, self.upper_bounds, self.bias == "free")

    def decision_function(self, coef, b: float = 0.0, X=None) -> np.ndarray:
        """``f(x) = Σ_j β_j K(x_j, x) + b`` on the training data or on ``X`` (for a precomputed
        kernel, the (n_test, n_samples) kernel against the training set)."""
        beta = self.coefficients(coef)
        if X is None:
            return self.kernel_times(beta) + b
        if self.kernel == "precomputed":
            return np.asarray(X) @ beta + b
        nz = np.flatnonzero(beta)
        return self.kernel_against(X, nz, beta[nz]) + b

    def certificate(self, *, coef=None, alpha=None, b=None) -> Certificate:
        """Gap of the model ``(β, b)`` against ``D`` at the projected β.

        The given β (or ``α − α*``) is projected onto the dual feasible set
        (``residuals["dual_infeasibility"]`` says how far it was) and serves as both the model's
        coefficients and the dual point; a free b not given is the exact minimizer.
        """
        given = self.coefficients(coef, alpha)
        beta = self.project_dual(given)
        residuals = {"dual_infeasibility": float(np.max(np.abs(beta - given), initial=0.0))}
        g = self.kernel_times(beta)
        b = self._bias_of(beta, g, b)
        quad = self._quadratic(beta, g)
        loss = self._loss(self.y - g - b)
        P, D, rounding = self._rounding(beta, g, b, quad, loss)
        return make_certificate(
            P,
            D,
            convex=self.convex,
            residuals=residuals,
            primal_point={"alpha": self.split(beta), "b": b},
            dual_point=beta,
            rounding=rounding,
        )

    def _rounding(self, beta, g, b, quad, loss):
        """``(P, D, rounding)``: two hinges per score, at ``y_i − b ∓ ε``
        (:func:`~problems.rounding_scores.kernel_score_rounding`)."""
        y, C, eps = self.y, self.upper_bounds, self.epsilon
        beta_abs = np.abs(beta)
        D = self._dual_value(beta, g)

        def row_terms(t, rows):
            return C[rows] * np.maximum(0.0, np.abs(y[rows] - t - b) - eps)

        def detail():
            base = y - b
            hinges = [(C, -1.0, base - eps), (C, 1.0, base + eps)]
            return hinges, np.abs(y) + abs(b) + eps, row_terms

        regularized = self.bias == "regularized"
        total = float(beta_abs.sum())
        y_max = float(np.abs(y).max())
        # ε ≥ 0: one of the two hinges at most is active, a slope of C_i at most
        return kernel_score_rounding(
            self, beta, g, quad + loss, D,
            loss=(float(C.sum()), y_max + abs(b) + eps, detail),
            magnitude=abs(quad) + loss + y_max * total + eps * total,
            shift=self.s2 * gamma(self.n_samples) * total if regularized else 0.0,
            bias_sum=(self.s2, float(beta.sum())) if regularized else None,
        )  # fmt: skip

    def model_from(self, variables) -> KernelRegressionModel | None:
        """The :class:`KernelRegressionModel` of ``(β, b)`` over the support vectors only; None
        without finite coefficients."""
        coef, alpha, b = variables.get("coef"), variables.get("alpha"), variables.get("b")
        if coef is None and alpha is None:
            return None
        if not finite(coef, alpha, b):
            return None
        beta = self.coefficients(coef, alpha if coef is None else None)
        if b is None:
            b = self._bias_of(beta, self.kernel_times(beta), None)
        support = np.flatnonzero(beta)
        vectors = None if self.kernel == "precomputed" else self.X[support]
        if vectors is not None and not sparse.issparse(vectors):
            vectors = np.ascontiguousarray(vectors)
        return KernelRegressionModel(
            support_vectors=vectors,
            dual_coef=beta[support],
            b=float(b),
            kernel=self.kernel,
            support=support,
            n_train=self.n_samples,
            gamma=float(self.gamma),
            degree=self.degree,
            coef0=float(self.coef0),
        )
