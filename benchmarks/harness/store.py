"""The results store: one SQLite database, one row per finished case, one transaction per row.

Scalar results are columns; the trace, the case's problem and options, the threads, the
environment (versions, machine, git commit) and the extras (sizes, confusion matrix, 2-D model) are
JSON columns (:mod:`~svmbench.benchmarks.harness.store_rows` makes and checks the rows). A
row's ``option_names`` says which names its solver options use: rows written before the renames
of 0.2.0 (NULL) are read in today's names (:func:`svmbench.solvers.registry.renamed_options`: a
reference's or anchor's ``tol`` was its library's tolerance, now ``eps``; a reference's
``gap_check`` is now ``tol``). Rows are
never updated: a case run again gets a new row, and readers take the latest row per case key
(:meth:`Store.records` with ``latest=True``). Only the main process of a run writes; SQLite's
journal makes a run killed midway lose nothing but the case in flight.

Several runs may write one database at once. A new database is built aside and linked into place
whole, so that a second run never sees it half made. A run claims each case in a transaction
just before the case starts (:meth:`Store.claim`, table ``claims``) and stores its record and
drops the claim in another: a case claimed by a live run, or stored by another run since this
one started, is left to that run, so that no case is stored twice. A claim of a process that is
gone (killed) is taken over.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from svmbench.benchmarks.harness.evaluation import Record
from svmbench.benchmarks.harness.files import replaced_atomically
from svmbench.benchmarks.harness.store_rows import (
    JSON_COLUMNS,
    case_columns,
    decode_row,
    row_of,
    to_json,
)
from svmbench.solvers.registry import renamed_options

DEFAULT_DB = "svmbench.sqlite"

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

#: The cases being run: one row per case, by the run that will store it (see the module
#: docstring). Added to an older database when a run first writes it.
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    case_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    host TEXT,
    pid INTEGER,
    pid_started REAL,
    expires REAL
);
"""

#: Seconds a command waits for another process's transaction before calling the file locked.
BUSY_TIMEOUT = 60.0

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
    "wall_time",
    "certify_time",
    "case_time",
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


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, holding SQLite's write lock from its start (``BEGIN IMMEDIATE``):
    what it reads cannot change before it commits."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """The tables and columns this version writes and reads; anything else is refused."""
    expected = {"runs": _columns("runs"), "records": _columns("records")}
    for table, columns in expected.items():
        found = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        added = _ADDED_COLUMNS.get(table, {})
        if found and columns - found and (columns - found) <= set(added):
            with _transaction(conn):
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
    if "readonly" in text or "read-only" in text:
        return "the database is read-only (check the file's and its folder's permissions)"
    if "malformed" in text or "not a database" in text:
        return "the database is damaged (left untouched)"
    if "locked" in text or "busy" in text:
        return f"the database is locked by another process (waited {BUSY_TIMEOUT:g} s)"
    if "unable to open" in text:
        return "cannot open the database (check its folder's permissions)"
    return f"SQLite error: {text}"


def check_storable(case) -> None:
    """Refuse (``ValueError`` naming the value) a case whose columns SQLite cannot hold, e.g. a
    seed beyond 64 bits, before it runs: its result could not be stored."""
    values = case_columns(case)
    probe = sqlite3.connect(":memory:")
    try:
        for name, value in values.items():
            try:
                probe.execute("SELECT ?", (value,))
            except (OverflowError, sqlite3.Error) as exc:
                raise ValueError(
                    f"{name} {value!r} of case {case.label()} cannot be stored in the results "
                    f"database ({exc})"
                ) from None
    finally:
        probe.close()


def _process_identity() -> tuple[str, int, float]:
    """This process as a claim names it: host, pid and the pid's start time (pids are reused)."""
    import psutil

    return socket.gethostname(), os.getpid(), psutil.Process().create_time()


def _claim_is_live(host: str | None, pid: int | None, started: float | None, expires) -> bool:
    """Whether the process that made a claim may still be running its case: on this host, the
    process itself (same pid, same start time); on another, until the claim expires."""
    import psutil

    if host != socket.gethostname():
        return expires is not None and time.time() < expires
    try:
        return started is not None and abs(psutil.Process(pid).create_time() - started) < 0.01
    except (psutil.Error, TypeError, ValueError):
        return False


