"""Input checks shared by every problem constructor and solver, public: a solver or data loader
written outside this package validates its options with the same functions and messages.

Each check raises ``ValueError`` or ``TypeError`` with a message that names the argument and says
what was expected, in the manner of scikit-learn's parameter validation.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import threading
from collections.abc import Iterable, Iterator

import numpy as np
from scipy import sparse

#: A regularized bias's constant feature s enters as s² and 1/s²: both stay finite in float64.
BIAS_SCALE_RANGE = (1e-150, 1e150)


def check_bias_scale(value) -> float:
    """``bias_scale`` as a float in :data:`BIAS_SCALE_RANGE` (s² and 1/s² finite)."""
    low, high = BIAS_SCALE_RANGE
    return check_real("bias_scale", value, low=low, high=high, closed="both")


def check_real(
    name: str, value, *, low=None, high=None, closed: str = "neither", finite: bool = True
) -> float:
    """Return ``value`` as a float after checking it is a real in an interval.

    ``closed`` is one of ``"neither"``, ``"left"``, ``"right"``, ``"both"``; infinite values are
    refused unless ``finite=False``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a real number, got nan")
    if finite and math.isinf(value):
        raise ValueError(f"{name} must be finite, got {value}")
    left_ok = low is None or (value >= low if closed in ("left", "both") else value > low)
    right_ok = high is None or (value <= high if closed in ("right", "both") else value < high)
    if not (left_ok and right_ok):
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        lb = "[" if closed in ("left", "both") and low is not None else "("
        rb = "]" if closed in ("right", "both") and high is not None else ")"
        raise ValueError(f"{name} must be in {lb}{lo}, {hi}{rb}, got {value!r}")
    return value


