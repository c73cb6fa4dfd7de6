"""The anchor adapters: their models, converted to our variables, reach the reference optimum.

A tight run of each library must land on Clarabel's optimum when OUR certificate judges the
converted model: that is what proves the conversions (label order, sign of b, the bias scale of
``-B s``, the C ↔ α scaling of SGD) are right. A loose run must report a larger certified gap than
a tight one, unsupported problems must be refused by name, and a missing package must be reported,
not crash the harness.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmbench.problems import (
    KernelDual,
    Logistic,
    MulticlassHinge,
    NuSVCDual,
    SoftMarginDual,
    SoftMarginPrimal,
    SVRDual,
    SVRPrimal,
    datasets,
)
from svmbench.solvers import registry
from svmbench.solvers._reference import reference_solution
from svmbench.solvers.anchors import liblinear as anchors_liblinear
from svmbench.solvers.anchors.sklearn import SklearnexSVCAnchor
from svmbench.solvers.base import ConvergenceWarning, Status
from tests.conftest import BINARY_SETS

SETS = ("gaussian_overlap", "breast_cancer", "quadrant")

#: Relative distance |P − P*| / max(1, |P*|) of a tight run to the reference optimum.
RTOL_EXACT = 1e-6  # LIBSVM and its forks with -e 1e-8: the SMO solution is exact to ~1e-8
RTOL_LIBLINEAR = 1e-5  # -e 1e-6, but LIBLINEAR caps its dual CD at a compiled-in 300 epochs
RTOL_SGD = 1e-2  # stochastic: 300 epochs at C = 0.1
#: Tight options of each anchor.
TIGHT = {
    "liblinear": {"eps": 1e-6},
    "liblinear_cs": {"eps": 1e-6},
    "libsvm": {"eps": 1e-8},
    "sklearn_svc": {"eps": 1e-8},
    "sklearnex_svc": {"eps": 1e-8},
    "sklearn_linearsvc": {"eps": 1e-8, "max_iter": 100_000},
    "sklearn_sgd": {"eps": None, "max_iter": 300},
}


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def need(name):
    """Skip, naming the package, only when the anchor's library is genuinely not installed."""
    why = registry.available_anchors()[name]
    if why is not None:
        pytest.skip(f"{name}: {why}")


def solve_tight(name, problem, **extra):
    need(name)
    result = registry.get(name, **{**TIGHT[name], **extra}).solve(problem)
    ref = reference_solution(problem)
    return result, ref


def check_against_reference(result, ref, rtol):
    assert np.isfinite(result.primal) and np.isfinite(result.dual)
    assert result.certified
    # Weak duality: the certified primal of the converted model cannot beat the optimum.
    assert result.primal >= ref.primal - 1e-9 * max(1.0, abs(ref.primal))
    assert rel(result.primal, ref.primal) <= rtol, (result.primal, ref.primal)
    assert result.rel_gap <= 10 * rtol + 1e-9


def flipped(X, y):
    """The same data with the first example of the other class moved to the front, so that the
    libraries (which order labels by first appearance) see the other label first."""
    first_other = int(np.flatnonzero(y != y[0])[0])
    order = np.r_[first_other, np.delete(np.arange(len(y)), first_other)]
    return X[order], y[order]


# ---- linear anchors ------------------------------------------------------------------------------


@pytest.mark.parametrize("set_name", SETS)
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize(
    ("bias", "scale"), [("regularized", 1.0), ("regularized", 2.5), ("none", 1)]
)
def test_liblinear_reaches_reference(set_name, loss, bias, scale):
    X, y = BINARY_SETS[set_name]
    # C = 0.1: LIBLINEAR's dual CD converges within its compiled-in 300 epochs on these sets
    # (at C = 1 the hinge runs stop at the cap, 1e-4 to 1e-3 from the optimum).
    problem = SoftMarginPrimal(X, y, C=0.1, loss=loss, bias=bias, bias_scale=scale)
    result, ref = solve_tight("liblinear", problem)
    check_against_reference(result, ref, RTOL_LIBLINEAR)
    assert result.iteration_unit == "outer iterations (epochs)"
    assert 0 < result.iterations <= 300


