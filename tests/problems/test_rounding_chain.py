"""The chain-structured hinge's rounding allowance (problems/rounding_chain.py; issue 25: nothing
may weaken a certificate or a status).

At C = 1e6 the float64 gap differs from the same gap computed in long double (the scores, a
Viterbi maximum and the dual point's joint features, all in long double, at the labellings the
certificate took); the allowance must cover the difference and stay below 1e-6 of |P|."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems.structured import ChainStructuredHinge, digit_sequences

LONG = np.longdouble
needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is float64 here: no more precise reference",
)


def _best(S, T):
    """``max_y Σ_t S[t, y_t] + Σ_{t≥2} T[y_t, y_{t−1}]`` in S's dtype (Viterbi's recursion)."""
    M = S[0].copy()
    for t in range(1, S.shape[0]):
        cand = M[None, :] + (T if T is not None else np.zeros((S.shape[1],) * 2, dtype=S.dtype))
        M = cand.max(axis=1) + S[t]
    return M.max()


def _joint(problem, x, labels):
    r, q = x.shape[0], problem.n_states
    E = np.zeros((q, x.shape[1]), dtype=LONG)
    np.add.at(E, labels, x)
    parts = [E.ravel() / r]
    if problem.transitions:
        T = np.zeros((q, q), dtype=LONG)
        np.add.at(T, (labels[1:], labels[:-1]), LONG(1))
        parts.append(T.ravel() / r)
    return np.concatenate(parts)


def _exact_gap(problem, w, cert) -> LONG:
    """``P(w) − D`` in long double: the exact loss-augmented maxima, and the dual point of the
    certificate's labellings ŷ_i (the float64 decoder's, deterministic) and step γ."""
    wL = np.asarray(w, dtype=LONG)
    q, d = problem.n_states, problem.X.shape[1]
    E = wL[: q * d].reshape(q, d)
    T = wL[q * d :].reshape(q, q) if problem.transitions else None
    C = problem.upper_bounds.astype(LONG)
    P, L = (wL @ wL) / 2, LONG(0)
    ws = np.zeros_like(wL)
    for i in range(problem.n_samples):
        x, yi = problem.sequence(i)
        xL, r = np.asarray(x, dtype=LONG), x.shape[0]
        S = (xL @ E.T) / r
        Tr = None if T is None else T / r
        truth = S[np.arange(r), yi].sum() + (0 if Tr is None else Tr[yi[1:], yi[:-1]].sum())
        augmented = S + LONG(1) / r
        augmented[np.arange(r), yi] -= LONG(1) / r
        P += C[i] * max(_best(augmented, Tr) - truth, LONG(0))
        yhat, _ = problem.loss_augmented_decode(w, i)
        wrong = int(np.sum(yhat != yi))
        if wrong:
            L += C[i] * LONG(wrong) / r
            ws += C[i] * (_joint(problem, xL, yi) - _joint(problem, xL, yhat))
    step = LONG(cert.residuals["dual_step"])
    return P - (step * L - step * step * (ws @ ws) / 2)


@pytest.fixture(scope="module")
def sequences():
    return digit_sequences(12, 2, min_length=3, max_length=6, seed=4)


def _points(problem):
    """A random w, and one scaled so that most sequences have a loss near the augmented
    maximum's ties (small scores)."""
    rng = np.random.default_rng(1)
    w = rng.normal(size=problem.n_features)
    return [0.3 * w, 1e-3 * w]


@needs_long_double
@pytest.mark.parametrize("transitions", [True, False])
def test_the_allowance_covers_the_exact_gap_at_large_C(sequences, transitions):
    data = sequences
    problem = ChainStructuredHinge(data.X, data.y, data.lengths, C=1e6, transitions=transitions)
    differ = 0
    for w in _points(problem):
        cert = problem.certificate(w=w)
        assert cert.certified
        diff = abs(float(LONG(cert.gap) - _exact_gap(problem, w, cert)))
        differ += diff > 0.0
        assert diff <= cert.rounding
        assert cert.rounding <= 1e-6 * max(1.0, abs(cert.primal))
    assert differ  # float64 loses digits here: without the allowance the bound fails


def test_an_ordinary_allowance_is_small(sequences):
    data = sequences
    problem = ChainStructuredHinge(data.X, data.y, data.lengths, C=1.0)
    for w in _points(problem):
        cert = problem.certificate(w=w)
        assert cert.certified
        assert 0.0 < cert.rounding <= 1e-11 * max(1.0, abs(cert.primal))