def check_int(name: str, value, *, low=None, high=None) -> int:
    """Return ``value`` as an int after checking ``low <= value <= high``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {bounds}, got {value}")
    return value


def check_bool(name: str, value) -> bool:
    """``value`` if it is a bool (NumPy's included); a string such as ``"false"`` is refused,
    never coerced (``bool("false")`` is True)."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_option(name: str, value, options: Iterable[str]) -> str:
    """Check that ``value`` is one of the strings in ``options``."""
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


#: The arrays a caller has validated already, per thread (:func:`validated_input`).
_VALIDATED = threading.local()


@contextlib.contextmanager
def validated_input(*arrays) -> Iterator[None]:
    """Within the block, :func:`check_X` returns each of ``arrays`` (the very objects) as it is,
    without scanning it again: the caller has just validated it, as the estimators do with
    scikit-learn's ``validate_data`` once per fit. Only arrays :func:`check_X` would return
    unchanged are taken: C-contiguous float64 arrays and float64 CSR matrices in canonical
    format; anything else is checked as always."""
    kept = [
        a
        for a in arrays
        if (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous)
        or (sparse.isspmatrix_csr(a) and a.dtype == np.float64 and a.has_canonical_format)
    ]
    stack = _VALIDATED.__dict__.setdefault("arrays", [])
    stack.extend(kept)
    try:
        yield
    finally:
        del stack[len(stack) - len(kept) :]


def _validated_already(X) -> bool:
    return any(X is a for a in getattr(_VALIDATED, "arrays", ()))


def check_finite(values: np.ndarray, name: str = "X") -> None:
    """``ValueError`` naming ``name`` unless every entry is finite (one pass over the data)."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")


def check_X(X, *, name: str = "X", allow_sparse: bool = True):
    """Return X as a C-contiguous float64 array or a canonical float64 CSR matrix.

    Rejects empty input, non-2-D input and non-finite values. An array the caller has
    validated (:func:`validated_input`) is returned as it is.
    """
    if _validated_already(X) and X.ndim == 2 and X.shape[0] and X.shape[1]:
        if sparse.issparse(X) and not allow_sparse:
            raise TypeError(f"{name} must be a dense array for this problem, got a sparse matrix")
        return X
    if sparse.issparse(X):
        if not allow_sparse:
            raise TypeError(f"{name} must be a dense array for this problem, got a sparse matrix")
        X = sparse.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        X.sort_indices()
        check_finite(X.data, name)
    else:
        try:
            X = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"{name} must be array-like of numbers: {exc}") from None
        if X.dtype == object or not (
            np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_)
        ):
            raise TypeError(f"{name} must hold numbers, got dtype {X.dtype}")
        if np.iscomplexobj(X):
            raise TypeError(f"{name} must be real, got complex dtype {X.dtype}")
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(
                f"{name} must be 2-D of shape (n_samples, n_features), got ndim={X.ndim}"
            )
        check_finite(X, name)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty, got shape {X.shape}")
    return X


def check_binary_labels(y, n_samples: int, *, name: str = "y") -> np.ndarray:
    """Return labels as float64 in {-1, +1}; both classes must be present."""
    y = _check_vector(y, n_samples, name)
    positive = y == 1.0
    if not np.all(positive | (y == -1.0)):  # two comparisons: cheaper than np.isin's sort
        found = np.unique(y)[:5]
        raise ValueError(
            f"{name} must contain only -1 and +1 for a binary problem, got values {found}; "
            "map other labels to ±1 first"
        )
    if positive.all() or not positive.any():
        raise ValueError(f"{name} must contain both classes -1 and +1, got only {y[0]:+.0f}")
    return y


def check_multiclass_labels(y, n_samples: int, *, name: str = "y") -> tuple[np.ndarray, int]:
    """Return labels as int64 in 0..k-1 (k >= 2, every class present) and k."""
    if isinstance(y, np.ndarray) and y.dtype.kind in "iu" and y.ndim == 1:
        # integer labels (an estimator's encoded classes) are whole and finite as they are
        if y.shape[0] != n_samples:
            raise ValueError(f"{name} must have length n_samples={n_samples}, got {y.shape[0]}")
        if y.min() < 0:
            raise ValueError(f"{name} must hold class indices 0..k-1 (non-negative integers)")
        return _counted_classes(y, int(y.max()), n_samples, name)
    y = _check_vector(y, n_samples, name)
    if not np.all(y == np.round(y)) or np.any(y < 0):
        raise ValueError(f"{name} must hold class indices 0..k-1 (non-negative integers)")
    return _counted_classes(y, float(y.max()), n_samples, name)


def _counted_classes(y: np.ndarray, largest, n_samples: int, name: str) -> tuple[np.ndarray, int]:
    """``(y as int64, k)`` for non-negative whole labels whose largest is ``largest``, once
    every class 0..k-1 is seen to be present."""
    if largest >= n_samples:  # every class 0..k-1 present needs k <= n: refuse before counting
        raise ValueError(
            f"{name} must hold class indices 0..k-1 with every class present, so k <= "
            f"n_samples={n_samples}; got the label {largest:.0f} (encode labels first, e.g. "
            "with sklearn.preprocessing.LabelEncoder)"
        )
    y = y.astype(np.int64)  # a new array, as the problem keeps it
    k = int(largest) + 1
    if k < 2:
        raise ValueError(f"{name} must contain at least 2 classes, got only class 0")
    missing = np.flatnonzero(np.bincount(y, minlength=k) == 0)  # O(n + k), no sort
    if missing.size:
        raise ValueError(f"{name} must use every class index 0..{k - 1}; missing {missing[:5]}")
    return y, k


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    """Return per-example weights (default ones), finite and >= 0, not all zero."""
    if sample_weight is None:
        return np.ones(n_samples)
    w = _check_vector(sample_weight, n_samples, "sample_weight")
    if np.any(w < 0):
        raise ValueError("sample_weight must be >= 0 everywhere")
    if not np.any(w > 0):
        raise ValueError("sample_weight must have at least one positive entry")
    return w


def _check_vector(v, n_samples: int, name: str) -> np.ndarray:
    try:
        v = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-D array of numbers") from None
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if v.shape[0] != n_samples:
        raise ValueError(f"{name} must have length n_samples={n_samples}, got {v.shape[0]}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return np.ascontiguousarray(v)


#: The largest per-example weight ``C_i = C · sample_weight_i`` a problem accepts. Beyond it the
#: objective (up to Σ C_i) and its certificate lose every digit that the margins carry: the
#: references themselves fail (Clarabel reported an SVM "unbounded" at C = 1e12, OSQP stalled,
#: C = 1e300 overflowed), so a problem refuses it rather than return a meaningless status.
C_MAX = 1e10
#: Where a problem allows it (the kernel dual, the linear soft margins, the multiclass hinge),
#: weights may put a ``C_i`` up to this above a
#: ``C`` within :data:`C_MAX`: class weights ``"balanced"`` at C = 1e10 reach 1.34e10 on breast
#: cancer and 3e10 at a 5 : 1 imbalance. Measured with auto on RBF duals (γ = 1e-5..10) of
#: iris 50 : 30, breast cancer, digits 3 against 8: every fit certified at 1e-6 up to
#: ``C_i`` = 3e10; at 1e11 breast cancer at γ = 1e-5 ended ``not_certified`` (the allowance
#: 3.1e-6 of |P|), at 1e12 iris too (4.1e-6). The linear soft margins (hinge and squared hinge)
#: certified breast cancer, digits, iris and wine with balanced weights at C = 1e10.
C_WEIGHTED_MAX = 3e10


def check_C_range(C: float, sample_weight: np.ndarray | None, weighted: bool = False) -> None:
    """Refuse ``C > C_MAX`` and ``max_i C_i > C_MAX`` (``C_i = C · sample_weight_i``; with
    ``weighted``, :data:`C_WEIGHTED_MAX`) with a message naming ``C``, ``sample_weight`` and
    the range."""
    weighted_max = C_WEIGHTED_MAX if weighted else C_MAX
    largest = C * (1.0 if sample_weight is None else float(np.max(sample_weight, initial=0.0)))
    if C > C_MAX or largest > weighted_max:
        what = "C" if sample_weight is None or C > C_MAX else "C · sample_weight"
        limit = C_MAX if what == "C" else weighted_max
        raise ValueError(
            f"{what} must be at most {limit:g} (got a largest C_i of {largest:.3g}): beyond "
            "it the objective and its duality gap cannot be computed in double precision; "
            "rescale C (the optimum's w only depends on C through the loss weights)"
        )


#: The largest ``max C_i · max ‖x̃_i‖²`` a linear problem accepts (x̃_i with the bias feature
#: for a regularized bias). The quantity is invariant under a rescaling of the features (which
#: moves C by the inverse square); at the optimum ``w = Σ α_i y_i x_i`` cancels terms up to this
#: factor larger than itself, so the certificate loses the digits the gap needs. On overlapping
#: data every linear solver certified 1e-6 up to 2e23 and none from 2e24 (docs/measurements.md).
MAX_C_TIMES_SQUARED_NORM = 1e23


def squared_row_norms(X) -> np.ndarray:
    """``‖x_i‖²`` of each row of a dense or CSR matrix."""
    with np.errstate(over="ignore"):
        if sparse.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1)).ravel()
        return np.einsum("ij,ij->i", X, X)


def check_linear_conditioning(
    C: float, sample_weight: np.ndarray | None, X, bias: str, bias_scale: float
) -> None:
    """Refuse ``max C_i · max ‖x̃_i‖²`` above :data:`MAX_C_TIMES_SQUARED_NORM`, naming the data's
    scale, C and what to do instead (the kernel dual's rule, for the linear views)."""
    if X.shape[0] == 0:
        return
    largest = C * (1.0 if sample_weight is None else float(np.max(sample_weight, initial=0.0)))
    norm = float(np.max(squared_row_norms(X)))
    if bias == "regularized":
        norm += bias_scale**2
    if largest * norm > MAX_C_TIMES_SQUARED_NORM:
        raise ValueError(
            f"X: C · max ‖x_i‖² = {largest:.3g} · {norm:.3g} = {largest * norm:.3g} is over "
            f"{MAX_C_TIMES_SQUARED_NORM:g}, beyond which no duality gap can be certified in "
            "double precision; scale the features down (e.g. StandardScaler) or use C ≤ "
            f"{MAX_C_TIMES_SQUARED_NORM / norm:.3g} for these data (C=inf in the estimators "
            "for a hard margin)"
        )


def per_example_C(C: float, sample_weight: np.ndarray | None, n_samples: int) -> np.ndarray:
    """``C_i = C · sample_weight_i`` (all ``C`` without weights), a new array."""
    if sample_weight is None:
        return np.full(n_samples, C, dtype=np.float64)
    sw = sample_weight
    if not (isinstance(sw, np.ndarray) and sw.shape == (n_samples,)):
        sw = np.broadcast_to(sw, (n_samples,))
    return C * sw.astype(np.float64)
