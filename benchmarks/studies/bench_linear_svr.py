"""Linear ε-SVR: ``svr_dcd`` against LIBLINEAR on the same loss, one thread, side by side.

Run ``python -m svmbench.benchmarks.studies.bench_linear_svr [--quick] [--repeat 5]``. Every case
is an :class:`~problems.SVRPrimal` with ``bias="regularized"`` (LIBLINEAR's ``-B 1``), ``C = 1``,
``ε = 0.1``, on scikit-learn's ``make_regression(20 000, 50, noise=10)`` (dense) and on a sparse
``20 000 × 2 000`` matrix of density 1 % with targets ``X w₀ + 10·noise`` (CSR).

Per case and loss:

- the optimum ``P*``: ``svr_dcd`` at a certified relative gap of 1e-10 (``P* ∈ [D, P]``);
- LIBLINEAR through its anchors, ``-s 13`` (plain loss), ``-s 12`` and ``-s 11`` (squared), with
  its ``-e`` tuned: the largest of 0.1, 0.01, … whose model has ``(P − P*)/|P*| ≤ 1e-6``
  (column ``LL reach``: that distance; above 1e-6 where no ``-e`` reaches it, the dual solvers
  stopping at their 300-epoch cap);
- ``svr_dcd`` to a certified relative gap of 1e-6 (its default: gap rule, checks spaced by
  counted work), which implies the same objective within 1e-6.

The time is the median ``solve_time`` of ``--repeat`` runs, the two solvers interleaved
(LIBLINEAR, ours, LIBLINEAR, ...) so that a change of load hits both alike; the anchor's clock
times its ``train`` call only, ours the set-up, the epochs and the stopping certificates. The
ratio printed is ours over LIBLINEAR's. Timings on a shared machine are noisy: compare ratios
within one run.
"""

from __future__ import annotations

import argparse
import os
import statistics

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from scipy import sparse

from svmbench.problems import SVRPrimal
from svmbench.solvers import registry

RTOL = 1e-6
EPS_LADDER = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def cases(quick: bool) -> dict[str, tuple]:
    from sklearn.datasets import make_regression

    n = 4000 if quick else 20_000
    X, y = make_regression(n_samples=n, n_features=50, noise=10.0, random_state=0)
    rng = np.random.default_rng(0)
    Xs = sparse.random(n, 2000, density=0.01, format="csr", random_state=1)
    ys = Xs @ rng.normal(size=2000) + 10.0 * rng.normal(size=n)
    return {f"dense {n}×50": (X, y), f"sparse {n}×2000 (1%)": (Xs, ys)}


def relative(P: float, best: float) -> float:
    return (P - best) / max(1.0, abs(best))


def tuned_eps(name: str, problem: SVRPrimal, best: float) -> tuple[float, float]:
    """The largest ``-e`` of the ladder whose model is within RTOL of ``best`` and its relative
    distance; if none is (LIBLINEAR's dual solvers stop at 300 epochs), the ladder's last."""
    distance = np.inf
    for eps in EPS_LADDER:
        distance = relative(registry.get(name, eps=eps).solve(problem).primal, best)
        if distance <= RTOL:
            break
    return eps, distance


def median_times(solvers, problem, repeat: int) -> list[float]:
    times = [[] for _ in solvers]
    for _ in range(repeat):
        for k, solver in enumerate(solvers):
            times[k].append(solver.solve(problem).solve_time)
    return [statistics.median(t) for t in times]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 4000 instead of 20 000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'case':<24} {'loss':<8} {'LIBLINEAR':<10} {'-e':>7} {'t_LL (s)':>9} "
          f"{'LL reach':>9} {'t_ours (s)':>10} {'ours/LL':>8} {'epochs':>7} "
          f"{'rel gap':>9}")  # fmt: skip
    for case, (X, y) in cases(args.quick).items():
        for loss, anchors in (
            ("epsilon_insensitive", ("liblinear_svr",)),
            ("squared_epsilon_insensitive", ("liblinear_svr", "liblinear_svr_primal")),
        ):
            problem = SVRPrimal(X, y, C=1.0, epsilon=0.1, loss=loss, bias="regularized")
            exact = registry.get("svr_dcd", tol=1e-10, max_iter=10**6, trace=False)
            best = exact.solve(problem).primal
            ours = registry.get("svr_dcd", tol=RTOL, trace=False)
            result = ours.solve(problem)  # compiles, and gives the epochs and the gap
            for name in anchors:
                eps, reach = tuned_eps(name, problem, best)
                anchor = registry.get(name, eps=eps)
                t_ll, t_ours = median_times([anchor, ours], problem, args.repeat)
                s = {"liblinear_svr": "-s 13" if loss[0] == "e" else "-s 12"}.get(name, "-s 11")
                print(f"{case:<24} {'plain' if loss[0] == 'e' else 'squared':<8} {s:<10} "
                      f"{eps:>7.0e} {t_ll:>9.3f} {reach:>9.1e} {t_ours:>10.3f} "
                      f"{t_ours / t_ll:>8.2f} "
                      f"{result.iterations:>7d} {result.rel_gap:>9.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
