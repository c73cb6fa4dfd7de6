"""``Solver.solve``'s last step on a method's outcome (docs/ARCHITECTURE.md §4, "The exact
finish"): a point of a box-constrained binary dual short of ``tol`` at a large C lifted off its
margins' rounding (:mod:`~solvers.margin_lift`), then an ``optimal`` point made exact on its active
set (:func:`~solvers.exact_finish.exact_finish`), each kept only if the problem certifies it."""

from __future__ import annotations

from dataclasses import replace

from svmbench.problems.base import Problem
from svmbench.solvers.chunk_loop import all_finite
from svmbench.solvers.clock import Clock
from svmbench.solvers.exact_finish import finish_applies
from svmbench.solvers.margin_lift import finish_exactly, lifted_outcome
from svmbench.solvers.records import Outcome, Status, replaced


def finished_outcome(
    outcome: Outcome, problem: Problem, clock: Clock, *, tol: float, anchor: bool
) -> Outcome:
    """``outcome`` finished: ``info["exact_finish"]`` says what happened (``info["margin_lift"]``
    too where the point was lifted). Skipped for an anchor (the library's model is reported as
    trained), a solver that builds its own model, and where a solver inside already finished.
    The trace's last point becomes the finished one when it was the result's."""
    problem = outcome.problem or problem
    if not finish_applies(problem) or "exact_finish" in outcome.info:
        return outcome
    lifted = False
    if outcome.status is not Status.OPTIMAL and not anchor and outcome.model is None:
        with clock.certifying():  # a point short of tol on its margins' rounding: lifted
            outcome = lifted_outcome(outcome, problem, tol)
        lifted = "margin_lift" in outcome.info
    if outcome.status is not Status.OPTIMAL:
        why = f"status {outcome.status.value}"
    elif anchor:
        why = "an anchor: the library's model is reported as trained"
    elif outcome.model is not None or not all_finite(outcome.variables):
        why = "the solver built its own model" if outcome.model is not None else "no point"
    else:
        why = None
    if why is not None:
        return replaced(outcome, info={**outcome.info, "exact_finish": {"skipped": why}})
    with clock.certifying():  # the certificates: the record's, before and after
        variables, cert, report = finish_exactly(
            problem, outcome.variables, outcome.certificate, tol=tol
        )
    trace = outcome.trace
    if (lifted or report.get("accepted")) and trace and trace[-1].iteration == outcome.iterations:
        # the trace ends at the result: its last point is the finished one
        last = replace(trace[-1], primal=cert.primal, dual=cert.dual, gap=cert.gap, certified=True)
        trace = (*trace[:-1], last)
    return replaced(
        outcome,
        variables=variables,
        certificate=cert,
        trace=trace,
        info={**outcome.info, "exact_finish": report},
    )
