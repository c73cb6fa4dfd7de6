"""The registry's tables of where each solver lives, and what resolving one name imports."""

from __future__ import annotations

import json

import pytest

from svmbench.solvers import registry
from tests.fresh_process import run_python


def test_the_tables_name_every_registered_solver_and_its_module():
    homes = registry.METHOD_HOMES | registry.ANCHOR_HOMES
    assert not set(registry.METHOD_HOMES) & set(registry.ANCHOR_HOMES)
    shipped = [  # other tests register stand-ins of their own
        name
        for name in registry.names() + registry.anchor_names()
        if registry.solver_class(name).__module__.startswith("svmbench.solvers.")
    ]
    assert sorted(homes) == sorted(shipped)
    for name, module in homes.items():
        cls = registry.solver_class(name)
        assert cls.__module__ == module, name
        assert cls.anchor == (name in registry.ANCHOR_HOMES), name


@pytest.mark.parametrize("name", [None, 3, ["smo"]])
def test_a_name_that_is_no_string_is_a_type_error(name):
    with pytest.raises(TypeError, match="solver must be a name"):
        registry.solver_class(name)


def test_an_unknown_name_lists_the_close_ones():
    with pytest.raises(ValueError, match="did you mean 'smo'"):
        registry.solver_class("smoo")


def test_a_fit_imports_the_module_of_its_solver_only(tmp_path):
    """A fit by ``active_set`` (NumPy only) loads neither another method, nor an anchor, nor
    Numba: the registry imports the module its name is defined in, not all of them."""
    code = (
        "import json, sys\n"
        "from sklearn.datasets import load_iris\n"
        "X, y = load_iris(return_X_y=True)\n"
        "import svmbench\n"
        "svmbench.SVMClassifier(solver='active_set').fit(X, y == 0)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('svmbench.solvers.', "
        "'numba')))))\n"
    )
    done = run_python(code, tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "svmbench.solvers.active_set" in loaded
    others = set(registry.METHOD_HOMES.values()) - {"svmbench.solvers.active_set"}
    assert not others & set(loaded)
    assert not set(registry.ANCHOR_HOMES.values()) & set(loaded)
    assert not any(m == "numba" or m.startswith("numba.") for m in loaded)


def test_known_names_import_no_solver_module(tmp_path):
    """``known`` answers from the tables (the regressors' and ν estimators' "auto" ask it):
    listing the names would import every method and anchor."""
    code = (
        "import json, sys\n"
        "from svmbench.solvers import registry\n"
        "answers = [registry.known(n) for n in ('smo', 'libsvm', 'auto', 'smoo')]\n"
        "print(json.dumps([answers, sorted(m for m in sys.modules"
        " if m.startswith('svmbench.solvers.') and m != 'svmbench.solvers.registry')]))\n"
    )
    done = run_python(code, tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    answers, loaded = json.loads(done.stdout)
    assert answers == [True, True, True, False]
    assert not (set(registry.METHOD_HOMES.values()) | set(registry.ANCHOR_HOMES.values())) & set(
        loaded
    )
