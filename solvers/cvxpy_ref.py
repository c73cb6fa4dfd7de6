"""CVXPY (Diamond & Boyd, 2016) as an independent reference: each problem written from its
definition in docs/ARCHITECTURE.md §2, not from ``problem.to_qp()``, and solved by a conic solver
(Clarabel by default).

The two other references (``osqp``, ``clarabel``) share the QP export of the problem; this one
shares nothing with them but the data, so an error in an export, or in its map back, shows as a
disagreement between ``cvxpy`` and ``clarabel``. The formulations:

- soft-margin primal: ``min ½‖w‖² (+ ½w_b²) + Σ C_i pos(1 − m_i)`` (or ``pos(1 − m_i)²``),
  ``m_i = y_i(x_i·w + b)``, ``b = s·w_b`` for a regularized bias;
- hard margin: ``min ½‖w‖² (+ ½w_b²)  s.t.  m_i ≥ 1``; on data no hyperplane separates, the
  solver's infeasibility certificate (the constraint's dual ray), normalized to ``Σλ = 1``, is
  the Farkas vector, checked by the problem;
- soft-margin dual: ``max Σα − ½‖Σ α_i y_i x̃_i‖² (− Σ α_i²/(4C_i))`` over the box
  (``+ yᵀα = 0`` for a free bias), with ``x̃_i`` the augmented features;
- kernel dual: ``max Σα − ½ (y⊙α)ᵀK̃(y⊙α) (− Σ α_i²/(4C_i))``, ``K̃ = K (+ s²)``, written with
  a square-root factor of K̃ from its eigendecomposition (eigenvalues below 0 clipped: the
  reference accepts PSD kernels only);
- ε-SVR: ``max yᵀβ − ε‖β‖₁ − ½βᵀK̃β`` over ``|β_i| ≤ C_i`` (``+ Σβ = 0`` for a free bias),
  with the same square-root factor of K̃;
- multiclass hinge: ``min ½‖W‖² (+ ½‖b‖²/s²) + Σ C_i max_r (Δ(r, y_i) + f_r(x_i) − f_{y_i}(x_i))``.

``solve_time`` includes building and compiling the CVXPY problem (the cost a user of CVXPY
pays); the solver's own time and CVXPY's compilation time are in ``info``.

Reference: S. Diamond and S. Boyd, "CVXPY: a Python-embedded modeling language for convex
optimization", JMLR 17(83), 2016.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import sparse

from svmbench.problems import (
    HardMarginPrimal,
    KernelDual,
    MulticlassHinge,
    SoftMarginDual,
    SVRPrimal,
)
from svmbench.problems.general_dual import GeneralDualProblem
from svmbench.problems.svr import SVRDual
from svmbench.problems.validation import check_option
from svmbench.solvers._reference import QPReference
from svmbench.solvers.base import Outcome, Status
from svmbench.solvers.registry import register

#: Conic solvers CVXPY can hand these problems to (second-order cones are needed).
CONIC_SOLVERS = ("CLARABEL", "SCS")

_STATUS = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.OPTIMAL,  # re-checked by the certificate
    "infeasible": Status.INFEASIBLE,  # re-checked by check_farkas
    "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "unbounded_inaccurate": Status.UNBOUNDED,
    "user_limit": Status.MAX_ITER,
}


def _value(variable) -> np.ndarray:
    """The variable's value, NaN where the conic solver returned none (the result is then
    ``numerical_error``)."""
    if variable.value is None:
        return np.full(variable.shape, np.nan)
    return np.asarray(variable.value, dtype=np.float64)


def _margins(cp, problem, w, b_var):
    """``y ⊙ (Xw + b)`` as a CVXPY expression (b = s·w_b for a regularized bias)."""
    scores = problem.X @ w
    if problem.bias == "free":
        scores = scores + b_var
    elif problem.bias == "regularized":
        scores = scores + problem.bias_scale * b_var
    return cp.multiply(problem.y, scores)


def _binary_primal(cp, problem):
    d = problem.n_features
    w = cp.Variable(d, name="w")
    b_var = cp.Variable(name="b") if problem.bias != "none" else None
    objective = 0.5 * cp.sum_squares(w)
    if problem.bias == "regularized":
        objective = objective + 0.5 * cp.square(b_var)
    m = _margins(cp, problem, w, b_var)
    constraints = []
    if isinstance(problem, HardMarginPrimal):
        constraints.append(m >= 1.0)
    else:
        slack = cp.pos(1.0 - m)
        loss = slack if problem.loss == "hinge" else cp.square(slack)
        objective = objective + problem.upper_bounds @ loss

    def recover():
        b = 0.0
        if problem.bias == "free":
            b = float(_value(b_var))
        elif problem.bias == "regularized":
            b = problem.bias_scale * float(_value(b_var))
        return {"w": _value(w), "b": b}

    def farkas():
        return _farkas_from_ray(constraints[0].dual_value, problem.n_samples)

    farkas_of = farkas if isinstance(problem, HardMarginPrimal) else None
    return cp.Problem(cp.Minimize(objective), constraints), recover, farkas_of


def _farkas_from_ray(ray, n: int) -> np.ndarray | str:
    """The margin constraint's dual ray, clipped to ``λ ≥ 0`` and normalized to ``Σλ = 1``; or a
    sentence saying why the conic solver's ray is unusable (none, wrong shape, not finite, zero)."""
    if ray is None:
        return "no dual ray"
    lam = np.asarray(ray, dtype=np.float64)
    if lam.size != n:
        return f"a dual ray of shape {lam.shape}, not ({n},)"
    lam = np.maximum(lam.reshape(n), 0.0)
    total = float(lam.sum())
    if not (np.isfinite(total) and total > 0.0):
        return f"a dual ray whose positive part sums to {total:g}"
    return lam / total


