"""Test-only solvers, registered on import (suites name this module in ``imports``).

``test_sleep`` sleeps and then solves with Clarabel, ``test_raise`` raises, ``test_crash`` kills its
process, ``test_one_iter`` stops after one iteration at w = 0 (a deliberately wrong solver).
"""

from __future__ import annotations

import os
import time
from typing import ClassVar

import numpy as np

from svmbench.problems import SoftMarginPrimal
from svmbench.solvers import registry
from svmbench.solvers.base import Outcome, Solver, Status


class _Fake(Solver):
    iteration_unit = "calls"
    supported: ClassVar = {SoftMarginPrimal: {}}


@registry.register
class SleepThenSolve(_Fake):
    """Sleep ``seconds``, then return Clarabel's solution under this solver's name."""

    name = "test_sleep"

    def __init__(self, *, seconds: float = 0.0, **common):
        super().__init__(**common)
        self.seconds = float(seconds)

    def _run(self, problem, warm_start, clock, callback):
        time.sleep(self.seconds)
        result = registry.get("clarabel").solve(problem)
        return Outcome(result.status, result.variables, result.iterations)


@registry.register
class Raises(_Fake):
    name = "test_raise"

    def _run(self, problem, warm_start, clock, callback):
        raise RuntimeError("deliberate failure of test_raise")


@registry.register
class Crashes(_Fake):
    name = "test_crash"

    def _run(self, problem, warm_start, clock, callback):
        os._exit(3)


@registry.register
class OneIteration(_Fake):
    """Stops after one iteration, at w = 0, b = 0: far from the optimum."""

    name = "test_one_iter"

    def _run(self, problem, warm_start, clock, callback):
        return Outcome(Status.MAX_ITER, {"w": np.zeros(problem.n_features), "b": 0.0}, 1)


@registry.register
class Traced(_Fake):
    """Clarabel's solution with a trace: the certified points t·(w*, b*) for t = 1/4 … 1."""

    name = "test_traced"
    iteration_unit = "steps"

    def _run(self, problem, warm_start, clock, callback):
        from svmbench.solvers.base import Checkpoint

        best = registry.get("clarabel").solve(problem)
        trace = []
        for step, t in enumerate((0.25, 0.5, 0.75, 1.0), start=1):
            cert = problem.certificate(w=t * best.w, b=t * best.b)
            trace.append(Checkpoint(step, 1e-3 * step, cert.primal, cert.dual, cert.gap))
        return Outcome(Status.OPTIMAL, {"w": best.w, "b": best.b}, 4, trace=tuple(trace))
