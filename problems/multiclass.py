"""The multiclass hinge (Crammer–Singer) linear SVM, with a cost matrix and an optional bias.

Notation (docs/ARCHITECTURE.md §2): k classes, labels ``y_i ∈ {0, …, k−1}``, weights ``W`` (k, d),
scores ``f_r(x) = w_r·x + b_r``, a cost matrix ``Δ`` (k×k, ``Δ(r, y)`` the cost of predicting r
when the truth is y; ``Δ ≥ 0``, ``Δ(y, y) = 0``, default the 0-1 cost ``1 − I``) and
``C_i = C · sample_weight_i``::

    P(W, b) = ½‖W‖_F² (+ ½‖b‖²/s²) + Σ_i C_i max_r (Δ(r, y_i) + f_r(x_i) − f_{y_i}(x_i)).

The loss is Crammer & Singer's (JMLR 2001) with the margin rescaled by Δ (Tsochantaridis et al.,
JMLR 2005); ``r = y_i`` contributes 0, so the max is ≥ 0. A regularized bias is an extra feature
of constant value ``s = bias_scale`` with weights ``w_{r,b} = b_r / s``: ``x̃_i = (x_i, s)`` and
``W̃ = (W, b/s)``. The dual has one scaled simplex per example::

    β_ir ≥ 0,  Σ_r β_ir = C_i,   w̃_r = Σ_i (C_i 1[y_i = r] − β_ir) x̃_i,
    D(β) = Σ_{i,r} β_ir Δ(r, y_i) − ½‖W̃(β)‖_F².

A free bias is not offered: stationarity in ``b_r`` would add the k equalities
``Σ_i (C_i 1[y_i = r] − β_ir) = 0``, which couple all examples, so the feasible set would no
longer be a product of per-example simplices (the structure every Crammer–Singer solver uses).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems._linear import MAX_FREE_MULTIPLIERS
from svmbench.problems._qp import maximize_dual_on_subset, solve_osqp_form_with_clarabel
from svmbench.problems.base import QP, Certificate, Problem, make_certificate
from svmbench.problems.kernels import squared_norms
from svmbench.problems.models import CrammerSingerModel, finite
from svmbench.problems.rounding_scores import multiclass_rounding
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

MULTICLASS_BIASES = ("none", "regularized")

#: Multipliers of an example whose loss-augmented scores ``z_ir`` have one clear argmax (all others
#: lower by more than this) are fixed by complementary slackness (``β_i = C_i e_argmax``) when a
#: dual point is built from a primal one; the ``β_ir`` with ``z_ir`` this close to the max are
#: optimized in a small QP (the multiclass counterpart of ``_linear.NEAR_MARGIN``).
NEAR_ARGMAX = 0.1


def project_simplex_rows(V: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Row-wise Euclidean projection of ``V`` (n, k) onto ``{β ≥ 0, Σ_r β_r = radius_i}``.

    Sort-based (Held, Wolfe & Crowder 1974; Duchi et al., ICML 2008): with ``u`` the row sorted in
    decreasing order, ``ρ = max{j : u_j − (Σ_{l≤j} u_l − radius)/j > 0}`` and
    ``τ = (Σ_{l≤ρ} u_l − radius)/ρ``, the projection is ``max(v − τ, 0)``. Rows with
    ``radius_i = 0`` become 0; the rounding residue of each sum is removed from its largest entry.
    """
    V = np.asarray(V, dtype=np.float64)
    n, k = V.shape
    rows = np.arange(n)
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - radius[:, None]
    cond = U - css / np.arange(1, k + 1) > 0
    rho = k - 1 - np.argmax(cond[:, ::-1], axis=1)  # last index where cond holds
    tau = css[rows, rho] / (rho + 1)
    B = np.maximum(V - tau[:, None], 0.0)
    top = np.argmax(B, axis=1)
    B[rows, top] -= B.sum(axis=1) - radius  # the largest entry is ≥ radius/k, far from 0
    B[radius <= 0] = 0.0
    return B


