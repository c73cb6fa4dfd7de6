"""The kernel entries of SMO's columns, in nanoseconds per entry (RBF), by path:

- ``table digits``: the one-vs-one table's blocks (:mod:`solvers._jit.kernel_table`) on digits
  (1797 × 64, /16, γ = 0.02, rows sorted by class), every block of every row computed again;
- ``whole <data>``: whole columns from the transposed rows
  (``kernel_columns.kernel_column_full_serial``);
- ``gathered <data>``: columns over a quarter of the rows (``kernel_columns.kernel_column_serial``).

Breast cancer standardized (569 × 30, γ = 0.05) and Gaussian rows (4000 × 20, γ = 0.05). One
thread. The study calls only names that earlier trees have too: run it with another tree's
interpreter (``python path/to/bench_kernel_blocks.py``) to alternate the two.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
        python -m svmbench.benchmarks.studies.bench_kernel_blocks --repeats 7
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits

from svmbench.benchmarks.harness.environment import summary
from svmbench.solvers._jit import kernel_columns as kc
from svmbench.solvers._jit.kernel_table import table_row

RBF = 2


@numba.njit
def _table(table, gamma):
    table[2][:] = 0
    for r in range(table[1].shape[0]):
        table_row(table, r, RBF, gamma, 0.0, 3)


@numba.njit
def _whole(XT, sqn, out, gamma):
    for i in range(out.shape[0]):
        kc.kernel_column_full_serial(XT, sqn, i, out[i], RBF, gamma, 0.0, 3)


@numba.njit
def _gathered(X, sqn, idx, out, gamma):
    for i in range(out.shape[0]):
        kc.kernel_column_serial(X, sqn, i, idx, out[i], RBF, gamma, 0.0, 3)


def _cases():
    digits = load_digits()
    order = np.argsort(digits.target, kind="stable")
    X = np.ascontiguousarray(digits.data[order] / 16.0)
    starts = np.concatenate([[0], np.cumsum(np.bincount(digits.target))]).astype(np.int64)
    n = X.shape[0]
    k = starts.size - 1
    table = (np.arange(n), np.empty((n, n)), np.zeros((n, k), np.uint8), starts, np.arange(k),
             np.ascontiguousarray(X.T), kc.squared_norms(X))  # fmt: skip
    yield "table digits", n * n, lambda: _table(table, 0.02)
    cancer = load_breast_cancer().data
    cancer = (cancer - cancer.mean(axis=0)) / cancer.std(axis=0)
    gauss = np.random.default_rng(0).standard_normal((4000, 20))
    rng = np.random.default_rng(1)
    for name, X, cols in (("cancer", cancer, 569), ("gauss", gauss, 200)):
        X = np.ascontiguousarray(X)
        XT, sqn, n = np.ascontiguousarray(X.T), kc.squared_norms(X), X.shape[0]
        idx = np.sort(rng.choice(n, n // 4, replace=False)).astype(np.int64)
        whole, gathered = np.empty((cols, n)), np.empty((cols, idx.size))
        yield f"whole {name}", whole.size, lambda a=(XT, sqn, whole): _whole(*a, 0.05)
        yield (
            f"gathered {name}",
            gathered.size,
            lambda a=(X, sqn, idx, gathered): _gathered(*a, 0.05),
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(summary())
    cases = list(_cases())
    for _, _, run in cases:
        run()  # compile
    times = {name: [] for name, _, _ in cases}
    for _ in range(args.repeats):  # the cases interleaved
        for name, entries, run in cases:
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) / entries * 1e9)
    for name, values in times.items():
        print(f"{name:18s} {np.median(values):6.2f} ns/entry (min {min(values):.2f})")


if __name__ == "__main__":
    main()
