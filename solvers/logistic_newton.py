"""Trust-region Newton for L2-regularized logistic regression, every bias (Lin, Weng & Keerthi
2008; LIBLINEAR's ``-s 0``).

Problem: :class:`~svmbench.problems.Logistic` over ``w̃ = (w, β)``, where the bias column of
``X̃`` holds ``s = bias_scale`` and ``b = s·β`` for a regularized bias (regularized as ``½β²``),
1 and ``b = β`` for a free one (not regularized), and is absent for ``bias="none"``::

    f(w̃) = ½ w̃ᵀRw̃ + Σ_i C_i log(1 + exp(−y_i x̃_i·w̃)),   R = diag(1, …, 1, [1 or 0]),
    ∇f = Rw̃ + X̃ᵀ(C∘y∘(σ(m) − 1)),   ∇²f = R + X̃ᵀ diag(C∘σ(m)∘(1 − σ(m))) X̃.

Each iteration approximately solves the trust-region subproblem ``min_s gᵀs + ½sᵀHs, ‖s‖ ≤ Δ``
by conjugate gradients with Hessian-vector products ``Hv = Rv + X̃ᵀ(D X̃v)`` (Steihaug's rule: stop
on the boundary, or once ``‖r‖ ≤ ξ‖g‖`` with the forcing term ``ξ = min(0.1, √(‖g‖/‖g₀‖))``, so
that the last steps converge superlinearly), accepts the step if the actual reduction is at
least ``η₀`` of the predicted one, and updates Δ by the rules of the paper (``η = 10⁻⁴, 0.25,
0.75``; ``σ = 0.25, 0.5, 4``). The Hessian is strictly positive definite for every bias (a free
b's direction has curvature ``Σ D_ii > 0``). NumPy/SciPy arithmetic, dense or CSR ``X``.

Stopping: by default on the certified relative gap ≤ ``tol`` (the problem's certificate: its
dual point is the KKT map ``α_i = C_i σ(−m_i)``, whose gap is second order in ``w − w*``);
``stop_rule="native"``: LIBLINEAR's ``‖∇f‖ ≤ eps · max(min(n₊, n₋), 1)/n · ‖∇f(w₀)‖``. An
iteration is one trust-region step, accepted or not; ``info["cg_iterations"]`` counts the
Hessian-vector products.

References
----------
C.-J. Lin, R. C. Weng, S. S. Keerthi. Trust region Newton method for large-scale logistic
regression. JMLR 9, 2008.
T. Steihaug. The conjugate gradient method and trust regions in large scale optimization.
SIAM J. Numer. Anal. 20(3), 1983.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse
from scipy.special import expit

from svmbench.problems import Logistic
from svmbench.problems.validation import check_int, check_real
from svmbench.solvers.base import IterativeSolver, StepOutcome
from svmbench.solvers.registry import register

ETA = (1e-4, 0.25, 0.75)
SIGMA = (0.25, 0.5, 4.0)
#: A step whose actual and predicted reductions are both below this fraction of ``|f|`` is
#: rounding: the method can make no more progress and says so as its native rule.
ROUNDING = 1e-14


class _Objective:
    """``f``, ``∇f`` and ``∇²f v`` of the module docstring, on ``X`` with the bias column
    (value ``col``, regularized if ``reg_bias``) kept apart."""

    def __init__(self, problem: Logistic):
        self.X = problem.X
        self.y = problem.y
        self.C = problem.upper_bounds
        self.d = problem.n_features
        self.has_bias = problem.bias != "none"
        self.col = problem.bias_scale if problem.bias == "regularized" else 1.0
        self.reg_bias = problem.bias == "regularized"
        self.D = np.zeros(problem.n_samples)

    def scores(self, v: np.ndarray) -> np.ndarray:
        z = np.asarray(self.X @ v[: self.d]).ravel()
        return z + self.col * v[self.d] if self.has_bias else z

    def back(self, u: np.ndarray) -> np.ndarray:
        """``X̃ᵀu``."""
        g = np.asarray(self.X.T @ u).ravel()
        return np.append(g, self.col * u.sum()) if self.has_bias else g

    def regularized(self, v: np.ndarray) -> np.ndarray:
        """``Rv``."""
        if self.has_bias and not self.reg_bias:
            out = v.copy()
            out[self.d] = 0.0
            return out
        return v

    def value(self, v: np.ndarray) -> float:
        m = self.y * self.scores(v)
        rv = self.regularized(v)
        return 0.5 * float(v @ rv) + float(self.C @ np.logaddexp(0.0, -m))

    def gradient(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """``f(v)`` and ``∇f(v)``; keeps ``D`` for the Hessian products."""
        m = self.y * self.scores(v)
        p = expit(m)  # σ(m_i)
        self.D = self.C * p * (1.0 - p)
        rv = self.regularized(v)
        f = 0.5 * float(v @ rv) + float(self.C @ np.logaddexp(0.0, -m))
        return f, rv + self.back(self.C * self.y * (p - 1.0))

    def hessian_times(self, v: np.ndarray) -> np.ndarray:
        return self.regularized(v) + self.back(self.D * self.scores(v))

    def variables(self, v: np.ndarray) -> dict[str, Any]:
        w = v[: self.d].copy()
        return {"w": w, "b": self.col * float(v[self.d]) if self.has_bias else 0.0}


@dataclass
class _State:
    objective: Any  # value, gradient, hessian_times, variables (see _Objective)
    v: np.ndarray
    f: float
    g: np.ndarray
    gnorm0: float
    delta: float
    first: bool = True
    cg_iterations: int = 0
    rejected: int = 0
    iterations: int = 0


def _truncated_cg(objective, g, delta: float, xi: float, max_cg: int):
    """Steihaug's CG on ``min gᵀs + ½sᵀHs, ‖s‖ ≤ Δ``: ``(s, r = −g − Hs, steps, on_boundary)``."""
    s = np.zeros_like(g)
    r = -g
    d = r.copy()
    rr = float(r @ r)
    tol = xi * math.sqrt(rr)
    steps = 0
    while steps < max_cg and math.sqrt(rr) > tol:
        Hd = objective.hessian_times(d)
        steps += 1
        dHd = float(d @ Hd)
        if not dHd > 0.0:
            break
        a = rr / dHd
        s_next = s + a * d
        if float(s_next @ s_next) > delta * delta:
            # the largest τ ≥ 0 with ‖s + τd‖ = Δ
            sd, dd, ss = float(s @ d), float(d @ d), float(s @ s)
            root = math.sqrt(max(sd * sd + dd * (delta * delta - ss), 0.0))
            tau = (delta * delta - ss) / (sd + root) if sd >= 0 else (root - sd) / dd
            s = s + tau * d
            r = r - tau * Hd
            return s, r, steps, True
        s = s_next
        r = r - a * Hd
        rr_next = float(r @ r)
        d = r + (rr_next / rr) * d
        rr = rr_next
    return s, r, steps, False


