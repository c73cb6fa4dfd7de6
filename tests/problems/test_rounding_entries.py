"""The long-double RBF margins of the rounding allowance (problems/rounding.py): the entries that
can weigh in long double, the others in float64 with their own bound, and the entries a
problem's certificates keep. Each bound is held to sums computed to 60 digits."""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual
from svmbench.problems import rounding_entries as R
from svmbench.solvers import registry

needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is float64 here: the bounds hold, but say less",
)


def _exact(value) -> Decimal:
    """A float64 or long double, exactly (a long double is a float64 plus a float64 rest)."""
    high = np.float64(value)
    low = np.float64(np.longdouble(value) - np.longdouble(high))
    return Decimal(float(high)) + Decimal(float(low))


def _exact_sums(X, rows, support, coef, gamma):
    """``Σ_j exp(−γ‖x_i − x_j‖²) c_j`` to 60 digits (the distances exact, as fractions)."""
    out = []
    with localcontext() as ctx:
        ctx.prec = 60
        g = Decimal(Fraction(gamma).numerator) / Decimal(Fraction(gamma).denominator)
        for i in rows:
            total = Decimal(0)
            for j, c in zip(support, coef, strict=True):
                dist = sum(
                    (Fraction(a) - Fraction(b)) ** 2 for a, b in zip(X[i], X[j], strict=True)
                )
                exponent = -g * (Decimal(dist.numerator) / Decimal(dist.denominator))
                total += exponent.exp() * Decimal(float(c))
            out.append(total)
    return out


def _case(seed: int, n: int = 14, d: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.array([1.0, 3.0, 0.5]) + np.array([4.0, -2.0, 0.0])
    alpha = rng.uniform(0.0, 1e10, size=n)
    alpha[rng.random(n) < 0.2] = 0.0
    coef = alpha * np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return X, alpha, coef


def _distances(X):
    return ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)


@needs_long_double
@pytest.mark.parametrize("gamma", [1e-9, 1e-6, 0.05, 2.0, 6.0, 40.0])
@pytest.mark.parametrize("kept", [False, True])
def test_the_sums_are_within_their_bound_of_the_exact_ones(gamma, kept):
    """The bound holds for every row, whichever path each entry took (at γ = 2 and 6 the
    selection leaves some entries in float64, at 40 most; at 0.05 none; at 1e-9 every distance
    is float64's, at 1e-6 some)."""
    X, alpha, coef = _case(3)
    rows, support = np.arange(X.shape[0]), np.flatnonzero(alpha)
    entries = R.AccurateEntries(X, gamma) if kept else None
    g, e = R.accurate_rbf_sums(X, rows, support, coef[support], alpha[support], gamma, entries)
    exact = _exact_sums(X, rows, support, coef[support], gamma)
    for i in rows:
        assert abs(_exact(g[i]) - exact[i]) <= Decimal(float(e[i])), i
    # a long-double bound where it matters, not a float64 one: about 2⁻⁶⁴ of the magnitudes of
    # the entries above e⁻⁴⁰, float64's relative error of the others
    scaled = gamma * _distances(X)[np.ix_(rows, support)]
    K, near = np.exp(-scaled), scaled <= R.ACCURATE_EXPONENT
    weights = alpha[support]
    assert np.all(e <= 1e-17 * (np.where(near, K, 0.0) @ weights) + 1e-12 * (K @ weights) + 1e-300)
    assert np.all(e <= 1e-17 * (K @ weights) + 1e-30 * weights.sum())


