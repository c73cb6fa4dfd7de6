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
every call) and the exact LP bound (HiGHS, every ``lp_every`` calls). ACCPM stops when
``(u − l)/max(1, |u|) ≤ tol``; the result's gap is the problem's certificate of the best point.

One oracle call, step by step (one private function each):

1. ``_oracle``: ``f(x_k)`` and ``g_k ∈ ∂f(x_k)`` at the analytic center ``x_k``; ``u ← min(u, f)``.
2. ``_dikin_bound``, ``_dual_bound``, ``_lp_bound``: ``l ← max(l, ...)``; stop if the bounds meet.
3. ``_Cuts.add``: the deep cut ``g_kᵀ(z − x_k) + f(x_k) − u ≤ 0``. Every stored cut uses the
   current ``u`` (a minimizer has ``f(z*) ≤ u``, so tightening old cuts as ``u`` falls is valid).
4. ``_center``: the new analytic center by infeasible-start Newton, warm-started at ``x_k``
   (which the new cut, and old cuts tightened by a lower ``u``, may exclude).
5. ``_drop``: constraint dropping by the relevance ``η_i`` (``none``, ``relevance``, ``keep``).

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

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.optimize import linprog

from problems import SoftMarginPrimal
from problems._validation import check_int, check_option, check_real
from solvers.base import IterativeSolver, Status
from solvers.registry import register

#: Constraint-dropping strategies (the course project's three): keep every cut, drop the cuts
#: that provably cannot touch the localization set, keep only the ``keep_factor·p`` most relevant.
DROPPING = ("none", "relevance", "keep")

#: Backtracking parameters of the Newton line searches ([3] Algorithms 9.2 and 10.2).
_ALPHA, _BETA = 0.01, 0.5
#: At most this many Newton steps per centering.
_MAX_NEWTON = 200


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
) -> tuple[np.ndarray, np.ndarray, tuple, int] | None:
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
    center. Returns ``(x, slack, cholesky(H), steps)``, or None if it does not converge (an empty
    polytope, which can only be numerical since a minimizer is always inside).
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
                return z, s, chol, step - 1
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


def _dual_bound(cuts: _Cuts, slack: np.ndarray, rho: np.ndarray) -> float:
    """Lower bound of the cutting-plane model's LP at the analytic-center weights.

    The model ``f̂(z) = max_i f(x_i) + g_iᵀ(z − x_i)`` is a minorant of ``f``, and for weights
    ``λ`` in the simplex, LP duality gives

    .. math::

        f^* \\ge \\min_{|z| \\le \\rho} \\hat f(z)
        \\ge \\sum_i \\lambda_i (f(x_i) - g_i^\\top x_i) - \\sum_j \\rho_j
        \\Big|\\sum_i \\lambda_i g_{ij}\\Big|.

    The analytic center's optimality condition ``Σ_i a_i/s_i + ∇ψ(x) = 0`` makes
    ``λ_i ∝ 1/(‖g_i‖ s_i)`` nearly balance the subgradients: a cheap, usually good, dual point.
    """
    n = cuts.size
    if n == 0:
        return -math.inf
    weight = 1.0 / slack  # λ_i ‖g_i‖ up to the normalization
    lam_norm = weight / cuts.norm[:n]
    lam_norm /= lam_norm.sum()
    lam_g = lam_norm * cuts.norm[:n]  # λ_i ‖g_i‖, multiplies a_i and c_i
    v = lam_g @ cuts.A
    return float(lam_g @ cuts.c[:n]) - float(rho @ np.abs(v))


