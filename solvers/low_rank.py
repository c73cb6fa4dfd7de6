"""Certified low-rank kernel SVM, registered as ``low_rank``: Nyström or pivoted-Cholesky features
``K ≈ FFᵀ`` (:mod:`problems.low_rank`), then the linear SVM on F by dual coordinate descent
(:mod:`solvers.dcd`) or the interior-point method (:mod:`solvers.barrier`), with a bracket on the
exact kernel problem. The barrier's ``kernel_approximation`` (``registry.get("barrier",
kernel_approximation=..., rank=r)``) is this solver at the fixed rank r with that barrier, all
its options kept, as the inner method (:meth:`LowRankKernelSVM.run_with_inner`): the same record.

Problem (docs/ARCHITECTURE.md §2): the kernel dual ``max Σα_i − ½αᵀQ̃α``, ``Q_ij = y_i y_j K_ij``,
its box, ``yᵀα = 0`` for a free bias, ``K + s²`` for a regularized one. The method solves the same
problem with ``FFᵀ`` in place of K (the linear SVM on F, ``SoftMarginDual(F)`` for dcd and
``SoftMarginPrimal(F)`` for the barrier: same C_i, loss and bias), to the certified relative gap
of *that* problem ≤ ``tol``. The record certifies what it returns on the problem it was given:
its α (the linear solve's dual point, feasible for the exact problem) and the best b for it,
``primal``, ``dual``, ``gap`` and ``certified`` from ``problem.certificate(alpha=α)``, and
``optimal`` only when that meets ``tol`` (else ``not_certified``; beyond ``lower_bound_max_n``
the exact certificate is not computed and the record claims none). The approximation's own
status and certificate are ``info["approx_status"]``, ``approx_primal``, ``approx_dual``,
``approx_rel_gap``. Also in ``result.info``:

- ``bracket_upper`` ≥ P*: the linear model ``w`` is the RKHS function ``f = Σ_j c_j K(z_j, ·)``,
  ``c = T w`` on the landmarks z_j, of norm ``‖f‖_H = ‖w‖`` (:mod:`problems.low_rank`), a primal
  point of the exact problem. Its exact primal value ``½cᵀK_ZZ c (+ ½w_b²) + Σ C_i loss(y_i(f(x_i)
  + b))`` is recomputed in float64 on K (a free b re-minimized exactly), O(n·m·d), at any n.
- ``bracket_lower`` ≤ D* = P*: the exact dual value of the linear solve's α, which is feasible
  for the exact problem (same box and ``yᵀα = 0``; projected to be safe), scaled by the best
  ``t ∈ [0, 1]`` (``D(tα) = tL − t²q`` with ``L = Σα_i``, ``q = L − D(α)``: ``t = min(1, L/2q)``,
  still feasible; ``info["lower_bound_scale"]``), by the fused kernel product, O(n·n_SV·d); only
  for n ≤ ``lower_bound_max_n``.
- ``bracket_rel_width = (upper − lower)/max(1, |upper|)`` (None without a lower bound).

Rank rule (``rank=None``). Nyström: landmarks are the first r of a seeded permutation;
r = 16, 32, 64, … until the relative trace residual ``tr(K − FFᵀ)/tr(K)``, estimated on a seeded
sample of ``rule_sample`` examples (exact when n ≤ ``rule_sample``), is ≤ ``trace_target``.
Pivoted Cholesky: columns are added until the exact residual trace is ≤ ``trace_target ·
tr(K)``. Either way r ≤ ``max_rank`` and r ≤ the memory cap ``memory_mb·2²⁰/(8n)``. An integer
``rank`` fixes r (still under the memory cap). ``info`` records the rule, the r tried and the
residual trace of the final factor on all n.

Memory plan: F is float64, n×r', built in row blocks of 32 MB (K_nm never whole); with the
default ``memory_mb=4096`` that is r ≤ 536 at n = 10⁶. The inner solvers add O(n) vectors (dcd)
or, for the barrier, O(n·r) (use it up to n ≈ 10⁵); the bounds O(n) and the m×m K_ZZ.

The model (``result.model``) is a :class:`~problems.models.KernelModel` over the landmarks with
coefficients c and the bias of the upper bound: it predicts with the exact kernel, and its exact
primal value is ``bracket_upper`` (the record's α and b are another point of the exact problem).

References
----------
C. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines", NIPS 2001.
S. Fine and K. Scheinberg, "Efficient SVM training using low-rank kernel representations",
JMLR 2001. C.-J. Hsieh et al., "A dual coordinate descent method for large-scale linear SVM",
ICML 2008.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import numpy as np

from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.base import make_certificate
from svmbench.problems.low_rank import (
    landmark_model_primal,
    nystrom,
    nystrom_rank_rule,
    pivoted_cholesky,
    relative_trace_residual,
)
from svmbench.problems.models import KernelModel
from svmbench.problems.validation import check_int, check_option, check_real
from svmbench.solvers import registry
from svmbench.solvers.base import STATUS_MESSAGES, Outcome, Solver, Status, all_finite
from svmbench.solvers.clock import Clock
from svmbench.solvers.registry import register
from svmbench.solvers.time_budget import (
    KERNEL_SAMPLE,
    best_seconds,
    dense_seconds,
    refused_outcome,
    stage_refusal,
)

APPROXIMATIONS = ("nystrom", "cholesky")
INNERS = ("auto", "dcd", "barrier")
#: Kernels whose Gram matrices are PSD for every data set: the RKHS argument of the upper bound
#: needs one (sigmoid may be indefinite; a precomputed Gram has no features for the landmarks).
KERNELS = ("linear", "poly", "rbf")


def _kernel_supported(problem: KernelDual) -> str | None:
    if problem.kernel not in KERNELS:
        return (
            f"kernel={problem.kernel!r} is not supported (supported: {KERNELS}: the bracket "
            "needs a PSD kernel on features)"
        )
    return None


@register
class LowRankKernelSVM(Solver):
    """Low-rank kernel SVM: features by a rank rule, a linear solver on them, a bracket on the
    exact problem (see the module notes).

    Parameters
    ----------
    approximation : {"nystrom", "cholesky"}, default="nystrom"
    rank : int or None, default=None
        None: the rank rule (module notes); an int ≥ 1 fixes r (capped by n and the memory cap).
    trace_target : float, default=1e-3
        Target of the relative trace residual ``tr(K − FFᵀ)/tr(K)`` of the rank rule, in (0, 1).
        1e-3 measured close to exact SMO's test accuracy where looser targets fell short, in
        about the same time (docs/measurements.md, "low_rank").
    max_rank : int, default=1024
    memory_mb : float, default=4096
        Budget of F (float64): r ≤ ``memory_mb·2²⁰/(8n)``.
    rule_sample : int, default=2000
        Examples on which the Nyström rule estimates the residual trace.
    inner : {"auto", "dcd", "barrier"}, default="auto"
        The linear solver on F; ``"auto"``: dcd, but barrier for a free bias (dcd handles the
        regularized and no bias only).
    tol : float, default=1e-6
        Certified relative gap: the inner solver's target on the approximate problem, and what
        the exact problem's certificate of the returned α must meet for ``optimal``.
    lower_bound_max_n : int, default=100000
        The exact dual lower bound (O(n·n_SV·d)) is computed only up to this n.
    seed : int, default=0
        Landmarks, the rank rule's sample and dcd's permutations.
    max_iter, time_limit, trace
        Passed to the inner solver (its iterations: dcd epochs, barrier Newton steps; its trace
        of the approximate problem's certificates).
    """

    name = "low_rank"
    #: the inner solver's (``info["inner_iteration_unit"]``)
    iteration_unit = "inner iterations"
    supported: ClassVar = {KernelDual: {"kernel": _kernel_supported}}
    #: its model is the landmark expansion, not the returned α: not held to the exact optimum
    check_rtol = math.inf

    def __init__(
        self,
        *,
        approximation: str = "nystrom",
        rank: int | None = None,
        trace_target: float = 1e-3,
        max_rank: int = 1024,
        memory_mb: float = 4096.0,
        rule_sample: int = 2000,
        inner: str = "auto",
        lower_bound_max_n: int = 100_000,
        seed: int = 0,
        trace: bool = True,
        **common,
    ):
        super().__init__(**common)
        if trace not in (True, False, "every"):
            raise ValueError(f"trace must be True, False or 'every', got {trace!r}")
        self.trace = trace
        self._inner_max_iter = common.get("max_iter")
        self.approximation = check_option("approximation", approximation, APPROXIMATIONS)
        self.rank = None if rank is None else check_int("rank", rank, low=1)
        self.trace_target = check_real("trace_target", trace_target, low=0.0, high=1.0)
        self.max_rank = check_int("max_rank", max_rank, low=1)
        self.memory_mb = check_real("memory_mb", memory_mb, low=0.0)
        self.rule_sample = check_int("rule_sample", rule_sample, low=2)
        self.inner = check_option("inner", inner, INNERS)
        self.lower_bound_max_n = check_int("lower_bound_max_n", lower_bound_max_n, low=0)
        self.seed = check_int("seed", seed, low=0)

    @classmethod
    def memory_estimate(cls, problem, *, memory_mb: float = 4096.0, **options) -> float:
        """F (n × r, float64, r under the rank and memory caps), one 32 MB block, 24 vectors of
        n (the inner dcd and the bounds); the barrier's n×r blocks on top when it is the inner."""
        n = problem.n_samples
        r = min(options.get("rank") or options.get("max_rank", 1024), n)
        r = min(r, _memory_cap(n, memory_mb))
        total = 8.0 * n * r + 2.0**25 + 24 * 8.0 * n
        inner = options.get("inner", "auto")
        if inner == "barrier" or (inner == "auto" and problem.bias == "free"):
            total += 4 * 8.0 * n * (r + 1)
        return total

    def check_accepts(self, problem) -> None:
        super().check_accepts(problem)
        if self.inner == "dcd" and problem.bias == "free":
            raise TypeError(
                f"solver 'low_rank' cannot solve {problem.describe()} with inner='dcd': dcd "
                "handles bias='regularized' or 'none'; use inner='barrier' (or 'auto')"
            )

    def _inner_name(self, problem: KernelDual) -> str:
        if self.inner != "auto":
            return self.inner
        return "barrier" if problem.bias == "free" else "dcd"

    def _inner_solver(self, name: str) -> Solver:
        opts: dict[str, Any] = {
            "tol": self.tol,
            "max_iter": self._inner_max_iter,
            "trace": self.trace,
        }
        if math.isfinite(self.time_limit):
            opts["time_limit"] = self.time_limit
        if name == "dcd":
            opts["seed"] = self.seed
        return registry.get(name, **opts)

    def warm_up(self) -> float:
        """Compile the inner solvers' kernels (dcd's epochs, the barrier's row passes)."""
        return sum(self._inner_solver(name).warm_up() for name in ("dcd", "barrier"))

    def warm_up_for(self, problem) -> float:
        """Compile only what the inner solver of ``problem`` runs on the factor's dense rows
        (dcd's dense epochs, or the barrier's dense passes of the problem's loss), on a 4-point
        stand-in of the surrogate; all of :meth:`warm_up` for another problem."""
        if not isinstance(problem, KernelDual):
            return self.warm_up()
        name = self._inner_name(problem)
        view = SoftMarginPrimal if name == "barrier" else SoftMarginDual
        X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
        stand_in = view(
            X, np.array([1.0, 1.0, -1.0, -1.0]), C=1.0, loss=problem.loss, bias=problem.bias
        )
        return self._inner_solver(name).warm_up_for(stand_in)

    # ---- the method ------------------------------------------------------------------------------
    def _factor(self, problem: KernelDual, clock: Clock):
        """The factor and its rank rule, or ``(None, rule)`` with ``rule["time_limit"]`` when
        the time limit refuses building it (:meth:`_factor_seconds`)."""
        n = problem.n_samples
        cap = min(self.max_rank if self.rank is None else self.rank, n)
        cap = max(1, min(cap, _memory_cap(n, self.memory_mb)))
        rule: dict[str, Any] = {"memory_cap": _memory_cap(n, self.memory_mb), "cap": cap}
        if self.approximation == "nystrom":
            if self.rank is None:
                refusal = self._rule_refusal(problem, cap, clock)
                if refusal is not None:
                    return None, {**rule, "time_limit": refusal}
                idx, estimate, tried = nystrom_rank_rule(
                    problem,
                    target=self.trace_target,
                    max_rank=cap,
                    sample_size=self.rule_sample,
                    seed=self.seed,
                )
                rule.update(
                    rule="doubling r until the sampled tr(K − FFᵀ)/tr(K) ≤ trace_target",
                    tried=tried,
                    estimate=estimate,
                )
            else:
                order = np.random.default_rng(self.seed).permutation(n)
                idx = np.sort(order[:cap])
                rule.update(rule="fixed rank")
            refusal = self._factor_refusal(problem, idx.size, clock)
            if refusal is not None:
                return None, {**rule, "time_limit": refusal}
            factor = nystrom(problem, idx)
        else:
            refusal = self._factor_refusal(problem, cap, clock)
            if refusal is not None:
                return None, {**rule, "time_limit": refusal}
            rtol = self.trace_target if self.rank is None else 1e-12
            factor = pivoted_cholesky(problem, cap, rtol)
            rule.update(
                rule="pivoted Cholesky until tr(K − FFᵀ) ≤ trace_target · tr(K)"
                if self.rank is None
                else "fixed rank"
            )
        return factor, rule

    def _run(self, problem: KernelDual, warm_start, clock: Clock, callback) -> Outcome:
        inner_name = self._inner_name(problem)
        return self.run_with_inner(
            problem, inner_name, self._inner_solver(inner_name), clock, callback
        )

    def run_with_inner(
        self, problem: KernelDual, inner_name: str, inner: Solver, clock: Clock, callback
    ) -> Outcome:
        """Factor K, solve the linear SVM on F with ``inner`` (a configured ``dcd`` or
        ``barrier``, named ``inner_name``) and bound the exact problem: the :class:`Outcome` of
        the exact problem. The barrier's ``kernel_approximation`` runs here with itself as the
        inner solver (its own ``method``, ``tol``, ``max_iter``, ``time_limit``...)."""
        tic = time.perf_counter()
        factor, rule = self._factor(problem, clock)
        if factor is None:
            return refused_outcome(rule["time_limit"], problem, info={"rank_rule": rule})
        refusal = stage_refusal(clock, self.time_limit, f"the {inner_name} solve on the factor")
        if refusal is not None:
            info = {"rank_rule": rule, "factor_rank": factor.rank}
            return refused_outcome(refusal, problem, info=info)
        # the barrier's primal-dual method on the primal form, with its jitted row passes: fewer
        # iterations and far less time than on the dual form (docs/measurements.md, "low_rank");
        # dcd's epochs are the same on either form
        view = SoftMarginPrimal if inner_name == "barrier" else SoftMarginDual
        surrogate = view(
            factor.F,
            problem.y,
            C=problem.C,
            loss=problem.loss,
            bias=problem.bias,
            bias_scale=problem.bias_scale,
            sample_weight=problem.sample_weight,
        )
        factor_time = time.perf_counter() - tic
        outcome = inner._run(surrogate, None, clock, callback)
        variables = dict(outcome.variables)
        info: dict[str, Any] = {
            **outcome.info,
            "inner": inner_name,
            "inner_iteration_unit": inner.iteration_unit,
            "approximation": factor.approximation,
            "factor_rank": factor.rank,
            "landmarks": int(factor.landmarks.size),
            "factor_time": factor_time,
            "rank_rule": rule,
            "certificate_of": "the approximate problem (kernel FFᵀ), not the exact kernel",
        }
        cert = outcome.certificate
        status, message = outcome.status, outcome.message or STATUS_MESSAGES[outcome.status]
        alpha = variables.get("alpha")
        exact = None
        with clock.certifying():
            info["relative_trace_residual"] = relative_trace_residual(problem, factor.F)
            exact_wanted, skipped = problem.n_samples <= self.lower_bound_max_n, None
            if exact_wanted and alpha is not None and math.isfinite(self.time_limit):
                # the exact certificate and the lower bound: two products with K of the support
                support = int(np.count_nonzero(alpha))
                how = f"2·n·{support} kernel entries at the measured rate"
                seconds = 2.0 * problem.n_samples * support * _kernel_entry_seconds(problem)
                stage = "the exact certificate"
                refusal = stage_refusal(clock, self.time_limit, stage, seconds, how)
                if refusal is not None and "estimate_seconds" in refusal:
                    exact_wanted, skipped = False, refusal
                    info["time_limit"] = refusal
            if all_finite(variables) and alpha is not None:
                if cert is None:
                    cert = surrogate.certificate(**variables)
                model = self._bracket(
                    problem, factor, surrogate, variables, cert, info, exact_wanted
                )
                if exact_wanted:
                    # the record certifies what it returns, on the problem it was given
                    exact = problem.certificate(alpha=alpha)
            else:
                model = None
        info["approx_status"] = outcome.status.value
        del factor, surrogate
        if exact is not None:
            returned = {"alpha": exact.primal_point["alpha"], "b": exact.primal_point["b"]}
            info["certificate_of"] = (
                "the exact kernel problem at the returned α (the approximate problem's dual "
                "point, feasible for the exact one) and its best b"
            )
        else:
            returned = {"alpha": alpha, "b": info.get("model_b")}
            # no exact certificate (n beyond lower_bound_max_n, or the time limit): none claimed
            exact = make_certificate(math.nan, math.nan, primal_point=returned)
            beyond = f"n > lower_bound_max_n={self.lower_bound_max_n}"
            info["certificate_of"] = f"none: {skipped['message'] if skipped else beyond}"
            if skipped is not None and status in (Status.OPTIMAL, Status.MAX_ITER):
                status, message = Status.TIME_LIMIT, skipped["message"]
            elif status is Status.OPTIMAL:
                status = Status.NOT_CERTIFIED
                message = (
                    f"the approximate problem is certified (relative gap {cert.rel_gap:.3g}), "
                    f"the exact one not computed beyond lower_bound_max_n="
                    f"{self.lower_bound_max_n}"
                )
        note = (
            f"the rank-{info['factor_rank']} {info['approximation']} approximation K ≈ FFᵀ of "
            f"the {problem.kernel} kernel was solved to status {outcome.status.value}; the "
            "approximation's certificate and the bracket on the exact problem are in info"
        )
        return Outcome(
            status=status,
            variables=returned,
            iterations=outcome.iterations,
            certificate=exact,
            # the status's own message too (max_iter, time_limit), as the chunk loop writes it
            message=f"{message}; {note}",
            info=info,
            model=model,
            trace=outcome.trace,
            problem=problem,
            compile_time=outcome.compile_time,
            excluded_time=outcome.excluded_time,
        )

    def _factor_refusal(self, problem: KernelDual, rank: int, clock: Clock) -> dict | None:
        """The time limit's refusal of a rank-r factor of n rows: ``n·r`` kernel entries at the
        measured rate, ``2·n·r²`` flops for the product with the transform (or the pivoted
        columns' updates) and ``9r³`` for the eigendecomposition of ``K_ZZ`` (None: it may
        start). The doubling rule is priced as twice its last try, on ``rule_sample`` rows."""
        if not math.isfinite(self.time_limit):
            return None
        rows = problem.n_samples
        seconds = rows * rank * _kernel_entry_seconds(problem)
        seconds += dense_seconds(2.0 * rows * rank**2 + 9.0 * rank**3)
        how = (
            f"{rows}·{rank} kernel entries at the measured rate, 2·{rows}·{rank}² + 9·{rank}³ flops"
        )
        return stage_refusal(clock, self.time_limit, f"the rank-{rank} factor", seconds, how)

    def _rule_refusal(self, problem: KernelDual, cap: int, clock: Clock) -> dict | None:
        """The time limit's refusal of the doubling rule up to ``cap``: twice its last try, a
        rank-``cap`` factor of ``rule_sample`` rows (:meth:`_factor_refusal`'s prices)."""
        if not math.isfinite(self.time_limit):
            return None
        rows = min(problem.n_samples, self.rule_sample)
        seconds = 2.0 * rows * cap * _kernel_entry_seconds(problem)
        seconds += dense_seconds(2.0 * (2.0 * rows * cap**2 + 9.0 * cap**3))
        how = f"twice a rank-{cap} factor of {rows} rows at the measured rates"
        return stage_refusal(clock, self.time_limit, "the rank rule", seconds, how)

    def _bracket(
        self, problem, factor, surrogate, variables, cert, info, lower_bound: bool = True
    ) -> KernelModel:
        """Fill ``info`` with the bracket on the exact problem (its lower bound only with
        ``lower_bound``); return the landmark model."""
        alpha = np.asarray(variables["alpha"], dtype=np.float64)
        w, b_lin = cert.primal_point.get("w"), cert.primal_point.get("b")
        if w is None:
            w, b_lin = surrogate.primal_from_dual(alpha)
        s = problem.bias_scale
        w_b = float(b_lin) / s if problem.bias == "regularized" and s > 0 else 0.0
        coef = factor.coefficients(w)
        tic = time.perf_counter()
        upper, b = landmark_model_primal(problem, factor.landmarks, coef, bias_weight=w_b)
        info["upper_bound_time"] = time.perf_counter() - tic
        lower = None
        if lower_bound and problem.n_samples <= self.lower_bound_max_n:
            tic = time.perf_counter()
            a = problem.project_dual(alpha)
            # D(tα) = tL − t²q is feasible for t ∈ [0, 1] (the box and yᵀα = 0 scale): the best t
            L = float(a.sum())
            q = L - problem.dual_objective(a)
            t = 1.0 if q <= 0 else min(1.0, L / (2.0 * q))
            lower = t * L - t * t * q
            info["lower_bound_scale"] = t
            info["lower_bound_time"] = time.perf_counter() - tic
        info.update(
            approx_primal=cert.primal,
            approx_dual=cert.dual,
            approx_rel_gap=cert.rel_gap,
            bracket_upper=upper,
            bracket_lower=lower,
            bracket_rel_width=None if lower is None else (upper - lower) / max(1.0, abs(upper)),
            model_b=b,
        )
        return KernelModel(
            support_vectors=problem.X[factor.landmarks],
            dual_coef=coef,
            b=b,
            kernel=problem.kernel,
            support=factor.landmarks,
            n_train=problem.n_samples,
            gamma=float(problem.gamma),
            degree=problem.degree,
            coef0=float(problem.coef0),
        )


def _kernel_entry_seconds(problem: KernelDual) -> float:
    """Seconds per kernel entry of ``problem``'s kernel, timed on a ``KERNEL_SAMPLE``-square
    block of its rows."""
    if problem.kernel == "precomputed":
        return 1e-9  # an entry read
    sample = problem.X[: min(problem.n_samples, KERNEL_SAMPLE)]
    rows = sample.shape[0]
    return best_seconds(lambda: problem.kernel_spec(sample), 2) / max(rows * rows, 1)


def _memory_cap(n: int, memory_mb: float) -> int:
    """The largest r whose n×r float64 factor fits in ``memory_mb``."""
    return max(1, int(memory_mb * 2**20 // (8 * max(1, n))))
