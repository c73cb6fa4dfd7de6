"""Jitted passes of the trust-region Newton method for linear ε-SVR (:mod:`solvers.svr_newton`).

Both read only the rows of the active set ``I = {i : |r_i| > ε}`` (``rows``, increasing), each
row once, dense or CSR (:mod:`solvers._jit.rows`), with the bias column ``x̃_i = (x_i, c)`` kept
apart (``has_bias``; ``c`` its value):

- :func:`weighted_rows`: ``out = Σ_k u_k x̃_{rows_k}`` (the gradient's ``X̃_Iᵀu``);
- :func:`hessian_rows`: ``out = Σ_k D_k (x̃_{rows_k}·v) x̃_{rows_k}`` (the generalized Hessian's
  ``X̃_Iᵀ D X̃_I v``, [Ho12] §3), one pass where ``X̃_Iᵀ(D ∘ X̃_I v)`` reads each row twice.

No ``fastmath``; a dense row's dot product in four partial sums (:func:`rows.row_dot4`).

References
----------
C.-H. Ho, C.-J. Lin. Large-scale linear support vector regression. JMLR 13, 2012.
"""

from __future__ import annotations

import numba

from svmbench.solvers._jit.rows import row_axpy, row_dot4


@numba.njit(cache=True, error_model="numpy")
def weighted_rows(X, rows, u, col, has_bias, out):
    """``out = Σ_k u_k x̃_{rows_k}`` (``out`` of length d + ``has_bias``), in place."""
    out[:] = 0.0
    total = 0.0
    for k in range(rows.shape[0]):
        row_axpy(X, rows[k], u[k], out)
        total += u[k]
    if has_bias:
        out[out.shape[0] - 1] = col * total


@numba.njit(cache=True, error_model="numpy")
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
