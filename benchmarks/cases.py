"""Benchmark cases: a problem spec, a data spec, a solver spec and a seed, with a stable key.

A suite (a TOML file in ``benchmarks/suites/`` or a dict) lists problems, data sets and solvers;
:func:`expand` takes their product, one value per list-valued problem parameter, and keeps the
pairs that make sense (binary problems on binary data, multiclass on multiclass, solvers that
accept the problem), giving a reason for every pair it skips.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from problems import PROBLEMS, Problem
from problems.datasets import Dataset, load

#: Problem parameters that are arrays, or set from the data, never from a suite.
_DATA_FIELDS = ("X", "y", "sample_weight", "cost")


@dataclass(frozen=True)
class Case:
    """One benchmark case. ``problem`` holds the problem kind and its scalar parameters."""

    problem: dict[str, Any]
    data: str
    solver: str
    solver_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0

    @property
    def key(self) -> str:
        """Stable hash of everything that defines the case."""
        payload = json.dumps(
            [self.problem, self.data, self.solver, self.solver_options, self.seed],
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:20]

    @property
    def problem_kind(self) -> str:
        return self.problem["kind"]

    def label(self) -> str:
        params = ",".join(f"{k}={v}" for k, v in self.problem.items() if k != "kind")
        return f"{self.problem_kind}({params}) | {self.data} | {self.solver}"

    def build_problem(self, dataset: Dataset | None = None) -> Problem:
        """The problem instance on this case's data."""
        dataset = dataset or load(self.data)
        return make_problem(self.problem, dataset)


def make_problem(problem_spec: dict[str, Any], dataset: Dataset) -> Problem:
    """Instantiate ``problem_spec`` (``{"kind": ..., params}``) on ``dataset``'s training set."""
    spec = dict(problem_spec)
    kind = spec.pop("kind")
    if kind not in PROBLEMS:
        raise ValueError(f"unknown problem kind {kind!r}; known: {', '.join(PROBLEMS)}")
    for name in _DATA_FIELDS:
        if name in spec:
            raise ValueError(f"problem parameter {name!r} comes from the data, not the suite")
    return PROBLEMS[kind](dataset.X, dataset.y, **spec)


def _grid(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """Expand list-valued parameters of one entry into their product."""
    keys = sorted(entry)
    values = [entry[k] if isinstance(entry[k], list) else [entry[k]] for k in keys]
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def _solver_entries(solvers) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for s in solvers:
        if isinstance(s, str):
            out.append((s, {}))
        else:
            s = dict(s)
            name = s.pop("name")
            out.extend((name, opts) for opts in _grid(s))
    return out


@dataclass(frozen=True)
class Skipped:
    """A (problem, data, solver) combination left out of a suite, and why."""

    label: str
    reason: str


def expand(suite: dict[str, Any]) -> tuple[list[Case], list[Skipped]]:
    """All cases of a suite, and the combinations skipped with their reasons."""
    from solvers import registry

    problems = [p for entry in suite.get("problems", []) for p in _grid(entry)]
    data = suite.get("data", [])
    solvers = _solver_entries(suite.get("solvers", []))
    seeds = suite.get("seeds", [0])
    common = dict(suite.get("solver_options", {}))
    cases, skipped = [], []
    datasets = {spec: load(spec) for spec in data}
    for problem, spec in itertools.product(problems, data):
        ds = datasets[spec]
        multiclass = problem["kind"] == "multiclass_hinge"
        if multiclass and ds.is_binary:
            skipped.append(Skipped(f"{problem['kind']} | {spec}", "binary data set"))
            continue
        if not multiclass and not ds.is_binary:
            skipped.append(Skipped(f"{problem['kind']} | {spec}", "multiclass data set"))
            continue
        instance = make_problem(problem, ds)
        for (name, opts), seed in itertools.product(solvers, seeds):
            why = registry.solver_class(name).unsupported_reason(instance)
            if why:
                skipped.append(Skipped(f"{problem['kind']} | {spec} | {name}", why))
                continue
            cases.append(Case(problem, spec, name, {**common, **opts}, seed))
    return cases, skipped


def load_suite(name_or_path: str) -> dict[str, Any]:
    """A suite from a TOML file path, or by name from those shipped in ``benchmarks/suites``."""
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.exists():
        text = path.read_text()
    else:
        shipped = resources.files("benchmarks") / "suites" / f"{name_or_path}.toml"
        if not shipped.is_file():
            available = sorted(
                p.name.removesuffix(".toml")
                for p in (resources.files("benchmarks") / "suites").iterdir()
                if p.name.endswith(".toml")
            )
            raise ValueError(
                f"unknown suite {name_or_path!r}: not a .toml file, nor one of {available}"
            )
        text = shipped.read_text()
    suite = tomllib.loads(text)
    suite.setdefault("name", path.stem)
    return suite
