"""Time limits bound set-up work (solvers/time_budget.py, solvers/worker.py).

No test here depends on the machine's speed: a limit of 1e-9 s is always reached before the
first stage, estimates are made far above a limit by patching the measured rates, and a worker
that sleeps is stopped at a limit ten times shorter than its sleep.
"""

from __future__ import annotations

import math
import time
from typing import ClassVar

import numpy as np
import pytest

from svmbench.problems import KernelDual, MulticlassHinge, SoftMarginDual, SoftMarginPrimal
from svmbench.solvers import ConvergenceWarning, Status, osqp_ref, registry, time_budget, worker
from svmbench.solvers import low_rank as low_rank_module
from svmbench.solvers.anchors import sklearn as sklearn_anchors
from svmbench.solvers.base import IterativeSolver, StepOutcome
from svmbench.solvers.time_budget import ALLOWED_OVERRUN, stage_refusal


def _kernel_problem(n: int, seed: int = 0) -> KernelDual:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return KernelDual(X, y, C=1.0, kernel="rbf", gamma=0.2)


def _linear_problem(n: int, d: int, seed: int = 0) -> SoftMarginPrimal:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    return SoftMarginPrimal(X, y, C=1.0)


def _solve_at_limit(solver, problem):
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        return solver.solve(problem)


def _assert_origin(result, problem, stage: str):
    """Stopped before the method made a point: the starting point, certified by the problem."""
    assert result.status is Status.TIME_LIMIT
    assert result.info["time_limit"]["stage"] == stage, result.info["time_limit"]
    if result.alpha is not None and result.w is None:
        np.testing.assert_array_equal(result.alpha, 0.0)
        ref = problem.certificate(alpha=np.zeros(problem.n_samples))
    else:
        np.testing.assert_array_equal(result.w, 0.0)
        ref = problem.certificate(w=np.zeros(problem.n_features), b=0.0)
    assert result.certified and result.primal == pytest.approx(ref.primal)
    assert result.model is not None


# ---- the stage rule ------------------------------------------------------------------------------
class _Wall:
    def __init__(self, wall):
        self.wall = wall


def test_a_stage_starts_only_if_its_estimate_ends_within_the_limit_and_the_overrun():
    clock = _Wall(1.0)
    assert stage_refusal(clock, math.inf, "x", 1e9, "any") is None
    assert stage_refusal(clock, 10.0, "x", 9.0 + ALLOWED_OVERRUN - 0.01, "fits") is None
    refused = stage_refusal(clock, 10.0, "x", 9.0 + ALLOWED_OVERRUN + 0.01, "beyond")
    assert refused["estimate"] == "beyond" and "not started" in refused["message"]
    reached = stage_refusal(_Wall(10.0), 10.0, "x")
    assert reached["wall"] == 10.0 and "reached" in reached["message"]


# ---- references: no library call once the limit is reached or estimated far beyond -------------
class _Forbidden:
    def __init__(self, *args, **kwargs):
        raise AssertionError("the library was called")


@pytest.mark.parametrize("name", ["osqp", "clarabel"])
def test_a_reached_limit_stops_a_reference_before_its_library(name, monkeypatch):
    import clarabel
    import osqp

    monkeypatch.setattr(osqp, "OSQP", _Forbidden)
    monkeypatch.setattr(clarabel, "DefaultSolver", _Forbidden)
    problem = _kernel_problem(300)
    result = _solve_at_limit(registry.get(name, time_limit=1e-9), problem)
    _assert_origin(result, problem, f"exporting the QP and {name}'s set-up")


def test_osqp_refuses_a_set_up_estimated_far_above_the_limit(monkeypatch):
    import osqp

    monkeypatch.setattr(osqp_ref, "setup_rate", lambda: 1.0)  # flops per second
    monkeypatch.setattr(osqp, "OSQP", _Forbidden)
    problem = _kernel_problem(700)  # n³/3 = 1.1e8 flops: 1.1e8 s at that rate
    result = _solve_at_limit(registry.get("osqp", time_limit=60.0), problem)
    _assert_origin(result, problem, "exporting the QP and osqp's set-up")
    assert result.info["time_limit"]["estimate_seconds"] > 1e8
    assert "not started" in result.message and "flops" in result.message


def test_a_multiclass_problem_stopped_before_its_first_point_has_none():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((60, 3))
    problem = MulticlassHinge(X, np.argmax(X, axis=1).astype(float), C=1.0)
    result = _solve_at_limit(registry.get("clarabel", time_limit=1e-9), problem)
    assert result.status is Status.TIME_LIMIT  # not numerical_error
    assert not result.certified and math.isnan(result.rel_gap)
    assert result.W is None and result.beta is None and result.model is None


def test_a_set_up_that_fits_is_not_refused():
    result = registry.get("osqp", time_limit=600.0).solve(_kernel_problem(60))
    assert result.status is Status.OPTIMAL and "time_limit" not in result.info


