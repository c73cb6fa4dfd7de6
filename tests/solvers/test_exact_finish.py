"""The exact finish (solvers/exact_finish.py): interior-point points made exact on their active
set, re-certified by the problem, and the support sets that follow (ARCHITECTURE.md §4).

The support counts are compared with scikit-learn's SVC (LIBSVM, exact zeros by construction) on
standardized breast cancer; every finished point is re-certified here with a problem built
independently of the estimator, and its multipliers checked against the complementary slackness
of its own margins."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from svmbench import SVMClassifier
from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal, datasets
from svmbench.problems.models import KernelModel
from svmbench.solvers import exact_finish as finish_module
from svmbench.solvers import kkt_systems, registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import Status

TOL = 1e-8
SOLVERS = ("auto", "barrier", "clarabel", "osqp", "smo")
KERNELS = ("linear", "rbf")


@pytest.fixture(scope="module")
def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    gamma = 1.0 / (X.shape[1] * X.var())  # gamma="scale", written out for both libraries
    return X, y, gamma


@pytest.fixture(scope="module")
def svc_support(breast_cancer):
    X, y, gamma = breast_cancer
    return {k: SVC(kernel=k, gamma=gamma, tol=TOL).fit(X, y).n_support_ for k in KERNELS}


def _problem(X, y01, kernel, gamma, **params):
    """The estimator's problem, built here independently (classes_[1] is +1)."""
    y = np.where(y01 == 1, 1.0, -1.0)
    if kernel == "linear":
        return SoftMarginPrimal(X, y, **params)
    return KernelDual(X, y, kernel=kernel, gamma=gamma, **params)


def _certify(problem, result):
    if isinstance(problem, KernelDual):
        return problem.certificate(alpha=result.alpha, b=result.b)
    return problem.certificate(w=result.w, b=result.b, alpha=result.alpha)


def _assert_kkt(problem, alpha, b, rtol=1e-6):
    """Complementary slackness of the point's own margins: α = 0 above the margin, α = C_i
    below it (hinge) or α = 2C_i(1 − m_i) (squared hinge), α in its box everywhere."""
    lower, upper = problem.dual_box()
    assert np.all(alpha >= lower) and np.all(alpha <= upper)
    if isinstance(problem, KernelDual):
        f = problem.decision_function(alpha, b)
    else:
        w = problem.X.T @ (alpha * problem.y)
        f = problem.decision_function(w, b)
    m = problem.y * f
    C = problem.upper_bounds
    assert np.all(alpha[m > 1 + rtol] == 0.0), "a multiplier above the margin is not exactly 0"
    if problem.loss == "hinge":
        assert np.all(alpha[m < 1 - rtol] == C[m < 1 - rtol]), "one below the margin is not C_i"
    else:
        below = m < 1 - rtol
        np.testing.assert_allclose(alpha[below], 2 * C[below] * (1 - m[below]), rtol=1e-6)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("solver", SOLVERS)
def test_support_matches_svc_and_is_certified(breast_cancer, svc_support, solver, kernel):
    X, y, gamma = breast_cancer
    model = SVMClassifier(kernel=kernel, gamma=gamma, solver=solver, tol=TOL).fit(X, y)
    result = model.result_
    assert result.status is Status.OPTIMAL
    report = result.info["exact_finish"]
    # interior points are finished; SMO's bounds are exact already and its point is kept as is
    exact_already = report.get("skipped", "").startswith("already exact")
    assert report.get("accepted") or (exact_already and solver in ("smo", "auto")), report
    # within two borderline points of LIBSVM's count, in total
    assert np.abs(model.n_support_ - svc_support[kernel]).sum() <= 2, (
        model.n_support_,
        svc_support[kernel],
    )
    # SVC's layout: grouped by class in classes_ order, counted by the labels
    labels = y[model.support_]
    assert np.all(np.diff(labels) >= 0)
    np.testing.assert_array_equal(model.n_support_, [np.sum(labels == 0), np.sum(labels == 1)])
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])
    assert model.dual_coef_.shape == (1, model.support_.size)
    np.testing.assert_array_equal(np.sign(model.dual_coef_[0]), np.where(labels == 1, 1, -1))
    # the certificate, drawn again by a problem built here, meets tol
    problem = _problem(X, y, kernel, gamma)
    cert = _certify(problem, result)
    assert cert.certified and cert.rel_gap <= TOL
    assert cert.residuals.get("dual_infeasibility", 0.0) <= 1e-12
    np.testing.assert_array_equal(np.flatnonzero(result.alpha), np.sort(model.support_))
    # the optimum of the reference, to 1e-8 relative
    ref = reference_solution(problem)
    assert abs(cert.primal - ref.primal) <= TOL * max(1.0, abs(ref.primal))
    _assert_kkt(problem, result.alpha, result.b)


