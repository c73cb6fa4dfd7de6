"""The choice of C: paths equal cold solves, leave-one-out equals an explicit loop of n fits,
the skip rule changes nothing, and the estimator picks the best C."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from svmbench import SVMClassifierCV
from svmbench.model_selection import leave_one_out, regularization_path
from svmbench.problems import KernelDual, SoftMarginPrimal, datasets
from svmbench.solvers import registry
from svmbench.solvers._reference import reference_solution

DATA = datasets.load("gaussian:n=40,d=3,sep=1.5,seed=0")
CS = [0.01, 0.1, 1.0, 10.0]


def _explicit_loo(problem, C, solver, **options):
    """n fits, each on all but one point, each predicting the point left out."""
    n, errors = problem.n_samples, 0
    for i in range(n):
        keep = np.r_[:i, i + 1 : n]
        fold = dataclasses.replace(problem, C=C, X=problem.X[keep], y=problem.y[keep])
        result = registry.get(solver, **options).solve(fold)
        errors += result.model.predict(problem.X[i : i + 1])[0] != problem.y[i]
    return errors / n


@pytest.mark.parametrize(
    ("problem", "solver"),
    [
        (SoftMarginPrimal(DATA.X, DATA.y, bias="regularized"), "dcd"),
        (SoftMarginPrimal(DATA.X, DATA.y, bias="none", loss="squared_hinge"), "dcd"),
        (KernelDual(DATA.X, DATA.y, kernel="rbf", gamma=0.5, bias="free"), "smo"),
    ],
    ids=["linear-regularized", "linear-none-squared", "rbf-free"],
)
def test_leave_one_out_equals_an_explicit_loop_of_n_fits(problem, solver):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = leave_one_out(problem, CS, solver=solver, tol=1e-9)
        explicit = [_explicit_loo(problem, C, solver, tol=1e-9) for C in CS]
    assert list(loo.errors) == explicit
    assert sum(loo.skipped) >= 1  # the certified-margin rule saved solves
    assert all(s + v == problem.n_samples for s, v in zip(loo.skipped, loo.solved, strict=True))


def test_the_skip_rule_never_changes_the_answer():
    problem = SoftMarginPrimal(DATA.X, DATA.y, bias="regularized")
    fast = leave_one_out(problem, CS, solver="dcd", tol=1e-9)
    full = leave_one_out(problem, CS, solver="dcd", tol=1e-9, skip=False)
    assert fast.errors == full.errors and sum(full.skipped) == 0
    for skipped_folds, every in zip(fast.fold_errors, full.fold_errors, strict=True):
        np.testing.assert_array_equal(skipped_folds, every)


def test_an_interior_point_solver_skips_by_the_margin_not_by_alpha():
    problem = SoftMarginPrimal(DATA.X, DATA.y, bias="free")
    loo = leave_one_out(problem, [1.0], solver="barrier", tol=1e-10)
    assert loo.skipped[0] > 0  # barrier's α is never exactly 0, yet points are skipped
    assert loo.errors[0] == _explicit_loo(problem, 1.0, "clarabel")


@pytest.mark.parametrize(("solver", "warm"), [("dcd", True), ("dcd", False), ("osqp", True)])
def test_a_warm_path_reaches_the_certified_optima_of_cold_solves(solver, warm):
    problem = SoftMarginPrimal(DATA.X, DATA.y, bias="regularized")
    path = regularization_path(problem, CS[::-1], solver=solver, warm_start=warm)
    assert [p.C for p in path] == sorted(CS)  # solved in increasing C
    for point in path:
        ref = reference_solution(dataclasses.replace(problem, C=point.C))
        assert point.result.status.value == "optimal"
        assert abs(point.result.primal - ref.primal) <= 2e-6 * max(1.0, abs(ref.primal))


def test_a_kernel_path_over_gamma_and_C():
    problem = KernelDual(DATA.X, DATA.y, kernel="rbf")
    path = regularization_path(problem, [0.1, 1.0], solver="smo", gammas=[0.1, 1.0])
    assert [(p.gamma, p.C) for p in path] == [(0.1, 0.1), (0.1, 1.0), (1.0, 0.1), (1.0, 1.0)]
    assert all(p.result.status.value == "optimal" for p in path)


@pytest.mark.parametrize("cv", [3, "loo"])
def test_the_cv_estimator_picks_the_smallest_best_C_and_refits(cv):
    model = SVMClassifierCV(Cs=CS, cv=cv, kernel="linear", bias="regularized")
    model.fit(DATA.X, DATA.y)
    errors = np.array(model.cv_results_["error"])
    best = np.flatnonzero(errors == errors.min())
    assert model.C_ == CS[best[0]]
    assert model.best_estimator_.C == model.C_
    np.testing.assert_array_equal(model.predict(DATA.X), model.best_estimator_.predict(DATA.X))
    if cv == "loo":
        assert sum(model.cv_results_["skipped"]) > 0


def test_bad_grids_are_clear_errors():
    with pytest.raises(ValueError, match="Cs"):
        SVMClassifierCV(Cs=[1.0, -1.0]).fit(DATA.X, DATA.y)
    with pytest.raises(ValueError, match="cv"):
        SVMClassifierCV(cv=1).fit(DATA.X, DATA.y)
    with pytest.raises(ValueError, match="Cs"):
        regularization_path(SoftMarginPrimal(DATA.X, DATA.y), [], solver="clarabel")
