"""One-vs-one pairs on one table of kernel rows (problems.kernel_rows, solvers.smo_shared): each
entry computed once for every pair, SMO's iterates those of the pair alone, the certificates
read the same rows, and every pair at the reference optimum."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_wine
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual, MulticlassHinge
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel
from svmbench.solvers import Status, registry
from svmbench.solvers._reference import reference_solution

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)


def _pairs(X, y, C, gamma, **params):
    k = int(y.max()) + 1
    for i in range(k):
        for j in range(i + 1, k):
            rows = np.flatnonzero((y == i) | (y == j))
            yield (
                rows,
                KernelDual(X[rows], np.where(y[rows] == i, 1.0, -1.0), C=C, gamma=gamma, **params),
            )


@pytest.mark.parametrize("kernel", ["rbf", "poly", "sigmoid", "linear"])
def test_the_table_holds_the_kernel_and_computes_only_the_blocks_asked_for(kernel):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    groups = rng.integers(0, 4, size=40)
    spec = Kernel(kernel, 0.3, 2, 0.5)
    table = KernelRows(X, spec, groups)
    assert table.entries == 0
    rows = table.position[np.flatnonzero(groups < 2)]
    want = table.blocks(rows)
    np.testing.assert_array_equal(want, [0, 1])
    coef = rng.normal(size=5)
    cols = rows[:5]
    got = table.times(rows, cols, coef, want)
    K = spec(X, X)
    original = np.flatnonzero(groups < 2)
    np.testing.assert_allclose(got, K[np.ix_(original, original[:5])] @ coef, rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    # whole rows computed for the five columns (NumPy), nothing else
    assert table.entries == 5 * 40
    # the table's rows are X's sorted by group; position maps them back
    np.testing.assert_array_equal(table.X[table.position], X)


def test_ovo_pairs_on_shared_rows_are_smos_iterates_alone_and_the_reference_optima():
    problem = MulticlassHinge(X_WINE, Y_WINE, C=10.0)
    ovo = registry.get("ovo", kernel="rbf", gamma=0.1, bias="free", binary_solver="smo",
                       binary_options={"tol": 1e-8})  # fmt: skip
    res = ovo.solve(problem)
    assert res.status is Status.OPTIMAL
    smo = registry.get("smo", tol=1e-8)
    for (_, bp), got in zip(_pairs(X_WINE, Y_WINE, 10.0, 0.1), res.info["binary_variables"],
                            strict=True):  # fmt: skip
        alone = smo.solve(bp)  # columns computed for the pair alone, certificate of its own
        assert alone.info["rows"] == "dense"
        # the same kernel entries bit for bit (the same arithmetic): the same iterates
        np.testing.assert_array_equal(got["alpha"], alone.alpha)
        assert got["b"] == alone.b
        ref = reference_solution(bp)
        cert = bp.certificate(**got)
        assert cert.certified and cert.rel_gap <= 1e-8
        assert abs(cert.primal - ref.primal) <= 1e-7 * max(1.0, abs(ref.primal))
    assert max(res.info["binary_rel_gaps"]) <= 1e-8


def test_digits_pairs_compute_each_kernel_entry_once_and_fewer_than_the_gram_matrix(
    monkeypatch,
):
    X, y = load_digits(return_X_y=True)
    X, y = X[:600] / 16.0, y[:600]
    tables = []
    original = KernelRows.__init__

    def kept(self, *args, **kwargs):
        original(self, *args, **kwargs)
        tables.append(self)

    monkeypatch.setattr(KernelRows, "__init__", kept)
    res = registry.get("ovo", kernel="rbf", gamma=0.02, bias="free", binary_solver="auto").solve(
        MulticlassHinge(X, y, C=1.0)
    )
    assert res.status is Status.OPTIMAL and max(res.info["binary_rel_gaps"]) <= 1e-6
    table = next(t for t in tables if t.n_rows == 600)
    # the pairs' columns and certificates read blocks of the rows they hold, each computed once:
    # far fewer than the n² entries of the Gram matrix (the pairs alone computed more: a
    # column per pair, and the certificates' blocks again)
    assert 0 < table.entries < 0.5 * 600**2
    per_pair = 0
    for (rows, bp), got in zip(_pairs(X, y, 1.0, 0.02), res.info["binary_variables"],
                               strict=True):  # fmt: skip
        per_pair += rows.size * np.count_nonzero(got["alpha"])  # the certificates alone
        cert = bp.certificate(**got)  # the pair's own kernel, not the table's
        assert cert.certified and cert.rel_gap <= 1e-6
    assert table.entries < per_pair


@pytest.mark.parametrize(
    ("options", "params"),
    [
        ({"bias": "regularized"}, {}),
        ({"loss": "squared_hinge"}, {}),
        ({"binary_solver": "clarabel"}, {}),
        ({"binary_options": {"cache_mb": 0.01}}, {}),
    ],
)
def test_rows_are_shared_only_where_smo_reads_them_and_the_table_fits(options, params):
    problem = MulticlassHinge(X_WINE, Y_WINE, C=1.0, **params)
    kwargs = {"kernel": "rbf", "gamma": 0.1, "bias": "free", "binary_solver": "smo"} | options
    solver = registry.get("ovo", **kwargs)
    assert solver._shared_rows(problem, 0.1) is None
    shared = registry.get("ovo", kernel="rbf", gamma=0.1, bias="free", binary_solver="smo")
    assert shared._shared_rows(problem, 0.1) is not None


def test_share_rows_refuses_what_the_table_cannot_serve():
    X = X_WINE[:20]
    y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
    table = KernelRows(np.ascontiguousarray(X), Kernel("rbf", 0.1))
    bp = KernelDual(X, y, gamma=0.1)
    with pytest.raises(TypeError, match="table must be a KernelRows"):
        bp.share_rows(X, np.arange(20))
    with pytest.raises(ValueError, match="rows must index the table's X once per example"):
        bp.share_rows(table, np.arange(19))
    with pytest.raises(ValueError, match=r"rows must lie in \[0, 20\)"):
        bp.share_rows(table, np.arange(1, 21))
    with pytest.raises(ValueError, match="no regularized bias"):
        KernelDual(X, y, gamma=0.1, bias="regularized").share_rows(table, np.arange(20))
    with pytest.raises(ValueError, match="is not this problem's"):
        KernelDual(X, y, gamma=0.2).share_rows(table, np.arange(20))
    with pytest.raises(ValueError, match="groups must be 20 non-negative integers"):
        KernelRows(np.ascontiguousarray(X), Kernel("rbf", 0.1), np.full(20, -1))
    with pytest.raises(TypeError, match="kernel must be a Kernel computed from rows"):
        KernelRows(np.ascontiguousarray(X), Kernel("precomputed"))
