"""``squared_hinge_newton`` against Clarabel's optima: the squared hinge on easy and hard data
(overlapping classes, duplicated rows, large C, d > n, sample weights with zeros), every bias,
dense and CSR rows, the exact solve and the conjugate-gradient one; warm starts, the native
rule, the limits and refusals (tests/BAD_INPUT.md rows 890–899)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

from svmbench import SVMClassifier
from svmbench.problems import SoftMarginDual, SoftMarginPrimal
from svmbench.solvers import Status, registry
from svmbench.solvers import squared_hinge_newton as newton
from svmbench.solvers._reference import reference_solution
from tests.conftest import BINARY_SETS

TOL = 1e-9


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _weighted():
    X, y = BINARY_SETS["gaussian_overlap"]
    sw = np.random.default_rng(7).uniform(0.0, 3.0, y.size)
    sw[:10] = 0.0  # left out
    return X, y, sw


#: name → (X, y, sample_weight, C)
SETS = {
    "overlap": (*BINARY_SETS["gaussian_overlap"], None, 1.0),
    "overlap_large_C": (*BINARY_SETS["gaussian_overlap"], None, 1e4),
    "duplicated": (*BINARY_SETS["duplicated"], None, 1e3),
    "d_gt_n": (*BINARY_SETS["d_gt_n"], None, 100.0),
    "breast_cancer": (*BINARY_SETS["breast_cancer"], None, 10.0),
    "separable": (*BINARY_SETS["gaussian_separable"], None, 1e5),
    "weighted": (*_weighted(), 5.0),
}


def problem_on(name, bias, *, storage="dense", view=SoftMarginPrimal):
    X, y, sw, C = SETS[name]
    X = sparse.csr_matrix(X) if storage == "csr" else X
    return view(X, y, C=C, loss="squared_hinge", bias=bias, sample_weight=sw)


def _check_optimum(problem, result, tol=TOL):
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and result.rel_gap <= tol
    ref = reference_solution(problem)
    assert rel(result.primal, ref.primal) <= 1e-7
    return ref


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("name", sorted(SETS))
def test_exact_newton_reaches_the_reference_optimum(name, bias):
    problem = problem_on(name, bias)
    result = registry.get("squared_hinge_newton", tol=TOL).solve(problem)
    ref = _check_optimum(problem, result)
    assert result.info["exact_newton"]
    # the model is (w, b): the problem built the multipliers, the finish had nothing to do
    assert "no α" in result.info["exact_finish"]["skipped"]
    w_ref = np.asarray(ref.w)
    assert np.linalg.norm(result.w - w_ref) <= 1e-3 * max(1.0, np.linalg.norm(w_ref))


@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("name", ["overlap", "duplicated", "d_gt_n", "weighted"])
def test_conjugate_gradients_and_csr_rows_reach_the_same_optimum(name, bias, monkeypatch):
    problem = problem_on(name, bias, storage="csr")
    monkeypatch.setattr(newton, "SPARSE_MAX_D", 0)  # CG, whatever d is
    result = registry.get("squared_hinge_newton", tol=1e-8).solve(problem)
    _check_optimum(problem, result, tol=1e-8)
    assert not result.info["exact_newton"] and result.info["cg_iterations"] > 0


def test_csr_rows_with_the_exact_solve_match_the_dense_ones():
    dense = problem_on("overlap", "free")
    csr = problem_on("overlap", "free", storage="csr")
    a = registry.get("squared_hinge_newton", tol=TOL).solve(dense)
    b = registry.get("squared_hinge_newton", tol=TOL).solve(csr)
    assert b.info["exact_newton"] and b.status is Status.OPTIMAL
    assert np.allclose(a.w, b.w, rtol=1e-8, atol=1e-10) and abs(a.b - b.b) <= 1e-8


def test_the_dual_view_has_the_same_optimum():
    problem = problem_on("breast_cancer", "regularized", view=SoftMarginDual)
    result = registry.get("squared_hinge_newton", tol=TOL).solve(problem)
    _check_optimum(problem, result)


def test_the_method_ends_in_a_handful_of_exact_steps():
    """Finite termination (Keerthi & DeCoste, Theorem 1): the active set reproduces itself and
    the point is exact to rounding, well before the dual methods' epochs."""
    problem = problem_on("breast_cancer", "regularized")
    result = registry.get("squared_hinge_newton", tol=1e-12).solve(problem)
    assert result.iterations <= 20 and result.certified and result.rel_gap <= 1e-12
    # at 1e-12 the certificate's rounding allowance (refined only above 1e-9 of |P|) may be
    # the floor: then the status says so, and the point is still exact to rounding
    assert result.status is Status.OPTIMAL or (
        result.status is Status.NOT_CERTIFIED and "rounding floor" in result.message
    )


