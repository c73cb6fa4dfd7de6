"""Phase I of the hard margin [BV, §11.4.1]: a strictly feasible start, or a Farkas certificate.

Hard margin: ``min ½‖w‖²`` s.t. ``m_i ≥ 1`` (m = n), ``g = −log(m − 1)``, started from a
strictly feasible point found by the phase I problem ``min s s.t. m_i ≥ 1 − s``
[BV, §11.4.1], stopped as soon as ``s < 0``. The phase I dual is
``max Σλ_i s.t. Σλ_i = 1, Σλ_i y_i x̃_i = 0, λ ≥ 0``: at every phase I centre the normalized
multipliers ``λ_i ∝ 1/(m_i − 1 + s)`` satisfy these equations (stationarity in ``s`` and
``z``), i.e. they are the Farkas certificate of docs/ARCHITECTURE.md §2 when the data are not
separable (and no centre exists when they are: the phase I problem is then unbounded).
Phase I stays on the barrier path (:mod:`solvers.barrier.path`) whatever the method (its
multipliers are the Farkas certificate); its Newton steps are counted apart
(``info["phase1_newton_steps"]``).

References
----------
.. [BV] S. Boyd and L. Vandenberghe, *Convex Optimization*, Cambridge University Press, 2004,
   ch. 11 (barrier method, phase I).
"""

from __future__ import annotations

import time

import numpy as np

from svmbench.problems import HardMarginPrimal
from svmbench.solvers.barrier.forms import linear_features
from svmbench.solvers.barrier.path import PrimalState, center_primal
from svmbench.solvers.base import Outcome, Prepared, Status

#: Phase I centres tightly: its multipliers are the Farkas certificate.
PHASE1_NEWTON_TOL = 1e-12


def phase_one(problem: HardMarginPrimal, mu: float, max_iter: int) -> Prepared:
    """Phase I: either ``infeasible`` with its Farkas vector, or a strictly feasible start
    for phase II."""
    tic = time.perf_counter()
    feat, _ = linear_features(problem)
    n, dim = problem.n_samples, feat.dim
    phase1 = PrimalState(
        feat=feat.with_column(problem.y),  # m_i + s = y_i x̃_i·(z, s)·(.., y_i)
        y=problem.y,
        C=np.ones(n),
        loss="hard",
        p=np.zeros(dim + 1),
        c=np.append(np.zeros(dim), 1.0),
        z=np.append(np.zeros(dim), 2.0),
        t=float(n),
        mu=mu,
        n_constraints=n,
    )
    phase1.m = np.full(n, 2.0)
    farkas, steps = None, 0
    while steps < max_iter:
        # A tiny ridge keeps the system definite where X̃ᵀDX̃ is singular (p = 0 here).
        row_scale = float(np.mean(1.0 / (phase1.m - 1.0) ** 2))
        phase1.ridge = (1e-10 if feat.d <= n else 1e-6) * row_scale
        steps += center_primal(
            phase1, max_iter - steps, PHASE1_NEWTON_TOL, stop=lambda s: s.z[-1] < 0
        )
        if phase1.z[-1] < 0:
            break
        # λ⁺ of the last Newton step: Σλ⁺_i y_i x̃_i = ridge·Δz/t ≈ 0 and Σλ⁺_i ≈ 1.
        lam = np.maximum(phase1.lam, 0.0)
        lam /= lam.sum()
        if problem.is_infeasibility_certificate(lam):
            farkas = lam
            break
        if phase1.stalled:
            break
        phase1.t *= mu
    info1 = {"phase1_newton_steps": steps, "phase1_time": time.perf_counter() - tic}
    if farkas is not None or phase1.z[-1] >= 0:
        status = Status.INFEASIBLE if farkas is not None else Status.MAX_ITER
        if farkas is None and phase1.stalled:
            status = Status.NUMERICAL_ERROR
        final = Outcome(
            status=status,
            variables={} if farkas is not None else {"w": phase1.z[: feat.d]},
            iterations=steps,
            farkas=farkas,
            info=info1,
        )
        return Prepared(problem, iterations=steps, info=info1, final=final)
    # Phase I stops on an unbounded ray (s → −∞): the margins are homogeneous in z, so
    # z / min_i(m_i) · (1 + 1/10) is strictly feasible with min margin 1.1 and a small norm.
    z = phase1.z[:dim]
    z = z * (1.1 / float(np.min(problem.y * feat.dot(z))))
    # phase II's steps are counted on their own, as before (info holds phase I's)
    return Prepared(problem, warm_start=z, info=info1)
