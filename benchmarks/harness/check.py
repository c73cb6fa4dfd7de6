"""The regression check: every solver's optimum against the reference optimum.

A case fails when

- its solve did not end (``timeout``, ``crashed``, ``error``), or ended in ``numerical_error``;
- the reference says the problem is infeasible and the solver does not, or the reverse;
- its primal value ``P`` lies outside the reference's certified bracket widened by ``rtol``:
  the reference (OSQP, or Clarabel where OSQP stops short) certifies ``D_ref ≤ P* ≤ P_ref``, so a
  correct ``P`` satisfies ``D_ref − rtol·s ≤ P ≤ P_ref + rtol·s`` with ``s = max(1, |P_ref|)``.
  This is "``|P − P*| ≤ rtol·s``" with the reference's own (tiny) uncertainty accounted for;
- or its certified gap is negative beyond rounding (a broken certificate).

``rtol`` is 1e-6 for exact methods and :data:`STOCHASTIC_RTOL` for stochastic ones
(``Solver.stochastic``), unless the solver class states its own ``check_rtol``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from svmbench.benchmarks.harness.evaluation import HARNESS_STATUSES, Record, negative_gap
from svmbench.solvers import registry
from svmbench.solvers.base import Status

#: Slack allowed between a record's relative gap and the same certificate computed anew (a
#: different summation order of the same variables), beyond the re-certificate's own rounding
#: allowance, which counts as in ``Certificate.meets``: ``(gap + rounding)/max(1, |P|) ≤ tol``.
RECERTIFY_SLACK = 1e-6
#: Default tolerance of exact methods.
EXACT_RTOL = 1e-6
#: Default tolerance of stochastic methods (Pegasos, the perceptron, SGD): they stop on epochs,
#: so only a few digits of the optimum are expected of them.
STOCHASTIC_RTOL = 5e-2


@dataclass(frozen=True)
class Verdict:
    """The judgement of one record."""

    record: Record
    ok: bool
    rtol: float
    reason: str


def tolerance(solver: str, rtol: float | None = None, stochastic_rtol: float | None = None):
    """The tolerance a solver is held to."""
    try:
        cls = registry.solver_class(solver)
    except ValueError:
        return EXACT_RTOL if rtol is None else rtol
    own = cls.check_rtol
    if cls.stochastic:
        if stochastic_rtol is not None:
            return stochastic_rtol
        return own if own is not None else STOCHASTIC_RTOL
    if rtol is not None:
        return rtol
    return own if own is not None else EXACT_RTOL


def status_contradiction(record: Record) -> str | None:
    """Why a record's status contradicts its own certificate (None when it does not):
    ``optimal`` needs ``certified``, ``rel_gap ≤ tol`` (the solver's tolerance as the case
    configured it) and the gap with its rounding allowance within tol, as
    :meth:`~problems.base.Certificate.meets` counts it (``(gap + rounding)/max(1, |P|) ≤
    tol``), whatever rule stopped the method (docs/ARCHITECTURE.md §4), both in the record's
    fields and in the certificate of its returned variables computed anew by the harness
    (``extras["recertified"]``)."""
    r = record.result
    if r is None or r.status is not Status.OPTIMAL:
        return None
    try:
        solver = registry.get(record.case.solver, **record.case.solver_options)
    except (TypeError, ValueError):
        return None
    tol = solver.tol
    if not r.certified:
        return "status optimal, but its certificate does not hold (certified=False)"
    if not r.rel_gap <= tol * (1.0 + 1e-9):
        return f"status optimal at a certified relative gap {r.rel_gap:.3g} > tol {tol:g}"
    rounding = float(r.residuals.get("rounding", 0.0))
    if not _meets(r.gap, rounding, r.primal, tol, 1e-9):
        return (
            f"status optimal at a certified relative gap {r.rel_gap:.3g} whose rounding "
            f"allowance {_relative(rounding, r.primal):.3g} takes it over tol {tol:g}"
        )
    again = record.extras.get("recertified")
    if again is None:
        return None
    rounding = float(again.get("rounding", 0.0))
    gap = again["primal"] - again["dual"]
    if not (
        again["certified"]
        and again["rel_gap"] <= tol * (1.0 + RECERTIFY_SLACK)
        and _meets(gap, rounding, again["primal"], tol, RECERTIFY_SLACK)
    ):
        return (
            "status optimal, but the problem's certificate of the returned variables, "
            f"computed anew, gives certified={again['certified']}, relative gap "
            f"{again['rel_gap']:.3g} with a rounding allowance of "
            f"{_relative(rounding, again['primal']):.3g} (tol {tol:g})"
        )
    return None


def _relative(value: float, primal: float) -> float:
    return value / max(1.0, abs(primal)) if math.isfinite(primal) else math.inf


def _meets(gap: float, rounding: float, primal: float, tol: float, slack: float) -> bool:
    """``Certificate.meets`` on stored numbers: ``gap + rounding ≤ tol·max(1, |P|)``, widened
    by ``slack`` of tol (a rounding of 0 where a record kept none)."""
    return bool(gap + rounding <= tol * (1.0 + slack) * max(1.0, abs(primal)))


def judge(
    record: Record, *, rtol: float | None = None, stochastic_rtol: float | None = None
) -> Verdict:
    """Whether ``record`` agrees with its reference optimum (see the module docstring)."""
    tol = tolerance(record.case.solver, rtol, stochastic_rtol)
    if record.status in HARNESS_STATUSES:
        return Verdict(record, False, tol, f"{record.status}: {record.message}")
    r = record.result
    if r.status is Status.NUMERICAL_ERROR:
        return Verdict(record, False, tol, f"numerical_error: {r.message}")
    if negative_gap(record):
        return Verdict(record, False, tol, f"negative certified gap {r.gap:.3e}")
    contradiction = status_contradiction(record)
    if contradiction:
        return Verdict(record, False, tol, contradiction)
    ref_p, ref_d = record.reference_primal, record.reference_dual
    if math.isnan(ref_p):
        return Verdict(record, False, tol, "no reference optimum")
    ref_infeasible = math.isinf(ref_p)
    if ref_infeasible or r.status is Status.INFEASIBLE:
        if ref_infeasible and r.status is Status.INFEASIBLE:
            return Verdict(record, True, tol, "infeasible, as the reference says")
        if ref_infeasible and math.isinf(tol) and r.status is not Status.OPTIMAL:
            # a baseline that does not minimize this objective only must not claim a solution
            return Verdict(record, True, tol, f"{r.status.value} on an infeasible problem")
        return Verdict(
            record,
            False,
            tol,
            f"status {r.status.value} but the reference is "
            f"{'infeasible' if ref_infeasible else 'feasible'}",
        )
    if math.isinf(tol):
        return Verdict(record, True, tol, "not held to the optimum (its check_rtol is inf)")
    scale = max(1.0, abs(ref_p))
    low = (ref_d if math.isfinite(ref_d) else ref_p) - tol * scale
    high = ref_p + tol * scale
    if not (low <= r.primal <= high):
        return Verdict(
            record,
            False,
            tol,
            f"primal {r.primal:.10g} vs reference {ref_p:.10g}: relative difference "
            f"{abs(r.primal - ref_p) / scale:.2e} > rtol {tol:.0e} (status {r.status.value})",
        )
    return Verdict(record, True, tol, f"relative difference {record.distance:.1e}")
