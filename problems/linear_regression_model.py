"""The model of a linear regression problem (the linear ε-SVR): ``f(x) = w·x + b``, predicted as
the real value itself.

The decision value is :class:`~svmbench.problems.models.LinearModel`'s; only ``predict``
differs (the value, not its sign). Saved in the model file format as the kind
``linear_regression`` (``w``, ``b``), never pickled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from svmbench.problems.models import LinearModel

__all__ = ["LinearRegressionModel"]


@dataclass(frozen=True, eq=False)
class LinearRegressionModel(LinearModel):
    """``f(x) = w·x + b``, predicted as it is (a regression model).

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    b : float, default=0.0
        The intercept (for a regularized bias, ``s·w_b``).
    """

    kind: ClassVar[str] = "linear_regression"

    def predict(self, X) -> np.ndarray:
        """``f(x_i) = w·x_i + b`` for each row of ``X``: ndarray of shape (n_samples,)."""
        return self.decision_function(X)
