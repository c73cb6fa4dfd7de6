"""Markdown + PNG reports rendered from the results store (matplotlib, Agg backend).

:func:`write_report` writes ``README.md`` and its figures into a directory:

- the machine, versions, threads and git commit the records were made with;
- a table per data set: problem, solver, status, median solve time, iterations, final relative
  gap, distance to the reference optimum, accuracy (test accuracy where the spec has a split),
  peak memory; parallel timings are marked;
- relative duality gap vs time (log–log), one curve per solver, for every (data, problem);
- time vs n (log–log) with the exponent ``a`` of ``time ∝ n^a`` fitted per solver by least
  squares on the cases that reached their stopping rule (or, for stochastic methods, ran their
  epochs), when the records span several sizes;
- each solver's median solve time over the fastest anchor's (:func:`anchor_section`), where
  a library of :mod:`svmbench.solvers.anchors` ran on the same problem;
- decision boundaries and margins (f = 0, ±1) for 2-D binary data;
- confusion matrices for multiclass data.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from svmbench.benchmarks.harness.cases import data_family, data_size
from svmbench.benchmarks.harness.files import replaced_atomically
from svmbench.problems.model_files import model_from_dict

_FINISHED = ("optimal", "infeasible")


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _slug(*parts: str) -> str:
    text = "_".join(parts)
    return re.sub(r"[^A-Za-z0-9.=-]+", "_", text).strip("_")[:120]


def _fmt(x, spec=".2e") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return format(x, spec)


def _problem_label(row: dict[str, Any]) -> str:
    params = ",".join(f"{k}={v}" for k, v in sorted(row["problem"].items()) if k != "kind")
    return f"{row['problem_kind']}({params})"


def _solver_label(row: dict[str, Any], *, tol: bool = False) -> str:
    """The solver's name and options (``tol`` too with ``tol=True``; never seed or time limit)."""
    hidden = ("time_limit", "seed") if tol else ("time_limit", "seed", "tol")
    opts = {k: v for k, v in (row.get("solver_options") or {}).items() if k not in hidden}
    extra = ",".join(f"{k}={v}" for k, v in sorted(opts.items()))
    return row["solver"] + (f"[{extra}]" if extra else "")


def _timed_to_the_end(row: dict[str, Any]) -> bool:
    """Whether a record's time belongs in a scaling fit: it met its stopping rule, or it is a
    stochastic method that ran its fixed number of epochs."""
    if row["status"] in _FINISHED:
        return True
    if row["status"] != "max_iter":
        return False
    from svmbench.solvers import registry

    try:
        return bool(getattr(registry.solver_class(row["solver"]), "stochastic", False))
    except ValueError:
        return False


def fit_exponent(ns, times) -> tuple[float, float] | None:
    """Least-squares fit of ``log t = a log n + c``; ``(a, c)``, or None under two sizes."""
    pts = [(n, t) for n, t in zip(ns, times) if n and t and t > 0]
    if len({n for n, _ in pts}) < 2:
        return None
    x = np.log([n for n, _ in pts])
    y = np.log([t for _, t in pts])
    a, c = np.polyfit(x, y, 1)
    return float(a), float(c)


def _environment_section(rows: list[dict[str, Any]]) -> list[str]:
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
    lines = [
        "## Environment",
        "",
        f"- machine: {machine.get('cpu', '?')}, {machine.get('physical_cores', '?')} cores / "
        f"{machine.get('logical_cores', '?')} threads, {machine.get('memory_gb', '?')} GB "
        f"({machine.get('platform', '')})",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        "- threads per case: " + "; ".join(threads),
        f"- cases run at once: {', '.join(map(str, jobs))}"
        + (" (timings marked ∥ were measured beside other cases)" if max(jobs) > 1 else ""),
        "- git commit: " + ", ".join(commits),
        "",
    ]
    return lines


