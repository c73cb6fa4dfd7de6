"""Where one small fit spends its time: stages of ``SVMClassifier.fit`` against scikit-learn.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_fit_spans [--case hinge|squared_hinge|rbf]
        [--repeats R] [--profile N]

Breast cancer (569×30, standardized), the cases of ``bench_small_fits``: the linear hinge against
``SVC(kernel="linear")``, the squared hinge with a regularized bias against ``LinearSVC()``, RBF
against ``SVC()``. Both sides are fitted alternately ``--repeats`` times (wall and CPU seconds,
medians); the fits of svmbench run with timers around public stages (the input checks,
``input_checks.fit_input``, each ``Solver.solve``, its memory check, ``run_chunks`` (an iterative
method's chunks and stopping tests), the problem's certificates, the exact finish, the fitted
attributes), whose totals per fit are printed (nested stages counted in each
enclosing one; a wrapped call costs about a microsecond). ``--profile N`` adds cProfile's 30
costliest functions (own CPU time) over N more fits. The first printed line is
:func:`~benchmarks.harness.environment.summary`.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import functools
import pstats
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

import svmbench.input_checks as input_checks
import svmbench.svc_layout as svc_layout
from svmbench import SVMClassifier
from svmbench.benchmarks.harness.environment import summary
from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.solvers import base
from svmbench.solvers.barrier import early_finish

CASES = {
    "hinge": (lambda: SVMClassifier(kernel="linear"), lambda: SVC(kernel="linear")),
    "squared_hinge": (
        lambda: SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized"),
        LinearSVC,
    ),
    "rbf": (SVMClassifier, SVC),
}


class Spans:
    """Wall seconds and calls per stage, accumulated by wrappers set on the stages' owners."""

    def __init__(self):
        self.seconds = collections.defaultdict(float)
        self.calls = collections.Counter()
        self._restore = []

    def wrap(self, owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start
                self.calls[label] += 1

        setattr(owner, name, timed)
        self._restore.append((owner, name, original))

    def restore(self) -> None:
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()


def _wrap_stages(spans: Spans) -> None:
    spans.wrap(input_checks, "fit_input", "fit_input (X and y checks)")
    spans.wrap(base.Solver, "solve", "Solver.solve (auto's and the method's)")
    spans.wrap(base.Solver, "check_memory", "Solver.check_memory")
    spans.wrap(base, "run_chunks", "run_chunks (the iterations)")
    for cls in (SoftMarginPrimal, SoftMarginDual, KernelDual):
        spans.wrap(cls, "certificate", "problem.certificate")
    for module in (base, early_finish):  # the finish after a run, and the barrier's early one
        spans.wrap(module, "exact_finish", "exact_finish")
    spans.wrap(svc_layout, "support_layout", "svc_layout.support_layout")


def _timed(run) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=tuple(CASES), default="hinge")
    parser.add_argument("--repeats", type=int, default=25, help="alternating fits per side")
    parser.add_argument("--profile", type=int, default=0, help="fits under cProfile (0: none)")
    args = parser.parse_args(argv)
    print(summary())
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours, theirs = CASES[args.case]
    ours().fit(X, y), theirs().fit(X, y)  # compilation and caches
    spans = Spans()
    _wrap_stages(spans)
    times = {"svmbench": [], "scikit-learn": []}
    try:
        for _ in range(args.repeats):
            times["svmbench"].append(_timed(lambda: ours().fit(X, y)))
            times["scikit-learn"].append(_timed(lambda: theirs().fit(X, y)))
    finally:
        spans.restore()
    print(f"case {args.case}: medians of {args.repeats} alternating fits")
    for side, pairs in times.items():
        wall, cpu = np.median(np.array(pairs), axis=0)
        print(f"  {side:14s} wall {1e3 * wall:8.2f} ms   cpu {1e3 * cpu:8.2f} ms")
    print("stages of svmbench's fit (wall ms per fit, calls per fit):")
    for label, seconds in spans.seconds.items():
        calls = spans.calls[label] / args.repeats
        print(f"  {label:42s} {1e3 * seconds / args.repeats:8.3f}   {calls:5.1f}")
    fitted = ours().fit(X, y)
    result = fitted.result_
    print(
        f"result: {result.solver} ({result.info.get('auto', {}).get('chose', '')}), "
        f"{result.iterations} {result.iteration_unit}, rel_gap {result.rel_gap:.1e}"
    )
    if args.profile:
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        for _ in range(args.profile):
            ours().fit(X, y)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
