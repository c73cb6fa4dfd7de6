"""The long-double kernel entries and margins of the certificates' refined allowance
(problems/rounding.py), and the units of float64 and long double they are bounded in.

Where C magnifies the margins' rounding, the rows that weigh have their margins
``g_i = Σ_j K_ij c_j`` recomputed in ``np.longdouble`` (x87 extended precision, ``u_L = 2⁻⁶⁴``):
:func:`rbf_entries` computes RBF entries with a bound on each entry's error,
:func:`accurate_rbf_sums` and :func:`accurate_linear_sums` the sums with a bound on theirs
(N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002, §3.1,
§4.2), :class:`AccurateEntries` keeps a small problem's entries for its later certificates.
"""

from __future__ import annotations

import numpy as np

#: The unit roundoff of float64, ``u = 2⁻⁵³``.
UNIT_ROUNDOFF = float(np.finfo(np.float64).eps) / 2.0
#: An allowance of ``libm``'s ``exp`` and ``tanh``: 4 units in the last place.
ELEMENTARY_ULPS = 4.0


def gamma(k: float) -> float:
    """``γ_k = k u / (1 − k u)`` (Higham 2002, Lemma 3.1); inf when ``k u ≥ 1``."""
    ku = float(k) * UNIT_ROUNDOFF
    return ku / (1.0 - ku) if ku < 1.0 else np.inf


#: The unit roundoff of ``np.longdouble`` (2⁻⁶⁴ with x87 extended precision; ``u`` where it is
#: float64 itself: the bounds below then stay true, only looser).
LONG_UNIT_ROUNDOFF = float(np.finfo(np.longdouble).eps) / 2.0
#: At most this many differences (rows that weigh × support × features) are recomputed in long
#: double per certificate, in blocks of :data:`_BLOCK_ENTRIES`.
ACCURATE_MAX_ENTRIES, _BLOCK_ENTRIES = 2**22, 2**20
_CHUNK_ENTRIES = 2**14  # entries × features per pass of rbf_entries
#: An RBF entry whose computed ``γ‖x_i − x_j‖²`` exceeds this keeps its float64 value in the
#: long-double margins: it is below ``e⁻⁴⁰ ≈ 4e-18`` of the largest entry, and its float64
#: error, about ``(7·40 + 5) u e⁻⁴⁰ ≈ 1.3e-31`` of the largest, is below long double's own
#: unit roundoff (5.4e-20) by eleven orders.
ACCURATE_EXPONENT = 40.0
#: The long-double entries of a problem of at most this many examples are kept with it
#: from its second refined certificate on (:func:`accurate_entries`, 33 n² bytes).
ACCURATE_CACHE_SAMPLES = 512
#: What ``exp`` rounded to float64 may lose below the normal range, per entry (subnormal
#: results and underflow to 0 are off by at most a few units of 2⁻¹⁰⁷⁴ absolutely).
_UNDERFLOW = 4.0 * 2.0**-1074


def long_gamma(k: float) -> float:
    """``γ^L_k``: :func:`gamma` in long double's unit roundoff ``u_L``."""
    ku = float(k) * LONG_UNIT_ROUNDOFF
    return ku / (1.0 - ku) if ku < 1.0 else np.inf


def _pairwise_sum(terms: np.ndarray) -> np.ndarray:
    """The sums of the rows of ``terms`` by pairs, ``⌈log₂ k⌉`` levels deep: each sum off by at
    most ``γ_{⌈log₂ k⌉} Σ|terms|`` (Higham 2002, §4.2), whatever NumPy's own reductions do."""
    while terms.shape[1] > 1:
        if terms.shape[1] % 2:
            terms = np.concatenate([terms, np.zeros_like(terms[:, :1])], axis=1)
        terms = terms[:, 0::2] + terms[:, 1::2]
    return terms[:, 0] if terms.shape[1] else np.zeros(terms.shape[0], dtype=terms.dtype)


