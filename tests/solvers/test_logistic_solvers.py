"""The logistic-loss solvers (``logistic_dcd``, ``logistic_newton``) against the CVXPY/Clarabel
exponential-cone reference and scikit-learn's ``LogisticRegression``: certified optima on easy
and hard data (overlapping classes, duplicated rows, large C, d > n, sample weights), the
limits, warm starts, seeds and refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from svmbench.problems import Logistic, SoftMarginPrimal, datasets
from svmbench.solvers import ConvergenceWarning, Status, registry
from tests.conftest import BINARY_SETS

TOL = 1e-8
RTOL_OPT = 1e-6


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _weighted():
    X, y = BINARY_SETS["gaussian_overlap"]
    sw = np.random.default_rng(7).uniform(0.0, 3.0, y.size)
    sw[:10] = 0.0  # left out
    return X, y, sw


#: name → (X, y, sample_weight, C for the Newton method, C for dual CD). Dual CD needs about C
#: times more epochs as C grows (LIBLINEAR's own -s 7 gives up at C = 1e4 after its 1000
#: iterations and switches to -s 0): it is held to the large-C sets at C = 100.
SETS = {
    "overlap": (*BINARY_SETS["gaussian_overlap"], None, 1.0, 1.0),
    "overlap_large_C": (*BINARY_SETS["gaussian_overlap"], None, 1e4, 100.0),
    "duplicated": (*BINARY_SETS["duplicated"], None, 1e4, 100.0),
    "d_gt_n": (*BINARY_SETS["d_gt_n"], None, 1e4, 1e4),
    "breast_cancer": (*BINARY_SETS["breast_cancer"], None, 10.0, 10.0),
    "weighted": (*_weighted(), 5.0, 5.0),
}


def problem_on(name, bias, *, solver="logistic_newton"):
    X, y, sw, C_newton, C_dcd = SETS[name]
    C = C_dcd if solver == "logistic_dcd" else C_newton
    return Logistic(X, y, C=C, bias=bias, sample_weight=sw)


def reference(problem):
    result = registry.get("logistic_cvxpy", tol=1e-8).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    return result


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("name", sorted(SETS))
def test_newton_reaches_a_certified_1e_8_at_the_reference_optimum(name, bias):
    problem = problem_on(name, bias)
    result = registry.get("logistic_newton", tol=TOL, trace=False).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and 0.0 <= result.rel_gap + 1e-15 and result.rel_gap <= TOL
    assert rel(result.primal, reference(problem).primal) <= RTOL_OPT
    assert result.iterations <= 50


@pytest.mark.parametrize("bias", ["regularized", "none"])
@pytest.mark.parametrize("name", sorted(SETS))
def test_dual_cd_reaches_a_certified_1e_8_at_the_reference_optimum(name, bias):
    problem = problem_on(name, bias, solver="logistic_dcd")
    solver = registry.get("logistic_dcd", tol=TOL, max_iter=200_000, trace=False)
    result = solver.solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and result.rel_gap <= TOL
    assert rel(result.primal, reference(problem).primal) <= RTOL_OPT
    # its dual point is the solver's own α, strictly inside the box
    C = problem.upper_bounds
    keep = C > 0
    assert np.all(result.alpha[keep] > 0) and np.all(result.alpha[keep] < C[keep])


def _sklearn(problem: Logistic) -> LogisticRegression:
    """scikit-learn's LogisticRegression on the same problem: its C multiplies the loss sum as
    ours does; liblinear regularizes the intercept (our regularized bias, intercept_scaling =
    s), lbfgs does not (our free bias)."""
    X, y = problem.X, problem.y
    if problem.bias == "regularized":
        kwargs = dict(solver="liblinear", intercept_scaling=problem.bias_scale, max_iter=100_000)
    else:
        kwargs = dict(solver="lbfgs", fit_intercept=problem.bias == "free", max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LogisticRegression(C=problem.C, tol=1e-12, **kwargs).fit(
            X, y, sample_weight=problem.sample_weight
        )


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("name", ["overlap", "breast_cancer", "weighted"])
def test_decision_values_agree_with_scikit_learn(name, bias):
    problem = problem_on(name, bias)
    ours = registry.get("logistic_newton", tol=1e-10, trace=False).solve(problem)
    sk = _sklearn(problem)
    f = ours.model.decision_function(problem.X)
    assert np.max(np.abs(f - sk.decision_function(problem.X))) <= 1e-4
    # and scikit-learn's point, judged by our certificate, is no better than ours
    cert = problem.certificate(w=sk.coef_.ravel(), b=float(sk.intercept_[0]))
    assert cert.primal >= ours.primal - 1e-9 * abs(ours.primal)


def test_the_solvers_agree_on_dense_and_csr_data():
    X, y, *_ = SETS["breast_cancer"]
    for name, bias in (("logistic_newton", "free"), ("logistic_dcd", "regularized")):
        dense = registry.get(name, tol=TOL).solve(Logistic(X, y, C=1.0, bias=bias))
        csr = registry.get(name, tol=TOL).solve(Logistic(sparse.csr_matrix(X), y, C=1.0, bias=bias))
        assert dense.status is csr.status is Status.OPTIMAL
        assert rel(dense.primal, csr.primal) <= 1e-9


def test_dual_cd_is_reproducible_by_its_seed_and_random_without_it():
    problem = problem_on("overlap", "none", solver="logistic_dcd")
    runs = [registry.get("logistic_dcd", tol=1e-4, seed=s).solve(problem) for s in (3, 3, 4)]
    assert np.array_equal(runs[0].alpha, runs[1].alpha)
    assert not np.array_equal(runs[0].alpha, runs[2].alpha)


def test_the_limits_end_with_their_status_and_a_convergence_warning():
    problem = problem_on("overlap_large_C", "none")
    with pytest.warns(ConvergenceWarning):
        newton = registry.get("logistic_newton", tol=1e-12, max_iter=1).solve(problem)
    assert newton.status is Status.MAX_ITER and newton.iterations == 1 and newton.certified
    with pytest.warns(ConvergenceWarning):
        dcd = registry.get("logistic_dcd", tol=1e-12, max_iter=3, check_every=1).solve(problem)
    assert dcd.status is Status.MAX_ITER and dcd.iterations == 3
    assert dcd.certified and dcd.gap > 0.0
    with pytest.warns(ConvergenceWarning):
        timed = registry.get("logistic_dcd", tol=1e-14, time_limit=1e-3).solve(problem)
    assert timed.status is Status.TIME_LIMIT and timed.certified


@pytest.mark.parametrize("name", ["logistic_newton", "logistic_dcd"])
def test_a_warm_start_at_the_optimum_stops_at_once(name):
    problem = problem_on("breast_cancer", "regularized", solver=name)
    first = registry.get(name, tol=TOL).solve(problem)
    again = registry.get(name, tol=TOL, check_every=1).solve(problem, warm_start=first)
    assert again.status is Status.OPTIMAL
    assert again.iterations <= 2
    # from the other side: (w, b) for the dual method, α for the primal one
    other = (
        (first.w, first.b) if name == "logistic_dcd" else problem.dual_from_primal(first.w, first.b)
    )
    from_other = registry.get(name, tol=TOL, check_every=1).solve(problem, warm_start=other)
    assert from_other.status is Status.OPTIMAL
    # the KKT map α = C σ(−m) of a w certified to 1e-8 is certified to about 1e-4 only (its
    # error in α is the loss Hessian times that of w): dual CD still needs a few epochs
    assert from_other.iterations <= (3 if name == "logistic_newton" else first.iterations // 4)


def test_the_native_rules_stop_with_an_honest_status():
    problem = problem_on("breast_cancer", "none")
    for name in ("logistic_newton", "logistic_dcd"):
        result = registry.get(name, tol=1e-14, stop_rule="native").solve(problem)
        assert result.status in (Status.OPTIMAL, Status.NOT_CERTIFIED)
        assert result.certified
        assert (result.status is Status.OPTIMAL) == (result.rel_gap <= 1e-14)


def test_dual_cd_refuses_a_free_bias_and_both_refuse_other_problems():
    X, y, *_ = SETS["overlap"]
    with pytest.raises(TypeError, match="logistic_dcd.*bias='free' is not supported"):
        registry.get("logistic_dcd").solve(Logistic(X, y, bias="free"))
    for name in ("logistic_dcd", "logistic_newton", "logistic_cvxpy"):
        with pytest.raises(TypeError, match=f"{name}.*soft_margin_primal"):
            registry.get(name).solve(SoftMarginPrimal(X, y, bias="none"))
    # and the QP solvers refuse the logistic problem
    for name in ("dcd", "clarabel", "osqp"):
        assert registry.solver_class(name).unsupported_reason(Logistic(X, y)) is not None


def test_the_registry_lists_the_problem_and_its_solvers():
    from svmbench.problems import PROBLEMS

    assert PROBLEMS["logistic"] is Logistic
    accepting = [n for n in registry.names() if not registry.solver_class(n).unsupported_reason(
        Logistic(*SETS["overlap"][:2], bias="none"))]  # fmt: skip
    assert {"logistic_dcd", "logistic_newton", "logistic_cvxpy"} <= set(accepting)


def test_the_model_is_a_logistic_model_with_probabilities():
    ds = datasets.load("gaussian:n=100,d=3,sep=2,seed=9")
    problem = Logistic(ds.X, ds.y, C=1.0)
    result = registry.get("logistic_newton", tol=TOL).solve(problem)
    proba = result.model.predict_proba(ds.X)
    f = ds.X @ result.w + result.b
    assert np.allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-f)), rtol=1e-12)
    # at the optimum the KKT map α_i = C σ(−m_i) is the certificate's dual point: Σ α_i y_i = 0
    alpha = problem.dual_from_primal(result.w, result.b)
    assert abs(alpha @ ds.y) <= 1e-8 * alpha.sum()


@pytest.mark.parametrize(
    ("anchor", "options", "biases"),
    [
        ("liblinear_lr", {"eps": 1e-8}, ("free", "regularized", "none")),
        ("liblinear_lr_dual", {"eps": 1e-6}, ("regularized", "none")),
        ("sklearn_logistic", {"eps": 1e-10, "max_iter": 10_000}, ("free", "regularized", "none")),
    ],
)
def test_the_anchors_reach_the_same_certified_optimum(anchor, options, biases):
    if registry.missing_reason(anchor):
        pytest.skip(registry.missing_reason(anchor))
    for name in ("overlap", "overlap_large_C"):
        for bias in biases:
            problem = problem_on(name, bias)
            ours = registry.get("logistic_newton", tol=1e-10).solve(problem)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = registry.get(anchor, tol=1e-8, **options).solve(problem)
            assert theirs.status is Status.OPTIMAL, (name, bias, theirs.message)
            assert rel(theirs.primal, ours.primal) <= RTOL_OPT
            f, g = (
                ours.model.decision_function(problem.X),
                theirs.model.decision_function(problem.X),
            )
            assert np.max(np.abs(f - g)) <= 1e-4


def test_liblinear_at_its_default_eps_is_judged_by_the_certificate():
    if registry.missing_reason("liblinear_lr"):
        pytest.skip(registry.missing_reason("liblinear_lr"))
    problem = problem_on("overlap_large_C", "none")
    result = registry.get("liblinear_lr", tol=1e-8).solve(problem)  # -e 0.01
    assert result.certified and result.rel_gap > 1e-8
    assert result.status is Status.NOT_CERTIFIED
    with pytest.raises(TypeError, match="liblinear_lr.*per-example weights"):
        registry.get("liblinear_lr").solve(problem_on("weighted", "none"))


@pytest.mark.parametrize("C", [1e-3, 1.0, 1e3, 1e8])
def test_one_coordinate_step_solves_its_entropy_problem_exactly(C):
    """Orthogonal rows and no bias make the coordinates independent: one epoch must land each
    α_i on the root of ``Q_ii α + log(α/(C − α)) = 0`` (in (0, C/2): the log is negative there),
    found here by bisection, and keep ``α_i + (C − α_i) = C`` and ``w = Σ α_i y_i x_i``."""
    from scipy.optimize import brentq

    from svmbench.solvers._jit import logistic_dcd as jit

    X = np.diag([0.5, 2.0, 8.0])
    y = np.array([1.0, -1.0, 1.0])
    upper = np.full(3, C)
    qd = np.sum(X * X, axis=1)
    alpha = np.full(3, min(1e-3 * C, 1e-8))
    rest = C - alpha
    w, wb = X.T @ (alpha * y), np.zeros(1)
    index = np.arange(3, dtype=np.int64)
    inner = np.array([1e-13, 1e-13])
    rng = np.zeros(1, dtype=np.uint64)
    jit.logistic_dcd_epochs(X, y, upper, qd, 0.0, alpha, rest, w, wb, index, rng, inner, 100, 1)
    for i in range(3):
        a = qd[i]
        root = brentq(lambda t, a=a: a * t + np.log(t / (C - t)), 1e-300, C / 2, xtol=1e-300)
        assert alpha[i] == pytest.approx(root, rel=1e-10)
        assert alpha[i] + rest[i] == pytest.approx(C, rel=1e-15)
    assert np.allclose(w, X.T @ (alpha * y), rtol=1e-12, atol=0)
