"""Models predict like their problems, hold only what they need, and survive pickle and disk.

Every model kind is checked against an independent computation: the problem's own
``decision_function``/``predict`` on the solution's variables (training and new data, dense and
CSR), a binary problem solved on its own for one-vs-rest, scikit-learn's SVC for one-vs-one, and
the libraries themselves for the anchors.
"""

from __future__ import annotations

import gc
import json
import pickle
import warnings
import weakref
import zipfile
from typing import Any, NamedTuple

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import (
    ChainStructuredHinge,
    HardMarginPrimal,
    KernelDual,
    Logistic,
    MulticlassHinge,
    NuSVCDual,
    OneClassDual,
    SoftMarginDual,
    SoftMarginPrimal,
    SVRDual,
    SVRPrimal,
    datasets,
)
from svmbench.problems.base import Problem
from svmbench.problems.kernels import kernel_matrix
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
    OneVsOneModel,
    OneVsRestModel,
)
from svmbench.problems.structured import digit_sequences
from svmbench.solvers import registry
from svmbench.solvers.base import Status

BIN = datasets.load("gaussian:n=120,d=5,sep=1.5,seed=0,split=0.3")
SEP = datasets.load("gaussian:n=60,d=5,sep=8,seed=1,split=0.3")  # separable
REG = datasets.load("friedman1:n=80,seed=0,split=0.3")
MULTI = datasets.load("iris:split=0.3,seed=0")  # 105 train, 45 test; two classes overlap
SEQ = digit_sequences(10, 10, min_length=2, max_length=4, seed=0)
GAMMA = 0.3
#: Bytes a saved model may add to its arrays (ZIP and .npy headers, the JSON metadata).
SMALL = 4096


def _sparsify(X):
    """CSR with about half the entries zero."""
    return sparse.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))


