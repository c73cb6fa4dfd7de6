"""The one registry of solver names: this suite's methods and the anchors, and what each accepts.

``get("smo", tol=1e-6)`` or ``get("libsvm")`` returns a configured solver; the names are short and
stable, the same in the estimators, the CLI, the suites and the results store. The methods
(:data:`SOLVER_MODULES`) and the anchors (:data:`ANCHOR_MODULES`: LIBSVM, LIBLINEAR,
scikit-learn and oneDAL run as solvers, their libraries imported only when they train) register
themselves with :func:`register` when their module is imported. :func:`names` lists the methods
(what a suite's ``"*"`` means), :func:`anchor_names` the anchors; :func:`solver_class` and
:func:`get` resolve either; :func:`renamed_options` maps the option names of suites and stored
records written before a rename.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from svmbench.problems.base import Problem
from svmbench.solvers.base import Solver

#: Where each solver is defined: a name resolves by importing its one module, so that a fit
#: by ``auto`` loads neither the anchors nor the methods it never runs. tests/solvers/
#: test_registry.py checks this table against what the modules register.
METHOD_HOMES = {
    "osqp": "svmbench.solvers.osqp_ref",
    "clarabel": "svmbench.solvers.clarabel_ref",
    "cvxpy": "svmbench.solvers.cvxpy_ref",
    "barrier": "svmbench.solvers.barrier",
    "dcd": "svmbench.solvers.dcd",
    "linear_smo": "svmbench.solvers.linear_smo",
    "squared_hinge_newton": "svmbench.solvers.squared_hinge_newton",
    "low_rank": "svmbench.solvers.low_rank",
    "accpm": "svmbench.solvers.accpm",
    "smo": "svmbench.solvers.smo",
    "smo_batch": "svmbench.solvers.smo_batch",
    "active_set": "svmbench.solvers.active_set",
    "cs_dcd": "svmbench.solvers.multiclass",
    "cs_sgd": "svmbench.solvers.multiclass",
    "ovr": "svmbench.solvers.reductions",
    "ovo": "svmbench.solvers.reductions",
    "ssvm_sgd": "svmbench.solvers.structured",
    "pegasos": "svmbench.solvers.pegasos",
    "perceptron": "svmbench.solvers.perceptron",
    "logistic_dcd": "svmbench.solvers.logistic_dcd",
    "logistic_newton": "svmbench.solvers.logistic_newton",
    "multinomial_newton": "svmbench.solvers.multinomial_newton",
    "logistic_cvxpy": "svmbench.solvers.logistic_reference",
    "svr_dcd": "svmbench.solvers.svr_dcd",
    "svr_newton": "svmbench.solvers.svr_newton",
    "auto": "svmbench.solvers.auto",
}

#: Where each anchor (an adapter of another library, judged by the same certificates) is defined.
ANCHOR_HOMES = {
    "liblinear": "svmbench.solvers.anchors.liblinear",
    "liblinear_cs": "svmbench.solvers.anchors.liblinear",
    "libsvm": "svmbench.solvers.anchors.libsvm",
    "sklearn_svc": "svmbench.solvers.anchors.sklearn",
    "sklearnex_svc": "svmbench.solvers.anchors.sklearn",
    "sklearn_linearsvc": "svmbench.solvers.anchors.sklearn",
    "sklearn_sgd": "svmbench.solvers.anchors.sklearn",
    "liblinear_lr": "svmbench.solvers.anchors.logistic",
    "liblinear_lr_dual": "svmbench.solvers.anchors.logistic",
    "sklearn_logistic": "svmbench.solvers.anchors.logistic",
    "libsvm_svr": "svmbench.solvers.anchors.regression",
    "sklearn_svr": "svmbench.solvers.anchors.regression",
    "liblinear_svr": "svmbench.solvers.anchors.linear_regression",
    "liblinear_svr_primal": "svmbench.solvers.anchors.linear_regression",
    "sklearn_linearsvr": "svmbench.solvers.anchors.linear_regression",
    "libsvm_nu": "svmbench.solvers.anchors.nu_family",
    "sklearn_nu": "svmbench.solvers.anchors.nu_family",
}

#: Modules that define solvers; each registers its classes with :func:`register` on import.
SOLVER_MODULES = tuple(dict.fromkeys(METHOD_HOMES.values()))

#: Modules of the anchors.
ANCHOR_MODULES = tuple(dict.fromkeys(ANCHOR_HOMES.values()))

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


def known(name: str) -> bool:
    """Whether ``name`` is a method or an anchor, importing no solver module (the tables, and
    what is registered already)."""
    return name in _REGISTRY or name in METHOD_HOMES or name in ANCHOR_HOMES


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
    closest names and listing all of them otherwise). Imports only the module of ``name`` when
    the tables name it."""
    if isinstance(name, str):
        cls = _REGISTRY.get(name)
        if cls is None and name in (homes := METHOD_HOMES | ANCHOR_HOMES):
            importlib.import_module(homes[name])
            cls = _REGISTRY.get(name)
        if cls is not None:
            return cls
    _load()
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
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
        gone = [k for k in options if k in cls.former_names and not accepts_option(cls, k)]
        hint = "".join(f" ({k!r} is now {cls.former_names[k]!r})" for k in gone)
        raise TypeError(f"solver {name!r}: {exc}{hint}") from None


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


def renamed_options(
    name: str, options: Mapping[str, Any], *, written_before: bool | None = None
) -> tuple[dict[str, Any], list[str]]:
    """``options`` of solver ``name`` in today's option names, and a note per renamed option.

    The one map of former option names (each class's ``former_names``): before 0.2.0 the
    references' and the anchors' ``tol`` was their library's own tolerance, now ``eps``, and
    the references' certified gap was ``gap_check``, now ``tol``. Every former name of the
    table is renamed at once when it was ``written_before`` (True: a record stored before the
    renames), or, with None, when the table uses a name the solver no longer takes
    (``gap_check``): a suite's ``{name = "osqp", tol = 1e-9, gap_check = 1e-8}`` becomes
    ``{eps = 1e-9, tol = 1e-8}``. Unknown solvers, and tables of today's names, come back as
    given. ``ValueError`` when a table mixes a former name with the name it now stands for.
    """
    try:
        cls = solver_class(name)
    except (TypeError, ValueError):
        return dict(options), []
    former = cls.former_names
    if written_before is None:
        written_before = any(k in former and not accepts_option(cls, k) for k in options)
    if not written_before or not set(options) & set(former):
        return dict(options), []
    renamed = {former.get(k, k): v for k, v in options.items()}
    clash = sorted(set(options) & {former[k] for k in options if k in former} - set(former))
    if clash:
        raise ValueError(
            f"options of solver {name!r} mix former and current names: {clash[0]!r} is given "
            f"and also stands for a former name ({', '.join(sorted(set(options) & set(former)))})"
        )
    notes = [
        f"{name}: option {old!r} is now {former[old]!r}" for old in sorted(options) if old in former
    ]
    return renamed, notes
