"""``auto``: the method this project's own benchmarks show to be fastest to a certified tolerance.

``auto`` reads the problem (kind, n, d, density, kernel, bias, loss, C, classes), walks the table
:data:`RULES` top to bottom, and runs the first solver whose rule matches and that accepts the
problem (and the warm start, if one is given). It says what it chose and why in
``result.info["auto"]`` (``{"chose": name, "why": sentence, "rule": index}``), and ``svmbench
solve`` prints it. The result is the chosen solver's, certified by the problem as every result
is; the record's ``solver`` stays ``"auto"``.

Each row of :data:`RULES` carries the measurement behind it (one core, tolerance 1e-6, wall time end
to end, from ``benchmarks/studies/bench_auto.py``; ratios, the machines being shared). The same
table is in README.md. When the chosen iterative method ends at ``max_iter`` or ``time_limit``
without a certificate meeting ``tol``, and time is left, ``auto`` goes on with the next candidate of
its row, warm-started from the point reached (``fallback=True``); after ``numerical_error`` it goes
on too, the next method starting from scratch (or, for ``active_set``, which reads only its
first active set from a warm start, from the failed point if it is certified).
"""

from __future__ import annotations

import math
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

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
)
from svmbench.problems.base import Certificate, Problem
from svmbench.problems.validation import check_bool
from svmbench.solvers import registry
from svmbench.solvers.auto_features import Features
from svmbench.solvers.base import (
    STATUS_MESSAGES,
    ConvergenceWarning,
    Outcome,
    Solver,
    SolveResult,
    Status,
    WarmStart,
)
from svmbench.solvers.registry import register


@dataclass(frozen=True)
class Rule:
    """One row of the table: when it applies, the solvers to run in order, and why. With
    ``probe``, the first solver runs at most ``max(probe, probe_work / nnz(X))`` of its
    iterations (unless the user fixed ``max_iter``): a cheap try that often suffices, the next
    solver going on when it does not."""

    kinds: tuple[str, ...]
    when: Callable[[Features], bool]
    condition: str
    solvers: tuple[str, ...]
    measured: str
    probe: int = 0
    probe_work: float = 0.0


def _always(f: Features) -> bool:
    return True


_LINEAR = ("soft_margin_primal", "soft_margin_dual")
#: Statuses after which the next method of the choice goes on (a limit, or a numerical failure).
RETRIED = (Status.MAX_ITER, Status.TIME_LIMIT, Status.NUMERICAL_ERROR)
#: dcd needs few epochs when C·mean‖x‖² is small (each coordinate's box is tight against the
#: diagonal of Q); past this it can take thousands on dense low-dimensional data, where the
#: barrier's O(n·min(n, d)²) steps are cheap. The two cross at 1.5-2 (n=5000, d=20 and 100).
SMALL_C_R2 = 1.5
#: cs_dcd against clarabel's small QP (n·k <= 1000): iris at C·mean‖x‖² = 4 took cs_dcd half
#: clarabel's time, at 40 ten times it.
MULTICLASS_SMALL_C_R2 = 10.0
#: Linear problems with at most this many stored entries are tiny: dcd's epochs cost 1-6 µs,
#: clarabel's and the barrier's solves 5-14 ms, so dcd tries a probe first, whatever C·‖x‖²
#: says (its epochs vary with the data beyond what the rules read): ``max(PROBE, PROBE_WORK /
#: nnz(X))`` epochs, about clarabel's time at dcd's ~1 entry per ns, so that a failed probe at
#: most doubles the time; most tiny duals measured took dcd a fraction of clarabel's time
#: (docs/measurements.md, "auto").
TINY = 5000
PROBE = 700
PROBE_WORK = 6e6
#: Dense data with min(n, d) up to this: the barrier's normal equations (d×d by Woodbury, or
#: n×n) cost little per Newton step.
BARRIER_MIN_DIM = 200

