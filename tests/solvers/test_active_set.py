"""The active-set method for small kernel duals (solvers/active_set.py) and auto's small-dual
rule: certified optima at C up to 1e10 on iris-sized data, matched against independent methods
(Clarabel where it converges; at large C, where it does not, the barrier, each point's primal
value held against the other's dual value), on hard data (duplicated points, overlapping
classes), every bias and both hinge losses."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

from svmbench import SVMClassifier
from svmbench.problems import KernelDual, datasets
from svmbench.solvers import active_set, auto, auto_rules, registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import Status

TOL = 1e-6


@pytest.fixture(scope="module")
def iris_pair():
    """Versicolor against virginica (the overlapping pair), standardized, 80 of its points."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = y != 0
    rows = np.random.default_rng(0).permutation(np.flatnonzero(keep))[:80]
    return X[rows], np.where(y[rows] == 1, 1.0, -1.0)


def _hard_data(seed=3):
    """Overlapping gaussian classes with a block of exactly duplicated rows (and one duplicated
    row carrying both labels)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(50, 3))
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    X[:, 0] += 0.5 * y  # the classes overlap
    X = np.vstack([X, X[:8], X[:1]])
    y = np.concatenate([y, y[:8], -y[:1]])
    return X, y


def _held_against(problem, ours, other):
    """Each point's primal value is at least the other's dual value (weak duality), and ours is
    within tol of the other's dual value (a lower bound of the optimum found independently)."""
    a = problem.certificate(alpha=ours.alpha, b=ours.b)
    o = problem.certificate(alpha=other.alpha, b=other.b)
    assert a.certified and o.certified
    scale = max(1.0, abs(a.primal))
    # float64 slack: at C = 1e8 and γ = 1e-7, K is within 1e-5 of all ones and αᵀQα cancels
    # terms thousands of times its value; the order of the kernel products' sums (BLAS or the
    # fused loop) moves each value by a few 1e-9 of it
    slack = 1e-8 * scale
    assert a.primal >= o.dual - slack and o.primal >= a.dual - slack
    assert a.primal - o.dual <= 2 * TOL * scale


