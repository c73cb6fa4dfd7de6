"""``auto``: the rules it follows, the choice it reports, and that its result is the chosen
method's, certified (the solver contract over the registry covers auto too)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

from svmbench import SVMClassifier
from svmbench.problems import (
    ChainStructuredHinge,
    HardMarginPrimal,
    KernelDual,
    Logistic,
    MulticlassHinge,
    MultinomialLogistic,
    NuSVCDual,
    OneClassDual,
    SoftMarginDual,
    SoftMarginPrimal,
    SVRDual,
    SVRPrimal,
    datasets,
)
from svmbench.problems.structured import digit_sequences
from svmbench.solvers import auto, registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.base import ConvergenceWarning, Outcome, Status

OVERLAP = datasets.load("gaussian:n=120,d=4,sep=1,seed=0")
BLOBS = datasets.load("blobs:n=90,d=3,k=3,seed=2")


def _sparse_wide(n=80, d=400):
    rng = np.random.default_rng(0)
    X = sparse.random(n, d, density=0.05, random_state=1, format="csr")
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


X_SPARSE, Y_SPARSE = _sparse_wide()
X_WIDE = np.random.default_rng(3).standard_normal((300, 250))

BIG = datasets.load("gaussian:n=2000,d=3,sep=1,seed=0")
WIDE = datasets.load("gaussian:n=1000,d=5,sep=1,seed=0")

#: (problem, the solver the table says) — one per row of the table, each on the row's side of
#: its condition.
FRIEDMAN = datasets.load("friedman1:n=80,seed=0")  # standardized: C·mean‖x‖² = 10 C
WIDE_X = np.random.default_rng(0).normal(size=(30, 60))  # d > n
WIDE_Y = WIDE_X @ np.linspace(-1.0, 1.0, 60)
CASES = {
    "hard": (HardMarginPrimal(OVERLAP.X, OVERLAP.y), "barrier"),
    # the squared hinge's Newton systems are small: a free bias, or C·mean‖x‖² beyond dcd's
    "squared-hinge": (
        SoftMarginPrimal(OVERLAP.X, OVERLAP.y, C=1.0, loss="squared_hinge"),
        "squared_hinge_newton",
    ),
    "squared-hinge-small-C": (
        SoftMarginPrimal(OVERLAP.X, OVERLAP.y, C=0.1, loss="squared_hinge", bias="none"),
        "dcd",
    ),
    "dual-free-small": (SoftMarginDual(OVERLAP.X, OVERLAP.y, C=1.0, bias="free"), "clarabel"),
    # C·mean‖x‖² about 430 (> LINEAR_SMO_C_R2), n = 30d: the barrier
    "primal-free": (SoftMarginPrimal(OVERLAP.X, OVERLAP.y, C=100.0, bias="free"), "barrier"),
    # n <= 12·d (300 rows, 250 features) or C·mean‖x‖² <= 100: linear_smo's probe first
    "primal-free-wide": (
        SoftMarginPrimal(X_WIDE, np.sign(X_WIDE[:, 0] + 0.1), C=1.0, bias="free"),
        "linear_smo",
    ),
    "primal-free-small-C": (
        SoftMarginPrimal(OVERLAP.X, OVERLAP.y, C=0.01, bias="free"),
        "linear_smo",
    ),
    "tiny": (SoftMarginDual(OVERLAP.X, OVERLAP.y, C=1.0, bias="none"), "dcd"),
    "small-C": (SoftMarginPrimal(BIG.X, BIG.y, C=1e-4, bias="regularized"), "dcd"),
    "dense-low-d": (SoftMarginDual(BIG.X, BIG.y, C=1.0, bias="none"), "barrier"),
    "dual-dense-wide": (
        SoftMarginDual(X_WIDE, np.sign(X_WIDE[:, 0] + 0.1), C=1.0, bias="none"),
        "barrier",
    ),
    "primal-dense-wide": (
        SoftMarginPrimal(X_WIDE, np.sign(X_WIDE[:, 0] + 0.1), C=1.0, bias="none"),
        "dcd",
    ),
    "sparse": (SoftMarginPrimal(X_SPARSE, Y_SPARSE, C=1.0, bias="regularized"), "dcd"),
    # small C on unscaled features is not small: dcd's epochs grow with C·‖x‖²
    "small-C-unscaled": (
        SoftMarginPrimal(1e3 * BIG.X, BIG.y, C=1e-3, bias="regularized"),
        "barrier",
    ),
    "kernel": (KernelDual(OVERLAP.X, OVERLAP.y, C=1.0, kernel="rbf"), "smo"),
    "kernel-rbf-large-n": (KernelDual(WIDE.X, WIDE.y, C=1.0, kernel="rbf"), "smo_batch"),
    # 400 points at C = 1e6: SMO's probe of LARGE_C_PROBE updates, then active_set
    "kernel-rbf-large-C": (KernelDual(WIDE.X[:400], WIDE.y[:400], C=1e6, kernel="rbf"), "smo"),
    # d < 5: kernel rows too cheap for smo_batch's GEMM blocks
    "kernel-rbf-large-n-low-d": (KernelDual(BIG.X, BIG.y, C=1.0, kernel="rbf"), "smo"),
    "kernel-linear-large-C": (
        KernelDual(OVERLAP.X, OVERLAP.y, C=100.0, kernel="linear"),
        "barrier",
    ),
    # degree 3 in 4 variables: K has rank <= 20 monomials <= n/4, and C·mean K_ii is ~1e4
    "kernel-poly-low-rank-large-C": (
        KernelDual(OVERLAP.X, OVERLAP.y, C=100.0, kernel="poly", gamma=1.0),
        "barrier",
    ),
    "multiclass-small": (MulticlassHinge(BLOBS.X, BLOBS.y, C=10.0), "clarabel"),
    "multiclass-small-C": (MulticlassHinge(BLOBS.X, BLOBS.y, C=1e-3), "cs_dcd"),
    # C·mean‖x‖² of OVERLAP at C = 1 is about 5: dual CD's epochs are few
    "logistic-small": (Logistic(OVERLAP.X, OVERLAP.y, C=1.0, bias="none"), "logistic_dcd"),
    "logistic-small-large-C": (
        Logistic(OVERLAP.X, OVERLAP.y, C=1e3, bias="none"),
        "logistic_newton",
    ),
    "logistic-free": (Logistic(OVERLAP.X, OVERLAP.y, C=1.0, bias="free"), "logistic_newton"),
    "multinomial": (MultinomialLogistic(BLOBS.X, BLOBS.y, C=1.0), "multinomial_newton"),
    "svr": (SVRDual(FRIEDMAN.X, FRIEDMAN.y, C=1.0, epsilon=0.1), "smo"),
    "svr-rbf-large-n": (SVRDual(WIDE.X, np.sin(WIDE.X[:, 0]), C=1.0, epsilon=0.1), "smo_batch"),
    # a kernel of rank d: SMO gets a probe, the barrier goes on
    "svr-linear": (SVRDual(FRIEDMAN.X, FRIEDMAN.y, C=1.0, epsilon=0.1, kernel="linear"), "smo"),
    "nu_svc": (NuSVCDual(OVERLAP.X, OVERLAP.y, nu=0.3), "smo"),
    "one_class": (OneClassDual(OVERLAP.X, nu=0.2), "smo"),
    "linear-svr-squared": (
        SVRPrimal(FRIEDMAN.X, FRIEDMAN.y, loss="squared_epsilon_insensitive", bias="regularized"),
        "svr_newton",
    ),
    "linear-svr-squared-large-C-free": (
        SVRPrimal(FRIEDMAN.X, FRIEDMAN.y, C=1e3, loss="squared_epsilon_insensitive"),
        "svr_newton",
    ),
    "linear-svr-squared-wide": (
        SVRPrimal(WIDE_X, WIDE_Y, loss="squared_epsilon_insensitive", bias="regularized"),
        "svr_dcd",
    ),
    "linear-svr-plain": (SVRPrimal(FRIEDMAN.X, FRIEDMAN.y, bias="regularized"), "svr_dcd"),
    "linear-svr-plain-free": (SVRPrimal(FRIEDMAN.X, FRIEDMAN.y, bias="free"), "clarabel"),
    "linear-svr-plain-large-C": (
        SVRPrimal(FRIEDMAN.X, FRIEDMAN.y, C=1e3, bias="regularized"),
        "clarabel",
    ),
}


@pytest.mark.parametrize("key", CASES)
def test_the_choice_follows_the_table(key):
    problem, expected = CASES[key]
    choice = auto.choose(problem)
    assert choice.solvers[0] == expected, choice.why
    assert problem.kind in auto.RULES[choice.rule].kinds


def test_every_row_is_reachable_and_documented():
    rows = {auto.choose(problem).rule for problem, _ in CASES.values()}
    too_big = {i for i, rule in enumerate(auto.RULES) if rule.condition == "sparse and large"}
    assert rows >= set(range(len(auto.RULES))) - too_big
    for rule in auto.RULES:
        assert rule.measured and rule.condition
        for name in rule.solvers:
            assert name in registry.names()


@pytest.mark.parametrize(
    "key",
    ["primal-free", "primal-free-wide", "small-C", "kernel", "multiclass-small", "squared-hinge"],
)
def test_the_result_is_the_chosen_methods_certified_optimum(key):
    problem, expected = CASES[key]
    result = registry.get("auto", tol=1e-7).solve(problem)
    assert result.solver == "auto"
    assert result.info["auto"]["chose"] == expected
    assert expected in result.info["auto"]["why"] or result.info["auto"]["why"]
    assert result.iteration_unit == registry.solver_class(expected).iteration_unit
    assert result.status is Status.OPTIMAL and result.certified and result.rel_gap <= 1e-7
    ref = reference_solution(problem)
    assert abs(result.primal - ref.primal) <= 1e-6 * max(1.0, abs(ref.primal))
    assert result.wall_time >= result.solve_time >= 0.0


def test_a_warm_start_the_method_cannot_use_is_reported_not_ignored():
    problem = CASES["primal-free"][0]
    cold = registry.get("auto").solve(problem)
    warm = registry.get("auto").solve(problem, warm_start=cold)
    assert "barrier" in warm.info["auto"]["warm_start"]
    assert "warm start not used" in warm.message
    assert warm.status is Status.OPTIMAL


def test_a_warm_start_the_method_uses_is_used():
    problem = CASES["small-C"][0]
    cold = registry.get("auto").solve(problem)
    warm = registry.get("auto").solve(problem, warm_start=cold)
    assert "warm_start" not in warm.info["auto"]
    assert warm.iterations <= max(1, cold.iterations // 2)


def test_bad_warm_starts_are_still_refused():
    problem = CASES["primal-free"][0]
    with pytest.raises(ValueError, match="warm_start"):
        registry.get("auto").solve(problem, warm_start=np.zeros(problem.n_samples + 1))


def test_fallback_goes_on_with_the_next_method_warm(monkeypatch):
    dcd = registry.solver_class("dcd")
    monkeypatch.setattr(dcd, "default_max_iter", 1)  # dcd stops short of tol after one epoch
    problem = SoftMarginDual(OVERLAP.X, OVERLAP.y, C=1e-3 * 50, bias="regularized")
    monkeypatch.setattr(auto, "SMALL_C_R2", 1e9)
    rules = list(auto.RULES)
    rules[3] = auto.Rule(
        ("soft_margin_primal", "soft_margin_dual"),
        lambda f: True,
        "test",
        ("dcd", "barrier"),
        "test",
    )
    monkeypatch.setattr(auto, "RULES", tuple(rules))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # no warning: the fallback got there
        result = registry.get("auto").solve(problem)
    assert result.info["auto"]["tried"] == ("dcd", "barrier")
    assert result.info["auto"]["chose"] == "barrier"
    assert result.status is Status.OPTIMAL and result.rel_gap <= 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        alone = registry.get("auto", fallback=False).solve(problem)
    assert alone.status is Status.MAX_ITER and alone.info["auto"]["tried"] == ("dcd",)


def test_a_last_method_without_a_certified_point_leaves_the_record_to_the_best_one(monkeypatch):
    """When the last method of the choice ends with no certified point (iris at C = 1e10,
    γ = 1e-7: Clarabel's "DualInfeasible" after active_set and the barrier stopped at their
    limits), the record is the best certified one of those tried, its own status kept, and
    the message says what the last method did: never a record without a point."""
    dcd = registry.solver_class("dcd")
    monkeypatch.setattr(dcd, "default_max_iter", 1)  # dcd stops short of tol, certified
    barrier = registry.solver_class("barrier")

    def failed(self, problem, warm_start, clock, callback):
        return Outcome(status=Status.NUMERICAL_ERROR, variables={}, iterations=1, message="x")

    monkeypatch.setattr(barrier, "_run", failed)
    problem = SoftMarginDual(OVERLAP.X, OVERLAP.y, C=1e-3 * 50, bias="regularized")
    monkeypatch.setattr(auto, "SMALL_C_R2", 1e9)
    rules = list(auto.RULES)
    rules[3] = auto.Rule(
        ("soft_margin_primal", "soft_margin_dual"), lambda f: True, "test", ("dcd", "barrier"),
        "test",
    )  # fmt: skip
    monkeypatch.setattr(auto, "RULES", tuple(rules))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = registry.get("auto").solve(problem)
        alone = registry.get("auto", fallback=False).solve(problem)
    assert result.info["auto"]["tried"] == ("dcd", "barrier")
    assert result.info["auto"]["chose"] == "dcd"
    assert result.status is Status.MAX_ITER and result.certified
    assert result.alpha is not None and result.model is not None
    assert (result.primal, result.dual) == (alone.primal, alone.dual)  # dcd's own record
    assert "barrier ended numerical_error with no certified point" in result.message


def test_an_indefinite_kernel_ends_at_its_first_method():
    """``not_certified`` goes on to the next method only with a certified point (rounding left
    it short of tol): on an indefinite kernel no method certifies anything, and auto stops at
    its first one rather than run them all."""
    problem = KernelDual(OVERLAP.X, OVERLAP.y, C=1.0, kernel="sigmoid", gamma=0.5, coef0=-1.0)
    assert not problem.convex
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = registry.get("auto").solve(problem)
    assert result.status is Status.NOT_CERTIFIED and not result.certified
    assert result.info["auto"]["tried"] == ("smo",)


def test_time_limit_bounds_the_whole_call():
    data = datasets.load("gaussian:n=3000,d=30,sep=1,seed=0")
    problem = SoftMarginPrimal(data.X, data.y, C=1e3, bias="regularized")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = registry.get("auto", tol=1e-14, time_limit=0.05).solve(problem)
    if result.status is Status.TIME_LIMIT:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if result.status is Status.NOT_CERTIFIED:  # tol=1e-14 is below float64's rounding floor here
        assert "rounding floor" in result.message and result.certified
        return
    assert result.status in (Status.TIME_LIMIT, Status.OPTIMAL, Status.NUMERICAL_ERROR)


def test_problems_without_an_exact_method_are_refused_naming_the_alternative():
    seq = digit_sequences(4, 4, min_length=2, max_length=3, noise=0.5, seed=0)
    chain = ChainStructuredHinge(seq.X, seq.y, seq.lengths, n_states=10, C=1.0)
    with pytest.raises(TypeError, match="ssvm_sgd"):
        registry.get("auto").solve(chain)


def test_the_estimators_default_is_auto_and_it_reports_its_choice():
    clf = SVMClassifier(kernel="rbf").fit(OVERLAP.X, OVERLAP.y)
    assert clf.solver == "auto"
    assert clf.result_.info["auto"]["chose"] == "smo"
    multi = SVMClassifier(kernel="linear", multiclass="crammer_singer", bias="regularized")
    multi.fit(BLOBS.X, BLOBS.y)
    assert multi.result_.info["auto"]["chose"] in ("clarabel", "cs_dcd")


def test_the_readme_quotes_the_table_of_rules():
    from pathlib import Path

    readme = Path(__file__).resolve().parents[2] / "README.md"  # tests run from the repository
    assert auto.rules_markdown() in readme.read_text(encoding="utf-8")


def test_the_linear_kernel_on_large_features_goes_to_the_barrier():
    """C·mean‖x‖² = 3e4 with C = 1: smo's updates grow with it (features ×1e4 ran it past 10 s,
    the barrier certified in 0.09 s); the rule reads the data's scale, not C alone."""
    data = datasets.gaussian(30, 3, 1.0, seed=2)
    problem = KernelDual(100.0 * data.X, data.y, kernel="linear")
    assert auto.Features.of(problem).C_R2 > 1e3 and auto.choose(problem).solvers[0] == "barrier"
    unit = KernelDual(data.X, data.y, kernel="linear")
    assert auto.choose(unit).solvers[0] == "smo"
    r = registry.get("auto").solve(problem)
    assert r.status is Status.OPTIMAL and r.info["auto"]["chose"] == "barrier"
    ref = reference_solution(problem)
    assert abs(r.primal - ref.primal) <= 1e-5 * max(1.0, abs(ref.primal))


