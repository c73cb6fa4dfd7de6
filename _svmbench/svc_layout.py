"""SVC's fitted attributes from a model: what scikit-learn's ``SVC`` (and ``LinearSVC``) expose
after ``fit``, computed from an svmbench model (docs/ARCHITECTURE.md §4).

LIBSVM's one-vs-one layout, which SVC exposes unchanged for k ≥ 3 classes:

- ``support_``: the union of the support vectors of every pair, grouped by class in ``classes_``
  order, by index within a class; ``n_support_[c]`` counts those of class c (by label);
- ``dual_coef_`` of shape (k−1, n_SV): for the pair (i, j), i < j, the coefficients ``α_t y_t``
  (``y_t = +1`` for class i) of the class-i vectors go in row j−1, those of the class-j vectors in
  row i; a vector that is no support vector of a pair has 0 there;
- ``intercept_`` of shape (k(k−1)/2,) in the pair order (0, 1), (0, 2), …, (1, 2), …: the pair's
  ``b``, so that its decision value is ``Σ_t dual_coef K(x_t, x) + b``, positive for class i.

Two classes: one row, ``α_t y_t`` with ``y_t = +1`` for ``classes_[1]`` (SVC flips LIBSVM's signs
so that its positive class is ``classes_[1]``, as ours is), ``intercept_ = [b]``.

One-vs-one decision values in SVC's ``decision_function_shape="ovr"`` (:func:`ovr_from_pairs`):
``votes_r + c_r / (3(|c_r| + 1))`` with ``c_r`` the summed confidences of class r, the formula
of scikit-learn's private ``sklearn.utils.multiclass._ovr_decision_function``, written here.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.utils.extmath import safe_sparse_dot

from svmbench.problems.models import (
    CrammerSingerModel,
    KernelModel,
    LinearModel,
    OneVsOneModel,
    OneVsRestModel,
    pair_votes,
)


def canonical_pairs(k: int) -> list[tuple[int, int]]:
    """LIBSVM's pair order: (0, 1), (0, 2), …, (0, k−1), (1, 2), …"""
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def pair_order(model: OneVsOneModel) -> list[tuple[int, int]] | None:
    """For each canonical pair, ``(index in model.pairs, sign)``: the sign is −1 where the model
    holds the pair as (j, i), whose decision value is positive for j. None unless the model holds
    every pair once."""
    where = {}
    for p, (i, j) in enumerate(model.pairs):
        key = (min(i, j), max(i, j))
        if key in where:
            return None
        where[key] = (p, 1.0 if i < j else -1.0)
    pairs = canonical_pairs(model.n_classes)
    if set(where) != set(pairs):
        return None
    return [where[pair] for pair in pairs]


def pair_values(model: OneVsOneModel, X) -> np.ndarray:
    """SVC's ``decision_function_shape="ovo"``: (n, k(k−1)/2), canonical pair order, positive
    for the first class of the pair."""
    order = pair_order(model)
    if order is None:
        raise ValueError("the one-vs-one model does not hold every pair of classes once")
    values = model.pair_decision_function(X)
    return np.column_stack([sign * values[:, p] for p, sign in order])


def ovr_from_pairs(values: np.ndarray, k: int) -> np.ndarray:
    """SVC's ``decision_function_shape="ovr"`` from the pair values: the votes (a pair's value
    ``≥ 0`` votes for its first class, as scikit-learn counts) plus the summed confidences
    scaled into (−1/3, 1/3), ``c / (3(|c| + 1))``, which order classes of equal votes and never
    overturn a difference of one vote."""
    votes, conf = pair_votes(values, canonical_pairs(k), k, zero_votes_first=True)
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


def support_layout(model, result, problem, X, y_index, k: int, precomputed: bool) -> dict:
    """``support_``, ``support_vectors_``, ``dual_coef_``, ``n_support_`` and ``intercept_`` as
    SVC lays them out, from a binary kernel model (or a linear one solved in the dual, whose α is
    in ``result.alpha``) or a one-vs-one model over kernel models; ``intercept_`` alone for the
    other models that have one; ``{}`` for the rest. ``y_index``: the class of each row of ``X``
    (0..k−1, the estimator's encoding); ``problem`` the problem solved (its ``y`` in ±1, binary)."""
    out: dict = {}
    if isinstance(model, LinearModel | KernelModel):
        out["intercept_"] = np.array([model.b])
    elif isinstance(model, CrammerSingerModel):
        out["intercept_"] = model.b.copy()
    elif isinstance(model, OneVsRestModel):
        out["intercept_"] = np.array([m.b for m in model.models])
    if isinstance(model, KernelModel):
        support, coef = model.support, model.dual_coef
    elif isinstance(model, LinearModel) and result.alpha is not None and k == 2:
        support = np.flatnonzero(result.alpha)
        coef = result.alpha[support] * problem.y[support]
    elif isinstance(model, OneVsOneModel):
        return {**out, **_one_vs_one(model, X, y_index, k)}
    else:
        return out
    # the support vectors of classes_[0] (y = −1), then those of classes_[1], counted by their
    # labels (not by the sign of α_i y_i, which rounding can flip)
    order = np.lexsort((support, y_index[support]))
    support = support[order]
    out.update(
        support_=support.astype(np.int32),
        dual_coef_=_like(X, coef[order][None, :]),
        support_vectors_=np.empty((0, 0)) if precomputed else X[support],
        n_support_=np.bincount(y_index[support], minlength=2).astype(np.int32),
    )
    return out


