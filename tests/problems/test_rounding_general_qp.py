"""The general QP's rounding allowance (problems/rounding_general_qp.py; issue 25: nothing may
weaken a certificate or a status).

At bounds of 1e6 the float64 gap ``F(a) − L(a, μ)`` differs from the same gap computed in long
double (the kernel's entries from the differences of the rows) at the points the certificate
judged; the allowance must cover the difference and stay below 1e-6 of |F|. At ordinary bounds
it is taken from maxima alone and stays below 1e-11 of |F|."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import svmbench.problems.rounding_general_qp as rg
from svmbench.problems.general_dual import GeneralDual
from svmbench.problems.general_qp import GeneralQP
from svmbench.problems.kernels import Kernel
from svmbench.solvers import registry

LONG = np.longdouble
needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
    reason="np.longdouble is float64 here: no more precise reference",
)
N = 40


def _forms(scale: float) -> dict[str, GeneralDual]:
    """C-SVC, ε-SVR, one-class, ν-SVC and a box-only linear form, their bounds (and sums)
    times ``scale``; rows off the origin, so that the kernel's expanded distances cancel."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(N, 3)) + np.array([2.0, -1.0, 0.5])
    t = X[:, 0] - 2.0 + 0.3 * rng.normal(size=N)
    y = np.where(t > 0, 1.0, -1.0)
    rbf = Kernel("rbf", 0.5)
    both, signs = np.r_[np.arange(N), np.arange(N)], np.r_[np.ones(N), -np.ones(N)]
    ones, u = np.ones(N), np.full(N, scale)
    return {
        "c_svc": GeneralDual(X, rbf, np.arange(N), y, -ones, u, "one", np.zeros(N)),
        "eps_svr": GeneralDual(
            X, rbf, both, signs, np.r_[0.1 - t, 0.1 + t], np.r_[u, u], "one", np.zeros(2 * N)
        ),
        "one_class": GeneralDual(
            X, rbf, np.arange(N), ones, np.zeros(N), u, "one", 0.3 * u, delta=0.3 * N * scale
        ),
        "nu_svc": GeneralDual(
            X,
            rbf,
            np.arange(N),
            y,
            np.zeros(N),
            u,
            "nu",
            np.zeros(N),
            delta=0.15 * N * scale,
            delta_neg=0.15 * N * scale,
        ),
        "linear_none": GeneralDual(
            X, Kernel("linear"), np.arange(N), y, -ones, u, "none", np.zeros(N), s2=1.0
        ),
    }


def _exact_gap(form: GeneralDual, cert) -> LONG:
    """``F(a) − L(a, μ)`` in long double at the certificate's a and multipliers."""
    XL = np.asarray(form.X, dtype=LONG)[form.rows]
    if form.kernel.name == "linear":
        K = XL @ XL.T
    else:
        D = ((XL[:, None, :] - XL[None, :, :]) ** 2).sum(axis=-1)
        K = np.exp(-LONG(form.kernel.gamma) * D)
    z = form.sign.astype(LONG)
    Q = (K + LONG(form.s2)) * np.outer(z, z)
    a = np.asarray(cert.primal_point["alpha"], dtype=LONG)
    p, u = form.p.astype(LONG), form.upper.astype(LONG)
    g = Q @ a
    arg, constant = g + p, LONG(0.0)
    mus = cert.primal_point["multipliers"]
    if form.equality == "one":
        arg = arg + LONG(mus[0]) * z
        constant = LONG(mus[0]) * LONG(form.delta)
    elif form.equality == "nu":
        pos = form.sign > 0
        arg = arg + np.where(pos, LONG(mus[0]), LONG(mus[1]))
        constant = LONG(mus[0]) * LONG(form.delta) + LONG(mus[1]) * LONG(form.delta_neg)
    return a @ g + p @ a + constant + u @ np.maximum(LONG(0.0), -arg)


