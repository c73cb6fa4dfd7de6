"""The exact finish: a certified dual point made exact on its active set (ARCHITECTURE.md §4).

Interior-point methods (the barrier, Clarabel) stop with every multiplier strictly inside its box:
α_i of 1e-14 to 1e-8 on points far from the margin, so that a model built from α keeps every
training row as a support vector. From the certified point, :func:`exact_finish`

1. identifies the active set: ``α_i ≤ ε·min(C_i, max α)`` → 0, ``α_i ≥ (1 − ε)·C_i`` → ``C_i``,
   the rest free, at thresholds from ``ε₀ = √rel_gap`` clipped to ``[EPS_MIN, EPS_MAX]`` up to
   ``EPS_LOOSE`` by factors of 10 (a point certified at a loose gap, ``tol=1e-3`` say, keeps
   multipliers of 1e-5 on points off the margin that only a looser threshold sets to 0), each
   distinct active set a candidate, the smallest free set first (the cheapest);
2. for each candidate, sets the bounded multipliers exactly and solves the KKT equations of the
   free ones, for a
   free bias ``[Q_FF y_F; y_Fᵀ 0][α_F; b] = [1 − Q_FB α_B; −y_Bᵀα_B]``, else
   ``Q_FF α_F = 1 − Q_FB α_B`` (``Q`` with ``s²`` for a regularized bias and
   ``diag(1/(2C_i))`` for the squared hinge, whose multipliers are bounded below only). The
   solve (solvers/kkt_systems.py) is Jacobi's iteration or a Cholesky factorization where
   ``Q_FF`` is dominant or well-conditioned (the solution then unique), else a minimum-norm
   correction of the point's own ``α_F`` (rank-revealing, so that a singular system, α not
   unique, keeps the solution nearest the point); a free multiplier that
   leaves its box is fixed at the bound it crossed and the system solved again (a few rounds),
   and if that does not settle the thresholded point is kept as it is;
3. re-certifies each candidate with the problem's own certificate, stopping at the first that
   certifies to ``STOP_GAP`` (the KKT point of the right active set is exact to rounding); the
   candidate of smallest certified gap is accepted only when ``rel_gap ≤ tol``; otherwise the
   point is unchanged. The point itself must meet ``tol`` (a native rule's stop short of it
   stays as it stopped), except for a method's early try at a large C (``short``,
   :mod:`~solvers.margin_lift`), whose result, too, is kept only where it meets ``tol``.

At a C where the margins' rounding weighs, the callers ask the KKT points' margins at ``1 + δ``
(:func:`~solvers.margin_lift.finish_exactly`), so that their certificates can show their gap.

It applies to the box-constrained binary duals (:class:`SoftMarginPrimal`, :class:`SoftMarginDual`
and :class:`KernelDual` with the hinge or squared hinge, every bias) and is skipped, with the reason
in the report, when the point is already exact (every multiplier near a bound is at it, in the box,
and the certified gap ≤ ``EXACT_GAP``: SMO and coordinate descent at a tight ``tol``, whose results
then stay bit for bit; at a looser gap their free multipliers are solved too), when the solver
handed over no α
(a primal method: its model is ``(w, b)``), and when more than ``MAX_FREE`` multipliers are free
(the dense solve).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems._qp import absorb_label_sum, exact_label_sum
from svmbench.problems.base import Certificate, Problem
from svmbench.problems.kernels import kernel_dot, kernel_matrix
from svmbench.problems.svr import SVRDual
from svmbench.solvers.kkt_systems import kkt_solve
from svmbench.solvers.svr_finish import svr_exact_finish

#: Largest relative threshold ε₀ of the first active-set identification.
EPS_MAX = 1e-6
#: Largest threshold of the candidates tried after it (factors of 10 from ε₀).
EPS_LOOSE = 1e-2
#: A point whose bounded multipliers are exact and whose certified gap is at most this (the
#: default tol) is kept as it is: SMO and coordinate descent stay bit for bit there, and pay
#: for the finish only at a looser gap.
EXACT_GAP = 1e-6
#: The candidates stop at the first finished point certified to this: exact to rounding.
STOP_GAP = 1e-12
#: A finished multiplier of at most this many times the largest is rounding: set to 0.
ROUNDING_ZERO = 64 * np.finfo(np.float64).eps

#: Smallest ε (a point certified to rounding still has rounding in α).
EPS_MIN = 1e-12
#: The dense KKT solve runs up to this many free multipliers; beyond, the finish is skipped.
MAX_FREE = 2000
#: Rounds of "fix the multipliers that left the box, solve again".
ROUNDS = 5


def finish_applies(problem: Problem) -> bool:
    """Whether ``problem`` has a box-constrained binary dual the finish handles (or is an ε-SVR:
    :mod:`~svmbench.solvers.svr_finish`)."""
    if isinstance(problem, SVRDual):
        return problem.convex
    return (
        isinstance(problem, (SoftMarginPrimal, SoftMarginDual, KernelDual))
        and problem.loss in ("hinge", "squared_hinge")
        and problem.convex
    )


def exact_finish(
    problem: Problem,
    variables: Mapping[str, Any],
    certificate: Certificate | None,
    *,
    tol: float,
    max_free: int | None = None,
    stop_gap: float = STOP_GAP,
    margins: bool = True,
    max_tries: int | None = None,
    short: bool = False,
    lift: float = 0.0,
) -> tuple[dict[str, Any], Certificate | None, dict[str, Any]]:
    """The finished ``(variables, certificate, report)`` of a certified point.

    ``certificate`` is the point's own (drawn here when None); ``max_free``: the largest free
    set solved (None: ``MAX_FREE``; a caller trying the finish early asks for small sets only);
    ``stop_gap``: the candidates stop at the first certified to it (``STOP_GAP``: exact);
    ``margins=False``: the active sets of α's thresholds only, none read from the margins;
    ``max_tries``: the candidates certified at most, in their order (None: all); ``short``: a
    point short of ``tol`` is finished too (a method's early try, :mod:`~solvers.margin_lift`;
    what it returns still meets ``tol`` or is the point given); ``lift``: the hinge's free
    margins asked at ``1 + lift`` (:func:`~solvers.margin_lift.finish_exactly` sets it).
    The variables and certificate returned are the finished ones when accepted, else the given
    ones (the certificate drawn, if it was); the report says which and what was fixed
    (``fixed_at_0``, ``fixed_at_C``, ``free``, ``accepted``, ``rel_gap_before``,
    ``rel_gap_after``, ``method``), or why nothing was tried (``skipped``)."""
    if isinstance(problem, SVRDual):
        return svr_exact_finish(problem, dict(variables), certificate, tol=tol)
    tic = time.perf_counter()
    variables = dict(variables)
    if certificate is None or certificate.dual_point is None:
        certificate = problem.certificate(**variables)
    cert = certificate
    if not cert.certified or not math.isfinite(cert.rel_gap):
        return variables, cert, {"skipped": "the point is not certified"}
    if not (short or cert.meets(tol)):  # a native rule that held short of tol: as it stopped
        why = f"certified at {cert.rel_gap:.3g}, short of tol={tol:g}: it is not optimal"
        if cert.rel_gap <= tol:
            why = f"certified at {cert.rel_gap:.3g}, within tol={tol:g} but not with its rounding"
        return variables, cert, {"skipped": why, "rel_gap_before": float(cert.rel_gap)}
    if variables.get("alpha") is None:
        return variables, cert, {"skipped": "the solver hands over (w, b) only, no α"}
    alpha = np.asarray(cert.dual_point, dtype=np.float64)
    _, upper = problem.dual_box()
    raw = np.asarray(variables["alpha"], dtype=np.float64)
    report = already_exact(raw, cert, upper, tol)
    if report is not None:  # SMO, coordinate descent at a tight tol: kept bit for bit
        return variables, cert, report
    eps0 = min(max(math.sqrt(max(cert.rel_gap, 0.0)), EPS_MIN), EPS_MAX)  # a float: no np.clip
    at0, atC = active_set(alpha, upper, eps0)
    n0, nC = int(np.count_nonzero(at0)), int(np.count_nonzero(atC))
    report = {
        "fixed_at_0": n0,
        "fixed_at_C": nC,
        "free": alpha.size - n0 - nC,  # the two sets are disjoint
        "eps": eps0,
        "rel_gap_before": float(cert.rel_gap),
    }
    sets = _threshold_sets(alpha, upper, eps0)
    b0 = cert.primal_point.get("b")
    limit = MAX_FREE if max_free is None else max_free
    candidates, too_many = _candidates(sets, limit)
    best, tried = None, []
    tries = _then_margins(problem, cert, upper, candidates, limit) if margins else candidates
    if max_tries is not None:
        tries = itertools.islice(tries, max_tries)
    if lift:  # margins asked at 1 + lift: a gap of about lift·Σα stops the candidates
        stop_gap = max(stop_gap, 4.0 * lift * float(alpha.sum()) / max(1.0, abs(cert.dual)))
        report["lifted"] = lift
    for eps, at0, atC, free in tries:
        new_vars, finished, method = finished_point(problem, atC, free, alpha, b0, upper, lift)
        new_cert = problem.certificate(**new_vars)
        tried.append((eps, float(new_cert.rel_gap)))
        if new_cert.certified and (best is None or new_cert.rel_gap < best[1].rel_gap):
            counts = (int(at0.sum()), int(atC.sum()), int(free.size))
            best = (new_vars, new_cert, eps, method, counts, finished)
        if best is not None and best[1].rel_gap <= stop_gap:
            break
    if not tried:
        name = "MAX_FREE" if max_free is None else "max_free"
        report["skipped"] = f"{too_many} free multipliers, more than {name}={limit}"
        return variables, cert, report
    report["tried"] = [[e, g] for e, g in tried]
    if best is None:  # no candidate certified
        report.update(accepted=False, rel_gap_after=min(g for _, g in tried))
        report["seconds"] = time.perf_counter() - tic
        return variables, cert, report
    new_vars, new_cert, eps, method, (n0, nC, nfree), finished = best
    accepted = new_cert.meets(tol)  # the point's own gap, with its rounding allowance, met tol
    report.update(
        fixed_at_0=n0,
        fixed_at_C=nC,
        free=nfree,
        eps=eps,
        method=method,
        accepted=accepted,
        rel_gap_after=float(new_cert.rel_gap),
        support=int(np.count_nonzero(finished)),
        seconds=time.perf_counter() - tic,
    )
    if not accepted:
        return variables, cert, report
    return new_vars, new_cert, report


#: The report's reason for a point kept as it is.
ALREADY_EXACT = "already exact: every multiplier near a bound is at it"


def already_exact(alpha, cert: Certificate, upper, tol: float) -> dict[str, Any] | None:
    """The finish's report on a point it keeps bit for bit, or None when it must look.

    Kept: the certificate meets ``tol`` with a relative gap at most ``EXACT_GAP``, ``alpha``
    (the solver's; ``cert.dual_point`` its projection) lies in its box ``[0, upper]``, and every
    multiplier of the first active set (:func:`active_set` at ``ε₀ = √rel_gap`` within
    ``[EPS_MIN, EPS_MAX]``) is exactly at its bound, as SMO's clipped updates leave it.
    ``upper``: the bounds, or one float C > 0 shared by all (its tests then scalar)."""
    rel, point = cert.rel_gap, cert.dual_point
    if not (cert.meets(tol) and rel <= EXACT_GAP and point is not None):
        return None
    eps0 = min(max(math.sqrt(max(rel, 0.0)), EPS_MIN), EPS_MAX)
    if isinstance(upper, float):
        # one C: the two sets are apart (ε₀ min(C, max α) < (1 − ε₀)C), their tests scalar
        at0 = point <= eps0 * min(upper, float(point.max(initial=0.0)))
        atC = point >= (1.0 - eps0) * upper
        exact = (alpha[atC] == upper).all()
    else:
        at0, atC = active_set(point, upper, eps0)
        exact = (alpha[atC] == upper[atC]).all()
    if not (
        exact and alpha.min(initial=0.0) >= 0.0 and (alpha <= upper).all() and not alpha[at0].any()
    ):
        return None
    n0, nC = int(np.count_nonzero(at0)), int(np.count_nonzero(atC))
    return {
        "fixed_at_0": n0, "fixed_at_C": nC, "free": alpha.size - n0 - nC, "eps": eps0,
        "rel_gap_before": float(rel), "skipped": ALREADY_EXACT,
    }  # fmt: skip


def _then_margins(problem, cert, upper, candidates, max_free: int):
    """The candidates of α, then those of the margins (:func:`_margin_candidates`), read only
    when the first did not end the search."""
    yield from candidates
    yield from _margin_candidates(problem, cert, upper, candidates, max_free)


class _ThresholdSets(NamedTuple):
    """The active sets of the thresholds ``eps`` (ε₀, 10ε₀, … up to EPS_LOOSE), one row each:
    the k×n masks ``at0``, ``atC`` and their sizes ``n0``, ``nC``."""

    eps: list
    at0: np.ndarray
    atC: np.ndarray
    n0: np.ndarray
    nC: np.ndarray


def active_set(alpha, upper, eps) -> tuple[np.ndarray, np.ndarray]:
    """``(at0, atC)`` of the threshold ε: ``α_i ≤ ε·min(C_i, max α)`` (or a box [0, 0]) →
    ``at0`` and, of the others, ``α_i ≥ (1 − ε)·C_i`` → ``atC``; masks of α's shape for a
    float ε, k×n for a column of k thresholds."""
    at0 = (alpha <= eps * np.minimum(upper, float(np.max(alpha, initial=0.0)))) | (upper <= 0)
    atC = np.isfinite(upper) & ~at0 & (alpha >= (1.0 - eps) * upper)
    return at0, atC


def _threshold_sets(alpha, upper, eps0: float) -> _ThresholdSets:
    """The active set (:func:`active_set`) of every threshold ε = ε₀, 10ε₀, … up to
    EPS_LOOSE, in one k×n comparison."""
    eps_list, eps = [], eps0
    while eps <= EPS_LOOSE * (1.0 + 1e-9):
        eps_list.append(eps)
        eps *= 10.0
    at0, atC = active_set(alpha, upper, np.array(eps_list)[:, None])
    return _ThresholdSets(eps_list, at0, atC, at0.sum(axis=1), atC.sum(axis=1))


def _candidates(sets: _ThresholdSets, max_free: int):
    """The distinct active sets of the thresholds, as ``(ε, at0, atC, free)``, the smallest free
    set first (the cheapest solve: a loose threshold's set, right at a loose gap, is tried before
    the tight one's, which is larger and, there, wrong); and the largest free set left out for
    being over MAX_FREE (0: none).

    Both masks only grow with ε (``atC`` once ``at0`` stays put), so two thresholds give the
    same sets exactly when their sizes agree, and a set can only repeat its predecessor's."""
    out, too_many, n = [], 0, sets.at0.shape[1]
    for k, eps in enumerate(sets.eps):
        if k and sets.n0[k] == sets.n0[k - 1] and sets.nC[k] == sets.nC[k - 1]:
            continue
        n_free = n - int(sets.n0[k]) - int(sets.nC[k])
        if n_free > max_free:
            too_many = max(too_many, n_free)
            continue
        at0, atC = sets.at0[k], sets.atC[k]
        out.append((eps, at0, atC, np.flatnonzero(~(at0 | atC))))
    out.sort(key=lambda c: c[3].size)  # stable: among equal sizes, the smaller ε first
    return out, too_many


def _margin_candidates(problem, cert, upper, known, max_free: int) -> list:
    """Active sets read from the certified point's margins ``m_i = y_i f(x_i)`` rather than from
    α: ``m_i > 1 + δ`` → 0, ``m_i < 1 − δ`` → C_i (a finite bound), the rest free, for
    ``δ = 10^k·√rel_gap``, k = −1, 0, 1. At a loose gap an interior point's α does not yet tell
    the free multipliers from the small ones, its margins do; tried after the sets of α, those
    already tried left out."""
    point = cert.primal_point or {}
    b = point.get("b")
    if b is None:
        return []
    if isinstance(problem, KernelDual):
        f = problem.decision_function(np.asarray(point["alpha"], dtype=np.float64), b)
    elif point.get("w") is not None:
        f = problem.decision_function(np.asarray(point["w"], dtype=np.float64), b)
    else:
        return []
    m = problem.y * np.asarray(f, dtype=np.float64)
    seen = {(c[1].tobytes(), c[2].tobytes()) for c in known}
    root, out = math.sqrt(max(cert.rel_gap, 0.0)), []
    for delta in sorted({float(np.clip(root * 10.0**k, 1e-10, 0.3)) for k in (-1, 0, 1)}):
        at0 = (m > 1.0 + delta) | (upper <= 0)
        atC = np.isfinite(upper) & ~at0 & (m < 1.0 - delta)
        free = np.flatnonzero(~at0 & ~atC)
        key = (at0.tobytes(), atC.tobytes())
        if key not in seen and free.size <= max_free:
            out.append((delta, at0, atC, free))
        seen.add(key)
    return out


def finished_point(problem, atC, free, alpha, b0, upper, lift: float = 0.0):
    """``(variables, α, method)`` of one active set: the multipliers of ``atC`` at their bound,
    those of ``free`` solved (:func:`solve_free_set`, from ``alpha``'s), the rest 0; multipliers
    within rounding of 0 set to 0 (dense and sparse products then agree) and ``yᵀα = 0`` made
    exact (:func:`zero_label_sum`)."""
    fixed = np.where(atC, upper, 0.0)
    finished, b, method = solve_free_set(problem, fixed, free, alpha[free], b0, upper, lift)
    size = np.abs(finished)
    finished[size <= ROUNDING_ZERO * size.max()] = 0.0  # n ≥ 1 multipliers
    finished = zero_label_sum(problem, finished, upper)
    return variables_of(problem, finished, b), finished, method


def solve_free_set(problem, fixed, free, alpha_free, b0, upper, lift: float = 0.0):
    """α with the bounded multipliers at their bounds and the free ones from the KKT equations
    (``method="kkt"``), or at their own values when the equations do not settle in the box
    (``"thresholded"``); and the free bias b the equations give, ``b = mean_F(y_i t_i − g_i)``
    over the free set (``g`` the decision values without b, ``t_i`` the margin the equations ask:
    1, or ``1 − α_i/(2C_i)`` for the squared hinge), as LIBSVM averages it (None: the
    certificate's rule).

    The kernel block of the free set and the bounded multipliers' part of its margins are
    computed once; a round that moves multipliers to a bound reads them from that block.
    ``lift``: the hinge's free margins asked at ``1 + lift`` (:mod:`~solvers.margin_lift`)."""
    if not free.size:  # every multiplier at a bound: nothing to solve, b by the problem's rule
        return fixed.copy(), None, "kkt"
    y = problem.y
    K, r = _kernel_blocks(problem, fixed, free)
    alpha = fixed.copy()
    loc = np.arange(free.size)  # the free multipliers still free, as positions in ``free``
    x_loc = alpha_free
    moved = np.zeros(free.size, dtype=bool)  # positions in ``free`` moved to their upper bound
    for _ in range(ROUNDS):
        if not loc.size:
            return alpha, None, "kkt"
        idx = free[loc]
        r_loc = r[loc]
        if moved.any():
            r_loc = r_loc + K[np.ix_(loc, moved)] @ (upper[free[moved]] * y[free[moved]])
        K_loc = K if loc.size == free.size else K[np.ix_(loc, loc)]  # the first round: all
        sol = kkt_solve(problem, alpha, idx, x_loc, b0, K_loc, r_loc, 1.0 + lift)
        if sol is None:
            break
        x, b = sol
        up = upper[idx]
        low, high = x < 0.0, x > up
        if not (low.any() or high.any()):
            alpha[idx] = x
            if b is not None:  # LIBSVM's b: the mean over the free set of what its margins ask
                g = K_loc @ (x * y[idx]) + r_loc
                target = 1.0 + lift if problem.loss == "hinge" else 1.0 - x / (2.0 * up)
                b = float(np.mean(y[idx] * target - g))
            return alpha, b, "kkt"
        # a multiplier outside its box sits at the bound it crossed, the others are solved again
        alpha[idx[high]] = up[high]
        moved[loc[high]] = True
        keep = ~(low | high)
        loc, x_loc = loc[keep], x[keep]
    alpha = fixed.copy()
    alpha[free] = np.clip(alpha_free, 0.0, upper[free])
    return alpha, None, "thresholded"


def _kernel_blocks(problem, alpha, free):
    """``K̃_FF`` (dense, m×m) and ``r_F = Σ_{j∉F} K̃_Fj α_j y_j`` (K̃ = K + s² for a regularized
    bias; the linear kernel for the linear problems): read from a one-vs-one pair's shared rows
    where its solver computed the free ones, from the problem's Gram matrix where it keeps one,
    else computed."""
    coef = alpha * problem.y
    coef[free] = 0.0
    nz = np.flatnonzero(coef)
    X = problem.X
    shared = problem.shared_rows if isinstance(problem, KernelDual) else None
    if shared is not None and shared[0].done[np.ix_(shared[1][free], shared[2])].all():
        # a one-vs-one pair whose free rows its solver computed: read them from the table
        table, rows, blocks = shared
        K_FF = table.krows.take(rows[free], axis=0).take(rows[free], axis=1)
        r_F = table.times(rows[free], rows[nz], coef[nz], blocks)
    elif isinstance(problem, KernelDual) and (
        problem.kernel == "precomputed" or "gram" in problem.__dict__
    ):
        K = problem.gram
        K_FF = K[np.ix_(free, free)]
        r_F = K[free][:, nz] @ coef[nz]
    elif isinstance(problem, KernelDual) and problem.kernel != "linear":
        params = problem.kernel_params
        XF = X[free]
        K_FF = _dense_kernel_block(XF, **params) if not sparse.issparse(XF) else None
        K_FF = kernel_matrix(XF, **params) if K_FF is None else K_FF
        sqn = problem.squared_norms if problem.kernel == "rbf" else None
        r_F = kernel_dot(
            XF,
            X[nz],
            coef[nz],
            sqn_X=None if sqn is None else sqn[free],
            sqn_Z=None if sqn is None else sqn[nz],
            **params,
        )
    else:  # linear: X_F X_Fᵀ and X_F (X_Bᵀ c_B), no kernel machinery
        XF = X[free]
        K_FF = XF @ XF.T
        K_FF = K_FF.toarray() if sparse.issparse(K_FF) else K_FF
        r_F = XF @ (X.T @ coef)
    if problem.bias == "regularized":
        s2 = problem.bias_scale**2
        K_FF = K_FF + s2
        r_F = r_F + s2 * float(coef.sum())
    return np.asarray(K_FF, dtype=np.float64), np.asarray(r_F, dtype=np.float64).ravel()


def _dense_kernel_block(XF, *, kernel, gamma, degree, coef0):
    """``K(X_F, X_F)`` of dense rows from their Gram matrix, without scikit-learn's input
    checks (which cost milliseconds on a block of 50 rows): RBF ``exp(−γ(‖x‖² + ‖x'‖² −
    2x·x'))`` (distances clipped at 0), poly ``(γ x·x' + c₀)^p``, sigmoid ``tanh(γ x·x' + c₀)``."""
    XF = np.ascontiguousarray(XF, dtype=np.float64)
    G = XF @ XF.T
    if kernel == "rbf":
        sq = np.diag(G).copy()
        D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * G, 0.0)
        np.fill_diagonal(D, 0.0)
        return np.exp(-gamma * D)
    if kernel == "poly":
        return (gamma * G + coef0) ** degree
    if kernel == "sigmoid":
        return np.tanh(gamma * G + coef0)
    return None


def zero_label_sum(problem, alpha, upper):
    """For a free bias, ``yᵀα = 0`` made exact in floating point, the bounded multipliers kept
    exact (as the barrier's ``feasible_multipliers`` does): the free multipliers rounded down to
    multiples of ``q = 2^⌈log₂ Σα⌉ / 2⁵²`` (every partial sum of ``±α_i`` is then exact in any
    order, when the bounds ``C_i`` in use are multiples of q too), the exact imbalance taken off
    the largest free multiplier of the class in excess. Otherwise the rounding residue goes onto
    the free multiplier farthest inside its box (the problem's projection removes the rest)."""
    if problem.bias != "free":
        return alpha
    y = problem.y
    inside = (alpha > 0.0) & (alpha < upper)
    if inside.any():
        grid = exact_label_sum(alpha, y, inside)
        if grid is not None and np.array_equal(grid[~inside], alpha[~inside]):
            return grid  # the bounds are on the grid: they stay exact
    return absorb_label_sum(alpha, y, upper)


def variables_of(problem, alpha, b):
    """The certificate's arguments of a finished α: ``(α, b)`` for the kernel dual, ``(w, b, α)``
    for the linear views (b from the KKT solve for a free bias, else the problem's rule)."""
    y = problem.y
    if problem.bias == "regularized":
        b = problem.bias_scale**2 * float(alpha @ y)
    elif problem.bias == "none":
        b = 0.0
    if isinstance(problem, KernelDual):
        return {"alpha": alpha, "b": b}
    X = problem.X
    w = np.asarray(X.T @ (alpha * y)).ravel()
    return {"w": w, "b": b, "alpha": alpha}


#: Public names of the helpers above, for the barrier's early finish
#: (solvers/barrier/early_finish.py), which solves its own candidates.
