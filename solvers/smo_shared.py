"""SMO on kernel rows shared between binary problems (a one-vs-one reduction's pairs).

A :class:`~problems.KernelDual` whose kernel entries come from a
:class:`~problems.kernel_rows.KernelRows` table (:meth:`KernelDual.share_rows`: the pair's
examples are rows of the multiclass X) runs on C-SVC's loops and column cache; its rows are the
table (:mod:`solvers._jit.kernel_table`): a missing column ``Q̃_:i = y_i y_t K[r_i, r_t]`` is
the table row of i's row gathered over the pair's rows, and a block of that row missing from the
table is computed once, for every pair that holds it. The hinge loss only (the squared hinge's
diagonal term is no kernel entry); the pair's certificate reads the same float64 rows.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from svmbench.problems import KernelDual
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel
from svmbench.problems.rounding import refinement_tol
from svmbench.solvers._jit import smo as jit
from svmbench.solvers._jit.smo_gap import compile_estimates
from svmbench.solvers.chunk_loop import all_finite, gap_verdict
from svmbench.solvers.compile_notice import compiling
from svmbench.solvers.exact_finish import already_exact, finish_applies
from svmbench.solvers.margin_lift import (
    early_report,
    finish_exactly,
    finished_or_lifted,
    lift_words,
    lifted_outcome,
)
from svmbench.solvers.records import ConvergenceWarning, Outcome, SolveResult, Status, replaced
from svmbench.solvers.smo_arrays import new_core, no_row_map
from svmbench.solvers.status_rules import settled_status

#: The loops compiled in this process for shared rows that never shrink: pair updates or single.
_WARM_SHARED: set[bool] = set()
#: Those whose shrinking loop and reconstruction (the kernel sums of a shrunk gradient) are.
_WARM_SHARED_SUMS: set[bool] = set()


def uses_shared_rows(problem, storage: str = "auto") -> bool:
    """Whether SMO reads ``problem``'s kernel from its shared rows: a hinge-loss kernel dual
    given a table (:meth:`~problems.KernelDual.share_rows`), rows not forced to CSR."""
    return (
        isinstance(problem, KernelDual)
        and problem.shared_rows is not None
        and problem.loss == "hinge"
        and storage != "csr"
    )


def rows_kind(X) -> str:
    """What the loops' rows ``X`` are: ``"shared"`` (a table of kernel rows), ``"csr"`` or
    ``"dense"`` (SMO's ``info["rows"]``)."""
    if isinstance(X, tuple):
        return "shared" if X[1].ndim == 2 else "csr"
    return "dense"


class PairArrays:
    """The loops' arrays of cold starts of one problem after another on shared rows (a
    reduction's pairs on one solver), with one C and every column cached (``n_slots = n``):
    three blocks of ``size`` columns, float64 (α = 0, G = −1, Ḡ = 0, C), int64 (the active
    set 0…n−1, each slot's column and each column's slot −1, the stamps 0, a scratch) and
    uint8 (the active flags 1, the full slots 0, the shrinking scratch 0), each reset for a
    problem of n ≤ size by one copy of its template's first n columns and handed out as rows
    of n (C-contiguous, as new arrays: the loops compile nothing new). The views of each n
    and the counters' start are kept; the templates' rows 0…n−1 and 0 serve as ``all_idx``
    and the squared hinge's (here zero) diagonal, which nothing writes."""

    def __init__(self, size: int, C: float, kernel):
        self.size, self.C, self.kernel = size, C, kernel
        self.kint = (int(kernel.code), int(kernel.degree), None)
        self.kflt = np.array([kernel.gamma, kernel.coef0, 0.0])
        self.ft = np.zeros((4, size))
        self.ft[1].fill(-1.0)
        self.ft[3].fill(C)
        self.it = np.zeros((5, size), dtype=np.int64)
        self.it[0] = np.arange(size)
        self.it[1:3].fill(-1)
        self.ut = np.zeros((3, size), dtype=np.uint8)
        self.ut[0].fill(1)
        self.f, self.i, self.u = (
            np.empty_like(self.ft),
            np.empty_like(self.it),
            np.empty_like(self.ut),
        )
        self.tmp = np.empty(size)
        self.empty = no_row_map(np.float64)
        self._by_n: dict[int, tuple] = {}

    def fits(self, n: int, C: float, kernel) -> bool:
        return n <= self.size and C == self.C and (kernel is self.kernel or kernel == self.kernel)

    def zeros(self, C: np.ndarray) -> np.ndarray:
        """n zeros for the state's diagonal term beside ``C``: the template's, never written,
        when ``C`` is these arrays' own."""
        return self.ft[0, : C.size] if C.base is self.f else np.zeros(C.size)

    def _views(self, n: int) -> tuple:
        """The views of n columns, made once per n: the blocks and their templates, the
        counters' start, and the record's fields that are these arrays' own (in
        :class:`~solvers._jit.smo.Core`'s order, None where a problem puts its own)."""
        views = self._by_n.get(n)
        if views is None:
            f, i, u = self.f[:, :n], self.i[:, :n], self.u[:, :n]
            ist = np.zeros(jit.N_IST, dtype=np.int64)
            ist[jit.N_ACTIVE], ist[jit.SHRINK_COUNTER] = n, min(n, 1000)
            fields = [
                None, None, None, self.kint, self.kflt, None, f[3], None, f[0], f[1], f[2],
                i[0], u[0], self.it[0, :n], None, i[1], i[2], u[1], i[3], None, i[4],
                self.tmp[:n], u[2].view(np.bool_), None, self.empty[0], self.empty[1],
            ]  # fmt: skip
            templates = (self.ft[:, :n], self.it[:, :n], self.ut[:, :n])
            views = self._by_n[n] = ((f, i, u), templates, ist, fields)
        return views

    def core(self, n: int, source, sqn, y, QD, status, cache) -> jit.Core:
        """The record of a cold start of n variables (:func:`shared_core`'s)."""
        blocks, templates, ist, fields = self._views(n)
        for block, template in zip(blocks, templates):
            np.copyto(block, template)
        fields = fields.copy()
        fields[0] = fields[1] = source  # X and XT: the table's tuple
        fields[2], fields[5], fields[7], fields[14] = sqn, y, QD, cache
        fields[19], fields[23] = ist.copy(), status
        return jit.Core._make(fields)


def shared_core(
    problem: KernelDual, n_slots: int, buffer: np.ndarray | None = None,
    arrays: PairArrays | None = None,
) -> jit.Core:  # fmt: skip
    """The loops' record for a cold start (α = 0, G = −1, Ḡ = 0) of ``problem`` on its shared
    rows (the table's tuple as X and Xᵀ, serial columns) with ``n_slots`` float64 columns,
    held in ``buffer`` (float64, at least ``n_slots · n`` entries: the memory of the previous
    pair's columns, already mapped, reused) or in a new array; its other arrays from
    ``arrays`` where they fit (:class:`PairArrays`), else new."""
    table, rows, blocks = problem.shared_rows
    n = problem.n_samples
    spec = table.kernel
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    uniform = problem.sample_weight is None
    if (
        arrays is not None
        and uniform
        and problem.C > 0.0
        and n_slots == n
        and buffer is not None
        and buffer.size >= n * n
        and arrays.fits(n, float(problem.C), spec)
    ):
        cache = buffer[: n * n].reshape(n, n)
        QD = np.ascontiguousarray(table.diagonal[rows])  # Q̃_tt = y_t² K_tt
        status = np.add(y < 0.0, 1, dtype=np.uint8)  # I_up: y > 0, I_low: y < 0 at α = 0
        return arrays.core(n, table.columns(rows, blocks), table.sqn, y, QD, status, cache)
    if uniform:  # upper_bounds' np.full, without its wrapper
        C = np.empty(n)
        C.fill(float(problem.C))
    else:
        C = np.ascontiguousarray(problem.upper_bounds, dtype=np.float64)
    source = table.columns(rows, blocks)
    # bit 0: t ∈ I_up, bit 1: t ∈ I_low at α = 0 (a box [0, 0] in neither)
    if uniform and problem.C > 0.0:  # no box [0, 0]
        status = np.add(y < 0.0, 1, dtype=np.uint8)
    else:
        status = ((C > 0) * (2 - (y > 0))).astype(np.uint8)
    kint = (int(spec.code), int(spec.degree), None)
    kflt = np.array([spec.gamma, spec.coef0, 0.0])
    QD = np.ascontiguousarray(table.diagonal[rows])  # Q̃_tt = y_t² K_tt
    G, Gbar = np.empty(n), np.zeros(n)  # G = −1: np.full without its wrapper
    G.fill(-1.0)
    extra = {}
    if buffer is not None and buffer.size >= n_slots * n:
        extra["cache"] = buffer[: n_slots * n].reshape(n_slots, n)  # no slot is read unfilled
    return new_core(
        source, source, table.sqn, kint, kflt, y, C, QD, np.zeros(n), G, Gbar, status, n_slots,
        np.float64, **extra,
    )  # fmt: skip


def pair_arrays(previous: PairArrays | None, problem: KernelDual) -> PairArrays:
    """:class:`PairArrays` for ``problem`` (on shared rows): ``previous`` when it fits, else
    new ones, with room for a tenth more examples (the pairs' sizes differ)."""
    C, kernel, n = float(problem.C), problem.shared_rows[0].kernel, problem.n_samples
    if previous is not None and previous.fits(n, C, kernel):
        return previous
    size = max(n + n // 10, 0 if previous is None else previous.size)
    return PairArrays(size, C, kernel)


def column_buffer(previous: np.ndarray | None, entries: int) -> np.ndarray:
    """A float64 buffer of at least ``entries`` for the columns of one problem after another
    (a reduction's pairs on one solver): ``previous`` when large enough, else a new one."""
    if previous is not None and previous.size >= entries:
        return previous
    return np.empty(entries)


def warm_up_shared(problem: KernelDual, *, reconstruct: bool) -> float:
    """Compile the loop ``problem`` runs on shared rows (pair or single updates) on a 4-point
    problem, and with ``reconstruct`` (where the loops shrink: :meth:`~solvers.smo.SMO.shrinks`)
    the kernel sums of the gradient's reconstruction; untimed, once per process and variant."""
    pairs = problem.bias == "free"
    loops = not reconstruct and pairs not in _WARM_SHARED  # the loop that never shrinks
    sums = reconstruct and pairs not in _WARM_SHARED_SUMS  # the shrinking one, the sums
    if not (loops or sums):
        return 0.0
    start = time.perf_counter()
    what = f"shared kernel rows, float64 columns, {'pair' if pairs else 'single'} updates"
    with compiling(f"smo-shared-{'pairs' if pairs else 'single'}", "smo", what):
        X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
        y = np.array([1.0, -1.0, 1.0, -1.0])
        tiny = KernelDual(X, y, kernel="rbf", gamma=0.5, bias="free" if pairs else "none")
        tiny.share_rows(KernelRows(X, Kernel("rbf", 0.5), (y > 0).astype(np.int64)), np.arange(4))
        core = shared_core(tiny, 2)
        jit.run_loop(jit.smo_pairs if pairs else jit.smo_single, 50, 1e-3, reconstruct, core)
        compile_estimates(core)  # SMO's gap estimate and b, after each loop
        tiny.certificate(alpha=np.array([0.5, 0.5, 0.0, 0.0]), b=0.0)  # its jitted pass
        if sums:
            jit.compile_reconstruct(core)
    if loops:
        _WARM_SHARED.add(pairs)
    if sums:
        _WARM_SHARED_SUMS.add(pairs)
    return time.perf_counter() - start


#: What a chunk may raise from NumPy when the arithmetic fails: the pair ends
#: ``numerical_error`` with its point so far, as :func:`~solvers.chunk_loop.run_chunks` ends.
_ARITHMETIC = (np.linalg.LinAlgError, FloatingPointError, ZeroDivisionError, OverflowError)


def lean_pair_applies(solver, problem) -> bool:
    """Whether :func:`solve_shared_pair` may stand for ``solver.solve(problem)``: SMO on a pair
    on shared rows, or on a block of a precomputed Gram matrix (a hinge loss: the reduction's
    pairs of a precomputed kernel), with a free bias, stopping on the certified gap, no trace,
    no time limit (the reduction's own options for its pairs)."""
    gram = (
        isinstance(problem, KernelDual)
        and problem.kernel == "precomputed"
        and problem.loss == "hinge"
    )
    return (
        (gram or uses_shared_rows(problem, solver.storage))
        and problem.bias == "free"
        and solver.stop_rule == "gap"
        and solver.trace is False
        and math.isinf(solver.time_limit)
    )


def _same_point(a, b) -> bool:
    """Whether two ``{"alpha", "b"}`` points are one (a chunk that moved nothing)."""
    return a is not None and a["b"] == b["b"] and np.array_equal(a["alpha"], b["alpha"])


def solve_shared_pair(solver, problem: KernelDual, warns: bool = True) -> SolveResult:
    """``solver.solve(problem)`` for a pair of a reduction on shared rows or a precomputed
    Gram matrix (:func:`lean_pair_applies`), cold, without :meth:`Solver.solve`'s generic
    machinery.

    The same chunks (``solver._step``: SMO's loops, its O(n) gap estimate and the tightening of
    eps), a certificate of the problem each time the estimate meets ``tol`` (from α and the
    kernel, never from SMO's gradient), ``optimal ⇔ certified and rel_gap ≤ tol``
    (:func:`~solvers.status_rules.settled_status`), the exact finish of an optimal point
    (:func:`~solvers.exact_finish.exact_finish`, as ``Solver._finish`` calls it), one record.
    What it leaves out only applies elsewhere: acceptance and memory checks (the reduction
    built the pair from its checked problem, on rows that fit its cache budget), warm starts,
    rescaling, callbacks, traces and time limits. ``warns=False``: no ``ConvergenceWarning``
    at ``max_iter`` (a caller that goes on from the record and warns itself)."""
    with refinement_tol(solver.tol):  # as Solver.solve: allowances refined as tol needs
        return _solve_pair(solver, problem, warns)


def _solve_pair(solver, problem: KernelDual, warns: bool) -> SolveResult:
    entered = time.perf_counter()
    compile_time = solver.warm_up_for(problem)  # warm_up_shared on shared rows
    start = time.perf_counter()
    state = solver._init_state(problem, None)
    tol, iterations = solver.tol, 0
    status, cert, message, variables, point, info_lift = None, None, "", None, -1, None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        while status is None:
            try:
                step = solver._step(problem, state)
            except _ARITHMETIC as exc:  # the point so far is judged below, as the loop does
                status, point = Status.NUMERICAL_ERROR, -1
                message = f"numerical failure: {type(exc).__name__}: {exc}"
                break
            iterations += step.iterations
            if step.converged:
                point = iterations  # SMO's estimate met tol (or eps reached its floor)
                drawn = variables
                variables = solver._variables(problem, state)
                if not all_finite(variables):
                    status, message = Status.NUMERICAL_ERROR, "the iterates contain NaN or inf"
                    break
                if cert is None or not _same_point(drawn, variables):  # else: its verdict stands
                    cert = problem.certificate(**variables)
                    status, message = gap_verdict(problem, cert, tol, True)
                    if status is not Status.OPTIMAL:  # at a large C (solvers/margin_lift.py)
                        lifted = finished_or_lifted(problem, variables, cert, tol)
                        if lifted is not None:  # as run_chunks: lifted off the rounding
                            variables, cert, info_lift = lifted
                            status, message = Status.OPTIMAL, lift_words(info_lift)
                if status is not None:
                    break
            if step.iterations == 0:
                status = Status.NUMERICAL_ERROR
                message = "the method can make no further progress before its stopping rule holds"
            elif iterations >= solver.max_iter:
                status = Status.MAX_ITER
    solve_time = time.perf_counter() - start
    if point != iterations:  # the point moved since its last certificate (if any)
        variables, cert = solver._variables(problem, state), None
    info = solver._info(state)
    # an optimal verdict was drawn on these variables, found finite then
    usable = (point == iterations and status is Status.OPTIMAL) or all_finite(variables)
    checked = usable and info_lift is None  # these variables: SMO's float64 α and float b
    if info_lift is not None:
        info["margin_lift"] = info_lift
    if not usable:
        status, cert = Status.NUMERICAL_ERROR, None
        message = message or "the iterates contain NaN or inf"
    elif cert is None:
        cert = problem.certificate(**variables)
    finishes = finish_applies(problem)  # as Solver._finish: no report where it never applies
    if finishes and usable and status is not Status.OPTIMAL:  # as Solver._finish: lifted
        lifted = lifted_outcome(
            Outcome(status, variables, iterations, cert, None, message, info), problem, tol
        )
        if lifted.status is Status.OPTIMAL:
            status, variables, cert, message = (
                lifted.status,
                lifted.variables,
                lifted.certificate,
                lifted.message,
            )
            info, checked = dict(lifted.info), False
    if finishes and status is Status.OPTIMAL:
        # the finish's report without its test where the point is already exact
        uniform = problem.sample_weight is None and problem.C > 0.0
        upper = float(problem.C) if uniform else problem.upper_bounds
        # as run_chunks: a point solved on its own active set already is not solved again
        report = early_report(info_lift) if info_lift is not None else None
        if report is None:
            report = already_exact(variables["alpha"], cert, upper, tol)
        if report is None:
            variables, cert, report = finish_exactly(problem, variables, cert, tol=tol)
            checked = False  # the finish's point
        info["exact_finish"] = report
    elif finishes:
        info["exact_finish"] = {"skipped": f"status {status.value}"}
    # the record as Solver.solve builds it: settled status, model, warnings, fields
    if usable and status is not Status.MAX_ITER:
        # Solver._result's steps that apply here: nothing warns (only max_iter would), the
        # certificate and a finite point are at hand
        for name, value in cert.primal_point.items():
            if variables.get(name) is None:
                variables[name] = value
        if checked:  # model_from without its second test of the point
            model = problem._model_of(variables["alpha"], variables["b"])
        else:
            model = problem.model_from(variables)
        status, message = settled_status(problem, status, cert, tol, message)
        ended = time.perf_counter()
        return solver._record(
            problem, status, variables, cert, model, message, info, iterations, solve_time,
            compile_time, wall_time=ended - entered - compile_time,
            certify_time=ended - start - solve_time,
        )  # fmt: skip
    fields = dict(
        status=status, variables=variables, iterations=iterations, solve_time=solve_time,
        compile_time=compile_time, certificate=cert, message=message, info=info,
    )  # fmt: skip
    if warns or status is not Status.MAX_ITER:  # the only status that warns here
        record = solver._result(problem, **fields)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            record = solver._result(problem, **fields)
    ended = time.perf_counter()
    return replaced(
        record,
        wall_time=ended - entered - compile_time,
        certify_time=ended - start - solve_time,
    )
