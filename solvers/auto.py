"""``auto``: the method this project's own benchmarks show to be fastest to a certified tolerance.

``auto`` reads the problem (kind, n, d, density, kernel, bias, loss, C, classes), walks the table
:data:`RULES` top to bottom, and runs the first solver whose rule matches and that accepts the
problem (and the warm start, if one is given). It says what it chose and why in
``result.info["auto"]`` (``{"chose": name, "why": sentence, "rule": index}``), and ``svmbench
solve`` prints it. The result is the chosen solver's, certified by the problem as every result
is; the record's ``solver`` stays ``"auto"``.

Each row of :data:`RULES` carries the measurement behind it (one core, tolerance 1e-6, wall time end
to end, from ``benchmarks/studies/bench_auto.py``; ratios, the machines being shared). The same
table is in README.md. When the chosen iterative method ends at ``max_iter`` or ``time_limit``
without a certificate meeting ``tol``, and time is left, ``auto`` goes on with the next candidate of
its row, warm-started from the point reached (``fallback=True``); after ``numerical_error``, and
after ``not_certified`` with a certified point (rounding leaves it short of tol), it goes on
too, the next method starting from scratch (or, for ``active_set``, which reads only its first
active set from a warm start, from the failed point if it is certified).
"""

from __future__ import annotations

import math
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from svmbench.problems import (
    ChainStructuredHinge,
    HardMarginPrimal,
    KernelDual,
    Logistic,
    MulticlassHinge,
    MultinomialLogistic,
    NuSVCDual,
    NuSVRDual,
    OneClassDual,
    SoftMarginDual,
    SoftMarginPrimal,
    SVRDual,
    SVRPrimal,
)
from svmbench.problems.base import Certificate, Problem, relative_gap
from svmbench.problems.validation import check_bool
from svmbench.solvers import registry
from svmbench.solvers.auto_features import Features
from svmbench.solvers.auto_rules import (  # noqa: F401 (the table and its constants, re-exported)
    BARRIER_MIN_DIM,
    LOGISTIC_PROBE,
    LOGISTIC_PROBE_WORK,
    LOGISTIC_SMALL,
    LOGISTIC_SMALL_C_R2,
    MULTICLASS_SMALL_C_R2,
    PROBE,
    PROBE_WORK,
    RULES,
    SMALL_C_R2,
    SMALL_KERNEL_N,
    SMALL_KERNEL_PROBE,
    SVR_DCD_C_R2,
    TINY,
    Rule,
    rules_markdown,
)
from svmbench.solvers.base import (
    STATUS_MESSAGES,
    ConvergenceWarning,
    Outcome,
    Solver,
    SolveResult,
    Status,
    WarmStart,
)
from svmbench.solvers.exact_finish import finish_applies
from svmbench.solvers.margin_lift import finish_exactly
from svmbench.solvers.records import replaced
from svmbench.solvers.registry import register

#: Statuses after which the next method of the choice goes on (a limit, or a numerical failure).
RETRIED = (Status.MAX_ITER, Status.TIME_LIMIT, Status.NUMERICAL_ERROR)
#: ... and ``not_certified`` with a certified point, short of tol with its rounding allowance
#: (:func:`_goes_on`): the allowance is the point's, and another method's point may carry a
#: smaller one (the hard set at C = 1e10, γ = 1e-3: SMO's point 2.7e-6 of |P|, the barrier's
#: interior one 1e-10).
GOES_ON = (*RETRIED, Status.NOT_CERTIFIED)


#: A probe's point gets the exact finish (:func:`_finished_probe`) up to this ``max C_i ·
#: max K̃_ii``. Beyond, rounding in the margins (times C) leaves the unpadded KKT point short of
#: tol: on the 13 × 13 grid of standardized iris (RBF, five folds) the finish certified 17 of
#: the 30 probes that stopped short at C = 1e4-1e6, 12 of 63 at C = 1e7-1e9, none of 30 at 1e10.
FINISH_MAX_CK = 1e6

#: Kinds with no exact method: ``auto`` refuses them rather than report an uncertified optimum.
_NO_EXACT = {ChainStructuredHinge.kind: "ssvm_sgd"}


def _takes(cls: type[Solver], warm_start: WarmStart | None) -> bool:
    return warm_start is None or bool(set(warm_start.fields) & set(cls.warm_start_uses))


