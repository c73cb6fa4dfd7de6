"""The scikit-learn estimator: scikit-learn's own checks, GridSearchCV against SVC and LinearSVC
on the same folds, labels of any type, weights, warm starts, warnings, pickling."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.utils._test_common.instance_generator import PER_ESTIMATOR_XFAIL_CHECKS
from sklearn.utils.estimator_checks import parametrize_with_checks

import svmbench
from svmbench import SVMClassifier, SVMClassifierCV, SVMConvergenceWarning
from svmbench.problems.loaded_classifier import LoadedClassifier
from tests.fresh_process import run_python

# ---- scikit-learn's checks -------------------------------------------------------------------
#: Tight enough for the sample-weight equivalence checks (decision values to rtol 1e-7).
TIGHT = 1e-10
ESTIMATORS = [
    SVMClassifier(solver="clarabel", kernel="linear", tol=TIGHT),
    SVMClassifier(solver="osqp", kernel="linear", solver_options={"eps": 1e-9}),
    SVMClassifier(solver="barrier", kernel="linear", tol=TIGHT),
    SVMClassifier(solver="dcd", kernel="linear", bias="regularized", tol=TIGHT),
    SVMClassifier(solver="smo", kernel="rbf", tol=TIGHT),
    SVMClassifier(
        solver="cs_dcd", kernel="linear", bias="regularized", multiclass="crammer_singer", tol=TIGHT
    ),
    SVMClassifier(solver="pegasos", kernel="linear", bias="regularized", random_state=0),
]


def _expected_failures(estimator):
    """Only what scikit-learn itself expects to fail for SVC and LinearSVC, and never the
    sample-weight equivalence for an exact solver (C_i = C · sample_weight_i exactly)."""
    allowed = {**PER_ESTIMATOR_XFAIL_CHECKS[SVC], **PER_ESTIMATOR_XFAIL_CHECKS[LinearSVC]}
    if estimator.solver != "pegasos":  # a stochastic method sees repeated rows more often
        allowed = {k: v for k, v in allowed.items() if "sample_weight_equivalence" not in k}
    return {k: v for k, v in allowed.items() if k != "check_non_transformer_estimators_n_iter"}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_scikit_learn_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SVMConvergenceWarning)
        check(estimator)


# ---- like with like against scikit-learn, on the same folds -----------------------------------
def _data(name):
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    X, y = load_digits(return_X_y=True)
    keep = np.random.default_rng(0).permutation(y.size)[:400]  # a few seconds, not minutes
    return X[keep], y[keep]


FOLDS = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)


def _compare_grids(ours, theirs, grid_ours, grid_theirs, X, y):
    go = GridSearchCV(ours, grid_ours, cv=FOLDS).fit(X, y)
    gt = GridSearchCV(theirs, grid_theirs, cv=FOLDS).fit(X, y)
    sizes = np.array([len(test) for _, test in FOLDS.split(X, y)])
    for i in range(len(go.cv_results_["params"])):
        for fold, size in enumerate(sizes):
            a = go.cv_results_[f"split{fold}_test_score"][i]
            b = gt.cv_results_[f"split{fold}_test_score"][i]
            assert abs(a - b) * size <= 1 + 1e-9, (go.cv_results_["params"][i], fold, a, b)
    return go.best_estimator_, gt.best_estimator_


@pytest.mark.parametrize("name", ["breast_cancer", "digits"])
def test_grid_search_matches_svc(name):
    X, y = _data(name)
    ours = make_pipeline(StandardScaler(), SVMClassifier(multiclass="ovo", bias="free", tol=1e-8))
    theirs = make_pipeline(StandardScaler(), SVC(tol=1e-8))
    grid = {"C": [0.3, 3.0], "gamma": [0.01, 0.05]}
    best_ours, best_theirs = _compare_grids(
        ours,
        theirs,
        {f"svmclassifier__{k}": v for k, v in grid.items()},
        {f"svc__{k}": v for k, v in grid.items()},
        X,
        y,
    )
    assert np.mean(best_ours.predict(X) == best_theirs.predict(X)) >= 0.99
    if name == "breast_cancer":  # binary: the same decision function
        np.testing.assert_allclose(
            best_ours.decision_function(X), best_theirs.decision_function(X), atol=1e-3
        )


@pytest.mark.parametrize("name", ["breast_cancer", "digits"])
def test_grid_search_matches_linear_svc(name):
    X, y = _data(name)
    ours = make_pipeline(
        StandardScaler(),
        SVMClassifier(
            kernel="linear", loss="squared_hinge", bias="regularized", multiclass="ovr", tol=1e-9
        ),
    )
    theirs = make_pipeline(StandardScaler(), LinearSVC(tol=1e-9, max_iter=200_000))
    best_ours, best_theirs = _compare_grids(
        ours, theirs, {"svmclassifier__C": [0.01, 1.0]}, {"linearsvc__C": [0.01, 1.0]}, X, y
    )
    assert np.mean(best_ours.predict(X) == best_theirs.predict(X)) >= 0.99
    np.testing.assert_allclose(
        best_ours.decision_function(X), best_theirs.decision_function(X), atol=1e-3
    )


# ---- labels, weights, warm starts, warnings ---------------------------------------------------
X_BC, Y_BC = load_breast_cancer(return_X_y=True)
X_BC = StandardScaler().fit_transform(X_BC)[:200]
Y_BC = Y_BC[:200]


@pytest.mark.parametrize(
    "labels",
    [
        np.array(["malignant", "benign"]),
        np.array([1, 2]),
        np.array([-7, 3]),
        np.array([True, False]),
    ],
    ids=["strings", "one-two", "negative", "bools"],
)
def test_labels_of_any_type(labels):
    y = labels[Y_BC]
    model = SVMClassifier(kernel="linear", bias="regularized").fit(X_BC, y)
    assert set(model.classes_) == set(labels)
    assert model.predict(X_BC).dtype == y.dtype
    assert model.score(X_BC, y) >= 0.95
    # the positive class of decision_function is classes_[1], as in scikit-learn
    pos = model.decision_function(X_BC) > 0
    assert np.all(model.predict(X_BC)[pos] == model.classes_[1])


def test_class_weight_balanced_is_the_same_as_explicit_weights():
    from sklearn.utils.class_weight import compute_sample_weight

    y = Y_BC
    balanced = SVMClassifier(kernel="linear", solver="clarabel", class_weight="balanced")
    explicit = SVMClassifier(kernel="linear", solver="clarabel")
    balanced.fit(X_BC, y)
    explicit.fit(X_BC, y, sample_weight=compute_sample_weight("balanced", y))
    np.testing.assert_allclose(balanced.coef_, explicit.coef_, rtol=1e-6, atol=1e-8)
    unweighted = SVMClassifier(kernel="linear", solver="clarabel").fit(X_BC, y)
    assert not np.allclose(balanced.coef_, unweighted.coef_, rtol=1e-3)


@pytest.mark.parametrize("sparse_input", [False, True], ids=["dense", "csr"])
def test_weights_of_two_are_the_rows_twice(sparse_input):
    """``gamma="scale"`` weighs every row by its weight: weights of 2 give the γ and the model of
    the duplicated rows; without weights, γ is SVC's."""
    from scipy import sparse

    X, y = X_BC[:120].copy(), Y_BC[:120]
    if sparse_input:
        X[np.abs(X) < 0.5] = 0.0
        X = sparse.csr_matrix(X)
    counts = np.tile([1, 2, 1], 40)
    rows = np.repeat(np.arange(120), counts)
    common = dict(kernel="rbf", solver="smo", tol=1e-10)
    weighted = SVMClassifier(**common).fit(X, y, sample_weight=counts.astype(float))
    repeated = SVMClassifier(**common).fit(X[rows], y[rows])
    assert weighted.model_.gamma == pytest.approx(repeated.model_.gamma, rel=1e-12)
    np.testing.assert_allclose(
        weighted.decision_function(X_BC), repeated.decision_function(X_BC), rtol=0, atol=1e-5
    )
    unweighted = SVMClassifier(**common).fit(X, y)
    assert unweighted.model_.gamma == SVC(gamma="scale").fit(X, y)._gamma
    assert unweighted.model_.gamma != pytest.approx(weighted.model_.gamma, rel=1e-3)


