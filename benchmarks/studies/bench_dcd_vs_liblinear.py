"""Our dual coordinate descent (``dcd``) against LIBLINEAR's, side by side in one run.

Run ``python -m svmbench.benchmarks.studies.bench_dcd_vs_liblinear [--quick]``. Every case is a
:class:`~problems.SoftMarginPrimal` with ``bias="regularized"``, ``bias_scale=1`` on
``datasets.gaussian(n, d, sep, seed=0)`` (or its CSR variant ``d=10000, density=0.01``), and both
solvers are judged by that problem.

What is measured, per case (all single-threaded: BLAS is limited to one thread, LIBLINEAR and the
dcd kernels are serial):

- LIBLINEAR (official Python binding) through the ``liblinear`` anchor
  (:class:`~svmbench.solvers.anchors.liblinear.LiblinearAnchor`): ``-s 3`` (hinge) or ``-s 1``
  (squared hinge), ``-B 1``, ``-c C``, its default ``eps = 0.1`` and its fixed epoch cap (300 in
  liblinear-official 2.50; a ``*`` in the table marks a run that stopped there, status ``max_iter``;
  with ``-s 1`` LIBLINEAR then switches to its primal Newton solver ``-s 2`` and finishes with it,
  marked ``†``). One warm-up run, then six timed runs; the time is their median ``solve_time`` (the
  anchor's clock times the ``train`` call only). Its epoch count is the anchor's ``iterations`` (the
  ``#iter = N`` that LIBLINEAR prints, captured instead of printed). ``P_LL`` is our problem's
  primal objective at the model of the median of the first three runs (the anchor maps LIBLINEAR's
  ``w, b`` to our labels); LIBLINEAR's order is drawn with ``rand()``, which the anchor seeds: run
  ``k`` gets seed ``k``, so its runs differ slightly, as unseeded runs would.
- dcd with LIBLINEAR's rule (``stop_rule="native", eps=0.1``, ``trace=False``): the median run of
  three. ``epoch cost = time / epochs`` on both sides, both including their O(nnz) set-up
  (``Q_ii``, ``w``) and their shrunk epochs.
- dcd to ``P_LL``: dcd in its default configuration (gap rule, checks spaced by counted work, seed
  0). A traced run (untimed) finds the first epoch ``k`` whose certified primal is ≤ ``P_LL``; the
  time is the median ``solve_time`` of three runs cut at ``max_iter=k`` without trace (the same
  iterates: the seed fixes them), so that the trace certificates neither count nor pollute the
  caches; the stopping certificates are counted. These runs use ``tol=1e-14`` so that the gap rule
  cannot stop them first when ``P_LL`` lies within 1e-6 of the optimum (the iterates do not depend
  on ``tol``).
- dcd to a certified relative gap of 1e-6 (``trace=False``), under a time limit (``>`` marks it).
- One pass over ``X``: the median time of ``X @ w`` (NumPy/BLAS gemv for dense data, SciPy's CSR
  mat-vec for sparse data) and the bandwidth ``bytes(X) / time`` it reaches (cache bandwidth when
  ``X`` fits in the cache); a full dcd epoch (no shrinking, the first 5 epochs from α = 0) is
  compared with it.

The runs of the two solvers are interleaved (LIBLINEAR, dcd, LIBLINEAR, dcd, ...:
:func:`~benchmarks.harness.evaluation.interleaved`) so that a change of load hits both sides alike.
The environment line is :func:`~benchmarks.harness.environment.summary`. ``svmbench run
dcd_liblinear`` runs the same pairs through the harness (dcd with both stopping rules beside the
``liblinear`` anchor, judged against the reference optimum); this study adds the time to LIBLINEAR's
objective and the cost of an epoch. Timings on a shared machine are noisy: compare ratios within one
run, not across runs.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from svmbench.benchmarks.harness.environment import summary
from svmbench.benchmarks.harness.evaluation import interleaved, median_solve_time
from svmbench.problems import SoftMarginPrimal, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import Status

REPEATS = 3


@dataclass(frozen=True)
class Case:
    n: int
    d: int
    sep: float
    C: float
    loss: str = "hinge"
    density: float | None = None

    @property
    def label(self) -> str:
        kind = f"csr{self.density:g}" if self.density else "dense"
        loss = "L1" if self.loss == "hinge" else "L2"
        return f"n={self.n:.0e} d={self.d} sep={self.sep:g} C={self.C:g} {loss} {kind}"


def grid(quick: bool, big: bool) -> list[Case]:
    """The cases: a handful with ``--quick``, else the full grid (n = 10⁶ only with ``--big``)."""
    if quick:
        return [
            Case(10_000, 20, 1, 1.0),
            Case(10_000, 20, 1, 1.0, "squared_hinge"),
            Case(10_000, 20, 1, 10.0),
            Case(10_000, 100, 4, 0.1),
            Case(100_000, 100, 4, 0.1),
            Case(10_000, 10_000, 1, 1.0, density=0.01),
        ]
    ns = [10_000, 100_000] + ([1_000_000] if big else [])
    cases = [
        Case(n, d, sep, C, loss)
        for n in ns
        for d in (20, 100)
        for sep in (1, 4)
        for C in (0.1, 1.0, 10.0)
        for loss in ("hinge", "squared_hinge")
    ]
    cases += [Case(n, 10_000, 1, C, "hinge", 0.01) for n in (10_000, 100_000) for C in (0.1, 1, 10)]
    return cases


# ---- LIBLINEAR ---------------------------------------------------------------------------------
def liblinear_run(problem, seed: int):
    """One ``train`` call through the anchor: its result (``solve_time``, ``iterations``, ``w``,
    ``b``, status ``max_iter`` at LIBLINEAR's epoch cap) and whether LIBLINEAR switched.

    ``switched``: LIBLINEAR's ``-s 1`` that reaches its dual epoch cap continues with the primal
    trust-region Newton method of ``-s 2`` (it prints "Switching to use -s 2").
    """
    result = registry.get("liblinear", seed=seed).solve(problem)
    return result, "Switching to use -s 2" in result.info["library_output"]


# ---- dcd -----------------------------------------------------------------------------------------
def dcd_solver(**options):
    from svmbench.solvers import registry

    return registry.get("dcd", **options)


def epochs_to_objective(problem, target: float, time_limit: float) -> int | None:
    """First epoch whose certified primal is ≤ ``target`` in dcd's default run (None if never).

    Found on a traced run (untimed); the time is then measured on clean runs of exactly that
    many epochs (same seed, same iterates), free of the trace certificates' cache pollution.
    """
    # tol is tiny so that the gap rule never stops the run first: P_LL may lie within 1e-6 of P*
    solver = dcd_solver(tol=1e-14, trace=True, time_limit=time_limit)
    result = solver.solve(problem, callback=lambda c: c.primal <= target)
    for c in result.trace:
        if c.primal <= target:
            return c.iteration
    return None


def time_for_epochs(problem, epochs: int | None) -> float:
    """``solve_time`` of dcd's default run (gap rule, checks by counted work) cut at ``epochs``.

    ``tol`` only decides when the gap rule stops; the iterates do not depend on it.
    """
    if epochs is None:
        return math.nan
    return dcd_solver(tol=1e-14, trace=False, max_iter=epochs).solve(problem).solve_time


def pass_time(X, repeats: int = 7) -> tuple[float, int]:
    """Median seconds of one mat-vec ``X @ w`` and the bytes of ``X`` it streams."""
    w = np.ones(X.shape[1])
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        X @ w
        times.append(time.perf_counter() - t0)
    if sparse.issparse(X):
        nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    else:
        nbytes = X.nbytes
    return statistics.median(times), nbytes


def measure(case: Case, gap_time_limit: float) -> dict:
    ds = datasets.gaussian(case.n, case.d, case.sep, seed=0, density=case.density)
    problem = SoftMarginPrimal(ds.X, ds.y, C=case.C, loss=case.loss, bias="regularized")
    row: dict = {"case": case.label}

    native = dcd_solver(stop_rule="native", trace=False)
    full = dcd_solver(stop_rule="native", eps=1e-300, shrinking=False, max_iter=5, trace=False)
    seeds = iter(range(1_000_000))
    liblinear_run(problem, next(seeds))  # warm-ups: compilation (untimed anyway) and caches
    native.solve(problem)
    # Phase A: LIBLINEAR, dcd with LIBLINEAR's rule, dcd full epochs. Phase B: LIBLINEAR again,
    # dcd to the objective of LIBLINEAR's median phase-A run.
    a = interleaved(
        {
            "lib": lambda: liblinear_run(problem, next(seeds)),
            "native": lambda: native.solve(problem),
            "full": lambda: full.solve(problem),
        },
        REPEATS,
    )
    lib_runs = a["lib"]
    median_run, switched = sorted(lib_runs, key=lambda r: r[0].solve_time)[len(lib_runs) // 2]
    row["lib_P"] = median_run.primal
    row["lib_cap"] = median_run.status is Status.MAX_ITER
    row["lib_switched"] = switched
    row["lib_epochs"] = median_run.iterations
    k_star = epochs_to_objective(problem, row["lib_P"], gap_time_limit)
    b = interleaved(
        {
            "lib": lambda: liblinear_run(problem, next(seeds)),
            "hit": lambda: time_for_epochs(problem, k_star),
        },
        REPEATS,
    )
    lib = [r for r, _ in lib_runs + b["lib"]]
    objectives = [r.primal for r in lib]
    row["lib_P_spread"] = (max(objectives) - min(objectives)) / abs(row["lib_P"])
    row["lib_time"] = median_solve_time(lib)
    row["lib_epoch"] = statistics.median(r.solve_time / r.iterations for r in lib)
    nat_runs = sorted(a["native"], key=lambda r: r.solve_time)
    row["dcd_native_time"] = nat_runs[1].solve_time
    row["dcd_native_epochs"] = nat_runs[1].iterations
    row["dcd_native_P"] = nat_runs[1].primal
    row["dcd_epoch"] = statistics.median(r.solve_time / r.iterations for r in nat_runs)
    row["dcd_full_epoch"] = statistics.median(r.solve_time / r.iterations for r in a["full"])
    row["dcd_to_lib_P"] = statistics.median(b["hit"])
    row["dcd_to_lib_P_epochs"] = math.nan if k_star is None else k_star

    gap = dcd_solver(tol=1e-6, trace=False, time_limit=gap_time_limit).solve(problem)
    row["dcd_gap_time"] = gap.solve_time
    row["dcd_gap_epochs"] = gap.iterations
    row["dcd_gap_status"] = gap.status.value
    row["dcd_gap_rel"] = gap.rel_gap

    t_pass, nbytes = pass_time(problem.X)
    row["pass_time"] = t_pass
    row["bandwidth_GBs"] = nbytes / t_pass / 1e9
    return row


# ---- report --------------------------------------------------------------------------------------
COLUMNS = [
    ("case", "case", "s"),
    ("LL time s", "lib_time", ".3f"),
    ("LL ep", "lib_epochs", "d"),
    ("dcd→P_LL s", "dcd_to_lib_P", ".3f"),
    ("ep", "dcd_to_lib_P_epochs", "d"),
    ("ratio", "ratio_time", ".2f"),
    ("LL ms/ep", "lib_epoch_ms", ".3f"),
    ("dcd ms/ep", "dcd_epoch_ms", ".3f"),
    ("ratio", "ratio_epoch", ".2f"),
    ("dcd nat s", "dcd_native_time", ".3f"),
    ("dcd nat ep", "dcd_native_epochs", "d"),
    ("(P_nat−P_LL)/P_LL", "native_vs_lib", "+.1e"),
    ("gap1e-6 s", "dcd_gap_time", ".3f"),
    ("ep", "dcd_gap_epochs", "d"),
    ("pass ms", "pass_ms", ".3f"),
    ("full ep/pass", "full_over_pass", ".2f"),
    ("GB/s", "bandwidth_GBs", ".1f"),
]


def derived(row: dict) -> dict:
    out = dict(row)
    out["ratio_time"] = row["dcd_to_lib_P"] / row["lib_time"]
    out["lib_epoch_ms"] = 1e3 * row["lib_epoch"]
    out["dcd_epoch_ms"] = 1e3 * row["dcd_epoch"]
    out["ratio_epoch"] = row["dcd_epoch"] / row["lib_epoch"]
    out["native_vs_lib"] = (row["dcd_native_P"] - row["lib_P"]) / abs(row["lib_P"])
    out["pass_ms"] = 1e3 * row["pass_time"]
    out["full_over_pass"] = row["dcd_full_epoch"] / row["pass_time"]
    return out


def format_row(row: dict) -> list[str]:
    cells = []
    for _, key, spec in COLUMNS:
        value = row[key]
        if key == "lib_epochs" and row.get("lib_cap"):
            cells.append(f"{value}*" + ("†" if row.get("lib_switched") else ""))
        elif key == "dcd_gap_time" and row["dcd_gap_status"] != "optimal":
            cells.append(f">{value:.1f} ({row['dcd_gap_status']})")
        elif isinstance(value, float) and math.isnan(value):
            cells.append("-")
        else:
            cells.append(format(value, spec))
    return cells


def print_table(rows: list[dict], out=sys.stdout) -> None:
    header = [name for name, _, _ in COLUMNS]
    body = [format_row(derived(r)) for r in rows]
    widths = [max([len(h), *(len(b[i]) for b in body)]) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)), file=out)
    for b in body:
        print("  ".join(c.rjust(w) for c, w in zip(b, widths)), file=out)
    ratios_t = [derived(r)["ratio_time"] for r in rows if not math.isnan(r["dcd_to_lib_P"])]
    ratios_e = [derived(r)["ratio_epoch"] for r in rows]
    if ratios_t:
        print(
            f"\nmedian ratio dcd time to P_LL / LIBLINEAR time: {statistics.median(ratios_t):.2f} "
            f"(max {max(ratios_t):.2f}); median epoch-cost ratio dcd/LIBLINEAR: "
            f"{statistics.median(ratios_e):.2f} (max {max(ratios_e):.2f})",
            file=out,
        )
    print("* LIBLINEAR stopped at its epoch cap, not on eps.", file=out)
    print(
        "† ... then switched to its primal Newton solver (-s 2): its time includes that phase, so "
        "its ms/ep is not a pure dual epoch.",
        file=out,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a handful of cases (~2 minutes)")
    parser.add_argument("--big", action="store_true", help="add n = 10^6 to the full grid")
    parser.add_argument(
        "--match",
        action="append",
        default=None,
        help="keep only the cases whose label contains this text (repeatable), e.g. 'n=1e+05 d=20'",
    )
    parser.add_argument(
        "--gap-time-limit",
        type=float,
        default=None,
        help="seconds per dcd run (default 5 with --quick, else 60)",
    )
    args = parser.parse_args(argv)
    limit = args.gap_time_limit or (5.0 if args.quick else 60.0)

    from threadpoolctl import threadpool_limits

    from svmbench.solvers.base import ConvergenceWarning

    warnings.simplefilter("ignore", ConvergenceWarning)
    rows = []
    with threadpool_limits(1):
        note = "single-threaded (BLAS limited to 1 thread)"
        print(summary("liblinear-official", note=note), flush=True)
        compile_s = dcd_solver().warm_up()
        print(f"dcd JIT warm-up (from the on-disk cache if present): {compile_s:.2f} s", flush=True)
        cases = grid(args.quick, args.big)
        if args.match:
            cases = [c for c in cases if any(m in c.label for m in args.match)]
        for case in cases:
            t0 = time.perf_counter()
            row = measure(case, limit)
            rows.append(row)
            d = derived(row)
            print(
                f"{case.label}: LL {row['lib_time']:.3f}s, dcd→P_LL {row['dcd_to_lib_P']:.3f}s "
                f"({d['ratio_time']:.2f}×), epoch {d['ratio_epoch']:.2f}× "
                f"[{time.perf_counter() - t0:.0f}s wall]",
                flush=True,
            )
    print()
    print_table(rows)
    return 0


# ---- pytest-benchmark: the jitted epoch alone ----------------------------------------------------
# ``python -m pytest benchmarks/studies/bench_dcd_vs_liblinear.py --benchmark-only`` (never part
# of the test command): one full epoch (no shrinking) from a fixed state, dense and CSR.
def _kernel_args(n: int, d: int, density: float | None):
    from svmbench.solvers._jit import dcd as jit
    from svmbench.solvers._jit.rows import as_rows

    ds = datasets.gaussian(n, d, 1.0, seed=0, density=density)
    X, y = ds.X, ds.y
    rows = as_rows(X)
    qd = jit.row_sq_norms(rows) + 1.0

    def run():
        alpha, w, wb = np.zeros(n), np.zeros(d), np.zeros(1)
        index = np.arange(n, dtype=np.int64)
        rng_state = np.array([1], dtype=np.uint64)
        args = (y, np.ones(n), np.zeros(n), qd, 1.0, alpha, w, wb, index, n, np.inf, -np.inf)
        return jit.dcd_epoch(rows, *args, rng_state)

    return run


def test_bench_epoch_dense(benchmark):
    run = _kernel_args(20_000, 50, None)
    run()  # compile
    benchmark(run)


def test_bench_epoch_csr(benchmark):
    run = _kernel_args(20_000, 10_000, 0.005)
    run()
    benchmark(run)


if __name__ == "__main__":
    raise SystemExit(main())
