"""The status a record may carry: ``optimal ⇔ certified and (gap + rounding)/max(1, |P|) ≤ tol``.

A solver's own stopping rule (a native criterion, an iteration budget, a library's status) says
why it stopped, never whether its point is optimal: that is the certificate's to say
(docs/ARCHITECTURE.md §4).
"""

from __future__ import annotations

import math

from svmbench.problems.base import Certificate, Problem
from svmbench.solvers.records import STATUS_MESSAGES, Status

#: Statuses a point certified at tol is turned into ``optimal`` from.
STOPPED = (Status.MAX_ITER, Status.TIME_LIMIT, Status.NUMERICAL_ERROR)


def uncertified_reason(problem: Problem, cert: Certificate | None) -> str:
    """Why ``cert`` certifies nothing, in the problem's terms: no certificate, a problem that is
    not convex, a primal point that is not feasible (for a hard margin, a margin ≤ 0: no scaling
    repairs it), a dual bound that is not finite, or weak duality failing beyond rounding."""
    if cert is None:
        return "no certificate"
    if not getattr(problem, "convex", True):
        return "no certificate holds (the problem is not convex)"
    if not math.isfinite(cert.primal):
        margin = cert.residuals.get("primal_margin")
        hint = (
            f"; its smallest margin is {1.0 - margin:.3g} ≤ 0, which no scaling repairs"
            if margin is not None and margin >= 1.0
            else ""
        )
        return f"the primal point is not feasible (P = {cert.primal}){hint}"
    if not math.isfinite(cert.dual):
        return f"the dual bound is not finite (D = {cert.dual})"
    return f"weak duality fails: P − D = {cert.gap:.3g} < 0 beyond rounding"


def rounding_floor_words(cert: Certificate, tol: float) -> str:
    """What a certificate whose rounding allowance exceeds ``tol`` says: float64 cannot show a
    gap within ``tol`` at this point, whatever the method does (docs/ARCHITECTURE.md §4)."""
    scale = max(1.0, abs(cert.primal))
    return (
        f"the rounding floor of float64 exceeds tol={tol:g}: certified relative gap "
        f"{cert.rel_gap:.3g}, but the margins' rounding may move it by {cert.rounding / scale:.3g}"
        " (C multiplies them); a smaller C or a looser tol can be certified"
    )


def settled_status(
    problem: Problem, status: Status, cert: Certificate | None, tol: float, message: str
) -> tuple[Status, str]:
    """The status the certificate bears, and the message saying why it changed if it did:
    an ``optimal`` that the certificate does not bear (:meth:`Certificate.meets`: the gap plus
    its rounding allowance within ``tol``) is ``not_certified``; a run stopped by ``max_iter``,
    ``time_limit`` or a numerical error on a point certified at ``tol`` is ``optimal``."""
    certified = cert is not None and cert.meets(tol)
    if status is Status.OPTIMAL and not certified:
        if cert is not None and cert.certified and cert.rel_gap <= tol:
            why = rounding_floor_words(cert, tol)
        elif cert is not None and cert.certified:
            why = f"certified relative gap {cert.rel_gap:.3g} > tol={tol:g}"
        else:
            why = uncertified_reason(problem, cert)
        return Status.NOT_CERTIFIED, f"the method's own rule held, but {why}" + (
            f" ({message})" if message else ""
        )
    if status in STOPPED and certified:
        return Status.OPTIMAL, (
            f"the method stopped ({message or STATUS_MESSAGES[status]}), but its point is "
            f"certified at a relative gap {cert.rel_gap:.3g} ≤ tol={tol:g}"
        )
    return status, message