def test_warm_start_refits_from_the_previous_solution():
    # dcd starts from α (auto picks the barrier here, which starts itself and says so)
    common = dict(kernel="linear", bias="regularized", tol=1e-8, random_state=0, solver="dcd")
    model = SVMClassifier(warm_start=True, **common)
    cold = model.fit(X_BC, Y_BC).result_
    model.set_params(C=1.05)
    warm = model.fit(X_BC, Y_BC).result_
    again = SVMClassifier(C=1.05, **common).fit(X_BC, Y_BC)
    assert warm.status.value == "optimal" and cold.status.value == "optimal"
    assert abs(warm.primal - again.result_.primal) <= 1e-7 * abs(again.result_.primal)
    assert warm.iterations < again.result_.iterations


def test_a_convergence_warning_on_max_iter_only():
    with pytest.warns(SVMConvergenceWarning, match="max_iter"):
        SVMClassifier(kernel="linear", bias="regularized", max_iter=1, tol=1e-12).fit(X_BC, Y_BC)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SVMConvergenceWarning)
        SVMClassifier(kernel="linear", bias="regularized").fit(X_BC, Y_BC)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"solver": "nosuch"}, "unknown solver 'nosuch'"),
        ({"kernel": "cubic"}, "kernel"),
        ({"C": -1.0}, "C"),
        ({"solver": "dcd", "kernel": "linear", "bias": "free"}, "'dcd' cannot fit"),
        (
            {"solver": "smo", "kernel": "linear", "multiclass": "crammer_singer", "bias": "none"},
            "Crammer",
        ),
    ],
)
def test_bad_parameters_are_clear_errors(params, match):
    X, y = load_digits(n_class=3, return_X_y=True)
    with pytest.raises(ValueError, match=match):
        SVMClassifier(**params).fit(X[:90], y[:90])


def test_predict_refuses_the_wrong_number_of_features():
    model = SVMClassifier(kernel="linear", bias="regularized").fit(X_BC, Y_BC)
    with pytest.raises(ValueError, match="features"):
        model.predict(X_BC[:, :5])


