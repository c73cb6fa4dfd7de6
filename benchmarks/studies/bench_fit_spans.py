"""Where one small fit spends its time: stages of ``SVMClassifier.fit`` against scikit-learn.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_fit_spans
        [--case hinge|squared_hinge|rbf|iris|digits|precomputed] [--C C] [--gamma G] [--repeats R]
        [--profile N]

Breast cancer (569×30, standardized), the cases of ``bench_small_fits``: the linear hinge against
``SVC(kernel="linear")``, the squared hinge with a regularized bias against ``LinearSVC()``, RBF
against ``SVC()``; ``iris``: one fit of the iris grid search (the first training fold of
``GridSearchCV(cv=5)``, 120 points, 3 one-vs-one pairs) at ``--C`` and ``--gamma`` (default 1
and 0.1) against ``SVC`` at the same; ``digits``: the digits fit of ``bench_small_fits``
(1797×64, X/16, 10 classes, 45 one-vs-one pairs, γ = ``--gamma``, default 0.02) against ``SVC``
at the same; ``precomputed``: ``kernel="precomputed"`` on the RBF Gram matrix (γ = ``--gamma``,
default 0.1) of digits' classes 0-2 (537 rows, 3 pairs) against ``SVC(kernel="precomputed")``.
``--C`` sets the breast-cancer cases' C too. Both sides are fitted alternately ``--repeats``
times (wall and CPU seconds, medians); the fits of svmbench run with timers around public
stages (the input checks, ``input_checks.fit_input``, each ``Solver.solve``, its memory check,
``run_chunks`` (an iterative method's chunks and stopping tests), the problem's certificates,
the exact finish and the barrier's early tries of it, the fitted attributes; for one-vs-one,
each pair's solve, auto's choice for it and its record; for a pair on SMO's lean path (shared
kernel rows or a Gram's block), SMO's set-up, its jitted loops, its gap estimates with their b,
the exact finish's test of an exact point and the pair's model; for a Gram matrix, its check
and its blocks' Cholesky tests), whose totals per fit are printed (nested stages counted in
each enclosing one; a wrapped call costs about a microsecond). ``--profile N`` adds cProfile's
30 costliest functions (own CPU time) over N more fits, the Python calls per fit and the calls
per fit of the input checks. The first printed line is
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
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

import svmbench.input_checks as input_checks
import svmbench.svc_layout as svc_layout
from svmbench import SVMClassifier
from svmbench.benchmarks.harness.environment import summary
from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal, kernel_dual
from svmbench.problems.kernels import Kernel
from svmbench.solvers import auto, base, finish_outcome, reductions, smo, smo_shared
from svmbench.solvers import barrier as barrier_module
from svmbench.solvers._jit import smo as smo_jit

CASES = {
    "hinge": (
        lambda C, gamma: SVMClassifier(kernel="linear", C=C),
        lambda C, gamma: SVC(kernel="linear", C=C),
    ),
    "squared_hinge": (
        lambda C, gamma: SVMClassifier(
            kernel="linear", loss="squared_hinge", bias="regularized", C=C
        ),
        lambda C, gamma: LinearSVC(C=C),
    ),
    "rbf": (lambda C, gamma: SVMClassifier(C=C), lambda C, gamma: SVC(C=C)),
    "iris": (
        lambda C, gamma: SVMClassifier(C=C, gamma=gamma),
        lambda C, gamma: SVC(C=C, gamma=gamma),
    ),
    "digits": (
        lambda C, gamma: SVMClassifier(C=C, gamma=gamma),
        lambda C, gamma: SVC(C=C, gamma=gamma),
    ),
    "precomputed": (
        lambda C, gamma: SVMClassifier(C=C, kernel="precomputed"),
        lambda C, gamma: SVC(C=C, kernel="precomputed"),
    ),
}
#: ``--gamma`` when not given: iris's, digits' and the precomputed Gram's own.
DEFAULT_GAMMA = {"iris": 0.1, "digits": 0.02, "precomputed": 0.1}
#: The input checks whose calls per fit ``--profile`` counts (by function name).
CHECKS = (
    "fit_input",
    "validate_data",
    "check_array",
    "check_X",
    "check_binary_labels",
    "check_multiclass_labels",
    "check_sample_weight",
    "check_finite",
    "check_products_finite",
    "check_linear_conditioning",
    "_check_conditioning",
)


def _data(case: str, gamma: float = 0.1):
    """The case's training data: standardized breast cancer, iris's first training fold,
    digits / 16, or the RBF Gram matrix (γ) of digits' classes 0, 1 and 2 / 16."""
    if case == "precomputed":
        X, y = load_digits(return_X_y=True)
        keep = y < 3
        return Kernel("rbf", gamma)(X[keep] / 16.0), y[keep]
    if case == "digits":
        X, y = load_digits(return_X_y=True)
        return X / 16.0, y
    if case == "iris":
        X, y = load_iris(return_X_y=True)
        train, _ = next(StratifiedKFold(5).split(X, y))
        return X[train], y[train]
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


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


