"""What a one-vs-one fit pays once instead of per pair (issue 25): SMO's certificate read from
its own gradient, one column buffer for every pair, models built from the problem's checked
arrays, and X checked once by a multiclass model for all its binary models."""

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
from svmbench.solvers._reference import reference_solution

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)


def _binary(bias="free", loss="hinge", C=10.0, kernel="rbf"):
    keep = Y_WINE < 2
    y = np.where(Y_WINE[keep] == 0, 1.0, -1.0)
    return KernelDual(X_WINE[keep], y, C=C, kernel=kernel, gamma=0.1, bias=bias, loss=loss)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"bias": "none"},
        {"bias": "regularized"},
        {"loss": "squared_hinge"},
        {"kernel": "poly", "C": 1.0},
    ],
)
def test_smos_gradient_certificate_is_the_problems_own_at_the_reference_optimum(
    params, monkeypatch
):
    """The stopping certificate reads K(αy) from G (no kernel product over the support) and
    agrees with the certificate drawn anew; the point is Clarabel's optimum."""
    problem = _binary(**params)
    products = []
    original = KernelDual.certificate

    def spy(self, **kw):
        products.append(kw.get("products") is not None)
        return original(self, **kw)

    monkeypatch.setattr(KernelDual, "certificate", spy)
    res = registry.get("smo", tol=1e-8, trace=False).solve(problem)
    assert res.status is Status.OPTIMAL
    assert products and products[0], "the stopping test drew a kernel product"
    monkeypatch.setattr(KernelDual, "certificate", original)
    anew = problem.certificate(alpha=res.alpha, b=res.b)
    assert anew.certified and anew.rel_gap <= 1e-8
    scale = max(1.0, abs(anew.primal))
    assert abs(res.primal - anew.primal) <= 1e-12 * scale
    assert abs(res.dual - anew.dual) <= 1e-12 * scale
    ref = reference_solution(problem)
    assert abs(anew.primal - ref.primal) <= 1e-7 * max(1.0, abs(ref.primal))


def test_certificate_from_products_adds_the_columns_its_projection_moves():
    """An α off ``yᵀα = 0`` and out of its box: the projection moves coordinates, whose
    columns are added to the given ``K(αy)``; the same certificate as without products."""
    problem = _binary()
    rng = np.random.default_rng(0)
    alpha = rng.uniform(-1.0, 12.0, size=problem.n_samples)
    g = problem.kernel_times(alpha * problem.y)
    given = problem.certificate(alpha=alpha, b=0.3, products=g)
    plain = problem.certificate(alpha=alpha, b=0.3)
    assert given.residuals["dual_infeasibility"] > 0
    np.testing.assert_allclose(
        [given.primal, given.dual], [plain.primal, plain.dual], rtol=1e-12, atol=1e-9
    )
    np.testing.assert_array_equal(given.dual_point, plain.dual_point)


def test_certificate_refuses_products_of_the_wrong_length():
    problem = _binary()
    with pytest.raises(ValueError, match=r"products must be K\(αy\), 130 numbers"):
        problem.certificate(alpha=np.zeros(problem.n_samples), products=np.zeros(3))


def test_ovo_pairs_reuse_one_column_buffer_and_certify_from_their_gradients(monkeypatch):
    """Every pair after the first runs in the first pair's column memory, and no pair's
    certificate computes a kernel product (``KernelDual._model``); each pair certified."""
    buffers, products = [], []
    original = smo_module.column_buffer

    def spy_buffer(previous, entries):
        out = original(previous, entries)
        buffers.append(out)
        return out

    def no_product(self, alpha):
        products.append(alpha.size)
        raise AssertionError("a pair's certificate computed K(αy)")

    monkeypatch.setattr(smo_module, "column_buffer", spy_buffer)
    monkeypatch.setattr(KernelDual, "_model", no_product)
    problem = MulticlassHinge(X_WINE, Y_WINE, C=10.0)
    ovo = registry.get("ovo", kernel="rbf", gamma=0.1, bias="free", binary_solver="smo",
                       binary_options={"tol": 1e-8})  # fmt: skip
    res = ovo.solve(problem)
    assert res.status is Status.OPTIMAL
    assert len(buffers) == 3 and not products
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
