"""The generalized SMO on hand-built general forms (C-SVC, ε-SVR with and without the equality,
one-class, ν-SVC, ν-SVR): certified by GeneralQP's Lagrangian certificate, equal to the polished
OSQP optimum of ``form.to_qp()`` in objective and ρ, and equal to today's C-SVC path."""

import numpy as np
import osqp
import pytest

from svmbench.problems import KernelDual
from svmbench.problems.general_dual import GeneralDual
from svmbench.problems.general_qp import GeneralQP
from svmbench.problems.kernels import Kernel
from svmbench.solvers import registry

N = 60
C = 2.0
NU = 0.3


def _data(n=N, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    target = X[:, 0] + 0.3 * rng.normal(size=n)
    return X, target


def _libsvm_nu_start(upper, total):
    """LIBSVM's start of the ν forms and one-class: α_t = min(u_t, what is left of total)."""
    alpha = np.zeros_like(upper)
    left = total
    for t in range(upper.size):
        alpha[t] = min(upper[t], left)
        left -= alpha[t]
    return alpha


def _c_svc(X, target, C=C, kernel=None):
    n = X.shape[0]
    y = np.where(target > 0, 1.0, -1.0)
    kernel = kernel or Kernel("rbf", 0.5)
    return GeneralDual(X, kernel, np.arange(n), y, -np.ones(n), np.full(n, C), "one", np.zeros(n))


def _eps_svr(X, target, eps=0.1, equality="one"):
    n = X.shape[0]
    return GeneralDual(
        X,
        Kernel("rbf", 0.5),
        np.r_[np.arange(n), np.arange(n)],
        np.r_[np.ones(n), -np.ones(n)],
        np.r_[eps - target, eps + target],
        np.full(2 * n, C),
        equality,
        np.zeros(2 * n),
    )


def _one_class(X):
    n = X.shape[0]
    upper = np.ones(n)
    start = _libsvm_nu_start(upper, NU * n)
    return GeneralDual(
        X, Kernel("rbf", 0.5), np.arange(n), upper, np.zeros(n), upper, "one", start, NU * n
    )


def _nu_svc(X, target):
    n = X.shape[0]
    y = np.where(target > 0, 1.0, -1.0)
    upper = np.ones(n)
    half = NU * n / 2
    start = np.zeros(n)
    for group in (y > 0, y < 0):
        start[group] = _libsvm_nu_start(upper[group], half)
    kernel = Kernel("rbf", 0.5)
    return GeneralDual(X, kernel, np.arange(n), y, np.zeros(n), upper, "nu", start, half, half)


def _nu_svr(X, target):
    n = X.shape[0]
    half = C * NU * n / 2
    start = _libsvm_nu_start(np.full(n, C), half)
    start = np.r_[start, start]
    return GeneralDual(
        X,
        Kernel("rbf", 0.5),
        np.r_[np.arange(n), np.arange(n)],
        np.r_[np.ones(n), -np.ones(n)],
        np.r_[-target, target],
        np.full(2 * n, C),
        "nu",
        start,
        half,
        half,
    )


def _forms():
    X, t = _data()
    dup = np.r_[X[:20], X[:20], X[20:40]]  # rows repeated: a singular kernel matrix
    return {
        "c_svc": _c_svc(X, t),
        "c_svc_large_C": _c_svc(X, t, C=1e3),
        "c_svc_duplicated_rows": _c_svc(dup, np.r_[t[:20], t[:20], t[20:40]]),
        "eps_svr": _eps_svr(X, t),
        "eps_svr_no_equality": _eps_svr(X, t, equality="none"),
        "eps_svr_wide_tube": _eps_svr(X, t, eps=10.0 * np.ptp(t)),
        "one_class": _one_class(X),
        "nu_svc": _nu_svc(X, t),
        "nu_svr": _nu_svr(X, t),
    }


def _osqp_optimum(form):
    qp = form.to_qp()
    solver = osqp.OSQP()
    solver.setup(
        qp.P, qp.q, qp.A, qp.l, qp.u, eps_abs=1e-10, eps_rel=1e-10, polish=True, verbose=False,
        max_iter=400_000,
    )  # fmt: skip
    out = solver.solve()
    return qp.recover(out.x, out.y)


def _free(form, alpha, margin=1e-6):
    return (alpha > margin) & (alpha < form.upper - margin)


@pytest.mark.parametrize("name", sorted(_forms()))
@pytest.mark.parametrize("shrinking", [True, False])
def test_certified_and_equal_to_the_reference_optimum(name, shrinking):
    form = _forms()[name]
    problem = GeneralQP(form)
    result = registry.get("smo", tol=1e-8, shrinking=shrinking).solve(problem)
    assert result.status.value == "optimal"
    cert = problem.certificate(alpha=result.alpha)
    assert cert.certified and cert.rel_gap <= 1e-6
    alpha = result.alpha
    assert np.all(alpha >= 0) and np.all(alpha <= form.upper)
    assert form.equality_residual(alpha) <= 1e-9 * max(1.0, form.delta)
    reference = _osqp_optimum(form)
    best = form.objective(reference["alpha"])
    assert abs(form.objective(alpha) - best) <= 1e-6 * max(1.0, abs(best))
    rho = result.info["rho"]
    if form.equality == "none":
        assert rho == 0.0
    elif _free(form, reference["alpha"]).any():  # ρ is unique when a variable is free
        assert rho == pytest.approx(reference["rho"], abs=1e-5)


def test_a_tube_wider_than_the_targets_leaves_every_alpha_at_zero():
    X, t = _data()
    form = _eps_svr(X, t, eps=10.0 * np.ptp(t))
    result = registry.get("smo", stop_rule="native", eps=1e-10).solve(GeneralQP(form))
    assert np.all(result.alpha == 0.0)
    assert result.iterations == 0


def test_c_svc_through_the_general_form_follows_todays_path():
    X, t = _data(120, seed=5)
    y = np.where(t > 0, 1.0, -1.0)
    form = _c_svc(X, t)
    options = {"stop_rule": "native", "eps": 1e-6, "shrinking": False}
    general = registry.get("smo", **options).solve(GeneralQP(form))
    today = registry.get("smo", **options).solve(
        KernelDual(X, y, C=C, kernel="rbf", gamma=0.5, bias="free")
    )
    assert general.iterations == today.iterations
    np.testing.assert_allclose(general.alpha, today.alpha, rtol=0, atol=1e-12)
    assert -general.info["rho"] == pytest.approx(today.b, abs=1e-12)


def test_eps_svr_agrees_with_scikit_learn():
    """ε-SVR: ``α − α*`` is scikit-learn's ``dual_coef_`` and ρ its ``−intercept_`` (SVR solved
    at a tight tolerance; the solution is unique here: RBF, positive definite)."""
    from sklearn.svm import SVR

    X, t = _data()
    form = _eps_svr(X, t)
    result = registry.get("smo", tol=1e-10).solve(GeneralQP(form))
    ref = SVR(kernel="rbf", gamma=0.5, C=C, epsilon=0.1, tol=1e-10).fit(X, t)
    coef = np.zeros(N)
    coef[ref.support_] = ref.dual_coef_[0]
    alpha = result.alpha
    np.testing.assert_allclose(alpha[:N] - alpha[N:], coef, atol=1e-5)
    assert result.info["rho"] == pytest.approx(-ref.intercept_[0], abs=1e-5)


def test_a_warm_start_from_the_optimum_needs_few_updates():
    X, t = _data()
    form = _nu_svc(X, t)
    solver = registry.get("smo", tol=1e-8)
    first = solver.solve(GeneralQP(form))
    again = solver.solve(GeneralQP(form), warm_start=first.alpha)
    assert again.rel_gap <= 1e-6
    assert again.iterations <= first.iterations / 5


def test_an_infeasible_start_is_refused_naming_alpha0():
    X, _ = _data()
    form = _one_class(X)
    bad = GeneralDual(
        form.X, form.kernel, form.rows, form.sign, form.p, form.upper, "one",
        np.zeros(N), form.delta,
    )  # fmt: skip
    with pytest.raises(ValueError, match="alpha0"):
        registry.get("smo").solve(GeneralQP(bad))


def test_a_warm_start_of_another_length_is_refused_naming_warm_start():
    X, _ = _data()
    form = _one_class(X)
    with pytest.raises(ValueError, match="warm_start"):
        registry.get("smo").solve(GeneralQP(form), warm_start=np.zeros(N + 1))
