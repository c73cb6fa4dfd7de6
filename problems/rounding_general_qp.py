"""The rounding allowance of the general QP's Lagrangian certificate (problems/general_qp.py).

At the projected α = a and the multipliers μ the certificate chose, the computed gap is ::

    F(a) − L(a, μ) = aᵀg + pᵀa + μᵀΔ + Σ_t u_t max(0, −(g_t + p_t + μ z_t)),    g = Qa,

so, as for the kernel dual (problems/rounding.py), a score ``g_t`` off by ``e_t`` moves it by at
most ``s_t e_t``, ``s_t`` the largest |slope| on ``[g_t − e_t, g_t + e_t]``: ``a_t`` where the
hinge is idle, ``u_t − a_t`` where it is active, the larger within reach of its kink
(:func:`~problems.rounding_scores.hinge_slopes`). ``e_t`` is the kernel row's bound
(:func:`~problems.rounding.kernel_row_errors`, over the rows the variables read, one term more
for ``K + s²``), the ``s²`` column's ``γ_{k+1} s² Σa`` and ``γ_2`` of what forms the hinge's
argument; the sums add ``γ_{m+4}`` of their terms (Higham 2002, §3.1).

The projection leaves the equalities off by a residue of rounding, ``ρ = zᵀa − Δ`` (computed
exactly, ``math.fsum``): F(a) bounds the optimum only at a feasible point. Moving one variable
with room by ``−ρz_t`` makes it feasible and changes F by ``(g_t + p_t + μz_t)δ_t + μρ + ½Q_tt
ρ²`` (exactly, for the Lagrangian's μ), which the allowance adds, at the variable where it is
smallest (inf where no variable has the room: nothing certifies such a point).
"""

from __future__ import annotations

import math

import numpy as np

from svmbench.problems.kernels import squared_norms
from svmbench.problems.rounding import (
    UNIT_ROUNDOFF,
    gamma,
    kernel_row_errors,
    largest_row_error,
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


def general_qp_rounding(problem, a, g, multipliers, P: float, D: float) -> float:
    """The allowance of :class:`~problems.general_qp.GeneralQP`'s certificate at the projected
    ``a``, ``g = Qa`` as computed and the chosen multipliers (module docstring): a bound from
    maxima first (``e_t`` at its largest, ``s_t ≤ u_t``), per variable past it."""
    if not (np.isfinite(P) and np.isfinite(D)):
        return math.inf
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
        return screen
    weights = np.bincount(form.rows, weights=a, minlength=form.X.shape[0])
    e_rows = kernel_row_errors(
        form.kernel, weights, support=k, n_features=d, squared_norms=sqn, diagonal=diagonal
    )
    e = e_rows[form.rows] + bias_part + reach
    slopes = hinge_slopes(g, e, a, [(u, -1.0, -(p + shift))])
    bound = float(slopes @ e) + accumulated
    bound += _feasibility(form, a, arg, e, groups, problem.hessian)
    return min(screen, bound)
