"""The figures of a report (matplotlib, Agg backend), each returned as a Figure for the page to
save and embed (:mod:`benchmarks.harness.report_page`), or None when there is nothing to draw.

Every figure has a title, labelled axes with units, a legend (a colour bar for the confusion
matrices) and one colour per solver (:func:`~benchmarks.harness.report_labels.solver_color`),
the same in every figure:

- :func:`gap_figure`: certified relative duality gap against wall time, one curve per solver, a
  horizontal line at the tol the solvers were asked for;
- :func:`scaling_figure`: solve time against n, log–log, with the fitted exponent per solver;
- :func:`anchors_figure`: median solve times of our methods and the anchors on one problem;
- :func:`boundary_figure`: scikit-learn's ``DecisionBoundaryDisplay`` of each model on 2-D
  binary data, with the margins f = ±1 and the support vectors circled;
- :func:`confusion_figure`: scikit-learn's ``ConfusionMatrixDisplay`` of each multiclass model.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from svmbench.benchmarks.harness.cases import data_size
from svmbench.benchmarks.harness.report_labels import (
    fit_exponent,
    is_anchor,
    requested_tols,
    solver_color,
    solver_label,
    timed_to_the_end,
)
from svmbench.problems.model_files import model_from_dict

#: Panels per figure of the per-model figures (boundaries, confusion matrices); the others are
#: listed as absent.
MAX_PANELS = 8
_LINESTYLES = ("-", "--", "-.", ":")


def pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def wall_or_solve(point) -> float:
    """A trace point's wall time (``[iteration, solve, P, D, gap, wall, certified]``), or its
    solve time for a record written before wall times were traced."""
    if len(point) > 5 and point[5] is not None and math.isfinite(point[5]):
        return point[5]
    return point[1]


def is_certified_point(point) -> bool:
    """Whether a stored trace point is a certificate (older records hold only certificates)."""
    return len(point) < 7 or bool(point[6])


def _styles(rows: list[dict[str, Any]]) -> dict[str, str]:
    """A line style per solver label: the variants of one solver (its options) differ by style."""
    seen: dict[str, int] = defaultdict(int)
    out = {}
    for r in sorted(rows, key=solver_label):
        label = solver_label(r)
        if label not in out:
            out[label] = _LINESTYLES[seen[r["solver"]] % len(_LINESTYLES)]
            seen[r["solver"]] += 1
    return out


def wrapped(title: str, width: int = 80) -> str:
    """A title broken into lines of at most ``width`` characters (long problem labels)."""
    import textwrap

    return "\n".join(textwrap.wrap(title, width, break_on_hyphens=False)) or title


def _panel_rows(rows, extra: str, missing: str, absent: list[str]) -> list:
    """The records with ``extras[extra]``, sorted, at most :data:`MAX_PANELS`; the others are
    appended to ``absent`` with the reason."""
    usable = []
    for r in sorted(rows, key=solver_label):
        if (r.get("extras") or {}).get(extra):
            usable.append(r)
        else:
            absent.append(f"{solver_label(r)}: {r['status']}, {missing}")
    for r in usable[MAX_PANELS:]:
        absent.append(f"{solver_label(r)}: not drawn (at most {MAX_PANELS} panels)")
    return usable[:MAX_PANELS]


def readable_log_ticks(ax) -> None:
    """Tick labels of log axes as plain numbers (60, 0.002, 1e-06), not 6×10¹."""
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    for axis, scale, limits in (
        (ax.xaxis, ax.get_xscale(), ax.get_xlim()),
        (ax.yaxis, ax.get_yscale(), ax.get_ylim()),
    ):
        if scale == "log":
            low, high = sorted(limits)
            axis.set_major_formatter(plain)
            if 0 < low and high < 10 * low:  # within a decade: every minor tick labelled
                axis.set_minor_formatter(plain)
            elif 0 < low and high < 1000 * low:  # a few decades: 2 and 5 of each too
                axis.set_minor_formatter(FuncFormatter(_two_and_five))
            else:
                axis.set_minor_formatter("")


def _two_and_five(value: float, _) -> str:
    mantissa = value / 10 ** math.floor(math.log10(value)) if value > 0 else 0
    return f"{value:g}" if round(mantissa, 6) in (2.0, 5.0) else ""


def _finish(ax, title: str, xlabel: str, ylabel: str, *, width: int = 80) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(wrapped(title, width), fontsize=9)
    ax.tick_params(labelsize=8, which="both")
    ax.grid(True, which="both", alpha=0.3)
    readable_log_ticks(ax)


def _trace_points(row: dict[str, Any]) -> list[tuple[float, float, bool]]:
    return [
        (wall_or_solve(p), p[4] / max(1.0, abs(p[2])), is_certified_point(p))
        for p in row.get("trace") or []
        if all(v is not None and math.isfinite(v) for v in (p[1], p[2], p[4]))
    ]


def gap_figure(rows: list[dict[str, Any]], title: str) -> tuple[Any, list[str]] | None:
    """Relative gap against wall time (the trace's certificates; a solver without a trace, such
    as a reference, by its final point), one colour per solver, the requested tol as a
    horizontal line. Returns the figure and ``"label: reason"`` for each record not drawn;
    None when no record has a point."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    styles = _styles(rows)
    drawn, absent = False, []
    for r in sorted(rows, key=solver_label):
        label, color = solver_label(r), solver_color(r["solver"])
        pts = _trace_points(r)
        final, end = r.get("rel_gap"), r.get("wall_time") or r.get("solve_time")
        if not pts and final is not None and math.isfinite(final) and end:
            ax.plot(
                [max(end, 1e-6)],
                [max(final, 1e-16)],
                marker="*",
                markersize=10,
                linestyle="none",
                color=color,
                label=f"{label} (final point only)",
            )
            drawn = True
            continue
        if not pts:
            absent.append(f"{label}: {r['status']}, no finite certified gap to draw")
            continue
        ts = np.maximum([t for t, _, _ in pts], 1e-6)
        gaps = np.maximum([g for _, g, _ in pts], 1e-16)
        ax.plot(
            ts, gaps, marker=".", markersize=3, color=color, linestyle=styles[label], label=label
        )
        estimated = [i for i, (_, _, certified) in enumerate(pts) if not certified]
        if estimated:  # the solver's own gap estimates (smo's trace): open markers
            ax.plot(
                ts[estimated],
                gaps[estimated],
                marker="o",
                markersize=5,
                fillstyle="none",
                linestyle="none",
                color=color,
                label=f"{label}: solver's estimate, uncertified",
            )
        drawn = True
    if not drawn:
        plt.close(fig)
        return None
    for tol in requested_tols(rows):
        ax.axhline(
            tol, color="black", linestyle=":", linewidth=1.0, label=f"requested tol = {tol:g}"
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    _finish(ax, title, "wall time (s)", "certified relative gap (P − D)/max(1, |P|)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig, absent


def scaling_figure(rows: list[dict[str, Any]], title: str) -> tuple[Any, dict[str, float]] | None:
    """Solve time against n on log–log axes, the fitted ``time ∝ n^a`` dashed; the figure and
    the exponent per solver label, or None when no record ran to its end."""
    by_solver: dict[str, list] = defaultdict(list)
    names = {}
    for r in rows:
        n = r.get("n_samples") or data_size(r["data"])
        if timed_to_the_end(r) and r.get("solve_time"):
            by_solver[solver_label(r)].append((n, r["solve_time"]))
            names[solver_label(r)] = r["solver"]
    if not by_solver:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    exponents: dict[str, float] = {}
    for name, pts in sorted(by_solver.items()):
        pts.sort()
        fit = fit_exponent(*zip(*pts))
        label = name
        if fit:
            exponents[name] = fit[0]
            label += f" (a = {fit[0]:.2f})"
        color = solver_color(names[name])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color, label=label)
        if fit:
            ns = np.array([pts[0][0], pts[-1][0]], dtype=float)
            ax.plot(ns, np.exp(fit[1]) * ns ** fit[0], "--", color=color, alpha=0.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _finish(ax, title + "  (dashed: fitted time ∝ n^a)", "n (training points)", "solve time (s)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig, exponents


def anchors_figure(rows: list[dict[str, Any]], title: str):
    """Median solve time of each record on one problem, our methods solid and the anchors
    hatched, fastest at the top; None without both an anchor and a method."""
    rows = [r for r in rows if math.isfinite(r.get("solve_time") or math.nan)]
    anchors = [r for r in rows if is_anchor(r)]
    if not anchors or len(anchors) == len(rows):
        return None
    from matplotlib.patches import Patch

    plt = pyplot()
    rows = sorted(rows, key=lambda r: r["solve_time"], reverse=True)
    fig, ax = plt.subplots(figsize=(7.0, 1.8 + 0.32 * len(rows)))
    times = [max(r["solve_time"], 1e-6) for r in rows]
    bars = ax.barh(range(len(rows)), times, color=[solver_color(r["solver"]) for r in rows])
    for bar, r in zip(bars, rows):
        if is_anchor(r):
            bar.set_hatch("//")
            bar.set_edgecolor("black")
    ax.set_yticks(
        range(len(rows)), [f"{solver_label(r, tol=True)} ({r['status']})" for r in rows], fontsize=7
    )
    ax.set_xscale("log")
    _finish(ax, title, "median solve time (s)", "solver (status)", width=60)
    ax.legend(
        handles=[
            Patch(facecolor="lightgrey", label="svmbench method (certified gap, tol)"),
            Patch(
                facecolor="lightgrey",
                hatch="//",
                edgecolor="black",
                label="anchor (the library's train call, its own eps)",
            ),
        ],
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25),
        ncol=2,
        frameon=False,
    )
    fig.tight_layout()
    return fig


def _panels(plt, n: int, *, width: float):
    """A figure of ``n`` panels, four a row (the spare ones hidden), and those ``n`` axes."""
    cols = min(4, n)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(width * cols, 3.3 * nrows + 0.9), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    return fig, axes.ravel()[:n]


def _dense(X) -> np.ndarray:
    return np.asarray(X.todense() if hasattr(X, "todense") else X)


def _boundary_display(g0, g1, f):
    """scikit-learn's ``DecisionBoundaryDisplay`` of a binary response ``f`` on the grid
    (``n_classes`` is a required argument from scikit-learn 1.8, unknown before)."""
    import inspect

    from sklearn.inspection import DecisionBoundaryDisplay

    arguments = {"xx0": g0, "xx1": g1, "response": f}
    if "n_classes" in inspect.signature(DecisionBoundaryDisplay).parameters:
        arguments["n_classes"] = 2
    return DecisionBoundaryDisplay(**arguments)


def boundary_figure(rows: list[dict[str, Any]], title: str, data) -> tuple[Any, list[str]] | None:
    """Each model's decision function f on 2-D binary data (scikit-learn's
    ``DecisionBoundaryDisplay``, shaded by f), the boundary f = 0 and margins f = ±1, the two
    classes, and the support vectors (y·f(x) ≤ 1, where α may be positive) circled. ``data``:
    the :class:`~svmbench.problems.dataset_record.Dataset` of the rows."""
    from matplotlib.lines import Line2D

    absent = []
    usable = _panel_rows(rows, "model", "no model stored", absent)
    if not usable:
        return None
    plt = pyplot()
    X, y = _dense(data.X), np.asarray(data.y)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.1 * (hi - lo)
    g0, g1 = np.meshgrid(
        np.linspace(lo[0] - pad[0], hi[0] + pad[0], 150),
        np.linspace(lo[1] - pad[1], hi[1] + pad[1], 150),
    )
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    names = data.classes if len(data.classes) == 2 else ("−1", "+1")  # the meaning of −1, +1
    fig, axes = _panels(plt, len(usable), width=3.4)
    for ax, r in zip(axes, usable):
        try:
            model = model_from_dict(r["extras"]["model"])
            f = np.asarray(model.decision_function(grid)).reshape(g0.shape)
            margins = y * np.asarray(model.decision_function(X))
        except (KeyError, TypeError, ValueError, RecursionError):  # older or damaged: points only
            f, margins = None, None
            absent.append(f"{solver_label(r)}: its stored model could not be read")
        if f is not None:
            bound = float(np.nanmax(np.abs(f))) or 1.0
            _boundary_display(g0, g1, f).plot(
                ax=ax,
                plot_method="contourf",
                cmap="coolwarm",
                alpha=0.3,
                levels=np.linspace(-bound, bound, 13),
            )
            ax.contour(
                g0,
                g1,
                f,
                levels=[-1, 0, 1],
                colors="k",
                linestyles=["--", "-", "--"],
                linewidths=0.9,
            )
        for label, color in ((-1.0, "tab:blue"), (1.0, "tab:red")):
            mask = y == label
            ax.scatter(X[mask, 0], X[mask, 1], s=9, color=color, edgecolors="none")
        if margins is not None:
            sv = margins <= 1.0 + 1e-6
            ax.scatter(
                X[sv, 0], X[sv, 1], s=40, facecolors="none", edgecolors="black", linewidths=0.7
            )
        _finish(
            ax, f"{solver_label(r)} ({r['status']})", "x₁ (feature 1)", "x₂ (feature 2)", width=45
        )
        ax.grid(False)
    handles = [
        Line2D(
            [],
            [],
            marker="o",
            linestyle="none",
            color="tab:blue",
            label=f"class {names[0]} (y = −1)",
        ),
        Line2D(
            [],
            [],
            marker="o",
            linestyle="none",
            color="tab:red",
            label=f"class {names[1]} (y = +1)",
        ),
        Line2D(
            [],
            [],
            marker="o",
            linestyle="none",
            markerfacecolor="none",
            color="black",
            label="support vector (y·f(x) ≤ 1)",
        ),
        Line2D([], [], color="black", label="f(x) = 0"),
        Line2D([], [], color="black", linestyle="--", label="f(x) = ±1 (margins)"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.suptitle(
        wrapped(title + "  (shading: f(x), blue < 0 < red; axes in the data's units)", 140),
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig, absent


def confusion_figure(rows: list[dict[str, Any]], title: str, class_names) -> tuple | None:
    """Each multiclass model's confusion matrix (scikit-learn's ``ConfusionMatrixDisplay``:
    integer counts, class names, text coloured for contrast), true class against predicted."""
    from sklearn.metrics import ConfusionMatrixDisplay

    absent = []
    usable = _panel_rows(rows, "confusion", "no confusion matrix stored", absent)
    if not usable:
        return None
    plt = pyplot()
    fig, axes = _panels(plt, len(usable), width=3.6)
    for ax, r in zip(axes, usable):
        m = np.asarray(r["extras"]["confusion"], dtype=np.int64)
        names = list(class_names) if len(class_names) == len(m) else list(range(len(m)))
        display = ConfusionMatrixDisplay(m, display_labels=names)
        display.plot(ax=ax, cmap="Blues", colorbar=False, values_format="d", xticks_rotation=45)
        bar = fig.colorbar(display.im_, ax=ax, fraction=0.046, pad=0.04)
        bar.set_label("examples (count)", fontsize=7)
        bar.ax.tick_params(labelsize=7)
        on = r.get("accuracy_on") or "train"
        accuracy = r.get("accuracy")
        shown = "" if accuracy is None else f", accuracy {accuracy:.3f}"
        _finish(ax, f"{solver_label(r)} ({on}{shown})", "predicted class", "true class", width=45)
        ax.grid(False)
    fig.suptitle(wrapped(title, 140), fontsize=9)
    fig.tight_layout()
    return fig, absent
