"""L2-regularized logistic regression in the C-form of the other losses, with its certificate.

Primal (docs/ARCHITECTURE.md §2: the hinge's scaling, the logistic loss in place of the hinge)::

    P(w, b) = ½‖w‖² (+ ½(b/s)² for bias="regularized") + Σ_i C_i log(1 + exp(−y_i (w·x_i + b)))

with ``C_i = C · sample_weight_i``; bias ``"free"`` (b unregularized), ``"regularized"`` (a
constant feature ``s = bias_scale`` of weight ``w_b = b/s``, LIBLINEAR's ``-B``) or ``"none"``.

Fenchel dual. ``C log(1 + e^{−m}) = max_{0 ≤ α ≤ C} (−α m + C·H(α/C))`` with the binary
entropy ``H(t) = −t log t − (1 − t) log(1 − t)`` (the maximizer is ``α = C σ(−m)``). Minimizing
the Lagrangian over ``(w, b)`` gives ``w = Σ α_i y_i x_i`` and

    D(α) = −½‖Σ_i α_i y_i x̃_i‖² − Σ_i [α_i log α_i + (C_i − α_i) log(C_i − α_i) − C_i log C_i]

over ``0 ≤ α_i ≤ C_i``, where ``x̃_i = (x_i, s)`` and ``b = s² Σ α_i y_i`` for a regularized bias,
``x̃_i = x_i`` otherwise, plus ``Σ α_i y_i = 0`` for a free bias (Yu, Huang & Lin 2011, eq. (4)
with C_i). The entropy term is evaluated as ``α log(C/α) + (C − α) log(C/(C − α))`` with
``xlogy`` (each part ≥ 0, no cancellation against ``C log C``, never ``log 0``: its limit 0 at
the box's ends). Weak duality ``P(w, b) ≥ D(α)`` holds for every feasible pair; strong duality
holds with ``α*_i = C_i σ(−m*_i)``, strictly inside the box.

The loss is not quadratic: :meth:`Logistic.to_qp` refuses, and the reference formulation is
CVXPY's exponential cone (``cp.logistic``), :meth:`Logistic.to_cvxpy`.

References
----------
H.-F. Yu, F.-L. Huang, C.-J. Lin. Dual coordinate descent methods for logistic regression and
maximum entropy models. Machine Learning 85(1–2), 2011.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import sparse
from scipy.special import expit, xlogy

from svmbench.problems._linear import BIASES, LinearBinaryMixin
from svmbench.problems.base import QP, Certificate, make_certificate
from svmbench.problems.logistic_model import LogisticModel
from svmbench.problems.models import finite
from svmbench.problems.rounding_scores import logistic_rounding
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

__all__ = ["Logistic", "entropy_term", "logistic_loss"]

#: Newton steps of the exact bias (a 1-D strictly convex problem) before it stops.
BIAS_NEWTON_STEPS = 100


def logistic_loss(m: np.ndarray) -> np.ndarray:
    """``log(1 + e^{−m})`` without overflow (``logaddexp``)."""
    return np.logaddexp(0.0, -m)


def entropy_term(alpha: np.ndarray, upper: np.ndarray) -> float:
    """``Σ_i C_i H(α_i/C_i) = −Σ_i [α_i log α_i + (C_i − α_i) log(C_i − α_i) − C_i log C_i]``,
    as ``Σ α log(C/α) + (C − α) log(C/(C − α))``: two non-negative parts, 0 at ``α ∈ {0, C}``."""
    pos = upper > 0
    a, c = alpha[pos], upper[pos]
    rest = np.maximum(c - a, 0.0)
    return float(-np.sum(xlogy(a, a / c)) - np.sum(xlogy(rest, rest / c)))


@dataclass(frozen=True, eq=False)
class Logistic(LinearBinaryMixin):
    """L2-regularized logistic regression: ``½‖w‖² + Σ C_i log(1 + e^{−y_i (w·x_i + b)})``.

    The module docstring has the primal and its entropy dual.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Training data; converted once to float64.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}; both classes must be present.
    C : float, default=1.0
        Weight of the loss (> 0).
    bias : {"free", "regularized", "none"}, default="free"
    bias_scale : float, default=1.0
        The constant feature's value s for ``bias="regularized"`` (> 0).
    sample_weight : ndarray of shape (n_samples,), default=None
        Per-example weights ≥ 0; ``C_i = C · sample_weight_i``. With a free bias, both classes
        need a positive weight (else ``b → ±∞`` and there is no optimum).
    """

    kind: ClassVar[str] = "logistic"

    X: np.ndarray | sparse.csr_matrix
    y: np.ndarray
    C: float = 1.0
    bias: str = "free"
    bias_scale: float = 1.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = check_X(self.X)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", check_binary_labels(self.y, X.shape[0]))
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
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
        if self.bias == "free" and sw is not None:
            weighted = np.unique(self.y[sw > 0])
            if weighted.size < 2:
                raise ValueError(
                    "sample_weight leaves only the class "
                    f"{weighted[0]:+.0f} with positive weight: with bias='free' the logistic "
                    "loss then has no minimizer (b → ±∞); give both classes a positive weight "
                    "or use bias='regularized' or 'none'"
                )

    @property
    def upper_bounds(self) -> np.ndarray:
        """``C_i = C · sample_weight_i``: the dual box."""
        return per_example_C(self.C, self.sample_weight, self.n_samples)

    @property
    def loss_kind(self) -> str:
        return "logistic"

    # ---- primal ----------------------------------------------------------------------------------
    def loss_term(self, m: np.ndarray) -> float:
        """``Σ_i C_i log(1 + e^{−m_i})``."""
        return float(self.upper_bounds @ logistic_loss(m))

    def best_bias(self, w) -> float:
        """The b minimizing ``P(w, ·)`` (0 for ``bias="none"``): safeguarded Newton on the
        strictly convex ``Σ C_i log(1 + e^{−y_i(f_i + b)})`` (+ ``b²/(2s²)``), its derivative
        bracketed and halved where a Newton step leaves the bracket."""
        if self.bias == "none":
            return 0.0
        f = self.decision_function(w)
        y, C = self.y, self.upper_bounds
        inv_s2 = 1.0 / self.bias_scale**2 if self.bias == "regularized" else 0.0

        def derivatives(b: float) -> tuple[float, float]:
            p = expit(-y * (f + b))  # σ(−m_i)
            return (
                float(-(C * y) @ p) + b * inv_s2,
                float(C @ (p * (1.0 - p))) + inv_s2,
            )

        lo, hi = -1.0, 1.0
        while derivatives(lo)[0] > 0.0 and lo > -1e300:
            lo *= 4.0
        while derivatives(hi)[0] < 0.0 and hi < 1e300:
            hi *= 4.0
        b = 0.0 if lo <= 0.0 <= hi else 0.5 * (lo + hi)
        for _ in range(BIAS_NEWTON_STEPS):
            g, h = derivatives(b)
            if g == 0.0:
                break
            if g > 0.0:
                hi = b
            else:
                lo = b
            step = b - g / h if h > 0.0 else np.nan
            new = step if lo < step < hi else 0.5 * (lo + hi)
            if new == b or abs(new - b) <= 4e-16 * max(1.0, abs(b)):
                b = new
                break
            b = new
        return float(b)

    # ---- dual ------------------------------------------------------------------------------------
    def dual_objective(self, alpha) -> float:
        """``D(α) = −½‖Σ α_i y_i x̃_i‖² + Σ_i C_i H(α_i/C_i)`` (α in the box; see the module)."""
        alpha = self._check_alpha(alpha)
        w, sum_ay = self._weights_from_alpha(alpha)
        D = -0.5 * float(w @ w)
        if self.bias == "regularized":
            D -= 0.5 * (self.bias_scale * sum_ay) ** 2
        return D + entropy_term(alpha, self.upper_bounds)

    def dual_from_primal(self, w, b=None) -> np.ndarray:
        """The KKT map ``α_i = C_i σ(−m_i)`` (inside the box), at the exact bias for a free one
        (where ``Σ α_i y_i = 0`` is then the bias's optimality; the rounding is projected away).
        At the optimum it is the dual optimum; near it the gap is second order in ``w − w*``,
        scaled by the loss Hessian ``Xᵀdiag(C_i σ(1 − σ))X``: at large C a ``w`` certified to
        1e-8 with a solver's own α may give about 1e-4 through this map."""
        w, b = self._check_w_b(w, b)
        if self.bias == "free":
            b = self.best_bias(w)
        alpha = self.upper_bounds * expit(-self.margins(w, b))
        return self.project_dual(alpha) if self.bias == "free" else alpha

    def certificate(self, *, w=None, b=None, alpha=None) -> Certificate:
        """Gap between a primal point ``(w, b)`` and a dual point α, either built from the other
        when missing (``w = Σ α_i y_i x_i``; ``α = C σ(−m)``); a given α is projected onto the
        box (and ``yᵀα = 0`` for a free bias) first, ``residuals["dual_infeasibility"]`` saying
        how far it moved; a missing free ``b`` is the exact minimizer of ``P(w, ·)``."""
        w, b, a, residuals = self._certificate_points(w, b, alpha)
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
            rounding=logistic_rounding(self, w, b, a, P, D),
        )

    def model_from(self, variables) -> LogisticModel | None:
        """The :class:`~svmbench.problems.logistic_model.LogisticModel` ``(w, b)`` of a
        solution, or None without a finite w."""
        w, b = variables.get("w"), variables.get("b")
        if w is None or not finite(w, b):
            return None
        return LogisticModel(w, 0.0 if b is None else float(b))

    # ---- references ------------------------------------------------------------------------------
    def to_qp(self) -> QP:
        """Not a QP: the logistic loss is not quadratic (see :meth:`to_cvxpy`)."""
        raise NotImplementedError(
            "the logistic loss is not a QP (no to_qp); its reference formulation is CVXPY's "
            "exponential cone: Logistic.to_cvxpy(), solved by the 'logistic_cvxpy' solver"
        )

    def to_cvxpy(self):
        """The primal as a CVXPY problem over the exponential cone (``cp.logistic(z) =
        log(1 + e^z)``) and a map back: ``(cvxpy.Problem, recover)``, ``recover()`` giving the
        ``certificate`` arguments ``w, b`` of the solved problem.

        The objective is divided by ``max C_i`` so that the conic solver sees weights ≤ 1 (the
        minimizer is the same; ``P`` is the scaled value times ``max C_i``)."""
        import cvxpy as cp

        n, d = self.n_samples, self.n_features
        C = self.upper_bounds
        scale = float(C.max())
        w = cp.Variable(d)
        b = cp.Variable() if self.bias != "none" else None
        f = self.X @ w if not sparse.issparse(self.X) else sparse.csr_matrix(self.X) @ w
        if b is not None:
            f = f + b * np.ones(n)
        reg = 0.5 * cp.sum_squares(w)
        if self.bias == "regularized":
            reg = reg + 0.5 * cp.square(b) / self.bias_scale**2
        keep = C > 0
        keep = np.flatnonzero(keep)
        loss = (C[keep] / scale) @ cp.logistic(-cp.multiply(self.y[keep], f[keep]))
        problem = cp.Problem(cp.Minimize(reg / scale + loss))

        def recover() -> dict:
            return {
                "w": np.asarray(w.value, dtype=np.float64).ravel(),
                "b": 0.0 if b is None else float(b.value),
            }

        return problem, recover
