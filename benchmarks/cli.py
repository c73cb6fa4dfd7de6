"""The ``svmbench`` command line: ``list``, ``solve`` and ``run``.

Only this module prints.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings

from rich.console import Console
from rich.table import Table

from problems import PROBLEMS
from problems.datasets import describe as describe_datasets
from problems.datasets import load

#: A fixed width when not on a terminal, so that tables stay readable in logs and CI.
console = Console(width=None if sys.stdout.isatty() else 160)


def _fmt(x: float, spec: str = ".2e") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def cmd_list(args: argparse.Namespace) -> int:
    from solvers import registry

    table = Table(title="Problems")
    table.add_column("kind")
    table.add_column("description")
    for kind, cls in PROBLEMS.items():
        table.add_row(kind, (cls.__doc__ or "").strip().splitlines()[0])
    console.print(table)

    table = Table(title="Solvers (✓ = accepts the problem kind with at least one setting)")
    table.add_column("solver")
    table.add_column("iterations in")
    for kind in PROBLEMS:
        table.add_column(kind)
    for name in registry.names():
        cls = registry.solver_class(name)
        marks = ["✓" if PROBLEMS[k] in cls.supported else "" for k in PROBLEMS]
        table.add_row(name, cls.iteration_unit, *marks)
    console.print(table)

    table = Table(title="Data sets (spec: name:key=value,...)")
    table.add_column("name")
    table.add_column("description")
    for name, text in describe_datasets():
        table.add_row(name, text)
    console.print(table)
    return 0


def _problem_params(args: argparse.Namespace) -> dict:
    params = {"kind": args.problem}
    for name in ("C", "loss", "bias", "kernel", "gamma", "degree", "coef0", "bias_scale"):
        value = getattr(args, name)
        if value is not None:
            params[name] = value
    return params


def _parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--option must be KEY=VALUE, got {pair!r}")
        key, text = pair.split("=", 1)
        for convert in (int, float):
            try:
                options[key] = convert(text)
                break
            except ValueError:
                continue
        else:
            options[key] = {"true": True, "false": False}.get(text.lower(), text)
    return options


def cmd_solve(args: argparse.Namespace) -> int:
    from benchmarks.cases import make_problem
    from benchmarks.runner import accuracy
    from solvers import registry

    dataset = load(args.data)
    problem = make_problem(_problem_params(args), dataset)
    solver = registry.get(args.solver, **_parse_options(args.option))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solver.solve(problem)
    table = Table(title=f"{args.solver} on {problem.describe()}", show_header=False)
    rows = [
        ("status", result.status.value),
        ("message", result.message),
        ("primal objective", _fmt(result.primal, ".10g")),
        ("dual objective", _fmt(result.dual, ".10g")),
        ("duality gap", _fmt(result.gap)),
        ("relative gap", _fmt(result.rel_gap)),
        ("certified", str(result.certified)),
        ("iterations", f"{result.iterations} {result.iteration_unit}"),
        ("solve time", f"{result.solve_time:.4f} s"),
        ("compile time", f"{result.compile_time:.4f} s"),
        ("training accuracy", _fmt(accuracy(problem, result), ".4f")),
    ]
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from benchmarks.cases import expand, load_suite
    from benchmarks.runner import run_cases

    suite = load_suite(args.suite)
    cases, skipped = expand(suite)
    console.print(
        f"suite [bold]{suite['name']}[/bold]: {len(cases)} cases, "
        f"{len(skipped)} combinations skipped"
    )
    table = Table(title=f"svmbench run {suite['name']}")
    for col in (
        "problem",
        "data",
        "solver",
        "status",
        "time (s)",
        "iters",
        "rel gap",
        "dist to ref",
        "acc",
    ):
        table.add_column(col)

    def row(record):
        r = record.result
        params = ",".join(f"{k}={v}" for k, v in record.case.problem.items() if k != "kind")
        table.add_row(
            f"{record.case.problem_kind}({params})",
            record.case.data,
            record.case.solver,
            r.status.value,
            f"{r.solve_time:.4f}",
            str(r.iterations),
            _fmt(r.rel_gap),
            _fmt(record.distance),
            _fmt(record.accuracy, ".3f"),
        )
        console.print(f"  done: {record.case.label()}  [{r.status.value}, {r.solve_time:.3f} s]")

    run_cases(cases, on_record=row)
    console.print(table)
    if args.verbose:
        for s in skipped:
            console.print(f"  skipped {s.label}: {s.reason}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="svmbench", description="Train SVMs by many methods and benchmark them honestly."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="problems, solvers, data sets, and which solver accepts what")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("solve", help="solve one problem with one solver and print the result")
    p.add_argument("--problem", required=True, choices=sorted(PROBLEMS))
    p.add_argument("--data", required=True, help="data spec, e.g. gaussian:n=200,d=5,sep=1")
    p.add_argument("--solver", required=True)
    p.add_argument("--C", type=float)
    p.add_argument("--loss", choices=["hinge", "squared_hinge"])
    p.add_argument("--bias", choices=["free", "regularized", "none"])
    p.add_argument("--bias-scale", dest="bias_scale", type=float)
    p.add_argument("--kernel", choices=["linear", "poly", "rbf", "sigmoid", "precomputed"])
    p.add_argument("--gamma", type=float)
    p.add_argument("--degree", type=int)
    p.add_argument("--coef0", type=float)
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="solver option, e.g. --option tol=1e-8 (repeatable)",
    )
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("run", help="run a benchmark suite (default: the built-in default suite)")
    p.add_argument("suite", nargs="?", default="default", help="suite name or TOML path")
    p.add_argument("-v", "--verbose", action="store_true", help="also list skipped combinations")
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
