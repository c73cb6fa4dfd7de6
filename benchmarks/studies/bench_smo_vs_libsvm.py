"""Our SMO (``smo``) against LIBSVM's, side by side in one run.

Run ``python -m svmbench.benchmarks.studies.bench_smo_vs_libsvm [--quick]``. Every case is a
:class:`~problems.KernelDual` (hinge, free bias, ``C = 1``, RBF with ``γ = 1/d``) on
``datasets.gaussian(n, d=20, sep=1, seed=0)``, ``n ∈ {10 000, 30 000}`` (``--quick``:
``{2 000, 10 000}``); every model is judged by that problem.

What is measured, per case:

- LIBSVM (libsvm-official) through the ``libsvm`` anchor
  (:class:`~svmbench.solvers.anchors.libsvm.LibsvmAnchor`):
  ``-s 0 -t 2 -g 1/d -c 1 -e 1e-3 -m 200 -h 1``, single-threaded: the wheel's library is built with
  OpenMP (it links libgomp and computes kernel columns in a parallel loop), so ``OMP_NUM_THREADS``
  is set to ``--libsvm-threads`` (default 1) before it is first loaded and the anchor pins OpenMP to
  as many threads. Left at the default (all cores) it ran 1.2 s instead of 1.9 s at n = 10 000 on an
  idle machine, and 15-80 s when other processes held a core (OpenMP's spinning barriers). One
  untimed warm-up on the first 2 000 points and one untimed full run (its model, its memory), then
  ``--repeats`` timed runs (median; one run when ``n ≥ 30 000``, said in the table; the time is the
  anchor's ``solve_time``, the ``svm_train`` call alone), interleaved with the timed smo runs below
  (LIBSVM, smo 1 thread, smo 2 threads, LIBSVM, ...:
  :func:`~benchmarks.harness.evaluation.interleaved`) so that a change of the machine's load hits
  both sides alike. The anchor maps its model to our variables (``α_i = y_i · sv_coef_i`` at
  ``sv_indices`` and ``b = −ρ``, both negated when LIBSVM's first label, its positive class, is our
  −1). ``D_LS`` is our problem's dual objective at that α.
- smo to ``D_LS``: a traced run (untimed; a certificate every ``n/20`` pair updates) finds the
  first checkpoint ``k`` whose certified dual is ≥ ``D_LS``; the time is the median
  ``solve_time`` of runs cut at ``max_iter = k`` without trace (the iterates are deterministic, so
  the cut runs reach the same point), once with one Numba thread and once with two. The time
  resolution is one checkpoint interval (``n/20`` updates).
- smo to a certified relative gap of 1e-6 (default options: gap rule, shrinking, 200 MB cache),
  one run per thread count, under ``--budget`` seconds (``>`` marks a run that hit it).
- Peak memory: LIBSVM's peak resident set size during its untimed full run (the first big thing the
  case does, so the pages are new), minus the size before
  (:class:`~benchmarks.harness.environment.PeakMemory` around the anchor's call: the peak of the
  training, unless the certificate's blocked kernel product, at most 32 MB, rises above it); smo's
  peak of the NumPy allocations (``tracemalloc``, during its 1e-6 runs: the cache is counted in full
  as soon as it is allocated; the peak includes the problem's certificate, whose blocked kernel
  product holds up to 32 MB, ``problems.kernels.BLOCK_ENTRIES``), beside the cache SMO allocated
  (``cache_columns · n · 4`` bytes for RBF, float32 columns as LIBSVM's, within the 200 MB budget)
  plus its O(n) vectors.
- oneDAL (scikit-learn-intelex's ``SVC`` through the ``sklearnex_svc`` anchor, all cores) when
  it is installed, judged the same way.

Note on threads: with Numba's TBB threading layer, once ``numba.set_num_threads(1)`` has been
called, LIBSVM's ``svm_train`` in the same process ran 25-100× slower (0.08 s → 8.3 s at
n = 2 000, measured on this machine); with the ``workqueue`` or ``omp`` layers it did not. The
benchmark therefore pins the layer (``--threading-layer``, default ``workqueue``).

The first printed line is :func:`~benchmarks.harness.environment.summary`. ``svmbench run
smo_libsvm`` runs smo beside the ``libsvm`` and ``sklearnex_svc`` anchors through the harness (each
to its own stopping rule); this study adds the time to LIBSVM's objective, two Numba threads and
memory. Timings on a shared machine are noisy: compare ratios within one run, not across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tracemalloc
import warnings

import numba
import numpy as np

from svmbench.benchmarks.harness.environment import PeakMemory, summary
from svmbench.benchmarks.harness.evaluation import interleaved
from svmbench.problems import KernelDual, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning

D = 20
CACHE_MB = 200


# ---- the anchors ---------------------------------------------------------------------------
def libsvm(threads: int):
    return registry.get("libsvm", eps=1e-3, cache_mb=CACHE_MB, n_threads=threads)


def onedal_run(problem):
    """oneDAL's SVC (all cores) through its anchor, or None when it is not installed."""
    if registry.available_anchors()["sklearnex_svc"] is not None:
        return None
    dal = registry.get("sklearnex_svc", eps=1e-3, cache_mb=CACHE_MB, n_threads=None)
    X, y = problem.X, problem.y
    dal.solve(KernelDual(X[:500], y[:500], C=1.0, kernel="rbf", gamma=problem.gamma))  # warm-up
    return dal.solve(problem)


