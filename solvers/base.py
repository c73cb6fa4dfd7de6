"""The solver interface: one result record, one base class, one stopping rule for every method.

A solver is configured by keyword-only options (tolerances, limits) and applied to a problem by
``solve(problem, warm_start=None, callback=None)``. The problem judges the outcome: ``primal``,
``dual`` and ``gap`` in a :class:`SolveResult` always come from ``problem.certificate``, never from
the solver's own word (docs/ARCHITECTURE.md §4).
"""

from __future__ import annotations

import abc
import functools
import inspect
import math
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from svmbench.problems.base import Certificate, Problem
from svmbench.problems.rounding import refinement_tol
from svmbench.problems.untrusted import machine_memory
from svmbench.problems.validation import check_int, check_option, check_real
from svmbench.solvers.chunk_loop import all_finite, run_chunks
from svmbench.solvers.clock import Clock
from svmbench.solvers.finish_outcome import finished_outcome
from svmbench.solvers.records import (
    STATUS_MESSAGES,
    Callback,
    Checkpoint,
    ConvergenceWarning,
    Outcome,
    Prepared,
    SolveResult,
    Status,
    StepOutcome,
    WarmStart,
    new_record,
    replaced,
)
from svmbench.solvers.status_rules import settled_status

#: The records' names, re-exported: the solvers import them from here.
__all__ = [
    "STATUS_MESSAGES",
    "Callback",
    "Checkpoint",
    "ConvergenceWarning",
    "IterativeSolver",
    "Outcome",
    "Prepared",
    "SolveResult",
    "Solver",
    "Status",
    "StepOutcome",
    "WarmStart",
    "once_per_process",
]


def once_per_process(warm_up: Callable[[Any], float]) -> Callable[[Any], float]:
    """A solver's ``warm_up`` run once per process (later calls return 0.0 at once)."""
    done = False

    @functools.wraps(warm_up)
    def run(self) -> float:
        nonlocal done
        if done:
            return 0.0
        seconds = warm_up(self)
        done = True
        return seconds

    return run


@functools.cache
def _estimate_options(cls: type) -> tuple[tuple[str, ...], bool]:
    """The options ``cls.memory_estimate`` names (besides the problem), and whether it also
    takes ``**options``."""
    params = inspect.signature(cls.memory_estimate).parameters
    var = inspect.Parameter.VAR_KEYWORD
    named = tuple(n for n, p in params.items() if n != "problem" and p.kind is not var)
    return named, any(p.kind is var for p in params.values())


def own_memory_estimate(cls: type, problem: Problem, options: Mapping[str, Any]) -> float | None:
    """``cls.memory_estimate(problem, **options)``, given only the options it names unless it
    takes ``**options`` (an override written as ``memory_estimate(cls, problem)`` still works)."""
    named, takes_any = _estimate_options(cls)
    if not takes_any:
        options = {k: v for k, v in options.items() if k in named}
    return cls.memory_estimate(problem, **options)


@functools.cache
def _machine_memory() -> int | None:
    """The machine's physical memory (:func:`machine_memory`), read once per process."""
    return machine_memory()


