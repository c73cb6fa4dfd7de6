"""Dual coordinate descent (``dcd``): optimum, certificate, warm start, shrinking, seeds, options.

Every optimum is compared with the Clarabel reference of the same problem; the jitted epoch is
compared with a plain NumPy loop fed the same permutation.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import SoftMarginDual, SoftMarginPrimal, datasets
from svmbench.solvers import ConvergenceWarning, SolveResult, Status, registry
from svmbench.solvers import dcd as dcd_module
from svmbench.solvers._jit import dcd as jit
from svmbench.solvers._reference import reference_solution
from tests.conftest import BINARY_SETS, SET_C
from tests.fresh_process import run_python

RTOL_OPT = 1e-6  # agreement with the reference optimum
TOL = 1e-7  # certified relative gap asked of dcd (leaves room for the reference's own error)
MAX_ITER = 100_000  # the large-C set needs thousands of epochs at this tolerance

SETS = ["gaussian_overlap", "quadrant", "breast_cancer", "digits", "duplicated", "d_gt_n"]
LOSSES = ["hinge", "squared_hinge"]
BIASES = ["regularized", "none"]


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def dcd(**options):
    options = {"tol": TOL, "max_iter": MAX_ITER, "trace": False} | options
    return registry.get("dcd", **options)


def problem_on(name, *, loss="hinge", bias="regularized", view=SoftMarginPrimal, csr=False, **kw):
    X, y = BINARY_SETS[name]
    X = sparse.csr_matrix(X) if csr else X
    return view(X, y, C=kw.pop("C", SET_C[name]), loss=loss, bias=bias, **kw)


def reference_of(problem):
    """Clarabel's optimum of the same problem (primal view, dense data: one cached solve)."""
    X = problem.X.toarray() if sparse.issparse(problem.X) else problem.X
    twin = SoftMarginPrimal(
        X,
        problem.y,
        C=problem.C,
        loss=problem.loss,
        bias=problem.bias,
        bias_scale=problem.bias_scale,
        sample_weight=problem.sample_weight,
    )
    return reference_solution(twin, "clarabel")


# ---- optimum -------------------------------------------------------------------------------------
@pytest.mark.parametrize("view", [SoftMarginPrimal, SoftMarginDual], ids=["primal", "dual"])
@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", SETS)
def test_reaches_the_reference_optimum_dense_and_csr(name, loss, bias, view):
    problem = problem_on(name, loss=loss, bias=bias, view=view)
    ref = reference_of(problem)
    r = dcd().solve(problem)
    assert type(r) is SolveResult and r.solver == "dcd" and r.iteration_unit == "epochs"
    assert r.status is Status.OPTIMAL, r.message
    assert r.certified and 0.0 <= r.rel_gap <= TOL
    # the reported gap is the problem's, recomputed from the returned variables
    again = problem.certificate(**r.variables)
    assert again.rel_gap <= TOL and again.gap == pytest.approx(r.gap, rel=1e-9, abs=1e-12)
    assert rel(r.primal, ref.primal) <= RTOL_OPT, (r.primal, ref.primal)
    assert rel(r.dual, ref.primal) <= RTOL_OPT
    # the model: b = s·w_b with w_b = s Σ α_i y_i, or no bias at all
    if bias == "none":
        assert r.b == 0.0
    else:
        assert r.b == pytest.approx(problem.bias_scale**2 * float(r.alpha @ problem.y), abs=1e-9)
    w_from_alpha, _ = problem.primal_from_dual(r.alpha)
    np.testing.assert_allclose(r.w, w_from_alpha, rtol=1e-8, atol=1e-9)

    r_csr = dcd().solve(problem_on(name, loss=loss, bias=bias, view=view, csr=True))
    assert r_csr.status is Status.OPTIMAL
    assert r_csr.iterations == r.iterations
    np.testing.assert_allclose(r_csr.alpha, r.alpha, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r_csr.w, r.w, rtol=1e-12, atol=1e-14)
    assert r_csr.primal == pytest.approx(r.primal, rel=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_per_example_weights_and_bias_scale(loss, rng):
    X, y = BINARY_SETS["gaussian_overlap"]
    sw = rng.uniform(0.2, 3.0, size=y.size)
    sw[:5] = 0.0  # C_i = 0: α_i is pinned at 0
    problem = SoftMarginPrimal(
        X, y, C=0.7, loss=loss, bias="regularized", bias_scale=2.5, sample_weight=sw
    )
    ref = reference_of(problem)
    r = dcd().solve(problem)
    assert r.status is Status.OPTIMAL and r.rel_gap <= TOL
    assert rel(r.primal, ref.primal) <= RTOL_OPT
    assert np.all(r.alpha[:5] == 0.0)
    if loss == "hinge":
        assert np.all(r.alpha <= problem.upper_bounds)
        assert np.any(r.alpha == problem.upper_bounds)  # some bounded multipliers
    assert r.b == pytest.approx(2.5**2 * float(r.alpha @ y), abs=1e-9)


# ---- warm start, shrinking, seeds ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "loss"), [("breast_cancer", "hinge"), ("digits", "squared_hinge")]
)
def test_warm_start_from_a_nearby_C_takes_fewer_epochs(name, loss):
    C = SET_C[name]
    near = problem_on(name, loss=loss, C=C)
    target = problem_on(name, loss=loss, C=1.1 * C)
    start = dcd().solve(near)
    cold = dcd(check_every=1).solve(target)
    warm = dcd(check_every=1).solve(target, warm_start=start)
    warm_array = dcd(check_every=1).solve(target, warm_start=start.alpha)
    ref = reference_of(target)
    for r in (cold, warm, warm_array):
        assert r.status is Status.OPTIMAL and rel(r.primal, ref.primal) <= RTOL_OPT
    assert warm.iterations < cold.iterations, (warm.iterations, cold.iterations)
    assert warm_array.iterations == warm.iterations
    np.testing.assert_array_equal(warm_array.alpha, warm.alpha)


