"""Our SMO (``smo``) on sparse rows against LIBSVM and scikit-learn's SVC, side by side.

Run ``python -m svmbench.benchmarks.studies.bench_smo_sparse [--n 5000 --d 10000 --density 0.005]``.
The case is a :class:`~problems.KernelDual` (hinge, free bias, ``C = 1``, RBF) on
``datasets.gaussian(n, d, sep, seed=0, density=ρ)`` with every row scaled to unit norm (as tf-idf
rows are), so that ``‖x − x'‖² = 2 − 2 x·x' ∈ [0, 4]``; ``γ = 1`` by default (the sparse rows are
nearly orthogonal: ``K ≈ e^{-2}`` off the diagonal, about what scikit-learn's ``gamma="scale"``
gives here). X stays CSR throughout: every solver gets the same CSR matrix (LIBSVM and scikit-learn
take sparse rows natively; smo keeps them sparse by its own rule, ``solvers.smo.use_dense_rows``,
and says so in ``info["rows"]``).

Solvers, all single-threaded: ``libsvm`` and ``sklearn_svc`` (the adapters of
:mod:`svmbench.solvers.anchors`, ``-e 1e-3``, 200 MB cache, shrinking; ``OMP_NUM_THREADS=1`` is set
before LIBSVM's OpenMP library is first loaded); ``smo`` with one Numba thread (``workqueue`` layer:
see :mod:`benchmarks.studies.bench_smo_vs_libsvm` for why), once with LIBSVM's rule
(``stop_rule="native"``, ``eps = 1e-3``) and once to a certified relative gap of 1e-6 (the default).
One untimed warm-up run each (JIT compilation, imports, page faults), then ``--repeats`` rounds in
which every solver runs once (interleaved, so that a change of the machine's load hits all alike:
:func:`~benchmarks.harness.evaluation.interleaved`); the table gives the median ``solve_time`` (for
an anchor: its training call; for smo: its set-up, CSR transposition included, and its iterations)
and the certified relative gap of our problem at each model. The first printed line is
:func:`~benchmarks.harness.environment.summary`.

Not a suite: the rows scaled to unit norm are no data spec, and ``smo`` runs under two stopping
rules beside each other; ``svmbench compare --problem kernel_dual --solvers smo,libsvm,...`` is
the same side-by-side table on any data spec.
"""

from __future__ import annotations

import argparse
import os
import warnings

import numba
import numpy as np
from scipy import sparse

from svmbench.benchmarks.harness.environment import summary
from svmbench.benchmarks.harness.evaluation import interleaved, median_solve_time
from svmbench.problems import KernelDual, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning

CACHE_MB = 200


def make_problem(n: int, d: int, density: float, sep: float, gamma: float) -> KernelDual:
    ds = datasets.gaussian(n, d, sep, seed=0, density=density)
    X = sparse.csr_matrix(ds.X)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0.0] = 1.0
    X = sparse.diags(1.0 / norms) @ X
    return KernelDual(sparse.csr_matrix(X), ds.y, C=1.0, kernel="rbf", gamma=gamma)


def solvers() -> dict:
    return {
        "libsvm (-e 1e-3)": registry.get("libsvm", eps=1e-3, cache_mb=CACHE_MB, n_threads=1),
        "sklearn SVC (tol 1e-3)": registry.get("sklearn_svc", eps=1e-3, cache_mb=CACHE_MB),
        "smo native (eps 1e-3)": registry.get(
            "smo", stop_rule="native", eps=1e-3, cache_mb=CACHE_MB, trace=False
        ),
        "smo gap 1e-6": registry.get("smo", tol=1e-6, cache_mb=CACHE_MB, trace=False),
    }


def run(problem: KernelDual, repeats: int) -> list[dict]:
    runners = solvers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        runs = {
            name: (lambda solver=solver: solver.solve(problem)) for name, solver in runners.items()
        }
        results = interleaved(runs, repeats, warm_up=True)
    rows = []
    for name, done in results.items():
        r = done[-1]
        rows.append(
            {
                "solver": name,
                "time": median_solve_time(done),
                "times": [x.solve_time for x in done],
                "status": r.status.value,
                "rel_gap": r.rel_gap,
                "primal": r.primal,
                "dual": r.dual,
                "iterations": r.iterations,
                "n_sv": int(np.count_nonzero(r.alpha)),
                "rows": r.info.get("rows", "CSR (native)"),
            }
        )
    return rows


def format_rows(rows: list[dict]) -> str:
    lines = [
        "| solver | median s (runs) | status | certified rel gap | primal | dual | iterations "
        "| SVs | rows |",
        "|" + "---|" * 9,
    ]
    for r in rows:
        runs = ", ".join(f"{t:.2f}" for t in r["times"])
        lines.append(
            f"| {r['solver']} | {r['time']:.2f} ({runs}) | {r['status']} | {r['rel_gap']:.1e} "
            f"| {r['primal']:.6f} | {r['dual']:.6f} | {r['iterations']} | {r['n_sv']} "
            f"| {r['rows']} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=10_000)
    parser.add_argument("--density", type=float, default=0.005)
    parser.add_argument("--sep", type=float, default=100.0)
    parser.add_argument("--gamma", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    # read by libgomp when LIBSVM's library is first loaded (the anchor imports it lazily)
    os.environ["OMP_NUM_THREADS"] = "1"
    numba.config.THREADING_LAYER = "workqueue"  # before the first parallel launch
    numba.set_num_threads(1)
    problem = make_problem(args.n, args.d, args.density, args.sep, args.gamma)
    note = f"Numba layer {numba.config.THREADING_LAYER}; LIBSVM with OMP_NUM_THREADS=1"
    print(summary("libsvm-official", "scikit-learn", note=note), flush=True)
    nnz = problem.X.nnz
    print(
        f"n={args.n}, d={args.d}, nnz={nnz} (density {nnz / args.n / args.d:.4f}), unit rows, "
        f"RBF gamma={problem.gamma:g}, C=1, free bias",
        flush=True,
    )
    print(format_rows(run(problem, args.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
