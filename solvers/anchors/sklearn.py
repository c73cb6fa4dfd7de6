"""The scikit-learn anchors: ``sklearn_svc`` (its LIBSVM fork), ``sklearnex_svc`` (oneDAL through
scikit-learn-intelex, a drop-in subclass of the same estimator), ``sklearn_linearsvc`` (its
LIBLINEAR fork) and ``sklearn_sgd`` (``SGDClassifier``).

They share the ``fit`` call with per-example weights and scikit-learn's ``ConvergenceWarning``
caught (it becomes status ``max_iter``); the SVC adapters map their models as the LIBSVM anchor
does (:mod:`svmbench.solvers.anchors.libsvm`).
"""

from __future__ import annotations

import importlib
import math
import warnings
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.scaling import lambda_from_C
from svmbench.problems.validation import check_bool, check_int, check_real
from svmbench.solvers.anchors.base import Anchor, Job, LibraryOutcome, as_sklearn_input
from svmbench.solvers.anchors.libsvm import (
    SVC_PROBLEMS,
    kernel_of,
    model_variables,
    with_constraints,
)
from svmbench.solvers.base import Status
from svmbench.solvers.registry import register
from svmbench.solvers.worker import OVERHEAD, Stopped, call_with_deadline, can_fork


def _no_precomputed(problem: KernelDual) -> str | None:
    if problem.kernel == "precomputed":
        return (
            "kernel='precomputed' is not accelerated by scikit-learn-intelex (it falls back to "
            "stock scikit-learn, which sklearn_svc already measures)"
        )
    return None


def _fit_catching(estimator, X, y, sample_weight) -> tuple[Any, list[str]]:
    """``estimator.fit`` with scikit-learn's ConvergenceWarnings collected (not shown)."""
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkConvergenceWarning)
        estimator.fit(X, y, sample_weight=sample_weight)
    messages = []
    for w in caught:
        if issubclass(w.category, SkConvergenceWarning):
            messages.append(str(w.message))
        else:  # anything else is shown as usual
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return estimator, messages


def _positive_sign(classes) -> float:
    """+1 when scikit-learn's positive class ``classes_[1]`` is our +1, else -1."""
    return 1.0 if float(classes[1]) == 1.0 else -1.0


class _SklearnAnchor(Anchor):
    """Shared by the scikit-learn estimators: ``fit`` with sample weights, warnings caught."""

    @staticmethod
    def _fit_job(est, X, y, sample_weight, **extra) -> Job:
        """The arguments of the timed ``fit``, ``X`` in a form it reads without copying."""
        return Job(
            args=(est, as_sklearn_input(X), y), kwargs={"sample_weight": sample_weight}, extra=extra
        )

    def _train(self, job: Job):
        est, X, y = job.args
        return _fit_catching(est, X, y, job.kwargs["sample_weight"])

    @staticmethod
    def _linear_model(est, with_intercept: bool) -> tuple[np.ndarray, float]:
        """``(w, b)`` of a fitted binary linear estimator, its positive class mapped to our +1."""
        sign = _positive_sign(est.classes_)
        w = sign * np.asarray(est.coef_, dtype=np.float64)[0]
        b = sign * float(est.intercept_[0]) if with_intercept else 0.0
        return w, b


#: The base of the scikit-learn adapters, for those of other modules (the ε-SVR anchor).
SklearnAnchor = _SklearnAnchor


