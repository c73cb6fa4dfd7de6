"""The reference of the logistic loss: its primal written in CVXPY over the exponential cone
(``Logistic.to_cvxpy``, ``cp.logistic``; ``MultinomialLogistic.to_cvxpy``, ``cp.log_sum_exp``)
and solved by Clarabel, the point certified by the
problem. The logistic loss is not a QP, so the QP references (``clarabel``, ``osqp``) do not
take it; this one-shot solver stands in for them in the tests and comparisons.

``eps`` is the conic solver's own tolerance (its gap and feasibility tolerances; default 1e-12:
at 1e-10 its point for C = 1e4 was short of a certified relative gap of 1e-8), ``tol`` the
certified relative gap asked of the result, as for every solver.

Reference: S. Diamond and S. Boyd, "CVXPY: a Python-embedded modeling language for convex
optimization", JMLR 17(83), 2016.
"""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

import numpy as np

from svmbench.problems import Logistic, MultinomialLogistic
from svmbench.problems.validation import check_real
from svmbench.solvers.base import Outcome, Solver, Status
from svmbench.solvers.registry import register


@register
class LogisticCvxpy(Solver):
    """CVXPY + Clarabel on the exponential-cone form of :class:`~problems.Logistic` (every
    bias) and of :class:`~problems.MultinomialLogistic` (``cp.log_sum_exp``).

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for (the problem's certificate judges the point).
    eps : float, default=1e-12
        Clarabel's gap and feasibility tolerances.
    max_iter, time_limit
        Clarabel's iteration and time limits.
    """

    name = "logistic_cvxpy"
    iteration_unit = "interior-point iterations"
    supported: ClassVar = {Logistic: {}, MultinomialLogistic: {}}
    default_max_iter = 500
    reports_progress = False

    def __init__(self, *, eps: float = 1e-12, **common):
        super().__init__(**common)
        self.eps = check_real("eps", eps, low=0.0)

    def _run(self, problem, warm_start, clock, callback) -> Outcome:
        import cvxpy as cp

        model, recover = problem.to_cvxpy()
        options = dict(
            tol_gap_abs=self.eps, tol_gap_rel=self.eps, tol_feas=self.eps,
            max_iter=self.max_iter,
        )  # fmt: skip
        if math.isfinite(self.time_limit):
            options["time_limit"] = self.time_limit
        try:
            with warnings.catch_warnings():  # "may be inaccurate": the certificate re-checks it
                warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
                model.solve(solver="CLARABEL", **options)
            raw = model.status
        except cp.error.SolverError as exc:
            raw = f"solver error: {exc}"
        if raw in ("optimal", "optimal_inaccurate"):
            status, variables = Status.OPTIMAL, recover()
        else:
            status = Status.TIME_LIMIT if clock.elapsed >= self.time_limit else Status.MAX_ITER
            if raw.startswith("solver error") or raw in ("infeasible", "unbounded"):
                status = Status.NUMERICAL_ERROR
            solved = all(v.value is not None for v in model.variables())
            variables = recover() if solved else _missing(problem)
        stats = model.solver_stats
        iterations = stats.num_iters if stats is not None and stats.num_iters is not None else 0
        return Outcome(
            status=status,
            variables=variables,
            iterations=int(iterations),
            message=f"CVXPY status {raw}",
            info={"raw_status": raw, "compilation_time": model.compilation_time},
        )


def _missing(problem) -> dict:
    """Variables of no point (NaN), of the problem's shape."""
    if isinstance(problem, MultinomialLogistic):
        return {"W": np.full((problem.n_classes, problem.n_features), np.nan)}
    return {"w": np.full(problem.n_features, np.nan)}
