"""The rounding allowance of the other certificates: ε-SVR (kernel and linear), the ν family,
one-class, Crammer–Singer, the logistic losses and the hard margin (problems/rounding.py has the
kernel dual's and the linear soft margin's, and the error bounds both use: Higham 2002, §3.1).

**Kernel problems** (:func:`kernel_score_rounding`). With the model's coefficients c and its
scores ``g = Kc``, each of these gaps is ``Σ_i [c_i g_i + Σ_h w_hi max(0, σ_h(g_i − k_hi))]``
plus terms free of g: ε-SVR two hinges at ``y_i − b ∓ ε``, ν-SVC one at its class's offset
(``ρ ∓ b``), ν-SVR two at the tube's edges, one-class one at ρ; the offsets are the primal
point's own numbers. A score off by e_i moves the gap by at most ``s_i e_i``, ``s_i`` the largest
|slope| on ``[g_i − e_i, g_i + e_i]`` (:func:`hinge_slopes`): only the support and the points
near a kink weigh. The bound is first taken from maxima (a few scalar operations); then per row
(:func:`~problems.rounding.kernel_row_errors`); then, on an RBF or linear kernel of dense rows
above ``ROUNDING_ACCURATE_RTOL``, the scores that weigh are recomputed in long double
(:func:`~problems.rounding_entries.accurate_rbf_sums`,
:func:`~problems.rounding_entries.accurate_linear_sums`) and P and D corrected, as the kernel
dual's.

**Linear problems.** The scores ``x̃_i·w̃`` are off by at most ``γ_{d+2}‖x̃_i‖‖w̃‖`` (and the
loss's argument by ``γ_3`` of what forms it), weighted by the loss's slope (``C_i`` at most; the
logistic's ``C_i σ(−m)``); the dual's ``ṽ = Σ c_i x̃_i`` is off by ``δ = γ_{n+1} Σ|c_i|‖x̃_i‖`` in
norm, so ``½‖ṽ‖²`` by ``‖ṽ‖δ + ½δ² + γ_{d+2}½‖ṽ‖²`` (:func:`vector_part`). The hard margin's
computed margins may hide an exact one below 1 by ``e``: the point scaled by ``1/(1 − e)`` is
feasible, so the allowance counts ``P((1 − e)⁻² − 1)``. These are not refined in long double.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from svmbench.problems.rounding import (
    ROUNDING_SCREEN_RTOL,
    kernel_row_errors,
    largest_row_error,
    refine_above,
)
from svmbench.problems.rounding_entries import (
    ACCURATE_MAX_ENTRIES,
    ELEMENTARY_ULPS,
    UNIT_ROUNDOFF,
    accurate_linear_sums,
    accurate_rbf_sums,
    gamma,
    long_gamma,
)

__all__ = [
    "hard_margin_rounding",
    "hinge_slopes",
    "kernel_score_rounding",
    "logistic_rounding",
    "multiclass_rounding",
    "multinomial_rounding",
    "settled_by_screen",
    "svr_linear_rounding",
    "vector_part",
]


def settled_by_screen(bound: float, P: float, D: float) -> bool:
    """Whether a bound from maxima is the allowance: below ``ROUNDING_SCREEN_RTOL·max(1, |P|)``
    or a tenth of the gap (``problems.rounding.ROUNDING_SCREEN_RTOL``)."""
    return bound <= max(ROUNDING_SCREEN_RTOL * max(1.0, abs(P)), 0.1 * (P - D))


def hinge_slopes(g, e, coef, hinges) -> np.ndarray:
    """The largest ``|c_i + Σ_h w_hi σ_h 1[σ_h(t − k_hi) > 0]|`` over ``t`` in
    ``[g_i − e_i, g_i + e_i]``: each hinge adds ``w σ`` where its active side is within reach,
    0 where its idle side is, and the extremes of those sums bound the slope (interval
    arithmetic)."""
    low = np.array(coef, dtype=np.float64)
    high = low.copy()
    for w, sigma, k in hinges:
        arg = sigma * (g - k)
        active, idle = arg + e > 0.0, arg - e <= 0.0
        step = w * sigma
        low += np.where(active, np.where(idle, np.minimum(step, 0.0), step), 0.0)
        high += np.where(active, np.where(idle, np.maximum(step, 0.0), step), 0.0)
    return np.maximum(np.abs(low), np.abs(high))


def _rows_of(value, rows):
    return value[rows] if np.ndim(value) else value


def kernel_score_rounding(problem, coef, g, P, D, *, loss, magnitude, shift=0.0, bias_sum=None):
    """``(P, D, rounding)`` of a kernel certificate of the module's shape.

    ``coef`` the coefficients, ``g = K coef`` as computed; ``loss = (weight, reach, detail)``:
    ``weight ≥ Σ_i`` (the largest |slope| of row i's hinges), ``reach`` the largest of the other
    numbers a loss argument is formed from (``|y_i| + |b| + ε``), off by ``γ_3`` of them and of
    ``|g_i|``; ``detail()``, called only past the screen, gives ``(hinges, reach_i,
    row_terms)``: the hinges ``(w, σ, k)`` (arrays of n or scalars), the reach per row (or a
    scalar), and ``row_terms(t, rows)`` the loss's terms of ``rows`` at the scores t, in t's
    dtype, as the certificate summed them. ``magnitude`` the other |terms| P and D summed
    (``γ_{n+4}`` of them and of ``Σ|c_i g_i|, |P|, |D|``); ``shift`` a computed regularized
    bias's error; ``bias_sum = (s², Σc)``: its ``s²(Σc)²`` in the gap."""
    n, d = problem.n_samples, problem.n_features
    if not (np.isfinite(P) and np.isfinite(D)):
        return P, D, np.inf
    kernel = problem.kernel_spec
    rows_kernel = problem.kernel != "precomputed"
    weights = np.abs(coef)
    total = float(weights.sum())
    g_abs = np.abs(g)
    g_max = float(g_abs.max(initial=0.0))
    diagonal = None if rows_kernel else np.abs(kernel.diagonal(problem.X))
    size_sq = problem.squared_norms if rows_kernel else diagonal
    extra = 0.0
    if bias_sum is not None:  # s²(Σc)², in the gap twice
        extra = 2.0 * bias_sum[0] * abs(bias_sum[1]) * gamma(n + 1) * total
    weight, reach_max, detail = loss
    e_max = largest_row_error(kernel, total, n, d, float(size_sq.max(initial=0.0)))
    e_max += gamma(3) * (g_max + reach_max) + shift
    screen = e_max * (total + weight) + gamma(n + 4) * (total * g_max + magnitude + abs(P) + abs(D))
    if settled_by_screen(screen + extra, P, D):
        return P, D, screen + extra
    hinges, reach, row_terms = detail()
    support = int(np.count_nonzero(coef))
    e = kernel_row_errors(
        kernel,
        weights,
        support=support,
        n_features=d,
        squared_norms=size_sq if rows_kernel else None,
        diagonal=diagonal,
    )
    e += gamma(3) * (g_abs + reach) + shift
    slopes = hinge_slopes(g, e, coef, hinges)

    def accumulated(P, D) -> float:
        return gamma(n + 4) * (float(weights @ g_abs) + magnitude + abs(P) + abs(D)) + extra

    bound = float(slopes @ e) + accumulated(P, D)
    weigh = np.flatnonzero(slopes)
    linear = problem.kernel == "linear"  # v = Σ c_j x_j once, then x_i·v
    size = (weigh.size + support if linear else weigh.size * support) * d
    if (
        bound <= refine_above(P, D)
        or problem.kernel not in ("rbf", "linear")
        or sparse.issparse(problem.X)
        or not 0 < size <= ACCURATE_MAX_ENTRIES
    ):
        return P, D, bound
    nz = np.flatnonzero(coef)
    if linear:
        g_long, e_long = accurate_linear_sums(problem.X, weigh, nz, coef[nz], weights[nz], size_sq)
    else:
        g_long, e_long = accurate_rbf_sums(
            problem.X, weigh, nz, coef[nz], weights[nz], kernel.gamma
        )
    change = np.sum(row_terms(g_long, weigh) - row_terms(g[weigh], weigh))
    quad_change = np.sum(coef[weigh] * (g_long - g[weigh])) / 2
    P_new = float(np.longdouble(P) + quad_change + change)
    D_new = float(np.longdouble(D) - quad_change)
    g_new = np.asarray(g_long, dtype=np.float64)
    reach_w = _rows_of(reach, weigh)
    e_new = e_long + long_gamma(3) * (np.abs(g_new) + reach_w) + shift
    # the slopes' intervals: around g rounded to float64, the kinks' own float64 rounding
    around = e_new + gamma(3) * (np.abs(g_new) + reach_w)
    kinks = [(_rows_of(w, weigh), s, _rows_of(k, weigh)) for w, s, k in hinges]
    slopes_new = np.maximum(slopes[weigh], hinge_slopes(g_new, around, coef[weigh], kinks))
    fixed = UNIT_ROUNDOFF * (abs(float(change)) + 2.0 * abs(float(quad_change)))
    tighter = float(slopes_new @ e_new) + accumulated(P_new, D_new) + fixed
    return P_new, D_new, tighter


def vector_part(v_sq: float, mass: float, n: int, d: int) -> float:
    """What rounding moves ``½‖ṽ‖²`` by, ``ṽ = Σ_i c_i x̃_i`` (n terms, d + 1 coordinates),
    ``mass ≥ Σ|c_i|‖x̃_i‖``, ``v_sq ≥ ‖ṽ‖²``: ``‖ṽ‖δ + ½δ² + γ_{d+2}½‖ṽ‖²``."""
    spread = gamma(n + 1) * mass
    return float(np.sqrt(max(v_sq, 0.0))) * spread + 0.5 * spread**2 + gamma(d + 2) * 0.5 * v_sq


def _tilde_norms(problem):
    norms = problem.row_norms
    if problem.bias == "regularized":
        return np.sqrt(norms**2 + problem.bias_scale**2)
    return norms


def _widest(problem) -> tuple[float, float]:
    """``max‖x_i‖`` and ``max‖x̃_i‖``."""
    widest = float(problem.row_norms.max(initial=0.0))
    shift = problem.bias_scale**2 if problem.bias == "regularized" else 0.0
    return widest, float(np.sqrt(widest**2 + shift))


def _dual_exact(problem, coef_abs, v_sq: float, columns: int = 1) -> float:
    """:func:`vector_part` from ``Σ|c_i|‖x̃_i‖`` and ``‖ṽ‖²`` computed (``columns`` vectors)."""
    mass = float(coef_abs @ _tilde_norms(problem))
    return vector_part(v_sq, mass, problem.n_samples, columns * (problem.n_features + 1))


def _dual_screen(problem, total: float, widest, v_sq: float, columns: int = 1) -> float:
    """:func:`vector_part` from maxima: ``Σ|c_i| ≤ total``, ``widest`` from :func:`_widest`,
    ``v_sq`` a bound of ``‖ṽ‖²``."""
    mass = total * widest[1]
    return vector_part(v_sq, mass, problem.n_samples, columns * (problem.n_features + 1))


def _bias_part(problem, total: float) -> float:
    """``(s·total)²`` of a regularized bias, 0 otherwise."""
    return (problem.bias_scale * total) ** 2 if problem.bias == "regularized" else 0.0


def svr_linear_rounding(problem, w, b, beta, P, D) -> float:
    """The allowance of :class:`~problems.svr_linear.SVRPrimal`'s certificate: residuals
    ``y_i − x_i·w − b`` off by ``e_i = γ_{d+5}(‖x_i‖‖w‖ + |b| + |y_i| + ε)``, weighted ``C_i``
    where a tube's edge is within reach (squared: ``2C_i max(0, |r_i| + e_i − ε)``); the dual's
    ``yᵀβ − ε‖β‖₁ (− Σβ_i²/(4C_i))`` to ``γ_{n+3}``, its ``½‖ṽ‖²`` by :func:`vector_part`."""
    if not (np.isfinite(P) and np.isfinite(D)):
        return np.inf
    n, d, eps = problem.n_samples, problem.n_features, problem.epsilon
    C, y = problem.upper_bounds, problem.y
    w_norm = float(np.sqrt(w @ w))
    y_abs = np.abs(y)
    widest = _widest(problem)
    e_max = gamma(d + 5) * (widest[0] * w_norm + abs(b) + float(y_abs.max()) + eps)
    C_sum = float(C.sum())
    # P bounds the loss and the regularizer; squared: s_i ≤ 2C_i(ξ_i + e), ΣC_iξ_i ≤ √(ΣC·loss)
    slope_sum = 2.0 * (np.sqrt(C_sum * abs(P)) + e_max * C_sum) if problem.squared else C_sum
    primal_rest = (gamma(d + 2) + gamma(n + 3)) * abs(P)
    beta_abs = np.abs(beta)
    beta_total = float(beta_abs.sum())
    linear = float(y @ beta) - eps * beta_total
    linear_abs = float(y_abs @ beta_abs) + eps * beta_total
    if problem.squared:
        pos = C > 0
        quad = float(np.sum(beta[pos] ** 2 / (4.0 * C[pos])))
        linear, linear_abs = linear - quad, linear_abs + quad
    rest = gamma(n + 3) * linear_abs + gamma(4) * (abs(P) + abs(D))
    # ½‖ṽ‖² = linear − D, to the sums' rounding
    v_sq = 2.0 * (linear - D) + 4.0 * gamma(n + 4) * (linear_abs + abs(D))
    screen = (
        e_max * slope_sum + primal_rest + _dual_screen(problem, beta_total, widest, v_sq) + rest
    )
    if settled_by_screen(screen, P, D):
        return screen
    v, total = problem.weights_from_beta(beta)
    dual = _dual_exact(problem, beta_abs, float(v @ v) + _bias_part(problem, total))
    r = problem.residuals(w, b)
    e = gamma(d + 5) * (problem.row_norms * w_norm + abs(b) + y_abs + eps)
    if problem.squared:
        slopes = 2.0 * C * np.maximum(0.0, np.abs(r) + e - eps)
    else:
        slopes = np.where(np.abs(r) + e > eps, C, 0.0)
    return min(screen, float(slopes @ e) + primal_rest + dual + rest)


def _binary_v_sq(problem, alpha) -> float:
    """``‖ṽ‖²`` of ``ṽ = Σ α_i y_i x̃_i``, computed."""
    ay = alpha * problem.y
    v = np.asarray(problem.X.T @ ay).ravel()
    return float(v @ v) + _bias_part(problem, float(ay.sum()))


def logistic_rounding(problem, w, b, alpha, P, D) -> float:
    """The allowance of :class:`~problems.logistic.Logistic`'s certificate: margins off by
    ``e_i = γ_{d+2}(‖x_i‖‖w‖ + |b|)``, weighted by the loss's slope ``C_i σ(−(m_i − e_i))``
    (``C_i`` from maxima), each ``log(1 + e^{−m})`` within 4 units in the last place; the
    entropy's terms ``t log(C/t)`` (t = α or C − α, formed in float64) off by at most
    ``6u(t + t log(C/t))``, at most ``6u C_i(1 + log 2)`` per α inside its box (0 at its
    ends); ``½‖ṽ‖²`` by :func:`vector_part`."""
    if not (np.isfinite(P) and np.isfinite(D)):
        return np.inf
    n, d = problem.n_samples, problem.n_features
    C = problem.upper_bounds
    w_norm = float(np.sqrt(w @ w))
    widest = _widest(problem)
    e_max = gamma(d + 2) * (widest[0] * w_norm + abs(b))
    primal_rest = (gamma(d + 2) + gamma(n + 3) + ELEMENTARY_ULPS * UNIT_ROUNDOFF) * abs(P)
    interior = float(C[(alpha > 0.0) & (alpha < C)].sum())
    entropy = gamma(n + 6) * interior * (1.0 + np.log(2.0))
    rest = entropy + gamma(4) * (abs(P) + abs(D))
    # ½‖ṽ‖² = H − D, H (the entropy) at most log 2 of each C_i inside its box
    v_sq = 2.0 * (interior * np.log(2.0) - D) + 4.0 * gamma(n + 4) * (interior + abs(D))
    dual = _dual_screen(problem, float(alpha.sum()), widest, v_sq)
    screen = e_max * float(C.sum()) + primal_rest + dual + rest
    if settled_by_screen(screen, P, D):
        return screen
    dual = _dual_exact(problem, alpha, _binary_v_sq(problem, alpha))
    m = problem.margins(w, b)
    e = gamma(d + 2) * (problem.row_norms * w_norm + abs(b))
    slopes = C * (0.5 + 0.5 * np.tanh(0.5 * (e - m)))  # C σ(−(m − e)), within 8u
    primal = float(slopes @ e) * (1.0 + 8.0 * UNIT_ROUNDOFF) + primal_rest
    return min(screen, primal + dual + rest)


def hard_margin_rounding(problem, w, b, alpha, P, D) -> float:
    """The allowance of :class:`~problems.hard_margin.HardMarginPrimal`'s certificate: margins
    off by at most ``e = γ_{d+2}(max‖x_i‖‖w‖ + |b|)``, so the exact ones may be as low as
    ``1 − e`` and ``P(1 − e)⁻²`` is the value of a feasible point (the given one scaled); ``P``
    itself to ``γ_{d+3}``; ``Σλ`` to ``γ_n``, ``½‖ṽ‖²`` by :func:`vector_part`."""
    if not (np.isfinite(P) and np.isfinite(D)):
        return np.inf
    n, d = problem.n_samples, problem.n_features
    w_norm = float(np.sqrt(w @ w))
    widest = _widest(problem)
    e = gamma(d + 2) * (widest[0] * w_norm + abs(b))
    if not e < 0.5:
        return np.inf
    primal = abs(P) * ((1.0 - e) ** -2 - 1.0 + gamma(d + 3))
    total = float(alpha.sum())
    rest = gamma(n) * total + gamma(4) * (abs(P) + abs(D))
    v_sq = 2.0 * (total - D) + 4.0 * gamma(n + 4) * (total + abs(D))
    screen = primal + rest + _dual_screen(problem, total, widest, v_sq)
    if settled_by_screen(screen, P, D):
        return screen
    return min(screen, primal + rest + _dual_exact(problem, alpha, _binary_v_sq(problem, alpha)))


def multiclass_rounding(problem, W, b, beta, P, D) -> float:
    """The allowance of :class:`~problems.multiclass.MulticlassHinge`'s certificate: scores
    ``x_i·w_r + b_r`` off by ``γ_{d+2}(‖x_i‖ max‖w_r‖ + max|b_r|)``, the augmented ones
    ``z_ir = Δ(r, y_i) + f_r − f_{y_i}`` by ``e_i = 2γ_{d+5}(‖x_i‖ max‖w_r‖ + max|b_r| +
    max Δ)``, weighted ``C_i`` where some ``z_ir`` (r ≠ y_i) is within ``e_i`` of the max's 0;
    the dual's ``Σβ_ir Δ(r, y_i)`` to ``γ_{nk+1}``, its ``½‖W̃‖_F²`` by :func:`vector_part` over
    the k columns at once (``Σ_i ‖x̃_i‖ Σ_r |Γ_ir|``, ``Γ_ir = C_i 1[y_i = r] − β_ir``)."""
    if not (np.isfinite(P) and np.isfinite(D)):
        return np.inf
    n, d, k = problem.n_samples, problem.n_features, problem.n_classes
    C = problem.upper_bounds
    C_sum = float(C.sum())
    w_max = float(np.sqrt(np.max(np.sum(W * W, axis=1))))
    b_max = float(np.max(np.abs(b), initial=0.0))
    cost_max = float(np.max(np.abs(problem.cost)))
    widest = _widest(problem)
    e_max = 2.0 * gamma(d + 5) * (widest[0] * w_max + b_max + cost_max)
    primal_rest = (gamma(d + 2) + gamma(n + 2)) * abs(P)
    linear_abs = C_sum * cost_max  # Σ_r β_ir = C_i, β ≥ 0
    rest = gamma(n * k + 1) * linear_abs + gamma(4) * (abs(P) + abs(D))
    v_sq = 2.0 * (linear_abs - D) + 4.0 * gamma(n * k + 4) * (linear_abs + abs(D))
    # Σ_r |Γ_ir| = 2(C_i − β_{i,y_i}) ≤ 2C_i
    screen = e_max * C_sum + primal_rest + _dual_screen(problem, 2.0 * C_sum, widest, v_sq, k)
    screen += rest
    if settled_by_screen(screen, P, D):
        return screen
    dual = _multiclass_dual(problem, beta, C, k)
    z = problem.augmented_scores(W, b)
    z[np.arange(n), problem.y] = -np.inf
    e = 2.0 * gamma(d + 5) * (problem.row_norms * w_max + b_max + cost_max)
    slopes = np.where(np.max(z, axis=1) + e > 0.0, C, 0.0)
    return min(screen, float(slopes @ e) + primal_rest + dual + rest)


def _multiclass_dual(problem, beta, C, k: int) -> float:
    """:func:`_dual_exact` of a multiclass dual point β: ``Γ = C e_{y_i} − β_i`` per row, and
    ``‖W̃‖_F²`` (with the bias row for a regularized bias) as computed from β."""
    n = beta.shape[0]
    Gamma = -beta
    Gamma[np.arange(n), problem.y] += C
    V, b_dual = problem.primal_from_dual(beta)
    v_sq = float(np.sum(V * V))
    if problem.bias == "regularized":
        v_sq += float(b_dual @ b_dual) / problem.bias_scale**2
    return _dual_exact(problem, np.abs(Gamma).sum(axis=1), v_sq, k)


def multinomial_rounding(problem, W, b, beta, P, D) -> float:
    """The allowance of :class:`~problems.multinomial_logistic.MultinomialLogistic`'s
    certificate: scores off by ``e_i = γ_{d+2}(‖x_i‖ max‖w_r‖ + max|b_r|)`` move
    ``log Σ_r e^{f_r} − f_{y_i}`` by at most ``2e_i`` (its gradient, ``softmax − e_{y_i}``, has
    an ℓ1 norm below 2), and its evaluation is off by at most ``γ_{k+8}(5F_i + 1 + 2 log k)``,
    ``F_i = ‖x_i‖ max‖w_r‖ + max|b_r| ≥ |f_ir|``; each weighted ``C_i``. The dual's entropy
    ``Σ β_ir log(C_i/β_ir)`` to ``γ_{nk+6}ΣC_i(1 + log k)``, its ``½‖W̃‖_F²`` by
    :func:`vector_part` (``Σ_r |Γ_ir| ≤ 2C_i``)."""
    if not (np.isfinite(P) and np.isfinite(D)):
        return np.inf
    n, d, k = problem.n_samples, problem.n_features, problem.n_classes
    C = problem.upper_bounds
    C_sum = float(C.sum())
    w_max = float(np.sqrt(np.max(np.sum(W * W, axis=1))))
    b_max = float(np.max(np.abs(b), initial=0.0))
    log_k = float(np.log(k))

    def row_error(norms):
        scores = norms * w_max + b_max
        return 2.0 * gamma(d + 2) * scores + gamma(k + 8) * (5.0 * scores + 1.0 + 2.0 * log_k)

    primal_rest = (gamma(d + 2) + gamma(n + 2)) * abs(P)
    entropy = gamma(n * k + 6) * C_sum * (1.0 + log_k)
    rest = entropy + gamma(4) * (abs(P) + abs(D))
    # ½‖W̃‖² = H − D, H (the entropy) at most C_i log k per row
    v_sq = 2.0 * (C_sum * log_k - D) + 4.0 * gamma(n * k + 4) * (C_sum * log_k + abs(D))
    widest = _widest(problem)
    primal = C_sum * row_error(widest[0]) + primal_rest
    screen = primal + _dual_screen(problem, 2.0 * C_sum, widest, v_sq, k) + rest
    if settled_by_screen(screen, P, D):
        return screen
    dual = _multiclass_dual(problem, beta, C, k)
    primal = float(C @ row_error(problem.row_norms)) + primal_rest
    return min(screen, primal + dual + rest)
