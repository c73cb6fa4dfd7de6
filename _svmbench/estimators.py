"""scikit-learn estimators over every solver: :class:`SVMClassifier`.

The estimator encodes the labels (any type) with scikit-learn's own utilities, turns
``sample_weight`` and ``class_weight`` into per-example weights (``C_i = C·sw_i·cw_i``, the
problems' C-form), builds the problem its parameters describe, solves it with any registered
solver or installed anchor, and predicts through the result's model. The whole result stays in
``result_``: status, certified gap, iterations, the three times, the trace.

Probabilities are not hand-written: wrap the estimator in scikit-learn's
``CalibratedClassifierCV(SVMClassifier(...), method="sigmoid")`` (Platt scaling on held-out folds,
as LIBSVM's ``-b 1`` does) or ``method="isotonic"``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, ClassVar

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmbench.solvers import registry


class SVMConvergenceWarning(SklearnConvergenceWarning):
    """The solve ended on ``max_iter`` or ``time_limit`` before its stopping rule held
    (``result_.status`` says which; ``result_.rel_gap`` how far it got)."""


class SVMNumericalWarning(SVMConvergenceWarning):
    """The solve ended in ``numerical_error``: the model is the best certified point the solver
    reached (``result_.rel_gap`` says how good; ``result_.message`` why it stopped)."""


#: Fitted attributes that only some models have.
_OPTIONAL_ATTRIBUTES = (
    "coef_", "intercept_", "support_", "support_vectors_", "dual_coef_", "n_support_",
)  # fmt: skip

#: Solvers whose solution depends on a seed (``random_state``).
_STOCHASTIC = ("pegasos", "cs_sgd", "ssvm_sgd", "perceptron", "sklearn_sgd")


def _certified_somewhere(result) -> bool:
    """Whether ``result`` holds a certified point: its own certificate, or for a reduction
    (whose record speaks of its binary subproblems) a finite gap on every subproblem."""
    gaps = result.info.get("binary_rel_gaps")
    if gaps is not None:
        return len(gaps) > 0 and bool(np.all(np.isfinite(gaps)))
    return bool(result.certified and np.isfinite(result.rel_gap))


class SVMClassifier(ClassifierMixin, BaseEstimator):
    """Support vector classifier trained by any svmbench solver, certified by its problem.

    Parameters
    ----------
    C : float, default=1.0
        ``C_i = C · sample_weight_i · class_weight_{y_i}`` in ``½‖w‖² + Σ C_i loss(m_i)``.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
        ``"scale"``: ``1/(d · X.var())`` as SVC; ``"auto"``: ``1/d``.
    degree : int, default=3
    coef0 : float, default=0.0
    loss : {"hinge", "squared_hinge"}, default="hinge"
    bias : {"free", "regularized", "none"}, default="free"
        ``"free"``: LIBSVM's unregularized b; ``"regularized"``: LIBLINEAR's ``-B`` (a constant
        feature ``bias_scale``, scikit-learn's ``intercept_scaling``); ``"none"``: b = 0.
    bias_scale : float, default=1.0
    solver : str, default="auto"
        Any registered solver (``svmbench list``) or installed anchor (``libsvm``,
        ``liblinear``, ...); ``"auto"``: the registry's ``auto``, which picks per problem the
        method this project's benchmarks show to be fastest to ``tol`` (its choice and why are in
        ``result_.info["auto"]``).
    tol : float, default=1e-6
        The solver's tolerance (the certified relative duality gap, for the exact methods).
    max_iter, time_limit : int, float or None, default=None
        The solver's limits; reaching one emits :class:`SVMConvergenceWarning`.
    multiclass : {"ovr", "ovo", "crammer_singer"}, default="ovr"
        How more than two classes are handled: one-vs-rest or one-vs-one reductions over the
        binary solver, or the Crammer–Singer problem solved directly.
    class_weight : dict, "balanced" or None, default=None
    random_state : int, RandomState or None, default=None
        Seeds the solver where it takes one (the coordinate order of dcd, Pegasos's samples).
    warm_start : bool, default=False
        Refit from the previous solution (same data shape and classes), where the solver can.
    solver_options : dict or None, default=None
        More options of the solver (``svmbench list`` and the solver's docstring).

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_
    result_ : SolveResult
        The solve: status, certified ``rel_gap``, iterations, times, trace, model.
    model_ : Model
        ``result_.model``: what predicts (saved with ``svmbench.save_model``).
    coef_, intercept_
        Linear models only: shape (1, d) and (1,) for two classes, (k, d) and (k,) for
        one-vs-rest and Crammer–Singer.
    support_, support_vectors_, dual_coef_, n_support_
        Binary kernel models (and linear ones solved in the dual): indices of the support
        vectors, the vectors, ``α_i y_i`` of shape (1, n_SV), counts per class; as SVC's,
        grouped by class in ``classes_`` order and counted by the labels.
    n_iter_ : int
        ``result_.iterations``, in the solver's unit.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> pipe = make_pipeline(StandardScaler(), SVMClassifier(kernel="rbf"))
    >>> grid = GridSearchCV(pipe, {"svmclassifier__C": [0.1, 1, 10]}, cv=3).fit(X, y)
    >>> grid.best_estimator_[-1].result_.certified
    True

    Probabilities: ``CalibratedClassifierCV(SVMClassifier(...)).fit(X, y).predict_proba(X)``.
    """

    _parameter_constraints: ClassVar[dict] = {
        "C": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "kernel": [StrOptions({"linear", "poly", "rbf", "sigmoid", "precomputed"})],
        "gamma": [
            StrOptions({"scale", "auto"}), Interval(numbers.Real, 0.0, None, closed="neither")
        ],
        "degree": [Interval(numbers.Real, 0.0, None, closed="left")],
        "coef0": [numbers.Real],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "bias": [StrOptions({"free", "regularized", "none"})],
        "bias_scale": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "solver": [str],
        "tol": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
        "multiclass": [StrOptions({"ovr", "ovo", "crammer_singer"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "solver_options": [dict, None],
    }  # fmt: skip

    def __init__(
        self,
        *,
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
        multiclass="ovr",
        class_weight=None,
        random_state=None,
        warm_start=False,
        solver_options=None,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.loss = loss
        self.bias = bias
        self.bias_scale = bias_scale
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.multiclass = multiclass
        self.class_weight = class_weight
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver_options = solver_options

    # ---- fitting ---------------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Solve the SVM problem of ``(X, y)`` with ``solver``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            For ``kernel="precomputed"``, the (n_samples, n_samples) Gram matrix.
        y : array-like of shape (n_samples,)
            Labels of any type (two or more classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: ``C_i = C · sample_weight_i``.

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                "the data must contain samples of at least 2 classes; got one class: "
                f"{classes[0]!r}"
            )
        weights = self._weights(X, y, sample_weight)
        if weights is not None and np.unique(y_index[weights > 0]).size < 2:
            raise ValueError(
                "the samples of positive weight must contain at least 2 classes; sample_weight "
                "leaves one class"
            )
        previous = getattr(self, "result_", None) if self.warm_start else None
        if previous is not None and not np.array_equal(getattr(self, "classes_", []), classes):
            previous = None
        self.classes_ = classes
        problem, name, options = self._problem_and_solver(X, y_index, weights)
        solver = registry.get(name, **options)
        warm = previous if previous is not None and solver.warm_start_uses else None
        if warm is not None and warm.alpha is not None and warm.alpha.shape[0] != X.shape[0]:
            warm = None
        result = self._solve(solver, problem, warm)
        self._set_fitted(result, problem)
        return self

    def _weights(self, X, y, sample_weight) -> np.ndarray | None:
        """Per-example weights ``sample_weight_i · class_weight_{y_i}`` (None: all ones)."""
        if sample_weight is None and self.class_weight is None:
            return None
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if self.class_weight is not None:
            sw = sw * compute_sample_weight(self.class_weight, y)
        return sw

    def _gamma(self, X, weights=None) -> float:
        """``gamma="scale"``: ``1/(d · Var X)``, the variance of every entry weighted by its
        example's weight, so that a weight of 2 is the same as the row twice (scikit-learn's SVC
        uses the unweighted variance, and so fails that equivalence)."""
        if not isinstance(self.gamma, str):
            return float(self.gamma)
        d = X.shape[1]
        if self.gamma == "auto":
            return 1.0 / d
        w = np.ones(X.shape[0]) if weights is None else weights
        total = float(w.sum()) * d
        if total <= 0:
            return 1.0
        if sparse.issparse(X):
            row_sum = np.asarray(X.sum(axis=1)).ravel()
            row_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        else:
            row_sum, row_sq = X.sum(axis=1), np.einsum("ij,ij->i", X, X)
        mean = float(w @ row_sum) / total
        var = float(w @ row_sq) / total - mean * mean
        return 1.0 / (d * var) if var > 0 else 1.0

    def _solver_name(self, n_classes: int) -> str:
        try:
            registry.solver_class(self.solver)
        except ValueError as exc:
            raise ValueError(f"solver: {exc}") from None
        return self.solver

    def _solver_options(self, name: str) -> dict[str, Any]:
        cls = registry.solver_class(name)
        options = dict(self.solver_options or {})
        options.setdefault("tol", self.tol)
        if self.max_iter is not None:
            options.setdefault("max_iter", self.max_iter)
        if self.time_limit is not None:
            options.setdefault("time_limit", self.time_limit)
        if registry.accepts_option(cls, "seed") and "seed" not in options:
            options["seed"] = int(check_random_state(self.random_state).randint(2**31 - 1))
        return options

    def _binary_problem(self, X, y_pm, weights, name: str):
        """The binary problem the parameters describe, in a view the solver accepts."""
        from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal

        common = dict(
            C=float(self.C), loss=self.loss, bias=self.bias, bias_scale=float(self.bias_scale),
            sample_weight=weights,
        )  # fmt: skip
        cls = registry.solver_class(name)
        if self.kernel != "linear":
            problem = KernelDual(
                X, y_pm, kernel=self.kernel, gamma=self._gamma(X, weights), degree=self.degree,
                coef0=float(self.coef0), **common,
            )  # fmt: skip
            why = cls.unsupported_reason(problem)
        else:
            why = None
            for view in (SoftMarginPrimal, SoftMarginDual, KernelDual):
                extra = {"kernel": "linear"} if view is KernelDual else {}
                problem = view(X, y_pm, **common, **extra)
                why = cls.unsupported_reason(problem)
                if why is None:
                    break
        if why is not None:
            raise ValueError(
                f"solver {name!r} cannot fit this classifier ({problem.describe()}): {why}"
            )
        return problem

    def _problem_and_solver(self, X, y_index, weights):
        """``(problem, solver name, solver options)`` for the encoded labels."""
        from svmbench.problems import MulticlassHinge

        k = self.classes_.size
        name = self._solver_name(k)
        crammer_singer = self.multiclass == "crammer_singer"
        if k == 2 and not (
            crammer_singer and MulticlassHinge in registry.solver_class(name).supported
        ):
            y_pm = np.where(y_index == 1, 1.0, -1.0)
            return self._binary_problem(X, y_pm, weights, name), name, self._solver_options(name)
        if self.kernel == "precomputed":
            raise ValueError("kernel='precomputed' takes two classes only")
        mc_bias = "regularized" if self.bias == "free" else self.bias
        problem = MulticlassHinge(
            X, y_index, C=float(self.C), bias=mc_bias, bias_scale=float(self.bias_scale),
            sample_weight=weights,
        )  # fmt: skip
        if crammer_singer:  # k ≥ 2 classes, two included for a Crammer–Singer solver
            if self.bias == "free":
                raise ValueError(
                    "multiclass='crammer_singer' takes bias='regularized' or 'none' (a free bias "
                    "adds k equalities that break the per-example dual)"
                )
            why = registry.solver_class(name).unsupported_reason(problem)
            if why is not None:
                raise ValueError(f"solver {name!r} cannot solve the Crammer–Singer problem: {why}")
            return problem, name, self._solver_options(name)
        # the reduction builds its own binary problems: refuse here a solver that takes none
        self._binary_problem(X, np.where(y_index == 0, 1.0, -1.0), weights, name)
        options = dict(
            binary_solver=name,
            binary_options=self._solver_options(name),
            kernel=None if self.kernel == "linear" else self.kernel,
            gamma=self._gamma(X, weights),
            degree=self.degree,
            coef0=float(self.coef0),
            bias=self.bias,
            loss=self.loss,
        )
        if self.time_limit is not None:
            options["time_limit"] = self.time_limit
        return problem, self.multiclass, options

    def _solve(self, solver, problem, warm):
        from svmbench.solvers.base import ConvergenceWarning, Status

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            result = solver.solve(problem, warm_start=warm)
        for w in caught:
            if not issubclass(w.category, ConvergenceWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if result.status in (Status.MAX_ITER, Status.TIME_LIMIT):
            warnings.warn(
                f"{result.solver} stopped at {result.status.value} ({result.iterations} "
                f"{result.iteration_unit}) with a certified relative gap of {result.rel_gap:.3g}; "
                "increase max_iter or time_limit",
                SVMConvergenceWarning,
                stacklevel=3,
            )
        if result.status is Status.NUMERICAL_ERROR:
            if not _certified_somewhere(result) or result.model is None:
                raise RuntimeError(
                    f"{result.solver} ended with a numerical error and no certified point: "
                    f"{result.message}; try solver='auto' or another solver, or scale X"
                )
            gap = max(result.info.get("binary_rel_gaps") or (result.rel_gap,))
            warnings.warn(
                f"{result.solver} ended with a numerical error ({result.message}); the model is "
                f"its best certified point, relative gap {gap:.3g} (tol {solver.tol:g})",
                SVMNumericalWarning,
                stacklevel=3,
            )
        if result.model is None:
            raise RuntimeError(
                f"{result.solver} ended with status {result.status.value} and no model: "
                f"{result.message}"
            )
        return result

    def _set_fitted(self, result, problem) -> None:
        from svmbench.problems.models import (
            CrammerSingerModel,
            KernelModel,
            LinearModel,
            OneVsRestModel,
        )

        self.result_ = result
        self.model_ = result.model
        self.n_iter_ = result.iterations
        for name in (
            "coef_",
            "intercept_",
            "support_",
            "support_vectors_",
            "dual_coef_",
            "n_support_",
        ):
            self.__dict__.pop(name, None)
        model = result.model
        if isinstance(model, LinearModel):
            self.coef_ = model.w[None, :]
            self.intercept_ = np.array([model.b])
        elif isinstance(model, CrammerSingerModel):
            self.coef_, self.intercept_ = model.W, model.b
        elif isinstance(model, OneVsRestModel) and all(
            isinstance(m, LinearModel) for m in model.models
        ):
            self.coef_ = np.vstack([m.w for m in model.models])
            self.intercept_ = np.array([m.b for m in model.models])
        if isinstance(model, KernelModel):
            support, coef = model.support, model.dual_coef
        elif result.alpha is not None and self.classes_.size == 2:
            support = np.flatnonzero(result.alpha)
            coef = result.alpha[support] * problem.y[support]
        else:
            return
        # SVC's layout: the support vectors of classes_[0] (y = −1), then those of classes_[1],
        # counted by their labels (not by the sign of α_i y_i, which rounding can flip)
        positive = problem.y[support] > 0
        order = np.argsort(positive, kind="stable")
        support, coef = support[order], coef[order]
        self.support_ = support
        self.dual_coef_ = coef[None, :]
        X = problem.X
        self.support_vectors_ = X[support] if self.kernel != "precomputed" else np.empty((0, 0))
        n_positive = int(np.count_nonzero(positive))
        self.n_support_ = np.array([support.size - n_positive, n_positive], dtype=np.int32)

    # ---- predicting ------------------------------------------------------------------------------
    def decision_function(self, X):
        """Binary: ``f(x)`` of shape (n,), positive for ``classes_[1]``; multiclass: (n, k)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)
        scores = self.model_.decision_function(X)
        if self.classes_.size == 2 and scores.ndim == 2:  # two-class Crammer–Singer
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """The predicted class labels (of the type of the training labels)."""
        f = self.decision_function(X)
        index = (f >= 0.0).astype(int) if f.ndim == 1 else np.argmax(f, axis=1)
        return self.classes_[index]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        name = self.solver
        tags.non_deterministic = name in _STOCHASTIC and self.random_state is None
        if name not in ("auto",):
            try:
                cls = registry.solver_class(name)
            except ValueError:
                return tags
            from svmbench.problems import MulticlassHinge

            takes_multiclass = MulticlassHinge in cls.supported
            if self.multiclass == "crammer_singer" and not takes_multiclass:
                tags.classifier_tags.multi_class = False
        return tags
