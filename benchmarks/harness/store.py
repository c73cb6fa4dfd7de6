"""The results store: one SQLite database, one row per finished case, one transaction per row.

Scalar results are columns; the trace, the case's problem and options, the threads, the
environment (versions, machine, git commit) and the extras (sizes, confusion matrix, 2-D model) are
JSON columns. A row's ``option_names`` says which names its solver options use: rows written
before the renames of 0.2.0 (NULL) are read in today's names
(:func:`svmbench.solvers.registry.renamed_options`: a reference's or anchor's ``tol`` was its
library's tolerance, now ``eps``; a reference's ``gap_check`` is now ``tol``). Rows are never
updated: a case run again gets a new row, and readers take the latest
row per case key (:meth:`Store.records` with ``latest=True``). Only the main process of a run
writes; SQLite's journal makes a run killed midway lose nothing but the case in flight.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sqlite3
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from svmbench.benchmarks.harness.evaluation import Record
from svmbench.solvers.registry import renamed_options

DEFAULT_DB = "svmbench.sqlite"

#: The option names the rows written now use (column ``option_names``); NULL: the names before
#: 0.2.0, renamed when read.
OPTION_NAMES = 2

#: The first bytes of every SQLite 3 database file.
_SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(ValueError):
    """A results database that cannot be used: missing (when reading), not SQLite, damaged, of
    another schema, or not writable. The message is one line naming the file; the file is never
    modified or overwritten."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    suite TEXT,
    started REAL,
    argv TEXT,
    settings TEXT,
    environment TEXT,
    warm_up TEXT
);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    suite TEXT,
    case_key TEXT NOT NULL,
    finished REAL,
    problem_kind TEXT,
    problem TEXT,
    data TEXT,
    solver TEXT,
    solver_options TEXT,
    option_names INTEGER,
    seed INTEGER,
    status TEXT,
    primal REAL,
    dual REAL,
    gap REAL,
    rel_gap REAL,
    certified INTEGER,
    iterations INTEGER,
    iteration_unit TEXT,
    solve_time REAL,
    solve_times TEXT,
    compile_time REAL,
    wall_time REAL,
    certify_time REAL,
    case_time REAL,
    reference_solver TEXT,
    reference_primal REAL,
    reference_dual REAL,
    distance REAL,
    accuracy REAL,
    accuracy_on TEXT,
    n_samples INTEGER,
    n_features INTEGER,
    peak_memory_mb REAL,
    baseline_memory_mb REAL,
    threads TEXT,
    jobs INTEGER,
    parallel INTEGER,
    git_commit TEXT,
    environment TEXT,
    message TEXT,
    trace TEXT,
    info TEXT,
    extras TEXT
);
CREATE INDEX IF NOT EXISTS records_key ON records (case_key);
"""

#: Columns holding JSON text (decoded when read).
JSON_COLUMNS = (
    "problem",
    "solver_options",
    "solve_times",
    "threads",
    "environment",
    "trace",
    "info",
    "extras",
)

#: Columns of the CSV export and of ``svmbench results`` (the JSON ones stay text).
SUMMARY_COLUMNS = (
    "id",
    "suite",
    "case_key",
    "problem_kind",
    "problem",
    "data",
    "solver",
    "solver_options",
    "seed",
    "status",
    "primal",
    "dual",
    "gap",
    "rel_gap",
    "certified",
    "iterations",
    "iteration_unit",
    "solve_time",
    "compile_time",
    "reference_primal",
    "distance",
    "accuracy",
    "accuracy_on",
    "n_samples",
    "n_features",
    "peak_memory_mb",
    "threads",
    "jobs",
    "parallel",
    "git_commit",
    "message",
)


def _check_header(path: Path) -> None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the database ({exc.strerror})") from None
    if head != _SQLITE_HEADER:
        what = "an empty file" if not head else "not an SQLite database"
        raise StoreError(f"{path}: {what}, not an svmbench results database (left untouched)")


#: Columns added since the first schema: a database without them gains them (nothing else
#: changes), so that older results stay readable.
_ADDED_COLUMNS = {
    "records": {"certify_time": "REAL", "case_time": "REAL", "option_names": "INTEGER"}
}


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """The tables and columns this version writes and reads; anything else is refused."""
    expected = {"runs": _columns("runs"), "records": _columns("records")}
    for table, columns in expected.items():
        found = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        added = _ADDED_COLUMNS.get(table, {})
        if found and columns - found and (columns - found) <= set(added):
            with conn:
                for name in sorted(columns - found):
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {added[name]}")
            found |= set(added)
        missing = columns - found
        if missing:
            raise StoreError(
                f"{path}: not an svmbench results database of this version (table {table!r} "
                f"lacks {', '.join(sorted(missing))}; left untouched)"
            )
    if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
        raise StoreError(f"{path}: the database is damaged (SQLite's quick_check fails)")


def _columns(table: str) -> set[str]:
    block = _SCHEMA.split(f"CREATE TABLE IF NOT EXISTS {table} (")[1].split(");")[0]
    return {line.split()[0] for line in block.strip().splitlines() if line.strip()}


def _sqlite_reason(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "readonly" in text:
        return "the database is read-only (check the file's permissions)"
    if "malformed" in text or "not a database" in text:
        return "the database is damaged (left untouched)"
    if "locked" in text:
        return "the database is locked by another process"
    return f"SQLite error: {text}"


def _num(x) -> float | None:
    """SQLite has no NaN; infinities are kept."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _json(value: Any) -> str:
    def default(o):
        if hasattr(o, "tolist"):
            return o.tolist()
        if hasattr(o, "item"):
            return o.item()
        return str(o)

    text = json.dumps(value, default=default, allow_nan=True)
    return text


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


