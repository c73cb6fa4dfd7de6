"""The row layer's costs, side by side: the barrier's row passes per iteration, and compile time.

``python -m svmbench.benchmarks.studies.bench_rows_compile passes [--rev REV] [--reps N]``
    Per-iteration time of the primal-dual passes of :mod:`solvers._jit.barrier` (affine and
    corrector, hinge, one extra column E): soft-margin rows dense n = 20 000, d = 50 and CSR
    n = 20 000, d = 2000, density 1 %; the passes of this tree against the dense/CSR twins of
    ``REV`` (default ``06086e4~1``, read with ``git show`` into a temporary module), interleaved,
    medians of ``--reps`` runs of 10 iterations and the median of the pairs' ratios; plus the
    largest difference of their outputs (0: the same bits).
``python -m svmbench.benchmarks.studies.bench_rows_compile compile NAME=PYTHON ... [--reps N]``
    First-call compile time of the warm-ups of dcd, cs_dcd, pegasos, perceptron and barrier:
    each run a fresh process of the given interpreter (one per source tree, e.g. a virtual
    environment with an editable install of an older commit) on an empty ``NUMBA_CACHE_DIR``,
    the trees interleaved; medians and ratios to the first. ``--solvers`` keeps some of them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from svmbench.benchmarks.studies._old_code import import_source, source_at

SOLVERS = ("dcd", "cs_dcd", "pegasos", "perceptron", "barrier")


def passes(rev: str, reps: int) -> None:
    from scipy import sparse

    from svmbench.solvers._jit import barrier as new
    from svmbench.solvers._jit.rows import as_rows

    with tempfile.TemporaryDirectory() as tmp:
        old = import_source(source_at(rev, "solvers/_jit/barrier.py"), "old_barrier_passes", tmp)
        for kind in ("dense", "csr"):
            rng = np.random.default_rng(0)
            n = 20_000
            if kind == "dense":
                X = rng.standard_normal((n, 50))
            else:
                X = sparse.random(
                    n, 2000, density=0.01, format="csr", random_state=rng,
                    data_rvs=rng.standard_normal,
                )  # fmt: skip
            d = X.shape[1]
            E = np.ones((n, 1))
            y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
            C, m = np.ones(n), rng.standard_normal(n)
            s, lam, xi, nu = (rng.uniform(0.1, 2.0, n) for _ in range(4))
            dz = 0.1 * rng.standard_normal(d + 1)
            rows = as_rows(X)
            state = (y, C, m, s, lam, xi, nu)
            work = (np.empty(n), np.empty(n), np.empty(d + 1), np.empty((5, 256)))

            def run_old(rows=rows, state=state, dz=dz, E=E, work=work):
                dm_aff, dm, acc, buf = work
                if isinstance(rows, tuple):
                    a = old.ppd_affine_csr(0, *rows, E, *state, dz, dm_aff, acc, buf)
                    c = old.ppd_corrector_csr(0, *rows, E, *state, dm_aff, 0.1, dz, dm, acc, buf)
                else:
                    a = old.ppd_affine_dense(0, rows, E, *state, dz, dm_aff, acc, buf)
                    c = old.ppd_corrector_dense(0, rows, E, *state, dm_aff, 0.1, dz, dm, acc, buf)
                return a, c, dm_aff.copy(), dm.copy(), acc.copy()

            def run_new(rows=rows, state=state, dz=dz, E=E, work=work):
                dm_aff, dm, acc, buf = work
                hinge = new.PASSES[new.HINGE]
                a = hinge.affine(rows, E, *state, dz, dm_aff, acc, buf)
                c = hinge.corrector(rows, E, *state, dm_aff, 0.1, dz, dm, acc, buf)
                return a, c, dm_aff.copy(), dm.copy(), acc.copy()

            ref, got = run_old(), run_new()
            diff = max(float(np.max(np.abs(u - v))) for u, v in zip(ref[2:], got[2:]))
            times = {"old": [], "new": []}
            for r in range(reps):
                order = (("old", run_old), ("new", run_new))
                for name, run in order if r % 2 == 0 else order[::-1]:
                    start = time.perf_counter()
                    for _ in range(10):
                        run()
                    times[name].append((time.perf_counter() - start) / 10)
            to, tn = np.array(times["old"]), np.array(times["new"])
            print(
                f"{kind:5s} n={n} d={d}: old {np.median(to) * 1e3:.2f} ms, "
                f"new {np.median(tn) * 1e3:.2f} ms, new/old {np.median(tn) / np.median(to):.3f} "
                f"(pairs {np.median(tn / to):.3f}), max |diff| {diff:.1e}",
                flush=True,
            )


_CHILD = """
import json, sys, time
import svmbench.solvers._jit
from svmbench.solvers import registry
solver = registry.get(sys.argv[1])
start = time.perf_counter()
solver.warm_up()
print(json.dumps(time.perf_counter() - start))
"""


def compile_times(pythons: dict[str, str], reps: int, solvers=SOLVERS) -> None:
    names = list(pythons)
    res = {(k, s): [] for k in names for s in solvers}
    for r in range(reps):
        for solver in solvers:
            for name in names if r % 2 == 0 else names[::-1]:
                with tempfile.TemporaryDirectory() as cache:
                    env = dict(os.environ, NUMBA_CACHE_DIR=cache, OPENBLAS_NUM_THREADS="1")
                    out = subprocess.run(
                        [pythons[name], "-c", _CHILD, solver],
                        env=env,
                        cwd=cache,
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                res[(name, solver)].append(json.loads(out.stdout.splitlines()[-1]))
    print(f"{'solver':11s}" + "".join(f"{k:>10s}" for k in names) + f"   ratio to {names[0]}")
    for solver in solvers:
        med = [float(np.median(res[(k, solver)])) for k in names]
        ratios = "  ".join(f"{m / med[0]:.2f}" for m in med[1:])
        print(f"{solver:11s}" + "".join(f"{m:10.2f}" for m in med) + f"   {ratios}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("passes")
    p.add_argument("--rev", default="06086e4~1")
    p.add_argument("--reps", type=int, default=9)
    c = sub.add_parser("compile")
    c.add_argument("pythons", nargs="+", help="NAME=INTERPRETER, one per source tree")
    c.add_argument("--reps", type=int, default=3)
    c.add_argument("--solvers", nargs="+", choices=SOLVERS, default=SOLVERS, help="default: all")
    args = parser.parse_args(argv)
    if args.what == "passes":
        passes(args.rev, args.reps)
    else:
        compile_times(dict(a.split("=", 1) for a in args.pythons), args.reps, args.solvers)


if __name__ == "__main__":
    main(sys.argv[1:])