# ---- smo -----------------------------------------------------------------------------------
def smo(threads: int, **options):
    numba.set_num_threads(threads)
    options.setdefault("trace", False)
    options.setdefault("cache_mb", CACHE_MB)
    return registry.get("smo", **options)


def first_checkpoint_reaching(problem, target, every):
    """Updates of the first traced checkpoint whose certified dual is ≥ target (None if never)."""
    hit = {}

    def callback(point):
        if point.dual >= target:
            hit["k"] = point.iteration
            return True
        return False

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        smo(1, chunk=every).solve(problem, callback=callback)
    return hit.get("k")


def timed_cut(problem, k, threads, repeats):
    times = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(repeats):
            r = smo(threads, max_iter=k).solve(problem)
            times.append(r.solve_time)
    return statistics.median(times), r


def run_case(n, repeats, budget, libsvm_threads=1):
    ds = datasets.load(f"gaussian:n={n},d={D},sep=1,seed=0")
    X, y = np.ascontiguousarray(ds.X), ds.y
    gamma = 1.0 / D
    problem = KernelDual(X, y, C=1.0, kernel="rbf", gamma=gamma)
    row = {"n": n}
    reps = 1 if n >= 30_000 else repeats
    row["ls_runs"] = reps
    ls = libsvm(libsvm_threads)
    # warm-ups (LIBSVM has no JIT: page faults)
    ls.solve(KernelDual(X[:2000], y[:2000], C=1.0, kernel="rbf", gamma=gamma))
    smo(1).warm_up()
    with PeakMemory() as mem:  # its model gives D_LS (this run is not timed)
        first = ls.solve(problem)
    row["ls_mem"] = mem.peak - mem.baseline
    row["D_ls"], row["ls_gap"] = first.dual, first.rel_gap
    row["ls_sv"] = int(np.count_nonzero(first.alpha))
    every = max(100, n // 20)
    k = first_checkpoint_reaching(problem, first.dual, every)
    row["k"] = k
    runs = {"ls": lambda: ls.solve(problem).solve_time}
    if k is not None:
        for threads in (1, 2):
            runs[threads] = lambda threads=threads: timed_cut(problem, k, threads, 1)[0]
    times = interleaved(runs, reps)  # LIBSVM, smo 1 thread, smo 2 threads, LIBSVM, ...
    row["ls_time"] = statistics.median(times["ls"])
    row["ls_times"] = times["ls"]
    for threads in (1, 2):
        if times.get(threads):
            row[f"toD_{threads}"] = statistics.median(times[threads])
            row[f"toD_{threads}_times"] = times[threads]
    for threads in (1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            tracemalloc.start()
            r = smo(threads, tol=1e-6, time_limit=budget).solve(problem)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        row[f"gap_{threads}"] = r.solve_time
        row[f"gap_{threads}_ok"] = r.status.value == "optimal"
        row[f"gap_{threads}_rel"] = r.rel_gap
        row[f"mem_{threads}"] = peak / 2**20
        row["smo_updates"] = r.iterations
        row["smo_info"] = r.info
        row["cache_mb"] = r.info["cache_columns"] * n * r.info["cache_bytes_per_entry"] / 2**20
    dal = onedal_run(problem)
    if dal is not None:
        row["dal_time"], row["dal_D"], row["dal_gap"] = dal.solve_time, dal.dual, dal.rel_gap
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return row


def format_rows(rows) -> str:
    lines = [
        "| n | LIBSVM s (runs) | D_LS | LIBSVM rel gap | smo→D_LS 1 thr | ratio | smo→D_LS 2 thr "
        "| ratio | smo→1e-6 1 thr | smo→1e-6 2 thr | peak MB: LIBSVM RSS / smo cache / smo NumPy "
        "incl. certificate | oneDAL s (rel gap) |",
        "|" + "---|" * 12,
    ]
    for r in rows:
        ls = r["ls_time"]

        def t(key, ok=True, r=r):
            v = r.get(key)
            if v is None:
                return "-"
            return f"{'' if ok else '>'}{v:.2f}"

        dal = f"{r['dal_time']:.2f} ({r['dal_gap']:.1e})" if "dal_time" in r else "not installed"
        lines.append(
            f"| {r['n']} | {ls:.2f} ({r['ls_runs']}) | {r['D_ls']:.6f} | {r['ls_gap']:.1e} "
            f"| {t('toD_1')} | {r.get('toD_1', np.nan) / ls:.2f}× | {t('toD_2')} "
            f"| {r.get('toD_2', np.nan) / ls:.2f}× "
            f"| {t('gap_1', r['gap_1_ok'])} | {t('gap_2', r['gap_2_ok'])} "
            f"| {r['ls_mem']:.0f} / {r['cache_mb']:.0f} / {max(r['mem_1'], r['mem_2']):.0f} "
            f"| {dal} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n in {2000, 10000}")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the sizes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds per 1e-6 run")
    parser.add_argument(
        "--threading-layer",
        default="workqueue",
        help="Numba threading layer (default workqueue: see the note in the module docstring)",
    )
    parser.add_argument(
        "--libsvm-threads",
        type=int,
        default=1,
        help="OpenMP threads of LIBSVM (OMP_NUM_THREADS before its library loads; default 1)",
    )
    args = parser.parse_args(argv)
    # read by libgomp when LIBSVM's library is first loaded (libsvm_train imports it lazily)
    os.environ["OMP_NUM_THREADS"] = str(args.libsvm_threads)
    # must be set before the first parallel launch
    numba.config.THREADING_LAYER = args.threading_layer
    sizes = args.sizes or ([2000, 10_000] if args.quick else [10_000, 30_000])
    dal = registry.available_anchors()["sklearnex_svc"]
    note = (
        f"{'scikit-learn-intelex installed' if dal is None else 'no oneDAL column: ' + dal}. "
        f"LIBSVM with OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; smo with 1 "
        "and 2 Numba threads."
    )
    print(summary("libsvm-official", "scikit-learn-intelex", note=note), flush=True)
    rows = []
    for n in sizes:
        row = run_case(n, args.repeats, args.budget, args.libsvm_threads)
        rows.append(row)
        info = row["smo_info"]
        print(
            f"n={n}: LIBSVM {row['ls_sv']} SVs; smo reached D_LS at k={row['k']} pair updates, "
            f"{row['smo_updates']} to 1e-6 (cache {info['cache_columns']} columns, "
            f"{info['cache_misses']} misses, {info['reconstructions']} reconstructions, "
            f"{info['certifications']} certificates); timed runs (s): LIBSVM "
            f"{[round(t, 2) for t in row['ls_times']]}, smo 1 thr "
            f"{[round(t, 2) for t in row.get('toD_1_times', [])]}, 2 thr "
            f"{[round(t, 2) for t in row.get('toD_2_times', [])]}",
            flush=True,
        )
    print(f"Numba threading layer: {numba.threading_layer()}")
    print(format_rows(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