def test_liblinear_label_order_and_dual_view():
    """Either label first, the dual view, and C = 1 on a set where LIBLINEAR converges."""
    X, y = BINARY_SETS["quadrant"]
    for Xo, yo in ((X, y), flipped(X, y)):
        for cls in (SoftMarginPrimal, SoftMarginDual):
            problem = cls(Xo, yo, C=1.0, loss="hinge", bias="regularized", bias_scale=2.0)
            result, ref = solve_tight("liblinear", problem)
            check_against_reference(result, ref, RTOL_LIBLINEAR)
            assert result.problem == cls.kind
            # LIBLINEAR swaps ±1 labels so that +1 comes first, whatever the data's order.
            assert result.info["labels"] == [1, -1]


@pytest.mark.parametrize("set_name", SETS)
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize(("bias", "scale"), [("regularized", 2.5), ("none", 1)])
def test_sklearn_linearsvc_reaches_reference(set_name, loss, bias, scale):
    X, y = BINARY_SETS[set_name]
    problem = SoftMarginPrimal(X, y, C=1.0, loss=loss, bias=bias, bias_scale=scale)
    result, ref = solve_tight("sklearn_linearsvc", problem)
    check_against_reference(result, ref, RTOL_EXACT)


@pytest.mark.parametrize(
    ("set_name", "loss", "bias", "options"),
    [(s, "hinge", bias, {}) for s in SETS for bias in ("free", "none")]
    # scikit-learn's "optimal" schedule blows the squared hinge up on these sets (the
    # certificate shows it); its adaptive schedule with averaging converges.
    + [
        (s, "squared_hinge", "none", {"learning_rate": "adaptive", "average": True})
        for s in ("gaussian_overlap", "quadrant")
    ],
)
def test_sklearn_sgd_reaches_reference(set_name, loss, bias, options):
    X, y = BINARY_SETS[set_name]
    problem = SoftMarginPrimal(X, y, C=0.1, loss=loss, bias=bias)
    with pytest.warns(ConvergenceWarning, match="sklearn_sgd"):
        result, ref = solve_tight("sklearn_sgd", problem, **options)
    check_against_reference(result, ref, RTOL_SGD)
    assert result.iterations == TIGHT["sklearn_sgd"]["max_iter"]
    assert result.status is Status.MAX_ITER  # eps=None: it ran its epochs


def test_sklearn_sgd_alpha_comes_from_lambda_from_C():
    need("sklearn_sgd")
    from svmbench.problems.scaling import lambda_from_C

    X, y = BINARY_SETS["quadrant"]
    problem = SoftMarginPrimal(X, y, C=0.3, bias="free")
    result = registry.get("sklearn_sgd", max_iter=5, eps=None).solve(problem)
    assert result.info["sgd_alpha"] == lambda_from_C(0.3, len(y))


# ---- kernel anchors (free bias, hinge) -----------------------------------------------------------

KERNEL_ANCHORS = ("libsvm", "sklearn_svc", "sklearnex_svc")


def _kernel_problems(X, y):
    return [
        KernelDual(X, y, C=1.0, kernel="rbf"),
        KernelDual(X, y, C=1.0, kernel="poly", degree=2, coef0=1.0),
        KernelDual(X, y, C=1.0, kernel="linear"),
        KernelDual(X @ X.T, y, C=1.0, kernel="precomputed"),
        SoftMarginPrimal(X, y, C=1.0, bias="free"),
        SoftMarginDual(X, y, C=1.0, bias="free"),
    ]


