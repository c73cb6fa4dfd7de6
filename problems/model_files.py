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
     "model": {"kind": "linear" | "kernel" | "crammer_singer" | "ovr" | "ovo" | "chain" | ...,
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
``ValueError`` that says which.

Reading trusts nothing
----------------------
A model file is untrusted input. :func:`load_model` opens only a regular file (a FIFO, a
directory or a device is refused before it is opened for reading) of at most ``max_bytes``
(:data:`MAX_MODEL_BYTES`, 1 GiB, by default), and never hands it to ``np.load``:

1. the archive (:mod:`~svmbench.problems.model_archive`): a bounded ZIP directory, members
   stored or deflated at most 100-fold, each ``.npy`` header declaring a numeric array of at
   most two dimensions and exactly the bytes the member holds, all of them within the budget;
2. the metadata: at most :data:`MAX_METADATA_BYTES` of UTF-8 JSON nested at most 32 deep,
   parsed only then, of this format and of a version it reads;
3. the document against its schema (:mod:`~svmbench.problems.model_documents`): every entry's
   type and range, the kernel's parameters, the class counts against the binary models, and
   every member's dtype and shape against what the document says;
4. the arrays, read into memory of their declared size: finite numbers, sound CSR structure,
   then the model classes' own checks, and the labels against the class count.

Any refusal is a ``ValueError`` naming the file; none suggests unpickling anything.

For example, a kernel model over CSR support vectors is stored as the members ``m.dual_coef``,
``m.support``, ``m.support_vectors.data``, ``m.support_vectors.indices``,
``m.support_vectors.indptr`` and ``__svmbench__``: its size is the support vectors plus a few
hundred bytes.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
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
from svmbench.problems.model_archive import (
    DamagedModelFile,
    ModelArchive,
    NotAModelFile,
    NpyHeader,
)
from svmbench.problems.model_documents import FLOAT, build_model, check_document, check_shapes
from svmbench.problems.models import Model
from svmbench.problems.regression_model import KernelRegressionModel
from svmbench.problems.untrusted import loads_json, open_regular
from svmbench.problems.validation import check_int

__all__ = [
    "FORMAT_VERSION",
    "MAX_METADATA_BYTES",
    "MAX_MODEL_BYTES",
    "load_model",
    "model_from_dict",
    "model_to_dict",
    "save_model",
]

#: The version of the file format this code writes (and the newest it reads).
FORMAT_VERSION = 2
#: The default memory budget of :func:`load_model`: the file's size, and its arrays as float64.
MAX_MODEL_BYTES = 1 << 30
#: The largest metadata document read (16 MiB: some 40 000 binary models of a reduction).
MAX_METADATA_BYTES = 16 << 20
_FORMAT = "svmbench-model"
_META = "__svmbench__"


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
            if not np.all(np.isfinite(csr.data)):
                raise ValueError(f"cannot save a model whose {f.name} holds NaN or inf")
            for part in ("data", "indices", "indptr"):
                arrays[f"{prefix}.{f.name}.{part}"] = np.asarray(getattr(csr, part))
            doc["arrays"][f.name] = {"csr": [int(s) for s in csr.shape]}
        elif isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise TypeError(f"cannot save the object array {f.name} of a model")
            if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                raise ValueError(f"cannot save a model whose {f.name} holds NaN or inf")
            arrays[f"{prefix}.{f.name}"] = value
            doc["arrays"][f.name] = "dense"
        else:
            doc[f.name] = _plain(f.name, value)
    return doc


def _check_version(version) -> None:
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(
            f"model format version {version!r} is not a valid version (an int from 1 to "
            f"{FORMAT_VERSION})"
        )
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


def model_from_dict(data: dict[str, Any], *, max_bytes: int = MAX_MODEL_BYTES) -> Model:
    """The model of :func:`model_to_dict`, checked as a model file is (the document against its
    schema, the arrays against the document, finite numbers, CSR structure).

    Raises
    ------
    ValueError
        On a newer or invalid version, an unknown kind, or a damaged document.
    """
    if not isinstance(data, dict):
        raise ValueError(f"a model document must be a dict, got {type(data).__name__}")
    _check_version(data.get("version"))
    try:
        lists = data.get("arrays")
        if not isinstance(lists, dict):
            raise DamagedModelFile("it holds no object of arrays")
        layout = check_document(data.get("model"))
        roles = {spec.member: spec.role for spec in layout.arrays}
        arrays, headers = {}, {}
        for name, values in lists.items():
            if name not in roles:
                raise DamagedModelFile(f"it holds the array {str(name)[:80]}, which it names not")
            try:
                array = np.asarray(values)
            except (TypeError, ValueError, OverflowError):
                array = np.asarray(None)
            if array.dtype.kind not in ("iuf" if roles[name] == FLOAT else "iu"):
                raise DamagedModelFile(f"the array {name} is not a list of numbers of its kind")
            arrays[name] = array.astype(np.float64) if roles[name] == FLOAT else array
            headers[name] = NpyHeader(array.shape, array.dtype, False, 0)
        check_shapes(layout, headers, max_bytes)
        return build_model(data["model"], arrays)
    except DamagedModelFile as exc:
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
    if isinstance(model, KernelRegressionModel):  # a regressor: no classes, its bare model
        return model, None
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
    model : Model, fitted SVMClassifier, SVMClassifierCV or SVMRegressor, or LoadedClassifier
        A bare model is saved as it is (and loads as a bare model, predicting ±1, class
        indices or, for a regression model, real values), a fitted SVMRegressor as its bare
        model; a classifier is saved with its ``classes_`` and ``feature_names_in_`` (and
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
    # a temporary file beside the target, renamed into place: a failed write leaves the old
    # file (or none), never a half-written model
    target = os.fspath(path)
    fd, tmp = tempfile.mkstemp(
        prefix=".svmbench-", suffix=".npz.part", dir=os.path.dirname(target) or "."
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_npz(fh, arrays)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would have made it, not mkstemp's 0o600
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _decode_classifier(entry, model: Model) -> LoadedClassifier:
    """The classifier of a ``"classifier"`` entry, its labels checked against ``model``."""
    if not isinstance(entry, dict):
        raise DamagedModelFile(f"the classifier entry is a {type(entry).__name__}, not an object")
    try:
        n_classes = model_class_count(model)
    except TypeError as exc:
        raise DamagedModelFile(str(exc)) from None
    try:
        classes = decode_classes(entry.get("classes"), n_classes)
        names = entry.get("feature_names")
        if names is not None:
            names = decode_feature_names(names, model.n_features)
    except ValueError as exc:
        raise DamagedModelFile(str(exc)) from None
    return LoadedClassifier(model, classes, names)


def load_model(path: str | os.PathLike, *, max_bytes: int = MAX_MODEL_BYTES):
    """Read a model written by :func:`save_model`: untrusted input, checked before use.

    The file must be a regular file (a FIFO, a directory or a device is refused without being
    read) of at most ``max_bytes``, an ``.npz`` archive whose members are checked before any is
    read (:mod:`~svmbench.problems.model_archive`), with JSON metadata of bounded size and depth
    that its schema accepts (:mod:`~svmbench.problems.model_documents`), arrays of the shapes
    and dtypes it states, finite numbers and sound CSR matrices. Nothing is unpickled.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int, default=MAX_MODEL_BYTES (1 GiB)
        The memory budget: the file's size, and its arrays as float64 or int64.

    Returns
    -------
    Model or LoadedClassifier
        For a file saved from a classifier, a
        :class:`~svmbench.problems.loaded_classifier.LoadedClassifier` that predicts its
        original labels; for a file saved from a bare model (every version-1 file), the model.

    Raises
    ------
    ValueError
        When the file is missing, not an svmbench model file (not a regular file, not an
        ``.npz`` archive, or one without svmbench metadata), of a newer or invalid format
        version, of an unknown kind, damaged or tampered with (labels included), or over the
        budget; the message names the file and says which.
    """
    where = os.fspath(path)
    max_bytes = check_int("max_bytes", max_bytes, low=1)
    with open_regular(where, max_bytes=max_bytes, what="model file") as fh:
        size = os.fstat(fh.fileno()).st_size
        try:
            with ModelArchive(fh, size, max_bytes=max_bytes) as archive:
                doc = _read_metadata(archive)
                try:
                    _check_version(doc.get("version"))
                    for key in doc:
                        if key not in _ENTRIES:
                            raise DamagedModelFile(f"its metadata has no entry {str(key)[:40]!r}")
                    layout = check_document(doc.get("model"))
                    headers = {k: v for k, v in archive.headers.items() if k != _META}
                    check_shapes(layout, headers, max_bytes)
                    arrays = {spec.member: archive.read(spec.member) for spec in layout.arrays}
                    model = build_model(doc["model"], arrays)
                    if doc["version"] >= 2 and "classifier" in doc:
                        return _decode_classifier(doc["classifier"], model)
                    return model
                except ValueError as exc:
                    raise ValueError(f"{where}: {exc}") from None
        except NotAModelFile as exc:
            hint = _libsvm_hint(fh)
            raise ValueError(f"{where}: not an svmbench model file ({exc}){hint}") from None
        except DamagedModelFile as exc:
            raise ValueError(f"{where}: damaged model file: {exc}") from None


#: The entries of a model file's metadata.
_ENTRIES = ("format", "version", "model", "classifier")


def _read_metadata(archive: ModelArchive) -> dict:
    """The metadata document (``NotAModelFile`` for an archive of another program)."""
    header = archive.headers.get(_META)
    if header is None:
        raise NotAModelFile("no svmbench metadata")
    if header.dtype != np.uint8 or len(header.shape) != 1 or header.size > MAX_METADATA_BYTES:
        raise NotAModelFile(
            f"its metadata is a {header.dtype} array of shape {header.shape}, not at most "
            f"{MAX_METADATA_BYTES} bytes of JSON"
        )
    try:
        doc = loads_json(archive.read(_META).tobytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise NotAModelFile(f"damaged metadata: {str(exc)[:100]}") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
        raise NotAModelFile("metadata of another format")
    return doc


def _libsvm_hint(fh) -> str:
    fh.seek(0)
    if fh.read(9) == b"svm_type ":
        return "; it is a LIBSVM model file: read it with read_libsvm_model"
    return ""