def wrap_stages(spans: Spans) -> None:
    spans.wrap(input_checks, "fit_input", "fit_input (X and y checks)")
    spans.wrap(base.Solver, "solve", "Solver.solve (auto's and the method's)")
    spans.wrap(base.Solver, "check_memory", "Solver.check_memory")
    spans.wrap(base, "run_chunks", "run_chunks (the iterations)")
    for cls in (SoftMarginPrimal, SoftMarginDual, KernelDual):
        spans.wrap(cls, "certificate", "problem.certificate")
    for module in (finish_outcome, smo_shared):  # the finish after a run (the barrier: below)
        spans.wrap(module, "finish_exactly", "exact_finish")
    spans.wrap(barrier_module, "try_early_finish", "barrier's early finish tries")
    spans.wrap(svc_layout, "support_layout", "svc_layout.support_layout")
    spans.wrap(SVMClassifier, "_problem_and_solver", "estimator's problem and solver")
    spans.wrap(SVMClassifier, "_set_fitted", "estimator's fitted attributes")
    spans.wrap(reductions, "_binary_solve", "a one-vs-one pair's solve")
    spans.wrap(reductions, "solve_shared_pair", "its SMO on the lean path")
    spans.wrap(auto.Auto, "first_method", "auto's choice for a pair")
    spans.wrap(base.Solver, "_result", "Solver._result (the records)")
    spans.wrap(base.Solver, "_record", "Solver._record (the lean pairs' records)")
    spans.wrap(smo.SMO, "_init_state", "SMO's set-up")
    spans.wrap(smo_jit, "run_loop", "SMO's jitted loops")
    spans.wrap(smo.SMO, "_gap_estimate", "SMO's gap estimates with their b")
    spans.wrap(smo_shared, "already_exact", "the exact finish's test (already_exact)")
    spans.wrap(KernelDual, "_model_of", "a kernel problem's model (_model_of)")
    spans.wrap(reductions, "symmetric_gram", "the Gram matrix's check (symmetric_gram)")
    spans.wrap(kernel_dual, "cholesky_bound", "a Gram block's Cholesky test")


def _timed(run) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=tuple(CASES), default="hinge")
    parser.add_argument("--C", type=float, default=1.0, help="C of every case")
    parser.add_argument("--gamma", type=float, default=None, help="iris's (0.1), digits' (0.02)")
    parser.add_argument("--repeats", type=int, default=25, help="alternating fits per side")
    parser.add_argument("--profile", type=int, default=0, help="fits under cProfile (0: none)")
    args = parser.parse_args(argv)
    if args.gamma is None:
        args.gamma = DEFAULT_GAMMA.get(args.case, 0.1)
    print(summary())
    X, y = _data(args.case, args.gamma)
    make_ours, make_theirs = CASES[args.case]
    ours, theirs = (
        (lambda: make_ours(args.C, args.gamma)),
        (lambda: make_theirs(args.C, args.gamma)),
    )
    ours().fit(X, y), theirs().fit(X, y)  # compilation and caches
    spans = Spans()
    wrap_stages(spans)
    times = {"svmbench": [], "scikit-learn": []}
    try:
        for _ in range(args.repeats):
            times["svmbench"].append(_timed(lambda: ours().fit(X, y)))
            times["scikit-learn"].append(_timed(lambda: theirs().fit(X, y)))
    finally:
        spans.restore()
    print(f"case {args.case} (C={args.C:g}): medians of {args.repeats} alternating fits")
    for side, pairs in times.items():
        wall, cpu = np.median(np.array(pairs), axis=0)
        print(f"  {side:14s} wall {1e3 * wall:8.3f} ms   cpu {1e3 * cpu:8.3f} ms")
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
        stats = pstats.Stats(profile)
        print(f"Python calls per fit: {stats.total_calls / args.profile:.0f}")
        counts = collections.Counter()
        for (_, _, name), (_, calls, *_) in stats.stats.items():
            if name in CHECKS:
                counts[name] += calls
        print(
            "input checks per fit:",
            ", ".join(f"{name} {counts[name] / args.profile:g}" for name in CHECKS if counts[name]),
        )
        stats.sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