class Solver(abc.ABC):
    """Base of every solver: one entry point, :meth:`solve`, for all of them.

    ``solve`` checks that the problem is supported, parses the warm start, compiles (untimed,
    :meth:`warm_up`), runs the method on the solver clock (:meth:`_run`) and builds the record
    with the problem's certificate (:meth:`_result`). Subclasses implement ``_run`` (one-shot
    solvers: the references, the reductions, the anchors) or the hooks of
    :class:`IterativeSolver`; none overrides ``solve``.

    Subclasses declare ``name``, ``iteration_unit`` and ``supported``: a mapping from problem
    class to the parameter values they accept (e.g. ``{SoftMarginDual: {"bias": ("none",
    "regularized")}}``); :meth:`unsupported_reason` reads it, and ``solve`` raises ``TypeError``
    naming the solver and the problem for anything else.

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative duality gap ``(P − D)/max(1, |P|)`` asked for: ``optimal`` means
        certified with ``rel_gap ≤ tol``, for every solver. The methods stop on it by default
        (some offer their own rule as ``stop_rule="native"``); the references and anchors hand
        their library its own tolerance, ``eps``, and are judged at ``tol``.
    max_iter : int or None, default=None
        Iteration cap (in ``iteration_unit``); None means the method's generous default.
        Reaching it ends the run with status ``max_iter`` and a ``ConvergenceWarning``.
    time_limit : float or None, default=None
        Seconds of solve time; reaching it ends the run with status ``time_limit``.
    """

    name: ClassVar[str]
    iteration_unit: ClassVar[str]
    supported: ClassVar[Mapping[type, Mapping[str, tuple]]] = {}
    #: True for methods whose iterates are random (Pegasos, SGD): they stop on epochs.
    stochastic: ClassVar[bool] = False
    default_max_iter: ClassVar[int] = 10_000
    #: The :class:`WarmStart` fields the method can start from; empty: it takes no warm start.
    warm_start_uses: ClassVar[tuple[str, ...]] = ()
    #: True for a method that reads from a warm start only where to begin (its first active
    #: set), its result not depending on rounding in that point: ``auto`` hands it the point of
    #: a method that ended ``numerical_error`` near the optimum.
    warm_start_sets_active_set: ClassVar[bool] = False
    #: Why the method takes no warm start (the message of the ``ValueError``).
    warm_start_refusal: ClassVar[str] = "takes no warm start"
    #: Relative distance to the reference optimum that ``svmbench check`` allows (None: the
    #: harness's default for exact or stochastic methods; inf: not held to the optimum).
    check_rtol: ClassVar[float | None] = None
    #: False for one-shot methods, which call a callback once, at the end (its return value
    #: cannot stop them).
    reports_progress: ClassVar[bool] = True
    #: True for the reductions, whose certificate is that of their binary subproblems (the worst
    #: relative gap), not of the stacked model on the multiclass problem.
    optimal_by_subproblems: ClassVar[bool] = False
    #: False for a solver whose ``infeasible`` comes from another solver's record, where the
    #: search for a separating point was already made (``auto``).
    checks_separation: ClassVar[bool] = True
    #: True for the anchors (another library's solver run through this interface).
    anchor: ClassVar[bool] = False
    #: False where the caller reads the records and drops them (a reduction's binary solver,
    #: auto's method under it): ``problem_key`` is "", the data not hashed.
    records_problem_key: bool = True
    #: Options renamed since they were written, former name → name now (the references' and
    #: anchors' library tolerance was ``tol``, the references' certified gap ``gap_check``):
    #: :func:`solvers.registry.renamed_options` reads suites and stored records written before.
    former_names: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def missing_reason(cls) -> str | None:
        """Why this solver cannot run here (a library that is not installed), or None."""
        return None

    def __init__(self, *, tol: float = 1e-6, max_iter: int | None = None, time_limit=None):
        self.tol = check_real("tol", tol, low=0.0)
        self.max_iter = (
            self.default_max_iter if max_iter is None else check_int("max_iter", max_iter, low=1)
        )
        self.time_limit = (
            math.inf if time_limit is None else check_real("time_limit", time_limit, low=0.0)
        )

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({opts})"

    def options(self) -> dict[str, Any]:
        """The solver's configuration (what the harness records)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    # ---- capabilities ----------------------------------------------------------------------------
    @classmethod
    def unsupported_reason(cls, problem: Problem) -> str | None:
        """None when this solver accepts ``problem``, else a sentence saying why not."""
        for problem_cls, constraints in cls.supported.items():
            if isinstance(problem, problem_cls):
                for attr, allowed in constraints.items():
                    value = getattr(problem, attr)
                    if callable(allowed):
                        why = allowed(problem)
                        if why:
                            return why
                    elif value not in allowed:
                        return f"{attr}={value!r} is not supported (supported: {allowed})"
                return None
        kinds = ", ".join(getattr(c, "kind", c.__name__) for c in cls.supported) or "none"
        return f"problem kind {problem.kind!r} is not supported (supported: {kinds})"

    def check_memory(self, problem: Problem) -> None:
        """``MemoryError`` before anything is allocated when :meth:`memory_estimate` (with this
        solver's options) exceeds the machine's physical memory: such a run cannot finish."""
        named, _ = _estimate_options(type(self))
        # the options it names (what own_memory_estimate passes on)
        options = {name: getattr(self, name) for name in named if hasattr(self, name)}
        estimate = type(self).memory_estimate(problem, **options)
        if estimate is None:
            return
        total = _machine_memory()
        if total is not None and estimate > total:
            raise MemoryError(
                f"solver {self.name!r} would need about {estimate / 2**30:.1f} GiB for "
                f"{problem.describe()} (its memory model), more than this machine's "
                f"{total / 2**30:.1f} GiB; choose a solver for this size (svmbench list) or "
                "reduce the data"
            )

    def check_accepts(self, problem: Problem) -> None:
        """Raise ``TypeError`` naming the solver and the problem when it is not supported."""
        if not isinstance(problem, Problem):
            raise TypeError(
                f"solver {self.name!r} solves a svmbench problem (svmbench.problems), "
                f"got {type(problem).__name__}"
            )
        why = self.unsupported_reason(problem)
        if why:
            raise TypeError(f"solver {self.name!r} cannot solve {problem.describe()}: {why}")

    def certify_result(self, problem: Problem, result: SolveResult) -> Certificate | None:
        """The problem's certificate of the variables ``result`` returns, computed anew (None
        when it returns none: ``infeasible``, ``unbounded``, non-finite iterates). A check of
        the record's own fields, which must agree with it (``svmbench check``)."""
        variables = {
            k: getattr(result, k)
            for k in ("w", "b", "alpha", "W", "beta")
            if getattr(result, k) is not None
        }
        if result.status in (Status.INFEASIBLE, Status.UNBOUNDED) or not variables:
            return None
        if not all_finite(variables):
            return None
        return problem.certificate(**variables)

    @classmethod
    def memory_estimate(cls, problem: Problem, **options) -> float | None:
        """A coarse upper bound of the bytes the method allocates beyond the data, from its own
        model, or None for the harness's generic estimate. ``options`` are the case's
        constructor options (absent ones take their defaults). Every model is listed in
        the harness's per-case memory budget (docs/ARCHITECTURE.md §6)."""
        return None

    def warm_up(self) -> float:
        """Compile the jitted kernels on a tiny problem (never solve time); return the seconds
        it took. Idempotent (:func:`once_per_process`). :meth:`solve` calls ``warm_up_for``."""
        return 0.0

    def warm_up_for(self, problem: Problem) -> float:
        """Only what solving ``problem`` needs of :meth:`warm_up` (by default all of it)."""
        return self.warm_up()

    def parse_warm_start(self, warm_start, problem: Problem) -> WarmStart | None:
        """The validated :class:`WarmStart`, or ``ValueError`` naming ``warm_start``."""
        ws = WarmStart.parse(warm_start, problem)
        if ws is None:
            return None
        if not self.warm_start_uses:
            raise ValueError(f"warm_start: solver {self.name!r} {self.warm_start_refusal}")
        if not set(ws.fields) & set(self.warm_start_uses):
            raise ValueError(
                f"warm_start carries {', '.join(ws.fields)}; solver {self.name!r} starts from "
                f"{' or '.join(self.warm_start_uses)}"
            )
        return ws

    # ---- solving ---------------------------------------------------------------------------------
    def solve(self, problem: Problem, *, warm_start=None, callback: Callback | None = None):
        """Solve ``problem`` and return a :class:`SolveResult` certified by the problem.

        Parameters
        ----------
        problem : Problem
        warm_start : SolveResult, array, (w, b) pair or WarmStart, optional
            See :class:`WarmStart`; the fields a solver uses are in ``warm_start_uses``.
        callback : callable, optional
            ``callback(checkpoint) -> bool | None``; returning True stops the run. One-shot
            solvers (``reports_progress = False``) call it once, at the end.
        """
        entered = time.perf_counter()
        self.check_accepts(problem)
        self.check_memory(problem)
        ws = self.parse_warm_start(warm_start, problem)
        compile_time = self.warm_up_for(problem)
        clock = Clock().start()
        scale = problem.solving_scale() if hasattr(problem, "solving_scale") else 1.0
        with refinement_tol(getattr(self, "tol", None)):  # allowances refined as tol needs
            if scale == 1.0:
                outcome = self._run(problem, ws, clock, callback)
            else:
                outcome = self._run_rescaled(problem, scale, ws, clock, callback)
            outcome = self._finish(outcome, problem, clock)
            solve_time = max(0.0, clock.stop() - outcome.excluded_time)
            final = time.perf_counter()
            result = self._result(
                outcome.problem or problem,
                status=outcome.status,
                variables=outcome.variables,
                iterations=outcome.iterations,
                solve_time=solve_time,
                compile_time=compile_time + outcome.compile_time,
                trace=outcome.trace,
                certificate=outcome.certificate,
                farkas=outcome.farkas,
                message=outcome.message,
                info=outcome.info,
                model=outcome.model,
            )
        certify_time = clock.certify_time + (time.perf_counter() - final)
        if callback is not None and not self.reports_progress:
            callback(
                Checkpoint(result.iterations, solve_time, result.primal, result.dual, result.gap)
            )
        compiled = compile_time + outcome.compile_time
        wall_time = max(0.0, time.perf_counter() - entered - compiled)
        return replaced(result, wall_time=wall_time, certify_time=certify_time)

    def _run_rescaled(self, problem, scale: float, ws, clock: Clock, callback) -> Outcome:
        """Run on ``problem.rescaled(1/scale)`` (``Problem.solving_scale``: a problem whose
        optimum is ``(scale·w*, b*)`` there, with objectives ``scale²`` times the original's) and
        map everything back: ``w/scale``, ``α/scale²``, the trace's values ``/scale²``. The
        record is then certified by the given problem, as always."""
        f = 1.0 / scale
        inner = problem.rescaled(f)
        if ws is not None:
            ws = replace(
                ws,
                w=None if ws.w is None else ws.w * scale,
                alpha=None if ws.alpha is None else ws.alpha * scale**2,
                qp=None,
            )
            if not ws.fields:
                ws = None

        def back(p: Checkpoint) -> Checkpoint:
            return replace(p, primal=p.primal * f * f, dual=p.dual * f * f, gap=p.gap * f * f)

        inner_callback = None if callback is None else (lambda p: callback(back(p)))
        outcome = self._run(inner, ws, clock, inner_callback)
        variables = dict(outcome.variables)
        if variables.get("w") is not None:
            variables["w"] = np.asarray(variables["w"]) * f
        if variables.get("alpha") is not None:
            variables["alpha"] = np.asarray(variables["alpha"]) * f * f
        note = f"solved on X/{scale:.3g}, certified on X"
        return replace(
            outcome,
            variables=variables,
            certificate=None,
            model=None,
            problem=None,
            trace=tuple(back(p) for p in outcome.trace),
            info={**outcome.info, "solved_on_X_over": scale},
            message=f"{outcome.message or STATUS_MESSAGES[outcome.status]}; {note}",
        )

    def _finish(self, outcome: Outcome, problem: Problem, clock: Clock) -> Outcome:
        """The exact finish of the outcome (:func:`~solvers.finish_outcome.finished_outcome`)."""
        return finished_outcome(outcome, problem, clock, tol=self.tol, anchor=self.anchor)

    @abc.abstractmethod
    def _run(self, problem: Problem, warm_start: WarmStart | None, clock: Clock, callback):
        """Run the method on the solver clock and return an :class:`Outcome`."""

    def _result(
        self,
        problem: Problem,
        *,
        status: Status,
        variables: Mapping[str, Any],
        iterations: int,
        solve_time: float,
        compile_time: float = 0.0,
        trace=(),
        certificate: Certificate | None = None,
        farkas: np.ndarray | None = None,
        message: str = "",
        info: Mapping[str, Any] | None = None,
        model: Any = None,
    ) -> SolveResult:
        """Build the record; the certificate is computed here (outside any clock) if not given,
        the model by ``problem.model_from(variables)`` unless given (the reductions' own)."""
        variables = dict(variables)
        info = dict(info or {})
        if (
            status is Status.INFEASIBLE
            and self.checks_separation
            and hasattr(problem, "judge_infeasible")
        ):
            # infeasible only when the problem's own test holds: a checked Farkas vector and no
            # strictly separating point (an LP on centred, whitened data)
            refused = problem.judge_infeasible(farkas)
            if refused is not None:
                evidence, reason = refused
                status = Status.NUMERICAL_ERROR
                message = f"{message}; {reason}" if message else reason
                if "w" in evidence:  # margins ≥ 1: a feasible point
                    variables = {"w": evidence["w"], "b": evidence["b"]}
                    info["near_separable"] = {
                        k: evidence[k] for k in ("margin", "spread", "farkas_residuals")
                    }
                else:
                    info["farkas_residuals"] = evidence["farkas_residuals"]
        usable = all_finite(variables) and (bool(variables) or certificate is not None)
        pointless = (Status.INFEASIBLE,) if variables else (Status.INFEASIBLE, Status.TIME_LIMIT)
        if status not in pointless and not usable:
            status = Status.NUMERICAL_ERROR
            message = message or "the iterates contain NaN or inf"
        if status in (Status.INFEASIBLE, Status.UNBOUNDED) or not usable:
            cert = None
        else:
            cert = certificate or problem.certificate(**variables)
            # a solver that hands over one side (α only, say) still returns a usable model:
            # the primal point the certificate built for it
            for name, value in cert.primal_point.items():
                if variables.get(name) is None:
                    variables[name] = value
            if model is None:
                model = problem.model_from(variables)
        status, message = settled_status(problem, status, cert, self.tol, message)
        if status in (Status.MAX_ITER, Status.TIME_LIMIT):
            warnings.warn(
                f"{self.name}: {STATUS_MESSAGES[status]} ({iterations} {self.iteration_unit})",
                ConvergenceWarning,
                stacklevel=3,
            )
        return self._record(
            problem, status, variables, cert, model, message, info, iterations, solve_time,
            compile_time, trace=tuple(trace), farkas=farkas,
        )  # fmt: skip

    def _record(
        self, problem, status, variables, cert, model, message, info, iterations, solve_time,
        compile_time, **extra,
    ) -> SolveResult:  # fmt: skip
        """The record of a settled status, certificate (or None), model and ``extra`` fields."""
        nan = math.nan
        return new_record(
            solver=self.name, problem=problem.kind,
            problem_key=problem.deferred_key() if self.records_problem_key else "",
            status=status, iterations=int(iterations), iteration_unit=self.iteration_unit,
            solve_time=float(solve_time), compile_time=float(compile_time),
            primal=cert.primal if cert else (math.inf if status is Status.INFEASIBLE else nan),
            dual=cert.dual if cert else nan, gap=cert.gap if cert else nan,
            rel_gap=cert.rel_gap if cert else nan, certified=cert.certified if cert else False,
            residuals=dict(cert.residuals) if cert else {},
            message=message or STATUS_MESSAGES[status], info=info, model=model,
            **{k: variables.get(k) for k in ("w", "b", "alpha", "W", "beta")}, **extra,
        )  # fmt: skip


