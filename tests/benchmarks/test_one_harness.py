"""One harness: the environment capture, the evaluation and the timed rounds that the suite
runner (:mod:`benchmarks.harness.execution`) and the comparison studies share, the report's
section against the anchors, and the studies on tiny cases."""

from __future__ import annotations

import importlib
import math
import os
import pkgutil
import re
import shutil
import subprocess

import numpy as np
import pytest

from svmbench.benchmarks.harness import cases, environment, evaluation
from svmbench.benchmarks.harness.report import anchor_section
from svmbench.problems import KernelDual, MulticlassHinge, SoftMarginPrimal, datasets
from svmbench.solvers import registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.anchors.liblinear import LiblinearAnchor
from svmbench.solvers.anchors.libsvm import LibsvmAnchor

STUDIES = (
    "bench_dcd_vs_liblinear",
    "bench_smo_vs_libsvm",
    "bench_smo_sparse",
    "bench_barrier",
    "bench_accpm",
    "bench_pegasos",
    "bench_multiclass",
)


def _needs(name: str):
    why = registry.available_anchors()[name]
    return pytest.mark.skipif(why is not None, reason=why or "")


# ---- one registry for the methods and the anchors ---------------------------------------------


def test_anchors_resolve_through_the_one_registry():
    assert registry.solver_class("liblinear") is LiblinearAnchor
    assert registry.is_anchor("libsvm") and not registry.is_anchor("smo")
    assert "libsvm" in registry.anchor_names() and "smo" not in registry.anchor_names()
    assert "libsvm" not in registry.names()  # a suite's "*" selects the methods only


def test_a_missing_anchor_package_is_a_reason_naming_it(monkeypatch):
    monkeypatch.setattr(LibsvmAnchor, "modules", ("no_such_module_svmbench",))
    why = cases.unavailable_reason("libsvm")
    assert why.startswith("anchor 'libsvm' is unavailable: libsvm-official is not installed")
    assert "libsvm" not in registry.anchor_names(available_only=True)
    assert cases.unavailable_reason("smo") is None  # no anchor: nothing to say


# ---- environment ------------------------------------------------------------------------------


def test_summary_names_the_versions_threads_commit_and_note():
    line = environment.summary("no-such-dist-svmbench", note="study note")
    env = environment.environment()
    assert f"python {env['versions']['python']}" in line
    assert f"numpy {np.__version__}" in line
    assert "no-such-dist-svmbench not installed" in line
    assert "threads: " in line
    assert f"commit {env['git_commit'][:12]}" in line
    assert line.endswith("; study note")
    assert "\n" not in line


def test_thread_variables_pin_every_pool():
    env = environment.thread_variables(3)
    assert set(env) >= {"NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"}
    assert set(env.values()) == {"3"}


# ---- evaluation ---------------------------------------------------------------------------------


def test_interleaved_runs_each_once_a_round_and_rotates_on_request():
    calls: list[str] = []

    def run(name):
        def f():
            calls.append(name)
            return len(calls)

        return f

    runs = {k: run(k) for k in "abc"}
    out = evaluation.interleaved(runs, 3)
    assert calls == list("abcabcabc")
    assert out == {"a": [1, 4, 7], "b": [2, 5, 8], "c": [3, 6, 9]}
    calls.clear()
    out = evaluation.interleaved(runs, 3, rotate=True, warm_up=True)
    assert calls == list("abc") + list("abc") + list("bca") + list("cab")
    assert [len(v) for v in out.values()] == [3, 3, 3]  # warm-up values are not kept


@pytest.mark.parametrize("repeat", [0, -1, 2.5, True, "3"])
def test_interleaved_refuses_what_is_no_count_of_rounds(repeat):
    with pytest.raises(ValueError, match="repeat must be an integer >= 1"):
        evaluation.interleaved({"a": lambda: 1}, repeat)


def test_interleaved_refuses_a_run_that_cannot_be_called():
    with pytest.raises(TypeError, match=r"runs\['a'\] must be callable, got int"):
        evaluation.interleaved({"a": 1}, 1)


def test_reference_and_summary_refuse_bad_arguments_by_name():
    ds = datasets.load("gaussian:n=30,d=2,sep=1,seed=0")
    problem = SoftMarginPrimal(ds.X, ds.y)
    with pytest.raises(ValueError, match="solver must be one of osqp, clarabel, cvxpy or 'none'"):
        evaluation.reference(problem, "dcd")
    with pytest.raises(TypeError, match="problem must be a Problem, got str"):
        evaluation.reference("gaussian:n=30")
    with pytest.raises(TypeError, match="packages must be distribution names"):
        environment.summary(123)