def _solve(name, problem, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ssvm_sgd's ConvergenceWarning at max_iter
        return registry.get(name, **options).solve(problem)


# ---------------------------------------------------------------------------------------------
# One solved result of every model kind, with its problem and its data
# ---------------------------------------------------------------------------------------------


class Case(NamedTuple):
    solver: str
    options: dict
    problem: Problem
    X: Any  # training data (dense or CSR; the kernel against the training set if precomputed)
    X_test: Any


def _cases():
    """key -> the Case of one model kind."""
    csr, csr_test = _sparsify(BIN.X), _sparsify(BIN.X_test)
    mc_csr, mc_csr_test = _sparsify(MULTI.X), _sparsify(MULTI.X_test)
    K, K_test = (kernel_matrix(X, BIN.X, kernel="rbf", gamma=GAMMA) for X in (BIN.X, BIN.X_test))
    out = {
        "linear-regularized": ("dcd", {}, SoftMarginPrimal(BIN.X, BIN.y, bias="regularized")),
        "linear-free": ("clarabel", {}, SoftMarginPrimal(BIN.X, BIN.y, bias="free")),
        "linear-dual": ("dcd", {}, SoftMarginDual(BIN.X, BIN.y, bias="none")),
        "linear-csr": ("dcd", {}, SoftMarginPrimal(csr, BIN.y, bias="none")),
        "hard_margin": ("clarabel", {}, HardMarginPrimal(SEP.X, SEP.y)),
        "kernel-rbf": ("smo", {}, KernelDual(BIN.X, BIN.y, kernel="rbf", gamma=GAMMA)),
        "kernel-poly": (
            "smo", {}, KernelDual(BIN.X, BIN.y, kernel="poly", gamma=GAMMA, degree=2, coef0=1.0),
        ),
        "kernel-linear": ("smo", {}, KernelDual(BIN.X, BIN.y, kernel="linear")),
        "kernel-regularized": (
            "clarabel", {}, KernelDual(BIN.X, BIN.y, kernel="rbf", gamma=GAMMA, bias="regularized"),
        ),
        "kernel-csr": ("smo", {}, KernelDual(csr, BIN.y, kernel="rbf", gamma=GAMMA)),
        "kernel-precomputed": ("smo", {}, KernelDual(K, BIN.y, kernel="precomputed")),
        "crammer_singer": ("cs_dcd", {}, MulticlassHinge(MULTI.X, MULTI.y, bias="regularized")),
        "crammer_singer-csr": ("cs_dcd", {}, MulticlassHinge(mc_csr, MULTI.y, bias="none")),
        "ovr-linear": (
            "ovr", {"binary_solver": "dcd"}, MulticlassHinge(MULTI.X, MULTI.y, bias="regularized"),
        ),
        "ovr-kernel": (
            "ovr", {"binary_solver": "smo", "kernel": "rbf", "gamma": GAMMA, "bias": "free"},
            MulticlassHinge(MULTI.X, MULTI.y),
        ),
        "ovo-linear": (
            "ovo", {"binary_solver": "clarabel", "bias": "free"},
            MulticlassHinge(mc_csr, MULTI.y),
        ),
        "ovo-kernel": (
            "ovo", {"binary_solver": "smo", "kernel": "rbf", "gamma": GAMMA, "bias": "free"},
            MulticlassHinge(MULTI.X, MULTI.y),
        ),
        "chain": (
            "ssvm_sgd", {"max_iter": 3},
            ChainStructuredHinge(SEQ.X, SEQ.y, SEQ.lengths, n_states=10),
        ),
        "chain-no-transitions": (
            "ssvm_sgd", {"max_iter": 3},
            ChainStructuredHinge(SEQ.X, SEQ.y, SEQ.lengths, n_states=10, transitions=False),
        ),
    }  # fmt: skip
    test_X = {
        "linear-csr": csr_test,
        "kernel-csr": csr_test,
        "kernel-precomputed": K_test,
        "crammer_singer-csr": mc_csr_test,
        "ovo-linear": mc_csr_test,
    }
    cases = {}
    for key, (solver, options, problem) in out.items():
        if key.startswith("chain"):
            X_test = SEQ.X_test
        elif isinstance(problem, MulticlassHinge):
            X_test = MULTI.X_test
        elif key == "hard_margin":
            X_test = SEP.X_test
        else:
            X_test = BIN.X_test
        cases[key] = Case(solver, options, problem, problem.X, test_X.get(key, X_test))
    return cases


CASES = _cases()
KINDS = list(CASES)
BINARY = [k for k in KINDS if k.startswith(("linear", "hard", "kernel"))]
EXPECTED_TYPE = {
    "linear": LinearModel, "hard": LinearModel, "kernel": KernelModel,
    "crammer": CrammerSingerModel, "ovr": OneVsRestModel, "ovo": OneVsOneModel,
    "chain": ChainModel,
}  # fmt: skip


@pytest.fixture(scope="module")
def results():
    return {key: _solve(c.solver, c.problem, **c.options) for key, c in CASES.items()}


def _args(key, part):
    """The arguments of ``predict`` on the training (``part="X"``) or test (``"X_test"``) data."""
    X = getattr(CASES[key], part)
    if key.startswith("chain"):
        return X, SEQ.lengths if part == "X" else SEQ.lengths_test
    return (X,)


# ---------------------------------------------------------------------------------------------
# Every result carries a model of the right kind
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", KINDS)
def test_every_result_kind_carries_its_model(results, key):
    result = results[key]
    assert result.status not in (Status.INFEASIBLE, Status.NUMERICAL_ERROR), result.message
    assert type(result.model) is EXPECTED_TYPE[key.split("-")[0].split("_")[0]]
    assert result.model.n_features == CASES[key].X.shape[1]


# ---------------------------------------------------------------------------------------------
# Models predict like their problems (training and new data, dense and CSR)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("part", ["X", "X_test"], ids=["train", "test"])
@pytest.mark.parametrize("key", BINARY)
def test_binary_models_predict_like_their_problem(results, key, part):
    r, problem, X = results[key], CASES[key].problem, getattr(CASES[key], part)
    if isinstance(problem, KernelDual):
        expected = problem.decision_function(r.alpha, r.b, None if part == "X" else X)
    else:
        expected = problem.decision_function(r.w, r.b or 0.0, X)
    f = r.model.decision_function(X)
    np.testing.assert_allclose(f, expected, rtol=1e-10, atol=1e-10)
    pred = r.model.predict(X)
    assert pred.dtype == np.float64
    np.testing.assert_array_equal(pred, np.where(f >= 0.0, 1.0, -1.0))
    if part == "X":  # ±1, the same labels as the data's
        assert np.mean(pred == problem.y) >= 0.7


@pytest.mark.parametrize("part", ["X", "X_test"], ids=["train", "test"])
@pytest.mark.parametrize("key", ["crammer_singer", "crammer_singer-csr", "ovr-linear"])
def test_crammer_singer_scores_are_the_problems(results, key, part):
    """``X Wᵀ + b`` of the problem; one-vs-rest with the problem's bias stacks the same W."""
    r, problem, X = results[key], CASES[key].problem, getattr(CASES[key], part)
    np.testing.assert_allclose(
        r.model.decision_function(X), problem.decision_function(r.W, r.b, X), atol=1e-10
    )
    np.testing.assert_array_equal(r.model.predict(X), problem.predict(r.W, r.b, X))


def test_one_vs_rest_kernel_columns_are_the_binary_problems(results):
    model = results["ovr-kernel"].model
    for r, binary in enumerate(model.models):
        y = np.where(MULTI.y == r, 1.0, -1.0)
        problem = KernelDual(MULTI.X, y, kernel="rbf", gamma=GAMMA)
        own = _solve("smo", problem)
        expected = problem.decision_function(own.alpha, own.b, MULTI.X_test)
        np.testing.assert_allclose(model.decision_function(MULTI.X_test)[:, r], expected, atol=1e-6)
        assert isinstance(binary, KernelModel)
        assert binary.support_vectors.shape[0] == np.count_nonzero(own.alpha)


@pytest.mark.parametrize("key", ["ovo-kernel", "ovo-linear"])
def test_one_vs_one_is_libsvms_vote(results, key):
    """The pairwise decision values and the prediction (votes, ties to the lowest class) are
    those of scikit-learn's SVC on the same binary problems."""
    from sklearn.svm import SVC

    model, X, X_test = results[key].model, CASES[key].X, CASES[key].X_test
    kernel = dict(kernel="rbf", gamma=GAMMA) if key == "ovo-kernel" else dict(kernel="linear")
    svc = SVC(C=1.0, tol=1e-8, decision_function_shape="ovo", **kernel).fit(X, MULTI.y)
    # the test points, and points all over the box where one vote each (a tie) is common
    box = np.random.default_rng(0).uniform(-4.0, 4.0, size=(2000, X.shape[1]))
    for Z in (X_test, sparse.csr_matrix(box) if sparse.issparse(X) else box):
        pairwise = np.column_stack([m.decision_function(Z) for m in model.models])
        np.testing.assert_allclose(pairwise, svc.decision_function(Z), atol=1e-4)
        np.testing.assert_array_equal(model.predict(Z), svc.predict(Z))
        assert model.predict(Z).dtype.kind == "i"
    votes = np.floor(model.decision_function(box) + 1 / 3)
    assert np.sum(votes.max(axis=1) == 1) >= 3  # three-way ties were tested


def test_ovo_votes_then_breaks_ties_by_index_or_by_confidence():
    # three classes, one point: pair (0,1) votes 0, (0,2) votes 2, (1,2) votes 1: a three-way
    # tie; LIBSVM's rule gives the first class, the confidence rule class 2 (its summed
    # confidence is the largest: 0 → −0.8, 1 → 0.1, 2 → 0.7)
    def const(v):
        return LinearModel(np.zeros(1), v)

    models, pairs, x = (
        (const(0.1), const(-0.9), const(0.2)),
        ((0, 1), (0, 2), (1, 2)),
        np.zeros((1, 1)),
    )
    for tie_break, winner in (("first", 0), ("confidence", 2)):
        model = OneVsOneModel(models, pairs, 3, tie_break=tie_break)
        F = model.decision_function(x)
        assert np.all(np.floor(F + 1 / 3) == 1)  # one vote each
        assert model.predict(x)[0] == winner
    # a clear majority wins whatever the confidences
    model = OneVsOneModel((const(0.1), const(0.1), const(5.0)), pairs, 3, tie_break="confidence")
    assert model.predict(x)[0] == 0


@pytest.mark.parametrize("part", ["X", "X_test"], ids=["train", "test"])
@pytest.mark.parametrize("key", ["chain", "chain-no-transitions"])
def test_chain_models_decode_like_the_problem(results, key, part):
    r, problem = results[key], CASES[key].problem
    X, lengths = _args(key, part)
    expected = problem.predict(r.w, X, lengths)
    np.testing.assert_array_equal(r.model.predict(X, lengths), expected)
    assert (r.model.T is None) == (key == "chain-no-transitions")
    with pytest.raises(ValueError, match="lengths"):
        r.model.predict(X, lengths[:-1])


def test_precomputed_kernel_models_take_the_kernel_against_the_training_set(results):
    r, rbf = results["kernel-precomputed"], results["kernel-rbf"]
    assert r.model.support_vectors is None and r.model.n_features == BIN.X.shape[0]
    np.testing.assert_allclose(
        r.model.decision_function(CASES["kernel-precomputed"].X_test),
        rbf.model.decision_function(BIN.X_test),
        atol=1e-6,
    )
    with pytest.raises(ValueError, match=f"X must have {BIN.X.shape[0]} training examples"):
        r.model.decision_function(CASES["kernel-precomputed"].X_test[:, :5])


def test_models_refuse_the_wrong_number_of_features(results):
    with pytest.raises(ValueError, match="X must have 5 features"):
        results["linear-regularized"].model.predict(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="X must have 5 features"):
        results["kernel-csr"].model.predict(sparse.csr_matrix((3, 6)))
    with pytest.raises(ValueError, match="X must have 4 features"):
        results["ovo-kernel"].model.predict(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="X must have 4 features"):
        results["crammer_singer"].model.decision_function(np.zeros((3, 3)))


# ---------------------------------------------------------------------------------------------
# Kernel models hold only their support vectors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["kernel-rbf", "kernel-poly", "kernel-csr", "kernel-precomputed"])
def test_kernel_models_hold_only_the_support_vectors(results, key, tmp_path):
    r = results[key]
    model = r.model
    support = np.flatnonzero(r.alpha)
    assert 0 < support.size < r.alpha.size  # some points are not support vectors
    np.testing.assert_array_equal(model.support, support)
    np.testing.assert_allclose(model.dual_coef, (r.alpha * CASES[key].problem.y)[support])
    sv = model.support_vectors
    if key == "kernel-precomputed":
        assert sv is None
        sv_bytes = 0
    else:
        assert sv.shape == (support.size, BIN.X.shape[1])
        assert sparse.issparse(sv) == (key == "kernel-csr")  # as the problem had them
        sv_bytes = (
            (sv.data.nbytes + sv.indices.nbytes + sv.indptr.nbytes)
            if sparse.issparse(sv)
            else sv.nbytes
        )
    # the support vectors plus 16 bytes per support vector (its dual_coef and its index)
    payload = sv_bytes + 16 * support.size
    path = tmp_path / "m.npz"
    save_model(model, path)
    assert path.stat().st_size <= payload + SMALL
    assert len(pickle.dumps(model)) <= payload + SMALL


def test_a_kernel_model_predicts_with_the_training_set_gone():
    problem = KernelDual(BIN.X.copy(), BIN.y, kernel="rbf", gamma=GAMMA)
    training = weakref.ref(problem.X)
    result = _solve("smo", problem)
    expected = problem.decision_function(result.alpha, result.b, BIN.X_test)
    model = result.model
    del problem, result
    gc.collect()
    assert training() is None, "something still holds the training set"
    np.testing.assert_allclose(model.decision_function(BIN.X_test), expected, atol=1e-10)


def test_reductions_hold_binary_models_not_problems(results):
    for key in ("ovr-kernel", "ovo-kernel", "ovo-linear", "ovr-linear"):
        model = results[key].model
        for m in model.models:
            assert type(m) in (LinearModel, KernelModel)
        assert "models" not in results[key].info  # the model replaces the old hand-over
    # a linear reduction over a linear-kernel binary dual still gets (w, b) models
    mc = CASES["ovr-linear"].problem
    r = _solve("ovr", mc, binary_solver="smo", view="kernel", bias="free")
    assert all(type(m) is LinearModel for m in r.model.models)


# ---------------------------------------------------------------------------------------------
# Pickle, save/load and the results store's dict: identical predictions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", KINDS)
def test_pickle_save_load_and_dict_round_trips_predict_identically(results, key, tmp_path):
    model = results[key].model
    args = _args(key, "X_test")
    expected, scores = model.predict(*args), model.decision_function(args[0])
    path = tmp_path / "model.svm"  # any name: nothing is appended
    save_model(model, path)
    assert not (tmp_path / "model.svm.npz").exists()
    with zipfile.ZipFile(path) as zf:  # no member holds a pickle
        for name in zf.namelist():
            header = zf.read(name)[:128]
            assert b"'descr': '|O'" not in header and b"'descr': 'O'" not in header
    for clone in (
        pickle.loads(pickle.dumps(results[key])).model,
        load_model(path),
        model_from_dict(json.loads(json.dumps(model_to_dict(model)))),
    ):
        assert type(clone) is type(model)
        np.testing.assert_array_equal(clone.predict(*args), expected)
        np.testing.assert_array_equal(clone.decision_function(args[0]), scores)


def test_saved_reductions_store_their_binary_models_under_prefixes(results, tmp_path):
    path = tmp_path / "ovo.npz"
    save_model(results["ovo-linear"].model, path)
    with np.load(path, allow_pickle=False) as archive:
        names = set(archive.files)
        meta = json.loads(archive["__svmbench__"].tobytes())
    assert {"m.0.w", "m.1.w", "m.2.w"} <= names
    assert meta["format"] == "svmbench-model" and meta["version"] == FORMAT_VERSION
    assert meta["model"]["kind"] == "ovo" and meta["model"]["pairs"] == [[0, 1], [0, 2], [1, 2]]
    assert [m["kind"] for m in meta["model"]["models"]] == ["linear"] * 3
    path = tmp_path / "csr.npz"
    save_model(results["kernel-csr"].model, path)
    with np.load(path, allow_pickle=False) as archive:
        parts = {n for n in archive.files if n.startswith("m.support_vectors.")}
    assert parts == {f"m.support_vectors.{p}" for p in ("data", "indices", "indptr")}


# ---------------------------------------------------------------------------------------------
# Loading refuses what it cannot read, with a clear ValueError
# ---------------------------------------------------------------------------------------------


def _write_with_meta(path, meta, **arrays):
    meta = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, __svmbench__=meta, **arrays)


