"""The solver contract, checked for every registered solver and every installed anchor.

Each check is a plain function of a solver name and a problem, so that a solver added to the
registry is tested with nothing else to write, and so that the checks themselves are tested: two
deliberately broken toy solvers (one that says ``optimal`` too early, one that ignores its warm
start) must fail them (``test_the_contract_catches_*``).

The problems are small and cover every kind and bias; each solver meets only those it accepts
(``Solver.unsupported_reason``), and is refused the others with a ``TypeError`` naming both.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings
from functools import cache
from typing import ClassVar

import numpy as np
import pytest

from svmbench.problems import (
    ChainStructuredHinge,
    HardMarginPrimal,
    KernelDual,
    Logistic,
    MulticlassHinge,
    MultinomialLogistic,
    NuSVCDual,
    NuSVRDual,
    OneClassDual,
    SoftMarginDual,
    SoftMarginPrimal,
    SVRDual,
    SVRPrimal,
    datasets,
)
from svmbench.problems.base import Problem
from svmbench.problems.structured import digit_sequences
from svmbench.solvers import registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import (
    Checkpoint,
    ConvergenceWarning,
    IterativeSolver,
    Outcome,
    Solver,
    SolveResult,
    Status,
    StepOutcome,
)

# ---------------------------------------------------------------------------------------------
# The problems: every kind, every bias, small
# ---------------------------------------------------------------------------------------------

BIASES = ("free", "regularized", "none")


def _problems() -> dict[str, Problem]:
    overlap = datasets.load("gaussian:n=60,d=4,sep=1,seed=0")
    separable = datasets.load("gaussian:n=40,d=3,sep=8,seed=1")
    blobs = datasets.load("blobs:n=60,d=3,k=3,seed=2")
    out: dict[str, Problem] = {}
    for bias in BIASES:
        out[f"hard_margin-{bias}"] = HardMarginPrimal(separable.X, separable.y, bias=bias)
        for loss in ("hinge", "squared_hinge"):
            out[f"primal-{loss}-{bias}"] = SoftMarginPrimal(
                overlap.X, overlap.y, C=1.0, loss=loss, bias=bias
            )
        out[f"dual-hinge-{bias}"] = SoftMarginDual(overlap.X, overlap.y, C=1.0, bias=bias)
        out[f"kernel-rbf-{bias}"] = KernelDual(
            overlap.X, overlap.y, C=1.0, kernel="rbf", gamma=0.5, bias=bias
        )
    for bias in BIASES:
        out[f"logistic-{bias}"] = Logistic(overlap.X, overlap.y, C=1.0, bias=bias)
    out["kernel-poly-free"] = KernelDual(
        overlap.X, overlap.y, C=1.0, kernel="poly", gamma=0.5, degree=2, coef0=1.0
    )
    out["hard_margin-infeasible"] = HardMarginPrimal(overlap.X, overlap.y, bias="free")
    # the ν family (issue 27): general duals on LIBSVM's scale
    out["nu_svc"] = NuSVCDual(overlap.X, overlap.y, nu=0.37, gamma=0.5)
    out["nu_svr"] = NuSVRDual(overlap.X, overlap.X[:, 0], C=1.0, nu=0.43, gamma=0.5)
    out["one_class"] = OneClassDual(overlap.X, nu=0.31, gamma=0.5)
    for bias in ("none", "regularized"):
        out[f"multiclass-{bias}"] = MulticlassHinge(blobs.X, blobs.y, C=1.0, bias=bias)
        out[f"multinomial-{bias}"] = MultinomialLogistic(blobs.X, blobs.y, C=1.0, bias=bias)
    diabetes = datasets.load("diabetes:n=60,seed=0")  # OSQP needs 100 cold iterations or more
    for bias in BIASES:
        out[f"svr-rbf-{bias}"] = SVRDual(diabetes.X, diabetes.y, C=1.0, epsilon=0.01, bias=bias)
    rng = np.random.default_rng(3)
    targets = overlap.X @ rng.normal(size=overlap.X.shape[1]) + rng.normal(size=overlap.y.size)
    for bias in BIASES:
        out[f"svr-plain-{bias}"] = SVRPrimal(overlap.X, targets, epsilon=0.2, bias=bias)
        out[f"svr-squared-{bias}"] = SVRPrimal(
            overlap.X, targets, epsilon=0.2, loss="squared_epsilon_insensitive", bias=bias
        )
    seq = digit_sequences(8, 8, min_length=2, max_length=4, noise=0.5, seed=0)
    out["chain"] = ChainStructuredHinge(seq.X, seq.y, seq.lengths, n_states=10, C=1.0)
    return out


PROBLEMS = _problems()
#: Small budgets keep the stochastic and non-converging methods quick.
OPTIONS = {"perceptron": {"max_iter": 200}}
ANCHORS = sorted(name for name, why in registry.available_anchors().items() if why is None)
SOLVERS = registry.names()


def make(name: str, **options) -> Solver:
    options = {**OPTIONS.get(name, {}), **options}
    return registry.get(name, **options)


def pairs(names) -> list:
    """(solver, problem) pairs the solver accepts."""
    return [
        pytest.param(s, p, id=f"{s}-{p}")
        for s in names
        for p, problem in PROBLEMS.items()
        if registry.solver_class(s).unsupported_reason(problem) is None
    ]


def is_exact(name: str) -> bool:
    cls = registry.solver_class(name)
    return name in SOLVERS and not cls.stochastic and cls.check_rtol is None


def takes_warm_start(name: str) -> bool:
    return bool(registry.solver_class(name).warm_start_uses)


@cache
def solved(name: str, key: str) -> SolveResult:
    """One default solve per pair, shared by the checks that only read it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return make(name).solve(PROBLEMS[key])


