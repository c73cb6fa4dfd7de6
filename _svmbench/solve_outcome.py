"""How a solve's status reaches the estimator's user: warnings and errors in scikit-learn's terms.

``optimal`` is silent. ``max_iter`` and ``time_limit`` warn (:class:`SVMConvergenceWarning`, with
the words of the library the fit stands in for: LIBSVM's "Solver terminated early" or
LIBLINEAR's "failed to converge", then the certified gap reached), and so does a certified
``not_certified`` (weak duality holds, but the gap with its rounding allowance is above tol: the
rounding floor of float64 at a very large C). ``numerical_error`` warns
(:class:`SVMNumericalWarning`) when a certified point was found, and is a ValueError when none
was. A solve with no model at all is a RuntimeError.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning


class SVMConvergenceWarning(SklearnConvergenceWarning):
    """The solve ended on ``max_iter`` or ``time_limit`` before its stopping rule held
    (``result_.status`` says which; ``result_.rel_gap`` how far it got)."""


class SVMNumericalWarning(SVMConvergenceWarning):
    """The solve ended in ``numerical_error``: the model is the best certified point the solver
    reached (``result_.rel_gap`` says how good; ``result_.message`` why it stopped)."""


#: A relative gap at or above 1 bounds nothing of use (the dual bound is not even within the
#: primal value): such a point is no certified point for the estimator.
USEFUL_REL_GAP = 1.0


def certified_somewhere(result) -> bool:
    """Whether ``result`` holds a certified point with a relative gap below
    :data:`USEFUL_REL_GAP` (a reduction's certificate is its binary problems': every one
    certified, the worst gap)."""
    return bool(result.certified and result.rel_gap < USEFUL_REL_GAP)


def _stop_words(status, family: str, max_iter, time_limit) -> str:
    from svmbench.solvers.base import Status

    if status is Status.TIME_LIMIT:
        return f"Solver stopped at time_limit={time_limit:g} s."
    if family == "liblinear":
        return "Liblinear failed to converge, increase the number of iterations."
    return (
        f"Solver terminated early (max_iter={max_iter}).  Consider pre-processing your data "
        "with StandardScaler or MinMaxScaler."
    )


#: ``C=inf`` with a kernel: the first C of the soft-margin duals whose optimum, once no α
#: reaches C, is the hard margin's; at most this many steps of ×1e3.
HARD_MARGIN_C = 1e4
HARD_MARGIN_STEPS = 3


def kernel_hard_margin(solve, problem, result, kernel: str):
    """``C=inf`` with a kernel: the soft-margin dual (``solve(problem)``) at C growing ×1e3
    from :data:`HARD_MARGIN_C` until no ``α_i`` reaches its ``C_i``. The box is then inactive,
    so that the certified soft-margin optimum satisfies the hard margin's KKT conditions (every
    ``ξ_i = 0``) and is its optimum; a ValueError when C reaches 1e3 × more. Returns the result
    and the problem it solves."""
    from svmbench.solvers.base import Status

    for step in range(HARD_MARGIN_STEPS):
        upper = problem.upper_bounds
        at_bound = np.count_nonzero((upper > 0) & (result.alpha >= upper * (1.0 - 1e-9)))
        if result.status is Status.OPTIMAL and at_bound == 0:
            return result, problem
        if step + 1 < HARD_MARGIN_STEPS:
            problem = dataclasses.replace(problem, C=problem.C * 1e3)
            result = solve(problem)
    raise ValueError(
        f"C=inf (the hard margin): the classes are not separated by the {kernel} kernel's "
        f"feature map as far as the solver can tell: at C={problem.C:g}, {at_bound} multipliers "
        f"still reach C (status {result.status.value}, certified relative gap "
        f"{result.rel_gap:.3g}); give a finite C"
    )


def solve_and_report(solver, problem, warm, *, family: str, max_iter, time_limit):
    """``solver.solve(problem, warm_start=warm)``, its status turned into a warning or an error
    (see the module docstring); the solver's own ConvergenceWarnings are replaced by ours.
    ``family``: ``"libsvm"`` or ``"liblinear"``, whose words a stopped solve uses."""
    from svmbench.solvers.base import ConvergenceWarning, Status

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = solver.solve(problem, warm_start=warm)
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if result.status in (Status.MAX_ITER, Status.TIME_LIMIT):
        unsolved = result.info.get("unsolved_pairs") or ()
        total = len(result.info.get("binary_rel_gaps") or ())
        left = (
            f"; {len(unsolved)} of {total} binary problems never ran, each votes for its "
            "class of larger weight"
            if unsolved
            else ""
        )
        warnings.warn(
            f"{_stop_words(result.status, family, max_iter, time_limit)} ({result.solver}: "
            f"{result.iterations} {result.iteration_unit}, certified relative gap "
            f"{result.rel_gap:.3g}{left}; increase max_iter or time_limit)",
            SVMConvergenceWarning,
            stacklevel=4,
        )
    if result.status is Status.NOT_CERTIFIED and result.certified:
        # weak duality holds, but float64 cannot show the gap within tol (the rounding floor)
        warnings.warn(
            f"{result.solver}: the fit is not certified at tol={solver.tol:g}: {result.message}",
            SVMConvergenceWarning,
            stacklevel=4,
        )
    if result.status is Status.NUMERICAL_ERROR:
        if not certified_somewhere(result) or result.model is None:
            raise ValueError(
                f"The dual coefficients or intercepts are not finite: {result.solver} ended "
                f"with a numerical error and no certified point (relative gap "
                f"{result.rel_gap:.3g}; {result.message}); scale X (StandardScaler) or try "
                "another solver"
            )
        warnings.warn(
            f"{result.solver} ended with a numerical error ({result.message}); the model is its "
            f"best certified point, relative gap {result.rel_gap:.3g} (tol {solver.tol:g})",
            SVMNumericalWarning,
            stacklevel=4,
        )
    if result.status is Status.INFEASIBLE:
        raise ValueError(
            f"{result.solver}: the hard margin (C=inf) is infeasible, no hyperplane separates "
            f"the classes ({result.message}); give a finite C"
        )
    if result.model is None:
        raise RuntimeError(
            f"{result.solver} ended with status {result.status.value} and no model: "
            f"{result.message}"
        )
    return result


__all__ = [
    "SVMConvergenceWarning",
    "SVMNumericalWarning",
    "certified_somewhere",
    "solve_and_report",
]
