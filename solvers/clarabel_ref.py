"""Clarabel (Goulart & Chen, 2024) as the main reference: a primal-dual interior-point method on
``problem.to_qp()``, with tight tolerances of its own (``eps``: 1e-10 on the gap and on
feasibility by default); ``tol`` is the certified relative gap asked for, as for every solver.

The conversion of OSQP's form ``l ≤ Ax ≤ u`` into Clarabel's cones lives in
:func:`problems._qp.solve_osqp_form_with_clarabel`; every Clarabel status is mapped there, and the
problem re-checks the result here.
"""

from __future__ import annotations

import math
from dataclasses import asdict

from svmbench.problems._qp import ClarabelOutcome
from svmbench.solvers._reference import QPReference
from svmbench.solvers.base import Outcome, Status
from svmbench.solvers.registry import register
from svmbench.solvers.time_budget import ALLOWED_OVERRUN, refused_outcome
from svmbench.solvers.worker import OVERHEAD, Stopped, call_with_deadline, can_fork


@register
class ClarabelReference(QPReference):
    """Clarabel on the problem's exported QP.

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for (see :class:`~solvers._reference.QPReference`).
    eps : float or None, default=None
        ``tol_gap_abs``, ``tol_gap_rel``, ``tol_feas`` and the infeasibility tolerances
        (None: 1e-10).
    max_iter : int, default=200
        Interior-point iterations.
    """

    name = "clarabel"
    iteration_unit = "interior-point iterations"
    default_max_iter = 200
    warm_start_refusal = "does not take a warm start (Clarabel's interior point starts itself)"

    def _run(self, problem, warm_start, clock, callback) -> Outcome:
        from svmbench.problems._qp import solve_osqp_form_with_clarabel

        qp, stopped = self._bounded_export(problem, clock)
        if stopped is not None:
            return stopped
        limit, left = self.time_limit, self.time_limit - clock.wall

        def solve():
            return solve_osqp_form_with_clarabel(
                qp.P, qp.q, qp.A, qp.l, qp.u, tol=self.eps, max_iter=self.max_iter, time_limit=left
            )

        if math.isfinite(limit) and can_fork():
            # Clarabel checks its limit between iterations only: its set-up and first
            # factorization (minutes when the KKT matrix fills in) run in a worker process
            # stopped at the limit, with half the allowed overrun to return a point
            out = call_with_deadline(lambda: asdict(solve()), left + ALLOWED_OVERRUN / 2)
            if isinstance(out, Stopped):
                return refused_outcome(
                    {
                        "stage": "Clarabel's set-up and iterations",
                        "wall": clock.wall,
                        "time_limit": limit,
                        "message": (
                            f"Clarabel did not return within time_limit={limit:g} s (it cannot "
                            "be interrupted before its first iteration): its worker process "
                            "was stopped at the limit"
                        ),
                    },
                    problem,
                )
            excluded = out.pop(OVERHEAD)  # the fork and the transfer are not Clarabel's
            out = ClarabelOutcome(**out)
        else:
            out, excluded = solve(), 0.0
        # the names of problems._qp's one map of Clarabel's statuses are Status values; an
        # inaccurate optimum is judged by the certificate like any other
        status = Status.OPTIMAL if out.status == "optimal_inaccurate" else Status(out.status)
        variables, farkas = {}, None
        if status is Status.INFEASIBLE and qp.recover_farkas is not None:
            farkas = qp.recover_farkas(out.y)
        elif status not in (Status.INFEASIBLE, Status.UNBOUNDED):
            variables = qp.recover(out.x, out.y)
        with clock.paused():
            status, cert, message = self._judge(problem, status, variables, farkas, out.raw_status)
        return Outcome(
            status=status,
            variables=variables,
            iterations=out.iterations,
            certificate=cert,
            farkas=farkas,
            message=message,
            info={
                "raw_status": out.raw_status,
                "clarabel_solve_time": out.solve_time,
                "qp_x": out.x,
                "qp_y": out.y,
            },
            excluded_time=excluded,
        )
