"""The harness: grid expansion, worker processes and their limits, the store, resume, check, Dask.

Test-only solvers live in ``tests/benchmarks/_fake_solvers.py``; suites name that module in
``imports`` so that the workers (spawned processes) register them too.
"""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from svmbench.benchmarks.cli import main as cli
from svmbench.benchmarks.harness.cases import Case, expand
from svmbench.benchmarks.harness.check import judge
from svmbench.benchmarks.harness.evaluation import execute_case
from svmbench.benchmarks.harness.execution import run_cases
from svmbench.benchmarks.harness.report import fit_exponent
from svmbench.benchmarks.harness.settings import Settings
from svmbench.benchmarks.harness.store import Store
from svmbench.benchmarks.harness.suite_files import load_suite, shipped_suites
from svmbench.problems.datasets import load
from svmbench.solvers import registry

ROOT = Path(__file__).resolve().parents[2]
FAKES = "tests.benchmarks._fake_solvers"
TINY = "gaussian:n=40,d=3,sep=1,seed=0"


@pytest.fixture(autouse=True)
def _fakes_registered():
    import importlib

    importlib.import_module(FAKES)


def _suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return path


# ---- grid expansion ----------------------------------------------------------------------------


def test_wildcard_selects_every_registered_solver_that_accepts_the_problem():
    suite = {
        "data": [TINY, "iris"],
        "solvers": ["*"],
        "problems": [{"kind": "soft_margin_primal", "C": 1.0}, {"kind": "multiclass_hinge"}],
    }
    cases, skipped = expand(suite, Settings(imports=(FAKES,)))
    primal = cases[0].build_problem()
    expected = set(registry.solvers_for(primal))
    assert {c.solver for c in cases if c.problem_kind == "soft_margin_primal"} == expected
    assert {"osqp", "clarabel", "test_sleep"} <= expected
    multi = {c.solver for c in cases if c.problem_kind == "multiclass_hinge"}
    assert "test_sleep" not in multi and {"osqp", "clarabel"} <= multi
    reasons = {s.reason for s in skipped}
    assert "binary data set" in reasons and "multiclass data set" in reasons
    assert any("not supported" in r for r in reasons)


def test_settings_reach_the_solver_options_and_the_data_specs():
    suite = {
        "data": ["gaussian:n=40,d=3,sep=1,seed={seed}"],
        "solvers": ["osqp", {"name": "clarabel", "tol": [1e-7, 1e-9]}],
        "problems": [{"kind": "soft_margin_primal", "C": [0.5, 1.0]}],
        "seeds": [0, 1],
        "tol": 1e-5,
        "time_limit": 7.0,
        "split": 0.25,
    }
    settings = Settings.from_suite(suite)
    assert settings.tol == 1e-5 and settings.time_limit == 7.0
    cases, _ = expand(suite, settings)
    assert len(cases) == 2 * 2 * 3  # seeds × C × solver settings
    assert len({c.key for c in cases}) == len(cases)
    assert {c.data for c in cases} == {
        "gaussian:n=40,d=3,sep=1,seed=0,split=0.25",
        "gaussian:n=40,d=3,sep=1,seed=1,split=0.25",
    }
    osqp = [c for c in cases if c.solver == "osqp"]  # a reference too is asked the suite's tol
    assert all(c.solver_options == {"tol": 1e-5, "time_limit": 7.0} for c in osqp)
    fake = expand({**suite, "solvers": ["test_sleep"]}, settings)[0]
    assert all(c.solver_options == {"tol": 1e-5, "time_limit": 7.0} for c in fake)
    tols = {c.solver_options["tol"] for c in cases if c.solver == "clarabel"}
    assert tols == {1e-7, 1e-9}  # an entry's own option wins over the suite's
    with pytest.raises(ValueError, match="unknown solver 'nosuch_solver'.*dcd"):
        expand({**suite, "solvers": ["osqp", "nosuch_solver"]}, settings)


def test_cases_over_the_memory_budget_are_skipped_with_the_estimate():
    suite = {
        "data": ["gaussian:n=300,d=3,sep=1,seed=0"],
        "solvers": ["clarabel"],
        "problems": [{"kind": "kernel_dual"}, {"kind": "soft_margin_primal"}],
    }
    # the dense 300×300 Gram matrix and the reference's copies (≈ 2 MB) do not fit in 151 MB
    # beside the interpreter; the linear problem does
    cases, skipped = expand(suite, Settings(memory_limit_mb=151.0))
    assert [c.problem_kind for c in cases] == ["soft_margin_primal"]
    assert len(skipped) == 1 and skipped[0].label.startswith("kernel_dual")
    assert "exceeds the budget of 151 MB" in skipped[0].reason
    cases, _ = expand(suite, Settings(memory_limit_mb=10_000.0))
    assert len(cases) == 2


