"""Anchor solvers: the libraries everyone uses, run as adapters and judged by our certificates.

Each adapter hands one of our problems to an external library (LIBSVM, LIBLINEAR, scikit-learn,
oneDAL through scikit-learn-intelex), converts the trained model back to our problem's variables
(``w, b`` and/or ``alpha``; ``W, b`` for the multiclass hinge) and lets the PROBLEM certify it
(ARCHITECTURE.md §5): a library's own objective value or convergence claim is never reported as
the result, only its status.

=====================  =================================  =========================================
name                   library call                       problems
=====================  =================================  =========================================
``liblinear``          LIBLINEAR ``-s 3`` / ``-s 1``      SoftMarginPrimal/Dual, bias regularized
                       (dual CD, hinge / squared hinge)   (``-B s``) or none (``-B -1``)
``liblinear_cs``       LIBLINEAR ``-s 4``                 MulticlassHinge, 0-1 cost, bias none or
                       (Crammer-Singer)                   regularized
``libsvm``             LIBSVM C-SVC ``-s 0 -t 0..4``      KernelDual hinge, free bias;
                       (SMO)                              SoftMarginPrimal/Dual hinge, free bias
                                                          (linear kernel)
``sklearn_svc``        ``sklearn.svm.SVC``                as ``libsvm``, per-example weights too
``sklearnex_svc``      ``sklearnex.svm.SVC`` (oneDAL)     as ``sklearn_svc``, no precomputed kernel
``sklearn_linearsvc``  ``sklearn.svm.LinearSVC``          as ``liblinear``, per-example weights too
                       (dual=True)
``sklearn_sgd``        ``sklearn.linear_model.``          SoftMarginPrimal/Dual, bias free or none,
                       ``SGDClassifier`` (penalty l2)     both losses, per-example weights
=====================  =================================  =========================================

What is timed (``solve_time``): only the library's training call (``train``, ``svm_train``,
``fit``). Converting our data to the library's format (the LIBSVM/LIBLINEAR problem objects, a
CSR copy, the precomputed-kernel rows) happens before the clock starts; reading the model back and
certifying it happen after it stops. scikit-learn's ``fit`` validates its input inside the call:
the adapters hand it float64 arrays (C-contiguous, or CSR) so that this check does not copy.

Libraries print nothing: LIBSVM's and LIBLINEAR's output goes to a capturing print function (it
carries their iteration count and their "reaching max number of iterations" warning), and the
scikit-learn estimators run with ``verbose=0``; their ``ConvergenceWarning`` becomes status
``max_iter``. ``iterations`` is in each library's own unit (``iteration_unit``).

Options: ``tol`` is each library's NATIVE stopping tolerance, with the library's default
(LIBLINEAR ``-e`` 0.1, LIBSVM ``-e`` 1e-3, LinearSVC 1e-4, SGD 1e-3); the certified gap is
reported beside it, never used to stop. Training runs single-threaded by default (threadpoolctl
pins the OpenMP/BLAS pools; oneDAL gets ``n_jobs=1``): the LIBSVM binding is built with OpenMP,
and on a loaded two-core machine its barriers made a 200-point run vary from 0.5 ms to 2 s.
``info["threads"]`` records the count; ``n_threads=None`` (LIBSVM, oneDAL) lifts the limit.

``ANCHORS`` maps names to classes, :func:`get` configures one, :func:`available` says which
packages are installed. The anchors are not in ``solvers.registry``: they are measuring sticks,
not methods of this suite.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import importlib.util
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual, MulticlassHinge, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.base import Problem
from svmbench.problems.scaling import lambda_from_C
from svmbench.problems.validation import check_bool, check_int, check_real
from svmbench.solvers.base import Outcome, Solver, Status

# ---- capability checks (callables of ``Solver.supported``) -------------------------------------


def _uniform_weights(problem: Problem) -> str | None:
    """LIBSVM and LIBLINEAR (official bindings) take one C for all examples."""
    sw = problem.sample_weight
    if sw is None or np.all(sw == sw[0]):
        return None
    return (
        "per-example weights are not supported (the official binding takes a single C; "
        "only uniform sample_weight is accepted)"
    )


def _zero_one_cost(problem: MulticlassHinge) -> str | None:
    k = problem.n_classes
    if np.array_equal(problem.cost, 1.0 - np.eye(k)):
        return None
    return "only the 0-1 cost (Crammer-Singer) is supported, got another cost matrix"


def _no_precomputed(problem: KernelDual) -> str | None:
    if problem.kernel == "precomputed":
        return (
            "kernel='precomputed' is not accelerated by scikit-learn-intelex (it falls back to "
            "stock scikit-learn, which sklearn_svc already measures)"
        )
    return None


def _single_C(problem: Problem) -> float:
    """The one C of a problem with uniform weights: ``C · sample_weight_0``."""
    return float(problem.upper_bounds[0])


def _as_csr(X) -> sparse.csr_matrix:
    """A float64 CSR copy (or the matrix itself) with sorted indices."""
    A = sparse.csr_matrix(X, dtype=np.float64)
    A.sort_indices()
    return A


def _as_sklearn_input(X):
    """float64 C-contiguous dense or CSR: what scikit-learn's ``fit`` takes without copying."""
    if sparse.issparse(X):
        return _as_csr(X)
    return np.ascontiguousarray(X, dtype=np.float64)