def _dual(cp, problem, root):
    """The binary dual with ``Q̃ = (y⊙root)(y⊙root)ᵀ``-style quadratic ``½‖rootᵀ(y⊙α)‖²``."""
    n = problem.n_samples
    C = problem.upper_bounds
    alpha = cp.Variable(n, name="alpha")
    quadratic = 0.5 * cp.sum_squares(root.T @ cp.multiply(problem.y, alpha))
    constraints = [alpha >= 0.0]
    if problem.loss == "hinge":
        constraints.append(alpha <= C)
    else:
        quadratic = quadratic + cp.sum(cp.multiply(1.0 / (4.0 * C), cp.square(alpha)))
    if problem.bias == "free":
        constraints.append(problem.y @ alpha == 0.0)
    objective = cp.Maximize(cp.sum(alpha) - quadratic)

    def recover():
        upper = C if problem.loss == "hinge" else np.inf
        return {"alpha": np.clip(_value(alpha), 0.0, upper)}

    return cp.Problem(objective, constraints), recover, None


def _linear_dual(cp, problem: SoftMarginDual):
    """Rows of the root are the augmented features ``x̃_i``."""
    X = problem.X
    if problem.bias == "regularized":
        column = np.full((problem.n_samples, 1), problem.bias_scale)
        if sparse.issparse(X):
            X = sparse.hstack([X, column], format="csr")
        else:
            X = np.hstack([X, column])
    return _dual(cp, problem, X)


def _kernel_root(problem) -> np.ndarray:
    """Rows of the root are those of ``V diag(√λ)``, ``K̃ = VΛVᵀ``."""
    K = problem.gram
    if problem.bias == "regularized":
        K = K + problem.bias_scale**2
    eigenvalues, V = np.linalg.eigh(K)
    keep = eigenvalues > eigenvalues.max() * 1e-14
    return V[:, keep] * np.sqrt(eigenvalues[keep])


def _kernel_dual(cp, problem: KernelDual):
    return _dual(cp, problem, _kernel_root(problem))


