"""The model file format, version 2: version-1 files still load, labels are stored typed and
checked on loading, and a tampered file is a clear ValueError, never a crash or an unpickle.

(Estimators saved and loaded: tests/test_estimators.py; every model kind's round trip:
tests/problems/test_models.py.)
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import BaseEstimator

from svmbench.problems import KernelDual, MulticlassHinge, SoftMarginPrimal, datasets
from svmbench.problems.loaded_classifier import (
    LoadedClassifier,
    decode_classes,
    encode_classes,
)
from svmbench.problems.model_files import (
    FORMAT_VERSION,
    load_model,
    model_from_dict,
    model_to_dict,
    save_model,
)
from svmbench.problems.models import (
    ChainModel,
    CrammerSingerModel,
    KernelModel,
    LinearModel,
    Model,
    OneVsOneModel,
)
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


# ---- untrusted files: nothing a file says can crash, hang or exhaust memory -------------------
def test_a_fifo_a_directory_and_a_device_are_refused_unread(tmp_path, fifo, returns_within):
    path, unblock = fifo  # np.load blocked on it until a writer came
    with pytest.raises(ValueError, match="fifo: not a regular file but a FIFO"):
        returns_within(10, lambda: load_model(path), unblock=unblock)
    folder = tmp_path / "folder.npz"
    folder.mkdir()
    with pytest.raises(ValueError, match="folder.npz: not a regular file but a directory"):
        load_model(folder)
    if os.path.exists("/dev/zero"):  # endless: never read
        with pytest.raises(ValueError, match="not a regular file but a character device"):
            returns_within(10, lambda: load_model("/dev/zero"))


def test_a_file_over_the_budget_is_refused_unread(saved_labelled, tmp_path):
    meta, arrays = saved_labelled
    path = tmp_path / "m.npz"
    _write(path, meta, arrays)
    size = path.stat().st_size
    with pytest.raises(ValueError, match=f"{size} bytes, over the cap of {size - 1} bytes"):
        load_model(path, max_bytes=size - 1)
    assert isinstance(load_model(path, max_bytes=size), LoadedClassifier)


@pytest.mark.parametrize(
    "content, match",
    [
        (b"some notes\n", "not an .npz \\(ZIP\\) archive: it starts with b'some n"),
        (b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00]\x94.", "not an .npz \\(ZIP\\) archive"),
        (b"svm_type c_svc\nkernel_type rbf\n", "read it with read_libsvm_model"),
        (b"", "an empty file"),
    ],
    ids=["text", "pickle", "libsvm-model", "empty"],
)
def test_a_file_that_is_no_model_never_suggests_unpickling(tmp_path, content, match):
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"notes.txt: not an svmbench model file .*{match}") as e:
        load_model(path)
    assert "pickle" not in str(e.value).replace("b'\\x80", "")  # NumPy said allow_pickle=True


def _rewrite(src, dst, *, replace=None, deflate=()):
    """``src`` copied to ``dst`` with members replaced by raw bytes and some deflated."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = (replace or {}).get(info.filename, None) or zin.read(info)
            method = zipfile.ZIP_DEFLATED if info.filename in deflate else zipfile.ZIP_STORED
            zout.writestr(info.filename, data, compress_type=method)


def test_an_empty_array_declaring_a_huge_dimension_is_refused(tmp_path):
    """A 1 KB file whose W is (10¹¹, 0) holds no bytes and makes 10¹¹ scores per row; a chain
    of 10⁵ states and no features would make (10⁵)² Viterbi candidates per position."""
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    save_model(CrammerSingerModel(np.ones((3, 2)), np.zeros(3)), good)
    _rewrite(good, bad, replace={"m.W.npy": _npy_header((10**11, 0))})
    with pytest.raises(ValueError, match="declares an array of shape \\(100000000000, 0\\)"):
        load_model(bad)
    save_model(ChainModel(np.ones((2, 3))), good)
    _rewrite(good, bad, replace={"m.E.npy": _npy_header((10**5, 0))})
    with pytest.raises(ValueError, match="holds or builds 10000100000 numbers .* over the memory"):
        load_model(bad)


