"""Judging a result: accuracy, distance to a cached reference optimum, the harness's record.

:func:`execute_case` runs one case in this process (data, JIT warm-up, ``repeat`` timed solves,
peak memory) and judges it into a :class:`Record`: the relative distance of its primal objective
to the reference optimum (:func:`reference`, Clarabel with OSQP standing in, cached on disk), the
accuracy (on the test split when the data spec has one), a confusion matrix (multiclass) and the
model of a small 2-D problem. :func:`negative_gap` is the regression check's test of a broken
certificate.

The comparison studies (``bench_*.py``) judge their runs with the same functions and time them
with :func:`interleaved`: every run once a round, so that a change of the machine's load hits
every side alike.
"""

from __future__ import annotations

import functools
import importlib
import math
import os
import statistics
import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from svmbench.benchmarks.harness.cases import Case
from svmbench.benchmarks.harness.environment import PeakMemory, environment, thread_info
from svmbench.benchmarks.harness.settings import REFERENCES, Settings
from svmbench.problems import REGRESSION_KINDS, HardMarginPrimal, MulticlassHinge
from svmbench.problems.base import WEAK_DUALITY_RTOL, Problem
from svmbench.problems.datasets import load
from svmbench.problems.model_files import model_to_dict
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning, SolveResult, Status

#: Statuses the harness gives beside the solvers' own (:class:`solvers.base.Status`).
TIMEOUT, CRASHED, ERROR, SKIPPED = "timeout", "crashed", "error", "skipped"
HARNESS_STATUSES = (TIMEOUT, CRASHED, ERROR, SKIPPED)

#: Variables kept in a record (for decision-boundary plots) only for 2-D data up to this size.
_MODEL_MAX_SAMPLES = 5000


@dataclass(frozen=True)
class Record:
    """A finished case: the solver's result and the harness's judgement of it.

    Attributes
    ----------
    case : Case
    result : SolveResult or None
        None when the case did not produce one (timeout, crash, error, skip).
    reference_primal, reference_dual : float
        The reference's certified objective values (``inf`` primal for an infeasible hard
        margin); NaN without a reference.
    reference_solver : str
    distance : float
        ``|P − P*| / max(1, |P*|)`` with ``P*`` the reference primal value.
    accuracy : float
        On the test split when the data spec has one (``accuracy_on == "test"``), else on the
        training set.
    status : str
        The solver's status, or ``timeout``, ``crashed``, ``error``, ``skipped``.
    solve_time : float
        Median over ``solve_times`` (one per repeat): the solver clock.
    wall_time : float
        Median over the repeats of the solver's ``wall_time`` (entering ``solve`` to returning,
        JIT compilation excluded): what a user's stopwatch shows around the call.
    case_time : float
        Seconds the whole case took in its worker (data, solves, reference, judgement).
    peak_memory_mb, baseline_memory_mb : float
        Peak resident memory of the worker during the case and before it.
    threads : dict
        Numba and BLAS threads the case ran with.
    jobs : int
        Cases that could run at the same time; ``parallel`` is ``jobs > 1``.
    environment : dict
        Versions, machine and git commit.
    extras : dict
        Sizes, confusion matrix (multiclass), model variables (2-D data), timings.
    """

    case: Case
    result: SolveResult | None
    reference_primal: float = math.nan
    distance: float = math.nan
    accuracy: float = math.nan
    status: str = ""
    reference_dual: float = math.nan
    reference_solver: str = ""
    accuracy_on: str = ""
    solve_time: float = math.nan
    solve_times: tuple[float, ...] = ()
    peak_memory_mb: float = math.nan
    baseline_memory_mb: float = math.nan
    memory_estimate_mb: float = math.nan
    threads: dict[str, Any] = field(default_factory=dict)
    jobs: int = 1
    environment: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    extras: dict[str, Any] = field(default_factory=dict)
    wall_time: float = math.nan
    case_time: float = math.nan

    def __post_init__(self):
        if not self.status:
            object.__setattr__(self, "status", self.result.status.value if self.result else ERROR)
        if self.result is not None and math.isnan(self.solve_time):
            object.__setattr__(self, "solve_time", self.result.solve_time)

    @property
    def parallel(self) -> bool:
        return self.jobs > 1


