"""The multinomial logistic loss (softmax regression), L2-regularized, in C-form, with its
certificate.

Primal, over ``W`` (k, d) and ``b`` (k,), scores ``f_r(x) = w_r·x + b_r``::

    P(W, b) = ½‖W‖_F² (+ ½‖b‖²/s² for bias="regularized")
              + Σ_i C_i (log Σ_r e^{f_r(x_i)} − f_{y_i}(x_i))

with ``C_i = C · sample_weight_i``; bias ``"regularized"`` (a constant feature ``s =
bias_scale`` whose weights ``w_{r,b} = b_r/s`` are regularized, LIBLINEAR's ``-B``) or
``"none"``. A free bias is refused: the scores are invariant under adding one constant to every
``b_r``, so a free b is never unique, and its stationarity adds k equalities
``Σ_i β_ir = Σ_{i: y_i = r} C_i`` to the dual that couple all examples; a dual point built from
an approximate primal one does not meet them, and projecting onto the simplices and the
equalities together is a transport problem of its own.

Fenchel dual. ``log Σ_r e^{f_r} = max_{p ∈ Δ} (p·f − Σ_r p_r log p_r)``; with ``β_i = C_i p_i``
on the simplex scaled by ``C_i`` (``β_ir ≥ 0``, ``Σ_r β_ir = C_i``), minimizing the Lagrangian
over ``(W, b)`` gives ``w_r = Σ_i (C_i 1[y_i = r] − β_ir) x_i`` (Γ = C e_y − β, ``W = Γᵀ X``) and

    D(β) = −½‖W(β)‖_F² (− ½ s² ‖Σ_i Γ_i‖² regularized) − Σ_{i,r} β_ir log(β_ir / C_i),

the entropy terms evaluated with ``xlogy`` (each ``−β log(β/C) ≥ 0``, 0 at ``β ∈ {0, C}``, never
``log 0``). Weak duality ``P ≥ D`` holds for every feasible pair; the KKT map of a primal point
is ``β_i = C_i softmax(f(x_i))``, strictly inside the simplex, and closes the gap at the optimum
(its gap is second order in ``W − W*``). This is the maximum-entropy dual of Yu, Huang & Lin
(2011, Section 5) in the C-form used here.

The loss is not quadratic: :meth:`MultinomialLogistic.to_qp` refuses; the reference is CVXPY's
exponential cone (``cp.log_sum_exp``), :meth:`MultinomialLogistic.to_cvxpy`.

References
----------
H.-F. Yu, F.-L. Huang, C.-J. Lin. Dual coordinate descent methods for logistic regression and
maximum entropy models. Machine Learning 85(1–2), 2011.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy import sparse
from scipy.special import xlogy

from svmbench.problems.base import QP, Certificate, Problem, make_certificate
from svmbench.problems.kernels import squared_norms
from svmbench.problems.logistic_model import MultinomialLogisticModel
from svmbench.problems.models import finite
from svmbench.problems.multiclass import MULTICLASS_BIASES, project_simplex_rows
from svmbench.problems.rounding_scores import multinomial_rounding
from svmbench.problems.validation import (
    check_bias_scale,
    check_C_range,
    check_linear_conditioning,
    check_multiclass_labels,
    check_option,
    check_real,
    check_sample_weight,
    check_X,
    per_example_C,
)

__all__ = ["MultinomialLogistic", "row_logsumexp", "row_softmax"]

#: Newton steps of the exact regularized bias (a k-dimensional strictly convex problem).
BIAS_NEWTON_STEPS = 100


def row_logsumexp(F: np.ndarray) -> np.ndarray:
    """``log Σ_r e^{F_ir}`` per row, shifted by the row's max (no overflow): (n,)."""
    top = F.max(axis=1)
    return top + np.log(np.exp(F - top[:, None]).sum(axis=1))


def row_softmax(F: np.ndarray) -> np.ndarray:
    """``e^{F_ir} / Σ_q e^{F_iq}`` per row, shifted by the row's max: (n, k)."""
    E = np.exp(F - F.max(axis=1)[:, None])
    return E / E.sum(axis=1)[:, None]


