"""Jitted kernel products ``f = K(X, S) c`` of dense rows for certificates and predictions, fused:
no kernel value is stored.

``f_i = Σ_j c_j k(x_i·s_j)`` with ``k`` the kernel as a function of the inner product (codes of
:data:`KERNEL_CODES`, formulas as in :mod:`problems.kernels`); the RBF kernel takes
``‖x_i − s_j‖² = ‖x_i‖² + ‖s_j‖² − 2 x_i·s_j`` (clipped at 0) from precomputed squared norms,
as scikit-learn's ``euclidean_distances``. Everything is float64; the exponential is
:func:`exp_nonpositive`, a vectorizable one accurate to about one ulp, because the C library's
scalar ``exp`` kept LLVM from vectorizing the loop and cost most of the time.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3}

#: Blocks of :func:`kernel_dot_dense`: at most ``MAX_ROWS`` rows, whose transpose (d × rows)
#: takes at most ``BLOCK_BYTES`` and stays in cache while the support vectors stream past it.
#: Measured (RBF, n = 10 000, d = 20, 7323 support vectors, one thread): 512 rows 0.89 s, 256
#: rows 0.99 s, 128 rows 0.94 s (a loaded machine: differences within the noise).
MAX_ROWS = 512
BLOCK_BYTES = 1 << 17


@intrinsic
def _float_from_bits(typingctx, bits):
    """The float64 whose IEEE-754 bits are the int64 ``bits``."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _bits_from_float(typingctx, value):
    """The IEEE-754 bits of the float64 ``value`` as an int64."""
    if not isinstance(value, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


_LN2_HI = 6.93147180369123816490e-01  # ln 2 = _LN2_HI + _LN2_LO; k·_LN2_HI is exact for |k| < 2¹¹
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_SHIFTER = 6755399441055744.0  # 1.5·2⁵²: adding it rounds to an integer kept in the low bits
_SHIFTER_BITS = 0x4338000000000000
_EXP_MIN = -708.0  # below, exp(x) < 2.5e-308 (subnormal): returned as 0


@numba.njit(cache=True, inline="always")
def exp_nonpositive(x):
    """``exp(x)`` for ``x ≤ 0`` (0 below ``_EXP_MIN``), branch-free so that loops vectorize.

    ``x = k ln2 + r`` with ``k = round(x/ln2)``, ``|r| ≤ ln2/2`` (Cody & Waite's reduction, ln 2
    in two parts); ``exp(r)`` by its Taylor polynomial of degree 13 (truncation below 5e-18),
    and ``2ᵏ`` written into the exponent bits.
    """
    small = x < _EXP_MIN
    x = max(x, _EXP_MIN)
    t = x * _INV_LN2 + _SHIFTER
    k = t - _SHIFTER
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = _float_from_bits((_bits_from_float(t) - _SHIFTER_BITS + 1023) << 52)
    return 0.0 if small else p * scale


@numba.njit(cache=True)
def exp_nonpositive_array(x, out):
    """``out = exp(x)`` elementwise by :func:`exp_nonpositive` (tests)."""
    for i in range(x.shape[0]):
        out[i] = exp_nonpositive(x[i])


@numba.njit(cache=True, inline="always")
def _k(dot, qt, sj, kind, gamma, coef0, degree):
    """``K(x_t, s_j)`` from ``x_t·s_j`` (and ``‖x_t‖²``, ``‖s_j‖²`` for the RBF kernel)."""
    if kind == 2:
        return exp_nonpositive(-gamma * max(qt + sj - 2.0 * dot, 0.0))
    if kind == 1:
        base = gamma * dot + coef0
        v = 1.0
        for _ in range(degree):
            v *= base
        return v
    if kind == 3:
        return math.tanh(gamma * dot + coef0)
    return dot


@numba.njit(cache=True, inline="always")
def _accumulate(o, q, dots, cj, sj, kind, gamma, coef0, degree):
    """``o[t] += c_j K(x_t, s_j)`` over the block (one loop per kind, so that each vectorizes)."""
    m = o.shape[0]
    if kind == 2:
        for t in range(m):
            o[t] += cj * _k(dots[t], q[t], sj, 2, gamma, coef0, degree)
    elif kind == 1:
        for t in range(m):
            o[t] += cj * _k(dots[t], q[t], sj, 1, gamma, coef0, degree)
    elif kind == 3:
        for t in range(m):
            o[t] += cj * _k(dots[t], q[t], sj, 3, gamma, coef0, degree)
    else:
        for t in range(m):
            o[t] += cj * dots[t]


@numba.njit(cache=True, inline="always")
def _accumulate4(o, q, u0, u1, u2, u3, c, sqs, j, kind, gamma, coef0, degree):
    """``o[t] += Σ_{i<4} c_{j+i} K(x_t, s_{j+i})`` from the inner products ``u0..u3`` (separate
    contiguous vectors: rows of a 2-D slice would not vectorize)."""
    m = o.shape[0]
    c0, c1, c2, c3 = c[j], c[j + 1], c[j + 2], c[j + 3]
    b0, b1, b2, b3 = sqs[j], sqs[j + 1], sqs[j + 2], sqs[j + 3]
    if kind == 2:
        for t in range(m):
            qt = q[t]
            o[t] += (
                c0 * _k(u0[t], qt, b0, 2, gamma, coef0, degree)
                + c1 * _k(u1[t], qt, b1, 2, gamma, coef0, degree)
            ) + (
                c2 * _k(u2[t], qt, b2, 2, gamma, coef0, degree)
                + c3 * _k(u3[t], qt, b3, 2, gamma, coef0, degree)
            )
    else:
        _accumulate(o, q, u0, c0, b0, kind, gamma, coef0, degree)
        _accumulate(o, q, u1, c1, b1, kind, gamma, coef0, degree)
        _accumulate(o, q, u2, c2, b2, kind, gamma, coef0, degree)
        _accumulate(o, q, u3, c3, b3, kind, gamma, coef0, degree)


@numba.njit(cache=True)
def _dense_block(X, sqn, lo, hi, S, sqs, c, kind, gamma, coef0, degree, out, XT, U):
    """``out[lo:hi] = Σ_j c_j K(x_t, s_j)``: the rows transposed into ``XT`` (d × rows); then,
    four support vectors at a time, their inner products with the block (``U``, vectorized over
    t: one pass over ``XT`` serves four), the kernel and the sum applied on the fly."""
    m = hi - lo
    d = X.shape[1]
    for t in range(m):
        for f in range(d):
            XT[f, t] = X[lo + t, f]
    q = sqn[lo:hi]
    o = out[lo:hi]
    u0, u1, u2, u3 = U[0, :m], U[1, :m], U[2, :m], U[3, :m]
    for t in range(m):
        o[t] = 0.0
    ns = S.shape[0]
    j = 0
    while j + 4 <= ns:
        r = XT[0, :m]
        s0, s1, s2, s3 = S[j, 0], S[j + 1, 0], S[j + 2, 0], S[j + 3, 0]
        for t in range(m):
            rt = r[t]
            u0[t] = s0 * rt
            u1[t] = s1 * rt
            u2[t] = s2 * rt
            u3[t] = s3 * rt
        for f in range(1, d):
            r = XT[f, :m]
            s0, s1, s2, s3 = S[j, f], S[j + 1, f], S[j + 2, f], S[j + 3, f]
            for t in range(m):
                rt = r[t]
                u0[t] += s0 * rt
                u1[t] += s1 * rt
                u2[t] += s2 * rt
                u3[t] += s3 * rt
        _accumulate4(o, q, u0, u1, u2, u3, c, sqs, j, kind, gamma, coef0, degree)
        j += 4
    while j < ns:  # the last < 4
        r = XT[0, :m]
        s0 = S[j, 0]
        for t in range(m):
            u0[t] = s0 * r[t]
        for f in range(1, d):
            r = XT[f, :m]
            s0 = S[j, f]
            for t in range(m):
                u0[t] += s0 * r[t]
        _accumulate(o, q, u0, c[j], sqs[j], kind, gamma, coef0, degree)
        j += 1


@numba.njit(cache=True)
def kernel_dot_dense(X, sqn, S, sqs, c, kind, gamma, coef0, degree):
    """``f = K(X, S) c`` for dense C-contiguous float64 rows X (n × d) and S (m × d), kinds
    1-3 (poly, RBF, sigmoid); ``sqn``, ``sqs``: their squared norms (RBF only).

    Blocks of rows whose transpose takes at most ``BLOCK_BYTES``. Serial: on two shared cores a
    ``prange`` over the blocks measured no faster.
    """
    n, d = X.shape
    rows = max(16, min(MAX_ROWS, BLOCK_BYTES // (8 * max(1, d))))
    out = np.empty(n)
    XT = np.empty((max(1, d), rows))
    U = np.empty((4, rows))  # inner products of four support vectors with the block
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        _dense_block(X, sqn, lo, hi, S, sqs, c, kind, gamma, coef0, degree, out, XT, U)
    return out
