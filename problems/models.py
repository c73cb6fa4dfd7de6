"""Fitted models: what a solution predicts with, self-contained, picklable and saved to disk.

Every :class:`~svmbench.solvers.base.SolveResult` carries one (``result.model``), built by its
problem (``Problem.model_from``) or by a reduction from its binary models:

- :class:`LinearModel` ``f(x) = w·x + b`` (every linear binary problem; dense or CSR ``X``);
- :class:`KernelModel` ``f(x) = Σ_{j ∈ SV} α_j y_j K(x_j, x) + b``, holding only the support
  vectors (for a precomputed kernel, ``X`` is the kernel against the training set);
- :class:`CrammerSingerModel` scores ``f_r(x) = w_r·x + b_r``;
- :class:`OneVsRestModel` and :class:`OneVsOneModel` over any binary models;
- :class:`ChainModel` for chain-structured outputs, decoded by Viterbi.

Binary models predict ±1 (``f(x) ≥ 0`` → +1); multiclass ones predict class indices 0..k−1.
Label encoding (strings, {1, 2}, …) is the estimator's job (:mod:`svmbench.estimators`).

File format (:func:`save_model`, :func:`load_model`): one NumPy ``.npz`` archive, written and
read with ``allow_pickle=False``. The entry ``__svmbench__`` holds a JSON document::

    {"format": "svmbench-model", "version": 1, "model": {"kind": ..., scalar parameters,
     "arrays": {name: entry}, "models": [nested models, for the reductions]}}

and every array is an entry of the archive under a prefixed name (``m.w``, ``m.0.dual_coef``,
…). A CSR matrix is stored as its ``data``, ``indices``, ``indptr`` and ``shape``. A file of a
newer version, of an unknown kind, or that is not an svmbench model is a ``ValueError``.
"""

from __future__ import annotations

import abc
import itertools
import json
import os
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems.kernels import KERNELS, kernel_dot

#: The version of the file format this code writes (and the newest it reads).
FORMAT_VERSION = 1
_FORMAT = "svmbench-model"
_META = "__svmbench__"


