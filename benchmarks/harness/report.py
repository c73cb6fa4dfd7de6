"""Reports rendered from the results store: ``README.md`` with PNG figures, and ``report.html``,
the same report as one self-contained page (figures embedded, no external asset).

:func:`write_report` writes, into a directory:

- which svmbench version and commit rendered it, and the command that regenerates the committed
  copy (:data:`~benchmarks.harness.report_sections.REGENERATE`);
- the machine, versions, threads and git commit the records were made with;
- a table per data set: problem, solver, status, times, iterations, final relative gap,
  distance to the reference optimum, accuracy (test accuracy where the spec has a split), peak
  memory; parallel timings are marked;
- per problem: the certified relative gap against wall time of every solver with the requested
  tol, decision boundaries and margins on 2-D binary data, confusion matrices on multiclass data,
  the solve times of our methods beside the anchors' (:mod:`benchmarks.harness.report_figures`);
- each solver's median solve time over the fastest anchor's (:func:`anchor_section`);
- time against n with the exponent ``a`` of ``time ∝ n^a`` fitted per solver, when the records
  span several sizes.

The figures and the page are built in :mod:`benchmarks.harness.report_figures` and
:mod:`benchmarks.harness.report_page`; the files a report wrote are listed in its manifest
(:data:`MANIFEST`), and only those are replaced by the next report in the same directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from svmbench.benchmarks.harness.cases import data_family, data_size
from svmbench.benchmarks.harness.files import replaced_atomically
from svmbench.benchmarks.harness.report_figures import (
    anchors_figure,
    boundary_figure,
    confusion_figure,
    gap_figure,
    scaling_figure,
)
from svmbench.benchmarks.harness.report_labels import (
    absent_solvers,
    fit_exponent,
    problem_label,
    slug,
    solver_label,
    timed_to_the_end,
)
from svmbench.benchmarks.harness.report_page import HTML_CAP_BYTES, HTML_CAP_MB, Page
from svmbench.benchmarks.harness.report_sections import (
    ANCHOR_HEADER,
    ANCHOR_TEXT,
    INTRODUCTION,
    MARK,
    TABLE_HEADER,
    anchor_groups,
    anchor_rows,
    anchor_section,
    environment_items,
    provenance,
    table_rows,
)

#: The HTML page of a report, beside its ``README.md``.
HTML_NAME = "report.html"

#: The file of a report directory listing the files the report wrote (JSON), so that the next
#: report replaces those and no other.
MANIFEST = ".svmbench-report.json"


def own_files(out: str | Path) -> set[str]:
    """The names of the files a previous report wrote in ``out``: those its manifest lists, or,
    for a report written before manifests, its ``README.md`` and the figures it links to; empty
    when ``out`` holds no report."""
    out = Path(out)
    try:
        document = json.loads((out / MANIFEST).read_text())
        names = document["files"] if document.get("format") == "svmbench-report" else []
    except (OSError, ValueError, RecursionError, TypeError, KeyError, AttributeError):
        names = None
    if names is None:
        try:
            text = (out / "README.md").read_text()
        except (OSError, UnicodeDecodeError):
            return set()
        if MARK not in text:
            return set()
        names = ["README.md", *re.findall(r"!\[[^\]]*\]\(([^)\s]+\.png)\)", text)]
    return {n for n in names if isinstance(n, str) and _plain_name(n)}


def check_report_folder(out: str | Path, flag: str = "out") -> None:
    """Refuse (``ValueError`` naming ``flag``) a folder whose ``README.md`` a report would
    replace but did not write: a report is refused there before anything runs."""
    readme = Path(out) / "README.md"
    if readme.exists() and "README.md" not in own_files(out):
        raise ValueError(
            f"{flag} {out}: holds a README.md that svmbench report did not write; choose "
            "another directory"
        )


#: The names of the files a report writes: a manifest naming anything else is not believed.
_REPORT_NAME = re.compile(
    r"README\.md|report\.html|(gap|boundary|confusion|scaling|anchors)_[A-Za-z0-9.=_-]+\.png"
)


def _plain_name(name: str) -> bool:
    """A name the report writes, in its own folder (no separator, not hidden, not ``..``)."""
    return _REPORT_NAME.fullmatch(name) is not None and not name.startswith(".")


def write_report(
    rows: list[dict[str, Any]],
    out: str | Path,
    *,
    title: str = "svmbench",
    suite: str | None = None,
    cap_bytes: int = HTML_CAP_BYTES,
) -> Path:
    """Write ``README.md``, its PNG figures and ``report.html`` (the same report, one
    self-contained page, at most ``cap_bytes``) into ``out``; returns the Markdown path.

    The files are rendered into a temporary folder inside ``out`` and moved into place once
    complete. The files a previous report wrote (:func:`own_files`, listed in :data:`MANIFEST`)
    are replaced or removed; any other file is left alone, and one that a new file would replace
    is refused (``ValueError`` naming it) before anything in ``out`` changes.

    Parameters
    ----------
    rows : list of dict
        Records as read by :meth:`benchmarks.harness.store.Store.records` (JSON columns decoded).
    out : path
        Output directory (created when missing).
    title : str
    suite : str, optional
        The suite the records are from, named in the command that regenerates the report.
    cap_bytes : int
        The HTML page's size cap (:data:`~benchmarks.harness.report_page.HTML_CAP_BYTES`).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".svmbench-report-", dir=out))
    try:
        _render(rows, stage, title, suite, cap_bytes)
        written = sorted(p.name for p in stage.iterdir())
        previous = own_files(out)  # read last: another report may have written meanwhile
        for name in written:
            if (out / name).exists() and name not in previous:
                raise ValueError(
                    f"{out / name} exists and was not written by svmbench report: move it or "
                    "choose another output directory (nothing was changed)"
                )
        # the manifest first lists both sets, so that an interruption leaves nothing unowned
        _write_manifest(out, sorted(previous | set(written)))
        for name in written:
            os.replace(stage / name, out / name)
        for name in sorted(previous - set(written) - {MANIFEST}):
            with contextlib.suppress(FileNotFoundError):
                (out / name).unlink()
        _write_manifest(out, written)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return out / "README.md"


