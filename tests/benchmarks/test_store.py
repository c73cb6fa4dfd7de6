"""The results store refuses what it cannot use, in one line, and never touches the file."""

from __future__ import annotations

import sqlite3
import time

import pytest

from svmbench.benchmarks.harness.cases import Case
from svmbench.benchmarks.harness.evaluation import Record
from svmbench.benchmarks.harness.store import Store, StoreError


def _fresh(tmp_path):
    path = tmp_path / "r.sqlite"
    Store(path).close()
    return path


def test_a_missing_database_is_an_error_when_reading(tmp_path):
    path = tmp_path / "typo.sqlite"
    with pytest.raises(StoreError, match="no such results database"):
        Store(path, create=False)
    assert not path.exists()  # not created by a read


def test_a_new_database_is_created_when_running(tmp_path):
    path = tmp_path / "sub" / "r.sqlite"
    with Store(path) as store:
        assert store.count() == 0
    assert path.exists()


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "an empty file"),
        (b"time,solver\n1,dcd\n", "not an SQLite database"),
        (b"\x00" * 4096, "not an SQLite database"),
    ],
    ids=["empty", "csv", "zeros"],
)
def test_files_that_are_not_sqlite_are_refused_untouched(tmp_path, content, match):
    path = tmp_path / "r.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError, match=match):
        Store(path)
    assert path.read_bytes() == content


def test_a_truncated_database_is_refused_untouched(tmp_path):
    path = _fresh(tmp_path)
    data = path.read_bytes()
    with sqlite3.connect(path) as conn:  # grow it past one page so that truncation damages it
        conn.execute("CREATE TABLE filler (x BLOB)")
        conn.executemany("INSERT INTO filler VALUES (?)", [(b"x" * 4000,)] * 20)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    cut = path.read_bytes()
    with pytest.raises(StoreError, match="damaged|not an svmbench"):
        with Store(path) as store:
            store.records()
    assert path.read_bytes() == cut


def test_a_database_of_another_schema_is_refused_untouched(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE records (id INTEGER, name TEXT)")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an svmbench results database"):
        Store(path)
    assert path.read_bytes() == before


def test_a_read_only_database_is_a_clear_error(tmp_path, monkeypatch):
    path = _fresh(tmp_path)
    store = Store(path)

    class ReadOnly:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def execute(self, *args):
            raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(store, "_conn", ReadOnly())
    case = Case({"kind": "soft_margin_primal"}, "gaussian:n=10", "dcd")
    with pytest.raises(StoreError, match="read-only"):
        store.add(Record(case, None, status="error"))


def test_a_database_of_the_first_schema_gains_the_new_columns(tmp_path):
    from svmbench.benchmarks.harness import store as store_module

    old = store_module._SCHEMA.replace("    certify_time REAL,\n", "").replace(
        "    case_time REAL,\n", ""
    )
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(old)
    with Store(path, create=False) as store:
        assert store.count() == 0
    with sqlite3.connect(path) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
    assert {"certify_time", "case_time", "wall_time", "option_names"} <= columns


