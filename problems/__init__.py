"""What is solved: SVM formulations, their certificates, and the data sets.

Every problem validates its input once, in its constructor, and judges any candidate solution
by a duality gap it computes itself (``problem.certificate``).
"""

from svmbench.problems.base import QP, Certificate, Problem
from svmbench.problems.hard_margin import HardMarginPrimal
from svmbench.problems.kernel_dual import KernelDual
from svmbench.problems.logistic import Logistic
from svmbench.problems.multiclass import MulticlassHinge
from svmbench.problems.multinomial_logistic import MultinomialLogistic
from svmbench.problems.nu_svc import NuSVCDual
from svmbench.problems.nu_svr import NuSVRDual
from svmbench.problems.one_class import OneClassDual
from svmbench.problems.soft_margin import SoftMarginDual, SoftMarginPrimal
from svmbench.problems.structured import ChainStructuredHinge
from svmbench.problems.svr import SVRDual
from svmbench.problems.svr_linear import SVRPrimal

#: The problem kinds a benchmark suite builds from a data set's (X, y); the chain-structured
#: problem needs sequences and is built by ``problems.structured.digit_sequences`` instead.
PROBLEMS: dict[str, type[Problem]] = {
    cls.kind: cls
    for cls in (
        HardMarginPrimal, SoftMarginPrimal, SoftMarginDual, KernelDual, MulticlassHinge, Logistic,
        SVRDual, SVRPrimal, MultinomialLogistic, NuSVCDual, NuSVRDual, OneClassDual,
    )
}  # fmt: skip

#: The kinds whose y holds real targets (regression data sets, ``Dataset.is_regression``).
REGRESSION_KINDS = frozenset({SVRDual.kind, SVRPrimal.kind, NuSVRDual.kind})

#: The kinds trained on X alone; a binary data set's labels (+1 inlier, −1 outlier, as the
#: ``outliers`` spec draws them) only score their models.
UNSUPERVISED_KINDS = frozenset({OneClassDual.kind})


def problem_on_data(kind: str, X, y, **params) -> Problem:
    """The problem ``kind`` (a key of :data:`PROBLEMS`) on ``(X, y)``; the kinds of
    :data:`UNSUPERVISED_KINDS` take ``X`` alone."""
    if kind not in PROBLEMS:
        raise ValueError(f"unknown problem kind {kind!r}; known: {', '.join(PROBLEMS)}")
    if kind in UNSUPERVISED_KINDS:
        return PROBLEMS[kind](X, **params)
    return PROBLEMS[kind](X, y, **params)


__all__ = [
    "PROBLEMS",
    "QP",
    "REGRESSION_KINDS",
    "UNSUPERVISED_KINDS",
    "Certificate",
    "ChainStructuredHinge",
    "HardMarginPrimal",
    "KernelDual",
    "Logistic",
    "MulticlassHinge",
    "MultinomialLogistic",
    "NuSVCDual",
    "NuSVRDual",
    "OneClassDual",
    "Problem",
    "SVRDual",
    "SVRPrimal",
    "SoftMarginDual",
    "SoftMarginPrimal",
    "problem_on_data",
]