def _write_manifest(out: Path, names: list[str]) -> None:
    with replaced_atomically(out / MANIFEST) as temp:
        temp.write_text(json.dumps({"format": "svmbench-report", "files": names}, indent=1))


_BIAS_NONE = (
    'These models have no bias term (`bias = "none"`, the multiclass default: f_r(x) = w_r·x, '
    "every class score zero at the origin); the accuracies are theirs, and a model with "
    '`bias = "regularized"` may score otherwise.'
)


def _load(spec: str):
    """The data set of ``spec``, or None when it cannot be made here (a file gone)."""
    from svmbench.problems.datasets import load

    try:
        return load(spec)
    except (OSError, ValueError, MemoryError):
        return None


def _problem_figures(page: Page, spec: str, plabel: str, prows, solvers, extras) -> None:
    """The figures of one (data, problem): gap against time, boundaries, confusions, anchors."""
    where = f"{plabel} on {spec}"
    absent = absent_solvers(solvers, prows)
    drawn = gap_figure(prows, f"certified gap vs wall time: {where}")
    if drawn:
        page.figure(
            f"gap_{slug(spec, plabel)}.png",
            drawn[0],
            f"relative gap vs time, {plabel}",
            "Dotted: the certified relative gap the solvers were asked for (tol); stars: "
            "solvers that report their final point only.",
            absent + drawn[1],
        )
    else:
        page.paragraph(
            "No gap to draw: "
            + "; ".join(absent + [f"{solver_label(r)}: {r['status']}" for r in prows])
            + "."
        )
    if extras.get("n_features") == 2 and extras.get("n_classes") == 2:
        data = _load(spec)
        drawn = (
            None if data is None else boundary_figure(prows, f"decision boundaries: {where}", data)
        )
        if drawn:
            page.figure(
                f"boundary_{slug(spec, plabel)}.png",
                drawn[0],
                f"decision boundaries, {plabel}",
                "",
                absent + drawn[1],
            )
    if prows[0]["problem_kind"] == "multiclass_hinge":
        data = _load(spec)
        names = () if data is None else data.classes
        drawn = confusion_figure(prows, f"confusion matrices: {where}", names)
        if drawn:
            bias = prows[0]["problem"].get("bias", "none")
            caption = _BIAS_NONE if bias == "none" else ""
            page.figure(
                f"confusion_{slug(spec, plabel)}.png",
                drawn[0],
                f"confusion matrices, {plabel}",
                caption,
                absent + drawn[1],
            )
    grows = anchor_groups(prows).get((spec, plabel))
    if grows:
        fig = anchors_figure(grows, f"solve times beside the anchors: {where}")
        if fig is not None:
            page.figure(
                f"anchors_{slug(spec, plabel)}.png",
                fig,
                f"solve times, {plabel}",
                "Each runs to its own stopping rule: the table against the anchors "
                "gives the gap each reached.",
                absent,
            )


