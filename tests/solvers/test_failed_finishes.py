"""A run's failed finishes are not tried again on the same active set (solvers/margin_lift.py,
``finished_or_lifted``'s ``failed``), and a fit does not depend on the fits before it."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from svmbench import SVMClassifier
from svmbench.benchmarks.studies.bench_extreme_grids import hard_data
from svmbench.problems import KernelDual
from svmbench.solvers import chunk_loop, margin_lift, registry
from svmbench.solvers.records import Status

TOL = 1e-6


@pytest.fixture(scope="module")
def hard():
    """120 × 200, 80 Gaussian rows ±0.05 apart per feature, 40 repeated (20 under the other
    label): at C = 1e10, γ = 1e-7, SMO's iterate keeps one active set (57 free, 39 at C) from
    eps = 1e-3 to its floor, and that set's KKT point is not the optimum."""
    return hard_data(seed=0)


def _problem(hard, C=1e10, gamma=1e-7):
    X, y = hard
    return KernelDual(X, np.where(y == 1, 1.0, -1.0), C=C, kernel="rbf", gamma=gamma)


def _counting_solves(monkeypatch):
    solved = []
    original = margin_lift.finished_point

    def counting(problem, atC, free, alpha, *args, **kwargs):
        solved.append(margin_lift.active_set_key(alpha, atC))
        return original(problem, atC, free, alpha, *args, **kwargs)

    monkeypatch.setattr(margin_lift, "finished_point", counting)
    return solved


def test_smo_solves_each_failed_active_set_once(hard, monkeypatch):
    """SMO at C = 1e10 hands its point to the finish at every eps from 1e-3 to 1e-13; each
    time the same active set, each finish failing. It is solved once; the run ends as before
    (the memory off: the same status, iterations, point and certificates, twelve solves)."""
    solved = _counting_solves(monkeypatch)
    result = registry.get("smo", tol=TOL).solve(_problem(hard))
    assert solved and len(solved) == len(set(solved))
    once = len(solved)
    solved.clear()
    original = chunk_loop.finished_or_lifted
    monkeypatch.setattr(
        chunk_loop,
        "finished_or_lifted",
        lambda problem, variables, cert, tol, failed=None: original(problem, variables, cert, tol),
    )
    again = registry.get("smo", tol=TOL).solve(_problem(hard))
    assert len(solved) > once and len(set(solved)) == once  # the same set, solved again
    assert result.status is again.status and result.status is not Status.OPTIMAL
    assert result.iterations == again.iterations
    assert np.array_equal(result.variables["alpha"], again.variables["alpha"])
    assert result.variables["b"] == again.variables["b"]
    assert result.primal == again.primal and result.dual == again.dual


def test_a_remembered_set_is_skipped_and_a_new_one_solved(hard, monkeypatch):
    """``finished_or_lifted`` with ``failed``: the set of a failed finish is added, the same
    set is not solved again (None at once), another set is."""
    problem = _problem(hard)
    point = registry.get("smo", tol=TOL, max_iter=10**6, eps=1e-3, stop_rule="native").solve(
        problem
    )
    cert = problem.certificate(**point.variables)
    solved = _counting_solves(monkeypatch)
    failed: set[bytes] = set()
    assert margin_lift.finished_or_lifted(problem, point.variables, cert, TOL, failed) is None
    assert len(solved) == 1 and failed == {solved[0]}
    assert margin_lift.finished_or_lifted(problem, point.variables, cert, TOL, failed) is None
    assert len(solved) == 1
    assert margin_lift.finished_or_lifted(problem, point.variables, cert, TOL, {b"other"}) is None
    assert len(solved) == 2


def test_a_remembered_set_without_bounded_multipliers_is_still_lifted(hard, monkeypatch):
    """Where no multiplier sits at C the lift only scales the iterate, which improves from one
    eps to the next: on a remembered set that lift is still tried, with no KKT solve; where
    some sit at C (the hard set) the lift would solve the same free set again: neither runs."""
    X, y = load_digits(return_X_y=True)
    mask = (y == 0) | (y == 1)  # separable: every support vector free at C = 1e10
    pair = KernelDual(
        X[mask] / 16.0, np.where(y[mask] == 0, 1.0, -1.0), C=1e10, kernel="rbf", gamma=0.02
    )
    lifts = []
    monkeypatch.setattr(margin_lift, "lift_margins", lambda *args, **kwargs: lifts.append(1))
    solved = _counting_solves(monkeypatch)
    for problem, bounded in ((pair, False), (_problem(hard), True)):
        native = registry.get("smo", tol=TOL, eps=1e-3, stop_rule="native")
        variables = native.solve(problem).variables
        cert = problem.certificate(**variables)
        alpha = np.asarray(cert.dual_point)
        at_c = alpha >= problem.upper_bounds
        assert bool(at_c.any()) is bounded and margin_lift.lift_applies(problem, cert, TOL)
        key = margin_lift.active_set_key(alpha, at_c)
        lifts.clear()
        assert margin_lift.finished_or_lifted(problem, variables, cert, TOL, {key}) is None
        assert not solved and len(lifts) == (0 if bounded else 1)


def test_a_fit_is_the_same_after_other_fits(hard):
    """The hard set at C = 1e10, γ = 1e-5 (SMO's probe, then the active set), fitted first
    and again after fits at other C and γ (SMO alone, the active set, the barrier): the same
    record. (The study's 360 active-set changes against 8-9 alone were its γ,
    ``logspace(−9, 3, 13)[4] = 9.999999999999999e-06``, one unit in the last place below
    1e-5, not the fits before it.)"""
    X, y = hard

    def fitted(C, gamma):
        result = SVMClassifier(C=C, gamma=gamma).fit(X, y).result_
        return (
            result.status,
            result.iterations,
            result.info["auto"]["tried"],
            result.variables["alpha"].tobytes(),
            result.variables["b"],
            result.rel_gap,
        )

    gamma = float(np.logspace(-9, 3, 13)[4])
    first = fitted(1e10, gamma)
    for C, g in ((1e10, 1e-7), (1e10, 1e-3), (1e10, 10.0), (1e4, 0.1), (1e8, 1e-5)):
        fitted(C, g)
    assert fitted(1e10, gamma) == first
    assert first[0] is Status.OPTIMAL
