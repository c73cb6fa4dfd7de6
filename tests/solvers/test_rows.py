"""The row-access layer of the jitted loops (``solvers/_jit/rows.py``), the one random generator
and the source-keyed Numba cache.

Dense rows and their CSR form must give the same bits: each helper sums in one order, and every
epoch built on them (dcd, cs_dcd, cs_sgd, Pegasos, the perceptron) is checked dense against CSR
over several epochs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy import sparse

import svmbench.solvers._jit as jit_package
from svmbench.solvers._jit import common, rows
from svmbench.solvers._jit import dcd as jd
from svmbench.solvers._jit import multiclass as jm
from svmbench.solvers._jit import pegasos as jp
from svmbench.solvers._jit import perceptron as jpc


@numba.njit(cache=True)
def _dot(X, i, w, start):
    return rows.row_dot(X, i, w, start)


@numba.njit(cache=True)
def _axpy(X, i, c, w):
    rows.row_axpy(X, i, c, w)


@numba.njit(cache=True)
def _dot4(X, i, w, start):
    return rows.row_dot4(X, i, w, start)


@numba.njit(cache=True)
def _sqnorm(X, i):
    return rows.row_sqnorm(X, i)


@numba.njit(cache=True)
def _entries(X, i):
    start, stop = rows.row_span(X, i)
    cols = np.empty(stop - start, dtype=np.int64)
    vals = np.empty(stop - start)
    for p in range(start, stop):
        cols[p - start], vals[p - start] = rows.row_entry(X, i, p)
    return rows.n_rows(X), cols, vals


@numba.njit(cache=True)
def _prefetch(X, i):
    rows.prefetch_offsets(X, i)
    rows.prefetch_row(X, i)


def _sparse_data(rng, n, d, density=0.4):
    """Rows with zeros, one empty row, large and small magnitudes (rounding shows)."""
    X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-6, 6, (n, d))
    X *= rng.random((n, d)) < density
    X[1] = 0.0
    return X


def _storages(X):
    """Dense, CSR with int32 indices, CSR with int64 indices."""
    csr = sparse.csr_matrix(X)
    return [rows.as_rows(X), rows.as_rows(csr), rows.as_rows(csr, np.int64)]


def _python_dot(x, w, start):
    acc = start
    for xj, wj in zip(x, w, strict=True):
        if xj != 0.0:
            acc += xj * wj
    return acc


def test_helpers_sum_left_to_right_and_agree_bitwise_dense_and_csr():
    rng = np.random.default_rng(0)
    X = _sparse_data(rng, 12, 37)
    w = rng.standard_normal(37) * 1e3
    for i in range(X.shape[0]):
        want = _python_dot(X[i], w, 0.25)
        for R in _storages(X):
            assert _dot(R, i, w, 0.25) == want  # the promised order, exactly
            assert _sqnorm(R, i) == _python_dot(X[i], X[i], 0.0)
            out = np.linspace(-1.0, 1.0, 37)
            _axpy(R, i, -0.3, out)
            np.testing.assert_array_equal(out, np.linspace(-1.0, 1.0, 37) - 0.3 * X[i])
            _prefetch(R, i)  # a hint: compiles and changes nothing
        n, cols, vals = _entries(_storages(X)[1], i)
        assert n == 12
        np.testing.assert_array_equal(cols, np.flatnonzero(X[i]))
        np.testing.assert_array_equal(vals, X[i][X[i] != 0])
        n, cols, vals = _entries(X, i)
        np.testing.assert_array_equal(cols, np.arange(37))
        np.testing.assert_array_equal(vals, X[i])
    # reference: the exactly rounded sum, to rounding level
    exact = [np.float64(np.sum(np.longdouble(X[i]) * w)) for i in range(12)]
    np.testing.assert_allclose([_dot(X, i, w, 0.0) for i in range(12)], exact, rtol=1e-12)


@pytest.mark.parametrize("d", [1, 3, 4, 37, 40])
def test_row_dot4_sums_dense_rows_in_four_partial_sums(d):
    """Dense: ``t_r`` over ``j ≡ r (mod 4)`` below ``4⌊d/4⌋``, the tail into ``t_0``, then
    ``start + ((t_0 + t_1) + (t_2 + t_3))``, exactly; CSR: :func:`row_dot`'s order, exactly."""
    rng = np.random.default_rng(d)
    X = _sparse_data(rng, 6, d, density=0.7)
    w = rng.standard_normal(d) * 1e3
    q = d - d % 4
    for i in range(X.shape[0]):
        t = [0.0, 0.0, 0.0, 0.0]
        for j in range(d):
            r = j % 4 if j < q else 0
            t[r] += X[i, j] * w[j]
        assert _dot4(X, i, w, 0.25) == 0.25 + ((t[0] + t[1]) + (t[2] + t[3]))
        for R in _storages(X)[1:]:
            assert _dot4(R, i, w, 0.25) == _python_dot(X[i], w, 0.25)
        assert _dot4(X, i, w, 0.0) == pytest.approx(_python_dot(X[i], w, 0.0), rel=1e-12, abs=1e-9)