# --------------------------------------------------------------------------------------------------
# One case, in this process
# --------------------------------------------------------------------------------------------------


def accuracy(problem: Problem, result: SolveResult, X=None, y=None) -> float:
    """Fraction of points the result's model classifies correctly (training set by default);
    NaN for a regression (its score is :func:`r2`). A one-class model is scored against the
    labels given (+1 inlier, −1 outlier); without them, NaN."""
    if result.status in (Status.INFEASIBLE, Status.UNBOUNDED, Status.NUMERICAL_ERROR):
        return math.nan
    if result.model is None or problem.kind in REGRESSION_KINDS:
        return math.nan
    y = getattr(problem, "y", None) if y is None else y
    if y is None:
        return math.nan
    X = problem.X if X is None else X
    return float(np.mean(result.model.predict(X) == y))


def r2(result: SolveResult, X, y) -> float:
    """The coefficient of determination ``1 − Σ(y − f)²/Σ(y − ȳ)²`` of a regression's model."""
    if result.model is None or result.status in (Status.UNBOUNDED, Status.NUMERICAL_ERROR):
        return math.nan
    residual = float(np.sum((y - result.model.predict(X)) ** 2))
    spread = float(np.sum((y - np.mean(y)) ** 2))
    return 1.0 - residual / spread if spread > 0 else math.nan


def _confusion(problem: MulticlassHinge, result: SolveResult, X, y) -> list[list[int]]:
    k = problem.n_classes
    pred = result.model.predict(X)
    m = np.zeros((k, k), dtype=int)
    np.add.at(m, (np.asarray(y, dtype=int), pred.astype(int)), 1)
    return m.tolist()


#: The references of the problems that are not QPs (no ``to_qp``), tried after the QP ones.
NON_QP_REFERENCES = {
    "logistic": ("logistic_cvxpy",),
    "multinomial_logistic": ("logistic_cvxpy",),
}


def reference(
    problem: Problem,
    solver: str = "clarabel",
    *,
    cache_dir: str | os.PathLike | None = None,
    time_limit: float | None = None,
) -> SolveResult | None:
    """The reference optimum of ``problem``, cached on disk in ``cache_dir``.

    ``solver`` is ``"clarabel"``, ``"osqp"``, ``"cvxpy"`` or ``"none"`` (no reference: None);
    where it stops short of a certified optimum (or infeasibility certificate), the other of
    Clarabel and OSQP stands in; a problem that is not a QP takes its own reference
    (:data:`NON_QP_REFERENCES`). None when none certifies the problem.
    """
    from svmbench.solvers import registry

    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    if solver not in (*REFERENCES, "none"):
        raise ValueError(f"solver must be one of {', '.join(REFERENCES)} or 'none', got {solver!r}")
    if solver == "none":
        return None
    fallback = "osqp" if solver == "clarabel" else "clarabel"
    cache = _reference_cache(None if cache_dir is None else str(cache_dir))
    opts = {} if time_limit is None else {"time_limit": time_limit}
    for name in (solver, fallback, *NON_QP_REFERENCES.get(problem.kind, ())):
        if registry.solver_class(name).unsupported_reason(problem):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = cache.get(problem, registry.get(name, **opts))
        if result.status in (Status.OPTIMAL, Status.INFEASIBLE):
            return result
    return None


def default_cache_dir() -> str:
    """Where the comparison studies cache reference optima: ``SVMBENCH_CACHE_DIR``, else
    ``~/.cache/svmbench``."""
    return os.environ.get("SVMBENCH_CACHE_DIR") or os.path.expanduser("~/.cache/svmbench")


@functools.cache
def _reference_cache(cache_dir: str | None):
    from svmbench.solvers._reference import ReferenceCache

    return ReferenceCache(cache_dir)


