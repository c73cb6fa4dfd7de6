"""What a one-vs-one fit pays once instead of per pair (issue 25): one column buffer for every
pair, models built from the problem's checked arrays, and X checked once by a multiclass model
for all its binary models."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual, MulticlassHinge
from svmbench.problems import models as models_module
from svmbench.problems.models import KernelModel, OneVsOneModel
from svmbench.solvers import Status, registry
from svmbench.solvers import smo as smo_module

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)


def _binary(bias="free", loss="hinge", C=10.0, kernel="rbf"):
    keep = Y_WINE < 2
    y = np.where(Y_WINE[keep] == 0, 1.0, -1.0)
    return KernelDual(X_WINE[keep], y, C=C, kernel=kernel, gamma=0.1, bias=bias, loss=loss)


def test_ovo_pairs_reuse_one_column_buffer(monkeypatch):
    """Every pair after the first runs in the first pair's column memory; each pair certified."""
    buffers = []
    original = smo_module.column_buffer

    def spy_buffer(previous, entries):
        out = original(previous, entries)
        buffers.append(out)
        return out

    monkeypatch.setattr(smo_module, "column_buffer", spy_buffer)
    problem = MulticlassHinge(X_WINE, Y_WINE, C=10.0)
    ovo = registry.get("ovo", kernel="rbf", gamma=0.1, bias="free", binary_solver="smo",
                       binary_options={"tol": 1e-8})  # fmt: skip
    res = ovo.solve(problem)
    assert res.status is Status.OPTIMAL
    assert len(buffers) == 3
    largest = max(range(3), key=lambda p: buffers[p].size)
    assert all(b is buffers[largest] for b in buffers[largest:])
    assert max(res.info["binary_rel_gaps"]) <= 1e-8


def test_a_model_of_checked_arrays_is_the_constructors_model():
    problem = _binary()
    res = registry.get("smo", tol=1e-8, trace=False).solve(problem)
    model = res.model
    assert isinstance(model, KernelModel)
    rebuilt = KernelModel(
        model.support_vectors, model.dual_coef, model.b, model.kernel, model.support,
        model.n_train, model.gamma, model.degree, model.coef0,
    )  # fmt: skip
    for name in ("support_vectors", "dual_coef", "support"):
        got, want = getattr(model, name), getattr(rebuilt, name)
        assert got.dtype == want.dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    assert (model.b, model.n_train, model.gamma, model.degree, model.coef0) == (
        rebuilt.b, rebuilt.n_train, rebuilt.gamma, rebuilt.degree, rebuilt.coef0,
    )  # fmt: skip
    np.testing.assert_array_equal(
        model.decision_function(X_WINE), rebuilt.decision_function(X_WINE)
    )


def test_a_one_vs_one_model_checks_x_once_for_its_pairs(monkeypatch):
    X, y = load_iris(return_X_y=True)
    problem = MulticlassHinge(X, y, C=1.0)
    res = registry.get("ovo", kernel="rbf", gamma=0.5, binary_solver="smo").solve(problem)
    model = res.model
    assert isinstance(model, OneVsOneModel)
    scans = []
    original = models_module.np.isfinite

    def counting(a, *args, **kw):
        if getattr(a, "shape", None) == X.shape:
            scans.append(1)
        return original(a, *args, **kw)

    monkeypatch.setattr(models_module.np, "isfinite", counting)
    values = model.pair_decision_function(X)
    monkeypatch.setattr(models_module.np, "isfinite", original)
    assert len(scans) == 1
    for p, m in enumerate(model.models):  # each pair's own values, checked alone
        np.testing.assert_array_equal(values[:, p], m.decision_function(X))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X must contain only finite values"):
        model.predict(bad)
    with pytest.raises(ValueError, match="X must have 4 features"):
        model.predict(X[:, :3])
