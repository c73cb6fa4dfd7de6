"""The one place where the C-form and the λ-forms of the SVM objective are converted.

svmbench states every problem in C-form, ``P = ½‖w‖² + Σ_i C_i loss_i``. Two other scalings
appear in the literature and in the lecture notes:

- Pegasos and the kernel lecture: ``λ/2 ‖w‖² + (1/n) Σ_i loss_i``, the same problem with
  ``λ = 1/(nC)`` and value ``P / (nC)``.
- The multiclass lecture: ``λ ‖w‖² + (1/n) Σ_i loss_i`` (no ½), so ``λ = 1/(2nC)``, value
  ``P/(nC)``.
"""

from __future__ import annotations


def lambda_from_C(C: float, n_samples: int, *, form: str = "pegasos") -> float:
    """λ of the λ-form equivalent to the C-form with parameter ``C`` on ``n_samples`` examples.

    Parameters
    ----------
    C : float
        The C-form parameter (> 0).
    n_samples : int
        Number of training examples n.
    form : {"pegasos", "multiclass_lecture"}, default="pegasos"
        ``"pegasos"``: ``λ/2‖w‖² + mean loss`` (λ = 1/(nC));
        ``"multiclass_lecture"``: ``λ‖w‖² + mean loss`` (λ = 1/(2nC)).
    """
    if form == "pegasos":
        return 1.0 / (n_samples * C)
    if form == "multiclass_lecture":
        return 1.0 / (2.0 * n_samples * C)
    raise ValueError(f"form must be 'pegasos' or 'multiclass_lecture', got {form!r}")


def C_from_lambda(lam: float, n_samples: int, *, form: str = "pegasos") -> float:
    """Inverse of :func:`lambda_from_C`."""
    if form == "pegasos":
        return 1.0 / (n_samples * lam)
    if form == "multiclass_lecture":
        return 1.0 / (2.0 * n_samples * lam)
    raise ValueError(f"form must be 'pegasos' or 'multiclass_lecture', got {form!r}")


def lambda_objective(P: float, C: float, n_samples: int) -> float:
    """Value of the λ-form objective (either form) given the C-form value ``P``: ``P/(nC)``."""
    return P / (n_samples * C)
