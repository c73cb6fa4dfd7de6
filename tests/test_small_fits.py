"""The fixed costs of one fit (issue 25): X validated once, problem views from the solver's
table, auto's rules run once per problem, the problem key hashed without a copy; the results
unchanged (certified against the references' optima)."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pytest
from sklearn.datasets import load_iris

from svmbench import SVMClassifier, input_checks
from svmbench.problems import KernelDual, SoftMarginPrimal, base, validation
from svmbench.solvers import auto, registry
from svmbench.solvers._reference import reference_solution


@pytest.fixture(scope="module")
def binary():
    X, y = load_iris(return_X_y=True)
    keep = y > 0  # versicolor against virginica: not separable
    return np.ascontiguousarray(X[keep]), y[keep]


@pytest.fixture
def counted(monkeypatch):
    """Counts of the estimator's one validation of its input (``input_checks.fit_input``), of
    scikit-learn's validate_data under it (not run for plain arrays) and of the problems'
    finiteness scans of X."""
    counts = {"fit_input": 0, "validate_data": 0, "scan": 0}
    fit_input, validate = input_checks.fit_input, input_checks.validate_data
    scan = validation.check_finite

    def counting_fit_input(*args, **kwargs):
        counts["fit_input"] += 1
        return fit_input(*args, **kwargs)

    def counting_validate(*args, **kwargs):
        counts["validate_data"] += 1
        return validate(*args, **kwargs)

    def counting_scan(values, name="X"):
        counts["scan"] += 1
        return scan(values, name)

    monkeypatch.setattr(input_checks, "fit_input", counting_fit_input)
    monkeypatch.setattr(input_checks, "validate_data", counting_validate)
    monkeypatch.setattr(validation, "check_finite", counting_scan)
    return counts


@pytest.mark.parametrize(
    "params",
    [
        {"kernel": "rbf"},
        {"kernel": "linear"},
        {"kernel": "linear", "loss": "squared_hinge", "bias": "regularized"},
    ],
    ids=["rbf", "linear", "squared_hinge"],
)
def test_a_binary_fit_validates_X_once(binary, counted, params):
    SVMClassifier(**params).fit(*binary)  # the solver's warm-up builds its own tiny problems
    counted.update(fit_input=0, validate_data=0, scan=0)
    clf = SVMClassifier(**params).fit(*binary)
    assert counted == {"fit_input": 1, "validate_data": 0, "scan": 0}  # plain arrays
    assert clf.result_.status.value == "optimal" and clf.result_.rel_gap <= 1e-6


def test_a_one_vs_one_fit_validates_X_once(counted):
    X, y = load_iris(return_X_y=True)
    SVMClassifier(kernel="rbf", gamma=0.5).fit(X, y)
    counted.update(fit_input=0, validate_data=0, scan=0)
    clf = SVMClassifier(kernel="rbf", gamma=0.5).fit(X, y)
    assert counted == {"fit_input": 1, "validate_data": 0, "scan": 0}
    assert clf.result_.info["strategy"] == "ovo" and len(clf.result_.info["binary_status"]) == 3
    assert all(s == "optimal" for s in clf.result_.info["binary_status"])


def test_a_fit_still_refuses_non_finite_X(binary):
    X, y = binary
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SVMClassifier().fit(X, y)


def test_only_the_validated_array_skips_the_scan(binary):
    X, y = binary
    y_pm = np.where(y == 2, 1.0, -1.0)
    bad = X.copy()
    bad[0, 0] = np.inf
    with validation.validated_input(X):
        KernelDual(X, y_pm)  # taken as validated
        with pytest.raises(ValueError, match="X must contain only finite values"):
            KernelDual(bad, y_pm)  # another array: scanned
    with pytest.raises(ValueError, match="X must contain only finite values"):
        KernelDual(bad, y_pm)
    with validation.validated_input(bad.astype(np.float32)):  # not what check_X returns as is
        with pytest.raises(ValueError, match="X must contain only finite values"):
            KernelDual(bad.astype(np.float32), y_pm)
    # outside the block nothing is trusted, even the array that was
    with validation.validated_input(bad):
        pass
    with pytest.raises(ValueError, match="X must contain only finite values"):
        KernelDual(bad, y_pm)


def test_the_fit_is_the_reference_optimum(binary):
    X, y = binary
    clf = SVMClassifier(kernel="linear", C=10.0).fit(X, y)
    problem = SoftMarginPrimal(X, np.where(y == 2, 1.0, -1.0), C=10.0)
    ref = reference_solution(problem)
    assert clf.result_.primal == pytest.approx(ref.primal, rel=1e-6)


def test_auto_runs_its_rules_once_per_problem(binary, monkeypatch):
    X, y = binary
    calls = []
    features = auto.Features.of

    def counting(problem):
        calls.append(problem)
        return features(problem)

    monkeypatch.setattr(auto.Features, "of", staticmethod(counting))
    SVMClassifier(kernel="rbf").fit(X, y)
    assert len(calls) == 1
    problem = KernelDual(X, np.where(y == 2, 1.0, -1.0), C=3.0)
    first = auto.choose(problem)
    assert auto.choose(problem) is first and len(calls) == 2
    other = KernelDual(X, np.where(y == 2, 1.0, -1.0), C=3.0)  # equal, another object
    assert auto.choose(other) == first and len(calls) == 3


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12.0).reshape(3, 4),
        np.arange(12.0).reshape(3, 4).T,  # not C-contiguous: hashed in C order
        np.zeros((0, 3)),
        np.array([True, False, True]),
        np.arange(5, dtype=np.int32),
    ],
)
def test_the_problem_key_hashes_the_bytes_it_always_did(array):
    ours = hashlib.sha256()
    base._hash_array(ours, array)
    c = np.ascontiguousarray(array)
    expected = hashlib.sha256(f"{c.dtype}{c.shape}".encode() + c.tobytes())
    assert ours.hexdigest() == expected.hexdigest()


def test_auto_asks_a_fallback_whether_it_accepts_only_when_it_runs(binary, monkeypatch):
    """The small-kernel row (smo's probe, then active_set, the barrier, clarabel): choosing asks
    smo and its successor only; when the probe falls short, a later candidate that refuses the
    problem is passed over and the next one that accepts it goes on."""
    X, y = binary
    problem = KernelDual(X, np.where(y == 2, 1.0, -1.0), C=10.0)
    asked = []
    for name in ("smo", "active_set", "barrier", "clarabel"):
        cls = registry.solver_class(name)
        reason = cls.unsupported_reason.__func__

        def counting(klass, p, _reason=reason, _name=name):
            asked.append(_name)
            return "refused for the test" if _name == "active_set" else _reason(klass, p)

        monkeypatch.setattr(cls, "unsupported_reason", classmethod(counting))
    # a probe of 3 pair updates: too short, so that the fallbacks run
    rules = tuple(
        dataclasses.replace(rule, probe=3) if "active_set" in rule.solvers else rule
        for rule in auto.RULES
    )
    monkeypatch.setattr(auto, "RULES", rules)
    choice = auto.choose(problem)
    assert asked == ["smo", "active_set", "barrier"]  # the probe's successor, found
    assert choice.solvers == ("smo", "active_set", "barrier", "clarabel") and choice.probe == 3
    assert "then barrier goes on" in choice.why
    asked.clear()
    result = registry.get("auto").solve(problem)
    assert result.info["auto"]["tried"] == ("smo", "barrier")  # active_set passed over
    assert "clarabel" not in asked  # never needed
    assert result.status.value == "optimal"
    ref = reference_solution(problem)
    assert result.primal == pytest.approx(ref.primal, rel=1e-6)


def test_a_reduction_runs_its_binary_solvers_without_a_trace(monkeypatch):
    """The binary records' traces are not kept: the binary solver gets trace=False unless
    binary_options names it; the binary problems' certified gaps are the same either way. One
    solver is built for all the pairs."""
    from svmbench.problems import MulticlassHinge

    X, y = load_iris(return_X_y=True)
    problem = MulticlassHinge(X, y, C=10.0, bias="regularized")
    got = []
    get = registry.get

    def spying(name, **options):
        got.append((name, options.get("trace")))
        return get(name, **options)

    monkeypatch.setattr(registry, "get", spying)
    quiet = get("ovo", binary_solver="smo", kernel="rbf", gamma=0.5, bias="free").solve(problem)
    assert got == [("smo", False)]
    got.clear()
    traced = get(
        "ovo", binary_solver="smo", binary_options={"trace": True}, kernel="rbf", gamma=0.5,
        bias="free",
    ).solve(problem)  # fmt: skip
    assert got == [("smo", True)]
    assert quiet.status.value == traced.status.value == "optimal"
    assert max(quiet.info["binary_rel_gaps"]) <= 1e-6
    np.testing.assert_allclose(quiet.primal, traced.primal, rtol=1e-6)
    for variables, pair in zip(quiet.info["binary_variables"], ((0, 1), (0, 2), (1, 2))):
        rows = np.flatnonzero(np.isin(y, pair))
        bp = KernelDual(X[rows], np.where(y[rows] == pair[0], 1.0, -1.0), C=10.0, gamma=0.5)
        ref = reference_solution(bp)
        assert bp.certificate(**variables).primal == pytest.approx(ref.primal, rel=1e-6)


def test_a_multiclass_fit_by_auto_still_refuses_an_ill_conditioned_kernel():
    """No binary problem is built up front for auto; the pairs' own checks still refuse C · K_ii
    beyond the range, naming it."""
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="C · max K̃_ii"):
        SVMClassifier(kernel="poly", degree=3, gamma=1.0, coef0=1.0, C=1e9).fit(X, y)


def test_a_parameter_set_is_checked_once_and_bad_values_always(binary, monkeypatch):
    """scikit-learn's parameter check runs once per scalar parameter set; a new value is
    checked, and a bad one raises every time (a failed set is never remembered)."""
    from svmbench import parameter_checks

    calls = []
    check = parameter_checks.validate_parameter_constraints

    def counting(*args, **kwargs):
        calls.append(args[1]["C"])
        return check(*args, **kwargs)

    monkeypatch.setattr(parameter_checks, "validate_parameter_constraints", counting)
    X, y = binary
    SVMClassifier(C=0.37, gamma=0.25).fit(X, y)
    SVMClassifier(C=0.37, gamma=0.25).fit(X, y)
    assert calls == [0.37]
    SVMClassifier(C=0.38, gamma=0.25).fit(X, y)
    assert calls == [0.37, 0.38]
    for _ in range(2):
        with pytest.raises(ValueError, match="'C' parameter of SVMClassifier must be a float"):
            SVMClassifier(C=-1.0).fit(X, y)
    assert calls[2:] == [-1.0, -1.0]
    # 1 and True hash alike: the type is part of the key, so each is checked
    calls.clear()
    SVMClassifier(C=1, gamma=0.25).fit(X, y)
    SVMClassifier(C=True, gamma=0.25).fit(X, y)
    assert calls == [1, True] and [type(c) for c in calls] == [int, bool]
    # a dict parameter is not a scalar: checked every time
    calls.clear()
    for _ in range(2):
        SVMClassifier(C=0.37, gamma=0.25, solver_options={"eps": 1e-3}, solver="smo").fit(X, y)
    assert calls == [0.37, 0.37]


def test_the_parameter_names_are_scikit_learns():
    from sklearn.base import BaseEstimator

    from svmbench import NuSVMClassifier, SVMClassifierCV

    for cls in (SVMClassifier, SVMClassifierCV, NuSVMClassifier):
        assert cls._get_param_names() == BaseEstimator._get_param_names.__func__(cls)


def test_a_reduction_hashes_its_own_problem_only(monkeypatch):
    """The binary records a reduction reads and drops carry no problem key (no SHA-256 of each
    pair's rows); the reduction's record keeps the multiclass problem's, hashed when first
    read, and a binary problem solved on its own still gets its key."""
    from svmbench.problems import MulticlassHinge

    X, y = load_iris(return_X_y=True)
    problem = MulticlassHinge(X, y, C=10.0, bias="regularized")
    hashed = []
    key_of = base._key_of

    def counting(kind, arrays, params):
        hashed.append(kind)
        return key_of(kind, arrays, params)

    def key(problem):
        return key_of(problem.kind, *problem.deferred_key().args[1:])

    monkeypatch.setattr(base, "_key_of", counting)
    result = registry.get("ovo", binary_solver="auto", kernel="rbf", gamma=0.5, bias="free").solve(
        problem
    )
    assert hashed == []  # the record's key is computed when first read
    assert result.problem_key == key(problem) and hashed == ["multiclass_hinge"]
    assert result.status.value == "optimal" and max(result.info["binary_rel_gaps"]) <= 1e-6
    hashed.clear()
    rows = y > 0
    bp = KernelDual(X[rows], np.where(y[rows] == 1, 1.0, -1.0), C=10.0, gamma=0.5)
    single = registry.get("auto").solve(bp)
    assert single.problem_key == key(bp) and len(single.problem_key) == 24
    assert hashed == ["kernel_dual"]


def test_a_record_hashes_its_problem_when_its_key_is_read(binary):
    """``problem_key`` is given to the record as ``problem.deferred_key()``: a fit computes no
    SHA-256; reading the key, pickling the record or copying it gives the problem's key, and a
    pickled record holds the text, not the function and the arrays."""
    import pickle

    X, y = binary
    clf = SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized").fit(X, y)
    assert callable(clf.result_.__dict__["_problem_key"])
    problem = SoftMarginPrimal(
        X, np.where(y == 2, 1.0, -1.0), loss="squared_hinge", bias="regularized"
    )
    copied = pickle.loads(pickle.dumps(clf.result_))
    assert copied.__dict__["_problem_key"] == problem.key == clf.result_.problem_key
    assert dataclasses.replace(clf.result_, solver="x").problem_key == problem.key
    assert clf.result_.__dict__["_problem_key"] == problem.key


def test_an_rbf_fit_is_the_reference_optimum(binary):
    """The kernel fit path (one parameter check, SMO's bias once per point, the record copied
    without dataclasses.replace) still ends at the certified optimum."""
    X, y = binary
    clf = SVMClassifier(C=10.0, gamma=0.5).fit(X, y)
    problem = KernelDual(X, np.where(y == 2, 1.0, -1.0), C=10.0, gamma=0.5)
    ref = reference_solution(problem)
    assert clf.result_.status.value == "optimal" and clf.result_.rel_gap <= 1e-6
    assert clf.result_.primal == pytest.approx(ref.primal, rel=1e-6)
    assert clf.result_.problem_key == problem.key
    again = problem.certificate(alpha=clf.result_.alpha, b=clf.result_.b)
    assert again.rel_gap == pytest.approx(clf.result_.rel_gap, abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_data_whose_inner_products_overflow_is_refused(binary, sign):
    """The bound reads X's largest and smallest entries (no |X| copy): a huge negative entry
    counts as a huge positive one."""
    X, y = binary
    X = X.copy()
    X[5, 2] = sign * 1e160
    with pytest.raises(ValueError, match="intercepts are not finite: X's inner products"):
        SVMClassifier().fit(X, y)


_FIRST_FITS = """
from numba.core import event
seen = []
class Compiled(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        seen.append(f"{f.__module__}.{f.__qualname__}")
event.register("numba:compile", Compiled())
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.preprocessing import StandardScaler
from svmbench import SVMClassifier
X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
SVMClassifier(kernel="linear").fit(X, y)
SVMClassifier(kernel="linear", loss="squared_hinge", bias="regularized").fit(X, y)
SVMClassifier().fit(X, y)
Xi, yi = load_iris(return_X_y=True)
SVMClassifier().fit(StandardScaler().fit_transform(Xi), yi)
print("COMPILED", [s for s in seen if s.startswith("svmbench.")])
"""


def test_a_warm_new_process_compiles_nothing_for_its_first_small_fits(tmp_path):
    """Every jitted function of a small fit's path (linear hinge, squared hinge, RBF, one-vs-one)
    is cached on disk: a second new process compiles none of them (a jitted function that calls
    another through a closure cannot be cached, and would recompile in every process)."""
    from tests.fresh_process import run_python

    run_python(_FIRST_FITS, tmp_path, timeout=900)  # fills the cache where it was empty
    second = run_python(_FIRST_FITS, tmp_path, timeout=900)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "COMPILED []" in second.stdout, second.stdout[-2000:]
