"""scikit-learn's ``LinearSVR`` over every solver of the linear ε-SVR: :class:`LinearSVMRegressor`.

The estimator builds the :class:`~svmbench.problems.svr_linear.SVRPrimal` its parameters describe
(LIBLINEAR's bias: a constant feature of value ``intercept_scaling`` whose weight is regularized,
or none), solves it with any solver or anchor that accepts it (``"auto"``: ``svr_dcd`` or
Clarabel by the loss and C·mean‖x‖², docs/ARCHITECTURE.md §4), and predicts ``w·x + b``.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmbench import solve_outcome
from svmbench.problems.svr_linear import SVRPrimal
from svmbench.problems.validation import validated_input
from svmbench.solvers import registry


class LinearSVMRegressor(RegressorMixin, BaseEstimator):
    """Linear ε-support vector regression by any svmbench solver, certified by its problem.

    ``min ½‖w‖² (+ ½(b/s)²) + Σ_i C_i ℓ(y_i − w·x_i − b)``, ℓ the ε-insensitive loss or its square
    (:class:`~svmbench.problems.svr_linear.SVRPrimal`; LIBLINEAR's ``-s 13`` / ``-s 11, 12``).

    Parameters
    ----------
    epsilon : float, default=0.0
        Half-width of the tube where errors cost nothing (≥ 0), LinearSVR's default.
    tol : float, default=1e-6
        The certified relative duality gap asked of the solver.
    C : float, default=1.0
        ``C_i = C · sample_weight_i``.
    loss : {"epsilon_insensitive", "squared_epsilon_insensitive"}, default="epsilon_insensitive"
    fit_intercept : bool, default=True
        A bias as LIBLINEAR's: the constant feature ``intercept_scaling`` with a regularized
        weight (``bias="regularized"``); False: no bias.
    intercept_scaling : float, default=1.0
    dual : "auto" or bool, default="auto"
        Accepted as LinearSVR's and ignored: the solver decides which form it runs.
    max_iter : int, default=1000
        The solver's iteration budget (its own unit: epochs for ``svr_dcd``).
    solver : str, default="auto"
        Any solver or anchor that accepts ``svr_primal`` (``svmbench list``).
    time_limit : float or None, default=None
    solver_options : dict or None, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : ndarray of shape (1,)
    n_iter_ : int
    result_ : SolveResult (its certificate: ``result_.rel_gap``)
    """

    _parameter_constraints: ClassVar[dict] = {
        "epsilon": [Interval(numbers.Real, 0.0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "C": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "loss": [StrOptions({"epsilon_insensitive", "squared_epsilon_insensitive"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "dual": ["boolean", StrOptions({"auto"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "solver": [str],
        "time_limit": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
        "solver_options": [dict, None],
    }

    def __init__(
        self,
        *,
        epsilon=0.0,
        tol=1e-6,
        C=1.0,
        loss="epsilon_insensitive",
        fit_intercept=True,
        intercept_scaling=1.0,
        dual="auto",
        max_iter=1000,
        solver="auto",
        time_limit=None,
        solver_options=None,
    ):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.max_iter = max_iter
        self.solver = solver
        self.time_limit = time_limit
        self.solver_options = solver_options

    def fit(self, X, y, sample_weight=None):
        """Solve the linear ε-SVR problem of ``(X, y)`` (real, finite targets)."""
        self._validate_params()
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=np.float64, order="C", y_numeric=True
        )
        weights = None
        if sample_weight is not None:
            weights = np.maximum(_check_sample_weight(sample_weight, X, dtype=np.float64), 0.0)
        with validated_input(X):
            problem = SVRPrimal(
                X, y, C=float(self.C), epsilon=float(self.epsilon), loss=self.loss,
                bias="regularized" if self.fit_intercept else "none",
                bias_scale=float(self.intercept_scaling), sample_weight=weights,
            )  # fmt: skip
            name = self._solver_name(problem)
            solver = registry.get(name, **self._solver_options(name))
            result = solve_outcome.solve_and_report(
                solver, problem, None, family="liblinear", max_iter=int(self.max_iter),
                time_limit=self.time_limit,
            )  # fmt: skip
        self.result_ = result
        self.model_ = result.model
        self.n_iter_ = int(result.iterations)
        self.coef_ = np.asarray(result.w, dtype=np.float64).copy()
        self.intercept_ = np.array([float(result.b or 0.0)])
        return self

    def _solver_name(self, problem) -> str:
        try:
            cls = registry.solver_class(self.solver)
        except ValueError as exc:
            raise ValueError(f"solver: {exc}") from None
        why = cls.unsupported_reason(problem)
        if why is not None:
            raise ValueError(
                f"solver {self.solver!r} cannot fit this regressor ({problem.describe()}): {why}"
            )
        return self.solver

    def _solver_options(self, name: str) -> dict[str, Any]:
        cls = registry.solver_class(name)
        options = dict(self.solver_options or {})
        options.setdefault("tol", self.tol)
        for option, value in (("max_iter", int(self.max_iter)), ("time_limit", self.time_limit)):
            if value is not None and registry.accepts_option(cls, option):
                options.setdefault(option, value)
        return options

    def predict(self, X):
        """``w·x + b``."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).reshape(-1) + self.intercept_[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
