"""The solver interface: one result record, one base class, one stopping rule for every method.

A solver is configured by keyword-only options (tolerances, limits) and applied to a problem by
``solve(problem, warm_start=None, callback=None)``. The problem judges the outcome: ``primal``,
``dual`` and ``gap`` in a :class:`SolveResult` always come from ``problem.certificate``, never from
the solver's own word (ARCHITECTURE.md §4).
"""

from __future__ import annotations

import abc
import enum
import math
import time
import warnings
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from svmbench.problems._validation import check_int, check_option, check_real
from svmbench.problems.base import Certificate, Problem


class Status(enum.StrEnum):
    """How a solve ended."""

    OPTIMAL = "optimal"
    MAX_ITER = "max_iter"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NUMERICAL_ERROR = "numerical_error"


STATUS_MESSAGES = {
    Status.OPTIMAL: "converged: the stopping rule was met",
    Status.MAX_ITER: "stopped at max_iter before the stopping rule was met",
    Status.TIME_LIMIT: "stopped at time_limit before the stopping rule was met",
    Status.INFEASIBLE: "the problem is infeasible (see the Farkas certificate)",
    Status.UNBOUNDED: "the problem is unbounded",
    Status.NUMERICAL_ERROR: "the method failed numerically",
}


class ConvergenceWarning(UserWarning):
    """A solve ended on ``max_iter`` or ``time_limit`` before its stopping rule was met."""


@dataclass(frozen=True)
class Checkpoint:
    """One point of a solver's trace: the certified objective values after ``iteration``.

    ``solve_time`` is the solver's clock at that point (certificates drawn only for the trace
    are not counted).
    """

    iteration: int
    solve_time: float
    primal: float
    dual: float
    gap: float

    @property
    def rel_gap(self) -> float:
        return self.gap / max(1.0, abs(self.primal))


@dataclass(frozen=True)
class SolveResult:
    """The record every solver returns, references included.

    Attributes
    ----------
    solver : str
        Registry name of the solver.
    problem : str
        ``problem.kind``; ``problem_key`` is the problem's hash.
    status : Status
    primal, dual, gap, rel_gap : float
        Certified by the problem (``certified`` says whether weak duality vouches for them).
    iterations : int
        Counted in ``iteration_unit`` (epochs, pair updates, Newton steps, oracle calls, ...).
    solve_time, compile_time : float
        Seconds; JIT compilation and trace-only certificates are excluded from ``solve_time``.
    trace : tuple of Checkpoint
    w, b, alpha : binary variables; W, beta : multiclass variables (whichever exist).
    model : Model or None
        The fitted model (``decision_function(X)``, ``predict(X)``), self-contained and
        picklable (see :mod:`svmbench.problems.models`); None when there is no usable point
        (``infeasible``, ``numerical_error`` with non-finite iterates).
    farkas : ndarray or None
        Infeasibility certificate λ when ``status`` is ``infeasible``.
    residuals : mapping
        Feasibility residuals of the points handed to the certificate.
    message : str
    info : mapping
        Solver-specific extras (raw statuses, own bounds, QP vectors for warm starts).
    """

    solver: str
    problem: str
    problem_key: str
    status: Status
    primal: float
    dual: float
    gap: float
    rel_gap: float
    certified: bool
    iterations: int
    iteration_unit: str
    solve_time: float
    compile_time: float = 0.0
    trace: tuple[Checkpoint, ...] = ()
    w: np.ndarray | None = field(default=None, repr=False)
    b: float | np.ndarray | None = None
    alpha: np.ndarray | None = field(default=None, repr=False)
    W: np.ndarray | None = field(default=None, repr=False)
    beta: np.ndarray | None = field(default=None, repr=False)
    model: Any = field(default=None, repr=False)
    farkas: np.ndarray | None = field(default=None, repr=False)
    residuals: Mapping[str, float] = field(default_factory=dict)
    message: str = ""
    info: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def variables(self) -> dict[str, Any]:
        """The problem variables this result carries, as ``certificate`` keyword arguments."""
        names = ("w", "b", "alpha", "W", "beta")
        return {k: getattr(self, k) for k in names if getattr(self, k) is not None}


