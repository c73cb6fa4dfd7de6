"""scikit-learn's own SVM tests, run against ``SVMClassifier`` through argument mapping only.

The installed scikit-learn's ``sklearn/svm/tests/test_svm.py`` and ``test_sparse.py`` run in a
fresh interpreter in which ``sklearn.svm.SVC`` and ``LinearSVC`` are the adapters of
``svc_adapters.py``. Every failure must be one of :data:`KNOWN_FAILURES`, each with its reason,
and every known failure must still fail (a fixed one is taken off the list). The list is
scikit-learn 1.9's; another series is measured afresh.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sklearn

SKLEARN_SERIES = "1.9"
SUITES = ("test_svm.py", "test_sparse.py")

#: The failures of scikit-learn 1.9's items, by reason (items that use only SVR, NuSVC,
#: NuSVR, OneClassSVM or LinearSVR run against scikit-learn's own classes and pass).
KNOWN_FAILURES: dict[str, tuple[str, ...]] = {
    "l1 penalty: LIBLINEAR's L1-regularized solvers are not part of svmbench": (
        "test_sparse.py::test_sparse_liblinear_intercept_handling",
        "test_svm.py::test_dense_liblinear_intercept_handling",
        "test_svm.py::test_linearsvc_parameters[False-l1-hinge]",
        "test_svm.py::test_linearsvc_parameters[False-l1-squared_hinge]",
        "test_svm.py::test_linearsvc_parameters[True-l1-hinge]",
        "test_svm.py::test_linearsvc_parameters[True-l1-squared_hinge]",
        "test_svm.py::test_linearsvm_liblinear_sample_weight[LinearSVC-params0]",
        "test_svm.py::test_linearsvc",
    ),
    "multiclass linear kernel: the pairs keep weight vectors, no support_/dual_coef_": (
        "test_sparse.py::test_sparse_realdata[csr_array]",
        "test_sparse.py::test_sparse_realdata[csr_matrix]",
        "test_sparse.py::test_svc[csr_array-linear-X_train1-y_train1-X_test1]",
        "test_sparse.py::test_svc[csr_array-linear-X_train2-y_train2-X_test2]",
        "test_sparse.py::test_svc[csr_array-linear-X_train3-y_train3-X_test3]",
        "test_sparse.py::test_svc[csr_matrix-linear-X_train1-y_train1-X_test1]",
        "test_sparse.py::test_svc[csr_matrix-linear-X_train2-y_train2-X_test2]",
        "test_sparse.py::test_svc[csr_matrix-linear-X_train3-y_train3-X_test3]",
        "test_sparse.py::test_svc[lil_array-linear-X_train1-y_train1-X_test1]",
        "test_sparse.py::test_svc[lil_array-linear-X_train2-y_train2-X_test2]",
        "test_sparse.py::test_svc[lil_array-linear-X_train3-y_train3-X_test3]",
        "test_sparse.py::test_svc[lil_matrix-linear-X_train1-y_train1-X_test1]",
        "test_sparse.py::test_svc[lil_matrix-linear-X_train2-y_train2-X_test2]",
        "test_sparse.py::test_svc[lil_matrix-linear-X_train3-y_train3-X_test3]",
        "test_sparse.py::test_svc_iris[linear-csr_array]",
        "test_sparse.py::test_svc_iris[linear-csr_matrix]",
    ),
    "callable kernel refused": (
        "test_sparse.py::test_sparse_svc_clone_with_callable_kernel[lil_array]",
        "test_sparse.py::test_sparse_svc_clone_with_callable_kernel[lil_matrix]",
        "test_sparse.py::test_svc_with_custom_kernel[lil_array]",
        "test_sparse.py::test_svc_with_custom_kernel[lil_matrix]",
        "test_sparse.py::test_timeout[lil_array]",
        "test_sparse.py::test_timeout[lil_matrix]",
        "test_svm.py::test_custom_kernel_not_array_input[SVC]",
        "test_svm.py::test_libsvm_convergence_warnings",
        "test_svm.py::test_precomputed",
        "test_svm.py::test_svc_clone_with_callable_kernel",
    ),
    "coef_ dense after a sparse fit (SVC gives a sparse coef_)": (
        "test_sparse.py::test_svc[csr_array-linear-X_train0-y_train0-X_test0]",
        "test_sparse.py::test_svc[csr_matrix-linear-X_train0-y_train0-X_test0]",
        "test_sparse.py::test_svc[lil_array-linear-X_train0-y_train0-X_test0]",
        "test_sparse.py::test_svc[lil_matrix-linear-X_train0-y_train0-X_test0]",
        "test_sparse.py::test_unsorted_indices[csr_array]",
        "test_sparse.py::test_unsorted_indices[csr_matrix]",
    ),
    "accepts what libsvm refuses: sparse predict after a dense fit, dual=False with hinge": (
        "test_svm.py::test_bad_input[lil_array]",
        "test_svm.py::test_bad_input[lil_matrix]",
        "test_svm.py::test_linearsvc_parameters[False-l2-hinge]",
    ),
    "libsvm's private attributes (_gamma, _n_support, _dual_coef_)": (
        "test_svm.py::test_gamma_scale",
        "test_svm.py::test_svc_raises_error_internal_representation",
        "test_svm.py::test_tweak_params",
    ),
    "probability=True, probA_: deprecated by scikit-learn (CalibratedClassifierCV instead)": (
        "test_svm.py::test_hasattr_predict_proba",
        "test_svm.py::test_probability",
        "test_svm.py::test_probability_raises_futurewarning[False-SVC-SVC]",
        "test_svm.py::test_probability_raises_futurewarning[True-SVC-SVC]",
        "test_svm.py::test_svc_nusvc_probA_probB_deprecated[SVC]",
    ),
    "coef_ is read-only (SVC's is; LinearSVC's can be assigned)": (
        "test_svm.py::test_liblinear_set_coef",
    ),
    "another error message than libsvm's ('Invalid input - ...', 'Sparse precomputed')": (
        "test_svm.py::test_linear_svm_convergence_warnings",
        "test_svm.py::test_negative_sample_weights_mask_all_samples[weights-are-negative-SVC]",
        "test_svm.py::test_negative_sample_weights_mask_all_samples[weights-are-zero-SVC]",
        "test_svm.py::test_negative_weights_svc_leave_just_one_label[mask-label-1-SVC]",
        "test_svm.py::test_negative_weights_svc_leave_just_one_label[mask-label-2-SVC]",
        "test_svm.py::test_sparse_precomputed[csr_array]",
        "test_svm.py::test_sparse_precomputed[csr_matrix]",
    ),
    "n_iter_ is an int for a binary linear fit (LinearSVC's), SVC gives an array": (
        "test_svm.py::test_n_iter_libsvm[2-SVC-ndarray]",
    ),
    "negative sample_weight refused (scikit-learn masks it to zero)": (
        "test_svm.py::test_negative_weight_equal_coeffs[partial-mask-label-1-SVC]",
        "test_svm.py::test_negative_weights_svc_leave_two_labels[partial-mask-label-1-SVC]",
    ),
    "non-finite dual coefficients: a RuntimeError, not libsvm's ValueError": (
        "test_svm.py::test_svc_nonfinite_params",
    ),
    "C=inf refused by parameter validation": (
        "test_svm.py::test_svm_with_infinite_C[inf0-SVC-make_classification]",
        "test_svm.py::test_svm_with_infinite_C[inf1-SVC-make_classification]",
    ),
}

CONFTEST = """
import pytest
import sklearn.svm

