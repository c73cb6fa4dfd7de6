"""Trust-region Newton for the multinomial logistic loss, over the k·d (+ k) variables of
``(W, b)`` (the method of Lin, Weng & Keerthi 2008 that LIBLINEAR's ``-s 0`` runs, applied to
the softmax loss).

Problem: :class:`~svmbench.problems.MultinomialLogistic`, bias regularized or none, over
``v = (W, β)`` with ``b = s·β`` for a regularized bias (``s = bias_scale``)::

    f(v) = ½‖v‖² + Σ_i C_i (log Σ_r e^{F_ir} − F_{i,y_i}),   F = X Wᵀ + s 1βᵀ,
    ∇f = v + (Γᵀ X̃),   Γ_ir = C_i (p_ir − 1[y_i = r]),   p_i = softmax(F_i),
    ∇²f u = u + (Tᵀ X̃),   T_ir = C_i p_ir (U_ir − Σ_q p_iq U_iq),   U = X̃ uᵀ.

The Hessian of each example's loss in its scores is ``C_i (diag p_i − p_i p_iᵀ)``, positive
semidefinite, so ``∇²f ⪰ I``. Each iteration solves the trust-region subproblem by Steihaug's
conjugate gradients and updates the radius exactly as
:class:`~solvers.logistic_newton.LogisticNewton` does (this class is that method with the
multinomial objective).

Stopping: by default on the certified relative gap ≤ ``tol`` (the problem's certificate: its
dual point is the KKT map ``β_i = C_i softmax(f(x_i))``); ``stop_rule="native"``:
``‖∇f‖ ≤ eps · ‖∇f(v₀)‖``. An iteration is one trust-region step, accepted or not.

References
----------
C.-J. Lin, R. C. Weng, S. S. Keerthi. Trust region Newton method for large-scale logistic
regression. JMLR 9, 2008.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import MultinomialLogistic
from svmbench.problems.multinomial_logistic import row_logsumexp
from svmbench.solvers.logistic_newton import LogisticNewton
from svmbench.solvers.registry import register


class MultinomialObjective:
    """``f``, ``∇f`` and ``∇²f u`` of the module docstring over the flat ``v = (W, β)``."""

    def __init__(self, problem: MultinomialLogistic):
        self.X = problem.X
        self.y = problem.y
        self.C = problem.upper_bounds
        self.k, self.d = problem.n_classes, problem.n_features
        self.has_bias = problem.bias == "regularized"
        self.col = problem.bias_scale
        self.rows = np.arange(problem.n_samples)
        self.P = np.zeros((problem.n_samples, self.k))

    @property
    def size(self) -> int:
        return self.k * self.d + (self.k if self.has_bias else 0)

    def scores(self, v: np.ndarray) -> np.ndarray:
        """``X̃ uᵀ``: (n, k)."""
        W = v[: self.k * self.d].reshape(self.k, self.d)
        F = np.asarray(self.X @ W.T)
        return F + self.col * v[self.k * self.d :] if self.has_bias else F

    def back(self, T: np.ndarray) -> np.ndarray:
        """``Tᵀ X̃`` flattened: (k·d [+ k],)."""
        G = np.asarray(self.X.T @ T).T.ravel()
        return np.concatenate([G, self.col * T.sum(axis=0)]) if self.has_bias else G

    def value(self, v: np.ndarray) -> float:
        F = self.scores(v)
        loss = row_logsumexp(F) - F[self.rows, self.y]
        return 0.5 * float(v @ v) + float(self.C @ loss)

    def gradient(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """``f(v)`` and ``∇f(v)``; keeps the softmax ``p`` for the Hessian products."""
        F = self.scores(v)
        lse = row_logsumexp(F)
        self.P = np.exp(F - lse[:, None])
        f = 0.5 * float(v @ v) + float(self.C @ (lse - F[self.rows, self.y]))
        G = self.P.copy()
        G[self.rows, self.y] -= 1.0
        return f, v + self.back(self.C[:, None] * G)

    def hessian_times(self, u: np.ndarray) -> np.ndarray:
        U = self.scores(u)
        PU = self.P * U
        T = self.C[:, None] * (PU - self.P * PU.sum(axis=1, keepdims=True))
        return u + self.back(T)

    def variables(self, v: np.ndarray) -> dict[str, Any]:
        W = v[: self.k * self.d].reshape(self.k, self.d).copy()
        b = self.col * v[self.k * self.d :] if self.has_bias else np.zeros(self.k)
        return {"W": W, "b": np.array(b, dtype=np.float64)}


@register
class MultinomialNewton(LogisticNewton):
    """Trust-region Newton with conjugate gradients for the multinomial logistic loss.

    Accepts :class:`~problems.MultinomialLogistic` (bias regularized or none), dense or CSR
    ``X``, per-example ``C_i``.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
    eps : float, default=0.01
        Threshold of the native rule: ``‖∇f‖ ≤ eps · ‖∇f(v₀)‖``.
    max_cg : int or None, default=None
        Conjugate-gradient steps per iteration at most (None: the number of variables).
    max_iter : int or None, default=None
        Trust-region iterations at most (default 1000).
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True

    Notes
    -----
    A warm start from ``(W, b)`` or from β (through ``problem.primal_from_dual``).
    """

    name = "multinomial_newton"
    supported: ClassVar = {MultinomialLogistic: {}}
    warm_start_uses = ("W", "beta")

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """O(n·k + k·d): about 8 arrays of n×k and 10 vectors of k·(d + 1)."""
        k = problem.n_classes
        return float(8 * 8 * problem.n_samples * k + 10 * 8 * k * (problem.n_features + 1))

    def _objective_and_start(self, problem: MultinomialLogistic, warm_start):
        objective = MultinomialObjective(problem)
        v = np.zeros(objective.size)
        if warm_start is not None:
            if warm_start.W is not None:
                W, b = warm_start.W, warm_start.b
            else:
                W, b = problem.primal_from_dual(problem.project_dual(warm_start.beta))
            kd = objective.k * objective.d
            v[:kd] = np.asarray(W, dtype=np.float64).ravel()
            if objective.has_bias and b is not None:
                v[kd:] = np.asarray(b, dtype=np.float64) / objective.col
        return objective, v

    def _native_threshold(self, problem, st) -> float:
        return self.eps * st.gnorm0

    def _certificate_work(self, problem) -> float:
        X = problem.X
        nnz = X.nnz if sparse.issparse(X) else np.count_nonzero(X)
        return float(problem.n_classes * (2 * nnz + 4 * problem.n_samples))