def _table(rows: list[dict[str, Any]]) -> list[str]:
    head = (
        "| problem | solver | status | wall (s) | solve (s) | certify (s) | iterations "
        "| rel. gap | dist. to ref. | accuracy | peak MB |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in sorted(rows, key=lambda r: (_problem_label(r), r["solver"])):
        t = f"{_fmt(r.get('wall_time'), '.4f')} | {_fmt(r.get('solve_time'), '.4f')} | "
        t += _fmt(r.get("certify_time"), ".4f")
        if r.get("parallel"):
            t += " ∥"
        it = "–" if r.get("iterations") is None else f"{r['iterations']} {r['iteration_unit']}"
        acc = _fmt(r.get("accuracy"), ".3f")
        if r.get("accuracy_on") == "test" and acc != "–":
            acc += " (test)"
        lines.append(
            f"| {_problem_label(r)} | {_solver_label(r)} | {r['status']} | {t} | {it} "
            f"| {_fmt(r.get('rel_gap'))} | {_fmt(r.get('distance'))} | {acc} "
            f"| {_fmt(r.get('peak_memory_mb'), '.0f')} |"
        )
    return lines


def _is_anchor(row: dict[str, Any]) -> bool:
    extras = row.get("extras") or {}
    if "anchor" in extras:
        return bool(extras["anchor"])
    from svmbench.solvers import registry

    return registry.is_anchor(row["solver"])


def anchor_section(rows: list[dict[str, Any]]) -> list[str]:
    """Each solver's median solve time over the fastest anchor's, per (data, problem).

    Only where an anchor (a library of :mod:`svmbench.solvers.anchors`) and one of our solvers both
    returned a result; each runs to its own stopping rule, and the certified gap and the
    distance to the reference say how far each got. Empty when there is no such pair.
    """
    groups = defaultdict(list)
    for r in rows:
        if math.isfinite(r.get("solve_time") or math.nan):
            groups[(r["data"], _problem_label(r))].append(r)
    lines = []
    for (spec, plabel), grows in sorted(groups.items()):
        anchors = [r for r in grows if _is_anchor(r)]
        if not anchors or len(anchors) == len(grows):
            continue
        best = min(anchors, key=lambda r: r["solve_time"])
        for r in sorted(grows, key=lambda r: (_is_anchor(r), r["solve_time"])):
            ratio = r["solve_time"] / best["solve_time"] if best["solve_time"] > 0 else math.nan
            lines.append(
                f"| {spec} | {plabel} | {_solver_label(r, tol=True)} | {r['status']} "
                f"| {_fmt(r['solve_time'], '.4f')} | {_fmt(ratio, '.2f')} "
                f"| {_solver_label(best, tol=True)} "
                f"| {_fmt(r.get('rel_gap'))} | {_fmt(r.get('distance'))} |"
            )
    if not lines:
        return []
    return [
        "## Against the anchors",
        "",
        "Median solve time over the fastest anchor's on the same problem (< 1: faster than the "
        "library). Each runs to its own stopping rule and tolerance (shown: `tol` is the "
        "certified gap asked for, an anchor's `eps` the library's native tolerance): the "
        "certified relative gap and the distance to the reference say how far each got.",
        "",
        "| data | problem | solver | status | solve (s) | ratio | anchor | rel. gap "
        "| dist. to ref. |",
        "|" + "---|" * 9,
        *lines,
        "",
    ]


def _wall_or_solve(point) -> float:
    """A trace point's wall time (``[iteration, solve, P, D, gap, wall, certified]``), or its
    solve time for a record written before wall times were traced."""
    if len(point) > 5 and point[5] is not None and math.isfinite(point[5]):
        return point[5]
    return point[1]


def _certified(point) -> bool:
    """Whether a stored trace point is a certificate (older records hold only certificates)."""
    return len(point) < 7 or bool(point[6])


def plot_gap_vs_time(rows: list[dict[str, Any]], path: Path, title: str) -> bool:
    """Relative gap vs wall time (the user's clock: trace certificates included; the solver
    clock for older records), one curve per solver; False when no record has a trace."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    drawn = False
    for r in sorted(rows, key=_solver_label):
        trace = r.get("trace") or []
        pts = [
            (_wall_or_solve(point), point[4] / max(1.0, abs(point[2])), _certified(point))
            for point in trace
            if all(v is not None and math.isfinite(v) for v in (point[1], point[2], point[4]))
        ]
        final = r.get("rel_gap")
        end = r.get("wall_time") or r.get("solve_time")
        if not pts and final is not None and math.isfinite(final) and end:
            # a solver without a trace (the references): its final point only
            ax.plot(
                [max(end, 1e-6)],
                [max(r["rel_gap"], 1e-16)],
                marker="*",
                markersize=9,
                linestyle="none",
                label=f"{_solver_label(r)} (final)",
            )
            drawn = True
            continue
        if not pts:
            continue
        ts = np.maximum([t for t, _, _ in pts], 1e-6)
        gaps = np.maximum([g for _, g, _ in pts], 1e-16)
        (line,) = ax.plot(ts, gaps, marker=".", markersize=3, label=_solver_label(r))
        estimated = [i for i, (_, _, certified) in enumerate(pts) if not certified]
        if estimated:  # the solver's own gap estimates (smo's trace): open markers
            ax.plot(
                ts[estimated],
                gaps[estimated],
                marker="o",
                markersize=5,
                fillstyle="none",
                linestyle="none",
                color=line.get_color(),
                label=f"{_solver_label(r)}: solver's estimate, uncertified",
            )
        drawn = True
    if not drawn:
        plt.close(fig)
        return False
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("relative duality gap (P − D)/max(1,|P|)")
    ax.set_title(title, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_scaling(rows: list[dict[str, Any]], path: Path, title: str) -> dict[str, float]:
    """Time vs n on log–log axes with the fitted exponent per solver; the exponents."""
    plt = _mpl()
    by_solver = defaultdict(list)
    for r in rows:
        n = r.get("n_samples") or data_size(r["data"])
        if _timed_to_the_end(r) and r.get("solve_time"):
            by_solver[_solver_label(r)].append((n, r["solve_time"]))
    exps: dict[str, float] = {}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, pts in sorted(by_solver.items()):
        pts.sort()
        fit = fit_exponent(*zip(*pts))
        label = name
        if fit:
            exps[name] = fit[0]
            label += f" (a = {fit[0]:.2f})"
        line = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)[0]
        if fit:
            ns = np.array([pts[0][0], pts[-1][0]], dtype=float)
            ax.plot(ns, np.exp(fit[1]) * ns ** fit[0], "--", color=line.get_color(), alpha=0.5)
    if not by_solver:
        plt.close(fig)
        return exps
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (training points)")
    ax.set_ylabel("solve time (s)")
    ax.set_title(title, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return exps


def _panels(plt, n: int, *, width: float):
    """A figure of ``n`` panels, four a row (the spare ones hidden), and those ``n`` axes."""
    cols = min(4, n)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(width * cols, 3.0 * nrows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    return fig, axes.ravel()[:n]


def _save(plt, fig, path: Path, title: str) -> None:
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_boundaries(rows: list[dict[str, Any]], path: Path, title: str) -> bool:
    """Decision boundary (f = 0) and margins (f = ±1) of each solver on 2-D binary data."""
    from svmbench.problems.datasets import load

    rows = [r for r in rows if (r.get("extras") or {}).get("model")]
    if not rows:
        return False
    plt = _mpl()
    rows = sorted(rows, key=_solver_label)[:8]
    ds = load(rows[0]["data"])
    X, y = np.asarray(ds.X.todense() if hasattr(ds.X, "todense") else ds.X), ds.y
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.1 * (hi - lo)
    g0, g1 = np.meshgrid(
        np.linspace(lo[0] - pad[0], hi[0] + pad[0], 150),
        np.linspace(lo[1] - pad[1], hi[1] + pad[1], 150),
    )
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    fig, axes = _panels(plt, len(rows), width=3.2)
    for ax, r in zip(axes, rows):
        try:
            f = model_from_dict(r["extras"]["model"]).decision_function(grid)
        except (KeyError, TypeError, ValueError, RecursionError):  # older or damaged: points only
            f = None
        ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=8, edgecolors="none")
        if f is not None:
            ax.contour(
                g0,
                g1,
                np.asarray(f).reshape(g0.shape),
                levels=[-1, 0, 1],
                colors="k",
                linestyles=["--", "-", "--"],
                linewidths=0.8,
            )
        ax.set_title(f"{_solver_label(r)} ({r['status']})", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    _save(plt, fig, path, title)
    return True


def plot_confusions(rows: list[dict[str, Any]], path: Path, title: str) -> bool:
    """Confusion matrices (true class × predicted class) of each multiclass solver."""
    rows = [r for r in rows if (r.get("extras") or {}).get("confusion")]
    if not rows:
        return False
    plt = _mpl()
    rows = sorted(rows, key=_solver_label)[:8]
    fig, axes = _panels(plt, len(rows), width=3.0)
    for ax, r in zip(axes, rows):
        m = np.asarray(r["extras"]["confusion"])
        ax.imshow(m, cmap="Blues")
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=7)
        on = r.get("accuracy_on") or "train"
        ax.set_title(f"{_solver_label(r)} ({on})", fontsize=8)
        ax.set_xlabel("predicted", fontsize=7)
        ax.set_ylabel("true", fontsize=7)
    _save(plt, fig, path, title)
    return True


#: The file of a report directory listing the files the report wrote (JSON), so that the next
#: report replaces those and no other.
MANIFEST = ".svmbench-report.json"
#: What the Markdown of every report says, by which a report written before the manifest is known.
_MARK = "Rendered by `svmbench report`"


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
        if _MARK not in text:
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
_REPORT_NAME = re.compile(r"README\.md|(gap|boundary|confusion|scaling)_[A-Za-z0-9.=_-]+\.png")


def _plain_name(name: str) -> bool:
    """A name the report writes, in its own folder (no separator, not hidden, not ``..``)."""
    return _REPORT_NAME.fullmatch(name) is not None and not name.startswith(".")


def write_report(rows: list[dict[str, Any]], out: str | Path, *, title: str = "svmbench") -> Path:
    """Write ``README.md`` and its PNG figures into ``out``; returns the Markdown path.

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
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".svmbench-report-", dir=out))
    try:
        _render(rows, stage, title)
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