def row_of(record: Record) -> dict[str, Any]:
    """The database row of a record (without ``id``, ``run_id`` and ``suite``)."""
    r = record.result
    c = record.case
    return {
        "case_key": c.key,
        "finished": time.time(),
        "problem_kind": c.problem_kind,
        "problem": _json(c.problem),
        "data": c.data,
        "solver": c.solver,
        "solver_options": _json(c.solver_options),
        "option_names": OPTION_NAMES,
        "seed": c.seed,
        "status": record.status,
        "primal": _num(r.primal) if r else None,
        "dual": _num(r.dual) if r else None,
        "gap": _num(r.gap) if r else None,
        "rel_gap": _num(r.rel_gap) if r else None,
        "certified": int(r.certified) if r else None,
        "iterations": r.iterations if r else None,
        "iteration_unit": r.iteration_unit if r else None,
        "solve_time": _num(record.solve_time),
        "solve_times": _json(list(record.solve_times)),
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
        "threads": _json(record.threads),
        "jobs": record.jobs,
        "parallel": int(record.parallel),
        "git_commit": record.environment.get("git_commit"),
        "environment": _json(record.environment),
        "message": record.message,
        "trace": _json(
            [
                [p.iteration, p.solve_time, p.primal, p.dual, p.gap, p.wall_time, int(p.certified)]
                for p in r.trace
            ]
        )
        if r
        else "[]",
        "info": _json(_plain(dict(r.info))) if r else "{}",
        "extras": _json(_plain(record.extras)),
    }


