"""The labels of a saved classifier, and :class:`LoadedClassifier`, what
:func:`~svmbench.problems.model_files.load_model` returns for a file saved from an estimator.

A model (:mod:`~svmbench.problems.models`) predicts ±1 or class indices; an estimator maps them to
its ``classes_``. A model file saved from an estimator keeps those labels as JSON (never
pickled) with their kind, so that the loaded classifier predicts the original labels with the
same kind of dtype::

    {"kind": "str" | "int" | "float" | "bool", "dtype": <NumPy dtype name; not for str>,
     "values": [<one JSON value per class, in the order of classes_>]}

:func:`encode_classes` writes that entry and refuses other labels (objects, tuples, None, bytes,
dates, complex numbers, a mix of kinds, NaN, duplicates); :func:`decode_classes` checks an entry
read from an untrusted file before it builds any array. An object array holding only strings (a
pandas column of labels) is saved as ``"str"`` and comes back as a NumPy string array.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import sparse

from svmbench.problems.models import BinaryModel, Model, MulticlassModel, OneVsOneModel
from svmbench.problems.ovo_values import ovr_from_pairs, pair_order, pair_values

__all__ = [
    "LABEL_DTYPES",
    "LoadedClassifier",
    "decode_classes",
    "decode_feature_names",
    "encode_classes",
    "encode_feature_names",
    "model_class_count",
]

#: The label kinds a model file stores, and the NumPy dtypes each may come back as.
LABEL_DTYPES: dict[str, tuple[str, ...]] = {
    "bool": ("bool",),
    "int": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "float": ("float16", "float32", "float64"),
    "str": (),
}
_DEFAULT_DTYPE = {"bool": "bool", "int": "int64", "float": "float64"}
#: The kind of a Python value (bool before int: ``True`` is an ``int``).
_PY_KINDS = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"))


def model_class_count(model: Model) -> int:
    """The classes a model tells apart: 2 for a binary model, ``n_classes`` for a multiclass
    one; a ``TypeError`` for a model that is not a classifier (the chain model)."""
    if isinstance(model, BinaryModel):
        return 2
    if isinstance(model, MulticlassModel):
        return model.n_classes
    raise TypeError(f"a {type(model).__name__} is not a classifier: it has no classes to save")


def _kind_of(value) -> str | None:
    if isinstance(value, np.generic):
        value = value.item()
    for py_type, kind in _PY_KINDS:
        if isinstance(value, py_type):
            return kind
    return None


def encode_classes(classes) -> dict[str, Any]:
    """The JSON entry of an estimator's ``classes_`` (see the module docstring).

    Raises
    ------
    TypeError
        For labels that are not all integers, all floats, all strings or all booleans.
    ValueError
        For fewer than two classes, duplicates, or a NaN or infinite float label.
    """
    array = np.asarray(classes)
    if array.ndim != 1:
        raise ValueError(f"classes_ must be a 1-D array, got shape {array.shape}")
    dtype = array.dtype
    if dtype.kind == "O":
        kinds = {_kind_of(v) for v in array}
        if None in kinds:
            bad = next(v for v in array if _kind_of(v) is None)
            raise TypeError(
                f"cannot save the label {bad!r} ({type(bad).__name__}): a model file stores "
                "integer, float, string or boolean labels"
            )
        if len(kinds) > 1:
            raise TypeError(f"cannot save labels of mixed types ({', '.join(sorted(kinds))})")
        kind = kinds.pop() if kinds else "str"
        dtype_name = _DEFAULT_DTYPE.get(kind)
    else:
        kind = {"b": "bool", "i": "int", "u": "int", "f": "float", "U": "str"}.get(dtype.kind)
        if kind is None:
            raise TypeError(
                f"cannot save labels of dtype {dtype}: a model file stores integer, float, "
                "string or boolean labels"
            )
        dtype_name = None if kind == "str" else dtype.name
    values = [v.item() if isinstance(v, np.generic) else v for v in array]
    if kind == "float" and not all(math.isfinite(v) for v in values):
        raise ValueError(f"cannot save the non-finite float labels {values}")
    _check_values(values, kind)
    entry: dict[str, Any] = {"kind": kind, "values": values}
    if dtype_name is not None:
        entry["dtype"] = dtype_name
    return entry


def _check_values(values: list, kind: str) -> None:
    if len(values) < 2:
        raise ValueError(f"a classifier has at least 2 classes, got {len(values)}")
    if len(set(values)) != len(values):
        raise ValueError(f"the class labels must be distinct, got {values}")


def decode_classes(entry, n_classes: int) -> np.ndarray:
    """The ``classes_`` array of an entry read from a file, checked before any array is built:
    a known kind and dtype, ``n_classes`` values of that kind, finite floats, no duplicates.

    Raises
    ------
    ValueError
        Naming what is wrong with the entry.
    """
    if not isinstance(entry, dict):
        raise ValueError(f"the classes entry is a {type(entry).__name__}, not an object")
    kind, values = entry.get("kind"), entry.get("values")
    if not isinstance(kind, str) or kind not in LABEL_DTYPES:
        raise ValueError(
            f"the classes have kind {repr(kind)[:60]}; known kinds: {sorted(LABEL_DTYPES)}"
        )
    if not isinstance(values, list):
        raise ValueError(f"the class labels are a {type(values).__name__}, not a list")
    if len(values) != n_classes:
        raise ValueError(
            f"the file lists {len(values)} class labels for a model of {n_classes} classes"
        )
    for v in values:
        # JSON floats are Python floats; an int is no float label, a bool no int label
        if _kind_of(v) != kind or isinstance(v, np.generic):
            raise ValueError(f"the {kind} classes hold {v!r} ({type(v).__name__})")
    if kind == "float" and not all(math.isfinite(v) for v in values):
        raise ValueError(f"the float classes hold a non-finite value: {values}")
    _check_values(values, kind)
    if kind == "str":
        if "dtype" in entry:
            raise ValueError("string classes take no dtype")
        return np.array(values, dtype=str)
    dtype = entry.get("dtype", _DEFAULT_DTYPE[kind])
    if dtype not in LABEL_DTYPES[kind]:
        raise ValueError(
            f"the {kind} classes have dtype {dtype!r}; allowed: {list(LABEL_DTYPES[kind])}"
        )
    try:
        array = np.array(values, dtype=dtype)
    except (OverflowError, ValueError):
        raise ValueError(f"the {kind} classes {values} do not fit dtype {dtype}") from None
    if np.unique(array).size != n_classes or (kind == "int" and array.tolist() != values):
        raise ValueError(f"the {kind} classes {values} do not fit dtype {dtype}")
    return array


def encode_feature_names(names, n_features: int) -> list[str]:
    """The JSON list of an estimator's ``feature_names_in_`` (strings, one per feature)."""
    values = [v.item() if isinstance(v, np.generic) else v for v in np.asarray(names).ravel()]
    if not all(isinstance(v, str) for v in values):
        raise TypeError("feature_names_in_ must hold strings only")
    if len(values) != n_features:
        raise ValueError(
            f"feature_names_in_ names {len(values)} features for a model of {n_features}"
        )
    return values


