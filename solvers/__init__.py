"""How it is solved: one module per method, jitted cores in ``solvers/_jit``.

``solvers.registry.get(name, **options)`` returns a configured solver.
"""

from svmbench.solvers.base import Checkpoint, ConvergenceWarning, Solver, SolveResult, Status

__all__ = ["Checkpoint", "ConvergenceWarning", "SolveResult", "Solver", "Status"]