@pytest.mark.parametrize("solver", ("barrier", "clarabel"))
def test_the_model_holds_only_the_support_vectors(breast_cancer, solver):
    X, y, gamma = breast_cancer
    problem = _problem(X, y, "rbf", gamma)
    result = registry.get(solver, tol=TOL).solve(problem)
    model = result.model
    assert isinstance(model, KernelModel)
    support = np.flatnonzero(result.alpha)
    assert support.size < X.shape[0] // 2  # not every row, as an interior point would keep
    np.testing.assert_array_equal(model.support, support)
    assert model.support_vectors.shape == (support.size, X.shape[1])
    np.testing.assert_array_equal(model.support_vectors, X[support])
    saved = pickle.loads(pickle.dumps(model))
    assert saved.support_vectors.shape[0] == support.size
    np.testing.assert_allclose(
        saved.decision_function(X), problem.decision_function(result.alpha, result.b), atol=1e-10
    )


SMALL = datasets.load("breast_cancer:n=200,seed=0")


@pytest.mark.parametrize("loss", ("hinge", "squared_hinge"))
@pytest.mark.parametrize("bias", ("free", "regularized", "none"))
@pytest.mark.parametrize("view", ("kernel_rbf", "primal", "dual"))
def test_every_bias_and_loss_is_finished_exactly(view, bias, loss):
    X = StandardScaler().fit_transform(SMALL.X)
    params = dict(C=2.0, bias=bias, loss=loss)
    if view == "kernel_rbf":
        problem = KernelDual(X, SMALL.y, kernel="rbf", **params)
    else:
        problem = (SoftMarginPrimal if view == "primal" else SoftMarginDual)(X, SMALL.y, **params)
    result = registry.get("barrier", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL
    report = result.info["exact_finish"]
    assert report["accepted"], report
    assert report["fixed_at_0"] > 0
    cert = _certify(problem, result)
    assert cert.certified and cert.rel_gap <= TOL
    _assert_kkt(problem, result.alpha, result.b)
    assert np.count_nonzero(result.alpha) == report["support"] < problem.n_samples


def test_alpha_not_unique_still_certified():
    """Every row twice at large C: the two copies of a free support vector share any split of
    their multiplier, so the KKT system of the free set is singular."""
    ds = datasets.gaussian(60, 4, 1.0, seed=3)
    X, y = np.vstack([ds.X, ds.X]), np.concatenate([ds.y, ds.y])
    for problem in (KernelDual(X, y, C=100.0, kernel="linear"), SoftMarginDual(X, y, C=100.0)):
        for solver in ("barrier", "clarabel"):
            result = registry.get(solver, tol=TOL).solve(problem)
            assert result.status is Status.OPTIMAL, (solver, result.message)
            cert = _certify(problem, result)
            assert cert.certified and cert.rel_gap <= TOL
            report = result.info["exact_finish"]
            # the free set is larger than the kernel's rank + 1: α is not unique there
            assert report["free"] > X.shape[1] + 1, report
            assert report["accepted"], report
            _assert_kkt(problem, result.alpha, result.b)
            # the interior point splits a duplicated pair evenly (the central path is symmetric)
            # and the minimum-norm correction keeps it so (up to the rounding yᵀα = 0 absorbs)
            np.testing.assert_allclose(result.alpha[:60], result.alpha[60:], rtol=1e-7, atol=0)


def test_linear_kernel_with_more_free_vectors_than_d_plus_one():
    """Points placed exactly on the two margins of a 2-d problem: many more free multipliers
    than d + 1 = 3, a singular KKT system, still a certified optimum with an exact support."""
    t = np.linspace(-1.0, 1.0, 12)
    on_margin = np.r_[np.c_[t, np.full(12, 1.0)], np.c_[t, np.full(12, -1.0)]]
    rng = np.random.default_rng(0)
    outside = np.c_[rng.uniform(-1, 1, 40), rng.uniform(1.5, 3.0, 40)]
    X = np.vstack([on_margin, outside, -outside])
    y = np.r_[np.ones(12), -np.ones(12), np.ones(40), -np.ones(40)]
    problem = KernelDual(X, y, C=10.0, kernel="linear")
    for solver in ("barrier", "clarabel"):
        result = registry.get(solver, tol=TOL).solve(problem)
        assert result.status is Status.OPTIMAL
        report = result.info["exact_finish"]
        assert report["accepted"], report
        assert report["free"] > X.shape[1] + 1
        cert = _certify(problem, result)
        assert cert.certified and cert.rel_gap <= TOL
        _assert_kkt(problem, result.alpha, result.b)
        assert np.all(result.alpha[24:] == 0.0)  # the points off the margin are not SVs


def test_a_finish_that_does_not_certify_is_refused(breast_cancer, monkeypatch):
    """The guard: a finished point worse than tol is dropped, the original kept, optimal."""
    X, y, gamma = breast_cancer
    problem = _problem(X, y, "rbf", gamma)
    good = registry.get("clarabel", tol=TOL).solve(problem)

    def wrong(problem, fixed, free, alpha_free, b0, upper, lift=0.0):
        return np.zeros_like(fixed), None, "kkt"  # every multiplier at 0: far from optimal

    monkeypatch.setattr(finish_module, "solve_free_set", wrong)
    result = registry.get("clarabel", tol=TOL).solve(problem)
    report = result.info["exact_finish"]
    assert not report["accepted"] and report["rel_gap_after"] > TOL
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
    assert np.count_nonzero(result.alpha) > np.count_nonzero(good.alpha)  # interior point


def test_skipped_when_the_free_set_is_too_large(breast_cancer, monkeypatch):
    X, y, gamma = breast_cancer
    problem = _problem(X, y, "rbf", gamma)
    monkeypatch.setattr(finish_module, "MAX_FREE", 5)
    result = registry.get("barrier", tol=TOL).solve(problem)
    report = result.info["exact_finish"]
    assert "MAX_FREE" in report["skipped"]
    assert result.status is Status.OPTIMAL
    assert np.count_nonzero(result.alpha) == X.shape[0]  # the interior point, unchanged


def test_not_applied_short_of_optimal_nor_to_anchors(breast_cancer):
    X, y, gamma = breast_cancer
    problem = _problem(X, y, "rbf", gamma)
    result = registry.get("barrier", tol=TOL, max_iter=2).solve(problem)
    assert result.status is not Status.OPTIMAL
    assert "status" in result.info["exact_finish"]["skipped"]
    if registry.solver_class("libsvm").missing_reason() is None:
        anchored = registry.get("libsvm").solve(problem)
        assert "anchor" in anchored.info["exact_finish"]["skipped"]


@pytest.mark.parametrize("bias", ("free", "regularized", "none"))
def test_no_free_multiplier(bias):
    """At a tiny C every multiplier sits at C_i: nothing to solve, b by the problem's rule."""
    ds = datasets.load("gaussian:n=60,d=4,sep=1,seed=0")
    problem = KernelDual(ds.X, ds.y, C=1e-4, kernel="rbf", bias=bias)
    result = registry.get("clarabel", tol=TOL).solve(problem)
    report = result.info["exact_finish"]
    assert report["free"] == 0 and report["accepted"], report
    np.testing.assert_array_equal(result.alpha, problem.upper_bounds)
    cert = _certify(problem, result)
    assert cert.certified and cert.rel_gap <= TOL


def test_exact_and_primal_only_points_are_left_as_they_are():
    """SMO's bounds are exact: its record is not touched. ACCPM hands over (w, b) only: its model
    is w, and the α of its certificate is not the solver's to finish."""
    problem = SoftMarginPrimal(StandardScaler().fit_transform(SMALL.X), SMALL.y)
    primal_only = registry.get("accpm", tol=1e-6).solve(problem)
    assert primal_only.status is Status.OPTIMAL
    assert "(w, b) only" in primal_only.info["exact_finish"]["skipped"]
    assert primal_only.alpha is None
    kernel = KernelDual(problem.X, problem.y, kernel="rbf")
    smo = registry.get("smo", tol=TOL).solve(kernel)
    assert smo.info["exact_finish"]["skipped"].startswith("already exact")
    _assert_kkt(kernel, smo.alpha, smo.b, rtol=1e-3)


# ---- at a loose tol --------------------------------------------------------------------------

#: scikit-learn's toy problem (test_svm.py): the optimum has α = 0.25 on rows 1 and 3, 0 else.
TOY_X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
TOY_Y = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("solver", ("barrier", "clarabel"))
def test_a_loose_tol_is_finished_to_the_exact_optimum(solver):
    """At tol=1e-3 (SVC's default) the barrier leaves α ≈ 7e-6 on the rows off the margin: the
    finish makes the point exact, support and coefficients."""
    problem = KernelDual(TOY_X, TOY_Y, C=1.0, kernel="linear")
    result = registry.get(solver, tol=1e-3).solve(problem)
    assert result.status is Status.OPTIMAL
    report = result.info["exact_finish"]
    assert report["accepted"] and report["rel_gap_after"] <= 1e-12, report
    np.testing.assert_array_equal(np.flatnonzero(result.alpha), [1, 3])
    np.testing.assert_allclose(result.alpha[[1, 3]], 0.25, rtol=1e-12)
    assert abs(result.b) <= 1e-12
    ref = reference_solution(problem)
    assert abs(result.primal - ref.primal) <= 1e-10 * max(1.0, abs(ref.primal))


@pytest.mark.parametrize("C", (1.0, 100.0))
def test_smo_at_a_loose_tol_gets_the_exact_multipliers(C):
    """SMO at tol=1e-3 on an RBF kernel: every multiplier free and 1e-3 off the optimum; the
    finish solves them, so that the fits at (C, weights w) and (C·w, no weights) agree to
    rounding (scikit-learn's test_svm_equivalence_sample_weight_C)."""
    weights = np.full(6, 1.0 / C)
    problem = KernelDual(TOY_X, TOY_Y, C=C, kernel="rbf", gamma=0.5, sample_weight=weights)
    result = registry.get("smo", tol=1e-3).solve(problem)
    report = result.info["exact_finish"]
    assert report["accepted"] and result.rel_gap <= 1e-12, report
    ref = registry.get("clarabel", tol=1e-12).solve(problem)
    np.testing.assert_allclose(result.alpha, ref.alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.b, ref.b, atol=1e-9)


def _first_solve_fails(monkeypatch) -> list:
    """The finish's first free-set solve returns all zeros (a point that does not certify), the
    later ones solve; the list the free sets' sizes are appended to, call by call."""
    solve = finish_module.solve_free_set
    calls = []

    def first_fails(problem, fixed, free, alpha_free, b0, upper, lift=0.0):
        calls.append(free.size)
        if len(calls) == 1:
            return np.zeros_like(fixed), None, "kkt"
        return solve(problem, fixed, free, alpha_free, b0, upper, lift)

    monkeypatch.setattr(finish_module, "solve_free_set", first_fails)
    return calls


def test_the_next_candidate_is_tried_when_one_does_not_certify(monkeypatch):
    """The candidates (the active sets of thresholds from the gap's up to EPS_LOOSE) are tried
    smallest free set first; one whose finished point does not certify (here: forced to 0) is
    followed by the next, and the candidate of smallest certified gap is kept."""
    calls = _first_solve_fails(monkeypatch)
    problem = SoftMarginDual(TOY_X, TOY_Y, C=1.0)
    result = registry.get("barrier", tol=1e-3).solve(problem)
    report = result.info["exact_finish"]
    gaps = [gap for _, gap in report["tried"]]
    assert len(gaps) >= 2 and calls == sorted(calls), (report, calls)  # cheapest first
    assert report["accepted"] and report["rel_gap_after"] == min(gaps) <= 1e-12
    assert gaps[0] > 1e-3  # the forced point
    np.testing.assert_array_equal(np.flatnonzero(result.alpha), [1, 3])


def test_a_loose_coordinate_descent_point_is_finished_and_a_tight_one_kept():
    """DCD at tol=1e-4 (LinearSVC's) ends with exact bounds but free multipliers off the KKT
    point: they are solved (the regularized bias exact); at tol=1e-9 its point is kept as is."""
    problem = SoftMarginDual(TOY_X, TOY_Y, C=1.0, bias="regularized")
    loose = registry.get("dcd", tol=1e-4).solve(problem)
    assert loose.info["exact_finish"]["accepted"] and loose.rel_gap <= 1e-12
    ref = reference_solution(problem)
    np.testing.assert_allclose(loose.w, ref.w, atol=1e-8)
    assert abs(loose.b) <= 1e-12  # the symmetric toy's bias is 0
    tight = registry.get("dcd", tol=1e-9).solve(problem)
    assert tight.info["exact_finish"]["skipped"].startswith("already exact")


def test_the_minimum_norm_solve_is_scipys_gelsy():
    """The KKT solve's direct ``gelsy`` call gives SciPy's ``lstsq(..., "gelsy")`` answer on
    singular systems (duplicated rows: α not unique), bit for bit."""
    from scipy.linalg import lstsq

    rng = np.random.default_rng(2)
    for _ in range(5):
        A = rng.normal(size=(12, 5))
        K = A @ A.T  # rank 5: the Gram block of duplicated or dependent rows
        M = np.block([[K, np.ones((12, 1))], [np.ones((1, 12)), np.zeros((1, 1))]])
        rhs = rng.normal(size=13)
        cut = kkt_systems.RANK_RTOL * float(np.abs(M).max())
        ours = kkt_systems.min_norm_solution(M, rhs, cut)
        theirs = lstsq(M, rhs, cond=cut, lapack_driver="gelsy", check_finite=False)[0]
        assert np.array_equal(ours, theirs)
        assert np.linalg.norm(M @ ours - rhs) < np.linalg.norm(rhs)  # a least-squares fit


def test_a_well_conditioned_kkt_system_is_solved_by_cholesky_as_by_the_rank_revealing_solve():
    """Where the free block is positive definite and well-conditioned the KKT system is solved
    by its Cholesky factorization: the solution of the bordered system (a free bias) and of the
    plain one, the one ``gelsy`` gives, to rounding; a singular block (duplicated rows) or an
    indefinite one is refused, and the rank-revealing solve runs."""
    rng = np.random.default_rng(4)
    for m in (1, 7, 60):
        A = rng.normal(size=(m, m + 3))
        y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
        Q = (A @ A.T / (m + 3) + 0.1 * np.eye(m)) * np.outer(y, y)
        M = np.block([[Q, y[:, None]], [y[None, :], np.zeros((1, 1))]])
        for system, border in ((M, y), (Q, None)):
            rhs = rng.normal(size=system.shape[0])
            ours = kkt_systems.definite_solution(Q, border, rhs)
            cut = kkt_systems.RANK_RTOL * float(np.abs(system).max())
            theirs = kkt_systems.min_norm_solution(system, rhs, cut)
            assert ours is not None
            np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(system @ ours, rhs, atol=1e-10)
    A = rng.normal(size=(12, 5))
    singular = A @ A.T  # rank 5
    assert kkt_systems.definite_solution(singular, np.ones(12), rng.normal(size=13)) is None
    indefinite = np.diag([1.0, -1.0, 2.0])
    assert kkt_systems.definite_solution(indefinite, None, np.ones(3)) is None


def test_a_dominant_kkt_system_is_solved_by_jacobi_s_iteration_as_by_cholesky(monkeypatch):
    """An RBF block nearly the identity (strictly diagonally dominant) is solved by Jacobi's
    iteration, to the factorization's solution within rounding; a block short of the dominance
    is left to the factorization (None)."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 5))
    y = np.where(rng.random(80) < 0.5, 1.0, -1.0)
    for gamma in (20.0, 2.0):
        K = finish_module._dense_kernel_block(X, kernel="rbf", gamma=gamma, degree=3, coef0=0.0)
        Q = K * np.outer(y, y)
        rhs = rng.normal(size=(80, 2))
        ours = kkt_systems.dominant_solution(Q, rhs)
        off = np.abs(Q).sum(axis=1) - 1.0
        if gamma == 2.0:
            assert off.max() > kkt_systems.DOMINANCE and ours is None
            continue
        assert 0.0 < off.max() <= kkt_systems.DOMINANCE and ours is not None
        np.testing.assert_allclose(ours, np.linalg.solve(Q, rhs), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(Q @ ours, rhs, rtol=0, atol=1e-14)
        # the bordered system through it, as through the factorization
        full = rng.normal(size=81)
        jacobi = kkt_systems.definite_solution(Q, y, full)
        monkeypatch.setattr(kkt_systems, "dominant_solution", lambda Q, rhs: None)
        cholesky = kkt_systems.definite_solution(Q, y, full)
        monkeypatch.undo()
        np.testing.assert_allclose(jacobi, cholesky, rtol=1e-12, atol=1e-14)


def test_without_margins_only_the_thresholds_of_alpha_are_tried():
    """``margins=False`` (auto's finish of a probe): the candidates of α's thresholds, in the
    same order, and none read from the margins after them."""
    X, y = load_iris(return_X_y=True)
    keep = y != 0
    problem = KernelDual(X[keep], np.where(y[keep] == 1, 1.0, -1.0), C=1e6, gamma=0.01)
    with pytest.warns(Warning):
        probe = registry.get("smo", max_iter=2000).solve(problem)
    cert = problem.certificate(alpha=probe.alpha, b=probe.b)
    assert cert.certified and cert.rel_gap > 1e-6  # short of tol: the finish is a try
    reports = [
        finish_module.exact_finish(
            problem,
            {"alpha": probe.alpha, "b": probe.b},
            cert,
            tol=2.0 * (cert.gap + cert.rounding) / max(1.0, abs(cert.primal)),  # the probe passes
            max_free=problem.n_samples,
            stop_gap=1e-6,
            margins=margins,
        )[2]
        for margins in (True, False)
    ]
    with_margins, without = reports[0]["tried"], reports[1]["tried"]
    assert 0 < len(without) < len(with_margins)
    assert with_margins[: len(without)] == without


def test_max_tries_caps_the_candidates_certified(monkeypatch):
    """``max_tries``: the candidates certified stop after that many, in the same order; the
    point is then kept when none of them certifies at tol (here the first is forced to 0), and
    finished by the next candidate when more are allowed."""
    problem = SoftMarginDual(TOY_X, TOY_Y, C=1.0)
    exact = registry.get("clarabel", tol=1e-10).solve(problem)
    alpha = 0.999 * exact.alpha + 1e-4  # an interior point near the optimum
    cert = problem.certificate(alpha=alpha, b=exact.b)
    assert cert.certified and 1e-8 < cert.rel_gap < 1e-2
    calls = _first_solve_fails(monkeypatch)
    tol = 2.0 * cert.rel_gap
    point = {"alpha": alpha, "b": exact.b}
    capped = finish_module.exact_finish(problem, point, cert, tol=tol, max_tries=1)
    assert len(capped[2]["tried"]) == 1 and not capped[2]["accepted"]
    np.testing.assert_array_equal(capped[0]["alpha"], alpha)
    calls.clear()
    free = finish_module.exact_finish(problem, point, cert, tol=tol, max_tries=None)
    assert len(free[2]["tried"]) >= 2 and free[2]["accepted"]
    assert free[1].rel_gap <= 1e-12