# ---- iterative methods: the set-up and every chunk ---------------------------------------------
def test_barrier_stops_before_a_newton_system_estimated_beyond_the_limit(monkeypatch):
    monkeypatch.setattr(time_budget, "dense_factor_rate", lambda: 1e3)
    barrier = registry.get("barrier", time_limit=60.0)
    monkeypatch.setattr(type(barrier), "_step", _Forbidden)
    problem = _linear_problem(600, 500)  # a 501-square system formed from 600 rows: 3e8 flops
    result = _solve_at_limit(barrier, problem)
    assert result.status is Status.TIME_LIMIT and result.iterations == 0
    assert result.info["time_limit"]["stage"] == "chunk 1"
    assert result.w is not None  # the starting point, certified by the problem
    ref = problem.certificate(w=result.w, b=result.b)
    assert result.primal == pytest.approx(ref.primal)


def test_accpm_refuses_a_set_up_estimated_beyond_the_limit(monkeypatch):
    monkeypatch.setattr(time_budget, "dense_factor_rate", lambda: 1e3)
    accpm = registry.get("accpm", time_limit=60.0)
    monkeypatch.setattr(type(accpm), "_init_state", _Forbidden)
    problem = _linear_problem(40, 700)  # the 701-square box factor
    result = _solve_at_limit(accpm, problem)
    _assert_origin(result, problem, "the set-up")


class _Steps(IterativeSolver):
    """α ← clip(α + η(1 − Qα), 0, C) in chunks of 10 steps, whose estimate jumps after the
    first chunk."""

    name = "toy_estimated"
    iteration_unit = "gradient steps"
    supported: ClassVar = {SoftMarginDual: {"bias": ("none",), "loss": ("hinge",)}}

    def _chunk_seconds(self, problem, state):
        return (1e6, "a jump after the first chunk") if state["k"] else None

    def _init_state(self, problem, warm_start):
        Z = problem.X * problem.y[:, None]
        Q = Z @ Z.T
        return {"Q": Q, "eta": 1.0 / np.linalg.norm(Q, 2), "alpha": np.zeros(len(Q)), "k": 0}

    def _step(self, problem, state):
        a = state["alpha"]
        for _ in range(10):
            a = np.clip(a + state["eta"] * (1.0 - state["Q"] @ a), 0.0, problem.upper_bounds)
        state["alpha"], state["k"] = a, state["k"] + 1
        return StepOutcome(10)

    def _variables(self, problem, state):
        return {"alpha": state["alpha"]}


def test_the_chunk_loop_stops_before_a_chunk_estimated_beyond_the_limit():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 3))
    problem = SoftMarginDual(X, np.where(X[:, 0] > 0, 1.0, -1.0), C=1.0, bias="none")
    result = _solve_at_limit(_Steps(tol=1e-15, time_limit=60.0), problem)
    assert result.status is Status.TIME_LIMIT and result.iterations == 10
    assert result.info["time_limit"]["stage"] == "chunk 2"
    assert result.certified and result.alpha is not None  # the point of the first chunk
    # without a limit the estimate is never asked for
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        unlimited = _Steps(tol=1e-15, max_iter=30).solve(problem)
    assert unlimited.status is Status.MAX_ITER and unlimited.iterations == 30


# ---- low_rank: the factor and the exact certificate --------------------------------------------
def test_low_rank_refuses_a_factor_estimated_beyond_the_limit(monkeypatch):
    monkeypatch.setattr(low_rank_module, "_kernel_entry_seconds", lambda problem: 1.0)
    monkeypatch.setattr(low_rank_module, "nystrom", _Forbidden)
    solver = registry.get("low_rank", rank=20, time_limit=60.0)
    problem = _kernel_problem(200)
    result = _solve_at_limit(solver, problem)
    _assert_origin(result, problem, "the rank-20 factor")


def test_low_rank_skips_an_exact_certificate_estimated_beyond_the_limit(monkeypatch):
    prices = iter([1e-12, 1.0])  # the factor's entries, then the certificate's
    monkeypatch.setattr(low_rank_module, "_kernel_entry_seconds", lambda problem: next(prices))
    solver = registry.get("low_rank", rank=20, time_limit=60.0)
    result = _solve_at_limit(solver, _kernel_problem(200))
    assert result.status is Status.TIME_LIMIT and not result.certified
    assert result.alpha is not None and result.model is not None
    assert result.info["certificate_of"].startswith("none: the exact certificate not started")
    assert result.info["bracket_lower"] is None


# ---- uninterruptible libraries: a worker stopped at the limit ------------------------------------
needs_fork = pytest.mark.skipif(not worker.can_fork(), reason="no fork on this platform")


def _sleep_then(value, seconds):
    time.sleep(seconds)
    return value


@needs_fork
def test_a_worker_returns_arrays_and_values_and_raises_its_errors():
    out = worker.call_with_deadline(lambda: {"a": np.arange(3.0), "s": "text", "k": 2}, 30.0)
    np.testing.assert_array_equal(out["a"], [0.0, 1.0, 2.0])
    assert out["s"] == "text" and out["k"] == 2

    def fail():
        raise ValueError("bad value")

    with pytest.raises(ValueError, match="bad value"):
        worker.call_with_deadline(fail, 30.0)


