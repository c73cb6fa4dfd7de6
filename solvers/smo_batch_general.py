"""The batched working-set SMO on LIBSVM's general dual: ε-SVR and one-class (Chang & Lin, ACM
TIST 2011, §2 and §4; Wen et al., ThunderSVM, JMLR 19, 2018).

The form (:mod:`problems.general_dual`, ``problem.smo_form()``)::

    min_α  F(α) = ½ αᵀQα + pᵀα   s.t.  0 ≤ α_t ≤ u_t   (and zᵀα = Δ: "one")

    Q_st = z_s z_t (K(x_{r_s}, x_{r_t}) + s²)

has m variables on the rows of X (ε-SVR: m = 2n, α_r and α*_r on row r; one-class: m = n).
:mod:`solvers.smo_batch`'s outer iteration runs on it with the same jitted parts:

- the working set B of q variables is chosen as C-SVC's (z in the place of y, u of C; maximal
  violating pairs for "one", largest ``|PG_t|`` for "none"), G = Qα + p carrying the linear term;
- B's distinct rows of X, ``R_B``, are what the cache holds (LRU by row of X, as LIBSVM's
  ``SVR_Q``): the missing ones computed in one batched call as kernel rows ``K(x_r, ·) + s²``
  over the n rows of X (one BLAS product per block of rows), each once however many of its
  variables are in B;
- SMO on the q×q block reads ``Q_kc = z_k z_c K[r_k, r_c]`` from those rows (the inner loops'
  variant with a row map, compiled for the general forms only);
- ``G += Q_:B Δα_B`` as ``h = Σ_{r ∈ R_B} c_r K[r, ·]`` with ``c_r = Σ_{k ∈ B, r_k = r} z_k Δα_k``
  (one pass over the rows of X), then ``G_t += z_t h[r_t]``: both copies of a row from the same
  kernel row.

No shrinking; the ν forms ("nu", two equalities) stay on ``smo``. Stopping as
:mod:`solvers.smo_general`: the native rule, then the certificate once the O(m) Lagrangian gap
``Σ_t α_t g_t + u_t max(0, −g_t)``, ``g_t = G_t − z_t ρ``, is ``≤ tol·max(1, |F|)``; ρ is
LIBSVM's ``calculate_rho``. The problem certifies ``variables_from_smo(α, ρ)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from svmbench.problems.general_dual import GeneralDual, GeneralDualProblem
from svmbench.problems.general_qp import project
from svmbench.problems.svr import SVRDual
from svmbench.solvers._jit import smo_batch as jit
from svmbench.solvers._jit.kernel_columns import column_threads
from svmbench.solvers.smo_arrays import kernel_rows_arrays
from svmbench.solvers.smo_general import (
    EPS_FLOOR,
    cached_rows,
    check_feasible_start,
    general_gradients,
    libsvm_offset,
    row_cache_dtype,
)


@dataclass
class GeneralBatchState:
    """What the outer iteration reads for a general form (names as :class:`solvers.smo_batch.State`
    where :func:`solvers.smo_batch_selection.select_working_set` reads them)."""

    form: GeneralDual
    pairs: bool
    batched: bool  # dense rows and a computed kernel: fill_rows_dense; else one column a time
    X: np.ndarray | tuple
    XT: np.ndarray | tuple
    sqn: np.ndarray
    kint: np.ndarray
    kflt: np.ndarray
    y_a: np.ndarray  # z (every variable active)
    C: np.ndarray  # u
    QD: np.ndarray  # Q_tt = K(x_{r_t}, x_{r_t}) + s²
    kdiag: np.ndarray  # K(x_r, x_r) + s² per row of X
    ones: np.ndarray  # 1 per row of X: the batched fill's "labels", so that it stores K + s²
    all_rows: np.ndarray
    rowmap: np.ndarray
    p: np.ndarray
    alpha: np.ndarray
    G: np.ndarray  # Qα + p
    h: np.ndarray  # Σ_r c_r K[r, ·], per row of X
    q: int
    cache: np.ndarray  # kernel rows K(x_r, ·) + s², slots × n rows
    slot_row: np.ndarray
    row_slot: np.ndarray
    stamp: np.ndarray
    ws: np.ndarray
    m: int
    rslots: np.ndarray  # slots of the distinct rows of the working set
    missing: np.ndarray
    delta: np.ndarray
    in_ws: np.ndarray
    work: np.ndarray
    tmp: np.ndarray
    score_a: np.ndarray
    score_b: np.ndarray
    eps: float
    act: np.ndarray  # every variable (no shrinking)
    is_active: np.ndarray
    unshrunk: bool = False
    clock: int = 0
    iterations: int = 0
    outer: int = 0
    rows_computed: int = 0
    row_hits: int = 0
    asked: bool = False
    converged: bool = False
    estimate: float = math.nan
    violation: float = math.inf
    certifications: int = 0
    refreshes: int = 0


def general_slots(form: GeneralDual, q: int, cache_mb: float, dtype) -> int:
    """Kernel rows the cache holds: as many as ``cache_mb`` takes, at least the working set's
    q (its distinct rows must all be in), at most the n rows of X."""
    return int(min(form.X.shape[0], max(q, cached_rows(form, cache_mb, dtype))))


def make_general_batch_state(
    form: GeneralDual, alpha0, *, eps, q, cache_mb, storage, dtype=None
) -> GeneralBatchState:
    """The state of ``form`` started at the feasible ``alpha0``."""
    m = form.n_variables
    X, XT, sqn, diag = kernel_rows_arrays(form.X, form.kernel, storage)
    n_rows = sqn.shape[0]
    spec = form.kernel
    # the threads of the parallel row loops, 0 when no column of these rows reaches their thresholds
    threads = column_threads(X, numba.get_num_threads()) or 0
    kint = np.array([spec.code, spec.degree, threads], dtype=np.int64)
    kflt = np.array([spec.gamma, spec.coef0, form.s2], dtype=np.float64)
    sqn = np.ascontiguousarray(sqn, dtype=np.float64)
    rowmap = np.ascontiguousarray(form.rows, dtype=np.int64)
    alpha = np.array(alpha0, dtype=np.float64)
    G, _ = general_gradients(X, sqn, kint, kflt, form, alpha)
    dtype = row_cache_dtype(form, cache_mb) if dtype is None else dtype
    q = min(q, m)
    slots = general_slots(form, q, cache_mb, dtype)
    kdiag = np.ascontiguousarray(diag + form.s2, dtype=np.float64)
    return GeneralBatchState(
        form=form,
        pairs=form.equality == "one",
        batched=isinstance(X, np.ndarray) and spec.name != "precomputed",
        X=X,
        XT=XT,
        sqn=sqn,
        kint=kint,
        kflt=kflt,
        y_a=np.ascontiguousarray(form.sign, dtype=np.float64),
        C=np.ascontiguousarray(form.upper, dtype=np.float64),
        QD=np.ascontiguousarray(kdiag[rowmap]),
        kdiag=kdiag,
        ones=np.ones(n_rows),
        all_rows=np.arange(n_rows, dtype=np.int64),
        rowmap=rowmap,
        p=np.ascontiguousarray(form.p, dtype=np.float64),
        alpha=alpha,
        G=np.ascontiguousarray(G),
        h=np.zeros(n_rows),
        q=q,
        cache=np.empty((slots, n_rows), dtype=dtype),
        slot_row=np.full(slots, -1, dtype=np.int64),
        row_slot=np.full(n_rows, -1, dtype=np.int64),
        stamp=np.zeros(slots, dtype=np.int64),
        ws=np.empty(q, dtype=np.int64),
        m=0,
        rslots=np.empty(q, dtype=np.int64),
        missing=np.empty(q, dtype=np.int64),
        delta=np.zeros(q),
        in_ws=np.zeros(m, dtype=np.uint8),
        work=np.empty(q * q + 6 * q),
        tmp=np.empty(n_rows),
        score_a=np.empty(m),
        score_b=np.empty(m),
        eps=eps,
        act=np.arange(m, dtype=np.int64),
        is_active=np.ones(m, dtype=bool),
    )


def general_batch_init(solver, problem: GeneralDualProblem, warm_start) -> GeneralBatchState:
    """The state of ``problem``'s general form from ``form.alpha0``, or from a warm start's α
    projected onto the feasible set."""
    if solver.shrinking:
        raise ValueError(
            "shrinking=True: smo_batch shrinks the kernel dual (C-SVC) only; solve "
            f"{problem.kind!r} with shrinking=False"
        )
    form = problem.smo_form()
    check_feasible_start(form)
    alpha0 = form.alpha0
    if warm_start is not None:  # its shape checked by the template (WarmStart.parse)
        alpha0 = project(form, np.asarray(warm_start.alpha, dtype=float))
    return make_general_batch_state(
        form, alpha0, eps=max(solver.eps, EPS_FLOOR), q=solver.q, cache_mb=solver.cache_mb,
        storage=solver.storage,
    )  # fmt: skip


def general_outer_updates(solver, s: GeneralBatchState, violation: float, budget: int) -> int:
    """Rows, block SMO and G of one outer iteration on the working set ``s.ws[:s.m]``; returns
    the updates done."""
    m = s.m
    ws = s.ws[:m]
    rows, inv = np.unique(s.rowmap[ws], return_inverse=True)
    n_rows = rows.shape[0]
    n_miss, s.clock = jit.assign_slots(
        rows, n_rows, s.row_slot, s.slot_row, s.stamp, s.clock, s.rslots, s.missing
    )
    s.rows_computed += n_miss
    s.row_hits += n_rows - n_miss
    code, degree = int(s.kint[0]), int(s.kint[1])
    gamma, coef0, s2 = float(s.kflt[0]), float(s.kflt[1]), float(s.kflt[2])
    threads = int(s.kint[2]) or None  # 0: rows too small for the parallel loops
    fill_rows_dense, update_gradient = jit.row_passes(threads)
    if n_miss:
        if s.batched:
            fill_rows_dense(
                s.X, s.XT, s.all_rows, s.sqn, s.ones, s.sqn, s.ones, s.kdiag, rows, s.rslots,
                s.missing, n_miss, s.cache, code, gamma, coef0, degree, s2,
            )  # fmt: skip
        else:
            jit.fill_rows_columns(
                s.XT, s.sqn, s.ones, s.kdiag, rows, s.rslots, s.missing, n_miss, s.cache, s.tmp,
                code, gamma, coef0, degree, s2, threads,
            )  # fmt: skip
    slots = np.ascontiguousarray(s.rslots[inv])
    target = max(solver.inner_tol * violation, s.eps)
    steps = min(budget, solver.inner_steps * m)
    run = jit.inner_pairs if s.pairs else jit.inner_single
    done = run(
        s.ws, s.rowmap, m, slots, s.cache, s.y_a, s.C, s.QD, s.alpha, s.delta, s.G, target,
        steps, s.work,
    )  # fmt: skip
    coef = np.bincount(inv, weights=s.y_a[ws] * s.delta[:m], minlength=n_rows)
    s.h[:] = 0.0
    update_gradient(s.h, s.cache, s.rslots, coef, n_rows, s.all_rows)
    s.G += s.y_a * s.h[s.rowmap]
    return done


def general_refresh(s: GeneralBatchState) -> None:
    """G in float64 from α (float32 rows make the maintained G drift by rounding)."""
    s.G[:], _ = general_gradients(s.X, s.sqn, s.kint, s.kflt, s.form, s.alpha)
    s.refreshes += 1


def general_rho(s: GeneralBatchState) -> float:
    """LIBSVM's ρ ("one": from ``z_t G_t``; "none": 0)."""
    if s.form.equality != "one":
        return 0.0
    a, z, G, u = s.alpha, s.y_a, s.G, s.C
    at_upper = a >= u
    at_lower = ~at_upper & (a <= 0)
    free = ~at_upper & ~at_lower
    return libsvm_offset(
        z * G, free, (at_upper & (z > 0)) | (at_lower & (z < 0)),
        (at_upper & (z < 0)) | (at_lower & (z > 0)),
    )  # fmt: skip


