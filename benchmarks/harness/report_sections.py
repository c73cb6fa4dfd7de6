"""The text of a report: its header, the environment, the per-data tables and the section against
the anchors, as rows for :class:`~benchmarks.harness.report_page.Page`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from svmbench.benchmarks.harness.report_labels import (
    fmt,
    is_anchor,
    problem_label,
    solver_label,
)

#: The command that regenerates a committed report, ``{suite}`` filled in.
REGENERATE = "svmbench run {suite} --no-resume --report reports/{suite}"

#: What the Markdown of every report says, by which a report written before the manifest is known.
MARK = "Rendered by `svmbench report`"

INTRODUCTION = (
    "{count} records. " + MARK + " from the results database; every gap is certified by the "
    "problem, every distance is to the reference optimum (Clarabel or OSQP). Times: *wall* is "
    "the whole call, what a user waits (JIT compilation excluded); *solve* the method with its "
    "stopping tests (an anchor: the library's train call); *certify* the certificates drawn only "
    "for the trace and the record; medians over the repeats. `optimal` means certified to the "
    "solver's tol; `not_certified` a method's own rule stopped short of that."
)


def provenance(suite: str | None) -> list[str]:
    """Which package version and commit rendered the report, and how to render it again."""
    from importlib import metadata

    from svmbench.benchmarks.harness.environment import git_commit
    from svmbench.benchmarks.harness.suite_files import shipped_suites

    try:
        version = metadata.version("svmbench")
    except metadata.PackageNotFoundError:
        version = "unknown"
    lines = [f"Rendered by svmbench {version}, commit `{git_commit()}`."]
    if suite in shipped_suites():
        lines.append(
            f"The committed copy of this report (`reports/{suite}/`) is regenerated, from a "
            f"checkout, by `{REGENERATE.format(suite=suite)}`; by default a report is written "
            f"to `svmbench-report/{suite}/`, outside version control."
        )
    return lines


def environment_items(rows: list[dict[str, Any]]) -> list[str]:
    """The machine, versions, threads, jobs and commits the records were made with."""
    envs = [r["environment"] for r in rows if r.get("environment")]
    if not envs:
        return []
    env = envs[-1]
    machine = env.get("machine", {})
    versions = env.get("versions", {})
    threads = sorted(
        {
            ", ".join(f"{k} {v}" for k, v in sorted(r["threads"].items()))
            for r in rows
            if r.get("threads")
        }
    )
    commits = sorted({r.get("git_commit") for r in rows if r.get("git_commit")})
    jobs = sorted({r.get("jobs") or 1 for r in rows})
    return [
        f"machine: {machine.get('cpu', '?')}, {machine.get('physical_cores', '?')} cores / "
        f"{machine.get('logical_cores', '?')} threads, {machine.get('memory_gb', '?')} GB "
        f"({machine.get('platform', '')})",
        "versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        "threads per case: " + "; ".join(threads),
        f"cases run at once: {', '.join(map(str, jobs))}"
        + (" (timings marked ∥ were measured beside other cases)" if max(jobs) > 1 else ""),
        "git commit of the records: " + ", ".join(commits),
    ]


TABLE_HEADER = [
    "problem",
    "solver",
    "status",
    "wall (s)",
    "solve (s)",
    "certify (s)",
    "iterations",
    "rel. gap",
    "dist. to ref.",
    "accuracy",
    "peak MB",
]


def table_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """One row of :data:`TABLE_HEADER` per record, by problem then solver."""
    out = []
    for r in sorted(rows, key=lambda r: (problem_label(r), r["solver"])):
        certify = fmt(r.get("certify_time"), ".4f") + (" ∥" if r.get("parallel") else "")
        it = "–" if r.get("iterations") is None else f"{r['iterations']} {r['iteration_unit']}"
        acc = fmt(r.get("accuracy"), ".3f")
        if r.get("accuracy_on") == "test" and acc != "–":
            acc += " (test)"
        out.append(
            [
                problem_label(r),
                solver_label(r),
                r["status"],
                fmt(r.get("wall_time"), ".4f"),
                fmt(r.get("solve_time"), ".4f"),
                certify,
                it,
                fmt(r.get("rel_gap")),
                fmt(r.get("distance")),
                acc,
                fmt(r.get("peak_memory_mb"), ".0f"),
            ]
        )
    return out


ANCHOR_HEADER = [
    "data",
    "problem",
    "solver",
    "status",
    "solve (s)",
    "ratio",
    "anchor",
    "rel. gap",
    "dist. to ref.",
]
ANCHOR_TEXT = (
    "Median solve time over the fastest anchor's on the same problem (< 1: faster than the "
    "library). Each runs to its own stopping rule and tolerance (shown: `tol` is the "
    "certified gap asked for, an anchor's `eps` the library's native tolerance): the "
    "certified relative gap and the distance to the reference say how far each got."
)


def anchor_groups(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The records with a finite solve time per (data, problem) where an anchor and one of our
    methods both have one."""
    groups = defaultdict(list)
    for r in rows:
        if math.isfinite(r.get("solve_time") or math.nan):
            groups[(r["data"], problem_label(r))].append(r)
    return {
        key: grows
        for key, grows in sorted(groups.items())
        if 0 < sum(map(is_anchor, grows)) < len(grows)
    }


def anchor_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """Each solver's median solve time over the fastest anchor's, per (data, problem)."""
    out = []
    for (spec, plabel), grows in anchor_groups(rows).items():
        best = min((r for r in grows if is_anchor(r)), key=lambda r: r["solve_time"])
        for r in sorted(grows, key=lambda r: (is_anchor(r), r["solve_time"])):
            ratio = r["solve_time"] / best["solve_time"] if best["solve_time"] > 0 else math.nan
            out.append(
                [
                    spec,
                    plabel,
                    solver_label(r, tol=True),
                    r["status"],
                    fmt(r["solve_time"], ".4f"),
                    fmt(ratio, ".2f"),
                    solver_label(best, tol=True),
                    fmt(r.get("rel_gap")),
                    fmt(r.get("distance")),
                ]
            )
    return out


def anchor_section(rows: list[dict[str, Any]]) -> list[str]:
    """The section against the anchors as Markdown lines; empty when no problem has both an
    anchor (a library of :mod:`svmbench.solvers.anchors`) and one of our methods."""
    body = anchor_rows(rows)
    if not body:
        return []
    return [
        "## Against the anchors",
        "",
        ANCHOR_TEXT,
        "",
        "| " + " | ".join(ANCHOR_HEADER) + " |",
        "|" + "---|" * len(ANCHOR_HEADER),
        *("| " + " | ".join(row) + " |" for row in body),
        "",
    ]