def _render(rows: list[dict[str, Any]], out: Path, title: str) -> None:
    """The Markdown and the figures of a report, written into the empty folder ``out``."""
    lines = [f"# {title}", ""]
    lines.append(
        f"{len(rows)} records. Rendered by `svmbench report` from the results database; "
        "every gap is certified by the problem, every distance is to the reference optimum "
        "(Clarabel or OSQP). Times: *wall* is the whole call, what a user waits (JIT compilation "
        "excluded); *solve* the method with its stopping tests (an anchor: the library's train "
        "call); *certify* the certificates drawn only for the trace and the record; medians "
        "over the repeats. `optimal` means certified to the solver's tol; `not_certified` a "
        "method's own rule stopped short of that."
    )
    lines.append("")
    lines += _environment_section(rows)
    statuses = defaultdict(int)
    for r in rows:
        statuses[r["status"]] += 1
    lines += ["Statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())), ""]

    by_data = defaultdict(list)
    for r in rows:
        by_data[r["data"]].append(r)
    figures: list[str] = []
    for spec, drows in sorted(by_data.items()):
        lines += [f"## {spec}", ""]
        extras = drows[0].get("extras") or {}
        if extras.get("n_samples"):
            lines += [
                f"n = {extras['n_samples']}, d = {extras.get('n_features')}, "
                f"classes = {extras.get('n_classes')}"
                + (f", test rows = {extras['n_test']}" if extras.get("n_test") else ""),
                "",
            ]
        lines += _table(drows)
        lines.append("")
        by_problem = defaultdict(list)
        for r in drows:
            by_problem[_problem_label(r)].append(r)
        for plabel, prows in sorted(by_problem.items()):
            name = f"gap_{_slug(spec, plabel)}.png"
            if plot_gap_vs_time(prows, out / name, f"{plabel} on {spec}"):
                lines += [f"![relative gap vs time, {plabel}]({name})", ""]
                figures.append(name)
            binary2d = extras.get("n_features") == 2 and extras.get("n_classes") == 2
            if binary2d:
                name = f"boundary_{_slug(spec, plabel)}.png"
                if plot_boundaries(prows, out / name, f"{plabel} on {spec}"):
                    lines += [f"![decision boundaries, {plabel}]({name})", ""]
                    figures.append(name)
            if prows[0]["problem_kind"] == "multiclass_hinge":
                name = f"confusion_{_slug(spec, plabel)}.png"
                if plot_confusions(prows, out / name, f"{plabel} on {spec}"):
                    lines += [f"![confusion matrices, {plabel}]({name})", ""]
                    figures.append(name)

    lines += anchor_section(rows)
    groups = defaultdict(list)
    for r in rows:
        if data_size(r["data"]) is not None:
            groups[(_problem_label(r), data_family(r["data"]))].append(r)
    scaling = {k: v for k, v in groups.items() if len({data_size(r["data"]) for r in v}) >= 2}
    if scaling:
        lines += ["## Scaling: time ∝ n^a", ""]
        lines += ["| problem | data | solver | a | sizes |", "|---|---|---|---|---|"]
        for (plabel, family), grows in sorted(scaling.items()):
            name = f"scaling_{_slug(family, plabel)}.png"
            exps = plot_scaling(grows, out / name, f"{plabel} on {family}")
            for solver, a in sorted(exps.items()):
                sizes = sorted(
                    {
                        data_size(r["data"])
                        for r in grows
                        if _solver_label(r) == solver and _timed_to_the_end(r)
                    }
                )
                lines.append(f"| {plabel} | {family} | {solver} | {a:.2f} | {sizes} |")
            if (out / name).exists():
                figures.append(name)
        lines.append("")
        for name in figures:
            if name.startswith("scaling_"):
                lines += [f"![time vs n]({name})", ""]
    (out / "README.md").write_text("\n".join(lines) + "\n")
