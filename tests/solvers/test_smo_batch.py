"""Batched working-set SMO on the kernel dual: agreement with Clarabel on smo's grid of kernels,
biases and hard sets, losses, weights, warm starts, small working sets and caches, the jitted
rows and gradient update against dense NumPy, and bad options."""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import KernelDual
from svmbench.problems.kernels import kernel_matrix
from svmbench.solvers._jit import kernel_columns as kc
from svmbench.solvers._jit import smo_batch as jit
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning, Status
from svmbench.solvers.smo_batch import SMOBatch
from tests.conftest import BINARY_SETS
from tests.solvers.kernel_grid import BIASES, KERNELS, SETS
from tests.solvers.kernel_grid import agrees_with_reference as _agrees
from tests.solvers.kernel_grid import kernel_problem as _problem


def _solve(problem, warm_start=None, **options):
    options.setdefault("trace", False)
    options.setdefault("tol", 1e-7)  # a margin below the 1e-6 agreement asserted
    options.setdefault("q", 64)  # smaller than n: the working set is replaced
    return SMOBatch(**options).solve(problem, warm_start=warm_start)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", SETS)
def test_agrees_with_the_reference(name, kernel, bias):
    problem = _problem(name, kernel, bias)
    result = _solve(problem)
    _agrees(result, problem)
    assert result.iteration_unit == "pair updates" and result.iterations > 0
    assert result.info["rows"] == "dense"


def test_squared_hinge_and_sample_weights_agree_with_the_reference():
    X, y = BINARY_SETS["gaussian_overlap"]
    w = np.random.default_rng(1).uniform(0.0, 3.0, len(y))
    w[::17] = 0.0  # examples that do not count
    for bias in ("free", "none"):
        problem = _problem("gaussian_overlap", "rbf", bias, loss="squared_hinge")
        _agrees(_solve(problem), problem)
        weighted = KernelDual(X, y, C=1.0, kernel="rbf", bias=bias, sample_weight=w)
        r = _solve(weighted)
        _agrees(r, weighted)
        assert np.all(r.alpha[w == 0.0] == 0.0)


def test_free_bias_keeps_the_equality_and_the_box():
    problem = _problem("quadrant")
    r = _solve(problem, q=8)
    assert abs(r.alpha @ problem.y) <= 1e-10 * max(1.0, r.alpha.sum())
    assert r.alpha.min() >= 0.0 and np.all(r.alpha <= problem.upper_bounds)
    assert r.residuals["dual_infeasibility"] <= 1e-12


@pytest.mark.parametrize("bias", ("free", "none"))
def test_csr_rows_and_the_gram_matrix_reach_the_reference(bias):
    problem = _problem("breast_cancer", "rbf", bias)
    csr = KernelDual(sparse.csr_matrix(problem.X), problem.y, C=1.0, bias=bias)
    pre = KernelDual(problem.gram, problem.y, C=1.0, kernel="precomputed", bias=bias)
    for p, storage, rows in ((csr, "csr", "csr"), (pre, "auto", "gram")):
        r = _solve(p, storage=storage)
        assert r.info["rows"] == rows
        _agrees(r, p)
        assert r.primal == pytest.approx(reference_solution(problem).primal, rel=1e-6)


@pytest.mark.parametrize("q", (2, 3, 300))
def test_any_working_set_size_and_a_cache_of_q_rows(q):
    # q = 2: one pair at a time; q = 300 ≥ n: the whole problem in one block
    problem = _problem("digits", "rbf", "free")
    r = _solve(problem, q=q, cache_mb=0.0)  # the cache holds the working set only
    assert r.info["q"] == min(q, problem.n_samples)
    assert r.info["cache_rows"] == min(q, problem.n_samples)
    _agrees(r, problem)


@pytest.mark.parametrize("bias", ("free", "none"))
def test_shrinking_on_and_off_give_the_same_optimum(bias):
    problem = _problem("digits", "rbf", bias, C=10.0)
    on, off = _solve(problem, shrinking=True), _solve(problem, shrinking=False)
    _agrees(on, problem)
    _agrees(off, problem)
    assert on.info["shrinks"] >= 1 and on.info["reconstructions"] >= 1
    assert off.info["shrinks"] == 0 and off.info["reconstructions"] == 0


def test_float32_rows_still_agree():
    # RBF rows in float32 when the whole matrix does not fit the budget in float64; the
    # certificate's refusals repair the drift of G (a float64 gradient from α)
    for bias in ("free", "none"):
        problem = _problem("digits", "rbf", bias)
        n = problem.n_samples
        r = _solve(problem, cache_mb=100 * 4 * n / 2**20)
        assert r.info["cache_bytes_per_entry"] == 4 and r.info["cache_rows"] == 100
        _agrees(r, problem)
    assert _solve(_problem("breast_cancer", "linear")).info["cache_bytes_per_entry"] == 8


