"""ν-SVR (Schölkopf, Smola, Williamson & Bartlett, Neural Computation 2000; LIBSVM ``-s 4``), on
LIBSVM's scale: the tube's width ε is a variable, ν prices it.

With ``C_i = C · sample_weight_i``, ``W = Σ C_i`` and ``f(x) = w·φ(x) + b``::

    P(w, b, ε) = ½‖w‖² + νW·ε + Σ_i C_i (max(0, y_i − f(x_i) − ε) + max(0, f(x_i) − y_i − ε))
    D(α, α*)   = −½ (α − α*)ᵀK(α − α*) + yᵀ(α − α*),
                 0 ≤ α_i, α*_i ≤ C_i,   Σ α_i = Σ α*_i = νW/2

(LIBSVM's ``½‖w‖² + C(νnε + Σ(ξ_i + ξ*_i))`` without weights; the dual of the primal with ε free,
whose stationarity in ε is ``Σ(α + α*) = νW`` and in b ``Σ α = Σ α*``). In the general form
(:mod:`~svmbench.problems.general_dual`) the variables are ``(α, α*)``, 2n of them on the rows
``(0..n−1, 0..n−1)``, signs ``(+1ⁿ, −1ⁿ)``, ``p = (−y, +y)``, "nu" with Δ₊ = Δ₋ = νW/2; the
model is ``f(x) = Σ (α_i − α*_i) K(x_i, x) − ρ`` (``b = −ρ``).

The certificate takes ``w = Σ (α_i − α*_i) φ(x_i)`` of the projected point and the best ``(b, ε)``
for it, exact: with the tube's edges ``u = b + ε`` and ``l = b − ε`` the offsets separate into
``(νW/2)u + Σ C_i max(0, r_i − u)`` and ``−(νW/2)l + Σ C_i max(0, l − r_i)`` over the residuals
``r = y − K(α − α*)``, each minimized by a weighted quantile
(:func:`~svmbench.problems.kernel_family.best_offset`); P is then the general QP's Lagrangian bound
with its best multipliers, the same gap. The relation to ε-SVR: at the optimum, ``ε = (u − l)/2``
is the width for which ε-SVR with the same C has the same solution (Schölkopf et al. 2000,
Proposition 1 and §4); ν bounds the fraction of errors from above and of support vectors from
below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from svmbench.problems.base import Certificate, make_certificate
from svmbench.problems.general_dual import GeneralDual, GeneralDualProblem
from svmbench.problems.general_qp import project
from svmbench.problems.kernel_dual import MAX_C_TIMES_DIAGONAL
from svmbench.problems.kernel_family import (
    KernelFamilyMixin,
    best_offset,
    check_nu,
    check_targets,
    greedy_start,
    kernel_input,
)
from svmbench.problems.models import KernelModel
from svmbench.problems.rounding_scores import kernel_score_rounding
from svmbench.problems.validation import (
    check_C_range,
    check_real,
    check_sample_weight,
    per_example_C,
)


@dataclass(frozen=True, eq=False)
class NuSVRDual(KernelFamilyMixin, GeneralDualProblem):
    """ν-SVR on LIBSVM's scale (module docstring): variable ``alpha`` of length 2n, ``(α, α*)``,
    and optionally ``b`` (the certificate finds the best offsets itself).

    Parameters
    ----------
    X : ndarray or CSR of shape (n_samples, n_features), or the Gram matrix for a precomputed
        kernel
    y : ndarray of shape (n_samples,), real (finite) targets
    C : float, default=1.0
    nu : float in (0, 1], default=0.5
    kernel, gamma, degree, coef0
        As :class:`~svmbench.problems.KernelDual` (γ stored resolved).
    sample_weight : ndarray of shape (n_samples,), default=None
        ``C_i = C · sample_weight_i``.
    """

    kind: ClassVar[str] = "nu_svr"

    X: np.ndarray
    y: np.ndarray
    C: float = 1.0
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
        object.__setattr__(self, "y", check_targets(self.y, X.shape[0]))
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
        object.__setattr__(self, "nu", check_nu(self.nu))
        sw = None
        if self.sample_weight is not None:
            sw = check_sample_weight(self.sample_weight, X.shape[0])
        object.__setattr__(self, "sample_weight", sw)
        check_C_range(self.C, sw)
        for name in ("gamma", "degree", "coef0"):
            object.__setattr__(self, name, getattr(kernel, name))
        diag = float(np.max(np.abs(kernel.diagonal(X))))
        largest = float(np.max(self.upper_bounds))
        if largest * diag > MAX_C_TIMES_DIAGONAL:
            raise ValueError(
                f"C · max K_ii = {largest * diag:.3g} is over {MAX_C_TIMES_DIAGONAL:g}; use C ≤ "
                f"{MAX_C_TIMES_DIAGONAL / diag:.3g} for these data, or scale the features down"
            )

    @property
    def upper_bounds(self) -> np.ndarray:
        """``C_i = C · sample_weight_i`` (of α and of α* alike)."""
        return per_example_C(self.C, self.sample_weight, self.n_samples)

    @property
    def side_mass(self) -> float:
        """``νW/2 = Σ α = Σ α*``."""
        return 0.5 * self.nu * float(self.upper_bounds.sum())

    def smo_form(self) -> GeneralDual:
        """2n variables ``(α, α*)``; LIBSVM's start: both sides filled greedily to νW/2."""
        n, c, mass = self.n_samples, self.upper_bounds, self.side_mass
        start = greedy_start(c, mass)
        return GeneralDual(
            self.X, self.kernel_spec, np.r_[np.arange(n), np.arange(n)].astype(np.int64),
            np.r_[np.ones(n), -np.ones(n)], np.r_[-self.y, self.y], np.r_[c, c], "nu",
            np.r_[start, start], delta=mass, delta_neg=mass,
        )  # fmt: skip

    def variables_from_smo(self, alpha, rho) -> dict:
        return {"alpha": np.asarray(alpha, dtype=np.float64), "b": -float(rho)}

    def coefficients(self, alpha) -> np.ndarray:
        """``α − α*`` of a point ``(α, α*)``: the model's coefficients (n,)."""
        a = self._given("alpha", alpha, 2 * self.n_samples)
        return a[: self.n_samples] - a[self.n_samples :]

    def _offsets(self, g: np.ndarray) -> tuple[float, float, float]:
        """``(b, ε, φ)``: the best offset and width for ``K(α − α*) = g``, φ their terms."""
        t, low, phi = self._edges(g)
        up = -t
        return 0.5 * (up + low), 0.5 * (up - low), phi

    def _edges(self, g: np.ndarray) -> tuple[float, float, float]:
        """``(−u, l, φ)``: minus the tube's upper edge, its lower edge, and φ."""
        c, mass = self.upper_bounds, self.side_mass
        r = self.y - g
        t, phi_upper = best_offset(-r, c, mass)  # t = −u
        low, phi_lower = best_offset(r, c, mass)
        return t, low, phi_upper + phi_lower

    def certificate(self, *, alpha=None, b=None) -> Certificate:
        """``P`` of ``w = Σ (α_i − α*_i) φ(x_i)`` with its best ``(b, ε)`` against ``D``, the
        point ``(α, α*)`` projected (``b`` given is not used: the offsets are exact)."""
        if alpha is None:
            raise TypeError("certificate needs alpha (α then α*, length 2n) for a nu_svr problem")
        given = self._given("alpha", alpha, 2 * self.n_samples)
        a = project(self.smo_form(), given)
        coef = self.coefficients(a)
        g = self.kernel_times(coef)
        quad = 0.5 * float(coef @ g)
        t, low, phi = self._edges(g)
        bias, width = 0.5 * (low - t), 0.5 * (-t - low)
        y, c = self.y, self.upper_bounds

        def row_terms(s, rows):
            r = y[rows] - s
            return c[rows] * (np.maximum(0.0, t + r) + np.maximum(0.0, low - r))

        def detail():
            hinges = [(c, -1.0, t + y), (c, 1.0, y - low)]
            return hinges, np.abs(y) + max(abs(t), abs(low)), row_terms

        edges = max(abs(t), abs(low))
        y_max = float(np.abs(y).max())
        # a tube of width ≥ 0 has one active edge at most (C_i); an inverted one, two
        weight = float(c.sum()) * (1.0 if width >= 0.0 else 2.0)
        P, D, rounding = kernel_score_rounding(
            self, coef, g, quad + phi, float(y @ coef) - quad,
            loss=(weight, y_max + edges, detail),
            magnitude=abs(quad) + abs(phi) + 2.0 * self.side_mass * (abs(t) + abs(low))
            + y_max * float(np.abs(coef).sum()),
        )  # fmt: skip
        return make_certificate(
            P,
            D,
            rounding=rounding,
            convex=self.convex,
            residuals={"dual_infeasibility": float(np.max(np.abs(a - given)))},
            primal_point={"alpha": a, "b": bias, "epsilon": width},
            dual_point=a,
        )

    def model_from(self, variables) -> KernelModel | None:
        """``f(x) = Σ (α_i − α*_i) K(x_i, x) + b`` with the best b of the coefficients."""
        alpha = variables.get("alpha")
        if alpha is None or not np.all(np.isfinite(alpha)):
            return None
        coef = self.coefficients(alpha)
        bias, _, _ = self._offsets(self.kernel_times(coef))
        return self.kernel_model(coef, bias)
