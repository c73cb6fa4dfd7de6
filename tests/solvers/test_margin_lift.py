"""The margin lift (solvers/margin_lift.py): at a large C, a hinge point whose support vectors sit
on the margin is moved off its rounding, and kept only where the problem certifies it."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from svmbench import SVMClassifier
from svmbench.problems import KernelDual
from svmbench.solvers import margin_lift, registry
from svmbench.solvers.exact_finish import finished_point
from svmbench.solvers.records import Outcome, Status

TOL = 1e-6
GAMMA = 0.02


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def _pair(digits, C, a=0, b=1, gamma=GAMMA):
    """Digits a against b (about 360 rows): separable, every support vector free at a large C."""
    X, y = digits
    mask = (y == a) | (y == b)
    return KernelDual(X[mask], np.where(y[mask] == a, 1.0, -1.0), C=C, kernel="rbf", gamma=gamma)


def _libsvm_support(problem):
    svc = SVC(C=problem.C, kernel="rbf", gamma=GAMMA, tol=1e-8).fit(problem.X, problem.y)
    return np.sort(svc.support_)


@pytest.mark.parametrize("C", [1e8, 1e10])
@pytest.mark.parametrize("method", ["smo", "smo_batch", "barrier", "auto"])
def test_a_large_c_pair_is_certified_with_libsvm_s_support(digits, C, method):
    """Before the lift, SMO ended ``numerical_error`` here (its margins 1 ± 1e-14, C times that
    above tol) and the barrier kept all 360 rows as support vectors."""
    problem = _pair(digits, C)
    result = registry.get(method, tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert problem.certificate(**result.variables).meets(TOL)  # the problem says so
    support = np.flatnonzero(result.variables["alpha"])
    np.testing.assert_array_equal(support, _libsvm_support(problem))


def test_the_lifted_gap_is_delta_times_the_sum_of_alpha(digits):
    """``P − D = δ(1 + δ)Σα`` for an exact point lifted by δ (no multiplier at C), within the
    certificate's own rounding allowance."""
    problem = _pair(digits, 1e10)
    solved = registry.get("smo", tol=TOL).solve(problem)
    alpha = solved.variables["alpha"]
    free = np.flatnonzero(alpha > 0)
    exact, _, method = finished_point(
        problem, alpha >= problem.C, free, alpha, solved.variables["b"], problem.upper_bounds
    )
    assert method == "kkt"
    cert = problem.certificate(**exact)
    assert not cert.meets(TOL)  # on the margin: C times its rounding is above tol
    lifted = margin_lift.lift_margins(problem, exact, cert, TOL)
    assert lifted is not None
    variables, new_cert, report = lifted
    delta, total = report["lifted"], float(cert.dual_point.sum())
    assert report["method"] == "scaled" and new_cert.meets(TOL)
    expected = delta * (1.0 + delta) * total
    assert abs(new_cert.gap - expected) <= new_cert.rounding + 1e-9 * expected
    m = problem.y * problem.decision_function(variables["alpha"], variables["b"])
    assert m[variables["alpha"] > 0].min() >= 1.0 + 0.5 * delta  # every margin off 1


