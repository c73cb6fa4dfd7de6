"""Linear ε-support vector regression in the primal, with the dual of Ho & Lin (2012).

Primal (docs/ARCHITECTURE.md §2, the C-form of the classification losses), with the residuals
``r_i = y_i − w·x_i − b``::

    P(w, b) = ½‖w‖² (+ ½(b/s)² for bias="regularized") + Σ_i C_i ℓ(r_i)

with ``ℓ(r) = max(0, |r| − ε)`` (``loss="epsilon_insensitive"``, LIBLINEAR ``-s 13``) or
``max(0, |r| − ε)²`` (``"squared_epsilon_insensitive"``, ``-s 11``/``-s 12``), ``C_i = C ·
sample_weight_i``; bias ``"free"`` (b unregularized), ``"regularized"`` (a constant feature
``s = bias_scale`` of weight ``b/s``, LIBLINEAR's ``-B``) or ``"none"``.

Dual in ``β = α − α*`` (Ho & Lin 2012, eq. (12)–(13)): from ``C ℓ(r) = max_{|β| ≤ C} (βr − ε|β|)``
and ``C ℓ(r)² = max_β (βr − ε|β| − β²/(4C))``, minimizing the Lagrangian over ``(w, b)`` gives
``w = Σ β_i x_i`` and

    D(β) = yᵀβ − ε‖β‖₁ − ½‖Σ_i β_i x̃_i‖² (− Σ_i β_i²/(4C_i) for the squared loss)

over ``|β_i| ≤ C_i`` (the plain loss; β free for the squared one, 0 where ``C_i = 0``), with
``x̃_i = (x_i, s)`` and ``b = s² Σ β_i`` for a regularized bias, ``x̃_i = x_i`` otherwise, plus
``Σ β_i = 0`` for a free bias. Weak duality ``P ≥ D`` holds for every feasible pair.

References
----------
C.-H. Ho, C.-J. Lin. Large-scale linear support vector regression. JMLR 13, 2012.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems._qp import maximize_dual_on_subset, project_box_hyperplane
from svmbench.problems.base import QP, Certificate, Problem, make_certificate
from svmbench.problems.kernels import squared_norms
from svmbench.problems.linear_regression_model import LinearRegressionModel
from svmbench.problems.models import finite
from svmbench.problems.rounding_scores import svr_linear_rounding
from svmbench.problems.validation import (
    check_bias_scale,
    check_C_range,
    check_linear_conditioning,
    check_option,
    check_real,
    check_sample_weight,
    check_X,
    per_example_C,
)

__all__ = ["SVR_LOSSES", "SVRPrimal", "check_targets"]

SVR_LOSSES = ("epsilon_insensitive", "squared_epsilon_insensitive")
BIASES = ("free", "regularized", "none")
#: A dual point built from a primal one fixes β_i by complementary slackness where ``|r_i|`` is
#: farther than this times the tube scale (:meth:`SVRPrimal.tube_scale`) from ε; the others
#: maximize the dual in a small QP.
NEAR_TUBE = 0.1
#: At most this many near-tube examples are optimized in that QP (the nearest first).
MAX_FREE_MULTIPLIERS = 2000
#: That QP takes its dense Hessian (θ's own scale) up to this many variables, else the sparse
#: form through ``v = v₀ + Aθ``.
DENSE_SUBSET = 600


def check_targets(y, n_samples: int, *, name: str = "y") -> np.ndarray:
    """Real regression targets: a 1-D float64 array of length ``n_samples``, finite."""
    if isinstance(y, str) or sparse.issparse(y):
        raise TypeError(f"{name} must be a 1-D array of real numbers, got {type(y).__name__}")
    try:
        v = np.asarray(y)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be a 1-D array of real numbers: {exc}") from None
    if v.dtype == object or not (np.issubdtype(v.dtype, np.number) or v.dtype == np.bool_):
        raise TypeError(f"{name} must hold real numbers, got dtype {v.dtype}")
    if np.iscomplexobj(v):
        raise TypeError(f"{name} must be real, got complex dtype {v.dtype}")
    v = np.ascontiguousarray(v, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if v.shape[0] != n_samples:
        raise ValueError(f"{name} must have length n_samples={n_samples}, got {v.shape[0]}")
    if not np.all(np.isfinite(v)):
        bad = v[~np.isfinite(v)][0]
        raise ValueError(f"{name} must contain only finite values (no NaN or inf), got {bad}")
    return v


def _bisect(slope, lo: float, hi: float, below) -> float:
    """The point where ``below(slope(b))`` stops holding, between ``lo`` and ``hi``."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if below(slope(mid)):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@dataclass(frozen=True, eq=False)
