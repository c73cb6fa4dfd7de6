"""The low-rank kernel SVM (solvers/low_rank.py): certified on the approximate problem, with a
bracket that contains the exact kernel problem's optimum (Clarabel's, through
``reference_solution``), a model that predicts with the kernel, the rank rule and its caps, and
clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems import KernelDual, SoftMarginDual, datasets
from svmbench.problems.kernels import kernel_matrix
from svmbench.solvers import Status, registry
from svmbench.solvers._reference import reference_solution
from tests.fresh_process import run_python

TOL = 1e-6
SETS = {
    "circles": datasets.load("circles:n=160,seed=0"),
    "xor": datasets.load("xor:n=160,noise=0.05,seed=1"),
    "gaussian": datasets.load("gaussian:n=140,d=4,sep=1,seed=2"),
}
KERNELS = {
    "rbf": {"kernel": "rbf", "gamma": 1.0},
    "poly": {"kernel": "poly", "gamma": 0.5, "degree": 2, "coef0": 1.0},
}


def _problem(data="circles", kernel="rbf", bias="free", **kw):
    ds = SETS[data]
    return KernelDual(ds.X, ds.y, C=1.0, bias=bias, **KERNELS[kernel], **kw)


def _solve(problem, **options):
    return registry.get("low_rank", tol=TOL, **options).solve(problem)


GRID = [
    pytest.param(data, kernel, bias, approx, id=f"{data}-{kernel}-{bias}-{approx}")
    for data in SETS
    for kernel in KERNELS
    for bias, approx in (("free", "nystrom"), ("regularized", "cholesky"), ("none", "nystrom"))
]


@pytest.mark.parametrize(("data", "kernel", "bias", "approx"), GRID)
def test_the_bracket_contains_the_exact_optimum(data, kernel, bias, approx):
    problem = _problem(data, kernel, bias)
    result = _solve(problem, approximation=approx, trace_target=0.05)
    info = result.info
    # certified on the approximate problem (info); the record's certificate is the exact one
    assert info["approx_status"] == "optimal" and info["approx_rel_gap"] <= TOL
    exact = problem.certificate(alpha=result.alpha, b=result.b)
    assert result.rel_gap == pytest.approx(exact.rel_gap, rel=1e-9)
    assert (result.status is Status.OPTIMAL) == (exact.certified and exact.rel_gap <= TOL)
    ref = reference_solution(problem)
    slack = 1e-7 * max(1.0, abs(ref.primal))
    assert info["bracket_lower"] - slack <= ref.primal <= info["bracket_upper"] + slack
    width = (info["bracket_upper"] - info["bracket_lower"]) / max(1.0, abs(info["bracket_upper"]))
    assert info["bracket_rel_width"] == pytest.approx(width)
    # the upper bound is the exact primal of the model returned (a kernel expansion)
    model = result.model
    f = kernel_matrix(problem.X, model.support_vectors, **problem.kernel_params) @ model.dual_coef
    np.testing.assert_allclose(model.decision_function(problem.X), f + model.b, atol=1e-9)
    assert info["inner"] == ("barrier" if bias == "free" else "dcd")


@pytest.mark.parametrize("bias", ["free", "none"])
def test_the_bracket_holds_for_the_squared_hinge_and_example_weights(bias):
    ds = SETS["xor"]
    weights = np.random.default_rng(0).uniform(0, 2, ds.X.shape[0])
    weights[:5] = 0.0
    problem = KernelDual(
        ds.X,
        ds.y,
        C=2.0,
        kernel="rbf",
        gamma=1.0,
        loss="squared_hinge",
        bias=bias,
        sample_weight=weights,
    )
    info = _solve(problem).info
    ref = reference_solution(problem)
    slack = 1e-7 * abs(ref.primal)
    assert info["bracket_lower"] - slack <= ref.primal <= info["bracket_upper"] + slack


def test_a_full_rank_factor_closes_the_bracket():
    problem = _problem("gaussian", "rbf", "regularized")
    result = _solve(problem, rank=problem.n_samples, trace_target=1e-9, approximation="cholesky")
    ref = reference_solution(problem)
    assert result.info["bracket_rel_width"] <= 5 * TOL
    assert result.info["bracket_upper"] == pytest.approx(ref.primal, rel=5 * TOL)


def test_the_model_predicts_with_the_kernel_as_the_linear_model_does():
    ds = datasets.load("circles:n=400,seed=5")
    problem = KernelDual(ds.X[:300], ds.y[:300], C=1.0, kernel="rbf", gamma=1.0, bias="none")
    result = _solve(problem)
    test = datasets.load("circles:n=400,seed=5")
    assert np.mean(result.model.predict(test.X[300:]) == test.y[300:]) >= 0.95
    # on the training set, f(x_i) = (Fw)_i: the kernel model's margins are the linear model's
    margins = problem.y * result.model.decision_function(problem.X)
    lin = result.info["approx_primal"]
    sv = result.model.support_vectors
    K_zz = kernel_matrix(sv, sv, kernel="rbf", gamma=1.0)
    norm_sq = result.model.dual_coef @ K_zz @ result.model.dual_coef  # ‖f‖_H² = ‖w‖²
    value = 0.5 * norm_sq + np.maximum(0, 1 - margins).sum()
    assert value == pytest.approx(lin, rel=1e-8)


def test_a_larger_trace_target_gives_a_smaller_rank():
    problem = _problem("circles", "rbf", "none")
    ranks = [_solve(problem, trace_target=t).info["factor_rank"] for t in (0.1, 1e-2, 1e-4)]
    assert ranks[0] < ranks[1] < ranks[2]
    chol = [
        _solve(problem, trace_target=t, approximation="cholesky").info["factor_rank"]
        for t in (0.1, 1e-2)
    ]
    assert chol[0] < chol[1]


def test_the_caps_fixed_rank_and_the_lower_bound_limit():
    problem = _problem("circles", "rbf", "none")
    n = problem.n_samples
    tight = _solve(problem, memory_mb=8 * n * 5 / 2**20, trace_target=1e-6)
    assert tight.info["factor_rank"] <= 5 and tight.info["rank_rule"]["cap"] == 5
    assert _solve(problem, rank=7).info["factor_rank"] == 7
    assert _solve(problem, max_rank=10, trace_target=1e-6).info["factor_rank"] <= 10
    no_lower = _solve(problem, lower_bound_max_n=n - 1)
    assert no_lower.info["bracket_lower"] is None and no_lower.info["bracket_rel_width"] is None
    assert no_lower.info["bracket_upper"] >= reference_solution(problem).primal


def test_max_iter_of_the_inner_solver_is_honest():
    problem = _problem("xor", "rbf", "regularized")
    with pytest.warns(Warning, match="max_iter"):
        result = _solve(problem, max_iter=1, trace_target=0.01)
    assert result.status is Status.MAX_ITER
    ref = reference_solution(problem)
    assert result.info["bracket_upper"] >= ref.primal >= result.info["bracket_lower"]


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"rank": 0}, ValueError, "rank must be an integer >= 1, got 0"),
        ({"rank": -3}, ValueError, "rank must be an integer >= 1, got -3"),
        ({"rank": 2.5}, TypeError, "rank must be an integer"),
        ({"approximation": "svd"}, ValueError, "approximation must be one of"),
        ({"inner": "smo"}, ValueError, "inner must be one of"),
        ({"trace_target": 0.0}, ValueError, "trace_target"),
        ({"trace_target": 1.5}, ValueError, "trace_target"),
        ({"memory_mb": -1.0}, ValueError, "memory_mb"),
        ({"lower_bound_max_n": -1}, ValueError, "lower_bound_max_n"),
        ({"seed": -1}, ValueError, "seed"),
    ],
)
def test_bad_options_are_refused_naming_them(options, error, match):
    with pytest.raises(error, match=match):
        registry.get("low_rank", **options)


def test_bad_problems_are_refused_naming_the_solver_and_the_problem():
    ds = SETS["circles"]
    solver = registry.get("low_rank")
    with pytest.raises(TypeError, match="low_rank.*soft_margin_dual"):
        solver.solve(SoftMarginDual(ds.X, ds.y, bias="none"))
    K = kernel_matrix(ds.X, kernel="rbf", gamma=1.0)
    with pytest.raises(TypeError, match="low_rank.*kernel='precomputed' is not supported"):
        solver.solve(KernelDual(K, ds.y, kernel="precomputed"))
    with pytest.raises(TypeError, match="low_rank.*kernel='sigmoid' is not supported"):
        solver.solve(KernelDual(ds.X, ds.y, kernel="sigmoid", gamma=0.1))
    with pytest.raises(TypeError, match="inner='dcd'.*use inner='barrier'"):
        registry.get("low_rank", inner="dcd").solve(_problem(bias="free"))
    with pytest.raises(ValueError, match="warm_start"):
        solver.solve(_problem(bias="none"), warm_start=np.zeros(ds.X.shape[0]))
    with pytest.raises(TypeError, match="svmbench problem"):
        solver.solve(ds.X)


def test_the_memory_estimate_follows_the_rank_and_memory_caps():
    from types import SimpleNamespace

    cls = registry.solver_class("low_rank")
    big = SimpleNamespace(n_samples=1_000_000, bias="regularized")
    estimate = cls.memory_estimate(big)  # r = 536 (4 GB of float64 factor), dcd's vectors
    assert 8 * 1_000_000 * 536 < estimate < 5 * 2**30
    assert cls.memory_estimate(big, memory_mb=1024) < estimate / 3
    small = SimpleNamespace(n_samples=10_000, bias="regularized")
    assert cls.memory_estimate(small, rank=10) < cls.memory_estimate(small)
    # a free bias goes to the barrier, whose n×r blocks come on top
    free = SimpleNamespace(n_samples=10_000, bias="free")
    assert cls.memory_estimate(free) > 2 * cls.memory_estimate(small)


@pytest.mark.parametrize(
    ("data", "C", "bias"),
    [("gaussian", 1e10, "free"), ("gaussian", 1.0, "free"), ("xor", 10.0, "regularized"),
     ("circles", 1e10, "none")],
)  # fmt: skip
def test_the_record_certifies_the_returned_variables_on_the_exact_problem(data, C, bias):
    """optimal ⇔ the exact problem certifies the returned α and b at tol: at C = 1e10 the
    approximation's word (optimal, gap 1e-7) once stood for an exact relative gap of 1.0."""
    ds = SETS[data]
    problem = KernelDual(ds.X, ds.y, C=C, bias=bias, kernel="rbf", gamma=1.0)
    result = _solve(problem)
    exact = problem.certificate(alpha=result.alpha, b=result.b)
    meets = exact.certified and exact.rel_gap <= TOL
    assert (result.status is Status.OPTIMAL) == meets, (result.status, exact.rel_gap)
    assert result.rel_gap == pytest.approx(exact.rel_gap, rel=1e-9, abs=1e-15)
    assert result.certified == exact.certified
    if result.info["approx_status"] == "optimal" and not meets:
        assert result.status is Status.NOT_CERTIFIED