@pytest.fixture
def saved_linear(results, tmp_path):
    good = tmp_path / "good.npz"
    save_model(results["linear-regularized"].model, good)
    with np.load(good) as archive:
        meta = json.loads(archive["__svmbench__"].tobytes())
        arrays = {k: archive[k] for k in archive.files if k != "__svmbench__"}
    return meta, arrays


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda m: {**m, "version": FORMAT_VERSION + 1},
         f"version {FORMAT_VERSION + 1} is newer than this svmbench reads"),
        (lambda m: {**m, "version": "1"}, "version '1' is not a valid version"),
        (lambda m: {**m, "version": 0}, "version 0 is not a valid version"),
        (lambda m: {k: v for k, v in m.items() if k != "version"}, "None is not a valid"),
        (lambda m: {**m, "model": {**m["model"], "kind": "tree"}}, "unknown model kind 'tree'"),
        (lambda m: {**m, "format": "other"}, "not an svmbench model file"),
        (lambda m: {**m, "model": [1, 2]}, "damaged model file"),
        (lambda m: {**m, "model": {**m["model"], "arrays": {"w": "csv"}}}, "damaged model file"),
        (lambda m: {**m, "model": {**m["model"], "b": "x"}}, "damaged model file.*b must be"),
        (lambda m: ["not", "an", "object"], "not an svmbench model file"),
    ],
    ids=[
        "newer", "string-version", "version-0", "no-version", "unknown-kind", "other-format",
        "model-not-object", "bad-array-entry", "bad-parameter", "metadata-not-object",
    ],
)  # fmt: skip
def test_load_refuses_bad_metadata(saved_linear, tmp_path, change, match):
    meta, arrays = saved_linear
    path = tmp_path / "bad.npz"
    _write_with_meta(path, change(meta), **arrays)
    with pytest.raises(ValueError, match=match):
        load_model(path)


