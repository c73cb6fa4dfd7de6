"""The clocks of one solve and the schedules of its certificates.

:class:`Clock` keeps the solver clock (paused for certificates drawn only for the trace and for
callbacks) beside the wall clock, which is never paused. The schedules decide when an iterative
solver certifies: stopping tests by counted work (:class:`CheckSchedule`), trace points on a
geometric schedule within a share of the wall time (:class:`TraceSchedule`).
"""

from __future__ import annotations

import math
import time


class Clock:
    """The solver clock of one solve (paused for trace certificates and callbacks), beside its
    wall clock (never paused) and the seconds spent certifying for the trace."""

    def __init__(self) -> None:
        self._elapsed = 0.0
        self._started: float | None = None
        self._origin: float | None = None
        self.certify_time = 0.0

    def start(self) -> Clock:
        if self._started is None:
            self._started = time.perf_counter()
            if self._origin is None:
                self._origin = self._started
        return self

    @property
    def wall(self) -> float:
        """Seconds since the clock first started, pauses included."""
        return 0.0 if self._origin is None else time.perf_counter() - self._origin

    def certifying(self) -> _Certifying:
        """Pause the solver clock for a certificate drawn only for the trace, and count it."""
        return _Certifying(self)

    def stop(self) -> float:
        if self._started is not None:
            self._elapsed += time.perf_counter() - self._started
            self._started = None
        return self._elapsed

    @property
    def elapsed(self) -> float:
        running = 0.0 if self._started is None else time.perf_counter() - self._started
        return self._elapsed + running

    def paused(self) -> _Paused:
        """Stop the solver clock within the block (it runs on after it if it ran before)."""
        return _Paused(self)


class _Paused:
    """:meth:`Clock.paused` (a plain context manager: a generator-based one costs several
    microseconds a block, and a small fit enters a dozen)."""

    __slots__ = ("clock", "was_running")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.was_running = False

    def __enter__(self) -> None:
        self.was_running = self.clock._started is not None
        self.clock.stop()

    def __exit__(self, *exc) -> bool:
        if self.was_running:
            self.clock.start()
        return False


class _Certifying(_Paused):
    """:meth:`Clock.certifying`: the pause, its seconds added to ``certify_time`` when the
    block ends normally."""

    __slots__ = ("tic",)

    def __enter__(self) -> None:
        self.tic = time.perf_counter()
        super().__enter__()

    def __exit__(self, exc_type, *exc) -> bool:
        super().__exit__()
        if exc_type is None:
            self.clock.certify_time += time.perf_counter() - self.tic
        return False


#: The fraction of the wall time that certificates drawn only for the trace may take.
TRACE_BUDGET = 0.1
#: Ratio of the geometric schedule of trace checkpoints (in chunks).
TRACE_GROWTH = 1.4
#: The share of a solve's counted work that the stopping tests may take when ``check_every`` is
#: adaptive (:class:`CheckSchedule`).
CHECK_BUDGET = 0.1
#: The fixed cost of a certificate in the interpreter (a dozen NumPy calls, about 80 µs on small
#: problems), counted as the entries an epoch reads in that time (about one per nanosecond) and
#: added to every certificate's counted work: without it, tiny problems were tested after every
#: chunk and spent most of their time in certificates (docs/measurements.md, "Certificate
#: schedule").
CERTIFICATE_FIXED_WORK = 80_000.0


class CheckSchedule:
    """When a stopping test is due: every ``every`` chunks (fixed), or, adaptive, by counted
    work (passes over X, kernel entries; never seconds, so that iteration counts do not depend on
    the machine): the (m+1)-th test comes at the first chunk where ``CHECK_BUDGET`` times the
    work done so far reaches ``(m + 1)`` certificates' work (its arithmetic plus
    :data:`CERTIFICATE_FIXED_WORK`). Every test counts, the forced ones (native rule, warm start)
    too, so the tests take at most ``CHECK_BUDGET`` of the work but for those forced beyond the
    budget."""

    def __init__(self, every: int, certificate_work: float | None) -> None:
        self.every = every
        self.adaptive = certificate_work is not None and certificate_work > 0
        self.cost = certificate_work + CERTIFICATE_FIXED_WORK if self.adaptive else None
        self.work = 0.0
        self.checks = 0

    def due(self, chunk: int, work: float | None) -> bool:
        if self.adaptive and work is not None:
            self.work += work
            return CHECK_BUDGET * self.work >= (self.checks + 1) * self.cost
        return chunk % self.every == 0


class TraceSchedule:
    """When a trace-only certificate is wanted: chunks 1, 2, 3, 4, 6, 9, 13, … (ratio
    ``TRACE_GROWTH``), the first always, the others when the trace's certificates, this one
    included (its cost taken as their mean so far), stay within ``TRACE_BUDGET`` of the wall
    time; every chunk for ``"every"``. Judged before the certificate rather than after, so that
    the budget holds on small problems too, where a certificate costs more than a chunk of
    epochs (docs/measurements.md, "Certificate schedule")."""

    def __init__(self, mode) -> None:
        self.mode = mode
        self.next = 1
        self.drawn = 0

    def wants(self, chunk: int, clock: Clock) -> bool:
        if self.mode == "every":
            return True
        if not self.mode or chunk < self.next:
            return False
        self.next = max(chunk + 1, math.floor(chunk * TRACE_GROWTH))
        if self.drawn:
            cost = clock.certify_time / self.drawn
            if clock.certify_time + cost > TRACE_BUDGET * clock.wall:
                return False
        self.drawn += 1
        return True
