"""Chain structured SVM: exact Viterbi decoding, the stochastic subgradient solver, and the
value of the transition features on Markov sequences of handwritten digits."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems.chain_decoding import brute_force_decode, viterbi
from svmbench.problems.structured import ChainStructuredHinge, digit_sequences
from svmbench.solvers import Status, registry
from svmbench.solvers._jit import structured as jit
from svmbench.solvers.base import ConvergenceWarning

EPOCHS = 30


@pytest.fixture(scope="module")
def data():
    return digit_sequences(60, 80, min_length=3, max_length=6, noise=0.5, seed=0)


@pytest.mark.parametrize("r", [1, 2, 3, 5])
def test_viterbi_equals_brute_force(rng, r):
    q = 4
    out = np.empty(r, dtype=np.int64)
    for _ in range(20):
        S, T = rng.normal(size=(r, q)), rng.normal(size=(q, q))
        y_bf, v_bf = brute_force_decode(S, T)
        y_np, v_np = viterbi(S, T)
        v_jit = jit.viterbi(S, T, True, out)
        assert v_np == pytest.approx(v_bf, abs=1e-12) and v_jit == pytest.approx(v_bf, abs=1e-12)
        np.testing.assert_array_equal(y_np, y_bf)
        np.testing.assert_array_equal(out, y_bf)
        _, v0 = brute_force_decode(S, None)
        assert viterbi(S, None)[1] == pytest.approx(v0) and jit.viterbi(
            S, T, False, out
        ) == pytest.approx(v0)


def test_loss_augmented_decoding_equals_enumeration(rng):
    """ŷ maximizes Δ(y', y) + ⟨w, Ψ(x, y')⟩ over all q^r labellings; jit and NumPy agree."""
    X = rng.normal(size=(9, 3))
    y = rng.integers(0, 3, size=9)
    problem = ChainStructuredHinge(X, y, np.array([4, 5]), n_states=3)
    w = rng.normal(size=problem.n_features)
    E, T = problem.split_weights(w)
    out = np.empty(9, dtype=np.int64)
    for i in range(2):
        x, yi = problem.sequence(i)
        r = len(yi)
        yhat, loss = problem.loss_augmented_decode(w, i)
        best = max(
            np.mean(np.array(c) != yi)
            + w @ (problem.joint_feature(x, np.array(c)) - problem.joint_feature(x, yi))
            for c in np.ndindex(*(3,) * r)
        )
        assert loss == pytest.approx(best, abs=1e-12)
        a, b = problem.offsets[i], problem.offsets[i + 1]
        jl = jit.loss_augmented_decode(
            X, problem.y, a, b, np.ascontiguousarray(E), np.ascontiguousarray(T), True, 1.0, out
        )
        assert jl == pytest.approx(loss, abs=1e-12)
        np.testing.assert_array_equal(out[:r], yhat)


def test_joint_feature_scores_match_decoder(rng):
    X = rng.normal(size=(5, 2))
    problem = ChainStructuredHinge(X, np.array([0, 1, 1, 2, 0]), np.array([5]))
    w = rng.normal(size=problem.n_features)
    yhat = problem.decode(w, X)
    S, T = problem._scores(w, X)
    assert w @ problem.joint_feature(X, yhat) == pytest.approx(viterbi(S, T)[1])


def test_ssvm_sgd_decreases_and_certifies(data):
    problem = ChainStructuredHinge(data.X, data.y, data.lengths, n_states=10, C=0.1)
    with pytest.warns(ConvergenceWarning):
        res = registry.get("ssvm_sgd", max_iter=EPOCHS, stop_rule="gap", tol=1e-12).solve(problem)
        again = registry.get("ssvm_sgd", max_iter=EPOCHS, stop_rule="gap", tol=1e-12).solve(problem)
    assert (
        res.status is Status.MAX_ITER and res.iterations == EPOCHS
    )  # a loose bound never meets 1e-12
    assert res.certified and 0 <= res.gap
    primals = [c.primal for c in res.trace]
    assert primals[-1] < primals[0]
    # the gap bounds the suboptimality: P(w) − D ≥ P(w) − P*, D ≤ P* ≤ P(w) for every w seen
    assert max(c.dual for c in res.trace) <= min(primals) * (1 + 1e-12)
    assert again.primal == res.primal


@pytest.mark.filterwarnings("ignore::solvers.base.ConvergenceWarning")
def test_chain_model_beats_per_position_model(data):
    """On held-out Markov sequences the transition features lower the Hamming error."""
    errors = {}
    for transitions in (True, False):
        problem = ChainStructuredHinge(
            data.X, data.y, data.lengths, n_states=10, C=0.1, transitions=transitions
        )
        res = registry.get("ssvm_sgd", max_iter=EPOCHS, trace=False).solve(problem)
        pred = problem.predict(res.w, data.X_test, data.lengths_test)
        errors[transitions] = problem.hamming_error(pred, data.y_test)
    assert errors[True] <= errors[False]
    assert errors[True] < 0.5  # far better than chance (0.9) on 10 digits


def test_input_checks():
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="lengths"):
        ChainStructuredHinge(X, np.zeros(4, dtype=int), np.array([2, 1]))
    with pytest.raises(ValueError, match="integer"):
        ChainStructuredHinge(X, np.zeros(4), np.array([4]))
    with pytest.raises(TypeError, match="ssvm_sgd"):
        from svmbench.problems import MulticlassHinge

        registry.get("ssvm_sgd").solve(MulticlassHinge(X, np.array([0, 1, 0, 1])))