def test_multipliers_at_their_bound_are_kept_and_the_free_ones_solved_for_a_lifted_margin():
    """Where α_i = C_i (it cannot grow), the free multipliers are solved for margins 1 + δ."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0.0, 1.0, (30, 2)), rng.normal(1.0, 1.0, (30, 2))])
    y = np.repeat([1.0, -1.0], 30)
    problem = KernelDual(X, y, C=10.0, kernel="rbf", gamma=0.5)
    result = registry.get("smo", tol=1e-10).solve(problem)
    alpha, b = result.variables["alpha"], result.variables["b"]
    at_c = alpha >= problem.C
    assert at_c.any()
    delta = 1e-7
    lifted, new_b, method = margin_lift._lifted(problem, alpha, b, problem.upper_bounds, delta)
    assert method == "kkt"
    np.testing.assert_array_equal(lifted[at_c], alpha[at_c])
    free = (lifted > 0) & (lifted < problem.C)
    m = y * problem.decision_function(lifted, new_b)
    np.testing.assert_allclose(m[free], 1.0 + delta, atol=1e-9)
    assert abs(float(lifted @ y)) <= 1e-12 * float(lifted.sum())


def test_a_lift_that_would_cost_more_than_tol_is_not_tried(digits):
    """At a tol the lift's own gap δΣα cannot fit in, no point is lifted and SMO's record says
    what its certificate says."""
    problem = _pair(digits, 1e10)
    tol = 1e-13
    result = registry.get("smo", tol=tol).solve(problem)
    assert "margin_lift" not in result.info
    assert (result.status is Status.OPTIMAL) == problem.certificate(**result.variables).meets(tol)


def test_the_lift_stays_out_of_a_moderate_c(digits):
    """At C = 1 the margins' rounding weighs nothing: no lift, no early finish (records as they
    were), and the gate's formula holds on both sides."""
    moderate, large = _pair(digits, 1.0), _pair(digits, 1e10)
    alpha = registry.get("smo", tol=TOL).solve(large).variables["alpha"]  # Σα = 67
    assert not margin_lift.lift_worth(moderate, TOL, alpha)
    assert margin_lift.lift_worth(large, TOL, alpha)
    # the gate: C·n·u·max(1, Σα·max K̃_ii) against 1e-2·tol·max(1, Σα/2), by hand
    total, n, u = float(alpha.sum()), large.n_samples, np.finfo(float).eps / 2
    weight_at_1 = 1.0 * n * u * total
    assert weight_at_1 < 1e-2 * TOL * total / 2 < 1e10 * n * u * total
    assert not margin_lift.finish_due(moderate, TOL, 1e-3, alpha)
    assert margin_lift.finish_due(large, TOL, 1e-3, alpha)
    assert not margin_lift.finish_due(large, TOL, 1e-2, alpha)
    result = registry.get("smo", tol=TOL).solve(moderate)
    assert result.status is Status.OPTIMAL and "margin_lift" not in result.info


def test_a_point_that_is_not_finite_or_not_a_hinge_is_left_as_it_is(digits):
    problem = _pair(digits, 1e10)
    alpha = np.full(problem.n_samples, np.nan)
    outcome = Outcome(Status.NUMERICAL_ERROR, {"alpha": alpha, "b": 0.0}, 5)
    assert margin_lift.lifted_outcome(outcome, problem, TOL) is outcome
    assert not margin_lift.lift_applies(problem, None, TOL)
    squared = KernelDual(
        problem.X, problem.y, C=1e10, kernel="rbf", gamma=GAMMA, loss="squared_hinge"
    )
    assert not margin_lift.lift_worth(squared, TOL, np.ones(problem.n_samples))


def test_a_linear_kernel_at_a_large_c_keeps_only_the_margin_s_points():
    """Breast cancer (standardized) with a linear kernel at C = 1e8: the barrier's interior
    point was kept, all 569 rows support vectors, where ``SVC`` keeps 29."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = SVMClassifier(kernel="linear", C=1e8).fit(X, y)
    assert ours.result_.status is Status.OPTIMAL
    # a hard margin's optimum: support vectors on the margin, every other point beyond it (two
    # points sit on it with α = 0; LIBSVM, which stops short here, keeps one of them)
    margins = np.where(y == 1, 1.0, -1.0) * ours.decision_function(X)
    others = np.delete(margins, ours.support_)
    np.testing.assert_allclose(margins[ours.support_], 1.0, atol=1e-6)
    assert others.min() >= 1.0 - 1e-6
    assert ours.n_support_.sum() <= X.shape[1] + 1  # a vertex in 30 dimensions, not 569 rows


def test_the_estimator_at_c_1e10_keeps_svc_s_support_vectors(digits):
    """Three digits classes at C = 1e10: before the lift, every training row was a support
    vector (the barrier's interior point) where ``SVC`` keeps a few dozen."""
    X, y = digits
    mask = y < 3
    X, y = X[mask], y[mask]
    ours = SVMClassifier(C=1e10, gamma=GAMMA).fit(X, y)
    svc = SVC(C=1e10, gamma=GAMMA, tol=1e-8).fit(X, y)
    assert ours.result_.status is Status.OPTIMAL
    np.testing.assert_array_equal(ours.n_support_, svc.n_support_)
    np.testing.assert_array_equal(ours.support_, svc.support_)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))
    # a hard margin's α need not be unique; the decision values are
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-4)


