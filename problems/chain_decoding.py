"""Exact decoding of chain-structured outputs: :func:`viterbi`, the dynamic programme that both
the chain model (:class:`~svmbench.problems.models.ChainModel`, prediction) and the problem
(:class:`~svmbench.problems.structured.ChainStructuredHinge`, loss-augmented decoding) call,
and :func:`brute_force_decode`, the enumeration the tests check it against.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["brute_force_decode", "viterbi"]


def viterbi(S: np.ndarray, T: np.ndarray | None) -> tuple[np.ndarray, float]:
    """``argmax_y Σ_t S[t, y_t] + Σ_{t≥2} T[y_t, y_{t−1}]`` and its value (NumPy; ties go to the
    smallest state). ``T=None``: no transitions (independent argmax per position)."""
    r, q = S.shape
    M = S[0].copy()
    back = np.zeros((r, q), dtype=np.int64)
    for t in range(1, r):
        cand = M[None, :] + (T if T is not None else np.zeros((q, q)))  # M[s'] + T[s, s']
        back[t] = np.argmax(cand, axis=1)
        M = cand[np.arange(q), back[t]] + S[t]
    y = np.empty(r, dtype=np.int64)
    y[-1] = int(np.argmax(M))
    for t in range(r - 1, 0, -1):
        y[t - 1] = back[t, y[t]]
    return y, float(M[y[-1]])


def brute_force_decode(S: np.ndarray, T: np.ndarray | None) -> tuple[np.ndarray, float]:
    """The same maximum by enumerating all ``q^r`` labellings (tests only; tiny r)."""
    r, q = S.shape
    best, arg = -np.inf, None
    for labels in itertools.product(range(q), repeat=r):
        y = np.array(labels)
        v = S[np.arange(r), y].sum()
        if T is not None:
            v += T[y[1:], y[:-1]].sum()
        if v > best:
            best, arg = v, y
    return arg, float(best)