@needs_long_double
@pytest.mark.parametrize("gamma", [1e-9, 1e-7])
def test_at_a_small_gamma_float64_distances_keep_long_double_entries(gamma):
    """Where float64's distance moves the exponent by at most ``u_L`` the entries are taken
    from it, in long double all the same: each within its bound of the exact entry (60 digits),
    and the bound is long double's, about ``5u_L``, where a float64 entry is off by up to
    2048 times that."""
    X, _, _ = _case(7, n=12)
    i, j = np.repeat(np.arange(12), 12), np.tile(np.arange(12), 12)
    D = _distances(X).ravel()
    assert np.all(gamma * D * R.gamma(X.shape[1] + 4) <= R.LONG_UNIT_ROUNDOFF)  # that path
    K, err, size = R.rbf_entries(X, i, j, gamma)
    u_long = R.LONG_UNIT_ROUNDOFF
    with localcontext() as ctx:
        ctx.prec = 60
        g = Decimal(Fraction(gamma).numerator) / Decimal(Fraction(gamma).denominator)
        for m in range(i.size):
            dist = sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(X[i[m]], X[j[m]]))
            exact = (-g * (Decimal(dist.numerator) / Decimal(dist.denominator))).exp()
            assert abs(_exact(K[m]) - exact) <= Decimal(float(err[m])), m
            assert exact <= Decimal(float(size[m]))
    assert np.all(err <= 6.5 * u_long * np.asarray(K, dtype=np.float64))


def test_a_problem_keeps_its_entries_from_its_second_refined_certificate(large_C_pair):
    """The first refinement of a problem computes its entries and keeps none (a one-vs-one
    pair refines one certificate: the table would cost twice its entries); the second makes
    the table, the third reads it; a new X or γ starts over."""
    X, y = large_C_pair
    problem = KernelDual(X, y, C=1e9, kernel="rbf", gamma=100.0)
    assert R.accurate_entries(problem) is None
    kept = R.accurate_entries(problem)
    assert isinstance(kept, R.AccurateEntries) and kept.X is problem.X
    assert R.accurate_entries(problem) is kept
    other = KernelDual(X, y, C=1e9, kernel="rbf", gamma=10.0)
    assert R.accurate_entries(other) is None
    assert len(X) > R.ACCURATE_CACHE_SAMPLES or R.accurate_entries(other) is not kept


@needs_long_double
def test_the_selection_leaves_entries_in_float64_and_the_sums_unchanged():
    """Entries beyond ``ACCURATE_EXPONENT`` are kept in float64: the sums move by far less
    than their bound against every entry in long double, and both hold the exact sums."""
    X, alpha, coef = _case(5)
    gamma = 6.0
    scaled = gamma * _distances(X)
    far = scaled > R.ACCURATE_EXPONENT
    assert far.any() and (~far).any() and np.any(far & (scaled < 700))
    rows, support = np.arange(X.shape[0]), np.flatnonzero(alpha)
    args = (X, rows, support, coef[support], alpha[support], gamma)
    g, e = R.accurate_rbf_sums(*args)
    saved = R.ACCURATE_EXPONENT
    try:
        R.ACCURATE_EXPONENT = np.inf
        g_all, e_all = R.accurate_rbf_sums(*args)
    finally:
        R.ACCURATE_EXPONENT = saved
    assert np.all(np.abs(np.asarray(g - g_all, dtype=np.float64)) <= e + e_all)
    assert np.all(e <= 1.01 * e_all)  # the float64 entries add next to nothing to the bound


def test_float64_entries_bound_their_error_below_the_normal_range():
    """An entry that underflows (to a subnormal or to 0) still has a true bound."""
    X = np.array([[0.0], [26.0], [27.3], [40.0]])
    i, j = np.zeros(4, dtype=np.int64), np.arange(4)
    K, err, size = R.rbf_entries(X, i, j, 1.0)
    exact = [float(np.exp(-(np.longdouble(x) ** 2))) for x in X[:, 0]]
    assert np.all(np.asarray(K, dtype=np.float64) <= size)
    for m in range(4):
        assert abs(float(K[m]) - exact[m]) <= err[m]
        assert exact[m] <= size[m]
    assert K[3] == 0.0 and err[3] > 0.0