@dataclass(frozen=True)
class Choice:
    """The solvers ``auto`` runs on a problem, in order, and the sentence saying why: the first
    accepts the problem; the others are the row's later candidates, each asked whether it accepts
    the problem only when its turn comes."""

    solvers: tuple[str, ...]
    why: str
    rule: int
    probe: int = 0


#: The last problem chosen for and its choice: an estimator's fit asks three times of one
#: problem (its view, ``check_accepts``, ``check_memory``), the features and rules run once.
_LAST_CHOICE = threading.local()


def choose(problem: Problem) -> Choice:
    """The first row of :data:`RULES` that matches ``problem``, and its solvers that accept the
    problem, in order (``TypeError`` if none does). The choice never depends on a warm start:
    the same problem always gets the same method."""
    last = getattr(_LAST_CHOICE, "pair", None)
    if last is not None and last[0]() is problem:
        return last[1]
    choice = _choose(problem)
    try:
        _LAST_CHOICE.pair = (weakref.ref(problem), choice)
    except TypeError:  # a problem class without weak references: nothing kept
        _LAST_CHOICE.pair = None
    return choice


#: ``(RULES, {kind: ((index, rule), ...)})``: the rows of each kind, rebuilt when the table is
#: another object (a test may replace it).
_ROWS_OF_KIND: list = [None, {}]


def _rows_of(kind: str) -> tuple:
    """The ``(index, rule)`` rows of :data:`RULES` that name ``kind``, in order."""
    if _ROWS_OF_KIND[0] is not RULES:
        _ROWS_OF_KIND[:] = [RULES, {}]
    rows = _ROWS_OF_KIND[1].get(kind)
    if rows is None:
        rows = _ROWS_OF_KIND[1][kind] = tuple(
            (index, rule) for index, rule in enumerate(RULES) if kind in rule.kinds
        )
    return rows


def _choose(problem: Problem) -> Choice:
    f = Features.of(problem)
    for index, rule in _rows_of(f.kind):
        if not rule.when(f):
            continue
        accepted = (name for name in rule.solvers if _accepts(name, problem))
        first = next(accepted, None)
        if first is None:
            continue
        # the fallbacks are asked when one is needed (auto._run), not for every problem: only
        # a probe needs to know its successor now
        names = (first, *_after(rule.solvers, first))
        why = f"{f.kind}, {rule.condition}: {rule.measured}"
        if first != rule.solvers[0]:
            why += f" ({rule.solvers[0]} does not accept this problem)"
            return Choice(names, why, index)
        successor = next(accepted, None) if rule.probe else None
        if successor is not None:
            probe = max(rule.probe, int(rule.probe_work / max(1.0, f.n * f.d * f.density)))
            why += f" ({first} gets {probe} iterations, then {successor} goes on)"
            return Choice(names, why, index, probe)
        return Choice(names, why, index)
    raise TypeError(f"solver 'auto' has no rule for {problem.describe()}")


def _accepts(name: str, problem: Problem) -> bool:
    return registry.solver_class(name).unsupported_reason(problem) is None


def _after(solvers: tuple[str, ...], name: str) -> tuple[str, ...]:
    return solvers[solvers.index(name) + 1 :]