@pytest.mark.parametrize("name", KERNEL_ANCHORS)
@pytest.mark.parametrize("set_name", SETS)
def test_kernel_anchors_reach_reference(name, set_name):
    X, y = BINARY_SETS[set_name]
    for problem in _kernel_problems(X, y):
        if registry.solver_class(name).unsupported_reason(problem):
            continue  # sklearnex_svc refuses precomputed kernels (tested below)
        result, ref = solve_tight(name, problem)
        check_against_reference(result, ref, RTOL_EXACT)
        assert result.alpha is not None and np.all(result.alpha >= 0)


@pytest.mark.parametrize("name", KERNEL_ANCHORS)
def test_kernel_anchors_on_csr_input(name):
    """Sparse rows go to the libraries as CSR (scikit-learn then returns a sparse dual_coef_)."""
    ds = datasets.gaussian(150, 40, 2.0, seed=3, density=0.1)
    result, ref = solve_tight(name, KernelDual(ds.X, ds.y, C=1.0, kernel="rbf"))
    check_against_reference(result, ref, RTOL_EXACT)


@pytest.mark.parametrize("name", KERNEL_ANCHORS)
def test_kernel_anchors_label_order(name):
    """Either label first: the model's decision function is the reference's (LIBSVM and its
    forks order ±1 labels with +1 first whatever the data's order; scikit-learn's classes_ are
    sorted)."""
    X, y = BINARY_SETS["gaussian_overlap"]
    for Xo, yo in ((X, y), flipped(X, y)):
        problem = KernelDual(Xo, yo, C=1.0, kernel="rbf")
        result, ref = solve_tight(name, problem)
        check_against_reference(result, ref, RTOL_EXACT)
        f = problem.decision_function(result.alpha, result.b)
        g = problem.decision_function(ref.alpha, ref.b)
        assert np.max(np.abs(f - g)) <= 1e-3 * max(1.0, np.max(np.abs(g)))
        if name == "libsvm":
            assert result.info["labels"] == [1, -1]


def test_sklearnex_runs_onedal():
    X, y = BINARY_SETS["quadrant"]
    result, _ = solve_tight("sklearnex_svc", KernelDual(X, y, kernel="rbf"))
    assert result.info["backend"] == "onedal"
    assert result.info["threads"] == "1"