def test_pickle_round_trip_and_probabilities():
    model = SVMClassifier().fit(X_BC, Y_BC)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict(X_BC), model.predict(X_BC))
    calibrated = CalibratedClassifierCV(SVMClassifier(), cv=3).fit(X_BC, Y_BC)
    proba = calibrated.predict_proba(X_BC)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(proba.argmax(axis=1) == Y_BC) >= 0.95


@pytest.mark.parametrize("data", ["breast_cancer", "iris"])
def test_probabilities_by_calibration_as_scikit_learn_recommends(data):
    """SVC(probability=True) is deprecated for CalibratedClassifierCV(..., ensemble=False): the
    same route gives probabilities over SVMClassifier, and the same ones as over SVC."""
    X, y = (load_breast_cancer if data == "breast_cancer" else load_iris)(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    ours = CalibratedClassifierCV(SVMClassifier(tol=1e-8), cv=folds, ensemble=False).fit(X, y)
    theirs = CalibratedClassifierCV(SVC(tol=1e-8), cv=folds, ensemble=False).fit(X, y)
    proba = ours.predict_proba(X)
    assert proba.shape == (len(y), np.unique(y).size)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # the same decision values as SVC's (binary, or one-vs-one with SVC's "ovr" transform)
    np.testing.assert_allclose(proba, theirs.predict_proba(X), atol=2e-3)
    assert np.mean(ours.predict(X) == y) >= 0.9
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.95


def test_cross_val_score_and_the_certified_result():
    scores = cross_val_score(SVMClassifier(kernel="rbf"), X_BC, Y_BC, cv=3)
    assert scores.mean() >= 0.9
    model = SVMClassifier(kernel="rbf").fit(X_BC, Y_BC)
    assert model.result_.certified and model.result_.rel_gap <= 1e-6
    assert model.support_vectors_.shape[0] == model.support_.size == model.dual_coef_.shape[1]
    assert model.n_support_.sum() == model.support_.size


# ---- saved and loaded with their labels (svmbench.save_model / load_model) --------------------
BC_NAMES = load_breast_cancer().target_names  # 0: "malignant", 1: "benign"


def _round_trip(model, path):
    svmbench.save_model(model, path)
    return svmbench.load_model(path)


@pytest.mark.parametrize(
    ("labels", "params"),
    [
        (BC_NAMES, {"kernel": "linear", "bias": "regularized"}),
        (BC_NAMES, {"kernel": "rbf"}),
        (np.array([3, 7]), {"kernel": "linear", "bias": "regularized"}),
        (np.array([3, 7], dtype=np.int32), {"kernel": "rbf"}),
        (np.array([False, True]), {"kernel": "linear", "bias": "regularized"}),
        (np.array([-1.0, 2.0]), {"kernel": "poly", "degree": 2}),  # scikit-learn: integral floats
        (np.array(["benign", "malignant"], dtype=object),
         {"kernel": "linear", "bias": "regularized"}),
        (BC_NAMES, {"kernel": "linear", "bias": "regularized", "multiclass": "crammer_singer",
                    "solver": "cs_dcd"}),
    ],
    ids=["str-linear", "str-rbf", "int", "int32-rbf", "bool", "float-poly", "object-str",
         "str-crammer-singer-two-classes"],
)  # fmt: skip
def test_a_saved_estimator_predicts_its_original_labels(tmp_path, labels, params):
    y = labels[Y_BC]
    model = SVMClassifier(**params).fit(X_BC, y)
    loaded = _round_trip(model, tmp_path / "model.npz")
    assert isinstance(loaded, LoadedClassifier)
    assert loaded.classes_.tolist() == model.classes_.tolist()
    kind = "U" if model.classes_.dtype.kind == "O" else model.classes_.dtype.kind
    assert loaded.classes_.dtype.kind == kind
    pred = loaded.predict(X_BC)
    assert pred.dtype.kind == kind and pred.tolist() == model.predict(X_BC).tolist()
    assert set(pred.tolist()) == set(labels.tolist())  # both classes, not ±1
    np.testing.assert_array_equal(loaded.decision_function(X_BC), model.decision_function(X_BC))
    assert loaded.n_features_in_ == model.n_features_in_ == X_BC.shape[1]
    assert not hasattr(loaded, "feature_names_in_")
    assert type(loaded.model_) is type(model.model_)
    if params["kernel"] != "linear":  # the kernel and its parameters, gamma resolved
        assert loaded.model_.kernel_params == model.model_.kernel_params
        assert loaded.model_.kernel_params["kernel"] == params["kernel"]
    with pytest.raises(ValueError, match="X has 5 features, but LoadedClassifier is expecting 30"):
        loaded.predict(X_BC[:, :5])


@pytest.mark.parametrize(
    "params",
    [
        {"kernel": "linear", "bias": "regularized", "multiclass": "ovr"},
        {"kernel": "rbf", "multiclass": "ovo"},
        {"kernel": "linear", "bias": "regularized", "multiclass": "crammer_singer",
         "solver": "cs_dcd"},
    ],
    ids=["ovr-linear", "ovo-rbf", "crammer_singer"],
)  # fmt: skip
def test_a_saved_multiclass_estimator_predicts_iris_names(tmp_path, params):
    iris = load_iris()
    y = iris.target_names[iris.target]
    model = SVMClassifier(**params).fit(iris.data, y)
    loaded = _round_trip(model, tmp_path / "iris.npz")
    assert type(loaded.model_) is type(model.model_)
    assert loaded.classes_.tolist() == ["setosa", "versicolor", "virginica"]
    pred = loaded.predict(iris.data)
    assert pred.tolist() == model.predict(iris.data).tolist()
    assert set(pred.tolist()) == set(iris.target_names.tolist())
    assert np.mean(pred == y) >= 0.9
    # the loaded classifier gives the estimator's scores (SVC's "ovr" values for one-vs-one)
    np.testing.assert_array_equal(
        loaded.decision_function(iris.data), model.decision_function(iris.data)
    )


def test_feature_names_from_a_data_frame_are_saved_and_checked(tmp_path):
    pd = pytest.importorskip("pandas")
    data = load_breast_cancer(as_frame=True)
    X = data.data.iloc[:200]
    y = BC_NAMES[data.target.iloc[:200].to_numpy()]
    clf = SVMClassifier(kernel="linear", bias="regularized").fit(X, y)
    loaded = _round_trip(clf, tmp_path / "named.npz")
    assert loaded.feature_names_in_.tolist() == list(X.columns)
    assert loaded.feature_names_in_.dtype == object
    assert loaded.predict(X).tolist() == clf.predict(X).tolist()
    renamed = X.rename(columns={X.columns[0]: "not a feature"})
    with pytest.raises(ValueError, match="feature names should match.*not a feature"):
        loaded.predict(renamed)
    with pytest.raises(ValueError, match="feature names should match.*another order"):
        loaded.predict(X[X.columns[::-1]])
    assert isinstance(X, pd.DataFrame)


def test_a_cross_validated_estimator_saves_its_best_estimator(tmp_path):
    y = BC_NAMES[Y_BC]
    cv = SVMClassifierCV(Cs=[0.1, 1.0], cv=3, kernel="linear", bias="regularized").fit(X_BC, y)
    loaded = _round_trip(cv, tmp_path / "cv.npz")
    assert loaded.predict(X_BC).tolist() == cv.predict(X_BC).tolist()
    assert loaded.classes_.tolist() == ["benign", "malignant"]


def _objects(*values) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        array[i] = v
    return array


def test_labels_a_file_cannot_hold_are_refused(tmp_path):
    path = tmp_path / "model.npz"
    with pytest.raises(NotFittedError, match="not fitted"):
        svmbench.save_model(SVMClassifier(), path)
    with pytest.raises(NotFittedError, match="not fitted"):
        svmbench.save_model(SVMClassifierCV(), path)
    pipe = make_pipeline(StandardScaler(), SVMClassifier(kernel="linear", bias="regularized"))
    with pytest.raises(TypeError, match="got Pipeline .of a pipeline, save the classifier"):
        svmbench.save_model(pipe.fit(X_BC, Y_BC), path)
    loaded = _round_trip(pipe[-1], path)
    assert loaded.predict(pipe[:-1].transform(X_BC)).tolist() == pipe.predict(X_BC).tolist()
    path.unlink()
    model = SVMClassifier(kernel="linear", bias="regularized").fit(X_BC, Y_BC)
    for classes, error, match in [
        (_objects((0, 1), (1, 0)), TypeError, "label \\(0, 1\\)"),
        (np.array([object(), object()], dtype=object), TypeError, "object"),
        (np.array([0, "a"], dtype=object), TypeError, "mixed types"),
        (np.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]"), TypeError, "datetime64"),
        (np.array([b"no", b"yes"]), TypeError, "dtype \\|S3"),
    ]:
        model.classes_ = classes
        with pytest.raises(error, match=match):
            svmbench.save_model(model, path)
        assert not path.exists()


def test_a_saved_estimator_predicts_strings_in_a_new_process(tmp_path):
    y = BC_NAMES[Y_BC]
    model = SVMClassifier(kernel="rbf").fit(X_BC, y)
    svmbench.save_model(model, tmp_path / "model.npz")
    np.save(tmp_path / "X.npy", X_BC)
    code = (
        "import numpy as np, svmbench\n"
        "clf = svmbench.load_model('model.npz')\n"
        "pred = clf.predict(np.load('X.npy'))\n"
        "np.save('pred.npy', pred, allow_pickle=False)\n"
        "print(type(clf).__name__, pred.dtype.kind, pred[0])\n"
    )
    done = run_python(code, tmp_path, timeout=300, OPENBLAS_NUM_THREADS="1")
    assert done.returncode == 0, done.stderr
    pred = np.load(tmp_path / "pred.npy", allow_pickle=False)
    assert pred.dtype.kind == "U"
    assert pred.tolist() == model.predict(X_BC).tolist()
    assert set(pred.tolist()) == {"malignant", "benign"}
    assert done.stdout.split()[:2] == ["LoadedClassifier", "U"]
    assert done.stdout.split()[2] in ("malignant", "benign")


def test_numerical_error_is_loud_and_auto_goes_on():
    from sklearn.datasets import make_classification

    from svmbench.solvers import registry
    from svmbench.solvers.base import Status

    X, y = make_classification(random_state=42)
    # at C = 1e10 the first method of auto's choice fails numerically; auto goes on and certifies
    with warnings.catch_warnings():
        warnings.simplefilter("error", SVMConvergenceWarning)
        svm = SVMClassifier(C=1e10, tol=1e-6).fit(X, y)
    assert svm.result_.status is Status.OPTIMAL and svm.result_.rel_gap <= 1e-6
    tried = svm.result_.info["auto"]["tried"]
    assert all(registry.solver_class(n) for n in tried)


def test_a_numerical_error_with_a_certified_point_warns_and_one_without_raises(monkeypatch):
    from dataclasses import replace

    from svmbench import SVMNumericalWarning
    from svmbench.solvers.base import Solver, Status

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    original = Solver.solve

    def failing(self, problem, **kwargs):
        result = original(self, problem, **kwargs)
        return replace(result, status=Status.NUMERICAL_ERROR, message="forced for the test")

    monkeypatch.setattr(Solver, "solve", failing)
    with pytest.warns(SVMNumericalWarning, match="forced for the test"):
        svm = SVMClassifier(kernel="linear", solver="clarabel").fit(X, y)
    assert svm.score(X, y) > 0.95  # the best certified point is kept

    def hopeless(self, problem, **kwargs):
        result = original(self, problem, **kwargs)
        return replace(result, status=Status.NUMERICAL_ERROR, certified=False, rel_gap=np.inf)

    monkeypatch.setattr(Solver, "solve", hopeless)
    with pytest.raises(ValueError, match="not finite.*no certified point"):
        SVMClassifier(kernel="linear", solver="clarabel").fit(X, y)


def test_a_reduction_with_certified_subproblems_warns_rather_than_raises(monkeypatch):
    from dataclasses import replace

    from sklearn.datasets import load_iris

    from svmbench import SVMNumericalWarning
    from svmbench.solvers.base import Solver, Status

    X, y = load_iris(return_X_y=True)
    original = Solver.solve

    def failing(self, problem, **kwargs):
        result = original(self, problem, **kwargs)
        if self.name == "ovo":  # certified subproblems, then a numerical error
            assert result.certified
            return replace(result, status=Status.NUMERICAL_ERROR, message="forced for the test")
        return result

    monkeypatch.setattr(Solver, "solve", failing)
    with pytest.warns(SVMNumericalWarning, match="forced for the test"):
        svm = SVMClassifier(kernel="linear", multiclass="ovo", solver="clarabel").fit(X, y)
    assert svm.score(X, y) > 0.9


@pytest.mark.parametrize("solver", ["barrier", "smo"])
def test_support_layout_is_svcs(solver):
    """Support vectors grouped by class in ``classes_`` order and counted by their labels, as
    SVC lays them out; labels of any type."""
    X = StandardScaler().fit_transform(X_BC)
    labels = np.where(Y_BC == 1, "benign", "malignant")  # classes_[0] is the positive class of y
    model = SVMClassifier(kernel="rbf", solver=solver, tol=1e-8).fit(X, labels)
    reference = SVC(kernel="rbf", tol=1e-8).fit(X, labels)
    np.testing.assert_array_equal(model.classes_, reference.classes_)
    sv_labels = labels[model.support_]
    index = np.searchsorted(model.classes_, sv_labels)
    assert np.all(np.diff(index) >= 0)
    np.testing.assert_array_equal(model.n_support_, np.bincount(index, minlength=2))
    assert np.abs(model.n_support_ - reference.n_support_).sum() <= 2
    # dual_coef_ in the same order: α_i y_i, negative for classes_[0]
    np.testing.assert_array_equal(model.dual_coef_[0] < 0, index == 0)
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])