# ---- captured output of LIBSVM / LIBLINEAR -------------------------------------------------------

_ITER = re.compile(r"#iter\s*=\s*(\d+)")
_MAX_ITER_WARNING = "reaching max number of iterations"


class _Captured:
    """A ctypes print function that collects a C library's output instead of printing it."""

    def __init__(self, print_type):
        self.chunks: list[str] = []
        # Keep a reference: the C library holds only the raw function pointer.
        self.function = print_type(self._collect)

    def _collect(self, text: bytes) -> None:
        self.chunks.append(text.decode(errors="replace"))

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def iterations(self) -> int:
        """The iteration count the library printed ("#iter = N"; summed over sub-problems)."""
        found = _ITER.findall(self.text)
        if not found:
            raise RuntimeError(f"no iteration count in the library's output: {self.text!r}")
        return sum(int(n) for n in found)

    @property
    def reached_max_iter(self) -> bool:
        return _MAX_ITER_WARNING in self.text


@dataclass
class _Job:
    """What an adapter prepared before the clock starts: the arguments of the timed call."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


@dataclass
class _Outcome:
    """What an adapter read back from the library's model."""

    status: Status
    variables: dict
    iterations: int
    info: dict
    message: str = ""


class Anchor(Solver):
    """Base of the anchor adapters: set up (untimed), train (timed), read the model back.

    Subclasses define ``package`` (the pip distribution), ``modules`` (the import names that must
    be present), ``_setup`` (our problem to the library's input, untimed), ``_train`` (the one
    timed call) and ``_read`` (the library's model to our variables and a status, untimed).

    Anchors take no warm start, and call a callback once, at the end: the libraries run to their
    own stopping rule. The solver clock times the training call only.

    Parameters
    ----------
    n_threads : int or None, default=1
        Threads of the OpenMP and BLAS pools during training (threadpoolctl); None: no limit.
        Only the adapters of multi-threaded libraries expose it.
    time_limit : float or None, default=None
        The libraries cannot be interrupted: a training call that takes longer than
        ``time_limit`` seconds ends with status ``time_limit`` (its model is still certified)
        and a message saying by how much it overran.
    **common
        ``tol`` and ``max_iter`` of :class:`~solvers.base.Solver`, in the library's own sense.
    """

    package: ClassVar[str]
    modules: ClassVar[tuple[str, ...]]
    warm_start_refusal = "takes no warm start (the library runs from its own start)"
    reports_progress = False

    def __init__(self, *, n_threads: int | None = 1, **common):
        super().__init__(**common)
        self.n_threads = None if n_threads is None else check_int("n_threads", n_threads, low=1)

    @property
    def threads(self) -> str:
        """The thread count the training call runs with, as recorded in ``info["threads"]``."""
        if self.n_threads is None:
            return f"library default ({os.cpu_count()} cores)"
        return str(self.n_threads)

    def _thread_limit(self):
        """Context that pins the OpenMP and BLAS pools to ``n_threads`` (None: no limit)."""
        if self.n_threads is None:
            return contextlib.nullcontext()
        from threadpoolctl import threadpool_limits

        return threadpool_limits(limits=self.n_threads)

    @classmethod
    def missing_reason(cls) -> str | None:
        """None when the library can be imported, else why not (and how to install it)."""
        for module in cls.modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                return f"{cls.package} is not installed (pip install {cls.package})"
        try:
            for module in cls.modules:
                importlib.import_module(module)
        except Exception as exc:  # a broken install must not break the harness
            return f"{cls.package} is installed but fails to import: {exc}"
        return None

    def _require(self) -> None:
        why = self.missing_reason()
        if why:
            raise ModuleNotFoundError(f"anchor {self.name!r} cannot run: {why}")

    def _run(self, problem: Problem, warm_start, clock, callback) -> Outcome:
        """Train the library on ``problem`` (the only timed part) and read its model back.

        Raises ``ModuleNotFoundError`` when the library is not installed.
        """
        with clock.paused():
            self._require()
            job = self._setup(problem)
        with self._thread_limit():
            t0 = clock.elapsed
            model = self._train(job)
            train_time = clock.elapsed - t0
        with clock.paused():
            out = self._read(problem, job, model)
        if train_time > self.time_limit and out.status is not Status.NUMERICAL_ERROR:
            out.status = Status.TIME_LIMIT
            out.message = (
                f"training took {train_time:.3g} s > time_limit={self.time_limit:g} s (the "
                f"library cannot be interrupted; its model is certified as it is)"
            )
        return Outcome(
            status=out.status,
            variables=out.variables,
            iterations=out.iterations,
            message=out.message,
            info={"threads": self.threads, **out.info},
        )

    def _setup(self, problem: Problem) -> _Job:
        raise NotImplementedError

    def _train(self, job: _Job) -> Any:
        raise NotImplementedError

    def _read(self, problem: Problem, job: _Job, model) -> _Outcome:
        raise NotImplementedError


