"""Run benchmark cases in worker processes and judge each result against a reference optimum.

Each :class:`Record` carries the solver's certified result plus what the harness measures beside
it: the relative distance of its primal objective to the reference optimum, the accuracy (on the
test split when the data spec has one), the median solve time over the repeats, the peak memory,
the threads and the versions it ran with.

Execution
---------
:func:`execute_case` runs one case in the current process. :func:`run_cases` runs many:

- ``jobs >= 1`` (local): a pool of ``jobs`` worker processes started with the ``spawn`` method.
  Each worker pins its Numba and BLAS threads before importing anything (environment variables
  ``NUMBA_NUM_THREADS``, ``OMP_NUM_THREADS``, ... and threadpoolctl) and runs one case at a time.
  The main process watches every case against a deadline per phase (loading, solving, reference):
  a worker past its deadline is killed (status ``timeout``) and replaced, a worker that dies is
  recorded as ``crashed`` and replaced, and the run goes on.
- ``cluster=ADDRESS``: cases are tasks on a Dask distributed cluster, at most as many in flight as
  the cluster has threads. A task past its deadline is recorded as ``timeout`` and cancelled
  (Dask cannot kill a running task: prefer local workers for cases that may hang).

The JIT is warmed once in the main process (:func:`warm_up`) before any worker starts, so that
the workers load compiled kernels from Numba's on-disk cache. Reference optima are cached on disk
(``cache_dir``) and solved once across workers. Only the main process writes the results store.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import math
import multiprocessing
import os
import platform
import socket
import statistics
import subprocess
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any

import numpy as np

from svmbench.benchmarks.cases import (
    Case,
    Settings,
    data_family,
    data_size,
    make_solver,
    solver_class,
)
from svmbench.problems import HardMarginPrimal, MulticlassHinge
from svmbench.problems.base import WEAK_DUALITY_RTOL, Problem
from svmbench.problems.datasets import load
from svmbench.problems.models import model_to_dict
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
# The environment: versions, machine, threads
# --------------------------------------------------------------------------------------------------

_PACKAGES = (
    "numpy",
    "scipy",
    "numba",
    "scikit-learn",
    "osqp",
    "clarabel",
    "cvxpy",
    "libsvm-official",
    "liblinear-official",
    "scikit-learn-intelex",
    "threadpoolctl",
    "dask",
    "distributed",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.cache
def git_commit() -> str:
    """``HEAD`` of the repository this package runs from, with ``-dirty`` for local changes."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():  # an installed copy, not a checkout
        return "unknown"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head + ("-dirty" if dirty else "")) if head else "unknown"


@functools.cache
def _static_environment() -> dict[str, Any]:
    from importlib import metadata

    import psutil

    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "versions": versions,
        "machine": {
            "host": socket.gethostname(),
            "platform": platform.platform(),
            "cpu": _cpu_model(),
            "physical_cores": psutil.cpu_count(logical=False),
            "logical_cores": psutil.cpu_count(logical=True),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        },
    }


def environment(commit: str | None = None) -> dict[str, Any]:
    """Versions of Python and the numerical and solver packages, the machine, the git commit."""
    env = dict(_static_environment())
    env["git_commit"] = commit or git_commit()
    return env


def thread_info() -> dict[str, Any]:
    """The Numba and BLAS/OpenMP threads this process uses now."""
    from threadpoolctl import threadpool_info

    out: dict[str, Any] = {}
    try:
        import numba

        out["numba"] = numba.get_num_threads()
    except ImportError:
        pass
    for pool in threadpool_info():
        out[f"{pool.get('user_api')}:{pool.get('internal_api')}"] = pool.get("num_threads")
    return out


@contextlib.contextmanager
def pinned_threads(threads: int):
    """Limit Numba and BLAS/OpenMP threads to ``threads`` inside the block."""
    from threadpoolctl import threadpool_limits

    previous = None
    try:
        import numba

        previous = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    except ImportError:
        pass
    with threadpool_limits(limits=threads):
        try:
            yield
        finally:
            if previous is not None:
                import numba

                numba.set_num_threads(previous)


