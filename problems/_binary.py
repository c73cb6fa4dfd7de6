"""The dual side shared by every binary problem, linear or kernel.

Multipliers ``α`` live in the box ``0 ≤ α_i ≤ C_i`` (``[0, ∞)`` for the squared hinge and the hard
margin, ``{0}`` where ``C_i = 0``), with ``yᵀα = 0`` for a free bias (docs/ARCHITECTURE.md §2).
"""

from __future__ import annotations

import numpy as np

from svmbench.problems._qp import project_box_hyperplane


class BinaryDualMixin:
    """Checks, the feasible set and its projection for α.

    The host class provides ``n_samples``, ``y``, ``bias``, ``upper_bounds`` (``C_i``, or ``+inf``
    for the hard margin; a new array on each read) and ``loss_kind`` (``"hinge"``,
    ``"squared_hinge"`` or ``"hard"``).
    """

    def _check_alpha(self, alpha) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=np.float64).ravel()
        if alpha.shape[0] != self.n_samples:
            raise ValueError(
                f"alpha must have length n_samples={self.n_samples}, got {alpha.shape[0]}"
            )
        if not np.all(np.isfinite(alpha)):
            raise ValueError("alpha must contain only finite values")
        return alpha

    def dual_box(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of α (``[0, C_i]``; ``[0, ∞)`` for the squared hinge and the
        hard margin; 0 where ``C_i = 0``)."""
        upper = self.upper_bounds  # a new array in every host: no copy
        if self.loss_kind == "squared_hinge":
            upper = np.where(upper > 0, np.inf, 0.0)
        return np.zeros(self.n_samples), upper

    def project_dual(self, alpha) -> np.ndarray:
        """Nearest dual-feasible point: the box, and ``yᵀα = 0`` for a free bias."""
        return self._project_checked(self._check_alpha(alpha))

    def _project_checked(self, alpha: np.ndarray) -> np.ndarray:
        lower, upper = self.dual_box()
        if self.bias == "free":
            return project_box_hyperplane(alpha, lower, upper, self.y, 0.0)
        return np.clip(alpha, lower, upper)

    def _repair_alpha(self, alpha) -> tuple[np.ndarray, dict[str, float]]:
        """The projected α and how far the given one was from feasibility."""
        raw = self._check_alpha(alpha)
        a = self._project_checked(raw)
        return a, {"dual_infeasibility": float(np.max(np.abs(a - raw)))}

    def _squared_hinge_term(self, alpha: np.ndarray) -> float:
        """``Σ_i α_i²/(4C_i)``, the squared hinge's extra dual term (0 for the other losses)."""
        if self.loss_kind != "squared_hinge":
            return 0.0
        pos = self.upper_bounds > 0
        return float(np.sum(alpha[pos] ** 2 / (4.0 * self.upper_bounds[pos])))
