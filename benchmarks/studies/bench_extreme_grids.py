"""Which cells of a parameter grid are pathological, on which data: one fit per cell against
scikit-learn.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_extreme_grids [--quick]
        [--data iris,wine,cancer,digits,digits38,hard] [--family rbf,linear,squared_hinge]
        [--repeats R] [--csv FILE] [--explain]

Issue 25 asks that no cell of a grid be pathological: none above 50 ms (:data:`SLOW_CELL`) or
20× scikit-learn's time for that cell (:data:`SLOW_RATIO`). Each cell is one fit on the whole
data (no cross-validation), ``SVMClassifier`` at its defaults against scikit-learn's estimator
with the same parameters, both in this process, warm (every data set and family is fitted once
before it is timed, and a fit of svmbench's that compiled is timed again), the two sides
alternated ``--repeats`` times (a side whose fit took over :data:`LONG_FIT` seconds is not
repeated) and the median wall time kept. Families:

- ``rbf``: C ∈ logspace(−2, 10, 13) × γ ∈ logspace(−9, 3, 13), against ``SVC(C, gamma)``;
- ``linear``: the hinge, C ∈ logspace(−2, 10, 13), against ``SVC(kernel="linear", C)``; with
  more than two classes ``multiclass="ovo"``, SVC's pairs (the default, one-vs-rest, solves
  other problems);
- ``squared_hinge``: ``SVMClassifier(kernel="linear", loss="squared_hinge",
  bias="regularized", C)`` against ``LinearSVC(C)`` (its defaults: the squared hinge,
  a regularized bias, one-vs-rest), over the same C.

Data (:func:`datasets`): iris, wine and breast cancer (standardized), digits (X/16, 10 classes),
the digits pair 3 against 8, and ``hard``: 120 × 200 Gaussian rows (d > n), the classes' means
0.1 apart per feature, with 40 rows repeated, half of them under the other label. ``--quick``
takes every other C and γ (7 × 7) and one repeat.

Per data set and family it prints the total time of each side and their ratio, the worst cell's
ratio, the cells above 50 ms and above 20×, the statuses (``result_.status``; every fit should
be ``optimal``), the cells whose ``n_support_`` differs from SVC's and the cells whose
predictions on the training data differ; then every flagged cell. ``--explain`` refits each
cell that is slow, above 20× or not ``optimal`` once more and prints what ran: auto's choice,
or for a reduction the method, status, iterations and time of its five slowest binary
problems. ``--csv FILE`` writes one row per cell. The first printed line is
:func:`~benchmarks.harness.environment.summary`.
"""

from __future__ import annotations

import argparse
import collections
import csv
import dataclasses
import time
import warnings
from collections.abc import Callable

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from svmbench import SVMClassifier
from svmbench.benchmarks.harness.environment import summary

#: A cell slower than this is pathological (issue 25).
SLOW_CELL = 0.050
#: So is a cell this many times slower than scikit-learn's.
SLOW_RATIO = 20.0
#: A side whose fit took longer than this (seconds) is timed once.
LONG_FIT = 0.5
#: A fit of svmbench that compiled (``result_.compile_time > 0``) is timed again, this many
#: times at most.
COMPILE_RETRIES = 3
#: The grid of scikit-learn's "RBF SVM parameters" example.
CS = np.logspace(-2, 10, 13)
GAMMAS = np.logspace(-9, 3, 13)
FAMILIES = ("rbf", "linear", "squared_hinge")
DATA = ("iris", "wine", "cancer", "digits", "digits38", "hard")


