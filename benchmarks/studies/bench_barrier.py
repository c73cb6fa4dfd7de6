"""Benchmark of the interior-point methods of ``solvers/barrier/`` (log-barrier, primal-dual).

``python -m svmbench.benchmarks.studies.bench_barrier [--quick] [--threads N]``

(a) grid of t₀ and μ (and the centering tolerance) on three problems: Newton steps and time to a
    certified relative gap of 1e-8, the evidence for the defaults of the log-barrier path
    (``method="barrier"`` on every problem; the primal-dual variant, the default, has no t₀ or μ:
    its figures are the last row);
(b) linear primal (hinge, free bias) n-scaling on ``gaussian:d=20,sep=1`` to gap 1e-6, the
    log-barrier path and the primal-dual variant side by side (no trace: its certificates would
    add to the cpu time), with the fitted exponents of time ∝ n^a, and the side-by-side ratio
    of both against Clarabel (its own solve time, and with the QP export) at n = 20 000,
    d = 50 to gap 1e-8;
(c) RBF dual (γ = 1/d, d = 20, C = 1) at n ∈ {500, 1000, 2000}: the log-barrier path
    (``method="barrier"``), the primal-dual predictor-corrector variant (``method="primal-dual"``,
    the default; one iteration = one factorization = one Newton step), Clarabel and
    OSQP on the same QP, side by side; and the Nyström factor (r = 200) at n = 50 000 with both
    variants.

Every figure is the problem's certified gap; times are measured side by side in one run: the
solvers' ``solve_time`` (wall clock) and the CPU seconds of the process around the whole call
(``cpu``, which includes the certificates; on a shared, loaded machine the wall clock of a
single-threaded run mostly measures the other jobs). BLAS is limited to ``--threads`` threads
(default 1: Clarabel and OSQP are single-threaded, and on a shared machine multi-threaded
OpenBLAS on small matrices mostly waits). ``--quick`` drops
n = 3·10⁵, 10⁶ and 50 000 and thins the grid. The first printed line is
:func:`~benchmarks.harness.environment.summary` (machine, load average, versions, threads).

Not a suite: the figures are grids of the barrier's own parameters, CPU seconds beside the wall
clock and fitted exponents; ``svmbench run scaling`` times the barrier beside the other solvers
through the harness.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from svmbench.benchmarks.harness.environment import summary


def _run(solver_name, problem, **options):
    """Solve; the result gets the CPU seconds of this process in ``info["cpu_time"]``."""
    from dataclasses import replace

    from svmbench.solvers import registry

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu = time.process_time()
        result = registry.get(solver_name, **options).solve(problem)
        cpu = time.process_time() - cpu
    return replace(result, info={**result.info, "cpu_time": cpu})


def part_a(quick: bool) -> None:
    from svmbench.problems import KernelDual, SoftMarginPrimal, datasets

    print("\n(a) t0 and mu grid: Newton steps / cpu seconds to certified rel. gap 1e-8")
    bc = datasets.load("breast_cancer")
    g = datasets.load("gaussian:n=5000,d=20,sep=1,seed=0")
    k = datasets.load("gaussian:n=500,d=20,sep=1,seed=1")
    problems = {
        "breast_cancer primal": SoftMarginPrimal(bc.X, bc.y, C=1.0),
        "gaussian 5000x20 primal": SoftMarginPrimal(g.X, g.y, C=1.0),
        "rbf dual n=500": KernelDual(k.X, k.y, C=1.0, kernel="rbf", gamma=1 / 20),
    }
    mus = (5.0, 15.0, 50.0) if quick else (5.0, 15.0, 50.0, 150.0)
    t0s = (1.0, 10.0, 100.0)
    settings = [(mu, t0, 1e-2) for mu in mus for t0 in t0s]
    settings += [(15.0, 10.0, 1e-6), (15.0, 10.0, 1e-9)]
    names = list(problems)
    print(f"{'mu':>6} {'t0':>6} {'newton_tol':>10} | " + " | ".join(f"{n:>24}" for n in names))

    def cell(r):
        ok = "" if r.status.value == "optimal" else f" {r.status.value}"
        return f"{r.iterations:4d} / {r.info['cpu_time']:7.3f}{ok}".rjust(24)

    for mu, t0, nt in settings:
        opts = dict(tol=1e-8, mu=mu, t0=t0, newton_tol=nt, method="barrier")
        cells = [cell(_run("barrier", problems[name], **opts)) for name in names]
        print(f"{mu:6g} {t0:6g} {nt:10.0e} | " + " | ".join(cells))
    cells = [cell(_run("barrier", problems[name], tol=1e-8)) for name in names]
    print(f"{'primal-dual (default)':>24} | " + " | ".join(cells))


def part_b(quick: bool) -> None:
    from svmbench.problems import SoftMarginPrimal, datasets

    methods = ("barrier", "primal-dual")
    print("\n(b) linear primal, hinge, free bias, gaussian d=20 sep=1 C=1, to certified gap 1e-6")
    print("    per method: Newton steps (primal-dual: iterations), rel gap, wall s, cpu s")
    ns = (10_000, 30_000, 100_000) if quick else (10_000, 30_000, 100_000, 300_000, 1_000_000)
    cpu = {m: [] for m in methods}
    wall = {m: [] for m in methods}
    print(f"{'n':>9} | " + " | ".join(f"{m:>33}" for m in methods) + " | cpu barrier/primal-dual")
    for n in ns:
        ds = datasets.gaussian(n, 20, 1.0, seed=0)
        p = SoftMarginPrimal(ds.X, ds.y, C=1.0)
        cells = []
        for m in methods:
            r = _run("barrier", p, tol=1e-6, method=m, trace=False)
            cpu[m].append(r.info["cpu_time"])
            wall[m].append(r.solve_time)
            ok = "" if r.status.value == "optimal" else f" {r.status.value}"
            times = f"{r.solve_time:8.3f} {r.info['cpu_time']:8.3f}"
            cells.append(f"{r.iterations:4d} {r.rel_gap:8.1e} {times}{ok}")
        ratio = cpu["barrier"][-1] / cpu["primal-dual"][-1]
        print(f"{n:9d} | " + " | ".join(f"{c:>33}" for c in cells) + f" | {ratio:5.2f}")
    for m in methods:
        a, _ = np.polyfit(np.log(ns), np.log(cpu[m]), 1)
        b, _ = np.polyfit(np.log(ns), np.log(wall[m]), 1)
        print(
            f"fitted exponent, {m}: cpu time ∝ n^{a:.2f}, wall time ∝ n^{b:.2f}, "
            f"n = {ns[0]} … {ns[-1]}"
        )

    print("\n    side by side at n = 20 000, d = 50, sep = 1, C = 1 (hinge, free bias), gap 1e-8")
    ds = datasets.load("gaussian:n=20000,d=50,sep=1,seed=0")
    p = SoftMarginPrimal(ds.X, ds.y, C=1.0)
    runs = {m: _run("barrier", p, tol=1e-8, method=m) for m in methods}
    rc = _run("clarabel", p)
    own = rc.info["clarabel_solve_time"]
    cc = rc.info["cpu_time"]
    print(
        f"{'clarabel':>11}: {own:7.3f} s own solve time ({rc.solve_time:.3f} s with the QP export; "
        f"cpu {cc:.3f} s), {rc.iterations} IP iterations, rel gap {rc.rel_gap:.1e}"
    )
    for m, r in runs.items():
        cb = r.info["cpu_time"]
        agree = abs(r.primal - rc.primal) / max(1.0, abs(rc.primal))
        print(
            f"{m:>11}: {r.solve_time:7.3f} s (cpu {cb:.3f} s), {r.iterations} Newton steps, "
            f"rel gap {r.rel_gap:.1e}; clarabel/{m}: {own / r.solve_time:.1f}x (own solve), "
            f"{rc.solve_time / r.solve_time:.1f}x (with export), {cc / cb:.1f}x (cpu); "
            f"objectives agree to {agree:.1e}"
        )


def part_c(quick: bool) -> None:
    from svmbench.problems import KernelDual, datasets

    print("\n(c) RBF dual (gamma = 1/d, d = 20, sep = 1, C = 1, free bias), gap 1e-8")
    print("    wall clock solve_time (cpu seconds of the call) [Newton steps / IP iterations]")
    print(
        f"{'n':>6} | {'barrier':>24} | {'primal-dual':>24} | {'clarabel':>24} | "
        f"{'osqp':>17} | objective agreement with clarabel"
    )
    ratios = []
    for n in (500, 1000, 2000):
        ds = datasets.gaussian(n, 20, 1.0, seed=0)
        p = KernelDual(ds.X, ds.y, C=1.0, kernel="rbf", gamma=1 / 20)
        p.gram  # the Gram matrix is the problem's, computed once for everyone  # noqa: B018
        rb = _run("barrier", p, tol=1e-8, method="barrier")
        rp = _run("barrier", p, tol=1e-8, method="primal-dual")
        rc = _run("clarabel", p)
        ro = _run("osqp", p)
        agree = [abs(r.primal - rc.primal) / max(1.0, abs(rc.primal)) for r in (rb, rp)]
        cells = [
            f"{r.solve_time:7.3f} ({r.info['cpu_time']:6.3f}) [{r.iterations:3d}]"
            for r in (rb, rp, rc)
        ]
        print(
            f"{n:6d} | " + " | ".join(f"{c:>24}" for c in cells) + " | "
            f"{ro.solve_time:7.3f} ({ro.info['cpu_time']:6.3f}) | barrier {agree[0]:.1e}, "
            f"primal-dual {agree[1]:.1e} (gaps {rb.rel_gap:.1e}, {rp.rel_gap:.1e}, "
            f"osqp {ro.status.value} {ro.rel_gap:.1e})"
        )
        ratios.append((n, rb, rp, rc, ro))
    print("    ratios (other / primal-dual; > 1: primal-dual faster), wall and cpu:")
    for n, rb, rp, rc, ro in ratios:
        cp = rp.info["cpu_time"]
        parts = [
            f"{name} {r.solve_time / rp.solve_time:6.2f}, {r.info['cpu_time'] / cp:6.2f}"
            for name, r in (("clarabel", rc), ("barrier", rb), ("osqp", ro))
        ]
        own = rc.info["clarabel_solve_time"]  # Clarabel's own clock, without the QP export
        parts.append(f"clarabel own solve {own / rp.solve_time:6.2f}")
        print(f"{n:6d} | " + " | ".join(parts))
    if quick:
        return
    n = 50_000
    ds = datasets.gaussian(n, 20, 1.0, seed=0)
    p = KernelDual(ds.X, ds.y, C=1.0, kernel="rbf", gamma=1 / 20)
    for method in ("barrier", "primal-dual"):
        r = _run("barrier", p, tol=1e-8, kernel_approximation="nystrom", rank=200, method=method)
        print(
            f"nystrom r=200, n={n}, {method}: {r.solve_time:.2f} s (cpu {r.info['cpu_time']:.2f} "
            f"s; factor {r.info['factor_time']:.2f} s), {r.iterations} Newton steps, rel gap "
            f"{r.rel_gap:.1e} ({r.status.value}; gap of the approximate kernel)"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and grid")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--parts", default="abc", help="which parts to run (default abc)")
    args = parser.parse_args(argv)
    # Load every BLAS first: threadpoolctl limits only the libraries already loaded (scipy ships
    # its own OpenBLAS, loaded with scipy.linalg).
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    from svmbench.solvers import registry

    registry.names()
    registry.get("barrier").warm_up()  # JIT compilation (or cache load) is never solve time

    start = time.perf_counter()
    with threadpool_limits(limits=args.threads):
        print(summary("clarabel", "osqp", note=f"BLAS threads: {args.threads}"))
        if "a" in args.parts:
            part_a(args.quick)
        if "b" in args.parts:
            part_b(args.quick)
        if "c" in args.parts:
            part_c(args.quick)
    print(f"\ntotal {time.perf_counter() - start:.0f} s; load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
