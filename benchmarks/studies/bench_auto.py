"""``auto`` against every exact solver, case by case, in one run: is its pick the fastest?

For each case, every exact registered solver that accepts the problem runs to ``tol`` (the
references too, judged at ``tol`` with their own tight ``eps``), and so does ``auto``; the table
gives auto's choice, its wall time, the fastest solver that reached ``tol`` and the ratio. Wall
times are medians of ``--repeat`` calls (compilation excluded, as in every record); auto's and the
best solver's are then re-measured in alternating pairs of calls (:func:`paired`), and the ratio is
the median of the pairs' ratios. ``auto`` runs first: where it certified, a method is capped at 10x
its time (past that it cannot be the best) and one call past 2x its time is that method's median,
which keeps the whole run within an hour on a quiet machine. The cases are the default and scaling
suites (the cases the rules in :data:`svmbench.solvers.auto.RULES` were fitted on resemble them) and
cases the rules were not fitted on: other data sets, C from 1e-3 to 1e3, unscaled features.

Run:
``OPENBLAS_NUM_THREADS=1 python -m svmbench.benchmarks.studies.bench_auto [--quick] [--json F]
[--kinds logistic,multinomial_logistic]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings

from svmbench.benchmarks.harness.cases import data_specs, make_problem
from svmbench.benchmarks.harness.settings import grid
from svmbench.benchmarks.harness.suite_files import load_suite
from svmbench.problems import REGRESSION_KINDS, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import Status

#: Exact methods compared with auto (the stochastic ones never drive the gap to tol; the
#: reductions solve another formulation; cvxpy is the slow modelling-layer reference).
EXACT = (
    "barrier", "dcd", "accpm", "smo", "smo_batch", "cs_dcd", "clarabel", "osqp",
    "logistic_newton", "logistic_dcd", "multinomial_newton", "logistic_cvxpy", "svr_dcd",
    "svr_newton",
)  # fmt: skip
#: The multiclass kinds (their data sets have more than two classes).
MULTICLASS_KINDS = ("multiclass_hinge", "multinomial_logistic")
#: Sizes past which a method is not run, having taken more than 10x the best at a smaller size
#: in this benchmark (the table says so).
TOO_SLOW = {
    "clarabel": 6000, "osqp": 3000, "accpm": 1000, "barrier-kernel": 6000, "logistic_cvxpy": 2000
}  # fmt: skip

UNFITTED = [
    # (problem, data spec)
    *[
        ({"kind": "soft_margin_primal", "C": C, "loss": "hinge", "bias": "regularized"}, spec)
        for C in (1e-2, 0.1, 10.0)
        for spec in ("gaussian:n=5000,d=100,sep=1,seed=3", "breast_cancer:standardize=false")
    ],
    *[
        ({"kind": "soft_margin_dual", "C": C, "loss": "hinge", "bias": bias}, spec)
        for C in (1e-2, 10.0)
        for bias in ("regularized", "free")
        for spec in ("digits:binary=1,standardize=true", "xor:n=3000,noise=0.1,seed=1")
    ],
    *[
        ({"kind": "soft_margin_primal", "C": C, "loss": loss, "bias": "none"}, spec)
        for C in (1e-3, 1.0, 1e3)
        for loss in ("hinge", "squared_hinge")
        for spec in ("gaussian:n=3000,d=3000,density=0.01,sep=4,seed=2",)
    ],
    *[
        ({"kind": "kernel_dual", "C": C, "kernel": kernel, "gamma": "scale", "bias": "free"}, spec)
        for C in (1e-3, 1.0, 1e3)
        for kernel in ("rbf", "poly")
        for spec in ("circles:n=1500,seed=4", "breast_cancer:standardize=false")
    ],
    *[
        ({"kind": "hard_margin", "bias": "free"}, spec)
        for spec in ("gaussian:n=3000,d=10,sep=10,seed=5", "xor:n=200,seed=2")
    ],
    *[
        ({"kind": "multiclass_hinge", "C": C, "bias": "regularized"}, spec)
        for C in (1e-3, 1.0, 1e3)
        for spec in ("wine:standardize=false", "blobs:n=2000,d=10,k=4,seed=6")
    ],
    *[
        ({"kind": "logistic", "C": C, "bias": bias}, spec)
        for C in (1e-2, 1.0, 1e2, 1e4)
        for bias in ("regularized", "free")
        for spec in (
            "gaussian:n=20000,d=50,sep=1,seed=0",
            "gaussian:n=3000,d=3000,density=0.01,sep=4,seed=2",
            "breast_cancer:n=200",
            "gaussian:n=100,d=2,sep=2,seed=0",
        )
    ],
    *[
        ({"kind": "multinomial_logistic", "C": C, "bias": "regularized"}, spec)
        for C in (1e-2, 1.0, 1e3)
        for spec in ("iris", "wine", "blobs:n=2000,d=10,k=4,seed=6")
    ],
    *[
        ({"kind": "svr_primal", "C": C, "epsilon": 0.1, "loss": loss, "bias": bias}, spec)
        for loss in ("squared_epsilon_insensitive", "epsilon_insensitive")
        for C in (1e-2, 1.0, 1e2, 1e4)
        for bias in ("regularized", "free")
        for spec in (
            "friedman1:n=1000,seed=0",
            "regression:n=5000,d=50,noise=10,seed=0",
            "regression:n=200,d=1000,noise=10,seed=0",
        )
        if bias == "regularized" or C == 1.0
    ],
    *[
        ({"kind": "svr_dual", "C": C, "epsilon": 0.1, "kernel": "rbf", "bias": "free"}, spec)
        for C in (1.0, 100.0)
        for spec in (
            "friedman1:n=1000,seed=0",
            "friedman1:n=5000,seed=0",
            "regression:n=2000,d=50,noise=10,seed=0",
            "diabetes",
        )
    ],
    *[
        ({"kind": "one_class", "nu": nu, "kernel": "rbf"}, spec)
        for nu in (0.05, 0.5)
        for spec in ("outliers:n=3000,d=2,seed=0", "outliers:n=3000,d=20,seed=0")
    ],
]


def suite_cases(name: str, max_n: int) -> list[tuple[dict, str]]:
    suite = load_suite(name)
    out = []
    for entry in suite["problems"]:
        for problem in grid(entry):
            for spec in data_specs(suite, 0, _Settings()):
                out.append((problem, spec))
    return [(p, s) for p, s in out if _n_of(s) <= max_n]


class _Settings:
    split = None


def _n_of(spec: str) -> int:
    for part in spec.replace(":", ",").split(","):
        if part.startswith("n="):
            return int(part[2:])
    return 0


def options(name: str, tol: float, time_limit: float = 20.0) -> dict:
    return {"tol": tol, "time_limit": time_limit}


def timed(name: str, problem, tol: float, repeat: int, time_limit=20.0, slow=float("inf")):
    """The last result and the median wall of at least ``repeat`` calls (more, up to 15, while
    they add up to under 0.3 s: a call of a few milliseconds needs more than three to have a
    median). A call past 2 s, or past ``slow``, is its own median: such a method is not the
    best."""
    solver = registry.get(name, **options(name, tol, time_limit))
    walls, result = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while len(walls) < repeat or (sum(walls) < 0.3 and len(walls) < 15):
            result = solver.solve(problem)
            walls.append(result.wall_time)
            if result.wall_time > min(2.0, slow):
                break
    return result, statistics.median(walls)


def paired(best: str, problem, tol: float, repeat: int) -> tuple[float, float, float]:
    """``auto`` and ``best`` called alternately, back to back (at least ``max(repeat, 7)`` pairs,
    more, up to 31, while they add up to under 1 s): their median walls and the median of the
    pairs' ratios. A pair shares the machine's load of its moment, so the median ratio compares
    the two methods where timing them one after the other let a change of load in between decide
    the cases of a few milliseconds."""
    solvers = {n: registry.get(n, **options(n, tol)) for n in ("auto", best)}
    walls: dict[str, list[float]] = {"auto": [], best: []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while len(walls["auto"]) < max(repeat, 7) or (
            sum(walls["auto"]) + sum(walls[best]) < 1.0 and len(walls["auto"]) < 31
        ):
            order = ("auto", best) if len(walls["auto"]) % 2 == 0 else (best, "auto")
            for name in order:
                walls[name].append(solvers[name].solve(problem).wall_time)
            if walls["auto"][-1] > 2.0:
                break
    ratios = [a / max(b, 1e-9) for a, b in zip(walls["auto"], walls[best], strict=True)]
    return (
        statistics.median(walls["auto"]),
        statistics.median(walls[best]),
        statistics.median(ratios),
    )


def skip_reason(name: str, problem) -> str | None:
    key = "barrier-kernel" if name == "barrier" and problem.kind == "kernel_dual" else name
    if problem.n_samples > TOO_SLOW.get(key, 10**12):
        return f"n > {TOO_SLOW[key]}"
    return registry.solver_class(name).unsupported_reason(problem)


def run(cases, tol: float, repeat: int, out=sys.stdout) -> list[dict]:
    rows = []
    print(
        f"{'case':70s} {'auto chose':10s} {'auto s':>8s} {'best':9s} {'best s':>8s} {'ratio':>6s}"
        f" {'rule':>6s}",
        file=out,
    )
    for problem_spec, spec in cases:
        data = datasets.load(spec)
        if data.is_regression != (problem_spec["kind"] in REGRESSION_KINDS) or (
            not data.is_regression and data.is_binary == (problem_spec["kind"] in MULTICLASS_KINDS)
        ):
            continue  # a suite's grid pairs every problem with every data set
        problem = make_problem(problem_spec, data)
        times, statuses = {}, {}
        auto, auto_wall = timed("auto", problem, tol, repeat)
        # when auto certified, a method past 10x its time cannot be the best: it is capped
        # there, and one call past 2x auto's time is its median
        certified = auto.status in (Status.OPTIMAL, Status.INFEASIBLE)
        cap = min(20.0, max(1.0, 10.0 * auto_wall)) if certified else 20.0
        slow = 2.0 * auto_wall if certified else float("inf")
        for name in EXACT:
            if skip_reason(name, problem):
                continue
            result, wall = timed(name, problem, tol, repeat, cap, slow)
            statuses[name] = result.status.value
            if result.status in (Status.OPTIMAL, Status.INFEASIBLE):
                times[name] = wall
        best = min(times, key=times.get) if times else None
        ratio = auto_wall / times[best] if best else float("nan")
        if best is not None and auto.status.value in ("optimal", "infeasible"):
            auto_wall, times[best], ratio = paired(best, problem, tol, repeat)
        label = f"{problem.describe()} | {spec}"
        row = {
            "case": label,
            "chose": auto.info["auto"]["chose"],
            "tried": list(auto.info["auto"]["tried"]),
            "auto_status": auto.status.value,
            "auto_wall": auto_wall,
            "best": best,
            "best_wall": times.get(best, float("nan")),
            "ratio": ratio,
            # the rule's choice against the best, both from the same candidates' runs (auto's
            # own call adds its overhead and a second sample of the machine's noise)
            "rule_ratio": times.get(auto.info["auto"]["chose"], float("nan")) / times[best]
            if best
            else float("nan"),
            "statuses": statuses,
            "walls": times,
        }
        rows.append(row)
        print(
            f"{label[:70]:70s} {row['chose']:10s} {auto_wall:8.3f} {best or '-':9s} "
            f"{row['best_wall']:8.3f} {row['ratio']:6.2f} {row['rule_ratio']:6.2f}"
            + ("" if auto.status.value in ("optimal", "infeasible") else f"  [{auto.status}]"),
            file=out,
            flush=True,
        )
    ratios = [r["ratio"] for r in rows if r["best"]]
    rules = [r["rule_ratio"] for r in rows if r["best"]]
    misses = [r["case"] for r in rows if r["auto_status"] == "max_iter" and r["best"]]
    print(
        f"\n{len(rows)} cases: auto/best wall ratio median {statistics.median(ratios):.2f}, "
        f"max {max(ratios):.2f}; within 1.2x on {sum(x <= 1.2 for x in ratios)}/{len(ratios)}; "
        f"the rule's choice/best: median {statistics.median(rules):.2f}, max {max(rules):.2f}, "
        f"within 1.2x on {sum(x <= 1.2 for x in rules)}/{len(rules)}; max_iter where another "
        f"solver reached tol: {len(misses)}",
        file=out,
    )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="n <= 3000, unfitted cases only")
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--kinds", help="only these problem kinds (comma-separated)")
    args = parser.parse_args(argv)
    cases = [] if args.quick else suite_cases("default", 10**9) + suite_cases("scaling", 10000)
    cases += UNFITTED
    if args.kinds:
        cases = [c for c in cases if c[0]["kind"] in args.kinds.split(",")]
    rows = run(cases, args.tol, args.repeat)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