def _distance(problem: Problem, result: SolveResult, ref: SolveResult | None) -> float:
    if ref is None:
        return math.nan
    if isinstance(problem, HardMarginPrimal) and ref.status is Status.INFEASIBLE:
        return 0.0 if result.status is Status.INFEASIBLE else math.inf
    if result.status is Status.INFEASIBLE:
        return math.inf
    return abs(result.primal - ref.primal) / max(1.0, abs(ref.primal))


def _model(problem: Problem, result: SolveResult) -> dict[str, Any] | None:
    """The model of a small 2-D problem (:func:`~svmbench.problems.models.model_to_dict`), stored
    for a decision-boundary plot."""
    if problem.n_features != 2 or problem.n_samples > _MODEL_MAX_SAMPLES or result.model is None:
        return None
    return model_to_dict(result.model)


def _recertified(solver, problem: Problem, result: SolveResult) -> dict[str, Any] | None:
    """The problem's certificate of the returned variables, computed anew by the harness
    (``Solver.certify_result``), for ``svmbench check`` to hold the record's fields to it."""
    tic = time.perf_counter()
    cert = solver.certify_result(problem, result)
    if cert is None:
        return None
    return {
        "primal": cert.primal,
        "dual": cert.dual,
        "rel_gap": cert.rel_gap,
        "rounding": cert.rounding,
        "certified": bool(cert.certified),
        "time": time.perf_counter() - tic,
    }


def execute_case(
    case: Case,
    settings: Settings | None = None,
    *,
    cache_dir: str | None = None,
    commit: str | None = None,
    jobs: int = 1,
    phase: Callable[[str, Record | None], None] | None = None,
) -> Record:
    """Solve one case ``settings.repeat`` times in this process and judge the last result.

    Parameters
    ----------
    case : Case
    settings : Settings, default=Settings()
    cache_dir : str, default=None
        Directory of the on-disk cache of reference optima.
    commit : str, default=None
        Git commit to record (default: asked of git here).
    jobs : int, default=1
        Cases that may run at the same time (recorded).
    phase : callable, default=None
        Told ``("compiling", None)`` before the solver's JIT warm-up, ``("solving", None)``
        before the solves and ``("solved", record)`` (a record without
        the reference) before the reference solve.

    Returns
    -------
    Record
        Status ``error`` (with the traceback's last line) when the solver raises.
    """
    settings = settings or Settings()
    phase = phase or (lambda name, record: None)
    started = time.perf_counter()
    for module in settings.imports:
        importlib.import_module(module)
    dataset = load(case.data)
    problem = case.build_problem(dataset)
    extras: dict[str, Any] = {
        "n_samples": problem.n_samples,
        "n_features": problem.n_features,
        "n_test": 0 if dataset.X_test is None else dataset.X_test.shape[0],
        "n_classes": dataset.n_classes,
        "classes": list(dataset.classes),
        "problem_key": problem.key,
        "anchor": registry.is_anchor(case.solver),
        "convex": bool(getattr(problem, "convex", True)),
    }
    base = {
        "jobs": jobs,
        "environment": environment(commit),
        "threads": thread_info(),
        "extras": extras,
    }
    solver = registry.get(case.solver, **case.solver_options)
    phase("compiling", None)
    tic = time.perf_counter()  # JIT compilation (or loading from the cache) before the clock
    solver.warm_up_for(problem)  # what this problem runs, as execution.warm_up compiled it
    extras["worker_warm_up"] = time.perf_counter() - tic
    phase("solving", None)
    times, walls, result = [], [], None
    try:
        with PeakMemory() as mem, warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for _ in range(settings.repeat):
                result = solver.solve(problem)
                times.append(result.solve_time)
                walls.append(result.wall_time)
    except Exception as exc:  # the solver's failure is the case's result
        tb = traceback.format_exception(exc)
        return Record(
            case,
            None,
            status=ERROR,
            message=f"{type(exc).__name__}: {exc}",
            extras={**extras, "traceback": "".join(tb[-6:])},
            case_time=time.perf_counter() - started,
            **{k: v for k, v in base.items() if k != "extras"},
        )
    extras["model"] = _model(problem, result)
    extras["recertified"] = _recertified(solver, problem, result)
    if dataset.X_test is not None:
        acc, on, X, y = (
            accuracy(problem, result, dataset.X_test, dataset.y_test),
            "test",
            *(
                dataset.X_test,
                dataset.y_test,
            ),
        )
    else:
        X, y = problem.X, getattr(problem, "y", dataset.y)
        acc, on = accuracy(problem, result, X, y), "train"
    if hasattr(problem, "n_classes") and result.model is not None:
        extras["confusion"] = _confusion(problem, result, X, y)
    if problem.kind in REGRESSION_KINDS:
        extras["r2"], extras["r2_on"] = r2(result, X, y), on
    record = Record(
        case,
        result,
        accuracy=acc,
        accuracy_on=on,
        solve_time=float(statistics.median(times)),
        solve_times=tuple(times),
        wall_time=float(statistics.median(walls)),
        peak_memory_mb=mem.peak,
        baseline_memory_mb=mem.baseline,
        message=result.message,
        **base,
    )
    phase("solved", record)
    ref = reference(
        problem,
        settings.reference,
        cache_dir=cache_dir,
        time_limit=settings.reference_time_limit,
    )
    if ref is not None:
        record = replace(
            record,
            reference_primal=ref.primal,
            reference_dual=ref.dual if ref.status is Status.OPTIMAL else -math.inf,
            reference_solver=ref.solver,
            distance=_distance(problem, result, ref),
        )
    return replace(record, case_time=time.perf_counter() - started)