@register
class SklearnSVCAnchor(_SklearnAnchor):
    """scikit-learn's ``SVC`` (its own LIBSVM fork), mapped as :class:`LibsvmAnchor`.

    ``dual_coef_`` holds ``y'_j α_j`` for the support vectors ``support_``, with ``classes_[1]``
    the positive class, and ``intercept_`` is b. Per-example weights are passed as
    ``sample_weight`` (``C_i = C·w_i``, as ours).

    Parameters
    ----------
    eps : float, default=1e-3
        ``SVC(tol=)``, LIBSVM's ``-e``.
    tol : float, default=1e-6
        The certified relative gap asked for (``optimal`` when the problem certifies the model
        at ``tol``).
    max_iter : int or None, default=None
        ``SVC(max_iter=)`` in pair updates; None is scikit-learn's -1 (no cap).
    cache_mb : float, default=200
    shrinking : bool, default=True
    time_limit : float or None, default=None
        With a limit, ``fit`` runs in a forked worker process killed at the limit (status
        ``time_limit``, the starting point α = 0 as the point so far): LIBSVM cannot be
        interrupted, and how long it runs depends on the data's conditioning (features of 1e6
        make a 50-example problem run for minutes), which no estimate made beforehand sees.
    """

    name = "sklearn_svc"
    package = "scikit-learn"
    modules = ("sklearn.svm",)
    iteration_unit = "SMO iterations (pair updates)"
    supported = SVC_PROBLEMS
    estimator_module: ClassVar[str] = "sklearn.svm"
    #: Whether ``fit`` runs in a worker process stopped at the time limit.
    in_worker: ClassVar[bool] = True

    def __init__(
        self,
        *,
        eps: float = 1e-3,
        tol: float = 1e-6,
        max_iter: int | None = None,
        cache_mb: float = 200.0,
        shrinking: bool = True,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, time_limit=time_limit)
        self.eps = check_real("eps", eps, low=0.0)
        self.max_iter = None if max_iter is None else check_int("max_iter", max_iter, low=1)
        self.cache_mb = check_real("cache_mb", cache_mb, low=0.0)
        self.shrinking = check_bool("shrinking", shrinking)

    def _estimator(self, problem):
        SVC = importlib.import_module(self.estimator_module).SVC
        kp = kernel_of(problem)
        return SVC(
            C=float(problem.C),
            kernel=kp["kernel"],
            gamma=float(kp["gamma"]),
            degree=int(kp["degree"]),
            coef0=float(kp["coef0"]),
            tol=self.eps,
            max_iter=-1 if self.max_iter is None else self.max_iter,
            cache_size=self.cache_mb,
            shrinking=self.shrinking,
            verbose=False,
        )

    def _setup(self, problem) -> Job:
        X, y, sw = problem.X, problem.y, problem.sample_weight
        keep = None
        if sw is not None and np.any(sw == 0):
            # scikit-learn's LIBSVM drops zero-weight examples and numbers support_ within the
            # rest: hand it the rest ourselves (their α is 0: the box is [0, 0]) and map back.
            keep = np.flatnonzero(sw > 0)
            X = X[np.ix_(keep, keep)] if kernel_of(problem)["kernel"] == "precomputed" else X[keep]
            y, sw = y[keep], sw[keep]
        return self._fit_job(self._estimator(problem), X, y, sw, keep=keep)

    def _train(self, job: Job):
        """``fit``; with a time limit (and ``fork``), in a worker process stopped at the limit
        (:func:`~solvers.worker.call_with_deadline`): the fitted attributes :meth:`_read` uses
        come back as arrays, or :class:`~solvers.worker.Stopped`."""
        left = job.extra["time_left"]
        if not (self.in_worker and math.isfinite(left) and can_fork()):
            return super()._train(job)

        def fit() -> dict:
            est, warned = _SklearnAnchor._train(self, job)
            coef = est.dual_coef_
            return {
                "classes_": np.asarray(est.classes_, dtype=np.float64),
                "support_": np.asarray(est.support_, dtype=np.int64),
                "dual_coef_": np.asarray(coef.toarray() if sparse.issparse(coef) else coef),
                "intercept_": np.asarray(est.intercept_, dtype=np.float64),
                "n_iter_": np.asarray(est.n_iter_, dtype=np.int64),
                "warned": list(warned),
            }

        out = call_with_deadline(fit, max(left, 0.0))
        if isinstance(out, Stopped):
            return out
        job.extra["excluded_time"] = out.pop(OVERHEAD)  # the fork is not the training call
        return SimpleNamespace(**{k: v for k, v in out.items() if k != "warned"}), out["warned"]

    def _read(self, problem, job: Job, fitted) -> LibraryOutcome:
        est, warned = fitted
        sign = _positive_sign(est.classes_)
        idx = np.asarray(est.support_, dtype=np.int64)
        if job.extra["keep"] is not None:
            idx = job.extra["keep"][idx]
        alpha = np.zeros(problem.n_samples)
        coef = est.dual_coef_  # a sparse matrix when the model was fitted on CSR input
        coef = np.asarray(coef.toarray() if sparse.issparse(coef) else coef)[0]
        alpha[idx] = sign * coef * problem.y[idx]
        b = sign * float(est.intercept_[0])
        iterations = int(np.sum(est.n_iter_))
        status = Status.MAX_ITER if warned else Status.OPTIMAL
        return LibraryOutcome(
            status,
            model_variables(problem, alpha, b),
            iterations,
            {"n_sv": int(idx.size), "warnings": warned, **self._backend(est)},
            "; ".join(warned),
        )

    def _backend(self, est) -> dict:
        return {}


