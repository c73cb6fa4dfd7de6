"""The Ranking SVM (Joachims, KDD 2002), reduced to a linear binary SVM with no bias.

For a query q, a preference "d₁ is more relevant than d₂" asks ``a·Φ(q, d₁) > a·Φ(q, d₂)``, i.e.
``a·(Φ(q, d₁) − Φ(q, d₂)) > 0``; with margins and slacks (the lecture's formulation)::

    min_a ½‖a‖² + C Σ_e ξ_e   s.t.  a·(Φ(q, d₁) − Φ(q, d₂)) ≥ 1 − ξ_e  for every e = (q, d₁, d₂).

Each pair becomes the difference vector ``x_e = Φ(q, d₁) − Φ(q, d₂)`` with label +1. The binary
problems need both classes, so the set is symmetrized: each pair also appears as ``−x_e`` with
label −1. Both copies have the same margin ``y·a·x = a·x_e``, so the symmetrized problem is the
one above with C doubled on each pair; :func:`ranking_problem` therefore gives each copy the
weight C/2, and its optimum is exactly the Ranking SVM's. There is no bias: a constant shift of
the scores cancels in the differences (``bias="none"``).

Rows of ``X`` are the ``Φ(q, d)`` of (query, document) pairs; ``pairs`` holds row indices
``(i, j)`` meaning "row i should be ranked above row j" (within the same query).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from svmbench.problems.soft_margin import SoftMarginPrimal
from svmbench.problems.validation import check_int, check_real, check_X


def _check_pairs(pairs, n_rows: int) -> np.ndarray:
    pairs = np.asarray(pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.shape[0] == 0:
        raise ValueError(f"pairs must have shape (n_pairs, 2) with n_pairs >= 1, got {pairs.shape}")
    if not np.issubdtype(pairs.dtype, np.integer):
        raise TypeError(f"pairs must hold integer row indices, got dtype {pairs.dtype}")
    if pairs.min() < 0 or pairs.max() >= n_rows:
        raise ValueError(
            f"pairs must index rows of X in [0, {n_rows}), got {pairs.min()}..{pairs.max()}"
        )
    if np.any(pairs[:, 0] == pairs[:, 1]):
        raise ValueError("pairs must compare two different rows")
    return pairs.astype(np.int64)


def preference_pairs(qid, relevance) -> np.ndarray:
    """All pairs ``(i, j)`` of rows of the same query with ``relevance[i] > relevance[j]``."""
    qid = np.asarray(qid)
    relevance = np.asarray(relevance, dtype=np.float64)
    if qid.shape != relevance.shape or qid.ndim != 1:
        raise ValueError(
            f"qid and relevance must be 1-D of one length, got {qid.shape}, {relevance.shape}"
        )
    out = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        r = relevance[rows]
        i, j = np.nonzero(r[:, None] > r[None, :])
        out.append(np.column_stack([rows[i], rows[j]]))
    return np.vstack(out).astype(np.int64) if out else np.empty((0, 2), dtype=np.int64)


def difference_vectors(X, pairs):
    """``x_e = Φ(d_i) − Φ(d_j)`` for each pair (i, j): dense (n_pairs, d), or CSR for CSR X."""
    X = check_X(X)
    pairs = _check_pairs(pairs, X.shape[0])
    return X[pairs[:, 0]] - X[pairs[:, 1]]


def ranking_problem(X, pairs, *, C: float = 1.0, symmetrize: bool = True) -> SoftMarginPrimal:
    """The Ranking SVM as a :class:`SoftMarginPrimal` with no bias (any linear binary solver).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_rows, n_features)
        The joint features ``Φ(q, d)`` of each (query, document) row.
    pairs : int ndarray of shape (n_pairs, 2)
        ``(i, j)``: row i is preferred to row j (see :func:`preference_pairs`).
    C : float, default=1.0
        The Ranking SVM's C (per pair).
    symmetrize : bool, default=True
        Add each pair's negation ``−x_e`` with label −1 (each copy weighted C/2, so that the
        optimum is unchanged). False keeps only the +1 pairs — a valid SVM only if the solver
        accepts a single class, which ``SoftMarginPrimal`` does not.

    Returns
    -------
    SoftMarginPrimal
        ``min ½‖w‖² + Σ_e C_e max(0, 1 − y_e w·x_e)`` with ``bias="none"``; its w is the
        ranking function's a.
    """
    C = check_real("C", C, low=0.0)
    D = difference_vectors(X, pairs)
    m = D.shape[0]
    if not symmetrize:
        return SoftMarginPrimal(D, np.ones(m), C=C, bias="none")
    Xs = sparse.vstack([D, -D], format="csr") if sparse.issparse(D) else np.vstack([D, -D])
    y = np.concatenate([np.ones(m), -np.ones(m)])
    return SoftMarginPrimal(Xs, y, C=C / 2.0, bias="none")


def pairwise_accuracy(w, X, pairs) -> float:
    """Fraction of pairs (i, j) ordered correctly, ``w·Φ(d_i) > w·Φ(d_j)`` (ties count as
    wrong)."""
    X = check_X(X)
    pairs = _check_pairs(pairs, X.shape[0])
    scores = np.asarray(X @ np.asarray(w, dtype=np.float64)).ravel()
    return float(np.mean(scores[pairs[:, 0]] > scores[pairs[:, 1]]))


def synthetic_ranking(
    n_queries: int,
    docs_per_query: int,
    d: int,
    *,
    noise: float = 0.5,
    levels: int = 4,
    seed: int = 0,
):
    """A ranking set with a known scoring vector.

    ``w_true`` is uniform on the unit sphere; each document of each query has ``Φ ~ N(0, I_d)``
    plus a per-query offset (which a ranking model must ignore), a latent score
    ``w_true·Φ + noise·ε`` and a graded relevance: the quantile bin (``levels`` grades) of that
    score within its query.

    Returns
    -------
    X : ndarray (n_queries·docs_per_query, d)
    qid : int ndarray
    relevance : int ndarray in 0..levels−1
    w_true : ndarray (d,)
    """
    n_queries = check_int("n_queries", n_queries, low=1)
    docs_per_query = check_int("docs_per_query", docs_per_query, low=2)
    d = check_int("d", d, low=1)
    levels = check_int("levels", levels, low=2)
    noise = check_real("noise", noise, low=0.0, closed="left")
    rng = np.random.default_rng(seed)
    w_true = rng.normal(size=d)
    w_true /= np.linalg.norm(w_true)
    qid = np.repeat(np.arange(n_queries), docs_per_query)
    X = rng.normal(size=(qid.size, d)) + 2.0 * rng.normal(size=(n_queries, d))[qid]
    latent = X @ w_true + noise * rng.normal(size=qid.size)
    relevance = np.empty(qid.size, dtype=np.int64)
    for q in range(n_queries):
        rows = np.flatnonzero(qid == q)
        ranks = np.argsort(np.argsort(latent[rows]))
        relevance[rows] = ranks * levels // rows.size
    return X, qid, relevance, w_true
