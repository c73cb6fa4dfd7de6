"""The chunk loop of :class:`~solvers.base.IterativeSolver`: one stopping rule for every method.

:func:`run_chunks` runs the solver's hooks (``_prepare``, ``_init_state``, then ``_step`` chunk
after chunk) on the solver clock and decides when to stop: the certified relative gap with its
rounding allowance, ``(P − D + rounding)/max(1, |P|) ≤ tol``, on the schedule of
:class:`~solvers.clock.CheckSchedule`, a gap already within an allowance above tol (the rounding
floor: ``not_certified``), the method's native rule, a planned budget of chunks, ``max_iter``,
``time_limit``, a callback, or a numerical failure (docs/ARCHITECTURE.md §4). It records the
trace on the geometric schedule of :class:`~solvers.clock.TraceSchedule`, pausing the clock while
trace-only certificates are drawn.
The options it reads (``stop_rule``, ``check_every``, ``trace``, ...) are documented on
:class:`~solvers.base.IterativeSolver`.

With a finite ``time_limit`` it also asks two optional hooks for estimates ``(seconds, how)``:
``_setup_seconds(problem)`` before the set-up (``_prepare`` and ``_init_state``) and
``_chunk_seconds(problem, state)`` before every chunk (raised to the last chunk's measured
seconds when it took longer); a stage estimated to end more than
:data:`~solvers.time_budget.ALLOWED_OVERRUN` past the limit is not started
(:func:`~solvers.time_budget.stage_refusal`): the run ends ``time_limit`` with the starting
point, or with the point so far.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from svmbench.problems.base import Certificate, Problem
from svmbench.solvers.clock import CheckSchedule, Clock, TraceSchedule
from svmbench.solvers.margin_lift import early_report, finished_or_lifted, lift_words
from svmbench.solvers.records import (
    STATUS_MESSAGES,
    Checkpoint,
    Outcome,
    Status,
    StepOutcome,
    WarmStart,
)
from svmbench.solvers.status_rules import rounding_floor_words
from svmbench.solvers.time_budget import ALLOWED_OVERRUN, refused_outcome, stage_refusal

#: What a chunk may raise from deep inside NumPy/SciPy when the arithmetic fails (SciPy's
#: "array must not contain infs or NaNs" is a ValueError, and only that one is caught): the run
#: ends as ``numerical_error`` with the certified point so far, never with the exception.
_NUMERICAL_FAILURES = (
    np.linalg.LinAlgError,
    FloatingPointError,
    ZeroDivisionError,
    OverflowError,
    ValueError,
)


def all_finite(variables: Mapping[str, Any]) -> bool:
    for v in variables.values():
        if v is None:
            continue
        if isinstance(v, float | int):  # a bias: no array built for one number
            if not math.isfinite(v):
                return False
        elif not _all(_isfinite(v if type(v) is np.ndarray else np.asarray(v, dtype=float)), None):
            return False
    return True


_isfinite, _all = np.isfinite, np.logical_and.reduce


def _guarded_step(solver, problem: Problem, state) -> StepOutcome:
    """``solver._step``, with an arithmetic failure turned into a :class:`StepOutcome` that
    says so (any other exception propagates). NumPy's overflow and invalid-value warnings are
    silenced: their NaN or inf reaches the iterates, which the loop checks after every step."""
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return solver._step(problem, state)
    except _NUMERICAL_FAILURES as exc:
        arithmetic = not isinstance(exc, ValueError) or isinstance(exc, np.linalg.LinAlgError)
        if not arithmetic and "infs or NaNs" not in str(exc):
            raise
        return StepOutcome(0, failure=f"numerical failure: {type(exc).__name__}: {exc}")


def _estimate_refusal(
    solver, clock: Clock, stage: str, hook: str, *args, measured: float = 0.0
) -> dict | None:
    """The refusal of a stage whose estimate by ``solver.<hook>(*args)``, or ``measured``
    seconds (the same stage's last run) when longer, ends more than ``ALLOWED_OVERRUN`` past
    the time limit (None without a limit, a hook or an estimate)."""
    estimate = getattr(solver, hook, None)
    if not math.isfinite(solver.time_limit) or estimate is None:
        return None
    estimate = estimate(*args)
    if measured > (estimate[0] if estimate else 0.0):
        estimate = (measured, f"the last {stage.split()[0]} took {measured:.3g} s")
    if estimate is None or clock.wall + estimate[0] <= solver.time_limit + ALLOWED_OVERRUN:
        return None
    return stage_refusal(clock, solver.time_limit, stage, *estimate)


def gap_verdict(
    problem: Problem, cert: Certificate, tol: float, converged: bool
) -> tuple[Status | None, str]:
    """The gap rule's verdict on a certificate drawn during a run: ``optimal`` when it meets
    ``tol`` with its rounding allowance; ``not_certified`` at the rounding floor (no iteration
    can show more) or at a stationary point of an indefinite problem; else ``None``, go on."""
    if cert.meets(tol):
        return Status.OPTIMAL, ""
    if cert.under_rounding_floor(tol):
        return Status.NOT_CERTIFIED, rounding_floor_words(cert, tol)
    if not problem.convex and converged:  # no certificate can ever hold
        return Status.NOT_CERTIFIED, (
            "a stationary point of an indefinite problem: no certificate exists"
        )
    return None, ""


def run_chunks(
    solver, problem: Problem, warm_start: WarmStart | None, clock: Clock, callback
) -> Outcome:
    """Run ``solver`` (an :class:`~solvers.base.IterativeSolver`) chunk by chunk on ``clock``
    until a stopping rule holds; return the :class:`~solvers.records.Outcome`."""
    refusal = _estimate_refusal(solver, clock, "the set-up", "_setup_seconds", problem)
    if refusal is not None:
        return refused_outcome(refusal, problem)
    prepared = solver._prepare(problem, warm_start)
    if prepared.final is not None:
        return prepared.final
    problem = prepared.problem
    state = solver._init_state(problem, prepared.warm_start)
    schedule = TraceSchedule(solver.trace)
    checks = (
        CheckSchedule(solver.check_every, None)
        if solver.check_every is not None
        else CheckSchedule(solver.default_check_every, solver._certificate_work(problem))
    )
    trace: list[Checkpoint] = []
    iterations, chunks = prepared.iterations, 0
    status, cert, message = None, None, ""
    limit_info: dict[str, Any] = {}
    lift_info: dict[str, Any] = {}
    failed_finishes: set[bytes] = set()  # the active sets whose finish failed (margin_lift)
    last_chunk = 0.0
    # the options, read once (a chunk of a small problem takes tens of microseconds)
    tol, max_iter, time_limit = solver.tol, solver.max_iter, solver.time_limit
    stop_rule, tracing = solver.stop_rule, solver.trace
    gap_rule = stop_rule == "gap"
    limited = math.isfinite(time_limit)  # without a limit, neither estimates nor clock reads
    while status is None:
        variables = None  # the point, once built in this chunk (the record's, if it is the last)
        if limited:
            refusal = _estimate_refusal(
                solver,
                clock,
                f"chunk {chunks + 1}",
                "_chunk_seconds",
                problem,
                state,
                measured=last_chunk,
            )
            if refusal is not None:
                status, message = Status.TIME_LIMIT, refusal["message"]
                limit_info = {"time_limit": refusal}
                break
            started = clock.wall
            step = _guarded_step(solver, problem, state)
            last_chunk = clock.wall - started
        else:
            step = _guarded_step(solver, problem, state)
        iterations += step.iterations
        chunks += 1
        cert = None
        if step.failure:
            # the status stays true: the point so far may already be certified to tol
            variables = solver._variables(problem, state)
            if all_finite(variables):
                cert = problem.certificate(**variables)
            if cert is not None and cert.meets(tol):
                status, message = Status.OPTIMAL, f"certified to tol; then {step.failure}"
            else:
                status, message = Status.NUMERICAL_ERROR, step.failure
            break
        # a warm start is judged after its first chunk: it may already be the optimum
        first_warm = chunks == 1 and prepared.warm_start is not None
        work = solver._chunk_work(problem, state) if checks.adaptive else None
        due = checks.due(chunks, work) or step.converged or first_warm
        if checks.adaptive and not due:
            # the last chunk before max_iter or time_limit is tested too: sparse checks must
            # not turn a run that met tol into one that reached its limit
            due = iterations >= max_iter or (limited and clock.wall >= time_limit)
        checks.checks += due
        wanted = callback is not None or schedule.wants(chunks, clock)
        estimate = None
        if wanted and callback is None and tracing is True and not (gap_rule and due):
            # a trace-only point: the solver's own estimate, neither the point nor a
            # certificate (non-finite iterates give a non-finite estimate: the point is read)
            with clock.certifying():
                estimate = solver._trace_estimate(problem, state)
            if estimate is not None and not all(math.isfinite(v) for v in estimate):
                estimate = None
        if due or (wanted and estimate is None):
            # the finiteness check costs O(n): only where the point is looked at anyway
            variables = solver._variables(problem, state)
            if not all_finite(variables):
                status, message = Status.NUMERICAL_ERROR, "the iterates contain NaN or inf"
                break
        if gap_rule and due:
            cert = step.certificate or problem.certificate(**variables)
            status, message = gap_verdict(problem, cert, tol, step.converged)
            if status is not Status.OPTIMAL and step.converged:  # at a large C (margin_lift)
                lifted = finished_or_lifted(problem, variables, cert, tol, failed_finishes)
                if lifted is not None:  # the margins' rounding at a large C, lifted off
                    variables, cert, lift_info["margin_lift"] = lifted
                    status, message = Status.OPTIMAL, lift_words(lift_info["margin_lift"])
                    if (report := early_report(lift_info["margin_lift"])) is not None:
                        lift_info["exact_finish"] = report  # Solver._finish: done already
        elif stop_rule == "native" and step.converged:
            status = Status.OPTIMAL  # if the certificate agrees (Solver._result)
        if cert is not None or wanted:
            if cert is None and estimate is not None:
                P, D = estimate
                point = Checkpoint(
                    iterations, clock.elapsed, P, D, P - D, clock.wall, certified=False
                )
            else:
                if cert is None:
                    with clock.certifying():
                        cert = problem.certificate(**variables)
                point = Checkpoint(
                    iterations, clock.elapsed, cert.primal, cert.dual, cert.gap, clock.wall
                )
            if tracing:
                trace.append(point)
            if callback is not None:
                with clock.paused():
                    stop = callback(point)
                if stop and status is None:
                    status, message = Status.MAX_ITER, "stopped by the callback"
        if status is None and step.iterations == 0:
            # a chunk that did no work will do none the next time: end instead of looping
            status = Status.NUMERICAL_ERROR
            message = "the method can make no further progress before its stopping rule holds"
        if status is None and iterations >= max_iter:
            status = Status.MAX_ITER
        if status is None and limited and clock.wall >= time_limit:  # wall time: all included
            status = Status.TIME_LIMIT
    final = variables if variables is not None else solver._variables(problem, state)
    if solver.trace and all_finite(final) and (not trace or trace[-1].iteration != iterations):
        # the trace ends at the result: its certificate is the record's, drawn once
        with clock.certifying():
            cert = cert or problem.certificate(**final)
        trace.append(
            Checkpoint(iterations, clock.elapsed, cert.primal, cert.dual, cert.gap, clock.wall)
        )
    if status is Status.MAX_ITER and not message and solver.stop_rule in solver.budget_rules:
        with clock.certifying():  # judging the final point is not part of a planned run
            if cert is None:
                cert = problem.certificate(**final)
        met = cert.meets(tol)
        status = Status.OPTIMAL if met else Status.MAX_ITER
        message = (
            f"ran the planned {iterations} {solver.iteration_unit} (stop_rule="
            f"{solver.stop_rule!r}); certified relative gap {cert.rel_gap:.3g} "
            f"{'<=' if met else '>'} tol={solver.tol:g}"
        )
    if prepared.message:
        message = f"{message or STATUS_MESSAGES[status]}; {prepared.message}"
    return Outcome(
        status=status,
        variables=final,
        iterations=iterations,
        certificate=cert,
        message=message,
        info={**prepared.info, **solver._info(state), **limit_info, **lift_info},
        problem=problem,
        trace=tuple(trace),
    )
