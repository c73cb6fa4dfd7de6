"""The low-rank kernel factors (problems/low_rank.py) against dense matrices built by hand: the
factor is ``K(X, Z) T`` with ``Tᵀ K_ZZ T = I`` (so a linear model on F is an RKHS function of the
same norm), the row blocks change nothing, the rank rule's estimate and its monotonicity, and
the exact primal of a landmark model against the kernel problem's own primal."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems import KernelDual, datasets
from svmbench.problems import low_rank as lr
from svmbench.problems.kernels import kernel_matrix

DATA = datasets.load("circles:n=120,seed=3")
KERNELS = {
    "rbf": {"kernel": "rbf", "gamma": 2.0},
    "poly": {"kernel": "poly", "gamma": 0.5, "degree": 3, "coef0": 1.0},
    "linear": {"kernel": "linear"},
}


def _problem(kernel="rbf", bias="free", **kw):
    return KernelDual(DATA.X, DATA.y, C=1.0, bias=bias, **KERNELS[kernel], **kw)


def _factor(problem, approximation, rank):
    if approximation == "nystrom":
        idx = np.random.default_rng(0).choice(problem.n_samples, rank, replace=False)
        return lr.nystrom(problem, idx)
    return lr.pivoted_cholesky(problem, rank)


@pytest.mark.parametrize("approximation", ["nystrom", "cholesky"])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_the_factor_is_the_kernel_against_the_landmarks_times_an_orthonormalizing_map(
    approximation, kernel
):
    problem = _problem(kernel)
    f = _factor(problem, approximation, 12)
    Z = problem.X[f.landmarks]
    K_nz = kernel_matrix(problem.X, Z, **problem.kernel_params)
    K_zz = kernel_matrix(Z, Z, **problem.kernel_params)
    w = np.random.default_rng(1).normal(size=f.rank)
    c = f.coefficients(w)
    np.testing.assert_allclose(f.F @ w, K_nz @ c, rtol=1e-8, atol=1e-8)  # f(x_i) = (Fw)_i
    assert c @ K_zz @ c == pytest.approx(w @ w, rel=1e-7)  # ‖f‖²_H = ‖w‖²
    # and FFᵀ is below K (the residual of both approximations is PSD)
    K = problem.gram
    assert np.linalg.eigvalsh(K - f.F @ f.F.T)[0] >= -1e-8


def test_row_blocks_give_the_one_shot_nystrom_factor(monkeypatch):
    problem = _problem("rbf")
    idx = np.arange(0, 120, 7)
    whole = lr.nystrom(problem, idx).F
    monkeypatch.setattr(lr, "BLOCK_ENTRIES", 3 * idx.size + 1)  # blocks of 3 rows, 40 of them
    np.testing.assert_allclose(lr.nystrom(problem, idx).F, whole, rtol=0, atol=1e-13)
    K_nm = kernel_matrix(problem.X, problem.X[idx], **problem.kernel_params)
    ev, V = np.linalg.eigh(K_nm[idx])
    np.testing.assert_allclose(whole, K_nm @ V / np.sqrt(ev), atol=1e-9)


def test_relative_trace_residual_against_the_dense_trace():
    problem = _problem("poly")
    F = _factor(problem, "cholesky", 5).F
    K = problem.gram
    expected = np.trace(K - F @ F.T) / np.trace(K)
    assert lr.relative_trace_residual(problem, F) == pytest.approx(expected, rel=1e-10)


def test_the_rank_rule_stops_at_the_first_doubling_that_meets_the_target():
    problem = _problem("rbf")
    ranks = []
    for target in (1e-1, 1e-2, 1e-3, 1e-5):
        idx, estimate, tried = lr.nystrom_rank_rule(
            problem, target=target, max_rank=120, sample_size=500, seed=0
        )
        assert [r for r, _ in tried] == [16 * 2**k for k in range(len(tried) - 1)] + [idx.size]
        assert all(e > target for _, e in tried[:-1])
        assert estimate <= target or idx.size == 120
        # the sample holds every example here: the estimate is the exact residual trace
        F = lr.nystrom(problem, idx).F
        assert estimate == pytest.approx(lr.relative_trace_residual(problem, F), abs=1e-10)
        ranks.append(idx.size)
    assert ranks == sorted(ranks) and ranks[0] < ranks[-1]  # a larger target: a smaller r


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_the_landmark_primal_is_the_kernel_problems_primal(kernel, bias):
    problem = _problem(kernel, bias, bias_scale=0.7)
    rng = np.random.default_rng(2)
    alpha = problem.project_dual(rng.uniform(0, 1, problem.n_samples))
    coef = alpha * problem.y
    wb = 0.7 * coef.sum()  # the regularized bias's weight: b = s·w_b = s²Σα_i y_i
    value, b = lr.landmark_model_primal(problem, np.arange(problem.n_samples), coef, bias_weight=wb)
    assert value == pytest.approx(problem.primal_objective(alpha), rel=1e-10)
    assert b == pytest.approx(problem.primal_from_dual(alpha)[1], rel=1e-9, abs=1e-9)


def test_a_gram_matrix_has_no_landmark_model():
    K = kernel_matrix(DATA.X, kernel="rbf", gamma=1.0)
    problem = KernelDual(K, DATA.y, kernel="precomputed")
    with pytest.raises(TypeError, match="features"):
        lr.landmark_model_primal(problem, np.arange(3), np.ones(3))