def test_a_deflate_bomb_is_refused_before_it_expands(tmp_path):
    model = LinearModel(np.zeros(1 << 25), 0.0)  # 256 MiB of zeros deflate to about 256 KB
    good = tmp_path / "zeros.npz"
    save_model(model, good)
    bomb = tmp_path / "bomb.npz"
    _rewrite(good, bomb, deflate=("m.w.npy",))
    good.unlink()
    del model
    assert bomb.stat().st_size < 400_000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="m.w.npy expands from .* over the limit of 100-fold"):
            load_model(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_metadata_nested_too_deep_is_refused_before_it_is_parsed(saved_labelled, tmp_path):
    meta, arrays = saved_labelled
    path = tmp_path / "deep.npz"
    text = json.dumps(meta).replace('"kind": "linear"', '"kind": "linear", "x": ' + "[" * 2000
                                    + "]" * 2000)  # fmt: skip
    np.savez(path, __svmbench__=np.frombuffer(text.encode(), np.uint8), **arrays)
    with pytest.raises(ValueError, match="JSON nested 2002 deep, over the limit of 32"):
        load_model(path)


def _kernel_doc():
    sv = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    model = KernelModel(sv, np.array([0.5, -1.0, 0.5]), 0.1, "poly", np.array([0, 2, 3]), 5,
                        gamma=0.5, degree=2, coef0=1.0)  # fmt: skip
    ovo = OneVsOneModel((model, model, model), ((0, 1), (0, 2), (1, 2)), 3)
    return model, ovo


def _edit(path, change):
    meta, arrays = _read(path)
    change(meta)
    _write(path, meta, arrays)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda m: m["model"].update(kind=["kernel"]), "unknown model kind list \\['kernel'\\]"),
        (lambda m: m["model"].update(kernel=["rbf"]), "kernel must be one of .*got list"),
        (lambda m: m["model"].update(gamma=-1.0), "gamma must be a finite number >= 0, got -1"),
        (lambda m: m["model"].update(gamma="0.5"), "gamma must be a real number, got str"),
        (lambda m: m["model"].update(degree=10**18), "degree must be an integer in \\[1, 10000\\]"),
        (lambda m: m["model"].update(degree=2.5), "degree must be an integer, got float"),
        (lambda m: m["model"].update(coef0=None), "coef0 must be a real number, got NoneType"),
        (lambda m: m["model"].update(n_train=-1), "n_train must be an integer in \\[0, "),
        (lambda m: m["model"].update(n_train=True), "n_train must be an integer, got bool"),
        (lambda m: m["model"].update(b=[0.1]), "the kernel model's b must be a real number"),
        (lambda m: m["model"].update(extra=1), "the kernel model has no entry str 'extra'"),
        (lambda m: m["model"].pop("kernel"), "the kernel model lacks its kernel"),
        (lambda m: m["model"]["arrays"].pop("dual_coef"), "lacks the array dual_coef"),
        (lambda m: m["model"]["arrays"].update(support_vectors={"csr": [3]}),
         "CSR shape of support_vectors must be \\[rows, columns\\]"),
        (lambda m: m["model"]["arrays"].update(dual_coef={"csr": [3, 1]}),
         "entry of the kernel model's array dual_coef"),
        (lambda m: m["model"].update(kernel="precomputed"), "takes no support vectors"),
        (lambda m: m.update(extra=1), "its metadata has no entry 'extra'"),
        (lambda m: m.update(version=2.0), "version 2.0 is not a valid version"),
    ],
    ids=["kind-list", "kernel-list", "negative-gamma", "string-gamma", "huge-degree",
         "float-degree", "null-coef0", "negative-n_train", "bool-n_train", "list-b",
         "unknown-entry", "no-kernel", "no-dual_coef", "csr-shape", "csr-dual_coef",
         "precomputed-with-vectors", "unknown-top-entry", "float-version"],
)  # fmt: skip
def test_a_document_of_the_wrong_type_or_range_is_a_value_error_naming_it(tmp_path, change, match):
    path = tmp_path / "kernel.npz"
    save_model(_kernel_doc()[0], path)
    _edit(path, change)
    with pytest.raises(ValueError, match=f"kernel.npz: .*{match}"):
        load_model(path)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda m: m["model"].update(n_classes=10**9),
         "pairs tell 3 of its n_classes = 1000000000 classes apart"),
        (lambda m: m["model"].update(pairs=[[0, 1], [1, 0], [1, 2]]),
         "has the pair \\(0, 1\\) twice"),
        (lambda m: m["model"].update(pairs=[[0, 1], [0, 3], [1, 2]]),
         "pairs of distinct classes in \\[0, 3\\), got list \\[0, 3\\]"),
        (lambda m: m["model"].update(pairs=[[0, 1], [0, 2]]), "one pair of classes per binary"),
        (lambda m: m["model"].update(n_classes="3"), "n_classes must be an integer, got str"),
        (lambda m: m["model"]["models"][1].update(kind="ovo"),
         "a reduction holds binary models \\(linear, kernel\\), not 'ovo'"),
        (lambda m: m["model"].update(kind="ovr"), "the ovr model has no entry str 'pairs'"),
        (lambda m: m["model"].update(tie_break=1), "tie_break must be one of"),
    ],
    ids=["ovo-1e9-classes", "pair-twice", "class-out-of-range", "pair-missing", "string-count",
         "nested-reduction", "ovr-with-pairs", "tie-break-int"],
)  # fmt: skip
def test_class_counts_must_agree_with_the_binary_models(tmp_path, change, match):
    path = tmp_path / "ovo.npz"
    save_model(_kernel_doc()[1], path)
    _edit(path, change)
    with pytest.raises(ValueError, match=f"ovo.npz: damaged model file: .*{match}"):
        load_model(path)
    save_model(_kernel_doc()[1], path)
    meta, arrays = _read(path)
    meta["model"]["kind"] = "ovr"  # an ovr model of 3 classes needs 3 models, not 2
    meta["model"].pop("pairs")
    meta["model"].pop("tie_break")
    meta["model"]["models"] = meta["model"]["models"][:2]
    _write(path, meta, {k: v for k, v in arrays.items() if not k.startswith("m.2.")})
    with pytest.raises(ValueError, match="the ovr model of 3 classes holds 2 binary models"):
        load_model(path)