import svc_adapters

sklearn.svm.SVC = svc_adapters.SVC
sklearn.svm.LinearSVC = svc_adapters.LinearSVC


@pytest.fixture
def global_random_seed():
    return 42
"""

OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED)\s+(\S+)")


def _sklearn_tests() -> Path:
    folder = Path(sklearn.__file__).parent / "svm" / "tests"
    if not all((folder / name).is_file() for name in SUITES):
        pytest.skip(f"this scikit-learn {sklearn.__version__} installation ships no SVM tests")
    return folder


def _run(tmp_path: Path) -> dict[str, str]:
    folder = _sklearn_tests()
    for name in SUITES:
        shutil.copy(folder / name, tmp_path / name)
    shutil.copy(Path(__file__).with_name("svc_adapters.py"), tmp_path / "svc_adapters.py")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OPENBLAS_NUM_THREADS"] = env.get("OPENBLAS_NUM_THREADS", "1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", *SUITES],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    outcomes = {}
    for line in done.stdout.splitlines():
        found = OUTCOME.match(line)
        if found:
            outcomes[found.group(2)] = found.group(1)
    assert outcomes, done.stdout[-3000:] + done.stderr[-3000:]
    return outcomes


def test_scikit_learns_svm_tests_fail_only_where_known(tmp_path):
    outcomes = _run(tmp_path)
    failed = {item for item, outcome in outcomes.items() if outcome in ("FAILED", "ERROR")}
    known = {item for items in KNOWN_FAILURES.values() for item in items}
    series = ".".join(sklearn.__version__.split(".")[:2])
    if series != SKLEARN_SERIES:
        # another series: its own items; hold it to the share of items passing
        assert len(failed) <= len(known), sorted(failed)
        return
    assert failed <= known, f"new failures: {sorted(failed - known)}"
    assert known <= failed, f"passing now, take them off KNOWN_FAILURES: {sorted(known - failed)}"
    assert sum(outcome == "PASSED" for outcome in outcomes.values()) >= 200
