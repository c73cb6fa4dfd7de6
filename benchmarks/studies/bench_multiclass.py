"""Crammer–Singer: our ``cs_dcd`` against LIBLINEAR ``-s 4`` (and, on digits, scikit-learn's
LinearSVC(multi_class="crammer_singer") and Clarabel), every model judged by our problem.

    python -m svmbench.benchmarks.studies.bench_multiclass [--quick] [--n N] [--C C] [--repeats R]
        [--seed S] [--solver-seed S] [--skip-digits]

For each data set: LIBLINEAR ``-s 4 -B 1`` (bias regularized, s = 1) runs through the
``liblinear_cs`` anchor (:class:`~svmbench.solvers.anchors.liblinear.LiblinearCSAnchor`), timed
around ``train`` (best of ``--repeats``); the anchor maps its weights, rows in
``model.get_labels()`` order, to our ``W`` (k, d) and ``b = s·w_bias``, certified by
``MulticlassHinge(bias="regularized")``. Our ``cs_dcd`` runs with the certified-gap rule (tol 1e-6;
timed gap checks spaced by counted work, at most 10 % of the solve, or every ``--check-every``
epochs, and whenever its native rule holds) and a trace; "time to LIBLINEAR's objective" is the
solve time of the first checkpoint whose certified primal is ≤ LIBLINEAR's (checkpoints drawn for
the trace pause the clock). Both sides are single-threaded; JIT compilation is excluded and reported
apart. The first printed line is :func:`~benchmarks.harness.environment.summary`. ``svmbench run
cs_liblinear`` runs cs_dcd beside the anchor through the harness (each to its own rule, judged
against the reference); this study adds the time to LIBLINEAR's objective, LinearSVC and Clarabel on
digits.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from svmbench.benchmarks.harness.environment import summary
from svmbench.problems import MulticlassHinge, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning

TOL = 1e-6


def _liblinear(problem, eps, repeats):
    """LIBLINEAR ``-s 4`` through its anchor: the fastest of ``repeats`` runs (run ``k`` seeds
    ``rand()``, which orders LIBLINEAR's coordinates, with ``k``), certified by ``problem``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # LIBLINEAR's cap: status max_iter
        runs = [
            registry.get("liblinear_cs", eps=eps, seed=k).solve(problem) for k in range(repeats)
        ]
    return min(runs, key=lambda r: r.solve_time)


def _ours(problem, repeats, check_every, seed=0):
    from svmbench.solvers import registry

    best, res = np.inf, None
    for _ in range(repeats):
        opts = {} if check_every is None else {"check_every": check_every}
        solver = registry.get("cs_dcd", tol=TOL, trace=True, max_iter=20_000, seed=seed, **opts)
        r = solver.solve(problem)
        if r.solve_time < best:
            best, res = r.solve_time, r
    return res


def _time_to(res, target):
    for c in res.trace:
        if c.primal <= target:
            return c.solve_time, c.iteration
    return np.nan, None


def run_set(name, X, y, C, *, repeats, eps_list, check_every, extra, seed=0):
    problem = MulticlassHinge(X, y, C=C, bias="regularized", bias_scale=1.0)
    n, d, k = problem.n_samples, problem.n_features, problem.n_classes
    print(f"\n== {name}: n={n}, d={d}, k={k}, C={C}, bias regularized (s=1)")
    res = _ours(problem, repeats, check_every, seed)
    print(
        f"cs_dcd        : {res.status.value}, {res.iterations} epochs, solve "
        f"{res.solve_time:.3f} s (compile {res.compile_time:.2f} s), certified rel gap "
        f"{res.rel_gap:.2e}, P = {res.primal:.10g}"
    )
    p_star = res.primal
    for eps in eps_list:
        cert = _liblinear(problem, eps, repeats)
        t_lib = cert.solve_time
        t_ours, ep = _time_to(res, cert.primal)
        print(
            f"LIBLINEAR -e {eps:g}: {t_lib:.3f} s, P = {cert.primal:.10g}, certified rel gap "
            f"{cert.rel_gap:.2e}, (P − P_ours)/P_ours = {(cert.primal - p_star) / p_star:.1e}"
        )
        print(
            f"  cs_dcd to LIBLINEAR's P: {t_ours:.3f} s ({ep} epochs) -> ratio ours/LIBLINEAR = "
            f"{t_ours / t_lib:.2f}; to certified {TOL:g}: {res.solve_time:.3f} s "
            f"(ratio {res.solve_time / t_lib:.2f})"
        )
    for label, fn in extra:
        fn(problem, p_star, label)
    return res


def _linearsvc(problem, p_star, label):
    from sklearn.svm import LinearSVC

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LinearSVC(
            C=problem.C,
            multi_class="crammer_singer",
            intercept_scaling=1.0,
            tol=1e-4,
            max_iter=100_000,
        ).fit(problem.X, problem.y)
    t = time.perf_counter() - t0
    cert = problem.certificate(W=m.coef_, b=m.intercept_)
    print(
        f"{label}: {t:.3f} s, P = {cert.primal:.10g}, certified rel gap {cert.rel_gap:.2e}, "
        f"(P − P_ours)/P_ours = {(cert.primal - p_star) / p_star:.1e}"
    )


def _clarabel(problem, p_star, label):
    from svmbench.solvers import registry

    r = registry.get("clarabel").solve(problem)
    print(
        f"{label}: {r.status.value}, {r.solve_time:.2f} s, P = {r.primal:.10g}, rel gap "
        f"{r.rel_gap:.1e}, (P − P_ours)/P_ours = {(r.primal - p_star) / p_star:.1e}"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, no Clarabel on digits")
    ap.add_argument("--n", type=int, default=20_000, help="blobs size (default 20000)")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--check-every", type=int, default=None, help="cs_dcd's gap-check period")
    ap.add_argument("--seed", type=int, default=0, help="seed of the blobs data set")
    ap.add_argument("--solver-seed", type=int, default=0, help="cs_dcd's seed")
    ap.add_argument("--skip-digits", action="store_true", help="blobs only")
    args = ap.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    from threadpoolctl import threadpool_limits

    # BLAS threads (used only by the certificates, outside the timed region) would otherwise
    # busy-wait after each call and steal the core the single-threaded solvers run on
    threadpool_limits(1)

    note = f"BLAS limited to 1 thread; both solvers single-threaded; best of {repeats}"
    print(summary("scikit-learn", "liblinear-official", note=note))
    if not args.skip_digits:
        ds = datasets.load("digits")
        extra = [("LinearSVC(crammer_singer, tol 1e-4)", _linearsvc)]
        if not args.quick:
            extra.append(("Clarabel", _clarabel))
        run_set("digits", ds.X, ds.y, args.C, repeats=repeats, eps_list=(1e-4,),
                check_every=args.check_every, extra=extra, seed=args.solver_seed)  # fmt: skip
    ds = datasets.load(f"blobs:n={args.n},d=50,k=10,seed={args.seed}")
    run_set(f"blobs n={args.n} seed={args.seed}", ds.X, ds.y, args.C, repeats=repeats,
            eps_list=(0.1, 1e-4), check_every=args.check_every, extra=(),
            seed=args.solver_seed)  # fmt: skip


if __name__ == "__main__":
    main()