def test_warm_start_from_a_primal_only_result():
    problem = problem_on("quadrant", loss="squared_hinge", bias="none")
    ref = reference_of(problem)
    only_w = dataclasses.replace(ref, alpha=None)
    r = dcd(check_every=1).solve(problem, warm_start=only_w)
    cold = dcd(check_every=1).solve(problem)
    assert r.status is Status.OPTIMAL and rel(r.primal, ref.primal) <= RTOL_OPT
    assert r.iterations < cold.iterations


@pytest.mark.parametrize("loss", LOSSES)
def test_shrinking_on_and_off_reach_the_same_optimum(loss):
    problem = problem_on("digits", loss=loss)
    ref = reference_of(problem)
    on = dcd(shrinking=True).solve(problem)
    off = dcd(shrinking=False).solve(problem)
    assert on.status is Status.OPTIMAL and off.status is Status.OPTIMAL
    assert rel(on.primal, ref.primal) <= RTOL_OPT and rel(off.primal, ref.primal) <= RTOL_OPT
    assert rel(on.primal, off.primal) <= RTOL_OPT
    np.testing.assert_allclose(on.w, off.w, rtol=0, atol=1e-2 * np.linalg.norm(ref.w))
    # shrinking did shrink (and re-checked the full set); without it nothing is ever shrunk
    assert on.info["full_rechecks"] > 0
    assert off.info["full_rechecks"] == 0 and off.info["active_size"] == problem.n_samples


def test_same_seed_same_iterates_other_seed_other_path():
    problem = problem_on("breast_cancer")
    a = dcd(seed=7).solve(problem)
    b = dcd(seed=7).solve(problem)
    c = dcd(seed=8).solve(problem)
    assert a.iterations == b.iterations
    np.testing.assert_array_equal(a.alpha, b.alpha)
    np.testing.assert_array_equal(a.w, b.w)
    assert not np.array_equal(a.alpha, c.alpha)
    assert rel(c.primal, a.primal) <= RTOL_OPT


# ---- stopping ------------------------------------------------------------------------------------
def test_native_rule_stops_and_reports_a_certified_gap():
    problem = problem_on("breast_cancer", loss="hinge")
    loose = dcd(stop_rule="native").solve(problem)  # LIBLINEAR's default eps = 0.1
    tight = dcd(stop_rule="native", eps=1e-4).solve(problem)
    for r in (loose, tight):
        # optimal only if the certificate meets tol, whatever rule stopped the method
        assert r.certified
        assert r.status is (Status.OPTIMAL if r.rel_gap <= 1e-6 else Status.NOT_CERTIFIED)
        cert = problem.certificate(**r.variables)
        assert r.rel_gap == pytest.approx(cert.rel_gap, rel=1e-9)
        assert r.rel_gap >= 0.0
    assert tight.iterations > loose.iterations
    assert tight.rel_gap < loose.rel_gap
    # a gap run to the same accuracy cannot be reached earlier than the loose native stop
    assert dcd(tol=1e-9, check_every=1).solve(problem).iterations > loose.iterations


