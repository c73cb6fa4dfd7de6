"""The hard-margin linear SVM: ``min ½‖w‖²  s.t.  y_i (w·x_i + b) ≥ 1``.

Dual: ``max Σλ_i − ½‖Σλ_i y_i x̃_i‖²`` over ``λ ≥ 0`` (and ``yᵀλ = 0`` for a free bias). On data
that no hyperplane separates the problem is infeasible; the proof is a Farkas vector λ ≥ 0 with
``Σλ_i = 1`` and ``Σλ_i y_i x̃_i = 0`` (the convex hulls of the classes intersect; for
``bias="none"``, 0 lies in the hull of the ``y_i x_i``), which :meth:`check_farkas` verifies.
Separability is invariant to translation (with a bias), rotation and scale of X, and so are the
tests here: a Farkas vector is judged relative to the spread of the data around their centre, and
:meth:`separating_point` searches on centred, whitened data; :meth:`judge_infeasible` holds a
solver's ``infeasible`` to both.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems._linear import BIASES, LinearBinaryMixin
from svmbench.problems.base import QP, Certificate, make_certificate
from svmbench.problems.rounding_scores import hard_margin_rounding
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

#: A Farkas vector is accepted when ``‖Σλ_i y_i x̃_i‖ ≤ FARKAS_RTOL · R`` (R: :meth:`spread`).
FARKAS_RTOL = 1e-6

#: The separation LP whitens the centred data (an SVD) when ``n·d·min(n, d)`` is at most this,
#: and centres a dense copy when ``n·d`` is at most :data:`LP_DENSE_ENTRIES`; beyond, it scales
#: the columns of X as given.
LP_WHITEN_WORK = 1e9
LP_DENSE_ENTRIES = 4e6


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
        ``residuals["margin_over_radius"]`` is the geometric margin ``1/‖w̃‖`` over the data's
        spread (:meth:`spread`): a tiny value says the classes' hulls nearly touch.
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
            residuals["margin_over_radius"] = 1.0 / (norm_wt * self.spread())
        if a is None:
            a = self.dual_from_primal(w, b) if m_min > 0 else np.zeros(self.n_samples)
        D = self.dual_objective(a)
        return make_certificate(
            P,
            D,
            residuals=residuals,
            primal_point={"w": w, "b": b},
            dual_point=a,
            rounding=hard_margin_rounding(self, w, b, a, P, D) if np.isfinite(P) else None,
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

    def centre(self) -> np.ndarray:
        """The mean row for a free bias (the problem is translation-invariant then: on
        ``X − c`` the optimum is ``(w*, b* + w*·c)``), else 0."""
        if self.bias != "free":
            return np.zeros(self.n_features)
        return np.asarray(self.X.mean(axis=0), dtype=np.float64).ravel()

    def spread(self) -> float:
        """The data's radius around their centre: ``max_i ‖x_i − c‖`` for a free bias
        (:meth:`centre`), ``max_i ‖x̃_i‖`` otherwise; what the Farkas test and
        ``margin_over_radius`` are relative to."""
        if self.bias != "free":
            return self._radius()
        return self._centred_radius

    @functools.cached_property
    def _centred_radius(self) -> float:
        c = self.centre()
        largest = 0.0
        for start in range(0, self.n_samples, 4096):
            rows = self.X[start : start + 4096]
            rows = rows.toarray() if sparse.issparse(rows) else rows
            largest = max(largest, float(np.max(((rows - c) ** 2).sum(axis=1))))
        return float(np.sqrt(largest))

    def check_farkas(self, lam) -> dict[str, float]:
        """Residuals of an infeasibility certificate λ, relative to the data's spread R.

        Returns ``{"negativity", "sum_deviation", "combination", "label_balance"}``:
        ``max(0, −min λ)``, ``|Σλ − 1|``, ``‖Σλ_i y_i x̃_i‖ / R`` and ``|Σλ_i y_i|`` (the last
        counts only for a free bias; it is 0 by construction of the combination for a
        regularized one). For a free bias the combination is that of the centred rows,
        ``‖Σλ_i y_i (x_i − c)‖ / max‖x_i − c‖`` (:meth:`spread`): translating X changes neither.
        """
        lam = np.asarray(lam, dtype=np.float64).ravel()
        if lam.shape[0] != self.n_samples:
            raise ValueError(f"lam must have length n_samples={self.n_samples}, got {lam.shape[0]}")
        ly = lam * self.y
        comb = np.asarray(self.X.T @ ly).ravel()
        if self.bias == "free":
            comb = comb - self.centre() * ly.sum()
        sq = float(comb @ comb)
        if self.bias == "regularized":
            sq += (self.bias_scale * ly.sum()) ** 2
        spread = self.spread()
        return {
            "negativity": max(0.0, -float(lam.min())),
            "sum_deviation": abs(float(lam.sum()) - 1.0),
            "combination": float(np.sqrt(sq)) / spread if spread > 0 else float(np.sqrt(sq)),
            "label_balance": abs(float(ly.sum())) if self.bias == "free" else 0.0,
        }

    def separating_point(self) -> tuple[np.ndarray, float, float] | None:
        """A strictly separating ``(w, b)``, scaled to margins ``y_i (w·x_i + b) ≥ 1`` (a
        feasible point of the problem), and its geometric margin; or None.

        Solves the LP ``max γ  s.t.  y_i (v·z_i + β) ≥ γ,  −1 ≤ v_j, β ≤ 1`` (HiGHS) on
        coordinates ``z_i = T(x_i − c)`` in which the data are spread evenly: c the mean row
        (any bias but ``"none"``: separability with a bias is translation-invariant), T the
        whitening of the centred rows by their SVD (rotation- and scale-invariant), each
        column then scaled to ``max |z_ij| = 1``. Then ``w = Tᵀv``, ``b = β − w·c`` is checked
        in plain arithmetic on X as given (or on the centred rows, where rounding of the
        translation would hide a margin far below the offset's ulp): a point is returned only
        if ``min_i y_i (w·x_i + b) > 0`` holds exactly, whatever the LP's tolerances. The
        margin is ``min_i y_i (w·x_i + b) / ‖(w, b/s)‖``, relative to nothing: compare it with
        :meth:`spread`. A Farkas vector that passes :meth:`check_farkas` can coexist with such a
        point when the classes are separable by less than ``FARKAS_RTOL`` of the spread: then
        the data are *near-separable*, not infeasible.
        """
        from scipy.optimize import linprog

        n, d = self.n_samples, self.n_features
        free_b = self.bias != "none"
        Z, T, c, centred = self._lp_coordinates(free_b)
        k = Z.shape[1]
        Zy = sparse.csr_matrix(Z).multiply(self.y[:, None]).tocsr()
        cols = [-Zy]
        if free_b:
            cols.append(sparse.csr_matrix(-self.y[:, None]))
        cols.append(sparse.csr_matrix(np.ones((n, 1))))  # −y_i(v·z_i + β) + γ ≤ 0
        A = sparse.hstack(cols).tocsc()
        m = k + (1 if free_b else 0)
        objective = np.zeros(m + 1)
        objective[-1] = -1.0
        bounds = [(-1.0, 1.0)] * m + [(None, 1.0)]
        tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
        try:
            res = linprog(
                objective, A_ub=A, b_ub=np.zeros(n), bounds=bounds, method="highs", options=tight
            )
        except ValueError:
            return None
        if res.x is None or not np.all(np.isfinite(res.x)):
            return None
        w = np.asarray(T @ res.x[:k]).ravel() if k else np.zeros(d)
        beta = float(res.x[k]) if free_b else 0.0
        b = beta - float(w @ c)
        worst = float(np.min(self.margins(w, b)))
        if not worst > 0.0 and centred is not None:
            worst = float(np.min(self.y * (centred @ w + beta)))
        if not (worst > 0.0 and np.isfinite(worst)):
            return None
        wb = b / self.bias_scale if self.bias == "regularized" else 0.0
        return w / worst, b / worst, worst / float(np.sqrt(w @ w + wb * wb))

    def _lp_coordinates(self, translate: bool):
        """``(Z, T, c, X − c)`` for :meth:`separating_point`: ``Z = (X − c) T``, the last None
        where no dense centred copy was made (then c = 0 and T scales the columns)."""
        n, d = self.n_samples, self.n_features
        X = self.X
        if n * d > LP_DENSE_ENTRIES:  # as given, columns scaled (a sparse X stays sparse)
            col = np.asarray(
                abs(X).max(axis=0).todense() if sparse.issparse(X) else np.abs(X).max(axis=0)
            ).ravel()
            col = np.where(col > 0, col, 1.0)
            T = sparse.diags(1.0 / col)
            return sparse.csr_matrix(X) @ T, T, np.zeros(d), None
        dense = X.toarray() if sparse.issparse(X) else np.asarray(X)
        c = dense.mean(axis=0) if translate else np.zeros(d)
        centred = dense - c
        if n * d * min(n, d) <= LP_WHITEN_WORK:
            U, s, Vt = np.linalg.svd(centred, full_matrices=False)
            keep = s > (s[0] if s.size else 0.0) * max(n, d) * np.finfo(np.float64).eps
            Z, T = U[:, keep], Vt[keep].T / s[keep]
        else:
            Z, T = centred, np.eye(d)
        col = np.abs(Z).max(axis=0) if Z.shape[1] else np.ones(0)
        col = np.where(col > 0, col, 1.0)
        return Z / col, T / col, c, centred

    def is_infeasibility_certificate(self, lam, *, rtol: float = FARKAS_RTOL) -> bool:
        """True when every residual of :meth:`check_farkas` is at most ``rtol``."""
        return all(v <= rtol for v in self.check_farkas(lam).values())

    def judge_infeasible(self, farkas) -> tuple[dict, str] | None:
        """The problem's own test of a claimed infeasibility: None when it holds (a Farkas
        vector that passes :meth:`check_farkas` and no strictly separating point from
        :meth:`separating_point`), else ``(evidence, reason)``: ``evidence`` has the Farkas
        vector's residuals and, if one was found, the separating point (``w``, ``b``: margins
        ≥ 1, a feasible point) with its ``margin`` and the ``spread`` it is relative to."""
        residuals = None if farkas is None else self.check_farkas(farkas)
        passes = residuals is not None and all(v <= FARKAS_RTOL for v in residuals.values())
        found = self.separating_point()
        if passes and found is None:
            return None
        evidence: dict = {"farkas_residuals": residuals}
        if found is not None:
            w, b, margin = found
            spread = self.spread()
            evidence.update(w=w, b=b, margin=margin, spread=spread)
            reason = (
                f"near-separable: a hyperplane separates the classes with margin {margin:.3g} "
                f"({margin / spread if spread > 0 else math.inf:.2g} of the data's spread "
                "around their centre)"
                + (", though a Farkas vector passes its check" if passes else "")
                + "; the hard margin is feasible but beyond this solver's precision (both "
                "certificates are in the result)"
            )
        else:
            reason = f"the infeasibility certificate fails the check: {residuals}"
        return evidence, reason

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
