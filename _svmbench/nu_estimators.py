"""scikit-learn estimators of the ν family: :class:`NuSVMClassifier` (NuSVC),
:class:`NuSVMRegressor` (NuSVR) and :class:`OneClassSVM`, trained by any solver that accepts
their problems (:mod:`svmbench.problems.nu_svc`, :mod:`~svmbench.problems.nu_svr`,
:mod:`~svmbench.problems.one_class`) and certified by them.

Their fitted attributes are their scikit-learn namesakes', from the models: ν-SVC's model is
LIBSVM's reported one (``α y / r``, ``b / r``), one-vs-one over pairs of classes beyond two
(SVC's layout, :mod:`svmbench.svc_layout`); ν-SVR's ``dual_coef_`` is ``α − α*``; one-class's
``dual_coef_`` is α and ``offset_`` is ρ, its decision function ``Σ α_i K(x_i, x) − ρ``.
"""

from __future__ import annotations

import numbers
from typing import ClassVar

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, OutlierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmbench import solve_outcome, svc_layout
from svmbench.estimators import SVMClassifier
from svmbench.problems import NuSVCDual, NuSVRDual, OneClassDual
from svmbench.problems.models import OneVsOneModel
from svmbench.problems.validation import validated_input
from svmbench.solvers import registry

#: ``solver="auto"``: the first of these that accepts the problem (the registry's ``auto``
#: runs the generalized SMO on the ν family, docs/ARCHITECTURE.md §4).
AUTO_ORDER = ("auto", "smo", "barrier", "clarabel")

_KERNEL = [StrOptions({"linear", "poly", "rbf", "sigmoid", "precomputed"})]
_COMMON_CONSTRAINTS = {
    "nu": [Interval(numbers.Real, 0.0, 1.0, closed="right")],
    "kernel": _KERNEL,
    "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0.0, None, closed="neither")],
    "degree": [Interval(numbers.Integral, 1, None, closed="left")],
    "coef0": [numbers.Real],
    "solver": [str],
    "tol": [Interval(numbers.Real, 0.0, None, closed="neither")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "time_limit": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
    "solver_options": [dict, None],
}


def choose_solver(name: str, problem) -> str:
    """``name``, or for ``"auto"`` the first of :data:`AUTO_ORDER` that accepts ``problem``;
    a ValueError naming the solver when it cannot take the problem."""
    if name == "auto":
        for candidate in AUTO_ORDER:
            if registry.known(candidate):
                if registry.solver_class(candidate).unsupported_reason(problem) is None:
                    return candidate
        raise ValueError(f"solver='auto': none of {AUTO_ORDER} accepts {problem.describe()}")
    try:
        cls = registry.solver_class(name)
    except ValueError as exc:
        raise ValueError(f"solver: {exc}") from None
    why = cls.unsupported_reason(problem)
    if why is not None:
        raise ValueError(f"solver {name!r} cannot fit this model ({problem.describe()}): {why}")
    return name


def solve(estimator, problem):
    """Solve ``problem`` with the estimator's solver and options, its status said in
    scikit-learn's terms (:mod:`svmbench.solve_outcome`)."""
    name = choose_solver(estimator.solver, problem)
    options = dict(estimator.solver_options or {})
    options.setdefault("tol", estimator.tol)
    cls = registry.solver_class(name)
    for option in ("max_iter", "time_limit"):
        value = getattr(estimator, option)
        if value is not None:
            if not registry.accepts_option(cls, option):
                raise ValueError(f"{option}={value!r}: solver {name!r} takes no {option}")
            options.setdefault(option, value)
    return solve_outcome.solve_and_report(
        registry.get(name, **options), problem, None, family="libsvm",
        max_iter=estimator.max_iter, time_limit=estimator.time_limit,
    )  # fmt: skip


def _kernel_options(estimator) -> dict:
    return dict(
        kernel=estimator.kernel, gamma=estimator.gamma, degree=int(estimator.degree),
        coef0=float(estimator.coef0),
    )  # fmt: skip


def _weights(X, sample_weight):
    if sample_weight is None:
        return None
    given = np.asarray(sample_weight, dtype=object)
    if (
        given.ndim == 1
        and given.size
        and all(isinstance(v, numbers.Real) and v <= 0 for v in given)
    ):  # before scikit-learn's check, which has its own words for all zeros (LIBSVM's here)
        raise ValueError(
            "Invalid input - all samples have zero or negative weights (sample_weight): "
            "nothing to fit"
        )
    sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if not np.any(sw > 0):
        raise ValueError(
            "Invalid input - all samples have zero or negative weights (sample_weight): "
            "nothing to fit"
        )
    return np.maximum(sw, 0.0)


def _expansion_attributes(estimator, model, X) -> None:
    """``support_``, ``support_vectors_``, ``dual_coef_``, ``intercept_`` of a single kernel
    expansion (regression, one-class)."""
    estimator.support_ = model.support.astype(np.int32)
    estimator.support_vectors_ = (
        np.empty((0, 0)) if estimator.kernel == "precomputed" else X[model.support]
    )
    coef = model.dual_coef[None, :]
    estimator.dual_coef_ = sparse.csr_matrix(coef) if sparse.issparse(X) else coef
    estimator.intercept_ = np.array([model.b])
    estimator.n_support_ = np.array([model.support.size], dtype=np.int32)


class _ExpansionMixin:
    """``coef_`` of the linear kernel (SVC's ``dual_coef_ @ support_vectors_``) and the checks
    of prediction input shared by the regressor and the one-class SVM."""

    @property
    def coef_(self):
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self)
        coef = self.dual_coef_ @ self.support_vectors_
        if sparse.issparse(self.support_vectors_):  # sparse after a sparse fit, as SVC's
            coef = sparse.csr_matrix(coef)
        else:
            coef = coef.toarray() if sparse.issparse(coef) else np.array(coef)
        # read-only, as SVC's: an edit would change nothing the model predicts
        (coef.data if sparse.issparse(coef) else coef).flags.writeable = False
        return coef

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


