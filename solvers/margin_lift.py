"""The margin lift: a hinge point whose support vectors sit on the margin, moved just off it so
that float64 can show its gap at a large C (docs/ARCHITECTURE.md §4, "Rounding floor").

At the hinge dual's optimum the free support vectors have margins ``m_i = y_i f(x_i) = 1``
exactly; computed, they are ``1 ± 1e-14``, and the primal term ``C_i max(0, 1 − m_i)`` turns that
rounding into about ``C·1e-14`` a vector: 1e-4 at C = 1e10, a relative gap no iteration removes
(SMO ends ``numerical_error``, the exact finish's KKT point is refused, an interior point keeps
every row as a support vector). Scaling ``(α, b)`` by ``1 + δ`` scales every margin by ``1 + δ``:
those on the margin move to ``1 + δ``, clear of their rounding once ``δ`` exceeds it, their hinge
terms vanish and their slopes in the rounding allowance fall from ``C_i`` to ``α_i``. What the
scaling costs is exact: with every margin at least 1 and ``‖w‖² + b·yᵀα = Σα`` (complementary
slackness, no multiplier at ``C``), ``P − D = δ(1 + δ)Σα``. Where multipliers sit at ``C_i``
(they cannot grow), the free ones are solved again with the margins they ask at ``1 + δ``
(:func:`~solvers.exact_finish.solve_free_set`), the bounded ones kept.

The lifted point is judged by the problem's own certificate, as every point is: it is kept only
when that meets ``tol`` with its rounding allowance. ``δ`` runs up ``LIFTS`` while ``δΣα`` stays
within a quarter of ``tol·max(1, |P|)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from svmbench.problems import KernelDual
from svmbench.problems.base import Certificate, Problem
from svmbench.problems.rounding import UNIT_ROUNDOFF
from svmbench.solvers.exact_finish import (
    MAX_FREE,
    exact_finish,
    finish_applies,
    finished_point,
    solve_free_set,
    variables_of,
    zero_label_sum,
)
from svmbench.solvers.records import STATUS_MESSAGES, Outcome, Status, replaced

#: The lifts δ tried, smallest first: above the margins' rounding (1e-14 to 1e-12 on the data
#: sets tried), far below any tol.
LIFTS = (1e-11, 1e-9, 1e-7)
#: The lift the exact finish asks of its KKT points at a large C (:func:`lift_of`).
KKT_LIFT = 1e-9
#: A method's iterate certified short of tol at a large C is finished exactly
#: (:func:`finished_or_lifted`) once its native tolerance is at most this (LIBSVM's default:
#: the active set is usually found by then), at most this many free multipliers solved.
EARLY_FINISH_EPS = 1e-3
EARLY_MAX_FREE = 500
#: The lift is tried only where C times what rounding can put in the margins, summed over the
#: examples (``max C_i · n · u · max(1, Σα · max K̃_ii)``), is at least this fraction of
#: ``tol·max(1, Σα/2)`` (the dual's size near the optimum, ``D ≥ Σα/2``): below it, the margins'
#: rounding is not what keeps a point from ``tol``.
LIFT_GATE = 1e-2
#: A scaled point whose gap, estimated from the margins, exceeds this many times
#: ``tol·max(1, P)`` is not certified (:func:`lift_margins`).
LIFT_SCREEN = 4.0
#: Up to this many examples (8 MB) the lift's margins come from the problem's Gram matrix.
LIFT_GRAM_SAMPLES = 1024


def _diagonal(problem) -> float:
    """What a margin's sum can weigh per unit of α, in units of its rounding: ``max K̃_ii``
    (the kernel's diagonal, ``max ‖x_i‖²`` for the linear views; ``+ s²`` for a regularized
    bias), for RBF ``1 + 4γ max ‖x_i‖²`` (an entry's relative error from the expanded
    distance ``‖x‖² + ‖z‖² − 2x·z``: at γ = 1e3 on digits, 2.6e5)."""
    if isinstance(problem, KernelDual):
        if problem.kernel == "rbf":
            sqn = float(np.max(problem.squared_norms, initial=0.0))
            diag = 1.0 + 4.0 * float(problem.gamma) * sqn
        else:
            diag = float(np.max(np.abs(problem.kernel_diagonal), initial=0.0))
    else:
        diag = float(np.max(problem.row_norms, initial=0.0)) ** 2
    return diag + (problem.bias_scale**2 if problem.bias == "regularized" else 0.0)


def _scales(problem) -> tuple[float, float]:
    """``(max C_i · n · u, _diagonal(problem))``, computed once per problem (O(n)) and kept in
    its ``__dict__``, as ``functools.cached_property`` keeps a value: the solvers ask at every
    gap estimate."""
    scales = problem.__dict__.get("_lift_scales")
    if scales is None:
        if getattr(problem, "sample_weight", None) is None:
            c_max = float(problem.C)  # every C_i is C
        else:
            c_max = float(np.max(problem.dual_box()[1], initial=0.0))
        scales = (c_max * problem.n_samples * UNIT_ROUNDOFF, _diagonal(problem))
        problem.__dict__["_lift_scales"] = scales
    return scales


def lift_worth(problem: Problem, tol: float, alpha, gate: float = LIFT_GATE) -> bool:
    """Whether a hinge binary dual at multipliers ``alpha`` has a C large enough for its
    margins' rounding to weigh at ``tol`` (``LIFT_GATE``). Without Σα first: the test cannot
    hold unless ``max C_i·n·u·max(1, 2 max K̃_ii) ≥ gate·tol``, a few scalar operations."""
    if getattr(problem, "loss", None) != "hinge" or not finish_applies(problem):
        return False
    weight, diag = _scales(problem)
    if weight * max(1.0, 2.0 * diag) < gate * tol:
        return False
    total = float(np.sum(alpha)) if alpha is not None else 0.0
    if not (math.isfinite(total) and total >= 0.0):
        return False
    return weight * max(1.0, total * diag) >= gate * tol * max(1.0, 0.5 * total)


def lift_of(problem: Problem, alpha, tol: float, largest: bool = False) -> float:
    """The lift δ the exact finish asks of the margins of its KKT points near the multipliers
    ``alpha``, at a C where their rounding weighs (:func:`lift_worth`; else 0, margins asked at 1
    exactly): ``KKT_LIFT``, or 64 times a margin's rounding ``u·Σα·max K̃_ii`` where that is
    larger (an ill-conditioned linear view: breast cancer at C = 1e8, Σα = 1.3e5), at most
    ``δΣα ≤ tol·max(1, Σα/2)/4`` (``largest``: that bound itself); 0 where even ``LIFTS[0]``
    exceeds it."""
    if alpha is None:
        return 0.0
    if not lift_worth(problem, tol, alpha):
        return 0.0
    total = float(np.sum(alpha))
    if total <= 0.0:
        return KKT_LIFT
    budget = 0.25 * tol * max(1.0, 0.5 * total) / total
    wanted = max(KKT_LIFT, 64.0 * UNIT_ROUNDOFF * total * _diagonal(problem))
    delta = budget if largest else min(wanted, budget)
    return delta if delta >= LIFTS[0] else 0.0


def finish_exactly(
    problem: Problem,
    variables: Mapping[str, Any],
    certificate: Certificate | None,
    *,
    tol: float,
    **options,
) -> tuple[dict[str, Any], Certificate | None, dict[str, Any]]:
    """:func:`~solvers.exact_finish.exact_finish` with its KKT points' margins asked at
    ``1 + δ`` where a large C makes their rounding weigh (:func:`lift_of`); where it asked
    them at 1 and every candidate was refused, once more with the smallest lift that fits."""
    if certificate is None or certificate.dual_point is None:
        certificate = problem.certificate(**variables)
    lift = lift_of(problem, certificate.dual_point, tol)
    done = exact_finish(problem, variables, certificate, tol=tol, lift=lift, **options)
    if done[2].get("accepted") or "tried" not in done[2]:
        return done
    # refused: the margins' errors above the lift (an ill-conditioned KKT system), or a C just
    # below the gate; once more with the largest lift tol leaves room for
    largest = lift_of(problem, certificate.dual_point, tol, largest=True)
    if largest > lift:
        again = exact_finish(problem, variables, certificate, tol=tol, lift=largest, **options)
    elif not lift and _fits(problem, certificate, tol):
        again = exact_finish(problem, variables, certificate, tol=tol, lift=LIFTS[0], **options)
    else:
        return done
    return again if again[2].get("accepted") else done


def _fits(problem, cert, tol) -> bool:
    """Whether the smallest lift fits in tol (``δΣα ≤ tol·max(1, Σα/2)/4``) at a hinge whose
    margins' rounding could weigh at all (:func:`lift_worth` at a gate 1e4 times lower)."""
    if cert.dual_point is None or not lift_worth(problem, tol, cert.dual_point, 1e-4 * LIFT_GATE):
        return False
    total = float(np.sum(cert.dual_point))
    return LIFTS[0] * total <= 0.25 * tol * max(1.0, 0.5 * total)


