"""LIBSVM's model files, checked against LIBSVM itself (the official Python bindings): a file
LIBSVM wrote predicts here what ``svm_predict`` predicts, a file svmbench wrote predicts in
LIBSVM what svmbench predicts, and a hostile file is a clear ValueError."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_iris

from svmbench.problems import KernelDual
from svmbench.problems import libsvm_model_files as lmf
from svmbench.problems.libsvm_model_files import (
    LibsvmClassifier,
    read_libsvm_model,
    write_libsvm_model,
)
from svmbench.problems.models import KernelModel, LinearModel, OneVsOneModel
from svmbench.solvers import registry

svmutil = pytest.importorskip("libsvm.svmutil")

_X, _Y = load_iris(return_X_y=True)
X3 = (_X - _X.mean(axis=0)) / _X.std(axis=0)
Y3 = np.array([10, 20, 30])[_Y]  # three classes, LIBSVM labels 10, 20, 30
X2, Y2 = X3[50:], np.where(_Y[50:] == 1, 1, -1)  # versicolor (+1, seen first) vs virginica

#: svm-train's kernel options and the matching svmbench kernel parameters
KERNELS = {
    "linear": ("-t 0", {"kernel": "linear"}),
    "poly": ("-t 1 -d 3 -g 0.2 -r 1", {"kernel": "poly", "degree": 3, "gamma": 0.2, "coef0": 1.0}),
    "rbf": ("-t 2 -g 0.5", {"kernel": "rbf", "gamma": 0.5}),
    "sigmoid": ("-t 3 -g 0.05 -r -1", {"kernel": "sigmoid", "gamma": 0.05, "coef0": -1.0}),
}


def _libsvm_predict(model, X, y=None):
    """LIBSVM's labels and decision values (n,) or (n, k(k−1)/2) of the rows of X."""
    y = np.zeros(X.shape[0]) if y is None else y
    labels, _, values = svmutil.svm_predict(list(y), X, model, "-q")
    values = np.array(values)
    return np.array(labels), values[:, 0] if values.shape[1] == 1 else values


def _rel(a, b) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


def _libsvm_file(tmp_path, X, y, options, name="m.model"):
    model = svmutil.svm_train(list(y), X, f"-s 0 -c 1 -e 1e-8 -q {options}")
    path = tmp_path / name
    svmutil.svm_save_model(str(path), model)
    return path, model


# ---- LIBSVM writes, svmbench reads ---------------------------------------------------------------
@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("classes", [2, 3])
def test_a_libsvm_file_predicts_here_what_svm_predict_predicts(tmp_path, kernel, classes):
    X, y = (X2, Y2) if classes == 2 else (X3, Y3)
    path, trained = _libsvm_file(tmp_path, X, y, KERNELS[kernel][0])
    clf = read_libsvm_model(path)
    assert isinstance(clf, LibsvmClassifier)
    assert clf.kernel == KERNELS[kernel][1]["kernel"]
    model = clf.model_
    assert isinstance(model, KernelModel if classes == 2 else OneVsOneModel)
    # what LIBSVM reads back from its own file (its SV values written with 8 digits)
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), X, y)
    ours = clf.pairwise_decision_function(X)
    assert ours.shape == values.shape
    assert _rel(ours, values) < 1e-10
    assert np.array_equal(clf.predict(X), labels)
    assert set(clf.classes_) == set(np.unique(y))
    if classes == 2:  # the first label is the positive side of LIBSVM's decision value
        assert clf.labels_[0] == clf.classes_[1]
        assert np.array_equal(clf.decision_function(X) > 0, labels == clf.labels_[0])
    # against the model LIBSVM trained in memory: as close as the 8 digits of its SV values
    _, trained_values = _libsvm_predict(trained, X, y)
    assert _rel(ours, trained_values) < 1e-5


def test_a_binary_file_with_minus_one_seen_first_keeps_libsvm_sign(tmp_path):
    # LIBSVM puts +1 first for ±1 labels whichever it saw first; either way we follow the file
    order = np.argsort(Y2, kind="stable")  # the -1 examples first
    path, _ = _libsvm_file(tmp_path, X2[order], Y2[order], "-t 2 -g 0.5")
    clf = read_libsvm_model(path)
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), X2)
    assert _rel(clf.decision_function(X2), values) < 1e-10
    assert np.array_equal(clf.predict(X2), labels)


