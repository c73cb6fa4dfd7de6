"""Kernels the estimator computes itself: callable kernels ``kernel(A, B) -> (len(A), len(B))``
Gram matrices, as SVC takes them, and the check that the data's inner products stay finite.

A callable kernel is computed once per fit, ``K = kernel(X, X)``, and the problem is solved as a
precomputed one (:class:`~svmbench.problems.KernelDual` with ``kernel="precomputed"``); at
predict time, ``kernel(X_test, X_fit)`` is the (n_test, n_train) kernel the precomputed model
reads. The callable receives the data as the user gave it (any sequence, as SVC passes
it), in row blocks of at most :data:`BLOCK_ROWS` for large inputs.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples

#: Rows of the first argument per call of the kernel once it has more than this many.
BLOCK_ROWS = 4096


def gram(kernel, A, B) -> np.ndarray:
    """``kernel(A, B)`` as a C-ordered float64 ndarray of shape (len(A), len(B)), computed in
    row blocks of A; a ValueError naming the kernel when it returns another shape, a value that
    is not numeric, or a non-finite entry."""
    n_a, n_b = _num_samples(A), _num_samples(B)
    if n_a <= BLOCK_ROWS:
        return _checked(kernel, A, B, n_a, n_b)
    blocks = [
        _checked(kernel, _safe_indexing(A, np.arange(s, min(s + BLOCK_ROWS, n_a))), B, None, n_b)
        for s in range(0, n_a, BLOCK_ROWS)
    ]
    return np.ascontiguousarray(np.vstack(blocks))


def _checked(kernel, A, B, n_a: int | None, n_b: int) -> np.ndarray:
    name = getattr(kernel, "__name__", type(kernel).__name__)
    K = kernel(A, B)
    if sparse.issparse(K):
        K = K.toarray()
    try:
        K = np.asarray(K, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise ValueError(
            f"kernel: the callable {name} must return a numeric array, got {type(K).__name__}"
        ) from None
    rows = _num_samples(A) if n_a is None else n_a
    if K.shape != (rows, n_b):
        raise ValueError(
            f"kernel: the callable {name} must return a ({rows}, {n_b}) array for inputs of "
            f"{rows} and {n_b} samples, got shape {K.shape}"
        )
    if not np.all(np.isfinite(K)):
        raise ValueError(f"kernel: the callable {name} returned NaN or infinite values")
    return K


def predict_kernel(kernel, X, X_fit) -> np.ndarray:
    """The (n_test, n_train) kernel of ``X`` against the training data as given, what a
    precomputed model reads (every column, as SVC evaluates it: a callable may assume it sees
    the whole training set)."""
    return gram(kernel, X, X_fit)


def check_products_finite(X) -> None:
    """A ValueError (SVC's words) when ``d · max x_ij²`` leaves float64: every inner product, kernel
    value and coefficient of such data may be infinite."""
    values = X.data if sparse.issparse(X) else X
    largest = max(float(values.max()), -float(values.min())) if values.size else 0.0  # no |X| copy
    with np.errstate(over="ignore"):
        bound = largest * largest * X.shape[1]
    if not np.isfinite(bound):
        raise ValueError(
            "The dual coefficients or intercepts are not finite: X's inner products overflow "
            f"float64 (largest |x_ij| = {largest:.3g} over {X.shape[1]} features); scale X "
            "(StandardScaler)"
        )


__all__ = [
    "BLOCK_ROWS",
    "check_products_finite",
    "gram",
    "predict_kernel",
]