def lift_applies(problem: Problem, cert: Certificate | None, tol: float) -> bool:
    """Whether :func:`lift_margins` may show what ``cert`` cannot: a hinge binary dual, a point
    certified but short of ``tol``, at a C where the margins' rounding weighs."""
    if cert is None or not cert.certified or cert.meets(tol) or not math.isfinite(cert.gap):
        return False
    return lift_worth(problem, tol, cert.dual_point)


def lifted_estimate(problem, tol, P, gap, alpha, G, y, b, upper) -> float:
    """A solver's O(n) gap estimate ``gap`` (of objective ``P``), or where it is short of ``tol``
    at a large C (:func:`lift_worth`), the lifted points' (:func:`lifted_gap`, ``G + y b`` the
    margins less 1, as SMO's gradient ``G = Q̃α − 1`` gives them)."""
    if gap <= tol * max(1.0, abs(P)) or not lift_worth(problem, tol, alpha):
        return gap
    return lifted_gap(alpha, G + y * b, upper, gap)


def lifted_gap(alpha: np.ndarray, r: np.ndarray, upper: np.ndarray, gap: float) -> float:
    """The smallest of ``gap`` and the hinge gaps of the point lifted by each δ of ``LIFTS``,
    from ``r = m − 1`` (the margins less 1, as a solver's gradient gives them, O(n) each):
    ``(1 + δ) Σα_i (m'_i − 1) + Σ C_i max(0, 1 − m'_i)``, ``m' = (1 + δ) m`` — the gap's
    estimate a solver stops on (α at its bound is scaled too: an estimate, the certificate
    judges)."""
    best = gap
    for delta in LIFTS:
        lifted = (1.0 + delta) * (r + 1.0)
        lifted -= 1.0
        gap_delta = (1.0 + delta) * float(alpha @ lifted) - float(upper @ np.minimum(lifted, 0.0))
        best = min(best, gap_delta)
    return best


