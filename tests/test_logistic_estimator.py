"""``SVMClassifier(loss="logistic")``: probabilities from the model, agreement with
scikit-learn's ``LogisticRegression`` (binary, one-vs-rest and multinomial for more classes),
the fitted attributes, the model file, the one ``predict_proba`` rule, and the refusals."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

from svmbench import SVMClassifier, load_model, save_model
from svmbench.probability import has_probabilities
from svmbench.problems.logistic_model import LogisticModel, MultinomialLogisticModel
from svmbench.solvers import Status


def _cancer(n=200):
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:n]
    return X, np.where(y[:n] == 1, "benign", "malignant")


def _sklearn(bias, C, **kwargs):
    if bias == "regularized":
        options = dict(solver="liblinear", intercept_scaling=1.0)
    else:
        options = dict(solver="lbfgs", fit_intercept=bias == "free")
    return LogisticRegression(C=C, tol=1e-12, max_iter=100_000, **options, **kwargs)


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_binary_probabilities_agree_with_scikit_learn(bias):
    X, y = _cancer()
    est = SVMClassifier(kernel="linear", loss="logistic", C=2.0, bias=bias, tol=1e-10).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = _sklearn(bias, 2.0).fit(X, y)
    assert list(est.classes_) == list(sk.classes_)
    assert est.result_.status is Status.OPTIMAL and est.result_.rel_gap <= 1e-10
    assert np.max(np.abs(est.decision_function(X) - sk.decision_function(X))) <= 1e-4
    proba = est.predict_proba(X)
    assert proba.shape == (X.shape[0], 2)
    assert np.max(np.abs(proba - sk.predict_proba(X))) <= 1e-5
    log_proba = est.predict_log_proba(X)
    assert np.allclose(np.exp(log_proba), proba, rtol=1e-13, atol=0.0)
    # log σ(f) from f itself: exact where log(p) of a p near 1 would lose every digit
    f = est.decision_function(X)
    assert np.allclose(log_proba[:, 1], -np.log1p(np.exp(-f)), rtol=1e-12)
    assert np.array_equal(est.predict(X), est.classes_[np.argmax(proba, axis=1)])
    assert est.coef_.shape == (1, X.shape[1]) and est.intercept_.shape == (1,)
    assert isinstance(est.model_, LogisticModel)


def test_weights_multiply_the_loss_as_scikit_learn_s_sample_weight():
    X, y = _cancer()
    sw = np.random.default_rng(0).uniform(0.2, 3.0, y.size)
    est = SVMClassifier(kernel="linear", loss="logistic", C=0.5, tol=1e-10)
    est.fit(X, y, sample_weight=sw)
    sk = _sklearn("free", 0.5).fit(X, y, sample_weight=sw)
    assert np.max(np.abs(est.decision_function(X) - sk.decision_function(X))) <= 1e-4


def test_more_classes_are_one_vs_rest_with_normalized_probabilities():
    X, y = load_iris(return_X_y=True)
    est = SVMClassifier(kernel="linear", loss="logistic", C=1.0, tol=1e-10).fit(X, y)
    sk = OneVsRestClassifier(_sklearn("free", 1.0)).fit(X, y)
    assert est.result_.status is Status.OPTIMAL
    assert len(est.result_.info["binary_rel_gaps"]) == 3
    assert np.max(np.abs(est.decision_function(X) - sk.decision_function(X))) <= 1e-4
    proba = est.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.max(np.abs(proba - sk.predict_proba(X))) <= 1e-5
    assert est.coef_.shape == (3, 4) and est.n_iter_.shape == (3,)
    assert est.score(X, y) > 0.9


def test_predict_proba_exists_for_the_logistic_loss_only():
    assert not hasattr(SVMClassifier(), "predict_proba")
    assert not hasattr(SVMClassifier(loss="squared_hinge"), "predict_log_proba")
    assert hasattr(SVMClassifier(loss="logistic", kernel="linear"), "predict_proba")
    multinomial = SVMClassifier(loss="logistic", kernel="linear", multiclass="multinomial")
    assert hasattr(multinomial, "predict_proba") and hasattr(multinomial, "predict_log_proba")


def test_one_rule_decides_predict_proba_for_every_estimator():
    class WithProbability:
        _parameter_constraints = {"probability": ["boolean"]}  # noqa: RUF012

        def __init__(self, probability):
            self.probability = probability

    class Undeclared:  # an attribute the estimator does not take (an adapter's ignored one)
        probability = True

    assert has_probabilities(WithProbability(True))
    assert not has_probabilities(Undeclared())
    assert not has_probabilities(WithProbability(False))
    assert not has_probabilities(WithProbability(1))  # True itself, not a truthy value
    assert has_probabilities(SVMClassifier(loss="logistic"))
    assert not has_probabilities(SVMClassifier(loss="hinge"))
    # the estimator's methods are guarded by that function, not a copy of it
    for method in ("predict_proba", "predict_log_proba"):
        assert inspect.getattr_static(SVMClassifier, method).check is has_probabilities


@pytest.mark.parametrize("C", [0.1, 10.0])
def test_the_multinomial_loss_agrees_with_scikit_learn_s_multinomial_fit(C):
    """scikit-learn's intercept is unregularized (a free bias, which the multinomial problem
    refuses): the comparison is without intercept, ``bias="none"``."""
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    est = SVMClassifier(
        kernel="linear", loss="logistic", multiclass="multinomial", bias="none", C=C, tol=1e-10
    ).fit(X, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = _sklearn("none", C).fit(X, labels)
    assert est.result_.status is Status.OPTIMAL and est.result_.rel_gap <= 1e-10
    assert isinstance(est.model_, MultinomialLogisticModel)
    assert list(est.classes_) == list(sk.classes_)
    proba = est.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0, rtol=1e-14)
    assert np.max(np.abs(proba - sk.predict_proba(X))) <= 1e-5
    assert np.allclose(np.exp(est.predict_log_proba(X)), proba, rtol=1e-13, atol=0.0)
    assert est.coef_.shape == (3, 4) and est.intercept_.shape == (3,)
    assert np.max(np.abs(est.coef_ - sk.coef_)) <= 1e-4 * max(1.0, np.max(np.abs(sk.coef_)))
    assert np.array_equal(est.predict(X), sk.predict(X))
    assert est.n_iter_.shape == (1,)
    # LinearSVC's assignable coef_ (a fit that is not SVC's): the model keeps its softmax
    est.coef_ = 2.0 * est.coef_
    assert isinstance(est.model_, MultinomialLogisticModel)
    F = X @ est.coef_.T + est.intercept_
    assert np.allclose(est.predict_proba(X).argmax(axis=1), F.argmax(axis=1))
    assert np.allclose(np.log(est.predict_proba(X)), F - np.log(np.exp(F).sum(axis=1))[:, None])


def test_the_multinomial_loss_takes_two_classes_and_a_regularized_bias(tmp_path):
    X, y = _cancer(120)
    est = SVMClassifier(
        kernel="linear", loss="logistic", multiclass="multinomial", bias="regularized", tol=1e-9
    ).fit(X, y)
    assert est.result_.problem == "multinomial_logistic" and est.result_.rel_gap <= 1e-9
    f = est.decision_function(X)
    assert f.shape == (X.shape[0],)  # two classes: f_1 − f_0, positive for classes_[1]
    proba = est.predict_proba(X)
    assert np.allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-f)), rtol=1e-12)
    assert np.array_equal(est.predict(X), est.classes_[(f >= 0).astype(int)])
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert np.array_equal(loaded.predict(X), est.predict(X))
    assert np.array_equal(loaded.model_.predict_proba(X), proba)


def test_every_solver_of_the_problem_fits_the_same_model():
    X, y = _cancer(120)
    fits = {
        solver: SVMClassifier(
            kernel="linear", loss="logistic", bias="none", solver=solver, tol=1e-9
        ).fit(X, y)
        for solver in ("auto", "logistic_dcd", "logistic_newton", "logistic_cvxpy")
    }
    reference = fits["logistic_cvxpy"].decision_function(X)
    # P is 1-strongly convex in w (bias none): ½‖w − w*‖² ≤ P(w) − P* ≤ gap, so the decision
    # values of two certified points differ by at most max‖x_i‖ (√(2 gap) + √(2 gap_ref))
    radius = np.max(np.linalg.norm(X, axis=1))
    ref_part = np.sqrt(2.0 * max(fits["logistic_cvxpy"].result_.gap, 0.0))
    for name, est in fits.items():
        bound = radius * (np.sqrt(2.0 * max(est.result_.gap, 0.0)) + ref_part)
        difference = np.max(np.abs(est.decision_function(X) - reference))
        assert difference <= bound, name
        if name != "logistic_dcd":  # the second-order methods end far inside tol
            assert difference <= 1e-4, name


def test_a_saved_logistic_classifier_predicts_the_same_probabilities(tmp_path):
    X, y = _cancer(100)
    est = SVMClassifier(kernel="linear", loss="logistic").fit(X, y)
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert isinstance(loaded.model_, LogisticModel)
    assert np.array_equal(loaded.predict(X), est.predict(X))
    assert np.array_equal(loaded.model_.predict_proba(X), est.predict_proba(X))


def test_a_warm_refit_starts_from_the_previous_solution():
    X, y = _cancer()
    est = SVMClassifier(kernel="linear", loss="logistic", C=1.0, warm_start=True, tol=1e-9)
    cold = est.fit(X, y).result_.iterations
    est.set_params(C=1.1)
    warm = est.fit(X, y).result_
    assert warm.status is Status.OPTIMAL and warm.iterations <= cold


def test_bad_logistic_settings_are_clear_errors():
    X, y = _cancer(60)
    with pytest.raises(ValueError, match="kernel='linear' only"):
        SVMClassifier(loss="logistic").fit(X, y)
    with pytest.raises(ValueError, match="finite C"):
        SVMClassifier(loss="logistic", kernel="linear", C=np.inf).fit(X, y)
    with pytest.raises(ValueError, match="logistic_dcd.*bias='free'"):
        SVMClassifier(loss="logistic", kernel="linear", solver="logistic_dcd").fit(X, y)
    with pytest.raises(ValueError, match="solver 'dcd' cannot fit loss='logistic'"):
        SVMClassifier(loss="logistic", kernel="linear", solver="dcd", bias="none").fit(X, y)
    Xi, yi = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="one-vs-rest.*or by the multinomial loss"):
        SVMClassifier(loss="logistic", kernel="linear", multiclass="ovo").fit(Xi, yi)
    with pytest.raises(ValueError, match="multiclass='multinomial' takes bias='regularized'"):
        SVMClassifier(loss="logistic", kernel="linear", multiclass="multinomial").fit(Xi, yi)
    with pytest.raises(ValueError, match="multiclass='multinomial'.*needs loss='logistic'"):
        SVMClassifier(kernel="linear", multiclass="multinomial", bias="none").fit(Xi, yi)
    with pytest.raises(ValueError, match="solver 'logistic_newton' cannot fit.*multinomial"):
        SVMClassifier(
            loss="logistic", kernel="linear", multiclass="multinomial", bias="none",
            solver="logistic_newton",
        ).fit(Xi, yi)  # fmt: skip
    with pytest.raises(ValueError, match="at least 2 classes"):
        SVMClassifier(loss="logistic", kernel="linear").fit(X, np.zeros(len(y)))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SVMClassifier(loss="logistic", kernel="linear").fit(bad, y)
    with pytest.raises(ValueError, match="C"):
        SVMClassifier(loss="logistic", kernel="linear", C=0.0).fit(X, y)


def test_scikit_learn_s_estimator_checks_pass_for_the_logistic_loss():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcomes = check_estimator(SVMClassifier(loss="logistic", kernel="linear"), on_fail=None)
    failed = [
        (o["check_name"], str(o["exception"])[:200]) for o in outcomes if o["status"] == "failed"
    ]
    assert len(outcomes) > 40 and failed == []


def test_the_cross_validated_classifier_takes_the_logistic_loss_by_folds_only():
    from svmbench import SVMClassifierCV

    X, y = _cancer(150)
    cv = SVMClassifierCV(loss="logistic", kernel="linear", Cs=[0.1, 10.0], cv=3).fit(X, y)
    assert cv.best_estimator_.result_.status is Status.OPTIMAL
    assert np.allclose(cv.predict_proba(X), cv.best_estimator_.predict_proba(X))
    with pytest.raises(ValueError, match="cv='loo' solves the hinge losses"):
        SVMClassifierCV(loss="logistic", kernel="linear", Cs=[1.0], cv="loo").fit(X, y)
