"""A reduction's pairs on one SMO solver share the loops' arrays (``smo_shared.PairArrays``,
issue 25, round 9) and their rows and labels come from one mask per class
(``binary_pairs.PairRows``): each pair's record must be the record of fresh arrays, and the
templates the arrays are reset from must come out of every solve untouched."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits, load_wine
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual, MulticlassHinge
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel
from svmbench.solvers import Status, registry
from svmbench.solvers.binary_pairs import PairRows as _PairRows
from svmbench.solvers.binary_pairs import pair_rows as _rows
from svmbench.solvers.smo_shared import PairArrays, solve_shared_pair

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)


def _pair(table, pos, neg, C=10.0):
    rows = np.flatnonzero((Y_WINE == pos) | (Y_WINE == neg))
    bp = KernelDual(X_WINE[rows], np.where(Y_WINE[rows] == pos, 1.0, -1.0), C=C, gamma=0.1)
    bp.share_rows(table, rows)
    return bp


def test_pairs_after_a_larger_one_run_in_its_arrays_with_fresh_arrays_records():
    table = KernelRows(np.ascontiguousarray(X_WINE), Kernel("rbf", 0.1), Y_WINE)
    shared = registry.get("smo", tol=1e-8, trace=False)
    arrays = None
    for pos, neg in ((0, 1), (1, 2), (0, 2)):  # 130, then 119 and 107 examples
        lean = solve_shared_pair(shared, _pair(table, pos, neg))
        if arrays is None:
            arrays = shared._arrays
            templates = [a.copy() for a in (arrays.ft, arrays.it, arrays.ut)]
        assert shared._arrays is arrays  # the first pair's arrays, reset for each
        fresh_table = KernelRows(np.ascontiguousarray(X_WINE), Kernel("rbf", 0.1), Y_WINE)
        fresh = solve_shared_pair(
            registry.get("smo", tol=1e-8, trace=False), _pair(fresh_table, pos, neg)
        )
        assert lean.status is fresh.status is Status.OPTIMAL
        assert lean.iterations == fresh.iterations
        np.testing.assert_array_equal(lean.alpha, fresh.alpha)
        assert lean.b == fresh.b
        for name in ("primal", "dual", "rel_gap", "residuals", "info"):
            assert getattr(lean, name) == getattr(fresh, name), name
        np.testing.assert_array_equal(lean.model.dual_coef, fresh.model.dual_coef)
    # the templates (all_idx and the zero diagonal are their rows) were never written
    for got, want in zip((arrays.ft, arrays.it, arrays.ut), templates, strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_loops_read_views_of_the_shared_arrays_and_another_C_gets_its_own():
    table = KernelRows(np.ascontiguousarray(X_WINE), Kernel("rbf", 0.1), Y_WINE)
    solver = registry.get("smo", trace=False)
    first = solver._init_state(_pair(table, 0, 1), None)
    arrays = solver._arrays
    assert isinstance(arrays, PairArrays)
    core = first.core
    assert core.alpha.base is arrays.f and core.active.base is arrays.i
    assert not core.alpha.any() and (core.G == -1.0).all() and (core.C == 10.0).all()
    np.testing.assert_array_equal(core.active, np.arange(130))
    assert (core.slot_col == -1).all() and (core.col_slot == -1).all() and core.is_active.all()
    solver._init_state(_pair(table, 0, 2, C=3.0), None)  # another C: new arrays
    assert solver._arrays is not arrays and solver._arrays.C == 3.0


def test_pair_rows_and_labels_are_the_masks_of_their_two_classes():
    X, y = load_digits(return_X_y=True)
    keep = y < 5
    problem = MulticlassHinge(X[keep] / 16.0, y[keep], C=1.0)
    rows_of = _PairRows(problem)
    for pos in range(5):
        for neg in range(pos + 1, 5):
            rows = rows_of(pos, neg)
            np.testing.assert_array_equal(rows, _rows(problem, pos, neg))
            labels = rows_of.signs(pos).take(rows)
            np.testing.assert_array_equal(labels, np.where(problem.y[rows] == pos, 1.0, -1.0))
            assert set(np.unique(problem.y[rows])) == {pos, neg}
    np.testing.assert_array_equal(rows_of(2, -1), np.arange(problem.n_samples))
