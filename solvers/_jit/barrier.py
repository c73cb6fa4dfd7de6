"""Jitted O(n) work of the primal-dual iteration on the primal forms (``solvers/barrier.py``).

One Mehrotra predictor-corrector iteration of :func:`solvers.barrier._ppd_iteration` on
``min ½zᵀPz + Σ C_i ℓ(ξ_i)`` s.t. ``s = Az + ξ − 1 ≥ 0``, ``A = diag(y) X̃``, multipliers λ of
``s ≥ 0`` and (hinge) ν of ``ξ ≥ 0``, done in four passes over the rows instead of some forty
NumPy array operations and six products with X̃:

1. ``prepare`` (no X): ``D = 1/(s/λ + e)`` and the two vectors whose products with X̃ᵀ
   build both right-hand sides; the caller forms ``X̃ᵀDX̃`` and those products in one blocked pass.
2. ``affine``: the affine-scaling direction of every row from
   ``Δm = y ⊙ X̃Δz``, its step to the boundary, the coefficients of the complementarity along
   it and ``X̃ᵀ(y ⊙ c)`` with ``c`` the second-order term of the corrector (one pass over X).
3. ``corrector``: the corrected direction, its step to the boundary and
   ``X̃ᵀ(y ⊙ Δλ)``, which updates ``X̃ᵀ(y ⊙ λ)`` (one pass over X).
4. ``update`` (no X): the step, the new residuals and the complementarity, and ``prepare``'s
   vectors at the new point (the next iteration skips ``prepare``).

Per row, with ``e = ξ/ν`` (hinge), ``1/(2C)`` (squared hinge, ``ξ = λ/(2C)``) or 0 (hard margin,
no ξ), ``r_p = m − 1 − s + ξ``, ``r_ξ = C − λ − ν``, and right-hand sides ``r_s`` (of
``λΔs + sΔλ``) and ``r_c`` (of ``νΔξ + ξΔν``):
``g = D (r_s/λ − r_p − (r_c − ξ r_ξ)/ν)``, ``Δλ = g − D Δm``, ``Δs = (r_s − s Δλ)/λ``,
``Δν = r_ξ − Δλ``, ``Δξ = (r_c − ξ Δν)/ν`` (:func:`_row_direction`; the hinge terms only for the
hinge). The affine step has ``r_s = −sλ``, ``r_c = −ξν``; the corrected one adds ``τ − Δs_aΔλ_a``
and ``τ − Δξ_aΔν_a``. The directions are never stored: each pass recomputes them from the state
and the stored ``Δm`` of the two steps, which costs a few flops per row and saves memory traffic
(at n = 10⁶ every pass over an O(n) vector is a pass over main memory). Each formula is the
NumPy one in the same order of operations; no ``fastmath``.

Each pass is one body for the three losses and for dense and CSR rows (:mod:`solvers._jit.rows`),
with one entry point per loss (:data:`PASSES`, the loss a constant in it), compiled per storage
on first use: a fit compiles the loss and the storage it runs, not the nine variants of every
pass. The row helpers are compiled callees (one per loss, which LLVM inlines: the same
code), not Numba-inlined bodies (``inline="always"``), which Numba copies and translates
again at every call site: ``_row_direction``, ``_affine_row``, ``_corrector_rhs``,
``_state_row``, ``_corrector_dir``, ``_ratio``, ``_floor``. ``_row_terms`` and the block loops
stay inlined (a compiled ``_row_terms`` left the corrector's row loop unvectorized).
``x̃_i · Δz`` is :func:`~solvers._jit.rows.row_dot4`, whose dense order (four partial sums)
differs from the CSR one (one sum): the two storages give the same iterates to rounding, not
bitwise (dcd, whose docs promise the same bits, uses ``row_dot``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numba
import numpy as np

from svmbench.solvers._jit.rows import row_axpy, row_dot4

#: Loss codes (the ``loss`` argument of every kernel).
HINGE, SQUARED_HINGE, HARD = 0, 1, 2
#: Floor of the positive variables after a step (as ``np.maximum(·, 1e-300)`` in NumPy).
TINY = 1e-300


@numba.njit(cache=True, inline="always", error_model="numpy")
def _row_terms(loss, m, s, lam, xi, nu, C):
    """``(D, r_p, r_ξ)`` of one row: ``D = 1/(s/λ + e)``, ``r_p = m − 1 − s + ξ``,
    ``r_ξ = C − λ − ν`` (0 but for the hinge)."""
    if loss == HINGE:
        return 1.0 / (s / lam + xi / nu), m - 1.0 - s + xi, C - lam - nu
    if loss == SQUARED_HINGE:
        return 1.0 / (s / lam + 1.0 / (2.0 * C)), m - 1.0 - s + lam / (2.0 * C), 0.0
    return 1.0 / (s / lam + 0.0), m - 1.0 - s, 0.0


@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _row_direction(loss, s, lam, xi, nu, D, r_p, r_xi, r_s, r_c, dm):
    """``(Δλ, Δs, Δξ, Δν)`` of one row from ``Δm`` (see the module notes)."""
    g = r_s / lam - r_p
    if loss == HINGE:
        g -= (r_c - xi * r_xi) / nu
    g *= D
    dlam = g - D * dm
    ds = (r_s - s * dlam) / lam
    if loss != HINGE:
        return dlam, ds, 0.0, 0.0
    dnu = r_xi - dlam
    return dlam, ds, (r_c - xi * dnu) / nu, dnu


@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _ratio(worst, x, dx):
    """``max(worst, −dx/x)``: the step to the boundary is ``1/max(1, worst)``."""
    r = -dx / x
    return r if r > worst else worst


@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _affine_row(loss, s, lam, xi, nu, D, r_p, r_xi, dm):
    """Affine-scaling direction of one row (``r_s = −sλ``, ``r_c = −ξν``)."""
    r_c = -xi * nu if loss == HINGE else 0.0
    return _row_direction(loss, s, lam, xi, nu, D, r_p, r_xi, -s * lam, r_c, dm)


@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _corrector_rhs(loss, s, lam, xi, nu, D, r_p, r_xi, dm_aff, tau):
    """``(r_s, r_c)`` of the corrector: ``−sλ + τ − Δs_aΔλ_a``, ``−ξν + τ − Δξ_aΔν_a``."""
    dlam, ds, dxi, dnu = _affine_row(loss, s, lam, xi, nu, D, r_p, r_xi, dm_aff)
    r_c = (-xi * nu + tau) - dxi * dnu if loss == HINGE else 0.0
    return (-s * lam + tau) - ds * dlam, r_c


@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _state_row(loss, i, C, m, s, lam, xi, nu):
    """``(s, λ, ξ, ν, D, r_p, r_ξ)`` of row i (``ξ = 0``, ``ν = 1`` but for the hinge)."""
    xi_i = xi[i] if loss == HINGE else 0.0
    nu_i = nu[i] if loss == HINGE else 1.0
    s_i, lam_i = s[i], lam[i]
    D, r_p, r_xi = _row_terms(loss, m[i], s_i, lam_i, xi_i, nu_i, C[i])
    return s_i, lam_i, xi_i, nu_i, D, r_p, r_xi


@numba.njit(cache=True, inline="always", error_model="numpy")
def _prepare_rows(loss, a, b, y, C, m, s, lam, xi, nu, sqD, V):
    for i in range(a, b):
        s_i, lam_i, xi_i, nu_i, D, r_p, r_xi = _state_row(loss, i, C, m, s, lam, xi, nu)
        g = _affine_row(loss, s_i, lam_i, xi_i, nu_i, D, r_p, r_xi, 0.0)[0]
        sqD[i] = np.sqrt(D)
        V[i, 0] = y[i] * g
        V[i, 1] = y[i] * (D * (1.0 / lam_i - 1.0 / nu_i if loss == HINGE else 1.0 / lam_i))


# ---- the passes over X, in blocks of BLOCK rows: X̃Δz, the rows' algebra, X̃ᵀ(y ⊙ c) ---------
#: Rows per block of a pass: the block's rows of X stay in cache between the product X̃Δz and the
#: accumulation of X̃ᵀ(y ⊙ c), and the per-row algebra in between runs over contiguous buffers
#: without reductions (vectorized by the compiler; the reductions follow over the buffers).
BLOCK = 256


@numba.njit(cache=True, inline="always", error_model="numpy")
def _dot(X, E, i, z, d):
    """``x̃_i · z``: :func:`~solvers._jit.rows.row_dot4` of the row of X (dense: four partial
    sums), then the k columns of E."""
    t = row_dot4(X, i, z, 0.0)
    for j in range(E.shape[1]):
        t += E[i, j] * z[d + j]
    return t


@numba.njit(cache=True, inline="always", error_model="numpy")
def _axpy(X, E, i, c, acc, d):
    """``acc += c x̃_i``."""
    row_axpy(X, i, c, acc)
    for j in range(E.shape[1]):
        acc[d + j] += c * E[i, j]


@numba.njit(cache=True, inline="always", error_model="numpy")
def _affine_rows(loss, a, b, y, C, m, s, lam, xi, nu, dm, buf):
    """Rows a..b of the affine pass into ``buf``: the ratio test ``max(−Δx/x)``, the
    complementarity coefficients ``sΔλ + λΔs (+ ξΔν + νΔξ)`` and ``ΔsΔλ (+ ΔξΔν)``, and
    ``y c`` with ``c = D (Δs_aΔλ_a/λ − Δξ_aΔν_a/ν)``, the corrector's second-order term."""
    for i in range(a, b):
        s_i, lam_i, xi_i, nu_i, D, r_p, r_xi = _state_row(loss, i, C, m, s, lam, xi, nu)
        dlam, ds, dxi, dnu = _affine_row(loss, s_i, lam_i, xi_i, nu_i, D, r_p, r_xi, dm[i])
        worst = _ratio(_ratio(0.0, s_i, ds), lam_i, dlam)
        lin = s_i * dlam + lam_i * ds
        quad = ds * dlam
        c = ds * dlam / lam_i
        if loss == HINGE:
            worst = _ratio(_ratio(worst, xi_i, dxi), nu_i, dnu)
            lin += xi_i * dnu + nu_i * dxi
            quad += dxi * dnu
            c -= dxi * dnu / nu_i
        buf[0, i - a] = worst
        buf[1, i - a] = lin
        buf[2, i - a] = quad
        buf[3, i - a] = y[i] * (D * c)


