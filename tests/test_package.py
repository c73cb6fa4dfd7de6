"""The installed package: one import name, light to import, a version everywhere.

Each check runs in a fresh interpreter whose working directory is a temporary folder, so that the
repository's root folders (``problems/``, ``solvers/``, ``benchmarks/``) are not on ``sys.path``:
what it sees is what a user who installed svmbench sees.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import svmbench
from tests.fresh_process import run_python

HEAVY = ("numba", "cvxpy", "clarabel", "osqp", "matplotlib", "dask")


def _python(code: str, tmp_path) -> subprocess.CompletedProcess:
    return run_python(code, tmp_path)


def test_import_svmbench_is_light(tmp_path):
    code = (
        f"import json, sys, svmbench; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_problems_and_the_estimator_module_load_without_numba(tmp_path):
    """Numba loads with a solver's jitted cores or a kernel product too large for BLAS, not
    with the problems: a fit whose method runs no jitted code never imports it."""
    code = (
        "import json, sys, svmbench.problems, svmbench.estimators;"
        "print(json.dumps([m for m in ('numba', 'llvmlite') if m in sys.modules]))"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_fit_of_the_estimator_loads_no_scoring_module(tmp_path):
    """scikit-learn's metrics (its scorers and pairwise kernels) load when a kernel matrix is
    built, not with the problems or the estimators."""
    code = (
        "import json, sys, svmbench.problems, svmbench.estimators, svmbench.solvers.auto;"
        "print(json.dumps('sklearn.metrics' in sys.modules))"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) is False


@pytest.mark.parametrize(("collecting", "frozen"), [(True, False), (False, False), (True, True)])
def test_the_jitted_package_loads_numba_and_leaves_the_collector_as_it_was(
    tmp_path, collecting, frozen
):
    """``svmbench.solvers._jit`` imports Numba and loads its registries (what the first cache
    load needs: Numba's array and math implementations) with the garbage collector paused,
    resumes it only if it ran before, and leaves nothing frozen that was not (a freeze of the
    caller's stays as it was)."""
    code = (
        "import gc, json, sys\n"
        f"{'' if collecting else 'gc.disable()'}\n"
        "marker = [object()]\n"
        f"{'gc.freeze()' if frozen else ''}\n"
        "import svmbench.solvers._jit\n"
        "still_frozen = not any(o is marker for o in gc.get_objects())\n"
        "print(json.dumps([gc.isenabled(), still_frozen, gc.get_freeze_count() > 0,"
        " 'numba.np.arraymath' in sys.modules, 'numba.cpython.mathimpl' in sys.modules]))"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [collecting, frozen, frozen, True, True]


@pytest.mark.parametrize("name", ["problems", "solvers", "benchmarks"])
def test_no_generic_top_level_names(tmp_path, name):
    done = _python(f"import {name}", tmp_path)
    assert done.returncode != 0
    assert "ModuleNotFoundError" in done.stderr


def test_subpackages_resolve_under_svmbench(tmp_path):
    code = (
        "import svmbench.problems, svmbench.solvers, svmbench.benchmarks;"
        "print(svmbench.problems.__name__, svmbench.solvers.__name__)"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["svmbench.problems", "svmbench.solvers"]


def test_only_svmbench_is_installed_at_top_level():
    # the record in site-packages, not a build's svmbench.egg-info in the working directory
    site = Path(sysconfig.get_paths()["purelib"])
    (info,) = site.glob("svmbench-*.dist-info")
    files = importlib.metadata.PathDistribution(info).files or ()
    top = {
        str(f).split("/")[0].removesuffix(".py")
        for f in files
        if not str(f).split("/")[0].endswith((".dist-info", ".pth", "__pycache__"))
        and "__editable__" not in str(f)
    }
    assert top <= {"svmbench", ".."}, top


def test_version_everywhere(tmp_path):
    assert (
        svmbench.__version__
        == importlib.metadata.PathDistribution(
            next(Path(sysconfig.get_paths()["purelib"]).glob("svmbench-*.dist-info"))
        ).version
    )
    done = subprocess.run(
        [sys.executable, "-m", "svmbench.benchmarks.cli.main", "--version"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"svmbench {svmbench.__version__}"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        svmbench.nonexistent  # noqa: B018