# ---- SVC's fitted attributes and decision values (svmbench.svc_layout) -----------------------
IRIS_X = StandardScaler().fit_transform(load_iris().data)
IRIS_Y = load_iris().target
#: Points around the data, many near the pairs' boundaries (three-way vote ties included).
CLOUD = np.random.default_rng(0).normal(size=(2000, 4)) * 1.5


def _kernel(kernel, A, B, gamma):
    from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

    if kernel == "rbf":
        return rbf_kernel(A, B, gamma=gamma)
    return polynomial_kernel(A, B, degree=3, gamma=gamma, coef0=0.0)


@pytest.mark.parametrize("solver", ["smo", "clarabel"])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_one_vs_one_attributes_and_decision_values_are_svcs(kernel, solver):
    from svmbench.problems.models import OneVsOneModel

    common = dict(kernel=kernel, gamma=0.5, C=1.0)
    ours = SVMClassifier(solver=solver, tol=1e-8, **common).fit(IRIS_X, IRIS_Y)
    svc = SVC(tol=1e-8, **common).fit(IRIS_X, IRIS_Y)
    assert isinstance(ours.model_, OneVsOneModel)  # the default for a kernel, as SVC
    np.testing.assert_array_equal(ours.support_, svc.support_)
    np.testing.assert_array_equal(ours.n_support_, svc.n_support_)
    np.testing.assert_array_equal(ours.support_vectors_, svc.support_vectors_)
    assert ours.dual_coef_.shape == svc.dual_coef_.shape == (2, ours.support_.size)
    np.testing.assert_allclose(ours.dual_coef_, svc.dual_coef_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, rtol=0, atol=1e-5)
    assert ours.n_iter_.shape == svc.n_iter_.shape == (3,) and np.all(ours.n_iter_ >= 1)
    assert ours.fit_status_ == svc.fit_status_ == 0
    assert ours.shape_fit_ == svc.shape_fit_ == IRIS_X.shape
    # LIBSVM's layout read back by hand: pair (i, j) takes row j−1 of class i's vectors and
    # row i of class j's, and reproduces the pair values of decision_function_shape="ovo"
    ours.set_params(decision_function_shape="ovo")
    pair_values = ours.decision_function(CLOUD)
    K = _kernel(kernel, ours.support_vectors_, CLOUD, 0.5)
    start = np.concatenate([[0], np.cumsum(ours.n_support_)])
    for p, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
        f = ours.dual_coef_[j - 1, si] @ K[si] + ours.dual_coef_[i, sj] @ K[sj]
        np.testing.assert_allclose(pair_values[:, p], f + ours.intercept_[p], atol=1e-10)
    svc.set_params(decision_function_shape="ovo")
    np.testing.assert_allclose(pair_values, svc.decision_function(CLOUD), rtol=0, atol=1e-5)
    for model in (ours, svc):
        model.set_params(decision_function_shape="ovr")
    F = ours.decision_function(CLOUD)
    np.testing.assert_allclose(F, svc.decision_function(CLOUD), rtol=0, atol=1e-5)
    np.testing.assert_array_equal(ours.predict(CLOUD), svc.predict(CLOUD))
    np.testing.assert_array_equal(ours.predict(IRIS_X), svc.predict(IRIS_X))