def test_a_tiny_eps_does_not_freeze_shrunk_coordinates():
    # The rule max PG − min PG ≤ 1e-14 is never met (rounding), so the run ends on max_iter; the
    # periodic forced re-check still un-shrinks wrongly shrunk coordinates and the gap closes.
    # (Without it this run stalls at a relative gap of about 5e-5.) The point is certified at
    # tol, so the record says optimal, and why the method stopped.
    problem = problem_on("gaussian_overlap", loss="squared_hinge")
    r = dcd(stop_rule="native", eps=1e-14, max_iter=3000).solve(problem)
    assert r.status is Status.OPTIMAL and r.iterations == 3000
    assert "the method stopped (" in r.message and "max_iter" in r.message
    assert r.info["forced_rechecks"] > 0
    assert r.rel_gap <= 1e-10
    assert rel(r.primal, reference_of(problem).primal) <= RTOL_OPT


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name", ["gaussian_overlap", "duplicated"])
def test_several_epochs_per_chunk_are_the_epochs_of_one_per_chunk(name, loss):
    # A small problem runs several epochs per chunk (check_every=None, trace not "every"); a
    # fixed check_every runs one per chunk. Under the native rule both stop at the same epoch, so
    # the iterates, re-checks and shrinking must agree exactly.
    problem = problem_on(name, loss=loss)
    assert problem.X.size < dcd_module.EPOCH_WORK  # several epochs per chunk
    batched = dcd(stop_rule="native", eps=1e-5, trace=True).solve(problem)
    single = dcd(stop_rule="native", eps=1e-5, check_every=1).solve(problem)
    assert batched.iterations == single.iterations > 1
    np.testing.assert_array_equal(batched.alpha, single.alpha)
    np.testing.assert_array_equal(batched.w, single.w)
    assert batched.info["full_rechecks"] == single.info["full_rechecks"]
    assert batched.info["active_size"] == single.info["active_size"]
    # chunks of several epochs: the first trace point comes after the first chunk's epochs
    assert batched.trace[0].iteration > 1
    # and max_iter is still exact: the last chunk is cut to fit
    with pytest.warns(ConvergenceWarning):
        capped = dcd(stop_rule="native", eps=1e-14, max_iter=7).solve(problem)
    assert capped.iterations == 7


def test_max_iter_is_a_status_with_a_warning():
    problem = problem_on("duplicated")
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        r = registry.get("dcd", tol=1e-12, max_iter=3, trace="every").solve(problem)
    assert r.status is Status.MAX_ITER and r.iterations == 3
    assert r.certified and math.isfinite(r.gap) and r.rel_gap > 1e-12
    assert [c.iteration for c in r.trace] == [1, 2, 3]


def test_the_default_epoch_cap_lets_a_slow_gap_reach_tol():
    """A slow case: the gap settles below 1e-6 after ~13 600 epochs, past the old cap."""
    data = datasets.load("gaussian:n=20000,d=50,sep=1,seed=0")
    problem = SoftMarginPrimal(data.X, data.y, C=1.0, bias="regularized")
    result = registry.get("dcd", tol=1e-6, trace=False).solve(problem)
    assert result.status is Status.OPTIMAL and result.rel_gap <= 1e-6


# ---- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("eps", -0.1, "eps"),
        ("eps", 0.0, "eps"),
        ("check_every", 0, "check_every"),
        ("seed", -1, "seed"),
        ("shrinking", "yes", "shrinking"),
        ("stop_rule", "pg", "stop_rule"),
        ("tol", -1e-6, "tol"),
        ("max_iter", 0, "max_iter"),
    ],
)
def test_bad_options_raise_value_error(option, value, match):
    with pytest.raises(ValueError, match=match):
        registry.get("dcd", **{option: value})


# ---- the jitted epoch against a plain loop -------------------------------------------------------
def numpy_epoch(X, y, upper, diag, qd, s, alpha, w, wb, order, active, pg_max_old, pg_min_old):
    """Algorithm 3's inner loop, written plainly, over a given (already shuffled) order."""
    order = order.copy()
    pg_max, pg_min = -np.inf, np.inf
    k = 0
    while k < active:
        i = order[k]
        G = y[i] * (X[i] @ w + s * wb[0]) - 1.0 + diag[i] * alpha[i]
        PG = 0.0
        if alpha[i] == 0.0:
            if G > pg_max_old:
                active -= 1
                order[k], order[active] = order[active], order[k]
                continue
            PG = min(G, 0.0)
        elif alpha[i] == upper[i]:
            if G < pg_min_old:
                active -= 1
                order[k], order[active] = order[active], order[k]
                continue
            PG = max(G, 0.0)
        else:
            PG = G
        pg_max, pg_min = max(pg_max, PG), min(pg_min, PG)
        if abs(PG) > 1e-12:
            with np.errstate(divide="ignore"):  # a zero row without bias: Q̄_ii = 0, step to a bound
                new = min(max(alpha[i] - G / qd[i], 0.0), upper[i])
            delta = (new - alpha[i]) * y[i]
            alpha[i] = new
            w += delta * X[i]
            wb[0] += delta * s
        k += 1
    return order, active, pg_max, pg_min


