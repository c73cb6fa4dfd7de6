"""Tests of problems.datasets: generators, real sets, LIBSVM files, prepare and spec strings."""

import dataclasses
import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.datasets

from svmbench.problems.dataset_record import Dataset
from svmbench.problems.datasets import DATASETS, describe, load, prepare
from svmbench.problems.libsvm_files import libsvm
from svmbench.problems.sklearn_sets import breast_cancer, digits, iris, wine
from svmbench.problems.synthetic import _bernoulli_mask, blobs, circles, gaussian, quadrant, xor

EXPECTED_NAMES = [
    "gaussian",
    "quadrant",
    "xor",
    "circles",
    "blobs",
    "iris",
    "wine",
    "digits",
    "breast_cancer",
    "libsvm",
    "diabetes",
    "regression",
    "friedman1",
    "friedman2",
    "friedman3",
    "outliers",
]


def dense(X):
    return X.toarray() if sp.issparse(X) else X


def assert_same_arrays(a: Dataset, b: Dataset):
    np.testing.assert_array_equal(dense(a.X), dense(b.X))
    np.testing.assert_array_equal(a.y, b.y)
    assert a.y.dtype == b.y.dtype
    assert (a.X_test is None) == (b.X_test is None)
    if a.X_test is not None:
        np.testing.assert_array_equal(dense(a.X_test), dense(b.X_test))
        np.testing.assert_array_equal(a.y_test, b.y_test)


# --------------------------------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------------------------------

GENERATORS = {
    "gaussian": lambda seed: gaussian(60, 4, 1.0, seed=seed),
    "gaussian_sparse": lambda seed: gaussian(60, 40, 1.0, seed=seed, density=0.2),
    "quadrant": lambda seed: quadrant(60, 4, noise=0.1, seed=seed),
    "xor": lambda seed: xor(60, noise=0.1, seed=seed),
    "circles": lambda seed: circles(60, seed=seed),
    "blobs": lambda seed: blobs(60, 3, 4, seed=seed),
}


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_same_seed_same_arrays_different_seed_different(make):
    a, b, c = make(3), make(3), make(4)
    assert_same_arrays(a, b)
    assert a.spec == b.spec != c.spec
    assert not np.array_equal(dense(a.X), dense(c.X))


@pytest.mark.parametrize("make", GENERATORS.values(), ids=GENERATORS.keys())
def test_generators_return_documented_types(make):
    ds = make(0)
    assert ds.n_samples == 60
    if ds.is_binary:
        assert ds.y.dtype == np.float64
        assert set(np.unique(ds.y)) == {-1.0, 1.0}
        assert ds.n_classes == 2
    else:
        assert ds.y.dtype == np.int64
        assert set(np.unique(ds.y)) == set(range(ds.n_classes))
    if ds.is_sparse:
        assert ds.X.format == "csr" and ds.X.dtype == np.float64
    else:
        assert ds.X.dtype == np.float64 and ds.X.flags.c_contiguous
    assert ds.X_test is None and ds.y_test is None


# --------------------------------------------------------------------------------------------------
# Synthetic generators
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [100, 101])
def test_gaussian_classes_are_balanced(n):
    ds = gaussian(n, 3, 2.0, seed=1)
    assert ds.X.shape == (n, 3)
    assert np.sum(ds.y == 1.0) == math.ceil(n / 2)
    assert np.sum(ds.y == -1.0) == n // 2
    # one seeded permutation: the labels are not sorted by class
    assert not np.all(np.diff(ds.y) >= 0)


def test_gaussian_class_means_are_sep_apart_with_identity_covariance():
    sep, n, d = 2.0, 20_000, 5
    ds = gaussian(n, d, sep, seed=7)
    pos, neg = ds.X[ds.y == 1.0], ds.X[ds.y == -1.0]
    diff = pos.mean(axis=0) - neg.mean(axis=0)
    # standard error of each coordinate of diff: sqrt(2 / (n/2)) = 0.014
    assert abs(np.linalg.norm(diff) - sep) < 0.08
    np.testing.assert_allclose(pos.mean(axis=0) + neg.mean(axis=0), 0.0, atol=0.08)
    np.testing.assert_allclose(np.cov(pos, rowvar=False), np.eye(d), atol=0.08)


