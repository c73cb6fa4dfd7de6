"""SMO's jitted gap estimate and free bias (solvers/_jit/smo_gap.py) against NumPy's arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems import KernelDual
from svmbench.solvers import registry
from svmbench.solvers._jit import smo as jit
from svmbench.solvers._jit.smo_gap import free_bias, hinge_estimates


def _numpy_bias(y, G, status, active, n_active):
    """The free b as SMO computed it with NumPy before it was jitted."""
    if n_active == y.shape[0]:
        yy, GG, bits = y, G, status
    else:
        act = active[:n_active]
        yy, GG, bits = y[act], G[act], status[act]
    free = bits == 3
    n_free = np.count_nonzero(free)
    if n_free:
        return float(-np.add.reduce((yy * GG)[free]) / n_free)
    v = -yy * GG
    up, low = (bits & 1).astype(bool), (bits & 2).astype(bool)
    lo = v[up].max() if up.any() else -np.inf
    hi = v[low].min() if low.any() else np.inf
    if not np.isfinite(lo):
        return float(hi) if np.isfinite(hi) else 0.0
    if not np.isfinite(hi):
        return float(lo)
    return float(0.5 * (lo + hi))


@pytest.mark.parametrize("shrunk", [False, True])
@pytest.mark.parametrize("free_share", [0.0, 0.02, 0.3, 1.0])
def test_free_bias_is_numpys_bit_for_bit(shrunk, free_share, rng):
    for _ in range(30):
        n = int(rng.integers(1, 700))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        G = rng.standard_normal(n) * np.exp(rng.uniform(-10.0, 10.0, n))
        status = rng.integers(1, 3, n).astype(np.uint8)  # I_up or I_low alone
        status[rng.random(n) < free_share] = 3
        active = rng.permutation(n).astype(np.int64)
        n_active = int(rng.integers(1, n + 1)) if shrunk else n
        got = free_bias(y, G, status, active, n_active, np.empty(n))
        want = _numpy_bias(y, G, status, active, n_active)
        assert np.float64(got).tobytes() == np.float64(want).tobytes()


def test_free_bias_takes_numpys_extremes_of_nan_and_empty_sets():
    y = np.array([1.0, -1.0, 1.0])
    active = np.arange(3, dtype=np.int64)
    cases = [  # (G, status): no free multiplier in each
        (np.array([np.nan, 0.5, -0.25]), [1, 2, 2]),  # max over I_up NaN: the min over I_low
        (np.array([0.75, np.nan, -0.25]), [1, 2, 2]),  # min over I_low NaN: the max over I_up
        (np.array([np.nan, np.nan, -0.25]), [1, 2, 0]),  # both NaN: 0
        (np.array([1.0, 0.5, -0.25]), [2, 2, 2]),  # I_up empty: the min over I_low
        (np.array([1.0, 0.5, -0.25]), [0, 0, 0]),  # neither: 0
    ]
    wanted = [0.25, -0.75, 0.0, -1.0, 0.0]
    for (G, bits), want in zip(cases, wanted, strict=True):
        status = np.array(bits, dtype=np.uint8)
        got = free_bias(y, G, status, active, 3, np.empty(3))
        assert got == _numpy_bias(y, G, status, active, 3) == want


@pytest.mark.parametrize("bias", ["free", "none"])
def test_hinge_estimates_are_the_numpy_formula(bias, rng):
    """``(b, P, P − D)`` of a point SMO reached, against the estimate's formula in NumPy (its
    sums in another order: to a few ulps of the terms' magnitudes)."""
    X = rng.standard_normal((120, 4))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(120) > 0, 1.0, -1.0)
    problem = KernelDual(X, y, C=3.0, kernel="rbf", gamma=0.5, bias=bias)
    solver = registry.get("smo", tol=1e-3, trace=False)
    state = solver._init_state(problem, None)
    solver._step(problem, state)
    c = state.core
    a, G, C = c.alpha, c.G, c.C
    want_b = _numpy_bias(c.y, G, c.status, c.active, c.ist[jit.N_ACTIVE]) if bias == "free" else 0.0
    b = solver._bias(problem, state) if bias == "free" else 0.0
    assert np.float64(b).tobytes() == np.float64(want_b).tobytes()
    P, gap = hinge_estimates(a, c.y, G, C, b)
    r = c.y * b + G
    hinge = -float(C @ np.minimum(r, 0.0))
    scale = float(np.abs(a) @ np.abs(r) + C @ np.abs(r) + np.abs(a) @ (np.abs(G) + 1.0))
    assert gap == pytest.approx(float(a @ r) + hinge, abs=1e-13 * scale)
    assert P == pytest.approx(0.5 * (float(a @ G) + float(a.sum())) + hinge, abs=1e-13 * scale)
    assert 0.0 < np.count_nonzero(a) < a.size  # a point with support and without
    assert (P, gap) == solver._estimates(problem, state)  # the path SMO's stopping test takes
