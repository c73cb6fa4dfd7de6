"""What the rounding allowance adds to a small certificate, problem by problem.

    OPENBLAS_NUM_THREADS=1 python -m svmbench.benchmarks.studies.bench_rounding_cost
        [--blocks 30] [--calls 20]

Iris, standardized (ν-SVC and the logistic loss on versicolor against virginica, ε-SVR, ν-SVR,
one-class and the linear SVR on three features predicting the fourth, the hard margin on setosa
against versicolor, Crammer–Singer and the multinomial loss on the three classes), plus the
logistic loss on breast cancer; each at Clarabel's optimum (Newton's for the logistic losses) at
``tol = 1e-8``. Then a general QP (RBF C-SVC forms of 40 and 400 Gaussian points, C = 1 and
1e6, the barrier's optimum), the chain-structured hinge (12 and 150 digit sequences, a random
w), and the linear kernel dual at C = 1e6 (iris, breast cancer; ``auto``'s point), where its
margins are recomputed in long double. Each certificate is timed at that point with its allowance
(:mod:`~problems.rounding_scores`) and with the allowance's function replaced by one returning 0,
in ``--blocks`` interleaved blocks of ``--calls`` calls (after three untimed ones per block); the
medians, their difference, the allowance's function alone (median of 1000 calls) and the
allowance over ``max(1, |P|)`` are printed. The first line is
:func:`~benchmarks.harness.environment.summary`. Timings on a shared machine are noisy: compare
within one run.
"""

from __future__ import annotations

import argparse
import importlib
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.preprocessing import StandardScaler

from svmbench.benchmarks.harness.environment import summary
from svmbench.problems.general_dual import GeneralDual
from svmbench.problems.general_qp import GeneralQP
from svmbench.problems.hard_margin import HardMarginPrimal
from svmbench.problems.kernel_dual import KernelDual
from svmbench.problems.kernels import Kernel
from svmbench.problems.logistic import Logistic
from svmbench.problems.multiclass import MulticlassHinge
from svmbench.problems.multinomial_logistic import MultinomialLogistic
from svmbench.problems.nu_svc import NuSVCDual
from svmbench.problems.nu_svr import NuSVRDual
from svmbench.problems.one_class import OneClassDual
from svmbench.problems.structured import ChainStructuredHinge, digit_sequences
from svmbench.problems.svr import SVRDual
from svmbench.problems.svr_linear import SVRPrimal
from svmbench.solvers import registry

#: The function each problem's module calls for its allowance.
ALLOWANCE = {
    SVRDual: "kernel_score_rounding",
    NuSVCDual: "kernel_score_rounding",
    NuSVRDual: "kernel_score_rounding",
    OneClassDual: "kernel_score_rounding",
    SVRPrimal: "svr_linear_rounding",
    Logistic: "logistic_rounding",
    HardMarginPrimal: "hard_margin_rounding",
    MulticlassHinge: "multiclass_rounding",
    MultinomialLogistic: "multinomial_rounding",
    GeneralQP: "general_qp_rounding",
    ChainStructuredHinge: "chain_rounding",
    KernelDual: "kernel_dual_rounding",
}
#: The allowances that return ``(P, D, rounding)`` (P and D their last positional arguments).
CORRECTING = ("kernel_score_rounding", "general_qp_rounding")


