"""The estimator never answers another question than the one asked: what it cannot solve as
asked it refuses by name, and a time limit ends in a warning and a model (issue 26)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris

from svmbench import SVMClassifier, SVMConvergenceWarning
from svmbench.solvers import registry


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def test_a_kernel_crammer_singer_is_refused_not_fitted_linear(iris):
    with pytest.raises(ValueError, match="crammer_singer.*linear kernel only.*rbf"):
        SVMClassifier(kernel="rbf", multiclass="crammer_singer", bias="regularized").fit(*iris)


def test_a_reduction_asked_for_crammer_singer_is_refused(iris):
    with pytest.raises(ValueError, match="'ovr' is a reduction.*not a Crammer–Singer solver"):
        SVMClassifier(
            kernel="linear", multiclass="crammer_singer", solver="ovr", bias="regularized"
        ).fit(*iris)


def test_an_option_the_solver_does_not_take_is_refused_by_name(iris):
    X, y = iris
    if "libsvm" not in registry.available_anchors():
        pytest.skip(registry.missing_reason("libsvm"))
    with pytest.raises(ValueError, match="max_iter=100: solver 'libsvm' takes no max_iter"):
        SVMClassifier(solver="libsvm", max_iter=100).fit(X[:100], y[:100])
    clf = SVMClassifier(solver="libsvm").fit(X, y)  # three classes through the reduction
    assert clf.score(X, y) > 0.9 and clf.n_support_.shape == (3,)


def test_an_accepted_option_is_known_through_the_bases():
    assert registry.accepts_option(registry.solver_class("smo"), "max_iter")
    assert registry.accepts_option(registry.solver_class("ovo"), "time_limit")


def test_a_time_limit_in_a_reduction_warns_and_keeps_a_model(iris):
    X, y = iris
    with pytest.warns(SVMConvergenceWarning, match="time_limit.*binary problems never ran"):
        clf = SVMClassifier(time_limit=1e-9).fit(X, y)
    assert clf.result_.status.value == "time_limit"
    unsolved = clf.result_.info["unsolved_pairs"]
    assert len(unsolved) == 2  # the first pair runs, then the limit is checked
    assert set(clf.predict(X)) <= set(clf.classes_)
    assert clf.n_iter_.shape == (3,) and clf.n_iter_[1:].tolist() == [0, 0]


@pytest.mark.parametrize("bias_scale", [1e300, 1e-300])
def test_a_bias_scale_whose_square_overflows_is_refused_up_front(iris, bias_scale):
    X, y = iris
    with pytest.raises(ValueError, match="bias_scale must be in \\[1e-150, 1e\\+150\\]"):
        SVMClassifier(kernel="linear", bias="regularized", bias_scale=bias_scale).fit(X, y)
    with pytest.raises(ValueError, match="bias_scale must be in"):
        SVMClassifier(kernel="linear", bias="regularized", bias_scale=bias_scale).fit(
            X[:100], y[:100]
        )


def test_a_warm_start_whose_squares_overflow_is_refused():
    from svmbench.problems import SoftMarginPrimal

    X, y = load_iris(return_X_y=True)
    problem = SoftMarginPrimal(X[:100], np.where(y[:100] == 0, 1.0, -1.0), bias="regularized")
    with pytest.raises(ValueError, match="warm_start w must hold values of magnitude at most"):
        registry.get("dcd").solve(problem, warm_start=(np.full(4, 1e200), 1e200))
    with pytest.raises(ValueError, match="solver 'barrier' takes no warm start"):
        registry.get("barrier").solve(problem, warm_start=np.zeros(100))


def test_a_free_bias_dual_below_the_barriers_range_goes_to_another_method():
    from svmbench.problems import SoftMarginDual

    X, y = load_iris(return_X_y=True)
    problem = SoftMarginDual(X[:100], np.where(y[:100] == 0, 1.0, -1.0), C=1e-300)
    why = registry.solver_class("barrier").unsupported_reason(problem)
    assert why is not None and "below 1e-150" in why
    result = registry.get("auto").solve(problem)
    assert result.status.value == "optimal" and result.certified


def test_a_solver_whose_memory_model_exceeds_the_machine_is_refused_before_allocating():
    from scipy import sparse

    from svmbench.problems import SoftMarginPrimal
    from svmbench.problems.untrusted import machine_memory

    if machine_memory() is None or machine_memory() > 2**40:
        pytest.skip("this system reports no physical memory, or more than 1 TiB")
    X = sparse.random(20, 50_000, density=1e-3, format="csr", random_state=0)
    problem = SoftMarginPrimal(X, np.tile([1.0, -1.0], 10))
    with pytest.raises(MemoryError, match="solver 'accpm' would need about .* GiB"):
        registry.get("accpm").solve(problem)


def test_a_point_certified_only_to_a_useless_gap_is_an_error_not_a_model():
    from dataclasses import replace

    from svmbench.problems import SoftMarginPrimal
    from svmbench.solve_outcome import solve_and_report
    from svmbench.solvers.base import Status

    problem = SoftMarginPrimal(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1.0, -1.0]))
    solved = registry.get("clarabel").solve(problem)

    class Broken:
        tol = 1e-6

        def solve(self, problem, warm_start=None):
            return replace(solved, status=Status.NUMERICAL_ERROR, rel_gap=2.0, message="x")

    with pytest.raises(ValueError, match="no certified point \\(relative gap 2"):
        solve_and_report(
            Broken(), problem, None, family="liblinear", max_iter=None, time_limit=None
        )


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_features_beyond_the_certifiable_scale_are_refused_before_solving(kernel):
    """Features scaled by 1e50 (C · max ‖x_i‖² ≈ 1e101): the linear views and the kernel dual
    refuse the problem in its constructor, naming C, the scale and what to do."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=40, n_features=3, n_informative=3, n_redundant=0, random_state=0
    )
    words = "max ‖x_i‖²" if kernel == "linear" else "max K̃_ii"
    with pytest.raises(ValueError, match=f"C · {words} = .* is over"):
        SVMClassifier(kernel=kernel, gamma=1.0).fit(X * 1e50, y)


def test_save_model_replaces_a_file_whole_or_not_at_all(tmp_path, monkeypatch, iris):
    import os

    import svmbench
    from svmbench.problems import model_files

    clf = SVMClassifier(kernel="linear").fit(*iris)
    path = tmp_path / "m.npz"
    svmbench.save_model(clf, path)
    before = path.read_bytes()
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask  # as open() makes it

    def failing(fh, arrays):
        fh.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(model_files, "_write_npz", failing)
    with pytest.raises(OSError, match="disk full"):
        svmbench.save_model(clf, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


@pytest.mark.parametrize("anchor", ["sklearn_svc", "sklearnex_svc"])
def test_an_svc_anchor_refuses_weights_on_one_class_in_our_words(anchor):
    from sklearn.datasets import make_classification

    from svmbench.problems import KernelDual

    if anchor not in registry.available_anchors():
        pytest.skip(registry.missing_reason(anchor))
    X, y = make_classification(n_samples=40, n_features=3, n_informative=3, n_redundant=0)
    y = 2.0 * y - 1
    problem = KernelDual(X, y, sample_weight=(y > 0).astype(float))
    with pytest.raises(TypeError, match=f"'{anchor}' cannot solve.*positive weight to one class"):
        registry.get(anchor).solve(problem)


def test_a_solver_refusing_every_view_names_the_parameter_to_change(iris):
    X, y = iris
    with pytest.raises(ValueError, match="soft_margin_primal: bias='free' is not supported"):
        SVMClassifier(kernel="linear", solver="dcd").fit(X[:100], y[:100])
