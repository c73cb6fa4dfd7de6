"""The common stopping rule, statuses, clock and trace of ``IterativeSolver``.

A toy method (projected gradient ascent on the box-constrained dual) stands in for the real
solvers so that the template's behaviour is tested on its own.
"""

from __future__ import annotations

import itertools
import time
from typing import ClassVar

import numpy as np
import pytest

from svmbench.problems import SoftMarginDual
from svmbench.solvers import registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import (
    Checkpoint,
    ConvergenceWarning,
    IterativeSolver,
    SolveResult,
    Status,
    StepOutcome,
)
from tests.conftest import BINARY_SETS


class ProjectedGradient(IterativeSolver):
    """α ← clip(α + η(1 − Qα), 0, C) with η = 1/‖Q‖₂; 50 steps per chunk."""

    name = "toy_pg"
    iteration_unit = "gradient steps"
    supported: ClassVar = {SoftMarginDual: {"bias": ("none",), "loss": ("hinge",)}}

    def __init__(self, *, poison_after=None, **common):
        super().__init__(**common)
        self.poison_after = poison_after

    def _init_state(self, problem, warm_start):
        Z = problem.X * problem.y[:, None]
        Q = Z @ Z.T
        return {"Q": Q, "eta": 1.0 / np.linalg.norm(Q, 2), "alpha": np.zeros(len(Q)), "k": 0}

    def _step(self, problem, state):
        Q, eta, C = state["Q"], state["eta"], problem.upper_bounds
        a = state["alpha"]
        for _ in range(50):
            a = np.clip(a + eta * (1.0 - Q @ a), 0.0, C)
        state["k"] += 1
        if self.poison_after is not None and state["k"] >= self.poison_after:
            a = a * np.nan
        state["alpha"] = a
        return StepOutcome(50)

    def _variables(self, problem, state):
        return {"alpha": state["alpha"]}


X, Y = BINARY_SETS["gaussian_overlap"]
PROBLEM = SoftMarginDual(X, Y, C=0.1, bias="none")


def test_stops_on_the_certified_gap():
    r = ProjectedGradient(tol=1e-6, max_iter=10**6).solve(PROBLEM)
    assert type(r) is SolveResult
    assert r.status is Status.OPTIMAL
    assert r.rel_gap <= 1e-6 and r.certified
    ref = reference_solution(PROBLEM)
    assert abs(r.primal - ref.primal) <= 1e-6 * max(1, abs(ref.primal))
    # the recorded gap is the problem's, recomputed from the returned variables
    assert r.gap == pytest.approx(PROBLEM.certificate(alpha=r.alpha).gap, rel=1e-12, abs=1e-15)
    assert r.iterations % 50 == 0 and r.iteration_unit == "gradient steps"


def test_trace_is_ordered_and_ends_at_the_result():
    r = ProjectedGradient(tol=1e-6, max_iter=10**6).solve(PROBLEM)
    assert all(type(c) is Checkpoint for c in r.trace)
    its = [c.iteration for c in r.trace]
    times = [c.solve_time for c in r.trace]
    assert its == sorted(its) and len(set(its)) == len(its)
    assert times == sorted(times)
    assert r.trace[-1].iteration == r.iterations
    assert r.trace[-1].gap == pytest.approx(r.gap)
    assert all(c.gap >= -1e-9 * max(1, abs(c.primal)) for c in r.trace)


def test_max_iter_is_a_status_with_a_warning():
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        r = ProjectedGradient(tol=1e-12, max_iter=100).solve(PROBLEM)
    assert r.status is Status.MAX_ITER
    assert r.iterations == 100
    assert r.gap > 0 and r.certified


def test_time_limit_is_a_status():
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        r = ProjectedGradient(tol=1e-15, time_limit=1e-9).solve(PROBLEM)
    assert r.status is Status.TIME_LIMIT
    assert r.iterations == 50


def test_callback_time_is_not_solve_time_and_can_stop():
    calls = []

    def slow_callback(point):
        calls.append(point)
        time.sleep(0.05)
        return len(calls) >= 4

    start = time.perf_counter()
    with pytest.warns(ConvergenceWarning):
        r = ProjectedGradient(tol=1e-15, trace=False).solve(PROBLEM, callback=slow_callback)
    wall = time.perf_counter() - start
    assert len(calls) == 4 and r.status is Status.MAX_ITER
    assert "callback" in r.message
    assert wall >= 0.2
    assert r.solve_time < wall - 0.15  # the four sleeps were paused out