def reference(problem: Problem) -> SolveResult:
    if isinstance(problem, Logistic | MultinomialLogistic):  # not QPs: the exponential cone
        return reference_solution(problem, "logistic_cvxpy")
    return reference_solution(problem)


# ---------------------------------------------------------------------------------------------
# The checks, as functions (the toy solvers below must fail them)
# ---------------------------------------------------------------------------------------------


def check_certified_optimum(result: SolveResult, problem: Problem, tol: float) -> None:
    """An exact solver reaches the reference optimum, certified by the problem."""
    ref = reference(problem)
    if ref.status is Status.INFEASIBLE:
        assert result.status is Status.INFEASIBLE, result.message
        assert problem.is_infeasibility_certificate(result.farkas)
        return
    assert result.status is Status.OPTIMAL, f"{result.status}: {result.message}"
    assert result.certified and result.rel_gap <= tol
    scale = max(1.0, abs(ref.primal))
    assert result.primal - ref.primal <= 2 * tol * scale + 1e-9 * scale
    assert ref.primal - result.primal <= 1e-8 * scale  # the certified P is a true upper value
    again = problem.certificate(**result.variables)
    assert again.primal == pytest.approx(result.primal, rel=1e-9, abs=1e-12)


def check_honest_status(result: SolveResult, tol: float) -> None:
    """``optimal`` only with a certificate meeting tol (a reduction: every binary problem's)."""
    if result.status is not Status.OPTIMAL:
        return
    if "binary_rel_gaps" in result.info:
        assert all(result.info["binary_certified"])
        return
    assert result.certified, result.message
    assert result.rel_gap <= tol, f"optimal at certified rel_gap {result.rel_gap:.3g} > {tol}"


def check_record(result: SolveResult, name: str, problem: Problem) -> None:
    """The record's fields: types, units, times, the trace, the model, pickling."""
    assert type(result) is SolveResult
    assert result.solver == name and result.problem == problem.kind
    assert isinstance(result.status, Status)
    assert isinstance(result.iterations, int) and result.iterations >= 0
    # auto counts in the unit of the method it chose (and names it)
    chosen = result.info["auto"]["chose"] if name == "auto" else name
    assert result.iteration_unit == registry.solver_class(chosen).iteration_unit
    assert result.solve_time >= 0.0 and result.compile_time >= 0.0
    assert all(type(c) is Checkpoint for c in result.trace)
    its = [c.iteration for c in result.trace]
    assert its == sorted(its)
    if result.status not in (Status.INFEASIBLE, Status.NUMERICAL_ERROR):
        assert result.model is not None
        # NaN only for a reduction without a Crammer–Singer certificate (ovo); an infeasible
        # point of the hard margin is worth +inf
        assert not math.isnan(result.primal) or "binary_rel_gaps" in result.info
    clone = pickle.loads(pickle.dumps(result))
    assert (clone.status is result.status and clone.primal == result.primal) or (
        math.isnan(clone.primal) and math.isnan(result.primal)
    )


