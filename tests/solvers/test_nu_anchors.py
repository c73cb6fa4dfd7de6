"""The ν family's anchors (LIBSVM's official binding, scikit-learn) judged by the problems'
certificates: at a tight ``eps`` each lands on the Clarabel optimum."""

import numpy as np
import pytest

from svmbench.problems import NuSVCDual, NuSVRDual, OneClassDual
from svmbench.solvers import registry

N = 60


def _problems():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 3))
    y = np.where(X[:, 0] + 0.6 * rng.normal(size=N) > 0, 1.0, -1.0)
    t = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=N)
    return {
        "nu_svc": NuSVCDual(X, y, nu=0.37, gamma=0.4),
        "nu_svc_weighted": NuSVCDual(X, y, nu=0.37, gamma=0.4, sample_weight=np.full(N, 2.0)),
        "one_class": OneClassDual(X, nu=0.31, gamma=0.4),
        "one_class_weighted": OneClassDual(X, nu=0.31, sample_weight=np.full(N, 3.0)),
        "nu_svr": NuSVRDual(X, t, C=2.0, nu=0.43, gamma=0.4),
    }


@pytest.mark.parametrize("anchor", ["libsvm_nu", "sklearn_nu"])
@pytest.mark.parametrize("name", sorted(_problems()))
def test_anchor_reaches_the_reference_optimum(anchor, name):
    if anchor not in registry.anchor_names(available_only=True):
        pytest.skip(f"{anchor}'s library is not installed")
    problem = _problems()[name]
    reference = registry.get("clarabel", tol=1e-9).solve(problem)
    result = registry.get(anchor, eps=1e-10, tol=1e-6).solve(problem)
    assert result.status.value == "optimal"
    assert result.rel_gap < 1e-6
    assert result.primal == pytest.approx(reference.primal, rel=1e-6)
    X = problem.X[:20]
    np.testing.assert_allclose(
        result.model.decision_function(X), reference.model.decision_function(X), atol=1e-4
    )


def test_libsvm_refuses_varying_weights():
    problem = _problems()["nu_svc"]
    weighted = NuSVCDual(problem.X, problem.y, nu=0.3, sample_weight=np.linspace(1, 2, N))
    reason = registry.solver_class("libsvm_nu").unsupported_reason(weighted)
    assert reason is not None and "uniform" in reason
    assert registry.solver_class("sklearn_nu").unsupported_reason(weighted) is None