#: The logistic loss's dual CD gets a probe of ``max(LOGISTIC_PROBE, LOGISTIC_PROBE_WORK /
#: nnz(X))`` epochs on small problems of moderate C·mean‖x‖² (its epochs cost microseconds
#: there, the Newton method's NumPy steps a millisecond or more); past the probe the Newton
#: method goes on from its point.
LOGISTIC_PROBE = 100
LOGISTIC_PROBE_WORK = 1e5
#: ... on problems of at most this many stored entries whose C·mean‖x‖² is at most this.
LOGISTIC_SMALL = 20_000
LOGISTIC_SMALL_C_R2 = 50.0

#: The linear SVR's dual CD certifies quickly with the squared loss up to this C·mean‖x‖²; the plain
#: loss, or beyond it, takes thousands of epochs where Clarabel's interior point takes 0.1-3 s.
SVR_DCD_C_R2 = 100.0

#: Kernel duals with at most this many examples: SMO tries a probe of SMALL_KERNEL_PROBE pair
#: updates (enough where C is moderate), then the active-set method goes on from its point, its
#: cost set by the active set's changes rather than by C (SMO's updates grow with C there).
SMALL_KERNEL_N = 300
SMALL_KERNEL_PROBE = 2000

#: The table, read top to bottom; the first row whose kind and condition match decides. Times are
#: CPU seconds to tol = 1e-6 on one core (the machine shared), from
#: ``benchmarks/studies/bench_auto.py``.
RULES: tuple[Rule, ...] = (
    Rule(
        ("hard_margin",),
        _always,
        "any",
        ("barrier", "clarabel"),
        "barrier 0.10 s vs clarabel 0.63 s (n=5000, d=20), 0.09 vs 6.1 s (n=300, d=1000)",
    ),
    Rule(
        ("soft_margin_dual",),
        lambda f: f.bias == "free" and f.n * f.d <= 20_000,
        "free bias, n·d <= 20000",
        ("clarabel", "barrier"),
        "breast cancer (569×30): clarabel 0.03 s vs barrier 0.04-0.08 s",
    ),
    Rule(
        _LINEAR,
        lambda f: f.bias == "free",
        "free bias (dcd has no equality constraint)",
        ("barrier", "accpm", "clarabel"),
        "n=2000, d=20: barrier 0.01 s vs accpm 0.6-0.9 s, clarabel 0.07-0.1 s",
    ),
    Rule(
        _LINEAR,
        lambda f: f.n * f.d * f.density <= TINY,
        f"n·d <= {TINY} (a tiny problem)",
        ("dcd", "clarabel", "barrier"),
        "gaussian n=100, d=2, sep=6 and quadrant n=200, d=2, C=0.1-10: dcd 0.5-2.7 ms (8-745 "
        "epochs) vs clarabel 4.8-7.8 ms; breast cancer n=200, C=1: 2.5 vs 10 ms; gaussian n=200, "
        "d=5, C=1: 5 ms (5426 epochs) vs 7 ms; where dcd needs more, clarabel beat the barrier at "
        "n <= 200",
        probe=PROBE,
        probe_work=PROBE_WORK,
    ),
    Rule(
        _LINEAR,
        lambda f: f.C_R2 <= SMALL_C_R2,
        f"C·mean‖x‖² <= {SMALL_C_R2}",
        ("dcd", "barrier", "clarabel"),
        "n=5000, d=100: dcd 0.024/0.049/0.073 s vs barrier 0.076/0.062/0.062 s at C·mean‖x‖² = "
        "0.5/1/2; unscaled breast cancer at C=0.01 (2e4): dcd max_iter, barrier 0.008 s",
    ),
    Rule(
        _LINEAR,
        lambda f: not f.sparse and min(f.n, f.d) <= BARRIER_MIN_DIM,
        f"dense, min(n, d) <= {BARRIER_MIN_DIM}",
        ("barrier", "dcd", "clarabel"),
        "n=20000, d=50, C=1: barrier 0.17 s, dcd 2.2 s or max_iter; C=1e3: dcd max_iter",
    ),
    Rule(
        ("soft_margin_dual",),
        lambda f: not f.sparse,
        "dense, min(n, d) > 200",
        ("barrier", "dcd", "clarabel"),
        "n=d=500: barrier 0.055-0.074 s vs dcd 0.065-0.091 s, clarabel 0.5-0.8 s",
    ),
    Rule(
        _LINEAR,
        lambda f: min(f.n, f.d) <= 2000,
        "sparse, or a primal with min(n, d) > 200; min(n, d) <= 2000",
        ("dcd", "barrier"),
        "n=d=500 primal: dcd 0.03-0.1 s vs barrier 0.1-0.16 s",
    ),
    Rule(
        _LINEAR,
        _always,
        "sparse and large",
        ("dcd",),
        "n=d=20000, 0.2% dense: dcd 0.016 s; barrier past its 20 s limit",
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.kernel == "linear" and f.n <= 5000 and (f.C_max >= 10 or f.C_R2 >= 1e3),
        "the linear kernel, C >= 10 or C·mean‖x‖² >= 1e3, n <= 5000",
        ("barrier", "smo", "clarabel"),
        "gaussian d=20, C=100: barrier 0.11 s vs smo 5.8 s (n=500); 2.6 s vs smo past 20 s "
        "(n=2000); unscaled breast cancer, C=1: barrier 1.2 s, smo past 10 s; C·mean‖x‖² = 340: "
        "smo 0.045 vs barrier 0.063 s",
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.kernel == "poly" and f.kernel_rank <= f.n / 4 and f.n <= 5000 and f.C_R2 >= 1e3,
        "a polynomial kernel of low rank (monomials <= n/4), C·mean K_ii >= 1e3, n <= 5000",
        ("barrier", "smo", "clarabel"),
        "degree 3, C·mean K_ii = 2.2e3-2.8e3: barrier 2.2 vs smo 10 s (circles n=1500), 1.9 vs "
        "6.6 s (xor), 4.2 s vs smo max_iter (gaussian n=2000, d=4); at 230: 3.5 vs 0.9 s, 0.9 vs "
        "1.2 s; full rank (breast cancer, C=1e3): smo 0.1 vs barrier 0.55 s",
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.n <= SMALL_KERNEL_N,
        f"n <= {SMALL_KERNEL_N} (a small dual: its Gram matrix is cheap)",
        ("smo", "active_set", "barrier", "clarabel"),
        "iris pairs (80 points), RBF γ = 1e-9..1e3: smo 1.3-7 ms where C <= 1e4, 12 ms to 10 s "
        "or numerical_error at C = 1e7-1e10; after smo's probe, active_set 1-23 changes, "
        "5-25 ms in all, certified to C = 1e10",
        probe=SMALL_KERNEL_PROBE,
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.kernel == "rbf" and not f.sparse and f.n >= 1000 and f.d >= 5,
        "RBF on dense rows, n >= 1000, d >= 5",
        ("smo_batch", "smo", "barrier", "clarabel"),
        "gaussian d=20, C=1: smo_batch 0.046 vs smo 0.078 s (n=2000), 0.29 vs 0.60 s (n=5000), "
        "3.1 vs 6.8 s (n=10 000; LIBSVM 12 s); n=1000, C=1/1e3: 0.78x/0.86x smo's time; d=5, "
        "n=2000: 0.95x/0.64x; d=2 (circles n=1500-6000, C=1): 2-4.6x smo's time, the kernel "
        "rows too cheap for its GEMM blocks to pay",
    ),
    Rule(
        ("kernel_dual",),
        _always,
        "otherwise",
        ("smo", "barrier", "clarabel"),
        "RBF: smo 0.007-0.08 s vs barrier 0.03-0.07 s (n=500), 0.13-1.1 vs 1.0-2.0 s (n=2000)",
    ),
    Rule(
        ("multiclass_hinge",),
        lambda f: f.n * f.n_classes <= 1000 and f.C_R2 > MULTICLASS_SMALL_C_R2,
        f"n·k <= 1000 (a small QP) and C·mean‖x‖² > {MULTICLASS_SMALL_C_R2}",
        ("clarabel", "cs_dcd"),
        "unscaled wine (178×3), C=1e-3..1e3: clarabel 0.017-0.025 s, cs_dcd 0.7 s to its cap; "
        "iris, C=10/100: clarabel 0.008-0.012 s vs cs_dcd 0.015-0.85 s; C=1 (C·mean‖x‖² = 4): "
        "cs_dcd 0.008 vs clarabel 0.016 s",
    ),
    Rule(
        ("multiclass_hinge",),
        _always,
        "otherwise",
        ("cs_dcd", "clarabel"),
        "digits: cs_dcd 0.2-17 s vs clarabel 37-70 s; iris, C=0.1: cs_dcd 0.003-0.005 s vs "
        "clarabel 0.006-0.011 s",
    ),
    Rule(
        ("logistic",),
        lambda f: (
            f.bias != "free"
            and f.n * f.d * f.density <= LOGISTIC_SMALL
            and f.C_R2 <= LOGISTIC_SMALL_C_R2
        ),
        f"bias regularized or none, nnz(X) <= {LOGISTIC_SMALL}, C·mean‖x‖² <= "
        f"{LOGISTIC_SMALL_C_R2:g}",
        ("logistic_dcd", "logistic_newton", "logistic_cvxpy"),
        "breast cancer n=200 (C·mean‖x‖² = 0.33/33 at C = 0.01/1): logistic_dcd 0.002/0.027 s "
        "vs logistic_newton 0.012/0.055 s; gaussian n=100, d=2 (3.2 at C=1): 0.001 vs 0.003-0.01 "
        "s; at C·mean‖x‖² = 320-3e5 (C = 100, 1e4) Newton 0.024-0.095 s, dcd 2-4x that",
        probe=LOGISTIC_PROBE,
        probe_work=LOGISTIC_PROBE_WORK,
    ),
    Rule(
        ("logistic",),
        _always,
        "otherwise",
        ("logistic_newton", "logistic_cvxpy"),
        "gaussian n=20000, d=50, C=0.01/1/100/1e4: logistic_newton 0.19/0.17/0.29/0.21 s vs "
        "logistic_dcd 0.38/5.2 s/past 20 s/past 20 s; n=5000, d=5, C=1e4: 0.04 s vs past 20 s; "
        "sparse n=d=3000 (1%), C=0.01/1/100: 0.03/0.08/0.42 vs 0.05/0.12/0.34 s, C=1e4: 2.2 "
        "vs 0.82 s (dcd's one win, left to it by no rule: one data set); n=d=20000 (0.2%), "
        "C=1: 0.96 vs 2.5 s; unscaled breast cancer, C=1: 0.09 s vs dcd max_iter",
    ),
    Rule(
        ("svr_dual", "nu_svc", "nu_svr", "one_class"),
        _always,
        "any (LIBSVM's family, the generalized SMO)",
        ("smo", "barrier", "clarabel"),
        "RBF, n=300/1000: ε-SVR (friedman1) C=1: smo 0.029/0.15 s vs barrier 0.23/2.1 s, C=100: "
        "0.10/0.73 vs 0.28/3.5 s; ν-SVC ν=0.3: 0.025/0.30 vs 0.14/0.74 s; ν-SVR: 0.013/0.076 vs "
        "0.25/2.2 s; one-class ν=0.1: 0.005/0.015 vs 0.063/0.46 s",
    ),
    Rule(
        ("svr_primal",),
        lambda f: f.loss == "squared_epsilon_insensitive" and f.C_R2 <= SVR_DCD_C_R2,
        f"squared ε-insensitive loss, C·mean‖x‖² <= {SVR_DCD_C_R2:g}",
        ("svr_dcd", "clarabel"),
        "friedman1 n=1000 (C·mean‖x‖² = 10): svr_dcd 0.013 s vs clarabel 0.11 s; regression "
        "n=5000, d=50 (50): 0.12 vs 2.7 s; at 1000-5000 dcd 1.1 s to max_iter vs clarabel "
        "0.14-3.1 s",
    ),
    Rule(
        ("svr_primal",),
        _always,
        "otherwise (the plain ε-insensitive loss, larger C, a free bias)",
        ("clarabel", "svr_dcd"),
        "plain loss, friedman1 n=1000, C=1: clarabel 0.13 s vs svr_dcd 5.2 s; regression n=5000, "
        "d=50: 2.7 s vs svr_dcd max_iter (6.6e-4)",
    ),
    Rule(
        ("multinomial_logistic",),
        _always,
        "any",
        ("multinomial_newton", "logistic_cvxpy"),
        "iris, wine, C=0.01/1/1e3: multinomial_newton 14-185 ms vs logistic_cvxpy 0.18-0.68 s; "
        "digits (1797×64, k=10): 0.24/0.45/2.1 s",
    ),
)

