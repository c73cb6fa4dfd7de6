"""The ``svmbench`` command line: ``list``, ``solve``, ``predict``, ``select``, ``compare``,
``run``, ``results``, ``report``, ``check``.

Only this module prints.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings

import numpy as np
from rich.console import Console
from rich.table import Table

import svmbench
from svmbench.benchmarks.cases import REFERENCES
from svmbench.problems import PROBLEMS
from svmbench.problems.datasets import describe as describe_datasets
from svmbench.problems.datasets import load

DEFAULT_DB = "svmbench.sqlite"

#: A fixed width when not on a terminal, so that tables stay readable in logs and CI.
console = Console(width=None if sys.stdout.isatty() else 160)


def _fmt(x: float, spec: str = ".2e") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def cmd_list(args: argparse.Namespace) -> int:
    from svmbench.solvers import registry

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

    from svmbench.benchmarks import anchors

    table = Table(title="Anchors (official LIBSVM/LIBLINEAR bindings, scikit-learn, oneDAL)")
    table.add_column("anchor")
    table.add_column("installed")
    for kind in PROBLEMS:
        table.add_column(kind)
    for name, why in sorted(anchors.available().items()):
        cls = anchors.ANCHORS[name]
        marks = ["✓" if PROBLEMS[k] in cls.supported else "" for k in PROBLEMS]
        table.add_row(name, "yes" if why is None else f"no: {why}", *marks)
    console.print(table)
    console.print(
        "chain_structured_hinge: sequences, built by svmbench.problems.structured."
        "digit_sequences (solver ssvm_sgd); ranking: svmbench.problems.ranking turns preference "
        "pairs into a soft_margin_primal problem"
    )

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
    from svmbench.benchmarks.cases import make_problem, make_solver
    from svmbench.benchmarks.evaluation import accuracy

    dataset = load(args.data)
    problem = make_problem(_problem_params(args), dataset)
    solver = make_solver(args.solver, **_parse_options(args.option))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solver.solve(problem)
    table = Table(title=f"{args.solver} on {problem.describe()}", show_header=False)
    rows = []
    if "auto" in result.info:  # auto says which method it ran and why
        chosen = result.info["auto"]
        rows.append(("auto chose", f"{chosen['chose']}: {chosen['why']}"))
    rows += [
        ("status", result.status.value),
        ("message", result.message),
        ("primal objective", _fmt(result.primal, ".10g")),
        ("dual objective", _fmt(result.dual, ".10g")),
        ("duality gap", _fmt(result.gap)),
        ("relative gap", _fmt(result.rel_gap)),
        ("certified", str(result.certified)),
        ("iterations", f"{result.iterations} {result.iteration_unit}"),
        ("wall time", f"{result.wall_time:.4f} s (what a stopwatch shows; JIT excluded)"),
        ("solve time", f"{result.solve_time:.4f} s (the method and its stopping tests)"),
        ("certify time", f"{result.certify_time:.4f} s (trace and final certificates)"),
        ("compile time", f"{result.compile_time:.4f} s"),
        ("training accuracy", _fmt(accuracy(problem, result), ".4f")),
    ]
    if dataset.X_test is not None:
        test = accuracy(problem, result, dataset.X_test, dataset.y_test)
        rows.append(("test accuracy", f"{_fmt(test, '.4f')} ({dataset.X_test.shape[0]} points)"))
    if args.save:
        from svmbench.problems.models import save_model

        if result.model is None:
            raise ValueError(f"--save: the result has no model (status {result.status.value})")
        save_model(result.model, args.save)
        rows.append(("model saved to", args.save))
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from svmbench.problems.models import MulticlassModel, load_model

    model = load_model(args.model)
    dataset = load(args.data)
    if args.part == "test":
        if dataset.X_test is None:
            raise ValueError("--part test: the data spec has no split (add split=0.3)")
        X, y = dataset.X_test, dataset.y_test
    else:
        X, y = dataset.X, dataset.y
    multiclass = isinstance(model, MulticlassModel)
    if multiclass == dataset.is_binary:
        raise ValueError(
            f"the model is {'multiclass' if multiclass else 'binary'} but the data set is "
            f"{'binary' if dataset.is_binary else 'multiclass'}"
        )
    pred = model.predict(X)
    if args.out:
        if args.out.endswith(".npy"):
            np.save(args.out, pred)
        else:
            np.savetxt(args.out, pred, fmt="%g", delimiter=",")
        console.print(f"wrote {pred.shape[0]} predictions to {args.out}")
    console.print(f"{type(model).__name__} on {args.data} ({args.part}: {X.shape[0]} points)")
    if y is not None:
        console.print(f"accuracy: {np.mean(pred == y):.4f}")
        labels = np.unique(np.concatenate([np.asarray(y), pred]))
        table = Table(title="confusion matrix (rows: true, columns: predicted)")
        table.add_column("")
        for label in labels:
            table.add_column(f"{label:g}")
        for true in labels:
            counts = [int(np.sum((y == true) & (pred == p))) for p in labels]
            table.add_row(f"{true:g}", *map(str, counts))
        console.print(table)
    return 0


def _settings_overrides(args: argparse.Namespace) -> dict:
    return {
        "tol": getattr(args, "tol", None),
        "time_limit": getattr(args, "time_limit", None),
        "memory_limit_mb": getattr(args, "memory_limit", None),
        "repeat": getattr(args, "repeat", None),
        "threads": getattr(args, "threads", None),
        "split": getattr(args, "split", None),
        "reference": getattr(args, "reference", None),
    }


def _suite_from_args(args: argparse.Namespace) -> dict:
    """The suite named by ``args.suite``, or one built from ``--problem/--data/--solver``."""
    from svmbench.benchmarks.suite_files import load_suite

    if args.problem or args.data or args.solver:
        if args.suite is not None:
            raise ValueError("give either a suite or --problem/--data/--solver, not both")
        if not (args.problem and args.data):
            raise ValueError("a suite from flags needs --problem and at least one --data")
        problem = {"kind": args.problem}
        for name in ("C", "loss", "bias", "kernel", "gamma", "degree", "coef0", "bias_scale"):
            value = getattr(args, name, None)
            if value is not None:
                problem[name] = value
        return {
            "name": "cli",
            "problems": [problem],
            "data": list(args.data),
            "solvers": list(args.solver or ["*"]),
            "seeds": list(args.seeds or [0]),
        }
    suite = load_suite(args.suite or "default")
    if args.seeds:
        suite["seeds"] = list(args.seeds)
    return suite


def _summary_table(title: str, rows: list[dict]) -> Table:
    table = Table(title=title)
    for col in (
        "problem",
        "data",
        "solver",
        "status",
        "wall (s)",
        "solve (s)",
        "certify (s)",
        "iters",
        "rel gap",
        "dist to ref",
        "acc",
        "MB",
    ):
        table.add_column(col, overflow="fold")
    for r in rows:
        params = ",".join(f"{k}={v}" for k, v in sorted(r["problem"].items()) if k != "kind")
        times = [_fmt(r.get(k), ".4f") for k in ("wall_time", "solve_time", "certify_time")]
        if r.get("parallel"):
            times[0] += " ∥"
        acc = _fmt(r.get("accuracy"), ".3f")
        if r.get("accuracy_on") == "test" and acc != "-":
            acc += "ᵗ"
        table.add_row(
            f"{r['problem_kind']}({params})",
            r["data"],
            r["solver"],
            r["status"],
            *times,
            "-" if r.get("iterations") is None else str(r["iterations"]),
            _fmt(r.get("rel_gap")),
            _fmt(r.get("distance")),
            acc,
            _fmt(r.get("peak_memory_mb"), ".0f"),
        )
    return table


def _print_skipped(skipped, verbose: bool) -> None:
    from collections import Counter

    if verbose:
        for s in skipped:
            console.print(f"  skipped {s.label}: {s.reason}")
    elif skipped:
        for reason, count in Counter(s.reason for s in skipped).most_common(8):
            console.print(f"  skipped ×{count}: {reason}")


def _run_with_progress(cases, settings, args, on_record) -> list:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from svmbench.benchmarks.execution import run_cases

    progress = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
    with progress:
        task = progress.add_task("starting", total=len(cases))

        def started(case):
            progress.update(task, description=case.label()[:90])

        def finished(record):
            on_record(record)
            progress.advance(task)
            if args.verbose:
                progress.console.print(
                    f"  done: {record.case.label()}  [{record.status}, "
                    f"{_fmt(record.solve_time, '.3f')} s]"
                )

        return run_cases(
            cases,
            settings,
            jobs=args.jobs,
            cluster=args.cluster,
            cache_dir=args.cache_dir,
            in_process=args.in_process,
            on_start=started,
            on_record=finished,
        )


def cmd_run(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.cases import Settings, expand
    from svmbench.benchmarks.environment import environment
    from svmbench.benchmarks.execution import warm_up
    from svmbench.benchmarks.report import write_report
    from svmbench.benchmarks.store import Store

    suite = _suite_from_args(args)
    settings = Settings.from_suite(suite, **_settings_overrides(args))
    cases, skipped = expand(suite, settings, jobs=args.jobs)
    store = Store(args.db)
    args.cache_dir = str(store.cache_dir)
    retry = ("error", "timeout", "crashed") if args.retry_errors else ("error",)
    done = store.finished_keys(retry=retry) if args.resume else set()
    todo = [c for c in cases if c.key not in done]
    console.print(
        f"suite [bold]{suite['name']}[/bold]: {len(cases)} cases "
        f"({len(cases) - len(todo)} already in {args.db}, {len(todo)} to run), "
        f"{len(skipped)} combinations skipped"
    )
    _print_skipped(skipped, args.verbose)
    if todo:
        compile_times = warm_up(todo)
        slow = {k: round(v, 2) for k, v in compile_times.items() if v > 0.05}
        if slow:
            console.print(f"JIT warm-up (s): {slow}")
        run_id = store.start_run(
            suite["name"],
            argv=sys.argv,
            settings=dict(vars(settings)),
            environment=environment(),
            warm_up=compile_times,
        )
        _run_with_progress(
            todo, settings, args, lambda r: store.add(r, run_id=run_id, suite=suite["name"])
        )
    rows = store.records(keys=[c.key for c in cases])
    console.print(_summary_table(f"svmbench run {suite['name']} ({len(rows)} records)", rows))
    if args.report != "none":
        out = args.report or f"svmbench-report/{suite['name']}"
        path = write_report(rows, out, title=f"svmbench: {suite['name']} suite")
        console.print(f"report: {path}")
    store.close()
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.store import Store

    filters = {
        "suite": args.suite,
        "solver": args.solver,
        "data": args.data,
        "problem_kind": args.problem,
        "status": args.status,
        "latest": not args.all,
    }
    with Store(args.db, create=False) as store:
        if args.csv:
            text = store.to_csv(None if args.csv == "-" else args.csv, **filters)
            if args.csv == "-":
                sys.stdout.write(text)
            else:
                console.print(f"wrote {text.count(chr(10)) - 1} records to {args.csv}")
            return 0
        rows = store.records(**filters)
    console.print(_summary_table(f"{len(rows)} records in {args.db}", rows))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.report import write_report
    from svmbench.benchmarks.store import Store

    with Store(args.db, create=False) as store:
        rows = store.records(suite=args.suite)
    if not rows:
        console.print(
            f"[red]error:[/red] no records in {args.db}"
            + (f" for suite {args.suite!r}" if args.suite else "")
        )
        return 2
    out = args.out or ("reports/" + (args.suite or "all"))
    title = args.title or f"svmbench: {args.suite or 'all'} " + (
        "suite" if args.suite else "records"
    )
    path = write_report(rows, out, title=title)
    console.print(f"report: {path} ({len(list(path.parent.glob('*.png')))} figures)")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.cases import Settings, expand
    from svmbench.benchmarks.check import EXACT_RTOL, STOCHASTIC_RTOL, judge
    from svmbench.benchmarks.execution import warm_up
    from svmbench.benchmarks.store import Store
    from svmbench.benchmarks.suite_files import load_suite

    suite = load_suite(args.suite)
    overrides = _settings_overrides(args)
    overrides["reference"] = "osqp"
    settings = Settings.from_suite(suite, **overrides)
    cases, skipped = expand(suite, settings, jobs=args.jobs)
    console.print(
        f"check [bold]{suite['name']}[/bold]: {len(cases)} cases against the OSQP reference "
        f"(Clarabel where OSQP stops short); rtol {args.rtol or EXACT_RTOL:.0e} exact, "
        f"{args.stochastic_rtol or STOCHASTIC_RTOL:.0e} stochastic"
    )
    _print_skipped(skipped, args.verbose)
    warm_up(cases)
    store = Store(args.db) if args.db else None  # check stores only when asked (--db)
    args.cache_dir = str(store.cache_dir) if store else None
    on_record = (lambda r: store.add(r, suite=suite["name"] + ":check")) if store else None
    records = _run_with_progress(cases, settings, args, on_record or (lambda r: None))
    verdicts = [judge(r, rtol=args.rtol, stochastic_rtol=args.stochastic_rtol) for r in records]
    failed = [v for v in verdicts if not v.ok]
    if failed:
        table = Table(title=f"{len(failed)} of {len(verdicts)} cases FAIL")
        for col in ("case", "rtol", "why"):
            table.add_column(col, overflow="fold")
        for v in failed:
            table.add_row(v.record.case.label(), f"{v.rtol:.0e}", v.reason)
        console.print(table)
    else:
        console.print(f"all {len(verdicts)} cases agree with the reference optimum")
    if store:
        store.close()
    return 1 if failed else 0


def _add_problem_flags(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--problem", required=required, choices=sorted(PROBLEMS))
    p.add_argument("--C", type=float)
    p.add_argument("--loss", choices=["hinge", "squared_hinge"])
    p.add_argument("--bias", choices=["free", "regularized", "none"])
    p.add_argument("--bias-scale", dest="bias_scale", type=float)
    p.add_argument("--kernel", choices=["linear", "poly", "rbf", "sigmoid", "precomputed"])
    p.add_argument("--gamma", type=float)
    p.add_argument("--degree", type=int)
    p.add_argument("--coef0", type=float)


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=DEFAULT_DB, help=f"SQLite results file (default {DEFAULT_DB})")
    p.add_argument("-j", "--jobs", type=int, default=1, help="cases run in parallel locally")
    p.add_argument("--cluster", metavar="ADDRESS", help="run the cases on a Dask scheduler")
    p.add_argument(
        "--in-process",
        dest="in_process",
        action="store_true",
        help="run in this process, no worker, no time limit (debugging)",
    )
    p.add_argument("--tol", type=float, help="solver tolerance for every solver")
    p.add_argument("--time-limit", dest="time_limit", type=float, help="seconds per case")
    p.add_argument("--memory-limit", dest="memory_limit", type=float, help="MB per case")
    p.add_argument("--repeat", type=int, help="solves per case (median time reported)")
    p.add_argument("--threads", type=int, help="Numba and BLAS threads per case")
    p.add_argument("--split", type=float, help="seeded test split added to every data spec")
    p.add_argument("--reference", choices=[*REFERENCES, "none"])
    p.add_argument("--seeds", type=int, nargs="+")
    p.add_argument("-v", "--verbose", action="store_true", help="list every skip and case")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="svmbench", description="Train SVMs by many methods and benchmark them honestly."
    )
    parser.add_argument("--version", action="version", version=f"svmbench {svmbench.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="problems, solvers, data sets, and which solver accepts what")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("solve", help="solve one problem with one solver and print the result")
    _add_problem_flags(p, required=True)
    p.add_argument("--data", required=True, help="data spec, e.g. gaussian:n=200,d=5,sep=1")
    p.add_argument(
        "--solver",
        default="auto",
        help="solver name (default: auto, which picks the fastest certified method and says why)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="solver option, e.g. --option tol=1e-8 (repeatable)",
    )
    p.add_argument("--save", metavar="MODEL", help="save the model (.npz, svmbench format)")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("predict", help="predict with a saved model on a data spec")
    p.add_argument("model", help="a model file written by solve --save")
    p.add_argument("--data", required=True, help="data spec (labels: accuracy and confusion)")
    p.add_argument("--part", choices=["all", "test"], default="all",
                   help="the whole data set (default) or its test split")  # fmt: skip
    p.add_argument("--out", help="write the predictions (.npy, or CSV otherwise)")
    p.set_defaults(func=cmd_predict)

    from svmbench.benchmarks import compare, select

    select.add_parser(sub)
    compare.add_parser(sub)

    p = sub.add_parser("run", help="run a benchmark suite (default: the built-in default suite)")
    p.add_argument("suite", nargs="?", default=None, help="suite name or TOML path")
    _add_problem_flags(p, required=False)
    p.add_argument("--data", action="append", help="data spec (repeatable; with --problem)")
    p.add_argument("--solver", action="append", help="solver name (repeatable; '*' = all)")
    _add_run_flags(p)
    p.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="skip cases already in the database (default; their error rows are retried); "
        "--no-resume reruns them",
    )
    p.add_argument(
        "--retry-errors",
        dest="retry_errors",
        action="store_true",
        help="on resume, also retry the cases that timed out or crashed",
    )
    p.add_argument(
        "--report",
        default=None,
        metavar="DIR",
        help="where to write the report (default svmbench-report/SUITE; 'none': no report)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("results", help="list and filter stored records, export them as CSV")
    p.add_argument("--db", default=DEFAULT_DB)
    p.add_argument("--suite")
    p.add_argument("--solver")
    p.add_argument("--data", help="substring of the data spec")
    p.add_argument("--problem", choices=sorted(PROBLEMS))
    p.add_argument("--status")
    p.add_argument("--all", action="store_true", help="every record, not only the latest per case")
    p.add_argument("--csv", metavar="PATH", help="export as CSV to PATH ('-' for stdout)")
    p.set_defaults(func=cmd_results)

    p = sub.add_parser("report", help="write a Markdown report with PNG plots from the database")
    p.add_argument("--db", default=DEFAULT_DB)
    p.add_argument("--out", metavar="DIR", help="output directory (default reports/SUITE)")
    p.add_argument("--suite", help="only the records of this suite")
    p.add_argument("--title")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("check", help="fail (exit 1) where a solver misses the reference optimum")
    p.add_argument("suite", nargs="?", default="ci", help="suite name or TOML path (default ci)")
    p.add_argument(
        "--rtol",
        type=float,
        default=None,
        help="tolerance of exact methods on the primal value (default 1e-6)",
    )
    p.add_argument(
        "--stochastic-rtol",
        dest="stochastic_rtol",
        type=float,
        default=None,
        help="tolerance of stochastic methods (default 5e-2)",
    )
    _add_run_flags(p)
    p.set_defaults(func=cmd_check, db=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_numbers(args)
        return args.func(args)
    except (ValueError, TypeError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    except KeyboardInterrupt:
        console.print("interrupted; run the same command to resume (finished cases are stored)")
        return 130


#: Numeric flags and the smallest value each takes (every one must be finite).
_POSITIVE_FLAGS = {"jobs": 1, "repeat": 1, "threads": 1}
_STRICTLY_POSITIVE_FLAGS = ("tol", "time_limit", "memory_limit", "C", "bias_scale", "gamma",
                            "rtol", "stochastic_rtol")  # fmt: skip


def _check_numbers(args: argparse.Namespace) -> None:
    """Refuse ``--jobs 0``, ``--memory-limit -5``, ``--rtol -1``, ``--tol nan`` at once."""
    for name, low in _POSITIVE_FLAGS.items():
        value = getattr(args, name, None)
        if value is not None and value < low:
            raise ValueError(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
    for name in _STRICTLY_POSITIVE_FLAGS:
        value = getattr(args, name, None)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number > 0, got {value}")
    split = getattr(args, "split", None)
    if split is not None and not 0 < split < 1:
        raise ValueError(f"--split must be a fraction in (0, 1), got {split}")


if __name__ == "__main__":
    sys.exit(main())
