"""Dual coordinate descent for L2-regularized logistic regression (Yu, Huang & Lin 2011;
LIBLINEAR's ``-s 7``).

Problem: :class:`~svmbench.problems.Logistic` with ``bias`` "regularized" or "none" (its dual
has the box only; a free bias adds ``yᵀα = 0``, which one coordinate cannot keep). Each
coordinate step solves its one-variable entropy problem by the safeguarded Newton method of the
paper's Algorithm 4 on the smaller of ``α_i`` and ``C_i − α_i`` (:mod:`solvers._jit.logistic_dcd`),
in a seeded random order per epoch, from LIBLINEAR's start ``α_i = min(10⁻³ C_i, 10⁻⁸)``.

Stopping: by default on the certified relative gap ``(P(w, b) − D(α))/max(1, |P|) ≤ tol``, both
computed by the problem, checked as the base class spaces the checks by counted work; or
(``stop_rule="native"``) when the largest derivative of the one-variable problems over an epoch
is below ``eps`` (LIBLINEAR's rule, its ``-e`` default 0.1). An iteration is an epoch.

References
----------
H.-F. Yu, F.-L. Huang, C.-J. Lin. Dual coordinate descent methods for logistic regression and
maximum entropy models. Machine Learning 85(1–2), 2011 (Algorithms 3 and 4).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import Logistic
from svmbench.problems.validation import check_int, check_real
from svmbench.solvers._jit import logistic_dcd as _jit
from svmbench.solvers._jit.dcd import row_sq_norms, weights
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.registry import register

#: LIBLINEAR's start: ``α_i = min(START_FRACTION · C_i, START_MAX)``, strictly inside the box.
START_FRACTION, START_MAX = 1e-3, 1e-8
#: The inner Newton tolerance starts here and is divided by 10 after each epoch that took at
#: most one Newton step per ten coordinates, down to :data:`INNER_MIN` (LIBLINEAR's rule).
INNER_START, INNER_MIN = 1e-2, 1e-13
#: One chunk runs as many epochs (at most ``MAX_EPOCHS_PER_STEP``) as read about this many
#: nonzeros, as ``dcd`` does: on small problems the interpreter around an epoch costs more than it.
EPOCH_WORK = 100_000
MAX_EPOCHS_PER_STEP = 32


@dataclass
class _State:
    X: Any
    y: np.ndarray
    upper: np.ndarray
    qd: np.ndarray
    s: float
    alpha: np.ndarray
    rest: np.ndarray  # C_i − α_i, kept apart
    w: np.ndarray
    wb: np.ndarray
    index: np.ndarray
    rng_state: np.ndarray
    inner: np.ndarray  # [ε_inner, ε_min]
    epochs_per_step: int
    work: float
    epochs: int = 0
    newton_steps: int = 0
    gmax: float = np.inf


def interior(alpha: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(α, C − α)`` moved strictly inside the box, each at least ``min(10⁻³ C_i, 10⁻⁸)`` from
    its ends (0 where ``C_i = 0``)."""
    margin = np.minimum(START_FRACTION * upper, START_MAX)
    a = np.clip(alpha, margin, upper - margin)
    return np.where(upper > 0, a, 0.0), np.where(upper > 0, upper - a, 0.0)


