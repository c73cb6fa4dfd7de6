"""The array work of :func:`~svmbench.problems.datasets.prepare`: how many rows each class
gives to a stratified subsample or test set, which rows, and the dense/CSR conversions of ``X``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["allocate", "stratified_choice", "to_csr", "to_dense"]


def allocate(counts: np.ndarray, total: int, *, low, high) -> np.ndarray:
    """Split ``total`` among classes proportionally to ``counts``, within ``[low, high]``.

    Largest-remainder rounding; ties go to the first class. Needs sum(low) <= total <= sum(high).
    """
    low = np.broadcast_to(low, counts.shape)
    ideal = total * counts / counts.sum()
    alloc = np.clip(np.floor(ideal).astype(np.int64), low, high)
    while alloc.sum() < total:
        alloc[np.argmax(np.where(alloc < high, ideal - alloc, -np.inf))] += 1
    while alloc.sum() > total:
        alloc[np.argmax(np.where(alloc > low, alloc - ideal, -np.inf))] -= 1
    return alloc


def stratified_choice(y: np.ndarray, alloc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sorted row indices: ``alloc[c]`` rows drawn from the c-th class in sorted label order."""
    labels = np.unique(y)
    picks = [
        rng.choice(np.flatnonzero(y == label), size=a, replace=False)
        for label, a in zip(labels, alloc)
    ]
    return np.sort(np.concatenate(picks))


def to_csr(X):
    """``X`` as a float64 CSR matrix (None stays None)."""
    return None if X is None else sp.csr_matrix(X, dtype=np.float64)


def to_dense(X):
    """``X`` as a C-contiguous float64 ndarray (None stays None)."""
    if X is None:
        return None
    return np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
