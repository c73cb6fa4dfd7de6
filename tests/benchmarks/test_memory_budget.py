"""Budgets that hold: memory is estimated before anything is allocated, from each solver's own
model, and data specs over the budget are refused before they are generated."""

from __future__ import annotations

import functools
import re
import tracemalloc

import numpy as np
import pytest

from svmbench.benchmarks.cli import main as cli
from svmbench.benchmarks.harness.cases import estimate_memory_mb, expand, make_problem
from svmbench.benchmarks.harness.settings import Settings
from svmbench.problems import KernelDual
from svmbench.problems import datasets as ds_module
from svmbench.problems.datasets import DatasetInfo, estimate_bytes, load
from svmbench.solvers import registry

BIG = "gaussian:n=20000000,d=20,sep=1,seed=0"  # 3.2 GB of X, about 10 GB while generated
KERNEL = {"kind": "kernel_dual", "C": 1.0, "kernel": "rbf", "bias": "free"}
BUDGET_MB = 4096.0


@pytest.fixture
def no_big_generation(monkeypatch):
    """The gaussian generator fails for more than 10⁶ points (same signature, so that specs are
    still parsed); returns the list of the n it was asked for."""
    original = ds_module.DATASETS["gaussian"]
    asked = []

    @functools.wraps(original.function)
    def guarded(n, *args, **kwargs):
        asked.append(n)
        if n > 1_000_000:
            raise AssertionError(f"gaussian(n={n}) was generated")
        return original.function(n, *args, **kwargs)

    monkeypatch.setitem(ds_module.DATASETS, "gaussian", DatasetInfo(guarded, original.description))
    return asked


def _suite(data, solvers, **settings):
    return {"name": "t", "data": data, "problems": [dict(KERNEL)], "solvers": solvers, **settings}


def test_an_oversized_spec_is_refused_before_it_is_generated(no_big_generation):
    suite = _suite([BIG, "gaussian:n=50,d=2,sep=1,seed=0"], ["smo"])
    settings = Settings(memory_limit_mb=BUDGET_MB, reference="none")
    tracemalloc.start()
    try:
        cases, skipped = expand(suite, settings)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20, f"expand allocated {peak / 2**20:.0f} MB"
    assert 1_000_000 not in no_big_generation and no_big_generation == [50]
    assert [c.data for c in cases] == ["gaussian:n=50,d=2,sep=1,seed=0"]
    (skip,) = skipped
    assert BIG in skip.label
    need = estimate_bytes(BIG) / 2**20
    assert need > BUDGET_MB
    assert skip.reason == (
        f"data spec {BIG!r} needs ~{need:.0f} MB, over the budget of {BUDGET_MB:.0f} MB"
    )


def test_a_spec_within_the_budget_is_generated(no_big_generation):
    spec = "gaussian:n=2000000,d=2,sep=1,seed=0"  # ~128 MB estimated, budget 4 GB
    with pytest.raises(AssertionError, match="was generated"):
        expand(_suite([spec], ["smo"]), Settings(memory_limit_mb=BUDGET_MB, reference="none"))


@pytest.mark.parametrize(
    "spec",
    [
        "gaussian:n=100000,d=20,sep=1,seed=0",
        "gaussian:n=20000,d=500,sep=1,density=0.02,seed=1",
        "gaussian:n=20000,d=50,sep=1,seed=0,split=0.3",
        "gaussian:n=20000,d=50,sep=1,seed=0,sparse=true",
        "quadrant:n=50000,d=10,noise=0.1",
        "blobs:n=50000,d=10,k=3",
        "circles:n=50000",
        "xor:n=50000",
        "breast_cancer:n=200,seed=0,split=0.3",
        "digits:binary=true",
    ],
)
def test_the_spec_estimate_bounds_what_load_allocates(spec):
    load(spec)  # imports and caches out of the measure
    tracemalloc.start()
    try:
        load(spec)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= estimate_bytes(spec) <= 8 * peak + 2**21


