"""A precomputed Gram matrix is checked once per fit: the one-vs-one pairs take blocks of the
symmetrized matrix as the constructor would have left them, keep their own convexity and
conditioning checks, and a bad matrix still gets a clear error from the estimator."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris

from svmbench import SVMClassifier
from svmbench.problems import KernelDual
from svmbench.problems.gram import cholesky_bound, symmetric_gram
from svmbench.solvers import reductions


@pytest.fixture(scope="module")
def iris_gram():
    X, y = load_iris(return_X_y=True)
    sq = (X**2).sum(axis=1)
    K = np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
    rng = np.random.default_rng(0)
    K += 1e-13 * rng.standard_normal(K.shape)  # asymmetric by rounding only
    return K, y


def test_symmetric_gram_is_the_constructor_s_matrix(iris_gram):
    K, y = iris_gram
    S = symmetric_gram(K)
    assert not np.array_equal(K, K.T) and np.array_equal(S, S.T)
    y_pm = np.where(y == 0, 1.0, -1.0)
    np.testing.assert_array_equal(S, KernelDual(K, y_pm, kernel="precomputed").X)
    np.testing.assert_array_equal(S, np.ascontiguousarray(0.5 * (K + K.T)))


def test_an_exactly_symmetric_gram_is_kept_as_it_is():
    A = np.random.default_rng(5).normal(size=(300, 6))
    K = A @ A.T
    K = 0.5 * (K + K.T)  # exactly symmetric
    assert symmetric_gram(K) is K  # no copy: ½(K + Kᵀ) is K's own values
    K[299, 0] += 1e-13  # one entry off, in the last tile: ½(K + Kᵀ) made from there
    S = symmetric_gram(K)
    assert S is not K and np.array_equal(S, S.T)
    np.testing.assert_array_equal(S, 0.5 * (K + K.T))


@pytest.mark.parametrize("n", [5, 300, 600])
def test_the_tiles_give_the_whole_matrix_s_values_and_test(n):
    """Read tile by tile (256 a side), ``½(K + Kᵀ)`` to the last bit, and the symmetry test on
    ``max|K − Kᵀ|`` against ``1e-10 · max(1, max|K_ij|)`` wherever the asymmetry lies."""
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, 8))
    K = A @ A.T * 1e6  # entries near 1e6: the scale admits asymmetries up to about 1e-4
    K[n - 1, 0] += 1e-6  # below the scaled threshold, in the last row's first tile
    S = symmetric_gram(K)
    np.testing.assert_array_equal(S, np.ascontiguousarray(0.5 * (K + K.T)))
    assert np.array_equal(S, S.T) and S.flags.c_contiguous
    K[n - 1, 0] += 1e-2
    with pytest.raises(ValueError, match="symmetric Gram"):
        symmetric_gram(K)
    small = rng.normal(size=(n, n)) * 1e-3
    small = small + small.T
    small[0, n - 1] += 2e-10  # entries below 1: the scale is 1, the threshold 1e-10
    with pytest.raises(ValueError, match="symmetric Gram"):
        symmetric_gram(small)


@pytest.mark.parametrize(
    "bad, error, match",
    [
        (lambda K: K[:, :-1], ValueError, "square Gram matrix"),
        (lambda K: K + np.triu(np.full(K.shape, 1e-3), 1), ValueError, "symmetric Gram"),
        (lambda K: np.where(np.eye(len(K)) == 1, np.nan, K), ValueError, "NaN"),
    ],
)
def test_a_bad_gram_matrix_is_refused_by_a_multiclass_fit(iris_gram, bad, error, match):
    K, y = iris_gram
    with pytest.raises(error, match=match):
        symmetric_gram(bad(K))
    with pytest.raises(error, match=match):
        SVMClassifier(kernel="precomputed").fit(bad(K), y)


def test_a_too_large_C_for_the_gram_s_diagonal_is_refused_at_fit(iris_gram):
    K, y = iris_gram
    with pytest.raises(ValueError, match="C · max K̃_ii"):
        SVMClassifier(kernel="precomputed", C=1e9).fit(1e3 * K, y)


def test_the_pairs_are_the_constructor_s_problems_and_the_matrix_is_checked_once(
    iris_gram, monkeypatch
):
    """Every pair after the first is a trusted block of the matrix checked once; each equals
    the problem the constructor builds on the user's block (its X to the last bit, its
    convexity), and the fit gives the constructor-built pairs' model."""
    K, y = iris_gram
    calls, pairs = [], []
    original_check, original_block = reductions.symmetric_gram, KernelDual._on_checked_gram

    def check(K, **options):
        calls.append(K.shape)
        return original_check(K, **options)

    def block(self, X, labels):
        pair = original_block(self, X, labels)
        pairs.append(pair)
        return pair

    monkeypatch.setattr(reductions, "symmetric_gram", check)
    monkeypatch.setattr(KernelDual, "_on_checked_gram", block)
    fast = SVMClassifier(kernel="precomputed", tol=1e-8).fit(K, y)
    assert calls == [(150, 150)] and len(pairs) == 2
    for pair, (pos, neg) in zip(pairs, [(0, 2), (1, 2)], strict=True):
        rows = np.flatnonzero((y == pos) | (y == neg))
        y_pm = np.where(y[rows] == pos, 1.0, -1.0)
        built = KernelDual(K[np.ix_(rows, rows)], y_pm, kernel="precomputed")
        np.testing.assert_array_equal(pair.X, built.X)
        np.testing.assert_array_equal(pair.y, built.y)
        assert pair.convex is built.convex is True
        assert "min_eigenvalue" not in pair.__dict__ or pair.min_eigenvalue == built.min_eigenvalue
    # the pairs by the constructor, each checking its own block
    monkeypatch.setattr(reductions, "symmetric_gram", lambda K, **options: None)
    slow = SVMClassifier(kernel="precomputed", tol=1e-8).fit(K, y)
    for name in ("support_", "dual_coef_", "intercept_", "n_support_"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))


