"""Tests of problems.multiclass: the Crammer–Singer problem, its certificate and its QP export.

References are solved from ``to_qp()`` by Clarabel (``solve_osqp_form_with_clarabel``) and by
OSQP (polished, eps 1e-9), once per case (module-level cache).

The k = 2 relation tested below (exact, at every point, not only at the optimum): with 0-1 cost,
labels ``y ∈ {0, 1}`` and ``ỹ = 2y − 1``, and the binary hinge problem with ``C' = 2C`` (same
bias, ``"none"`` or ``"regularized"``, same s and sample weights),

    P_CS((−w/2, w/2), (−b/2, b/2)) = ½ P_bin(w, b)          for every (w, b),
    D_CS(β) = ½ D_bin(α)  with  β_{i,1−y_i} = α_i/2,  β_{i,y_i} = C_i − α_i/2,  α ∈ [0, 2C_i].

Proof: ``f_1 − f_0 = w·x + b``, so the CS loss ``max(0, 1 + f_{1−y} − f_y)`` is
``max(0, 1 − ỹ(w·x + b))``, and ``½‖W‖² = ¼‖w‖²`` (likewise ``½‖b_CS‖²/s² = ¼ b²/s²``); on the
dual side ``w̃_1 = −w̃_0 = ½ Σ α_i ỹ_i x̃_i``. P_CS is strongly convex, so its minimizer is unique
and, by the identity, ``W* = (−w*/2, w*/2)`` with ``w*`` the binary optimum at 2C, and
``P*_CS = ½ P*_bin``. (With C itself rather than 2C the binary problem is not equivalent: the
loss-to-regularizer ratio differs by a factor 2.)
"""

import functools

import numpy as np
import osqp
import pytest
import scipy.sparse as sp
import sklearn.datasets

import svmbench.problems.multiclass as multiclass_module
from svmbench.problems._qp import maximize_dual_on_subset, solve_osqp_form_with_clarabel
from svmbench.problems.base import WEAK_DUALITY_RTOL
from svmbench.problems.multiclass import MulticlassHinge, project_simplex_rows
from svmbench.problems.soft_margin import SoftMarginPrimal

RTOL_REF = 1e-6  # OSQP vs Clarabel, certificates at the reference optimum
RTOL_FROM_PRIMAL = 1e-8  # dual_from_primal at the reference optimum