def _thread_env(threads: int) -> dict[str, str]:
    t = str(threads)
    return {
        "NUMBA_NUM_THREADS": t,
        "OMP_NUM_THREADS": t,
        "OPENBLAS_NUM_THREADS": t,
        "MKL_NUM_THREADS": t,
        "VECLIB_MAXIMUM_THREADS": t,
    }


# --------------------------------------------------------------------------------------------------
# Peak memory of the current process
# --------------------------------------------------------------------------------------------------


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


class PeakMemory:
    """Peak resident memory of this process inside a ``with`` block, in MB.

    On Linux the kernel's high-water mark is reset on entry (``/proc/self/clear_refs``) and read
    on exit (``VmHWM``); elsewhere a thread samples the resident size every 5 ms.
    """

    def __enter__(self):
        self.baseline = _rss_mb()
        self._hwm = False
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self._hwm = True
        except OSError:
            import threading

            self._peak = self.baseline
            self._stop = threading.Event()

            def sample():
                while not self._stop.wait(0.005):
                    self._peak = max(self._peak, _rss_mb())

            self._thread = threading.Thread(target=sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._hwm:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    self.peak = int(line.split()[1]) / 1024
                    break
            else:
                self.peak = _rss_mb()
        else:
            self._stop.set()
            self._thread.join()
            self.peak = max(self._peak, _rss_mb())
        return False


# --------------------------------------------------------------------------------------------------
# One case, in this process
# --------------------------------------------------------------------------------------------------


def accuracy(problem: Problem, result: SolveResult, X=None, y=None) -> float:
    """Fraction of points the result's model classifies correctly (training set by default)."""
    if result.status in (Status.INFEASIBLE, Status.UNBOUNDED, Status.NUMERICAL_ERROR):
        return math.nan
    if result.model is None:
        return math.nan
    y = problem.y if y is None else y
    X = problem.X if X is None else X
    return float(np.mean(result.model.predict(X) == y))


def _confusion(problem: MulticlassHinge, result: SolveResult, X, y) -> list[list[int]]:
    k = problem.n_classes
    pred = result.model.predict(X)
    m = np.zeros((k, k), dtype=int)
    np.add.at(m, (np.asarray(y, dtype=int), pred.astype(int)), 1)
    return m.tolist()


def _reference(problem: Problem, settings: Settings, cache_dir: str | None) -> SolveResult | None:
    """The reference optimum (the other reference where the first stops short), cached on disk."""
    from svmbench.solvers import registry

    if settings.reference == "none":
        return None
    fallback = "osqp" if settings.reference == "clarabel" else "clarabel"
    order = [settings.reference, fallback]
    cache = _reference_cache(cache_dir)
    last = None
    for name in order:
        if registry.solver_class(name).unsupported_reason(problem):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opts = {"time_limit": settings.reference_time_limit}
            last = cache.get(problem, registry.get(name, **opts))
        if last.status in (Status.OPTIMAL, Status.INFEASIBLE):
            return last
    return None


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
        "anchor": solver_class(case.solver).__module__ == "svmbench.benchmarks.anchors",
        "convex": bool(getattr(problem, "convex", True)),
    }
    base = {
        "jobs": jobs,
        "environment": environment(commit),
        "threads": thread_info(),
        "extras": extras,
    }
    solver = make_solver(case.solver, **case.solver_options)
    phase("compiling", None)
    tic = time.perf_counter()  # JIT compilation (or loading from the cache) before the clock
    solver.warm_up()
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
        acc, on, X, y = accuracy(problem, result), "train", problem.X, problem.y
    if isinstance(problem, MulticlassHinge) and result.model is not None:
        extras["confusion"] = _confusion(problem, result, X, y)
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
    ref = _reference(problem, settings, cache_dir)
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


# --------------------------------------------------------------------------------------------------
# JIT warm-up
# --------------------------------------------------------------------------------------------------


