"""The general dual record: C-SVC written in it is the kernel dual, and its QP recovers ρ = −b."""

import numpy as np
import osqp
import pytest

from svmbench.problems import KernelDual
from svmbench.problems.general_dual import GeneralDual
from svmbench.problems.kernels import Kernel
from svmbench.solvers import registry


def _c_svc_form(problem: KernelDual) -> GeneralDual:
    n = problem.n_samples
    return GeneralDual(
        X=problem.X,
        kernel=problem.kernel_spec,
        rows=np.arange(n),
        sign=problem.y.astype(float),
        p=-np.ones(n),
        upper=problem.upper_bounds,
        equality="one",
        alpha0=np.zeros(n),
    )


def test_c_svc_form_matches_the_kernel_dual_and_its_offset():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    problem = KernelDual(X, y, C=2.0, kernel="rbf", gamma=0.5)
    form = _c_svc_form(problem)
    alpha = rng.uniform(0, 2, size=40)
    assert form.objective(alpha) == pytest.approx(-problem.dual_objective(alpha), rel=1e-12)
    reference = registry.get("clarabel").solve(problem)
    assert reference.status == "optimal"
    # the general form's QP, solved by OSQP, gives the same α and ρ = −b of the kernel dual
    qp = form.to_qp()

    solver = osqp.OSQP()
    solver.setup(
        qp.P,
        qp.q,
        qp.A,
        qp.l,
        qp.u,
        eps_abs=1e-9,
        eps_rel=1e-9,
        verbose=False,
        polish=True,
        max_iter=200000,
    )
    out = solver.solve()
    variables = qp.recover(out.x, out.y)
    assert np.max(np.abs(variables["alpha"] - reference.alpha)) < 1e-4
    assert variables["rho"] == pytest.approx(-reference.b, abs=1e-4)
    assert form.equality_residual(variables["alpha"]) < 1e-6


def test_refuses_inconsistent_shapes_and_signs():
    kernel = Kernel("rbf", 1.0)
    X = np.zeros((2, 1))
    base = dict(
        X=X,
        kernel=kernel,
        rows=np.arange(2),
        sign=np.ones(2),
        p=np.zeros(2),
        upper=np.ones(2),
        equality="one",
        alpha0=np.zeros(2),
    )
    with pytest.raises(ValueError, match="equality"):
        GeneralDual(**{**base, "equality": "two"})
    with pytest.raises(ValueError, match="upper"):
        GeneralDual(**{**base, "upper": np.ones(3)})
    with pytest.raises(ValueError, match="sign"):
        GeneralDual(**{**base, "sign": np.array([1.0, 0.5])})
