"""``auto``'s table: :class:`Rule` and :data:`RULES`, read top to bottom by
:func:`solvers.auto.choose` (one row per regime, each with the measurement behind it; README.md
holds the same table, :func:`rules_markdown`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from svmbench.solvers.auto_features import Features
from svmbench.solvers.squared_hinge_sizes import DENSE_MAX_D, SPARSE_MAX_D


@dataclass(frozen=True)
class Rule:
    """One row of the table: when it applies, the solvers to run in order, and why. With
    ``probe``, the first solver runs at most ``max(probe, probe_work / nnz(X))`` of its
    iterations (unless the user fixed ``max_iter``): a cheap try that often suffices, the next
    solver going on when it does not."""

    kinds: tuple[str, ...]
    when: Callable[[Features], bool]
    condition: str
    solvers: tuple[str, ...]
    measured: str
    probe: int = 0
    probe_work: float = 0.0


def _always(f: Features) -> bool:
    return True


_LINEAR = ("soft_margin_primal", "soft_margin_dual")
#: dcd needs few epochs when C·mean‖x‖² is small (each coordinate's box is tight against the
#: diagonal of Q); past this it can take thousands on dense low-dimensional data, where the
#: barrier's O(n·min(n, d)²) steps are cheap. The two cross at 1.5-2 (n=5000, d=20 and 100).
SMALL_C_R2 = 1.5
#: cs_dcd against clarabel's small QP (n·k <= 1000): iris at C·mean‖x‖² = 4 took cs_dcd half
#: clarabel's time, at 40 ten times it.
MULTICLASS_SMALL_C_R2 = 10.0
#: Linear problems with at most this many stored entries are tiny: dcd's epochs cost 1-6 µs,
#: clarabel's and the barrier's solves 5-14 ms, so dcd tries a probe first, whatever C·‖x‖²
#: says (its epochs vary with the data beyond what the rules read): ``max(PROBE, PROBE_WORK /
#: nnz(X))`` epochs, about clarabel's time at dcd's ~1 entry per ns, so that a failed probe at
#: most doubles the time; most tiny duals measured took dcd a fraction of clarabel's time
#: (docs/measurements.md, "auto").
TINY = 5000
PROBE = 700
PROBE_WORK = 6e6
#: Linear problems with a free bias (hinge) of at most this many examples: ``linear_smo``'s
#: Gram matrix (8n² bytes) is held whole.
LINEAR_SMO_N = 2000
#: ... where the classes are likely separable (n at most this many times d: digits pairs,
#: 360×64, wine's, 130×13) or the box is tight (C·mean‖x‖² at most ``LINEAR_SMO_C_R2``): its
#: pair updates then stay near LIBSVM's count at every C, or few enough with shrinking; on
#: overlapping classes (breast cancer, n = 19d; iris, 25d) they grow with C, where the
#: barrier's Newton steps do not (breast cancer at C = 10, C·mean‖x‖² = 300: 15 700 updates).
LINEAR_SMO_ROWS_PER_FEATURE = 12
LINEAR_SMO_C_R2 = 100.0
#: Its probe in pair updates (digits pairs need at most 1238 at any C, LIBSVM 1163).
LINEAR_SMO_PROBE = 5000
#: Dense data with min(n, d) up to this: the barrier's normal equations (d×d by Woodbury, or
#: n×n) cost little per Newton step.
BARRIER_MIN_DIM = 200

#: The logistic loss's dual CD gets a probe of ``max(LOGISTIC_PROBE, LOGISTIC_PROBE_WORK /
#: nnz(X))`` epochs on small problems of moderate C·mean‖x‖² (its epochs cost microseconds
#: there, the Newton method's NumPy steps a millisecond or more); past the probe the Newton
#: method goes on from its point.
LOGISTIC_PROBE = 100
LOGISTIC_PROBE_WORK = 1e5
#: ... on problems of at most this many stored entries whose C·mean‖x‖² is at most this.
LOGISTIC_SMALL = 20_000
LOGISTIC_SMALL_C_R2 = 50.0

#: The linear SVR's dual CD certifies the plain loss quickly up to this C·mean‖x‖² (friedman1 at
#: 10: 3x faster than Clarabel); at 50 (n=5000, d=50) it took past 20 s, Clarabel 15-20 s.
SVR_DCD_C_R2 = 20.0

#: Kernel ε-SVR from this many examples on runs on the batched SMO: at n = 442 (diabetes) the
#: two SMOs measured equal at C = 1, smo_batch 2.1x faster at C = 100; from n = 1000 1.5-6.7x.
SVR_BATCH_MIN_N = 400

#: ε-SVR and ν-SVR with a linear kernel: SMO tries this many pair updates, then the barrier
#: goes on. On a kernel of rank d the pairs' steps stall as C grows: on standardized diabetes
#: (d = 10) SMO needed 6306-7520 updates at C = 1 and was short of tol after 200 000 at
#: C = 100 and 1e4, where the barrier certified in 11-12 Newton steps.
SVR_LINEAR_PROBE = 20_000

#: Kernel duals with at most this many examples: SMO tries a probe of SMALL_KERNEL_PROBE pair
#: updates (enough where C is moderate), then the active-set method goes on from its point, its
#: cost set by the active set's changes rather than by C (SMO's updates grow with C there).
SMALL_KERNEL_N = 300
SMALL_KERNEL_PROBE = 2000
#: RBF duals of up to LARGE_C_KERNEL_N examples (the active-set method's dense limit) at C from
#: LARGE_C on: SMO's probe is LARGE_C_PROBE updates, then the active-set method goes on. There
#: SMO's updates grow with C (breast cancer at C = 1e10: past 3 s, then the barrier's interior
#: point stopped at the rounding floor, all 569 multipliers free); a probe of 2000 stopped short
#: where SMO ends in 2000-6000 updates (γ ≥ 0.1), and the active-set method took 2-6 times SMO's
#: time there.
LARGE_C_KERNEL_N = 1000
LARGE_C = 1e5
LARGE_C_PROBE = 10_000

#: The table, read top to bottom; the first row whose kind and condition match decides. Times are
#: CPU seconds to tol = 1e-6 on one core (the machine shared), from
#: ``benchmarks/studies/bench_auto.py``.
RULES: tuple[Rule, ...] = (
    Rule(
        ("hard_margin",),
        _always,
        "any",
        ("barrier", "clarabel"),
        "barrier 0.10 s vs clarabel 0.63 s (n=5000, d=20), 0.09 vs 6.1 s (n=300, d=1000)",
    ),
    Rule(
        _LINEAR,
        lambda f: (
            f.loss == "squared_hinge"
            and f.d <= (SPARSE_MAX_D if f.sparse else DENSE_MAX_D)
            and (f.bias == "free" or f.C_R2 > SMALL_C_R2)
        ),
        f"squared hinge, d <= {DENSE_MAX_D} (CSR: {SPARSE_MAX_D}), a free bias or "
        f"C·mean‖x‖² > {SMALL_C_R2}",
        ("squared_hinge_newton", "dcd", "barrier", "clarabel"),
        "breast cancer, C=1/100: squared_hinge_newton 7.7/8.7 ms (8/12 steps) vs barrier "
        "9.3/6.9 ms, dcd 13/280 ms; gaussian n=5000, d=20, C=1/100: 2.9/10.8 ms vs barrier "
        "25/29 ms, dcd 257 ms/max_iter; d=100: 84/33 ms vs 49/121 ms; n=20000, d=50: 167/124 ms "
        "vs 205/213 ms, dcd 8.2 s/past 30 s",
    ),
    Rule(
        ("soft_margin_dual",),
        lambda f: f.bias == "free" and f.n * f.d <= 20_000,
        "free bias, n·d <= 20000",
        ("clarabel", "barrier"),
        "breast cancer (569×30): clarabel 0.03 s vs barrier 0.04-0.08 s",
    ),
    Rule(
        _LINEAR,
        lambda f: (
            f.bias == "free"
            and f.loss == "hinge"
            and f.n <= LINEAR_SMO_N
            and (f.n <= LINEAR_SMO_ROWS_PER_FEATURE * f.d or f.C_R2 <= LINEAR_SMO_C_R2)
        ),
        f"free bias, hinge, n <= {LINEAR_SMO_N}, and n <= {LINEAR_SMO_ROWS_PER_FEATURE}·d or "
        f"C·mean‖x‖² <= {LINEAR_SMO_C_R2:g}",
        ("linear_smo", "barrier", "clarabel", "accpm"),
        "digits pairs (about 360×64), C = 1e-2..1e10: linear_smo 0.9-1.1 ms a pair vs barrier "
        "2.3-4 ms; wine pairs 0.3-0.5 vs 0.9-1.3 ms; breast cancer (n = 19d, C·mean‖x‖² = 30C) "
        "at C = 0.3/1/3: 2.3/2.7/2.8 vs 2.8/2.7/3.1 ms (shrinking), at 10 6.5-8 vs 3 ms and 1e4 "
        "past 100 000 updates, where it is left out; iris pairs (25d) at C = 1-10: 1.8-2.3 vs "
        "3.9-5.7 ms",
        probe=LINEAR_SMO_PROBE,
    ),
    Rule(
        _LINEAR,
        lambda f: f.bias == "free",
        "free bias (dcd has no equality constraint)",
        ("barrier", "clarabel", "accpm"),
        "n=2000, d=20: barrier 0.01 s vs accpm 0.6-0.9 s, clarabel 0.07-0.1 s; digits pairs "
        "(about 360×64) at C = 1e10: the barrier stalls at a gap of 2e-5 (margins 1 − 1e-15, "
        "weighed C times) and ends after 20 iterations without progress, clarabel then 50 ms, "
        "accpm 15-20 s",
    ),
    Rule(
        _LINEAR,
        lambda f: f.n * f.d * f.density <= TINY,
        f"n·d <= {TINY} (a tiny problem)",
        ("dcd", "clarabel", "barrier"),
        "gaussian n=100, d=2, sep=6 and quadrant n=200, d=2, C=0.1-10: dcd 0.5-2.7 ms (8-745 "
        "epochs) vs clarabel 4.8-7.8 ms; breast cancer n=200, C=1: 2.5 vs 10 ms; gaussian n=200, "
        "d=5, C=1: 5 ms (5426 epochs) vs 7 ms; where dcd needs more, clarabel beat the barrier at "
        "n <= 200",
        probe=PROBE,
        probe_work=PROBE_WORK,
    ),
    Rule(
        _LINEAR,
        lambda f: f.C_R2 <= SMALL_C_R2,
        f"C·mean‖x‖² <= {SMALL_C_R2}",
        ("dcd", "barrier", "clarabel"),
        "n=5000, d=100: dcd 0.024/0.049/0.073 s vs barrier 0.076/0.062/0.062 s at C·mean‖x‖² = "
        "0.5/1/2; unscaled breast cancer at C=0.01 (2e4): dcd max_iter, barrier 0.008 s",
    ),
    Rule(
        _LINEAR,
        lambda f: not f.sparse and min(f.n, f.d) <= BARRIER_MIN_DIM,
        f"dense, min(n, d) <= {BARRIER_MIN_DIM}",
        ("barrier", "dcd", "clarabel"),
        "n=20000, d=50, C=1: barrier 0.17 s, dcd 2.2 s or max_iter; C=1e3: dcd max_iter",
    ),
    Rule(
        ("soft_margin_dual",),
        lambda f: not f.sparse,
        "dense, min(n, d) > 200",
        ("barrier", "dcd", "clarabel"),
        "n=d=500: barrier 0.055-0.074 s vs dcd 0.065-0.091 s, clarabel 0.5-0.8 s",
    ),
    Rule(
        _LINEAR,
        lambda f: min(f.n, f.d) <= 2000,
        "sparse, or a primal with min(n, d) > 200; min(n, d) <= 2000",
        ("dcd", "barrier"),
        "n=d=500 primal: dcd 0.03-0.1 s vs barrier 0.1-0.16 s",
    ),
    Rule(
        _LINEAR,
        _always,
        "sparse and large",
        ("dcd",),
        "n=d=20000, 0.2% dense: dcd 0.016 s; barrier past its 20 s limit",
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.kernel == "linear" and f.n <= 5000 and (f.C_max >= 10 or f.C_R2 >= 1e3),
        "the linear kernel, C >= 10 or C·mean‖x‖² >= 1e3, n <= 5000",
        ("barrier", "smo", "clarabel"),
        "gaussian d=20, C=100: barrier 0.11 s vs smo 5.8 s (n=500); 2.6 s vs smo past 20 s "
        "(n=2000); unscaled breast cancer, C=1: barrier 1.2 s, smo past 10 s; C·mean‖x‖² = 340: "
        "smo 0.045 vs barrier 0.063 s",
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.kernel == "poly" and f.kernel_rank <= f.n / 4 and f.n <= 5000 and f.C_R2 >= 1e3,
        "a polynomial kernel of low rank (monomials <= n/4), C·mean K_ii >= 1e3, n <= 5000",
        ("barrier", "smo", "clarabel"),
        "degree 3, C·mean K_ii = 2.2e3-2.8e3: barrier 2.2 vs smo 10 s (circles n=1500), 1.9 vs "
        "6.6 s (xor), 4.2 s vs smo max_iter (gaussian n=2000, d=4); at 230: 3.5 vs 0.9 s, 0.9 vs "
        "1.2 s; full rank (breast cancer, C=1e3): smo 0.1 vs barrier 0.55 s",
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.n <= SMALL_KERNEL_N,
        f"n <= {SMALL_KERNEL_N} (a small dual: its Gram matrix is cheap)",
        ("smo", "active_set", "barrier", "clarabel"),
        "iris pairs (80 points), RBF γ = 1e-9..1e3: smo 1.3-7 ms where C <= 1e4, 12 ms to 10 s "
        "or numerical_error at C = 1e7-1e10; after smo's probe, active_set 1-23 changes, "
        "5-25 ms in all, certified to C = 1e10; a probe stopped short at C·max K̃_ii <= 1e6 "
        "gets the exact finish of its point first (23 of 27 iris grid pairs at C = 1e4-1e6 "
        "certified, in about a quarter of active_set's time)",
        probe=SMALL_KERNEL_PROBE,
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.kernel == "rbf" and f.n <= LARGE_C_KERNEL_N and f.C_max >= LARGE_C,
        f"RBF, n <= {LARGE_C_KERNEL_N}, C >= {LARGE_C:.0e}",
        ("smo", "active_set", "barrier", "clarabel"),
        "breast cancer (569 points), γ = 1e-9..1e-1, C = 1e5-1e10: smo alone 2 ms to past 3 s "
        "(numerical_error at C >= 1e8, γ >= 1e-3; the barrier after it stopped at the rounding "
        "floor, 0.25-57 s in all), the probe then active_set 2-470 ms, certified; digits 3 "
        "against 8 (357 points), C = 1e10, γ <= 1e-3: smo numerical_error, probe and active_set "
        "50-100 ms, certified",
        probe=LARGE_C_PROBE,
    ),
    Rule(
        ("kernel_dual",),
        lambda f: f.kernel == "rbf" and not f.sparse and f.n >= 1000 and f.d >= 5,
        "RBF on dense rows, n >= 1000, d >= 5",
        ("smo_batch", "smo", "barrier", "clarabel"),
        "gaussian d=20, C=1: smo_batch 0.046 vs smo 0.078 s (n=2000), 0.29 vs 0.60 s (n=5000), "
        "3.1 vs 6.8 s (n=10 000; LIBSVM 12 s); n=1000, C=1/1e3: 0.78x/0.86x smo's time; d=5, "
        "n=2000: 0.95x/0.64x; d=2 (circles n=1500-6000, C=1): 2-4.6x smo's time, the kernel "
        "rows too cheap for its GEMM blocks to pay",
    ),
    Rule(
        ("kernel_dual",),
        _always,
        "otherwise",
        ("smo", "barrier", "clarabel"),
        "RBF: smo 0.007-0.08 s vs barrier 0.03-0.07 s (n=500), 0.13-1.1 vs 1.0-2.0 s (n=2000)",
    ),
    Rule(
        ("multiclass_hinge",),
        lambda f: f.n * f.n_classes <= 1000 and f.C_R2 > MULTICLASS_SMALL_C_R2,
        f"n·k <= 1000 (a small QP) and C·mean‖x‖² > {MULTICLASS_SMALL_C_R2}",
        ("clarabel", "cs_dcd"),
        "unscaled wine (178×3), C=1e-3..1e3: clarabel 0.017-0.025 s, cs_dcd 0.7 s to its cap; "
        "iris, C=10/100: clarabel 0.008-0.012 s vs cs_dcd 0.015-0.85 s; C=1 (C·mean‖x‖² = 4): "
        "cs_dcd 0.008 vs clarabel 0.016 s",
    ),
    Rule(
        ("multiclass_hinge",),
        _always,
        "otherwise",
        ("cs_dcd", "clarabel"),
        "digits: cs_dcd 0.2-17 s vs clarabel 37-70 s; iris, C=0.1: cs_dcd 0.003-0.005 s vs "
        "clarabel 0.006-0.011 s",
    ),
    Rule(
        ("logistic",),
        lambda f: (
            f.bias != "free"
            and f.n * f.d * f.density <= LOGISTIC_SMALL
            and f.C_R2 <= LOGISTIC_SMALL_C_R2
        ),
        f"bias regularized or none, nnz(X) <= {LOGISTIC_SMALL}, C·mean‖x‖² <= "
        f"{LOGISTIC_SMALL_C_R2:g}",
        ("logistic_dcd", "logistic_newton", "logistic_cvxpy"),
        "breast cancer n=200 (C·mean‖x‖² = 0.33/33 at C = 0.01/1): logistic_dcd 0.002/0.027 s "
        "vs logistic_newton 0.012/0.055 s; gaussian n=100, d=2 (3.2 at C=1): 0.001 vs 0.003-0.01 "
        "s; at C·mean‖x‖² = 320-3e5 (C = 100, 1e4) Newton 0.024-0.095 s, dcd 2-4x that",
        probe=LOGISTIC_PROBE,
        probe_work=LOGISTIC_PROBE_WORK,
    ),
    Rule(
        ("logistic",),
        _always,
        "otherwise",
        ("logistic_newton", "logistic_cvxpy"),
        "gaussian n=20000, d=50, C=0.01/1/100/1e4: logistic_newton 0.19/0.17/0.29/0.21 s vs "
        "logistic_dcd 0.38/5.2 s/past 20 s/past 20 s; n=5000, d=5, C=1e4: 0.04 s vs past 20 s; "
        "sparse n=d=3000 (1%), C=0.01/1/100: 0.03/0.08/0.42 vs 0.05/0.12/0.34 s, C=1e4: 2.2 "
        "vs 0.82 s (dcd's one win, left to it by no rule: one data set); n=d=20000 (0.2%), "
        "C=1: 0.96 vs 2.5 s; unscaled breast cancer, C=1: 0.09 s vs dcd max_iter",
    ),
    Rule(
        ("svr_dual",),
        lambda f: f.kernel == "rbf" and not f.sparse and f.n >= SVR_BATCH_MIN_N,
        f"RBF on dense rows, n >= {SVR_BATCH_MIN_N}",
        ("smo_batch", "smo", "barrier", "clarabel"),
        "friedman1 (d=10), C=1/100: smo_batch 0.41/1.5 s vs smo 0.90/2.3 s (n=1000), 6.7 vs "
        "10.6 s (n=5000, C=1); regression n=2000, d=50: 0.47/0.85 vs 3.1/5.3 s; diabetes "
        "(n=442): 0.038/0.39 vs 0.039/0.84 s; n=10 000: 13.8 vs 32 s (LIBSVM 33 s); one-class "
        "(outliers n=3000, d=2/20) measured equal, left to smo",
    ),
    Rule(
        ("svr_dual", "nu_svr"),
        lambda f: f.kernel == "linear",
        "a linear kernel",
        ("smo", "barrier", "clarabel"),
        "standardized diabetes (d=10), n=150/442: C=1: smo 6306/7520 updates (0.018 s at "
        "n=442) vs barrier 0.08/0.27 s; C=100 and 1e4: smo short of tol after 200 000 updates "
        "(0.42-1.5 s), barrier 0.08-0.34 s (11-12 Newton steps); without the probe, auto ran "
        "smo to its max_iter first (16 s at n=150, C=1e4; ν-SVR 25 s, where C=1 took smo 6455 "
        "updates)",
        probe=SVR_LINEAR_PROBE,
    ),
    Rule(
        ("svr_dual", "nu_svc", "nu_svr", "one_class"),
        _always,
        "any (LIBSVM's family, the generalized SMO)",
        ("smo", "barrier", "clarabel"),
        "RBF, n=300/1000: ε-SVR (friedman1) C=1: smo 0.029/0.15 s vs barrier 0.23/2.1 s, C=100: "
        "0.10/0.73 vs 0.28/3.5 s; ν-SVC ν=0.3: 0.025/0.30 vs 0.14/0.74 s; ν-SVR: 0.013/0.076 vs "
        "0.25/2.2 s; one-class ν=0.1: 0.005/0.015 vs 0.063/0.46 s",
    ),
    Rule(
        ("svr_primal",),
        lambda f: f.loss == "squared_epsilon_insensitive" and f.d <= f.n,
        "squared ε-insensitive loss, d <= n",
        ("svr_newton", "svr_dcd", "clarabel"),
        "friedman1 n=1000, C=0.01/1/100/1e4: svr_newton 0.008-0.027 s (svr_dcd 0.021 s at C=0.01, "
        "0.088 s at C=1), clarabel 0.7-0.9 s; regression n=5000, d=50: 0.045-0.078 s vs svr_dcd "
        "0.073/1.25 s (C=0.01/1), clarabel past 20 s",
    ),
    Rule(
        ("svr_primal",),
        lambda f: f.loss == "squared_epsilon_insensitive",
        "squared ε-insensitive loss, d > n",
        ("svr_dcd", "svr_newton", "osqp", "clarabel"),
        "regression n=200, d=1000, C=0.01/1/100/1e4: svr_dcd 0.030-0.085 s, clarabel past 20 s; "
        "a free bias (no dcd): osqp 2.9 s, svr_newton 130-140 Newton steps at C=1e4-1e5 (4-7 s "
        "at a load of 6-9)",
    ),
    Rule(
        ("svr_primal",),
        lambda f: f.bias == "free",
        "the plain ε-insensitive loss, a free bias (svr_dcd has no equality constraint)",
        ("clarabel", "osqp"),
        "C=1: friedman1 n=1000: clarabel 0.45 s; n=5000, d=50: 20 s; n=200, d=1000: osqp 1.8 s, "
        "clarabel 13 s",
    ),
    Rule(
        ("svr_primal",),
        lambda f: f.d > f.n or f.C_R2 <= SVR_DCD_C_R2,
        f"the plain ε-insensitive loss, d > n or C·mean‖x‖² <= {SVR_DCD_C_R2:g}",
        ("svr_dcd", "clarabel"),
        "friedman1 n=1000, C=0.01/1: svr_dcd 0.028/0.19 s vs clarabel 0.46/0.62 s; regression "
        "n=5000, d=50, C=0.01: 0.53 vs 19 s; n=200, d=1000, C=0.01/1: 0.047/0.066 vs 12/14 s",
    ),
    Rule(
        ("svr_primal",),
        _always,
        "otherwise (the plain loss at larger C·mean‖x‖², d <= n)",
        ("clarabel", "svr_dcd"),
        "regression n=5000, d=50, C=1 (C·mean‖x‖² = 50): clarabel 15-20 s, svr_dcd past 20 s",
    ),
    Rule(
        ("multinomial_logistic",),
        _always,
        "any",
        ("multinomial_newton", "logistic_cvxpy"),
        "iris, wine, C=0.01/1/1e3: multinomial_newton 14-185 ms vs logistic_cvxpy 0.18-0.68 s; "
        "digits (1797×64, k=10): 0.24/0.45/2.1 s",
    ),
)


def rules_markdown() -> str:
    """:data:`RULES` as the Markdown table in README.md (a test keeps the two equal)."""
    lines = [
        "| # | problem | when | runs (then, if short of tol) | measured |",
        "|---|---|---|---|---|",
    ]
    for index, rule in enumerate(RULES):
        names = [f"`{name}`" for name in rule.solvers]
        if rule.probe_work:
            names[0] += f" (max({rule.probe}, {rule.probe_work:.0e}/nnz(X)) iterations)"
        elif rule.probe:
            names[0] += f" ({rule.probe} iterations)"
        runs = ", ".join(names)
        kinds = ", ".join(rule.kinds)
        lines.append(f"| {index} | {kinds} | {rule.condition} | {runs} | {rule.measured} |")
    return "\n".join(lines)
