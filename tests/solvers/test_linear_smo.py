"""linear_smo: its pair updates against a plain loop of LIBSVM's rules, its b, its stopping rules,
its size limit, and auto's use of it (digits pairs with SVC's support; a probe that falls short)."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.svm import SVC

from svmbench.problems import SoftMarginPrimal, datasets
from svmbench.solvers import registry
from svmbench.solvers._jit import linear_smo as jit
from svmbench.solvers.linear_smo import MAX_N
from svmbench.solvers.records import Status


def _plain_updates(K, y, C, count):
    """``count`` updates of LIBSVM's SMO (WSS 2, the pair's step clipped to both boxes) in
    plain Python; stops early where the rule holds at 1e-3. The gradient is kept as
    ``g = −y ⊙ G`` (``G = Qα − 1``) with the loops' arithmetic: after a pair step that hits no
    bound the two values are equal in exact arithmetic, and the next choice between them is
    rounding's."""
    n = y.size
    alpha, g = np.zeros(n), y.copy()
    for _ in range(count):
        up = [t for t in range(n) if (y[t] > 0 and alpha[t] < C[t]) or (y[t] < 0 and alpha[t] > 0)]
        low = [t for t in range(n) if (y[t] > 0 and alpha[t] > 0) or (y[t] < 0 and alpha[t] < C[t])]
        i = max(up, key=lambda t: (g[t], -t))  # the first of ties
        if g[i] - min(g[t] for t in low) < 1e-3:
            break
        cands = [t for t in low if g[t] < g[i]]
        curv = {t: max(K[i, i] + K[t, t] - 2 * K[i, t], 1e-12) for t in cands}
        j = min(cands, key=lambda t: (-((g[i] - g[t]) ** 2) / curv[t], t))
        # the dual's exact minimizer along Δαᵢ = yᵢs, Δαⱼ = −yⱼs (yᵀα kept), in both boxes
        s = (g[i] - g[j]) / max(K[i, i] + K[j, j] - 2 * K[i, j], 1e-12)
        lo_i, hi_i = (-alpha[i], C[i] - alpha[i]) if y[i] > 0 else (alpha[i] - C[i], alpha[i])
        lo_j, hi_j = (alpha[j] - C[j], alpha[j]) if y[j] > 0 else (-alpha[j], C[j] - alpha[j])
        s = min(max(s, max(lo_i, lo_j)), min(hi_i, hi_j))
        new_i, new_j = alpha[i] + y[i] * s, alpha[j] - y[j] * s
        di, dj = (new_i - alpha[i]) * y[i], (new_j - alpha[j]) * y[j]
        alpha[i], alpha[j] = new_i, new_j
        g -= K[i] * di + K[j] * dj
    return alpha


@pytest.mark.parametrize("count", [1, 2, 5, 17, 60])
def test_the_pair_updates_are_libsvms(count):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(40) > 0, 1.0, -1.0)
    C = np.where(np.arange(40) % 3 == 0, 0.5, 2.0)
    K = X @ X.T
    alpha, F = np.zeros(40), y.copy()
    jit.pair_updates(*_whole(K), K.diagonal().copy(), y, C, alpha, F, 1e-3, count)
    expected = _plain_updates(K, y, C, count)
    assert np.allclose(alpha, expected, rtol=0, atol=1e-12)
    assert not np.array_equal(alpha, np.zeros(40))
    assert np.allclose(F, -y * (y * (K @ (alpha * y)) - 1.0), atol=1e-12)  # F = −y ⊙ G
    assert abs(alpha @ y) <= 1e-12 and np.all((alpha >= 0) & (alpha <= C))


def test_the_free_bias_is_libsvms():
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    C = np.full(6, 2.0)
    F = np.array([0.3, 0.5, 0.1, -0.2, 0.9, 0.4])
    free = np.array([0.0, 1.0, 0.5, 2.0, 0.0, 0.0])
    assert jit.free_bias(y, F, free, C) == pytest.approx((0.5 + 0.1) / 2)
    # no free multiplier: the midpoint of [max of the lower bounds, min of the upper ones]
    bounded = np.array([0.0, 2.0, 0.0, 2.0, 0.0, 0.0])
    lo = max(F[0], F[4], F[3])  # y=+1 at 0, y=−1 at C
    hi = min(F[1], F[2], F[5])  # y=+1 at C, y=−1 at 0
    assert jit.free_bias(y, F, bounded, C) == pytest.approx((lo + hi) / 2)


