"""The active-set cleanup of an interior point of a general dual (the barrier on a
``GeneralDualProblem``, where the binary duals' exact finish does not run).

An interior-point method leaves every multiplier strictly inside its box ``0 ≤ α_t ≤ u_t``, so a
model built from α would keep every row. At thresholds ε from ``√rel_gap`` (clipped to
[1e-12, 1e-6]) up to 1e-2 by factors of 10, the cleanup sets ``α_t ≤ ε min(u_t, max α)`` to 0
(large bounds that no multiplier reaches do not set the scale) and
``u_t − α_t ≤ ε u_t`` to ``u_t`` and solves the KKT system of the free set F with the equality
rows A (Nocedal & Wright, *Numerical Optimization*, 2006, §16.1 and §16.5)::

    [Q_FF  A_Fᵀ] [α_F]   [−p_F − Q_FB α_B]
    [A_F    0  ] [ λ ] = [ Δ − A_B α_B    ]

as a minimum-norm correction of the point's own α_F (a singular system, α not unique, keeps the
solution nearest the point); a multiplier that leaves its box is fixed at that bound and the rest
solved again (five rounds at most). ρ comes from λ as in :mod:`solvers.barrier.general`. The
problem certifies each candidate; the one of smallest certified gap replaces the point only if
its relative gap is smaller than the point's, or at most ``STOP_GAP`` (exact to rounding: the
multipliers set at their bounds are then what improves).
"""

from __future__ import annotations

import math

import numpy as np

from svmbench.solvers.barrier.general import equality_rows

#: The thresholds run from √rel_gap clipped to [EPS_FIRST_MIN, EPS_FIRST_MAX] up to EPS_LOOSE.
EPS_FIRST_MIN, EPS_FIRST_MAX, EPS_LOOSE = 1e-12, 1e-6, 1e-2
#: Rounds of fixing the multipliers that leave their box.
MAX_ROUNDS = 5
#: Above this many free multipliers the dense KKT solve is not tried.
MAX_FREE = 2000
#: A candidate certified to this relative gap ends the search.
STOP_GAP = 1e-12


def thresholds(rel_gap: float) -> list[float]:
    """``ε₀ = √rel_gap`` clipped, then ×10 up to ``EPS_LOOSE``."""
    first = min(EPS_FIRST_MAX, max(EPS_FIRST_MIN, math.sqrt(max(rel_gap, 0.0))))
    out = [first]
    while out[-1] * 10.0 <= EPS_LOOSE * (1 + 1e-9):
        out.append(out[-1] * 10.0)
    return out


def _rho(equality: str, lam: np.ndarray) -> float:
    if equality == "one":
        return -float(lam[0])
    if equality == "nu":
        return 0.5 * float(lam[1] - lam[0])
    return 0.0


def solve_free_set(form, Q, alpha, at_lower, at_upper):
    """The KKT point with ``at_lower`` at 0 and ``at_upper`` at u (module notes), or None when
    it stays outside the box after ``MAX_ROUNDS``; returns ``(α, ρ, fixed_at_0, fixed_at_u)``."""
    u = form.upper
    A, delta = equality_rows(form)
    lower, upper = at_lower.copy(), at_upper.copy()
    for _ in range(MAX_ROUNDS):
        free = ~(lower | upper)
        if int(free.sum()) > MAX_FREE:
            return None
        a = np.where(upper, u, 0.0)
        a[free] = alpha[free]
        A_F = A[:, free]
        k, f = A.shape[0], int(free.sum())
        K = np.zeros((f + k, f + k))
        K[:f, :f] = Q[np.ix_(free, free)]
        K[:f, f:] = A_F.T
        K[f:, :f] = A_F
        # the residuals of the KKT equations at the point's own α_F (λ = 0), then the
        # minimum-norm correction
        rhs = np.concatenate([-(Q[free] @ a + form.p[free]), delta - A @ a])
        step = np.linalg.lstsq(K, rhs, rcond=None)[0]
        a[free] += step[:f]
        below, above = free & (a < 0.0), free & (a > u)
        if not (below.any() or above.any()):
            return a, _rho(form.equality, step[f:]), int(lower.sum()), int(upper.sum())
        lower |= below
        upper |= above
    return None


def active_set_cleanup(problem, form, Q, alpha, rho, certificate):
    """Try the candidates of the module notes on ``alpha`` (certified by ``certificate``).

    Returns ``(alpha, rho, certificate, report)``: the point given, or the better candidate.
    """
    before = certificate.rel_gap
    report = {"accepted": False, "rel_gap_before": before, "tried": []}
    best = None
    seen = set()
    scale = float(np.max(alpha, initial=0.0))
    for eps in thresholds(before):
        at_lower = alpha <= eps * np.minimum(form.upper, scale)
        at_upper = ~at_lower & (form.upper - alpha <= eps * form.upper)
        key = (at_lower.tobytes(), at_upper.tobytes())
        if key in seen:
            continue
        seen.add(key)
        solved = solve_free_set(form, Q, alpha, at_lower, at_upper)
        if solved is None:
            report["tried"].append({"threshold": eps, "rel_gap": None})
            continue
        a, r, n_lower, n_upper = solved
        cert = problem.certificate(**problem.variables_from_smo(a, r))
        report["tried"].append({"threshold": eps, "rel_gap": cert.rel_gap})
        if cert.certified and (best is None or cert.rel_gap < best[2].rel_gap):
            best = (a, r, cert, n_lower, n_upper)
        if cert.certified and cert.rel_gap <= STOP_GAP:
            break
    if best is None or not (best[2].rel_gap < before or best[2].rel_gap <= STOP_GAP):
        return alpha, rho, certificate, report
    a, r, cert, n_lower, n_upper = best
    report.update(
        accepted=True,
        rel_gap_after=cert.rel_gap,
        fixed_at_0=n_lower,
        fixed_at_upper=n_upper,
        free=int(len(a) - n_lower - n_upper),
    )
    return a, r, cert, report