def _points(form: GeneralDual):
    """A point near the optimum's pattern (some variables at each bound, some between) and
    the form's own start."""
    rng = np.random.default_rng(9)
    a = form.upper * rng.choice([0.0, 1.0, 0.5], size=form.n_variables, p=[0.4, 0.3, 0.3])
    a *= rng.uniform(0.9, 1.0, size=a.size)
    return [a, form.alpha0]


@needs_long_double
@pytest.mark.parametrize("name", sorted(_forms(1.0)))
def test_the_allowance_covers_the_exact_gap_at_large_bounds(name):
    form = _forms(1e6)[name]
    problem = GeneralQP(form)
    differ = 0
    for alpha in _points(form):
        cert = problem.certificate(alpha=alpha)
        assert cert.certified
        diff = abs(float(LONG(cert.gap) - _exact_gap(form, cert)))
        differ += diff > 0.0
        assert diff <= cert.rounding
        assert cert.rounding <= 1e-6 * max(1.0, abs(cert.primal))
    assert differ  # float64 loses digits here: without the allowance the bound fails


@needs_long_double
@pytest.mark.parametrize("name", ["c_svc", "eps_svr", "linear_none"])
def test_at_the_optimum_the_scores_that_weigh_are_recomputed_in_long_double(name, monkeypatch):
    """At bounds of 1e6, the barrier's optimum: the float64 bound alone exceeds 1e-8 of |F| (a
    tol of 1e-8 could not be met); the scores that weigh, in long double, bring it below 1e-9
    and correct the gap, which the allowance still covers."""
    form = _forms(1e6)[name]
    result = registry.get("barrier", tol=1e-8).solve(GeneralQP(form))
    cert = GeneralQP(form).certificate(alpha=result.alpha)
    scale = max(1.0, abs(cert.primal))
    assert cert.certified and cert.meets(1e-8)
    assert abs(float(LONG(cert.gap) - _exact_gap(form, cert))) <= cert.rounding <= 1e-9 * scale
    monkeypatch.setattr(rg, "_refined", lambda *args: (args[-3], args[-2], np.inf))
    first = GeneralQP(form).certificate(alpha=result.alpha)
    assert first.rounding > 1e-8 * scale and not first.meets(1e-8)


@needs_long_double
def test_the_projection_s_residue_is_counted():
    """A "one" form whose projected point sums to Δ only up to rounding: the move to the exact
    equality is part of the allowance (``_feasibility``), positive where the residue is."""
    form = _forms(1e6)["one_class"]
    problem = GeneralQP(form)
    alpha = form.upper * np.random.default_rng(2).uniform(0.0, 0.7, size=N)
    cert = problem.certificate(alpha=alpha)
    a = cert.primal_point["alpha"]
    residue = sum(map(LONG, a)) - LONG(form.delta)
    g = problem.hessian @ a
    arg = g + form.p + cert.primal_point["multipliers"][0] * form.sign
    moved = rg._feasibility(
        form, a, arg, np.zeros(N), rg._groups(form, cert.primal_point["multipliers"]),
        problem.hessian,
    )  # fmt: skip
    assert (moved > 0.0) == (residue != 0)
    assert moved <= cert.rounding


def test_an_ordinary_allowance_is_small_and_taken_from_maxima(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("the per-variable bound ran where the screen should settle it")

    monkeypatch.setattr(rg, "kernel_row_errors", refused)
    for name, form in _forms(1.0).items():
        problem = GeneralQP(form)
        cert = problem.certificate(alpha=_points(form)[0])
        assert cert.certified, name
        assert 0.0 < cert.rounding <= 1e-11 * max(1.0, abs(cert.primal)), name


def test_a_form_with_no_room_for_its_residue_certifies_nothing():
    """Every variable pinned to a bound that the equality's residue would push it past: no
    feasible point one move away, so the allowance is infinite and nothing is certified."""
    form = _forms(1.0)["one_class"]
    pinned = dataclasses.replace(form, delta=float(N) * (1.0 + 1e-15))  # Σa = N at most
    problem = GeneralQP(pinned)
    cert = problem.certificate(alpha=np.ones(N))
    assert cert.rounding == np.inf and not cert.certified