def _digits_pair(a=3, b=8):
    X, y = load_digits(return_X_y=True)
    keep = (y == a) | (y == b)
    return np.ascontiguousarray(X[keep] / 16.0), np.where(y[keep] == a, 1.0, -1.0)


@pytest.mark.parametrize("C", [0.01, 1.0, 1e4, 1e10])
def test_a_digits_pair_is_certified_with_svcs_support(C):
    X, y = _digits_pair()
    problem = SoftMarginPrimal(X, y, C=C, bias="free")
    result = registry.get("linear_smo").solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= 1e-6
    svc = SVC(kernel="linear", C=C).fit(X, y)
    support = np.flatnonzero(result.alpha > 0)
    assert set(support) == set(svc.support_)
    assert np.array_equal(np.sign(X @ result.w + result.b), svc.predict(X))


def test_the_early_finish_ends_at_libsvms_eps():
    X, y = _digits_pair()
    problem = SoftMarginPrimal(X, y, C=1.0, bias="free")
    finished = registry.get("linear_smo").solve(problem)
    assert finished.info["exact_finish"]["early"] is True
    assert finished.info["eps_final"] == 1e-3
    # without it (the rule at 1e-3 alone, then tightened) SMO needs more updates to tol
    native = registry.get("linear_smo", stop_rule="native", eps=1e-3).solve(problem)
    assert finished.iterations == native.iterations
    assert native.rel_gap > 1e-6


def _cancer(C):
    X, labels = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return SoftMarginPrimal(X, np.where(labels == 1, 1.0, -1.0), C=C, bias="free")


def test_a_long_run_is_finished_where_the_looser_rule_holds():
    # breast cancer at C = 1: more than TRY_WORK entries of K touched before eps = 1e-3 holds;
    # the run aims at TRY_EPS first and the finish certifies there, where the rule at that
    # tolerance first holds, long before it holds at 1e-3
    from svmbench.solvers.linear_smo import TRY_EPS, TRY_WORK

    problem = _cancer(1.0)
    finished = registry.get("linear_smo").solve(problem)
    assert finished.status is Status.OPTIMAL and finished.rel_gap <= 1e-6
    assert finished.info["exact_finish"]["early"] is True
    loose = registry.get("linear_smo", stop_rule="native", eps=TRY_EPS).solve(problem)
    assert finished.iterations == loose.iterations
    assert finished.iterations * problem.n_samples >= TRY_WORK
    native = registry.get("linear_smo", stop_rule="native", eps=1e-3).solve(problem)
    assert native.iterations > 1.5 * finished.iterations
    assert abs(finished.primal - native.primal) <= 1e-3 * abs(native.primal)


@pytest.mark.parametrize("pair", [(1, 7), (4, 5)])
def test_the_first_guess_of_the_free_set_is_the_margins_within_eps(pair):
    # every free multiplier's margin is within the rule's eps of 1: that band finds the free
    # set of these digits pairs at C = 100 in one KKT solve, where a tenth of the square root
    # of the gap estimate missed some and the thresholds of α took a second solve
    X, y = _digits_pair(*pair)
    problem = SoftMarginPrimal(X, y, C=100.0, bias="free")
    result = registry.get("linear_smo").solve(problem)
    report = result.info["exact_finish"]
    assert result.status is Status.OPTIMAL and report["early"] is True
    assert report["start"] == "margins" and len(report["tried"]) == 1


def test_the_native_rule_holds_where_it_stops():
    X, y = _digits_pair(1, 7)
    problem = SoftMarginPrimal(X, y, C=10.0, bias="free")
    result = registry.get("linear_smo", stop_rule="native", eps=1e-2).solve(problem)
    a, C = result.alpha, problem.upper_bounds
    g = -y * (y * (X @ (X.T @ (a * y))) - 1.0)  # −y ⊙ G
    up = ((y > 0) & (a < C)) | ((y < 0) & (a > 0))
    low = ((y > 0) & (a > 0)) | ((y < 0) & (a < C))
    assert g[up].max() - g[low].min() < 1e-2
    assert result.status in (Status.OPTIMAL, Status.NOT_CERTIFIED)