def test_gaussian_sep_zero_has_equal_means():
    ds = gaussian(20_000, 3, 0.0, seed=2)
    diff = ds.X[ds.y == 1.0].mean(axis=0) - ds.X[ds.y == -1.0].mean(axis=0)
    assert np.linalg.norm(diff) < 0.08


def test_sparse_gaussian_is_csr_with_the_asked_density():
    n, d, density = 2000, 500, 0.05
    ds = gaussian(n, d, 1.0, seed=0, density=density)
    assert isinstance(ds.X, sp.csr_matrix) and ds.is_sparse
    assert ds.X.shape == (n, d)
    assert ds.X.has_sorted_indices
    # nnz ~ Binomial(n d, density): standard deviation of the fraction is 2.2e-4
    assert abs(ds.X.nnz / (n * d) - density) < 2e-3
    assert np.all(ds.X.data != 0.0)


def test_sparse_gaussian_shifts_the_means_on_kept_entries_only():
    density, sep = 0.5, 4.0
    ds = gaussian(20_000, 3, sep, seed=3, density=density)
    X = ds.X.toarray()
    diff = X[ds.y == 1.0].mean(axis=0) - X[ds.y == -1.0].mean(axis=0)
    assert abs(np.linalg.norm(diff) - density * sep) < 0.1


def test_sparse_gaussian_never_builds_the_dense_array():
    n, d, density = 2000, 200_000, 1e-4  # dense would be 3.2 GB; ~40 000 non-zeros
    tracemalloc.start()
    try:
        ds = gaussian(n, d, 1.0, seed=0, density=density)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ds.X.shape == (n, d)
    assert peak < 50e6


def test_sparse_gaussian_density_one_keeps_every_entry():
    ds = gaussian(30, 7, 1.0, seed=0, density=1.0)
    assert ds.X.nnz == 30 * 7


@pytest.mark.parametrize("d", [2, 5])
def test_quadrant_geometry_without_noise(d):
    ds = quadrant(300, d, seed=5)
    assert ds.X.shape == (300, d)
    assert np.all(ds.X[:, 0] > 0) and np.all(ds.X[:, 0] <= 1)
    assert np.all(np.abs(ds.X[:, 1]) > 0) and np.all(np.abs(ds.X[:, 1]) <= 1)
    np.testing.assert_array_equal(np.sign(ds.X[:, 1]), ds.y)
    assert np.sum(ds.y == 1.0) == 150
    assert ds.classes == ("x2<0", "x2>0")


@pytest.mark.parametrize(("n", "noise"), [(300, 0.1), (10, 0.25), (7, 0.5), (50, 0.0)])
def test_quadrant_flips_exactly_round_noise_n_labels(n, noise):
    ds = quadrant(n, noise=noise, seed=1)
    assert np.all(ds.X[:, 0] > 0)
    assert np.sum(np.sign(ds.X[:, 1]) != ds.y) == round(noise * n)


def test_xor_labels_and_noise():
    clean = xor(400, seed=2)
    assert clean.X.shape == (400, 2)
    assert np.all(np.abs(clean.X) <= 1.0)
    np.testing.assert_array_equal(np.sign(clean.X[:, 0] * clean.X[:, 1]), clean.y)
    noisy = xor(400, noise=0.2, seed=2)
    np.testing.assert_array_equal(noisy.X, clean.X)
    assert np.sum(noisy.y != clean.y) == 80


