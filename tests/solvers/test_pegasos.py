"""Pegasos: convergence against the reference optimum, every option, dense == CSR, the jitted
epoch against a plain NumPy loop, and the status of a planned-epochs run."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import SoftMarginPrimal, datasets
from svmbench.problems import _linear as linear_module
from svmbench.problems.scaling import lambda_from_C
from svmbench.solvers import registry
from svmbench.solvers._jit import pegasos as jit_pegasos
from svmbench.solvers._jit.rows import as_rows
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning, Status
from svmbench.solvers.pegasos import AVERAGING, Pegasos
from tests.conftest import BINARY_SETS

X, Y = BINARY_SETS["gaussian_overlap"]  # n = 200, d = 5
BIASES = ("free", "regularized", "none")


def rel_subopt(result, problem) -> float:
    P_star = reference_solution(problem).primal
    return (result.primal - P_star) / P_star


def solve_quiet(solver, problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solver.solve(problem)


# ---- convergence ---------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("averaging", AVERAGING)
def test_reaches_the_optimum_at_large_lambda(bias, averaging):
    """C = 0.01 (λ = 0.5): within 1e-2 of the reference optimum after 50 epochs."""
    problem = SoftMarginPrimal(X, Y, C=0.01, bias=bias)
    r = solve_quiet(Pegasos(averaging=averaging, max_iter=50, trace=False), problem)
    assert r.iterations == 50 and r.iteration_unit == "epochs"
    assert 0.0 <= rel_subopt(r, problem) <= 1e-2
    # the reported gap is the problem's judgement of the returned point
    cert = problem.certificate(w=r.w, b=r.b)
    assert r.gap == pytest.approx(cert.gap, rel=1e-9, abs=1e-12) and r.certified


@pytest.mark.parametrize("averaging", ["none", "suffix", "polynomial"])
def test_suboptimality_decreases_with_epochs_on_average(averaging):
    """Mean over 4 seeds of the relative suboptimality at C = 1: epoch 32 < epoch 8 < epoch 2."""
    problem = SoftMarginPrimal(X, Y, C=1.0, bias="regularized")
    P_star = reference_solution(problem).primal
    subopt = np.zeros((4, 3))
    for seed in range(4):
        r = solve_quiet(
            Pegasos(averaging=averaging, max_iter=32, seed=seed, trace="every"), problem
        )
        primal = {c.iteration: c.primal for c in r.trace}
        subopt[seed] = [(primal[e] - P_star) / P_star for e in (2, 8, 32)]
    mean = subopt.mean(axis=0)
    assert np.all(subopt >= -1e-9)
    assert mean[2] < mean[1] < mean[0]


def test_averaging_beats_the_last_iterate_at_small_lambda():
    """At C = 1 (λ = 5e-3, few steps per 1/λ) suffix and polynomial averaging do better than the
    last iterate (same seed, same iterates)."""
    problem = SoftMarginPrimal(X, Y, C=1.0, bias="none")
    last = np.mean([rel_subopt(solve_quiet(Pegasos(averaging="none", max_iter=30, seed=s,
                                                   trace=False), problem), problem)
                    for s in range(3)])  # fmt: skip
    for averaging in ("suffix", "polynomial"):
        avg = np.mean([rel_subopt(solve_quiet(Pegasos(averaging=averaging, max_iter=30, seed=s,
                                                      trace=False), problem), problem)
                       for s in range(3)])  # fmt: skip
        assert avg < last


def test_weighted_examples_reach_the_weighted_optimum():
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.2, 3.0, size=Y.shape[0])
    problem = SoftMarginPrimal(X, Y, C=0.01, bias="free", sample_weight=sw)
    r = solve_quiet(Pegasos(max_iter=50, trace=False), problem)
    assert 0.0 <= rel_subopt(r, problem) <= 1e-2
    assert r.info["radius"] == pytest.approx(math.sqrt(sw.mean() / r.info["lambda"]))


# ---- options -------------------------------------------------------------------------------------
def test_same_seed_same_result_and_another_seed_differs():
    problem = SoftMarginPrimal(X, Y, C=0.1, bias="free")
    a = solve_quiet(Pegasos(max_iter=5, seed=3), problem)
    b = solve_quiet(Pegasos(max_iter=5, seed=3), problem)
    c = solve_quiet(Pegasos(max_iter=5, seed=4), problem)
    assert np.array_equal(a.w, b.w) and a.b == b.b
    # which epochs the trace certifies depends on the wall clock (TraceSchedule); at the same
    # epoch the same seed gives the same objective
    at_a, at_b = ({p.iteration: p.primal for p in r.trace} for r in (a, b))
    common = at_a.keys() & at_b.keys()
    assert common and all(at_a[k] == at_b[k] for k in common)
    assert not np.array_equal(a.w, c.w)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("averaging", AVERAGING)
@pytest.mark.parametrize("batch_size", [1, 7])
def test_dense_equals_csr(bias, averaging, batch_size):
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.5] = 0.0  # a genuinely sparse matrix
    dense = SoftMarginPrimal(Xs, Y, C=0.5, bias=bias)
    csr = SoftMarginPrimal(sparse.csr_matrix(Xs), Y, C=0.5, bias=bias)
    opts = dict(averaging=averaging, batch_size=batch_size, max_iter=4, trace=False)
    a = solve_quiet(Pegasos(**opts), dense)
    b = solve_quiet(Pegasos(**opts), csr)
    np.testing.assert_allclose(a.w, b.w, rtol=1e-10, atol=1e-12)
    assert a.b == pytest.approx(b.b, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("batch_size", [1, 10, 64, 200])
def test_mini_batches(batch_size):
    problem = SoftMarginPrimal(X, Y, C=0.01, bias="free")
    r = solve_quiet(Pegasos(batch_size=batch_size, max_iter=50, trace=False), problem)
    n = Y.shape[0]
    assert r.info["steps"] == 50 * math.ceil(n / batch_size)
    assert r.info["examples_seen"] == 50 * n
    # fewer steps, same theory: λ = 0.5 is large enough for all of them to get within 5e-2
    assert 0.0 <= rel_subopt(r, problem) <= 5e-2


def test_sampling_with_replacement_and_eta_zero():
    problem = SoftMarginPrimal(X, Y, C=0.01, bias="free")
    r = solve_quiet(Pegasos(sampling="replacement", max_iter=50, trace=False), problem)
    shuffled = solve_quiet(Pegasos(max_iter=50, trace=False), problem)
    assert 0.0 <= rel_subopt(r, problem) <= 1e-2 and not np.allclose(r.w, shuffled.w)
    # polynomial-decay weights with η = 0 are uniform weights
    uni = solve_quiet(Pegasos(averaging="uniform", max_iter=3, trace=False), problem)
    poly0 = solve_quiet(
        Pegasos(averaging="polynomial", polynomial_eta=0.0, max_iter=3, trace=False), problem
    )
    np.testing.assert_allclose(poly0.w, uni.w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("bias", ["regularized", "none", "free"])
def test_projection_keeps_w_in_the_ball(sparse_input, bias):
    """After every step ‖w̃‖ ≤ 1/√λ with the projection; without it the bound is exceeded."""
    problem = SoftMarginPrimal(X, Y, C=1.0, bias=bias)
    lam = lambda_from_C(1.0, Y.shape[0])
    radius = 1.0 / math.sqrt(lam)
    s = 1.0 if bias == "regularized" else 0.0
    data = sparse.csr_matrix(X) if sparse_input else X
    order = np.random.default_rng(0).permutation(Y.shape[0]).astype(np.int64)
    norms = {}
    for project in (True, False):
        v = np.zeros(X.shape[1] + int(s > 0))
        u = np.zeros_like(v)
        scal = np.zeros(jit_pegasos.N_SCALARS)
        scal[jit_pegasos.A] = 1.0
        xsq = (X * X).sum(1) + s * s
        out = []
        for t, i in enumerate(order):
            one = order[t : t + 1]
            args = (Y, np.ones(Y.shape[0]), xsq, one, 1, lam, t, s, bias == "free", project,
                    radius, jit_pegasos.AVG_NONE, 3.0, v, u, np.zeros_like(v), scal)  # fmt: skip
            jit_pegasos.pegasos_epoch(as_rows(data, np.int64), *args)
            out.append(scal[jit_pegasos.A] * np.linalg.norm(v))
            assert i == one[0]
        norms[project] = np.array(out)
    assert np.all(norms[True] <= radius * (1 + 1e-12))
    assert np.any(norms[False] > radius * 1.01)
    r = solve_quiet(Pegasos(max_iter=3, trace=False), problem)
    last = np.append(r.info["last_w"], r.info["last_b"] / problem.bias_scale if s else [])
    assert np.linalg.norm(last) <= radius * (1 + 1e-12)


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("batch_size", 0, "batch_size"),
        ("averaging", "mean", "averaging"),
        ("sampling", "cyclic", "sampling"),
        ("polynomial_eta", -1.0, "polynomial_eta"),
        ("stop_rule", "native", "stop_rule"),
        ("project", "yes", "project"),
        ("seed", -1, "seed"),
        ("max_iter", 0, "max_iter"),
    ],
)
def test_bad_options_raise_value_error(option, value, match):
    with pytest.raises(ValueError, match=match):
        Pegasos(**{option: value})


def test_registered():
    solver = registry.get("pegasos", max_iter=3, averaging="polynomial")
    assert isinstance(solver, Pegasos) and solver.stochastic
    assert "pegasos" in registry.solvers_for(SoftMarginPrimal(X, Y))
    assert "pegasos" not in registry.solvers_for(SoftMarginPrimal(X, Y, loss="squared_hinge"))


# ---- stopping and status -------------------------------------------------------------------------
def test_planned_epochs_status_follows_the_certificate():
    problem = SoftMarginPrimal(X, Y, C=0.01, bias="none")
    loose = Pegasos(max_iter=10, tol=0.5, trace=False).solve(problem)
    assert loose.status is Status.OPTIMAL and loose.iterations == 10
    assert loose.rel_gap <= 0.5 and "planned" in loose.message
    with pytest.warns(ConvergenceWarning):
        tight = Pegasos(max_iter=10, tol=1e-12, trace=False).solve(problem)
    assert tight.status is Status.MAX_ITER and tight.iterations == 10
    assert tight.rel_gap > 1e-12 and "planned" in tight.message


def test_gap_rule_stops_early_on_a_certified_gap():
    problem = SoftMarginPrimal(X, Y, C=0.01, bias="free")
    r = Pegasos(stop_rule="gap", tol=1e-2, max_iter=200).solve(problem)
    assert r.status is Status.OPTIMAL and r.rel_gap <= 1e-2
    assert r.iterations < 200
    assert len(r.trace) == r.iterations and r.trace[-1].iteration == r.iterations


# ---- the trace's certificates are cheap ---------------------------------------------------------
#: C = 1 (λ = 5e-4): 20 epochs end about 1e-2 above P*, a cheap certificate's gap near 0.9.
FAR = datasets.load("gaussian:n=2000,d=10,sep=1,seed=0")


def count_qps(monkeypatch) -> list:
    """Count the near-margin QPs that ``dual_from_primal`` solves (each still solved)."""
    calls = []
    real = linear_module.maximize_dual_on_subset

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(linear_module, "maximize_dual_on_subset", counting)
    return calls


def qp_dual_objective(problem, w, b) -> float:
    """D of the dual point built the way it was before the trace was made cheap, always with the QP:
    complementary slackness off the margin, the near-margin multipliers maximized."""
    if problem.bias == "free":
        b = problem.best_bias(w)
    r = problem.margins(w, b) - 1.0
    _, upper = problem.dual_box()
    alpha = np.where(r < 0, upper, 0.0)
    free = np.flatnonzero((np.abs(r) <= linear_module.NEAR_MARGIN) & (upper > 0))
    alpha[free] = 0.0
    alpha[free] = problem._maximize_on(alpha, free, upper)
    return problem.dual_objective(problem.project_dual(alpha))


@pytest.mark.parametrize("bias", BIASES)
def test_a_trace_far_from_the_optimum_solves_no_qp(monkeypatch, bias):
    """20 epochs with a certificate after each: no QP, and each checkpoint brackets P*."""
    problem = SoftMarginPrimal(FAR.X, FAR.y, C=1.0, bias=bias)
    P_star = reference_solution(problem).primal  # Clarabel's
    calls = count_qps(monkeypatch)
    r = solve_quiet(Pegasos(max_iter=20, trace="every"), problem)
    assert calls == []
    assert len(r.trace) == 20 and r.rel_gap > linear_module.QP_BELOW_REL_GAP
    for c in r.trace:
        assert c.dual <= P_star * (1 + 1e-9) and c.primal >= P_star * (1 - 1e-9)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("epochs", [1, 5, 20])
def test_far_from_the_optimum_the_cheap_dual_beats_the_qp(bias, epochs):
    """Where the QP is skipped it would not have done better (measured on FAR)."""
    problem = SoftMarginPrimal(FAR.X, FAR.y, C=1.0, bias=bias)
    r = solve_quiet(Pegasos(max_iter=epochs, trace=False), problem)
    assert r.rel_gap > linear_module.QP_BELOW_REL_GAP and r.certified
    assert r.dual >= qp_dual_objective(problem, r.w, r.b)


@pytest.mark.parametrize("bias", BIASES)
def test_near_the_optimum_the_certificate_is_as_tight_as_the_qp(monkeypatch, bias):
    """C = 0.01 (λ = 0.5): the point is near optimal, the QP runs, and the certificate is at
    least as tight as the QP's dual point alone."""
    problem = SoftMarginPrimal(X, Y, C=0.01, bias=bias)
    calls = count_qps(monkeypatch)
    r = solve_quiet(Pegasos(max_iter=20, trace=False), problem)
    assert len(calls) == 1  # the final certificate's
    P_star = reference_solution(problem).primal
    assert r.dual <= P_star * (1 + 1e-9) <= r.primal * (1 + 2e-9)
    assert r.dual >= qp_dual_objective(problem, r.w, r.b) - 1e-9 * abs(r.primal)


