"""The logistic loss against LIBLINEAR, end to end, one thread, side by side in one run.

Run ``OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python -m
svmbench.benchmarks.studies.bench_logistic [--repeat 7] [--n 20000 --d 50 --C 1]``. The
problem is :class:`~problems.Logistic` with ``bias="regularized"`` (LIBLINEAR's ``-B 1``) on
``gaussian:n=20000,d=50,sep=1,seed=0``, C = 1.

What is measured:

- svmbench: ``auto`` and ``logistic_newton`` (the trust-region Newton method, gap rule) to a
  certified relative gap of 1e-6, and ``logistic_dcd`` (dual CD) likewise;
- LIBLINEAR ``-s 0`` (``liblinear_lr``, trust-region Newton) and ``-s 7``
  (``liblinear_lr_dual``, dual CD), each with its ``-e`` tuned: the largest of 10⁻¹, 10⁻², …,
  10⁻¹⁰ whose model's primal objective (our problem's ``P``) is within 1e-6 relative of
  ``P*``, the smallest certified primal of the svmbench runs (LIBLINEAR at its default ``-e`` is
  reported too).

Every time is end to end: the wall time of one ``solve`` call (the solver's set-up, the
library's data conversion for the anchors, the training, the certificate of the record), JIT
compilation excluded (a warm-up call first). The calls are interleaved (one of each per round,
the order rotating: :func:`~benchmarks.harness.evaluation.interleaved`), and the figures are
medians over the rounds; the ratios are the medians of each round's ratios, so that a change of
the machine's load hits both sides of a ratio alike. ``train s`` is each record's
``solve_time``: for the anchors the library's training call alone (their set-up converts the
data to LIBLINEAR's row format in Python), for ours the method with its stopping tests. The
environment line is
:func:`~benchmarks.harness.environment.summary`. Timings on a shared machine are noisy: compare
ratios within one run.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from svmbench.benchmarks.harness.environment import summary
from svmbench.benchmarks.harness.evaluation import interleaved
from svmbench.problems import Logistic, datasets
from svmbench.solvers import registry

TOL = 1e-6
#: LIBLINEAR's ``-e`` candidates, loosest first.
EPS_GRID = tuple(10.0**-k for k in range(1, 11))


def wall(name: str, problem, **options):
    """A call of ``name`` on ``problem``: ``(seconds end to end, result)``."""
    solver = registry.get(name, **options)

    def run():
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = solver.solve(problem)
        return time.perf_counter() - t0, result

    return run


def tuned_eps(name: str, problem, target: float) -> tuple[float | None, float]:
    """The loosest ``-e`` of :data:`EPS_GRID` whose model is within ``TOL`` relative of
    ``target`` (None if none is), and the relative excess of the last one tried."""
    excess = float("nan")
    for eps in EPS_GRID:
        _, result = wall(name, problem, eps=eps, tol=1.0)()
        excess = (result.primal - target) / abs(target)
        if excess <= TOL:
            return eps, excess
    return None, excess


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="n = 5000, 3 rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.repeat = 5000, 3
    print(summary("numpy", "scipy", "numba", "liblinear-official"))
    ds = datasets.load(f"gaussian:n={args.n},d={args.d},sep=1,seed=0")
    problem = Logistic(ds.X, ds.y, C=args.C, bias="regularized")
    print(f"problem: {problem.describe()}")

    ours = {
        "auto": wall("auto", problem, tol=TOL, trace=False),
        "logistic_newton": wall("logistic_newton", problem, tol=TOL, trace=False),
        "logistic_dcd": wall("logistic_dcd", problem, tol=TOL, trace=False, time_limit=60.0),
    }
    first = {name: run()[1] for name, run in ours.items()}  # compiles; finds P*
    target = min(r.primal for r in first.values() if r.certified and r.rel_gap <= TOL)
    print(f"P* (smallest primal certified to {TOL:g}): {target:.12g}")
    anchors = {}
    for name, label in (("liblinear_lr", "-s 0"), ("liblinear_lr_dual", "-s 7")):
        eps, excess = tuned_eps(name, problem, target)
        if eps is None:
            print(f"LIBLINEAR {label}: no -e down to 1e-10 within {TOL:g} (last {excess:.1e})")
            continue
        print(f"LIBLINEAR {label}: -e {eps:g} reaches P* within {TOL:g} ({excess:.1e})")
        anchors[f"{name} -e {eps:g}"] = wall(name, problem, eps=eps, tol=1.0)
        anchors[f"{name} (default -e)"] = wall(name, problem, tol=1.0)

    runs = {**ours, **anchors}
    rounds = interleaved(runs, args.repeat, rotate=True, warm_up=True)
    seconds = {name: [t for t, _ in values] for name, values in rounds.items()}
    s0 = next((name for name in anchors if name.startswith("liblinear_lr -e")), None)
    print(
        f"\n{'solver':34s} {'median s':>9s} {'train s':>8s} {'rel. excess':>12s} "
        f"{'status':14s} {'vs -s 0':>8s}"
    )
    for name, times in seconds.items():
        result = rounds[name][-1][1]
        train = statistics.median(r.solve_time for _, r in rounds[name])
        excess = (result.primal - target) / abs(target)
        ratio = (
            statistics.median(a / b for a, b in zip(times, seconds[s0], strict=True))
            if s0
            else float("nan")
        )
        print(
            f"{name:34s} {statistics.median(times):9.4f} {train:8.4f} {excess:12.1e} "
            f"{result.status.value:14s} {ratio:7.2f}x"
        )


if __name__ == "__main__":
    main()
