"""The kernel-dual grid that smo and smo_batch are both held to: data sets (hard ones included:
duplicated points at a large C, d > n), kernels and biases, and the agreement with the reference
optimum that each result must show."""

from __future__ import annotations

import pytest

from svmbench.problems import KernelDual
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import Status
from tests.conftest import BINARY_SETS, SET_C

RTOL = 1e-6  # relative agreement of primal objectives with the reference optimum
SETS = ("gaussian_overlap", "quadrant", "breast_cancer", "digits", "duplicated", "d_gt_n")
KERNELS = ("rbf", "linear", "poly")
BIASES = ("free", "regularized", "none")


def kernel_problem(name, kernel="rbf", bias="free", **kw):
    X, y = BINARY_SETS[name]
    if name == "digits" and kernel == "poly":
        kw.setdefault("gamma", 1.0 / (X.shape[1] * 16.0**2))  # pixels in [0, 16]
    return KernelDual(X, y, C=kw.pop("C", SET_C[name]), kernel=kernel, bias=bias, **kw)


def agrees_with_reference(result, problem, rtol=RTOL):
    ref = reference_solution(problem)
    scale = max(1.0, abs(ref.primal))
    assert result.status is Status.OPTIMAL, result.message
    assert result.certified and result.rel_gap <= 1e-6
    assert abs(result.primal - ref.primal) <= rtol * scale
    assert abs(result.dual - ref.primal) <= rtol * scale
    # the reported gap is the problem's, recomputed from the returned variables (up to the
    # rounding of P and D, which may come from the cached Gram matrix)
    cert = problem.certificate(alpha=result.alpha, b=result.b)
    assert result.gap == pytest.approx(cert.gap, rel=1e-9, abs=1e-12 * scale)