@pytest.mark.parametrize("bias", BIASES)
def test_cheap_dual_of_sparse_data_is_feasible_and_matches_dense(bias):
    """CSR input takes the LSQR path: a feasible α, the dense path's D, D ≤ P*."""
    dense = SoftMarginPrimal(FAR.X, FAR.y, C=1.0, bias=bias)
    csr = SoftMarginPrimal(sparse.csr_matrix(FAR.X), FAR.y, C=1.0, bias=bias)
    r = solve_quiet(Pegasos(max_iter=5, trace=False), dense)
    alpha = csr.dual_from_primal(r.w, r.b)
    assert np.all(alpha >= 0.0) and np.all(alpha <= csr.upper_bounds)
    if bias == "free":
        assert abs(alpha @ FAR.y) <= 1e-12 * alpha.sum()
    D = csr.dual_objective(alpha)
    assert D == pytest.approx(dense.dual_objective(dense.dual_from_primal(r.w, r.b)), rel=1e-6)
    assert 0.0 < D <= reference_solution(dense).primal


# ---- the jitted epoch against a plain NumPy loop -------------------------------------------------
@pytest.mark.parametrize("avg_mode", [jit_pegasos.AVG_FLAT, jit_pegasos.AVG_POLY])
def test_lazy_average_is_exact_over_many_projected_steps(avg_mode):
    """The lazy sum acc + β v − u against the explicit Σ ρ_t w̃_t, step by step, over 2 000
    steps whose early projections shrink the scale a by ~100× each (many renormalizations)."""
    rng = np.random.default_rng(0)
    n, d = 2000, 20
    Xl = rng.standard_normal((n, d)) + 0.5
    yl = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    lam = 1.0 / (n * 0.05)
    v, u, acc = np.zeros(d), np.zeros(d), np.zeros(d)
    scal = np.zeros(jit_pegasos.N_SCALARS)
    scal[jit_pegasos.A] = 1.0
    S, t, renorms = np.zeros(d), 0, 0
    for i in rng.permutation(n).astype(np.int64):
        a_before = scal[jit_pegasos.A]
        t = jit_pegasos.pegasos_epoch(
            Xl, yl, np.ones(n), (Xl * Xl).sum(1), np.array([i]), 1, lam, t, 0.0, False, True,
            1.0 / math.sqrt(lam), avg_mode, 3.0, v, u, acc, scal,
        )  # fmt: skip
        renorms += scal[jit_pegasos.A] > a_before
        rho = math.exp(math.lgamma(t + 3.0) - math.lgamma(t)) if avg_mode == 2 else 1.0
        S += rho * scal[jit_pegasos.A] * v
    lazy = acc + scal[jit_pegasos.BETA] * v - u
    assert renorms >= 2
    np.testing.assert_allclose(lazy, S, rtol=1e-9, atol=1e-9 * np.abs(S).max())


