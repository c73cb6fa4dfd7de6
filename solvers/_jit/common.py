"""Small helpers shared by the solvers' cores: jitted ones, and the layout of X they take.

Numba's on-disk cache checks only the source file of a cached function, not the modules it
imports: after changing this file, clear ``solvers/_jit/__pycache__`` (or touch the callers).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from scipy import sparse

#: Bytes per cache line (x86-64 and most ARM cores).
CACHE_LINE = 64


@intrinsic
def prefetch(typingctx, arr, offset):
    """Hint the CPU to load the cache line holding ``arr.flat[offset]`` (``llvm.prefetch``).

    A hint only: it never faults, never changes a value, and is dropped where unsupported.
    """
    if not isinstance(arr, types.Array) or not isinstance(offset, types.Integer):
        return None
    sig = types.void(arr, offset)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        off = context.cast(builder, args[1], signature.args[1], types.intp)
        i8p = ir.IntType(8).as_pointer()
        address = builder.bitcast(builder.gep(array.data, [off]), i8p)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read access, high temporal locality, data cache
        builder.call(fn, [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@numba.njit(cache=True)
def prefetch_span(arr, start, stop):
    """Prefetch the cache lines of ``arr.flat[start:stop]`` (no effect on any value)."""
    if stop > start:
        step = max(1, CACHE_LINE // arr.itemsize)
        for off in range(start, stop, step):
            prefetch(arr, off)
        prefetch(arr, stop - 1)


def rows_for_epochs(X):
    """X as the epoch kernels of Pegasos and the perceptron take it: dense C-contiguous float64,
    or the CSR arrays ``(data, indices, indptr)`` with int64 indices."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        return (
            np.ascontiguousarray(X.data, dtype=np.float64),
            np.ascontiguousarray(X.indices, dtype=np.int64),
            np.ascontiguousarray(X.indptr, dtype=np.int64),
        )
    return np.ascontiguousarray(X, dtype=np.float64)
