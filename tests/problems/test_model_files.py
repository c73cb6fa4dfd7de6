"""The model file format, version 2: version-1 files still load, labels are stored typed and
checked on loading, and a tampered file is a clear ValueError, never a crash or an unpickle.

(Estimators saved and loaded: tests/test_estimators.py; every model kind's round trip:
tests/problems/test_models.py.)
"""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from svmbench.problems import KernelDual, MulticlassHinge, SoftMarginPrimal, datasets
from svmbench.problems.loaded_classifier import (
    LoadedClassifier,
    decode_classes,
    encode_classes,
)
from svmbench.problems.model_files import FORMAT_VERSION, load_model, save_model
from svmbench.problems.models import ChainModel, LinearModel, Model
from svmbench.solvers import registry

FIXTURES = Path(__file__).parent / "fixtures"
D = datasets.load("gaussian:n=40,d=3,sep=1.5,seed=0,split=0.25")
IRIS = datasets.load("iris:split=0.3,seed=0")


def _solve(name, problem, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return registry.get(name, **options).solve(problem).model


# ---- version 1 ---------------------------------------------------------------------------------
#: The fixtures of format version 1 (written by the code of that version) and the problems they
#: were trained on, re-trained here with the same deterministic solvers.
V1 = {
    "linear": (lambda: _solve("dcd", SoftMarginPrimal(D.X, D.y, bias="regularized"), seed=0), D),
    "kernel": (lambda: _solve("smo", KernelDual(D.X, D.y, kernel="rbf", gamma=0.5)), D),
    "ovo_kernel": (
        lambda: _solve(
            "ovo", MulticlassHinge(IRIS.X[:, :2], IRIS.y), binary_solver="smo", kernel="rbf",
            gamma=0.5, bias="free",
        ),
        IRIS,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(V1))
def test_version_1_files_still_load_as_bare_models(name):
    path = FIXTURES / f"model_v1_{name}.npz"
    with np.load(path, allow_pickle=False) as archive:
        assert json.loads(archive["__svmbench__"].tobytes())["version"] == 1
    loaded = load_model(path)
    assert isinstance(loaded, Model) and not isinstance(loaded, LoadedClassifier)
    train, data = V1[name]
    model = train()
    assert type(loaded) is type(model)
    X = data.X_test if name != "ovo_kernel" else data.X_test[:, :2]
    np.testing.assert_allclose(
        loaded.decision_function(X), model.decision_function(X), rtol=0, atol=1e-10
    )
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert set(np.unique(loaded.predict(X))) <= ({-1.0, 1.0} if name != "ovo_kernel" else {0, 1, 2})


def test_a_file_of_a_newer_version_says_so(tmp_path):
    model = LinearModel(np.array([1.0, -2.0]), 0.5)
    path = tmp_path / "m.npz"
    save_model(LoadedClassifier(model, ["no", "yes"]), path)
    meta, arrays = _read(path)
    assert meta["version"] == FORMAT_VERSION == 2
    _write(path, {**meta, "version": 3}, arrays)
    with pytest.raises(
        ValueError, match="version 3 is newer than this svmbench reads .2.; upgrade"
    ):
        load_model(path)


# ---- labels: encoded with their kind, decoded with checks -------------------------------------
@pytest.mark.parametrize(
    "classes",
    [
        np.array(["benign", "malignant"]),
        np.array(["b", "a", "c"]),  # the order of classes_ is kept, sorted or not
        np.array([3, 7]),
        np.array([3, 7], dtype=np.uint8),
        np.array([-(2**63), 2**63 - 1]),
        np.array([False, True]),
        np.array([0.5, 2.0]),
        np.array([0.1, 1e300], dtype=np.float64),
        np.array([0.5, 2.0], dtype=np.float32),
        np.array(["x", "y"], dtype=object),  # a pandas column of strings
    ],
    ids=["str", "str-unsorted", "int", "uint8", "int-extremes", "bool", "float", "float-wide",
         "float32", "object-str"],
)  # fmt: skip
def test_labels_round_trip_with_their_dtype_kind(classes):
    entry = json.loads(json.dumps(encode_classes(classes)))
    back = decode_classes(entry, classes.size)
    assert back.tolist() == classes.tolist()
    assert back.dtype.kind == ("U" if classes.dtype.kind == "O" else classes.dtype.kind)
    if classes.dtype.kind != "O":
        assert back.dtype == classes.dtype


class Label:
    pass


def _objects(*values) -> np.ndarray:
    """A 1-D object array of ``values`` (tuples included, kept whole)."""
    array = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        array[i] = v
    return array


@pytest.mark.parametrize(
    "classes, error, match",
    [
        (_objects((1, 2), (3, 4)), TypeError, "label \\(1, 2\\)"),
        (np.array([Label(), Label()], dtype=object), TypeError, "Label"),
        (np.array([None, "a"], dtype=object), TypeError, "NoneType"),
        (np.array([1, "a"], dtype=object), TypeError, "mixed types \\(int, str\\)"),
        (np.array([True, 2], dtype=object), TypeError, "mixed types \\(bool, int\\)"),
        (np.array([b"a", b"b"]), TypeError, "dtype \\|S1"),
        (np.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]"), TypeError, "datetime64"),
        (np.array([1 + 1j, 2j]), TypeError, "complex128"),
        (np.array([np.nan, 1.0]), ValueError, "non-finite"),
        (np.array(["a", "a"]), ValueError, "distinct"),
        (np.array(["a"]), ValueError, "at least 2 classes"),
        (np.array([["a", "b"]]), ValueError, "1-D"),
    ],
    ids=["tuples", "objects", "none", "mixed", "bool-int", "bytes", "dates", "complex", "nan",
         "duplicates", "one-class", "2-d"],
)  # fmt: skip
def test_labels_a_file_cannot_hold_are_refused_on_saving(tmp_path, classes, error, match):
    with pytest.raises(error, match=match):
        encode_classes(classes)
    path = tmp_path / "m.npz"
    path.write_bytes(b"keep me")

    class Fitted:  # an estimator, as save_model recognizes one
        model_ = LinearModel(np.ones(2), 0.0)
        classes_ = classes

    with pytest.raises(error, match=match):
        save_model(Fitted(), path)
    assert path.read_bytes() == b"keep me"


def test_save_refuses_labels_that_do_not_match_the_model(tmp_path):
    class Fitted:
        model_ = LinearModel(np.ones(2), 0.0)
        classes_ = np.array(["a", "b", "c"])

    with pytest.raises(ValueError, match="3 classes but its LinearModel tells 2 apart"):
        save_model(Fitted(), tmp_path / "m.npz")

    class Chain:
        model_ = ChainModel(np.ones((2, 3)))
        classes_ = np.array(["a", "b"])

    with pytest.raises(TypeError, match="ChainModel is not a classifier"):
        save_model(Chain(), tmp_path / "m.npz")

    class Unfitted(BaseEstimator):
        def fit(self, X, y):
            return self

    with pytest.raises(ValueError, match="This Unfitted instance is not fitted yet"):
        save_model(Unfitted(), tmp_path / "m.npz")


# ---- tampered files ---------------------------------------------------------------------------
def _read(path):
    with np.load(path, allow_pickle=False) as archive:
        meta = json.loads(archive["__svmbench__"].tobytes())
        arrays = {k: archive[k] for k in archive.files if k != "__svmbench__"}
    return meta, arrays


def _write(path, meta, arrays):
    np.savez(path, __svmbench__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)


@pytest.fixture
def saved_labelled(tmp_path):
    model = LinearModel(np.array([1.0, -2.0, 0.5]), 0.25)
    path = tmp_path / "good.npz"
    save_model(LoadedClassifier(model, ["benign", "malignant"], ["a", "b", "c"]), path)
    return _read(path)


def _classes(meta, **change):
    return {**meta, "classifier": {**meta["classifier"], "classes": {
        **meta["classifier"]["classes"], **change}}}  # fmt: skip


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda m: _classes(m, values=["a", "b", "c"]), "lists 3 class labels for a model of 2"),
        (lambda m: _classes(m, values=["a"]), "lists 1 class labels for a model of 2"),
        (lambda m: _classes(m, values=["a", "a"]), "must be distinct"),
        (lambda m: _classes(m, values=["a", 1]), "the str classes hold 1 \\(int\\)"),
        (lambda m: _classes(m, values=["a", ["b"]]), "hold \\['b'\\] \\(list\\)"),
        (lambda m: _classes(m, values="ab"), "labels are a str, not a list"),
        (lambda m: _classes(m, kind="object"), "kind 'object'; known kinds"),
        (lambda m: _classes(m, kind="pickle"), "kind 'pickle'"),
        (lambda m: _classes(m, kind="int", values=[1.5, 2.5]), "the int classes hold 1.5"),
        (lambda m: _classes(m, kind="int", values=[True, 2]), "the int classes hold True"),
        (lambda m: _classes(m, kind="bool", values=[0, 1]), "the bool classes hold 0"),
        (lambda m: _classes(m, kind="float", values=[1, 2]), "the float classes hold 1 \\(int"),
        (lambda m: _classes(m, kind="float", values=[float("nan"), 1.0]), "non-finite"),
        (lambda m: _classes(m, kind="int", values=[1, 300], dtype="uint8"), "do not fit dtype"),
        (lambda m: _classes(m, kind="int", values=[1, 2], dtype="object"), "dtype 'object'"),
        (lambda m: _classes(m, kind="int", values=[1, 2], dtype="float64"), "dtype 'float64'"),
        (lambda m: _classes(m, dtype="U10"), "string classes take no dtype"),
        (lambda m: {**m, "classifier": {**m["classifier"], "classes": ["a", "b"]}},
         "classes entry is a list"),
        (lambda m: {**m, "classifier": ["benign", "malignant"]}, "classifier entry is a list"),
        (lambda m: {**m, "classifier": {**m["classifier"], "feature_names": ["a", "b"]}},
         "names 2 features for a model of 3"),
        (lambda m: {**m, "classifier": {**m["classifier"], "feature_names": ["a", "b", 3]}},
         "feature names are not a list of strings"),
    ],
)  # fmt: skip
def test_tampered_labels_are_a_clear_value_error(saved_labelled, tmp_path, change, match):
    meta, arrays = saved_labelled
    path = tmp_path / "bad.npz"
    _write(path, change(meta), arrays)
    with pytest.raises(ValueError, match=f"bad.npz: damaged model file: .*{match}"):
        load_model(path)


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_a_labelled_file_round_trips_and_version_1_ignores_labels(saved_labelled, tmp_path):
    meta, arrays = saved_labelled
    path = tmp_path / "m.npz"
    _write(path, meta, arrays)
    clf = load_model(path)
    assert isinstance(clf, LoadedClassifier)
    assert clf.classes_.tolist() == ["benign", "malignant"] and clf.classes_.dtype.kind == "U"
    assert clf.feature_names_in_.tolist() == ["a", "b", "c"] and clf.n_features_in_ == 3
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # f = 1.25 and -1.75
    assert clf.predict(X).tolist() == ["malignant", "benign"]
    np.testing.assert_allclose(clf.decision_function(X), [1.25, -1.75])
    # a version-1 document knew no labels: a "classifier" entry in one is not read
    _write(path, {**meta, "version": 1}, arrays)
    assert isinstance(load_model(path), LinearModel)