@pytest.mark.parametrize(
    "member, value, match",
    [
        ("m.support", np.array([0.0, 2.0, 3.0]), "m.support holds float64, not integers"),
        ("m.dual_coef", np.array([1, 2, 3]), "m.dual_coef holds int64, not floating-point"),
        ("m.dual_coef", np.array([0.5, -1.0]), "disagree on n: 3 and 2"),
        ("m.dual_coef", np.ones((3, 1)), "m.dual_coef has shape \\(3, 1\\), not 1-D"),
        ("m.support_vectors", np.ones((3, 2), dtype=np.complex128), "holds a complex128 array"),
        ("m.support_vectors", np.ones((3, 2), dtype=bool), "holds bool, not floating-point"),
        ("m.extra", np.ones(2), "it holds the array m.extra, which its metadata lacks"),
        ("m.support", np.array([0, 2, 9]), "support must hold indices in \\[0, n_train=5\\)"),
    ],
    ids=["float-support", "int-coef", "short-coef", "2d-coef", "complex", "bool", "extra-member",
         "support-out-of-range"],
)  # fmt: skip
def test_every_member_is_checked_against_the_document(tmp_path, member, value, match):
    path = tmp_path / "kernel.npz"
    save_model(_kernel_doc()[0], path)
    meta, arrays = _read(path)
    _write(path, meta, {**arrays, member: value})
    with pytest.raises(ValueError, match=f"damaged model file: .*{match}"):
        load_model(path)


@pytest.mark.parametrize(
    "kind, member, index",
    [("linear", "m.w", 1), ("kernel", "m.dual_coef", 0), ("kernel", "m.support_vectors", 3),
     ("csr", "m.support_vectors.data", 1), ("crammer_singer", "m.W", 4),
     ("crammer_singer", "m.b", 2), ("chain", "m.E", 0), ("chain", "m.T", 3)],
)  # fmt: skip
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_infinite_numbers_are_refused(tmp_path, kind, member, index, bad):
    sv = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    model = {
        "linear": LinearModel(np.array([1.0, -2.0]), 0.5),
        "kernel": _kernel_doc()[0],
        "csr": KernelModel(sparse.csr_matrix(sv), np.ones(3), 0.0, "rbf", np.arange(3), 3),
        "crammer_singer": CrammerSingerModel(np.ones((3, 2)), np.zeros(3)),
        "chain": ChainModel(np.ones((2, 2)), np.ones((2, 2))),
    }[kind]
    path = tmp_path / "m.npz"
    save_model(model, path)
    meta, arrays = _read(path)
    array = arrays[member].astype(np.float64)
    array.reshape(-1)[index] = bad
    _write(path, meta, {**arrays, member: array})
    with pytest.raises(ValueError, match=f"the array {member} holds NaN or infinite numbers"):
        load_model(path)
    with pytest.raises(ValueError, match="holds NaN or inf"):  # nor does saving write one
        save_model(LinearModel(np.array([1.0, bad])), tmp_path / "never.npz")
    assert not (tmp_path / "never.npz").exists()