def test_an_indefinite_gram_s_pairs_keep_their_own_convexity(monkeypatch):
    """A block of an indefinite matrix may be positive semi-definite: a trusted pair's
    convexity is its own block's, not the whole matrix's."""
    rng = np.random.default_rng(1)
    A = rng.normal(size=(30, 4))
    K = A @ A.T
    K[:10, 10:20] = K[10:20, :10] = 0.0
    K[:10, :10] -= 5.0 * np.eye(10)  # class 0's block indefinite, classes 1 and 2 PSD
    y = np.repeat([0, 1, 2], 10)
    assert np.linalg.eigvalsh(K)[0] < 0
    pairs = []
    original_block = KernelDual._on_checked_gram

    def block(self, X, labels):
        pairs.append(original_block(self, X, labels))
        return pairs[-1]

    monkeypatch.setattr(KernelDual, "_on_checked_gram", block)
    clf = SVMClassifier(kernel="precomputed").fit(K, y)
    assert [p.convex for p in pairs] == [False, True]  # (0, 2), (1, 2)
    assert clf.result_.info["binary_certified"][2] is True
    with pytest.raises(TypeError, match="precomputed kernel"):
        KernelDual(A, np.where(y == 0, 1.0, -1.0))._on_checked_gram(K, np.ones(30))


def test_cholesky_bound_leaves_its_argument_alone():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(20, 20))
    K = A @ A.T
    before = K.copy()
    assert cholesky_bound(K, 1e-10) == -1e-10
    assert cholesky_bound(K - 2 * np.linalg.eigvalsh(K)[-1] * np.eye(20), 1e-10) is None
    F = np.asfortranarray(K)
    assert cholesky_bound(F, 1e-10) == -1e-10
    S = 0.5 * (K + K.T)  # exactly symmetric: its copy read transposed
    assert cholesky_bound(S, 1e-10, symmetric=True) == -1e-10
    assert cholesky_bound(S - 2 * np.linalg.eigvalsh(S)[-1] * np.eye(20), 1e-10, True) is None
    np.testing.assert_array_equal(K, before)
    np.testing.assert_array_equal(F, before)