def test_sigmoid_and_indefinite_kernels_terminate():
    X, y = BINARY_SETS["gaussian_overlap"]
    sig = KernelDual(X, y, C=1.0, kernel="sigmoid", gamma=0.5, coef0=-1.0)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((len(y), len(y)))
    ind = KernelDual(0.5 * (A + A.T), y, C=1.0, kernel="precomputed")
    assert not ind.convex
    for problem in (sig, ind):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = _solve(problem, max_iter=200_000)
        assert r.status in (Status.NOT_CERTIFIED, Status.MAX_ITER)
        if not problem.convex:
            assert r.certified is False and r.status is not Status.OPTIMAL
        assert np.all(np.isfinite(r.alpha))


def test_warm_start_from_a_nearby_C_needs_fewer_updates():
    near = _problem("gaussian_overlap", C=0.9)
    problem = _problem("gaussian_overlap", C=1.0)
    start = _solve(near)
    cold = _solve(problem)
    warm = _solve(problem, warm_start=start)
    _agrees(warm, problem)
    assert warm.iterations < cold.iterations
    assert _solve(problem, warm_start=start.alpha).iterations == warm.iterations
    again = _solve(problem, warm_start=warm)  # from the optimum: one chunk
    assert again.status is Status.OPTIMAL and again.iterations <= warm.iterations


def test_same_inputs_same_iterations_and_max_iter_is_exact():
    problem = _problem("quadrant")
    a, b = _solve(problem), _solve(problem)
    assert a.iterations == b.iterations
    np.testing.assert_array_equal(a.alpha, b.alpha)
    with pytest.warns(ConvergenceWarning):
        r = _solve(_problem("digits"), max_iter=37, chunk=10)
    assert r.status is Status.MAX_ITER and r.iterations == 37


def test_native_rule_reports_the_certified_gap():
    problem = _problem("gaussian_overlap")
    native = _solve(problem, stop_rule="native", eps=1e-2)
    assert native.info["native_converged"] and native.certified
    cert = problem.certificate(alpha=native.alpha, b=native.b)
    assert native.gap == pytest.approx(cert.gap, rel=1e-9)
    assert native.status is (Status.OPTIMAL if native.rel_gap <= 1e-7 else Status.NOT_CERTIFIED)


# ---- the jitted parts against dense NumPy --------------------------------------------------------
def _dense_Q(problem):
    K = kernel_matrix(problem.X, **problem.kernel_params)
    s2 = problem.bias_scale**2 if problem.bias == "regularized" else 0.0
    return np.outer(problem.y, problem.y) * (K + s2)


@pytest.mark.parametrize("kernel", ("linear", "poly", "rbf", "sigmoid"))
@pytest.mark.parametrize("threads", (1, 2))
def test_filled_rows_equal_the_dense_matrix(kernel, threads):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((700, 9))
    X[5] = X[2]  # a duplicated row
    y = np.where(rng.standard_normal(700) > 0, 1.0, -1.0)
    problem = KernelDual(X, y, C=1.0, kernel=kernel, gamma=0.1, coef0=0.5, bias="regularized")
    Q = _dense_Q(problem)
    ws = rng.permutation(np.r_[0, 2, 5, 100, 250, 699, np.arange(10, 40)]).astype(np.int64)
    m = ws.size  # more than one block of GEMM_ROWS
    assert m > jit.GEMM_ROWS
    code, s2 = kc.KERNEL_CODES[kernel], problem.bias_scale**2
    XT = np.ascontiguousarray(X.T)
    sqn = kc.squared_norms(X)
    QD = np.diag(Q).copy()
    slots = np.arange(m, dtype=np.int64)[::-1].copy()
    missing = np.arange(m, dtype=np.int64)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        # the active indices: all, or a subset holding the working set (the others untouched)
        part = np.union1d(ws, np.arange(0, 700, 3)).astype(np.int64)
        for act in (np.arange(700, dtype=np.int64), part):
            XT_a = np.ascontiguousarray(XT[:, act])
            for dtype in (np.float64, np.float32):
                a = np.full((m, 700), np.nan, dtype=dtype)
                b = np.full((m, 700), np.nan, dtype=dtype)
                args = (sqn, y, QD, ws, slots, missing, m)
                jit.fill_rows_dense(X, XT_a, act, sqn[act], y[act], *args, a, code, 0.1, 0.5, 3, s2)
                jit.fill_rows_columns(XT, *args, b, np.empty(700), code, 0.1, 0.5, 3, s2, threads)
                tol = 1e-12 if dtype == np.float64 else 1e-6
                atol = tol * np.abs(Q).max()
                np.testing.assert_allclose(b[slots], Q[ws], rtol=tol, atol=atol)
                np.testing.assert_allclose(a[slots][:, act], Q[ws][:, act], rtol=tol, atol=atol)
                rest = np.setdiff1d(np.arange(700), act)
                assert np.isnan(a[:, rest]).all()
                # the serial twin (rows too small for the parallel loops): the same bits
                c = np.full((m, 700), np.nan, dtype=dtype)
                fill_serial, _ = jit.row_passes(None)
                fill_serial(X, XT_a, act, sqn[act], y[act], *args, c, code, 0.1, 0.5, 3, s2)
                np.testing.assert_array_equal(c, a)
    finally:
        numba.set_num_threads(previous)