def lift_margins(
    problem: Problem,
    variables: Mapping[str, Any],
    cert: Certificate,
    tol: float,
    largest_first: bool = False,
) -> tuple[dict[str, Any], Certificate, dict[str, Any]] | None:
    """``(variables, certificate, report)`` of the point lifted by the first δ of ``LIFTS``
    whose certificate meets ``tol``, or None (the point is then kept as it is). The smallest δ
    first, for a KKT point exact to rounding; ``largest_first`` for a method's iterate, whose
    margins are off by its own tolerance (one certificate, where the smallest would take three).

    ``variables`` is the point ``cert`` was drawn at (its α projected into the box is
    ``cert.dual_point``); the report gives ``lifted`` (δ), ``method`` (``"scaled"``, or ``"kkt"``
    where multipliers sit at their bound) and the relative gaps before and after."""
    alpha = cert.dual_point
    b = cert.primal_point.get("b") if cert.primal_point else None
    if variables.get("alpha") is None or alpha is None or b is None:
        return None  # a solver that hands over (w, b) only: its model is w
    if not lift_applies(problem, cert, tol):
        return None
    alpha = np.asarray(alpha, dtype=np.float64)
    _, upper = problem.dual_box()
    total = float(alpha.sum())
    if not (total > 0.0 and math.isfinite(total)):
        return None
    budget = 0.25 * tol * max(1.0, abs(cert.primal))
    margins = None
    for delta in sorted(LIFTS, reverse=largest_first):
        if delta * total > budget:
            continue
        if isinstance(problem, KernelDual) and (alpha * (1.0 + delta) <= upper).all():
            if margins is None:  # one kernel product, where each δ tried costs a certificate
                margins = problem.y * (_kernel_times(problem, alpha * problem.y) + float(b))
            if not _scaled_within(alpha, margins, upper, delta, tol):
                continue
        point = _lifted(problem, alpha, float(b), upper, delta)
        if point is None:
            return None
        lifted = variables_of(problem, *point[:2])
        new_cert = problem.certificate(**lifted)
        if new_cert.meets(tol):
            report = {
                "lifted": delta,
                "method": point[2],
                "rel_gap_before": float(cert.rel_gap),
                "rel_gap_after": float(new_cert.rel_gap),
                "accepted": True,
                "support": int(np.count_nonzero(new_cert.dual_point)),
            }
            return lifted, new_cert, report
    return None


