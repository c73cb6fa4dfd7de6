"""One-vs-one decision values as SVC gives them (docs/ARCHITECTURE.md §4).

``decision_function_shape="ovo"``: the pairs' values in LIBSVM's pair order (0, 1), (0, 2), …,
(1, 2), …, each positive for the first class of its pair (:func:`pair_values`);
``"ovr"``: ``votes_r + c_r / (3(|c_r| + 1))`` with ``c_r`` the summed confidences of class r
(:func:`ovr_from_pairs`), the formula of scikit-learn's private
``sklearn.utils.multiclass._ovr_decision_function``, written here.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from svmbench.problems.models import OneVsOneModel, pair_votes


def canonical_pairs(k: int) -> list[tuple[int, int]]:
    """LIBSVM's pair order: (0, 1), (0, 2), …, (0, k−1), (1, 2), …"""
    return list(_canonical(k))


@cache
def _canonical(k: int) -> tuple[tuple[int, int], ...]:
    return tuple((i, j) for i in range(k) for j in range(i + 1, k))


def pair_order(model: OneVsOneModel) -> list[tuple[int, int]] | None:
    """For each canonical pair, ``(index in model.pairs, sign)``: the sign is −1 where the model
    holds the pair as (j, i), whose decision value is positive for j. None unless the model holds
    every pair once."""
    if model.pairs == _canonical(model.n_classes):  # the reductions' own order
        return [(p, 1.0) for p in range(len(model.pairs))]
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


__all__ = ["canonical_pairs", "ovr_from_pairs", "pair_order", "pair_values"]