@pytest.mark.parametrize("csr", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("s", [1.5, 0.0], ids=["regularized", "none"])
def test_jitted_epoch_matches_a_numpy_loop(csr, loss, s):
    rng = np.random.default_rng(0)
    n, d = 40, 6
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    C = rng.uniform(0.5, 2.0, n)
    upper = C if loss == "hinge" else np.full(n, np.inf)
    diag = np.zeros(n) if loss == "hinge" else 0.5 / C
    qd = np.einsum("ij,ij->i", X, X) + s * s + diag
    alpha, w, wb = np.zeros(n), np.zeros(d), np.zeros(1)
    a_ref, w_ref, wb_ref = alpha.copy(), w.copy(), wb.copy()
    index = np.arange(n, dtype=np.int64)
    rng_state = np.array([12345], dtype=np.uint64)
    Xs = sparse.csr_matrix(X)
    active, pg_old = n, (np.inf, -np.inf)
    shrunk_once = False
    for _ in range(12):
        # the permutation the kernel will use: the same shuffle on copies of its inputs
        order, state_copy = index.copy(), rng_state.copy()
        jit.shuffle_active(order, active, state_copy)
        assert sorted(order[:active]) == sorted(index[:active])
        exp_order, exp_active, exp_max, exp_min = numpy_epoch(
            X, y, upper, diag, qd, s, a_ref, w_ref, wb_ref, order, active, *pg_old
        )
        args = (y, upper, diag, qd, s, alpha, w, wb, index, active, *pg_old, rng_state)
        out = jit.dcd_epoch((Xs.indptr, Xs.indices, Xs.data) if csr else X, *args)
        assert out[0] == exp_active
        assert out[1] == pytest.approx(exp_max, rel=1e-12) and out[2] == pytest.approx(exp_min)
        np.testing.assert_array_equal(index, exp_order)
        np.testing.assert_array_equal(rng_state, state_copy)
        np.testing.assert_allclose(alpha, a_ref, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(w, w_ref, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(wb, wb_ref, rtol=1e-11, atol=1e-13)
        shrunk_once |= exp_active < active
        # LIBLINEAR's bounds for the next epoch (the shrinking branch gets exercised)
        active = exp_active
        pg_old = (exp_max if exp_max > 0 else np.inf, exp_min if exp_min < 0 else -np.inf)
    assert np.any(alpha > 0)
    if loss == "hinge":
        assert shrunk_once  # some multipliers hit a bound and were shrunk


def test_shuffle_is_a_seeded_permutation():
    a = np.arange(50, dtype=np.int64)
    b = a.copy()
    jit.shuffle_active(a, 50, np.array([3], dtype=np.uint64))
    jit.shuffle_active(b, 50, np.array([3], dtype=np.uint64))
    np.testing.assert_array_equal(a, b)
    assert sorted(a) == list(range(50)) and not np.array_equal(a, np.arange(50))
    c = np.arange(50, dtype=np.int64)
    jit.shuffle_active(c, 20, np.array([3], dtype=np.uint64))
    np.testing.assert_array_equal(c[20:], np.arange(20, 50))  # only the active prefix moves


def test_a_solve_compiles_only_the_rows_of_its_problem(tmp_path):
    """``warm_up_for`` compiles the epochs for the problem's rows (dense, or CSR with its index
    type), not all three storages; the whole ``warm_up`` still compiles every one."""
    import json

    code = (
        "import json, numpy as np\n"
        "from scipy import sparse\n"
        "from svmbench.problems import SoftMarginDual\n"
        "from svmbench.solvers import dcd, registry\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(20, 3)); y = np.where(X[:, 0] > 0, 1.0, -1.0)\n"
        "solver = registry.get('dcd')\n"
        "seen = []\n"
        "for rows in (X, sparse.csr_matrix(X)):\n"
        "    solver.warm_up_for(SoftMarginDual(rows, y, C=1.0, bias='regularized'))\n"
        "    seen.append(sorted(dcd.COMPILED_ROWS))\n"
        "solver.warm_up()\n"
        "seen.append(sorted(dcd.COMPILED_ROWS))\n"
        "print(json.dumps(seen))\n"
    )
    done = run_python(code, tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        ["dense"],
        ["csr-int32", "dense"],
        ["csr-int32", "csr-int64", "dense"],
    ]
