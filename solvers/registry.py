"""Names of the solvers and which problems each accepts.

``get("smo", tol=1e-6)`` returns a configured solver; the names are short and stable, the same in
the CLI, the suites and the results store.
"""

from __future__ import annotations

import functools
import importlib
import inspect

from svmbench.problems.base import Problem
from svmbench.solvers.base import Solver

#: Modules that define solvers; each registers its classes with :func:`register` on import.
SOLVER_MODULES = (
    "svmbench.solvers.osqp_ref",
    "svmbench.solvers.clarabel_ref",
    "svmbench.solvers.cvxpy_ref",
    "svmbench.solvers.barrier",
    "svmbench.solvers.dcd",
    "svmbench.solvers.low_rank",
    "svmbench.solvers.accpm",
    "svmbench.solvers.smo",
    "svmbench.solvers.smo_batch",
    "svmbench.solvers.multiclass",
    "svmbench.solvers.reductions",
    "svmbench.solvers.structured",
    "svmbench.solvers.pegasos",
    "svmbench.solvers.perceptron",
    "svmbench.solvers.auto",
)

_REGISTRY: dict[str, type[Solver]] = {}
_loaded = False


def register(cls: type[Solver]) -> type[Solver]:
    """Class decorator adding a solver under its ``name``."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"two solvers are named {cls.name!r}")
    _REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in SOLVER_MODULES:
            importlib.import_module(module)
        _loaded = True


def names() -> list[str]:
    """All registered solver names, sorted."""
    _load()
    return sorted(_REGISTRY)


def solver_class(name: str) -> type[Solver]:
    """The class registered under ``name`` (``ValueError`` listing the names otherwise)."""
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; known solvers: {', '.join(names())}") from None


def get(name: str, **options) -> Solver:
    """A solver configured with ``options`` (unknown options raise ``TypeError``)."""
    cls = solver_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise TypeError(f"solver {name!r}: {exc}") from None


def solvers_for(problem: Problem) -> list[str]:
    """Names of the solvers that accept ``problem``."""
    return [n for n in names() if _REGISTRY[n].unsupported_reason(problem) is None]


@functools.cache
def accepts_option(cls: type, option: str) -> bool:
    """Whether some ``__init__`` in ``cls``'s MRO names ``option`` explicitly (``**common``
    does not count). Cached: a signature lookup costs about 0.1 ms."""
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            params = inspect.signature(init).parameters
        except (TypeError, ValueError):
            continue
        if option in params and params[option].kind is not inspect.Parameter.VAR_KEYWORD:
            return True
    return False
