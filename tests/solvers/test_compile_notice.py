"""The first-run notice (issue 25): one line on stderr before a warm-up whose compilation has
never finished here, none once it has; SMO and the barrier compile only the variant a problem
runs (SMO: rows, column dtype, updates; the barrier: rows and loss), SMO the fused kernel
product only for problems whose certificates may take it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import (
    HardMarginPrimal,
    KernelDual,
    SoftMarginDual,
    SoftMarginPrimal,
    kernels,
)
from svmbench.solvers import compile_notice, registry, smo
from svmbench.solvers.barrier import primal_dual_margins


@pytest.fixture
def fresh_markers(monkeypatch, tmp_path):
    """An empty marker folder: every warm-up looks like a first one on this machine."""
    monkeypatch.setattr(compile_notice, "CACHE_DIR", tmp_path)
    return tmp_path


def test_the_notice_appears_once_then_never(fresh_markers, capsys):
    with compile_notice.compiling("smo-test", "smo", "dense rows"):
        pass
    first = capsys.readouterr().err
    assert first.count("\n") == 1
    assert first.startswith("svmbench: compiling smo for dense rows (once per machine")
    assert not compile_notice.needs_compiling("smo-test")
    with compile_notice.compiling("smo-test", "smo", "dense rows"):
        pass
    assert capsys.readouterr().err == ""


def test_a_failed_warm_up_leaves_no_marker(fresh_markers, capsys):
    with pytest.raises(RuntimeError), compile_notice.compiling("broken", "smo", "rows"):
        raise RuntimeError("compilation failed")
    assert compile_notice.needs_compiling("broken")


def test_an_unwritable_cache_still_compiles(monkeypatch, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(compile_notice, "CACHE_DIR", blocker)  # markers cannot be written
    with compile_notice.compiling("any", "dcd", "rows"):
        ran = True
    assert ran and compile_notice.needs_compiling("any")


def _problem(rows):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [0.5, 0.2]])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    return KernelDual(sparse.csr_matrix(X) if rows == "csr" else X, y, C=1.0, gamma=0.5)


def test_smo_compiles_and_announces_only_the_variant_a_problem_runs(
    fresh_markers, monkeypatch, capsys
):
    monkeypatch.setattr(smo, "_WARM", False)
    monkeypatch.setattr(smo, "_WARM_VARIANTS", set())
    solver = registry.get("smo", storage="csr")
    assert solver.warm_up_for(_problem("csr")) >= 0.0
    err = capsys.readouterr().err
    assert err.count("svmbench: compiling smo for csr rows, float64 columns, pair updates") == 1
    assert smo._WARM_VARIANTS == {("csr", np.float64, True, False)}
    assert not compile_notice.needs_compiling("smo-csr-float64-pairs")
    for other in ("smo-dense-float64-pairs", "smo-csr-float32-pairs", "smo-csr-float64-single"):
        assert compile_notice.needs_compiling(other)
    # the same variant again: nothing to compile, nothing said; a solve says nothing either
    assert solver.warm_up_for(_problem("csr")) == 0.0
    result = solver.solve(_problem("csr"))
    assert result.status.value == "optimal" and result.compile_time == 0.0
    assert capsys.readouterr().err == ""
    assert not smo._WARM  # the other variants were never compiled


def test_smo_compiles_the_fused_kernel_product_only_for_problems_that_may_take_it(
    fresh_markers, monkeypatch, capsys
):
    """A certificate over at most √NUMPY_MAX_ENTRIES dense rows is a BLAS product: a small
    problem's warm-up leaves the fused product alone, a larger one's compiles it (untimed)."""
    monkeypatch.setattr(smo, "_WARM", False)
    monkeypatch.setattr(smo, "_WARM_PRODUCT", False)
    monkeypatch.setattr(smo, "_WARM_VARIANTS", set())
    solver = registry.get("smo")
    solver.warm_up_for(_problem("dense"))
    assert smo._WARM_VARIANTS == {("dense", np.float64, True, False)} and not smo._WARM_PRODUCT
    assert compile_notice.needs_compiling("kernel-product")
    monkeypatch.setattr(kernels, "NUMPY_MAX_ENTRIES", 24)  # 5 rows: 25 entries
    assert solver.warm_up_for(_problem("dense")) > 0.0
    assert smo._WARM_PRODUCT and not compile_notice.needs_compiling("kernel-product")
    assert "svmbench: compiling certificates for kernel products of dense rows" in (
        capsys.readouterr().err
    )
    assert solver.warm_up_for(_problem("dense")) == 0.0


def _primal(loss, rows="dense", C=1.0):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X = sparse.csr_matrix(X) if rows == "csr" else X
    if loss == "hard":
        return HardMarginPrimal(X + 3.0 * y[:, None], y, bias="free")
    return SoftMarginPrimal(X, y, C=C, loss=loss, bias="free")


def test_barrier_compiles_and_announces_only_the_loss_and_rows_a_problem_runs(
    fresh_markers, monkeypatch, capsys
):
    monkeypatch.setattr(primal_dual_margins, "_WARM_VARIANTS", set())
    solver = registry.get("barrier")
    assert solver.warm_up_for(_primal("squared_hinge")) >= 0.0
    err = capsys.readouterr().err
    assert err.count("svmbench: compiling barrier for dense rows, the squared hinge loss") == 1
    assert err.count("\n") == 1
    assert primal_dual_margins.compiled_passes() == {("dense", "squared_hinge")}
    assert not compile_notice.needs_compiling("barrier-dense-squared_hinge")
    for other in ("barrier-dense-hinge", "barrier-csr-int32-squared_hinge", "barrier-dense-hard"):
        assert compile_notice.needs_compiling(other)
    # again, and a solve: nothing compiled, nothing said
    assert solver.warm_up_for(_primal("squared_hinge")) == 0.0
    result = solver.solve(_primal("squared_hinge"))
    assert result.status.value == "optimal" and result.compile_time == 0.0
    assert capsys.readouterr().err == ""
    # CSR rows and the hard margin's phase II are variants of their own
    solver.warm_up_for(_primal("hinge", rows="csr"))
    solver.warm_up_for(_primal("hard"))
    assert primal_dual_margins.compiled_passes() == {
        ("dense", "squared_hinge"),
        ("csr-int32", "hinge"),
        ("dense", "hard"),
    }
    assert capsys.readouterr().err.count("svmbench: compiling barrier") == 2


def test_barrier_runs_no_jitted_code_on_the_dual_forms(fresh_markers, monkeypatch, capsys):
    monkeypatch.setattr(primal_dual_margins, "_WARM_VARIANTS", set())
    primal = _primal("hinge")
    dual = SoftMarginDual(primal.X, primal.y, C=1.0, loss="hinge", bias="free")
    assert registry.get("barrier").warm_up_for(dual) == 0.0
    wide = SoftMarginPrimal(np.eye(3, 8), np.array([1.0, -1.0, 1.0]), C=1.0, bias="free")
    assert registry.get("barrier").warm_up_for(wide) == 0.0  # d > n: the NumPy iteration
    assert primal_dual_margins.compiled_passes() == frozenset()
    assert capsys.readouterr().err == ""


def test_the_full_barrier_warm_up_says_one_line_and_marks_every_variant(
    fresh_markers, monkeypatch, capsys
):
    monkeypatch.setattr(primal_dual_margins, "_WARM_VARIANTS", set())
    registry.get("barrier").warm_up()
    assert capsys.readouterr().err.count("\n") == 1
    for storage in primal_dual_margins.ROW_STORAGES:
        for loss in primal_dual_margins.LOSSES:
            assert not compile_notice.needs_compiling(f"barrier-{storage}-{loss}")
    assert registry.get("barrier").warm_up() == 0.0
    assert capsys.readouterr().err == ""