@dataclass(frozen=True, eq=False)
class MultinomialLogistic(Problem):
    """Multinomial logistic regression: ``½‖W‖_F² + Σ_i C_i (log Σ_r e^{f_r(x_i)} − f_{y_i}(x_i))``.

    The module docstring has the primal and its entropy dual.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Training data; converted once to float64.
    y : ndarray of shape (n_samples,)
        Class indices 0..k-1 (k ≥ 2); every class must be present.
    C : float, default=1.0
        Weight of the loss (> 0).
    bias : {"none", "regularized"}, default="none"
        A free bias is refused (see the module docstring).
    bias_scale : float, default=1.0
        The constant feature's value s for ``bias="regularized"`` (> 0); ``b_r = s·w_{r,b}``.
    sample_weight : ndarray of shape (n_samples,), default=None
        Per-example weights ≥ 0; ``C_i = C · sample_weight_i``.
    """

    kind: ClassVar[str] = "multinomial_logistic"

    X: np.ndarray | sparse.csr_matrix
    y: np.ndarray
    C: float = 1.0
    bias: str = "none"
    bias_scale: float = 1.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = check_X(self.X)
        object.__setattr__(self, "X", X)
        y, _ = check_multiclass_labels(self.y, X.shape[0])
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
        if self.bias == "free":
            raise ValueError(
                "bias='free' is not supported by the multinomial logistic loss: a free bias is "
                "unique only up to a constant added to every b_r, and it adds k equality "
                "constraints Σ_i β_ir = Σ_{y_i=r} C_i that couple all examples in the dual; use "
                "bias='regularized' or bias='none'"
            )
        check_option("bias", self.bias, MULTICLASS_BIASES)
        object.__setattr__(self, "bias_scale", check_bias_scale(self.bias_scale))
        sw = self.sample_weight
        sw = None if sw is None else check_sample_weight(sw, X.shape[0])
        object.__setattr__(self, "sample_weight", sw)
        check_C_range(self.C, sw)
        check_linear_conditioning(self.C, sw, X, self.bias, self.bias_scale)

    # ---- sizes -------------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        return int(self.y.max()) + 1

    @property
    def is_sparse(self) -> bool:
        return sparse.issparse(self.X)

    @cached_property
    def row_norms(self) -> np.ndarray:
        """``‖x_i‖`` of every example, computed once (the certificates' rounding bounds)."""
        return np.sqrt(squared_norms(self.X))

    @property
    def upper_bounds(self) -> np.ndarray:
        """``C_i = C · sample_weight_i``: each row of β lies on the simplex of total ``C_i``."""
        return per_example_C(self.C, self.sample_weight, self.n_samples)

    # ---- primal side -------------------------------------------------------------------------
    def check_W_b(self, W, b) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)`` as float arrays of shapes (k, d) and (k,) (b = 0 when None)."""
        k, d = self.n_classes, self.n_features
        W = np.asarray(W, dtype=np.float64)
        if W.shape != (k, d):
            raise ValueError(f"W must have shape (n_classes, n_features)={(k, d)}, got {W.shape}")
        if b is None:
            return W, np.zeros(k)
        b = np.asarray(b, dtype=np.float64).ravel()
        if b.shape != (k,):
            raise ValueError(f"b must have length n_classes={k}, got shape {b.shape}")
        if self.bias == "none" and np.any(b != 0.0):
            raise ValueError(f"b must be 0 for bias='none', got {b}")
        return W, b

    def decision_function(self, W, b=None, X=None) -> np.ndarray:
        """Scores ``f_r(x_i) = w_r·x_i + b_r``, shape (n, k), on the training data (or ``X``)."""
        W, b = self.check_W_b(W, b)
        X = self.X if X is None else X
        return np.asarray(X @ W.T) + b

    def regularizer(self, W, b=None) -> float:
        """``½‖W‖_F²``, plus ``½‖b‖²/s²`` for a regularized bias."""
        W, b = self.check_W_b(W, b)
        r = 0.5 * float(np.sum(W * W))
        if self.bias == "regularized":
            r += 0.5 * float(b @ b) / self.bias_scale**2
        return r

    def losses(self, F: np.ndarray) -> np.ndarray:
        """``log Σ_r e^{F_ir} − F_{i,y_i}`` per example (no overflow), ≥ 0."""
        return np.maximum(row_logsumexp(F) - F[np.arange(F.shape[0]), self.y], 0.0)

    def primal_objective(self, W, b=None) -> float:
        """``P(W, b)`` of the module docstring (``b = None`` means 0)."""
        W, b = self.check_W_b(W, b)
        F = self.decision_function(W, b)
        return self.regularizer(W, b) + float(self.upper_bounds @ self.losses(F))

    def best_bias(self, W) -> np.ndarray:
        """The b minimizing ``P(W, ·)``: zeros for ``bias="none"``; for a regularized bias
        Newton's method with backtracking on the strictly convex
        ``½‖b‖²/s² + Σ_i C_i (log Σ_r e^{f_ir + b_r} − f_{i,y_i} − b_{y_i})`` (k variables)."""
        W, _ = self.check_W_b(W, None)
        k = self.n_classes
        if self.bias == "none":
            return np.zeros(k)
        F0 = self.decision_function(W)
        C = self.upper_bounds
        counts = np.bincount(self.y, weights=C, minlength=k)  # Σ_{y_i = r} C_i
        inv_s2 = 1.0 / self.bias_scale**2

        def value(b):
            return 0.5 * inv_s2 * float(b @ b) + float(C @ self.losses(F0 + b))

        b = np.zeros(k)
        f = value(b)
        for _ in range(BIAS_NEWTON_STEPS):
            Pr = row_softmax(F0 + b)
            g = inv_s2 * b + C @ Pr - counts
            H = inv_s2 * np.eye(k) + np.diag(C @ Pr) - (Pr * C[:, None]).T @ Pr
            step = np.linalg.solve(H, -g)
            decrease = -float(g @ step)
            if not decrease > 1e-30 * max(1.0, abs(f)):
                break
            t = 1.0
            while t > 1e-10:
                f_new = value(b + t * step)
                if f_new <= f - 0.25 * t * decrease:
                    break
                t *= 0.5
            else:
                break
            b, f = b + t * step, f_new
        return b

    # ---- dual side ---------------------------------------------------------------------------
    def check_beta(self, beta) -> np.ndarray:
        """β as a finite float array of shape (n, k)."""
        n, k = self.n_samples, self.n_classes
        beta = np.asarray(beta, dtype=np.float64)
        if beta.shape != (n, k):
            raise ValueError(
                f"beta must have shape (n_samples, n_classes)={(n, k)}, got {beta.shape}"
            )
        if not np.all(np.isfinite(beta)):
            raise ValueError("beta must contain only finite values")
        return beta

    def _weights_from_beta(self, beta) -> tuple[np.ndarray, np.ndarray]:
        """``W = Γᵀ X`` with ``Γ_ir = C_i 1[y_i = r] − β_ir``, and ``Σ_i Γ_i``."""
        G = -beta.copy()
        G[np.arange(self.n_samples), self.y] += self.upper_bounds
        W = np.asarray(self.X.T @ G).T
        return np.ascontiguousarray(W), G.sum(axis=0)

    def entropy(self, beta) -> float:
        """``−Σ_{i,r} β_ir log(β_ir / C_i)`` (``xlogy``: 0 at β = 0; rows with C_i = 0 add 0)."""
        C = self.upper_bounds
        pos = C > 0
        B = beta[pos]
        return float(-np.sum(xlogy(B, B / C[pos][:, None])))

    def dual_objective(self, beta) -> float:
        """``D(β)`` of the module docstring (β on the scaled simplices)."""
        beta = self.check_beta(beta)
        W, sum_g = self._weights_from_beta(beta)
        D = -0.5 * float(np.sum(W * W))
        if self.bias == "regularized":
            D -= 0.5 * self.bias_scale**2 * float(sum_g @ sum_g)
        return D + self.entropy(beta)

    def project_dual(self, beta) -> np.ndarray:
        """Nearest dual-feasible point: each row onto ``{β_i ≥ 0, Σ_r β_ir = C_i}``."""
        return project_simplex_rows(self.check_beta(beta), self.upper_bounds)

    def primal_from_dual(self, beta) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)`` from β by stationarity: ``w_r = Σ_i Γ_ir x_i``; ``b_r = s² Σ_i Γ_ir``
        (regularized) or 0 (none)."""
        beta = self.check_beta(beta)
        W, sum_g = self._weights_from_beta(beta)
        if self.bias == "regularized":
            return W, self.bias_scale**2 * sum_g
        return W, np.zeros(self.n_classes)

    def dual_from_primal(self, W, b=None) -> np.ndarray:
        """The KKT map ``β_i = C_i softmax(f(x_i))`` (``b = None``: :meth:`best_bias`); its rows
        sum to ``C_i`` up to rounding, which the simplex projection removes."""
        W, _ = self.check_W_b(W, None)
        b = self.best_bias(W) if b is None else self.check_W_b(W, b)[1]
        beta = self.upper_bounds[:, None] * row_softmax(self.decision_function(W, b))
        return project_simplex_rows(beta, self.upper_bounds)

    def certificate(self, *, W=None, b=None, beta=None) -> Certificate:
        """Gap between a primal point ``(W, b)`` and a dual point β, either built from the other
        when missing; a given β is projected onto the simplices first
        (``residuals["dual_infeasibility"]`` says how far it moved); a missing b is
        :meth:`best_bias`."""
        residuals: dict[str, float] = {}
        B = None
        if beta is not None:
            raw = self.check_beta(beta)
            B = self.project_dual(raw)
            residuals["dual_infeasibility"] = float(np.max(np.abs(B - raw)))
        if W is None:
            if B is None:
                raise TypeError("certificate needs W (with b) or beta")
            W, b = self.primal_from_dual(B)
        else:
            W, _ = self.check_W_b(W, None)
            b = self.best_bias(W) if b is None else self.check_W_b(W, b)[1]
        P = self.primal_objective(W, b)
        if B is None:
            B = self.dual_from_primal(W, b)
        D = self.dual_objective(B)
        return make_certificate(
            P,
            D,
            residuals=residuals,
            primal_point={"W": W, "b": b},
            dual_point=B,
            rounding=multinomial_rounding(self, W, b, B, P, D),
        )

    def model_from(self, variables) -> MultinomialLogisticModel | None:
        """The :class:`~svmbench.problems.logistic_model.MultinomialLogisticModel` ``(W, b)`` of
        a solution (b zero when absent), or None without a finite W."""
        W, b = variables.get("W"), variables.get("b")
        if W is None or not finite(W, b):
            return None
        return MultinomialLogisticModel(W, np.zeros(self.n_classes) if b is None else b)

    # ---- references --------------------------------------------------------------------------
    def to_qp(self) -> QP:
        """Not a QP: the multinomial logistic loss is not quadratic (see :meth:`to_cvxpy`)."""
        raise NotImplementedError(
            "the multinomial logistic loss is not a QP (no to_qp); its reference formulation "
            "is CVXPY's exponential cone: MultinomialLogistic.to_cvxpy(), solved by the "
            "'logistic_cvxpy' solver"
        )

    def to_cvxpy(self):
        """The primal in CVXPY (``cp.log_sum_exp`` over each row of scores, the exponential
        cone) and a map back: ``(cvxpy.Problem, recover)``, ``recover()`` giving the
        ``certificate`` arguments ``W, b``. The objective is divided by ``max C_i`` (the same
        minimizer)."""
        import cvxpy as cp

        n, d, k = self.n_samples, self.n_features, self.n_classes
        C = self.upper_bounds
        scale = float(C.max())
        W = cp.Variable((k, d))
        b = cp.Variable(k) if self.bias != "none" else None
        F = self.X @ W.T
        if b is not None:
            F = F + np.ones((n, 1)) @ cp.reshape(b, (1, k), order="C")
        keep = np.flatnonzero(C > 0)
        onehot = np.zeros((keep.size, k))
        onehot[np.arange(keep.size), self.y[keep]] = 1.0
        Fk = F[keep, :]
        loss = (C[keep] / scale) @ (
            cp.log_sum_exp(Fk, axis=1) - cp.sum(cp.multiply(onehot, Fk), axis=1)
        )
        reg = 0.5 * cp.sum_squares(W)
        if self.bias == "regularized":
            reg = reg + 0.5 * cp.sum_squares(b) / self.bias_scale**2
        problem = cp.Problem(cp.Minimize(reg / scale + loss))

        def recover() -> dict:
            return {
                "W": np.asarray(W.value, dtype=np.float64),
                "b": np.zeros(k) if b is None else np.asarray(b.value, dtype=np.float64).ravel(),
            }

        return problem, recover
