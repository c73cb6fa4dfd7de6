"""Jitted Viterbi decoding and the stochastic subgradient epoch of the chain structured SVM.

Model (``problems/structured.py``): a sequence ``x = (x_1, …, x_r)`` of feature vectors and labels
``y = (y_1, …, y_r)`` in ``0..q−1``; emission weights ``E`` (q, d) and transition weights ``T``
(q, q), ``T[s, s']`` scoring "state s follows state s'". The score of a labelling is
``⟨w, Ψ(x, y)⟩ = (1/r) [Σ_t E[y_t]·x_t + Σ_{t≥2} T[y_t, y_{t−1}]]`` (the lecture's features of
type 1 and 2, with its 1/r). Sequences are stored concatenated: rows ``offsets[i]:offsets[i+1]``.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, no_cfunc_wrapper=True)
def viterbi(S, T, use_T, out):
    """``argmax_y Σ_t S[t, y_t] + Σ_{t≥2} T[y_t, y_{t−1}]`` by dynamic programming (Viterbi 1967;
    the lecture's ``M_{s,τ} = max_{s'} (M_{s',τ−1} + ⟨w, φ(x, s, s')⟩)`` with back-pointers I).

    ``S`` (r, q) holds the per-position scores (already scaled, loss-augmented if wanted);
    ``use_T`` False drops the transitions. Writes the labels to ``out[:r]``; returns the
    maximum. Ties go to the smallest state.
    """
    r, q = S.shape
    M = np.empty((r, q))
    Ib = np.zeros((r, q), dtype=np.int64)
    for s in range(q):
        M[0, s] = S[0, s]
    for t in range(1, r):
        for s in range(q):
            best = -np.inf
            arg = 0
            for sp in range(q):
                v = M[t - 1, sp]
                if use_T:
                    v += T[s, sp]
                if v > best:
                    best = v
                    arg = sp
            M[t, s] = best + S[t, s]
            Ib[t, s] = arg
    best = -np.inf
    arg = 0
    for s in range(q):
        if M[r - 1, s] > best:
            best = M[r - 1, s]
            arg = s
    out[r - 1] = arg
    for t in range(r - 1, 0, -1):
        out[t - 1] = Ib[t, out[t]]
    return best


@numba.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def sequence_scores(X, start, stop, E, scale, S):
    """``S[t, s] = scale · E[s]·x_{start+t}`` for the positions of one sequence."""
    q, d = E.shape
    for t in range(stop - start):
        for s in range(q):
            acc = 0.0
            for j in range(d):
                acc += E[s, j] * X[start + t, j]
            S[t, s] = scale * acc


@numba.njit(cache=True, no_cfunc_wrapper=True)
def loss_augmented_decode(X, y, start, stop, E, T, use_T, scale, out):
    """``ŷ = argmax_{y'} Δ(y', y) + ⟨w, Ψ(x, y')⟩`` with the normalized Hamming loss
    ``Δ(y', y) = (1/r) Σ_t 1[y'_t ≠ y_t]``: Viterbi on scores augmented by 1/r off the truth.

    ``E, T`` are multiplied by ``scale`` (the SGD's ``−1/(2λ(t−1))``); returns
    ``max_{y'} Δ(y', y) + ⟨w, Ψ(x, y') − Ψ(x, y)⟩ ≥ 0`` (the structured hinge loss).
    """
    r = stop - start
    q = E.shape[0]
    S = np.empty((r, q))
    sequence_scores(X, start, stop, E, scale / r, S)
    truth = 0.0
    for t in range(r):
        truth += S[t, y[start + t]]
        if use_T and t > 0:
            truth += scale * T[y[start + t], y[start + t - 1]] / r
        for s in range(q):
            if s != y[start + t]:
                S[t, s] += 1.0 / r
    Ts = np.empty((q, q))
    for a in range(q):
        for b in range(q):
            Ts[a, b] = scale * T[a, b] / r
    best = viterbi(S, Ts, use_T, out)
    return best - truth


@numba.njit(cache=True, no_cfunc_wrapper=True)
def ssvm_sgd_epoch(X, y, offsets, use_T, weight, lam, order, t0, UE, UT, VE, VT, H):
    """One epoch of the stochastic subgradient method on ``λ‖w‖² + (1/n) Σ_i sw_i ℓ_i(w)``
    (the lecture's SGD for the multiclass SVM, with ŷ found by loss-augmented Viterbi).

    As in :func:`solvers._jit.multiclass.cs_sgd_epoch`, ``w⁽ᵗ⁺¹⁾ = −U_t/(2λt)`` with
    ``U_t = Σ_{s≤t} u_s``, ``u_s = sw_i [Ψ(x_i, ŷ) − Ψ(x_i, y_i)]`` and the running
    ``V_t = Σ_{s≤t} H_{s−1} u_s`` for the average; ``H[0]`` holds ``H_{t0}``. Returns the new t.
    """
    d = UE.shape[1]
    t = t0
    yhat = np.empty(y.shape[0], dtype=np.int64)
    for p in range(order.shape[0]):
        i = order[p]
        t += 1
        start, stop = offsets[i], offsets[i + 1]
        r = stop - start
        scale = -1.0 / (2.0 * lam * (t - 1)) if t > 1 else 0.0
        loss = loss_augmented_decode(X, y, start, stop, UE, UT, use_T, scale, yhat)
        h_prev = H[0]
        c = weight[i] / r
        if loss > 0.0 and c > 0.0:
            for tt in range(r):
                a = yhat[tt]
                b = y[start + tt]
                if a != b:
                    for j in range(d):
                        xj = X[start + tt, j]
                        UE[a, j] += c * xj
                        UE[b, j] -= c * xj
                        VE[a, j] += h_prev * c * xj
                        VE[b, j] -= h_prev * c * xj
                if use_T and tt > 0:
                    a0 = yhat[tt - 1]
                    b0 = y[start + tt - 1]
                    if a != b or a0 != b0:
                        UT[a, a0] += c
                        UT[b, b0] -= c
                        VT[a, a0] += h_prev * c
                        VT[b, b0] -= h_prev * c
        H[0] = h_prev + 1.0 / t
    return t
