"""ε-SVR by the generalized SMO: kernel rows cached by row (float64 and float32), on small hard
data (duplicated rows, large C, ε = 0, d > n), against Clarabel's certified optimum."""

import numpy as np
import pytest

from svmbench.problems import SVRDual
from svmbench.solvers import registry

N = 60


def _data(n=N, d=4, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def _cases():
    X, y = _data()
    dup_X = np.r_[X[:20], X[:20], X[20:40]]  # rows repeated: K singular, β not unique
    dup_y = np.r_[y[:20], y[:20], y[20:40]]
    wide_X, wide_y = _data(n=30, d=80, seed=6)  # d > n
    return {
        "plain": SVRDual(X, y, C=1.0, epsilon=0.1, gamma=0.5),
        "duplicated_rows": SVRDual(dup_X, dup_y, C=10.0, epsilon=0.05, gamma=0.5),
        "large_C": SVRDual(X, y, C=1e3, epsilon=0.1, gamma=0.5),
        "zero_epsilon": SVRDual(X, y, C=5.0, epsilon=0.0, gamma=0.5),
        "d_above_n": SVRDual(wide_X, wide_y, C=2.0, epsilon=0.1),
        "no_bias": SVRDual(X, y, C=5.0, epsilon=0.1, gamma=0.5, bias="none"),
    }


CASES = _cases()


@pytest.fixture(scope="module")
def optima():
    return {name: registry.get("clarabel").solve(p).primal for name, p in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("cache_mb", [200.0, 0.004])
def test_certified_and_equal_to_clarabels_optimum(name, cache_mb, optima):
    """``cache_mb=0.004`` keeps float32 kernel rows for RBF and fewer rows than the data has
    (evictions in both caches)."""
    problem = CASES[name]
    result = registry.get("smo", tol=1e-9, cache_mb=cache_mb).solve(problem)
    assert result.status.value == "optimal"
    assert result.certified and result.rel_gap <= 1e-9
    assert result.primal == pytest.approx(optima[name], rel=1e-7, abs=1e-9)
    rows = problem.n_samples
    if cache_mb < 1 and problem.kernel == "rbf":
        assert result.info["cache_bytes_per_entry"] == 4
        if rows == N:  # 0.004 MB holds 17 float32 rows of 60
            assert result.info["cache_columns"] < rows
    else:
        assert result.info["cache_bytes_per_entry"] == 8


def test_each_kernel_row_is_computed_once_for_both_variables_on_it():
    """With every row cached, α_r and α*_r share one kernel evaluation of row r: at most n rows
    are computed although the 2n variables' columns are fetched many more times."""
    problem = CASES["large_C"]
    result = registry.get("smo", tol=1e-9).solve(problem)
    info = result.info
    assert info["cache_by"] == "row" and info["cache_misses"] <= problem.n_samples
    assert info["cache_misses"] + info["cache_hits"] > 2 * problem.n_samples


def test_an_smo_point_is_kept_as_it_is_by_the_exact_finish():
    """SMO's coefficients at a bound are exact: the finish keeps the point bit for bit."""
    problem = CASES["plain"]
    result = registry.get("smo", tol=1e-6).solve(problem)
    assert result.info["exact_finish"]["skipped"].startswith("already exact")
    beta = result.alpha[:N] - result.alpha[N:]
    C = problem.upper_bounds
    assert np.all(
        (beta == 0.0) | (np.abs(beta) == C) | ((np.abs(beta) > 1e-6) & (np.abs(beta) < C))
    )


def test_trace_estimates_bracket_the_optimum(optima):
    """Uncertified trace points carry −F(α) and −L(α, μ): without shrinking (G exact) the dual
    side is at most the optimum and the primal side at least it."""
    problem = CASES["large_C"]
    result = registry.get("smo", tol=1e-9, chunk=20, shrinking=False).solve(problem)
    estimated = [c for c in result.trace if not c.certified]
    assert estimated, "the geometric schedule should have left trace-only points"
    best = optima["large_C"]
    slack = 1e-9 * max(1.0, abs(best))
    for c in estimated:
        assert c.dual <= best + slack
        assert c.primal >= best - slack
        assert c.gap == pytest.approx(c.primal - c.dual)
