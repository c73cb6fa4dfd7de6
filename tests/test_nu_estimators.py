"""NuSVMClassifier, NuSVMRegressor and OneClassSVM against scikit-learn's NuSVC, NuSVR and
OneClassSVM (their LIBSVM at tol 1e-10): the same fitted attributes and decision values, the
same objective; scikit-learn's estimator checks; the bad input refused."""

import warnings

import numpy as np
import pytest
from sklearn import svm
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import check_estimator

import svmbench
from svmbench.problems import NuSVCDual
from svmbench.problems.model_files import load_model, save_model

TOL = 1e-9


def _by_row(estimator):
    """``dual_coef_`` summed over identical support vectors (iris repeats rows, whose α may be
    split between them in any way), keyed by the row."""
    out = {}
    for row, c in zip(map(tuple, estimator.support_vectors_), estimator.dual_coef_[0]):
        out[row] = out.get(row, 0.0) + c
    return out


def _iris():
    X, y = load_iris(return_X_y=True)
    return X, y


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_classifier_binary_as_nusvc(kernel):
    X, y = _iris()
    X, y = X[y > 0], y[y > 0]  # versicolor against virginica: overlapping
    ours = svmbench.NuSVMClassifier(nu=0.37, kernel=kernel, gamma=0.5, tol=TOL).fit(X, y)
    theirs = svm.NuSVC(nu=0.37, kernel=kernel, gamma=0.5, tol=1e-10).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
    if kernel == "linear":  # w is unique, α is not (more margin points than d + 1)
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4)
    else:
        ours_by_row, theirs_by_row = _by_row(ours), _by_row(theirs)
        assert set(ours_by_row) == set(theirs_by_row)
        for row, c in theirs_by_row.items():
            assert ours_by_row[row] == pytest.approx(c, abs=1e-4)
    assert ours.fit_status_ == 0 and ours.result_.rel_gap <= TOL


def test_classifier_one_vs_one_as_nusvc():
    X, y = _iris()
    ours = svmbench.NuSVMClassifier(nu=0.3, gamma=0.5, tol=TOL).fit(X, y)
    theirs = svm.NuSVC(nu=0.3, gamma=0.5, tol=1e-10).fit(X, y)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
    for shape in ("ovo", "ovr"):
        ours.set_params(decision_function_shape=shape)
        theirs.set_params(decision_function_shape=shape)
        np.testing.assert_allclose(
            ours.decision_function(X), theirs.decision_function(X), atol=1e-4
        )
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    assert ours.n_iter_.shape == (3,)
    # the objective of each pair: the certificate's dual value is the reference optimum
    assert all(r.certified and r.rel_gap <= TOL for r in ours.results_)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_regressor_as_nusvr(kernel):
    X, _ = _iris()
    target, features = X[:, 0], X[:, 1:]
    ours = svmbench.NuSVMRegressor(nu=0.33, C=2.0, kernel=kernel, gamma=0.5, tol=TOL)
    ours.fit(features, target)
    theirs = svm.NuSVR(nu=0.33, C=2.0, kernel=kernel, gamma=0.5, tol=1e-10).fit(features, target)
    np.testing.assert_allclose(ours.predict(features), theirs.predict(features), atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
    if kernel == "linear":
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4)
    assert ours.score(features, target) == pytest.approx(theirs.score(features, target), abs=1e-6)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_one_class_as_scikit_learn(kernel):
    X, _ = _iris()
    ours = svmbench.OneClassSVM(nu=0.23, kernel=kernel, gamma=0.5, tol=TOL).fit(X)
    theirs = svm.OneClassSVM(nu=0.23, kernel=kernel, gamma=0.5, tol=1e-10).fit(X)
    f = theirs.decision_function(X)
    np.testing.assert_allclose(ours.decision_function(X), f, atol=1e-4)
    np.testing.assert_allclose(ours.score_samples(X), theirs.score_samples(X), atol=1e-4)
    assert ours.offset_ == pytest.approx(theirs.offset_[0] if np.ndim(theirs.offset_) else
                                         theirs.offset_, abs=1e-4)  # fmt: skip
    clear = np.abs(f) > 1e-6  # points on the boundary (f = 0 at the optimum) are ties
    np.testing.assert_array_equal(ours.predict(X)[clear], theirs.predict(X)[clear])
    assert set(np.unique(ours.predict(X))) <= {-1, 1}


