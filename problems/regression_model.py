"""The model of a kernel regression (ε-SVR): ``f(x) = Σ_{j ∈ SV} β_j K(x_j, x) + b``, which is
also its prediction.

:class:`KernelRegressionModel` holds the support vectors (``β_j ≠ 0``) and their coefficients
``β_j = α_j − α*_j`` as :class:`~svmbench.problems.models.KernelModel` holds ``α_j y_j``, checked
by the same rules; it is no classifier (it has no classes, and no reduction takes it). Saved in
the model file format as the kind ``kernel_regression``, never pickled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from svmbench.problems.models import KernelModel, Model

__all__ = ["KernelRegressionModel"]


@dataclass(frozen=True, eq=False)
class KernelRegressionModel(Model):
    """``f(x) = Σ_j β_j K(x_j, x) + b`` over the support vectors; ``predict`` is ``f``.

    Parameters
    ----------
    support_vectors : ndarray or CSR of shape (n_SV, n_features), or None
        None for a precomputed kernel.
    dual_coef : ndarray of shape (n_SV,)
        ``β_j = α_j − α*_j`` of the support vectors.
    b : float
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}
    support : ndarray of int of shape (n_SV,)
        Indices of the support vectors in the training set.
    n_train : int
        Training-set size (the columns of a precomputed test kernel).
    gamma, degree, coef0
        The kernel's parameters (gamma resolved to a number).
    """

    kind: ClassVar[str] = "kernel_regression"
    support_vectors: Any
    dual_coef: np.ndarray
    b: float
    kernel: str
    support: np.ndarray
    n_train: int
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0

    def __post_init__(self):
        expansion = KernelModel(
            support_vectors=self.support_vectors, dual_coef=self.dual_coef, b=self.b,
            kernel=self.kernel, support=self.support, n_train=self.n_train, gamma=self.gamma,
            degree=self.degree, coef0=self.coef0,
        )  # fmt: skip
        for name in (
            "support_vectors", "dual_coef", "b", "support", "n_train", "gamma", "degree", "coef0"
        ):  # fmt: skip
            object.__setattr__(self, name, getattr(expansion, name))
        object.__setattr__(self, "_expansion", expansion)

    @property
    def n_features(self) -> int:
        return self._expansion.n_features

    @property
    def kernel_params(self) -> dict[str, Any]:
        return self._expansion.kernel_params

    def decision_function(self, X) -> np.ndarray:
        """``f(x_i)`` for each row of ``X`` (for a precomputed kernel, the (n_test, n_train)
        kernel against the training set): ndarray of shape (n_samples,)."""
        return self._expansion.decision_function(X)

    def predict(self, X) -> np.ndarray:
        """The predicted targets, ``f(x_i)``."""
        return self.decision_function(X)
