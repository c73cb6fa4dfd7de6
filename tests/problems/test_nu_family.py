"""ν-SVC, ν-SVR and the one-class SVM: certificates exact at the Clarabel optimum and equal to
the general QP's Lagrangian gap, scikit-learn's NuSVC/NuSVR/OneClassSVM (its LIBSVM, tol 1e-10)
at the same optimum, the models saved and read back, and the bad input refused."""

import numpy as np
import pytest
from sklearn.svm import NuSVC, NuSVR, OneClassSVM

from svmbench.problems import NuSVCDual, NuSVRDual, OneClassDual
from svmbench.problems.general_qp import GeneralQP, project
from svmbench.problems.model_files import load_model, save_model
from svmbench.solvers import registry

N = 60
# ν·n/2 (ν-SVC, ν-SVR) and ν·n (one-class) fall between integers: the offsets are then unique
NU_SVC, NU_SVR, NU_ONE = 0.37, 0.43, 0.31
GAMMA = 0.4


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    t = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n)
    return X, y, t


def _problem(kind, kernel, sample_weight=None):
    X, y, t = _data()
    if kind == "nu_svc":
        return NuSVCDual(X, y, nu=NU_SVC, kernel=kernel, gamma=GAMMA, sample_weight=sample_weight)
    if kind == "nu_svr":
        return NuSVRDual(
            X, t, C=2.0, nu=NU_SVR, kernel=kernel, gamma=GAMMA, sample_weight=sample_weight
        )
    # away from the origin: with the linear kernel, a cloud around 0 has the optimum w = 0
    return OneClassDual(X + 2.0, nu=NU_ONE, kernel=kernel, gamma=GAMMA, sample_weight=sample_weight)


def _sklearn_alpha(problem, weights=None):
    """scikit-learn's solution (tol 1e-10) mapped to the problem's variables."""
    X, n = problem.X, problem.n_samples
    common = dict(kernel=problem.kernel, gamma=GAMMA, tol=1e-10, max_iter=10**5)
    if problem.kind == "nu_svc":
        est = NuSVC(nu=problem.nu, **common).fit(X, problem.y, sample_weight=weights)
        coef = est.dual_coef_[0]
        alpha = np.zeros(n)
        alpha[est.support_] = coef * problem.y[est.support_]  # α/r ≥ 0
        r = problem.class_mass / alpha[problem.y > 0].sum()
        return alpha * r, est
    if problem.kind == "nu_svr":
        est = NuSVR(C=problem.C, nu=problem.nu, **common).fit(X, problem.y, sample_weight=weights)
        coef = np.zeros(n)
        coef[est.support_] = est.dual_coef_[0]
        return np.r_[np.maximum(coef, 0.0), np.maximum(-coef, 0.0)], est
    est = OneClassSVM(nu=problem.nu, **common).fit(X, sample_weight=weights)
    alpha = np.zeros(n)
    alpha[est.support_] = est.dual_coef_[0]
    return alpha, est


KINDS = ("nu_svc", "nu_svr", "one_class")


@pytest.fixture(scope="module")
def clarabel_optima():
    out = {}
    for kind in KINDS:
        for kernel in ("rbf", "linear"):
            problem = _problem(kind, kernel)
            out[kind, kernel] = (problem, registry.get("clarabel", tol=1e-8).solve(problem))
    return out


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("kind", KINDS)
def test_clarabel_optimum_certifies_and_matches_the_general_gap(clarabel_optima, kind, kernel):
    problem, result = clarabel_optima[kind, kernel]
    assert result.status.value == "optimal"
    cert = problem.certificate(alpha=result.alpha)
    assert cert.certified and cert.rel_gap <= 1e-8
    # the same gap as the general QP's Lagrangian bound, there and at a point away from it
    general = GeneralQP(problem.smo_form())
    rng = np.random.default_rng(1)
    away = project(problem.smo_form(), result.alpha + rng.uniform(0, 0.3, result.alpha.size))
    for alpha in (result.alpha, away):
        ours, theirs = problem.certificate(alpha=alpha), general.certificate(alpha=alpha)
        assert ours.dual == pytest.approx(-theirs.primal, rel=1e-12, abs=1e-12)
        assert ours.gap == pytest.approx(theirs.gap, rel=1e-7, abs=1e-9)
    assert problem.certificate(alpha=away).gap > 1e-4


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("kind", KINDS)
def test_equal_to_scikit_learn(clarabel_optima, kind, kernel):
    problem, result = clarabel_optima[kind, kernel]
    alpha, est = _sklearn_alpha(problem)
    theirs = problem.certificate(alpha=alpha)
    assert theirs.certified and theirs.rel_gap < 1e-6
    assert theirs.dual == pytest.approx(result.dual, rel=1e-6)
    X_test = _data(40, seed=5)[0] + (2.0 if kind == "one_class" else 0.0)
    ours = result.model.decision_function(X_test)
    if kind == "nu_svr":
        np.testing.assert_allclose(ours, est.predict(X_test), atol=1e-4)
    else:
        np.testing.assert_allclose(ours, est.decision_function(X_test), atol=1e-4)
        np.testing.assert_array_equal(result.model.predict(X_test), est.predict(X_test))