def test_one_class_finds_the_outliers_of_the_outlier_spec():
    from sklearn.svm import OneClassSVM as Theirs

    from svmbench.problems.datasets import load

    data = load("outliers:n=200,d=2,fraction=0.1,seed=0")
    est = svmbench.OneClassSVM(nu=0.15, gamma=0.5).fit(data.X)
    f = est.decision_function(data.X)
    theirs = Theirs(nu=0.15, gamma=0.5, tol=1e-10).fit(data.X).decision_function(data.X)
    # the same side of the boundary as LIBSVM's exact fit, away from it (f = 0 there: ties)
    clear = np.abs(theirs) > 1e-5
    np.testing.assert_array_equal(f[clear] <= 0, theirs[clear] <= 0)
    # support vectors on the boundary count as flagged, whatever a solver's rounding
    flagged = f <= 1e-6
    # most of the uniform outliers fall outside, most of the bulk inside (14 of the 20 outliers
    # at the exact optimum)
    assert np.mean(flagged[data.y == -1]) >= 0.7
    assert np.mean(flagged[data.y == 1]) < 0.2


def test_models_saved_and_read_back(tmp_path):
    X, y = _iris()
    for est in (
        svmbench.NuSVMClassifier(nu=0.3).fit(X, y),
        svmbench.OneClassSVM(nu=0.2).fit(X),
        svmbench.NuSVMRegressor(nu=0.3).fit(X[:, 1:], X[:, 0]),
    ):
        path = tmp_path / f"{type(est).__name__}.npz"
        save_model(est.model_, path)
        loaded = load_model(path)
        features = X[:, 1:] if isinstance(est, svmbench.NuSVMRegressor) else X
        np.testing.assert_array_equal(
            loaded.decision_function(features), est.model_.decision_function(features)
        )


def test_auto_takes_a_solver_that_accepts_the_problem():
    from svmbench.nu_estimators import choose_solver
    from svmbench.solvers import registry

    X, y = _iris()
    problem = NuSVCDual(X[y > 0], np.where(y[y > 0] == 1, 1.0, -1.0), nu=0.3)
    name = choose_solver("auto", problem)
    assert registry.solver_class(name).unsupported_reason(problem) is None
    with pytest.raises(ValueError, match="solver 'dcd' cannot fit"):
        choose_solver("dcd", problem)


# ---- bad input (tests/BAD_INPUT.md rows 760–769) -----------------------------------------------


def test_classifier_infeasible_nu():
    X, y = _iris()
    keep = np.r_[np.arange(0, 10), np.arange(50, 100)]  # 10 against 50
    with pytest.raises(ValueError, match=r"infeasible.*\(0, 0\.333333\]"):
        svmbench.NuSVMClassifier(nu=0.5).fit(X[keep], y[keep])


@pytest.mark.parametrize(
    "make", [svmbench.NuSVMClassifier, svmbench.NuSVMRegressor, svmbench.OneClassSVM]
)
@pytest.mark.parametrize("nu", [0.0, 1.2])
def test_nu_outside_zero_one(make, nu):
    X, y = _iris()
    with pytest.raises(ValueError, match="'nu' parameter"):
        make(nu=nu).fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_regressor_non_finite_target(bad):
    X, _ = _iris()
    target = X[:, 0].copy()
    target[5] = bad
    with pytest.raises(ValueError, match="(?i)nan|inf"):
        svmbench.NuSVMRegressor().fit(X[:, 1:], target)


@pytest.mark.parametrize(
    "make", [svmbench.NuSVMClassifier, svmbench.NuSVMRegressor, svmbench.OneClassSVM]
)
def test_empty_training_set(make):
    with pytest.raises(ValueError, match="0 sample"):
        make().fit(np.empty((0, 3)), np.empty(0))


