"""The choice of C (and γ): warm-started regularization paths, k-fold and leave-one-out
cross-validation, and :class:`SVMClassifierCV`.

- :func:`regularization_path` solves one problem over a grid of C, each solve started from the
  previous solution (C ascending: the small-C solutions have few support vectors and are quick,
  and each α stays feasible in the next, larger box).
- :func:`leave_one_out` is the course project's way of choosing C, made cheap: each fold starts
  from the full solution with the left-out multiplier set to 0 (re-projected onto ``yᵀα = 0``
  for a free bias), and a fold is skipped when the left-out point has a *certified* margin
  ``y_i f(x_i) > 1 + δ_i``: then every optimal α has ``α_i = 0`` (complementary slackness), so
  removing the point leaves the solution optimal and its held-out error is 0 without a solve
  (Vapnik's leave-one-out bound counts only support vectors; Joachims 2000). ``δ_i`` bounds how
  far the certified point's ``f(x_i)`` may be from the optimum's: P is 1-strongly convex in
  ``w̃``, so ``½‖w̃ − w̃*‖² ≤ gap`` and ``|f(x_i) − f*(x_i)| ≤ √(2 gap) ‖x̃_i‖`` (plus
  ``√(2 gap) max_j ‖x_j‖`` for a free bias, set by the margin points). Interior-point solvers
  never give exact zeros: the rule reads the margin, not α.
- :class:`SVMClassifierCV` picks C (and γ) by k-fold or leave-one-out error (ties: the smallest
  C, the simplest model), then refits on all the data.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.validation import check_is_fitted

from svmbench.estimators import SVMClassifier
from svmbench.problems.kernels import squared_norms
from svmbench.solvers import registry


@dataclass(frozen=True)
class PathPoint:
    """One solve of a path: its C (and γ), the result, and the wall time of the call."""

    C: float
    gamma: float | None
    result: Any
    wall_time: float


def _with_C(problem, C: float, gamma=None):
    changes: dict[str, Any] = {"C": float(C)}
    if gamma is not None:
        changes["gamma"] = float(gamma)
    return dataclasses.replace(problem, **changes)


def regularization_path(
    problem, Cs, *, solver: str = "dcd", gammas=None, warm_start: bool = True, **solver_options
) -> list[PathPoint]:
    """Solve ``problem`` for every C of ``Cs`` (and every γ of ``gammas`` for a kernel problem).

    Parameters
    ----------
    problem : Problem
        A template: its C (and γ) are replaced (``dataclasses.replace``).
    Cs : sequence of float
        Solved in increasing order.
    solver : str, default="dcd"
    gammas : sequence of float or None
        For a kernel problem: one C path per γ (each path warm-started along C only).
    warm_start : bool, default=True
        Start each solve from the previous C's result, where the solver takes warm starts
        (``Solver.warm_start_uses``); False: cold solves (the comparison of the benchmark).

    Returns
    -------
    list of PathPoint
    """
    Cs = sorted(float(C) for C in Cs)
    if not Cs or any(not (C > 0 and math.isfinite(C)) for C in Cs):
        raise ValueError(f"Cs must be a non-empty list of finite positive numbers, got {Cs}")
    engine = registry.get(solver, **solver_options)
    takes = bool(engine.warm_start_uses) and warm_start
    out = []
    for gamma in [None] if gammas is None else list(gammas):
        previous, previous_C = None, None
        for C in Cs:
            p = _with_C(problem, C, gamma)
            start = _seed(previous, C / previous_C, engine, p) if takes and previous else None
            tic = time.perf_counter()
            result = engine.solve(p, warm_start=start)
            out.append(PathPoint(C, gamma, result, time.perf_counter() - tic))
            if result.model is not None:
                previous, previous_C = result, C
    return out


def _seed(previous, ratio: float, engine, problem):
    """The start of the next C (measured on this project's path benchmark, 20 values of C):

    - without a free bias, α scaled by ``C_new/C_old`` (alpha seeding, DeCoste & Wagstaff
      2000): the multipliers at the bound C stay at the new bound (dcd, gaussian n = 5000:
      2.5× faster than cold; the previous α as it is: 1.45×);
    - with a free bias, the previous α as it is (projected onto the new box): smo, RBF
      n = 2000: 1.35× (1.76× over C in [1, 100]); the scaled α made it slower than cold;
    - a solver that starts from other variables (OSQP's QP vectors) gets the previous result.
    """
    if "alpha" in engine.warm_start_uses and previous.alpha is not None:
        return previous.alpha * ratio if problem.bias != "free" else previous.alpha
    return previous


# ---------------------------------------------------------------------------------------------
# Leave-one-out on a binary problem
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaveOneOut:
    """Leave-one-out over a C path: errors per C, the folds solved and those skipped, and the
    wall time of each C (its full solve and its folds), measured."""

    Cs: tuple[float, ...]
    errors: tuple[float, ...]
    skipped: tuple[int, ...]
    solved: tuple[int, ...]
    wall_time: float
    max_rel_gap: tuple[float, ...] = ()
    n_support: tuple[int, ...] = ()
    fold_errors: tuple[np.ndarray, ...] = field(default=(), repr=False)
    times: tuple[float, ...] = ()


def _row_norms(problem) -> np.ndarray:
    """``‖x̃_i‖``: in the feature space of the problem (the kernel's diagonal), with the
    constant feature s for a regularized bias."""
    from svmbench.problems import KernelDual

    if isinstance(problem, KernelDual):
        diag = problem.kernel_diagonal
    else:
        diag = squared_norms(problem.X)
    s2 = problem.bias_scale**2 if problem.bias == "regularized" else 0.0
    # |K_ii|: K_ii < 0 only for an indefinite kernel, never certified, so never skipped
    return np.sqrt(np.abs(diag) + s2)


def _subproblem(problem, keep: np.ndarray):
    """The problem on the rows ``keep`` (a precomputed kernel keeps rows and columns)."""
    X = (
        problem.X[keep][:, keep]
        if getattr(problem, "kernel", None) == "precomputed"
        else problem.X[keep]
    )
    sw = None if problem.sample_weight is None else problem.sample_weight[keep]
    return dataclasses.replace(problem, X=X, y=problem.y[keep], sample_weight=sw)


def leave_one_out(
    problem, Cs, *, solver: str = "dcd", skip: bool = True, **solver_options
) -> LeaveOneOut:
    """Leave-one-out error of a binary problem for every C of ``Cs`` (see the module docstring).

    Each fold solves the problem without example i, started from the full solution's α with
    α_i removed (projected onto the fold's feasible set), and predicts x_i with the fold's model.
    ``skip=False`` solves every fold (the skip rule's check).
    """
    Cs = sorted(float(C) for C in Cs)
    n = problem.n_samples
    engine = registry.get(solver, **solver_options)
    takes = "alpha" in engine.warm_start_uses
    norms = _row_norms(problem)
    radius = float(norms.max())
    errors, skipped_all, solved_all, gaps, n_sv, folds, times = [], [], [], [], [], [], []
    tic = time.perf_counter()
    previous = None
    for C in Cs:
        start = time.perf_counter()
        full_problem = _with_C(problem, C)
        full = engine.solve(full_problem, warm_start=previous if engine.warm_start_uses else None)
        if full.model is None:
            raise RuntimeError(f"{solver} failed on the full problem at C={C:g}: {full.message}")
        previous = full
        margins = full_problem.y * full.model.decision_function(full_problem.X)
        slack = math.sqrt(2.0 * max(full.gap, 0.0)) if full.certified else math.inf
        delta = slack * (norms + (radius if problem.bias == "free" else 0.0))
        fold_error = np.zeros(n)
        skipped, solved, worst_gap = 0, 0, full.rel_gap
        for i in range(n):
            if skip and margins[i] > 1.0 + delta[i]:
                skipped += 1  # α_i = 0 at every optimum: removing i changes nothing
                continue
            keep = np.r_[:i, i + 1 : n]
            fold = _subproblem(full_problem, keep)
            warm = None
            if takes and full.alpha is not None:
                warm = fold.project_dual(full.alpha[keep])
            result = engine.solve(fold, warm_start=warm)
            solved += 1
            worst_gap = max(worst_gap, result.rel_gap)
            row = problem.X[i : i + 1]
            if getattr(problem, "kernel", None) == "precomputed":
                row = row[:, keep]  # the kernel against the fold's training set
            f = float(result.model.decision_function(row)[0])
            fold_error[i] = float((1.0 if f >= 0 else -1.0) != problem.y[i])
        errors.append(float(fold_error.mean()))
        skipped_all.append(skipped)
        solved_all.append(solved)
        gaps.append(worst_gap)
        n_sv.append(int(np.sum(margins <= 1.0 + delta)))
        folds.append(fold_error)
        times.append(time.perf_counter() - start)
    return LeaveOneOut(
        tuple(Cs), tuple(errors), tuple(skipped_all), tuple(solved_all),
        time.perf_counter() - tic, tuple(gaps), tuple(n_sv), tuple(folds), tuple(times),
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------


class SVMClassifierCV(SVMClassifier):
    """:class:`~svmbench.SVMClassifier` that picks C (and γ) by cross-validation, then refits.

    Parameters
    ----------
    Cs : int or sequence of float, default=10
        The grid of C (an int: that many values log-spaced in [1e-3, 1e3]).
    gammas : sequence of float or None, default=None
        A grid of γ for nonlinear kernels (None: ``gamma`` alone).
    cv : int or "loo", default=5
        Stratified k-fold (seeded by ``random_state``, each fold a warm-started C path), or
        leave-one-out (binary problems; folds skipped by the certified-margin rule).
    C, kernel, gamma, ... : as :class:`~svmbench.SVMClassifier` (C is the refit's start only).

    Attributes
    ----------
    C_, gamma_ : float
        The chosen values (the smallest C among the best: the simplest model).
    cv_results_ : dict
        ``"C"``, ``"gamma"``, ``"error"`` (mean validation error), ``"time"`` (seconds spent at
        that grid point, measured: its k fold solves; for leave-one-out its full solve and folds),
        ``"max_rel_gap"`` (the worst certified relative gap of the fold solves), and for
        leave-one-out ``"skipped"``/``"solved"`` folds.
    """

    def __init__(
        self,
        *,
        Cs=10,
        gammas=None,
        cv=5,
        C=1.0,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        loss="hinge",
        bias="free",
        bias_scale=1.0,
        solver="auto",
        tol=1e-6,
        max_iter=None,
        time_limit=None,
        multiclass="auto",
        class_weight=None,
        random_state=None,
        warm_start=False,
        solver_options=None,
        decision_function_shape="ovr",
        break_ties=False,
    ):
        super().__init__(
            C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, loss=loss, bias=bias,
            bias_scale=bias_scale, solver=solver, tol=tol, max_iter=max_iter,
            time_limit=time_limit, multiclass=multiclass, class_weight=class_weight,
            random_state=random_state, warm_start=warm_start, solver_options=solver_options,
            decision_function_shape=decision_function_shape, break_ties=break_ties,
        )  # fmt: skip
        self.Cs = Cs
        self.gammas = gammas
        self.cv = cv

    def _grid(self) -> list[float]:
        if isinstance(self.Cs, int | np.integer):
            if self.Cs < 1:
                raise ValueError(f"Cs must be a positive integer or a list of C, got {self.Cs}")
            return list(np.logspace(-3, 3, int(self.Cs)))
        Cs = [float(C) for C in self.Cs]
        if not Cs or any(not (C > 0 and math.isfinite(C)) for C in Cs):
            raise ValueError(f"Cs must hold finite positive numbers, got {self.Cs!r}")
        return sorted(Cs)

    def fit(self, X, y, sample_weight=None):
        """Choose C (and γ) by ``cv``, then fit on all of ``(X, y)`` with them."""
        if not (self.cv == "loo" or (isinstance(self.cv, int | np.integer) and self.cv >= 2)):
            raise ValueError(f"cv must be an integer >= 2 or 'loo', got {self.cv!r}")
        Cs = self._grid()
        gammas = [self.gamma] if self.gammas is None else list(self.gammas)
        rows = []
        for gamma in gammas:
            rows.extend(self._evaluate(X, y, sample_weight, Cs, gamma))
        best = min(rows, key=lambda r: (r["error"], r["C"]))
        self.cv_results_ = {k: [r[k] for r in rows] for k in rows[0]}
        self.C_, self.gamma_ = best["C"], best["gamma"]
        final = SVMClassifier(**{**self._base_params(), "C": self.C_, "gamma": self.gamma_})
        final.fit(X, y, sample_weight=sample_weight)
        self.best_estimator_ = final
        for name, value in vars(final).items():  # the fitted state, read by the properties too
            if name.endswith("_") or name in ("_intercept", "_coef_sparse", "_fit_X"):
                self.__dict__[name] = value
        return self

    def _base_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.get_params().items() if k not in ("Cs", "gammas", "cv")}

    def _evaluate(self, X, y, sample_weight, Cs, gamma) -> list[dict[str, Any]]:
        params = {**self._base_params(), "gamma": gamma}
        if self.cv == "loo":
            return self._leave_one_out(X, y, sample_weight, Cs, params)
        folds = StratifiedKFold(n_splits=int(self.cv), shuffle=True, random_state=0)
        y = np.asarray(y)
        errors = np.zeros((len(Cs), int(self.cv)))
        times = np.zeros(len(Cs))
        gaps = np.zeros(len(Cs))
        for k, (train, test) in enumerate(folds.split(X, y)):
            model = SVMClassifier(**{**params, "warm_start": True})
            sw = None if sample_weight is None else np.asarray(sample_weight)[train]
            for j, C in enumerate(Cs):  # a warm-started path over C in every fold
                model.set_params(C=C)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X[train], y[train], sample_weight=sw)
                errors[j, k] = 1.0 - model.score(X[test], y[test])
                times[j] += model.result_.wall_time
                gaps[j] = max(gaps[j], model.result_.rel_gap)
        return [
            {"C": C, "gamma": gamma, "error": float(errors[j].mean()), "time": float(times[j]),
             "max_rel_gap": float(gaps[j])}
            for j, C in enumerate(Cs)
        ]  # fmt: skip

    def _leave_one_out(self, X, y, sample_weight, Cs, params) -> list[dict[str, Any]]:
        template = SVMClassifier(**{**params, "C": Cs[0]})
        template._validate_params()
        if template.loss == "logistic":
            raise ValueError(
                "cv='loo' solves the hinge losses (its skip rule reads which points are support "
                "vectors); use k-fold (cv=5) for loss='logistic'"
            )
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size != 2:
            raise ValueError("cv='loo' takes two classes (use k-fold for more)")
        template.classes_ = classes
        weights = template._weights(X, y, sample_weight)
        problem, name, options = template._problem_and_solver(X, y_index, weights)
        loo = leave_one_out(problem, Cs, solver=name, **options)
        self.loo_ = loo
        columns = zip(
            Cs, loo.errors, loo.max_rel_gap, loo.skipped, loo.solved, loo.times, strict=True
        )
        return [
            {"C": C, "gamma": params["gamma"], "error": e, "time": t, "max_rel_gap": g,
             "skipped": skipped, "solved": solved}
            for C, e, g, skipped, solved, t in columns
        ]  # fmt: skip

    def predict(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def decision_function(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)
