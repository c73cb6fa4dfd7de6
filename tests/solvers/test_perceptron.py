"""The perceptron: Novikoff's mistake bound on separable data (R̃ and γ̃ computed here from the
regularized-bias hard margin), the status on overlapping data, the averaged option, the learning
rate invariance from a zero start, and the jitted epoch against a plain NumPy loop."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import (
    HardMarginPrimal,
    SoftMarginPrimal,
    datasets,
)
from svmbench.problems import _linear as linear_module
from svmbench.solvers import registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning, Status
from svmbench.solvers.perceptron import Perceptron
from tests.conftest import BINARY_SETS

#: Separable sets: the easy one of conftest and a harder one (tens of mistakes).
SEPARABLE = {
    "gaussian_separable": BINARY_SETS["gaussian_separable"],
    "gaussian_d10_sep5": (lambda ds: (ds.X, ds.y))(
        datasets.load("gaussian:n=400,d=10,sep=5,seed=2")
    ),
}
X_OVER, Y_OVER = BINARY_SETS["gaussian_overlap"]


def novikoff_bound(X, y, s):
    """(R̃/γ̃)² with R̃ = max‖(x_i, s)‖ and γ̃ = 1/‖(w*, b*/s)‖ of the regularized-bias hard margin."""
    ref = reference_solution(HardMarginPrimal(X, y, bias="regularized", bias_scale=s))
    assert ref.status is Status.OPTIMAL, "the test set must be separable"
    gamma = 1.0 / math.hypot(np.linalg.norm(ref.w), ref.b / s)
    R = math.sqrt(float(np.max((X * X).sum(axis=1))) + s * s)
    return (R / gamma) ** 2, R, gamma


@pytest.mark.parametrize("name", sorted(SEPARABLE))
@pytest.mark.parametrize("s", [1.0, 4.0])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("sparse_input", [False, True])
def test_mistakes_within_novikoff_bound(name, s, shuffle, sparse_input):
    X, y = SEPARABLE[name]
    bound, R, gamma = novikoff_bound(X, y, s)
    Xin = sparse.csr_matrix(X) if sparse_input else X
    problem = HardMarginPrimal(Xin, y, bias="regularized", bias_scale=s)
    r = Perceptron(shuffle=shuffle, seed=1).solve(problem)
    assert r.status is Status.NOT_CERTIFIED
    assert r.info["separated"] and r.info["training_error"] == 0.0
    assert 1 <= r.info["mistakes"] <= bound
    assert r.info["radius"] == pytest.approx(R)
    # a separating unit vector cannot beat the maximal margin
    assert 0.0 < r.info["geometric_margin"] <= gamma * (1 + 1e-7)
    # the certificate: the same classifier at the hard margin's scale, P = 1/(2 γ²) ≥ P*
    assert r.certified and r.primal >= reference_solution(problem).primal * (1 - 1e-7)
    assert r.primal == pytest.approx(0.5 / r.info["geometric_margin"] ** 2, rel=1e-9)


@pytest.mark.parametrize("averaged", [False, True])
def test_overlapping_data_stop_at_max_epochs(averaged):
    problem = HardMarginPrimal(X_OVER, Y_OVER, bias="regularized")
    with pytest.warns(ConvergenceWarning):
        r = Perceptron(max_iter=25, averaged=averaged, trace=False).solve(problem)
    assert r.status is Status.MAX_ITER and r.iterations == 25
    assert not r.info["separated"] and r.info["training_error"] > 0.0
    assert math.isnan(r.info["geometric_margin"])
    assert r.info["mistakes"] >= 25  # at least one correction per epoch, or it would have stopped
    assert r.primal == math.inf and not r.certified


def test_soft_margin_problem_is_judged_by_its_objective():
    problem = SoftMarginPrimal(X_OVER, Y_OVER, C=1.0, bias="none")
    with pytest.warns(ConvergenceWarning):
        r = Perceptron(max_iter=10, trace=False).solve(problem)
    assert r.certified and r.gap >= 0.0
    assert r.primal == pytest.approx(problem.primal_objective(r.w, 0.0))
    assert r.primal > reference_solution(problem).primal
    np.testing.assert_array_equal(r.w, r.info["raw_w"])


@pytest.mark.parametrize("averaged", [False, True])
@pytest.mark.parametrize("bias", ["free", "regularized", "none"])
def test_a_soft_margin_trace_solves_no_qp(monkeypatch, averaged, bias):
    """Issue 13: the perceptron's points are far from the soft-margin optimum, so its trace's
    certificates take the cheap dual point (no QP), each still bracketing P* (Clarabel's)."""
    ds = datasets.load("gaussian:n=2000,d=10,sep=1,seed=0")
    problem = SoftMarginPrimal(ds.X, ds.y, C=1.0, bias=bias)
    P_star = reference_solution(problem).primal
    calls = []
    real = linear_module.maximize_dual_on_subset
    monkeypatch.setattr(
        linear_module,
        "maximize_dual_on_subset",
        lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs),
    )
    with pytest.warns(ConvergenceWarning):
        r = Perceptron(max_iter=20, averaged=averaged, trace="every").solve(problem)
    assert calls == [] and len(r.trace) == 20
    for c in r.trace:
        assert c.dual <= P_star * (1 + 1e-9) and c.primal >= P_star * (1 - 1e-9)


