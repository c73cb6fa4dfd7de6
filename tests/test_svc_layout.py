"""LIBSVM's one-vs-one layout (svmbench.svc_layout) read back by hand, beyond three classes and
from a model whose pairs are stored reversed and out of order."""

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from svmbench import SVMClassifier, svc_layout
from svmbench.problems.models import KernelModel, OneVsOneModel

X5, Y5 = make_blobs(n_samples=150, centers=5, cluster_std=2.5, random_state=3)


def _fitted(k: int):
    keep = Y5 < k
    return SVMClassifier(gamma=0.3, C=3.0).fit(X5[keep], Y5[keep]), X5[keep], Y5[keep]


@pytest.mark.parametrize("k", [3, 4, 5])
def test_each_pairs_coefficients_sit_in_libsvms_rows(k):
    """Pair (i, j) puts α_t y_t of its class-i vectors in row j−1 and of its class-j vectors in
    row i, at their columns of ``support_``; every other entry of those columns is 0 for it."""
    est, _, y = _fitted(k)
    model = est.model_
    assert isinstance(model, OneVsOneModel) and model.pairs == tuple(
        (i, j) for i in range(k) for j in range(i + 1, k)
    )
    column = {int(t): c for c, t in enumerate(est.support_)}
    expected = np.zeros_like(est.dual_coef_)
    for (i, j), m in zip(model.pairs, model.models, strict=True):
        rows = np.flatnonzero((y == i) | (y == j))
        for t, coef in zip(rows[m.support], m.dual_coef, strict=True):
            expected[j - 1 if y[t] == i else i, column[int(t)]] = coef
    np.testing.assert_array_equal(est.dual_coef_, expected)
    assert set(column) == {
        int(t)
        for (i, j), m in zip(model.pairs, model.models, strict=True)
        for t in np.flatnonzero((y == i) | (y == j))[m.support]
    }
    assert np.all(np.diff(y[est.support_]) >= 0)  # grouped by class
    np.testing.assert_array_equal(est.n_support_, np.bincount(y[est.support_], minlength=k))


def _reversed(model: OneVsOneModel, order) -> OneVsOneModel:
    """The same classifier with each pair stored as (j, i), its signs flipped, in ``order``."""
    flipped = [
        dataclasses.replace(m, dual_coef=-m.dual_coef, b=-m.b) for m in model.models
    ]  # a KernelModel "j against i"
    return OneVsOneModel(
        tuple(flipped[p] for p in order),
        tuple(model.pairs[p][::-1] for p in order),
        model.n_classes,
    )


@pytest.mark.parametrize("k", [3, 5])
def test_a_model_of_reversed_shuffled_pairs_has_the_same_layout(k):
    est, X, y = _fitted(k)
    model, result = est.model_, est.result_
    assert all(isinstance(m, KernelModel) for m in model.models)
    order = np.random.default_rng(k).permutation(len(model.pairs))
    canonical = svc_layout.support_layout(model, result, None, X, y, k, precomputed=False)
    shuffled = svc_layout.support_layout(
        _reversed(model, order), result, None, X, y, k, precomputed=False
    )
    assert canonical.keys() == shuffled.keys()
    for name, value in canonical.items():
        assert shuffled[name].dtype == value.dtype, name
        np.testing.assert_array_equal(shuffled[name], value, err_msg=name)
