"""The first run, timed: ``import svmbench``, and the first fit with an empty and a warm cache.

    python -m svmbench.benchmarks.studies.bench_first_run [--warm-repeats R] [--cold-repeats K]
        [--python PYTHON] [--kernels rbf linear] [--default-run]

Each measurement is a new process of ``--python`` (default: this interpreter) with
``OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1`` and its own temporary ``NUMBA_CACHE_DIR`` (the
user's cache is never read nor written):

- ``import svmbench``: the seconds of the import alone, in a bare process;
- cold: the first ``SVMClassifier(kernel=K).fit`` on standardized breast cancer (569×30), from
  ``import svmbench`` to the end of the fit, with an empty cache directory (scikit-learn, the data
  and the scaler already loaded); every compilation the fit needs happens here;
- warm: the same in a new process whose cache directory a cold run has filled;
- with ``--default-run``: the JIT warm-up of ``svmbench run`` on the default suite (the
  harness's :func:`~benchmarks.harness.execution.warm_up` of its cases, what the run compiles
  before its first case), with an empty cache and again with the cache it filled.

Warm figures and the import are medians of ``--warm-repeats`` (at least 3) processes; cold ones
of ``--cold-repeats``; each with the child's CPU time beside its wall time (on a shared machine
the wall time also counts the other processes). Python's bytecode is cached in the temporary
directory, as an installed package's is, Numba's and that of every module of svmbench included,
before any figure (:data:`BYTECODE`). Each cold run also counts the lines the fit printed on
stderr (the compile notice). The first printed line is
:func:`~benchmarks.harness.environment.summary`, the second the version and commit of the tree
the fits ran (``--python``'s, which may be another checkout than this one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from svmbench.benchmarks.harness.environment import git_commit, summary

#: The child's program: loads scikit-learn and the data, then times ``import svmbench`` and the
#: first fit; prints one JSON line.
FIT = """
import json, os, sys, time
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
start, cpu = time.perf_counter(), time.process_time()
import svmbench
est = svmbench.SVMClassifier(kernel=sys.argv[1]).fit(X, y)
end, cpu = time.perf_counter(), time.process_time() - cpu
record = {"seconds": end - start, "cpu": cpu, "version": svmbench.__version__}
record["source"] = os.path.dirname(os.path.realpath(svmbench.__file__))
record.update(status=est.result_.status.value, method=est.result_.info["auto"]["chose"])
print(json.dumps(record))
"""

#: The child's program: the default suite's cases and the run's warm-up of them, timed.
RUN_WARM_UP = """
import json, time
from svmbench.benchmarks.harness.cases import expand
from svmbench.benchmarks.harness.execution import warm_up
from svmbench.benchmarks.harness.settings import Settings
from svmbench.benchmarks.harness.suite_files import load_suite
suite = load_suite("default")
cases, _ = expand(suite, Settings.from_suite(suite))
start, cpu = time.perf_counter(), time.process_time()
seconds = warm_up(cases)
record = {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu}
record["slowest"] = sorted(seconds.items(), key=lambda kv: -kv[1])[:3]
print(json.dumps(record))
"""

#: Writes the bytecode of what the fits import (Numba's and svmbench's modules; no jitted
#: function runs), so that a cold figure times the compilation of the jitted code, not Python's
#: compilation of Numba's sources into the temporary bytecode cache (about 1-1.5 s of CPU), which
#: an installed Numba never pays.
BYTECODE = """
import numba
import svmbench
svmbench.SVMClassifier
from svmbench.solvers import registry
registry.names()
print("{}")
"""

IMPORT = """
import json, time
start, cpu = time.perf_counter(), time.process_time()
import svmbench
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu}))
"""


def _child(python: str, program: str, cache: str, pyc: str, *args: str) -> tuple[dict, list[str]]:
    """Run ``program`` in a new process with ``cache`` as Numba's cache directory and ``pyc`` as
    Python's bytecode cache (written, as an installed package's is); its JSON line and its stderr
    lines."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    env["PYTHONPYCACHEPREFIX"] = pyc
    env.pop("NUMBA_DISABLE_JIT", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [python, "-c", program, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the child process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr.strip().splitlines()


def _commit_of(source: str) -> str:
    """``HEAD`` of the checkout that holds ``source`` (the child's svmbench, which ``--python``
    may take from another tree than this one's), else this tree's commit."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return git_commit()
    return done.stdout.strip() or git_commit()


def _median(records: list[dict]) -> str:
    """Median wall and CPU seconds of ``records`` (with the wall range)."""
    wall = [r["seconds"] for r in records]
    cpu = statistics.median(r["cpu"] for r in records)
    spread = f", wall {min(wall):.3f}-{max(wall):.3f}" if len(wall) > 1 else ""
    return f"{statistics.median(wall):8.3f} s (CPU {cpu:.3f} s{spread})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-repeats", type=int, default=5)
    parser.add_argument("--cold-repeats", type=int, default=1)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--kernels", nargs="+", default=["rbf", "linear"])
    parser.add_argument(
        "--default-run", action="store_true", help="also time the default run's JIT warm-up"
    )
    args = parser.parse_args(argv)
    if args.warm_repeats < 3:
        parser.error("--warm-repeats must be at least 3")
    if args.cold_repeats < 1:
        parser.error("--cold-repeats must be at least 1")
    print(summary(note="each figure a new process, OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1"))
    commit = git_commit()  # the child's, once a fit has said where its svmbench lives
    with tempfile.TemporaryDirectory(prefix="svmbench-first-run-") as root:
        pyc = os.path.join(root, "pyc")
        _child(args.python, BYTECODE, os.path.join(root, "bytecode"), pyc)  # writes the bytecode
        imports = [
            _child(args.python, IMPORT, os.path.join(root, f"import-{i}"), pyc)[0]
            for i in range(args.warm_repeats)
        ]
        rows, version = [], "?"
        for kernel in args.kernels:
            cold, notices, warm_dir = [], 0, ""
            for i in range(args.cold_repeats):
                warm_dir = os.path.join(root, f"{kernel}-{i}")
                record, lines = _child(args.python, FIT, warm_dir, pyc, kernel)
                cold.append(record)
                notices = max(notices, sum("svmbench: compiling" in line for line in lines))
                version, commit = record["version"], _commit_of(record["source"])
            warm = [
                _child(args.python, FIT, warm_dir, pyc, kernel)[0] for _ in range(args.warm_repeats)
            ]
            rows.append((kernel, cold, warm, notices, f"{record['method']}, {record['status']}"))
        runs = []
        if args.default_run:
            cache = os.path.join(root, "default-run")
            runs = [_child(args.python, RUN_WARM_UP, cache, pyc)[0] for _ in range(2)]
    print(f"svmbench {version}, commit {commit}")
    wall = statistics.median(r["seconds"] for r in imports)
    cpu = statistics.median(r["cpu"] for r in imports)  # lazy: milliseconds, not seconds
    print(f"import svmbench (bare process)     {1e3 * wall:8.1f} ms (CPU {1e3 * cpu:.1f} ms)")
    for kernel, cold, warm, notices, status in rows:
        print(f"first fit, {kernel:6}, empty cache   {_median(cold)}, {notices} notice line(s)")
        print(f"first fit, {kernel:6}, warm cache    {_median(warm)}, {status}")
    labels = ("empty cache", "warm cache ") if runs else ()  # without --default-run: none
    for label, record in zip(labels, runs, strict=True):
        slowest = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in record["slowest"])
        print(f"default run's warm-up, {label}   {_median([record])} (slowest: {slowest})")


if __name__ == "__main__":
    main()