@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _corrector_dir(loss, i, C, m, s, lam, xi, nu, dm_aff, tau, dm):
    """``(s, λ, ξ, ν, Δλ, Δs, Δξ, Δν)`` of row i for the corrected direction."""
    s_i, lam_i, xi_i, nu_i, D, r_p, r_xi = _state_row(loss, i, C, m, s, lam, xi, nu)
    r_s, r_c = _corrector_rhs(loss, s_i, lam_i, xi_i, nu_i, D, r_p, r_xi, dm_aff[i], tau)
    dlam, ds, dxi, dnu = _row_direction(loss, s_i, lam_i, xi_i, nu_i, D, r_p, r_xi, r_s, r_c, dm)
    return s_i, lam_i, xi_i, nu_i, dlam, ds, dxi, dnu


@numba.njit(cache=True, inline="always", error_model="numpy")
def _corrector_rows(loss, a, b, y, C, m, s, lam, xi, nu, dm_aff, tau, dm, buf):
    """Rows a..b of the corrector pass into ``buf``: the ratio test and ``y Δλ``."""
    for i in range(a, b):
        s_i, lam_i, xi_i, nu_i, dlam, ds, dxi, dnu = _corrector_dir(
            loss, i, C, m, s, lam, xi, nu, dm_aff, tau, dm[i]
        )
        worst = _ratio(_ratio(0.0, s_i, ds), lam_i, dlam)
        if loss == HINGE:
            worst = _ratio(_ratio(worst, xi_i, dxi), nu_i, dnu)
        buf[0, i - a] = worst
        buf[1, i - a] = y[i] * dlam