class Store:
    """An SQLite database of benchmark records (default ``./svmbench.sqlite``).

    Parameters
    ----------
    path : path-like
        The database file.
    create : bool, default=True
        For writing: create the file with its tables when missing (atomically: several runs
        may start on one new file), and check that it can be written. False: for reading only;
        a missing file is a :class:`StoreError`, and nothing is written.

    Raises
    ------
    StoreError
        When the file is not an svmbench results database or cannot be opened (or written).

    Attributes
    ----------
    bad_rows : list of (int, str)
        The rows the last :meth:`records` or :meth:`to_csv` left out, with the reason (a row a
        reader could not use: wrong types, NULL where a value is needed, JSON nested too deeply).
    """

    def __init__(self, path: str | Path = DEFAULT_DB, *, create: bool = True):
        self.path = Path(path)
        self.bad_rows: list[tuple[int, str]] = []
        self._conn = None
        if not self.path.exists():
            if not create:
                raise StoreError(f"{self.path}: no such results database")
            self._create()
        _check_header(self.path)
        try:
            self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            self._conn.text_factory = lambda b: b.decode("utf-8", "replace")
            _check_schema(self._conn, self.path)
            if create:
                with _transaction(self._conn):  # the claims table, and a write that proves we can
                    self._conn.execute(_CLAIMS)
                    self._conn.execute("SAVEPOINT probe")
                    self._conn.execute("INSERT INTO claims (case_key, run_id) VALUES ('', '')")
                    self._conn.execute("ROLLBACK TO probe")
        except sqlite3.Error as exc:
            self.close()
            raise StoreError(f"{self.path}: {_sqlite_reason(exc)}") from None
        except StoreError:
            self.close()
            raise

    def _create(self) -> None:
        """Build the database aside, then link it into place: another process sees no file or
        the whole database. When another run linked its own first, that one is used."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.new")
            try:
                conn = sqlite3.connect(temp)
                try:
                    conn.executescript(_SCHEMA + _CLAIMS)
                finally:
                    conn.close()
                try:
                    os.link(temp, self.path)
                except FileExistsError:
                    pass  # another run created it: use theirs
                except OSError:  # a file system without hard links
                    if not self.path.exists():
                        os.replace(temp, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    temp.unlink()
        except (OSError, sqlite3.Error) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise StoreError(f"{self.path}: cannot create the database ({reason})") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite's errors as one-line :class:`StoreError` naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {_sqlite_reason(exc)}") from None

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
        with self._errors(), _transaction(self._conn):
            self._conn.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    suite,
                    time.time(),
                    to_json(list(argv)),
                    to_json(settings or {}),
                    to_json(environment or {}),
                    to_json(warm_up or {}),
                ),
            )
        return run_id

    def add(self, record: Record, *, run_id: str | None = None, suite: str | None = None) -> int:
        """Store one record and drop the run's claim on its case, in one transaction; returns
        its row id."""
        row = {"run_id": run_id, "suite": suite, **row_of(record)}
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        try:
            with self._errors(), _transaction(self._conn):
                cur = self._conn.execute(
                    f"INSERT INTO records ({cols}) VALUES ({marks})", tuple(row.values())
                )
                if run_id is not None:
                    self._conn.execute(
                        "DELETE FROM claims WHERE case_key = ? AND run_id = ?",
                        (row["case_key"], run_id),
                    )
        except OverflowError as exc:
            raise StoreError(
                f"{self.path}: the record of {record.case.label()} holds a value SQLite cannot "
                f"store ({exc})"
            ) from None
        return int(cur.lastrowid)

    def last_id(self) -> int:
        """The id of the newest record (0 when there is none): what a run saw when it started."""
        with self._errors():
            return int(self._conn.execute("SELECT COALESCE(MAX(id), 0) FROM records").fetchone()[0])

    def claim(self, case_key: str, run_id: str, *, since_id: int, expires: float) -> bool:
        """Claim a case for the run ``run_id``, in one transaction; False when the case is another
        run's: claimed by a live process, or stored since this run started (a record with an id
        above ``since_id``). ``expires``: the time after which a process on another host is
        presumed gone (its liveness cannot be checked from here)."""
        host, pid, started = _process_identity()
        with self._errors(), _transaction(self._conn):
            stored = self._conn.execute(
                "SELECT 1 FROM records WHERE case_key = ? AND id > ? AND "
                "(suite IS NULL OR suite NOT LIKE '%:check') LIMIT 1",
                (case_key, since_id),
            ).fetchone()
            if stored:
                return False
            held = self._conn.execute(
                "SELECT run_id, host, pid, pid_started, expires FROM claims WHERE case_key = ?",
                (case_key,),
            ).fetchone()
            if held and held[0] != run_id and _claim_is_live(*held[1:]):
                return False
            self._conn.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?)",
                (case_key, run_id, host, pid, started, expires),
            )
        return True

    def release(self, run_id: str) -> None:
        """Drop the claims ``run_id`` still holds (cases it did not finish: interrupted)."""
        with self._errors(), _transaction(self._conn):
            self._conn.execute("DELETE FROM claims WHERE run_id = ?", (run_id,))

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
        with self._errors():
            return {k for k, status in self._conn.execute(sql) if status not in retry}

    def count(self) -> int:
        with self._errors():
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
        """Records as dicts (JSON columns decoded), filtered; substrings match ``data``. A row
        that cannot be used is left out, and listed in :attr:`bad_rows` with the reason.

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
        wanted = set(keys) if keys is not None else None
        out = []
        self.bad_rows = []
        with self._errors():
            cur = self._conn.execute(sql, args)
            names = [d[0] for d in cur.description]
            for values in cur:
                row = dict(zip(names, values))
                if wanted is not None and row.get("case_key") not in wanted:
                    continue
                if row.get("option_names") is None and isinstance(row.get("solver_options"), str):
                    # written before the renames: the options in today's names, once, here
                    try:
                        options, notes = renamed_options(
                            row["solver"], json.loads(row["solver_options"]), written_before=True
                        )
                    except (TypeError, ValueError, RecursionError):
                        notes = None  # decode_row says what is wrong with the row
                    if notes:
                        row["solver_options"] = to_json(options)
                why = decode_row(row, decode=decode)
                if why is None:
                    out.append(row)
                else:
                    self.bad_rows.append((row.get("id"), why))
        return out

    def runs(self) -> list[dict[str, Any]]:
        with self._errors():
            cur = self._conn.execute("SELECT * FROM runs ORDER BY started")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, values)) for values in cur]

    def to_csv(self, file=None, **filters) -> str:
        """The (filtered) records as CSV: every stored column, :data:`SUMMARY_COLUMNS` first, the
        JSON ones as text (:mod:`benchmarks.harness.exports`); written to ``file`` if given
        (through a temporary file renamed into place)."""
        from svmbench.benchmarks.harness.exports import csv_text

        text = csv_text(self.records(decode=False, **filters), SUMMARY_COLUMNS)
        if file is not None:
            with replaced_atomically(file) as temp:
                temp.write_text(text, encoding="utf-8")
        return text

    def to_parquet(self, file, **filters) -> int:
        """The (filtered) records as a Parquet file, the columns of :meth:`to_csv`; the number
        of records. Needs pyarrow (the optional extra ``parquet``)."""
        from svmbench.benchmarks.harness.exports import write_parquet

        return write_parquet(self.records(decode=False, **filters), file, SUMMARY_COLUMNS)

    def to_dataframe(self, **filters):
        """The (filtered) records as a pandas DataFrame, one row per record, the JSON columns
        decoded (needs the optional extra ``pandas``)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_dataframe needs pandas: pip install 'svmbench[pandas]'") from exc
        return pd.DataFrame(self.records(**filters))


__all__ = ["DEFAULT_DB", "JSON_COLUMNS", "Store", "StoreError", "check_storable", "row_of"]
