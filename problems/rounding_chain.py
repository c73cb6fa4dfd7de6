"""The rounding allowance of the chain-structured hinge's certificate (problems/structured.py).

``P(w) = ½‖w‖² + Σ_i C_i ℓ_i``, ``ℓ_i`` the loss-augmented Viterbi value minus the truth's score;
``D = γL − ½γ²‖w_s‖²`` at the segment's dual point (``L = Σ C_i Δ(ŷ_i, y_i)``,
``w_s = Σ C_i (Ψ(x_i, y_i) − Ψ(x_i, ŷ_i))``; any labelling ŷ_i and any γ in [0, 1] give a dual
point, so the exact D is that of the computed ones).

**Primal.** An emission score ``x_t·e_s / r`` (+ the loss's ``1/r``) is off by at most
``γ_{d+3}(‖x_t‖ max_s‖e_s‖ + 1)/r``; a labelling's score sums r of them and ``r − 1``
transitions ``T/r``, off by ``γ_{2r}`` of the terms. The float Viterbi maximum is within that of
the exact maximum (rounding is monotone: the float recursion's value is at least the float sum
along any path, at most the float sum along its own), so each ``ℓ_i`` (the augmented maximum and
the truth, both bounded by ``A_i = Σ_t (‖x_t‖ max‖e_s‖ + 1)/r + (r − 1) max|T|/r``) is off by
at most ``2γ_{d+2r+4} A_i``, weighted ``C_i``; ``½‖w‖²`` to ``γ_{p+1}`` and the sum over the
sequences to ``γ_{n+2}`` (Higham 2002, §3.1).

**Dual.** ``L`` to ``γ_{n+2}``; ``w_s`` off in norm by ``δ = γ_{r_max+n+4} Σ_i C_i 2(Σ_t ‖x_t‖/r
+ (r − 1)/r)`` (the joint features' sums of at most r rows, their difference, the weighted sum
over sequences), so ``‖w_s‖²`` by ``2‖w_s‖δ + δ² + γ_{p+1}‖w_s‖²``, times ``½γ²``; ``γ_3`` of
``γL`` and ``½γ²‖w_s‖²`` (they may cancel) and ``γ_4`` of ``|P| + |D|``.
"""

from __future__ import annotations

import math

import numpy as np

from svmbench.problems.rounding import gamma

__all__ = ["chain_rounding"]


def _sequence_sizes(problem):
    """``(Σ_t ‖x_t‖ per sequence, r per sequence, max r)``, computed once per problem (the
    norms rounded up for their own float64 arithmetic)."""
    kept = problem.__dict__.get("rounding_sequence_sizes")
    if kept is None:
        d = problem.X.shape[1]
        norms = np.sqrt(np.einsum("ij,ij->i", problem.X, problem.X)) * (1.0 + gamma(d + 2))
        sums = np.add.reduceat(norms, problem.offsets[:-1]) * (1.0 + gamma(int(norms.size)))
        kept = (sums, problem.lengths.astype(np.float64), int(problem.lengths.max()))
        problem.__dict__["rounding_sequence_sizes"] = kept
    return kept


def chain_rounding(problem, w, losses, L, ws_sq, step, P, D) -> float:
    """The allowance of :class:`~problems.structured.ChainStructuredHinge`'s certificate at
    ``w`` (module docstring): ``losses`` the ``ℓ_i`` as computed, ``L`` and ``ws_sq = ‖w_s‖²``
    the dual point's, ``step`` its γ."""
    if not (math.isfinite(P) and math.isfinite(D)):
        return math.inf
    n, p = problem.n_samples, problem.n_features
    d = problem.X.shape[1]
    C = problem.upper_bounds
    norm_sums, lengths, r_max = _sequence_sizes(problem)
    E, T = problem.split_weights(w)
    e_max = float(np.sqrt(np.max(np.einsum("ij,ij->i", E, E)))) * (1.0 + gamma(d + 2))
    t_max = 0.0 if T is None else float(np.max(np.abs(T)))
    A = (norm_sums * e_max + lengths) / lengths + (lengths - 1.0) * t_max / lengths
    scores = float(C @ (2.0 * gamma(d + 2 * r_max + 4) * A))
    loss_sum = float(C @ np.abs(losses))
    primal = scores + gamma(p + 1) * 0.5 * float(w @ w) + gamma(n + 2) * loss_sum
    mass = 2.0 * float(C @ ((norm_sums + lengths - 1.0) / lengths))
    spread = gamma(r_max + n + 4) * mass
    ws_norm = math.sqrt(max(ws_sq, 0.0))
    quadratic = 2.0 * ws_norm * spread + spread**2 + gamma(p + 1) * ws_sq
    dual = step * gamma(n + 2) * abs(L) + 0.5 * step * step * quadratic
    dual += gamma(3) * (step * abs(L) + 0.5 * step * step * ws_sq)
    return primal + dual + gamma(4) * (abs(P) + abs(D))