def test_circles_inner_class_is_positive():
    ds = circles(200, noise=0.0, factor=0.3, seed=0)
    radius = np.linalg.norm(ds.X, axis=1)
    np.testing.assert_allclose(radius[ds.y == 1.0], 0.3)
    np.testing.assert_allclose(radius[ds.y == -1.0], 1.0)
    assert ds.classes == ("outer", "inner")


def test_blobs_is_multiclass():
    ds = blobs(90, 4, 3, seed=0)
    assert ds.X.shape == (90, 4)
    assert ds.y.dtype == np.int64 and not ds.is_binary
    np.testing.assert_array_equal(np.bincount(ds.y), [30, 30, 30])
    assert ds.classes == ("0", "1", "2") and ds.n_classes == 3


# --------------------------------------------------------------------------------------------------
# Real data sets
# --------------------------------------------------------------------------------------------------


def test_digits_binary_maps_0_4_to_minus_and_5_9_to_plus():
    raw = sklearn.datasets.load_digits()
    ds = digits(binary=True)
    np.testing.assert_array_equal(ds.y, np.where(raw.target >= 5, 1.0, -1.0))
    assert ds.classes == ("0-4", "5-9") and ds.is_binary
    np.testing.assert_array_equal(ds.X, raw.data / 16.0)
    assert ds.X.min() == 0.0 and ds.X.max() == 1.0


def test_digits_multiclass_and_standardized_constant_pixels():
    ds = digits(standardize=True)
    assert ds.n_classes == 10 and ds.y.dtype == np.int64
    raw = sklearn.datasets.load_digits().data
    constant = np.ptp(raw, axis=0) == 0
    assert constant.any()  # digits has always-blank pixels
    assert np.all(np.isfinite(ds.X))
    assert np.all(ds.X[:, constant] == 0.0)
    np.testing.assert_allclose(ds.X[:, ~constant].std(axis=0), 1.0)


def test_standardize_leaves_constant_columns_at_exactly_zero():
    from svmbench.problems.sklearn_sets import _standardize

    # np.full(103, c).mean() != c for this c: a naive (X - mean) / std gives -1, not 0
    c = 6.369616873214543
    X = np.column_stack([np.full(103, c), np.arange(103.0)])
    Z = _standardize(X)
    assert np.all(Z[:, 0] == 0.0)
    np.testing.assert_allclose([Z[:, 1].mean(), Z[:, 1].std()], [0.0, 1.0], atol=1e-12)


def test_breast_cancer_is_standardized_binary():
    ds = breast_cancer()
    assert ds.X.shape == (569, 30)
    np.testing.assert_allclose(ds.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(ds.X.std(axis=0), 1.0)
    assert ds.classes == ("malignant", "benign")
    raw = sklearn.datasets.load_breast_cancer()
    np.testing.assert_array_equal(ds.y == 1.0, raw.target == 1)  # benign -> +1
    assert np.sum(ds.y == 1.0) == 357


def test_real_sets_without_standardization_are_the_raw_data():
    np.testing.assert_array_equal(iris(standardize=False).X, sklearn.datasets.load_iris().data)
    np.testing.assert_array_equal(wine(standardize=False).X, sklearn.datasets.load_wine().data)


@pytest.mark.parametrize(("make", "shape", "k"), [(iris, (150, 4), 3), (wine, (178, 13), 3)])
def test_multiclass_real_sets(make, shape, k):
    ds = make()
    assert ds.X.shape == shape and ds.n_classes == k
    np.testing.assert_array_equal(np.unique(ds.y), np.arange(k))
    np.testing.assert_allclose(ds.X.mean(axis=0), 0.0, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# LIBSVM files
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def svmlight_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6))
    X[rng.random((40, 6)) < 0.5] = 0.0
    labels = np.where(rng.random(40) < 0.5, 2.0, 7.0)
    path = tmp_path / "small.txt"
    sklearn.datasets.dump_svmlight_file(X, labels, str(path), zero_based=False)
    return path, X, labels