def test_the_spec_estimate_says_none_when_the_spec_does_not_tell(tmp_path):
    assert estimate_bytes("nosuch:n=10") is None
    assert estimate_bytes("gaussian:n=ten,d=2,sep=1") is None
    assert estimate_bytes(f"libsvm:path={tmp_path / 'missing.txt'}") is None
    path = tmp_path / "a.txt"
    path.write_text("1 1:0.5 3:1\n-1 2:1\n")
    assert estimate_bytes(f"libsvm:path={path}") == 8 * path.stat().st_size
    assert estimate_bytes(f"libsvm:path={path},dense=true") is None
    with pytest.raises(TypeError, match="spec"):
        estimate_bytes(3)


@pytest.fixture(scope="module")
def big_kernel():
    return make_problem(KERNEL, load("gaussian:n=200000,d=2,sep=1,seed=0"))


@pytest.mark.parametrize("reference", ["none", "clarabel"])
def test_smo_on_a_large_kernel_problem_is_not_charged_a_gram_matrix(big_kernel, reference):
    n = big_kernel.n_samples
    assert estimate_memory_mb(big_kernel, None, reference=reference) > 8 * n * n / 2**20
    smo = estimate_memory_mb(big_kernel, "smo", reference=reference)
    assert smo < BUDGET_MB  # the 200 MB cache, the rows, O(n) vectors
    suite = _suite(["gaussian:n=200000,d=2,sep=1,seed=0"], ["smo", "clarabel"])
    cases, skipped = expand(suite, Settings(memory_limit_mb=BUDGET_MB, reference=reference))
    assert [c.solver for c in cases] == ["smo"]
    assert [s.label.split(" | ")[-1] for s in skipped] == ["clarabel"]


def test_smo_options_enter_its_estimate(big_kernel):
    small = estimate_memory_mb(big_kernel, "smo", reference="none")
    large = estimate_memory_mb(big_kernel, "smo", options={"cache_mb": 8000}, reference="none")
    assert large - small == pytest.approx(8000 - 200, rel=1e-3)
    suite = _suite(["gaussian:n=200000,d=2,sep=1,seed=0"], [{"name": "smo", "cache_mb": 8000}])
    cases, skipped = expand(suite, Settings(memory_limit_mb=BUDGET_MB, reference="none"))
    assert cases == [] and "exceeds the budget" in skipped[0].reason


def test_a_skip_names_the_estimate_and_the_budget():
    spec = "gaussian:n=15000,d=2,sep=1,seed=0"  # the dense QP fits the Gram limit, not 4 GB
    suite = _suite(
        [spec],
        ["smo", "clarabel", "barrier", {"name": "barrier", "kernel_approximation": "nystrom"}],
    )
    settings = Settings(memory_limit_mb=BUDGET_MB, reference="none")
    cases, skipped = expand(suite, settings)
    assert sorted((c.solver, c.solver_options.get("kernel_approximation")) for c in cases) == [
        ("barrier", "nystrom"),
        ("smo", None),
    ]
    problem = make_problem(KERNEL, load(spec))
    assert {s.label.split(" | ")[-1] for s in skipped} == {"clarabel", "barrier"}
    for skip in skipped:
        name = skip.label.split(" | ")[-1]
        found = re.fullmatch(
            r"estimated memory (\d+) MB \(base \d+ MB, solver \d+ MB\) exceeds the budget of "
            r"(\d+) MB",
            skip.reason,
        )
        assert found, skip.reason
        estimate = estimate_memory_mb(problem, name, reference="none")
        assert int(found.group(1)) == round(estimate) and estimate > BUDGET_MB
        assert int(found.group(2)) == BUDGET_MB


