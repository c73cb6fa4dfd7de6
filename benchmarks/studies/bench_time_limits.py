"""Time limits that bound set-up work: the limit asked for against the wall time of the whole call.

Run ``python -m svmbench.benchmarks.studies.bench_time_limits [--quick] [--only NAME,...]``.

Each case is one where set-up work (a kernel matrix, a library's factorization, a dense Newton
system, a low-rank factor, an uninterruptible library call) used to run far past ``time_limit``
(issues 26 and 29). A stage is now started only when its estimate ends within the limit plus
:data:`~solvers.time_budget.ALLOWED_OVERRUN`, and OSQP, Clarabel and the scikit-learn SVC anchor
run their library call in a worker process stopped at the limit (docs/ARCHITECTURE.md §4, "Time
limits").
The data are generated before the clock; ``wall`` is the ``solve`` call seen from outside
(after ``warm_up``), ``record`` the record's ``wall_time``; ``stage`` is the stage the limit
stopped, and ``estimate`` its estimated seconds when it was refused on an estimate.

- ``osqp``: RBF kernel dual (γ = 0.05), ``gaussian:d=20,sep=1``, n = 3 000 and 4 000, limit 0.3;
- ``barrier``: soft-margin primal (hinge, linear) of ``gaussian:n=50000,d=20000,density=0.001``,
  limits 0.3 and 0.01; ``osqp`` on the same at limit 5 (its set-up, stopped in a worker);
- ``accpm``: the same generator at d = 8 000 (its memory model refuses d = 20 000 up front),
  limit 0.3;
- ``low_rank``: RBF kernel dual, ``gaussian:n=100000,d=20``, limit 0.3 (the rank rule), and rank
  256 at limit 20 (the exact certificate, O(n·n_SV), priced after the inner solve);
- ``clarabel``: Crammer–Singer on a sparse 5 000 × 5 000 matrix (density 0.001, 5 classes),
  limit 2;
- ``sklearn_svc``: 50 × 4, features × 1e6, linear kernel, C = 0.009, limit 2.

``--quick`` keeps the cases that take seconds to generate (osqp at 3 000, clarabel, sklearn_svc).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import sparse

from svmbench.benchmarks.harness.environment import summary


def _gaussian_kernel(n):
    from svmbench.problems import KernelDual, datasets

    g = datasets.load(f"gaussian:n={n},d=20,sep=1,seed=0")
    return KernelDual(g.X, g.y, C=1.0, kernel="rbf", gamma=0.05)


def _sparse_primal(d):
    from svmbench.problems import SoftMarginPrimal, datasets

    g = datasets.load(f"gaussian:n=50000,d={d},sep=1,seed=0,density=0.001")
    return SoftMarginPrimal(g.X, g.y, C=1.0)


def _crammer_singer():
    from svmbench.problems import MulticlassHinge

    n, d, k = 5000, 5000, 5
    rng = np.random.default_rng(0)
    y = rng.integers(0, k, size=n).astype(float)
    X = sparse.random(n, d, density=0.001, format="csr", random_state=0)
    X = X + sparse.csr_matrix((np.ones(n), (np.arange(n), (7 * y).astype(int))), shape=(n, d))
    return MulticlassHinge(sparse.csr_matrix(X), y, C=1.0)


def _scaled_features():
    from svmbench.problems import KernelDual

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4)) * 1e6
    y = np.where(rng.standard_normal(50) > 0, 1.0, -1.0)
    return KernelDual(X, y, C=0.009, kernel="linear")


#: name, description, problem builder, solver options, limits, in --quick
CASES = [
    ("osqp", "RBF dual n=3000", lambda: _gaussian_kernel(3000), {}, (0.3,), True),
    ("osqp", "RBF dual n=4000", lambda: _gaussian_kernel(4000), {}, (0.3,), False),
    ("barrier", "sparse primal 50000x20000", lambda: _sparse_primal(20000), {}, (0.3, 0.01), False),
    ("osqp", "sparse primal 50000x20000", lambda: _sparse_primal(20000), {}, (5.0,), False),
    ("accpm", "sparse primal 50000x8000", lambda: _sparse_primal(8000), {}, (0.3,), False),
    ("low_rank", "RBF dual n=100000", lambda: _gaussian_kernel(100000), {}, (0.3,), False),
    ("low_rank", "RBF dual n=100000 r=256", lambda: _gaussian_kernel(100000), {"rank": 256},
     (20.0,), False),
    ("clarabel", "Crammer-Singer sparse 5000x5000", _crammer_singer, {}, (2.0,), True),
    ("sklearn_svc", "50x4 features x1e6", _scaled_features, {}, (2.0,), True),
]  # fmt: skip


def run(name, what, build, options, limits) -> None:
    from svmbench.solvers import registry

    problem = build()
    for limit in limits:
        solver = registry.get(name, time_limit=limit, **options)
        solver.warm_up()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tic = time.perf_counter()
            result = solver.solve(problem)
            wall = time.perf_counter() - tic
        stopped = result.info.get("time_limit", {})
        estimate = stopped.get("estimate_seconds")
        print(
            f"{name:<12} {what:<32} {limit:>6g} {wall:>8.2f} {result.wall_time:>8.2f} "
            f"{result.status.value:<12} {result.certified!s:<6} "
            f"{stopped.get('stage', ''):<42} {'' if estimate is None else f'{estimate:.3g}'}",
            flush=True,
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated solver names")
    args = parser.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    print(summary())
    print(
        f"{'solver':<12} {'case':<32} {'limit':>6} {'wall':>8} {'record':>8} {'status':<12} "
        f"{'cert.':<6} {'stage stopped':<42} estimate (s)"
    )
    for name, what, build, options, limits, quick in CASES:
        if (args.quick and not quick) or (only and name not in only):
            continue
        run(name, what, build, options, limits)


if __name__ == "__main__":
    main()
