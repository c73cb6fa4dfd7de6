"""Newton's method with an exact line search for linear ε-SVR with the squared ε-insensitive loss,
every bias (Ho & Lin 2012 §3; the finite Newton method of Keerthi & DeCoste 2005 on this loss;
LIBLINEAR's ``-s 11``, a truncated Newton method with line search since its version 2.40).

Problem: :class:`~svmbench.problems.SVRPrimal` with ``loss="squared_epsilon_insensitive"``, over
``v = (w, β)`` where the bias column of ``X̃`` holds ``s = bias_scale`` and ``b = s·β`` for a
regularized bias (regularized as ``½β²``), 1 and ``b = β`` for a free one (not regularized), and
is absent for ``bias="none"``; with the residuals ``r = y − X̃v`` and the active set
``I = {i : |r_i| > ε}``::

    f(v) = ½ vᵀRv + Σ_i C_i max(0, |r_i| − ε)²,   R = diag(1, …, 1, [1 or 0]),
    ∇f = Rv − 2 X̃ᵀ(C ∘ sign(r) ∘ max(0, |r| − ε)),
    ∇²f = R + 2 X̃_Iᵀ diag(C_I) X̃_I   (the generalized Hessian: f is C¹ with a piecewise-constant
                                       second derivative, [Ho12] eq. (15)).

Each iteration takes the Newton direction ``δ`` of the current I, ``∇²f δ = −∇f``, by conjugate
gradients on Hessian-vector products over the rows of I (a diagonal preconditioner, as
LIBLINEAR's, doubled their number on the sparse study's data), stopped at
``‖∇²f δ + ∇f‖ ≤ max(ξ‖∇f‖, ½√(2 tol max(1, |f|)))``, ``ξ = min(0.1, √(‖∇f‖/‖∇f₀‖))`` (the
second term in gap mode: the gradient after a step within one piece is that residual); then
minimizes f exactly along δ: ``f(v + tδ)`` is a convex piecewise quadratic in t, whose slope is
found from the residuals ``r − t X̃δ`` alone (:func:`~solvers._jit.svr_newton.line_search`), so
that a step costs one product with ``X̃`` besides the conjugate gradients' over I, and the
residuals at the new point come without another. Where the residuals crowd the tube's edge (large
C, d > n) the curvature along δ jumps from ``δᵀRδ`` to ``2C Σ (x̃_i·δ)²`` within one step; the
exact line search takes the step to the kink where a trust region would shrink. A free bias's
direction has curvature ``2 Σ_I C_i``, 0 when I is empty; its gradient component is 0 there too,
and the conjugate gradients leave it at 0.

Stopping: by default on the certified relative gap ≤ ``tol`` (the problem's certificate; its
dual point is the KKT map ``β_i = 2C_i sign(r_i) max(0, |r_i| − ε)``, at which ``P − D = ½‖∇f‖²``
for a regularized or no bias, so a gap test runs once ``½‖∇f‖² ≤ tol·max(1, |f|)``);
``stop_rule="native"``: LIBLINEAR's ``‖∇f‖ ≤ eps · ‖∇f(v₀)‖``. An iteration is one Newton step;
``info["cg_iterations"]`` counts the Hessian-vector products.

References
----------
C.-H. Ho, C.-J. Lin. Large-scale linear support vector regression. JMLR 13, 2012.
S. S. Keerthi, D. DeCoste. A modified finite Newton method for fast solution of large scale
linear SVMs. JMLR 6, 2005.
L. Galli, C.-J. Lin. A study on truncated Newton methods for linear classification. IEEE TNNLS
33(7), 2022 (the line search of LIBLINEAR ≥ 2.40).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems import SVRPrimal
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers._jit.svr_newton import hessian_rows, line_search, weighted_rows
from svmbench.solvers.base import StepOutcome, once_per_process
from svmbench.solvers.logistic_newton import LogisticNewton
from svmbench.solvers.registry import register

#: A step that changes f by less than this fraction of ``max(1, |f|)`` is rounding.
ROUNDING = 1e-15


def _squared_only(problem: SVRPrimal) -> str | None:
    if problem.squared:
        return None
    return (
        "svr_newton solves the squared ε-insensitive loss only (the plain loss has no gradient "
        "where |r_i| = ε: svr_dcd or clarabel solve it)"
    )


class SVRObjective:
    """``f``, ``∇f`` and ``∇²f v`` of the module docstring over the flat ``v = (w, β)``.

    ``X̃v`` over every row is NumPy's (BLAS or SciPy's CSR product); the sums over the rows of
    I are the jitted passes of :mod:`solvers._jit.svr_newton` (the Hessian's in one pass per
    product). The residuals of the last point evaluated are kept, so that the gradient at an
    accepted step reads ``X̃v`` once."""

    def __init__(self, problem: SVRPrimal):
        self.X = problem.X
        self.rows_of_X = unsigned_rows(problem.X)
        self.y = problem.y
        self.C = problem.upper_bounds
        self.eps = problem.epsilon
        self.d = problem.n_features
        self.has_bias = problem.bias != "none"
        self.col = problem.bias_scale if problem.bias == "regularized" else 1.0
        self.reg_bias = problem.bias == "regularized"
        self._last: tuple[np.ndarray, np.ndarray] | None = None
        self.active = np.zeros(0, dtype=np.int64)  # the rows of I
        self.D = np.zeros(0)  # 2C_i over I
        self.passes = 0  # passes over X (or the rows of I) since the last count

    @property
    def size(self) -> int:
        return self.d + int(self.has_bias)

    def regularized(self, v: np.ndarray) -> np.ndarray:
        """``Rv``."""
        if self.has_bias and not self.reg_bias:
            out = v.copy()
            out[self.d] = 0.0
            return out
        return v

    def residuals(self, v: np.ndarray) -> np.ndarray:
        """``r = y − X̃v`` (the last one again if ``v`` is the last point)."""
        if self._last is not None and np.array_equal(self._last[0], v):
            return self._last[1]
        z = np.asarray(self.X @ v[: self.d]).ravel()
        self.passes += 1
        r = self.y - (z + self.col * v[self.d] if self.has_bias else z)
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
        self.active = np.flatnonzero(xi > 0.0)
        self.D = 2.0 * self.C[self.active]
        u = self.D * np.copysign(xi[self.active], r[self.active])
        g = np.empty(self.size)
        weighted_rows(self.rows_of_X, self.active, u, self.col, self.has_bias, g)
        self.passes += 1
        return f, self.regularized(v) - g

    def hessian_times(self, v: np.ndarray) -> np.ndarray:
        """``Rv + 2 X̃_Iᵀ(C_I ∘ X̃_I v)``."""
        out = np.empty(self.size)
        hessian_rows(self.rows_of_X, self.active, self.D, v, self.col, self.has_bias, out)
        self.passes += 1
        return self.regularized(v) + out

    def variables(self, v: np.ndarray) -> dict[str, Any]:
        return {"w": v[: self.d].copy(), "b": self.col * float(v[self.d]) if self.has_bias else 0.0}

    def scores(self, v: np.ndarray) -> np.ndarray:
        """``X̃v`` (one pass over X)."""
        z = np.asarray(self.X @ v[: self.d]).ravel()
        self.passes += 1
        return z + self.col * v[self.d] if self.has_bias else z

    def moved(self, v: np.ndarray, r: np.ndarray) -> None:
        """Take ``r`` as the residuals at ``v`` (computed along the line search's direction)."""
        self._last = (v.copy(), r)

    def direction(
        self, g: np.ndarray, xi: float, max_cg: int, enough: float = 0.0
    ) -> tuple[np.ndarray, int]:
        """``δ`` with ``‖∇²f δ + g‖ ≤ max(xi‖g‖, enough)`` by conjugate gradients (on the rows
        of I of the last :meth:`gradient`), and the steps taken."""
        delta = np.zeros(self.size)
        res = -g
        p = res.copy()
        rr = float(res @ res)
        stop = max(xi * math.sqrt(rr), enough)
        steps = 0
        while steps < max_cg and math.sqrt(rr) > stop:
            Hp = self.hessian_times(p)
            steps += 1
            pHp = float(p @ Hp)
            if not pHp > 0.0:
                break
            a = rr / pHp
            delta += a * p
            res -= a * Hp
            rr_next = float(res @ res)
            p = res + (rr_next / rr) * p
            rr = rr_next
        return delta, steps


@dataclass
class _State:
    objective: SVRObjective
    v: np.ndarray
    f: float
    g: np.ndarray
    gnorm0: float
    cg_iterations: int = 0
    line_evaluations: int = 0
    last_step: float = math.nan
    small: bool = False  # the last step met the gradient test
    test_factor: float = 1.0  # scales the gap mode's gradient test; lowered when it misleads


@register
class SVRNewton(LogisticNewton):
    """Newton's method with conjugate gradients and an exact line search (LIBLINEAR ``-s 11``) for
    linear ε-SVR with the squared ε-insensitive loss.

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
    A warm start from ``(w, b)`` or from β (a result's ``beta``, or a bare array; through
    ``problem.primal_from_dual``).
    """

    name = "svr_newton"
    iteration_unit = "Newton steps"
    supported: ClassVar = {SVRPrimal: {"loss": _squared_only}}
    warm_start_uses = ("w", "beta", "alpha")

    def __init__(self, *, eps: float = 1e-4, check_every: int | None = None, **common):
        super().__init__(eps=eps, check_every=check_every, **common)

    @classmethod
    def memory_estimate(cls, problem, **_) -> float:
        """O(n + d): about 12 vectors of n (the rows of I among them) and 10 of d, CSR indices
        widened to int64 where X's are of mixed types."""
        X = problem.X
        widened = 8 * (X.nnz + problem.n_samples + 1) if sparse.issparse(X) else 0
        n, d = problem.n_samples, problem.n_features
        return float(12 * 8 * n + 10 * 8 * (d + 1) + widened)

    @once_per_process
    def warm_up(self) -> float:
        """Compile the passes over the rows of I on a 2×2 problem (dense rows, CSR rows with
        32-bit and 64-bit column indices) and the line search."""
        return sum(_warm_rows(kind) for kind in ("dense", "uint32", "uint64"))

    def warm_up_for(self, problem) -> float:
        """Compile the passes over the rows ``problem`` has only (dense, or CSR with its index
        width) and the line search, once per process and kind; untimed."""
        X = getattr(problem, "X", None)
        if X is None:
            return self.warm_up()
        if not sparse.issparse(X):
            return _warm_rows("dense")
        return _warm_rows("uint32" if X.indices.dtype == np.int32 else "uint64")

    def _objective_and_start(self, problem: SVRPrimal, warm_start):
        objective = SVRObjective(problem)
        v = np.zeros(objective.size)
        if warm_start is not None:
            if warm_start.w is not None:
                w, b = warm_start.w, warm_start.b
            else:
                beta = warm_start.beta if warm_start.beta is not None else warm_start.alpha
                w, b = problem.primal_from_dual(problem.project_dual(beta))
            v[: problem.n_features] = np.asarray(w, dtype=np.float64).ravel()
            if objective.has_bias:
                v[-1] = (0.0 if b is None else float(b)) / objective.col
        return objective, v

    def _init_state(self, problem, warm_start) -> _State:
        objective, v = self._objective_and_start(problem, warm_start)
        f, g = objective.gradient(v)
        gnorm = float(np.linalg.norm(g))
        return _State(objective, v, f, g, gnorm if gnorm > 0 else 1.0)

    def _step(self, problem, st: _State) -> StepOutcome:
        obj = st.objective
        gnorm = float(np.linalg.norm(st.g))
        if gnorm == 0.0:
            return StepOutcome(1, converged=True)
        if st.small:  # the certificate refused what the gradient test promised (a free bias)
            st.test_factor *= 0.1
        xi = min(0.1, math.sqrt(gnorm / st.gnorm0))
        # the gradient after a step within one piece is the system's residual −(∇²f δ + ∇f):
        # in gap mode, solving it below half the gap test's threshold is enough
        enough = 0.5 * self._native_threshold(problem, st) if self.stop_rule == "gap" else 0.0
        delta, steps = obj.direction(st.g, xi, self.max_cg or max(10, st.v.size), enough)
        st.cg_iterations += steps
        r = obj.residuals(st.v)
        z = obj.scores(delta)  # r(t) = r − t z
        rd = obj.regularized(delta)
        t, evaluations = line_search(r, z, obj.C, obj.eps, float(st.v @ rd), float(delta @ rd))
        st.line_evaluations += evaluations
        st.last_step = t
        v = st.v + t * delta
        obj.moved(v, r - t * z)
        f, g = obj.gradient(v)
        if not (math.isfinite(f) and np.all(np.isfinite(g))):
            return StepOutcome(1, failure="non-finite iterates")
        decrease = st.f - f
        st.v, st.f, st.g = v, f, g
        small = st.small = float(np.linalg.norm(g)) <= self._native_threshold(problem, st)
        if small:
            return StepOutcome(1, converged=True)
        if not decrease > ROUNDING * max(1.0, abs(f)):
            if self.stop_rule == "native":
                return StepOutcome(1, converged=True)
            return StepOutcome(1, failure="the Newton steps change f by rounding only")
        return StepOutcome(1)

    def _info(self, st: _State) -> dict[str, Any]:
        return {
            "cg_iterations": st.cg_iterations,
            "line_search_slopes": st.line_evaluations,
            "last_step": st.last_step,
            "gradient_norm": float(np.linalg.norm(st.g)),
        }

    def _native_threshold(self, problem, st) -> float:
        if self.stop_rule == "native":
            return self.eps * st.gnorm0
        # the gap at the KKT map is ½‖∇f‖² (regularized or no bias): test it once it is small
        return st.test_factor * math.sqrt(2.0 * self.tol * max(1.0, abs(st.f)))

    def _chunk_work(self, problem, st) -> float:
        """``nnz(X)`` per product with ``X`` or ``Xᵀ`` since the last call."""
        done, st.objective.passes = st.objective.passes, 0
        return float(done * _nnz(problem.X))

    def _certificate_work(self, problem) -> float:
        """``3 nnz(X) + n``: ``X w`` for the primal, the residuals again inside the dual point's
        map, ``Xᵀβ`` for the dual."""
        return float(3 * _nnz(problem.X) + problem.n_samples)


#: The rows ("dense", "uint32", "uint64": CSR column indices) whose passes this process compiled.
_WARM_ROWS: set[str] = set()


def _warm_rows(kind: str) -> float:
    """Compile the passes over 2×2 rows of ``kind`` and the line search unless this process
    has; the seconds it took."""
    if kind in _WARM_ROWS:
        return 0.0
    t0 = time.perf_counter()
    data = np.array([[1.0, 0.0], [0.0, 2.0]])
    if kind != "dense":
        csr = sparse.csr_matrix(data)
        data = unsigned_rows(csr if kind == "uint32" else as_rows(csr, index_dtype=np.int64))
    rows = np.arange(2, dtype=np.int64)
    out = np.empty(3)
    weighted_rows(data, rows, np.ones(2), 1.0, True, out)
    hessian_rows(data, rows, np.ones(2), np.ones(3), 1.0, True, out)
    line_search(np.array([1.0, -2.0]), np.ones(2), np.ones(2), 0.1, -1.0, 1.0)
    _WARM_ROWS.add(kind)
    return time.perf_counter() - t0


def unsigned_rows(X):
    """``X`` as the passes read it: dense rows (:func:`~solvers._jit.rows.as_rows`), or the CSR
    tuple with unsigned ``indptr`` (uint64) and column indices (the same bits viewed as uint32,
    or uint64 for 64-bit ones). Numba checks a signed index for wraparound at every read; the
    passes read unsigned ones about twice as fast. A problem's CSR matrix is canonical already
    (``check_X``), so its arrays are read as they are."""
    if isinstance(X, tuple):
        indptr, indices, data = X[:3]
    elif sparse.issparse(X):
        indptr, indices, data = X.indptr, X.indices, X.data
    else:
        return as_rows(X)
    unsigned = np.uint32 if indices.dtype == np.int32 else np.uint64
    indices = np.ascontiguousarray(indices, dtype=np.int32 if unsigned is np.uint32 else np.int64)
    return (
        indptr.astype(np.uint64),
        indices.view(unsigned),
        np.ascontiguousarray(data, dtype=np.float64),
    )


def _nnz(X) -> int:
    return X.nnz if sparse.issparse(X) else X.size
