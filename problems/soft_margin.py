"""The soft-margin linear SVM, in its primal and dual views.

``P(w, b) = ½‖w‖² + Σ_i C_i loss(y_i (w·x_i + b))`` with ``loss(m) = max(0, 1 − m)`` (hinge) or
``max(0, 1 − m)²`` (squared hinge), ``C_i = C · sample_weight_i``. Dual (docs/ARCHITECTURE.md §2):
``D(α) = Σα_i − ½‖Σ α_i y_i x̃_i‖²`` over ``0 ≤ α_i ≤ C_i`` (hinge) or
``D(α) = Σα_i − ½ αᵀ(Q + diag(1/(2C_i)))α`` over ``α ≥ 0`` (squared hinge), plus ``yᵀα = 0`` for a
free bias. :class:`SoftMarginPrimal` and :class:`SoftMarginDual` are the same problem with the same
optimum; they differ in the variables a solver works on and in the QP they export.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems._linear import BIASES, LOSSES, LinearBinaryMixin
from svmbench.problems.base import QP, Certificate, make_certificate
from svmbench.problems.kernels import squared_norms
from svmbench.problems.rounding import linear_rounding
from svmbench.problems.validation import (
    check_bias_scale,
    check_binary_labels,
    check_C_range,
    check_linear_conditioning,
    check_option,
    check_real,
    check_sample_weight,
    check_X,
    per_example_C,
)


@dataclass(frozen=True, eq=False)
class _SoftMargin(LinearBinaryMixin):
    """The soft-margin linear SVM, whichever view: its data, parameters, objectives and
    certificate (the two views below differ only in the variables they offer and the QP they
    export).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Training data; converted once to float64.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}; both classes must be present.
    C : float, default=1.0
        Weight of the loss (> 0).
    loss : {"hinge", "squared_hinge"}, default="hinge"
    bias : {"free", "regularized", "none"}, default="free"
        Free (LIBSVM), regularized through a constant feature ``bias_scale`` (LIBLINEAR's -B), or
        absent.
    bias_scale : float, default=1.0
        The constant feature's value s for ``bias="regularized"`` (> 0).
    sample_weight : ndarray of shape (n_samples,), default=None
        Per-example weights ≥ 0; ``C_i = C · sample_weight_i``.
    """

    X: np.ndarray | sparse.csr_matrix
    y: np.ndarray
    C: float = 1.0
    loss: str = "hinge"
    bias: str = "free"
    bias_scale: float = 1.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = check_X(self.X)
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
        check_C_range(self.C, self.sample_weight, weighted=True)
        check_linear_conditioning(self.C, self.sample_weight, X, self.bias, self.bias_scale)

    @property
    def upper_bounds(self) -> np.ndarray:
        """``C_i = C · sample_weight_i``."""
        return per_example_C(self.C, self.sample_weight, self.n_samples)

    @property
    def loss_kind(self) -> str:
        return self.loss

    @cached_property
    def row_norms(self) -> np.ndarray:
        """``‖x_i‖`` of every example, computed once (the certificates' rounding bounds)."""
        return np.sqrt(squared_norms(self.X))

    def certificate(self, *, w=None, b=None, alpha=None) -> Certificate:
        """Gap between a feasible primal point and a feasible dual point.

        Whatever is missing is built: ``(w, b)`` from α by :meth:`primal_from_dual`, α from
        ``(w, b)`` by :meth:`dual_from_primal`. A given α is projected onto the dual feasible set
        first (``residuals["dual_infeasibility"]`` says by how much it moved). A missing ``b`` is
        the exact minimizer of ``P(w, ·)``.
        """
        if alpha is None and w is not None and self.loss == "squared_hinge":
            if self.bias != "free":
                cert = self._squared_hinge_certificate(w, b)
                if cert is not None:
                    return cert
        if self.loss == "hinge" and w is not None and b is not None and alpha is not None:
            return self._hinge_certificate(w, b, alpha)
        w, b, a, residuals = self._certificate_points(w, b, alpha)
        m = self.margins(w, b)
        loss = self.loss_term(m)
        P = self.regularizer(w, b) + loss
        if a is None:
            a = self.dual_from_primal(w, b)
        return self._judged(w, b, m, loss, P, a, residuals)

    def _judged(self, w, b, m, loss, P, a, residuals) -> Certificate:
        """The certificate of ``(w, b)`` (margins ``m``, loss and ``P`` computed) against the
        feasible α: ``D(α) = Σα_i − ½‖v‖² (− ½(sΣα_i y_i)²) (− Σα_i²/(4C_i))``,
        ``v = Σ α_i y_i x_i``, and the rounding allowance of both
        (:func:`~problems.rounding.linear_rounding`)."""
        v, sum_ay = self._weights_from_alpha(a)
        v_sq = float(v @ v)
        if self.bias == "regularized":
            v_sq += (self.bias_scale * sum_ay) ** 2
        squared = self._squared_hinge_term(a)
        D = float(a.sum()) - 0.5 * v_sq - squared
        P, D, rounding = linear_rounding(
            self, w, b, m, loss, P, D, alpha=a, v_norm=float(np.sqrt(v_sq)), squared=squared
        )
        return make_certificate(
            P,
            D,
            residuals=residuals,
            primal_point={"w": w, "b": b},
            dual_point=a,
            rounding=rounding,
        )

    def _squared_hinge_certificate(self, w, b) -> Certificate | None:
        """The certificate of ``(w, b)`` for the squared hinge with a regularized bias or none,
        the margins computed once: ``P = ½‖w‖² (+ ½(b/s)²) + Σ C_i ξ_i²``,
        ``ξ_i = max(0, 1 − m_i)``, and ``D`` at the KKT map ``α_i = 2C_i ξ_i``
        (:meth:`dual_from_primal`'s point, in the box ``α ≥ 0`` as it is: 0 where ``C_i = 0``),
        whose ``Σ α_i²/(4C_i)`` is ``Σ C_i ξ_i²``. A missing b is :meth:`best_bias`'s. None
        where a value is not finite (the general path then says why)."""
        missing = b is None
        w, b = self._check_w_b(w, b)
        if missing:
            b = self.best_bias(w)
        m = self.margins(w, b)
        xi = np.maximum(0.0, 1.0 - m)
        c_xi = self.upper_bounds * xi
        loss = float(c_xi @ xi)
        P = self.regularizer(w, b) + loss
        alpha = 2.0 * c_xi
        v, sum_ay = self._weights_from_alpha(alpha)
        v_sq = float(v @ v)
        if self.bias == "regularized":
            v_sq += (self.bias_scale * sum_ay) ** 2
        D = float(alpha.sum()) - 0.5 * v_sq - loss
        if not (np.isfinite(P) and np.isfinite(D)):
            return None
        P, D, rounding = linear_rounding(
            self, w, b, m, loss, P, D, alpha=alpha, v_norm=float(np.sqrt(v_sq)), squared=loss
        )
        return make_certificate(
            P, D, primal_point={"w": w, "b": b}, dual_point=alpha, rounding=rounding
        )

    def _hinge_certificate(self, w, b, alpha) -> Certificate:
        """The hinge's certificate of a full point ``(w, b, α)``, the values of the general
        path with fewer array calls: ``C_i`` built once, α checked once, and an α already in
        its box (hence finite) and, for a free bias, exactly on ``yᵀα = 0`` taken as its own
        projection (a solver's point, the exact finish's) instead of searched for.
        ``P = ½‖w̃‖² + Σ C_i max(0, 1 − m_i)``, ``D = Σα_i − ½‖Σ α_i y_i x̃_i‖²``."""
        C = self.upper_bounds
        raw = np.asarray(alpha, dtype=np.float64).ravel()
        feasible = (
            raw.shape[0] == self.n_samples
            and raw.min() >= 0.0  # False for NaN
            and (raw <= C).all()
            and (self.bias != "free" or float(self.y @ raw) == 0.0)
        )
        if feasible:
            a, residuals = raw.copy(), {"dual_infeasibility": 0.0}
        else:
            a, residuals = self._repair_alpha(raw)  # the checks and the projection
        w, b = self._check_w_b(w, b)
        m = self.margins(w, b)
        loss = float(C @ np.maximum(0.0, 1.0 - m))
        return self._judged(w, b, m, loss, self.regularizer(w, b) + loss, a, residuals)


@dataclass(frozen=True, eq=False)
class SoftMarginPrimal(_SoftMargin):
    """Soft-margin linear SVM, primal view: variables ``w`` (n_features,) and ``b``.

    Parameters: see :class:`_SoftMargin` (X, y, C, loss, bias, bias_scale, sample_weight).
    """

    kind: ClassVar[str] = "soft_margin_primal"

    def to_qp(self) -> QP:
        """The primal QP over ``(w, b, ξ)``: ``min ½‖w‖² (+ b²/(2s²)) + Σ C_i ξ_i`` (hinge) or
        ``+ Σ C_i ξ_i²`` (squared hinge), s.t. ``y_i(x_i·w + b) + ξ_i ≥ 1`` (and ``ξ ≥ 0`` for
        the hinge). Sparse: ``n·d`` non-zeros, never an n×n matrix."""
        n, d = self.n_samples, self.n_features
        C = self.upper_bounds
        has_b = self.bias != "none"
        nb = int(has_b)
        p_w = np.ones(d)
        p_b = np.array([1.0 / self.bias_scale**2 if self.bias == "regularized" else 0.0])[:nb]
        hinge = self.loss == "hinge"
        p_xi = np.zeros(n) if hinge else 2.0 * C
        P = sparse.diags(np.concatenate([p_w, p_b, p_xi]), format="csc")
        q = np.concatenate([np.zeros(d + nb), C if hinge else np.zeros(n)])
        yX = sparse.csr_matrix(self.X).multiply(self.y[:, None])
        rows = [
            sparse.hstack(
                [yX, sparse.csr_matrix(self.y[:, None])[:, :nb], sparse.identity(n)], format="csc"
            )
        ]
        lo, up = [np.ones(n)], [np.full(n, np.inf)]
        if hinge:
            rows.append(sparse.hstack([sparse.csc_matrix((n, d + nb)), sparse.identity(n)]))
            lo.append(np.zeros(n))
            up.append(np.full(n, np.inf))
        A = sparse.vstack(rows, format="csc")

        def recover(x, y_mult):
            return {"w": x[:d], "b": float(x[d]) if has_b else 0.0, "alpha": -y_mult[:n]}

        return QP(P, q, A, np.concatenate(lo), np.concatenate(up), recover, sense="primal")


@dataclass(frozen=True, eq=False)
class SoftMarginDual(_SoftMargin):
    """Soft-margin linear SVM, dual view: variable ``alpha`` (n_samples,).

    The same problem and the same optimum as :class:`SoftMarginPrimal` (same parameters, see
    :class:`_SoftMargin`); solvers that work on α (dual coordinate descent, SMO) accept this
    view. A sibling of the primal view, not a subclass: a solver for one is not silently handed
    the other.
    """

    kind: ClassVar[str] = "soft_margin_dual"

    def to_qp(self) -> QP:
        """The dual QP over ``(α, v)``: ``min ½‖v‖² − Σα_i (+ Σα_i²/(4C_i))`` s.t.
        ``v = Σ α_i y_i x̃_i``, the box, and ``yᵀα = 0`` for a free bias. Written with the extra
        variable ``v`` (d̃ of them) so that it stays sparse: ``n·d`` non-zeros."""
        n, d = self.n_samples, self.n_features
        reg = self.bias == "regularized"
        dt = d + int(reg)
        hinge = self.loss == "hinge"
        C = self.upper_bounds
        p_alpha = np.zeros(n) if hinge else np.where(C > 0, 1.0 / (2.0 * np.maximum(C, 1e-300)), 0)
        P = sparse.diags(np.concatenate([p_alpha, np.ones(dt)]), format="csc")
        q = np.concatenate([-np.ones(n), np.zeros(dt)])
        XtY = sparse.csr_matrix(self.X).multiply(self.y[:, None]).T
        if reg:
            XtY = sparse.vstack([XtY, sparse.csr_matrix(self.bias_scale * self.y[None, :])])
        rows = [sparse.hstack([-XtY, sparse.identity(dt)], format="csc")]
        lo, up = [np.zeros(dt)], [np.zeros(dt)]
        rows.append(sparse.hstack([sparse.identity(n), sparse.csc_matrix((n, dt))]))
        lo.append(np.zeros(n))
        up.append(C if hinge else np.where(C > 0, np.inf, 0.0))
        if self.bias == "free":
            rows.append(sparse.csr_matrix(np.concatenate([self.y, np.zeros(dt)])[None, :]))
            lo.append(np.zeros(1))
            up.append(np.zeros(1))
        A = sparse.vstack(rows, format="csc")
        s = self.bias_scale

        def recover(x, y_mult):
            w = x[n : n + d]
            if self.bias == "free":
                b = float(y_mult[-1])
            elif reg:
                b = s * float(x[n + d])
            else:
                b = 0.0
            return {"w": w, "b": b, "alpha": x[:n]}

        return QP(P, q, A, np.concatenate(lo), np.concatenate(up), recover, sense="dual")
