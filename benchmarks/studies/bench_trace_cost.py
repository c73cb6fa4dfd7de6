"""What the default trace costs the stochastic solvers: ``wall_time / solve_time``.

Run ``OPENBLAS_NUM_THREADS=1 python -m svmbench.benchmarks.studies.bench_trace_cost [--repeat 3]``;
it prints, for Pegasos (``stop_rule="epochs"``) and the perceptron, the medians over the repeats of
``wall_time``, ``solve_time`` and ``certify_time``, their ratio ``wall/solve``, the number of trace
checkpoints, how many certificates were drawn and how many of them solved the near-margin QP of
``dual_from_primal`` (``problems._linear``). The target is ``wall/solve ≤ 1.2`` with the default
trace: at most 20 % on top of the method's own time.

Case (the one the target was set on): :class:`~problems.SoftMarginPrimal`, hinge, ``C = 1``, bias
``regularized`` (``--bias`` for the others), on ``gaussian:n=20000,d=50,sep=1,seed=0``; 20 epochs
each (``--epochs``). Both solvers are compiled once before the first timed run. Times are one
process, single-threaded BLAS when the variable above is set; the machine is stated in the output.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import warnings

import numpy as np

from svmbench.problems import SoftMarginPrimal, _linear, datasets
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning

DATA = "gaussian:n=20000,d=50,sep=1,seed=0"


class _Counts:
    """Counts ``dual_from_primal`` calls and the QPs they solve, by wrapping both."""

    def __init__(self) -> None:
        self.certificates = 0
        self.qps = 0
        self._dfp = _linear.LinearBinaryMixin.dual_from_primal
        self._qp = _linear.maximize_dual_on_subset

    def __enter__(self) -> _Counts:
        counts, dfp, qp = self, self._dfp, self._qp

        def counted_dfp(problem, *args, **kwargs):
            counts.certificates += 1
            return dfp(problem, *args, **kwargs)

        def counted_qp(*args, **kwargs):
            counts.qps += 1
            return qp(*args, **kwargs)

        _linear.LinearBinaryMixin.dual_from_primal = counted_dfp
        _linear.maximize_dual_on_subset = counted_qp
        return self

    def __exit__(self, *exc) -> None:
        _linear.LinearBinaryMixin.dual_from_primal = self._dfp
        _linear.maximize_dual_on_subset = self._qp


def measure(problem, name: str, options: dict, repeat: int) -> dict:
    """Medians over ``repeat`` solves (after one untimed solve that compiles)."""
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        registry.get(name, **options).solve(problem)
        for _ in range(repeat):
            with _Counts() as counts:
                r = registry.get(name, **options).solve(problem)
            rows.append(
                {
                    "wall": r.wall_time,
                    "solve": r.solve_time,
                    "certify": r.certify_time,
                    "ratio": r.wall_time / r.solve_time,
                    "trace": len(r.trace),
                    "certificates": counts.certificates,
                    "qps": counts.qps,
                    "rel_gap": r.rel_gap,
                }
            )
    return {k: statistics.median(row[k] for row in rows) for k in rows[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--bias", default="regularized", choices=("regularized", "free", "none"))
    parser.add_argument("--data", default=DATA)
    args = parser.parse_args(argv)

    ds = datasets.load(args.data)
    problem = SoftMarginPrimal(ds.X, ds.y, C=args.C, loss="hinge", bias=args.bias)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, Python "
        f"{platform.python_version()}, NumPy {np.__version__}; OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
    )
    print(f"{problem.describe()} on {args.data}; medians of {args.repeat} runs")
    header = (
        f"{'solver':<11}{'wall s':>9}{'solve s':>9}{'certify s':>11}{'wall/solve':>12}"
        f"{'trace':>7}{'certs':>7}{'QPs':>5}{'rel_gap':>10}"
    )
    print(header)
    cases = [
        ("pegasos", {"stop_rule": "epochs", "max_iter": args.epochs}),
        ("perceptron", {"max_iter": args.epochs}),
    ]
    for name, options in cases:
        m = measure(problem, name, options, args.repeat)
        print(
            f"{name:<11}{m['wall']:>9.3f}{m['solve']:>9.3f}{m['certify']:>11.3f}"
            f"{m['ratio']:>12.2f}{m['trace']:>7.0f}{m['certificates']:>7.0f}{m['qps']:>5.0f}"
            f"{m['rel_gap']:>10.2e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
