"""``svmbench select``: the choice of C (and γ) by k-fold or leave-one-out cross-validation.

``svmbench select --data SPEC --solver S --C-grid 1e-3:1e3:13 [--gamma-grid ...] [--cv 5|loo]
[--kernel K] [--bias B] [--plot FILE]`` prints, per C, the validation error, the time and the worst
certified relative gap of the fold solves, marks the chosen C (the smallest of the best), says how
many leave-one-out folds the certified-margin rule skipped, and plots (:func:`select_figure`) the
validation error over the (C, γ) grid as a heat map with the chosen point, or, without a γ grid,
the error and the number of support vectors against C; beside it the measured time of each grid
point.
"""

from __future__ import annotations

import argparse
import math
import warnings
from pathlib import Path

import numpy as np

from svmbench.benchmarks.cli.common import load_data, spec_paths
from svmbench.benchmarks.harness.files import check_output, replaced_atomically

#: The figure formats ``--plot`` writes, by the file name's suffix.
PLOT_FORMATS = (".png", ".pdf", ".svg")


def parse_grid(text: str, name: str = "--C-grid") -> list[float]:
    """``"a:b:k"``: k values log-spaced from a to b; or ``"v1,v2,..."``."""
    try:
        if ":" in text:
            a, b, k = text.split(":")
            lo, hi, count = float(a), float(b), int(k)
            if not (0 < lo <= hi and math.isfinite(hi) and count >= 1):
                raise ValueError
            return list(np.logspace(math.log10(lo), math.log10(hi), count))
        values = [float(v) for v in text.split(",") if v.strip()]
        if not values or any(not (v > 0 and math.isfinite(v)) for v in values):
            raise ValueError
        return sorted(values)
    except ValueError:
        raise ValueError(
            f"{name} takes LOW:HIGH:COUNT (0 < LOW <= HIGH, COUNT >= 1 log-spaced values) or "
            f"V1,V2,... (positive numbers), got {text!r}"
        ) from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``svmbench select``."""
    p = subparsers.add_parser("select", help="choose C (and gamma) by k-fold or leave-one-out")
    p.add_argument("--data", required=True, help="data spec (a split's test part is left out)")
    p.add_argument("--solver", default="auto", help="any solver or anchor (default auto)")
    p.add_argument("--C-grid", dest="C_grid", default="1e-3:1e3:13", help="LOW:HIGH:COUNT or list")
    p.add_argument("--gamma-grid", dest="gamma_grid", help="LOW:HIGH:COUNT or list (kernels)")
    p.add_argument("--cv", default="5", help="number of folds, or loo")
    p.add_argument(
        "--kernel", default="linear", choices=["linear", "poly", "rbf", "sigmoid"], help="kernel"
    )
    p.add_argument(
        "--bias", default="free", choices=["free", "regularized", "none"], help="bias term"
    )
    p.add_argument("--loss", default="hinge", choices=["hinge", "squared_hinge"], help="loss")
    p.add_argument("--tol", type=float, default=1e-6, help="certified relative gap per solve")
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="figure (.png, .pdf, .svg): the (C, gamma) error map with the chosen point, or the "
        "error and support vectors against C; the time of each grid point",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from svmbench.model_selection import SVMClassifierCV

    if args.plot:  # refused now rather than after the fits
        check_plot_path(args.plot, args.data)
    Cs = parse_grid(args.C_grid)
    gammas = None if args.gamma_grid is None else parse_grid(args.gamma_grid, "--gamma-grid")
    cv = "loo" if args.cv == "loo" else _folds(args.cv)
    dataset = load_data(args.data)
    model = SVMClassifierCV(
        Cs=Cs, gammas=gammas, cv=cv, solver=args.solver, kernel=args.kernel, bias=args.bias,
        loss=args.loss, tol=args.tol,
    )  # fmt: skip
    with warnings.catch_warnings():  # a fold's max_iter shows as its gap in the table
        warnings.simplefilter("ignore")
        model.fit(dataset.X, dataset.y)
    results = model.cv_results_
    n_sv = _support_vectors(model, dataset, results)
    console = Console()
    table = Table(title=f"{'leave-one-out' if cv == 'loo' else f'{cv}-fold'} on {args.data}")
    for column in ("", "C", "gamma", "error", "time [s]", "max rel gap", "SV", "folds skipped"):
        table.add_column(column)
    for i, C in enumerate(results["C"]):
        chosen = C == model.C_ and results["gamma"][i] == model.gamma_
        skipped = results.get("skipped")
        table.add_row(
            "→" if chosen else "",
            f"{C:.4g}",
            str(results["gamma"][i]),
            f"{results['error'][i]:.4f}",
            f"{results['time'][i]:.3f}",
            f"{results['max_rel_gap'][i]:.1e}",
            str(n_sv[i]),
            "" if skipped is None else f"{skipped[i]}/{skipped[i] + results['solved'][i]}",
        )
    console.print(table)
    console.print(f"chosen: C = {model.C_:.4g}, gamma = {model.gamma_} (the smallest best C)")
    if "skipped" in results:
        total = sum(results["skipped"])
        folds = total + sum(results["solved"])
        console.print(f"leave-one-out: {total} of {folds} folds skipped by the certified margin")
    if dataset.X_test is not None:
        console.print(
            f"test accuracy of the refit: {model.score(dataset.X_test, dataset.y_test):.4f}"
        )
    if args.plot:
        cv_name = "leave-one-out" if cv == "loo" else f"{cv}-fold"
        _plot(results, n_sv, model, args.plot, f"{cv_name} on {args.data}")
        console.print(f"plot: {args.plot}")
    return 0


def check_plot_path(path: str, data: str) -> None:
    """Refuse a ``--plot`` path the figure would not be written to as given (no known suffix:
    matplotlib would add one; a directory), or that is an input or cannot be written."""
    if Path(path).is_dir():
        raise ValueError(f"--plot {path}: a directory; give a file name such as select.png")
    if Path(path).suffix.lower() not in PLOT_FORMATS:
        raise ValueError(
            f"--plot {path}: give a file name ending in {', '.join(PLOT_FORMATS)} (the format)"
        )
    check_output(path, "--plot", inputs=[("the data file of --data", p) for p in spec_paths(data)])


def _folds(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise ValueError(f"--cv takes a number of folds >= 2 or 'loo', got {text!r}") from None
    if k < 2:
        raise ValueError(f"--cv takes a number of folds >= 2 or 'loo', got {k}")
    return k


def _support_vectors(model, dataset, results) -> list[int]:
    """Support vectors of the full-data fit at each grid point (for the plot and table)."""
    from svmbench import SVMClassifier

    out = []
    base = {k: v for k, v in model.get_params().items() if k not in ("Cs", "gammas", "cv")}
    for C, gamma in zip(results["C"], results["gamma"], strict=True):
        fit = SVMClassifier(**{**base, "C": C, "gamma": gamma}).fit(dataset.X, dataset.y)
        alpha = fit.result_.alpha
        out.append(int(np.sum(alpha > 1e-8 * max(1.0, C))) if alpha is not None else -1)
    return out


def _edges(values: list[float]) -> np.ndarray:
    """Cell edges around log-spaced ``values`` (half a step each side; a decade for one value)."""
    logs = np.log10(values)
    if len(logs) == 1:
        return 10.0 ** np.array([logs[0] - 0.5, logs[0] + 0.5])
    mids = (logs[1:] + logs[:-1]) / 2
    return 10.0 ** np.r_[2 * logs[0] - mids[0], mids, 2 * logs[-1] - mids[-1]]


def select_figure(results, n_sv, model, title: str):
    """The figure of ``--plot``: with a γ grid, the validation error over (C, γ) as a heat map,
    each cell's value written in it, and the chosen point (as LIBSVM's grid.py draws it);
    otherwise the error and the support vectors against C. On the right, the seconds each grid
    point took."""
    from svmbench.benchmarks.harness.report_figures import pyplot, readable_log_ticks

    plt = pyplot()
    fig, (ax, right) = plt.subplots(1, 2, figsize=(11.0, 4.4), width_ratios=(1.25, 1))
    Cs = sorted(set(results["C"]))
    gammas = sorted(set(results["gamma"]), key=str)
    grid = len(gammas) > 1 and all(isinstance(g, int | float) for g in gammas)
    chosen = f"chosen: C = {model.C_:.4g}" + (f", γ = {model.gamma_:.4g}" if grid else "")
    if grid:
        gammas = sorted(gammas)
        error = np.full((len(gammas), len(Cs)), np.nan)
        for C, gamma, e in zip(results["C"], results["gamma"], results["error"], strict=True):
            error[gammas.index(gamma), Cs.index(C)] = e
        mesh = ax.pcolormesh(_edges(Cs), _edges(gammas), error, cmap="viridis_r", shading="flat")
        bar = fig.colorbar(mesh, ax=ax)
        bar.set_label("validation error (fraction misclassified)")
        if error.size <= 150:  # each cell's error, in a colour that reads on the cell
            middle = (np.nanmin(error) + np.nanmax(error)) / 2
            for (i, j), e in np.ndenumerate(error):
                ax.text(Cs[j], gammas[i], f"{e:.3f}", ha="center", va="center", fontsize=7,
                        color="white" if e > middle else "black")  # fmt: skip
        ax.plot([model.C_], [model.gamma_], marker="*", markersize=16, color="red",
                markeredgecolor="white", linestyle="none", label=chosen)  # fmt: skip
        ax.set_yscale("log")
        ax.set_ylabel("γ (RBF coefficient, 1 / feature units², log scale)")
        ax.legend(loc="upper right", fontsize=8)
    else:
        ax.plot(results["C"], results["error"], marker="o", color="tab:blue",
                label="validation error")  # fmt: skip
        ax.axvline(model.C_, color="grey", linestyle="--", linewidth=0.8, label=chosen)
        ax.set_ylabel("validation error (fraction misclassified)")
        twin = ax.twinx()
        twin.plot(results["C"], n_sv, color="tab:orange", marker=".", linestyle=":",
                  label="support vectors (full data)")  # fmt: skip
        twin.set_ylabel("support vectors (count, full data)")
        handles = ax.get_legend_handles_labels()
        more = twin.get_legend_handles_labels()
        ax.legend(handles[0] + more[0], handles[1] + more[1], loc="best", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("C (regularization, log scale)")
    ax.set_title(f"validation error: {title}", fontsize=9)
    for gamma in gammas:
        rows = [i for i, g in enumerate(results["gamma"]) if g == gamma]
        label = f"γ = {gamma:.4g}" if grid else f"γ = {gamma}"
        right.plot([results["C"][i] for i in rows], [results["time"][i] for i in rows],
                   marker="o", label=label)  # fmt: skip
    right.set_xscale("log")
    right.set_yscale("log")
    readable_log_ticks(right)
    right.set_xlabel("C (regularization, log scale)")
    right.set_ylabel("time at this grid point (s, measured)")
    right.set_title("time per grid point (all its fold solves)", fontsize=9)
    right.legend(fontsize=8, loc="best")
    for axes in (ax, right):
        axes.tick_params(labelsize=8)
    fig.tight_layout()
    return fig


def _plot(results, n_sv, model, path, title: str) -> None:
    from svmbench.benchmarks.harness.report_figures import pyplot

    fig = select_figure(results, n_sv, model, title)
    with replaced_atomically(path) as temp:
        fig.savefig(
            temp, dpi=120, format=Path(path).suffix.lstrip(".").lower(), bbox_inches="tight"
        )
    pyplot().close(fig)
