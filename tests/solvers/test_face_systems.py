"""The active-set method's face systems (solvers/face_systems.py): the reduced-Hessian step
against the bordered KKT system solved independently, its invariance to a constant added to the
kernel, its refusal of a singular face, and the method on the face that the former shifted
Cholesky factorization could not take (breast cancer at C = 1e10, γ = 1e-7)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

from svmbench.problems import KernelDual
from svmbench.solvers import active_set, face_systems, registry
from svmbench.solvers.base import Status

TOL = 1e-6


def _bordered(A, g, y, residual):
    """``(p, ν)`` of ``[A y; yᵀ 0][p; ν] = [−g; −r]`` by a general LU solve."""
    m = A.shape[0]
    M = np.zeros((m + 1, m + 1))
    M[:m, :m], M[:m, m], M[m, :m] = A, y, y
    x = np.linalg.solve(M, np.append(-g, -residual))
    return x[:m], x[m]


def _face(m, seed, shift=0.0):
    """A random face: ``A`` positive definite on ``yᵀp = 0``, then ``shift·y yᵀ`` added (a
    negative shift makes ``A`` itself indefinite, as the shifted RBF kernel's block is)."""
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(m, m))
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    y[0] = 1.0 if seed % 2 else -1.0  # both signs of the reflection's first label
    return B @ B.T + shift * np.outer(y, y), rng.normal(size=m), y


@pytest.mark.parametrize("m", [2, 3, 17, 60])
@pytest.mark.parametrize("shift", [0.0, -50.0, 1e3])
@pytest.mark.parametrize("residual", [0.0, 0.7])
def test_the_reduced_step_solves_the_bordered_system(m, shift, residual):
    A, g, y = _face(m, seed=m, shift=shift)
    step = face_systems.face_step(A, g, y, residual)
    assert step is not None
    p, nu, consistent = step
    assert consistent
    p_ref, nu_ref = _bordered(A, g, y, residual)
    scale = max(1.0, np.abs(p_ref).max())
    assert np.abs(p - p_ref).max() <= 1e-9 * scale
    assert abs(nu - nu_ref) <= 1e-9 * max(1.0, abs(nu_ref))
    # the constraint holds as asked, and the stationarity on the face
    assert abs(y @ p + residual) <= 1e-10 * scale * m
    assert np.abs(A @ p + g + nu * y).max() <= 1e-9 * max(1.0, np.abs(A).max()) * scale


def test_a_constant_added_to_the_kernel_leaves_the_step_unchanged():
    """``Q̃ + κ y yᵀ`` (a constant κ added to K) has the same step on ``yᵀp = −r`` and a bias
    shifted by ``κ r``: the reduced Hessian does not see κ, which the former ``ρ y yᵀ`` shift
    had to outweigh."""
    A, g, y = _face(25, seed=4)
    p0, nu0, _ = face_systems.face_step(A, g, y, 0.5)
    for kappa in (-30.0, 30.0):
        p, nu, _ = face_systems.face_step(A + kappa * np.outer(y, y), g, y, 0.5)
        assert np.abs(p - p0).max() <= 1e-9 * max(1.0, np.abs(p0).max())
        assert abs(nu - (nu0 + kappa * 0.5)) <= 1e-8 * max(1.0, abs(nu0))


def test_without_a_bias_the_step_is_the_plain_solve():
    A, g, _ = _face(12, seed=5)
    p, nu, consistent = face_systems.face_step(A, g, None)
    assert consistent and nu == 0.0
    assert np.allclose(A @ p, -g, rtol=0.0, atol=1e-10 * np.abs(g).max())


