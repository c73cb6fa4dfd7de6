"""The binary problems' mathematics: objectives, weak duality, conversions, repairs, hand cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import HardMarginPrimal, KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems._linear import optimal_bias
from svmbench.problems._qp import project_box_hyperplane
from svmbench.problems.scaling import C_from_lambda, lambda_from_C, lambda_objective
from svmbench.solvers._reference import reference_solution
from tests.conftest import BINARY_SETS

BIASES = ("free", "regularized", "none")


def _random_problem(kind, X, y, bias, loss="hinge"):
    if kind == "primal":
        return SoftMarginPrimal(X, y, C=0.7, loss=loss, bias=bias, bias_scale=2.0)
    if kind == "kernel":
        return KernelDual(X, y, C=0.7, kernel="rbf", loss=loss, bias=bias, bias_scale=2.0)
    return HardMarginPrimal(X, y, bias=bias)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("kind", ["primal", "kernel"])
def test_weak_duality_at_random_feasible_points(rng, kind, loss, bias):
    X, y = BINARY_SETS["gaussian_overlap"]
    p = _random_problem(kind, X, y, bias, loss)
    for _ in range(20):
        alpha = p.project_dual(rng.uniform(0, 1.5, size=p.n_samples))
        D = p.dual_objective(alpha)
        if kind == "primal":
            w = rng.normal(size=p.n_features) * rng.uniform(0.01, 2)
            b = 0.0 if bias == "none" else float(rng.normal())
            P = p.primal_objective(w, b)
        else:
            coef = rng.uniform(0, 1, size=p.n_samples)
            P = p.primal_objective(coef)
        assert P - D >= -1e-9 * max(1.0, abs(P))


@pytest.mark.parametrize("bias", BIASES)
def test_hard_margin_weak_duality(rng, bias):
    X, y = BINARY_SETS["gaussian_separable"]
    p = HardMarginPrimal(X, y, bias=bias)
    ref = reference_solution(p)
    for _ in range(20):
        alpha = p.project_dual(rng.uniform(0, 0.05, size=p.n_samples))
        # any feasible primal point: the optimum scaled up, with noise, repaired by scaling
        w = ref.w * rng.uniform(1, 3) + 0.01 * rng.normal(size=p.n_features)
        cert = p.certificate(w=w, b=ref.b, alpha=alpha)
        assert cert.gap >= -1e-9 * max(1.0, abs(cert.primal))


def test_primal_objective_matches_its_definition(rng):
    X, y = BINARY_SETS["quadrant"]
    w, b = rng.normal(size=X.shape[1]), 0.3
    m = y * (X @ w + b)
    hinge = np.maximum(0, 1 - m)
    p = SoftMarginPrimal(X, y, C=2.0, sample_weight=np.linspace(0.5, 1.5, len(y)))
    expected = 0.5 * w @ w + 2.0 * np.linspace(0.5, 1.5, len(y)) @ hinge
    assert p.primal_objective(w, b) == pytest.approx(expected, rel=1e-12)
    sq = SoftMarginPrimal(X, y, C=2.0, loss="squared_hinge", bias="regularized", bias_scale=3.0)
    expected = 0.5 * w @ w + 0.5 * (b / 3.0) ** 2 + 2.0 * np.sum(hinge**2)
    assert sq.primal_objective(w, b) == pytest.approx(expected, rel=1e-12)


def test_dual_objective_matches_its_definition(rng):
    X, y = BINARY_SETS["quadrant"]
    alpha = rng.uniform(0, 1, size=len(y))
    Q = (X @ X.T) * np.outer(y, y)
    p = SoftMarginDual(X, y, C=1.0, bias="none")
    assert p.dual_objective(alpha) == pytest.approx(alpha.sum() - 0.5 * alpha @ Q @ alpha)
    sq = SoftMarginDual(X, y, C=2.0, loss="squared_hinge", bias="regularized", bias_scale=2.0)
    Qt = Q + 4.0 * np.outer(y, y) + np.eye(len(y)) / (2 * 2.0)
    assert sq.dual_objective(alpha) == pytest.approx(alpha.sum() - 0.5 * alpha @ Qt @ alpha)


def test_sparse_and_dense_give_the_same_problem(rng):
    X, y = BINARY_SETS["gaussian_overlap"]
    dense = SoftMarginPrimal(X, y, bias="regularized")
    sp = SoftMarginPrimal(sparse.csr_matrix(X), y, bias="regularized")
    w = rng.normal(size=X.shape[1])
    alpha = dense.project_dual(rng.uniform(0, 1, size=len(y)))
    assert sp.primal_objective(w, 0.2) == pytest.approx(dense.primal_objective(w, 0.2))
    assert sp.dual_objective(alpha) == pytest.approx(dense.dual_objective(alpha))
    ref = reference_solution(sp)
    assert ref.primal == pytest.approx(reference_solution(dense).primal, rel=1e-7)


def test_naive_dual_from_primal_leaves_a_gap_that_ours_closes():
    """docs/ARCHITECTURE.md §3: α_i = C inside the margin, 0 outside, is not enough."""
    X, y = BINARY_SETS["gaussian_overlap"]
    p = SoftMarginPrimal(X, y, C=1.0, bias="free")
    ref = reference_solution(p)
    m = p.margins(ref.w, ref.b)
    naive = p.project_dual(np.where(m < 1, 1.0, 0.0))
    naive_gap = (p.primal_objective(ref.w, ref.b) - p.dual_objective(naive)) / ref.primal
    ours = p.certificate(w=ref.w, b=ref.b)
    assert naive_gap > 1e-3
    assert ours.rel_gap <= 1e-8


@pytest.mark.parametrize(
    ("loss", "reg"),
    [
        ("hinge", False),
        ("hinge", True),
        ("squared_hinge", False),
        ("squared_hinge", True),
        ("hard", False),
    ],
)
def test_optimal_bias_is_the_exact_minimizer(rng, loss, reg):
    f = rng.normal(size=40)
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    if loss == "hard":
        f = 3 * y + 0.1 * rng.normal(size=40)  # separable: margins well above 1 exist
    C = rng.uniform(0.5, 2, size=40)
    scale = 1.5 if reg else None
    b = optimal_bias(f, y, C, loss, bias_scale=scale)
    grid = np.linspace(b - 2, b + 2, 4001)

    def value(bb):
        m = y * (f + bb)
        if loss == "hard":
            return -np.min(m)
        xi = np.maximum(0, 1 - m)
        v = C @ (xi if loss == "hinge" else xi**2)
        return v + (bb**2 / (2 * scale**2) if reg else 0.0)

    assert value(b) <= min(value(g) for g in grid) + 1e-9


def test_a_flat_hinge_gets_the_middle_of_its_optimal_interval():
    """Every point inside the margin and the violators' Σ C_i y_i = 0: the objective is flat
    for b in [−0.88, 0.88] (rounding leaves the slope at ±1e-18); LIBSVM takes the middle, 0,
    where the left end was returned (scikit-learn's test_svm_classifier_sided_sample_weight)."""
    f = np.array([-0.12, -0.12, -0.12, 0.12, 0.12, 0.12])
    y = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0])
    assert optimal_bias(f, y, np.full(6, 0.01), "hinge") == pytest.approx(0.0, abs=1e-12)
    # the interval is not symmetric when the decision values are not: its middle still
    g = f + 0.3
    assert optimal_bias(g, y, np.full(6, 0.01), "hinge") == pytest.approx(-0.3, abs=1e-12)
    # not flat: one unit of C more on the positives moves the minimizer to a breakpoint
    C = np.array([0.01, 0.01, 0.01, 0.02, 0.01, 0.01])
    assert optimal_bias(f, y, C, "hinge") == pytest.approx(0.88, abs=1e-12)