# ---- LIBLINEAR ----------------------------------------------------------------------------------


def _liblinear_weights(model) -> np.ndarray:
    """LIBLINEAR's weights as an array of shape (n_features + has_bias, nr_w).

    ``model.w`` stores ``w[feature * nr_w + class]`` (LIBLINEAR README), ``nr_w = 1`` for a
    binary model of a non-Crammer-Singer solver (the decision function of ``labels[0]``) and
    ``nr_class`` otherwise; the bias weight is the last row when ``model.bias >= 0``.
    """
    nr_class = model.get_nr_class()
    solver_type = int(model.param.solver_type)
    nr_w = 1 if nr_class == 2 and solver_type != 4 else nr_class
    n = model.nr_feature + (1 if model.bias >= 0 else 0)
    w = np.ctypeslib.as_array(model.w, shape=(n * nr_w,)).copy()
    return w.reshape(n, nr_w)


def _seed_libc_rand(seed: int) -> None:
    """Seed the C library's ``rand()``, which LIBLINEAR's coordinate orders draw from.

    ``srand(seed + 1)``: glibc treats ``srand(0)`` as ``srand(1)``.
    """
    try:
        ctypes.CDLL(None).srand(ctypes.c_uint(seed + 1))
    except (OSError, AttributeError, TypeError):  # no process-wide libc (Windows): unseeded
        pass


