"""``svmbench compare``: solvers and anchors side by side on one problem (the table is built by
:mod:`svmbench.benchmarks.harness.compare`; only this module prints)."""

from __future__ import annotations

import argparse

from svmbench.benchmarks.cli.common import (
    add_problem_flags,
    configured_solver,
    load_data,
    problem_params,
)
from svmbench.benchmarks.harness.compare import compare, format_table, parse_settings
from svmbench.benchmarks.harness.environment import summary
from svmbench.problems import problem_on_data


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``svmbench compare``."""
    parser = subparsers.add_parser(
        "compare",
        help="solvers and anchors side by side on one problem, judged by one certificate",
        description="Run solvers and anchors on one problem and compare their certified results.",
    )
    add_problem_flags(parser, required=True)
    parser.add_argument("--data", required=True, help="data spec, e.g. gaussian:n=2000,d=20,sep=1")
    parser.add_argument(
        "--solvers",
        "--solver",
        required=True,
        action="append",
        help="comma-separated solver/anchor names (repeatable: every one given is run)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs after one warm-up")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME.OPTION=VALUE",
        help="an option of one solver, e.g. liblinear.eps=1e-6 (repeatable)",
    )
    parser.add_argument(
        "--time-limit",
        dest="time_limit",
        type=float,
        help="seconds per solve for every solver that takes it (NAME.time_limit wins)",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip Clarabel's optimum")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """``svmbench compare``: prints the table (the only printing of this module)."""
    if args.repeat < 1:
        raise ValueError(f"--repeat must be >= 1, got {args.repeat}")
    params = problem_params(args)  # --kernel precomputed: the linear kernel's Gram matrix
    del params["kind"]
    names = [n.strip() for given in args.solvers for n in given.split(",") if n.strip()]
    options = parse_settings(args.set)
    _check_names(names, options)
    dataset = load_data(args.data)
    if args.problem == "kernel_dual" and params.get("kernel") == "precomputed":
        from svmbench.problems.kernels import kernel_matrix

        X = kernel_matrix(dataset.X, kernel="linear", gamma=1.0, degree=1, coef0=0.0)
    else:
        X = dataset.X
    problem = problem_on_data(args.problem, X, dataset.y, **params)
    if args.time_limit is not None:
        from svmbench.solvers import registry

        for name in names:
            if registry.accepts_option(registry.solver_class(name), "time_limit"):
                options.setdefault(name, {}).setdefault("time_limit", args.time_limit)
    rows = compare(
        problem, names, repeat=args.repeat, options=options, reference=not args.no_reference
    )
    print(f"{problem.describe()} on {dataset.spec}")
    print(summary("scikit-learn", "libsvm-official", "liblinear-official", "scikit-learn-intelex"))
    print(
        f"times: medians of {args.repeat} runs after one warm-up run; wall = the whole call "
        "(what a user waits), solve = the solver clock (the anchors: the library's train call)"
    )
    print()
    print(format_table(rows))
    return 0


def _check_names(names: list[str], options: dict[str, dict]) -> None:
    """Refuse unknown solver names (with the registry's "did you mean") in ``--solvers`` and
    ``--set``, and a ``--set`` for a solver that is not compared: it would change nothing."""
    from svmbench.solvers import registry

    if not names:
        raise ValueError("--solvers: no solver named (give NAME,NAME,...)")
    for name in names:
        try:
            registry.solver_class(name)
        except ValueError as exc:
            raise ValueError(f"--solvers: {exc}") from None
    for name, opts in options.items():
        configured_solver(name, opts, "--set")  # the name, each option and its value
        if name not in names:
            raise ValueError(
                f"--set: {name!r} is not one of --solvers ({', '.join(names)}): its options "
                "would change nothing"
            )