def cases():
    X, t = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = t > 0
    Xb, yb = np.ascontiguousarray(X[keep]), np.where(t[keep] == 1, 1.0, -1.0)
    Xr, yr = np.ascontiguousarray(X[:, :3]), X[:, 3].copy()
    Xh, yh = np.ascontiguousarray(X[t < 2]), np.where(t[t < 2] == 0, 1.0, -1.0)
    B = load_breast_cancer()
    XB, yB = StandardScaler().fit_transform(B.data), np.where(B.target > 0, 1.0, -1.0)
    return [
        ("svr (kernel)", SVRDual(Xr, yr, C=1.0, epsilon=0.1), "clarabel"),
        ("nu_svc", NuSVCDual(Xb, yb), "clarabel"),
        ("nu_svr", NuSVRDual(Xr, yr), "clarabel"),
        ("one_class", OneClassDual(Xr), "clarabel"),
        ("svr (linear)", SVRPrimal(Xr, yr, C=1.0, epsilon=0.1), "clarabel"),
        ("logistic", Logistic(Xb, yb), "logistic_newton"),
        ("logistic (breast)", Logistic(XB, yB), "logistic_newton"),
        ("hard_margin", HardMarginPrimal(Xh, yh), "clarabel"),
        ("crammer_singer", MulticlassHinge(X, t), "clarabel"),
        ("multinomial", MultinomialLogistic(X, t), "multinomial_newton"),
        *[(f"general_qp n={n} C={C:g}", _general_qp(n, C), "barrier") for n in (40, 400)
          for C in (1.0, 1e6)],
        *[(f"chain {n} seq.", *_chain(n)) for n in (12, 150)],
        ("kernel lin. C=1e6", KernelDual(Xb, yb, C=1e6, kernel="linear"), "auto"),
        ("k. lin. breast 1e6", KernelDual(XB, yB, C=1e6, kernel="linear"), "auto"),
    ]  # fmt: skip


def _general_qp(n: int, C: float) -> GeneralQP:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    ones = np.ones(n)
    form = GeneralDual(X, Kernel("rbf", 0.2), np.arange(n), y, -ones, C * ones, "one", 0 * ones)
    return GeneralQP(form)


def _chain(n: int):
    data = digit_sequences(n, 2, seed=1)
    problem = ChainStructuredHinge(data.X, data.y, data.lengths)
    return problem, {"w": 0.1 * np.random.default_rng(2).normal(size=problem.n_features)}


def _median_us(call, n: int) -> float:
    times = []
    for _ in range(n):
        tic = time.perf_counter()
        call()
        times.append(time.perf_counter() - tic)
    return float(np.median(times)) * 1e6


def measure(problem, variables, blocks: int, calls: int) -> dict:
    module = importlib.import_module(type(problem).__module__)
    name = ALLOWANCE[type(problem)]
    real = getattr(module, name)
    if name == "kernel_dual_rounding":

        def stub(problem, a, g, m, b, sum_ay, quad, loss, squared):
            return quad + loss, float(a.sum()) - quad - squared, 0.0
    elif name in CORRECTING:

        def stub(*args, **options):
            return args[-2], args[-1], 0.0
    else:

        def stub(*args, **options):
            return 0.0

    captured = []

    def spy(*args, **options):
        captured.append((args, options))
        return real(*args, **options)

    times = {"with": [], "without": []}
    try:
        setattr(module, name, spy)
        cert = problem.certificate(**variables)
        for block in range(blocks):
            order = (("with", real), ("without", stub))
            for arm, function in order if block % 2 else order[::-1]:
                setattr(module, name, function)
                for _ in range(3):
                    problem.certificate(**variables)
                for _ in range(calls):
                    tic = time.perf_counter()
                    problem.certificate(**variables)
                    times[arm].append(time.perf_counter() - tic)
    finally:
        setattr(module, name, real)
    args, options = captured[0]
    return {
        "with": float(np.median(times["with"])) * 1e6,
        "without": float(np.median(times["without"])) * 1e6,
        "alone": _median_us(lambda: real(*args, **options), 1000),
        "relative": cert.rounding / max(1.0, abs(cert.primal)),
        "rel_gap": cert.rel_gap,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=30)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args(argv)
    print(summary())
    print(
        f"{'problem':18s} {'without µs':>11s} {'with µs':>9s} {'added':>8s} {'alone µs':>9s} "
        f"{'allowance/|P|':>14s} {'rel. gap':>9s}"
    )
    for label, problem, solver in cases():
        if isinstance(solver, dict):  # the point itself
            variables = solver
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                variables = registry.get(solver, tol=1e-8).solve(problem).variables
        m = measure(problem, variables, args.blocks, args.calls)
        print(
            f"{label:18s} {m['without']:11.1f} {m['with']:9.1f} {m['with'] - m['without']:8.1f} "
            f"{m['alone']:9.1f} {m['relative']:14.2e} {m['rel_gap']:9.1e}"
        )


if __name__ == "__main__":
    main()
