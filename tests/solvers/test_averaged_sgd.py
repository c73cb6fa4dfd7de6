"""The averaged SGD base of ``cs_sgd`` and ``ssvm_sgd``: the three averages against the lecture's
iteration written in plain NumPy, and the suffix window against differences of uniform sums."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from svmbench.problems import MulticlassHinge
from svmbench.problems.scaling import lambda_from_C
from svmbench.problems.structured import ChainStructuredHinge, digit_sequences
from svmbench.solvers import registry
from svmbench.solvers._averaged_sgd import AveragedSGD
from svmbench.solvers.base import ConvergenceWarning

EPOCHS = 3


def _solve(name, problem, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return registry.get(name, **options).solve(problem)


def _lecture_cs_sgd(problem, epochs, sampling, seed):
    """Every iterate w⁽¹⁾ = 0, w⁽²⁾, … of the lecture's SGD on ``problem`` (W̃ as (k, d+1)),
    and the epoch each one ends."""
    n, k = problem.n_samples, problem.n_classes
    s = problem.bias_scale
    Xt = np.hstack([problem.X, np.full((n, 1), s)])
    sw = problem.upper_bounds / problem.C
    lam = lambda_from_C(problem.C, n, form="multiclass_lecture")
    rng = np.random.default_rng(seed)
    w = np.zeros((k, Xt.shape[1]))
    iterates, epoch_of = [w], [0]
    step = 0
    for e in range(1, epochs + 1):
        order = rng.permutation(n) if sampling == "permutation" else rng.integers(0, n, size=n)
        for i in order:
            step += 1
            yi = problem.y[i]
            z = problem.cost[:, yi] + w @ Xt[i] - w[yi] @ Xt[i]
            yhat = int(np.argmax(z)) if z.max() > 0 else yi
            u = np.zeros_like(w)
            u[yhat] += sw[i] * Xt[i]
            u[yi] -= sw[i] * Xt[i]
            w = (1 - 1 / step) * w - u / (2 * lam * step)
            iterates.append(w)
            epoch_of.append(e)
    return np.array(iterates), np.array(epoch_of)


@pytest.mark.parametrize("sampling", ["permutation", "uniform"])
@pytest.mark.parametrize("averaging", ["uniform", "suffix", "last"])
def test_cs_sgd_averages_match_the_lecture(rng, averaging, sampling):
    n, d, k = 15, 3, 3
    X = rng.normal(size=(n, d))
    y = np.arange(n) % k
    problem = MulticlassHinge(
        X, y, C=0.7, bias="regularized", sample_weight=rng.uniform(0.5, 2.0, size=n)
    )
    res = _solve("cs_sgd", problem, max_iter=EPOCHS, averaging=averaging, sampling=sampling)
    iterates, epoch_of = _lecture_cs_sgd(problem, EPOCHS, sampling, seed=0)
    if averaging == "uniform":
        expected = iterates.mean(axis=0)
    elif averaging == "last":
        expected = iterates[-1]
    else:  # the iterates made in the last ⌈E/2⌉ epochs
        expected = iterates[epoch_of > EPOCHS - math.ceil(EPOCHS / 2)].mean(axis=0)
    np.testing.assert_allclose(res.W, expected[:, :-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.b, problem.bias_scale * expected[:, -1], rtol=1e-9, atol=1e-12)
    assert res.info["steps"] == n * EPOCHS


@pytest.mark.parametrize("transitions", [True, False])
def test_ssvm_sgd_suffix_is_a_difference_of_uniform_sums(transitions):
    """After 2 epochs the suffix window is epoch 2: its average is (S₂ − S₁)/(t₂ − t₁) with
    ``S_E`` the uniform sum of the t_E + 1 iterates after E epochs (same seed, same draws)."""
    data = digit_sequences(8, 1, min_length=3, max_length=4, noise=0.5, seed=0)
    problem = ChainStructuredHinge(
        data.X, data.y, data.lengths, n_states=10, C=0.1, transitions=transitions
    )
    one = _solve("ssvm_sgd", problem, max_iter=1, averaging="uniform")
    two = _solve("ssvm_sgd", problem, max_iter=2, averaging="uniform")
    suffix = _solve("ssvm_sgd", problem, max_iter=2)  # the default averaging
    last = _solve("ssvm_sgd", problem, max_iter=2, averaging="last")
    t1, t2 = one.info["steps"], two.info["steps"]
    assert (t1, t2) == (problem.n_samples, 2 * problem.n_samples)
    expected = (two.w * (t2 + 1) - one.w * (t1 + 1)) / (t2 - t1)
    np.testing.assert_allclose(suffix.w, expected, rtol=1e-9, atol=1e-12)
    assert not np.allclose(last.w, suffix.w)  # the three averages differ


def test_options_are_checked_by_the_base():
    for name in ("cs_sgd", "ssvm_sgd"):
        cls = registry.get(name).__class__
        assert issubclass(cls, AveragedSGD)
        with pytest.raises(ValueError, match="averaging"):
            cls(averaging="median")
        with pytest.raises(ValueError, match="sampling"):
            cls(sampling="cyclic")
        with pytest.raises(ValueError, match="seed"):
            cls(seed=-1)
    assert registry.get("cs_sgd").averaging == "uniform"
    assert registry.get("ssvm_sgd").averaging == "suffix"