def test_the_chain_model_takes_no_labels(tmp_path):
    path = tmp_path / "chain.npz"
    save_model(ChainModel(np.ones((2, 3))), path)
    meta, arrays = _read(path)
    meta["classifier"] = {"classes": {"kind": "str", "values": ["a", "b"]}}
    _write(path, meta, arrays)
    with pytest.raises(ValueError, match="damaged model file: a ChainModel is not a classifier"):
        load_model(path)


def _npy_header(shape, descr="<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def test_a_header_declaring_more_than_the_file_holds_allocates_nothing(saved_labelled, tmp_path):
    meta, arrays = saved_labelled
    good = tmp_path / "good.npz"
    _write(good, meta, arrays)
    for name, descr in {"__svmbench__": "|u1", "m.w": "<f8"}.items():
        path = tmp_path / f"huge-{name}.npz"  # 10**12 items declared, a few bytes held
        with zipfile.ZipFile(good) as src, zipfile.ZipFile(path, "w") as dst:
            for info in src.infolist():
                data = src.read(info)
                if info.filename == f"{name}.npy":
                    fh = io.BytesIO(data)
                    np.lib.format.read_magic(fh)
                    np.lib.format.read_array_header_1_0(fh)
                    data = _npy_header((10**12,), descr) + data[fh.tell() :]
                dst.writestr(info, data)
        with pytest.raises(ValueError, match="declares an array of shape \\(1000000000000,\\)"):
            load_model(path)
    # a member of pickled objects is refused before NumPy is asked to read it
    path = tmp_path / "object.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("__svmbench__.npy", _npy_header((2,), "|O") + b"\x80\x04N.")
    with pytest.raises(ValueError, match="holds Python objects.*never unpickled") as error:
        load_model(path)
    assert "allow_pickle" not in str(error.value)


def test_a_compressed_archive_still_loads(saved_labelled, tmp_path):
    meta, arrays = saved_labelled
    path = tmp_path / "deflated.npz"
    np.savez_compressed(
        path, __svmbench__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays
    )
    assert load_model(path).classes_.tolist() == ["benign", "malignant"]


# ---- the loaded classifier checks its input ---------------------------------------------------
@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_loaded_classifier_checks_feature_count_and_names():
    pd = pytest.importorskip("pandas")
    clf = LoadedClassifier(LinearModel(np.array([1.0, -1.0]), 0.0), [3, 7], ["u", "v"])
    X = np.array([[2.0, 1.0], [0.0, 1.0]])
    assert clf.predict(pd.DataFrame(X, columns=["u", "v"])).tolist() == [7, 3]
    with pytest.raises(ValueError, match="X has 3 features, but LoadedClassifier is expecting 2"):
        clf.predict(np.ones((1, 3)))
    with pytest.raises(ValueError, match="feature names should match.*unexpected: \\['w'\\]"):
        clf.predict(pd.DataFrame(X, columns=["u", "w"]))
    with pytest.raises(ValueError, match="feature names should match.*another order"):
        clf.predict(pd.DataFrame(X, columns=["v", "u"]))
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        assert clf.predict(X).tolist() == [7, 3]
    unnamed = LoadedClassifier(LinearModel(np.array([1.0, -1.0]), 0.0), [3, 7])
    assert not hasattr(unnamed, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        unnamed.predict(pd.DataFrame(X, columns=["u", "v"]))
    assert not hasattr(unnamed, "fit")
    with pytest.raises(ValueError, match="classes must hold 2 labels"):
        LoadedClassifier(LinearModel(np.ones(2)), ["a", "b", "c"])