def test_load_refuses_files_that_are_not_models(saved_linear, tmp_path):
    meta, arrays = saved_linear
    files = {
        "plain.npz": lambda p: np.savez(p, w=np.zeros(3)),
        "array.npy": lambda p: np.save(p, np.zeros(3)),
        "garbage.npz": lambda p: p.write_bytes(b"not a zip at all"),
        "truncated.npz": lambda p: p.write_bytes(b"PK\x03\x04 a truncated zip"),
        "empty.npz": lambda p: p.write_bytes(b""),
        "text.json": lambda p: p.write_text(json.dumps(meta)),
        "damaged-meta.npz": lambda p: np.savez(p, __svmbench__=np.frombuffer(b"{x", np.uint8)),
    }
    for name, write in files.items():
        path = tmp_path / name
        write(path)
        with pytest.raises(ValueError, match=f"{name}: not an svmbench model file"):
            load_model(path)
    with pytest.raises(ValueError, match="no such model file"):
        load_model(tmp_path / "missing.npz")
    # an svmbench file that lost an array, or one holding a pickled object array
    del arrays["m.w"]
    _write_with_meta(tmp_path / "partial.npz", meta, **arrays)
    with pytest.raises(ValueError, match="damaged model file: it lacks the array"):
        load_model(tmp_path / "partial.npz")
    _write_with_meta(tmp_path / "pickled.npz", meta, **{"m.w": np.array([None, 1.0])})
    with pytest.raises(ValueError, match="pickled.npz: .*holds Python objects"):
        load_model(tmp_path / "pickled.npz")