_CSR_SCRIPT = """
import numpy as np, json, sys
from scipy import sparse
from svmbench.problems.model_files import load_model, save_model
from svmbench.problems.models import KernelModel
sv = sparse.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
save_model(KernelModel(sv, np.array([1.0, -1.0]), 0.1, "rbf", np.arange(2), 2), "good.npz")
with np.load("good.npz") as a:
    meta = a["__svmbench__"]
    arrays = {k: a[k] for k in a.files if k != "__svmbench__"}
for name, part, value in json.loads(sys.argv[1]):
    bad = arrays[f"m.support_vectors.{part}"].copy()
    bad[-1 if part == "indptr" and name == "end" else 0] = value
    np.savez("bad.npz", __svmbench__=meta, **{**arrays, f"m.support_vectors.{part}": bad})
    try:
        load_model("bad.npz").predict(np.ones((4, 3)))
        print(name, "predicted")
    except ValueError as exc:
        print(name, "refused:", exc)
"""


def test_broken_csr_structure_is_refused_before_any_jitted_code(tmp_path):
    """In a fresh interpreter: out-of-range indices once reached Numba and killed it (SIGSEGV)."""
    cases = [("index-past-the-columns", "indices", 2_000_000), ("negative-index", "indices", -7),
             ("indptr-start", "indptr", 1), ("end", "indptr", 9),
             ("indptr-decreasing", "indptr", 5)]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _CSR_SCRIPT, json.dumps(cases)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "NUMBA_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert set(lines) == {c[0] for c in cases}
    for name, part, _ in cases:
        expected = "column indices outside \\[0, 3\\)" if part == "indices" else "broken indptr"
        assert re.match(f"refused: .*{expected}", lines[name]), (name, lines[name])


def test_a_precomputed_test_kernel_as_csr_is_read_in_the_size_of_its_nonzeros():
    n_train = 2**31 - 1  # a dense row of this kernel: 16 GiB; its CSR rows: a few numbers
    model = KernelModel(None, np.array([2.0, -1.0, 0.5, 1.0]), 0.25, "precomputed",
                        np.array([3, 7, n_train - 1, 3]), n_train)  # fmt: skip
    K = sparse.csr_matrix(([1.0, 2.0, 4.0, 8.0], ([0, 0, 1, 1], [3, 5, n_train - 1, 7])),
                          shape=(2, n_train))  # fmt: skip
    tracemalloc.start()
    try:  # row 0: (2 + 1)·1 (support 3 twice) + 0·2; row 1: 0.5·4 − 1·8
        np.testing.assert_allclose(model.decision_function(K), [3.25, -5.75])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # K[:, support] took an index of n_train entries: 8 GiB
    small = KernelModel(None, np.array([2.0, -1.0]), 0.0, "precomputed", np.array([1, 3]), 4)
    D = np.arange(8.0).reshape(2, 4)
    np.testing.assert_array_equal(
        small.decision_function(sparse.csr_matrix(D)), small.decision_function(D)
    )


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_non_finite_inputs_and_overflowing_scores_are_value_errors():
    model = LinearModel(np.array([1e308, 1e308]), 0.0)
    with pytest.raises(ValueError, match="X must contain only finite values"):
        model.predict(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="decision values of the LinearModel overflow"):
        model.predict(np.array([[1.0, 1.0]]))  # 2e308: inf, once read as +1 or -1 silently


def test_the_results_store_documents_are_checked_as_files_are():
    doc = model_to_dict(_kernel_doc()[0])
    assert isinstance(model_from_dict(json.loads(json.dumps(doc))), KernelModel)
    for change, match in [
        (lambda d: d["model"].update(kind=["x"]), "unknown model kind list"),
        (lambda d: d["arrays"].update({"m.support": [[0], [1, 2]]}), "not a list of numbers"),
        (lambda d: d["arrays"].update({"m.dual_coef": ["a", "b", "c"]}), "not a list of numbers"),
        (lambda d: d["arrays"].update({"m.dual_coef": [float("nan"), 1.0, 1.0]}), "NaN"),
        (lambda d: d["model"].update(degree=10**9), "degree must be an integer in"),
    ]:
        bad = json.loads(json.dumps(doc))
        change(bad)
        with pytest.raises(ValueError, match=match):
            model_from_dict(bad)
