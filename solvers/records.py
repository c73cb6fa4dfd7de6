"""The result record of every solve and what a solve may start from.

- :class:`Status`: how a solve ended (docs/ARCHITECTURE.md §4: ``optimal`` ⇔ certified and
  ``rel_gap ≤ tol``, whatever rule stopped the method).
- :class:`Checkpoint`, :class:`SolveResult`: a trace point and the record, whose ``primal``,
  ``dual`` and ``gap`` always come from ``problem.certificate``.
- :class:`WarmStart`: a starting point, parsed and validated once by ``Solver.solve``.
- :class:`StepOutcome`, :class:`Prepared`, :class:`Outcome`: what a chunk, a solver's
  preparation and a whole run hand back to ``Solver.solve`` before the record is built.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

import numpy as np

from svmbench.problems.base import Certificate, Problem
from svmbench.problems.general_dual import GeneralDualProblem


class Status(enum.StrEnum):
    """How a solve ended."""

    OPTIMAL = "optimal"
    MAX_ITER = "max_iter"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NUMERICAL_ERROR = "numerical_error"
    #: The method's own rule held, but the problem's certificate does not meet ``tol`` (or
    #: cannot: an indefinite kernel's stationary point).
    NOT_CERTIFIED = "not_certified"


STATUS_MESSAGES = {
    Status.OPTIMAL: "converged: the stopping rule was met",
    Status.MAX_ITER: "stopped at max_iter before the stopping rule was met",
    Status.TIME_LIMIT: "stopped at time_limit before the stopping rule was met",
    Status.INFEASIBLE: "the problem is infeasible (see the Farkas certificate)",
    Status.UNBOUNDED: "the problem is unbounded",
    Status.NUMERICAL_ERROR: "the method failed numerically",
    Status.NOT_CERTIFIED: "the method's own rule held, short of a certificate meeting tol",
}


class ConvergenceWarning(UserWarning):
    """A solve ended on ``max_iter`` or ``time_limit`` before its stopping rule was met."""


@dataclass(frozen=True)
class Checkpoint:
    """One point of a solver's trace: the certified objective values after ``iteration``.

    ``solve_time`` is the solver's clock at that point (certificates drawn only for the trace
    are not counted); ``wall_time`` the user's stopwatch since the solve began (they are).
    ``certified=False``: the values are the solver's own estimate, not the problem's certificate
    (:meth:`IterativeSolver._trace_estimate`).
    """

    iteration: int
    solve_time: float
    primal: float
    dual: float
    gap: float
    wall_time: float = math.nan
    certified: bool = True

    @property
    def rel_gap(self) -> float:
        return self.gap / max(1.0, abs(self.primal))


class _Deferred:
    """A record field that may be given as a function of no arguments, called when the field is
    first read and replaced by its value (``problem_key``: the SHA-256 of the data, which a fit
    that nobody asks for it need not compute). Pickling stores the value."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, record, owner=None):
        if record is None:
            raise AttributeError(self.slot)  # the field has no default
        value = record.__dict__[self.slot]
        if callable(value):
            value = value()
            record.__dict__[self.slot] = value
        return value

    def __set__(self, record, value) -> None:
        record.__dict__[self.slot] = value


@dataclass(frozen=True)
class SolveResult:
    """The record every solver returns, references included.

    Attributes
    ----------
    solver : str
        Registry name of the solver.
    problem : str
        ``problem.kind``; ``problem_key`` is the problem's hash (given as
        ``problem.deferred_key()``, it is computed when first read).
    status : Status
    primal, dual, gap, rel_gap : float
        Certified by the problem (``certified`` says whether weak duality vouches for them).
    iterations : int
        Counted in ``iteration_unit`` (epochs, pair updates, Newton steps, oracle calls, ...).
    wall_time, solve_time, certify_time, compile_time : float
        Seconds (docs/ARCHITECTURE.md §4). ``wall_time``: entering ``solve`` to returning,
        everything but JIT compilation (what a user's stopwatch shows). ``solve_time``: the method,
        its stopping tests included. ``certify_time``: certificates drawn only for the trace and the
        final record. ``compile_time``: JIT compilation, never counted elsewhere.
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
    problem_key: str = _Deferred()  # type: ignore[assignment]
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
    wall_time: float = math.nan
    certify_time: float = 0.0
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

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_problem_key"] = self.problem_key  # the value, never the function
        return state

    @property
    def variables(self) -> dict[str, Any]:
        """The problem variables this result carries, as ``certificate`` keyword arguments."""
        names = ("w", "b", "alpha", "W", "beta")
        return {k: getattr(self, k) for k in names if getattr(self, k) is not None}


def replaced(record, **changes):
    """``dataclasses.replace(record, **changes)`` for the frozen records of this module (no
    ``__post_init__``), without the constructor's per-field pass."""
    new = object.__new__(type(record))
    new.__dict__.update(record.__dict__)
    for name, value in changes.items():
        object.__setattr__(new, name, value)
    return new


