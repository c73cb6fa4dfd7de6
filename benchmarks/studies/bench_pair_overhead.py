"""What a one-vs-one fit's pairs cost outside SMO's loops: the digits fit of ``bench_small_fits``.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_pair_overhead [--fits F] [--rounds R]

``SVMClassifier(gamma=0.02)`` on digits (1797×64, X/16, 10 classes, 45 pairs), fitted once
(compilation and caches warm), then ``--fits`` times with ``perf_counter`` timers around SMO's
jitted loops (``run_loop``), each pair's solve (``reductions._binary_solve``) and each pair's
problem (``_Reduction._binary_problem``): per fit, the pairs' time outside the loops divided by
the pairs (solve and problem), and the whole fit's time outside the loops per pair; the
medians and the least over the fits. Then the lean path alone (``solve_shared_pair``) over the
45 pairs in turn, ``--rounds`` times on their warm table: per pair the least time outside the
loops over the rounds, their mean. Alternate two trees in separate processes to compare them.
The first printed line is :func:`~benchmarks.harness.environment.summary`.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.datasets import load_digits

from svmbench import SVMClassifier
from svmbench.benchmarks.harness.environment import summary
from svmbench.benchmarks.studies.bench_fit_spans import Spans
from svmbench.solvers import reductions
from svmbench.solvers._jit import smo as jit


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    print(summary())
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    pairs = []
    lean = reductions.solve_shared_pair
    spans = Spans()  # timers set on the stages' owners by name, as bench_fit_spans sets its own
    spans.wrap(jit, "run_loop", "loops")
    spans.wrap(reductions, "_binary_solve", "solve")
    spans.wrap(reductions.OneVsOne, "_binary_problem", "problem")
    spent, calls = spans.seconds, spans.calls
    reductions.solve_shared_pair = lambda s, p, **k: pairs.append((s, p)) or lean(s, p, **k)
    try:
        SVMClassifier(gamma=0.02).fit(X, y)  # its pairs, for the lean path below
        reductions.solve_shared_pair = lean
        outside, whole = [], []
        for _ in range(args.fits):
            spent.clear()
            calls.clear()
            start = time.perf_counter()
            SVMClassifier(gamma=0.02).fit(X, y)
            fit, n = time.perf_counter() - start, calls["solve"]
            outside.append((spent["solve"] + spent["problem"] - spent["loops"]) / n)
            whole.append((fit - spent["loops"]) / n)
        least = np.full(len(pairs), np.inf)
        for _ in range(args.rounds):
            for i, (solver, pair) in enumerate(pairs):
                spent["loops"] = 0.0
                start = time.perf_counter()
                lean(solver, pair, warns=False)
                least[i] = min(least[i], time.perf_counter() - start - spent["loops"])
    finally:
        reductions.solve_shared_pair = lean
        spans.restore()
    us = 1e6
    print(f"digits, {args.fits} fits, 45 pairs each; µs per pair outside SMO's loops:")
    print(f"  the pairs' solves and problems   median {statistics.median(outside) * us:6.0f}"
          f"   least {min(outside) * us:6.0f}")  # fmt: skip
    print(f"  the whole fit                    median {statistics.median(whole) * us:6.0f}"
          f"   least {min(whole) * us:6.0f}")  # fmt: skip
    print(f"  the lean path alone, {len(pairs)} pairs in turn: mean of each pair's least over "
          f"{args.rounds} rounds {least.mean() * us:6.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
