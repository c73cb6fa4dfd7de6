"""Shared test data: small binary sets, easy and hard, so the whole suite stays fast.

Every set is small enough (n ≤ 300) for the references to solve it in milliseconds; references
are cached by problem hash (``solvers._reference.reference_solution``), so a test module that
reuses a problem never solves it twice.
"""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):  # one of several workers, each about one core:
    for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_pool, "1")  # before NumPy loads BLAS; a value given still wins

import numpy as np
import pytest

from svmbench.problems import datasets


def _duplicated_large_C():
    """Overlapping Gaussians with every point present twice (identical rows)."""
    ds = datasets.gaussian(60, 4, 1.0, seed=3)
    return np.vstack([ds.X, ds.X]), np.concatenate([ds.y, ds.y])


def _d_greater_than_n():
    ds = datasets.gaussian(40, 120, 1.0, seed=4)
    return ds.X, ds.y


def _binary_sets():
    sets = {
        "gaussian_overlap": datasets.load("gaussian:n=200,d=5,sep=1,seed=0"),
        "gaussian_separable": datasets.load("gaussian:n=150,d=3,sep=8,seed=1"),
        "quadrant": datasets.load("quadrant:n=200,d=4,noise=0.05,seed=2"),
        "breast_cancer": datasets.load("breast_cancer:n=200,seed=0"),
        "digits": datasets.load("digits:binary=true,n=300,seed=0"),
    }
    out = {name: (ds.X, ds.y) for name, ds in sets.items()}
    out["duplicated"] = _duplicated_large_C()
    out["d_gt_n"] = _d_greater_than_n()
    return out


BINARY_SETS = _binary_sets()
#: C used on each set: the duplicated set is the large-C stress case.
SET_C = {name: (100.0 if name == "duplicated" else 1.0) for name in BINARY_SETS}


@pytest.fixture(params=sorted(BINARY_SETS))
def binary_set(request):
    """(name, X, y, C) for each small binary data set."""
    X, y = BINARY_SETS[request.param]
    return request.param, X, y, SET_C[request.param]


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def _returns_within(seconds, call, *, unblock=None):
    """``call()``'s value, failing the test when it has not returned after ``seconds`` (a read
    blocked on a FIFO, a loop that never ends); ``unblock`` then releases the thread."""
    import threading

    box = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        if unblock is not None:
            unblock()
        pytest.fail(f"still running after {seconds} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def returns_within():
    """``returns_within(seconds, call, unblock=None)``: ``call()``, or the test fails when it
    blocks (the code before a FIFO was refused waited forever for a writer)."""
    return _returns_within


@pytest.fixture
def fifo(tmp_path):
    """A named pipe ``tmp_path / "fifo"`` and a function that releases a reader blocked on it."""
    import os

    path = tmp_path / "fifo"
    os.mkfifo(path)

    def unblock():
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    return path, unblock
