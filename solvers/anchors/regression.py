"""The ε-SVR anchors: LIBSVM ``-s 3`` (the official binding), ``libsvm_svr``, and scikit-learn's
``SVR`` (its LIBSVM fork), ``sklearn_svr``, judged by
:class:`~svmbench.problems.svr.SVRDual`'s certificate.

Both models are ``f(x) = Σ_j β_j K(x_j, x) − ρ`` with ``β_j = α_j − α*_j`` (LIBSVM's ``sv_coef``,
scikit-learn's ``dual_coef_``) and ``b = −ρ`` (scikit-learn's ``intercept_``); the record carries
``alpha = (max(β, 0), max(−β, 0))`` and b. Both solve the free-bias problem only.
"""

from __future__ import annotations

import ctypes
import importlib

import numpy as np
from scipy import sparse

from svmbench.problems.svr import SVRDual
from svmbench.problems.validation import check_bool, check_int, check_real
from svmbench.solvers.anchors.base import (
    Anchor,
    Captured,
    Job,
    LibraryOutcome,
    as_csr,
    single_C,
    uniform_weights,
)
from svmbench.solvers.anchors.libsvm import LIBSVM_KERNEL
from svmbench.solvers.anchors.sklearn import SklearnAnchor
from svmbench.solvers.base import Status
from svmbench.solvers.registry import register

#: What both anchors accept: LIBSVM's ε-SVR has an unregularized b.
SVR_PROBLEMS = {SVRDual: {"bias": ("free",)}}
#: LIBSVM's binding takes one C for every example.
LIBSVM_SVR_PROBLEMS = {SVRDual: {"bias": ("free",), "sample_weight": uniform_weights}}


def _variables(problem: SVRDual, index: np.ndarray, coef: np.ndarray, b: float) -> dict:
    beta = np.zeros(problem.n_samples)
    beta[index] = coef
    return {"alpha": problem.split(beta), "b": b}


@register
class LibsvmSVRAnchor(Anchor):
    """LIBSVM's ε-SVR (``-s 3 -p ε``; SMO on the 2n-variable dual), free bias, any kernel.

    Parameters
    ----------
    eps : float, default=1e-3
        LIBSVM's ``-e`` (its maximal violating pair's tolerance).
    tol : float, default=1e-6
        The certified relative gap asked for.
    cache_mb : float, default=200
        LIBSVM's ``-m``.
    shrinking : bool, default=True
        LIBSVM's ``-h``.
    n_threads : int or None, default=1
        OpenMP threads of the kernel evaluations.

    Per-example weights are supported only when uniform (the binding takes one C).
    """

    name = "libsvm_svr"
    package = "libsvm-official"
    modules = ("libsvm.svmutil",)
    iteration_unit = "SMO iterations (pair updates)"
    supported = LIBSVM_SVR_PROBLEMS

    def __init__(
        self,
        *,
        eps: float = 1e-3,
        tol: float = 1e-6,
        cache_mb: float = 200.0,
        shrinking: bool = True,
        n_threads: int | None = 1,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, n_threads=n_threads, time_limit=time_limit)
        self.eps = check_real("eps", eps, low=0.0)
        self.max_iter = None  # compiled into LIBSVM
        self.cache_mb = check_real("cache_mb", cache_mb, low=0.0)
        self.shrinking = check_bool("shrinking", shrinking)

    def _setup(self, problem: SVRDual) -> Job:
        from libsvm.svm import PRINT_STRING_FUN
        from libsvm.svmutil import svm_parameter, svm_problem

        kp = problem.kernel_params
        if kp["kernel"] == "precomputed":
            n = problem.n_samples
            rows = np.hstack([np.arange(1, n + 1, dtype=np.float64)[:, None], problem.X])
            prob = svm_problem(problem.y, rows, isKernel=True)
        else:
            prob = svm_problem(problem.y, as_csr(problem.X))
        options = (
            f"-s 3 -t {LIBSVM_KERNEL[kp['kernel']]} -c {single_C(problem)!r} "
            f"-p {float(problem.epsilon)!r} -g {float(kp['gamma'])!r} -d {int(kp['degree'])} "
            f"-r {float(kp['coef0'])!r} -e {float(self.eps)!r} -m {float(self.cache_mb)!r} "
            f"-h {int(self.shrinking)}"
        )
        return Job.captured(prob, svm_parameter(options), PRINT_STRING_FUN, options)

    def _train(self, job: Job):
        from libsvm import svm
        from libsvm.svmutil import svm_train

        try:
            return svm_train(*job.args)
        finally:
            svm.libsvm.svm_set_print_string_function(ctypes.cast(None, svm.PRINT_STRING_FUN))

    def _read(self, problem, job: Job, model) -> LibraryOutcome:
        captured: Captured = job.extra["captured"]
        index = np.asarray(model.get_sv_indices(), dtype=np.int64) - 1
        coef = np.array([model.sv_coef[0][j] for j in range(model.l)])
        variables = _variables(problem, index, coef, -float(model.rho[0]))
        if captured.reached_max_iter:
            status, message = Status.MAX_ITER, "LIBSVM reached its compiled-in iteration cap"
        else:
            status, message = Status.OPTIMAL, "LIBSVM's stopping rule was met (violation ≤ -e)"
        info = {"options": job.extra["options"], "n_sv": int(model.l)}
        return LibraryOutcome(status, variables, captured.iterations(), info, message)


@register
class SklearnSVRAnchor(SklearnAnchor):
    """scikit-learn's ``SVR`` (its LIBSVM fork), free bias, any kernel, per-example weights
    (``C_i = C·w_i``; examples of weight 0 are left out, as scikit-learn does, and mapped back).

    Parameters
    ----------
    eps : float, default=1e-3
        ``SVR(tol=)``, LIBSVM's ``-e``.
    tol : float, default=1e-6
        The certified relative gap asked for.
    max_iter : int or None, default=None
        ``SVR(max_iter=)`` in pair updates; None is scikit-learn's -1 (no cap).
    cache_mb : float, default=200
    shrinking : bool, default=True
    """

    name = "sklearn_svr"
    package = "scikit-learn"
    modules = ("sklearn.svm",)
    iteration_unit = "SMO iterations (pair updates)"
    supported = SVR_PROBLEMS

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

    def _setup(self, problem: SVRDual) -> Job:
        SVR = importlib.import_module("sklearn.svm").SVR
        kp = problem.kernel_params
        est = SVR(
            C=float(problem.C),
            epsilon=float(problem.epsilon),
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
        X, y, sw = problem.X, problem.y, problem.sample_weight
        keep = None
        if sw is not None and np.any(sw == 0):  # scikit-learn drops them and renumbers support_
            keep = np.flatnonzero(sw > 0)
            X = X[np.ix_(keep, keep)] if kp["kernel"] == "precomputed" else X[keep]
            y, sw = y[keep], sw[keep]
        return self._fit_job(est, X, y, sw, keep=keep)

    def _read(self, problem, job: Job, fitted) -> LibraryOutcome:
        est, warned = fitted
        index = np.asarray(est.support_, dtype=np.int64)
        if job.extra["keep"] is not None:
            index = job.extra["keep"][index]
        coef = est.dual_coef_
        coef = np.asarray(coef.toarray() if sparse.issparse(coef) else coef)[0]
        variables = _variables(problem, index, coef, float(est.intercept_[0]))
        status = Status.MAX_ITER if warned else Status.OPTIMAL
        return LibraryOutcome(
            status,
            variables,
            int(np.sum(est.n_iter_)),
            {"n_sv": int(index.size), "warnings": warned},
            "; ".join(warned),
        )
