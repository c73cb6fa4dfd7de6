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

One-vs-one decision values in SVC's shapes come from :mod:`svmbench.problems.ovo_values`.
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
)
from svmbench.problems.ovo_values import canonical_pairs, pair_order


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
    its binary problems (a precomputed kernel's pairs hold global indices). Linear pair models
    ``(w, b)`` give ``intercept_`` only (their ``coef_`` is ``w``)."""
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
    masks = [y_index == c for c in range(k)]  # once per class, not twice per pair
    for (i, j), m in zip(pairs, models, strict=True):
        if m.kernel == "precomputed" and m.n_train == y_index.size:
            local.append(m.support)  # a precomputed pair reads the whole training kernel
            continue
        rows = np.flatnonzero(np.logical_or(masks[i], masks[j]))
        if rows.size != m.n_train:  # not the reduction's rows: no layout
            return out
        local.append(rows[m.support])
    # every pair's vectors and coefficients at once: the row of dual_coef_ each goes to (j−1
    # for a class-i vector, i for a class-j one) and its sign-corrected α_t y_t
    index = np.concatenate(local)
    counts = [g.size for g in local]
    first = np.repeat([i for i, _ in pairs], counts)
    target = np.where(y_index[index] == first, np.repeat([j - 1 for _, j in pairs], counts), first)
    coef = np.concatenate([s * m.dual_coef for m, s in zip(models, signs, strict=True)])
    # the union of the pairs' support vectors, by class in classes_ order, by index within one
    # (a mask is read in index order; a stable sort by class keeps it)
    used = np.zeros(y_index.size, dtype=bool)
    used[index] = True
    union = np.flatnonzero(used)
    support = union[np.argsort(y_index[union], kind="stable")]
    position = np.empty(y_index.size, dtype=np.int64)
    position[support] = np.arange(support.size)
    dual = np.zeros((k - 1, support.size))
    dual[target, position[index]] = coef
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
        return _combination(estimator.dual_coef_, estimator.support_vectors_)
    if isinstance(model, OneVsRestModel) and all(isinstance(m, LinearModel) for m in model.models):
        return np.vstack([m.w for m in model.models])
    if isinstance(model, OneVsOneModel):
        order = pair_order(model)
        if order is None:
            return None
        models = [(model.models[p], sign) for p, sign in order]
        if all(isinstance(m, LinearModel) for m, _ in models):
            return np.vstack([sign * m.w for m, sign in models])
        if all(isinstance(m, KernelModel) and m.kernel == "linear" for m, _ in models):
            rows = [_combination(s * m.dual_coef[None, :], m.support_vectors) for m, s in models]
            if sparse.issparse(rows[0]):
                return sparse.vstack(rows, format="csr")
            return np.vstack(rows)
    return None


def _combination(coef, vectors):
    """``coef @ vectors`` (SVC's ``coef_``), an entry within its own rounding error of 0
    (``|c| ≤ 4·n_SV·ε·(|coef| @ |vectors|)``) set to exactly 0: dense and sparse arithmetic
    then agree on the zeros of w, as LIBSVM's identical loops do."""
    w = safe_sparse_dot(coef, vectors)
    scale = safe_sparse_dot(abs(coef), abs(vectors))
    bound = 4.0 * max(1, vectors.shape[0]) * np.finfo(np.float64).eps
    if sparse.issparse(w):
        w = sparse.csr_matrix(w)
        scale = scale.toarray() if sparse.issparse(scale) else np.asarray(scale)
        rows = np.repeat(np.arange(w.shape[0]), np.diff(w.indptr))
        w.data[np.abs(w.data) <= bound * scale[rows, w.indices]] = 0.0
        w.eliminate_zeros()
        return w
    w = np.asarray(w)
    w[np.abs(w) <= bound * np.asarray(scale)] = 0.0
    return w


def with_linear(model, coef, intercept):
    """``model`` with new linear coefficients and intercepts (LinearSVC's assignable ``coef_``
    and ``intercept_``): a linear model, one-vs-rest over linear models or Crammer–Singer."""
    coef = coef.toarray() if sparse.issparse(coef) else np.asarray(coef, dtype=np.float64)
    intercept = np.asarray(intercept, dtype=np.float64).reshape(-1)
    if isinstance(model, LinearModel):
        rows = 1
    elif isinstance(model, CrammerSingerModel | OneVsRestModel):
        rows = model.n_classes
    else:
        raise AttributeError(f"coef_ cannot be set on a {type(model).__name__}")
    d = model.n_features
    if coef.shape != (rows, d) or intercept.shape != (rows,):
        raise ValueError(
            f"coef_ must have shape ({rows}, {d}) and intercept_ ({rows},), got {coef.shape} "
            f"and {intercept.shape}"
        )
    # the model's own class is kept (a logistic model keeps its probabilities)
    if isinstance(model, LinearModel):
        return type(model)(coef[0], float(intercept[0]))
    if isinstance(model, CrammerSingerModel):
        return type(model)(coef, intercept)
    return OneVsRestModel(
        tuple(type(m)(w, float(b)) for m, w, b in zip(model.models, coef, intercept, strict=True)),
        rows,
    )


def iterations(result, model, svc_like: bool):
    """``n_iter_``: as SVC, one count per binary problem (an ndarray: (1,) for two classes,
    (k(k−1)/2,) for one-vs-one, (k,) for one-vs-rest) for the fits SVC makes (``svc_like``);
    as LinearSVC, one int (the largest over the binary problems) for the others."""
    counts = result.info.get("binary_iterations")
    if counts is None:
        counts = (result.iterations,)
    elif isinstance(model, OneVsOneModel) and (order := pair_order(model)) is not None:
        counts = [counts[p] for p, _ in order]
    if svc_like:
        return np.asarray(counts, dtype=np.int64)
    return int(max(counts))


__all__ = [
    "iterations",
    "linear_coef",
    "support_layout",
    "with_linear",
]