@pytest.mark.parametrize("as_dense", [False, True])
def test_libsvm_round_trip(svmlight_file, as_dense):
    path, X, labels = svmlight_file
    ds = libsvm(path, dense=as_dense, n_features=6)
    assert ds.is_sparse is not as_dense
    if as_dense:
        assert isinstance(ds.X, np.ndarray) and ds.X.flags.c_contiguous
    else:
        assert isinstance(ds.X, sp.csr_matrix)
    np.testing.assert_allclose(dense(ds.X), X, rtol=1e-15)
    np.testing.assert_array_equal(ds.y, np.where(labels == 7.0, 1.0, -1.0))  # smaller -> -1
    assert ds.classes == ("2", "7")
    assert_same_arrays(load(ds.spec), ds)


def test_libsvm_multiclass(tmp_path):
    X = np.arange(12.0).reshape(6, 2) + 1.0
    path = tmp_path / "multi.txt"
    sklearn.datasets.dump_svmlight_file(
        X, np.array([3, 1, 5, 1, 3, 5]), str(path), zero_based=False
    )
    ds = load(f"libsvm:path={path},dense=1")
    np.testing.assert_array_equal(ds.y, [1, 0, 2, 0, 1, 2])
    assert ds.y.dtype == np.int64 and ds.classes == ("1", "3", "5")
    np.testing.assert_array_equal(ds.X, X)


def test_libsvm_missing_file_raises(tmp_path):
    with pytest.raises(ValueError, match="absent.txt: no such svmlight/LIBSVM file"):
        libsvm(tmp_path / "absent.txt")


def test_libsvm_single_class_raises(tmp_path):
    path = tmp_path / "one.txt"
    sklearn.datasets.dump_svmlight_file(np.eye(3), np.ones(3), str(path))
    with pytest.raises(ValueError, match="single class"):
        libsvm(path)


# --------------------------------------------------------------------------------------------------
# Spec strings
# --------------------------------------------------------------------------------------------------

SPECS = [
    "gaussian:n=2000,d=20,sep=1.5,seed=0",
    "quadrant:n=300,d=5,noise=0.1",
    "xor:n=50,noise=0.2,seed=4",
    "circles:n=80,factor=0.3",
    "blobs:n=60,d=2,k=3,split=0.25",
    "breast_cancer:n=200,seed=1",
    "digits:binary=1,n=300",
    "gaussian:n=1000,d=10000,sep=1,density=0.01",
    "gaussian:n=300,d=50,sep=1,density=0.1,dense=true,split=0.2,seed=3",
    "iris:split=0.3",
    "iris",
    "wine:sparse=yes,n=100,seed=2",
]


@pytest.mark.parametrize("spec", SPECS)
def test_spec_round_trip(spec):
    ds = load(spec)
    again = load(ds.spec)
    assert again.spec == ds.spec
    assert again.name == ds.name == spec.split(":")[0]
    assert_same_arrays(again, ds)


def test_spec_is_canonical():
    ds = load(" gaussian : sep=1.5 , n=2000, d=20 ")
    assert ds.spec == "gaussian:d=20,n=2000,seed=0,sep=1.5"
    assert load("iris").spec == "iris:standardize=true"
    assert load("iris:seed=5").spec == "iris:standardize=true"  # seed without n/split: no effect
    assert load("iris:split=0.3").spec == "iris:seed=0,split=0.3,standardize=true"
    assert load("digits:binary=yes,n=300").spec == (
        "digits:binary=true,n=300,seed=0,standardize=false"
    )


def test_spec_matches_the_function_call():
    assert_same_arrays(load("quadrant:n=300,d=5,noise=0.1"), quadrant(300, 5, noise=0.1))
    assert_same_arrays(load("gaussian:n=1e3,d=3,sep=2"), gaussian(1000, 3, 2.0))
    assert_same_arrays(load("breast_cancer:n=200,seed=1"), prepare(breast_cancer(), n=200, seed=1))
    assert gaussian(10, 2, 1).spec == "gaussian:d=2,n=10,seed=0,sep=1.0"