def test_save_refuses_what_is_not_a_model(tmp_path):
    path = tmp_path / "m.npz"
    path.write_bytes(b"keep me")
    with pytest.raises(TypeError, match="model must be an svmbench model or a fitted .*got dict"):
        save_model({"w": np.zeros(3)}, path)
    assert path.read_bytes() == b"keep me"
    with pytest.raises(ValueError, match="newer than"):
        model_from_dict({"version": FORMAT_VERSION + 1, "model": {}, "arrays": {}})
    with pytest.raises(ValueError, match="document is damaged"):
        model_from_dict({"version": FORMAT_VERSION, "arrays": {}})


# ---------------------------------------------------------------------------------------------
# Construction: clear errors, and no model from a missing or non-finite point
# ---------------------------------------------------------------------------------------------


def test_models_validate_their_arrays():
    with pytest.raises(ValueError, match=r"w must be a 1-D array, got shape \(2, 2\)"):
        LinearModel(np.ones((2, 2)))
    assert LinearModel(np.ones((1, 3)), np.array([0.5])).n_features == 3  # a coef_ row
    with pytest.raises(ValueError, match="b must be finite"):
        LinearModel(np.ones(3), np.inf)
    sv = np.ones((2, 3))
    with pytest.raises(ValueError, match="support must be 2 integer indices"):
        KernelModel(sv, [1.0, -1.0], 0.0, "rbf", support=[0], n_train=5)
    with pytest.raises(ValueError, match="support must hold indices in"):
        KernelModel(sv, [1.0, -1.0], 0.0, "rbf", support=[0, 5], n_train=5)
    with pytest.raises(ValueError, match="support_vectors must have one row per dual_coef"):
        KernelModel(sv[:1], [1.0, -1.0], 0.0, "rbf", support=[0, 1], n_train=5)
    with pytest.raises(ValueError, match="kernel must be one of"):
        KernelModel(sv, [1.0, -1.0], 0.0, "cosine", support=[0, 1], n_train=5)
    with pytest.raises(ValueError, match="support_vectors must be None for a precomputed"):
        KernelModel(sv, [1.0, -1.0], 0.0, "precomputed", support=[0, 1], n_train=5)
    with pytest.raises(ValueError, match="b must be a 1-D array of length 3"):
        CrammerSingerModel(np.ones((3, 2)), np.zeros(2))
    binary = LinearModel(np.ones(2))
    with pytest.raises(ValueError, match="pairs must be pairs of distinct classes in"):
        OneVsOneModel((binary,), ((0, 3),), 3)
    with pytest.raises(ValueError, match="models must hold 3 binary models"):
        OneVsRestModel((binary, binary), 3)
    with pytest.raises(TypeError, match="models must be binary models, got CrammerSingerModel"):
        OneVsRestModel((CrammerSingerModel(np.ones((2, 2)), np.zeros(2)), binary), 2)
    with pytest.raises(ValueError, match="same number of features"):
        OneVsRestModel((binary, LinearModel(np.ones(3))), 2)
    with pytest.raises(ValueError, match=r"T must have shape \(2, 2\)"):
        ChainModel(np.ones((2, 3)), np.ones((3, 3)))


