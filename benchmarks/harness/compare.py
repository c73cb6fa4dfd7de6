"""Solvers and anchors side by side on one problem, every model judged by the same certificate.

``svmbench compare --problem soft_margin_primal --data gaussian:n=2000,d=20,sep=1
--C 1 --bias regularized --solvers osqp,clarabel,liblinear,sklearn_linearsvc --repeat 3``

Each named solver (a name of :mod:`svmbench.solvers.registry`: a method or an anchor of
:mod:`svmbench.solvers.anchors`) runs once as a warm-up (JIT compilation, imports, caches), then
``repeat`` times; the time is the median ``solve_time`` of those runs (what each solver counts as
solve time: for an anchor, only the library's training call). Status, iterations and the certified
relative gap are those of the last run. The distance to the optimum is ``|P − P*| / max(1, |P*|)``
with ``P*`` the reference optimum of :func:`~svmbench.benchmarks.harness.evaluation.reference`
(Clarabel's; OSQP's where Clarabel stops short), computed only when the problem is small enough for
Clarabel (:data:`REFERENCE_MAX_N`, :data:`REFERENCE_MAX_NNZ`); otherwise it is left blank and the
table says why. A name that cannot run (unknown, package missing, problem not supported) gets a row
that says why.
"""

from __future__ import annotations

import ast
import math
import os
import statistics
import warnings
from typing import Any

import numpy as np
from scipy import sparse

from svmbench.benchmarks.harness.evaluation import accuracy
from svmbench.benchmarks.harness.evaluation import reference as reference_optimum
from svmbench.problems import KernelDual
from svmbench.problems.base import Problem
from svmbench.solvers import registry
from svmbench.solvers.base import ConvergenceWarning, Solver, Status

#: Largest n for which Clarabel's reference optimum is computed (linear problems).
REFERENCE_MAX_N = 20_000
#: Largest number of non-zeros of X for which the reference is computed (linear problems).
REFERENCE_MAX_NNZ = 2_000_000
#: Largest n of a kernel problem for the reference (its QP has a dense n×n matrix).
REFERENCE_MAX_N_KERNEL = 3_000


def reference_skip_reason(problem: Problem) -> str | None:
    """None when Clarabel's reference is affordable for ``problem``, else why not."""
    n = problem.n_samples
    if isinstance(problem, KernelDual):
        if n > REFERENCE_MAX_N_KERNEL:
            return f"n={n} > {REFERENCE_MAX_N_KERNEL} (dense kernel QP)"
        if not problem.convex:
            return f"the {problem.kernel} kernel matrix is indefinite"
        return None
    nnz = problem.X.nnz if sparse.issparse(problem.X) else int(np.count_nonzero(problem.X))
    if n > REFERENCE_MAX_N:
        return f"n={n} > {REFERENCE_MAX_N}"
    if nnz > REFERENCE_MAX_NNZ:
        return f"nnz(X)={nnz} > {REFERENCE_MAX_NNZ}"
    return None


def _make_solver(name: str, options: dict[str, Any]) -> tuple[Solver | None, str, str | None]:
    """``(solver, kind, reason)``: a configured solver, ``"solver"`` or ``"anchor"``, or why not."""
    try:
        cls = registry.solver_class(name)
    except ValueError as exc:
        return None, "?", str(exc)
    kind = "anchor" if cls.anchor else "solver"
    why = cls.missing_reason()
    if why:
        return None, kind, why
    return registry.get(name, **options), kind, None


def _blank_row(name: str, kind: str, reason: str) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "status": "not run",
        "time": math.nan,
        "times": [],
        "iterations": None,
        "iteration_unit": "",
        "rel_gap": math.nan,
        "certified": False,
        "primal": math.nan,
        "distance": math.nan,
        "accuracy": math.nan,
        "threads": "",
        "note": reason,
    }