def test_reference_is_the_certified_optimum_with_the_other_reference_standing_in(tmp_path):
    ds = datasets.load("gaussian:n=60,d=3,sep=1,seed=0")
    problem = SoftMarginPrimal(ds.X, ds.y, C=1.0)
    ref = evaluation.reference(problem, cache_dir=tmp_path)
    assert ref.status.value == "optimal"
    assert ref.primal == pytest.approx(reference_solution(problem).primal, rel=1e-6)
    assert list(tmp_path.glob("*.npz"))  # cached on disk
    assert evaluation.reference(problem, "none") is None
    osqp = evaluation.reference(problem, "osqp", cache_dir=tmp_path)
    assert osqp.solver in ("osqp", "clarabel")
    assert osqp.primal == pytest.approx(ref.primal, rel=1e-4)


def test_a_cached_reference_is_read_back_whole_and_never_unpickled(tmp_path):
    import pickle

    from svmbench.solvers import registry
    from svmbench.solvers._reference import ReferenceCache

    ds = datasets.load("gaussian:n=40,d=3,sep=1,seed=0")
    problem = SoftMarginPrimal(ds.X, ds.y, C=1.0)
    solver = registry.get("clarabel")
    first = ReferenceCache(tmp_path).get(problem, solver)
    (cached,) = tmp_path.glob("*.npz")
    again = ReferenceCache(tmp_path).get(problem, solver)  # a new cache: read from disk
    assert again.status is first.status and again.primal == first.primal
    np.testing.assert_array_equal(again.w, first.w)
    np.testing.assert_array_equal(again.model.predict(ds.X), first.model.predict(ds.X))
    # a file that holds a pickle is never loaded: the reference is solved again
    cached.write_bytes(pickle.dumps(first))
    third = ReferenceCache(tmp_path).get(problem, solver)
    assert third.primal == pytest.approx(first.primal, rel=1e-9)
    assert cached.read_bytes()[:2] == b"PK"  # rewritten in the safe format


def test_median_solve_time():
    class R:
        def __init__(self, t):
            self.solve_time = t

    assert evaluation.median_solve_time([R(3.0), R(1.0), R(2.0)]) == 2.0
    assert math.isnan(evaluation.median_solve_time([]))


# ---- the report's section against the anchors ---------------------------------------------------


def _row(solver, time, anchor, status="optimal"):
    return {
        "data": "gaussian:n=100",
        "problem_kind": "soft_margin_primal",
        "problem": {"kind": "soft_margin_primal", "C": 1.0},
        "solver": solver,
        "solver_options": {},
        "status": status,
        "solve_time": time,
        "rel_gap": 1e-7,
        "distance": 1e-8,
        "extras": {"anchor": anchor},
    }


def test_anchor_section_divides_by_the_fastest_anchor():
    rows = [
        _row("dcd", 0.5, False),
        _row("liblinear", 2.0, True),
        _row("sklearn_linearsvc", 1.0, True),
        _row("osqp", None, False, status="timeout"),
    ]
    lines = anchor_section(rows)
    assert lines[0] == "## Against the anchors"
    body = [line for line in lines if line.startswith("| gaussian")]
    assert len(body) == 3  # the time-out has no time to divide
    dcd = next(line for line in body if "| dcd |" in line)
    assert "| 0.50 | sklearn_linearsvc |" in dcd
    liblinear = next(line for line in body if "| liblinear |" in line)
    assert "| 2.00 |" in liblinear


def test_anchor_section_names_each_anchor_tolerance():
    loose, tight = _row("liblinear_cs", 0.2, True), _row("liblinear_cs", 1.0, True)
    loose["solver_options"], tight["solver_options"] = {"eps": 0.1}, {"eps": 1e-4, "seed": 0}
    body = [line for line in anchor_section([_row("cs_dcd", 0.5, False), loose, tight])]
    assert any("| liblinear_cs[eps=0.0001] | optimal | 1.0000 | 5.00 |" in line for line in body)
    assert all("seed" not in line for line in body)


def test_anchor_section_is_empty_without_a_pair():
    assert anchor_section([_row("dcd", 0.5, False), _row("smo", 1.0, False)]) == []
    assert anchor_section([_row("liblinear", 0.5, True)]) == []


# ---- the studies --------------------------------------------------------------------------------


def _studies() -> list[str]:
    package = importlib.import_module("svmbench.benchmarks.studies")
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__))


def test_the_studies_package_holds_every_study():
    names = _studies()
    assert set(STUDIES) <= set(names)
    assert "bench_smo_record" in names and "bench_rows_compile" in names


@pytest.mark.parametrize("name", _studies())
def test_every_study_module_imports(name):
    before = dict(os.environ)
    module = importlib.import_module(f"svmbench.benchmarks.studies.{name}")
    # the suite imports every study into its own process: one that set a thread count there
    # made Numba refuse every later compile of that process
    assert dict(os.environ) == before, f"importing {name} changed the process environment"
    if name.startswith("bench_") and name != "bench_kernels":  # bench_kernels: pytest only
        assert callable(module.main)


def _checkout() -> bool:
    root = environment.REPO_ROOT
    return (root / ".git").exists() and shutil.which("git") is not None


