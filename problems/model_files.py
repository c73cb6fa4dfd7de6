"""Saving and loading fitted models (:mod:`~svmbench.problems.models`) and classifiers:
:func:`save_model` and :func:`load_model` for files, :func:`model_to_dict` and
:func:`model_from_dict` for the JSON-ready form the results store keeps.

File format
-----------
:func:`save_model` writes one NumPy ``.npz`` archive (a ZIP of ``.npy`` members, the name
given used as it is) with ``allow_pickle=False``, and :func:`load_model` reads it with
``allow_pickle=False``: a model file never holds pickled Python objects. The member
``__svmbench__`` is the UTF-8 bytes (a uint8 array) of a JSON document::

    {"format": "svmbench-model",
     "version": 2,
     "model": {"kind": "linear" | "kernel" | "crammer_singer" | "ovr" | "ovo" | "chain",
               <scalar parameters: "b", "kernel", "gamma", "degree", "coef0", "n_train",
                "n_classes", "tie_break", "pairs", or null for an absent array>,
               "arrays": {<field>: "dense" | {"csr": [n_rows, n_cols]}},
               "models": [<nested model documents, for "ovr" and "ovo">]},
     "classifier": {"classes": {"kind": "str" | "int" | "float" | "bool", "dtype": ...,
                                "values": [...]},
                    "feature_names": [<str>, ...]}}

``"classifier"`` is present only in a file saved from a fitted estimator (an
:class:`~svmbench.SVMClassifier`, the best estimator of an :class:`~svmbench.SVMClassifierCV`, or
a :class:`~svmbench.problems.loaded_classifier.LoadedClassifier`), ``"feature_names"`` only when
it was fitted on named columns: :func:`load_model` then returns a ``LoadedClassifier`` that
predicts the original labels; otherwise it returns the bare model (±1 or class indices). The
labels are JSON values with their kind (:mod:`~svmbench.problems.loaded_classifier`), checked on
loading against the model's class count.

Each array field is the member ``<prefix>.<field>``; a CSR matrix (the support vectors of a
sparse kernel model) is the three members ``<prefix>.<field>.data``, ``.indices`` and
``.indptr``, its shape in the document. The prefix is ``m`` for the model and ``m.<i>`` for the
i-th binary model of a reduction (``m.0.w``, ``m.2.dual_coef``, …). ``version`` increases when
the format changes; this code writes version :data:`FORMAT_VERSION` and reads every version up
to it: a version-1 file (no ``"classifier"``) loads as its bare model. A file of a newer or
invalid version, of an unknown kind, missing or damaged, or that is not an svmbench model is a
``ValueError`` that says which. Before any array is read, each member's ``.npy`` header must
declare a numeric array whose size is the bytes the member holds, so that a tampered header
cannot make loading allocate more than the file can fill.

For example, a kernel model over CSR support vectors is stored as the members ``m.dual_coef``,
``m.support``, ``m.support_vectors.data``, ``m.support_vectors.indices``,
``m.support_vectors.indptr`` and ``__svmbench__``: its size is the support vectors plus a few
hundred bytes.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from dataclasses import fields
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from svmbench.problems.loaded_classifier import (
    LoadedClassifier,
    decode_classes,
    decode_feature_names,
    encode_classes,
    encode_feature_names,
    model_class_count,
)
from svmbench.problems.models import (
    ChainModel,
    CrammerSingerModel,
    KernelModel,
    LinearModel,
    Model,
    OneVsOneModel,
    OneVsRestModel,
)

__all__ = ["FORMAT_VERSION", "load_model", "model_from_dict", "model_to_dict", "save_model"]

#: The version of the file format this code writes (and the newest it reads).
FORMAT_VERSION = 2
_FORMAT = "svmbench-model"
_META = "__svmbench__"


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


class _Damaged(Exception):
    """A model document or archive that does not hold what its kind needs."""


def _plain(name: str, value) -> Any:
    """A JSON scalar of a model's parameter (NumPy scalars become Python ones)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot save a model whose {name} is {value}")
        return value
    raise TypeError(f"cannot save the {type(value).__name__} parameter {name} of a model")


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
                arrays[f"{prefix}.{f.name}.{part}"] = np.asarray(getattr(csr, part))
            doc["arrays"][f.name] = {"csr": [int(s) for s in csr.shape]}
        elif isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise TypeError(f"cannot save the object array {f.name} of a model")
            arrays[f"{prefix}.{f.name}"] = value
            doc["arrays"][f.name] = "dense"
        else:
            doc[f.name] = _plain(f.name, value)
    return doc


