"""What ``auto``'s rules read from a problem (:class:`Features`, solvers/auto.py's table)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from svmbench.problems.base import Problem
from svmbench.problems.kernels import squared_norms

#: Kinds whose dual coordinate descent slows down as C·‖x‖² grows (dcd, cs_dcd, logistic_dcd).
SCALED_KINDS = (
    "soft_margin_primal",
    "soft_margin_dual",
    "multiclass_hinge",
    "logistic",
    "svr_primal",
)


@dataclass(frozen=True)
class Features:
    """What the rules look at, read from a problem: sizes and parameters, and for the linear
    soft margin (and the linear and polynomial kernels) one pass over X for
    ``C_R2 = C_max · mean K(x_i, x_i)`` (``mean ‖x_i‖²`` for linear features), the scale that
    decides how many epochs coordinate descent or SMO needs (its box against the diagonal of Q);
    and ``kernel_rank``, the dimension of the kernel's feature space where it is finite (d for
    the linear kernel, the number of monomials for the polynomial one)."""

    kind: str
    n: int
    d: int
    sparse: bool
    density: float
    bias: str
    loss: str
    kernel: str
    convex: bool
    C_max: float
    n_classes: int
    C_R2: float = math.nan
    kernel_rank: float = math.inf

    @classmethod
    def of(cls, problem: Problem) -> Features:
        X = problem.X
        n, d = problem.n_samples, problem.n_features
        is_sparse = sparse.issparse(X)
        density = X.nnz / max(1, n * d) if is_sparse else 1.0
        weights = getattr(problem, "sample_weight", None)  # C_i = C·sample_weight_i
        C_max = float(getattr(problem, "C", 0.0))
        if weights is not None and len(weights):
            C_max *= float(np.max(weights))
        return cls(
            kind=problem.kind,
            n=n,
            d=d,
            sparse=is_sparse,
            density=density,
            bias=getattr(problem, "bias", "none"),
            loss=getattr(problem, "loss", "hard"),
            kernel=getattr(problem, "kernel", "linear"),
            convex=problem.convex,
            C_max=C_max,
            n_classes=getattr(problem, "n_classes", 2),
            C_R2=C_max * _mean_kernel_diagonal(problem) if _scaled(problem) else math.nan,
            kernel_rank=_kernel_rank(problem),
        )


def _scaled(problem: Problem) -> bool:
    """Whether C·mean K(x_i, x_i) says how hard the problem is (linear features, or the linear
    or polynomial kernel)."""
    kernel = getattr(problem, "kernel", "") if problem.kind == "kernel_dual" else ""
    return problem.kind in SCALED_KINDS or kernel in ("linear", "poly")


def _mean_kernel_diagonal(problem: Problem) -> float:
    """``mean_i K(x_i, x_i)``: the kernel dual's diagonal (``KernelDual.kernel_diagonal``),
    ``‖x_i‖²`` for linear features."""
    if problem.kind == "kernel_dual":
        diag = problem.kernel_diagonal
    else:
        diag = squared_norms(problem.X)
    return float(diag.sum()) / max(1, diag.size)


def _kernel_rank(problem: Problem) -> float:
    """The dimension of the kernel's feature space, a bound on the rank of K: d for the linear
    kernel; for ``(γ x·x' + c₀)^deg``, the monomials of degree deg in d variables,
    ``C(d + deg − 1, deg)``, or of degree up to deg when c₀ ≠ 0, ``C(d + deg, deg)``."""
    if problem.kind != "kernel_dual":
        return math.inf
    if problem.kernel == "linear":
        return problem.n_features
    if problem.kernel != "poly":
        return math.inf
    kp = problem.kernel_params
    degree = int(kp["degree"])
    return math.comb(problem.n_features + degree - (kp["coef0"] == 0), degree)