# --------------------------------------------------------------------------------------------------
# Data and references
# --------------------------------------------------------------------------------------------------
def _standardize(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


@functools.cache
def data(name: str):
    if name == "iris":
        d = sklearn.datasets.load_iris()
        return _standardize(d.data), d.target
    if name == "wine":
        d = sklearn.datasets.load_wine()
        return _standardize(d.data), d.target
    if name == "digits":
        d = sklearn.datasets.load_digits()
        idx = np.random.default_rng(0).choice(d.target.size, 200, replace=False)
        return d.data[idx] / 16.0, d.target[idx]
    if name == "blobs":
        return sklearn.datasets.make_blobs(
            n_samples=120, n_features=5, centers=4, cluster_std=2.5, random_state=0
        )
    if name == "blobs2":  # k = 2, overlapping
        return sklearn.datasets.make_blobs(
            n_samples=80, n_features=3, centers=2, cluster_std=2.0, random_state=1
        )
    raise KeyError(name)


def ordinal_cost(k: int) -> np.ndarray:
    """Δ(r, y) = |r − y|: a non-uniform cost."""
    r = np.arange(k)
    return np.abs(r[:, None] - r[None, :]).astype(float)


def random_cost(k: int, seed: int = 0) -> np.ndarray:
    cost = np.random.default_rng(seed).uniform(0.5, 2.0, (k, k))
    np.fill_diagonal(cost, 0.0)
    return cost


# name -> (data, C, bias, bias_scale, cost kind)
CASES = {
    "iris-none": ("iris", 1.0, "none", 1.0, None),
    "iris-reg": ("iris", 10.0, "regularized", 2.0, None),
    "wine-ordinal": ("wine", 10.0, "none", 1.0, "ordinal"),
    "blobs-random-reg": ("blobs", 0.5, "regularized", 1.0, "random"),
    "digits-reg": ("digits", 10.0, "regularized", 1.0, None),
    # Large C: the expanded (dense-Hessian) subset QP loses ~1e-6 here to cancellation.
    "wine-ordinal-reg-C100": ("wine", 100.0, "regularized", 2.0, "ordinal"),
}
OSQP_CASES = ["iris-none", "iris-reg", "wine-ordinal", "blobs-random-reg"]


@functools.cache
def problem(case: str) -> MulticlassHinge:
    name, C, bias, s, cost_kind = CASES[case]
    X, y = data(name)
    k = int(y.max()) + 1
    cost = {None: None, "ordinal": ordinal_cost(k), "random": random_cost(k)}[cost_kind]
    return MulticlassHinge(X, y, C=C, cost=cost, bias=bias, bias_scale=s)


@functools.cache
def clarabel_ref(case: str):
    qp = problem(case).to_qp()
    out = solve_osqp_form_with_clarabel(qp.P, qp.q, qp.A, qp.l, qp.u)
    assert out.status == "optimal"
    return qp.recover(out.x, out.y)


@functools.cache
def osqp_ref(case: str):
    qp = problem(case).to_qp()
    m = osqp.OSQP()
    m.setup(
        P=qp.P, q=qp.q, A=qp.A, l=qp.l, u=qp.u, eps_abs=1e-9, eps_rel=1e-9,
        polishing=True, max_iter=200000, verbose=False,
    )  # fmt: skip
    r = m.solve(raise_error=False)
    assert r.info.status == "solved"
    return qp.recover(r.x, r.y)


def optimum(case: str) -> float:
    ref = clarabel_ref(case)
    return problem(case).primal_objective(ref["W"], ref["b"])


# --------------------------------------------------------------------------------------------------
# Construction
# --------------------------------------------------------------------------------------------------
def test_sizes_and_default_cost():
    X, y = data("blobs")
    p = MulticlassHinge(X, y)
    assert (p.n_samples, p.n_features, p.n_classes) == (120, 5, 4)
    np.testing.assert_array_equal(p.cost, 1.0 - np.eye(4))
    assert p.cost.dtype == np.float64 and p.y.dtype == np.int64
    assert p.kind == "multiclass_hinge"
    # The default and the explicit 0-1 cost are the same problem (same cache key).
    assert MulticlassHinge(X, y, cost=1.0 - np.eye(4)).key == p.key
    assert MulticlassHinge(X, y, cost=random_cost(4)).key != p.key


def test_csr_input_gives_the_same_mathematics():
    X, y = data("wine")
    X = np.where(np.abs(X) < 0.7, 0.0, X)
    dense = MulticlassHinge(X, y, C=2.0, bias="regularized", bias_scale=1.5)
    csr = MulticlassHinge(sp.csr_matrix(X), y, C=2.0, bias="regularized", bias_scale=1.5)
    assert csr.is_sparse and not dense.is_sparse
    rng = np.random.default_rng(3)
    W, b = rng.normal(size=(3, 13)), rng.normal(size=3)
    beta = dense.project_dual(rng.uniform(size=(178, 3)))
    assert np.isclose(dense.primal_objective(W, b), csr.primal_objective(W, b), rtol=1e-13)
    assert np.isclose(dense.dual_objective(beta), csr.dual_objective(beta), rtol=1e-13)
    np.testing.assert_allclose(dense.primal_from_dual(beta)[0], csr.primal_from_dual(beta)[0])
    qd, qs = dense.to_qp(), csr.to_qp()
    assert (qd.A != qs.A).nnz == 0 and (qd.P != qs.P).nnz == 0
    # Certificates agree at the optimum.
    out = solve_osqp_form_with_clarabel(qs.P, qs.q, qs.A, qs.l, qs.u)
    ref = qs.recover(out.x, out.y)
    cd = dense.certificate(W=ref["W"], b=ref["b"])
    cs = csr.certificate(W=ref["W"], b=ref["b"])
    assert cs.rel_gap <= RTOL_FROM_PRIMAL
    assert np.isclose(cd.dual, cs.dual, rtol=1e-9)


# --------------------------------------------------------------------------------------------------
# Objectives
# --------------------------------------------------------------------------------------------------
def test_primal_objective_matches_a_loop():
    p = problem("blobs-random-reg")
    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(p.n_classes, p.n_features)), rng.normal(size=p.n_classes)
    X, y, C, s = p.X, p.y, p.upper_bounds, p.bias_scale
    expected = 0.5 * np.sum(W**2) + 0.5 * np.sum(b**2) / s**2
    for i in range(p.n_samples):
        f = W @ X[i] + b
        expected += C[i] * max(p.cost[r, y[i]] + f[r] - f[y[i]] for r in range(p.n_classes))
    assert np.isclose(p.primal_objective(W, b), expected, rtol=1e-12)


