"""Mathematics shared by the linear binary problems (hard margin, soft-margin primal and dual).

Notation (docs/ARCHITECTURE.md §2): ``f_i = w·x_i + b``, ``m_i = y_i f_i``, upper bounds ``C_i`` of
the dual box (``+inf`` for the hard margin), bias ``"free" | "regularized" | "none"``. With a
regularized bias the model carries an extra feature of constant value ``s`` whose weight is
``w_b = b / s``; the dual then sees ``x̃_i = (x_i, s)`` and the box only.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy import sparse

from svmbench.problems._binary import BinaryDualMixin
from svmbench.problems._qp import absorb_label_sum, maximize_dual_on_subset
from svmbench.problems.base import Problem
from svmbench.problems.kernels import squared_norms
from svmbench.problems.models import LinearModel, finite

BIASES = ("free", "regularized", "none")
LOSSES = ("hinge", "squared_hinge")

#: Multipliers of points whose margin residual |m_i − 1| exceeds this are fixed by
#: complementary slackness when a dual point is built from a primal one.
NEAR_MARGIN = 0.1
#: At most this many near-margin multipliers are optimized in that small QP.
MAX_FREE_MULTIPLIERS = 2000
#: The small QP (hinge loss) runs only when the cheap dual point already certifies a relative
#: gap at most this: the primal point is then near optimal and the QP closes the rest. Measured
#: on gaussian n = 20 000, d = 50 (Pegasos's points and the optimum, C ∈ {0.05, 1}, each bias):
#: the cheap gap was ≤ 2.6e-3 wherever the QP's was ≤ 1e-3 (1e-14 at the optimum); where the
#: cheap gap was above 0.1, the QP's was above 0.7 (up to 260: it did not help) and it cost
#: 0.04–0.3 s, a few epochs of Pegasos, against a few ms for the cheap point.
QP_BELOW_REL_GAP = 0.1
#: The cheap near-margin step solves its least-squares fit of the stationarity by dense normal
#: equations when its matrix has at most this many rows or columns, else by LSQR.
CHEAP_DENSE_LSTSQ = 100
#: LSQR iterations of that step.
CHEAP_LSQR_ITERATIONS = 50


def optimal_bias(f, y, upper, loss: str, *, bias_scale: float | None = None) -> float:
    """Exact minimizer over b of ``Σ_i C_i loss(y_i (f_i + b))`` (+ ``b²/(2s²)`` if scaled).

    ``loss`` is ``"hinge"``, ``"squared_hinge"`` or ``"hard"`` (``C_i = ∞``: the b that maximizes
    the smallest margin). The objective is convex in b; its subgradient is monotone, so the root
    is bracketed between the breakpoints ``t_i = y_i − f_i`` and found by bisection. Where the
    hinge's objective is flat over an interval of b (the violators' ``Σ C_i y_i = 0``, no point
    on the margin), every b of it is optimal and the midpoint is returned, as LIBSVM's rule
    (−(ub + lb)/2 without free multipliers) gives.
    """
    t = y - f
    if loss == "hard":
        return 0.5 * (np.max(t[y > 0]) + np.min(t[y < 0]))
    C = upper
    s2 = None if bias_scale is None else bias_scale**2

    def slope(b: float) -> float:
        viol = y * (f + b) < 1.0
        if loss == "hinge":
            g = -float(np.sum(C[viol] * y[viol]))
        else:
            g = -2.0 * float(np.sum(C[viol] * y[viol] * (1.0 - y[viol] * (f[viol] + b))))
        return g if s2 is None else g + b / s2

    lo, hi = float(np.min(t)) - 1.0, float(np.max(t)) + 1.0
    if s2 is not None:
        reach = s2 * float(np.sum(C)) * (2.0 * (np.max(np.abs(t)) + 1.0) if loss != "hinge" else 1)
        lo, hi = min(lo, -reach - 1.0), max(hi, reach + 1.0)
    if slope(lo) > 0 or slope(hi) < 0:  # only when all weights on one side are zero
        return 0.0
    if loss != "hinge" or s2 is not None:
        return _bisect(slope, lo, hi, lambda g: g < 0)
    return _hinge_root(t, y, C, lo, hi)


def _hinge_root(t, y, C, lo: float, hi: float) -> float:
    """The minimizer over b of the hinge's ``Σ C_i max(0, 1 − y_i(f_i + b))`` from its
    breakpoints ``t_i = y_i − f_i`` sorted once: its slope is
    ``−Σ_{y_i > 0, t_i > b} C_i + Σ_{y_i < 0, t_i < b} C_i``, constant between breakpoints, a
    running sum. The first breakpoint past which the slope is ``≥ −zero`` is the minimizer if the
    slope is above ``zero`` there; else the objective is flat up to the next breakpoint past which
    it is, and the middle of that interval is returned (LIBSVM's rule). ``zero``: the rounding of
    a sum of ±C_i, ``1e-12 Σ C_i``."""
    zero = 1e-12 * float(np.sum(C))
    order = np.argsort(t, kind="stable")
    ts = t[order]
    signed = np.where(y[order] > 0, C[order], 0.0)
    # slope just right of each sorted breakpoint: −(positives above) + (negatives at or below)
    positives = float(np.sum(signed))
    right = np.cumsum(C[order]) - positives
    # a run of equal breakpoints acts as one: its last entry holds the slope past it
    last = np.append(ts[1:] != ts[:-1], True)
    k = np.flatnonzero(last & (right >= -zero))
    left = float(ts[k[0]]) if -positives < -zero else lo
    slope_left = float(right[k[0]]) if -positives < -zero else -positives
    if abs(slope_left) > zero:
        return left
    j = np.flatnonzero(last & (right > zero) & (ts > left))
    end = float(ts[j[0]]) if j.size else hi
    return 0.5 * (left + end)


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


class LinearBinaryMixin(BinaryDualMixin, Problem):
    """Objectives, conversions and certificate of a linear binary SVM, for any loss and bias.

    Subclasses are dataclasses with fields ``X, y, bias, bias_scale`` and define
    ``upper_bounds`` (the dual box ``C_i``) and ``loss_kind`` (``"hinge"``, ``"squared_hinge"``
    or ``"hard"``).
    """

    X: np.ndarray
    y: np.ndarray
    bias: str
    bias_scale: float

    upper_bounds: np.ndarray
    loss_kind: str

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def is_sparse(self) -> bool:
        return sparse.issparse(self.X)

    @cached_property
    def row_norms(self) -> np.ndarray:
        """``‖x_i‖`` of every example, computed once (the certificates' rounding bounds)."""
        return np.sqrt(squared_norms(self.X))

    # ---- primal side -----------------------------------------------------------------------------
    def _check_w_b(self, w, b) -> tuple[np.ndarray, float]:
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape[0] != self.n_features:
            raise ValueError(f"w must have length n_features={self.n_features}, got {w.shape[0]}")
        b = 0.0 if b is None else float(b)
        if self.bias == "none" and b != 0.0:
            raise ValueError(f"b must be 0 for bias='none', got {b}")
        return w, b

    def model_from(self, variables) -> LinearModel | None:
        """The :class:`~svmbench.problems.models.LinearModel` ``(w, b)`` of a solution (b the
        effective intercept, ``s·w_b`` for a regularized bias), or None without a finite w."""
        w, b = variables.get("w"), variables.get("b")
        if w is None or not finite(w, b):
            return None
        return LinearModel(w, 0.0 if b is None else float(b))

    def decision_function(self, w, b: float = 0.0, X=None) -> np.ndarray:
        """``f(x) = w·x + b`` on the training data (or on ``X``)."""
        X = self.X if X is None else X
        return np.asarray(X @ w).ravel() + b

    def margins(self, w, b: float = 0.0) -> np.ndarray:
        """``m_i = y_i (w·x_i + b)``."""
        return self.y * self.decision_function(w, b)

    def regularizer(self, w, b: float = 0.0) -> float:
        """``½‖w‖²``, plus ``½ w_b² = ½ (b/s)²`` for a regularized bias."""
        r = 0.5 * float(w @ w)
        if self.bias == "regularized":
            r += 0.5 * (b / self.bias_scale) ** 2
        return r

    def loss_term(self, m: np.ndarray) -> float:
        """``Σ_i C_i loss(m_i)``; for the hard margin 0 if every ``m_i ≥ 1``, else ``+inf``."""
        if self.loss_kind == "hard":
            return 0.0 if np.all(m >= 1.0) else np.inf
        xi = np.maximum(0.0, 1.0 - m)
        if self.loss_kind == "squared_hinge":
            xi = xi * xi
        return float(self.upper_bounds @ xi)

    def primal_objective(self, w, b: float = 0.0) -> float:
        """``P(w, b) = ½‖w‖² (+ ½(b/s)²) + Σ_i C_i loss(y_i (w·x_i + b))``."""
        w, b = self._check_w_b(w, b)
        return self.regularizer(w, b) + self.loss_term(self.margins(w, b))

    def best_bias(self, w) -> float:
        """The b minimizing ``P(w, ·)`` (0 for ``bias="none"``)."""
        if self.bias == "none":
            return 0.0
        scale = self.bias_scale if self.bias == "regularized" else None
        if self.loss_kind == "hard" and scale is not None:
            scale = None  # the hard margin keeps the b that maximizes the smallest margin
        return optimal_bias(
            self.decision_function(w), self.y, self.upper_bounds, self.loss_kind, bias_scale=scale
        )

    # ---- dual side -------------------------------------------------------------------------------
    def _weights_from_alpha(self, alpha) -> tuple[np.ndarray, float]:
        """``w = Σ α_i y_i x_i`` and ``Σ α_i y_i`` (the bias feature's weight over s)."""
        ay = alpha * self.y
        return np.asarray(self.X.T @ ay).ravel(), float(ay.sum())

    def dual_objective(self, alpha) -> float:
        """``D(α) = Σα_i − ½‖Σα_i y_i x̃_i‖²`` (− ``Σ α_i²/(4C_i)`` for the squared hinge)."""
        alpha = self._check_alpha(alpha)
        w, sum_ay = self._weights_from_alpha(alpha)
        D = float(alpha.sum()) - 0.5 * float(w @ w)
        if self.bias == "regularized":
            D -= 0.5 * (self.bias_scale * sum_ay) ** 2
        return D - self._squared_hinge_term(alpha)

    def primal_from_dual(self, alpha) -> tuple[np.ndarray, float]:
        """``(w, b)`` from α by the KKT conditions: ``w = Σ α_i y_i x_i``; ``b = s² Σ α_i y_i``
        (regularized), 0 (none), or the exact minimizer of ``P(w, ·)`` (free)."""
        alpha = self._check_alpha(alpha)
        w, sum_ay = self._weights_from_alpha(alpha)
        if self.bias == "regularized":
            return w, self.bias_scale**2 * sum_ay
        return w, self.best_bias(w)

    def _certificate_points(self, w, b, alpha):
        """The points a certificate judges: α repaired if given, ``(w, b)`` built if missing
        (``b`` by :meth:`best_bias` when only ``w`` is given). Returns ``(w, b, α or None,
        residuals)``."""
        a, residuals = (None, {}) if alpha is None else self._repair_alpha(alpha)
        if w is None:
            if a is None:
                raise TypeError("certificate needs w (with b) or alpha")
            w, b = self.primal_from_dual(a)
        else:
            w, _ = self._check_w_b(w, 0.0)
            b = self.best_bias(w) if b is None else self._check_w_b(w, b)[1]
        return w, b, a, residuals

    def dual_from_primal(self, w, b=None) -> np.ndarray:
        """A feasible α that closes the gap at the optimum (docs/ARCHITECTURE.md §3), cheap
        elsewhere.

        Squared hinge: ``α_i = 2 C_i max(0, 1 − m_i)`` (the KKT map), projected. Hinge and hard
        margin: multipliers of points clearly off the margin (``|m_i − 1| > NEAR_MARGIN``) are
        fixed by complementary slackness (``C_i`` inside, 0 outside); the near-margin ones θ
        maximize the dual in a small box QP (with ``yᵀα = 0`` for a free bias). For the hinge
        that QP runs only near the optimum: first θ is a cheap least-squares fit of the
        stationarity ``Σ_i α_i y_i x̃_i = w̃`` (:meth:`_cheap_dual`, O(nnz(X)) per call); only if
        that point certifies ``(P − D)/max(1, |P|) ≤ QP_BELOW_REL_GAP`` is the QP solved, and the
        better of the two points is returned. Every point returned is dual feasible, so the
        certificate's gap stays valid (weak duality) whichever was used.
        """
        b_given = b is not None
        w, b = self._check_w_b(w, b)
        if self.loss_kind == "squared_hinge":
            if self.bias == "free":
                b = self.best_bias(w)
            m = self.margins(w, b)
            alpha = 2.0 * self.upper_bounds * np.maximum(0.0, 1.0 - m)
            return self.project_dual(alpha)
        _, upper = self.dual_box()
        if self.loss_kind == "hinge":
            # the cheap point judges the given (w, b), as the certificate's primal value does
            if self.bias == "free" and not b_given:
                b = self.best_bias(w)
            m = self.margins(w, b)
            P = self.regularizer(w, b) + self.loss_term(m)
            cheap, D = self._cheap_dual(w, b, m, upper)
            if not (P - D <= QP_BELOW_REL_GAP * max(1.0, abs(P))):
                return cheap
        if self.bias == "free":
            b = self.best_bias(w)
        m = self.margins(w, b)
        r = m - 1.0
        if self.loss_kind == "hard":
            alpha = np.zeros(self.n_samples)
            near = r <= NEAR_MARGIN
        else:
            alpha = np.where(r < 0, upper, 0.0)
            near = (np.abs(r) <= NEAR_MARGIN) & (upper > 0)
        free = self._near_margin_subset(near, r)
        alpha[free] = 0.0
        if free.size:
            alpha[free] = self._maximize_on(alpha, free, upper)
        alpha = self.project_dual(np.where(np.isfinite(alpha), alpha, 0.0))
        if self.loss_kind == "hinge" and self.dual_objective(cheap) > self.dual_objective(alpha):
            return cheap  # the QP did not improve on the cheap point
        return alpha

    @staticmethod
    def _near_margin_subset(near, r) -> np.ndarray:
        """Indices of the near-margin multipliers to optimize, the closest to the margin first
        when there are more than ``MAX_FREE_MULTIPLIERS``."""
        free = np.flatnonzero(near)
        if free.size > MAX_FREE_MULTIPLIERS:
            free = free[np.argsort(np.abs(r[free]), kind="stable")[:MAX_FREE_MULTIPLIERS]]
        return free

    def _cheap_dual(self, w, b, m, upper) -> tuple[np.ndarray, float]:
        """A feasible α for the hinge in O(nnz(X)), and ``D(α)``.

        Complementary slackness fixes α off the margin (``C_i`` if ``m_i < 1 − NEAR_MARGIN``, 0
        if ``m_i > 1 + NEAR_MARGIN``). The near-margin θ fit the stationarity ``Σ α_i y_i x̃_i =
        w̃``: from ``C_i/2`` they move by the minimum-norm least-squares solution of
        ``A δ = w̃ − v₀ − A C_F/2`` (``A`` the columns ``y_i x̃_i``, ``v₀`` the fixed part of the
        sum; plus the row ``y_Fᵀ`` of ``yᵀα = 0`` for a free bias), are clipped to the box, take
        one more such step on the coordinates left strictly inside it, and are clipped again.
        For a free bias the heavier class's multipliers are then shrunk so that ``yᵀα = 0``.
        Last, the best multiple ``tα`` is taken (``t* = Σα_i / ‖Σ α_i y_i x̃_i‖²``, capped so
        that ``tα`` stays in the box; ``yᵀ(tα) = 0`` still): far from the optimum it gains
        orders of magnitude.
        """
        y, s = self.y, self.bias_scale
        r = m - 1.0
        alpha = np.where(r < 0, upper, 0.0)
        free = self._near_margin_subset((np.abs(r) <= NEAR_MARGIN) & (upper > 0), r)
        alpha[free] = 0.0
        if free.size:
            yF, uF = y[free], upper[free]
            v0, sum_ay0 = self._weights_from_alpha(alpha)
            A = self.X[free]
            A = A.multiply(yF[:, None]).tocsr().T if sparse.issparse(A) else (A * yF[:, None]).T
            target = w - v0
            rows = [A]
            if self.bias == "regularized":
                rows.append(s * yF[None, :])
                target = np.append(target, b / s - s * sum_ay0)
            if self.bias == "free":
                rows.append(yF[None, :])
                target = np.append(target, -sum_ay0)
            if len(rows) > 1:
                A = sparse.vstack(rows, format="csc") if sparse.issparse(A) else np.vstack(rows)
            theta = np.clip(0.5 * uF + _min_norm_step(A, target - 0.5 * A @ uF), 0.0, uF)
            # one more step on the multipliers left strictly inside the box, the clipped ones
            # fixed (at the optimum of a large-C problem with duplicated rows, this took the
            # cheap gap from 0.36 to 1e-4)
            inside = (theta > 0.0) & (theta < uF)
            if inside.any() and not inside.all():
                step = _min_norm_step(A[:, inside], target - A @ theta)
                theta[inside] = np.clip(theta[inside] + step, 0.0, uF[inside])
            alpha[free] = theta
        if self.bias == "free":
            # yᵀα = 0 by shrinking the heavier class's multipliers (stays in the box)
            sp, sn = float(alpha[y > 0].sum()), float(alpha[y < 0].sum())
            alpha[y > 0 if sp > sn else y < 0] *= min(sp, sn) / max(sp, sn, np.finfo(float).tiny)
        if free.size and self.bias != "free":
            # Σ α_i y_i x̃_i = v₀ + A θ, without another pass over X
            vt = (np.append(v0, s * sum_ay0) if self.bias == "regularized" else v0) + A @ theta
            vv = float(vt @ vt)
        else:
            wa, sum_ay = self._weights_from_alpha(alpha)
            vv = float(wa @ wa) + ((s * sum_ay) ** 2 if self.bias == "regularized" else 0.0)
        total = float(alpha.sum())
        t = total / vv if vv > 0 else np.inf
        if t > 1.0:  # α ≤ C: a multiple t ≤ 1 stays in the box; a larger one is capped
            pos = alpha > 0
            t = min(t, float(np.min(upper[pos] / alpha[pos])) if pos.any() else 1.0)
        t = max(t, 0.0)
        alpha = np.clip(t * alpha, 0.0, upper)
        if self.bias == "free":
            alpha = absorb_label_sum(alpha, self.y, upper)
        return alpha, t * total - 0.5 * t * t * vv

    def _maximize_on(self, alpha, free, upper) -> np.ndarray:
        """Best α on ``free`` given the other multipliers (see ``maximize_dual_on_subset``)."""
        y, s = self.y, self.bias_scale
        yF = y[free]
        v0_w, sum_ay0 = self._weights_from_alpha(alpha)
        eq, rhs = None, 0.0
        if self.bias == "free":
            eq, rhs = yF, -sum_ay0
            cap_pos = np.sum(upper[free][yF > 0])
            cap_neg = np.sum(upper[free][yF < 0])
            if not (-cap_neg <= rhs <= cap_pos):
                return np.zeros(free.size)  # infeasible subset: the caller projects instead
        # The sparse form keeps v = v0 + A θ as variables: the expanded dense form ½θᵀHθ + gᵀθ
        # loses digits to cancellation when ‖v0‖ ≫ ‖w*‖ (large C).
        XF = self.X[free]
        m = free.size
        A_sub = sparse.csr_matrix(XF).multiply(yF[:, None]).T
        v0 = v0_w
        if self.bias == "regularized":
            A_sub = sparse.vstack([A_sub, sparse.csr_matrix(s * yF[None, :])])
            v0 = np.append(v0_w, s * sum_ay0)
        return maximize_dual_on_subset(
            np.ones(m), upper[free], A_sub=A_sub, v0=v0, eq=eq, eq_rhs=rhs
        )


def _min_norm_step(A, rhs) -> np.ndarray:
    """The minimum-norm least-squares solution ``δ = A⁺ rhs`` of ``A δ = rhs``.

    When ``A`` (k×m) is thin, by the normal equations on its small side, ``δ = Aᵀ(AAᵀ)⁺rhs`` or
    ``(AᵀA)⁺Aᵀrhs``, the pseudo-inverse applied by LAPACK's rank-revealing ``gelsy`` (ten times
    faster than an SVD of ``A`` at k = 51, m = 1 400; the squared condition number only blurs a
    cheap point that is clipped to the box anyway); else a few LSQR iterations (Paige & Saunders
    1982) from 0, which also tend to the minimum-norm solution. Non-finite entries become 0."""
    if not sparse.issparse(A) and min(A.shape) <= CHEAP_DENSE_LSTSQ:
        from scipy.linalg import lstsq

        k, m = A.shape
        if k <= m:
            z = lstsq(A @ A.T, rhs, lapack_driver="gelsy", check_finite=False)[0]
            delta = A.T @ z
        else:
            delta = lstsq(A.T @ A, A.T @ rhs, lapack_driver="gelsy", check_finite=False)[0]
    else:
        from scipy.sparse.linalg import lsqr

        delta = lsqr(A, rhs, atol=1e-12, btol=1e-12, iter_lim=CHEAP_LSQR_ITERATIONS)[0]
    return np.where(np.isfinite(delta), delta, 0.0)
