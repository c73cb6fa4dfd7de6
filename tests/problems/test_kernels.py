"""The kernel description (``Kernel``) and the one ``gamma="scale"``/``"auto"`` rule
(``resolve_gamma``): scikit-learn's SVC value without weights, the value of repeated rows with
integer weights, dense and CSR; the diagonal against the Gram matrix; one table of kernel codes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from sklearn.svm import SVC

from svmbench.problems import KernelDual
from svmbench.problems.kernels import KERNEL_CODES, Kernel, kernel_matrix, resolve_gamma

KERNEL_PARAMS = {
    "linear": {},
    "poly": {"gamma": 0.3, "degree": 3, "coef0": 0.5},
    "rbf": {"gamma": 0.2},
    "sigmoid": {"gamma": 0.05, "coef0": -0.3},
}


def _data(n=40, d=6, seed=0, shift=3.0, sparse_input=False):
    """Rows off the origin (mean ≠ 0: the centring matters); CSR with 60 % zeros."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(0.5, 2.0, d) + shift
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y[:2] = (-1.0, 1.0)
    if sparse_input:
        X[rng.random(X.shape) < 0.6] = 0.0
        return sparse.csr_matrix(X), y
    return X, y


def _repeat(X, counts):
    rows = np.repeat(np.arange(X.shape[0]), counts)
    return X[rows]


@pytest.mark.parametrize("sparse_input", [False, True], ids=["dense", "csr"])
def test_unweighted_scale_is_svcs_gamma(sparse_input):
    X, y = _data(sparse_input=sparse_input)
    svc = SVC(gamma="scale").fit(X, y)._gamma
    assert resolve_gamma("scale", X) == svc
    assert KernelDual(X, y, gamma="scale").gamma == svc
    # equal weights, whatever their value, are no weights
    assert resolve_gamma("scale", X, np.full(X.shape[0], 3.5)) == svc
    assert KernelDual(X, y, gamma="scale", sample_weight=np.full(X.shape[0], 2.0)).gamma == svc


