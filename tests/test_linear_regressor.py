"""LinearSVMRegressor: LinearSVR's counterpart over the linear ε-SVR, certified; its optimum equals
Clarabel's and scikit-learn's LinearSVR fitted tightly."""

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.svm import LinearSVR
from sklearn.utils.estimator_checks import check_estimator

import svmbench
from svmbench.problems import SVRPrimal
from svmbench.solvers import registry


def _data():
    X, y = make_regression(n_samples=120, n_features=5, noise=5.0, random_state=0)
    return X / X.std(axis=0), y / y.std()


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_equals_the_reference_optimum_and_linearsvr(loss, fit_intercept):
    X, y = _data()
    est = svmbench.LinearSVMRegressor(
        epsilon=0.1, C=1.0, loss=loss, fit_intercept=fit_intercept
    ).fit(X, y)
    assert est.result_.status == "optimal" and est.result_.rel_gap <= 1e-6
    problem = SVRPrimal(
        X, y, C=1.0, epsilon=0.1, loss=loss, bias="regularized" if fit_intercept else "none"
    )
    reference = registry.get("clarabel").solve(problem)
    ours = problem.primal_objective(est.coef_, est.intercept_[0])
    # both within their certified gaps of P*: rel_gap ≤ 1e-6 is relative to max(1, |P|)
    assert abs(ours - reference.primal) <= 1e-6 * max(1.0, abs(ours)) + max(reference.gap, 0.0)
    theirs = LinearSVR(
        epsilon=0.1, C=1.0, loss=loss, fit_intercept=fit_intercept, tol=1e-10, max_iter=200_000,
        dual=True,
    ).fit(X, y)  # fmt: skip
    np.testing.assert_allclose(est.predict(X), theirs.predict(X), atol=1e-3)


def test_refusals_name_the_argument():
    X, y = _data()
    with pytest.raises(ValueError, match="epsilon"):
        svmbench.LinearSVMRegressor(epsilon=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="y"):
        svmbench.LinearSVMRegressor().fit(X, np.r_[np.nan, y[1:]])
    with pytest.raises(ValueError, match="solver"):
        svmbench.LinearSVMRegressor(solver="smo").fit(X, y)


def test_scikit_learn_estimator_checks():
    out = check_estimator(svmbench.LinearSVMRegressor(), on_fail=None)
    failed = {r["check_name"] for r in out if r["status"] == "failed"}
    # the weight checks compare to 1e-9; a certified 1e-6 gap moves predictions more than that
    assert failed <= {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    }, failed