def _like(X, dense: np.ndarray):
    """``dense`` as CSR when ``X`` is sparse (SVC's dual_coef_ after a sparse fit)."""
    return sparse.csr_matrix(dense) if sparse.issparse(X) else dense


def _one_vs_one(model: OneVsOneModel, X, y_index, k: int) -> dict:
    """LIBSVM's layout over the pairs' kernel models (see the module docstring); the pairs'
    support indices are local to the rows of their two classes, as the ``ovo`` reduction builds
    its binary problems. Linear pair models give ``intercept_`` only (their ``coef_`` is ``w``)."""
    order = pair_order(model)
    if order is None:
        return {}
    pairs = canonical_pairs(k)
    models = [model.models[p] for p, _ in order]
    signs = [sign for _, sign in order]
    out = {"intercept_": np.array([s * m.b for m, s in zip(models, signs, strict=True)])}
    if not all(isinstance(m, KernelModel) for m in models):
        return out
    local = []
    for (i, j), m in zip(pairs, models, strict=True):
        rows = np.flatnonzero((y_index == i) | (y_index == j))
        if rows.size != m.n_train:  # not the reduction's rows: no layout
            return out
        local.append(rows[m.support])
    union = np.unique(np.concatenate(local)) if local else np.empty(0, dtype=np.int64)
    support = union[np.lexsort((union, y_index[union]))]
    position = np.empty(y_index.size, dtype=np.int64)
    position[support] = np.arange(support.size)
    dual = np.zeros((k - 1, support.size))
    for (i, j), m, s, g in zip(pairs, models, signs, local, strict=True):
        of_i = y_index[g] == i
        dual[j - 1, position[g[of_i]]] = s * m.dual_coef[of_i]
        dual[i, position[g[~of_i]]] = s * m.dual_coef[~of_i]
    precomputed = models[0].kernel == "precomputed"
    out.update(
        support_=support.astype(np.int32),
        dual_coef_=_like(X, dual),
        support_vectors_=np.empty((0, 0)) if precomputed else X[support],
        n_support_=np.bincount(y_index[support], minlength=k).astype(np.int32),
    )
    return out


def linear_coef(estimator):
    """The fitted linear coefficients of ``estimator`` (an SVMClassifier), or None: ``w`` of
    linear models (rows as ``intercept_``), ``dual_coef_ @ support_vectors_`` of a binary
    linear-kernel model, as SVC computes it (sparse after a sparse fit)."""
    model = estimator.model_
    if isinstance(model, LinearModel):
        return model.w[None, :]
    if isinstance(model, CrammerSingerModel):
        return model.W[...]
    if isinstance(model, KernelModel) and model.kernel == "linear":
        return safe_sparse_dot(estimator.dual_coef_, estimator.support_vectors_)
    if isinstance(model, OneVsRestModel) and all(isinstance(m, LinearModel) for m in model.models):
        return np.vstack([m.w for m in model.models])
    if isinstance(model, OneVsOneModel) and all(isinstance(m, LinearModel) for m in model.models):
        order = pair_order(model)
        if order is not None:
            return np.vstack([sign * model.models[p].w for p, sign in order])
    return None


def iterations(result, model, kernel: str):
    """``n_iter_``: as SVC, one count per binary problem (an ndarray: (1,) for two classes,
    (k(k−1)/2,) for one-vs-one, (k,) for one-vs-rest) for a kernel other than linear and for
    one-vs-one; as LinearSVC, one int (the largest over the binary problems) for the linear
    kernel's binary, one-vs-rest and Crammer–Singer fits."""
    counts = result.info.get("binary_iterations")
    if counts is None:
        counts = (result.iterations,)
    elif isinstance(model, OneVsOneModel) and (order := pair_order(model)) is not None:
        counts = [counts[p] for p, _ in order]
    if kernel != "linear" or isinstance(model, OneVsOneModel):
        return np.asarray(counts, dtype=np.int64)
    return int(max(counts))


__all__ = [
    "canonical_pairs",
    "iterations",
    "linear_coef",
    "ovr_from_pairs",
    "pair_order",
    "pair_values",
    "support_layout",
]