def check_warm_start_from_the_optimum(name: str, problem: Problem) -> None:
    """From its own optimum, a solver stops within two chunks, at the same optimum."""
    solver = make(name)
    cold = solver.solve(problem)
    assert cold.status is Status.OPTIMAL, cold.message
    warm = solver.solve(problem, warm_start=cold)
    assert warm.status is Status.OPTIMAL
    method = registry.solver_class(warm.info["auto"]["chose"]) if name == "auto" else solver
    if isinstance(method, IterativeSolver) or (
        isinstance(method, type) and issubclass(method, IterativeSolver)
    ):  # chunks: the checkpoints of the (default) trace
        chunks = max(1, len(warm.trace))
        assert chunks <= 2, f"{chunks} chunks from the optimum ({warm.iterations} iterations)"
    else:  # a one-shot method: a small fraction of its cold iterations
        assert warm.iterations <= max(1, cold.iterations // 4), "chunks from the optimum"
    scale = max(1.0, abs(cold.primal))
    assert abs(warm.primal - cold.primal) <= 2 * solver.tol * scale


# ---------------------------------------------------------------------------------------------
# The contract over the registry and the anchors
# ---------------------------------------------------------------------------------------------

EVERY = SOLVERS + ANCHORS


@pytest.mark.parametrize(("name", "key"), pairs(EVERY))
def test_record_and_honest_status(name, key):
    result = solved(name, key)
    check_record(result, name, PROBLEMS[key])
    check_honest_status(result, make(name).tol)


@pytest.mark.parametrize(("name", "key"), pairs([s for s in SOLVERS if is_exact(s)]))
def test_exact_solvers_reach_the_reference_optimum(name, key):
    check_certified_optimum(solved(name, key), PROBLEMS[key], make(name).tol)


@pytest.mark.parametrize("name", EVERY)
def test_unsupported_problems_are_refused_naming_both(name):
    refused = [
        p
        for p in PROBLEMS.values()
        if registry.solver_class(name).unsupported_reason(p) is not None
    ]
    for problem in refused[:3]:
        with pytest.raises(TypeError, match=rf"{name}.*{problem.kind}"):
            make(name).solve(problem)
    with pytest.raises(TypeError, match="svmbench problem"):
        make(name).solve(None)


def _auto_starts_warm(key: str) -> bool:
    """auto takes a warm start where the method it chooses does (else it says it goes unused)."""
    from svmbench.solvers.auto import choose

    return takes_warm_start(choose(PROBLEMS[key]).solvers[0])


@pytest.mark.parametrize(
    ("name", "key"),
    [
        p
        for p in pairs([s for s in SOLVERS if takes_warm_start(s)])
        if "infeasible" not in p.id and (p.values[0] != "auto" or _auto_starts_warm(p.values[1]))
    ],
)
def test_warm_start_from_the_optimum(name, key):
    check_warm_start_from_the_optimum(name, PROBLEMS[key])


def _bad_warm_starts(problem: Problem) -> list:
    n = problem.n_samples
    bad = [np.zeros(n + 1), np.full(n, np.nan), "alpha", {"w": np.zeros(problem.n_features)}]
    if isinstance(problem, MulticlassHinge):
        bad[:2] = [np.zeros((n + 1, problem.n_classes)), np.full((n, problem.n_classes), np.inf)]
    return bad


@pytest.mark.parametrize(("name", "key"), pairs(EVERY))
def test_warm_starts_are_validated(name, key):
    problem = PROBLEMS[key]
    for bad in _bad_warm_starts(problem):
        with pytest.raises(ValueError, match="warm_start"):
            make(name).solve(problem, warm_start=bad)


@pytest.mark.parametrize(("name", "key"), pairs(SOLVERS))
def test_max_iter_ends_with_its_status_and_a_warning(name, key):
    problem = PROBLEMS[key]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make(name, max_iter=1).solve(problem)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if result.status is Status.MAX_ITER:
        assert warned
    else:  # done within one iteration: then the status must say why, truthfully
        assert not warned
        honest = (Status.OPTIMAL, Status.INFEASIBLE, Status.NOT_CERTIFIED, Status.NUMERICAL_ERROR)
        assert result.status in honest
        check_honest_status(result, make(name).tol)


@pytest.mark.parametrize(("name", "key"), pairs(SOLVERS))
def test_time_limit_ends_with_its_status_and_a_warning(name, key):
    problem = PROBLEMS[key]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make(name, time_limit=1e-9).solve(problem)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if result.status is Status.TIME_LIMIT:
        assert warned and "time_limit" in str(caught[-1].message)
    else:  # finished within its first chunk: the status must say so truthfully
        assert not warned
        assert result.status in (Status.OPTIMAL, Status.INFEASIBLE), result.status
        check_honest_status(result, make(name).tol)


@pytest.mark.parametrize(("name", "key"), pairs(EVERY))
def test_callbacks_see_checkpoints_and_can_stop(name, key):
    problem = PROBLEMS[key]
    seen: list[Checkpoint] = []

    def stop_at_once(point: Checkpoint) -> bool:
        seen.append(point)
        return True

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = make(name).solve(problem, warm_start=None, callback=stop_at_once)
    if result.status is Status.INFEASIBLE:
        return
    assert len(seen) == 1 and type(seen[0]) is Checkpoint
    if registry.solver_class(name).reports_progress:
        assert result.status in (Status.OPTIMAL, Status.MAX_ITER, Status.NUMERICAL_ERROR)
        assert result.iterations == seen[0].iteration
    else:
        assert seen[0].primal == pytest.approx(result.primal, nan_ok=True)


def test_every_solver_meets_some_problem():
    for name in EVERY:
        assert pairs([name]), f"{name} accepts none of the contract's problems"


def test_no_iterative_solver_overrides_solve():
    for name in SOLVERS:
        cls = registry.solver_class(name)
        owners = [c for c in cls.__mro__ if "solve" in vars(c)]
        assert owners[0] is Solver, f"{cls.__name__} defines solve ({owners[0].__name__})"
    for cls in map(registry.solver_class, registry.anchor_names()):
        assert next(c for c in cls.__mro__ if "solve" in vars(c)) is Solver


# ---------------------------------------------------------------------------------------------
# The checks catch broken solvers
# ---------------------------------------------------------------------------------------------


class _Toy(IterativeSolver):
    """Projected gradient ascent on the box-constrained dual (bias none), 20 steps a chunk."""

    iteration_unit = "gradient steps"
    supported: ClassVar = {SoftMarginDual: {"bias": ("none",), "loss": ("hinge",)}}
    warm_start_uses = ("alpha",)

    def _init_state(self, problem, warm_start):
        Z = problem.X * problem.y[:, None]
        Q = Z @ Z.T
        alpha = np.zeros(len(Q)) if warm_start is None else warm_start.dual_point(problem)
        return {"Q": Q, "eta": 1.0 / np.linalg.norm(Q, 2), "alpha": alpha}

    def _step(self, problem, state):
        a, Q = state["alpha"], state["Q"]
        for _ in range(20):
            a = np.clip(a + state["eta"] * (1.0 - Q @ a), 0.0, problem.upper_bounds)
        state["alpha"] = a
        return StepOutcome(20)

    def _variables(self, problem, state):
        return {"alpha": state["alpha"]}


class EarlyOptimal(Solver):
    """Says ``optimal`` after one chunk of the toy's iterations, on its own word."""

    name = "toy_early_optimal"
    iteration_unit = "gradient steps"
    supported: ClassVar = _Toy.supported

    def _run(self, problem, warm_start, clock, callback):
        toy = _Toy()
        state = toy._init_state(problem, None)
        toy._step(problem, state)
        return Outcome(Status.OPTIMAL, toy._variables(problem, state), 20)


class IgnoresWarmStart(_Toy):
    """Accepts a warm start, then starts from zero anyway."""

    name = "toy_ignores_warm_start"

    def _init_state(self, problem, warm_start):
        return super()._init_state(problem, None)


@pytest.fixture
def toy_registry(monkeypatch):
    for cls in (EarlyOptimal, IgnoresWarmStart):
        monkeypatch.setitem(registry._REGISTRY, cls.name, cls)


def test_the_contract_catches_an_early_optimal(toy_registry):
    problem = PROBLEMS["dual-hinge-none"]
    result = registry.get("toy_early_optimal").solve(problem)
    # the record keeps the status true (the problem's certificate overrules the solver's word)
    assert result.status is Status.NOT_CERTIFIED and "rel" in result.message
    check_honest_status(result, 1e-6)
    with pytest.raises(AssertionError, match="not_certified"):
        check_certified_optimum(result, problem, 1e-6)
    # and a record that claims optimal at a loose point fails the status check itself
    forged = dataclasses.replace(result, status=Status.OPTIMAL)
    with pytest.raises(AssertionError, match="optimal at certified rel_gap"):
        check_honest_status(forged, 1e-6)


def test_the_contract_catches_an_ignored_warm_start(toy_registry):
    problem = PROBLEMS["dual-hinge-none"]
    check_certified_optimum(registry.get("toy_ignores_warm_start").solve(problem), problem, 1e-6)
    with pytest.raises(AssertionError, match="chunks from the optimum"):
        check_warm_start_from_the_optimum("toy_ignores_warm_start", problem)
