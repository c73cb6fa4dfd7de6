"""svmbench.SVMRegressor against scikit-learn's SVR: the same fit, attributes and scores, its
weights, its model file, scikit-learn's estimator checks and its refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import make_friedman1
from sklearn.svm import SVR
from sklearn.utils.estimator_checks import parametrize_with_checks

import svmbench
from svmbench import SVMConvergenceWarning, SVMRegressor
from svmbench.problems.regression_model import KernelRegressionModel


def _data(n=80, seed=0):
    X, y = make_friedman1(n_samples=n, n_features=5, noise=0.5, random_state=seed)
    return X, (y - y.mean()) / y.std()


ESTIMATORS = [
    SVMRegressor(solver="clarabel", tol=1e-10),
    SVMRegressor(solver="sklearn_svr", tol=1e-5, solver_options={"eps": 1e-10}),
]


@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_checks(estimator, check):
    """Every check passes, the sample-weight equivalence too (which scikit-learn expects SVR
    itself to fail: C_i = C · sample_weight_i is exact here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SVMConvergenceWarning)
        check(estimator)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_the_fit_is_scikit_learns(kernel):
    """γ = 0.5 keeps the polynomial kernel's entries small: at γ = "scale" (K_ii up to 883)
    LIBSVM's float32 kernel cache leaves it a certified gap of 3.5e-4, and its decision values
    3e-4 from the optimum's."""
    X, y = _data()
    X_test, y_test = _data(n=40, seed=1)
    params = dict(kernel=kernel, C=3.0, epsilon=0.1, coef0=1.0, gamma=0.5 if kernel == "poly"
                  else "scale")  # fmt: skip
    ours = SVMRegressor(**params, solver="clarabel", tol=1e-9)
    theirs = SVR(**params, tol=1e-10)
    ours.fit(X, y)
    theirs.fit(X, y)
    assert np.max(np.abs(ours.predict(X_test) - theirs.predict(X_test))) <= 1e-4
    assert ours.score(X_test, y_test) == pytest.approx(theirs.score(X_test, y_test), abs=1e-5)
    assert ours.intercept_ == pytest.approx(theirs.intercept_, abs=1e-4)
    # the exact finish leaves the interior point's support set, coefficients and all: SVR's
    assert np.array_equal(ours.support_, theirs.support_)
    if kernel == "rbf":  # K full rank: β is unique (not so for the low-rank linear and poly K)
        assert np.allclose(ours.dual_coef_, theirs.dual_coef_, atol=1e-4)
    assert ours.result_.certified and ours.fit_status_ == 0
    assert ours.dual_coef_.shape == (1, ours.support_.size) == (1, ours.n_support_[0])
    assert ours.support_vectors_.shape == (ours.support_.size, 5)
    assert ours.shape_fit_ == X.shape and isinstance(ours.n_iter_, int)
    if kernel == "linear":
        assert np.allclose(ours.coef_, theirs.coef_, atol=1e-4)
    else:
        with pytest.raises(AttributeError, match="linear kernel"):
            ours.coef_  # noqa: B018


def test_the_anchor_gives_scikit_learns_support_vectors():
    X, y = _data()
    ours = SVMRegressor(C=2.0, solver="sklearn_svr", tol=1e-5).fit(X, y)
    theirs = SVR(C=2.0).fit(X, y)
    assert np.array_equal(ours.support_, theirs.support_)
    assert np.allclose(ours.dual_coef_, theirs.dual_coef_, atol=1e-12)


def test_a_sparse_fit_keeps_scikit_learns_sparse_attributes():
    X, y = _data(n=50)
    Xs = sparse.csr_matrix(np.where(X > 0.5, X, 0.0))
    ours = SVMRegressor(kernel="linear", solver="clarabel", tol=1e-9).fit(Xs, y)
    theirs = SVR(kernel="linear", tol=1e-10).fit(Xs, y)
    assert sparse.issparse(ours.dual_coef_) and sparse.issparse(ours.coef_)
    assert np.allclose(ours.coef_.toarray(), theirs.coef_.toarray(), atol=1e-4)
    assert np.max(np.abs(ours.predict(Xs) - theirs.predict(Xs))) <= 1e-4


