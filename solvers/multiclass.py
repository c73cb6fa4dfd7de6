"""Multiclass SVM solvers of the Crammer–Singer problem: by dual coordinate descent and by SGD.

The Crammer–Singer problem (``problems.multiclass.MulticlassHinge``; Crammer & Singer, JMLR 2001,
with the margin rescaled by a cost Δ as in Tsochantaridis et al., JMLR 2005)::

    min_W  P(W) = ½‖W̃‖_F² + Σ_i C_i max_r (Δ(r, y_i) + w̃_r·x̃_i − w̃_{y_i}·x̃_i)
    max_β  D(β) = Σ_{i,r} β_ir Δ(r, y_i) − ½‖W̃(β)‖_F²,
           β_i ∈ {β_i ≥ 0, Σ_r β_ir = C_i},   w̃_r(β) = Σ_i (C_i 1[y_i = r] − β_ir) x̃_i,

with ``x̃_i = (x_i, s)`` for a regularized bias (``b_r = s·w_{r,b}``) and ``x̃_i = x_i`` without.

``cs_dcd``
    The sequential dual method of Keerthi, Sundararajan, Chang, Hsieh & Lin (KDD 2008), i.e.
    LIBLINEAR's ``-s 4``: one example at a time, ``β_i`` is replaced by the exact maximizer of D
    over its simplex, ``β_i ← Proj_{C_i·simplex}(β_i + g_i / A_i)`` with
    ``g_ir = Δ(r, y_i) + w̃_r·x̃_i`` and ``A_i = ‖x̃_i‖²`` (sort-based projection), with LIBLINEAR's
    shrinking of (example, class) pairs.
``cs_sgd``
    The lecture's stochastic subgradient method on ``λ‖W‖² + (1/n) Σ_i loss_i`` with
    ``λ = 1/(2nC)`` (``problems.scaling.lambda_from_C(form="multiclass_lecture")``), averaged.

The one-vs-rest and one-vs-one reductions to binary solvers (``ovr``, ``ovo``), which solve other
problems, are in :mod:`solvers.reductions`.

References
----------
.. [CS01] K. Crammer, Y. Singer. On the algorithmic implementation of multiclass kernel-based
   vector machines. JMLR 2, 2001.
.. [Keerthi08] S. S. Keerthi, S. Sundararajan, K.-W. Chang, C.-J. Hsieh, C.-J. Lin. A sequential
   dual method for large scale multi-class linear SVMs. KDD 2008.
.. [Tsoch05] I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
   structured and interdependent output variables. JMLR 6, 2005.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import MulticlassHinge
from svmbench.problems.kernels import squared_norms
from svmbench.problems.scaling import lambda_from_C
from svmbench.problems.validation import check_bool, check_int
from svmbench.solvers._averaged_sgd import AveragedSGD, AveragedState
from svmbench.solvers._jit import multiclass as _jit
from svmbench.solvers._jit.common import shuffle_active
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.registry import register

# ---------------------------------------------------------------------------------------------
# Crammer–Singer: shared helpers
# ---------------------------------------------------------------------------------------------


def _row_nonzeros(X) -> np.ndarray:
    """The number of nonzeros of each row (explicit zeros of a CSR matrix excluded)."""
    return np.asarray((X != 0).sum(axis=1), dtype=np.int64).ravel()


def _warm_start_beta(problem: MulticlassHinge, warm_start) -> np.ndarray | None:
    """β from a warm start (given, or from ``(W, b)`` through ``dual_from_primal``), projected
    onto this problem's simplices (a result for another C fits)."""
    if warm_start is None:
        return None
    if warm_start.beta is not None:
        return problem.project_dual(warm_start.beta)
    return problem.project_dual(problem.dual_from_primal(warm_start.W, warm_start.b))


# ---------------------------------------------------------------------------------------------
# cs_dcd
# ---------------------------------------------------------------------------------------------


@dataclass
class _DCDState:
    X: Any  # dense rows, or the CSR tuple (indptr, indices, data) with int64 indices
    y: np.ndarray
    C: np.ndarray
    cost: np.ndarray
    costT: np.ndarray  # cost.T, C-contiguous (the epoch's)
    A: np.ndarray
    s: float
    reg: bool
    beta: np.ndarray
    Wt: np.ndarray
    wb: np.ndarray
    index: np.ndarray
    active_size: int
    active_i: np.ndarray
    cls: np.ndarray
    #: state (uint64, (1,)) of the jitted generator that shuffles the active examples
    rng_state: np.ndarray
    eps: float
    eps_shrink: float
    start_from_all: bool = True
    tighten: bool = False
    stopping: float = math.inf
    reactivations: int = 0
    epochs: int = 0
    #: nonzeros of each x_i (dense or CSR alike)
    row_nnz: np.ndarray | None = None
    #: weights·features the last chunk read: Σ over its epochs' active examples of
    #: nnz(x_i) × their active classes
    work: float = 0.0
    #: the epoch's scratch (:func:`~solvers._jit.multiclass.cs_dcd_scratch`)
    scratch: tuple = ()


