"""The localization polytope of ACCPM (:mod:`solvers.accpm`): its cuts, its analytic center, the
lower bounds read from it, and which cuts cannot touch it.

The polytope is ``P = {z : |z_j| ≤ ρ_j} ∩ {z : a_iᵀz ≤ b_i}`` with the deep cuts normalized
(:class:`Cuts`: ``a_i = g_i/‖g_i‖``, ``b_i = u/‖g_i‖ − c_i`` at the upper bound ``u``). Its
analytic center minimizes ``φ(z) = −Σ_j log(ρ_j − z_j) + log(ρ_j + z_j) − Σ_i log(b_i − a_iᵀz)``
(:func:`analytic_center`, infeasible-start Newton, [3] §10.3.2). Since every cut is an affine
minorant of ``f``, the polytope yields lower bounds on ``f*``: the Dikin bound at the center
(:func:`dikin_bound`), the model bound at any dual weights (:func:`model_bound`,
:func:`dual_bound`) and the exact LP bound (:func:`lp_bound`, HiGHS). :func:`relevance` and
:func:`outer_radius` say which cuts provably cannot touch the polytope (ACCPM's dropping).

This module knows nothing of the SVM: ACCPM's oracle, its stopping rule and its dropping policy
stay in :mod:`solvers.accpm`; the references are those of that module.

References
----------
.. [1] S. Boyd, L. Vandenberghe and J. Skaf, "Analytic center cutting-plane method", EE364b
   lecture notes, Stanford University, 2008.
.. [3] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004:
   §8.5.3 (the inner and outer Dikin ellipsoids), §10.3.2 (infeasible-start Newton method).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.optimize import linprog

#: Backtracking parameters of the Newton line searches ([3] Algorithms 9.2 and 10.2).
_ALPHA, _BETA = 0.01, 0.5
#: At most this many Newton steps per centering.
_MAX_NEWTON = 200


@dataclass
class Cuts:
    """The stored cuts, normalized: ``a_i = g_i/‖g_i‖`` and ``c_i = (f(x_i) − g_iᵀx_i)/‖g_i‖``.

    Cut ``i`` reads ``a_iᵀz ≤ (u − ‖g_i‖ c_i)/‖g_i‖``: normalizing rows changes neither the
    polytope, nor its analytic center, nor the barrier's Hessian there, nor the relevance ``η_i``;
    it keeps their scales alike.
    """

    a: np.ndarray
    c: np.ndarray
    norm: np.ndarray
    born: np.ndarray  # oracle call that made each cut
    size: int = 0

    @classmethod
    def empty(cls, p: int, capacity: int = 64) -> Cuts:
        return cls(
            np.empty((capacity, p)), np.empty(capacity), np.empty(capacity), np.empty(capacity, int)
        )

    def add(self, g: np.ndarray, fx: float, x: np.ndarray, call: int) -> None:
        if self.size == self.a.shape[0]:
            grow = self.a.shape[0]
            self.a = np.vstack([self.a, np.empty_like(self.a[:grow])])
            self.c = np.concatenate([self.c, np.empty(grow)])
            self.norm = np.concatenate([self.norm, np.empty(grow)])
            self.born = np.concatenate([self.born, np.empty(grow, int)])
        nrm = float(np.linalg.norm(g))
        k = self.size
        self.a[k] = g / nrm
        self.c[k] = (fx - float(g @ x)) / nrm
        self.norm[k] = nrm
        self.born[k] = call
        self.size += 1

    def keep(self, mask: np.ndarray) -> None:
        idx = np.flatnonzero(mask)
        m = idx.size
        self.a[:m] = self.a[idx]
        self.c[:m] = self.c[idx]
        self.norm[:m] = self.norm[idx]
        self.born[:m] = self.born[idx]
        self.size = m

    @property
    def A(self) -> np.ndarray:
        return self.a[: self.size]

    def rhs(self, upper: float) -> np.ndarray:
        """``b_i = u/‖g_i‖ − c_i``: the deep cuts at the current upper bound ``u``."""
        n = self.size
        return upper / self.norm[:n] - self.c[:n]


@dataclass
class Center:
    """The analytic center of the current polytope and what ACCPM reads there."""

    x: np.ndarray
    slack: np.ndarray  # b_i − a_iᵀx of the cuts
    chol: tuple  # Cholesky factor of H = ∇²φ(x), the barrier's Hessian (cuts and box)
    m: int  # number of inequalities of the polytope (cuts + 2p box sides)
    lam2: float = 0.0  # Newton decrement² of the barrier at x (0 at an exact center)
    is_center: bool = True  # False for a warm-start query point


def box_barrier(z: np.ndarray, rho: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Value, gradient and Hessian diagonal of ``ψ(z) = −Σ_j log(ρ_j − z_j) + log(ρ_j + z_j)``."""
    up, lo = rho - z, rho + z
    return (
        -float(np.sum(np.log(up)) + np.sum(np.log(lo))),
        1.0 / up - 1.0 / lo,
        1.0 / up**2 + 1.0 / lo**2,
    )