def _svr_dual(cp, problem: SVRDual):
    """ε-SVR's dual in β; the record's ``(α, α*)`` are β's positive and negative parts."""
    C = problem.upper_bounds
    beta = cp.Variable(problem.n_samples, name="beta")
    quadratic = 0.5 * cp.sum_squares(_kernel_root(problem).T @ beta)
    constraints = [beta >= -C, beta <= C]
    if problem.bias == "free":
        constraints.append(cp.sum(beta) == 0.0)
    objective = cp.Maximize(problem.y @ beta - problem.epsilon * cp.norm1(beta) - quadratic)

    def recover():
        return {"alpha": problem.split(np.clip(_value(beta), -C, C))}

    return cp.Problem(objective, constraints), recover, None


def _multiclass(cp, problem: MulticlassHinge):
    n, k, d = problem.n_samples, problem.n_classes, problem.n_features
    W = cp.Variable((k, d), name="W")
    b_var = cp.Variable(k, name="b") if problem.bias == "regularized" else None
    F = problem.X @ W.T  # (n, k) scores
    if b_var is not None:
        F = F + cp.reshape(b_var, (1, k), order="C")
    onehot = np.zeros((n, k))
    onehot[np.arange(n), problem.y] = 1.0
    own = cp.sum(cp.multiply(onehot, F), axis=1)  # f_{y_i}(x_i)
    Z = problem.cost[:, problem.y].T + F - cp.reshape(own, (n, 1), order="C")
    objective = 0.5 * cp.sum_squares(W) + problem.upper_bounds @ cp.max(Z, axis=1)
    if b_var is not None:
        objective = objective + 0.5 * cp.sum_squares(b_var) / problem.bias_scale**2

    def recover():
        return {"W": _value(W), "b": np.zeros(k) if b_var is None else _value(b_var)}

    return cp.Problem(cp.Minimize(objective)), recover, None


def _svr_primal(cp, problem):
    """``½‖w‖² (+ ½(b/s)²) + Σ C_i ℓ(y_i − w·x_i − b)``, ℓ the (squared) ε-insensitive loss."""
    w = cp.Variable(problem.n_features, name="w")
    b_var = cp.Variable(name="b") if problem.bias != "none" else None
    objective = 0.5 * cp.sum_squares(w)
    scores = problem.X @ w
    if problem.bias == "free":
        scores = scores + b_var
    elif problem.bias == "regularized":
        scores = scores + problem.bias_scale * b_var
        objective = objective + 0.5 * cp.square(b_var)
    outside = cp.pos(cp.abs(problem.y - scores) - problem.epsilon)
    objective = objective + problem.upper_bounds @ (
        cp.square(outside) if problem.squared else outside
    )

    def recover():
        scale = problem.bias_scale if problem.bias == "regularized" else 1.0
        return {"w": _value(w), "b": 0.0 if b_var is None else scale * float(_value(b_var))}

    return cp.Problem(cp.Minimize(objective)), recover, None


def _general_dual(cp, problem: GeneralDualProblem):
    """A general dual (the ν family): ``min ½‖Rᵀα‖² + pᵀα`` with ``Q = RRᵀ``, the box and the
    equalities; ρ from the equalities' multipliers, as the general form's QP recovers it."""
    form = problem.smo_form()
    eigenvalues, V = np.linalg.eigh(form.hessian())
    keep = eigenvalues > max(eigenvalues.max(), 0.0) * 1e-14
    root = V[:, keep] * np.sqrt(eigenvalues[keep])
    alpha = cp.Variable(form.n_variables, name="alpha")
    constraints = [alpha >= 0, alpha <= form.upper]
    if form.equality == "one":
        constraints.append(form.sign @ alpha == form.delta)
    elif form.equality == "nu":
        constraints.append((form.sign > 0).astype(float) @ alpha == form.delta)
        constraints.append((form.sign < 0).astype(float) @ alpha == form.delta_neg)
    objective = 0.5 * cp.sum_squares(root.T @ alpha) + form.p @ alpha

    def recover():
        mu = [float(c.dual_value) for c in constraints[2:]]
        rho = {"one": lambda: mu[0], "nu": lambda: 0.5 * (mu[0] - mu[1])}.get(
            form.equality, lambda: 0.0
        )()
        return problem.variables_from_smo(_value(alpha), rho)

    return cp.Problem(cp.Minimize(objective), constraints), recover, None


