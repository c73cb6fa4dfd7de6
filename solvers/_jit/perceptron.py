"""Jitted epochs of the perceptron (Rosenblatt 1958), plain and averaged (Freund & Schapire 1999).

One call visits the examples ``order`` once. With ``x̃_i = (x_i, s)`` (``s`` the constant bias
feature; no extra coordinate when ``s = 0``), a mistake is ``y_i w̃·x̃_i ≤ 0`` (the lecture's
``(a·x + b)·u ≤ 0``) and its correction is ``w̃ ← w̃ + μ y_i x̃_i``.

Averaging over every example seen, lazily (Daumé's trick): after ``T`` steps
``Σ_{t=1}^T w̃_t = T w̃_T − Σ_k (t_k − 1) Δ_k`` over the corrections ``Δ_k`` made at steps
``t_k``, so keeping ``u = Σ_k (t_k − 1) Δ_k`` gives the average ``w̄ = w̃_T − u/T`` at O(nnz) per
mistake.
"""

from __future__ import annotations

import numba

from svmbench.solvers._jit.rows import row_axpy, row_dot


@numba.njit(cache=True, no_cfunc_wrapper=True)
def perceptron_epoch(X, y, order, mu, s, t0, averaged, w, u):
    """One perceptron epoch; returns the number of mistakes. A step costs O(nnz(x_i)).

    Parameters
    ----------
    X : dense rows (n_samples, n_features), C-contiguous float64, or the CSR tuple
        ``(indptr, indices, data)`` (:mod:`solvers._jit.rows`)
    y : ndarray of shape (n_samples,), labels ±1
    order : ndarray of int64, the examples in visiting order
    mu : float, learning rate μ (τ in the lecture)
    s : float, constant bias feature (0: ``w`` has no bias coordinate)
    t0 : int, examples seen before this epoch (for the averaging weights)
    averaged : bool, keep ``u`` for the averaged perceptron
    w : ndarray of shape (n_features + (s > 0),), updated in place
    u : ndarray like ``w``, updated in place when ``averaged``
    """
    has_wb = s > 0.0
    d = w.shape[0] - 1 if has_wb else w.shape[0]
    mistakes = 0
    for r in range(order.shape[0]):
        i = order[r]
        f = row_dot(X, i, w, 0.0)
        if has_wb:
            f += s * w[d]
        if y[i] * f <= 0.0:  # a mistake (or on the hyperplane)
            g = mu * y[i]
            row_axpy(X, i, g, w)
            if has_wb:
                w[d] += g * s
            if averaged:
                gt = g * (t0 + r)  # (t_k − 1) Δ_k with t_k = t0 + r + 1
                row_axpy(X, i, gt, u)
                if has_wb:
                    u[d] += gt * s
            mistakes += 1
    return mistakes