class _LiblinearBase(Anchor):
    """What the two LIBLINEAR adapters share: the problem object, the options, the capture."""

    package = "liblinear-official"
    modules = ("liblinear.liblinearutil",)
    iteration_unit = "outer iterations (epochs)"

    def __init__(self, *, tol: float = 0.1, seed: int = 0, time_limit: float | None = None):
        super().__init__(tol=tol, time_limit=time_limit)
        # LIBLINEAR's caps are compiled in (300 outer iterations for the dual CD solvers of
        # liblinear 2.50, 100000 for Crammer-Singer); the binding cannot change them.
        self.max_iter = None
        self.seed = check_int("seed", seed, low=0)

    def _bias_option(self, problem) -> float:
        return problem.bias_scale if problem.bias == "regularized" else -1.0

    def _liblinear_job(self, problem, labels: np.ndarray, solver_type: int) -> _Job:
        from liblinear.liblinear import PRINT_STRING_FUN
        from liblinear.liblinearutil import parameter
        from liblinear.liblinearutil import problem as ll_problem

        C = _single_C(problem)
        B = self._bias_option(problem)
        prob = ll_problem(np.asarray(labels, dtype=np.float64), _as_csr(problem.X))
        # repr() of a float round-trips exactly through the binding's float() parsing.
        options = f"-s {solver_type} -c {C!r} -e {float(self.tol)!r} -B {float(B)!r}"
        param = parameter(options)
        captured = _Captured(PRINT_STRING_FUN)
        param.print_func = captured.function
        _seed_libc_rand(self.seed)  # last step before the clock: nothing else draws from rand()
        return _Job(args=(prob, param), extra={"captured": captured, "options": options})

    def _train(self, job: _Job):
        from liblinear import liblinear as ll
        from liblinear.liblinearutil import train

        try:
            return train(*job.args)
        finally:
            # Restore LIBLINEAR's default printer so no pointer to our callback outlives it.
            ll.liblinear.set_print_string_function(ctypes.cast(None, ll.PRINT_STRING_FUN))

    def _status(self, captured: _Captured) -> tuple[Status, str]:
        if captured.reached_max_iter:
            return Status.MAX_ITER, "LIBLINEAR reached its compiled-in iteration cap"
        return Status.OPTIMAL, "LIBLINEAR's stopping rule was met (maximal dual violation ≤ -e)"


_LIBLINEAR_PROBLEMS = {
    SoftMarginPrimal: {"bias": ("regularized", "none"), "sample_weight": _uniform_weights},
    SoftMarginDual: {"bias": ("regularized", "none"), "sample_weight": _uniform_weights},
}
_LIBLINEAR_CS_PROBLEMS = {
    MulticlassHinge: {"cost": _zero_one_cost, "sample_weight": _uniform_weights},
}


class LiblinearAnchor(_LiblinearBase):
    """LIBLINEAR's dual coordinate descent (Hsieh et al., ICML 2008): ``-s 3`` (hinge) or
    ``-s 1`` (squared hinge).

    The bias is LIBLINEAR's ``-B s``: an extra feature of value ``s = bias_scale`` whose weight is
    regularized, i.e. our ``bias="regularized"``; ``bias="none"`` is ``-B -1``. A free bias is not
    supported (LIBLINEAR's dual solvers have no equality constraint).

    Parameters
    ----------
    tol : float, default=0.1
        LIBLINEAR's ``-e``: stop when the spread of the projected gradient (the maximal dual
        violation) is ≤ tol. Not the certified gap; the certified gap is reported beside it.
    seed : int, default=0
        Seeds the C library's ``rand()`` (LIBLINEAR's random coordinate orders) before training,
        so that runs repeat.
    time_limit : float or None, default=None
        See :class:`Anchor`.

    Notes
    -----
    The official binding takes no iteration cap: liblinear 2.50 stops its dual CD after 300 outer
    iterations and prints a warning, which becomes status ``max_iter``.
    Per-example weights are supported only when uniform (then ``-c`` is ``C·w``).
    """

    name = "liblinear"
    supported = _LIBLINEAR_PROBLEMS

    def _setup(self, problem) -> _Job:
        solver_type = 3 if problem.loss == "hinge" else 1
        return self._liblinear_job(problem, problem.y, solver_type)

    def _read(self, problem, job: _Job, model) -> _Outcome:
        captured: _Captured = job.extra["captured"]
        wfull = _liblinear_weights(model)[:, 0]
        # nr_w = 1: the decision function of labels[0]. LIBLINEAR puts +1 first for ±1 labels
        # whatever their order in the data; the sign keeps the mapping right regardless.
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        d = problem.n_features
        w = sign * wfull[:d]
        b = sign * model.bias * wfull[d] if problem.bias == "regularized" else 0.0
        status, message = self._status(captured)
        return _Outcome(
            status,
            {"w": w, "b": float(b)},
            captured.iterations(),
            {
                "options": job.extra["options"],
                "labels": [int(c) for c in model.get_labels()],
                "library_output": captured.text,
            },
            message,
        )


