"""Benchmark cases: a problem spec, a data spec, a solver spec and a seed, with a stable key.

A suite (a TOML file in ``benchmarks/suites/`` or a dict built from command-line flags) lists
problems, data sets and solvers, plus the settings every case runs with (:class:`Settings`):
tolerance, time and memory limits, repeats, threads, an optional seeded train/test split.
:func:`expand` takes the product of problems × data × solvers × seeds, one value per list-valued
parameter, and keeps the combinations that make sense (binary problems on binary data, multiclass
on multiclass, solvers that accept the problem, cases whose estimated memory fits the budget),
giving a reason for every combination it skips. A data spec whose estimated size
(:func:`problems.datasets.estimate_bytes`, from the spec alone) exceeds the budget is refused
before it is generated; the memory models of the cases are listed in :func:`estimate_memory_mb`.

Suite keys
----------
``name``, ``description``
    Free text.
``data``
    Data specs (:func:`problems.datasets.load`); ``{seed}`` in a spec is replaced by the case seed.
``problems``
    Tables with ``kind`` and the problem's scalar parameters; a list value is a grid axis.
``solvers``
    Names, or tables ``{name = ..., option = value or [values]}``. ``"*"`` means every registered
    method that accepts the problem (the references included), ``"*anchors"`` every available
    anchor; names resolve through :mod:`svmbench.solvers.registry` (methods and anchors).

``seeds``
    Seeds of the cases (passed as ``seed`` to solvers that take one, and to ``{seed}`` specs).
``solver_options``
    Options given to every solver (an entry's own options win).
``options``
    A table per solver name, ``[options.pegasos] max_iter = 200``: options of that solver however
    it was selected (by name or by ``"*"``); an entry's own options win.
The fields of :class:`Settings` (``tol``, ``time_limit``, ``memory_limit_mb``, ``repeat``,
``threads``, ``split``, ``reference``, ``reference_time_limit``, ``grace``, ``escalate``,
``imports``) may be given at the top level of the suite. A suite file is read and checked by
:mod:`~svmbench.benchmarks.harness.suite_files` (``load_suite``); the settings and the grid
expansion of one entry are in :mod:`~svmbench.benchmarks.harness.settings`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from svmbench.benchmarks.harness.settings import DATA_FIELDS, Settings, grid
from svmbench.benchmarks.harness.suite_files import upgrade_suite, validate_suite
from svmbench.problems import (
    PROBLEMS,
    REGRESSION_KINDS,
    UNSUPERVISED_KINDS,
    KernelDual,
    MulticlassHinge,
    Problem,
    problem_on_data,
)
from svmbench.problems.dataset_record import Dataset
from svmbench.problems.datasets import estimate_bytes, load
from svmbench.solvers import registry
from svmbench.solvers.base import own_memory_estimate
from svmbench.solvers.registry import accepts_option


@dataclass(frozen=True)
class Case:
    """One benchmark case. ``problem`` holds the problem kind and its scalar parameters."""

    problem: dict[str, Any]
    data: str
    solver: str
    solver_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0

    def __hash__(self) -> int:
        return hash(self.key)

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

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def make_problem(problem_spec: dict[str, Any], dataset: Dataset) -> Problem:
    """Instantiate ``problem_spec`` (``{"kind": ..., params}``) on ``dataset``'s training set."""
    spec = dict(problem_spec)
    kind = spec.pop("kind")
    for name in DATA_FIELDS:
        if name in spec:
            raise ValueError(f"problem parameter {name!r} comes from the data, not the suite")
    return problem_on_data(kind, dataset.X, dataset.y, **spec)


def unavailable_reason(name: str) -> str | None:
    """None for a solver that can run here, else why not (an anchor whose library is missing)."""
    why = registry.missing_reason(name)
    return None if why is None else f"anchor {name!r} is unavailable: {why}"


# --------------------------------------------------------------------------------------------------
# Expansion
# --------------------------------------------------------------------------------------------------


def _solver_entries(solvers) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for s in solvers:
        if isinstance(s, str):
            out.append((s, {}))
        else:
            s = dict(s)
            name = s.pop("name")
            out.extend((name, opts) for opts in grid(s))
    return out


