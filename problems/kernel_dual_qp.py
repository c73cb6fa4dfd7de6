"""The kernel dual's dense QP, in OSQP's form (``Problem.to_qp``).

``min ½αᵀQ̃α − Σα_i`` (+ ``Σα_i²/(4C_i)`` for the squared hinge) over the box ``0 ≤ α_i ≤ C_i``
(and ``yᵀα = 0`` for a free bias), ``Q̃_ij = y_i y_j (K_ij + s²)`` (docs/ARCHITECTURE.md §2).
Dense: Q̃ has n² entries, refused beyond ``GRAM_MEMORY_LIMIT_MB`` (``KernelDual.gram``). The
multiplier of the equality row is the free bias b.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from svmbench.problems.base import QP


def kernel_dual_qp(problem) -> QP:
    """The QP of the :class:`~problems.KernelDual` ``problem``; ``recover`` maps its solution
    and multipliers to ``{"alpha", "b"}``."""
    n = problem.n_samples
    K = problem.gram
    if problem.bias == "regularized":
        K = K + problem.bias_scale**2
    Q = K * np.outer(problem.y, problem.y)
    lower, upper = problem.dual_box()
    if problem.loss == "squared_hinge":
        C = problem.upper_bounds
        Q[np.diag_indices(n)] += np.where(C > 0, 1.0 / (2.0 * np.maximum(C, 1e-300)), 0.0)
    P = sparse.triu(sparse.csc_matrix(Q), format="csc")
    rows, lo, up = [sparse.identity(n, format="csc")], [lower], [upper]
    if problem.bias == "free":
        rows.append(sparse.csc_matrix(problem.y[None, :]))
        lo.append(np.zeros(1))
        up.append(np.zeros(1))
    A = sparse.vstack(rows, format="csc")

    def recover(x, y_mult):
        b = float(y_mult[-1]) if problem.bias == "free" else None
        return {"alpha": x, "b": b}

    return QP(P, -np.ones(n), A, np.concatenate(lo), np.concatenate(up), recover, sense="dual")