class LiblinearCSAnchor(_LiblinearBase):
    """LIBLINEAR's Crammer–Singer solver ``-s 4`` (Keerthi et al., KDD 2008) for the multiclass
    hinge with the 0-1 cost; bias none (``-B -1``) or regularized (``-B s``).

    LIBLINEAR orders the classes by first appearance (``get_labels()``); the adapter maps its
    weight columns back to our classes 0..k-1.

    Parameters
    ----------
    tol : float, default=0.1
        LIBLINEAR's ``-e`` (maximal violation of the per-example subproblems).
    seed, time_limit
        As :class:`LiblinearAnchor`.
    """

    name = "liblinear_cs"
    supported = _LIBLINEAR_CS_PROBLEMS

    def _setup(self, problem) -> _Job:
        return self._liblinear_job(problem, problem.y.astype(np.float64), 4)

    def _read(self, problem, job: _Job, model) -> _Outcome:
        captured: _Captured = job.extra["captured"]
        wfull = _liblinear_weights(model)  # (d [+1], k), columns in get_labels() order
        labels = [int(c) for c in model.get_labels()]
        k, d = problem.n_classes, problem.n_features
        W = np.zeros((k, d))
        b = np.zeros(k)
        for j, label in enumerate(labels):
            W[label] = wfull[:d, j]
            if problem.bias == "regularized":
                b[label] = model.bias * wfull[d, j]
        status, message = self._status(captured)
        return _Outcome(
            status,
            {"W": W, "b": b},
            captured.iterations(),
            {"options": job.extra["options"], "labels": labels, "library_output": captured.text},
            message,
        )


# ---- LIBSVM -------------------------------------------------------------------------------------

#: LIBSVM's ``-t`` for each of our kernels.
_LIBSVM_KERNEL = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}

_SVC_PROBLEMS = {
    KernelDual: {"loss": ("hinge",), "bias": ("free",)},
    SoftMarginPrimal: {"loss": ("hinge",), "bias": ("free",)},
    SoftMarginDual: {"loss": ("hinge",), "bias": ("free",)},
}


def _with(constraints: Mapping, **more) -> dict:
    """``_SVC_PROBLEMS`` with extra constraints on every problem class (or on KernelDual only)."""
    kernel_only = more.pop("kernel_only", {})
    out = {}
    for cls, c in constraints.items():
        out[cls] = {**c, **more, **(kernel_only if cls is KernelDual else {})}
    return out


def _kernel_of(problem) -> dict:
    """The kernel parameters of a problem (the linear kernel for the soft-margin problems)."""
    if isinstance(problem, KernelDual):
        return problem.kernel_params
    return {"kernel": "linear", "gamma": 1.0, "degree": 3, "coef0": 0.0}