class SVRPrimal(Problem):
    """Linear ε-SVR: ``½‖w‖² (+ ½(b/s)²) + Σ C_i ℓ(y_i − w·x_i − b)`` (see the module).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Training data; converted once to float64.
    y : ndarray of shape (n_samples,)
        Real targets, finite.
    C : float, default=1.0
        Weight of the loss (> 0).
    epsilon : float, default=0.1
        Half-width of the insensitive tube (≥ 0; LIBLINEAR's ``-p``).
    loss : {"epsilon_insensitive", "squared_epsilon_insensitive"}
    bias : {"free", "regularized", "none"}, default="free"
    bias_scale : float, default=1.0
        The constant feature's value s for ``bias="regularized"`` (> 0).
    sample_weight : ndarray of shape (n_samples,), default=None
        Per-example weights ≥ 0, not all zero; ``C_i = C · sample_weight_i``.
    """

    kind: ClassVar[str] = "svr_primal"

    X: np.ndarray | sparse.csr_matrix
    y: np.ndarray
    C: float = 1.0
    epsilon: float = 0.1
    loss: str = "epsilon_insensitive"
    bias: str = "free"
    bias_scale: float = 1.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = check_X(self.X)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", check_targets(self.y, X.shape[0]))
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
        object.__setattr__(
            self, "epsilon", check_real("epsilon", self.epsilon, low=0.0, closed="left")
        )
        check_option("loss", self.loss, SVR_LOSSES)
        check_option("bias", self.bias, BIASES)
        object.__setattr__(self, "bias_scale", check_bias_scale(self.bias_scale))
        sw = (
            None
            if self.sample_weight is None
            else check_sample_weight(self.sample_weight, X.shape[0])
        )
        object.__setattr__(self, "sample_weight", sw)
        check_C_range(self.C, sw)
        check_linear_conditioning(self.C, sw, X, self.bias, self.bias_scale)

    # ---- sizes and parameters --------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def is_sparse(self) -> bool:
        return sparse.issparse(self.X)

    @property
    def squared(self) -> bool:
        """Whether the loss is the squared ε-insensitive one."""
        return self.loss == "squared_epsilon_insensitive"

    @property
    def upper_bounds(self) -> np.ndarray:
        """``C_i = C · sample_weight_i``."""
        return per_example_C(self.C, self.sample_weight, self.n_samples)

    def tube_scale(self) -> float:
        """The scale of the residuals near the tube's edge: ``max(ε, 10⁻² std(y))`` (1 when both
        are 0), which measures :data:`NEAR_TUBE`."""
        scale = max(self.epsilon, 1e-2 * float(np.std(self.y)))
        return scale if scale > 0 else 1.0

    @cached_property
    def row_norms(self) -> np.ndarray:
        """``‖x_i‖`` of every example, computed once (the certificates' rounding bounds)."""
        return np.sqrt(squared_norms(self.X))

    # ---- primal ----------------------------------------------------------------------------------
    def _check_w_b(self, w, b) -> tuple[np.ndarray, float]:
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape[0] != self.n_features:
            raise ValueError(f"w must have length n_features={self.n_features}, got {w.shape[0]}")
        b = 0.0 if b is None else float(b)
        if self.bias == "none" and b != 0.0:
            raise ValueError(f"b must be 0 for bias='none', got {b}")
        return w, b

    def decision_function(self, w, b: float = 0.0, X=None) -> np.ndarray:
        """``f(x) = w·x + b`` on the training data (or on ``X``)."""
        X = self.X if X is None else X
        return np.asarray(X @ w).ravel() + b

    def residuals(self, w, b: float = 0.0) -> np.ndarray:
        """``r_i = y_i − w·x_i − b``."""
        return self.y - self.decision_function(w, b)

    def loss_term(self, r: np.ndarray) -> float:
        """``Σ_i C_i ℓ(r_i)``."""
        xi = np.maximum(0.0, np.abs(r) - self.epsilon)
        if self.squared:
            xi = xi * xi
        return float(self.upper_bounds @ xi)

    def primal_objective(self, w, b: float = 0.0) -> float:
        """``P(w, b) = ½‖w‖² (+ ½(b/s)²) + Σ_i C_i ℓ(y_i − w·x_i − b)``."""
        w, b = self._check_w_b(w, b)
        P = 0.5 * float(w @ w) + self.loss_term(self.residuals(w, b))
        if self.bias == "regularized":
            P += 0.5 * (b / self.bias_scale) ** 2
        return P

    def best_bias(self, w) -> float:
        """The b minimizing ``P(w, ·)`` (0 for ``bias="none"``): bisection on its monotone
        subgradient ``−Σ C_i ℓ'(r_i − b)`` (+ ``b/s²``). Where the plain loss is flat over an
        interval of b, its midpoint."""
        if self.bias == "none":
            return 0.0
        w, _ = self._check_w_b(w, 0.0)
        t = self.residuals(w)
        C, eps = self.upper_bounds, self.epsilon
        inv_s2 = 1.0 / self.bias_scale**2 if self.bias == "regularized" else 0.0

        def slope(b: float) -> float:
            u = t - b  # the residuals at b
            out = np.maximum(0.0, np.abs(u) - eps)
            d = np.sign(u) * (2.0 * out if self.squared else (out > 0))
            return -float(C @ d) + b * inv_s2

        lo, hi = float(np.min(t)) - eps - 1.0, float(np.max(t)) + eps + 1.0
        if inv_s2:
            lo, hi = min(lo, 0.0), max(hi, 0.0)  # b/s² pulls the root towards 0
        if slope(lo) > 0 or slope(hi) < 0:  # only when every weight is zero
            return 0.0
        if self.squared or inv_s2:
            return _bisect(slope, lo, hi, lambda g: g < 0)
        zero = 1e-12 * float(np.sum(C))  # the plain loss's slope is a sum of ±C_i
        left = _bisect(slope, lo, hi, lambda g: g < -zero)
        if abs(slope(left)) > zero:
            return left
        return 0.5 * (left + _bisect(slope, left, hi, lambda g: g <= zero))

    # ---- dual ------------------------------------------------------------------------------------
    def _check_beta(self, beta) -> np.ndarray:
        beta = np.asarray(beta, dtype=np.float64).ravel()
        if beta.shape[0] != self.n_samples:
            raise ValueError(
                f"beta must have length n_samples={self.n_samples}, got {beta.shape[0]}"
            )
        if not np.all(np.isfinite(beta)):
            raise ValueError("beta must contain only finite values")
        return beta

    def dual_box(self) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of β: ``[−C_i, C_i]`` (plain loss), ``(−∞, ∞)`` (squared), ``{0}`` at
        ``C_i = 0``."""
        C = self.upper_bounds
        upper = np.where(C > 0, np.inf, 0.0) if self.squared else C
        return -upper, upper

    def project_dual(self, beta) -> np.ndarray:
        """Nearest dual-feasible β: the box, and ``Σ β_i = 0`` for a free bias."""
        beta = self._check_beta(beta)
        lower, upper = self.dual_box()
        if self.bias == "free":
            return project_box_hyperplane(beta, lower, upper, np.ones(self.n_samples), 0.0)
        return np.clip(beta, lower, upper)

    def weights_from_beta(self, beta) -> tuple[np.ndarray, float]:
        """``w = Σ β_i x_i`` and ``Σ β_i`` (the bias feature's weight over s)."""
        return np.asarray(self.X.T @ beta).ravel(), float(np.sum(beta))

    def dual_objective(self, beta) -> float:
        """``D(β) = yᵀβ − ε‖β‖₁ − ½‖Σ β_i x̃_i‖² (− Σ β_i²/(4C_i))`` (β feasible)."""
        beta = self._check_beta(beta)
        w, total = self.weights_from_beta(beta)
        D = float(self.y @ beta) - self.epsilon * float(np.abs(beta).sum()) - 0.5 * float(w @ w)
        if self.bias == "regularized":
            D -= 0.5 * (self.bias_scale * total) ** 2
        if self.squared:
            C = self.upper_bounds
            pos = C > 0
            D -= float(np.sum(beta[pos] ** 2 / (4.0 * C[pos])))
        return D

    def primal_from_dual(self, beta) -> tuple[np.ndarray, float]:
        """``(w, b)`` from β: ``w = Σ β_i x_i``; ``b = s² Σ β_i`` (regularized), 0 (none), or
        the exact minimizer of ``P(w, ·)`` (free)."""
        beta = self._check_beta(beta)
        w, total = self.weights_from_beta(beta)
        if self.bias == "regularized":
            return w, self.bias_scale**2 * total
        return w, self.best_bias(w)

    def dual_from_primal(self, w, b=None) -> np.ndarray:
        """A feasible β that closes the gap at the optimum (at the given b, else the exact one).

        Squared loss: the KKT map ``β_i = 2 C_i sign(r_i) max(0, |r_i| − ε)``, projected. Plain
        loss: complementary slackness fixes ``β_i = C_i sign(r_i)`` outside the tube and 0
        inside it, where ``|r_i|`` is more than ``NEAR_TUBE · tube_scale()`` from ε; the
        near-edge multipliers (at most ``MAX_FREE_MULTIPLIERS``, the nearest) maximize D with
        the others fixed, in a small QP over ``β = θ⁺ − θ⁻``, ``0 ≤ θ± ≤ C_i`` (``Σβ = 0`` for a
        free bias), as the soft margin's certificate does."""
        b_given = b is not None
        w, b = self._check_w_b(w, b)
        if self.bias == "free" and not b_given:
            b = self.best_bias(w)
        r = self.residuals(w, b)
        C = self.upper_bounds
        eps = self.epsilon
        if self.squared:
            return self.project_dual(2.0 * C * np.sign(r) * np.maximum(0.0, np.abs(r) - eps))
        gap = np.abs(r) - eps  # > 0 outside the tube
        band = NEAR_TUBE * self.tube_scale()
        beta = np.where(gap > 0, np.sign(r) * C, 0.0)
        near = np.flatnonzero((np.abs(gap) <= band) & (C > 0))
        if near.size > MAX_FREE_MULTIPLIERS:
            near = near[np.argsort(np.abs(gap[near]), kind="stable")[:MAX_FREE_MULTIPLIERS]]
        beta[near] = 0.0
        if near.size:
            beta[near] = self._maximize_on(beta, near)
        return self.project_dual(np.where(np.isfinite(beta), beta, 0.0))

    def _maximize_on(self, beta, near) -> np.ndarray:
        """Best β on ``near`` given the others, through ``θ = (θ⁺, θ⁻) ≥ 0``, ``β = θ⁺ − θ⁻``."""
        m = near.size
        C = self.upper_bounds[near]
        yF = self.y[near]
        v0, total0 = self.weights_from_beta(beta)
        XF = sparse.csr_matrix(self.X[near])
        A = sparse.hstack([XF.T, -XF.T], format="csr")
        if self.bias == "regularized":
            s = self.bias_scale
            row = sparse.csr_matrix(np.concatenate([np.full(m, s), np.full(m, -s)])[None, :])
            A = sparse.vstack([A, row], format="csr")
            v0 = np.append(v0, s * total0)
        c = np.concatenate([yF - self.epsilon, -yF - self.epsilon])
        eq = None
        if self.bias == "free":
            if not (-C.sum() <= -total0 <= C.sum()):
                return np.zeros(m)  # the subset cannot restore Σβ = 0: projected instead
            eq = np.concatenate([np.ones(m), -np.ones(m)])
        # θ = k φ with k = max C_i: the QP sees bounds ≤ 1 (Clarabel stalls on bounds of 1e4)
        k = float(C.max())
        upper = np.concatenate([C, C]) / k
        if 2 * m <= DENSE_SUBSET:  # the dense form: the QP sees θ's scale, not v₀'s
            H = (A.T @ A).toarray()
            phi = maximize_dual_on_subset(
                c / k, upper, H=H, g=A.T @ (v0 / k), eq=eq, eq_rhs=-total0 / k
            )
        else:
            phi = maximize_dual_on_subset(
                c / k, upper, A_sub=A, v0=v0 / k, eq=eq, eq_rhs=-total0 / k
            )
        theta = k * phi
        return np.clip(theta[:m], 0.0, C) - np.clip(theta[m:], 0.0, C)

    # ---- certificate -----------------------------------------------------------------------------
    def certificate(self, *, w=None, b=None, beta=None) -> Certificate:
        """Gap between a primal point ``(w, b)`` and a dual point β, either built from the other
        when missing (:meth:`primal_from_dual`, :meth:`dual_from_primal`); a given β is projected
        onto the dual feasible set first (``residuals["dual_infeasibility"]`` says how far it
        moved); a missing free ``b`` is the exact minimizer of ``P(w, ·)``."""
        residuals: dict[str, float] = {}
        a = None
        if beta is not None:
            raw = self._check_beta(beta)
            a = self.project_dual(raw)
            residuals["dual_infeasibility"] = float(np.max(np.abs(a - raw), initial=0.0))
        if w is None:
            if a is None:
                raise TypeError("certificate needs w (with b) or beta")
            w, b = self.primal_from_dual(a)
        else:
            w, _ = self._check_w_b(w, 0.0)
            b = self.best_bias(w) if b is None else self._check_w_b(w, b)[1]
        P = self.primal_objective(w, b)
        if a is None:
            a = self.dual_from_primal(w, b)
        D = self.dual_objective(a)
        return make_certificate(
            P,
            D,
            residuals=residuals,
            primal_point={"w": w, "b": b},
            dual_point=a,
            rounding=svr_linear_rounding(self, w, b, a, P, D),
        )

    def model_from(self, variables) -> LinearRegressionModel | None:
        """The :class:`~svmbench.problems.linear_regression_model.LinearRegressionModel`
        ``(w, b)`` of a solution, or None without a finite w."""
        w, b = variables.get("w"), variables.get("b")
        if w is None or not finite(w, b):
            return None
        return LinearRegressionModel(w, 0.0 if b is None else float(b))

    # ---- reference -------------------------------------------------------------------------------
    def to_qp(self) -> QP:
        """The primal QP over ``(w, b, ξ⁺, ξ⁻)``, one row per example,
        ``y_i − ε ≤ x_i·w + b + ξ⁺_i − ξ⁻_i ≤ y_i + ε``, ``ξ± ≥ 0``, with cost
        ``Σ C_i(ξ⁺_i + ξ⁻_i)`` (plain loss) or ``Σ C_i(ξ⁺_i² + ξ⁻_i²)`` (squared; at most one of
        the two is positive at the optimum) (+ ``b²/(2s²)``). Sparse: ``nnz(X) + O(n)``
        non-zeros. The multiplier of row i is ``−β_i``."""
        n, d = self.n_samples, self.n_features
        C = self.upper_bounds
        nb = int(self.bias != "none")
        p_b = np.array([1.0 / self.bias_scale**2 if self.bias == "regularized" else 0.0])[:nb]
        p_xi = np.r_[C, C] * 2.0 if self.squared else np.zeros(2 * n)
        P = sparse.diags(np.concatenate([np.ones(d), p_b, p_xi]), format="csc")
        q = np.concatenate([np.zeros(d + nb), np.zeros(2 * n) if self.squared else np.r_[C, C]])
        slack = sparse.hstack([sparse.identity(n), -sparse.identity(n)])
        ones = sparse.csr_matrix(np.ones((n, 1)))[:, :nb]
        rows = [
            sparse.hstack([sparse.csr_matrix(self.X), ones, slack], format="csc"),
            sparse.hstack([sparse.csc_matrix((2 * n, d + nb)), sparse.identity(2 * n)]),
        ]
        lo = [self.y - self.epsilon, np.zeros(2 * n)]
        up = [self.y + self.epsilon, np.full(2 * n, np.inf)]
        A = sparse.vstack(rows, format="csc")

        def recover(x, y_mult):
            return {"w": x[:d], "b": float(x[d]) if nb else 0.0, "beta": -y_mult[:n]}

        return QP(P, q, A, np.concatenate(lo), np.concatenate(up), recover, sense="primal")
