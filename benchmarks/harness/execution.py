"""Running many benchmark cases: local worker processes with deadlines, or a Dask cluster.

:func:`run_cases` runs many cases, each judged by
:func:`~svmbench.benchmarks.harness.evaluation.execute_case`:

- ``jobs >= 1`` (local): a pool of ``jobs`` worker processes started with the ``spawn`` method.
  Each worker pins its Numba and BLAS threads before importing anything (environment variables
  ``NUMBA_NUM_THREADS``, ``OMP_NUM_THREADS``, ... and threadpoolctl) and runs one case at a time.
  The main process watches every case against a deadline per phase (loading, compiling, solving,
  reference): a worker past its deadline is killed (status ``timeout``) and replaced, a worker
  that dies is recorded as ``crashed`` and replaced, and the run goes on.
- ``cluster=ADDRESS``: cases are tasks on a Dask distributed cluster, at most as many in flight as
  the cluster has threads. A task past its deadline is recorded as ``timeout`` and cancelled
  (Dask cannot kill a running task: prefer local workers for cases that may hang).
- ``in_process=True``: one case after another in this process, no deadlines (debugging).

The JIT is warmed in the main process (:func:`warm_up`: what each case's problem runs) before
any worker starts, so that the workers load compiled kernels from Numba's on-disk cache. Every
record is handed to ``on_record`` as soon as it is finished (the caller stores it: a run killed
midway loses no finished case); only the main process writes the results store.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from multiprocessing.connection import wait as mp_wait
from typing import Any

from svmbench.benchmarks.harness.cases import Case, data_family, data_size
from svmbench.benchmarks.harness.environment import (
    environment,
    git_commit,
    pinned_threads,
    thread_variables,
)
from svmbench.benchmarks.harness.evaluation import (
    CRASHED,
    ERROR,
    SKIPPED,
    TIMEOUT,
    Record,
    execute_case,
)
from svmbench.benchmarks.harness.settings import Settings
from svmbench.problems.datasets import load
from svmbench.solvers import registry
from svmbench.solvers.base import Status
from svmbench.solvers.worker import calls_stay_in_this_process

#: What :func:`run_cases`'s ``skip`` returns for a case another run has claimed.
LEFT = object()
#: Seconds allowed to reach a Dask scheduler before a run gives up on it.
CONNECT_TIMEOUT = 10.0

# --------------------------------------------------------------------------------------------------
# JIT warm-up
# --------------------------------------------------------------------------------------------------


def warm_up(cases: Iterable[Case]) -> dict[str, float]:
    """Compile in this process what each case's solver runs on the case's problem
    (``Solver.warm_up_for``: smo's dense float64 pair updates for a dense C-SVC, not its eight
    variants), so that the workers load compiled kernels from Numba's on-disk cache; each
    solver's warm-up is idempotent per variant, so cases that share one compile it once.

    Returns
    -------
    dict
        Seconds of warm-up per solver name, summed over its cases (0 for solvers without jitted
        kernels); a warm-up that raises is reported as NaN and left to the cases to report, and
        so is a case whose problem cannot be built.
    """
    out: dict[str, float] = {}
    solvers: dict[str, Any] = {}
    datasets: dict[str, Any] = {}
    for case in cases:
        if case.solver in out and math.isnan(out[case.solver]):
            continue
        configured = (case.solver, repr(sorted(case.solver_options.items())))
        try:
            if configured not in solvers:
                solvers[configured] = registry.get(case.solver, **case.solver_options)
            solver = solvers[configured]
        except (TypeError, ValueError):
            out[case.solver] = math.nan
            continue
        try:
            if case.data not in datasets:
                datasets[case.data] = load(case.data)
            problem = case.build_problem(datasets[case.data])
        except Exception:
            continue  # the case reports it when it runs
        start = time.perf_counter()
        try:
            solver.warm_up_for(problem)
        except Exception:
            out[case.solver] = math.nan
            continue
        out[case.solver] = out.get(case.solver, 0.0) + time.perf_counter() - start
    return out


# --------------------------------------------------------------------------------------------------
# Local worker processes
# --------------------------------------------------------------------------------------------------


def _worker_main(conn, imports: tuple[str, ...], cache_dir, commit, jobs) -> None:
    """Body of a worker process: run the cases it is sent until it is sent None. The main
    process stops it at each case's deadline, so the solvers' uninterruptible library calls
    run here rather than in a worker process of their own (whose fork would count in their
    timings)."""
    calls_stay_in_this_process()
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


@contextlib.contextmanager
def _interrupts_ignored():
    """SIGINT ignored while a worker is spawned: the worker inherits the disposition (Python
    keeps an ignored SIGINT ignored), so that Ctrl-C in a terminal, sent to the whole process
    group, interrupts the main process only, which then kills its workers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def case_allowance(case: Case, settings: Settings) -> float:
    """The longest a case may take from start to record, every phase at its deadline (the
    worker's start, loading, compiling, the solves, the reference)."""
    return (
        STARTUP_ALLOWANCE
        + LOAD_ALLOWANCE
        + COMPILE_ALLOWANCE
        + settings.hard_limit(case)
        + settings.reference_time_limit
        + 3 * settings.grace
    )