@needs_fork
def test_a_worker_is_stopped_at_its_deadline():
    tic = time.perf_counter()
    out = worker.call_with_deadline(lambda: _sleep_then({}, 30.0), 0.5)
    assert isinstance(out, worker.Stopped) and time.perf_counter() - tic < 15.0


@needs_fork
def test_the_sklearn_svc_anchor_trains_in_a_worker_as_in_process():
    problem = _kernel_problem(80, seed=3)
    limited = registry.get("sklearn_svc", time_limit=600.0).solve(problem)
    direct = registry.get("sklearn_svc").solve(problem)
    assert limited.status is direct.status and limited.iterations == direct.iterations
    np.testing.assert_allclose(limited.alpha, direct.alpha, rtol=0, atol=1e-12)


@needs_fork
def test_the_sklearn_svc_anchor_is_stopped_at_the_limit(monkeypatch):
    fit = sklearn_anchors._SklearnAnchor._train
    monkeypatch.setattr(
        sklearn_anchors._SklearnAnchor, "_train", lambda self, job: _sleep_then(fit(self, job), 30)
    )
    tic = time.perf_counter()
    problem = _kernel_problem(40)
    result = _solve_at_limit(registry.get("sklearn_svc", time_limit=0.5), problem)
    assert time.perf_counter() - tic < 15.0
    _assert_origin(result, problem, "the training call")


def _worker_in_daemon(conn):
    out = worker.call_with_deadline(lambda: {"a": np.arange(2.0)}, 30.0)
    conn.send(float(out["a"].sum()))


@needs_fork
def test_a_worker_starts_inside_a_daemonic_process():
    """The harness runs cases in daemonic processes, which multiprocessing forbids to start
    children: the worker is forked without it."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_worker_in_daemon, args=(sender,), daemon=True)
    process.start()
    assert receiver.poll(60.0) and receiver.recv() == 1.0
    process.join()


@needs_fork
def test_osqp_is_stopped_at_the_limit_inside_its_set_up(monkeypatch):
    run = osqp_ref.OSQPReference._setup_and_solve
    monkeypatch.setattr(
        osqp_ref.OSQPReference,
        "_setup_and_solve",
        lambda self, *args: _sleep_then(run(self, *args), 30),
    )
    tic = time.perf_counter()
    problem = _linear_problem(50, 3)
    result = _solve_at_limit(registry.get("osqp", time_limit=0.5), problem)
    assert time.perf_counter() - tic < 15.0
    _assert_origin(result, problem, "OSQP's set-up and iterations")
    monkeypatch.undo()  # within the limit, the worker's record is the one made in process
    limited = registry.get("osqp", time_limit=600.0).solve(_linear_problem(50, 3))
    direct = registry.get("osqp").solve(_linear_problem(50, 3))
    assert limited.status is Status.OPTIMAL and limited.iterations == direct.iterations
    np.testing.assert_allclose(limited.w, direct.w, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["osqp", "clarabel", "sklearn_svc"])
def test_a_process_stopped_by_its_parent_runs_library_calls_itself(monkeypatch, name):
    """The harness's local workers are killed at each case's deadline by the main process:
    there, a solver with a limit calls its library in process (no fork to count in its
    timings), and the solve is the same."""
    import os

    if name not in registry.available_anchors() and registry.is_anchor(name):
        pytest.skip(registry.missing_reason(name))
    monkeypatch.setitem(worker._FORKING, "enabled", True)  # restored after the test
    problem = _kernel_problem(60) if name == "sklearn_svc" else _linear_problem(60, 3)
    forked = registry.get(name, time_limit=30.0).solve(problem)
    worker.calls_stay_in_this_process()
    assert not worker.can_fork()

    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    here = registry.get(name, time_limit=30.0).solve(problem)
    assert here.status is forked.status
    assert here.primal == pytest.approx(forked.primal, rel=1e-9)


def test_an_interrupted_wait_does_not_leave_the_worker_running(monkeypatch):
    """Ctrl-C while waiting for a worker: the worker is killed, not waited for to the end of
    its call."""
    monkeypatch.setitem(worker._FORKING, "enabled", True)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(worker.select, "select", interrupted)
    tic = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        worker.call_with_deadline(lambda: time.sleep(30) or {}, 60.0)
    assert time.perf_counter() - tic < 10


def test_the_kernel_matrix_estimate_of_an_unlabelled_problem():
    """A one-class problem has no labels: its export is priced as the others' (it raised
    AttributeError for n²·d past the negligible size, failing Clarabel with a time limit)."""
    from svmbench.problems import OneClassDual

    X = np.random.default_rng(0).standard_normal((2300, 20))
    seconds, how = time_budget.kernel_matrix_seconds(OneClassDual(X, nu=0.2), as_csc=True)
    assert seconds > 0.0 and "256 examples" in how
