"""scikit-learn's packaged data sets: ``iris``, ``wine``, ``breast_cancer`` and ``digits``, each
returned as a :class:`~svmbench.problems.dataset_record.Dataset` whose ``spec`` reproduces it
through :func:`~svmbench.problems.datasets.load`.

They load from scikit-learn's package data (no network). They are standardized by default (each
feature to zero mean and unit variance over the whole set; constant features become 0 instead of
being divided by zero). ``digits`` is instead scaled by 1/16 to [0, 1] by default.
"""

from __future__ import annotations

import numpy as np
import sklearn.datasets

from svmbench.problems.dataset_record import Dataset, check_bool, format_spec

__all__ = ["breast_cancer", "digits", "iris", "wine"]


def iris(*, standardize: bool = True) -> Dataset:
    """Fisher's iris, 150 × 4, three classes (setosa, versicolor, virginica).

    Parameters
    ----------
    standardize : bool, default=True
        Scale each feature to zero mean and unit variance over the whole set.
    """
    standardize = check_bool("standardize", standardize)
    return _sklearn_set("iris", sklearn.datasets.load_iris(), {"standardize": standardize})


def wine(*, standardize: bool = True) -> Dataset:
    """UCI wine recognition, 178 × 13, three classes (class_0, class_1, class_2).

    Parameters
    ----------
    standardize : bool, default=True
        Scale each feature to zero mean and unit variance over the whole set.
    """
    standardize = check_bool("standardize", standardize)
    return _sklearn_set("wine", sklearn.datasets.load_wine(), {"standardize": standardize})


def breast_cancer(*, standardize: bool = True) -> Dataset:
    """Wisconsin diagnostic breast cancer, 569 × 30, binary: malignant -1, benign +1.

    Parameters
    ----------
    standardize : bool, default=True
        Scale each feature to zero mean and unit variance over the whole set.
    """
    standardize = check_bool("standardize", standardize)
    bunch = sklearn.datasets.load_breast_cancer()  # target 0 = malignant, 1 = benign
    return _sklearn_set("breast_cancer", bunch, {"standardize": standardize}, binary=True)


def digits(*, binary: bool = False, standardize: bool = False) -> Dataset:
    """Handwritten digits, 1797 × 64 pixels with values 0..16.

    Parameters
    ----------
    binary : bool, default=False
        If True, the binary task digits 0-4 (-1) against 5-9 (+1); else ten classes 0..9.
    standardize : bool, default=False
        If False, pixels are scaled by 1/16 to [0, 1]; if True, each pixel is standardized
        (the always-blank pixels become 0).
    """
    binary = check_bool("binary", binary)
    standardize = check_bool("standardize", standardize)
    bunch = sklearn.datasets.load_digits()
    params = {"binary": binary, "standardize": standardize}
    X = bunch.data if standardize else bunch.data / 16.0
    if not binary:
        return _sklearn_set("digits", bunch, params, X=X)
    y = np.where(bunch.target >= 5, 1.0, -1.0)
    X = _standardize(X) if standardize else X
    return Dataset("digits", format_spec("digits", params), X, y, ("0-4", "5-9"))


def _sklearn_set(name: str, bunch, params: dict, *, X=None, binary: bool = False) -> Dataset:
    X = bunch.data if X is None else X
    X = _standardize(X) if params["standardize"] else X
    classes = tuple(str(c) for c in bunch.target_names)
    if binary:  # target 0 -> -1, target 1 -> +1
        y = np.where(bunch.target == 1, 1.0, -1.0)
    else:
        y = bunch.target.astype(np.int64)
    return Dataset(name, format_spec(name, params), X, y, classes)


def _standardize(X: np.ndarray) -> np.ndarray:
    """Zero mean and unit variance per column; constant columns become exactly 0."""
    X = np.asarray(X, dtype=np.float64)
    constant = np.ptp(X, axis=0) == 0.0
    scale = np.where(constant, 1.0, X.std(axis=0))
    Z = (X - X.mean(axis=0)) / scale
    Z[:, constant] = 0.0
    return np.ascontiguousarray(Z)