@pytest.mark.parametrize("solver", ["smo", "clarabel"])
def test_binary_attributes_are_svcs_with_its_signs(solver):
    ours = SVMClassifier(kernel="rbf", gamma=0.05, solver=solver, tol=1e-8).fit(X_BC, Y_BC)
    svc = SVC(kernel="rbf", gamma=0.05, tol=1e-8).fit(X_BC, Y_BC)
    np.testing.assert_array_equal(ours.support_, svc.support_)
    np.testing.assert_array_equal(ours.n_support_, svc.n_support_)
    np.testing.assert_allclose(ours.dual_coef_, svc.dual_coef_, rtol=0, atol=1e-5)
    assert ours.intercept_.shape == svc.intercept_.shape == (1,)
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, rtol=0, atol=1e-5)
    # dual_coef_ K(SV, x) + intercept_ is the decision function, positive for classes_[1]
    f = ours.dual_coef_ @ _kernel("rbf", ours.support_vectors_, X_BC, 0.05) + ours.intercept_
    np.testing.assert_allclose(f[0], ours.decision_function(X_BC), atol=1e-10)
    np.testing.assert_allclose(ours.decision_function(X_BC), svc.decision_function(X_BC), atol=1e-5)
    assert ours.n_iter_.shape == svc.n_iter_.shape == (1,)
    assert ours.fit_status_ == 0 and ours.shape_fit_ == X_BC.shape
    np.testing.assert_array_equal(ours.class_weight_, svc.class_weight_)


