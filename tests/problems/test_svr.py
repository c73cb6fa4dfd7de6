"""ε-SVR's kernel dual (problems/svr.py): its certificate at reference optima, its agreement with
scikit-learn's SVR (LIBSVM) and LIBSVM's own binding, its general form, its model file, and its
refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import make_regression
from sklearn.svm import SVR

from svmbench.problems import SVRDual
from svmbench.problems.general_qp import GeneralQP
from svmbench.problems.model_files import load_model, save_model
from svmbench.problems.regression_model import KernelRegressionModel
from svmbench.problems.svr import epsilon_insensitive_bias, project_coefficients
from svmbench.solvers import registry


def _data(n=60, d=4, seed=0):
    X, y = make_regression(n_samples=n, n_features=d, noise=5.0, random_state=seed)
    return X / X.std(), y / y.std()


def _sklearn(problem, **extra):
    """scikit-learn's SVR at tol 1e-10 on the problem's data: (β, b, fitted estimator)."""
    kp = problem.kernel_params
    est = SVR(
        C=problem.C, epsilon=problem.epsilon, kernel=kp["kernel"], gamma=kp["gamma"],
        degree=kp["degree"], coef0=kp["coef0"], tol=1e-10, **extra,
    ).fit(problem.X, problem.y)  # fmt: skip
    beta = np.zeros(problem.n_samples)
    beta[est.support_] = np.asarray(est.dual_coef_.todense() if sparse.issparse(est.dual_coef_)
                                    else est.dual_coef_)[0]  # fmt: skip
    return beta, float(est.intercept_[0]), est


@pytest.fixture(scope="module")
def clarabel():
    return registry.get("clarabel")


# ---- the certificate at the reference optimum ---------------------------------------------------
@pytest.mark.parametrize("bias", ["free", "none", "regularized"])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_the_certificate_closes_at_the_clarabel_optimum(clarabel, kernel, bias):
    X, y = _data()
    problem = SVRDual(X, y, C=2.0, epsilon=0.2, kernel=kernel, bias=bias, coef0=1.0)
    result = clarabel.solve(problem)
    assert result.status.value == "optimal"
    assert result.certified and 0.0 <= result.gap <= 1e-8 * max(1.0, abs(result.primal))
    assert result.alpha.shape == (2 * problem.n_samples,)
    # the general form's minimum is −D at the same point, and its own Lagrangian bound agrees
    form = problem.smo_form()
    assert form.objective(result.alpha) == pytest.approx(-result.dual, rel=1e-9, abs=1e-9)
    general = GeneralQP(form).certificate(alpha=result.alpha)
    assert general.certified and general.rel_gap <= 1e-8
    assert isinstance(result.model, KernelRegressionModel)
    f = problem.decision_function(result.alpha[:60] - result.alpha[60:], result.b)
    assert np.allclose(result.model.predict(X), f, atol=1e-10)


@pytest.mark.parametrize("bias", ["free", "none", "regularized"])
def test_the_exact_finish_leaves_scikit_learns_support_set(clarabel, bias):
    """An interior point has no β_i at 0 or ±C; the finish solves the free ones' KKT equations
    and the problem certifies the result to rounding."""
    X, y = _data(n=60, seed=10)
    problem = SVRDual(X, y, C=2.0, epsilon=0.3, bias=bias)
    result = clarabel.solve(problem)
    report = result.info["exact_finish"]
    assert report["accepted"] and report["rel_gap_after"] <= 1e-10 and result.rel_gap <= 1e-10
    beta = result.alpha[:60] - result.alpha[60:]
    at_bound = np.isclose(np.abs(beta), 2.0, rtol=0, atol=0)
    assert np.count_nonzero(beta) < 60 and at_bound.any()  # exact zeros and exact bounds
    if bias == "free":
        reference, _, est = _sklearn(problem)
        assert np.array_equal(np.flatnonzero(beta), est.support_)
        assert np.max(np.abs(beta - reference)) <= 1e-4
        assert abs(beta.sum()) <= 1e-12


def test_the_three_references_agree(clarabel):
    X, y = _data(n=50, seed=3)
    problem = SVRDual(X, y, C=5.0, epsilon=0.1)
    values = [registry.get(name).solve(problem).primal for name in ("osqp", "cvxpy")]
    reference = clarabel.solve(problem).primal
    assert values == pytest.approx([reference, reference], rel=1e-7)


# ---- scikit-learn's SVR and LIBSVM -----------------------------------------------------------
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_equal_to_scikit_learn_svr(clarabel, kernel):
    """LIBSVM minimizes the dual: its dual value equals the optimum to 1e-6 relative. Its model's
    primal value carries the rounding of its float32 kernel cache (a β off by δ in the dual moves
    the primal by O(√δ)), so it is held to the certified gap of 1e-5 only."""
    X, y = _data(n=80, seed=1)
    problem = SVRDual(X, y, C=3.0, epsilon=0.15, kernel=kernel, coef0=1.0)
    ours = clarabel.solve(problem)
    beta, b, est = _sklearn(problem)
    theirs = problem.certificate(coef=beta, b=b)
    assert abs(theirs.dual - ours.primal) <= 1e-6 * abs(ours.primal)
    assert theirs.certified and theirs.rel_gap <= 1e-5
    X_test, _ = _data(n=40, seed=2)
    assert np.max(np.abs(ours.model.predict(X_test) - est.predict(X_test))) <= 1e-4


@pytest.mark.parametrize("anchor", ["libsvm_svr", "sklearn_svr"])
@pytest.mark.parametrize("kernel", ["rbf", "precomputed"])
def test_the_anchors_are_certified_at_the_reference(clarabel, anchor, kernel):
    X, y = _data(n=70, seed=4)
    data = X @ X.T if kernel == "precomputed" else X
    problem = SVRDual(data, y, C=2.0, epsilon=0.1, kernel=kernel)
    reference = clarabel.solve(problem)
    result = registry.get(anchor, eps=1e-8, tol=1e-5).solve(problem)  # float32 kernel cache
    assert result.status.value == "optimal" and result.certified
    assert abs(result.dual - reference.primal) <= 1e-6 * abs(reference.primal)
    assert abs(result.b - reference.b) <= 1e-4


def test_scikit_learn_svr_takes_weights_and_libsvm_refuses_unequal_ones(clarabel):
    X, y = _data(n=60, seed=5)
    weights = np.r_[np.zeros(5), np.full(25, 0.5), np.full(30, 2.0)]
    problem = SVRDual(X, y, C=2.0, epsilon=0.1, sample_weight=weights)
    reference = clarabel.solve(problem)
    result = registry.get("sklearn_svr", eps=1e-8).solve(problem)
    assert result.certified and abs(result.dual - reference.primal) <= 1e-6 * reference.primal
    assert np.all(result.alpha[:5] == 0.0) and np.all(result.alpha[60:65] == 0.0)
    with pytest.raises(TypeError, match="per-example weights are not supported"):
        registry.get("libsvm_svr").solve(problem)
    with pytest.raises(TypeError, match="bias='none' is not supported"):
        registry.get("sklearn_svr").solve(SVRDual(X, y, bias="none"))


def test_duplicated_points_keep_the_optimum_of_scikit_learn(clarabel):
    X, y = _data(n=40, seed=6)
    X, y = np.vstack([X, X[:15]]), np.r_[y, y[:15]]  # α not unique on the copies
    problem = SVRDual(X, y, C=4.0, epsilon=0.1)
    ours = clarabel.solve(problem)
    beta, b, est = _sklearn(problem)
    assert ours.certified and ours.rel_gap <= 1e-8
    assert abs(problem.certificate(coef=beta, b=b).dual - ours.primal) <= 1e-6 * ours.primal
    assert np.max(np.abs(ours.model.predict(X) - est.predict(X))) <= 1e-4


def test_an_epsilon_above_the_spread_of_the_targets_gives_beta_zero(clarabel):
    X, y = _data(n=40, seed=7)
    epsilon = 0.51 * float(np.ptp(y))  # a constant f = mid-range fits every target in the tube
    problem = SVRDual(X, y, C=10.0, epsilon=epsilon)
    certificate = problem.certificate(coef=np.zeros(40))
    assert certificate.primal == 0.0 and certificate.dual == 0.0 and certificate.certified
    assert abs(certificate.primal_point["b"] - 0.5 * (y.max() + y.min())) <= 0.02 * np.ptp(y)
    result = clarabel.solve(problem)
    assert np.max(np.abs(result.alpha)) <= 1e-7 and abs(result.primal) <= 1e-7
    beta, _, _ = _sklearn(problem)
    assert np.all(beta == 0.0)


def test_a_large_C_matches_scikit_learn(clarabel):
    X, y = _data(n=40, d=3, seed=8)
    problem = SVRDual(X, y, C=1e4, epsilon=0.05)
    ours = clarabel.solve(problem)
    beta, b, _ = _sklearn(problem, max_iter=10**7)
    assert ours.certified and ours.rel_gap <= 1e-6
    assert abs(problem.certificate(coef=beta, b=b).dual - ours.primal) <= 1e-6 * ours.primal


# ---- the pieces --------------------------------------------------------------------------------
def test_the_free_bias_is_the_exact_minimizer_of_the_loss():
    rng = np.random.default_rng(0)
    for _ in range(20):
        r, C = rng.normal(size=15), rng.uniform(0.1, 3.0, size=15)
        epsilon = float(rng.uniform(0.0, 1.0))

        def loss(b, r=r, C=C, epsilon=epsilon):
            return float(C @ np.maximum(0.0, np.abs(r - b) - epsilon))

        # a convex piecewise-linear function is least at one of its breakpoints
        best = min(loss(p) for p in np.r_[r - epsilon, r + epsilon])
        assert loss(epsilon_insensitive_bias(r, C, epsilon)) <= best + 1e-12


def test_the_projection_is_feasible_and_nearest():
    rng = np.random.default_rng(1)
    beta, C = 3.0 * rng.normal(size=30), rng.uniform(0.5, 2.0, size=30)
    p = project_coefficients(beta, C, equality=True)
    assert np.all(np.abs(p) <= C) and abs(p.sum()) <= 1e-9
    for _ in range(200):  # no feasible point of the segment towards another is nearer
        q = project_coefficients(rng.normal(size=30), C, equality=True)
        for t in (1e-3, 1e-1):
            z = (1 - t) * p + t * q
            assert np.linalg.norm(beta - z) >= np.linalg.norm(beta - p) - 1e-9


def test_alpha_and_coef_give_the_same_certificate():
    X, y = _data(n=30)
    problem = SVRDual(X, y, C=1.0, epsilon=0.1)
    beta = np.clip(np.random.default_rng(2).normal(size=30), -1, 1)
    beta -= beta.mean()
    a = problem.certificate(coef=beta)
    b = problem.certificate(alpha=problem.split(beta))
    assert a.primal == b.primal and a.dual == b.dual
    assert problem.variables_from_smo(problem.split(beta), 0.25)["b"] == -0.25


def test_a_regression_model_file_round_trips_dense_and_sparse(clarabel, tmp_path):
    X, y = _data(n=40, seed=9)
    for data in (X, sparse.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))):
        result = clarabel.solve(SVRDual(data, y, C=2.0, epsilon=0.1))
        path = tmp_path / "svr.npz"
        save_model(result.model, path)
        loaded = load_model(path)
        assert isinstance(loaded, KernelRegressionModel)
        assert np.array_equal(loaded.predict(data), result.model.predict(data))


# ---- refusals (tests/BAD_INPUT.md rows 720–726) -------------------------------------------------
@pytest.mark.parametrize(
    "change, error, words",
    [
        ({"y": np.r_[np.nan, np.ones(19)]}, ValueError, "y must contain only finite targets"),
        ({"y": np.r_[np.inf, np.ones(19)]}, ValueError, "y must contain only finite targets"),
        ({"y": np.ones(19)}, ValueError, "y must be a 1-D array of n_samples=20"),
        ({"epsilon": -0.1}, ValueError, r"epsilon must be in \[0.0, inf\)"),
        ({"C": 0.0}, ValueError, r"C must be in \(0.0, inf\)"),
        ({"C": -1.0}, ValueError, r"C must be in \(0.0, inf\)"),
        ({"X": np.empty((0, 3)), "y": np.empty(0)}, ValueError, "X must be non-empty"),
        ({"kernel": "cubic"}, ValueError, "kernel must be one of"),
        ({"C": 1e9, "kernel": "linear", "X": 1e3 * np.ones((20, 3))}, ValueError, "C · max K̃_ii"),
    ],
    ids=["nan in y", "inf in y", "y too short", "epsilon < 0", "C = 0", "C < 0", "empty X",
         "unknown kernel", "C beyond conditioning"],
)  # fmt: skip
def test_bad_input_is_refused_by_name(change, error, words):
    rng = np.random.default_rng(0)
    arguments = {"X": rng.normal(size=(20, 3)), "y": rng.normal(size=20), **change}
    with pytest.raises(error, match=words):
        SVRDual(**arguments)


def test_certificate_arguments_are_checked():
    X, y = _data(n=20)
    problem = SVRDual(X, y)
    with pytest.raises(TypeError, match="exactly one of coef"):
        problem.certificate()
    with pytest.raises(ValueError, match=r"alpha must have shape \(40,\)"):
        problem.certificate(alpha=np.zeros(20))
    with pytest.raises(ValueError, match="coef must contain only finite values"):
        problem.certificate(coef=np.full(20, np.nan))