@pytest.mark.parametrize(
    "key, name",
    [("linear-regularized", "w"), ("kernel-rbf", "alpha"), ("crammer_singer", "W"), ("chain", "w")],
)
def test_no_model_from_a_missing_or_non_finite_point(results, key, name):
    problem, variables = CASES[key].problem, dict(results[key].variables)
    assert problem.model_from(variables) is not None
    assert problem.model_from({k: v for k, v in variables.items() if k != name}) is None
    bad = np.array(variables[name], dtype=np.float64)
    bad.flat[0] = np.nan
    assert problem.model_from({**variables, name: bad}) is None
    if "b" in variables and np.ndim(variables["b"]) == 0:
        assert problem.model_from({**variables, "b": np.inf}) is None


# ---------------------------------------------------------------------------------------------
# Anchors: their results predict through a model too, as the libraries do
# ---------------------------------------------------------------------------------------------


def _anchor_problems():
    """One problem each anchor accepts (kernel ones on dense and CSR data)."""
    return {
        "liblinear": SoftMarginPrimal(BIN.X, BIN.y, bias="regularized"),
        "liblinear_cs": MulticlassHinge(MULTI.X, MULTI.y, bias="regularized"),
        "libsvm": KernelDual(BIN.X, BIN.y, kernel="rbf", gamma=GAMMA),
        "sklearn_svc": KernelDual(_sparsify(BIN.X), BIN.y, kernel="rbf", gamma=GAMMA),
        "sklearnex_svc": KernelDual(BIN.X, BIN.y, kernel="rbf", gamma=GAMMA),
        "sklearn_linearsvc": SoftMarginPrimal(BIN.X, BIN.y, bias="regularized"),
        "sklearn_sgd": SoftMarginPrimal(BIN.X, BIN.y, bias="free"),
        "liblinear_lr": Logistic(BIN.X, BIN.y, bias="regularized"),
        "liblinear_lr_dual": Logistic(BIN.X, BIN.y, bias="none"),
        # the labels as real targets: a regression problem
        "liblinear_svr": SVRPrimal(BIN.X, BIN.y, bias="regularized"),
        "liblinear_svr_primal": SVRPrimal(
            BIN.X, BIN.y, loss="squared_epsilon_insensitive", bias="free"
        ),
        "sklearn_linearsvr": SVRPrimal(BIN.X, BIN.y, bias="none"),
        "sklearn_logistic": Logistic(BIN.X, BIN.y, bias="free"),
        "libsvm_svr": SVRDual(REG.X, REG.y, gamma=GAMMA),
        "sklearn_svr": SVRDual(_sparsify(REG.X), REG.y, gamma=GAMMA),
        "libsvm_nu": NuSVCDual(BIN.X, BIN.y, nu=0.3, gamma=GAMMA),
        "sklearn_nu": OneClassDual(_sparsify(BIN.X), nu=0.3, gamma=GAMMA),
    }