def test_prepare_records_its_steps_in_the_spec():
    ds = prepare(iris(), n=60, split=0.5, seed=4, sparse=True)
    assert ds.spec == "iris:n=60,seed=4,sparse=true,split=0.5,standardize=true"
    assert_same_arrays(load(ds.spec), ds)
    g = prepare(gaussian(100, 3, 1.0, seed=2), split=0.2)  # the generator's seed
    assert g.spec == "gaussian:d=3,n=100,seed=2,sep=1.0,split=0.2"
    assert_same_arrays(load(g.spec), g)


def test_describe_lists_the_registry():
    pairs = describe()
    assert [name for name, _ in pairs] == EXPECTED_NAMES == list(DATASETS)
    assert all(isinstance(text, str) and text and "\n" not in text for _, text in pairs)
    function, description = DATASETS["iris"]
    assert function is iris and description == dict(pairs)["iris"]


# --------------------------------------------------------------------------------------------------
# prepare: subsample, split, convert
# --------------------------------------------------------------------------------------------------


def test_subsample_is_stratified_and_keeps_rows():
    full = iris()
    ds = prepare(full, n=30, seed=0)
    np.testing.assert_array_equal(np.bincount(ds.y), [10, 10, 10])
    rows = {tuple(r) for r in full.X}
    assert all(tuple(r) in rows for r in ds.X)
    assert len({tuple(r) for r in ds.X}) == 30  # no row twice
    other = prepare(full, n=30, seed=1)
    assert not np.array_equal(ds.X, other.X)
    assert_same_arrays(prepare(full, n=30, seed=0), ds)


def test_subsample_proportions_follow_the_class_sizes():
    ds = load("breast_cancer:n=200,seed=1")
    full = breast_cancer()
    expected = 200 * np.mean(full.y == 1.0)  # 125.7
    assert abs(np.sum(ds.y == 1.0) - expected) <= 1


def test_subsample_keeps_every_class_even_a_tiny_one():
    y = np.r_[np.ones(97), -np.ones(3)]
    toy = Dataset("toy", "toy", np.arange(200.0).reshape(100, 2), y, ("neg", "pos"))
    for seed in range(5):
        ds = prepare(toy, n=4, seed=seed)
        assert set(ds.y) == {-1.0, 1.0}
    small = prepare(toy, n=2, seed=0)
    np.testing.assert_array_equal(np.sort(small.y), [-1.0, 1.0])
    assert small.spec == "toy:n=2,seed=0"


def test_split_sizes_and_stratification():
    full = iris()
    ds = prepare(full, split=0.3, seed=0)
    assert ds.X_test.shape == (45, 4) and ds.X.shape == (105, 4)
    np.testing.assert_array_equal(np.bincount(ds.y_test), [15, 15, 15])
    np.testing.assert_array_equal(np.bincount(ds.y), [35, 35, 35])
    both = np.vstack([ds.X, ds.X_test])
    assert {tuple(r) for r in both} == {tuple(r) for r in full.X}
    odd = load("gaussian:n=101,d=2,sep=1,split=0.25")
    assert odd.X_test.shape[0] == math.ceil(0.25 * 101) and odd.n_samples == 101 - 26
    assert set(odd.y_test) == {-1.0, 1.0} and set(odd.y) == {-1.0, 1.0}


def test_sparse_and_dense_conversions():
    ds = prepare(iris(), sparse=True, split=0.2)
    assert isinstance(ds.X, sp.csr_matrix) and isinstance(ds.X_test, sp.csr_matrix)
    back = prepare(ds, dense=True)
    assert isinstance(back.X, np.ndarray) and back.X.flags.c_contiguous
    np.testing.assert_array_equal(back.X, ds.X.toarray())
    assert back.spec == "iris:dense=true,seed=0,split=0.2,standardize=true"
    assert_same_arrays(load(back.spec), back)