@dataclass(frozen=True)
class Skipped:
    """A (problem, data, solver) combination left out of a suite, and why."""

    label: str
    reason: str


def with_split(spec: str, split: float | None) -> str:
    """``spec`` with ``split=...`` added when a split is asked and the spec has none."""
    if split is None or re.search(r"(^|[:,])split=", spec):
        return spec
    return f"{spec}{',' if ':' in spec else ':'}split={split}"


def data_specs(suite: dict[str, Any], seed: int, settings: Settings) -> list[str]:
    """The suite's data specs for one seed (``{seed}`` substituted, the split added)."""
    return [
        with_split(s.replace("{seed}", str(seed)), settings.split) for s in suite.get("data", [])
    ]


#: MB of the interpreter and its libraries in a worker, counted in every estimate.
BASE_MEMORY_MB = 150.0


def estimate_memory_mb(
    problem: Problem,
    solver: str | type | None = None,
    *,
    options: dict[str, Any] | None = None,
    reference: str | None = "clarabel",
) -> float:
    """A coarse upper bound of the peak memory of one case, in MB, before it runs.

    The one place where the memory models are listed (bytes; n examples, d features, k classes,
    ``data`` the bytes of X); the solvers' ``memory_estimate`` class methods compute their rows:

    - always: :data:`BASE_MEMORY_MB`, four copies of ``data`` (loaded, the problem's, a test
      split, a conversion) and, for a kernel that is not PSD by construction with
      ``n ≤ EIGEN_CHECK_MAX_N``, its Gram matrix and eigensolver work (``16n²``);
    - the solver's own model, beyond the data (``Solver.memory_estimate(problem, **options)``):
      ``smo``: its column cache (``cache_mb``, 200 MB by default), dense or CSR rows, 24 vectors
      of n: never a Gram matrix; ``dcd``: ``O(n + d)``; ``barrier``: six n×n matrices for a
      dense dual (a kernel dual without a low-rank factor), four (d+2)×(d+2) or five n×n for the
      primal forms; ``accpm``: its cuts and LP, ``O(max_iter·d + d²)``; the references
      (``clarabel``, ``osqp``, ``cvxpy``): their QP, ``c·8n²`` for a kernel dual (c = 12, 8,
      32) and ``256·(nnz(X) + n)`` per class otherwise, measured;
    - solvers without a model (None: pegasos, perceptron, the reductions, the anchors): a dense
      n×n Gram matrix for a kernel dual (``8n²``), ``32nk`` for multiclass, ``64n`` otherwise;
    - the reference of the distance column when the case needs one (``reference`` not None nor
      ``"none"``, and the reference, or its fallback, accepts the problem): its QP as above.

    Parameters
    ----------
    problem : Problem
    solver : str or Solver class, default=None
        The case's solver (None: the generic model).
    options : dict, default=None
        The solver's options (its ``cache_mb``, ``kernel_approximation``, ``max_iter``...).
    reference : str or None, default="clarabel"
        The run's reference solver (``Settings.reference``); None or ``"none"``: no reference.
    """
    return sum(memory_parts_mb(problem, solver, options=options, reference=reference).values())


def memory_parts_mb(
    problem: Problem,
    solver: str | type | None = None,
    *,
    options: dict[str, Any] | None = None,
    reference: str | None = "clarabel",
) -> dict[str, float]:
    """The terms of :func:`estimate_memory_mb`: ``{"base", "solver", "reference"}`` in MB."""
    from svmbench.problems.kernel_dual import EIGEN_CHECK_MAX_N
    from svmbench.problems.kernels import is_psd_by_construction

    n, X = problem.n_samples, problem.X
    data = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if hasattr(X, "indptr") else X.nbytes
    base = 4.0 * data
    if isinstance(problem, KernelDual) and n <= EIGEN_CHECK_MAX_N:
        if not is_psd_by_construction(problem.kernel, problem.degree, problem.coef0):
            base += 16.0 * n * n
    cls = registry.solver_class(solver) if isinstance(solver, str) else solver
    own = None if cls is None else own_memory_estimate(cls, problem, options or {})
    if own is None:
        if isinstance(problem, KernelDual):
            own = 8.0 * n * n
        elif isinstance(problem, MulticlassHinge):
            own = 32.0 * n * (int(problem.y.max()) + 1)
        else:
            own = 64.0 * n
    ref = 0.0
    if reference not in (None, "none"):
        fallback = "osqp" if reference == "clarabel" else "clarabel"
        for name in (reference, fallback):  # the order of evaluation.reference
            ref_cls = registry.solver_class(name)
            if ref_cls.unsupported_reason(problem) is None:
                ref = max(ref, float(ref_cls.memory_estimate(problem) or 0.0))
    return {
        "base": BASE_MEMORY_MB + base / 2**20,
        "solver": float(own) / 2**20,
        "reference": ref / 2**20,
    }


