"""Pegasos: primal estimated sub-gradient solver for the soft-margin hinge SVM.

Problem, in the λ-form of Pegasos (docs/ARCHITECTURE.md §2; ``λ = 1/(nC)`` from
:func:`problems.scaling.lambda_from_C`, the same optimum as the C-form ``P = nC·F``):

.. math::

    \\min_{w, b} F(w, b) = \\frac{\\lambda}{2}\\lVert \\tilde w\\rVert^2
        + \\frac1n \\sum_{i=1}^n c_i \\max\\bigl(0, 1 - y_i (w\\cdot x_i + b)\\bigr),

with ``c_i`` the problem's ``sample_weight`` (``C_i = C c_i``). The bias is what the problem
declares: ``"regularized"`` — a constant feature ``s = bias_scale`` inside ``w̃ = (w, w_b)``,
``b = s·w_b``; ``"none"`` — ``b = 0``, ``w̃ = w``; ``"free"`` — ``b`` unregularized, updated with the
same step ``η_t`` on the loss subgradient only (``b ← b + (η_t/|A_t|) Σ_{A_t⁺} c_i y_i``; no
shrink, no projection). The free bias is outside Pegasos's analysis: ``F`` is not strongly
convex in ``b`` (Shalev-Shwartz et al. 2011, §6 discuss the alternatives); it is the usual
practice (scikit-learn's SGDClassifier updates its intercept the same way).

Step ``t`` (mini-batch ``A_t`` of size ``k``, margins at ``w_t``, ``A_t⁺`` the margin violators):
``η_t = 1/(λt)``, ``w̃ ← (1 − η_t λ) w̃ + (η_t/|A_t|) Σ_{A_t⁺} c_i y_i x̃_i``, then optionally the
projection onto the ball ``‖w̃‖ ≤ ρ``, ``ρ = sqrt(mean(c)/λ)`` (``1/√λ`` with unit weights: the
optimum lies in it, Pegasos Theorem 1's argument with ``0 ≤ α_i ≤ c_i/n``). An epoch is
``⌈n/k⌉`` steps over a fresh seeded permutation (``sampling="shuffle"``, random reshuffling) or
over ``n`` indices drawn uniformly with replacement (``sampling="replacement"``, the paper's
i.i.d. sampling). The jitted epochs (:mod:`solvers._jit.pegasos`) use ``w̃ = a·v`` so that a
step costs O(nnz of the batch).

Returned point: the last iterate (``averaging="none"``) or an average of the iterates
``w̃_{t+1}`` after each step: ``"uniform"`` — all of them (the lecture's ``w̄ = (1/T) Σ_t w_t``);
``"suffix"`` — those of the last half of the steps (α-suffix averaging with α = 1/2, Rakhlin,
Shamir & Sridharan 2012), any time: each epoch is run as two half-epochs whose sums are kept,
and the window is the shortest run of recent half-epochs holding at least half of all the steps
(exactly the last half when an epoch has an even number of steps; memory: E vectors of length
d̃ after E epochs); ``"polynomial"`` — weights ``ρ_t ∝ t^η`` (polynomial-decay averaging, Shamir
& Zhang 2013, η = 3 by default). The last iterate is always in ``result.info``.

Stopping: ``stop_rule="epochs"`` (default) runs exactly ``max_iter`` epochs (default 20); the
status is then decided by the problem's certificate, as everywhere in svmbench: ``optimal`` if the
certified relative gap ≤ ``tol``, ``max_iter`` otherwise (with its ``ConvergenceWarning``).
``stop_rule="gap"`` stops early when the certified relative gap ≤ ``tol`` (checked every
``check_every`` epochs, timed). The gap is always the problem's: ``problem.certificate(w=, b=)``,
whose dual point comes from ``dual_from_primal``: a few passes over the data far from the
optimum, plus the small near-margin QP only once the cheap point certifies a relative gap below
``problems._linear.QP_BELOW_REL_GAP``, so that the trace does not solve a QP at every checkpoint.

References
----------
S. Shalev-Shwartz, Y. Singer, N. Srebro, A. Cotter. Pegasos: primal estimated sub-gradient solver
for SVM. Mathematical Programming 127(1):3–30, 2011.
O. Shamir, T. Zhang. Stochastic gradient descent for non-smooth optimization: convergence results
and optimal averaging schemes. ICML 2013.
A. Rakhlin, O. Shamir, K. Sridharan. Making gradient descent optimal for strongly convex stochastic
optimization. ICML 2012.
W. Xu. Towards optimal one pass large scale learning with averaged stochastic gradient descent.
arXiv:1107.2490, 2011 (the lazy averaging of sparse updates).
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import SoftMarginPrimal
from svmbench.problems.scaling import lambda_from_C
from svmbench.problems.validation import check_bool, check_int, check_option, check_real
from svmbench.solvers._jit import pegasos as _jit
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.registry import register

AVERAGING = ("none", "uniform", "suffix", "polynomial")
SAMPLING = ("shuffle", "replacement")
_AVG_CODE = {
    "none": _jit.AVG_NONE,
    "uniform": _jit.AVG_FLAT,
    "suffix": _jit.AVG_FLAT,
    "polynomial": _jit.AVG_POLY,
}


@dataclass
class _State:
    """Everything one solve mutates."""

    X: Any  # dense ndarray, or (indptr, indices, data) of a CSR matrix, int64 indices
    y: np.ndarray
    c: np.ndarray  # loss weights c_i (sample_weight)
    xsq: np.ndarray  # ‖x̃_i‖²
    lam: float
    s: float  # constant feature of a regularized bias, 0 otherwise
    free_bias: bool
    radius: float
    v: np.ndarray  # w̃ = scal[A]·v
    u: np.ndarray  # lazy averaging correction: S = acc + β v − u
    acc: np.ndarray  # flushed part of S
    scal: np.ndarray
    rng: np.random.Generator
    t: int = 0  # steps done
    epochs: int = 0
    # running weighted sum of iterates ("uniform", "polynomial"): (Σ ρ w̃, Σ ρ b, Σ ρ)
    total: np.ndarray | None = None
    total_b: float = 0.0
    total_rho: float = 0.0
    # sums over the half-epochs of the suffix window ("suffix"): (Σ w̃, Σ b, Σ ρ, steps)
    window: deque = field(default_factory=deque)


@register
class Pegasos(IterativeSolver):
    """Pegasos (mini-batch, projected, averaged) on the soft-margin hinge primal.

    Accepts :class:`~problems.SoftMarginPrimal` with ``loss="hinge"``, any bias, dense or CSR
    ``X``, per-example weights.

    Parameters
    ----------
    max_iter : int or None, default=None
        Number of epochs (default 20). With ``stop_rule="epochs"`` every run does exactly this
        many; with ``"gap"`` it is the cap.
    stop_rule : {"epochs", "gap"}, default="epochs"
        ``"epochs"``: run ``max_iter`` epochs, then report ``optimal`` if the certified relative
        gap ``(P − D)/max(1, |P|) ≤ tol``, else ``max_iter``. ``"gap"``: stop as soon as it is.
    tol : float, default=1e-3
        Target of the certified relative duality gap (C-form ``P``, ``D``).
    batch_size : int, default=1
        Mini-batch size k (≥ 1); an epoch is ⌈n/k⌉ steps.
    averaging : {"none", "uniform", "suffix", "polynomial"}, default="suffix"
        Which point is returned (see the module docstring).
    polynomial_eta : float, default=3.0
        η of polynomial-decay averaging (≥ 0; η = 0 is uniform averaging).
    project : bool, default=True
        Project onto the ball ``‖w̃‖ ≤ sqrt(mean(c)/λ)`` after each step.
    sampling : {"shuffle", "replacement"}, default="shuffle"
        A fresh permutation per epoch, or n indices drawn uniformly with replacement.
    seed : int, default=0
        Seed of ``np.random.default_rng`` drawing the epochs' indices: the same seed reproduces
        every iterate.
    check_every : int, default=1
        Epochs between two gap checks (``stop_rule="gap"``).
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True
        Certified checkpoints on the geometric schedule of epochs (``"every"``: after each
        epoch), drawn off the solver clock (see :class:`~solvers.base.IterativeSolver`).

    Notes
    -----
    ``result.info`` holds ``lambda``, ``steps`` (t), ``examples_seen`` (Σ batch sizes),
    ``epochs``, ``last_w`` and ``last_b`` (the last iterate), ``radius`` and the options.
    Warm starts are refused: the first step's shrink ``1 − η_1 λ = 0`` would erase them.
    """

    name = "pegasos"
    iteration_unit = "epochs"
    stochastic = True
    supported: ClassVar = {SoftMarginPrimal: {"loss": ("hinge",)}}
    default_max_iter = 20
    warm_start_refusal = (
        "does not take a warm start: its first step (shrink 1 − η₁λ = 0) erases any starting point"
    )
    stop_rules = ("epochs", "gap")
    budget_rules = ("epochs",)

    def __init__(
        self,
        *,
        tol: float = 1e-3,
        stop_rule: str = "epochs",
        batch_size: int = 1,
        averaging: str = "suffix",
        polynomial_eta: float = 3.0,
        project: bool = True,
        sampling: str = "shuffle",
        seed: int = 0,
        **common,
    ):
        super().__init__(tol=tol, stop_rule=stop_rule, **common)
        self.batch_size = check_int("batch_size", batch_size, low=1)
        self.averaging = check_option("averaging", averaging, AVERAGING)
        self.polynomial_eta = check_real(
            "polynomial_eta", polynomial_eta, low=0.0, high=None, closed="left"
        )
        if not isinstance(project, bool | np.bool_):
            raise ValueError(f"project must be True or False, got {project!r}")
        self.project = check_bool("project", project)
        self.sampling = check_option("sampling", sampling, SAMPLING)
        self.seed = check_int("seed", seed, low=0)

    # ---- set-up ----------------------------------------------------------------------------------
    @once_per_process
    def warm_up(self) -> float:
        """Compile both epoch kernels (dense, CSR) on a 2×2 problem, untimed."""
        t0 = time.perf_counter()
        for rows in ("dense", "csr"):
            _compile_epoch(rows)
        return time.perf_counter() - t0

    def warm_up_for(self, problem) -> float:
        """Compile the epoch of ``problem``'s rows only (dense or CSR), once per process;
        untimed."""
        if not isinstance(problem, SoftMarginPrimal):
            return self.warm_up()
        t0 = time.perf_counter()
        _compile_epoch("csr" if sparse.issparse(problem.X) else "dense")
        return time.perf_counter() - t0

    def _init_state(self, problem: SoftMarginPrimal, warm_start) -> _State:
        n, d = problem.n_samples, problem.n_features
        lam = lambda_from_C(problem.C, n)
        c = (
            np.ones(n)
            if problem.sample_weight is None
            else np.ascontiguousarray(problem.sample_weight, dtype=np.float64)
        )
        s = float(problem.bias_scale) if problem.bias == "regularized" else 0.0
        data = as_rows(problem.X, np.int64)
        xsq = _row_sq_norms(problem.X) + s * s
        dt = d + (1 if s > 0 else 0)
        state = _State(
            X=data,
            y=problem.y,
            c=c,
            xsq=xsq,
            lam=lam,
            s=s,
            free_bias=problem.bias == "free",
            radius=math.sqrt(float(c.mean()) / lam),
            v=np.zeros(dt),
            u=np.zeros(dt),
            acc=np.zeros(dt),
            scal=_initial_scalars(),
            rng=np.random.default_rng(self.seed),
        )
        if self.averaging in ("uniform", "polynomial"):
            state.total = np.zeros(dt)
        return state

    # ---- one epoch -------------------------------------------------------------------------------
    def _step(self, problem, state: _State) -> StepOutcome:
        n = problem.n_samples
        if self.sampling == "shuffle":
            order = state.rng.permutation(n).astype(np.int64)
        else:
            order = state.rng.integers(0, n, size=n, dtype=np.int64)
        k = self.batch_size
        if self.averaging == "suffix":
            # two parts (half-epochs, cut at a batch boundary): the window is then the last half
            # of the steps at every epoch end
            steps = -(-n // k)
            cut = min(n, (steps - steps // 2) * k)
            parts = [order[:cut], order[cut:]] if cut < n else [order]
        else:
            parts = [order]
        scal = state.scal
        for part in parts:
            # exact ‖v‖² once per part (the kernel updates it incrementally); fresh lazy sums
            scal[_jit.VSQ] = float(state.v @ state.v)
            scal[_jit.BETA] = scal[_jit.BSUM] = scal[_jit.RHOSUM] = 0.0
            state.u[:] = 0.0
            state.acc[:] = 0.0
            t_before = state.t
            state.t = _run_epoch(
                state.X,
                state.y,
                state.c,
                state.xsq,
                part,
                k,
                state.lam,
                state.t,
                state.s,
                state.free_bias,
                self.project,
                state.radius,
                _AVG_CODE[self.averaging],
                self.polynomial_eta,
                state.v,
                state.u,
                state.acc,
                scal,
            )
            if self.averaging == "none":
                continue
            # S_part = Σ_t ρ_t w̃_{t+1} = acc + β v − u
            part_sum = state.acc + scal[_jit.BETA] * state.v - state.u
            if self.averaging == "suffix":
                state.window.append(
                    (part_sum, scal[_jit.BSUM], scal[_jit.RHOSUM], state.t - t_before)
                )
                # the shortest run of recent parts holding at least half of all the steps
                in_window = sum(e[3] for e in state.window)
                while 2 * (in_window - state.window[0][3]) >= state.t:
                    in_window -= state.window.popleft()[3]
            else:
                state.total += part_sum
                state.total_b += scal[_jit.BSUM]
                state.total_rho += scal[_jit.RHOSUM]
        state.epochs += 1
        return StepOutcome(1)

    # ---- the point -------------------------------------------------------------------------------
    def _last_iterate(self, state: _State) -> tuple[np.ndarray, float]:
        wt = state.scal[_jit.A] * state.v
        return self._split(wt, float(state.scal[_jit.B]), state)

    def _split(self, wt: np.ndarray, b: float, state: _State) -> tuple[np.ndarray, float]:
        """``(w, b)`` from ``w̃`` (and the free bias)."""
        if state.s > 0:
            return wt[:-1].copy(), state.s * float(wt[-1])
        return wt.copy(), (b if state.free_bias else 0.0)

    def _variables(self, problem, state: _State) -> dict[str, Any]:
        if self.averaging == "none" or state.epochs == 0:
            w, b = self._last_iterate(state)
        elif self.averaging == "suffix":
            total = sum(e[0] for e in state.window)
            total_b = sum(e[1] for e in state.window)
            rho = sum(e[2] for e in state.window)
            w, b = self._split(total / rho, total_b / rho, state)
        else:
            w, b = self._split(
                state.total / state.total_rho, state.total_b / state.total_rho, state
            )
        return {"w": w, "b": b}

    def _info(self, state: _State) -> dict[str, Any]:
        last_w, last_b = self._last_iterate(state)
        return {
            "lambda": state.lam,
            "steps": state.t,
            "examples_seen": state.epochs * state.y.shape[0],  # every epoch visits n examples
            "epochs": state.epochs,
            "radius": state.radius,
            "last_w": last_w,
            "last_b": last_b,
            "averaging": self.averaging,
            "batch_size": self.batch_size,
            "seed": self.seed,
        }


#: The rows ("dense", "csr") whose epoch this process has compiled.
_COMPILED_ROWS: set[str] = set()


def _compile_epoch(rows: str) -> None:
    """Run the epoch once on a 2×2 problem of ``rows`` ("dense" or "csr"), once per process."""
    if rows in _COMPILED_ROWS:
        return
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0])
    ones = np.ones(2)
    order = np.arange(2, dtype=np.int64)
    data = as_rows(sparse.csr_matrix(X) if rows == "csr" else X, np.int64)
    v, u, acc, scal = np.zeros(3), np.zeros(3), np.zeros(3), _initial_scalars()
    _run_epoch(data, y, ones, ones + 1.0, order, 1, 1.0, 0, 1.0, True, True, 1.0, 2, 3.0,
               v, u, acc, scal)  # fmt: skip
    _COMPILED_ROWS.add(rows)


def _initial_scalars() -> np.ndarray:
    scal = np.zeros(_jit.N_SCALARS)
    scal[_jit.A] = 1.0
    return scal


def _row_sq_norms(X) -> np.ndarray:
    if sparse.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


def _run_epoch(*args):
    """One jitted epoch (dense rows or the CSR tuple); returns the step counter after it."""
    return _jit.pegasos_epoch(*args)
