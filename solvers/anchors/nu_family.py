"""The ν family's anchors: LIBSVM's ν-SVC (``-s 1``), one-class (``-s 2``) and ν-SVR (``-s 4``)
through the official binding (``libsvm_nu``), and scikit-learn's ``NuSVC``, ``OneClassSVM`` and
``NuSVR`` (``sklearn_nu``), one adapter each for the three problems.

Their models map back to our variables on LIBSVM's scale (:mod:`svmbench.problems.nu_svc`,
:mod:`~svmbench.problems.one_class`, :mod:`~svmbench.problems.nu_svr`):

- ν-SVC reports ``y_j α_j / r`` (its C-SVC-like model): with ``Σ_{y=+1} α = νW/2`` the scale is
  ``r = (νW/2) / Σ_{y=+1} |coef|``, and ``α = |coef| · r``;
- one-class reports α itself (times the one weight, for uniform weights);
- ν-SVR reports ``α − α*``: α is its positive part, α* its negative part.

The problems certify the point (their best offsets, not the library's ρ).
"""

from __future__ import annotations

import ctypes
from typing import ClassVar

import numpy as np

from svmbench.problems import NuSVCDual, NuSVRDual, OneClassDual
from svmbench.problems.validation import check_bool, check_int, check_real
from svmbench.solvers.anchors.base import (
    Anchor,
    Captured,
    Job,
    LibraryOutcome,
    as_csr,
    as_sklearn_input,
    uniform_weights,
)
from svmbench.solvers.base import Status
from svmbench.solvers.registry import register

#: LIBSVM's ``-t`` of each kernel.
LIBSVM_KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}
#: LIBSVM's ``-s`` of each problem kind.
SVM_TYPE = {"nu_svc": 1, "one_class": 2, "nu_svr": 4}


def variables_from_coefficients(problem, support: np.ndarray, coef: np.ndarray) -> dict:
    """Our variables from a library's support indices and coefficients (module docstring);
    ``coef`` of ν-SVC is ``α_j y_j / r`` with ``y_j`` our labels."""
    n = problem.n_samples
    full = np.zeros(n)
    full[support] = coef
    if isinstance(problem, NuSVCDual):
        alpha = np.maximum(full * problem.y, 0.0)
        total = alpha[problem.y > 0].sum()
        r = problem.class_mass / total if total > 0 else 1.0
        return {"alpha": alpha * r}
    if isinstance(problem, OneClassDual):
        return {"alpha": full}
    return {"alpha": np.r_[np.maximum(full, 0.0), np.maximum(-full, 0.0)]}


def _one_weight(problem) -> float:
    """The one weight of a problem with uniform weights (1 without)."""
    return 1.0 if problem.sample_weight is None else float(problem.sample_weight[0])


_LIBSVM_PROBLEMS = {
    NuSVCDual: {"sample_weight": uniform_weights},
    OneClassDual: {"sample_weight": uniform_weights},
    NuSVRDual: {"sample_weight": uniform_weights},
}


