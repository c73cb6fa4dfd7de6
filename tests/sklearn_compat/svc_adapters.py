"""SVC, LinearSVC, SVR, LinearSVR, NuSVC, NuSVR and OneClassSVM that only map scikit-learn's
arguments onto svmbench's estimators (``SVMClassifier``, ``SVMRegressor``,
``LinearSVMRegressor``, ``NuSVMClassifier``, ``NuSVMRegressor``, ``OneClassSVM``).

Used by ``test_sklearn_svm_suite.py`` to run scikit-learn's own SVM tests against the estimator:
whatever they find is the estimator's, not the adapter's. Arguments without a counterpart
(``probability``, ``cache_size``, ``shrinking``, ``verbose``, LinearSVC's ``dual``) are kept as
given and ignored; SVC is always one-vs-one.
"""

from __future__ import annotations

from sklearn.utils._param_validation import validate_parameter_constraints

import svmbench
from svmbench import (
    LinearSVMRegressor,
    NuSVMClassifier,
    NuSVMRegressor,
    SVMClassifier,
    SVMRegressor,
)


class _Adapter(SVMClassifier):
    # SVMClassifier-only parameters read outside fit (tags): their defaults
    solver, multiclass, time_limit, warm_start, solver_options = "auto", "auto", None, False, None

    def _mapped(self) -> dict:
        raise NotImplementedError

    def _validate_params(self):
        validate_parameter_constraints(
            SVMClassifier._parameter_constraints, self._mapped(), caller_name=type(self).__name__
        )

    def fit(self, X, y, sample_weight=None):
        own = self.get_params(deep=False)
        self.__dict__.update(self._mapped())  # what SVMClassifier.fit reads
        try:
            return super().fit(X, y, sample_weight)
        finally:
            self.__dict__.update(own)  # the scikit-learn parameters stay as given


class SVC(_Adapter):
    multiclass = "ovo"

    def __init__(
        self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
        probability="deprecated", tol=1e-3, cache_size=200, class_weight=None, verbose=False,
        max_iter=-1, decision_function_shape="ovr", break_ties=False, random_state=None,
    ):  # fmt: skip
        self.C, self.kernel, self.degree, self.gamma, self.coef0 = C, kernel, degree, gamma, coef0
        self.shrinking, self.probability, self.tol = shrinking, probability, tol
        self.cache_size, self.class_weight, self.verbose = cache_size, class_weight, verbose
        self.max_iter, self.decision_function_shape = max_iter, decision_function_shape
        self.break_ties, self.random_state = break_ties, random_state

    def _mapped(self) -> dict:
        return dict(
            C=self.C, kernel=self.kernel, degree=self.degree, gamma=self.gamma, coef0=self.coef0,
            tol=self.tol, class_weight=self.class_weight,
            max_iter=None if self.max_iter == -1 else self.max_iter,
            decision_function_shape=self.decision_function_shape, break_ties=self.break_ties,
            random_state=self.random_state, bias="free", loss="hinge", bias_scale=1.0,
            solver="auto", multiclass="ovo", time_limit=None, warm_start=False,
            solver_options=None,
        )  # fmt: skip


class LinearSVC(_Adapter):
    kernel = "linear"

    def __init__(
        self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
        multi_class="ovr", fit_intercept=True, intercept_scaling=1, class_weight=None, verbose=0,
        random_state=None, max_iter=1000,
    ):  # fmt: skip
        self.penalty, self.loss, self.dual, self.tol, self.C = penalty, loss, dual, tol, C
        self.multi_class, self.fit_intercept = multi_class, fit_intercept
        self.intercept_scaling, self.class_weight = intercept_scaling, class_weight
        self.verbose, self.random_state, self.max_iter = verbose, random_state, max_iter

    def _mapped(self) -> dict:
        if self.penalty != "l2":
            raise ValueError(f"penalty={self.penalty!r} is not supported by SVMClassifier")
        return dict(
            kernel="linear", gamma="scale", degree=3, coef0=0.0, loss=self.loss, C=self.C,
            tol=self.tol, bias="regularized" if self.fit_intercept else "none",
            bias_scale=self.intercept_scaling, class_weight=self.class_weight,
            multiclass=self.multi_class, max_iter=self.max_iter, random_state=self.random_state,
            solver="auto", time_limit=None, warm_start=False, solver_options=None,
            decision_function_shape="ovr", break_ties=False,
        )  # fmt: skip


def _mapping_adapter(base):
    """An adapter of ``base`` that fits with the parameters ``_mapped()`` gives (the scikit-learn
    ones stay as given)."""

    class Adapter(base):
        solver, time_limit, solver_options = "auto", None, None

        def _mapped(self) -> dict:
            raise NotImplementedError

        def _validate_params(self):
            validate_parameter_constraints(
                base._parameter_constraints, self._mapped(), caller_name=type(self).__name__
            )

        def fit(self, X, y=None, sample_weight=None):
            own = self.get_params(deep=False)
            self.__dict__.update(self._mapped())
            try:
                return super().fit(X, y, sample_weight)
            finally:
                self.__dict__.update(own)

    return Adapter