def rbf_entries(X: np.ndarray, i: np.ndarray, j: np.ndarray, gamma_k: float, X_long=None):
    """``(K, err, size)`` of the entries ``exp(−γ‖x_{i_m} − x_{j_m}‖²)`` (rows of X, float64):
    K in ``np.longdouble``, ``err_m ≥ |K_m − exact|`` and ``size_m ≥ |exact|`` (float64).

    The distances are summed from the differences (``|δD| ≤ γ_{d+2} D``: no cancellation of
    ``‖x‖² + ‖z‖² − 2x·z``), first in float64; an entry whose ``γD`` exceeds
    :data:`ACCURATE_EXPONENT` keeps that value, the others are computed again in long double
    (D too, from ``X_long``, X in long double, unless float64's ``t`` is at most ``u_L``).
    Either way an entry is off by at most ``τK``, ``τ = t(1 + 2t) + 5u``, ``t = γ D γ_{d+4}``
    (``exp`` within 4 units in the last place; ``u_L``, and ``γ^L_{d+3}`` for a long-double D,
    in long double), and a float64 entry by ``4·2⁻¹⁰⁷⁴`` more below the normal range."""
    X_long = np.asarray(X, dtype=np.longdouble) if X_long is None else X_long
    K = np.empty(i.shape[0], dtype=np.longdouble)
    err, size = np.empty(i.shape[0]), np.empty(i.shape[0])
    step = max(64, _CHUNK_ENTRIES // max(1, X.shape[1]))  # small temporaries: no mmap per call
    for start in range(0, i.shape[0], step):
        part = slice(start, start + step)
        K[part], err[part], size[part] = _rbf_chunk(X, X_long, i[part], j[part], gamma_k)
    return K, err, size


def _rbf_chunk(X, X_long, i, j, gamma_k: float):
    d = X.shape[1]
    diff = np.take(X, i, axis=0) - np.take(X, j, axis=0)
    D = np.einsum("ij,ij->i", diff, diff)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        K64 = np.exp(-gamma_k * D)
        t = gamma_k * D * gamma(d + 4)
        tau = t * (1.0 + 2.0 * t) + (ELEMENTARY_ULPS + 1.0) * UNIT_ROUNDOFF
        err = np.where(K64 > 0.0, tau * K64, 0.0) + _UNDERFLOW
        size = np.where(K64 > 0.0, K64 * (1.0 + tau), 0.0) + _UNDERFLOW
    K = np.asarray(K64, dtype=np.longdouble)
    near = np.flatnonzero(gamma_k * D <= ACCURATE_EXPONENT)
    if near.size:
        # float64's D where its error moves the exponent by at most u_L (t ≤ u_L: a small γ)
        D_near, t = np.asarray(D[near], dtype=np.longdouble), t[near]
        redo = np.flatnonzero(t > LONG_UNIT_ROUNDOFF)
        if redo.size:
            at = near[redo]
            diff_long = np.take(X_long, i[at], axis=0) - np.take(X_long, j[at], axis=0)
            D_near[redo] = np.einsum("ij,ij->i", diff_long, diff_long)
            t[redo] = gamma_k * np.asarray(D_near[redo], dtype=np.float64) * long_gamma(d + 3)
        K_near = np.exp(-np.longdouble(gamma_k) * D_near)
        K[near] = K_near
        tau = t * (1.0 + 2.0 * t) + (ELEMENTARY_ULPS + 1.0) * LONG_UNIT_ROUNDOFF
        # rounded up: K64 is within u of K_near, each product within u of its value
        K64 = np.asarray(K_near, dtype=np.float64)
        err[near] = (tau * (1.0 + 4.0 * UNIT_ROUNDOFF)) * K64
        size[near] = K64 * (1.0 + (tau + 4.0 * UNIT_ROUNDOFF))
    return K, err, size


class AccurateEntries:
    """The :func:`rbf_entries` of one problem's rows, kept: its later certificates compute
    only the entries they have not seen."""

    def __init__(self, X: np.ndarray, gamma_k: float):
        n = X.shape[0]
        self.X, self.gamma = X, float(gamma_k)
        self.X_long = np.asarray(X, dtype=np.longdouble)
        self.K = np.zeros(n * n, dtype=np.longdouble)  # flat, entry (i, j) at i·n + j
        self.err = np.zeros(n * n)
        self.size = np.zeros(n * n)
        self.known = np.zeros(n * n, dtype=bool)
        self._last = None

    def seed(self, rows: np.ndarray, columns: np.ndarray, K, err, size) -> None:
        """Keep the rows × columns block ``(K, err, size)`` that :func:`rbf_entries` computed
        (each entry at (i, j) and (j, i): its arithmetic is symmetric, the values those the
        table would compute)."""
        n = self.X.shape[0]
        at = np.concatenate(
            [(rows[:, None] * n + columns).ravel(), (columns * n + rows[:, None]).ravel()]
        )
        for kept, values in ((self.K, K), (self.err, err), (self.size, size)):
            np.put(kept, at, np.concatenate([np.ravel(values)] * 2))
        self.known[at] = True

    def covers(self, rows: np.ndarray, columns: np.ndarray) -> bool:
        """Whether every entry of the rows × columns block is kept."""
        last = self._last
        if last is not None and np.array_equal(last[0], rows) and np.array_equal(last[1], columns):
            return True
        return bool(np.take(self.known, rows[:, None] * self.X.shape[0] + columns[None, :]).all())

    def block(self, rows: np.ndarray, columns: np.ndarray):
        """``(K, err, size)`` of the rows × columns block."""
        last = self._last
        if last is not None and np.array_equal(last[0], rows) and np.array_equal(last[1], columns):
            return last[2]
        at = rows[:, None] * self.X.shape[0] + columns[None, :]
        missing = at[~np.take(self.known, at)]
        if missing.size:  # K and rbf_entries' arithmetic are symmetric: {i, j} once, kept twice
            i, j = np.sort(np.divmod(missing, n := self.X.shape[0]), axis=0)  # i ≤ j
            i, j = np.divmod(np.unique(i * n + j), n)
            K, err, size = rbf_entries(self.X, i, j, self.gamma, self.X_long)
            both = np.concatenate([i * n + j, j * n + i])  # np.put repeats the values for both
            for kept, values in ((self.K, K), (self.err, err), (self.size, size), (self.known, 1)):
                np.put(kept, both, values)
        out = (np.take(self.K, at), np.take(self.err, at), np.take(self.size, at))
        self._last = (rows.copy(), columns.copy(), out)
        return out


def accurate_entries(problem) -> AccurateEntries | None:
    """The problem's kept :class:`AccurateEntries`, made on its second use (a one-vs-one pair
    refines one certificate: the table would cost twice its entries) with the blocks its
    first use computed (:func:`first_blocks`), else None (or beyond
    :data:`ACCURATE_CACHE_SAMPLES` examples)."""
    X, gamma_k, kept = problem.X, float(problem.kernel_spec.gamma), problem.__dict__
    if problem.n_samples > ACCURATE_CACHE_SAMPLES:
        return None
    entries = kept.get("accurate_rbf_entries")
    if entries is None or entries.X is not X or entries.gamma != gamma_k:
        first = kept.get("accurate_rbf_first", (None, None, ()))
        kept["accurate_rbf_first"] = (X, gamma_k, [])
        if first[0] is not X or first[1] != gamma_k:
            return None
        entries = kept["accurate_rbf_entries"] = AccurateEntries(X, gamma_k)
        for block in first[2]:
            entries.seed(*block)
        del kept["accurate_rbf_first"]
    return entries


def first_blocks(problem) -> list | None:
    """Where the problem's first use of :func:`accurate_entries` found no table: the list its
    :func:`accurate_rbf_sums` adds the blocks it computes to, for the table its second use
    makes (the hard set at C = 1e10: the same 74 × 96 block computed twice); else None."""
    first = problem.__dict__.get("accurate_rbf_first")
    if first is None or first[0] is not problem.X:
        return None
    return first[2] if first[1] == float(problem.kernel_spec.gamma) else None


def accurate_rbf_sums(X, rows, support, coef, alpha, gamma_k: float, entries=None, keep=None):
    """``g_i = Σ_j exp(−γ‖x_i − x_j‖²) c_j`` for the ``rows`` i over the ``support`` j, the
    entries from :func:`rbf_entries` (long double where they can weigh; from ``entries``, an
    :class:`AccurateEntries` of X, where given), the sum in ``np.longdouble``, with a bound on
    the error. ``keep``: a list the blocks computed without ``entries`` are added to, as
    ``(rows, support, K, err, size)`` (:func:`first_blocks`).

    Each entry is off by at most its ``err`` (:func:`rbf_entries`); the sum over j, pairwise
    (Higham 2002, §4.2), by at most ``γ^L_{⌈log₂ k⌉+1} Σ_j size_ij |c_j|``. Returns ``(g, e)``:
    g in long double, e the bound (float64, rounded up by ``1 + γ_{k+2}``). Where long double
    is float64 itself, ``u_L = u`` and the bound stays true, only looser."""
    X = np.asarray(X)
    d = X.shape[1]
    k = support.shape[0]
    c_long = np.asarray(coef, dtype=np.longdouble)
    weights = np.asarray(alpha, dtype=np.float64)
    summed = long_gamma(max(1, int(np.ceil(np.log2(max(k, 1))))) + 1)
    g = np.empty(rows.shape[0], dtype=np.longdouble)
    e = np.empty(rows.shape[0])
    step = rows.shape[0] if entries is not None else max(1, _BLOCK_ENTRIES // max(1, k * d))
    X_long = None
    for start in range(0, rows.shape[0], step):
        block = rows[start : start + step]
        if entries is not None:
            K, err, size = entries.block(block, support)
        else:
            if X_long is None:
                X_long = np.asarray(X, dtype=np.longdouble)
            r = block.shape[0]
            i, j = np.repeat(block, k), np.tile(support, r)
            K, err, size = (part.reshape(r, k) for part in rbf_entries(X, i, j, gamma_k, X_long))
            if keep is not None:
                keep.append((block, support, K, err, size))
        g[start : start + step] = _pairwise_sum(K * c_long)
        e[start : start + step] = err @ weights + summed * (size @ weights)
    e *= (1.0 + gamma(k + 2)) * (1.0 + 4.0 * UNIT_ROUNDOFF)  # the float64 sums and products
    return g, e


def accurate_linear_sums(X, rows, support, coef, alpha, sqn):
    """``g_i = x_i·v``, ``v = Σ_j c_j x_j``, for the ``rows`` i over the ``support`` j, in
    ``np.longdouble`` (X and c exact there), with a bound: v is off by ``γ^L_k Σ_j |c_j||x_j|``
    per coordinate and ``x_i·v`` by ``γ^L_d`` more, so ``|δg_i| ≤ γ^L_{k+d} ‖x_i‖ Σ_j α_j‖x_j‖``
    (Cauchy–Schwarz per j; ``sqn`` the rows' ``‖x‖²``). Returns ``(g, e)``, e rounded up for
    its own float64 arithmetic."""
    d, k = X.shape[1], support.shape[0]
    v = np.asarray(X[support], dtype=np.longdouble).T @ np.asarray(coef, dtype=np.longdouble)
    g = np.asarray(X[rows], dtype=np.longdouble) @ v
    norms = np.sqrt(sqn)
    e = long_gamma(k + d) * norms[rows] * float(alpha @ norms[support])
    return g, e * (1.0 + gamma(2 * d + k + 8))