def test_native_rule_reports_the_certified_gap():
    class NativeAfterTwo(ProjectedGradient):
        stop_rules = ("gap", "native")

        def _step(self, problem, state):
            done = super()._step(problem, state).iterations
            return StepOutcome(done, converged=state["k"] >= 2)

    r = NativeAfterTwo(stop_rule="native").solve(PROBLEM)
    assert r.iterations == 100 and r.rel_gap > 1e-6  # two chunks are not enough for tol
    assert r.status is Status.NOT_CERTIFIED  # the native rule's word is not a certificate
    loose = NativeAfterTwo(stop_rule="native", tol=1.0).solve(PROBLEM)
    assert loose.status is Status.OPTIMAL and loose.rel_gap <= 1.0
    assert r.gap == pytest.approx(PROBLEM.certificate(alpha=r.alpha).gap)


def test_nan_iterates_are_a_numerical_error():
    r = ProjectedGradient(poison_after=2, trace=False, check_every=5).solve(PROBLEM)
    assert r.status is Status.NUMERICAL_ERROR
    assert "NaN" in r.message


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tol": -1.0}, ValueError, "tol must be"),
        ({"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
        ({"max_iter": 2.5}, TypeError, "max_iter must be an integer"),
        ({"time_limit": -1}, ValueError, "time_limit must be"),
        ({"stop_rule": "never"}, ValueError, "stop_rule must be one of"),
        ({"check_every": 0}, ValueError, "check_every must be"),
    ],
)
def test_bad_solver_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        ProjectedGradient(**kwargs)


def test_registry_names_and_errors():
    assert {"osqp", "clarabel"} <= set(registry.names())
    with pytest.raises(ValueError, match="unknown solver 'nope'; known solvers: .*clarabel"):
        registry.get("nope")
    with pytest.raises(TypeError, match="solver 'osqp'.*unexpected keyword"):
        registry.get("osqp", step_size=3)
    assert registry.solvers_for(PROBLEM) == sorted(registry.solvers_for(PROBLEM))
    assert "clarabel" in registry.solvers_for(PROBLEM)


# ---- the three times and the cost of the trace ---------------------------------------------------
@pytest.fixture
def count_certificates(monkeypatch):
    """Counts the calls of SoftMarginDual.certificate during a test."""
    calls = []
    original = SoftMarginDual.certificate

    def counting(self, **variables):
        calls.append(1)
        return original(self, **variables)

    monkeypatch.setattr(SoftMarginDual, "certificate", counting)
    return calls


@pytest.mark.parametrize("check_every", [1, 3, 7])
def test_no_trace_asks_only_the_stopping_tests_and_the_final_certificate(
    count_certificates, check_every
):
    with pytest.warns(ConvergenceWarning):
        r = ProjectedGradient(
            tol=1e-15, max_iter=50 * 20, check_every=check_every, trace=False
        ).solve(PROBLEM)
    chunks = r.iterations // 50
    stopping_tests = chunks // check_every
    final = 0 if chunks % check_every == 0 else 1  # the last stopping test is the record's
    assert len(count_certificates) == stopping_tests + final
    assert r.trace == ()