_OURS = dict(solver="auto", time_limit=None, solver_options=None)


class SVR(_mapping_adapter(SVMRegressor)):
    bias, bias_scale = "free", 1.0

    def __init__(
        self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0, epsilon=0.1,
        shrinking=True, cache_size=200, verbose=False, max_iter=-1,
    ):  # fmt: skip
        self.kernel, self.degree, self.gamma, self.coef0 = kernel, degree, gamma, coef0
        self.tol, self.C, self.epsilon, self.shrinking = tol, C, epsilon, shrinking
        self.cache_size, self.verbose, self.max_iter = cache_size, verbose, max_iter

    def _mapped(self) -> dict:
        return dict(
            kernel=self.kernel, degree=self.degree, gamma=self.gamma, coef0=self.coef0,
            tol=self.tol, C=self.C, epsilon=self.epsilon, shrinking=self.shrinking,
            cache_size=self.cache_size, max_iter=self.max_iter, bias="free", bias_scale=1.0,
            **_OURS,
        )  # fmt: skip


class NuSVC(_mapping_adapter(NuSVMClassifier)):
    def __init__(
        self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
        probability="deprecated", tol=1e-3, cache_size=200, class_weight=None, verbose=False,
        max_iter=-1, decision_function_shape="ovr", break_ties=False, random_state=None,
    ):  # fmt: skip
        self.nu, self.kernel, self.degree, self.gamma, self.coef0 = nu, kernel, degree, gamma, coef0
        self.shrinking, self.probability, self.tol = shrinking, probability, tol
        self.cache_size, self.class_weight, self.verbose = cache_size, class_weight, verbose
        self.max_iter, self.decision_function_shape = max_iter, decision_function_shape
        self.break_ties, self.random_state = break_ties, random_state

    def _mapped(self) -> dict:
        return dict(
            nu=self.nu, kernel=self.kernel, degree=self.degree, gamma=self.gamma,
            coef0=self.coef0, tol=self.tol, class_weight=self.class_weight,
            max_iter=None if self.max_iter == -1 else self.max_iter,
            decision_function_shape=self.decision_function_shape, break_ties=self.break_ties,
            **_OURS,
        )  # fmt: skip


class NuSVR(_mapping_adapter(NuSVMRegressor)):
    def __init__(
        self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
        tol=1e-3, cache_size=200, verbose=False, max_iter=-1,
    ):  # fmt: skip
        self.nu, self.C, self.kernel, self.degree, self.gamma = nu, C, kernel, degree, gamma
        self.coef0, self.shrinking, self.tol, self.cache_size = coef0, shrinking, tol, cache_size
        self.verbose, self.max_iter = verbose, max_iter

    def _mapped(self) -> dict:
        return dict(
            nu=self.nu, C=self.C, kernel=self.kernel, degree=self.degree, gamma=self.gamma,
            coef0=self.coef0, tol=self.tol,
            max_iter=None if self.max_iter == -1 else self.max_iter, **_OURS,
        )  # fmt: skip


class OneClassSVM(_mapping_adapter(svmbench.OneClassSVM)):
    def __init__(
        self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
        shrinking=True, cache_size=200, verbose=False, max_iter=-1,
    ):  # fmt: skip
        self.kernel, self.degree, self.gamma, self.coef0 = kernel, degree, gamma, coef0
        self.tol, self.nu, self.shrinking, self.cache_size = tol, nu, shrinking, cache_size
        self.verbose, self.max_iter = verbose, max_iter

    def _mapped(self) -> dict:
        return dict(
            nu=self.nu, kernel=self.kernel, degree=self.degree, gamma=self.gamma,
            coef0=self.coef0, tol=self.tol,
            max_iter=None if self.max_iter == -1 else self.max_iter, **_OURS,
        )  # fmt: skip


class LinearSVR(_mapping_adapter(LinearSVMRegressor)):
    def __init__(
        self, *, epsilon=0.0, tol=1e-4, C=1.0, loss="epsilon_insensitive", fit_intercept=True,
        intercept_scaling=1.0, dual="auto", verbose=0, random_state=None, max_iter=1000,
    ):  # fmt: skip
        self.epsilon, self.tol, self.C, self.loss = epsilon, tol, C, loss
        self.fit_intercept, self.intercept_scaling, self.dual = (
            fit_intercept,
            intercept_scaling,
            dual,
        )
        self.verbose, self.random_state, self.max_iter = verbose, random_state, max_iter

    def _mapped(self) -> dict:
        return dict(
            epsilon=self.epsilon, tol=self.tol, C=self.C, loss=self.loss,
            fit_intercept=self.fit_intercept, intercept_scaling=self.intercept_scaling,
            dual=self.dual, max_iter=self.max_iter, **_OURS,
        )  # fmt: skip
