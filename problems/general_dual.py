"""LIBSVM's general dual, the one form every kernel formulation hands to the generalized SMO.

::

    min_α  ½ αᵀQα + pᵀα      s.t.  0 ≤ α_t ≤ u_t,   and the equalities of ``equality``:
           "none": none;  "one": zᵀα = Δ;  "nu": Σ_{z_t=+1} α_t = Δ₊ and Σ_{z_t=−1} α_t = Δ₋

    Q_st = z_s z_t (K(x_{r_s}, x_{r_t}) + s²)

with ``z ∈ {−1, +1}^m`` the variables' signs and ``r`` the row of X each variable reads (ε-SVR has
m = 2n variables on n rows). C-SVC is ``z = y, p = −1, u = C_i``, "one" with Δ = 0; ε-SVR is
``z = (+1ⁿ, −1ⁿ), p = (ε − y, ε + y)``; one-class is ``z = +1, p = 0, u = 1``, "one" with Δ = νn;
ν-SVC and ν-SVR are "nu" (Chang & Lin, "Training ν-support vector classifiers", Neural
Computation 2001; LIBSVM, ACM TIST 2011, §2 and §4). ``s²`` is the square of a regularized bias's
scale (0 otherwise).

A problem that the generalized SMO solves offers ``smo_form() -> GeneralDual`` and
``variables_from_smo(alpha, rho) -> dict`` (the keyword arguments of its ``certificate``; ``rho``
the offset the solver found, LIBSVM's ρ: the decision value is ``Σ_t z_t α_t K(x_{r_t}, x) − ρ``).
The problem, never the solver, certifies the result.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse

from svmbench.problems.base import QP, Problem
from svmbench.problems.kernels import Kernel

#: The equality constraints a general dual may carry.
EQUALITIES = ("none", "one", "nu")


@dataclass(frozen=True, eq=False)
class GeneralDual:
    """The general dual of the module docstring (arrays of length m unless said otherwise).

    ``X`` is the problem's data (n × d dense or CSR, or the Gram matrix for a precomputed kernel),
    ``rows`` int64 indices into it, ``alpha0`` a feasible starting point (LIBSVM's initial α for
    the ν forms and one-class). ``delta`` is Δ ("one") or Δ₊ ("nu"); ``delta_neg`` is Δ₋ ("nu").
    """

    X: np.ndarray | sparse.csr_matrix
    kernel: Kernel
    rows: np.ndarray
    sign: np.ndarray
    p: np.ndarray
    upper: np.ndarray
    equality: str
    alpha0: np.ndarray
    delta: float = 0.0
    delta_neg: float = 0.0
    s2: float = 0.0

    def __post_init__(self) -> None:
        m = self.rows.shape[0]
        if self.equality not in EQUALITIES:
            raise ValueError(f"equality must be one of {EQUALITIES}, got {self.equality!r}")
        for name in ("sign", "p", "upper", "alpha0"):
            if getattr(self, name).shape != (m,):
                raise ValueError(f"{name} must have shape ({m},), got {getattr(self, name).shape}")
        if not np.all(np.abs(self.sign) == 1.0):
            raise ValueError("sign must hold only -1 and +1")
        if not (np.all(np.isfinite(self.upper)) and np.all(self.upper >= 0.0)):
            raise ValueError("upper must be finite and >= 0")

    @property
    def n_variables(self) -> int:
        return self.rows.shape[0]

    def gram(self) -> np.ndarray:
        """Dense ``K(x_{r_s}, x_{r_t}) + s²`` (m × m): for tests and references only."""
        distinct, where = np.unique(self.rows, return_inverse=True)
        if self.kernel.name == "precomputed":
            K = self.X.toarray() if sparse.issparse(self.X) else np.asarray(self.X)
            K = K[np.ix_(distinct, distinct)]
        else:
            K = self.kernel(self.X[distinct])
        return K[np.ix_(where, where)] + self.s2

    def hessian(self) -> np.ndarray:
        """Dense Q (m × m)."""
        return self.gram() * np.outer(self.sign, self.sign)

    def objective(self, alpha: np.ndarray) -> float:
        """``½ αᵀQα + pᵀα`` (dense; tests and references)."""
        return float(0.5 * alpha @ (self.hessian() @ alpha) + self.p @ alpha)

    def equality_residual(self, alpha: np.ndarray) -> float:
        """The largest violation of the equalities at ``alpha`` (0 for "none")."""
        if self.equality == "one":
            return abs(float(self.sign @ alpha) - self.delta)
        if self.equality == "nu":
            pos = float(alpha[self.sign > 0].sum())
            neg = float(alpha[self.sign < 0].sum())
            return max(abs(pos - self.delta), abs(neg - self.delta_neg))
        return 0.0

    def to_qp(self) -> QP:
        """The dense QP in OSQP's form (for tests and the references).

        ``recover(x, y)`` returns ``{"alpha": x, "rho": ρ}``. With OSQP's signs a free variable
        has ``(Qα + p)_t = −z_t μ`` ("one": ρ = −μ, so C-SVC's ``b = −ρ = μ``) or ``−μ₊``/``−μ₋``
        by sign ("nu": ρ = (μ₋ − μ₊)/2, LIBSVM's ``(r₁ − r₂)/2``); "none" has ρ = 0.
        """
        m = self.n_variables
        P = sparse.triu(sparse.csc_matrix(self.hessian()), format="csc")
        rows = [sparse.identity(m, format="csc")]
        lo, up = [np.zeros(m)], [self.upper.astype(float)]
        if self.equality == "one":
            rows.append(sparse.csc_matrix(self.sign[None, :]))
            lo.append(np.array([self.delta]))
            up.append(np.array([self.delta]))
        elif self.equality == "nu":
            rows.append(sparse.csc_matrix((self.sign > 0).astype(float)[None, :]))
            rows.append(sparse.csc_matrix((self.sign < 0).astype(float)[None, :]))
            lo.append(np.array([self.delta, self.delta_neg]))
            up.append(np.array([self.delta, self.delta_neg]))
        A = sparse.vstack(rows, format="csc")
        equality = self.equality

        def recover(x, y_mult):
            if equality == "one":
                rho = -float(y_mult[m])
            elif equality == "nu":
                rho = -0.5 * float(y_mult[m] - y_mult[m + 1])
            else:
                rho = 0.0
            return {"alpha": np.asarray(x, dtype=float), "rho": rho}

        q = self.p.astype(float)
        return QP(P, q, A, np.concatenate(lo), np.concatenate(up), recover, sense="dual")


class GeneralDualProblem(Problem):
    """A problem whose dual is a :class:`GeneralDual`: what the generalized SMO and the general
    barrier accept (their ``supported`` tables name this class).

    A subclass implements :meth:`smo_form` and :meth:`variables_from_smo`; its ``to_qp`` is, by
    default, the general form's QP with the recovered ``(α, ρ)`` mapped to ``certificate``'s
    arguments.
    """

    @abc.abstractmethod
    def smo_form(self) -> GeneralDual:
        """The problem's dual in the general form."""

    @abc.abstractmethod
    def variables_from_smo(self, alpha: np.ndarray, rho: float) -> dict:
        """The keyword arguments of ``certificate`` for a general-form point ``alpha`` with
        offset ``rho`` (LIBSVM's ρ)."""

    def to_qp(self) -> QP:
        qp = self.smo_form().to_qp()
        general_recover = qp.recover

        def recover(x, y_mult):
            general = general_recover(x, y_mult)
            return self.variables_from_smo(general["alpha"], general["rho"])

        return replace(qp, recover=recover)