def hard_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """120 × 200: 80 Gaussian rows, classes ±0.05 apart per feature (overlapping), then 40 of
    them repeated, 20 with their label and 20 with the other one (no classifier separates a
    point from itself: not separable, whatever the kernel)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 40)
    X = rng.normal(size=(80, 200)) + np.where(y == 1, 0.05, -0.05)[:, None]
    again = rng.choice(80, size=40, replace=False)
    y_again = y[again].copy()
    y_again[:20] = 1 - y_again[:20]
    return np.vstack([X, X[again]]), np.concatenate([y, y_again])


def datasets(names=DATA) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The data sets by name, as the module's docstring says."""
    out = {}
    for name in names:
        if name in ("iris", "wine", "cancer"):
            load = {"iris": load_iris, "wine": load_wine, "cancer": load_breast_cancer}[name]
            X, y = load(return_X_y=True)
            out[name] = (StandardScaler().fit_transform(X), y)
        elif name in ("digits", "digits38"):
            X, y = load_digits(return_X_y=True)
            X = X / 16.0
            if name == "digits38":
                keep = (y == 3) | (y == 8)
                X, y = np.ascontiguousarray(X[keep]), y[keep]
            out[name] = (X, y)
        elif name == "hard":
            out[name] = hard_data()
        else:
            raise ValueError(f"--data: unknown data set {name!r}; known: {', '.join(DATA)}")
    return out


def estimators(family: str, C: float, gamma: float | None, n_classes: int):
    """``(svmbench's estimator, scikit-learn's)`` of one cell, unfitted."""
    if family == "rbf":
        return SVMClassifier(C=C, gamma=gamma), SVC(C=C, gamma=gamma)
    if family == "linear":
        multiclass = "ovo" if n_classes > 2 else "auto"
        return SVMClassifier(kernel="linear", C=C, multiclass=multiclass), SVC(kernel="linear", C=C)
    if family == "squared_hinge":
        ours = SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized", C=C)
        return ours, LinearSVC(C=C)
    raise ValueError(f"--family: unknown family {family!r}; known: {', '.join(FAMILIES)}")


def grid(family: str, quick: bool) -> list[tuple[float, float | None]]:
    """The cells ``(C, γ)`` of a family (γ None for the linear ones)."""
    step = 2 if quick else 1
    Cs = CS[::step]
    if family == "rbf":
        return [(C, g) for C in Cs for g in GAMMAS[::step]]
    return [(C, None) for C in Cs]


@dataclasses.dataclass
class Cell:
    """One cell: the median times of both sides and what the fits say."""

    data: str
    family: str
    C: float
    gamma: float | None
    ours: float
    theirs: float
    status: str
    n_support: str  # "same", "differs" or "n/a" (a side without n_support_)
    ours_sv: int | None
    theirs_sv: int | None
    predictions_differ: int  # training points predicted differently
    chose: str

    @property
    def ratio(self) -> float:
        return self.ours / self.theirs

    @property
    def slow(self) -> bool:
        return self.ours > SLOW_CELL

    @property
    def far(self) -> bool:
        return self.ratio > SLOW_RATIO

    @property
    def flagged(self) -> bool:
        return self.slow or self.far or self.status != "optimal"


def _timed_fit(est, X, y) -> float:
    start = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - start


def _chose(result) -> str:
    auto = result.info.get("auto")
    if auto is not None:
        return auto["chose"]
    if "binary_solver" in result.info:
        return f"{result.info.get('strategy', '')}/{result.info['binary_solver']}"
    return result.solver


def time_cell(make: Callable, X, y, repeats: int, label=("", "", 0.0, None)) -> Cell:
    """One cell: ``make()`` gives a fresh ``(ours, theirs)`` pair; the two are fitted in turn
    ``repeats`` times (once if a fit took over :data:`LONG_FIT`; svmbench's again when it
    compiled), medians kept; the last fits are compared."""
    times = ([], [])
    for _ in range(max(1, repeats)):
        pair = make()
        for side in (0, 1):
            if times[side] and times[side][0] > LONG_FIT:
                continue
            for _ in range(COMPILE_RETRIES):
                seconds = _timed_fit(pair[side], X, y)
                if side == 1 or pair[0].result_.compile_time == 0.0:
                    break
            times[side].append(seconds)
            fitted = pair
    ours, theirs = fitted
    if not hasattr(ours, "result_"):  # its fit was not repeated: the first one's fit
        ours = make()[0].fit(X, y)
    if not hasattr(theirs, "classes_"):
        theirs = make()[1].fit(X, y)
    a, b = getattr(ours, "n_support_", None), getattr(theirs, "n_support_", None)
    same = "n/a" if a is None or b is None else ("same" if np.array_equal(a, b) else "differs")
    return Cell(
        *label,
        ours=float(np.median(times[0])),
        theirs=float(np.median(times[1])),
        status=ours.result_.status.value,
        n_support=same,
        ours_sv=None if a is None else int(np.sum(a)),
        theirs_sv=None if b is None else int(np.sum(b)),
        predictions_differ=int(np.sum(ours.predict(X) != theirs.predict(X))),
        chose=_chose(ours.result_),
    )