def warm_up(cases: Iterable[Case]) -> dict[str, float]:
    """Call each selected solver's ``warm_up`` once in this process (fills Numba's disk cache).

    Returns
    -------
    dict
        Seconds of warm-up per solver name (0 for solvers without jitted kernels); a warm-up
        that raises is reported as NaN and left to the cases to report.
    """
    out: dict[str, float] = {}
    for case in cases:
        if case.solver in out:
            continue
        try:
            solver = make_solver(case.solver, **case.solver_options)
        except (TypeError, ValueError):
            out[case.solver] = math.nan
            continue
        start = time.perf_counter()
        try:
            solver.warm_up()
        except Exception:
            out[case.solver] = math.nan
            continue
        out[case.solver] = time.perf_counter() - start
    return out


# --------------------------------------------------------------------------------------------------
# Local worker processes
# --------------------------------------------------------------------------------------------------


def _worker_main(conn, imports: tuple[str, ...], cache_dir, commit, jobs) -> None:
    """Body of a worker process: run the cases it is sent until it is sent None."""
    for module in imports:
        importlib.import_module(module)
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        case, settings = message
        conn.send(("loading", None))

        def phase(name, record):
            conn.send((name, record))

        try:
            record = execute_case(
                case, settings, cache_dir=cache_dir, commit=commit, jobs=jobs, phase=phase
            )
        except Exception as exc:  # loading the data or building the problem failed
            record = Record(
                case,
                None,
                status=ERROR,
                message=f"{type(exc).__name__}: {exc}",
                extras={"traceback": "".join(traceback.format_exception(exc)[-6:])},
                jobs=jobs,
                environment=environment(commit),
            )
        conn.send(("done", record))


#: Seconds allowed to load the data and build the problem, beyond ``grace``.
LOAD_ALLOWANCE = 60.0
#: Seconds allowed to compile a solver's jitted kernels in a worker (not counted as solve time).
COMPILE_ALLOWANCE = 300.0
#: Seconds allowed to a new worker to start (import the libraries), before it is declared dead.
STARTUP_ALLOWANCE = 300.0


class _Worker:
    def __init__(self, ctx, threads: int, imports, cache_dir, commit, jobs):
        self.conn, child = ctx.Pipe()
        env = _thread_env(threads)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # inherited by the spawned process before numba is imported
        try:
            self.proc = ctx.Process(
                target=_worker_main,
                args=(child, tuple(imports), cache_dir, commit, jobs),
                daemon=True,
            )
            self.proc.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        child.close()
        self.case: Case | None = None
        self.partial: Record | None = None
        self.deadline = math.inf
        self.phase = ""
        self.started = 0.0

    def submit(self, case: Case, settings: Settings) -> None:
        self.case, self.partial, self.phase = case, None, "starting"
        self.started = time.monotonic()
        self.deadline = self.started + STARTUP_ALLOWANCE + settings.grace
        self.conn.send((case, settings))

    def stop(self) -> None:
        with contextlib.suppress(OSError, BrokenPipeError):
            self.conn.send(None)
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


def _failure(case: Case, status: str, message: str, partial: Record | None, jobs: int, commit):
    if partial is not None:  # the solve finished; only the reference failed
        return replace(partial, message=f"{partial.message}; reference: {message}")
    return Record(
        case, None, status=status, message=message, jobs=jobs, environment=environment(commit)
    )


