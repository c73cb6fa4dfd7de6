"""Anchors of the logistic loss: LIBLINEAR's ``-s 0`` (trust-region Newton, ``liblinear_lr``)
and ``-s 7`` (dual coordinate descent, ``liblinear_lr_dual``), and scikit-learn's
``LogisticRegression`` (``sklearn_logistic``), each judged by
:class:`~svmbench.problems.Logistic`'s certificate.

The scalings: LIBLINEAR's and scikit-learn's ``C`` multiplies the loss sum, as ours does, so the
problems are the same with the same C. LIBLINEAR's ``-B s`` is a constant feature of value s
whose weight is regularized (our ``bias="regularized"``); ``-B 1 -R`` leaves it unregularized
(our ``"free"``, ``-s 0`` only); ``-B -1`` is ``"none"``. scikit-learn's ``liblinear`` solver
regularizes its intercept (``intercept_scaling = s``), ``lbfgs`` does not.
"""

from __future__ import annotations

import ctypes
import warnings
from typing import ClassVar

import numpy as np

from svmbench.problems import Logistic, MultinomialLogistic
from svmbench.problems.validation import check_int, check_real
from svmbench.solvers.anchors.base import (
    Anchor,
    Captured,
    Job,
    LibraryOutcome,
    as_csr,
    as_sklearn_input,
    single_C,
    uniform_weights,
)
from svmbench.solvers.anchors.liblinear import liblinear_weights
from svmbench.solvers.base import Status
from svmbench.solvers.registry import register


class LiblinearLogistic(Anchor):
    """LIBLINEAR's L2-regularized logistic regression, primal ``-s 0`` (``liblinear_lr``, every
    bias) or dual ``-s 7`` (``liblinear_lr_dual``, bias regularized or none).

    Parameters
    ----------
    eps : float or None, default=None
        LIBLINEAR's ``-e`` (None: its defaults, 0.01 for ``-s 0`` and 0.1 for ``-s 7``).
    tol : float, default=1e-6
        The certified relative gap asked for.
    seed : int, default=0
        Seeds the C library's ``rand()`` (the coordinate orders of ``-s 7``).
    time_limit : float or None, default=None

    Notes
    -----
    Uniform per-example weights only (the binding takes one C). liblinear 2.50's dual solver
    stops after 300 outer iterations and finishes with ``-s 0`` ("Switching to use -s 0"); the
    record says so in ``info["switched_to_primal"]``.
    """

    package = "liblinear-official"
    modules = ("liblinear.liblinearutil",)
    solver_type: ClassVar[int]
    default_eps: ClassVar[float]

    def __init__(
        self,
        *,
        eps: float | None = None,
        tol: float = 1e-6,
        seed: int = 0,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, time_limit=time_limit)
        self.eps = self.default_eps if eps is None else check_real("eps", eps, low=0.0)
        self.max_iter = None  # compiled into LIBLINEAR
        self.seed = check_int("seed", seed, low=0)

    def _setup(self, problem: Logistic) -> Job:
        from liblinear.liblinear import PRINT_STRING_FUN
        from liblinear.liblinearutil import parameter
        from liblinear.liblinearutil import problem as ll_problem

        if problem.bias == "regularized":
            bias = f"-B {float(problem.bias_scale)!r}"
        elif problem.bias == "free":
            bias = "-B 1.0 -R"
        else:
            bias = "-B -1"
        options = f"-s {self.solver_type} -c {single_C(problem)!r} -e {float(self.eps)!r} {bias}"
        prob = ll_problem(np.asarray(problem.y, dtype=np.float64), as_csr(problem.X))
        job = Job.captured(prob, parameter(options), PRINT_STRING_FUN, options)
        try:  # the coordinate orders of -s 7 draw from rand(); glibc reads srand(0) as srand(1)
            ctypes.CDLL(None).srand(ctypes.c_uint(self.seed + 1))
        except (OSError, AttributeError, TypeError):
            pass
        return job

    def _train(self, job: Job):
        from liblinear import liblinear as ll
        from liblinear.liblinearutil import train

        try:
            return train(*job.args)
        finally:
            ll.liblinear.set_print_string_function(ctypes.cast(None, ll.PRINT_STRING_FUN))

    def _read(self, problem: Logistic, job: Job, model) -> LibraryOutcome:
        captured: Captured = job.extra["captured"]
        weights = liblinear_weights(model)[:, 0]
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        d = problem.n_features
        w = sign * weights[:d]
        b = sign * model.bias * weights[d] if problem.bias != "none" else 0.0
        text = captured.text
        switched = "Switching to use -s 0" in text
        newton_steps = text.count("\niter") + text.startswith("iter")
        iterations = sum(int(n) for n in _counts(text)) + newton_steps
        if captured.reached_max_iter and not switched:
            status, message = Status.MAX_ITER, "LIBLINEAR reached its compiled-in iteration cap"
        else:
            status, message = Status.OPTIMAL, "LIBLINEAR's stopping rule was met"
        return LibraryOutcome(
            status,
            {"w": w, "b": float(b)},
            iterations,
            {
                "options": job.extra["options"],
                "switched_to_primal": switched,
                "library_output": text,
            },
            message,
        )


