"""A general dual as a problem of its own, certified by the QP's Lagrangian (Wolfe) dual.

For ``min F(α) = ½αᵀQα + pᵀα`` over ``0 ≤ α ≤ u`` and the equalities ``Aα = Δ`` of a
:class:`~svmbench.problems.general_dual.GeneralDual` ("one": ``A = zᵀ``; "nu": one row per sign),
any ``v`` and multipliers ``μ`` give the lower bound::

    L(v, μ) = −½vᵀQv − μᵀΔ − Σ_t u_t max(0, −g_t),     g = Qv + p + Aᵀμ

(minimize the Lagrangian over the box with the linear term frozen at v). The certificate takes v
= the projected α and the μ that maximizes L (a concave piecewise-linear function of each μ,
maximized by bisection on its monotone slope), so ``F(α) − L(α, μ)`` is a duality gap that no
solver's word enters: 0 exactly at a KKT point. It judges the generalized solvers on forms built by
hand, and any user's box QP of this shape.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from svmbench.problems.base import Certificate, make_certificate
from svmbench.problems.general_dual import GeneralDual, GeneralDualProblem
from svmbench.problems.rounding_general_qp import general_qp_rounding

#: Bisection steps on a multiplier's slope (each halves the bracket).
BISECTION_STEPS = 200


def project(form: GeneralDual, alpha: np.ndarray) -> np.ndarray:
    """The point of ``{0 ≤ α ≤ u} ∩ {equalities}`` nearest ``alpha`` (a shift τ found by
    bisection: ``clip(α − τz, 0, u)``, per sign group for "nu")."""
    a = np.clip(np.asarray(alpha, dtype=float), 0.0, form.upper)
    if form.equality == "one":
        return _shift_to(a, form.upper, form.sign, form.delta)
    if form.equality == "nu":
        out = a.copy()
        for mask, target in ((form.sign > 0, form.delta), (form.sign < 0, form.delta_neg)):
            ones = np.ones(int(mask.sum()))
            out[mask] = _shift_to(a[mask], form.upper[mask], ones, target)
        return out
    return a


def _shift_to(a, upper, z, target) -> np.ndarray:
    """``clip(a − τz, 0, upper)`` with ``zᵀ(·) = target`` (zᵀ(·) decreases with τ)."""
    if a.size == 0:
        return a
    lo = -float(np.max(upper) + np.max(np.abs(a))) - 1.0
    hi = -lo
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if z @ np.clip(a - mid * z, 0.0, upper) > target:
            lo = mid
        else:
            hi = mid
    return np.clip(a - 0.5 * (lo + hi) * z, 0.0, upper)


def _best_multiplier(h, z, upper, target) -> tuple[float, float]:
    """Maximize ``φ(μ) = −μΔ − Σ u_t max(0, −(h_t + μ z_t))``; return ``(μ, φ(μ))``.

    The slope ``−Δ + Σ_{h_t + μz_t < 0} u_t z_t`` does not increase with μ.
    """

    def value(mu):
        return -mu * target - float(upper @ np.maximum(0.0, -(h + mu * z)))

    if h.size == 0:
        return 0.0, 0.0
    spread = float(np.max(np.abs(h))) + 1.0
    lo, hi = -spread, spread
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        slope = -target + float(upper @ (z * (h + mid * z < 0.0)))
        if slope > 0.0:
            lo = mid
        else:
            hi = mid
    candidates = (lo, hi, 0.5 * (lo + hi))
    values = [value(mu) for mu in candidates]
    best = int(np.argmax(values))
    return candidates[best], values[best]


@dataclass(frozen=True, eq=False)
class GeneralQP(GeneralDualProblem):
    """The box QP of a :class:`GeneralDual` (dense Q: small problems), variables ``alpha`` and
    optionally ``rho`` (ignored by the certificate, which finds its own multipliers)."""

    kind: ClassVar[str] = "general_qp"

    form: GeneralDual

    @property
    def n_samples(self) -> int:
        return self.form.n_variables

    @property
    def n_features(self) -> int:
        return int(self.form.X.shape[1])

    @cached_property
    def hessian(self) -> np.ndarray:
        return self.form.hessian()

    @cached_property
    def convex(self) -> bool:  # type: ignore[override]
        """Q is PSD: by the kernel's construction, else by its smallest eigenvalue (≥ −1e-10 ·
        max|Q_tt|); an indefinite Q has no Lagrangian bound, so nothing certifies."""
        if self.form.kernel.psd_by_construction:
            return True
        Q = self.hessian
        scale = max(1.0, float(np.max(np.abs(np.diagonal(Q)), initial=0.0)))
        return bool(np.linalg.eigvalsh(Q)[0] >= -1e-10 * scale)

    def smo_form(self) -> GeneralDual:
        return self.form

    def variables_from_smo(self, alpha, rho) -> dict:
        return {"alpha": np.asarray(alpha, dtype=float), "rho": float(rho)}

    def params(self) -> dict:
        return {"equality": self.form.equality, "delta": self.form.delta}

    @cached_property
    def key(self) -> str:
        h = hashlib.sha256(self.kind.encode())
        f = self.form
        for a in (f.rows, f.sign, f.p, f.upper, self.hessian):
            h.update(np.ascontiguousarray(a, dtype=float).tobytes())
        h.update(repr((f.equality, f.delta, f.delta_neg)).encode())
        return h.hexdigest()[:24]

    def certificate(self, *, alpha=None, rho=None) -> Certificate:
        """``F(α)`` at the projected α against the Lagrangian bound ``L(α, μ*)``, with the
        gap's rounding allowance (problems/rounding_general_qp.py: where it would weigh, the
        scores that weigh recomputed in long double and both sides corrected)."""
        if alpha is None:
            raise TypeError("certificate needs alpha for a general QP")
        f = self.form
        given = np.asarray(alpha, dtype=float)
        a = project(f, given)
        Qa = self.hessian @ a
        primal = float(0.5 * a @ Qa + f.p @ a)
        h = Qa + f.p
        dual = -float(0.5 * a @ Qa)
        if f.equality == "one":
            mu, phi = _best_multiplier(h, f.sign, f.upper, f.delta)
            dual += phi
            multipliers = [mu]
        elif f.equality == "nu":
            multipliers = []
            for mask, target in ((f.sign > 0, f.delta), (f.sign < 0, f.delta_neg)):
                mu, phi = _best_multiplier(h[mask], np.ones(int(mask.sum())), f.upper[mask], target)
                dual += phi
                multipliers.append(mu)
        else:
            dual -= float(f.upper @ np.maximum(0.0, -h))
            multipliers = []
        residuals = {"dual_infeasibility": float(np.max(np.abs(a - given), initial=0.0))}
        primal, dual, rounding = general_qp_rounding(self, a, Qa, multipliers, primal, dual)
        return make_certificate(
            primal,
            dual,
            convex=self.convex,
            residuals=residuals,
            primal_point={"alpha": a, "multipliers": multipliers},
            dual_point=a,
            rounding=rounding,
        )