#: cs_dcd runs a dense X with at most this fraction of nonzeros through its CSR kernel
_CSR_MAX_DENSITY = 0.75


def _runs_on_csr(X) -> bool:
    """cs_dcd's rows are CSR when given so, or when at most ``_CSR_MAX_DENSITY`` of X is nonzero:
    mostly-zero dense rows (digits: 51 %) run faster through the CSR kernel (no per-feature zero
    test to mispredict, no work on the zeros; the iterates are the same)."""
    if sparse.issparse(X):
        return True
    return np.count_nonzero(X) <= _CSR_MAX_DENSITY * X.shape[0] * X.shape[1]


@register
class CrammerSingerDCD(IterativeSolver):
    """Crammer–Singer by dual coordinate descent over the per-example sub-problems
    ([Keerthi08], LIBLINEAR's ``-s 4``), with shrinking.

    An epoch visits the active examples in a seeded random order; for example i it computes
    ``g_ir = Δ(r, y_i) + w̃_r·x̃_i`` over its active classes and replaces β_i by the exact
    maximizer of D over its simplex with the others fixed:
    ``max_{β_i} Σ_r δ_r g_ir − ½ A_i ‖δ‖²`` (``δ = β_i^new − β_i``, ``A_i = ‖x̃_i‖²``), i.e.
    ``β_i^new = Proj_{C_i·simplex}(β_i + g_i / A_i)``, by the sort-based algorithm ([CS01];
    [Keerthi08] §3). The cost Δ enters only the linear term g. ``W̃`` is kept equal to ``W̃(β)``
    by rank-one updates, stored as LIBLINEAR does (d × k: one pass over x_i reads or updates the
    contiguous k weights of each of its features). A dense X with at most 75 % nonzeros is run
    through the CSR kernel (same iterates, no work on its zeros).

    Shrinking ([Keerthi08] §4; LIBLINEAR's ``be_shrunk``): class r of example i leaves the active
    set when ``β_ir = 0`` and ``g_ir < min_{r': β_ir' > 0} g_ir'``; an example with one active
    class left leaves the epoch. When the stopping quantity
    ``max_i (max_r g_ir − min_{r: β_ir > 0} g_ir)`` falls below ``eps_shrink`` every variable
    comes back (``eps_shrink`` halves, down to eps), and the native rule holds only when it falls
    below eps on an epoch that started from the full set.

    Parameters
    ----------
    tol : float, default=1e-6
        ``stop_rule="gap"``: the certified relative gap ``(P − D)/max(1, |P|)`` (checked where
        ``check_every`` says and whenever the native rule holds; the native eps, which drives
        shrinking, is then tol/10, divided by 10 each time it holds with the gap above tol).
        ``stop_rule="native"``: LIBLINEAR's eps on the stopping quantity above.
    check_every : int or None, default=None
        None: timed gap checks (``stop_rule="gap"``) spaced by counted work so that they take at
        most 10 % of it (:class:`~solvers.base.IterativeSolver`): a certificate reads
        ``2 nnz(X) k + n k`` weights·features (``X W̃`` and ``Xᵀ Γ``), a chunk
        ``Σ nnz(x_i) × (active classes of i)`` over the active examples of its epochs. An int:
        chunks between two checks (the former default was 10). A chunk is one epoch while all
        examples are active, and as many shrunk epochs as make about one full pass of work once
        shrinking has removed most. The gap is also checked whenever the native rule holds at
        the current eps.
    shrinking : bool, default=True
    seed : int, default=0
        Seed of the per-epoch permutations.
    stop_rule, trace, max_iter, time_limit
        See :class:`~solvers.base.IterativeSolver`; ``max_iter`` counts epochs.
    """

    name = "cs_dcd"
    iteration_unit = "epochs"
    supported: ClassVar = {MulticlassHinge: {}}
    default_max_iter = 100_000
    warm_start_uses = ("beta", "W")

    def __init__(
        self, *, shrinking: bool = True, seed: int = 0, check_every: int | None = None, **common
    ):
        super().__init__(check_every=check_every, **common)
        self.shrinking = check_bool("shrinking", shrinking)
        self.seed = check_int("seed", seed, low=0)

    @once_per_process
    def warm_up(self) -> float:
        t0 = time.perf_counter()
        for csr in (False, True):
            self._compile(csr)
        return time.perf_counter() - t0

    def warm_up_for(self, problem) -> float:
        """The epoch for the rows ``problem`` will run on (dense, or CSR for mostly-zero rows)."""
        t0 = time.perf_counter()
        self._compile(_runs_on_csr(problem.X))
        return time.perf_counter() - t0

    @staticmethod
    def _compile(csr: bool) -> None:
        X = np.array([[1.0, 0.5], [0.0, 2.0], [1.0, 1.0]])
        y = np.array([0, 1, 2], dtype=np.int64)
        k = 3
        cost = 1.0 - np.eye(k)
        C = np.ones(3)
        A = np.einsum("ij,ij->i", X, X) + 1.0
        shuffle_active(np.arange(3, dtype=np.int64), 3, np.ones(1, dtype=np.uint64))
        rows = as_rows(sparse.csr_matrix(X), np.int64) if csr else as_rows(X)
        beta = np.zeros((3, k))
        beta[np.arange(3), y] = 1.0
        Wt, wb = np.zeros((2, k)), np.zeros(k)
        index = np.arange(3, dtype=np.int64)
        active_i = np.full(3, k, dtype=np.int64)
        cls = np.tile(np.arange(k, dtype=np.int64), (3, 1))
        _jit.cs_dcd_epoch(
            rows, y, C, cost.T.copy(), A, 1.0, True, beta, Wt, wb, index, 3, active_i, cls, True,
            *_jit.cs_dcd_scratch(3, k),
        )  # fmt: skip

    def _init_state(self, problem: MulticlassHinge, warm_start) -> _DCDState:
        n, d, k = problem.n_samples, problem.n_features, problem.n_classes
        Xin = problem.X
        if not sparse.issparse(Xin) and _runs_on_csr(Xin):
            Xin = sparse.csr_matrix(Xin)
        X = as_rows(Xin, np.int64)
        reg = problem.bias == "regularized"
        s = float(problem.bias_scale) if reg else 0.0
        C = np.ascontiguousarray(problem.upper_bounds, dtype=np.float64)
        y = problem.y.astype(np.int64)
        cost = np.ascontiguousarray(problem.cost)
        A = squared_norms(problem.X) + s * s  # the linear kernel's diagonal, plus s²
        beta = _warm_start_beta(problem, warm_start)
        if beta is None:
            # β_i = C_i e_{y_i}: W̃(β) = 0 (LIBLINEAR's α = 0)
            beta = np.zeros((n, k))
            beta[np.arange(n), y] = C
            Wt, wb = np.zeros((d, k)), np.zeros(k)
        else:
            beta = np.ascontiguousarray(beta)
            W, b = problem.primal_from_dual(beta)
            Wt = np.ascontiguousarray(W.T)
            wb = b / s if reg else np.zeros(k)
        # x̃_i = 0: β_i does not move W̃, and D is maximized by all the mass on max_r Δ(r, y_i)
        zero = np.flatnonzero(A <= 0.0)
        if zero.size:
            beta[zero] = 0.0
            beta[zero, np.argmax(cost[:, y[zero]], axis=0)] = C[zero]
        native = self.stop_rule == "native"
        # gap rule: LIBLINEAR's eps at tol/10 (about where its stopping quantity certified a
        # relative gap of tol on blobs and digits); divided by 10 whenever it holds before the gap
        eps = self.tol if native else 0.1 * self.tol
        return _DCDState(
            X=X, y=y, C=C, cost=cost, costT=np.ascontiguousarray(cost.T), A=A, s=s, reg=reg,
            beta=beta, Wt=Wt,
            wb=np.ascontiguousarray(wb),
            index=np.arange(n, dtype=np.int64), active_size=n,
            active_i=np.full(n, k, dtype=np.int64),
            cls=np.tile(np.arange(k, dtype=np.int64), (n, 1)),
            rng_state=np.random.default_rng(self.seed).integers(1, 2**63, size=1, dtype=np.uint64),
            eps=eps, eps_shrink=max(10.0 * eps, 1.0),
            row_nnz=_row_nonzeros(problem.X), scratch=_jit.cs_dcd_scratch(n, k),
        )  # fmt: skip

    def _reactivate(self, st: _DCDState) -> None:
        st.active_size = st.y.shape[0]
        st.active_i[:] = st.cost.shape[0]
        st.reactivations += 1

    def _step(self, problem, st: _DCDState) -> StepOutcome:
        """A chunk: shrunk epochs until about one full pass of work is done (the examples
        visited reach n), the native rule holds, or ``max_iter`` epochs are reached. Chunks
        amortize the per-chunk bookkeeping (O(nk)) over O(n) work once shrinking has left few
        active examples."""
        if st.tighten:  # the native rule held but the certified gap did not: ask for more
            st.tighten = False
            st.eps /= 10.0
            st.eps_shrink = max(st.eps_shrink / 2.0, st.eps)
            self._reactivate(st)
            st.start_from_all = True
        n = st.y.shape[0]
        epochs, visited, converged = 0, 0, False
        st.work = 0.0
        while not converged and visited < n and st.epochs < self.max_iter:
            a = st.active_size
            shuffle_active(st.index, a, st.rng_state)
            act = st.index[:a]
            st.work += float(st.row_nnz[act] @ st.active_i[act])
            active, stopping = _jit.cs_dcd_epoch(
                st.X, st.y, st.C, st.costT, st.A, st.s, st.reg, st.beta, st.Wt, st.wb,
                st.index, a, st.active_i, st.cls, self.shrinking, *st.scratch,
            )  # fmt: skip
            epochs += 1
            st.epochs += 1
            visited += max(a, 1)
            st.active_size = int(active)
            stopping = max(float(stopping), 0.0)
            st.stopping = stopping
            # LIBLINEAR's Solver_MCSVM_CS::Solve outer loop
            if stopping < st.eps_shrink:
                if stopping < st.eps and st.start_from_all:
                    converged = True
                    st.tighten = self.stop_rule == "gap"
                else:
                    self._reactivate(st)
                    st.eps_shrink = max(st.eps_shrink / 2.0, st.eps)
                    st.start_from_all = True
            else:
                st.start_from_all = False
        return StepOutcome(epochs, converged=converged)

    def _variables(self, problem, st: _DCDState) -> dict[str, Any]:
        # views of the state, not copies (the state dies with the solve; nothing mutates it
        # between two epochs)
        b = st.s * st.wb if st.reg else np.zeros(st.cost.shape[0])
        return {"W": st.Wt.T, "b": b, "beta": st.beta}

    def _chunk_work(self, problem, st: _DCDState) -> float:
        """Weights read by the last chunk's epochs: ``nnz(x_i)`` times the active classes of
        each active example (a lower bound: an example with many active classes reads all k).
        Nonzeros, not stored entries: a dense ``X`` and its CSR copy run the same epochs."""
        return st.work

    def _certificate_work(self, problem) -> float:
        """``2 nnz(X) k + n k``: ``X W̃ᵀ`` for the primal, ``Xᵀ Γ`` for the dual."""
        k = problem.n_classes
        return float(2 * _row_nonzeros(problem.X).sum() * k + problem.n_samples * k)

    def _info(self, st: _DCDState) -> dict[str, Any]:
        return {
            "native_stopping": st.stopping,
            "native_eps": st.eps,
            "active_examples": st.active_size,
            "reactivations": st.reactivations,
        }