def test_as_rows_canonical_form():
    # duplicates and unsorted column indices: summed and sorted, on a copy
    data = np.array([1.0, 2.0, 3.0, 4.0])
    indices = np.array([2, 0, 2, 1], dtype=np.int32)
    indptr = np.array([0, 3, 4], dtype=np.int32)
    A = sparse.csr_matrix((data, indices, indptr), shape=(2, 3))
    A.has_sorted_indices = False
    A.has_canonical_format = False
    ip, ind, dat = rows.as_rows(A)
    assert ip.dtype == ind.dtype == np.int32 and dat.dtype == np.float64
    np.testing.assert_array_equal(ind, [0, 2, 1])
    np.testing.assert_array_equal(dat, [2.0, 4.0, 4.0])
    np.testing.assert_array_equal(A.indices, indices)  # the input is untouched
    # mixed index types become int64; a dense non-contiguous float32 view becomes float64 C
    B = sparse.csr_matrix(np.eye(3))
    B.indptr = B.indptr.astype(np.int64)
    assert rows.as_rows(B)[0].dtype == rows.as_rows(B)[1].dtype == np.int64
    D = rows.as_rows(np.eye(4, dtype=np.float32)[:, ::2])
    assert D.dtype == np.float64 and D.flags.c_contiguous


def test_helpers_refuse_other_row_types():
    with pytest.raises(numba.core.errors.TypingError):
        _dot(np.ones(3), 0, np.ones(3), 0.0)  # 1-D: neither dense rows nor a CSR tuple
    with pytest.raises(NotImplementedError, match="jitted code only"):
        rows.row_dot(np.ones((2, 2)), 0, np.ones(2), 0.0)


# ---- dense and CSR give identical iterates -------------------------------------------------


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_dcd_epochs_identical_dense_and_csr(loss):
    """``_jit/dcd.py`` promises the same iterates for both storages: bitwise, with shrinking."""
    rng = np.random.default_rng(1)
    n, d, s = 60, 25, 1.0
    X = _sparse_data(rng, n, d, density=0.3)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    C = rng.uniform(0.5, 2.0, n)
    upper = C if loss == "hinge" else np.full(n, np.inf)
    diag = np.zeros(n) if loss == "hinge" else 0.5 / C
    runs = []
    for R in _storages(X):
        qd = jd.row_sq_norms(R) + s * s + diag
        alpha, w, wb = np.zeros(n), np.zeros(d), np.zeros(1)
        index = np.arange(n, dtype=np.int64)
        state = np.array([99], dtype=np.uint64)
        active, bounds, trace = n, (np.inf, -np.inf), []
        for _ in range(15):
            active, hi, lo = jd.dcd_epoch(
                R, y, upper, diag, qd, s, alpha, w, wb, index, active, *bounds, state
            )
            bounds = (hi if hi > 0 else np.inf, lo if lo < 0 else -np.inf)
            trace.append((active, hi, lo))
        wts = np.empty(d)
        jd.weights(R, alpha * y, wts)
        runs.append((alpha, w, wb, index, trace, wts))
    ref = runs[0]
    for other in runs[1:]:
        for a, b in zip(ref, other, strict=True):
            if isinstance(a, list):
                assert a == b
            else:
                np.testing.assert_array_equal(a, b)
    assert 0 < ref[4][-1][0] <= n and np.any(ref[0] > 0)
    np.testing.assert_allclose(ref[5], X.T @ (ref[0] * y), rtol=1e-9, atol=1e-9)


