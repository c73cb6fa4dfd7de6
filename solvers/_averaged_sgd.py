"""The averaged stochastic subgradient method on a structured hinge, shared by ``cs_sgd`` and
``ssvm_sgd``.

Both minimize the lecture's λ-form ``λ‖w‖² + (1/n) Σ_i sw_i ℓ_i(w)`` with ``λ = 1/(2nC)``
(Shalev-Shwartz & Ben-David, *Understanding Machine Learning*, 2014, §17.2.5 and §17.3): step t
draws an example i, finds its loss-augmented prediction ŷ and sets
``w⁽ᵗ⁺¹⁾ = (1 − 1/t) w⁽ᵗ⁾ − (1/(2λt)) sw_i [Ψ(x_i, ŷ) − Ψ(x_i, y_i)]``. The jitted epochs keep
``w⁽ᵗ⁺¹⁾ = −U_t/(2λt)`` and ``Σ_{s=1}^{t+1} w⁽ˢ⁾ = −(H_t U_t − V_t)/(2λ)``, so that any average
is read in O(dim w). The output is the average of all iterates, of those of the last ``⌈E/2⌉``
epochs after E epochs (suffix averaging, Rakhlin, Shamir & Sridharan, ICML 2012), or the last
iterate. The subclasses say what an example is and how ``w`` is laid out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from svmbench.problems.validation import check_int, check_option
from svmbench.solvers.base import IterativeSolver, StepOutcome


@dataclass
class AveragedState:
    """The averaging's part of an SGD state: λ, ``H_t = Σ_{s≤t} 1/s`` (in ``H[0]``, updated by
    the jitted epoch), the step count t, the epochs, the generator of the draws, and
    ``sums``: (epoch, number of iterates, their sum) at the end of the epochs of the suffix
    window (``averaging="suffix"``)."""

    lam: float
    H: np.ndarray
    t: int
    epochs: int
    rng: np.random.Generator
    sums: list


class AveragedSGD(IterativeSolver):
    """Base of the averaged SGD solvers: options, the draws of an epoch, the averages.

    Subclasses implement ``warm_up``, ``_init_state`` (a dataclass extending
    :class:`AveragedState`, built with :meth:`_averaging_state`), :meth:`_n_examples`,
    :meth:`_epoch`, :meth:`_accumulators` and ``_variables`` (from :meth:`_average`).
    """

    iteration_unit = "epochs"
    stochastic = True
    stop_rules = ("epochs", "gap")
    budget_rules = ("epochs",)
    warm_start_refusal = "does not take a warm start (its average starts at w = 0)"
    #: ``averaging`` when the constructor is not given one.
    default_averaging: ClassVar[str] = "uniform"

    def __init__(
        self,
        *,
        averaging: str | None = None,
        sampling: str = "permutation",
        seed: int = 0,
        stop_rule: str = "epochs",
        **common,
    ):
        super().__init__(stop_rule=stop_rule, **common)
        averaging = self.default_averaging if averaging is None else averaging
        self.averaging = check_option("averaging", averaging, ("uniform", "suffix", "last"))
        self.sampling = check_option("sampling", sampling, ("permutation", "uniform"))
        self.seed = check_int("seed", seed, low=0)

    def _averaging_state(self, lam: float, shape) -> dict:
        """The :class:`AveragedState` fields at t = 0 (the sum of the one iterate w⁽¹⁾ = 0)."""
        return dict(
            lam=lam, H=np.zeros(1), t=0, epochs=0, rng=np.random.default_rng(self.seed),
            sums=[(0, 1, np.zeros(shape))],
        )  # fmt: skip

    def _n_examples(self, problem, st) -> int:
        """How many examples one epoch draws."""
        raise NotImplementedError

    def _epoch(self, st, order: np.ndarray) -> int:
        """Run the jitted epoch over the examples ``order``; return the new step count t."""
        raise NotImplementedError

    def _accumulators(self, st) -> tuple[np.ndarray, np.ndarray]:
        """``(U_t, V_t)`` laid out as ``w`` is in :meth:`_average`'s output."""
        raise NotImplementedError

    def _step(self, problem, st) -> StepOutcome:
        n = self._n_examples(problem, st)
        if self.sampling == "permutation":
            order = st.rng.permutation(n).astype(np.int64)
        else:
            order = st.rng.integers(0, n, size=n).astype(np.int64)
        st.t = self._epoch(st, order)
        st.epochs += 1
        if self.averaging == "suffix":
            st.sums.append((st.epochs, st.t + 1, self._iterate_sum(st)))
            start = st.epochs - math.ceil(st.epochs / 2)  # the window: epochs start+1 … E
            while st.sums[0][0] < start:
                st.sums.pop(0)
        return StepOutcome(1)

    def _iterate_sum(self, st) -> np.ndarray:
        """``Σ_{s=1}^{t+1} w⁽ˢ⁾ = −(H_t U_t − V_t)/(2λ)``."""
        U, V = self._accumulators(st)
        return (-1.0 / (2.0 * st.lam)) * (st.H[0] * U - V)

    def _average(self, st) -> np.ndarray:
        """The output iterate of ``averaging``, laid out as :meth:`_accumulators`."""
        if self.averaging == "last":  # w⁽ᵗ⁺¹⁾ = −U_t/(2λt)
            return (-1.0 / (2.0 * st.lam * max(st.t, 1))) * self._accumulators(st)[0]
        if self.averaging == "suffix" and len(st.sums) > 1:
            (_, c0, S0), (_, c1, S1) = st.sums[0], st.sums[-1]
            return (S1 - S0) / (c1 - c0)
        return self._iterate_sum(st) / (st.t + 1)  # the average of w⁽¹⁾ … w⁽ᵗ⁺¹⁾
