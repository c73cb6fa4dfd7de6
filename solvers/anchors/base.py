"""The base of the anchor adapters: set up untimed, time the library's training call only, read
the model back, and let the problem certify it (the contract is stated in
:mod:`svmbench.solvers.anchors`).

Also what several adapters share: the capability checks of the official bindings (one C for all
examples), the float64 CSR/dense conversions that let the libraries read our data without a copy,
and the capture of LIBSVM's and LIBLINEAR's printed output (their iteration count and their
"reaching max number of iterations" warning).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems.base import Problem
from svmbench.problems.validation import check_int
from svmbench.solvers.base import Outcome, Solver, Status
from svmbench.solvers.time_budget import refused_outcome
from svmbench.solvers.worker import Stopped

# ---- shared by the adapters: a capability check, the conversions ------------------------------


def uniform_weights(problem: Problem) -> str | None:
    """LIBSVM and LIBLINEAR (official bindings) take one C for all examples."""
    sw = problem.sample_weight
    if sw is None or np.all(sw == sw[0]):
        return None
    return (
        "per-example weights are not supported (the official binding takes a single C; "
        "only uniform sample_weight is accepted)"
    )


def single_C(problem: Problem) -> float:
    """The one C of a problem with uniform weights: ``C · sample_weight_0``."""
    return float(problem.upper_bounds[0])


def as_csr(X) -> sparse.csr_matrix:
    """A float64 CSR copy (or the matrix itself) with sorted indices."""
    A = sparse.csr_matrix(X, dtype=np.float64)
    A.sort_indices()
    return A


def as_sklearn_input(X):
    """float64 C-contiguous dense or CSR: what scikit-learn's ``fit`` takes without copying."""
    if sparse.issparse(X):
        return as_csr(X)
    return np.ascontiguousarray(X, dtype=np.float64)


# ---- captured output of LIBSVM / LIBLINEAR -------------------------------------------------------

_ITER = re.compile(r"#iter\s*=\s*(\d+)")
_MAX_ITER_WARNING = "reaching max number of iterations"


class Captured:
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
class Job:
    """What an adapter prepared before the clock starts: the arguments of the timed call."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    @classmethod
    def captured(cls, prob, param, print_type, options: str) -> Job:
        """The ``(problem, parameter)`` of a LIBSVM/LIBLINEAR training call, with the library's
        output going to a :class:`Captured` (``extra["captured"]``) instead of the terminal."""
        captured = Captured(print_type)
        param.print_func = captured.function
        return cls(args=(prob, param), extra={"captured": captured, "options": options})


@dataclass
class LibraryOutcome:
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
        and a message saying by how much it overran. Adapters that train in a worker process
        (``sklearn_svc``) stop it at the limit instead: status ``time_limit``, and the starting
        point (:func:`~solvers.time_budget.origin`) for the library's model.
    **common
        ``tol`` of :class:`~solvers.base.Solver`: the certified relative gap asked for, which
        judges ``optimal`` (the library stops on its own tolerance, each adapter's ``eps``, and
        is never told ``tol``); ``max_iter`` in the library's own sense.
    """

    package: ClassVar[str]
    modules: ClassVar[tuple[str, ...]]
    warm_start_refusal = "takes no warm start (the library runs from its own start)"
    reports_progress = False
    anchor = True
    former_names: ClassVar[Mapping[str, str]] = {"tol": "eps"}

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
        job.extra["time_left"] = self.time_limit - clock.wall  # for a worker stopped at the limit
        with self._thread_limit():
            t0 = clock.elapsed
            model = self._train(job)
            excluded = job.extra.get("excluded_time", 0.0)  # a worker process's fork and transfer
            train_time = clock.elapsed - t0 - excluded
        if isinstance(model, Stopped):
            return refused_outcome(
                {
                    "stage": "the training call",
                    "wall": clock.wall,
                    "time_limit": self.time_limit,
                    "message": (
                        f"training did not end within time_limit={self.time_limit:g} s (the "
                        "library cannot be interrupted): its worker process was stopped at "
                        "the limit, before the library returned a model"
                    ),
                },
                problem,
                info={"threads": self.threads},
            )
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
            excluded_time=excluded,
        )

    def _setup(self, problem: Problem) -> Job:
        raise NotImplementedError

    def _train(self, job: Job) -> Any:
        raise NotImplementedError

    def _read(self, problem: Problem, job: Job, model) -> LibraryOutcome:
        raise NotImplementedError