def test_pegasos_and_perceptron_epochs_identical_dense_and_csr():
    rng = np.random.default_rng(2)
    n, d, s = 50, 20, 1.0
    X = _sparse_data(rng, n, d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    xsq = np.einsum("ij,ij->i", X, X) + s * s
    order = rng.permutation(n).astype(np.int64)
    peg, per = [], []
    for R in _storages(X):
        v, u, acc, scal = np.zeros(d + 1), np.zeros(d + 1), np.zeros(d + 1), np.zeros(jp.N_SCALARS)
        scal[jp.A] = 1.0
        t = 0
        for _ in range(4):
            t = jp.pegasos_epoch(
                R, y, np.ones(n), xsq, order, 5, 0.01, t, s, True, True, 10.0, jp.AVG_POLY, 2.0,
                v, u, acc, scal,
            )  # fmt: skip
        peg.append(np.concatenate([v, u, acc, scal]))
        w, uu = np.zeros(d + 1), np.zeros(d + 1)
        mistakes = [jpc.perceptron_epoch(R, y, order, 0.5, s, e * n, True, w, uu) for e in range(4)]
        per.append((mistakes, np.concatenate([w, uu])))
    for other in peg[1:]:
        np.testing.assert_array_equal(peg[0], other)
    for mistakes, state in per[1:]:
        assert mistakes == per[0][0]
        np.testing.assert_array_equal(state, per[0][1])
    assert np.any(peg[0][:d] != 0) and sum(per[0][0]) > 0


def test_crammer_singer_epochs_identical_dense_and_csr():
    rng = np.random.default_rng(3)
    n, d, k, s = 40, 12, 4, 1.5
    X = _sparse_data(rng, n, d)
    y = rng.integers(0, k, n).astype(np.int64)
    C = rng.uniform(0.5, 2.0, n)
    cost = 1.0 - np.eye(k)
    A = np.einsum("ij,ij->i", X, X) + s * s
    dcd_runs, sgd_runs = [], []
    for R in _storages(X)[:1] + _storages(X)[2:]:  # cs_dcd takes int64 indices
        beta = np.zeros((n, k))
        beta[np.arange(n), y] = C
        Wt, wb = np.zeros((d, k)), np.zeros(k)
        index, state = np.arange(n, dtype=np.int64), np.array([5], dtype=np.uint64)
        active, active_i = n, np.full(n, k, dtype=np.int64)
        cls = np.tile(np.arange(k, dtype=np.int64), (n, 1))
        stops = []
        for _ in range(8):
            common.shuffle_active(index, active, state)
            active, stop = jm.cs_dcd_epoch(
                R, y, C, cost.T.copy(), A, s, True, beta, Wt, wb, index, active, active_i, cls,
                True, *jm.cs_dcd_scratch(n, k),
            )  # fmt: skip
            stops.append((active, stop))
        dcd_runs.append((stops, beta, Wt, wb, index, active_i, cls))
        U, V, Ub, Vb, H = np.zeros((d, k)), np.zeros((d, k)), np.zeros(k), np.zeros(k), np.zeros(1)
        t = 0
        for _ in range(3):
            order = np.arange(n, dtype=np.int64)[::-1].copy()
            t = jm.cs_sgd_epoch(R, y, C, cost, s, True, 0.05, order, t, U, Ub, V, Vb, H)
        sgd_runs.append(np.concatenate([U.ravel(), V.ravel(), Ub, Vb, H]))
    for a, b in zip(dcd_runs[0], dcd_runs[1], strict=True):
        if isinstance(a, list):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sgd_runs[0], sgd_runs[1])
    assert np.any(dcd_runs[0][2] != 0)


# ---- one random generator -----------------------------------------------------------------


def test_one_generator_splitmix64():
    """splitmix64 from state 0: the published first outputs 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4
    (Steele et al.'s reference), as 53-bit uniforms; dcd and cs_dcd shuffle with it."""
    state = np.zeros(1, dtype=np.uint64)
    u = [common.next_uniform(state) for _ in range(2)]
    assert u == [(0xE220A8397B1DCDAF >> 11) / 2.0**53, (0x6E789E6AA1B965F4 >> 11) / 2.0**53]
    assert jd.shuffle_active is common.shuffle_active
    from svmbench.solvers import multiclass

    assert multiclass.shuffle_active is common.shuffle_active
    assert not hasattr(jm, "shuffle_prefix")


# ---- the cache is keyed on the jitted sources ---------------------------------------------


def test_sources_digest_follows_every_source(tmp_path):
    src = Path(jit_package.__file__).parent
    copy = tmp_path / "_jit"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert jit_package._sources_digest(copy) == jit_package._sources_digest(src)
    rows_py = copy / "rows.py"
    rows_py.write_text(rows_py.read_text() + "\n# an edit of a callee in another file\n")
    edited = jit_package._sources_digest(copy)
    assert edited != jit_package._sources_digest(src)
    (copy / "new_kernel.py").write_text("x = 1\n")
    assert jit_package._sources_digest(copy) not in (edited, jit_package._sources_digest(src))


def test_sources_digest_follows_the_shared_kernel_products(tmp_path):
    """kernel_columns and smo_batch inline problems/_kernel_products.py: an edit there alone must
    start a fresh cache too."""
    (shared,) = jit_package.SHARED_SOURCES
    assert shared.is_file()
    copy = tmp_path / shared.name
    copy.write_text(shared.read_text())
    src = Path(jit_package.__file__).parent
    same = jit_package._sources_digest(src, (copy,))
    assert same == jit_package._sources_digest()
    copy.write_text(shared.read_text() + "\n# an edit of the kernel formula\n")
    assert jit_package._sources_digest(src, (copy,)) != same


def test_cache_dir_is_keyed_on_the_sources(tmp_path):
    """A fresh process puts every jitted core's cache under NUMBA_CACHE_DIR/src-<digest>."""
    code = (
        "import json, numba\n"
        "import svmbench.solvers._jit as p\n"
        "from svmbench.solvers._jit import barrier, dcd, multiclass, pegasos, perceptron\n"
        "paths = [f._cache._cache_path for f in (dcd.dcd_epoch, multiclass.cs_dcd_epoch,"
        " pegasos.pegasos_epoch, perceptron.perceptron_epoch, barrier.PASSES[0].affine)]\n"
        "dirs = [str(p.CACHE_DIR), numba.config.CACHE_DIR, p._sources_digest()]\n"
        "print(json.dumps([*dirs, paths]))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    cache_dir, config_dir, digest, paths = json.loads(out.stdout)
    assert cache_dir == config_dir == str(tmp_path / f"src-{digest}")
    assert digest == jit_package._sources_digest()
    assert all(path.startswith(cache_dir + os.sep) for path in paths)
