"""OSQP (Stellato et al., Math. Prog. Comp. 2020) as a reference: ADMM on ``problem.to_qp()``.

``min ½xᵀPx + qᵀx  s.t.  l ≤ Ax ≤ u``, polished, ``eps_abs = eps_rel = eps`` (1e-7 by default:
1e-9 gave the same polished solutions at twice the time); ``tol`` is the certified relative gap
asked for, as for every solver. Targets OSQP ≥ 1.0 and maps every
``osqp.SolverStatus``; the problem re-checks the result (osqp/osqp#790: polishing can report
"solved" far from the optimum), so a claimed optimum with a large certified gap is reported as
``numerical_error``.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
from scipy import sparse

from svmbench.problems import KernelDual
from svmbench.problems.validation import check_bool, check_real
from svmbench.solvers._reference import QPReference
from svmbench.solvers.base import Outcome, Status
from svmbench.solvers.registry import register
from svmbench.solvers.time_budget import (
    ALLOWED_OVERRUN,
    NEGLIGIBLE_FLOPS,
    best_seconds,
    refused_outcome,
    stage_refusal,
)
from svmbench.solvers.worker import OVERHEAD, Stopped, call_with_deadline, can_fork

#: The size of the dense P on which OSQP's set-up is timed (:func:`setup_rate`).
CALIBRATION_N = 400


def _status_map():
    import osqp

    S = osqp.SolverStatus
    return {
        S.OSQP_SOLVED: Status.OPTIMAL,
        S.OSQP_SOLVED_INACCURATE: Status.OPTIMAL,  # re-checked by the certificate
        S.OSQP_PRIMAL_INFEASIBLE: Status.INFEASIBLE,
        S.OSQP_PRIMAL_INFEASIBLE_INACCURATE: Status.INFEASIBLE,  # re-checked by check_farkas
        S.OSQP_DUAL_INFEASIBLE: Status.UNBOUNDED,
        S.OSQP_DUAL_INFEASIBLE_INACCURATE: Status.UNBOUNDED,
        S.OSQP_MAX_ITER_REACHED: Status.MAX_ITER,
        S.OSQP_TIME_LIMIT_REACHED: Status.TIME_LIMIT,
        S.OSQP_NON_CVX: Status.NUMERICAL_ERROR,
        S.OSQP_SIGINT: Status.NUMERICAL_ERROR,
        S.OSQP_UNSOLVED: Status.NUMERICAL_ERROR,
    }


@functools.cache
def setup_rate() -> float:
    """Flops per second of OSQP's set-up with a dense P (its LDLᵀ factorization of the KKT
    matrix, ``n³/3`` flops for an n×n dense block): the best of two set-ups on a dense
    ``CALIBRATION_N``-square P, once per process (about 0.1 s)."""
    import osqp

    n = CALIBRATION_N
    G = np.random.default_rng(0).standard_normal((n, n))
    P = sparse.triu(sparse.csc_matrix(G @ G.T / n + np.eye(n)), format="csc")
    A, q, one = sparse.identity(n, format="csc"), np.ones(n), np.ones(n)

    def setup():
        osqp.OSQP().setup(P=P, q=q, A=A, l=-one, u=one, verbose=False)

    return n**3 / 3.0 / best_seconds(setup, 2)


@register
class OSQPReference(QPReference):
    """OSQP on the problem's exported QP.

    Parameters
    ----------
    tol : float, default=1e-6
        The certified relative gap asked for (see :class:`~solvers._reference.QPReference`).
    eps : float or None, default=None
        OSQP's ``eps_abs`` and ``eps_rel``; None: 1e-7.
    max_iter : int, default=200000
        ADMM iterations.
    polish : bool, default=True
        Solve the active-set linear system at the end (OSQP's ``polishing``).
    infeasibility_tol : float, default=1e-9
        ``eps_prim_inf`` and ``eps_dual_inf``: how exact an infeasibility certificate must be.
    rho : float, default=0.1
        OSQP's initial ADMM step size (adapted during the run). The default 0.1 stalls at a
        relative gap of 2e-3 on some separable no-bias duals where ``rho=1`` converges in a few
        thousand iterations; the certificate reports such a stall as ``max_iter``.

    ``solve(problem, warm_start=r)`` starts from a previous OSQP or Clarabel result ``r`` on a
    problem with the same QP shape (its QP vectors ``x, y``; a new C changes only the bounds).
    """

    name = "osqp"
    iteration_unit = "ADMM iterations"
    warm_start_uses = ("qp",)
    default_eps = 1e-7

    def __init__(
        self,
        *,
        polish: bool = True,
        infeasibility_tol: float = 1e-9,
        rho: float = 0.1,
        **common,
    ):
        super().__init__(**common)
        self.polish = check_bool("polish", polish)
        self.rho = check_real("rho", rho, low=0.0)
        self.infeasibility_tol = check_real("infeasibility_tol", infeasibility_tol, low=0.0)

    def _setup_seconds(self, problem):
        """A kernel dual's dense P: ``n³/3`` flops at OSQP's measured :func:`setup_rate`."""
        flops = problem.n_samples**3 / 3.0
        if not isinstance(problem, KernelDual) or flops < NEGLIGIBLE_FLOPS:
            return None
        rate = setup_rate()
        return flops / rate, f"n³/3 = {flops:.3g} flops at OSQP's measured {rate:.3g} flops/s"

    def _run(self, problem, warm_start, clock, callback) -> Outcome:
        qp, stopped = self._bounded_export(problem, clock)
        if stopped is not None:
            return stopped
        if warm_start is not None:
            x0, y0 = warm_start.qp
            if x0.shape[0] != qp.n_variables or y0.shape[0] != qp.n_constraints:
                raise ValueError(
                    f"warm_start qp vectors have lengths ({x0.shape[0]}, {y0.shape[0]}); this "
                    f"problem's QP has ({qp.n_variables}, {qp.n_constraints})"
                )
        limit = self.time_limit
        if math.isfinite(limit) and can_fork():
            # OSQP's set-up (an LDLᵀ factorization: minutes when the KKT matrix fills in) cannot
            # be interrupted: the call runs in a worker process stopped at the limit, with half
            # the allowed overrun to return the point of OSQP's own limit
            left = limit - clock.wall
            out = call_with_deadline(
                lambda: self._setup_and_solve(qp, warm_start, clock), left + ALLOWED_OVERRUN / 2
            )
            if isinstance(out, Stopped):
                why = f"OSQP did not return within time_limit={limit:g} s (its set-up cannot be "
                out = {"refusal": why + "interrupted): its worker process was stopped at the limit"}
            excluded = out.pop(OVERHEAD, 0.0)  # the fork and the transfer are not OSQP's
        else:
            out, excluded = self._setup_and_solve(qp, warm_start, clock), 0.0
        if "refusal" in out:
            stage = "OSQP's set-up and iterations"
            refusal = {"stage": stage, "wall": clock.wall, "time_limit": limit}
            return refused_outcome({**refusal, "message": out["refusal"]}, problem)
        status = Status(out["status"])
        variables, farkas = {}, None
        if status is Status.INFEASIBLE and qp.recover_farkas is not None:
            farkas = qp.recover_farkas(out["prim_inf_cert"])
        elif status not in (Status.INFEASIBLE, Status.UNBOUNDED):
            variables = qp.recover(out["x"], out["y"])
        with clock.paused():
            status, cert, message = self._judge(problem, status, variables, farkas, out["raw"])
        return Outcome(
            status=status,
            variables=variables,
            iterations=int(out["iter"]),
            certificate=cert,
            farkas=farkas,
            message=message,
            info={
                "raw_status": out["raw"],
                "polish_status": int(out["polish_status"]),
                "osqp_solve_time": float(out["solve_time"]),
                "osqp_setup_time": float(out["setup_time"]),
                "solve_wall_time": float(out["solve_wall"]),
                "qp_x": out["x"],
                "qp_y": out["y"],
            },
            excluded_time=excluded,
        )

    def _setup_and_solve(self, qp, warm_start, clock) -> dict:
        """OSQP's set-up and solve, as arrays and values (what a worker process returns), or
        ``{"refusal": why}`` when the time limit is reached by the end of the set-up."""
        import osqp

        settings = dict(
            eps_abs=self.eps,
            eps_rel=self.eps,
            eps_prim_inf=self.infeasibility_tol,
            eps_dual_inf=self.infeasibility_tol,
            max_iter=self.max_iter,
            polishing=self.polish,
            rho=self.rho,
            verbose=False,
        )
        if math.isfinite(self.time_limit):
            # OSQP counts its own set-up against the time left (0 would mean no limit)
            settings["time_limit"] = max(self.time_limit - clock.wall, 1e-3)
        solver = osqp.OSQP()
        solver.setup(P=qp.P, q=qp.q, A=qp.A, l=qp.l, u=qp.u, **settings)
        refusal = stage_refusal(clock, self.time_limit, "OSQP's iterations")
        if refusal is not None:
            return {"refusal": refusal["message"]}
        if warm_start is not None:
            x0, y0 = warm_start.qp
            solver.warm_start(x=x0, y=y0)
        t0 = time.perf_counter()
        res = solver.solve(raise_error=False)
        out = {
            "status": _status_map().get(res.info.status_val, Status.NUMERICAL_ERROR).value,
            "raw": str(res.info.status),
            "iter": int(res.info.iter),
            "polish_status": int(res.info.status_polish),
            "solve_time": float(res.info.solve_time),
            "setup_time": float(res.info.setup_time),
            "solve_wall": time.perf_counter() - t0,
        }
        for name in ("x", "y", "prim_inf_cert"):
            value = getattr(res, name, None)
            out[name] = None if value is None else np.asarray(value, dtype=np.float64)
        return out
