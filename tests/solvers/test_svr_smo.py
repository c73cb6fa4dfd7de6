"""ε-SVR by the generalized SMO: kernel rows cached by row (float64 and float32), on small hard
data (duplicated rows, large C, ε = 0, d > n), against Clarabel's certified optimum."""

import numpy as np
import pytest

from svmbench.solvers import registry
from tests.solvers.svr_cases import N, hard_svr_cases

CASES = hard_svr_cases()


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