def _model_variables(problem, alpha: np.ndarray, b: float) -> dict:
    """Our variables from a kernel expansion: ``alpha, b`` (and ``w = Σ α_i y_i x_i``)."""
    if isinstance(problem, KernelDual):
        return {"alpha": alpha, "b": b}
    w = np.asarray(problem.X.T @ (alpha * problem.y)).ravel()
    return {"w": w, "b": b, "alpha": alpha}


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
    tol : float, default=1e-3
        LIBSVM's ``-e``: stop when the maximal violating pair's violation is ≤ tol.
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
    supported = _with(_SVC_PROBLEMS, sample_weight=_uniform_weights)

    def __init__(
        self,
        *,
        tol: float = 1e-3,
        cache_mb: float = 200.0,
        shrinking: bool = True,
        n_threads: int | None = 1,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, n_threads=n_threads, time_limit=time_limit)
        self.max_iter = None  # compiled into LIBSVM
        self.cache_mb = check_real("cache_mb", cache_mb, low=0.0)
        self.shrinking = check_bool("shrinking", shrinking)

    def _setup(self, problem) -> _Job:
        from libsvm.svm import PRINT_STRING_FUN
        from libsvm.svmutil import svm_parameter, svm_problem

        kp = _kernel_of(problem)
        t = _LIBSVM_KERNEL[kp["kernel"]]
        if kp["kernel"] == "precomputed":
            n = problem.n_samples
            rows = np.hstack([np.arange(1, n + 1, dtype=np.float64)[:, None], problem.X])
            prob = svm_problem(problem.y, rows, isKernel=True)
        else:
            prob = svm_problem(problem.y, _as_csr(problem.X))
        # repr() of a float round-trips exactly through the binding's float() parsing.
        options = (
            f"-s 0 -t {t} -c {_single_C(problem)!r} -g {float(kp['gamma'])!r} "
            f"-d {int(kp['degree'])} -r {float(kp['coef0'])!r} -e {float(self.tol)!r} "
            f"-m {float(self.cache_mb)!r} -h {int(self.shrinking)}"
        )
        param = svm_parameter(options)
        captured = _Captured(PRINT_STRING_FUN)
        param.print_func = captured.function
        return _Job(args=(prob, param), extra={"captured": captured, "options": options})

    def _train(self, job: _Job):
        from libsvm import svm
        from libsvm.svmutil import svm_train

        try:
            return svm_train(*job.args)
        finally:
            svm.libsvm.svm_set_print_string_function(ctypes.cast(None, svm.PRINT_STRING_FUN))

    def _read(self, problem, job: _Job, model) -> _Outcome:
        captured: _Captured = job.extra["captured"]
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
        return _Outcome(
            status,
            _model_variables(problem, alpha, b),
            captured.iterations(),
            {
                "options": job.extra["options"],
                "labels": [int(c) for c in labels],
                "n_sv": int(model.l),
                "library_output": captured.text,
            },
            message,
        )


# ---- scikit-learn -------------------------------------------------------------------------------


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

    def _train(self, job: _Job):
        est, X, y = job.args
        return _fit_catching(est, X, y, job.kwargs["sample_weight"])


