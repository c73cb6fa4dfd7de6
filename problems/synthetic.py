"""Seeded synthetic data sets: two Gaussian clouds, a quadrant, XOR, concentric circles and
Gaussian blobs. Each returns a :class:`~svmbench.problems.dataset_record.Dataset` whose ``spec``
reproduces it through :func:`~svmbench.problems.datasets.load`. All randomness comes from
``np.random.default_rng(seed)`` (scikit-learn's generators get the integer ``seed`` as their
``random_state``), so equal seeds give identical arrays.

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
outliers(n, d, fraction)
    For outlier detection (the one-class SVM): ``n − round(fraction·n)`` inliers ``N(0, I_d)``
    labelled +1 and ``round(fraction·n)`` outliers uniform on ``[−OUTLIER_BOX, OUTLIER_BOX]^d``
    labelled −1, rows in a seeded random order. The labels are kept for scoring only (a uniform
    draw may land in the bulk).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import sklearn.datasets

from svmbench.problems.dataset_record import Dataset, check_seed, format_spec
from svmbench.problems.validation import check_int, check_real

__all__ = ["blobs", "circles", "gaussian", "outliers", "quadrant", "xor"]

#: Half the side of the cube the outliers of :func:`outliers` are uniform on.
OUTLIER_BOX = 5.0


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
        are ``±density (sep/2) u``. Memory and time are O(n d density + d); a density so small
        that no entry is kept gives an empty matrix.

    Returns
    -------
    Dataset
        A binary task; ``classes == ("-u", "+u")``.
    """
    n = check_int("n", n, low=2)
    d = check_int("d", d, low=1)
    sep = check_real("sep", sep, low=0.0, high=math.inf, closed="left")
    seed = check_seed(seed)
    if density is not None:
        density = check_real("density", density, low=0.0, high=1.0, closed="right")
        if n * d >= 2**62:
            raise ValueError(f"n·d must be below 2**62 for a sparse gaussian, got {n}·{d}")
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
    return Dataset("gaussian", format_spec("gaussian", params), X, y, ("-u", "+u"))


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
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    y = _balanced_labels(n, rng)
    X = np.empty((n, d))
    X[:, 0] = 1.0 - rng.random(n)  # uniform on (0, 1]
    X[:, 1] = y * (1.0 - rng.random(n))
    X[:, 2:] = rng.standard_normal((n, d - 2))
    _flip_labels(y, noise, rng)
    params = {"n": n, "d": d, "noise": noise, "seed": seed}
    return Dataset("quadrant", format_spec("quadrant", params), X, y, ("x2<0", "x2>0"))


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
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] >= 0.0, 1.0, -1.0)
    _flip_labels(y, noise, rng)
    params = {"n": n, "noise": noise, "seed": seed}
    return Dataset("xor", format_spec("xor", params), X, y, ("x1*x2<0", "x1*x2>0"))


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
    seed = check_seed(seed)
    X, label = sklearn.datasets.make_circles(
        n_samples=n, noise=noise, factor=factor, random_state=seed
    )
    y = np.where(label == 1, 1.0, -1.0)
    params = {"n": n, "noise": noise, "factor": factor, "seed": seed}
    return Dataset("circles", format_spec("circles", params), X, y, ("outer", "inner"))


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
    seed = check_seed(seed)
    cluster_std = check_real("cluster_std", cluster_std, low=0.0, high=math.inf)
    X, y = sklearn.datasets.make_blobs(
        n_samples=n, n_features=d, centers=k, cluster_std=cluster_std, random_state=seed
    )
    params = {"n": n, "d": d, "k": k, "seed": seed, "cluster_std": cluster_std}
    classes = tuple(str(c) for c in range(k))
    return Dataset("blobs", format_spec("blobs", params), X, y.astype(np.int64), classes)


def outliers(n: int, d: int = 2, fraction: float = 0.1, *, seed: int = 0) -> Dataset:
    """A Gaussian bulk (+1) with uniform outliers (−1), for the one-class SVM.

    Parameters
    ----------
    n : int
        Number of points (>= 2).
    d : int, default=2
        Dimension (>= 1).
    fraction : float in [0, 1), default=0.1
        Fraction of outliers: exactly ``round(fraction * n)`` points.
    seed : int, default=0
        Seed of ``np.random.default_rng``.

    Returns
    -------
    Dataset
        An outlier-detection task (binary labels); ``classes == ("outlier", "inlier")``.
    """
    n = check_int("n", n, low=2)
    d = check_int("d", d, low=1)
    fraction = check_real("fraction", fraction, low=0.0, high=1.0, closed="left")
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    n_out = round(fraction * n)
    X = np.vstack(
        [rng.standard_normal((n - n_out, d)), rng.uniform(-OUTLIER_BOX, OUTLIER_BOX, (n_out, d))]
    )
    y = np.r_[np.ones(n - n_out), -np.ones(n_out)]
    order = rng.permutation(n)
    params = {"n": n, "d": d, "fraction": fraction, "seed": seed}
    return Dataset(
        "outliers", format_spec("outliers", params), np.ascontiguousarray(X[order]), y[order],
        ("outlier", "inlier"), task="outlier_detection",
    )  # fmt: skip


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
    while True:
        # a gap past the end ends the mask: clipped there, the sums cannot overflow even when
        # the draw saturates at 2⁶³ − 1 (a density of 1e-20 or less)
        pos = last + np.cumsum(np.minimum(rng.geometric(density, size=chunk), size + 1))
        beyond = np.flatnonzero(pos >= size)
        if beyond.size:
            parts.append(pos[: beyond[0]])
            break
        parts.append(pos)
        last = int(pos[-1])
    pos = np.concatenate(parts)
    return pos // d, (pos % d).astype(np.int32 if d < 2**31 else np.int64)


def _check_label_noise(noise) -> float:
    return check_real("noise", noise, low=0.0, high=0.5, closed="both")
