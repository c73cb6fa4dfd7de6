"""Fitted models: what a solution predicts with, self-contained, picklable and saved to disk.

Every :class:`~svmbench.solvers.base.SolveResult` carries one (``result.model``), built by its
problem (``Problem.model_from``) or by a reduction from its binary models:

- :class:`LinearModel` ``f(x) = w·x + b`` (every linear binary problem; dense or CSR ``X``);
- :class:`KernelModel` ``f(x) = Σ_{j ∈ SV} α_j y_j K(x_j, x) + b``, holding only the support
  vectors (for a precomputed kernel, ``X`` is the kernel against the training set);
- :class:`CrammerSingerModel` scores ``f_r(x) = w_r·x + b_r``;
- :class:`OneVsRestModel` and :class:`OneVsOneModel` over any binary models;
- :class:`ChainModel` for chain-structured outputs, decoded by Viterbi.

Binary models predict ±1 (``f(x) ≥ 0`` → +1); multiclass ones predict class indices 0..k−1.
Label encoding (strings, {1, 2}, …) is the estimator's job (:mod:`svmbench.estimators`).

Saving to disk and the file format: :mod:`~svmbench.problems.model_files`.
"""

from __future__ import annotations

import abc
import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import sparse

from svmbench.problems.chain_decoding import viterbi
from svmbench.problems.kernels import KERNELS, kernel_dot, squared_norms
from svmbench.problems.validation import check_int, check_option, check_real


def _check_X(X, n_features: int, what: str = "features"):
    """Dense float64 or CSR ``X`` with ``n_features`` columns (ValueError naming ``X``)."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X.reshape(1, -1)
    if X.ndim != 2 or X.shape[1] != n_features:
        raise ValueError(
            f"X must have {n_features} {what} (columns), got an array of shape {X.shape}"
        )
    if not np.all(np.isfinite(X.data if sparse.issparse(X) else X)):
        raise ValueError("X must contain only finite values")
    return X


def _finite_scores(scores: np.ndarray, model: Model) -> np.ndarray:
    """``scores``, when finite: a prediction is never read from NaN (which compares as −1)."""
    if not np.all(np.isfinite(scores)):
        raise ValueError(
            f"the decision values of the {type(model).__name__} overflow to NaN or infinity on "
            "some rows of X: X or the model's numbers are too large"
        )
    return scores


def _sparse_columns_dot(K: sparse.csr_matrix, columns: np.ndarray, coef: np.ndarray):
    """``K[:, columns] @ coef`` in O(nnz(K) log |columns|) time and memory: nothing of the
    size of K's width (a test kernel against 10⁹ training examples is fine as CSR)."""
    unique, where = np.unique(columns, return_inverse=True)
    weight = np.bincount(where.ravel(), weights=coef, minlength=unique.size)
    at = np.minimum(np.searchsorted(unique, K.indices), max(unique.size - 1, 0))
    hit = unique[at] == K.indices if unique.size else np.zeros(K.indices.size, dtype=bool)
    terms = np.where(hit, K.data * weight[at] if unique.size else 0.0, 0.0)
    rows = np.repeat(np.arange(K.shape[0]), np.diff(K.indptr))
    return np.bincount(rows, weights=terms, minlength=K.shape[0])


def finite(*values) -> bool:
    """True when every given value (scalar, array or None, which is skipped) is finite: the
    problems build no model from a NaN or infinite point."""
    for v in values:
        if v is None:
            continue
        if type(v) is float:  # a bias: no array built for one number
            if not math.isfinite(v):
                return False
        elif not np.isfinite(np.asarray(v, dtype=np.float64)).all():
            return False
    return True


def _scalar(name: str, value) -> float:
    """A finite float (a NumPy scalar or one-element array is accepted)."""
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.item()
    return check_real(name, value)


def _vector(name: str, value, length: int | None = None) -> np.ndarray:
    """``value`` as a new contiguous 1-D float64 array (a row or column matrix is flattened):
    a model shares no memory with the solver's iterates."""
    v = np.asarray(value, dtype=np.float64)
    if v.ndim > 1 and sum(s != 1 for s in v.shape) <= 1:
        v = v.ravel()
    if v.ndim != 1 or (length is not None and v.shape[0] != length):
        want = "a 1-D array" if length is None else f"a 1-D array of length {length}"
        raise ValueError(f"{name} must be {want}, got shape {v.shape}")
    return np.array(v, dtype=np.float64, order="C")