def test_a_precomputed_kernel_file_reads_its_serial_numbers(tmp_path):
    K = np.exp(-0.5 * ((X2[:, None, :] - X2[None, :, :]) ** 2).sum(-1))
    serial = np.arange(1, len(X2) + 1)[:, None]
    problem = svmutil.svm_problem(list(Y2), np.hstack([serial, K]), isKernel=True)
    model = svmutil.svm_train(problem, "-s 0 -t 4 -c 1 -q")
    path = tmp_path / "pre.model"
    svmutil.svm_save_model(str(path), model)
    clf = read_libsvm_model(path, n_features=len(X2))
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), np.hstack([serial, K]))
    assert clf.kernel == "precomputed" and clf.n_features_in_ == len(X2)
    assert _rel(clf.decision_function(K), values) < 1e-10
    assert np.array_equal(clf.predict(K), labels)
    with pytest.raises(ValueError, match="n_features must be an int >= "):
        read_libsvm_model(path, n_features=3)
    again = tmp_path / "again.model"  # and back to LIBSVM: 0:<serial> lines
    write_libsvm_model(clf, again)
    labels_again, values_again = _libsvm_predict(
        svmutil.svm_load_model(str(again)), np.hstack([serial, K])
    )
    assert np.array_equal(labels_again, labels) and _rel(values_again, values) < 1e-12


def test_probability_parameters_are_kept(tmp_path):
    path, _ = _libsvm_file(tmp_path, X3, Y3, "-t 2 -g 0.5 -b 1")
    text = path.read_text()
    assert "probA" in text and "probB" in text
    clf = read_libsvm_model(path)
    prob_a = [
        float(v) for v in next(li for li in text.splitlines() if li.startswith("probA")).split()[1:]
    ]
    assert clf.prob_a_.shape == clf.prob_b_.shape == (3,)
    assert np.array_equal(clf.prob_a_, prob_a)
    assert read_libsvm_model(_libsvm_file(tmp_path, X3, Y3, "-t 2", "n.model")[0]).prob_a_ is None


# ---- svmbench writes, LIBSVM reads ---------------------------------------------------------------
def _smo(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return registry.get("smo", tol=1e-8).solve(problem).model


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_a_binary_svmbench_model_predicts_the_same_in_libsvm(tmp_path, kernel):
    model = _smo(KernelDual(X2, Y2.astype(float), C=1.0, **KERNELS[kernel][1]))
    path = tmp_path / "ours.model"
    write_libsvm_model(model, path)
    assert "label 1 -1\n" in path.read_text()
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), X2)
    f = model.decision_function(X2)
    assert _rel(values, f) < 1e-12
    assert np.array_equal(labels, model.predict(X2))


def test_sparse_support_vectors_are_written_as_their_nonzeros(tmp_path):
    X = X2.copy()
    X[np.abs(X) < 0.5] = 0.0
    model = _smo(KernelDual(sparse.csr_matrix(X), Y2.astype(float), kernel="rbf", gamma=0.5))
    path = tmp_path / "csr.model"
    write_libsvm_model(model, path)
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), X)
    assert _rel(values, model.decision_function(X)) < 1e-12
    assert np.array_equal(labels, model.predict(X))
    assert read_libsvm_model(path, n_features=4).predict(X).tolist() == labels.tolist()


@pytest.mark.parametrize("kernel", ["rbf", "poly", "sigmoid"])
def test_a_one_vs_one_classifier_predicts_its_labels_in_libsvm(tmp_path, kernel):
    from svmbench import SVMClassifier

    params = dict(KERNELS[kernel][1])
    clf = SVMClassifier(
        solver="smo", multiclass="ovo", tol=1e-8, **params
    ).fit(X3, np.array([7, -2, 30])[_Y])  # fmt: skip
    assert clf.classes_.tolist() == [-2, 7, 30]
    path = tmp_path / "ovo.model"
    write_libsvm_model(clf, path)
    assert "label -2 7 30\n" in path.read_text()
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), X3)
    pairwise = np.column_stack([m.decision_function(X3) for m in clf.model_.models])
    assert _rel(values, pairwise) < 1e-12
    assert np.array_equal(labels, clf.predict(X3))


def test_a_binary_classifier_writes_its_positive_class_first(tmp_path):
    from svmbench import SVMClassifier

    clf = SVMClassifier(solver="smo", kernel="rbf", gamma=0.5, tol=1e-8).fit(X2, Y2 + 4)
    path = tmp_path / "bin.model"
    write_libsvm_model(clf, path)
    assert "label 5 3\n" in path.read_text()  # classes_ = [3, 5]; 5 where f ≥ 0
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), X2)
    assert _rel(values, clf.decision_function(X2)) < 1e-12
    assert np.array_equal(labels, clf.predict(X2))


