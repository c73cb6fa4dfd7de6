"""scikit-learn's parameter checks of an estimator, paid once per class and per set of values.

``BaseEstimator._validate_params`` reads the constructor's signature (``inspect.signature``) and
builds every constraint object anew on each ``fit``; in a grid search the same few parameter
sets are checked hundreds of times. :class:`RememberedParameterChecks` keeps the parameter
names per class and the parameter sets that passed (scalars only: numbers, strings, booleans,
None), and runs scikit-learn's own check on any other set. A set that fails is never
remembered, so the same bad value raises the same error every time.
"""

from __future__ import annotations

import numbers
from functools import cache

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import validate_parameter_constraints

#: Parameter sets remembered per class (a grid of 13 × 13 cells fits).
REMEMBERED_SETS = 1024


@cache
def parameter_names(cls: type) -> tuple[str, ...]:
    """The constructor's parameter names of ``cls``, sorted (scikit-learn's rule), read once."""
    return tuple(BaseEstimator._get_param_names.__func__(cls))


def _scalar_key(params: dict) -> tuple | None:
    """A hashable key of the values and their types, or None when a value is not a plain
    scalar (a dict, an array, a callable, a random state: checked every time)."""
    key = []
    for name, value in params.items():
        if value is not None and not isinstance(value, str | bool | numbers.Number):
            return None
        key.append((name, type(value), value))
    return tuple(key)


class RememberedParameterChecks:
    """Mixin for a scikit-learn estimator: ``_get_param_names`` read once per class and
    ``_validate_params`` skipped for a scalar parameter set that passed before."""

    @classmethod
    def _get_param_names(cls):
        return list(parameter_names(cls))

    def _validate_params(self):
        params = self.get_params(deep=False)
        key = _scalar_key(params)
        passed = _passed_sets(type(self))
        if key is not None and key in passed:
            return
        validate_parameter_constraints(
            self._parameter_constraints, params, caller_name=type(self).__name__
        )
        if key is not None:
            if len(passed) >= REMEMBERED_SETS:
                passed.clear()
            passed.add(key)


@cache
def _passed_sets(cls: type) -> set:
    return set()
