"""Features scaled by 1e±8: every solver ends in a true status, never an exception.

Scaling X by s changes neither separability nor (with ``gamma ∝ 1/s²``) the RBF kernel, but it
moves the optimum's ``w`` by up to 1/s and the linear Gram matrix by s², far from the unit scale
the solvers' tolerances assume. Each result must be either ``optimal`` with a certified relative
gap ≤ ``TOL`` and a primal value within ``RTOL_PRIMAL`` of the reference on the same problem, or
an honest non-optimal status. Stochastic solvers are held to the same bound: their status is
``optimal`` only when the problem certifies it. The reductions (``ovr``, ``ovo``) are
``optimal`` for their binary subproblems (docs/ARCHITECTURE.md §4), so theirs is checked there.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from svmbench.problems import (
    HardMarginPrimal,
    KernelDual,
    Logistic,
    MulticlassHinge,
    SoftMarginDual,
    SoftMarginPrimal,
    datasets,
)
from svmbench.solvers import Status, registry
from svmbench.solvers.base import ConvergenceWarning

SCALES = (1e-8, 1e-4, 1.0, 1e4, 1e8)
TOL = 1e-6
RTOL_PRIMAL = 1e-5
#: Seconds per solve: the file stays fast, and a solver that stalls says ``time_limit``.
TIME_LIMIT = 0.1
#: The reference chain: Clarabel at 1e-10; where it stalls, the CVXPY formulation, then Clarabel
#: at looser tolerances (at s = 1e8 the soft margin's reference needs 1e-6).
REFERENCES = (
    ("clarabel", {}),
    ("cvxpy", {}),
    ("clarabel", {"eps": 1e-8}),
    ("clarabel", {"eps": 1e-6}),
)
HONEST = (Status.MAX_ITER, Status.NOT_CERTIFIED, Status.NUMERICAL_ERROR, Status.TIME_LIMIT)

SEPARABLE = datasets.gaussian(30, 3, 8.0, seed=1)
OVERLAP = datasets.gaussian(30, 3, 1.0, seed=2)
BLOBS = datasets.load("blobs:n=30,d=3,k=3,seed=4")

KINDS = {
    "hard_margin": lambda s, bias: HardMarginPrimal(s * SEPARABLE.X, SEPARABLE.y, bias=bias),
    "primal_hinge": lambda s, bias: SoftMarginPrimal(s * OVERLAP.X, OVERLAP.y, bias=bias),
    "primal_squared_hinge": lambda s, bias: SoftMarginPrimal(
        s * OVERLAP.X, OVERLAP.y, loss="squared_hinge", bias=bias
    ),
    "linear_dual": lambda s, bias: SoftMarginDual(s * OVERLAP.X, OVERLAP.y, bias=bias),
    "kernel_linear": lambda s, bias: KernelDual(
        s * OVERLAP.X, OVERLAP.y, kernel="linear", bias=bias
    ),
    "kernel_rbf": lambda s, bias: KernelDual(
        s * OVERLAP.X, OVERLAP.y, kernel="rbf", gamma=0.5 / s**2, bias=bias
    ),
    "multiclass_hinge": lambda s, bias: MulticlassHinge(s * BLOBS.X, BLOBS.y, bias=bias),
}


def _biases(kind):
    # a free bias adds k equalities that break the Crammer–Singer dual: not a problem kind
    return (
        ("none", "regularized") if kind == "multiclass_hinge" else ("free", "regularized", "none")
    )


#: Refused at construction, with the range that works: a regularized bias whose constant feature
#: is 1.8e7 times the data's radius (``hard_margin.MAX_BIAS_SCALE_OVER_RADIUS``), and a linear
#: kernel with ``C · max K_ii ≈ 1e17`` (``kernel_dual.MAX_C_TIMES_DIAGONAL``).
REFUSED = {
    ("hard_margin", "regularized", 1e-8): r"bias_scale=1 is 1\.8e\+07 times max‖x_i‖.*up to 1e\+06",
    **{
        ("kernel_linear", bias, 1e8): r"C · max K̃_ii = 1 · .* is over 1e\+11: .*use C ≤"
        for bias in ("free", "regularized", "none")
    },
}


@functools.cache
def _problem(kind, bias, scale):
    return KINDS[kind](scale, bias)


CASES = [
    pytest.param(kind, bias, scale, name, id=f"{kind}-{bias}-{scale:g}-{name}")
    for kind in KINDS
    for bias in _biases(kind)
    for scale in SCALES
    if (kind, bias, scale) not in REFUSED
    for name in registry.names()
    if registry.solver_class(name).unsupported_reason(_problem(kind, bias, scale)) is None
]


@pytest.mark.parametrize(("kind", "bias", "scale"), sorted(REFUSED))
def test_the_refused_problems_name_the_argument_and_the_range(kind, bias, scale):
    with pytest.raises(ValueError, match=REFUSED[kind, bias, scale]):
        _problem(kind, bias, scale)


@pytest.mark.parametrize("bias", ["free", "none"])
@pytest.mark.parametrize("name", ["barrier", "clarabel", "osqp", "cvxpy"])
def test_a_hard_margin_on_tiny_features_is_certified_with_the_scaled_optimum(bias, name):
    """Features ×1e-8: P* ≈ 1e16, where every QP solver stalled before it was solved on X/S
    (``HardMarginPrimal.solving_scale``). w* scales as 1/s: compare with the unit problem's."""
    unit = _problem("hard_margin", bias, 1.0)
    tiny = _problem("hard_margin", bias, 1e-8)
    reference = registry.get("clarabel", eps=1e-9).solve(unit)
    result = registry.get(name, tol=TOL).solve(tiny)
    assert result.status is Status.OPTIMAL and result.certified and result.rel_gap <= TOL
    assert "solved on X/" in result.message and result.info["solved_on_X_over"] > 0
    np.testing.assert_allclose(result.w * 1e-8, reference.w, rtol=1e-3, atol=1e-3)
    assert abs(result.primal * 1e-16 - reference.primal) <= 1e-5 * reference.primal


