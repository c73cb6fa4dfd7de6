"""Does the generalized SMO cost today's C-SVC anything? Old tree against this one, interleaved.

``python -m svmbench.benchmarks.studies.bench_general_smo [--old REV] [--reps N] [--sizes N ...]``

Both source trees (``REV``, default ``main``, read with ``git archive``; and this checkout's
files) are laid out as the installed package in a temporary folder and run in fresh processes
of this interpreter (``PYTHONPATH``, one Numba and BLAS thread), the trees alternating:

- cold compile: the first ``SMO.warm_up_for`` of a dense float64 RBF C-SVC (the signatures such a
  fit needs) on an empty ``NUMBA_CACHE_DIR``;
- per-update time: RBF C-SVC (γ = 1/d, C = 1, free bias, d = 20, gaussian rows, labels by a
  nonlinear rule) of each size, ``stop_rule="native"``, eps = 1e-3, default cache (float64
  columns), compiled beforehand: solve time / pair updates.

Prints the medians per tree and the median of the pairs' ratios (new / old), and checks that the
two trees made the same number of updates (the same iterates).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

from svmbench.benchmarks.harness.environment import REPO_ROOT

#: The root folders of a checkout and where they go in the package (pyproject.toml's mapping).
LAYOUT = {"problems": "problems", "solvers": "solvers", "benchmarks": "benchmarks"}

_CHILD = r"""
import json, sys, time
import numpy as np
import svmbench
assert svmbench.__file__.startswith(sys.argv[1]), svmbench.__file__
from svmbench.problems import KernelDual
from svmbench.solvers.registry import get
mode, n = sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(0)
X = rng.standard_normal((n, 20))
y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] > 0, 1.0, -1.0)
problem = KernelDual(X, y, C=1.0, kernel="rbf", gamma=1 / 20, bias="free")
solver = get("smo", stop_rule="native", eps=1e-3, trace=False)
start = time.perf_counter()
solver.warm_up_for(problem)
compile_time = time.perf_counter() - start
if mode == "compile":
    print(json.dumps({"compile": compile_time}))
else:
    r = solver.solve(problem)
    print(json.dumps({"per_update": r.solve_time / r.iterations, "updates": r.iterations}))
"""


def _package(root: Path, out: Path) -> Path:
    """``out/svmbench``: the package of the checkout files under ``root``."""
    pkg = out / "svmbench"
    shutil.copytree(root / "_svmbench", pkg)
    for folder, name in LAYOUT.items():
        shutil.copytree(root / folder, pkg / name, ignore=shutil.ignore_patterns("__pycache__"))
    return out


def trees(old: str, tmp: Path) -> dict[str, Path]:
    """``{"old": ..., "new": ...}``: the package folders of ``old`` and of this checkout."""
    archive = tmp / "old.tar"
    subprocess.run(["git", "-C", str(REPO_ROOT), "archive", "-o", str(archive), old], check=True)
    src = tmp / "old-src"
    with tarfile.open(archive) as tar:
        tar.extractall(src, filter="data")
    return {"old": _package(src, tmp / "old"), "new": _package(REPO_ROOT, tmp / "new")}


def _run(path: Path, cache: str, mode: str, n: int) -> dict:
    env = dict(
        os.environ, PYTHONPATH=str(path), NUMBA_CACHE_DIR=cache, NUMBA_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1",
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), mode, str(n)],
        env=env, cwd=cache, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="main")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        paths = trees(args.old, tmp)
        warm = {name: str(tmp / f"cache-{name}") for name in paths}
        for cache in warm.values():
            os.makedirs(cache)
        rows: dict[tuple, list] = {}
        for rep in range(args.reps):
            order = list(paths) if rep % 2 == 0 else list(paths)[::-1]
            for name in order:
                # the first cold compile fills the cache the timed runs then read
                with tempfile.TemporaryDirectory() as fresh:
                    cold = warm[name] if rep == 0 else fresh
                    seconds = _run(paths[name], cold, "compile", 4)["compile"]
                rows.setdefault(("compile", name), []).append(seconds)
                print(f"rep {rep + 1}: {name} cold compile {seconds:.2f} s", file=sys.stderr)
            for n in args.sizes:
                for name in order:
                    out = _run(paths[name], warm[name], "updates", n)
                    rows.setdefault((n, name), []).append(out["per_update"])
                    rows.setdefault((n, name, "updates"), []).append(out["updates"])
                    print(f"rep {rep + 1}: {name} n = {n} {out}", file=sys.stderr)
    print(f"old = {args.old}, new = this checkout; medians of {args.reps} interleaved runs")
    print(f"{'':28s}{'old':>12s}{'new':>12s}{'new/old':>10s}")
    for key in ["compile", *args.sizes]:
        old, new = np.array(rows[(key, "old")]), np.array(rows[(key, "new")])
        scale, unit = (1.0, "s") if key == "compile" else (1e6, "µs")
        label = "cold compile (s)" if key == "compile" else f"per update, n = {key} ({unit})"
        ratio = float(np.median(new / old))
        print(
            f"{label:28s}{np.median(old) * scale:12.3f}{np.median(new) * scale:12.3f}{ratio:10.3f}"
        )
    for n in args.sizes:
        same = rows[(n, "old", "updates")] == rows[(n, "new", "updates")]
        print(f"n = {n}: updates {rows[(n, 'new', 'updates')][0]}, the same in both: {same}")


if __name__ == "__main__":
    main(sys.argv[1:])
