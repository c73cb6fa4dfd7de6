"""ν-SVC (Schölkopf, Smola, Williamson & Bartlett, Neural Computation 2000; LIBSVM ``-s 1``), on
LIBSVM's scale.

Schölkopf et al.'s primal ``min ½‖w'‖² − νρ' + (1/n)Σξ_i``, ``y_i(w'·φ(x_i) + b') ≥ ρ' − ξ_i``,
``ξ ≥ 0``, multiplied by n² (``w = n w'``, ``ρ = n ρ'``, ``b = n b'``), with per-example weights
``c_i`` (``sample_weight``; 1 each without) and ``W = Σ c_i``::

    P(w, b, ρ) = ½‖w‖² − νW·ρ + Σ_i c_i max(0, ρ − y_i(w·φ(x_i) + b))
    D(α)       = −½ αᵀQα,   Q_ij = y_i y_j K(x_i, x_j),
                 0 ≤ α_i ≤ c_i,   Σ_{y_i=+1} α_i = Σ_{y_i=−1} α_i = νW/2

(LIBSVM's form: Chang & Lin, Neural Computation 2001). With ρ free the Lagrangian's stationarity
in ρ is ``Σα = νW`` and in b ``yᵀα = 0``, hence the two equalities; weak duality ``P ≥ D`` holds
for every such pair. The certificate takes ``w = Σ α_i y_i φ(x_i)`` of the projected α and the
best ``(b, ρ)`` for it, exactly: with ``u = ρ − b`` and ``v = ρ + b`` the offsets separate into
``−(νW/2)u + Σ_{y=+1} c_i max(0, u − g_i)`` and the same in v over the class −1 with scores
``−g_i`` (``g = K(α∘y)``), each minimized by a weighted quantile
(:func:`~svmbench.problems.kernel_family.best_offset`). P then equals the general QP's
Lagrangian bound with its best multipliers (:mod:`~svmbench.problems.general_qp`): the gap is the
same number.

The relation to C-SVC: at the optimum, ``ρ = (u + v)/2 = r`` is LIBSVM's r (the mean of the two
classes' multipliers). When r > 0, ``α/r`` and ``b/r`` solve the C-SVC with ``C_i = c_i / r``
(Chang & Lin 2001, Theorem 3): that is the model LIBSVM reports, and scikit-learn's NuSVC
``dual_coef_`` and ``intercept_``; the decision values are divided by r. The feasible ν are
``(0, 2·min(W₊, W₋)/W]`` (``W±`` the weight of each class; counts without weights): a larger ν
is LIBSVM's "specified nu is infeasible".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from svmbench.problems.base import Certificate, make_certificate
from svmbench.problems.general_dual import GeneralDual, GeneralDualProblem
from svmbench.problems.general_qp import project
from svmbench.problems.kernel_family import (
    KernelFamilyMixin,
    best_offset,
    check_nu,
    greedy_start,
    kernel_input,
)
from svmbench.problems.models import KernelModel
from svmbench.problems.rounding_scores import kernel_score_rounding
from svmbench.problems.validation import check_binary_labels, check_C_range, check_sample_weight


@dataclass(frozen=True, eq=False)
class NuSVCDual(KernelFamilyMixin, GeneralDualProblem):
    """ν-SVC on LIBSVM's scale (module docstring): variable ``alpha`` (n,), α_i ∈ [0, c_i].

    Parameters
    ----------
    X : ndarray or CSR of shape (n_samples, n_features), or the Gram matrix for a precomputed
        kernel
    y : ndarray of shape (n_samples,), labels in {-1, +1}
    nu : float in (0, 1], default=0.5
        Bounds the fraction of margin errors from above and of support vectors from below.
    kernel, gamma, degree, coef0
        As :class:`~svmbench.problems.KernelDual` (γ stored resolved).
    sample_weight : ndarray of shape (n_samples,), default=None
        ``c_i``, the upper bounds of α (LIBSVM's per-example C of scikit-learn's NuSVC).
    """

    kind: ClassVar[str] = "nu_svc"

    X: np.ndarray
    y: np.ndarray
    nu: float = 0.5
    kernel: str = "rbf"
    gamma: float | str = "scale"
    degree: int = 3
    coef0: float = 0.0
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        X, kernel = kernel_input(
            self.X, self.kernel, self.gamma, self.degree, self.coef0, self.sample_weight
        )
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", check_binary_labels(self.y, X.shape[0]))
        object.__setattr__(self, "nu", check_nu(self.nu))
        sw = None
        if self.sample_weight is not None:
            sw = check_sample_weight(self.sample_weight, X.shape[0])
            check_C_range(1.0, sw)
        object.__setattr__(self, "sample_weight", sw)
        for name in ("gamma", "degree", "coef0"):
            object.__setattr__(self, name, getattr(kernel, name))
        c = self.upper_bounds
        w_pos, w_neg = float(c[self.y > 0].sum()), float(c[self.y < 0].sum())
        feasible = 2.0 * min(w_pos, w_neg) / (w_pos + w_neg)
        if self.nu > feasible * (1.0 + 1e-12):
            what = "examples" if sw is None else "weight"
            raise ValueError(
                f"nu={self.nu!r} is infeasible (LIBSVM: specified nu is infeasible): ν·n/2 = "
                f"{self.class_mass:.6g} exceeds the {what} of the smaller class "
                f"({min(w_pos, w_neg):.6g}); nu must be in (0, 2·min(n₊, n₋)/n] = "
                f"(0, {feasible:.6g}] for these labels"
            )

    @property
    def upper_bounds(self) -> np.ndarray:
        """``c_i``: the sample weights (ones without)."""
        if self.sample_weight is None:
            return np.ones(self.n_samples)
        return self.sample_weight.copy()

    @property
    def class_mass(self) -> float:
        """``νW/2``, the sum of α over each class."""
        return 0.5 * self.nu * float(self.upper_bounds.sum())

    def smo_form(self) -> GeneralDual:
        """z = y, p = 0, u = c, "nu" with Δ₊ = Δ₋ = νW/2; LIBSVM's start per class."""
        n, c, mass = self.n_samples, self.upper_bounds, self.class_mass
        alpha0 = np.zeros(n)
        for label in (1.0, -1.0):
            mask = self.y == label
            alpha0[mask] = greedy_start(c[mask], mass)
        return GeneralDual(
            self.X, self.kernel_spec, np.arange(n, dtype=np.int64), self.y.copy(), np.zeros(n),
            c, "nu", alpha0, delta=mass, delta_neg=mass,
        )  # fmt: skip

    def variables_from_smo(self, alpha, rho) -> dict:
        """``alpha`` as it is, ``b = −ρ`` (LIBSVM's offset before the division by r)."""
        return {"alpha": np.asarray(alpha, dtype=np.float64), "b": -float(rho)}

    def _offsets(self, g: np.ndarray) -> tuple[float, float, float]:
        """``(u, v, φ₊ + φ₋)``: the best ``ρ − b`` and ``ρ + b`` for the scores ``g``."""
        c, mass, pos = self.upper_bounds, self.class_mass, self.y > 0
        u, phi_pos = best_offset(g[pos], c[pos], mass)
        v, phi_neg = best_offset(-g[~pos], c[~pos], mass)
        return u, v, phi_pos + phi_neg

    def certificate(self, *, alpha=None, b=None) -> Certificate:
        """``P`` of ``w = Σ α_i y_i φ(x_i)`` with its best ``(b, ρ)`` against ``D(α)``, α the
        projection of the given one (``b`` given is not used: the offsets are exact)."""
        if alpha is None:
            raise TypeError("certificate needs alpha for a nu_svc problem")
        given = self._given("alpha", alpha, self.n_samples)
        a = project(self.smo_form(), given)
        coef = a * self.y
        g = self.kernel_times(coef)
        quad = 0.5 * float(coef @ g)
        u, v, phi = self._offsets(g)
        c, pos, mass = self.upper_bounds, self.y > 0, self.class_mass

        def row_terms(t, rows):
            return c[rows] * np.where(pos[rows], np.maximum(0.0, u - t), np.maximum(0.0, v + t))

        def detail():
            return [(c * pos, -1.0, u), (c * ~pos, 1.0, -v)], max(abs(u), abs(v)), row_terms

        P, D, rounding = kernel_score_rounding(
            self, coef, g, quad + phi, -quad,
            loss=(float(c.sum()), max(abs(u), abs(v)), detail),
            magnitude=abs(quad) + abs(phi) + 2.0 * mass * (abs(u) + abs(v)),
        )  # fmt: skip
        return make_certificate(
            P,
            D,
            rounding=rounding,
            convex=self.convex,
            residuals={"dual_infeasibility": float(np.max(np.abs(a - given)))},
            primal_point={"alpha": a, "b": 0.5 * (v - u), "rho": 0.5 * (u + v)},
            dual_point=a,
        )

    def model_from(self, variables) -> KernelModel | None:
        """LIBSVM's reported model: ``α_i y_i / r`` and ``b / r`` with the best offsets of α
        (r = ρ; when r ≤ 0 the model is left unscaled)."""
        alpha = variables.get("alpha")
        if alpha is None or not np.all(np.isfinite(alpha)):
            return None
        alpha = np.asarray(alpha, dtype=np.float64)
        u, v, _ = self._offsets(self.kernel_times(alpha * self.y))
        r = 0.5 * (u + v)
        return self.kernel_model(alpha * self.y, 0.5 * (v - u), r if r > 0 else 1.0)