def test_a_polynomial_kernel_goes_to_the_barrier_only_when_low_rank_and_large_C():
    """SMO's updates grow with C·mean K_ii on a kernel of low rank (degree 3 on circles,
    C·mean K_ii = 2.3e3: smo 10 s, barrier 2.2 s), but not on a full-rank one."""
    low = auto.Features.of(CASES["kernel-poly-low-rank-large-C"][0])
    assert low.kernel_rank == 20  # the monomials x_a x_b x_c, a <= b <= c in 1..4
    squares = (OVERLAP.X**2).sum(1)
    assert low.C_R2 == pytest.approx(100.0 * np.mean(squares**3), rel=1e-12)
    affine = KernelDual(OVERLAP.X, OVERLAP.y, kernel="poly", coef0=1.0, degree=2)
    assert auto.Features.of(affine).kernel_rank == 15  # degree <= 2 in 4 variables
    small_C = KernelDual(OVERLAP.X, OVERLAP.y, C=1e-3, kernel="poly", gamma=1.0)
    assert auto.choose(small_C).solvers[0] == "smo"
    y_wide = np.sign(X_WIDE[:, 0] + 0.1)
    full_rank = KernelDual(X_WIDE, y_wide, C=100.0, kernel="poly", gamma=1.0)
    assert auto.Features.of(full_rank).C_R2 > 1e3
    assert auto.choose(full_rank).solvers[0] == "smo"
    problem = CASES["kernel-poly-low-rank-large-C"][0]
    r = registry.get("auto").solve(problem)
    assert r.status is Status.OPTIMAL and r.info["auto"]["chose"] == "barrier"
    ref = reference_solution(problem)
    assert abs(r.primal - ref.primal) <= 1e-5 * max(1.0, abs(ref.primal))


