"""The exact finish as the primal-dual method's stopping test, tried before its gap reaches tol.

An interior point tells the active set of a soft-margin problem (multipliers at 0, at C_i, free)
long before its gap is small: on breast cancer at C = 1 the iterate of gap 1e-2 (12 of 15
Newton steps) already has it. :func:`try_early_finish` hands such an iterate to the exact finish
(:func:`~solvers.exact_finish.exact_finish`: the bounded multipliers set, the KKT equations of the
free ones solved) with the free sets kept small (at most ``d + 2``: a linear problem in general
position has at most d + 1 free multipliers with a free bias) and the first candidate certified
at ``tol`` taken, and the finished point stops the method only if the problem certifies it at
``tol``. Otherwise the iterations go on, and the next
try waits until the gap estimate has fallen by ``RETRY_FACTOR``. A try certifies at most
``EARLY_TRIES`` candidates (each a kernel block, a KKT solve and a certificate): a try that
fails costs about a Newton step per candidate; the finish after the last step tries them all.
"""

from __future__ import annotations

from svmbench.problems.base import relative_gap
from svmbench.solvers.exact_finish import exact_finish, finish_applies

#: The first try comes when the iterate's own gap estimate is at most this.
EARLY_FINISH_GAP = 1e-2
#: The candidate active sets an early try certifies at most (the exact finish's order).
EARLY_TRIES = 2
#: A later try waits until the gap estimate is this many times smaller than at the last one.
RETRY_FACTOR = 10.0


def early_finish_applies(problem) -> bool:
    """Whether the problem's dual is one the exact finish handles (hinge or squared hinge on a
    primal form)."""
    return finish_applies(problem)


def try_early_finish(problem, variables, tol: float, free_limit: int):
    """``(variables, certificate, report)`` of the finished point when the problem certifies it
    at ``tol``, else None. ``variables``: the iterate's ``w, b, alpha``; ``free_limit``: the
    largest free set solved."""
    cert = problem.certificate(**variables)
    if not cert.certified:
        return None
    as_it_is = 2.0 * relative_gap(cert.gap + cert.rounding, cert.primal)  # the iterate passes
    finished, new_cert, report = exact_finish(
        problem,
        variables,
        cert,
        tol=max(tol, as_it_is),
        max_free=free_limit,
        stop_gap=tol,
        max_tries=EARLY_TRIES,
    )
    if not report.get("accepted") or not new_cert.meets(tol):
        return None
    return finished, new_cert, {**report, "early": True}
