"""Jitted passes of the line-search Newton method for linear ε-SVR (:mod:`solvers.svr_newton`).

The first two read only the rows of the active set ``I = {i : |r_i| > ε}`` (``rows``,
increasing), each row once, dense or CSR (:mod:`solvers._jit.rows`), with the bias column
``x̃_i = (x_i, c)`` kept apart (``has_bias``; ``c`` its value):

- :func:`weighted_rows`: ``out = Σ_k u_k x̃_{rows_k}`` (the gradient's ``X̃_Iᵀu``);
- :func:`hessian_rows`: ``out = Σ_k D_k (x̃_{rows_k}·v) x̃_{rows_k}`` (the generalized Hessian's
  ``X̃_Iᵀ D X̃_I v``, [Ho12] §3), one pass where ``X̃_Iᵀ(D ∘ X̃_I v)`` reads each row twice;

and :func:`line_search` minimizes f along a direction exactly, from the residuals alone.

No ``fastmath``; a dense row's dot product in four partial sums (:func:`rows.row_dot4`).

References
----------
C.-H. Ho, C.-J. Lin. Large-scale linear support vector regression. JMLR 13, 2012.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from svmbench.solvers._jit.rows import row_axpy, row_dot4

#: The line search stops once ``|φ'(t)| ≤ SLOPE_RTOL · |φ'(0)|`` (or its bracket is rounding).
SLOPE_RTOL = 1e-12
#: Safeguarded Newton steps of the line search at most.
MAX_LINE_STEPS = 100


@numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
def weighted_rows(X, rows, u, col, has_bias, out):
    """``out = Σ_k u_k x̃_{rows_k}`` (``out`` of length d + ``has_bias``), in place."""
    out[:] = 0.0
    total = 0.0
    for k in range(rows.shape[0]):
        row_axpy(X, rows[k], u[k], out)
        total += u[k]
    if has_bias:
        out[out.shape[0] - 1] = col * total


@numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
def hessian_rows(X, rows, D, v, col, has_bias, out):
    """``out = Σ_k D_k (x̃_{rows_k}·v) x̃_{rows_k}`` in one pass over the rows, in place."""
    out[:] = 0.0
    last = out.shape[0] - 1
    vb = col * v[last] if has_bias else 0.0
    total = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        z = D[k] * row_dot4(X, i, v, vb)
        row_axpy(X, i, z, out)
        total += z
    if has_bias:
        out[last] = col * total


@numba.njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _slope(t, r, z, C, eps_tube, a0, q0):
    """``φ'(t)`` and ``φ''(t)`` of :func:`line_search` (the second on the piece holding t), without
    branches: which side of the tube each residual lies on is as good as random."""
    d1 = a0 + t * q0
    d2 = q0
    for i in range(r.shape[0]):
        u = r[i] - t * z[i]
        xi = max(abs(u) - eps_tube, 0.0)
        cz = 2.0 * C[i] * z[i]
        d1 -= cz * math.copysign(xi, u)
        d2 += cz * z[i] * (1.0 if xi > 0.0 else 0.0)
    return d1, d2


@numba.njit(cache=True, error_model="numpy", no_cfunc_wrapper=True)
def line_search(r, z, C, eps_tube, a0, q0):
    """The minimizer ``t ≥ 0`` of ``φ(t) = f(v + tδ)`` and the number of slopes evaluated.

    ``φ(t) − φ(0) = a0 t + ½q0 t² + Σ_i C_i [ξ_i(t)² − ξ_i(0)²]``, ``ξ_i(t) = max(0, |r_i − t z_i|
    − ε)``, with ``r = y − X̃v``, ``z = X̃δ``, ``a0 = vᵀRδ``, ``q0 = δᵀRδ``: a convex piecewise
    quadratic whose slope ``φ'`` is increasing and piecewise linear. Newton's method on ``φ'``
    from ``t = 1`` (the Newton step itself, exact when no residual crosses the tube's edge),
    kept inside the bracket ``[lo, hi]`` of the root by bisection; a Newton step within one
    piece lands on the root exactly.
    """
    t = 1.0
    lo, hi = 0.0, np.inf
    slope0, _ = _slope(0.0, r, z, C, eps_tube, a0, q0)
    if not slope0 < 0.0:
        return 0.0, 1
    evaluations = 1
    for _ in range(MAX_LINE_STEPS):
        d1, d2 = _slope(t, r, z, C, eps_tube, a0, q0)
        evaluations += 1
        if abs(d1) <= SLOPE_RTOL * abs(slope0):
            return t, evaluations
        if d1 < 0.0:
            lo = t
        else:
            hi = t
        if hi - lo <= 1e-15 * hi:
            break
        t_next = t - d1 / d2 if d2 > 0.0 else np.inf
        if not lo < t_next < hi:
            t_next = 0.5 * (lo + hi) if hi < np.inf else 2.0 * t
        t = t_next
    return lo, evaluations