def spec_over_budget(spec: str, budget_mb: float) -> str | None:
    """Why the data spec ``spec`` is not generated within ``budget_mb`` (its size estimated
    from the spec alone, :func:`problems.datasets.estimate_bytes`), or None."""
    need = estimate_bytes(spec)
    if need is not None and need / 2**20 > budget_mb:
        return (
            f"data spec {spec!r} needs ~{need / 2**20:.0f} MB, over the budget of "
            f"{budget_mb:.0f} MB"
        )
    return None


def case_over_budget(
    problem: Problem, solver, options: dict[str, Any], reference: str | None, budget_mb: float
) -> str | None:
    """Why the solver (a name or class) with ``options`` is not run on ``problem`` within
    ``budget_mb`` (the terms of :func:`estimate_memory_mb`), or None."""
    parts = memory_parts_mb(problem, solver, options=options, reference=reference)
    total = sum(parts.values())
    if total <= budget_mb:
        return None
    terms = ", ".join(f"{k} {v:.0f} MB" for k, v in parts.items() if v >= 0.5)
    return f"estimated memory {total:.0f} MB ({terms}) exceeds the budget of {budget_mb:.0f} MB"


#: The largest seed: NumPy's generators take any integer >= 0, the results store 64-bit ones.
MAX_SEED = 2**63 - 1


def check_seeds(seeds, name: str = "seeds") -> None:
    """Refuse an empty list of seeds (no case would run) and seeds that are not integers in
    ``[0, MAX_SEED]`` (a case that fails to seed, or whose record cannot be stored), with a
    ``ValueError`` naming ``name``."""
    if not seeds:
        raise ValueError(f"{name} is empty: the grid has no cases (give at least one seed)")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ValueError(
                f"{name} must be integers from 0 to 2**63 - 1 (NumPy's seeds, stored as 64-bit "
                f"integers), got {seed!r}"
            )


def default_memory_budget_mb(jobs: int = 1) -> float:
    """80 % of the available memory shared among ``jobs`` parallel cases."""
    import psutil

    return 0.8 * psutil.virtual_memory().available / 2**20 / max(1, jobs)


def _selected(solvers, instance) -> list[tuple[str, dict[str, Any], str | None]]:
    """Resolve the solver entries (with wildcards) for one problem instance."""
    out = []
    for name, opts in solvers:
        if name == "*":
            for n in registry.names():
                out.append((n, opts, registry.solver_class(n).unsupported_reason(instance)))
            continue
        if name == "*anchors":
            for n in registry.anchor_names():
                why = unavailable_reason(n)
                why = why or registry.solver_class(n).unsupported_reason(instance)
                out.append((n, opts, why))
            continue
        try:
            cls = registry.solver_class(name)
        except ValueError as exc:
            out.append((name, opts, str(exc)))
            continue
        why = unavailable_reason(name) or cls.unsupported_reason(instance)
        out.append((name, opts, why))
    return out


def _options(cls, opts: dict[str, Any], common: dict, settings: Settings, seed: int) -> dict:
    options = {**common, **opts}
    if settings.tol is not None and "tol" not in options and accepts_option(cls, "tol"):
        options["tol"] = settings.tol
    if "time_limit" not in options and accepts_option(cls, "time_limit"):
        options["time_limit"] = settings.time_limit
    if "seed" not in options and accepts_option(cls, "seed"):
        options["seed"] = seed
    return options