#: Kinds with no exact method: ``auto`` refuses them rather than report an uncertified optimum.
_NO_EXACT = {ChainStructuredHinge.kind: "ssvm_sgd"}


def _takes(cls: type[Solver], warm_start: WarmStart | None) -> bool:
    return warm_start is None or bool(set(warm_start.fields) & set(cls.warm_start_uses))


@dataclass(frozen=True)
class Choice:
    """The solvers ``auto`` runs on a problem, in order, and the sentence saying why: the first
    accepts the problem; the others are the row's later candidates, each asked whether it accepts
    the problem only when its turn comes."""

    solvers: tuple[str, ...]
    why: str
    rule: int
    probe: int = 0


#: The last problem chosen for and its choice: an estimator's fit asks three times of one
#: problem (its view, ``check_accepts``, ``check_memory``), the features and rules run once.
_LAST_CHOICE = threading.local()


def choose(problem: Problem) -> Choice:
    """The first row of :data:`RULES` that matches ``problem``, and its solvers that accept the
    problem, in order (``TypeError`` if none does). The choice never depends on a warm start:
    the same problem always gets the same method."""
    last = getattr(_LAST_CHOICE, "pair", None)
    if last is not None and last[0]() is problem:
        return last[1]
    choice = _choose(problem)
    try:
        _LAST_CHOICE.pair = (weakref.ref(problem), choice)
    except TypeError:  # a problem class without weak references: nothing kept
        _LAST_CHOICE.pair = None
    return choice