def test_the_reference_is_counted_only_when_the_run_needs_it():
    problem = make_problem(KERNEL, load("gaussian:n=3000,d=2,sep=1,seed=0"))
    without = estimate_memory_mb(problem, "smo", reference="none")
    with_ref = estimate_memory_mb(problem, "smo", reference="clarabel")
    clarabel = registry.solver_class("clarabel").memory_estimate(problem)
    osqp = registry.solver_class("osqp").memory_estimate(problem)
    assert with_ref - without == pytest.approx(max(clarabel, osqp) / 2**20)
    assert clarabel >= 9 * 8 * 3000**2  # measured 9.9 n² doubles at n = 3000 and 5000


def test_smo_allocates_within_its_estimate_and_far_below_a_gram():
    data = load("gaussian:n=6000,d=3,sep=1,seed=2")
    problem = KernelDual(data.X, data.y, C=1.0, kernel="rbf", bias="free")
    solver = registry.get("smo", cache_mb=8)
    solver.warm_up()
    tracemalloc.start()
    try:
        result = solver.solve(problem)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.status.value == "optimal"
    estimate = type(solver).memory_estimate(problem, cache_mb=8)
    n = problem.n_samples
    assert peak <= estimate < 8 * n * n / 2, (peak, estimate)
    assert np.isfinite(result.rel_gap) and result.rel_gap <= 1e-6


def test_the_cli_reports_an_oversized_spec_and_runs_the_rest(
    capsys, tmp_path, monkeypatch, no_big_generation
):
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "budget.toml"
    suite.write_text(
        f"""
name = "budget"
memory_limit_mb = {BUDGET_MB}
reference = "clarabel"
data = ["{BIG}", "gaussian:n=60,d=2,sep=1,seed=0"]
solvers = ["smo"]
[[problems]]
kind = "kernel_dual"
C = 1.0
kernel = "rbf"
bias = "free"
"""
    )
    db, report = tmp_path / "b.sqlite", tmp_path / "report"
    argv = ["run", str(suite), "-v", "--db", str(db), "--report", str(report), "--in-process"]
    code = cli.main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 cases" in out and "1 combinations skipped" in out
    flat = " ".join(out.split())  # the console may wrap long lines
    assert f"data spec '{BIG}' needs ~" in flat and "over the budget of 4096 MB" in flat
    assert out.count("done:") == 1
    assert 20_000_000 not in no_big_generation


def test_solve_estimates_memory_before_generating_or_solving(capsys, no_big_generation):
    """``svmbench solve`` ended in a MemoryError traceback where ``run`` skips the case: it now
    refuses with run's estimates, before generating the data or solving."""
    for argv, message in [
        (["--problem", "soft_margin_primal", "--data", "gaussian:n=1000000000000,d=20,sep=1",
          "--solver", "dcd"], "--data: data spec 'gaussian:n=1000000000000,d=20,sep=1' needs ~"),
        (["--problem", "kernel_dual", "--kernel", "rbf", "--data", "gaussian:n=20000,d=2,sep=1",
          "--solver", "clarabel", "--memory-limit", "1000"],
         "--solver clarabel: estimated memory"),
    ]:  # fmt: skip
        code = cli.main(["solve", *argv])
        captured = capsys.readouterr()
        assert code == 2 and captured.err.count("\n") == 1, captured.err
        assert captured.err.startswith("error: ") and message in captured.err
    assert "exceeds the budget of 1000 MB" in captured.err
    assert 10**12 not in no_big_generation


def test_an_override_without_options_is_still_called():
    """``memory_estimate(cls, problem)`` (the older signature) gets no options, not a TypeError."""
    dcd = registry.solver_class("dcd")

    class Plain(dcd):
        @classmethod
        def memory_estimate(cls, problem):
            return 2.0**30

    problem = make_problem({"kind": "soft_margin_primal", "C": 1.0}, load("breast_cancer"))
    options = {"tol": 1e-3, "time_limit": 5.0}
    assert estimate_memory_mb(problem, Plain, options=options, reference="none") > 1024