def _state_at(problem, v):
    """The solver's state at the point ``v = (w, β)``."""
    obj = newton._Objective(problem)
    st = newton._State(obj, v, problem.y * obj.scores(v))
    assert obj.advance(st, 0.0, np.zeros_like(v), np.zeros_like(st.m))
    return st


def _wb(obj, v):
    return v[: obj.d], obj.col * float(v[obj.d]) if obj.has_bias else 0.0


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_the_line_search_is_the_exact_minimizer_along_the_direction(bias, storage):
    problem = problem_on("overlap", bias, storage=storage)
    rng = np.random.default_rng(0)
    for _ in range(5):
        st = _state_at(problem, rng.standard_normal(problem.n_features + (bias != "none")))
        obj, v = st.objective, st.v
        delta = -st.g + 0.3 * rng.standard_normal(obj.dim)  # any descent direction
        t, dm = obj.line_search(st, delta)
        assert np.allclose(dm, problem.y * obj.scores(delta), rtol=1e-12, atol=1e-12)

        def f(s, obj=obj, v=v, delta=delta):
            return problem.primal_objective(*_wb(obj, v + s * delta))

        grid = np.linspace(0.0, 3.0 * max(t, 1e-3), 601)
        assert f(t) <= min(f(s) for s in grid) + 1e-12 * max(1.0, abs(f(t)))
        assert f(t) < f(0.0)


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_a_step_computes_what_the_problem_does(bias, storage):
    """The step's pass (jitted for dense rows) against the problem's own NumPy arithmetic: f is
    P(w, b), α the KKT map, ∇f by central differences of P, the active set ``m_i < 1`` with
    ``C_i > 0``, and the dual estimate D(α) (without the bias's equality for a free bias)."""
    X, y, sw, C = SETS["weighted"]
    X = sparse.csr_matrix(X) if storage == "csr" else X
    problem = SoftMarginPrimal(X, y, C=C, loss="squared_hinge", bias=bias, sample_weight=sw)
    rng = np.random.default_rng(3)
    st = _state_at(problem, 0.1 * rng.standard_normal(problem.n_features + (bias != "none")))
    obj = st.objective
    delta = 0.05 * rng.standard_normal(obj.dim)
    _, dm = obj.line_search(st, delta)
    assert obj.advance(st, 0.7, delta, dm)  # any step length
    w, b = _wb(obj, st.v)
    m = problem.margins(w, b)
    assert np.allclose(st.m, m, rtol=1e-12, atol=1e-12)
    assert rel(st.f, problem.primal_objective(w, b)) <= 1e-12
    upper = problem.upper_bounds
    assert np.allclose(st.alpha, 2.0 * upper * np.maximum(0.0, 1.0 - m), rtol=1e-12, atol=1e-12)
    assert np.array_equal(obj.active, (m < 1.0) & (upper > 0.0))
    assert st.count == np.count_nonzero(obj.active)
    h = 1e-6
    numeric = [
        (
            problem.primal_objective(*_wb(obj, st.v + h * e))
            - problem.primal_objective(*_wb(obj, st.v - h * e))
        )
        / (2.0 * h)
        for e in np.eye(obj.dim)
    ]
    assert np.allclose(st.g, numeric, rtol=1e-5, atol=1e-5)
    assert st.gnorm == pytest.approx(np.linalg.norm(st.g), rel=1e-12)
    if bias != "free":
        assert rel(st.dual, problem.dual_objective(st.alpha)) <= 1e-12


def test_a_warm_start_from_the_optimum_stops_at_once():
    problem = problem_on("overlap", "regularized")
    cold = registry.get("squared_hinge_newton", tol=TOL).solve(problem)
    warm = registry.get("squared_hinge_newton", tol=TOL).solve(problem, warm_start=cold)
    assert warm.status is Status.OPTIMAL and warm.iterations <= 1
    from_alpha = registry.get("squared_hinge_newton", tol=TOL).solve(problem, warm_start=cold.alpha)
    assert from_alpha.status is Status.OPTIMAL and from_alpha.iterations <= 3


def test_the_native_rule_reports_the_certified_gap():
    problem = problem_on("overlap", "regularized")
    result = registry.get("squared_hinge_newton", stop_rule="native", eps=0.1).solve(problem)
    assert result.certified
    assert (result.status is Status.OPTIMAL) == (result.rel_gap <= 1e-6)


def test_max_iter_is_never_reported_optimal_short_of_tol():
    problem = problem_on("overlap_large_C", "free")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("squared_hinge_newton", max_iter=1, tol=1e-12).solve(problem)
    assert result.status is Status.MAX_ITER and result.rel_gap > 1e-12