def _formulate(cp, problem):
    if isinstance(problem, SVRPrimal):
        return _svr_primal(cp, problem)
    if isinstance(problem, MulticlassHinge):
        return _multiclass(cp, problem)
    if isinstance(problem, KernelDual):
        return _kernel_dual(cp, problem)
    if isinstance(problem, SVRDual):
        return _svr_dual(cp, problem)
    if isinstance(problem, GeneralDualProblem):  # the ν family
        return _general_dual(cp, problem)
    if isinstance(problem, SoftMarginDual):
        return _linear_dual(cp, problem)
    return _binary_primal(cp, problem)  # SoftMarginPrimal, HardMarginPrimal


@register
class CvxpyReference(QPReference):
    """CVXPY on the problem written from its definition (see the module docstring).

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for (see :class:`~solvers._reference.QPReference`).
    eps : float or None, default=None
        Gap and feasibility tolerances handed to the conic solver (Clarabel's ``tol_gap_abs``,
        ``tol_gap_rel``, ``tol_feas``; SCS's ``eps_abs``, ``eps_rel``); None: 1e-10.
    solver : {"CLARABEL", "SCS"}, default="CLARABEL"
        The conic solver CVXPY calls.
    max_iter : int, default=200
        Iterations of the conic solver.
    """

    name = "cvxpy"
    iteration_unit = "solver iterations"
    default_max_iter = 200
    warm_start_refusal = "does not take a warm start (it checks the QP export from scratch)"

    def __init__(self, *, solver: str = "CLARABEL", **common):
        super().__init__(**common)
        self.solver = check_option("solver", solver, CONIC_SOLVERS)

    def _solver_options(self) -> dict:
        if self.solver == "CLARABEL":
            tol = {"tol_gap_abs": self.eps, "tol_gap_rel": self.eps, "tol_feas": self.eps}
            opts = {**tol, "max_iter": self.max_iter}
            if math.isfinite(self.time_limit):
                opts["time_limit"] = self.time_limit
            return opts
        opts = {"eps_abs": self.eps, "eps_rel": self.eps, "max_iters": self.max_iter}
        if math.isfinite(self.time_limit):
            opts["time_limit_secs"] = self.time_limit
        return opts

    def _run(self, problem, warm_start, clock, callback) -> Outcome:
        import cvxpy as cp

        model, recover, farkas_of = _formulate(cp, problem)
        try:
            with warnings.catch_warnings():  # "may be inaccurate": the problem re-checks it
                warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
                model.solve(solver=self.solver, **self._solver_options())
            raw = model.status
        except cp.error.SolverError as exc:
            raw = f"solver error: {exc}"
        status = _STATUS.get(raw, Status.NUMERICAL_ERROR)
        if status is Status.MAX_ITER and clock.elapsed >= self.time_limit:
            status = Status.TIME_LIMIT  # CVXPY's "user_limit" is either limit
        farkas, refusal = None, ""
        if status is Status.UNBOUNDED or (status is Status.INFEASIBLE and farkas_of is None):
            # every objective here is bounded below, and only the hard margin can be infeasible
            status = Status.NUMERICAL_ERROR
            refusal = f", but {problem.kind} is never {raw.removesuffix('_inaccurate')}"
        elif status is Status.INFEASIBLE:
            farkas = farkas_of()
            if isinstance(farkas, str):
                status = Status.NUMERICAL_ERROR
                refusal = f", but CVXPY returned {farkas} as its infeasibility certificate"
                farkas = None
        # NaN where CVXPY has no value: the record says numerical_error
        variables = {} if status is Status.INFEASIBLE else recover()
        with clock.paused():
            status, cert, message = self._judge(problem, status, variables, farkas, raw)
        message += refusal
        stats = model.solver_stats
        iterations = stats.num_iters if stats is not None and stats.num_iters is not None else 0
        return Outcome(
            status=status,
            variables=variables,
            iterations=int(iterations),
            certificate=cert,
            farkas=farkas,
            message=message,
            info={
                "raw_status": raw,
                "conic_solver": self.solver,
                "solver_time": getattr(stats, "solve_time", None),
                "compilation_time": model.compilation_time,
            },
        )
