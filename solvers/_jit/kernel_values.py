"""Kernel values from inner products, shared by the dense and CSR column loops of
:mod:`solvers._jit.kernel_columns` and :mod:`solvers._jit.kernel_columns_csr`.

The kernels' codes (``KERNEL_CODES``, defined in :mod:`problems.kernels`) and formulas, each
computed from an inner product by :func:`problems._kernel_products.kernel_from_dot` (one formula
for these columns and for the certificates' products; its exponential is the vectorizable
:func:`~problems._kernel_products.exp_nonpositive`):

- 0 ``linear``: ``x·x'``
- 1 ``poly``: ``(γ x·x' + c₀)^p``
- 2 ``rbf``: ``exp(−γ‖x − x'‖²)`` computed as ``exp(−γ(‖x‖² + ‖x'‖² − 2x·x'))`` from the
  precomputed squared norms (clipped at 0, and exactly 0 on the diagonal, as scikit-learn's
  ``euclidean_distances``)
- 3 ``sigmoid``: ``tanh(γ x·x' + c₀)``
- 4 ``precomputed``: ``X`` is the Gram matrix and the column is read from it.

The transforms of a whole column of inner products run one loop per kind, so that each
vectorizes. The inner products of the shared table's blocks (:func:`dots_block`) sum over the
features in ascending order, one rounding per product and per addition, as :func:`kernel_entry`
and the whole columns: the same value to the last bit. They leave out the features where ``x_i``
is 0: for finite rows a product ``±0`` added to a partial sum started at ``+0`` never changes it
(an exact zero sum rounds to ``+0``).
"""

from __future__ import annotations

import numba

from svmbench.problems._kernel_products import kernel_from_dot
from svmbench.problems.kernels import KERNEL_CODES  # noqa: F401 (re-exported)

#: Columns with ``len(idx) · d`` at least this are computed by all Numba threads.
PARALLEL_MIN_WORK = 100_000

#: Entries per block of a whole column (``kernel_columns.kernel_column_full``; the block of
#: ``out`` stays in L1/L2 while the d rows of ``XT`` stream through it).
FULL_BLOCK = 2048


@numba.njit(cache=True, inline="always")
def from_dot(dot, sqi, sqk, same, kind, gamma, coef0, degree):
    """``K(x_i, x_k)`` from ``x_i·x_k`` (kind < 4): the formula of
    :func:`~problems._kernel_products.kernel_from_dot`, and exactly 1 for the RBF kernel of a row
    with itself (``same``), where rounding could leave ``‖x‖² + ‖x‖² − 2x·x`` above 0."""
    if kind == 2 and same:
        return 1.0
    return kernel_from_dot(dot, sqi, sqk, kind, gamma, coef0, degree)


@numba.njit(cache=True, inline="always")
def kernel_entry(X, sqn, i, k, kind, gamma, coef0, degree):
    """``K(x_i, x_k)`` for one pair (kind < 4)."""
    d = X.shape[1]
    dot = 0.0
    for f in range(d):
        dot += X[i, f] * X[k, f]
    return from_dot(dot, sqn[i], sqn[k], i == k, kind, gamma, coef0, degree)


@numba.njit(cache=True, inline="always")
def nonzero_features(XT, i, feats):
    """Write the features f with ``XT[f, i] != 0`` into ``feats`` (ascending) and return how
    many."""
    c = 0
    for f in range(XT.shape[0]):
        if XT[f, i] != 0.0:
            feats[c] = f
            c += 1
    return c


@numba.njit(cache=True, inline="always")
def dots_block(XT, i, out, lo, hi, feats, c):
    """``out[t] = Σ_f x_i[f] x_t[f]`` for ``lo ≤ t < hi`` over the features ``feats[:c]``
    (ascending) of the transposed rows ``XT`` (d × n).

    Four features per pass over ``out`` (each entry's sum still adds them one at a time, in
    order): a pass per feature loaded and stored ``out`` once per product. The loops over t run
    from 0 on contiguous views, so that LLVM vectorizes them.
    """
    m = hi - lo
    o = out[lo:hi]
    for t in range(m):
        o[t] = 0.0
    j = 0
    while j + 4 <= c:
        f0, f1, f2, f3 = feats[j], feats[j + 1], feats[j + 2], feats[j + 3]
        x0, x1, x2, x3 = XT[f0, i], XT[f1, i], XT[f2, i], XT[f3, i]
        r0, r1, r2, r3 = XT[f0, lo:hi], XT[f1, lo:hi], XT[f2, lo:hi], XT[f3, lo:hi]
        for t in range(m):
            v = o[t]
            v += x0 * r0[t]
            v += x1 * r1[t]
            v += x2 * r2[t]
            v += x3 * r3[t]
            o[t] = v
        j += 4
    while j < c:
        f = feats[j]
        xf = XT[f, i]
        r = XT[f, lo:hi]
        for t in range(m):
            o[t] += xf * r[t]
        j += 1


@numba.njit(cache=True, inline="always")
def from_gathered_dots(out, sqn, i, idx, kind, gamma, coef0, degree):
    """``out[t] = K(x_i, x_{idx[t]})`` from ``out[t] = x_i·x_{idx[t]}`` (kind < 4), one loop per
    kind so that each vectorizes; :func:`from_dot`'s values."""
    m = idx.shape[0]
    si = sqn[i]
    if kind == 1:
        for t in range(m):
            out[t] = kernel_from_dot(out[t], si, sqn[idx[t]], 1, gamma, coef0, degree)
    elif kind == 2:
        for t in range(m):
            v = kernel_from_dot(out[t], si, sqn[idx[t]], 2, gamma, coef0, degree)
            out[t] = 1.0 if idx[t] == i else v
    elif kind == 3:
        for t in range(m):
            out[t] = kernel_from_dot(out[t], si, sqn[idx[t]], 3, gamma, coef0, degree)


@numba.njit(cache=True, inline="always")
def from_dots_block(out, sqn, i, lo, hi, kind, gamma, coef0, degree):
    """``out[t] = K(x_i, x_t)`` from ``out[t] = x_i·x_t`` for ``lo ≤ t < hi`` (kind < 4), one
    loop per kind so that each vectorizes."""
    m = hi - lo
    o = out[lo:hi]
    q = sqn[lo:hi]
    si = sqn[i]
    if kind == 1:
        for t in range(m):
            o[t] = kernel_from_dot(o[t], si, q[t], 1, gamma, coef0, degree)
    elif kind == 2:
        for t in range(m):
            o[t] = kernel_from_dot(o[t], si, q[t], 2, gamma, coef0, degree)
        if lo <= i < hi:
            out[i] = 1.0
    elif kind == 3:
        for t in range(m):
            o[t] = kernel_from_dot(o[t], si, q[t], 3, gamma, coef0, degree)


@numba.njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def from_dots_parallel(out, sqn, i, kind, gamma, coef0, degree):
    n = out.shape[0]
    nb = (n + FULL_BLOCK - 1) // FULL_BLOCK
    for b in numba.prange(nb):
        lo = b * FULL_BLOCK
        from_dots_block(out, sqn, i, lo, min(n, lo + FULL_BLOCK), kind, gamma, coef0, degree)