def _kernel_times(problem: KernelDual, coef: np.ndarray) -> np.ndarray:
    """``K @ coef``: from the problem's Gram matrix, made here, where it has at most
    ``LIFT_GRAM_SAMPLES`` examples of its own rows (no shared ones) and a quarter of them or
    more in the support (then the Gram matrix costs what one product does, and the lifted
    point's certificate and its allowance read it); else the problem's product."""
    n = problem.n_samples
    if (
        "gram" not in problem.__dict__
        and problem.shared_rows is None
        and problem.kernel != "precomputed"
        and n <= LIFT_GRAM_SAMPLES
        and 4 * np.count_nonzero(coef) >= n
    ):
        problem.gram  # noqa: B018 (a cached property: kept on the problem)
    return problem.kernel_times(coef)


def _scaled_within(alpha, m, upper, delta: float, tol: float) -> bool:
    """Whether ``(α, b)`` scaled by ``s = 1 + δ`` may meet ``tol``, from its margins ``m``
    (O(n)): the scaled point's hinge gap ``s Σα_i(s m_i − 1) + Σ C_i max(0, 1 − s m_i)``
    (``αᵀQ̃α = Σα_i m_i`` for every bias) within ``LIFT_SCREEN`` times ``tol·max(1, P)``,
    ``P = ½ s² Σα_i m_i + Σ C_i max(0, 1 − s m_i)``. A screen, not a verdict: the point it
    passes is certified by the problem, one it refuses was far from tol (the margins' rounding
    moves the estimate by about the certificate's allowance)."""
    scale = 1.0 + delta
    quad = scale * scale * float(alpha @ m)
    loss = float(upper @ np.maximum(0.0, 1.0 - scale * m))
    gap = quad + loss - scale * float(alpha.sum())
    return gap <= LIFT_SCREEN * tol * max(1.0, abs(0.5 * quad + loss))