def test_linear_coef_is_svcs_read_only_and_sparse_after_a_sparse_fit():
    from scipy import sparse
    from sklearn.base import clone

    from svmbench.problems.models import KernelModel, LinearModel

    common = dict(kernel="linear", C=0.1, tol=1e-8)
    smo = SVMClassifier(solver="smo", **common).fit(X_BC, Y_BC)
    clarabel = SVMClassifier(solver="clarabel", **common).fit(X_BC, Y_BC)
    svc = SVC(**common).fit(X_BC, Y_BC)
    assert isinstance(smo.model_, KernelModel) and isinstance(clarabel.model_, LinearModel)
    assert smo.coef_.shape == clarabel.coef_.shape == svc.coef_.shape == (1, X_BC.shape[1])
    np.testing.assert_allclose(smo.coef_, clarabel.coef_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(smo.coef_, svc.coef_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(smo.intercept_, svc.intercept_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(smo.decision_function(X_BC), X_BC @ smo.coef_[0] + smo.intercept_)
    for model in (smo, clarabel):
        with pytest.raises(AttributeError):
            model.coef_ = np.zeros((1, X_BC.shape[1]))
        assert not model.coef_.flags.writeable
    assert not hasattr(clone(smo), "coef_")  # a property of the fit, not a parameter
    # a sparse fit gives SVC's sparse dual_coef_ and coef_
    Xs = sparse.csr_matrix(X_BC)
    smo_sparse = SVMClassifier(solver="smo", **common).fit(Xs, Y_BC)
    svc_sparse = SVC(**common).fit(Xs, Y_BC)
    for name in ("coef_", "dual_coef_", "support_vectors_"):
        assert sparse.issparse(getattr(smo_sparse, name)) and sparse.issparse(
            getattr(svc_sparse, name)
        )
    np.testing.assert_allclose(smo_sparse.coef_.toarray(), smo.coef_, atol=1e-10)
    # LinearSVC's sparsify/densify: the format of coef_, predictions unchanged; a refit resets
    before = clarabel.predict(X_BC)
    assert sparse.issparse(clarabel.sparsify().coef_)
    np.testing.assert_array_equal(clarabel.coef_.toarray(), clarabel.densify().coef_)
    assert isinstance(clarabel.densify().coef_, np.ndarray)
    assert sparse.issparse(clarabel.sparsify().coef_)
    np.testing.assert_array_equal(clarabel.predict(X_BC), before)
    assert isinstance(clarabel.fit(X_BC, Y_BC).coef_, np.ndarray)
    rbf = SVMClassifier(kernel="rbf", solver="smo").fit(X_BC, Y_BC)
    with pytest.raises(AttributeError, match="linear kernel"):
        rbf.coef_  # noqa: B018
    assert not hasattr(rbf, "sparsify") and not hasattr(rbf, "densify")


def test_a_cross_validated_estimator_has_the_coef_of_its_refit():
    cv = SVMClassifierCV(Cs=[0.1, 1.0], cv=3, kernel="linear", bias="regularized").fit(X_BC, Y_BC)
    np.testing.assert_array_equal(cv.coef_, cv.best_estimator_.coef_)
    np.testing.assert_array_equal(cv.intercept_, cv.best_estimator_.intercept_)


def test_class_weight_n_iter_and_fit_status_are_svcs():
    from svmbench.problems.models import OneVsRestModel

    X, y = IRIS_X[:120], IRIS_Y[:120]  # 50, 50 and 20 examples
    for class_weight in ("balanced", {1: 3.0}, None):
        ours = SVMClassifier(kernel="rbf", solver="smo", class_weight=class_weight).fit(X, y)
        svc = SVC(class_weight=class_weight).fit(X, y)
        assert ours.class_weight_.shape == (3,)
        np.testing.assert_allclose(ours.class_weight_, svc.class_weight_, rtol=1e-12)
        assert ours.n_iter_.shape == svc.n_iter_.shape
    assert not np.allclose(
        SVMClassifier(class_weight="balanced", solver="smo").fit(X, y).class_weight_, 1.0
    )
    # LinearSVC's one-vs-rest (a regularized bias): one int as LinearSVC, the largest count
    linear = SVMClassifier(kernel="linear", bias="regularized", solver="clarabel").fit(X, y)
    assert isinstance(linear.model_, OneVsRestModel) and isinstance(linear.n_iter_, int)
    assert linear.n_iter_ == max(linear.result_.info["binary_iterations"]) >= 1
    assert linear.coef_.shape == (3, X.shape[1]) and linear.intercept_.shape == (3,)
    with pytest.warns(SVMConvergenceWarning):
        stopped = SVMClassifier(kernel="rbf", solver="smo", max_iter=1, tol=1e-12).fit(X_BC, Y_BC)
    assert stopped.result_.status.value == "max_iter" and stopped.fit_status_ == 1


def test_the_default_multiclass_strategy_follows_the_class_it_replaces():
    from svmbench.problems.models import OneVsOneModel, OneVsRestModel

    kernel = SVMClassifier(kernel="rbf", solver="smo").fit(IRIS_X, IRIS_Y)
    assert isinstance(kernel.model_, OneVsOneModel)  # SVC's
    # the linear kernel with SVC's hinge and free bias is SVC(kernel="linear")'s fit
    svc_linear = SVMClassifier(kernel="linear", solver="clarabel").fit(IRIS_X, IRIS_Y)
    assert isinstance(svc_linear.model_, OneVsOneModel) and svc_linear.n_support_.shape == (3,)
    svc = SVC(kernel="linear", tol=1e-8).fit(IRIS_X, IRIS_Y)
    np.testing.assert_array_equal(svc_linear.n_support_, svc.n_support_)
    assert np.mean(svc_linear.predict(CLOUD) != svc.predict(CLOUD)) <= 0.005  # boundary points
    for other in ({"loss": "squared_hinge"}, {"bias": "regularized"}):  # LinearSVC's
        linear = SVMClassifier(kernel="linear", solver="clarabel", **other).fit(IRIS_X, IRIS_Y)
        assert isinstance(linear.model_, OneVsRestModel)
    with pytest.raises(ValueError, match="one-vs-one"):
        linear.set_params(decision_function_shape="ovo").decision_function(IRIS_X)
    # asking for SVC's pair values trains SVC's pairs, and gives SVC's linear coef_
    pairs = SVMClassifier(kernel="linear", solver="smo", tol=1e-8, decision_function_shape="ovo")
    pairs.fit(IRIS_X, IRIS_Y)
    svc = SVC(kernel="linear", tol=1e-8, decision_function_shape="ovo").fit(IRIS_X, IRIS_Y)
    assert isinstance(pairs.model_, OneVsOneModel)
    assert pairs.coef_.shape == svc.coef_.shape == (3, IRIS_X.shape[1])
    np.testing.assert_allclose(pairs.coef_, svc.coef_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(pairs.intercept_, svc.intercept_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(
        pairs.decision_function(CLOUD), svc.decision_function(CLOUD), rtol=0, atol=1e-5
    )


def test_break_ties_uses_the_confidences_as_svc():
    ours = SVMClassifier(kernel="rbf", gamma=0.5, solver="smo", tol=1e-8).fit(IRIS_X, IRIS_Y)
    svc = SVC(gamma=0.5, tol=1e-8).fit(IRIS_X, IRIS_Y)
    votes = np.floor(ours.decision_function(CLOUD) + 1 / 3)
    tie = np.all(votes == 1, axis=1)  # each class wins one pair
    assert tie.sum() >= 5
    plain = ours.predict(CLOUD)
    assert np.all(plain[tie] == 0)  # LIBSVM's rule: the first class
    ours.set_params(break_ties=True)
    broken = ours.predict(CLOUD)
    assert np.any(broken[tie] != 0)
    np.testing.assert_array_equal(broken[~tie], plain[~tie])
    np.testing.assert_array_equal(broken, np.argmax(ours.decision_function(CLOUD), axis=1))
    np.testing.assert_array_equal(plain, svc.predict(CLOUD))
    np.testing.assert_array_equal(broken, svc.set_params(break_ties=True).predict(CLOUD))
    with pytest.raises(ValueError, match="break_ties must be False"):
        ours.set_params(decision_function_shape="ovo").predict(CLOUD)


def test_one_vs_one_decision_values_grow_with_the_distance():
    """Four classes in the quadrants: points at distances 5 and 10 along the first quadrant's
    diagonal win every pair; SVC's values tell them apart by their confidences, votes alone
    do not."""
    rng = np.random.default_rng(0)
    centers = 2.0 * np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]])
    X = np.vstack([c + 0.5 * rng.normal(size=(20, 2)) for c in centers])
    y = np.repeat(np.arange(4), 20)
    P = np.array([[5.0, 5.0], [10.0, 10.0]]) / np.sqrt(2.0)
    ours = SVMClassifier(kernel="linear", multiclass="ovo", solver="smo", tol=1e-8).fit(X, y)
    F = ours.decision_function(P)
    np.testing.assert_array_equal(
        ours.model_.decision_function(P)[0], ours.model_.decision_function(P)[1]
    )
    assert np.all(np.argmax(F, axis=1) == 0) and np.all(ours.predict(P) == 0)
    assert not np.allclose(F[0], F[1]) and F[1, 0] > F[0, 0]
    svc = SVC(kernel="linear", tol=1e-8).fit(X, y)
    np.testing.assert_allclose(F, svc.decision_function(P), rtol=0, atol=1e-5)


def test_svc_values_of_a_model_holding_its_pairs_in_another_order():
    from svmbench.problems import ovo_values
    from svmbench.problems.models import LinearModel, OneVsOneModel

    rng = np.random.default_rng(1)
    ws, bs = rng.normal(size=(3, 2)), rng.normal(size=3)
    models = tuple(LinearModel(w, b) for w, b in zip(ws, bs, strict=True))
    canonical = OneVsOneModel(models, ((0, 1), (0, 2), (1, 2)), 3)
    # (2, 1) is positive for class 2: the negated model of the pair (1, 2)
    swapped = OneVsOneModel(
        (LinearModel(-ws[2], -bs[2]), LinearModel(-ws[0], -bs[0]), models[1]),
        ((2, 1), (1, 0), (0, 2)),
        3,
    )
    Z = rng.normal(size=(50, 2))
    np.testing.assert_allclose(canonical.pair_decision_function(Z)[:, 0], Z @ ws[0] + bs[0])
    np.testing.assert_allclose(
        ovo_values.pair_values(swapped, Z), ovo_values.pair_values(canonical, Z), atol=1e-12
    )
    with pytest.raises(ValueError, match="every pair"):
        ovo_values.pair_values(OneVsOneModel(models[:2], ((0, 1), (0, 2)), 3), Z)
    # SVC's transform by hand: (0, 1) = 0.5 votes 0, (0, 2) = −0.2 votes 2, (1, 2) = 1 votes 1;
    # summed confidences 0.3, 0.5, −0.8
    F = ovo_values.ovr_from_pairs(np.array([[0.5, -0.2, 1.0]]), 3)
    expected = [1 + 0.3 / (3 * 1.3), 1 + 0.5 / (3 * 1.5), 1 - 0.8 / (3 * 1.8)]
    np.testing.assert_allclose(F[0], expected, rtol=1e-12)


def test_a_sparse_one_vs_one_fit_has_svcs_sparse_layout():
    from scipy import sparse

    Xs = sparse.csr_matrix(IRIS_X)
    ours = SVMClassifier(kernel="rbf", gamma=0.5, solver="smo", tol=1e-8).fit(Xs, IRIS_Y)
    svc = SVC(gamma=0.5, tol=1e-8).fit(Xs, IRIS_Y)
    assert sparse.issparse(ours.dual_coef_) and sparse.issparse(svc.dual_coef_)
    assert sparse.issparse(ours.support_vectors_)
    np.testing.assert_array_equal(ours.support_, svc.support_)
    np.testing.assert_allclose(ours.dual_coef_.toarray(), svc.dual_coef_.toarray(), atol=1e-5)
