"""A one-vs-one pair's certificate is the problem's own, from α and the kernel (issue 25): its
``K(αy)`` read from the shared table's stored entries, its repair the projection's, its record
the one ``certify_result`` draws anew; and the pairs after the first skip only the checks their
rows and labels already passed."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from svmbench import SVMClassifier
from svmbench.problems import KernelDual, MulticlassHinge
from svmbench.problems._binary import BinaryDualMixin
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel
from svmbench.solvers import Status, registry
from svmbench.solvers._reference import reference_solution

X_DIGITS, Y_DIGITS = load_digits(return_X_y=True)
X_DIGITS = X_DIGITS / 16.0


def _ovo(**options):
    return registry.get("ovo", kernel="rbf", bias="free", binary_solver="smo", **options)


def _spy_table_products(monkeypatch):
    """Count the certificates and the products they read from a shared table."""
    counts = {"certificates": 0, "table": 0}
    certificate, times = KernelDual.certificate, KernelRows.times

    def counted_certificate(self, **kw):
        counts["certificates"] += self.shared_rows is not None
        return certificate(self, **kw)

    def counted_times(self, *args):
        counts["table"] += 1
        return times(self, *args)

    monkeypatch.setattr(KernelDual, "certificate", counted_certificate)
    monkeypatch.setattr(KernelRows, "times", counted_times)
    return counts


def _assert_record_is_certify_result(solver, problem, res, rtol):
    anew = solver.certify_result(problem, res)
    assert anew.certified
    scale = max(1.0, abs(anew.primal))
    assert abs(res.primal - anew.primal) <= rtol * scale
    assert abs(res.dual - anew.dual) <= rtol * scale
    assert abs(res.rel_gap - anew.rel_gap) <= rtol


def test_digits_pairs_certify_from_the_table_and_certify_result_agrees(monkeypatch):
    counts = _spy_table_products(monkeypatch)
    problem = MulticlassHinge(X_DIGITS, Y_DIGITS, C=1.0)
    solver = _ovo(gamma=0.02)
    res = solver.solve(problem)
    assert res.status is Status.OPTIMAL
    assert len(res.info["binary_rel_gaps"]) == 45 and max(res.info["binary_rel_gaps"]) <= 1e-6
    # every pair's certificate read K(αy) from the table, none from a solver's sums
    assert counts["certificates"] >= 45 and counts["table"] >= counts["certificates"]
    monkeypatch.undo()
    # certify_result rebuilds the pairs without the table: its own kernel, another order
    _assert_record_is_certify_result(solver, problem, res, 1e-12)
    # two pairs against Clarabel's optimum of the same problem
    for (pos, neg), got in list(zip(solver._pairs(10), res.info["binary_variables"]))[:2]:
        keep = (Y_DIGITS == pos) | (Y_DIGITS == neg)
        y = np.where(Y_DIGITS[keep] == pos, 1.0, -1.0)
        bp = KernelDual(X_DIGITS[keep], y, C=1.0, gamma=0.02)
        ref = reference_solution(bp)
        cert = bp.certificate(**got)
        assert cert.certified and cert.rel_gap <= 1e-6
        assert abs(cert.primal - ref.primal) <= 1e-6 * max(1.0, abs(ref.primal))


def test_large_C_iris_pairs_certify_from_the_table_as_their_own_kernel_to_rounding(monkeypatch):
    """C = 1e10 (the 13 × 13 grid's largest) on SMO's shared pairs: ``certify_result`` computes
    each pair anew from α and its own kernel. D agrees to rounding; P's hinge term is C times
    margins computed in another order, so it agrees within the sums' rounding bound
    ``C Σ_t 2 n ε Σ_j α_j K_tj`` (Higham's bound for sums of n terms), itself small."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    counts = _spy_table_products(monkeypatch)
    problem = MulticlassHinge(X, y, C=1e10)
    solver = _ovo(gamma=1.0)
    res = solver.solve(problem)
    assert counts["certificates"] >= 3 and counts["table"] >= counts["certificates"]
    monkeypatch.undo()
    anew = solver.certify_result(problem, res)
    scale = max(1.0, abs(anew.primal))
    assert abs(res.dual - anew.dual) <= 1e-12 * scale
    bound = 0.0
    for (pos, neg), got in zip(solver._pairs(3), res.info["binary_variables"], strict=True):
        rows = np.flatnonzero((y == pos) | (y == neg))
        bp = KernelDual(X[rows], np.where(y[rows] == pos, 1.0, -1.0), C=1e10, gamma=1.0)
        n = bp.n_samples
        bound += 1e10 * 2 * n * np.finfo(float).eps * float((bp.gram @ got["alpha"]).sum())
    assert bound <= 0.05 * scale  # a worst case that still says something
    assert abs(res.primal - anew.primal) <= min(bound, 1e-4 * scale)
    assert abs(res.gap - anew.gap) <= bound + 1e-12 * scale


def test_the_estimator_on_digits_matches_svcs_support_and_coefficients():
    ours = SVMClassifier(gamma=0.02).fit(X_DIGITS, Y_DIGITS)
    theirs = SVC(gamma=0.02, tol=1e-6).fit(X_DIGITS, Y_DIGITS)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, atol=2e-3)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=2e-3)