class Model(abc.ABC):
    """Base of the models: ``decision_function(X)`` and ``predict(X)``."""

    kind: ClassVar[str]

    @property
    @abc.abstractmethod
    def n_features(self) -> int:
        """Columns ``X`` must have (for a precomputed kernel: training examples)."""

    @abc.abstractmethod
    def decision_function(self, X) -> np.ndarray: ...

    @abc.abstractmethod
    def predict(self, X) -> np.ndarray: ...


class BinaryModel(Model):
    """A binary model: ``predict`` is the sign of the decision function (0 counts as +1)."""

    n_classes: ClassVar[int] = 2

    def predict(self, X) -> np.ndarray:
        """``+1.0`` where ``f(x) ≥ 0``, else ``-1.0``: ndarray of shape (n_samples,)."""
        return np.where(self.decision_function(X) >= 0.0, 1.0, -1.0)


class MulticlassModel(Model):
    """A multiclass model: ``decision_function`` is (n, k); ``predict`` its argmax."""

    n_classes: int

    def predict(self, X) -> np.ndarray:
        """The class index ``argmax_r F[:, r]`` of each row: int ndarray of shape (n_samples,)."""
        return np.argmax(self.decision_function(X), axis=1)


@dataclass(frozen=True, eq=False)
class LinearModel(BinaryModel):
    """``f(x) = w·x + b``.

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    b : float, default=0.0
        The intercept (for a regularized bias, ``s·w_b``).
    """

    kind: ClassVar[str] = "linear"
    w: np.ndarray
    b: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "w", _vector("w", self.w))
        object.__setattr__(self, "b", _scalar("b", self.b))

    @property
    def n_features(self) -> int:
        return self.w.shape[0]

    def decision_function(self, X) -> np.ndarray:
        """``f(x_i) = w·x_i + b`` for each row of ``X`` (ndarray or CSR, n_features columns)."""
        X = _check_X(X, self.n_features)
        return _finite_scores(np.asarray(X @ self.w).ravel() + self.b, self)