def test_anchor_wildcard_lists_available_anchors_or_says_why_not():
    suite = {"data": [TINY], "solvers": ["*anchors"], "problems": [{"kind": "soft_margin_dual"}]}
    cases, skipped = expand(suite)
    seen = {c.solver for c in cases} | {s.label.split(" | ")[-1] for s in skipped}
    assert seen == set(registry.anchor_names())
    for s in skipped:
        assert s.reason  # every anchor left out says why


def test_shipped_suites_expand():
    assert {"default", "scaling", "real", "anchors", "ci"} <= set(shipped_suites())
    for name in ("default", "ci"):
        cases, _ = expand(load_suite(name))
        kinds = {c.problem_kind for c in cases}
        assert {"soft_margin_primal", "kernel_dual", "multiclass_hinge"} <= kinds


# ---- running -------------------------------------------------------------------------------------


def test_repeats_keep_the_median_and_every_time(tmp_path):
    case = Case({"kind": "soft_margin_primal", "C": 1.0}, TINY + ",split=0.25", "clarabel")
    record = execute_case(case, Settings(repeat=3), cache_dir=str(tmp_path))
    assert record.status == "optimal"
    assert len(record.solve_times) == 3
    assert record.solve_time == sorted(record.solve_times)[1]
    assert record.accuracy_on == "test" and 0.0 <= record.accuracy <= 1.0
    assert record.distance <= 1e-6
    assert record.peak_memory_mb >= record.baseline_memory_mb > 0
    assert record.environment["versions"]["numpy"]
    assert record.environment["git_commit"]


def test_hung_raising_and_crashing_cases_are_recorded_and_the_run_goes_on(tmp_path):
    opts = {"kind": "soft_margin_primal", "C": 1.0}
    cases = [
        Case(opts, TINY, "test_sleep", {"seconds": 300.0}),
        Case(opts, TINY, "test_raise"),
        Case(opts, TINY, "test_crash"),
        Case(opts, TINY, "clarabel"),
    ]
    settings = Settings(time_limit=1.0, grace=1.0, imports=(FAKES,), threads=1)
    started = time.monotonic()
    records = run_cases(cases, settings, jobs=2, cache_dir=tmp_path)
    elapsed = time.monotonic() - started
    by_solver = {r.case.solver: r for r in records}
    assert len(records) == 4
    assert by_solver["test_sleep"].status == "timeout"
    assert "killed after" in by_solver["test_sleep"].message
    assert elapsed < 240  # the 300 s sleep was cut short (workers start slowly on a busy machine)
    assert by_solver["test_raise"].status == "error"
    assert "deliberate failure" in by_solver["test_raise"].message
    assert by_solver["test_crash"].status == "crashed"
    assert "exit code 3" in by_solver["test_crash"].message
    ok = by_solver["clarabel"]
    assert ok.status == "optimal" and ok.distance <= 1e-6
    assert ok.threads["numba"] == 1
    assert all(r.jobs == 2 and r.parallel for r in records)


def test_records_survive_a_sigkill_and_resume_adds_only_the_missing_ones(tmp_path):
    n_cases = 6
    suite = _suite(
        tmp_path,
        f"""
name = "slow"
imports = ["{FAKES}"]
data = ["{TINY}"]
solvers = [{{name = "test_sleep", seconds = 0.6}}]
seeds = {list(range(n_cases))}
reference = "none"
[[problems]]
kind = "soft_margin_primal"
""",
    )
    db = tmp_path / "r.sqlite"
    argv = [
        sys.executable,
        "-m",
        "svmbench.benchmarks.cli.main",
        "run",
        str(suite),
        "--db",
        str(db),
    ]
    argv += ["--report", "none"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def count() -> int:
        if not db.exists():
            return 0
        try:
            with sqlite3.connect(db) as conn:
                return conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        except sqlite3.OperationalError:
            return 0

    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while count() < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its worker, mid-run
    proc.wait()
    killed_at = count()
    assert 2 <= killed_at < n_cases
    with Store(db) as store:
        before = {r["id"]: r["case_key"] for r in store.records()}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{killed_at} already in" in done.stdout
    with Store(db) as store:
        rows = store.records(latest=False)
    assert len(rows) == n_cases
    assert len({r["case_key"] for r in rows}) == n_cases  # no duplicate
    assert {r["id"]: r["case_key"] for r in rows if r["id"] in before} == before  # none lost
    assert {r["status"] for r in rows} == {"optimal"}


def _slow_suite(tmp_path: Path, n_cases: int, seconds: float) -> Path:
    return _suite(
        tmp_path,
        f"""
name = "slow"
imports = ["{FAKES}"]
data = ["{TINY}"]
solvers = [{{name = "test_sleep", seconds = {seconds}}}]
seeds = {list(range(n_cases))}
reference = "none"
[[problems]]
kind = "soft_margin_primal"
""",
    )


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "svmbench.benchmarks.cli.main", *args]