def _counts(text: str) -> list[str]:
    """The "#iter = N" counts LIBLINEAR's dual solver prints."""
    import re

    return re.findall(r"#iter\s*=\s*(\d+)", text)


@register
class LiblinearLogisticPrimal(LiblinearLogistic):
    """LIBLINEAR ``-s 0``: trust-region Newton (Lin, Weng & Keerthi 2008), every bias (a free
    one as ``-B 1 -R``). See :class:`LiblinearLogistic`."""

    name = "liblinear_lr"
    iteration_unit = "Newton iterations"
    supported: ClassVar = {Logistic: {"sample_weight": uniform_weights}}
    solver_type = 0
    default_eps = 0.01


@register
class LiblinearLogisticDual(LiblinearLogistic):
    """LIBLINEAR ``-s 7``: dual coordinate descent (Yu, Huang & Lin 2011), bias regularized or
    none. See :class:`LiblinearLogistic`."""

    name = "liblinear_lr_dual"
    iteration_unit = "outer iterations (epochs), then Newton iterations"
    supported: ClassVar = {
        Logistic: {"bias": ("regularized", "none"), "sample_weight": uniform_weights}
    }
    solver_type = 7
    default_eps = 0.1


@register
class SklearnLogisticAnchor(Anchor):
    """scikit-learn's ``LogisticRegression`` (L2 penalty): ``lbfgs`` for a free bias
    (``fit_intercept=True``, not regularized) and for none (``fit_intercept=False``),
    ``liblinear`` for a regularized one (``intercept_scaling = s``). Per-example weights are
    passed as ``sample_weight`` (they multiply the loss terms, as our ``C_i``). The multinomial
    loss (:class:`~svmbench.problems.MultinomialLogistic`) with ``bias="none"`` only:
    ``lbfgs``, ``fit_intercept=False`` (scikit-learn's intercept is unregularized, a free bias,
    which that problem does not have).

    Parameters
    ----------
    eps : float, default=1e-4
        ``LogisticRegression(tol=)`` (scikit-learn's default).
    tol : float, default=1e-6
        The certified relative gap asked for.
    max_iter : int, default=100
        ``LogisticRegression(max_iter=)`` (scikit-learn's default).
    time_limit : float or None, default=None
    """

    name = "sklearn_logistic"
    package = "scikit-learn"
    modules = ("sklearn.linear_model",)
    iteration_unit = "solver iterations"
    supported: ClassVar = {Logistic: {}, MultinomialLogistic: {"bias": ("none",)}}

    def __init__(
        self,
        *,
        eps: float = 1e-4,
        tol: float = 1e-6,
        max_iter: int = 100,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, max_iter=max_iter, time_limit=time_limit)
        self.eps = check_real("eps", eps, low=0.0)

    def _setup(self, problem: Logistic) -> Job:
        from sklearn.linear_model import LogisticRegression

        if isinstance(problem, MultinomialLogistic):
            options = dict(solver="lbfgs", fit_intercept=False)
        elif problem.bias == "regularized":
            options = dict(solver="liblinear", intercept_scaling=float(problem.bias_scale))
        else:
            options = dict(solver="lbfgs", fit_intercept=problem.bias == "free")
        est = LogisticRegression(
            C=float(problem.C), tol=self.eps, max_iter=self.max_iter, **options
        )
        X = as_sklearn_input(problem.X)
        return Job(args=(est, X, problem.y), kwargs={"sample_weight": problem.sample_weight})

    def _train(self, job: Job):
        est, X, y = job.args
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y, sample_weight=job.kwargs["sample_weight"])
        return est, [str(w.message) for w in caught if "converge" in str(w.message).lower()]

    def _read(self, problem: Logistic, job: Job, fitted) -> LibraryOutcome:
        est, warned = fitted
        iterations = int(np.max(est.n_iter_))
        status = Status.MAX_ITER if warned else Status.OPTIMAL
        if isinstance(problem, MultinomialLogistic):  # classes_ are 0..k−1, in order
            W = np.asarray(est.coef_, dtype=np.float64)
            variables = {"W": W, "b": np.zeros(problem.n_classes)}
            return LibraryOutcome(
                status, variables, iterations, {"warnings": warned}, "; ".join(warned)
            )
        sign = 1.0 if est.classes_[1] == 1 else -1.0
        w = sign * np.asarray(est.coef_, dtype=np.float64)[0]
        b = sign * float(est.intercept_[0]) if problem.bias != "none" else 0.0
        return LibraryOutcome(
            status, {"w": w, "b": b}, iterations, {"warnings": warned}, "; ".join(warned)
        )
