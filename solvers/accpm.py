"""ACCPM: the analytic-center cutting-plane method on the nonsmooth soft-margin primal.

The method minimizes ``f(z) = ½‖w‖² (+ ½w_b²) + Σ_i C_i loss(y_i (w·x_i + b))`` over
``z = (w)``, ``(w, b)`` or ``(w, w_b)`` (bias none, free, regularized; ``b = s·w_b``) through a
subgradient oracle only. It keeps a polytope that provably contains a minimizer,

.. math::

    \\mathcal{P}_k = \\{z : |z_j| \\le \\rho_j\\}
        \\cap \\{z : g_i^\\top (z - x_i) + f(x_i) \\le u_k,\\ i \\in \\mathcal{I}_k\\},

queries the oracle at its analytic center ``x_k = argmin −Σ log(b_i − a_iᵀz)`` and adds the deep
cut of the new subgradient. ``u_k = min_i f(x_i)`` is the upper bound; every stored cut is an affine
minorant ``f(z) ≥ f(x_i) + g_iᵀ(z − x_i)``, so the cutting-plane model gives lower bounds: the
Dikin-ellipsoid bound, the dual bound of the model's LP at the analytic-center weights (both at
every call) and the exact LP bound (HiGHS on the dual LP, every ``lp_every`` calls). ACCPM stops
when ``(u − l)/max(1, |u|) ≤ tol``; the result's gap is the problem's certificate of the best
point.

One oracle call, step by step (one private function each):

1. ``_oracle``: ``f(x_k)`` and ``g_k ∈ ∂f(x_k)`` at the analytic center ``x_k``; ``u ← min(u, f)``.
2. ``_dikin_bound``, ``_dual_bound``, ``_lp_bound``: ``l ← max(l, ...)``; stop if the bounds meet.
3. ``_Cuts.add``: the deep cut ``g_kᵀ(z − x_k) + f(x_k) − u ≤ 0``. Every stored cut uses the
   current ``u`` (a minimizer has ``f(z*) ≤ u``, so tightening old cuts as ``u`` falls is valid).
4. ``_center``: the new analytic center by infeasible-start Newton, warm-started at ``x_k``
   (which the new cut, and old cuts tightened by a lower ``u``, may exclude; ``_initial_slack``).
5. ``_drop``: constraint dropping by the relevance ``η_i = s_i/sqrt(a_iᵀH⁻¹a_i)`` (``none``;
   ``relevance``: every ``relevance_every`` calls, the cuts with ``η_i ≥ r``, ``r`` a proven
   bound on ``‖z − x‖_H`` over the polytope (``_outer_radius``: [3]'s ``sqrt(m(m−1))``,
   sharpened): they cannot touch it; ``keep``: also all but the ``N − 1`` most relevant, at
   every call).

References
----------
.. [1] S. Boyd, L. Vandenberghe and J. Skaf, "Analytic center cutting-plane method", EE364b
   lecture notes, Stanford University, 2008.
.. [2] J.-L. Goffin and J.-P. Vial, "Convex nondifferentiable optimization: a survey focused on
   the analytic center cutting plane method", Optimization Methods and Software 17(5), 2002.
.. [3] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004:
   §8.5.3 (the inner and outer Dikin ellipsoids), §10.3.2 (infeasible-start Newton method).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.optimize import linprog

from svmbench.problems import SoftMarginPrimal
from svmbench.problems.validation import check_int, check_option, check_real
from svmbench.solvers.base import IterativeSolver, StepOutcome
from svmbench.solvers.registry import register

#: Constraint-dropping strategies (the course project's three): keep every cut, drop the cuts
#: that provably cannot touch the localization set, keep only the ``keep_factor·p`` most relevant.
DROPPING = ("none", "relevance", "keep")

#: Backtracking parameters of the Newton line searches ([3] Algorithms 9.2 and 10.2).
_ALPHA, _BETA = 0.01, 0.5
#: At most this many Newton steps per centering.
_MAX_NEWTON = 200


#: The smallest target of ACCPM's own bounds: below it double precision cannot tell u from l.
TARGET_FLOOR = 1e-15


@dataclass
class _Cuts:
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
    def empty(cls, p: int, capacity: int = 64) -> _Cuts:
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
class _Center:
    """The analytic center of the current polytope and what ACCPM reads there."""

    x: np.ndarray
    slack: np.ndarray  # b_i − a_iᵀx of the cuts
    chol: tuple  # Cholesky factor of H = ∇²φ(x), the barrier's Hessian (cuts and box)
    m: int  # number of inequalities of the polytope (cuts + 2p box sides)
    lam2: float = 0.0  # Newton decrement² of the barrier at x (0 at an exact center)
    is_center: bool = True  # False for a warm-start query point


@dataclass
class _State:
    data: dict[str, Any]
    rho: np.ndarray
    cuts: _Cuts
    center: _Center
    upper: float = math.inf
    lower: float = -math.inf
    z_best: np.ndarray | None = None
    calls: int = 0
    newton_total: int = 0
    max_cuts: int = 0
    failure: str = ""
    #: ACCPM's own target on ``(u − l)/max(1, |u|)``: tol at first, divided by 10 each time the
    #: certificate refuses a point the bounds accepted (the squared hinge's certified gap is
    #: of the order of the square root of the primal suboptimality)
    target: float = math.inf
    asked: bool = False
    history: dict[str, list] = field(default_factory=dict)


def _problem_data(problem: SoftMarginPrimal) -> dict[str, Any]:
    """What the oracle reuses: ``X``, ``y``, ``C_i``, the bias mode, the number of variables."""
    X = problem.X
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        row_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        row_sq = np.einsum("ij,ij->i", X, X)
    d = problem.n_features
    return {
        "X": X,
        "y": problem.y,
        "C": problem.upper_bounds,
        "bias": problem.bias,
        "s": problem.bias_scale,
        "hinge": problem.loss == "hinge",
        "d": d,
        "p": d + (problem.bias != "none"),
        "R": float(np.sqrt(row_sq.max())) if row_sq.size else 0.0,
    }


def _split(z: np.ndarray, data: dict[str, Any]) -> tuple[np.ndarray, float]:
    """``(w, b)`` from ``z``: ``b = z_d`` (free), ``s·z_d`` (regularized) or 0 (none)."""
    d = data["d"]
    if data["bias"] == "none":
        return z, 0.0
    if data["bias"] == "free":
        return z[:d], float(z[d])
    return z[:d], data["s"] * float(z[d])


def _oracle(z: np.ndarray, data: dict[str, Any]) -> tuple[float, np.ndarray]:
    """``f(z)`` and one subgradient ``g ∈ ∂f(z)``.

    With ``m_i = y_i(w·x_i + b)`` and ``ξ_i = max(0, 1 − m_i)``: the hinge gives
    ``g_w = w − Σ_{m_i<1} C_i y_i x_i`` (the subgradient 0 is taken at the kink ``m_i = 1``), the
    squared hinge the gradient ``g_w = w − 2Σ C_i ξ_i y_i x_i``; ``g_b = −Σ coef`` for a free bias,
    ``w_b − s·Σ coef`` for a regularized one.
    """
    w, b = _split(z, data)
    X, y, C = data["X"], data["y"], data["C"]
    m = y * (np.asarray(X @ w).ravel() + b)
    xi = np.maximum(0.0, 1.0 - m)
    if data["hinge"]:
        loss = float(C @ xi)
        coef = np.where(xi > 0.0, C * y, 0.0)  # Σ coef_i x_i is −(loss part of g_w)
    else:
        loss = float(C @ (xi * xi))
        coef = 2.0 * C * xi * y
    g = np.empty_like(z)
    d = data["d"]
    g[:d] = w - np.asarray(X.T @ coef).ravel()
    reg = 0.5 * float(w @ w)
    if data["bias"] == "free":
        g[d] = -float(coef.sum())
    elif data["bias"] == "regularized":
        g[d] = z[d] - data["s"] * float(coef.sum())
        reg += 0.5 * float(z[d]) ** 2
    return reg + loss, g


def _localization_box(data: dict[str, Any]) -> np.ndarray:
    """Half-widths ``ρ`` of a box that contains a minimizer.

    ``½‖w*‖² ≤ f(z*) ≤ f(0) = Σ C_i`` gives ``|w_j| ≤ ‖w*‖ ≤ sqrt(2 f(0))`` (and the same for
    ``w_b`` when the bias is regularized, as ``½(‖w‖² + w_b²) ≤ f(0)``). A free bias with
    ``b > 1 + R‖w‖`` (``R = max‖x_i‖``) puts every positive example past its margin and every
    negative one inside its loss, so decreasing ``b`` does not increase ``f``: some minimizer has
    ``|b| ≤ 1 + R·sqrt(2 f(0))``. The half-widths get 1% slack so that the minimizer is interior.
    """
    f0 = float(data["C"].sum())
    r = math.sqrt(2.0 * f0) if f0 > 0 else 1.0
    rho = np.full(data["p"], r)
    if data["bias"] == "free":
        rho[-1] = 1.0 + data["R"] * r
    return 1.01 * rho


def _box_barrier(z: np.ndarray, rho: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
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


def _center(
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
        _, gpsi, hpsi = _box_barrier(z, rho)
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
    phi0 = _box_barrier(z, rho)[0] - float(np.sum(np.log(s)))
    while True:
        zt = z + t * dz
        st = s + t * ds
        if np.all(st > 0) and np.all(np.abs(zt) < rho):
            phit = _box_barrier(zt, rho)[0] - float(np.sum(np.log(st)))
            if phit <= phi0 - _ALPHA * t * lam2:
                return t
        t *= _BETA
        if t < 1e-12:
            return t


def _kkt_residual(A, b, rho, z, s, nu) -> float:
    """``‖(∇ψ(z) + Aᵀν, ν − 1/s, Az + s − b)‖``, the infeasible-start Newton residual."""
    gpsi = _box_barrier(z, rho)[1]
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


def _dikin_bound(fx: float, g: np.ndarray, center: _Center) -> float:
    """``f* ≥ f(x) − m·sqrt(gᵀH⁻¹g)``.

    At the analytic center the polytope lies in the outer ellipsoid ``{z : ‖z − x‖_H ≤ m}``
    ([3] §8.5.3, the sharper radius is ``sqrt(m(m−1))``) and contains a minimizer ``z*``, so
    ``f* ≥ f(x) + gᵀ(z* − x) ≥ f(x) − m‖g‖_{H⁻¹}`` ([1] §3).
    """
    hg = scipy.linalg.cho_solve(center.chol, g, check_finite=False)
    return fx - center.m * math.sqrt(max(float(g @ hg), 0.0))


def _model_bound(cuts: _Cuts, lam: np.ndarray, rho: np.ndarray) -> float:
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


def _dual_bound(cuts: _Cuts, slack: np.ndarray, rho: np.ndarray) -> float:
    """:func:`_model_bound` at the analytic-center weights ``λ_i ∝ 1/s_i``.

    The center's optimality condition ``Σ_i a_i/s_i + ∇ψ(x) = 0`` makes these weights nearly
    balance the subgradients: a cheap, usually good, dual point.
    """
    if cuts.size == 0:
        return -math.inf
    return _model_bound(cuts, 1.0 / slack, rho)


def _lp_bound(cuts: _Cuts, rho: np.ndarray) -> float:
    """``min_{|z| ≤ ρ} f̂(z)``, the exact cutting-plane lower bound (Kelley's LP, HiGHS).

    HiGHS solves the dual of ``min t`` s.t. ``a_iᵀz − t/‖g_i‖ ≤ −c_i``, ``|z| ≤ ρ``:
    ``max cᵀλ − ρᵀ(μ⁺ + μ⁻)`` s.t. ``Aᵀλ + μ⁺ − μ⁻ = 0``, ``Σ λ_i/‖g_i‖ = 1``, ``λ, μ± ≥ 0``
    (``p + 1`` rows instead of one per cut: about 1.5× faster with hundreds of cuts), and its
    ``λ`` is evaluated by :func:`_model_bound`, which makes the value a bound whatever HiGHS's
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
    return _model_bound(cuts, res.x[:n], rho)


def _widths(A: np.ndarray, chol: tuple) -> np.ndarray:
    """``sqrt(a_iᵀH⁻¹a_i) = ‖L⁻¹a_i‖`` for the rows of ``A`` (``H = LLᵀ``): one triangular
    solve, ``m·p²`` flops."""
    y = scipy.linalg.solve_triangular(chol[0], A.T, lower=True, check_finite=False)
    return np.sqrt(np.maximum(np.einsum("ij,ij->j", y, y), 1e-300))


def _relevance(A: np.ndarray, slack: np.ndarray, chol: tuple) -> np.ndarray:
    """``η_i = (b_i − a_iᵀx)/sqrt(a_iᵀH⁻¹a_i)``, the distance of cut ``i``'s hyperplane from the
    center in the Dikin metric ``‖·‖_H`` ([1] §5)."""
    return slack / _widths(A, chol)


def _box_relevance(x: np.ndarray, rho: np.ndarray, chol: tuple) -> np.ndarray:
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


#: Bisection steps of :func:`_outer_radius` on ``log r`` (relative accuracy ``(r₀)^(2^-k)``:
#: under 1% for ``m ≤ 10⁴`` inequalities).
_RADIUS_STEPS = 10


def _outer_radius(eta: np.ndarray, lam: float, largest: float = math.inf) -> float:
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


def _drop(state: _State, strategy: str, keep: int, every: int) -> int:
    """Constraint dropping at the new center; returns how many cuts were dropped.

    ``relevance``, every ``every`` oracle calls: drop every cut with ``η_i ≥ r``, ``r`` from
    :func:`_outer_radius`. The polytope lies in ``{z : ‖z − x‖_H < r}`` and the hyperplane of such
    a cut does not meet that ellipsoid, so the cut cannot touch the current polytope: dropping it
    leaves the set (and so the bounds read from it) unchanged. ``keep``: the same, and at every
    call keep only the ``keep − 1`` cuts of smallest ``η``, so that with the next cut every
    polytope ACCPM centers holds at most ``keep`` cuts (a heuristic: dropping only enlarges the
    set, so a minimizer stays in it). The box is never dropped.
    """
    cuts, center = state.cuts, state.center
    if strategy == "none" or cuts.size == 0:
        return 0
    due = state.calls % every == 0
    cap = strategy == "keep" and cuts.size > keep - 1
    if not (due or cap):
        return 0
    eta = _relevance(cuts.A, center.slack, center.chol)
    mask = np.ones(cuts.size, dtype=bool)
    if due:
        eta_all = np.concatenate([eta, _box_relevance(center.x, state.rho, center.chol)])
        mask = eta < _outer_radius(eta_all, math.sqrt(center.lam2), largest=float(eta.max()))
    if cap and mask.sum() > keep - 1:
        mask = np.zeros_like(mask)
        mask[np.argsort(eta, kind="stable")[: keep - 1]] = True
    dropped = int(cuts.size - mask.sum())
    if dropped:
        cuts.keep(mask)
        center.slack = center.slack[mask]
    return dropped


def _initial_slack(A: np.ndarray, b: np.ndarray, z: np.ndarray, chol: tuple) -> np.ndarray:
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


@register
class ACCPM(IterativeSolver):
    """Analytic-center cutting-plane method with constraint dropping ([1], [2]).

    Minimizes the soft-margin primal (hinge or squared hinge; bias free, regularized or none)
    through its subgradient oracle. One iteration is one oracle call at the analytic center of
    the localization polytope (see the module docstring).

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative gap (``stop_rule="gap"``, the default): ACCPM runs until
        its own bounds satisfy ``(u − l)/max(1, |u|) ≤ target`` (``target = tol``, divided by 10
        each time the certificate refuses), then asks the problem. ``stop_rule="native"`` stops on
        the bounds alone; the status is ``optimal`` only if the certificate then meets tol, else
        ``not_certified``.
    dropping : {"none", "relevance", "keep"}, default="relevance"
        ``"relevance"`` drops cut ``i`` when ``η_i = (b_i − a_iᵀx)/sqrt(a_iᵀH⁻¹a_i) ≥ r``
        (``H`` the barrier's Hessian at the center ``x``, ``r`` a proven bound on ``‖z − x‖_H``
        over the polytope: [3]'s ``sqrt(m(m−1))`` for ``m`` inequalities, sharpened): such a
        cut cannot touch the current polytope, so dropping it leaves the polytope unchanged.
        ``"keep"`` also keeps only the most relevant cuts, so that no polytope holds more than
        ``N = keep_factor·p`` cuts (``p`` variables): a heuristic that only enlarges the set.
    keep_factor : int, default=3
        ``N = keep_factor·p`` for ``dropping="keep"``.
    relevance_every : int, default=10
        The relevance test (``η`` of every cut, ``m·p²`` flops, as much as a Newton step, and the
        radius ``r``) runs every ``relevance_every`` oracle calls; ``keep`` also applies its cap
        at every call where more than ``N − 1`` cuts are held. Testing at every call took 9–15%
        more time than every 10th call (gaussian, n = 10 000, d = 50 and 100), for about the
        same cuts held.
    lp_every : int, default=50
        Solve the cutting-plane LP (HiGHS) for the exact model lower bound every ``lp_every``
        oracle calls (0: never). The Dikin and analytic-center dual bounds are computed at every
        call; the latter alone stops within ~10% more calls, while one HiGHS solve costs as much
        as tens of oracle calls once hundreds of cuts are held.
    center_tol : float, default=1e-10
        Newton decrement ``λ²`` at which a centering stops.
    stop_rule : {"gap", "native"}, default="gap"
    check_every : int, default=10
        Oracle calls per chunk: the certificate drawn for the trace (clock paused) is computed
        every ``check_every`` calls. With ``stop_rule="gap"`` a chunk is one call and the gap is
        checked every ``check_every`` calls.
    trace, max_iter, time_limit :
        See :class:`~solvers.base.IterativeSolver` (``max_iter`` counts oracle calls, default
        5000).

    Notes
    -----
    ``result.info`` holds ACCPM's own ``upper``, ``lower``, ``bound_gap`` = ``(u − l)/max(1,|u|)``,
    the number of cuts held (final, and ``max_cuts_held``: the most any centered polytope held),
    the Newton steps, and ``history``: per oracle call, arrays ``call, f, upper, lower,
    lower_dikin, lower_dual, lower_lp, cuts, newton_steps, dropped`` (``f`` the oracle's value at
    the query point, ``cuts`` held after the call's dropping step, ``newton_steps`` of the
    centering after its cut; ``lower_lp`` is nan where the LP was not solved).
    """

    name = "accpm"
    iteration_unit = "oracle calls"
    supported: ClassVar = {
        SoftMarginPrimal: {
            "loss": ("hinge", "squared_hinge"),
            "bias": ("free", "regularized", "none"),
        }
    }
    default_max_iter = 5000
    warm_start_uses = ("w",)

    def __init__(
        self,
        *,
        tol: float = 1e-6,
        dropping: str = "relevance",
        keep_factor: int = 3,
        lp_every: int = 50,
        center_tol: float = 1e-10,
        relevance_every: int = 10,
        stop_rule: str = "gap",
        check_every: int = 10,
        **common,
    ):
        super().__init__(tol=tol, stop_rule=stop_rule, check_every=check_every, **common)
        self.dropping = check_option("dropping", dropping, DROPPING)
        self.keep_factor = check_int("keep_factor", keep_factor, low=1)
        self.lp_every = check_int("lp_every", lp_every, low=0)
        self.center_tol = check_real("center_tol", center_tol, low=0.0)
        self.relevance_every = check_int("relevance_every", relevance_every, low=1)

    @classmethod
    def memory_estimate(
        cls,
        problem,
        *,
        max_iter: int | None = None,
        dropping: str = "relevance",
        keep_factor: int = 3,
        lp_every: int = 50,
        **_,
    ) -> float:
        """The cuts (m rows of p = d + 1 in a store that doubles, m = ``max_iter`` + 1 or the
        ``keep_factor·p`` kept), the exact LP's dense ``(p + 1)×(m + 2p)`` equality matrix and the
        solver's copy of it, the centering's p×p Hessian, factor and inverse, ``A H^{-1/2}``
        (m×p), 48 vectors of n (the oracle, the certificate; 19 MB measured at n = 50 000,
        d = 20) and a product of the data with itself."""
        p = problem.n_features + (problem.bias != "none")
        calls = cls.default_max_iter if max_iter is None else int(max_iter)
        m = keep_factor * p + 1 if dropping == "keep" else calls + 1
        lp = 2 * (p + 1) * (m + 2 * p) if lp_every else 0
        X = problem.X
        data = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sparse.issparse(X) else 0
        return 8.0 * (3 * m * p + lp + 3 * p * p + 48 * problem.n_samples) + data

    # ---- template hooks --------------------------------------------------------------------------
    def _init_state(self, problem: SoftMarginPrimal, warm_start) -> _State:
        data = _problem_data(problem)
        p = data["p"]
        rho = _localization_box(data)
        x = np.zeros(p)  # the analytic center of the symmetric box
        _, _, hpsi = _box_barrier(x, rho)
        chol = scipy.linalg.cho_factor(np.diag(hpsi), lower=True)
        state = _State(
            target=self.tol,
            data=data,
            rho=rho,
            cuts=_Cuts.empty(p),
            center=_Center(x=x, slack=np.empty(0), chol=chol, m=2 * p),
            history={k: [] for k in _HISTORY_KEYS},
        )
        if warm_start is not None:
            state.center.x = self._warm_point(warm_start, data, rho)
            state.center.is_center = False
        return state

    def _step(self, problem, state: _State) -> StepOutcome:
        """Oracle calls; a centering failure ends the run (``numerical_error`` unless the point
        so far is certified to ``tol``)."""
        if state.asked:  # the certificate refused what the bounds accepted: aim lower
            state.asked = False
            state.target /= 10.0
            if state.target < TARGET_FLOOR:
                return StepOutcome(0, failure="the bounds cannot be refined further")
        calls = 1 if self.stop_rule == "gap" else self.check_every
        calls = max(1, min(calls, self.max_iter - state.calls))
        for done in range(1, calls + 1):
            if self._oracle_call(state):
                state.asked = self.stop_rule == "gap"
                return StepOutcome(done, converged=True, failure=state.failure or None)
        return StepOutcome(calls)

    def _variables(self, problem, state: _State) -> dict[str, Any]:
        z = state.z_best if state.z_best is not None else state.center.x
        w, b = _split(z, state.data)
        return {"w": w.copy(), "b": b}

    def _info(self, state: _State) -> dict[str, Any]:
        hist = {k: np.asarray(v) for k, v in state.history.items()}
        return {
            "upper": state.upper,
            "lower": state.lower,
            "bound_gap": _bound_gap(state.upper, state.lower),
            "cuts_held": state.cuts.size,
            "max_cuts_held": state.max_cuts,
            "keep_limit": self.keep_factor * state.data["p"] if self.dropping == "keep" else None,
            "newton_steps": state.newton_total,
            "box": state.rho.copy(),
            "failure": state.failure,
            "history": hist,
        }

    # ---- one oracle call -------------------------------------------------------------------------
    def _oracle_call(self, state: _State) -> bool:
        """Query the center, update the bounds, add the cut, recenter, drop; True when done."""
        center, cuts = state.center, state.cuts
        x = center.x
        fx, g = _oracle(x, state.data)
        state.calls += 1
        if fx < state.upper:
            state.upper, state.z_best = fx, x.copy()
        # the Dikin bound holds at an analytic center only (not at a warm-start point)
        lower_dikin = _dikin_bound(fx, g, center) if center.is_center else -math.inf
        lower_dual = _dual_bound(cuts, center.slack, state.rho) if cuts.size else -math.inf
        state.lower = max(state.lower, lower_dikin, lower_dual)
        lower_lp = math.nan
        if self.lp_every and state.calls % self.lp_every == 0:
            lower_lp = _lp_bound(cuts, state.rho)
            state.lower = max(state.lower, lower_lp)
        done = _bound_gap(state.upper, state.lower) <= state.target or not np.any(g)
        if not np.any(g):  # 0 ∈ ∂f(x): x is optimal
            state.lower = state.upper
        steps = dropped = 0
        if not done and not state.failure:
            steps, dropped = self._cut_and_recenter(state, fx, g)
            if state.failure:
                done = True
        record = {
            "call": state.calls,
            "f": fx,
            "upper": state.upper,
            "lower": state.lower,
            "lower_dikin": lower_dikin,
            "lower_dual": lower_dual,
            "lower_lp": lower_lp,
            "cuts": state.cuts.size,
            "newton_steps": steps,
            "dropped": dropped,
        }
        for key, value in record.items():
            state.history[key].append(value)
        return done

    def _cut_and_recenter(self, state: _State, fx: float, g: np.ndarray) -> tuple[int, int]:
        """Add the deep cut at ``x``, compute the new analytic center, then drop cuts."""
        cuts, old = state.cuts, state.center
        x = old.x
        cuts.add(g, fx, x, state.calls)
        A, b = cuts.A, cuts.rhs(state.upper)
        s0 = _initial_slack(A, b, x, old.chol)
        out = _center(A, b, state.rho, x, s0, self.center_tol)
        if out is None:
            state.failure = (
                f"centering failed after {state.calls} oracle calls (the polytope is numerically "
                "empty: the bounds cannot be refined further in double precision)"
            )
            return 0, 0
        z, s, chol, steps, lam2 = out
        state.center = _Center(x=z, slack=s, chol=chol, m=cuts.size + 2 * z.size, lam2=lam2)
        state.newton_total += steps
        state.max_cuts = max(state.max_cuts, cuts.size)
        dropped = _drop(
            state, self.dropping, self.keep_factor * state.data["p"], self.relevance_every
        )
        return steps, dropped

    def _warm_point(self, warm_start, data, rho) -> np.ndarray:
        """The first query point from a warm start's ``(w, b)``, clipped strictly inside the
        box."""
        z = np.zeros(data["p"])
        z[: data["d"]] = warm_start.w
        b = float(warm_start.b or 0.0)
        if data["bias"] == "free":
            z[-1] = b
        elif data["bias"] == "regularized":
            z[-1] = b / data["s"]
        return np.clip(z, -0.99 * rho, 0.99 * rho)


_HISTORY_KEYS = (
    "call",
    "f",
    "upper",
    "lower",
    "lower_dikin",
    "lower_dual",
    "lower_lp",
    "cuts",
    "newton_steps",
    "dropped",
)


def _bound_gap(upper: float, lower: float) -> float:
    """``(u − l)/max(1, |u|)``, ACCPM's own relative gap."""
    if not math.isfinite(upper) or not math.isfinite(lower):
        return math.inf
    return (upper - lower) / max(1.0, abs(upper))
