"""Micro-benchmarks of the jitted kernels (pytest-benchmark), run on demand, never by the tests.

Run them with::

    python -m pytest benchmarks/studies/bench_kernels.py --benchmark-only

(add ``--benchmark-json=kernels.json`` to keep the timings in a file).

What is timed:

- one epoch of dual coordinate descent (``dcd``, L1-loss dual, dense and CSR data), from a fresh
  state, through the solver's own chunk (``_step``), which calls the jitted epoch;
- one SMO pair update with a warm column cache (RBF kernel): the cache is filled by a few hundred
  updates in the untimed set-up, then single updates are timed;
- one kernel column ``K(x_i, ·)`` (RBF) for every example;
- one Pegasos epoch (dense data).

The kernels are imported lazily: a benchmark whose module or solver does not exist is skipped with
the reason. Threads are pinned to 1 (Numba and BLAS) unless ``SVMBENCH_BENCH_THREADS`` says
otherwise; the thread count is stored in the benchmark's ``extra_info``.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

from svmbench.benchmarks.harness.environment import pinned_threads, thread_info
from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.synthetic import gaussian

THREADS = int(os.environ.get("SVMBENCH_BENCH_THREADS", "1"))


def _require(module: str, *names: str):
    """The module, or a skip naming what is missing."""
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(f"{module} is not available yet: {exc}")
    for name in names:
        if not hasattr(mod, name):
            pytest.skip(f"{module}.{name} does not exist yet")
    return mod


def _solver(name: str, **options):
    from svmbench.solvers import registry

    if name not in registry.names():
        pytest.skip(f"solver {name!r} is not registered yet")
    solver = registry.get(name, **options)
    for hook in ("_init_state", "_step"):
        if not hasattr(solver, hook):
            pytest.skip(f"solver {name!r} has no {hook} (not an IterativeSolver)")
    solver.warm_up()
    return solver


@pytest.fixture(autouse=True)
def _pinned(benchmark):
    with pinned_threads(THREADS):
        benchmark.extra_info["threads"] = thread_info()
        yield


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_dcd_epoch(benchmark, sparse):
    _require("svmbench.solvers._jit.dcd")
    ds = gaussian(20_000, 50, 1.0, seed=0, density=0.2 if sparse else None)
    problem = SoftMarginDual(ds.X, ds.y, C=1.0, bias="regularized")
    solver = _solver("dcd")

    def fresh():
        return (problem, solver._init_state(problem, None)), {}

    benchmark.extra_info["n, d"] = (problem.n_samples, problem.n_features)
    benchmark.pedantic(solver._step, setup=fresh, rounds=10, iterations=1)


def test_smo_update_with_warm_cache(benchmark):
    _require("svmbench.solvers._jit.smo")
    ds = gaussian(5_000, 20, 1.0, seed=0)
    problem = KernelDual(ds.X, ds.y, C=1.0, kernel="rbf", gamma=0.05, bias="free")
    warm = _solver("smo", chunk=500, stop_rule="native")
    single = _solver("smo", chunk=1, stop_rule="native")

    def warmed():
        state = warm._init_state(problem, None)
        warm._step(problem, state)  # 500 updates fill the column cache
        return (problem, state), {}

    benchmark.pedantic(single._step, setup=warmed, rounds=20, iterations=1)


def test_kernel_column(benchmark):
    jit = _require("svmbench.solvers._jit.kernel_columns", "kernel_column", "KERNEL_CODES")
    ds = gaussian(20_000, 50, 1.0, seed=0)
    X = np.ascontiguousarray(ds.X)
    sqn = np.einsum("ij,ij->i", X, X)
    idx = np.arange(X.shape[0], dtype=np.int64)
    out = np.empty(X.shape[0])
    rbf = jit.KERNEL_CODES["rbf"]
    jit.kernel_column(X, sqn, 0, idx, out, rbf, 0.05, 0.0, 3, 1)  # compile, one thread
    benchmark(jit.kernel_column, X, sqn, 17, idx, out, rbf, 0.05, 0.0, 3, 1)
    expected = np.exp(-0.05 * np.sum((X - X[17]) ** 2, axis=1))
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-12)


def test_pegasos_epoch(benchmark):
    _require("svmbench.solvers._jit.pegasos")
    ds = gaussian(20_000, 50, 1.0, seed=0)
    problem = SoftMarginPrimal(ds.X, ds.y, C=1.0, bias="none")
    solver = _solver("pegasos")

    def fresh():
        return (problem, solver._init_state(problem, None)), {}

    benchmark.pedantic(solver._step, setup=fresh, rounds=10, iterations=1)
