"""Working-set selection of the batched SMO (:mod:`solvers.smo_batch`, whose docstring states the
rule): the ``q/2`` variables that entered the working set last are kept and the most violating
active others taken in, by maximal violating pairs (Fan, Chen & Lin, JMLR 6, 2005) with a free
bias, by the largest projected gradients ``|PG_t|`` without the equality. The scores come from
one jitted pass (``pair_scores``, ``single_scores``) and the merge of the kept half with the
candidates from ``merge_candidates``, all in :mod:`solvers._jit.smo_batch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from svmbench.solvers._jit import smo_batch as jit

if TYPE_CHECKING:
    from svmbench.solvers.smo_batch import State


def select_working_set(s: State) -> float:
    """Fill ``s.ws[:s.m]`` (kept half first) and return the outer violation."""
    act, q = s.act, s.q
    n = act.shape[0]
    if n == 0:  # everything shrunk
        s.m = 0
        return 0.0
    keep = s.ws[max(0, s.m - q // 2) : s.m]
    keep = np.ascontiguousarray(keep[s.is_active[keep]])
    k = min(q, n)
    if s.pairs:
        su, sl = s.score_a[:n], s.score_b[:n]
        top_u, top_l = jit.pair_scores(act, s.y_a, s.alpha, s.C, s.G, su, sl)
        violation = top_u + top_l  # m(α) − M(α)
        cu, cl = _top(su, k), _top(sl, k)
        s.m = jit.merge_candidates(
            keep, keep.shape[0], act[cu], su[cu], act[cl], sl[cl], -top_l, -top_u, q,
            s.in_ws, s.ws,
        )  # fmt: skip
    else:
        pg = s.score_a[:n]
        violation = jit.single_scores(act, s.alpha, s.C, s.G, pg)
        cu = _top(pg, k)
        empty = np.empty(0, dtype=np.int64)
        s.m = jit.merge_candidates(
            keep, keep.shape[0], act[cu], pg[cu], empty, np.empty(0), 0.0, -np.inf, q,
            s.in_ws, s.ws,
        )  # fmt: skip
    return float(violation) if np.isfinite(violation) else 0.0


def _top(score: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest finite scores, in decreasing order (ties by index)."""
    finite = np.flatnonzero(np.isfinite(score))
    if finite.size > k:
        part = np.argpartition(-score[finite], k - 1)[:k]
        finite = finite[part]
    order = np.lexsort((finite, -score[finite]))
    return np.ascontiguousarray(finite[order], dtype=np.int64)
