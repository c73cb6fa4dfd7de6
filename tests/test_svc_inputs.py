"""SVMClassifier takes what SVC takes: callable and precomputed kernels with any number of
classes, ``C=np.inf``, negative sample weights; and gives SVC's attributes in SVC's types
(one-vs-one linear layout, sparse ``coef_`` after a sparse fit, ``n_iter_`` arrays), LinearSVC's
in LinearSVC's (assignable ``coef_``, ``n_iter_`` an int). Fits at tol 1e-8 are compared with
scikit-learn's SVC at tol 1e-10 and with each other."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_iris, make_blobs, make_classification
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import svmbench
from svmbench import SVMClassifier, SVMConvergenceWarning

TOL = 1e-8


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def svc_linear(iris):
    X, y = iris
    return SVC(kernel="linear", tol=1e-10).fit(X, y)


def _same_svc_layout(ours, svc, atol=1e-5):
    np.testing.assert_array_equal(ours.support_, svc.support_)
    np.testing.assert_array_equal(ours.n_support_, svc.n_support_)
    dual = ours.dual_coef_.toarray() if sparse.issparse(ours.dual_coef_) else ours.dual_coef_
    np.testing.assert_allclose(dual, svc.dual_coef_, atol=atol)
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, atol=atol)


def test_one_vs_one_linear_kernel_has_svcs_layout(iris, svc_linear):
    X, y = iris
    ours = SVMClassifier(kernel="linear", multiclass="ovo", tol=TOL).fit(X, y)
    _same_svc_layout(ours, svc_linear)
    np.testing.assert_allclose(ours.coef_, svc_linear.coef_, atol=1e-5)
    assert ours.n_iter_.shape == (3,)
    np.testing.assert_allclose(
        ours.decision_function(X), svc_linear.decision_function(X), atol=1e-5
    )


def test_a_sparse_one_vs_one_fit_gives_sparse_coef_and_dual_coef(iris, svc_linear):
    X, y = iris
    ours = SVMClassifier(kernel="linear", multiclass="ovo", tol=TOL).fit(sparse.csr_matrix(X), y)
    assert sparse.issparse(ours.coef_) and sparse.issparse(ours.dual_coef_)
    np.testing.assert_allclose(ours.coef_.toarray(), svc_linear.coef_, atol=1e-5)


def test_a_binary_svc_fit_on_sparse_data_gives_a_sparse_coef_and_an_n_iter_array():
    X, y = make_classification(n_samples=80, n_features=6, random_state=1)
    ours = SVMClassifier(kernel="linear", tol=TOL).fit(sparse.csr_matrix(X), y)
    svc = SVC(kernel="linear", tol=1e-10).fit(sparse.csr_matrix(X), y)
    assert sparse.issparse(ours.coef_)
    np.testing.assert_allclose(ours.coef_.toarray(), svc.coef_.toarray(), atol=1e-5)
    assert isinstance(ours.n_iter_, np.ndarray) and ours.n_iter_.shape == (1,)
    liblinear_like = SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized")
    liblinear_like.fit(sparse.csr_matrix(X), y)
    assert isinstance(liblinear_like.n_iter_, int)
    assert isinstance(liblinear_like.coef_, np.ndarray)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_callable_and_precomputed_kernels_match_the_named_kernel(n_classes):
    X, y = make_blobs(n_samples=60, centers=n_classes, cluster_std=3.0, random_state=0)
    named = SVMClassifier(kernel="linear", multiclass="ovo", tol=TOL).fit(X, y)
    called = SVMClassifier(kernel=lambda A, B: A @ B.T, tol=TOL).fit(X, y)
    pre = SVMClassifier(kernel="precomputed", tol=TOL).fit(X @ X.T, y)
    svc = SVC(kernel="linear", tol=1e-10).fit(X, y)
    for ours in (named, called, pre):
        _same_svc_layout(ours, svc)
    Xt = X[::3] + 0.5
    np.testing.assert_allclose(called.decision_function(Xt), svc.decision_function(Xt), atol=1e-5)
    np.testing.assert_allclose(
        pre.decision_function(Xt @ X.T), svc.decision_function(Xt), atol=1e-5
    )
    np.testing.assert_array_equal(called.support_vectors_, X[called.support_])
    assert not hasattr(called, "n_features_in_")


def test_a_callable_kernel_sees_the_data_as_given_and_cannot_be_saved(tmp_path):
    words = ["aa", "a", "b", "bb", "ab", "ba", "bbb", "aaa"]
    labels = np.array([0, 0, 1, 1, 0, 1, 1, 0])

    def counts(A, B):
        fa = np.array([[w.count("a"), w.count("b")] for w in A], dtype=float)
        fb = np.array([[w.count("a"), w.count("b")] for w in B], dtype=float)
        return fa @ fb.T

    clf = SVMClassifier(kernel=counts, tol=TOL).fit(words, labels)
    np.testing.assert_array_equal(clf.predict(["aaaa", "bbbb"]), [0, 1])
    with pytest.raises(TypeError, match="callable kernel.*pickle"):
        svmbench.save_model(clf, tmp_path / "m.npz")
    with pytest.raises(ValueError, match="must return a \\(8, 8\\) array"):
        SVMClassifier(kernel=lambda A, B: np.ones((2, 2))).fit(words, labels)
    with pytest.raises(ValueError, match="NaN or infinite"):
        SVMClassifier(kernel=lambda A, B: np.full((len(A), len(B)), np.nan)).fit(words, labels)


def test_sparse_precomputed_kernel_is_a_type_error():
    with pytest.raises(TypeError, match="Sparse precomputed"):
        SVMClassifier(kernel="precomputed").fit(sparse.csr_matrix(np.eye(4)), [0, 1, 0, 1])


def test_infinite_C_is_the_hard_margin():
    X, y = make_blobs(n_samples=40, centers=2, cluster_std=1.0, random_state=3)
    linear = SVMClassifier(kernel="linear", C=np.inf, tol=TOL).fit(X, y)
    assert linear.result_.problem == "hard_margin" and linear.result_.status.value == "optimal"
    svc = SVC(kernel="linear", C=1e8, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(linear.coef_, svc.coef_, rtol=1e-4)
    y_pm = np.where(y == linear.classes_[1], 1.0, -1.0)
    assert np.min(y_pm * linear.decision_function(X)) >= 1 - 1e-6

    rbf = SVMClassifier(C=np.inf, tol=TOL).fit(X, y)
    margins = y_pm * rbf.decision_function(X)
    assert np.min(margins) >= 1 - 1e-5  # every ξ = 0: the hard margin's constraints hold
    np.testing.assert_allclose(np.sort(margins)[: rbf.support_.size], 1.0, atol=1e-5)


def test_infinite_C_on_overlapping_classes_is_a_clear_error():
    X, y = make_blobs(n_samples=40, centers=[[0, 0], [0.5, 0]], cluster_std=1.0, random_state=0)
    with pytest.raises(ValueError, match="hard margin.*infeasible"):
        SVMClassifier(kernel="linear", C=np.inf).fit(X, y)
    X2 = np.vstack([X, X[:1]])  # a point in both classes: no kernel separates it
    y2 = np.append(y, 1 - y[0])
    with pytest.raises(ValueError, match="hard margin"):
        SVMClassifier(kernel="rbf", C=np.inf, gamma=0.5).fit(X2, y2)
    with pytest.raises(ValueError, match="two classes"):
        SVMClassifier(kernel="linear", C=np.inf).fit(*load_iris(return_X_y=True))


def test_negative_weights_drop_their_examples_as_svc_does():
    X, y = make_classification(n_samples=60, n_features=4, random_state=2)
    w = np.ones(60)
    w[:10] = -0.5
    masked = SVMClassifier(kernel="linear", tol=TOL).fit(X, y, sample_weight=w)
    dropped = SVMClassifier(kernel="linear", tol=TOL).fit(X[10:], y[10:])
    np.testing.assert_allclose(masked.coef_, dropped.coef_, atol=1e-6)
    np.testing.assert_array_equal(masked.support_, dropped.support_ + 10)
    with pytest.raises(ValueError, match="all samples have zero or negative weights"):
        SVMClassifier().fit(X, y, sample_weight=np.full(60, -1.0))
    one_class = np.where(y == 0, 1.0, 0.0)
    with pytest.raises(ValueError, match="positive weights belong to the same class"):
        SVMClassifier().fit(X, y, sample_weight=one_class)


def test_liblinear_fits_take_an_assigned_coef_and_svc_fits_refuse_it(iris):
    X, y = iris
    lin = SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized").fit(X, y)
    before = lin.decision_function(X)
    lin.coef_ = 2 * lin.coef_
    lin.intercept_ = 2 * lin.intercept_
    np.testing.assert_allclose(lin.decision_function(X), 2 * before, rtol=1e-12)
    with pytest.raises(ValueError, match="coef_ must have shape"):
        lin.coef_ = np.ones((2, 2))
    svc = SVMClassifier(kernel="linear", multiclass="ovo").fit(X, y)
    with pytest.raises(AttributeError, match="read-only"):
        svc.coef_ = svc.coef_
    with pytest.raises(ValueError, match="read-only"):
        svc.coef_[0, 0] = 1.0


def test_max_iter_warns_in_the_words_of_the_library_replaced():
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    with pytest.warns(SVMConvergenceWarning, match="Solver terminated early \\(max_iter=2\\)"):
        SVMClassifier(kernel="rbf", solver="smo", max_iter=2).fit(X, y)
    with pytest.warns(SVMConvergenceWarning, match="Liblinear failed to converge"):
        SVMClassifier(
            kernel="linear", loss="squared_hinge", bias="regularized", solver="dcd", max_iter=2
        ).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SVMConvergenceWarning)
        SVMClassifier(kernel="rbf").fit(X, y)


def test_a_saved_one_vs_one_classifier_gives_the_estimators_decision_values(iris, tmp_path):
    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    ours = SVMClassifier(kernel="rbf", tol=TOL).fit(X, labels)
    svmbench.save_model(ours, tmp_path / "m.npz")
    loaded = svmbench.load_model(tmp_path / "m.npz")
    np.testing.assert_allclose(loaded.decision_function(X), ours.decision_function(X), atol=1e-12)
    np.testing.assert_array_equal(loaded.predict(X), ours.predict(X))


def test_the_cross_validated_classifier_follows_svc_for_kernels(iris):
    from svmbench import SVMClassifierCV

    X, y = iris
    cv = SVMClassifierCV(Cs=[1.0, 10.0], cv=3, random_state=0).fit(X, y)
    assert cv.n_support_.shape == (3,) and cv.dual_coef_.shape[0] == 2
    np.testing.assert_allclose(cv.intercept_, cv.best_estimator_.intercept_)


@pytest.fixture(scope="module")
def svc_iris_support(iris):
    X, y = iris
    return {k: SVC(kernel=k, gamma=0.25, tol=TOL).fit(X, y).n_support_ for k in ("linear", "rbf")}


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("solver", ["auto", "barrier", "clarabel", "osqp", "smo"])
def test_one_vs_one_support_counts_are_svcs_for_every_exact_solver(
    iris, svc_iris_support, solver, kernel
):
    X, y = iris
    ours = SVMClassifier(kernel=kernel, gamma=0.25, multiclass="ovo", solver=solver, tol=TOL)
    ours.fit(X, y)
    assert all(gap <= TOL for gap in ours.result_.info["binary_rel_gaps"])
    assert np.abs(ours.n_support_ - svc_iris_support[kernel]).sum() <= 2, (
        ours.n_support_,
        svc_iris_support[kernel],
    )
    labels = y[ours.support_]
    assert np.all(np.diff(labels) >= 0)
