"""The first-run notice (issue 25): one line on stderr before a warm-up whose compilation has
never finished here, none once it has; SMO compiles only the variant a problem runs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from svmbench.problems import KernelDual
from svmbench.solvers import compile_notice, registry, smo


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
    assert smo._WARM_VARIANTS == {("csr", np.float64, True)}
    assert not compile_notice.needs_compiling("smo-csr-float64-pairs")
    for other in ("smo-dense-float64-pairs", "smo-csr-float32-pairs", "smo-csr-float64-single"):
        assert compile_notice.needs_compiling(other)
    # the same variant again: nothing to compile, nothing said; a solve says nothing either
    assert solver.warm_up_for(_problem("csr")) == 0.0
    result = solver.solve(_problem("csr"))
    assert result.status.value == "optimal" and result.compile_time == 0.0
    assert capsys.readouterr().err == ""
    assert not smo._WARM  # the other variants were never compiled