class Store:
    """An SQLite database of benchmark records (default ``./svmbench.sqlite``).

    Parameters
    ----------
    path : path-like
        The database file.
    create : bool, default=True
        Create the file with its tables when missing (a run); False: a missing file is a
        :class:`StoreError` (reading results).

    Raises
    ------
    StoreError
        When the file is not an svmbench results database or cannot be opened.
    """

    def __init__(self, path: str | Path = DEFAULT_DB, *, create: bool = True):
        self.path = Path(path)
        exists = self.path.exists()
        if not exists and not create:
            raise StoreError(f"{self.path}: no such results database")
        if exists:
            _check_header(self.path)
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot create the database ({exc})") from None
        try:
            self._conn = sqlite3.connect(self.path, timeout=60)
            if exists:
                _check_schema(self._conn, self.path)
            else:
                self._conn.executescript(_SCHEMA)
                self._conn.commit()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {_sqlite_reason(exc)}") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def cache_dir(self) -> Path:
        """Directory of the reference-optimum cache that lives next to the database."""
        return self.path.with_name(self.path.name + ".refcache")

    # ---- writing ---------------------------------------------------------------------------------
    def start_run(
        self,
        suite: str,
        *,
        argv: Iterable[str] = (),
        settings: dict | None = None,
        environment: dict | None = None,
        warm_up: dict | None = None,
    ) -> str:
        """Register a run; returns its id."""
        run_id = uuid.uuid4().hex[:16]
        with self._conn:
            self._conn.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    suite,
                    time.time(),
                    _json(list(argv)),
                    _json(settings or {}),
                    _json(environment or {}),
                    _json(warm_up or {}),
                ),
            )
        return run_id

    def add(self, record: Record, *, run_id: str | None = None, suite: str | None = None) -> int:
        """Store one record in its own transaction; returns its row id."""
        row = {"run_id": run_id, "suite": suite, **row_of(record)}
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        try:
            with self._conn:
                cur = self._conn.execute(
                    f"INSERT INTO records ({cols}) VALUES ({marks})", tuple(row.values())
                )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {_sqlite_reason(exc)}") from None
        return int(cur.lastrowid)

    # ---- reading ---------------------------------------------------------------------------------
    def finished_keys(self, *, retry: tuple[str, ...] = ("error",)) -> set[str]:
        """Keys of the cases that need no new run: those with a record (records of ``svmbench
        check`` excluded) whose latest status is not in ``retry``. An ``error`` (an exception
        of the harness or the solver, a damaged reference cache) is retried by default: it says
        nothing about the method; ``timeout`` and ``crashed`` are retried on request
        (``svmbench run --retry-errors``), since they would likely recur."""
        sql = (
            "SELECT case_key, status FROM records WHERE id IN (SELECT MAX(id) FROM records "
            "WHERE suite IS NULL OR suite NOT LIKE '%:check' GROUP BY case_key)"
        )
        return {k for k, status in self._conn.execute(sql) if status not in retry}

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])

    def records(
        self,
        *,
        suite: str | None = None,
        solver: str | None = None,
        data: str | None = None,
        problem_kind: str | None = None,
        status: str | None = None,
        keys: Iterable[str] | None = None,
        latest: bool = True,
        decode: bool = True,
    ) -> list[dict[str, Any]]:
        """Records as dicts (JSON columns decoded), filtered; substrings match ``data``.

        Parameters
        ----------
        latest : bool, default=True
            Keep only the latest record of each case key.
        """
        where, args = [], []
        for col, value in (
            ("suite", suite),
            ("solver", solver),
            ("problem_kind", problem_kind),
            ("status", status),
        ):
            if value is not None:
                where.append(f"{col} = ?")
                args.append(value)
        if data is not None:
            where.append("data LIKE ?")
            args.append(f"%{data}%")
        sql = "SELECT * FROM records"
        if latest:
            where.append("id IN (SELECT MAX(id) FROM records GROUP BY case_key)")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id"
        cur = self._conn.execute(sql, args)
        names = [d[0] for d in cur.description]
        wanted = set(keys) if keys is not None else None
        out = []
        for values in cur:
            row = dict(zip(names, values))
            if wanted is not None and row["case_key"] not in wanted:
                continue
            if row.get("option_names") is None and row.get("solver_options") is not None:
                # written before the renames: the options in today's names, once, here
                options, notes = renamed_options(
                    row["solver"], json.loads(row["solver_options"]), written_before=True
                )
                if notes:
                    row["solver_options"] = _json(options)
            if decode:
                for col in JSON_COLUMNS:
                    if row.get(col) is not None:
                        row[col] = json.loads(row[col])
            out.append(row)
        return out

    def runs(self) -> list[dict[str, Any]]:
        cur = self._conn.execute("SELECT * FROM runs ORDER BY started")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, values)) for values in cur]

    def to_csv(self, file=None, **filters) -> str:
        """The (filtered) records as CSV (:data:`SUMMARY_COLUMNS`); written to ``file`` if given."""
        rows = self.records(decode=False, **filters)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=SUMMARY_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
        if file is not None:
            Path(file).write_text(text)
        return text

    def to_dataframe(self, **filters):
        """The (filtered) records as a pandas DataFrame (needs the optional extra ``pandas``)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_dataframe needs pandas: pip install 'svmbench[pandas]'") from exc
        return pd.DataFrame(self.records(**filters))
