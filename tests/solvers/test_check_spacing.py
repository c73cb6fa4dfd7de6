"""Stopping tests spaced by counted work (``check_every=None``): where the checks fall, that an
explicit ``check_every`` keeps the fixed spacing, and what it does to dcd and cs_dcd."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import MulticlassHinge, SoftMarginDual, SoftMarginPrimal, datasets
from svmbench.solvers import clock, registry
from svmbench.solvers import dcd as dcd_module
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning, IterativeSolver, Status, StepOutcome
from tests.conftest import BINARY_SETS

X, Y = BINARY_SETS["gaussian_overlap"]
PROBLEM = SoftMarginDual(X, Y, C=0.1, bias="none")
CERT_WORK = 100.0


class CountedToy(IterativeSolver):
    """Projected gradient ascent on the dual (5 steps a chunk) whose chunk ``j`` (from 1) claims
    ``works[j - 1]`` units of work and a certificate ``CERT_WORK``; ``converged_at``: the chunks
    at which its native rule holds."""

    name = "toy_counted"
    iteration_unit = "chunks"
    supported: ClassVar = {SoftMarginDual: {"bias": ("none",), "loss": ("hinge",)}}
    warm_start_uses = ("alpha",)
    default_check_every = 4

    def __init__(self, *, works=(), converged_at=(), counted=True, **common):
        super().__init__(**common)
        self._works, self._converged_at, self._counted = works, converged_at, counted

    def _init_state(self, problem, warm_start):
        Z = problem.X * problem.y[:, None]
        Q = Z @ Z.T
        a = np.zeros(len(Q)) if warm_start is None else warm_start.dual_point(problem)
        return {"Q": Q, "eta": 1.0 / np.linalg.norm(Q, 2), "alpha": a, "chunk": 0}

    def _step(self, problem, state):
        a = state["alpha"]
        for _ in range(5):
            a = np.clip(a + state["eta"] * (1.0 - state["Q"] @ a), 0.0, problem.upper_bounds)
        state["alpha"] = a
        state["chunk"] += 1
        return StepOutcome(1, converged=state["chunk"] in self._converged_at)

    def _variables(self, problem, state):
        return {"alpha": state["alpha"]}

    def _chunk_work(self, problem, state):
        return self._works[state["chunk"] - 1] if self._counted else None

    def _certificate_work(self, problem):
        return CERT_WORK if self._counted else None


@pytest.fixture
def checked_chunks(monkeypatch):
    """The chunks after which a certificate was drawn (``trace=False``: the stopping tests, and
    the final record's when the last chunk was not one)."""
    chunks = []
    original = SoftMarginDual.certificate

    def recording(self, **variables):
        chunks.append(recording.solver_state["chunk"])
        return original(self, **variables)

    original_init = CountedToy._init_state

    def init_state(self, problem, warm_start):
        recording.solver_state = original_init(self, problem, warm_start)
        return recording.solver_state

    monkeypatch.setattr(SoftMarginDual, "certificate", recording)
    monkeypatch.setattr(CountedToy, "_init_state", init_state)
    # the toy's units are its own: no fixed cost per certificate unless a test sets one
    monkeypatch.setattr(clock, "CERTIFICATE_FIXED_WORK", 0.0)
    return chunks


def _run(n_chunks, **options):
    with pytest.warns(ConvergenceWarning):
        r = CountedToy(tol=1e-15, max_iter=n_chunks, trace=False, **options).solve(PROBLEM)
    assert r.status is Status.MAX_ITER and r.iterations == n_chunks
    return r


def test_adaptive_checks_fall_where_the_counted_work_says(checked_chunks):
    # 250 units a chunk, 100 a certificate, 10 %: the m-th check once 25 j >= 100 m, j = 4 m;
    # the last chunk (max_iter) is checked too
    _run(14, works=[250.0] * 14, check_every=None)
    assert checked_chunks == [4, 8, 12, 14]


def test_a_certificate_costs_its_fixed_work_on_top_of_its_arithmetic(checked_chunks, monkeypatch):
    # 100 units of arithmetic + 900 fixed: the m-th check once 25 j >= 1000 m, j = 40 m
    monkeypatch.setattr(clock, "CERTIFICATE_FIXED_WORK", 900.0)
    _run(90, works=[250.0] * 90, check_every=None)
    assert checked_chunks == [40, 80, 90]


def test_a_costly_chunk_buys_its_check_at_once_then_cheap_ones_wait(checked_chunks):
    # after chunk 1 (1000 units) one check is paid for; the second needs 2000 units in all:
    # 1000 + 10 (j - 1) >= 2000 at j = 101
    _run(120, works=[1000.0] + [10.0] * 119, check_every=None)
    assert checked_chunks == [1, 101, 120]


def test_forced_checks_count_against_the_budget(checked_chunks):
    # the native rule at chunk 2 forces a check (the first); the second is paid for at 25 j >= 200
    _run(9, works=[250.0] * 9, converged_at=(2,), check_every=None)
    assert checked_chunks == [2, 8, 9]


def test_a_warm_start_is_checked_after_its_first_chunk(checked_chunks):
    start = np.zeros(PROBLEM.n_samples)
    with pytest.warns(ConvergenceWarning):
        CountedToy(tol=1e-15, max_iter=9, trace=False, works=[250.0] * 9, check_every=None).solve(
            PROBLEM, warm_start=start
        )
    assert checked_chunks == [1, 8, 9]


def test_an_explicit_check_every_keeps_the_fixed_spacing(checked_chunks):
    _run(14, works=[250.0] * 14, check_every=3)
    assert checked_chunks == [3, 6, 9, 12, 14]  # 14: the final record's certificate


def test_without_counted_work_none_means_the_class_default(checked_chunks):
    _run(10, works=[250.0] * 10, counted=False, check_every=None)
    assert checked_chunks == [4, 8, 10]


def test_adaptive_spacing_stops_at_the_optimum():
    r = CountedToy(tol=1e-6, max_iter=10**5, works=[250.0] * 10**5, check_every=None).solve(PROBLEM)
    assert r.status is Status.OPTIMAL and r.rel_gap <= 1e-6
    ref = reference_solution(PROBLEM)
    assert abs(r.primal - ref.primal) <= 2e-6 * max(1.0, abs(ref.primal))


# ---- dcd -----------------------------------------------------------------------------------------
def _cheap_epochs_problem(csr=False):
    """Overlapping Gaussians at C = 1: shrinking leaves a few percent of the rows active for
    thousands of epochs."""
    ds = datasets.load("gaussian:n=1000,d=20,sep=1,seed=0")
    X = sparse.csr_matrix(ds.X) if csr else ds.X
    return SoftMarginPrimal(X, ds.y, C=1.0, bias="regularized")


@pytest.fixture
def dcd_accounting(monkeypatch):
    """Per solve: the stopping-test certificates drawn (``trace=False``) and the nonzeros of X
    the epochs read (the active rows of each epoch, counted here from the kernel's arguments)."""
    log = {"certificates": 0, "work": 0.0, "epochs": 0}
    epochs, certificate = dcd_module._epochs, SoftMarginPrimal.certificate

    def counting_epochs(data, *args):
        # the chunk's epochs one call at a time, counting the rows each visits: the active set,
        # or the full one when a shrunk set is due for its forced re-check
        index, counts, max_epochs = args[8], args[11], args[-1]
        if index.size <= 2:  # warm_up's 2×2 problem
            return epochs(data, *args)
        done, work = 0, 0.0
        for _ in range(max_epochs):
            active, n_free, since_full = counts[0], counts[1], counts[4]
            if active < n_free and since_full >= dcd_module.FORCED_RECHECK_EPOCHS:
                active = n_free
            rows = index[:active]
            if isinstance(data, tuple):
                indptr, _, values = data
                nnz = sum(np.count_nonzero(values[indptr[i] : indptr[i + 1]]) for i in rows)
            else:
                nnz = np.count_nonzero(data[rows])
            log["work"] += nnz
            log["epochs"] += 1
            one, one_work, converged = epochs(data, *args[:-1], 1)
            done, work = done + one, work + one_work
            if converged:
                return done, work, True
        return done, work, False

    def counting_certificate(self, **variables):
        log["certificates"] += 1
        return certificate(self, **variables)

    monkeypatch.setattr(dcd_module, "_epochs", counting_epochs)
    monkeypatch.setattr(SoftMarginPrimal, "certificate", counting_certificate)
    return log


def test_dcd_checks_rarely_on_cheap_epochs_and_still_reaches_the_optimum(dcd_accounting):
    problem = _cheap_epochs_problem()
    r = registry.get("dcd", tol=1e-6, trace=False, max_iter=10**5).solve(problem)
    assert r.status is Status.OPTIMAL and r.rel_gap <= 1e-6
    ref = reference_solution(problem)
    assert abs(r.primal - ref.primal) <= 2e-6 * max(1.0, abs(ref.primal))
    assert dcd_accounting["epochs"] == r.iterations
    # the former default spacing drew one certificate every 10 epochs
    assert dcd_accounting["certificates"] < r.iterations / 10
    # the scheduled stopping tests cost ≤ 10 % of the epochs' work (2 nnz(X) + n each); the
    # native rule's, one each time it held on the full set (eps then shrank tenfold), come on top
    cert_work = 2 * np.count_nonzero(problem.X) + problem.n_samples
    native = round(np.log10(registry.get("dcd").eps / r.info["eps_final"]))
    assert native >= 1
    scheduled = dcd_accounting["certificates"] - native
    assert scheduled * cert_work <= 0.1 * dcd_accounting["work"]
    assert dcd_accounting["certificates"] * cert_work <= 0.15 * dcd_accounting["work"]


def test_dcd_explicit_check_every_keeps_its_spacing(dcd_accounting):
    problem = _cheap_epochs_problem()
    r = registry.get("dcd", tol=1e-6, trace=False, check_every=10, max_iter=10**5).solve(problem)
    assert r.status is Status.OPTIMAL
    # every 10th epoch, plus those where the native rule held on the full set
    assert dcd_accounting["certificates"] >= r.iterations // 10


def test_dcd_spacing_is_the_same_for_dense_and_csr_data():
    dense = registry.get("dcd", tol=1e-6, trace=False, max_iter=10**5).solve(
        _cheap_epochs_problem()
    )
    csr = registry.get("dcd", tol=1e-6, trace=False, max_iter=10**5).solve(
        _cheap_epochs_problem(csr=True)
    )
    assert dense.status is Status.OPTIMAL and csr.status is Status.OPTIMAL
    assert dense.iterations == csr.iterations


def test_dcd_options_record_the_adaptive_default():
    assert registry.get("dcd").check_every is None
    assert registry.get("dcd", check_every=10).check_every == 10
    with pytest.raises(ValueError, match="check_every"):
        registry.get("dcd", check_every=0)


# ---- cs_dcd --------------------------------------------------------------------------------------
@pytest.mark.parametrize("check_every", [None, 10])
def test_cs_dcd_reaches_the_reference_with_either_spacing(check_every):
    ds = datasets.load("blobs:n=300,d=5,k=4,seed=0")
    problem = MulticlassHinge(ds.X, ds.y, C=1.0, bias="regularized")
    r = registry.get("cs_dcd", tol=1e-6, check_every=check_every).solve(problem)
    assert r.status is Status.OPTIMAL and r.rel_gap <= 1e-6
    ref = reference_solution(problem)
    assert abs(r.primal - ref.primal) <= 2e-6 * max(1.0, abs(ref.primal))
    assert registry.get("cs_dcd", check_every=check_every).check_every == check_every