def test_subsample_then_split_in_two_calls_equals_one_call():
    two = prepare(prepare(wine(), n=90, seed=3), split=0.4)
    one = prepare(wine(), n=90, split=0.4, seed=3)
    assert two.spec == one.spec == "wine:n=90,seed=3,split=0.4,standardize=true"
    assert_same_arrays(two, one)
    assert_same_arrays(load(two.spec), two)
    with pytest.raises(ValueError, match="seed must equal the seed=3 already used"):
        prepare(prepare(wine(), n=90, seed=3), split=0.4, seed=4)


def test_prepare_without_options_returns_the_dataset():
    ds = iris()
    assert prepare(ds) is ds


def test_dataset_is_frozen_and_reports_its_shape():
    ds = wine()
    assert (ds.n_samples, ds.n_features, ds.n_classes) == (178, 13, 3)
    assert not ds.is_binary and not ds.is_sparse
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.X = None
    assert "wine" in repr(ds) and "n_samples=178" in repr(ds)


def test_dataset_rejects_inconsistent_labels():
    with pytest.raises(ValueError, match=r"y: float64 labels must be in \{-1, \+1\}"):
        Dataset("toy", "toy", np.zeros((2, 1)), np.array([0.0, 1.0]), ("a", "b"))
    with pytest.raises(ValueError, match="y must be a 1-D ndarray of length 3"):
        Dataset("toy", "toy", np.zeros((3, 1)), np.array([1.0, -1.0]), ("a", "b"))


# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("nosuch:n=3", "unknown dataset 'nosuch'; expected one of gaussian, quadrant, xor"),
        ("gaussian:n=10,d=2,sep=1,colour=red", "unknown parameter 'colour'"),
        ("gaussian:n=10,d=2", "missing required parameter 'sep'"),
        ("libsvm", "missing required parameter 'path'"),
        ("gaussian:n=0,d=2,sep=1", "n must be an integer >= 2, got 0"),
        ("xor:n=-5", "n must be an integer >= 1, got -5"),
        ("gaussian:n=10,d=0,sep=1", "d must be an integer >= 1, got 0"),
        ("gaussian:n=10,d=2,sep=-1", r"sep must be in \[0.0, inf\), got -1.0"),
        ("quadrant:n=10,noise=0.6", r"noise must be in \[0.0, 0.5\], got 0.6"),
        ("xor:n=10,noise=-0.1", r"noise must be in \[0.0, 0.5\], got -0.1"),
        ("gaussian:n=10,d=2,sep=1,density=0", r"density must be in \(0.0, 1.0\], got 0.0"),
        ("gaussian:n=10,d=2,sep=1,density=1.5", r"density must be in \(0.0, 1.0\], got 1.5"),
        ("blobs:n=10,d=2,k=1", "k must be an integer >= 2, got 1"),
        ("iris:split=0", r"split must be in \(0.0, 1.0\), got 0.0"),
        ("iris:split=1", r"split must be in \(0.0, 1.0\), got 1.0"),
        ("breast_cancer:n=0", "n must be an integer >= 1, got 0"),
        ("breast_cancer:n=600", "n must be <= n_samples=569"),
        ("iris:n=2", "n must be >= the number of classes 3"),
        ("digits:binary=maybe", "binary must be a boolean"),
        ("gaussian:n=ten,d=2,sep=1", "n must be an integer, got 'ten'"),
        ("gaussian:n=10,d=2,sep=far", "sep must be a real number, got 'far'"),
        ("gaussian:n=10,d=2,sep=1,sep=2", "parameter 'sep' given twice"),
        ("gaussian:n=10,d", "expected key=value"),
        ("iris:sparse=1,dense=1", "sparse and dense cannot both be True"),
        (":n=3", "spec must start with a dataset name"),
    ],
)
def test_bad_spec_raises(spec, match):
    with pytest.raises(ValueError, match=match):
        load(spec)


