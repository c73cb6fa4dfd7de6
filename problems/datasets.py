"""Data sets for the benchmarks: seeded synthetic generators, scikit-learn's sets, LIBSVM files.

Every function returns a :class:`Dataset` whose ``spec`` string reproduces it exactly through
:func:`load`. Binary tasks have float64 labels in {-1, +1}; multiclass tasks have int64 labels in
0..k-1. All randomness comes from ``np.random.default_rng(seed)`` (scikit-learn's generators get the
integer ``seed`` as their ``random_state``), so equal seeds give identical arrays.

What each generator draws
-------------------------
gaussian(n, d, sep)
    ``ceil(n/2)`` points labelled +1 and ``floor(n/2)`` labelled -1, rows in a seeded random order.
    A unit direction ``u`` is drawn uniformly on the sphere; ``x_i = z_i + y_i (sep/2) u`` with
    ``z_i ~ N(0, I_d)``, so the class means are ``±(sep/2) u``. With ``density`` the matrix is CSR:
    each entry is kept independently with probability ``density`` and a kept entry is
    ``z_ij + y_i (sep/2) u_j``, i.e. the mean shift applies only to kept entries and the expected
    class means become ``±density (sep/2) u``. The mask is drawn as geometric gaps between kept
    positions, so the dense n×d array is never built.
quadrant(n, d=2)
    ``ceil(n/2)`` points labelled +1 and the rest -1, in a seeded random order. ``x1`` and ``|x2|``
    are uniform on (0, 1] and ``x2 = y |x2|``: class +1 lies in x1 > 0, x2 > 0 and class -1 in
    x1 > 0, x2 < 0. Columns 3..d are N(0, 1) noise. Then exactly ``round(noise n)`` labels, chosen
    by the seed, are flipped.
xor(n)
    ``x`` uniform on [-1, 1]^2, ``y = sign(x1 x2)``, then ``round(noise n)`` labels flipped.
circles(n)
    :func:`sklearn.datasets.make_circles` (outer circle -1, inner circle +1); here ``noise`` is the
    standard deviation of the Gaussian noise added to the points, not a label-flip fraction.
blobs(n, d, k)
    :func:`sklearn.datasets.make_blobs` with ``k`` centres: a multiclass task with labels 0..k-1
    (also when ``k = 2``).

Real data sets
--------------
``iris``, ``wine``, ``digits`` and ``breast_cancer`` load from scikit-learn's package data (no
network). They are standardized by default (each feature to zero mean and unit variance over the
whole set; constant features become 0 instead of being divided by zero). ``digits`` is instead
scaled by 1/16 to [0, 1] by default. ``libsvm`` reads an svmlight/LIBSVM file.

Post-processing
---------------
:func:`prepare` (and the spec keys ``n``, ``split``, ``seed``, ``sparse``, ``dense``) subsamples
(stratified), splits off a stratified test set and converts between dense and CSR, in that order.
Where a generator has its own ``n``, ``seed`` or ``dense`` parameter, the spec key means the
generator's parameter; the split then uses the generator's seed.

Spec strings
------------
``name`` or ``name:key=value,key=value``, e.g. ``gaussian:n=2000,d=20,sep=1.5,seed=0`` or
``breast_cancer:n=200,seed=1``. Values are converted to the type of the parameter (integers, reals,
booleans written true/false/yes/no/1/0, strings). String values cannot contain commas.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import sklearn.datasets

from svmbench.problems.validation import check_int, check_real

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetInfo",
    "blobs",
    "breast_cancer",
    "circles",
    "describe",
    "digits",
    "estimate_bytes",
    "gaussian",
    "iris",
    "libsvm",
    "load",
    "prepare",
    "quadrant",
    "wine",
    "xor",
]


# --------------------------------------------------------------------------------------------------
# The record
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A data set, its labels, an optional test split, and the spec that reproduces it.

    Parameters
    ----------
    name : str
        Registry name of the source (``"gaussian"``, ``"iris"``, ...).
    spec : str
        Canonical spec string; ``load(spec)`` reproduces the same arrays exactly.
    X : ndarray of shape (n_samples, n_features) or scipy.sparse CSR matrix
        Training features, float64 (dense arrays are C-contiguous).
    y : ndarray of shape (n_samples,)
        float64 labels in {-1.0, +1.0} for a binary task, int64 labels in 0..k-1 for multiclass.
    classes : tuple of str
        Class names: for a binary task the meaning of -1 then +1; for multiclass, of 0..k-1.
    X_test, y_test : same types as ``X`` and ``y``, or None
        The test split, when one was asked for.

    Notes
    -----
    Equality and hashing are by identity (arrays have no useful ``==``); compare ``spec`` strings
    or the arrays themselves.
    """

    name: str
    spec: str
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    classes: tuple[str, ...]
    X_test: np.ndarray | sp.csr_matrix | None = None
    y_test: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "classes", tuple(str(c) for c in self.classes))
        object.__setattr__(self, "X", _as_features(self.X, "X"))
        _check_labels(self.y, self.X.shape[0], self.classes, "y")
        if (self.X_test is None) != (self.y_test is None):
            raise ValueError("X_test and y_test must be given together or both be None")
        if self.X_test is not None:
            object.__setattr__(self, "X_test", _as_features(self.X_test, "X_test"))
            if self.X_test.shape[1] != self.X.shape[1]:
                raise ValueError(
                    f"X_test must have n_features={self.X.shape[1]} columns like X, "
                    f"got {self.X_test.shape[1]}"
                )
            if self.y_test.dtype != self.y.dtype:
                raise ValueError(f"y_test must have dtype {self.y.dtype} like y")
            _check_labels(self.y_test, self.X_test.shape[0], self.classes, "y_test")

    @property
    def n_samples(self) -> int:
        """Number of training rows."""
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        """Number of columns."""
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        """Number of classes of the task (2 for a binary task)."""
        return len(self.classes)

    @property
    def is_binary(self) -> bool:
        """True for a binary task with labels in {-1, +1} (float64)."""
        return self.y.dtype == np.float64

    @property
    def is_sparse(self) -> bool:
        """True when ``X`` is a scipy CSR matrix."""
        return sp.issparse(self.X)

    def __repr__(self) -> str:
        test = "" if self.X_test is None else f", n_test={self.X_test.shape[0]}"
        return (
            f"Dataset(spec={self.spec!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, n_classes={self.n_classes}, "
            f"sparse={self.is_sparse}{test})"
        )


