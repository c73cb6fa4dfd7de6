"""Low-rank factors of a kernel matrix, ``K ≈ FFᵀ`` with F of shape (n, r'), r' ≤ r ≪ n, and the
bounds they give on the exact kernel problem.

- Nyström [WS01]: ``K ≈ K_{nm} K_{mm}⁺ K_{mn}`` on r landmarks drawn uniformly without
  replacement; ``F = K_{nm} V Λ^{-1/2}`` from the eigendecomposition ``K_mm = VΛVᵀ``, eigenvalues
  below ``10⁻¹² · max`` dropped. O(n r d + n r²), built in row blocks (``K_nm`` never whole).
- Pivoted (incomplete) Cholesky [FS01; HPS12]: column j pivots on the largest diagonal entry of
  the residual ``K − FFᵀ`` and sets ``F_{:,j} = (K_{:,i} − F F_{i,:}ᵀ)/√(K − FFᵀ)_{ii}``;
  stopped at r columns or when the trace of the residual is below ``rtol · trace(K)``. Needs r
  kernel columns; O(n r² + n r d).

Both are ``F = K(X, Z) T`` for landmarks ``Z`` (the Nyström sample, the Cholesky pivots) and an
m×r' matrix T (``V Λ^{-1/2}``, or ``L⁻ᵀ`` with ``L = F_{P,:}`` lower triangular and
``K_PP = LLᵀ``), with ``Tᵀ K_ZZ T = I``. A linear model ``w`` on F is therefore the RKHS function
``f = Σ_j c_j K(z_j, ·)``, ``c = T w``, with ``f(x_i) = (Fw)_i`` and ``‖f‖²_H = cᵀK_ZZ c = ‖w‖²``:
its value in the exact primal (:func:`landmark_model_primal`) bounds the exact optimum from
above, whatever n. A solver given F solves the linear SVM on the features F (kernel FFᵀ); its
certified gap then refers to that approximate kernel, not to K.

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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import solve_triangular

from svmbench.problems._linear import optimal_bias
from svmbench.problems.kernels import kernel_dot, kernel_matrix

if TYPE_CHECKING:
    from svmbench.problems.kernel_dual import KernelDual

#: Kernel entries computed at once while F is built in row blocks (32 MB of float64).
BLOCK_ENTRIES = 1 << 22


@dataclass(frozen=True, eq=False)
class LandmarkFactor:
    """``F = K(X, X[landmarks]) @ T`` (n×r'), with ``Tᵀ K_ZZ T = I``.

    ``T`` is ``transform`` for Nyström; for pivoted Cholesky ``transform`` holds the lower
    triangular ``L = F[landmarks]`` and ``T = L⁻ᵀ`` is applied by triangular solves."""

    F: np.ndarray
    landmarks: np.ndarray
    transform: np.ndarray
    approximation: str

    @property
    def rank(self) -> int:
        return self.F.shape[1]

    def coefficients(self, w: np.ndarray) -> np.ndarray:
        """``c = T w``: the landmarks' coefficients of the RKHS function ``x ↦ w·φ(x)``."""
        w = np.asarray(w, dtype=np.float64)
        if self.approximation == "nystrom":
            return self.transform @ w
        return solve_triangular(self.transform, w, trans="T", lower=True)


def _kernel_block(problem: KernelDual, rows, idx: np.ndarray) -> np.ndarray:
    """``K(X[rows], X[idx])``; ``rows`` a slice or an index array."""
    if problem.kernel == "precomputed":
        return np.asarray(problem.X[rows][:, idx])
    return kernel_matrix(problem.X[rows], problem.X[idx], **problem.kernel_params)


def _kernel_columns(problem: KernelDual, idx: np.ndarray) -> np.ndarray:
    return _kernel_block(problem, slice(None), idx)


def _nystrom_transform(problem: KernelDual, idx: np.ndarray) -> np.ndarray:
    """``T = V Λ^{-1/2}`` over the eigenpairs of ``K_mm`` above ``10⁻¹² · max``."""
    ev, V = np.linalg.eigh(_kernel_block(problem, idx, idx))
    keep = ev > 1e-12 * max(float(ev[-1]), 1e-300)
    return V[:, keep] / np.sqrt(ev[keep])


def nystrom(problem: KernelDual, landmarks: np.ndarray) -> LandmarkFactor:
    """The Nyström factor on the given landmarks [WS01], built in row blocks of at most
    :data:`BLOCK_ENTRIES` kernel entries: peak memory F plus one block."""
    idx = np.sort(np.asarray(landmarks, dtype=np.int64))
    T = _nystrom_transform(problem, idx)
    n = problem.n_samples
    F = np.empty((n, T.shape[1]))
    step = max(1, BLOCK_ENTRIES // max(1, idx.size))
    for start in range(0, n, step):
        stop = min(n, start + step)
        np.matmul(_kernel_block(problem, slice(start, stop), idx), T, out=F[start:stop])
    return LandmarkFactor(F, idx, T, "nystrom")


def pivoted_cholesky(problem: KernelDual, rank: int, rtol: float = 1e-12) -> LandmarkFactor:
    """Incomplete Cholesky with greedy diagonal pivoting [FS01; HPS12], as a
    :class:`LandmarkFactor` whose landmarks are the pivots: stopped at r columns or when the
    trace of the residual ``K − FFᵀ`` is below ``rtol · trace(K)``."""
    n = problem.n_samples
    r = min(rank, n)
    res = problem.kernel_diagonal.copy()
    total = float(res.sum())
    F = np.zeros((n, r))
    pivots = np.zeros(r, dtype=np.int64)
    j = 0
    while j < r:
        i = int(np.argmax(res))
        if res[i] <= 0 or float(res.sum()) <= rtol * total:
            break
        col = _kernel_columns(problem, np.array([i]))[:, 0]
        col = col - F[:, :j] @ F[i, :j]
        F[:, j] = col / math.sqrt(res[i])
        res = np.maximum(res - F[:, j] ** 2, 0.0)
        res[i] = 0.0
        pivots[j] = i
        j += 1
    F = F[:, :j].copy() if j < r else F
    return LandmarkFactor(F, pivots[:j], np.ascontiguousarray(F[pivots[:j]]), "cholesky")


def relative_trace_residual(problem: KernelDual, F: np.ndarray, rows=None) -> float:
    """``tr(K − FFᵀ)/tr(K)`` over all examples (or over ``rows``, F being their rows)."""
    diag = problem.kernel_diagonal if rows is None else problem.kernel_diagonal[rows]
    total = float(diag.sum())
    return float((diag.sum() - np.einsum("ij,ij->", F, F)) / total) if total > 0 else 0.0


def nystrom_rank_rule(
    problem: KernelDual, *, target: float, max_rank: int, sample_size: int, seed: int
) -> tuple[np.ndarray, float, list[tuple[int, float]]]:
    """The landmarks of the Nyström factor by the doubling rule.

    Landmarks are the first r of one seeded permutation of the examples (nested as r grows);
    r = 16, 32, 64, … up to ``max_rank``, stopping at the first r whose relative trace residual
    ``tr(K − FFᵀ)/tr(K)``, estimated on a seeded uniform sample of ``sample_size`` examples
    (all of them when n ≤ sample_size: then exact), is ≤ ``target``. Returns the landmarks, the
    estimate at the chosen r and every (r, estimate) tried. O(sample · r · d + r³) per try."""
    n = problem.n_samples
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    sample = np.sort(rng.choice(n, size=min(sample_size, n), replace=False))
    cap = min(max_rank, n)
    r = min(16, cap)
    tried: list[tuple[int, float]] = []
    while True:
        idx = np.sort(order[:r])
        T = _nystrom_transform(problem, idx)
        Fs = _kernel_block(problem, sample, idx) @ T
        estimate = relative_trace_residual(problem, Fs, sample)
        tried.append((r, estimate))
        if estimate <= target or r >= cap:
            return idx, estimate, tried
        r = min(2 * r, cap)


def landmark_model_primal(
    problem: KernelDual,
    landmarks: np.ndarray,
    coef: np.ndarray,
    *,
    bias_weight: float = 0.0,
) -> tuple[float, float]:
    """The exact primal value on K of ``f(x) = Σ_j c_j K(z_j, x) + b`` (``z_j`` the landmarks):
    ``½ cᵀK_ZZ c + Σ_i C_i loss(y_i f(x_i))``, plus ``½ w_b²`` with ``b = s·w_b`` for a
    regularized bias (``bias_weight`` is ``w_b``); a free b is the exact minimizer, none is 0.
    Any such f is a primal point of the kernel problem, so the value bounds its optimum P* from
    above. Returns ``(value, b)``. O(n m d) with the fused kernel product, m = len(landmarks)."""
    if problem.kernel == "precomputed":
        raise TypeError("landmark_model_primal needs the examples' features, not a Gram matrix")
    idx = np.asarray(landmarks, dtype=np.int64)
    c = np.asarray(coef, dtype=np.float64)
    Z = problem.X[idx]
    kp = problem.kernel_params
    norm2 = max(0.0, float(c @ (kernel_matrix(Z, Z, **kp) @ c)))
    sqn = problem.squared_norms if problem.kernel == "rbf" else None
    f = kernel_dot(problem.X, Z, c, sqn_X=sqn, sqn_Z=None if sqn is None else sqn[idx], **kp)
    quad = 0.5 * norm2
    if problem.bias == "none":
        b = 0.0
    elif problem.bias == "regularized":
        b = problem.bias_scale * float(bias_weight)
        quad += 0.5 * float(bias_weight) ** 2
    else:
        b = optimal_bias(f, problem.y, problem.upper_bounds, problem.loss)
    return quad + problem._loss_term(problem.y * (f + b)), b