# ---- per-example weights -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "rtol"),
    [
        ("sklearn_svc", "rbf", RTOL_EXACT),
        ("sklearn_svc", "precomputed", RTOL_EXACT),
        ("sklearnex_svc", "rbf", RTOL_EXACT),
        ("sklearn_linearsvc", "linear", RTOL_EXACT),
        ("sklearn_sgd", "linear", RTOL_SGD),
    ],
)
def test_sklearn_estimators_take_sample_weights(name, kind, rtol):
    """``C_i = C·w_i``, zero weights included (scikit-learn's LIBSVM drops those examples)."""
    X, y = BINARY_SETS["gaussian_overlap"]
    sw = np.linspace(0.2, 3.0, len(y))
    sw[::7] = 0.0
    if kind == "rbf":
        problem = KernelDual(X, y, kernel="rbf", sample_weight=sw)
    elif kind == "precomputed":
        problem = KernelDual(X @ X.T, y, kernel="precomputed", sample_weight=sw)
    elif name == "sklearn_sgd":
        problem = SoftMarginPrimal(X, y, C=0.1, bias="free", sample_weight=sw)
    else:
        problem = SoftMarginPrimal(X, y, bias="none", sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # SGD runs its 300 epochs
        result, ref = solve_tight(name, problem)
    check_against_reference(result, ref, rtol)
    if result.alpha is not None:
        assert np.all(result.alpha[sw == 0] == 0)


def test_uniform_weights_scale_C_and_others_are_refused():
    X, y = BINARY_SETS["quadrant"]
    uniform = SoftMarginPrimal(X, y, C=0.5, bias="none", sample_weight=np.full(len(y), 0.2))
    result, ref = solve_tight("liblinear", uniform)
    check_against_reference(result, ref, RTOL_LIBLINEAR)
    uneven = SoftMarginPrimal(X, y, bias="none", sample_weight=np.linspace(0.5, 1.5, len(y)))
    for name in ("liblinear", "libsvm"):
        with pytest.raises(TypeError, match=rf"'{name}'.*per-example weights"):
            registry.get(name).solve(
                uneven
                if name == "liblinear"
                else KernelDual(X, y, sample_weight=uneven.sample_weight)
            )


# ---- multiclass ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("bias", "scale"), [("none", 1.0), ("regularized", 2.0)])
@pytest.mark.parametrize("spec", ["blobs:n=200,d=4,k=3,seed=0", "wine"])
def test_liblinear_cs_reaches_reference(spec, bias, scale):
    ds = datasets.load(spec)
    problem = MulticlassHinge(ds.X, ds.y, C=0.5, bias=bias, bias_scale=scale)
    result, ref = solve_tight("liblinear_cs", problem)
    check_against_reference(result, ref, RTOL_LIBLINEAR)
    # LIBLINEAR orders classes by first appearance; the adapter put each column back.
    first_seen = list(dict.fromkeys(int(c) for c in ds.y))
    assert result.info["labels"] == first_seen
    pred = problem.predict(result.W, result.b)
    assert np.mean(pred == problem.predict(ref.W, ref.b)) >= 0.97


# ---- tolerances, status, silence -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "loose", "problem_kind"),
    [
        ("liblinear", {"eps": 1.0}, "linear"),
        ("sklearn_linearsvc", {"eps": 1.0}, "linear"),
        ("libsvm", {"eps": 1.0}, "kernel"),
        ("sklearn_svc", {"eps": 1.0}, "kernel"),
        ("sklearnex_svc", {"eps": 1.0}, "kernel"),
        ("sklearn_sgd", {"eps": None, "max_iter": 2}, "sgd"),
        ("liblinear_cs", {"eps": 1.0}, "multiclass"),
    ],
)
def test_loose_tolerance_reports_larger_gap(name, loose, problem_kind):
    need(name)
    X, y = BINARY_SETS["breast_cancer"]
    if problem_kind == "linear":
        problem = SoftMarginPrimal(X, y, C=0.1, bias="regularized")
    elif problem_kind == "kernel":
        problem = KernelDual(X, y, C=1.0, kernel="rbf")
    elif problem_kind == "sgd":
        problem = SoftMarginPrimal(X, y, C=0.1, bias="free")
    else:
        ds = datasets.load("wine")
        problem = MulticlassHinge(ds.X, ds.y, C=0.5)
    with pytest.warns(ConvergenceWarning) if name == "sklearn_sgd" else _no_warning():
        loose_result = registry.get(name, **loose).solve(problem)
    tight_result, _ = solve_tight(name, problem)
    assert loose_result.rel_gap > 10 * tight_result.rel_gap, (loose_result, tight_result)
    assert loose_result.certified and tight_result.certified


def _anchor_problem(name, kernel):
    """A small problem of the anchor's kind: ``kernel`` "linear" (the soft-margin primal with
    the bias the library has) or "rbf" (a kernel dual); None when the anchor takes neither."""
    X, y = BINARY_SETS["breast_cancer"]
    cls = registry.solver_class(name)
    if kernel == "rbf":
        candidates = [KernelDual(X, y, C=1.0, kernel="rbf")]
    else:
        candidates = [SoftMarginPrimal(X, y, C=0.1, bias=b) for b in ("regularized", "free")]
        candidates.append(MulticlassHinge(*_wine(), C=0.5))
        candidates.append(Logistic(X, y, C=0.1, bias="regularized"))
        candidates.append(NuSVCDual(X, y, nu=0.3, kernel="linear"))
        candidates.append(SVRDual(*_diabetes(), C=1.0, kernel="linear"))
        # the labels as real targets on scaled data; C small enough that LIBLINEAR's loose
        # default -e 0.1 of -s 12 (relative to its first epoch's violations) certifies 0.1
        Z = (X - X.mean(axis=0)) / X.std(axis=0)
        candidates.append(
            SVRPrimal(Z, y, C=1e-3, loss="squared_epsilon_insensitive", bias="regularized")
        )
    return next((p for p in candidates if cls.unsupported_reason(p) is None), None)


