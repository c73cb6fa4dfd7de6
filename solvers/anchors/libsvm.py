"""The LIBSVM anchor (official binding): ``libsvm``, C-SVC with SMO, any of our kernels.

Also what the scikit-learn SVC adapters (:mod:`svmbench.solvers.anchors.sklearn`), which run
scikit-learn's fork of LIBSVM, share with it: the problems a C-SVC accepts, a problem's kernel
parameters, and our variables from a kernel expansion.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping

import numpy as np

from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.validation import check_bool, check_real
from svmbench.solvers.anchors.base import (
    Anchor,
    Captured,
    Job,
    LibraryOutcome,
    as_csr,
    single_C,
    uniform_weights,
)
from svmbench.solvers.base import Status
from svmbench.solvers.registry import register

#: LIBSVM's ``-t`` for each of our kernels.
LIBSVM_KERNEL = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}


def _both_classes_weighted(problem) -> str | None:
    """LIBSVM (and scikit-learn's SVC over it) refuses data whose positive weights fall on one
    class: say so before the library does, in this project's words."""
    weights = problem.sample_weight
    if weights is None:
        return None
    classes = np.unique(problem.y[np.asarray(weights) > 0])
    if classes.size < 2:
        return (
            "sample_weight gives positive weight to one class only; LIBSVM trains on the "
            "examples of positive weight and needs both classes there"
        )
    return None


SVC_PROBLEMS = {
    KernelDual: {"loss": ("hinge",), "bias": ("free",), "sample_weight": _both_classes_weighted},
    SoftMarginPrimal: {
        "loss": ("hinge",),
        "bias": ("free",),
        "sample_weight": _both_classes_weighted,
    },
    SoftMarginDual: {
        "loss": ("hinge",),
        "bias": ("free",),
        "sample_weight": _both_classes_weighted,
    },
}


def with_constraints(constraints: Mapping, **more) -> dict:
    """``SVC_PROBLEMS`` with extra constraints on every problem class (or on KernelDual only)."""
    kernel_only = more.pop("kernel_only", {})
    out = {}
    for cls, c in constraints.items():
        out[cls] = {**c, **more, **(kernel_only if cls is KernelDual else {})}
    return out


def kernel_of(problem) -> dict:
    """The kernel parameters of a problem (the linear kernel for the soft-margin problems)."""
    if isinstance(problem, KernelDual):
        return problem.kernel_params
    return {"kernel": "linear", "gamma": 1.0, "degree": 3, "coef0": 0.0}


def model_variables(problem, alpha: np.ndarray, b: float) -> dict:
    """Our variables from a kernel expansion: ``alpha, b`` (and ``w = Σ α_i y_i x_i``)."""
    if isinstance(problem, KernelDual):
        return {"alpha": alpha, "b": b}
    w = np.asarray(problem.X.T @ (alpha * problem.y)).ravel()
    return {"w": w, "b": b, "alpha": alpha}


@register
class LibsvmAnchor(Anchor):
    """LIBSVM's C-SVC (``-s 0``; SMO with WSS of Fan, Chen & Lin, JMLR 2005), free bias, hinge.

    Kernels ``-t 0..4`` (linear, poly, rbf, sigmoid, precomputed) with ``-g gamma -d degree
    -r coef0`` from the problem; the soft-margin problems run with the linear kernel. A
    precomputed kernel is handed over in LIBSVM's format (column 0 holds the 1-based serial
    number of each row). The model's ``sv_coef`` are ``y'_j α_j`` with ``y'`` the labels as
    LIBSVM orders them (``labels[0]`` positive), its decision function ``Σ sv_coef K − rho``;
    the adapter maps both to our ``alpha`` and ``b``.

    Parameters
    ----------
    eps : float, default=1e-3
        LIBSVM's ``-e``: stop when the maximal violating pair's violation is ≤ eps.
    tol : float, default=1e-6
        The certified relative gap asked for: ``optimal`` when LIBSVM's rule held and the
        problem certifies its model at ``tol``.
    cache_mb : float, default=200
        LIBSVM's ``-m`` kernel cache (MB).
    shrinking : bool, default=True
        LIBSVM's ``-h``.
    n_threads : int or None, default=1
        OpenMP threads of the kernel evaluations (the binding is built with OpenMP); None leaves
        OpenMP's default (all cores). One thread by default: on a loaded machine OpenMP's
        barriers made 200-point runs vary from 0.5 ms to 2 s.

    Notes
    -----
    LIBSVM's iteration cap is compiled in (``max(10^7, 100·n)`` pair updates in LIBSVM 3.37);
    reaching it prints a warning, which becomes status ``max_iter``. Per-example weights are
    supported only when uniform.
    """

    name = "libsvm"
    package = "libsvm-official"
    modules = ("libsvm.svmutil",)
    iteration_unit = "SMO iterations (pair updates)"
    supported = with_constraints(SVC_PROBLEMS, sample_weight=uniform_weights)

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

    def _setup(self, problem) -> Job:
        from libsvm.svm import PRINT_STRING_FUN
        from libsvm.svmutil import svm_parameter, svm_problem

        kp = kernel_of(problem)
        t = LIBSVM_KERNEL[kp["kernel"]]
        if kp["kernel"] == "precomputed":
            n = problem.n_samples
            rows = np.hstack([np.arange(1, n + 1, dtype=np.float64)[:, None], problem.X])
            prob = svm_problem(problem.y, rows, isKernel=True)
        else:
            prob = svm_problem(problem.y, as_csr(problem.X))
        # repr() of a float round-trips exactly through the binding's float() parsing.
        options = (
            f"-s 0 -t {t} -c {single_C(problem)!r} -g {float(kp['gamma'])!r} "
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
        labels = model.get_labels()
        # LIBSVM's positive class is labels[0] (+1 for ±1 labels, whatever the data's order).
        sign = 1.0 if labels[0] == 1 else -1.0
        idx = np.asarray(model.get_sv_indices(), dtype=np.int64) - 1
        coef = np.array([model.sv_coef[0][j] for j in range(model.l)])
        alpha = np.zeros(problem.n_samples)
        alpha[idx] = sign * coef * problem.y[idx]
        b = -sign * float(model.rho[0])
        if captured.reached_max_iter:
            status, message = Status.MAX_ITER, "LIBSVM reached its compiled-in iteration cap"
        else:
            status, message = Status.OPTIMAL, "LIBSVM's stopping rule was met (violation ≤ -e)"
        return LibraryOutcome(
            status,
            model_variables(problem, alpha, b),
            captured.iterations(),
            {
                "options": job.extra["options"],
                "labels": [int(c) for c in labels],
                "n_sv": int(model.l),
                "library_output": captured.text,
            },
            message,
        )