def _repeated_face(seed, both_labels: bool):
    """A face of an RBF kernel whose row 7 repeats row 2, under the same label or the other."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(9, 3))
    X[7] = X[2]
    y = np.where(rng.random(9) < 0.5, 1.0, -1.0)
    y[7] = -y[2] if both_labels else y[2]
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    return K * np.outer(y, y), y


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_singular_consistent_face_gets_the_minimum_norm_step(bias, seed):
    """A row repeated under its own label: ``e₂ − e₇`` is null (and keeps ``yᵀp``), and a
    gradient with ``g₂ = g₇`` (as ``Q̃α − 1`` has) keeps the system consistent. The step must be
    the minimum-norm solution of the bordered system, as the pseudo-inverse gives it."""
    Q, y = _repeated_face(seed, both_labels=False)
    g = Q @ np.random.default_rng(seed).random(9) - 1.0
    assert g[2] == pytest.approx(g[7], abs=1e-14)
    yb = y if bias else None
    p, nu, consistent = face_systems.face_step(Q, g, yb, 0.0)
    assert consistent
    if bias:
        M = np.zeros((10, 10))
        M[:9, :9], M[:9, 9], M[9, :9] = Q, y, y
        ref = np.linalg.pinv(M, rcond=1e-10) @ np.append(-g, 0.0)
        # the null space has no ν part here: the minimum norms agree in p
        assert np.abs(p - ref[:9]).max() <= 1e-8 * max(1.0, np.abs(ref).max())
        assert abs(y @ p) <= 1e-10
    else:
        ref = np.linalg.pinv(Q, rcond=1e-10) @ -g
        assert np.abs(p - ref).max() <= 1e-8 * max(1.0, np.abs(ref).max())
    assert np.abs(Q @ p + g + nu * y * bias).max() <= 1e-8


def test_an_inconsistent_face_gives_a_descent_direction_without_curvature():
    """A row repeated under the other label: ``e₂ + e₇`` is null and keeps ``yᵀp = 0``, and
    ``g₂ + g₇ = −2`` (the rows of Q̃ opposite): ``f`` falls without bound along it. The
    direction returned must have no curvature, keep the label sum and descend."""
    Q, y = _repeated_face(4, both_labels=True)
    g = Q @ np.random.default_rng(4).random(9) - 1.0
    for yb in (y, None):
        p, nu, consistent = face_systems.face_step(Q, g, yb, 0.0)
        assert not consistent and nu == 0.0
        assert np.linalg.norm(p) > 0.0
        assert p @ Q @ p <= 1e-12 * np.linalg.norm(p) ** 2
        assert g @ p < -0.1 * np.linalg.norm(p)
        if yb is not None:
            assert abs(y @ p) <= 1e-12 * np.linalg.norm(p)
        # along e₂ + e₇ alone
        rest = np.delete(p, [2, 7])
        assert np.abs(rest).max() <= 1e-9 * np.linalg.norm(p)
        assert p[2] == pytest.approx(p[7], rel=1e-9)


def test_breast_cancer_at_C_1e10_and_gamma_1e7_takes_every_face_by_cholesky(monkeypatch):
    """The shifted RBF block at γ = 1e-7 is ``expm1(−γD)``: one negative eigenvalue of the
    distance matrix, which ``Q̃_FF + ρ y yᵀ`` (``ρ`` its largest entry) did not outweigh, so
    that every face (70 in auto's run) went to the eigendecomposition. With the label sum
    eliminated, no face of this run needs it, and the result is certified at tol with its
    rounding allowance."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    problem = KernelDual(X, np.where(y == 1, 1.0, -1.0), C=1e10, kernel="rbf", gamma=1e-7)
    calls = []
    eigh = np.linalg.eigh

    def counted(M):
        calls.append(M.shape[0])
        return eigh(M)

    monkeypatch.setattr(active_set.np.linalg, "eigh", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("auto", tol=TOL).solve(problem)
    assert result.info["auto"]["tried"] == ("smo", "active_set")
    assert result.status is Status.OPTIMAL and result.rel_gap <= TOL, result.message
    assert calls == []
    fresh = KernelDual(X, np.where(y == 1, 1.0, -1.0), C=1e10, kernel="rbf", gamma=1e-7)
    cert = fresh.certificate(alpha=result.alpha, b=result.b)
    assert cert.meets(TOL)


def test_where_lapack_fails_the_eigendecomposition_still_solves_the_faces(monkeypatch):
    """The face step falls back to the eigendecomposition when the factorization gives up
    (None): on duplicated, overlapping data at C = 1e8 the method must still end optimal,
    certified with its rounding allowance, and at the same optimum as with the factor."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    X[:, 0] += 0.5 * y
    X, y = np.vstack([X, X[:6], X[:2]]), np.concatenate([y, y[:6], -y[:2]])
    problem = KernelDual(X, y, C=1e8, kernel="rbf", gamma=0.5)
    with_factor = registry.get("active_set", tol=TOL).solve(problem)
    monkeypatch.setattr(active_set, "face_step", lambda *args: None)
    without = registry.get("active_set", tol=TOL).solve(problem)
    for result in (with_factor, without):
        assert result.status is Status.OPTIMAL, result.message
        assert problem.certificate(alpha=result.alpha, b=result.b).meets(TOL)
    scale = max(1.0, abs(with_factor.primal))
    assert without.dual <= with_factor.primal + 1e-9 * scale
    assert with_factor.dual <= without.primal + 1e-9 * scale
