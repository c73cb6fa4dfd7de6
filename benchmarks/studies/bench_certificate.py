"""The kernel certificate's cost: three versions of ``K(X, S)·c`` side by side in one run.

Run ``python -m svmbench.benchmarks.studies.bench_certificate [--sizes 10000 30000]
[--columns]``. Each case is a :class:`~problems.KernelDual` (hinge, free bias, ``C = 1``, RBF with
``γ = 1/d``) on ``datasets.gaussian(n, d=20, sep=1, seed=0)`` at SMO's optimum
(``registry.get("smo", tol=1e-6)``; α is solved once and kept in ``--cache``). The certificate
(``problem.certificate(alpha=α)``, whose cost is ``g = K(αy)`` over the support vectors) is timed
with its kernel product taken from:

- ``unfused``: the blocked product before the fused one (scikit-learn's ``rbf_kernel`` on blocks
  of at most 4·10⁶ entries, then a matrix-vector product; norms recomputed per block), copied
  here;
- ``baseline``: :mod:`problems._kernel_products` at ``--baseline`` (a git revision, read with
  ``git show`` by :mod:`~benchmarks.studies._old_code`): four support vectors against a
  transposed block of rows, a Horner exponential;
- ``new``: the current module, serial (four features per pass over the inner products, the
  exponential in fused multiply-adds) and, with more than one Numba thread, ``new-par`` (its
  blocks of rows over the Numba threads).

The versions run interleaved (unfused, baseline, new, … then again), ``--repeats`` times;
medians and their ratios are printed, with the thread counts (Numba, BLAS) they ran under. Every
version's P and D are compared with the baseline's (relative difference) and ``certified`` must
agree. ``--columns`` also times SMO's kernel columns (:mod:`solvers._jit.kernel_columns`) at
``--baseline`` and now, dense and CSR, gathered and whole, since both use one kernel formula.

Timings on a shared machine are noisy: compare ratios within one run, not across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

from svmbench.benchmarks.studies._old_code import import_source, source_at
from svmbench.problems import KernelDual, datasets, kernel_dual
from svmbench.problems import _kernel_products as kp
from svmbench.problems.kernels import kernel_matrix

BASELINE = "3afc3e8"  # the fused product with four support vectors per pass
UNFUSED_BLOCK_ENTRIES = 4_000_000


def _load_at(rev: str, relpath: str, name: str):
    """The module ``relpath`` as it was at git revision ``rev`` (None if git cannot say)."""
    try:
        src = source_at(rev, relpath)
    except (OSError, subprocess.CalledProcessError) as exc:
        why = getattr(exc, "stderr", None) or exc
        print(f"{relpath} at {rev}: unavailable ({why}); its column is left out")
        return None
    folder = Path(tempfile.gettempdir()) / f"svmbench_bench_certificate_{rev}"
    folder.mkdir(exist_ok=True)
    return import_source(src, name, folder)


def _unfused_dot(X, Z, coef, *, kernel, gamma=1.0, degree=3, coef0=0.0, sqn_X=None, sqn_Z=None):
    """The product before fusion: kernel blocks, then a matrix-vector product."""
    n = X.shape[0]
    out = np.empty(n)
    rows = max(1, UNFUSED_BLOCK_ENTRIES // max(1, Z.shape[0]))
    params = {"kernel": kernel, "gamma": gamma, "degree": degree, "coef0": coef0}
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        out[start:stop] = kernel_matrix(X[start:stop], Z, **params) @ coef
    return out


def _fused(module, function):
    """A ``kernel_dot`` replacement (dense rows, RBF) through ``module.function``."""

    def dot(X, Z, coef, *, kernel, gamma=1.0, degree=3, coef0=0.0, sqn_X=None, sqn_Z=None):
        assert kernel == "rbf"
        fn = getattr(module, function)
        return fn(
            np.ascontiguousarray(X),
            sqn_X,
            np.ascontiguousarray(Z),
            sqn_Z,
            np.ascontiguousarray(coef, dtype=np.float64),
            2,
            float(gamma),
            float(coef0),
            int(degree),
        )

    return dot


def _alpha(problem, n: int, cache: Path) -> np.ndarray:
    from svmbench.solvers import registry

    path = cache / f"alpha_gaussian_n{n}_d20_sep1_seed0_rbf_C1_free.npy"
    if path.exists():
        return np.load(path)
    cache.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    result = registry.get("smo", tol=1e-6).solve(problem)
    print(f"n = {n}: smo {result.status.value} in {time.perf_counter() - t:.1f} s, saved α")
    np.save(path, result.alpha)
    return result.alpha


def _threads() -> str:
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    try:
        from threadpoolctl import threadpool_info

        blas = ",".join(str(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas")
    except ImportError:
        pass
    return f"Numba threads {numba.get_num_threads()}, BLAS threads {blas}"


def certificates(sizes, repeats: int, baseline: str, cache: Path) -> None:
    old = _load_at(baseline, "problems/_kernel_products.py", "_baseline_kernel_products")
    versions = {"unfused": _unfused_dot}
    if old is not None:
        versions["baseline"] = _fused(old, "kernel_dot_dense")
    versions["new"] = _fused(kp, "kernel_dot_dense")
    if numba.get_num_threads() > 1:
        versions["new-par"] = _fused(kp, "kernel_dot_dense_parallel")
    print(_threads())
    original = kernel_dual.kernel_dot
    try:
        for n in sizes:
            data = datasets.gaussian(n, 20, 1.0, seed=0)
            problem = KernelDual(data.X, data.y, C=1.0, kernel="rbf", gamma=1.0 / 20)
            alpha = _alpha(problem, n, cache)
            problem.squared_norms  # noqa: B018 - cached once, as in a solve
            certs, times = {}, {k: [] for k in versions}
            for name, dot in versions.items():  # compile, and the values
                kernel_dual.kernel_dot = dot
                certs[name] = problem.certificate(alpha=alpha)
            for _ in range(repeats):
                for name, dot in versions.items():
                    kernel_dual.kernel_dot = dot
                    t = time.perf_counter()
                    problem.certificate(alpha=alpha)
                    times[name].append(time.perf_counter() - t)
            ref = certs.get("baseline", certs["new"])
            n_sv = int(np.count_nonzero(alpha))
            print(f"\nn = {n}, {n_sv} support vectors, medians of {repeats} (seconds)")
            print(
                f"{'version':10s} {'median':>8s} {'unfused/':>9s} {'baseline/':>10s}"
                f" {'|ΔP|/|P|':>10s} {'|ΔD|/|D|':>10s} certified"
            )
            med = {k: statistics.median(v) for k, v in times.items()}
            for name in versions:
                c = certs[name]
                vs_base = f"{med['baseline'] / med[name]:10.2f}" if "baseline" in med else " " * 10
                print(
                    f"{name:10s} {med[name]:8.3f} {med['unfused'] / med[name]:9.2f} {vs_base}"
                    f" {abs(c.primal - ref.primal) / abs(ref.primal):10.1e}"
                    f" {abs(c.dual - ref.dual) / abs(ref.dual):10.1e} {c.certified}"
                )
    finally:
        kernel_dual.kernel_dot = original


def columns(n: int, repeats: int, baseline: str) -> None:
    """SMO's kernel columns at ``baseline`` and now (RBF, d = 20, one thread and all)."""
    from scipy import sparse

    from svmbench.solvers._jit import kernel_columns as new

    old = _load_at(baseline, "solvers/_jit/kernel_columns.py", "_baseline_kernel_columns")
    if old is None:
        return
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20))
    XT = np.ascontiguousarray(X.T)
    sqn = new.squared_norms(X)
    Xs = X.copy()
    Xs[rng.random(X.shape) > 0.2] = 0.0
    S = new.csr_rows(sparse.csr_matrix(Xs))
    sqs = new.squared_norms_csr(S[0], S[2])
    half = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.int64)
    picks = rng.integers(0, n, 50)
    out = np.empty(n)
    g = 1.0 / 20

    def cases(m, threads):
        return {
            "gathered half": lambda: [
                m.kernel_column(X, sqn, i, half, out, 2, g, 0.0, 3, threads) for i in picks
            ],
            "whole": lambda: [
                m.kernel_column_full(XT, sqn, i, out, 2, g, 0.0, 3, threads) for i in picks
            ],
            "csr gathered": lambda: [
                m.kernel_column_csr(
                    S[0], S[1], S[2], S[6], sqs, i, half, out, 2, g, 0.0, 3, threads
                )
                for i in picks
            ],
            "csr whole": lambda: [
                m.kernel_column_full_csr(*S[:6], sqs, i, out, 2, g, 0.0, 3, threads) for i in picks
            ],
        }

    print(
        f"\nkernel columns, RBF, n = {n}, d = 20 (CSR: density 0.2), 50 columns per run,"
        f" medians of {repeats} (seconds)"
    )
    for threads in sorted({1, numba.get_num_threads()}):
        a, b = cases(old, threads), cases(new, threads)
        ta, tb = {k: [] for k in a}, {k: [] for k in a}
        for k in a:
            a[k](), b[k]()  # compile
        for _ in range(repeats):
            for k in a:
                t = time.perf_counter()
                a[k]()
                ta[k].append(time.perf_counter() - t)
                t = time.perf_counter()
                b[k]()
                tb[k].append(time.perf_counter() - t)
        for k in a:
            ma, mb = statistics.median(ta[k]), statistics.median(tb[k])
            print(
                f"threads {threads}  {k:14s} baseline {ma:.4f}  new {mb:.4f}  ratio {ma / mb:.2f}"
            )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the old code")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "svmbench_bench_certificate",
        help="folder for SMO's α (solved once per size)",
    )
    parser.add_argument("--columns", action="store_true", help="also time the kernel columns")
    parser.add_argument("--skip-certificates", action="store_true")
    args = parser.parse_args(argv)
    if not args.skip_certificates:
        certificates(args.sizes, args.repeats, args.baseline, args.cache)
    if args.columns:
        columns(10_000, args.repeats, args.baseline)


if __name__ == "__main__":
    main()
