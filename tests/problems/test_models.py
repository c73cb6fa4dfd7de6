"""Models predict like their problems, hold only what they need, and survive pickle and disk."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import (
    ChainStructuredHinge,
    KernelDual,
    MulticlassHinge,
    SoftMarginPrimal,
    datasets,
)
from svmbench.problems.models import (
    FORMAT_VERSION,
    ChainModel,
    CrammerSingerModel,
    KernelModel,
    LinearModel,
    OneVsOneModel,
    OneVsRestModel,
    load_model,
    model_from_dict,
    model_to_dict,
    save_model,
)
from svmbench.problems.structured import digit_sequences
from svmbench.solvers import registry

BIN = datasets.load("gaussian:n=120,d=5,sep=1.5,seed=0,split=0.3")
MULTI = datasets.load("blobs:n=150,d=4,k=3,seed=1,split=0.3")


def _solve(name, problem, **options):
    return registry.get(name, **options).solve(problem)


@pytest.fixture(scope="module")
def results():
    """One solved result of every model kind."""
    out = {}
    out["linear"] = _solve("dcd", SoftMarginPrimal(BIN.X, BIN.y, C=1.0, bias="regularized"))
    out["linear-free"] = _solve("clarabel", SoftMarginPrimal(BIN.X, BIN.y, C=1.0, bias="free"))
    csr = sparse.csr_matrix(np.where(np.abs(BIN.X) > 0.5, BIN.X, 0.0))
    out["linear-csr"] = _solve("dcd", SoftMarginPrimal(csr, BIN.y, C=1.0, bias="none"))
    for kernel in ("rbf", "poly", "linear"):
        problem = KernelDual(BIN.X, BIN.y, C=1.0, kernel=kernel, gamma=0.3, degree=2)
        out[f"kernel-{kernel}"] = _solve("smo", problem)
    out["kernel-csr"] = _solve("smo", KernelDual(csr, BIN.y, C=1.0, kernel="rbf", gamma=0.3))
    mc = MulticlassHinge(MULTI.X, MULTI.y, C=1.0, bias="regularized")
    out["crammer_singer"] = _solve("cs_dcd", mc)
    out["ovr"] = _solve("ovr", mc, binary_solver="dcd")
    out["ovo-kernel"] = _solve("ovo", mc, binary_solver="smo", kernel="rbf", bias="free")
    out["ovr-kernel"] = _solve("ovr", mc, binary_solver="smo", kernel="rbf", bias="free")
    seq = digit_sequences(10, 10, min_length=2, max_length=4, seed=0)
    chain = ChainStructuredHinge(seq.X, seq.y, seq.lengths, n_states=10, C=1.0)
    out["chain"] = _solve("ssvm_sgd", chain, max_iter=3)
    out["_chain_data"] = seq
    return out


KINDS = [
    "linear", "linear-free", "linear-csr", "kernel-rbf", "kernel-poly", "kernel-linear",
    "kernel-csr", "crammer_singer", "ovr", "ovo-kernel", "ovr-kernel",
]  # fmt: skip


def _test_X(key):
    X = MULTI.X_test if key in ("crammer_singer", "ovr", "ovo-kernel", "ovr-kernel") else BIN.X_test
    if key.endswith("csr"):
        return sparse.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    return X


def test_every_model_kind_is_built(results):
    kinds = {key: type(results[key].model) for key in KINDS}
    assert kinds["linear"] is LinearModel and kinds["kernel-rbf"] is KernelModel
    assert kinds["crammer_singer"] is CrammerSingerModel and kinds["ovr"] is OneVsRestModel
    assert kinds["ovo-kernel"] is OneVsOneModel
    assert type(results["chain"].model) is ChainModel


@pytest.mark.parametrize("key", ["linear", "linear-free", "linear-csr"])
def test_linear_models_predict_like_their_problem(results, key):
    r = results[key]
    X = _test_X(key)
    expected = np.asarray(X @ r.w).ravel() + (r.b or 0.0)
    np.testing.assert_allclose(r.model.decision_function(X), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(r.model.predict(X), np.where(expected >= 0, 1.0, -1.0))


@pytest.mark.parametrize("key", ["kernel-rbf", "kernel-poly", "kernel-linear", "kernel-csr"])
def test_kernel_models_hold_only_the_support_vectors(results, key):
    r = results[key]
    model = r.model
    support = np.flatnonzero(r.alpha)
    assert 0 < support.size < r.alpha.size  # some points are not support vectors
    np.testing.assert_array_equal(model.support, support)
    assert model.support_vectors.shape[0] == support.size
    # the same decision values as the problem's, which uses the whole training set
    X = (
        BIN.X
        if not key.endswith("csr")
        else sparse.csr_matrix(np.where(np.abs(BIN.X) > 0.5, BIN.X, 0.0))
    )
    problem = KernelDual(X, BIN.y, C=1.0, kernel=model.kernel, gamma=0.3, degree=2)
    Xt = _test_X(key)
    np.testing.assert_allclose(
        model.decision_function(Xt), problem.decision_function(r.alpha, r.b, Xt), atol=1e-10
    )


def test_a_saved_kernel_model_is_its_support_vectors_plus_a_constant(results, tmp_path):
    model = results["kernel-rbf"].model
    path = tmp_path / "m.npz"
    save_model(model, path)
    payload = model.support_vectors.nbytes + model.dual_coef.nbytes + model.support.nbytes
    assert path.stat().st_size <= payload + 4096
    # and it predicts on new data with no training set anywhere
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(BIN.X_test), model.predict(BIN.X_test))


def test_precomputed_kernel_models_take_the_kernel_against_the_training_set():
    from svmbench.problems.kernels import kernel_matrix

    K = kernel_matrix(BIN.X, kernel="rbf", gamma=0.3)
    r = _solve("smo", KernelDual(K, BIN.y, C=1.0, kernel="precomputed"))
    K_test = kernel_matrix(BIN.X_test, BIN.X, kernel="rbf", gamma=0.3)
    rbf = _solve("smo", KernelDual(BIN.X, BIN.y, C=1.0, kernel="rbf", gamma=0.3))
    np.testing.assert_allclose(
        r.model.decision_function(K_test), rbf.model.decision_function(BIN.X_test), atol=1e-6
    )
    with pytest.raises(ValueError, match=f"X must have {BIN.X.shape[0]} training examples"):
        r.model.decision_function(K_test[:, :5])


@pytest.mark.parametrize("key", ["crammer_singer", "ovr", "ovo-kernel", "ovr-kernel"])
def test_multiclass_models_predict_class_indices(results, key):
    model = results[key].model
    X = _test_X(key)
    F = model.decision_function(X)
    assert F.shape == (X.shape[0], 3)
    pred = model.predict(X)
    np.testing.assert_array_equal(pred, np.argmax(F, axis=1))
    assert np.mean(pred == MULTI.y_test) >= 0.8


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


def test_chain_models_decode_like_the_problem(results):
    seq = results["_chain_data"]
    r = results["chain"]
    problem = ChainStructuredHinge(seq.X, seq.y, seq.lengths, n_states=10, C=1.0)
    expected = problem.predict(r.w, seq.X_test, seq.lengths_test)
    np.testing.assert_array_equal(r.model.predict(seq.X_test, seq.lengths_test), expected)
    with pytest.raises(ValueError, match="lengths"):
        r.model.predict(seq.X_test, seq.lengths_test[:-1])


@pytest.mark.parametrize("key", [*KINDS, "chain"])
def test_pickle_save_load_and_dict_round_trips_predict_identically(results, key, tmp_path):
    model = results[key].model
    if key == "chain":
        seq = results["_chain_data"]
        args = (seq.X_test, seq.lengths_test)
    else:
        args = (_test_X(key),)
    expected = model.predict(*args)
    path = tmp_path / "model.svm"  # any name: nothing is appended
    save_model(model, path)
    for clone in (
        pickle.loads(pickle.dumps(results[key])).model,
        load_model(path),
        model_from_dict(json.loads(json.dumps(model_to_dict(model)))),
    ):
        assert type(clone) is type(model)
        np.testing.assert_array_equal(clone.predict(*args), expected)


def test_models_refuse_the_wrong_number_of_features(results):
    with pytest.raises(ValueError, match="X must have 5 features"):
        results["linear"].model.predict(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="X must have 4 features"):
        results["ovo-kernel"].model.predict(np.zeros((3, 5)))


def _write_with_meta(path, meta, **arrays):
    np.savez(path, __svmbench__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)


def test_load_errors_are_clear(tmp_path, results):
    good = tmp_path / "good.npz"
    save_model(results["linear"].model, good)
    with np.load(good) as archive:
        meta = json.loads(archive["__svmbench__"].tobytes())
        arrays = {k: archive[k] for k in archive.files if k != "__svmbench__"}
    cases = {
        "newer.npz": ({**meta, "version": FORMAT_VERSION + 1}, "newer than this svmbench reads"),
        "kind.npz": ({**meta, "model": {**meta["model"], "kind": "tree"}}, "unknown model kind"),
        "format.npz": ({**meta, "format": "other"}, "not an svmbench model"),
    }
    for name, (doc, match) in cases.items():
        _write_with_meta(tmp_path / name, doc, **arrays)
        with pytest.raises(ValueError, match=match):
            load_model(tmp_path / name)
    np.savez(tmp_path / "plain.npz", w=np.zeros(3))
    with pytest.raises(ValueError, match="no metadata"):
        load_model(tmp_path / "plain.npz")
    (tmp_path / "garbage.npz").write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="not an svmbench model file"):
        load_model(tmp_path / "garbage.npz")
    with pytest.raises(ValueError, match="no such model file"):
        load_model(tmp_path / "missing.npz")
    del arrays["m.w"]
    _write_with_meta(tmp_path / "partial.npz", meta, **arrays)
    with pytest.raises(ValueError, match="lacks"):
        load_model(tmp_path / "partial.npz")