@register
class LibsvmNuAnchor(Anchor):
    """LIBSVM's ν-SVC, one-class and ν-SVR (``-s 1, 2, 4``; the ν solver of Chang & Lin 2001),
    official binding, uniform weights only.

    Parameters
    ----------
    eps : float, default=1e-3
        LIBSVM's ``-e``.
    tol : float, default=1e-6
        The certified relative gap asked for.
    cache_mb : float, default=200
    shrinking : bool, default=True
    n_threads : int or None, default=1
    """

    name = "libsvm_nu"
    package = "libsvm-official"
    modules = ("libsvm.svmutil",)
    iteration_unit = "SMO iterations (pair updates)"
    supported = _LIBSVM_PROBLEMS

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
        self.max_iter = None
        self.cache_mb = check_real("cache_mb", cache_mb, low=0.0)
        self.shrinking = check_bool("shrinking", shrinking)

    def _setup(self, problem) -> Job:
        from libsvm.svm import PRINT_STRING_FUN
        from libsvm.svmutil import svm_parameter, svm_problem

        kp = problem.kernel_params
        n = problem.n_samples
        labels = problem.y if isinstance(problem, NuSVCDual | NuSVRDual) else np.ones(n)
        if kp["kernel"] == "precomputed":
            rows = np.hstack([np.arange(1, n + 1, dtype=np.float64)[:, None], problem.X])
            prob = svm_problem(labels, rows, isKernel=True)
        else:
            prob = svm_problem(labels, as_csr(problem.X))
        c = problem.C * _one_weight(problem) if isinstance(problem, NuSVRDual) else 1.0
        options = (
            f"-s {SVM_TYPE[problem.kind]} -t {LIBSVM_KERNEL_CODES[kp['kernel']]} "
            f"-n {float(problem.nu)!r} -c {float(c)!r} -g {float(kp['gamma'])!r} "
            f"-d {int(kp['degree'])} -r {float(kp['coef0'])!r} -e {float(self.eps)!r} "
            f"-m {float(self.cache_mb)!r} -h {int(self.shrinking)}"
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
        idx = np.asarray(model.get_sv_indices(), dtype=np.int64) - 1
        coef = np.array([model.sv_coef[0][j] for j in range(model.l)])
        if isinstance(problem, NuSVCDual):
            # LIBSVM's positive class is labels[0]: its coefficients are y'_j α_j / r
            coef = coef * (1.0 if model.get_labels()[0] == 1 else -1.0)
        elif isinstance(problem, OneClassDual):
            coef = coef * _one_weight(problem)
        if captured.reached_max_iter:
            status, message = Status.MAX_ITER, "LIBSVM reached its compiled-in iteration cap"
        else:
            status, message = Status.OPTIMAL, "LIBSVM's stopping rule was met (violation ≤ -e)"
        return LibraryOutcome(
            status,
            variables_from_coefficients(problem, idx, coef),
            captured.iterations(),
            {"options": job.extra["options"], "n_sv": int(model.l), "rho": float(model.rho[0])},
            message,
        )


@register
class SklearnNuAnchor(Anchor):
    """scikit-learn's ``NuSVC``, ``OneClassSVM`` and ``NuSVR`` (its LIBSVM fork), per-example
    weights as ``sample_weight`` (an example of weight 0 is left out, as scikit-learn does).

    Parameters
    ----------
    eps : float, default=1e-3
        The estimator's ``tol`` (LIBSVM's ``-e``).
    tol : float, default=1e-6
        The certified relative gap asked for.
    max_iter : int or None, default=None
        The estimator's ``max_iter`` (None: -1, no cap).
    cache_mb : float, default=200
    shrinking : bool, default=True
    """

    name = "sklearn_nu"
    package = "scikit-learn"
    modules = ("sklearn.svm",)
    iteration_unit = "SMO iterations (pair updates)"
    supported: ClassVar[dict] = {NuSVCDual: {}, OneClassDual: {}, NuSVRDual: {}}

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

    def _setup(self, problem) -> Job:
        from sklearn import svm

        kp = problem.kernel_params
        common = dict(
            kernel=kp["kernel"], gamma=float(kp["gamma"]), degree=int(kp["degree"]),
            coef0=float(kp["coef0"]), tol=self.eps, shrinking=self.shrinking,
            cache_size=self.cache_mb, max_iter=-1 if self.max_iter is None else self.max_iter,
        )  # fmt: skip
        if isinstance(problem, NuSVCDual):
            est, y = svm.NuSVC(nu=problem.nu, **common), problem.y
        elif isinstance(problem, NuSVRDual):
            est, y = svm.NuSVR(nu=problem.nu, C=float(problem.C), **common), problem.y
        else:
            est, y = svm.OneClassSVM(nu=problem.nu, **common), None
        X, sw, keep = problem.X, problem.sample_weight, None
        if sw is not None and np.any(sw == 0):
            keep = np.flatnonzero(sw > 0)
            X = X[np.ix_(keep, keep)] if kp["kernel"] == "precomputed" else X[keep]
            y, sw = (None if y is None else y[keep]), sw[keep]
        return Job(args=(est, as_sklearn_input(X), y), kwargs={"sample_weight": sw}, extra={
            "keep": keep,
        })  # fmt: skip

    def _train(self, job: Job):
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        est, X, y = job.args
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            if y is None:
                est.fit(X, sample_weight=job.kwargs["sample_weight"])
            else:
                est.fit(X, y, sample_weight=job.kwargs["sample_weight"])
        warned = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
        return est, warned

    def _read(self, problem, job: Job, fitted) -> LibraryOutcome:
        est, warned = fitted
        idx = np.asarray(est.support_, dtype=np.int64)
        if job.extra["keep"] is not None:
            idx = job.extra["keep"][idx]
        coef = est.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef)[0]
        if isinstance(problem, NuSVCDual) and float(est.classes_[1]) != 1.0:
            coef = -coef
        status = Status.MAX_ITER if warned else Status.OPTIMAL
        return LibraryOutcome(
            status,
            variables_from_coefficients(problem, idx, coef),
            int(np.sum(est.n_iter_)),
            {"n_sv": int(idx.size), "warnings": warned},
            "; ".join(warned),
        )