def general_batch_estimates(s: GeneralBatchState) -> tuple[float, float]:
    """``(F(α), F(α) − L(α, −ρ))`` from the maintained G, O(m) (module docstring)."""
    a, z, G, u, p = s.alpha, s.y_a, s.G, s.C, s.p
    g = G - z * general_rho(s)
    F = 0.5 * float(a @ (G + p))
    return F, float(a @ g + u @ np.maximum(0.0, -g))


def general_batch_gap(s: GeneralBatchState) -> float:
    F, gap = general_batch_estimates(s)
    return gap / max(1.0, abs(F))


def general_batch_trace(problem: GeneralDualProblem, s: GeneralBatchState):
    """An ε-SVR trace point's ``(P, D)`` from G (``D ≈ −F``, ``P ≈ D + F − L``), as
    :func:`solvers.smo_general.general_trace_estimate`; None (certify) for one-class."""
    if not isinstance(problem, SVRDual):
        return None
    F, gap = general_batch_estimates(s)
    return gap - F, -F


def general_batch_variables(problem: GeneralDualProblem, s: GeneralBatchState) -> dict:
    return problem.variables_from_smo(s.alpha.copy(), general_rho(s))


def general_batch_info(s: GeneralBatchState) -> dict:
    return {
        "q": s.q,
        "outer_iterations": s.outer,
        "cache_by": "row",
        "cache_rows": int(s.cache.shape[0]),
        "cache_bytes_per_entry": int(s.cache.itemsize),
        "rows_computed": s.rows_computed,
        "row_hits": s.row_hits,
        "certifications": s.certifications,
        "gradient_refreshes": s.refreshes,
        "eps_final": s.eps,
        "gap_estimate": s.estimate,
        "native_converged": s.converged,
        "numba_threads": numba.get_num_threads(),
        "rows": "dense" if s.batched else ("csr" if isinstance(s.X, tuple) else "gram"),
        "equality": s.form.equality,
        "variables": s.form.n_variables,
        "rho": general_rho(s),
    }


def general_batch_memory(problem: GeneralDualProblem, q: int, cache_mb: float) -> float:
    """The kernel rows (:func:`general_slots`), X and its transpose, the q×q block, 20 vectors
    of m."""
    form = problem.smo_form()
    m, n_rows = form.n_variables, form.X.shape[0]
    dtype = row_cache_dtype(form, cache_mb)
    q = min(int(q), m)
    cached = np.dtype(dtype).itemsize * general_slots(form, q, cache_mb, dtype) * n_rows
    rows = 0 if form.kernel.name == "precomputed" else 16.0 * np.prod(form.X.shape)
    return float(cached + rows + 8 * (q * q + 6 * q) + 20 * 8 * m)