def test_bad_python_arguments_raise():
    with pytest.raises(TypeError, match="n must be an integer, got float"):
        gaussian(10.5, 2, 1.0)
    with pytest.raises(ValueError, match="d must be an integer >= 2, got 1"):
        quadrant(10, 1)
    with pytest.raises(ValueError, match="n: gaussian takes n itself"):
        prepare(gaussian(10, 2, 1.0), n=5)
    with pytest.raises(ValueError, match="seed must equal the seed=0 already used"):
        prepare(gaussian(10, 2, 1.0), split=0.5, seed=1)
    with pytest.raises(ValueError, match="already split"):
        prepare(prepare(iris(), split=0.3), split=0.3)
    with pytest.raises(ValueError, match="already subsampled"):
        prepare(prepare(iris(), n=50), n=20)
    with pytest.raises(ValueError, match="cannot put every class"):
        prepare(iris(), split=0.01)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("", "holds no examples"),
        ("# a comment only\n\n", "holds no examples"),
        ("1 4000000000:1\n-1 1:2\n", "cannot read"),
        ("\udcff garbage\n", "cannot read"),
        ("1 1:1\n-1 1:2\nnan 1:3\n", "holds the label nan on 1 line\\(s\\): labels must be finite"),
        ("1 1:1\ninf 1:2\n", "holds the label inf"),
        ("1 1:1\n-inf 1:2\n-1 1:3\n", "holds the label -inf"),
        ("1 1:nan\n-1 1:2\n", "holds a NaN or infinite feature value"),
        ("1 1:1\n-1 2:inf\n", "holds a NaN or infinite feature value"),
        ("\x1f\udc8b\x08\x00 gzip", "is compressed; decompress it first"),
    ],
    ids=[
        "empty",
        "comments-only",
        "huge-feature-index",
        "not-text",
        "nan-label",
        "inf-label",
        "minus-inf-label",
        "nan-value",
        "inf-value",
        "gzip",
    ],
)
def test_libsvm_files_that_cannot_be_read_are_value_errors(tmp_path, content, match):
    path = tmp_path / "bad.svm"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError, match=match):
        load(f"libsvm:path={path}")


def test_libsvm_paths_that_are_not_regular_files_are_refused_unread(tmp_path, fifo, returns_within):
    path, unblock = fifo
    with pytest.raises(ValueError, match="fifo: not a regular file but a FIFO"):
        returns_within(10, lambda: load(f"libsvm:path={path}"), unblock=unblock)
    with pytest.raises(ValueError, match="not a regular file but a directory"):
        libsvm(tmp_path)


@pytest.mark.parametrize("density", [1e-300, 1e-20, 1e-12])
def test_a_sparse_gaussian_of_vanishing_density_is_empty_and_quick(density, returns_within):
    ds = returns_within(30, lambda: load(f"gaussian:n=10,d=3,sep=1,density={density}"))
    assert ds.X.shape == (10, 3) and ds.X.nnz == 0 and sp.isspmatrix_csr(ds.X)


def test_the_sparse_mask_is_the_same_draw_as_before_the_overflow_guard():
    """The clipped gaps change no mask that the unclipped ones drew (same seeds, same data)."""
    rng = np.random.default_rng(5)
    rows, cols = _bernoulli_mask(50, 40, 0.1, rng)
    rng = np.random.default_rng(5)
    pos = np.cumsum(rng.geometric(0.1, size=1024)) - 1  # one chunk covers 2000 entries
    pos = pos[pos < 2000]
    np.testing.assert_array_equal(rows * 40 + cols, pos)


@pytest.mark.parametrize(
    "spec", ["gaussian:n=1e12,d=3,sep=1", "blobs:n=1e11,d=10,k=3", "xor:n=1e13"]
)
def test_a_spec_larger_than_the_machine_is_refused_before_anything_is_made(spec):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=f"data spec '{spec}' needs ~[0-9]+ MB .*more than"):
            load(spec)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
