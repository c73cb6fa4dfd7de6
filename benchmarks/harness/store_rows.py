"""The rows of the results store: a record made into a row (:func:`row_of`), a stored row checked
and decoded (:func:`decode_row`).

A database is a file a user may have edited, damaged or been handed: every row read is checked
against the types the readers use (text, numbers, JSON objects of the expected shapes) and a
row that fails is reported with its reason instead of crashing a report. JSON nested deeper than
the decoder can follow is one such reason.
"""

from __future__ import annotations

import json
import math
import numbers
import time
from typing import Any

from svmbench.benchmarks.harness.evaluation import Record

#: Columns holding JSON text (decoded when read), and the type each must decode to.
JSON_COLUMNS = {
    "problem": dict,
    "solver_options": dict,
    "solve_times": list,
    "threads": dict,
    "environment": dict,
    "trace": list,
    "info": dict,
    "extras": dict,
}

#: Text columns that every row has (the case and its outcome).
REQUIRED_TEXT = ("case_key", "problem_kind", "data", "solver", "status")
#: Text columns that may be NULL.
OPTIONAL_TEXT = ("run_id", "suite", "iteration_unit", "reference_solver", "accuracy_on",
                 "git_commit", "message")  # fmt: skip
#: Integer columns (NULL allowed).
INTEGER_COLUMNS = ("id", "seed", "certified", "iterations", "n_samples", "n_features", "jobs",
                   "parallel")  # fmt: skip
#: Real columns (NULL for NaN).
REAL_COLUMNS = ("finished", "primal", "dual", "gap", "rel_gap", "solve_time", "compile_time",
                "wall_time", "certify_time", "case_time", "reference_primal", "reference_dual",
                "distance", "accuracy", "peak_memory_mb", "baseline_memory_mb")  # fmt: skip


def _num(x) -> float | None:
    """SQLite has no NaN; infinities are kept."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def to_json(value: Any) -> str:
    """``value`` as JSON text (arrays as lists, NaN and infinities kept)."""

    def default(o):
        if hasattr(o, "tolist"):
            return o.tolist()
        if hasattr(o, "item"):
            return o.item()
        return str(o)

    return json.dumps(value, default=default, allow_nan=True)


def _plain(value: Any) -> Any:
    """A JSON-serializable version of a solver's info mapping (arrays left out when large)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "shape") and getattr(value, "size", 0) > 64:
        return f"<array shape={tuple(value.shape)}>"
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


#: The option names the rows written now use (column ``option_names``); NULL: the names before
#: 0.2.0, renamed when read.
OPTION_NAMES = 2


def case_columns(case) -> dict[str, Any]:
    """The columns a case fills (known before it runs: what :func:`row_of` stores of it)."""
    return {
        "case_key": case.key,
        "problem_kind": case.problem_kind,
        "problem": to_json(case.problem),
        "data": case.data,
        "solver": case.solver,
        "solver_options": to_json(case.solver_options),
        "seed": case.seed,
    }


def row_of(record: Record) -> dict[str, Any]:
    """The database row of a record (without ``id``, ``run_id`` and ``suite``)."""
    r = record.result
    trace = [
        [p.iteration, p.solve_time, p.primal, p.dual, p.gap, p.wall_time, int(p.certified)]
        for p in (r.trace if r else ())
    ]
    return {
        **case_columns(record.case),
        "option_names": OPTION_NAMES,
        "finished": time.time(),
        "status": record.status,
        "primal": _num(r.primal) if r else None,
        "dual": _num(r.dual) if r else None,
        "gap": _num(r.gap) if r else None,
        "rel_gap": _num(r.rel_gap) if r else None,
        "certified": int(r.certified) if r else None,
        "iterations": r.iterations if r else None,
        "iteration_unit": r.iteration_unit if r else None,
        "solve_time": _num(record.solve_time),
        "solve_times": to_json(list(record.solve_times)),
        "compile_time": _num(r.compile_time) if r else None,
        "wall_time": _num(record.wall_time),
        "certify_time": _num(r.certify_time) if r else None,
        "case_time": _num(record.case_time),
        "reference_solver": record.reference_solver or None,
        "reference_primal": _num(record.reference_primal),
        "reference_dual": _num(record.reference_dual),
        "distance": _num(record.distance),
        "accuracy": _num(record.accuracy),
        "accuracy_on": record.accuracy_on or None,
        "n_samples": record.extras.get("n_samples"),
        "n_features": record.extras.get("n_features"),
        "peak_memory_mb": _num(record.peak_memory_mb),
        "baseline_memory_mb": _num(record.baseline_memory_mb),
        "threads": to_json(record.threads),
        "jobs": record.jobs,
        "parallel": int(record.parallel),
        "git_commit": record.environment.get("git_commit"),
        "environment": to_json(record.environment),
        "message": record.message,
        "trace": to_json(trace) if r else "[]",
        "info": to_json(_plain(dict(r.info))) if r else "{}",
        "extras": to_json(_plain(record.extras)),
    }