def expand(
    suite: dict[str, Any], settings: Settings | None = None, *, jobs: int = 1
) -> tuple[list[Case], list[Skipped]]:
    """All cases of a suite, and the combinations skipped with their reasons.

    Parameters
    ----------
    suite : dict
        The suite (see the module docstring).
    settings : Settings, default=None
        The run settings; default :meth:`Settings.from_suite`.
    jobs : int, default=1
        Parallel cases, for the default memory budget.
    """
    settings = settings or Settings.from_suite(suite)
    for module in settings.imports:
        importlib.import_module(module)
    source = f"suite {suite.get('name', '')!r}".replace(" ''", "")
    suite = upgrade_suite(suite, source=source)
    validate_suite(suite, source=source)
    problems = [p for entry in suite.get("problems", []) for p in grid(entry)]
    solvers = _solver_entries(suite.get("solvers", []))
    seeds = suite.get("seeds", [0])
    check_seeds(seeds, name=f"{source}: seeds")
    common = dict(suite.get("solver_options", {}))
    per_solver = suite.get("options", {})
    budget = settings.memory_limit_mb or default_memory_budget_mb(jobs)
    cases, skipped, seen = [], [], set()
    datasets: dict[str, Dataset] = {}
    refused: dict[str, str] = {}  # spec -> why it is not generated
    for seed in seeds:
        for problem, spec in itertools.product(problems, data_specs(suite, seed, settings)):
            if spec not in datasets and spec not in refused:
                why = spec_over_budget(spec, budget)  # from the spec alone: nothing generated
                if why is not None:
                    refused[spec] = why
                else:
                    datasets[spec] = load(spec)
            if spec in refused:
                skipped.append(Skipped(f"{problem['kind']} | {spec}", refused[spec]))
                continue
            ds = datasets[spec]
            multiclass = hasattr(PROBLEMS.get(problem["kind"]), "n_classes")
            regression = problem["kind"] in REGRESSION_KINDS
            if regression != ds.is_regression:
                why = "classification data set" if regression else "regression data set"
                skipped.append(Skipped(f"{problem['kind']} | {spec}", why))
                continue
            if (problem["kind"] in UNSUPERVISED_KINDS) != ds.is_outlier_detection:
                why = (
                    "outlier-detection data set" if ds.is_outlier_detection else "labelled data set"
                )
                skipped.append(Skipped(f"{problem['kind']} | {spec}", why))
                continue
            if not regression and multiclass and ds.is_binary:
                skipped.append(Skipped(f"{problem['kind']} | {spec}", "binary data set"))
                continue
            if not regression and not multiclass and not ds.is_binary:
                skipped.append(Skipped(f"{problem['kind']} | {spec}", "multiclass data set"))
                continue
            instance = make_problem(problem, ds)
            for name, opts, why in _selected(solvers, instance):
                label = f"{problem['kind']} | {spec} | {name}"
                if why:
                    skipped.append(Skipped(label, why))
                    continue
                cls = registry.solver_class(name)
                options = _options(
                    cls, opts, {**common, **per_solver.get(name, {})}, settings, seed
                )
                why = case_over_budget(instance, cls, options, settings.reference, budget)
                if why is not None:
                    skipped.append(Skipped(label, why))
                    continue
                case = Case(problem, spec, name, options, seed)
                if case.key not in seen:  # "*" and a named solver may select the same case
                    seen.add(case.key)
                    cases.append(case)
    return cases, skipped


def data_size(spec: str) -> int | None:
    """The ``n`` of a data spec, when it has one (for scaling fits)."""
    m = re.search(r"(^|[:,])n=(\d+)", spec)
    return int(m.group(2)) if m else None


def data_family(spec: str) -> str:
    """A data spec without its ``n`` (the group of a scaling fit)."""
    name, _, params = spec.partition(":")
    rest = [p for p in params.split(",") if p and not p.startswith("n=")]
    return name + (":" + ",".join(rest) if rest else "")


def finite(x) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)