def _run_local(cases, settings, jobs, cache_dir, commit, on_start, on_done, skip):
    ctx = multiprocessing.get_context("spawn")
    pending = deque(cases)

    def spawn() -> _Worker:
        return _Worker(ctx, settings.threads, settings.imports, cache_dir, commit, jobs)

    # workers start when there is work for them, and a lost worker is replaced only then
    workers: list[_Worker | None] = [None] * max(1, min(jobs, len(pending)))
    try:
        while pending or any(w is not None and w.case is not None for w in workers):
            for i in range(len(workers)):
                while pending and (workers[i] is None or workers[i].case is None):
                    case = pending.popleft()
                    skipped = skip(case)
                    if skipped is not None:
                        on_done(skipped)
                        continue
                    if workers[i] is None:
                        workers[i] = spawn()
                    workers[i].submit(case, settings)
                    on_start(case)
            busy = [w for w in workers if w is not None and w.case is not None]
            if not busy:
                continue
            now = time.monotonic()
            timeout = max(0.01, min(1.0, min(w.deadline for w in busy) - now))
            mp_wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=timeout)
            for i, w in enumerate(workers):
                if w is None or w.case is None:
                    continue
                record = _poll(w, settings)
                if record is None and not w.proc.is_alive():
                    record = _poll(w, settings)  # messages sent just before it died
                    if record is None:
                        record = _failure(
                            w.case,
                            CRASHED,
                            f"the worker died (exit code {w.proc.exitcode}) while {w.phase}",
                            w.partial,
                            jobs,
                            commit,
                        )
                        w.kill()
                        workers[i] = None
                elif record is None and time.monotonic() > w.deadline:
                    w.kill()
                    record = _failure(
                        w.case,
                        TIMEOUT,
                        f"killed after {time.monotonic() - w.started:.1f} s while {w.phase}",
                        w.partial,
                        jobs,
                        commit,
                    )
                    workers[i] = None
                if record is not None:
                    w.case = None
                    on_done(record)
    finally:
        for w in workers:
            if w is None:
                continue
            if w.case is None:
                w.stop()
            else:
                w.kill()


def _poll(w: _Worker, settings: Settings) -> Record | None:
    """Read the worker's messages; the finished record, or None while it runs."""
    try:
        while w.conn.poll():
            name, payload = w.conn.recv()
            now = time.monotonic()
            if name == "loading":
                w.phase, w.deadline = "loading the data", now + LOAD_ALLOWANCE + settings.grace
            elif name == "compiling":
                w.phase = "compiling the JIT kernels"
                w.deadline = now + COMPILE_ALLOWANCE + settings.grace
            elif name == "solving":
                w.phase, w.deadline = "solving", now + settings.hard_limit(w.case)
            elif name == "solved":
                w.partial = payload
                w.phase = "solving the reference"
                w.deadline = now + settings.reference_time_limit + settings.grace
            elif name == "done":
                return payload
    except (EOFError, OSError):
        return None
    return None


# --------------------------------------------------------------------------------------------------
# Dask
# --------------------------------------------------------------------------------------------------


def _dask_task(case, settings, cache_dir, commit, jobs) -> Record:
    """A case on a Dask worker: threads pinned for the task, memory and reference as locally."""
    with pinned_threads(settings.threads):
        try:
            return execute_case(case, settings, cache_dir=cache_dir, commit=commit, jobs=jobs)
        except Exception as exc:
            return Record(
                case,
                None,
                status=ERROR,
                message=f"{type(exc).__name__}: {exc}",
                jobs=jobs,
                environment=environment(commit),
            )


def _run_dask(cases, settings, address, cache_dir, commit, on_start, on_done, skip):
    from distributed import Client, wait

    with Client(address) as client:
        slots = max(1, sum(client.nthreads().values()))
        pending = deque(cases)
        running: dict[Any, tuple[Case, float]] = {}
        while pending or running:
            while pending and len(running) < slots:
                case = pending.popleft()
                skipped = skip(case)
                if skipped is not None:
                    on_done(skipped)
                    continue
                future = client.submit(
                    _dask_task, case, settings, cache_dir, commit, slots, pure=False
                )
                limit = (
                    LOAD_ALLOWANCE
                    + settings.hard_limit(case)
                    + settings.reference_time_limit
                    + 2 * settings.grace
                )
                running[future] = (case, time.monotonic() + limit)
                on_start(case)
            timeout = max(0.05, min(d for _, d in running.values()) - time.monotonic())
            done, _ = wait(list(running), timeout=timeout, return_when="FIRST_COMPLETED")
            for future in list(running):
                case, deadline = running[future]
                if future in done:
                    del running[future]
                    try:
                        record = future.result()
                    except Exception as exc:
                        record = Record(
                            case, None, status=CRASHED, message=f"{type(exc).__name__}: {exc}"
                        )
                    on_done(record)
                elif time.monotonic() > deadline:
                    del running[future]
                    future.cancel()
                    on_done(
                        Record(
                            case,
                            None,
                            status=TIMEOUT,
                            message="not finished within its limit on the cluster",
                            jobs=slots,
                        )
                    )


