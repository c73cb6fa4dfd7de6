"""SMO on kernel rows shared between binary problems (a one-vs-one reduction's pairs).

A :class:`~problems.KernelDual` whose kernel entries come from a
:class:`~problems.kernel_rows.KernelRows` table (:meth:`KernelDual.share_rows`: the pair's
examples are rows of the multiclass X) runs on C-SVC's loops and column cache; its rows are the
table (:mod:`solvers._jit.kernel_table`): a missing column ``Q̃_:i = y_i y_t K[r_i, r_t]`` is
the table row of i's row gathered over the pair's rows, and a block of that row missing from the
table is computed once, for every pair that holds it. The hinge loss only (the squared hinge's
diagonal term is no kernel entry); the pair's certificate reads the same float64 rows.
"""

from __future__ import annotations

import time

import numpy as np

from svmbench.problems import KernelDual
from svmbench.problems.kernel_rows import KernelRows
from svmbench.problems.kernels import Kernel
from svmbench.solvers._jit import smo as jit
from svmbench.solvers.compile_notice import compiling
from svmbench.solvers.smo_arrays import new_core

#: The loops compiled in this process for shared rows: pair updates or single ones.
_WARM_SHARED: set[bool] = set()


def uses_shared_rows(problem, storage: str = "auto") -> bool:
    """Whether SMO reads ``problem``'s kernel from its shared rows: a hinge-loss kernel dual
    given a table (:meth:`~problems.KernelDual.share_rows`), rows not forced to CSR."""
    return (
        isinstance(problem, KernelDual)
        and problem.shared_rows is not None
        and problem.loss == "hinge"
        and storage != "csr"
    )


def rows_kind(X) -> str:
    """What the loops' rows ``X`` are: ``"shared"`` (a table of kernel rows), ``"csr"`` or
    ``"dense"`` (SMO's ``info["rows"]``)."""
    if isinstance(X, tuple):
        return "shared" if X[1].ndim == 2 else "csr"
    return "dense"


def shared_core(problem: KernelDual, n_slots: int, buffer: np.ndarray | None = None) -> jit.Core:
    """The loops' record for a cold start (α = 0, G = −1, Ḡ = 0) of ``problem`` on its shared
    rows (the table's tuple as X and Xᵀ, serial columns) with ``n_slots`` float64 columns,
    held in ``buffer`` (float64, at least ``n_slots · n`` entries: the memory of the previous
    pair's columns, already mapped, reused) or in a new array."""
    table, rows, blocks = problem.shared_rows
    n = problem.n_samples
    spec = table.kernel
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    C = np.ascontiguousarray(problem.upper_bounds, dtype=np.float64)
    source = table.columns(rows, blocks)
    # bit 0: t ∈ I_up, bit 1: t ∈ I_low at α = 0 (a box [0, 0] in neither)
    status = ((C > 0) * (2 - (y > 0))).astype(np.uint8)
    kint = (int(spec.code), int(spec.degree), None)
    kflt = np.array([spec.gamma, spec.coef0, 0.0])
    QD = np.ascontiguousarray(table.diagonal[rows])  # Q̃_tt = y_t² K_tt
    G, Gbar = np.full(n, -1.0), np.zeros(n)
    extra = {}
    if buffer is not None and buffer.size >= n_slots * n:
        extra["cache"] = buffer[: n_slots * n].reshape(n_slots, n)  # no slot is read unfilled
    return new_core(
        source, source, table.sqn, kint, kflt, y, C, QD, np.zeros(n), G, Gbar, status, n_slots,
        np.float64, **extra,
    )  # fmt: skip


def column_buffer(previous: np.ndarray | None, entries: int) -> np.ndarray:
    """A float64 buffer of at least ``entries`` for the columns of one problem after another
    (a reduction's pairs on one solver): ``previous`` when large enough, else a new one."""
    if previous is not None and previous.size >= entries:
        return previous
    return np.empty(entries)


def warm_up_shared(problem: KernelDual) -> float:
    """Compile the loop ``problem`` runs on shared rows (pair or single updates) on a 4-point
    problem; untimed, once per process and variant."""
    pairs = problem.bias == "free"
    if pairs in _WARM_SHARED:
        return 0.0
    start = time.perf_counter()
    what = f"shared kernel rows, float64 columns, {'pair' if pairs else 'single'} updates"
    with compiling(f"smo-shared-{'pairs' if pairs else 'single'}", "smo", what):
        X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
        y = np.array([1.0, -1.0, 1.0, -1.0])
        tiny = KernelDual(X, y, kernel="rbf", gamma=0.5, bias="free" if pairs else "none")
        tiny.share_rows(KernelRows(X, Kernel("rbf", 0.5), (y > 0).astype(np.int64)), np.arange(4))
        run = jit.smo_pairs if pairs else jit.smo_single
        run(50, 1e-3, True, *shared_core(tiny, 2))
    _WARM_SHARED.add(pairs)
    return time.perf_counter() - start