def test_gradient_update_and_slot_assignment():
    rng = np.random.default_rng(4)
    n, q = 3000, 5
    cache = rng.standard_normal((q, n))
    slots = np.array([3, 0, 4, 1, 2], dtype=np.int64)
    delta = np.array([0.5, 0.0, -2.0, 1e-3, 0.25])
    G = rng.standard_normal(n)
    expected = G + delta @ cache[slots]
    G0 = G.copy()
    jit.update_gradient(G, cache, slots, delta, q, np.arange(n, dtype=np.int64))
    np.testing.assert_allclose(G, expected, rtol=1e-13, atol=1e-13)
    act = np.arange(1, n, 7, dtype=np.int64)  # an active subset: the others keep their G
    G = G0.copy()
    jit.update_gradient(G, cache, slots, delta, q, act)
    np.testing.assert_allclose(G[act], expected[act], rtol=1e-13, atol=1e-13)
    rest = np.setdiff1d(np.arange(n), act)
    np.testing.assert_array_equal(G[rest], G0[rest])
    # the serial twin sums the rows in the same order: the same bits, on every index or a subset
    _, update_serial = jit.row_passes(None)
    for subset in (np.arange(n, dtype=np.int64), act):
        G_par, G_ser = G0.copy(), G0.copy()
        jit.update_gradient(G_par, cache, slots, delta, q, subset)
        update_serial(G_ser, cache, slots, delta, q, subset)
        np.testing.assert_array_equal(G_ser, G_par)
    assert jit.row_passes(2) == (jit.fill_rows_dense, jit.update_gradient)
    # a cache of 3 rows: the working set's rows are never evicted by its own misses
    col_slot = np.full(10, -1, dtype=np.int64)
    slot_col = np.full(3, -1, dtype=np.int64)
    stamp = np.zeros(3, dtype=np.int64)
    out, missing = np.empty(3, dtype=np.int64), np.empty(3, dtype=np.int64)
    ws = np.array([7, 1, 4], dtype=np.int64)
    miss, clock = jit.assign_slots(ws, 3, col_slot, slot_col, stamp, 0, out, missing)
    assert miss == 3 and sorted(out) == [0, 1, 2]
    ws2 = np.array([4, 9, 7], dtype=np.int64)  # 1 is evicted, 4 and 7 are hits
    miss, clock = jit.assign_slots(ws2, 3, col_slot, slot_col, stamp, clock, out, missing)
    assert miss == 1 and missing[0] == 1 and col_slot[1] == -1
    assert slot_col[out[1]] == 9 and slot_col[out[0]] == 4 and slot_col[out[2]] == 7


def test_memory_estimate_counts_the_cache_and_the_block():
    problem = _problem("digits")
    small = SMOBatch.memory_estimate(problem, q=16, cache_mb=0.0)
    assert SMOBatch.memory_estimate(problem, q=256, cache_mb=0.0) > small
    assert SMOBatch.memory_estimate(problem, q=16, cache_mb=200.0) > small


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("q", 1, ValueError),
        ("q", 0, ValueError),
        ("q", 2.5, TypeError),
        ("inner_tol", 0.0, ValueError),
        ("inner_tol", 1.0, ValueError),
        ("inner_tol", float("nan"), ValueError),
        ("inner_steps", 0, ValueError),
        ("eps", -1.0, ValueError),
        ("cache_mb", -5.0, ValueError),
        ("chunk", 0, ValueError),
        ("shrinking", "yes", TypeError),
        ("storage", "csc", ValueError),
        ("stop_rule", "mvp", ValueError),
        ("tol", -1e-3, ValueError),
        ("q", "512", TypeError),
    ],
)
def test_bad_options_name_the_argument(option, value, error):
    with pytest.raises(error, match=option):
        SMOBatch(**{option: value})