def _decode(doc, prefix: str, archive) -> Model:
    """The model of a document; ``_Damaged`` for a missing member or ill-typed entry,
    ``ValueError`` for an unknown kind or invalid parameters."""
    if not isinstance(doc, dict):
        raise _Damaged(f"a model entry is a {type(doc).__name__}, not an object")
    kind = doc.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown model kind {kind!r}; known kinds: {sorted(_KINDS)}")
    cls = _KINDS[kind]
    names = {f.name for f in fields(cls)}
    values: dict[str, Any] = {}
    entries = doc.get("arrays", {})
    if not isinstance(entries, dict):
        raise _Damaged(f"the arrays of the {kind} model are not an object")
    for name, entry in entries.items():
        if name not in names:
            raise _Damaged(f"the {kind} model has no array {name!r}")
        if entry == "dense":
            values[name] = archive[f"{prefix}.{name}"]
        elif isinstance(entry, dict) and isinstance(entry.get("csr"), list):
            parts = [archive[f"{prefix}.{name}.{p}"] for p in ("data", "indices", "indptr")]
            values[name] = sparse.csr_matrix(tuple(parts), shape=tuple(entry["csr"]))
        else:
            raise _Damaged(f"the entry of array {name!r} is {entry!r}")
    if "models" in names:
        nested = doc.get("models")
        if not isinstance(nested, list):
            raise _Damaged(f"the {kind} model lists no binary models")
        values["models"] = tuple(_decode(d, f"{prefix}.{i}", archive) for i, d in enumerate(nested))
    for name, value in doc.items():
        if name in names and name not in values:
            values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:  # a missing or ill-typed parameter
        raise _Damaged(f"the {kind} model is incomplete: {exc}") from None


def _check_version(version) -> None:
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"model format version {version!r} is not a valid version (an int >= 1)")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"model format version {version} is newer than this svmbench reads "
            f"({FORMAT_VERSION}); upgrade svmbench"
        )


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
    """The model of :func:`model_to_dict`.

    Raises
    ------
    ValueError
        On a newer or invalid version, an unknown kind, or a damaged document.
    """
    if not isinstance(data, dict):
        raise ValueError(f"a model document must be a dict, got {type(data).__name__}")
    _check_version(data.get("version"))
    try:
        arrays = {k: np.asarray(v) for k, v in data["arrays"].items()}
        return _decode(data["model"], "m", arrays)
    except (_Damaged, KeyError, AttributeError) as exc:
        raise ValueError(f"the model document is damaged: {exc}") from None