def _hessian(A: np.ndarray, s: np.ndarray, box_h: np.ndarray) -> tuple:
    """Cholesky factor of ``H = Aᵀ diag(1/s²) A + ∇²ψ``, the barrier's Hessian."""
    As = A / s[:, None]
    H = As.T @ As
    H[np.diag_indices_from(H)] += box_h
    return scipy.linalg.cho_factor(H, lower=True, check_finite=False)


def analytic_center(
    A: np.ndarray, b: np.ndarray, rho: np.ndarray, z: np.ndarray, s: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray, tuple, int, float] | None:
    """Analytic center of ``{z : Az ≤ b, |z| ≤ ρ}`` by infeasible-start Newton ([3] §10.3.2).

    Minimizes ``φ(z) = ψ(z) − Σ_i log s_i`` subject to ``Az + s = b`` from any ``z`` inside the
    box and any ``s > 0`` (warm start: the previous center, whose new cut it violates). With
    ``r = Az + s − b`` and ``D = diag(1/s²)`` the Newton step is

    .. math::

        H \\Delta z = -(\\nabla\\psi(z) + A^\\top(1/s + D r)), \\quad
        \\Delta s = -r - A\\Delta z, \\quad \\nu^+ = D(s - \\Delta s),

    with ``H = AᵀDA + ∇²ψ(z)``. While ``r ≠ 0`` the step length backtracks on the norm of the
    KKT residual ([3] Algorithm 10.2); a full step makes ``r = 0``, after which it is the feasible
    damped Newton method on ``φ(z) = ψ(z) − Σ log(b − Az)`` ([3] Algorithm 9.5), stopped when the
    Newton decrement ``λ² = ∇φᵀH⁻¹∇φ ≤ tol``, so that ``H`` is the barrier's Hessian at the
    center. Returns ``(x, slack, cholesky(H), steps, λ²)``, or None if it does not converge (an
    empty polytope, which can only be numerical since a minimizer is always inside).
    """
    r = A @ z + s - b
    feasible = not np.any(r)
    nu = 1.0 / s
    for step in range(1, _MAX_NEWTON + 1):
        _, gpsi, hpsi = box_barrier(z, rho)
        try:
            chol = _hessian(A, s, hpsi)
        except np.linalg.LinAlgError:
            return None
        rhs = gpsi + A.T @ (1.0 / s + r / s**2)
        dz = -scipy.linalg.cho_solve(chol, rhs, check_finite=False)
        ds = -r - A @ dz
        if feasible:
            lam2 = float(-(gpsi + A.T @ (1.0 / s)) @ dz)
            if lam2 <= tol:
                return z, s, chol, step - 1, max(lam2, 0.0)
            t = _feasible_step(A, b, rho, z, s, dz, ds, lam2)
            z = z + t * dz
            s = b - A @ z
            if np.any(s <= 0):
                return None
            continue
        nu_plus = (s - ds) / s**2
        dnu = nu_plus - nu
        t = _infeasible_step(A, b, rho, z, s, nu, dz, ds, dnu, r)
        if t == 0.0:
            return None
        z, s, nu = z + t * dz, s + t * ds, nu + t * dnu
        if t == 1.0:  # a full step removes the primal residual
            s_exact = b - A @ z
            if np.all(s_exact > 0):
                s, r, feasible = s_exact, np.zeros_like(s), True
                continue
        r = A @ z + s - b
    return None


