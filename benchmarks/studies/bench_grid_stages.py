"""Where the iris grid search spends its time, stage by stage, beside ``SVC``'s.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_grid_stages [--repeats R] [--cells]

``GridSearchCV(est, {C: logspace(−2, 6, 9), gamma: logspace(−3, 1, 5)}, cv=5)`` on iris (the
grid of ``bench_small_fits``), ``est`` ``SVMClassifier()`` and ``SVC()`` in turn, ``--repeats``
rounds each (CPU time). Each side's public stages are timed by wrappers (about a microsecond a
call): GridSearchCV's ``clone``, ``get_params``, ``set_params``, ``fit``, ``score``, ``predict``,
``decision_function``; for svmbench also the fit's own stages (those of ``bench_fit_spans``, SMO's
loops). Printed per stage: milliseconds per grid search, calls
per grid search and microseconds per call; "the rest" is GridSearchCV's own bookkeeping (the
splits, the scorer's calls, the results). Nested stages count in each enclosing one.

``--cells`` times instead each cell (C, γ) of the grid, fold by fold (fit and score, both sides
alternated, ``--repeats`` rounds), and prints the medians, their ratio and how each one-vs-one
pair of svmbench's fits ended: SMO alone, SMO's probe and the exact finish of its point
(``smo+finish``), or the methods auto ran after the probe (``smo>active_set``).
"""

from __future__ import annotations

import argparse
import collections
import time
import warnings

import numpy as np
import sklearn.model_selection._search as search_module
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from svmbench import SVMClassifier
from svmbench.benchmarks.harness.environment import summary
from svmbench.benchmarks.studies.bench_fit_spans import Spans, wrap_stages
from svmbench.solvers import reductions
from svmbench.solvers._jit import smo as smo_jit

GRID = {"C": np.logspace(-2, 6, 9), "gamma": np.logspace(-3, 1, 5)}
#: The estimator methods GridSearchCV calls (directly or through the scorer).
METHODS = ("get_params", "set_params", "fit", "score", "predict", "decision_function")


class CpuSpans(Spans):
    """:class:`Spans` in CPU seconds, restoring an inherited method by deleting the wrapper."""

    def wrap(self, owner, name: str, label: str) -> None:
        inherited = isinstance(owner, type) and name not in owner.__dict__
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] += time.process_time() - start
                self.calls[label] += 1

        setattr(owner, name, timed)
        self._restore.append((owner, name, None if inherited else original))

    def restore(self) -> None:
        for owner, name, original in reversed(self._restore):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._restore.clear()


def stages(repeats: int) -> None:
    """The stage table of both sides (see the module docstring)."""
    X, y = load_iris(return_X_y=True)
    sides = {"svmbench": SVMClassifier, "scikit-learn": SVC}
    for cls in sides.values():
        GridSearchCV(cls(), GRID, cv=5).fit(X, y)  # compilation and caches
    spans = {side: CpuSpans() for side in sides}
    for _ in range(repeats):
        for side, cls in sides.items():
            s = spans[side]
            s.wrap(GridSearchCV, "fit", "GridSearchCV.fit (all)")
            s.wrap(search_module, "clone", "clone")
            for name in METHODS:
                s.wrap(cls, name, name)
            if side == "svmbench":
                wrap_stages(s)
                s.wrap(smo_jit, "run_loop", "SMO's loops")
            try:
                GridSearchCV(cls(), GRID, cv=5).fit(X, y)
            finally:
                s.restore()
    for side, s in spans.items():
        total = s.seconds["GridSearchCV.fit (all)"]
        rest = total - sum(s.seconds[k] for k in ("clone", "fit", "score", "set_params"))
        print(f"{side}: {1e3 * total / repeats:.1f} ms of CPU per grid search")
        print(f"  {'stage':42s} {'ms/search':>10s} {'calls':>7s} {'µs/call':>9s}")
        for label, seconds in [*s.seconds.items(), ("the rest (GridSearchCV's own)", rest)]:
            calls = s.calls.get(label, repeats) / repeats
            per_call = 1e6 * seconds / repeats / max(calls, 1)
            print(f"  {label:42s} {1e3 * seconds / repeats:10.2f} {calls:7.0f} {per_call:9.1f}")


def _ending(result) -> str:
    """How a pair's solve ended: its method, SMO's probe finished exactly, or auto's chain."""
    chosen = result.info.get("auto")
    if chosen is None:
        return result.solver
    if result.info.get("exact_finish", {}).get("early"):
        return f"{chosen['chose']}+finish"
    return ">".join(chosen["tried"])


def cells(repeats: int) -> None:
    """Each cell's fold medians and ratio, and how svmbench's pairs ended."""
    X, y = load_iris(return_X_y=True)
    folds = list(StratifiedKFold(5).split(X, y))
    SVMClassifier().fit(X, y), SVC().fit(X, y)
    endings = collections.Counter()
    # the reduction's one call per pair, counted by how the pair ended
    solve = getattr(reductions, "_binary_solve")  # noqa: B009

    def counted(*args, **kwargs):
        result = solve(*args, **kwargs)
        endings[_ending(result)] += 1
        return result

    def run(make, train, test) -> float:
        start = time.process_time()
        make().fit(X[train], y[train]).score(X[test], y[test])
        return time.process_time() - start

    totals = [0.0, 0.0]
    print(f"{'C':>8} {'gamma':>8} {'svmbench':>11} {'SVC':>9} {'ratio':>6}  pairs")
    setattr(reductions, "_binary_solve", counted)  # noqa: B010
    try:
        for C in GRID["C"]:
            for gamma in GRID["gamma"]:
                ours, theirs = [], []
                endings.clear()
                for _ in range(repeats):
                    for train, test in folds:
                        ours.append(run(lambda: SVMClassifier(C=C, gamma=gamma), train, test))  # noqa: B023
                        theirs.append(run(lambda: SVC(C=C, gamma=gamma), train, test))  # noqa: B023
                a, b = float(np.median(ours)), float(np.median(theirs))
                totals[0], totals[1] = totals[0] + sum(ours), totals[1] + sum(theirs)
                ended = ", ".join(f"{k} {v // repeats}" for k, v in sorted(endings.items()))
                times = f"{1e3 * a:>8.2f} ms {1e3 * b:>6.2f} ms {a / b:>5.2f}×"
                print(f"{C:>8.0e} {gamma:>8.0e} {times}  {ended}")
    finally:
        setattr(reductions, "_binary_solve", solve)  # noqa: B010
    print(
        f"total: svmbench {totals[0] / repeats:.3f} s, SVC {totals[1] / repeats:.3f} s of CPU "
        f"per pass, ratio {totals[0] / totals[1]:.2f}×"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="grid searches (or passes) per side")
    parser.add_argument("--cells", action="store_true", help="cell by cell instead of by stage")
    args = parser.parse_args(argv)
    print(summary())
    warnings.simplefilter("ignore")  # SVC's convergence notes at large C
    if args.cells:
        cells(args.repeats)
    else:
        stages(args.repeats)


if __name__ == "__main__":
    main()