def _lp_bound(cuts: _Cuts, rho: np.ndarray) -> float:
    """``min_{|z| ≤ ρ} f̂(z)``, the exact cutting-plane lower bound (Kelley's LP, HiGHS).

    ``min t`` s.t. ``a_iᵀz − t/‖g_i‖ ≤ −c_i`` and the box. Returns ``-inf`` if HiGHS fails; the
    value is lowered by HiGHS's tolerance (1e-9 relative) so that it stays a bound.
    """
    n, p = cuts.size, rho.size
    if n == 0:
        return -math.inf
    A_ub = np.hstack([cuts.A, -1.0 / cuts.norm[:n, None]])
    cost = np.zeros(p + 1)
    cost[-1] = 1.0
    bounds = [(-r, r) for r in rho] + [(None, None)]
    res = linprog(cost, A_ub=A_ub, b_ub=-cuts.c[:n], bounds=bounds, method="highs")
    if res.status != 0:
        return -math.inf
    return float(res.fun) - 1e-9 * max(1.0, abs(float(res.fun)))


def _dikin_widths(A: np.ndarray, chol: tuple) -> np.ndarray:
    """``sqrt(a_iᵀH⁻¹a_i)`` for every row (through the p×p inverse: one matrix product)."""
    p = A.shape[1]
    Hinv = scipy.linalg.cho_solve(chol, np.eye(p), check_finite=False)
    return np.sqrt(np.maximum(np.einsum("ij,ij->i", A @ Hinv, A), 1e-300))


def _relevance(A: np.ndarray, slack: np.ndarray, chol: tuple) -> np.ndarray:
    """``η_i = (b_i − a_iᵀx)/sqrt(a_iᵀH⁻¹a_i)``, the distance of cut ``i`` from the center in
    the Dikin metric ([1] §5). ``η_i ≥ m`` puts the cut's hyperplane outside the outer ellipsoid,
    which contains the polytope: the cut is redundant and dropping it leaves the set unchanged."""
    return slack / _dikin_widths(A, chol)


def _drop(state: _State, strategy: str, keep: int) -> int:
    """Constraint dropping at the new center; returns how many cuts were dropped.

    ``relevance``: drop every cut with ``η_i ≥ m`` (provably redundant). ``keep``: besides those,
    keep only the ``keep − 1`` cuts of smallest ``η``, so that with the next cut every polytope
    ACCPM centers holds at most ``keep`` cuts (dropping only enlarges the set, so a minimizer stays
    in it). The box is never dropped.
    """
    cuts, center = state.cuts, state.center
    if strategy == "none" or cuts.size == 0:
        return 0
    eta = _relevance(cuts.A, center.slack, center.chol)
    mask = eta < center.m
    if strategy == "keep" and mask.sum() > keep - 1:
        order = np.argsort(eta, kind="stable")[: keep - 1]
        mask = np.zeros_like(mask)
        mask[order] = True
    dropped = int(cuts.size - mask.sum())
    if dropped:
        cuts.keep(mask)
        center.slack = center.slack[mask]
    return dropped


def _initial_slack(A, b, z, width) -> np.ndarray:
    """Warm start of the slacks: the true slack where it is comfortably positive, else the
    Dikin width ``sqrt(aᵀH⁻¹a)`` of the previous center (the infeasible start absorbs it)."""
    s = b - A @ z
    return np.where(s > 1e-2 * width, s, np.maximum(s, 0.0) + width)


