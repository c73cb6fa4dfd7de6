"""The hard-margin linear SVM: ``min ½‖w‖²  s.t.  y_i (w·x_i + b) ≥ 1``.

Dual: ``max Σλ_i − ½‖Σλ_i y_i x̃_i‖²`` over ``λ ≥ 0`` (and ``yᵀλ = 0`` for a free bias). On data
that no hyperplane separates the problem is infeasible; the proof is a Farkas vector λ ≥ 0 with
``Σλ_i = 1`` and ``Σλ_i y_i x̃_i = 0`` (the convex hulls of the classes intersect; for
``bias="none"``, 0 lies in the hull of the ``y_i x_i``), which :meth:`check_farkas` verifies.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems._linear import BIASES, LinearBinaryMixin
from svmbench.problems.base import QP, Certificate, make_certificate
from svmbench.problems.validation import (
    check_bias_scale,
    check_binary_labels,
    check_option,
    check_X,
)

#: A regularized bias's constant feature s may be at most this many times ``max‖x_i‖``: on the
#: separable set of the scaling tests (features ×1e-8 … ×1e-5, s = 1), the barrier certified up
#: to s = 1.8e6·max‖x_i‖ and nothing certified at 1.8e7 (Clarabel stopped certifying at 1.8e4).
MAX_BIAS_SCALE_OVER_RADIUS = 1e6

#: A Farkas vector is accepted when ``‖Σλ_i y_i x̃_i‖ ≤ FARKAS_RTOL · max_i ‖x̃_i‖``.
FARKAS_RTOL = 1e-6


@dataclass(frozen=True, eq=False)
class HardMarginPrimal(LinearBinaryMixin):
    """Hard-margin linear SVM: the widest separating slab, or a proof that none exists.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), labels in {-1, +1}
    bias : {"free", "regularized", "none"}, default="free"
    bias_scale : float, default=1.0
        Value s of the constant feature for ``bias="regularized"``.
    """

    kind: ClassVar[str] = "hard_margin"

    X: np.ndarray | sparse.csr_matrix
    y: np.ndarray
    bias: str = "free"
    bias_scale: float = 1.0

    def __post_init__(self) -> None:
        X = check_X(self.X)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", check_binary_labels(self.y, X.shape[0]))
        check_option("bias", self.bias, BIASES)
        object.__setattr__(self, "bias_scale", check_bias_scale(self.bias_scale))
        if self.bias == "regularized" and self.n_samples:
            R = self._radius(with_bias=False)
            if 0.0 < R and self.bias_scale > MAX_BIAS_SCALE_OVER_RADIUS * R:
                raise ValueError(
                    f"bias_scale={self.bias_scale:g} is {self.bias_scale / R:.2g} times "
                    f"max‖x_i‖ = {R:.3g}: a regularized bias is certified up to "
                    f"{MAX_BIAS_SCALE_OVER_RADIUS:g} times (beyond, the constant feature dwarfs "
                    "the data and no solver here reached a certified optimum); scale X up, use "
                    f"bias_scale ≤ {MAX_BIAS_SCALE_OVER_RADIUS * R:.3g}, or bias='free'"
                )

    @property
    def upper_bounds(self) -> np.ndarray:
        return np.full(self.n_samples, np.inf)

    @property
    def loss_kind(self) -> str:
        return "hard"

    def certificate(self, *, w=None, b=None, alpha=None) -> Certificate:
        """Gap of a (repaired) primal point against a feasible dual point.

        A primal point whose smallest margin ``m_min`` is in (0, 1) is scaled by ``1/m_min`` to
        become feasible (``residuals["primal_margin"] = 1 − m_min``); with ``m_min ≤ 0`` it cannot
        be repaired and the primal value is ``+inf`` (not certified).
        ``residuals["margin_over_radius"]`` is the geometric margin ``1/‖w̃‖`` over ``max‖x̃_i‖``:
        a tiny value says the classes' hulls nearly touch.
        """
        w, b, a, residuals = self._certificate_points(w, b, alpha)
        m_min = float(np.min(self.margins(w, b)))
        residuals["primal_margin"] = max(0.0, 1.0 - m_min)
        if 0.0 < m_min < 1.0:
            w, b = w / m_min, b / m_min
            # rounding in X @ w can leave the smallest margin an ulp or two below 1 (P = inf):
            # nudge the scale up until the point is feasible
            for _ in range(4):
                m_fixed = float(np.min(self.margins(w, b)))
                if m_fixed >= 1.0:
                    break
                nudge = (1.0 + 4.0 * np.finfo(np.float64).eps) / m_fixed
                w, b = w * nudge, b * nudge
        P = self.primal_objective(w, b) if m_min > 0 else np.inf
        if np.isfinite(P):
            norm_wt = np.sqrt(2.0 * P)
            residuals["margin_over_radius"] = 1.0 / (norm_wt * self._radius())
        if a is None:
            a = self.dual_from_primal(w, b) if m_min > 0 else np.zeros(self.n_samples)
        D = self.dual_objective(a)
        return make_certificate(
            P, D, residuals=residuals, primal_point={"w": w, "b": b}, dual_point=a
        )

    def solving_scale(self) -> float:
        """``S = 2·max‖x_i‖`` when the solvers should see ``X/S`` instead of X, else 1.

        The problem is covariant in the scale of X when the bias is not regularized: on ``X/S``
        the optimum is ``(S·w*, b*)`` and the objectives are ``S²`` times those on X. Features
        ×1e-8 put ``P*`` near 1e16, where Clarabel, OSQP, CVXPY and the barrier stalled
        (a hostile-input pass measured it); on ``X/S`` they certify. With ``max‖x_i/S‖ = ½``,
        every feasible w has
        ``‖w‖ ≥ 2`` (``w·(x₊ − x₋) ≥ 2``, or ``y w·x ≥ 1`` without a bias), so ``P ≥ 2`` there and
        on X: the relative gap ``gap / max(1, |P|)`` is the same number on both. Only for
        ``max‖x_i‖ < 1e-4``: above it, X is left as given. A regularized bias is not covariant
        (its constant feature s would become s/S)."""
        if self.bias == "regularized" or not self.n_samples:
            return 1.0
        R = self._radius(with_bias=False)
        return 2.0 * R if 0.0 < R < 1e-4 else 1.0

    def rescaled(self, factor: float) -> HardMarginPrimal:
        """The same problem on ``factor · X`` (see :meth:`solving_scale`)."""
        return dataclasses.replace(self, X=self.X * factor)

    def dual_from_primal(self, w, b=None) -> np.ndarray:
        """As for every linear problem (:meth:`LinearBinaryMixin.dual_from_primal`), computed on
        ``X/S`` when :meth:`solving_scale` asks for it: its small QP runs with absolute
        tolerances, which at features ×1e-6 left a certified optimum's gap at 3e-2 instead of
        1e-7. The multipliers on X are those on ``X/S`` divided by ``S²``."""
        S = self.solving_scale()
        if S == 1.0 or w is None:
            return super().dual_from_primal(w, b)
        w_checked, b_checked = self._check_w_b(w, b)
        b = None if b is None else b_checked  # "not given" keeps its meaning (the best b)
        return self.rescaled(1.0 / S).dual_from_primal(w_checked * S, b) / S**2

    def _radius(self, with_bias: bool = True) -> float:
        """``max_i ‖x̃_i‖`` (with the constant feature s for a regularized bias)."""
        sq = self._row_sqnorm_max
        if self.bias == "regularized" and with_bias:
            sq = sq + self.bias_scale**2
        return float(np.sqrt(sq))

    @functools.cached_property
    def _row_sqnorm_max(self) -> float:
        X = self.X
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sparse.issparse(X) else (X * X).sum(1)
        return float(np.max(sq))

    def check_farkas(self, lam) -> dict[str, float]:
        """Residuals of an infeasibility certificate λ, relative to ``max‖x̃_i‖``.

        Returns ``{"negativity", "sum_deviation", "combination", "label_balance"}``:
        ``max(0, −min λ)``, ``|Σλ − 1|``, ``‖Σλ_i y_i x̃_i‖ / max‖x̃_i‖`` and ``|Σλ_i y_i|`` (the last
        counts only for a free bias; it is 0 by construction of the combination for a
        regularized one).
        """
        lam = np.asarray(lam, dtype=np.float64).ravel()
        if lam.shape[0] != self.n_samples:
            raise ValueError(f"lam must have length n_samples={self.n_samples}, got {lam.shape[0]}")
        ly = lam * self.y
        comb = np.asarray(self.X.T @ ly).ravel()
        sq = float(comb @ comb)
        if self.bias == "regularized":
            sq += (self.bias_scale * ly.sum()) ** 2
        return {
            "negativity": max(0.0, -float(lam.min())),
            "sum_deviation": abs(float(lam.sum()) - 1.0),
            "combination": float(np.sqrt(sq)) / self._radius(),
            "label_balance": abs(float(ly.sum())) if self.bias == "free" else 0.0,
        }

    def separating_point(self) -> tuple[np.ndarray, float, float] | None:
        """A strictly separating ``(w, b)``, scaled to margins ``y_i (w·x_i + b) ≥ 1`` (a
        feasible point of the problem), and its geometric margin; or None.

        Solves the LP ``max γ  s.t.  y_i (w·x_i + b) ≥ γ,  −1 ≤ w_j, b ≤ 1`` (HiGHS), then
        checks the point it returns in plain arithmetic: a point is returned only if
        ``min_i y_i (w·x_i + b) > 0`` holds exactly, whatever the LP's tolerances. The margin is
        ``min_i y_i (w·x_i + b) / ‖(w, b/s)‖``, relative to nothing: compare it with
        ``max_i ‖x̃_i‖``. A Farkas vector that passes :meth:`check_farkas` can coexist with such a
        point when the classes are separable by less than ``FARKAS_RTOL`` of the data radius:
        then the data are *near-separable*, not infeasible.
        """
        from scipy.optimize import linprog

        n, d = self.n_samples, self.n_features
        free_b = self.bias != "none"
        X = sparse.csr_matrix(self.X) if sparse.issparse(self.X) else np.asarray(self.X)
        # each column scaled to max |x_ij| = 1: separability is unchanged, and a margin far
        # below the data radius along one feature is no longer below HiGHS's tolerances
        col = np.asarray(
            abs(X).max(axis=0).todense() if sparse.issparse(X) else np.abs(X).max(axis=0)
        ).ravel()
        col = np.where(col > 0, col, 1.0)
        Xs = sparse.csr_matrix(X) @ sparse.diags(1.0 / col)
        Xy = Xs.multiply(self.y[:, None]).tocsr()
        cols = [-Xy]
        if free_b:
            cols.append(sparse.csr_matrix(-self.y[:, None]))
        cols.append(sparse.csr_matrix(np.ones((n, 1))))  # −y_i(w·x_i + b) + γ ≤ 0
        A = sparse.hstack(cols).tocsc()
        k = d + (1 if free_b else 0)
        c = np.zeros(k + 1)
        c[-1] = -1.0
        bounds = [(-1.0, 1.0)] * k + [(None, 1.0)]
        try:
            res = linprog(c, A_ub=A, b_ub=np.zeros(n), bounds=bounds, method="highs")
        except ValueError:
            return None
        if res.x is None or not np.all(np.isfinite(res.x)):
            return None
        w = res.x[:d] / col
        b = float(res.x[d]) if free_b else 0.0
        f = np.asarray(X @ w).ravel() + b
        worst = float(np.min(self.y * f))
        if not worst > 0.0:
            return None
        wb = b / self.bias_scale if self.bias == "regularized" else 0.0
        return w / worst, b / worst, worst / float(np.sqrt(w @ w + wb * wb))

    def is_infeasibility_certificate(self, lam, *, rtol: float = FARKAS_RTOL) -> bool:
        """True when every residual of :meth:`check_farkas` is at most ``rtol``."""
        return all(v <= rtol for v in self.check_farkas(lam).values())

    def to_qp(self) -> QP:
        """``min ½‖w‖² (+ b²/(2s²))  s.t.  y_i (x_i·w + b) ≥ 1`` over ``(w, b)``."""
        n, d = self.n_samples, self.n_features
        has_b = self.bias != "none"
        nb = int(has_b)
        p_b = [1.0 / self.bias_scale**2 if self.bias == "regularized" else 0.0][:nb]
        P = sparse.diags(np.concatenate([np.ones(d), p_b]), format="csc")
        q = np.zeros(d + nb)
        yX = sparse.csr_matrix(self.X).multiply(self.y[:, None])
        A = sparse.hstack([yX, sparse.csr_matrix(self.y[:, None])[:, :nb]], format="csc")

        def recover(x, y_mult):
            return {"w": x[:d], "b": float(x[d]) if has_b else 0.0, "alpha": -y_mult[:n]}

        def recover_farkas(cert):
            lam = np.maximum(-np.asarray(cert, dtype=float)[:n], 0.0)
            total = lam.sum()
            return lam / total if total > 0 else lam

        return QP(P, q, A, np.ones(n), np.full(n, np.inf), recover, recover_farkas=recover_farkas)
