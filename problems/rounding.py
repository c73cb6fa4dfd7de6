"""What float64 can show of a certified gap: the rounding allowance of a certificate.

A certificate evaluates ``P`` and ``D`` in float64. Where ``C`` multiplies the margins
(``C_i max(0, 1 − m_i)``), a margin's rounding error δ_i moves the gap by up to ``C_i |δ_i|``:
at ``C = 1e10`` the margins of free support vectors, ``1 ± 1e-15`` by rounding alone, weigh
1e-5 each, and two arithmetic paths to the same ``(α, b)`` give gaps that differ by that much.
The allowance bounds ``|computed gap − exact gap|`` so that ``optimal`` claims only what the
arithmetic shows (docs/ARCHITECTURE.md §4, "Rounding floor").

The bounds are Higham's deterministic ones (N. J. Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., SIAM 2002, §3.1): a sum or dot product of k terms in any order, with or
without fused multiply-adds, is off by at most ``γ_k Σ|x_j y_j|``, ``γ_k = k u/(1 − k u)``,
``u = 2⁻⁵³``.

**Sensitivity.** With ``c = α∘y``, ``g = Kc`` and ``m_i = y_i(g_i + b)``, the kernel dual's gap is
``Σ_i [c_i g_i + C_i loss(m_i)] − Σα_i (+ the squared hinge's and the bias's terms)``; as a
function of ``m_i`` each term is piecewise linear (hinge) with slopes ``α_i`` above the margin
and ``α_i − C_i`` below it. A margin off by at most ``e_i`` therefore moves the gap by at most
``s_i e_i``, ``s_i`` the largest |slope| on ``[m_i − e_i, m_i + e_i]``: ``α_i`` for a point
clearly above the margin (0 off the support), ``C_i − α_i`` clearly below it (0 at the bound),
``max(α_i, C_i − α_i)`` within ``e_i`` of it. A primal value evaluated alone (the linear views)
has slopes 0 above the margin and ``C_i`` below it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from scipy import sparse

from svmbench.problems.rounding_entries import (
    ACCURATE_MAX_ENTRIES,
    ELEMENTARY_ULPS,
    LONG_UNIT_ROUNDOFF,
    UNIT_ROUNDOFF,
    accurate_entries,
    accurate_linear_sums,
    accurate_rbf_sums,
    first_blocks,
    gamma,
    long_gamma,
)

#: The margins that weigh are recomputed accurately (an RBF kernel of dense rows) only where the
#: first bound exceeds this fraction of ``max(1, |P|)``: below it the allowance changes no
#: verdict at a tol ≥ 1e-7 by more than 1 % (at 1e-8, 10 %).
ROUNDING_ACCURATE_RTOL = 1e-9
#: The allowance of a point whose relative gap is above this is not refined (a tol of 1e-4 or
#: looser at a C large enough for the first bound to matter then needs a smaller gap).
REFINE_GAP_RTOL = 1e-4
#: A hinge's bound from maxima alone (:func:`largest_row_error`, ``s_i ≤ C_i``) is kept where it
#: is below this fraction of ``max(1, |P|)`` or a tenth of the gap: then a tol ≥ 1e-10 sees no
#: verdict it changes by more than 10 %; above it, the per-row bound is computed.
ROUNDING_SCREEN_RTOL = 1e-11


def dual_slopes(m: np.ndarray, e: np.ndarray, alpha: np.ndarray, upper, loss: str) -> np.ndarray:
    """``s_i``: the largest |slope| of ``α_i m + C_i loss(m)`` on ``[m_i − e_i, m_i + e_i]``.

    Hinge: ``α_i`` where ``m_i − e_i ≥ 1``, ``C_i − α_i`` where ``m_i + e_i ≤ 1``, the larger of
    the two in between. Squared hinge: the slope ``α_i − 2C_i max(0, 1 − m)`` is monotone in m,
    so its endpoints bound it."""
    if loss == "squared_hinge":
        low = alpha - 2.0 * upper * np.maximum(0.0, 1.0 - (m - e))
        high = alpha - 2.0 * upper * np.maximum(0.0, 1.0 - (m + e))
        return np.maximum(np.abs(low), np.abs(high))
    below = upper - alpha
    return np.where(m - e >= 1.0, alpha, np.where(m + e <= 1.0, below, np.maximum(alpha, below)))


def primal_slopes(m: np.ndarray, e: np.ndarray, upper, loss: str) -> np.ndarray:
    """The largest |slope| of ``C_i loss(m)`` on ``[m_i − e_i, m_i + e_i]``: ``C_i`` where
    ``m_i − e_i < 1`` (0 above) for the hinge, ``2C_i max(0, 1 − m_i + e_i)`` squared."""
    if loss == "squared_hinge":
        return 2.0 * upper * np.maximum(0.0, 1.0 - m + e)
    return np.where(m - e < 1.0, upper, 0.0)


def kernel_row_errors(
    kernel,
    alpha: np.ndarray,
    *,
    support: int,
    n_features: int,
    squared_norms: np.ndarray | None,
    diagonal: np.ndarray | None,
) -> np.ndarray:
    """``e_i ≥ |fl(Σ_j K_ij c_j) − Σ_j K_ij c_j|`` for any ``|c_j| ≤ α_j`` (k = ``support``
    non-zero terms), whatever the order of the sum and whichever of the kernel's formulas
    computed the entries (``kernel`` a :class:`~problems.kernels.Kernel`; the kernel entries'
    own errors included, as for the expanded ``‖x‖² + ‖z‖² − 2x·z`` of the RBF kernel):

    - linear: ``γ_{d+k+1} ‖x_i‖ Σ_j α_j ‖x_j‖`` (entries then sum, or ``w = Σ c_j x_j`` then
      ``x_i·w``: either way ``|x_i|·|x_j|`` terms);
    - RBF: ``(γ_k + 5u + 2γ γ_{d+3} (‖x_i‖² + max_j ‖x_j‖²)) Σα`` (``K_ij ≤ 1``; the expanded
      ``|δ(‖x−z‖²)| ≤ γ_{d+3}(‖x‖ + ‖z‖)²``, an error t in the exponent a relative one of about
      t in K);
    - polynomial ``(γ x·z + c₀)^p``: with ``T_i = γ‖x_i‖² + |c₀|``, ``|γ x_i·x_j + c₀| ≤
      √(T_i T_j)``, so ``(γ_k + (p+1) γ_{d+4}) T_i^{p/2} Σ_j α_j T_j^{p/2}``;
    - sigmoid (``tanh`` 1-Lipschitz, ``|K| ≤ 1``): ``(γ_k + 4u) Σα + γ_{d+2}(γ‖x_i‖ Σ_j α_j‖x_j‖
      + |c₀| Σα)``;
    - precomputed (exact entries; ``|K_ij| ≤ √(K_ii K_jj)`` for a PSD matrix, the only one
      certified): ``γ_k √K_ii Σ_j α_j √K_jj``.
    """
    k, d = max(int(support), 1), int(n_features)
    total = float(alpha.sum())
    name = kernel.name
    if name == "precomputed":
        root = np.sqrt(np.maximum(diagonal, 0.0))
        return gamma(k) * root * float(alpha @ root)
    norms = np.sqrt(squared_norms)
    if name == "linear":
        return gamma(d + k + 1) * norms * float(alpha @ norms)
    if name == "poly":
        p = int(kernel.degree)
        tp = (kernel.gamma * squared_norms + abs(kernel.coef0)) ** (0.5 * p)
        return (gamma(k) + (p + 1) * gamma(d + 4)) * tp * float(alpha @ tp)
    if name == "sigmoid":
        spread = kernel.gamma * norms * float(alpha @ norms) + abs(kernel.coef0) * total
        return (gamma(k) + ELEMENTARY_ULPS * UNIT_ROUNDOFF) * total + gamma(d + 2) * spread
    # rbf
    widest = float(squared_norms[alpha > 0].max()) if total > 0 else 0.0
    relative = (
        gamma(k)
        + (ELEMENTARY_ULPS + 1.0) * UNIT_ROUNDOFF
        + 2.0 * kernel.gamma * gamma(d + 3) * (squared_norms + widest)
    )
    return relative * total


#: The float64 kernel block of the rows that weigh runs up to this many differences.
BLOCK_MAX_ENTRIES = 2**24


def _refine_above(P: float, D: float) -> float:
    """The allowance worth refining: above ``ROUNDING_ACCURATE_RTOL · max(1, |P|)`` and above
    a tenth of the gap. Below the latter the allowance changes a verdict only for a tol within
    10 % of the gap, where the first bound, still a bound, is kept; inside
    :func:`refinement_tol`, also above half the room ``tol·max(1, |P|) − gap``. None at a
    point whose relative gap exceeds :data:`REFINE_GAP_RTOL` (a probe's, an active-set
    method's way there): no tol below it is met there whatever the allowance, and such a
    point is never taken for one at the rounding floor
    (:meth:`~problems.base.Certificate.under_rounding_floor`)."""
    scale = max(1.0, abs(P))
    if P - D > REFINE_GAP_RTOL * scale:
        return np.inf
    above = max(ROUNDING_ACCURATE_RTOL * scale, 0.1 * (P - D))
    tol = _REFINE_TOL.get()
    if tol is not None:  # a bound within half the room tol leaves: the verdict at tol is met
        above = max(above, 0.5 * (tol * scale - (P - D)))
    return above


#: The tol of the solve that draws the certificates (:func:`refinement_tol`), or None.
_REFINE_TOL: ContextVar[float | None] = ContextVar("svmbench_refine_tol", default=None)


@contextmanager
def refinement_tol(tol: float | None) -> Iterator[None]:
    """Certificates drawn inside keep a first allowance that already meets ``tol`` (with at
    least half the room ``tol·max(1, |P|) − gap`` to spare) instead of refining it: the
    verdict ``meets(tol)`` is the refined one's (both bound the exact gap; where the first
    does not meet ``tol`` the allowance is refined as without a tol). A solve sets it to its
    own ``tol`` (``Solver.solve``); the long-double margins then run only where ``tol``
    needs them."""
    ok = tol is not None and math.isfinite(tol) and tol > 0.0
    token = _REFINE_TOL.set(float(tol) if ok else None)
    try:
        yield
    finally:
        _REFINE_TOL.reset(token)


def largest_row_error(kernel, total: float, k: int, d: int, widest: float) -> float:
    """:func:`kernel_row_errors`' bound at its largest, from scalars: every ``‖x_j‖²`` (or
    ``K_jj`` of a precomputed kernel) at most ``widest``, ``Σα = total``, ``k`` terms."""
    name = kernel.name
    if name == "precomputed":
        return gamma(k) * widest * total
    if name == "linear":
        return gamma(d + k + 1) * widest * total
    if name == "poly":
        p = int(kernel.degree)
        tp = (kernel.gamma * widest + abs(kernel.coef0)) ** p
        return (gamma(k) + (p + 1) * gamma(d + 4)) * tp * total
    if name == "sigmoid":
        spread = kernel.gamma * widest * total + abs(kernel.coef0) * total
        return (gamma(k) + ELEMENTARY_ULPS * UNIT_ROUNDOFF) * total + gamma(d + 2) * spread
    relative = (
        gamma(k)
        + (ELEMENTARY_ULPS + 1.0) * UNIT_ROUNDOFF
        + 4.0 * kernel.gamma * gamma(d + 3) * widest
    )
    return relative * total


def _kernel_dual_screen(problem, kernel, rows_kernel, a_total, g, b, sum_ay, maxima) -> float:
    """A bound of the hinge's ``Σ_i s_i e_i`` and of ``γ_{n+4} Σα_i|g_i|`` from maxima alone:
    ``e_i ≤`` :func:`largest_row_error` (``k ≤ n`` terms), ``s_i ≤ C_i`` (α in its box),
    ``Σα_i|g_i| ≤ Σα max|g|``: a few scalar operations, so that the per-row bound is computed
    only where this one is not already small. ``maxima``: ``(max ‖x_i‖², max |g_i|)`` when the
    caller computed them (rows of a kernel), else None."""
    n, total = problem.n_samples, a_total
    # x.max(initial=0.0) as one ufunc reduction each (the same values)
    if maxima is not None:
        widest, g_max = maxima
    else:
        if rows_kernel:
            widest = float(np.maximum.reduce(problem.squared_norms, initial=0.0))
        else:
            widest = float(np.maximum.reduce(np.abs(problem.kernel_diagonal), initial=0.0))
        g_max = float(np.maximum.reduce(np.abs(g), initial=0.0))
    e_max = largest_row_error(kernel, total, n, problem.n_features, widest)
    e_max += UNIT_ROUNDOFF * (g_max + abs(b))
    out = gamma(n + 4) * total * g_max
    if problem.bias == "regularized":  # b = s² Σc, and (s Σc)² in the gap twice
        e_max += problem.bias_scale**2 * gamma(n + 1) * total
        out += 2.0 * problem.bias_scale**2 * abs(sum_ay) * gamma(n + 1) * total
    weights = problem.sample_weight
    C_sum = problem.C * n if weights is None else float(np.sum(problem.upper_bounds))
    return out + e_max * C_sum


def kernel_dual_rounding(problem, a, g, m, b, sum_ay, quad, loss, squared, sums=None):
    """``(P, D, rounding)`` of a kernel dual's certificate (``KernelDual.certificate``'s
    ``α``, ``g = K(αy)``, margins, bias, ``Σα_i y_i``, ``½αᵀQ̃α``, loss and squared-hinge term;
    ``sums``, when the caller has them: ``(Σα_i, max ‖x_i‖², max |g_i|)``, the values NumPy's
    reductions give, for a kernel of rows).

    ``rounding = Σ_i s_i e_i + γ_{n+4}(Σα_i|g_i| + ½αᵀQ̃α + loss + Σα + |P| + |D|)`` (+ a
    regularized bias's ``(sΣc)²``), ``e_i`` the margins' error (:func:`kernel_row_errors`, plus
    ``u|g_i + b|`` and a regularized ``b = s²Σc``'s sum), ``s_i`` the gap's slopes
    (:func:`dual_slopes`): only the support and the points near the margin weigh. Where that
    exceeds ``ROUNDING_ACCURATE_RTOL · max(1, |P|)`` on an RBF kernel of dense rows, the rows
    that weigh take ``Σ_j K_ij α_j`` (one float64 kernel block) in place of ``Σα``, and if the
    bound still exceeds it, their margins are recomputed by :func:`accurate_rbf_sums` (at most
    :data:`ACCURATE_MAX_ENTRIES` differences), P and D corrected by their difference (in long
    double), and their ``e_i`` taken from there; the slopes are those of the refined intervals
    (each still holds the exact margin), the long double's never below the block's."""
    n = problem.n_samples
    total = float(np.add.reduce(a)) if sums is None else sums[0]  # a.sum(), no wrapper
    P = quad + loss
    D = total - quad - squared
    if not (math.isfinite(P) and math.isfinite(D)):
        return P, D, np.inf
    kernel = problem.kernel_spec
    rows_kernel = problem.kernel != "precomputed"
    if problem.loss == "hinge":
        maxima = None if sums is None or not rows_kernel else sums[1:]
        screen = _kernel_dual_screen(problem, kernel, rows_kernel, total, g, b, sum_ay, maxima)
        screen += gamma(n + 4) * (abs(quad) + loss + squared + total + abs(P) + abs(D))
        if screen <= max(ROUNDING_SCREEN_RTOL * max(1.0, abs(P)), 0.1 * (P - D)):
            return P, D, screen
    support = int(np.count_nonzero(a))
    e = kernel_row_errors(
        kernel,
        a,
        support=support,
        n_features=problem.n_features,
        squared_norms=problem.squared_norms if rows_kernel else None,
        diagonal=None if rows_kernel else problem.kernel_diagonal,
    )
    # m_i = y_i fl(g_i + b); a regularized b = s² Σ c_i is itself a sum of k terms
    shift = (
        problem.bias_scale**2 * gamma(support + 1) * total if problem.bias == "regularized" else 0.0
    )
    e += UNIT_ROUNDOFF * (np.abs(g) + abs(b)) + shift
    upper = problem.upper_bounds
    slopes = dual_slopes(m, e, a, upper, problem.loss)

    def accumulated(P, D) -> float:
        out = gamma(n + 4) * (
            float(a @ np.abs(g)) + abs(quad) + loss + squared + total + abs(P) + abs(D)
        )
        if problem.bias == "regularized":  # (s Σc)², in the gap twice
            out += 2.0 * problem.bias_scale**2 * abs(sum_ay) * gamma(support + 1) * total
        return out

    bound = float(slopes @ e) + accumulated(P, D)
    weigh = np.flatnonzero(slopes)
    linear = problem.kernel == "linear"  # v = Σ c_j x_j once, then x_i·v: (k + rows) d numbers
    size = (weigh.size + support if linear else weigh.size * support) * problem.n_features
    # the float64 block up to BLOCK_MAX_ENTRIES (every row free, K nearly I: it suffices)
    cap = ACCURATE_MAX_ENTRIES if linear else BLOCK_MAX_ENTRIES
    if (
        bound <= _refine_above(P, D)
        or problem.kernel not in ("rbf", "linear")
        or sparse.issparse(problem.X)
        or not 0 < size <= cap
    ):
        return P, D, bound
    nz = np.flatnonzero(a)
    y = problem.y
    if linear:
        g_long, e_long = accurate_linear_sums(
            problem.X, weigh, nz, a[nz] * y[nz], a[nz], problem.squared_norms
        )
    else:
        entries = accurate_entries(problem)
        # first, Σ_j K_ij α_j of the rows that weigh (float64, one kernel block) in place of Σα,
        # unless the long-double entries are kept already (then they cost less than this block)
        sqn = problem.squared_norms
        worst = 1.0
        if entries is None or not entries.covers(weigh, nz):
            shared = getattr(problem, "shared_rows", None)  # a pair's: the table's entries
            if shared is not None:
                k_alpha = shared[0].times(shared[1][weigh], shared[1][nz], a[nz], shared[2])
            elif "gram" in problem.__dict__:  # the problem keeps its kernel matrix
                k_alpha = problem.gram.take(weigh, axis=0).take(nz, axis=1) @ a[nz]
            else:
                k_alpha = kernel.dot(
                    problem.X[weigh], problem.X[nz], a[nz], sqn_X=sqn[weigh], sqn_Z=sqn[nz]
                )
            widest = float(sqn[nz].max())
            relative = (
                gamma(support)
                + (ELEMENTARY_ULPS + 1.0) * UNIT_ROUNDOFF
                + 2.0 * kernel.gamma * gamma(problem.n_features + 3) * (sqn[weigh] + widest)
            )
            worst = float(relative.max())
        if worst < 0.5:  # the product bounds Σ_j K_ij α_j to within its own relative error
            e[weigh] = relative * np.abs(k_alpha) / (1.0 - worst) + (e[weigh] - relative * total)
            # the slopes on the narrower intervals: a margin lifted off 1 by more than its
            # refined error weighs α_i, not C_i (K nearly the identity: Σα against K_ii α_i)
            slopes[weigh] = dual_slopes(m[weigh], e[weigh], a[weigh], upper[weigh], problem.loss)
            bound = min(bound, float(slopes[weigh] @ e[weigh]) + accumulated(P, D))
            if bound <= _refine_above(P, D):
                return P, D, bound
        if size > ACCURATE_MAX_ENTRIES:
            return P, D, bound
        keep = first_blocks(problem) if entries is None else None
        g_long, e_long = accurate_rbf_sums(
            problem.X, weigh, nz, a[nz] * y[nz], a[nz], kernel.gamma, entries, keep
        )
    m_long = (g_long + np.longdouble(b)) * y[weigh]
    xi_long = np.maximum(np.longdouble(0.0), 1 - m_long)
    xi_fast = np.maximum(0.0, 1.0 - m[weigh])
    if problem.loss == "squared_hinge":
        xi_long, xi_fast = xi_long * xi_long, xi_fast * xi_fast
    c_w = (a * y)[weigh]
    change = np.sum(np.asarray(upper[weigh], dtype=np.longdouble) * (xi_long - xi_fast))
    quad_change = np.sum(c_w * (g_long - g[weigh])) / 2
    P_new = float(np.longdouble(P) + quad_change + change)
    D_new = float(np.longdouble(D) - quad_change)
    m_new = np.asarray(m_long, dtype=np.float64)
    e_new = e_long + LONG_UNIT_ROUNDOFF * np.asarray(np.abs(g_long), dtype=np.float64) + shift
    # the slopes' intervals around m rounded to float64 must hold the exact margin
    around = e_new + UNIT_ROUNDOFF * np.abs(m_new)
    slopes_new = np.maximum(
        slopes[weigh], dual_slopes(m_new, around, a[weigh], upper[weigh], problem.loss)
    )
    # the corrections' own rounding to float64
    fixed = UNIT_ROUNDOFF * (abs(float(change)) + 2.0 * abs(float(quad_change)))
    tighter = float(slopes_new @ e_new) + accumulated(P_new, D_new) + fixed
    return P_new, D_new, tighter


def linear_rounding(problem, w, b, m, loss, P, D, *, alpha=None, v_norm=0.0, squared=0.0):
    """``(P, D, rounding)`` of a linear soft margin's certificate, whose primal point ``(w, b)``
    and dual point α are evaluated apart.

    Primal: the margins ``y_i(x_i·w + b)`` are off by at most ``e_i = γ_{d+2}(‖x_i‖‖w‖ + |b|)``,
    weighted by the loss's slopes (:func:`primal_slopes`: ``C_i`` within ``e_i`` of the margin or
    below it, 0 above), plus ``γ_{d+2}`` of the regularizer and ``γ_{n+3}`` of the loss. Dual
    (given α, ``v_norm`` = ``‖Σ α_i y_i x̃_i‖`` as computed): ``v`` is off by at most
    ``δ = γ_{n+1} Σ α_i ‖x̃_i‖`` in norm, so ``½‖v‖²`` by ``‖v‖δ + ½δ² + γ_{d+2} ½‖v‖²``;
    ``Σα`` by ``γ_n Σα``; the squared hinge's term by ``γ_{n+3}`` of it. Last, ``γ_4(|P| + |D|)``
    for the sums that assemble them. Where the margins' part or v's part exceeds
    ``ROUNDING_ACCURATE_RTOL · max(1, |P|)`` on dense rows (at most
    :data:`ACCURATE_MAX_ENTRIES` entries), that part is recomputed in ``np.longdouble`` (the
    margins that weigh, or v) and P or D corrected, with the same bounds in ``u_L``."""
    n, d = problem.n_samples, problem.n_features
    norms = problem.row_norms
    widest = float(norms.max(initial=0.0))
    w_norm = float(np.sqrt(w @ w))
    regularized = problem.bias == "regularized"
    regularizer = 0.5 * w_norm**2 + (0.5 * (b / problem.bias_scale) ** 2 if regularized else 0.0)
    threshold = _refine_above(P, D)
    dense = not sparse.issparse(problem.X)
    # first from maxima alone (e_i ≤ e_max; the hinge's slopes ≤ C_i): a few scalar operations
    weights = problem.sample_weight
    C_sum = problem.C * n if weights is None else float(np.sum(problem.upper_bounds))
    e_max = gamma(d + 2) * (widest * w_norm + abs(b))
    if problem.loss == "hinge":
        margins = e_max * C_sum
    else:  # s_i ≤ 2C_i(ξ_i + e_max), and Σ C_i ξ_i ≤ √(Σ C_i · Σ C_i ξ_i²) (Cauchy–Schwarz)
        margins = 2.0 * e_max * (float(np.sqrt(C_sum * loss)) + e_max * C_sum)
    weigh = None
    if margins > max(ROUNDING_SCREEN_RTOL * max(1.0, abs(P)), 0.1 * (P - D)):
        margins = np.inf
    if margins > threshold:
        e = gamma(d + 2) * (norms * w_norm + abs(b))
        upper = problem.upper_bounds
        slopes = primal_slopes(m, e, upper, problem.loss)
        margins = float(slopes @ e)
        weigh = np.flatnonzero(slopes)
    if (
        weigh is not None
        and margins > threshold
        and dense
        and 0 < weigh.size * d <= ACCURATE_MAX_ENTRIES
    ):
        XL = np.asarray(problem.X[weigh], dtype=np.longdouble)
        m_long = (XL @ np.asarray(w, dtype=np.longdouble) + np.longdouble(b)) * problem.y[weigh]
        xi_long = np.maximum(np.longdouble(0.0), 1 - m_long)
        xi_fast = np.maximum(0.0, 1.0 - m[weigh])
        if problem.loss == "squared_hinge":
            xi_long, xi_fast = xi_long * xi_long, xi_fast * xi_fast
        change = np.sum(np.asarray(upper[weigh], dtype=np.longdouble) * (xi_long - xi_fast))
        P = float(np.longdouble(P) + change)
        m_new = np.asarray(m_long, dtype=np.float64)
        e_new = long_gamma(d + 2) * (norms[weigh] * w_norm + abs(b)) * (1.0 + gamma(4))
        around = e_new + UNIT_ROUNDOFF * np.abs(m_new)
        slopes_new = primal_slopes(m_new, around, upper[weigh], problem.loss)
        margins = min(margins, float(slopes_new @ e_new) + UNIT_ROUNDOFF * abs(float(change)))
    out = margins + gamma(d + 2) * regularizer + gamma(n + 3) * loss
    if alpha is not None:
        total = float(alpha.sum())
        shift = problem.bias_scale**2 if regularized else 0.0
        mass = total * float(np.sqrt(widest**2 + shift))  # Σα_i‖x̃_i‖ at its largest first

        def part_of(mass: float) -> float:
            spread = gamma(n + 1) * mass
            return v_norm * spread + 0.5 * spread**2 + gamma(d + 2) * 0.5 * v_norm**2

        part = part_of(mass)
        if part > threshold:
            tilde = np.sqrt(norms**2 + shift) if regularized else norms
            mass = float(alpha @ tilde)
            part = part_of(mass)
        if part > threshold and dense and n * d <= ACCURATE_MAX_ENTRIES:
            c = np.asarray(alpha * problem.y, dtype=np.longdouble)
            v_long = np.asarray(problem.X, dtype=np.longdouble).T @ c
            v_sq = v_long @ v_long
            if regularized:
                v_sq += (np.longdouble(problem.bias_scale) * np.sum(c)) ** 2
            D = float(np.longdouble(D) + (np.longdouble(v_norm) ** 2 - v_sq) / 2)
            v_norm = float(np.sqrt(v_sq))
            spread = long_gamma(n + 2) * mass * (1.0 + gamma(n + 2))
            part = v_norm * spread + 0.5 * spread**2 + long_gamma(d + 2) * 0.5 * v_norm**2
            part += UNIT_ROUNDOFF * (abs(D) + v_norm**2)
        out += gamma(n) * total + part + gamma(n + 3) * squared
    return P, D, out + gamma(4) * (abs(P) + abs(D))


#: Public name of the helper above, for the other problems' allowances (rounding_scores.py).
refine_above = _refine_above
