"""Suites from TOML files: load one by path or shipped name, refuse what it cannot mean.

:func:`load_suite` reads a suite (a path to a ``.toml`` file, or the name of one shipped in
``benchmarks/suites``), :func:`upgrade_suite` renames the solver options written with former
names (:func:`svmbench.solvers.registry.renamed_options`, with a ``FutureWarning``) and
:func:`validate_suite` checks it: unknown keys, problem kinds,
parameters, solvers and options, option values a solver refuses, and an empty grid are errors
naming the file, the line and the valid choices. The suite format is in ``benchmarks/README.md``;
its grid becomes cases in :func:`svmbench.benchmarks.harness.cases.expand`.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import tomllib
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

from svmbench.benchmarks.harness.settings import DATA_FIELDS, Settings, grid
from svmbench.problems import PROBLEMS
from svmbench.problems.untrusted import MAX_NESTING, nesting_depth, open_regular
from svmbench.solvers import registry

#: The largest suite file read.
MAX_SUITE_BYTES = 1 << 20


def load_suite(name_or_path: str) -> dict[str, Any]:
    """A suite from a TOML file path, or by name from those shipped in ``benchmarks/suites``,
    validated (:func:`validate_suite`: errors name the file and the line).

    The path must be a regular file (a FIFO or a directory is refused without being read) of
    at most :data:`MAX_SUITE_BYTES` of UTF-8 text whose arrays and tables nest at most
    :data:`~svmbench.problems.untrusted.MAX_NESTING` deep; anything else is a one-line
    ``ValueError`` naming the file."""
    path = Path(name_or_path)
    if path.suffix == ".toml" and (path.exists() or path.is_symlink()):
        source = str(path)
        with open_regular(path, max_bytes=MAX_SUITE_BYTES, what="suite file") as fh:
            data = fh.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
    else:
        shipped = resources.files("svmbench.benchmarks") / "suites" / f"{name_or_path}.toml"
        if not shipped.is_file():
            raise ValueError(
                f"unknown suite {name_or_path!r}: not a .toml file, nor one of {shipped_suites()}"
            )
        text, source = shipped.read_text(), f"suite {name_or_path!r}"
    depth = nesting_depth(text, toml=True)
    if depth > MAX_NESTING:
        raise ValueError(
            f"{source}: arrays and tables nested {depth} deep, over the limit of {MAX_NESTING}"
        )
    try:
        suite = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:  # a nesting the count above missed
        raise ValueError(f"{source}: nested too deeply to read") from None
    suite.setdefault("name", path.stem)
    suite = upgrade_suite(suite, source=source, text=text)
    validate_suite(suite, source=source, text=text)
    return suite


def upgrade_suite(suite: dict[str, Any], *, source: str = "suite", text: str = "") -> dict:
    """``suite`` with the solver options written with former names renamed, warning
    ``FutureWarning`` once per suite with the file, the line and each rename.

    A table is renamed when it uses a name its solver no longer takes (``gap_check``: a
    reference's ``{tol = 1e-9, gap_check = 1e-8}`` becomes ``{eps = 1e-9, tol = 1e-8}``), as
    :func:`svmbench.solvers.registry.renamed_options` says; ``solver_options`` (given to every
    solver) can only have held ``gap_check`` for references, and is renamed as theirs. A suite
    without former names comes back unchanged (the same object)."""
    notes: list[str] = []

    def renamed(name, options):
        if not isinstance(options, dict) or not isinstance(name, str):
            return options
        new, said = registry.renamed_options(name, options)
        notes.extend(said)
        return new

    solvers = []
    for entry in suite.get("solvers", []) if isinstance(suite.get("solvers"), list) else []:
        if isinstance(entry, dict) and "name" in entry:
            options = {k: v for k, v in entry.items() if k != "name"}
            entry = {"name": entry["name"], **renamed(entry["name"], options)}
        solvers.append(entry)
    per_solver = suite.get("options")
    if isinstance(per_solver, dict):
        per_solver = {name: renamed(name, opts) for name, opts in per_solver.items()}
    common = renamed("clarabel", suite.get("solver_options", {}))  # the references' names
    if not notes:
        return suite
    upgraded = {**suite, "solvers": solvers} if "solvers" in suite else dict(suite)
    if per_solver is not None:
        upgraded["options"] = per_solver
    if "solver_options" in suite:
        upgraded["solver_options"] = common
    line = next(
        (i for i, t in enumerate(text.splitlines(), start=1) if re.search(r"\bgap_check\b", t)),
        None,
    )
    where = f"{source}, line {line}" if line else source
    warnings.warn(
        f"{where}: solver options written with former names, read as today's: "
        f"{'; '.join(dict.fromkeys(notes))} (since 0.2.0 every solver's tol is the certified "
        "relative gap asked for, and a library's own tolerance is eps); rename them in the "
        "suite",
        FutureWarning,
        stacklevel=2,
    )
    return upgraded


#: The keys of a suite besides the fields of :class:`~benchmarks.harness.settings.Settings`.
SUITE_KEYS = ("name", "description", "data", "problems", "solvers", "seeds", "solver_options",
              "options")  # fmt: skip


def validate_suite(suite: dict[str, Any], *, source: str = "suite", text: str = "") -> None:
    """Refuse what a suite cannot mean, naming the file, the line and the valid choices.

    Unknown keys, problem kinds, problem parameters, solvers and solver options; option values a
    solver refuses; ``data`` or ``seeds`` that are not lists; an empty grid (no problem, data set
    or solver). A silent skip would change what is measured.
    """

    def fail(key: str, message: str) -> None:
        line = _line_of(text, key)
        where = f"{source}, line {line}" if line else source
        raise ValueError(f"{where}: {message}")

    settings = {f.name for f in dataclasses.fields(Settings)}
    for key in ("name", "description"):
        if not isinstance(suite.get(key, ""), str):
            fail(key, f"{key} must be a string, got {suite[key]!r}")
    imports = suite.get("imports", [])
    if not isinstance(imports, list) or not all(isinstance(m, str) for m in imports):
        fail("imports", f"imports must be a list of module names (strings), got {imports!r}")
    for key in ("options", "solver_options"):
        if not isinstance(suite.get(key, {}), dict):
            fail(key, f"{key} must be a table, got {suite[key]!r}")
    for module in imports:  # extra solvers register on import
        try:
            importlib.import_module(module)
        except ImportError as exc:
            fail("imports", f"cannot import {module!r}: {exc}")
    for key in suite:
        if key not in SUITE_KEYS and key not in settings:
            valid = sorted((*SUITE_KEYS, *settings))
            fail(key, f"unknown key {key!r}{_did_you_mean(key, valid)}; valid keys: {valid}")
    for key in ("data", "seeds"):
        value = suite.get(key, [] if key == "data" else [0])
        if not isinstance(value, list):
            fail(key, f"{key} must be a list (e.g. {key} = [...]), got {value!r}")
    if not all(isinstance(s, str) for s in suite.get("data", [])):
        fail("data", "data must be a list of data specs (strings)")
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in suite.get("seeds", [0])):
        fail("seeds", "seeds must be a list of integers")
    for key in ("problems", "solvers"):
        if not isinstance(suite.get(key, []), list):
            fail(key, f"{key} must be a list of tables or names")
    for entry in suite.get("problems", []):
        _validate_problem_entry(entry, fail)
    for entry in suite.get("solvers", []):
        _validate_solver_entry(entry, suite, fail)
    for name, opts in suite.get("options", {}).items():
        _validate_options(name, opts, fail, key="options")
    empty = [k for k in ("problems", "data", "solvers") if not suite.get(k)]
    if empty:
        fail(empty[0], f"the grid is empty: no {', no '.join(empty)}")
    try:
        Settings.from_suite(suite)
    except (TypeError, ValueError) as exc:
        bad = next((k for k in settings if k in suite and k in str(exc)), "")
        fail(bad, str(exc))


def _validate_problem_entry(entry, fail) -> None:
    if not isinstance(entry, dict) or "kind" not in entry:
        fail("problems", f"a problem must be a table with a kind, got {entry!r}")
    kind = entry["kind"]
    if not isinstance(kind, str) or kind not in PROBLEMS:
        fail("kind", f"unknown problem kind {kind!r}; valid kinds: {sorted(PROBLEMS)}")
    params = {
        f.name for f in dataclasses.fields(PROBLEMS[kind]) if f.init and f.name not in DATA_FIELDS
    } - {"X", "y"}
    for key in entry:
        if key != "kind" and key not in params:
            fail(key, f"unknown parameter {key!r} of {kind}; valid: {sorted(params)}")


def _validate_solver_entry(entry, suite, fail) -> None:
    if isinstance(entry, str):
        name, opts = entry, {}
    elif isinstance(entry, dict) and "name" in entry:
        opts = dict(entry)
        name = opts.pop("name")
    else:
        fail("solvers", f"a solver must be a name or a table with a name, got {entry!r}")
    if not isinstance(name, str):
        fail("solvers", f"a solver's name must be a string, got {name!r}")
    if name in ("*", "*anchors"):
        return
    try:
        registry.solver_class(name)
    except ValueError as exc:
        fail(name, str(exc))
    _validate_options(name, {**suite.get("solver_options", {}), **opts}, fail, key=name)


def _validate_options(name: str, opts, fail, *, key: str) -> None:
    """Each option's values must build the solver (its constructor validates them)."""
    if not isinstance(opts, dict):
        fail(key, f"options of {name!r} must be a table, got {opts!r}")
    try:
        registry.solver_class(name)
    except ValueError as exc:
        fail(key, str(exc))
    for options in grid(opts):
        try:
            registry.get(name, **options)
        except (TypeError, ValueError) as exc:
            fail(next(iter(opts), key), f"solver {name!r}: {exc}")


def _line_of(text: str, key: str) -> int | None:
    """The first line of ``text`` that sets or names ``key`` (TOML keeps no line numbers)."""
    if not text or not key:
        return None
    pattern = re.compile(
        rf"^\s*{re.escape(key)}\s*=|[\"']{re.escape(key)}[\"']|\[\w*\.?{re.escape(key)}\]"
    )
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.search(line):
            return number
    return None


def _did_you_mean(key: str, valid) -> str:
    import difflib

    close = difflib.get_close_matches(key, valid, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def shipped_suites() -> list[str]:
    """Names of the suites shipped in ``benchmarks/suites``."""
    return sorted(
        p.name.removesuffix(".toml")
        for p in (resources.files("svmbench.benchmarks") / "suites").iterdir()
        if p.name.endswith(".toml")
    )


__all__ = [
    "MAX_SUITE_BYTES",
    "SUITE_KEYS",
    "load_suite",
    "shipped_suites",
    "upgrade_suite",
    "validate_suite",
]
