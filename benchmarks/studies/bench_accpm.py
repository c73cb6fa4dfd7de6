"""ACCPM's three constraint-dropping strategies side by side: time, cuts held and bounds.

``python -m svmbench.benchmarks.studies.bench_accpm [--quick] [--repeat R]`` solves the soft-margin
primal (hinge, free bias, C = 1) by ACCPM with ``dropping`` = none, relevance and keep on

- gaussian n = 10 000, d = 20 (sep 1, overlapping classes), and
- quadrant n = 10 000, d = 5 (noise 0.05),

at ``tol`` 1e-6, and, without ``--quick``, on cases where cuts pile up (hundreds to a thousand
held without dropping): gaussian d = 20 at 1e-9, d = 50 at 1e-6 and d = 100 at 1e-6 and 1e-9.

Timings are interleaved: each round solves every case once per strategy, in an order rotated from
round to round, so that a load change on the shared machine hits the three strategies alike.
The table gives the median solve time over ``--repeat`` rounds and its ratio to ``none``'s
median (with the range of the per-round ratios), oracle calls, cuts held (maximum, final, mean
over the calls), Newton steps, the problem's certified relative gap, ACCPM's own
``(u − l)/max(1, |u|)`` and the distance of the objective to Clarabel's. It writes
``reports/accpm/accpm_dropping.png`` (bounds and cuts held per oracle call) and
``reports/accpm/README.md``. BLAS runs single-threaded (threadpoolctl). The machine line is
:func:`~benchmarks.harness.environment.summary`; Clarabel's optimum comes from
:func:`~benchmarks.harness.evaluation.reference` (cached on disk).

Not a suite: the figures are ACCPM's own bounds and cut counts per oracle call.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from svmbench.benchmarks.harness.environment import summary
from svmbench.benchmarks.harness.evaluation import default_cache_dir, interleaved, reference
from svmbench.problems import SoftMarginPrimal, datasets
from svmbench.solvers.accpm import ACCPM, DROPPING

CASES = (
    ("gaussian d=20", "gaussian:n=10000,d=20,sep=1,seed=0", 1e-6),
    ("quadrant d=5", "quadrant:n=10000,d=5,noise=0.05,seed=0", 1e-6),
)
#: Without --quick: cases where cuts pile up (a long run, or many variables).
LONG_CASES = (
    ("gaussian d=20 (tol 1e-9)", "gaussian:n=10000,d=20,sep=1,seed=0", 1e-9),
    ("gaussian d=50", "gaussian:n=10000,d=50,sep=1,seed=0", 1e-6),
    ("gaussian d=100", "gaussian:n=10000,d=100,sep=1,seed=0", 1e-6),
    ("gaussian d=100 (tol 1e-9)", "gaussian:n=10000,d=100,sep=1,seed=0", 1e-9),
)
OUT = Path("reports/accpm")


def _rounds(problems: dict, repeat: int) -> dict:
    """``repeat`` rounds; each solves every (case, strategy) once, in an order rotated from round
    to round (:func:`~benchmarks.harness.evaluation.interleaved`).

    Returns ``{case: {strategy: [result per round]}}`` (trace off: the certificate is computed
    once, at the end, outside the clock).
    """
    runs = {
        (name, dropping): (
            lambda p=problem, t=tol, d=dropping: ACCPM(tol=t, dropping=d, trace=False).solve(p)
        )
        for name, (problem, tol) in problems.items()
        for dropping in DROPPING
    }
    results = interleaved(runs, repeat, rotate=True)
    return {name: {d: results[(name, d)] for d in DROPPING} for name in problems}


def _summary(results: list, base: list, f_star: float) -> dict:
    """Table row of one strategy: counts from the first round (runs are deterministic), times
    as medians, ratios to ``none`` per round."""
    r = results[0]
    if any(x.iterations != r.iterations for x in results):
        raise RuntimeError("ACCPM runs of one case and strategy differ between rounds")
    times = np.array([x.solve_time for x in results])
    ratios = times / np.array([x.solve_time for x in base])
    i = r.info
    return {
        "calls": r.iterations,
        "max_cuts": i["max_cuts_held"],
        "final_cuts": i["cuts_held"],
        "mean_cuts": float(np.mean(i["history"]["cuts"])),
        "newton": i["newton_steps"],
        "time": float(np.median(times)),
        "ratio": float(np.median(times) / np.median([x.solve_time for x in base])),
        "ratio_lo": float(ratios.min()),
        "ratio_hi": float(ratios.max()),
        "rel_gap": r.rel_gap,
        "bound_gap": i["bound_gap"],
        "vs_ref": (r.primal - f_star) / max(1.0, abs(f_star)),
        "status": r.status.value,
    }


def _plot(runs: dict, f_stars: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(runs)
    fig, axes = plt.subplots(len(names), 2, figsize=(11, 3.2 * len(names)), squeeze=False)
    colors = {"none": "tab:blue", "relevance": "tab:orange", "keep": "tab:green"}
    for j, name in enumerate(names):
        top, bottom = axes[j, 0], axes[j, 1]
        for dropping, results in runs[name].items():
            h = results[0].info["history"]
            scale = np.maximum(1.0, np.abs(h["upper"]))
            c = colors[dropping]
            top.semilogy(
                h["call"],
                (h["upper"] - h["lower"]) / scale,
                color=c,
                label=f"{dropping}: (u−l)/|u|",
            )
            top.semilogy(
                h["call"],
                np.maximum(h["upper"] - f_stars[name], 1e-16) / scale,
                color=c,
                ls=":",
                label=f"{dropping}: (u−f*)/|u|",
            )
            bottom.plot(h["call"], h["cuts"], color=c, label=dropping)
        top.set_title(f"{name}: ACCPM bounds", fontsize=10)
        top.set_xlabel("oracle calls")
        top.legend(fontsize=6)
        bottom.set_title(f"{name}: cuts held", fontsize=10)
        bottom.set_xlabel("oracle calls")
        bottom.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, the two short cases")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    cases = CASES if args.quick else CASES + LONG_CASES

    from threadpoolctl import threadpool_limits

    defaults = ACCPM()
    load_before = os.getloadavg()
    problems, f_stars = {}, {}
    with threadpool_limits(1):
        machine = "Machine: " + summary(
            note=f"ACCPM defaults relevance_every = {defaults.relevance_every}, "
            f"keep_factor = {defaults.keep_factor}, lp_every = {defaults.lp_every}"
        )
        print(f"# {machine}")
        for name, spec, tol in cases:
            ds = datasets.load(spec)
            problem = SoftMarginPrimal(ds.X, ds.y, C=1.0)
            problems[name] = (problem, tol)
            ref = reference(problem, cache_dir=default_cache_dir())
            if ref is None:
                raise RuntimeError(f"no certified reference optimum for {problem.describe()}")
            f_stars[name] = ref.primal
        t0 = time.perf_counter()
        runs = _rounds(problems, repeat)
        wall = time.perf_counter() - t0
    load_after = os.getloadavg()
    header = (
        f"{'case':26s} {'dropping':10s} {'calls':>6s} {'cuts max':>8s} {'final':>6s} "
        f"{'mean':>6s} {'newton':>7s} {'time s':>7s} {'ratio':>6s} {'range':>12s} "
        f"{'rel gap':>9s} {'(u-l)/|u|':>10s} {'vs ref':>9s}"
    )
    print(header)
    rows = []
    for name, _, _ in cases:
        for dropping in DROPPING:
            row = _summary(runs[name][dropping], runs[name]["none"], f_stars[name])
            rows.append((name, dropping, row))
            print(
                f"{name:26s} {dropping:10s} {row['calls']:6d} {row['max_cuts']:8d} "
                f"{row['final_cuts']:6d} {row['mean_cuts']:6.0f} {row['newton']:7d} "
                f"{row['time']:7.3f} {row['ratio']:6.2f} "
                f"{row['ratio_lo']:5.2f}–{row['ratio_hi']:<5.2f} {row['rel_gap']:9.2e} "
                f"{row['bound_gap']:10.2e} {row['vs_ref']:9.1e}"
                + ("" if row["status"] == "optimal" else f"  [{row['status']}]")
            )
    load = (
        f"load average (1, 5, 15 min) {' '.join(f'{v:.2f}' for v in load_before)} before and "
        f"{' '.join(f'{v:.2f}' for v in load_after)} after the {wall:.0f} s of rounds"
    )
    print(f"# {load}")
    path = args.out / "accpm_dropping.png"
    _plot(runs, f_stars, path)
    print(f"wrote {path}")
    readme = args.out / "README.md"
    _write_readme(readme, rows, machine, load, repeat, args.quick)
    print(f"wrote {readme}")


def _write_readme(path: Path, rows, machine: str, load: str, repeat: int, quick: bool) -> None:
    """The table above as Markdown, written by this benchmark (never edited by hand)."""
    lines = [
        "# ACCPM: constraint dropping",
        "",
        "Written by `python -m svmbench.benchmarks.studies.bench_accpm"
        + (" --quick" if quick else "")
        + "` (do not edit by hand). Soft-margin primal, hinge, free bias, C = 1; ACCPM stops on "
        "its own bounds, `(u − l)/max(1, |u|) ≤ tol`; *rel gap* is the problem's certified "
        "relative gap of the returned point, *vs ref* is `(P − f*)/max(1, |f*|)` with f* from "
        "Clarabel. Cuts held: the most any centered polytope held, the number held at the end, "
        "and the mean over the oracle calls.",
        "",
        f"{machine}. Times are medians over {repeat} interleaved round(s) (each round runs the "
        "three strategies back to back, in an order rotated from round to round); *ratio* is "
        "the median time over `none`'s, *range* the smallest and largest per-round ratio. The "
        f"machine is shared: {load}.",
        "",
        "![bounds and cuts held per oracle call](accpm_dropping.png)",
        "",
        "| case | dropping | oracle calls | cuts held (max) | (final) | (mean) | Newton steps "
        "| time (s) | ratio to none | range | rel gap | (u − l)/max(1,abs(u)) | vs ref | status |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, dropping, r in rows:
        lines.append(
            f"| {name} | {dropping} | {r['calls']} | {r['max_cuts']} | {r['final_cuts']} "
            f"| {r['mean_cuts']:.0f} | {r['newton']} | {r['time']:.3f} | {r['ratio']:.2f} "
            f"| {r['ratio_lo']:.2f}–{r['ratio_hi']:.2f} | {r['rel_gap']:.2e} "
            f"| {r['bound_gap']:.2e} | {r['vs_ref']:.1e} | {r['status']} |"
        )
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
