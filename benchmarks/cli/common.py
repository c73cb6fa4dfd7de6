"""What every ``svmbench`` command shares: the console, number formatting, the problem flags."""

from __future__ import annotations

import argparse
import math
import sys

from rich.console import Console

from svmbench.problems import PROBLEMS

#: A fixed width when not on a terminal, so that tables stay readable in logs and CI.
console = Console(width=None if sys.stdout.isatty() else 160)


def fmt(x: float, spec: str = ".2e") -> str:
    """``x`` formatted by ``spec``; ``-`` for a missing value (None or nan)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def problem_params(args: argparse.Namespace) -> dict:
    params = {"kind": args.problem}
    for name in ("C", "loss", "bias", "kernel", "gamma", "degree", "coef0", "bias_scale"):
        value = getattr(args, name)
        if value is not None:
            params[name] = value
    return params


def add_problem_flags(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--problem", required=required, choices=sorted(PROBLEMS))
    p.add_argument("--C", type=float)
    p.add_argument("--loss", choices=["hinge", "squared_hinge"])
    p.add_argument("--bias", choices=["free", "regularized", "none"])
    p.add_argument("--bias-scale", dest="bias_scale", type=float)
    p.add_argument("--kernel", choices=["linear", "poly", "rbf", "sigmoid", "precomputed"])
    p.add_argument("--gamma", type=float)
    p.add_argument("--degree", type=int)
    p.add_argument("--coef0", type=float)