def _write_npz(fh, arrays: dict[str, np.ndarray]) -> None:
    """An ``.npz`` archive of ``arrays`` as ``np.savez`` writes it, with ``allow_pickle=False``
    (``np.savez`` takes that flag only in recent NumPy versions)."""
    with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, array in arrays.items():
            with zf.open(f"{name}.npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def _classifier_parts(obj) -> tuple[Model, dict[str, Any] | None]:
    """The model of what :func:`save_model` was given and its ``"classifier"`` entry (None for a
    bare model). An estimator is recognized by its attributes (``model_``, ``classes_``,
    ``feature_names_in_``; ``best_estimator_`` for a cross-validated one): this layer imports no
    estimator."""
    if isinstance(obj, Model):
        return obj, None
    if not hasattr(obj, "model_") and hasattr(obj, "best_estimator_"):  # SVMClassifierCV
        obj = obj.best_estimator_
    if callable(getattr(obj, "kernel", None)):
        raise TypeError(
            "cannot save a classifier fitted with a callable kernel: a model file holds no "
            "function (that would need pickle); fit with a named kernel or kernel='precomputed'"
        )
    model = getattr(obj, "model_", None)
    if model is None and isinstance(obj, BaseEstimator):
        check_is_fitted(obj)  # NotFittedError for an estimator not fitted
    if not isinstance(model, Model) or not hasattr(obj, "classes_"):
        hint = (
            " (of a pipeline, save the classifier, its last step: a model file holds no "
            "preprocessing)"
            if hasattr(obj, "steps")
            else ""
        )
        raise TypeError(
            "model must be an svmbench model or a fitted svmbench classifier (SVMClassifier, "
            f"SVMClassifierCV), got {type(obj).__name__}{hint}"
        )
    n_classes = model_class_count(model)
    entry: dict[str, Any] = {"classes": encode_classes(obj.classes_)}
    if len(entry["classes"]["values"]) != n_classes:
        raise ValueError(
            f"the classifier has {len(entry['classes']['values'])} classes but its "
            f"{type(model).__name__} tells {n_classes} apart"
        )
    names = getattr(obj, "feature_names_in_", None)
    if names is not None:
        entry["feature_names"] = encode_feature_names(names, model.n_features)
    return model, entry


def save_model(model, path: str | os.PathLike) -> None:
    """Write ``model`` to ``path``: one ``.npz`` archive (see the module docstring), the name
    used as it is (no ``.npz`` appended), never pickled.

    Parameters
    ----------
    model : Model, fitted SVMClassifier or SVMClassifierCV, or LoadedClassifier
        A bare model is saved as it is (and loads as a bare model, predicting ±1 or class
        indices); a classifier is saved with its ``classes_`` and ``feature_names_in_`` (and
        loads as a :class:`~svmbench.problems.loaded_classifier.LoadedClassifier` that predicts
        those labels).
    path : str or path-like

    Raises
    ------
    TypeError
        When ``model`` is neither an svmbench model nor a fitted classifier, or its labels are
        not all integers, floats, strings or booleans (the file is then not touched).
    ValueError
        For labels the file cannot hold (duplicates, NaN) or that do not match the model.
    sklearn.exceptions.NotFittedError
        For an estimator that is not fitted.
    """
    model, classifier = _classifier_parts(model)
    arrays: dict[str, np.ndarray] = {}
    doc = {"format": _FORMAT, "version": FORMAT_VERSION, "model": _encode(model, "m", arrays)}
    if classifier is not None:
        doc["classifier"] = classifier
    arrays[_META] = np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        _write_npz(fh, arrays)


#: How far a deflated ZIP member can expand (deflate's own limit is about 1032 to 1).
_MAX_DEFLATE_RATIO = 1100


def _check_members(path, size: int) -> None:
    """``_Damaged`` unless every member of the archive is a numeric ``.npy`` array whose header
    declares exactly the bytes the member holds, the members fitting in the file's ``size``
    bytes: read before ``np.load`` allocates what a (tampered) header declares."""
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if sum(info.compress_size for info in infos) > size:
            raise _Damaged("its members declare more bytes than the file holds")
        for info in infos:
            stored = info.compress_type == zipfile.ZIP_STORED
            if (stored and info.file_size != info.compress_size) or (
                not stored
                and (
                    info.compress_type != zipfile.ZIP_DEFLATED
                    or info.file_size > _MAX_DEFLATE_RATIO * info.compress_size + 1024
                )
            ):
                raise _Damaged(f"the member {info.filename} declares an impossible size")
            if info.flag_bits & 0x1:
                raise _Damaged(f"the member {info.filename} is encrypted")
            with zf.open(info) as fh:
                try:
                    version = np.lib.format.read_magic(fh)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
                    elif version == (2, 0):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
                    else:
                        raise ValueError(f".npy version {version}")
                except (ValueError, EOFError, OSError) as exc:
                    raise _Damaged(f"the member {info.filename} is no array: {exc}") from None
                if dtype.hasobject:
                    raise _Damaged(
                        f"the member {info.filename} holds Python objects, which a model file "
                        "never does (read with allow_pickle=False)"
                    )
                if dtype.kind not in "biuf" or dtype.itemsize == 0 or min(shape, default=0) < 0:
                    raise _Damaged(f"the member {info.filename} holds a {dtype} array {shape}")
                declared = math.prod(shape) * dtype.itemsize
                if declared != info.file_size - fh.tell():
                    raise _Damaged(
                        f"the member {info.filename} declares an array of shape {shape} "
                        f"({declared} bytes) but holds {info.file_size - fh.tell()} bytes"
                    )


def _decode_classifier(entry, model: Model) -> LoadedClassifier:
    """The classifier of a ``"classifier"`` entry, its labels checked against ``model``."""
    if not isinstance(entry, dict):
        raise _Damaged(f"the classifier entry is a {type(entry).__name__}, not an object")
    try:
        n_classes = model_class_count(model)
    except TypeError as exc:
        raise _Damaged(str(exc)) from None
    try:
        classes = decode_classes(entry.get("classes"), n_classes)
        names = entry.get("feature_names")
        if names is not None:
            names = decode_feature_names(names, model.n_features)
    except ValueError as exc:
        raise _Damaged(str(exc)) from None
    return LoadedClassifier(model, classes, names)


def load_model(path: str | os.PathLike) -> Model | LoadedClassifier:
    """Read a model written by :func:`save_model` (with ``allow_pickle=False``).

    Returns
    -------
    Model or LoadedClassifier
        For a file saved from a classifier, a
        :class:`~svmbench.problems.loaded_classifier.LoadedClassifier` that predicts its
        original labels; for a file saved from a bare model (every version-1 file), the model.

    Raises
    ------
    ValueError
        When the file is missing, not an svmbench model (not an ``.npz`` archive, or one without
        svmbench metadata), of a newer or invalid format version, of an unknown kind, or
        damaged (tampered labels included); the message names the file and says which.
    """
    where = os.fspath(path)
    try:
        size = os.path.getsize(path)
        if zipfile.is_zipfile(path):
            _check_members(path, size)
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"{where}: no such model file") from None
    except _Damaged as exc:
        raise ValueError(f"{where}: not an svmbench model file ({exc})") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{where}: not an svmbench model file ({exc})") from None
    if not hasattr(archive, "files"):  # a bare .npy array
        raise ValueError(f"{where}: not an svmbench model file (a single array, not an archive)")
    with archive:
        if _META not in archive.files:
            raise ValueError(f"{where}: not an svmbench model file (no svmbench metadata)")
        try:
            doc = json.loads(archive[_META].tobytes().decode())
        except (ValueError, UnicodeDecodeError):
            raise ValueError(f"{where}: not an svmbench model file (damaged metadata)") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"{where}: not an svmbench model file (metadata of another format)")
        try:
            _check_version(doc.get("version"))
            model = _decode(doc.get("model"), "m", archive)
            if doc["version"] >= 2 and "classifier" in doc:
                return _decode_classifier(doc["classifier"], model)
            return model
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        except KeyError as exc:  # NpzFile: "'m.w.npy' is not a file in the archive"
            raise ValueError(f"{where}: damaged model file: it lacks the array {exc}") from None
        except (_Damaged, zipfile.BadZipFile) as exc:
            raise ValueError(f"{where}: damaged model file: {exc}") from None