def test_beyond_lower_bound_max_n_the_record_claims_no_certificate():
    problem = _problem("circles", "rbf", "none")
    result = _solve(problem, lower_bound_max_n=10)
    assert result.info["approx_status"] == "optimal"
    assert result.status is Status.NOT_CERTIFIED and not result.certified
    assert "lower_bound_max_n" in result.message


def test_a_solve_compiles_only_its_inner_solver_on_dense_rows(tmp_path):
    """``warm_up_for`` compiles the inner solver the problem runs, for the factor's dense rows
    and the problem's loss: dcd's dense epochs for a regularized bias, the barrier's dense hinge
    passes for a free one; never both inner solvers' every variant."""
    import json

    code = (
        "import json, numpy as np\n"
        "from svmbench.problems import KernelDual\n"
        "from svmbench.solvers import dcd, registry\n"
        "from svmbench.solvers.barrier.primal_dual_margins import compiled_passes\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(20, 3)); y = np.where(X[:, 0] > 0, 1.0, -1.0)\n"
        "seen = []\n"
        "for bias in ('regularized', 'free'):\n"
        "    registry.get('low_rank').warm_up_for(KernelDual(X, y, C=1.0, bias=bias))\n"
        "    seen.append([sorted(dcd.COMPILED_ROWS), sorted(map(list, compiled_passes()))])\n"
        "print(json.dumps(seen))\n"
    )
    done = run_python(code, tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        [["dense"], []],
        [["dense"], [["dense", "hinge"]]],
    ]