class NuSVMClassifier(SVMClassifier):
    """ν-support vector classifier (scikit-learn's ``NuSVC``) trained by any svmbench solver that
    accepts :class:`~svmbench.problems.NuSVCDual`, certified by it.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of margin errors, lower bound on that of support vectors;
        more than ``2·min(n₊, n₋)/n`` of a pair of classes is infeasible (a ValueError naming
        the range).
    kernel, gamma, degree, coef0
        As :class:`~svmbench.SVMClassifier`.
    solver : str, default="auto"
        A solver that accepts ν-SVC (``svmbench list``), or an anchor (``libsvm_nu``,
        ``sklearn_nu``); ``"auto"``: the registry's ``auto`` (the generalized SMO).
    class_weight : dict, "balanced" or None, default=None
        Multiplies the weights ``c_i`` (the bounds of α and the masses νW/2) of each class's
        examples; scikit-learn's NuSVC accepts it and ignores it.
    tol, max_iter, time_limit, solver_options, decision_function_shape, break_ties
        As :class:`~svmbench.SVMClassifier`.

    Attributes
    ----------
    NuSVC's: ``classes_``, ``support_``, ``support_vectors_``, ``dual_coef_`` (``α y / r``),
    ``intercept_`` (``b / r``), ``n_support_``, ``fit_status_``, ``n_iter_`` (per pair),
    ``class_weight_``, ``shape_fit_``, ``coef_`` (linear kernel); ``result_`` (one pair) or
    ``results_`` (every pair) and ``model_``.
    """

    _parameter_constraints: ClassVar[dict] = {
        **_COMMON_CONSTRAINTS,
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
    }

    def __init__(
        self,
        *,
        nu=0.5,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        solver="auto",
        tol=1e-6,
        max_iter=None,
        time_limit=None,
        class_weight=None,
        solver_options=None,
        decision_function_shape="ovr",
        break_ties=False,
    ):
        self.nu = nu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.class_weight = class_weight
        self.solver_options = solver_options
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties

    def _svc_like(self) -> bool:
        return True

    def fit(self, X, y, sample_weight=None):
        """Solve ν-SVC on ``(X, y)``: one problem for two classes, one per pair beyond."""
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        if y.dtype.kind not in "iub":
            check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                "the data must contain samples of at least 2 classes; got one class: "
                f"{classes[0]!r}"
            )
        weights = self._weights(X, y, sample_weight)
        self.classes_ = classes
        k = classes.size
        options = _kernel_options(self)
        if options["gamma"] in ("scale", "auto"):  # one γ for every pair, as SVC
            options["gamma"] = self._gamma(X, weights)
        with validated_input(X):
            if k == 2:
                y_pm = np.where(y_index == 1, 1.0, -1.0)
                problem = NuSVCDual(X, y_pm, nu=self.nu, sample_weight=weights, **options)
                results = [solve(self, problem)]
                model = results[0].model
            else:
                pairs, models, results = [], [], []
                for i in range(k):
                    for j in range(i + 1, k):
                        rows = np.flatnonzero((y_index == i) | (y_index == j))
                        pair = NuSVCDual(
                            X[rows], np.where(y_index[rows] == i, 1.0, -1.0), nu=self.nu,
                            sample_weight=None if weights is None else weights[rows], **options,
                        )  # fmt: skip
                        results.append(solve(self, pair))
                        pairs.append((i, j))
                        models.append(results[-1].model)
                model = OneVsOneModel(tuple(models), tuple(pairs), k)
                problem = None
        self.results_ = results
        self.result_ = results[0]
        self.model_ = model
        self.fit_status_ = int(any(r.status.value != "optimal" for r in results))
        self.n_iter_ = np.array([r.iterations for r in results], dtype=np.int64)
        self._coef_sparse = sparse.issparse(X)
        for name in ("_intercept", "support_", "support_vectors_", "dual_coef_", "n_support_"):
            self.__dict__.pop(name, None)
        layout = svc_layout.support_layout(
            model, results[0], problem, X, y_index, k, precomputed=self.kernel == "precomputed"
        )
        if "intercept_" in layout:
            self._intercept = layout.pop("intercept_")
        for name, value in layout.items():
            setattr(self, name, value)
        self.shape_fit_ = X.shape
        self.class_weight_ = compute_class_weight(self.class_weight, classes=classes, y=y)
        return self

    def __sklearn_tags__(self):
        tags = super(SVMClassifier, self).__sklearn_tags__()
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