def _feasible_step(A, b, rho, z, s, dz, ds, lam2) -> float:
    """Backtracking on ``φ`` along ``Δz`` keeping every slack positive."""
    t = 1.0
    phi0 = box_barrier(z, rho)[0] - float(np.sum(np.log(s)))
    while True:
        zt = z + t * dz
        st = s + t * ds
        if np.all(st > 0) and np.all(np.abs(zt) < rho):
            phit = box_barrier(zt, rho)[0] - float(np.sum(np.log(st)))
            if phit <= phi0 - _ALPHA * t * lam2:
                return t
        t *= _BETA
        if t < 1e-12:
            return t


def _kkt_residual(A, b, rho, z, s, nu) -> float:
    """``‖(∇ψ(z) + Aᵀν, ν − 1/s, Az + s − b)‖``, the infeasible-start Newton residual."""
    gpsi = box_barrier(z, rho)[1]
    return math.sqrt(
        float(np.sum((gpsi + A.T @ nu) ** 2))
        + float(np.sum((nu - 1.0 / s) ** 2))
        + float(np.sum((A @ z + s - b) ** 2))
    )


def _infeasible_step(A, b, rho, z, s, nu, dz, ds, dnu, r) -> float:
    """Backtracking on the KKT residual norm, keeping ``s > 0`` and ``z`` inside the box."""
    t = 1.0
    res0 = _kkt_residual(A, b, rho, z, s, nu)
    while t > 1e-14:
        zt, st = z + t * dz, s + t * ds
        if np.all(st > 0) and np.all(np.abs(zt) < rho):
            if _kkt_residual(A, b, rho, zt, st, nu + t * dnu) <= (1.0 - _ALPHA * t) * res0:
                return t
        t *= _BETA
    return 0.0


def dikin_bound(fx: float, g: np.ndarray, center: Center) -> float:
    """``f* ≥ f(x) − m·sqrt(gᵀH⁻¹g)``.

    At the analytic center the polytope lies in the outer ellipsoid ``{z : ‖z − x‖_H ≤ m}``
    ([3] §8.5.3, the sharper radius is ``sqrt(m(m−1))``) and contains a minimizer ``z*``, so
    ``f* ≥ f(x) + gᵀ(z* − x) ≥ f(x) − m‖g‖_{H⁻¹}`` ([1] §3).
    """
    hg = scipy.linalg.cho_solve(center.chol, g, check_finite=False)
    return fx - center.m * math.sqrt(max(float(g @ hg), 0.0))


def model_bound(cuts: Cuts, lam: np.ndarray, rho: np.ndarray) -> float:
    """Lower bound of the cutting-plane model from dual weights ``λ ≥ 0`` (rescaled here so that
    ``Σ_i λ_i/‖g_i‖ = 1``).

    The model ``f̂(z) = max_i ‖g_i‖(a_iᵀz + c_i) = max_i f(x_i) + g_iᵀ(z − x_i)`` is a minorant
    of ``f``; averaging its pieces with the weights ``θ_i = λ_i/‖g_i‖`` of the simplex gives

    .. math::

        f^* \\ge \\min_{|z| \\le \\rho} \\hat f(z)
        \\ge \\sum_i \\lambda_i c_i - \\sum_j \\rho_j \\Big|\\sum_i \\lambda_i a_{ij}\\Big|,

    for any such ``λ`` (LP weak duality): the value is a bound whatever produced ``λ``.
    """
    n = cuts.size
    lam = np.maximum(lam, 0.0)
    total = float(np.sum(lam / cuts.norm[:n]))
    if n == 0 or not total > 0.0:
        return -math.inf
    lam = lam / total
    return float(lam @ cuts.c[:n]) - float(rho @ np.abs(lam @ cuts.A))