@register
class SklearnexSVCAnchor(SklearnSVCAnchor):
    """oneDAL's SVC through scikit-learn-intelex (``sklearnex.svm.SVC``), mapped as
    :class:`SklearnSVCAnchor`.

    oneDAL is multi-threaded (TBB); ``n_threads`` is passed as ``n_jobs`` (1 by default, for a
    like-for-like comparison; None uses all cores) and recorded in ``info["threads"]``.
    scikit-learn-intelex silently falls back to stock scikit-learn for settings oneDAL
    does not cover; ``info["backend"]`` says which ran (``"onedal"`` or
    ``"sklearn (fallback)"``), and a fallback is stated in the message. Precomputed kernels
    (always a fallback) are refused. ``iterations`` is oneDAL's ``n_iter_`` (outer iterations
    of its working-set solver), not comparable with LIBSVM's pair updates.
    """

    name = "sklearnex_svc"
    package = "scikit-learn-intelex"
    modules = ("sklearnex.svm",)
    iteration_unit = "oneDAL outer iterations"
    supported = with_constraints(SVC_PROBLEMS, kernel_only={"kernel": _no_precomputed})
    estimator_module = "sklearnex.svm"
    in_worker = False  # oneDAL's thread pools (TBB) are not known to survive fork

    def __init__(
        self,
        *,
        eps: float = 1e-3,
        tol: float = 1e-6,
        max_iter: int | None = None,
        cache_mb: float = 200.0,
        shrinking: bool = True,
        n_threads: int | None = 1,
        time_limit: float | None = None,
    ):
        super().__init__(
            eps=eps,
            tol=tol,
            max_iter=max_iter,
            cache_mb=cache_mb,
            shrinking=shrinking,
            time_limit=time_limit,
        )
        self.n_threads = None if n_threads is None else check_int("n_threads", n_threads, low=1)

    def _estimator(self, problem):
        est = super()._estimator(problem)
        est.set_params(n_jobs=self.n_threads)
        return est

    def _backend(self, est) -> dict:
        onedal = hasattr(est, "_onedal_estimator")
        return {"backend": "onedal" if onedal else "sklearn (fallback)"}

    def _read(self, problem, job: Job, fitted) -> LibraryOutcome:
        out = super()._read(problem, job, fitted)
        if out.info.get("backend") != "onedal":
            out.message = "scikit-learn-intelex fell back to stock scikit-learn" + (
                f"; {out.message}" if out.message else ""
            )
        return out


_LINEARSVC_PROBLEMS = {
    SoftMarginPrimal: {"bias": ("regularized", "none")},
    SoftMarginDual: {"bias": ("regularized", "none")},
}
_SGD_PROBLEMS = {
    SoftMarginPrimal: {"bias": ("free", "none")},
    SoftMarginDual: {"bias": ("free", "none")},
}


@register
class SklearnLinearSVCAnchor(_SklearnAnchor):
    """scikit-learn's ``LinearSVC`` (its LIBLINEAR fork, ``dual=True``), mapped as
    :class:`LiblinearAnchor`.

    ``fit_intercept=True`` with ``intercept_scaling=s`` is LIBLINEAR's ``-B s``: the intercept is
    regularized, our ``bias="regularized"``; ``fit_intercept=False`` is ``bias="none"``.
    Per-example weights are passed as ``sample_weight``.

    Parameters
    ----------
    eps : float, default=1e-4
        ``LinearSVC(tol=)``, LIBLINEAR's ``-e`` (scikit-learn's default).
    tol : float, default=1e-6
        The certified relative gap asked for (``optimal`` when the problem certifies the model
        at ``tol``).
    max_iter : int, default=1000
        ``LinearSVC(max_iter=)``, outer iterations (scikit-learn's default).
    seed : int, default=0
        ``random_state`` (the permutations of the coordinate descent).
    """

    name = "sklearn_linearsvc"
    package = "scikit-learn"
    modules = ("sklearn.svm",)
    iteration_unit = "outer iterations (epochs)"
    supported = _LINEARSVC_PROBLEMS

    def __init__(
        self,
        *,
        eps: float = 1e-4,
        tol: float = 1e-6,
        max_iter: int = 1000,
        seed: int = 0,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, max_iter=max_iter, time_limit=time_limit)
        self.eps = check_real("eps", eps, low=0.0)
        self.seed = check_int("seed", seed, low=0)

    def _setup(self, problem) -> Job:
        from sklearn.svm import LinearSVC

        est = LinearSVC(
            penalty="l2",
            loss=problem.loss,
            dual=True,
            C=float(problem.C),
            tol=self.eps,
            fit_intercept=problem.bias == "regularized",
            intercept_scaling=float(problem.bias_scale),
            max_iter=self.max_iter,
            random_state=self.seed,
            verbose=0,
        )
        return self._fit_job(est, problem.X, problem.y, problem.sample_weight)

    def _read(self, problem, job: Job, fitted) -> LibraryOutcome:
        est, warned = fitted
        w, b = self._linear_model(est, problem.bias == "regularized")
        iterations = int(np.max(est.n_iter_))
        status = Status.MAX_ITER if warned or iterations >= self.max_iter else Status.OPTIMAL
        return LibraryOutcome(
            status, {"w": w, "b": b}, iterations, {"warnings": warned}, "; ".join(warned)
        )


