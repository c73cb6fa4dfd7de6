"""When an estimator has ``predict_proba``: one rule for every svmbench estimator.

:func:`has_probabilities` is the single ``available_if`` condition: probabilities exist when the
estimator's loss is the logistic one (``loss="logistic"``, one-vs-rest or multinomial: the model's
own link gives them), or when the estimator has a ``probability`` parameter and it is True. An
estimator without probabilities has no ``predict_proba`` attribute at all (``hasattr`` is False),
as scikit-learn's ``SVC(probability=False)``, so that meta-estimators such as
``CalibratedClassifierCV`` and ``VotingClassifier(voting="soft")`` see what exists.

:class:`ProbabilitiesMixin` gives ``predict_proba`` and ``predict_log_proba`` under that rule,
computed from the fitted model (:func:`model_log_probabilities`).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from svmbench.problems.logistic_model import (
    LogisticModel,
    MultinomialLogisticModel,
    ovr_probabilities,
)
from svmbench.problems.models import OneVsRestModel

__all__ = ["ProbabilitiesMixin", "has_probabilities", "model_log_probabilities"]


def has_probabilities(estimator) -> bool:
    """The one ``available_if`` rule of ``predict_proba``: ``loss == "logistic"``, or a
    ``probability`` parameter that the estimator declares (in ``_parameter_constraints``) set to
    True; an attribute of that name that the estimator does not take means nothing."""
    declared = getattr(type(estimator), "_parameter_constraints", {})
    return getattr(estimator, "loss", None) == "logistic" or (
        "probability" in declared and getattr(estimator, "probability", False) is True
    )


def model_log_probabilities(model, X) -> np.ndarray:
    """``log P(class | x)`` from a fitted model, columns in the model's class order: the softmax
    of a multinomial model, ``[log σ(−f), log σ(f)]`` of a binary logistic one, the one-vs-rest
    ``σ(f_r)`` normalized to sum 1 (LIBLINEAR's and scikit-learn's ``ovr`` rule). (n, k)."""
    if isinstance(model, MultinomialLogisticModel | LogisticModel):
        return model.predict_log_proba(X)
    if isinstance(model, OneVsRestModel):
        with np.errstate(divide="ignore"):
            return np.log(ovr_probabilities(model, X))
    raise TypeError(f"a {type(model).__name__} gives no probabilities")


class ProbabilitiesMixin:
    """``predict_proba`` and ``predict_log_proba`` of a classifier holding ``model_``, present by
    :func:`has_probabilities`, from the model's own link."""

    @available_if(has_probabilities)
    def predict_proba(self, X):
        """Class probabilities, columns in ``classes_`` order: ``[1 − σ(f), σ(f)]`` for two
        classes; the softmax of the scores for the multinomial loss; the one-vs-rest
        ``σ(f_r)`` normalized to sum 1 otherwise. (n, k)."""
        return np.exp(self.predict_log_proba(X))

    @available_if(has_probabilities)
    def predict_log_proba(self, X):
        """The logarithms of :meth:`predict_proba` (no ``log 0`` for two classes and the
        multinomial loss)."""
        check_is_fitted(self)
        return model_log_probabilities(self.model_, self._validated(X))
