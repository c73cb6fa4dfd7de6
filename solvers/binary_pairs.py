"""What a reduction to binary problems keeps of its pairs (solvers/reductions.py): the rows and
labels of each pair, taken from one mask per class, and the reduction's certificate summed
from the pairs' (:func:`binary_certificate`)."""

from __future__ import annotations

import math

import numpy as np

from svmbench.problems import MulticlassHinge
from svmbench.problems.base import Certificate
from svmbench.problems.rounding import UNIT_ROUNDOFF as _UNIT
from svmbench.problems.rounding import gamma as sum_error


def binary_certificate(results, unsolved: int) -> Certificate:
    """The reduction's own certificate: the binary problems' summed primal and dual objectives,
    certified when every one of them is, with their worst relative gap; not certified while
    some never ran. Its rounding allowance states the same worst pair: it is the amount that
    makes ``(gap + rounding)/max(1, |P|)`` (the record's P, gap) the largest of the pairs'
    ``(gap_p + rounding_p)/max(1, |P_p|)``, so that :meth:`~problems.base.Certificate.meets`,
    and the status that follows it, hold exactly when every binary problem meets tol. Where
    every ``|P_p| ≥ 1`` it is at least the sum of the pairs' allowances; it is below it (even
    negative) only where small pairs (``|P_p| < 1``) count a scale of 1 each, which the summed
    gap does not. Uncertified, it is the sum of theirs plus the sums' own ``γ_{2k+1}``."""
    primal = float(sum(r.primal for r in results))
    dual = float(sum(r.dual for r in results))
    certified = unsolved == 0 and all(r.certified for r in results)
    allowances = [float(r.residuals.get("rounding", 0.0)) for r in results]
    worst = max(
        ((r.gap + a) / max(1.0, abs(r.primal)) for r, a in zip(results, allowances, strict=True)),
        default=math.inf,
    )
    if certified and math.isfinite(worst):
        # rounded up: the record meets tol only if the worst pair does
        rounding = worst * max(1.0, abs(primal)) * (1.0 + 8.0 * _UNIT) - (primal - dual)
    else:
        rounding = math.fsum(allowances)
        if rounding > 0.0:
            terms = math.fsum(abs(r.primal) + abs(r.dual) for r in results)
            rounding += sum_error(2 * len(results) + 1) * terms
    return Certificate(
        primal=primal,
        dual=dual,
        gap=primal - dual,
        rel_gap=max((r.rel_gap for r in results), default=math.inf) if certified else math.inf,
        certified=certified,
        residuals={"rounding": rounding} if rounding != 0.0 else {},
    )


def pair_rows(problem: MulticlassHinge, pos: int, neg: int) -> np.ndarray:
    """The rows of the binary problem "pos against neg" (every row for ``neg < 0``)."""
    if neg < 0:
        return np.arange(problem.n_samples)
    return ((problem.y == pos) | (problem.y == neg)).nonzero()[0]


class PairRows:
    """:func:`pair_rows` of each pair from one mask per class (not two passes of the labels per
    pair), and :meth:`signs`: ``±1`` of every example against a positive class."""

    def __init__(self, problem: MulticlassHinge):
        self.y, self.n, self._masks, self._signs = problem.y, problem.n_samples, {}, {}

    def __call__(self, pos: int, neg: int) -> np.ndarray:
        if neg < 0:
            return np.arange(self.n)
        for c in (pos, neg):
            if c not in self._masks:
                self._masks[c] = self.y == c
        return np.logical_or(self._masks[pos], self._masks[neg]).nonzero()[0]

    def signs(self, pos: int) -> np.ndarray:
        if pos not in self._signs:
            self._signs[pos] = np.where(self.y == pos, 1.0, -1.0)
        return self._signs[pos]
