"""What every part of a report shares: labels, number formats, the colour of each solver, which
records belong in a scaling fit, and why a solver of the suite is missing from a figure.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

FINISHED = ("optimal", "infeasible")


def slug(*parts: str) -> str:
    """A file-name fragment of ``parts`` (letters, digits, ``.=-``; at most 120 characters)."""
    text = "_".join(parts)
    return re.sub(r"[^A-Za-z0-9.=-]+", "_", text).strip("_")[:120]


def fmt(x, spec=".2e") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return format(x, spec)


def problem_label(row: dict[str, Any]) -> str:
    params = ",".join(f"{k}={v}" for k, v in sorted(row["problem"].items()) if k != "kind")
    return f"{row['problem_kind']}({params})"


def solver_label(row: dict[str, Any], *, tol: bool = False) -> str:
    """The solver's name and options (``tol`` too with ``tol=True``; never seed or time limit)."""
    hidden = ("time_limit", "seed") if tol else ("time_limit", "seed", "tol")
    opts = {k: v for k, v in (row.get("solver_options") or {}).items() if k not in hidden}
    extra = ",".join(f"{k}={v}" for k, v in sorted(opts.items()))
    return row["solver"] + (f"[{extra}]" if extra else "")


def is_anchor(row: dict[str, Any]) -> bool:
    """Whether a record is an anchor's (a library of :mod:`svmbench.solvers.anchors`)."""
    extras = row.get("extras") or {}
    if "anchor" in extras:
        return bool(extras["anchor"])
    from svmbench.solvers import registry

    return registry.is_anchor(row["solver"])


def timed_to_the_end(row: dict[str, Any]) -> bool:
    """Whether a record's time belongs in a scaling fit: it met its stopping rule, or it is a
    stochastic method that ran its fixed number of epochs."""
    if row["status"] in FINISHED:
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


def requested_tols(rows: Iterable[dict[str, Any]]) -> list[float]:
    """The certified relative gaps the records asked for (their ``tol`` option, else the
    solver's default), sorted."""
    tols = set()
    for r in rows:
        options = r.get("solver_options") or {}
        tol = options.get("tol")
        if tol is None:
            tol = _default_tol(r.get("solver"), options)
        if isinstance(tol, int | float) and math.isfinite(tol) and tol > 0:
            tols.add(float(tol))
    return sorted(tols)


def _default_tol(name, options: dict[str, Any]) -> float | None:
    """The ``tol`` solver ``name`` takes with these options (None if it cannot be built here)."""
    from svmbench.solvers import registry

    try:
        return float(registry.get(name, **options).tol)
    except (TypeError, ValueError, ImportError):
        return None


def absence_reason(name: str, problem: dict[str, Any]) -> str:
    """Why solver ``name`` has no record for ``problem`` (a stored problem dict: ``kind`` and
    parameters), read from the solver's declared ``supported`` problems where it says."""
    from svmbench.problems import PROBLEMS
    from svmbench.solvers import registry

    try:
        supported = registry.solver_class(name).supported
    except ValueError:
        return "not registered in this installation"
    kind = problem.get("kind")
    if isinstance(supported, dict) and kind in PROBLEMS:
        accepted = supported.get(PROBLEMS[kind])
        if accepted is None:
            return f"does not solve {kind}"
        for key, values in accepted.items():
            if isinstance(values, tuple) and key in problem and problem[key] not in values:
                return f"{key}={problem[key]} not supported (takes {', '.join(map(str, values))})"
    return "no record for this problem"


def absent_solvers(suite_solvers: Iterable[str], rows: list[dict[str, Any]]) -> list[str]:
    """``"reason: name, name"`` for the solvers of ``suite_solvers`` without a record among
    ``rows`` (the records of one problem), grouped by reason."""
    present = {r["solver"] for r in rows}
    problem = rows[0]["problem"] if rows else {}
    by_reason: dict[str, list[str]] = {}
    for name in sorted(set(suite_solvers) - present):
        by_reason.setdefault(absence_reason(name, problem), []).append(name)
    return [f"{reason}: {', '.join(names)}" for reason, names in by_reason.items()]


# ---- one colour per solver ----------------------------------------------------------------------


def _palette() -> list[tuple[float, ...]]:
    import matplotlib

    pairs = matplotlib.colormaps["tab20"].colors  # a dark and a light shade of ten hues
    return [*pairs[0::2], *pairs[1::2], *matplotlib.colormaps["tab20b"].colors]


def _known_solvers() -> list[str]:
    from svmbench.solvers import registry

    return sorted({*registry.names(), *registry.anchor_names()})


def solver_color(name: str) -> tuple[float, ...]:
    """The colour of solver ``name`` in every figure: the registered methods and anchors take
    the palette's colours (ten dark hues, their light shades, then tab20b) in alphabetical
    order, any other name one of the remaining colours chosen by a hash of the name (stable
    across runs and processes)."""
    palette = _palette()
    known = _known_solvers()
    if name in known and known.index(name) < len(palette):
        return palette[known.index(name)]
    spare = max(len(palette) - len(known), 1)
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
    return palette[(len(palette) - spare + digest % spare) % len(palette)]
