"""Bad input gets a clear ValueError/TypeError that names the argument, once, at construction."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import HardMarginPrimal, KernelDual, SoftMarginDual, SoftMarginPrimal

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 3))
Y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
BINARY = [SoftMarginPrimal, SoftMarginDual, KernelDual, HardMarginPrimal]


def _nan_X():
    Z = X.copy()
    Z[3, 1] = np.nan
    return Z


def _inf_X():
    Z = X.copy()
    Z[0, 0] = np.inf
    return Z


BAD_DATA = [
    ("nan in X", _nan_X(), Y, ValueError, "X must contain only finite"),
    ("inf in X", _inf_X(), Y, ValueError, "X must contain only finite"),
    ("nan in sparse X", sparse.csr_matrix(_nan_X()), Y, ValueError, "finite"),
    ("y too short", X, Y[:-1], ValueError, "y must have length n_samples=20, got 19"),
    ("one class", X, np.ones(20), ValueError, "y must contain both classes"),
    ("labels 0/1", X, (Y > 0).astype(float), ValueError, "y must contain only -1 and \\+1"),
    ("labels 1/2", X, np.where(Y > 0, 2.0, 1.0), ValueError, "only -1 and \\+1"),
    ("empty X", np.zeros((0, 3)), np.zeros(0), ValueError, "X must be non-empty"),
    ("no features", np.zeros((20, 0)), Y, ValueError, "X must be non-empty"),
    ("1-D X", np.ones(20), Y, ValueError, "X must be 2-D"),
    ("string X", np.array([["a"] * 3] * 20), Y, TypeError, "X must hold numbers"),
    (
        "nan in y",
        X,
        np.where(np.arange(20) == 0, np.nan, Y),
        ValueError,
        "y must contain only finite",
    ),
]


@pytest.mark.parametrize("cls", BINARY, ids=lambda c: c.kind)
@pytest.mark.parametrize(
    ("what", "X_", "y_", "error", "match"), BAD_DATA, ids=[b[0] for b in BAD_DATA]
)
def test_bad_data_is_refused(cls, what, X_, y_, error, match):
    with pytest.raises(error, match=match):
        cls(X_, y_)


@pytest.mark.parametrize("cls", [SoftMarginPrimal, SoftMarginDual, KernelDual])
@pytest.mark.parametrize("C", [0.0, -1.0, np.nan, np.inf])
def test_C_must_be_positive_and_finite(cls, C):
    with pytest.raises(ValueError, match="C must be"):
        cls(X, Y, C=C)


@pytest.mark.parametrize("cls", [SoftMarginPrimal, SoftMarginDual, KernelDual])
def test_C_must_be_a_number(cls):
    with pytest.raises(TypeError, match="C must be a real number"):
        cls(X, Y, C="1")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"loss": "logistic"}, "loss must be one of"),
        ({"bias": "yes"}, "bias must be one of"),
        ({"bias_scale": 0.0}, "bias_scale must be"),
        ({"sample_weight": -np.ones(20)}, "sample_weight must be >= 0"),
        ({"sample_weight": np.ones(5)}, "sample_weight must have length"),
        ({"sample_weight": np.zeros(20)}, "at least one positive"),
    ],
)
def test_bad_soft_margin_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SoftMarginPrimal(X, Y, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"kernel": "laplacian"}, ValueError, "kernel must be one of"),
        ({"gamma": -0.5}, ValueError, "gamma must be in \\(0"),
        ({"gamma": 0.0}, ValueError, "gamma must be in \\(0"),
        ({"gamma": "large"}, ValueError, "gamma must be one of 'scale', 'auto'"),
        ({"degree": 0, "kernel": "poly"}, ValueError, "degree must be an integer >= 1"),
        ({"degree": 2.5, "kernel": "poly"}, TypeError, "degree must be an integer"),
        ({"coef0": np.nan}, ValueError, "coef0 must be a real number"),
    ],
)
def test_bad_kernel_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        KernelDual(X, Y, **kwargs)


def test_precomputed_kernel_must_be_square():
    with pytest.raises(ValueError, match="square Gram matrix"):
        KernelDual(X @ X.T[:, :10], Y, kernel="precomputed")


def test_precomputed_kernel_must_be_symmetric():
    K = X @ X.T
    K[0, 1] += 0.5
    with pytest.raises(ValueError, match="symmetric"):
        KernelDual(K, Y, kernel="precomputed")


def test_precomputed_kernel_must_match_labels():
    with pytest.raises(ValueError, match="y must have length n_samples=20"):
        KernelDual(X @ X.T, Y[:10], kernel="precomputed")


def test_gamma_scale_and_auto_resolve_like_scikit_learn():
    assert KernelDual(X, Y, gamma="auto").gamma == pytest.approx(1 / 3)
    assert KernelDual(X, Y, gamma="scale").gamma == pytest.approx(1 / (3 * X.var()))


def test_variables_of_the_wrong_size_are_refused():
    p = SoftMarginPrimal(X, Y)
    with pytest.raises(ValueError, match="w must have length n_features=3"):
        p.primal_objective(np.ones(4), 0.0)
    with pytest.raises(ValueError, match="alpha must have length n_samples=20"):
        p.dual_objective(np.ones(3))
    with pytest.raises(ValueError, match="b must be 0 for bias='none'"):
        SoftMarginPrimal(X, Y, bias="none").primal_objective(np.ones(3), 1.0)
    with pytest.raises(TypeError, match="needs w"):
        p.certificate()


def test_problems_are_immutable():
    p = SoftMarginPrimal(X, Y)
    with pytest.raises(AttributeError):
        p.C = 3.0


@pytest.mark.parametrize("cls", [SoftMarginPrimal, SoftMarginDual, KernelDual])
@pytest.mark.parametrize(
    ("C", "weight", "match"),
    [(1e12, None, r"C must be at most 1e\+10"), (1e300, None, "C must be at most"),
     (1.0, 1e12, r"C · sample_weight must be at most [13]e\+10")],
    ids=["C=1e12", "C=1e300", "weight=1e12"],
)  # fmt: skip
def test_C_beyond_double_precision_is_refused_naming_the_range(cls, C, weight, match):
    sw = None if weight is None else np.full(20, weight)
    with pytest.raises(ValueError, match=match):
        cls(X, Y, C=C, sample_weight=sw)


@pytest.mark.parametrize("C", [1e-300, 1e10])
def test_the_ends_of_the_C_range_solve_certified(C):
    from svmbench.solvers import registry

    problem = SoftMarginPrimal(X, Y, C=C)
    for name in ("clarabel", "barrier"):
        r = registry.get(name).solve(problem)
        assert r.status.value in ("optimal", "numerical_error", "max_iter")
        assert r.status.value != "optimal" or (r.certified and r.rel_gap <= 1e-6)
        assert np.isfinite(r.primal)


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "precomputed"])
def test_a_kernel_dual_past_its_certifiable_conditioning_is_refused(kernel):
    """``max C_i · max K̃_ii`` above 1e11: refused at construction with the C that works; just
    below it the barrier certifies (measured: 9.9e10 certified, 9.9e12 ran to max_iter)."""
    from svmbench.problems.kernel_dual import MAX_C_TIMES_DIAGONAL
    from svmbench.solvers import registry

    data = X if kernel != "precomputed" else X @ X.T
    probe = KernelDual(data, Y, kernel=kernel, gamma=0.5, coef0=1.0)
    if kernel == "precomputed":
        diag = np.max(np.diag(data))
    elif kernel == "rbf":
        diag = 1.0
    else:
        sq = np.einsum("ij,ij->i", X, X)
        diag = np.max(sq if kernel == "linear" else (0.5 * sq + 1.0) ** 3)
    limit = MAX_C_TIMES_DIAGONAL / diag
    if limit <= 1e10:  # C itself is capped at 1e10 (check_C_range)
        with pytest.raises(ValueError, match=r"C · max K̃_ii = .* is over 1e\+11: .*use C ≤"):
            dataclasses.replace(probe, C=1.01 * limit)
        problem = dataclasses.replace(probe, C=0.9 * limit)
        r = registry.get("barrier").solve(problem)
        assert r.certified and r.rel_gap <= 1e-6
        # the polynomial kernel's allowance (from Cauchy–Schwarz, not refined) may be the floor
        assert r.status.value == "optimal" or (
            kernel == "poly" and r.status.value == "not_certified" and "rounding floor" in r.message
        )
    else:
        dataclasses.replace(probe, C=1e10)  # the C cap comes first


@pytest.mark.parametrize(
    "labels, match",
    [
        ([0, 1, 2, 1], None),
        ([0, 2, 2, 0], "missing"),
        ([-1, 0, 1, 1], "non-negative"),
        ([0, 1, 1, 4], "k <= n_samples=4; got the label 4"),
        ([0, 0, 0, 0], "at least 2 classes"),
    ],
)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float64])
def test_integer_labels_are_checked_as_float_ones(labels, match, dtype):
    """``check_multiclass_labels`` reads integer arrays (an estimator's encoded classes) without
    the float conversion and roundness test, with the same answers and the same refusals; the
    labels it returns are a new int64 array."""
    from svmbench.problems.validation import check_multiclass_labels

    if dtype is np.uint8 and min(labels) < 0:
        pytest.skip("no negative unsigned labels")
    y = np.array(labels, dtype=dtype)
    if match is not None:
        with pytest.raises(ValueError, match=match):
            check_multiclass_labels(y, 4)
        return
    checked, k = check_multiclass_labels(y, 4)
    assert k == 3 and checked.dtype == np.int64 and checked.tolist() == labels
    assert not np.shares_memory(checked, y)
    with pytest.raises(ValueError, match="length n_samples=5"):
        check_multiclass_labels(y, 5)


def test_weights_may_put_a_C_i_up_to_the_weighted_cap_and_no_further():
    """``C`` stays within 1e10 for every problem; on the kernel dual, the linear soft margins
    and the multiclass problem the weights may put a ``C_i`` up to 3e10 (class weights
    "balanced" at C = 1e10), not beyond."""
    from svmbench.problems import MulticlassHinge
    from svmbench.problems.validation import C_MAX, C_WEIGHTED_MAX

    weights = np.where(Y > 0, C_WEIGHTED_MAX / C_MAX, 1.0)
    kinds = [(KernelDual, Y), (MulticlassHinge, (Y > 0).astype(int))]
    for cls, labels in [*kinds, (SoftMarginPrimal, Y), (SoftMarginDual, Y)]:
        problem = cls(X, labels, C=C_MAX, sample_weight=weights)
        assert problem.C * float(np.max(problem.sample_weight)) > C_MAX
        with pytest.raises(ValueError, match=r"C · sample_weight must be at most 3e\+10"):
            cls(X, labels, C=C_MAX, sample_weight=1.01 * weights)
        with pytest.raises(ValueError, match=r"C must be at most 1e\+10"):
            cls(X, labels, C=1.01 * C_MAX, sample_weight=np.full(20, 0.5))


def test_balanced_class_weights_at_C_1e10_fit_as_svc():
    """Breast cancer (212 against 357) with ``class_weight="balanced"`` at C = 1e10: a largest
    ``C_i`` of 1.34e10, refused before; now certified, with SVC's support vectors and
    predictions."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from svmbench import SVMClassifier

    Xc, yc = load_breast_cancer(return_X_y=True)
    Xc = StandardScaler().fit_transform(Xc)
    ours = SVMClassifier(C=1e10, gamma=0.1, class_weight="balanced").fit(Xc, yc)
    theirs = SVC(C=1e10, gamma=0.1, class_weight="balanced").fit(Xc, yc)
    assert ours.result_.status.value == "optimal" and ours.result_.rel_gap <= 1e-6
    assert np.array_equal(ours.support_, theirs.support_)
    assert np.array_equal(ours.predict(Xc), theirs.predict(Xc))
    # the linear kernel too (SVC takes seconds there): certified, the margin's points only
    for loss, bias in (("hinge", "free"), ("squared_hinge", "regularized")):
        linear = SVMClassifier(kernel="linear", C=1e10, class_weight="balanced", loss=loss,
                               bias=bias).fit(Xc, yc)  # fmt: skip
        assert linear.result_.status.value == "optimal" and linear.result_.rel_gap <= 1e-6
