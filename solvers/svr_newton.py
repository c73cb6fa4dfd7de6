"""Trust-region Newton for linear ε-SVR with the squared ε-insensitive loss, every bias (Ho & Lin
2012 §3; the method of Lin, Weng & Keerthi 2008; LIBLINEAR's ``-s 11``).

Problem: :class:`~svmbench.problems.SVRPrimal` with ``loss="squared_epsilon_insensitive"``, over
``v = (w, β)`` where the bias column of ``X̃`` holds ``s = bias_scale`` and ``b = s·β`` for a
regularized bias (regularized as ``½β²``), 1 and ``b = β`` for a free one (not regularized), and
is absent for ``bias="none"``; with the residuals ``r = y − X̃v`` and the active set
``I = {i : |r_i| > ε}``::

    f(v) = ½ vᵀRv + Σ_i C_i max(0, |r_i| − ε)²,   R = diag(1, …, 1, [1 or 0]),
    ∇f = Rv − 2 X̃ᵀ(C ∘ sign(r) ∘ max(0, |r| − ε)),
    ∇²f = R + 2 X̃_Iᵀ diag(C_I) X̃_I   (the generalized Hessian: f is C¹ with a piecewise-constant
                                       second derivative, [Ho12] eq. (15)).

Each iteration solves the trust-region subproblem by Steihaug's conjugate gradients on Hessian-
vector products over the rows of I and updates the radius as
:class:`~solvers.logistic_newton.LogisticNewton` does (this class is that method with the SVR
objective). A free bias's direction has curvature ``2 Σ_I C_i``, 0 when I is empty; the CG then
stops at that direction (its gradient component is 0 there too).

Stopping: by default on the certified relative gap ≤ ``tol`` (the problem's certificate; its
dual point is the KKT map ``β_i = 2C_i sign(r_i) max(0, |r_i| − ε)``, at which ``P − D = ½‖∇f‖²``
for a regularized or no bias, so a gap test runs once ``½‖∇f‖² ≤ tol·max(1, |f|)``);
``stop_rule="native"``: LIBLINEAR's ``‖∇f‖ ≤ eps · ‖∇f(v₀)‖``. An iteration is one trust-region
step, accepted or not; ``info["cg_iterations"]`` counts the Hessian-vector products.

References
----------
C.-H. Ho, C.-J. Lin. Large-scale linear support vector regression. JMLR 13, 2012.
C.-J. Lin, R. C. Weng, S. S. Keerthi. Trust region Newton method for large-scale logistic
regression. JMLR 9, 2008.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import SVRPrimal
from svmbench.solvers.logistic_newton import LogisticNewton
from svmbench.solvers.registry import register

#: The Hessian products read the rows of I as a copied submatrix when I holds at most this
#: fraction of the rows; above it, all rows with zero weights outside I (no copy).
SUBSET_FRACTION = 0.5


def _squared_only(problem: SVRPrimal) -> str | None:
    if problem.squared:
        return None
    return (
        "svr_newton solves the squared ε-insensitive loss only (the plain loss has no gradient "
        "where |r_i| = ε: svr_dcd or clarabel solve it)"
    )


class SVRObjective:
    """``f``, ``∇f`` and ``∇²f v`` of the module docstring over the flat ``v = (w, β)``.

    The residuals of the last point evaluated are kept, so that the gradient at an accepted
    step reads ``X̃v`` once."""

    def __init__(self, problem: SVRPrimal):
        self.X = problem.X
        self.y = problem.y
        self.C = problem.upper_bounds
        self.eps = problem.epsilon
        self.d = problem.n_features
        self.has_bias = problem.bias != "none"
        self.col = problem.bias_scale if problem.bias == "regularized" else 1.0
        self.reg_bias = problem.bias == "regularized"
        self._last: tuple[np.ndarray, np.ndarray] | None = None
        # the Hessian's rows: all of X with weights D (0 outside I), or the rows of I
        self.rows = self.X
        self.D = np.zeros(problem.n_samples)
        self.matvecs = 0

    @property
    def size(self) -> int:
        return self.d + int(self.has_bias)

    def scores(self, v: np.ndarray, X=None) -> np.ndarray:
        """``X̃v`` (on the rows ``X``, all by default)."""
        X = self.X if X is None else X
        z = np.asarray(X @ v[: self.d]).ravel()
        self.matvecs += 1
        return z + self.col * v[self.d] if self.has_bias else z

    def back(self, u: np.ndarray, X=None) -> np.ndarray:
        """``X̃ᵀu`` (on the rows ``X``, all by default)."""
        X = self.X if X is None else X
        g = np.asarray(X.T @ u).ravel()
        self.matvecs += 1
        return np.append(g, self.col * u.sum()) if self.has_bias else g

    def regularized(self, v: np.ndarray) -> np.ndarray:
        """``Rv``."""
        if self.has_bias and not self.reg_bias:
            out = v.copy()
            out[self.d] = 0.0
            return out
        return v

    def residuals(self, v: np.ndarray) -> np.ndarray:
        if self._last is not None and np.array_equal(self._last[0], v):
            return self._last[1]
        r = self.y - self.scores(v)
        self._last = (v.copy(), r)
        return r

    def value(self, v: np.ndarray) -> float:
        xi = np.maximum(0.0, np.abs(self.residuals(v)) - self.eps)
        return 0.5 * float(v @ self.regularized(v)) + float(self.C @ (xi * xi))

    def gradient(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """``f(v)`` and ``∇f(v)``; keeps the rows of I and their weights ``2C_i`` for the
        Hessian products."""
        r = self.residuals(v)
        xi = np.maximum(0.0, np.abs(r) - self.eps)
        f = 0.5 * float(v @ self.regularized(v)) + float(self.C @ (xi * xi))
        active = xi > 0.0
        weights = 2.0 * self.C
        if np.count_nonzero(active) <= SUBSET_FRACTION * active.size:
            index = np.flatnonzero(active)
            self.rows = self.X[index]
            self.D = weights[index]
        else:
            self.rows = self.X
            self.D = np.where(active, weights, 0.0)
        return f, self.regularized(v) - self.back(weights * np.sign(r) * xi)

    def hessian_times(self, v: np.ndarray) -> np.ndarray:
        """``Rv + 2 X̃_Iᵀ(C_I ∘ X̃_I v)``."""
        return self.regularized(v) + self.back(self.D * self.scores(v, self.rows), self.rows)

    def variables(self, v: np.ndarray) -> dict[str, Any]:
        return {"w": v[: self.d].copy(), "b": self.col * float(v[self.d]) if self.has_bias else 0.0}


@register
class SVRNewton(LogisticNewton):
    """Trust-region Newton with conjugate gradients (LIBLINEAR ``-s 11``) for linear ε-SVR with
    the squared ε-insensitive loss.

    Accepts :class:`~problems.SVRPrimal` with ``loss="squared_epsilon_insensitive"``, every bias
    (free, regularized, none), dense or CSR ``X``, per-example ``C_i``. The plain loss is refused
    (it has no gradient at the tube's edge).

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
    eps : float, default=1e-4
        Threshold of the native rule (LIBLINEAR's ``-e`` for ``-s 11``, same default):
        ``‖∇f‖ ≤ eps · ‖∇f(v₀)‖``.
    max_cg : int or None, default=None
        Conjugate-gradient steps per iteration at most (None: the number of variables, at least
        10).
    check_every : int or None, default=None
        None: a gap test once ``½‖∇f‖² ≤ tol·max(1, |f|)`` (the gap at the KKT map), and as
        the base class spaces them by counted work; an int: also every ``check_every``
        iterations.
    max_iter : int or None, default=None
        Trust-region iterations at most (default 1000).
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True

    Notes
    -----
    A warm start from ``(w, b)`` or from β (through ``problem.primal_from_dual``).
    """

    name = "svr_newton"
    supported: ClassVar = {SVRPrimal: {"loss": _squared_only}}
    warm_start_uses = ("w", "beta")

    def __init__(self, *, eps: float = 1e-4, check_every: int | None = None, **common):
        super().__init__(eps=eps, check_every=check_every, **common)

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """O(n + d) beyond a copy of the rows of I: about 10 vectors of n and 10 of d, plus
        ``X`` once (the rows of I, copied when I is small)."""
        X = problem.X
        rows = 12 * X.nnz if sparse.issparse(X) else 8 * X.size
        n, d = problem.n_samples, problem.n_features
        return float(10 * 8 * n + 10 * 8 * (d + 1) + SUBSET_FRACTION * rows)

    def _objective_and_start(self, problem: SVRPrimal, warm_start):
        objective = SVRObjective(problem)
        v = np.zeros(objective.size)
        if warm_start is not None:
            if warm_start.w is not None:
                w, b = warm_start.w, warm_start.b
            else:
                w, b = problem.primal_from_dual(problem.project_dual(warm_start.beta))
            v[: problem.n_features] = np.asarray(w, dtype=np.float64).ravel()
            if objective.has_bias:
                v[-1] = (0.0 if b is None else float(b)) / objective.col
        return objective, v

    def _native_threshold(self, problem, st) -> float:
        if self.stop_rule == "native":
            return self.eps * st.gnorm0
        # the gap at the KKT map is ½‖∇f‖² (regularized or no bias): test it once it is small
        return math.sqrt(2.0 * self.tol * max(1.0, abs(st.f)))

    def _chunk_work(self, problem, st) -> float:
        """``nnz(X)`` per product with ``X`` or ``Xᵀ`` since the last call."""
        done, st.objective.matvecs = st.objective.matvecs, 0
        return float(done * _nnz(problem.X))

    def _certificate_work(self, problem) -> float:
        """``3 nnz(X) + n``: ``X w`` for the primal, the residuals again inside the dual point's
        map, ``Xᵀβ`` for the dual."""
        return float(3 * _nnz(problem.X) + problem.n_samples)


def _nnz(X) -> int:
    return X.nnz if sparse.issparse(X) else X.size
