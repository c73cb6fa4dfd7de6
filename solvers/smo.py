"""SMO for the kernel SVM dual (Platt 1998; Fan, Chen & Lin 2005; Chang & Lin 2011).

Problem (docs/ARCHITECTURE.md §2), written as the minimization of ``f = −D``::

    min_α  ½ αᵀQ̃α − Σ_t α_t   s.t.  0 ≤ α_t ≤ C_t   (+ yᵀα = 0 for a free bias)

    Q̃_tk = y_t y_k (K(x_t, x_k) + s²) + δ_tk / (2 C_t)

``C_t = problem.upper_bounds`` (``∞`` for the squared hinge, which adds the diagonal term), ``s =
bias_scale`` for a regularized bias and 0 otherwise. A free bias keeps ``yᵀα = 0`` by updating
pairs (WSS2 of Fan, Chen & Lin, JMLR 6, 2005, with ``τ = 1e-12`` replacing non-positive
curvature so that indefinite kernels terminate); without the equality (no or regularized bias)
SMO updates one variable at a time. The jitted core is :mod:`solvers._jit.smo`; kernel columns
come from :mod:`solvers._jit.kernel_columns` through an LRU cache of ``cache_mb`` megabytes, with
LIBSVM's shrinking and gradient reconstruction (Chang & Lin, ACM TIST 2, 2011, §5) on problems of
more than :data:`SHRINK_MIN_N` examples.

Rows, dense or CSR (:func:`use_dense_rows`), the cache's precision (:func:`cache_dtype`) and the
gradients of a warm start (``_gradients``) come from :mod:`solvers.smo_arrays`, shared with
:mod:`solvers.smo_batch`, and are importable from here too.

Stopping. ``stop_rule="native"``: LIBSVM's maximal violating pair ``m(α) − M(α) < eps`` (max
``|PG_t| < eps`` without the equality). ``stop_rule="gap"`` (default): the certified relative gap
``≤ tol``. The problem's certificate costs a kernel product over the support vectors, so SMO asks
for it only when its own O(n) estimate of the gap from the maintained gradient ``G = Q̃α − 1``,

    gap ≈ Σ_t α_t r_t + C_t max(0, −r_t),   r_t = G_t + y_t b

(hinge; ``α_t r_t − α_t²/(4C_t) + C_t max(0, α_t/(2C_t) − r_t)²`` for the squared hinge), is
``≤ tol·max(1, |P|)`` at a point where the native rule holds; if the certified gap is still above
``tol``, ``eps`` is divided by 10 and SMO goes on. The reported gap is always the problem's.

The bias: ``b = mean(−y_t G_t)`` over the free support vectors (``0 < α_t < C_t``), the midpoint
of the feasible interval ``[m(α), M(α)]`` when there are none; ``b = s² Σ α_t y_t`` (regularized)
or 0 (none).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual
from svmbench.problems.general_dual import GeneralDualProblem
from svmbench.problems.kernels import compile_fused_product, needs_fused_product
from svmbench.problems.validation import check_bool, check_int, check_option, check_real
from svmbench.solvers._jit import smo as jit
from svmbench.solvers._jit.smo_gap import compile_estimates, free_bias, hinge_estimates
from svmbench.solvers.base import IterativeSolver, StepOutcome
from svmbench.solvers.compile_notice import compiling
from svmbench.solvers.margin_lift import finish_due, lifted_estimate
from svmbench.solvers.registry import register

# (DENSE_MAX_BYTES and _gradients stay importable from here, as the tests do)
from svmbench.solvers.smo_arrays import DENSE_MAX_BYTES as DENSE_MAX_BYTES
from svmbench.solvers.smo_arrays import (
    STORAGES,
    cache_dtype,
    column_key,
    new_core,
    problem_arrays,
    problem_threads,
    squared_hinge_estimates,
    use_dense_rows,
)
from svmbench.solvers.smo_arrays import gradients as _gradients
from svmbench.solvers.smo_general import (
    GeneralState,
    general_info,
    general_init_state,
    general_memory,
    general_step,
    general_trace_estimate,
    general_variables,
    general_warm_up,
)
from svmbench.solvers.smo_shared import (
    column_buffer,
    pair_arrays,
    rows_kind,
    shared_core,
    uses_shared_rows,
    warm_up_shared,
)

#: The native tolerance is never tightened below this (the gradient is O(1): rounding level).
EPS_FLOOR = 1e-13
#: ``shrinking=True`` shrinks C-SVC's variables only on problems of more examples than this:
#: below, the same updates ran faster without it (docs/measurements.md, "SMO's shrinking on
#: small problems").
SHRINK_MIN_N = 10_000


def _bound_status(y, alpha, C) -> np.ndarray:
    """Bit 0: ``t ∈ I_up``, bit 1: ``t ∈ I_low`` (see :mod:`solvers._jit.smo`); α = None is
    α = 0 (a cold start: ``I_up`` the positive examples, ``I_low`` the negative ones, a box
    [0, 0] in neither), in three passes instead of ten."""
    if alpha is None:
        return ((C > 0) * (2 - (y > 0))).astype(np.uint8)
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return (up.astype(np.uint8) | (low.astype(np.uint8) << 1)).astype(np.uint8)


@dataclass
class _State:
    """The jitted loops' arrays (one record, :class:`solvers._jit.smo.Core`) and the driver's
    bookkeeping."""

    core: jit.Core  # rows, labels, box, Q̃_tt, α, G, Ḡ, the active set and the column cache
    pairs: bool  # pair updates (free bias) or single-variable ones
    Cw: np.ndarray  # the problem's C_t (loss weights)
    dplus: np.ndarray  # δ_tt / (2 C_t) (squared hinge), 0 otherwise
    eps: float
    iterations: int = 0
    asked: bool = False  # the last chunk handed the point to the certificate
    converged: bool = False  # the native rule held at the end of the last chunk
    estimate: float = math.nan  # last internal relative-gap estimate
    certifications: int = 0
    bias: float | None = None  # b of the current α and G (:meth:`SMO._bias`), None when stale
    shrinking: bool = True  # the loops shrink (SMO.shrinking, on more than SHRINK_MIN_N examples)


_WARM = False  # the jitted kernels are compiled (:meth:`SMO.warm_up`)
_WARM_PRODUCT = False  # the fused kernel product is compiled (:meth:`SMO._compile_product`)


def _needs_product(problem: KernelDual) -> bool:
    """Whether the certificates of ``problem`` may take the fused jitted kernel product (dense
    rows, a kernel computed from inner products, more than ``NUMPY_MAX_ENTRIES`` entries)."""
    return (
        not sparse.issparse(problem.X)
        and problem.kernel not in ("linear", "precomputed")
        and needs_fused_product(problem.n_samples)
    )


#: The variants (rows, cache dtype, pair updates) whose non-shrinking loop this process compiled.
_WARM_VARIANTS: set[tuple] = set()
#: Those whose shrinking loop and reconstruction (a shrunk gradient's kernel sums) it compiled.
_WARM_RECONSTRUCT: set[tuple] = set()


@register
class SMO(IterativeSolver):
    """Sequential minimal optimization for :class:`~problems.KernelDual`.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap ``(P − D)/max(1, |P|)``
        (``stop_rule="gap"``).
    eps : float, default=1e-3
        Native tolerance: LIBSVM's maximal-violating-pair gap ``m(α) − M(α)`` (free bias) or the
        largest projected-gradient entry (no equality); the rule of ``stop_rule="native"`` and the
        first internal target of ``stop_rule="gap"``.
    cache_mb : float, default=200
        Memory of the kernel-column cache in megabytes (LIBSVM's ``-m``, scikit-learn's
        ``cache_size``); at least two columns are always kept. RBF columns are stored in float32
        as LIBSVM's (twice the columns) unless all n fit in float64; the others in float64
        (:func:`cache_dtype`).
    shrinking : bool, default=True
        LIBSVM's shrinking with gradient reconstruction, on problems of more than
        :data:`SHRINK_MIN_N` examples (below, the loops ran the same updates faster without;
        a general form, :mod:`solvers.smo_general`, shrinks at any size).
    chunk : int, default=10000
        Updates per chunk (between two returns to the template: trace points, callbacks, limits).
    storage : {"auto", "dense", "csr"}, default="auto"
        Rows the kernel columns run over. ``"auto"`` keeps a CSR X sparse unless it is dense
        enough and small enough to densify (:func:`use_dense_rows`); ``"dense"`` densifies (a
        ``ValueError`` beyond :data:`DENSE_MAX_BYTES`), ``"csr"`` never does (and converts a dense
        X); the Gram matrix of a precomputed kernel is always dense.
    stop_rule : {"gap", "native"}, default="gap"
    check_every : int, default=1_000_000_000
        Chunks between two certificates when the internal estimate has not asked for one (SMO
        normally certifies only when its estimate says the target is met).
    trace : {True, False, "every"}, default=True
        ``True``: checkpoints on the base class's geometric schedule, carrying SMO's O(n)
        estimate (``certified=False``) except at the stopping tests and the final point, which
        are certified; ``"every"``: a certificate after every chunk (its cost pauses the clock
        but not the wall).
    max_iter : int, default=10_000_000
        Pair (or single-variable) updates.
    time_limit : float or None, default=None

    Notes
    -----
    ``iterations`` counts updates of a pair (free bias) or of one variable (no equality). The
    result's ``info`` holds the cache hits and misses, the number of gradient reconstructions and
    certificates, the final ``eps`` and the last internal gap estimate.
    """

    name = "smo"
    iteration_unit = "pair updates"
    supported: ClassVar = {KernelDual: {}, GeneralDualProblem: {}}
    default_max_iter = 10_000_000
    warm_start_uses = ("alpha",)

    def __init__(
        self,
        *,
        eps: float = 1e-3,
        cache_mb: float = 200.0,
        shrinking: bool = True,
        chunk: int = 10_000,
        storage: str = "auto",
        check_every: int = 1_000_000_000,
        **common,
    ):
        super().__init__(check_every=check_every, **common)
        self.eps = check_real("eps", eps, low=0.0)
        self.cache_mb = check_real("cache_mb", cache_mb, low=0.0)
        if not isinstance(shrinking, bool | np.bool_):
            raise TypeError(f"shrinking must be a bool, got {type(shrinking).__name__}")
        self.shrinking = check_bool("shrinking", shrinking)
        self._columns = None  # (key, state) of the last warm-startable solve: see _reuse_columns
        self._buffer = None  # the column memory that problems on shared rows reuse in turn
        self.chunk = check_int("chunk", chunk, low=1)
        self.storage = check_option("storage", storage, STORAGES)

    @classmethod
    def memory_estimate(
        cls, problem: KernelDual, *, cache_mb: float = 200.0, storage: str = "auto", **_
    ) -> float:
        """The column cache (``cache_mb``; at least two columns, at most n), the rows the columns
        run over (dense X and Xᵀ, or CSR X and Xᵀ with int64 indices; none for a precomputed
        Gram, which is the data), 24 vectors of n and the certificate's kernel blocks. SMO never
        builds the Gram matrix."""
        from svmbench.problems.kernels import BLOCK_ENTRIES

        if isinstance(problem, GeneralDualProblem):
            return general_memory(problem, cache_mb)
        n, d, X = problem.n_samples, problem.n_features, problem.X
        itemsize = np.dtype(cache_dtype(problem, cache_mb)).itemsize
        columns = min(n, max(2, float(cache_mb) * 2**20 // (itemsize * n)))
        dense = not sparse.issparse(X) or storage == "dense" or use_dense_rows(X, "auto")
        if problem.kernel == "precomputed":
            rows = 0
        elif storage != "csr" and dense:
            rows = 2 * 8 * n * d
        else:
            nnz = X.nnz if sparse.issparse(X) else np.count_nonzero(X)
            rows = 32 * nnz + 16 * (n + d)
        return float(columns * itemsize * n + rows + 24 * 8 * n + 3 * 8 * BLOCK_ENTRIES)

    # ---- JIT -------------------------------------------------------------------------------------
    def warm_up(self) -> float:
        """Compile the loops on a 4-point problem (both update kinds, float32 and float64
        columns, dense and CSR rows, the loop that never shrinks and the shrinking one with its
        reconstruction, the serial columns; a warm start's gradient, the certificate's kernel
        products), once per process; untimed; later calls return 0. The loops with parallel
        columns (problems of ``n·d ≥ PARALLEL_MIN_WORK``) compile in :meth:`warm_up_for`."""
        global _WARM
        if _WARM:
            return 0.0
        start = time.perf_counter()
        for storage in ("dense", "csr"):
            for dtype in (np.float32, np.float64):
                for pairs in (True, False):
                    for shrinks in (False, True):
                        self._compile(storage, dtype, pairs, None, shrinks)
        self._compile_product()
        _WARM = True
        return time.perf_counter() - start

    def warm_up_for(self, problem) -> float:
        """Compile only the variant ``problem`` runs (its rows dense or CSR, its cache's dtype,
        pair or single updates), with the column functions of those rows, and the certificate's
        fused kernel product only if a certificate of ``problem`` may take it (over more than
        ``√NUMPY_MAX_ENTRIES`` dense rows); untimed, once per process and variant. A first
        compilation on this machine says so on stderr (:mod:`~solvers.compile_notice`)."""
        if isinstance(problem, GeneralDualProblem):
            return general_warm_up(self, problem)
        if uses_shared_rows(problem, self.storage):
            return warm_up_shared(problem, reconstruct=self.shrinks(problem.n_samples))
        if not isinstance(problem, KernelDual):
            return self.warm_up()
        dense = problem.kernel == "precomputed" or use_dense_rows(problem.X, self.storage)
        storage = "dense" if dense else "csr"
        dtype = np.dtype(cache_dtype(problem, self.cache_mb)).type
        threads = problem_threads(problem, storage)
        variant = (storage, dtype, problem.bias == "free", threads is not None)
        product = _needs_product(problem)
        reconstruct = self.shrinks(problem.n_samples)
        warm = variant in (_WARM_RECONSTRUCT if reconstruct else _WARM_VARIANTS)
        if warm and (_WARM_PRODUCT or not product):
            return 0.0
        start = time.perf_counter()
        self._compile(storage, dtype, problem.bias == "free", threads, reconstruct)
        if product:
            self._compile_product()
        return time.perf_counter() - start

    def shrinks(self, n_samples: int) -> bool:
        """Whether the C-SVC loops shrink a problem of ``n_samples`` examples: ``shrinking``
        and more than :data:`SHRINK_MIN_N` of them."""
        return self.shrinking and n_samples > SHRINK_MIN_N

    def _compile(
        self, storage: str, dtype, pairs: bool, threads: int | None, reconstruct: bool = True
    ) -> None:
        """Run one variant of the cores on a 4-point problem (its kernel columns and shrinking
        are callees of the loop) and the gradient of a warm start, and with ``reconstruct`` the
        kernel sums of the gradient's reconstruction (run only where the loops shrink:
        :meth:`shrinks`); with the columns' parallel loops when ``threads`` is not None."""
        variant = (storage, np.dtype(dtype).type, pairs, threads is not None)
        loops = not reconstruct and variant not in _WARM_VARIANTS  # the loop that never shrinks
        sums = reconstruct and variant not in _WARM_RECONSTRUCT  # the shrinking one, the sums
        if not (loops or sums):
            return
        name = np.dtype(dtype).name
        what = f"{storage} rows, {name} columns, {'pair' if pairs else 'single'} updates"
        tag = f"smo-{storage}-{name}-{'pairs' if pairs else 'single'}"
        if threads is not None:
            what, tag = f"{what}, parallel columns", f"{tag}-parallel"
        with compiling(tag, "smo", what):
            X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
            y = np.array([1.0, -1.0, 1.0, -1.0])
            tiny = KernelDual(X, y, C=1.0, kernel="rbf", gamma=0.5)
            state = self._make_state(
                tiny, None, pairs=pairs, n_slots=2, dtype=dtype, storage=storage
            )
            core = state.core._replace(kint=(*state.core.kint[:2], threads))
            run = jit.smo_pairs if pairs else jit.smo_single
            jit.run_loop(run, 50, 1e-3, reconstruct, core)
            compile_estimates(core)  # SMO's gap estimate and b, after each loop
            alpha = np.array([1.0, 1.0, 0.5, 0.5])  # G and Ḡ of a warm start
            c = state.core
            _gradients(c.X, c.sqn, c.kint, c.kflt, y, c.C, 0.0 * y, alpha)
            if sums:
                jit.compile_reconstruct(core)
        if loops:
            _WARM_VARIANTS.add(variant)
        if sums:
            _WARM_RECONSTRUCT.add(variant)

    @staticmethod
    def _compile_product() -> None:
        """The certificate's fused kernel product of dense rows, once per process."""
        global _WARM_PRODUCT
        if _WARM_PRODUCT:
            return
        with compiling("kernel-product", "certificates", "kernel products of dense rows"):
            compile_fused_product()
        _WARM_PRODUCT = True

    # ---- state -----------------------------------------------------------------------------------
    def _n_slots(self, n: int, itemsize: int = 8) -> int:
        """Columns of n entries of ``itemsize`` bytes that fit in ``cache_mb`` (at least 2, at
        most n)."""
        return int(min(n, max(2, self.cache_mb * 2**20 // (itemsize * n))))

    def _make_state(
        self,
        problem: KernelDual,
        alpha0,
        *,
        pairs: bool,
        n_slots: int,
        dtype=np.float64,
        storage: str = "auto",
        gradients: bool = True,
    ) -> _State:
        n = problem.n_samples
        X, XT, sqn, kint, kflt, y, Cw, C, dplus, QD = problem_arrays(problem, storage)
        alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=np.float64)
        # a warm start's gradients wait for _reuse_columns, which may update the last solve's;
        # at α = 0, G = Q̃α − 1 = −1 and Ḡ = 0 without a kernel product (the same bits)
        if alpha0 is None:
            G, Gbar = np.full(n, -1.0), np.zeros(n)
        elif gradients:
            G, Gbar = _gradients(X, sqn, kint, kflt, y, C, dplus, alpha)
        else:
            G, Gbar = np.full(n, np.nan), np.zeros(n)
        status = _bound_status(y, None if alpha0 is None else alpha, C)
        core = new_core(X, XT, sqn, kint, kflt, y, C, QD, alpha, G, Gbar, status, n_slots, dtype)
        return _State(
            core, pairs, Cw, dplus, eps=max(self.eps, EPS_FLOOR), shrinking=self.shrinks(n)
        )

    def _init_state(self, problem: KernelDual, warm_start) -> _State | GeneralState:
        if isinstance(problem, GeneralDualProblem):
            return general_init_state(self, problem, warm_start)
        if warm_start is None and uses_shared_rows(problem, self.storage):  # smo_shared
            n, n_slots = problem.n_samples, self._n_slots(problem.n_samples)
            self._buffer = column_buffer(self._buffer, n_slots * n)  # one for every pair
            arrays = self.__dict__["_arrays"] = pair_arrays(self.__dict__.get("_arrays"), problem)
            core = shared_core(problem, n_slots, self._buffer, arrays)
            return _State(
                core, problem.bias == "free", core.C, arrays.zeros(core.C),
                max(self.eps, EPS_FLOOR), shrinking=self.shrinks(n),
            )  # fmt: skip
        # the box (and yᵀα = 0) of this problem: a result for another C fits
        alpha0 = None if warm_start is None else warm_start.dual_point(problem)
        dtype = cache_dtype(problem, self.cache_mb)
        state = self._make_state(
            problem,
            alpha0,
            pairs=problem.bias == "free",
            n_slots=self._n_slots(problem.n_samples, np.dtype(dtype).itemsize),
            dtype=dtype,
            storage=self.storage,
            gradients=warm_start is None,
        )
        if warm_start is not None:
            self._reuse_columns(state)
        return state

    def _reuse_columns(self, state: _State) -> None:
        """A warm-started solve of the same kernel matrix (a path over C: the columns
        ``Q̃_:i`` do not depend on C for the hinge loss) starts with the previous solve's cached
        columns instead of an empty cache. Only complete columns are kept: a partial one lacks
        rows that were shrunk, and every row is active again. Keyed on the bytes of everything a
        column depends on; a cold solve never reuses (its timings stay those of a fresh call).

        The gradients follow: ``G`` is updated from the last solve's (complete, i.e. no variable
        shrunk, as at a certified stop) over the coordinates of α that changed, which saves a
        kernel product per solve along a path (docs/measurements.md, "smo")."""
        key = column_key(state.core)
        memo = self._columns
        same = memo is not None and memo[0] == key
        c = state.core
        old = memo[1].core if same else None
        previous = None
        if same and old.ist[jit.N_ACTIVE] == c.y.shape[0]:
            previous = (old.alpha, old.G)
        G, Gbar = _gradients(c.X, c.sqn, c.kint, c.kflt, c.y, c.C, state.dplus, c.alpha, previous)
        c = c._replace(G=G, Gbar=Gbar)
        if same and old.cache.shape == c.cache.shape:
            full = (old.slot_col >= 0) & (old.slot_full == 1)
            slot_col = np.where(full, old.slot_col, -1)
            col_slot = np.full(c.col_slot.shape, -1, dtype=np.int64)
            col_slot[slot_col[full]] = np.flatnonzero(full)
            c = c._replace(
                cache=old.cache,
                slot_col=slot_col,
                slot_full=np.where(full, 1, 0).astype(np.uint8),
                stamp=np.where(full, old.stamp, 0),
                col_slot=col_slot,
            )
        state.core = c
        self._columns = (key, state)

    # ---- one chunk -------------------------------------------------------------------------------
    def _step(self, problem: KernelDual, state: _State) -> StepOutcome:
        if isinstance(state, GeneralState):
            return general_step(self, problem, state)
        if state.asked:
            # the certificate refused the point the estimate proposed: aim lower
            state.asked = False
            if state.eps <= EPS_FLOOR:  # nothing left to tighten: no further progress is possible
                return StepOutcome(0, converged=True)
            drifted = False
            if state.core.cache.dtype != np.float64:
                self._refresh_gradient(state)
                # the float32 columns' rounding had hidden part of the gap: go on at this eps
                # with the exact gradient instead of a tenfold tighter one (over-solving)
                drifted = self._gap_estimate(problem, state) > self.tol
            if drifted:
                state.core.ist[jit.UNSHRUNK] = 0
            else:
                self._tighten(state)
        run = jit.smo_pairs if state.pairs else jit.smo_single
        total = 0
        while True:
            budget = min(self.chunk - total, max(1, self.max_iter - state.iterations))
            done, code = jit.run_loop(run, budget, state.eps, state.shrinking, state.core)
            state.bias = None  # α and G moved
            total += done
            state.iterations += done
            state.converged = code == jit.CONVERGED
            if self.stop_rule == "native" or not state.converged:
                return StepOutcome(total, converged=state.converged)
            # the native rule holds on every variable and G is complete: estimate the gap, O(n);
            # at a large C the point is finished early (solvers/margin_lift.py)
            state.estimate = self._gap_estimate(problem, state)
            due = finish_due(problem, self.tol, state.eps, state.core.alpha)
            if state.estimate <= self.tol or state.eps <= EPS_FLOOR or due:
                state.asked = True
                state.certifications += 1
                return StepOutcome(total, converged=True)
            self._tighten(state, self.tol / state.estimate)
            if total >= self.chunk or state.iterations >= self.max_iter:
                return StepOutcome(total)

    @staticmethod
    def _refresh_gradient(state: _State) -> None:
        """Recompute G and Ḡ in float64 from α (float32 columns make the maintained gradient
        drift by ≤ 2⁻²³ |Δα| per update); only when the certificate refused a point."""
        c = state.core
        c.G[:], c.Gbar[:] = _gradients(c.X, c.sqn, c.kint, c.kflt, c.y, c.C, state.dplus, c.alpha)
        state.bias = None

    @staticmethod
    def _tighten(state: _State, wanted: float = 0.0) -> None:
        """Lower the native tolerance for a new phase (shrinking may grow back once more):
        ``wanted`` = tol / estimate (the gap follows eps nearly in proportion), eps to half the
        share that would just meet tol, within [1/100, 1/2] of itself (docs/measurements.md,
        "smo"); without an estimate (the certificate refused the point): tenfold."""
        factor = 0.1 if wanted <= 0.0 else min(0.5, max(0.01, 0.5 * wanted))
        state.eps = max(EPS_FLOOR, state.eps * factor)
        state.core.ist[jit.UNSHRUNK] = 0

    def _bias(self, problem: KernelDual, state: _State) -> float:
        """b of the current point, once per point (the estimate and the variables ask it)."""
        if state.bias is None:
            state.bias = self._bias_of(problem, state)
        return state.bias

    @staticmethod
    def _bias_of(problem: KernelDual, state: _State) -> float:
        if problem.bias == "none":
            return 0.0
        c = state.core
        if problem.bias == "regularized":
            return float(c.kflt[2] * (c.alpha @ c.y))
        # LIBSVM's free b: the terms in one jitted pass, summed by NumPy (the same bits), in
        # the loops' scratch where they never shrink (else it may hold a pending shrinking's
        # bounds)
        terms = np.empty(c.y.size) if state.shrinking else c.tmp
        return free_bias(c.y, c.G, c.status, c.active, c.ist[jit.N_ACTIVE], terms)

    def _gap_estimate(self, problem: KernelDual, state: _State) -> float:
        """Relative duality gap of ``(α, b)`` from the maintained gradient (all of G exact)."""
        P, gap = self._estimates(problem, state)
        b, c = self._bias(problem, state) if problem.bias == "free" else 0.0, state.core
        gap = lifted_estimate(problem, self.tol, P, gap, c.alpha, c.G, c.y, b, state.Cw)
        return gap / max(1.0, abs(P))

    def _trace_estimate(self, problem: KernelDual, state: _State) -> tuple[float, float]:
        """Trace points between certificates carry this O(n) estimate (``certified=False``):
        a certificate costs a kernel product over the support vectors, ``O(n_SV·n·d)``, a large
        share of the wall time per trace point (docs/measurements.md, "smo"). The stopping tests and
        the final point are certified. Exact when no variable is shrunk; otherwise G is stale on
        the shrunk ones. A general form's points: :func:`general_trace_estimate`."""
        if isinstance(state, GeneralState):
            return general_trace_estimate(problem, state)
        P, gap = self._estimates(problem, state)
        return P, P - gap

    def _estimates(self, problem: KernelDual, state: _State) -> tuple[float, float]:
        """``(P, P − D)`` of ``(α, b)`` from the maintained gradient ``G = Q̃α − 1``, O(n)."""
        c, free = state.core, problem.bias == "free"
        a, y, G, Cw = c.alpha, c.y, c.G, state.Cw
        b = self._bias(problem, state) if free else 0.0
        if problem.loss == "hinge":  # one jitted pass (solvers._jit.smo_gap)
            return hinge_estimates(a, y, G, Cw, b)
        r = y * b
        r += G
        return squared_hinge_estimates(a, r, G, Cw)

    def _variables(self, problem: KernelDual, state: _State) -> dict:
        if isinstance(state, GeneralState):
            return general_variables(problem, state)
        return {"alpha": state.core.alpha.copy(), "b": self._bias(problem, state)}

    def _info(self, state: _State) -> dict:
        if isinstance(state, GeneralState):
            return general_info(state)
        ist, cache = state.core.ist, state.core.cache
        return {
            "cache_columns": int(cache.shape[0]),
            "cache_bytes_per_entry": int(cache.itemsize),
            "cache_hits": int(ist[jit.HITS]),
            "cache_misses": int(ist[jit.MISSES]),
            "reconstructions": int(ist[jit.RECONSTRUCTIONS]),
            "certifications": state.certifications,
            "eps_final": state.eps,
            "gap_estimate": state.estimate,
            "native_converged": state.converged,
            "numba_threads": int(state.core.kint[2] or 1),  # the loops' threads (serial: 1)
            "rows": rows_kind(state.core.X),
        }