def test_dual_objective_matches_a_loop():
    p = problem("iris-reg")
    rng = np.random.default_rng(1)
    beta = p.project_dual(rng.exponential(size=(p.n_samples, p.n_classes)))
    X, y, C, s = p.X, p.y, p.upper_bounds, p.bias_scale
    Xt = np.hstack([X, np.full((p.n_samples, 1), s)])
    Wt = np.zeros((p.n_classes, p.n_features + 1))
    lin = 0.0
    for i in range(p.n_samples):
        for r in range(p.n_classes):
            Wt[r] += ((y[i] == r) * C[i] - beta[i, r]) * Xt[i]
            lin += beta[i, r] * p.cost[r, y[i]]
    assert np.isclose(p.dual_objective(beta), lin - 0.5 * np.sum(Wt**2), rtol=1e-12)
    W, b = p.primal_from_dual(beta)
    np.testing.assert_allclose(W, Wt[:, :-1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b, s * Wt[:, -1], rtol=1e-12, atol=1e-12)


def test_decision_function_and_predict():
    p = problem("iris-reg")
    ref = clarabel_ref("iris-reg")
    F = p.decision_function(ref["W"], ref["b"])
    assert F.shape == (150, 3)
    np.testing.assert_allclose(F, p.X @ ref["W"].T + ref["b"])
    pred = p.predict(ref["W"], ref["b"])
    np.testing.assert_array_equal(pred, np.argmax(F, axis=1))
    assert np.mean(pred == p.y) > 0.95  # 0.97 on the training set (0.85 without a bias)
    np.testing.assert_array_equal(p.predict(ref["W"], ref["b"], X=p.X[:5]), pred[:5])


# --------------------------------------------------------------------------------------------------
# References agree; certificates close the gap
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", OSQP_CASES)
def test_osqp_and_clarabel_agree(case):
    p = problem(case)
    a, b = clarabel_ref(case), osqp_ref(case)
    Pa, Pb = p.primal_objective(a["W"], a["b"]), p.primal_objective(b["W"], b["b"])
    assert abs(Pa - Pb) <= RTOL_REF * abs(Pa)
    np.testing.assert_allclose(a["W"], b["W"], atol=1e-4 * max(1.0, np.abs(a["W"]).max()))


@pytest.mark.parametrize("case", list(CASES))
def test_qp_objective_is_the_primal_objective(case):
    p = problem(case)
    qp = p.to_qp()
    ref = clarabel_ref(case)
    Wt = ref["W"] if p.bias == "none" else np.hstack([ref["W"], ref["b"][:, None] / p.bias_scale])
    xi = np.max(p.augmented_scores(ref["W"], ref["b"]), axis=1)
    x = np.concatenate([Wt.ravel(), xi])
    assert np.isclose(qp.objective(x) + qp.offset, p.primal_objective(ref["W"], ref["b"]))
    Ax = qp.A @ x
    assert np.all(Ax >= qp.l - 1e-9) and np.all(Ax <= qp.u)


@pytest.mark.parametrize("case", list(CASES))
def test_certificate_from_primal_alone(case):
    p = problem(case)
    ref = clarabel_ref(case)
    cert = p.certificate(W=ref["W"], b=ref["b"])
    assert cert.certified
    assert 0 <= cert.rel_gap + WEAK_DUALITY_RTOL and cert.rel_gap <= RTOL_FROM_PRIMAL
    beta = cert.dual_point
    assert np.all(beta >= 0)
    np.testing.assert_allclose(beta.sum(axis=1), p.upper_bounds, rtol=1e-14)
    assert cert.primal_point["W"] is not None and cert.primal_point["b"].shape == (p.n_classes,)


@pytest.mark.parametrize("case", list(CASES))
def test_certificate_from_dual_alone(case):
    p = problem(case)
    ref = clarabel_ref(case)
    cert = p.certificate(beta=ref["beta"])
    assert cert.certified and cert.rel_gap <= RTOL_REF
    assert cert.residuals["dual_infeasibility"] < 1e-6
    assert abs(cert.primal - optimum(case)) <= RTOL_REF * abs(optimum(case))


@pytest.mark.parametrize("case", OSQP_CASES)
def test_osqp_multipliers_recover_beta(case):
    """Sign convention: OSQP's y ≤ 0 on active lower bounds, β_ir = −y_(i,r)."""
    p = problem(case)
    ref = osqp_ref(case)
    assert ref["beta"].min() > -1e-7  # right sign (the wrong one would be ≈ −C)
    cert = p.certificate(**ref)
    assert cert.residuals["dual_infeasibility"] < 1e-7
    assert abs(cert.rel_gap) <= 1e-9


def test_certificate_missing_bias_is_the_best_bias():
    case = "iris-reg"
    p = problem(case)
    ref = clarabel_ref(case)
    cert = p.certificate(W=ref["W"])
    np.testing.assert_allclose(cert.primal_point["b"], ref["b"], atol=1e-6)
    assert cert.rel_gap <= RTOL_FROM_PRIMAL
    b0 = p.best_bias(np.zeros_like(ref["W"]))
    assert p.primal_objective(np.zeros_like(ref["W"]), b0) <= p.primal_objective(
        np.zeros_like(ref["W"]), np.zeros(p.n_classes)
    )


def test_certificate_needs_something():
    with pytest.raises(TypeError, match="needs W"):
        problem("iris-none").certificate()


def test_primal_from_dual_reproduces_the_optimum():
    for case in CASES:
        p = problem(case)
        W, b = p.primal_from_dual(clarabel_ref(case)["beta"])
        assert abs(p.primal_objective(W, b) - optimum(case)) <= RTOL_REF * abs(optimum(case))


def test_weak_duality_at_random_feasible_points():
    p = problem("blobs-random-reg")
    ref = clarabel_ref("blobs-random-reg")
    rng = np.random.default_rng(7)
    n, k, d = p.n_samples, p.n_classes, p.n_features
    gaps = []
    for t in range(20):
        scale = 10.0 ** -(t % 5)  # from far away to 1e-4 around the optimum
        W = ref["W"] + scale * rng.normal(size=(k, d))
        b = ref["b"] + scale * rng.normal(size=k)
        beta = p.project_dual(ref["beta"] + scale * rng.normal(size=(n, k)) * p.C)
        P, D = p.primal_objective(W, b), p.dual_objective(beta)
        gaps.append(P - D)
        assert P - D >= -WEAK_DUALITY_RTOL * max(1.0, abs(P))
    assert min(gaps) < 1e-2 * optimum("blobs-random-reg")  # some points were close


def test_dual_from_primal_with_few_free_multipliers(monkeypatch):
    """Capping the free multipliers keeps β feasible, and the bound stays valid."""
    case = "digits-reg"
    p = problem(case)
    ref = clarabel_ref(case)
    full = p.dual_objective(p.dual_from_primal(ref["W"], ref["b"]))
    monkeypatch.setattr(multiclass_module, "MAX_FREE_MULTIPLIERS", 10)
    beta = p.dual_from_primal(ref["W"], ref["b"])
    assert np.all(beta >= 0)
    np.testing.assert_allclose(beta.sum(axis=1), p.upper_bounds, rtol=1e-14)
    capped = p.dual_objective(beta)
    assert capped <= optimum(case) * (1 + 1e-12)
    assert capped < full  # the cap costs something on this set


def test_dual_from_primal_clear_argmax_is_complementary_slackness():
    p = problem("iris-none")
    W = clarabel_ref("iris-none")["W"] * 50.0  # every argmax clear
    beta = p.dual_from_primal(W)
    z = p.augmented_scores(W)
    expected = np.zeros_like(beta)
    expected[np.arange(p.n_samples), np.argmax(z, axis=1)] = p.upper_bounds
    np.testing.assert_array_equal(beta, expected)


# --------------------------------------------------------------------------------------------------
# Projection and sample weights
# --------------------------------------------------------------------------------------------------
def test_project_simplex_rows():
    rng = np.random.default_rng(0)
    V = rng.normal(scale=3.0, size=(200, 5))
    radius = rng.uniform(0.0, 4.0, size=200)
    radius[:10] = 0.0
    B = project_simplex_rows(V, radius)
    assert np.all(B >= 0)
    np.testing.assert_allclose(B.sum(axis=1), radius, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(B[:10], 0.0)
    np.testing.assert_allclose(project_simplex_rows(B, radius), B, atol=1e-14)  # idempotent
    # Optimality: the projection is no farther from V than 500 random feasible points.
    for i in range(10, 30):
        cand = rng.dirichlet(np.ones(5), size=500) * radius[i]
        assert np.sum((B[i] - V[i]) ** 2) <= np.min(np.sum((cand - V[i]) ** 2, axis=1)) + 1e-12


def test_sample_weight_equals_duplicating_examples():
    X, y = data("iris")
    w = np.ones(150)
    w[:20] = 2.0
    w[20:25] = 0.0
    weighted = MulticlassHinge(X, y, C=1.0, sample_weight=w)
    keep = np.concatenate([np.arange(25, 150), np.arange(20), np.arange(20)])
    dup = MulticlassHinge(X[keep], y[keep], C=1.0)
    ref = clarabel_ref("iris-none")  # any W: the two objectives are identical functions
    assert np.isclose(weighted.primal_objective(ref["W"]), dup.primal_objective(ref["W"]))
    qp = weighted.to_qp()
    out = solve_osqp_form_with_clarabel(qp.P, qp.q, qp.A, qp.l, qp.u)
    r = qp.recover(out.x, out.y)
    cert = weighted.certificate(W=r["W"], b=r["b"])
    assert cert.rel_gap <= RTOL_FROM_PRIMAL
    np.testing.assert_array_equal(cert.dual_point[20:25], 0.0)  # C_i = 0 rows


# --------------------------------------------------------------------------------------------------
# The QP export
# --------------------------------------------------------------------------------------------------
def test_to_qp_is_sparse_with_bounded_rows():
    p = problem("digits-reg")
    qp = p.to_qp()
    n, k, d = p.n_samples, p.n_classes, p.n_features
    assert qp.A.shape == (n * k, k * (d + 1) + n) and qp.P.shape[0] == k * (d + 1) + n
    assert sp.issparse(qp.A) and sp.issparse(qp.P)
    row_nnz = np.diff(sp.csr_matrix(qp.A).indptr)
    x_nnz = np.repeat(np.count_nonzero(p.X, axis=1) + 1, k)  # x̃_i has the bias entry
    assert np.all(row_nnz <= 2 * x_nnz + 1)
    assert qp.A.nnz <= (2 * np.count_nonzero(p.X) + 2 * n + n) * k
    np.testing.assert_array_equal(qp.P.diagonal()[: k * (d + 1)], 1.0)  # w_{r,b} has P entry 1
    np.testing.assert_array_equal(qp.q[k * (d + 1) :], p.upper_bounds)


# --------------------------------------------------------------------------------------------------
# k = 2: relation to the binary hinge problem (see the module docstring)
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", ["none", "regularized"])
def test_two_classes_is_half_the_binary_problem_with_double_C(bias):
    X, y = data("blobs2")
    sw = np.random.default_rng(0).uniform(0.5, 1.5, size=y.size)
    C, s = 0.7, 1.5
    cs = MulticlassHinge(X, y, C=C, bias=bias, bias_scale=s, sample_weight=sw)
    yb = 2.0 * y - 1.0
    binary = SoftMarginPrimal(X, yb, C=2 * C, bias=bias, bias_scale=s, sample_weight=sw)
    rng = np.random.default_rng(1)
    for _ in range(5):  # the identities hold at every point
        w = rng.normal(size=X.shape[1])
        b = rng.normal() if bias == "regularized" else 0.0
        W, bb = np.stack([-w / 2, w / 2]), np.array([-b / 2, b / 2])
        assert np.isclose(cs.primal_objective(W, bb), 0.5 * binary.primal_objective(w, b))
        alpha = rng.uniform(0.0, 2 * C * sw)
        beta = np.empty((y.size, 2))
        beta[np.arange(y.size), 1 - y] = alpha / 2
        beta[np.arange(y.size), y] = C * sw - alpha / 2
        assert np.isclose(cs.dual_objective(beta), 0.5 * binary.dual_objective(alpha))
    # ... hence the optima correspond.
    qc, qb = cs.to_qp(), binary.to_qp()
    rc = qc.recover(*_clarabel_xy(qc))
    rb = qb.recover(*_clarabel_xy(qb))
    Pc, Pb = cs.primal_objective(rc["W"], rc["b"]), binary.primal_objective(rb["w"], rb["b"])
    assert abs(Pc - 0.5 * Pb) <= 1e-7 * Pc
    np.testing.assert_allclose(rc["W"], np.stack([-rb["w"] / 2, rb["w"] / 2]), atol=1e-6)
    np.testing.assert_allclose(rc["b"], [-rb["b"] / 2, rb["b"] / 2], atol=1e-6)


def _clarabel_xy(qp):
    out = solve_osqp_form_with_clarabel(qp.P, qp.q, qp.A, qp.l, qp.u)
    return out.x, out.y


# --------------------------------------------------------------------------------------------------
# maximize_dual_on_subset with several equality rows
# --------------------------------------------------------------------------------------------------
def test_maximize_dual_on_subset_accepts_equality_rows():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(4, 6))
    H, g, c = M.T @ M, rng.normal(size=6), rng.normal(size=6)
    upper = np.full(6, 2.0)
    eq1 = np.ones(6)
    one_d = maximize_dual_on_subset(c, upper, H=H, g=g, eq=eq1, eq_rhs=3.0)
    two_d = maximize_dual_on_subset(c, upper, H=H, g=g, eq=eq1[None, :], eq_rhs=np.array([3.0]))
    np.testing.assert_allclose(one_d, two_d, atol=1e-9)
    E = sp.csr_matrix(np.kron(np.eye(2), np.ones(3)))  # two groups of three
    theta = maximize_dual_on_subset(c, upper, H=H, g=g, eq=E, eq_rhs=np.array([1.0, 2.5]))
    np.testing.assert_allclose(E @ theta, [1.0, 2.5], atol=1e-9)
    assert np.all(theta >= -1e-12) and np.all(theta <= 2.0 + 1e-12)


# --------------------------------------------------------------------------------------------------
# Invalid input
# --------------------------------------------------------------------------------------------------
def _Xy():
    X, _ = data("iris")
    return X[:30:3].copy(), np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"cost": np.ones((2, 2)) - np.eye(2)}, ValueError, r"cost must have shape \(k, k\)"),
        ({"cost": -(np.ones((3, 3)) - np.eye(3))}, ValueError, "cost must be >= 0"),
        ({"cost": np.ones((3, 3))}, ValueError, "cost must have a zero diagonal"),
        ({"cost": np.where(np.eye(3) > 0, 0.0, np.nan)}, ValueError, "cost must contain only"),
        ({"cost": [["a", "b", "c"]] * 3}, TypeError, "cost must hold real numbers"),
        ({"bias": "free"}, ValueError, "free bias adds k equality constraints"),
        ({"bias": "learned"}, ValueError, "bias must be one of"),
        ({"C": 0.0}, ValueError, r"C must be in \(0.0, inf\)"),
        ({"C": -1.0}, ValueError, r"C must be in \(0.0, inf\)"),
        ({"bias_scale": 0.0}, ValueError, "bias_scale must be in"),
        ({"sample_weight": -np.ones(10)}, ValueError, "sample_weight must be >= 0"),
    ],
)
def test_invalid_parameters(kwargs, error, match):
    X, y = _Xy()
    with pytest.raises(error, match=match):
        MulticlassHinge(X, y, **kwargs)