def test_the_hinge_bias_is_minimal_with_ties_and_zero_weights(rng):
    """The hinge's b from its sorted breakpoints: no breakpoint (every candidate minimizer of a
    piecewise-linear objective) does better, with tied breakpoints and zero weights; inside a
    flat interval, its middle."""
    for trial in range(300):
        n = int(rng.integers(2, 40))
        f = np.round(rng.normal(size=n), 1)  # ties
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        C = rng.choice([0.0, 0.5, 1.0, 2.0], size=n)
        if not (C[y > 0].sum() > 0 and C[y < 0].sum() > 0):
            continue
        b = optimal_bias(f, y, C, "hinge")

        def value(bb, f=f, y=y, C=C):
            return float(C @ np.maximum(0.0, 1.0 - y * (f + bb)))

        t = y - f
        best = min(value(c) for c in t)
        assert value(b) <= best + 1e-12 * max(1.0, best), trial
        flat = [c for c in np.unique(t) if value(c) <= best + 1e-12 * max(1.0, best)]
        if len(flat) > 1:  # an interval of minimizers: its middle
            assert b == pytest.approx(0.5 * (flat[0] + flat[-1]), abs=1e-12)


def test_projection_onto_box_and_hyperplane(rng):
    for _ in range(20):
        n = 30
        v = rng.normal(size=n) * 3
        a = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        upper = rng.uniform(0.5, 2, size=n)
        x = project_box_hyperplane(v, np.zeros(n), upper, a, 0.0)
        assert np.all(x >= 0) and np.all(x <= upper)
        assert abs(a @ x) <= 1e-12 * n
        # optimality: no feasible random direction gets closer to v
        for _ in range(20):
            z = project_box_hyperplane(rng.uniform(0, 1, n) * upper, np.zeros(n), upper, a, 0.0)
            assert np.sum((x - v) ** 2) <= np.sum((z - v) ** 2) + 1e-12
    with pytest.raises(ValueError, match="empty"):
        project_box_hyperplane(np.zeros(2), np.zeros(2), np.ones(2), np.ones(2), 5.0)


