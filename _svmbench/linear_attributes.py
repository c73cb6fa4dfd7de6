"""``coef_`` and ``intercept_`` of :class:`~svmbench.SVMClassifier`, with SVC's and LinearSVC's
rules: read-only for the fits SVC makes (a kernel, one-vs-one, or the binary hinge with a free
bias; sparse after a sparse fit), assignable for LinearSVC's (the model then predicts with the
values assigned), and LinearSVC's ``sparsify``/``densify``.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from svmbench import svc_layout


class LinearAttributesMixin:
    """The linear attributes of a fitted classifier holding ``model_``, ``_intercept``,
    ``_coef_sparse`` and a ``_svc_like()`` rule."""

    def _has_coef(self) -> bool:
        return self.kernel == "linear"

    @property
    def coef_(self):
        """The linear coefficients (``kernel="linear"`` only): see the class's Attributes."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self)
        coef = svc_layout.linear_coef(self)
        if coef is None:
            raise AttributeError(f"coef_: the {type(self.model_).__name__} holds no linear w")
        if self._coef_sparse and not sparse.issparse(coef):
            coef = sparse.csr_matrix(coef)
        elif not self._coef_sparse and sparse.issparse(coef):
            coef = coef.toarray()
        if self._svc_like():
            (coef.data if sparse.issparse(coef) else coef).flags.writeable = False
        return coef

    @coef_.setter
    def coef_(self, value):
        self._set_linear(value, self.intercept_)

    @property
    def intercept_(self):
        """``b`` of each binary problem (see the class's Attributes)."""
        check_is_fitted(self)
        if "_intercept" not in self.__dict__:
            raise AttributeError(f"intercept_: the {type(self.model_).__name__} holds no b")
        return self._intercept

    @intercept_.setter
    def intercept_(self, value):
        self._set_linear(self.coef_, value)

    def _set_linear(self, coef, intercept) -> None:
        """LinearSVC's assignable ``coef_``/``intercept_``: the model predicts with them."""
        check_is_fitted(self)
        if self.kernel != "linear" or self._svc_like():
            raise AttributeError(
                "coef_ and intercept_ are read-only for SVC's fits (kernel or one-vs-one "
                "models, or the binary hinge with a free bias), as SVC's; LinearSVC's fits "
                "(squared hinge, regularized or no bias, one-vs-rest) can be assigned"
            )
        self.model_ = svc_layout.with_linear(self.model_, coef, intercept)
        self._intercept = np.asarray(intercept, dtype=np.float64).reshape(-1).copy()

    @available_if(_has_coef)
    def sparsify(self):
        """``coef_`` as a scipy sparse (CSR) matrix from now on, as LinearSVC's ``sparsify``; the
        model (``model_``) keeps its dense ``w``, so predictions are unchanged and no memory is
        saved. Returns self."""
        check_is_fitted(self)
        self._coef_sparse = True
        return self

    @available_if(_has_coef)
    def densify(self):
        """``coef_`` as a dense ndarray from now on (LinearSVC's ``densify``). Returns self."""
        check_is_fitted(self)
        self._coef_sparse = False
        return self


__all__ = ["LinearAttributesMixin"]