def run(data: str, family: str, X, y, repeats: int, quick: bool) -> list[Cell]:
    """Every cell of a family's grid on one data set, after one untimed fit per side."""
    k = np.unique(y).size
    for est in estimators(family, 1.0, 0.1, k):
        est.fit(X, y)  # compile, load caches
    cells = []
    for C, gamma in grid(family, quick):
        make = lambda C=C, gamma=gamma: estimators(family, C, gamma, k)  # noqa: E731
        cells.append(time_cell(make, X, y, repeats, (data, family, float(C), gamma)))
    return cells


@dataclasses.dataclass
class Summary:
    total_ours: float
    total_theirs: float
    worst: Cell
    slow: list[Cell]
    far: list[Cell]
    statuses: dict[str, int]
    support_differs: list[Cell]
    predictions_differ: list[Cell]

    @property
    def ratio(self) -> float:
        return self.total_ours / self.total_theirs


def summarize(cells: list[Cell]) -> Summary:
    """The per-data-set line's figures, from the cells alone."""
    return Summary(
        total_ours=sum(c.ours for c in cells),
        total_theirs=sum(c.theirs for c in cells),
        worst=max(cells, key=lambda c: c.ratio),
        slow=[c for c in cells if c.slow],
        far=[c for c in cells if c.far],
        statuses=dict(collections.Counter(c.status for c in cells)),
        support_differs=[c for c in cells if c.n_support == "differs"],
        predictions_differ=[c for c in cells if c.predictions_differ],
    )


def _where(c: Cell) -> str:
    return f"C={c.C:.0e}" + ("" if c.gamma is None else f",g={c.gamma:.0e}")


def print_summary(data: str, family: str, cells: list[Cell]) -> None:
    s = summarize(cells)
    sv = f"{len(s.support_differs)}" if any(c.n_support != "n/a" for c in cells) else "n/a"
    print(
        f"{data:<9} {family:<13} {len(cells):>4} {s.total_ours:>8.3f} {s.total_theirs:>8.3f} "
        f"{s.ratio:>6.2f}x {s.worst.ratio:>6.1f}x {_where(s.worst):<17} {len(s.slow):>4} "
        f"{len(s.far):>4} {sv:>4} {len(s.predictions_differ):>4}  "
        + " ".join(f"{k}:{v}" for k, v in sorted(s.statuses.items())),
        flush=True,
    )


HEADER = (
    f"{'data':<9} {'family':<13} {'cells':>4} {'ours s':>8} {'sk s':>8} {'ratio':>7} "
    f"{'worst':>7} {'at':<17} {'>50ms':>4} {'>20x':>4} {'nSV':>4} {'pred':>4}  statuses"
)


def print_flagged(cells: list[Cell]) -> None:
    for c in cells:
        if not (c.flagged or c.n_support == "differs" or c.predictions_differ):
            continue
        why = [
            w
            for w, on in (
                ("slow", c.slow),
                ("far", c.far),
                (c.status, c.status != "optimal"),
                (f"nSV {c.ours_sv} vs {c.theirs_sv}", c.n_support == "differs"),
                (f"{c.predictions_differ} predictions differ", c.predictions_differ),
            )
            if on
        ]
        print(
            f"  {c.data:<9} {c.family:<13} {_where(c):<17} {1e3 * c.ours:>9.2f} ms "
            f"{1e3 * c.theirs:>8.2f} ms {c.ratio:>7.1f}x  {c.chose:<22} {'; '.join(why)}"
        )


