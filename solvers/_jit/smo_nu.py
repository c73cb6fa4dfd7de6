"""The ν variant of SMO's pair loop: two equalities, pairs within one sign group.

The general dual (:mod:`problems.general_dual`) with ``equality="nu"``::

    min_α  ½ αᵀQα + pᵀα   s.t.  0 ≤ α_t ≤ u_t,   Σ_{z_t=+1} α_t = Δ₊,   Σ_{z_t=−1} α_t = Δ₋

A pair update keeps both sums only when its two variables share a sign, so the working set is
chosen within one group g ∈ {+1, −1} (Chang & Lin, "Training ν-support vector classifiers",
Neural Computation 13, 2001; LIBSVM's ``Solver_NU::select_working_set``, WSS2 of Fan, Chen & Lin
2005 per group)::

    i_g = argmax_{t ∈ I_up, z_t = g} −z_t G_t                                (m_g = that max)
    j   = argmin_{t ∈ I_low, −z_t G_t < m_{z_t}} −b_t² / a_t,   b_t = m_{z_t} + z_t G_t,
          a_t = Q_{i_g i_g} + Q_tt − 2 Q_{i_g t}   (τ when ≤ 0),   i = i_{z_j}

then the update of :func:`solvers._jit.smo.smo_pairs` (``d_i = z_i, d_j = −z_j``: both sums kept).
The stopping rule is ``max_g (m_g − M_g) < eps``, ``M_g = min_{t ∈ I_low, z_t = g} −z_t G_t``.
The kernel rows, their cache and the row map are those of :mod:`solvers._jit.smo_rows`
(``rowmap = (rows, krows, kslots, krow_slot)``, always given here): ``Q_ti = z_t z_i K[r_i, r_t]``
is read from the kernel row of i's row.
No shrinking: the active set is every variable (``shrinking`` is accepted and ignored).
"""

from __future__ import annotations

import numba
import numpy as np

from svmbench.solvers._jit.smo_rows import general_column
from svmbench.solvers._jit.smo_shrink import bound_status

#: Curvature used in place of a non-positive ``a`` (as :data:`solvers._jit.smo.TAU`).
TAU = 1e-12

BUDGET = 0  # as solvers._jit.smo: the update budget of the chunk was spent
CONVERGED = 1  # the native rule holds on every variable


@numba.njit(cache=True, no_cfunc_wrapper=True)
def smo_pairs_nu(
    max_updates,
    eps,
    shrinking,
    X,
    XT,
    sqn,
    kint,
    kflt,
    y,
    C,
    QD,
    alpha,
    G,
    Gbar,
    active,
    is_active,
    all_idx,
    cache,
    slot_col,
    col_slot,
    slot_full,
    stamp,
    ist,
    idx_buf,
    tmp,
    shrink_buf,
    status,
    p,
    rowmap,
):
    """Run at most ``max_updates`` pair updates within a sign group; return ``(updates, code)``.

    The arguments are those of :func:`solvers._jit.smo.smo_pairs` (``y`` the signs z, ``C`` the
    bounds u); every variable must be active."""
    n = y.shape[0]
    done = 0
    # the kernel row of a variable's row: the general form's get_column
    rows, krows, _, krow_slot = rowmap
    while True:
        if done >= max_updates:
            return done, BUDGET
        # ---- i_g per group by the maximal violation
        gmax_p = -np.inf
        gmax_n = -np.inf
        ip = -1
        i_n = -1
        for t in range(n):
            if status[t] & 1:  # t ∈ I_up
                v = -y[t] * G[t]
                if y[t] > 0.0:
                    if v >= gmax_p:
                        gmax_p = v
                        ip = t
                elif v >= gmax_n:
                    gmax_n = v
                    i_n = t
        Qp = krows[0]
        Qn = krows[0]
        if ip >= 0:
            Qp = krows[general_column(ip, XT, sqn, kint, kflt, ist, tmp, rowmap)]
        if i_n >= 0:
            Qn = krows[general_column(i_n, XT, sqn, kint, kflt, ist, tmp, rowmap)]
        # ---- j by WSS2 within the group of each candidate
        gmax2_p = -np.inf
        gmax2_n = -np.inf
        obj_min = np.inf
        j = -1
        for t in range(n):
            if status[t] & 2:  # t ∈ I_low
                v = y[t] * G[t]
                if y[t] > 0.0:
                    if v > gmax2_p:
                        gmax2_p = v
                    b = gmax_p + v
                    if b > 0.0:
                        a = QD[ip] + QD[t] - 2.0 * (y[ip] * y[t] * Qp[rows[t]])
                        if a <= 0.0:
                            a = TAU
                        obj = -b * b / a
                        if obj <= obj_min:
                            obj_min = obj
                            j = t
                else:
                    if v > gmax2_n:
                        gmax2_n = v
                    b = gmax_n + v
                    if b > 0.0:
                        a = QD[i_n] + QD[t] - 2.0 * (y[i_n] * y[t] * Qn[rows[t]])
                        if a <= 0.0:
                            a = TAU
                        obj = -b * b / a
                        if obj <= obj_min:
                            obj_min = obj
                            j = t
        if j < 0 or max(gmax_p + gmax2_p, gmax_n + gmax2_n) < eps:
            return done, CONVERGED
        i = ip if y[j] > 0.0 else i_n
        # ---- update along d_i = z_i, d_j = −z_j (z_i = z_j: both sums kept); i's column made
        # the most recent before j's is fetched, so that j's cannot evict it
        general_column(i, XT, sqn, kint, kflt, ist, tmp, rowmap)
        sj = general_column(j, XT, sqn, kint, kflt, ist, tmp, rowmap)
        Qi = krows[krow_slot[rows[i]]]
        Qj = krows[sj]
        a = QD[i] + QD[j] - 2.0 * y[i] * y[j] * (y[i] * y[j] * Qi[rows[j]])
        if a <= 0.0:
            a = TAU
        b = -y[i] * G[i] + y[j] * G[j]
        step = b / a
        room_i = C[i] - alpha[i] if y[i] > 0.0 else alpha[i]
        room_j = alpha[j] if y[j] > 0.0 else C[j] - alpha[j]
        if room_i < step:
            step = room_i
        if room_j < step:
            step = room_j
        old_i = alpha[i]
        old_j = alpha[j]
        if step == room_i:
            alpha[i] = C[i] if y[i] > 0.0 else 0.0
        else:
            alpha[i] = old_i + y[i] * step
        if step == room_j:
            alpha[j] = 0.0 if y[j] > 0.0 else C[j]
        else:
            alpha[j] = old_j - y[j] * step
        status[i] = bound_status(y[i], alpha[i], C[i])
        status[j] = bound_status(y[j], alpha[j], C[j])
        da_i = alpha[i] - old_i
        da_j = alpha[j] - old_j
        for t in range(n):
            r = rows[t]
            G[t] += y[i] * y[t] * Qi[r] * da_i + y[j] * y[t] * Qj[r] * da_j
        done += 1