def test_a_problem_beyond_the_gram_limit_is_refused():
    X = np.zeros((MAX_N + 1, 1))
    X[::2] = 1.0
    problem = SoftMarginPrimal(X, np.where(X[:, 0] > 0, 1.0, -1.0), bias="free")
    why = registry.solver_class("linear_smo").unsupported_reason(problem)
    assert why is not None and "Gram matrix" in why and str(MAX_N) in why


def test_auto_goes_on_with_the_barrier_after_a_probe_short_of_tol():
    # overlapping classes at a large C: the pair updates grow with C, the barrier's steps do not
    data = datasets.load("gaussian:n=120,d=10,sep=0.3,seed=1")
    problem = SoftMarginPrimal(data.X, data.y, C=1e4, bias="free")
    result = registry.get("auto").solve(problem)
    assert result.info["auto"]["tried"] == ("linear_smo", "barrier")
    assert result.status is Status.OPTIMAL and result.rel_gap <= 1e-6


def test_refused_points_end_the_run_and_auto_goes_on():
    """The hard set (overlapping classes, rows repeated under the other label, d > n) at
    C = 1e8: the points the estimate proposes are refused (the margins' rounding weighs C
    times); after MAX_REFUSALS the run ends numerical_error instead of tightening eps to its
    floor (68 certificates before), and auto's barrier certifies."""
    from svmbench.benchmarks.studies.bench_extreme_grids import datasets as study_sets
    from svmbench.solvers.linear_smo import MAX_REFUSALS

    X, y = study_sets(["hard"])["hard"]
    problem = SoftMarginPrimal(X, np.where(y == y.max(), 1.0, -1.0), C=1e8, bias="free")
    alone = registry.get("linear_smo").solve(problem)
    assert alone.status is Status.NUMERICAL_ERROR and "no further progress" in alone.message
    assert alone.info["eps_final"] >= 1e-3 * 0.1 ** (MAX_REFUSALS - 1)
    chosen = registry.get("auto").solve(problem)
    assert chosen.info["auto"]["tried"] == ("linear_smo", "barrier")
    assert chosen.status is Status.OPTIMAL and chosen.rel_gap <= 1e-6


def _overlapping(n=400, seed=5):
    """Overlapping classes with per-example C: most multipliers end at a bound (shrinkable)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    y = np.where(X[:, 0] + X[:, 1] + 1.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    C = np.where(np.arange(n) % 4 == 0, 0.5, 2.0)
    return X @ X.T, y, C


def _whole(K):
    """The loops' ``(XT, K, have)`` of a Gram matrix given whole (no row computed by them)."""
    return np.empty((0, K.shape[0])), K.copy(), np.ones(K.shape[0], dtype=np.bool_)


def _lazy(X):
    """The loops' ``(XT, K, have)`` with no row computed yet (``linear_smo``'s dense start)."""
    n = X.shape[0]
    return np.ascontiguousarray(X.T), np.full((n, n), np.nan), np.zeros(n, dtype=np.bool_)


def _rule_gap(y, C, alpha, F):
    """``max_{I_up} F − min_{I_low} F`` of the whole problem."""
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return F[up].max() - F[low].min()


def test_shrinking_reaches_the_rule_on_the_whole_problem():
    # shrinking leaves most multipliers (at a bound) out of the scans; the rule it returns on
    # must hold for all of them, F being recomputed for those left out
    K, y, C = _overlapping()
    kd = K.diagonal().copy()
    a_plain, F_plain = np.zeros(y.size), y.copy()
    _, ok_plain = jit.pair_updates(*_whole(K), kd, y, C, a_plain, F_plain, 1e-3, 10**6)
    alpha, F = np.zeros(y.size), y.copy()
    done, ok = jit.shrinking_updates(*_whole(K), kd, y, C, alpha, F, 1e-3, 10**6)
    assert ok and ok_plain and done > 2 * jit.SHRINK_PERIOD  # the shrinking passes ran
    assert np.allclose(F, y - K @ (alpha * y), rtol=0, atol=1e-10)
    assert _rule_gap(y, C, alpha, F) < 1e-3
    assert abs(alpha @ y) <= 1e-12 and np.all((alpha >= 0) & (alpha <= C))

    def dual(a):
        return a.sum() - 0.5 * (a * y) @ K @ (a * y)

    # both at the native rule's eps: the same dual value to its accuracy
    assert abs(dual(alpha) - dual(a_plain)) <= 1e-3 * abs(dual(a_plain))