@pytest.mark.parametrize("name", registry.anchor_names())
def test_every_anchor_result_carries_a_working_model(name, results):
    why = registry.solver_class(name).missing_reason()
    if why:
        pytest.skip(why)
    problem = _anchor_problems()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn_sgd's ConvergenceWarning
        r = registry.get(name).solve(problem)
    assert r.model is not None, r.message
    multiclass = isinstance(problem, MulticlassHinge)
    X_test = MULTI.X_test if multiclass else BIN.X_test
    if isinstance(problem, SVRDual):
        X_test = REG.X_test
    if sparse.issparse(problem.X):
        X_test = _sparsify(X_test)
    if multiclass:
        assert type(r.model) is CrammerSingerModel
        expected = problem.decision_function(r.W, r.b, X_test)
        # the same classifier as our own Crammer–Singer solver, to its tolerance
        agree = r.model.predict(X_test) == results["crammer_singer"].model.predict(X_test)
        assert np.mean(agree) >= 0.95
    elif isinstance(problem, KernelDual):
        assert type(r.model) is KernelModel
        assert r.model.support_vectors.shape[0] == np.count_nonzero(r.alpha)
        expected = problem.decision_function(r.alpha, r.b, X_test)
    elif isinstance(problem, NuSVCDual | OneClassDual):
        # at a tight eps, the same model as the generalized SMO's (LIBSVM's default eps is 1e-3)
        ours = registry.get("smo", tol=1e-10).solve(problem).model
        tight = registry.get(name, eps=1e-10).solve(problem).model
        expected = ours.decision_function(X_test)
        np.testing.assert_allclose(tight.decision_function(X_test), expected, atol=1e-4)
        return
    elif isinstance(problem, SVRDual):
        from svmbench.problems.regression_model import KernelRegressionModel

        assert type(r.model) is KernelRegressionModel
        beta = r.alpha[: problem.n_samples] - r.alpha[problem.n_samples :]
        assert r.model.support_vectors.shape[0] == np.count_nonzero(beta)
        expected = problem.decision_function(beta, r.b, X_test)
    else:
        from svmbench.problems.linear_regression_model import LinearRegressionModel
        from svmbench.problems.logistic_model import LogisticModel

        kinds = {Logistic: LogisticModel, SVRPrimal: LinearRegressionModel}
        assert type(r.model) is kinds.get(type(problem), LinearModel)
        expected = problem.decision_function(r.w, r.b or 0.0, X_test)
    np.testing.assert_allclose(r.model.decision_function(X_test), expected, atol=1e-10)
    clone = pickle.loads(pickle.dumps(r.model))
    np.testing.assert_array_equal(clone.predict(X_test), r.model.predict(X_test))