@pytest.mark.parametrize(
    "y, match",
    [
        (np.array([1, 2, 3, 1, 2, 3, 1, 2, 3, 1]), "must use every class index"),  # no class 0
        (np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, -1]), "class indices 0..k-1"),
        (np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0.5]), "class indices 0..k-1"),
        (np.zeros(10), "at least 2 classes"),
        (np.array([0, 1]), "length n_samples=10"),
    ],
)
def test_invalid_labels(y, match):
    X, _ = _Xy()
    with pytest.raises(ValueError, match=match):
        MulticlassHinge(X, y)


def test_nan_in_X():
    X, y = _Xy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X must contain only finite values"):
        MulticlassHinge(X, y)


def test_invalid_points():
    p = problem("iris-none")
    with pytest.raises(ValueError, match=r"W must have shape \(n_classes, n_features\)"):
        p.primal_objective(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="b must be 0 for bias='none'"):
        p.primal_objective(np.zeros((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match=r"beta must have shape \(n_samples, n_classes\)"):
        p.dual_objective(np.zeros(150 * 3))


def test_a_label_far_above_n_is_refused_at_once():
    # refused by comparing with n, before any array of size max(y) is built (it took minutes)
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="k <= n_samples=4.*LabelEncoder"):
        MulticlassHinge(X, np.array([0, 1, 2, 10**8]))


def test_a_problem_keys_its_bytes_as_a_plain_pass_over_its_fields():
    """``deferred_key`` (one pass over the class's field names, kept per class) hashes the same
    arrays and parameters as ``dataclasses.fields`` and ``params`` name, for a problem with an
    array, a None and scalar fields."""
    import dataclasses

    from svmbench.problems.base import _key_of

    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [2.0, 0.5]])
    problem = MulticlassHinge(X, np.array([0, 1, 2, 1]), C=2.0, bias="regularized")
    arrays, params = [], {}
    for f in dataclasses.fields(problem):
        v = getattr(problem, f.name)
        if isinstance(v, np.ndarray) or v is None:
            arrays.append((f.name, v))
        if not isinstance(v, np.ndarray):
            params[f.name] = v
    assert problem.params() == params and "sample_weight" in params
    assert problem.deferred_key()() == _key_of(problem.kind, tuple(arrays), params)
    assert problem.key == problem.deferred_key()()