@functools.cache
def _reference_primal(kind, bias, scale) -> float | None:
    """The first optimum of :data:`REFERENCES`, each certified by the problem to a relative gap
    ≤ 1e-6 (their default ``tol``); None when none reaches it."""
    problem = _problem(kind, bias, scale)
    for name, options in REFERENCES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = registry.get(name, **options).solve(problem)
        if result.status is Status.OPTIMAL:
            return result.primal
    return None


def test_the_grid_covers_every_kind_and_the_scaled_data_stay_separable():
    kinds = {case.values[0] for case in CASES}
    assert kinds == set(KINDS)
    assert {case.values[3] for case in CASES} >= {"clarabel", "barrier", "dcd", "smo", "cs_dcd"}
    for scale in SCALES:  # a hard margin on these data may never be called infeasible
        assert _problem("hard_margin", "none", scale).separating_point() is not None


@pytest.mark.parametrize(("kind", "bias", "scale", "name"), CASES)
def test_scaled_features_end_in_a_true_status(kind, bias, scale, name):
    problem = _problem(kind, bias, scale)
    solver = registry.get(name, tol=TOL, time_limit=TIME_LIMIT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = solver.solve(problem)
    if result.status is not Status.OPTIMAL:
        assert result.status in HONEST, (result.status, result.message)
        return
    if solver.optimal_by_subproblems:
        gaps = result.info["binary_rel_gaps"]
        assert gaps and all(g <= TOL for g in gaps), gaps
        return
    assert np.isfinite(result.primal) and result.certified, result.message
    assert result.rel_gap <= TOL, result.rel_gap
    reference = _reference_primal(kind, bias, scale)
    assert reference is not None, "optimal, but no reference certifies this problem to compare"
    assert abs(result.primal - reference) <= RTOL_PRIMAL * max(1.0, abs(reference)), (
        result.primal,
        reference,
    )


@pytest.mark.parametrize("make", [SoftMarginPrimal, SoftMarginDual, MulticlassHinge, Logistic])
def test_linear_views_refuse_a_scale_beyond_the_certifiable_range(make):
    """``C · max ‖x̃_i‖²`` is what a rescaling of the features leaves unchanged; just over
    ``MAX_C_TIMES_SQUARED_NORM`` is refused (naming X, the product and the C that would do),
    just under is accepted, and a regularized bias counts its constant feature."""
    from svmbench.problems.validation import MAX_C_TIMES_SQUARED_NORM

    data = BLOBS if make is MulticlassHinge else OVERLAP
    radius2 = float(np.max(np.sum(data.X**2, axis=1)))
    bias = "none"
    for factor, refused in ((2.0, True), (0.5, False)):
        s = np.sqrt(factor * MAX_C_TIMES_SQUARED_NORM / radius2)
        if refused:
            with pytest.raises(ValueError, match=r"X: C · max ‖x_i‖² = 1 · .* is over 1e\+23.*C ≤"):
                make(s * data.X, data.y, bias=bias)
        else:
            make(s * data.X, data.y, bias=bias)
    with pytest.raises(ValueError, match=r"C · max ‖x_i‖²"):
        make(data.X, data.y, bias="regularized", bias_scale=1e12)


def test_a_large_feature_scale_in_range_solves_without_numpy_warnings():
    """Features ×1e10, inside the range: the estimator's linear fit is optimal, and no NumPy
    overflow warning escapes from a solver's step (the barrier's normal equations overflowed
    there; the NaN they make is the loop's to judge)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from svmbench import SVMClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = SVMClassifier(kernel="linear").fit(X * 1e10, y)
    assert clf.result_.status is Status.OPTIMAL