def test_a_tiny_problem_gives_dcd_a_probe_then_the_next_method_goes_on():
    """n·d <= TINY: dcd runs at most max(PROBE, PROBE_WORK/nnz) epochs; where it needs tens of
    thousands (this data set at C=10), clarabel goes on and certifies; a user's max_iter
    replaces the probe."""
    data = datasets.load("gaussian:n=200,d=5,sep=1,seed=0")
    problem = SoftMarginDual(data.X, data.y, C=10.0, bias="regularized")
    choice = auto.choose(problem)
    probe = int(auto.PROBE_WORK / data.X.size)
    assert choice.solvers[:2] == ("dcd", "clarabel") and choice.probe == probe > auto.PROBE
    assert f"{probe} iterations" in choice.why
    r = registry.get("auto").solve(problem)
    assert r.info["auto"]["tried"] == ("dcd", "clarabel")
    assert r.status is Status.OPTIMAL and r.rel_gap <= 1e-6
    ref = reference_solution(problem)
    assert abs(r.primal - ref.primal) <= 1e-6 * max(1.0, abs(ref.primal))
    assert r.wall_time >= r.solve_time > 0.0
    with pytest.warns(ConvergenceWarning):
        capped = registry.get("auto", max_iter=2 * probe, fallback=False).solve(problem)
    assert capped.info["auto"]["tried"] == ("dcd",) and capped.iterations == 2 * probe
    # where the work is larger, the probe is PROBE epochs at least
    wide = datasets.load("gaussian:n=100,d=50,sep=1,seed=0")
    assert auto.choose(SoftMarginDual(wide.X, wide.y, C=1.0, bias="regularized")).probe == max(
        auto.PROBE, int(auto.PROBE_WORK / wide.X.size)
    )
    separated = datasets.load("gaussian:n=100,d=2,sep=6,seed=0")  # dcd: 25 epochs
    easy = registry.get("auto").solve(
        SoftMarginDual(separated.X, separated.y, C=1.0, bias="regularized")
    )
    assert easy.info["auto"]["tried"] == ("dcd",) and easy.status is Status.OPTIMAL