def _diabetes():
    ds = datasets.load("diabetes:n=150,seed=0")
    return ds.X, ds.y


def _wine():
    ds = datasets.load("wine")
    return ds.X, ds.y


#: (anchor, kernel) pairs the anchor takes: RBF for the kernel-dual anchors only.
ANCHOR_KERNELS = [
    (name, kernel)
    for name in registry.anchor_names()
    for kernel in ("linear", "rbf")
    if kernel == "linear" or KernelDual in registry.solver_class(name).supported
]


@pytest.mark.parametrize("tol", [1e-1, 1e-4, 1e-8])
@pytest.mark.parametrize(("name", "kernel"), ANCHOR_KERNELS)
def test_anchor_optimal_means_certified_at_tol(name, tol, kernel):
    """``tol`` is the certified gap asked for, ``eps`` the library's own tolerance (its
    default here): ``optimal`` ⇒ certified with rel_gap ≤ tol; short of tol, the library's
    rule having held, the status is ``not_certified``."""
    need(name)
    problem = _anchor_problem(name, kernel)
    assert problem is not None, f"{name} takes no {kernel} problem"
    solver = registry.get(name, tol=tol)
    assert solver.tol == tol and solver.eps == type(solver)().eps  # the library's default
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = solver.solve(problem)
    if result.status is Status.OPTIMAL:
        assert result.certified and result.rel_gap <= tol
    elif result.status is Status.NOT_CERTIFIED:
        assert result.rel_gap > tol or not result.certified
    else:
        assert result.status is Status.MAX_ITER, result.message
    if tol == 1e-1 and not registry.solver_class(name).stochastic:  # its default eps is enough
        assert result.status is Status.OPTIMAL, result.message


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize(
    ("name", "options"), [("sklearn_linearsvc", {"max_iter": 2}), ("sklearn_svc", {"max_iter": 5})]
)
def test_iteration_cap_is_status_max_iter(name, options):
    need(name)
    X, y = BINARY_SETS["breast_cancer"]
    problem = (
        SoftMarginPrimal(X, y, bias="none")
        if name == "sklearn_linearsvc"
        else KernelDual(X, y, kernel="rbf")
    )
    with pytest.warns(ConvergenceWarning, match=name):
        result = registry.get(name, eps=1e-10, **options).solve(problem)
    assert result.status is Status.MAX_ITER
    assert result.iterations == options["max_iter"]
    assert np.isfinite(result.rel_gap)


def test_liblinear_cap_is_status_max_iter():
    """LIBLINEAR's warning (captured, not printed) becomes status max_iter at its 300 epochs."""
    need("liblinear")
    X, y = BINARY_SETS["digits"]
    problem = SoftMarginPrimal(X, y, C=10.0, bias="none")
    with pytest.warns(ConvergenceWarning, match="liblinear"):
        result = registry.get("liblinear", eps=1e-12).solve(problem)
    assert result.status is Status.MAX_ITER
    assert "reaching max number of iterations" in result.info["library_output"]