@pytest.mark.parametrize("C", [1e8, 1e10])
@pytest.mark.parametrize("gamma", [1e-7, 1e-3, 0.1, 10.0, 1000.0])
def test_large_C_rbf_on_iris_ends_optimal_and_matches_the_barrier(iris_pair, C, gamma):
    X, y = iris_pair
    problem = KernelDual(X, y, kernel="rbf", gamma=gamma, C=C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("auto", tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert result.status is Status.OPTIMAL and result.certified and result.rel_gap <= TOL
    # certified again by a problem built here, not the solver's
    fresh = KernelDual(X, y, kernel="rbf", gamma=gamma, C=C)
    cert = fresh.certificate(alpha=result.alpha, b=result.b)
    assert cert.certified and cert.rel_gap <= TOL
    # the barrier is asked for 1e-9: at C ≥ 1e8 that can be under the rounding floor of float64
    # (C times its 80 free margins' rounding), where it stops, its gap within the allowance
    assert barrier.status is Status.OPTIMAL or (
        barrier.status is Status.NOT_CERTIFIED
        and "rounding floor" in barrier.message
        and barrier.certified
        and barrier.gap <= barrier.residuals["rounding"]
    )
    _held_against(fresh, result, barrier)


@pytest.mark.parametrize("C", [1e8, 1e10])
def test_the_active_set_method_alone_certifies_large_C(iris_pair, C):
    X, y = iris_pair
    problem = KernelDual(X, y, kernel="rbf", gamma=0.1, C=C)
    result = registry.get("active_set", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
    assert result.iterations < 200  # the active set's changes, not C, set the count


@pytest.mark.parametrize("bias", ["free", "none", "regularized"])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_it_agrees_with_clarabel_on_duplicated_overlapping_data(bias, loss, kernel):
    X, y = _hard_data()
    problem = KernelDual(X, y, kernel=kernel, gamma=0.5, degree=2, C=10.0, bias=bias, loss=loss)
    result = registry.get("active_set", tol=TOL).solve(problem)
    reference = reference_solution(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
    scale = max(1.0, abs(reference.primal))
    assert abs(result.primal - reference.primal) <= 2 * TOL * scale
    assert result.primal >= reference.dual - 1e-9 * scale


def test_a_warm_start_from_a_short_smo_run_reaches_the_same_optimum(iris_pair):
    X, y = iris_pair
    problem = KernelDual(X, y, kernel="rbf", gamma=1e-3, C=1e8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        short = registry.get("smo", max_iter=200).solve(problem)
    assert short.status is not Status.OPTIMAL
    warm = registry.get("active_set").solve(problem, warm_start=short)
    cold = registry.get("active_set").solve(problem)
    assert warm.status is Status.OPTIMAL and cold.status is Status.OPTIMAL
    _held_against(problem, warm, cold)


def test_a_capped_run_is_not_reported_optimal(iris_pair):
    X, y = iris_pair
    problem = KernelDual(X, y, kernel="rbf", gamma=10.0, C=1e10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("active_set", max_iter=2).solve(problem)
    assert result.status is Status.MAX_ITER
    assert not result.rel_gap <= TOL


def test_it_refuses_a_dual_too_large_for_its_dense_matrix():
    rng = np.random.default_rng(0)
    n = active_set.MAX_SAMPLES + 1
    problem = KernelDual(rng.normal(size=(n, 2)), np.where(rng.random(n) < 0.5, 1.0, -1.0))
    with pytest.raises(TypeError, match="active_set.*MAX_SAMPLES"):
        registry.get("active_set").solve(problem)


def test_auto_probes_smo_then_runs_the_active_set_on_a_small_dual(iris_pair):
    X, y = iris_pair
    problem = KernelDual(X, y, kernel="rbf", gamma=10.0, C=1e10)
    choice = auto.choose(problem)
    assert choice.solvers[:2] == ("smo", "active_set")
    assert choice.probe == auto.SMALL_KERNEL_PROBE
    big = KernelDual(np.vstack([X] * 4), np.concatenate([y] * 4), kernel="rbf", C=1e4)
    assert "active_set" not in auto.choose(big).solvers  # 320 points at a moderate C: smo
    large_C = KernelDual(big.X, big.y, kernel="rbf", C=auto_rules.LARGE_C)
    assert auto.choose(large_C).solvers[:2] == ("smo", "active_set")
    assert auto.choose(large_C).probe == auto_rules.LARGE_C_PROBE
    n = auto_rules.LARGE_C_KERNEL_N + 1
    assert n == active_set.MAX_SAMPLES + 1  # beyond, the active-set method refuses the dual
    rng = np.random.default_rng(0)
    too_big = KernelDual(rng.normal(size=(n, 2)), np.where(rng.random(n) < 0.5, 1.0, -1.0), C=1e10)
    assert "active_set" not in auto.choose(too_big).solvers
    linear = KernelDual(big.X, big.y, kernel="linear", C=1e8)
    assert "active_set" not in auto.choose(linear).solvers


@pytest.mark.parametrize("gamma", [1e-5, 1e-3])
def test_auto_certifies_a_digits_pair_at_C_1e10(gamma):
    """Digits 3 against 8 (357 points): SMO ended numerical_error at C = 1e10 after about 4000
    updates, and the barrier after it stopped at the rounding floor (every multiplier inside its
    box, each weighing C in the margins' rounding). Auto's probe now certifies, its free set
    solved with lifted margins (solvers/margin_lift.py), or the active-set method from its
    point; the point is held against the barrier's at a fresh problem."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = (y == 3) | (y == 8)
    X, y = np.ascontiguousarray(X[keep] / 16.0), np.where(y[keep] == 3, 1.0, -1.0)
    problem = KernelDual(X, y, kernel="rbf", gamma=gamma, C=1e10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("auto", tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
    assert result.info["auto"]["tried"] in (("smo",), ("smo", "active_set"))
    fresh = KernelDual(X, y, kernel="rbf", gamma=gamma, C=1e10)
    assert fresh.certificate(alpha=result.alpha, b=result.b).meets(TOL)
    _held_against(fresh, result, barrier)
    # fewer support vectors than points: a vertex of the box, not an interior point
    assert np.count_nonzero(result.alpha) < X.shape[0] / 4


def test_the_estimator_fits_iris_at_C_1e10_certified():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = SVMClassifier(kernel="rbf", C=1e10, gamma=10.0).fit(X, y)
    assert est.result_.status is Status.OPTIMAL and est.result_.rel_gap <= TOL
    assert est.score(X, y) == 1.0  # C = 1e10: the hard margin, separable in this feature space


@pytest.mark.parametrize("C", [1e4, 1e8])
@pytest.mark.parametrize("bias", ["free", "none"])
def test_auto_agrees_with_the_barrier_on_duplicated_overlapping_data_at_large_C(C, bias):
    X, y = _hard_data(seed=5)
    problem = KernelDual(X, y, kernel="rbf", gamma=0.5, C=C, bias=bias)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("auto", tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
    assert barrier.certified
    _held_against(problem, result, barrier)


def _raw_iris_pair(C, gamma):
    """Versicolor against virginica on raw iris (the grid search's overlapping pair)."""
    X, y = load_iris(return_X_y=True)
    keep = y != 0
    return KernelDual(X[keep], np.where(y[keep] == 1, 1.0, -1.0), C=C, gamma=gamma)


def test_a_probe_at_its_cap_whose_lifted_margins_certify_is_optimal():
    """At C = 1e6, γ = 0.001 SMO's probe stops at its cap with its margins within 1e-7 of 1: lifted
    off them (solvers/margin_lift.py) the point is certified, by a problem built anew too, and
    held against the barrier's optimum."""
    problem = _raw_iris_pair(1e6, 0.001)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe = registry.get("smo", max_iter=auto.SMALL_KERNEL_PROBE, tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert probe.iterations >= auto.SMALL_KERNEL_PROBE  # it stopped at its cap
    assert probe.status is Status.OPTIMAL and probe.info["margin_lift"]["lifted"] > 0
    fresh = _raw_iris_pair(1e6, 0.001)
    assert fresh.certificate(alpha=probe.alpha, b=probe.b).meets(TOL)
    _held_against(fresh, probe, barrier)


@pytest.mark.parametrize(("C", "gamma"), [(1e4, 0.01), (1e5, 0.1)])
def test_auto_finishes_a_probe_that_stopped_short_exactly(C, gamma):
    """Where SMO's probe stops at its cap, auto solves the free multipliers of the probe's active
    set (the exact finish) before it would start the active-set method: the finished point is
    the optimum, certified by a problem built anew and held against the barrier's."""
    problem = _raw_iris_pair(C, gamma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe = registry.get("smo", max_iter=auto.SMALL_KERNEL_PROBE).solve(problem)
        result = registry.get("auto", tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert probe.status is Status.MAX_ITER and probe.rel_gap > TOL  # the probe stopped short
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
    assert result.info["auto"]["tried"] == ("smo",)
    assert result.info["exact_finish"]["early"] and result.info["exact_finish"]["accepted"]
    assert "finished exactly" in result.message
    fresh = _raw_iris_pair(C, gamma)
    cert = fresh.certificate(alpha=result.alpha, b=result.b)
    assert cert.certified and cert.rel_gap <= TOL
    _held_against(fresh, result, barrier)


def test_auto_runs_the_active_set_where_the_probes_finish_does_not_certify():
    problem = _raw_iris_pair(1e6, 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("auto", tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert result.info["auto"]["tried"] == ("smo", "active_set")
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL
    _held_against(_raw_iris_pair(1e6, 0.01), result, barrier)


def test_auto_leaves_the_finish_out_where_rounding_times_C_defeats_it():
    """Past ``max C_i · max K̃_ii`` = FINISH_MAX_CK the probe's point goes to the active-set
    method directly (its padded margins are what certify there)."""
    problem = _raw_iris_pair(1e8, 0.01)
    assert auto.FINISH_MAX_CK < 1e8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("auto", tol=TOL).solve(problem)
    assert result.info["auto"]["tried"] == ("smo", "active_set")
    assert not result.info.get("exact_finish", {}).get("early", False)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL


@pytest.mark.parametrize("sign", [-1.0, 1.0])
def test_a_multiplier_freed_alone_under_a_free_bias_cannot_cycle(monkeypatch, sign):
    """With a free bias, ``yᵀα = 0`` holds a multiplier freed alone still: its face step is 0
    in exact arithmetic and ±1e-17 after rounding. Where rounding made it point out of the box,
    the multiplier met its bound at once and was freed again, forever (seen on one CPU, not on
    another). Both signs of that rounding are forced here; the method must end optimal and agree
    with the reference optimum either way."""
    overlap = datasets.load("gaussian:n=60,d=4,sep=1,seed=0")
    problem = KernelDual(overlap.X, overlap.y, C=1.0, kernel="rbf", gamma=0.5, bias="free")
    face_step = active_set._face_step

    def rounded_face_step(Q, g, y, F, free_bias, *residual):
        p, nu, consistent = face_step(Q, g, y, F, free_bias, *residual)
        if F.size == 1:
            p = np.full(1, sign * 1e-17)
        return p, nu, consistent

    monkeypatch.setattr(active_set, "_face_step", rounded_face_step)
    result = registry.get("active_set", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL, result.message
    ref = reference_solution(problem)
    assert result.rel_gap <= TOL
    assert abs(result.primal - ref.primal) <= 2 * TOL * max(1.0, abs(ref.primal))


def test_a_face_of_low_numerical_rank_is_minimized_not_cycled():
    """At γ = 1e-7 the RBF kernel of iris is 1 − γD to 21 digits: faces of the KKT matrix with
    eigenvalues of 1e-21 at a scale of 1e-5, taken for null. The step along such a direction,
    followed to a bound, overshot the line's minimum and the bound was released again, until
    ``max_iter`` (the C = 1e10 cell of scikit-learn's RBF-parameters grid, one fold). Capped at
    the line's minimum and then solved again, the face is minimized; the result must be
    certified and bracketed by an independent method's certified bounds."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    train = np.r_[0:20, 30:50, 50:70, 80:100, 100:120, 130:150]  # scikit-learn's fold 2 of 5
    keep = train[y[train] != 0]
    problem = KernelDual(X[keep], np.where(y[keep] == 1, 1.0, -1.0), C=1e10, gamma=1e-7)
    result = registry.get("active_set", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL, result.message
    assert result.iterations < 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = registry.get("barrier", max_iter=500).solve(problem)
    assert other.certified and other.rel_gap <= 1e-4
    scale = max(1.0, abs(result.primal))
    # the certified dual value is below every primal value; the barrier's (stopped at a gap of
    # 4e-6, its dual point not exactly feasible) within its own gap of the optimum
    assert result.dual <= other.primal + 1e-9 * scale
    assert abs(result.primal - other.primal) <= 2.0 * other.rel_gap * scale


def test_the_point_kept_meets_tol_with_its_rounding_allowance():
    """Among the optimum and its padded points, the search stopped at the first whose relative
    gap was within tol, even where the gap and its rounding allowance were not (iris fold 0,
    classes 1 and 2, C = 1e10, γ = 0.1, from auto's SMO probe: 8.9e-7 plus 1.4e-7, then
    ``not_certified``), while a padded point further on is certified at 2e-12."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    train = np.r_[10:50, 60:100, 110:150]  # scikit-learn's fold 0 of 5
    keep = train[y[train] != 0]
    problem = KernelDual(X[keep], np.where(y[keep] == 1, 1.0, -1.0), C=1e10, gamma=0.1)
    for name in ("auto", "active_set"):
        result = registry.get(name, tol=TOL).solve(problem)
        assert result.status is Status.OPTIMAL, f"{name}: {result.message}"
        allowance = result.residuals["rounding"]
        assert result.gap + allowance <= TOL * max(1.0, abs(result.primal))


def _twice_labelled(n=120, d=200, seed=0):
    """The hard set of ``bench_extreme_grids``: overlapping Gaussian classes (d > n), a third of
    the rows repeated, half of those under the other label."""
    rng = np.random.default_rng(seed)
    m = 2 * n // 3
    y = np.repeat([-1.0, 1.0], m // 2)
    X = rng.normal(size=(m, d)) + 0.05 * y[:, None]
    again = rng.choice(m, size=n - m, replace=False)
    y_again = y[again].copy()
    y_again[: (n - m) // 2] *= -1
    return np.vstack([X, X[again]]), np.concatenate([y, y_again])


def _identity_kernel_optimum(X, y, C):
    """The optimum where K is the identity on distinct rows (γ = 1e3, rows 20 apart): a row
    repeated under both labels keeps both multipliers at C (its two hinges sum to 2 whatever
    f); the other rows are free on the margin, ``α_t = 1 − y_t b`` (a row repeated under its own
    label shares that between its copies), and ``yᵀα = 0`` sets b to the mean of their labels."""
    groups = {}
    for t in range(y.size):
        groups.setdefault(X[t].tobytes(), []).append(t)
    alpha = np.zeros(y.size)
    ones = [g for g in groups.values() if np.all(y[g] == y[g[0]])]
    b = float(np.mean([y[g[0]] for g in ones]))
    for g in groups.values():
        alpha[g] = C if len(g) == 2 and y[g[0]] != y[g[1]] else (1.0 - y[g[0]] * b) / len(g)
    return alpha, b


def test_multipliers_at_C_under_both_labels_leave_the_free_ones_exact():
    """Rows repeated under both labels hold their multipliers at C = 1e10; their terms of the
    gradient, 1e10 apiece, cancel. Summed with the free multipliers' O(1) terms they kept 1e-6
    of them, and the label sum drifted by 1e-5: the face solves' margins were off by 3e-5 and
    the method ended ``numerical_error`` at 1.4e-6. The point must be certified, with the
    optimum known in closed form (K the identity on distinct rows) certified beside it."""
    X, y = _twice_labelled()
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=1e3, bias="free")
    result = registry.get("active_set", tol=TOL).solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL, result.message
    alpha, b = _identity_kernel_optimum(X, y, 1e10)
    exact = problem.certificate(alpha=alpha, b=b)
    assert exact.meets(TOL)
    scale = abs(exact.primal)
    assert result.primal >= exact.dual - 1e-9 * scale and exact.primal >= result.dual - 1e-9 * scale
    assert result.alpha[alpha == 1e10].min() == 1e10  # the twice-labelled rows at C


def test_tiny_kernel_entries_against_multipliers_at_C_are_not_rounded_away():
    """At γ = 0.25 on 80 features K's entries off the diagonal are about 4e-18: stored as
    ``K − 1`` (the shifted kernel of a free bias) they rounded to −1, and times multipliers at
    C = 1e10 that moved margins by 4e-8 each (``numerical_error`` at 1.3e-6). The point must be
    certified and held against the barrier's, each value up to its rounding allowance."""
    X, y = _twice_labelled(n=60, d=80, seed=0)
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=0.25, bias="free")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("active_set", tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL, result.message
    a = problem.certificate(alpha=result.alpha, b=result.b)
    o = problem.certificate(alpha=barrier.alpha, b=barrier.b)
    assert a.meets(TOL) and o.certified
    slack = a.rounding + o.rounding + 1e-9 * abs(a.primal)
    assert a.primal >= o.dual - slack and o.primal >= a.dual - slack
    assert a.primal - o.dual <= 2 * TOL * abs(a.primal)


def test_the_bounded_parts_sum_to_the_shifted_hessian():
    """``T − N`` is ``Q̃`` of the shifted kernel, entry by entry up to rounding, and ``T`` holds
    the small entries of K themselves (not ``K − 1``)."""
    X, y = _twice_labelled(n=30, d=20, seed=1)
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=0.5, bias="free")
    Q, D = active_set._hessian(problem)
    T, N = active_set.bounded_parts(problem, Q, D)
    assert np.allclose(T - N, Q, rtol=0.0, atol=1e-15)
    K = problem.gram
    small = K < 0.5
    assert np.allclose(np.abs(T[small]), K[small], rtol=1e-12, atol=0.0)
    assert np.all(N[~small] == 0.0) and np.all(np.abs(N[small]) == 1.0)
    # the gradient with multipliers at C = 1e10 through them is Q̃α − 1 to rounding
    alpha = np.where(y > 0, 1e10, 1e10 * (y > 0).sum() / (y < 0).sum())
    alpha[:3] = 0.5
    expected = (Q @ alpha - 1.0) / 1e10
    assert np.allclose(active_set._Gradient(Q, problem, D)(alpha) / 1e10, expected, atol=1e-12)


def test_auto_goes_on_after_a_point_that_rounding_leaves_uncertified():
    """The hard set at C = 1e10, γ = 1e-3: SMO's point is within tol but its rounding allowance
    (2.7e-6 of |P|) is not, ``not_certified`` at the rounding floor; auto ended there. The
    allowance is the point's: the next methods go on from scratch (the barrier's interior point
    carries 1e-10), and the record is ``optimal``, held against the barrier's own optimum."""
    X, y = _twice_labelled()
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=1e-3, bias="free")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        smo = registry.get("smo", tol=TOL).solve(problem)
        result = registry.get("auto", tol=TOL).solve(problem)
        barrier = registry.get("barrier", tol=1e-9).solve(problem)
    assert smo.status is Status.NOT_CERTIFIED and smo.certified  # the case this test is about
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL, result.message
    assert len(result.info["auto"]["tried"]) > 1
    a = problem.certificate(alpha=result.alpha, b=result.b)
    o = problem.certificate(alpha=barrier.alpha, b=barrier.b)
    slack = a.rounding + o.rounding + 1e-9 * abs(a.primal)
    assert a.meets(TOL) and o.certified
    assert a.primal >= o.dual - slack and o.primal >= a.dual - slack


def test_from_smo_s_probe_the_hard_set_settles_in_few_changes():
    """Auto's way at C = 1e10, γ = 1e-5: SMO's probe of 2000 updates, then the active-set method
    from its point. With the label sum's residue taken from a plain sum (off by 1e-5 with
    multipliers of 1e10) and removed inside its steps it cycled to ``max_iter``; before, it took
    289 changes to a point short of tol. Its point must be certified, in few changes."""
    X, y = _twice_labelled()
    problem = KernelDual(X, y, C=1e10, kernel="rbf", gamma=1e-5, bias="free")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe = registry.get("smo", max_iter=auto.SMALL_KERNEL_PROBE, tol=TOL).solve(problem)
        result = registry.get("active_set", tol=TOL).solve(problem, warm_start=probe.alpha)
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL, result.message
    assert result.iterations <= 50
    assert problem.certificate(alpha=result.alpha, b=result.b).meets(TOL)