# --------------------------------------------------------------------------------------------------
# The public entry point
# --------------------------------------------------------------------------------------------------


def _group(case: Case) -> str:
    return json.dumps(
        [case.problem, data_family(case.data), case.solver, case.solver_options, case.seed],
        sort_keys=True,
        default=str,
    )


def run_cases(
    cases: Iterable[Case],
    settings: Settings | None = None,
    *,
    jobs: int = 1,
    cluster: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    in_process: bool = False,
    on_start: Callable[[Case], None] | None = None,
    on_record: Callable[[Record], None] | None = None,
) -> list[Record]:
    """Run cases and return their records in the order they finished.

    Parameters
    ----------
    cases : iterable of Case
    settings : Settings, default=Settings()
    jobs : int, default=1
        Local worker processes (each case in a worker; see the module docstring).
    cluster : str, default=None
        Address of a Dask scheduler; the cases then run there instead.
    cache_dir : path, default=None
        On-disk cache of reference optima shared by the workers.
    in_process : bool, default=False
        Run in this process, one case after another, with no time limit (for debugging).
    on_start, on_record : callable, default=None
        Told of each case as it starts and of each record as soon as it is finished (the
        caller stores it).
    """
    settings = settings or Settings()
    cases = list(cases)
    on_start = on_start or (lambda case: None)
    commit = git_commit()
    cache_dir = None if cache_dir is None else str(cache_dir)
    if settings.escalate:  # smallest n first, so that a time-out stops the larger ones
        cases.sort(key=lambda c: data_size(c.data) or 0)
    exceeded: dict[str, int] = {}
    records: list[Record] = []

    def skip(case: Case) -> Record | None:
        n = data_size(case.data)
        limit = exceeded.get(_group(case))
        if settings.escalate and n is not None and limit is not None and n > limit:
            return Record(
                case,
                None,
                status=SKIPPED,
                message=f"n={limit} already exceeded the time limit for this solver",
                jobs=jobs,
            )
        return None

    def done(record: Record) -> None:
        n = data_size(record.case.data)
        if n is not None and record.status in (TIMEOUT, Status.TIME_LIMIT.value, SKIPPED):
            group = _group(record.case)
            exceeded[group] = min(exceeded.get(group, n), n)
        records.append(record)
        if on_record is not None:
            on_record(record)

    if in_process:
        for case in cases:
            skipped = skip(case)
            if skipped is not None:
                done(skipped)
                continue
            on_start(case)
            with pinned_threads(settings.threads):
                done(execute_case(case, settings, cache_dir=cache_dir, commit=commit))
    elif cluster:
        _run_dask(cases, settings, cluster, cache_dir, commit, on_start, done, skip)
    else:
        _run_local(cases, settings, jobs, cache_dir, commit, on_start, done, skip)
    return records


def negative_gap(record: Record) -> bool:
    """Whether the record's certified gap is negative beyond rounding (a broken certificate)."""
    r = record.result
    if r is None or not math.isfinite(r.gap) or not record.extras.get("convex", True):
        return False
    return r.gap < -WEAK_DUALITY_RTOL * max(1.0, abs(r.primal))


__all__ = [
    "CRASHED",
    "ERROR",
    "HARNESS_STATUSES",
    "SKIPPED",
    "TIMEOUT",
    "PeakMemory",
    "Record",
    "accuracy",
    "environment",
    "execute_case",
    "git_commit",
    "run_case",
    "run_cases",
    "thread_info",
    "warm_up",
]