class IterativeSolver(Solver):
    """Template for methods that run in chunks (an epoch, a batch of pair updates, a Newton step).

    Subclasses implement the hooks, never ``solve``; the loop that calls them and decides when to
    stop is :func:`solvers.chunk_loop.run_chunks`:

    - :meth:`warm_up` (untimed JIT compilation);
    - :meth:`_prepare` (timed; optional): a transform of the problem before the iterations
      (barrier's phase I, a low-rank factorization), see :class:`Prepared`;
    - :meth:`_init_state` (timed set-up from the problem and the parsed :class:`WarmStart`);
    - :meth:`_step` (one chunk, returning a :class:`StepOutcome`);
    - :meth:`_variables` (the current point as certificate arguments) and :meth:`_info`.

    Parameters
    ----------
    stop_rule : {"gap", "native"}, default="gap"
        ``"gap"``: stop when the certified relative gap ≤ ``tol`` (checked every ``check_every``
        chunks; the check is part of the timed algorithm). ``"native"``: stop when the method's own
        rule says so (LIBLINEAR's projected gradient, LIBSVM's maximal violating pair, ...); the
        certified gap is still reported. Subclasses may declare other rules (``stop_rules``);
        those in ``budget_rules`` (Pegasos's ``"epochs"``) run ``max_iter`` chunks, then report
        ``optimal`` only if the certified relative gap ≤ ``tol``, else ``max_iter``.
    check_every : int or None, default=1
        Chunks between two gap checks (fixed spacing). None: adaptive, for methods that count
        their work (:meth:`_chunk_work`, :meth:`_certificate_work`): the (m+1)-th check comes
        once the chunks have done ``(m + 1)/CHECK_BUDGET`` certificates' work (each priced at
        its arithmetic plus ``CERTIFICATE_FIXED_WORK`` for the interpreter), so that the
        stopping tests cost at most 10 % of the solve in counted work (:class:`CheckSchedule`),
        and the last chunk before ``max_iter`` or ``time_limit`` is checked too; for the other
        methods, every ``default_check_every`` chunks. Whatever the spacing, the gap is also
        checked whenever the native rule holds and after the first chunk of a warm start.
    trace : {True, False, "every"}, default=True
        ``True``: record :class:`Checkpoint` s on a geometric schedule of chunks (1, 2, 3, 4, 6, 9,
        …, as benchopt samples its curves), the first always, then skipping any that would bring
        the certificates drawn only for the trace above ``TRACE_BUDGET`` of the wall time so far
        (its cost taken as their mean, judged before it is drawn); the certificates of
        the stopping tests are recorded too (they cost nothing more). ``False``: no certificate
        beyond the stopping tests and the final one. ``"every"``: a certificate after every
        chunk, whatever it costs. Trace-only certificates pause the solver clock and are counted
        in ``certify_time``, and in ``wall_time``.
    """

    stop_rules: ClassVar[tuple[str, ...]] = ("gap", "native")
    #: Stop rules that run a planned budget of ``max_iter`` chunks (e.g. the epochs of a
    #: stochastic method). Reaching it is the plan, not a failure, but the status stays honest:
    #: ``optimal`` only if the certified relative gap of the final point is ≤ ``tol``, else
    #: ``max_iter`` (the message says the budget was planned).
    budget_rules: ClassVar[tuple[str, ...]] = ()
    #: Spacing (in chunks) of the gap checks for ``check_every=None`` when the method does not
    #: count its work.
    default_check_every: ClassVar[int] = 1

    def __init__(
        self, *, stop_rule: str = "gap", check_every: int | None = 1, trace: bool = True, **common
    ):
        super().__init__(**common)
        self.stop_rule = check_option("stop_rule", stop_rule, self.stop_rules)
        self.check_every = (
            None if check_every is None else check_int("check_every", check_every, low=1)
        )
        if trace not in (True, False, "every"):
            raise ValueError(f"trace must be True, False or 'every', got {trace!r}")
        self.trace = trace

    def _prepare(self, problem: Problem, warm_start: WarmStart | None) -> Prepared:
        """Transform the problem before the iterations (timed); by default, nothing."""
        return Prepared(problem, warm_start)

    @abc.abstractmethod
    def _init_state(self, problem: Problem, warm_start) -> Any: ...

    @abc.abstractmethod
    def _step(self, problem: Problem, state) -> StepOutcome: ...

    @abc.abstractmethod
    def _variables(self, problem: Problem, state) -> dict[str, Any]: ...

    def _info(self, state) -> dict[str, Any]:
        return {}

    def _chunk_work(self, problem: Problem, state) -> float | None:
        """The counted work of the last chunk (entries of X read, kernel entries computed), in
        the unit of :meth:`_certificate_work`; None (the default): not counted."""
        return None

    def _certificate_work(self, problem: Problem) -> float | None:
        """The counted work of one stopping test's certificate (about ``2 nnz(X) + n`` for a
        linear problem: ``X w`` and ``Xᵀ(α∘y)``); None (the default): not counted, and
        ``check_every=None`` means ``default_check_every``."""
        return None

    def _trace_estimate(self, problem: Problem, state) -> tuple[float, float] | None:
        """The solver's own ``(primal, dual)`` estimate for a trace-only point of the geometric
        schedule (``trace=True``, no callback), recorded with ``certified=False`` instead of
        drawing a certificate; None (the default): certify."""
        return None

    def _run(self, problem: Problem, warm_start: WarmStart | None, clock: Clock, callback):
        return run_chunks(self, problem, warm_start, clock, callback)