# ---- the step -------------------------------------------------------------------------------
@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _floor(v):
    """``max(v, TINY)``, NaN kept (as ``np.maximum``)."""
    return v if (v > TINY or v != v) else TINY


@numba.njit(cache=True, inline="always", error_model="numpy")
def _update_rows(loss, a, b, C, m, s, lam, xi, nu, dm_aff, dm, tau, step, buf):
    """Rows a..b of the step, in place; ``buf``: ``sλ + ξν``, ``|r_p|``, ``|r_ξ|``,
    ``C ℓ(max(0, 1 − m))`` and ``λ²/(4C)`` (squared hinge; else 0) at the new point."""
    for i in range(a, b):
        s_i, lam_i, xi_i, nu_i, dlam, ds, dxi, dnu = _corrector_dir(
            loss, i, C, m, s, lam, xi, nu, dm_aff, tau, dm[i]
        )
        m_i = m[i] + step * dm[i]
        s_i = _floor(s_i + step * ds)
        lam_i = _floor(lam_i + step * dlam)
        m[i], s[i], lam[i] = m_i, s_i, lam_i
        comp, r_xi, u = s_i * lam_i, 0.0, max(1.0 - m_i, 0.0)
        buf[3, i - a] = C[i] * u if loss == HINGE else C[i] * (u * u)
        buf[4, i - a] = lam_i * lam_i / (4.0 * C[i]) if loss == SQUARED_HINGE else 0.0
        if loss == HINGE:
            xi_i = _floor(xi_i + step * dxi)
            nu_i = _floor(nu_i + step * dnu)
            xi[i], nu[i] = xi_i, nu_i
            comp += xi_i * nu_i
            r_xi = abs(C[i] - lam_i - nu_i)
        elif loss == SQUARED_HINGE:
            xi_i = lam_i / (2.0 * C[i])
        buf[0, i - a] = comp
        buf[1, i - a] = abs(m_i - 1.0 - s_i + xi_i)
        buf[2, i - a] = r_xi


