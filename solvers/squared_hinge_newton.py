"""Primal Newton for the squared hinge (L2-loss SVM), every bias: the finite Newton method of
Keerthi & DeCoste (2005) with an exact line search, its Hessian solved exactly for small d and by
conjugate gradients otherwise (L2-SVM-MFN, Sindhwani & Keerthi 2006).

Problem (docs/ARCHITECTURE.md §2) over ``v = (w, β)``, where the bias column of ``X̃`` holds
``s = bias_scale`` and ``b = s·β`` for a regularized bias (regularized as ``½β²``), 1 and
``b = β`` for a free one (not regularized), and is absent for ``bias="none"``::

    f(v) = ½ vᵀRv + Σ_i C_i max(0, 1 − m_i)²,   m_i = y_i x̃_i·v,   R = diag(1, …, 1, [1 or 0]),
    ∇f = Rv − X̃ᵀ(y ∘ α),   α_i = 2 C_i max(0, 1 − m_i)   (the KKT map: the dual point),
    ∇²f = R + 2 X̃_Iᵀ diag(C_I) X̃_I   on the active set I = {i : m_i < 1}.

f is a convex piecewise quadratic. Each iteration takes the Newton direction ``δ = −(∇²f)⁻¹∇f``
of the current active set (exactly, by a Cholesky factor of the (d+1)×(d+1) matrix, when X is
dense and d ≤ ``DENSE_MAX_D`` or CSR and d ≤ ``SPARSE_MAX_D``; else by conjugate gradients with
Hessian-vector products ``Rp + X̃_Iᵀ(2C_I ∘ X̃_I p)``, preconditioned by the Hessian's diagonal,
stopped at ``‖r‖ ≤ ξ‖∇f‖``, ``ξ = min(0.1, √(‖∇f‖/‖∇f₀‖))``),
then minimizes f exactly along δ: ``f(v + tδ)`` is a piecewise quadratic in t whose breakpoints
``t_i = (1 − m_i)/Δm_i`` are swept in order (O(n log n)). With exact directions the method ends
in finitely many steps, at the point whose active set reproduces itself (Keerthi & DeCoste,
Theorem 1); a free b has curvature ``2 s² Σ_I C_i > 0`` as soon as I is not empty (with I empty
its gradient is 0 and its step 0).

Stopping: by default on the certified relative gap ≤ ``tol`` (the problem's certificate of
``(w, b)``; its dual point is the KKT map, exact at the optimum), asked when the method's own
gap estimate ``(f − D(α))/max(1, |f|)`` (α of the KKT map, ``X̃ᵀ(y∘α) = Rv − ∇f`` already at
hand) is within ``CERTIFY_FACTOR`` of tol, or when the active set reproduced itself;
``stop_rule="native"``: LIBLINEAR's ``‖∇f‖ ≤ eps · max(min(n₊, n₋), 1)/n · ‖∇f(v₀)‖`` (-s 2).
An iteration is one Newton step. The solver hands over ``(w, b)``: the problem builds the
multipliers (the exact finish has no α to finish).

References
----------
S. S. Keerthi, D. DeCoste. A modified finite Newton method for fast solution of large scale
linear SVMs. JMLR 6, 2005.
V. Sindhwani, S. S. Keerthi. Large scale semi-supervised linear SVMs. SIGIR 2006 (L2-SVM-MFN:
conjugate gradients and the exact line search).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import sparse
from scipy.linalg import blas, lapack

from svmbench.problems import SoftMarginDual, SoftMarginPrimal
from svmbench.problems.validation import check_int, check_real
from svmbench.solvers._jit import squared_hinge as _jit
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.compile_notice import announced
from svmbench.solvers.registry import register

_VARIANTS = {"loss": ("squared_hinge",)}
#: Dense X with at most this many features: the Newton system is formed and factored exactly
#: (O(n_I d²) per step); beyond, conjugate gradients.
DENSE_MAX_D = 500
#: CSR X with at most this many features: the same exact solve, ``X_IᵀDX_I`` a sparse product.
SPARSE_MAX_D = 200
#: The certificate is asked when the gap estimate is at most this factor times tol.
CERTIFY_FACTOR = 10.0
#: A step that changes f by less than this fraction of ``max(1, |f|)`` is rounding.
ROUNDING = 1e-15
#: The dense Newton matrix is updated by the rows that entered or left the active set when they
#: are at most this share of the active rows, and formed anew from them otherwise.
UPDATE_SHARE = 0.5


class _Objective:
    """``f``, ``∇f``, the Newton direction and the line search of the module docstring, on
    ``X`` with the bias column (value ``col``, regularized if ``reg_bias``) kept apart."""

    def __init__(self, problem):
        self.X = problem.X
        self.sparse = sparse.issparse(self.X)
        self.y = problem.y
        self.C = problem.upper_bounds
        self.C2 = 2.0 * self.C
        #: examples with C_i > 0 (None: all), the only ones an active set holds
        self.weighted = None if np.all(self.C > 0.0) else self.C > 0.0
        self.d = problem.n_features
        self.has_bias = problem.bias != "none"
        self.col = problem.bias_scale if problem.bias == "regularized" else 1.0
        self.reg_bias = problem.bias == "regularized"
        self.free_bias = problem.bias == "free"
        self.exact_solve = self.d <= (SPARSE_MAX_D if self.sparse else DENSE_MAX_D)
        self.Xt = self.X.T.tocsr() if self.sparse else None  # Xᵀu as a CSR product
        n = problem.n_samples
        self.times, self.rows = np.empty(n), np.empty(n, dtype=np.int64)  # line search scratch
        #: dense exact solve: the rows ``√(2C_i) x̃_i`` (built at the first step), and the last
        #: step's active set and Hessian (lower triangle), updated by the rows that changed
        self.Z = self.last_active = self.last_H = None

    @property
    def dim(self) -> int:
        return self.d + int(self.has_bias)

    def scores(self, v: np.ndarray) -> np.ndarray:
        """``X̃v``."""
        z = self.X @ v[: self.d]
        return z + self.col * v[self.d] if self.has_bias else z

    def back(self, u: np.ndarray) -> np.ndarray:
        """``X̃ᵀu``."""
        g = self.Xt @ u if self.sparse else u @ self.X
        if not self.has_bias:
            return g
        out = np.empty(self.dim)
        out[: self.d] = g
        out[self.d] = self.col * u.sum()
        return out

    def regularized(self, v: np.ndarray) -> np.ndarray:
        """``Rv``."""
        if self.free_bias:
            out = v.copy()
            out[self.d] = 0.0
            return out
        return v

    def evaluate(self, v: np.ndarray, m: np.ndarray):
        """``f(v)``, ``∇f(v)``, the KKT map α at the margins ``m`` and the loss
        ``Σ C_i max(0, 1 − m_i)²``."""
        alpha = np.empty_like(m)
        loss = _jit.kkt_map(m, self.C, alpha)
        rv = self.regularized(v)
        f = 0.5 * float(v @ rv) + loss
        return f, rv - self.back(self.y * alpha), alpha, loss

    def active_set(self, m: np.ndarray) -> np.ndarray:
        """``I = {i : m_i < 1, C_i > 0}`` as a mask."""
        below = m < 1.0
        return below if self.weighted is None else below & self.weighted

    def newton_direction(self, g, active, xi, max_cg) -> tuple[np.ndarray, int]:
        """``δ`` with ``∇²f δ = −g`` on the active set: exactly, or by conjugate gradients to
        the relative residual ``xi``; and the CG steps taken (0 for the exact solve)."""
        if self.exact_solve:
            return self._exact_direction(g, active), 0
        return self._cg_direction(g, active, xi, max_cg)

    def _dense_hessian(self, active) -> np.ndarray:
        """``R + X̃_Iᵀ diag(2C_I) X̃_I`` (lower triangle) for dense rows: from the last step's
        matrix plus ``Z_EᵀZ_E − Z_LᵀZ_L`` over the rows that entered (E) or left (L) the active
        set, ``Z`` the rows ``√(2C_i) x̃_i``, when they are at most ``UPDATE_SHARE`` of the active
        rows (a few per step near the optimum); else from every active row."""
        d, dim = self.d, self.dim
        if self.Z is None:
            root = np.sqrt(self.C2)
            self.Z = np.empty((self.X.shape[0], dim))
            np.multiply(self.X, root[:, None], out=self.Z[:, :d])
            if self.has_bias:
                self.Z[:, d] = self.col * root
        prev, count = self.last_active, int(np.count_nonzero(active))
        if prev is not None and count:
            entered, left = active & ~prev, prev & ~active
            changed = int(np.count_nonzero(entered)) + int(np.count_nonzero(left))
        if prev is None or not count or changed > UPDATE_SHARE * count:
            H = blas.dsyrk(1.0, self.Z[active].T, trans=0, lower=1)
            H.flat[:: dim + 1] += self.regularized(np.ones(dim))
        else:
            H = self.last_H.copy()
            if entered.any():
                H += blas.dsyrk(1.0, self.Z[entered].T, trans=0, lower=1)
            if left.any():
                H -= blas.dsyrk(1.0, self.Z[left].T, trans=0, lower=1)
        self.last_active, self.last_H = active, H.copy()
        if self.free_bias and not count:  # empty active set: b's gradient is 0, its step 0
            H[d, d] = 1.0
        return H

    def _exact_direction(self, g, active) -> np.ndarray:
        H = self._dense_hessian(active) if not self.sparse else self._sparse_hessian(active)
        factor, info = lapack.dpotrf(H, lower=True, overwrite_a=True)
        if info != 0:
            raise np.linalg.LinAlgError("the Newton system is not positive definite")
        delta, info = lapack.dpotrs(factor, -g, lower=True)
        if info != 0:
            raise np.linalg.LinAlgError("the Newton system could not be solved")
        return delta

    def _sparse_hessian(self, active) -> np.ndarray:
        """The Newton matrix of CSR rows, from their sparse product (lower triangle)."""
        d, dim = self.d, self.dim
        root = np.sqrt(self.C2[active])
        H = np.empty((dim, dim))
        Y = sparse.diags(root) @ self.X[active]
        H[:d, :d] = (Y.T @ Y).toarray()
        H.flat[: d * dim : dim + 1] += 1.0
        if self.has_bias:
            H[d, :d] = self.col * np.asarray(Y.T @ root).ravel()  # LAPACK reads the lower half
            curvature = self.col * self.col * float(root @ root)
            H[d, d] = curvature + (1.0 if self.reg_bias else 0.0)
            if H[d, d] <= 0.0:  # free bias, empty active set: its gradient is 0, its step 0
                H[d, d] = 1.0
        return H

    def _cg_direction(self, g, active, xi, max_cg) -> tuple[np.ndarray, int]:
        rows = np.flatnonzero(active)
        X_I = self.X[rows]
        XT_I = X_I.T.tocsr() if self.sparse else None
        c = self.C2[rows]

        def hessian_times(p):
            z = X_I @ p[: self.d]
            if self.has_bias:
                z = z + self.col * p[self.d]
            u = c * z
            out = XT_I @ u if self.sparse else u @ X_I
            if self.has_bias:
                out = np.append(out, self.col * u.sum())
            return out + self.regularized(p)

        # Jacobi preconditioner: diag(∇²f) = R + Σ_I 2C_i x̃_ij²
        squares = X_I.multiply(X_I) if self.sparse else X_I * X_I
        diag = np.asarray(squares.T @ c).ravel()
        if self.has_bias:
            diag = np.append(diag, self.col * self.col * float(c.sum()))
        diag += 1.0
        if self.free_bias:
            diag[self.d] = max(diag[self.d] - 1.0, 1e-300)
        delta = np.zeros_like(g)
        r = -g
        z = r / diag
        p = z.copy()
        rz = float(r @ z)
        stop = xi * float(np.linalg.norm(r))
        steps = 0
        while steps < max_cg and float(np.linalg.norm(r)) > stop:
            Hp = hessian_times(p)
            steps += 1
            pHp = float(p @ Hp)
            if not pHp > 0.0:
                break
            a = rz / pHp
            delta += a * p
            r -= a * Hp
            z = r / diag
            rz_next = float(r @ z)
            p = z + (rz_next / rz) * p
            rz = rz_next
        return delta, steps

    def line_search(self, v, m, delta, dm) -> float:
        """The exact minimizer ``t ≥ 0`` of ``f(v + tδ)``, a piecewise quadratic in t whose
        breakpoints ``t_i = (1 − m_i)/Δm_i`` are swept in order
        (:func:`~solvers._jit.squared_hinge.exact_line_search`; Keerthi & DeCoste, §3)."""
        rd = self.regularized(delta)
        a0, q0 = float(v @ rd), float(delta @ rd)
        return _jit.exact_line_search(m, dm, self.C, a0, q0, self.times, self.rows)

    def variables(self, v: np.ndarray) -> dict[str, Any]:
        w = v[: self.d].copy()
        return {"w": w, "b": self.col * float(v[self.d]) if self.has_bias else 0.0}


@dataclass
class _State:
    objective: _Objective
    v: np.ndarray
    m: np.ndarray  # margins y ∘ X̃v
    f: float
    g: np.ndarray
    alpha: np.ndarray  # the KKT map at v
    loss: float  # Σ C_i max(0, 1 − m_i)²
    gnorm0: float
    active: np.ndarray = field(default=None, repr=False)
    cg_iterations: int = 0
    last_step: float = math.nan
    stable: bool = False  # the last full Newton step kept its active set: v is the optimum


@register
class SquaredHingeNewton(IterativeSolver):
    """Primal finite Newton method for the squared hinge (Keerthi & DeCoste 2005), every bias.

    Accepts :class:`~problems.SoftMarginPrimal` and :class:`~problems.SoftMarginDual` with
    ``loss="squared_hinge"`` and any bias, dense or CSR ``X``, per-example ``C_i``.

    Parameters
    ----------
    tol : float, default=1e-6
        Target of the certified relative duality gap (``stop_rule="gap"``).
    stop_rule : {"gap", "native"}, default="gap"
    eps : float, default=0.01
        Threshold of the native rule (LIBLINEAR's ``-e`` for ``-s 2``).
    max_cg : int or None, default=None
        Conjugate-gradient steps per Newton step at most, when the direction is not solved
        exactly (None: the number of variables).
    check_every : int or None, default=None
        Newton steps between two certificates; None: when the gap estimate is within
        ``CERTIFY_FACTOR`` of tol or the active set reproduced itself, and every
        ``default_check_every`` steps.
    max_iter : int or None, default=None
        Newton steps at most (default 500).
    time_limit : float or None, default=None
    trace : {True, False, "every"}, default=True

    Notes
    -----
    A warm start from ``(w, b)`` or from α (through ``problem.primal_from_dual``).
    """

    name = "squared_hinge_newton"
    iteration_unit = "Newton steps"
    supported: ClassVar = {SoftMarginPrimal: _VARIANTS, SoftMarginDual: _VARIANTS}
    default_max_iter = 500
    warm_start_uses = ("w", "alpha")

    #: With ``check_every=None`` (the default) the certificate is asked when the gap estimate
    #: or the active set says so, and at least every this many steps.
    default_check_every = 10

    def __init__(
        self,
        *,
        eps: float = 0.01,
        max_cg: int | None = None,
        check_every: int | None = None,
        **common,
    ):
        super().__init__(check_every=check_every, **common)
        self.eps = check_real("eps", eps, low=0.0)
        self.max_cg = None if max_cg is None else check_int("max_cg", max_cg, low=1)

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """About 12 vectors of n, the active rows (a copy of X at most) and, for the exact
        solve, the (d+1)×(d+1) system."""
        n, d = problem.n_samples, problem.n_features + 1
        X = problem.X
        rows = X.data.nbytes + X.indices.nbytes if sparse.issparse(X) else X.nbytes
        return float(12 * 8 * n + 2 * rows + 3 * 8 * d * d)

    @once_per_process  # outermost: a later call returns at once, no marker looked up
    @announced("squared_hinge_newton", "its line search")
    def warm_up(self) -> float:
        """Compile the jitted passes (:mod:`solvers._jit.squared_hinge`) on 3 examples."""
        start = time.perf_counter()
        m, dm, C = np.array([0.0, 2.0, 0.5]), np.array([1.0, -2.0, 0.5]), np.ones(3)
        _jit.kkt_map(m, C, np.empty(3))
        _jit.exact_line_search(m, dm, C, -1.0, 1.0, np.empty(3), np.empty(3, dtype=np.int64))
        return time.perf_counter() - start

    def _init_state(self, problem, warm_start) -> _State:
        objective = _Objective(problem)
        v = np.zeros(objective.dim)
        if warm_start is not None:
            if warm_start.w is not None:
                w, b = warm_start.w, warm_start.b
            else:
                w, b = problem.primal_from_dual(problem.project_dual(warm_start.alpha))
            v[: objective.d] = w
            if objective.has_bias:
                v[-1] = (0.0 if b is None else float(b)) / objective.col
        # margins y ∘ X̃v: 0 at the cold start, with no pass over X
        m = problem.y * objective.scores(v) if warm_start is not None else np.zeros(len(problem.y))
        f, g, alpha, loss = objective.evaluate(v, m)
        gnorm = float(np.linalg.norm(g))
        return _State(objective, v, m, f, g, alpha, loss, gnorm if gnorm > 0 else 1.0)

    def _native_threshold(self, problem, st: _State) -> float:
        n_pos = int(np.count_nonzero(problem.y > 0))
        n_neg = problem.n_samples - n_pos
        return self.eps * max(min(n_pos, n_neg), 1) / problem.n_samples * st.gnorm0

    def _gap_estimate(self, st: _State) -> float:
        """``(f − D(α))/max(1, |f|)`` at the KKT map α: ``D = Σα − ½‖u‖² − Σ α²/(4C)`` with
        ``u = X̃ᵀ(y∘α) = Rv − ∇f`` (its bias entry left out for a free bias, whose equality
        the certificate enforces)."""
        primal, dual = self._trace_estimate(None, st)
        return (primal - dual) / max(1.0, abs(primal))

    def _trace_estimate(self, problem, st: _State) -> tuple[float, float]:
        """``(f, D(α))`` of :meth:`_gap_estimate` for a trace-only point (not a certificate)."""
        obj = st.objective
        u = obj.regularized(st.v) - st.g
        if obj.free_bias:
            u = u[: obj.d]
        return st.f, float(st.alpha.sum()) - 0.5 * float(u @ u) - st.loss

    def _step(self, problem, st: _State) -> StepOutcome:
        obj = st.objective
        gnorm = float(np.linalg.norm(st.g))
        if gnorm == 0.0:
            st.stable = True
            return StepOutcome(1, converged=True)
        active = obj.active_set(st.m)
        xi = min(0.1, math.sqrt(gnorm / st.gnorm0))
        delta, steps = obj.newton_direction(st.g, active, xi, self.max_cg or max(10, obj.dim))
        st.cg_iterations += steps
        dm = problem.y * obj.scores(delta)
        t = obj.line_search(st.v, st.m, delta, dm)
        v, m = st.v + t * delta, st.m + t * dm
        f, g, alpha, loss = obj.evaluate(v, m)
        if not (math.isfinite(f) and np.all(np.isfinite(g))):
            return StepOutcome(1, failure="non-finite iterates")
        decrease = st.f - f
        st.v, st.m, st.f, st.g, st.alpha, st.loss, st.last_step = v, m, f, g, alpha, loss, t
        st.stable = obj.exact_solve and t == 1.0 and np.array_equal(active, obj.active_set(m))
        if self.stop_rule == "native":
            small = float(np.linalg.norm(g)) <= self._native_threshold(problem, st)
            return StepOutcome(1, converged=bool(small or st.stable))
        if st.stable or self._gap_estimate(st) <= CERTIFY_FACTOR * self.tol:
            return StepOutcome(1, converged=True)
        if not decrease > ROUNDING * max(1.0, abs(f)):
            return StepOutcome(1, failure="the Newton steps change f by rounding only")
        return StepOutcome(1)

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        return st.objective.variables(st.v)

    def _info(self, st: _State) -> dict[str, Any]:
        return {
            "cg_iterations": st.cg_iterations,
            "exact_newton": st.objective.exact_solve,
            "last_step": st.last_step,
            "gradient_norm": float(np.linalg.norm(st.g)),
            "active": int(np.count_nonzero(st.m < 1.0)),
        }