@pytest.mark.parametrize("kind", KINDS)
def test_sample_weights_as_scikit_learn(kind):
    weights = np.random.default_rng(2).uniform(0.5, 2.0, size=N)
    problem = _problem(kind, "rbf", sample_weight=weights)
    result = registry.get("clarabel", tol=1e-8).solve(problem)
    assert result.rel_gap <= 1e-8
    alpha, _ = _sklearn_alpha(problem, weights)
    theirs = problem.certificate(alpha=alpha)
    assert theirs.rel_gap < 1e-6
    assert theirs.dual == pytest.approx(result.dual, rel=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_best_offsets_beat_any_other(kind):
    """The certificate's primal value is the minimum over the offsets: moving them raises it."""
    problem = _problem(kind, "rbf")
    form = problem.smo_form()
    alpha = project(form, np.random.default_rng(3).uniform(0, 1, form.n_variables))
    cert = problem.certificate(alpha=alpha)
    point = cert.primal_point
    g = problem.kernel_times(
        alpha * problem.y if kind == "nu_svc" else problem.coefficients(alpha)
        if kind == "nu_svr" else alpha
    )  # fmt: skip
    c = problem.upper_bounds
    quad = -cert.dual if kind != "nu_svr" else 0.5 * problem.coefficients(alpha) @ g

    def primal(*offsets):
        if kind == "nu_svc":
            b, rho = offsets
            hinge = np.maximum(0.0, rho - problem.y * (g + b))
            return quad - 2 * problem.class_mass * rho + c @ hinge
        if kind == "nu_svr":
            b, eps = offsets
            r = problem.y - g - b
            tube = np.maximum(0.0, r - eps) + np.maximum(0.0, -r - eps)
            return quad + 2 * problem.side_mass * eps + c @ tube
        (rho,) = offsets
        return quad - problem.mass * rho + c @ np.maximum(0.0, rho - g)

    names = {"nu_svc": ("b", "rho"), "nu_svr": ("b", "epsilon"), "one_class": ("rho",)}[kind]
    best = [point[name] for name in names]
    assert primal(*best) == pytest.approx(cert.primal, rel=1e-12)
    rng = np.random.default_rng(4)
    for _ in range(50):
        moved = [v + rng.normal(scale=0.05) for v in best]
        assert primal(*moved) >= cert.primal - 1e-12 * abs(cert.primal)


@pytest.mark.parametrize("kind", KINDS)
def test_start_is_feasible(kind):
    form = _problem(kind, "rbf").smo_form()
    assert form.equality_residual(form.alpha0) < 1e-12
    assert np.all(form.alpha0 >= 0) and np.all(form.alpha0 <= form.upper)


def test_one_class_start_is_libsvms():
    form = OneClassDual(_data()[0], nu=0.105).smo_form()  # νn = 6.3
    np.testing.assert_allclose(form.alpha0[:7], [1, 1, 1, 1, 1, 1, 0.3])
    assert not np.any(form.alpha0[7:])


@pytest.mark.parametrize("kind", KINDS)
def test_model_saved_and_read_back(clarabel_optima, kind, tmp_path):
    _, result = clarabel_optima[kind, "rbf"]
    path = tmp_path / "model.npz"
    save_model(result.model, path)
    loaded = load_model(path)
    X = _data(20, seed=9)[0]
    np.testing.assert_array_equal(loaded.decision_function(X), result.model.decision_function(X))


# ---- bad input (tests/BAD_INPUT.md rows 750–759) ------------------------------------------------


def test_infeasible_nu_names_the_range():
    X, _, _ = _data()
    y = np.r_[np.ones(10), -np.ones(N - 10)]  # 2·min(n₊, n₋)/n = 20/60
    with pytest.raises(ValueError, match=r"nu=0\.5 is infeasible.*\(0, 0\.333333\]"):
        NuSVCDual(X, y, nu=0.5)
    NuSVCDual(X, y, nu=1 / 3)  # the end of the range is feasible


@pytest.mark.parametrize("nu", [0.0, -0.1, 1.5])
@pytest.mark.parametrize("kind", KINDS)
def test_nu_outside_zero_one(kind, nu):
    X, y, t = _data()
    with pytest.raises(ValueError, match=r"nu must be in \(0\.0, 1\.0\]"):
        if kind == "nu_svc":
            NuSVCDual(X, y, nu=nu)
        elif kind == "nu_svr":
            NuSVRDual(X, t, nu=nu)
        else:
            OneClassDual(X, nu=nu)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nu_svr_refuses_non_finite_targets(bad):
    X, _, t = _data()
    t[3] = bad
    with pytest.raises(ValueError, match="y must contain only finite targets"):
        NuSVRDual(X, t)


@pytest.mark.parametrize("kind", KINDS)
def test_empty_training_set(kind):
    X = np.empty((0, 3))
    with pytest.raises(ValueError, match="X must be non-empty"):
        if kind == "nu_svc":
            NuSVCDual(X, np.empty(0))
        elif kind == "nu_svr":
            NuSVRDual(X, np.empty(0))
        else:
            OneClassDual(X)


def test_nu_of_the_wrong_type():
    with pytest.raises(TypeError, match="nu must be a real number"):
        OneClassDual(_data()[0], nu="0.5")