def _choose(problem: Problem) -> Choice:
    f = Features.of(problem)
    for index, rule in enumerate(RULES):
        if f.kind not in rule.kinds or not rule.when(f):
            continue
        accepted = (name for name in rule.solvers if _accepts(name, problem))
        first = next(accepted, None)
        if first is None:
            continue
        # the fallbacks are asked when one is needed (auto._run), not for every problem: only
        # a probe needs to know its successor now
        names = (first, *_after(rule.solvers, first))
        why = f"{f.kind}, {rule.condition}: {rule.measured}"
        if first != rule.solvers[0]:
            why += f" ({rule.solvers[0]} does not accept this problem)"
            return Choice(names, why, index)
        successor = next(accepted, None) if rule.probe else None
        if successor is not None:
            probe = max(rule.probe, int(rule.probe_work / max(1.0, f.n * f.d * f.density)))
            why += f" ({first} gets {probe} iterations, then {successor} goes on)"
            return Choice(names, why, index, probe)
        return Choice(names, why, index)
    raise TypeError(f"solver 'auto' has no rule for {problem.describe()}")


def _accepts(name: str, problem: Problem) -> bool:
    return registry.solver_class(name).unsupported_reason(problem) is None


def _after(solvers: tuple[str, ...], name: str) -> tuple[str, ...]:
    return solvers[solvers.index(name) + 1 :]


