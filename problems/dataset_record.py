"""The :class:`Dataset` record that every data set function returns, and what those functions
share: the canonical spec string each one records (:func:`format_spec`), which
:func:`~svmbench.problems.datasets.load` reads back, and the checks of their ``seed`` and boolean
arguments.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from svmbench.problems.validation import check_int

__all__ = ["TASKS", "Dataset", "check_bool", "check_seed", "format_spec", "join_spec"]

#: What a data set's ``y`` holds: class labels, real targets, or inlier (+1) and outlier (−1)
#: labels that score a model trained on X alone (the one-class SVM).
TASKS = ("classification", "regression", "outlier_detection")


# --------------------------------------------------------------------------------------------------
# The record
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A data set, its labels, an optional test split, and the spec that reproduces it.

    Parameters
    ----------
    name : str
        Registry name of the source (``"gaussian"``, ``"iris"``, ...).
    spec : str
        Canonical spec string; ``load(spec)`` reproduces the same arrays exactly.
    X : ndarray of shape (n_samples, n_features) or scipy.sparse CSR matrix
        Training features, float64 (dense arrays are C-contiguous).
    y : ndarray of shape (n_samples,)
        float64 labels in {-1.0, +1.0} for a binary task, int64 labels in 0..k-1 for multiclass,
        finite float64 targets for a regression.
    classes : tuple of str
        Class names: for a binary task the meaning of -1 then +1; for multiclass, of 0..k-1;
        none for a regression.
    X_test, y_test : same types as ``X`` and ``y``, or None
        The test split, when one was asked for.
    task : {"classification", "regression", "outlier_detection"}, default="classification"
        An outlier-detection set has float64 labels, +1 for inliers and −1 for outliers.

    Notes
    -----
    Equality and hashing are by identity (arrays have no useful ``==``); compare ``spec`` strings
    or the arrays themselves.
    """

    name: str
    spec: str
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    classes: tuple[str, ...]
    X_test: np.ndarray | sp.csr_matrix | None = None
    y_test: np.ndarray | None = None
    task: str = "classification"

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        object.__setattr__(self, "classes", tuple(str(c) for c in self.classes))
        object.__setattr__(self, "X", _as_features(self.X, "X"))
        _check_labels(self.y, self.X.shape[0], self.classes, "y", self.task)
        if (self.X_test is None) != (self.y_test is None):
            raise ValueError("X_test and y_test must be given together or both be None")
        if self.X_test is not None:
            object.__setattr__(self, "X_test", _as_features(self.X_test, "X_test"))
            if self.X_test.shape[1] != self.X.shape[1]:
                raise ValueError(
                    f"X_test must have n_features={self.X.shape[1]} columns like X, "
                    f"got {self.X_test.shape[1]}"
                )
            if self.y_test.dtype != self.y.dtype:
                raise ValueError(f"y_test must have dtype {self.y.dtype} like y")
            _check_labels(self.y_test, self.X_test.shape[0], self.classes, "y_test", self.task)

    @property
    def n_samples(self) -> int:
        """Number of training rows."""
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        """Number of columns."""
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        """Number of classes of the task (2 for a binary task, 0 for a regression)."""
        return len(self.classes)

    @property
    def is_binary(self) -> bool:
        """True for a binary task with labels in {-1, +1} (float64)."""
        return self.task != "regression" and self.y.dtype == np.float64

    @property
    def is_outlier_detection(self) -> bool:
        """True for inlier (+1) and outlier (−1) labels (``task="outlier_detection"``)."""
        return self.task == "outlier_detection"

    @property
    def is_regression(self) -> bool:
        """True for real targets (``task="regression"``)."""
        return self.task == "regression"

    @property
    def is_sparse(self) -> bool:
        """True when ``X`` is a scipy CSR matrix."""
        return sp.issparse(self.X)

    def __repr__(self) -> str:
        test = "" if self.X_test is None else f", n_test={self.X_test.shape[0]}"
        return (
            f"Dataset(spec={self.spec!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, "
            f"{'task=regression' if self.is_regression else f'n_classes={self.n_classes}'}, "
            f"sparse={self.is_sparse}{test})"
        )


def _as_features(X, name: str):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    elif isinstance(X, np.ndarray):
        X = np.ascontiguousarray(X, dtype=np.float64)
    else:
        raise TypeError(f"{name} must be a numpy ndarray or a scipy sparse matrix, got {type(X)}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features), got {X.shape}")
    return X


def _check_labels(y, n_samples: int, classes: tuple[str, ...], name: str, task: str) -> None:
    if not isinstance(y, np.ndarray) or y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"{name} must be a 1-D ndarray of length {n_samples}")
    if task == "regression":
        if y.dtype != np.float64 or classes or not np.all(np.isfinite(y)):
            raise ValueError(f"{name}: regression targets must be finite float64, with no classes")
    elif task == "outlier_detection" and y.dtype != np.float64:
        raise ValueError(f"{name}: outlier-detection labels must be float64 in {{-1, +1}}")
    elif y.dtype == np.float64:
        if len(classes) != 2 or not np.all((y == -1.0) | (y == 1.0)):
            raise ValueError(f"{name}: float64 labels must be in {{-1, +1}} with 2 class names")
    elif y.dtype == np.int64:
        if len(classes) < 2 or (y.size and (y.min() < 0 or y.max() >= len(classes))):
            raise ValueError(f"{name}: int64 labels must be in 0..{len(classes) - 1}")
    else:
        raise ValueError(f"{name} must be float64 (binary) or int64 (multiclass), got {y.dtype}")


# --------------------------------------------------------------------------------------------------
# Spec strings and argument checks shared by the data set functions
# --------------------------------------------------------------------------------------------------


def format_spec(name: str, params: dict) -> str:
    """Canonical spec: parameters sorted by name, None omitted, booleans as true/false."""
    return join_spec(name, {k: _format_value(v) for k, v in params.items() if v is not None})


def join_spec(name: str, raw: dict[str, str]) -> str:
    """``name:key=value,...`` of already formatted values, keys sorted (``name`` alone if none)."""
    if not raw:
        return name
    return name + ":" + ",".join(f"{key}={raw[key]}" for key in sorted(raw))


def _format_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def check_seed(seed) -> int:
    """``seed`` as an int >= 0, the seed of ``np.random.default_rng``."""
    return check_int("seed", seed, low=0)


def check_bool(name: str, value) -> bool:
    """``value`` as a bool: a bool (NumPy's included) or the integer 0 or 1, else a TypeError
    (:func:`~svmbench.problems.validation.check_bool` refuses integers with a ValueError)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
