"""What the jitted SMO cores read from a kernel problem, and its gradients from the kernel.

Shared by :mod:`solvers.smo` and :mod:`solvers.smo_batch`, which import these names from here.
The problem (docs/ARCHITECTURE.md §2) is the minimization of ``f = −D``::

    min_α  ½ αᵀQ̃α − Σ_t α_t   s.t.  0 ≤ α_t ≤ C_t   (+ yᵀα = 0 for a free bias)

    Q̃_tk = y_t y_k (K(x_t, x_k) + s²) + δ_tk / (2 C_t)

:func:`problem_arrays` gives the rows, the labels, the box and ``Q̃_tt``; :func:`gradients` gives
``G = Q̃α − 1`` and LIBSVM's ``Ḡ = Σ_{α_j = C_j} C_j Q̃_:j`` (Chang & Lin, ACM TIST 2, 2011, §5)
at any α, from scratch or updated from the last solve of a path over C.

Rows. A CSR X is kept sparse unless it is dense and small enough to be worth densifying
(:func:`use_dense_rows`): the columns then come from X and Xᵀ in CSR (whole columns by the columns
of X, ``O(n + Σ_{f ∈ x_i} nnz(X_:f))``), and no dense n×d array is ever built (memory: 32 bytes
per non-zero for X and Xᵀ with int64 indices, plus ``16·d`` bytes). The kernel values
are those of the densified rows bit for bit (the sums run in the same order), but for the RBF
squared norms, which may differ in the last bit. The cached columns are float32 or float64
(:func:`cache_dtype`).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual
from svmbench.problems.kernels import kernel_dot
from svmbench.solvers._jit import kernel_columns as kc
from svmbench.solvers._jit import smo as jit

#: Largest ``|Q̃_tk|`` (off the diagonal) whose columns are cached in single precision.
FLOAT32_MAX_ENTRY = 2.0


def cache_dtype(problem: KernelDual, cache_mb: float = math.inf) -> type:
    """Precision of the cached columns: float32 (as LIBSVM's ``Qfloat``) when every entry is
    bounded, i.e. RBF with ``s² ≤ 1`` (``|Q̃_tk| ≤ 1 + s²``), and the whole matrix would not fit
    the budget in float64: the budget then holds twice the columns and the O(n) loops read half
    the bytes, for an absolute error ≤ 2⁻²³ per entry. That rounding makes the maintained
    gradient drift (by ≤ 2⁻²³ |Δα| per update), enough to hide a gap well above a 1e-6 target
    and to spend updates on a drifted G (docs/measurements.md, "smo";
    :meth:`solvers.smo.SMO._refresh_gradient` repairs G once a certificate refuses). So when
    all ``n`` columns fit in float64, they are float64. Kernels whose entries grow with ``‖x‖``
    (linear, poly, sigmoid's argument, a precomputed Gram) always keep float64. α, G and Ḡ are
    float64 in every case, and ``Q̃_ii`` comes from ``QD`` (float64)."""
    s2 = problem.bias_scale**2 if problem.bias == "regularized" else 0.0
    n = problem.n_samples
    fits = 8.0 * n * n <= float(cache_mb) * 2**20
    if problem.kernel == "rbf" and 1.0 + s2 <= FLOAT32_MAX_ENTRY and not fits:
        return np.float32
    return np.float64


#: CSR rows are never densified when the dense copies (X and Xᵀ, ``2·n·d·8`` bytes) exceed this.
DENSE_MAX_BYTES = 1 << 30

#: CSR rows are densified (within :data:`DENSE_MAX_BYTES`) from this density on. Whole CSR columns
#: cost ``O(n + Σ_{f ∈ x_i} nnz(X_:f))`` (about ``n·d·ρ²`` scattered products at density ρ),
#: dense ones ``n·d`` vectorized products. End to end, the CSR and dense times measured even at
#: ρ = 0.5 (docs/measurements.md, "smo"), and so is the memory there (CSR of X and Xᵀ with int64
#: indices: ``32·ρ·n·d`` bytes, dense: ``16·n·d``). The iterates are the same.
DENSE_MIN_DENSITY = 0.5

STORAGES = ("auto", "dense", "csr")


def use_dense_rows(X, storage: str = "auto") -> bool:
    """Whether the kernel columns run over dense rows (True) or over CSR rows (False).

    ``storage="auto"``: dense input stays dense; CSR input is densified when its density is at
    least :data:`DENSE_MIN_DENSITY` and the two dense copies take at most
    :data:`DENSE_MAX_BYTES`, and kept sparse otherwise. ``"dense"`` densifies within
    :data:`DENSE_MAX_BYTES` (a ``ValueError`` beyond), ``"csr"`` never densifies (a dense X is
    converted to CSR).
    """
    if storage == "csr":
        return False
    if not sparse.issparse(X):
        return True
    n, d = X.shape
    fits = 2 * 8 * n * d <= DENSE_MAX_BYTES
    if storage == "dense":
        if not fits:
            gib = 2 * 8 * n * d / 2**30
            raise ValueError(
                f"storage='dense' would densify a {n}×{d} CSR matrix into {gib:.1f} GiB (X and "
                f"Xᵀ), beyond DENSE_MAX_BYTES = {DENSE_MAX_BYTES / 2**30:.1f} GiB; use "
                "storage='csr' or 'auto'"
            )
        return True
    return fits and X.nnz >= DENSE_MIN_DENSITY * n * d


def dense_rows(X) -> np.ndarray:
    """X as C-contiguous float64 rows (a CSR matrix is densified)."""
    if sparse.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


def _rows(problem: KernelDual, storage: str):
    """:func:`kernel_rows_arrays` of the problem's X and kernel."""
    return kernel_rows_arrays(problem.X, problem.kernel_spec, storage)


def kernel_rows_arrays(X, spec, storage: str):
    """``(X, XT, sqn, diag)`` for the jitted core: dense rows and their C-contiguous transpose,
    or the CSR tuple of :func:`solvers._jit.kernel_columns.csr_rows` (X and Xᵀ in one, passed as
    both); the Gram matrix twice for a precomputed kernel (``spec`` a ``Kernel``)."""
    kind, g, c0, p = spec.code, spec.gamma, spec.coef0, spec.degree
    if spec.name == "precomputed":
        sqn = np.zeros(X.shape[0])
        return X, X, sqn, kc.kernel_diagonal(X, sqn, kind, g, c0, p)
    if use_dense_rows(X, storage):
        X = dense_rows(X)
        sqn = kc.squared_norms(X)
        return X, np.ascontiguousarray(X.T), sqn, kc.kernel_diagonal(X, sqn, kind, g, c0, p)
    X = kc.csr_rows(X)
    sqn = kc.squared_norms_csr(X[0], X[2])
    return X, X, sqn, kc.kernel_diag_csr(X[0], X[2], kind, g, c0, p)


def _kernel_dot_rows(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift):
    if isinstance(X, tuple):
        return kc.kernel_dot_rows_csr(
            *X[:6], sqn, rows, cols, coef, kind, gamma, coef0, degree, shift
        )
    return kc.kernel_dot_rows(X, sqn, rows, cols, coef, kind, gamma, coef0, degree, shift)


_KERNEL_NAMES = {code: name for name, code in kc.KERNEL_CODES.items()}


def rows_threads(X, storage: str) -> int | None:
    """The ``threads`` of the jitted columns for the data ``X`` (a Gram matrix, dense rows or
    scipy sparse rows) run as ``storage`` ("dense" or "csr") rows, without building them:
    :func:`~solvers._jit.kernel_columns.parallel_threads`."""
    n, d = X.shape
    nnz = None
    if storage == "csr":
        nnz = X.nnz if sparse.issparse(X) else int(np.count_nonzero(X))
    return kc.parallel_threads(n, d, nnz, numba.get_num_threads())


def problem_threads(problem: KernelDual, storage: str) -> int | None:
    """:func:`rows_threads` of ``problem``'s rows (its Gram matrix when precomputed)."""
    return rows_threads(problem.X, "dense" if problem.kernel == "precomputed" else storage)


def problem_arrays(problem: KernelDual, storage: str):
    """What the jitted SMO cores read from a kernel problem: ``(X, XT, sqn, kint, kflt, y, Cw,
    C, dplus, QD)``, the rows (:func:`_rows`), ``kint = (kernel code, degree, threads)`` (a
    tuple: ``threads`` is the Numba threads, or None when the rows are too small for the
    columns' parallel loops, :func:`~solvers._jit.kernel_columns.column_threads`),
    ``kflt = (γ, coef0, s²)``, the labels, the loss weights C_t, the box's upper bounds (∞ for
    the squared hinge), ``δ_tt/(2C_t)`` of the squared hinge and the diagonal ``Q̃_tt``; every
    array contiguous float64 (shared by ``smo`` and ``smo_batch``)."""
    n = problem.n_samples
    X, XT, sqn, diag = _rows(problem, storage)
    code = problem.kernel_spec.code
    s2 = problem.bias_scale**2 if problem.bias == "regularized" else 0.0
    kint = (int(code), int(problem.degree), kc.column_threads(X, numba.get_num_threads()))
    kflt = np.array([problem.gamma, problem.coef0, s2], dtype=np.float64)
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    Cw = np.ascontiguousarray(problem.upper_bounds, dtype=np.float64)
    C = np.ascontiguousarray(problem.dual_box()[1], dtype=np.float64)
    dplus = np.zeros(n)
    if problem.loss == "squared_hinge":
        pos = Cw > 0
        dplus[pos] = 1.0 / (2.0 * Cw[pos])
    QD = np.ascontiguousarray(diag + s2 + dplus)
    sqn = np.ascontiguousarray(sqn, dtype=np.float64)
    return X, XT, sqn, kint, kflt, y, Cw, C, dplus, QD


def _kernel_times(X, sqn, cols, coef, code, gamma, coef0, degree, shift) -> np.ndarray:
    """``Σ_j coef_j (K(x_i, x_cols_j) + shift)`` for every row i, in float64. Dense rows use the
    certificate's fused product (no kernel value stored, about 2x the kernel rows' speed)."""
    name = _KERNEL_NAMES[code]
    if isinstance(X, tuple) or name == "precomputed":
        all_idx = np.arange(sqn.shape[0], dtype=np.int64)
        return _kernel_dot_rows(X, sqn, all_idx, cols, coef, code, gamma, coef0, degree, shift)
    sqn = np.asarray(sqn, dtype=np.float64)
    f = kernel_dot(
        X, X[cols], coef, kernel=name, gamma=gamma, degree=degree, coef0=coef0,
        sqn_X=sqn, sqn_Z=sqn[cols],
    )  # fmt: skip
    return f + shift * coef.sum() if shift else f


def kernel_times(X, sqn, cols, coef, code, gamma, coef0, degree, shift) -> np.ndarray:
    """``Σ_j coef_j (K(x_i, x_cols_j) + shift)`` for every row i of the core's rows (dense,
    CSR tuple or Gram), in float64."""
    return _kernel_times(X, sqn, cols, coef, code, gamma, coef0, degree, shift)


def gradients(X, sqn, kint, kflt, y, C, dplus, alpha, previous=None):
    """``G = Q̃α − 1`` and ``Ḡ = Σ_{α_j = C_j} C_j Q̃_:j`` in float64, from the kernel.

    ``previous = (α₀, G₀)``, the exact gradient at another point of the same Q̃ (the last solve
    of a path over C): G is updated over the coordinates that changed, ``G₀ + Q̃(α − α₀)``,
    when they are fewer than the support (the same α as the last optimum: no kernel work)."""
    n = y.shape[0]
    code, degree = int(kint[0]), int(kint[1])
    gamma, coef0, s2 = float(kflt[0]), float(kflt[1]), float(kflt[2])
    support = np.flatnonzero(alpha > 0)
    if previous is not None and np.count_nonzero(alpha != previous[0]) < support.size:
        delta = alpha - previous[0]
        cols = np.flatnonzero(delta)
        G = previous[1].copy()
        if cols.size:
            coef = delta[cols] * y[cols]
            G += y * _kernel_times(X, sqn, cols, coef, code, gamma, coef0, degree, s2)
            G += dplus * delta
    else:
        G = -np.ones(n)
        if support.size:
            coef = alpha[support] * y[support]
            dots = _kernel_times(X, sqn, support, coef, code, gamma, coef0, degree, s2)
            G += y * dots + dplus * alpha
    Gbar = np.zeros(n)
    upper = np.flatnonzero((alpha >= C) & (alpha > 0))
    if upper.size:
        coef = C[upper] * y[upper]
        Gbar = y * _kernel_times(X, sqn, upper, coef, code, gamma, coef0, degree, s2)
    return G, Gbar


#: The empty linear term and row map of C-SVC's record, per column dtype: never written, one
#: set for every problem.
_NO_ROW_MAP: dict = {}


def no_row_map(dtype) -> tuple:
    """C-SVC's empty linear term and row map for columns of ``dtype`` (one set, never written)."""
    empty = _NO_ROW_MAP.get(dtype)
    if empty is None:
        empty = _NO_ROW_MAP[dtype] = (np.empty(0), jit.no_rows(dtype))
    return empty


def new_core(X, XT, sqn, kint, kflt, y, C, QD, alpha, G, Gbar, status, n_slots, dtype, **extra):
    """The loops' record (:class:`~solvers._jit.smo.Core`) of n = ``len(y)`` variables at
    ``alpha`` with gradients ``G``, ``Ḡ``: all active, a column cache of ``n_slots`` empty
    columns of ``dtype``, fresh counters and scratch, no linear term and no row map (C-SVC).
    ``extra`` sets the general form's fields (``p``, ``rowmap``, a longer ``tmp``, no column
    ``cache``: None) instead."""
    n = len(y)
    empty = no_row_map(dtype)
    ist = np.zeros(jit.N_IST, dtype=np.int64)
    ist[jit.N_ACTIVE] = n
    ist[jit.SHRINK_COUNTER] = min(n, 1000)
    all_idx = np.arange(n, dtype=np.int64)
    # np.ones and np.full are Python wrappers of empty and fill: called directly here
    is_active = np.empty(n, dtype=np.uint8)
    is_active.fill(1)
    slot_col = np.empty(n_slots, dtype=np.int64)
    slot_col.fill(-1)
    col_slot = np.empty(n, dtype=np.int64)
    col_slot.fill(-1)
    # extra's cache: the general form's None (no column cache) or a buffer to reuse
    cache = extra.pop("cache") if "cache" in extra else np.empty((n_slots, n), dtype=dtype)
    core = jit.Core(
        X=X, XT=XT, sqn=sqn, kint=kint, kflt=kflt, y=y, C=C, QD=QD, alpha=alpha, G=G,
        Gbar=Gbar, active=all_idx.copy(), is_active=is_active, all_idx=all_idx, cache=cache,
        slot_col=slot_col, col_slot=col_slot, slot_full=np.zeros(n_slots, dtype=np.uint8),
        stamp=np.zeros(n_slots, dtype=np.int64), ist=ist, idx_buf=np.empty(n, dtype=np.int64),
        tmp=None if "tmp" in extra else np.empty(n), shrink_buf=np.zeros(n, dtype=np.bool_),
        status=status, p=empty[0], rowmap=empty[1],
    )  # fmt: skip
    return core._replace(**extra) if extra else core


def column_key(core) -> str:
    """A hash of everything a cached column of ``core`` depends on (rows, labels, diagonal,
    kernel): a warm start of the same matrix reuses the columns (:mod:`solvers.smo`)."""
    import hashlib

    h = hashlib.sha256()
    parts = core.X if isinstance(core.X, tuple) else (core.X,)
    for part in (*parts, core.y, core.QD, core.kint[:2], core.kflt):
        a = np.ascontiguousarray(part)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    h.update(f"{core.cache.dtype}{core.cache.shape}".encode())
    return h.hexdigest()


def squared_hinge_estimates(a, r, G, Cw) -> tuple[float, float]:
    """``(P, P − D)`` of the squared hinge's dual from SMO's gradient ``G = Q̃α − 1`` and
    ``r = G + y b`` (the margins less 1), O(n): with ``h_t = α_t/(2C_t)`` and
    ``ξ_t = max(0, h_t − r_t)``, ``P − D = αᵀr − ½αᵀh + Σ C_t ξ_t²`` and
    ``P = ½(αᵀ(G + 1) − αᵀh) + Σ C_t ξ_t²`` (SMO's and the batched SMO's estimates)."""
    pos = Cw > 0
    half = np.zeros_like(a)
    half[pos] = a[pos] / (2.0 * Cw[pos])  # α_t / (2C_t)
    xi = np.maximum(0.0, half - r)
    gap = float(a @ r - 0.5 * (a @ half) + Cw @ (xi * xi))
    P = 0.5 * float(a @ (G + 1.0) - a @ half) + float(Cw @ (xi * xi))
    return P, gap