def compare(
    problem: Problem,
    names: list[str],
    repeat: int = 3,
    *,
    options: dict[str, dict[str, Any]] | None = None,
    reference: bool = True,
) -> list[dict[str, Any]]:
    """Run each named solver on ``problem`` and judge it; one dict per name, in order.

    Parameters
    ----------
    problem : Problem
    names : list of str
        Registry names and anchor names.
    repeat : int, default=3
        Timed runs after one warm-up run; ``time`` is their median ``solve_time``.
    options : dict, default=None
        ``{name: {option: value}}`` passed to the solver's constructor.
    reference : bool, default=True
        Compute Clarabel's optimum (when affordable) for the ``distance`` column.

    Returns
    -------
    list of dict
        Keys ``name, kind ("solver" | "anchor"), status, time, times, iterations,
        iteration_unit, rel_gap, certified, primal, distance, accuracy, threads, note``. A name
        that could not run has status ``"not run"`` and the reason in ``note``. The reference
        optimum and why it is missing, if it is, are in every row as ``reference_primal`` and
        ``reference_note``.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    options = options or {}
    ref_primal, ref_note = math.nan, ""
    if reference:
        why = reference_skip_reason(problem)
        if why:
            ref_note = f"no reference optimum: {why}"
        else:
            ref = reference_optimum(problem, cache_dir=os.environ.get("SVMBENCH_CACHE_DIR"))
            if ref is None:
                ref_note = "no reference optimum: neither Clarabel nor OSQP certified one"
            else:
                ref_primal = ref.primal
    else:
        ref_note = "no reference optimum: not asked for"

    rows = []
    for name in names:
        solver, kind, why = _make_solver(name, options.get(name, {}))
        if solver is not None:
            why = solver.unsupported_reason(problem)
        if why:
            row = _blank_row(name, kind, why)
        else:
            row = _run(problem, name, kind, solver, repeat)
            if math.isfinite(ref_primal) and math.isfinite(row["primal"]):
                row["distance"] = abs(row["primal"] - ref_primal) / max(1.0, abs(ref_primal))
        row["reference_primal"] = ref_primal
        row["reference_note"] = ref_note
        rows.append(row)
    return rows


def _run(problem: Problem, name: str, kind: str, solver: Solver, repeat: int) -> dict[str, Any]:
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            for _ in range(repeat + 1):  # the first run is the warm-up
                results.append(solver.solve(problem))
        except Exception as exc:  # a failing solver gets a row, not a crashed comparison
            return _blank_row(name, kind, f"failed: {type(exc).__name__}: {exc}")
    last = results[-1]
    times = [r.solve_time for r in results[1:]]
    walls = [r.wall_time for r in results[1:]]
    threads = getattr(solver, "threads", "")
    return {
        "name": name,
        "kind": kind,
        "status": last.status.value,
        "time": statistics.median(times),
        "times": times,
        "wall": statistics.median(walls),
        "iterations": last.iterations,
        "iteration_unit": last.iteration_unit,
        "rel_gap": last.rel_gap,
        "certified": last.certified,
        "primal": last.primal,
        "distance": math.nan,
        "accuracy": accuracy(problem, last),
        "threads": str(threads),
        "note": "" if last.status is Status.OPTIMAL else last.message,
    }


# ---- command line ------------------------------------------------------------------------------


def _fmt(x, spec: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return ""
    return format(x, spec)


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width text table (the notes below it)."""
    header = ["solver", "status", "wall [s]", "solve [s]", "iterations", "rel gap", "dist to P*"]
    header += ["train acc"]
    header += ["threads"]
    body = []
    for r in rows:
        iters = "" if r["iterations"] is None else f"{r['iterations']} {r['iteration_unit']}"
        gap = _fmt(r["rel_gap"], ".2e") + (
            "" if r["certified"] or r["status"] == "not run" else "*"
        )
        body.append(
            [
                r["name"],
                r["status"],
                _fmt(r.get("wall"), ".4g"),
                _fmt(r["time"], ".4g"),
                iters,
                gap,
                _fmt(r["distance"], ".2e"),
                _fmt(r["accuracy"], ".4f"),
                r["threads"],
            ]
        )
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    notes = [f"{r['name']}: {r['note']}" for r in rows if r["note"]]
    if any(not r["certified"] and r["status"] != "not run" for r in rows):
        notes.append("* not certified (weak duality does not vouch for the gap)")
    if rows and rows[0].get("reference_note"):
        notes.append(rows[0]["reference_note"])
    return "\n".join(lines + (["", *notes] if notes else []))


def parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return {"none": None, "true": True, "false": False}.get(text.lower(), text)


def parse_settings(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``["liblinear.eps=1e-6", "libsvm.cache_mb=500"]`` to ``{"liblinear": {"eps": 1e-6}, ...}``.

    Values are Python literals (``1e-6``, ``None``, ``True``); anything else stays a string.
    """
    out: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        name, dot, option = key.partition(".")
        if not sep or not dot or not name or not option:
            raise ValueError(f"--set takes NAME.OPTION=VALUE, got {pair!r}")
        out.setdefault(name, {})[option] = parse_value(text)
    return out
