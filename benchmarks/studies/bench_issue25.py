"""Issue 25's targets side by side in one run: small fits, grids, the first run, large problems.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_issue25 [--before PYTHON] [--pairs N] [--quick]

Runs, each in its own process on one thread: ``bench_small_fits`` (the breast-cancer fits, digits
and the iris 9 × 5 grid search against scikit-learn), its 13 × 13 grid (``--grid rbf13``),
``bench_first_run --default-run`` ``--pairs`` times (with ``--before``, each followed by the same
for the svmbench that PYTHON imports, the tree before the issue), and ``svmbench compare`` on the
README's two large rows (the linear hinge against LIBLINEAR, RBF against LIBSVM). Each study's
own output is printed as it comes; then one table gives each target of issue 25, the figure
measured and whether it is met. Ratios are of medians; the first run's are CPU seconds, medians
of the pairs, against PYTHON's (without ``--before``, those rows give seconds only).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

STUDIES = "svmbench.benchmarks.studies."
#: The README's large rows, re-measured: ``svmbench compare`` arguments, the anchor, and the
#: headline table's wall ratio, which the issue asks not to get worse.
LARGE = {
    "linear hinge, n = 20 000, vs LIBLINEAR": (
        "--problem soft_margin_primal --bias regularized --data gaussian:n=20000,d=50,sep=1 "
        "--solvers auto,liblinear",
        "liblinear",
        0.31,
    ),
    "RBF, n = 10 000, vs LIBSVM": (
        "--problem kernel_dual --kernel rbf --gamma 0.05 --data gaussian:n=10000,d=20,sep=1 "
        "--solvers auto,libsvm",
        "libsvm",
        0.21,
    ),
}
#: A re-measured ratio within this factor of the headline's is not worse: the machine's noise.
NOISE = 1.1
_SMALL = re.compile(r"^(?P<case>.+?) / \S.*?\s(?P<ratio>[\d.]+)×(\s|$)")
_FIRST = re.compile(
    r"^(?P<what>first fit, \w+ *, (empty|warm) cache|default run's warm-up, empty cache)"
)
_CPU = re.compile(r"\(CPU (?P<cpu>[\d.]+) s")
_WALL = re.compile(r"^\S.*?cache\s+(?P<wall>[\d.]+) s")


def run(args: list[str], python: str = sys.executable) -> str:
    """The stdout of ``python args`` (or of another program) on one thread, echoed as it is."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    done = subprocess.run([python, *args], capture_output=True, text=True, env=env, check=False)
    print(done.stdout, end="", flush=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(args[:3])} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def small_ratios(output: str) -> dict[str, float]:
    """``{case: ratio}`` from ``bench_small_fits``' table."""
    found = (_SMALL.match(line.strip()) for line in output.splitlines())
    return {m["case"].strip(): float(m["ratio"]) for m in found if m}


def grid_figures(output: str) -> dict[str, float]:
    """The 13 × 13 grid's total ratio, worst cell ratio, cells over 50 ms and fits not optimal."""
    total = re.search(r"^total: .*ratio ([\d.]+)×", output, re.M)
    worst = re.search(r"^worst cell ratio ([\d.]+)×", output, re.M)
    slow = re.search(r"^cells over \d+ ms: (\d+)", output, re.M)
    statuses = re.search(r"^statuses of the first fold's fits: \{(.*)\}", output, re.M)
    if not (total and worst and slow and statuses):
        raise ValueError("the 13 × 13 grid's summary lines are missing from its output")
    counts = {k.strip(" '"): int(v) for k, v in re.findall(r"([^,{}]+): (\d+)", statuses[1])}
    not_optimal = sum(v for k, v in counts.items() if k != "optimal")
    return {
        "total": float(total[1]),
        "worst": float(worst[1]),
        "slow": float(slow[1]),
        "not_optimal": float(not_optimal),
    }


def first_run_figures(output: str) -> dict[str, float]:
    """CPU seconds of the cold fits and the default run's warm-up, wall of the warm fits."""
    figures = {}
    for line in output.splitlines():
        m = _FIRST.match(line)
        if not m:
            continue
        what = re.sub(r"\s+", " ", re.sub(r"\s+,", ",", m["what"]))
        pick = _WALL if "warm cache" in what else _CPU
        value = pick.search(line)
        if value:
            figures[what] = float(value.group(1))
    return figures


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over ``runs`` (the figures every run has)."""
    keys = set.intersection(*(set(r) for r in runs)) if runs else set()
    return {key: statistics.median(r[key] for r in runs) for key in sorted(keys)}


def compare_walls(output: str, anchor: str) -> tuple[float, float]:
    """The wall seconds of ``auto`` and of ``anchor`` in ``svmbench compare``'s table."""
    walls = {}
    for line in output.splitlines():
        cells = line.split()
        if len(cells) >= 3 and cells[0] in ("auto", anchor):
            try:
                walls[cells[0]] = float(cells[2])
            except ValueError:
                continue
    if set(walls) != {"auto", anchor}:
        raise ValueError(f"svmbench compare's table lacks auto or {anchor}")
    return walls["auto"], walls[anchor]


