"""The multinomial logistic problem: its objectives from their definitions, weak duality at any
pair of points, a certificate that closes at the CVXPY (exponential cone, Clarabel) optimum, the
exact regularized bias, the softmax model and its file, and the refusals of bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import MultinomialLogistic, datasets
from svmbench.problems.logistic_model import MultinomialLogisticModel
from svmbench.problems.model_files import load_model, save_model
from svmbench.solvers import registry

BIASES = ("regularized", "none")


def blobs(n=90, d=4, k=3, seed=0):
    ds = datasets.load(f"blobs:n={n},d={d},k={k},seed={seed}")
    X = ds.X + np.random.default_rng(seed).normal(scale=2.0, size=ds.X.shape)  # overlapping
    return X, ds.y


def cvxpy_optimum(problem):
    result = registry.get("logistic_cvxpy", tol=1e-9).solve(problem)
    assert result.status.value == "optimal", result.message
    return result


def test_primal_and_dual_objectives_follow_their_definitions():
    X, y = blobs()
    n, d = X.shape
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.0, 2.0, n)
    p = MultinomialLogistic(X, y, C=3.0, bias="regularized", bias_scale=2.0, sample_weight=sw)
    k = p.n_classes
    W, b = rng.normal(size=(k, d)), rng.normal(size=k)
    C = 3.0 * sw
    expected = 0.5 * np.sum(W * W) + 0.5 * np.sum((b / 2.0) ** 2)
    for i in range(n):
        f = W @ X[i] + b
        expected += C[i] * (np.log(np.sum(np.exp(f))) - f[y[i]])
    assert p.primal_objective(W, b) == pytest.approx(expected, rel=1e-13)
    beta = rng.dirichlet(np.ones(k), size=n) * C[:, None]
    G = -beta.copy()
    G[np.arange(n), y] += C
    V = G.T @ X
    entropy = 0.0
    for i in range(n):
        for r in range(k):
            if beta[i, r] > 0:
                entropy -= beta[i, r] * np.log(beta[i, r] / C[i])
    expected_D = -0.5 * np.sum(V * V) - 0.5 * 4.0 * np.sum(G.sum(axis=0) ** 2) + entropy
    assert p.dual_objective(beta) == pytest.approx(expected_D, rel=1e-12)


def test_the_entropy_terms_are_finite_at_the_corners_of_the_simplices():
    X, y = blobs()
    p = MultinomialLogistic(X, y, C=2.0)
    n, k = y.size, p.n_classes
    for r in range(k):
        beta = np.zeros((n, k))
        beta[:, r] = 2.0
        G = -beta
        G[np.arange(n), y] += 2.0
        V = G.T @ X
        assert p.dual_objective(beta) == pytest.approx(-0.5 * np.sum(V * V), rel=1e-14)


@pytest.mark.parametrize("bias", BIASES)
def test_weak_duality_holds_at_random_pairs_of_points(bias):
    X, y = blobs(seed=1)
    p = MultinomialLogistic(X, y, C=5.0, bias=bias)
    rng = np.random.default_rng(1)
    k, d = p.n_classes, p.n_features
    for _ in range(20):
        W = rng.normal(scale=3.0, size=(k, d))
        b = None if bias == "none" else rng.normal(size=k)
        beta = rng.uniform(0.0, 5.0, size=(y.size, k))  # projected onto the simplices
        for cert in (p.certificate(W=W, b=b, beta=beta), p.certificate(W=W, b=b)):
            assert cert.gap >= 0.0 and cert.certified


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
def test_the_certificate_closes_at_the_cvxpy_optimum(bias, C):
    X, y = blobs(seed=2)
    p = MultinomialLogistic(X, y, C=C, bias=bias)
    ref = cvxpy_optimum(p)
    cert = p.certificate(W=ref.W, b=ref.b)
    assert cert.certified and cert.rel_gap <= 1e-8
    # the KKT map of the optimum is the dual optimum: rows of C·softmax (entries that underflow
    # to 0 at large C are held by the entropy's limit 0)
    beta = p.dual_from_primal(ref.W, ref.b)
    assert np.all(beta >= 0.0) and np.allclose(beta.sum(axis=1), C, rtol=1e-14)
    # stationarity maps it back to the primal optimum
    W, b = p.primal_from_dual(beta)
    assert np.max(np.abs(W - ref.W)) <= 1e-5 * max(1.0, np.max(np.abs(ref.W)))
    assert np.max(np.abs(b - ref.b)) <= 1e-5 * max(1.0, np.max(np.abs(ref.W)))


def test_the_exact_regularized_bias_minimizes_the_primal_over_b():
    X, y = blobs(seed=3)
    p = MultinomialLogistic(X, y, C=10.0, bias="regularized", bias_scale=0.5)
    W = np.random.default_rng(3).normal(size=(p.n_classes, p.n_features))
    b = p.best_bias(W)
    best = p.primal_objective(W, b)
    rng = np.random.default_rng(4)
    for _ in range(20):
        assert p.primal_objective(W, b + 1e-4 * rng.normal(size=b.size)) >= best
    assert np.array_equal(MultinomialLogistic(X, y, bias="none").best_bias(W), np.zeros(3))


def test_dense_and_csr_data_give_the_same_certificate():
    X, y = blobs(seed=5)
    dense = MultinomialLogistic(X, y, C=2.0, bias="regularized")
    csr = MultinomialLogistic(sparse.csr_matrix(X), y, C=2.0, bias="regularized")
    W = np.random.default_rng(5).normal(size=(3, X.shape[1]))
    a, b = dense.certificate(W=W), csr.certificate(W=W)
    assert a.primal == pytest.approx(b.primal, rel=1e-12)
    assert a.dual == pytest.approx(b.dual, rel=1e-10)


def test_the_model_gives_softmax_probabilities_and_survives_its_file(tmp_path):
    X, y = blobs(seed=6)
    p = MultinomialLogistic(X, y, C=1.0, bias="regularized")
    rng = np.random.default_rng(6)
    W, b = rng.normal(scale=20.0, size=(3, X.shape[1])), rng.normal(size=3)
    model = p.model_from({"W": W, "b": b})
    assert isinstance(model, MultinomialLogisticModel)
    F = X @ W.T + b
    expected = np.exp(F - F.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    proba = model.predict_proba(X)
    assert np.allclose(proba, expected, rtol=1e-12, atol=1e-300)
    assert np.allclose(proba.sum(axis=1), 1.0, rtol=1e-14)
    log_proba = model.predict_log_proba(X)
    assert np.all(np.isfinite(log_proba))  # no log 0 where a probability underflows
    assert np.array_equal(model.predict(X), np.argmax(F, axis=1))
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert isinstance(loaded, MultinomialLogisticModel)
    assert np.array_equal(loaded.predict_proba(X), proba)


def test_to_qp_says_the_multinomial_loss_is_not_a_qp():
    X, y = blobs()
    with pytest.raises(NotImplementedError, match="not a QP.*to_cvxpy"):
        MultinomialLogistic(X, y).to_qp()


def test_bad_parameters_and_data_are_refused_by_name():
    X, y = blobs()
    with pytest.raises(ValueError, match="bias='free' is not supported.*constant"):
        MultinomialLogistic(X, y, bias="free")
    with pytest.raises(ValueError, match="bias must be one of"):
        MultinomialLogistic(X, y, bias="yes")
    with pytest.raises(ValueError, match="C must be"):
        MultinomialLogistic(X, y, C=0.0)
    with pytest.raises(ValueError, match="C must be at most"):
        MultinomialLogistic(X, y, C=1e12)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        MultinomialLogistic(bad, y)
    with pytest.raises(ValueError, match="y"):
        MultinomialLogistic(X, y + 1)  # class 0 missing
    p = MultinomialLogistic(X, y)
    with pytest.raises(ValueError, match="W must have shape"):
        p.primal_objective(np.zeros((2, X.shape[1])))
    with pytest.raises(ValueError, match="beta must have shape"):
        p.dual_objective(np.zeros((y.size, 2)))
    with pytest.raises(ValueError, match="b must be 0 for bias='none'"):
        p.primal_objective(np.zeros((3, X.shape[1])), np.ones(3))