@dataclass(frozen=True, eq=False)
class MulticlassHinge(Problem):
    """Multiclass hinge (Crammer–Singer) linear SVM: variables ``W`` (k, d) and ``b`` (k,).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Training data; converted once to float64.
    y : ndarray of shape (n_samples,)
        Class indices 0..k-1 (k ≥ 2); every class must be present.
    C : float, default=1.0
        Weight of the loss (> 0).
    cost : ndarray of shape (k, k), default=None
        ``cost[r, y]`` is the cost Δ(r, y) of predicting r when the truth is y: finite, ≥ 0, zero
        diagonal. Default the 0-1 cost ``1 − I`` (Crammer–Singer); stored converted.
    bias : {"none", "regularized"}, default="none"
        Absent, or regularized through a constant feature ``bias_scale`` (LIBLINEAR's -B). A free
        bias is rejected (see the module docstring).
    bias_scale : float, default=1.0
        The constant feature's value s for ``bias="regularized"`` (> 0); ``b_r = s·w_{r,b}``.
    sample_weight : ndarray of shape (n_samples,), default=None
        Per-example weights ≥ 0; ``C_i = C · sample_weight_i``.
    """

    kind: ClassVar[str] = "multiclass_hinge"

    X: np.ndarray | sparse.csr_matrix
    y: np.ndarray
    C: float = 1.0
    cost: np.ndarray | None = None
    bias: str = "none"
    bias_scale: float = 1.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = check_X(self.X)
        object.__setattr__(self, "X", X)
        y, k = check_multiclass_labels(self.y, X.shape[0])
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
        object.__setattr__(self, "cost", _check_cost(self.cost, k))
        if self.bias == "free":
            raise ValueError(
                "bias='free' is not supported by the multiclass hinge: a free bias adds k equality "
                "constraints Σ_i (C_i 1[y_i = r] − β_ir) = 0 that couple all examples and break "
                "the per-example (simplex) dual; use bias='regularized' or bias='none'"
            )
        check_option("bias", self.bias, MULTICLASS_BIASES)
        object.__setattr__(self, "bias_scale", check_bias_scale(self.bias_scale))
        sw = self.sample_weight
        sw = None if sw is None else check_sample_weight(sw, X.shape[0])
        object.__setattr__(self, "sample_weight", sw)
        check_C_range(self.C, self.sample_weight, weighted=True)  # a kernel fit's pairs
        check_linear_conditioning(self.C, self.sample_weight, X, self.bias, self.bias_scale)

    # ---- sizes -------------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        return self.cost.shape[0]

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
    def _check_W_b(self, W, b) -> tuple[np.ndarray, np.ndarray]:
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

    def model_from(self, variables) -> CrammerSingerModel | None:
        """The :class:`~svmbench.problems.models.CrammerSingerModel` ``(W, b)`` of a solution
        (b zero when absent), or None without a finite W."""
        W, b = variables.get("W"), variables.get("b")
        if W is None or not finite(W, b):
            return None
        return CrammerSingerModel(W, np.zeros(self.n_classes) if b is None else b)

    def decision_function(self, W, b=None, X=None) -> np.ndarray:
        """Scores ``f_r(x_i) = w_r·x_i + b_r``, shape (n, k), on the training data (or on ``X``)."""
        W, b = self._check_W_b(W, b)
        X = self.X if X is None else X
        return np.asarray(X @ W.T) + b

    def predict(self, W, b=None, X=None) -> np.ndarray:
        """The predicted class ``argmax_r f_r(x)`` of each row of the training data (or ``X``)."""
        return np.argmax(self.decision_function(W, b, X), axis=1)

    def augmented_scores(self, W, b=None) -> np.ndarray:
        """``z_ir = Δ(r, y_i) + f_r(x_i) − f_{y_i}(x_i)``, shape (n, k); ``z_{i,y_i} = 0``."""
        F = self.decision_function(W, b)
        rows = np.arange(self.n_samples)
        return self.cost[:, self.y].T + F - F[rows, self.y][:, None]

    def regularizer(self, W, b=None) -> float:
        """``½‖W‖_F²``, plus ``½ Σ_r w_{r,b}² = ½‖b‖²/s²`` for a regularized bias."""
        W, b = self._check_W_b(W, b)
        r = 0.5 * float(np.sum(W * W))
        if self.bias == "regularized":
            r += 0.5 * float(b @ b) / self.bias_scale**2
        return r

    def primal_objective(self, W, b=None) -> float:
        """``P(W, b) = ½‖W‖_F² (+ ½‖b‖²/s²) + Σ_i C_i max_r z_ir`` (``b = None`` means 0)."""
        W, b = self._check_W_b(W, b)
        xi = np.max(self.augmented_scores(W, b), axis=1)
        return self.regularizer(W, b) + float(self.upper_bounds @ xi)

    def best_bias(self, W) -> np.ndarray:
        """The b minimizing ``P(W, ·)``: zeros for ``bias="none"``; for a regularized bias the
        solution of the small QP ``min ½‖b‖²/s² + Σ C_i ξ_i  s.t.  ξ_i − b_r + b_{y_i} ≥ z_ir``
        over ``(b, ξ)`` (n·k rows of at most 3 non-zeros), solved by Clarabel."""
        W, _ = self._check_W_b(W, None)
        k, n = self.n_classes, self.n_samples
        if self.bias == "none":
            return np.zeros(k)
        z = self.augmented_scores(W)
        i = np.repeat(np.arange(n), k)
        r = np.tile(np.arange(k), n)
        off = r != self.y[i]  # rows (i, y_i) read ξ_i ≥ 0: the b terms cancel
        row = np.arange(n * k)
        A = sparse.csc_matrix(
            (
                np.concatenate([np.ones(n * k), -np.ones(off.sum()), np.ones(off.sum())]),
                (
                    np.concatenate([row, row[off], row[off]]),
                    np.concatenate([k + i, r[off], self.y[i][off]]),
                ),
            ),
            shape=(n * k, k + n),
        )
        p_b = np.full(k, 1.0 / self.bias_scale**2)
        P = sparse.diags(np.concatenate([p_b, np.zeros(n)]), format="csc")
        q = np.concatenate([np.zeros(k), self.upper_bounds])
        out = solve_osqp_form_with_clarabel(P, q, A, z.ravel(), np.full(n * k, np.inf))
        return out.x[:k].copy()

    # ---- dual side ---------------------------------------------------------------------------
    def _check_beta(self, beta) -> np.ndarray:
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
        """``W = Γᵀ X`` with ``Γ_ir = C_i 1[y_i = r] − β_ir``, and ``Σ_i Γ_ir`` (the bias
        feature's weight ``w_{r,b}`` over s)."""
        G = -beta.copy()
        G[np.arange(self.n_samples), self.y] += self.upper_bounds
        W = np.asarray(self.X.T @ G).T
        return np.ascontiguousarray(W), G.sum(axis=0)

    def dual_objective(self, beta) -> float:
        """``D(β) = Σ_{i,r} β_ir Δ(r, y_i) − ½‖W̃(β)‖_F²``."""
        beta = self._check_beta(beta)
        W, sum_g = self._weights_from_beta(beta)
        D = float(np.sum(beta * self.cost[:, self.y].T)) - 0.5 * float(np.sum(W * W))
        if self.bias == "regularized":
            D -= 0.5 * self.bias_scale**2 * float(sum_g @ sum_g)
        return D

    def project_dual(self, beta) -> np.ndarray:
        """Nearest dual-feasible point: each row onto ``{β_i ≥ 0, Σ_r β_ir = C_i}``."""
        return project_simplex_rows(self._check_beta(beta), self.upper_bounds)

    def primal_from_dual(self, beta) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)`` from β by stationarity: ``w_r = Σ_i (C_i 1[y_i = r] − β_ir) x_i``;
        ``b_r = s·w_{r,b} = s² Σ_i (C_i 1[y_i = r] − β_ir)`` (regularized) or 0 (none)."""
        beta = self._check_beta(beta)
        W, sum_g = self._weights_from_beta(beta)
        if self.bias == "regularized":
            return W, self.bias_scale**2 * sum_g
        return W, np.zeros(self.n_classes)

    def dual_from_primal(self, W, b=None) -> np.ndarray:
        """A feasible β that closes the gap at the optimum (docs/ARCHITECTURE.md §3).

        From the loss-augmented scores ``z_ir``: an example whose argmax is clear (every other
        ``z_ir`` lower by more than ``NEAR_ARGMAX``) gets ``β_i = C_i e_argmax`` by complementary
        slackness; on the others, the ``β_ir`` with ``z_ir`` within ``NEAR_ARGMAX`` of the max are
        freed (the most ambiguous examples first, at most ``MAX_FREE_MULTIPLIERS`` of them, the
        rest fixed to the argmax) and D is maximized over them, one equality
        ``Σ_{r free} β_ir = C_i`` per example. A missing ``b`` is :meth:`best_bias`.
        """
        W, _ = self._check_W_b(W, None)
        b = self.best_bias(W) if b is None else self._check_W_b(W, b)[1]
        n = self.n_samples
        C = self.upper_bounds
        rows = np.arange(n)
        z = self.augmented_scores(W, b)
        top = np.argmax(z, axis=1)
        z_max = z[rows, top]
        beta = np.zeros_like(z)
        beta[rows, top] = C
        near = (z >= z_max[:, None] - NEAR_ARGMAX) & (C > 0)[:, None]
        n_near = near.sum(axis=1)
        ambiguous = np.flatnonzero(n_near >= 2)
        if ambiguous.size:
            second = np.partition(z[ambiguous], -2, axis=1)[:, -2]
            order = ambiguous[np.argsort(z_max[ambiguous] - second, kind="stable")]
            chosen = np.sort(order[np.cumsum(n_near[order]) <= MAX_FREE_MULTIPLIERS])
            if chosen.size:
                mask = np.zeros_like(near)
                mask[chosen] = near[chosen]
                ex, cls = np.nonzero(mask)  # row-major: grouped by example
                beta[chosen] = 0.0
                beta[ex, cls] = self._maximize_on(beta, ex, cls)
        return self.project_dual(beta)

    def _maximize_on(self, beta, ex, cls) -> np.ndarray:
        """Best ``β_{ex_t, cls_t}`` given the other multipliers (``maximize_dual_on_subset``).

        With θ the free multipliers, ``vec W̃(β) = v0 − A θ`` where column t of A is
        ``e_{cls_t} ⊗ x̃_{ex_t}`` and v0 is W̃ of the fixed multipliers (free ones at 0);
        ``c_t = Δ(cls_t, y_{ex_t})``. Always the form ``min ½‖v‖² − cᵀθ, v = v0 − Aθ``: its
        objective has the size of D, whereas the expanded ``½θᵀAᵀAθ − v0ᵀAθ`` cancels two terms of
        size ‖v0‖² (v0 still holds ``C_i x̃_i`` of every freed example), which cost the dense form
        a relative gap of 1.5e-8 at C = 10 and 9e-6 at C = 100 on digits (1e-12 in this form).
        """
        k, d, s = self.n_classes, self.n_features, self.bias_scale
        reg = self.bias == "regularized"
        dt = d + int(reg)
        m = ex.size
        C = self.upper_bounds
        W0, sum_g0 = self._weights_from_beta(beta)
        c = self.cost[cls, self.y[ex]]
        examples, group = np.unique(ex, return_inverse=True)
        E = sparse.csr_matrix((np.ones(m), (group, np.arange(m))), shape=(examples.size, m))
        XF = sparse.coo_matrix(self.X[ex])
        A = sparse.csr_matrix((XF.data, (cls[XF.row] * dt + XF.col, XF.row)), shape=(k * dt, m))
        v0 = W0
        if reg:
            A = A + sparse.csr_matrix((np.full(m, s), (cls * dt + d, np.arange(m))), shape=A.shape)
            v0 = np.hstack([W0, s * sum_g0[:, None]])
        return maximize_dual_on_subset(c, C[ex], A_sub=-A, v0=v0.ravel(), eq=E, eq_rhs=C[examples])

    # ---- certificate and QP ------------------------------------------------------------------
    def certificate(self, *, W=None, b=None, beta=None) -> Certificate:
        """Gap between a feasible primal point and a feasible dual point.

        Whatever is missing is built: ``(W, b)`` from β by :meth:`primal_from_dual`, β from
        ``(W, b)`` by :meth:`dual_from_primal`. A given β is projected onto the dual feasible set
        first (``residuals["dual_infeasibility"]`` says by how much it moved). A missing ``b`` is
        the exact minimizer of ``P(W, ·)`` (:meth:`best_bias`).
        """
        residuals: dict[str, float] = {}
        B = None
        if beta is not None:
            raw = self._check_beta(beta)
            B = self.project_dual(raw)
            residuals["dual_infeasibility"] = float(np.max(np.abs(B - raw)))
        if W is None:
            if B is None:
                raise TypeError("certificate needs W (with b) or beta")
            W, b = self.primal_from_dual(B)
        else:
            W, _ = self._check_W_b(W, None)
            b = self.best_bias(W) if b is None else self._check_W_b(W, b)[1]
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
            rounding=multiclass_rounding(self, W, b, B, P, D),
        )

    def to_qp(self) -> QP:
        """The primal QP over ``(vec W̃, ξ)`` (W̃ row-major, with the bias weights ``w_{r,b}`` as
        its last column for a regularized bias): ``min ½‖W̃‖_F² + Σ C_i ξ_i`` s.t.
        ``ξ_i − (w̃_r − w̃_{y_i})·x̃_i ≥ Δ(r, y_i)`` for ``r ≠ y_i`` and ``ξ_i ≥ 0``.

        Row ``i·k + r`` is the constraint of (i, r), the row ``i·k + y_i`` being ``ξ_i ≥ 0``:
        n·k rows of at most ``2·nnz(x̃_i) + 1`` non-zeros, never an n×n matrix. ``recover``
        reads ``β_ir = −y_{i·k+r}`` for ``r ≠ y_i`` (OSQP's ``y ≤ 0`` on active lower bounds) and
        ``β_{i,y_i} = C_i − Σ_{r≠y_i} β_ir``.
        """
        n, d, k = self.n_samples, self.n_features, self.n_classes
        reg = self.bias == "regularized"
        s = self.bias_scale
        dt = d + int(reg)
        y, C = self.y, self.upper_bounds
        Xt = sparse.csr_matrix(self.X)
        if reg:
            Xt = sparse.hstack([Xt, sparse.csr_matrix(np.full((n, 1), s))], format="csr")
        Xt = Xt.tocoo()
        ri, cj, v = Xt.row, Xt.col, Xt.data
        rows, cols, vals = [], [], []
        for r in range(k):
            off = y[ri] != r
            i, j, x = ri[off], cj[off], v[off]
            rows += [i * k + r, i * k + r]
            cols += [r * dt + j, y[i] * dt + j]
            vals += [-x, x]
        rows.append(np.arange(n * k))
        cols.append(k * dt + np.repeat(np.arange(n), k))
        vals.append(np.ones(n * k))
        A = sparse.csc_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(n * k, k * dt + n),
        )
        P = sparse.diags(np.concatenate([np.ones(k * dt), np.zeros(n)]), format="csc")
        q = np.concatenate([np.zeros(k * dt), C])
        lo = self.cost[:, y].T.ravel()  # Δ(r, y_i) at row i·k + r; 0 on the ξ_i ≥ 0 rows
        up = np.full(n * k, np.inf)
        idx = np.arange(n)

        def recover(x, y_mult):
            Wt = np.asarray(x[: k * dt], dtype=np.float64).reshape(k, dt)
            b = s * Wt[:, d].copy() if reg else np.zeros(k)
            beta = -np.asarray(y_mult[: n * k], dtype=np.float64).reshape(n, k).copy()
            beta[idx, y] = 0.0
            beta[idx, y] = C - beta.sum(axis=1)
            return {"W": np.ascontiguousarray(Wt[:, :d]), "b": b, "beta": beta}

        return QP(P, q, A, lo, up, recover, sense="primal")


def _check_cost(cost, k: int) -> np.ndarray:
    """Return the cost matrix as a C-contiguous float64 (k, k) array (default ``1 − I``)."""
    if cost is None:
        return 1.0 - np.eye(k)
    if sparse.issparse(cost):
        raise TypeError("cost must be a dense (k, k) array, got a sparse matrix")
    try:
        cost = np.asarray(cost)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"cost must be a (k, k) array of numbers: {exc}") from None
    if cost.dtype == object or not (
        np.issubdtype(cost.dtype, np.number) or np.issubdtype(cost.dtype, np.bool_)
    ):
        raise TypeError(f"cost must hold real numbers, got dtype {cost.dtype}")
    if np.iscomplexobj(cost):
        raise TypeError(f"cost must be real, got complex dtype {cost.dtype}")
    cost = np.array(cost, dtype=np.float64, order="C")
    if cost.shape != (k, k):
        raise ValueError(f"cost must have shape (k, k) = ({k}, {k}), got {cost.shape}")
    if not np.all(np.isfinite(cost)):
        raise ValueError("cost must contain only finite values (no NaN or inf)")
    if np.any(cost < 0):
        raise ValueError(f"cost must be >= 0 everywhere, got minimum {cost.min()}")
    if np.any(np.diag(cost) != 0):
        raise ValueError(f"cost must have a zero diagonal (Δ(y, y) = 0), got {np.diag(cost)}")
    return cost