def _lifted(problem, alpha, b, upper, delta):
    """``(α, b, method)`` with every margin on 1 moved to ``1 + δ``: α and b scaled by ``1 + δ``
    where that keeps α in its box, else the free multipliers solved for margins ``1 + δ`` with the
    bounded ones kept (None if there are more than ``MAX_FREE``)."""
    scale = 1.0 + delta
    scaled = alpha * scale
    if (scaled <= upper).all():
        return zero_label_sum(problem, scaled, upper), b * scale, "scaled"
    free = np.flatnonzero((alpha > 0.0) & (alpha < upper))
    if free.size > MAX_FREE:
        return None
    fixed = np.where(alpha >= upper, upper, 0.0)
    solved, new_b, method = solve_free_set(problem, fixed, free, alpha[free], b, upper, lift=delta)
    if method != "kkt":
        return None
    return zero_label_sum(problem, solved, upper), new_b, "kkt"


#: The statuses whose certified point the lift may turn ``optimal``: a method that stopped, or
#: whose rule held, short of what float64 showed of its gap.
LIFTED_FROM = (Status.NUMERICAL_ERROR, Status.NOT_CERTIFIED, Status.MAX_ITER)


def lifted_outcome(outcome: Outcome, problem: Problem, tol: float) -> Outcome:
    """``outcome`` with its point lifted (:func:`lift_margins`) and ``optimal`` where the lifted
    point's certificate meets ``tol``; else ``outcome`` itself (with the certificate drawn, if
    one was). Only a status of ``LIFTED_FROM`` with finite variables that include α is tried,
    and a certificate is drawn only where :func:`lift_worth` holds at that α."""
    variables = outcome.variables
    if outcome.status not in LIFTED_FROM or variables.get("alpha") is None:
        return outcome
    alpha, b = np.asarray(variables["alpha"]), variables.get("b")
    if not np.isfinite(alpha).all() or not lift_worth(problem, tol, alpha):
        return outcome
    if b is not None and not math.isfinite(b):
        return outcome
    cert = outcome.certificate
    if cert is None or cert.dual_point is None:
        cert = problem.certificate(**variables)
    lifted = lift_margins(problem, variables, cert, tol, largest_first=True)
    if lifted is None:
        return replaced(outcome, certificate=cert)
    new_vars, new_cert, report = lifted
    message = f"{outcome.message or STATUS_MESSAGES[outcome.status]}; {lift_words(report)}"
    return replaced(
        outcome,
        status=Status.OPTIMAL,
        variables=new_vars,
        certificate=new_cert,
        message=message,
        info={**outcome.info, "margin_lift": report},
    )


def lift_words(report: Mapping[str, Any]) -> str:
    """What a record whose point was finished exactly or lifted (or both) says."""
    words = "its free multipliers solved exactly" if report.get("early") else ""
    if report.get("lifted"):
        words += (" and " if words else "") + f"its margins lifted by δ = {report['lifted']:g}"
    return f"{words} (C magnifies their rounding), certified at {report['rel_gap_after']:.3g}"


def finish_due(problem: Problem, tol: float, eps: float, alpha) -> bool:
    """Whether a method whose native rule holds at ``eps`` should hand its point over to
    :func:`finished_or_lifted` although its gap estimate is short of ``tol``: at a large C
    (:func:`lift_worth`) its estimate carries C times its margins' error, which only an exact
    point shows the real size of. Only with at most ``EARLY_MAX_FREE`` free multipliers: beyond,
    the finish would only lift the method's own point, whose lifted gap the method's estimate
    already gives (:func:`lifted_estimate`)."""
    if eps > EARLY_FINISH_EPS or not lift_worth(problem, tol, alpha):
        return False
    _, upper = problem.dual_box()
    return int(np.count_nonzero((alpha > 0.0) & (alpha < upper))) <= EARLY_MAX_FREE


#: The exact finish's report on a point :func:`finished_or_lifted` solved on its own active set.
FINISHED_EARLY = "finished early: the KKT point of the method's own active set"


