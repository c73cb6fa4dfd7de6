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
from scipy.linalg import lapack

from svmbench.problems import SoftMarginDual, SoftMarginPrimal
from svmbench.problems.validation import check_int, check_real
from svmbench.solvers._jit import squared_hinge as _jit
from svmbench.solvers.base import IterativeSolver, StepOutcome, once_per_process
from svmbench.solvers.compile_notice import announced
from svmbench.solvers.registry import register
from svmbench.solvers.squared_hinge_sizes import DENSE_MAX_D, SPARSE_MAX_D

_VARIANTS = {"loss": ("squared_hinge",)}
#: The certificate is asked when the gap estimate is at most this factor times tol.
CERTIFY_FACTOR = 10.0
#: A step that changes f by less than this fraction of ``max(1, |f|)`` is rounding.
ROUNDING = 1e-15
#: The dense Newton matrix is updated by the rows that entered or left the active set when they
#: are at most this share of the active rows, and formed anew from them otherwise.
UPDATE_SHARE = 0.5
#: That update is made by jitted rank-one updates when ``changed rows × dim²`` is at most this
#: (a few rows near the optimum: no BLAS call's fixed cost), else by BLAS products.
RANK_UPDATE_WORK = 1 << 18


class _Objective:
    """``f``, ``∇f``, the Newton direction and the line search of the module docstring, on
    ``X`` with the bias column (value ``col``, regularized if ``reg_bias``) kept apart. Dense
    rows take a step in one jitted pass (:func:`~solvers._jit.squared_hinge.advance`) and keep
    the Newton matrix of the current active set, updated by the rows that changed; CSR rows
    take NumPy's passes and form it at each step."""

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
        self.bias_code = (
            _jit.REGULARIZED_BIAS
            if self.reg_bias
            else (_jit.FREE_BIAS if self.free_bias else _jit.NO_BIAS)
        )
        self.exact_solve = self.d <= (SPARSE_MAX_D if self.sparse else DENSE_MAX_D)
        self.Xt = self.X.T.tocsr() if self.sparse else None  # Xᵀu as a CSR product
        n = problem.n_samples
        self.times, self.rows = np.empty(n), np.empty(n, dtype=np.int64)  # line search scratch
        self.dm = np.empty(n)  # the margins' direction Δm = y ∘ X̃δ
        #: dense rows: the active set at the current point and the rows that changed at the
        #: last step (entered first, left from the end; :func:`_jit.advance`)
        self.active = np.zeros(n, dtype=np.bool_)
        self.changed = np.empty(n, dtype=np.int64)
        #: dense exact solve: the Newton matrix of the current active set (lower triangle;
        #: None: to be formed anew)
        self.H = None

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

    def active_set(self, m: np.ndarray) -> np.ndarray:
        """``I = {i : m_i < 1, C_i > 0}`` as a mask."""
        below = m < 1.0
        return below if self.weighted is None else below & self.weighted

    def advance(self, st: _State, t: float, delta: np.ndarray, dm: np.ndarray) -> bool:
        """Move ``st`` to ``v + tδ`` (margins ``m + tΔm``): f, ∇f, the KKT map, the loss, the
        dual estimate and the active set there; False, leaving the point as it was, if f or ∇f
        is not finite."""
        if self.sparse:
            return self._advance_sparse(st, t, delta, dm)
        n, dim = self.X.shape[0], self.dim
        v, m, g, alpha = np.empty(dim), np.empty(n), np.empty(dim), np.empty(n)
        f, loss, total, uu, gg, finite, count, n_in, n_out = _jit.advance(
            self.X, self.y, self.C, self.col, self.bias_code, t, st.v, delta, st.m, dm,
            v, m, g, alpha, self.active, self.changed,
        )  # fmt: skip
        if not finite:
            return False
        self._follow_active_set(count, n_in, n_out)
        st.stable_set = n_in + n_out == 0
        st.count = count
        st.v, st.m, st.g, st.alpha, st.f, st.loss = v, m, g, alpha, f, loss
        st.gnorm = math.sqrt(gg)
        st.dual = total - 0.5 * uu - loss
        return True

    def _advance_sparse(self, st: _State, t: float, delta, dm) -> bool:
        v, m = st.v + t * delta, st.m + t * dm
        alpha = np.empty_like(m)
        loss = _jit.kkt_map(m, self.C, alpha)
        rv = self.regularized(v)
        f = 0.5 * float(v @ rv) + loss
        g = rv - self.back(self.y * alpha)
        if not (math.isfinite(f) and np.all(np.isfinite(g))):
            return False
        active = self.active_set(m)
        st.stable_set = np.array_equal(active, self.active)
        self.active = active
        st.count = int(np.count_nonzero(active))
        st.v, st.m, st.g, st.alpha, st.f, st.loss = v, m, g, alpha, f, loss
        st.gnorm = float(np.linalg.norm(g))
        u = rv - g  # X̃ᵀ(y∘α), its bias entry left out for a free bias
        if self.free_bias:
            u = u[: self.d]
        st.dual = float(alpha.sum()) - 0.5 * float(u @ u) - loss
        return True

    def _follow_active_set(self, count: int, n_in: int, n_out: int) -> None:
        """The dense Newton matrix of the new active set: unchanged, updated by the rows that
        entered or left it when they are at most ``UPDATE_SHARE`` of its rows (by the jitted
        rank-one updates when they are few, :data:`RANK_UPDATE_WORK`, else by the products
        ``Z_EᵀZ_E`` and ``Z_LᵀZ_L``, :meth:`scaled_rows`), or left to be formed anew."""
        H, changed = self.H, n_in + n_out
        if H is None or not changed:
            return
        if not count or changed > UPDATE_SHARE * count:
            self.H = None
        elif changed * self.dim * self.dim <= RANK_UPDATE_WORK:
            _jit.rank_update(H, self.X, self.C, self.col, self.has_bias, self.changed, n_in, n_out)
        else:
            n = self.changed.shape[0]
            if n_in:
                entered = self.scaled_rows(self.changed[:n_in])
                H += entered.T @ entered
            if n_out:
                left = self.scaled_rows(self.changed[n - n_out :])
                H -= left.T @ left

    def newton_direction(self, st: _State, xi, max_cg) -> tuple[np.ndarray, int]:
        """``δ`` with ``∇²f δ = −∇f`` on the active set: exactly, or by conjugate gradients to
        the relative residual ``xi``; and the CG steps taken (0 for the exact solve)."""
        if not self.exact_solve:
            return self._cg_direction(st.g, self.active, xi, max_cg)
        H = self._sparse_hessian(self.active) if self.sparse else self.newton_matrix()
        if self.free_bias and not st.count:  # empty active set: b's gradient is 0, its step 0
            H = H.copy()
            H[self.d, self.d] = 1.0
        _, delta, info = lapack.dposv(H, -st.g, lower=1)  # H itself is kept
        if info != 0:
            raise np.linalg.LinAlgError("the Newton system is not positive definite")
        return delta, 0

    def newton_matrix(self) -> np.ndarray:
        """``R + X̃_Iᵀ diag(2C_I) X̃_I`` (lower triangle) of dense rows: kept from the last step
        (updated, :meth:`_follow_active_set`), or formed anew as ``Z_IᵀZ_I``."""
        if self.H is None:
            dim = self.dim
            rows = self.scaled_rows(self.active)
            H = rows.T @ rows  # NumPy's product of a matrix with its transpose: a syrk
            H.flat[:: dim + 1] += self.regularized(np.ones(dim))
            self.H = H
        return self.H

    def scaled_rows(self, rows) -> np.ndarray:
        """``Z_R``, the rows ``√(2C_i) x̃_i`` of ``rows`` (a mask or indices) of dense X, made
        when needed (every row at a cold start, without a gather)."""
        every = rows.dtype == np.bool_ and rows.shape[0] == self.X.shape[0] and rows.all()
        X = self.X if every else self.X[rows]
        root = np.sqrt(self.C2 if every else self.C2[rows])
        Z = np.empty((X.shape[0], self.dim))
        np.multiply(X, root[:, None], out=Z[:, : self.d])
        if self.has_bias:
            np.multiply(root, self.col, out=Z[:, self.d])
        return Z

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

    def line_search(self, st: _State, delta: np.ndarray) -> tuple[float, np.ndarray]:
        """The exact minimizer ``t ≥ 0`` of ``f(v + tδ)``, a piecewise quadratic in t whose
        breakpoints ``t_i = (1 − m_i)/Δm_i`` are swept in order
        (:func:`~solvers._jit.squared_hinge.exact_line_search`; Keerthi & DeCoste, §3), and
        ``Δm = y ∘ X̃δ`` (a scratch array, valid until the next search)."""
        z = self.X @ delta[: self.d]
        shift = self.col * float(delta[self.d]) if self.has_bias else 0.0
        t = _jit.exact_line_search(
            st.m, z, self.y, shift, self.C, st.v, delta, self.free_bias, self.times, self.rows,
            self.dm,
        )  # fmt: skip
        return t, self.dm

    def variables(self, v: np.ndarray) -> dict[str, Any]:
        w = v[: self.d].copy()
        return {"w": w, "b": self.col * float(v[self.d]) if self.has_bias else 0.0}


