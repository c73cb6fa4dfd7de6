"""Low-rank factors of a kernel matrix, ``K ≈ FFᵀ`` with F of shape (n, r'), r' ≤ r ≪ n.

- Nyström [WS01]: ``K ≈ K_{nm} K_{mm}⁺ K_{mn}`` on r landmarks drawn uniformly without
  replacement; ``F = K_{nm} V Λ^{-1/2}`` from the eigendecomposition ``K_mm = VΛVᵀ``, eigenvalues
  below ``10⁻¹² · max`` dropped. O(n r d + n r²).
- Pivoted (incomplete) Cholesky [FS01; HPS12]: column j pivots on the largest diagonal entry of
  the residual ``K − FFᵀ`` and sets ``F_{:,j} = (K_{:,i} − F F_{i,:}ᵀ)/√(K − FFᵀ)_{ii}``;
  stopped at r columns or when the trace of the residual is below ``rtol · trace(K)``. Needs r
  kernel columns; O(n r² + n r d).

A solver given F solves the linear SVM on the features F (kernel FFᵀ); its certified gap then
refers to that approximate kernel, not to K (the barrier solver's ``kernel_approximation``).

References
----------
.. [WS01] C. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines",
   NIPS 2001.
.. [FS01] S. Fine and K. Scheinberg, "Efficient SVM training using low-rank kernel
   representations", JMLR 2001 (pivoted incomplete Cholesky).
.. [HPS12] H. Harbrecht, M. Peters and R. Schneider, "On the low-rank approximation by the
   pivoted Cholesky decomposition", Applied Numerical Mathematics 62(4), 2012 (the trace of
   the residual as the stopping rule).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from svmbench.problems.kernels import kernel_matrix

if TYPE_CHECKING:
    from svmbench.problems.kernel_dual import KernelDual


def _kernel_columns(problem: KernelDual, idx: np.ndarray) -> np.ndarray:
    if problem.kernel == "precomputed":
        return problem.X[:, idx]
    return kernel_matrix(problem.X, problem.X[idx], **problem.kernel_params)


def _kernel_diagonal(problem: KernelDual) -> np.ndarray:
    X, kp = problem.X, problem.kernel_params
    if problem.kernel == "precomputed":
        return np.diag(X).copy()
    if problem.kernel == "rbf":
        return np.ones(problem.n_samples)
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sparse.issparse(X) else (X * X).sum(1)
    if problem.kernel == "linear":
        return sq
    if problem.kernel == "poly":
        return (kp["gamma"] * sq + kp["coef0"]) ** kp["degree"]
    return np.tanh(kp["gamma"] * sq + kp["coef0"])


def nystrom_factor(problem: KernelDual, rank: int, seed: int = 0) -> np.ndarray:
    """Nyström factor F (n×r') with ``K ≈ FFᵀ = K_{nm} K_{mm}⁺ K_{mn}`` on r landmarks drawn
    uniformly without replacement [WS01]; eigenvalues of ``K_mm`` below ``10⁻¹² · max`` are
    dropped (r' ≤ r). O(n r d + n r²)."""
    n = problem.n_samples
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(n, size=min(rank, n), replace=False))
    Knm = _kernel_columns(problem, idx)
    ev, V = np.linalg.eigh(Knm[idx])
    keep = ev > 1e-12 * max(float(ev[-1]), 1e-300)
    return Knm @ (V[:, keep] / np.sqrt(ev[keep]))


def pivoted_cholesky_factor(problem: KernelDual, rank: int, rtol: float = 1e-12) -> np.ndarray:
    """Incomplete Cholesky with greedy diagonal pivoting [FS01; HPS12]: F (n×r') with ``K ≈ FFᵀ``,
    stopped at r columns or when the trace of the residual ``K − FFᵀ`` is below
    ``rtol · trace(K)``. Needs r kernel columns; O(n r² + n r d)."""
    n = problem.n_samples
    r = min(rank, n)
    res = _kernel_diagonal(problem).astype(float)
    total = float(res.sum())
    F = np.zeros((n, r))
    for j in range(r):
        i = int(np.argmax(res))
        if res[i] <= 0 or float(res.sum()) <= rtol * total:
            return F[:, :j].copy()
        col = _kernel_columns(problem, np.array([i]))[:, 0]
        col = col - F[:, :j] @ F[i, :j]
        F[:, j] = col / math.sqrt(res[i])
        res = np.maximum(res - F[:, j] ** 2, 0.0)
        res[i] = 0.0
    return F
