"""The problem forms as the interior-point methods see them, shared by the barrier path and the
primal-dual variant: the rows of the primal forms, the box QP of the duals.

Formulations (docs/ARCHITECTURE.md §2; ``x̃_i = (x_i, 1)`` for a free bias, ``(x_i, s)`` for a
regularized one, ``x_i`` for none; ``z = (w, b)`` or ``(w, w_b)``; ``m_i = y_i x̃_i·z``):

- Primal forms (soft margin, hard margin): the rows ``x̃_i`` and the regularization pattern
  ``P = diag(p)``, p = 1 for w and w_b, 0 for a free b (:func:`linear_features`), restricted to
  the examples with ``C_i > 0`` (:func:`active_rows`: the others do not enter the problem);
  ``(w, b)`` from z by :func:`split_z`.
- Duals (soft-margin dual, kernel dual): the box QP ``min ½αᵀQ̃α − Σα_i``, ``Q̃ = Q + diag(δ)``,
  ``0 ≤ α_i ≤ u_i``, with ``yᵀα = 0`` for a free bias; ``u = C``, δ = 0 for the hinge,
  ``u = ∞``, ``δ_i = 1/(2C_i)`` for the squared hinge; ``Q_ij = y_i y_j K(x_i, x_j)`` (``+ s²``
  for a regularized bias). Q is dense, or ``Q = GGᵀ`` with ``G = diag(y) X̃`` for a linear dual
  whose Woodbury step costs fewer flops than the dense one (:func:`dense_dual_is_cheaper`,
  :class:`DualState`, :func:`dual_qp`). ``u − α`` is stored separately from α: near the upper
  bound it is far below the resolution of α.

A kernel dual with a factor ``K ≈ FFᵀ`` (``kernel_approximation``) is solved by
:mod:`solvers.low_rank`, with the barrier on the linear SVM on F.

References
----------
.. [BV] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004,
   §11.3.1 (the initial barrier parameter).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from svmbench.problems import HardMarginPrimal, SoftMarginDual
from svmbench.solvers.barrier.normal_equations import Features


def dense_dual_is_cheaper(n: int, r: int) -> bool:
    """Whether a Newton step of a linear dual (n examples, features of rank r) costs fewer
    flops with the dense ``tQ + diag(h)`` than with the Woodbury form of ``tGGᵀ + diag(h)``.

    Dense: ``Q = GGᵀ`` once (n²r), then per step the Cholesky factor (n³/3) and three solves
    with refinement (≈ 6n²). Woodbury: per step ``Gᵀh⁻¹G`` (n r²), its factor (r³/3) and three
    refined solves with two right-hand sides (≈ 12 n r). Chosen by cost, not by a size
    threshold, which made the dual far slower just below it (docs/measurements.md, "barrier").
    """
    dense = n**3 / 3.0 + 6.0 * n * n
    woodbury = n * r * r + r**3 / 3.0 + 12.0 * n * r
    return dense <= woodbury


# ---- primal forms --------------------------------------------------------------------------------
def linear_features(problem) -> tuple[Features, np.ndarray]:
    """Rows ``x̃_i`` and the regularization pattern p (1 for w and w_b, 0 for a free b)."""
    n, d = problem.n_samples, problem.n_features
    if problem.bias == "free":
        return Features(problem.X, np.ones((n, 1))), np.append(np.ones(d), 0.0)
    if problem.bias == "regularized":
        E = np.full((n, 1), problem.bias_scale)
        return Features(problem.X, E), np.ones(d + 1)
    return Features(problem.X), np.ones(d)


def split_z(problem, z) -> tuple[np.ndarray, float]:
    d = problem.n_features
    if problem.bias == "free":
        return z[:d], float(z[d])
    if problem.bias == "regularized":
        return z[:d], problem.bias_scale * float(z[d])
    return z[:d], 0.0


def active_rows(problem):
    """Rows ``x̃_i`` of the examples with ``C_i > 0``, the regularization pattern p, their labels,
    their ``C_i`` (all 1 for the hard margin) and the mask of those examples."""
    feat, p = linear_features(problem)
    hard = isinstance(problem, HardMarginPrimal)
    C = np.ones(problem.n_samples) if hard else problem.upper_bounds
    y = problem.y
    active = C > 0
    if not np.all(active):  # C_i = 0: the example does not enter the problem
        X = problem.X[active]
        feat = Features(X, feat.E[active] if feat.k else None)
        C, y = C[active], y[active]
    return feat, p, y, C, active


# ---- dual forms ----------------------------------------------------------------------------------
@dataclass
class DualState:
    """Barrier state of the box QP ``min ½αᵀQα + ½Σδα² − Σα``, ``0 < α < u`` (+ ``yᵀα = 0``).

    Q is given dense (``Q``) or as ``Q = GGᵀ`` with ``G = diag(y) F`` (``feat``).
    """

    y: np.ndarray
    u: np.ndarray
    delta: np.ndarray
    equality: bool
    Q: np.ndarray | None
    feat: Features | None
    alpha: np.ndarray
    t: float
    mu: float
    n_constraints: int
    active: np.ndarray
    n_all: int
    t_center: float = math.nan
    Qa: np.ndarray = field(default=None, repr=False)
    #: ``u − α`` kept as its own array (updated by the same steps): near the upper bound
    #: ``C − α`` is far below the resolution of α itself (C · 2⁻⁵² = 2e-14 for C = 100).
    slack: np.ndarray = field(default=None, repr=False)
    previous_center: np.ndarray | None = field(default=None, repr=False)
    newton_steps: int = 0
    outer_steps: int = 0
    stalled: bool = False

    def q_times(self, v: np.ndarray) -> np.ndarray:
        if self.Q is not None:
            return self.Q @ v
        return self.y * self.feat.dot(self.feat.tdot(self.y * v))

    def objective(self) -> float:
        a = self.alpha
        return float(0.5 * a @ self.Qa + 0.5 * self.delta @ (a * a) - a.sum())


def _dual_start(y: np.ndarray, C: np.ndarray, equality: bool) -> np.ndarray:
    """A strictly feasible α: ``α_i = κ C_i / S_{y_i}`` with ``S_± = Σ_{y_i=±1} C_i`` and
    ``κ = ½ min(S₊, S₋)``, so that ``yᵀα = 0`` and ``0 < α_i ≤ C_i/2``."""
    if not equality:
        return 0.5 * C
    S_pos, S_neg = C[y > 0].sum(), C[y < 0].sum()
    kappa = 0.5 * min(S_pos, S_neg)
    return kappa * C / np.where(y > 0, S_pos, S_neg)


def dual_qp(problem, t0: float, mu: float) -> DualState:
    """The box QP of a soft-margin or kernel dual (examples with ``C_i > 0``) at its strictly
    feasible start (:func:`_dual_start`), with the barrier path's t₀ and μ."""
    C_all = problem.upper_bounds
    active = C_all > 0
    y = problem.y[active]
    C = C_all[active]
    hinge = problem.loss == "hinge"
    equality = problem.bias == "free"
    n = len(y)
    Q, feat = None, None
    if isinstance(problem, SoftMarginDual):
        fe, _ = linear_features(problem)
        X = problem.X[active] if not np.all(active) else problem.X
        E = fe.E[active] if problem.bias == "regularized" else None
        feat = Features(X, E)
        if dense_dual_is_cheaper(n, feat.dim):
            G = feat.X @ feat.X.T
            Q = np.asarray(G.toarray() if sparse.issparse(G) else G)
            if feat.k:
                Q += feat.E @ feat.E.T
            Q *= np.outer(y, y)
            feat = None
    else:
        K = problem.gram if np.all(active) else problem.gram[np.ix_(active, active)]
        Q = K + problem.bias_scale**2 if problem.bias == "regularized" else K.copy()
        Q *= np.outer(y, y)
    delta = np.zeros(n) if hinge else 1.0 / (2.0 * C)
    u = C.copy() if hinge else np.full(n, np.inf)
    alpha = _dual_start(y, C, equality)
    n_cons = (2 if hinge else 1) * n
    state = DualState(
        y=y,
        u=u,
        delta=delta,
        equality=equality,
        Q=Q,
        feat=feat,
        alpha=alpha,
        t=1.0,
        mu=mu,
        n_constraints=n_cons,
        active=active,
        n_all=problem.n_samples,
    )
    state.Qa = state.q_times(alpha)
    state.slack = u - alpha
    # [BV §11.3.1]: m/t₀ of the order of f₀(α₀) − p*, and p* ≥ −Σ C_i (½αᵀQα ≥ 0, and
    # α²/(4C) − α ≥ −C for the squared hinge), so f₀(α₀) + Σ C_i bounds that difference.
    state.t = t0 * n_cons / max(1.0, state.objective() + float(C.sum()))
    return state