def test_the_probe_grows_as_the_epochs_get_cheaper():
    """quadrant with noise (n·d = 400): dcd needs about 1300 epochs, past PROBE but well within
    PROBE_WORK/nnz; it certifies alone, where clarabel would take several times longer."""
    data = datasets.load("quadrant:n=200,d=2,noise=0.05,seed=0")
    problem = SoftMarginDual(data.X, data.y, C=1.0, bias="regularized")
    r = registry.get("auto").solve(problem)
    assert r.info["auto"]["tried"] == ("dcd",) and r.iterations > auto.PROBE
    assert r.status is Status.OPTIMAL and r.rel_gap <= 1e-6
    ref = reference_solution(problem)
    assert abs(r.primal - ref.primal) <= 1e-6 * max(1.0, abs(ref.primal))


def test_linear_kernel_svr_gives_smo_a_probe_then_the_barrier_goes_on():
    """On a kernel of rank d, SMO's pair steps stall as C grows: auto gives it
    SVR_LINEAR_PROBE updates, then the barrier certifies, for ε-SVR and ν-SVR (it had run SMO
    to its max_iter first, 16 s on these 150 rows at C = 1e4); at C = 1 SMO certifies within
    the probe."""
    from sklearn.datasets import load_diabetes

    from svmbench import NuSVMRegressor
    from svmbench.solvers.auto_rules import SVR_LINEAR_PROBE

    X, y = load_diabetes(return_X_y=True)
    X = (X[:150] - X[:150].mean(axis=0)) / X[:150].std(axis=0)
    y = (y[:150] - y[:150].mean()) / y[:150].std()
    stalled = SVRDual(X, y, C=1e4, epsilon=0.1, kernel="linear")
    choice = auto.choose(stalled)
    assert choice.solvers[:2] == ("smo", "barrier") and choice.probe == SVR_LINEAR_PROBE
    r = registry.get("auto").solve(stalled)
    assert r.info["auto"]["tried"] == ("smo", "barrier")
    assert r.status is Status.OPTIMAL
    ref = reference_solution(stalled)
    assert abs(r.primal - ref.primal) <= 1e-6 * max(1.0, abs(ref.primal))
    easy = registry.get("auto").solve(SVRDual(X, y, C=1.0, epsilon=0.1, kernel="linear"))
    assert easy.info["auto"]["tried"] == ("smo",) and easy.status is Status.OPTIMAL
    assert easy.iterations < SVR_LINEAR_PROBE
    nu = NuSVMRegressor(kernel="linear", C=1e4).fit(X, y).result_
    assert nu.info["auto"]["tried"] == ("smo", "barrier") and nu.status is Status.OPTIMAL
