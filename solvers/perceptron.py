"""The perceptron (Rosenblatt 1958), as in the lecture notes, and the averaged perceptron.

A baseline, not an optimizer of an SVM objective. With ``x̃_i = (x_i, s)`` — the constant feature
``s = bias_scale`` carries the bias (lecture: "données étendues avec une composante
supplémentaire"), ``b = s·w_b`` — or ``x̃_i = x_i`` for ``bias="none"``, each epoch visits the
examples once and corrects every mistake:

.. math::

    y_i\\, \\tilde w\\cdot\\tilde x_i \\le 0 \\;\\Longrightarrow\\;
    \\tilde w \\leftarrow \\tilde w + \\mu\\, y_i\\, \\tilde x_i

(the lecture's ``a ← a + τ u x, b ← b + τ u``, learning rate μ = τ). On separable data, from
``w̃₀ = 0``, the number of corrections is at most ``(R̃/γ̃)²`` (Novikoff 1962; the lecture's
``t ≤ R²/γ²``) with ``R̃ = max_i ‖x̃_i‖`` and ``γ̃`` the largest margin of a unit ``w̃``, i.e.
``γ̃ = 1/‖w̃*‖`` for the hard-margin SVM with a regularized bias of scale ``s``. From zero the
iterates are ``μ Σ y_i x̃_i`` over the mistakes, so the predictions, hence the mistakes, do not
depend on μ. The averaged perceptron (Freund & Schapire 1999) returns the average of ``w̃`` over
every example seen.

Stopping (the method's native rule, the only one): as soon as the returned point classifies every
training example correctly (``y_i f(x_i) > 0``) — for the plain perceptron, an epoch without a
correction; for the averaged one, ``w̄`` is checked after each epoch (timed). Separated is not
optimal: the status is then ``not_certified`` (``info["separated"]`` says it), and ``optimal`` only
in the rare case where the certificate of ``(w, b)`` meets ``tol``; otherwise after ``max_iter``
epochs with status ``max_iter``.

Judgement: the perceptron has no duality gap of its own; ``result.info`` reports
``training_error`` (fraction with ``y_i f(x_i) ≤ 0``), ``mistakes`` (total corrections),
``geometric_margin`` (``min_i y_i w̃·x̃_i / ‖w̃‖`` when separated, NaN otherwise), ``radius``
(R̃) and ``separated``. The result still carries the problem's certificate of ``(w, b)``, as every
result does: valid, and large. The classifier ``sign(w·x + b)`` does not depend on the scale of
``w̃``; for :class:`~problems.HardMarginPrimal` the returned ``(w, b)`` is the perceptron's point
divided by ``min_i m_i`` when it separates (the same classifier at the hard margin's scale), so
``primal = ½‖w̃‖²/min_i m_i² = 1/(2 γ²)`` compares its margin ``γ`` with the maximal one
(``primal* = 1/(2 γ̃²)``); a non-separating point has ``primal = inf`` (not certified). For
:class:`~problems.SoftMarginPrimal` the returned point is the perceptron's own, judged by the
soft-margin objective. The perceptron's own point is always in ``info["raw_w"]``,
``info["raw_b"]``.

References
----------
F. Rosenblatt. The perceptron: a probabilistic model for information storage and organization in
the brain. Psychological Review 65(6):386–408, 1958.
A. B. J. Novikoff. On convergence proofs on perceptrons. Symposium on the Mathematical Theory of
Automata, 1962.
Y. Freund, R. E. Schapire. Large margin classification using the perceptron algorithm. Machine
Learning 37(3):277–296, 1999.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import HardMarginPrimal, SoftMarginPrimal
from svmbench.problems.validation import check_bool, check_int, check_option, check_real
from svmbench.solvers._jit import perceptron as _jit
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.registry import register

INITS = ("zero", "random")


@dataclass
class _State:
    X: Any  # dense ndarray, or (indptr, indices, data) with int64 indices
    y: np.ndarray
    s: float  # constant bias feature, 0 for bias="none"
    w: np.ndarray  # w̃ = (w, w_b)
    u: np.ndarray  # averaging: w̄ = w̃ − u/T
    rng: np.random.Generator
    radius: float  # R̃ = max ‖x̃_i‖
    seen: int = 0  # T, examples seen
    epochs: int = 0
    mistakes: int = 0
    last_errors: int = -1  # training errors of the returned point at the last check


@register
class Perceptron(IterativeSolver):
    """The perceptron (optionally averaged) as a baseline on linear binary problems.

    Accepts :class:`~problems.HardMarginPrimal` and :class:`~problems.SoftMarginPrimal` (any loss),
    dense or CSR ``X``; ``bias="none"`` (no bias) or ``"regularized"``/``"free"`` (the bias is
    learnt through the constant feature ``s = problem.bias_scale``; the perceptron has no
    regularizer, so the two differ only in the certificate that judges the result).

    Parameters
    ----------
    learning_rate : float, default=1.0
        μ (the lecture's τ), > 0.
    init : {"zero", "random"}, default="zero"
        ``w̃₀ = 0``, or a random direction with the norm of one correction, ``μ R̃``.
    averaged : bool, default=False
        Return the averaged perceptron ``w̄ = (1/T) Σ_t w̃_t`` over every example seen.
    shuffle : bool, default=False
        Visit the examples in a fresh seeded random order each epoch (the lecture visits them
        in order, ``i = 1..m``).
    seed : int, default=0
        Seed of ``np.random.default_rng`` (random start, shuffling).
    max_iter : int or None, default=None
        Epoch cap (default 1000); reaching it means the data were not separated: status
        ``max_iter``.
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True
        Certified checkpoints on the geometric schedule of epochs (``"every"``: after each
        epoch), drawn off the solver clock. Far from the soft-margin optimum, as the
        perceptron's points are, a certificate costs a few passes over the data (no QP).

    Notes
    -----
    ``tol`` is not used: the only stopping rule is zero training errors (``stop_rule="native"``).
    """

    name = "perceptron"
    iteration_unit = "epochs"
    stochastic = True
    #: A baseline: it minimizes no SVM objective, so `svmbench check` holds it to no distance from
    #: the optimum, only to its certificate and to never claiming to separate inseparable data.
    check_rtol: ClassVar[float] = math.inf
    supported: ClassVar = {HardMarginPrimal: {}, SoftMarginPrimal: {}}
    default_max_iter = 1000
    warm_start_refusal = "does not take a warm start (it starts from w = 0)"
    stop_rules = ("native",)

    def __init__(
        self,
        *,
        learning_rate: float = 1.0,
        init: str = "zero",
        averaged: bool = False,
        shuffle: bool = False,
        seed: int = 0,
        stop_rule: str = "native",
        **common,
    ):
        super().__init__(stop_rule=stop_rule, **common)
        self.learning_rate = check_real("learning_rate", learning_rate, low=0.0)
        self.init = check_option("init", init, INITS)
        for flag, value in (("averaged", averaged), ("shuffle", shuffle)):
            if not isinstance(value, bool | np.bool_):
                raise ValueError(f"{flag} must be True or False, got {value!r}")
        self.averaged = check_bool("averaged", averaged)
        self.shuffle = check_bool("shuffle", shuffle)
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
        if not isinstance(problem, HardMarginPrimal | SoftMarginPrimal):
            return self.warm_up()
        t0 = time.perf_counter()
        _compile_epoch("csr" if sparse.issparse(problem.X) else "dense")
        return time.perf_counter() - t0

    def _init_state(self, problem, warm_start) -> _State:
        s = float(problem.bias_scale) if problem.bias != "none" else 0.0
        X = problem.X
        sq = (
            np.asarray(X.multiply(X).sum(axis=1)).ravel()
            if sparse.issparse(X)
            else np.einsum("ij,ij->i", X, X)
        )
        radius = float(np.sqrt(np.max(sq + s * s)))
        dt = problem.n_features + (1 if s > 0 else 0)
        rng = np.random.default_rng(self.seed)
        w = np.zeros(dt)
        if self.init == "random":
            g = rng.standard_normal(dt)
            w = self.learning_rate * radius * g / np.linalg.norm(g)
        return _State(
            X=as_rows(X, np.int64), y=problem.y, s=s, w=w, u=np.zeros(dt), rng=rng, radius=radius
        )

    # ---- one epoch -------------------------------------------------------------------------------
    def _step(self, problem, state: _State) -> StepOutcome:
        n = problem.n_samples
        order = (
            state.rng.permutation(n).astype(np.int64)
            if self.shuffle
            else np.arange(n, dtype=np.int64)
        )
        made = _run_epoch(
            state.X,
            state.y,
            order,
            self.learning_rate,
            state.s,
            state.seen,
            self.averaged,
            state.w,
            state.u,
        )
        state.seen += n
        state.epochs += 1
        state.mistakes += int(made)
        if not self.averaged:
            state.last_errors = int(made)  # no correction ⇔ w̃ separated every example
        else:  # the stopping test of the averaged perceptron: is w̄ separating? (timed)
            state.last_errors = int(np.sum(self._margins(problem, state) <= 0.0))
        return StepOutcome(1, converged=state.last_errors == 0)

    # ---- the point -------------------------------------------------------------------------------
    def _point(self, state: _State) -> np.ndarray:
        """The returned ``w̃``: last iterate, or ``w̄ = w̃ − u/T``."""
        if self.averaged and state.seen > 0:
            return state.w - state.u / state.seen
        return state.w.copy()

    def _raw(self, state: _State) -> tuple[np.ndarray, float]:
        """The perceptron's own ``(w, b)``."""
        wt = self._point(state)
        if state.s > 0:
            return wt[:-1], state.s * float(wt[-1])
        return wt, 0.0

    def _variables(self, problem, state: _State) -> dict[str, Any]:
        w, b = self._raw(state)
        if isinstance(problem, HardMarginPrimal):
            # the same classifier at the hard margin's scale: min_i m_i = 1 when separated
            m_min = float(np.min(problem.margins(w, b)))
            if m_min > 0:
                w, b = w / m_min, b / m_min
        return {"w": w, "b": b}

    def _margins(self, problem, state: _State) -> np.ndarray:
        return problem.margins(*self._raw(state))

    def _info(self, state: _State) -> dict[str, Any]:
        # the result's problem is not passed to _info: margins are recomputed from the state
        wt = self._point(state)
        X = state.X
        if isinstance(X, tuple):
            indptr, indices, data = X
            n = indptr.shape[0] - 1
            d = wt.shape[0] - (1 if state.s > 0 else 0)
            f = sparse.csr_matrix((data, indices, indptr), shape=(n, d)) @ wt[:d]
        else:
            d = X.shape[1]
            f = X @ wt[:d]
        if state.s > 0:
            f = f + state.s * wt[-1]
        m = state.y * f
        errors = int(np.sum(m <= 0.0))
        norm = float(np.linalg.norm(wt))
        separated = errors == 0 and norm > 0
        raw_w, raw_b = self._raw(state)
        return {
            "raw_w": raw_w,
            "raw_b": raw_b,
            "training_error": errors / m.shape[0],
            "mistakes": state.mistakes,
            "geometric_margin": float(m.min()) / norm if separated else math.nan,
            "separated": separated,
            "radius": state.radius,
            "epochs": state.epochs,
            "examples_seen": state.seen,
            "learning_rate": self.learning_rate,
            "averaged": self.averaged,
        }


def _run_epoch(X, y, order, mu, s, t0, averaged, w, u) -> int:
    return _jit.perceptron_epoch(X, y, order, mu, s, t0, averaged, w, u)


#: The rows ("dense", "csr") whose epoch this process has compiled.
_COMPILED_ROWS: set[str] = set()


def _compile_epoch(rows: str) -> None:
    """Run the epoch once on a 2×2 problem of ``rows`` ("dense" or "csr"), once per process."""
    if rows in _COMPILED_ROWS:
        return
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0])
    order = np.arange(2, dtype=np.int64)
    data = as_rows(sparse.csr_matrix(X) if rows == "csr" else X, np.int64)
    _run_epoch(data, y, order, 1.0, 1.0, 0, True, np.zeros(3), np.zeros(3))
    _COMPILED_ROWS.add(rows)