def test_a_kkt_point_held_back_by_its_allowance_is_lifted_once_more_not_solved_again(
    digits, monkeypatch
):
    """At γ = 10 the kernel is nearly the identity and every row a free support vector: the
    early KKT point's own gap is within tol, its allowance (C times the RBF entries' rounding)
    is not. It is lifted further at once, instead of SMO solving 360 free multipliers again at
    every eps down to 1e-7 (five dense solves a pair)."""
    problem = _pair(digits, 1e10, gamma=10.0)
    calls = []
    original = margin_lift.finished_point

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(margin_lift, "finished_point", counting)
    result = registry.get("smo", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert problem.certificate(**result.variables).meets(TOL)
    assert len(calls) == 1 and result.info["margin_lift"]["early"]


def test_a_scaled_point_far_from_tol_draws_no_certificate(digits, monkeypatch):
    """The lift certifies a scaled point only where its gap, estimated from the margins, can
    meet tol: an early iterate (SMO stopped at eps = 1e-1, a relative gap of about 1e-2) draws
    no certificate and is not lifted; the exact point draws one and is."""
    problem = _pair(digits, 1e10)
    drawn = []
    original = KernelDual.certificate

    def counting(self, **kwargs):
        drawn.append(1)
        return original(self, **kwargs)

    early = registry.get("smo", tol=TOL, eps=1e-1, stop_rule="native").solve(problem)
    cert = problem.certificate(**early.variables)
    assert cert.rel_gap > 100 * TOL
    monkeypatch.setattr(KernelDual, "certificate", counting)
    assert margin_lift.lift_margins(problem, early.variables, cert, TOL) is None
    assert not drawn
    alpha = registry.get("smo", tol=TOL).solve(problem).variables["alpha"]
    exact, _, _ = finished_point(
        problem, alpha >= problem.C, np.flatnonzero(alpha > 0), alpha, None, problem.upper_bounds
    )
    exact_cert = original(problem, **exact)
    drawn.clear()
    lifted = margin_lift.lift_margins(problem, exact, exact_cert, TOL)
    assert lifted is not None and lifted[1].meets(TOL) and len(drawn) == 1


def test_more_free_multipliers_than_the_early_finish_solves_wait_for_the_estimate(
    digits, monkeypatch
):
    """Beyond ``EARLY_MAX_FREE`` free multipliers a method is not sent to the finish at every
    eps (it would only lift its own point, whose lifted gap its estimate gives): breast cancer
    at γ = 10, C = 1e4, every row free, drew 18 certificates, 15 of them hopeless."""
    problem = _pair(digits, 1e10, gamma=10.0)
    alpha = registry.get("smo", tol=TOL).solve(problem).variables["alpha"]
    free = int(np.count_nonzero((alpha > 0) & (alpha < problem.C)))
    assert margin_lift.finish_due(problem, TOL, 1e-3, alpha)
    monkeypatch.setattr(margin_lift, "EARLY_MAX_FREE", free - 1)
    assert not margin_lift.finish_due(problem, TOL, 1e-3, alpha)
    result = registry.get("smo", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert problem.certificate(**result.variables).meets(TOL)