def _stored(db: Path) -> list[str]:
    """The case keys of every row, or [] while the database does not exist yet."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as conn:
            return [k for (k,) in conn.execute("SELECT case_key FROM records")]
    except sqlite3.OperationalError:
        return []


def test_concurrent_runs_on_one_new_database_store_each_case_once(tmp_path):
    """Two runs started together on a new file (the second was refused: "an empty file"), and
    a third started later (cases were stored twice): each case is stored exactly once."""
    n_cases = 8
    suite = _slow_suite(tmp_path, n_cases, 0.4)
    db = tmp_path / "new.sqlite"
    argv = _cli("run", str(suite), "--db", str(db), "--report", "none", "--in-process")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def start():
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip

    procs = [start(), start()]
    deadline = time.monotonic() + 120
    while len(_stored(db)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    procs.append(start())  # while the first two are half way
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err[-2000:]
    keys = _stored(db)
    assert len(keys) == len(set(keys)) == n_cases
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


def test_ctrl_c_with_workers_is_one_line_and_keeps_what_finished(tmp_path):
    suite = _slow_suite(tmp_path, 6, 0.6)
    db = tmp_path / "r.sqlite"
    argv = _cli("run", str(suite), "--db", str(db), "--report", "none", "--jobs", "2")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while len(_stored(db)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal: the whole process group
    _, err = proc.communicate(timeout=120)
    kept = len(_stored(db))
    assert proc.returncode == 130, err[-2000:]
    assert (
        err
        == f"interrupted; {kept} finished results kept in {db} (run the same command to resume)\n"
    )
    assert 2 <= kept < 6
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{kept} already in" in done.stdout
    keys = _stored(db)
    assert len(keys) == len(set(keys)) == 6


def test_the_run_warms_each_solver_up_for_the_problems_of_its_cases(monkeypatch):
    """``execution.warm_up`` hands each case's problem to its solver's ``warm_up_for`` (what that
    problem runs), never the whole ``warm_up``; a warm-up that raises is NaN and not retried."""
    from svmbench.benchmarks.harness import execution

    seen: list[tuple[str, str]] = []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def warm_up(self):
            raise AssertionError("the whole warm-up")

        def warm_up_for(self, problem):
            seen.append((self.name, problem.key))
            if self.name == "clarabel":
                raise RuntimeError("no compiler")

    monkeypatch.setattr(registry, "get", lambda name, **options: Recorder(name))
    suite = {
        "data": [TINY, "gaussian:n=30,d=4,sep=1,seed=1"],
        "solvers": ["osqp", "clarabel"],
        "problems": [{"kind": "soft_margin_primal", "C": [0.5, 1.0]}],
    }
    cases, _ = expand(suite, Settings())
    seconds = execution.warm_up(cases)
    osqp = [c for c in cases if c.solver == "osqp"]
    assert len(osqp) == 4
    assert sorted(key for name, key in seen if name == "osqp") == sorted(
        c.build_problem().key for c in osqp
    )
    assert [name for name, _ in seen].count("clarabel") == 1
    assert math.isnan(seconds["clarabel"]) and 0.0 <= seconds["osqp"] < 60.0


# ---- the store, results, report ------------------------------------------------------------------


def _records_for_report(tmp_path):
    cases = [
        Case({"kind": "soft_margin_primal", "C": 1.0}, data, solver)
        for data in ("gaussian:n=60,d=2,sep=2,seed=0", "gaussian:n=120,d=2,sep=2,seed=0")
        for solver in ("osqp", "test_traced")
    ]
    cases += [Case({"kind": "multiclass_hinge"}, "iris:split=0.3,seed=0", "clarabel")]
    return run_cases(cases, Settings(imports=(FAKES,)), in_process=True, cache_dir=tmp_path)


def test_store_round_trip_csv_and_results_command(tmp_path, capsys):
    records = _records_for_report(tmp_path)
    db = tmp_path / "s.sqlite"
    with Store(db) as store:
        run_id = store.start_run("t", environment=records[0].environment)
        for r in records:
            store.add(r, run_id=run_id, suite="t")
        rows = store.records()
        assert len(rows) == len(records)
        assert store.finished_keys() == {r.case.key for r in records}
        traced = next(r for r in rows if r["solver"] == "test_traced")
        # [iteration, solve time, P, D, gap, wall time, certified]
        assert len(traced["trace"]) == 4 and len(traced["trace"][0]) == 7
        first = rows[0]
        assert first["environment"]["versions"]["python"]
        assert first["git_commit"] == records[0].environment["git_commit"]
        assert first["threads"]
        csv_text = store.to_csv(solver="osqp")
    lines = csv_text.strip().splitlines()
    assert lines[0].startswith("id,suite,case_key")
    assert len(lines) == 1 + sum(r.case.solver == "osqp" for r in records)
    code = cli.main(["results", "--db", str(db), "--csv", "-", "--problem", "multiclass_hinge"])
    out = capsys.readouterr().out
    assert code == 0 and len(out.strip().splitlines()) == 2 and "iris" in out


def test_report_has_tables_gap_curves_boundaries_confusions_and_scaling(tmp_path):
    records = _records_for_report(tmp_path)
    db = tmp_path / "s.sqlite"
    with Store(db) as store:
        for r in records:
            store.add(r, suite="t")
    out = tmp_path / "report"
    assert cli.main(["report", "--db", str(db), "--out", str(out), "--suite", "t"]) == 0
    md = (out / "README.md").read_text()
    assert md.count("| problem | solver | status |") == 3  # one table per data set
    pngs = {p.name.split("_")[0] for p in out.glob("*.png")}
    assert pngs == {"gap", "boundary", "confusion", "scaling"}
    for name in md.split("](")[1:]:
        assert (out / name.split(")")[0]).exists()
    assert "time ∝ n^a" in md and "| osqp |" in md


def test_fit_exponent_recovers_a_power_law():
    ns = [1e3, 3e3, 1e4, 3e4]
    a, _ = fit_exponent(ns, [2e-9 * n**1.7 for n in ns])
    assert a == pytest.approx(1.7)
    assert fit_exponent([1000, 1000], [1.0, 2.0]) is None


# ---- check ---------------------------------------------------------------------------------------


def test_check_fails_on_a_wrong_solver_and_passes_on_the_references(tmp_path, capsys):
    body = f"""