def decode_feature_names(entry, n_features: int) -> np.ndarray:
    """The ``feature_names_in_`` (an object array of str, as scikit-learn's) of a file entry."""
    if not isinstance(entry, list) or not all(isinstance(v, str) for v in entry):
        raise ValueError("the feature names are not a list of strings")
    if len(entry) != n_features:
        raise ValueError(f"the file names {len(entry)} features for a model of {n_features}")
    return np.array(entry, dtype=object)


def _column_names(X) -> np.ndarray | None:
    """The column names of a DataFrame-like ``X`` when they are all strings (as scikit-learn)."""
    columns = getattr(X, "columns", None)
    if columns is None or sparse.issparse(X) or isinstance(X, np.ndarray):
        return None
    names = np.asarray(columns, dtype=object)
    if names.ndim != 1 or not all(isinstance(c, str) for c in names):
        return None
    return names


class LoadedClassifier:
    """A classifier read from a model file saved from an estimator: the model and the labels.

    It predicts the original labels (``classes_``, of the dtype kind they were saved with) and
    checks its input as a fitted scikit-learn estimator does (the number of features; the column
    names of a DataFrame against ``feature_names_in_``). It is **not** a full estimator: it has
    no ``fit``, ``get_params`` or ``set_params``, and scikit-learn's ``clone`` cannot refit it;
    save a fitted :class:`svmbench.SVMClassifier` to keep its parameters.

    Attributes
    ----------
    model_ : Model
        The binary or multiclass model (±1 or class indices).
    classes_ : ndarray of shape (n_classes,)
        The labels: ``classes_[1]`` where a binary ``f(x) ≥ 0``; ``classes_[r]`` for the argmax
        ``r`` of multiclass scores.
    n_features_in_ : int
        Columns ``X`` must have (for a precomputed kernel: training examples).
    feature_names_in_ : ndarray of str (object dtype)
        Present only when the estimator was fitted on a DataFrame with string column names.
    """

    def __init__(self, model: Model, classes, feature_names=None):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an svmbench model, got {type(model).__name__}")
        classes = np.asarray(classes)
        k = model_class_count(model)
        if classes.shape != (k,):
            raise ValueError(f"classes must hold {k} labels, got shape {classes.shape}")
        self.model_ = model
        self.classes_ = classes
        self.n_features_in_ = model.n_features
        if feature_names is not None:
            self.feature_names_in_ = np.asarray(feature_names, dtype=object)

    def __repr__(self) -> str:
        return (
            f"LoadedClassifier({type(self.model_).__name__}, classes={self.classes_.tolist()!r}, "
            f"n_features_in_={self.n_features_in_})"
        )

    def _check_X(self, X):
        names = _column_names(X)
        fitted = getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None:
            if names.shape != fitted.shape or np.any(names != fitted):
                unexpected = sorted(set(names) - set(fitted))
                missing = sorted(set(fitted) - set(names))
                raise ValueError(
                    "The feature names should match those that were passed during fit "
                    f"(unexpected: {unexpected[:5]}, missing: {missing[:5]}"
                    + (", or in another order" if not unexpected and not missing else "")
                    + ")"
                )
        elif names is not None:
            warnings.warn(
                "X has feature names, but LoadedClassifier was fitted without feature names",
                UserWarning,
                stacklevel=3,
            )
        elif fitted is not None:
            warnings.warn(
                "X does not have valid feature names, but LoadedClassifier was fitted with "
                "feature names",
                UserWarning,
                stacklevel=3,
            )
        if sparse.issparse(X):
            X = sparse.csr_matrix(X, dtype=np.float64)
        else:
            X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D of shape (n_samples, n_features), got {X.shape}")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but LoadedClassifier is expecting "
                f"{self.n_features_in_} features as input"
            )
        return X

    def decision_function(self, X) -> np.ndarray:
        """Binary: ``f(x)`` of shape (n,), positive for ``classes_[1]``; multiclass: (n, k),
        for a one-vs-one model SVC's ``decision_function_shape="ovr"`` values (the votes plus
        the summed pair confidences scaled into (−1/3, 1/3)), as the estimator gives them."""
        X = self._check_X(X)
        model = self.model_
        if isinstance(model, OneVsOneModel) and pair_order(model) is not None:
            return ovr_from_pairs(pair_values(model, X), model.n_classes)
        scores = model.decision_function(X)
        if self.classes_.size == 2 and scores.ndim == 2:  # two-class Crammer–Singer
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X) -> np.ndarray:
        """The predicted labels, elements of ``classes_``: ndarray of shape (n_samples,); a
        one-vs-one model's majority vote, ties to the first class (LIBSVM's and SVC's rule)."""
        if isinstance(self.model_, OneVsOneModel):
            return self.classes_[self.model_.predict(self._check_X(X))]
        f = self.decision_function(X)
        index = (f >= 0.0).astype(int) if f.ndim == 1 else np.argmax(f, axis=1)
        return self.classes_[index]

    def score(self, X, y) -> float:
        """The mean accuracy of ``predict(X)`` against ``y``."""
        return float(np.mean(self.predict(X) == np.asarray(y)))
