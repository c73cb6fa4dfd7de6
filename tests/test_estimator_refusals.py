"""The estimator never answers another question than the one asked: what it cannot solve as
asked it refuses by name, and a time limit ends in a warning and a model (issue 26)."""

from __future__ import annotations

import pytest
from sklearn.datasets import load_iris

from svmbench import SVMClassifier, SVMConvergenceWarning
from svmbench.solvers import registry


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def test_a_kernel_crammer_singer_is_refused_not_fitted_linear(iris):
    with pytest.raises(ValueError, match="crammer_singer.*linear kernel only.*rbf"):
        SVMClassifier(kernel="rbf", multiclass="crammer_singer", bias="regularized").fit(*iris)


def test_a_reduction_asked_for_crammer_singer_is_refused(iris):
    with pytest.raises(ValueError, match="'ovr' is a reduction.*not a Crammer–Singer solver"):
        SVMClassifier(
            kernel="linear", multiclass="crammer_singer", solver="ovr", bias="regularized"
        ).fit(*iris)


def test_an_option_the_solver_does_not_take_is_refused_by_name(iris):
    X, y = iris
    if "libsvm" not in registry.available_anchors():
        pytest.skip(registry.missing_reason("libsvm"))
    with pytest.raises(ValueError, match="max_iter=100: solver 'libsvm' takes no max_iter"):
        SVMClassifier(solver="libsvm", max_iter=100).fit(X[:100], y[:100])
    clf = SVMClassifier(solver="libsvm").fit(X, y)  # three classes through the reduction
    assert clf.score(X, y) > 0.9 and clf.n_support_.shape == (3,)


def test_an_accepted_option_is_known_through_the_bases():
    assert registry.accepts_option(registry.solver_class("smo"), "max_iter")
    assert registry.accepts_option(registry.solver_class("ovo"), "time_limit")


def test_a_time_limit_in_a_reduction_warns_and_keeps_a_model(iris):
    X, y = iris
    with pytest.warns(SVMConvergenceWarning, match="time_limit.*binary problems never ran"):
        clf = SVMClassifier(time_limit=1e-9).fit(X, y)
    assert clf.result_.status.value == "time_limit"
    unsolved = clf.result_.info["unsolved_pairs"]
    assert len(unsolved) == 2  # the first pair runs, then the limit is checked
    assert set(clf.predict(X)) <= set(clf.classes_)
    assert clf.n_iter_.shape == (3,) and clf.n_iter_[1:].tolist() == [0, 0]


@pytest.mark.parametrize("bias_scale", [1e300, 1e-300])
def test_a_bias_scale_whose_square_overflows_is_refused_up_front(iris, bias_scale):
    X, y = iris
    with pytest.raises(ValueError, match="bias_scale must be in \\[1e-150, 1e\\+150\\]"):
        SVMClassifier(kernel="linear", bias="regularized", bias_scale=bias_scale).fit(X, y)
    with pytest.raises(ValueError, match="bias_scale must be in"):
        SVMClassifier(kernel="linear", bias="regularized", bias_scale=bias_scale).fit(
            X[:100], y[:100]
        )
