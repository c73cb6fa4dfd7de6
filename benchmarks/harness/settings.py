"""How every case of a suite runs (:class:`Settings`), and the grid expansion of one suite entry.

Shared by :mod:`~svmbench.benchmarks.harness.cases` (which expands a suite into cases) and
:mod:`~svmbench.benchmarks.harness.suite_files` (which reads and checks suite files).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svmbench.benchmarks.harness.cases import Case

#: The solvers that can be a run's reference (the distance column's optimum).
REFERENCES = ("osqp", "clarabel", "cvxpy")

#: Problem parameters that are arrays, or set from the data, never from a suite.
DATA_FIELDS = ("X", "y", "sample_weight", "cost")


@dataclass(frozen=True)
class Settings:
    """How every case of a suite runs.

    Parameters
    ----------
    tol : float or None, default=None
        The certified relative gap asked for, given to every solver (the references and
        anchors too: their libraries keep their own tolerance, ``eps``); None: each solver's
        default. A solver entry's own ``tol`` wins.
    time_limit : float, default=60.0
        Seconds per solve. Solvers get it as their ``time_limit`` option (they stop with status
        ``time_limit``); the worker is killed ``grace`` seconds later (status ``timeout``).
    memory_limit_mb : float or None, default=None
        Budget per case; a case whose estimated memory exceeds it is skipped with a reason.
        None: 80 % of the available memory divided by the number of parallel jobs.
    repeat : int, default=1
        Solves per case; the record keeps the median solve time and all of them.
    threads : int, default=1
        Numba and BLAS threads per case (NUMBA_NUM_THREADS, threadpoolctl), recorded.
    split : float or None, default=None
        Fraction of a seeded stratified test split added to every data spec that has none.
    reference : {"clarabel", "osqp", "cvxpy", "none"}, default="clarabel"
        Reference solver of the distance column ("none": no reference, distance NaN).
    reference_time_limit : float, default=300.0
        Seconds allowed to the reference solve of a case (cached across cases and workers).
    grace : float, default=10.0
        Seconds beyond ``time_limit`` before a worker is killed; data loading gets the same
        allowance plus a minute.
    escalate : bool, default=False
        Scaling runs: once a (problem, data family, solver) case does not finish within its
        limit, the larger-n cases of the same group are skipped.
    imports : tuple of str, default=()
        Modules imported by the main process and every worker before anything runs (to register
        extra solvers, e.g. the test-only ones).
    """

    tol: float | None = None
    time_limit: float = 60.0
    memory_limit_mb: float | None = None
    repeat: int = 1
    threads: int = 1
    split: float | None = None
    reference: str = "clarabel"
    reference_time_limit: float = 300.0
    grace: float = 10.0
    escalate: bool = False
    imports: tuple[str, ...] = ()

    def __post_init__(self):
        if self.reference not in (*REFERENCES, "none"):
            raise ValueError(
                f"reference must be one of {', '.join(REFERENCES)} or 'none', "
                f"got {self.reference!r}"
            )
        for name in ("repeat", "threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        positive = ["time_limit", "reference_time_limit"]
        positive += [n for n in ("tol", "memory_limit_mb") if getattr(self, n) is not None]
        for name in positive:
            value = getattr(self, name)
            if not _positive_number(value):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        if not (_positive_number(self.grace) or self.grace == 0):
            raise ValueError(f"grace must be a finite number >= 0, got {self.grace!r}")
        if self.split is not None and not (_positive_number(self.split) and self.split < 1):
            raise ValueError(f"split must be a fraction in (0, 1), got {self.split!r}")
        if not isinstance(self.escalate, bool):
            raise ValueError(f"escalate must be true or false, got {self.escalate!r}")
        object.__setattr__(self, "imports", tuple(self.imports))

    @classmethod
    def from_suite(cls, suite: dict[str, Any], **overrides) -> Settings:
        """The settings of ``suite`` (top-level keys), with non-None ``overrides`` applied."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in suite.items() if k in names}
        values.update({k: v for k, v in overrides.items() if v is not None and k in names})
        return cls(**values)

    def hard_limit(self, case: Case) -> float:
        """Seconds a worker may spend on the solves of ``case`` before it is killed."""
        limit = case.solver_options.get("time_limit", self.time_limit)
        return float(limit) * self.repeat + self.grace


def grid(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """Expand list-valued parameters of one entry into their product."""
    keys = sorted(entry)
    values = [entry[k] if isinstance(entry[k], list) else [entry[k]] for k in keys]
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def _positive_number(value) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