# ---- small dense rows: the scaled copy and the right-hand sides in one pass -------------------
@numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
def scale_rows(Z, sqD, V, Y, B):
    """``Y = diag(√D) Z`` and ``B = ZᵀV`` (Z, Y n×r in Fortran order, V n×2, B r×2), column by
    column: the lean normal system's scaled copy (``X̃ᵀDX̃ = YᵀY``) and both right-hand sides'
    products read Z once. Each product sums four interleaved partial sums (rows i mod 4), so
    that the additions need not wait for one another. Loss-free: one compiled variant for
    every loss."""
    n, r = Z.shape
    n4 = n - n % 4
    for j in range(r):
        a0 = a1 = a2 = a3 = c0 = c1 = c2 = c3 = 0.0
        for i in range(0, n4, 4):
            z0, z1, z2, z3 = Z[i, j], Z[i + 1, j], Z[i + 2, j], Z[i + 3, j]
            Y[i, j], Y[i + 1, j] = z0 * sqD[i], z1 * sqD[i + 1]
            Y[i + 2, j], Y[i + 3, j] = z2 * sqD[i + 2], z3 * sqD[i + 3]
            a0 += z0 * V[i, 0]
            a1 += z1 * V[i + 1, 0]
            a2 += z2 * V[i + 2, 0]
            a3 += z3 * V[i + 3, 0]
            c0 += z0 * V[i, 1]
            c1 += z1 * V[i + 1, 1]
            c2 += z2 * V[i + 2, 1]
            c3 += z3 * V[i + 3, 1]
        t0, t1 = (a0 + a1) + (a2 + a3), (c0 + c1) + (c2 + c3)
        for i in range(n4, n):
            z = Z[i, j]
            Y[i, j] = z * sqD[i]
            t0 += z * V[i, 0]
            t1 += z * V[i, 1]
        B[j, 0], B[j, 1] = t0, t1