def test_the_estimator_fits_the_squared_hinge_by_it():
    X, y = BINARY_SETS["breast_cancer"]
    est = SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized").fit(X, y)
    assert est.result_.info["auto"]["chose"] == "squared_hinge_newton"
    assert est.result_.status is Status.OPTIMAL and est.result_.rel_gap <= 1e-6


# ---- bad input (tests/BAD_INPUT.md rows 890–899) ------------------------------------------------
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"eps": -1.0}, "eps"),
        ({"max_cg": 0}, "max_cg"),
        ({"check_every": 0}, "check_every"),
        ({"stop_rule": "epochs"}, "stop_rule"),
    ],
)
def test_bad_options_name_the_argument(options, match):
    with pytest.raises(ValueError, match=match):
        registry.get("squared_hinge_newton", **options)


def test_the_plain_hinge_is_refused_naming_the_loss():
    X, y = BINARY_SETS["gaussian_overlap"]
    with pytest.raises(TypeError, match="squared_hinge_newton.*loss"):
        registry.get("squared_hinge_newton").solve(SoftMarginPrimal(X, y, C=1.0))


def test_a_warm_start_of_the_wrong_shape_names_warm_start():
    problem = problem_on("overlap", "regularized")
    with pytest.raises(ValueError, match="warm_start"):
        registry.get("squared_hinge_newton").solve(problem, warm_start=np.ones(3))


@pytest.mark.parametrize("rank_one", [True, False])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
@pytest.mark.parametrize("name", ["overlap_large_C", "weighted", "duplicated"])
def test_the_updated_newton_matrix_is_the_one_formed_anew(name, bias, rank_one, monkeypatch):
    """Dense rows: the Newton matrix kept after each step, updated by the rows that entered or
    left the active set (jitted rank-one updates, or two syrks), equals
    ``R + X̃_Iᵀ diag(2C_I) X̃_I`` formed from the active rows (lower triangle, to rounding), and
    the steps end at Clarabel's optimum."""
    if not rank_one:
        monkeypatch.setattr(newton, "RANK_UPDATE_WORK", 0)
    problem = problem_on(name, bias)
    solver = registry.get("squared_hinge_newton", tol=TOL)
    state = solver._init_state(problem, None)
    obj, updates = state.objective, 0
    X, C = problem.X, problem.upper_bounds
    for _ in range(60):
        if state.stable or not state.count:
            break
        solver._step(problem, state)
        active = obj.active_set(state.m)
        assert np.array_equal(obj.active, active)
        if obj.H is None:
            continue  # to be formed anew from the active rows
        updates += not state.stable_set
        Xt = np.hstack([X, np.full((X.shape[0], 1), obj.col)]) if obj.has_bias else X
        rows = Xt[active]
        ridge = np.diag(obj.regularized(np.ones(obj.dim)))
        expected = rows.T @ (2.0 * C[active, None] * rows) + ridge
        got = np.tril(obj.H)
        assert np.allclose(got, np.tril(expected), rtol=1e-11, atol=1e-9 * np.abs(expected).max())
    assert updates >= 1  # some step's matrix was updated, not formed anew
    result = solver.solve(problem)
    _check_optimum(problem, result)


@pytest.mark.parametrize("bias", ["regularized", "free"])
@pytest.mark.parametrize("C", [1e6, 1e10])
def test_the_periodic_certificate_is_a_safety_net_only(monkeypatch, C, bias):
    """On digits (3 against the rest, a one-vs-rest problem) at large C, 100-200 Newton steps:
    a certificate at every step stops the method at the very step the gap estimate does (the
    estimate is the certificate's own gap), so the default schedule draws a certificate only
    every ``default_check_every`` steps and at the end, and reaches the same point."""
    from sklearn.datasets import load_digits

    X, labels = load_digits(return_X_y=True)
    y = np.where(labels == 3, 1.0, -1.0)
    problem = SoftMarginPrimal(X / 16.0, y, C=C, loss="squared_hinge", bias=bias)
    drawn = []
    original = SoftMarginPrimal.certificate

    def counted(self, **variables):
        drawn.append(1)
        return original(self, **variables)

    monkeypatch.setattr(SoftMarginPrimal, "certificate", counted)
    every = registry.get("squared_hinge_newton", check_every=1, trace=False).solve(problem)
    n_every = len(drawn)
    drawn.clear()
    default = registry.get("squared_hinge_newton", trace=False).solve(problem)
    assert every.status is default.status is Status.OPTIMAL
    assert default.iterations == every.iterations > newton.SquaredHingeNewton.default_check_every
    np.testing.assert_array_equal(default.w, every.w)
    assert n_every >= every.iterations
    assert len(drawn) < n_every
    if bias == "regularized":  # a free bias at C = 1e10 draws more, off the schedule
        assert len(drawn) <= every.iterations // newton.SquaredHingeNewton.default_check_every + 3
