"""Property-based tests over small random problems of every kind and bias, and over mutated
model files (hypothesis).

Profiles (``HYPOTHESIS_PROFILE``): ``ci`` (the default: few examples, derandomized, so a CI run
is reproducible) and ``long`` (thousands of generated problems, run by hand:
``HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py``).
"""

from __future__ import annotations

import copy
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from svmbench.benchmarks.studies import fuzz_model_files as fuzz
from svmbench.problems import HardMarginPrimal, KernelDual, SoftMarginDual, SoftMarginPrimal
from svmbench.problems.libsvm_model_files import read_libsvm_model, write_libsvm_model
from svmbench.problems.models import OneVsOneModel
from svmbench.solvers import registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import Status

settings.register_profile(
    "ci", max_examples=12, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
settings.register_profile(
    "long", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

BIASES = ("free", "regularized", "none")


@st.composite
def binary_data(draw, max_n=24, max_d=4):
    n = draw(st.integers(4, max_n))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0  # both classes
    sep = draw(st.floats(0.0, 4.0))
    X = rng.normal(size=(n, d)) + 0.5 * sep * y[:, None]
    if draw(st.booleans()):  # duplicated points
        X[n // 2 :] = X[: n - n // 2]
        y[n // 2 :] = y[: n - n // 2]
        y[0], y[1] = 1.0, -1.0
        X[1] = X[0] - 1.0
    return X, y


@st.composite
def soft_problems(draw):
    X, y = draw(binary_data())
    C = draw(st.sampled_from([1e-3, 0.1, 1.0, 10.0, 1e3]))
    bias = draw(st.sampled_from(BIASES))
    kind = draw(st.sampled_from(["primal", "dual", "kernel"]))
    if kind == "primal":
        loss = draw(st.sampled_from(["hinge", "squared_hinge"]))
        return SoftMarginPrimal(X, y, C=C, loss=loss, bias=bias)
    if kind == "dual":
        return SoftMarginDual(X, y, C=C, bias=bias)
    return KernelDual(X, y, C=C, kernel=draw(st.sampled_from(["rbf", "poly"])), bias=bias,
                      gamma=0.5, degree=2, coef0=1.0)  # fmt: skip


def _quiet(solver, problem, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solver.solve(problem, **kw)


@given(soft_problems(), st.integers(0, 2**31 - 1))
def test_weak_duality_at_random_feasible_points(problem, seed):
    rng = np.random.default_rng(seed)
    alpha = problem.project_dual(rng.uniform(0, 2 * problem.C, problem.n_samples))
    cert = problem.certificate(alpha=alpha)
    assert cert.certified and cert.gap >= -1e-9 * max(1.0, abs(cert.primal))


def _exact_solvers(problem) -> list[str]:
    exact = ("barrier", "dcd", "smo", "osqp", "accpm")
    return [n for n in exact if registry.solver_class(n).unsupported_reason(problem) is None]


@given(soft_problems())
def test_exact_solvers_reach_the_reference_and_optimal_means_certified(problem):
    ref = reference_solution(problem)
    for name in _exact_solvers(problem):
        solver = registry.get(name)
        r = _quiet(solver, problem)
        if r.status is Status.OPTIMAL:  # optimal ⇒ the certificate meets tol
            assert r.certified and r.rel_gap <= solver.tol * (1 + 1e-9)
            scale = max(1.0, abs(ref.primal))
            assert r.primal - ref.primal <= 2e-6 * scale, name
        else:  # an honest non-optimal status never claims a certificate within tol
            assert r.status is not Status.INFEASIBLE and r.status is not Status.UNBOUNDED


@given(soft_problems(), st.integers(0, 2**31 - 1))
def test_the_optimum_is_permutation_invariant(problem, seed):
    perm = np.random.default_rng(seed).permutation(problem.n_samples)
    permuted = type(problem)(**{**problem.params(), "X": problem.X[perm], "y": problem.y[perm]})
    a, b = reference_solution(problem), reference_solution(permuted)
    scale = max(1.0, abs(a.primal))
    assert abs(a.primal - b.primal) <= 1e-7 * scale
    if a.w is not None:  # w is unique (½‖w‖² is strictly convex); α and b need not be
        np.testing.assert_allclose(a.w, b.w, atol=1e-4 * max(1.0, np.abs(a.w).max()))


@given(soft_problems())
def test_kkt_holds_at_the_optimum(problem):
    assume(not isinstance(problem, KernelDual))
    ref = reference_solution(problem)
    w, b = ref.w, ref.b or 0.0
    alpha = problem.dual_from_primal(w, b)
    m = problem.y * (np.asarray(problem.X @ w).ravel() + b)
    C = problem.upper_bounds
    tol = 1e-5 * max(1.0, float(np.abs(C).max()))
    if problem.loss == "hinge":
        assert np.all(alpha[m > 1 + 1e-4] <= tol)  # outside the margin: α = 0
        assert np.all(alpha[m < 1 - 1e-4] >= C[m < 1 - 1e-4] - tol)  # inside: α = C
    # stationarity: w = Σ α_i y_i x_i
    w_alpha = np.asarray(problem.X.T @ (alpha * problem.y)).ravel()
    np.testing.assert_allclose(w_alpha, w, atol=1e-4 * max(1.0, np.abs(w).max()))


@given(binary_data(max_n=16, max_d=3), st.sampled_from(BIASES))
def test_infeasible_means_no_separating_hyperplane(data, bias):
    X, y = data
    problem = HardMarginPrimal(X, y, bias=bias)
    for name in ("clarabel", "barrier"):
        r = _quiet(registry.get(name), problem)
        if r.status is Status.INFEASIBLE:
            assert problem.is_infeasibility_certificate(r.farkas)
            assert problem.separating_point() is None  # checked by an LP
        elif r.status is Status.OPTIMAL:
            assert np.min(y * (X @ r.w + (r.b or 0.0))) >= 1 - 1e-6


#: Examples of the separation property: at least 1 000 in the long profile.
SEPARATION_EXAMPLES = (
    1000 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else settings.default.max_examples
)
SEPARATION_SOLVERS = ("barrier", "clarabel", "osqp", "cvxpy", "auto")


@st.composite
def moved_separable_data(draw):
    """Data separated along one axis by ``margin`` of their spread (or overlapping: a point
    repeated with the other label), then rotated, scaled and translated: ``(X, y, w, b)`` with
    ``(w, b)`` the separator of the construction (None for overlapping data)."""
    n = draw(st.integers(4, 10))
    d = draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    margin = 10.0 ** draw(st.one_of(st.floats(-10.0, -6.0), st.floats(-6.0, 0.0)))
    Z = rng.standard_normal((n, d))
    Z[:, 0] = y * margin * (1.0 + rng.random(n))
    overlap = draw(st.booleans()) and draw(st.booleans())
    if overlap:
        Z[-1], y[-1] = Z[0], -y[0]
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    scale = 10.0 ** draw(st.floats(-3.0, 3.0))
    shift = rng.standard_normal(d) * scale * 10.0 ** draw(st.floats(0.0, 4.0) | st.just(-2.0))
    X = scale * Z @ Q.T + shift
    w = Q[:, 0] / scale
    return X, y, (None if overlap else w), (None if overlap else -float(w @ shift))


def _lp_finds_a_separator(X, y, bias) -> bool:
    """An independent check: the feasibility LP ``y_i (w·(x_i − c)/R + b) ≥ 1`` (w, b free; c
    the mean row and R the largest ‖x_i − c‖; with no bias, c = 0 and b = 0), its point
    verified in plain arithmetic."""
    from scipy.optimize import linprog

    c = X.mean(axis=0) if bias != "none" else np.zeros(X.shape[1])
    R = max(float(np.max(np.linalg.norm(X - c, axis=1))), 1e-300)
    Zs = (X - c) / R
    cols = [Zs * y[:, None]] + ([y] if bias != "none" else [])
    A = -np.column_stack(cols)
    res = linprog(np.zeros(A.shape[1]), A_ub=A, b_ub=-np.ones(len(y)), bounds=(None, None),
                  method="highs")  # fmt: skip
    if res.status != 0:
        return False
    b = res.x[-1] if bias != "none" else 0.0
    return bool(np.min(y * (Zs @ res.x[: X.shape[1]] + b)) > 0)


@settings(max_examples=SEPARATION_EXAMPLES)
@given(moved_separable_data(), st.sampled_from(BIASES))
def test_no_false_infeasible_under_translation_rotation_and_scale(data, bias):
    X, y, w, b = data
    problem = HardMarginPrimal(X, y, bias=bias)
    separable = w is not None and bias != "none" and np.min(problem.margins(w, b)) > 0
    for name in SEPARATION_SOLVERS:
        r = _quiet(registry.get(name, tol=1e-6), problem)
        if r.status is Status.INFEASIBLE:
            assert not separable, (name, r.message)
            assert problem.is_infeasibility_certificate(r.farkas), name
            assert not _lp_finds_a_separator(X, y, bias), name


@pytest.mark.parametrize("profile", ["ci", "long"])
def test_the_profiles_exist(profile):
    assert settings.get_profile(profile).deadline is None


def test_the_reference_survives_a_rank_deficient_kernel_at_large_C():
    """The long run's counterexample: Clarabel stops on InsufficientProgress here."""
    X = np.array(
        [
            [3.79970738, 3.14416587, 1.67457716],
            [-1.22619341, -1.71878933, -2.55382284],
            [-1.02243255, -2.31055655, -2.3288239],
            [1.20785324, 2.45495807, 1.90080195],
        ]
    )
    y = np.array([1.0, -1.0, -1.0, 1.0])
    problem = KernelDual(X, y, C=1000.0, kernel="poly", gamma=0.5, degree=2, coef0=1.0)
    ref = reference_solution(problem)
    assert ref.status is Status.OPTIMAL and ref.certified and ref.rel_gap <= 1e-6


# ---- model files: a mutated file loads and predicts finite values, or is a ValueError ----------
#: Examples per run: 200 in the ci profile (a few seconds), ten times the profile's otherwise.
FILE_EXAMPLES = max(200, 10 * settings.default.max_examples)
BASES = fuzz.base_parts()


@settings(max_examples=FILE_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(sorted(BASES)),
    st.lists(st.sampled_from(sorted(fuzz.MUTATORS)), min_size=1, max_size=3),
    st.sampled_from([None, *sorted(fuzz.BYTE_MUTATORS)]),
    st.randoms(use_true_random=False),
)
def test_a_mutated_model_file_predicts_finite_values_or_is_a_value_error(
    tmp_path_factory, base, mutators, byte_mutator, rng
):
    """Shapes, dtypes, indices, JSON fields, kinds and nesting, headers that lie, members,
    deflate bombs, CSR structure, truncation and the ZIP's size fields (the study
    ``fuzz_model_files`` runs the same mutations by the ten thousand, each in a worker that
    may crash): ``exercise`` returns, or raises only what a bug raises."""
    parts = copy.deepcopy(BASES[base])
    for name in mutators:
        if isinstance(parts.meta, dict) or not name.startswith("json"):
            try:
                fuzz.MUTATORS[name](rng, parts)
            except Exception:  # a mutation that does not apply to these parts
                pass
    data = parts.to_bytes()
    if byte_mutator is not None and data:
        data = fuzz.BYTE_MUTATORS[byte_mutator](rng, data)
    path = tmp_path_factory.mktemp("files") / "m.npz"
    path.write_bytes(data)
    assert fuzz.exercise(path) in ("ok", "refused")


def test_every_base_file_loads_and_every_mutation_is_drawn():
    for name, parts in BASES.items():
        path = Path(tempfile.mkdtemp()) / f"{name}.npz"
        path.write_bytes(parts.to_bytes())
        assert fuzz.exercise(path) == "ok", name
    assert len(fuzz.MUTATORS) >= 12 and len(fuzz.BYTE_MUTATORS) == 3


# ---- LIBSVM model files: the same for svm-train's text ------------------------------------------
LIBSVM_TOKENS = ["0", "-1", "1", "2", "3", "1e999", "nan", "-inf", "2147483647", "2147483648",
                 "99999999999999999999", "0:1", "1:nan", "2147483647:1", "-3:1", "1.5", "",
                 "SV", "rho", "label", "nr_sv", "polynomial", "precomputed"]  # fmt: skip


def _libsvm_texts() -> dict[str, str]:
    texts = {}
    with tempfile.TemporaryDirectory() as folder:
        models = fuzz.base_models()
        rbf = models["rbf-dense"]
        models["ovo"] = OneVsOneModel((rbf, rbf, rbf), ((0, 1), (0, 2), (1, 2)), 3)
        for name in ("rbf-dense", "poly-csr", "precomputed", "linear-kernel-csr", "ovo"):
            path = Path(folder) / name
            write_libsvm_model(models[name], path)
            texts[name] = path.read_text()
    return texts


LIBSVM_TEXTS = _libsvm_texts()


@settings(max_examples=FILE_EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(LIBSVM_TEXTS)), st.randoms(use_true_random=False))
def test_a_mutated_libsvm_model_predicts_finite_values_or_is_a_value_error(
    tmp_path_factory, base, rng
):
    lines = LIBSVM_TEXTS[base].splitlines()
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(lines))
        change = rng.randrange(4)
        if change == 0:  # a token replaced
            tokens = lines[at].split(" ")
            tokens[rng.randrange(len(tokens))] = rng.choice(LIBSVM_TOKENS)
            lines[at] = " ".join(tokens)
        elif change == 1:
            del lines[at]
        elif change == 2:
            lines.insert(at, lines[rng.randrange(len(lines))])
        else:
            lines = lines[:at]
        if not lines:
            break
    path = tmp_path_factory.mktemp("libsvm") / "m.model"
    path.write_text("\n".join(lines) + "\n")
    try:
        clf = read_libsvm_model(path)
    except ValueError:
        return
    X = np.random.default_rng(0).normal(size=(3, clf.n_features_in_))
    try:
        scores, labels = clf.decision_function(X), clf.predict(X)
    except ValueError:  # an overflow
        return
    assert np.all(np.isfinite(scores)) and set(labels.tolist()) <= set(clf.classes_.tolist())
