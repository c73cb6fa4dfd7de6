"""The logistic-loss problem: its objectives from their definitions, weak duality at any pair of
points, a certificate that closes at the CVXPY (exponential cone, Clarabel) optimum, the exact
bias, the model and its file, and the refusals of bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import Logistic, datasets
from svmbench.problems.logistic_model import LogisticModel
from svmbench.problems.model_files import load_model, save_model
from svmbench.solvers import registry

BIASES = ("free", "regularized", "none")


def overlap(n=80, d=5, seed=0):
    ds = datasets.gaussian(n, d, 1.0, seed=seed)
    return ds.X, ds.y


def cvxpy_optimum(problem):
    result = registry.get("logistic_cvxpy", tol=1e-9).solve(problem)
    assert result.status.value == "optimal", result.message
    return result


def test_primal_and_dual_objectives_follow_their_definitions():
    X, y = overlap()
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.0, 2.0, y.size)
    p = Logistic(X, y, C=3.0, bias="regularized", bias_scale=2.0, sample_weight=sw)
    w, b = rng.normal(size=X.shape[1]), 0.7
    m = y * (X @ w + b)
    C = 3.0 * sw
    expected = 0.5 * w @ w + 0.5 * (b / 2.0) ** 2 + np.sum(C * np.log1p(np.exp(-m)))
    assert p.primal_objective(w, b) == pytest.approx(expected, rel=1e-13)
    alpha = rng.uniform(0.0, 1.0, y.size) * C
    v = X.T @ (alpha * y)
    bias_part = 2.0 * np.sum(alpha * y)
    entropy = 0.0
    for a, c in zip(alpha, C, strict=True):
        entropy -= a * np.log(a) + (c - a) * np.log(c - a) - c * np.log(c)
    expected_D = -0.5 * (v @ v + bias_part**2) + entropy
    assert p.dual_objective(alpha) == pytest.approx(expected_D, rel=1e-12)


def test_the_entropy_terms_are_finite_at_the_ends_of_the_box():
    X, y = overlap()
    p = Logistic(X, y, C=2.0, bias="none")
    for alpha in (np.zeros(y.size), np.full(y.size, 2.0)):
        D = p.dual_objective(alpha)
        v = X.T @ (alpha * y)
        assert D == pytest.approx(-0.5 * v @ v, abs=1e-12)  # the entropy's limit 0
    assert np.isfinite(p.dual_objective(np.r_[0.0, np.full(y.size - 1, 2.0)]))


@pytest.mark.parametrize("bias", BIASES)
def test_weak_duality_holds_at_random_pairs_of_points(bias):
    X, y = overlap(seed=1)
    p = Logistic(X, y, C=5.0, bias=bias)
    rng = np.random.default_rng(1)
    for _ in range(20):
        w = rng.normal(scale=3.0, size=X.shape[1])
        b = 0.0 if bias == "none" else float(rng.normal())
        alpha = rng.uniform(0.0, 5.0, y.size)
        cert = p.certificate(w=w, b=b, alpha=alpha)
        assert cert.gap >= 0.0 and cert.certified
        cert = p.certificate(w=w, b=b)
        assert cert.gap >= 0.0 and cert.certified


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("C", [0.1, 1.0, 1e4])
def test_the_certificate_closes_at_the_cvxpy_optimum(bias, C):
    X, y = overlap(seed=2)
    p = Logistic(X, y, C=C, bias=bias)
    ref = cvxpy_optimum(p)
    cert = p.certificate(w=ref.w, b=ref.b)
    assert cert.certified  # weak duality up to rounding
    assert cert.rel_gap <= 1e-9
    # the dual point of the certificate is the KKT map, strictly inside the box
    alpha = cert.dual_point
    assert np.all(alpha > 0.0) and np.all(alpha < C)
    # from the dual point alone, the gap closes too (w = Σ α_i y_i x_i)
    assert p.certificate(alpha=alpha).rel_gap <= 1e-8


def test_a_point_away_from_the_optimum_has_a_gap_that_bounds_its_suboptimality():
    X, y = overlap(seed=3)
    p = Logistic(X, y, C=1.0)
    ref = cvxpy_optimum(p)
    w = ref.w + 0.1
    cert = p.certificate(w=w, b=ref.b)
    assert cert.primal - ref.primal > 0.0
    assert cert.gap >= cert.primal - ref.primal - 1e-9


@pytest.mark.parametrize("bias", ["free", "regularized"])
def test_the_exact_bias_minimizes_the_primal_in_b(bias):
    X, y = overlap(seed=4)
    p = Logistic(X, y, C=10.0, bias=bias)
    w = np.random.default_rng(4).normal(size=X.shape[1])
    b = p.best_bias(w)
    best = p.primal_objective(w, b)
    for db in (1e-4, -1e-4, 0.1, -0.1):
        assert p.primal_objective(w, b + db) > best
    # its derivative is 0: for a free bias Σ α_i y_i = 0 at the KKT map
    if bias == "free":
        alpha = p.upper_bounds / (1.0 + np.exp(p.margins(w, b)))
        assert abs(alpha @ y) <= 1e-10 * p.upper_bounds.sum()


def test_sparse_and_dense_data_give_the_same_certificate():
    X, y = overlap(seed=5)
    X[X < 0.3] = 0.0
    w = np.linspace(-1, 1, X.shape[1])
    dense = Logistic(X, y, C=2.0).certificate(w=w, b=0.3)
    csr = Logistic(sparse.csr_matrix(X), y, C=2.0).certificate(w=w, b=0.3)
    assert csr.primal == pytest.approx(dense.primal, rel=1e-13)
    assert csr.dual == pytest.approx(dense.dual, rel=1e-12)


def test_to_qp_says_the_logistic_loss_is_not_a_qp():
    X, y = overlap()
    with pytest.raises(NotImplementedError, match="not a QP.*to_cvxpy"):
        Logistic(X, y).to_qp()


def test_the_model_predicts_probabilities_and_survives_its_file(tmp_path):
    X, y = overlap(seed=6)
    p = Logistic(X, y, C=1.0)
    ref = cvxpy_optimum(p)
    model = p.model_from({"w": ref.w, "b": ref.b})
    assert isinstance(model, LogisticModel)
    f = X @ ref.w + ref.b
    proba = model.predict_proba(X)
    assert np.allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-f)), rtol=1e-13)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X), np.where(f >= 0, 1.0, -1.0))
    # no log 0 far from the boundary
    far = model.predict_log_proba(np.full((1, X.shape[1]), 1e3))
    assert np.all(np.isfinite(far)) and far.max() <= 0.0
    path = tmp_path / "logistic.npz"
    save_model(model, path)
    loaded = load_model(path)
    assert isinstance(loaded, LogisticModel)
    assert np.array_equal(loaded.predict_proba(X), proba)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"C": 0.0}, ValueError, "C must be in"),
        ({"C": -1.0}, ValueError, "C must be in"),
        ({"C": float("nan")}, ValueError, "C must be a real number"),
        ({"bias": "both"}, ValueError, "bias must be one of"),
        ({"C": 1e11}, ValueError, "at most 1e"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs, error, match):
    X, y = overlap()
    with pytest.raises(error, match=match):
        Logistic(X, y, **kwargs)


def test_bad_data_is_refused_by_name():
    X, y = overlap()
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X must contain only finite values"):
        Logistic(bad, y)
    with pytest.raises(ValueError, match="y must contain both classes"):
        Logistic(X, np.ones_like(y))
    with pytest.raises(ValueError, match="y must contain only -1 and \\+1"):
        Logistic(X, np.where(y > 0, 1.0, 0.0))
    sw = np.where(y > 0, 1.0, 0.0)
    with pytest.raises(ValueError, match="sample_weight leaves only the class \\+1.*bias='free'"):
        Logistic(X, y, sample_weight=sw)
    Logistic(X, y, sample_weight=sw, bias="none")  # b = 0: a minimizer exists
