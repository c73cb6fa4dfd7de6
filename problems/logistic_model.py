"""The model of the L2-regularized logistic loss: a linear decision value and its probability.

``f(x) = w·x + b`` as :class:`~svmbench.problems.models.LinearModel`, and the probability of the
positive class ``P(y = +1 | x) = σ(f(x)) = 1/(1 + e^{−f(x)})``, the link of the logistic loss
``log(1 + e^{−y f})`` (:class:`~svmbench.problems.logistic.Logistic`). Saved in the model file
format as the kind ``logistic`` (``w``, ``b``), never pickled.

The multinomial loss's model (:class:`~svmbench.problems.multinomial_logistic.MultinomialLogistic`)
scores ``f_r(x) = w_r·x + b_r`` as the Crammer–Singer model does and gives the softmax
``P(y = r | x) = e^{f_r(x)} / Σ_q e^{f_q(x)}``, saved as the kind ``multinomial_logistic``
(``W``, ``b``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import expit, log_softmax

from svmbench.problems.models import CrammerSingerModel, LinearModel, OneVsRestModel

__all__ = [
    "LogisticModel",
    "MultinomialLogisticModel",
    "log_probabilities",
    "ovr_probabilities",
]


def log_probabilities(f: np.ndarray) -> np.ndarray:
    """``[log σ(−f), log σ(f)]`` column by column, ``log σ(f) = −log(1 + e^{−f})`` computed
    without overflow: ndarray of shape (n, 2), the classes in the order −1, +1."""
    f = np.asarray(f, dtype=np.float64)
    return np.column_stack([-np.logaddexp(0.0, f), -np.logaddexp(0.0, -f)])


@dataclass(frozen=True, eq=False)
class LogisticModel(LinearModel):
    """``f(x) = w·x + b`` with probabilities ``σ(f(x))`` of the positive class.

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    b : float, default=0.0
        The intercept (for a regularized bias, ``s·w_b``).
    """

    kind: ClassVar[str] = "logistic"

    def probability(self, X) -> np.ndarray:
        """``P(y = +1 | x) = σ(w·x + b)`` for each row of ``X``: ndarray of shape (n,)."""
        return expit(self.decision_function(X))

    def predict_proba(self, X) -> np.ndarray:
        """``[1 − σ(f), σ(f)]``: ndarray of shape (n, 2), the classes in the order −1, +1."""
        return np.exp(self.predict_log_proba(X))

    def predict_log_proba(self, X) -> np.ndarray:
        """The logarithms of :meth:`predict_proba`, without overflow or ``log 0``."""
        return log_probabilities(self.decision_function(X))


def ovr_probabilities(model: OneVsRestModel, X) -> np.ndarray:
    """One-vs-rest class probabilities: each binary model's ``σ(f_r(x))`` normalized to sum 1
    over the classes (LIBLINEAR's and scikit-learn's ``multi_class="ovr"`` rule): (n, k)."""
    p = np.column_stack([expit(m.decision_function(X)) for m in model.models])
    total = p.sum(axis=1, keepdims=True)
    return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)


@dataclass(frozen=True, eq=False)
class MultinomialLogisticModel(CrammerSingerModel):
    """Scores ``f_r(x) = w_r·x + b_r`` with the softmax probabilities of the multinomial loss.

    Parameters
    ----------
    W : ndarray of shape (n_classes, n_features)
    b : ndarray of shape (n_classes,)
        Zeros for ``bias="none"``; ``s·w_{r,b}`` for a regularized bias.
    """

    kind: ClassVar[str] = "multinomial_logistic"

    def predict_log_proba(self, X) -> np.ndarray:
        """``log P(y = r | x) = f_r(x) − log Σ_q e^{f_q(x)}`` (``log_softmax``, no overflow):
        ndarray of shape (n, k)."""
        return log_softmax(self.decision_function(X), axis=1)

    def predict_proba(self, X) -> np.ndarray:
        """The softmax of the scores: ndarray of shape (n, k), rows summing to 1."""
        return np.exp(self.predict_log_proba(X))