@pytest.mark.parametrize("name", registry.anchor_names())
def test_anchors_print_nothing_and_time_only_training(name, capfd):
    need(name)
    X, y = BINARY_SETS["quadrant"]
    candidates = [
        SoftMarginPrimal(X, y, bias="regularized"),
        SoftMarginPrimal(X, y, bias="free"),
        KernelDual(X, y, kernel="rbf"),
        MulticlassHinge(*(lambda d: (d.X, d.y))(datasets.load("blobs:n=90,d=3,k=3,seed=1"))),
        Logistic(X, y, bias="regularized"),
        NuSVCDual(X, y, nu=0.3),
        SVRDual(*_diabetes(), kernel="rbf"),
        SVRPrimal(X, y, loss="squared_epsilon_insensitive", bias="regularized"),
    ]
    problem = next(
        p for p in candidates if registry.solver_class(name).unsupported_reason(p) is None
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = registry.get(name).solve(problem)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert result.solver == name
    assert 0 < result.solve_time < 5
    assert result.iterations > 0
    assert result.iteration_unit


def test_liblinear_weight_layout_matches_get_decfun():
    need("liblinear")
    from liblinear.liblinearutil import parameter, problem, train

    ds = datasets.load("blobs:n=60,d=3,k=3,seed=2")
    for options, y in (("-s 3 -B 1.5 -q", np.where(ds.y == 0, 1.0, -1.0)), ("-s 4 -B 2 -q", ds.y)):
        model = train(problem(np.asarray(y, float), ds.X), parameter(options))
        W = anchors_liblinear.liblinear_weights(model)
        for j in range(W.shape[1]):
            w, b = model.get_decfun(j)
            assert np.allclose(W[:-1, j], w) and np.isclose(model.bias * W[-1, j], b)


# ---- refusals and availability -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "make", "why"),
    [
        ("liblinear", lambda X, y: SoftMarginPrimal(X, y, bias="free"), "bias='free'"),
        ("liblinear", lambda X, y: KernelDual(X, y), "kernel_dual"),
        ("sklearn_linearsvc", lambda X, y: SoftMarginDual(X, y, bias="free"), "bias='free'"),
        ("libsvm", lambda X, y: SoftMarginPrimal(X, y, loss="squared_hinge"), "loss"),
        ("libsvm", lambda X, y: KernelDual(X, y, bias="regularized"), "bias='regularized'"),
        ("sklearn_svc", lambda X, y: KernelDual(X, y, bias="none"), "bias='none'"),
        ("sklearnex_svc", lambda X, y: KernelDual(X @ X.T, y, kernel="precomputed"), "precompu"),
        ("sklearn_sgd", lambda X, y: SoftMarginPrimal(X, y, bias="regularized"), "bias="),
        ("liblinear_cs", lambda X, y: SoftMarginPrimal(X, y), "soft_margin_primal"),
    ],
)
def test_unsupported_problems_raise_type_error_naming_the_anchor(name, make, why):
    X, y = BINARY_SETS["quadrant"]
    problem = make(X, y)
    with pytest.raises(TypeError, match=rf"solver '{name}' cannot solve .*{why}"):
        registry.get(name).solve(problem)


def test_liblinear_cs_refuses_other_costs():
    ds = datasets.load("blobs:n=60,d=3,k=3,seed=2")
    cost = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    with pytest.raises(TypeError, match="'liblinear_cs'.*0-1 cost"):
        registry.get("liblinear_cs").solve(MulticlassHinge(ds.X, ds.y, cost=cost))


def test_get_rejects_unknown_names_and_options():
    with pytest.raises(ValueError, match="unknown solver 'nope'.*liblinear"):
        registry.get("nope")
    with pytest.raises(ValueError, match="did you mean 'libsvm'"):
        registry.get("libsmv")
    with pytest.raises(TypeError, match="solver 'liblinear'.*max_iter"):
        registry.get("liblinear", max_iter=10)  # LIBLINEAR's cap is compiled in


