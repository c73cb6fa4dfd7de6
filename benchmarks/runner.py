"""The harness's entry points under one name: run benchmark cases and judge each result.

The harness lives in three modules; this one re-exports their public names (``svmbench run``,
``svmbench check`` and the micro-benchmarks import them from here):

- :mod:`~svmbench.benchmarks.environment`: versions, machine, git commit, threads, peak memory.
- :mod:`~svmbench.benchmarks.evaluation`: one case in this process (:func:`execute_case`), its
  :class:`Record`, accuracy and the distance to a cached reference optimum.
- :mod:`~svmbench.benchmarks.execution`: many cases (:func:`run_cases`) in worker processes with
  per-phase deadlines, or on a Dask cluster, after one JIT :func:`warm_up`.
"""

from __future__ import annotations

from svmbench.benchmarks.environment import (
    PeakMemory,
    environment,
    git_commit,
    pinned_threads,
    summary,
    thread_info,
    thread_variables,
)
from svmbench.benchmarks.evaluation import (
    CRASHED,
    ERROR,
    HARNESS_STATUSES,
    SKIPPED,
    TIMEOUT,
    Record,
    accuracy,
    default_cache_dir,
    execute_case,
    interleaved,
    median_solve_time,
    negative_gap,
    reference,
    run_case,
)
from svmbench.benchmarks.execution import (
    COMPILE_ALLOWANCE,
    LOAD_ALLOWANCE,
    STARTUP_ALLOWANCE,
    run_cases,
    warm_up,
)

__all__ = [
    "COMPILE_ALLOWANCE",
    "CRASHED",
    "ERROR",
    "HARNESS_STATUSES",
    "LOAD_ALLOWANCE",
    "SKIPPED",
    "STARTUP_ALLOWANCE",
    "TIMEOUT",
    "PeakMemory",
    "Record",
    "accuracy",
    "default_cache_dir",
    "environment",
    "execute_case",
    "git_commit",
    "interleaved",
    "median_solve_time",
    "negative_gap",
    "pinned_threads",
    "reference",
    "run_case",
    "run_cases",
    "summary",
    "thread_info",
    "thread_variables",
    "warm_up",
]