def _as_features(X, name: str):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    elif isinstance(X, np.ndarray):
        X = np.ascontiguousarray(X, dtype=np.float64)
    else:
        raise TypeError(f"{name} must be a numpy ndarray or a scipy sparse matrix, got {type(X)}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features), got {X.shape}")
    return X


def _check_labels(y, n_samples: int, classes: tuple[str, ...], name: str) -> None:
    if not isinstance(y, np.ndarray) or y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"{name} must be a 1-D ndarray of length {n_samples}")
    if y.dtype == np.float64:
        if len(classes) != 2 or not np.all((y == -1.0) | (y == 1.0)):
            raise ValueError(f"{name}: float64 labels must be in {{-1, +1}} with 2 class names")
    elif y.dtype == np.int64:
        if len(classes) < 2 or (y.size and (y.min() < 0 or y.max() >= len(classes))):
            raise ValueError(f"{name}: int64 labels must be in 0..{len(classes) - 1}")
    else:
        raise ValueError(f"{name} must be float64 (binary) or int64 (multiclass), got {y.dtype}")


# --------------------------------------------------------------------------------------------------
# Synthetic generators
# --------------------------------------------------------------------------------------------------


def gaussian(n: int, d: int, sep: float, *, seed: int = 0, density: float | None = None) -> Dataset:
    """Two Gaussian clouds with identity covariance and means ``±(sep/2) u``.

    Parameters
    ----------
    n : int
        Number of points (>= 2); ``ceil(n/2)`` are labelled +1, the rest -1.
    d : int
        Dimension (>= 1).
    sep : float
        Distance between the two class means (>= 0).
    seed : int, default=0
        Seed of ``np.random.default_rng``; it draws ``u``, the row order, the mask and the noise.
    density : float in (0, 1], default=None
        If given, ``X`` is a CSR matrix in which each entry is kept with this probability; the
        mean shift ``y_i (sep/2) u_j`` is added only to kept entries, so the expected class means
        are ``±density (sep/2) u``. Memory and time are O(n d density).

    Returns
    -------
    Dataset
        A binary task; ``classes == ("-u", "+u")``.
    """
    n = check_int("n", n, low=2)
    d = check_int("d", d, low=1)
    sep = check_real("sep", sep, low=0.0, high=math.inf, closed="left")
    seed = _check_seed(seed)
    if density is not None:
        density = check_real("density", density, low=0.0, high=1.0, closed="right")
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    y = _balanced_labels(n, rng)
    shift = 0.5 * sep * u  # class +1 has mean +shift, class -1 has mean -shift
    if density is None:
        X = rng.standard_normal((n, d)) + y[:, None] * shift
    else:
        rows, cols = _bernoulli_mask(n, d, density, rng)
        values = rng.standard_normal(rows.size) + y[rows] * shift[cols]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        X = sp.csr_matrix((values, cols, indptr), shape=(n, d))
    params = {"n": n, "d": d, "sep": sep, "seed": seed, "density": density}
    return Dataset("gaussian", _format_spec("gaussian", params), X, y, ("-u", "+u"))