class _Worker:
    def __init__(self, ctx, threads: int, imports, cache_dir, commit, jobs):
        self.conn, child = ctx.Pipe()
        env = thread_variables(threads)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # inherited by the spawned process before numba is imported
        try:
            self.proc = ctx.Process(
                target=_worker_main,
                args=(child, tuple(imports), cache_dir, commit, jobs),
                daemon=True,
            )
            with _interrupts_ignored():  # Ctrl-C is the main process's to handle
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
                    if skipped is LEFT:
                        continue
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


def connect_cluster(address: str, timeout: float | None = None):
    """A Dask ``Client`` of the scheduler at ``address``, reached within ``timeout`` seconds
    (default :data:`CONNECT_TIMEOUT`).

    Raises
    ------
    ValueError
        When Dask is not installed, or ``address`` is not an address.
    ConnectionError
        When no scheduler answers at ``address`` in time (one line naming the address).
    """
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "running on a Dask cluster needs the optional extra 'dask' "
            "(pip install 'svmbench[dask]')"
        ) from None
    try:
        return Client(address, timeout=timeout)
    except ValueError as exc:  # not an address: missing port, unknown scheme
        raise ValueError(f"cluster address {address!r}: {exc}") from None
    except MemoryError:  # something answered that is not a scheduler (a frame of exabytes)
        raise ConnectionError(
            f"cannot reach a Dask scheduler at {address}: what answered is not one"
        ) from None
    except Exception as exc:  # timeouts, refused connections, protocol errors
        raise ConnectionError(
            f"cannot reach a Dask scheduler at {address} within {timeout:g} s "
            f"({type(exc).__name__}: {' '.join(str(exc).split())})"
        ) from None


def _run_dask(cases, settings, address, cache_dir, commit, on_start, on_done, skip):
    from distributed import wait

    with connect_cluster(address) as client:
        slots = max(1, sum(client.nthreads().values()))
        pending = deque(cases)
        running: dict[Any, tuple[Case, float]] = {}
        while pending or running:
            while pending and len(running) < slots:
                case = pending.popleft()
                skipped = skip(case)
                if skipped is LEFT:
                    continue
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
    claim: Callable[[Case], bool] | None = None,
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
    claim : callable, default=None
        Asked just before each case starts whether it is this run's to run (the results
        store's claim, :meth:`~benchmarks.harness.store.Store.claim`); a case it refuses is
        neither run nor returned. None: every case is run.
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

    def skip(case: Case) -> Record | object | None:
        """A record for a case not to run (escalation), LEFT for one that is not this run's
        (``claim`` refused it), None to run it."""
        if claim is not None and not claim(case):
            return LEFT
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
            if skipped is LEFT:
                continue
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


__all__ = [
    "COMPILE_ALLOWANCE",
    "CONNECT_TIMEOUT",
    "LEFT",
    "LOAD_ALLOWANCE",
    "STARTUP_ALLOWANCE",
    "case_allowance",
    "connect_cluster",
    "run_cases",
    "warm_up",
]
