"""Pegasos against scikit-learn's SGDClassifier, epoch for epoch, judged by the same problem.

Run ``python -m svmbench.benchmarks.studies.bench_pegasos [--quick]``; it prints the tables, checks
Pegasos's three claims (at ``C = 0.05``, a relative suboptimality ≤ 2e-2 after 20 epochs with suffix
and with polynomial averaging; at ``C = 1``, a log-log slope of it over 5-100 epochs ≤ −0.8; the
suffix average below SGDClassifier at every epoch count) and writes
``reports/pegasos/pegasos_vs_sgd.png`` and ``reports/pegasos/README.md`` (exit 1 if a claim fails).

Cases: :class:`~problems.SoftMarginPrimal` (hinge) on ``gaussian:n=20000,d=50,sep=1,seed=0``
(``--quick``: n = 5000), ``C ∈ {0.05, 1}`` (``λ = 1/(nC)`` = 1e-3 and 5e-5 at n = 20 000), with the
same bias on both sides: ``bias="free"`` (SGDClassifier's intercept is unregularized,
``fit_intercept=True``; Pegasos updates a free bias with its step on the loss subgradient) and
``bias="none"`` (``fit_intercept=False``). ``P*`` is Clarabel's certified optimum
(:func:`benchmarks.harness.evaluation.reference`, cached on disk under ``SVMBENCH_CACHE_DIR`` or
``~/.cache/svmbench``).

What is measured, at E epochs for E in a grid (each E is its own run with ``max_iter=E``; a run is
deterministic given its seed, so the run with ``max_iter=E`` is the first E epochs of a longer
one):

- Pegasos (``registry.get("pegasos", max_iter=E, seed=0, trace=False)``), with averaging
  ``none`` (last iterate), ``suffix`` (the default) and ``polynomial`` (η = 3); ``uniform`` once
  at E = 20.
- ``SGDClassifier(loss="hinge", penalty="l2", alpha=lambda_from_C(C, n), max_iter=E, tol=None,
  random_state=0)``, through the ``sklearn_sgd`` anchor
  (:class:`~svmbench.solvers.anchors.sklearn.SklearnSGDAnchor`): scikit-learn minimizes
  ``(1/n) Σ loss + α ½‖w‖²`` (its ``R(w) = ½‖w‖²``), our C-form over ``nC``, so ``α = λ``. Its
  default ``learning_rate="optimal"`` (step ``1/(α(t + t₀))``), last iterate; ``average=True``
  (ASGD) is shown beside it.
- Both judged by ``(P(w, b) − P*)/P*`` with the problem's ``primal_objective`` (a Pegasos result's
  ``primal`` is that value; its certificate's gap is also reported).
- Times: Pegasos ``solve_time`` (jitted epochs, single thread, compilation excluded) and the
  anchor's ``solve_time``, the ``SGDClassifier.fit`` call alone (Cython, single thread), at
  E = 20: ratios on a shared machine.

Full mode also measures SGDClassifier with its defaults (``max_iter=1000, tol=1e-3``, its own
stopping rule) at C = 1 on n ∈ {1 000, 5 000, 20 000}: how far above the optimum it ends.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from svmbench.benchmarks.harness.environment import REPO_ROOT, summary
from svmbench.benchmarks.harness.evaluation import default_cache_dir, reference
from svmbench.problems import SoftMarginPrimal, datasets
from svmbench.problems.scaling import lambda_from_C
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning

MODES = ("none", "suffix", "polynomial")
CASES = [(C, bias) for C in (0.05, 1.0) for bias in ("free", "none")]
REPORT_DIR = REPO_ROOT / "reports" / "pegasos"


def p_star(problem) -> float:
    """``P*``, certified by the harness's reference
    (:func:`~benchmarks.harness.evaluation.reference`)."""
    ref = reference(problem, cache_dir=default_cache_dir())
    if ref is None:
        raise RuntimeError(f"no reference certified {problem.describe()}")
    return ref.primal


def run_pegasos(problem, averaging: str, epochs: int):
    solver = registry.get("pegasos", averaging=averaging, max_iter=epochs, seed=0, trace=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solver.solve(problem)


def run_sgd(problem, epochs: int | None, *, average: bool = False, defaults: bool = False):
    """SGDClassifier through its anchor; returns (P(w, b), fit seconds, epochs run)."""
    opts = {} if defaults else {"max_iter": epochs, "tol": None}
    sgd = registry.get("sklearn_sgd", average=average, seed=0, **opts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = sgd.solve(problem)
    return r.primal, r.solve_time, r.iterations


def loglog_slope(epochs, values) -> float:
    """Least-squares slope of log(values) against log(epochs)."""
    return float(np.polyfit(np.log(epochs), np.log(values), 1)[0])


def machine() -> str:
    note = "both sides single-threaded (serial jitted epochs; SGDClassifier's Cython loop)"
    return summary("scikit-learn", note=note)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 5000 and epochs 5, 20, 100")
    parser.add_argument("--no-report", action="store_true", help="do not write reports/pegasos")
    args = parser.parse_args(argv)
    n = 5000 if args.quick else 20000
    grid = (5, 20, 100) if args.quick else (1, 2, 5, 10, 20, 50, 100)
    spec = f"gaussian:n={n},d=50,sep=1,seed=0"
    ds = datasets.load(spec)
    started = time.perf_counter()
    print(f"# Pegasos vs SGDClassifier on {spec}\n# {machine()}\n")

    curves: dict = {}
    rows = []
    timing = []
    for C, bias in CASES:
        problem = SoftMarginPrimal(ds.X, ds.y, C=C, bias=bias)
        lam = lambda_from_C(C, n)
        t0 = time.perf_counter()
        Ps = p_star(problem)
        print(f"C={C:g} (λ={lam:.3g}) bias={bias}: P* = {Ps:.8g} "
              f"(reference in {time.perf_counter() - t0:.1f}s)")  # fmt: skip
        cur = {m: [] for m in (*MODES, "sgd", "asgd")}
        for E in grid:
            line = {"C": C, "lam": lam, "bias": bias, "E": E}
            for mode in MODES:
                r = run_pegasos(problem, mode, E)
                line[mode] = (r.primal - Ps) / Ps
                line[f"{mode}_rel_gap"] = r.rel_gap
                if E == 20 and mode == "suffix":
                    timing.append((C, bias, r.solve_time))
            P_sgd, sec, _ = run_sgd(problem, E)
            P_asgd, _, _ = run_sgd(problem, E, average=True)
            line["sgd"], line["asgd"] = (P_sgd - Ps) / Ps, (P_asgd - Ps) / Ps
            if E == 20:
                timing[-1] = (*timing[-1], sec)
                r = run_pegasos(problem, "uniform", E)
                line["uniform"] = (r.primal - Ps) / Ps
            for m in cur:
                cur[m].append(line[m])
            rows.append(line)
            print(
                f"  E={E:4d}  pegasos none {line['none']:.3e}  suffix {line['suffix']:.3e}  "
                f"poly {line['polynomial']:.3e}  |  SGD {line['sgd']:.3e}  ASGD {line['asgd']:.3e}"
                f"  (suffix rel gap {line['suffix_rel_gap']:.2e})"
            )
        curves[(C, bias)] = cur

    # ---- the claims ------------------------------------------------------------------------------
    print("\n# Claims")
    claims = []
    for C, bias in CASES:
        cur = curves[(C, bias)]
        if C == 0.05 and 20 in grid:
            at20 = {m: cur[m][grid.index(20)] for m in ("suffix", "polynomial")}
            ok = all(v <= 2e-2 for v in at20.values())
            claims.append((f"C=0.05 {bias}: rel subopt at 20 epochs ≤ 2e-2 "
                           f"(suffix {at20['suffix']:.2e}, polynomial {at20['polynomial']:.2e})",
                           ok))  # fmt: skip
        if C == 1.0:
            sel = [i for i, E in enumerate(grid) if 5 <= E <= 100]
            Es = [grid[i] for i in sel]
            for m in ("suffix", "polynomial"):
                slope = loglog_slope(Es, [cur[m][i] for i in sel])
                claims.append((f"C=1 {bias} {m}: log-log slope over epochs {Es} = {slope:.2f} "
                               "≤ -0.8", slope <= -0.8))  # fmt: skip
        below = all(p < s for p, s in zip(cur["suffix"], cur["sgd"]))
        ratios = ", ".join(f"{s / p:.1f}" for p, s in zip(cur["suffix"], cur["sgd"]))
        claims.append((f"C={C:g} {bias}: Pegasos (suffix) below SGDClassifier at every E "
                       f"(SGD/Pegasos suboptimality ratios {ratios})", below))  # fmt: skip
    for text, ok in claims:
        print(f"  [{'PASS' if ok else 'FAIL'}] {text}")

    print("\n# Time at 20 epochs (Pegasos suffix solve_time vs SGDClassifier.fit)")
    for entry in timing:
        if len(entry) == 4:
            C, bias, tp, ts = entry
            print(f"  C={C:g} {bias}: Pegasos {tp * 1e3:.0f} ms, SGD {ts * 1e3:.0f} ms, "
                  f"ratio SGD/Pegasos {ts / tp:.2f}")  # fmt: skip

    defaults = []
    if not args.quick:
        print("\n# SGDClassifier with its defaults (max_iter=1000, tol=1e-3), C = 1, bias free")
        for m in (1000, 5000, 20000):
            dsm = datasets.load(f"gaussian:n={m},d=50,sep=1,seed=0")
            pm = SoftMarginPrimal(dsm.X, dsm.y, C=1.0, bias="free")
            Ps = p_star(pm)
            P, _, iters = run_sgd(pm, None, defaults=True)
            defaults.append((m, (P - Ps) / Ps, iters))
            print(f"  n={m:6d}: rel subopt {(P - Ps) / Ps:.3e} after {iters} epochs")

    print(f"\n# total {time.perf_counter() - started:.0f}s")
    if not args.no_report:
        write_report(spec, grid, rows, curves, claims, timing, defaults, machine())
    return 0 if all(ok for _, ok in claims) else 1


def write_report(spec, grid, rows, curves, claims, timing, defaults, machine_line) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(2, 2, figsize=(10, 8), sharex=True)
    style = {
        "none": ("Pegasos, last iterate", "C0", ":"),
        "suffix": ("Pegasos, suffix average", "C0", "-"),
        "polynomial": ("Pegasos, polynomial (η=3)", "C2", "--"),
        "sgd": ("SGDClassifier", "C3", "-"),
        "asgd": ("SGDClassifier(average=True)", "C1", "-."),
    }
    for ax, (C, bias) in zip(axes.ravel(), CASES):
        for m, (label, color, ls) in style.items():
            ax.loglog(grid, curves[(C, bias)][m], ls, color=color, marker="o", ms=3, label=label)
        lam = rows[[r["C"] == C and r["bias"] == bias for r in rows].index(True)]["lam"]
        ax.set_title(f"C = {C:g} (λ = {lam:.2g}), bias = {bias}")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_ylabel("(P − P*)/P*")
    for ax in axes[1]:
        ax.set_xlabel("epochs")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"Pegasos vs SGDClassifier, {spec}")
    fig.tight_layout()
    fig.savefig(REPORT_DIR / "pegasos_vs_sgd.png", dpi=110)
    plt.close(fig)

    lines = [
        "# Pegasos vs SGDClassifier",
        "",
        "Produced by `python -m svmbench.benchmarks.studies.bench_pegasos` (do not edit by hand).",
        f"Data: `{spec}`; relative suboptimality `(P − P*)/P*` of the C-form primal, `P*` from "
        "Clarabel. Same bias on both sides; `λ = α = 1/(nC)`. Each E is a run of E epochs, seed 0.",
        f"Machine: {machine_line}.",
        "",
        "![curves](pegasos_vs_sgd.png)",
        "",
        "| C | λ | bias | epochs | Pegasos last | Pegasos suffix | Pegasos polynomial | "
        "SGDClassifier | SGD averaged | suffix certified rel. gap |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['C']:g} | {r['lam']:.2g} | {r['bias']} | {r['E']} | {r['none']:.2e} | "
            f"{r['suffix']:.2e} | {r['polynomial']:.2e} | {r['sgd']:.2e} | {r['asgd']:.2e} | "
            f"{r['suffix_rel_gap']:.2e} |"
        )
    lines += ["", "Uniform averaging at 20 epochs: " + ", ".join(
        f"C={r['C']:g} {r['bias']} {r['uniform']:.2e}" for r in rows if "uniform" in r
    ), "", "## Claims", ""]  # fmt: skip
    lines += [f"- {'PASS' if ok else 'FAIL'}: {text}" for text, ok in claims]
    if timing:
        lines += ["", "## Time at 20 epochs", ""]
        for entry in timing:
            if len(entry) == 4:
                C, bias, tp, ts = entry
                lines.append(f"- C={C:g} {bias}: Pegasos {tp * 1e3:.0f} ms, SGDClassifier "
                             f"{ts * 1e3:.0f} ms (ratio SGD/Pegasos {ts / tp:.2f})")  # fmt: skip
    if defaults:
        lines += ["", "## SGDClassifier with its defaults (max_iter=1000, tol=1e-3), C = 1, free "
                  "bias", "", "| n | rel. suboptimality | epochs |", "|---|---|---|"]  # fmt: skip
        lines += [f"| {m} | {s:.3e} | {it} |" for m, s, it in defaults]
    (REPORT_DIR / "README.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {REPORT_DIR / 'pegasos_vs_sgd.png'} and {REPORT_DIR / 'README.md'}")


# ---- pytest-benchmark: the jitted epoch alone ----------------------------------------------------
def test_pegasos_epoch_dense(benchmark):
    """One jitted epoch (suffix averaging) on gaussian n = 20 000, d = 50."""
    ds = datasets.load("gaussian:n=20000,d=50,sep=1,seed=0")
    problem = SoftMarginPrimal(ds.X, ds.y, C=1.0, bias="free")
    solver = registry.get("pegasos", max_iter=1, trace=False)
    solver.warm_up()
    benchmark(lambda: solver._step(problem, solver._init_state(problem, None)))


if __name__ == "__main__":
    raise SystemExit(main())