def quadrant(n: int, d: int = 2, *, noise: float = 0.0, seed: int = 0) -> Dataset:
    """Class +1 in the quadrant x1 > 0, x2 > 0 and class -1 in x1 > 0, x2 < 0.

    Parameters
    ----------
    n : int
        Number of points (>= 2); ``ceil(n/2)`` are labelled +1 before the label noise.
    d : int, default=2
        Dimension (>= 2); columns 3..d are N(0, 1) noise.
    noise : float in [0, 0.5], default=0.0
        Fraction of labels flipped: exactly ``round(noise * n)`` points, chosen by the seed.
    seed : int, default=0
        Seed of ``np.random.default_rng``.

    Returns
    -------
    Dataset
        A binary task; ``classes == ("x2<0", "x2>0")`` (before the flips).
    """
    n = check_int("n", n, low=2)
    d = check_int("d", d, low=2)
    noise = _check_label_noise(noise)
    seed = _check_seed(seed)
    rng = np.random.default_rng(seed)
    y = _balanced_labels(n, rng)
    X = np.empty((n, d))
    X[:, 0] = 1.0 - rng.random(n)  # uniform on (0, 1]
    X[:, 1] = y * (1.0 - rng.random(n))
    X[:, 2:] = rng.standard_normal((n, d - 2))
    _flip_labels(y, noise, rng)
    params = {"n": n, "d": d, "noise": noise, "seed": seed}
    return Dataset("quadrant", _format_spec("quadrant", params), X, y, ("x2<0", "x2>0"))


def xor(n: int, *, noise: float = 0.0, seed: int = 0) -> Dataset:
    """Points uniform on [-1, 1]^2 labelled ``sign(x1 * x2)`` (not linearly separable).

    Parameters
    ----------
    n : int
        Number of points (>= 1).
    noise : float in [0, 0.5], default=0.0
        Fraction of labels flipped: exactly ``round(noise * n)`` points, chosen by the seed.
    seed : int, default=0
        Seed of ``np.random.default_rng``.

    Returns
    -------
    Dataset
        A binary task; ``classes == ("x1*x2<0", "x1*x2>0")``.
    """
    n = check_int("n", n, low=1)
    noise = _check_label_noise(noise)
    seed = _check_seed(seed)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] >= 0.0, 1.0, -1.0)
    _flip_labels(y, noise, rng)
    params = {"n": n, "noise": noise, "seed": seed}
    return Dataset("xor", _format_spec("xor", params), X, y, ("x1*x2<0", "x1*x2>0"))


def circles(n: int, *, noise: float = 0.1, factor: float = 0.5, seed: int = 0) -> Dataset:
    """Two concentric circles, :func:`sklearn.datasets.make_circles` (outer -1, inner +1).

    Parameters
    ----------
    n : int
        Number of points (>= 2); ``n // 2`` on the outer circle.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise added to the points (>= 0).
    factor : float in [0, 1), default=0.5
        Radius of the inner circle relative to the outer one.
    seed : int, default=0
        ``random_state`` of ``make_circles``.

    Returns
    -------
    Dataset
        A binary task; ``classes == ("outer", "inner")``.
    """
    n = check_int("n", n, low=2)
    noise = check_real("noise", noise, low=0.0, high=math.inf, closed="left")
    factor = check_real("factor", factor, low=0.0, high=1.0, closed="left")
    seed = _check_seed(seed)
    X, label = sklearn.datasets.make_circles(
        n_samples=n, noise=noise, factor=factor, random_state=seed
    )
    y = np.where(label == 1, 1.0, -1.0)
    params = {"n": n, "noise": noise, "factor": factor, "seed": seed}
    return Dataset("circles", _format_spec("circles", params), X, y, ("outer", "inner"))


def blobs(n: int, d: int, k: int, *, seed: int = 0, cluster_std: float = 1.0) -> Dataset:
    """Isotropic Gaussian blobs, :func:`sklearn.datasets.make_blobs`: a multiclass task.

    Parameters
    ----------
    n : int
        Number of points (>= k), split as evenly as possible among the blobs.
    d : int
        Dimension (>= 1).
    k : int
        Number of classes (>= 2); centres uniform in the box [-10, 10]^d.
    seed : int, default=0
        ``random_state`` of ``make_blobs``.
    cluster_std : float, default=1.0
        Standard deviation of each blob (> 0).

    Returns
    -------
    Dataset
        Labels int64 in 0..k-1, ``classes == ("0", ..., str(k - 1))``.
    """
    k = check_int("k", k, low=2)
    n = check_int("n", n, low=k)
    d = check_int("d", d, low=1)
    seed = _check_seed(seed)
    cluster_std = check_real("cluster_std", cluster_std, low=0.0, high=math.inf)
    X, y = sklearn.datasets.make_blobs(
        n_samples=n, n_features=d, centers=k, cluster_std=cluster_std, random_state=seed
    )
    params = {"n": n, "d": d, "k": k, "seed": seed, "cluster_std": cluster_std}
    classes = tuple(str(c) for c in range(k))
    return Dataset("blobs", _format_spec("blobs", params), X, y.astype(np.int64), classes)


