"""SMO on the Gram matrix of a small linear problem with a free bias (LIBSVM's C-SVC).

Problem (docs/ARCHITECTURE.md §2, C-form): the hinge dual

.. math::

    \\max_\\alpha \\sum_i \\alpha_i - \\tfrac12 \\alpha^T Q \\alpha, \\qquad
    0 \\le \\alpha_i \\le C_i, \\quad y^T\\alpha = 0, \\qquad Q_{ij} = y_i y_j\\, x_i \\cdot x_j,

of :class:`~problems.SoftMarginPrimal` or :class:`~problems.SoftMarginDual` with a free bias,
the problem LIBSVM solves for ``SVC(kernel="linear")``. The pair updates run on ``K = X Xᵀ``
(:mod:`solvers._jit.linear_smo`: WSS 2 of Fan, Chen & Lin, JMLR 6, 2005; LIBSVM's shrinking),
8n² bytes held (``n ≤ MAX_N``), its rows computed when a pair first asks for them where few are
expected (``ROWS_C_R2``), else at once by BLAS. The point handed to the certificate is
``w = Xᵀ(α∘y)``, LIBSVM's b from the free multipliers, and α.

Stopping (``stop_rule="gap"``): the native rule ``max_{I_up} −y_tG_t − min_{I_low} −y_tG_t <
eps`` from ``eps = 1e-3`` (LIBSVM's), then the O(n) gap estimate from the maintained gradient
(:func:`~solvers._jit.smo_gap.hinge_estimates`, lifted at a large C as SMO's,
:func:`~solvers.margin_lift.lifted_estimate`); the certificate is asked when the estimate meets
tol, else eps is tightened in proportion (as :class:`~solvers.smo.SMO` does), down to
``EPS_FLOOR``; after ``MAX_REFUSALS`` refused points the run ends ``numerical_error``. Where
the estimate is within ``EARLY_FINISH_GAP`` (or a large C weighs the margins' rounding), the
point's free multipliers are first solved from their KKT equations (the barrier's early
finish, :mod:`solvers.barrier.early_finish`): at LIBSVM's eps the active set is usually the
optimum's, and a finished point the problem certifies at tol ends the run. A long run (past
``TRY_WORK`` entries of K) aims first at ``TRY_EPS``, looser than eps, and tries the finish
there: the free set has usually settled long before the rule holds at eps. The finish's first
guess frees the margins within the rule's tolerance of 1, as every free multiplier's is.
``"native"``: the rule at ``eps``. An iteration is one pair update. Separable pairs end in a
few hundred updates at any C; on overlapping classes at a large C the updates grow with C
(LIBSVM's too): auto gives it a probe, then the barrier.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import SoftMarginDual, SoftMarginPrimal
from svmbench.problems.validation import check_int, check_real
from svmbench.solvers._jit import linear_smo as jit
from svmbench.solvers._jit.smo_gap import hinge_estimates
from svmbench.solvers.barrier.early_finish import (
    EARLY_FINISH_GAP,
    RETRY_FACTOR,
    try_early_finish,
)
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.compile_notice import announced
from svmbench.solvers.margin_lift import finish_due, lifted_estimate
from svmbench.solvers.registry import register

#: Largest n accepted: the Gram matrix of 8n² bytes (200 MB) is held whole.
MAX_N = 5000
#: The largest free set the early finish solves (its dense KKT system).
EARLY_MAX_FREE = 500
#: The early finish is tried once the pair updates reach this many per example (or at a large
#: C): before, further updates to tol cost less than the finish's KKT solves.
EARLY_FINISH_UPDATES = 0.5
#: A first, looser native tolerance: once the pair updates have touched ``TRY_WORK`` entries of
#: K (n an update) without meeting eps, they go on to this one only, where the finish is tried
#: before eps (on breast cancer at C = 0.3-3 the free set has settled there, after 400-2500
#: updates where eps = 1e-3 takes 900-3000; docs/measurements.md). ``TRY_WORK`` is about what a
#: try costs: shorter runs reach eps first.
TRY_EPS = 0.02
TRY_WORK = 250_000
#: The rows of K are computed as the pairs first ask for them (a run touches its support's
#: and a few more: 61 of breast cancer's 569 at C = 1) where n > d and ``C·mean‖x‖²`` is at
#: least this; below, most multipliers end at C (digits pairs at C = 0.01: 40-60 % of the
#: rows) and BLAS's whole product costs less than the rows one by one (docs/measurements.md).
ROWS_C_R2 = 1.0
#: ... and where the whole product ``n²d`` is at least this (iris and wine pairs: a few µs).
ROWS_MIN_PRODUCT = 1_000_000
#: The smallest native tolerance tried before the certificate's verdict stands.
EPS_FLOOR = 1e-14
#: Points the certificate may refuse before the run ends short of tol: where the estimate
#: met tol and the certificate does not, the difference is the margins' rounding at a large C,
#: which a smaller eps does not remove (auto's barrier goes on).
MAX_REFUSALS = 1


def _size(problem) -> str | None:
    if problem.n_samples > MAX_N:
        return (
            f"n = {problem.n_samples} examples: the Gram matrix is held whole "
            f"(n <= {MAX_N}); use barrier or smo"
        )
    return None


_VARIANTS = {"bias": ("free",), "loss": ("hinge",), "n_samples": _size}


@dataclass
class _State:
    XT: np.ndarray  # Xᵀ dense, for the rows of K not computed yet (empty for CSR)
    K: np.ndarray  # the Gram matrix's rows marked in ``have``
    have: np.ndarray
    kd: np.ndarray  # the diagonal of K
    y: np.ndarray
    C: np.ndarray
    alpha: np.ndarray
    F: np.ndarray  # −y ⊙ G, G = Qα − 1 the gradient
    eps: float
    updates: int = 0
    asked: bool = False  # the last chunk handed its point to the certificate
    estimate: float = np.inf
    bias: float | None = None
    #: ``(variables, certificate, report)`` of the exact finish that ended the run
    finished: tuple | None = None
    tried_finish: float = np.inf  # the eps of the last early finish tried
    refusals: int = 0  # the points the certificate refused
    #: the pair updates after which the rule aims at ``TRY_EPS`` first (None: done, or never)
    loose_from: int | None = None
    tried_estimate: float = np.inf  # the estimate at the last finish that did not certify


@register
class LinearSMO(IterativeSolver):
    """SMO with LIBSVM's working pairs on ``K = X Xᵀ``, for small linear problems with a free
    bias (hinge loss), dense or CSR ``X``, per-example ``C_i``.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
    eps : float, default=1e-3
        The native rule's tolerance (LIBSVM's ``-e``); with ``"gap"`` the first of a
        decreasing sequence.
    shrinking : bool, default=True
        LIBSVM's shrinking (:func:`~solvers._jit.linear_smo.shrinking_updates`) after the
        first n pair updates (before, its scans through the active set's indices cost more
        than they save): the multipliers at a bound that cannot enter a violating pair leave
        the updates' scans until the rule holds near ``eps``.
    chunk : int, default=None
        Pair updates per chunk (None: ``10·n``, at least 1000).
    check_every : int, default=10⁹
        Chunks between gap checks besides those the estimate asks for (as SMO's: the
        certificate is drawn where the rule and the estimate propose a point).
    max_iter : int or None, default=None
        Cap on pair updates (default 10⁷).
    time_limit, trace
        As every iterative method.
    """

    name = "linear_smo"
    iteration_unit = "pair updates"
    supported: ClassVar = {SoftMarginPrimal: _VARIANTS, SoftMarginDual: _VARIANTS}
    default_max_iter = 10_000_000
    warm_start_uses = ("alpha",)

    def __init__(
        self,
        *,
        eps: float = 1e-3,
        shrinking: bool = True,
        chunk: int | None = None,
        check_every: int = 1_000_000_000,
        **common,
    ):
        super().__init__(check_every=check_every, **common)
        self.eps = check_real("eps", eps, low=0.0)
        if not isinstance(shrinking, bool | np.bool_):
            raise TypeError(f"shrinking must be a bool, got {type(shrinking).__name__}")
        self.shrinking = bool(shrinking)
        self.chunk = None if chunk is None else check_int("chunk", chunk, low=1)

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """The Gram matrix, ``8n²`` bytes, and a few vectors of n."""
        n = problem.n_samples
        return float(8 * n * n + 64 * n)

    @once_per_process
    @announced("linear_smo", "its pair updates on a Gram matrix")
    def warm_up(self) -> float:
        t0 = time.perf_counter()
        X = np.array([[1.0, 0.0], [0.0, 1.0]])
        y, C = np.array([1.0, -1.0]), np.ones(2)
        alpha, F = np.zeros(2), y.copy()
        for updates in (jit.pair_updates, jit.shrinking_updates):
            have = np.zeros(2, dtype=np.bool_)
            updates(X, np.empty((2, 2)), have, np.ones(2), y, C, alpha, F, 1e-3, 10)
            alpha, F = np.zeros(2), y.copy()
        jit.free_bias(y, F, alpha, C)
        hinge_estimates(alpha, y, -y * F, C, 0.0)
        return time.perf_counter() - t0

    def _init_state(self, problem, warm_start) -> _State:
        X = problem.X
        n = X.shape[0]
        y = np.ascontiguousarray(problem.y, dtype=np.float64)
        C = np.ascontiguousarray(problem.upper_bounds, dtype=np.float64)
        K, have, rows, kd = _gram(X, C)
        if warm_start is None:
            alpha = np.zeros(n)
            F = y.copy()
        else:
            alpha = np.ascontiguousarray(warm_start.dual_point(problem), dtype=np.float64)
            _support_rows(rows, K, have, np.flatnonzero(alpha > 0.0))
            F = y - np.asarray(X @ (X.T @ (alpha * y))).ravel()
        loose = self.stop_rule == "gap" and TRY_EPS > self.eps
        loose_from = -(-TRY_WORK // y.size) if loose else None
        return _State(
            XT=rows, K=K, have=have, kd=kd, y=y, C=C, alpha=alpha, F=F, eps=self.eps,
            loose_from=loose_from,
        )  # fmt: skip

    def _step(self, problem, st: _State) -> StepOutcome:
        if st.asked:  # the certificate refused the point the estimate proposed: aim lower
            st.asked = False
            st.refusals += 1
            if st.eps <= EPS_FLOOR or st.refusals >= MAX_REFUSALS:
                return StepOutcome(0)  # no progress left: the run ends numerical_error
            st.eps = max(EPS_FLOOR, 0.1 * st.eps)
        chunk = self.chunk or max(1000, 10 * st.y.size)
        total = 0
        plain = st.y.size
        while True:
            budget = max(1, min(chunk - total, self.max_iter - st.updates))
            updates = jit.pair_updates
            if self.shrinking and st.updates >= plain:
                updates = jit.shrinking_updates
            elif self.shrinking:  # the first n without: most short runs end there
                budget = min(budget, plain - st.updates)
            eps = st.eps
            if st.loose_from is not None:  # a long run: the looser rule first
                if st.updates >= st.loose_from:
                    eps = TRY_EPS
                else:
                    budget = min(budget, st.loose_from - st.updates)
            done, converged = updates(
                st.XT, st.K, st.have, st.kd, st.y, st.C, st.alpha, st.F, eps, budget
            )
            st.bias = None
            total += done
            st.updates += done
            if converged and eps > st.eps:  # the looser rule holds: the finish, then eps
                st.loose_from = None
                if self._finished_loose(problem, st):
                    return StepOutcome(total, converged=True, certificate=st.finished[1])
                converged = False
            if not converged and total < chunk and st.updates < self.max_iter:
                continue  # a share of the updates ended (the plain ones, the looser rule's)
            if self.stop_rule == "native" or not converged:
                return StepOutcome(total, converged=bool(converged))
            st.estimate = self._gap_estimate(problem, st)
            if st.estimate <= self.tol:
                st.asked = True
                return StepOutcome(total, converged=True)
            due = finish_due(problem, self.tol, st.eps, st.alpha)
            if self._finished_early(problem, st, due):
                return StepOutcome(total, converged=True, certificate=st.finished[1])
            if st.eps <= EPS_FLOOR or due:
                st.asked = True
                return StepOutcome(total, converged=True)
            # the gap follows eps nearly in proportion: half the share that would meet tol
            st.eps = max(EPS_FLOOR, st.eps * min(0.5, max(0.01, 0.5 * self.tol / st.estimate)))
            if total >= chunk or st.updates >= self.max_iter:
                return StepOutcome(total)

    def _finished_loose(self, problem, st: _State) -> bool:
        """Whether the exact finish certifies at tol the point where the rule holds at
        ``TRY_EPS`` (tried where its estimate is within ``EARLY_FINISH_GAP`` or a large C makes
        the estimate C times its margins' rounding; from the margins' guess only)."""
        st.estimate = self._gap_estimate(problem, st)
        if st.estimate <= self.tol:
            return False  # eps is near: the certificate is asked there
        if st.estimate > EARLY_FINISH_GAP and not finish_due(problem, self.tol, st.eps, st.alpha):
            return False
        return self._try_finish(problem, st, TRY_EPS, starts=("margins",))

    def _finished_early(self, problem, st: _State, due: bool) -> bool:
        """Whether the exact finish of the point (its free multipliers from their KKT
        equations, :func:`~solvers.barrier.early_finish.try_early_finish`, margins lifted at a
        large C) certifies at tol: tried once per eps whose estimate is within
        ``EARLY_FINISH_GAP`` and has fallen by ``RETRY_FACTOR`` since the last finish tried, or
        where a large C makes the estimate C times its margins' rounding (``due``), before that
        point is handed to the certificate."""
        if st.eps >= st.tried_finish:
            return False
        if not due and (
            st.estimate > min(EARLY_FINISH_GAP, st.tried_estimate / RETRY_FACTOR)
            or st.updates < EARLY_FINISH_UPDATES * st.y.size
        ):
            return False
        st.tried_finish = st.eps
        return self._try_finish(problem, st, st.eps)

    def _try_finish(self, problem, st: _State, eps: float, starts=("margins", "alpha")) -> bool:
        """:func:`~solvers.barrier.early_finish.try_early_finish` of a point where the native
        rule holds at ``eps``, its first guess of the free set the margins within eps of 1
        (every free multiplier's margin is: ``m_t = 1 + y_t(b − F_t)``, with ``F_t`` and b
        between ``min_{I_low} F`` and ``max_{I_up} F``, less than eps apart)."""
        st.tried_estimate = st.estimate
        limit = min(problem.n_features + 2, EARLY_MAX_FREE)
        variables = self._variables(problem, st)
        m = 1.0 + st.y * (variables["b"] - st.F)
        band = min(eps, EARLY_FINISH_GAP)
        st.finished = try_early_finish(
            problem, variables, self.tol, limit, st.estimate, m=m, band=band, starts=starts
        )
        return st.finished is not None

    def _bias(self, st: _State) -> float:
        if st.bias is None:
            st.bias = float(jit.free_bias(st.y, st.F, st.alpha, st.C))
        return st.bias

    def _gap_estimate(self, problem, st: _State) -> float:
        """Relative gap of ``(α, b)`` from the maintained gradient, O(n)."""
        b, G = self._bias(st), -st.y * st.F
        P, gap = hinge_estimates(st.alpha, st.y, G, st.C, b)
        gap = lifted_estimate(problem, self.tol, P, gap, st.alpha, G, st.y, b, st.C)
        return gap / max(1.0, abs(P))

    def _trace_estimate(self, problem, st: _State) -> tuple[float, float]:
        P, gap = hinge_estimates(st.alpha, st.y, -st.y * st.F, st.C, self._bias(st))
        return P, P - gap

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        if st.finished is not None:
            return dict(st.finished[0])
        X, coef = problem.X, st.alpha * st.y
        w = X.T @ coef
        w = np.asarray(w, dtype=np.float64).ravel()
        return {"w": w, "b": self._bias(st), "alpha": st.alpha.copy()}

    def _info(self, st: _State) -> dict[str, Any]:
        info = {"eps_final": st.eps, "gap_estimate": st.estimate}
        if st.finished is not None:  # the finish ran as the stopping test
            info["exact_finish"] = st.finished[2]
        return info


def _gram(X, C):
    """``(K, have, XT, kd)``: the Gram matrix's rows computed when a pair first asks
    (:func:`~solvers._jit.linear_smo._row`, from ``XT = Xᵀ``), none yet, where they are
    expected to be a small share of n (n > d and ``mean C_i·mean‖x‖² ≥ ROWS_C_R2``) and the
    whole product is not too small to matter (``n²d ≥ ROWS_MIN_PRODUCT``); else the whole of it
    at once by BLAS (``XT`` empty), as for a CSR X."""
    n, d = X.shape
    few = not sparse.issparse(X) and d < n and n * n * d >= ROWS_MIN_PRODUCT
    if few and float(C.sum()) * float(np.vdot(X, X)) >= ROWS_C_R2 * n * n:
        XT = np.ascontiguousarray(X.T, dtype=np.float64)
        kd = (XT * XT).sum(axis=0)  # summed as the rows are
        return np.empty((n, n)), np.zeros(n, dtype=np.bool_), XT, kd
    K = X @ X.T
    K = np.ascontiguousarray(K.toarray() if sparse.issparse(K) else K, dtype=np.float64)
    return K, np.ones(n, dtype=np.bool_), np.empty((0, n)), np.ascontiguousarray(K.diagonal())


def _support_rows(XT, K, have, support) -> None:
    """The rows of K of a warm start's support, summed as :func:`~solvers._jit.linear_smo._row`
    sums them (the loops' unshrinking reads them, as the rows of multipliers a pair moved)."""
    support = support[~have[support]]
    if support.size:
        block = np.zeros((support.size, XT.shape[1]))
        for k in range(XT.shape[0]):
            block += XT[k][None, :] * XT[k, support][:, None]
        K[support] = block
        have[support] = True
