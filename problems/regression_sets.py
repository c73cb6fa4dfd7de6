"""Regression data sets (real targets, ``task="regression"``): scikit-learn's ``diabetes`` (package
data, no network), the seeded ``regression`` generator (``make_regression``: a random linear
model plus Gaussian noise) and Friedman's three functions (Friedman, "Multivariate adaptive
regression splines", Annals of Statistics 1991; ``make_friedman1/2/3``).

Each returns a :class:`~svmbench.problems.dataset_record.Dataset` whose ``spec`` reproduces it
through :func:`~svmbench.problems.datasets.load`. By default (``standardize=true``) each feature
and the target are scaled to zero mean and unit variance over the whole set, so that one ε and
one C mean the same across sets.
"""

from __future__ import annotations

import numpy as np
import sklearn.datasets

from svmbench.problems.dataset_record import Dataset, check_bool, check_seed, format_spec
from svmbench.problems.validation import check_int, check_real

__all__ = ["diabetes", "friedman1", "friedman2", "friedman3", "regression"]


def _standardized(X: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per column (a constant column becomes 0)."""
    X = np.asarray(X, dtype=np.float64)
    scale = X.std(axis=0)
    constant = scale == 0.0
    Z = (X - X.mean(axis=0)) / np.where(constant, 1.0, scale)
    Z[..., constant] = 0.0
    return Z


def _regression_set(name: str, params: dict, X, y) -> Dataset:
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if params["standardize"]:
        X = np.ascontiguousarray(_standardized(X))
        y = _standardized(y[:, None])[:, 0]
    return Dataset(name, format_spec(name, params), X, y, (), task="regression")


def diabetes(*, standardize: bool = True) -> Dataset:
    """Efron et al.'s diabetes progression, 442 × 10, a real target.

    Parameters
    ----------
    standardize : bool, default=True
        Scale each feature and the target to zero mean and unit variance.
    """
    standardize = check_bool("standardize", standardize)
    bunch = sklearn.datasets.load_diabetes()
    return _regression_set("diabetes", {"standardize": standardize}, bunch.data, bunch.target)


def _sizes(n, noise, seed) -> tuple[int, float, int]:
    return (
        check_int("n", n, low=2),
        check_real("noise", noise, low=0.0, closed="left"),
        (check_seed(seed)),
    )


def regression(
    *, n: int = 200, d: int = 10, noise: float = 1.0, seed: int = 0, standardize: bool = True
) -> Dataset:
    """``y = Xw + noise·N(0, 1)`` with X standard normal and w random on ``min(d, 10)``
    informative features (scikit-learn's ``make_regression``).

    Parameters
    ----------
    n, d : int
        Rows and features.
    noise : float, default=1.0
        Standard deviation of the Gaussian noise on y (before standardizing).
    seed : int, default=0
    standardize : bool, default=True
    """
    n, noise, seed = _sizes(n, noise, seed)
    d = check_int("d", d, low=1)
    standardize = check_bool("standardize", standardize)
    X, y = sklearn.datasets.make_regression(
        n_samples=n, n_features=d, n_informative=min(d, 10), noise=noise, random_state=seed
    )
    params = {"n": n, "d": d, "noise": noise, "seed": seed, "standardize": standardize}
    return _regression_set("regression", params, X, y)


def friedman1(
    *, n: int = 200, d: int = 10, noise: float = 1.0, seed: int = 0, standardize: bool = True
) -> Dataset:
    """Friedman #1: ``10 sin(π x₁x₂) + 20(x₃ − ½)² + 10x₄ + 5x₅ + noise``, x uniform on
    [0, 1]^d (d ≥ 5; the other features are noise)."""
    n, noise, seed = _sizes(n, noise, seed)
    d = check_int("d", d, low=5)
    standardize = check_bool("standardize", standardize)
    X, y = sklearn.datasets.make_friedman1(
        n_samples=n, n_features=d, noise=noise, random_state=seed
    )
    params = {"n": n, "d": d, "noise": noise, "seed": seed, "standardize": standardize}
    return _regression_set("friedman1", params, X, y)


def friedman2(
    *, n: int = 200, noise: float = 1.0, seed: int = 0, standardize: bool = True
) -> Dataset:
    """Friedman #2: ``√(x₁² + (x₂x₃ − 1/(x₂x₄))²) + noise`` on four features."""
    n, noise, seed = _sizes(n, noise, seed)
    standardize = check_bool("standardize", standardize)
    X, y = sklearn.datasets.make_friedman2(n_samples=n, noise=noise, random_state=seed)
    params = {"n": n, "noise": noise, "seed": seed, "standardize": standardize}
    return _regression_set("friedman2", params, X, y)


def friedman3(
    *, n: int = 200, noise: float = 0.1, seed: int = 0, standardize: bool = True
) -> Dataset:
    """Friedman #3: ``atan((x₂x₃ − 1/(x₂x₄))/x₁) + noise`` on four features."""
    n, noise, seed = _sizes(n, noise, seed)
    standardize = check_bool("standardize", standardize)
    X, y = sklearn.datasets.make_friedman3(n_samples=n, noise=noise, random_state=seed)
    params = {"n": n, "noise": noise, "seed": seed, "standardize": standardize}
    return _regression_set("friedman3", params, X, y)
