"""The one-vs-one pairs' lean path (issue 25, round 6): SMO on a pair on shared kernel rows run
without ``Solver.solve``'s generic wrappers (``solvers.smo_shared.solve_shared_pair``) must give
the record ``solve`` gives — the same iterates, certificate, status, exact finish and model —
and each pair the reference optimum."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual, MulticlassHinge
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel
from svmbench.solvers import Status, registry
from svmbench.solvers import reductions as reductions_module
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning, Solver
from svmbench.solvers.smo_shared import lean_pair_applies, solve_shared_pair

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)


def _record_pair_paths(monkeypatch):
    """Lists that fill with the pairs solved on the lean path and the solvers whose
    ``Solver.solve`` runs."""
    lean_calls, solves = [], []
    original = reductions_module.solve_shared_pair
    monkeypatch.setattr(
        reductions_module, "solve_shared_pair",
        lambda s, p, **k: lean_calls.append(p) or original(s, p, **k),
    )  # fmt: skip
    solve = Solver.solve
    monkeypatch.setattr(
        Solver, "solve", lambda s, p, **k: solves.append(s.name) or solve(s, p, **k)
    )
    return lean_calls, solves


def _shared_pair(X, y, pos, neg, C, gamma, table=None):
    """The pair "pos against neg" of (X, y) on a table of kernel rows (a new one if None)."""
    rows = np.flatnonzero((y == pos) | (y == neg))
    bp = KernelDual(X[rows], np.where(y[rows] == pos, 1.0, -1.0), C=C, gamma=gamma)
    if table is None:
        table = KernelRows(np.ascontiguousarray(X, dtype=np.float64), Kernel("rbf", gamma), y)
    bp.share_rows(table, rows)
    return bp


@pytest.mark.parametrize(("C", "gamma", "tol"), [(10.0, 0.1, 1e-8), (1.0, 0.05, 1e-6)])
def test_the_lean_record_is_solves_record_and_the_reference_optimum(C, gamma, tol):
    for pos, neg in ((0, 1), (0, 2), (1, 2)):
        solver = registry.get("smo", tol=tol, trace=False)
        lean_problem = _shared_pair(X_WINE, Y_WINE, pos, neg, C, gamma)
        assert lean_pair_applies(solver, lean_problem)
        lean = solve_shared_pair(solver, lean_problem)
        full = registry.get("smo", tol=tol, trace=False).solve(
            _shared_pair(X_WINE, Y_WINE, pos, neg, C, gamma)
        )
        assert lean.status is full.status is Status.OPTIMAL
        assert lean.iterations == full.iterations
        np.testing.assert_array_equal(lean.alpha, full.alpha)
        assert lean.b == full.b
        for name in ("primal", "dual", "gap", "rel_gap", "certified", "solver", "problem"):
            assert getattr(lean, name) == getattr(full, name), name
        assert lean.info == full.info  # SMO's counters and the exact finish's report
        np.testing.assert_array_equal(lean.model.support, full.model.support)
        np.testing.assert_array_equal(lean.model.dual_coef, full.model.dual_coef)
        assert lean.model.b == full.model.b
        assert lean.solve_time > 0.0 and lean.wall_time >= lean.solve_time
        ref = reference_solution(lean_problem)  # Clarabel's optimum of the pair
        assert abs(lean.primal - ref.primal) <= 10 * tol * max(1.0, abs(ref.primal))
        assert lean.rel_gap <= tol


def test_a_pair_stopped_by_max_iter_is_reported_and_warned_as_solve_reports_it():
    solver = registry.get("smo", tol=1e-8, trace=False, max_iter=5)
    with pytest.warns(ConvergenceWarning, match="5 pair updates"):
        lean = solve_shared_pair(solver, _shared_pair(X_WINE, Y_WINE, 0, 1, 10.0, 0.1))
    with pytest.warns(ConvergenceWarning):
        full = solver.solve(_shared_pair(X_WINE, Y_WINE, 0, 1, 10.0, 0.1))
    assert lean.status is full.status is Status.MAX_ITER
    assert lean.iterations == full.iterations == 5
    np.testing.assert_array_equal(lean.alpha, full.alpha)
    assert lean.rel_gap == full.rel_gap > 1e-8
    assert lean.info["exact_finish"] == full.info["exact_finish"] == {"skipped": "status max_iter"}


def test_an_indefinite_pair_ends_not_certified_as_solve_ends_it():
    """A sigmoid kernel that is not positive semi-definite: SMO's stationary point has no
    certificate; the lean path stops there, as the chunk loop does, instead of tightening eps."""

    def pair():
        rows = np.flatnonzero(Y_WINE < 2)
        bp = KernelDual(X_WINE[rows], np.where(Y_WINE[rows] == 0, 1.0, -1.0), C=1.0,
                        kernel="sigmoid", gamma=0.5, coef0=-1.0)  # fmt: skip
        table = KernelRows(np.ascontiguousarray(X_WINE), Kernel("sigmoid", 0.5, 3, -1.0), Y_WINE)
        bp.share_rows(table, rows)
        return bp

    lean_problem = pair()
    assert not lean_problem.convex
    lean = solve_shared_pair(registry.get("smo", trace=False), lean_problem)
    full = registry.get("smo", trace=False).solve(pair())
    assert lean.status is full.status is Status.NOT_CERTIFIED
    assert lean.message == full.message and "indefinite" in lean.message
    assert lean.iterations == full.iterations
    np.testing.assert_array_equal(lean.alpha, full.alpha)
    assert lean.info == full.info


@pytest.mark.parametrize(
    "options", [{"trace": True}, {"time_limit": 10.0}, {"stop_rule": "native"}]
)
def test_options_the_lean_path_leaves_out_go_through_solve(options):
    solver = registry.get("smo", **{"trace": False, **options})
    assert not lean_pair_applies(solver, _shared_pair(X_WINE, Y_WINE, 0, 1, 10.0, 0.1))
    alone = KernelDual(X_WINE[:100], np.where(Y_WINE[:100] == 0, 1.0, -1.0), C=1.0)
    assert not lean_pair_applies(registry.get("smo", trace=False), alone)  # no shared rows


@pytest.mark.parametrize("binary_solver", ["smo", "auto"])
def test_a_one_vs_one_fit_solves_its_shared_pairs_on_the_lean_path(binary_solver, monkeypatch):
    lean_calls, solves = _record_pair_paths(monkeypatch)
    X, y = load_digits(return_X_y=True)
    keep = y < 4
    X, y = X[keep] / 16.0, y[keep]
    problem = MulticlassHinge(X, y, C=1.0)
    ovo = registry.get("ovo", kernel="rbf", gamma=0.02, bias="free", binary_solver=binary_solver)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = ovo.solve(problem)
    assert res.status is Status.OPTIMAL
    assert len(lean_calls) == 6 and solves == ["ovo"]  # no pair went through Solver.solve
    table = lean_calls[0].shared_rows[0]
    assert all(p.shared_rows[0] is table for p in lean_calls)  # one table for every pair
    for bp, got, rel_gap in zip(
        lean_calls, res.info["binary_variables"], res.info["binary_rel_gaps"], strict=True
    ):
        cert = bp.certificate(**got)  # the pair's own certificate of the returned point
        assert cert.certified and cert.rel_gap == rel_gap <= 1e-6
        ref = reference_solution(bp)
        assert abs(cert.primal - ref.primal) <= 1e-5 * max(1.0, abs(ref.primal))


def test_a_point_that_did_not_move_is_not_certified_again(monkeypatch):
    """SMO's estimate may hold again after a chunk that moved nothing (eps tightened at the
    iris pair "versicolor against virginica", C = 1e9, γ = 100, probe-capped as auto runs it):
    the lean path keeps that point's certificate and verdict instead of drawing them again
    (each a long-double pass there), and its record is the same."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    drawn = []
    certificate = KernelDual.certificate

    def counted(self, **variables):
        drawn.append((id(self), variables["alpha"].tobytes(), variables["b"]))
        return certificate(self, **variables)

    pair = _shared_pair(X, y, 1, 2, 1e9, 100.0)
    solver = registry.get("smo", tol=1e-6, trace=False, max_iter=2000)
    monkeypatch.setattr(KernelDual, "certificate", counted)
    lean = solve_shared_pair(solver, pair)
    monkeypatch.setattr(KernelDual, "certificate", certificate)
    assert drawn and len(set(drawn)) == len(drawn)
    full = registry.get("smo", tol=1e-6, trace=False, max_iter=2000).solve(
        _shared_pair(X, y, 1, 2, 1e9, 100.0)
    )
    assert lean.status is full.status and lean.iterations == full.iterations
    for name in ("primal", "dual", "gap", "rel_gap", "certified"):
        assert getattr(lean, name) == getattr(full, name), name