def _pair(C=10.0, sample_weight=None):
    keep = Y_DIGITS < 2
    y = np.where(Y_DIGITS[keep] == 0, 1.0, -1.0)
    return KernelDual(X_DIGITS[keep], y, C=C, gamma=0.02, sample_weight=sample_weight)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_repair_of_a_solvers_point_is_the_projection(weighted):
    """SMO's α, off ``yᵀα = 0`` by a residue within rounding: the one-coordinate step gives
    the general projection's point (``BinaryDualMixin``); out of the box, the projection."""
    n = int(np.count_nonzero(Y_DIGITS < 2))
    sw = np.random.default_rng(1).uniform(0.5, 2.0, n) if weighted else None
    problem = _pair(sample_weight=sw)
    alpha = registry.get("smo", tol=1e-8, trace=False).solve(problem).alpha.copy()
    upper = problem.upper_bounds
    free = np.flatnonzero((alpha > 0) & (alpha < upper))
    assert free.size >= 2 and np.any(alpha == 0)
    alpha[free[0]] += 5e-15 * alpha.sum()  # a residue within 64 ε Σα
    assert float(problem.y @ alpha) != 0.0
    a, residuals = problem._repair_alpha(alpha)
    b, general = BinaryDualMixin._repair_alpha(problem, alpha)
    np.testing.assert_array_equal(a, b)
    assert residuals == general and residuals["dual_infeasibility"] > 0
    assert np.count_nonzero(a != alpha) == 1
    outside = alpha.copy()
    outside[0] = -1.0
    np.testing.assert_array_equal(
        problem._repair_alpha(outside)[0], BinaryDualMixin._repair_alpha(problem, outside)[0]
    )


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_the_certificate_still_refuses_non_finite_alpha(bad):
    problem = _pair()
    alpha = np.zeros(problem.n_samples)
    alpha[7] = bad
    with pytest.raises(ValueError, match="alpha must contain only finite values"):
        problem.certificate(alpha=alpha, b=0.0)
    with pytest.raises(ValueError, match="alpha must have length n_samples=360"):
        problem.certificate(alpha=np.zeros(3), b=0.0)


def test_the_tables_product_is_the_kernels_even_with_blocks_missing():
    """A fresh table (no block computed): the product computes the support's rows first, and
    gives the pair's own kernel product, any support, to rounding."""
    X, y = load_iris(return_X_y=True)
    kernel = Kernel("rbf", 0.5)
    rng = np.random.default_rng(2)
    for pos, neg in ((0, 1), (0, 2), (1, 2)):
        rows = np.flatnonzero((y == pos) | (y == neg))
        labels = np.where(y[rows] == pos, 1.0, -1.0)
        table = KernelRows(np.ascontiguousarray(X), kernel, y)
        shared = KernelDual(X[rows], labels, C=1.0, gamma=0.5)
        alone = KernelDual(X[rows], labels, C=1.0, gamma=0.5)
        shared.share_rows(table, rows)
        coef = np.where(rng.random(rows.size) < 0.3, rng.normal(size=rows.size), 0.0)
        np.testing.assert_allclose(
            shared.kernel_times(coef), alone.kernel_times(coef), rtol=0, atol=1e-13
        )
        assert table.done[table.position[rows[coef != 0]]].any(axis=1).all()


def test_pairs_after_the_first_are_built_without_a_second_check(monkeypatch):
    """The first pair through the constructor, the others from its checked parameters; each
    pair the constructor's problem, field for field, and the fit unchanged."""
    built = []
    original = KernelDual._on_checked_rows

    def spy(self, X, y):
        pair = original(self, X, y)
        built.append(pair)
        return pair

    monkeypatch.setattr(KernelDual, "_on_checked_rows", spy)
    X, y = load_iris(return_X_y=True)
    problem = MulticlassHinge(X, y, C=3.0)
    res = _ovo(gamma=0.5).solve(problem)
    assert res.status is Status.OPTIMAL and len(built) == 2
    for pair, (pos, neg) in zip(built, ((0, 2), (1, 2)), strict=True):
        rows = np.flatnonzero((y == pos) | (y == neg))
        checked = KernelDual(X[rows], np.where(y[rows] == pos, 1.0, -1.0), C=3.0, gamma=0.5)
        for name in ("C", "kernel", "gamma", "degree", "coef0", "loss", "bias", "bias_scale"):
            assert getattr(pair, name) == getattr(checked, name), name
        assert pair.sample_weight is None and pair.kernel_spec == checked.kernel_spec
        np.testing.assert_array_equal(pair.X, checked.X)
        np.testing.assert_array_equal(pair.y, checked.y)
        assert pair.y.dtype == np.float64 and pair.X.flags.c_contiguous


