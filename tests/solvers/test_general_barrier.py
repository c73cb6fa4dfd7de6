"""The barrier (primal-dual) on LIBSVM's general dual: hand-built forms of C-SVC, ε-SVR (with and
without its equality), one-class, ν-SVC and ν-SVR, certified by the general QP's Lagrangian bound
and equal to Clarabel's (or OSQP's) optimum of ``form.to_qp()``; ρ as OSQP's multipliers give
it; numerical failures end ``numerical_error``; refusals name the reason."""

import numpy as np
import osqp
import pytest
from scipy import sparse

from svmbench.problems.general_dual import GeneralDual
from svmbench.problems.general_qp import GeneralQP, project
from svmbench.problems.kernels import Kernel
from svmbench.solvers import ConvergenceWarning, Status, registry
from svmbench.solvers.barrier import general

N = 40
TOL = 1e-8
RBF = Kernel("rbf", 0.5)


def _data(n=N, d=3, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    target = X[:, 0] + 0.3 * rng.normal(size=n)
    return X, target, np.where(target > 0, 1.0, -1.0)


def _c_svc(X, y, C, kernel=RBF):
    n = len(y)
    return GeneralDual(X, kernel, np.arange(n), y, -np.ones(n), np.full(n, C), "one", np.zeros(n))


def _libsvm_one_class_start(n, nu):
    """LIBSVM's start: the first ⌊νn⌋ at 1, the next at the remainder."""
    alpha = np.zeros(n)
    whole = int(nu * n)
    alpha[:whole] = 1.0
    if whole < n:
        alpha[whole] = nu * n - whole
    return alpha


def _forms():
    X, t, y = _data()
    n = N
    both, signs = np.r_[np.arange(n), np.arange(n)], np.r_[np.ones(n), -np.ones(n)]
    nu, C = 0.3, 2.0
    X_dup = np.vstack([X[:20], X[:20]])  # every row twice: α is not unique, the optimum is
    X_wide, _, y_wide = _data(n=30, d=60, seed=5)
    upper_zero = np.full(n, C)
    smaller = float(min(np.sum(y > 0), np.sum(y < 0)))
    upper_zero[::7] = 0.0
    return {
        "c_svc": _c_svc(X, y, C),
        "eps_svr": GeneralDual(
            X, RBF, both, signs, np.r_[0.1 - t, 0.1 + t], np.full(2 * n, C), "one", np.zeros(2 * n)
        ),
        "eps_svr_no_bias": GeneralDual(
            X, RBF, both, signs, np.r_[0.1 - t, 0.1 + t], np.full(2 * n, C), "none",
            np.zeros(2 * n),
        ),
        "one_class": GeneralDual(
            X, RBF, np.arange(n), np.ones(n), np.zeros(n), np.ones(n), "one",
            _libsvm_one_class_start(n, nu), delta=nu * n,
        ),
        "nu_svc": GeneralDual(
            X, RBF, np.arange(n), y, np.zeros(n), np.ones(n), "nu", np.zeros(n),
            delta=nu * n / 2, delta_neg=nu * n / 2,
        ),
        "nu_svr": GeneralDual(
            X, RBF, both, signs, np.r_[-t, t], np.full(2 * n, C), "nu", np.zeros(2 * n),
            delta=C * nu * n / 2, delta_neg=C * nu * n / 2,
        ),
        # ν at its largest feasible value 2·min(n₊, n₋)/n: the smaller class is forced to α = 1
        "nu_svc_largest_nu": GeneralDual(
            X, RBF, np.arange(n), y, np.zeros(n), np.ones(n), "nu", np.zeros(n),
            delta=smaller, delta_neg=smaller,
        ),
        "duplicated_rows": _c_svc(X_dup, np.r_[y[:20], y[:20]], C),
        "large_C": _c_svc(X, y, 1e6),
        "d_over_n": _c_svc(X_wide, y_wide, 1.0, Kernel("linear")),
        "no_equality_regularized_bias": GeneralDual(
            X, Kernel("linear"), np.arange(n), y, -np.ones(n), np.full(n, C), "none",
            np.zeros(n), s2=1.0,
        ),
        "some_upper_zero": GeneralDual(
            X, RBF, np.arange(n), y, -np.ones(n), upper_zero, "one", np.zeros(n)
        ),
    }  # fmt: skip


FORMS = _forms()


def _clarabel_optimum(form) -> float | None:
    """Clarabel's optimal value of ``form.to_qp()`` (equalities in the zero cone, the box in
    the nonnegative cone) at the references' 1e-10, or None when Clarabel stops short."""
    import clarabel

    qp = form.to_qp()
    eq = qp.l == qp.u
    A = sparse.csc_matrix(qp.A)
    rows = sparse.vstack([A[eq], -A[~eq], A[~eq]], format="csc")
    b = np.r_[qp.u[eq], -qp.l[~eq], qp.u[~eq]]
    cones = [clarabel.NonnegativeConeT(2 * int((~eq).sum()))]
    if eq.any():
        cones.insert(0, clarabel.ZeroConeT(int(eq.sum())))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
    P = sparse.triu(sparse.csc_matrix(qp.P), format="csc")
    out = clarabel.DefaultSolver(P, qp.q, rows, b, cones, settings).solve()
    if str(out.status) != "Solved":
        return None
    return form.objective(project(form, np.asarray(out.x)))


def _reference_optimum(form) -> float:
    """The lower of Clarabel's and OSQP's (polished) optimal values, each at a feasible point
    (OSQP stands in where Clarabel stops short, as in the references)."""
    values = [form.objective(project(form, _osqp_solution(form)["alpha"]))]
    clarabel_value = _clarabel_optimum(form)
    if clarabel_value is not None:
        values.append(clarabel_value)
    return min(values)


def _osqp_solution(form) -> dict:
    qp = form.to_qp()
    solver = osqp.OSQP()
    solver.setup(
        qp.P, qp.q, qp.A, qp.l, qp.u, eps_abs=1e-10, eps_rel=1e-10, polishing=True, verbose=False,
        max_iter=400_000,
    )  # fmt: skip
    out = solver.solve(raise_error=False)
    return qp.recover(out.x, out.y)


def _solve(form, **options):
    return registry.get("barrier", tol=TOL, **options).solve(GeneralQP(form))


@pytest.mark.parametrize("name", sorted(FORMS))
def test_certified_and_equal_to_the_reference_optimum(name):
    form = FORMS[name]
    result = _solve(form)
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and result.rel_gap <= 1e-6
    alpha = result.alpha
    assert np.all(alpha >= 0) and np.all(alpha <= form.upper)
    assert form.equality_residual(alpha) <= 1e-8 * max(1.0, abs(form.delta))
    assert alpha[form.upper == 0].tolist() == [0.0] * int((form.upper == 0).sum())
    best = _reference_optimum(form)
    assert abs(form.objective(alpha) - best) <= 1e-6 * max(1.0, abs(best))
    # the cleanup's point: multipliers exactly at their bounds, the free ones solved
    support = result.info["support"]
    assert support["near_lower"] + support["near_upper"] + support["between"] == len(alpha)
    assert result.info["cleanup"]["accepted"], result.info["cleanup"]
    assert support["threshold"] == 0.0 and support["between"] < len(alpha)


@pytest.mark.parametrize("name", ["c_svc", "eps_svr", "one_class", "nu_svc", "nu_svr"])
def test_rho_is_that_of_the_equality_multipliers(name):
    """LIBSVM's ρ, as OSQP's multipliers give it through ``to_qp().recover``: unique where some
    multiplier lies strictly inside its box (the ν forms: ρ = (μ₋ − μ₊)/2)."""
    form = FORMS[name]
    reference = _osqp_solution(form)
    a = reference["alpha"]
    assert np.any((a > 1e-6 * form.upper) & (a < (1 - 1e-6) * form.upper))
    result = _solve(form)
    assert result.info["rho"] == pytest.approx(reference["rho"], abs=1e-5)
    if name == "c_svc":  # C-SVC: b = −ρ makes the free vectors' margins 1
        free = (a > 1e-4) & (a < form.upper - 1e-4)
        K = form.gram()
        f = K @ (form.sign * result.alpha) - result.info["rho"]
        assert np.allclose(form.sign[free] * f[free], 1.0, atol=1e-5)


def test_one_class_with_nu_one_fixes_every_multiplier():
    """ν = 1: Δ = n = Σu, the only feasible point is α = 1, solved without iterating."""
    X, _, _ = _data()
    form = GeneralDual(
        X, RBF, np.arange(N), np.ones(N), np.zeros(N), np.ones(N), "one", np.ones(N), delta=N
    )
    result = _solve(form)
    assert result.status is Status.OPTIMAL
    assert np.array_equal(result.alpha, np.ones(N))
    assert result.info["support"]["near_upper"] == N


@pytest.mark.parametrize("name", ["c_svc", "eps_svr_no_bias", "one_class", "nu_svr", "large_C"])
def test_the_log_barrier_path_certifies_too(name):
    form = FORMS[name]
    result = _solve(form, method="barrier")
    assert result.status is Status.OPTIMAL, result.message
    assert result.info["method"] == "barrier" and result.rel_gap <= 1e-6
    best = _reference_optimum(form)
    assert abs(form.objective(result.alpha) - best) <= 1e-6 * max(1.0, abs(best))
    native = _solve(form, method="barrier", stop_rule="native")
    assert native.status is Status.OPTIMAL, native.message
    if name != "eps_svr_no_bias":  # ρ from the path's own multipliers λ = ν/t (not the cleanup's)
        lam = native.info["equality_multipliers"]
        rho = -lam[0] if form.equality == "one" else 0.5 * (lam[1] - lam[0])
        assert rho == pytest.approx(_osqp_solution(form)["rho"], abs=1e-5)


def test_native_stop_rule_certifies():
    result = _solve(FORMS["nu_svr"], stop_rule="native")
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL


def test_interior_start_is_on_the_equalities_and_inside_the_box():
    for name, form in FORMS.items():
        state = general.general_start(form, form.hessian())
        assert np.all(state.alpha > 0) and np.all(state.slack > 0), name
        assert form.equality_residual(state.full_alpha()) <= 1e-9 * max(1.0, form.delta), name


def test_a_non_finite_newton_direction_ends_numerical_error(monkeypatch):
    """Forced: the Hessian solves return NaN from the third iteration on; the record keeps
    the last finite point, certified, and no exception leaves the solver."""
    real = general.dense_hessian_solver
    calls = {"n": 0}

    def failing(Q, h, t=1.0):
        calls["n"] += 1
        solve = real(Q, h, t)
        return solve if calls["n"] < 3 else (lambda v: solve(v) * np.nan)

    monkeypatch.setattr(general, "dense_hessian_solver", failing)
    result = _solve(FORMS["eps_svr"])
    assert result.status is Status.NUMERICAL_ERROR
    assert "not finite" in result.message
    assert np.all(np.isfinite(result.alpha)) and result.certified and result.gap > 0


def test_a_singular_newton_system_ends_numerical_error(monkeypatch):
    def singular(Q, h, t=1.0):
        raise np.linalg.LinAlgError("the Newton system is not positive definite")

    monkeypatch.setattr(general, "dense_hessian_solver", singular)
    result = _solve(FORMS["nu_svc"])
    assert result.status is Status.NUMERICAL_ERROR
    assert "LinAlgError" in result.message
    assert np.all(np.isfinite(result.alpha)) and result.certified


def test_an_indefinite_q_is_refused_with_the_reason():
    """A sigmoid kernel's indefinite Q: the general QP says it is not convex (nothing certifies
    there), and the barrier refuses it up front rather than fail inside a factorization."""
    X, _, y = _data()
    problem = GeneralQP(_c_svc(X, y, 1.0, Kernel("sigmoid", 0.5, coef0=-1.0)))
    assert not problem.convex
    with pytest.raises(TypeError, match="not convex"):
        registry.get("barrier").solve(problem)


def test_refusals_name_the_reason():
    X, _, _ = _data()
    form = FORMS["c_svc"]
    with pytest.raises(TypeError, match="kernel_approximation"):
        registry.get("barrier", kernel_approximation="nystrom").solve(GeneralQP(form))
    beyond = GeneralDual(
        X, RBF, np.arange(N), np.ones(N), np.zeros(N), np.ones(N), "one", np.ones(N), delta=N + 1
    )
    with pytest.raises(
        TypeError, match=r"no α in the box meets zᵀα = Δ = 41 \(feasible: 0 ≤ Δ ≤ 40\)"
    ):
        registry.get("barrier").solve(GeneralQP(beyond))
    nan_p = GeneralDual(
        X, RBF, np.arange(N), np.ones(N), np.r_[np.nan, np.zeros(N - 1)], np.ones(N), "none",
        np.zeros(N),
    )  # fmt: skip
    with pytest.raises(TypeError, match="p, delta and delta_neg must be finite"):
        registry.get("barrier").solve(GeneralQP(nan_p))
    m = 17_000  # 17 000² doubles: 2.2 GB, beyond the kernel dual's 2048 MB
    big = GeneralDual(
        X, RBF, np.arange(m) % N, np.ones(m), np.zeros(m), np.ones(m), "none", np.zeros(m)
    )
    why = registry.solver_class("barrier").unsupported_reason(GeneralQP(big))
    assert "17000×17000" in why and "GRAM_MEMORY_LIMIT_MB" in why


def test_the_cleanup_keeps_the_interior_point_when_no_candidate_certifies_better(monkeypatch):
    """Candidates are judged by the problem: a worse one (every free multiplier moved off its
    KKT point) is refused and the interior point stays, with every multiplier inside."""
    from svmbench.solvers.barrier import general_finish

    real = general_finish.solve_free_set

    def spoiled(form, Q, alpha, at_lower, at_upper):
        a, rho, n_lower, n_upper = real(form, Q, alpha, at_lower, at_upper)
        return project(form, a + 0.1 * form.upper), rho, n_lower, n_upper

    monkeypatch.setattr(general_finish, "solve_free_set", spoiled)
    result = _solve(FORMS["c_svc"])
    cleanup = result.info["cleanup"]
    assert result.status is Status.OPTIMAL and not cleanup["accepted"]
    assert all(t["rel_gap"] > cleanup["rel_gap_before"] for t in cleanup["tried"])
    assert result.rel_gap == cleanup["rel_gap_before"]
    assert result.info["support"]["between"] > 0 and np.all(result.alpha > 0)


def test_the_cleanup_is_skipped_short_of_tol():
    with pytest.warns(ConvergenceWarning):
        result = registry.get("barrier", tol=TOL, max_iter=2).solve(GeneralQP(FORMS["c_svc"]))
    assert result.status is Status.MAX_ITER
    assert result.info["cleanup"] == {"skipped": "not optimal"}
