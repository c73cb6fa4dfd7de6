"""Run benchmark cases and judge each result against the reference optimum.

Each record carries the solver's certified result plus what the harness measures beside it:
the relative distance of its primal objective to the Clarabel reference optimum and its
training accuracy.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from benchmarks.cases import Case
from problems import HardMarginPrimal, KernelDual, MulticlassHinge
from problems.base import Problem
from problems.datasets import load
from solvers import registry
from solvers._reference import reference_solution
from solvers.base import ConvergenceWarning, SolveResult, Status


@dataclass(frozen=True)
class Record:
    """A finished case: the solver's result and the harness's judgement of it."""

    case: Case
    result: SolveResult
    reference_primal: float
    distance: float  # |P − P*| / max(1, |P*|)
    accuracy: float  # on the training set (test set where the data spec has a split)


def accuracy(problem: Problem, result: SolveResult, X=None, y=None) -> float:
    """Fraction of points the result's model classifies correctly (training set by default)."""
    if result.status in (Status.INFEASIBLE, Status.UNBOUNDED, Status.NUMERICAL_ERROR):
        return math.nan
    y = problem.y if y is None else y
    if isinstance(problem, MulticlassHinge):
        return float(np.mean(problem.predict(result.W, result.b, X) == y))
    if isinstance(problem, KernelDual):
        f = problem.decision_function(result.alpha, result.b or 0.0, X)
    else:
        f = problem.decision_function(result.w, result.b or 0.0, X)
    return float(np.mean(np.where(f >= 0, 1.0, -1.0) == y))


def reference_primal(problem: Problem) -> float:
    """Clarabel's certified optimum (``inf`` for an infeasible hard margin), cached by hash."""
    ref = reference_solution(problem, "clarabel")
    return math.inf if ref.status is Status.INFEASIBLE else ref.primal


def run_case(case: Case) -> Record:
    """Solve one case and judge it."""
    dataset = load(case.data)
    problem = case.build_problem(dataset)
    solver = registry.get(case.solver, **case.solver_options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = solver.solve(problem)
    ref = reference_primal(problem)
    if isinstance(problem, HardMarginPrimal) and math.isinf(ref):
        distance = 0.0 if result.status is Status.INFEASIBLE else math.inf
    else:
        distance = abs(result.primal - ref) / max(1.0, abs(ref))
    if dataset.X_test is not None:
        acc = accuracy(problem, result, dataset.X_test, dataset.y_test)
    else:
        acc = accuracy(problem, result)
    return Record(case, result, ref, distance, acc)


def run_cases(
    cases: Iterable[Case], *, on_record: Callable[[Record], None] | None = None
) -> list[Record]:
    """Run cases one after another; ``on_record`` sees each record as soon as it is finished."""
    records = []
    for case in cases:
        record = run_case(case)
        records.append(record)
        if on_record is not None:
            on_record(record)
    return records