def dual_bound(cuts: Cuts, slack: np.ndarray, rho: np.ndarray) -> float:
    """:func:`model_bound` at the analytic-center weights ``λ_i ∝ 1/s_i``.

    The center's optimality condition ``Σ_i a_i/s_i + ∇ψ(x) = 0`` makes these weights nearly
    balance the subgradients: a cheap, usually good, dual point.
    """
    if cuts.size == 0:
        return -math.inf
    return model_bound(cuts, 1.0 / slack, rho)


def lp_bound(cuts: Cuts, rho: np.ndarray) -> float:
    """``min_{|z| ≤ ρ} f̂(z)``, the exact cutting-plane lower bound (Kelley's LP, HiGHS).

    HiGHS solves the dual of ``min t`` s.t. ``a_iᵀz − t/‖g_i‖ ≤ −c_i``, ``|z| ≤ ρ``:
    ``max cᵀλ − ρᵀ(μ⁺ + μ⁻)`` s.t. ``Aᵀλ + μ⁺ − μ⁻ = 0``, ``Σ λ_i/‖g_i‖ = 1``, ``λ, μ± ≥ 0``
    (``p + 1`` rows instead of one per cut: about 1.5× faster with hundreds of cuts), and its
    ``λ`` is evaluated by :func:`model_bound`, which makes the value a bound whatever HiGHS's
    tolerances. Returns ``-inf`` if HiGHS fails.
    """
    n, p = cuts.size, rho.size
    if n == 0:
        return -math.inf
    A_eq = np.zeros((p + 1, n + 2 * p))
    A_eq[:p, :n] = cuts.A.T
    A_eq[:p, n : n + p] = np.eye(p)
    A_eq[:p, n + p :] = -np.eye(p)
    A_eq[p, :n] = 1.0 / cuts.norm[:n]
    b_eq = np.zeros(p + 1)
    b_eq[p] = 1.0
    cost = np.concatenate([-cuts.c[:n], rho, rho])
    res = linprog(cost, A_eq=A_eq, b_eq=b_eq, bounds=(0.0, None), method="highs")
    if res.status != 0:
        return -math.inf
    return model_bound(cuts, res.x[:n], rho)


def _widths(A: np.ndarray, chol: tuple) -> np.ndarray:
    """``sqrt(a_iᵀH⁻¹a_i) = ‖L⁻¹a_i‖`` for the rows of ``A`` (``H = LLᵀ``): one triangular
    solve, ``m·p²`` flops."""
    y = scipy.linalg.solve_triangular(chol[0], A.T, lower=True, check_finite=False)
    return np.sqrt(np.maximum(np.einsum("ij,ij->j", y, y), 1e-300))


def relevance(A: np.ndarray, slack: np.ndarray, chol: tuple) -> np.ndarray:
    """``η_i = (b_i − a_iᵀx)/sqrt(a_iᵀH⁻¹a_i)``, the distance of cut ``i``'s hyperplane from the
    center in the Dikin metric ``‖·‖_H`` ([1] §5)."""
    return slack / _widths(A, chol)


def box_relevance(x: np.ndarray, rho: np.ndarray, chol: tuple) -> np.ndarray:
    """``η`` of the ``2p`` box sides ``±z_j ≤ ρ_j``: slacks ``ρ ∓ x`` over ``sqrt((H⁻¹)_jj)``."""
    width = _widths(np.eye(x.size), chol)
    return np.concatenate([(rho - x) / width, (rho + x) / width])


def _radius_ratio(r: float, eta: np.ndarray, lam: float) -> float:
    """``ψ(r) = min_μ [Σ_i max_{v ∈ [lo_i, hi_i]} (v² − μv) + |μ|λr] / r²`` with
    ``lo_i = −r/η_i``, ``hi_i = min(1, r/η_i)``; ``eta`` sorted in increasing order.

    The inner maxima are at the interval's ends, so the sum is convex and piecewise linear in
    ``μ``, with breakpoints ``μ_i = lo_i + hi_i`` (``1 − r/η_i`` while ``η_i ≤ r``, then 0: in
    the order of ``η``); its minimum is at the breakpoint where the slope
    ``−Σ_{μ_i > μ} hi_i − Σ_{μ_i < μ} lo_i`` turns nonnegative. Any ``μ`` gives a valid value.
    """
    lo = -r / eta
    hi = np.minimum(1.0, r / eta)
    slope = np.cumsum(hi - lo) - hi.sum()
    k = min(int(np.searchsorted(slope, 0.0)), eta.size - 1)
    mu = lo[k] + hi[k]
    value = float(np.sum(np.maximum(lo * (lo - mu), hi * (hi - mu)))) + abs(mu) * lam * r
    return value / (r * r)


