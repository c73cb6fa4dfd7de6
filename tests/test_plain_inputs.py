"""The estimators' short path for plain arrays (:mod:`svmbench.input_checks`): the same fit,
predictions, score and fitted attributes as through scikit-learn's ``validate_data``, and every
other input (lists, other dtypes, non-contiguous arrays, data frames, NaN, a wrong width)
still checked by it, with its words."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.metrics import accuracy_score

from svmbench import SVMClassifier, input_checks


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return np.ascontiguousarray(X), y


@pytest.fixture
def validations(monkeypatch):
    """How often scikit-learn's validate_data runs under the estimators' checks."""
    count = {"n": 0}
    validate = input_checks.validate_data

    def counting(*args, **kwargs):
        count["n"] += 1
        return validate(*args, **kwargs)

    monkeypatch.setattr(input_checks, "validate_data", counting)
    return count


def test_plain_arrays_skip_validate_data_and_fit_the_same(iris, validations):
    X, y = iris
    plain = SVMClassifier(gamma=0.5).fit(X, y)
    assert validations["n"] == 0
    listed = SVMClassifier(gamma=0.5).fit(X.tolist(), y.tolist())  # a list: validate_data
    assert validations["n"] == 1
    np.testing.assert_array_equal(plain.dual_coef_, listed.dual_coef_)
    np.testing.assert_array_equal(plain.intercept_, listed.intercept_)
    assert plain.n_features_in_ == listed.n_features_in_ == 4
    assert not hasattr(plain, "feature_names_in_")
    before = validations["n"]
    np.testing.assert_array_equal(plain.predict(X), listed.predict(X.tolist()))
    assert validations["n"] == before + 1  # the list only


@pytest.mark.parametrize(
    "convert",
    [
        lambda X: X.astype(np.float32),
        lambda X: np.asfortranarray(X),
        lambda X: np.repeat(X, 2, axis=1)[:, ::2],  # a strided view of the same values
        lambda X: X.astype(np.int64),
    ],
    ids=["float32", "fortran", "strided", "int"],
)
def test_other_arrays_go_through_validate_data(iris, validations, convert):
    X, y = iris
    clf = SVMClassifier(gamma=0.5).fit(convert(X), y)
    assert validations["n"] == 1
    clf.predict(convert(X))
    assert validations["n"] == 2


def test_float_and_string_labels_go_through_validate_data(iris, validations):
    X, y = iris
    SVMClassifier(gamma=0.5).fit(X, y.astype(float))
    SVMClassifier(gamma=0.5).fit(X, np.array(["a", "b", "c"])[y])
    assert validations["n"] == 2


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_is_refused_with_scikit_learns_words(iris, bad):
    X, y = iris
    X = X.copy()
    X[5, 2] = bad
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        SVMClassifier().fit(X, y)
    clf = SVMClassifier(gamma=0.5).fit(*iris)
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        clf.predict(X)


def test_large_finite_entries_whose_sum_overflows_are_accepted(validations):
    # the sum overflows to inf: the full check runs and accepts the finite entries
    X = np.array([[1e308, 0.0], [1e308, 1.0], [0.0, 1.0], [0.0, 0.0]])
    y = np.array([0, 0, 1, 1])
    with np.errstate(over="ignore"):
        assert not np.isfinite(X.sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow warning from the check
        with pytest.raises(ValueError) as refused:  # the kernel products overflow: refused later
            SVMClassifier(kernel="linear").fit(X, y)
    assert validations["n"] == 1
    assert "Input X contains" not in str(refused.value)


def test_wrong_width_and_unfitted_are_refused_as_before(iris):
    X, y = iris
    with pytest.raises(Exception, match="not fitted"):
        SVMClassifier().predict(X)
    clf = SVMClassifier(gamma=0.5).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but SVMClassifier is expecting 4"):
        clf.predict(np.ascontiguousarray(X[:, :3]))
    with pytest.raises(ValueError, match="0 sample"):
        clf.predict(np.empty((0, 4)))


def test_a_data_frame_keeps_its_feature_names_and_a_refit_on_an_array_drops_them(iris):
    pd = pytest.importorskip("pandas")
    X, y = iris
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = SVMClassifier(gamma=0.5).fit(frame, y)
    assert list(clf.feature_names_in_) == ["a", "b", "c", "d"]
    with pytest.warns(UserWarning, match="feature names"):
        clf.predict(X)  # fitted with names: the array goes through validate_data, which warns
    clf.fit(X, y)
    assert not hasattr(clf, "feature_names_in_")


def test_score_counts_as_accuracy_score(iris):
    X, y = iris
    clf = SVMClassifier(gamma=0.5, C=0.1).fit(X, y)
    predicted = clf.predict(X)
    assert 0.5 < clf.score(X, y) < 1.0  # some rows wrong: a count that could be off
    assert clf.score(X, y) == accuracy_score(y, predicted)
    weights = np.linspace(0.5, 2.0, y.size)  # weights: scikit-learn's own score
    assert clf.score(X, y, sample_weight=weights) == accuracy_score(
        y, predicted, sample_weight=weights
    )
    strings = np.array(["a", "b", "c"])
    named = SVMClassifier(gamma=0.5, C=0.1).fit(X, strings[y])
    assert named.score(X, strings[y]) == accuracy_score(strings[y], named.predict(X))
    with pytest.raises(ValueError, match="continuous"):  # scikit-learn's refusal is kept
        clf.score(X, y + 0.5)
