"""Interior-point methods, registered as the solver ``barrier``: log-barrier path following with
Newton centering, Boyd & Vandenberghe, *Convex Optimization*, ch. 11 [BV, Alg. 11.1], and its
primal-dual variant with Mehrotra's predictor-corrector [BV, §11.7; Wright97, ch. 10; GW03], on
the soft-margin primal (hinge, squared hinge), the soft-margin and kernel duals and the hard
margin (docs/ARCHITECTURE.md §2). Iterations are counted in Newton steps.

The modules, each with its equations:

- :mod:`~solvers.barrier.forms`: the forms as the methods see them (rows ``x̃_i``, the duals'
  box QP);
- :mod:`~solvers.barrier.normal_equations`: the Newton systems and their linear algebra;
- :mod:`~solvers.barrier.path`: the log-barrier path (eliminated slacks, centering, predictor);
- :mod:`~solvers.barrier.phase_one`: phase I of the hard margin and its Farkas certificate;
- :mod:`~solvers.barrier.primal_dual`: Mehrotra's predictor-corrector on the duals;
- :mod:`~solvers.barrier.primal_dual_margins`: the same on the primal forms, with the jitted
  passes of :mod:`solvers._jit.barrier`;
- :mod:`~solvers.barrier.general`, :mod:`~solvers.barrier.general_path`: the primal-dual method
  and the log-barrier path on LIBSVM's general dual (any ``GeneralDualProblem``: ε-SVR, ν-SVC,
  ν-SVR, one-class), and :mod:`~solvers.barrier.general_finish`, the active-set cleanup of its
  optimal interior point;
- :mod:`solvers.low_rank`: ``kernel_approximation`` (the factors ``K ≈ FFᵀ`` of
  :mod:`problems.low_rank` [WS], the barrier on the linear SVM on F, the bracket on the exact
  kernel problem and the landmark model).

Stopping: by default the certified relative gap of the problem (``problem.certificate`` with the
multipliers as the dual point, projected by the problem) ≤ ``tol`` after each outer step or
primal-dual iteration; ``stop_rule="native"`` stops the barrier path when
``m/t ≤ tol · max(1, |f₀|)`` (the gap bound of the central path), the primal-dual variant when the
complementarity (``αᵀz_l + (u − α)ᵀz_u``, or ``sᵀλ + ξᵀν``) is ``≤ tol · max(1, |f₀|)`` and the
residuals are small: ``‖r_d‖_∞, |yᵀα| ≤ tol · max(1, max u_i)`` (duals),
``‖r_z‖_∞, ‖r_ξ‖_∞ ≤ tol · max(1, max C_i)`` and ``‖r_p‖_∞ ≤ tol`` (primal forms, margin units).
On the duals both variants hand α alone to the certificate (the problem takes the exactly
minimizing bias; the primal-dual b is reported in ``info``); on the primal forms ``(w, b)`` and α.

References
----------
.. [BV] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004,
   ch. 9 (Newton's method, self-concordance), ch. 10 (equality constraints) and ch. 11
   (barrier method, phase I).
.. [Wright97] S. J. Wright, *Primal-Dual Interior-Point Methods*, SIAM, 1997, ch. 10
   (Mehrotra's predictor-corrector algorithm).
.. [GW03] E. M. Gertz and S. J. Wright, "Object-oriented software for quadratic programming"
   (OOQP), ACM TOMS 29(1), 2003 (the box-constrained QP form).
.. [WS] C. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines",
   NIPS 2001; S. Fine and K. Scheinberg, "Efficient SVM training using low-rank kernel
   representations", JMLR 2001 (pivoted incomplete Cholesky). See :mod:`problems.low_rank`.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import HardMarginPrimal, KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.general_dual import GeneralDualProblem
from svmbench.problems.validation import check_int, check_option, check_real
from svmbench.solvers.barrier.early_finish import (
    EARLY_FINISH_GAP,
    RETRY_FACTOR,
    early_finish_applies,
    try_early_finish,
)
from svmbench.solvers.barrier.forms import active_rows, dual_qp, split_z
from svmbench.solvers.barrier.general import (
    GeneralPDState,
    bound_counts,
    general_converged,
    general_form_reason,
    general_iteration,
    general_rho,
    general_start,
)
from svmbench.solvers.barrier.general_finish import active_set_cleanup
from svmbench.solvers.barrier.general_path import GeneralPathState, path_outer_step, path_start
from svmbench.solvers.barrier.normal_equations import newton_flops
from svmbench.solvers.barrier.path import (
    MU,
    NEWTON_TOL,
    T0,
    PrimalState,
    outer_step,
    primal_path_start,
)
from svmbench.solvers.barrier.phase_one import phase_one
from svmbench.solvers.barrier.primal_dual import (
    PD_TO_BOUNDARY,
    PDState,
    pd_converged,
    pd_iteration,
    pd_start,
)
from svmbench.solvers.barrier.primal_dual_margins import (
    LOSSES,
    PD_CERTIFY_EVERY,
    PD_CERTIFY_FACTOR,
    ROW_STORAGES,
    PrimalPDState,
    compile_row_passes,
    compiled_passes,
    feasible_multipliers,
    passes_variant,
    ppd_converged,
    ppd_estimates,
    ppd_fused_iteration,
    ppd_gap_estimate,
    ppd_iteration,
    ppd_stalled,
    ppd_start,
)
from svmbench.solvers.base import IterativeSolver, Prepared, Status, StepOutcome
from svmbench.solvers.chunk_loop import all_finite
from svmbench.solvers.compile_notice import compiling
from svmbench.solvers.registry import register
from svmbench.solvers.time_budget import dense_factor_rate, dense_seconds, kernel_matrix_seconds

KERNEL_APPROXIMATIONS = ("none", "nystrom", "cholesky")
#: Algorithms: log-barrier path following, or the primal-dual predictor-corrector variant.
METHODS = ("barrier", "primal-dual")
#: A general dual's multiplier within this fraction of its bound counts as at the bound in
#: ``info["support"]`` (no exact finish runs there: the model keeps every positive α).
SUPPORT_THRESHOLD = 1e-8


#: Below this smallest positive C_i the free-bias dual's products of C_i underflow (NaN iterates
#: at 1e-200 on a 40 × 3 problem; certified at 1e-150).
MIN_FREE_BIAS_DUAL_C = 1e-150


def _free_bias_dual_C(problem) -> str | None:
    if problem.bias != "free":
        return None
    C = problem.upper_bounds
    smallest = float(np.min(C[C > 0])) if np.any(C > 0) else 0.0
    if 0.0 < smallest < MIN_FREE_BIAS_DUAL_C:
        return (
            f"C_i = {smallest:.3g} is below {MIN_FREE_BIAS_DUAL_C:g}, where the free-bias dual's "
            "products of C underflow; use clarabel or dcd (auto does), or the primal view"
        )
    return None


def _psd_kernel_only(problem: KernelDual) -> str | None:
    if not problem.convex:
        return (
            f"the {problem.kernel} kernel matrix is indefinite (smallest eigenvalue "
            f"{problem.min_eigenvalue:.3g}): the barrier method needs a convex QP"
        )
    return None


# ---- the solver --------------------------------------------------------------------------------
@register
class BarrierSolver(IterativeSolver):
    """Interior-point methods: log-barrier path following with Newton centering [BV, Alg. 11.1]
    and its primal-dual (Mehrotra predictor-corrector) variant [BV, §11.7; Wright97].

    Accepts the soft-margin primal (hinge, squared hinge; any bias; dense or CSR X), the
    soft-margin dual, the kernel dual (PSD kernels; exact dense Gram or a low-rank factor), the
    hard margin (with a phase I; status ``infeasible`` and a Farkas vector on data that no
    hyperplane separates) and any ``GeneralDualProblem`` (its dense Q within the Gram limit;
    LIBSVM's ρ from the equality multipliers in ``info["rho"]``). Every form is solved by
    default with the primal-dual variant, ``method="primal-dual"``; ``method="barrier"`` follows
    the log-barrier path.

    Parameters
    ----------
    tol : float, default=1e-8
        Target of the certified relative gap ``(P − D)/max(1, |P|)`` checked after every outer
        step of the barrier path and every primal-dual iteration (with ``stop_rule="native"``:
        of ``m/t``, or of the complementarity and residuals, see the module notes).
    t0 : float, default=10.0
        Barrier path only. Initial barrier parameter as a multiple of
        ``m / max(1, f₀(x₀) − p̂)`` (m inequalities, x₀ the starting point, p̂ ≤ p* a lower
        bound: 0 for the primal forms, ``−Σ C_i`` for the duals), so that the first central path
        gap ``m/t`` is of the order of the initial suboptimality [BV, §11.3.1].
    mu : float, default=15.0
        Barrier path only. Growth factor of t per outer step (> 1).
    newton_tol : float, default=1e-2
        Barrier path only. Centering stops when ``λ²/2 ≤ newton_tol`` (λ the Newton decrement).
    kernel_approximation : {"none", "nystrom", "cholesky"}, default="none"
        Kernel dual only: ``"none"`` uses the dense Gram matrix (n×n Cholesky per Newton step);
        the others factor ``K ≈ FFᵀ`` (rank ``min(rank, n)``) and solve the linear SVM on F
        with this solver's options, O(n r²) per Newton step: the solver ``low_rank``
        (:mod:`solvers.low_rank`) with ``rank`` fixed and the barrier as its inner method. The
        record is then that of the exact kernel problem (its kind and key) with the certified
        gap and status of the approximate kernel (the message says so), the bracket on the
        exact problem in ``info`` and a :class:`~problems.models.KernelModel` over the
        landmarks, which predicts with the exact kernel. Linear, poly and RBF kernels only (the
        bracket and the model need the examples' features and a PSD kernel).
    rank : int, default=200
        Rank of the kernel factor (capped at n; Cholesky may stop earlier on an exact factor).
    seed : int, default=0
        Landmarks of the Nyström factor (the first ``rank`` of a seeded permutation).
    method : {"primal-dual", "barrier"}, default="primal-dual"
        Mehrotra's predictor-corrector primal-dual method [BV, §11.7] or log-barrier path
        following, on every form (phase I of the hard margin always follows the barrier path:
        its multipliers are the Farkas certificate). The primal-dual default took fewer
        iterations and less time than the barrier on every form measured, and less time than
        Clarabel on RBF duals (docs/measurements.md, "barrier").
    max_iter : int, default=500
        Newton steps (phase I's counted apart, in ``info``). A primal-dual iteration (one
        factorization, used for the predictor and the corrector) counts as one Newton step.
    check_every : int or None, default=None
        Chunks between two certificates (``stop_rule="gap"``). None: after every outer step of
        the barrier path and every primal-dual iteration on the duals; on the primal forms the
        primal-dual variant asks when its gap estimate is ≤ ``PD_CERTIFY_FACTOR · tol``, and at
        least every ``PD_CERTIFY_EVERY`` iterations. The status always comes from the
        certificate.
    stop_rule, trace, time_limit
        See :class:`~solvers.base.IterativeSolver`.
    """

    name = "barrier"
    iteration_unit = "Newton steps"
    default_max_iter = 500
    supported: ClassVar = {
        SoftMarginPrimal: {},
        SoftMarginDual: {"C": _free_bias_dual_C},
        KernelDual: {"kernel": _psd_kernel_only, "C": _free_bias_dual_C},
        HardMarginPrimal: {},
        GeneralDualProblem: {"smo_form": general_form_reason},
    }

    def __init__(
        self,
        *,
        tol: float = 1e-8,
        t0: float = T0,
        mu: float = MU,
        newton_tol: float = NEWTON_TOL,
        kernel_approximation: str = "none",
        rank: int = 200,
        seed: int = 0,
        method: str = "primal-dual",
        check_every: int | None = None,
        **common,
    ):
        # None: every chunk, but for the primal-dual variant on the primal forms (see _step).
        self._auto_check = check_every is None
        every = PD_CERTIFY_EVERY if check_every is None else check_every
        super().__init__(tol=tol, check_every=every, **common)
        self.t0 = check_real("t0", t0, low=0.0)
        self.mu = check_real("mu", mu, low=1.0)
        if self.mu <= 1.0:
            raise ValueError(f"mu must be > 1, got {mu}")
        self.newton_tol = check_real("newton_tol", newton_tol, low=0.0)
        self.kernel_approximation = check_option(
            "kernel_approximation", kernel_approximation, KERNEL_APPROXIMATIONS
        )
        self.rank = check_int("rank", rank, low=1)
        self.seed = check_int("seed", seed, low=0)
        self.method = check_option("method", method, METHODS)
        self._general_state = None  # the last general-dual state, for the cleanup after the run

    def check_accepts(self, problem) -> None:
        super().check_accepts(problem)
        if isinstance(problem, GeneralDualProblem) and self.kernel_approximation != "none":
            raise TypeError(
                f"solver 'barrier' cannot solve {problem.describe()} with "
                f"kernel_approximation={self.kernel_approximation!r}: the general dual is "
                "solved on its dense Q (kernel_approximation='none')"
            )
        if isinstance(problem, KernelDual) and self.kernel_approximation != "none":
            why = self._low_rank().unsupported_reason(problem)
            if why:
                raise TypeError(
                    f"solver 'barrier' cannot solve {problem.describe()} with "
                    f"kernel_approximation={self.kernel_approximation!r}: {why}"
                )
        if (
            isinstance(problem, KernelDual)
            and self.kernel_approximation == "none"
            and not problem.gram_fits_in_memory
        ):
            raise TypeError(
                f"solver 'barrier' cannot solve {problem.describe()}: the dense Gram matrix "
                "exceeds the memory limit; use kernel_approximation='nystrom' or 'cholesky'"
            )

    # ---- a kernel factor: the low_rank solver with this one inside ------------------------------
    def _low_rank(self):
        from svmbench.solvers.low_rank import LowRankKernelSVM

        return LowRankKernelSVM(
            approximation=self.kernel_approximation,
            rank=self.rank,
            seed=self.seed,
            tol=self.tol,
        )

    def _run(self, problem, warm_start, clock, callback):
        if isinstance(problem, KernelDual) and self.kernel_approximation != "none":
            inner = copy.copy(self)  # every option of this solver, on the linear SVM on F
            inner.kernel_approximation = "none"
            return self._low_rank().run_with_inner(problem, "barrier", inner, clock, callback)
        self._general_state = None
        outcome = super()._run(problem, warm_start, clock, callback)
        state, self._general_state = self._general_state, None
        if isinstance(problem, GeneralDualProblem) and isinstance(state, GeneralPDState):
            with clock.certifying():  # as the binary duals' exact finish: certify time
                outcome = self._general_cleanup(problem, state, outcome)
        return outcome

    def _general_cleanup(self, problem, state: GeneralPDState, outcome):
        """The active-set cleanup of an ``optimal`` general-dual point
        (:mod:`~solvers.barrier.general_finish`); ``info["cleanup"]`` says what happened."""
        if outcome.status is not Status.OPTIMAL or outcome.certificate is None:
            return replace(outcome, info={**outcome.info, "cleanup": {"skipped": "not optimal"}})
        alpha, rho = state.full_alpha(), general_rho(state)
        Q_full = state.Q if np.all(state.active) else state.form.hessian()
        alpha, rho, cert, report = active_set_cleanup(
            problem, state.form, Q_full, alpha, rho, outcome.certificate
        )
        info = {**outcome.info, "cleanup": report}
        if not report["accepted"]:
            return replace(outcome, info=info)
        info["rho"] = rho
        info["support"] = bound_counts(alpha, state.form.upper)
        trace = outcome.trace
        if trace and trace[-1].iteration == outcome.iterations:
            last = replace(
                trace[-1], primal=cert.primal, dual=cert.dual, gap=cert.gap, certified=True
            )
            trace = (*trace[:-1], last)
        return replace(
            outcome,
            variables=problem.variables_from_smo(alpha, rho),
            certificate=cert,
            trace=trace,
            info=info,
        )

    # ---- preparation (timed): phase I ------------------------------------------------------------
    def _prepare(self, problem, warm_start) -> Prepared:
        if isinstance(problem, HardMarginPrimal):
            return phase_one(problem, self.mu, self.max_iter)
        return Prepared(problem)

    # ---- time limits (solvers/time_budget.py) ----------------------------------------------------
    def _setup_seconds(self, problem):
        """A kernel dual's kernel matrix, from which the dense dual QP is built."""
        return kernel_matrix_seconds(problem) if isinstance(problem, KernelDual) else None

    def _chunk_seconds(self, problem, state):
        """One Newton system, formed and factored (a chunk of the log-barrier path holds one at
        least): :func:`~solvers.barrier.normal_equations.newton_flops` at the measured rate."""
        inner = getattr(state, "qp", state)
        flops, order = newton_flops(getattr(inner, "feat", None), getattr(inner, "Q", None))
        seconds = dense_seconds(flops)
        if not seconds:
            return None
        rate = dense_factor_rate()
        return seconds, f"a Newton system of order {order}: {flops:.3g} flops at {rate:.3g} flops/s"

    # ---- IterativeSolver hooks -------------------------------------------------------------------
    @classmethod
    def memory_estimate(
        cls, problem, *, kernel_approximation: str = "none", rank: int = 200, **_
    ) -> float:
        """The Newton system it builds (:mod:`~solvers.barrier.normal_equations`), plus 40
        vectors of n. Dense duals (a kernel dual, or a linear one where
        :func:`~solvers.barrier.forms.dense_dual_is_cheaper`): six n×n matrices (K, Q̃, yyᵀ, H,
        its factor, a ridge retry). Woodbury duals and primal forms with d ≤ n: four r×r
        matrices (r = d + 2) and a scaled copy of the data; d > n: five n×n (XXᵀ, M, its factor,
        a ridge retry). A low-rank kernel factor of rank r: the ``low_rank`` solver's estimate
        (F, its blocks, the barrier's n×r blocks), then this model of the primal form on F."""
        from svmbench.solvers.barrier.forms import dense_dual_is_cheaper

        if isinstance(problem, GeneralDualProblem):
            m = problem.smo_form().n_variables  # Q, H, its factor, the fixed rows: six m×m
            return 40 * 8.0 * m + 6 * 8.0 * m * m
        n, d, X = problem.n_samples, problem.n_features, problem.X
        data = X.nbytes if not sparse.issparse(X) else X.data.nbytes + X.indices.nbytes
        square = 8.0 * n * n
        total = 40 * 8.0 * n
        if isinstance(problem, KernelDual):
            if kernel_approximation == "none":
                return total + 6 * square
            from svmbench.solvers.low_rank import LowRankKernelSVM

            r = min(int(rank), n) + 2
            factor = LowRankKernelSVM.memory_estimate(problem, rank=rank, inner="barrier")
            return factor + total + 4 * 8.0 * r * r + 2.0**21
        r = d + 2
        if isinstance(problem, SoftMarginDual) and dense_dual_is_cheaper(n, r):
            return total + 6 * square
        if isinstance(problem, SoftMarginDual) or d <= n:
            return total + 4 * 8.0 * r * r + data + 2.0**21
        return total + 5 * square

    def warm_up(self) -> float:
        """Compile the jitted passes of the primal-dual variant (every loss; dense rows, CSR
        with int32 and int64 indices) on a 4×2 problem, once per process; untimed."""
        missing = [(st, loss) for st in ROW_STORAGES for loss in LOSSES]
        missing = [v for v in missing if v not in compiled_passes()]
        if not missing:
            return 0.0
        tags = tuple(f"barrier-{st}-{loss}" for st, loss in missing)
        with compiling(tags, "barrier", "its row passes: dense and CSR rows, every loss"):
            return compile_row_passes()

    def warm_up_for(self, problem) -> float:
        """Compile only the passes ``problem`` runs: the primal-dual variant on a primal form
        with d ≤ n runs one loss over one storage of rows (dense, CSR with int32 or int64
        indices); the other forms (a general dual among them) and methods run no jitted code
        (the low-rank kernel approximation warms its inner solver up: all of :meth:`warm_up`).
        A first compilation
        on this machine says so on stderr (:mod:`~solvers.compile_notice`)."""
        if isinstance(problem, KernelDual) and self.kernel_approximation != "none":
            return self.warm_up()
        if self.method != "primal-dual" or not isinstance(
            problem, (SoftMarginPrimal, HardMarginPrimal)
        ):
            return 0.0
        loss = "hard" if isinstance(problem, HardMarginPrimal) else problem.loss
        if not sparse.issparse(problem.X) and ("dense", loss) in compiled_passes():
            return 0.0  # dense rows run the dense passes, compiled: no rows built to ask
        variant = passes_variant(problem)
        if variant is None or variant in compiled_passes():
            return 0.0
        storage, loss = variant
        what = f"{storage.replace('-', ' ')} rows, the {loss.replace('_', ' ')} loss"
        with compiling(f"barrier-{storage}-{loss}", "barrier", what):
            return compile_row_passes((storage,), (loss,))

    def _init_state(self, problem, warm_start):
        if isinstance(problem, GeneralDualProblem):
            form = problem.smo_form()
            self._general_state = general_start(form, form.hessian())
            if self.method == "barrier":
                return path_start(self._general_state, self.t0, self.mu)
            return self._general_state
        if isinstance(problem, (SoftMarginPrimal, HardMarginPrimal)):
            return self._init_primal(problem, warm_start)
        state = dual_qp(problem, self.t0, self.mu)
        if self.method == "primal-dual":
            state.t = 1.0  # H = Q̃ + diag(h) in dual_hessian_solver
            return pd_start(state)
        return state

    def _init_primal(self, problem, warm_start):
        feat, p, y, C, active = active_rows(problem)
        hard = isinstance(problem, HardMarginPrimal)
        # The hard margin starts from phase I's strictly feasible point, the soft margin from 0.
        z = np.asarray(warm_start, dtype=float).copy() if hard else np.zeros(feat.dim)
        loss = "hard" if hard else problem.loss
        if self.method == "primal-dual":
            return ppd_start(feat, y, C, loss, p, z, active, problem.bias == "free")
        return primal_path_start(feat, y, C, loss, p, z, active, self.t0, self.mu)

    def _step(self, problem, state) -> StepOutcome:
        """One outer step: centre at t (Newton), then ``t ← μ t``; or one predictor-corrector
        iteration of the primal-dual variant. The flag is the native rule with
        ``stop_rule="native"``; with ``"gap"`` it asks for the certificate (every chunk by default,
        but the primal-dual variant on the primal forms asks only when its own estimate is within
        ``PD_CERTIFY_FACTOR`` of tol: the certificate costs more than its iteration at large n)."""
        if isinstance(state, PrimalPDState):
            if state.passes is not None:
                ppd_fused_iteration(state, PD_TO_BOUNDARY)
            else:
                ppd_iteration(state, PD_TO_BOUNDARY)
            if self.stop_rule == "native":
                return StepOutcome(1, converged=ppd_converged(state, self.tol))
            estimate = ppd_gap_estimate(state)
            if self._finished_early(problem, state, estimate):  # its certificate, drawn once
                return StepOutcome(1, converged=True, certificate=state.finished[1])
            converged = estimate <= PD_CERTIFY_FACTOR * self.tol
            return StepOutcome(1, converged=converged, failure=ppd_stalled(state, estimate))
        every_chunk = self.stop_rule == "gap" and self._auto_check
        if isinstance(state, GeneralPathState):
            steps, native, failure = path_outer_step(
                state, self.max_iter, self.newton_tol, self.tol
            )
            if failure:
                return StepOutcome(steps, failure=failure)
            return StepOutcome(steps, converged=every_chunk or native)
        if isinstance(state, GeneralPDState):
            failure = general_iteration(state, PD_TO_BOUNDARY)
            if failure:
                return StepOutcome(1, failure=failure)
            native = general_converged(state, self.tol)
            return StepOutcome(1, converged=every_chunk or native)
        if isinstance(state, PDState):
            pd_iteration(state, PD_TO_BOUNDARY)
            native = pd_converged(state, self.tol)  # also the residuals of the info
            return StepOutcome(1, converged=every_chunk or native)
        steps, native = outer_step(state, self.max_iter, self.newton_tol, self.tol)
        return StepOutcome(steps, converged=every_chunk or native)

    def _finished_early(self, problem, state: PrimalPDState, estimate: float) -> bool:
        """Whether the exact finish of the iterate certifies at tol
        (:mod:`~solvers.barrier.early_finish`), tried once the gap estimate is below
        ``EARLY_FINISH_GAP`` and again each time it has fallen ``RETRY_FACTOR`` times more."""
        if not estimate <= min(EARLY_FINISH_GAP, state.next_finish_try):  # NaN: no try
            return False
        if not early_finish_applies(problem):
            return False
        state.next_finish_try = estimate / RETRY_FACTOR
        variables = self._variables(problem, state)
        if not all_finite(variables):  # the loop judges non-finite iterates
            return False
        every = len(state.m) == problem.n_samples  # the margins of every example, kept
        state.finished = try_early_finish(
            problem,
            variables,
            self.tol,
            problem.n_features + 2,
            estimate,
            state.m if every else None,
        )
        return state.finished is not None

    def _trace_estimate(self, problem, state):
        """A trace-only point of the primal-dual variant on a primal form: its own ``(P, D)``
        estimate (:func:`~solvers.barrier.primal_dual_margins.ppd_estimates`, O(d)) instead
        of a certificate; the other forms are certified."""
        if isinstance(state, PrimalPDState):
            return ppd_estimates(state)
        return None

    def _variables(self, problem, state) -> dict[str, Any]:
        if isinstance(state, GeneralPathState):
            state = state.qp
        if isinstance(state, GeneralPDState):
            return problem.variables_from_smo(state.full_alpha(), general_rho(state))
        if isinstance(state, PrimalPDState):
            if state.finished is not None:
                return dict(state.finished[0])
            w, b = split_z(problem, state.z)
            upper = state.C if state.loss == "hinge" else np.inf
            lam = np.zeros(len(state.active))
            lam[state.active] = feasible_multipliers(state.lam, state.y, upper, state.equality)
            return {"w": w, "b": b, "alpha": lam}
        if isinstance(state, PrimalState):
            w, b = split_z(problem, state.z)
            lam = np.zeros(len(state.active))
            lam[state.active] = state.lam  # multipliers of m_i + ξ_i ≥ 1 (λ⁺ of the last step)
            return {"w": w, "b": b, "alpha": lam}
        if isinstance(state, PDState):
            state = state.qp
        alpha = np.zeros(state.n_all)
        alpha[state.active] = state.alpha
        return {"alpha": alpha}

    def _info(self, state) -> dict[str, Any]:
        if isinstance(state, (GeneralPDState, GeneralPathState)):
            qp = getattr(state, "qp", state)
            general = {
                "equality_multipliers": qp.lam.tolist(),
                "rho": general_rho(qp),
                "support": bound_counts(qp.full_alpha(), qp.form.upper, SUPPORT_THRESHOLD),
            }
            if isinstance(state, GeneralPathState):
                return {
                    "method": "barrier",
                    "outer_steps": state.outer_steps,
                    "t": state.t_center,
                    "central_path_gap_bound": state.n_constraints / state.t_center,
                    "stalled": state.stalled,
                    **general,
                }
            return {
                "method": "primal-dual",
                "mu": state.mu,
                "last_step": state.step,
                "last_sigma": state.sigma,
                "residual_dual": state.residual_dual,
                "residual_primal": state.residual_primal,
                **general,
            }
        if isinstance(state, (PDState, PrimalPDState)):
            info = {
                "method": "primal-dual",
                "mu": state.mu,
                "last_step": state.step,
                "last_sigma": state.sigma,
                "residual_dual": state.residual_dual,
                "residual_primal": state.residual_primal,
            }
            if isinstance(state, PDState):
                info["bias_multiplier"] = state.b
            else:
                info["complementarity"] = state.complementarity
                if state.finished is not None:  # the finish ran as the stopping test
                    info["exact_finish"] = state.finished[2]
            return info
        return {
            "method": "barrier",
            "outer_steps": state.outer_steps,
            "t": state.t_center,
            "central_path_gap_bound": state.n_constraints / state.t_center,
            "stalled": state.stalled,
        }