def test_what_svmbench_refuses_to_write(tmp_path):
    from svmbench import SVMClassifier

    path = tmp_path / "x.model"
    path.write_text("untouched")
    with pytest.raises(TypeError, match="no support vectors"):
        write_libsvm_model(LinearModel(np.ones(4), 0.5), path)
    ovr = SVMClassifier(solver="smo", kernel="rbf", multiclass="ovr").fit(X3, Y3)
    with pytest.raises(TypeError, match="one-vs-one"):
        write_libsvm_model(ovr, path)
    strings = SVMClassifier(solver="smo", kernel="rbf").fit(X2, np.where(Y2 > 0, "a", "b"))
    with pytest.raises(ValueError, match="integer labels"):
        write_libsvm_model(strings, path)
    floats = SVMClassifier(solver="smo", kernel="rbf").fit(X2, Y2.astype(float))
    with pytest.raises(ValueError, match="integer labels"):
        write_libsvm_model(floats, path)
    ovo = SVMClassifier(solver="smo", kernel="rbf", multiclass="ovo").fit(X3, Y3).model_
    confident = OneVsOneModel(ovo.models, ovo.pairs, 3, tie_break="confidence")
    with pytest.raises(ValueError, match="ties"):
        write_libsvm_model(confident, path)
    linear_ovr = SVMClassifier(solver="dcd", kernel="linear", bias="regularized").fit(X3, Y3)
    with pytest.raises(TypeError, match="OneVsRestModel"):
        write_libsvm_model(linear_ovr, path)
    nan_sv = KernelModel(np.array([[np.nan, 1.0]]), [1.0], 0.0, "rbf", [0], 1, gamma=1.0)
    with pytest.raises(ValueError, match="NaN or infinite"):
        write_libsvm_model(nan_sv, path)
    with pytest.raises(TypeError, match="fitted svmbench classifier"):
        write_libsvm_model(object(), path)
    assert path.read_text() == "untouched"
    assert sorted(os.listdir(tmp_path)) == ["x.model"]  # no temporary file left


# ---- round trips ---------------------------------------------------------------------------------
def test_our_write_then_our_read_is_exact(tmp_path):
    y = np.where(_Y[:100] == 0, 1.0, -1.0)
    model = _smo(KernelDual(X3[:100], y, kernel="poly", degree=2, gamma=0.3, coef0=0.5))
    path = tmp_path / "a.model"
    write_libsvm_model(model, path)
    back = read_libsvm_model(path)
    # the same numbers (written as the shortest text that reads back exactly), summed in
    # LIBSVM's order (grouped by class)
    assert np.allclose(back.decision_function(X3), model.decision_function(X3), rtol=1e-13)
    assert np.array_equal(back.model_.b, model.b)
    assert sorted(back.model_.dual_coef) == sorted(model.dual_coef[model.dual_coef != 0])
    assert back.classes_.tolist() == [-1, 1]
    assert np.array_equal(back.predict(X3), model.predict(X3))


def test_libsvm_file_through_us_and_back_keeps_everything(tmp_path):
    path, _ = _libsvm_file(tmp_path, X3, Y3, "-t 2 -g 0.5 -b 1")
    clf = read_libsvm_model(path)
    again = tmp_path / "again.model"
    write_libsvm_model(clf, again)
    back = read_libsvm_model(again)
    assert back.labels_.tolist() == clf.labels_.tolist() == [10, 20, 30]
    assert np.array_equal(back.prob_a_, clf.prob_a_) and np.array_equal(back.prob_b_, clf.prob_b_)
    # the same numbers; a support vector of coefficient 0 in its class's first pair (LIBSVM
    # writes it) moves within its class, so the sums run in another order
    assert _rel(back.pairwise_decision_function(X3), clf.pairwise_decision_function(X3)) < 1e-13
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(again)), X3)
    original_labels, original_values = _libsvm_predict(svmutil.svm_load_model(str(path)), X3)
    assert np.array_equal(labels, original_labels)
    assert _rel(values, original_values) < 1e-12