def test_repo_root_is_the_checkout_and_the_commit_is_its_head():
    root = environment.REPO_ROOT
    if not (root / "benchmarks" / "harness" / "environment.py").exists():
        pytest.skip("an installed copy, not a checkout: no commit to record")
    assert (root / "solvers" / "registry.py").exists()
    if _checkout():
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", environment.git_commit())


def test_old_code_looks_for_a_file_at_its_path_then_where_it_was():
    from svmbench.benchmarks.studies._old_code import candidate_paths

    assert candidate_paths("solvers/_jit/smo.py") == ["solvers/_jit/smo.py"]
    assert candidate_paths("benchmarks/harness/cases.py") == [
        "benchmarks/harness/cases.py",
        "benchmarks/cases.py",
    ]
    assert candidate_paths("benchmarks/studies/bench_auto.py")[-1] == "benchmarks/bench_auto.py"
    assert candidate_paths("benchmarks/cli/runs.py")[-1] == "benchmarks/cli_runs.py"
    assert candidate_paths("solvers/anchors/libsvm.py")[-1] == "benchmarks/anchors_libsvm.py"


#: The commit that split benchmarks/ and moved the anchors to solvers/anchors/.
SPLIT = "93ea44e"


def test_old_code_reads_a_moved_file_before_the_move_and_the_jit_loops_now():
    from svmbench.benchmarks.studies import _old_code

    if not _checkout():
        pytest.skip("not a git checkout")
    try:
        _old_code.git("cat-file", "-e", f"{SPLIT}^{{commit}}")
    except subprocess.CalledProcessError:
        pytest.skip(f"{SPLIT} is not in this clone's history")
    before = _old_code.source_at(f"{SPLIT}^", "benchmarks/harness/environment.py")
    assert "def git_commit" in before  # read from benchmarks/environment.py
    assert "class LibsvmAnchor" in _old_code.source_at(f"{SPLIT}^", "solvers/anchors/libsvm.py")
    assert "def " in _old_code.source_at("HEAD", "solvers/_jit/smo.py")
    assert re.fullmatch(r"[0-9a-f]{40}", _old_code.last_change("solvers/_jit/smo.py"))
    with pytest.raises(subprocess.CalledProcessError, match="none of"):
        _old_code.source_at(f"{SPLIT}^", "benchmarks/harness/settings.py")  # new in the split


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_imports_and_prints_the_one_environment_line(name):
    module = importlib.import_module(f"svmbench.benchmarks.studies.{name}")
    assert not hasattr(module, "environment") or module.environment is environment.environment
    source = open(module.__file__).read()
    assert "summary(" in source
    assert "platform." not in source  # the machine is described once, in environment.py


@_needs("liblinear")
def test_dcd_study_measures_a_tiny_case_through_the_liblinear_anchor():
    study = importlib.import_module("svmbench.benchmarks.studies.bench_dcd_vs_liblinear")
    row = study.measure(study.Case(300, 5, 1.0, 1.0), gap_time_limit=5.0)
    ds = datasets.gaussian(300, 5, 1.0, seed=0)
    problem = SoftMarginPrimal(ds.X, ds.y, C=1.0, bias="regularized")
    ref = reference_solution(problem).primal
    assert row["lib_P"] >= ref * (1 - 1e-9)  # LIBLINEAR's objective, judged by our problem
    assert row["lib_epochs"] >= 1 and row["lib_time"] > 0
    assert row["dcd_gap_status"] == "optimal" and row["dcd_gap_rel"] <= 1e-6
    assert row["dcd_to_lib_P_epochs"] >= 1
    assert 0 <= row["lib_P_spread"] < 1e-2


@_needs("libsvm")
def test_smo_study_judges_libsvm_through_its_anchor():
    study = importlib.import_module("svmbench.benchmarks.studies.bench_smo_vs_libsvm")
    ds = datasets.gaussian(300, 20, 1.0, seed=0)
    problem = KernelDual(ds.X, ds.y, C=1.0, kernel="rbf", gamma=1 / 20)
    r = study.libsvm(1).solve(problem)
    ref = reference_solution(problem)
    assert r.dual <= ref.primal * (1 + 1e-9)
    assert r.rel_gap < 1e-2


@_needs("liblinear_cs")
def test_multiclass_study_takes_the_fastest_liblinear_run():
    study = importlib.import_module("svmbench.benchmarks.studies.bench_multiclass")
    ds = datasets.load("blobs:n=120,d=4,k=3,seed=0")
    problem = MulticlassHinge(ds.X, ds.y, C=1.0, bias="regularized", bias_scale=1.0)
    best = study._liblinear(problem, 1e-4, 2)
    assert best.W.shape == (3, 4)
    assert best.primal >= reference_solution(problem).primal * (1 - 1e-9)


def test_an_installed_copy_records_its_release_instead_of_unknown(tmp_path, monkeypatch):
    from importlib import metadata

    monkeypatch.setattr(environment, "REPO_ROOT", tmp_path)  # no .git there
    assert environment.git_commit() == f"release {metadata.version('svmbench')}"