def _check_X(X, n_features: int, what: str = "features"):
    """Dense float64 or CSR ``X`` with ``n_features`` columns (ValueError naming ``X``)."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X.reshape(1, -1)
    if X.ndim != 2 or X.shape[1] != n_features:
        raise ValueError(
            f"X must have {n_features} {what} (columns), got an array of shape {X.shape}"
        )
    return X


class Model(abc.ABC):
    """Base of the models: ``decision_function(X)`` and ``predict(X)``."""

    kind: ClassVar[str]

    @abc.abstractmethod
    def decision_function(self, X) -> np.ndarray: ...

    @abc.abstractmethod
    def predict(self, X) -> np.ndarray: ...


class BinaryModel(Model):
    """A binary model: ``predict`` is the sign of the decision function (0 counts as +1)."""

    n_classes: ClassVar[int] = 2

    def predict(self, X) -> np.ndarray:
        return np.where(self.decision_function(X) >= 0.0, 1.0, -1.0)


class MulticlassModel(Model):
    """A multiclass model: ``decision_function`` is (n, k); ``predict`` its argmax."""

    def predict(self, X) -> np.ndarray:
        return np.argmax(self.decision_function(X), axis=1)


@dataclass(frozen=True, eq=False)
class LinearModel(BinaryModel):
    """``f(x) = w·x + b``.

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    b : float
        The intercept (for a regularized bias, ``s·w_b``).
    """

    kind: ClassVar[str] = "linear"
    w: np.ndarray
    b: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "w", np.ascontiguousarray(self.w, dtype=np.float64).ravel())
        object.__setattr__(self, "b", float(self.b))

    @property
    def n_features(self) -> int:
        return self.w.shape[0]

    def decision_function(self, X) -> np.ndarray:
        X = _check_X(X, self.n_features)
        return np.asarray(X @ self.w).ravel() + self.b


@dataclass(frozen=True, eq=False)
class KernelModel(BinaryModel):
    """``f(x) = Σ_{j ∈ SV} c_j K(x_j, x) + b`` with ``c_j = α_j y_j``, over the support vectors
    only (the rows with ``α_j ≠ 0``).

    Parameters
    ----------
    support_vectors : ndarray or CSR of shape (n_SV, n_features), or None
        None for a precomputed kernel.
    dual_coef : ndarray of shape (n_SV,)
        ``α_j y_j`` of the support vectors.
    b : float
    kernel, gamma, degree, coef0
        As in :class:`~svmbench.problems.KernelDual`.
    support : ndarray of int of shape (n_SV,)
        Indices of the support vectors in the training set.
    n_train : int
        Training-set size (the columns of a precomputed test kernel).
    """

    kind: ClassVar[str] = "kernel"
    support_vectors: Any
    dual_coef: np.ndarray
    b: float
    kernel: str
    support: np.ndarray
    n_train: int
    gamma: float = 1.0
    degree: float = 3
    coef0: float = 0.0

    def __post_init__(self):
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {self.kernel!r}")
        object.__setattr__(self, "dual_coef", np.asarray(self.dual_coef, dtype=np.float64))
        object.__setattr__(self, "support", np.asarray(self.support, dtype=np.int64))
        object.__setattr__(self, "b", float(self.b))
        if self.support_vectors is not None and sparse.issparse(self.support_vectors):
            object.__setattr__(self, "support_vectors", sparse.csr_matrix(self.support_vectors))

    @property
    def n_features(self) -> int:
        if self.kernel == "precomputed":
            return self.n_train
        return self.support_vectors.shape[1]

    @property
    def kernel_params(self) -> dict[str, Any]:
        return dict(kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0)

    def decision_function(self, X) -> np.ndarray:
        if self.kernel == "precomputed":
            K = _check_X(X, self.n_train, "training examples (a kernel against the training set)")
            return np.asarray(K[:, self.support] @ self.dual_coef).ravel() + self.b
        X = _check_X(X, self.n_features)
        if self.dual_coef.size == 0:
            return np.full(X.shape[0], self.b)
        return kernel_dot(X, self.support_vectors, self.dual_coef, **self.kernel_params) + self.b


@dataclass(frozen=True, eq=False)
class CrammerSingerModel(MulticlassModel):
    """Scores ``f_r(x) = w_r·x + b_r``; the prediction is ``argmax_r f_r(x)``."""

    kind: ClassVar[str] = "crammer_singer"
    W: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "W", np.ascontiguousarray(self.W, dtype=np.float64))
        object.__setattr__(self, "b", np.asarray(self.b, dtype=np.float64).ravel())

    @property
    def n_features(self) -> int:
        return self.W.shape[1]

    @property
    def n_classes(self) -> int:
        return self.W.shape[0]

    def decision_function(self, X) -> np.ndarray:
        X = _check_X(X, self.n_features)
        return np.asarray(X @ self.W.T) + self.b


@dataclass(frozen=True, eq=False)
class OneVsRestModel(MulticlassModel):
    """k binary models "class r against the rest"; the scores are their decision values."""

    kind: ClassVar[str] = "ovr"
    models: tuple[BinaryModel, ...]
    n_classes: int

    def __post_init__(self):
        object.__setattr__(self, "models", tuple(self.models))
        if len(self.models) != self.n_classes:
            raise ValueError(f"ovr needs {self.n_classes} binary models, got {len(self.models)}")

    @property
    def n_features(self) -> int:
        return self.models[0].n_features

    def decision_function(self, X) -> np.ndarray:
        return np.column_stack([m.decision_function(X) for m in self.models])


@dataclass(frozen=True, eq=False)
class OneVsOneModel(MulticlassModel):
    """k(k−1)/2 binary models "class i against class j" (i < j; ``f > 0`` votes for i).

    The prediction is the majority vote. Ties: ``tie_break="first"`` (default) gives the lowest
    class index, as LIBSVM and scikit-learn's SVC predict; ``"confidence"`` the largest summed
    confidence ``Σ_j ±f_ij(x)``. The scores are the votes plus a term in (−⅓, ⅓) that encodes
    the tie rule (``(k−1−r)/(3k)``, or the confidences squashed), so that their argmax is the
    prediction."""

    kind: ClassVar[str] = "ovo"
    models: tuple[BinaryModel, ...]
    pairs: tuple[tuple[int, int], ...]
    n_classes: int
    tie_break: str = "first"

    def __post_init__(self):
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "pairs", tuple((int(i), int(j)) for i, j in self.pairs))
        if len(self.models) != len(self.pairs):
            raise ValueError("ovo needs one binary model per pair of classes")
        if self.tie_break not in ("first", "confidence"):
            raise ValueError(f"tie_break must be 'first' or 'confidence', got {self.tie_break!r}")

    @property
    def n_features(self) -> int:
        return self.models[0].n_features

    def decision_function(self, X) -> np.ndarray:
        votes = conf = None
        for m, (i, j) in zip(self.models, self.pairs, strict=True):
            f = m.decision_function(X)
            if votes is None:
                votes = np.zeros((f.shape[0], self.n_classes))
                conf = np.zeros_like(votes)
            win = f > 0
            votes[:, i] += win
            votes[:, j] += ~win
            conf[:, i] += f
            conf[:, j] -= f
        if self.tie_break == "first":
            k = self.n_classes
            return votes + (k - 1 - np.arange(k)) / (3.0 * k)
        return votes + conf / (3.0 * (np.abs(conf) + 1.0))


@dataclass(frozen=True, eq=False)
class ChainModel(Model):
    """Chain-structured labelling: emission weights E (q, d) and transitions T (q, q) (or
    None); ``predict(X, lengths)`` decodes each sequence by Viterbi (the lecture notes' dynamic
    programme), scores scaled by 1/r as in :class:`~svmbench.problems.ChainStructuredHinge`."""

    kind: ClassVar[str] = "chain"
    E: np.ndarray
    T: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "E", np.ascontiguousarray(self.E, dtype=np.float64))
        if self.T is not None:
            object.__setattr__(self, "T", np.ascontiguousarray(self.T, dtype=np.float64))

    @property
    def n_features(self) -> int:
        return self.E.shape[1]

    @property
    def n_states(self) -> int:
        return self.E.shape[0]

    def decision_function(self, X) -> np.ndarray:
        """Per-position emission scores ``x_t·e_s`` (n_positions, q), without transitions."""
        return np.asarray(_check_X(X, self.n_features) @ self.E.T)

    def predict(self, X, lengths=None) -> np.ndarray:
        """Viterbi labels of every sequence of ``X`` cut by ``lengths`` (one sequence if None),
        concatenated."""
        from svmbench.problems.structured import viterbi

        X = _check_X(X, self.n_features)
        lengths = np.array([X.shape[0]]) if lengths is None else np.asarray(lengths, dtype=int)
        if lengths.ndim != 1 or np.any(lengths < 1) or lengths.sum() != X.shape[0]:
            raise ValueError(
                f"lengths must be positive and sum to the {X.shape[0]} rows of X, got {lengths}"
            )
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        out = []
        for a, b in itertools.pairwise(offsets):
            r = b - a
            S = (X[a:b] @ self.E.T) / r
            out.append(viterbi(S, None if self.T is None else self.T / r)[0])
        return np.concatenate(out)


# ---------------------------------------------------------------------------------------------
# Saving and loading
# ---------------------------------------------------------------------------------------------

_KINDS: dict[str, type[Model]] = {
    cls.kind: cls
    for cls in (
        LinearModel,
        KernelModel,
        CrammerSingerModel,
        OneVsRestModel,
        OneVsOneModel,
        ChainModel,
    )
}


def _encode(model: Model, prefix: str, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    if not isinstance(model, Model):
        raise TypeError(f"model must be an svmbench model, got {type(model).__name__}")
    doc: dict[str, Any] = {"kind": model.kind, "arrays": {}}
    for f in fields(model):
        value = getattr(model, f.name)
        if f.name == "models":
            doc["models"] = [_encode(m, f"{prefix}.{i}", arrays) for i, m in enumerate(value)]
        elif f.name == "pairs":
            doc["pairs"] = [list(p) for p in value]
        elif sparse.issparse(value):
            csr = sparse.csr_matrix(value)
            for part in ("data", "indices", "indptr"):
                arrays[f"{prefix}.{f.name}.{part}"] = getattr(csr, part)
            doc["arrays"][f.name] = {"csr": list(csr.shape)}
        elif isinstance(value, np.ndarray):
            arrays[f"{prefix}.{f.name}"] = value
            doc["arrays"][f.name] = "dense"
        elif value is None:
            doc[f.name] = None
        else:
            doc[f.name] = value.item() if isinstance(value, np.generic) else value
    return doc


def _decode(doc: dict[str, Any], prefix: str, archive) -> Model:
    kind = doc.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown model kind {kind!r}; known kinds: {sorted(_KINDS)}")
    cls = _KINDS[kind]
    values: dict[str, Any] = {}
    for name, entry in doc.get("arrays", {}).items():
        if entry == "dense":
            values[name] = archive[f"{prefix}.{name}"]
        else:
            parts = [archive[f"{prefix}.{name}.{p}"] for p in ("data", "indices", "indptr")]
            values[name] = sparse.csr_matrix(tuple(parts), shape=tuple(entry["csr"]))
    if "models" in doc:
        values["models"] = tuple(
            _decode(d, f"{prefix}.{i}", archive) for i, d in enumerate(doc["models"])
        )
    if "pairs" in doc:
        values["pairs"] = tuple(tuple(p) for p in doc["pairs"])
    names = {f.name for f in fields(cls)}
    for name, value in doc.items():
        if name in names and name not in values:
            values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ValueError(f"the {kind} model in the file is incomplete: {exc}") from None


def model_to_dict(model: Model) -> dict[str, Any]:
    """A JSON-ready form of ``model`` (the file format's document, arrays as lists): what the
    results store keeps for the decision-boundary plots of small 2-D problems."""
    arrays: dict[str, np.ndarray] = {}
    doc = _encode(model, "m", arrays)
    return {
        "version": FORMAT_VERSION,
        "model": doc,
        "arrays": {k: v.tolist() for k, v in arrays.items()},
    }


def model_from_dict(data: dict[str, Any]) -> Model:
    """The model of :func:`model_to_dict` (``ValueError`` on a newer version or unknown kind)."""
    version = data.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ValueError(f"model format version {version!r} is newer than {FORMAT_VERSION}")
    arrays = {k: np.asarray(v) for k, v in data["arrays"].items()}
    return _decode(data["model"], "m", arrays)


def save_model(model: Model, path: str | os.PathLike) -> None:
    """Write ``model`` to ``path`` (an ``.npz`` archive; see the module docstring)."""
    arrays: dict[str, np.ndarray] = {}
    doc = {"format": _FORMAT, "version": FORMAT_VERSION, "model": _encode(model, "m", arrays)}
    arrays[_META] = np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:  # no ".npz" appended to a name that lacks it
        np.savez(fh, **arrays)


def load_model(path: str | os.PathLike) -> Model:
    """Read a model written by :func:`save_model`.

    Raises
    ------
    ValueError
        When the file is missing, not an svmbench model, of a newer format version, or of an
        unknown kind.
    """
    try:
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"{os.fspath(path)}: no such model file") from None
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{os.fspath(path)}: not an svmbench model file ({exc})") from None
    with archive:
        if not hasattr(archive, "files") or _META not in archive.files:
            raise ValueError(f"{os.fspath(path)}: not an svmbench model file (no metadata)")
        try:
            doc = json.loads(archive[_META].tobytes().decode())
        except (ValueError, UnicodeDecodeError):
            raise ValueError(f"{os.fspath(path)}: its metadata is damaged") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"{os.fspath(path)}: not an svmbench model file")
        version = doc.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ValueError(
                f"{os.fspath(path)}: model format version {version!r} is newer than this "
                f"svmbench reads ({FORMAT_VERSION}); upgrade svmbench"
            )
        try:
            return _decode(doc["model"], "m", archive)
        except KeyError as exc:
            raise ValueError(f"{os.fspath(path)}: the model file lacks {exc}") from None


__all__ = [
    "FORMAT_VERSION",
    "BinaryModel",
    "ChainModel",
    "CrammerSingerModel",
    "KernelModel",
    "LinearModel",
    "Model",
    "MulticlassModel",
    "OneVsOneModel",
    "OneVsRestModel",
    "load_model",
    "model_from_dict",
    "model_to_dict",
    "save_model",
]