def test_rows_written_with_the_former_option_names_are_read_in_todays(tmp_path):
    """Before 0.2.0 a reference's or anchor's ``tol`` was its library's tolerance (now
    ``eps``) and a reference's certified gap ``gap_check`` (now ``tol``): rows written then
    (no ``option_names``) are read in today's names; rows written now are read as written."""
    from svmbench.benchmarks.harness import store as store_module
    from svmbench.benchmarks.harness.store import row_of

    old_schema = store_module._SCHEMA.replace("    option_names INTEGER,\n", "")
    path = tmp_path / "old.sqlite"
    written = {
        "osqp": {"tol": 1e-9, "gap_check": 1e-8, "rho": 1.0},
        "liblinear_cs": {"tol": 0.1, "seed": 0},
        "dcd": {"tol": 1e-6},
    }
    with sqlite3.connect(path) as conn:
        conn.executescript(old_schema)
        for i, (solver, options) in enumerate(written.items()):
            case = Case({"kind": "soft_margin_primal"}, f"gaussian:n={10 + i}", solver, options)
            row = row_of(Record(case, None, status="optimal"))
            del row["option_names"]
            marks = ", ".join("?" for _ in row)
            conn.execute(
                f"INSERT INTO records ({', '.join(row)}) VALUES ({marks})", tuple(row.values())
            )
    with Store(path, create=False) as store:
        new = Case({"kind": "soft_margin_primal"}, "gaussian:n=20", "libsvm", {"tol": 1e-6})
        store.add(Record(new, None, status="not_certified"))
        read = {r["solver"]: r["solver_options"] for r in store.records()}
        csv_text = store.to_csv()
    assert read == {
        "osqp": {"eps": 1e-9, "tol": 1e-8, "rho": 1.0},
        "liblinear_cs": {"eps": 0.1, "seed": 0},
        "dcd": {"tol": 1e-6},
        "libsvm": {"tol": 1e-6},  # written now: tol is the certified gap
    }
    assert '""eps"": 0.1' in csv_text and "gap_check" not in csv_text


def test_error_rows_are_retried_on_resume_and_timeouts_on_request(tmp_path):
    path = _fresh(tmp_path)
    with Store(path) as store:
        for i, status in enumerate(("optimal", "error", "timeout", "crashed")):
            case = Case({"kind": "soft_margin_primal"}, f"gaussian:n={10 + i}", "dcd")
            store.add(Record(case, None, status=status))
        keys = {r["status"]: r["case_key"] for r in store.records()}
        assert store.finished_keys() == {keys["optimal"], keys["timeout"], keys["crashed"]}
        assert store.finished_keys(retry=("error", "timeout", "crashed")) == {keys["optimal"]}
        # a retried case that now succeeds is finished: its latest row decides
        case = Case({"kind": "soft_margin_primal"}, "gaussian:n=11", "dcd")
        store.add(Record(case, None, status="optimal"))
        assert keys["error"] in store.finished_keys()


def test_trace_points_keep_whether_they_are_certified(tmp_path):
    """smo's trace carries its own O(n) gap estimates between certificates: the store and the
    report must not show them as certified."""
    import json
    import math

    from svmbench.benchmarks.harness.report_figures import is_certified_point
    from svmbench.benchmarks.harness.store import row_of
    from svmbench.solvers.base import Checkpoint, SolveResult, Status

    trace = (
        Checkpoint(10, 0.1, 5.0, 1.0, 4.0, 0.1, certified=False),
        Checkpoint(20, 0.2, 4.0, 3.9, 0.1, 0.2, certified=True),
    )
    result = SolveResult(
        "smo", "kernel_dual", "k", Status.OPTIMAL, 4.0, 3.9, 0.1, 0.025, True, 20,
        "pair updates", 0.2, trace=trace,
    )  # fmt: skip
    case = Case({"kind": "kernel_dual"}, "gaussian:n=10,d=2,sep=1", "smo", {}, 0)
    record = Record(case=case, result=result, status="optimal")
    stored = json.loads(row_of(record)["trace"])
    assert [is_certified_point(p) for p in stored] == [False, True]
    assert is_certified_point([1, 0.1, 1.0, 0.5, 0.5, math.nan])  # a record from before the flag


# ---- several runs on one database (issue 29) -----------------------------------------------------
def _case(i: int) -> Case:
    return Case({"kind": "soft_margin_primal"}, f"gaussian:n={10 + i}", "dcd")


def test_a_new_database_appears_whole(tmp_path, monkeypatch):
    """The second of two runs on a new file never sees it empty (it was refused as "an empty
    file"): the database is built aside and linked into place with its tables."""
    import os

    from svmbench.benchmarks.harness import store as store_module

    path = tmp_path / "new.sqlite"
    seen = []
    link = os.link

    def linking(src, dst):  # what another run finds at the moment the file appears
        seen.append(open(src, "rb").read(16))
        link(src, dst)
        with Store(dst) as other:
            seen.append(other.count())

    monkeypatch.setattr(store_module.os, "link", linking)
    with Store(path) as store:
        assert store.count() == 0
    assert seen == [b"SQLite format 3\x00", 0]
    assert [p.name for p in tmp_path.iterdir()] == ["new.sqlite"]  # nothing left aside
    monkeypatch.setattr(store_module.os, "link", link)
    with Store(path) as again:  # the file exists: opened, not rebuilt
        again.add(Record(_case(0), None, status="optimal"))
        assert again.count() == 1


