"""Small ε-SVR problems, easy and hard, shared by the tests of the kernel SVR dual's solvers."""

from __future__ import annotations

import numpy as np

from svmbench.problems import SVRDual

N = 60


def regression_data(n=N, d=4, seed=5):
    """A smooth target of two features plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def hard_svr_cases() -> dict:
    """A plain case, repeated rows (K singular, β not unique), large C, ε = 0, d > n, no bias."""
    X, y = regression_data()
    dup_X = np.r_[X[:20], X[:20], X[20:40]]
    dup_y = np.r_[y[:20], y[:20], y[20:40]]
    wide_X, wide_y = regression_data(n=30, d=80, seed=6)
    return {
        "plain": SVRDual(X, y, C=1.0, epsilon=0.1, gamma=0.5),
        "duplicated_rows": SVRDual(dup_X, dup_y, C=10.0, epsilon=0.05, gamma=0.5),
        "large_C": SVRDual(X, y, C=1e3, epsilon=0.1, gamma=0.5),
        "zero_epsilon": SVRDual(X, y, C=5.0, epsilon=0.0, gamma=0.5),
        "d_above_n": SVRDual(wide_X, wide_y, C=2.0, epsilon=0.1),
        "no_bias": SVRDual(X, y, C=5.0, epsilon=0.1, gamma=0.5, bias="none"),
    }