# ---- reading -------------------------------------------------------------------------------------


def _scalar(value) -> bool:
    return value is None or isinstance(value, str | numbers.Real)


def _is_number(value) -> bool:
    return value is None or (isinstance(value, numbers.Real) and not isinstance(value, str))


def decode_row(row: dict[str, Any], *, decode: bool = True) -> str | None:
    """Check one stored row (decoding its JSON columns in place when ``decode``); None when it
    is usable, else the reason, one short phrase."""
    for col in REQUIRED_TEXT:
        if not isinstance(row.get(col), str):
            return f"{col} is {_kind(row.get(col))}, not text"
    for col in OPTIONAL_TEXT:
        if row.get(col) is not None and not isinstance(row[col], str):
            return f"{col} is {_kind(row[col])}, not text"
    for col in INTEGER_COLUMNS:
        value = row.get(col)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            return f"{col} is {_kind(value)}, not an integer"
    for col in REAL_COLUMNS:
        if not _is_number(row.get(col)):
            return f"{col} is {_kind(row.get(col))}, not a number"
    if not decode:
        return None
    for col, kind in JSON_COLUMNS.items():
        text = row.get(col)
        if text is None:
            if col == "problem":
                return "problem is NULL"
            continue
        if not isinstance(text, str):
            return f"{col} is {_kind(text)}, not JSON text"
        try:
            value = json.loads(text)
        except RecursionError:
            return f"{col} holds JSON nested too deeply"
        except ValueError:
            return f"{col} is not valid JSON"
        if not isinstance(value, kind):
            return f"{col} is not a JSON {'object' if kind is dict else 'array'}"
        row[col] = value
    return _check_shapes(row)


def _check_shapes(row: dict[str, Any]) -> str | None:
    """The parts of the JSON columns that readers (tables, reports) use, by type."""
    problem = row["problem"]
    if not all(isinstance(k, str) and _scalar(v) for k, v in problem.items()):
        return "problem holds values that are not numbers or text"
    if not all(_is_number(t) for t in row.get("solve_times") or []):
        return "solve_times holds values that are not numbers"
    if not all(_scalar(v) for v in (row.get("threads") or {}).values()):
        return "threads holds values that are not numbers or text"
    for point in row.get("trace") or []:
        if not (isinstance(point, list) and 5 <= len(point) <= 7 and all(map(_is_number, point))):
            return "trace holds a point that is not 5 to 7 numbers"
    env = row.get("environment") or {}
    for key in ("machine", "versions"):
        if not isinstance(env.get(key, {}), dict):
            return f"environment.{key} is not a JSON object"
    if not all(_scalar(v) for v in env.get("machine", {}).values()):
        return "environment.machine holds values that are not numbers or text"
    if not all(_scalar(v) for v in env.get("versions", {}).values()):
        return "environment.versions holds values that are not numbers or text"
    extras = row.get("extras") or {}
    for key in ("n_samples", "n_features", "n_classes", "n_test"):
        if not _is_number(extras.get(key)):
            return f"extras.{key} is not a number"
    confusion = extras.get("confusion")
    if confusion is not None and not _is_matrix(confusion):
        return "extras.confusion is not a square matrix of counts"
    model = extras.get("model")
    if model is not None and not isinstance(model, dict):
        return "extras.model is not a JSON object"
    return None


def _is_matrix(value) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(r, list) and len(r) == len(value) for r in value)
        and all(isinstance(v, int) and not isinstance(v, bool) for r in value for v in r)
    )


def _kind(value) -> str:
    return "NULL" if value is None else type(value).__name__


__all__ = ["JSON_COLUMNS", "case_columns", "decode_row", "row_of", "to_json"]
