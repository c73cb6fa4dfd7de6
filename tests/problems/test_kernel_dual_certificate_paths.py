"""The kernel dual's short paths in its certificate (issue 25): a solver's α that is feasible
up to rounding is repaired as the projection repairs it, and a small dense kernel product is
``kernel_dot``'s, bit for bit; everything else takes the general code."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems import KernelDual
from svmbench.problems._binary import BinaryDualMixin
from svmbench.problems._qp import project_box_hyperplane
from svmbench.problems.kernels import kernel_dot


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1.0, -1.0)
    return KernelDual(X, y, C=2.0, kernel="rbf", gamma=0.3)


def _feasible(problem, rng, residue=0.0):
    """α in [0, C] with yᵀα equal to ``residue`` up to rounding, some at 0 and some at C."""
    y, C = problem.y, problem.upper_bounds
    a = rng.uniform(0.2, 0.8, size=C.size) * C
    a[rng.random(a.size) < 0.3] = 0.0
    a[rng.random(a.size) < 0.2] = C[0]
    pos, neg = y > 0, y < 0
    sp, sn = a[pos].sum(), a[neg].sum()
    a[pos if sp > sn else neg] *= min(sp, sn) / max(sp, sn)  # scaled down: still in the box
    i = np.flatnonzero((a > 0.1) & (a < C - 0.1))[0]
    a[i] -= y[i] * (float(y @ a) - residue)  # a rounding-sized correction
    assert np.all((a >= 0) & (a <= C))
    return a


def _general(problem, alpha):
    return BinaryDualMixin._repair_alpha(problem, alpha)


@pytest.mark.parametrize("residue", [0.0, 1e-15, -3e-14, 2e-13])
def test_a_feasible_to_rounding_alpha_is_repaired_as_the_projection_repairs_it(
    problem, residue, monkeypatch
):
    rng = np.random.default_rng(int(abs(residue) * 1e16) + 1)
    alpha = _feasible(problem, rng, residue)
    general = BinaryDualMixin._repair_alpha
    monkeypatch.setattr(BinaryDualMixin, "_repair_alpha", None)  # the short path only
    fast, fast_res = problem._repair_alpha(alpha)
    monkeypatch.setattr(BinaryDualMixin, "_repair_alpha", general)
    slow, slow_res = _general(problem, alpha)
    np.testing.assert_array_equal(fast, slow)
    assert fast_res == slow_res
    lower, upper = problem.dual_box()
    np.testing.assert_array_equal(fast, project_box_hyperplane(alpha, lower, upper, problem.y))
    assert fast is not alpha and np.all((fast >= 0) & (fast <= upper))
    assert abs(float(problem.y @ fast)) <= 1e-12
    if abs(residue) > 1e-14:  # the residue went onto one coordinate
        assert 0.0 < fast_res["dual_infeasibility"] < 1e-12
        assert np.count_nonzero(fast != alpha) == 1


@pytest.mark.parametrize(
    "spoil",
    [
        lambda a, C: np.where(np.arange(a.size) == 3, -0.2, a),  # below the box
        lambda a, C: np.where(np.arange(a.size) == 4, C + 0.5, a),  # above it
        lambda a, C: a + 0.01,  # far from yᵀα = 0
    ],
    ids=["below", "above", "off_the_hyperplane"],
)
def test_other_alphas_take_the_general_projection(problem, spoil):
    alpha = spoil(_feasible(problem, np.random.default_rng(7)), problem.upper_bounds)
    fast, fast_res = problem._repair_alpha(alpha)
    slow, slow_res = _general(problem, alpha)
    np.testing.assert_array_equal(fast, slow)
    assert fast_res == slow_res and fast_res["dual_infeasibility"] > 1e-3


def test_other_biases_and_losses_take_the_general_code(problem):
    alpha = _feasible(problem, np.random.default_rng(9), 1e-14)
    for kw in ({"bias": "none"}, {"bias": "regularized"}, {"loss": "squared_hinge"}):
        other = KernelDual(problem.X, problem.y, C=2.0, kernel="rbf", gamma=0.3, **kw)
        fast, res = other._repair_alpha(alpha)
        slow, slow_res = _general(other, alpha)
        np.testing.assert_array_equal(fast, slow)
        assert res == slow_res


@pytest.mark.parametrize(
    "kernel, params",
    [("rbf", {"gamma": 0.3}), ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0}),
     ("sigmoid", {"gamma": 0.05, "coef0": 0.1}), ("linear", {})],
)  # fmt: skip
def test_the_certificates_kernel_product_is_kernel_dots(problem, kernel, params):
    p = KernelDual(problem.X, problem.y, C=1.0, kernel=kernel, **params)
    coef = np.zeros(p.n_samples)
    coef[::3] = np.linspace(-1.0, 2.0, coef[::3].size)
    nz = np.flatnonzero(coef)
    expected = kernel_dot(
        p.X, p.X[nz], coef[nz], sqn_X=p.squared_norms, sqn_Z=p.squared_norms[nz],
        **p.kernel_spec.parameters,
    )  # fmt: skip
    np.testing.assert_array_equal(p.kernel_times(coef), expected)
    dense = p.kernel_spec(p.X) @ coef  # the Gram matrix: the same values to rounding
    np.testing.assert_allclose(p.kernel_times(coef), dense, rtol=1e-12, atol=1e-12)


def test_the_certificate_is_the_general_one(problem):
    alpha = _feasible(problem, np.random.default_rng(11), -2e-15)
    cert = problem.certificate(alpha=alpha, b=0.1)
    a, _ = _general(problem, alpha)
    assert cert.primal == pytest.approx(problem.primal_objective(a, 0.1), rel=1e-15)
    assert cert.dual == pytest.approx(problem.dual_objective(a), rel=1e-15)
    assert cert.certified and cert.gap >= 0.0