@pytest.mark.parametrize("name", ["sklearn_svc", "libsvm"])
def test_kernel_anchor_models_predict_as_the_library_does(name):
    """The adapter's model (signs, b, the support vectors) gives the library's own decision
    values on new data: scikit-learn's SVC and LIBSVM's svm_predict, trained identically."""
    why = registry.solver_class(name).missing_reason()
    if why:
        pytest.skip(why)
    problem = KernelDual(BIN.X, BIN.y, kernel="rbf", gamma=GAMMA)
    model = registry.get(name).solve(problem).model
    if name == "sklearn_svc":
        from sklearn.svm import SVC

        svc = SVC(C=1.0, kernel="rbf", gamma=GAMMA, tol=1e-3).fit(BIN.X, BIN.y)
        library = svc.decision_function(BIN.X_test)  # positive: classes_[1] = +1
    else:
        from libsvm.svmutil import svm_predict, svm_train

        X, X_test = sparse.csr_matrix(BIN.X), sparse.csr_matrix(BIN.X_test)
        trained = svm_train(BIN.y, X, f"-s 0 -t 2 -c 1 -g {GAMMA!r} -e 0.001 -q")
        _, _, values = svm_predict(BIN.y_test, X_test, trained, "-q")
        sign = 1.0 if trained.get_labels()[0] == 1 else -1.0  # positive: labels[0]
        library = sign * np.asarray(values)[:, 0]
    np.testing.assert_allclose(model.decision_function(BIN.X_test), library, atol=1e-8)


def test_one_vs_one_checks_X_once_with_the_pairs_own_values():
    """The pairs' values of a one-vs-one model over RBF kernel models, whose X is checked once
    for all pairs, are each pair's own ``decision_function`` bit for bit (C and Fortran order,
    CSR); its prediction is the argmax of its decision function, ties to the lowest class; a
    bad X gets the pairs' words."""
    rng = np.random.default_rng(0)
    k, d = 4, 3
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    sizes, biases = rng.integers(0, 6, size=len(pairs)), rng.normal(size=len(pairs))
    models = tuple(
        KernelModel(rng.normal(size=(m, d)), rng.normal(size=m), b, "rbf", np.arange(m), 50)
        for m, b in zip(sizes, biases, strict=True)
    )
    model = OneVsOneModel(models, pairs, k)
    X = rng.uniform(-3.0, 3.0, size=(400, d))
    for Z in (X, np.asfortranarray(X), sparse.csr_matrix(X)):
        own = np.column_stack([m.decision_function(Z) for m in models])
        assert np.array_equal(model.pair_decision_function(Z), own)
        F = model.decision_function(Z)
        assert np.array_equal(model.predict(Z), np.argmax(F, axis=1))
    votes = np.floor(model.decision_function(X) + 1 / 3)
    assert np.any((votes == votes.max(axis=1, keepdims=True)).sum(axis=1) > 1)  # ties tested
    with pytest.raises(ValueError, match="X must have 3 features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="finite"):
        model.predict(np.full((2, d), np.nan))