def run_case(case: Case, settings: Settings | None = None) -> Record:
    """Solve one case in this process and judge it against the Clarabel reference."""
    return execute_case(case, settings)


def negative_gap(record: Record) -> bool:
    """Whether the record's certified gap is negative beyond rounding (a broken certificate)."""
    r = record.result
    if r is None or not math.isfinite(r.gap) or not record.extras.get("convex", True):
        return False
    return r.gap < -WEAK_DUALITY_RTOL * max(1.0, abs(r.primal))


# --------------------------------------------------------------------------------------------------
# Timed rounds of the comparison studies
# --------------------------------------------------------------------------------------------------


def interleaved(
    runs: Mapping[str, Callable[[], Any]],
    repeat: int,
    *,
    rotate: bool = False,
    warm_up: bool = False,
) -> dict[str, list[Any]]:
    """Call every run once a round, ``repeat`` rounds, and collect what each returned.

    The runs of a round follow each other, so that a change of the machine's load hits them all
    alike; with ``rotate`` the order shifts by one run from round to round (no run is always
    first). ``warm_up`` calls each run once beforehand, untimed and discarded (JIT compilation,
    imports, page faults).

    Returns
    -------
    dict
        ``{name: [value of round 1, value of round 2, ...]}`` in the order of ``runs``.
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be an integer >= 1, got {repeat!r}")
    for name, run in runs.items():
        if not callable(run):
            raise TypeError(f"runs[{name!r}] must be callable, got {type(run).__name__}")
    names = list(runs)
    if warm_up:
        for name in names:
            runs[name]()
    out: dict[str, list[Any]] = {name: [] for name in names}
    for k in range(repeat):
        shift = k % len(names) if rotate and names else 0
        for name in names[shift:] + names[:shift]:
            out[name].append(runs[name]())
    return out


def median_solve_time(results) -> float:
    """Median ``solve_time`` of solver results (NaN for none)."""
    times = [r.solve_time for r in results]
    return float(statistics.median(times)) if times else math.nan


__all__ = [
    "CRASHED",
    "ERROR",
    "HARNESS_STATUSES",
    "SKIPPED",
    "TIMEOUT",
    "Record",
    "accuracy",
    "default_cache_dir",
    "execute_case",
    "interleaved",
    "median_solve_time",
    "negative_gap",
    "reference",
    "run_case",
]
