"""The scikit-learn estimator: scikit-learn's own checks, GridSearchCV against SVC and LinearSVC
on the same folds, labels of any type, weights, warm starts, warnings, pickling."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.utils._test_common.instance_generator import PER_ESTIMATOR_XFAIL_CHECKS
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmbench import SVMClassifier, SVMConvergenceWarning

# ---- scikit-learn's checks -------------------------------------------------------------------
#: Tight enough for the sample-weight equivalence checks (decision values to rtol 1e-7).
TIGHT = 1e-10
ESTIMATORS = [
    SVMClassifier(solver="clarabel", kernel="linear", tol=TIGHT),
    SVMClassifier(solver="osqp", kernel="linear", solver_options={"tol": 1e-9}),
    SVMClassifier(solver="barrier", kernel="linear", tol=TIGHT),
    SVMClassifier(solver="dcd", kernel="linear", bias="regularized", tol=TIGHT),
    SVMClassifier(solver="smo", kernel="rbf", tol=TIGHT),
    SVMClassifier(
        solver="cs_dcd", kernel="linear", bias="regularized", multiclass="crammer_singer", tol=TIGHT
    ),
    SVMClassifier(solver="pegasos", kernel="linear", bias="regularized", random_state=0),
]


def _expected_failures(estimator):
    """Only what scikit-learn itself expects to fail for SVC and LinearSVC, and never the
    sample-weight equivalence for an exact solver (C_i = C · sample_weight_i exactly)."""
    allowed = {**PER_ESTIMATOR_XFAIL_CHECKS[SVC], **PER_ESTIMATOR_XFAIL_CHECKS[LinearSVC]}
    if estimator.solver != "pegasos":  # a stochastic method sees repeated rows more often
        allowed = {k: v for k, v in allowed.items() if "sample_weight_equivalence" not in k}
    return {k: v for k, v in allowed.items() if k != "check_non_transformer_estimators_n_iter"}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_scikit_learn_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SVMConvergenceWarning)
        check(estimator)


# ---- like with like against scikit-learn, on the same folds -----------------------------------
def _data(name):
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    X, y = load_digits(return_X_y=True)
    keep = np.random.default_rng(0).permutation(y.size)[:400]  # a few seconds, not minutes
    return X[keep], y[keep]


FOLDS = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)


def _compare_grids(ours, theirs, grid_ours, grid_theirs, X, y):
    go = GridSearchCV(ours, grid_ours, cv=FOLDS).fit(X, y)
    gt = GridSearchCV(theirs, grid_theirs, cv=FOLDS).fit(X, y)
    sizes = np.array([len(test) for _, test in FOLDS.split(X, y)])
    for i in range(len(go.cv_results_["params"])):
        for fold, size in enumerate(sizes):
            a = go.cv_results_[f"split{fold}_test_score"][i]
            b = gt.cv_results_[f"split{fold}_test_score"][i]
            assert abs(a - b) * size <= 1 + 1e-9, (go.cv_results_["params"][i], fold, a, b)
    return go.best_estimator_, gt.best_estimator_


@pytest.mark.parametrize("name", ["breast_cancer", "digits"])
def test_grid_search_matches_svc(name):
    X, y = _data(name)
    ours = make_pipeline(StandardScaler(), SVMClassifier(multiclass="ovo", bias="free", tol=1e-8))
    theirs = make_pipeline(StandardScaler(), SVC(tol=1e-8))
    grid = {"C": [0.3, 3.0], "gamma": [0.01, 0.05]}
    best_ours, best_theirs = _compare_grids(
        ours,
        theirs,
        {f"svmclassifier__{k}": v for k, v in grid.items()},
        {f"svc__{k}": v for k, v in grid.items()},
        X,
        y,
    )
    assert np.mean(best_ours.predict(X) == best_theirs.predict(X)) >= 0.99
    if name == "breast_cancer":  # binary: the same decision function
        np.testing.assert_allclose(
            best_ours.decision_function(X), best_theirs.decision_function(X), atol=1e-3
        )


@pytest.mark.parametrize("name", ["breast_cancer", "digits"])
def test_grid_search_matches_linear_svc(name):
    X, y = _data(name)
    ours = make_pipeline(
        StandardScaler(),
        SVMClassifier(
            kernel="linear", loss="squared_hinge", bias="regularized", multiclass="ovr", tol=1e-9
        ),
    )
    theirs = make_pipeline(StandardScaler(), LinearSVC(tol=1e-9, max_iter=200_000))
    best_ours, best_theirs = _compare_grids(
        ours, theirs, {"svmclassifier__C": [0.01, 1.0]}, {"linearsvc__C": [0.01, 1.0]}, X, y
    )
    assert np.mean(best_ours.predict(X) == best_theirs.predict(X)) >= 0.99
    np.testing.assert_allclose(
        best_ours.decision_function(X), best_theirs.decision_function(X), atol=1e-3
    )


# ---- labels, weights, warm starts, warnings ---------------------------------------------------
X_BC, Y_BC = load_breast_cancer(return_X_y=True)
X_BC = StandardScaler().fit_transform(X_BC)[:200]
Y_BC = Y_BC[:200]


@pytest.mark.parametrize(
    "labels",
    [
        np.array(["malignant", "benign"]),
        np.array([1, 2]),
        np.array([-7, 3]),
        np.array([True, False]),
    ],
    ids=["strings", "one-two", "negative", "bools"],
)
def test_labels_of_any_type(labels):
    y = labels[Y_BC]
    model = SVMClassifier(kernel="linear", bias="regularized").fit(X_BC, y)
    assert set(model.classes_) == set(labels)
    assert model.predict(X_BC).dtype == y.dtype
    assert model.score(X_BC, y) >= 0.95
    # the positive class of decision_function is classes_[1], as in scikit-learn
    pos = model.decision_function(X_BC) > 0
    assert np.all(model.predict(X_BC)[pos] == model.classes_[1])


def test_class_weight_balanced_is_the_same_as_explicit_weights():
    from sklearn.utils.class_weight import compute_sample_weight

    y = Y_BC
    balanced = SVMClassifier(kernel="linear", solver="clarabel", class_weight="balanced")
    explicit = SVMClassifier(kernel="linear", solver="clarabel")
    balanced.fit(X_BC, y)
    explicit.fit(X_BC, y, sample_weight=compute_sample_weight("balanced", y))
    np.testing.assert_allclose(balanced.coef_, explicit.coef_, rtol=1e-6, atol=1e-8)
    unweighted = SVMClassifier(kernel="linear", solver="clarabel").fit(X_BC, y)
    assert not np.allclose(balanced.coef_, unweighted.coef_, rtol=1e-3)


def test_warm_start_refits_from_the_previous_solution():
    # dcd starts from α (auto picks the barrier here, which starts itself and says so)
    common = dict(kernel="linear", bias="regularized", tol=1e-8, random_state=0, solver="dcd")
    model = SVMClassifier(warm_start=True, **common)
    cold = model.fit(X_BC, Y_BC).result_
    model.set_params(C=1.05)
    warm = model.fit(X_BC, Y_BC).result_
    again = SVMClassifier(C=1.05, **common).fit(X_BC, Y_BC)
    assert warm.status.value == "optimal" and cold.status.value == "optimal"
    assert abs(warm.primal - again.result_.primal) <= 1e-7 * abs(again.result_.primal)
    assert warm.iterations < again.result_.iterations


def test_a_convergence_warning_on_max_iter_only():
    with pytest.warns(SVMConvergenceWarning, match="max_iter"):
        SVMClassifier(kernel="linear", bias="regularized", max_iter=1, tol=1e-12).fit(X_BC, Y_BC)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SVMConvergenceWarning)
        SVMClassifier(kernel="linear", bias="regularized").fit(X_BC, Y_BC)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"solver": "nosuch"}, "unknown solver 'nosuch'"),
        ({"kernel": "cubic"}, "kernel"),
        ({"C": -1.0}, "C"),
        ({"solver": "dcd", "kernel": "linear", "bias": "free"}, "'dcd' cannot fit"),
        (
            {"solver": "smo", "kernel": "linear", "multiclass": "crammer_singer", "bias": "none"},
            "Crammer",
        ),
    ],
)
def test_bad_parameters_are_clear_errors(params, match):
    X, y = load_digits(n_class=3, return_X_y=True)
    with pytest.raises(ValueError, match=match):
        SVMClassifier(**params).fit(X[:90], y[:90])


def test_predict_refuses_the_wrong_number_of_features():
    model = SVMClassifier(kernel="linear", bias="regularized").fit(X_BC, Y_BC)
    with pytest.raises(ValueError, match="features"):
        model.predict(X_BC[:, :5])


def test_pickle_round_trip_and_probabilities():
    model = SVMClassifier().fit(X_BC, Y_BC)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict(X_BC), model.predict(X_BC))
    calibrated = CalibratedClassifierCV(SVMClassifier(), cv=3).fit(X_BC, Y_BC)
    proba = calibrated.predict_proba(X_BC)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(proba.argmax(axis=1) == Y_BC) >= 0.95


def test_cross_val_score_and_the_certified_result():
    scores = cross_val_score(SVMClassifier(kernel="rbf"), X_BC, Y_BC, cv=3)
    assert scores.mean() >= 0.9
    model = SVMClassifier(kernel="rbf").fit(X_BC, Y_BC)
    assert model.result_.certified and model.result_.rel_gap <= 1e-6
    assert model.support_vectors_.shape[0] == model.support_.size == model.dual_coef_.shape[1]
    assert model.n_support_.sum() == model.support_.size


@pytest.mark.parametrize("solver", ["barrier", "smo"])
def test_support_layout_is_svcs(solver):
    """Support vectors grouped by class in ``classes_`` order and counted by their labels, as
    SVC lays them out; labels of any type."""
    X = StandardScaler().fit_transform(X_BC)
    labels = np.where(Y_BC == 1, "benign", "malignant")  # classes_[0] is the positive class of y
    model = SVMClassifier(kernel="rbf", solver=solver, tol=1e-8).fit(X, labels)
    reference = SVC(kernel="rbf", tol=1e-8).fit(X, labels)
    np.testing.assert_array_equal(model.classes_, reference.classes_)
    sv_labels = labels[model.support_]
    index = np.searchsorted(model.classes_, sv_labels)
    assert np.all(np.diff(index) >= 0)
    np.testing.assert_array_equal(model.n_support_, np.bincount(index, minlength=2))
    assert np.abs(model.n_support_ - reference.n_support_).sum() <= 2
    # dual_coef_ in the same order: α_i y_i, negative for classes_[0]
    np.testing.assert_array_equal(model.dual_coef_[0] < 0, index == 0)
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])