@dataclass(frozen=True, eq=False)
class KernelModel(BinaryModel):
    """``f(x) = Σ_{j ∈ SV} c_j K(x_j, x) + b`` with ``c_j = α_j y_j``, over the support vectors
    only (the rows with ``α_j ≠ 0``).

    Parameters
    ----------
    support_vectors : ndarray or CSR of shape (n_SV, n_features), or None
        The support vectors, dense or CSR as the problem had them; None for a precomputed kernel.
    dual_coef : ndarray of shape (n_SV,)
        ``α_j y_j`` of the support vectors.
    b : float
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}
    support : ndarray of int of shape (n_SV,)
        Indices of the support vectors in the training set.
    n_train : int
        Training-set size (the columns of a precomputed test kernel).
    gamma, degree, coef0
        As in :class:`~svmbench.problems.KernelDual` (gamma already resolved to a number).

    For ``kernel="precomputed"``, ``decision_function`` takes the (n_test, n_train) kernel
    ``K(x, x_i)`` against the whole training set and reads its ``support`` columns.
    """

    kind: ClassVar[str] = "kernel"
    support_vectors: Any
    dual_coef: np.ndarray
    b: float
    kernel: str
    support: np.ndarray
    n_train: int
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0

    def __post_init__(self):
        check_option("kernel", self.kernel, KERNELS)
        coef = _vector("dual_coef", self.dual_coef)
        support = np.asarray(self.support)
        if support.shape != coef.shape or (support.size and support.dtype.kind not in "iu"):
            raise ValueError(
                f"support must be {coef.size} integer indices (one per dual_coef), got "
                f"{support.dtype} of shape {support.shape}"
            )
        n_train = check_int("n_train", self.n_train, low=0)
        if support.size and (support.min() < 0 or support.max() >= n_train):
            raise ValueError(f"support must hold indices in [0, n_train={n_train})")
        sv = self.support_vectors
        if self.kernel == "precomputed":
            if sv is not None:
                raise ValueError("support_vectors must be None for a precomputed kernel")
        elif sv is None:
            raise ValueError(f"support_vectors are needed for kernel={self.kernel!r}")
        else:
            sv = (
                sparse.csr_matrix(sv, dtype=np.float64)
                if sparse.issparse(sv)
                else np.ascontiguousarray(sv, dtype=np.float64)
            )
            if sv.ndim != 2 or sv.shape[0] != coef.size:
                raise ValueError(
                    f"support_vectors must have one row per dual_coef ({coef.size}), got shape "
                    f"{sv.shape}"
                )
        object.__setattr__(self, "support_vectors", sv)
        object.__setattr__(self, "dual_coef", coef)
        object.__setattr__(self, "support", support.astype(np.int64))
        object.__setattr__(self, "n_train", n_train)
        object.__setattr__(self, "b", _scalar("b", self.b))
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, low=0.0, closed="left"))
        object.__setattr__(self, "degree", check_int("degree", self.degree, low=1))
        object.__setattr__(self, "coef0", check_real("coef0", self.coef0))

    @classmethod
    def of_checked(cls, support_vectors, dual_coef, b, kernel, support, n_train, gamma, degree,
                   coef0) -> KernelModel:  # fmt: skip
        """The model of a problem's own checked numbers, taken as they are (no checks, no
        copies): ``support_vectors`` rows of its float64 X (None for a precomputed kernel),
        ``dual_coef`` float64, ``support`` int64 indices in ``[0, n_train)``, ``b`` a finite
        float and the kernel parameters the problem validated. Anything else: the
        constructor."""
        model = object.__new__(cls)
        fields = dict(
            support_vectors=support_vectors, dual_coef=dual_coef, b=b, kernel=kernel,
            support=support, n_train=n_train, gamma=gamma, degree=degree, coef0=coef0,
        )  # fmt: skip
        for name, value in fields.items():
            object.__setattr__(model, name, value)
        return model

    @property
    def n_features(self) -> int:
        if self.kernel == "precomputed":
            return self.n_train
        return self.support_vectors.shape[1]

    @property
    def kernel_params(self) -> dict[str, Any]:
        return dict(kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0)

    def decision_function(self, X) -> np.ndarray:
        """``f(x_i) = Σ_j c_j K(x_j, x_i) + b`` for each row of ``X``, in row blocks of bounded
        memory (:func:`~svmbench.problems.kernels.kernel_dot`)."""
        if self.kernel == "precomputed":
            K = _check_X(X, self.n_train, "training examples (a kernel against the training set)")
            if sparse.issparse(K):
                f = _sparse_columns_dot(K, self.support, self.dual_coef) + self.b
            else:
                f = K[:, self.support] @ self.dual_coef + self.b
            return _finite_scores(f, self)
        return self.checked_decision_function(_check_X(X, self.n_features))

    def checked_decision_function(self, X, sqn_X: np.ndarray | None = None) -> np.ndarray:
        """:meth:`decision_function` of rows ``X`` that ``_check_X`` returned already (a
        one-vs-one model checks its X once for all its pairs), ``sqn_X`` their squared norms
        if known (RBF); not for a precomputed kernel."""
        if self.dual_coef.size == 0:
            return np.full(X.shape[0], self.b)
        f = kernel_dot(
            X, self.support_vectors, self.dual_coef, **self.kernel_params, sqn_X=sqn_X
        )  # fmt: skip
        return _finite_scores(f + self.b, self)


@dataclass(frozen=True, eq=False)
class CrammerSingerModel(MulticlassModel):
    """Scores ``f_r(x) = w_r·x + b_r``; the prediction is ``argmax_r f_r(x)``.

    Parameters
    ----------
    W : ndarray of shape (n_classes, n_features)
    b : ndarray of shape (n_classes,)
        Zeros for ``bias="none"``; ``s·w_{r,b}`` for a regularized bias.
    """

    kind: ClassVar[str] = "crammer_singer"
    W: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        W = np.array(self.W, dtype=np.float64, order="C")
        if W.ndim != 2 or W.shape[0] < 2:
            raise ValueError(f"W must have shape (n_classes >= 2, n_features), got {W.shape}")
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "b", _vector("b", self.b, W.shape[0]))

    @property
    def n_features(self) -> int:
        return self.W.shape[1]

    @property
    def n_classes(self) -> int:
        return self.W.shape[0]

    def decision_function(self, X) -> np.ndarray:
        """``F = X Wᵀ + b``: ndarray of shape (n_samples, n_classes)."""
        X = _check_X(X, self.n_features)
        return _finite_scores(np.asarray(X @ self.W.T) + self.b, self)


def _values_of(models, X) -> np.ndarray:
    """The decision values of the binary ``models`` on the rows of ``X``, one column each. Over
    kernel models (not precomputed) X is checked once for all of them, with their words, and
    the rows' squared norms computed once for RBF models; any other model checks X itself."""
    if not all(type(m) is KernelModel and m.kernel != "precomputed" for m in models):
        return np.column_stack([m.decision_function(X) for m in models])
    X = _check_X(X, models[0].n_features)
    dense_rbf = not sparse.issparse(X) and all(m.kernel == "rbf" for m in models)
    if dense_rbf:  # the norms of the rows the products read (C order, as kernel_dot's)
        X = np.ascontiguousarray(X)
    sqn_X = squared_norms(X) if dense_rbf else None
    values = np.empty((X.shape[0], len(models)))
    for p, m in enumerate(models):
        values[:, p] = m.checked_decision_function(X, sqn_X)
    return values