class SklearnSVCAnchor(_SklearnAnchor):
    """scikit-learn's ``SVC`` (its own LIBSVM fork), mapped as :class:`LibsvmAnchor`.

    ``dual_coef_`` holds ``y'_j α_j`` for the support vectors ``support_``, with ``classes_[1]``
    the positive class, and ``intercept_`` is b. Per-example weights are passed as
    ``sample_weight`` (``C_i = C·w_i``, as ours).

    Parameters
    ----------
    tol : float, default=1e-3
        ``SVC(tol=)``, LIBSVM's ``-e``.
    max_iter : int or None, default=None
        ``SVC(max_iter=)`` in pair updates; None is scikit-learn's -1 (no cap).
    cache_mb : float, default=200
    shrinking : bool, default=True
    """

    name = "sklearn_svc"
    package = "scikit-learn"
    modules = ("sklearn.svm",)
    iteration_unit = "SMO iterations (pair updates)"
    supported = _SVC_PROBLEMS
    estimator_module: ClassVar[str] = "sklearn.svm"

    def __init__(
        self,
        *,
        tol: float = 1e-3,
        max_iter: int | None = None,
        cache_mb: float = 200.0,
        shrinking: bool = True,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, time_limit=time_limit)
        self.max_iter = None if max_iter is None else check_int("max_iter", max_iter, low=1)
        self.cache_mb = check_real("cache_mb", cache_mb, low=0.0)
        self.shrinking = check_bool("shrinking", shrinking)

    def _estimator(self, problem):
        SVC = importlib.import_module(self.estimator_module).SVC
        kp = _kernel_of(problem)
        return SVC(
            C=float(problem.C),
            kernel=kp["kernel"],
            gamma=float(kp["gamma"]),
            degree=int(kp["degree"]),
            coef0=float(kp["coef0"]),
            tol=self.tol,
            max_iter=-1 if self.max_iter is None else self.max_iter,
            cache_size=self.cache_mb,
            shrinking=self.shrinking,
            verbose=False,
        )

    def _setup(self, problem) -> _Job:
        X, y, sw = problem.X, problem.y, problem.sample_weight
        keep = None
        if sw is not None and np.any(sw == 0):
            # scikit-learn's LIBSVM drops zero-weight examples and numbers support_ within the
            # rest: hand it the rest ourselves (their α is 0: the box is [0, 0]) and map back.
            keep = np.flatnonzero(sw > 0)
            X = X[np.ix_(keep, keep)] if _kernel_of(problem)["kernel"] == "precomputed" else X[keep]
            y, sw = y[keep], sw[keep]
        return _Job(
            args=(self._estimator(problem), _as_sklearn_input(X), y),
            kwargs={"sample_weight": sw},
            extra={"keep": keep},
        )

    def _read(self, problem, job: _Job, fitted) -> _Outcome:
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
        return _Outcome(
            status,
            _model_variables(problem, alpha, b),
            iterations,
            {"n_sv": int(idx.size), "warnings": warned, **self._backend(est)},
            "; ".join(warned),
        )

    def _backend(self, est) -> dict:
        return {}


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
    supported = _with(_SVC_PROBLEMS, kernel_only={"kernel": _no_precomputed})
    estimator_module = "sklearnex.svm"

    def __init__(
        self,
        *,
        tol: float = 1e-3,
        max_iter: int | None = None,
        cache_mb: float = 200.0,
        shrinking: bool = True,
        n_threads: int | None = 1,
        time_limit: float | None = None,
    ):
        super().__init__(
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

    def _read(self, problem, job: _Job, fitted) -> _Outcome:
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


class SklearnLinearSVCAnchor(_SklearnAnchor):
    """scikit-learn's ``LinearSVC`` (its LIBLINEAR fork, ``dual=True``), mapped as
    :class:`LiblinearAnchor`.

    ``fit_intercept=True`` with ``intercept_scaling=s`` is LIBLINEAR's ``-B s``: the intercept is
    regularized, our ``bias="regularized"``; ``fit_intercept=False`` is ``bias="none"``.
    Per-example weights are passed as ``sample_weight``.

    Parameters
    ----------
    tol : float, default=1e-4
        ``LinearSVC(tol=)``, LIBLINEAR's ``-e`` (scikit-learn's default).
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
        tol: float = 1e-4,
        max_iter: int = 1000,
        seed: int = 0,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, max_iter=max_iter, time_limit=time_limit)
        self.seed = check_int("seed", seed, low=0)

    def _setup(self, problem) -> _Job:
        from sklearn.svm import LinearSVC

        est = LinearSVC(
            penalty="l2",
            loss=problem.loss,
            dual=True,
            C=float(problem.C),
            tol=self.tol,
            fit_intercept=problem.bias == "regularized",
            intercept_scaling=float(problem.bias_scale),
            max_iter=self.max_iter,
            random_state=self.seed,
            verbose=0,
        )
        return _Job(
            args=(est, _as_sklearn_input(problem.X), problem.y),
            kwargs={"sample_weight": problem.sample_weight},
        )

    def _read(self, problem, job: _Job, fitted) -> _Outcome:
        est, warned = fitted
        sign = _positive_sign(est.classes_)
        w = sign * np.asarray(est.coef_, dtype=np.float64)[0]
        b = sign * float(est.intercept_[0]) if problem.bias == "regularized" else 0.0
        iterations = int(np.max(est.n_iter_))
        status = Status.MAX_ITER if warned or iterations >= self.max_iter else Status.OPTIMAL
        return _Outcome(
            status, {"w": w, "b": b}, iterations, {"warnings": warned}, "; ".join(warned)
        )


class SklearnSGDAnchor(_SklearnAnchor):
    """scikit-learn's ``SGDClassifier(penalty="l2")`` on the hinge or squared hinge.

    scikit-learn minimizes ``(1/n) Σ_i w_i loss_i + α/2 ‖w‖²``, our C-form divided by ``nC``
    with ``α = λ = 1/(nC)`` (:func:`problems.scaling.lambda_from_C`). Its intercept is not
    regularized: ``fit_intercept=True`` is our ``bias="free"``, ``False`` is ``bias="none"``.
    Per-example weights are passed as ``sample_weight``.

    Parameters
    ----------
    tol : float or None, default=1e-3
        scikit-learn's rule: stop when the training loss has not improved by ``tol`` for
        ``n_iter_no_change`` epochs; None runs ``max_iter`` epochs (status ``max_iter``).
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

    Status is ``optimal`` when scikit-learn's rule stopped the run before ``max_iter``; the
    certified gap is what says how far from the optimum a stochastic method ended.
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
        tol: float | None = 1e-3,
        max_iter: int = 1000,
        learning_rate: str = "optimal",
        eta0: float = 0.01,
        average: bool | int = False,
        n_iter_no_change: int = 5,
        seed: int = 0,
        time_limit: float | None = None,
    ):
        super().__init__(max_iter=max_iter, time_limit=time_limit)
        self.tol = None if tol is None else check_real("tol", tol, low=0.0)
        self.learning_rate = str(learning_rate)
        self.eta0 = check_real("eta0", eta0, low=0.0)
        self.average = (
            average if isinstance(average, bool) else check_int("average", average, low=1)
        )
        self.n_iter_no_change = check_int("n_iter_no_change", n_iter_no_change, low=1)
        self.seed = check_int("seed", seed, low=0)

    def _setup(self, problem) -> _Job:
        from sklearn.linear_model import SGDClassifier

        est = SGDClassifier(
            loss=problem.loss,
            penalty="l2",
            alpha=lambda_from_C(problem.C, problem.n_samples),
            fit_intercept=problem.bias == "free",
            max_iter=self.max_iter,
            tol=self.tol,
            learning_rate=self.learning_rate,
            eta0=self.eta0,
            average=self.average,
            n_iter_no_change=self.n_iter_no_change,
            random_state=self.seed,
            verbose=0,
        )
        return _Job(
            args=(est, _as_sklearn_input(problem.X), problem.y),
            kwargs={"sample_weight": problem.sample_weight},
        )

    def _read(self, problem, job: _Job, fitted) -> _Outcome:
        est, warned = fitted
        sign = _positive_sign(est.classes_)
        w = sign * np.asarray(est.coef_, dtype=np.float64)[0]
        b = sign * float(est.intercept_[0]) if problem.bias == "free" else 0.0
        iterations = int(est.n_iter_)
        stopped_early = self.tol is not None and iterations < self.max_iter
        status = Status.OPTIMAL if stopped_early and not warned else Status.MAX_ITER
        return _Outcome(
            status,
            {"w": w, "b": b},
            iterations,
            {"sgd_alpha": est.alpha, "updates": int(est.t_ - 1), "warnings": warned},
            "; ".join(warned),
        )


# ---- names --------------------------------------------------------------------------------------

ANCHORS: dict[str, type[Anchor]] = {
    cls.name: cls
    for cls in (
        LiblinearAnchor,
        LiblinearCSAnchor,
        LibsvmAnchor,
        SklearnSVCAnchor,
        SklearnexSVCAnchor,
        SklearnLinearSVCAnchor,
        SklearnSGDAnchor,
    )
}


def get(name: str, **options) -> Anchor:
    """The anchor ``name`` configured with ``options``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    TypeError
        For an option the anchor does not take.
    """
    try:
        cls = ANCHORS[name]
    except KeyError:
        raise ValueError(f"unknown anchor {name!r}; known anchors: {', '.join(ANCHORS)}") from None
    try:
        return cls(**options)
    except TypeError as exc:
        raise TypeError(f"anchor {name!r}: {exc}") from None


def available() -> dict[str, str | None]:
    """Every anchor name mapped to None when its package imports, else the reason it cannot."""
    return {name: cls.missing_reason() for name, cls in ANCHORS.items()}