@register
class LogisticDCD(IterativeSolver):
    """Dual coordinate descent with inner Newton steps for the logistic loss (LIBLINEAR -s 7).

    Accepts :class:`~problems.Logistic` with ``bias`` in {"regularized", "none"}, dense or CSR
    ``X``, per-example ``C_i``.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
    eps : float, default=0.1
        Threshold of the native rule: the largest one-variable derivative over an epoch.
    max_inner : int, default=100
        Newton steps per coordinate at most.
    seed : int, default=0
        Seed of the per-epoch permutations.
    check_every : int or None, default=None
        None: checks spaced by counted work (an epoch reads ``2 nnz(X)``, a certificate
        ``2 nnz(X) + n``); an int: a check every ``check_every`` epochs.
    max_iter : int or None, default=None
        Epoch cap (default 30 000).
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True

    Notes
    -----
    A warm start from α (moved strictly inside the box) or from ``(w, b)`` through
    ``problem.dual_from_primal`` (the KKT map ``α_i = C_i σ(−m_i)``).
    """

    name = "logistic_dcd"
    iteration_unit = "epochs"
    supported: ClassVar = {Logistic: {"bias": ("regularized", "none")}}
    default_max_iter = 30_000
    warm_start_uses = ("alpha", "w")

    def __init__(
        self,
        *,
        eps: float = 0.1,
        max_inner: int = 100,
        seed: int = 0,
        check_every: int | None = None,
        **common,
    ):
        super().__init__(check_every=check_every, **common)
        self.eps = check_real("eps", eps, low=0.0)
        self.max_inner = check_int("max_inner", max_inner, low=1)
        self.seed = check_int("seed", seed, low=0)

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """O(n + d): about 12 vectors of n and 4 of d, CSR indices widened to int64."""
        X = problem.X
        widened = 8 * (X.nnz + problem.n_samples + 1) if sparse.issparse(X) else 0
        return float(12 * 8 * problem.n_samples + 4 * 8 * problem.n_features + widened)

    @once_per_process
    def warm_up(self) -> float:
        """Compile the epochs on a 2×2 problem, dense and CSR (indices always int64: one
        compiled variant fewer than both index types)."""
        return _warm_rows(False) + _warm_rows(True)

    def warm_up_for(self, problem) -> float:
        """Compile the epochs for the rows ``problem`` has only (dense or CSR), once per process
        and kind; untimed."""
        X = getattr(problem, "X", None)
        return self.warm_up() if X is None else _warm_rows(sparse.issparse(X))

    def _init_state(self, problem: Logistic, warm_start) -> _State:
        data = _rows(problem.X)
        y = problem.y
        C = problem.upper_bounds
        s = float(problem.bias_scale) if problem.bias == "regularized" else 0.0
        qd = row_sq_norms(data) + s * s
        start = (
            np.zeros(problem.n_samples) if warm_start is None else warm_start.dual_point(problem)
        )
        alpha, rest = interior(start, C)
        w = np.empty(problem.n_features)
        weights(data, alpha * y, w)
        wb = np.array([s * float(alpha @ y)])
        index = np.ascontiguousarray(np.flatnonzero(C > 0), dtype=np.int64)
        rng_state = np.random.default_rng(self.seed).integers(
            0, np.iinfo(np.uint64).max, size=1, dtype=np.uint64, endpoint=True
        )
        # a warm start is solved to the tight inner tolerance at once: a loose one would move
        # the coordinates of a near-optimal α to points only ε_inner-stationary
        inner_start = INNER_START if warm_start is None else INNER_MIN
        X = problem.X
        row_nnz = np.asarray((X != 0).sum(axis=1), dtype=np.float64).ravel()
        work = max(1.0, float(2.0 * row_nnz[index].sum()))
        batched = self.check_every is None and self.trace != "every"
        return _State(
            X=data, y=y, upper=C, qd=qd, s=s, alpha=alpha, rest=rest, w=w, wb=wb, index=index,
            rng_state=rng_state, inner=np.array([inner_start, INNER_MIN]),
            epochs_per_step=min(MAX_EPOCHS_PER_STEP, max(1, int(EPOCH_WORK // work)))
            if batched else 1,
            work=work,
        )  # fmt: skip

    def _step(self, problem, st: _State) -> StepOutcome:
        n_epochs = max(1, min(st.epochs_per_step, self.max_iter - st.epochs))
        epochs, gmax, newton = _jit.logistic_dcd_epochs(
            st.X, st.y, st.upper, st.qd, st.s, st.alpha, st.rest, st.w, st.wb, st.index,
            st.rng_state, st.inner, self.max_inner, n_epochs,
        )  # fmt: skip
        st.epochs += int(epochs)
        st.newton_steps += int(newton)
        st.gmax = float(gmax)
        if not (np.isfinite(gmax) and np.all(np.isfinite(st.w))):
            return StepOutcome(int(epochs), failure="non-finite iterates")
        return StepOutcome(int(epochs), converged=bool(gmax <= self.eps))

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        return {"w": st.w, "b": st.s * float(st.wb[0]), "alpha": st.alpha}

    def _chunk_work(self, problem, st: _State) -> float:
        """Nonzeros read by the last chunk: two passes over each active row per epoch."""
        return st.work * max(1, st.epochs_per_step)

    def _certificate_work(self, problem) -> float:
        X = problem.X
        nnz = X.nnz if sparse.issparse(X) else np.count_nonzero(X)
        return float(2 * nnz + problem.n_samples)

    def _info(self, st: _State) -> dict[str, Any]:
        return {
            "newton_steps": st.newton_steps,
            "max_derivative": st.gmax,
            "inner_eps": float(st.inner[0]),
            "seed": self.seed,
        }


#: Whether this process compiled the epochs for dense rows (False) and for CSR rows (True).
_WARM_ROWS: set[bool] = set()


def _warm_rows(csr: bool) -> float:
    """Compile the epochs for 2×2 rows, dense or CSR, unless this process has; the seconds."""
    if csr in _WARM_ROWS:
        return 0.0
    t0 = time.perf_counter()
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    data = _rows(sparse.csr_matrix(X) if csr else X)
    y = np.array([1.0, -1.0])
    ones = np.ones(2)
    qd = row_sq_norms(data) + 1.0
    alpha, rest = 0.5 * ones, 0.5 * ones
    w, wb = np.zeros(2), np.zeros(1)
    weights(data, alpha * y, w)
    index = np.arange(2, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    inner = np.array([INNER_START, INNER_MIN])
    _jit.logistic_dcd_epochs(data, y, ones, qd, 1.0, alpha, rest, w, wb, index, rng, inner, 10, 1)
    _WARM_ROWS.add(csr)
    return time.perf_counter() - t0


def _rows(X):
    """``X`` as the jitted epochs read it: dense rows, or CSR with int64 indices."""
    return as_rows(X, index_dtype=np.int64 if sparse.issparse(X) else None)
