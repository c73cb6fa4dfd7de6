"""The Newton systems of the interior-point methods and their linear algebra.

Rows ``x̃_i = (x_i, e_i)``: X (dense or CSR, n×d) and k dense extra columns E (the bias column,
phase I's s), never assembled (:class:`Features`); ``P = diag(p)``; ``Q̃ = Q + diag(δ)``.

- Primal forms: the normal system ``H x = a + X̃ᵀb``, ``H = diag(p) + X̃ᵀ D X̃`` (D > 0), and
  ``q = b − D ⊙ X̃x`` (:func:`normal_solver`). On the barrier path it is Newton's system
  ``t P + X̃ᵀ D X̃``, ``D = diag(g'')``, exactly the Schur complement onto ``(w, b)`` of the
  Hessian in ``(w, b, ξ)``, whose ξ-block is diagonal; in the primal-dual variant the normal
  system ``(P + X̃ᵀDX̃) Δz = −r_z + Aᵀg`` (t = 1). Cost O(n d²) per Newton step; when d > n,
  O(n²d + n³) through the n×n system of the multipliers.
- Duals: ``H = tQ̃ + diag(h)`` (:func:`dual_hessian_solver`). The equality ``yᵀα = 0`` is kept
  in Newton's KKT system ``[H y; yᵀ 0][Δ; ν] = [−∇ψ; 0]`` [BV, §10.2], solved by two solves
  with ``H``: dense Cholesky of H (n×n), or, for ``Q̃ = GGᵀ`` of rank r (linear features, or a
  Nyström / pivoted-Cholesky kernel factor), the Woodbury identity
  ``H⁻¹ = h⁻¹ − h⁻¹G(I/t + Gᵀh⁻¹G)⁻¹Gᵀh⁻¹`` in O(n r²). The primal-dual variant factors H once
  per iteration (t = 1) and uses it for three solves.
- A Cholesky factorization that fails is retried with a growing ridge
  ``10⁻¹⁴ … 10⁻⁸ · max diag(H)`` (round-off in a nearly singular Schur complement)
  (:func:`cholesky`).

References
----------
.. [BV] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004,
   ch. 10 (equality constraints) and ch. 11 (barrier method).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla
from scipy import sparse

if TYPE_CHECKING:
    from svmbench.solvers.barrier.forms import DualState

#: Bytes of X per block when forming X̃ᵀDX̃ of a dense X: the scaled copy stays in cache (faster
#: than blocks of 10 MB: docs/measurements.md, "barrier").
GRAM_BLOCK_BYTES = 2**20


# ---- the rows X̃ and the normal system of the primal forms ---------------------------------------
class Features:
    """The rows ``x̃_i = (x_i, e_i)``: X (dense or CSR, n×d) and k dense extra columns E (n×k).

    Provides ``X̃ z``, ``X̃ᵀ u`` and ``X̃ᵀ D X̃`` without ever building ``[X E]``.
    """

    def __init__(self, X, E: np.ndarray | None = None):
        self.X = X
        self.sparse = sparse.issparse(X)
        self.n, self.d = X.shape
        self.E = np.zeros((self.n, 0)) if E is None else np.ascontiguousarray(E, dtype=float)
        self.k = self.E.shape[1]
        self._xxt = None

    @property
    def dim(self) -> int:
        return self.d + self.k

    def with_column(self, col: np.ndarray) -> Features:
        """The same rows with one more extra column."""
        return Features(self.X, np.column_stack([self.E, col]))

    def dot(self, z: np.ndarray) -> np.ndarray:
        """``X̃ z``."""
        out = np.asarray(self.X @ z[: self.d]).ravel()
        if self.k:
            out = out + self.E @ z[self.d :]
        return out

    def tdot(self, u: np.ndarray) -> np.ndarray:
        """``X̃ᵀ u``."""
        top = np.asarray(self.X.T @ u).ravel()
        return np.concatenate([top, self.E.T @ u]) if self.k else top

    def gram(self, D: np.ndarray) -> np.ndarray:
        """``X̃ᵀ diag(D) X̃`` ((d+k)×(d+k)), D ≥ 0 (:meth:`gram_tdot` with ``√D``)."""
        return self.gram_tdot(np.sqrt(D))[0]

    def gram_tdot(self, sq: np.ndarray, V: np.ndarray | None = None):
        """``(X̃ᵀ diag(sq²) X̃, X̃ᵀV)`` (the second None without V, n×c) in one pass over X: BLAS
        ``YᵀY`` with ``Y = sq ⊙ X`` and ``YᵀF``, ``FᵀF`` with ``F = sq ⊙ E``, in row blocks of
        ``GRAM_BLOCK_BYTES``, and ``X̃ᵀV`` on each block while it is in cache."""
        X, d, k = self.X, self.d, self.k
        H = np.zeros((self.dim, self.dim))
        XtV = None if V is None else np.zeros((self.dim, V.shape[1]))
        if self.sparse:
            Y = sparse.diags(sq) @ X
            H[:d, :d] = (Y.T @ Y).toarray()
            if k:
                F = sq[:, None] * self.E
                H[:d, d:] = np.asarray(Y.T @ F).reshape(d, k)
                H[d:, d:] = F.T @ F
            if V is not None:
                XtV[:d] = np.asarray(X.T @ V).reshape(d, -1)
                XtV[d:] = self.E.T @ V
        else:
            rows = max(256, GRAM_BLOCK_BYTES // (8 * max(d, 1)))
            for a in range(0, self.n, rows):
                s = sq[a : a + rows, None]
                Xa = X[a : a + rows]
                Y = Xa * s
                H[:d, :d] += Y.T @ Y
                if k:
                    F = self.E[a : a + rows] * s
                    H[:d, d:] += Y.T @ F
                    H[d:, d:] += F.T @ F
                if V is not None:
                    Va = V[a : a + rows]
                    XtV[:d] += Xa.T @ Va
                    if k:
                        XtV[d:] += self.E[a : a + rows].T @ Va
        H[d:, :d] = H[:d, d:].T
        return H, XtV

    def xxt(self) -> np.ndarray:
        """``XXᵀ`` (n×n), computed once (the Woodbury form when d > n)."""
        if self._xxt is None:
            G = self.X @ self.X.T
            self._xxt = np.asarray(G.toarray() if sparse.issparse(G) else G)
        return self._xxt


def newton_flops(feat: Features | None, Q: np.ndarray | None) -> tuple[float, int]:
    """The flops of forming and factoring one Newton system, and its order m: a dense Q,
    ``m³/3 + m²``; rows X̃ (n×dim), the order ``m = min(n, dim)`` system (``X̃ᵀDX̃`` or ``XXᵀ``),
    ``m³/3 + 2m²`` plus its product, ``2·n·dim·m`` for dense rows and ``nnz²/n`` (the pairs of
    non-zeros within a row, on average) for sparse ones."""
    if Q is not None:
        m = Q.shape[0]
        return m**3 / 3.0 + m * m, m
    n, dim = feat.n, feat.dim
    m = min(n, dim)
    product = feat.X.nnz**2 / max(n, 1) + 2.0 * n * feat.k * m if feat.sparse else 2.0 * n * dim * m
    return m**3 / 3.0 + 2.0 * m * m + product, m


def cholesky(H: np.ndarray):
    """``cho_factor`` of a symmetric positive definite H; on failure a growing ridge
    ``10⁻¹⁴ … 10⁻⁸ · max diag(H)`` is added (round-off in a nearly singular Schur complement)."""
    try:
        return sla.cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    scale = max(float(np.max(np.abs(np.diag(H)))), 1e-300)
    for rel in (1e-14, 1e-12, 1e-10, 1e-8):
        try:
            return sla.cho_factor(H + rel * scale * np.eye(H.shape[0]), lower=True)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("the Newton system is not positive definite")


def normal_solver(feat: Features, D: np.ndarray, p: np.ndarray):
    """Factor the normal system of the primal forms ``H = diag(p) + X̃ᵀ D X̃`` (D > 0) once.

    Returns ``solve(a, b, rhs=None) -> (x, q, X̃x)`` with ``H x = a + X̃ᵀb`` (``rhs`` may pass
    that sum when the caller has it) and ``q = b − D ⊙ X̃x``: x is a Newton step of the primal
    variables, ``y ⊙ q`` the multipliers (barrier) or their step (primal-dual) that the slack
    rows give back. In block form ``diag(p) x − X̃ᵀq = a``, ``X̃x + D⁻¹q = D⁻¹b``.

    d ≤ n: dense Cholesky of the (d+k)×(d+k) matrix H, O(n d²), then ``q = b − D ⊙ X̃x``.
    d > n: the n×n system for q, ``M q = p_w D⁻¹b − X a_w − p_w E x_e`` with
    ``M = p_w D⁻¹ + XXᵀ`` (O(n²d + n³)), then ``x_w = (a_w + Xᵀq)/p_w``; the k extra columns
    (bias, phase I's s) by the Schur complement ``S = diag(p_e) + p_w EᵀM⁻¹E``,
    ``S x_e = a_e + Eᵀq₀`` (``q₀`` the solution for ``x_e = 0``): no Woodbury form around the
    singular block ρ = 0 of a free bias. Solving for q, rather than forming
    ``A⁻¹ = (I − XᵀM⁻¹X)/p_w`` on the w-block, avoids the cancellation of that difference when
    D spans many decades late in a solve, which left the multipliers only a few digits
    (docs/measurements.md, "barrier").
    """
    d = feat.d
    if d <= feat.n:
        H = feat.gram(D)
        H[np.diag_indices_from(H)] += p
        cf = cholesky(H)

        def solve_small(a, b, rhs=None):
            if rhs is None:
                rhs = a + feat.tdot(b)
            x = sla.cho_solve(cf, rhs, check_finite=False)
            Xx = feat.dot(x)
            return x, b - D * Xx, Xx

        return solve_small
    pw = float(p[0])
    X = feat.X
    cf = cholesky(feat.xxt() + np.diag(pw / D))  # M = p_w D⁻¹ + XXᵀ (n×n)

    def m_inv(V):
        return sla.cho_solve(cf, V, check_finite=False)

    def x_dot(v):
        out = X @ v
        return out.toarray().ravel() if sparse.issparse(out) else np.asarray(out).ravel()

    if feat.k:
        MiE = m_inv(feat.E)
        cs = cholesky(np.diag(p[d:]) + pw * (feat.E.T @ MiE))

    def solve_large(a, b, rhs=None):
        q = m_inv(pw * b / D - x_dot(a[:d]))
        x_e = np.zeros(0)
        if feat.k:
            x_e = sla.cho_solve(cs, a[d:] + feat.E.T @ q, check_finite=False)
            q = q - pw * (MiE @ x_e)
        x_w = (a[:d] + np.asarray(X.T @ q).ravel()) / pw
        x = np.concatenate([x_w, x_e])
        return x, q, feat.dot(x)

    return solve_large


# ---- the Newton system of the duals --------------------------------------------------------------
def dense_hessian_solver(Q: np.ndarray, h: np.ndarray, t: float = 1.0):
    """A function applying ``H⁻¹``, ``H = tQ + diag(h)`` (Q dense, PSD; h > 0): one Cholesky
    factor (:func:`cholesky`, with its ridge retries) and two steps of iterative refinement."""
    H = t * Q
    H[np.diag_indices_from(H)] += h
    cf = cholesky(H)

    def refined(v):
        # late in the path H = tQ + diag(h) spans ~16 orders of magnitude: two steps of
        # iterative refinement (O(n²) each) give the direction the digits that the BLAS
        # kernel's rounding would otherwise decide (AVX2 and AVX-512 diverged without them)
        x = sla.cho_solve(cf, v, check_finite=False)
        for _ in range(2):
            x = x + sla.cho_solve(cf, v - H @ x, check_finite=False)
        return x

    return refined


def dual_hessian_solver(state: DualState, h: np.ndarray):
    """A function applying ``H⁻¹``, ``H = tQ + diag(h)``: dense Cholesky, or Woodbury
    ``H⁻¹ = h⁻¹ − h⁻¹G(I/t + Gᵀh⁻¹G)⁻¹Gᵀh⁻¹`` (O(n r²)) for ``Q = GGᵀ``."""
    t = state.t
    if state.Q is not None:
        return dense_hessian_solver(state.Q, h, t)
    feat, y = state.feat, state.y
    hinv = 1.0 / h
    M = feat.gram(hinv)
    M[np.diag_indices_from(M)] += 1.0 / t
    cf = cholesky(M)

    def woodbury(v):
        w = hinv * v
        corr = feat.dot(sla.cho_solve(cf, feat.tdot(y * w), check_finite=False))
        return w - hinv * (y * corr)

    def solve_one(v):
        # Woodbury loses digits when h spans many orders of magnitude (late outer steps): two
        # steps of iterative refinement on the residual v − Hx, with Hx = t·y⊙F(Fᵀ(y⊙x)) + h⊙x.
        x = woodbury(v)
        for _ in range(2):
            x = x + woodbury(v - (t * (y * feat.dot(feat.tdot(y * x))) + h * x))
        return x

    return lambda V: np.column_stack([solve_one(v) for v in V.T]) if V.ndim == 2 else solve_one(V)
