"""The multinomial logistic loss's Newton method (``multinomial_newton``) against the CVXPY/Clarabel
exponential-cone reference and scikit-learn's multinomial ``LogisticRegression``: certified
optima on overlapping, duplicated, weighted and d > n data, dense and CSR, both biases; the
limits, warm starts, the native rule, ``auto`` and the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from svmbench.problems import Logistic, MulticlassHinge, MultinomialLogistic, datasets
from svmbench.solvers import ConvergenceWarning, Status, registry

TOL = 1e-8
RTOL_OPT = 1e-6


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _blobs(n=120, d=4, k=3, seed=0, noise=2.0):
    ds = datasets.load(f"blobs:n={n},d={d},k={k},seed={seed}")
    X = ds.X + np.random.default_rng(seed).normal(scale=noise, size=ds.X.shape)
    return X, ds.y


def _duplicated():
    X, y = _blobs(60, seed=1)
    return np.vstack([X, X]), np.concatenate([y, y])


def _weighted():
    X, y = _blobs(150, seed=2)
    sw = np.random.default_rng(2).uniform(0.0, 3.0, y.size)
    sw[:10] = 0.0  # left out
    return X, y, sw


def _d_gt_n():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 80))
    return X, np.arange(40) % 4


#: name → (X, y, sample_weight, C)
SETS = {
    "overlap": (*_blobs(), None, 1.0),
    "overlap_large_C": (*_blobs(seed=4), None, 1e3),
    "duplicated": (*_duplicated(), None, 10.0),
    "weighted": (*_weighted(), 5.0),
    "d_gt_n": (*_d_gt_n(), None, 1e3),
    "iris": (datasets.load("iris").X, datasets.load("iris").y, None, 1.0),
}


def problem_on(name, bias, *, sparse_X=False):
    X, y, sw, C = SETS[name]
    X = sparse.csr_matrix(X) if sparse_X else X
    return MultinomialLogistic(X, y, C=C, bias=bias, sample_weight=sw)


def reference(problem):
    result = registry.get("logistic_cvxpy", tol=1e-8).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    return result


@pytest.mark.parametrize("bias", ["regularized", "none"])
@pytest.mark.parametrize("name", sorted(SETS))
def test_newton_reaches_a_certified_optimum_at_the_reference(name, bias):
    problem = problem_on(name, bias)
    result = registry.get("multinomial_newton", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and result.rel_gap <= TOL
    ref = reference(problem)
    assert rel(result.primal, ref.primal) <= RTOL_OPT
    # P is 1-strongly convex in (W, b/s): ½‖ΔW‖² ≤ P(W) − P* ≤ gap of either point
    bound = np.sqrt(2.0 * max(result.gap, 0.0)) + np.sqrt(2.0 * max(ref.gap, 0.0))
    assert np.linalg.norm(result.W - ref.W) <= bound + 1e-12


def _sklearn(problem: MultinomialLogistic) -> LogisticRegression:
    """scikit-learn's multinomial fit of the same problem: no intercept (scikit-learn's is
    unregularized, a free bias, which this problem refuses), per-example weights as
    ``sample_weight``, C as ours (both multiply the loss sum)."""
    sk = LogisticRegression(C=problem.C, fit_intercept=False, tol=1e-14, max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sk.fit(problem.X, problem.y, sample_weight=problem.sample_weight)


@pytest.mark.parametrize("name", ["overlap", "weighted", "overlap_large_C", "d_gt_n"])
def test_the_optimum_is_scikit_learn_s_multinomial_fit_without_intercept(name):
    problem = problem_on(name, "none")
    result = registry.get("multinomial_newton", tol=TOL).solve(problem)
    sk = _sklearn(problem)
    P_sk = problem.primal_objective(sk.coef_)
    assert result.primal <= P_sk * (1.0 + 1e-9)  # ours is certified, theirs at its tol
    assert rel(result.primal, P_sk) <= RTOL_OPT
    proba = result.model.predict_proba(problem.X)
    assert np.max(np.abs(proba - sk.predict_proba(problem.X))) <= 1e-4


def test_dense_and_csr_data_give_the_same_optimum():
    dense = registry.get("multinomial_newton", tol=TOL).solve(problem_on("overlap", "regularized"))
    csr = registry.get("multinomial_newton", tol=TOL).solve(
        problem_on("overlap", "regularized", sparse_X=True)
    )
    assert csr.status is Status.OPTIMAL
    assert rel(dense.primal, csr.primal) <= 1e-9
    assert np.max(np.abs(dense.W - csr.W)) <= 1e-4


def test_the_limits_end_with_their_status_and_a_convergence_warning():
    problem = problem_on("overlap_large_C", "none")
    with pytest.warns(ConvergenceWarning):
        result = registry.get("multinomial_newton", tol=1e-14, max_iter=1).solve(problem)
    assert result.status is Status.MAX_ITER and result.iterations == 1 and result.certified
    assert result.gap > 0.0


def test_a_warm_start_at_the_optimum_stops_at_once():
    problem = problem_on("overlap", "regularized")
    first = registry.get("multinomial_newton", tol=TOL).solve(problem)
    again = registry.get("multinomial_newton", tol=TOL, check_every=1)
    result = again.solve(problem, warm_start=first)
    assert result.status is Status.OPTIMAL and result.iterations <= 1
    from_beta = again.solve(problem, warm_start=problem.dual_from_primal(first.W, first.b))
    assert from_beta.status is Status.OPTIMAL and from_beta.iterations <= 2


def test_the_native_rule_stops_with_an_honest_status():
    problem = problem_on("overlap", "none")
    result = registry.get("multinomial_newton", tol=1e-14, stop_rule="native").solve(problem)
    assert result.status in (Status.OPTIMAL, Status.NOT_CERTIFIED)
    assert result.certified
    assert (result.status is Status.OPTIMAL) == (result.rel_gap <= 1e-14)


def test_auto_runs_the_newton_method_and_the_solvers_refuse_other_kinds():
    problem = problem_on("overlap", "none")
    result = registry.get("auto", tol=1e-6).solve(problem)
    assert result.status is Status.OPTIMAL and result.info["auto"]["chose"] == "multinomial_newton"
    X, y, *_ = SETS["overlap"]
    with pytest.raises(TypeError, match="multinomial_newton.*multiclass_hinge"):
        registry.get("multinomial_newton").solve(MulticlassHinge(X, y))
    binary = Logistic(X, np.where(y == 0, 1.0, -1.0))
    assert registry.solver_class("multinomial_newton").unsupported_reason(binary) is not None
    for name in ("cs_dcd", "clarabel", "logistic_newton", "logistic_dcd"):
        assert registry.solver_class(name).unsupported_reason(problem) is not None


def test_the_scikit_learn_anchor_is_judged_by_the_same_certificate():
    problem = problem_on("weighted", "none")
    ours = registry.get("multinomial_newton", tol=TOL).solve(problem)
    anchor = registry.get("sklearn_logistic", eps=1e-12, max_iter=100_000, tol=1e-6)
    result = anchor.solve(problem)
    assert result.status is Status.OPTIMAL and result.certified and result.rel_gap <= 1e-6
    assert rel(result.primal, ours.primal) <= RTOL_OPT
    # scikit-learn's intercept is a free bias: the regularized one is not its problem
    regularized = problem_on("weighted", "regularized")
    assert registry.solver_class("sklearn_logistic").unsupported_reason(regularized)