def test_kept_entries_are_those_computed_afresh():
    """A block asked for after an overlapping one reads the kept entries: the same values and
    bounds as a fresh computation of that block."""
    X, _, _ = _case(9, n=20)
    kept = R.AccurateEntries(X, 3.0)
    kept.block(np.array([0, 3, 5, 7]), np.array([1, 2, 3, 4, 5]))
    rows, columns = np.array([5, 6, 0, 19]), np.array([4, 5, 6, 11, 1])
    K, err, size = kept.block(rows, columns)
    i, j = np.repeat(rows, columns.size), np.tile(columns, rows.size)
    K0, err0, size0 = (part.reshape(K.shape) for part in R.rbf_entries(X, i, j, 3.0))
    assert np.array_equal(K, K0) and np.array_equal(err, err0) and np.array_equal(size, size0)
    # each entry computed once, kept at (i, j) and (j, i): the blocks asked for and their mirrors
    asked = {(i, j) for i in (0, 3, 5, 7) for j in (1, 2, 3, 4, 5)}
    asked |= {(i, j) for i in rows.tolist() for j in columns.tolist()}
    assert kept.known.sum() == len(asked | {(j, i) for i, j in asked})
    assert np.array_equal(kept.K.reshape(20, 20), kept.K.reshape(20, 20).T)


@pytest.fixture(scope="module")
def large_C_pair():
    """Versicolor against virginica at C = 1e9, γ = 100: every point a support vector, the
    allowance refined in long double."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = y > 0
    X, y = np.ascontiguousarray(X[keep]), np.where(y[keep] == 1, 1.0, -1.0)
    return X, y


def test_a_problem_s_later_certificates_read_its_kept_entries(large_C_pair):
    """The second certificate of a problem (kept entries) is the first one's, and that of a
    problem built afresh; the entries kept are the rows × support the refinement read."""
    X, y = large_C_pair
    problem = KernelDual(X, y, C=1e9, kernel="rbf", gamma=100.0)
    solved = registry.get("active_set", tol=1e-6).solve(problem)
    first = problem.certificate(alpha=solved.alpha, b=solved.b)
    kept = problem.__dict__.get("accurate_rbf_entries")
    assert kept is not None and kept.known.any()
    again = problem.certificate(alpha=solved.alpha, b=solved.b)
    fresh = KernelDual(X, y, C=1e9, kernel="rbf", gamma=100.0)
    other = fresh.certificate(alpha=solved.alpha, b=solved.b)
    for cert in (again, other):
        assert (cert.primal, cert.dual, cert.rounding) == (first.primal, first.dual, first.rounding)
    assert first.rounding < 1e-8 * abs(first.primal)  # refined: the float64 bound is far above


def test_the_table_starts_with_the_blocks_of_the_first_refinement(monkeypatch):
    """The table made at a problem's second refinement holds the entries its first computed
    (the hard set at C = 1e10 refined the same 74 × 96 block twice): the second computes none
    of them again, and reads the same bits as a table computed afresh."""
    X, alpha, coef = _case(3, n=40)
    y = np.where(coef >= 0.0, 1.0, -1.0)
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=0.05)
    rows, support = np.arange(0, 40, 2), np.flatnonzero(alpha)
    assert R.accurate_entries(problem) is None
    keep = R.first_blocks(problem)
    assert keep == []
    first = R.accurate_rbf_sums(X, rows, support, coef[support], alpha[support], 0.05, None, keep)
    assert len(keep) == 1
    computed = []
    original = R.rbf_entries

    def counting(X, i, j, *args):
        computed.append(i.size)
        return original(X, i, j, *args)

    monkeypatch.setattr(R, "rbf_entries", counting)
    kept = R.accurate_entries(problem)
    assert kept.covers(rows, support) and R.first_blocks(problem) is None
    second = R.accurate_rbf_sums(X, rows, support, coef[support], alpha[support], 0.05, kept)
    assert not computed
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
    fresh = R.AccurateEntries(X, 0.05)
    for a, b in zip(kept.block(rows, support), fresh.block(rows, support), strict=True):
        assert np.array_equal(a, b)
    # the transposed entries, kept too, are those computed for them
    for a, b in zip(kept.block(support, rows), fresh.block(support, rows), strict=True):
        assert np.array_equal(a, b)
    assert sum(computed) > 0  # the fresh table computed its own