#: Bisection steps of :func:`outer_radius` on ``log r`` (relative accuracy ``(r₀)^(2^-k)``:
#: under 1% for ``m ≤ 10⁴`` inequalities).
_RADIUS_STEPS = 10


def outer_radius(eta: np.ndarray, lam: float, largest: float = math.inf) -> float:
    """A radius ``r`` with ``‖z − x‖_H < r`` for every ``z`` of the polytope (``x`` its analytic
    center up to the Newton decrement ``λ``; ``eta``: the ``η_i`` of all ``m`` inequalities).
    Only radii below ``largest`` are sought: the result is ``≥ largest`` if none is proven.

    For ``z`` in the polytope put ``v_i = a_iᵀ(z − x)/s_i`` and ``t = ‖z − x‖_H``. Then
    ``t² = Σ v_i²`` (``H = Σ a_ia_iᵀ/s_i²``), ``v_i ≤ 1`` (feasibility), ``|v_i| ≤ t/η_i``
    (Cauchy–Schwarz in ``‖·‖_H``) and ``|Σ v_i| = |∇φ(x)ᵀ(z − x)| ≤ λt`` (centering). With
    ``u = 1 − v ≥ 0``, ``Σ u_i² ≤ (Σ u_i)²`` gives ``t² ≤ m(m − 1)`` at ``λ = 0`` ([3] §8.5.3;
    ``r₀`` below adds the ``λ`` terms). Sharper, for every ``μ``:
    ``t² = Σ(v_i² − μv_i) + μΣv_i ≤ t²ψ(t)`` (:func:`_radius_ratio`), and ``ψ`` is
    nonincreasing (for a fixed ``μ/r`` the intervals ``[lo_i, hi_i]/r`` shrink as ``r`` grows),
    so ``ψ(r) < 1`` proves ``t < r`` for every ``z``: bisection on ``log r``.
    """
    eta = np.sort(eta)
    m = eta.size
    lam = min(lam, 0.5)
    # t² ≤ m(m−1) + 2λt(m−1) + λ²t², solved for t
    r0 = lam * (m - 1) + math.sqrt(lam * lam * (m - 1) ** 2 + (1 - lam * lam) * m * (m - 1))
    r0 = r0 / (1 - lam * lam) * (1 + 1e-12)
    if largest < r0:
        if _radius_ratio(largest, eta, lam) >= 1.0 - 1e-12:
            return r0  # no radius below ``largest`` can be proven
        r0 = largest
    lo, hi = 1.0, r0
    for _ in range(_RADIUS_STEPS):
        mid = math.sqrt(lo * hi)
        if _radius_ratio(mid, eta, lam) < 1.0 - 1e-12:
            hi = mid
        else:
            lo = mid
    return hi


def initial_slack(A: np.ndarray, b: np.ndarray, z: np.ndarray, chol: tuple) -> np.ndarray:
    """Warm start of the slacks: the true slack where it is comfortably positive
    (``s_i > 10⁻²·sqrt(a_iᵀH⁻¹a_i)``, the Dikin width at the previous center), else
    ``max(s_i, 0)`` plus that width (the infeasible start absorbs it). Rows have unit norm, so
    ``‖L⁻¹‖_F`` bounds every width: only the few rows below that bound need their own."""
    s = b - A @ z
    linv = scipy.linalg.solve_triangular(chol[0], np.eye(z.size), lower=True, check_finite=False)
    near = np.flatnonzero(s <= 1e-2 * math.sqrt(float(np.sum(linv * linv))))
    if near.size:
        width = np.sqrt(np.einsum("ij,ij->i", *2 * (A[near] @ linv.T,)))
        sn = s[near]
        s[near] = np.where(sn > 1e-2 * width, sn, np.maximum(sn, 0.0) + width)
    return s
