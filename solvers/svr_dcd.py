"""Dual coordinate descent for linear ε-SVR (Ho & Lin 2012, Algorithm 4; LIBLINEAR ``-s 12``
and ``-s 13``).

Problem: :class:`~svmbench.problems.SVRPrimal`, either loss, ``bias`` "regularized" or "none"
(its dual has no equality; a free bias adds ``Σ β_i = 0``, which one coordinate cannot keep):

    min_β ½ βᵀ(Q̄ + Λ)β − yᵀβ + ε‖β‖₁,   −U_i ≤ β_i ≤ U_i,

``Q̄_ij = x_i·x_j + s²`` (``s = bias_scale`` for a regularized bias, else 0), ``Λ = 0, U = C_i``
for the plain loss and ``Λ_ii = 1/(2C_i), U = ∞`` for the squared one. Each step minimizes over
one ``β_i`` exactly (the closed form of the piecewise-quadratic one-variable problem,
:mod:`solvers._jit.svr_dcd`) in a seeded random order per epoch, with LIBLINEAR's shrinking; the
model is ``w = Σ β_i x_i``, ``b = s² Σ β_i``.

Stopping: by default on the certified relative gap ``(P(w, b) − D(β))/max(1, |P|) ≤ tol``, both
computed by the problem. The certificate is asked when the epoch's own gap estimate says so:
``P − D = Σ_i [C_i ℓ(r_i) − β_i r_i + ε|β_i| + β_i²/(4C_i)]`` (the last term for the squared loss
only; each term ≥ 0 by Fenchel–Young, since ``‖w̃‖² = Σ β_i(y_i − r_i)``), summed over the
coordinates of the epoch from the residual ``r_i`` each step computes anyway (O(1) per step), and
``D(β)`` from sums kept current. An estimate within tol over a shrunk set resets it to the full
set (as LIBLINEAR's rule does, which is not used in this mode: each of its re-checks costs a full
epoch or two); within tol over the full set, it asks for the certificate; a certificate that
disagrees lowers the estimate's threshold by a tenth and pauses the estimates for as much work
as a certificate. The base class's schedule by counted work stays as a
backstop, at a tenth of its usual share. Or (``stop_rule="native"``) LIBLINEAR's rule, the sum of
the violations over an epoch on the full set at most ``eps`` times the first epoch's, which resets
a shrunk set that meets it. An iteration is an epoch.

References
----------
C.-H. Ho, C.-J. Lin. Large-scale linear support vector regression. JMLR 13, 2012.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import SVRPrimal
from svmbench.problems.validation import check_bool, check_int, check_real
from svmbench.solvers._jit import svr_dcd as _jit
from svmbench.solvers._jit.dcd import row_sq_norms, weights
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.registry import register

#: One chunk runs as many epochs (at most ``MAX_EPOCHS_PER_STEP``) as read about this many
#: nonzeros: the interpreter around a chunk (its call of 18 arrays, the loop's bookkeeping)
#: costs about as much as an epoch over 10⁵ entries; the native rule ends a chunk at once.
EPOCH_WORK = 2_000_000
MAX_EPOCHS_PER_STEP = 32
#: A certificate that refuses the epoch's gap estimate divides the estimate's threshold by this
#: (the gap of the plain loss's iterates wanders by tens of percent from one epoch to the next,
#: the estimate less: the next epochs are as likely to certify as a lower bar is to be met)
ESTIMATE_DECAY = 1.1
#: In gap mode the certificate's counted work is multiplied by this: the estimates ask for the
#: certificates, the base class's schedule by work is only a backstop.
BACKSTOP_FACTOR = 10.0


@dataclass
class _State:
    X: Any  # dense rows, or the CSR tuple
    y: np.ndarray
    C: np.ndarray  # C_i
    upper: np.ndarray  # U_i
    lam: np.ndarray  # Λ_ii
    qd: np.ndarray  # ‖x_i‖² + s² + Λ_ii
    s: float
    beta: np.ndarray
    w: np.ndarray
    wb: np.ndarray  # shape (1,): s Σ β_i
    sums: np.ndarray  # [Σ y_i β_i, Σ |β_i|, Σ Λ_ii β_i²]
    index: np.ndarray
    counts: np.ndarray  # [active_size, n_free, resets, forced_resets, since_full]
    norms: np.ndarray  # [Gmax_old, first Σ violations, last Σ violations, gap estimate, D]
    eps: float
    rng_state: np.ndarray
    row_nnz: np.ndarray
    epochs_per_step: int
    estimate_met: bool = False
    wait_work: float = 0.0  # after a refused estimate, no other before this much work
    gap_factor: float = 1.0  # the estimate asks for a certificate at ≤ gap_factor · tol
    estimates_refused: int = 0
    epochs: int = 0
    work: float = 0.0


@register
class SVRDualCoordinateDescent(IterativeSolver):
    """Dual coordinate descent for linear ε-SVR with shrinking (LIBLINEAR ``-s 12``/``-s 13``).

    Accepts :class:`~problems.SVRPrimal` with ``bias`` in {"regularized", "none"}, either loss,
    dense or CSR ``X``, per-example ``C_i``.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
    eps : float, default=0.1
        Threshold of the native rule (LIBLINEAR's ``-e`` for ``-s 12/13``, same default): the sum
        of the violations over an epoch relative to the first epoch's (``stop_rule="native"``
        only).
    shrinking : bool, default=True
        LIBLINEAR's shrinking, with a full re-check before stopping (and at least every 200
        epochs).
    seed : int, default=0
        Seed of the per-epoch permutations.
    check_every : int or None, default=None
        None: a gap check when the epoch's gap estimate is within tol, and as a backstop
        spaced by counted work (an epoch reads the active rows' nonzeros, a certificate
        ``2 nnz(X) + n``, counted tenfold); an int: also a check every ``check_every`` epochs.
    max_iter : int or None, default=None
        Epoch cap (default 30 000).
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True

    Notes
    -----
    A warm start from β (a result's ``beta``, or an array) projected onto this problem's box, or
    from ``(w, b)`` through ``problem.dual_from_primal``.
    """

    name = "svr_dcd"
    iteration_unit = "epochs"
    supported: ClassVar = {SVRPrimal: {"bias": ("regularized", "none")}}
    default_max_iter = 30_000
    warm_start_uses = ("beta", "alpha", "w")

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

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """O(n + d): about 12 vectors of n and 4 of d, CSR indices widened to int64."""
        X = problem.X
        widened = 8 * (X.nnz + problem.n_samples + 1) if sparse.issparse(X) else 0
        return float(12 * 8 * problem.n_samples + 4 * 8 * problem.n_features + widened)

    @once_per_process
    def warm_up(self) -> float:
        """Compile the epochs on a 2×2 problem: dense rows and CSR with uint32 indices."""
        return _warm_rows("dense") + _warm_rows("uint32")

    def warm_up_for(self, problem) -> float:
        """Compile the epochs for the rows ``problem`` has only (dense, CSR with uint32 indices,
        or int64 ones for data beyond uint32's range), once per process and kind; untimed."""
        X = getattr(problem, "X", None)
        if X is None:
            return self.warm_up()
        if not sparse.issparse(X):
            return _warm_rows("dense")
        return _warm_rows("uint32" if _fits_uint32(X) else "int64")

    def _init_state(self, problem: SVRPrimal, warm_start) -> _State:
        data = _rows(problem.X)
        C = problem.upper_bounds
        positive = C > 0
        if problem.squared:
            upper = np.where(positive, np.inf, 0.0)
            lam = np.where(positive, 0.5 / np.where(positive, C, 1.0), 0.0)
        else:
            upper, lam = C.copy(), np.zeros_like(C)
        s = float(problem.bias_scale) if problem.bias == "regularized" else 0.0
        qd = row_sq_norms(data) + s * s + lam
        beta = _start(problem, warm_start)
        w = np.empty(problem.n_features)
        weights(data, beta, w)
        wb = np.array([s * beta.sum()])
        sums = _sums(problem.y, beta, lam)
        index = np.ascontiguousarray(np.flatnonzero(positive), dtype=np.int64)
        rng_state = np.random.default_rng(self.seed).integers(
            0, np.iinfo(np.uint64).max, size=1, dtype=np.uint64, endpoint=True
        )
        X = problem.X
        row_nnz = (
            np.diff(X.indptr).astype(np.float64)
            if sparse.issparse(X)
            else np.full(X.shape[0], float(X.shape[1]))
        )
        batched = self.check_every is None and self.trace != "every"
        full_work = max(1.0, float(row_nnz[index].sum()))
        return _State(
            X=data, y=problem.y, C=C, upper=upper, lam=lam, qd=qd, s=s, beta=beta, w=w, wb=wb,
            sums=sums, index=index,
            counts=np.array([index.size, index.size, 0, 0, 0], dtype=np.int64),
            norms=np.array([math.inf, -1.0, math.inf, math.inf, -math.inf]), eps=self.eps,
            rng_state=rng_state,
            row_nnz=row_nnz,
            epochs_per_step=min(MAX_EPOCHS_PER_STEP, max(1, int(EPOCH_WORK // full_work)))
            if batched else 1,
        )  # fmt: skip

    def _step(self, problem, st: _State) -> StepOutcome:
        if st.estimate_met:  # the certificate refused the estimate: a lower bar, a pause
            st.gap_factor /= ESTIMATE_DECAY
            st.wait_work = self._certificate_work(problem) / BACKSTOP_FACTOR
            st.estimates_refused += 1
            st.estimate_met = False
            st.sums[:] = _sums(st.y, st.beta, st.lam)  # the running sums' rounding let go
        waiting = st.wait_work > 0.0
        gap_target = self.tol * st.gap_factor if self.stop_rule == "gap" and not waiting else -1.0
        epochs, st.work, code = _jit.svr_dcd_epochs(
            st.X, st.y, st.C, st.upper, st.lam, st.qd, problem.epsilon, st.s, st.beta, st.w,
            st.wb, st.sums, st.index, st.rng_state, st.row_nnz, st.counts, st.norms,
            st.eps if self.stop_rule == "native" else 0.0,
            gap_target, self.shrinking,
            max(1, min(st.epochs_per_step, self.max_iter - st.epochs)),
        )  # fmt: skip
        st.epochs += int(epochs)
        st.wait_work -= st.work
        st.estimate_met = code == _jit.ESTIMATE_MET
        if not (np.all(np.isfinite(st.w)) and np.isfinite(st.wb[0])):
            return StepOutcome(int(epochs), failure="non-finite iterates")
        return StepOutcome(int(epochs), converged=code != _jit.RAN_OUT)

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        return {"w": st.w, "b": st.s * float(st.wb[0]), "beta": st.beta}

    def _chunk_work(self, problem, st: _State) -> float:
        """Nonzeros of the active rows the last chunk's epochs read."""
        return st.work

    def _certificate_work(self, problem) -> float:
        """``2 nnz(X) + n`` (``X w`` for the primal, ``Xᵀβ`` for the dual), times
        :data:`BACKSTOP_FACTOR` in gap mode, where the estimates ask for the certificates."""
        X = problem.X
        nnz = X.nnz if sparse.issparse(X) else np.count_nonzero(X)
        factor = BACKSTOP_FACTOR if self.stop_rule == "gap" else 1.0
        return factor * float(2 * nnz + problem.n_samples)

    def _info(self, st: _State) -> dict[str, Any]:
        return {
            "active_size": int(st.counts[0]),
            "full_rechecks": int(st.counts[2]),
            "forced_rechecks": int(st.counts[3]),
            "violation_sum": float(st.norms[2]),
            "gap_estimate": float(st.norms[3]),
            "estimates_refused": st.estimates_refused,
            "seed": self.seed,
        }


#: The rows ("dense", "uint32", "int64": CSR indices) whose epochs this process compiled.
_WARM_ROWS: set[str] = set()


def _warm_rows(kind: str) -> float:
    """Compile the epochs for 2×2 rows of ``kind`` unless this process has; the seconds."""
    if kind in _WARM_ROWS:
        return 0.0
    t0 = time.perf_counter()
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    if kind == "dense":
        _compile_epochs(X)
    elif kind == "uint32":
        _compile_epochs(_rows(sparse.csr_matrix(X)))
    else:
        _compile_epochs(as_rows(sparse.csr_matrix(X), index_dtype=np.int64))
    _WARM_ROWS.add(kind)
    return time.perf_counter() - t0


def _compile_epochs(data) -> None:
    """Run the epochs once on the 2×2 rows ``data`` (compiling them for its storage)."""
    y = np.array([1.0, -1.0])
    ones = np.ones(2)
    beta, w, wb = np.zeros(2), np.zeros(2), np.zeros(1)
    weights(data, beta, w)
    _jit.svr_dcd_epochs(
        data, y, ones, ones, 0.0 * ones, row_sq_norms(data) + 1.0, 0.1, 1.0, beta, w, wb,
        np.zeros(3), np.arange(2, dtype=np.int64), np.zeros(1, dtype=np.uint64), ones,
        np.array([2, 2, 0, 0, 0], dtype=np.int64), np.array([np.inf, -1.0, 0.0, 0.0, 0.0]),
        0.1, 1e-6, True, 2,
    )  # fmt: skip


def _sums(y: np.ndarray, beta: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``[Σ y_i β_i, Σ |β_i|, Σ Λ_ii β_i²]``, the parts of ``D(β)`` the epochs keep current."""
    return np.array([float(y @ beta), float(np.abs(beta).sum()), float(lam @ (beta * beta))])


def _start(problem: SVRPrimal, warm_start) -> np.ndarray:
    """β = 0, or the warm start's β (or α, a bare array) or ``(w, b)`` mapped to a dual point,
    projected onto the problem's box."""
    if warm_start is None:
        return np.zeros(problem.n_samples)
    given = warm_start.beta if warm_start.beta is not None else warm_start.alpha
    if given is not None:
        return problem.project_dual(np.asarray(given, dtype=np.float64).ravel())
    b = 0.0 if warm_start.b is None or problem.bias == "none" else float(warm_start.b)
    return problem.dual_from_primal(warm_start.w, b)


def _rows(X):
    """``X`` as the jitted epochs read it: dense rows, or CSR with uint32 ``indptr`` and column
    indices where they fit (Numba checks a signed index for wraparound at every read: an epoch
    over unsigned ones took 25-35 % less time), int64 ones beyond."""
    if not sparse.issparse(X):
        return as_rows(X)
    indptr, indices, data = as_rows(X)
    if _fits_uint32(X):
        return indptr.astype(np.uint32), indices.astype(np.uint32), data
    return indptr.astype(np.int64), indices.astype(np.int64), data


def _fits_uint32(X) -> bool:
    return max(X.nnz, X.shape[1]) < 2**32 - 1
