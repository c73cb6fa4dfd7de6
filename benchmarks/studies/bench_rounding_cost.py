"""What the rounding allowance adds to a small certificate, problem by problem.

    OPENBLAS_NUM_THREADS=1 python -m svmbench.benchmarks.studies.bench_rounding_cost
        [--blocks 30] [--calls 20]

Iris, standardized (ν-SVC and the logistic loss on versicolor against virginica, ε-SVR, ν-SVR,
one-class and the linear SVR on three features predicting the fourth, the hard margin on setosa
against versicolor, Crammer–Singer and the multinomial loss on the three classes), plus the
logistic loss on breast cancer; each at Clarabel's optimum (Newton's for the logistic losses) at
``tol = 1e-8``. Each certificate is timed at that point with its allowance
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
from svmbench.problems.hard_margin import HardMarginPrimal
from svmbench.problems.logistic import Logistic
from svmbench.problems.multiclass import MulticlassHinge
from svmbench.problems.multinomial_logistic import MultinomialLogistic
from svmbench.problems.nu_svc import NuSVCDual
from svmbench.problems.nu_svr import NuSVRDual
from svmbench.problems.one_class import OneClassDual
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
}


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
    ]


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
    if name == "kernel_score_rounding":

        def stub(problem, coef, g, P, D, **options):
            return P, D, 0.0
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = registry.get(solver, tol=1e-8).solve(problem)
        m = measure(problem, result.variables, args.blocks, args.calls)
        print(
            f"{label:18s} {m['without']:11.1f} {m['with']:9.1f} {m['with'] - m['without']:8.1f} "
            f"{m['alone']:9.1f} {m['relative']:14.2e} {m['rel_gap']:9.1e}"
        )


if __name__ == "__main__":
    main()
