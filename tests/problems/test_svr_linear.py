"""The linear ε-SVR problem: its objectives from their definitions, weak duality at any pair of
points, a certificate that closes at the Clarabel optimum, the exact bias, the model and its
file, and the refusals of bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import SVRPrimal
from svmbench.problems.linear_regression_model import LinearRegressionModel
from svmbench.problems.model_files import load_model, save_model
from svmbench.solvers import registry

BIASES = ("free", "regularized", "none")
LOSSES = ("epsilon_insensitive", "squared_epsilon_insensitive")


def regression(n=60, d=5, noise=5.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) * 3.0 + 2.0 + noise * rng.normal(size=n)
    return X, y


def clarabel_optimum(problem):
    result = registry.get("clarabel", tol=1e-8).solve(problem)
    assert result.status.value == "optimal", result.message
    return result


def test_primal_and_dual_objectives_follow_their_definitions():
    X, y = regression()
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.0, 2.0, y.size)
    for loss in LOSSES:
        p = SVRPrimal(X, y, C=3.0, epsilon=0.5, loss=loss, bias="regularized", bias_scale=2.0,
                      sample_weight=sw)  # fmt: skip
        w, b = rng.normal(size=X.shape[1]), 0.7
        r = y - X @ w - b
        out = np.maximum(0.0, np.abs(r) - 0.5)
        loss_sum = np.sum(3.0 * sw * (out**2 if loss != "epsilon_insensitive" else out))
        expected = 0.5 * w @ w + 0.5 * (b / 2.0) ** 2 + loss_sum
        assert p.primal_objective(w, b) == pytest.approx(expected, rel=1e-13)
        beta = rng.uniform(-1.0, 1.0, y.size) * 3.0 * sw
        v = X.T @ beta
        D = y @ beta - 0.5 * np.abs(beta).sum() - 0.5 * (v @ v + (2.0 * beta.sum()) ** 2)
        if loss != "epsilon_insensitive":
            D -= np.sum(beta**2 / (4.0 * 3.0 * sw))
        assert p.dual_objective(beta) == pytest.approx(D, rel=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("bias", BIASES)
def test_weak_duality_holds_at_random_pairs_of_points(loss, bias):
    X, y = regression(seed=1)
    p = SVRPrimal(X, y, C=2.0, epsilon=1.0, loss=loss, bias=bias)
    rng = np.random.default_rng(1)
    for _ in range(10):
        w = rng.normal(scale=3.0, size=X.shape[1])
        b = 0.0 if bias == "none" else float(rng.normal())
        beta = rng.uniform(-3.0, 3.0, y.size)  # outside the plain loss's box: projected
        cert = p.certificate(w=w, b=b, beta=beta)
        assert cert.certified and cert.gap >= 0.0
        moved = cert.residuals["dual_infeasibility"] > 0.0
        assert moved == (loss == "epsilon_insensitive" or bias == "free")
        assert p.certificate(w=w, b=b).gap >= 0.0


@pytest.mark.parametrize("C", [0.1, 1.0, 1e4])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("bias", BIASES)
def test_the_certificate_closes_at_the_clarabel_optimum(loss, bias, C):
    X, y = regression(seed=2)
    p = SVRPrimal(X, y, C=C, epsilon=1.0, loss=loss, bias=bias)
    ref = clarabel_optimum(p)
    # from the primal point alone (the dual point built from the residuals) ...
    cert = p.certificate(w=ref.w, b=ref.b)
    assert cert.certified and cert.rel_gap <= 1e-8
    # ... and from the dual point alone (w = Σ β_i x_i, which at C = 1e4 cancels terms 1e3
    # times larger than itself: the interior-point multipliers' own error then shows)
    assert p.certificate(beta=ref.beta).rel_gap <= (1e-8 if C <= 1.0 else 1e-6)
    if bias == "free":
        assert abs(cert.dual_point.sum()) <= 1e-9 * max(1.0, np.abs(cert.dual_point).sum())


def test_the_plain_loss_dual_point_sits_on_the_box_outside_the_tube():
    X, y = regression(seed=3)
    p = SVRPrimal(X, y, C=1.0, epsilon=1.0, bias="none")
    ref = clarabel_optimum(p)
    beta = p.certificate(w=ref.w).dual_point
    r = p.residuals(ref.w)
    outside = np.abs(r) > 1.0 + 1e-6
    inside = np.abs(r) < 1.0 - 1e-6
    assert np.allclose(beta[outside], np.sign(r[outside]), atol=1e-7)
    assert np.allclose(beta[inside], 0.0, atol=1e-7)  # near the edge: the small QP's zeros


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("bias", ["free", "regularized"])
def test_the_exact_bias_minimizes_the_primal_in_b(loss, bias):
    X, y = regression(seed=4)
    p = SVRPrimal(X, y, C=10.0, epsilon=0.5, loss=loss, bias=bias)
    w = np.random.default_rng(4).normal(size=X.shape[1])
    b = p.best_bias(w)
    best = p.primal_objective(w, b)
    for db in (1e-3, -1e-3, 0.5, -0.5):
        assert p.primal_objective(w, b + db) >= best


def test_an_epsilon_above_the_spread_has_the_zero_model_as_optimum():
    X, y = regression(seed=5)
    eps = float(np.max(np.abs(y))) + 1.0
    for bias in BIASES:
        p = SVRPrimal(X, y, C=1.0, epsilon=eps, bias=bias)
        cert = p.certificate(w=np.zeros(X.shape[1]), b=0.0)
        assert cert.primal == 0.0 and abs(cert.dual) <= 1e-9 and cert.certified


def test_duplicated_rows_and_d_greater_than_n_certify_at_the_optimum():
    X, y = regression(n=30, d=5, seed=6)
    X, y = np.vstack([X, X[:10]]), np.r_[y, y[:10]]
    rng = np.random.default_rng(6)
    wide = rng.normal(size=(20, 60))
    for XX, yy in ((X, y), (wide, wide @ rng.normal(size=60))):
        for loss in LOSSES:
            p = SVRPrimal(XX, yy, C=100.0, epsilon=0.1, loss=loss, bias="none")
            ref = clarabel_optimum(p)
            assert p.certificate(w=ref.w).rel_gap <= 1e-8


def test_sparse_and_dense_data_give_the_same_certificate():
    X, y = regression(seed=7)
    X[np.abs(X) < 0.5] = 0.0
    w = np.linspace(-1, 1, X.shape[1])
    for loss in LOSSES:
        dense = SVRPrimal(X, y, loss=loss, bias="regularized").certificate(w=w, b=0.3)
        csr = SVRPrimal(sparse.csr_matrix(X), y, loss=loss, bias="regularized").certificate(
            w=w, b=0.3
        )
        assert csr.primal == pytest.approx(dense.primal, rel=1e-12)
        assert csr.dual == pytest.approx(dense.dual, rel=1e-9, abs=1e-9)


def test_the_model_predicts_real_values_and_survives_its_file(tmp_path):
    X, y = regression(seed=8)
    p = SVRPrimal(X, y, C=1.0, epsilon=0.5)
    ref = clarabel_optimum(p)
    model = p.model_from({"w": ref.w, "b": ref.b})
    assert isinstance(model, LinearRegressionModel)
    expected = X @ ref.w + ref.b
    assert np.allclose(model.predict(X), expected)  # the value, not its sign
    assert np.mean(np.abs(model.predict(X) - y)) < np.mean(np.abs(y - y.mean()))
    path = tmp_path / "svr.npz"
    save_model(model, path)
    loaded = load_model(path)
    assert isinstance(loaded, LinearRegressionModel)
    assert np.array_equal(loaded.predict(X), model.predict(X))


def test_to_qp_has_the_sparsity_of_the_data():
    _, y = regression(n=50, d=4)
    Xs = sparse.random(50, 200, density=0.02, format="csr", random_state=0)
    for loss in LOSSES:
        qp = SVRPrimal(Xs, y, loss=loss).to_qp()
        assert qp.A.nnz <= Xs.nnz + 5 * 50
        assert qp.P.nnz <= 200 + 1 + 4 * 50


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": -0.1}, ValueError, r"epsilon must be in \[0.0, inf\)"),
        ({"epsilon": np.nan}, ValueError, "epsilon must be a real number"),
        ({"epsilon": "0.1"}, TypeError, "epsilon must be a real number"),
        ({"C": 0.0}, ValueError, "C must be in"),
        ({"C": 1e12}, ValueError, "C must be at most"),
        ({"loss": "hinge"}, ValueError, "loss must be one of"),
        ({"bias": "yes"}, ValueError, "bias must be one of"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs, error, match):
    X, y = regression()
    with pytest.raises(error, match=match):
        SVRPrimal(X, y, **kwargs)


@pytest.mark.parametrize(
    ("X", "y", "error", "match"),
    [
        (np.ones((3, 2)), [1.0, np.nan, 2.0], ValueError, r"y must contain only finite values"),
        (np.ones((3, 2)), [1.0, np.inf, 2.0], ValueError, r"y must contain only finite values"),
        (np.ones((3, 2)), [1.0, 2.0], ValueError, "y must have length n_samples=3"),
        (np.ones((3, 2)), ["a", "b", "c"], TypeError, "y must hold real numbers"),
        (np.ones((3, 2)), [[1.0], [2.0], [3.0]], ValueError, "y must be 1-D"),
        (np.empty((0, 2)), [], ValueError, "X must be non-empty"),
        ([[1.0, np.nan]], [1.0], ValueError, "X must contain only finite values"),
    ],
)
def test_bad_data_is_refused_by_name(X, y, error, match):
    with pytest.raises(error, match=match):
        SVRPrimal(X, y)