@dataclass
class _State:
    """The point ``v`` and what the last step computed there (:meth:`_Objective.advance`)."""

    objective: _Objective
    v: np.ndarray
    m: np.ndarray  # margins y ∘ X̃v
    f: float = math.nan
    g: np.ndarray = field(default=None, repr=False)
    alpha: np.ndarray = field(default=None, repr=False)  # the KKT map at v
    loss: float = math.nan  # Σ C_i max(0, 1 − m_i)²
    dual: float = math.nan  # D(α) at the KKT map α (the gap estimate's)
    gnorm: float = math.nan  # ‖∇f‖
    gnorm0: float = 1.0
    count: int = 0  # |I|, the active rows at v
    stable_set: bool = False  # the last step kept the active set
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
    #: or the active set says so, and at least every this many steps. The estimate is the
    #: certificate's own gap (the KKT map's α, D of the same formula) but for rounding and a
    #: free bias's projection, so the periodic certificate is a safety net only
    #: (docs/measurements.md, "squared_hinge_newton").
    default_check_every = 50

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
        problem = SoftMarginPrimal(
            np.array([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]), np.array([1.0, -1.0, 1.0]),
            loss="squared_hinge", bias="regularized",
        )  # fmt: skip
        st = self._init_state(problem, None)
        obj = st.objective
        delta = np.array([1.0, -2.0, 0.5])
        t, dm = obj.line_search(st, delta)
        obj.advance(st, t, delta, dm)
        obj.changed[:] = [0, 1, 2]  # rank-one updates: row 0 entered, row 2 left
        _jit.rank_update(obj.newton_matrix(), obj.X, obj.C, obj.col, True, obj.changed, 1, 1)
        _jit.kkt_map(st.m, obj.C, np.empty(3))  # CSR rows' KKT map
        obj.times[:] = [0.5, 0.25, 1.0]
        _jit.sweep(st.m, dm, obj.C, -1.0, 1.0, obj.times, np.arange(3), np.arange(3))
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
        st = _State(objective, v, m)
        if not objective.advance(st, 0.0, np.zeros_like(v), np.zeros_like(m)):
            st.f, st.g, st.gnorm = math.inf, np.full_like(v, np.nan), math.nan
        st.gnorm0 = st.gnorm if st.gnorm > 0 else 1.0
        return st

    def _native_threshold(self, problem, st: _State) -> float:
        n_pos = int(np.count_nonzero(problem.y > 0))
        n_neg = problem.n_samples - n_pos
        return self.eps * max(min(n_pos, n_neg), 1) / problem.n_samples * st.gnorm0

    def _gap_estimate(self, st: _State) -> float:
        """``(f − D(α))/max(1, |f|)`` at the KKT map α: ``D = Σα − ½‖u‖² − Σ α²/(4C)`` with
        ``u = X̃ᵀ(y∘α)`` (its bias entry left out for a free bias, whose equality the
        certificate enforces), computed by the step that reached the point."""
        return (st.f - st.dual) / max(1.0, abs(st.f))

    def _trace_estimate(self, problem, st: _State) -> tuple[float, float]:
        """``(f, D(α))`` of :meth:`_gap_estimate` for a trace-only point (not a certificate)."""
        return st.f, st.dual

    def _step(self, problem, st: _State) -> StepOutcome:
        obj = st.objective
        gnorm = st.gnorm
        if gnorm == 0.0:
            st.stable = True
            return StepOutcome(1, converged=True)
        xi = min(0.1, math.sqrt(gnorm / st.gnorm0))
        delta, steps = obj.newton_direction(st, xi, self.max_cg or max(10, obj.dim))
        st.cg_iterations += steps
        t, dm = obj.line_search(st, delta)
        previous = st.f
        if not obj.advance(st, t, delta, dm):
            return StepOutcome(1, failure="non-finite iterates")
        st.last_step = t
        st.stable = obj.exact_solve and t == 1.0 and st.stable_set
        if self.stop_rule == "native":
            small = st.gnorm <= self._native_threshold(problem, st)
            return StepOutcome(1, converged=bool(small or st.stable))
        if st.stable or self._gap_estimate(st) <= CERTIFY_FACTOR * self.tol:
            return StepOutcome(1, converged=True)
        if not previous - st.f > ROUNDING * max(1.0, abs(st.f)):
            return StepOutcome(1, failure="the Newton steps change f by rounding only")
        return StepOutcome(1)

    def _variables(self, problem, st: _State) -> dict[str, Any]:
        return st.objective.variables(st.v)

    def _info(self, st: _State) -> dict[str, Any]:
        return {
            "cg_iterations": st.cg_iterations,
            "exact_newton": st.objective.exact_solve,
            "last_step": st.last_step,
            "gradient_norm": st.gnorm,
            "active": st.count,
        }
