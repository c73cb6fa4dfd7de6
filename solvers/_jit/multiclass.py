"""Jitted epochs of the Crammer–Singer solvers: dual coordinate descent and multiclass SGD.

Variables follow ``problems/multiclass.py``: ``β`` (n, k) with rows on the scaled simplex
``{β_i ≥ 0, Σ_r β_ir = C_i}``, ``w̃_r = Σ_i (C_i 1[y_i = r] − β_ir) x̃_i`` where ``x̃_i = (x_i, s)``
for a regularized bias (``reg = True``) and ``x̃_i = x_i`` otherwise. The weights are stored
transposed, ``Wt`` (d, k) (LIBLINEAR's layout: one contiguous row of k weights per feature), with
the bias weights ``w_{r,b}`` apart in ``wb`` (k,).

Every kernel runs one whole epoch over the examples in an order given by the caller (seeded
permutations: by :func:`solvers._jit.common.shuffle_active` for the dual CD, by NumPy for the
SGD); the rows ``X`` are dense (n, d) or the CSR tuple ``(indptr, indices, data)``, read through
:mod:`solvers._jit.rows` (one body for both; zero entries are skipped, so the iterates agree).
The dual CD epochs visit the examples exactly in that order (the ones shrunk during the epoch
are moved past the active ones at its end), which lets them prefetch the rows of the examples a
few steps ahead: in a random order over a large n the epoch would otherwise wait on main memory
at every example.
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.common import prefetch
from svmbench.solvers._jit.rows import prefetch_row, row_entry, row_span

#: examples ahead of the current one whose rows are prefetched (an epoch visits the examples in
#: random order: without it every example waits on main memory for its rows of X, β, cls)
PREFETCH_AHEAD = 4
#: examples with at most k / GATHER_MAX_ACTIVE active classes get their gradient class by
#: class (the others: all k at once, vectorized over each feature's contiguous k weights)
GATHER_MAX_ACTIVE = 3


@numba.njit(cache=True, inline="always")
def project_scaled_simplex(v, m, radius, out, buf):
    """Euclidean projection of ``v[:m]`` onto ``{u ≥ 0, Σ u = radius}``, written to ``out[:m]``.

    Sort-based (Held, Wolfe & Crowder 1974; the sub-problem solver of Crammer & Singer 2001 and
    Keerthi et al. 2008): with ``u`` the entries sorted in decreasing order,
    ``ρ = max{j : u_j > (Σ_{l≤j} u_l − radius)/j}`` and ``τ = (Σ_{l≤ρ} u_l − radius)/ρ``; the
    projection is ``max(v − τ, 0)``. ``buf`` is scratch of length ≥ m (insertion sort: m = k is
    small).
    """
    for a in range(m):
        x = v[a]
        b = a
        while b > 0 and buf[b - 1] < x:
            buf[b] = buf[b - 1]
            b -= 1
        buf[b] = x
    css = 0.0
    tau = 0.0
    for j in range(m):
        css += buf[j]
        t = (css - radius) / (j + 1)
        if buf[j] > t:
            tau = t
        else:
            break
    for a in range(m):
        d = v[a] - tau
        out[a] = d if d > 0.0 else 0.0


# inlined (numba IR): a call per example with a dozen array arguments costs ~5 % of an epoch
@numba.njit(cache=True, inline="always")
def _cs_dcd_example(
    i, Gf, na, cls, beta, Ci, Ai, wb, s_bias, reg, dW, chg, G, vbuf, newbuf, sortbuf, shrinking
):
    """Shrink, then solve exactly the sub-problem of example i over its ``na`` active classes.

    ``Gf[:k]`` holds ``g_r = Δ(r, y_i) + w̃_r·x̃_i`` for every class on entry (computed over the
    whole contiguous row of ``Wt``: cheaper than gathering the active classes); ``G`` is scratch.
    Returns ``(new_na, violation, nz)``; on return the ``nz`` classes that moved are ``chg[:nz]``
    and ``dW[r] = −δ_r`` for them (the caller adds ``dW[r] x̃_i`` to column r of ``Wt``, then
    zeroes those entries of ``dW``).
    """
    for a in range(na):
        G[a] = Gf[cls[a]]
    # KKT of the sub-problem (the dual is maximized; ∂D/∂β_ir = g_r − w̃_{y_i}·x̃_i): every r
    # with β_ir > 0 must have g_r = max_r' g_r'. violation = maxG − min_{β_ir > 0} g_r.
    min_g = np.inf
    max_g = -np.inf
    for a in range(na):
        r = cls[a]
        if beta[i, r] > 0.0 and G[a] < min_g:
            min_g = G[a]
        if G[a] > max_g:
            max_g = G[a]
    if shrinking:
        # LIBLINEAR's be_shrunk: a class with β_ir = 0 whose g_r is below every supported g
        # would stay at 0; move it past the active end (Keerthi et al. 2008, §4).
        a = 0
        while a < na:
            if beta[i, cls[a]] == 0.0 and G[a] < min_g:
                na -= 1
                tmp = cls[a]
                cls[a] = cls[na]
                cls[na] = tmp
                tg = G[a]
                G[a] = G[na]
                G[na] = tg
            else:
                a += 1
        if na <= 1:
            return na, 0.0, 0
    viol = max_g - min_g
    if viol <= 1e-12:
        return na, viol, 0
    # Sub-problem: max_{β_i ∈ C_i·simplex} Σ_r δ_r g_r − ½ A_i ‖δ‖², δ = β_i^new − β_i, i.e.
    # β_i^new = Proj(β_i + g / A_i)  ([Keerthi08] eq. (7); [CS01] Fig. 2).
    for a in range(na):
        vbuf[a] = beta[i, cls[a]] + G[a] / Ai
    project_scaled_simplex(vbuf, na, Ci, newbuf, sortbuf)
    # w̃_r = Σ_i (C_i 1[y_i = r] − β_ir) x̃_i, so Δw̃_r = −δ_r x̃_i
    nz = 0
    for a in range(na):
        r = cls[a]
        d = newbuf[a] - beta[i, r]
        if d != 0.0:
            beta[i, r] = newbuf[a]
            dW[r] = -d
            chg[nz] = r
            nz += 1
            if reg:
                wb[r] -= d * s_bias
    return na, viol, nz


@numba.njit(cache=True, no_cfunc_wrapper=True)
def cs_dcd_epoch(
    X, y, C, costT, A, s_bias, reg, beta, Wt, wb, index, active_size, active_i, cls, shrinking,
    work, ints,
):  # fmt: skip
    """One epoch of the sequential dual method for Crammer–Singer (Keerthi et al. 2008, Alg. 1;
    LIBLINEAR's ``Solver_MCSVM_CS``) over the first ``active_size`` entries of ``index``.

    Parameters
    ----------
    X : dense rows (n, d), C-contiguous float64, or the CSR tuple ``(indptr, indices, data)``
    y : int64 (n,)
    C : float64 (n,), the simplex radii ``C_i``
    costT : float64 (k, k), C-contiguous, ``costT[y, r] = Δ(r, y)`` (the cost matrix
        transposed: ``costT[y_i]`` is contiguous)
    A : float64 (n,), ``A_i = ‖x̃_i‖²``
    s_bias, reg : the bias feature's value and whether it is present
    beta, Wt, wb : the variables, updated in place
    index : int64 (n,), examples in the order to visit (active ones first)
    active_size : int, number of active examples
    active_i : int64 (n,), number of active classes of each example
    cls : int64 (n, k), the classes of each example, active ones first
    shrinking : bool
    work : float64 (6, k), ints : int64 (k + n,)
        Scratch (:func:`cs_dcd_scratch`): the epoch allocates nothing, which also spares a
        first compilation NumPy's allocators and the transpose's copy.

    Returns
    -------
    active_size : int
        The new number of active examples (examples with ≤ 1 active class are moved past it).
    stopping : float
        ``max_i (max_r g_ir − min_{r: β_ir > 0} g_ir)`` over the examples visited (LIBLINEAR's
        stopping quantity; 0 at the optimum of the active problem).
    """
    k = costT.shape[0]
    Gf, dW, G, vbuf, newbuf, sortbuf = work[0], work[1], work[2], work[3], work[4], work[5]
    for r in range(k):
        dW[r] = 0.0  # zero on entry; each example leaves it zero
    chg = ints[:k]
    stopping = -np.inf
    # the examples are visited in the order of index[:active_size]; the ones that stay active
    # are compacted to the front (keep), the shrunk ones go after them in visiting order
    shrunk = ints[k:]
    keep = 0
    n_shrunk = 0
    for s in range(active_size):
        if s + PREFETCH_AHEAD < active_size:
            nx = index[s + PREFETCH_AHEAD]
            prefetch_row(X, nx)
            prefetch(beta, nx * k)
            prefetch(beta, (nx + 1) * k - 1)
            prefetch(cls, nx * k)
            prefetch(cls, (nx + 1) * k - 1)
            prefetch(A, nx)
            prefetch(C, nx)
            prefetch(y, nx)
            prefetch(active_i, nx)
        i = index[s]
        Ai = A[i]
        if Ai <= 0.0 or C[i] <= 0.0:
            index[keep] = i
            keep += 1
            continue
        yi = y[i]
        p0, p1 = row_span(X, i)
        # g_r = Δ(r, y_i) + w̃_r·x̃_i over the active classes; with many, over all k at once:
        # one pass over x_i, each feature's k weights contiguous in Wt
        na = active_i[i]
        if GATHER_MAX_ACTIVE * na <= k:  # few active classes: theirs only, one at a time
            for a in range(na):
                r = cls[i, a]
                g = costT[yi, r]
                if reg:
                    g += wb[r] * s_bias
                for p in range(p0, p1):
                    j, xj = row_entry(X, i, p)
                    if xj != 0.0:
                        g += Wt[j, r] * xj
                Gf[r] = g
        else:
            for r in range(k):
                Gf[r] = costT[yi, r]
            if reg:
                for r in range(k):
                    Gf[r] += wb[r] * s_bias
            for p in range(p0, p1):
                j, xj = row_entry(X, i, p)
                if xj != 0.0:
                    for r in range(k):
                        Gf[r] += Wt[j, r] * xj
        na, viol, nz = _cs_dcd_example(
            i, Gf, na, cls[i], beta, C[i], Ai, wb, s_bias, reg, dW, chg, G, vbuf,
            newbuf, sortbuf, shrinking,
        )  # fmt: skip
        if nz > 0:
            # Wt[j] += x_ij dW: over the whole contiguous row (vectorized) when many classes
            # moved, over the moved ones only otherwise
            if 2 * nz > k:
                for p in range(p0, p1):
                    j, xj = row_entry(X, i, p)
                    if xj != 0.0:
                        for r in range(k):
                            Wt[j, r] += dW[r] * xj
            else:
                for p in range(p0, p1):
                    j, xj = row_entry(X, i, p)
                    if xj != 0.0:
                        for m in range(nz):
                            r = chg[m]
                            Wt[j, r] += dW[r] * xj
            for m in range(nz):
                dW[chg[m]] = 0.0
        active_i[i] = na
        if na <= 1:
            shrunk[n_shrunk] = i
            n_shrunk += 1
            continue
        if viol > stopping:
            stopping = viol
        index[keep] = i
        keep += 1
    for t in range(n_shrunk):  # a loop: a slice assigned from an array compiles a message formatter
        index[keep + t] = shrunk[t]
    return keep, stopping


def cs_dcd_scratch(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(work, ints)`` of :func:`cs_dcd_epoch` for n examples and k classes."""
    return np.zeros((6, k)), np.zeros(k + n, dtype=np.int64)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def cs_sgd_epoch(X, y, weight, cost, s_bias, reg, lam, order, t0, U, Ub, V, Vb, H):
    """One epoch of the lecture's SGD for the multiclass SVM (Shalev-Shwartz & Ben-David 2014,
    §17.2.5), over the examples in ``order`` (``X``: dense rows or the CSR tuple).

    The lecture's iteration ``w⁽ᵗ⁺¹⁾ = (1 − 1/t) w⁽ᵗ⁾ − (1/(2λt)) u_t`` with
    ``u_t = weight_i [Ψ(x_i, ŷ) − Ψ(x_i, y_i)]`` and
    ``ŷ = argmax_r Δ(r, y_i) + ⟨w⁽ᵗ⁾, Ψ(x_i, r) − Ψ(x_i, y_i)⟩`` unrolls (w⁽¹⁾ = 0) to
    ``w⁽ᵗ⁺¹⁾ = −U_t / (2λt)`` with ``U_t = Σ_{s≤t} u_s``: only the sum ``U`` (k × d, two rows
    touched per step) is stored. The average of the iterates ``w⁽¹⁾ … w⁽ᵀ⁺¹⁾`` is
    ``Σ_{t=1}^{T+1} w⁽ᵗ⁾ / (T+1) = −(H_T U_T − V_T) / (2λ(T+1))`` with ``H_t = Σ_{s≤t} 1/s`` and
    ``V_t = Σ_{s≤t} H_{s−1} u_s`` (since ``Σ_{m≤T} U_m/m = Σ_s u_s (H_T − H_{s−1})``), also
    updated two rows at a time.

    ``U, V`` are stored transposed (d, k) and ``Ub, Vb`` (k,) hold the bias feature's column.
    ``t0`` is the number of steps already done, ``H[0]`` holds ``H_{t0}``. Returns the new t.
    """
    k = cost.shape[0]
    t = t0
    z = np.empty(k)
    for p in range(order.shape[0]):
        i = order[p]
        t += 1
        yi = y[i]
        p0, p1 = row_span(X, i)
        # scores of w⁽ᵗ⁾ = −U_{t−1}/(2λ(t−1)) (w⁽¹⁾ = 0: every score 0)
        for r in range(k):
            z[r] = Ub[r] * s_bias if reg else 0.0
        for q in range(p0, p1):
            j, xj = row_entry(X, i, q)
            if xj != 0.0:
                for r in range(k):
                    z[r] += U[j, r] * xj
        scale = -1.0 / (2.0 * lam * (t - 1)) if t > 1 else 0.0
        zy = z[yi] * scale
        best = yi
        best_val = 0.0
        for r in range(k):
            val = cost[r, yi] + z[r] * scale - zy
            if val > best_val:
                best_val = val
                best = r
        h_prev = H[0]  # H_{t−1}
        if best != yi and weight[i] > 0.0:
            c = weight[i]
            # u_t = c (Ψ(x, ŷ) − Ψ(x, y)): +c x in row ŷ, −c x in row y
            for q in range(p0, p1):
                j, xj = row_entry(X, i, q)
                if xj != 0.0:
                    U[j, best] += c * xj
                    U[j, yi] -= c * xj
                    V[j, best] += h_prev * c * xj
                    V[j, yi] -= h_prev * c * xj
            if reg:
                Ub[best] += c * s_bias
                Ub[yi] -= c * s_bias
                Vb[best] += h_prev * c * s_bias
                Vb[yi] -= h_prev * c * s_bias
        H[0] = h_prev + 1.0 / t
    return t
