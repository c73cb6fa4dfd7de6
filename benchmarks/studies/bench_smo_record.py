"""SMO's jitted loops before and after the record and the shared shrinking: time per update,
iterates and compile time, old and new code side by side.

The old loops are the file ``solvers/_jit/smo.py`` of a git revision (``--old``; by default the
one before the last commit that changed it; read by :mod:`~benchmarks.studies._old_code`, which
also finds a file at its former path), written to a temporary module and imported beside
the current one; both run on copies of the same arrays, made once by the current driver (the
fields of :class:`solvers._jit.smo.Core`, in the order of the loops' arguments; a loop taking the
record whole gets it whole). Each run is a cold solve of the native rule (``eps``, an empty
column cache, shrinking on) capped at ``--updates``; old and new alternate, and the table gives
the medians of ``--repeats`` runs of the time per update, wall and CPU, and their ratios
(new / old). The iterates must be the same: the same number of updates, the same α and G to the
bit.

``--compile``: the first calls of both loops (pairs and single, dense float64 and float32 rows,
CSR rows) in a fresh process with an empty ``NUMBA_CACHE_DIR``, ``--repeats`` processes each,
old and new alternating.

Run: ``OPENBLAS_NUM_THREADS=1 python -m svmbench.benchmarks.studies.bench_smo_record [--compile]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from svmbench.benchmarks.studies._old_code import import_source, last_change, source_at

#: The old loops' file, by its path in this tree (:mod:`._old_code` finds it at a revision).
SMO_JIT = "solvers/_jit/smo.py"

#: (label, dataset spec, kernel, C, bias): RBF at d = 20 in the two sizes and two values of C,
#: a linear kernel, CSR rows (1 % dense) and one single-variable case (no bias).
CASES = (
    ("rbf n=5000 C=1", "gaussian:n=5000,d=20,sep=1,seed=0", "rbf", 1.0, "free"),
    ("rbf n=5000 C=30", "gaussian:n=5000,d=20,sep=1,seed=0", "rbf", 30.0, "free"),
    ("rbf n=10000 C=1", "gaussian:n=10000,d=20,sep=1,seed=0", "rbf", 1.0, "free"),
    ("rbf n=10000 C=30", "gaussian:n=10000,d=20,sep=1,seed=0", "rbf", 30.0, "free"),
    ("linear n=5000 C=1", "gaussian:n=5000,d=20,sep=1,seed=0", "linear", 1.0, "free"),
    ("csr rbf n=5000 d=2000", "gaussian:n=5000,d=2000,sep=1,seed=0,density=0.01", "rbf", 1.0,
     "free"),
    ("rbf n=5000 C=1 no bias", "gaussian:n=5000,d=20,sep=1,seed=0", "rbf", 1.0, "none"),
)  # fmt: skip


def before_last_change() -> str:
    """The revision before the last commit that changed ``solvers/_jit/smo.py``."""
    last = last_change(SMO_JIT)
    if not last:
        raise SystemExit(f"git names no commit that changed {SMO_JIT} here: pass --old REV")
    return f"{last}^"


def load_old(rev: str):
    """The module ``solvers/_jit/smo.py`` of ``rev``, imported as ``smo_old``."""
    return import_source(source_at(rev, SMO_JIT), "smo_old", tempfile.mkdtemp(prefix="smo_old_"))


def make_core(spec: str, kernel: str, C: float, bias: str, *, dtype=None, storage="auto"):
    """The arrays of a cold solve, by the current driver (``pairs`` for a free bias)."""
    from svmbench.problems import KernelDual, datasets
    from svmbench.solvers import registry
    from svmbench.solvers.smo import cache_dtype

    data = datasets.load(spec)
    problem = KernelDual(data.X, data.y, C=C, kernel=kernel, bias=bias)
    smo = registry.get("smo")
    dtype = dtype or cache_dtype(problem, smo.cache_mb)
    n_slots = smo._n_slots(problem.n_samples, np.dtype(dtype).itemsize)
    state = smo._make_state(
        problem, None, pairs=bias == "free", n_slots=n_slots, dtype=dtype, storage=storage
    )
    return state.core, state.pairs


def fresh(core):
    """A copy of the record whose mutable arrays are new (the rows and the problem shared)."""
    shared = {"X", "XT", "sqn", "kint", "kflt", "y", "C", "QD", "all_idx"}

    def copy(v):
        return tuple(a.copy() for a in v) if isinstance(v, tuple) else v.copy()

    return type(core)(
        *(v if k in shared or v is None else copy(v) for k, v in core._asdict().items())
    )


def run(module, core, pairs, updates, eps):
    """``(wall seconds, CPU seconds, updates done)`` of one call of the loop (which takes the
    record whole, or its fields as arguments)."""
    loop = module.smo_pairs if pairs else module.smo_single
    count = loop.py_func.__code__.co_argcount
    whole = count == 4
    fields = tuple(core)[: count - 3]  # an older loop takes no linear term and no row map
    wall, cpu = time.perf_counter(), time.process_time()
    if hasattr(module, "run_loop"):  # a loop that leaves the reconstructions to its driver
        done, _ = module.run_loop(loop, updates, eps, True, core)
    else:
        done, _ = loop(updates, eps, True, core) if whole else loop(updates, eps, True, *fields)
    return time.perf_counter() - wall, time.process_time() - cpu, done


def timings(args) -> None:
    from svmbench.solvers._jit import smo as new

    old = load_old(args.old)
    print(f"numba threads {numba.get_num_threads()}, updates cap {args.updates}, eps {args.eps}")
    print("µs per update, medians: wall time, then CPU time (the machine may be shared)")
    print(
        f"{'case':24} {'updates':>7} {'old wall':>9} {'new wall':>9} {'ratio':>6} "
        f"{'old cpu':>9} {'new cpu':>9} {'ratio':>6}  same"
    )
    for label, spec, kernel, C, bias in CASES:
        if args.only and args.only not in label:
            continue
        core, pairs = make_core(spec, kernel, C, bias)
        for module in (old, new):  # compile, untimed
            run(module, fresh(core), pairs, 10, args.eps)
        times = {False: [], True: []}
        cpus = {False: [], True: []}
        ends = {}
        for r in range(args.repeats):
            order = (False, True) if r % 2 == 0 else (True, False)
            for is_new in order:
                c = fresh(core)
                t, cpu, done = run(new if is_new else old, c, pairs, args.updates, args.eps)
                times[is_new].append(t / done * 1e6)
                cpus[is_new].append(cpu / done * 1e6)
                ends[is_new] = (done, c.alpha, c.G)
        same = (
            ends[False][0] == ends[True][0]
            and np.array_equal(ends[False][1], ends[True][1])
            and np.array_equal(ends[False][2], ends[True][2])
        )
        o, n = statistics.median(times[False]), statistics.median(times[True])
        oc, nc = statistics.median(cpus[False]), statistics.median(cpus[True])
        print(
            f"{label:24} {ends[True][0]:7d} {o:9.2f} {n:9.2f} {n / o:6.3f} "
            f"{oc:9.2f} {nc:9.2f} {nc / oc:6.3f}  {same}"
        )
        if args.verbose:
            for is_new in (False, True):
                runs = " ".join(f"{v:.1f}" for v in times[is_new])
                print(f"    {'new' if is_new else 'old'} wall: {runs}")
        sys.stdout.flush()


def compile_once(which: str, rev: str) -> tuple[float, float]:
    """Wall and CPU seconds of the first calls of both loops (row kinds, cache precisions)."""
    from svmbench.solvers._jit import smo as new

    spec = "gaussian:n=40,d=3,sep=1,seed=0"
    variants = [
        (spec, np.float64, "dense", "free"),
        (spec, np.float64, "dense", "none"),
        (spec, np.float32, "dense", "free"),
        (spec, np.float32, "dense", "none"),
        (spec, np.float64, "csr", "free"),
        (spec, np.float64, "csr", "none"),
    ]
    cores = [make_core(s, "rbf", 1.0, b, dtype=d, storage=st) for s, d, st, b in variants]
    module = new if which == "new" else load_old(rev)
    wall, cpu = time.perf_counter(), time.process_time()
    for core, pairs in cores:
        run(module, core, pairs, 50, 1e-3)
    return time.perf_counter() - wall, time.process_time() - cpu


def compile_times(args) -> None:
    results = {"old": [], "new": []}
    cpus = {"old": [], "new": []}
    for r in range(args.repeats):
        for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "NUMBA_CACHE_DIR": cache}
                out = subprocess.run(
                    [sys.executable, "-m", "svmbench.benchmarks.studies.bench_smo_record",
                     "--compile-one", which, "--old", args.old],
                    env=env, check=True, capture_output=True, text=True,
                ).stdout  # fmt: skip
                wall, cpu = json.loads(out.strip().splitlines()[-1])["seconds"]
                results[which].append(wall)
                cpus[which].append(cpu)
    for name, table in (("wall", results), ("cpu", cpus)):
        for which, values in table.items():
            shown = ", ".join(f"{v:.1f}" for v in values)
            print(f"compile {name} {which}: {shown} s (median {statistics.median(values):.1f})")
        ratio = statistics.median(table["new"]) / statistics.median(table["old"])
        print(f"compile {name} new/old {ratio:.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--old",
        default="",
        help="git revision of the old loops (default: before their last change)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--updates", type=int, default=30_000)
    parser.add_argument("--eps", type=float, default=1e-3)
    parser.add_argument("--only", default="", help="run the cases whose label contains this")
    parser.add_argument("--verbose", action="store_true", help="every run's wall time too")
    parser.add_argument("--compile", action="store_true", help="compile times instead")
    parser.add_argument("--compile-one", choices=("old", "new"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.old = args.old or before_last_change()
    numba.set_num_threads(1)
    if args.compile_one:
        print(json.dumps({"seconds": compile_once(args.compile_one, args.old)}))
    elif args.compile:
        compile_times(args)
    else:
        timings(args)


if __name__ == "__main__":
    main()