@pytest.mark.parametrize("name", sorted(SEPARABLE))
def test_averaged_perceptron(name):
    X, y = SEPARABLE[name]
    problem = HardMarginPrimal(X, y, bias="regularized")
    plain = Perceptron(trace=False).solve(problem)
    avg = Perceptron(averaged=True, trace=False).solve(problem)
    assert avg.status is Status.NOT_CERTIFIED and avg.info["training_error"] == 0.0
    # the returned point is the average over every example seen, not the last iterate
    T = avg.info["examples_seen"]
    assert T == avg.iterations * y.shape[0]
    ws = numpy_perceptron(X, y, 1.0, 1.0, avg.iterations, keep_all=True)
    np.testing.assert_allclose(avg.info["raw_w"], np.mean(ws, axis=0)[:-1], rtol=1e-10)
    if plain.info["mistakes"] > 1:
        assert not np.allclose(avg.info["raw_w"], plain.info["raw_w"])


@pytest.mark.parametrize("sparse_input", [False, True])
def test_learning_rate_does_not_change_the_mistakes_from_zero(sparse_input):
    X, y = SEPARABLE["gaussian_d10_sep5"]
    Xin = sparse.csr_matrix(X) if sparse_input else X
    problem = HardMarginPrimal(Xin, y, bias="regularized", bias_scale=2.0)
    runs = {mu: Perceptron(learning_rate=mu, trace=False).solve(problem) for mu in (1.0, 0.1, 7.3)}
    assert len({r.info["mistakes"] for r in runs.values()}) == 1
    assert len({r.iterations for r in runs.values()}) == 1
    for mu, r in runs.items():
        np.testing.assert_allclose(r.info["raw_w"], mu * runs[1.0].info["raw_w"], rtol=1e-9)
        # the classifier, hence the judged point, is the same
        np.testing.assert_allclose(r.w, runs[1.0].w, rtol=1e-8)


def test_random_start_is_seeded_and_differs_from_zero():
    X, y = SEPARABLE["gaussian_d10_sep5"]
    problem = HardMarginPrimal(X, y, bias="regularized")
    a = Perceptron(init="random", seed=5, trace=False).solve(problem)
    b = Perceptron(init="random", seed=5, trace=False).solve(problem)
    z = Perceptron(init="zero", trace=False).solve(problem)
    assert a.status is Status.NOT_CERTIFIED
    np.testing.assert_array_equal(a.info["raw_w"], b.info["raw_w"])
    assert not np.allclose(a.info["raw_w"], z.info["raw_w"])


def test_no_bias():
    X, y = SEPARABLE["gaussian_separable"]
    # shift the data so that a hyperplane through 0 separates them: y_i x_i·e_1 > 0
    Xc = X - X.mean(axis=0)
    problem = HardMarginPrimal(Xc, y, bias="none")
    r = Perceptron(trace=False).solve(problem)
    assert r.status is Status.NOT_CERTIFIED and r.b == 0.0
    assert r.w.shape == (X.shape[1],)
    assert np.all(problem.margins(r.w, 0.0) > 0)


# ---- the jitted epoch against a plain NumPy loop -------------------------------------------------
def numpy_perceptron(X, y, mu, s, epochs, *, keep_all=False):
    """The lecture's algorithm on x̃ = (x, s), in order, from zero: the final w̃ or every w̃_t."""
    Xt = np.hstack([X, np.full((len(y), 1), s)])
    w = np.zeros(Xt.shape[1])
    seen = []
    for _ in range(epochs):
        for i in range(len(y)):
            if y[i] * (Xt[i] @ w) <= 0.0:
                w = w + mu * y[i] * Xt[i]
            seen.append(w.copy())
    return np.array(seen) if keep_all else w


def test_jitted_epochs_match_a_numpy_loop():
    X, y = X_OVER[:40], Y_OVER[:40]
    problem = HardMarginPrimal(X, y, bias="regularized", bias_scale=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = Perceptron(max_iter=7, learning_rate=0.3, trace=False).solve(problem)
        ra = Perceptron(max_iter=7, learning_rate=0.3, averaged=True, trace=False).solve(problem)
    ws = numpy_perceptron(X, y, 0.3, 3.0, 7, keep_all=True)
    np.testing.assert_allclose(r.info["raw_w"], ws[-1][:-1], rtol=1e-12, atol=1e-12)
    assert r.info["raw_b"] == pytest.approx(3.0 * ws[-1][-1], rel=1e-12, abs=1e-12)
    mean = ws.mean(axis=0)
    np.testing.assert_allclose(ra.info["raw_w"], mean[:-1], rtol=1e-10, atol=1e-12)
    assert ra.info["raw_b"] == pytest.approx(3.0 * mean[-1], rel=1e-10, abs=1e-12)


# ---- options and problems ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("learning_rate", 0.0, "learning_rate"),
        ("init", "ones", "init"),
        ("averaged", "yes", "averaged"),
        ("shuffle", 1, "shuffle"),
        ("seed", -2, "seed"),
        ("stop_rule", "gap", "stop_rule"),
        ("max_iter", 0, "max_iter"),
    ],
)
def test_bad_options_raise_value_error(option, value, match):
    with pytest.raises(ValueError, match=match):
        Perceptron(**{option: value})


def test_registered():
    assert isinstance(registry.get("perceptron", averaged=True), Perceptron)
    assert "perceptron" in registry.solvers_for(HardMarginPrimal(X_OVER, Y_OVER))


def test_warm_up_for_compiles_the_rows_of_the_problem_only(monkeypatch):
    from svmbench.solvers import perceptron as module

    monkeypatch.setattr(module, "_COMPILED_ROWS", set())
    X, y = BINARY_SETS["gaussian_separable"]
    solver = Perceptron()
    assert solver.warm_up_for(HardMarginPrimal(X, y)) >= 0.0
    assert module._COMPILED_ROWS == {"dense"}
    solver.warm_up_for(SoftMarginPrimal(sparse.csr_matrix(X), y, C=1.0))
    assert module._COMPILED_ROWS == {"dense", "csr"}