def test_available_reports_missing_packages(monkeypatch):
    status = registry.available_anchors()
    assert set(status) == set(registry.anchor_names())
    assert all(v is None or isinstance(v, str) for v in status.values())
    # The bindings this suite depends on are installed here.
    assert status["liblinear"] is None and status["libsvm"] is None
    monkeypatch.setattr(SklearnexSVCAnchor, "modules", ("no_such_module_svmbench",))
    status = registry.available_anchors()
    assert "scikit-learn-intelex is not installed" in status["sklearnex_svc"]
    assert "pip install scikit-learn-intelex" in status["sklearnex_svc"]
    X, y = BINARY_SETS["quadrant"]
    with pytest.raises(ModuleNotFoundError, match="anchor 'sklearnex_svc' cannot run"):
        registry.get("sklearnex_svc").solve(KernelDual(X, y))


def test_liblinear_seed_makes_runs_repeat():
    need("liblinear")
    X, y = BINARY_SETS["gaussian_overlap"]
    problem = SoftMarginPrimal(X, y, C=0.1, bias="regularized")
    a, b, c = (registry.get("liblinear", eps=1e-6, seed=s).solve(problem) for s in (4, 4, 5))
    assert a.iterations == b.iterations and np.array_equal(a.w, b.w)
    assert not np.array_equal(a.w, c.w)  # another seed, another coordinate order


def test_time_limit_overrun_is_status_time_limit():
    need("libsvm")
    X, y = BINARY_SETS["breast_cancer"]
    with pytest.warns(ConvergenceWarning, match="libsvm"):
        result = registry.get("libsvm", time_limit=1e-9).solve(KernelDual(X, y))
    assert result.status is Status.TIME_LIMIT
    assert "cannot be interrupted" in result.message
    assert result.certified and np.isfinite(result.rel_gap)


# ---- svmbench compare ---------------------------------------------------------------------------


def test_compare_runs_solvers_and_anchors_side_by_side(monkeypatch):
    need("liblinear")
    from svmbench.benchmarks.harness import compare

    X, y = BINARY_SETS["quadrant"]
    problem = SoftMarginPrimal(X, y, C=0.1, bias="regularized")
    names = ["clarabel", "liblinear", "sklearn_sgd", "nope"]
    rows = compare.compare(problem, names, repeat=2, options={"liblinear": {"eps": 1e-6}})
    assert [r["name"] for r in rows] == names
    clarabel, liblinear, sgd, nope = rows
    assert clarabel["kind"] == "solver" and liblinear["kind"] == "anchor"
    assert clarabel["distance"] <= 1e-8
    assert liblinear["distance"] <= RTOL_LIBLINEAR and liblinear["rel_gap"] <= 10 * RTOL_LIBLINEAR
    assert len(liblinear["times"]) == 2 and liblinear["time"] == np.median(liblinear["times"])
    assert liblinear["accuracy"] > 0.8 and liblinear["threads"] == "1"
    assert sgd["status"] == "not run" and "bias='regularized'" in sgd["note"]
    assert nope["status"] == "not run" and "unknown solver" in nope["note"]
    table = compare.format_table(rows)
    assert all(name in table for name in names)

    monkeypatch.setattr(compare, "REFERENCE_MAX_N", 10)
    rows = compare.compare(problem, ["liblinear"], repeat=1)
    assert np.isnan(rows[0]["distance"])
    assert "no reference optimum: n=200 > 10" in rows[0]["reference_note"]


def test_svmbench_compare_prints_a_row_per_name(capsys):
    need("libsvm")
    from svmbench.benchmarks.cli.main import main

    code = main(
        [
            "compare",
            "--problem=kernel_dual",
            "--data=gaussian:n=120,d=3,sep=1,seed=5",
            "--kernel=rbf",
            "--solvers=clarabel,libsvm,liblinear",
            "--repeat=1",
            "--set=libsvm.eps=1e-8",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "optimal" in lines["libsvm"] and "not run" in lines["liblinear"]
    assert "liblinear: problem kind 'kernel_dual' is not supported" in out
    assert "wall [s]" in out and "solve [s]" in out  # the user's clock beside the solver's