@register
class Auto(Solver):
    """Pick the fastest certified method for the problem (:data:`RULES`), run it, and say so.

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for, handed to the chosen method.
    max_iter, time_limit :
        Passed to the chosen method (``max_iter`` in its own unit; None: its default).
        ``time_limit`` bounds the wall time of the whole call, fallbacks included.
    trace : bool or "every", default=True
        Passed to the chosen method when it is iterative.
    fallback : bool, default=True
        When the first method ends at ``max_iter`` or ``time_limit`` short of ``tol``, run the
        next candidate of the row, warm-started where it can be.
    """

    name = "auto"
    #: every kind with an exact method; :meth:`unsupported_reason` asks :func:`choose`
    supported: ClassVar = {
        kind: {} for kind in (HardMarginPrimal, SoftMarginPrimal, SoftMarginDual, KernelDual)
    } | {
        kind: {}
        for kind in (
            MulticlassHinge, Logistic, MultinomialLogistic, SVRPrimal, SVRDual, NuSVCDual,
            NuSVRDual, OneClassDual,
        )
    }  # fmt: skip
    iteration_unit = "iterations of the chosen solver (info['auto'])"
    warm_start_uses = ("alpha", "w", "W", "beta", "qp")
    default_max_iter = 0  # never used: None means each method's own default
    checks_separation = False  # the chosen method's record already did

    def __init__(
        self,
        *,
        tol: float = 1e-6,
        max_iter: int | None = None,
        time_limit=None,
        trace=True,
        fallback: bool = True,
    ):
        super().__init__(tol=tol, max_iter=max_iter, time_limit=time_limit)
        self.max_iter = max_iter
        if trace not in (True, False, "every"):
            raise ValueError(f"trace must be True, False or 'every', got {trace!r}")
        self.trace = trace
        self.fallback = check_bool("fallback", fallback)

    @classmethod
    def unsupported_reason(cls, problem: Problem) -> str | None:
        if not isinstance(problem, Problem):
            return f"a svmbench problem is expected, got {type(problem).__name__}"
        if problem.kind in _NO_EXACT:
            return (
                f"no exact method solves {problem.kind!r}; use {_NO_EXACT[problem.kind]!r} "
                "(stochastic, its gap is certified but not driven to tol)"
            )
        try:
            choose(problem)
        except TypeError as exc:
            return str(exc)
        return None

    def check_accepts(self, problem: Problem) -> None:
        """As every solver's, keeping the choice for :meth:`_run` (the rules run once a call)."""
        if isinstance(problem, Problem) and problem.kind not in _NO_EXACT:
            try:
                self._choice = (problem, choose(problem))
                return
            except TypeError:
                pass
        super().check_accepts(problem)

    @classmethod
    def memory_estimate(cls, problem: Problem, **options) -> float | None:
        """The first chosen method's estimate (a fallback runs after it, not beside it)."""
        first = choose(problem).solvers[0]
        return registry.solver_class(first).memory_estimate(problem)

    def _options(self, name: str, probe: int = 0) -> dict[str, Any]:
        cls = registry.solver_class(name)
        options: dict[str, Any] = {"tol": self.tol}
        if self.max_iter is not None:
            options["max_iter"] = self.max_iter
        elif probe:
            options["max_iter"] = probe
        if registry.accepts_option(cls, "trace"):
            options["trace"] = self.trace
        return options

    def _inner(self, name: str, time_left: float, probe: int = 0) -> Solver:
        """The chosen method's solver, built once per name and options, given the time left
        (spent: one chunk, then stop)."""
        options = self._options(name, probe)
        key = (name, tuple(sorted(options.items())))
        cache = self.__dict__.setdefault("_solvers", {})
        if key not in cache:
            cache[key] = registry.get(name, **options)
        solver = cache[key]
        solver.time_limit = max(time_left, 1e-12) if math.isfinite(time_left) else math.inf
        return solver

    def _run(self, problem, warm_start, clock, callback) -> Outcome:
        kept = getattr(self, "_choice", None)
        choice = kept[1] if kept is not None and kept[0] is problem else choose(problem)
        self._choice = None
        chosen, result, compile_time, excluded = [], None, 0.0, 0.0
        start, unused = warm_start, ""
        first = registry.solver_class(choice.solvers[0])
        if not _takes(first, warm_start):
            # the choice does not bend to a warm start; say that this one goes unused
            start, unused = None, f"{first.name} {first.warm_start_refusal}: warm start not used"
        for name in choice.solvers if self.fallback else choice.solvers[:1]:
            if chosen and not _accepts(name, problem):
                continue
            if chosen and not _takes(registry.solver_class(name), start):
                start = None  # the next method starts itself
            probe = choice.probe if self.fallback and not chosen else 0
            solver = self._inner(name, self.time_limit - (clock.wall - compile_time), probe)
            compiled = solver.warm_up_for(problem)
            compile_time += compiled
            entered = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # auto warns once, below
                result = solver.solve(problem, warm_start=start, callback=callback)
            # the inner call's own certificates (trace, record) are certify time here too
            excluded += compiled + (time.perf_counter() - entered) - result.solve_time
            clock.certify_time += result.certify_time
            chosen.append(name)
            retry = result.status in RETRIED and not (
                callback is not None and "callback" in result.message
            )
            if not retry or clock.wall - compile_time >= self.time_limit:
                if retry and probe and result.status is Status.MAX_ITER:
                    # the probe's cap is auto's, not the user's: the time limit stopped the run
                    message = f"{STATUS_MESSAGES[Status.TIME_LIMIT]} (after a probe of {probe})"
                    result = replace(result, status=Status.TIME_LIMIT, message=message)
                break
            # after a numerical failure the next method starts from scratch, unless it only
            # reads its first active set from the point (active_set) and the point is certified
            failed = result.status is Status.NUMERICAL_ERROR and not (
                result.certified and _reads_active_set(choice.solvers, name, problem)
            )
            start = WarmStart.parse(result, problem) if result.variables and not failed else None
        info = dict(result.info)
        info["auto"] = {
            "chose": chosen[-1],
            "why": choice.why,
            "rule": choice.rule,
            "tried": tuple(chosen),
        }
        if unused:
            info["auto"]["warm_start"] = unused
        if len(chosen) > 1:
            info["auto"]["why"] += (
                f"; {', '.join(chosen[:-1])} stopped short of tol, {chosen[-1]} went on"
            )
        self._chosen, self._last = registry.solver_class(chosen[-1]), (problem, result)
        return Outcome(
            status=result.status,
            variables=result.variables,
            iterations=result.iterations,
            certificate=_certificate_of(result),
            farkas=result.farkas,
            message=f"{chosen[-1]}: {result.message}" + (f" ({unused})" if unused else ""),
            info=info,
            model=result.model,
            trace=result.trace,
            compile_time=compile_time,
            excluded_time=excluded,
        )

    def _result(self, problem, **fields):
        solved, last = getattr(self, "_last", None) or (None, None)
        self._last = None
        if solved is problem:
            # the chosen method's record, certified by this problem already: renamed, not
            # built and checked twice (a rescaled run falls through to the base, its record
            # having been certified on the rescaled problem)
            if last.status in RETRIED:
                warnings.warn(
                    f"auto ({last.solver}): {STATUS_MESSAGES[last.status]} ({last.iterations} "
                    f"{last.iteration_unit})",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            return replace(
                last,
                solver=self.name,
                solve_time=float(fields["solve_time"]),
                compile_time=float(fields["compile_time"]),
                message=fields["message"],
                info=fields["info"],
            )
        result = super()._result(problem, **fields)
        chosen = getattr(self, "_chosen", None)
        if chosen is None:
            return result
        return replace(result, iteration_unit=chosen.iteration_unit)


def _reads_active_set(solvers: tuple[str, ...], name: str, problem: Problem) -> bool:
    """Whether the method that accepts ``problem`` after ``name`` in ``solvers`` takes from a
    warm start only its active set (:attr:`Solver.warm_start_sets_active_set`), so that a point
    that failed on rounding near the optimum is still a good start."""
    following = next((n for n in _after(solvers, name) if _accepts(n, problem)), None)
    if following is None:
        return False
    return registry.solver_class(following).warm_start_sets_active_set


def _certificate_of(result: SolveResult) -> Certificate | None:
    if math.isnan(result.primal):
        return None
    return Certificate(
        result.primal,
        result.dual,
        result.gap,
        result.rel_gap,
        result.certified,
        dict(result.residuals),
    )


def rules_markdown() -> str:
    """:data:`RULES` as the Markdown table in README.md (a test keeps the two equal)."""
    lines = [
        "| # | problem | when | runs (then, if short of tol) | measured |",
        "|---|---|---|---|---|",
    ]
    for index, rule in enumerate(RULES):
        names = [f"`{name}`" for name in rule.solvers]
        if rule.probe_work:
            names[0] += f" (max({rule.probe}, {rule.probe_work:.0e}/nnz(X)) iterations)"
        elif rule.probe:
            names[0] += f" ({rule.probe} iterations)"
        runs = ", ".join(names)
        kinds = ", ".join(rule.kinds)
        lines.append(f"| {index} | {kinds} | {rule.condition} | {runs} | {rule.measured} |")
    return "\n".join(lines)
