"""Anchors of the linear ε-SVR: LIBLINEAR's dual coordinate descent ``-s 13``/``-s 12``
(``liblinear_svr``) and primal trust-region Newton ``-s 11`` (``liblinear_svr_primal``), and
scikit-learn's ``LinearSVR`` (``sklearn_linearsvr``), each judged by
:class:`~svmbench.problems.SVRPrimal`'s certificate.

The scalings: LIBLINEAR's and scikit-learn's ``C`` multiplies the loss sum, as ours does, and
their ``-p``/``epsilon`` is our ε. LIBLINEAR's ``-B s`` is a constant feature of value s whose
weight is regularized (our ``bias="regularized"``); ``-B 1 -R`` leaves it unregularized (our
``"free"``, ``-s 11`` only); ``-B -1`` is ``"none"``. scikit-learn's ``fit_intercept=True``
regularizes its intercept (``intercept_scaling = s``).
"""

from __future__ import annotations

import ctypes
import re
import warnings
from typing import ClassVar

import numpy as np

from svmbench.problems import SVRPrimal
from svmbench.problems.validation import check_bool, check_int, check_real
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

_DUAL_LOSS_TYPES = {"epsilon_insensitive": 13, "squared_epsilon_insensitive": 12}


def _squared_only(problem: SVRPrimal) -> str | None:
    if problem.squared:
        return None
    return "-s 11 solves the squared ε-insensitive loss only (the plain one has no gradient)"


class LiblinearSVR(Anchor):
    """LIBLINEAR's L2-regularized ε-SVR (Ho & Lin 2012): dual CD ``-s 13``/``-s 12`` or
    primal trust-region Newton ``-s 11``.

    Parameters
    ----------
    eps : float or None, default=None
        LIBLINEAR's ``-e`` (None: its defaults, 0.1 for ``-s 12/13`` and 1e-4 for ``-s 11``).
    tol : float, default=1e-6
        The certified relative gap asked for.
    seed : int, default=0
        Seeds the C library's ``rand()`` (the coordinate orders of ``-s 12/13``).
    time_limit : float or None, default=None

    Notes
    -----
    Uniform per-example weights only (the binding takes one C). liblinear 2.50 stops its dual
    solvers after 300 outer iterations with a warning, which becomes status ``max_iter``.
    """

    package = "liblinear-official"
    modules = ("liblinear.liblinearutil",)
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

    def _solver_type(self, problem: SVRPrimal) -> int:
        raise NotImplementedError

    def _setup(self, problem: SVRPrimal) -> Job:
        from liblinear.liblinear import PRINT_STRING_FUN
        from liblinear.liblinearutil import parameter
        from liblinear.liblinearutil import problem as ll_problem

        if problem.bias == "regularized":
            bias = f"-B {float(problem.bias_scale)!r}"
        elif problem.bias == "free":
            bias = "-B 1.0 -R"
        else:
            bias = "-B -1"
        options = (
            f"-s {self._solver_type(problem)} -c {single_C(problem)!r} "
            f"-p {float(problem.epsilon)!r} -e {float(self.eps)!r} {bias}"
        )
        prob = ll_problem(np.asarray(problem.y, dtype=np.float64), as_csr(problem.X))
        job = Job.captured(prob, parameter(options), PRINT_STRING_FUN, options)
        try:  # the coordinate orders draw from rand(); glibc reads srand(0) as srand(1)
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

    def _read(self, problem: SVRPrimal, job: Job, model) -> LibraryOutcome:
        captured: Captured = job.extra["captured"]
        weights = liblinear_weights(model)[:, 0]  # a regression model: no label order
        d = problem.n_features
        b = model.bias * weights[d] if problem.bias != "none" else 0.0
        text = captured.text
        epochs = sum(int(n) for n in re.findall(r"#iter\s*=\s*(\d+)", text))
        newton_steps = text.count("\niter") + text.startswith("iter")
        if captured.reached_max_iter:
            status, message = Status.MAX_ITER, "LIBLINEAR reached its compiled-in iteration cap"
        else:
            status, message = Status.OPTIMAL, "LIBLINEAR's stopping rule was met"
        return LibraryOutcome(
            status,
            {"w": weights[:d].copy(), "b": float(b)},
            epochs + newton_steps,
            {"options": job.extra["options"], "library_output": text},
            message,
        )


