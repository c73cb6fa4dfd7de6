"""The one-class SVM (Schölkopf, Platt, Shawe-Taylor, Smola & Williamson, Neural Computation 2001;
LIBSVM ``-s 2``), on LIBSVM's scale.

Schölkopf et al.'s primal ``min ½‖w'‖² − ρ' + (1/(νn))Σξ_i``, ``w'·φ(x_i) ≥ ρ' − ξ_i``, ``ξ ≥ 0``,
multiplied by (νn)² (``w = νn w'``, ``ρ = νn ρ'``), with per-example weights ``c_i``
(``sample_weight``; 1 each without) and ``W = Σ c_i``::

    P(w, ρ) = ½‖w‖² − νW·ρ + Σ_i c_i max(0, ρ − w·φ(x_i))
    D(α)    = −½ αᵀKα,   0 ≤ α_i ≤ c_i,   Σ α_i = νW

(ρ free: its stationarity is the equality). The certificate takes ``w = Σ α_i φ(x_i)`` of the
projected α and the best ρ for it, exact: ``−νW·ρ + Σ c_i max(0, ρ − s_i)`` over the scores
``s = Kα`` is minimized by their weighted quantile at mass νW
(:func:`~svmbench.problems.kernel_family.best_offset`). P is the general QP's Lagrangian bound
with its best multiplier (ρ = −μ): the gap is the same number. The decision value is LIBSVM's and
scikit-learn's ``decision_function``, ``f(x) = Σ α_i K(x_i, x) − ρ`` (no division: ν fixes the
scale); ``f ≥ 0`` marks an inlier. The start is LIBSVM's: the first ⌊νn⌋ multipliers at 1, the
next at the remainder (greedily by weight with weights).
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
from svmbench.problems.validation import check_C_range, check_sample_weight


@dataclass(frozen=True, eq=False)
class OneClassDual(KernelFamilyMixin, GeneralDualProblem):
    """One-class SVM on LIBSVM's scale (module docstring): variable ``alpha`` (n,), and ``rho``
    (LIBSVM's offset; the certificate finds the best one itself).

    Parameters
    ----------
    X : ndarray or CSR of shape (n_samples, n_features), or the Gram matrix for a precomputed
        kernel
    nu : float in (0, 1], default=0.5
        An upper bound on the fraction of outliers and a lower bound on that of support vectors.
    kernel, gamma, degree, coef0
        As :class:`~svmbench.problems.KernelDual` (γ stored resolved).
    sample_weight : ndarray of shape (n_samples,), default=None
        ``c_i``, the upper bounds of α (scikit-learn's OneClassSVM ``sample_weight``).
    """

    kind: ClassVar[str] = "one_class"

    X: np.ndarray
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
        object.__setattr__(self, "nu", check_nu(self.nu))
        sw = None
        if self.sample_weight is not None:
            sw = check_sample_weight(self.sample_weight, X.shape[0])
            check_C_range(1.0, sw)
        object.__setattr__(self, "sample_weight", sw)
        for name in ("gamma", "degree", "coef0"):
            object.__setattr__(self, name, getattr(kernel, name))

    @property
    def upper_bounds(self) -> np.ndarray:
        """``c_i``: the sample weights (ones without)."""
        if self.sample_weight is None:
            return np.ones(self.n_samples)
        return self.sample_weight.copy()

    @property
    def mass(self) -> float:
        """``νW = Σ α``."""
        return self.nu * float(self.upper_bounds.sum())

    def smo_form(self) -> GeneralDual:
        """z = +1, p = 0, u = c, "one" with Δ = νW; LIBSVM's start."""
        n, c = self.n_samples, self.upper_bounds
        return GeneralDual(
            self.X, self.kernel_spec, np.arange(n, dtype=np.int64), np.ones(n), np.zeros(n), c,
            "one", greedy_start(c, self.mass), delta=self.mass,
        )  # fmt: skip

    def variables_from_smo(self, alpha, rho) -> dict:
        return {"alpha": np.asarray(alpha, dtype=np.float64), "rho": float(rho)}

    def scores(self, alpha) -> np.ndarray:
        """``Σ_j α_j K(x_j, x_i)`` of every training example."""
        return self.kernel_times(self._given("alpha", alpha, self.n_samples))

    def certificate(self, *, alpha=None, rho=None) -> Certificate:
        """``P`` of ``w = Σ α_i φ(x_i)`` with its best ρ against ``D(α)``, α projected."""
        if alpha is None:
            raise TypeError("certificate needs alpha for a one_class problem")
        given = self._given("alpha", alpha, self.n_samples)
        a = project(self.smo_form(), given)
        s = self.kernel_times(a)
        quad = 0.5 * float(a @ s)
        c = self.upper_bounds
        best_rho, phi = best_offset(s, c, self.mass)

        def detail():
            return [(c, -1.0, best_rho)], abs(best_rho), row_terms

        def row_terms(t, rows):
            return c[rows] * np.maximum(0.0, best_rho - t)

        P, D, rounding = kernel_score_rounding(
            self, a, s, quad + phi, -quad,
            loss=(float(c.sum()), abs(best_rho), detail),
            magnitude=abs(quad) + abs(phi) + 2.0 * self.mass * abs(best_rho),
        )  # fmt: skip
        return make_certificate(
            P,
            D,
            rounding=rounding,
            convex=self.convex,
            residuals={"dual_infeasibility": float(np.max(np.abs(a - given)))},
            primal_point={"alpha": a, "rho": best_rho},
            dual_point=a,
        )

    def model_from(self, variables) -> KernelModel | None:
        """``f(x) = Σ α_i K(x_i, x) − ρ`` with the best ρ of α."""
        alpha = variables.get("alpha")
        if alpha is None or not np.all(np.isfinite(alpha)):
            return None
        alpha = np.asarray(alpha, dtype=np.float64)
        rho, _ = best_offset(self.kernel_times(alpha), self.upper_bounds, self.mass)
        return self.kernel_model(alpha, -rho)