@register
class SklearnSGDAnchor(_SklearnAnchor):
    """scikit-learn's ``SGDClassifier(penalty="l2")`` on the hinge or squared hinge.

    scikit-learn minimizes ``(1/n) Σ_i w_i loss_i + α/2 ‖w‖²``, our C-form divided by ``nC``
    with ``α = λ = 1/(nC)`` (:func:`problems.scaling.lambda_from_C`). Its intercept is not
    regularized: ``fit_intercept=True`` is our ``bias="free"``, ``False`` is ``bias="none"``.
    Per-example weights are passed as ``sample_weight``.

    Parameters
    ----------
    eps : float or None, default=1e-3
        ``SGDClassifier(tol=)``, scikit-learn's rule: stop when the training loss has not
        improved by ``eps`` for ``n_iter_no_change`` epochs; None runs ``max_iter`` epochs
        (status ``max_iter``).
    tol : float, default=1e-6
        The certified relative gap asked for (``optimal`` when scikit-learn's rule stopped the
        run and the problem certifies the model at ``tol``).
    max_iter : int, default=1000
        Epochs.
    learning_rate : {"optimal", "constant", "invscaling", "adaptive"}, default="optimal"
        scikit-learn's schedule (``"optimal"`` is ``1/(α(t + t₀))``; with the squared hinge its
        first steps can blow the weights up, which the certificate then shows).
    eta0 : float, default=0.01
        Initial step of the other schedules (scikit-learn's default).
    average : bool or int, default=False
        Averaged SGD (an int: start averaging after that many updates).
    n_iter_no_change : int, default=5
    seed : int, default=0
        ``random_state`` (the shuffling).

    Status is ``optimal`` when scikit-learn's rule stopped the run before ``max_iter`` and the
    problem certifies the model at ``tol``; the certified gap is what says how far from the
    optimum a stochastic method ended.
    """

    name = "sklearn_sgd"
    package = "scikit-learn"
    modules = ("sklearn.linear_model",)
    iteration_unit = "epochs"
    stochastic = True
    supported = _SGD_PROBLEMS

    def __init__(
        self,
        *,
        eps: float | None = 1e-3,
        tol: float = 1e-6,
        max_iter: int = 1000,
        learning_rate: str = "optimal",
        eta0: float = 0.01,
        average: bool | int = False,
        n_iter_no_change: int = 5,
        seed: int = 0,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, max_iter=max_iter, time_limit=time_limit)
        self.eps = None if eps is None else check_real("eps", eps, low=0.0)
        self.learning_rate = str(learning_rate)
        self.eta0 = check_real("eta0", eta0, low=0.0)
        self.average = (
            average if isinstance(average, bool) else check_int("average", average, low=1)
        )
        self.n_iter_no_change = check_int("n_iter_no_change", n_iter_no_change, low=1)
        self.seed = check_int("seed", seed, low=0)

    def _setup(self, problem) -> Job:
        from sklearn.linear_model import SGDClassifier

        est = SGDClassifier(
            loss=problem.loss,
            penalty="l2",
            alpha=lambda_from_C(problem.C, problem.n_samples),
            fit_intercept=problem.bias == "free",
            max_iter=self.max_iter,
            tol=self.eps,
            learning_rate=self.learning_rate,
            eta0=self.eta0,
            average=self.average,
            n_iter_no_change=self.n_iter_no_change,
            random_state=self.seed,
            verbose=0,
        )
        return self._fit_job(est, problem.X, problem.y, problem.sample_weight)

    def _read(self, problem, job: Job, fitted) -> LibraryOutcome:
        est, warned = fitted
        w, b = self._linear_model(est, problem.bias == "free")
        iterations = int(est.n_iter_)
        stopped_early = self.eps is not None and iterations < self.max_iter
        status = Status.OPTIMAL if stopped_early and not warned else Status.MAX_ITER
        return LibraryOutcome(
            status,
            {"w": w, "b": b},
            iterations,
            {"sgd_alpha": est.alpha, "updates": int(est.t_ - 1), "warnings": warned},
            "; ".join(warned),
        )