def test_svmbench_predict_reads_a_libsvm_model(tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file

    from svmbench.benchmarks.cli import main as cli

    data = tmp_path / "iris.txt"
    dump_svmlight_file(X3, Y3, str(data), zero_based=False)
    path, _ = _libsvm_file(tmp_path, X3, Y3, "-t 2 -g 0.05 -c 0.1")
    labels, _ = _libsvm_predict(svmutil.svm_load_model(str(path)), X3)
    expected = np.mean(labels == Y3)
    assert 0.5 < expected < 1.0  # an accuracy the command could get wrong
    code = cli.main(["predict", str(path), "--data", f"libsvm:path={data}"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"accuracy: {expected:.4f}" in out
    assert "with labels [10, 20, 30]" in out


# ---- hostile files -------------------------------------------------------------------------------
GOOD = """svm_type c_svc
kernel_type rbf
gamma 0.5
nr_class 3
total_sv 4
rho 0.1 -0.2 0.3
label 1 2 3
nr_sv 2 1 1
SV
0.5 0.25 1:1 3:2.5
-0.5 0.75 2:-1
-0.5 -0.25 1:0.5 2:0.5
-0.5 -0.75 4:1
"""


@pytest.mark.parametrize("variant", ["as is", "CRLF", "blank lines", "no trailing newline"])
def test_the_hand_written_file_reads(tmp_path, variant):
    text = {
        "as is": GOOD,
        "CRLF": GOOD.replace("\n", "\r\n"),
        "blank lines": GOOD.replace("nr_class", "\nnr_class") + "\n\n",
        "no trailing newline": GOOD.rstrip("\n"),
    }[variant]
    path = tmp_path / "good.model"
    path.write_bytes(text.encode())
    clf = read_libsvm_model(path)
    assert clf.n_features_in_ == 4 and clf.labels_.tolist() == [1, 2, 3]
    labels, values = _libsvm_predict(svmutil.svm_load_model(str(path)), np.eye(4))
    assert _rel(clf.pairwise_decision_function(np.eye(4)), values) < 1e-15
    assert np.array_equal(clf.predict(np.eye(4)), labels)


HOSTILE = {
    "truncated": (GOOD[: GOOD.index("-0.5 -0.25")], "ends after 2 of total_sv = 4"),
    "no SV line": (GOOD[: GOOD.index("SV\n")], "ends before the SV line"),
    "extra SV": (GOOD + "1 1 1:1\n", "more support vector lines than total_sv"),
    "total_sv vs nr_sv": (GOOD.replace("total_sv 4", "total_sv 5"), "nr_sv sums to 4"),
    "rho count": (GOOD.replace("rho 0.1 -0.2 0.3", "rho 0.1 -0.2"), "rho must have 3 values"),
    "label count": (GOOD.replace("label 1 2 3", "label 1 2"), "label must have 3 values"),
    "duplicate labels": (GOOD.replace("label 1 2 3", "label 1 2 1"), "distinct"),
    "float label": (GOOD.replace("label 1 2 3", "label 1 2 3.5"), "a label must be an integer"),
    "huge label": (GOOD.replace("label 1 2 3", "label 1 2 9999999999"), r"a label must be in"),
    "negative index": (GOOD.replace("2:-1", "-2:-1"), "line 11: feature indices must be"),
    "zero index": (GOOD.replace("2:-1", "0:-1"), r"line 11: feature indices must be in \[1"),
    "huge index": (GOOD.replace("4:1", "99999999999:1"), "line 13: feature indices must be"),
    "index past the cap": (GOOD.replace("4:1", "2147483648:1"), "feature indices must be in"),
    "decreasing indices": (GOOD.replace("1:1 3:2.5", "3:1 1:2.5"), "increase strictly"),
    "NaN value": (GOOD.replace("3:2.5", "3:nan"), "line 10: feature values must be finite"),
    "inf coefficient": (GOOD.replace("0.5 0.25", "inf 0.25"), "line 10: the coefficients must"),
    "overflow": (GOOD.replace("3:2.5", "3:1e999"), "finite numbers"),
    "NaN rho": (GOOD.replace("rho 0.1", "rho nan"), "line 6: rho must be finite"),
    "missing coefficient": (GOOD.replace("-0.5 0.75 2:-1", "-0.5 2:-1"), "starts with 2 coeff"),
    "no colon": (GOOD.replace("2:-1", "2-1"), "index:value pairs"),
    "nu_svc": (GOOD.replace("c_svc", "nu_svc"), "only C-SVC models"),
    "one_class": (GOOD.replace("c_svc", "one_class"), "'one_class'.*only C-SVC"),
    "epsilon_svr": (GOOD.replace("c_svc", "epsilon_svr"), "only C-SVC"),
    "unknown svm_type": (GOOD.replace("c_svc", "magic"), "'magic' \\(unknown\\)"),
    "unknown kernel": (GOOD.replace("kernel_type rbf", "kernel_type laplace"), "unknown kernel"),
    "no gamma": (GOOD.replace("gamma 0.5\n", ""), "lacks gamma"),
    "zero gamma": (GOOD.replace("gamma 0.5", "gamma 0"), "gamma must be > 0"),
    "poly without degree": (GOOD.replace("rbf", "polynomial"), "lacks degree"),
    "nr_class 1": (GOOD.replace("nr_class 3", "nr_class 1"), r"nr_class must be in \[2"),
    "nr_class huge": (GOOD.replace("nr_class 3", "nr_class 100000"), "nr_class must be in"),
    "total_sv huge": (
        GOOD.replace("total_sv 4", "total_sv 2000000000").replace("nr_sv 2 1 1", "nr_sv 2 1 1"),
        "cannot fit in a file",
    ),
    "negative nr_sv": (GOOD.replace("nr_sv 2 1 1", "nr_sv 3 -1 2"), "nr_sv must be in"),
    "unknown keyword": (GOOD.replace("SV\n", "weights 1\nSV\n"), "unknown header keyword"),
    "repeated keyword": (GOOD.replace("SV\n", "gamma 2\nSV\n"), "gamma appears twice"),
    "underscore number": (GOOD.replace("3:2.5", "3:2_5"), "finite numbers"),
    "SV with words": (GOOD.replace("SV\n", "SV extra\n"), "'SV' stands alone"),
    "Windows line ends and a blank tail": (
        GOOD.replace("\n", "\r\n") + "\n\n" + "x",
        "more support",
    ),
    "binary junk": ("\x00\xff\xfe" * 10, "unknown header keyword"),
    "empty": ("", "ends before the SV line"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_file_is_a_clear_value_error(tmp_path, case):
    text, message = HOSTILE[case]
    path = tmp_path / "bad.model"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ValueError, match=message) as info:
        read_libsvm_model(path)
    assert str(path) in str(info.value)


def test_a_fifo_a_directory_a_missing_file_and_a_large_file_are_refused(tmp_path, monkeypatch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would block until a writer came: it is never opened
    with pytest.raises(ValueError, match="not a regular file"):
        read_libsvm_model(fifo)
    with pytest.raises(ValueError, match="a directory"):
        read_libsvm_model(tmp_path)
    with pytest.raises(ValueError, match="no such LIBSVM model file"):
        read_libsvm_model(tmp_path / "missing.model")
    path = tmp_path / "good.model"
    path.write_text(GOOD)
    monkeypatch.setattr(lmf, "MAX_FILE_BYTES", len(GOOD) - 1)
    with pytest.raises(ValueError, match="over the cap"):
        read_libsvm_model(path)
    monkeypatch.setattr(lmf, "MAX_FILE_BYTES", len(GOOD))
    assert read_libsvm_model(path).n_features_in_ == 4


def test_long_lines_and_large_expansions_are_refused(tmp_path, monkeypatch):
    path = tmp_path / "good.model"
    path.write_text(GOOD)
    monkeypatch.setattr(lmf, "MAX_LINE_BYTES", 16)
    with pytest.raises(ValueError, match="line 6 is longer than 16 bytes"):
        read_libsvm_model(path)
    monkeypatch.setattr(lmf, "MAX_LINE_BYTES", 1 << 20)
    # its 6 stored values (CSR: under half of the 4 × 4 matrix) appear in k − 1 = 2 pairs each
    monkeypatch.setattr(lmf, "MAX_MODEL_VALUES", 11)
    with pytest.raises(ValueError, match="would hold 12 numbers"):
        read_libsvm_model(path)
    monkeypatch.setattr(lmf, "MAX_MODEL_VALUES", 12)
    assert read_libsvm_model(path).n_features_in_ == 4


def test_a_linear_kernel_whose_w_would_not_fit_is_refused(tmp_path):
    """One feature index of 2³¹ − 1 in a linear-kernel file: predicting would build a dense
    w = Σ c_s x_s of 16 GiB. It now counts in MAX_MODEL_VALUES, as the support vectors do."""
    text = (
        "svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 2\nrho 0.5\nlabel 1 -1\n"
        "nr_sv 1 1\nSV\n1 1:1 2147483647:1\n-1 1:2\n"
    )
    path = tmp_path / "wide.model"
    path.write_text(text)
    with pytest.raises(ValueError, match="and a linear kernel's w\\) would hold 2147483650 numb"):
        read_libsvm_model(path)
    narrow = tmp_path / "narrow.model"
    narrow.write_text(text.replace("2147483647:1", "3:1"))
    clf = read_libsvm_model(narrow)  # f = 1·(x1 + x3) − 1·2x1 − 0.5
    np.testing.assert_allclose(clf.decision_function(np.array([[1.0, 0.0, 2.0]])), [0.5])