@register
class ACCPM(IterativeSolver):
    """Analytic-center cutting-plane method with constraint dropping ([1], [2]).

    Minimizes the soft-margin primal (hinge or squared hinge; bias free, regularized or none)
    through its subgradient oracle. One iteration is one oracle call at the analytic center of
    the localization polytope (see the module docstring).

    Parameters
    ----------
    tol : float, default=1e-6
        ACCPM stops when its own bounds satisfy ``(u − l)/max(1, |u|) ≤ tol`` (``stop_rule=
        "native"``); with ``stop_rule="gap"`` the certified relative gap is the target.
    dropping : {"none", "relevance", "keep"}, default="relevance"
        ``"relevance"`` drops cut ``i`` when ``η_i = (b_i − a_iᵀx)/sqrt(a_iᵀH⁻¹a_i) ≥ m`` (``m``
        inequalities, ``H`` the barrier's Hessian at the center ``x``): provably safe.
        ``"keep"`` also keeps only the most relevant cuts, so that no polytope holds more than
        ``N = keep_factor·p`` cuts (``p`` variables).
    keep_factor : int, default=3
        ``N = keep_factor·p`` for ``dropping="keep"``.
    lp_every : int, default=50
        Solve the cutting-plane LP (HiGHS) for the exact model lower bound every ``lp_every``
        oracle calls (0: never). The Dikin and analytic-center dual bounds are computed at every
        call; the latter alone stops within ~10% more calls, while one HiGHS solve costs as much
        as tens of oracle calls once hundreds of cuts are held.
    center_tol : float, default=1e-10
        Newton decrement ``λ²`` at which a centering stops.
    stop_rule : {"native", "gap"}, default="native"
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

    def __init__(
        self,
        *,
        tol: float = 1e-6,
        dropping: str = "relevance",
        keep_factor: int = 3,
        lp_every: int = 50,
        center_tol: float = 1e-10,
        stop_rule: str = "native",
        check_every: int = 10,
        **common,
    ):
        super().__init__(tol=tol, stop_rule=stop_rule, check_every=check_every, **common)
        self.dropping = check_option("dropping", dropping, DROPPING)
        self.keep_factor = check_int("keep_factor", keep_factor, low=1)
        self.lp_every = check_int("lp_every", lp_every, low=0)
        self.center_tol = check_real("center_tol", center_tol, low=0.0)

    def solve(self, problem, *, warm_start=None, callback=None):
        """Run the template; a centering failure ends the run as ``numerical_error``."""
        result = super().solve(problem, warm_start=warm_start, callback=callback)
        failure = result.info.get("failure")
        if failure and result.status is Status.OPTIMAL:
            result = dataclasses.replace(result, status=Status.NUMERICAL_ERROR, message=failure)
        return result

    # ---- template hooks --------------------------------------------------------------------------
    def _init_state(self, problem: SoftMarginPrimal, warm_start) -> _State:
        data = _problem_data(problem)
        p = data["p"]
        rho = _localization_box(data)
        x = np.zeros(p)  # the analytic center of the symmetric box
        _, _, hpsi = _box_barrier(x, rho)
        chol = scipy.linalg.cho_factor(np.diag(hpsi), lower=True)
        state = _State(
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

    def _step(self, problem, state: _State) -> tuple[int, bool]:
        calls = 1 if self.stop_rule == "gap" else self.check_every
        calls = max(1, min(calls, self.max_iter - state.calls))
        for done in range(1, calls + 1):
            if self._oracle_call(state):
                return done, True
        return calls, False

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
        done = _bound_gap(state.upper, state.lower) <= self.tol or not np.any(g)
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
        s0 = _initial_slack(A, b, x, _dikin_widths(A, old.chol))
        out = _center(A, b, state.rho, x, s0, self.center_tol)
        if out is None:
            state.failure = (
                f"centering failed after {state.calls} oracle calls (the polytope is numerically "
                "empty: the bounds cannot be refined further in double precision)"
            )
            return 0, 0
        z, s, chol, steps = out
        state.center = _Center(x=z, slack=s, chol=chol, m=cuts.size + 2 * z.size)
        state.newton_total += steps
        state.max_cuts = max(state.max_cuts, cuts.size)
        dropped = _drop(state, self.dropping, self.keep_factor * state.data["p"])
        return steps, dropped

    def _warm_point(self, warm_start, data, rho) -> np.ndarray:
        """The first query point from a warm start (anything with ``w`` and ``b``), clipped
        strictly inside the box."""
        get = warm_start.get if isinstance(warm_start, dict) else lambda k: getattr(warm_start, k)
        w = np.asarray(get("w"), dtype=np.float64).ravel()
        if w.shape != (data["d"],):
            raise ValueError(f"warm_start w must have length {data['d']}, got {w.shape}")
        z = np.zeros(data["p"])
        z[: data["d"]] = w
        b = float(get("b") or 0.0)
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
