"""The LIBLINEAR anchors (official binding): ``liblinear`` (dual coordinate descent, ``-s 3`` /
``-s 1``) and ``liblinear_cs`` (Crammer–Singer, ``-s 4``).

One module per library family keeps each adapter beside the one binding it speaks to; the
options, the timed call and the way a model is read back are described in
:mod:`svmbench.solvers.anchors` and on each class.
"""

from __future__ import annotations

import ctypes

import numpy as np

from svmbench.problems import MulticlassHinge, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.validation import check_int, check_real
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


def _zero_one_cost(problem: MulticlassHinge) -> str | None:
    k = problem.n_classes
    if np.array_equal(problem.cost, 1.0 - np.eye(k)):
        return None
    return "only the 0-1 cost (Crammer-Singer) is supported, got another cost matrix"


def liblinear_weights(model) -> np.ndarray:
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

    def __init__(
        self,
        *,
        eps: float = 0.1,
        tol: float = 1e-6,
        seed: int = 0,
        time_limit: float | None = None,
    ):
        super().__init__(tol=tol, time_limit=time_limit)
        self.eps = check_real("eps", eps, low=0.0)
        # LIBLINEAR's caps are compiled in (300 outer iterations for the dual CD solvers of
        # liblinear 2.50, 100000 for Crammer-Singer); the binding cannot change them.
        self.max_iter = None
        self.seed = check_int("seed", seed, low=0)

    def _bias_option(self, problem) -> float:
        return problem.bias_scale if problem.bias == "regularized" else -1.0

    def _liblinear_job(self, problem, labels: np.ndarray, solver_type: int) -> Job:
        from liblinear.liblinear import PRINT_STRING_FUN
        from liblinear.liblinearutil import parameter
        from liblinear.liblinearutil import problem as ll_problem

        C = single_C(problem)
        B = self._bias_option(problem)
        prob = ll_problem(np.asarray(labels, dtype=np.float64), as_csr(problem.X))
        # repr() of a float round-trips exactly through the binding's float() parsing.
        options = f"-s {solver_type} -c {C!r} -e {float(self.eps)!r} -B {float(B)!r}"
        job = Job.captured(prob, parameter(options), PRINT_STRING_FUN, options)
        _seed_libc_rand(self.seed)  # last step before the clock: nothing else draws from rand()
        return job

    def _train(self, job: Job):
        from liblinear import liblinear as ll
        from liblinear.liblinearutil import train

        try:
            return train(*job.args)
        finally:
            # Restore LIBLINEAR's default printer so no pointer to our callback outlives it.
            ll.liblinear.set_print_string_function(ctypes.cast(None, ll.PRINT_STRING_FUN))

    def _status(self, captured: Captured) -> tuple[Status, str]:
        if captured.reached_max_iter:
            return Status.MAX_ITER, "LIBLINEAR reached its compiled-in iteration cap"
        return Status.OPTIMAL, "LIBLINEAR's stopping rule was met (maximal dual violation ≤ -e)"


_LIBLINEAR_PROBLEMS = {
    SoftMarginPrimal: {"bias": ("regularized", "none"), "sample_weight": uniform_weights},
    SoftMarginDual: {"bias": ("regularized", "none"), "sample_weight": uniform_weights},
}
_LIBLINEAR_CS_PROBLEMS = {
    MulticlassHinge: {"cost": _zero_one_cost, "sample_weight": uniform_weights},
}


@register
class LiblinearAnchor(_LiblinearBase):
    """LIBLINEAR's dual coordinate descent (Hsieh et al., ICML 2008): ``-s 3`` (hinge) or
    ``-s 1`` (squared hinge).

    The bias is LIBLINEAR's ``-B s``: an extra feature of value ``s = bias_scale`` whose weight is
    regularized, i.e. our ``bias="regularized"``; ``bias="none"`` is ``-B -1``. A free bias is not
    supported (LIBLINEAR's dual solvers have no equality constraint).

    Parameters
    ----------
    eps : float, default=0.1
        LIBLINEAR's ``-e``: stop when the spread of the projected gradient (the maximal dual
        violation) is ≤ eps.
    tol : float, default=1e-6
        The certified relative gap asked for: ``optimal`` when LIBLINEAR's rule held and the
        problem certifies its model at ``tol``.
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

    def _setup(self, problem) -> Job:
        solver_type = 3 if problem.loss == "hinge" else 1
        return self._liblinear_job(problem, problem.y, solver_type)

    def _read(self, problem, job: Job, model) -> LibraryOutcome:
        captured: Captured = job.extra["captured"]
        wfull = liblinear_weights(model)[:, 0]
        # nr_w = 1: the decision function of labels[0]. LIBLINEAR puts +1 first for ±1 labels
        # whatever their order in the data; the sign keeps the mapping right regardless.
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        d = problem.n_features
        w = sign * wfull[:d]
        b = sign * model.bias * wfull[d] if problem.bias == "regularized" else 0.0
        status, message = self._status(captured)
        return LibraryOutcome(
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


@register
class LiblinearCSAnchor(_LiblinearBase):
    """LIBLINEAR's Crammer–Singer solver ``-s 4`` (Keerthi et al., KDD 2008) for the multiclass
    hinge with the 0-1 cost; bias none (``-B -1``) or regularized (``-B s``).

    LIBLINEAR orders the classes by first appearance (``get_labels()``); the adapter maps its
    weight columns back to our classes 0..k-1.

    Parameters
    ----------
    eps : float, default=0.1
        LIBLINEAR's ``-e`` (maximal violation of the per-example subproblems).
    tol, seed, time_limit
        As :class:`LiblinearAnchor`.
    """

    name = "liblinear_cs"
    supported = _LIBLINEAR_CS_PROBLEMS

    def _setup(self, problem) -> Job:
        return self._liblinear_job(problem, problem.y.astype(np.float64), 4)

    def _read(self, problem, job: Job, model) -> LibraryOutcome:
        captured: Captured = job.extra["captured"]
        wfull = liblinear_weights(model)  # (d [+1], k), columns in get_labels() order
        labels = [int(c) for c in model.get_labels()]
        k, d = problem.n_classes, problem.n_features
        W = np.zeros((k, d))
        b = np.zeros(k)
        for j, label in enumerate(labels):
            W[label] = wfull[:d, j]
            if problem.bias == "regularized":
                b[label] = model.bias * wfull[d, j]
        status, message = self._status(captured)
        return LibraryOutcome(
            status,
            {"W": W, "b": b},
            captured.iterations(),
            {"options": job.extra["options"], "labels": labels, "library_output": captured.text},
            message,
        )