def _check_binary_models(models, n: int, what: str) -> tuple[BinaryModel, ...]:
    models = tuple(models)
    if len(models) != n:
        raise ValueError(f"models must hold {n} binary models ({what}), got {len(models)}")
    for m in models:
        if not isinstance(m, BinaryModel):
            raise TypeError(f"models must be binary models, got {type(m).__name__}")
    widths = {m.n_features for m in models}
    if len(widths) > 1:
        raise ValueError(f"models must all take the same number of features, got {widths}")
    return models


@dataclass(frozen=True, eq=False)
class OneVsRestModel(MulticlassModel):
    """k binary models "class r against the rest"; the scores are their decision values
    ``F[:, r] = f_r(x)`` and the prediction is their argmax.

    Parameters
    ----------
    models : tuple of BinaryModel, of length n_classes
        Any binary models (linear or kernel).
    n_classes : int
    """

    kind: ClassVar[str] = "ovr"
    models: tuple[BinaryModel, ...]
    n_classes: int

    def __post_init__(self):
        k = check_int("n_classes", self.n_classes, low=2)
        object.__setattr__(self, "n_classes", k)
        object.__setattr__(self, "models", _check_binary_models(self.models, k, "one per class"))

    @property
    def n_features(self) -> int:
        return self.models[0].n_features

    def decision_function(self, X) -> np.ndarray:
        """``F[:, r] = f_r(x)``: ndarray of shape (n_samples, n_classes)."""
        return _values_of(self.models, X)


@dataclass(frozen=True, eq=False)
class OneVsOneModel(MulticlassModel):
    """k(k−1)/2 binary models "class i against class j" (i < j; ``f > 0`` votes for i).

    The prediction is the majority vote. Ties: ``tie_break="first"`` (default) gives the lowest
    class index, as LIBSVM and scikit-learn's SVC predict; ``"confidence"`` the largest summed
    confidence ``c_r = Σ_j ±f_rj(x)`` (the lecture notes' rule). The scores are the votes plus a
    term in (−⅓, ⅓) that encodes the tie rule, ``(k−1−r)/(3k)`` or ``c_r / (3(|c_r| + 1))``,
    so that their argmax is the prediction. ``pair_decision_function`` gives the pairs' own
    values, which the estimator shapes as scikit-learn's SVC does.

    Parameters
    ----------
    models : tuple of BinaryModel
        One per pair, in the order of ``pairs``.
    pairs : tuple of (int, int)
        The classes ``(i, j)`` of each model, ``0 ≤ i, j < n_classes``, ``i ≠ j``.
    n_classes : int
    tie_break : {"first", "confidence"}, default="first"
    """

    kind: ClassVar[str] = "ovo"
    models: tuple[BinaryModel, ...]
    pairs: tuple[tuple[int, int], ...]
    n_classes: int
    tie_break: str = "first"

    def __post_init__(self):
        k = check_int("n_classes", self.n_classes, low=2)
        try:
            pairs = tuple((int(i), int(j)) for i, j in self.pairs)
        except (TypeError, ValueError):
            raise ValueError(f"pairs must be pairs of class indices, got {self.pairs!r}") from None
        if any(not (0 <= i < k and 0 <= j < k) or i == j for i, j in pairs):
            raise ValueError(f"pairs must be pairs of distinct classes in [0, {k}), got {pairs}")
        object.__setattr__(self, "n_classes", k)
        object.__setattr__(self, "pairs", pairs)
        models = _check_binary_models(self.models, len(pairs), "one per pair")
        object.__setattr__(self, "models", models)
        check_option("tie_break", self.tie_break, ("first", "confidence"))

    @property
    def n_features(self) -> int:
        return self.models[0].n_features

    def pair_decision_function(self, X) -> np.ndarray:
        """The binary decision values ``f_p(x)`` of the pairs, in the order of ``pairs``, each
        positive for the first class of its pair: ndarray of shape (n_samples, n_pairs)."""
        return _values_of(self.models, X)

    def decision_function(self, X) -> np.ndarray:
        """Votes plus the tie-break term in (−⅓, ⅓): ndarray of shape (n_samples, n_classes)."""
        values = self.pair_decision_function(X)
        votes, conf = pair_votes(values, self.pairs, self.n_classes, zero_votes_first=False)
        if self.tie_break == "first":
            k = self.n_classes
            return votes + (k - 1 - np.arange(k)) / (3.0 * k)
        return votes + conf / (3.0 * (np.abs(conf) + 1.0))

    def predict(self, X) -> np.ndarray:
        """The argmax of :meth:`decision_function`; with ``tie_break="first"`` the argmax of the
        votes alone (the first of the classes with most votes, which the term in (0, ⅓) that
        decreases with the class index picks too)."""
        if self.tie_break != "first":
            return super().predict(X)
        values = self.pair_decision_function(X)
        votes = np.zeros((values.shape[0], self.n_classes), dtype=np.intp)
        for p, (i, j) in enumerate(self.pairs):
            first = values[:, p] > 0
            votes[:, i] += first
            votes[:, j] += ~first
        return np.argmax(votes, axis=1)