def early_report(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The exact finish's report (``skipped``) on the point of a :func:`finished_or_lifted`
    report whose free multipliers were solved (``early``), else None: that point is the KKT
    point of the method's own active set, certified at ``tol``, which the finish would only
    solve again (the smallest free sets first, their certificates drawn, on a problem where C
    makes each refined allowance cost a long-double kernel block)."""
    if not report.get("early"):
        return None
    return {"skipped": FINISHED_EARLY, "rel_gap_before": report["rel_gap_after"]}


def finished_or_lifted(
    problem: Problem,
    variables: Mapping[str, Any],
    cert: Certificate,
    tol: float,
    failed: set[bytes] | None = None,
) -> tuple[dict[str, Any], Certificate, dict[str, Any]] | None:
    """``(variables, certificate, report)`` of a method's iterate certified short of ``tol`` at a
    large C (:func:`lift_applies`), made certifiable: the KKT equations of its free multipliers
    solved with the others at their bounds (:func:`~solvers.exact_finish.exact_finish`, at most
    ``EARLY_MAX_FREE`` free, the margins lifted where needed), else its own margins lifted
    (largest δ first); None when neither meets ``tol``.

    ``failed``: the active sets (:func:`active_set_key`) on which this run's earlier calls
    returned None, kept by the caller for one run and added to here. On such a set the KKT
    equations are not solved again (the same free block and bounded part: the same point up to
    the lift δ, itself a function of ``Σα``); only a lift by scaling is tried, where no
    multiplier sits at C (the scaled iterate is the iterate's, closer to the optimum each time)."""
    if not lift_applies(problem, cert, tol) or variables.get("alpha") is None:
        return None
    lift = lift_of(problem, cert.dual_point, tol)
    if not lift:  # a tol no lift fits in: the margins' rounding cannot be shown away
        return None
    alpha = np.asarray(cert.dual_point, dtype=np.float64)
    _, upper = problem.dual_box()
    atC = alpha >= upper
    if failed is None:
        return _finished_or_lifted(problem, variables, cert, tol, lift, alpha, upper, atC)
    key = active_set_key(alpha, atC)
    if key in failed:
        if atC.any():  # the lift would solve the same free set again (_lifted)
            return None
        return lift_margins(problem, variables, cert, tol, largest_first=True)
    done = _finished_or_lifted(problem, variables, cert, tol, lift, alpha, upper, atC)
    if done is None:
        failed.add(key)
    return done


def active_set_key(alpha: np.ndarray, atC: np.ndarray) -> bytes:
    """The active set of multipliers ``alpha`` whose mask ``atC`` holds those at their upper
    bound, as bytes: which sit there and which are free (two bits an example)."""
    return np.packbits(atC).tobytes() + np.packbits((alpha > 0.0) & ~atC).tobytes()


def _finished_or_lifted(problem, variables, cert, tol, lift, alpha, upper, atC):
    b = cert.primal_point.get("b")
    free = np.flatnonzero((alpha > 0.0) & ~atC)
    if free.size <= EARLY_MAX_FREE:  # the method's own active set, its free multipliers solved
        new_vars, _, method = finished_point(problem, atC, free, alpha, b, upper, lift)
        new_cert = problem.certificate(**new_vars) if method == "kkt" else None
        report = {"early": True, "lifted": lift, "free": int(free.size)}
        if new_cert is not None and new_cert.certified and new_cert.rel_gap <= tol:
            if not new_cert.meets(tol):  # the right point, its margins' allowance above δ
                more = lift_margins(problem, new_vars, new_cert, tol, largest_first=True)
                if more is None:
                    return lift_margins(problem, variables, cert, tol, largest_first=True)
                new_vars, new_cert = more[0], more[1]
                report["lifted"] = lift + more[2]["lifted"]
            return new_vars, new_cert, {
                **report, "fixed_at_C": int(atC.sum()), "rel_gap_before": float(cert.rel_gap),
                "rel_gap_after": float(new_cert.rel_gap),
                "support": int(np.count_nonzero(new_cert.dual_point)),
            }  # fmt: skip
    return lift_margins(problem, variables, cert, tol, largest_first=True)
