"""What a one-vs-one pair skips or reads once (issue 25, round 8) must give what it gave
before — the exact finish's report, the certificate's arithmetic bit for bit, the squared
norms, auto's choice — and fall back wherever it would not."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_wine
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual, MulticlassHinge
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel, squared_norms
from svmbench.solvers import Status, registry
from svmbench.solvers import reductions as reductions_module
from svmbench.solvers.auto import Auto, choose
from svmbench.solvers.base import ConvergenceWarning
from svmbench.solvers.exact_finish import ALREADY_EXACT, already_exact, exact_finish
from svmbench.solvers.smo_shared import solve_shared_pair

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)


def _pair(pos, neg, C, gamma=0.1, weights=None):
    rows = np.flatnonzero((Y_WINE == pos) | (Y_WINE == neg))
    sw = None if weights is None else weights[rows]
    bp = KernelDual(X_WINE[rows], np.where(Y_WINE[rows] == pos, 1.0, -1.0), C=C, gamma=gamma,
                    sample_weight=sw)  # fmt: skip
    table = KernelRows(np.ascontiguousarray(X_WINE), Kernel("rbf", gamma), Y_WINE)
    bp.share_rows(table, rows)
    return bp


WEIGHTS = np.random.default_rng(3).uniform(0.5, 2.0, size=Y_WINE.size)


def _pretest(bp, alpha, cert, tol):
    """The pretest with the bounds as an array and, where one C is shared, as its scalar form
    (the two must agree)."""
    report = already_exact(alpha, cert, bp.upper_bounds, tol)
    if bp.sample_weight is None:
        assert already_exact(alpha, cert, float(bp.C), tol) == report
    return report


@pytest.mark.parametrize("weights", [None, WEIGHTS])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_the_pretest_gives_the_finish_report_on_an_exact_point_and_defers_otherwise(C, weights):
    tol = 1e-6
    for pos, neg in ((0, 1), (0, 2), (1, 2)):
        bp = _pair(pos, neg, C, weights=weights)
        res = solve_shared_pair(registry.get("smo", tol=tol, trace=False), bp)
        assert res.status is Status.OPTIMAL
        variables = {"alpha": res.alpha, "b": res.b}
        cert = bp.certificate(**variables)
        report = _pretest(bp, res.alpha, cert, tol)
        assert report is not None and report["skipped"] == ALREADY_EXACT
        assert report == exact_finish(bp, variables, cert, tol=tol)[2]
        upper = bp.upper_bounds
        # a multiplier just off its bound (near 0, or near C where one is at C): the point
        # is not exact, the finish must look, and it does not call the point exact either
        offsets = [(np.flatnonzero(res.alpha == 0.0)[0], 1e-14)]
        offsets += [(i, 1.0 - 1e-12) for i in np.flatnonzero(res.alpha == upper)[:1]]
        for index, factor in offsets:
            alpha = res.alpha.copy()
            alpha[index] = factor * upper[index]
            moved = bp.certificate(alpha=alpha, b=res.b)
            assert _pretest(bp, alpha, moved, tol) is None
            finished = exact_finish(bp, {"alpha": alpha, "b": res.b}, moved, tol=tol)[2]
            assert finished.get("skipped") != ALREADY_EXACT


def test_the_pretest_defers_a_point_short_of_tol_or_out_of_its_box():
    bp = _pair(0, 1, 10.0)
    res = solve_shared_pair(registry.get("smo", tol=1e-6, trace=False), bp)
    cert = bp.certificate(alpha=res.alpha, b=res.b)
    assert _pretest(bp, res.alpha, cert, 1e-12) is None  # the certificate misses 1e-12
    outside = res.alpha.copy()
    outside[np.argmax(outside)] = 10.0 + 1e-9  # above C: the projection moves it
    assert _pretest(bp, outside, bp.certificate(alpha=outside, b=res.b), 1e-6) is None


@pytest.mark.parametrize("C", [1.0, 1e4, 1e8])
def test_a_pair_certificate_is_the_general_arithmetic_bit_for_bit(C):
    """The pair's certificate (hinge, free b given, shared rows) against the general path on
    the same projected point: the same floats, allowance and verdict (at C = 1e8 the
    allowance is refined, the long-double margins included)."""
    for pos, neg in ((0, 1), (1, 2)):
        bp = _pair(pos, neg, C, gamma=0.5)
        res = registry.get("smo", tol=1e-6, trace=False, max_iter=3000).solve(bp)
        a, residuals = bp._repair_alpha(res.alpha)
        fast = bp.certificate(alpha=res.alpha, b=res.b)
        general = bp._certificate_of(a, res.b, residuals)
        for name in ("primal", "dual", "gap", "rel_gap", "certified", "residuals"):
            assert getattr(fast, name) == getattr(general, name), name
        assert fast.primal_point["b"] == general.primal_point["b"]
        np.testing.assert_array_equal(fast.dual_point, general.dual_point)


def _digits_ovo(monkeypatch, sample_weight=None):
    """The pairs of a four-class digits fit (RBF, auto) and the calls to auto's first method."""
    X, y = load_digits(return_X_y=True)
    keep = y < 4
    X, y = X[keep] / 16.0, y[keep]
    pairs, asked = [], []
    original = reductions_module.solve_shared_pair
    monkeypatch.setattr(
        reductions_module, "solve_shared_pair",
        lambda s, p, **k: pairs.append(p) or original(s, p, **k),
    )  # fmt: skip
    first_method = Auto.first_method
    monkeypatch.setattr(
        Auto, "first_method", lambda s, p: asked.append(p.n_samples) or first_method(s, p)
    )
    problem = MulticlassHinge(X, y, C=1.0, sample_weight=sample_weight)
    ovo = registry.get("ovo", kernel="rbf", gamma=0.02, bias="free", binary_solver="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = ovo.solve(problem)
    assert res.status is Status.OPTIMAL
    return pairs, asked


def test_a_pair_reads_its_squared_norms_from_the_table_bit_for_bit(monkeypatch):
    pairs, _ = _digits_ovo(monkeypatch)
    assert len(pairs) == 6
    for bp in pairs:
        np.testing.assert_array_equal(bp.squared_norms, squared_norms(bp.X))


def test_auto_chooses_once_per_pair_size_and_as_it_chooses_for_each_pair(monkeypatch):
    pairs, asked = _digits_ovo(monkeypatch)
    sizes = [bp.n_samples for bp in pairs]
    assert len(set(sizes)) < len(sizes)  # some pairs share a size: asked once for them
    assert sorted(asked) == sorted(set(sizes))
    for bp in pairs:  # the memo's choice is the one auto makes for each pair on its own
        assert choose(bp).solvers[0] == "smo"
    weighted, asked = _digits_ovo(monkeypatch, np.linspace(0.5, 2.0, 720))
    assert len(asked) == len(weighted)  # with weights, every pair is asked


def test_a_quiet_lean_pair_at_max_iter_gives_the_same_record_without_warning():
    solver = registry.get("smo", tol=1e-8, trace=False, max_iter=5)
    with pytest.warns(ConvergenceWarning):
        loud = solve_shared_pair(solver, _pair(0, 1, 10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        quiet = solve_shared_pair(solver, _pair(0, 1, 10.0), warns=False)
    assert quiet.status is loud.status is Status.MAX_ITER
    np.testing.assert_array_equal(quiet.alpha, loud.alpha)
    assert quiet.rel_gap == loud.rel_gap and quiet.message == loud.message
