"""Time limits that bound set-up work: a stage is started only if it can end within the limit.

A solver's ``time_limit`` bounds the whole call, its set-up included (a kernel matrix, the
exported QP, a library's factorization, a dense Newton system). Before such a stage a solver asks
:func:`stage_refusal`: the stage is refused when the limit is already reached, or when its
estimated seconds would end it more than :data:`ALLOWED_OVERRUN` past the limit. A refused stage
ends the solve as ``time_limit`` with the best point so far (before the first iterate, the
starting point of a binary problem, :func:`origin`; none for the other kinds, ``certified=False``),
never an exception, and ``info["time_limit"]`` says which stage, its
estimate and how it was made (docs/ARCHITECTURE.md §4, "Times").

Estimates are counted work over rates measured once per process by tiny calibrations
(:func:`dense_factor_rate`: a 512×512 Cholesky), or the stage itself timed on a small sample and
extrapolated by its known exponent (:func:`extrapolated_seconds`). They are coarse (a factor of
two either way); what they must do is tell a stage of milliseconds from one of minutes.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable

import numpy as np
import scipy.linalg
from scipy import sparse

from svmbench.solvers.clock import Clock
from svmbench.solvers.records import Outcome, Status

#: Seconds a stage may be expected to end past the time limit and still be started (estimates
#: are coarse: refusing every stage that might cross the limit by a hair would refuse too much).
ALLOWED_OVERRUN = 1.0
#: Work below this many flops is never estimated (no calibration is run for it).
NEGLIGIBLE_FLOPS = 1e8


def best_seconds(run: Callable[[], object], repeats: int = 3) -> float:
    """The fewest seconds ``run()`` took in ``repeats`` calls (a calibration's timing)."""
    best = math.inf
    for _ in range(repeats):
        tic = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - tic)
    return max(best, 1e-9)


@functools.cache
def dense_factor_rate() -> float:
    """Flops per second of a dense Cholesky factorization (``n³/3`` flops) in this process, with
    its BLAS threads: the best of three 512×512 factorizations (a few milliseconds)."""
    n = 512
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n))
    H = A @ A.T + n * np.eye(n)
    seconds = best_seconds(lambda: scipy.linalg.cho_factor(H, lower=True, check_finite=False))
    return n**3 / 3.0 / seconds


def dense_seconds(flops: float) -> float:
    """Seconds of ``flops`` of dense linear algebra at :func:`dense_factor_rate` (0 for
    negligible work, without calibrating)."""
    return 0.0 if flops < NEGLIGIBLE_FLOPS else flops / dense_factor_rate()


def extrapolated_seconds(sample_seconds: float, sample_size: int, size: int, power: float) -> float:
    """``sample_seconds·(size/sample_size)^power``: a stage timed on a sample of ``sample_size``
    examples, extrapolated to ``size`` by its exponent (2 for a kernel matrix, 3 for a dense
    factorization)."""
    return sample_seconds * (size / max(sample_size, 1)) ** power


#: Examples on which a kernel matrix is timed before it is extrapolated to n.
KERNEL_SAMPLE = 256


def kernel_matrix_seconds(problem, as_csc: bool = False) -> tuple[float, str] | None:
    """Estimated seconds of a kernel dual's kernel matrix (0 when already computed; with
    ``as_csc``, also its dense upper triangle as CSC, as ``to_qp`` exports it), timed on the
    first ``KERNEL_SAMPLE`` examples and extrapolated by n²; None for the other kinds and for
    negligible sizes."""
    n = problem.n_samples
    if not hasattr(problem, "kernel_spec") or n**2 * problem.n_features < NEGLIGIBLE_FLOPS:
        return None
    m = min(n, KERNEL_SAMPLE)
    cached = problem.kernel == "precomputed" or "gram" in problem.__dict__
    if cached and not as_csc:
        return None
    # the signs only shape the export's arithmetic: a one-class problem has no labels
    labels = getattr(problem, "y", None)
    z = np.ones(m) if labels is None else labels[:m]
    sample, signs = problem.X[:m], np.outer(z, z)

    def build():
        K = problem.gram[:m, :m] if cached else problem.kernel_spec(sample)
        if as_csc:
            sparse.triu(sparse.csc_matrix(K * signs), format="csc")

    seconds = extrapolated_seconds(best_seconds(build, 2), m, n, 2)
    return seconds, f"the kernel matrix timed on {m} examples, times (n/{m})²"


def stage_refusal(
    clock: Clock,
    time_limit: float,
    stage: str,
    seconds: float | None = None,
    how: str = "",
) -> dict | None:
    """None when ``stage`` may start; else why not, as the ``info["time_limit"]`` entry: the
    limit already reached, or an estimate of ``seconds`` (made as ``how`` says) that would end
    the stage more than :data:`ALLOWED_OVERRUN` past ``time_limit``."""
    if not math.isfinite(time_limit):
        return None
    wall = clock.wall
    beyond = seconds is not None and wall + seconds > time_limit + ALLOWED_OVERRUN
    if wall < time_limit and not beyond:
        return None
    refusal = {"stage": stage, "wall": wall, "time_limit": time_limit}
    if seconds is not None:
        refusal.update(estimate_seconds=seconds, estimate=how)
    if wall >= time_limit:
        message = f"time limit {time_limit:g} s reached ({wall:.3g} s) before {stage}"
    else:
        message = (
            f"{stage} not started: estimated at {seconds:.3g} s ({how}), "
            f"{time_limit - wall:.3g} s left of time_limit={time_limit:g} s"
        )
    if seconds is not None and wall >= time_limit:
        message += f" (estimated at {seconds:.3g} s: {how})"
    refusal["message"] = message
    return refusal


def origin(problem) -> dict:
    """The point every method here starts from, as ``certificate`` arguments, where it is cheap
    to certify: α = 0 for the binary duals, w = 0 and b = 0 for the binary primals (a hard
    margin's certifies nothing: its margins are 0); ``{}`` for the other kinds."""
    from svmbench.problems import HardMarginPrimal, KernelDual, SoftMarginDual, SoftMarginPrimal

    if isinstance(problem, (KernelDual, SoftMarginDual)):
        return {"alpha": np.zeros(problem.n_samples)}
    if isinstance(problem, (SoftMarginPrimal, HardMarginPrimal)):
        return {"w": np.zeros(problem.n_features), "b": 0.0}
    return {}


def refused_outcome(refusal: dict, problem=None, info: dict | None = None) -> Outcome:
    """The :class:`Outcome` of a solve stopped before its method made a point: status
    ``time_limit``, the refusal in ``info["time_limit"]``, and as the point so far the
    :func:`origin` of ``problem`` (certified like any other) or none (``certified=False``)."""
    variables = {} if problem is None else origin(problem)
    message = refusal["message"]
    if variables:
        message += "; the record holds the starting point (the origin), certified"
    return Outcome(
        status=Status.TIME_LIMIT,
        variables=variables,
        iterations=0,
        message=message,
        info={**(info or {}), "time_limit": refusal},
    )
