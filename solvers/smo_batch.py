"""Batched working-set SMO for the kernel SVM dual (Joachims 1999; Wen et al., ThunderSVM, 2018).

Problem (docs/ARCHITECTURE.md §2), as :mod:`solvers.smo` writes it, the minimization of ``f = −D``::

    min_α  ½ αᵀQ̃α − Σ_t α_t   s.t.  0 ≤ α_t ≤ C_t   (+ yᵀα = 0 for a free bias)

    Q̃_tk = y_t y_k (K(x_t, x_k) + s²) + δ_tk / (2 C_t)

``C_t = problem.upper_bounds`` (``∞`` for the squared hinge, which adds the diagonal term), ``s =
bias_scale`` for a regularized bias and 0 otherwise; ``G = Q̃α − 1`` is kept in float64.

Each outer iteration works on a set B of ``q`` variables:

- B keeps the ``q/2`` variables that entered it last and takes in the most violating others:
  with a free bias, alternately the largest ``−y_t G_t`` over ``I_up`` and the smallest over
  ``I_low`` (the two sides of Fan, Chen & Lin's maximal violating pair, JMLR 6, 2005), each only
  while it still violates against the other side's extreme; without the equality, the largest
  projected gradients ``|PG_t|`` (:mod:`solvers.smo_batch_selection`);
- the rows ``Q̃_B,:`` the row cache (LRU, ``cache_mb``) lacks are computed in one batched call:
  for dense rows, blocks of rows each one BLAS product ``X_B Xᵀ`` (RBF through ``‖x‖² + ‖x'‖²
  − 2x·x'``), then the kernel, the blocks shared among the Numba threads
  (:mod:`solvers._jit.smo_batch`);
- SMO runs on the q×q block (WSS2 pairs, or greedy single variables without the equality)
  until its own violation is below ``inner_tol`` times the outer one (or ``inner_steps·q``
  updates);
- ``G += Q̃_:B Δα_B`` in one pass over the cached rows, threads over blocks of G.

Shrinking (an option, off by default: slower as measured, see ``shrinking``) as LIBSVM's
(Chang & Lin, ACM TIST 2, 2011, §5.1), after every outer iteration: the
variables at a bound that the current violation cannot move leave the active set, and rows,
selection and G run over the active ones only. G of the shrunk variables is rebuilt as
``G_ref + Q̃(α − α_ref)`` from the last point where G was complete (a kernel product over the
coordinates that moved since, instead of LIBSVM's Ḡ, which needs a whole row whenever a
variable enters or leaves its upper bound), once when the violation first falls below
``10·eps`` in a phase and before converging; the cached rows, filled on the active indices only,
are then dropped. RBF rows are float32 when the whole matrix does not fit the cache in float64,
as in :func:`solvers.smo.cache_dtype`.

Stopping, as :mod:`solvers.smo`: the native rule is the maximal violating pair ``m(α) − M(α) <
eps`` (``max |PG_t| < eps`` without the equality); ``stop_rule="gap"`` (default) asks the
problem's certificate only when the O(n) gap estimate from G,

    gap ≈ Σ_t α_t r_t + C_t max(0, −r_t),   r_t = G_t + y_t b

(hinge; the squared hinge's as in :mod:`solvers.smo`), is ``≤ tol·max(1, |P|)`` at a point where
the native rule holds, and lowers ``eps`` otherwise. A refused certificate with float32 rows
first recomputes G in float64 from α. The reported gap is always the problem's.

ε-SVR and one-class: the general form on these parts (:mod:`solvers.smo_batch_general`).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import ClassVar

import numba
import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual, OneClassDual, SVRDual
from svmbench.problems.general_dual import GeneralDualProblem
from svmbench.problems.validation import check_int, check_option, check_real
from svmbench.solvers._jit import kernel_columns as kc
from svmbench.solvers._jit import smo_batch as jit
from svmbench.solvers.base import IterativeSolver, StepOutcome
from svmbench.solvers.compile_notice import announced
from svmbench.solvers.margin_lift import finish_due, lifted_estimate
from svmbench.solvers.registry import register
from svmbench.solvers.smo import EPS_FLOOR
from svmbench.solvers.smo_arrays import (
    STORAGES,
    cache_dtype,
    gradients,
    problem_arrays,
    squared_hinge_estimates,
    use_dense_rows,
)
from svmbench.solvers.smo_batch_general import (
    GeneralBatchState,
    general_batch_gap,
    general_batch_info,
    general_batch_init,
    general_batch_memory,
    general_batch_trace,
    general_batch_variables,
    general_outer_updates,
    general_refresh,
)
from svmbench.solvers.smo_batch_selection import select_working_set
from svmbench.solvers.smo_batch_warm import (
    VARIANT_DTYPES,
    batch_warm_up_for,
    batch_warm_up_variant,
)


@dataclass
class State:
    """Arrays of the jitted parts and the driver's bookkeeping."""

    pairs: bool
    batched: bool  # dense rows and a computed kernel: fill_rows_dense; else one column a time
    X: np.ndarray | tuple  # dense rows, the CSR tuple or the Gram matrix (solvers.smo._rows)
    XT: np.ndarray | tuple
    sqn: np.ndarray
    kint: tuple  # (kernel code, degree, Numba threads or None: solvers.smo_arrays)
    kflt: np.ndarray  # (gamma, coef0, s²)
    y: np.ndarray
    C: np.ndarray  # upper bounds (∞ for the squared hinge)
    Cw: np.ndarray  # the problem's C_t (loss weights)
    QD: np.ndarray  # Q̃_tt
    dplus: np.ndarray
    alpha: np.ndarray
    G: np.ndarray  # ∇f = Q̃α − 1
    q: int
    cache: np.ndarray  # rows Q̃_i,: (float32 or float64)
    slot_col: np.ndarray
    col_slot: np.ndarray
    stamp: np.ndarray
    ws: np.ndarray  # the working set: ws[:m], kept members first
    m: int
    slots: np.ndarray
    missing: np.ndarray
    delta: np.ndarray
    in_ws: np.ndarray
    work: np.ndarray  # the q×q block and six vectors of q
    tmp: np.ndarray
    score_a: np.ndarray  # the selection's scores (I_up, or |projected gradient|), over act
    score_b: np.ndarray  # I_low's
    eps: float
    act: np.ndarray  # the active indices, ascending (all of them without shrinking)
    is_active: np.ndarray  # bool mask of act
    XT_a: np.ndarray | tuple  # the active rows transposed (d × |act|), for the batched rows
    sqn_a: np.ndarray
    y_a: np.ndarray
    alpha_ref: np.ndarray  # α where G was last complete: shrunk entries of G date from there
    G_ref: np.ndarray
    unshrunk: bool = False  # the active set grew back at 10·eps in this phase
    shrinks: int = 0
    reconstructions: int = 0
    clock: int = 0
    iterations: int = 0
    outer: int = 0
    rows_computed: int = 0
    row_hits: int = 0
    asked: bool = False
    converged: bool = False
    estimate: float = math.nan
    violation: float = math.inf
    certifications: int = 0
    refreshes: int = 0


