"""The fixed costs of one fit (issue 25): X validated once, problem views from the solver's
table, auto's rules run once per problem, the problem key hashed without a copy; the results
unchanged (certified against the references' optima)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sklearn.datasets import load_iris

import svmbench.estimators as estimators
from svmbench import SVMClassifier
from svmbench.problems import KernelDual, SoftMarginPrimal, base, validation
from svmbench.solvers import auto
from svmbench.solvers._reference import reference_solution


@pytest.fixture(scope="module")
def binary():
    X, y = load_iris(return_X_y=True)
    keep = y > 0  # versicolor against virginica: not separable
    return np.ascontiguousarray(X[keep]), y[keep]


@pytest.fixture
def counted(monkeypatch):
    """Counts of scikit-learn's validate_data (the estimator's one validation) and of the
    problems' finiteness scans of X."""
    counts = {"validate_data": 0, "scan": 0}
    validate, scan = estimators.validate_data, validation.check_finite

    def counting_validate(*args, **kwargs):
        counts["validate_data"] += 1
        return validate(*args, **kwargs)

    def counting_scan(values, name="X"):
        counts["scan"] += 1
        return scan(values, name)

    monkeypatch.setattr(estimators, "validate_data", counting_validate)
    monkeypatch.setattr(validation, "check_finite", counting_scan)
    return counts


@pytest.mark.parametrize(
    "params",
    [
        {"kernel": "rbf"},
        {"kernel": "linear"},
        {"kernel": "linear", "loss": "squared_hinge", "bias": "regularized"},
    ],
    ids=["rbf", "linear", "squared_hinge"],
)
def test_a_binary_fit_validates_X_once(binary, counted, params):
    SVMClassifier(**params).fit(*binary)  # the solver's warm-up builds its own tiny problems
    counted.update(validate_data=0, scan=0)
    clf = SVMClassifier(**params).fit(*binary)
    assert counted == {"validate_data": 1, "scan": 0}
    assert clf.result_.status.value == "optimal" and clf.result_.rel_gap <= 1e-6


def test_a_one_vs_one_fit_validates_X_once(counted):
    X, y = load_iris(return_X_y=True)
    SVMClassifier(kernel="rbf", gamma=0.5).fit(X, y)
    counted.update(validate_data=0, scan=0)
    clf = SVMClassifier(kernel="rbf", gamma=0.5).fit(X, y)
    assert counted == {"validate_data": 1, "scan": 0}
    assert clf.result_.info["strategy"] == "ovo" and len(clf.result_.info["binary_status"]) == 3
    assert all(s == "optimal" for s in clf.result_.info["binary_status"])


def test_a_fit_still_refuses_non_finite_X(binary):
    X, y = binary
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SVMClassifier().fit(X, y)


def test_only_the_validated_array_skips_the_scan(binary):
    X, y = binary
    y_pm = np.where(y == 2, 1.0, -1.0)
    bad = X.copy()
    bad[0, 0] = np.inf
    with validation.validated_input(X):
        KernelDual(X, y_pm)  # taken as validated
        with pytest.raises(ValueError, match="X must contain only finite values"):
            KernelDual(bad, y_pm)  # another array: scanned
    with pytest.raises(ValueError, match="X must contain only finite values"):
        KernelDual(bad, y_pm)
    with validation.validated_input(bad.astype(np.float32)):  # not what check_X returns as is
        with pytest.raises(ValueError, match="X must contain only finite values"):
            KernelDual(bad.astype(np.float32), y_pm)
    # outside the block nothing is trusted, even the array that was
    with validation.validated_input(bad):
        pass
    with pytest.raises(ValueError, match="X must contain only finite values"):
        KernelDual(bad, y_pm)


def test_the_fit_is_the_reference_optimum(binary):
    X, y = binary
    clf = SVMClassifier(kernel="linear", C=10.0).fit(X, y)
    problem = SoftMarginPrimal(X, np.where(y == 2, 1.0, -1.0), C=10.0)
    ref = reference_solution(problem)
    assert clf.result_.primal == pytest.approx(ref.primal, rel=1e-6)


def test_auto_runs_its_rules_once_per_problem(binary, monkeypatch):
    X, y = binary
    calls = []
    features = auto.Features.of

    def counting(problem):
        calls.append(problem)
        return features(problem)

    monkeypatch.setattr(auto.Features, "of", staticmethod(counting))
    SVMClassifier(kernel="rbf").fit(X, y)
    assert len(calls) == 1
    problem = KernelDual(X, np.where(y == 2, 1.0, -1.0), C=3.0)
    first = auto.choose(problem)
    assert auto.choose(problem) is first and len(calls) == 2
    other = KernelDual(X, np.where(y == 2, 1.0, -1.0), C=3.0)  # equal, another object
    assert auto.choose(other) == first and len(calls) == 3


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12.0).reshape(3, 4),
        np.arange(12.0).reshape(3, 4).T,  # not C-contiguous: hashed in C order
        np.zeros((0, 3)),
        np.array([True, False, True]),
        np.arange(5, dtype=np.int32),
    ],
)
def test_the_problem_key_hashes_the_bytes_it_always_did(array):
    ours = hashlib.sha256()
    base._hash_array(ours, array)
    c = np.ascontiguousarray(array)
    expected = hashlib.sha256(f"{c.dtype}{c.shape}".encode() + c.tobytes())
    assert ours.hexdigest() == expected.hexdigest()