@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e8])
def test_projection_meets_its_optimality_conditions_in_few_passes(rng, scale, monkeypatch):
    """x = clip(v − t·a) for one t (every free coordinate moved by the same t·a_i, every bounded
    one clipped on the side t pushes it), aᵀx = 0 to rounding; with infinite and zero boxes,
    at any scale. The root is found in a few passes over the data (the safeguarded Newton
    steps), not the ~60 of a bisection to machine precision."""
    from svmbench.problems import _qp

    clips = []
    clip = np.clip
    monkeypatch.setattr(_qp.np, "clip", lambda *args, **kw: clips.append(1) or clip(*args, **kw))
    for trial in range(30):
        n = 569
        a = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        upper = scale * rng.uniform(0.1, 2.0, n)
        upper[rng.random(n) < 0.1] = np.inf if trial % 2 else 0.0
        v = scale * rng.normal(0.3, 1.0, n)
        clips.clear()
        x = project_box_hyperplane(v, np.zeros(n), upper, a, 0.0)
        assert len(clips) <= 20
        assert np.all(x >= 0) and np.all(x <= upper)
        assert abs(a @ x) <= 8 * np.finfo(float).eps * np.abs(x).sum()
        free = (x > 0) & (x < upper)
        shifts = (v - x)[free] * a[free]  # t, the same for every free coordinate
        t = float(np.median(shifts))
        assert np.allclose(shifts, t, rtol=1e-9, atol=1e-12 * scale)
        z = v - t * a
        tol = 1e-9 * scale
        assert np.all(z[(x == 0) & (upper > 0)] <= tol)
        at_upper = (x == upper) & (upper > 0)  # a box [0, 0] holds its 0 whatever t is
        assert np.all(z[at_upper] >= upper[at_upper] - tol)


def test_projection_from_every_coordinate_at_a_bound_takes_few_passes(monkeypatch):
    """α at 0 or C_i everywhere (a thresholded point) with yᵀα = C ≠ 0: h is flat at t = 0, so
    no Newton step can start there; the projection bisects the bracket instead (it widened a
    bracket of denormal width from 0, about 500 passes), and lands where a bisection to machine
    precision puts the root."""
    from svmbench.problems import _qp

    n, C = 569, 0.1
    a = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    upper = np.full(n, C)
    v = np.zeros(n)
    v[np.flatnonzero(a > 0)[:40]] = C  # 40 at C in the class +1, 39 in the class −1
    v[np.flatnonzero(a < 0)[:39]] = C
    clips = []
    clip = np.clip
    monkeypatch.setattr(_qp.np, "clip", lambda *args, **kw: clips.append(1) or clip(*args, **kw))
    x = project_box_hyperplane(v, np.zeros(n), upper, a, 0.0)
    assert len(clips) <= 80
    assert np.all(x >= 0) and np.all(x <= upper)
    assert abs(a @ x) <= 8 * np.finfo(float).eps * np.abs(x).sum()
    # the root by bisection over [0, C]: the 40 at C of the class +1 move down to C − t, the
    # class −1's multipliers at 0 up to t, its 39 at C stay: 40(C − t) = 39C + k t
    lo, hi = 0.0, C
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if a @ np.clip(v - mid * a, 0.0, upper) > 0 else (lo, mid)
    k = int(np.count_nonzero((a < 0) & (v == 0)))
    assert np.isclose(lo, C / (40 + k), rtol=1e-12)
    assert np.allclose(x, np.clip(v - lo * a, 0.0, upper), rtol=0, atol=1e-15)
    assert np.array_equal(x[np.flatnonzero(a < 0)[:39]], np.full(39, C))


