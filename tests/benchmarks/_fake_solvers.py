"""Test-only solvers, registered on import (suites name this module in ``imports``).

``test_sleep`` sleeps and then solves with Clarabel, ``test_raise`` raises, ``test_crash`` kills its
process, ``test_one_iter`` stops after one iteration at w = 0 (a deliberately wrong solver).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import ClassVar

import numpy as np

from svmbench.problems import SoftMarginPrimal
from svmbench.solvers import registry
from svmbench.solvers.base import Solver, Status


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

    def solve(self, problem, *, warm_start=None, callback=None):
        self.check_accepts(problem)
        time.sleep(self.seconds)
        result = registry.get("clarabel").solve(problem)
        return dataclasses.replace(result, solver=self.name)


@registry.register
class Raises(_Fake):
    name = "test_raise"

    def solve(self, problem, *, warm_start=None, callback=None):
        raise RuntimeError("deliberate failure of test_raise")


@registry.register
class Crashes(_Fake):
    name = "test_crash"

    def solve(self, problem, *, warm_start=None, callback=None):
        os._exit(3)


@registry.register
class OneIteration(_Fake):
    """Stops after one iteration, at w = 0, b = 0: far from the optimum."""

    name = "test_one_iter"

    def solve(self, problem, *, warm_start=None, callback=None):
        self.check_accepts(problem)
        return self._result(
            problem,
            status=Status.MAX_ITER,
            variables={"w": np.zeros(problem.n_features), "b": 0.0},
            iterations=1,
            solve_time=0.0,
        )


@registry.register
class Traced(_Fake):
    """Clarabel's solution with a trace: the certified points t·(w*, b*) for t = 1/4 … 1."""

    name = "test_traced"
    iteration_unit = "steps"

    def solve(self, problem, *, warm_start=None, callback=None):
        from svmbench.solvers.base import Checkpoint

        self.check_accepts(problem)
        best = registry.get("clarabel").solve(problem)
        trace = []
        for step, t in enumerate((0.25, 0.5, 0.75, 1.0), start=1):
            cert = problem.certificate(w=t * best.w, b=t * best.b)
            trace.append(Checkpoint(step, 1e-3 * step, cert.primal, cert.dual, cert.gap))
        return self._result(
            problem,
            status=Status.OPTIMAL,
            variables={"w": best.w, "b": best.b},
            iterations=4,
            solve_time=4e-3,
            trace=trace,
        )
