"""The active-set method's anti-cycling rule (solvers/active_set.py, ``_solve`` and
``_drop_rounding``): after a step of length 0 sends the one multiplier just freed back to its
bound, violations within their margins' rounding are not released again; a larger violation
always is."""

from __future__ import annotations

import warnings

import numpy as np

from svmbench.benchmarks.studies.bench_extreme_grids import hard_data
from svmbench.problems import KernelDual
from svmbench.solvers import active_set, auto, registry
from svmbench.solvers.base import Status

TOL = 1e-6
#: The study's cell: logspace(−9, 3, 13)[4], one unit in the last place below 1e-5.
GAMMA = float(np.logspace(-9, 3, 13)[4])


def _hard_problem(gamma=GAMMA, C=1e10):
    X, y = hard_data()
    return KernelDual(X, np.where(y == 1, 1.0, -1.0), C=C, kernel="rbf", gamma=gamma)


def test_only_violations_within_their_margins_rounding_are_dropped():
    rng = np.random.default_rng(0)
    n = 6
    Q = rng.normal(size=(n, n))
    Q = Q @ Q.T
    alpha = np.array([1e10, 1e10, 3.0, 0.0, 0.0, 0.0])
    rounding = active_set.UNIT_ROUNDOFF * (np.abs(Q) @ alpha)
    violation = np.array([0.0, 0.0, 0.0, 0.5, 2.0, 1e3]) * rounding
    violation[5] = 1.0  # a real violator, far above every row's rounding
    expected = violation.copy()
    expected[3] = 0.0  # half its rounding: noise
    largest = float(np.max(np.abs(Q)))
    active_set._drop_rounding(violation, Q, alpha, largest)
    assert np.array_equal(violation, expected)
    # at α = 0 the margins are exact: every violation above VIOLATION_TOL is kept
    start = np.array([0.0, 0.0, 0.0, 1e-11, 0.3, 2.0])
    kept = start.copy()
    active_set._drop_rounding(kept, Q, np.zeros(n), largest)
    assert np.array_equal(kept, start)


def test_the_hard_cell_below_gamma_1e5_does_not_cycle_from_zero():
    """From α = 0 the cell took 439 changes, most of them a multiplier at 0 freed with a
    violation of 1e-10 (its margin's rounding 2e-7), sent back by a step of length 0, freed
    again. The point must still be certified to tol with its rounding allowance."""
    problem = _hard_problem()
    result = registry.get("active_set", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert problem.certificate(alpha=result.alpha, b=result.b).meets(TOL)
    assert result.iterations <= 150


def test_the_hard_cell_below_gamma_1e5_settles_from_smo_s_probe():
    """Auto's way: SMO's probe, then the active set from its point (360 changes before, 178 of
    them the same multiplier freed and sent back)."""
    problem = _hard_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe = registry.get("smo", max_iter=auto.SMALL_KERNEL_PROBE, tol=TOL).solve(problem)
        result = registry.get("active_set", tol=TOL).solve(problem, warm_start=probe.alpha)
    assert result.status is Status.OPTIMAL, result.message
    assert problem.certificate(alpha=result.alpha, b=result.b).meets(TOL)
    assert result.iterations <= 20


def test_the_rule_waits_for_a_degenerate_step(monkeypatch):
    """No violation is dropped before a step of length 0 sent a freed multiplier straight back:
    on a cell without one the rule never runs; on the hard cell it does."""
    calls = []
    drop = active_set._drop_rounding

    def counted(*args):
        calls.append(1)
        drop(*args)

    monkeypatch.setattr(active_set, "_drop_rounding", counted)
    quiet = _hard_problem(gamma=1e-7, C=1e4)
    result = registry.get("active_set", tol=TOL).solve(quiet)
    assert result.status is Status.OPTIMAL and not calls
    result = registry.get("active_set", tol=TOL).solve(_hard_problem())
    assert result.status is Status.OPTIMAL and calls