@pytest.mark.parametrize(
    "make", [svmbench.NuSVMClassifier, svmbench.NuSVMRegressor, svmbench.OneClassSVM]
)
def test_unfitted(make):
    with pytest.raises(NotFittedError):
        make().predict(np.ones((2, 3)))


# ---- scikit-learn's estimator checks ----------------------------------------------------------

#: The checks that fail, each with its reason (scikit-learn marks the same ones for NuSVC).
EXPECTED_FAILURES = {
    "NuSVMClassifier": {
        # their toy data (3 of one class in 13) make ν = 0.5 infeasible, as for NuSVC
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
        # its class weights leave one class too light for ν = 0.5 (infeasible); scikit-learn
        # marks it for NuSVC too, which ignores class_weight
        "check_class_weight_classifiers",
    },
    "NuSVMRegressor": {
        # predictions agree to the certified tol (1e-6), not to the check's atol of 1e-9
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    },
    "OneClassSVM": {
        # the same: the generalized SMO stops at the certified tol (1e-6), not at 1e-9
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    },
}


@pytest.mark.parametrize(
    "make", [svmbench.NuSVMClassifier, svmbench.NuSVMRegressor, svmbench.OneClassSVM]
)
def test_scikit_learn_estimator_checks(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = check_estimator(make(), on_fail=None)
    failed = {r["check_name"] for r in out if r["status"] == "failed"}
    assert failed <= EXPECTED_FAILURES[make.__name__]


def test_weighted_starts_stay_in_the_box():
    """LIBSVM's greedy start on weights whose partial sums round up (0.1 + 0.1 + 0.1 ...): each α
    within its bound, so the generalized SMO accepts it (scikit-learn's sided-weight test)."""
    from svmbench.problems.kernel_family import greedy_start

    upper = np.full(10, 0.1)
    start = greedy_start(upper, 0.7)
    assert np.all(start >= 0) and np.all(start <= upper)
    assert start.sum() == pytest.approx(0.7, rel=1e-12)
    X = [[-2, 0], [-1, -1], [0, -2], [0, 2], [1, 1], [2, 0]]
    y = [1, 1, 1, 2, 2, 2]
    est = svmbench.NuSVMClassifier(kernel="linear")
    est.fit(X, y, sample_weight=[1.0, 0.1, 10.0, 10.0, 0.1, 0.1])
    assert est.decision_function([[-1.0, 1.0]])[0] > 0


def test_all_zero_weights_say_libsvms_words():
    X = np.random.default_rng(0).normal(size=(10, 2))
    for est in (svmbench.NuSVMRegressor(), svmbench.OneClassSVM()):
        with pytest.raises(ValueError, match="all samples have zero or negative weights"):
            args = (X, X[:, 0]) if isinstance(est, svmbench.NuSVMRegressor) else (X, None)
            est.fit(*args, sample_weight=np.zeros(10))


def test_linear_coef_is_read_only_as_scikit_learns():
    X, _ = _iris()
    fitted = [
        svmbench.NuSVMRegressor(kernel="linear").fit(X, X[:, 0]),
        svmbench.OneClassSVM(kernel="linear").fit(X + 5.0),
        svmbench.SVMRegressor(kernel="linear").fit(X, X[:, 0]),
    ]
    for est in fitted:
        with pytest.raises(AttributeError):
            est.coef_ = np.arange(3)
        with pytest.raises(ValueError):
            est.coef_[0, 0] = 0.0


def test_one_class_predict_sends_a_zero_decision_to_the_inliers(monkeypatch):
    """scikit-learn's contract: ``predict`` is +1 exactly where ``decision_function ≥ 0``. A
    support vector that alone sets ρ has a decision of 0 exactly on one CPU and ±1e-17 on
    another; the tie must not follow the rounding of the machine (LIBSVM sends it to −1)."""
    X = np.random.default_rng(0).normal(size=(40, 2))
    clf = svmbench.OneClassSVM(nu=0.3).fit(X)
    monkeypatch.setattr(clf, "decision_function", lambda X: np.array([0.0, -1e-17, 1e-17, -0.0]))
    np.testing.assert_array_equal(clf.predict(X[:4]), [1, -1, 1, 1])