def _scaling_section(page: Page, rows) -> None:
    groups = defaultdict(list)
    for r in rows:
        if data_size(r["data"]) is not None:
            groups[(problem_label(r), data_family(r["data"]))].append(r)
    scaling = {k: v for k, v in groups.items() if len({data_size(r["data"]) for r in v}) >= 2}
    if not scaling:
        return
    page.heading("Scaling: time ∝ n^a")
    table, figures = [], []
    for (plabel, family), grows in sorted(scaling.items()):
        drawn = scaling_figure(grows, f"solve time vs n: {plabel} on {family}")
        if drawn is None:
            continue
        for solver, a in sorted(drawn[1].items()):
            sizes = sorted(
                {
                    data_size(r["data"])
                    for r in grows
                    if solver_label(r) == solver and timed_to_the_end(r)
                }
            )
            table.append([plabel, family, solver, f"{a:.2f}", str(sizes)])
        figures.append((f"scaling_{slug(family, plabel)}.png", drawn[0], plabel))
    page.table(["problem", "data", "solver", "a", "sizes"], table)
    for name, fig, plabel in figures:
        page.figure(
            name,
            fig,
            f"time vs n, {plabel}",
            "Solid: the records that met their stopping rule; dashed: the fitted power "
            "law, its exponent a in the legend.",
        )


def _render(rows, out: Path, title: str, suite: str | None, cap_bytes: int) -> None:
    """The Markdown, the figures and the HTML page of a report, written into the empty ``out``."""
    page = Page(title, cap_bytes=cap_bytes)
    page.paragraph(INTRODUCTION.format(count=len(rows)))
    page.paragraph(" ".join(provenance(suite)))
    page.paragraph(
        f"The same report as one page: `{HTML_NAME}` (figures embedded, at most {HTML_CAP_MB} MB)."
    )
    environment = environment_items(rows)
    if environment:
        page.heading("Environment")
        page.bullets(environment)
    statuses = defaultdict(int)
    for r in rows:
        statuses[r["status"]] += 1
    page.paragraph("Statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    solvers = {r["solver"] for r in rows}
    by_data = defaultdict(list)
    for r in rows:
        by_data[r["data"]].append(r)
    for spec, drows in sorted(by_data.items()):
        page.heading(spec)
        extras = drows[0].get("extras") or {}
        if extras.get("n_samples"):
            page.paragraph(
                f"n = {extras['n_samples']}, d = {extras.get('n_features')}, "
                f"classes = {extras.get('n_classes')}"
                + (f", test rows = {extras['n_test']}" if extras.get("n_test") else "")
            )
        page.table(TABLE_HEADER, table_rows(drows))
        by_problem = defaultdict(list)
        for r in drows:
            by_problem[problem_label(r)].append(r)
        for plabel, prows in sorted(by_problem.items()):
            page.heading(plabel, 3)
            _problem_figures(page, spec, plabel, prows, solvers, extras)
    body = anchor_rows(rows)
    if body:
        page.heading("Against the anchors")
        page.paragraph(ANCHOR_TEXT)
        page.table(ANCHOR_HEADER, body)
    _scaling_section(page, rows)
    for name, png in page.files.items():
        (out / name).write_bytes(png)
    (out / "README.md").write_text(page.markdown(), encoding="utf-8")
    (out / HTML_NAME).write_text(page.html(), encoding="utf-8")


__all__ = [
    "HTML_NAME",
    "MANIFEST",
    "anchor_section",
    "check_report_folder",
    "fit_exponent",
    "own_files",
    "write_report",
]