def test_projection_keeps_a_point_feasible_up_to_rounding_but_one_coordinate(rng):
    """A solver's optimum satisfies yᵀα = 0 only up to rounding: its projection (a warm start
    of the next C) moves at most one coordinate, by the residue, and lands on the hyperplane."""
    n = 400
    a = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    upper = np.full(n, 2.0)
    v = rng.uniform(0, 1, n)
    v = project_box_hyperplane(v, np.zeros(n), upper, a, 0.0)
    v[np.flatnonzero(v > 0.1)[:3]] *= 1 + 1e-15  # the rounding of a solver's last updates
    x = project_box_hyperplane(v, np.zeros(n), upper, a, 0.0)
    assert np.count_nonzero(x != v) <= 1
    assert abs(a @ x) <= 4 * np.finfo(float).eps * np.abs(x).sum()
    # a point truly off the hyperplane is still projected (every free coordinate moves)
    w = v + 1e-3 * (a > 0)
    z = project_box_hyperplane(w, np.zeros(n), upper, a, 0.0)
    assert np.count_nonzero(z != w) > n // 4 and abs(a @ z) <= 1e-12 * n


def test_lecture_four_point_example_by_hand():
    """E = {((2,2),+1), ((4,2),−1), ((3,3),+1), ((3,1),−1)}: w = (−1, 1), b = 1, margin 1/√2.

    By hand: the closest opposite pairs are (2,2)/(3,1) and (3,3)/(4,2), both differing by
    (1, −1); the widest slab is normal to (−1, 1), through the midpoints, so w ∝ (−1, 1) and the
    constraints y_i(w·x_i + b) ≥ 1 are tight at all four points: −2+2+b = 1 gives b = 1.
    """
    X = np.array([[2.0, 2.0], [4.0, 2.0], [3.0, 3.0], [3.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    p = HardMarginPrimal(X, y, bias="free")
    for solver in ("clarabel", "osqp"):
        r = reference_solution(p, solver)
        np.testing.assert_allclose(r.w, [-1.0, 1.0], atol=1e-6)
        assert r.b == pytest.approx(1.0, abs=1e-6)
        assert r.primal == pytest.approx(1.0, rel=1e-6)
        assert 1 / np.linalg.norm(r.w) == pytest.approx(1 / np.sqrt(2), rel=1e-6)
    # the dual: λ = ½ on each point gives Σλ − ½‖Σλ y x‖² = 2 − ½·2 = 1 = P
    assert p.dual_objective(np.full(4, 0.5)) == pytest.approx(1.0)


def test_hard_margin_separable_margin_is_tight():
    X, y = BINARY_SETS["gaussian_separable"]
    p = HardMarginPrimal(X, y)
    r = reference_solution(p)
    m = p.margins(r.w, r.b)
    assert np.min(m) == pytest.approx(1.0, abs=1e-6)
    assert np.sum(np.abs(m - 1) < 1e-5) >= 2  # support vectors from both classes
    assert set(np.sign(y[np.abs(m - 1) < 1e-5])) == {-1.0, 1.0}


def test_hard_margin_certificate_repairs_by_scaling():
    X, y = BINARY_SETS["gaussian_separable"]
    p = HardMarginPrimal(X, y)
    r = reference_solution(p)
    c = p.certificate(w=0.9 * r.w, b=0.9 * r.b)  # margins 0.9: infeasible, repaired by 1/0.9
    assert c.residuals["primal_margin"] == pytest.approx(0.1, rel=1e-5)
    assert c.rel_gap <= 1e-6
    bad = p.certificate(w=-r.w, b=-r.b)  # every margin negative: cannot be repaired
    assert not bad.certified and bad.primal == np.inf


def test_certificate_projects_an_infeasible_alpha():
    X, y = BINARY_SETS["quadrant"]
    p = SoftMarginDual(X, y, C=1.0, bias="free")
    ref = reference_solution(p)
    noisy = ref.alpha + 1e-3
    c = p.certificate(alpha=noisy)
    assert c.residuals["dual_infeasibility"] > 0
    a = c.dual_point
    assert np.all(a >= 0) and np.all(a <= 1.0) and abs(a @ y) < 1e-10
    assert c.certified and c.gap >= 0


@pytest.mark.parametrize("bias", BIASES)
def test_hinge_certificate_of_a_full_point_matches_its_definition(rng, bias):
    """A feasible α is its own projection (kept as given); an infeasible one is projected as
    project_dual does; bad α is refused as before. Values from the formulas, by hand."""
    X, y = BINARY_SETS["gaussian_overlap"]
    weights = np.linspace(0.5, 1.5, len(y))
    p = SoftMarginPrimal(X, y, C=0.7, bias=bias, bias_scale=2.0, sample_weight=weights)
    C = 0.7 * weights
    alpha = p.project_dual(rng.uniform(0, 1.0, size=len(y)))
    w, b = rng.normal(size=X.shape[1]), (0.0 if bias == "none" else 0.4)
    if bias == "free":
        assert float(y @ alpha) == 0.0  # the projection leaves yᵀα = 0 exactly here
    m = y * (X @ w + b)
    v = X.T @ (alpha * y)
    s2 = 0.5 * (b / 2.0) ** 2 if bias == "regularized" else 0.0
    P = 0.5 * w @ w + s2 + C @ np.maximum(0.0, 1.0 - m)
    D = alpha.sum() - 0.5 * v @ v
    if bias == "regularized":
        D -= 0.5 * (2.0 * (alpha @ y)) ** 2
    c = p.certificate(w=w, b=b, alpha=alpha)
    assert c.primal == pytest.approx(P, rel=1e-12) and c.dual == pytest.approx(D, rel=1e-12)
    assert np.array_equal(c.dual_point, alpha) and c.dual_point is not alpha
    assert c.residuals["dual_infeasibility"] == 0.0
    outside = alpha.copy()
    outside[0] = C[0] + 0.25
    c = p.certificate(w=w, b=b, alpha=outside)
    assert c.residuals["dual_infeasibility"] > 0.0
    np.testing.assert_array_equal(c.dual_point, p.project_dual(outside))
    for bad, match in ((np.r_[alpha[:-1], np.nan], "finite"), (alpha[:-1], "length")):
        with pytest.raises(ValueError, match=match):
            p.certificate(w=w, b=b, alpha=bad)


def test_to_qp_stays_sparse_for_linear_problems():
    X, y = BINARY_SETS["digits"]
    n, d = X.shape
    for p in (SoftMarginPrimal(X, y), SoftMarginDual(X, y), HardMarginPrimal(X, y)):
        qp = p.to_qp()
        assert qp.P.nnz + qp.A.nnz <= 3 * (n * d) + 4 * n + 2 * d
        assert qp.A.shape[1] < n * n


def test_kernel_definiteness_is_detected():
    X, y = BINARY_SETS["gaussian_overlap"]
    assert KernelDual(X, y, kernel="rbf").convex
    assert KernelDual(X, y, kernel="poly", degree=3, coef0=1.0).convex
    assert not KernelDual(X, y, kernel="sigmoid", gamma=1.0).convex
    K = X @ X.T
    assert KernelDual(K, y, kernel="precomputed").convex
    indefinite = K - 5 * np.eye(len(y))
    p = KernelDual(indefinite, y, kernel="precomputed")
    assert not p.convex
    assert not p.certificate(alpha=np.full(len(y), 0.1)).certified


def test_precomputed_kernel_equals_computed_one():
    X, y = BINARY_SETS["breast_cancer"]
    rbf = KernelDual(X, y, kernel="rbf", gamma=0.05)
    pre = KernelDual(rbf.gram, y, kernel="precomputed")
    assert reference_solution(pre).primal == pytest.approx(reference_solution(rbf).primal, rel=1e-8)


def test_lambda_scalings_round_trip():
    assert lambda_from_C(1.0, 100) == pytest.approx(0.01)
    assert lambda_from_C(1.0, 100, form="multiclass_lecture") == pytest.approx(0.005)
    for form in ("pegasos", "multiclass_lecture"):
        assert C_from_lambda(lambda_from_C(0.3, 77, form=form), 77, form=form) == pytest.approx(0.3)
    # λ/2‖w‖² + mean hinge = P/(nC) for λ = 1/(nC)
    X, y = BINARY_SETS["quadrant"]
    p = SoftMarginPrimal(X, y, C=0.5)
    w = np.ones(X.shape[1])
    lam = lambda_from_C(0.5, len(y))
    direct = lam / 2 * w @ w + np.mean(np.maximum(0, 1 - p.margins(w, 0.1)))
    assert lambda_objective(p.primal_objective(w, 0.1), 0.5, len(y)) == pytest.approx(direct)
    with pytest.raises(ValueError, match="form"):
        lambda_from_C(1.0, 10, form="other")


def test_problem_key_depends_on_data_and_parameters():
    X, y = BINARY_SETS["quadrant"]
    a = SoftMarginPrimal(X, y, C=1.0)
    assert a.key == SoftMarginPrimal(X.copy(), y.copy(), C=1.0).key
    assert a.key != SoftMarginPrimal(X, y, C=2.0).key
    assert a.key != SoftMarginDual(X, y, C=1.0).key
    X2 = X.copy()
    X2[0, 0] += 1e-12
    assert a.key != SoftMarginPrimal(X2, y, C=1.0).key


@pytest.mark.parametrize("e", [1e-7, 1e-9, 1e-12])
@pytest.mark.parametrize("bias", ["free", "none"])
def test_near_separable_data_are_never_called_infeasible(e, bias):
    """X = [[e,0],[−e,0],[e,1],[−e,1]], y = [1,−1,1,−1] is separated by w = (1/e, 0): a Farkas
    vector may pass its tolerance (relative to the data radius), but the data are separable."""
    import warnings

    from svmbench.solvers import registry
    from svmbench.solvers.base import Status

    X = np.array([[e, 0.0], [-e, 0.0], [e, 1.0], [-e, 1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    problem = HardMarginPrimal(X, y, bias=bias)
    w, b, margin = problem.separating_point()
    assert np.min(y * (X @ w + b)) >= 1.0 - 1e-12  # a feasible point, checked in plain arithmetic
    assert margin == pytest.approx(e, rel=1e-3)  # the widest slab has half-width e
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("clarabel", "osqp", "cvxpy", "barrier"):
            r = registry.get(name).solve(problem)
            assert r.status is not Status.INFEASIBLE, (name, r.message)
            if r.status is Status.NUMERICAL_ERROR and "near_separable" in r.info:
                assert np.isfinite(r.primal) and "near-separable" in r.message


def test_overlapping_classes_have_no_separating_point():
    from svmbench.problems import datasets

    d = datasets.load("gaussian:n=60,d=4,sep=1,seed=0")
    assert HardMarginPrimal(d.X, d.y).separating_point() is None


def _near_separable_off_the_origin():
    """20 points at (3 ± 1e-9·y_i, t_i): separated by w = (1e9, 0), b = −3e9 with every margin
    ≥ 1 in float64, but 3 units from the origin for a spread of about 2 around their centre."""
    y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
    t = np.random.default_rng(0).standard_normal(20)
    return np.column_stack([3.0 + 1e-9 * y, t]), y


def test_near_separable_data_off_the_origin_are_never_called_infeasible():
    import warnings

    from svmbench.solvers import registry
    from svmbench.solvers.base import Status

    X, y = _near_separable_off_the_origin()
    problem = HardMarginPrimal(X, y, bias="free")
    assert np.min(problem.margins(np.array([1e9, 0.0]), -3e9)) >= 1.0  # separable in float64
    w, b, margin = problem.separating_point()
    assert np.min(problem.margins(w, b)) >= 1.0 - 1e-12
    assert margin == pytest.approx(1e-9, rel=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("barrier", "auto", "cvxpy", "clarabel", "osqp"):
            r = registry.get(name, tol=1e-6).solve(problem)
            assert r.status is not Status.INFEASIBLE, (name, r.message)
            if "near_separable" in r.info:  # both certificates: a feasible point, the Farkas λ
                # the feasible point the problem found is the record's: optimal if it certifies
                assert "near-separable" in r.message
                assert r.status is Status.NUMERICAL_ERROR or (
                    r.status is Status.OPTIMAL and r.certified and r.rel_gap <= 1e-6
                )
                assert np.min(problem.margins(r.w, r.b)) >= 1.0 - 1e-12 and np.isfinite(r.primal)
                assert r.farkas is not None


@pytest.mark.parametrize("bias", BIASES)
def test_the_farkas_test_and_the_separation_lp_ignore_translation_rotation_and_scale(bias):
    X, y = _near_separable_off_the_origin()
    base = HardMarginPrimal(X - X.mean(axis=0), y, bias=bias)
    angle = 0.7
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    moved = HardMarginPrimal(1e3 * (X - X.mean(axis=0)) @ R.T + [4e3, -2e3], y, bias=bias)
    if bias != "none":  # with a bias, separability ignores the translation
        assert base.separating_point() is not None and moved.separating_point() is not None
    lam = np.zeros(20)
    lam[[0, 1]] = 0.5  # one point of each class: the combination is their difference
    a, b = base.check_farkas(lam), moved.check_farkas(lam)
    if bias == "free":  # relative to the spread around the centre: unchanged
        assert a["combination"] == pytest.approx(b["combination"], rel=1e-6)
        assert base.spread() * 1e3 == pytest.approx(moved.spread(), rel=1e-9)


def test_the_primal_and_dual_views_are_siblings_with_one_certificate():
    """Same data, parameters, objectives and certificate; neither view is the other, so a
    primal-only method (Pegasos) refuses the dual view instead of receiving it as a primal."""
    from svmbench.problems import datasets
    from svmbench.solvers import registry

    data = datasets.gaussian(40, 3, 1.0, seed=5)
    primal = SoftMarginPrimal(data.X, data.y, C=0.5, bias="regularized")
    dual = SoftMarginDual(data.X, data.y, C=0.5, bias="regularized")
    assert not isinstance(dual, SoftMarginPrimal) and not isinstance(primal, SoftMarginDual)
    alpha = np.full(40, 0.25)
    assert primal.certificate(alpha=alpha).gap == dual.certificate(alpha=alpha).gap
    assert registry.solver_class("pegasos").unsupported_reason(dual) is not None
    assert registry.solver_class("pegasos").unsupported_reason(primal) is None


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize("given_b", [True, False])
@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("view", [SoftMarginPrimal, SoftMarginDual])
def test_the_squared_hinge_certificate_of_a_primal_point_is_its_parts(
    rng, view, bias, given_b, storage
):
    """The squared hinge's certificate of ``(w, b)`` (one pass of margins for a regularized
    bias or none) against its parts: ``P(w, b)``, the dual point of ``dual_from_primal`` and
    ``D`` at it; sample weights with zeros, a missing b the exact minimizer."""
    X, y = BINARY_SETS["gaussian_overlap"]
    X = sparse.csr_matrix(X) if storage == "csr" else X
    sw = rng.uniform(0.0, 2.0, y.size)
    sw[:5] = 0.0
    p = view(X, y, C=3.0, loss="squared_hinge", bias=bias, bias_scale=2.0, sample_weight=sw)
    for _ in range(5):
        w = 0.3 * rng.normal(size=p.n_features)
        b = (0.0 if bias == "none" else float(rng.normal())) if given_b else None
        cert = p.certificate(w=w, b=b)
        b_used = p.best_bias(w) if b is None else b
        alpha = p.dual_from_primal(w, b_used)
        assert cert.primal_point["b"] == pytest.approx(b_used, rel=1e-12, abs=1e-12)
        assert cert.primal == pytest.approx(p.primal_objective(w, b_used), rel=1e-12)
        assert np.allclose(cert.dual_point, alpha, rtol=1e-12, atol=1e-12)
        assert cert.dual == pytest.approx(p.dual_objective(alpha), rel=1e-12, abs=1e-12)
        assert cert.certified and cert.gap >= 0.0