_WARM = False


@register
class SMOBatch(IterativeSolver):
    """SMO on working sets of ``q`` variables with batched kernel rows, for
    :class:`~problems.KernelDual` (every kernel, bias and loss that ``smo`` accepts), and for
    ε-SVR and one-class on their general form (the ν forms stay on ``smo``).

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap ``(P − D)/max(1, |P|)``
        (``stop_rule="gap"``).
    q : int, default=512
        Size of the working set (at most n); half of it is replaced at each outer iteration.
        256 to 1024 measured equal within noise (docs/measurements.md, "smo_batch").
    inner_tol : float, default=0.1
        SMO inside the working set stops once its violation is below ``inner_tol`` times the
        outer violation (and never below ``eps``); in (0, 1). 0.01 to 0.3 measured equal within
        noise, the rows dominating (docs/measurements.md, "smo_batch").
    inner_steps : int, default=10
        At most ``inner_steps · q`` updates inside one working set.
    eps : float, default=1e-3
        Native tolerance, as ``smo``'s (maximal violating pair, or largest ``|PG_t|``).
    cache_mb : float, default=200
        Memory of the row cache in megabytes; it always holds at least the ``q`` rows of the
        working set (0: those only; :meth:`memory_estimate`). RBF rows are float32 unless all n
        rows fit in float64 (:func:`solvers.smo.cache_dtype`).
    shrinking : bool, default=False
        LIBSVM's shrinking after every outer iteration: rows are computed, G updated and the
        working set chosen on the active variables only; G of the shrunk ones is rebuilt from
        the coordinates that moved (once at ``10·eps`` in a phase, and before converging).
        Off by default: it computed as many rows or more (the rebuilt G drops the cache) and
        took over twice the time, half of it in the rebuilds (docs/measurements.md, "smo_batch").
    chunk : int, default=10000
        Updates per chunk (the template's trace points, callbacks and limits come between
        outer iterations, once a chunk's updates are done).
    storage : {"auto", "dense", "csr"}, default="auto"
        Rows the kernel runs over, as ``smo``'s; only dense rows take the batched path (CSR rows
        and Gram matrices fill one whole column at a time).
    stop_rule : {"gap", "native"}, default="gap"
    max_iter : int, default=10_000_000
        Updates inside the working sets (pair updates, or single-variable ones).
    time_limit : float or None, default=None
    """

    name = "smo_batch"
    iteration_unit = "pair updates"
    supported: ClassVar = {
        KernelDual: {},
        SVRDual: {},  # one equality or none: the ν forms' two stay on smo
        OneClassDual: {},
    }
    default_max_iter = 10_000_000
    warm_start_uses = ("alpha",)

    def __init__(
        self,
        *,
        q: int = 512,
        inner_tol: float = 0.1,
        inner_steps: int = 10,
        eps: float = 1e-3,
        cache_mb: float = 200.0,
        shrinking: bool = False,
        chunk: int = 10_000,
        storage: str = "auto",
        check_every: int = 1_000_000_000,
        **common,
    ):
        super().__init__(check_every=check_every, **common)
        self.q = check_int("q", q, low=2)
        self.inner_tol = check_real("inner_tol", inner_tol, low=0.0, high=1.0)  # open
        self.inner_steps = check_int("inner_steps", inner_steps, low=1)
        self.eps = check_real("eps", eps, low=0.0)
        self.cache_mb = check_real("cache_mb", cache_mb, low=0.0, closed="left")
        if not isinstance(shrinking, bool | np.bool_):
            raise TypeError(f"shrinking must be a bool, got {type(shrinking).__name__}")
        self.shrinking = bool(shrinking)
        self.chunk = check_int("chunk", chunk, low=1)
        self.storage = check_option("storage", storage, STORAGES)

    @staticmethod
    def _slots(n: int, q: int, cache_mb: float, itemsize: int) -> int:
        return int(min(n, max(q, float(cache_mb) * 2**20 // (itemsize * n))))

    @classmethod
    def memory_estimate(
        cls,
        problem: KernelDual,
        *,
        q: int = 512,
        cache_mb: float = 200.0,
        storage: str = "auto",
        **_,
    ) -> float:
        """The row cache (``cache_mb``, at least the q rows of the working set, at most n), the
        q×q block, the rows the kernel runs over (dense X and Xᵀ, or CSR X and Xᵀ; none for a
        Gram matrix), 18 vectors of n and the certificate's kernel blocks."""
        from svmbench.problems.kernels import BLOCK_ENTRIES

        if isinstance(problem, GeneralDualProblem):
            return general_batch_memory(problem, q, cache_mb)
        n, d, X = problem.n_samples, problem.n_features, problem.X
        q = min(int(q), n)
        itemsize = np.dtype(cache_dtype(problem, cache_mb)).itemsize
        rows_cached = cls._slots(n, q, cache_mb, itemsize)
        if problem.kernel == "precomputed":
            rows = 0
        elif storage != "csr" and (not sparse.issparse(X) or use_dense_rows(X, storage)):
            rows = 2 * 8 * n * d
        else:
            nnz = X.nnz if sparse.issparse(X) else np.count_nonzero(X)
            rows = 32 * nnz + 16 * (n + d)
        block = 8 * (q * q + 6 * q)
        return float(rows_cached * itemsize * n + block + rows + 18 * 8 * n + 3 * 8 * BLOCK_ENTRIES)

    # ---- JIT -------------------------------------------------------------------------------------
    @announced("smo_batch", "dense, CSR and Gram rows, float32 and float64")
    def warm_up(self) -> float:
        """Compile the jitted parts of every variant on a 6-point problem (pairs and single
        variables, float32 and float64 rows, dense, CSR and Gram rows; the serial loops, as
        ``smo``), once per process; untimed."""
        global _WARM
        if _WARM:
            return 0.0
        start = time.perf_counter()
        for variant in itertools.product(("dense", "csr", "gram"), VARIANT_DTYPES, (True, False)):
            batch_warm_up_variant(self, (*variant, False, False), notice=False)
        _WARM = True
        return time.perf_counter() - start

    def warm_up_for(self, problem) -> float:
        """Only the variant ``problem`` runs (:func:`solvers.smo_batch_warm.batch_warm_up_for`:
        its rows, its cache's dtype, pair or single updates, the certificate's fused product
        if it may take it); untimed, once per process and variant."""
        return batch_warm_up_for(self, problem)

    # ---- state -----------------------------------------------------------------------------------
    def _make_state(self, problem: KernelDual, alpha0, *, dtype, storage, q, slots) -> State:
        n = problem.n_samples
        X, XT, sqn, kint, kflt, y, Cw, C, dplus, QD = problem_arrays(problem, storage)
        code = int(kint[0])
        if alpha0 is None:
            alpha, G = np.zeros(n), -np.ones(n)
        else:
            alpha = np.array(alpha0, dtype=np.float64)
            G, _ = gradients(X, sqn, kint, kflt, y, C, dplus, alpha)
        q = min(q, n)
        batched = isinstance(X, np.ndarray) and code != kc.KERNEL_CODES["precomputed"]
        G = np.ascontiguousarray(G)
        return State(
            pairs=problem.bias == "free",
            batched=batched,
            X=X,
            XT=XT,
            sqn=sqn,
            kint=kint,
            kflt=kflt,
            y=y,
            C=C,
            Cw=Cw,
            QD=QD,
            dplus=dplus,
            alpha=alpha,
            G=G,
            q=q,
            cache=np.empty((slots, n), dtype=dtype),
            slot_col=np.full(slots, -1, dtype=np.int64),
            col_slot=np.full(n, -1, dtype=np.int64),
            stamp=np.zeros(slots, dtype=np.int64),
            ws=np.empty(q, dtype=np.int64),
            m=0,
            slots=np.empty(q, dtype=np.int64),
            missing=np.empty(q, dtype=np.int64),
            delta=np.zeros(q),
            in_ws=np.zeros(n, dtype=np.uint8),
            work=np.empty(q * q + 6 * q),
            tmp=np.empty(n),
            score_a=np.empty(n),
            score_b=np.empty(n),
            eps=max(self.eps, EPS_FLOOR),
            act=np.arange(n, dtype=np.int64),
            is_active=np.ones(n, dtype=bool),
            XT_a=XT,
            sqn_a=sqn,
            y_a=y,
            alpha_ref=alpha.copy(),
            G_ref=G.copy(),
        )

    def _init_state(self, problem: KernelDual, warm_start) -> State | GeneralBatchState:
        if isinstance(problem, GeneralDualProblem):
            return general_batch_init(self, problem, warm_start)
        alpha0 = None if warm_start is None else warm_start.dual_point(problem)
        dtype = cache_dtype(problem, self.cache_mb)
        n, q = problem.n_samples, min(self.q, problem.n_samples)
        slots = self._slots(n, q, self.cache_mb, np.dtype(dtype).itemsize)
        return self._make_state(
            problem, alpha0, dtype=dtype, storage=self.storage, q=q, slots=slots
        )

    # ---- one outer iteration ---------------------------------------------------------------------
    def _outer(self, s: State, budget: int) -> int:
        """One outer iteration with at most ``budget`` updates; returns the updates done (0 when
        the native rule holds, ``s.converged``)."""
        n = s.alpha.shape[0]
        while True:
            violation = select_working_set(s)
            if s.act.shape[0] == n:
                break
            if violation < s.eps or s.m == 0:
                self._unshrink(s)  # check the shrunk variables too before converging
            elif not s.unshrunk and violation <= 10.0 * s.eps:
                s.unshrunk = True  # once a phase, as LIBSVM: the shrunk set may be stale
                self._unshrink(s)
            else:
                break
        s.violation = violation
        if violation < s.eps or s.m == 0:
            s.converged = True
            return 0
        s.converged = False
        if isinstance(s, GeneralBatchState):
            s.outer += 1
            return general_outer_updates(self, s, violation, budget)
        m = s.m
        n_miss, s.clock = jit.assign_slots(
            s.ws, m, s.col_slot, s.slot_col, s.stamp, s.clock, s.slots, s.missing
        )
        s.rows_computed += n_miss
        s.row_hits += m - n_miss
        code, degree = int(s.kint[0]), int(s.kint[1])
        gamma, coef0, s2 = float(s.kflt[0]), float(s.kflt[1]), float(s.kflt[2])
        fill_rows_dense, update_gradient = jit.row_passes(s.kint[2])
        if n_miss:
            if s.batched:
                fill_rows_dense(
                    s.X, s.XT_a, s.act, s.sqn_a, s.y_a, s.sqn, s.y, s.QD, s.ws, s.slots,
                    s.missing, n_miss, s.cache, code, gamma, coef0, degree, s2,
                )  # fmt: skip
            else:
                jit.fill_rows_columns(
                    s.XT, s.sqn, s.y, s.QD, s.ws, s.slots, s.missing, n_miss, s.cache, s.tmp,
                    code, gamma, coef0, degree, s2, s.kint[2],
                )  # fmt: skip
        target = max(self.inner_tol * violation, s.eps)
        steps = min(budget, self.inner_steps * m)
        run = jit.inner_pairs if s.pairs else jit.inner_single
        done = run(
            s.ws, jit.NO_ROWMAP, m, s.slots, s.cache, s.y, s.C, s.QD, s.alpha, s.delta, s.G, target,
            steps, s.work,
        )  # fmt: skip
        update_gradient(s.G, s.cache, s.slots, s.delta, m, s.act)
        s.outer += 1
        if self.shrinking:
            self.shrink_active(s)
        return done

    # ---- shrinking -------------------------------------------------------------------------------
    def shrink_active(self, s: State) -> None:
        """Drop from the active set the variables at a bound whose gradient pushes them into it
        harder than the current maximal violation (Chang & Lin 2011, §5.1); free ones stay."""
        act = s.act
        y, a, C, G = s.y_a, s.alpha[act], s.C[act], s.G[act]
        if s.pairs:
            v = -y * G
            pos = y > 0
            up = np.where(pos, a < C, a > 0)
            low = np.where(pos, a > 0, a < C)
            m = v[up].max() if up.any() else -np.inf  # m(α)
            M = v[low].min() if low.any() else np.inf  # M(α)
            drop = (up & ~low & (v < M)) | (low & ~up & (v > m)) | (~up & ~low)
        else:
            pg = np.where(a <= 0.0, np.minimum(G, 0.0), G)
            pg = np.where(a >= C, np.maximum(pg, 0.0), pg)
            m = np.abs(pg).max() if pg.size else 0.0
            drop = (C <= 0.0) | ((a <= 0.0) & (G > m)) | ((a >= C) & (G < -m))
        if not drop.any():
            return
        s.is_active[act[drop]] = False
        self._set_active(s, np.ascontiguousarray(act[~drop]))
        s.shrinks += 1

    def _set_active(self, s: State, act: np.ndarray) -> None:
        s.act = act
        full = act.shape[0] == s.y.shape[0]
        s.y_a = s.y if full else np.ascontiguousarray(s.y[act])
        s.sqn_a = s.sqn if full else np.ascontiguousarray(s.sqn[act])
        if s.batched:
            s.XT_a = s.XT if full else np.ascontiguousarray(s.XT[:, act])

    def _unshrink(self, s: State) -> None:
        """G on the shrunk variables from their values at the last complete G (``G_ref +
        Q̃(α − α_ref)``, a kernel product over the coordinates that moved), then every variable
        active again; the cached rows, filled on the active indices only, are dropped."""
        G, _ = gradients(
            s.X, s.sqn, s.kint, s.kflt, s.y, s.C, s.dplus, s.alpha, (s.alpha_ref, s.G_ref)
        )
        s.G[:] = G
        self._complete(s)
        s.is_active[:] = True
        self._set_active(s, np.arange(s.y.shape[0], dtype=np.int64))
        if s.batched:
            s.slot_col[:] = -1
            s.col_slot[:] = -1
        s.reconstructions += 1

    @staticmethod
    def _complete(s: State) -> None:
        """G is complete and exact at this α: the reference of later reconstructions."""
        s.alpha_ref = s.alpha.copy()
        s.G_ref = s.G.copy()

    # ---- one chunk -------------------------------------------------------------------------------
    def _step(self, problem: KernelDual, state: State) -> StepOutcome:
        s = state
        if s.asked:
            # the certificate refused the point the estimate proposed: aim lower
            s.asked = False
            if s.eps <= EPS_FLOOR:
                return StepOutcome(0, converged=True)
            drifted = False
            if s.cache.dtype != np.float64:
                self._refresh_gradient(s)
                drifted = self._gap_estimate(problem, s) > self.tol
            if not drifted:
                s.eps = max(EPS_FLOOR, 0.1 * s.eps)
            s.unshrunk = False
        total = 0
        while True:
            budget = min(self.chunk - total, max(1, self.max_iter - s.iterations))
            done = self._outer(s, budget)
            total += done
            s.iterations += done
            if not s.converged:
                if done == 0:  # no update although the rule fails: the template ends the run
                    return StepOutcome(total)
                if total >= self.chunk or s.iterations >= self.max_iter:
                    return StepOutcome(total)
                continue
            if self.stop_rule == "native":
                return StepOutcome(total, converged=True)
            s.estimate = self._gap_estimate(problem, s)
            due = finish_due(problem, self.tol, s.eps, s.alpha)  # at a large C: finished early
            if s.estimate <= self.tol or s.eps <= EPS_FLOOR or due:
                s.asked = True
                s.certifications += 1
                return StepOutcome(total, converged=True)
            # the gap has followed eps nearly in proportion (solvers.smo._tighten)
            factor = min(0.5, max(0.01, 0.5 * self.tol / s.estimate))
            s.eps = max(EPS_FLOOR, s.eps * factor)
            s.unshrunk = False
            if total >= self.chunk or s.iterations >= self.max_iter:
                return StepOutcome(total)

    def _refresh_gradient(self, s: State) -> None:
        """G in float64 from α (float32 rows make the maintained G drift by rounding)."""
        if isinstance(s, GeneralBatchState):
            return general_refresh(s)
        G, _ = gradients(s.X, s.sqn, s.kint, s.kflt, s.y, s.C, s.dplus, s.alpha)
        s.G[:] = G
        self._complete(s)
        s.refreshes += 1

    # ---- the bias and the O(n) estimates ---------------------------------------------------------
    def _bias(self, problem: KernelDual, s: State) -> float:
        if problem.bias == "none":
            return 0.0
        if problem.bias == "regularized":
            return float(s.kflt[2] * (s.alpha @ s.y))
        a, y, G, C = s.alpha, s.y, s.G, s.C
        v = -y * G  # −y_t G_t: equals b at a free support vector
        free = (a > 0) & (a < C)
        if free.any():
            return float(v[free].mean())
        pos = y > 0
        up = np.where(pos, a < C, a > 0)
        low = np.where(pos, a > 0, a < C)
        lo = v[up].max() if up.any() else -np.inf
        hi = v[low].min() if low.any() else np.inf
        if np.isfinite(lo) and np.isfinite(hi):
            return float(0.5 * (lo + hi))
        return float(lo) if np.isfinite(lo) else float(hi) if np.isfinite(hi) else 0.0

    def _estimates(self, problem: KernelDual, s: State) -> tuple[float, float]:
        """``(P, P − D)`` of ``(α, b)`` from G, O(n) (the formulas of the module docstring)."""
        a, y, G, Cw = s.alpha, s.y, s.G, s.Cw
        b = self._bias(problem, s) if problem.bias == "free" else 0.0
        r = G + y * b
        if problem.loss != "hinge":
            return squared_hinge_estimates(a, r, G, Cw)
        gap = float(a @ r + Cw @ np.maximum(0.0, -r))
        P = 0.5 * float(a @ (G + 1.0)) + float(Cw @ np.maximum(0.0, -r))
        return P, gap

    def _gap_estimate(self, problem: KernelDual, s: State) -> float:
        if isinstance(s, GeneralBatchState):
            return general_batch_gap(s)
        P, gap = self._estimates(problem, s)
        b = self._bias(problem, s) if problem.bias == "free" else 0.0
        gap = lifted_estimate(problem, self.tol, P, gap, s.alpha, s.G, s.y, b, s.Cw)
        return gap / max(1.0, abs(P))

    def _trace_estimate(self, problem: KernelDual, state: State) -> tuple[float, float]:
        """Trace points between certificates carry the O(n) estimate (``certified=False``)."""
        if isinstance(state, GeneralBatchState):
            return general_batch_trace(problem, state)
        P, gap = self._estimates(problem, state)
        return P, P - gap

    def _variables(self, problem: KernelDual, state: State) -> dict:
        if isinstance(state, GeneralBatchState):
            return general_batch_variables(problem, state)
        return {"alpha": state.alpha.copy(), "b": self._bias(problem, state)}

    def _info(self, state: State) -> dict:
        if isinstance(state, GeneralBatchState):
            return general_batch_info(state)
        return {
            "q": state.q,
            "outer_iterations": state.outer,
            "cache_rows": int(state.cache.shape[0]),
            "cache_bytes_per_entry": int(state.cache.itemsize),
            "rows_computed": state.rows_computed,
            "row_hits": state.row_hits,
            "certifications": state.certifications,
            "gradient_refreshes": state.refreshes,
            "shrinks": state.shrinks,
            "reconstructions": state.reconstructions,
            "eps_final": state.eps,
            "gap_estimate": state.estimate,
            "native_converged": state.converged,
            "numba_threads": numba.get_num_threads(),
            "rows": "dense" if state.batched else ("csr" if isinstance(state.X, tuple) else "gram"),
        }