@register
class LiblinearSVRDual(LiblinearSVR):
    """LIBLINEAR ``-s 13`` (plain loss) or ``-s 12`` (squared loss): dual coordinate descent,
    bias regularized or none. See :class:`LiblinearSVR`."""

    name = "liblinear_svr"
    iteration_unit = "outer iterations (epochs)"
    supported: ClassVar = {
        SVRPrimal: {"bias": ("regularized", "none"), "sample_weight": uniform_weights}
    }
    default_eps = 0.1

    def _solver_type(self, problem: SVRPrimal) -> int:
        return _DUAL_LOSS_TYPES[problem.loss]


@register
class LiblinearSVRPrimal(LiblinearSVR):
    """LIBLINEAR ``-s 11``: trust-region Newton on the squared ε-insensitive loss, every bias
    (a free one as ``-B 1 -R``). See :class:`LiblinearSVR`."""

    name = "liblinear_svr_primal"
    iteration_unit = "Newton iterations"
    supported: ClassVar = {
        SVRPrimal: {"loss": _squared_only, "sample_weight": uniform_weights},
    }
    default_eps = 1e-4

    def _solver_type(self, problem: SVRPrimal) -> int:
        return 11


@register
class SklearnLinearSVRAnchor(Anchor):
    """scikit-learn's ``LinearSVR`` (its LIBLINEAR fork): ``fit_intercept=True`` with
    ``intercept_scaling = s`` is our regularized bias, ``False`` is ``"none"``. Per-example
    weights are passed as ``sample_weight`` (they multiply the loss terms, as our ``C_i``).

    Parameters
    ----------
    eps : float, default=1e-4
        ``LinearSVR(tol=)`` (scikit-learn's default).
    tol : float, default=1e-6
        The certified relative gap asked for.
    max_iter : int, default=1000
        ``LinearSVR(max_iter=)`` (scikit-learn's default).
    dual : bool, default=True
        ``LinearSVR(dual=)``: the dual CD (``-s 13``/``-s 12``) or, for the squared loss only,
        the primal Newton method (``-s 11``).
    seed : int, default=0
        ``random_state`` (the coordinate orders).
    time_limit : float or None, default=None
    """

    name = "sklearn_linearsvr"
    package = "scikit-learn"
    modules = ("sklearn.svm",)
    iteration_unit = "outer iterations (epochs)"
    supported: ClassVar = {SVRPrimal: {"bias": ("regularized", "none")}}

    def __init__(
        self,
        *,
        eps: float = 1e-4,
        tol: float = 1e-6,
        max_iter: int = 1000,
        dual: bool = True,
        seed: int = 0,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, max_iter=max_iter, time_limit=time_limit)
        self.eps = check_real("eps", eps, low=0.0)
        self.dual = check_bool("dual", dual)
        self.seed = check_int("seed", seed, low=0)

    def _setup(self, problem: SVRPrimal) -> Job:
        from sklearn.svm import LinearSVR

        if not self.dual and not problem.squared:
            raise ValueError(
                "sklearn_linearsvr: dual=False solves the squared ε-insensitive loss only"
            )
        est = LinearSVR(
            epsilon=float(problem.epsilon),
            tol=self.eps,
            C=float(problem.C),
            loss=problem.loss,
            fit_intercept=problem.bias == "regularized",
            intercept_scaling=float(problem.bias_scale),
            dual=self.dual,
            max_iter=self.max_iter,
            random_state=self.seed,
            verbose=0,
        )
        X = as_sklearn_input(problem.X)
        return Job(args=(est, X, problem.y), kwargs={"sample_weight": problem.sample_weight})

    def _train(self, job: Job):
        from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

        est, X, y = job.args
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SkConvergenceWarning)
            est.fit(X, y, sample_weight=job.kwargs["sample_weight"])
        return est, [str(w.message) for w in caught if issubclass(w.category, SkConvergenceWarning)]

    def _read(self, problem: SVRPrimal, job: Job, fitted) -> LibraryOutcome:
        est, warned = fitted
        w = np.asarray(est.coef_, dtype=np.float64).ravel().copy()
        b = float(np.ravel(est.intercept_)[0]) if problem.bias == "regularized" else 0.0
        iterations = int(np.max(est.n_iter_))
        status = Status.MAX_ITER if warned or iterations >= self.max_iter else Status.OPTIMAL
        return LibraryOutcome(
            status, {"w": w, "b": b}, iterations, {"warnings": warned}, "; ".join(warned)
        )