def _gram_pair(pos, neg, C, gamma, shift=0.0):
    """The pair "pos against neg" of wine on a block of its precomputed RBF Gram matrix
    (``shift`` added to the diagonal, negative for an indefinite one)."""
    rows = np.flatnonzero((Y_WINE == pos) | (Y_WINE == neg))
    K = Kernel("rbf", gamma)(X_WINE[rows]) + shift * np.eye(rows.size)
    return KernelDual(K, np.where(Y_WINE[rows] == pos, 1.0, -1.0), C=C, kernel="precomputed")


@pytest.mark.parametrize(("C", "shift"), [(1.0, 0.0), (1e4, 0.0), (1e8, 0.0), (1.0, -0.5)])
def test_a_precomputed_gram_s_pair_on_the_lean_path_gets_solves_record(C, shift):
    """The lean path on a block of a precomputed Gram matrix: the record ``solve`` gives (an
    indefinite block's ``not_certified`` included), at C where the margin lift runs too."""
    for pos, neg in ((0, 1), (1, 2)):
        solver = registry.get("smo", tol=1e-6, trace=False)
        lean_problem = _gram_pair(pos, neg, C, 0.1, shift)
        assert lean_pair_applies(solver, lean_problem)
        lean = solve_shared_pair(solver, lean_problem)
        full = registry.get("smo", tol=1e-6, trace=False).solve(_gram_pair(pos, neg, C, 0.1, shift))
        assert lean.status is full.status
        assert (lean.status is Status.OPTIMAL) is (shift == 0.0)
        assert lean.iterations == full.iterations and lean.message == full.message
        np.testing.assert_array_equal(lean.alpha, full.alpha)
        for name in ("b", "primal", "dual", "gap", "rel_gap", "certified", "solver", "problem"):
            assert getattr(lean, name) == getattr(full, name), name
        assert lean.info == full.info
        np.testing.assert_array_equal(lean.model.support, full.model.support)
        np.testing.assert_array_equal(lean.model.dual_coef, full.model.dual_coef)
        assert lean.model.b == full.model.b and lean.model.kernel == "precomputed"
    squared = KernelDual(_gram_pair(0, 1, 1.0, 0.1).X, _gram_pair(0, 1, 1.0, 0.1).y,
                         kernel="precomputed", loss="squared_hinge")  # fmt: skip
    assert not lean_pair_applies(registry.get("smo", trace=False), squared)


def test_a_precomputed_one_vs_one_fit_solves_its_pairs_on_the_lean_path(monkeypatch):
    lean_calls, solves = _record_pair_paths(monkeypatch)
    K = Kernel("rbf", 0.1)(X_WINE)
    ovo = registry.get("ovo", kernel="precomputed", bias="free", binary_solver="auto")
    res = ovo.solve(MulticlassHinge(K, Y_WINE, C=1.0))
    assert res.status is Status.OPTIMAL
    assert len(lean_calls) == 3 and solves == ["ovo"]  # no pair went through Solver.solve
    for bp, got in zip(lean_calls, res.info["binary_variables"], strict=True):
        assert bp.kernel == "precomputed"
        cert = bp.certificate(**got)
        ref = reference_solution(bp)
        assert cert.certified and cert.rel_gap <= 1e-6
        assert abs(cert.primal - ref.primal) <= 1e-5 * max(1.0, abs(ref.primal))
