"""The suite commands of the ``svmbench`` command line: ``run``, ``results``, ``report``, ``check``.

They share a results database (``--db``), the expansion of a suite into cases, the progress bar
around :func:`~svmbench.benchmarks.harness.execution.run_cases` and the summary table of the stored
records; the one-problem commands (``list``, ``solve``, ``predict``) and the entry point are in
:mod:`benchmarks.cli.main`, and the console this module prints to in :mod:`benchmarks.cli.common`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from rich.table import Table

from svmbench.benchmarks.cli.common import (
    add_problem_flags,
    console,
    fmt,
    print_warning,
    problem_params,
)
from svmbench.benchmarks.harness.files import check_output, check_output_folder
from svmbench.benchmarks.harness.settings import REFERENCES
from svmbench.problems import PROBLEMS

DEFAULT_DB = "svmbench.sqlite"


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
    from svmbench.benchmarks.harness.cases import check_seeds
    from svmbench.benchmarks.harness.suite_files import load_suite

    if args.seeds is not None:
        check_seeds(args.seeds, "--seeds")
    if args.problem or args.data or args.solver:
        if args.suite is not None:
            raise ValueError("give either a suite or --problem/--data/--solver, not both")
        if not (args.problem and args.data):
            raise ValueError("a suite from flags needs --problem and at least one --data")
        return {
            "name": "cli",
            "problems": [problem_params(args)],
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
        times = [fmt(r.get(k), ".4f") for k in ("wall_time", "solve_time", "certify_time")]
        if r.get("parallel"):
            times[0] += " ∥"
        acc = fmt(r.get("accuracy"), ".3f")
        if r.get("accuracy_on") == "test" and acc != "-":
            acc += "ᵗ"
        table.add_row(
            f"{r['problem_kind']}({params})",
            r["data"],
            r["solver"],
            r["status"],
            *times,
            "-" if r.get("iterations") is None else str(r["iterations"]),
            fmt(r.get("rel_gap")),
            fmt(r.get("distance")),
            acc,
            fmt(r.get("peak_memory_mb"), ".0f"),
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


def _run_with_progress(cases, settings, args, on_record, claim=None) -> list:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from svmbench.benchmarks.harness.execution import run_cases

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
                    f"{fmt(record.solve_time, '.3f')} s]"
                )

        def claimed(case) -> bool:
            if claim(case):
                return True
            progress.advance(task)  # another run's case: not waited for
            return False

        return run_cases(
            cases,
            settings,
            jobs=args.jobs,
            cluster=args.cluster,
            cache_dir=args.cache_dir,
            in_process=args.in_process,
            on_start=started,
            on_record=finished,
            claim=None if claim is None else claimed,
        )


def cmd_run(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.harness.cases import expand
    from svmbench.benchmarks.harness.report import check_report_folder, write_report
    from svmbench.benchmarks.harness.settings import Settings
    from svmbench.benchmarks.harness.store import Store, check_storable

    suite = _suite_from_args(args)
    settings = Settings.from_suite(suite, **_settings_overrides(args))
    report = None if args.report == "none" else args.report or f"svmbench-report/{suite['name']}"
    if report is not None:  # refused now rather than after the run
        check_report_folder(check_output_folder(report, "--report"), "--report")
    if args.cluster:  # reachable, before anything is compiled
        from svmbench.benchmarks.harness.execution import connect_cluster

        connect_cluster(args.cluster).close()
    cases, skipped = expand(suite, settings, jobs=args.jobs)
    for case in cases:  # a result that could not be stored is refused before it runs
        check_storable(case)
    with Store(args.db) as store:
        args.cache_dir = str(store.cache_dir)
        since = store.last_id()  # a case stored after this by another run is that run's
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
            _run_claimed(todo, suite, settings, args, store, since)
        rows = store.records(keys=[c.key for c in cases])
        _warn_bad_rows(store, args.db)
    console.print(_summary_table(f"svmbench run {suite['name']} ({len(rows)} records)", rows))
    if report is not None:
        path = write_report(
            rows, report, title=f"svmbench: {suite['name']} suite", suite=suite["name"]
        )
        console.print(f"report: {path}")
    return 0


def _run_claimed(todo, suite, settings, args, store, since: int) -> None:
    """Run the cases of ``todo`` that this run claims, storing each record as it finishes;
    Ctrl-C ends it with one line saying what was kept."""
    from svmbench.benchmarks.harness.environment import environment
    from svmbench.benchmarks.harness.execution import case_allowance, warm_up
    from svmbench.benchmarks.harness.store import StoreError

    stored, left = [], []
    try:
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

        def claim(case) -> bool:
            expires = time.time() + case_allowance(case, settings)
            if store.claim(case.key, run_id, since_id=since, expires=expires):
                return True
            left.append(case)
            return False

        def keep(record) -> None:
            stored.append(store.add(record, run_id=run_id, suite=suite["name"]))

        try:
            _run_with_progress(todo, settings, args, keep, claim=claim)
        finally:
            with contextlib.suppress(StoreError):
                store.release(run_id)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(
            f"interrupted; {len(stored)} finished results kept in {args.db} (run the same "
            "command to resume)"
        ) from None
    if left:
        console.print(
            f"{len(left)} cases were run or being run by another svmbench run on {args.db}: "
            "left to it"
        )


def _warn_bad_rows(store, db) -> None:
    """One warning line for the records :meth:`Store.records` left out, if any."""
    if store.bad_rows:
        shown = "; ".join(f"id {i}: {why}" for i, why in store.bad_rows[:3])
        more = f"; {len(store.bad_rows) - 3} more" if len(store.bad_rows) > 3 else ""
        count = len(store.bad_rows)
        print_warning(
            f"{db}: {count} damaged record{'s' if count > 1 else ''} skipped ({shown}{more})"
        )


def cmd_results(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.harness.exports import parquet_missing
    from svmbench.benchmarks.harness.store import Store

    filters = {
        "suite": args.suite,
        "solver": args.solver,
        "data": args.data,
        "problem_kind": args.problem,
        "status": args.status,
        "latest": not args.all,
    }
    inputs = [("the database of --db", args.db)]
    if args.csv and args.csv != "-":
        check_output(args.csv, "--csv", inputs=inputs)
    if args.parquet:
        why = parquet_missing()
        if why:
            raise ValueError(f"--parquet: {why}")
        check_output(args.parquet, "--parquet", inputs=inputs)
    with Store(args.db, create=False) as store:
        if args.parquet:
            count = store.to_parquet(args.parquet, **filters)
            _warn_bad_rows(store, args.db)
            console.print(f"wrote {count} records to {args.parquet}")
        if args.csv:
            text = store.to_csv(None if args.csv == "-" else args.csv, **filters)
            _warn_bad_rows(store, args.db)
            if args.csv == "-":
                sys.stdout.write(text)
            else:
                console.print(f"wrote {len(store.records(**filters))} records to {args.csv}")
        if args.csv or args.parquet:
            return 0
        rows = store.records(**filters)
        _warn_bad_rows(store, args.db)
    console.print(_summary_table(f"{len(rows)} records in {args.db}", rows))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.harness.report import (
        HTML_NAME,
        check_report_folder,
        own_files,
        write_report,
    )
    from svmbench.benchmarks.harness.store import Store

    out = args.out or ("svmbench-report/" + (args.suite or "all"))
    check_report_folder(check_output_folder(out, "--out"), "--out")
    with Store(args.db, create=False) as store:
        rows = store.records(suite=args.suite)
        _warn_bad_rows(store, args.db)
    if not rows:
        raise ValueError(
            f"no records in {args.db}" + (f" for suite {args.suite!r}" if args.suite else "")
        )
    title = args.title or f"svmbench: {args.suite or 'all'} " + (
        "suite" if args.suite else "records"
    )
    path = write_report(rows, out, title=title, suite=args.suite)
    figures = sum(name.endswith(".png") for name in own_files(path.parent))
    console.print(f"report: {path} ({figures} figures) and {path.parent / HTML_NAME}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.harness.cases import check_seeds, expand
    from svmbench.benchmarks.harness.check import EXACT_RTOL, STOCHASTIC_RTOL, judge
    from svmbench.benchmarks.harness.execution import connect_cluster, warm_up
    from svmbench.benchmarks.harness.settings import Settings
    from svmbench.benchmarks.harness.store import Store, check_storable
    from svmbench.benchmarks.harness.suite_files import load_suite

    suite = load_suite(args.suite)
    if args.seeds is not None:
        check_seeds(args.seeds, "--seeds")
        suite["seeds"] = list(args.seeds)
    overrides = _settings_overrides(args)
    overrides["reference"] = "osqp"
    settings = Settings.from_suite(suite, **overrides)
    if args.cluster:
        connect_cluster(args.cluster).close()
    cases, skipped = expand(suite, settings, jobs=args.jobs)
    console.print(
        f"check [bold]{suite['name']}[/bold]: {len(cases)} cases against the OSQP reference "
        f"(Clarabel where OSQP stops short); rtol {args.rtol or EXACT_RTOL:.0e} exact, "
        f"{args.stochastic_rtol or STOCHASTIC_RTOL:.0e} stochastic"
    )
    _print_skipped(skipped, args.verbose)
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(Store(args.db)) if args.db else None  # only when asked
        args.cache_dir = str(store.cache_dir) if store else None
        if store:
            for case in cases:
                check_storable(case)
        warm_up(cases)
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
    return 1 if failed else 0


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
    p.add_argument("--tol", type=float, help="certified relative gap asked of every solver")
    p.add_argument("--time-limit", dest="time_limit", type=float, help="seconds per case")
    p.add_argument("--memory-limit", dest="memory_limit", type=float, help="MB per case")
    p.add_argument("--repeat", type=int, help="solves per case (median time reported)")
    p.add_argument("--threads", type=int, help="Numba and BLAS threads per case")
    p.add_argument("--split", type=float, help="seeded test split added to every data spec")
    p.add_argument("--reference", choices=[*REFERENCES, "none"])
    p.add_argument("--seeds", type=int, nargs="+")
    p.add_argument("-v", "--verbose", action="store_true", help="list every skip and case")


def add_parsers(sub) -> None:
    """Register ``run``, ``results``, ``report`` and ``check``."""
    p = sub.add_parser("run", help="run a benchmark suite (default: the built-in default suite)")
    p.add_argument("suite", nargs="?", default=None, help="suite name or TOML path")
    add_problem_flags(p, required=False)
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
        help="where to write the report, README.md with PNG figures and report.html (default "
        "svmbench-report/SUITE; 'none': no report)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "results", help="list and filter stored records, export them as CSV or Parquet"
    )
    p.add_argument("--db", default=DEFAULT_DB, help=f"SQLite results file (default {DEFAULT_DB})")
    p.add_argument("--suite", help="only the records of this suite")
    p.add_argument("--solver", help="only the records of this solver")
    p.add_argument("--data", help="substring of the data spec")
    p.add_argument("--problem", choices=sorted(PROBLEMS), help="only this problem kind")
    p.add_argument("--status", help="only this status (optimal, max_iter, timeout, ...)")
    p.add_argument("--all", action="store_true", help="every record, not only the latest per case")
    p.add_argument(
        "--csv",
        metavar="PATH",
        help="export every stored column as CSV to PATH ('-' for stdout; JSON columns as text)",
    )
    p.add_argument(
        "--parquet",
        metavar="PATH",
        help="export every stored column as Parquet to PATH (needs the extra 'parquet': pyarrow)",
    )
    p.set_defaults(func=cmd_results)

    p = sub.add_parser(
        "report",
        help="write a report from the database: README.md with PNG figures and report.html, "
        "one self-contained page",
    )
    p.add_argument("--db", default=DEFAULT_DB, help=f"SQLite results file (default {DEFAULT_DB})")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default svmbench-report/SUITE, or svmbench-report/all)",
    )
    p.add_argument("--suite", help="only the records of this suite")
    p.add_argument("--title", help="the report's title (default: svmbench: SUITE suite)")
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