def explain(cell: Cell, X, y) -> list[str]:
    """What one refit of a cell ran: auto's choice and the record, and for a reduction each
    binary problem's method, status, iterations and solve time, the slowest first."""
    from svmbench.solvers import reductions

    pairs = []
    hook = "_binary_solve"  # each binary problem's solve, by name (the import rule)
    original = getattr(reductions, hook)

    def recording(binary, bp, *args, **kwargs):
        start = time.perf_counter()
        res = original(binary, bp, *args, **kwargs)
        pairs.append((time.perf_counter() - start, bp.n_samples, res))
        return res

    ours = estimators(cell.family, cell.C, cell.gamma, np.unique(y).size)[0]
    setattr(reductions, hook, recording)
    try:
        start = time.perf_counter()
        ours.fit(X, y)
        wall = time.perf_counter() - start
    finally:
        setattr(reductions, hook, original)
    r = ours.result_
    lines = [
        f"{cell.data} {cell.family} {_where(cell)}: {1e3 * wall:.1f} ms, {r.status.value}, "
        f"rel_gap {r.rel_gap:.1e}, {r.iterations} {r.solver} iterations, chose {_chose(r)}"
        + (_tried(r.info["auto"]) if "auto" in r.info else "")
    ]
    finish = r.info.get("exact_finish")
    if finish is not None:
        lines.append(f"    exact finish: {_short(finish)}")
    for seconds, n, res in sorted(pairs, key=lambda p: -p[0])[:5]:
        line = (
            f"    pair n={n}: {1e3 * seconds:.2f} ms, {res.solver}, {res.status.value}, "
            f"{res.iterations} {res.iteration_unit}, rel_gap {res.rel_gap:.1e}"
        )
        auto = res.info.get("auto")
        if auto is not None:
            line += f", auto{_tried(auto)}"
        if "exact_finish" in res.info:
            line += f", exact finish {_short(res.info['exact_finish'])}"
        lines.append(line)
    if len(pairs) > 5:
        rest = sum(p[0] for p in pairs) - sum(p[0] for p in sorted(pairs, key=lambda p: -p[0])[:5])
        lines.append(f"    ... {len(pairs) - 5} more pairs, {1e3 * rest:.2f} ms in all")
    return lines


def _tried(auto: dict) -> str:
    return f" (rule {auto['rule']}, tried {', '.join(auto['tried'])})"


def _short(report) -> str:
    if not isinstance(report, dict):
        return str(report)[:160]
    keys = ("accepted", "skipped", "rel_gap_before", "rel_gap_after", "free", "seconds")
    return ", ".join(f"{k}={report[k]}" for k in keys if k in report)[:200]


def write_csv(path: str, cells: list[Cell]) -> None:
    fields = [f.name for f in dataclasses.fields(Cell)] + ["ratio", "slow", "far"]
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(fields)
        for c in cells:
            writer.writerow([getattr(c, f) for f in fields])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=",".join(DATA), help="comma-separated data sets")
    parser.add_argument("--family", default=",".join(FAMILIES), help="comma-separated families")
    parser.add_argument("--repeats", type=int, default=3, help="alternated fits per cell")
    parser.add_argument("--quick", action="store_true", help="every other C and γ, one repeat")
    parser.add_argument("--csv", help="write one row per cell to this file")
    parser.add_argument("--explain", action="store_true", help="refit flagged cells, say why")
    args = parser.parse_args(argv)
    families = [f for f in args.family.split(",") if f]
    for family in families:
        if family not in FAMILIES:
            parser.error(f"--family: unknown family {family!r}; known: {', '.join(FAMILIES)}")
    try:
        data = datasets([d for d in args.data.split(",") if d])
    except ValueError as exc:
        parser.error(str(exc))
    repeats = 1 if args.quick else args.repeats
    print(summary())
    warnings.simplefilter("ignore")  # SVC's and LinearSVC's convergence notes at large C
    print(HEADER)
    every = []
    for name, (X, y) in data.items():
        for family in families:
            cells = run(name, family, X, y, repeats, args.quick)
            every += cells
            print_summary(name, family, cells)
    print("flagged cells (slow: over 50 ms; far: over 20x):")
    print_flagged(every)
    if args.explain:
        for c in every:
            if c.flagged:
                print("\n".join(explain(c, *data[c.data])), flush=True)
    if args.csv:
        write_csv(args.csv, every)


if __name__ == "__main__":
    main()