def test_a_case_claimed_by_a_live_run_is_left_to_it(tmp_path):
    path = _fresh(tmp_path)
    with Store(path) as a, Store(path) as b:
        since = a.last_id()
        run_a, run_b = a.start_run("s"), b.start_run("s")
        assert a.claim(_case(0).key, run_a, since_id=since, expires=time.time() + 60)
        # this process is alive: its claim holds against another run
        assert not b.claim(_case(0).key, run_b, since_id=since, expires=time.time() + 60)
        assert b.claim(_case(1).key, run_b, since_id=since, expires=time.time() + 60)
        a.add(Record(_case(0), None, status="optimal"), run_id=run_a)
        # stored since b started: b does not run it again, even with its claim gone
        assert not b.claim(_case(0).key, run_b, since_id=since, expires=time.time() + 60)
        b.release(run_b)
        assert a.claim(_case(1).key, run_a, since_id=since, expires=time.time() + 60)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT case_key, run_id FROM claims").fetchall() == [
            (_case(1).key, run_a)
        ]


def test_the_claim_of_a_process_that_is_gone_is_taken_over(tmp_path):
    import socket

    path = _fresh(tmp_path)
    with Store(path) as store:
        run_id = store.start_run("s")
        since = store.last_id()
        with sqlite3.connect(path) as conn:  # a run killed mid-case left these claims
            host = socket.gethostname()
            conn.executemany(
                "INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (_case(0).key, "killed", host, 2**22 + 7, 1.0, time.time() + 600),
                    (_case(1).key, "elsewhere", "another-host", 1, 1.0, time.time() + 600),
                    (_case(2).key, "elsewhere", "another-host", 1, 1.0, time.time() - 1),
                ],
            )
        assert store.claim(_case(0).key, run_id, since_id=since, expires=time.time() + 60)
        # another host's claim holds until it expires (its process cannot be checked here)
        assert not store.claim(_case(1).key, run_id, since_id=since, expires=time.time() + 60)
        assert store.claim(_case(2).key, run_id, since_id=since, expires=time.time() + 60)


def test_a_seed_sqlite_cannot_hold_is_refused_before_the_case_runs():
    from svmbench.benchmarks.harness.store import check_storable

    check_storable(Case({"kind": "soft_margin_primal"}, "gaussian:n=10", "dcd", {}, 2**63 - 1))
    with pytest.raises(ValueError, match=r"seed 100000000000000000000 of case .* cannot be stored"):
        check_storable(Case({"kind": "soft_margin_primal"}, "gaussian:n=10", "dcd", {}, 10**20))


def test_rows_a_reader_cannot_use_are_left_out_with_the_reason(tmp_path):
    path = _fresh(tmp_path)
    with Store(path) as store:
        for i in range(5):
            store.add(Record(_case(i), None, status="optimal"))
    keys = [_case(i).key for i in range(5)]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE records SET problem = NULL WHERE case_key = ?", (keys[0],))
        conn.execute("UPDATE records SET trace = ? WHERE case_key = ?", ("[" * 5000, keys[1]))
        conn.execute("UPDATE records SET primal = 'x' WHERE case_key = ?", (keys[2],))
        conn.execute("UPDATE records SET extras = '[1, 2]' WHERE case_key = ?", (keys[3],))
    with Store(path, create=False) as store:
        rows = store.records()
        assert [r["case_key"] for r in rows] == [keys[4]]
        assert [why for _, why in store.bad_rows] == [
            "problem is NULL",
            "trace holds JSON nested too deeply",
            "primal is str, not a number",
            "extras is not a JSON object",
        ]