imports = ["{FAKES}"]
data = ["{TINY}", "gaussian:n=50,d=2,sep=6,seed=1"]
tol = 1e-8
[[problems]]
kind = "soft_margin_primal"
C = [0.5, 2.0]
"""
    bad = _suite(tmp_path, 'name = "bad"\nsolvers = ["test_one_iter", "clarabel"]' + body)
    code = cli.main(["check", str(bad), "--in-process"])
    out = capsys.readouterr().out
    assert code == 1
    assert "4 of 8 cases FAIL" in out
    assert out.count("test_one_iter") >= 4 and "relative difference" in out
    good = tmp_path / "good.toml"
    good.write_text('name = "good"\nsolvers = ["osqp", "clarabel"]' + body)
    code = cli.main(["check", str(good), "--in-process"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "all 8 cases agree" in out


def test_cvxpy_can_be_the_reference_and_unknown_references_are_refused():
    case = Case({"kind": "soft_margin_primal", "C": 1.0}, TINY, "osqp")
    record = execute_case(case, Settings(reference="cvxpy"))
    assert record.reference_solver == "cvxpy" and judge(record).ok
    with pytest.raises(ValueError, match="reference must be one of"):
        Settings(reference="mosek")


def test_judge_flags_a_negative_certified_gap():
    import dataclasses

    case = Case({"kind": "soft_margin_primal", "C": 1.0}, TINY, "clarabel")
    record = execute_case(case, Settings(reference="osqp"))
    assert judge(record).ok
    r = record.result
    broken = dataclasses.replace(r, dual=r.primal + 1.0, gap=-1.0)
    verdict = judge(dataclasses.replace(record, result=broken))
    assert not verdict.ok and "negative certified gap" in verdict.reason


# ---- Dask ----------------------------------------------------------------------------------------


def test_dask_cluster_gives_the_same_records_as_local_workers(tmp_path):
    distributed = pytest.importorskip("distributed", reason="the optional extra 'dask'")
    cases = [
        Case({"kind": "soft_margin_primal", "C": 1.0}, TINY, "osqp"),
        Case({"kind": "soft_margin_dual", "C": 1.0, "bias": "none"}, TINY, "clarabel"),
        Case({"kind": "multiclass_hinge"}, "iris:n=60,seed=0", "clarabel"),
    ]
    settings = Settings(time_limit=30.0)
    local = run_cases(cases, settings, jobs=1, cache_dir=tmp_path / "a")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        remote = run_cases(cases, settings, cluster=cluster.scheduler_address,
                           cache_dir=tmp_path / "b")  # fmt: skip
    assert len(remote) == len(local) == 3
    key = lambda r: r.case.key  # noqa: E731
    for a, b in zip(sorted(local, key=key), sorted(remote, key=key)):
        assert a.status == b.status == "optimal"
        assert a.result.iterations == b.result.iterations
        assert a.result.primal == pytest.approx(b.result.primal, rel=1e-12)
        assert a.accuracy == b.accuracy
        assert math.isclose(a.distance, b.distance, abs_tol=1e-12)
        assert b.threads.get("numba") == 1


def test_load_of_a_split_spec_matches_the_record(tmp_path):
    case = Case({"kind": "soft_margin_primal"}, "breast_cancer:n=100,seed=0,split=0.3", "osqp")
    record = execute_case(case, Settings(reference="none"))
    ds = load(case.data)
    assert record.extras["n_test"] == ds.X_test.shape[0] == 30
    assert math.isnan(record.distance)


def test_dataframe_export_needs_the_pandas_extra(tmp_path):
    case = Case({"kind": "soft_margin_primal"}, TINY, "osqp")
    with Store(tmp_path / "p.sqlite") as store:
        store.add(execute_case(case, Settings(reference="none")), suite="t")
        try:
            import pandas  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError, match=r"svmbench\[pandas\]"):
                store.to_dataframe()
        else:
            frame = store.to_dataframe(suite="t")
            assert list(frame["solver"]) == ["osqp"] and frame["status"][0] == "optimal"


def test_a_suite_from_command_line_flags(tmp_path, capsys):
    db = tmp_path / "f.sqlite"
    argv = ["run", "--problem", "soft_margin_primal", "--C", "0.5", "--data", TINY,
            "--data", "gaussian:n=30,d=2,sep=2,seed=0", "--solver", "osqp", "--solver", "clarabel",
            "--db", str(db), "--report", "none", "--in-process", "--repeat", "2"]  # fmt: skip
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "suite cli: 4 cases" in out
    with Store(db) as store:
        rows = store.records()
    assert len(rows) == 4
    assert all(r["problem"] == {"kind": "soft_margin_primal", "C": 0.5} for r in rows)
    assert all(len(r["solve_times"]) == 2 for r in rows)
    assert cli.main(["run", "default", "--problem", "hard_margin", "--data", TINY]) == 2
    assert "not both" in capsys.readouterr().err


def test_gap_plot_ignores_points_that_cannot_be_drawn():
    from svmbench.benchmarks.harness.report_figures import gap_figure

    base = {"solver": "x", "solver_options": {}, "solve_time": 0.1, "status": "max_iter"}
    rows = [
        {**base, "trace": [], "rel_gap": math.inf},  # e.g. an infeasible primal
        {**base, "trace": [[1, 0.01, math.inf, 0.0, math.inf]], "rel_gap": None},
    ]
    assert gap_figure(rows, "nothing to draw") is None
    rows.append({**base, "trace": [[1, 0.01, 2.0, 1.0, 1.0], [2, 0.02, 1.5, 1.4, 0.1]]})
    fig, absent = gap_figure(rows, "one curve")
    assert len(fig.axes[0].get_lines()) == 1
    assert absent == ["x: max_iter, no finite certified gap to draw"] * 2


def test_check_fails_a_record_whose_status_contradicts_its_certificate():
    import dataclasses

    from svmbench.benchmarks.harness.check import judge, status_contradiction
    from svmbench.benchmarks.harness.evaluation import run_case

    opts = {"kind": "soft_margin_primal", "C": 1.0, "bias": "regularized"}
    record = run_case(Case(opts, TINY, "dcd", {"tol": 1e-6}))
    assert record.result.status.value == "optimal" and status_contradiction(record) is None
    assert judge(record).ok
    loose = dataclasses.replace(record.result, rel_gap=1.43)  # a stored row claiming optimal
    forged = dataclasses.replace(record, result=loose)
    assert "relative gap 1.43 > tol 1e-06" in status_contradiction(forged)
    assert not judge(forged).ok
    uncertified = dataclasses.replace(record, result=dataclasses.replace(loose, certified=False))
    assert "certified=False" in status_contradiction(uncertified)