# ---------------------------------------------------------------------------------------------
# cs_sgd
# ---------------------------------------------------------------------------------------------


@dataclass
class _SGDState(AveragedState):
    X: Any  # dense rows, or the CSR tuple (indptr, indices, data) with int64 indices
    y: np.ndarray
    weight: np.ndarray
    cost: np.ndarray
    s: float
    reg: bool
    U: np.ndarray
    Ub: np.ndarray
    V: np.ndarray
    Vb: np.ndarray


@register
class CrammerSingerSGD(AveragedSGD):
    """The lecture's SGD for the multiclass SVM (Shalev-Shwartz & Ben-David, *Understanding
    Machine Learning*, 2014, §17.2.5), averaged (:mod:`solvers._averaged_sgd`).

    It minimizes the λ-form ``λ‖W̃‖_F² + (1/n) Σ_i sw_i ℓ_i(W̃)`` (no ½; ``sw_i`` the sample
    weights), the same problem as ``MulticlassHinge`` with ``λ = 1/(2nC)`` — taken from
    :func:`problems.scaling.lambda_from_C` with ``form="multiclass_lecture"``. Step t draws an
    example i and sets ``ŷ = argmax_r Δ(r, y_i) + ⟨w, Ψ(x_i, r) − Ψ(x_i, y_i)⟩`` and
    ``w⁽ᵗ⁺¹⁾ = (1 − 1/t) w⁽ᵗ⁾ − (1/(2λt)) sw_i [Ψ(x_i, ŷ) − Ψ(x_i, y_i)]``; the output is the
    average of the iterates. Its certificate is built by the problem from ``(W, b)`` alone
    (``MulticlassHinge.dual_from_primal``).

    Parameters
    ----------
    max_iter : int or None, default=None
        Number of epochs (default 20).
    stop_rule : {"epochs", "gap"}, default="epochs"
        ``"epochs"`` (as ``pegasos``): run ``max_iter`` epochs, then report ``optimal`` if the
        certified relative gap ``(P − D)/max(1, |P|) ≤ tol``, else ``max_iter``. ``"gap"``: stop
        as soon as the certified relative gap ≤ tol (checked every ``check_every`` epochs).
    tol : float, default=1e-6
    sampling : {"permutation", "uniform"}, default="permutation"
        Each epoch visits a seeded permutation of the examples, or draws n indices uniformly
        with replacement (the lecture's ``i ~ U(m)``).
    averaging : {"uniform", "suffix", "last"}, default="uniform"
        The output: the lecture's average of all iterates, the average of the iterates of the
        last ``⌈E/2⌉`` epochs after E epochs (suffix averaging, Rakhlin, Shamir & Sridharan,
        ICML 2012), or the last iterate.
    seed : int, default=0
    """

    name = "cs_sgd"
    supported: ClassVar = {MulticlassHinge: {}}
    default_max_iter = 20
    default_averaging = "uniform"

    @once_per_process
    def warm_up(self) -> float:
        t0 = time.perf_counter()
        for csr in (False, True):
            self._compile(csr)
        return time.perf_counter() - t0

    def warm_up_for(self, problem) -> float:
        """The epoch for the problem's rows only (dense or CSR, as given)."""
        t0 = time.perf_counter()
        self._compile(sparse.issparse(problem.X))
        return time.perf_counter() - t0

    @staticmethod
    def _compile(csr: bool) -> None:
        X = np.array([[1.0, 0.5], [0.0, 2.0], [1.0, 1.0]])
        y = np.array([0, 1, 2], dtype=np.int64)
        cost = 1.0 - np.eye(3)
        order = np.arange(3, dtype=np.int64)
        rows = as_rows(sparse.csr_matrix(X), np.int64) if csr else as_rows(X)
        U, V = np.zeros((2, 3)), np.zeros((2, 3))
        Ub, Vb, H = np.zeros(3), np.zeros(3), np.zeros(1)
        _jit.cs_sgd_epoch(rows, y, np.ones(3), cost, 1.0, True, 0.1, order, 0, U, Ub, V, Vb, H)

    def _init_state(self, problem: MulticlassHinge, warm_start) -> _SGDState:
        n, d, k = problem.n_samples, problem.n_features, problem.n_classes
        X = as_rows(problem.X, np.int64)
        reg = problem.bias == "regularized"
        sw = problem.upper_bounds / problem.C  # the sample weights (1 by default)
        return _SGDState(
            X=X,
            y=problem.y.astype(np.int64), weight=np.ascontiguousarray(sw),
            cost=np.ascontiguousarray(problem.cost), s=float(problem.bias_scale) if reg else 0.0,
            reg=reg, U=np.zeros((d, k)), Ub=np.zeros(k), V=np.zeros((d, k)), Vb=np.zeros(k),
            **self._averaging_state(
                lambda_from_C(problem.C, n, form="multiclass_lecture"), (k, d + 1)
            ),
        )  # fmt: skip

    def _n_examples(self, problem, st: _SGDState) -> int:
        return st.y.shape[0]

    def _epoch(self, st: _SGDState, order: np.ndarray) -> int:
        return _jit.cs_sgd_epoch(
            st.X, st.y, st.weight, st.cost, st.s, st.reg, st.lam, order, st.t, st.U, st.Ub,
            st.V, st.Vb, st.H,
        )  # fmt: skip

    def _accumulators(self, st: _SGDState) -> tuple[np.ndarray, np.ndarray]:
        """``U_t, V_t`` as (k, d+1) arrays: ``W̃`` with the bias feature's weights last."""
        return np.vstack([st.U, st.Ub[None, :]]).T, np.vstack([st.V, st.Vb[None, :]]).T

    def _variables(self, problem, st: _SGDState) -> dict[str, Any]:
        Wt = self._average(st)
        b = st.s * Wt[:, -1] if st.reg else np.zeros(st.cost.shape[0])
        return {"W": np.ascontiguousarray(Wt[:, :-1]), "b": np.ascontiguousarray(b)}

    def _info(self, st: _SGDState) -> dict[str, Any]:
        return {"steps": st.t, "lambda": st.lam}
