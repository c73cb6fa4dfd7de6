"""A warm-started regularization path against cold solves, side by side in one run.

``python -m svmbench.benchmarks.studies.bench_path [--quick] [--repeat R]``: for ``dcd`` (linear,
bias regularized, gaussian d = 20; C in [1e-3, 1]) and ``smo`` (RBF, γ = 1/d, free bias, d = 20 and
d = 100; C in [1e-2, 1e2]), 20 values of C log-spaced, solved (a) as one path, each solve started
from the previous α, and (b) cold. Rounds interleave the two, and their order alternates; the table
gives medians of the summed wall times (``SolveResult.wall_time``: what a user waits, JIT
compilation excluded), the ratio, and the largest relative difference of the certified primal values
(both sides certified to tol).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import warnings

import numpy as np

from svmbench.model_selection import regularization_path
from svmbench.problems import KernelDual, SoftMarginPrimal, datasets
from svmbench.solvers import registry

#: dcd (LIBLINEAR's method) slows down sharply at large C (its epochs grow like C): the grids
#: stay where both sides reach tol, so that the comparison is between certified optima.
GRIDS = {"dcd": list(np.logspace(-3, 0, 20)), "smo": list(np.logspace(-2, 2, 20))}


def _cases(quick: bool):
    n_lin, n_rbf = (2000, 600) if quick else (5000, 2000)
    lin = datasets.load(f"gaussian:n={n_lin},d=20,sep=1,seed=0")
    rbf = datasets.load(f"gaussian:n={n_rbf},d=20,sep=1,seed=1")
    wide = datasets.load(f"gaussian:n={n_rbf},d=100,sep=1,seed=1")
    return [
        ("dcd", SoftMarginPrimal(lin.X, lin.y, bias="regularized"), {"tol": 1e-6}),
        ("smo", KernelDual(rbf.X, rbf.y, kernel="rbf", gamma=1 / 20), {"tol": 1e-6}),
        # the same family with d = 100: kernel columns cost five times more, and a path reuses
        # them (and the gradient) where cold solves compute them again
        ("smo", KernelDual(wide.X, wide.y, kernel="rbf", gamma=1 / 100), {"tol": 1e-6}),
    ]


def _total(path) -> float:
    return sum(p.result.wall_time for p in path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m svmbench.benchmarks.studies.bench_path")
    parser.add_argument("--quick", action="store_true", help="smaller data sets")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (median)")
    args = parser.parse_args(argv)
    print(f"{platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}; ", end="")
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    print(f"20 values of C (dcd: [1e-3, 1], smo: [1e-2, 1e2]); medians of {args.repeat} rounds")
    print(f"{'solver':8} {'problem':36} {'warm [s]':>9} {'cold [s]':>9} {'cold/warm':>9} "
          f"{'epochs/updates warm, cold':>28} {'max |ΔP|/|P|':>12}")  # fmt: skip
    for name, problem, options in _cases(args.quick):
        registry.get(name).warm_up()
        warm_t, cold_t = [], []
        for r in range(args.repeat):
            order = (True, False) if r % 2 == 0 else (False, True)
            for warm in order:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    path = regularization_path(
                        problem, GRIDS[name], solver=name, warm_start=warm, **options
                    )
                (warm_t if warm else cold_t).append(_total(path))
                if warm:
                    warm_path = path
                else:
                    cold_path = path
        diff = max(
            abs(a.result.primal - b.result.primal) / max(1.0, abs(b.result.primal))
            for a, b in zip(warm_path, cold_path, strict=True)
        )
        statuses = {p.result.status.value for p in warm_path + cold_path}
        iters = (
            f"{sum(p.result.iterations for p in warm_path)}, "
            f"{sum(p.result.iterations for p in cold_path)}"
        )
        w, c = statistics.median(warm_t), statistics.median(cold_t)
        label = f"{problem.kind} n={problem.n_samples} d={problem.n_features}"
        print(f"{name:8} {label:36} {w:9.3f} {c:9.3f} {c / w:9.2f} {iters:>28} {diff:12.1e}")
        if statuses != {"optimal"}:
            print(f"         statuses: {sorted(statuses)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
