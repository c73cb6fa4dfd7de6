"""Small jitted helpers shared by the solvers' cores: a cache-line prefetch and the one random
generator of the loops (splitmix64; Steele, Lea & Flood, OOPSLA 2014), with the Fisher–Yates
shuffle built on it.

Editing this file is safe: the package's cache directory is keyed on every jitted source
(:mod:`solvers._jit`), so no caller keeps stale machine code.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: Bytes per cache line (x86-64 and most ARM cores).
CACHE_LINE = 64

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_INV_2_53 = 1.0 / 9007199254740992.0


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


@numba.njit(cache=True, no_cfunc_wrapper=True)
def prefetch_span(arr, start, stop):
    """Prefetch the cache lines of ``arr.flat[start:stop]`` (no effect on any value)."""
    if stop > start:
        step = max(1, CACHE_LINE // arr.itemsize)
        for off in range(start, stop, step):
            prefetch(arr, off)
        prefetch(arr, stop - 1)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def next_uniform(rng_state):
    """A uniform float in [0, 1) from the splitmix64 generator; advances ``rng_state[0]``.

    Parameters
    ----------
    rng_state : ndarray of shape (1,), uint64
        Generator state (any value, 0 included), updated in place.
    """
    z = rng_state[0] + _GOLDEN
    rng_state[0] = z
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * _INV_2_53


@numba.njit(cache=True, no_cfunc_wrapper=True)
def shuffle_active(index, active_size, rng_state):
    """Fisher–Yates shuffle of ``index[:active_size]`` in place (uniform over permutations).

    Parameters
    ----------
    index : ndarray of shape (n,), int64
        Coordinate order; only its first ``active_size`` entries move.
    active_size : int
    rng_state : ndarray of shape (1,), uint64
    """
    for k in range(active_size - 1):
        j = k + int(next_uniform(rng_state) * (active_size - k))
        if j >= active_size:  # guards the (measure-zero) rounding of u·m up to m
            j = active_size - 1
        tmp = index[k]
        index[k] = index[j]
        index[j] = tmp
