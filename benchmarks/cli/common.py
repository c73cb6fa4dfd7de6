"""What every ``svmbench`` command shares: the console, number formatting, the problem flags."""

from __future__ import annotations

import argparse
import math
import re
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
    names = ("C", "loss", "bias", "kernel", "gamma", "degree", "coef0", "bias_scale", "epsilon")
    names += ("nu",)
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            params[name] = value
    return params


def gamma_value(text: str) -> float | str:
    """``--gamma``: a number, or ``scale``/``auto`` (SVC's rules, resolved by the problem)."""
    if text in ("scale", "auto"):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number, 'scale' or 'auto', got {text!r}"
        ) from None


def add_problem_flags(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument(
        "--problem",
        required=required,
        choices=sorted(PROBLEMS),
        help="the problem kind (svmbench list shows what each one is)",
    )
    p.add_argument("--C", type=float, help="the C of C·Σ loss, > 0 (default 1)")
    p.add_argument(
        "--loss",
        choices=["hinge", "squared_hinge", "epsilon_insensitive", "squared_epsilon_insensitive"],
        help="the soft margin's loss (hinge kinds) or the linear SVR's (svr_primal)",
    )
    p.add_argument(
        "--bias",
        choices=["free", "regularized", "none"],
        help="free (LIBSVM's b), regularized (LIBLINEAR's -B) or none",
    )
    p.add_argument(
        "--bias-scale",
        dest="bias_scale",
        type=float,
        help="the constant feature of a regularized bias (default 1)",
    )
    p.add_argument(
        "--kernel",
        choices=["linear", "poly", "rbf", "sigmoid", "precomputed"],
        help="the kernel of a kernel_dual problem",
    )
    p.add_argument(
        "--gamma",
        type=gamma_value,
        help="the kernel's γ: a number, 'scale' (1/(d·Var X), SVC's) or 'auto' (1/d)",
    )
    p.add_argument("--degree", type=int, help="the polynomial kernel's degree (default 3)")
    p.add_argument("--coef0", type=float, help="the poly and sigmoid kernels' c₀ (default 0)")
    p.add_argument("--epsilon", type=float, help="ε-SVR's tube half-width, >= 0 (default 0.1)")
    p.add_argument(
        "--nu",
        type=float,
        help="ν of nu_svc, nu_svr and one_class, in (0, 1] (default 0.5)",
    )


def one_line(text) -> str:
    """``text`` on one line (a message may hold a file's lines or a library's paragraphs)."""
    return " ".join(str(text).split())


def print_error(message) -> None:
    """``error: message``, one line on stderr (no markup: a message may hold brackets)."""
    print(f"error: {one_line(message)}", file=sys.stderr)


def print_warning(message) -> None:
    """``warning: message``, one line on stderr."""
    print(f"warning: {one_line(message)}", file=sys.stderr)


def spec_paths(spec: str) -> list[str]:
    """The files a data spec reads (``libsvm:path=FILE``): inputs no output may overwrite."""
    return re.findall(r"(?:^[^:,]*:|,)path=([^,]+)", spec or "")


def load_data(spec: str, memory_limit_mb: float | None = None):
    """The data set of ``spec``, refused (``ValueError``) before it is generated when its
    estimated size exceeds ``memory_limit_mb`` (default: 80 % of the available memory), as
    ``svmbench run`` refuses it."""
    from svmbench.benchmarks.harness.cases import default_memory_budget_mb, spec_over_budget
    from svmbench.problems.datasets import load

    budget = memory_limit_mb or default_memory_budget_mb()
    why = spec_over_budget(spec, budget)
    if why is not None:
        raise ValueError(f"--data: {why} (--memory-limit MB to change the budget)")
    return load(spec)


def option_names(cls: type) -> list[str]:
    """The options a solver class's constructors name (``**common`` aside)."""
    import inspect

    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        try:
            params = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            continue
        names |= {
            p.name for p in params if p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD
        }
    return sorted(names - {"self"})


def configured_solver(name: str, options: dict, flag: str, *, name_flag: str | None = None):
    """The solver ``name`` with ``options``; an unknown option, or a value the solver refuses,
    is a ``ValueError``/``TypeError`` naming ``flag`` (and the options it takes), an unknown
    name one naming ``name_flag`` (default ``flag``)."""
    import difflib

    from svmbench.solvers import registry

    try:
        cls = registry.solver_class(name)
    except ValueError as exc:
        raise ValueError(f"{name_flag or flag}: {exc}") from None
    known = option_names(cls)
    for option in options:
        if not registry.accepts_option(cls, option):
            close = difflib.get_close_matches(option, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"{flag}: solver {name!r} takes no option {option!r}{hint}; its options: "
                f"{', '.join(known)}"
            )
    try:
        return registry.get(name, **options)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{flag}: {exc}") from None
