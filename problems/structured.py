"""Chain-structured output prediction (sequence labelling) with the structured hinge loss.

The lecture's handwritten-word model (Shalev-Shwartz & Ben-David 2014, §17.3; Tsochantaridis et
al., JMLR 2005): an input is a sequence ``x = (x_1, …, x_r)`` of feature vectors (images), an
output a sequence of labels ``y = (y_1, …, y_r)`` in ``0..q−1``. The joint feature map has
emission features (type 1) and transition features (type 2), both divided by r::

    Ψ_E(x, y)[s, :]  = (1/r) Σ_t 1[y_t = s] x_t,
    Ψ_T(x, y)[s, s'] = (1/r) Σ_{t≥2} 1[y_t = s] 1[y_{t−1} = s'],

with weights ``w = (E (q, d), T (q, q))`` flattened as ``concat(E.ravel(), T.ravel())``. The loss
is the normalized Hamming loss ``Δ(y', y) = (1/r) Σ_t 1[y'_t ≠ y_t]``, and the problem, in C-form
(docs/ARCHITECTURE.md §2; the lecture's λ-form has ``λ = 1/(2nC)``)::

    P(w) = ½‖w‖² + Σ_i C_i max_{y'} (Δ(y', y_i) + ⟨w, Ψ(x_i, y') − Ψ(x_i, y_i)⟩).

Prediction and loss-augmented decoding are exact, by Viterbi's dynamic programme (the lecture's
``M_{s,τ}`` recursion; :func:`~svmbench.problems.chain_decoding.viterbi`). ``transitions=False``
drops Ψ_T: the per-position multiclass SVM with the same loss (the baseline the chain model must
beat).

Dual and certificate: the dual has one scaled simplex per sequence over all ``q^r`` labellings,
``α_i ≥ 0, Σ_y α_iy = C_i``, ``w(α) = Σ_{i,y} α_iy (Ψ(x_i, y_i) − Ψ(x_i, y))``,
``D(α) = Σ_{i,y} α_iy Δ(y, y_i) − ½‖w(α)‖²``. From a primal point w the problem builds a feasible
dual point on the segment between ``α_i = C_i e_{y_i}`` (D = 0) and ``α_i = C_i e_{ŷ_i}`` (ŷ_i the
loss-augmented argmax at w), at the best step ``γ* = clip(L / ‖w_s‖², 0, 1)`` with
``L = Σ_i C_i Δ(ŷ_i, y_i)`` and ``w_s = Σ_i C_i (Ψ(x_i, y_i) − Ψ(x_i, ŷ_i))`` — the batch
Frank–Wolfe step from 0 (Lacoste-Julien et al., ICML 2013). The gap ``P(w) − D`` is valid (weak
duality) but loose away from the optimum's neighbourhood: it bounds, it does not estimate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from svmbench.problems.base import QP, Certificate, Problem, make_certificate
from svmbench.problems.chain_decoding import viterbi
from svmbench.problems.models import ChainModel, finite
from svmbench.problems.rounding_chain import chain_rounding
from svmbench.problems.validation import (
    check_C_range,
    check_int,
    check_real,
    check_sample_weight,
    check_X,
)


@dataclass(frozen=True, eq=False)
class ChainStructuredHinge(Problem):
    """Chain structured SVM: variables ``w`` = ``concat(E.ravel(), T.ravel())``.

    Parameters
    ----------
    X : ndarray of shape (n_positions, n_features)
        The positions of all sequences, concatenated.
    y : int ndarray of shape (n_positions,)
        Labels 0..n_states−1.
    lengths : int ndarray of shape (n_sequences,)
        Length r_i ≥ 1 of each sequence; ``sum(lengths) = n_positions``.
    n_states : int, default=None
        q; default ``max(y) + 1``.
    C : float, default=1.0
    transitions : bool, default=True
        Include the transition features Ψ_T (False: the per-position multiclass model).
    sample_weight : ndarray of shape (n_sequences,), default=None
        ``C_i = C · sample_weight_i``.
    """

    kind: ClassVar[str] = "chain_structured_hinge"

    X: np.ndarray
    y: np.ndarray
    lengths: np.ndarray
    n_states: int | None = None
    C: float = 1.0
    transitions: bool = True
    sample_weight: np.ndarray | None = None
    offsets: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = check_X(self.X, allow_sparse=False)
        object.__setattr__(self, "X", X)
        y = np.asarray(self.y)
        if y.shape != (X.shape[0],) or not np.issubdtype(y.dtype, np.integer):
            raise ValueError(
                f"y must be an integer array of shape ({X.shape[0]},), got {y.dtype} {y.shape}"
            )
        if y.min() < 0:
            raise ValueError(f"y must hold labels >= 0, got minimum {y.min()}")
        q = (
            int(y.max()) + 1
            if self.n_states is None
            else check_int("n_states", self.n_states, low=2)
        )
        if y.max() >= q:
            raise ValueError(f"y must hold labels < n_states={q}, got {y.max()}")
        object.__setattr__(self, "y", y.astype(np.int64))
        object.__setattr__(self, "n_states", q)
        lengths = np.asarray(self.lengths)
        if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer) or lengths.size == 0:
            raise ValueError("lengths must be a non-empty 1-D integer array")
        if lengths.min() < 1 or lengths.sum() != X.shape[0]:
            raise ValueError(
                f"lengths must be >= 1 and sum to n_positions={X.shape[0]}, got sum {lengths.sum()}"
            )
        object.__setattr__(self, "lengths", lengths.astype(np.int64))
        object.__setattr__(
            self, "offsets", np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        )
        object.__setattr__(self, "C", check_real("C", self.C, low=0.0))
        object.__setattr__(self, "transitions", bool(self.transitions))
        sw = self.sample_weight
        sw = None if sw is None else check_sample_weight(sw, lengths.size)
        object.__setattr__(self, "sample_weight", sw)
        check_C_range(self.C, self.sample_weight)

    # ---- sizes -------------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """Number of sequences."""
        return self.lengths.size

    @property
    def n_features(self) -> int:
        """Dimension of w: ``q·d`` (+ ``q²`` with transitions)."""
        q, d = self.n_states, self.X.shape[1]
        return q * d + (q * q if self.transitions else 0)

    @property
    def upper_bounds(self) -> np.ndarray:
        sw = 1.0 if self.sample_weight is None else self.sample_weight
        return self.C * np.broadcast_to(sw, (self.n_samples,)).astype(np.float64)

    def split_weights(self, w) -> tuple[np.ndarray, np.ndarray | None]:
        """``(E (q, d), T (q, q) or None)`` from the flat ``w``."""
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.size != self.n_features:
            raise ValueError(f"w must have length n_features={self.n_features}, got {w.size}")
        q, d = self.n_states, self.X.shape[1]
        E = w[: q * d].reshape(q, d)
        return E, (w[q * d :].reshape(q, q) if self.transitions else None)

    def model_from(self, variables) -> ChainModel | None:
        """The :class:`~svmbench.problems.models.ChainModel` of ``w`` (emissions, transitions),
        or None without a finite w."""
        w = variables.get("w")
        if w is None or not finite(w):
            return None
        E, T = self.split_weights(w)
        return ChainModel(E, T)

    def sequence(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.X[a:b], self.y[a:b]

    # ---- feature map, decoding ----------------------------------------------------------------
    def joint_feature(self, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """``Ψ(x, y)`` flattened like w."""
        r = x.shape[0]
        q = self.n_states
        E = np.zeros((q, x.shape[1]))
        np.add.at(E, labels, x)
        parts = [E.ravel() / r]
        if self.transitions:
            T = np.zeros((q, q))
            np.add.at(T, (labels[1:], labels[:-1]), 1.0)
            parts.append(T.ravel() / r)
        return np.concatenate(parts)

    def _scores(self, w, x) -> tuple[np.ndarray, np.ndarray | None]:
        E, T = self.split_weights(w)
        r = x.shape[0]
        return (x @ E.T) / r, (None if T is None else T / r)

    def decode(self, w, x: np.ndarray) -> np.ndarray:
        """``h_w(x) = argmax_y ⟨w, Ψ(x, y)⟩`` by Viterbi."""
        S, T = self._scores(w, np.asarray(x, dtype=np.float64))
        return viterbi(S, T)[0]

    def loss_augmented_decode(self, w, i: int) -> tuple[np.ndarray, float]:
        """``ŷ_i = argmax_{y'} Δ(y', y_i) + ⟨w, Ψ(x_i, y')⟩`` and the structured hinge loss
        ``ℓ_i = Δ(ŷ_i, y_i) + ⟨w, Ψ(x_i, ŷ_i) − Ψ(x_i, y_i)⟩ ≥ 0``."""
        x, yi = self.sequence(i)
        r = x.shape[0]
        S, T = self._scores(w, x)
        truth = S[np.arange(r), yi].sum() + (0.0 if T is None else T[yi[1:], yi[:-1]].sum())
        S_aug = S + 1.0 / r
        S_aug[np.arange(r), yi] -= 1.0 / r
        yhat, best = viterbi(S_aug, T)
        return yhat, max(best - truth, 0.0)

    def predict(self, w, X=None, lengths=None) -> np.ndarray:
        """Viterbi labels of every sequence (of the training data, or of ``X`` cut by
        ``lengths``), concatenated."""
        X = self.X if X is None else np.asarray(X, dtype=np.float64)
        lengths = self.lengths if lengths is None else np.asarray(lengths)
        offs = np.concatenate([[0], np.cumsum(lengths)])
        return np.concatenate([self.decode(w, X[a:b]) for a, b in itertools.pairwise(offs)])

    @staticmethod
    def hamming_error(y_pred, y_true) -> float:
        """Fraction of positions labelled wrongly."""
        return float(np.mean(np.asarray(y_pred) != np.asarray(y_true)))

    # ---- objectives and certificate -----------------------------------------------------------
    def primal_objective(self, w) -> float:
        """``P(w) = ½‖w‖² + Σ_i C_i ℓ_i(w)`` (exact: loss-augmented Viterbi per sequence)."""
        w = np.asarray(w, dtype=np.float64).ravel()
        self.split_weights(w)
        losses = np.array([self.loss_augmented_decode(w, i)[1] for i in range(self.n_samples)])
        return 0.5 * float(w @ w) + float(self.upper_bounds @ losses)

    def certificate(self, *, w=None) -> Certificate:
        """``P(w)`` and the dual value of the segment dual point described in the module
        docstring (one loss-augmented Viterbi per sequence), with the gap's rounding allowance
        (problems/rounding_chain.py)."""
        if w is None:
            raise TypeError("certificate needs w for a structured problem")
        w = np.asarray(w, dtype=np.float64).ravel()
        self.split_weights(w)
        C = self.upper_bounds
        L, ws, loss_sum = 0.0, np.zeros_like(w), 0.0
        losses = np.empty(self.n_samples)
        for i in range(self.n_samples):
            x, yi = self.sequence(i)
            yhat, loss = self.loss_augmented_decode(w, i)
            losses[i] = loss
            loss_sum += C[i] * loss
            delta = float(np.mean(yhat != yi))
            if delta > 0.0:
                L += C[i] * delta
                ws += C[i] * (self.joint_feature(x, yi) - self.joint_feature(x, yhat))
        P = 0.5 * float(w @ w) + loss_sum
        nrm = float(ws @ ws)
        gamma = 0.0 if L <= 0.0 else (1.0 if nrm <= L else L / nrm)
        D = gamma * L - 0.5 * gamma * gamma * nrm
        rounding = chain_rounding(self, w, losses, L, nrm, gamma, P, D)
        return make_certificate(
            P, D, primal_point={"w": w}, residuals={"dual_step": gamma}, rounding=rounding
        )

    def to_qp(self) -> QP:
        raise NotImplementedError(
            "the structured dual has q^r variables per sequence: no QP export (use ssvm_sgd)"
        )


@dataclass(frozen=True)
class SequenceData:
    """Train and test sequences (positions concatenated, cut by ``lengths``)."""

    X: np.ndarray
    y: np.ndarray
    lengths: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    lengths_test: np.ndarray
    transition: np.ndarray  # the Markov chain's matrix P[s', s] = P(next = s | current = s')


def digit_sequences(
    n_train: int = 100,
    n_test: int = 100,
    *,
    min_length: int = 4,
    max_length: int = 8,
    p_next: float = 0.8,
    noise: float = 0.5,
    bias_feature: bool = True,
    seed: int = 0,
) -> SequenceData:
    """Sequences of scikit-learn's handwritten digits whose labels follow a Markov chain.

    The chain starts uniformly and moves from digit s to ``(s + 1) mod 10`` with probability
    ``p_next``, else to a uniformly drawn digit: the transitions carry information that a
    per-position classifier cannot use. Each position shows a random image of its digit (pixels
    scaled to [0, 1]) plus Gaussian noise of standard deviation ``noise``; train and test
    sequences draw from disjoint halves of the 1797 images (stratified). ``bias_feature`` appends
    a constant 1 (a per-state bias in E). Lengths are uniform in ``[min_length, max_length]``.
    """
    from sklearn.datasets import load_digits

    n_train = check_int("n_train", n_train, low=1)
    n_test = check_int("n_test", n_test, low=1)
    min_length = check_int("min_length", min_length, low=1)
    max_length = check_int("max_length", max_length, low=min_length)
    p_next = check_real("p_next", p_next, low=0.0, high=1.0, closed="both")
    noise = check_real("noise", noise, low=0.0, closed="left")
    rng = np.random.default_rng(seed)
    bunch = load_digits()
    images = bunch.data / 16.0
    labels = bunch.target
    q = 10
    pools_train, pools_test = [], []
    for s in range(q):
        idx = rng.permutation(np.flatnonzero(labels == s))
        pools_train.append(idx[: idx.size // 2])
        pools_test.append(idx[idx.size // 2 :])
    P = np.full((q, q), (1.0 - p_next) / q)
    P[np.arange(q), (np.arange(q) + 1) % q] += p_next

    def draw(n, pools):
        lengths = rng.integers(min_length, max_length + 1, size=n)
        ys = []
        for r in lengths:
            seq = [int(rng.integers(q))]
            for _ in range(r - 1):
                seq.append(int(rng.choice(q, p=P[seq[-1]])))
            ys.append(seq)
        y = np.concatenate(ys).astype(np.int64)
        X = np.stack([images[rng.choice(pools[s])] for s in y])
        X = X + noise * rng.normal(size=X.shape)
        if bias_feature:
            X = np.hstack([X, np.ones((X.shape[0], 1))])
        return np.ascontiguousarray(X), y, lengths.astype(np.int64)

    X, y, lengths = draw(n_train, pools_train)
    X_test, y_test, lengths_test = draw(n_test, pools_test)
    return SequenceData(X, y, lengths, X_test, y_test, lengths_test, P)