def test_a_trusted_pair_still_checks_what_its_rows_decide():
    problem = _pair(C=1.0)
    with pytest.raises(ValueError, match=r"C · max K̃_ii = .* is over 1e\+11"):
        KernelDual(problem.X, problem.y, C=1e6, kernel="poly", gamma=1.0)._on_checked_rows(
            problem.X * 30.0, problem.y
        )
    weighted = _pair(sample_weight=np.ones(problem.n_samples))
    with pytest.raises(TypeError, match="no sample weights"):
        weighted._on_checked_rows(problem.X, problem.y)


def _numpy_pair_certificate(problem, alpha, b):
    """The pair certificate's arithmetic in NumPy, step for step (before its one jitted pass):
    the repaired α, ``g = K(αy)`` from the table, the margins, the loss and the rounding."""
    from svmbench.problems.rounding import kernel_dual_rounding

    a, _ = problem._repair_alpha(alpha)
    table, rows, blocks = problem.shared_rows
    ay = a * problem.y
    nz = ay.nonzero()[0]
    g = table.times(rows, rows[nz], ay[nz], blocks) if nz.size else np.zeros(a.size)
    quad = 0.5 * float(ay @ g)
    m = (g + b) * problem.y
    loss = problem.C * float(np.add.reduce(np.maximum(1.0 - m, 0.0)))
    return kernel_dual_rounding(problem, a, g, m, b, 0.0, quad, loss, 0.0)


@pytest.mark.parametrize(
    "data, C, gamma, per_row",
    [
        ("digits", 1.0, 0.02, False),
        ("digits", 100.0, 0.05, False),
        ("iris", 1e8, 10.0, True),
        ("iris", 1e4, 0.1, True),
    ],
)
def test_the_pair_certificates_jitted_pass_is_numpys_bit_for_bit(
    data, C, gamma, per_row, monkeypatch
):
    """The margins, ``C Σ max(0, 1 − m)``, ``Σα`` and the rounding screen's maxima taken in
    one jitted pass (problems/_sums.py): P, D and the rounding allowance those of NumPy's
    formulas, to the last bit, where the screen's bound is the allowance (digits) and where
    the per-row bound is computed (iris at large C)."""
    from svmbench.problems import rounding

    X, y = (X_DIGITS, Y_DIGITS) if data == "digits" else load_iris(return_X_y=True)
    problem = MulticlassHinge(np.ascontiguousarray(X, dtype=np.float64), y, C=C)
    pairs, rows = [], []
    certificate, row_errors = KernelDual.certificate, rounding.kernel_row_errors

    def kept(self, **kw):
        cert = certificate(self, **kw)
        if self.shared_rows is not None:
            pairs.append((self, kw["alpha"], kw["b"], cert))
        return cert

    def counted(*args, **kw):
        rows.append(1)
        return row_errors(*args, **kw)

    monkeypatch.setattr(KernelDual, "certificate", kept)
    monkeypatch.setattr(rounding, "kernel_row_errors", counted)
    _ovo(gamma=gamma).solve(problem)
    assert len(pairs) >= 3 and bool(rows) == per_row
    for pair, alpha, b, cert in pairs:
        P, D, allowance = _numpy_pair_certificate(pair, alpha, b)
        assert (cert.primal, cert.dual, cert.rounding) == (P, D, allowance)


def test_a_pairs_jitted_repair_is_the_numpy_repair_bit_for_bit():
    """``_pair_repair`` (one jitted pass beside NumPy's ``yᵀα``) against ``_repair_alpha``:
    the same α and dual infeasibility, or the same general projection, on points in the box
    with a residue within rounding, none, one beyond it, no free coordinate, out of the box."""
    problem = _pair(C=2.0)
    problem._share_checked_rows(
        KernelRows(X_DIGITS, Kernel("rbf", 0.02), Y_DIGITS),
        np.flatnonzero(Y_DIGITS < 2),
        np.array([0, 1]),
    )
    rng = np.random.default_rng(3)
    n, y = problem.n_samples, problem.y
    points = []
    for _ in range(20):
        alpha = np.where(rng.random(n) < 0.3, rng.uniform(0.0, 2.0, n), 0.0)
        alpha[rng.random(n) < 0.1] = 2.0
        alpha[y > 0] *= alpha[y < 0].sum() / alpha[y > 0].sum()  # yᵀα = 0 up to rounding
        np.minimum(alpha, 2.0, out=alpha)
        points.append(alpha)
    moved = points[0].copy()
    moved[np.flatnonzero((moved > 0) & (moved < 2.0))[0]] += 1e-13
    beyond = points[1].copy()
    beyond[np.flatnonzero(beyond > 0)[0]] *= 0.5
    bounds = np.where(y > 0, 2.0, 0.0)
    bounds[np.flatnonzero(y < 0)[: int(np.count_nonzero(y > 0))]] = 2.0
    outside = points[2].copy()
    outside[5] = 2.5
    points += [moved, beyond, bounds, outside, np.zeros(n)]
    for alpha in points:
        a, residuals = problem._pair_repair(alpha)
        want, expected = problem._repair_alpha(alpha)
        assert a.tobytes() == want.tobytes() and residuals == expected
    assert problem._pair_repair(moved)[1]["dual_infeasibility"] > 0.0
    bad = points[3].copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="alpha must contain only finite values"):
        problem._pair_repair(bad)
