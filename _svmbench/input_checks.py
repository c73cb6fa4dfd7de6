"""The estimators' input checks, with a short path for plain NumPy arrays.

scikit-learn's ``validate_data`` looks for data-frame column names, reads the estimator's tags
and runs ``check_array`` on X and on y: a fixed cost of each ``fit``, ``predict`` and ``score``
that dominates a fit on 100 rows (a grid search pays it for every fold and cell). An input that
is already what ``validate_data`` would return — a plain (not subclassed) C-contiguous float64
ndarray with at least one row and one column, whose entries sum to a finite number (so that
every entry is finite), and labels in a plain 1-D integer or boolean array of the same length —
is taken as it is, with the same fitted attributes set (``n_features_in_``; no
``feature_names_in_``). Anything else, and every input that is refused, goes through
``validate_data``, whose words the errors keep.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data


def _plain_rows(X) -> bool:
    """Whether X is a plain C-contiguous 2-D float64 ndarray of finite entries, not empty."""
    if not (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype == np.float64
        and X.flags.c_contiguous
        and X.shape[0] > 0
        and X.shape[1] > 0
    ):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        total = X.sum()
    return math.isfinite(total)  # NaN or inf anywhere (or an overflow): the full check


def _plain_labels(y, n: int) -> bool:
    """Whether y is a plain 1-D integer or boolean ndarray of n labels."""
    return type(y) is np.ndarray and y.ndim == 1 and y.shape[0] == n and y.dtype.kind in "iub"


def fit_input(estimator, X, y):
    """``validate_data(estimator, X, y, accept_sparse="csr", dtype=float64, order="C")``, or
    ``(X, y)`` as given when they are plain arrays (see the module docstring)."""
    if _plain_rows(X) and _plain_labels(y, X.shape[0]):
        estimator.n_features_in_ = X.shape[1]
        estimator.__dict__.pop("feature_names_in_", None)  # as validate_data's reset
        return X, y
    return validate_data(estimator, X, y, accept_sparse="csr", dtype=np.float64, order="C")


def check_fitted(estimator) -> None:
    """scikit-learn's ``check_is_fitted``, skipped when the fit's ``model_`` is there."""
    if "model_" not in estimator.__dict__:
        check_is_fitted(estimator)


def predict_input(estimator, X):
    """The fitted ``estimator``'s ``validate_data(..., reset=False)`` of X, or X as given when
    it is a plain array of the fitted width and the fit saw no column names."""
    check_fitted(estimator)
    if (
        "feature_names_in_" not in estimator.__dict__
        and _plain_rows(X)
        and X.shape[1] == estimator.__dict__.get("n_features_in_")
    ):
        return X
    return validate_data(
        estimator, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False
    )


class PlainScoreMixin:
    """``score`` as scikit-learn's ``ClassifierMixin.score`` (the mean accuracy), counted
    directly for plain integer labels without weights; any other input goes to
    ``accuracy_score`` (placed before ``ClassifierMixin``)."""

    def score(self, X, y, sample_weight=None):
        """The mean accuracy of ``predict(X)`` against ``y`` (``accuracy_score``)."""
        if (
            sample_weight is None
            and type(y) is np.ndarray
            and y.ndim == 1
            and y.dtype.kind in "iu"
            and getattr(self, "classes_", np.empty(0, dtype=object)).dtype.kind in "iu"
        ):
            predicted = self.predict(X)
            if predicted.shape == y.shape and y.size:
                return float(np.count_nonzero(predicted == y) / y.size)
            from sklearn.metrics import accuracy_score

            return accuracy_score(y, predicted)
        return super().score(X, y, sample_weight=sample_weight)