class Clock:
    """A stopwatch that can be paused (for trace checkpoints and callbacks)."""

    def __init__(self) -> None:
        self._elapsed = 0.0
        self._started: float | None = None

    def start(self) -> Clock:
        if self._started is None:
            self._started = time.perf_counter()
        return self

    def stop(self) -> float:
        if self._started is not None:
            self._elapsed += time.perf_counter() - self._started
            self._started = None
        return self._elapsed

    @property
    def elapsed(self) -> float:
        running = 0.0 if self._started is None else time.perf_counter() - self._started
        return self._elapsed + running

    @contextmanager
    def paused(self):
        was_running = self._started is not None
        self.stop()
        try:
            yield
        finally:
            if was_running:
                self.start()


Callback = Callable[[Checkpoint], "bool | None"]


class Solver(abc.ABC):
    """Base of every solver.

    Subclasses declare ``name``, ``iteration_unit`` and ``supported``: a mapping from problem
    class to the parameter values they accept (e.g. ``{SoftMarginDual: {"bias": ("none",
    "regularized")}}``); :meth:`unsupported_reason` reads it, and ``solve`` raises ``TypeError``
    naming the solver and the problem for anything else.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the stopping rule: the certified relative duality gap
        ``(P − D)/max(1, |P|)`` unless the method documents another.
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
            if type(problem) is problem_cls:
                for attr, allowed in constraints.items():
                    value = getattr(problem, attr)
                    if callable(allowed):
                        why = allowed(problem)
                        if why:
                            return why
                    elif value not in allowed:
                        return f"{attr}={value!r} is not supported (supported: {allowed})"
                return None
        kinds = ", ".join(c.kind for c in cls.supported) or "none"
        return f"problem kind {problem.kind!r} is not supported (supported: {kinds})"

    def check_accepts(self, problem: Problem) -> None:
        """Raise ``TypeError`` naming the solver and the problem when it is not supported."""
        why = self.unsupported_reason(problem)
        if why:
            raise TypeError(f"solver {self.name!r} cannot solve {problem.describe()}: {why}")

    # ---- solving ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def solve(self, problem: Problem, *, warm_start=None, callback: Callback | None = None):
        """Solve ``problem`` and return a :class:`SolveResult`."""

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
        """Build the record; the certificate is computed here (outside any clock) if not given.

        The model comes from ``problem.model_from(variables)`` unless one is given (the
        reductions build theirs from their binary models)."""
        variables = dict(variables)
        if status is not Status.INFEASIBLE and not _all_finite(variables):
            status = Status.NUMERICAL_ERROR
            message = message or "the iterates contain NaN or inf"
        if status in (Status.INFEASIBLE, Status.UNBOUNDED) or not _all_finite(variables):
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
        if status in (Status.MAX_ITER, Status.TIME_LIMIT):
            warnings.warn(
                f"{self.name}: {STATUS_MESSAGES[status]} ({iterations} {self.iteration_unit})",
                ConvergenceWarning,
                stacklevel=3,
            )
        inf = math.inf
        return SolveResult(
            solver=self.name,
            problem=problem.kind,
            problem_key=problem.key,
            status=status,
            primal=cert.primal if cert else (inf if status is Status.INFEASIBLE else math.nan),
            dual=cert.dual if cert else math.nan,
            gap=cert.gap if cert else math.nan,
            rel_gap=cert.rel_gap if cert else math.nan,
            certified=cert.certified if cert else False,
            iterations=int(iterations),
            iteration_unit=self.iteration_unit,
            solve_time=float(solve_time),
            compile_time=float(compile_time),
            trace=tuple(trace),
            farkas=farkas,
            residuals=dict(cert.residuals) if cert else {},
            message=message or STATUS_MESSAGES[status],
            info=dict(info or {}),
            model=model,
            **{k: variables.get(k) for k in ("w", "b", "alpha", "W", "beta")},
        )


def _all_finite(variables: Mapping[str, Any]) -> bool:
    for v in variables.values():
        if v is not None and not np.all(np.isfinite(np.asarray(v, dtype=float))):
            return False
    return True


class IterativeSolver(Solver):
    """Template for methods that run in chunks (an epoch, a batch of pair updates, a Newton step).

    Subclasses implement ``_warm_up`` (untimed JIT compilation), ``_init_state`` (timed set-up),
    ``_step`` (one chunk; returns the number of iterations it did and whether the method's native
    rule says it has converged) and ``_variables`` (the current point as certificate arguments).

    Parameters
    ----------
    stop_rule : {"gap", "native"}, default="gap"
        ``"gap"``: stop when the certified relative gap ≤ ``tol`` (checked every ``check_every``
        chunks; the check is part of the timed algorithm). ``"native"``: stop when the method's own
        rule says so (LIBLINEAR's projected gradient, LIBSVM's maximal violating pair, ...); the
        certified gap is still reported. Subclasses may declare other rules (``stop_rules``);
        those in ``budget_rules`` (Pegasos's ``"epochs"``) run ``max_iter`` chunks, then report
        ``optimal`` only if the certified relative gap ≤ ``tol``, else ``max_iter``.
    check_every : int, default=1
        Chunks between two gap checks.
    trace : bool, default=True
        Record a :class:`Checkpoint` after every chunk (certificates drawn only for the trace pause
        the clock).
    """

    stop_rules: ClassVar[tuple[str, ...]] = ("gap", "native")
    #: Stop rules that run a planned budget of ``max_iter`` chunks (e.g. the epochs of a
    #: stochastic method). Reaching it is the plan, not a failure, but the status stays honest:
    #: ``optimal`` only if the certified relative gap of the final point is ≤ ``tol``, else
    #: ``max_iter`` (the message says the budget was planned).
    budget_rules: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, *, stop_rule: str = "gap", check_every: int = 1, trace: bool = True, **common
    ):
        super().__init__(**common)
        self.stop_rule = check_option("stop_rule", stop_rule, self.stop_rules)
        self.check_every = check_int("check_every", check_every, low=1)
        self.trace = bool(trace)

    def _warm_up(self) -> float:
        """Compile the jitted kernels on a tiny problem; return the seconds it took."""
        return 0.0

    @abc.abstractmethod
    def _init_state(self, problem: Problem, warm_start) -> Any: ...

    @abc.abstractmethod
    def _step(self, problem: Problem, state) -> tuple[int, bool]: ...

    @abc.abstractmethod
    def _variables(self, problem: Problem, state) -> dict[str, Any]: ...

    def _info(self, state) -> dict[str, Any]:
        return {}

    def solve(self, problem: Problem, *, warm_start=None, callback: Callback | None = None):
        self.check_accepts(problem)
        compile_time = self._warm_up()
        clock = Clock().start()
        state = self._init_state(problem, warm_start)
        trace: list[Checkpoint] = []
        iterations, chunks = 0, 0
        status, cert, message = None, None, ""
        while status is None:
            done_iters, native_converged = self._step(problem, state)
            iterations += done_iters
            chunks += 1
            cert = None
            due = chunks % self.check_every == 0 or native_converged
            if due or self.trace or callback is not None:
                # the finiteness check costs O(n): only where the point is looked at anyway
                variables = self._variables(problem, state)
                if not _all_finite(variables):
                    status, message = Status.NUMERICAL_ERROR, "the iterates contain NaN or inf"
                    break
            if self.stop_rule == "gap" and due:
                cert = problem.certificate(**variables)
                if cert.rel_gap <= self.tol:
                    status = Status.OPTIMAL
            elif self.stop_rule == "native" and native_converged:
                status = Status.OPTIMAL
            if self.trace or callback is not None:
                with clock.paused():
                    if cert is None:
                        cert = problem.certificate(**variables)
                    point = Checkpoint(iterations, clock.elapsed, cert.primal, cert.dual, cert.gap)
                    if self.trace:
                        trace.append(point)
                    if callback is not None and callback(point) and status is None:
                        status, message = Status.MAX_ITER, "stopped by the callback"
            if status is None and done_iters == 0:
                # a chunk that did no work will do none the next time: end instead of looping
                status = Status.NUMERICAL_ERROR
                message = "the method can make no further progress before its stopping rule holds"
            if status is None and iterations >= self.max_iter:
                status = Status.MAX_ITER
            if status is None and clock.elapsed >= self.time_limit:
                status = Status.TIME_LIMIT
        solve_time = clock.stop()
        if status is Status.MAX_ITER and not message and self.stop_rule in self.budget_rules:
            if cert is None:  # judging the final point is not part of a planned-budget run
                cert = problem.certificate(**self._variables(problem, state))
            met = cert.rel_gap <= self.tol
            status = Status.OPTIMAL if met else Status.MAX_ITER
            message = (
                f"ran the planned {iterations} {self.iteration_unit} (stop_rule="
                f"{self.stop_rule!r}); certified relative gap {cert.rel_gap:.3g} "
                f"{'<=' if met else '>'} tol={self.tol:g}"
            )
        return self._result(
            problem,
            status=status,
            variables=self._variables(problem, state),
            iterations=iterations,
            solve_time=solve_time,
            compile_time=compile_time,
            trace=trace,
            certificate=cert,
            message=message,
            info=self._info(state),
        )
