"""Jitted kernel products ``f = K(X, S) c`` of dense rows for certificates and predictions, fused:
no kernel matrix is stored, only a block that stays in cache.

``f_i = Σ_j c_j k(x_i·s_j)`` with ``k`` the kernel as a function of the inner product,
:func:`kernel_from_dot` (codes of :data:`problems.kernels.KERNEL_CODES`, formulas as there;
the one formula the solvers' kernel columns use too). The RBF kernel takes
``‖x_i − s_j‖² = ‖x_i‖² + ‖s_j‖² − 2 x_i·s_j`` (clipped at 0) from precomputed squared norms, as
scikit-learn's ``euclidean_distances``. A block of rows is transposed (d × rows, in cache); four
support vectors at a time, their inner products with the block are accumulated over four features
per pass (vectorized over the rows), then the kernel and the sum are applied. Everything is
float64; the exponential is :func:`exp_nonpositive`, a vectorizable
one accurate to about one ulp (Cody & Waite's reduction, a Taylor polynomial evaluated with fused
multiply-adds in a short dependency chain), because the C library's scalar ``exp`` kept LLVM from
vectorizing the loop and a plain Horner chain left it waiting on latency.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

#: Blocks of :func:`kernel_dot_dense`: at most ``MAX_ROWS`` rows, whose transpose (d × rows)
#: takes at most ``BLOCK_BYTES`` and stays in cache while the support vectors stream past it.
#: Inner products by BLAS (GEMM on blocks of 128 rows × 256 support vectors, then the kernel pass)
#: measured 10 % slower than the loops here with one BLAS thread (RBF, n = 10 000, d = 20, 7323
#: support vectors) and 8× slower with two on a loaded machine (small GEMMs split over threads).
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


@intrinsic
def _fma(typingctx, a, b, c):
    """``a·b + c`` rounded once (LLVM's ``llvm.fma``: one instruction where the CPU has FMA)."""
    if not all(isinstance(v, types.Float) for v in (a, b, c)):
        return None

    def codegen(context, builder, signature, args):
        dbl = ir.DoubleType()
        fnty = ir.FunctionType(dbl, [dbl, dbl, dbl])
        fn = builder.module.declare_intrinsic("llvm.fma", [dbl], fnty)
        return builder.call(
            fn, [context.cast(builder, v, t, types.float64) for v, t in zip(args, signature.args)]
        )

    return types.float64(types.float64, types.float64, types.float64), codegen


_LN2_HI = 6.93147180369123816490e-01  # ln 2 = _LN2_HI + _LN2_LO; k·_LN2_HI is exact for |k| < 2¹¹
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_SHIFTER = 6755399441055744.0  # 1.5·2⁵²: adding it rounds to an integer kept in the low bits
_SHIFTER_BITS = 0x4338000000000000
_EXP_MIN = -708.0  # below, exp(x) < 2.5e-308 (subnormal): returned as 0
# 1/k! for k = 0..13
_C0, _C1, _C2, _C3 = 1.0, 1.0, 0.5, 1.0 / 6.0
_C4, _C5, _C6, _C7 = 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0
_C8, _C9, _C10, _C11 = 1.0 / 40320.0, 1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0
_C12, _C13 = 1.0 / 479001600.0, 1.0 / 6227020800.0


@numba.njit(cache=True, inline="always")
def exp_nonpositive(x):
    """``exp(x)`` for ``x ≤ 0`` (0 below ``_EXP_MIN``), branch-free so that loops vectorize.

    ``x = k ln2 + r`` with ``k = round(x/ln2)``, ``|r| ≤ ln2/2`` (Cody & Waite's reduction, ln 2
    in two parts); ``exp(r)`` by its Taylor polynomial of degree 13 (truncation below 5e-18),
    and ``2ᵏ`` written into the exponent bits. The terms of degree ≥ 4 are summed in pairs
    (Estrin's scheme, a chain of 4 fused multiply-adds instead of 10), the last four by Horner's
    rule, which keeps the error of the leading terms at Horner's (within one ulp of the C
    library, measured); a 13-step Horner chain measured 1.5× slower in the certificate.
    """
    small = x < _EXP_MIN
    x = max(x, _EXP_MIN)
    t = x * _INV_LN2 + _SHIFTER
    k = t - _SHIFTER
    r = (x - k * _LN2_HI) - k * _LN2_LO
    r2 = r * r
    r4 = r2 * r2
    p47 = _fma(_fma(_C7, r, _C6), r2, _fma(_C5, r, _C4))
    p811 = _fma(_fma(_C11, r, _C10), r2, _fma(_C9, r, _C8))
    p = _fma(_fma(_fma(_C13, r, _C12), r4, p811), r4, p47)  # Σ_{k≥4} r^(k-4)/k!
    p = _fma(_fma(_fma(_fma(p, r, _C3), r, _C2), r, _C1), r, _C0)
    scale = _float_from_bits((_bits_from_float(t) - _SHIFTER_BITS + 1023) << 52)
    return 0.0 if small else p * scale


@numba.njit(cache=True)
def exp_nonpositive_array(x, out):
    """``out = exp(x)`` elementwise by :func:`exp_nonpositive` (tests)."""
    for i in range(x.shape[0]):
        out[i] = exp_nonpositive(x[i])


@numba.njit(cache=True, inline="always")
def kernel_from_dot(dot, sq_a, sq_b, kind, gamma, coef0, degree):
    """``K(a, b)`` from ``a·b`` (kinds 0-3 of :data:`problems.kernels.KERNEL_CODES`;
    ``sq_a = ‖a‖²`` and ``sq_b = ‖b‖²`` are read by the RBF kernel only).

    - 0 linear: ``a·b``
    - 1 poly: ``(γ a·b + c₀)^p`` (p multiplications)
    - 2 rbf: ``exp(−γ max(‖a‖² + ‖b‖² − 2a·b, 0))``
    - 3 sigmoid: ``tanh(γ a·b + c₀)``

    Inlined, with ``kind`` a constant at the call site, the other branches fold away and a loop
    over entries vectorizes (RBF, poly).
    """
    if kind == 2:
        return exp_nonpositive(-gamma * max(sq_a + sq_b - 2.0 * dot, 0.0))
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
def _accumulate(o, q, u, cj, sj, kind, gamma, coef0, degree):
    """``o[t] += c_j K(x_t, s_j)`` from the inner products ``u[t] = x_t·s_j``."""
    for t in range(o.shape[0]):
        o[t] += cj * kernel_from_dot(u[t], q[t], sj, kind, gamma, coef0, degree)


@numba.njit(cache=True, inline="always")
def _accumulate4(o, q, u0, u1, u2, u3, c, sqs, j, kind, gamma, coef0, degree):
    """``o[t] += Σ_{i<4} c_{j+i} K(x_t, s_{j+i})`` from the inner products ``u0..u3`` (separate
    contiguous vectors: rows of a 2-D slice would not vectorize)."""
    c0, c1, c2, c3 = c[j], c[j + 1], c[j + 2], c[j + 3]
    b0, b1, b2, b3 = sqs[j], sqs[j + 1], sqs[j + 2], sqs[j + 3]
    for t in range(o.shape[0]):
        qt = q[t]
        o[t] += (
            c0 * kernel_from_dot(u0[t], qt, b0, kind, gamma, coef0, degree)
            + c1 * kernel_from_dot(u1[t], qt, b1, kind, gamma, coef0, degree)
        ) + (
            c2 * kernel_from_dot(u2[t], qt, b2, kind, gamma, coef0, degree)
            + c3 * kernel_from_dot(u3[t], qt, b3, kind, gamma, coef0, degree)
        )


@numba.njit(cache=True, inline="always")
def _dots4(XT, S, j, u0, u1, u2, u3):
    """``u_i[t] = x_t·s_{j+i}`` for i < 4 and t < m = len(u0) over the block ``XT`` (d × rows,
    C-contiguous: its rows sliced to m stay contiguous and the loops vectorize), four features
    per pass over ``u`` (a pass per feature was bound by its loads and stores)."""
    m = u0.shape[0]
    d = XT.shape[0]
    for t in range(m):
        u0[t] = 0.0
        u1[t] = 0.0
        u2[t] = 0.0
        u3[t] = 0.0
    f = 0
    while f + 4 <= d:
        ra, rb, rc, rd = XT[f, :m], XT[f + 1, :m], XT[f + 2, :m], XT[f + 3, :m]
        a0, b0, c0, d0 = S[j, f], S[j, f + 1], S[j, f + 2], S[j, f + 3]
        a1, b1, c1, d1 = S[j + 1, f], S[j + 1, f + 1], S[j + 1, f + 2], S[j + 1, f + 3]
        a2, b2, c2, d2 = S[j + 2, f], S[j + 2, f + 1], S[j + 2, f + 2], S[j + 2, f + 3]
        a3, b3, c3, d3 = S[j + 3, f], S[j + 3, f + 1], S[j + 3, f + 2], S[j + 3, f + 3]
        for t in range(m):
            xa, xb, xc, xd = ra[t], rb[t], rc[t], rd[t]
            u0[t] += (a0 * xa + b0 * xb) + (c0 * xc + d0 * xd)
            u1[t] += (a1 * xa + b1 * xb) + (c1 * xc + d1 * xd)
            u2[t] += (a2 * xa + b2 * xb) + (c2 * xc + d2 * xd)
            u3[t] += (a3 * xa + b3 * xb) + (c3 * xc + d3 * xd)
        f += 4
    while f < d:
        r = XT[f, :m]
        s0, s1, s2, s3 = S[j, f], S[j + 1, f], S[j + 2, f], S[j + 3, f]
        for t in range(m):
            rt = r[t]
            u0[t] += s0 * rt
            u1[t] += s1 * rt
            u2[t] += s2 * rt
            u3[t] += s3 * rt
        f += 1


@numba.njit(cache=True)
def _dense_block(X, sqn, lo, hi, S, sqs, c, kind, gamma, coef0, degree, out, XT, U):
    """``out[lo:hi] = Σ_j c_j K(x_t, s_j)``: the rows transposed into ``XT`` (d × rows); then,
    four support vectors at a time, their inner products with the block (``U``, vectorized over
    t), the kernel and the sum applied on the fly, one loop per kind (each vectorizes)."""
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
        _dots4(XT, S, j, u0, u1, u2, u3)
        if kind == 2:
            _accumulate4(o, q, u0, u1, u2, u3, c, sqs, j, 2, gamma, coef0, degree)
        elif kind == 1:
            _accumulate4(o, q, u0, u1, u2, u3, c, sqs, j, 1, gamma, coef0, degree)
        elif kind == 3:
            _accumulate4(o, q, u0, u1, u2, u3, c, sqs, j, 3, gamma, coef0, degree)
        else:
            _accumulate4(o, q, u0, u1, u2, u3, c, sqs, j, 0, gamma, coef0, degree)
        j += 4
    while j < ns:  # the last < 4
        for t in range(m):
            u0[t] = 0.0
        for f in range(d):
            r = XT[f, :m]
            sf = S[j, f]
            for t in range(m):
                u0[t] += sf * r[t]
        if kind == 2:
            _accumulate(o, q, u0, c[j], sqs[j], 2, gamma, coef0, degree)
        elif kind == 1:
            _accumulate(o, q, u0, c[j], sqs[j], 1, gamma, coef0, degree)
        elif kind == 3:
            _accumulate(o, q, u0, c[j], sqs[j], 3, gamma, coef0, degree)
        else:
            _accumulate(o, q, u0, c[j], sqs[j], 0, gamma, coef0, degree)
        j += 1


@numba.njit(cache=True)
def _rows_per_block(d):
    return max(16, min(MAX_ROWS, BLOCK_BYTES // (8 * max(1, d))))


@numba.njit(cache=True)
def kernel_dot_dense(X, sqn, S, sqs, c, kind, gamma, coef0, degree):
    """``f = K(X, S) c`` for dense C-contiguous float64 rows X (n × d) and S (m × d), kinds
    0-3; ``sqn``, ``sqs``: their squared norms (RBF only). Serial over blocks of rows."""
    n, d = X.shape
    rows = _rows_per_block(d)
    out = np.empty(n)
    XT = np.empty((d, rows))
    U = np.empty((4, rows))  # inner products of four support vectors with the block
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        _dense_block(X, sqn, lo, hi, S, sqs, c, kind, gamma, coef0, degree, out, XT, U)
    return out


@numba.njit(cache=True, parallel=True)
def kernel_dot_dense_parallel(X, sqn, S, sqs, c, kind, gamma, coef0, degree):
    """:func:`kernel_dot_dense` with the blocks of rows split over the Numba threads (each
    block's sums are the serial ones: the values do not depend on the number of threads)."""
    n, d = X.shape
    rows = _rows_per_block(d)
    out = np.empty(n)
    for b in numba.prange((n + rows - 1) // rows):
        lo = b * rows
        XT = np.empty((d, rows))
        U = np.empty((4, rows))
        _dense_block(
            X, sqn, lo, min(n, lo + rows), S, sqs, c, kind, gamma, coef0, degree, out, XT, U
        )
    return out