def pair_votes(values: np.ndarray, pairs, k: int, *, zero_votes_first: bool):
    """The votes and the summed confidences of k classes from the decision values of their pairs
    (column p positive for the first class of ``pairs[p]``): two ndarrays of shape (n, k). A
    value of exactly 0 votes for the first class with ``zero_votes_first`` (scikit-learn's
    count), for the second otherwise."""
    votes = np.zeros((values.shape[0], k))
    conf = np.zeros_like(votes)
    for p, (i, j) in enumerate(pairs):
        f = values[:, p]
        first = f >= 0 if zero_votes_first else f > 0
        votes[:, i] += first
        votes[:, j] += ~first
        conf[:, i] += f
        conf[:, j] -= f
    return votes, conf


@dataclass(frozen=True, eq=False)
class ChainModel(Model):
    """Chain-structured labelling: emission weights E (q, d) and transitions T (q, q) (or None).

    A sequence ``x_1..x_r`` gets ``argmax_y Σ_t e_{y_t}·x_t / r + Σ_{t≥2} T[y_t, y_{t−1}] / r``,
    decoded exactly by Viterbi (:func:`~svmbench.problems.chain_decoding.viterbi`), scores scaled by
    1/r as in :class:`~svmbench.problems.ChainStructuredHinge`.

    Parameters
    ----------
    E : ndarray of shape (n_states, n_features)
    T : ndarray of shape (n_states, n_states) or None, default=None
        ``T[s, s']``: the weight of state s following s'. None: independent positions.
    """

    kind: ClassVar[str] = "chain"
    E: np.ndarray
    T: np.ndarray | None = None

    def __post_init__(self):
        E = np.array(self.E, dtype=np.float64, order="C")
        if E.ndim != 2 or E.shape[0] < 2:
            raise ValueError(f"E must have shape (n_states >= 2, n_features), got {E.shape}")
        object.__setattr__(self, "E", E)
        if self.T is not None:
            T = np.array(self.T, dtype=np.float64, order="C")
            if T.shape != (E.shape[0],) * 2:
                raise ValueError(f"T must have shape {(E.shape[0],) * 2}, got {T.shape}")
            object.__setattr__(self, "T", T)

    @property
    def n_features(self) -> int:
        return self.E.shape[1]

    @property
    def n_states(self) -> int:
        return self.E.shape[0]

    def decision_function(self, X) -> np.ndarray:
        """Per-position emission scores ``x_t·e_s`` (n_positions, q), without transitions."""
        return _finite_scores(np.asarray(_check_X(X, self.n_features) @ self.E.T), self)

    def predict(self, X, lengths=None) -> np.ndarray:
        """Viterbi labels (int, 0..q−1) of every sequence of ``X`` cut by ``lengths`` (one
        sequence if None), concatenated: ndarray of shape (n_positions,)."""
        X = _check_X(X, self.n_features)
        lengths = np.array([X.shape[0]]) if lengths is None else np.asarray(lengths, dtype=int)
        if lengths.ndim != 1 or np.any(lengths < 1) or lengths.sum() != X.shape[0]:
            raise ValueError(
                f"lengths must be positive and sum to the {X.shape[0]} rows of X, got {lengths}"
            )
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        out = []
        for a, b in itertools.pairwise(offsets):
            r = b - a
            S = _finite_scores(np.asarray(X[a:b] @ self.E.T) / r, self)
            out.append(viterbi(S, None if self.T is None else self.T / r)[0])
        return np.concatenate(out)


__all__ = [
    "BinaryModel",
    "ChainModel",
    "CrammerSingerModel",
    "KernelModel",
    "LinearModel",
    "Model",
    "MulticlassModel",
    "OneVsOneModel",
    "OneVsRestModel",
    "finite",
    "pair_votes",
]