class NuSVMRegressor(_ExpansionMixin, RegressorMixin, BaseEstimator):
    """ν-support vector regression (scikit-learn's ``NuSVR``) trained by any svmbench solver that
    accepts :class:`~svmbench.problems.NuSVRDual`, certified by it.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
    C : float, default=1.0
    kernel, gamma, degree, coef0, solver, tol, max_iter, time_limit, solver_options
        As :class:`NuSVMClassifier`.

    Attributes
    ----------
    NuSVR's: ``support_``, ``support_vectors_``, ``dual_coef_`` (``α − α*``, (1, n_SV)),
    ``intercept_``, ``n_support_``, ``fit_status_``, ``n_iter_``, ``shape_fit_``, ``coef_``
    (linear kernel); ``result_`` and ``model_``.
    """

    _parameter_constraints: ClassVar[dict] = {
        **_COMMON_CONSTRAINTS,
        "C": [Interval(numbers.Real, 0.0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        nu=0.5,
        C=1.0,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        solver="auto",
        tol=1e-6,
        max_iter=None,
        time_limit=None,
        solver_options=None,
    ):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.solver_options = solver_options

    def fit(self, X, y, sample_weight=None):
        """Solve ν-SVR on ``(X, y)`` (real targets)."""
        self._validate_params()
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=np.float64, order="C", y_numeric=True
        )
        weights = _weights(X, sample_weight)
        with validated_input(X):
            problem = NuSVRDual(
                X, y, C=float(self.C), nu=self.nu, sample_weight=weights, **_kernel_options(self)
            )
            self.result_ = solve(self, problem)
        self.model_ = self.result_.model
        _expansion_attributes(self, self.model_, X)
        self.fit_status_ = int(self.result_.status.value != "optimal")
        self.n_iter_ = int(self.result_.iterations)
        self.shape_fit_ = X.shape
        return self

    def predict(self, X):
        """``f(x) = Σ (α_i − α*_i) K(x_i, x) + b``."""
        X = self._validated(X)
        return self.model_.decision_function(X)


class OneClassSVM(_ExpansionMixin, OutlierMixin, BaseEstimator):
    """The one-class SVM (scikit-learn's ``OneClassSVM``) trained by any svmbench solver that
    accepts :class:`~svmbench.problems.OneClassDual`, certified by it.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of training outliers, lower bound on that of support
        vectors.
    kernel, gamma, degree, coef0, solver, tol, max_iter, time_limit, solver_options
        As :class:`NuSVMClassifier`.

    Attributes
    ----------
    OneClassSVM's: ``support_``, ``support_vectors_``, ``dual_coef_`` (α), ``intercept_``
    (−ρ), ``offset_`` (ρ), ``n_support_``, ``fit_status_``, ``n_iter_``, ``shape_fit_``,
    ``coef_`` (linear kernel); ``result_`` and ``model_``.
    """

    _parameter_constraints: ClassVar[dict] = dict(_COMMON_CONSTRAINTS)

    def __init__(
        self,
        *,
        nu=0.5,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        solver="auto",
        tol=1e-6,
        max_iter=None,
        time_limit=None,
        solver_options=None,
    ):
        self.nu = nu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.solver_options = solver_options

    def fit(self, X, y=None, sample_weight=None):
        """Solve the one-class SVM on ``X`` (``y`` is ignored)."""
        self._validate_params()
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C")
        weights = _weights(X, sample_weight)
        with validated_input(X):
            problem = OneClassDual(X, nu=self.nu, sample_weight=weights, **_kernel_options(self))
            self.result_ = solve(self, problem)
        self.model_ = self.result_.model
        _expansion_attributes(self, self.model_, X)
        self.offset_ = -float(self.model_.b)
        self.fit_status_ = int(self.result_.status.value != "optimal")
        self.n_iter_ = int(self.result_.iterations)
        self.shape_fit_ = X.shape
        return self

    def decision_function(self, X):
        """``f(x) = Σ α_i K(x_i, x) − ρ``: positive for inliers."""
        X = self._validated(X)
        return self.model_.decision_function(X)

    def score_samples(self, X):
        """``Σ α_i K(x_i, x)``: the decision function plus ``offset_``."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for inliers (``f(x) ≥ 0``), −1 for outliers: scikit-learn's contract for outlier
        detectors, where LIBSVM sends ``f(x) = 0`` to −1. A support vector that alone sets ρ
        has ``f = 0`` exactly or ±1e-17, as the CPU rounds, so the tie has to go one fixed way."""
        return np.where(self.decision_function(X) >= 0.0, 1, -1)


__all__ = ["NuSVMClassifier", "NuSVMRegressor", "OneClassSVM", "choose_solver"]
