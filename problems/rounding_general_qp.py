"""The rounding allowance of the general QP's Lagrangian certificate (problems/general_qp.py).

At the projected α = a and the multipliers μ the certificate chose, the computed gap is ::

    F(a) − L(a, μ) = aᵀg + pᵀa + μᵀΔ + Σ_t u_t max(0, −(g_t + p_t + μ z_t)),    g = Qa,

so, as for the kernel dual (problems/rounding.py), a score ``g_t`` off by ``e_t`` moves it by at
most ``s_t e_t``, ``s_t`` the largest |slope| on ``[g_t − e_t, g_t + e_t]``: ``a_t`` where the
hinge is idle, ``u_t − a_t`` where it is active, the larger within reach of its kink
(:func:`~problems.rounding_scores.hinge_slopes`). ``e_t`` is the kernel row's bound
(:func:`~problems.rounding.kernel_row_errors`, over the rows the variables read, one term more
for ``K + s²``) and the ``s²`` column's ``γ_{k+1} s² Σa``; forming the hinge's argument adds
``γ_2`` of its parts, weighted ``u_t`` where the hinge may be active; the sums add ``γ_{m+4}``
of their terms (Higham 2002, §3.1). Past ``ROUNDING_ACCURATE_RTOL`` on an RBF or linear kernel
of dense rows, the scores that weigh are recomputed in long double (the kernel dual's
``accurate_rbf_sums`` and ``accurate_linear_sums``), F and L corrected by the difference.

The projection leaves the equalities off by a residue of rounding, ``ρ = zᵀa − Δ`` (computed
exactly, ``math.fsum``): F(a) bounds the optimum only at a feasible point. Moving one variable
with room by ``−ρz_t`` makes it feasible and changes F by ``(g_t + p_t + μz_t)δ_t + μρ + ½Q_tt
ρ²`` (exactly, for the Lagrangian's μ), which the allowance adds, at the variable where it is
smallest (inf where no variable has the room: nothing certifies such a point).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from svmbench.problems.kernels import squared_norms
from svmbench.problems.rounding import kernel_row_errors, largest_row_error, refine_above
from svmbench.problems.rounding_entries import (
    ACCURATE_CACHE_SAMPLES,
    ACCURATE_MAX_ENTRIES,
    UNIT_ROUNDOFF,
    AccurateEntries,
    accurate_linear_sums,
    accurate_rbf_sums,
    gamma,
    long_gamma,
)
from svmbench.problems.rounding_scores import hinge_slopes, settled_by_screen

__all__ = ["general_qp_rounding"]


def _groups(form, multipliers):
    """``(mask, z, target, μ)`` of each equality ("one": one over every variable; "nu": one
    per sign, z = 1; "none": none)."""
    if form.equality == "one":
        return [(slice(None), form.sign, form.delta, multipliers[0])]
    if form.equality == "nu":
        pos = form.sign > 0
        ones = np.ones(form.n_variables)
        return [
            (pos, ones[pos], form.delta, multipliers[0]),
            (~pos, ones[~pos], form.delta_neg, multipliers[1]),
        ]
    return []


def _row_sizes(problem):
    """``(squared norms or None, diagonal or None, widest)`` of the form's X for the kernel
    bounds (the diagonal of a precomputed Gram matrix)."""
    form = problem.form
    if form.kernel.name == "precomputed":
        diagonal = np.abs(form.kernel.diagonal(form.X))
        return None, diagonal, float(diagonal.max(initial=0.0))
    sqn = problem.__dict__.get("form_squared_norms")
    if sqn is None:
        sqn = squared_norms(form.X)
        problem.__dict__["form_squared_norms"] = sqn
    return sqn, None, float(sqn.max(initial=0.0))


def _feasibility(form, a, arg, e, groups, hessian) -> float:
    """What F may rise by from a to the feasible point one move away (module docstring)."""
    out, total_r = 0.0, 0.0
    for mask, z, target, mu in groups:
        part = a[mask]
        rho = math.fsum(np.concatenate([z * part, [-target]]))  # z·a exact: z = ±1
        if rho == 0.0:
            continue
        r = abs(rho) * (1.0 + 2.0 * UNIT_ROUNDOFF)
        step = -np.sign(rho) * z  # the direction of the move, per variable
        room = np.where(step > 0, form.upper[mask] - part, part)
        fits = room >= 2.0 * r
        if not fits.any():
            return math.inf
        out += r * (abs(mu) + float(np.min((np.abs(arg[mask]) + e[mask])[fits])))
        total_r += r
    if total_r > 0.0:
        out += 0.5 * total_r**2 * float(np.max(np.abs(np.diagonal(hessian)))) * (1.0 + gamma(2))
    return out


def general_qp_rounding(problem, a, g, multipliers, P: float, D: float):
    """``(P, D, rounding)`` of :class:`~problems.general_qp.GeneralQP`'s certificate at the
    projected ``a``, ``g = Qa`` as computed and the chosen multipliers (module docstring): a
    bound from maxima first (``e_t`` at its largest, ``s_t ≤ u_t``), per variable past it, and
    past ``ROUNDING_ACCURATE_RTOL`` on an RBF or linear kernel of dense rows the scores that
    weigh in long double, P and D corrected by the difference (:func:`_refined`)."""
    if not (np.isfinite(P) and np.isfinite(D)):
        return P, D, math.inf
    form = problem.form
    m, d = form.n_variables, problem.n_features
    u, p = form.upper, form.p
    groups = _groups(form, multipliers)
    shift = np.zeros(m)
    for mask, z, _, mu in groups:
        shift[mask] = mu * z
    arg = g + p + shift
    total = float(a.sum())
    k = int(np.count_nonzero(a)) + 1  # one term more: K + s² rounded
    bias_part = gamma(k + 1) * form.s2 * total
    g_abs = np.abs(g)
    reach = gamma(2) * (g_abs + np.abs(p) + np.abs(shift))
    active = np.maximum(0.0, -arg)
    magnitude = (
        float(a @ g_abs)
        + float(np.abs(p) @ a)
        + sum(abs(mu * target) for _, _, target, mu in groups)
        + float(u @ active)
        + abs(P)
        + abs(D)
    )
    accumulated = gamma(m + 4) * magnitude
    sqn, diagonal, widest = _row_sizes(problem)
    e_max = largest_row_error(form.kernel, total, k, d, widest) + bias_part + float(reach.max())
    e_flat = np.full(m, e_max)
    screen = e_max * float(u.sum()) + accumulated
    screen += _feasibility(form, a, arg, e_flat, groups, problem.hessian)
    if settled_by_screen(screen, P, D):
        return P, D, screen
    weights = np.bincount(form.rows, weights=a, minlength=form.X.shape[0])
    e_rows = kernel_row_errors(
        form.kernel, weights, support=k, n_features=d, squared_norms=sqn, diagonal=diagonal
    )
    e = e_rows[form.rows] + bias_part
    slopes, argument = _weighted(g, e, reach, a, u, p + shift)
    moved = _feasibility(form, a, arg, e + reach, groups, problem.hessian)
    bound = min(screen, float(slopes @ e) + argument + accumulated + moved)
    weigh = np.flatnonzero(slopes)
    nz = np.flatnonzero(a)
    if (
        bound <= refine_above(P, D)
        or form.kernel.name not in ("rbf", "linear")
        or sparse.issparse(form.X)
        or not 0 < weigh.size * nz.size * d <= ACCURATE_MAX_ENTRIES
    ):
        return P, D, bound
    P_new, D_new, tighter = _refined(problem, a, g, shift, slopes, weigh, nz, P, D, sqn)
    return P_new, D_new, min(bound, tighter + accumulated + moved)


def _refined(problem, a, g, shift, slopes, weigh, nz, P, D, sqn):
    """The scores that weigh in long double (``g_t = z_t(Σ_s c_s K(x_{r_t}, x_{r_s}) + s²Σc)``,
    ``c = z∘a``; :func:`~problems.rounding_entries.accurate_rbf_sums` or
    :func:`~problems.rounding_entries.accurate_linear_sums`), P and D corrected by their difference
    (``½aᵀg`` in both, the hinge in D), and their part of the allowance at the new scores."""
    form = problem.form
    z, rows, u = form.sign, form.rows, form.upper
    coef = z[nz] * a[nz]
    if form.kernel.name == "linear":
        sums, e_long = accurate_linear_sums(form.X, rows[weigh], rows[nz], coef, a[nz], sqn)
    else:
        sums, e_long = accurate_rbf_sums(
            form.X, rows[weigh], rows[nz], coef, a[nz], form.kernel.gamma, _kept_entries(problem)
        )
    total = float(a[nz].sum())
    if form.s2:
        sums = sums + np.longdouble(form.s2) * np.sum(np.asarray(coef, dtype=np.longdouble))
        e_long = e_long + long_gamma(nz.size + 2) * form.s2 * total
    g_long = sums * z[weigh]
    kink = np.asarray(form.p[weigh] + shift[weigh], dtype=np.longdouble)  # one float64 rounding
    hinge_long = np.maximum(np.longdouble(0.0), -(g_long + kink))
    hinge_fast = np.maximum(0.0, -(g[weigh] + form.p[weigh] + shift[weigh]))
    change = np.sum(np.asarray(u[weigh], dtype=np.longdouble) * (hinge_long - hinge_fast))
    quad_change = np.sum(a[weigh] * (g_long - g[weigh])) / 2
    P_new = float(np.longdouble(P) + quad_change)
    D_new = float(np.longdouble(D) - quad_change - change)
    g_new = np.asarray(g_long, dtype=np.float64)
    kink_abs = np.abs(form.p[weigh]) + np.abs(shift[weigh])
    # the hinge's argument formed in long double from the float64 kink p + μz (one rounding)
    argument = long_gamma(2) * (np.abs(g_new) + kink_abs) + gamma(1) * kink_abs
    # the intervals around g and the kink rounded to float64
    reach = argument + gamma(3) * (np.abs(g_new) + kink_abs)
    new, argument_part = _weighted(
        g_new, e_long, reach, a[weigh], u[weigh], form.p[weigh] + shift[weigh]
    )
    slopes_new = np.maximum(slopes[weigh], new)
    fixed = UNIT_ROUNDOFF * (abs(float(change)) + 2.0 * abs(float(quad_change)))
    return P_new, D_new, float(slopes_new @ e_long) + argument_part + fixed


def _kept_entries(problem) -> AccurateEntries | None:
    """The form's long-double RBF entries, kept with the problem (made on first use) for at
    most ``ACCURATE_CACHE_SAMPLES`` rows of X, so that later certificates compute only the
    entries they have not seen."""
    form = problem.form
    if form.X.shape[0] > ACCURATE_CACHE_SAMPLES:
        return None
    kept = problem.__dict__.get("accurate_rbf_entries")
    if kept is None:
        kept = AccurateEntries(np.ascontiguousarray(form.X), form.kernel.gamma)
        problem.__dict__["accurate_rbf_entries"] = kept
    return kept


def _weighted(g, e, reach, a, u, kink):
    """The slopes ``s_t`` on ``[g_t − e_t − r_t, g_t + e_t + r_t]`` (``r`` what forming the
    hinge's argument ``g + kink`` may add) and ``Σ u_t r_t`` over the hinges that may be
    active there: an error in the argument alone weighs ``u_t``, not the slope ``u_t − a_t``
    of a score's error (0 at ``a_t = u_t``)."""
    slopes = hinge_slopes(g, e + reach, a, [(u, -1.0, -kink)])
    maybe = g + kink - (e + reach) < 0.0
    return slopes, float(u[maybe] @ reach[maybe])
