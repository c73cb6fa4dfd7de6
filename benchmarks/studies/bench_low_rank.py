"""The certified low-rank kernel SVM (``low_rank``): accuracy against exact SMO, the bracket on the
exact problem, and time and memory at n = 10⁶, past the reach of the exact solvers.

Run ``python -m svmbench.benchmarks.studies.bench_low_rank [--part accuracy|bracket|big] [--quick]``
(each part in its own process, so that its peak memory is its own). RBF kernel, hinge, ``C = 1``,
the same C, γ and bias on both sides; ``low_rank`` with its default rank rule (Nyström, doubling
r until the sampled relative trace residual ``tr(K − FFᵀ)/tr(K)`` ≤ 10⁻³, r ≤ 1024 and F within
4 GB of float64).

- ``accuracy``: n = 30 000 training points (``--quick``: 5 000) of ``circles`` and of ``xor``
  (5 % label noise), γ ``"scale"``, and the binary digits (0-4 against 5-9, the one real set
  large enough that scikit-learn ships: 1 797 points, 30 % held out; none of 30 000 points is
  available offline); a held-out test set of 10 000 points (the generator's next points).
  ``low_rank`` (tol 1e-4) against ``smo_batch`` (tol 1e-3, certified on the exact problem),
  bias ``"regularized"`` on both (dcd's bias): test accuracy, time, r, and the bracket with
  ``smo_batch``'s certified dual (a lower bound of P* too) beside it.
- ``bracket``: ``gaussian:n=100000,d=20,sep=1`` (``--quick``: 20 000), γ = 1/d, and
  ``circles:n=100000``, γ ``"scale"``: the bracket ``[D(α), P(f)]`` on the exact problem (the
  lower bound is O(n·n_SV·d), affordable here).
- ``big``: ``gaussian:n=1000000,d=20,sep=1`` (``--quick``: 200 000), γ = 1/d, tol 1e-3: time,
  peak resident memory of the solve (:class:`~benchmarks.harness.environment.PeakMemory`) and of the
  process (``getrusage``), the approximate problem's certified gap and the upper bound.

Measured (one run each, 2-core AMD EPYC shared with other jobs, load average 2.5-6):

- accuracy, n = 30 000: circles r = 64, test accuracy 0.9934 against smo_batch's 0.9934,
  1.7 s against 2.1 s, bracket width 4.7e-5; xor r = 64, 0.9467 against 0.9469 (−0.02 points),
  1.0 s against 7.9 s, width 3.3e-4; digits (1 257 training points) r = 1024, 0.9815 both,
  width 1.0e-2.
- bracket, n = 10⁵: gaussian d = 20 r = 1024 (the cap; residual trace 0.28),
  [55 898, 68 952], width 0.19, 53 s (the lower bound 30 s of it), peak 1.2 GB; circles r = 64,
  [1934.89, 1934.95], width 3.3e-5, 1.2 s. On the same gaussian at n = 20 000, where smo_batch
  certifies P* = 12 552.50 (1e-6), r = 1024 gives [12 032, 13 820]: the upper bound (the low-rank
  model) is the looser side, 10 % above P*, the lower 4 % below; r = 4096 gives [12 471, 13 241].
- n = 10⁶ gaussian d = 20: r = 536 (the memory cap of 4 GB; residual trace 0.36), 77 epochs,
  approximate problem certified to 4.5e-5 (tol 1e-3), upper bound 698 431 (5.4 s), 217 s wall
  (the factor 132 s), peak resident memory 5.1 GB (F is 4.3 GB).

One thread for BLAS and Numba (``OPENBLAS_NUM_THREADS=1`` before Python starts). The first printed
line is :func:`~benchmarks.harness.environment.summary`; timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
import warnings

import numba
import numpy as np

from svmbench.benchmarks.harness.environment import PeakMemory, summary
from svmbench.problems import KernelDual, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning

D = 20


def _solve(name: str, problem, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tic = time.perf_counter()
        result = registry.get(name, trace=False, **options).solve(problem)
        return result, time.perf_counter() - tic


def _bracket(info) -> str:
    lower = info["bracket_lower"]
    low = "—" if lower is None else f"{lower:.6g}"
    width = info["bracket_rel_width"]
    return f"[{low}, {info['bracket_upper']:.6g}] width {'—' if width is None else f'{width:.2e}'}"


def _sets(n: int):
    for name in ("circles", "xor"):
        noise = ",noise=0.05" if name == "xor" else ""
        ds = datasets.load(f"{name}:n={n + 10_000}{noise},seed=0")
        yield name, ds.X[:n], ds.y[:n], ds.X[n:], ds.y[n:]
    ds = datasets.prepare(datasets.load("digits:binary=true"), split=0.3, seed=0)
    yield "digits (real)", ds.X, ds.y, ds.X_test, ds.y_test


def part_accuracy(n: int) -> list[dict]:
    rows = []
    print("\n## accuracy: low_rank against smo_batch on held-out data (bias regularized, C = 1)")
    print(
        "| set | n | γ | r | low_rank acc | smo_batch acc | Δ (points) | low_rank s | smo_batch s "
        "| bracket | smo_batch dual |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, X, y, Xt, yt in _sets(n):
        problem = KernelDual(X, y, C=1.0, kernel="rbf", gamma="scale", bias="regularized")
        lr, t_lr = _solve("low_rank", problem, tol=1e-4)
        sb, t_sb = _solve("smo_batch", problem, tol=1e-3)
        acc_lr = float(np.mean(lr.model.predict(Xt) == yt))
        acc_sb = float(np.mean(sb.model.predict(Xt) == yt))
        row = dict(
            set=name,
            n=X.shape[0],
            gamma=problem.gamma,
            rank=lr.info["factor_rank"],
            acc_low_rank=acc_lr,
            acc_smo_batch=acc_sb,
            time_low_rank=t_lr,
            time_smo_batch=t_sb,
            status=(lr.status.value, sb.status.value),
            bracket=(lr.info["bracket_lower"], lr.info["bracket_upper"]),
            smo_batch_primal_dual=(sb.primal, sb.dual),
        )
        rows.append(row)
        print(
            f"| {name} | {X.shape[0]} | {problem.gamma:.3g} | {row['rank']} | {acc_lr:.4f} | "
            f"{acc_sb:.4f} | {100 * (acc_lr - acc_sb):+.2f} | {t_lr:.1f} | {t_sb:.1f} | "
            f"{_bracket(lr.info)} | {sb.dual:.6g} |",
            flush=True,
        )
    return rows


def _case(n: int, tol: float, data: str = "gaussian") -> dict:
    if data == "gaussian":
        ds = datasets.load(f"gaussian:n={n},d={D},sep=1,seed=0")
        gamma = 1.0 / D
    else:
        ds = datasets.load(f"circles:n={n},seed=0")
        gamma = "scale"
    problem = KernelDual(ds.X, ds.y, C=1.0, kernel="rbf", gamma=gamma, bias="regularized")
    del ds
    solver = registry.get("low_rank", tol=tol, trace=False)
    solver.warm_up()
    with PeakMemory() as peak, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tic = time.perf_counter()
        result = solver.solve(problem)
        wall = time.perf_counter() - tic
    info = result.info
    return dict(
        data=data,
        n=n,
        gamma=problem.gamma,
        status=result.status.value,
        rank=info["factor_rank"],
        rule=info["rank_rule"]["tried"],
        relative_trace_residual=info["relative_trace_residual"],
        approx_rel_gap=result.rel_gap,
        approx_primal=result.primal,
        approx_dual=result.dual,
        upper=info["bracket_upper"],
        lower=info["bracket_lower"],
        width=info["bracket_rel_width"],
        epochs=result.iterations,
        wall=wall,
        solve_time=result.solve_time,
        certify_time=result.certify_time,
        factor_time=info["factor_time"],
        upper_time=info["upper_bound_time"],
        lower_time=info.get("lower_bound_time"),
        peak_mb_solve=peak.peak,
        peak_mb_process=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )


def _print_case(title: str, row: dict) -> None:
    print(f"\n## {title}")
    for key, value in row.items():
        shown = f"{value:.6g}" if isinstance(value, float) else value
        print(f"- {key}: {shown}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("accuracy", "bracket", "big"), default="accuracy")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args(argv)
    numba.set_num_threads(1)
    print(summary(note="low_rank: Nyström, default rank rule; one Numba thread"))
    if args.part == "accuracy":
        rows = part_accuracy(5_000 if args.quick else 30_000)
    elif args.part == "bracket":
        n = 20_000 if args.quick else 100_000
        rows = [_case(n, 1e-4, "gaussian"), _case(n, 1e-4, "circles")]
        for row in rows:
            _print_case(f"bracket on the exact problem: {row['data']}", row)
    else:
        rows = [_case(200_000 if args.quick else 1_000_000, 1e-3)]
        _print_case("n = 10⁶: time and memory", rows[0])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