def _balanced_labels(n: int, rng: np.random.Generator) -> np.ndarray:
    """``ceil(n/2)`` labels +1 and ``floor(n/2)`` labels -1 in one random order."""
    y = np.where(np.arange(n) < (n + 1) // 2, 1.0, -1.0)
    return y[rng.permutation(n)]


def _flip_labels(y: np.ndarray, noise: float, rng: np.random.Generator) -> None:
    """Flip exactly ``round(noise * n)`` labels (Python rounding), in place."""
    m = round(noise * y.shape[0])
    y[rng.choice(y.shape[0], size=m, replace=False)] *= -1.0


def _bernoulli_mask(n: int, d: int, density: float, rng: np.random.Generator):
    """Rows and columns of the entries of an n×d mask kept independently with prob. ``density``.

    The gaps between successive kept positions of the row-major flattened mask are i.i.d.
    Geometric(density), so the positions come out sorted (CSR order) in O(n d density) work.
    """
    size = n * d
    chunk = max(1024, min(1 << 22, math.ceil(1.1 * size * density) + 64))
    parts, last = [], -1
    while last < size:
        pos = last + np.cumsum(rng.geometric(density, size=chunk))
        parts.append(pos)
        last = int(pos[-1])
    pos = np.concatenate(parts)
    pos = pos[: np.searchsorted(pos, size)]
    return pos // d, (pos % d).astype(np.int32 if d < 2**31 else np.int64)


def _check_label_noise(noise) -> float:
    return check_real("noise", noise, low=0.0, high=0.5, closed="both")


def _check_seed(seed) -> int:
    return check_int("seed", seed, low=0)


# --------------------------------------------------------------------------------------------------
# scikit-learn's data sets and LIBSVM files
# --------------------------------------------------------------------------------------------------


def iris(*, standardize: bool = True) -> Dataset:
    """Fisher's iris, 150 × 4, three classes (setosa, versicolor, virginica).

    Parameters
    ----------
    standardize : bool, default=True
        Scale each feature to zero mean and unit variance over the whole set.
    """
    standardize = _check_bool("standardize", standardize)
    return _sklearn_set("iris", sklearn.datasets.load_iris(), {"standardize": standardize})


def wine(*, standardize: bool = True) -> Dataset:
    """UCI wine recognition, 178 × 13, three classes (class_0, class_1, class_2).

    Parameters
    ----------
    standardize : bool, default=True
        Scale each feature to zero mean and unit variance over the whole set.
    """
    standardize = _check_bool("standardize", standardize)
    return _sklearn_set("wine", sklearn.datasets.load_wine(), {"standardize": standardize})


def breast_cancer(*, standardize: bool = True) -> Dataset:
    """Wisconsin diagnostic breast cancer, 569 × 30, binary: malignant -1, benign +1.

    Parameters
    ----------
    standardize : bool, default=True
        Scale each feature to zero mean and unit variance over the whole set.
    """
    standardize = _check_bool("standardize", standardize)
    bunch = sklearn.datasets.load_breast_cancer()  # target 0 = malignant, 1 = benign
    return _sklearn_set("breast_cancer", bunch, {"standardize": standardize}, binary=True)


def digits(*, binary: bool = False, standardize: bool = False) -> Dataset:
    """Handwritten digits, 1797 × 64 pixels with values 0..16.

    Parameters
    ----------
    binary : bool, default=False
        If True, the binary task digits 0-4 (-1) against 5-9 (+1); else ten classes 0..9.
    standardize : bool, default=False
        If False, pixels are scaled by 1/16 to [0, 1]; if True, each pixel is standardized
        (the always-blank pixels become 0).
    """
    binary = _check_bool("binary", binary)
    standardize = _check_bool("standardize", standardize)
    bunch = sklearn.datasets.load_digits()
    params = {"binary": binary, "standardize": standardize}
    X = bunch.data if standardize else bunch.data / 16.0
    if not binary:
        return _sklearn_set("digits", bunch, params, X=X)
    y = np.where(bunch.target >= 5, 1.0, -1.0)
    X = _standardize(X) if standardize else X
    return Dataset("digits", _format_spec("digits", params), X, y, ("0-4", "5-9"))


def _sklearn_set(name: str, bunch, params: dict, *, X=None, binary: bool = False) -> Dataset:
    X = bunch.data if X is None else X
    X = _standardize(X) if params["standardize"] else X
    classes = tuple(str(c) for c in bunch.target_names)
    if binary:  # target 0 -> -1, target 1 -> +1
        y = np.where(bunch.target == 1, 1.0, -1.0)
    else:
        y = bunch.target.astype(np.int64)
    return Dataset(name, _format_spec(name, params), X, y, classes)


def _standardize(X: np.ndarray) -> np.ndarray:
    """Zero mean and unit variance per column; constant columns become exactly 0."""
    X = np.asarray(X, dtype=np.float64)
    constant = np.ptp(X, axis=0) == 0.0
    scale = np.where(constant, 1.0, X.std(axis=0))
    Z = (X - X.mean(axis=0)) / scale
    Z[:, constant] = 0.0
    return np.ascontiguousarray(Z)


def libsvm(
    path: str | os.PathLike,
    *,
    dense: bool = False,
    zero_based: bool | str = "auto",
    n_features: int | None = None,
) -> Dataset:
    """Read an svmlight/LIBSVM file with :func:`sklearn.datasets.load_svmlight_file`.

    Parameters
    ----------
    path : str or path-like
        The file; a relative path is read relative to the working directory (and kept relative
        in the spec). It may not contain a comma.
    dense : bool, default=False
        Return ``X`` as a dense ndarray instead of CSR.
    zero_based : bool or "auto", default="auto"
        Whether column indices start at 0, as in ``load_svmlight_file``.
    n_features : int, default=None
        Number of columns; default: the largest index found.

    Returns
    -------
    Dataset
        With two distinct labels, a binary task: the smaller label -> -1, the larger -> +1, and
        ``classes`` are the original labels as text (e.g. ``("-1", "1")``). With more labels, a
        multiclass task with labels 0..k-1 in increasing order of the original labels.

    Raises
    ------
    ValueError
        If the file does not exist, cannot be parsed, or holds a single class.
    """
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"path must be a str or os.PathLike of str, got {type(path).__name__}")
    if "," in path:
        raise ValueError(f"path must not contain ',' (spec strings separate parameters), {path!r}")
    dense = _check_bool("dense", dense)
    if not (isinstance(zero_based, bool) or zero_based == "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if n_features is not None:
        n_features = check_int("n_features", n_features, low=1)
    if not os.path.isfile(path):
        raise ValueError(f"path: no such file {path!r}")
    try:
        X, labels = sklearn.datasets.load_svmlight_file(
            path, n_features=n_features, zero_based=zero_based, dtype=np.float64
        )
    except (ValueError, OverflowError, UnicodeDecodeError) as exc:
        # OverflowError: a feature index beyond the parser's integer range
        raise ValueError(f"path: cannot read {path!r} as an svmlight/LIBSVM file: {exc}") from None
    values, y = np.unique(labels, return_inverse=True)
    if values.size == 0:
        raise ValueError(f"path: {path!r} holds no examples (empty, or only comments)")
    if values.size < 2:
        raise ValueError(f"path: {path!r} holds a single class (label {values[0]:g}); need >= 2")
    classes = tuple(f"{v:g}" for v in values)
    y = np.where(y == 1, 1.0, -1.0) if values.size == 2 else y.astype(np.int64)
    X = sp.csr_matrix(X)
    X.sum_duplicates()
    X.sort_indices()
    if dense:
        X = X.toarray()
    params = {"path": path, "dense": dense, "zero_based": zero_based, "n_features": n_features}
    return Dataset("libsvm", _format_spec("libsvm", params), X, y, classes)


# --------------------------------------------------------------------------------------------------
# Post-processing: subsample, split, format
# --------------------------------------------------------------------------------------------------


def prepare(
    dataset: Dataset,
    *,
    n: int | None = None,
    split: float | None = None,
    seed: int | None = None,
    sparse: bool = False,
    dense: bool = False,
) -> Dataset:
    """Subsample, split and convert a data set; the returned ``spec`` records what was done.

    The steps run in this order: subsample to ``n`` rows, split off a test set, convert ``X``
    (and ``X_test``). Subsample and split keep the rows in their original relative order.

    Parameters
    ----------
    dataset : Dataset
        The input; it is not modified.
    n : int, default=None
        Keep ``n`` rows drawn without replacement, stratified: each class gets a share
        proportional to its size (largest remainders) and at least one row. Not available for
        generators that take ``n`` themselves (ask them for ``n`` points instead).
    split : float in (0, 1), default=None
        Fraction of rows moved to ``X_test``/``y_test``: ``ceil(split * n_samples)`` rows,
        stratified, with every class present in both parts.
    seed : int, default=None
        Seed of the subsample and split; default: the generator's seed, or 0 for sets without
        one, or the seed of an earlier subsample. A spec holds one seed, so a generator's data
        set, or one already subsampled, can only be split with the seed it already has. The
        subsample draws from ``np.random.default_rng([seed, 1])`` and the split from
        ``np.random.default_rng([seed, 2])``, streams independent of the generator's, so that
        subsampling then splitting in two calls equals doing both in one.
    sparse : bool, default=False
        Convert ``X`` to a float64 CSR matrix.
    dense : bool, default=False
        Convert ``X`` to a C-contiguous float64 ndarray.

    Returns
    -------
    Dataset
        A new data set; ``dataset`` itself if nothing was asked.

    Raises
    ------
    ValueError
        For ``n`` larger than the set or smaller than its number of classes, a ``split`` outside
        (0, 1) or too small/large to hold every class on both sides, ``sparse`` and ``dense``
        together, or a step that was already applied.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a Dataset, got {type(dataset).__name__}")
    if n is not None:
        n = check_int("n", n, low=1)
    if split is not None:
        split = check_real("split", split, low=0.0, high=1.0)
    if seed is not None:
        seed = _check_seed(seed)
    sparse, dense = _check_bool("sparse", sparse), _check_bool("dense", dense)
    if sparse and dense:
        raise ValueError("sparse and dense cannot both be True")
    if n is None and split is None and not sparse and not dense:
        return dataset

    name, raw = _split_spec(dataset.spec)
    own = _parameters(DATASETS[name].function) if name in DATASETS else {}
    base_seed = int(raw["seed"]) if raw.get("seed", "").isdigit() else 0
    if n is not None or split is not None:
        if dataset.X_test is not None:
            raise ValueError(f"{dataset.spec!r} is already split; subsample or split it only once")
        if seed is None:
            seed = base_seed
        elif seed != base_seed and ("seed" in own or "n" in raw or "split" in raw):
            raise ValueError(
                f"seed must equal the seed={base_seed} already used by {dataset.spec!r} (a spec "
                f"holds one seed), got {seed}"
            )
        raw["seed"] = str(seed)
    X, y, X_test, y_test = dataset.X, dataset.y, dataset.X_test, dataset.y_test

    if n is not None:
        if "n" in own:
            raise ValueError(
                f"n: {name} takes n itself; generate {n} points instead of subsampling"
            )
        if "n" in raw:
            raise ValueError(f"n: {dataset.spec!r} is already subsampled; subsample only once")
        if n > X.shape[0]:
            raise ValueError(f"n must be <= n_samples={X.shape[0]} of {name}, got {n}")
        counts = np.unique(y, return_counts=True)[1]
        if n < counts.size:
            raise ValueError(f"n must be >= the number of classes {counts.size} of {name}, got {n}")
        rng = np.random.default_rng([seed, 1])  # a stream apart from the generator's
        keep = _stratified_choice(y, _allocate(counts, n, low=1, high=counts), rng)
        X, y = X[keep], y[keep]
        raw["n"] = str(n)

    if split is not None:
        counts = np.unique(y, return_counts=True)[1]
        n_test = math.ceil(split * y.shape[0])
        if counts.min() < 2 or not counts.size <= n_test <= y.shape[0] - counts.size:
            raise ValueError(
                f"split={split!r} cannot put every class of {name} in both parts "
                f"(class sizes {counts.tolist()}, {n_test} test rows); choose another split"
            )
        rng = np.random.default_rng([seed, 2])  # so that n then split == n and split at once
        test = _stratified_choice(y, _allocate(counts, n_test, low=1, high=counts - 1), rng)
        train = np.setdiff1d(np.arange(y.shape[0]), test, assume_unique=True)
        X, y, X_test, y_test = X[train], y[train], X[test], y[test]
        raw["split"] = repr(split)

    if sparse:
        X, X_test = _to_csr(X), _to_csr(X_test)
        raw["sparse"] = "true"
        if "dense" in own:
            raw["dense"] = "false"
        else:
            raw.pop("dense", None)
    if dense:
        X, X_test = _to_dense(X), _to_dense(X_test)
        raw["dense"] = "true"
        raw.pop("sparse", None)
    return Dataset(name, _join_spec(name, raw), X, y, dataset.classes, X_test, y_test)


def _allocate(counts: np.ndarray, total: int, *, low, high) -> np.ndarray:
    """Split ``total`` among classes proportionally to ``counts``, within ``[low, high]``.

    Largest-remainder rounding; ties go to the first class. Needs sum(low) <= total <= sum(high).
    """
    low = np.broadcast_to(low, counts.shape)
    ideal = total * counts / counts.sum()
    alloc = np.clip(np.floor(ideal).astype(np.int64), low, high)
    while alloc.sum() < total:
        alloc[np.argmax(np.where(alloc < high, ideal - alloc, -np.inf))] += 1
    while alloc.sum() > total:
        alloc[np.argmax(np.where(alloc > low, alloc - ideal, -np.inf))] -= 1
    return alloc


def _stratified_choice(y: np.ndarray, alloc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sorted row indices: ``alloc[c]`` rows drawn from the c-th class in sorted label order."""
    labels = np.unique(y)
    picks = [
        rng.choice(np.flatnonzero(y == label), size=a, replace=False)
        for label, a in zip(labels, alloc)
    ]
    return np.sort(np.concatenate(picks))


def _to_csr(X):
    return None if X is None else sp.csr_matrix(X, dtype=np.float64)


def _to_dense(X):
    if X is None:
        return None
    return np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


# --------------------------------------------------------------------------------------------------
# Registry and spec strings
# --------------------------------------------------------------------------------------------------


class DatasetInfo(NamedTuple):
    """A registry entry: the function that makes the data set and a one-line description."""

    function: Callable[..., Dataset]
    description: str


DATASETS: dict[str, DatasetInfo] = {
    "gaussian": DatasetInfo(gaussian, "two Gaussian clouds, means ±sep/2·u (dense or sparse)"),
    "quadrant": DatasetInfo(quadrant, "+1 in x1>0,x2>0 and -1 in x1>0,x2<0, label noise"),
    "xor": DatasetInfo(xor, "uniform on [-1,1]², label sign(x1·x2), label noise"),
    "circles": DatasetInfo(circles, "two concentric circles (sklearn make_circles)"),
    "blobs": DatasetInfo(blobs, "k Gaussian blobs, multiclass (sklearn make_blobs)"),
    "iris": DatasetInfo(iris, "Fisher's iris, 150×4, 3 classes"),
    "wine": DatasetInfo(wine, "UCI wine, 178×13, 3 classes"),
    "digits": DatasetInfo(digits, "handwritten digits 8×8, 1797×64, 10 classes or 0-4 vs 5-9"),
    "breast_cancer": DatasetInfo(breast_cancer, "Wisconsin breast cancer, 569×30, binary"),
    "libsvm": DatasetInfo(libsvm, "an svmlight/LIBSVM file (path=...)"),
}

# Post-processing keys accepted by every spec (a generator's own parameter of the same name wins).
_POST_KINDS = {"n": "int", "split": "float", "seed": "int", "sparse": "bool", "dense": "bool"}
_REQUIRED = object()
_TRUE_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def describe() -> list[tuple[str, str]]:
    """Return ``(name, description)`` for every registered data set, in registry order."""
    return [(name, info.description) for name, info in DATASETS.items()]


def load(spec: str) -> Dataset:
    """Make the data set described by a spec string.

    Parameters
    ----------
    spec : str
        ``name`` or ``name:key=value,...``, e.g. ``"gaussian:n=2000,d=20,sep=1.5,seed=0"``,
        ``"digits:binary=1,n=300"``, ``"libsvm:path=data/a1a.txt"`` or ``"iris:split=0.3"``.
        Keys are the function's parameters plus ``n``, ``split``, ``seed``, ``sparse``,
        ``dense`` of :func:`prepare`.

    Returns
    -------
    Dataset
        Its ``spec`` is the canonical form: every parameter of the function with defaults
        filled in (None omitted), then the post-processing keys that were used (and ``seed``
        when the function takes one or a subsample or split was asked), sorted by key.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the valid ones), an unknown or repeated key, a
        missing required parameter, or a value of the wrong type or out of range.
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str, got {type(spec).__name__}")
    name, raw = _split_spec(spec)
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)}")
    own = _parameters(DATASETS[name].function)
    kwargs, post = {}, {}
    for key, text in raw.items():
        if key in own:
            kwargs[key] = _convert(key, text, own[key][1])
        elif key in _POST_KINDS:
            post[key] = _convert(key, text, _POST_KINDS[key])
        else:
            valid = ", ".join(sorted(set(own) | set(_POST_KINDS)))
            raise ValueError(f"{name}: unknown parameter {key!r}; expected one of {valid}")
    for key, (default, _) in own.items():
        if default is _REQUIRED and key not in kwargs:
            raise ValueError(f"{name}: missing required parameter {key!r}")
    return prepare(DATASETS[name].function(**kwargs), **post)


#: Shapes of the packaged sets, for :func:`estimate_bytes`.
_SHAPES = {"iris": (150, 4), "wine": (178, 13), "breast_cancer": (569, 30), "digits": (1797, 64)}


def estimate_bytes(spec: str) -> int | None:
    """A coarse upper bound of the memory ``load(spec)`` takes at its peak, in bytes, from the
    spec alone: nothing is generated or read (the one file system call is a libsvm file's size).

    ``X`` takes ``8nd`` bytes dense and ``16·nnz + 8(n + 1)`` as CSR, with ``nnz = n·d·density``
    for a sparse ``gaussian``; the generators and scikit-learn's loaders peak at four times ``X``
    (a draw, the class shift, their sum, a shuffle; ``64·nnz`` for the sparse mask, its
    positions, rows, columns and values), labels and permutations add ``32n``, the parsing of a
    packaged set 1 MB. A subsample or split adds one copy of ``X``, a ``sparse`` or
    ``dense`` conversion the converted copy. An svmlight/LIBSVM file held as CSR takes at most
    8 times its size (16 bytes per non-zero of at least 4 characters, the parser's buffers
    doubling as they grow).

    Returns
    -------
    int or None
        None where the spec does not tell: an unknown name or parameter, a value of the wrong
        type, a missing libsvm file, or a dense libsvm set (its shape is in the file). ``load``
        then reports what is wrong, or reads the file.
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str, got {type(spec).__name__}")
    try:
        name, raw = _split_spec(spec)
        if name not in DATASETS:
            return None
        own = _parameters(DATASETS[name].function)
        values = {}
        for key, text in raw.items():
            kind = own[key][1] if key in own else _POST_KINDS.get(key)
            if kind is None:
                return None
            values[key] = _convert(key, text, kind)
    except ValueError:
        return None
    defaults = {k: default for k, (default, _) in own.items() if default is not _REQUIRED}
    p = {**defaults, **values}
    density = None
    if name == "libsvm":
        path = p.get("path")
        if not isinstance(path, str) or p.get("dense") or not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        copies = ("split" in values) + ("n" in values)
        return 8 * size + 4 * size * copies
    if name in _SHAPES:
        n, d = _SHAPES[name]  # a subsample is drawn from the whole set, read first
    elif name in ("xor", "circles"):
        n, d = p.get("n"), 2
    else:
        n, d = p.get("n"), p.get("d")
        density = p.get("density") if name == "gaussian" else None
    if not (isinstance(n, int) and isinstance(d, int)) or n < 1 or d < 1:
        return None
    if isinstance(density, float) and 0.0 < density <= 1.0:
        nnz = math.ceil(n * d * density)
        x_bytes, peak = 16 * nnz + 8 * (n + 1), 64 * nnz + 8 * (n + 1)
    else:
        x_bytes = 8 * n * d
        peak = 4 * x_bytes
    total = peak + 32 * n + (2**20 if name in _SHAPES else 0)  # the loaders' parsing
    if "split" in values or ("n" in values and "n" not in own):
        total += x_bytes
    if values.get("sparse") and density is None:
        total += 16 * n * d + 8 * (n + 1)
    if values.get("dense") and density is not None:
        total += 8 * n * d
    return total


def _split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"name:a=1,b=x"`` -> ``("name", {"a": "1", "b": "x"})`` (no type conversion)."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"spec must start with a dataset name, got {spec!r}")
    raw: dict[str, str] = {}
    if not rest.strip():
        return name, raw
    for item in rest.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise ValueError(f"{name}: expected key=value in the spec, got {item.strip()!r}")
        if key in raw:
            raise ValueError(f"{name}: parameter {key!r} given twice")
        raw[key] = value
    return name, raw


def _format_spec(name: str, params: dict) -> str:
    """Canonical spec: parameters sorted by name, None omitted, booleans as true/false."""
    return _join_spec(name, {k: _format_value(v) for k, v in params.items() if v is not None})


def _join_spec(name: str, raw: dict[str, str]) -> str:
    if not raw:
        return name
    return name + ":" + ",".join(f"{key}={raw[key]}" for key in sorted(raw))


def _format_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@functools.cache
def _parameters(function: Callable) -> dict[str, tuple[object, str]]:
    """Parameter name -> (default or _REQUIRED, kind) where kind is read from the annotation."""
    hints = typing.get_type_hints(function)
    result = {}
    for key, param in inspect.signature(function).parameters.items():
        types = set(typing.get_args(hints[key]) or (hints[key],)) - {type(None)}
        if types == {bool}:
            kind = "bool"
        elif types == {bool, str}:
            kind = "bool_or_str"
        elif types == {int}:
            kind = "int"
        elif types == {float}:
            kind = "float"
        else:
            kind = "str"
        default = _REQUIRED if param.default is inspect.Parameter.empty else param.default
        result[key] = (default, kind)
    return result


def _convert(key: str, text: str, kind: str):
    """Convert a spec value to the parameter's kind; range checks are left to the function."""
    word = text.lower()
    if kind in ("bool", "bool_or_str") and word in _TRUE_WORDS:
        return _TRUE_WORDS[word]
    if kind == "bool":
        raise ValueError(f"{key} must be a boolean (true/false/yes/no/1/0), got {text!r}")
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)  # accept 1e5 for 100000
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise ValueError(f"{key} must be an integer, got {text!r}")
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{key} must be a real number, got {text!r}") from None
    return text


def _check_bool(name: str, value) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
