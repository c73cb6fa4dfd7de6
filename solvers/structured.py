"""The chain structured SVM by the stochastic subgradient method (``ssvm_sgd``).

Problem (``problems.structured.ChainStructuredHinge``; Tsochantaridis et al., JMLR 2005)::

    min_w ½‖w‖² + Σ_i C_i max_{y'} (Δ(y', y_i) + ⟨w, Ψ(x_i, y') − Ψ(x_i, y_i)⟩),

solved in the lecture's λ-form ``λ‖w‖² + (1/n) Σ_i sw_i ℓ_i(w)`` with ``λ = 1/(2nC)``
(``problems.scaling.lambda_from_C(form="multiclass_lecture")``) by the lecture's SGD: step t
draws a sequence i, finds ``ŷ = argmax_{y'} Δ(y', y_i) + ⟨w, Ψ(x_i, y')⟩`` by loss-augmented
Viterbi (normalized Hamming loss) and sets
``w ← (1 − 1/t) w − (1/(2λt)) sw_i [Ψ(x_i, ŷ) − Ψ(x_i, y_i)]``; the output is averaged
(Ratliff, Bagnell & Zinkevich 2007 call this the subgradient method for structured prediction;
Shalev-Shwartz & Ben-David 2014, §17.2.5 and §17.3). The certificate is the problem's
(``ChainStructuredHinge.certificate``): exact primal value, and a valid but loose dual bound.

Block-coordinate Frank–Wolfe (Lacoste-Julien, Jaggi, Schmidt & Pletscher, ICML 2013) is not
implemented: its dual iterate lives in the per-sequence convex hulls, which the problem would
have to be handed (and check) for the gap to stay the problem's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from svmbench.problems.scaling import lambda_from_C
from svmbench.problems.structured import ChainStructuredHinge
from svmbench.solvers._averaged_sgd import AveragedSGD, AveragedState
from svmbench.solvers._jit import structured as _jit
from svmbench.solvers.base import once_per_process
from svmbench.solvers.registry import register


@dataclass
class _State(AveragedState):
    X: np.ndarray
    y: np.ndarray
    offsets: np.ndarray
    use_T: bool
    weight: np.ndarray
    UE: np.ndarray
    UT: np.ndarray
    VE: np.ndarray
    VT: np.ndarray


@register
class StructuredSGD(AveragedSGD):
    """Stochastic subgradient method for the chain structured SVM, averaged
    (:mod:`solvers._averaged_sgd`).

    Parameters
    ----------
    max_iter : int or None, default=None
        Number of epochs (default 30).
    stop_rule : {"epochs", "gap"}, default="epochs"
        ``"epochs"``: run ``max_iter`` epochs, then report ``optimal`` only if the certified
        relative gap ≤ tol (else ``max_iter``). ``"gap"``: stop as soon as it is.
    tol : float, default=1e-6
    averaging : {"uniform", "suffix", "last"}, default="suffix"
        Average of all iterates (the lecture), of those of the last ``⌈E/2⌉`` epochs, or the
        last iterate.
    sampling : {"permutation", "uniform"}, default="permutation"
    seed : int, default=0
    """

    name = "ssvm_sgd"
    supported: ClassVar = {ChainStructuredHinge: {}}
    default_max_iter = 30
    default_averaging = "suffix"

    @once_per_process
    def warm_up(self) -> float:
        t0 = time.perf_counter()
        X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        y = np.array([0, 1, 1], dtype=np.int64)
        offsets = np.array([0, 2, 3], dtype=np.int64)
        for use_T in (True, False):
            z = np.zeros((2, 2))
            _jit.ssvm_sgd_epoch(
                X, y, offsets, use_T, np.ones(2), 0.1, np.arange(2, dtype=np.int64), 0,
                z.copy(), z.copy(), z.copy(), z.copy(), np.zeros(1),
            )  # fmt: skip
        return time.perf_counter() - t0

    def _init_state(self, problem: ChainStructuredHinge, warm_start) -> _State:
        q, d = problem.n_states, problem.X.shape[1]
        return _State(
            X=np.ascontiguousarray(problem.X), y=problem.y, offsets=problem.offsets,
            use_T=problem.transitions, weight=problem.upper_bounds / problem.C,
            UE=np.zeros((q, d)), UT=np.zeros((q, q)), VE=np.zeros((q, d)), VT=np.zeros((q, q)),
            **self._averaging_state(
                lambda_from_C(problem.C, problem.n_samples, form="multiclass_lecture"),
                q * d + q * q,
            ),
        )  # fmt: skip

    def _n_examples(self, problem, st: _State) -> int:
        return problem.n_samples

    def _epoch(self, st: _State, order: np.ndarray) -> int:
        return _jit.ssvm_sgd_epoch(
            st.X, st.y, st.offsets, st.use_T, st.weight, st.lam, order, st.t,
            st.UE, st.UT, st.VE, st.VT, st.H,
        )  # fmt: skip

    def _accumulators(self, st: _State) -> tuple[np.ndarray, np.ndarray]:
        """``U_t, V_t`` flattened as ``w = (E, T)``."""
        return (
            np.concatenate([st.UE.ravel(), st.UT.ravel()]),
            np.concatenate([st.VE.ravel(), st.VT.ravel()]),
        )

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        w = self._average(st)
        if not problem.transitions:
            w = w[: problem.n_states * problem.X.shape[1]]
        return {"w": w}

    def _info(self, st: _State) -> dict[str, Any]:
        return {"steps": st.t, "lambda": st.lam, "epochs": st.epochs}
