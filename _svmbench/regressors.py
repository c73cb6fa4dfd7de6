"""scikit-learn's ``SVR`` over every solver of the ε-SVR dual: :class:`SVMRegressor`.

The estimator turns ``sample_weight`` into per-example weights ``C_i = C · sample_weight_i``,
builds the :class:`~svmbench.problems.svr.SVRDual` its parameters describe, solves it with any
solver or anchor that accepts it, and predicts through the result's
:class:`~svmbench.problems.regression_model.KernelRegressionModel`. Its fitted attributes are
SVR's (LIBSVM's layout: one row of ``β_j = α_j − α*_j`` over the support vectors).
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from svmbench import kernel_functions, solve_outcome
from svmbench.problems.svr import SVRDual
from svmbench.problems.validation import validated_input
from svmbench.solvers import registry

#: ``solver="auto"``: the registry's ``auto`` when it accepts the problem, else the first of
#: these that does.
AUTO_CANDIDATES = ("smo", "barrier", "clarabel")


class SVMRegressor(RegressorMixin, BaseEstimator):
    """ε-support vector regression trained by any svmbench solver, certified by its problem.

    ``min ½βᵀK̃β + Σ_i C_i max(0, |y_i − f(x_i)| − ε)``, ``f(x) = Σ_j β_j K(x_j, x) + b``
    (:class:`~svmbench.problems.svr.SVRDual`; LIBSVM's ``-s 3``).

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        A callable ``kernel(A, B)`` gives the Gram matrix, solved as a precomputed kernel.
    degree : int, default=3
    gamma : {"scale", "auto"} or float, default="scale"
        ``"scale"``: ``1/(d · Var X)`` (SVR's value without weights), ``"auto"``: ``1/d``.
    coef0 : float, default=0.0
    tol : float, default=1e-6
        The certified relative duality gap asked of the solver (SVR's ``tol`` is LIBSVM's
        ``-e``; give it to an anchor as ``solver_options={"eps": ...}``).
    C : float, default=1.0
        ``C_i = C · sample_weight_i``.
    epsilon : float, default=0.1
        Half-width of the tube where errors cost nothing (≥ 0).
    shrinking : bool, default=True
        Handed to the solver when it takes a ``shrinking`` option (LIBSVM's ``-h``); ignored
        otherwise (it changes the path, not the optimum).
    cache_size : float, default=200
        The kernel cache in MB, handed to the solver as ``cache_mb`` when it takes one.
    max_iter : int, default=-1
        The solver's iteration limit; -1: none. Reaching it warns
        (:class:`~svmbench.SVMConvergenceWarning`).
    bias : {"free", "regularized", "none"}, default="free"
        ``"free"``: LIBSVM's unregularized b; ``"regularized"``: K + s²; ``"none"``: b = 0.
    bias_scale : float, default=1.0
    solver : str, default="auto"
        Any registered solver or anchor that accepts ``svr_dual`` (``svmbench list``);
        ``"auto"``: the registry's ``auto`` where it accepts the problem, else the first of
        :data:`AUTO_CANDIDATES` that does.
    time_limit : float or None, default=None
    solver_options : dict or None, default=None
        More options of the solver.

    Attributes
    ----------
    result_ : SolveResult
    model_ : KernelRegressionModel
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors (``β_j ≠ 0``), increasing.
    support_vectors_ : ndarray or CSR of shape (n_SV, n_features)
    dual_coef_ : ndarray or CSR of shape (1, n_SV)
        ``β_j = α_j − α*_j``.
    intercept_ : ndarray of shape (1,)
    n_support_ : ndarray of shape (1,)
    coef_ : ndarray or CSR of shape (1, n_features)
        ``kernel="linear"`` only: ``dual_coef_ @ support_vectors_``.
    n_iter_ : int
        The solver's iterations, in its unit.
    fit_status_ : int
        0 if ``result_.status`` is ``optimal``, else 1.
    shape_fit_ : tuple
    n_features_in_, feature_names_in_
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": [StrOptions({"linear", "poly", "rbf", "sigmoid", "precomputed"}), callable],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": [
            StrOptions({"scale", "auto"}), Interval(numbers.Real, 0.0, None, closed="neither")
        ],
        "coef0": [numbers.Real],
        "tol": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "C": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "epsilon": [Interval(numbers.Real, 0.0, None, closed="left")],
        "shrinking": ["boolean"],
        "cache_size": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, -1, None, closed="left")],
        "bias": [StrOptions({"free", "regularized", "none"})],
        "bias_scale": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "solver": [str],
        "time_limit": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
        "solver_options": [dict, None],
    }  # fmt: skip

    def __init__(
        self,
        *,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        tol=1e-6,
        C=1.0,
        epsilon=0.1,
        shrinking=True,
        cache_size=200,
        max_iter=-1,
        bias="free",
        bias_scale=1.0,
        solver="auto",
        time_limit=None,
        solver_options=None,
    ):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.bias = bias
        self.bias_scale = bias_scale
        self.solver = solver
        self.time_limit = time_limit
        self.solver_options = solver_options

    # ---- fitting ---------------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Solve the ε-SVR problem of ``(X, y)``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            For ``kernel="precomputed"``, the (n_samples, n_samples) Gram matrix.
        y : array-like of shape (n_samples,)
            Real, finite targets.
        sample_weight : array-like of shape (n_samples,), default=None
            ``C_i = C · sample_weight_i``; an example of weight ≤ 0 is left out (β_i = 0).

        Returns
        -------
        self
        """
        self._validate_params()
        if sparse.issparse(X) and self.kernel == "precomputed":
            raise TypeError(
                "Sparse precomputed kernels are not supported: X must be the dense "
                "(n_samples, n_samples) Gram matrix"
            )
        self.__dict__.pop("_fit_X", None)
        if callable(self.kernel):
            check_consistent_length(X, y)
            self._fit_X = X
            X = kernel_functions.gram(self.kernel, X, X)
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=np.float64, order="C", y_numeric=True
        )
        if callable(self.kernel):
            del self.n_features_in_
        elif self.kernel != "precomputed":
            kernel_functions.check_products_finite(X)
        weights = None
        given = None if sample_weight is None else np.asarray(sample_weight, dtype=object)
        if (
            given is not None
            and given.ndim == 1
            and given.size
            and all(isinstance(v, numbers.Real) and v <= 0 for v in given)
        ):  # before scikit-learn's check, which has its own words for all zeros
            raise ValueError(
                "Invalid input - all samples have zero or negative weights (sample_weight): "
                "nothing to fit"
            )
        if sample_weight is not None:
            weights = np.maximum(_check_sample_weight(sample_weight, X, dtype=np.float64), 0.0)
            if not np.any(weights > 0):
                raise ValueError(
                    "Invalid input - all samples have zero or negative weights (sample_weight): "
                    "nothing to fit"
                )
        with validated_input(X):
            problem = SVRDual(
                X, y, C=float(self.C), epsilon=float(self.epsilon),
                kernel="precomputed" if callable(self.kernel) else self.kernel,
                gamma=self.gamma, degree=int(self.degree), coef0=float(self.coef0),
                bias=self.bias, bias_scale=float(self.bias_scale), sample_weight=weights,
            )  # fmt: skip
            name = self._solver_name(problem)
            solver = registry.get(name, **self._solver_options(name))
            result = solve_outcome.solve_and_report(
                solver, problem, None, family="libsvm", max_iter=self._max_iter(),
                time_limit=self.time_limit,
            )  # fmt: skip
        self._set_fitted(result, X)
        return self

    def _max_iter(self) -> int | None:
        return None if self.max_iter == -1 else int(self.max_iter)

    def _solver_name(self, problem) -> str:
        """``solver`` checked against the problem; ``"auto"`` resolved (see the class)."""
        if self.solver == "auto":
            for name in ("auto", *AUTO_CANDIDATES):
                if registry.known(name) and not registry.solver_class(name).unsupported_reason(
                    problem
                ):
                    return name
            raise ValueError(f"no solver accepts {problem.describe()}")
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
        for option, value in (("max_iter", self._max_iter()), ("time_limit", self.time_limit)):
            if value is None:
                continue
            if not registry.accepts_option(cls, option):
                raise ValueError(
                    f"{option}={value!r}: solver {name!r} takes no {option} (its library has "
                    f"its own stopping rule); leave it unset or choose another solver"
                )
            options.setdefault(option, value)
        for option, value in (("cache_mb", float(self.cache_size)), ("shrinking", self.shrinking)):
            if registry.accepts_option(cls, option):
                options.setdefault(option, value)
        return options

    def _set_fitted(self, result, X) -> None:
        from svmbench.solvers.base import Status

        model = result.model
        self.result_ = result
        self.model_ = model
        self.n_iter_ = int(result.iterations)
        self.fit_status_ = 0 if result.status is Status.OPTIMAL else 1
        self.shape_fit_ = X.shape if not callable(self.kernel) else (X.shape[0], 0)
        support = np.asarray(model.support, dtype=np.int32)
        self.support_ = support
        if callable(self.kernel):
            self.support_vectors_ = _safe_indexing(self._fit_X, support)
        elif self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = X[support]
        coef = model.dual_coef[None, :]
        self.dual_coef_ = sparse.csr_matrix(coef) if sparse.issparse(X) else coef
        self.intercept_ = np.array([model.b])
        self.n_support_ = np.array([support.size], dtype=np.int32)

    @property
    def coef_(self):
        """``dual_coef_ @ support_vectors_`` (``kernel="linear"`` only), shape (1, n_features)."""
        check_is_fitted(self)
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        coef = self.dual_coef_ @ self.support_vectors_
        coef = sparse.csr_matrix(coef) if sparse.issparse(coef) else np.array(coef)
        # read-only, as SVR's: an edit would change nothing the model predicts
        (coef.data if sparse.issparse(coef) else coef).flags.writeable = False
        return coef

    # ---- predicting ------------------------------------------------------------------------------
    def _validated(self, X):
        check_is_fitted(self)
        if callable(self.kernel):
            X = kernel_functions.predict_kernel(self.kernel, X, self._fit_X)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)

    def predict(self, X):
        """``f(x) = Σ_j β_j K(x_j, x) + b`` for each row: ndarray of shape (n_samples,)."""
        X = self._validated(X)
        return self.model_.predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
