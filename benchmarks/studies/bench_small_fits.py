"""Small fits, side by side: ``SVMClassifier`` at its defaults against scikit-learn at its own.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_small_fits [--repeats R] [--grid-repeats G]
        [--skip-grid | --grid-only] [--quick] [--grid rbf13]

Cases (issue 25): breast cancer (569×30, standardized) with the linear hinge against
``SVC(kernel="linear")``, the squared hinge with a regularized bias against ``LinearSVC()``, RBF
against ``SVC()``; digits (1797×64, X/16, 10 classes, RBF γ = 0.02) against ``SVC(gamma=0.02)``;
iris ``GridSearchCV`` over C ∈ logspace(−2, 6, 9) × γ ∈ logspace(−3, 1, 5), cv = 5. Each case is
fitted once by both sides (compilation and caches warm), then timed in ``--repeats`` rounds that
alternate the two sides, so that a change of the machine's load falls on both; the table gives
the medians and their ratio. svmbench's fits are certified at its default ``tol=1e-6``; the
certified relative gap of the last fit of each case is printed beside it. The first printed line is
:func:`~benchmarks.harness.environment.summary`.

``--grid rbf13`` times instead, cell by cell, the grid of scikit-learn's "RBF SVM parameters"
example on standardized iris: C ∈ logspace(−2, 10, 13) × γ ∈ logspace(−9, 3, 13), the five
stratified folds of ``GridSearchCV(cv=5)``, each fold's fit and score timed for both sides in
turn. It prints each cell's median over folds and ratio, the worst ratio, the cells over 50 ms,
the statuses that were not ``optimal`` and the totals (the sum over every fold and cell).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from svmbench import SVMClassifier
from svmbench.benchmarks.harness.environment import summary


def _cases(skip_grid: bool, grid_only: bool = False):
    """``(name, svmbench factory, scikit-learn factory)``: each factory fits and returns the
    fitted object (a grid search or an estimator)."""
    Xc, yc = load_breast_cancer(return_X_y=True)
    Xc = StandardScaler().fit_transform(Xc)
    Xd, yd = load_digits(return_X_y=True)
    Xd = Xd / 16.0
    Xi, yi = load_iris(return_X_y=True)
    grid = {"C": np.logspace(-2, 6, 9), "gamma": np.logspace(-3, 1, 5)}

    def fit(est, X, y):
        return lambda: est.fit(X, y)

    def search(est):
        return lambda: GridSearchCV(est, grid, cv=5).fit(Xi, yi)

    cases = [
        (
            "cancer linear hinge / SVC(linear)",
            fit(SVMClassifier(kernel="linear"), Xc, yc),
            fit(SVC(kernel="linear"), Xc, yc),
        ),
        (
            "cancer sq. hinge, reg. bias / LinearSVC",
            fit(SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized"), Xc, yc),
            fit(LinearSVC(), Xc, yc),
        ),
        ("cancer RBF / SVC", fit(SVMClassifier(), Xc, yc), fit(SVC(), Xc, yc)),
        (
            "digits 10 classes RBF / SVC",
            fit(SVMClassifier(gamma=0.02), Xd, yd),
            fit(SVC(gamma=0.02), Xd, yd),
        ),
    ]
    grid_case = ("iris grid 9×5, cv=5 / SVC", search(SVMClassifier()), search(SVC()))
    if grid_only:
        return [grid_case]
    return cases if skip_grid else [*cases, grid_case]


def _gap(fitted) -> str:
    est = getattr(fitted, "best_estimator_", fitted)
    result = getattr(est, "result_", None)
    return f"{result.rel_gap:.1e}" if result is not None else ""


def _timed(run) -> tuple[float, object]:
    start = time.perf_counter()
    fitted = run()
    return time.perf_counter() - start, fitted


#: The grid of scikit-learn's "RBF SVM parameters" example.
RBF13 = {"C": np.logspace(-2, 10, 13), "gamma": np.logspace(-9, 3, 13)}
#: A cell slower than this is pathological (issue 25).
SLOW_CELL = 0.050


def _fold_times(make, X, y, folds) -> list[float]:
    """Seconds of fit + score of each fold."""
    times = []
    for train, test in folds:
        start = time.perf_counter()
        make().fit(X[train], y[train]).score(X[test], y[test])
        times.append(time.perf_counter() - start)
    return times


def grid_rbf13() -> None:
    """Cell by cell, svmbench against SVC on the 13 × 13 grid (see the module's docstring)."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    folds = list(StratifiedKFold(5).split(X, y))
    SVMClassifier(C=1e10, gamma=1.0).fit(X, y), SVC().fit(X, y)  # compile, load caches
    total_ours = total_theirs = 0.0
    worst, slow, statuses = (0.0, None), [], {}
    print(f"{'C':>8} {'gamma':>8} {'svmbench':>11} {'SVC':>9} {'ratio':>7}")
    for C in RBF13["C"]:
        for gamma in RBF13["gamma"]:
            ours = _fold_times(lambda: SVMClassifier(C=C, gamma=gamma), X, y, folds)  # noqa: B023
            theirs = _fold_times(lambda: SVC(C=C, gamma=gamma), X, y, folds)  # noqa: B023
            fitted = SVMClassifier(C=C, gamma=gamma).fit(X[folds[0][0]], y[folds[0][0]])
            key = fitted.result_.status.value
            statuses[key] = statuses.get(key, 0) + 1
            a, b = float(np.median(ours)), float(np.median(theirs))
            total_ours, total_theirs = total_ours + sum(ours), total_theirs + sum(theirs)
            worst = max(worst, (a / b, (C, gamma)), key=lambda w: w[0])
            if a > SLOW_CELL:
                slow.append((C, gamma, a))
            print(f"{C:>8.0e} {gamma:>8.0e} {1e3 * a:>8.2f} ms {1e3 * b:>6.2f} ms {a / b:>6.1f}×")
    print(f"worst cell ratio {worst[0]:.1f}× at C={worst[1][0]:.0e}, gamma={worst[1][1]:.0e}")
    print(
        f"cells over {1e3 * SLOW_CELL:.0f} ms: {len(slow)}",
        *(f"{c:.0e}/{g:.0e}" for c, g, _ in slow),
    )
    print(f"statuses of the first fold's fits: {statuses}")
    print(
        f"total: svmbench {total_ours:.2f} s, SVC {total_theirs:.2f} s, "
        f"ratio {total_ours / total_theirs:.2f}×"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds per case")
    parser.add_argument("--grid-repeats", type=int, default=15, help="rounds of the grid search")
    parser.add_argument("--skip-grid", action="store_true", help="leave the iris grid out")
    parser.add_argument("--grid-only", action="store_true", help="the iris grid search alone")
    parser.add_argument("--quick", action="store_true", help="3 rounds, the grid once")
    parser.add_argument(
        "--grid", choices=("rbf13",), help="time the 13 × 13 RBF grid cell by cell instead"
    )
    args = parser.parse_args(argv)
    if args.grid == "rbf13":
        print(summary())
        warnings.simplefilter("ignore")
        grid_rbf13()
        return
    if args.quick:
        args.repeats, args.grid_repeats = 3, 1
    print(summary())
    print(f"{'case':<42} {'svmbench':>11} {'sklearn':>11} {'ratio':>6}  gap")
    warnings.simplefilter("ignore")  # LinearSVC's and SVC's convergence notes at large C
    for name, ours, theirs in _cases(args.skip_grid, args.grid_only):
        ours(), theirs()  # compile, load caches
        repeats = args.grid_repeats if name.startswith("iris") else args.repeats
        times_ours, times_theirs, fitted = [], [], None
        for _ in range(repeats):
            t, fitted = _timed(ours)
            times_ours.append(t)
            times_theirs.append(_timed(theirs)[0])
        a, b = float(np.median(times_ours)), float(np.median(times_theirs))
        print(
            f"{name:<42} {1e3 * a:>8.2f} ms {1e3 * b:>8.2f} ms {a / b:>5.2f}×  {_gap(fitted)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
