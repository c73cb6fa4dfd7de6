"""Kernel rows shared by the binary problems of one multiclass data set (one-vs-one pairs).

A reduction solves k(k−1)/2 problems on overlapping subsets of the rows of one X; the kernel
entry ``K(x_r, x_t)`` of two rows is the same in every pair that holds both. :class:`KernelRows`
keeps the rows ``K(x_r, ·)`` of X in one float64 table, each entry computed once, on demand,
whichever binary problem or solver asks first: SMO's loops read a pair's kernel column as the
gather of the shared row over the pair's rows (through the row map of
:mod:`solvers._jit.smo_rows`), and the pair's certificate reads ``K(αy)`` from the same rows
(:meth:`KernelRows.times`), so that the entries SMO computed are not computed again.

The table's rows are X's sorted by group (a class), so that a group's columns are contiguous:
row r's block of group g, ``K(x_r, x_t)`` for the t of group g, is computed only when a problem
holding both asks for it (a pair of classes c, c' reads the blocks c and c' of its rows;
``done[r, g]`` says which are). ``position`` maps a row of X to its row in the table. The table
holds every row (``n² · 8`` bytes: the caller shares rows only when that fits its cache budget),
so nothing is evicted. Entries are the kernel alone (no ``s²``): the rows are shared only by
problems without a regularized bias. The jitted loops read it as the tuple of
:meth:`KernelRows.columns` (:mod:`solvers._jit.kernel_table`).
"""

from __future__ import annotations

import numpy as np

from svmbench.problems.kernels import Kernel, squared_norms


class KernelRows:
    """The rows ``K(x_r, ·)`` of a dense X (n × d, float64) under ``kernel``, computed on demand
    and kept for every problem on rows of X.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows (C-contiguous float64; not a precomputed Gram matrix).
    kernel : Kernel
        The kernel with its parameters resolved.
    groups : ndarray of shape (n,) of int in [0, k), default=None
        The group (class) of each row: a block of columns per group. None: one block.
    """

    def __init__(self, X: np.ndarray, kernel: Kernel, groups: np.ndarray | None = None):
        if not isinstance(kernel, Kernel) or kernel.name == "precomputed":
            raise TypeError(
                f"kernel must be a Kernel computed from rows (not precomputed), got {kernel!r}"
            )
        X = np.asarray(X)
        if X.ndim != 2 or X.dtype != np.float64 or not X.flags.c_contiguous:
            raise ValueError("X must be a C-contiguous float64 array of shape (n, d)")
        n = X.shape[0]
        if groups is None:
            groups = np.zeros(n, dtype=np.int64)
        groups = np.asarray(groups)
        if groups.shape != (n,) or groups.dtype.kind not in "iu" or (n and groups.min() < 0):
            raise ValueError(f"groups must be {n} non-negative integers, one per row of X")
        order = np.argsort(groups, kind="stable")
        self.position = np.empty(n, dtype=np.int64)
        self.position[order] = np.arange(n)
        counts = np.bincount(groups, minlength=1)
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._starts = self.starts.tolist()  # the same, as Python ints for slicing
        self.group = np.ascontiguousarray(groups[order], dtype=np.int64)
        self.X = np.ascontiguousarray(X[order])
        self.XT = np.ascontiguousarray(self.X.T)
        self.sqn = squared_norms(self.X)
        self.kernel = kernel
        self.diagonal = kernel.diagonal(self.X, self.sqn)
        self.krows = np.empty((n, n))
        self.done = np.zeros((n, counts.size), dtype=np.uint8)

    @property
    def n_rows(self) -> int:
        return self.X.shape[0]

    @property
    def entries(self) -> int:
        """Kernel entries computed so far (by the solvers' loops or by :meth:`times`)."""
        return int((self.done.astype(np.int64) @ np.diff(self.starts)).sum())

    def blocks(self, rows: np.ndarray) -> np.ndarray:
        """The groups of the table's ``rows``: the blocks a problem on them reads."""
        return np.flatnonzero(np.bincount(self.group[rows], minlength=self.done.shape[1]))

    def columns(self, rows: np.ndarray, want: np.ndarray) -> tuple:
        """What the jitted loops read for a problem on the table's rows ``rows`` (the
        :attr:`position` of its rows of X) that reads the blocks ``want`` (:meth:`blocks`):
        ``(rows, krows, done, starts, want, XT, sqn)`` (:mod:`solvers._jit.kernel_table`)."""
        return (np.ascontiguousarray(rows, dtype=np.int64), self.krows, self.done, self.starts,
                np.ascontiguousarray(want, dtype=np.int64), self.XT, self.sqn)  # fmt: skip

    def _ensure(self, rows: np.ndarray, want: np.ndarray) -> None:
        """Compute the table's ``rows`` (distinct) missing one of the blocks ``want``: each a
        whole row, with NumPy and BLAS (:meth:`Kernel.__call__`)."""
        done = self.done[rows]
        missing = rows[~done[:, want].all(axis=1)] if done.size else rows[:0]
        if missing.size:
            self.krows[missing] = self.kernel(self.X[missing], self.X)
            self.done[missing] = 1

    def times(self, rows, cols, coef, want) -> np.ndarray:
        """``Σ_j coef_j K(x_{rows_i}, x_{cols_j})`` for every i: ``K(X_rows, X_cols) @ coef``
        over the table's rows ``rows`` (of the blocks ``want``) and ``cols`` (distinct), from
        the shared rows of ``cols`` (computed first where a block is missing), in float64:
        per block, one gather of the stored entries and one product."""
        if cols.size == 0:
            return np.zeros(rows.size)
        if not self.done[cols[:, None], want].all():
            self._ensure(cols, want)
        g = np.empty(self.X.shape[0])  # K = Kᵀ: the rows of cols, block by block, over rows
        starts = self._starts
        for w in np.asarray(want).tolist():
            lo, hi = starts[w], starts[w + 1]
            np.dot(coef, self.krows[cols, lo:hi], out=g[lo:hi])
        return g[rows]
