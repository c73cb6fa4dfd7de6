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
from sklearn.utils.class_weight import compute_class_weight, compute_sample_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmbench import svc_layout
from svmbench.problems.models import OneVsOneModel
from svmbench.solvers import registry


class SVMConvergenceWarning(SklearnConvergenceWarning):
    """The solve ended on ``max_iter`` or ``time_limit`` before its stopping rule held
    (``result_.status`` says which; ``result_.rel_gap`` how far it got)."""


class SVMNumericalWarning(SVMConvergenceWarning):
    """The solve ended in ``numerical_error``: the model is the best certified point the solver
    reached (``result_.rel_gap`` says how good; ``result_.message`` why it stopped)."""


#: Fitted attributes that only some models have (``coef_`` is a property of the model).
_OPTIONAL_ATTRIBUTES = ("intercept_", "support_", "support_vectors_", "dual_coef_", "n_support_")

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
        The certified relative duality gap asked of the solver, whichever it is (a reference or
        an anchor runs its library at its own tolerance, ``solver_options={"eps": ...}``, and is
        judged at ``tol``); the exact finish then makes the point exact where it can.
    max_iter, time_limit : int, float or None, default=None
        The solver's limits; reaching one emits :class:`SVMConvergenceWarning`.
    multiclass : {"auto", "ovr", "ovo", "crammer_singer"}, default="auto"
        How more than two classes are handled: one-vs-rest or one-vs-one reductions over the
        binary solver, or the Crammer–Singer problem solved directly. ``"auto"`` follows the
        scikit-learn class the estimator replaces: one-vs-one for every kernel but the linear
        one (SVC's strategy, whose fitted attributes and decision values it then reproduces),
        one-vs-rest for ``kernel="linear"`` (LinearSVC's), unless ``decision_function_shape``
        is ``"ovo"``, which asks for SVC's pairs.
    class_weight : dict, "balanced" or None, default=None
    random_state : int, RandomState or None, default=None
        Seeds the solver where it takes one (the coordinate order of dcd, Pegasos's samples).
    warm_start : bool, default=False
        Refit from the previous solution (same data shape and classes), where the solver can.
    solver_options : dict or None, default=None
        More options of the solver (``svmbench list`` and the solver's docstring).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        As SVC's, for one-vs-one fits of k ≥ 3 classes: ``"ovo"`` returns the pairs' decision
        values (n, k(k−1)/2), pair order (0, 1), (0, 2), …, (1, 2), …, each positive for the
        first class of its pair; ``"ovr"`` SVC's transform of them, (n, k): the votes plus the
        summed confidences scaled into (−1/3, 1/3). One-vs-rest and Crammer–Singer scores are
        per class already (``"ovo"`` is refused for them); two classes give (n,) whatever the
        shape.
    break_ties : bool, default=False
        As SVC's: for one-vs-one with ``decision_function_shape="ovr"``, predict the argmax of
        the decision function (equal votes broken by the confidences); otherwise the majority
        vote, ties to the first class (LIBSVM's rule).

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_
    result_ : SolveResult
        The solve: status, certified ``rel_gap``, iterations, times, trace, model.
    model_ : Model
        ``result_.model``: what predicts (saved with ``svmbench.save_model``).
    coef_ : ndarray or sparse matrix
        ``kernel="linear"`` only, read-only (a property, as SVC's): ``w`` of shape (1, d) for
        two classes, (k, d) for one-vs-rest and Crammer–Singer, (k(k−1)/2, d) for one-vs-one;
        a binary model solved in the kernel dual gives SVC's ``dual_coef_ @ support_vectors_``
        (sparse after a sparse fit, as SVC's). ``sparsify()``/``densify()`` (LinearSVC's) switch
        its format; the model keeps its dense ``w`` and predicts the same.
    intercept_ : ndarray
        ``b``: (1,) for two classes, (k,) for one-vs-rest and Crammer–Singer, (k(k−1)/2,) for
        one-vs-one in SVC's pair order.
    support_, support_vectors_, dual_coef_, n_support_
        Binary kernel models (and linear ones solved in the dual) and one-vs-one fits over
        kernel models, in SVC's (LIBSVM's) layout: the support vectors grouped by class in
        ``classes_`` order, by index within a class, counted per class by their labels;
        ``dual_coef_`` ``α_i y_i`` of shape (1, n_SV), or (k−1, n_SV) with the coefficients of
        the pair (i, j) in rows j−1 (class-i vectors) and i (class-j vectors)
        (:mod:`svmbench.svc_layout`); CSR after a sparse fit, as SVC's.
    n_iter_ : ndarray or int
        The solver's iterations (in its unit): as SVC, one per binary problem ((1,), (k,) or
        (k(k−1)/2,)) for kernels other than linear and for one-vs-one; as LinearSVC, the
        largest over the binary problems (an int) for the linear kernel's other fits.
    fit_status_ : int
        0 if ``result_.status`` is ``optimal``, else 1 (SVC's).
    shape_fit_ : tuple
        The shape of the training ``X``.
    class_weight_ : ndarray of shape (k,)
        The weight of each class, computed from ``class_weight`` as SVC does (ones for None).

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
        "multiclass": [StrOptions({"auto", "ovr", "ovo", "crammer_singer"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "solver_options": [dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
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
        multiclass="auto",
        class_weight=None,
        random_state=None,
        warm_start=False,
        solver_options=None,
        decision_function_shape="ovr",
        break_ties=False,
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
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties

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
        self._set_fitted(result, problem, X, y_index)
        self.shape_fit_ = X.shape
        self.class_weight_ = compute_class_weight(self.class_weight, classes=classes, y=y)
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

    def _strategy(self) -> str:
        """``multiclass`` with ``"auto"`` resolved: one-vs-rest for the linear kernel (as
        LinearSVC) unless SVC's pair values are asked for, one-vs-one otherwise (as SVC)."""
        if self.multiclass != "auto":
            return self.multiclass
        return "ovr" if self.kernel == "linear" and self.decision_function_shape == "ovr" else "ovo"

    def _problem_and_solver(self, X, y_index, weights):
        """``(problem, solver name, solver options)`` for the encoded labels."""
        from svmbench.problems import MulticlassHinge

        k = self.classes_.size
        name = self._solver_name(k)
        crammer_singer = self._strategy() == "crammer_singer"
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
        return problem, self._strategy(), options

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

    def _set_fitted(self, result, problem, X, y_index) -> None:
        from svmbench.solvers.base import Status

        self.result_ = result
        self.model_ = result.model
        self.n_iter_ = svc_layout.iterations(result, result.model, self.kernel)
        self.fit_status_ = 0 if result.status is Status.OPTIMAL else 1
        for name in (*_OPTIONAL_ATTRIBUTES, "_coef_sparse"):
            self.__dict__.pop(name, None)
        layout = svc_layout.support_layout(
            result.model, result, problem, X, y_index, self.classes_.size,
            precomputed=self.kernel == "precomputed",
        )  # fmt: skip
        for name, value in layout.items():
            setattr(self, name, value)

    def _has_coef(self) -> bool:
        return self.kernel == "linear"

    @property
    def coef_(self):
        """The linear coefficients (``kernel="linear"`` only; read-only, as SVC's): see the
        class's Attributes."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self)
        coef = svc_layout.linear_coef(self)
        if coef is None:
            raise AttributeError(f"coef_: the {type(self.model_).__name__} holds no linear w")
        want = getattr(self, "_coef_sparse", None)
        if want is True and not sparse.issparse(coef):
            coef = sparse.csr_matrix(coef)
        elif want is False and sparse.issparse(coef):
            coef = coef.toarray()
        (coef.data if sparse.issparse(coef) else coef).flags.writeable = False
        return coef

    @available_if(_has_coef)
    def sparsify(self):
        """``coef_`` as a scipy sparse (CSR) matrix from now on, as LinearSVC's ``sparsify``; the
        model (``model_``) keeps its dense ``w``, so predictions are unchanged and no memory is
        saved. Returns self."""
        check_is_fitted(self)
        self._coef_sparse = True
        return self

    @available_if(_has_coef)
    def densify(self):
        """``coef_`` as a dense ndarray from now on (LinearSVC's ``densify``). Returns self."""
        check_is_fitted(self)
        self._coef_sparse = False
        return self

    # ---- predicting ------------------------------------------------------------------------------
    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)

    def decision_function(self, X):
        """Binary: ``f(x)`` of shape (n,), positive for ``classes_[1]``. Multiclass: (n, k) per
        class scores; for one-vs-one, SVC's values in ``decision_function_shape`` (pairs
        (n, k(k−1)/2) for ``"ovo"``; votes plus scaled confidences (n, k) for ``"ovr"``)."""
        X = self._validated(X)
        model, k = self.model_, self.classes_.size
        if isinstance(model, OneVsOneModel) and k > 2:
            values = svc_layout.pair_values(model, X)
            if self.decision_function_shape == "ovo":
                return values
            return svc_layout.ovr_from_pairs(values, k)
        scores = model.decision_function(X)
        if k == 2 and scores.ndim == 2:  # two-class Crammer–Singer
            return scores[:, 1] - scores[:, 0]
        if self.decision_function_shape == "ovo" and k > 2:
            raise ValueError(
                "decision_function_shape='ovo' needs a one-vs-one fit (multiclass='ovo'); this "
                f"classifier holds a {type(model).__name__}, whose scores are per class"
            )
        return scores

    def predict(self, X):
        """The predicted class labels (of the type of the training labels). One-vs-one: the
        majority vote, ties to the first class (LIBSVM's rule), or with ``break_ties`` the
        argmax of the ``"ovr"`` decision function, as SVC."""
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        check_is_fitted(self)
        if isinstance(self.model_, OneVsOneModel) and not self.break_ties:
            return self.classes_[self.model_.predict(self._validated(X))]
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
