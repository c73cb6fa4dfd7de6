"""The Ranking SVM (Joachims 2002) as a bias-free binary SVM on symmetrized difference vectors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems.ranking import (
    difference_vectors,
    pairwise_accuracy,
    preference_pairs,
    ranking_problem,
    synthetic_ranking,
)
from svmbench.solvers import Status, registry
from svmbench.solvers._reference import reference_solution

CHANCE = 0.5
MARGIN_OVER_CHANCE = 0.25  # held-out pairwise accuracy must exceed 0.75


@pytest.fixture(scope="module")
def ranking_sets():
    X, qid, rel, w_true = synthetic_ranking(40, 8, 5, noise=0.3, seed=0)
    train = qid < 20  # queries 0..19 train, 20..39 test: held-out pairs of unseen queries
    tr = np.flatnonzero(train)
    te = np.flatnonzero(~train)
    return (
        (X[tr], preference_pairs(qid[tr], rel[tr])),
        (X[te], preference_pairs(qid[te], rel[te])),
        w_true,
    )


def test_pairs_and_differences():
    qid = np.array([0, 0, 0, 1, 1])
    rel = np.array([2, 0, 1, 0, 1])
    pairs = preference_pairs(qid, rel)
    assert sorted(map(tuple, pairs)) == [(0, 1), (0, 2), (2, 1), (4, 3)]
    X = np.arange(10.0).reshape(5, 2) ** 2
    np.testing.assert_array_equal(difference_vectors(X, pairs), X[pairs[:, 0]] - X[pairs[:, 1]])
    np.testing.assert_array_equal(
        difference_vectors(sparse.csr_matrix(X), pairs).toarray(), X[pairs[:, 0]] - X[pairs[:, 1]]
    )


def test_symmetrized_problem_is_the_ranking_svm(ranking_sets):
    (X, pairs), _, _ = ranking_sets
    problem = ranking_problem(X, pairs, C=1.0)
    assert problem.bias == "none" and problem.n_samples == 2 * len(pairs)
    assert set(np.unique(problem.y)) == {-1.0, 1.0}
    ref = reference_solution(problem)
    # the optimum of the symmetrized SVM minimizes the Ranking SVM objective itself
    D = difference_vectors(X, pairs)

    def ranking_objective(a):
        return 0.5 * a @ a + 1.0 * np.maximum(0.0, 1.0 - D @ a).sum()

    assert ranking_objective(ref.w) == pytest.approx(ref.primal, rel=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert ranking_objective(ref.w + 1e-3 * rng.normal(size=ref.w.size)) >= ref.primal


@pytest.mark.parametrize("solver", ["clarabel", "osqp"])
def test_learned_ranking_beats_chance_on_held_out_pairs(ranking_sets, solver):
    (X, pairs), (X_te, pairs_te), w_true = ranking_sets
    res = registry.get(solver).solve(ranking_problem(X, pairs, C=1.0))
    assert res.status is Status.OPTIMAL and res.certified
    acc = pairwise_accuracy(res.w, X_te, pairs_te)
    assert acc >= CHANCE + MARGIN_OVER_CHANCE
    assert pairwise_accuracy(w_true, X_te, pairs_te) >= acc - 0.1  # the truth does about as well
    assert pairwise_accuracy(-res.w, X_te, pairs_te) <= 1 - acc + 1e-12  # and the order matters
    cos = res.w @ w_true / np.linalg.norm(res.w)
    assert cos >= 0.9  # the learned direction is the true one


def test_input_checks():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="pairs must have shape"):
        ranking_problem(X, np.array([0, 1]))
    with pytest.raises(ValueError, match="index rows"):
        ranking_problem(X, np.array([[0, 3]]))
    with pytest.raises(ValueError, match="two different rows"):
        ranking_problem(X, np.array([[1, 1]]))
    with pytest.raises(TypeError, match="integer"):
        pairwise_accuracy(np.ones(2), X, np.array([[0.0, 1.0]]))
