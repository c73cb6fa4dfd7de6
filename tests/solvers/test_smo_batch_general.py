"""smo_batch on LIBSVM's general form: ε-SVR (2n variables on n rows) and one-class, against
Clarabel's certified optima, on small hard data (duplicated rows, large C, d > n, float32 rows,
CSR input, every bias), and its warm-up of one variant."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import NuSVCDual, OneClassDual, SVRDual, datasets
from svmbench.solvers import registry
from tests.solvers.svr_cases import N, hard_svr_cases, regression_data


def _cases():
    X, y = regression_data()
    friedman = datasets.load("friedman1:n=200,seed=0")
    sparse_X = X * (np.abs(X) > 0.8)
    gram = SVRDual(X, y, C=1.0, epsilon=0.1, gamma=0.5).kernel_spec(X)
    return {
        **hard_svr_cases(),
        "friedman1": SVRDual(friedman.X, friedman.y, C=1.0, epsilon=0.1),
        "csr": SVRDual(sparse.csr_matrix(sparse_X), y, C=2.0, epsilon=0.1, gamma=0.5),
        "polynomial": SVRDual(X, y, C=1.0, epsilon=0.1, kernel="poly", degree=2, gamma=0.3),
        "precomputed": SVRDual(gram, y, C=1.0, epsilon=0.1, kernel="precomputed"),
        "regularized_bias": SVRDual(X, y, C=5.0, epsilon=0.1, gamma=0.5, bias="regularized"),
        "one_class": OneClassDual(X, nu=0.2, gamma=0.5),
    }


CASES = _cases()


@pytest.fixture(scope="module")
def optima():
    return {name: registry.get("clarabel").solve(p).primal for name, p in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("q, cache_mb", [(512, 200.0), (8, 0.004)])
def test_certified_and_equal_to_clarabels_optimum(name, q, cache_mb, optima):
    """``q=8, cache_mb=0.004``: many small working sets over a cache of a few float32 rows
    (RBF), evicted all the time."""
    problem = CASES[name]
    result = registry.get("smo_batch", tol=1e-9, q=q, cache_mb=cache_mb).solve(problem)
    assert result.status.value == "optimal"
    assert result.certified and result.rel_gap <= 1e-9
    assert result.primal == pytest.approx(optima[name], rel=1e-7, abs=1e-9)
    info = result.info
    assert info["cache_by"] == "row"
    rbf = problem.kernel_spec.name == "rbf"
    assert info["cache_bytes_per_entry"] == (4 if cache_mb < 1 and rbf else 8)
    if cache_mb < 1 and problem.n_samples >= N:  # 0.004 MB: 17 float32 rows of 60
        assert info["cache_rows"] < problem.n_samples


def test_each_row_of_x_is_computed_once_for_both_of_its_variables():
    """With every row cached, α_r and α*_r share one kernel row: at most n rows are computed
    although the working sets read many more."""
    problem = CASES["large_C"]
    info = registry.get("smo_batch", tol=1e-9, q=16).solve(problem).info
    assert info["rows_computed"] <= problem.n_samples
    assert info["rows_computed"] + info["row_hits"] > 2 * problem.n_samples


def test_agrees_with_smo_on_the_dual_point():
    """The optimum's β is unique on distinct rows with a positive definite RBF kernel: both SMOs
    give it to the certificate's accuracy."""
    problem = CASES["friedman1"]
    a = registry.get("smo_batch", tol=1e-10, q=32).solve(problem)
    b = registry.get("smo", tol=1e-10).solve(problem)
    n = problem.n_samples
    beta_a, beta_b = a.alpha[:n] - a.alpha[n:], b.alpha[:n] - b.alpha[n:]
    assert np.max(np.abs(beta_a - beta_b)) <= 1e-3 * problem.C
    assert a.b == pytest.approx(b.b, abs=1e-4)


def test_a_warm_start_from_the_optimum_needs_few_updates():
    problem = CASES["friedman1"]
    first = registry.get("smo_batch", tol=1e-8).solve(problem)
    again = registry.get("smo_batch", tol=1e-8).solve(problem, warm_start=first)
    assert again.status.value == "optimal"
    assert again.iterations <= first.iterations // 10


def test_nu_forms_are_refused_naming_the_kinds_it_solves():
    X, _ = regression_data()
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with pytest.raises(TypeError, match="'smo_batch'.*'nu_svc'.*svr_dual, one_class"):
        registry.get("smo_batch").solve(NuSVCDual(X, y, nu=0.3))


def test_shrinking_on_a_general_form_is_refused_naming_it():
    with pytest.raises(ValueError, match="shrinking=True"):
        registry.get("smo_batch", shrinking=True).solve(CASES["no_bias"])


def test_a_warm_start_of_another_length_is_refused_naming_warm_start():
    problem = CASES["large_C"]
    with pytest.raises(ValueError, match=r"warm_start alpha must have shape \(120,\), got \(60,\)"):
        registry.get("smo_batch").solve(problem, warm_start=np.zeros(N))


_WARM_CHILD = r"""
import json, sys
from svmbench.problems import SVRDual, datasets
from svmbench.solvers import registry, smo_batch, smo_batch_warm
data = datasets.load("friedman1:n=2000,seed=0")
problem = SVRDual(data.X, data.y, C=1.0, epsilon=0.1)
solver = registry.get("smo_batch", tol=1e-6, cache_mb=10)
solver.warm_up_for(problem)
again = solver.warm_up_for(problem)
print(json.dumps({
    "variants": sorted(
        [rows, dt.__name__, pairs, general, parallel]
        for rows, dt, pairs, general, parallel in smo_batch_warm.WARM_VARIANTS
    ),
    "all": smo_batch._WARM,
    "again": again,
}))
"""


def test_warm_up_for_compiles_only_the_problems_variant():
    """A fresh process warmed up for a dense ε-SVR of 2000 rows (float32 rows in 10 MB, a free
    bias; one thread: the serial loops) compiles that variant alone, not all of ``warm_up()``;
    a second call does nothing."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", _WARM_CHILD], env=env, capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["variants"] == [["dense", "float32", True, True, False]]
    assert report["all"] is False
    assert report["again"] == 0.0
