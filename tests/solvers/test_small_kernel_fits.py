"""Small kernel fits by the one-vs-one reduction: its pairs run ``auto``'s first method directly
(``Auto.first_method``) and ``auto``'s whole call only when that method stops short; the records
must be the ones ``auto`` gives each pair on its own, and each pair the reference optimum."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris

from svmbench.problems import KernelDual, MulticlassHinge
from svmbench.problems.kernels import resolve_gamma
from svmbench.solvers import Status, registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning

X_IRIS, Y_IRIS = load_iris(return_X_y=True)


def _pair_problems(X, y, C, gamma):
    g = resolve_gamma(gamma, X)
    k = int(y.max()) + 1
    for i in range(k):
        for j in range(i + 1, k):
            rows = np.flatnonzero((y == i) | (y == j))
            yield KernelDual(X[rows], np.where(y[rows] == i, 1.0, -1.0), C=C, gamma=g)


# C = 1e6, γ = 0.1: SMO's probe stops short on a pair and auto goes on (the exact finish of the
# probe's point, or the active-set method)
@pytest.mark.parametrize(("C", "gamma"), [(1.0, "scale"), (100.0, 1.0), (1e6, 0.1)])
def test_pairs_are_autos_records_and_the_reference_optima(C, gamma, monkeypatch):
    auto_cls = registry.solver_class("auto")
    went_on = []
    original = auto_cls.go_on
    monkeypatch.setattr(auto_cls, "go_on", lambda s, p, f: went_on.append(f) or original(s, p, f))
    problem = MulticlassHinge(X_IRIS, Y_IRIS, C=C)
    res = registry.get("ovo", kernel="rbf", gamma=gamma, bias="free", binary_solver="auto")
    res = res.solve(problem)
    assert res.status is Status.OPTIMAL
    auto = registry.get("auto", trace=False)
    tried = []
    for bp, got, status, rel_gap in zip(
        _pair_problems(X_IRIS, Y_IRIS, C, gamma),
        res.info["binary_variables"],
        res.info["binary_status"],
        res.info["binary_rel_gaps"],
        strict=True,
    ):
        alone = auto.solve(bp)
        early = alone.info.get("exact_finish", {}).get("early", False)  # the probe finished
        tried.append((*alone.info["auto"]["tried"], *(("exact_finish",) if early else ())))
        assert status == alone.status.value == "optimal"
        # the same point but for rounding: its certificate and its exact finish read the pairs'
        # shared kernel rows (the same entries but for their rounding, summed in another order;
        # at large C, P − D cancels terms of order C²‖α‖, the active-set method's choices
        # follow the certificate, and the finish's b is a mean of margins that sum terms of
        # order C: 1e-10 of b at C = 1e6 on iris)
        np.testing.assert_allclose(got["alpha"], alone.alpha, rtol=1e-10, atol=1e-12)
        assert got["b"] == pytest.approx(alone.b, rel=1e-9, abs=1e-12)
        assert max(rel_gap, alone.rel_gap) <= 1e-6
        ref = reference_solution(bp)
        assert abs(alone.primal - ref.primal) <= 1e-6 * max(1.0, abs(ref.primal))
        mine = bp.certificate(**got)  # the pair's point on its own kernel, not the shared rows
        assert mine.certified and mine.rel_gap <= 1e-6
        assert abs(mine.primal - ref.primal) <= 1e-6 * max(1.0, abs(ref.primal))
    # auto's next method went on from the first one's record exactly where it does alone
    assert len(went_on) == sum(len(t) > 1 for t in tried)
    assert all(f.solver == "smo" for f in went_on)
    if C == 1e6:  # the fallback was exercised
        assert went_on


def test_a_limit_still_goes_through_autos_fallback_and_warning():
    """A pair whose first method stops at max_iter gets auto's whole call (its next method)."""
    problem = MulticlassHinge(X_IRIS, Y_IRIS, C=1e6)
    solver = registry.get(
        "ovo", kernel="rbf", gamma=0.1, bias="free", binary_solver="auto",
        binary_options={"max_iter": 3},
    )  # fmt: skip
    with pytest.warns(ConvergenceWarning):
        res = solver.solve(problem)
    with pytest.warns(ConvergenceWarning):
        alone = [
            registry.get("auto", max_iter=3, trace=False).solve(bp)
            for bp in _pair_problems(X_IRIS, Y_IRIS, 1e6, 0.1)
        ]
    assert res.info["binary_status"] == tuple(r.status.value for r in alone)
    for got, r in zip(res.info["binary_variables"], alone, strict=True):
        assert set(got) == {k for k in ("w", "b", "alpha") if getattr(r, k) is not None}
        for key, value in got.items():
            np.testing.assert_array_equal(value, getattr(r, key))


def test_first_method_is_none_under_a_time_limit():
    bp = next(_pair_problems(X_IRIS, Y_IRIS, 1.0, "scale"))
    assert registry.get("auto", time_limit=5.0).first_method(bp) is None
    first = registry.get("auto").first_method(bp)
    assert first.name == "smo" and first.max_iter == 2000  # the probe of a small kernel dual


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_a_cold_start_is_the_general_formulas_at_zero(loss):
    """SMO's cold start writes G = −1, Ḡ = 0 and the bound status of α = 0 directly: the
    same arrays as the general formulas at α = 0 (weights of 0 give boxes [0, 0])."""
    from svmbench.solvers.smo import _bound_status, _gradients

    rows = np.flatnonzero(Y_IRIS > 0)
    w = np.where(np.arange(rows.size) % 7 == 0, 0.0, 1.0)
    bp = KernelDual(
        X_IRIS[rows], np.where(Y_IRIS[rows] == 1, 1.0, -1.0), C=3.0, gamma=0.5, loss=loss,
        sample_weight=w,
    )  # fmt: skip
    smo = registry.get("smo")
    c = smo._make_state(bp, None, pairs=True, n_slots=4).core
    zero = np.zeros(rows.size)
    G, Gbar = _gradients(c.X, c.sqn, c.kint, c.kflt, c.y, c.C, zero, zero)
    np.testing.assert_array_equal(c.G, G)
    np.testing.assert_array_equal(c.Gbar, Gbar)
    status = _bound_status(c.y, zero, c.C)
    np.testing.assert_array_equal(c.status, status)
    assert c.status.dtype == status.dtype and 0 in status and {1, 2} <= set(status)
