"""The barrier's early finish (solvers/barrier/early_finish.py): the margins' gap estimate that
decides whether a finished point is certified, the first guess read from the margins, and the
finished multipliers on ``yᵀα = 0`` exactly at a C that no sum of its copies holds exactly."""

from __future__ import annotations

import numpy as np
import pytest

import svmbench.solvers.barrier.early_finish as early_module
from svmbench.problems import SoftMarginPrimal, datasets
from svmbench.solvers import Status, registry
from svmbench.solvers._reference import reference_solution
from tests.conftest import BINARY_SETS

FULL_BREAST_CANCER = datasets.load("breast_cancer")  # n = 569, d = 30, standardized
TOL = 1e-8


def _solve(problem):
    return registry.get("barrier", tol=TOL).solve(problem)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_gap_parts_sum_to_the_certificates_gap(loss, bias):
    """``Σ g_i`` of :func:`gap_parts` is the gap ``P − D`` that the problem's certificate
    computes from P and D apart, for any α in the box (on ``yᵀα = 0`` for a free bias) and
    ``w = Σ α_i y_i x_i``, and every part is ≥ 0 up to rounding."""
    X, y = BINARY_SETS["gaussian_overlap"]
    weights = np.linspace(0.0, 2.0, len(y))  # one C_i = 0, the others spread
    problem = SoftMarginPrimal(X, y, C=0.7, loss=loss, bias=bias, sample_weight=weights)
    rng = np.random.default_rng(0)
    C = problem.upper_bounds
    alpha = problem.project_dual(rng.uniform(0.0, 1.0, len(y)) * np.where(C > 0, C, 0.0))
    ay = alpha * problem.y
    w = X.T @ ay
    b = {"free": 0.37, "regularized": problem.bias_scale**2 * float(ay.sum()), "none": 0.0}[bias]
    parts, scale = early_module.gap_parts(problem, {"w": w, "b": b, "alpha": alpha})
    cert = problem.certificate(w=w, b=b, alpha=alpha)
    assert cert.residuals["dual_infeasibility"] <= 1e-12
    assert float(parts.sum()) == pytest.approx(cert.gap, rel=1e-9, abs=1e-9 * scale)
    assert scale == pytest.approx(max(1.0, abs(cert.primal)), rel=1e-12)
    assert parts.min() >= -1e-12 * scale


@pytest.mark.parametrize("C", [0.01, 0.1, 1.0])
def test_the_margins_first_guess_saves_newton_steps(C, monkeypatch):
    """The first guess read from the iterate's margins certifies Newton steps before the
    guess of α's thresholds alone (breast cancer: 4/6/7 steps at C = 0.01/0.1/1 against
    7/8/8), at Clarabel's optimum either way."""
    problem = SoftMarginPrimal(FULL_BREAST_CANCER.X, FULL_BREAST_CANCER.y, C=C)
    ref = reference_solution(problem, "clarabel")
    margins = _solve(problem)
    monkeypatch.setattr(early_module, "MARGIN_BAND", np.inf)  # every example in the band
    alphas = _solve(problem)
    for result in (margins, alphas):
        assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
        assert result.info["exact_finish"]["early"] is True
        np.testing.assert_allclose(result.w, ref.w, rtol=1e-5, atol=1e-6)
    assert margins.info["exact_finish"]["start"] == "margins"
    assert alphas.info["exact_finish"]["start"] == "alpha"
    assert margins.iterations < alphas.iterations


@pytest.mark.parametrize("C", [0.1, 0.3])
def test_finished_multipliers_sum_to_zero_exactly_at_a_non_dyadic_C(C):
    """At C = 0.1 no sum of copies of C is exact in float64: the finished multipliers at the
    bound take the grid point below C, so that ``yᵀα = 0`` holds exactly, in the box, and the
    certificate takes the point as its own projection (no bisection): its dual infeasibility
    is 0, and the multipliers that the solve put at C are within the grid's step
    ``q = 2^⌈log₂ Σα⌉ / 2⁵²`` of it."""
    problem = SoftMarginPrimal(FULL_BREAST_CANCER.X, FULL_BREAST_CANCER.y, C=C)
    result = _solve(problem)
    report = result.info["exact_finish"]
    assert result.status is Status.OPTIMAL and report["early"] is True
    alpha = result.alpha
    assert float(problem.y @ alpha) == 0.0
    assert alpha.min() >= 0.0 and alpha.max() <= C
    assert result.residuals["dual_infeasibility"] == 0.0
    q = 2.0 ** (np.ceil(np.log2(alpha.sum())) - 52)
    near_C = alpha > C - q
    assert np.count_nonzero(near_C) == report["fixed_at_C"] > 0


def test_at_a_large_c_the_early_finish_asks_lifted_margins_and_ends_the_run():
    """Digits 0 against 1 with a linear kernel at C = 1e10: the early finish's KKT point on the
    19 points of the margin had margins 1 ± 1e-15, C times that above tol, so the barrier stalled
    (a gap estimate of 2e-5 while μ fell) and auto went on to Clarabel. Asked at 1 + δ
    (solvers/margin_lift.py), the point certifies and ends the barrier's run."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = (y == 0) | (y == 1)
    problem = SoftMarginPrimal(X[keep] / 16.0, np.where(y[keep] == 0, 1.0, -1.0), C=1e10)
    result = registry.get("barrier", tol=1e-6).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    report = result.info["exact_finish"]
    assert report.get("early") and report["accepted"]
    assert problem.certificate(w=result.w, b=result.b).meets(1e-6)
    margins = problem.margins(result.w, result.b)
    support = result.alpha > 0
    assert support.sum() < 40 and margins[support].min() > 1.0  # lifted off the margin
    assert margins[~support].min() >= 1.0
    # auto's first method (linear_smo, its pairs' SMO) certifies it with no fallback either
    assert registry.get("auto", tol=1e-6).solve(problem).info["auto"]["tried"] == ("linear_smo",)
