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

One oracle call, step by step (one function each; those of the polytope, which know nothing of
the SVM, are in :mod:`solvers._accpm_polytope`):

1. ``_oracle``: ``f(x_k)`` and ``g_k ∈ ∂f(x_k)`` at the analytic center ``x_k``; ``u ← min(u, f)``.
2. ``dikin_bound``, ``dual_bound``, ``lp_bound``: ``l ← max(l, ...)``; stop if the bounds meet.
3. ``Cuts.add``: the deep cut ``g_kᵀ(z − x_k) + f(x_k) − u ≤ 0``. Every stored cut uses the
   current ``u`` (a minimizer has ``f(z*) ≤ u``, so tightening old cuts as ``u`` falls is valid).
4. ``analytic_center``: the new analytic center by infeasible-start Newton, warm-started at
   ``x_k`` (which the new cut, and old cuts tightened by a lower ``u``, may exclude;
   ``initial_slack``).
5. ``_drop``: constraint dropping by the relevance ``η_i = s_i/sqrt(a_iᵀH⁻¹a_i)`` (``none``;
   ``relevance``: every ``relevance_every`` calls, the cuts with ``η_i ≥ r``, ``r`` a proven
   bound on ``‖z − x‖_H`` over the polytope (``outer_radius``: [3]'s ``sqrt(m(m−1))``,
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

from svmbench.problems import SoftMarginPrimal
from svmbench.problems.validation import check_int, check_option, check_real
from svmbench.solvers._accpm_polytope import (
    Center,
    Cuts,
    analytic_center,
    box_barrier,
    box_relevance,
    dikin_bound,
    dual_bound,
    initial_slack,
    lp_bound,
    outer_radius,
    relevance,
)
from svmbench.solvers.base import IterativeSolver, StepOutcome
from svmbench.solvers.registry import register
from svmbench.solvers.time_budget import dense_factor_rate, dense_seconds

#: Constraint-dropping strategies (the course project's three): keep every cut, drop the cuts
#: that provably cannot touch the localization set, keep only the ``keep_factor·p`` most relevant.
DROPPING = ("none", "relevance", "keep")


#: The smallest target of ACCPM's own bounds: below it double precision cannot tell u from l.
TARGET_FLOOR = 1e-15


@dataclass
class _State:
    data: dict[str, Any]
    rho: np.ndarray
    cuts: Cuts
    center: Center
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


def _drop(state: _State, strategy: str, keep: int, every: int) -> int:
    """Constraint dropping at the new center; returns how many cuts were dropped.

    ``relevance``, every ``every`` oracle calls: drop every cut with ``η_i ≥ r``, ``r`` from
    :func:`outer_radius`. The polytope lies in ``{z : ‖z − x‖_H < r}`` and the hyperplane of such
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
    eta = relevance(cuts.A, center.slack, center.chol)
    mask = np.ones(cuts.size, dtype=bool)
    if due:
        eta_all = np.concatenate([eta, box_relevance(center.x, state.rho, center.chol)])
        mask = eta < outer_radius(eta_all, math.sqrt(center.lam2), largest=float(eta.max()))
    if cap and mask.sum() > keep - 1:
        mask = np.zeros_like(mask)
        mask[np.argsort(eta, kind="stable")[: keep - 1]] = True
    dropped = int(cuts.size - mask.sum())
    if dropped:
        cuts.keep(mask)
        center.slack = center.slack[mask]
    return dropped


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
        at every call where more than ``N − 1`` cuts are held. Testing at every call took more
        time than every 10th call for about the same cuts held (docs/measurements.md, "accpm").
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

    # ---- time limits (solvers/time_budget.py) ----------------------------------------------------
    def _setup_seconds(self, problem):
        """The factor of the box barrier's p×p Hessian at the start (p = d + 1 with a bias)."""
        p = problem.n_features + (problem.bias != "none")
        return _newton_seconds(p, 0)

    def _chunk_seconds(self, problem, state: _State):
        """One recentering: ``RECENTER_STEPS`` Newton steps (``AᵀDA`` of the cuts and its p×p
        factor) and a triangular solve of order p; a chunk (an oracle call, ``check_every`` with
        the native rule) takes one at least."""
        return _newton_seconds(state.data["p"], state.cuts.size, RECENTER_STEPS)

    # ---- template hooks --------------------------------------------------------------------------
    def _init_state(self, problem: SoftMarginPrimal, warm_start) -> _State:
        data = _problem_data(problem)
        p = data["p"]
        rho = _localization_box(data)
        x = np.zeros(p)  # the analytic center of the symmetric box
        _, _, hpsi = box_barrier(x, rho)
        chol = scipy.linalg.cho_factor(np.diag(hpsi), lower=True)
        state = _State(
            target=self.tol,
            data=data,
            rho=rho,
            cuts=Cuts.empty(p),
            center=Center(x=x, slack=np.empty(0), chol=chol, m=2 * p),
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
        lower_dikin = dikin_bound(fx, g, center) if center.is_center else -math.inf
        lower_dual = dual_bound(cuts, center.slack, state.rho) if cuts.size else -math.inf
        state.lower = max(state.lower, lower_dikin, lower_dual)
        lower_lp = math.nan
        if self.lp_every and state.calls % self.lp_every == 0:
            lower_lp = lp_bound(cuts, state.rho)
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
        s0 = initial_slack(A, b, x, old.chol)
        out = analytic_center(A, b, state.rho, x, s0, self.center_tol)
        if out is None:
            state.failure = (
                f"centering failed after {state.calls} oracle calls (the polytope is numerically "
                "empty: the bounds cannot be refined further in double precision)"
            )
            return 0, 0
        z, s, chol, steps, lam2 = out
        state.center = Center(x=z, slack=s, chol=chol, m=cuts.size + 2 * z.size, lam2=lam2)
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


#: Newton steps per recentering counted by the time limit's estimate of an oracle call (the
#: first recenterings take about three; later ones fewer).
RECENTER_STEPS = 3


def _newton_seconds(p: int, cuts: int, steps: int = 0) -> tuple[float, str] | None:
    """Estimated seconds of a recentering of ``steps`` Newton steps on p variables and ``cuts``
    cuts (``p³/3`` for each factor, ``2·cuts·p²`` for each ``AᵀDA``, ``p³`` for a triangular
    solve of order p), or of the box's p×p factor alone (``steps=0``); None when negligible."""
    factor = p**3 / 3.0
    flops = steps * (factor + 2.0 * cuts * p * p) + p**3 if steps else factor
    seconds = dense_seconds(flops)
    if not seconds:
        return None
    rate = dense_factor_rate()
    what = (
        f"a recentering of order {p} ({steps} Newton steps)" if steps else f"a factor of order {p}"
    )
    return seconds, f"{what}: {flops:.3g} flops at {rate:.3g} flops/s"


def _bound_gap(upper: float, lower: float) -> float:
    """``(u − l)/max(1, |u|)``, ACCPM's own relative gap."""
    if not math.isfinite(upper) or not math.isfinite(lower):
        return math.inf
    return (upper - lower) / max(1.0, abs(upper))