@register
class Auto(Solver):
    """Pick the fastest certified method for the problem (:data:`RULES`), run it, and say so.

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for, handed to the chosen method.
    max_iter, time_limit :
        Passed to the chosen method (``max_iter`` in its own unit; None: its default).
        ``time_limit`` bounds the wall time of the whole call, fallbacks included.
    trace : bool or "every", default=True
        Passed to the chosen method when it is iterative.
    fallback : bool, default=True
        When the first method ends at ``max_iter`` or ``time_limit`` short of ``tol``, run the
        next candidate of the row, warm-started where it can be.
    """

    name = "auto"
    #: every kind with an exact method; :meth:`unsupported_reason` asks :func:`choose`
    supported: ClassVar = {
        kind: {} for kind in (HardMarginPrimal, SoftMarginPrimal, SoftMarginDual, KernelDual)
    } | {
        kind: {}
        for kind in (
            MulticlassHinge, Logistic, MultinomialLogistic, SVRPrimal, SVRDual, NuSVCDual,
            NuSVRDual, OneClassDual,
        )
    }  # fmt: skip
    iteration_unit = "iterations of the chosen solver (info['auto'])"
    warm_start_uses = ("alpha", "w", "W", "beta", "qp")
    default_max_iter = 0  # never used: None means each method's own default
    #: the statuses after which the next method may go on (:meth:`first_method`'s callers read
    #: it; :meth:`go_on` decides, a ``not_certified`` going on only as :func:`_goes_on` says)
    retried: ClassVar = GOES_ON
    checks_separation = False  # the chosen method's record already did

    def __init__(
        self,
        *,
        tol: float = 1e-6,
        max_iter: int | None = None,
        time_limit=None,
        trace=True,
        fallback: bool = True,
    ):
        super().__init__(tol=tol, max_iter=max_iter, time_limit=time_limit)
        self.max_iter = max_iter
        if trace not in (True, False, "every"):
            raise ValueError(f"trace must be True, False or 'every', got {trace!r}")
        self.trace = trace
        self.fallback = check_bool("fallback", fallback)

    @classmethod
    def unsupported_reason(cls, problem: Problem) -> str | None:
        if not isinstance(problem, Problem):
            return f"a svmbench problem is expected, got {type(problem).__name__}"
        if problem.kind in _NO_EXACT:
            return (
                f"no exact method solves {problem.kind!r}; use {_NO_EXACT[problem.kind]!r} "
                "(stochastic, its gap is certified but not driven to tol)"
            )
        try:
            choose(problem)
        except TypeError as exc:
            return str(exc)
        return None

    def check_accepts(self, problem: Problem) -> None:
        """As every solver's, keeping the choice for :meth:`_run` (the rules run once a call)."""
        if isinstance(problem, Problem) and problem.kind not in _NO_EXACT:
            try:
                self._choice = (problem, choose(problem))
                return
            except TypeError:
                pass
        super().check_accepts(problem)

    @classmethod
    def memory_estimate(cls, problem: Problem, **options) -> float | None:
        """The first chosen method's estimate (a fallback runs after it, not beside it)."""
        first = choose(problem).solvers[0]
        return registry.solver_class(first).memory_estimate(problem)

    def _options(self, name: str, probe: int = 0) -> dict[str, Any]:
        cls = registry.solver_class(name)
        options: dict[str, Any] = {"tol": self.tol}
        if self.max_iter is not None:
            options["max_iter"] = self.max_iter
        elif probe:
            options["max_iter"] = probe
        if registry.accepts_option(cls, "trace"):
            options["trace"] = self.trace
        return options

    def _inner(self, name: str, time_left: float, probe: int = 0) -> Solver:
        """The chosen method's solver, built once per name and options, given the time left
        (spent: one chunk, then stop)."""
        # the options are those of (name, probe) and of auto's own tol, max_iter and trace
        key = (name, probe, self.tol, self.max_iter, self.trace)
        cache = self.__dict__.setdefault("_solvers", {})
        solver = cache.get(key)
        if solver is None:
            solver = cache[key] = registry.get(name, **self._options(name, probe))
        solver.time_limit = max(time_left, 1e-12) if math.isfinite(time_left) else math.inf
        solver.records_problem_key = self.records_problem_key
        return solver

    def first_method(self, problem: Problem) -> Solver | None:
        """The method auto runs first on ``problem``, configured as auto runs it (its probe
        cap included), or None where auto's call does more than run it (a finite time limit
        shared with a fallback; a problem auto refuses). A caller that keeps only the record's
        variables, certificate and times (a reduction's binary problems) may run it directly
        and call :meth:`go_on` only when it stops at a limit or fails (:data:`RETRIED`): the
        same record as :meth:`solve`'s, without auto's second pass over the problem."""
        if math.isfinite(self.time_limit) or not isinstance(problem, Problem):
            return None
        if problem.kind in _NO_EXACT:
            return None  # auto's own call says why it refuses
        try:
            choice = choose(problem)  # unsupported_reason's test, kept for the run
        except TypeError:
            return None
        return self._inner(choice.solvers[0], math.inf, choice.probe if self.fallback else 0)

    def go_on(self, problem: Problem, first: SolveResult) -> SolveResult:
        """Auto's whole call on ``problem`` after its first method (:meth:`first_method`) ran
        and returned ``first``, which stopped short: the next methods go on from it as they
        would within :meth:`solve`. The record's times are those of this call (``first``'s
        own are the caller's to add)."""
        self._given = (problem, first)
        try:
            return self.solve(problem)
        finally:
            self.__dict__.pop("_given", None)

    def _run(self, problem, warm_start, clock, callback) -> Outcome:
        kept = getattr(self, "_choice", None)
        choice = kept[1] if kept is not None and kept[0] is problem else choose(problem)
        self._choice = None
        chosen, result, compile_time, excluded = [], None, 0.0, 0.0
        finished, kept = None, None  # kept: the best certified record of the methods tried
        start, unused = warm_start, ""
        first = registry.solver_class(choice.solvers[0])
        if not _takes(first, warm_start):
            # the choice does not bend to a warm start; say that this one goes unused
            start, unused = None, f"{first.name} {first.warm_start_refusal}: warm start not used"
        for name in choice.solvers if self.fallback else choice.solvers[:1]:
            if chosen and not _accepts(name, problem):
                continue
            if chosen and not _takes(registry.solver_class(name), start):
                start = None  # the next method starts itself
            probe = choice.probe if self.fallback and not chosen else 0
            given = self.__dict__.pop("_given", None) if not chosen else None
            if given is not None and given[0] is problem:
                result = given[1]  # the first method's record, run by the caller (go_on)
            else:
                solver = self._inner(name, self.time_limit - (clock.wall - compile_time), probe)
                compiled = solver.warm_up_for(problem)
                compile_time += compiled
                entered = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)  # auto warns once, below
                    result = solver.solve(problem, warm_start=start, callback=callback)
                # the inner call's own certificates (trace, record) are certify time here too
                excluded += compiled + (time.perf_counter() - entered) - result.solve_time
                clock.certify_time += result.certify_time
            chosen.append(name)
            if result.certified and (kept is None or result.rel_gap < kept[1].rel_gap):
                kept = (name, result)
            retry = _goes_on(result) and not (callback is not None and "callback" in result.message)
            if retry and probe and result.status is Status.MAX_ITER:
                finished = _finished_probe(problem, result, choice.solvers, name, self.tol)
                if finished is not None:  # the probe's point, finished exactly: certified
                    break
            if not retry or clock.wall - compile_time >= self.time_limit:
                if retry and probe and result.status is Status.MAX_ITER:
                    # the probe's cap is auto's, not the user's: the time limit stopped the run
                    message = f"{STATUS_MESSAGES[Status.TIME_LIMIT]} (after a probe of {probe})"
                    result = replace(result, status=Status.TIME_LIMIT, message=message)
                break
            # after a numerical failure or a point that rounding leaves uncertified the next
            # method starts from scratch, unless it only reads its first active set from the
            # point (active_set) and the point is certified
            failed = result.status in (Status.NUMERICAL_ERROR, Status.NOT_CERTIFIED) and not (
                result.certified and _reads_active_set(choice.solvers, name, problem)
            )
            start = WarmStart.parse(result, problem) if result.variables and not failed else None
        if finished is not None:
            return self._finished_outcome(result, finished, chosen, choice, compile_time, excluded)
        chose, after = chosen[-1], ""
        if not result.certified and kept is not None:
            # the last method ended with no certified point: the record keeps the best one
            after = f"; {chose} ended {result.status.value} with no certified point"
            chose, result = kept
        info = dict(result.info)
        info["auto"] = {
            "chose": chose,
            "why": choice.why,
            "rule": choice.rule,
            "tried": tuple(chosen),
        }
        if unused:
            info["auto"]["warm_start"] = unused
        if len(chosen) > 1:
            info["auto"]["why"] += (
                f"; {', '.join(chosen[:-1])} stopped short of tol, {chosen[-1]} went on" + after
            )
        self._chosen, self._last = registry.solver_class(chose), (problem, result)
        return Outcome(
            status=result.status,
            variables=result.variables,
            iterations=result.iterations,
            certificate=_certificate_of(result),
            farkas=result.farkas,
            message=f"{chose}: {result.message}" + (f" ({unused})" if unused else "") + after,
            info=info,
            model=result.model,
            trace=result.trace,
            compile_time=compile_time,
            excluded_time=excluded,
        )

    def _finished_outcome(self, probe, finished, chosen, choice, compile_time, excluded):
        """The outcome of a probe whose point the exact finish made certified at tol
        (:func:`_finished_probe`): the record is built anew from the finished point."""
        variables, cert, report = finished
        name = chosen[-1]
        info = {**probe.info, "exact_finish": report}
        why = f"{choice.why}; {name} stopped at its probe, the exact finish of its point certified"
        info["auto"] = {"chose": name, "why": why, "rule": choice.rule, "tried": tuple(chosen)}
        self._chosen, self._last = registry.solver_class(name), None
        return Outcome(
            status=Status.OPTIMAL,
            variables=variables,
            iterations=probe.iterations,
            certificate=cert,
            message=(
                f"{name}: stopped at its probe of {probe.iterations} {probe.iteration_unit}; its "
                "point finished exactly (bounded multipliers set, the free ones solved) and "
                "certified"
            ),
            info=info,
            trace=probe.trace,
            compile_time=compile_time,
            excluded_time=excluded,
        )

    def _result(self, problem, **fields):
        solved, last = getattr(self, "_last", None) or (None, None)
        self._last = None
        if solved is problem:
            # the chosen method's record, certified by this problem already: renamed, not
            # built and checked twice (a rescaled run falls through to the base, its record
            # having been certified on the rescaled problem)
            if last.status in RETRIED:
                warnings.warn(
                    f"auto ({last.solver}): {STATUS_MESSAGES[last.status]} ({last.iterations} "
                    f"{last.iteration_unit})",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            return replaced(
                last,
                solver=self.name,
                solve_time=float(fields["solve_time"]),
                compile_time=float(fields["compile_time"]),
                message=fields["message"],
                info=fields["info"],
            )
        result = super()._result(problem, **fields)
        chosen = getattr(self, "_chosen", None)
        if chosen is None:
            return result
        return replace(result, iteration_unit=chosen.iteration_unit)


def _goes_on(result: SolveResult) -> bool:
    """Whether the next method of the choice goes on after ``result``: a limit or a numerical
    failure (:data:`RETRIED`), or ``not_certified`` with a certified point (on an indefinite
    problem, which certifies nothing whatever the method, it ends there)."""
    if result.status in RETRIED:
        return True
    return result.status is Status.NOT_CERTIFIED and result.certified


def _reads_active_set(solvers: tuple[str, ...], name: str, problem: Problem) -> bool:
    """Whether the method that accepts ``problem`` after ``name`` in ``solvers`` takes from a
    warm start only its active set (:attr:`Solver.warm_start_sets_active_set`), so that a point
    that failed on rounding near the optimum is still a good start."""
    following = next((n for n in _after(solvers, name) if _accepts(n, problem)), None)
    if following is None:
        return False
    return registry.solver_class(following).warm_start_sets_active_set


def _finished_probe(problem, result: SolveResult, solvers, name: str, tol: float):
    """``(variables, certificate, report)`` of the probe's point made exact on its active set,
    or None: :func:`~solvers.exact_finish.exact_finish` on the active sets of α's thresholds
    (the multipliers near a bound set to it, the KKT equations of the free ones solved), the
    first candidate the problem certifies at ``tol`` taken. Tried only where an exact
    active-set method would go on from the point (a small dense dual): one solve of the free
    set against that method's setup and the certificates of its padded points. Where the
    finish does not certify, that method goes on."""
    if not (result.certified and result.variables) or not finish_applies(problem):
        return None
    if not _reads_active_set(solvers, name, problem) or _c_times_diagonal(problem) > FINISH_MAX_CK:
        return None
    cert = problem.certificate(**result.variables)
    if not cert.certified:
        return None
    variables, cert, report = finish_exactly(
        problem,
        result.variables,
        cert,
        tol=max(tol, 2.0 * relative_gap(cert.gap + cert.rounding, cert.primal)),  # the probe passes
        max_free=problem.n_samples,
        stop_gap=tol,
        margins=False,
    )
    if not report.get("accepted") or not cert.meets(tol):
        return None
    return variables, cert, {**report, "early": True}


def _c_times_diagonal(problem) -> float:
    """``max C_i · max K̃_ii`` of a kernel dual (``K̃ = K + s²`` for a regularized bias)."""
    diag = 1.0 if problem.kernel == "rbf" else float(np.max(np.abs(problem.kernel_diagonal)))
    if problem.bias == "regularized":
        diag += problem.bias_scale**2
    return float(np.max(problem.dual_box()[1], initial=0.0)) * diag


def _certificate_of(result: SolveResult) -> Certificate | None:
    if math.isnan(result.primal):
        return None
    return Certificate(
        result.primal,
        result.dual,
        result.gap,
        result.rel_gap,
        result.certified,
        dict(result.residuals),
    )
