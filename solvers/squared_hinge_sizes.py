"""The sizes up to which ``squared_hinge_newton`` solves its Newton systems exactly, apart from
the method (solvers/squared_hinge_newton.py) so that ``auto``'s table reads them without
importing the method and its jitted passes."""

from __future__ import annotations

#: Dense X with at most this many features: the Newton system is formed and factored exactly
#: (O(n_I d²) per step); beyond, conjugate gradients.
DENSE_MAX_D = 500
#: CSR X with at most this many features: the same exact solve, ``X_IᵀDX_I`` a sparse product.
SPARSE_MAX_D = 200

__all__ = ["DENSE_MAX_D", "SPARSE_MAX_D"]
