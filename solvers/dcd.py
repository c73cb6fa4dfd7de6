"""Dual coordinate descent for the linear SVM (Hsieh et al., ICML 2008, Algorithm 3).

Problem (docs/ARCHITECTURE.md §2, C-form), over the examples' multipliers α:

.. math::

    \\max_\\alpha D(\\alpha) = \\sum_i \\alpha_i - \\tfrac12 \\alpha^T (\\bar Q + D) \\alpha,
    \\qquad 0 \\le \\alpha_i \\le U_i,

with ``Q̄_ij = y_i y_j (x_i·x_j + s²)`` (``s = bias_scale`` for ``bias="regularized"``, 0 for
``"none"``), ``D_ii = 0, U_i = C_i`` for the hinge and ``D_ii = 1/(2C_i), U_i = ∞`` for the
squared hinge; ``C_i`` are the problem's ``upper_bounds``. Each step minimizes over one ``α_i``
exactly (a clipped Newton step on a 1-D quadratic) and keeps ``w = Σ α_i y_i x_i`` and
``w_b = s Σ α_i y_i`` current, so that a step costs O(nnz(x_i)). The bias feature is never
materialized: ``Q̄_ii = ‖x_i‖² + s² + D_ii`` and ``w_b`` are kept apart from ``X``. The model
returned is ``w``, ``b = s·w_b`` and α.

Stopping: by default on the certified relative gap ``(P(w, b) − D(α))/max(1, |P|) ≤ tol``, both
objectives computed by the problem, checked once the epochs have read ten certificates' worth of
``X`` since the last check (or every ``check_every`` epochs); or (``stop_rule=
"native"``) on LIBLINEAR's rule ``max PG − min PG ≤ eps`` over an epoch on the full set. An
iteration is an epoch (one pass over the active set). On small problems one chunk runs several
epochs in one jitted call (:data:`EPOCH_WORK`), the same epochs as one per chunk: there the
interpreter around an epoch costs more than its arithmetic (docs/measurements.md, "dcd").

References
----------
C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi, S. Sundararajan. A dual coordinate descent
method for large-scale linear SVM. ICML 2008 (Algorithm 3: random permutation and shrinking).
R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang, C.-J. Lin. LIBLINEAR: A library for large linear
classification. JMLR 9, 2008 (``solve_l2r_l1l2_svc``: the shrinking bounds and the full re-check).
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import SoftMarginDual, SoftMarginPrimal
from svmbench.problems.validation import check_bool, check_int, check_real
from svmbench.solvers._jit import dcd as _jit
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.compile_notice import announced, compiling, needs_compiling
from svmbench.solvers.registry import register

_VARIANTS = {"bias": ("regularized", "none"), "loss": ("hinge", "squared_hinge")}

#: In gap mode, each time LIBLINEAR's rule is met on the full set before the gap is, the internal
#: ``eps`` that drives the full re-check is divided by this factor.
EPS_DECAY = 10.0
#: A shrunk active set is reset to the full set at least once every this many epochs. Without it,
#: a shrunk set whose projected-gradient spread cannot fall below ``eps`` (rounding, with a tiny
#: ``eps``) would never be re-checked and wrongly shrunk coordinates would stay frozen: the gap
#: then stalls. One full epoch per 200 costs little next to the re-checks the rule triggers anyway.
FORCED_RECHECK_EPOCHS = _jit.FORCED_RECHECK_EPOCHS
#: One chunk runs as many epochs (at most ``MAX_EPOCHS_PER_STEP``) as read about this many
#: nonzeros, when the checks are spaced by counted work and no trace is drawn at every epoch: on
#: small problems the interpreter around an epoch costs several times its jitted loop, and
#: 100 000 nearly halved a small solve's time against 20 000 (docs/measurements.md, "dcd").
#: The iterates are those of one epoch per chunk; the checks come at the end of a chunk, a chunk
#: holding about as much work as the certificates' (CERTIFICATE_FIXED_WORK) that space them.
EPOCH_WORK = 100_000
MAX_EPOCHS_PER_STEP = 32


@dataclass
class _State:
    """Everything one solve mutates; arrays are owned by the solve."""

    X: Any  # dense ndarray, or the tuple (indptr, indices, data) of a CSR matrix
    y: np.ndarray
    upper: np.ndarray  # U_i
    diag: np.ndarray  # D_ii
    qd: np.ndarray  # Q̄_ii = ‖x_i‖² + s² + D_ii
    s: float  # constant bias feature (0 for bias="none")
    alpha: np.ndarray
    w: np.ndarray
    wb: np.ndarray  # shape (1,): weight of the bias feature
    index: np.ndarray  # active set = index[:counts[0]]
    #: [active_size, n_free, resets, forced_resets, since_full]: n_free examples have U_i > 0
    #: (the others stay at α_i = 0); resets are the full re-checks after a shrunk active set met
    #: the rule, forced_resets those forced by FORCED_RECHECK_EPOCHS
    counts: np.ndarray
    bounds: np.ndarray  # [PGmax_old, PGmin_old], the shrinking bounds
    eps: float  # the native threshold in force
    rng_state: np.ndarray
    row_nnz: np.ndarray  # nonzeros of each x_i, dense or CSR alike
    epochs_per_step: int  # epochs per chunk (EPOCH_WORK)
    native_met: bool = False
    epochs: int = 0  # epochs run so far in this solve
    work: float = 0.0  # nonzeros of the rows the last chunk's epochs visited


@register
class DualCoordinateDescent(IterativeSolver):
    """Dual coordinate descent with random permutations and shrinking (LIBLINEAR's -s 1/-s 3).

    Accepts :class:`~problems.SoftMarginPrimal` and :class:`~problems.SoftMarginDual` with
    ``bias`` in {"regularized", "none"} and ``loss`` in {"hinge", "squared_hinge"}, dense or CSR
    ``X``, per-example ``C_i``.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap ``(P − D)/max(1, |P|)`` (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
        ``"gap"``: stop when the certified relative gap ≤ ``tol``. ``"native"``: stop on
        LIBLINEAR's projected-gradient rule ``max_i PG_i − min_i PG_i ≤ eps`` over one epoch on
        the full set; the certified gap is still reported.
    eps : float, default=0.1
        Threshold of the native rule (LIBLINEAR's ``-e``, same default). In gap mode it drives the
        full re-check of a shrunk active set, and is divided by 10 each time the full set meets it
        before the gap does.
    check_every : int or None, default=None
        None: gap checks spaced by counted work, so that they take at most 10 % of it
        (:class:`~solvers.base.IterativeSolver`): a certificate reads ``X`` twice (``X w`` for the
        primal, ``Xᵀ(α∘y)`` for the dual), ``2 nnz(X) + n`` entries, whereas an epoch reads the
        nonzeros of the *active* rows only, often a small fraction of ``X`` once shrinking has
        set in; so the checks come about every 20 epochs over the full set and further apart as
        the active set shrinks. The spacing is a count, not a time: the same epochs on every
        machine. An int: a check every ``check_every`` epochs. A fixed 10 drew many more
        certificates and took longer than the adaptive spacing, although fewer checks catch
        fewer of the early epochs where the fluctuating gap dips below ``tol``
        (docs/measurements.md, "dcd"). The gap is also checked whenever the native rule is
        met on the full set, and at the last epoch before ``max_iter`` or ``time_limit``.
    shrinking : bool, default=True
        Shrink coordinates stuck at a bound (LIBLINEAR's PGmax/PGmin rule), with a full re-check
        before stopping. Unlike LIBLINEAR, a shrunk set is also re-checked at least every 200
        epochs, so that a too small ``eps`` cannot freeze wrongly shrunk coordinates.
    seed : int, default=0
        Seed of ``np.random.default_rng``, which seeds the jitted generator of the per-epoch
        permutations: the same seed reproduces every iterate.
    max_iter : int or None, default=None
        Epoch cap (default 30 000); reaching it ends with status ``max_iter``.
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True
        Certified checkpoints on the base class's geometric schedule, within 10 % of the wall
        time (:class:`~svmbench.solvers.base.IterativeSolver`); ``"every"``: after every epoch.

    Notes
    -----
    ``solve(problem, warm_start=...)`` starts from α (a previous result's, or an array), or from
    ``(w, b)`` through ``problem.dual_from_primal``; α is projected onto this problem's box (a
    result for another C fits) and ``w``, ``w_b`` are rebuilt from it.
    """

    name = "dcd"
    iteration_unit = "epochs"
    supported: ClassVar = {SoftMarginPrimal: _VARIANTS, SoftMarginDual: _VARIANTS}
    #: gaussian n=20000, d=50, C=1, tol=1e-6 needs 13 577 epochs: the gap there dips below tol
    #: only now and then before it stays below (checks are spaced by counted work)
    default_max_iter = 30_000
    warm_start_uses = ("alpha", "w")

    def __init__(
        self,
        *,
        eps: float = 0.1,
        shrinking: bool = True,
        seed: int = 0,
        check_every: int | None = None,
        **common,
    ):
        super().__init__(check_every=check_every, **common)
        self.eps = check_real("eps", eps, low=0.0)
        self.shrinking = check_bool("shrinking", shrinking)
        self.seed = check_int("seed", seed, low=0)

    # ---- set-up ----------------------------------------------------------------------------------
    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """O(n + d): 16 vectors of n (α, bounds, diagonal, order, the certificate's margins), 4 of
        d (w, the certificate's gradient) and, for CSR rows, indices widened to int64."""
        X = problem.X
        widened = 8 * (X.nnz + problem.n_samples + 1) if sparse.issparse(X) else 0
        return float(16 * 8 * problem.n_samples + 4 * 8 * problem.n_features + widened)

    @once_per_process  # outermost: a later call returns at once, no marker looked up
    @announced("dcd", "its epochs: dense and CSR rows")
    def warm_up(self) -> float:
        """Compile every kernel on a 2×2 problem (dense, and CSR with int32 and int64 indices)."""
        t0 = time.perf_counter()
        X = np.array([[1.0, 0.0], [0.0, 1.0]])
        for Xk in (X, sparse.csr_matrix(X)):
            for Xv in [Xk] if isinstance(Xk, np.ndarray) else _index_variants(Xk):
                _compile_rows(as_rows(Xv))
        return time.perf_counter() - t0

    def warm_up_for(self, problem) -> float:
        """Compile only the rows ``problem`` has (dense, or CSR with its index type) on a 2×2
        problem, once per process and variant; untimed. A first compilation on this machine says
        so on stderr (:mod:`~solvers.compile_notice`)."""
        if not isinstance(problem, (SoftMarginDual, SoftMarginPrimal)):
            return self.warm_up()
        data = as_rows(problem.X)
        variant = "dense" if isinstance(data, np.ndarray) else f"csr-{data[1].dtype}"
        if variant in COMPILED_ROWS:
            return 0.0
        t0 = time.perf_counter()
        X = np.array([[1.0, 0.0], [0.0, 1.0]])
        if variant != "dense":
            X = sparse.csr_matrix(X)
            X = _index_variants(X)[0 if variant == "csr-int32" else 1]
        what = "dense rows" if variant == "dense" else f"CSR rows, {variant[4:]} indices"
        # no notice when the whole warm-up has run on this machine (its code is in the cache)
        notice = needs_compiling("dcd-all") and compiling(f"dcd-{variant}", "dcd", what)
        with notice or contextlib.nullcontext():
            _compile_rows(as_rows(X))
        return time.perf_counter() - t0

    def _init_state(self, problem, warm_start) -> _State:
        data = as_rows(problem.X)
        y = problem.y
        C = problem.upper_bounds
        positive = C > 0
        if problem.loss == "hinge":
            upper = C.copy()
            diag = np.zeros_like(C)
        else:
            upper = np.where(positive, np.inf, 0.0)
            diag = np.where(positive, 0.5 / np.where(positive, C, 1.0), 0.0)
        s = float(problem.bias_scale) if problem.bias == "regularized" else 0.0
        qd = _jit.row_sq_norms(data) + s * s + diag
        alpha = (
            np.zeros(problem.n_samples) if warm_start is None else warm_start.dual_point(problem)
        )
        w = np.empty(problem.n_features)
        coef = alpha * y
        _jit.weights(data, coef, w)
        wb = np.array([s * coef.sum()])
        # examples with U_i = 0 are fixed at α_i = 0 and never visited
        index = np.ascontiguousarray(np.flatnonzero(positive), dtype=np.int64)
        rng_state = np.random.default_rng(self.seed).integers(
            0, np.iinfo(np.uint64).max, size=1, dtype=np.uint64, endpoint=True
        )
        row_nnz = _row_nonzeros(problem.X)
        batched = self.check_every is None and self.trace != "every"
        full_work = max(1, int(row_nnz[index].sum()))
        return _State(
            X=data,
            y=y,
            upper=upper,
            diag=diag,
            qd=qd,
            s=s,
            alpha=alpha,
            w=w,
            wb=wb,
            index=index,
            counts=np.array([index.size, index.size, 0, 0, 0], dtype=np.int64),
            bounds=np.array([math.inf, -math.inf]),
            eps=self.eps,
            rng_state=rng_state,
            row_nnz=row_nnz.astype(np.float64),
            epochs_per_step=min(MAX_EPOCHS_PER_STEP, max(1, EPOCH_WORK // full_work))
            if batched
            else 1,
        )

    # ---- iterations ------------------------------------------------------------------------------
    def _step(self, problem, st: _State) -> StepOutcome:
        if st.native_met:  # the gap rule wanted more than the native rule gave: tighten it
            st.eps /= EPS_DECAY
            st.native_met = False
        epochs, st.work, converged = _epochs(
            st.X,
            st.y,
            st.upper,
            st.diag,
            st.qd,
            st.s,
            st.alpha,
            st.w,
            st.wb,
            st.index,
            st.rng_state,
            st.row_nnz,
            st.counts,
            st.bounds,
            st.eps,
            self.shrinking,
            max(1, min(st.epochs_per_step, self.max_iter - st.epochs)),
        )
        st.epochs += epochs
        st.native_met = bool(converged)
        return StepOutcome(int(epochs), converged=bool(converged))

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        return {"w": st.w, "b": st.s * float(st.wb[0]), "alpha": st.alpha}

    def _chunk_work(self, problem, st: _State) -> float:
        """Nonzeros of ``X`` the last epoch read: those of its active rows, once (the updates,
        which read a row again, and a dense row's zeros are not counted: the work is
        under-counted, so the checks take less than their share, never more). Nonzeros, not
        stored entries: a dense ``X`` and its CSR copy run the same epochs."""
        return st.work

    def _certificate_work(self, problem) -> float:
        """``2 nnz(X) + n``: ``X w`` for the primal, ``Xᵀ(α∘y)`` for the dual."""
        return float(2 * _row_nonzeros(problem.X).sum() + problem.n_samples)

    def _info(self, st: _State) -> dict[str, Any]:
        return {
            "active_size": int(st.counts[0]),
            "full_rechecks": int(st.counts[2]),
            "forced_rechecks": int(st.counts[3]),
            "eps_final": st.eps,
            "seed": self.seed,
        }


# ---- helpers ---------------------------------------------------------------------------------
#: The storages of rows whose epochs are compiled in this process (``"dense"``, ``"csr-int32"``,
#: ``"csr-int64"``).
COMPILED_ROWS: set[str] = set()


def _compile_rows(data) -> None:
    """Run the epochs and the weights once on the 2×2 rows ``data`` (:func:`as_rows`'s form)."""
    y = np.array([1.0, -1.0])
    ones = np.ones(2)
    qd = _jit.row_sq_norms(data) + 1.0
    alpha, w, wb = np.zeros(2), np.zeros(2), np.zeros(1)
    index = np.arange(2, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    counts = np.array([2, 2, 0, 0, 0], dtype=np.int64)
    bounds = np.array([1.0, -1.0])
    _epochs(data, y, ones, 0.0 * ones, qd, 1.0, alpha, w, wb, index, rng, ones,
            counts, bounds, 0.1, True, 2)  # fmt: skip
    _jit.weights(data, alpha * y, w)
    COMPILED_ROWS.add("dense" if isinstance(data, np.ndarray) else f"csr-{data[1].dtype}")


def _index_variants(X: sparse.csr_matrix) -> list[sparse.csr_matrix]:
    out = []
    for dtype in (np.int32, np.int64):
        Xv = X.copy()
        Xv.indptr = Xv.indptr.astype(dtype)
        Xv.indices = Xv.indices.astype(dtype)
        out.append(Xv)
    return out


def _row_nonzeros(X) -> np.ndarray:
    """The number of nonzeros of each row (explicit zeros of a CSR matrix excluded)."""
    return np.asarray((X != 0).sum(axis=1), dtype=np.int64).ravel()


def _epochs(X, *args):
    """:func:`solvers._jit.dcd.dcd_epochs` (a module attribute: tests count the rows it reads)."""
    return _jit.dcd_epochs(X, *args)
