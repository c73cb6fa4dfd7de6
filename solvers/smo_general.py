"""The generalized SMO: LIBSVM's general dual on SMO's jitted core (Chang & Lin, ACM TIST 2011).

The form (:mod:`problems.general_dual`, from ``problem.smo_form()``)::

    min_α  F(α) = ½ αᵀQα + pᵀα   s.t.  0 ≤ α_t ≤ u_t,   "one": zᵀα = Δ   or
           "nu": Σ_{z_t=+1} α_t = Δ₊, Σ_{z_t=−1} α_t = Δ₋   (or no equality)

    Q_st = z_s z_t (K(x_{r_s}, x_{r_t}) + s²)

runs on the loops of C-SVC (:mod:`solvers._jit.smo`) with the linear term p (``G = Qα + p``,
also in the gradient reconstruction) and the row map r (a kernel column is computed once on the
rows of X and expanded to the variables, LIBSVM's ``SVR_Q``): "one" by pair updates (WSS2; they
keep zᵀα, so Δ ≠ 0 needs only the feasible start ``alpha0``), no equality by single-variable
updates, "nu" by pairs within one sign group (:mod:`solvers._jit.smo_nu`, Chang & Lin 2001;
without shrinking). Kernel rows are cached by row of X and read through the row map (the
variables of one row share one: :mod:`solvers._jit.smo_rows`), in float32 as LIBSVM's when
C-SVC's rule would choose it (:func:`row_cache_dtype`); a certificate's refusal with float32 rows
first recomputes G in float64 from α.

ρ as LIBSVM's ``calculate_rho``: "one": the mean of ``z_t G_t`` over the free variables (the
midpoint of the feasible interval without any); "nu": ``(r₁ − r₂)/2`` with ``r_g`` the mean of
``G_t`` over the free variables of sign g (midpoint otherwise); "none": 0. The decision value is
``Σ_t z_t α_t K(x_{r_t}, x) − ρ``; the problem turns ``(α, ρ)`` into its certificate's variables
(``variables_from_smo``) and certifies them.

``stop_rule="gap"`` asks for the certificate when the O(n) Lagrangian gap from the maintained G,

    F(α) − L(α, μ) = Σ_t α_t g_t + u_t max(0, −g_t),   g_t = G_t + z_t μ  ("nu": G_t + μ_{z_t})

with ``μ = −ρ`` ("nu": ``μ₊ = −r₁``, ``μ₋ = −r₂``), is ``≤ tol·max(1, |F|)``; a refusal divides
``eps`` as for C-SVC.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numba
import numpy as np

from svmbench.problems.general_dual import GeneralDual, GeneralDualProblem
from svmbench.problems.general_qp import project
from svmbench.problems.svr import SVRDual
from svmbench.solvers._jit import smo as jit
from svmbench.solvers._jit.kernel_columns import column_threads
from svmbench.solvers._jit.smo_nu import smo_pairs_nu
from svmbench.solvers.base import StepOutcome
from svmbench.solvers.compile_notice import compiling
from svmbench.solvers.smo_arrays import (
    FLOAT32_MAX_ENTRY,
    kernel_rows_arrays,
    kernel_times,
    new_core,
    rows_threads,
    use_dense_rows,
)

#: The native tolerance is never tightened below this (as :data:`solvers.smo.EPS_FLOOR`).
EPS_FLOOR = 1e-13

#: The jitted loop of each equality.
LOOPS = {"one": jit.smo_pairs, "none": jit.smo_single, "nu": smo_pairs_nu}

#: The (rows, equality) variants compiled in this process.
_WARM_GENERAL: set[tuple] = set()


@dataclass
class GeneralState:
    """The jitted loops' arrays for a general form and the driver's bookkeeping."""

    core: jit.Core  # z in ``y``, u in ``C``, p and the row map in ``p`` and ``rowmap``
    form: GeneralDual
    eps: float
    iterations: int = 0
    asked: bool = False  # the last chunk handed the point to the certificate
    converged: bool = False
    estimate: float = math.nan
    certifications: int = 0


def general_gradients(X, sqn, kint, kflt, form: GeneralDual, alpha: np.ndarray):
    """``G = Qα + p`` and ``Ḡ = Σ_{α_j = u_j} u_j Q_:j`` (float64), each from one kernel
    product over the rows of X (the coefficients of variables on one row summed first)."""
    code, degree = int(kint[0]), int(kint[1])
    gamma, coef0, s2 = float(kflt[0]), float(kflt[1]), float(kflt[2])
    n_rows, z, rows = sqn.shape[0], form.sign, form.rows

    def times(weights):
        coef = np.bincount(rows, weights=weights, minlength=n_rows)
        cols = np.flatnonzero(coef)
        if cols.size == 0:
            return np.zeros(rows.shape[0])
        dots = kernel_times(X, sqn, cols, coef[cols], code, gamma, coef0, degree, s2)
        return z * dots[rows]

    G = times(z * alpha) + form.p
    at_upper = (alpha >= form.upper) & (form.upper > 0)
    Gbar = times(np.where(at_upper, z * form.upper, 0.0))
    return np.ascontiguousarray(G), np.ascontiguousarray(Gbar)


def row_cache_dtype(form: GeneralDual, cache_mb: float = math.inf) -> type:
    """Precision of the cached kernel rows: float32 for RBF with ``s² ≤ 1`` (every entry in
    ``[0, 2]``) when the n kernel rows would not all fit the budget in float64, as C-SVC's
    :func:`solvers.smo_arrays.cache_dtype`; float64 otherwise."""
    n_rows = form.X.shape[0]
    fits = 8.0 * n_rows * n_rows <= float(cache_mb) * 2**20
    if form.kernel.name == "rbf" and 1.0 + form.s2 <= FLOAT32_MAX_ENTRY and not fits:
        return np.float32
    return np.float64


def cached_rows(form: GeneralDual, cache_mb: float, dtype) -> int:
    """Kernel rows (n entries of ``dtype``) that fit ``cache_mb``: at least 2, at most n."""
    n_rows = form.X.shape[0]
    size = np.dtype(dtype).itemsize * n_rows
    return int(min(n_rows, max(2, float(cache_mb) * 2**20 // size)))


def make_general_state(
    form: GeneralDual, alpha0, *, eps, cache_mb, storage, dtype=None
) -> GeneralState:
    """The core of ``form`` started at ``alpha0`` (kernel rows and columns within ``cache_mb``;
    the rows in ``dtype``, by default :func:`row_cache_dtype`'s)."""
    m = form.n_variables
    X, XT, sqn, diag = kernel_rows_arrays(form.X, form.kernel, storage)
    n_rows = sqn.shape[0]
    spec = form.kernel
    kint = (int(spec.code), int(spec.degree), column_threads(X, numba.get_num_threads()))
    kflt = np.array([spec.gamma, spec.coef0, form.s2], dtype=np.float64)
    rowmap = np.ascontiguousarray(form.rows, dtype=np.int64)
    z = np.ascontiguousarray(form.sign, dtype=np.float64)
    upper = np.ascontiguousarray(form.upper, dtype=np.float64)
    sqn = np.ascontiguousarray(sqn, dtype=np.float64)
    alpha = np.array(alpha0, dtype=np.float64)
    G, Gbar = general_gradients(X, sqn, kint, kflt, form, alpha)
    dtype = row_cache_dtype(form, cache_mb) if dtype is None else dtype
    n_row_slots = cached_rows(form, cache_mb, dtype)
    rowcache = (
        rowmap,
        np.empty((n_row_slots, n_rows), dtype=dtype),
        np.stack([np.full(n_row_slots, -1, dtype=np.int64), np.zeros(n_row_slots, dtype=np.int64)]),
        np.full(n_rows, -1, dtype=np.int64),
    )
    # bit 0: t ∈ I_up, bit 1: t ∈ I_low (as jit.bound_status)
    up = ((z > 0) & (alpha < upper)) | ((z < 0) & (alpha > 0))
    low = ((z > 0) & (alpha > 0)) | ((z < 0) & (alpha < upper))
    status = (up.astype(np.uint8) | (low.astype(np.uint8) << 1)).astype(np.uint8)
    QD = np.ascontiguousarray(diag[rowmap] + form.s2)
    core = new_core(
        X, XT, sqn, kint, kflt, z, upper, QD, alpha, G, Gbar, status, 1, dtype,
        # the variables' columns are read from the kernel rows: no column cache (the loops
        # compile the general form's variant alone)
        cache=None,
        tmp=np.empty(max(m, n_rows)),  # a kernel column on the rows of X
        p=np.ascontiguousarray(form.p, dtype=np.float64),
        rowmap=rowcache,
    )  # fmt: skip
    return GeneralState(core, form, eps=max(eps, EPS_FLOOR))


def general_init_state(solver, problem: GeneralDualProblem, warm_start) -> GeneralState:
    """The state of ``problem``'s general form, from ``form.alpha0`` or from a warm start's α
    projected onto the feasible set."""
    form = problem.smo_form()
    alpha0 = form.alpha0
    check_feasible_start(form)
    if warm_start is not None:
        given = np.asarray(warm_start.alpha, dtype=float)
        if given.shape != (form.n_variables,):
            raise ValueError(
                f"warm_start: alpha must have shape ({form.n_variables},) (the general form's "
                f"variables), got {given.shape}"
            )
        alpha0 = project(form, given)
    return make_general_state(
        form, alpha0, eps=solver.eps, cache_mb=solver.cache_mb, storage=solver.storage
    )


def check_feasible_start(form: GeneralDual) -> None:
    """``ValueError`` unless ``form.alpha0`` lies in the box and meets the equalities (to
    1e-9 relative): the pair updates keep the equalities of the start, whatever they are."""
    a = form.alpha0
    box = bool(np.all(np.isfinite(a)) and np.all(a >= 0.0) and np.all(a <= form.upper))
    residual = form.equality_residual(a) if box else math.inf
    scale = max(1.0, abs(form.delta), abs(form.delta_neg))
    if residual > 1e-9 * scale:
        what = f"equality residual {residual:.3g}" if box else "outside 0 <= alpha0 <= upper"
        raise ValueError(
            f"alpha0 of the general form must be feasible (0 <= alpha0 <= upper and the "
            f"{form.equality!r} equalities): {what}"
        )


def general_warm_up(solver, problem: GeneralDualProblem) -> float:
    """Compile the loop of ``problem``'s equality on its rows (dense or CSR) on a 4-row form
    with 8 variables (a row map and a linear term); untimed, once per process and variant."""
    form = problem.smo_form()
    precomputed = form.kernel.name == "precomputed"
    dense = precomputed or use_dense_rows(form.X, solver.storage)
    storage = "dense" if dense else "csr"
    tiny_X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    if precomputed:
        tiny_X = tiny_X @ tiny_X.T
    dtype = np.dtype(row_cache_dtype(form, solver.cache_mb)).type
    threads = rows_threads(form.X, "dense" if precomputed else storage)
    shrinking = solver.shrinking and form.equality != "nu"  # as general_step's
    variant = (storage, form.equality, dtype, threads is not None, shrinking)
    if variant in _WARM_GENERAL:
        return 0.0
    start = time.perf_counter()
    name = np.dtype(dtype).name
    what = f"{storage} rows, {name} kernel rows, the general form's {form.equality!r} loop"
    tag = f"smo-general-{storage}-{name}-{form.equality}"
    if threads is not None:
        what, tag = f"{what}, parallel columns", f"{tag}-parallel"
    with compiling(tag, "smo", what):
        rows = np.r_[np.arange(4), np.arange(4)]
        z = np.r_[np.ones(4), -np.ones(4)]
        alpha0 = np.r_[0.5, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0]
        tiny = GeneralDual(
            _like(form.X, tiny_X), form.kernel, rows, z, np.full(8, 0.1), np.ones(8),
            form.equality, alpha0, delta=0.0 if form.equality == "one" else 0.5, delta_neg=0.5,
        )  # fmt: skip
        state = make_general_state(
            tiny, alpha0, eps=1e-3, cache_mb=0.0, storage=storage, dtype=dtype
        )
        core = state.core._replace(kint=(*state.core.kint[:2], threads))
        jit.run_loop(LOOPS[form.equality], 50, 1e-3, shrinking, core)
        if shrinking:  # the ν loop does not shrink
            jit.compile_reconstruct(core)
    _WARM_GENERAL.add(variant)
    return time.perf_counter() - start


def _like(X, dense: np.ndarray):
    """``dense`` as CSR when ``X`` is sparse (the compiled variant follows the rows' type)."""
    from scipy import sparse

    return sparse.csr_matrix(dense) if sparse.issparse(X) else dense


def general_memory(problem: GeneralDualProblem, cache_mb: float) -> float:
    """The kernel rows (:func:`cached_rows`), X and its transpose, 24 vectors of m."""
    form = problem.smo_form()
    m, n_rows = form.n_variables, form.X.shape[0]
    dtype = row_cache_dtype(form, cache_mb)
    kernel_rows = cached_rows(form, cache_mb, dtype)
    X = form.X
    rows = 0 if form.kernel.name == "precomputed" else 16.0 * np.prod(X.shape)
    cached = np.dtype(dtype).itemsize * kernel_rows * n_rows
    return float(cached + rows + 24 * 8 * m)


def general_step(solver, problem: GeneralDualProblem, state: GeneralState) -> StepOutcome:
    """One chunk of updates (see :meth:`solvers.smo.SMO._step`, whose rules it follows)."""
    if state.asked:
        # the certificate refused the point the estimate proposed
        state.asked = False
        if state.eps <= EPS_FLOOR:
            return StepOutcome(0, converged=True)
        drifted = False
        if state.core.rowmap[1].dtype != np.float64:
            # float32 rows make the maintained G drift by rounding: recompute it in float64;
            # if that shows the gap, go on at this eps instead of a tighter one
            c = state.core
            c.G[:], c.Gbar[:] = general_gradients(c.X, c.sqn, c.kint, c.kflt, state.form, c.alpha)
            F, gap = general_estimates(state)
            drifted = gap / max(1.0, abs(F)) > solver.tol
        if drifted:
            state.core.ist[jit.UNSHRUNK] = 0
        else:
            _tighten(state)
    run = LOOPS[state.form.equality]
    shrinking = solver.shrinking and state.form.equality != "nu"
    total = 0
    while True:
        budget = min(solver.chunk - total, max(1, solver.max_iter - state.iterations))
        done, code = jit.run_loop(run, budget, state.eps, shrinking, state.core)
        total += done
        state.iterations += done
        state.converged = code == jit.CONVERGED
        if solver.stop_rule == "native" or not state.converged:
            return StepOutcome(total, converged=state.converged)
        F, gap = general_estimates(state)
        state.estimate = gap / max(1.0, abs(F))
        if state.estimate <= solver.tol or state.eps <= EPS_FLOOR:
            state.asked = True
            state.certifications += 1
            return StepOutcome(total, converged=True)
        _tighten(state, solver.tol / state.estimate)
        if total >= solver.chunk or state.iterations >= solver.max_iter:
            return StepOutcome(total)


def _tighten(state: GeneralState, wanted: float = 0.0) -> None:
    """Lower eps for a new phase: to half the share that would just meet tol, between 1/100 and
    1/2 of itself (tenfold without an estimate), as :meth:`solvers.smo.SMO._tighten`."""
    factor = 0.1 if wanted <= 0.0 else min(0.5, max(0.01, 0.5 * wanted))
    state.eps = max(EPS_FLOOR, state.eps * factor)
    state.core.ist[jit.UNSHRUNK] = 0


def libsvm_offset(value, free, lower_side, upper_side) -> float:
    """LIBSVM's ``calculate_rho`` on one set: the mean of ``value`` over the free variables, else
    the midpoint of ``[max value[lower_side], min value[upper_side]]`` (one end if the other is
    missing, 0 if both are)."""
    if free.any():
        return float(value[free].mean())
    lb = value[lower_side].max() if lower_side.any() else -np.inf
    ub = value[upper_side].min() if upper_side.any() else np.inf
    if np.isfinite(lb) and np.isfinite(ub):
        return float(0.5 * (lb + ub))
    if np.isfinite(lb) or np.isfinite(ub):
        return float(lb if np.isfinite(lb) else ub)
    return 0.0


def general_offsets(state: GeneralState) -> tuple[float, float]:
    """``(ρ, r)`` on the active set: "one" ``(r, r)`` with r from ``z_t G_t``; "nu"
    ``((r₁ − r₂)/2, (r₁ + r₂)/2)`` with r_g from ``G_t`` of sign g; "none" ``(0, 0)``."""
    c = state.core
    act = c.active[: c.ist[jit.N_ACTIVE]]
    a, z, G, u = c.alpha[act], c.y[act], c.G[act], c.C[act]
    at_upper = a >= u
    at_lower = ~at_upper & (a <= 0)
    free = ~at_upper & ~at_lower
    equality = state.form.equality
    if equality == "one":
        v = z * G
        r = libsvm_offset(
            v, free, (at_upper & (z > 0)) | (at_lower & (z < 0)),
            (at_upper & (z < 0)) | (at_lower & (z > 0)),
        )  # fmt: skip
        return r, r
    if equality == "nu":
        r1, r2 = (
            libsvm_offset(G[g], free[g], at_upper[g], at_lower[g]) for g in (z > 0, z < 0)
        )  # fmt: skip
        return 0.5 * (r1 - r2), 0.5 * (r1 + r2)
    return 0.0, 0.0


def general_estimates(state: GeneralState) -> tuple[float, float]:
    """``(F(α), F(α) − L(α, μ))`` from the maintained gradient, O(m) (module docstring)."""
    c = state.core
    a, z, G, u, p = c.alpha, c.y, c.G, c.C, c.p
    rho, r = general_offsets(state)
    equality = state.form.equality
    if equality == "one":
        g = G - z * rho
    elif equality == "nu":
        # μ₊ = −r₁ = −(r + ρ), μ₋ = −r₂ = −(r − ρ)
        g = G - np.where(z > 0, r + rho, r - rho)
    else:
        g = G
    F = 0.5 * float(a @ (G + p))
    gap = float(a @ g + u @ np.maximum(0.0, -g))
    return F, gap


def general_trace_estimate(problem: GeneralDualProblem, state: GeneralState):
    """``(P, D)`` of an ε-SVR trace point from the maintained G, O(m) (``certified=False``):
    ``D ≈ −F(α)`` (``= D(β)`` when ``α_i α*_i = 0``, the dual of :class:`~problems.SVRDual`) and
    ``P ≈ D + (F − L)``; None (certify) for the other forms, whose objectives have scales of
    their own."""
    if not isinstance(problem, SVRDual):
        return None
    F, gap = general_estimates(state)
    return gap - F, -F


def general_variables(problem: GeneralDualProblem, state: GeneralState) -> dict:
    rho, _ = general_offsets(state)
    return problem.variables_from_smo(state.core.alpha.copy(), rho)


def general_info(state: GeneralState) -> dict:
    ist = state.core.ist
    return {
        "cache_by": "row",  # kernel rows K(x_r, ·) of X, read by every variable on row r
        "cache_columns": int(state.core.rowmap[1].shape[0]),
        "cache_bytes_per_entry": int(state.core.rowmap[1].itemsize),
        "cache_hits": int(ist[jit.HITS]),
        "cache_misses": int(ist[jit.MISSES]),
        "reconstructions": int(ist[jit.RECONSTRUCTIONS]),
        "certifications": state.certifications,
        "eps_final": state.eps,
        "gap_estimate": state.estimate,
        "native_converged": state.converged,
        "numba_threads": numba.get_num_threads(),
        "rows": "csr" if isinstance(state.core.X, tuple) else "dense",
        "equality": state.form.equality,
        "variables": state.form.n_variables,
        "rho": general_offsets(state)[0],
        "rho_r": general_offsets(state)[1],
    }
