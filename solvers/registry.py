"""The one registry of solver names: this suite's methods and the anchors, and what each accepts.

``get("smo", tol=1e-6)`` or ``get("libsvm")`` returns a configured solver; the names are short and
stable, the same in the estimators, the CLI, the suites and the results store. The methods
(:data:`SOLVER_MODULES`) and the anchors (:data:`ANCHOR_MODULES`: LIBSVM, LIBLINEAR,
scikit-learn and oneDAL run as solvers, their libraries imported only when they train) register
themselves with :func:`register` when their module is imported. :func:`names` lists the methods
(what a suite's ``"*"`` means), :func:`anchor_names` the anchors; :func:`solver_class` and
:func:`get` resolve either.
"""

from __future__ import annotations

import difflib
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

#: Modules of the anchors (adapters of other libraries, judged by the same certificates).
ANCHOR_MODULES = (
    "svmbench.solvers.anchors.liblinear",
    "svmbench.solvers.anchors.libsvm",
    "svmbench.solvers.anchors.sklearn",
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
        for module in (*SOLVER_MODULES, *ANCHOR_MODULES):
            importlib.import_module(module)
        _loaded = True


def names() -> list[str]:
    """The names of this suite's methods (the anchors excluded), sorted."""
    _load()
    return sorted(n for n, cls in _REGISTRY.items() if not cls.anchor)


def anchor_names(*, available_only: bool = False) -> list[str]:
    """The names of the anchors, sorted; with ``available_only``, those whose library imports."""
    _load()
    found = sorted(n for n, cls in _REGISTRY.items() if cls.anchor)
    if available_only:
        return [n for n in found if _REGISTRY[n].missing_reason() is None]
    return found


def is_anchor(name: str) -> bool:
    """Whether ``name`` is a registered anchor."""
    _load()
    cls = _REGISTRY.get(name)
    return cls is not None and cls.anchor


def missing_reason(name: str) -> str | None:
    """Why the solver ``name`` cannot run here (an anchor whose library is not installed), or
    None: methods, and anchors whose library imports."""
    return solver_class(name).missing_reason()


def available_anchors() -> dict[str, str | None]:
    """Every anchor name mapped to None when its library imports, else the reason it cannot."""
    return {name: _REGISTRY[name].missing_reason() for name in anchor_names()}


def solver_class(name: str) -> type[Solver]:
    """The class registered under ``name``, a method or an anchor (``ValueError`` naming the
    closest names and listing all of them otherwise)."""
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        pass
    if not isinstance(name, str):
        raise TypeError(f"solver must be a name (str), got {type(name).__name__}")
    known = names() + anchor_names()
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    raise ValueError(f"unknown solver {name!r}{hint}; known solvers: {', '.join(known)}")


def get(name: str, **options) -> Solver:
    """A solver configured with ``options`` (unknown options raise ``TypeError``)."""
    cls = solver_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise TypeError(f"solver {name!r}: {exc}") from None


def solvers_for(problem: Problem, *, anchors: bool = False) -> list[str]:
    """Names of the methods (and, with ``anchors``, of the available anchors) that accept
    ``problem``."""
    pool = names() + (anchor_names(available_only=True) if anchors else [])
    return [n for n in pool if _REGISTRY[n].unsupported_reason(problem) is None]


@functools.cache
def accepts_option(cls: type, option: str) -> bool:
    """Whether ``cls(option=...)`` is taken: its ``__init__`` names ``option``, or passes
    ``**common`` on to a base class's that does (an ``__init__`` without ``**`` ends the search:
    what it does not name, it refuses). Cached: a signature lookup costs about 0.1 ms."""
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
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return False
    return False