@pytest.mark.parametrize("sparse_input", [False, True], ids=["dense", "csr"])
def test_integer_weights_give_the_gamma_of_repeated_rows(sparse_input):
    X, y = _data(sparse_input=sparse_input)
    counts = np.tile([1, 2, 0, 3], X.shape[0] // 4)
    weighted = resolve_gamma("scale", X, counts.astype(float))
    repeated = SVC(gamma="scale").fit(_repeat(X, counts), np.repeat(y, counts))._gamma
    assert weighted == pytest.approx(repeated, rel=1e-12)
    assert weighted != pytest.approx(resolve_gamma("scale", X), rel=1e-3)  # the weights count
    problem = KernelDual(X, y, gamma="scale", sample_weight=counts.astype(float))
    assert problem.gamma == weighted


def test_dense_and_csr_weighted_gammas_agree():
    X, _ = _data(sparse_input=True)
    w = np.random.default_rng(1).uniform(0.0, 3.0, X.shape[0])
    assert resolve_gamma("scale", X, w) == pytest.approx(
        resolve_gamma("scale", X.toarray(), w), rel=1e-12
    )


def test_auto_given_and_degenerate_gammas():
    X, _ = _data(d=8)
    assert resolve_gamma("auto", X, np.arange(X.shape[0], dtype=float)) == 1.0 / 8
    assert resolve_gamma(0.25, X) == 0.25
    assert resolve_gamma("scale", np.ones((5, 3))) == 1.0  # zero variance
    w = np.r_[1.0, np.zeros(4)]  # one row left: zero variance
    assert resolve_gamma("scale", np.arange(15.0).reshape(5, 3) ** 2, w) != 1.0
    assert resolve_gamma("scale", np.tile([1.0, 1.0, 1.0], (5, 1)), w) == 1.0


@pytest.mark.parametrize(
    ("gamma", "weights", "error", "match"),
    [
        ("median", None, ValueError, "gamma must be one of"),
        (0.0, None, ValueError, r"gamma must be in \(0.0, inf\)"),
        (np.nan, None, ValueError, "gamma must be a real number"),
        ([1.0], None, TypeError, "gamma must be a real number"),
        ("scale", np.r_[1.0, -1.0, 0.0, 0.0, 0.0], ValueError, "sample_weight must have a pos"),
    ],
)
def test_bad_gamma_is_refused(gamma, weights, error, match):
    with pytest.raises(error, match=match):
        resolve_gamma(gamma, np.arange(15.0).reshape(5, 3), weights)


@pytest.mark.parametrize("sparse_input", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name", sorted(KERNEL_PARAMS))
def test_diagonal_is_the_gram_matrixs(name, sparse_input):
    X, _ = _data(sparse_input=sparse_input, shift=0.3)
    kernel = Kernel(name, **KERNEL_PARAMS[name])
    K = kernel_matrix(X, **kernel.parameters)
    np.testing.assert_allclose(kernel.diagonal(X), np.diag(K), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(kernel(X), K)
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sparse_input else np.sum(X * X, 1)
    np.testing.assert_allclose(kernel.diagonal(X, sq), kernel.diagonal(X), rtol=1e-13, atol=1e-15)
    assert kernel.code == KERNEL_CODES[name]


def test_precomputed_diagonal_and_the_problems_kernel():
    X, y = _data(shift=0.3)
    K = kernel_matrix(X, kernel="rbf", gamma=0.2)
    K[np.diag_indices_from(K)] = np.linspace(1.0, 2.0, K.shape[0])
    diag = Kernel("precomputed").diagonal(K)
    np.testing.assert_array_equal(diag, np.diag(K))
    diag[0] = -1.0  # a copy
    assert K[0, 0] == 1.0
    problem = KernelDual(X, y, kernel="poly", gamma=0.3, degree=2, coef0=1.0)
    assert problem.kernel_spec == Kernel("poly", 0.3, 2, 1.0)
    assert problem.kernel_params == problem.kernel_spec.parameters
    np.testing.assert_allclose(problem.kernel_diagonal, np.diag(problem.gram), rtol=1e-13)


def test_one_table_of_kernel_codes():
    from svmbench.solvers._jit import kernel_columns, kernel_values

    assert kernel_values.KERNEL_CODES is KERNEL_CODES is kernel_columns.KERNEL_CODES
    assert sorted(KERNEL_CODES.values()) == list(range(5))


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("cubic",), ValueError, "kernel must be one of"),
        (("rbf", -1.0), ValueError, "gamma must be in"),
        (("rbf", "scale"), TypeError, "gamma must be a real number"),
        (("poly", 1.0, 0), ValueError, "degree must be an integer >= 1"),
        (("poly", 1.0, 2.5), TypeError, "degree must be an integer"),
        (("sigmoid", 1.0, 3, np.inf), ValueError, "coef0 must be finite"),
    ],
)
def test_bad_kernel_descriptions_are_refused(args, error, match):
    with pytest.raises(error, match=match):
        Kernel(*args)


@pytest.mark.parametrize("shift", [0.0, 0.5, 10.0])
def test_a_precomputed_gram_s_convexity_from_its_cholesky_factor(shift):
    """A precomputed Gram matrix is convex when every eigenvalue is at least −τ
    (τ = PSD_RTOL·max(1, max |K_ii|)): a Cholesky factor of K + τI says so without the
    eigenvalues; where it fails, the smallest eigenvalue is computed and reported. Shifted by
    ``shift·τ`` below 0, the matrix is convex for 0 and 0.5, not for 10."""
    from svmbench.problems.kernel_dual import PSD_RTOL

    rng = np.random.default_rng(4)
    Q, _ = np.linalg.qr(rng.normal(size=(40, 40)))
    eigenvalues = np.linspace(0.0, 3.0, 40)
    K = (Q * eigenvalues) @ Q.T
    K = 0.5 * (K + K.T)
    tau = PSD_RTOL * max(1.0, float(np.max(np.abs(np.diag(K)))))
    K -= shift * tau * np.eye(40)
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    problem = KernelDual(K, y, C=1.0, kernel="precomputed")
    exact = float(np.linalg.eigvalsh(K)[0])
    assert problem.convex is (shift < 1.0)
    if shift < 1.0:
        assert problem.min_eigenvalue <= exact  # a lower bound that proves convexity
    else:
        assert problem.min_eigenvalue == pytest.approx(exact, rel=1e-6)