def test_the_default_trace_is_sampled_geometrically(count_certificates):
    with pytest.warns(ConvergenceWarning):
        r = ProjectedGradient(tol=1e-15, max_iter=50 * 200, check_every=1000).solve(PROBLEM)
    chunks = [c.iteration // 50 for c in r.trace]
    assert chunks[0] == 1 and chunks[-1] == 200  # the first chunk, and the result itself
    # chunk 1, 2, 3, 4, 5, 7, 9, 12, ... : about log(200)/log(1.4) points, never every chunk
    assert len(chunks) <= 20 and len(count_certificates) == len(chunks)
    assert all(b >= 1.25 * a for a, b in itertools.pairwise(chunks[4:]))


def test_every_chunk_on_request(count_certificates):
    with pytest.warns(ConvergenceWarning):
        r = ProjectedGradient(tol=1e-15, max_iter=50 * 30, trace="every").solve(PROBLEM)
    assert [c.iteration // 50 for c in r.trace] == list(range(1, 31))


def test_three_times_in_every_record():
    r = ProjectedGradient(tol=1e-6, max_iter=10**6).solve(PROBLEM)
    assert r.wall_time >= r.solve_time > 0.0
    assert r.certify_time > 0.0  # the trace's certificates, outside the solver clock
    assert r.wall_time >= r.solve_time + 0.9 * r.certify_time
    walls = [c.wall_time for c in r.trace]
    assert walls == sorted(walls) and all(c.wall_time >= c.solve_time for c in r.trace)


def test_time_limit_is_wall_time_with_slow_callbacks():
    calls = []

    def slow(point):
        calls.append(point)
        time.sleep(0.05)

    with pytest.warns(ConvergenceWarning, match="time_limit"):
        r = ProjectedGradient(tol=1e-15, time_limit=0.2).solve(PROBLEM, callback=slow)
    assert r.status is Status.TIME_LIMIT
    # the callbacks count in the wall time, not on the solver clock: the run ends within one
    # chunk and one callback of the limit (the slack is for a loaded machine)
    assert r.wall_time - r.solve_time >= 0.05 * len(calls) * 0.9
    assert 0.2 <= r.wall_time < 0.2 + 0.05 + 0.5


def test_a_numerical_failure_deep_inside_is_a_status_with_the_point_so_far():
    class Breaks(ProjectedGradient):
        def _step(self, problem, state):
            if state["k"] >= 3:
                raise np.linalg.LinAlgError("the Newton system is not positive definite")
            return super()._step(problem, state)

    r = Breaks(tol=1e-15, trace=False).solve(PROBLEM)
    assert r.status is Status.NUMERICAL_ERROR and "LinAlgError" in r.message
    assert r.iterations == 150 and r.certified and np.isfinite(r.primal)  # the point so far

    class Bug(ProjectedGradient):
        def _step(self, problem, state):
            raise ValueError("a programming error, not arithmetic")

    with pytest.raises(ValueError, match="programming error"):
        Bug().solve(PROBLEM)


def test_a_trace_point_is_drawn_only_if_it_keeps_the_trace_within_its_budget():
    # the budget is judged before the certificate, its cost taken as the mean so far: the first
    # point is always drawn; after it (80 ms of certificates in 1 s of wall time) a second would
    # bring the trace to 16 % and waits until the wall time has grown past 1.6 s
    from types import SimpleNamespace

    from svmbench.solvers.clock import TRACE_BUDGET, TraceSchedule

    schedule = TraceSchedule(True)
    clock = SimpleNamespace(certify_time=0.0, wall=0.001)
    assert schedule.wants(1, clock)
    clock.certify_time, clock.wall = 0.08, 1.0
    assert not schedule.wants(2, clock)  # 0.16 > TRACE_BUDGET · 1.0
    clock.wall = 0.17 / TRACE_BUDGET
    assert schedule.wants(3, clock)
    assert not schedule.wants(3, clock)  # the geometric schedule: chunk 4 is next
    assert TraceSchedule("every").wants(2, clock) and not TraceSchedule(False).wants(1, clock)


def test_an_uncertified_hard_margin_is_explained_by_its_margin_not_by_convexity():
    from svmbench.problems import HardMarginPrimal
    from svmbench.solvers.status_rules import uncertified_reason

    X = np.array([[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0], [-2.0, 0.0]])
    problem = HardMarginPrimal(X, np.array([1.0, 1.0, -1.0, -1.0]))
    cert = problem.certificate(w=np.array([-1.0, 0.0]), b=0.0)  # every margin negative
    assert not cert.certified
    why = uncertified_reason(problem, cert)
    assert "primal point is not feasible" in why and "no scaling repairs" in why
    assert "convex" not in why


def test_clock_pauses_and_counts_certificates():
    """The solver clock stops within ``paused()`` and ``certifying()`` (and runs on after them
    only if it ran before); ``certifying()`` adds its seconds to ``certify_time``, unless the
    block raised."""
    from svmbench.solvers.clock import Clock

    clock = Clock().start()
    with clock.certifying():
        time.sleep(0.02)
    assert clock.certify_time >= 0.02
    assert clock.elapsed < clock.wall - 0.015  # the sleep was paused out
    before = clock.certify_time
    with pytest.raises(RuntimeError), clock.certifying():
        raise RuntimeError("inside")
    assert clock.certify_time == before
    assert clock._started is not None  # running again after the block
    clock.stop()
    with clock.paused():
        assert clock._started is None
    assert clock._started is None  # stopped before: stays stopped


def test_a_record_holds_what_its_constructor_would_give_it():
    """``Solver._result`` builds its record without the frozen dataclass's constructor: every
    field is there, equal to the constructor's record of the same values, the problem key still
    deferred until read, and the record pickles and compares as one built the usual way."""
    import dataclasses
    import pickle

    from svmbench.solvers.records import SolveResult

    problem = SoftMarginDual(*BINARY_SETS["gaussian_overlap"], C=1.0, bias="regularized")
    result = registry.get("dcd", tol=1e-8).solve(problem)
    assert callable(result.__dict__["_problem_key"])  # nothing hashed yet
    values = {f.name: getattr(result, f.name) for f in dataclasses.fields(SolveResult)}
    built = SolveResult(**values)
    for name, value in values.items():
        other = getattr(built, name)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, other)
        else:
            assert value == other or (value != value and other != other), name
    assert result.problem_key == problem.key
    again = pickle.loads(pickle.dumps(result))
    assert again.problem_key == problem.key and again.status is result.status
