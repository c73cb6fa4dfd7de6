"""The general QP's Lagrangian certificate: exact at reference optima of C-SVC, ε-SVR and
one-class forms (OSQP, polished), positive away from them, and a true lower bound."""

import numpy as np
import osqp
import pytest

from svmbench.problems.general_dual import GeneralDual
from svmbench.problems.general_qp import GeneralQP, project
from svmbench.problems.kernels import Kernel

N = 50


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(N, 3))
    target = X[:, 0] + 0.3 * rng.normal(size=N)
    return X, target


def _forms():
    X, t = _data()
    kernel = Kernel("rbf", 0.5)
    both, signs = np.r_[np.arange(N), np.arange(N)], np.r_[np.ones(N), -np.ones(N)]
    y = np.where(t > 0, 1.0, -1.0)
    return {
        "c_svc": GeneralDual(
            X, kernel, np.arange(N), y, -np.ones(N), np.full(N, 2.0), "one", np.zeros(N)
        ),
        "eps_svr": GeneralDual(
            X,
            kernel,
            both,
            signs,
            np.r_[0.1 - t, 0.1 + t],
            np.full(2 * N, 2.0),
            "one",
            np.zeros(2 * N),
        ),
        "one_class": GeneralDual(
            X,
            kernel,
            np.arange(N),
            np.ones(N),
            np.zeros(N),
            np.ones(N),
            "one",
            np.full(N, 0.3),
            delta=0.3 * N,
        ),
        "nu_svc": GeneralDual(
            X,
            kernel,
            np.arange(N),
            y,
            np.zeros(N),
            np.ones(N),
            "nu",
            np.zeros(N),
            delta=0.3 * N / 2,
            delta_neg=0.3 * N / 2,
        ),
        "no_equality": GeneralDual(
            X,
            Kernel("linear"),
            np.arange(N),
            y,
            -np.ones(N),
            np.full(N, 2.0),
            "none",
            np.zeros(N),
            s2=1.0,
        ),
    }


def _osqp_optimum(form):
    qp = form.to_qp()
    solver = osqp.OSQP()
    solver.setup(
        qp.P,
        qp.q,
        qp.A,
        qp.l,
        qp.u,
        eps_abs=1e-10,
        eps_rel=1e-10,
        polish=True,
        verbose=False,
        max_iter=400_000,
    )
    out = solver.solve()
    return qp.recover(out.x, out.y)


@pytest.mark.parametrize("name", sorted(_forms()))
def test_certifies_the_reference_optimum_and_bounds_it_from_below(name):
    form = _forms()[name]
    problem = GeneralQP(form)
    optimum = _osqp_optimum(form)
    cert = problem.certificate(**optimum)
    assert cert.certified
    assert cert.rel_gap < 1e-9
    # away from the optimum: still a valid bound (L ≤ F* ≤ F), and a positive gap
    rng = np.random.default_rng(0)
    other = project(form, optimum["alpha"] + rng.uniform(0, 0.5, size=form.n_variables))
    assert form.equality_residual(other) < 1e-8
    assert np.all(other >= 0) and np.all(other <= form.upper)
    far = problem.certificate(alpha=other)
    assert far.gap > 1e-6
    assert far.dual <= cert.primal + 1e-9 * max(1.0, abs(cert.primal))
    assert far.primal >= cert.primal - 1e-9 * max(1.0, abs(cert.primal))


def test_refuses_infinite_bounds():
    X, _ = _data()
    with pytest.raises(ValueError, match="upper"):
        GeneralDual(
            X,
            Kernel("rbf", 1.0),
            np.arange(N),
            np.ones(N),
            np.zeros(N),
            np.full(N, np.inf),
            "none",
            np.zeros(N),
        )


def test_an_indefinite_form_certifies_nothing():
    X, _ = _data()
    sigmoid = Kernel("sigmoid", 2.0, coef0=-1.0)
    form = GeneralDual(
        X, sigmoid, np.arange(N), np.ones(N), np.zeros(N), np.ones(N), "one", np.full(N, 0.3),
        delta=0.3 * N,
    )  # fmt: skip
    problem = GeneralQP(form)
    assert not problem.convex
    assert not problem.certificate(alpha=form.alpha0).certified


def test_repeated_rows_read_the_kernel_once_per_row():
    X, _ = _data()
    form = _forms()["eps_svr"]
    K = Kernel("rbf", 0.5)(X)
    assert np.allclose(form.gram(), np.block([[K, K], [K, K]]), atol=1e-14)