def numpy_pegasos(Xd, y, c, lam, s, bias, orders, k, project, averaging, eta_poly=3.0):
    """The textbook algorithm, unscaled: returns (w̃ last, b last, w̃ avg, b avg)."""
    d = Xd.shape[1]
    Xt = np.hstack([Xd, np.full((len(y), 1), s)]) if s > 0 else Xd
    wt, b, t = np.zeros(Xt.shape[1]), 0.0, 0
    radius = math.sqrt(c.mean() / lam)
    iterates = []  # (part, t, w̃, b): parts are half-epochs (the first one holds ⌈S/2⌉ steps)
    steps = -(-len(orders[0]) // k)
    for e, order in enumerate(orders):
        for step, p in enumerate(range(0, len(order), k)):
            batch = order[p : p + k]
            part = 2 * e + (step >= steps - steps // 2)
            t += 1
            eta = 1.0 / (lam * t)
            viol = [i for i in batch if y[i] * (Xt[i] @ wt + b) < 1.0]
            g = sum((c[i] * y[i] * Xt[i] for i in viol), np.zeros(Xt.shape[1]))
            gb = sum(c[i] * y[i] for i in viol)
            wt = (1.0 - eta * lam) * wt + eta / len(batch) * g
            if bias == "free":
                b = b + eta / len(batch) * gb
            if project:
                wt = wt * min(1.0, radius / max(np.linalg.norm(wt), 1e-300))
            iterates.append((part, t, wt.copy(), b))
    if averaging == "none":
        sel, rho = iterates, None
        wa, ba = wt, b
    else:
        if averaging == "suffix":  # the shortest run of recent parts with ≥ half of the steps
            first = max(p for p in range(iterates[-1][0] + 1)
                        if 2 * sum(it[0] >= p for it in iterates) >= len(iterates))  # fmt: skip
            sel = [it for it in iterates if it[0] >= first]
            rho = np.ones(len(sel))
        elif averaging == "uniform":
            sel, rho = iterates, np.ones(len(iterates))
        else:
            sel = iterates
            rho = np.array(
                [math.exp(math.lgamma(t + eta_poly) - math.lgamma(t)) for _, t, _, _ in sel]
            )
        wa = sum(r * it[2] for r, it in zip(rho, sel)) / rho.sum()
        ba = sum(r * it[3] for r, it in zip(rho, sel)) / rho.sum()
    assert d == Xd.shape[1]
    return wt, b, wa, ba


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("averaging", AVERAGING)
@pytest.mark.parametrize("batch_size", [1, 3])
@pytest.mark.parametrize("E", [1, 5])
def test_jitted_epochs_match_a_numpy_loop(bias, averaging, batch_size, E):
    Xt, yt = X[:23], Y[:23]
    c = np.linspace(0.5, 1.5, 23)
    s = 2.0 if bias == "regularized" else 0.0
    problem = SoftMarginPrimal(Xt, yt, C=0.3, bias=bias, bias_scale=s or 1.0, sample_weight=c)
    lam = lambda_from_C(0.3, 23)
    rng = np.random.default_rng(11)
    orders = [rng.permutation(23) for _ in range(E)]
    r = solve_quiet(
        Pegasos(averaging=averaging, batch_size=batch_size, max_iter=E, seed=11, trace=False),
        problem,
    )
    wt, b, wa, ba = numpy_pegasos(Xt, yt, c, lam, s, bias, orders, batch_size, True, averaging)
    d = Xt.shape[1]
    np.testing.assert_allclose(r.info["last_w"], wt[:d], rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(r.w, wa[:d], rtol=1e-9, atol=1e-11)
    if bias == "regularized":
        assert r.b == pytest.approx(s * wa[d], rel=1e-9, abs=1e-11)
    else:
        assert r.b == pytest.approx(ba, rel=1e-9, abs=1e-11)
        assert r.info["last_b"] == pytest.approx(b, rel=1e-9, abs=1e-11)


def test_warm_up_for_compiles_the_rows_of_the_problem_only(monkeypatch):
    from svmbench.solvers import pegasos as module

    monkeypatch.setattr(module, "_COMPILED_ROWS", set())
    X, y = BINARY_SETS["gaussian_separable"]
    solver = Pegasos()
    assert solver.warm_up_for(SoftMarginPrimal(sparse.csr_matrix(X), y, C=1.0)) >= 0.0
    assert module._COMPILED_ROWS == {"csr"}
    solver.warm_up_for(SoftMarginPrimal(X, y, C=1.0))
    assert module._COMPILED_ROWS == {"csr", "dense"}
    assert solver.warm_up_for(SoftMarginPrimal(X, y, C=1.0)) < 0.5  # nothing left to compile