#: Largest magnitude of a warm start's entries: the methods square them.
WARM_START_MAX = 1e150


def _finite_array(name: str, value, shape: tuple[int, ...] | None) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"warm_start {name} must be an array of numbers, got {value!r}") from None
    if shape is not None and a.shape != shape:
        raise ValueError(f"warm_start {name} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"warm_start {name} must contain only finite values")
    if a.size and np.max(np.abs(a)) > WARM_START_MAX:
        raise ValueError(
            f"warm_start {name} must hold values of magnitude at most {WARM_START_MAX:g} (their "
            f"squares stay finite), got {np.max(np.abs(a)):.3g}"
        )
    return a


@dataclass(frozen=True)
class WarmStart:
    """A starting point, parsed and validated once by :meth:`Solver.solve`.

    Whatever a caller hands over as ``warm_start`` becomes one of these (``WarmStart.parse``):

    - a previous :class:`SolveResult` (any solver's, on a problem of the same shape): its
      variables, plus the exported QP's vectors ``qp = (x, y)`` when a reference produced it;
    - an array: the dual point, α of shape (n,) for a binary problem, β of shape (n, k) for the
      multiclass hinge;
    - a pair ``(w, b)`` (binary) or ``(W, b)`` (multiclass): the primal point;
    - a ``WarmStart`` built by hand.

    Wrong shapes, non-finite values and other types are a ``ValueError`` naming ``warm_start``.
    Each solver declares the fields it can start from (``Solver.warm_start_uses``); a warm start
    that carries none of them is refused, never silently ignored.
    """

    alpha: np.ndarray | None = None
    w: np.ndarray | None = None
    b: float | np.ndarray | None = None
    W: np.ndarray | None = None
    beta: np.ndarray | None = None
    qp: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        """The names of the variables this warm start carries."""
        names = ("alpha", "w", "W", "beta", "qp")
        return tuple(k for k in names if getattr(self, k) is not None)

    @classmethod
    def parse(cls, value, problem: Problem) -> WarmStart | None:
        """Validate ``value`` against ``problem``'s shapes (see the class docstring)."""
        if value is None:
            return None
        multiclass = hasattr(problem, "n_classes")
        if isinstance(value, SolveResult):
            info = value.info or {}
            qp = (info["qp_x"], info["qp_y"]) if "qp_x" in info and "qp_y" in info else None
            value = cls(value.alpha, value.w, value.b, value.W, value.beta, qp)
        elif isinstance(value, tuple) and len(value) == 2:
            primal, b = value
            value = cls(W=primal, b=b) if multiclass else cls(w=primal, b=b)
        elif isinstance(value, np.ndarray | list):
            value = cls(beta=value) if multiclass else cls(alpha=value)
        elif not isinstance(value, WarmStart):
            raise ValueError(
                "warm_start must be a SolveResult, a dual array, a (w, b) pair or a WarmStart, "
                f"got {type(value).__name__}"
            )
        return value._validated(problem, multiclass)

    def _validated(self, problem: Problem, multiclass: bool) -> WarmStart:
        n, d = problem.n_samples, problem.n_features
        k = getattr(problem, "n_classes", None)
        out: dict[str, Any] = {}
        if self.alpha is not None:
            # a general dual has its own variable count (ε-SVR and ν-SVR: 2n)
            m = getattr(problem, "dual_size", None)
            if m is None:
                m = problem.smo_form().n_variables if isinstance(problem, GeneralDualProblem) else n
            out["alpha"] = _finite_array("alpha", self.alpha, (m,))
        if self.w is not None:
            out["w"] = _finite_array("w", self.w, None).ravel()
            if out["w"].shape[0] != d:  # the chain model's w has its own length
                if not hasattr(problem, "lengths"):
                    raise ValueError(f"warm_start w must have length {d}, got {out['w'].shape}")
        if self.W is not None:
            out["W"] = _finite_array("W", self.W, (k, d) if k else None)
        if self.beta is not None:
            out["beta"] = _finite_array("beta", self.beta, (n, k) if k else None)
        if self.b is not None:
            b = _finite_array("b", self.b, (k,) if multiclass else ())
            out["b"] = b if multiclass else float(b)
        if self.qp is not None:
            x, y = self.qp
            out["qp"] = (_finite_array("qp x", x, None), _finite_array("qp y", y, None))
        if not out:
            raise ValueError("warm_start carries no variables")
        return WarmStart(**out)

    def dual_point(self, problem: Problem) -> np.ndarray:
        """A dual-feasible α for ``problem``: the given α (or, from ``(w, b)``,
        ``problem.dual_from_primal``) projected onto the box, and onto ``yᵀα = 0`` for a free
        bias. A result for another C thus lands in this problem's box."""
        if self.alpha is not None:
            return problem.project_dual(self.alpha)
        b = 0.0 if self.b is None or problem.bias == "none" else float(self.b)
        return problem.project_dual(problem.dual_from_primal(self.w, b))


@dataclass(frozen=True)
class StepOutcome:
    """What one chunk of an iterative method did.

    ``iterations`` in the solver's ``iteration_unit``; ``converged`` when the method's native
    rule holds; ``failure`` a sentence when the method cannot go on (it ends the run as
    ``numerical_error`` with the certified point so far); ``certificate`` the problem's
    certificate of the current point when the chunk drew it already (the barrier's early
    finish), which the stopping test then reads instead of drawing it again.
    """

    iterations: int
    converged: bool = False
    failure: str | None = None
    certificate: Certificate | None = None


@dataclass(frozen=True)
class Prepared:
    """What ``_prepare`` hands to the iterations: the problem they run on (the given one, or
    another form of it), the starting point, and work already done (phase I's steps).
    ``final`` ends the solve there (phase I's Farkas vector)."""

    problem: Problem
    warm_start: Any = None
    iterations: int = 0
    info: Mapping[str, Any] = field(default_factory=dict)
    message: str = ""
    final: Outcome | None = None


@dataclass(frozen=True)
class Outcome:
    """The end of a one-shot solve (``Solver._run``), before the record is built."""

    status: Status
    variables: Mapping[str, Any]
    iterations: int
    certificate: Certificate | None = None
    farkas: np.ndarray | None = None
    message: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)
    model: Any = None
    trace: tuple[Checkpoint, ...] = ()
    #: the problem that certifies the variables, when not the one given (a low-rank surrogate)
    problem: Problem | None = None
    compile_time: float = 0.0
    #: seconds inside the solve that were not the method's (the reductions' binary solvers
    #: compiling, say); subtracted from the solve clock
    excluded_time: float = 0.0


Callback = Callable[[Checkpoint], "bool | None"]


#: The defaults of :class:`SolveResult`'s fields (``problem_key`` has none), and the factories
#: of those built per record.
_RECORD_DEFAULTS = {
    f.name: f.default
    for f in fields(SolveResult)
    if f.default is not MISSING and f.name != "problem_key"
}
_RECORD_FACTORIES = {
    f.name: f.default_factory for f in fields(SolveResult) if f.default_factory is not MISSING
}


def new_record(*, problem_key, **values) -> SolveResult:
    """``SolveResult(problem_key=problem_key, **fields)`` without the frozen dataclass's
    per-field ``__setattr__`` (the record has no ``__post_init__``; ``problem_key`` goes to the
    slot its descriptor reads)."""
    record = object.__new__(SolveResult)
    state = record.__dict__
    state.update(_RECORD_DEFAULTS)
    for name, factory in _RECORD_FACTORIES.items():
        if name not in values:
            state[name] = factory()
    state.update(values, _problem_key=problem_key)
    return record
