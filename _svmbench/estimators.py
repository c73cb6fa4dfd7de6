"""scikit-learn estimators over every solver: :class:`SVMClassifier`.

The estimator encodes the labels (any type) with scikit-learn's own utilities, turns
``sample_weight`` and ``class_weight`` into per-example weights (``C_i = C·sw_i·cw_i``, the
problems' C-form), builds the problem its parameters describe, solves it with any registered
solver or installed anchor, and predicts through the result's model. The whole result stays in
``result_``: status, certified gap, iterations, the three times, the trace.

Probabilities are not hand-written: wrap the estimator in scikit-learn's
``CalibratedClassifierCV(SVMClassifier(...), method="sigmoid")`` (Platt scaling on held-out folds,
as LIBSVM's ``-b 1`` does) or ``method="isotonic"``; ``loss="logistic"`` has its own
(:mod:`svmbench.logistic_fit`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, ClassVar

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight, compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
)

from svmbench import input_checks, kernel_functions, logistic_fit, solve_outcome, svc_layout
from svmbench.linear_attributes import LinearAttributesMixin
from svmbench.parameter_checks import RememberedParameterChecks
from svmbench.probability import ProbabilitiesMixin
from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal, ovo_values
from svmbench.problems.kernels import resolve_gamma
from svmbench.problems.models import OneVsOneModel
from svmbench.problems.validation import validated_input
from svmbench.solvers import registry

#: Fitted attributes that only some models have (``coef_`` and ``intercept_`` are properties of
#: the model).
_OPTIONAL_ATTRIBUTES = ("_intercept", "support_", "support_vectors_", "dual_coef_", "n_support_")

#: The problem classes that carry a linear binary fit, in the order of preference.
_LINEAR_VIEWS = (SoftMarginPrimal, SoftMarginDual, KernelDual)

#: Solvers whose solution depends on a seed (``random_state``).
_STOCHASTIC = ("pegasos", "cs_sgd", "ssvm_sgd", "perceptron", "sklearn_sgd")


class SVMClassifier(
    RememberedParameterChecks,
    ProbabilitiesMixin,
    LinearAttributesMixin,
    input_checks.PlainScoreMixin,
    ClassifierMixin,
    BaseEstimator,
):
    """Support vector classifier trained by any svmbench solver, certified by its problem.

    Parameters
    ----------
    C : float, default=1.0
        ``C_i = C · sample_weight_i · class_weight_{y_i}`` in ``½‖w‖² + Σ C_i loss(m_i)``.
        ``C=np.inf``: the hard margin (every example on the right side of its margin; an
        error naming the certificate when the data cannot be separated).
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        A callable ``kernel(A, B)`` returns the (len(A), len(B)) Gram matrix; it is computed once
        per fit on ``X`` as given (any sequence) and the problem solved as a precomputed one;
        such a fit cannot be saved (a function needs pickle).
    gamma : {"scale", "auto"} or float, default="scale"
        ``"scale"``: ``1/(d · Var X)``, every entry weighted by its example's weight, so that
        a weight of 2 is the row twice (without weights SVC's ``1/(d · X.var())``); ``"auto"``:
        ``1/d``.
    degree : int, default=3
    coef0 : float, default=0.0
    loss : {"hinge", "squared_hinge", "logistic"}, default="hinge"
        ``"logistic"``: ``log(1 + e^{−m})``, with ``predict_proba`` (:mod:`svmbench.logistic_fit`;
        the rule of :mod:`svmbench.probability`).
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
    multiclass : {"auto", "ovr", "ovo", "crammer_singer", "multinomial"}, default="auto"
        How more than two classes are handled: one-vs-rest or one-vs-one reductions over the
        binary solver, or the Crammer–Singer problem solved directly; ``"multinomial"`` (with
        ``loss="logistic"`` only, scikit-learn's name for it): the multinomial logistic loss
        over every class, two included, with softmax probabilities. ``"auto"`` follows the
        scikit-learn class the estimator replaces: one-vs-one (SVC's strategy, whose attributes
        and decision values it then reproduces) but for LinearSVC's fits, the linear kernel
        with another loss or bias than SVC's hinge and free bias: one-vs-rest there, unless
        ``decision_function_shape`` is ``"ovo"``, which asks for SVC's pairs.
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
        "C": [Interval(numbers.Real, 0.0, None, closed="right")],
        "kernel": [StrOptions({"linear", "poly", "rbf", "sigmoid", "precomputed"}), callable],
        "gamma": [
            StrOptions({"scale", "auto"}), Interval(numbers.Real, 0.0, None, closed="neither")
        ],
        "degree": [Interval(numbers.Real, 0.0, None, closed="left")],
        "coef0": [numbers.Real],
        "loss": [StrOptions({"hinge", "squared_hinge", "logistic"})],
        "bias": [StrOptions({"free", "regularized", "none"})],
        "bias_scale": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "solver": [str],
        "tol": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
        "multiclass": [StrOptions({"auto", "ovr", "ovo", "crammer_singer", "multinomial"})],
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
            ``C_i = C · sample_weight_i``; as SVC, an example of weight ≤ 0 is left out (its
            ``α_i = 0``).

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
        X, y = input_checks.fit_input(self, X, y)  # validate_data's, short for plain arrays
        if callable(self.kernel):
            del self.n_features_in_  # the callable's inputs need not have features
        elif self.kernel != "precomputed":
            kernel_functions.check_products_finite(X)
        if y.dtype.kind not in "iub":  # integer and bool labels are classes already
            check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                "the data must contain samples of at least 2 classes; got one class: "
                f"{classes[0]!r}"
            )
        weights = self._weights(X, y, sample_weight)
        if weights is not None and not np.any(weights > 0):
            raise ValueError(
                "Invalid input - all samples have zero or negative weights (sample_weight × "
                "class_weight): nothing to fit"
            )
        if weights is not None and np.unique(y_index[weights > 0]).size < 2:
            raise ValueError(
                "Invalid input - all samples with positive weights belong to the same class "
                f"({classes[y_index[weights > 0][0]]!r}): sample_weight × class_weight leaves "
                "one class"
            )
        previous = getattr(self, "result_", None) if self.warm_start else None
        if previous is not None and not np.array_equal(getattr(self, "classes_", []), classes):
            previous = None
        self.classes_ = classes
        if self.multiclass == "multinomial" and self.loss != "logistic":
            raise ValueError(
                "multiclass='multinomial' is the multinomial logistic loss: it needs "
                f"loss='logistic', got loss={self.loss!r}"
            )
        if self.loss == "logistic":
            return logistic_fit.fit(self, X, y, y_index, weights, previous)
        with validated_input(X):  # validate_data's X: the problems take it without a rescan
            problem, name, options = self._problem_and_solver(X, y_index, weights)
            solver = registry.get(name, **options)
            warm = previous if previous is not None and solver.warm_start_uses else None
            if warm is not None and warm.alpha is not None and warm.alpha.shape[0] != X.shape[0]:
                warm = None
            result = self._solve(solver, problem, warm)
            if math.isinf(self.C) and self.kernel != "linear":
                result, problem = solve_outcome.kernel_hard_margin(
                    lambda p: self._solve(solver, p, None), problem, result, self.kernel
                )
        self._set_fitted(result, problem, X, y_index)
        self.shape_fit_ = X.shape if not callable(self.kernel) else (X.shape[0], 0)
        self.class_weight_ = (
            np.ones(classes.size)  # SVC's class_weight_ without weights, not computed
            if self.class_weight is None
            else compute_class_weight(self.class_weight, classes=classes, y=y)
        )
        return self

    def _weights(self, X, y, sample_weight) -> np.ndarray | None:
        """Per-example weights ``sample_weight_i · class_weight_{y_i}`` (None: all ones), a
        negative one set to 0 (SVC leaves such examples out)."""
        if sample_weight is None and self.class_weight is None:
            return None
        given = np.asarray(sample_weight if sample_weight is not None else 1.0, dtype=object)
        if (
            given.ndim == 1
            and given.size
            and all(isinstance(v, numbers.Real) and v <= 0 for v in given)
        ):  # before scikit-learn's check, which has its own words for all zeros
            raise ValueError(
                "Invalid input - all samples have zero or negative weights (sample_weight): "
                "nothing to fit"
            )
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if self.class_weight is not None:
            sw = sw * compute_sample_weight(self.class_weight, y)
        return np.maximum(sw, 0.0)

    def _kernel_name(self) -> str:
        """The kernel the problems see: a callable's Gram matrix is a precomputed kernel."""
        return "precomputed" if callable(self.kernel) else self.kernel

    def _svc_like(self) -> bool:
        """Whether the fit is one SVC makes, whose attributes then have SVC's types (``n_iter_``
        an array, ``coef_`` read-only and sparse after a sparse fit): any kernel but the linear
        one, one-vs-one, or SVC's binary problem (hinge loss, free bias); the other linear fits
        are LinearSVC's (``n_iter_`` an int, ``coef_`` and ``intercept_`` assignable)."""
        if self.kernel != "linear":
            return True
        if self.classes_.size > 2:
            return self._strategy() == "ovo"
        return self.bias == "free" and self.loss == "hinge"

    def _gamma(self, X, weights=None) -> float:
        """γ by the problems' one rule (:func:`~svmbench.problems.kernels.resolve_gamma`)."""
        return resolve_gamma(self.gamma, X, weights)

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
        for option in ("max_iter", "time_limit"):
            value = getattr(self, option)
            if value is None:
                continue
            if not registry.accepts_option(cls, option):
                raise ValueError(
                    f"{option}={value!r}: solver {name!r} takes no {option} (its library has "
                    f"its own stopping rule); leave {option}=None or choose another solver"
                )
            options.setdefault(option, value)
        if registry.accepts_option(cls, "seed") and "seed" not in options:
            options["seed"] = int(check_random_state(self.random_state).randint(2**31 - 1))
        return options

    def _binary_problem(self, X, y_pm, weights, name: str):
        """The binary problem the parameters describe, in the first view the solver's table
        names (:data:`_LINEAR_VIEWS`, in order) and accepts."""
        from svmbench.problems import HardMarginPrimal

        if math.isinf(self.C) and self.kernel == "linear":
            if weights is not None and np.any(weights <= 0):
                raise ValueError(
                    "C=inf (the hard margin) takes positive sample weights only: an example of "
                    "weight 0 cannot be left out of a hard margin; drop it from X"
                )
            problem = HardMarginPrimal(X, y_pm, bias=self.bias, bias_scale=float(self.bias_scale))
            why = registry.solver_class(name).unsupported_reason(problem)
            if why is not None:
                raise ValueError(f"solver {name!r} cannot fit C=inf (the hard margin): {why}")
            return problem
        common = dict(
            C=solve_outcome.HARD_MARGIN_C if math.isinf(self.C) else float(self.C), loss=self.loss,
            bias=self.bias, bias_scale=float(self.bias_scale),
            sample_weight=weights,
        )  # fmt: skip
        cls = registry.solver_class(name)
        if self.kernel != "linear":
            problem = KernelDual(
                X, y_pm, kernel=self._kernel_name(), gamma=self._gamma(X, weights),
                degree=self.degree, coef0=float(self.coef0), **common,
            )  # fmt: skip
            why = cls.unsupported_reason(problem)
        else:
            reasons, table = {}, tuple(cls.supported)
            for view in [v for v in _LINEAR_VIEWS if issubclass(v, table)] or _LINEAR_VIEWS:
                extra = {"kernel": "linear"} if view is KernelDual else {}
                problem = view(X, y_pm, **common, **extra)
                why = cls.unsupported_reason(problem)
                if why is None:
                    break
                reasons[problem.kind] = why
            else:  # the reason of every view: the first (a parameter) is the one to change
                why = "; ".join(f"{kind}: {reason}" for kind, reason in reasons.items())
        if why is not None:
            raise ValueError(
                f"solver {name!r} cannot fit this classifier ({problem.describe()}): {why}"
            )
        return problem

    def _strategy(self) -> str:
        """``multiclass`` with ``"auto"`` resolved: one-vs-rest for LinearSVC's fits (the linear
        kernel with another loss or bias than SVC's hinge and free bias) unless SVC's pair
        values are asked for, one-vs-one otherwise (as SVC)."""
        if self.multiclass != "auto":
            return self.multiclass
        linear_svc = self.kernel == "linear" and (self.loss != "hinge" or self.bias != "free")
        return "ovr" if linear_svc and self.decision_function_shape == "ovr" else "ovo"

    def _problem_and_solver(self, X, y_index, weights):
        """``(problem, solver name, solver options)`` for the encoded labels."""
        from svmbench.problems import MulticlassHinge

        k = self.classes_.size
        name = self._solver_name(k)
        if math.isinf(self.C) and k > 2:
            raise ValueError(
                "C=inf (the hard margin) is solved for two classes; for more, give a large "
                "finite C (e.g. 1e10)"
            )
        crammer_singer = self._strategy() == "crammer_singer"
        if k == 2 and not (
            crammer_singer and MulticlassHinge in registry.solver_class(name).supported
        ):
            y_pm = np.where(y_index == 1, 1.0, -1.0)
            return self._binary_problem(X, y_pm, weights, name), name, self._solver_options(name)
        mc_bias = "regularized" if self.bias == "free" else self.bias
        problem = MulticlassHinge(
            X, y_index, C=float(self.C), bias=mc_bias, bias_scale=float(self.bias_scale),
            sample_weight=weights,
        )  # fmt: skip
        if crammer_singer:  # k ≥ 2 classes, two included for a Crammer–Singer solver
            if self.kernel != "linear":
                raise ValueError(
                    f"multiclass='crammer_singer' is solved for the linear kernel only (its "
                    f"solvers keep a weight matrix W), got kernel={self.kernel!r}; use "
                    "kernel='linear', or multiclass='ovo' for this kernel"
                )
            if registry.solver_class(name).optimal_by_subproblems:
                raise ValueError(
                    f"solver {name!r} is a reduction to binary problems, not a Crammer–Singer "
                    f"solver: use multiclass={name!r}, or a Crammer–Singer solver with "
                    "multiclass='crammer_singer'"
                )
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
        # (auto has a rule for every binary problem: none built for it; the reduction checks a
        # Gram matrix's shape and symmetry once, before its first pair)
        if name != "auto":
            self._binary_problem(X, np.where(y_index == 0, 1.0, -1.0), weights, name)
        options = dict(
            binary_solver=name,
            binary_options=self._solver_options(name),
            kernel=None if self.kernel == "linear" else self._kernel_name(),
            gamma=self._gamma(X, weights),
            degree=self.degree,
            coef0=float(self.coef0),
            bias=self.bias,
            loss=self.loss,
            support_vectors=self._strategy() == "ovo",
            stacked_gap=False,  # a researcher's diagnostic (a QP), not an estimator attribute
        )
        if self.time_limit is not None:
            options["time_limit"] = self.time_limit
        return problem, self._strategy(), options

    def _solve(self, solver, problem, warm):
        """``solver.solve(problem)`` with its status said to the user (:mod:`solve_outcome`)."""
        family = "liblinear" if self.kernel == "linear" and not self._svc_like() else "libsvm"
        return solve_outcome.solve_and_report(
            solver, problem, warm, family=family, max_iter=self.max_iter,
            time_limit=self.time_limit,
        )  # fmt: skip

    def _set_fitted(self, result, problem, X, y_index) -> None:
        from svmbench.solvers.base import Status

        self.result_ = result
        self.model_ = result.model
        svc_like = self._svc_like()
        self.n_iter_ = svc_layout.iterations(result, result.model, svc_like)
        self.fit_status_ = 0 if result.status is Status.OPTIMAL else 1
        for name in _OPTIONAL_ATTRIBUTES:
            self.__dict__.pop(name, None)
        # SVC's coef_ is sparse after a sparse fit, LinearSVC's dense
        self._coef_sparse = bool(svc_like and sparse.issparse(X))
        layout = svc_layout.support_layout(
            result.model, result, problem, X, y_index, self.classes_.size,
            precomputed=self._kernel_name() == "precomputed",
        )  # fmt: skip
        if "intercept_" in layout:
            self._intercept = layout.pop("intercept_")
        if callable(self.kernel) and "support_" in layout:
            layout["support_vectors_"] = _safe_indexing(self._fit_X, layout["support_"])
        for name, value in layout.items():
            setattr(self, name, value)

    # ---- predicting ------------------------------------------------------------------------------
    def _validated(self, X):
        if callable(self.kernel):
            check_is_fitted(self)
            X = kernel_functions.predict_kernel(self.kernel, X, self._fit_X)
        return input_checks.predict_input(self, X)

    def decision_function(self, X):
        """Binary: ``f(x)`` of shape (n,), positive for ``classes_[1]``. Multiclass: (n, k) per
        class scores; for one-vs-one, SVC's values in ``decision_function_shape`` (pairs
        (n, k(k−1)/2) for ``"ovo"``; votes plus scaled confidences (n, k) for ``"ovr"``)."""
        X = self._validated(X)
        model, k = self.model_, self.classes_.size
        if isinstance(model, OneVsOneModel) and k > 2:
            values = ovo_values.pair_values(model, X)
            if self.decision_function_shape == "ovo":
                return values
            return ovo_values.ovr_from_pairs(values, k)
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
        input_checks.check_fitted(self)
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