# ---- entry points: the four passes of each loss, the loss a constant of each ------------------
def _passes_of(loss: int):
    """The four passes of ``loss`` (:class:`Passes`), jitted with ``loss`` a constant of their
    closure: one body per pass for the three losses, and each entry point compiles the loops of
    its own loss only (an entry point calling an always-inlined pass body had one more level of
    Numba inlining to compile)."""

    @numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
    def prepare(y, C, m, s, lam, xi, nu, sqD, V):
        """``sqD = √D`` and the columns of V (n×2): ``y ⊙ g_a`` (g of the affine step, its Δλ
        at ``Δm = 0``) and ``y ⊙ D (1/λ − 1/ν)`` (``y ⊙ D/λ`` but for the hinge), the
        derivative of ``y ⊙ g`` in τ: ``X̃ᵀV`` builds both right-hand sides. ``xi``, ``nu`` are
        read for the hinge only."""
        _prepare_rows(loss, 0, y.shape[0], y, C, m, s, lam, xi, nu, sqD, V)

    @numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
    def affine(X, E, y, C, m, s, lam, xi, nu, dz, dm_out, acc, buf):
        """Affine pass over the rows (X n×d C-contiguous or the CSR tuple of
        :func:`~solvers._jit.rows.as_rows`, E n×k, ``buf`` 4×BLOCK): ``dm_out = y ⊙ X̃Δz``,
        ``acc = X̃ᵀ(y ⊙ c)``; returns ``(worst, Σ(sΔλ + λΔs + ξΔν + νΔξ), Σ(ΔsΔλ + ΔξΔν))``:
        the complementarity after a step α is ``sᵀλ + ξᵀν + α lin + α² quad``."""
        n, k = E.shape
        d = acc.shape[0] - k
        acc[:] = 0.0
        worst, lin, quad = 0.0, 0.0, 0.0
        for a in range(0, n, BLOCK):
            b = min(n, a + BLOCK)
            for i in range(a, b):
                dm_out[i] = y[i] * _dot(X, E, i, dz, d)
            _affine_rows(loss, a, b, y, C, m, s, lam, xi, nu, dm_out, buf)
            for i in range(a, b):
                w = buf[0, i - a]
                worst = w if w > worst else worst
                lin += buf[1, i - a]
                quad += buf[2, i - a]
                _axpy(X, E, i, buf[3, i - a], acc, d)
        return worst, lin, quad

    @numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
    def corrector(X, E, y, C, m, s, lam, xi, nu, dm_aff, tau, dz, dm_out, acc, buf):
        """Corrector pass over the rows (as ``affine``): ``dm_out = y ⊙ X̃Δz``,
        ``acc = X̃ᵀ(y ⊙ Δλ)``; returns ``worst`` (the step to the boundary is
        ``1/max(1, worst)``)."""
        n, k = E.shape
        d = acc.shape[0] - k
        acc[:] = 0.0
        worst = 0.0
        for a in range(0, n, BLOCK):
            b = min(n, a + BLOCK)
            for i in range(a, b):
                dm_out[i] = y[i] * _dot(X, E, i, dz, d)
            _corrector_rows(loss, a, b, y, C, m, s, lam, xi, nu, dm_aff, tau, dm_out, buf)
            for i in range(a, b):
                w = buf[0, i - a]
                worst = w if w > worst else worst
                _axpy(X, E, i, buf[1, i - a], acc, d)
        return worst

    @numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
    def update(y, C, m, s, lam, xi, nu, dm_aff, dm, tau, step, buf, sums, sqD, V):
        """The step: ``m += α Δm``, ``s, λ, ξ, ν += α Δ`` (floored at ``TINY``), in place;
        returns ``(sᵀλ + ξᵀν, ‖r_p‖_∞, ‖r_ξ‖_∞)`` at the new point, and ``sums`` (4,) gets
        ``(Σ C ℓ(max(0, 1 − m)), Σ λ, Σ λ²/(4C), min m)`` for the gap estimate
        (buf: 5×BLOCK); ``sqD`` and ``V`` get ``prepare``'s values at the new point (the next
        iteration's, computed while its rows are in cache)."""
        n = m.shape[0]
        comp, rp_max, rxi_max = 0.0, 0.0, 0.0
        loss_sum, lam_sum, lam2_sum, m_min = 0.0, 0.0, 0.0, np.inf
        for a in range(0, n, BLOCK):
            b = min(n, a + BLOCK)
            _update_rows(loss, a, b, C, m, s, lam, xi, nu, dm_aff, dm, tau, step, buf)
            _prepare_rows(loss, a, b, y, C, m, s, lam, xi, nu, sqD, V)
            for i in range(b - a):
                comp += buf[0, i]
                rp_max = buf[1, i] if buf[1, i] > rp_max else rp_max
                rxi_max = buf[2, i] if buf[2, i] > rxi_max else rxi_max
                loss_sum += buf[3, i]
                lam2_sum += buf[4, i]
                lam_sum += lam[a + i]
                m_min = m[a + i] if m[a + i] < m_min else m_min
        sums[0], sums[1], sums[2], sums[3] = loss_sum, lam_sum, lam2_sum, m_min
        return comp, rp_max, rxi_max

    return Passes(prepare, affine, corrector, update)


class Passes(NamedTuple):
    """The four passes of one loss (jitted functions; ``xi``, ``nu`` are empty arrays but for
    the hinge), built by :func:`_passes_of`:

    - ``prepare(y, C, m, s, lam, xi, nu, sqD, V)``;
    - ``affine(X, E, y, C, m, s, lam, xi, nu, dz, dm_out, acc, buf)`` → ``(worst, lin, quad)``;
    - ``corrector(X, E, y, C, m, s, lam, xi, nu, dm_aff, tau, dz, dm_out, acc, buf)`` →
      ``worst``;
    - ``update(y, C, m, s, lam, xi, nu, dm_aff, dm, tau, step, buf, sums, sqD, V)`` →
      ``(comp, ‖r_p‖_∞, ‖r_ξ‖_∞)``, and ``prepare``'s ``sqD``, ``V`` at the new point.
    """

    prepare: Callable
    affine: Callable
    corrector: Callable
    update: Callable


#: The passes of each loss code.
PASSES = {loss: _passes_of(loss) for loss in (HINGE, SQUARED_HINGE, HARD)}