@pytest.mark.parametrize("budget", [150, 333, 1001])
def test_shrinking_hands_back_the_whole_gradient_at_its_budget(budget):
    K, y, C = _overlapping()
    alpha, F = np.zeros(y.size), y.copy()
    done, ok = jit.shrinking_updates(*_whole(K), K.diagonal().copy(), y, C, alpha, F, 1e-9, budget)
    assert done == budget and not ok
    assert np.allclose(F, y - K @ (alpha * y), rtol=0, atol=1e-10)


def test_shrinking_certifies_what_the_plain_updates_do():
    # breast cancer at C = 10: overlapping classes, thousands of updates (shrinking's case)
    X, labels = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    bp = SoftMarginPrimal(X, np.where(labels == 1, 1.0, -1.0), C=10.0, bias="free")
    results = [registry.get("linear_smo", shrinking=s).solve(bp) for s in (True, False)]
    for res in results:
        assert res.status is Status.OPTIMAL and res.certified and res.rel_gap <= 1e-6
    shrunk, plain = results
    assert shrunk.iterations > 2 * bp.n_samples  # shrinking ran
    assert abs(shrunk.primal - plain.primal) <= 2e-6 * abs(plain.primal)


def test_shrinking_must_be_a_bool():
    with pytest.raises(TypeError, match="shrinking"):
        registry.get("linear_smo", shrinking="yes")


@pytest.mark.parametrize("shrinking", [False, True])
def test_the_rows_computed_when_first_asked_are_the_gram_matrixs(shrinking):
    # the loops compute a row of K = X Xᵀ when a pair first needs it: those rows are the Gram
    # matrix's, symmetric bit for bit, the others never written, and the updates are those
    # on the whole matrix
    X, labels = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y, C = np.where(labels == 1, 1.0, -1.0), np.ones(labels.size)
    XT, K, have = _lazy(X)
    kd = (XT * XT).sum(axis=0)
    updates = jit.shrinking_updates if shrinking else jit.pair_updates
    alpha, F = np.zeros(y.size), y.copy()
    updates(XT, K, have, kd, y, C, alpha, F, 1e-3, 1500)
    rows = np.flatnonzero(have)
    assert 0 < rows.size < y.size // 4  # breast cancer's pairs touch few rows
    assert np.all(alpha[~have] == 0.0)  # every multiplier a pair moved has its row
    assert np.isnan(K[~have]).all()
    full = X @ X.T
    assert np.allclose(K[rows], full[rows], rtol=0, atol=1e-12 * np.abs(full).max())
    assert np.array_equal(K[np.ix_(rows, rows)], K[np.ix_(rows, rows)].T)
    assert np.array_equal(K[rows, rows], kd[rows])  # the diagonal summed as the rows are
    assert np.allclose(F, y - full @ (alpha * y), rtol=0, atol=1e-9)
    # the first updates choose the same pairs (later, rounding's choices between near ties
    # part the two runs)
    a_lazy, F_lazy = np.zeros(y.size), y.copy()
    updates(*_lazy(X), kd, y, C, a_lazy, F_lazy, 1e-3, 60)
    a_whole, F_whole = np.zeros(y.size), y.copy()
    updates(*_whole(full), full.diagonal().copy(), y, C, a_whole, F_whole, 1e-3, 60)
    assert np.allclose(a_lazy, a_whole, rtol=0, atol=1e-9) and np.any(a_lazy > 0)


def test_a_warm_start_computes_the_rows_of_its_support():
    X, y = _digits_pair()
    problem = SoftMarginPrimal(X, y, C=1.0, bias="free")
    solver = registry.get("linear_smo")
    cold = solver.solve(problem)
    warm = registry.get("linear_smo", eps=1e-9).solve(problem, warm_start=cold.alpha * 0.5)
    assert warm.status is Status.OPTIMAL and warm.rel_gap <= 1e-6
    assert abs(warm.primal - cold.primal) <= 2e-6 * abs(cold.primal)