def test_integer_weights_are_repeated_rows():
    X, y = _data(n=40)
    weights = np.r_[np.full(20, 2), np.ones(20)]
    weighted = SVMRegressor(C=2.0, solver="clarabel", tol=1e-10).fit(X, y, sample_weight=weights)
    rows = np.r_[np.arange(40), np.arange(20)]
    repeated = SVMRegressor(C=2.0, solver="clarabel", tol=1e-10).fit(X[rows], y[rows])
    assert weighted.result_.primal == pytest.approx(repeated.result_.primal, rel=1e-7)
    assert np.max(np.abs(weighted.predict(X) - repeated.predict(X))) <= 1e-5


def test_auto_picks_a_solver_that_takes_the_problem():
    X, y = _data(n=40)
    fitted = SVMRegressor().fit(X, y)
    assert fitted.result_.solver in ("auto", "smo", "barrier", "clarabel")
    assert fitted.result_.status.value == "optimal"


def test_a_single_feature_fit_whose_finish_has_no_free_coefficient():
    """scikit-learn's test_n_support data: every β at a bound after the finish."""
    X = np.array([[0.0], [0.44], [0.45], [0.46], [1.0]])
    fitted = SVMRegressor(solver="clarabel").fit(X, np.arange(5.0))
    theirs = SVR().fit(X, np.arange(5.0))
    assert fitted.n_support_[0] == fitted.support_vectors_.shape[0] and fitted.n_support_.size == 1
    assert np.array_equal(fitted.support_, theirs.support_)
    assert np.max(np.abs(fitted.predict(X) - theirs.predict(X))) <= 1e-4


def test_a_fitted_regressor_saves_its_model(tmp_path):
    X, y = _data(n=40)
    fitted = SVMRegressor(solver="clarabel").fit(X, y)
    svmbench.save_model(fitted, tmp_path / "svr.npz")
    loaded = svmbench.load_model(tmp_path / "svr.npz")
    assert isinstance(loaded, KernelRegressionModel)
    assert np.array_equal(loaded.predict(X), fitted.predict(X))


# ---- refusals (tests/BAD_INPUT.md rows 727–730) -------------------------------------------------
@pytest.mark.parametrize(
    "target", [np.nan, np.inf], ids=["nan in y", "inf in y"]
)  # fmt: skip
def test_a_target_that_is_not_finite_is_refused(target):
    X, y = _data(n=20)
    y[3] = target
    with pytest.raises(ValueError, match="Input y contains (NaN|infinity)"):
        SVMRegressor().fit(X, y)


@pytest.mark.parametrize(
    "params, words",
    [({"epsilon": -0.5}, "'epsilon' parameter"), ({"C": 0.0}, "'C' parameter")],
    ids=["epsilon < 0", "C = 0"],
)
def test_bad_parameters_are_refused_by_name(params, words):
    X, y = _data(n=20)
    with pytest.raises(ValueError, match=words):
        SVMRegressor(**params).fit(X, y)


def test_a_solver_that_does_not_take_the_problem_is_refused():
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="solver 'dcd' cannot fit this regressor"):
        SVMRegressor(solver="dcd").fit(X, y)
    with pytest.raises(ValueError, match="solver 'libsvm_svr' cannot fit .*bias='none'"):
        SVMRegressor(solver="libsvm_svr", bias="none").fit(X, y)
    with pytest.raises(ValueError, match="all samples have zero or negative weights"):
        SVMRegressor().fit(X, y, sample_weight=np.zeros(20))
    with pytest.raises(ValueError, match="all samples have zero or negative weights"):
        SVMRegressor().fit(X, y, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="0 sample"):
        SVMRegressor().fit(np.empty((0, 3)), np.empty(0))
