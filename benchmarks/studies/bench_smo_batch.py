"""Batched working-set SMO (``smo_batch``) against ``smo``, LIBSVM and oneDAL, side by side.

Run ``python -m svmbench.benchmarks.studies.bench_smo_batch [--quick]``. Every case is a
:class:`~problems.KernelDual` (hinge, free bias, ``C = 1``, RBF with ``γ = 1/d``) on
``datasets.gaussian(n, d=20, sep=1, seed=0)``, ``n ∈ {10 000, 30 000}`` (``--quick``: 3 000
and 10 000, two rounds); every model is judged by that problem.

Per case, ``--repeats`` interleaved rounds (:func:`~benchmarks.harness.evaluation.interleaved`, the
order rotating from round to round), medians reported:

- ``smo_batch`` with one and with two Numba threads, ``smo`` with one, each to a certified
  relative gap of 1e-6 (default options, 200 MB of cache): the solver clock (``solve_time``)
  and the wall time of the whole call (``wall_time``: set-up, iterations, the final
  certificate);
- LIBSVM (libsvm-official through the ``libsvm`` anchor: ``-e 1e-3 -m 200 -h 1``, one OpenMP
  thread, ``OMP_NUM_THREADS=1`` before its library loads): the ``svm_train`` call
  (``solve_time``) and the wall time, with the certified gap of its model in our problem;
- oneDAL (scikit-learn-intelex's SVC through the ``sklearnex_svc`` anchor, if importable) with
  one and with two threads: oneDAL runs on TBB, which ignores the OpenMP, BLAS and Numba
  settings, so its threads are set by ``daal4py.daalinit`` and by ``n_jobs``, and the count
  ``daal4py.num_threads()`` reports is printed. ``--dal-tol`` (default 1e-3, its own default)
  may be tightened until its dual reaches LIBSVM's (the table gives both duals).

BLAS runs with one thread (``OPENBLAS_NUM_THREADS=1`` must be set before Python starts; the printout
records the pools); ``smo_batch``'s two-thread runs share its blocks of rows and of G among Numba
threads, each calling a one-thread BLAS. The Numba threading layer is ``workqueue`` (with TBB,
``set_num_threads(1)`` slowed LIBSVM in the same process 25-100×, see
:mod:`benchmarks.studies.bench_smo_vs_libsvm`). The CPU is an AMD EPYC: oneDAL is tuned for Intel.
The first printed line is :func:`~benchmarks.harness.environment.summary`. Timings on a shared
machine are noisy: compare the ratios within one run.

``--threads-only`` times ``smo_batch`` alone, with one and with two Numba threads (5 rounds by
default), on Numba's default threading layer, which is what a user gets; the ratio is printed
for the solver clock and for the wall time, with each round's.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import warnings

import numba
import numpy as np

from svmbench.benchmarks.harness.environment import summary, thread_info
from svmbench.benchmarks.harness.evaluation import interleaved
from svmbench.problems import KernelDual, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning

D = 20
CACHE_MB = 200


def _ours(name: str, threads: int, problem, budget: float):
    numba.set_num_threads(threads)
    solver = registry.get(name, tol=1e-6, cache_mb=CACHE_MB, trace=False, time_limit=budget)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solver.solve(problem)


def _onedal(threads: int, tol: float, problem):
    import daal4py

    daal4py.daalinit(threads)
    dal = registry.get("sklearnex_svc", eps=tol, cache_mb=CACHE_MB, n_threads=threads)
    result = dal.solve(problem)
    return result, daal4py.num_threads()


def run_case(n: int, repeats: int, budget: float, dal_tol: float, threads_only=False) -> dict:
    ds = datasets.load(f"gaussian:n={n},d={D},sep=1,seed=0")
    X, y = np.ascontiguousarray(ds.X), ds.y
    problem = KernelDual(X, y, C=1.0, kernel="rbf", gamma=1.0 / D)
    small = KernelDual(X[:1000], y[:1000], C=1.0, kernel="rbf", gamma=1.0 / D)
    ls = registry.get("libsvm", eps=1e-3, cache_mb=CACHE_MB, n_threads=1)
    runs = {
        "smo_batch 1 thr": lambda: _ours("smo_batch", 1, problem, budget),
        "smo_batch 2 thr": lambda: _ours("smo_batch", 2, problem, budget),
    }
    if not threads_only:
        runs = {
            "LIBSVM 1 thr": lambda: ls.solve(problem),
            "smo 1 thr": lambda: _ours("smo", 1, problem, budget),
            **runs,
        }
    dal_threads = {}
    if not threads_only and registry.available_anchors()["sklearnex_svc"] is None:
        for threads in (1, 2):

            def dal(threads=threads):
                result, reported = _onedal(threads, dal_tol, problem)
                dal_threads[threads] = reported
                return result

            runs[f"oneDAL {threads} thr"] = dal
    # untimed warm-ups: JIT compilation, imports, page faults
    if not threads_only:
        ls.solve(small)
    for name in ("smo", "smo_batch"):
        registry.get(name).warm_up()
    if "oneDAL 1 thr" in runs:
        _onedal(1, dal_tol, small)
    results = interleaved(runs, repeats, rotate=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return {"n": n, "results": results, "dal_threads": dal_threads}


def _median(results, attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in results)


def format_case(case: dict) -> str:
    res = case["results"]
    ls_wall = _median(res["LIBSVM 1 thr"], "wall_time") if "LIBSVM 1 thr" in res else math.nan
    dal_wall = {t: _median(res[f"oneDAL {t} thr"], "wall_time") for t in (1, 2)
                if f"oneDAL {t} thr" in res}  # fmt: skip
    lines = [
        f"n = {case['n']}",
        "| side | solve s | wall s | wall / LIBSVM | wall / oneDAL same threads | certified rel "
        "gap | dual | status | iterations |",
        "|" + "---|" * 9,
    ]
    for name, results in res.items():
        wall = _median(results, "wall_time")
        last = results[-1]
        threads = 2 if "2 thr" in name else 1
        vs_dal = f"{wall / dal_wall[threads]:.2f}×" if threads in dal_wall else "-"
        statuses = ",".join(sorted({r.status.value for r in results}))
        lines.append(
            f"| {name} | {_median(results, 'solve_time'):.2f} | {wall:.2f} "
            f"| {wall / ls_wall:.2f}× | {vs_dal} | {max(r.rel_gap for r in results):.1e} "
            f"| {last.dual:.6f} | {statuses} | {last.iterations} {last.iteration_unit} |"
        )
    runs = {name: [round(r.wall_time, 2) for r in results] for name, results in res.items()}
    lines.append(f"wall times of the rounds (s): {runs}")
    one, two = res["smo_batch 1 thr"], res["smo_batch 2 thr"]
    speedup = _median(one, "solve_time") / _median(two, "solve_time")
    wall_speedup = _median(one, "wall_time") / _median(two, "wall_time")
    walls = ", ".join(f"{a.wall_time / b.wall_time:.2f}" for a, b in zip(one, two))
    lines.append(
        f"smo_batch: two Numba threads / one: {speedup:.2f}× faster (solver clock), "
        f"{wall_speedup:.2f}× (wall time; per round {walls}); "
        f"info 1 thr {_brief(one[-1].info)}; 2 thr {_brief(two[-1].info)}"
    )
    if case["dal_threads"]:
        lines.append(f"oneDAL threads reported by daal4py.num_threads(): {case['dal_threads']}")
    return "\n".join(lines)


def _brief(info) -> dict:
    keys = ("q", "outer_iterations", "rows_computed", "row_hits", "cache_rows", "numba_threads")
    return {k: info[k] for k in keys if k in info}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n in {3000, 10000}, two rounds")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the sizes")
    parser.add_argument("--repeats", type=int, default=None, help="rounds (default 3)")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds per run of ours")
    parser.add_argument("--dal-tol", type=float, default=1e-3, help="oneDAL's tol")
    parser.add_argument(
        "--threads-only",
        action="store_true",
        help="smo_batch with one and two Numba threads only, on Numba's default threading layer "
        "(what a user gets); default 5 rounds",
    )
    args = parser.parse_args(argv)
    if not args.threads_only:
        os.environ["OMP_NUM_THREADS"] = "1"  # read when LIBSVM's library first loads
        numba.config.THREADING_LAYER = "workqueue"  # before the first parallel launch
    sizes = args.sizes or ([3000, 10_000] if args.quick else [10_000, 30_000])
    repeats = args.repeats or (2 if args.quick else 5 if args.threads_only else 3)
    dal = registry.available_anchors()["sklearnex_svc"]
    note = (
        f"{'scikit-learn-intelex installed' if dal is None else 'no oneDAL rows: ' + dal}; "
        "LIBSVM with one OpenMP thread; smo_batch with 1 and 2 Numba threads, smo with 1; "
        "CPU AMD EPYC (oneDAL is tuned for Intel)"
    )
    print(summary("libsvm-official", "scikit-learn-intelex", note=note), flush=True)
    for n in sizes:
        case = run_case(n, repeats, args.budget, args.dal_tol, args.threads_only)
        print(format_case(case), flush=True)
    print(f"Numba threading layer: {numba.threading_layer()}; pools now: {thread_info()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