def verdicts(small, grid, first, before, large) -> list[tuple[str, str, str, str]]:
    """``(target, measured, bound, met)`` rows; ``before`` may be empty (no ratio there)."""
    rows = []

    def add(name, value, bound, unit="×"):
        shown = "n/a" if value is None else f"{value:.3g}{unit}"
        met = "n/a" if value is None else ("yes" if value <= bound else "NO")
        rows.append((name, shown, f"≤ {bound:g}{unit}", met))

    for case, ratio in small.items():
        add(case, ratio, 1.5 if case.startswith("iris") else 1.0)
    add("13 × 13 grid, all cells", grid["total"], 3.0)
    add("13 × 13 grid, worst cell", grid["worst"], 20.0)
    add("13 × 13 grid, cells over 50 ms", grid["slow"], 0.0, "")
    add("13 × 13 grid, first-fold fits not optimal", grid["not_optimal"], 0.0, "")
    for key, bound in (
        ("first fit, rbf, empty cache", 0.25),
        ("first fit, linear, empty cache", 0.3),
        ("default run's warm-up, empty cache", 0.3),
    ):
        ratio = first[key] / before[key] if key in before and key in first else None
        add(f"{key} (CPU, against the tree before)", ratio, bound)
    for kernel in ("rbf", "linear"):
        warm = first.get(f"first fit, {kernel}, warm cache")
        add(f"warm process, import to the first {kernel} fit", warm, 0.6, " s")
    for name, (ours, theirs) in large.items():
        add(
            f"{name} (the README's {LARGE[name][2]}× + 10 %)", ours / theirs, LARGE[name][2] * NOISE
        )
    return rows


def command_line() -> str:
    """The ``svmbench`` command beside this Python (the user's command, run as a user runs it)."""
    beside = os.path.join(os.path.dirname(sys.executable), "svmbench")
    found = beside if os.access(beside, os.X_OK) else shutil.which("svmbench")
    if found is None:
        raise SystemExit("bench_issue25 needs the svmbench command (pip install the project)")
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a Python whose svmbench is the tree before the issue")
    parser.add_argument("--quick", action="store_true", help="fewer rounds in every study")
    parser.add_argument(
        "--pairs", type=int, default=2, help="first runs of each tree, alternated (medians)"
    )
    args = parser.parse_args(argv)
    if args.before is not None and not (
        os.path.isfile(args.before) and os.access(args.before, os.X_OK)
    ):
        parser.error(f"--before must name a Python executable, got {args.before!r}")
    if args.pairs < 1:
        parser.error(f"--pairs must be at least 1, got {args.pairs}")
    small_args = ["--quick"] if args.quick else []  # bench_small_fits' 15 rounds each
    small = small_ratios(run(["-m", STUDIES + "bench_small_fits", *small_args]))
    grid = grid_figures(run(["-m", STUDIES + "bench_small_fits", "--grid", "rbf13", "--quick"]))
    first_args = ["-m", STUDIES + "bench_first_run", "--default-run", "--warm-repeats", "3"]
    runs, runs_before = [], []
    for _ in range(args.pairs):  # the two trees in turn: a change of the load falls on both
        runs.append(first_run_figures(run(first_args)))
        if args.before:
            runs_before.append(first_run_figures(run([*first_args, "--python", args.before])))
    first, before = medians(runs), medians(runs_before)
    large = {}
    for name, (compare_args, anchor, _) in LARGE.items():
        repeat = ["--repeat", "1" if args.quick else "5"]
        command = [command_line(), "compare", *compare_args.split(), *repeat]
        large[name] = compare_walls(run(command[1:], python=command[0]), anchor)
    print("\nissue 25's targets")
    rows = verdicts(small, grid, first, before, large)
    width = max(len(row[0]) for row in rows)
    for name, shown, bound, met in rows:
        print(f"{name:<{width}}  {shown:>9}  {bound:>8}  {met}")


if __name__ == "__main__":
    main()