@register
class LogisticNewton(IterativeSolver):
    """Trust-region Newton with conjugate gradients (LIBLINEAR -s 0) for the logistic loss.

    Accepts :class:`~problems.Logistic` with every bias, dense or CSR ``X``, per-example
    ``C_i``.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
    eps : float, default=0.01
        Threshold of the native rule (LIBLINEAR's ``-e`` for ``-s 0``).
    max_cg : int or None, default=None
        Conjugate-gradient steps per iteration at most (None: the number of variables).
    max_iter : int or None, default=None
        Trust-region iterations at most (default 1000).
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True

    Notes
    -----
    A warm start from ``(w, b)`` or from α (through ``problem.primal_from_dual``).
    """

    name = "logistic_newton"
    iteration_unit = "Newton iterations"
    supported: ClassVar = {Logistic: {}}
    default_max_iter = 1000
    warm_start_uses = ("w", "alpha")

    def __init__(self, *, eps: float = 0.01, max_cg: int | None = None, **common):
        super().__init__(**common)
        self.eps = check_real("eps", eps, low=0.0)
        self.max_cg = None if max_cg is None else check_int("max_cg", max_cg, low=1)

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """O(n + d): about 10 vectors of n and 10 of d."""
        return float(10 * 8 * problem.n_samples + 10 * 8 * (problem.n_features + 1))

    def _init_state(self, problem, warm_start) -> _State:
        objective, v = self._objective_and_start(problem, warm_start)
        f, g = objective.gradient(v)
        gnorm = float(np.linalg.norm(g))
        return _State(objective, v, f, g, gnorm, gnorm if gnorm > 0 else 1.0)

    def _objective_and_start(self, problem: Logistic, warm_start):
        """The objective over the flat variables and the starting point (0 or the warm start)."""
        objective = _Objective(problem)
        v = np.zeros(problem.n_features + int(objective.has_bias))
        if warm_start is not None:
            if warm_start.w is not None:
                w, b = warm_start.w, warm_start.b
            else:
                w, b = problem.primal_from_dual(problem.project_dual(warm_start.alpha))
            v[: problem.n_features] = w
            if objective.has_bias:
                v[-1] = (0.0 if b is None else float(b)) / objective.col
        return objective, v

    def _native_threshold(self, problem: Logistic, st: _State) -> float:
        n_pos = int(np.count_nonzero(problem.y > 0))
        n_neg = problem.n_samples - n_pos
        return self.eps * max(min(n_pos, n_neg), 1) / problem.n_samples * st.gnorm0

    def _step(self, problem, st: _State) -> StepOutcome:
        obj = st.objective
        gnorm = float(np.linalg.norm(st.g))
        if gnorm == 0.0:
            st.iterations += 1
            return StepOutcome(1, converged=True)
        xi = min(0.1, math.sqrt(gnorm / st.gnorm0)) if st.gnorm0 > 0 else 0.1
        max_cg = self.max_cg or max(10, st.v.size)
        s, r, steps, _ = _truncated_cg(obj, st.g, st.delta, xi, max_cg)
        st.cg_iterations += steps
        gs = float(st.g @ s)
        predicted = -0.5 * (gs - float(s @ r))
        f_new = obj.value(st.v + s)
        actual = st.f - f_new
        snorm = float(np.linalg.norm(s))
        if st.first:
            st.delta = min(st.delta, snorm)
            st.first = False
        curvature = f_new - st.f - gs
        factor = SIGMA[2] if curvature <= 0 else max(SIGMA[0], -0.5 * gs / curvature)
        if actual < ETA[0] * predicted:
            st.delta = min(max(factor, SIGMA[0]) * snorm, SIGMA[1] * st.delta)
        elif actual < ETA[1] * predicted:
            st.delta = max(SIGMA[0] * st.delta, min(factor * snorm, SIGMA[1] * st.delta))
        elif actual < ETA[2] * predicted:
            st.delta = max(SIGMA[0] * st.delta, min(factor * snorm, SIGMA[2] * st.delta))
        else:
            st.delta = max(st.delta, min(factor * snorm, SIGMA[2] * st.delta))
        st.iterations += 1
        if actual > ETA[0] * predicted:
            st.v = st.v + s
            st.f, st.g = obj.gradient(st.v)
        else:
            st.rejected += 1
        if not (math.isfinite(st.f) and np.all(np.isfinite(st.g))):
            return StepOutcome(1, failure="non-finite iterates")
        scale = ROUNDING * max(1.0, abs(st.f))
        stalled = (abs(actual) <= scale and abs(predicted) <= scale) or not predicted > 0.0
        if stalled or not st.delta > 0.0:
            if self.stop_rule == "native":
                return StepOutcome(1, converged=True)
            return StepOutcome(
                1, failure="the trust-region steps change f by rounding only: no further progress"
            )
        small = float(np.linalg.norm(st.g)) <= self._native_threshold(problem, st)
        return StepOutcome(1, converged=bool(small))

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        return st.objective.variables(st.v)

    def _info(self, st: _State) -> dict[str, Any]:
        return {
            "cg_iterations": st.cg_iterations,
            "rejected_steps": st.rejected,
            "trust_radius": st.delta,
            "gradient_norm": float(np.linalg.norm(st.g)),
        }

    def _certificate_work(self, problem) -> float:
        X = problem.X
        nnz = X.nnz if sparse.issparse(X) else np.count_nonzero(X)
        return float(2 * nnz + problem.n_samples)
