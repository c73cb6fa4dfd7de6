"""Linear ε-SVR: ours against LIBLINEAR on the same loss, one thread, side by side in one run.

Run ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m
svmbench.benchmarks.studies.bench_linear_svr [--quick] [--repeat 7]``. Every case
is an :class:`~problems.SVRPrimal` with ``bias="regularized"`` (LIBLINEAR's ``-B 1``), ``ε = 0.1``,
``C`` = 1 and 100 (``--C``), on scikit-learn's ``make_regression(20 000, 50, noise=10)`` (dense)
and on a sparse ``20 000 × 2 000`` matrix of density 1 % with targets ``X w₀ + 10·noise`` (CSR).

Per case, loss and C, the pairs compared are

- squared loss: ``svr_newton`` against ``-s 11`` (both primal Newton with conjugate gradients
  and a line search);
- plain loss: ``svr_dcd`` against ``-s 13`` (both dual coordinate descent);

and for each pair:

- the optimum ``P*``: ``svr_newton`` at a certified relative gap of 1e-12 (squared), Clarabel
  at 1e-9 (plain; ``P* ∈ [D, P]``);
- LIBLINEAR's ``-e`` tuned: the largest of 0.1, 0.01, … whose model has
  ``(P − P*)/|P*| ≤ 1e-6``; where none does (``-s 13`` stops at its compiled-in 300 epochs),
  its smallest, and ``LL reach`` says how far its objective stayed;
- ours at a certified relative gap of ``max(1e-6, LL reach)`` (``tol``): the same objective
  within what LIBLINEAR reached, and within 1e-6 where it reached that.

Times are medians over ``--repeat`` runs, the two interleaved (LIBLINEAR, ours, LIBLINEAR, ...)
so that a change of load hits both alike: LIBLINEAR's ``train`` call alone (the conversion of the
data and our certificate of its model left out), ours end to end (``wall_time``: set-up,
iterations, stopping tests, the final certificate and the model; compilation is done before).
``ours/LL`` is their ratio; ``gap`` is our record's certified relative gap. Timings on a shared
machine are noisy: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import numpy as np
from scipy import sparse

from svmbench.problems import SVRPrimal
from svmbench.solvers import registry

RTOL = 1e-6
EPS_LADDER = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
#: loss → (our solver, LIBLINEAR's anchor, its -s)
PAIRS = {
    "squared_epsilon_insensitive": ("svr_newton", "liblinear_svr_primal", "-s 11"),
    "epsilon_insensitive": ("svr_dcd", "liblinear_svr", "-s 13"),
}


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


def optimum(problem: SVRPrimal) -> float:
    """``P*``: our Newton method at 1e-12 (squared loss), Clarabel at 1e-9 (plain)."""
    if problem.squared:
        solver = registry.get("svr_newton", tol=1e-12, trace=False)
    else:
        solver = registry.get("clarabel", tol=1e-9)
    result = solver.solve(problem)
    if not (result.certified and result.rel_gap <= 1e-8):
        raise RuntimeError(f"no reference optimum: {result.status.value}, {result.rel_gap:.2g}")
    return result.primal


def tuned_eps(name: str, problem: SVRPrimal, best: float) -> tuple[float, float]:
    """The largest ``-e`` of the ladder whose model is within RTOL of ``best`` and its relative
    distance; if none is, the ladder's last."""
    distance = np.inf
    for eps in EPS_LADDER:
        distance = relative(registry.get(name, eps=eps).solve(problem).primal, best)
        if distance <= RTOL:
            break
    return eps, distance


def median_times(anchor, ours, problem, repeat: int):
    """Interleaved medians: LIBLINEAR's train call, our wall time; and our last record."""
    t_ll, t_ours, result = [], [], None
    for _ in range(repeat):
        t_ll.append(anchor.solve(problem).solve_time)
        result = ours.solve(problem)
        t_ours.append(result.wall_time)
    return statistics.median(t_ll), statistics.median(t_ours), result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 4000 instead of 20 000")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--C", type=float, nargs="+", default=[1.0, 100.0])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # -s 13's 300-epoch cap warns; its reach is printed
    print(f"{'case':<22} {'loss':<8} {'C':>5} {'LIBLINEAR':<6} {'-e':>6} {'LL reach':>9} "
          f"{'t_LL (s)':>9} {'ours':<10} {'tol':>7} {'t_ours (s)':>10} {'ours/LL':>8} "
          f"{'iters':>6} {'gap':>8}")  # fmt: skip
    for case, (X, y) in cases(args.quick).items():
        for C in args.C:
            for loss, (ours_name, anchor_name, flag) in PAIRS.items():
                problem = SVRPrimal(X, y, C=C, epsilon=0.1, loss=loss, bias="regularized")
                best = optimum(problem)
                eps, reach = tuned_eps(anchor_name, problem, best)
                tol = max(RTOL, reach)
                ours = registry.get(ours_name, tol=tol, trace=False)
                ours.solve(problem)  # compiles before the timed runs
                anchor = registry.get(anchor_name, eps=eps)
                t_ll, t_ours, result = median_times(anchor, ours, problem, args.repeat)
                print(f"{case:<22} {'squared' if problem.squared else 'plain':<8} {C:>5g} "
                      f"{flag:<6} {eps:>6.0e} {reach:>9.1e} {t_ll:>9.3f} {ours_name:<10} "
                      f"{tol:>7.1e} {t_ours:>10.3f} {t_ours / t_ll:>8.2f} "
                      f"{result.iterations:>6d} {result.rel_gap:>8.1e}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
