"""What :mod:`solvers.smo_batch` compiles for one problem (``warm_up_for``), as ``smo`` does.

A problem runs one variant of the jitted parts: its rows (dense, which take the batched BLAS
rows; CSR or a Gram matrix, one column a time), the cached rows' dtype (float32 or float64),
pair updates (an equality) or single-variable ones; and, for more than
``√NUMPY_MAX_ENTRIES`` dense rows of a kernel computed from inner products, the certificate's
fused kernel product. :func:`batch_warm_up_for` runs that variant's parts on a 6-point problem
of the same kind (a kernel dual, or an ε-SVR for a general form), once per process, untimed;
the other variants are left uncompiled (``warm_up()`` compiles them all).
"""

from __future__ import annotations

import time

import numba
import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual, SVRDual
from svmbench.problems.general_dual import GeneralDualProblem
from svmbench.problems.kernels import compile_fused_product, needs_fused_product
from svmbench.solvers.compile_notice import compiling, mark_compiled
from svmbench.solvers.smo_arrays import cache_dtype, rows_threads, use_dense_rows
from svmbench.solvers.smo_batch_general import make_general_batch_state
from svmbench.solvers.smo_general import row_cache_dtype

#: The cached rows' dtypes.
VARIANT_DTYPES = (np.float32, np.float64)

#: The variants (rows, dtype, pair updates, general form) compiled in this process.
WARM_VARIANTS: set[tuple] = set()
_PRODUCT: list[bool] = []  # the certificate's fused product compiled (one entry once it is)


def batch_variant(solver, problem) -> tuple[str, type, bool, bool, bool]:
    """``(rows, dtype, pairs, general, parallel)`` of the parts solving ``problem`` runs
    (``parallel``: rows large enough for the parallel loops,
    :func:`~solvers.smo_arrays.rows_threads` not None)."""
    general = isinstance(problem, GeneralDualProblem)
    if general:
        form = problem.smo_form()
        kernel, X = form.kernel.name, form.X
        dtype = row_cache_dtype(form, solver.cache_mb)
        pairs = form.equality == "one"
    else:
        kernel, X = problem.kernel, problem.X
        dtype = cache_dtype(problem, solver.cache_mb)
        pairs = problem.bias == "free"
    if kernel == "precomputed":
        rows = "gram"
    else:
        rows = "dense" if use_dense_rows(X, solver.storage) else "csr"
    parallel = rows_threads(X, "csr" if rows == "csr" else "dense") is not None
    return rows, np.dtype(dtype).type, pairs, general, parallel


def _needs_product(problem) -> bool:
    """Whether the certificate of ``problem`` may take the fused kernel product of dense rows."""
    kernel = problem.kernel_spec.name
    return (
        not sparse.issparse(problem.X)
        and kernel not in ("linear", "precomputed")
        and needs_fused_product(problem.n_samples)
    )


def batch_warm_up_for(solver, problem) -> float:
    """Compile the variant ``problem`` runs (:func:`batch_variant`) and, if its certificate may
    take it, the fused kernel product; untimed, once per process and variant. A first
    compilation on this machine says so on stderr."""
    if not isinstance(problem, KernelDual | GeneralDualProblem):
        return solver.warm_up()
    variant = batch_variant(solver, problem)
    product = _needs_product(problem) and not _PRODUCT
    if variant in WARM_VARIANTS and not product:
        return 0.0
    start = time.perf_counter()
    batch_warm_up_variant(solver, variant)
    if product:
        with compiling("kernel-product", "certificates", "kernel products of dense rows"):
            compile_fused_product()
        _PRODUCT.append(True)
    return time.perf_counter() - start


def batch_warm_up_variant(solver, variant: tuple, *, notice: bool = True) -> None:
    """Compile one variant ``(rows, dtype, pairs, general, parallel)`` unless this process has; with
    ``notice``, a first compilation on this machine says so (``warm_up()`` says it once for
    all of its variants, and leaves each one's marker)."""
    if variant in WARM_VARIANTS:
        return
    rows, dtype, pairs, general, parallel = variant
    name = np.dtype(dtype).name
    form = "general form" if general else "kernel dual"
    what = f"{rows} rows, {name} rows cached, {'pair' if pairs else 'single'} updates ({form})"
    tag = f"smo_batch-{rows}-{name}-{'pairs' if pairs else 'single'}-{int(general)}"
    if parallel:
        what, tag = f"{what}, parallel loops", f"{tag}-parallel"
    if notice:
        with compiling(tag, "smo_batch", what):
            _run_tiny(solver, *variant)
    else:
        _run_tiny(solver, *variant)
        mark_compiled(tag)
    WARM_VARIANTS.add(variant)


def _run_tiny(solver, rows: str, dtype, pairs: bool, general: bool, parallel: bool) -> None:
    """One variant's parts on a 6-point problem: an outer iteration and G recomputed; with the
    parallel loops (rows and columns) when ``parallel``, which the 6 points alone would not
    reach."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 2))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    kernel, storage = "rbf", rows
    if rows == "gram":
        X = KernelDual(X, y, C=1.0, kernel="rbf", gamma=0.5).gram
        kernel, storage = "precomputed", "auto"
    elif rows == "csr":
        X = sparse.csr_matrix(X)
    bias = "free" if pairs else "none"
    if general:
        problem = SVRDual(X, y, C=1.0, epsilon=0.1, kernel=kernel, gamma=0.5, bias=bias)
        form = problem.smo_form()
        state = make_general_batch_state(
            form, form.alpha0, eps=1e-3, q=4, cache_mb=0.0, storage=storage, dtype=dtype
        )
        if parallel:
            state.kint[2] = numba.get_num_threads()
    else:
        problem = KernelDual(X, y, C=1.0, kernel=kernel, gamma=0.5, bias=bias)
        state = solver._make_state(problem, None, dtype=dtype, storage=storage, q=4, slots=4)
        if parallel:
            state.kint = (*state.kint[:2], numba.get_num_threads())
    solver._outer(state, 10)
    solver._refresh_gradient(state)
