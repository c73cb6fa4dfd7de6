"""The record of a reduction to binary problems (solvers/binary_pairs.py, ``binary_certificate``):
its relative gap and its rounding allowance state the same worst pair, so that
``Certificate.meets``, and the status that follows it, hold exactly when every binary problem
meets tol (issue 25: nothing may weaken a certificate or a status)."""

from __future__ import annotations

import numpy as np
import pytest

from svmbench.problems import MulticlassHinge
from svmbench.problems.base import make_certificate
from svmbench.solvers.binary_pairs import binary_certificate as _binary_certificate
from svmbench.solvers.records import Status
from svmbench.solvers.status_rules import settled_status

TOL = 1e-6


def _pair(primal: float, rel_gap: float, rounding: float = 0.0):
    scale = max(1.0, abs(primal))
    return make_certificate(primal, primal - rel_gap * scale, rounding=rounding)


def _problem():
    X = np.random.default_rng(0).normal(size=(9, 2))
    return MulticlassHinge(X, np.repeat([0, 1, 2], 3))


def test_a_large_pair_does_not_hide_a_small_pair_over_tol():
    """Pair B's gap (2e-6 of its P) is over tol, but summed with pair A's objective it is
    4e-9 of the total: the summed test alone would bear ``optimal``, and turn B's stop at
    ``max_iter`` into an ``optimal`` record."""
    pairs = [_pair(1000.0, 0.0), _pair(2.0, 2e-6)]
    record = _binary_certificate(pairs, 0)
    assert record.certified and record.rel_gap == pytest.approx(2e-6)
    assert not record.meets(TOL)
    status, _ = settled_status(_problem(), Status.MAX_ITER, record, TOL, "")
    assert status is Status.MAX_ITER


def test_small_pairs_within_tol_are_not_held_to_the_summed_scale():
    """Three pairs of P = 0.2 with gaps of 0.9e-6 (each within tol on its scale of 1): the
    summed gap, 2.7e-6 against max(1, 0.6) = 1, is over tol; every pair is optimal, and so is
    the record."""
    pairs = [_pair(0.2, 0.9e-6) for _ in range(3)]
    assert all(p.meets(TOL) for p in pairs)
    record = _binary_certificate(pairs, 0)
    assert record.gap > TOL * max(1.0, abs(record.primal))  # the summed gap alone
    assert record.meets(TOL)
    status, _ = settled_status(_problem(), Status.OPTIMAL, record, TOL, "")
    assert status is Status.OPTIMAL


def test_a_pair_at_its_rounding_floor_keeps_the_record_from_optimal():
    pairs = [_pair(50.0, 1e-8), _pair(40.0, 5e-7, rounding=0.6e-6 * 40.0)]
    record = _binary_certificate(pairs, 0)
    assert record.rel_gap <= TOL and not record.meets(TOL)
    status, message = settled_status(_problem(), Status.OPTIMAL, record, TOL, "")
    assert status is Status.NOT_CERTIFIED and "rounding floor" in message


def test_the_record_meets_tol_exactly_when_every_pair_does():
    rng = np.random.default_rng(4)
    for _ in range(2000):
        k = int(rng.integers(1, 6))
        pairs = [
            _pair(
                10.0 ** rng.uniform(-3, 4),
                10.0 ** rng.uniform(-9, -5),
                rounding=float(rng.choice([0.0, 10.0 ** rng.uniform(-10, -5)])),
            )
            for _ in range(k)
        ]
        record = _binary_certificate(pairs, 0)
        worst = max((p.gap + p.rounding) / max(1.0, abs(p.primal)) for p in pairs)
        if abs(worst - TOL) <= 1e-12 * TOL:
            continue  # within rounding of tol: either verdict
        assert record.meets(TOL) == all(p.meets(TOL) for p in pairs)
        assert record.rel_gap == max(p.rel_gap for p in pairs)
        if all(abs(p.primal) >= 1.0 for p in pairs):  # then it bounds the summed gap's too
            assert record.rounding >= sum(p.rounding for p in pairs)


def test_an_unsolved_pair_certifies_nothing():
    record = _binary_certificate([_pair(3.0, 1e-9, rounding=1e-12)], 1)
    assert not record.certified and record.rel_gap == np.inf and not record.meets(TOL)
