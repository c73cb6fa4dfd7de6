"""Suites fail loudly: every mistake is an error naming the file, the line and the choices."""

from __future__ import annotations

import warnings

import pytest

from svmbench.benchmarks.harness.cases import data_size, expand
from svmbench.benchmarks.harness.settings import Settings
from svmbench.benchmarks.harness.suite_files import MAX_SUITE_BYTES, load_suite, shipped_suites

GOOD = """name = "s"
data = ["gaussian:n=20,d=2,sep=2,seed=0"]
solvers = ["clarabel"]
[[problems]]
kind = "soft_margin_primal"
"""


def _write(tmp_path, text):
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('tolerance = 1e-6\n' + GOOD, r"line 1: unknown key 'tolerance'.*valid keys"),
        ('solver = ["dcd"]\n' + GOOD, r"line 1: unknown key 'solver' \(did you mean 'solvers'"),
        (GOOD.replace('"clarabel"', '"clarabell"'), r"line 3: unknown solver 'clarabell'"),
        (GOOD.replace('data = ["gaussian:n=20,d=2,sep=2,seed=0"]', 'data = "gaussian:n=20"'),
         r"line 2: data must be a list"),
        (GOOD.replace('data = ["gaussian:n=20,d=2,sep=2,seed=0"]', "data = []"),
         "the grid is empty: no data"),
        (GOOD.replace('solvers = ["clarabel"]', "solvers = []"), "the grid is empty: no solvers"),
        (GOOD.split("[[problems]]")[0], "the grid is empty: no problems"),
        (GOOD.replace('"soft_margin_primal"', '"soft_margin"'), "unknown problem kind"),
        (GOOD + "Cee = 1.0\n", r"unknown parameter 'Cee' of soft_margin_primal"),
        (GOOD.replace('["clarabel"]', '[{name = "dcd", epz = 0.1}]'), r"solver 'dcd'.*epz"),
        (GOOD.replace('["clarabel"]', '[{name = "osqp", polish = "false"}]'), r"polish"),
        (GOOD.replace('["clarabel"]', '[{name = "dcd", tol = -1.0}]'), r"tol must be"),
        ("tol = -1\n" + GOOD, r"line 1: tol must be a finite number > 0"),
        ("memory_limit_mb = -5\n" + GOOD, r"memory_limit_mb must be a finite number > 0"),
        ("repeat = 0\n" + GOOD, r"repeat must be an integer >= 1"),
        ("split = 1.5\n" + GOOD, r"split must be a fraction"),
        ("seeds = 3\n" + GOOD, r"seeds must be a list"),
        ('imports = ["no_such_module_xyz"]\n' + GOOD, r"cannot import 'no_such_module_xyz'"),
        ("[options.nosuch]\nmax_iter = 3\n" + GOOD, r"unknown solver 'nosuch'"),
        ("name = \n", "not valid TOML"),
        ("a = " + "[" * 3000 + "]" * 3000 + "\n" + GOOD, "nested 3000 deep, over the limit of 32"),
        ("a = " + "{b = " * 2000 + "1" + "}" * 2000 + "\n", "nested 2000 deep"),
        ("imports = 5\n" + GOOD, r"line 1: imports must be a list of module names"),
        ("imports = [5]\n" + GOOD, r"line 1: imports must be a list of module names"),
        ("options = [1]\n" + GOOD, r"line 1: options must be a table, got \[1\]"),
        ("solver_options = [1]\n" + GOOD, r"line 1: solver_options must be a table"),
        (GOOD.replace('"soft_margin_primal"', '["x"]'), r"line 5: unknown problem kind \['x'\]"),
        (GOOD.replace('["clarabel"]', '[{name = ["x"]}]'), r"a solver's name must be a string"),
        (GOOD.replace('name = "s"', "name = 5"), r"line 1: name must be a string, got 5"),
    ],
    ids=[
        "unknown-key", "near-miss-key", "unknown-solver", "data-string", "empty-data",
        "empty-solvers", "no-problems", "unknown-kind", "unknown-param", "unknown-option",
        "string-bool-option", "negative-solver-tol", "negative-tol", "negative-memory",
        "zero-repeat", "split-above-one", "seeds-scalar", "bad-import", "options-unknown-solver",
        "bad-toml", "deep-arrays", "deep-tables", "imports-int", "imports-list-int",
        "options-list", "solver-options-list", "kind-list", "solver-name-list", "name-int",
    ],
)  # fmt: skip
def test_bad_suites_are_errors_naming_the_file(tmp_path, text, match):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=match) as info:
        load_suite(str(path))
    assert str(path) in str(info.value)


def test_a_good_suite_loads_and_expands(tmp_path):
    suite = load_suite(str(_write(tmp_path, GOOD)))
    cases, skipped = expand(suite, Settings.from_suite(suite))
    assert len(cases) == 1 and not skipped


@pytest.mark.parametrize("name", shipped_suites())
def test_shipped_suites_are_valid(name):
    load_suite(name)


def test_suites_built_from_flags_are_validated_too():
    suite = {"data": ["gaussian:n=20"], "solvers": ["dcd"], "problems": [], "tolerance": 1}
    with pytest.raises(ValueError, match="unknown key 'tolerance'"):
        expand(suite)


def test_the_big_sizes_stay_out_of_the_default_and_ci_suites():
    for name in ("default", "ci"):
        sizes = [data_size(spec) or 0 for spec in load_suite(name)["data"]]
        assert max(sizes) <= 10_000, name


def test_scaling_gives_smo_batch_the_cache_and_time_of_the_exact_kernel_svm_at_n_1e5():
    suite = load_suite("scaling")
    big = max(suite["data"], key=data_size)
    assert data_size(big) == 100_000
    kernel = [p for p in suite["problems"] if p["kind"] == "kernel_dual"]
    suite = {**suite, "data": [big], "problems": kernel}
    settings = Settings.from_suite(suite)
    cases, _ = expand(suite, settings)
    by_name = {case.solver: case for case in cases}
    batch, smo = by_name["smo_batch"], by_name["smo"]
    assert batch.solver_options["cache_mb"] == 1024
    # the worker's kill limit follows the solver's own limit, the others keep the suite's
    assert settings.hard_limit(batch) >= 1800 > settings.hard_limit(smo)


def test_a_suite_path_that_is_no_regular_file_is_refused_unread(tmp_path, fifo, returns_within):
    path, unblock = fifo
    suite = path.rename(tmp_path / "pipe.toml")
    with pytest.raises(ValueError, match="pipe.toml: not a regular file but a FIFO"):
        returns_within(10, lambda: load_suite(str(suite)), unblock=unblock)
    (tmp_path / "x.toml").mkdir()
    with pytest.raises(ValueError, match="x.toml: not a regular file but a directory"):
        load_suite(str(tmp_path / "x.toml"))
    big = _write(tmp_path, GOOD + "# " + "x" * MAX_SUITE_BYTES + "\n")
    with pytest.raises(ValueError, match=f"over the cap of {MAX_SUITE_BYTES} bytes"):
        load_suite(str(big))
    latin = tmp_path / "latin.toml"
    latin.write_bytes(GOOD.replace('"s"', '"\xe9"').encode("latin-1"))
    with pytest.raises(ValueError, match="latin.toml: not UTF-8 text"):
        load_suite(str(latin))


def test_brackets_inside_strings_and_comments_do_not_count_as_nesting(tmp_path):
    text = f'description = "{"[" * 40}"  # {"{" * 40}\n'
    suite = load_suite(str(_write(tmp_path, text + GOOD)))
    assert suite["description"].startswith("[[[")


def test_a_suite_with_the_former_option_names_loads_and_maps(tmp_path):
    """Before 0.2.0 a reference's library tolerance was ``tol`` and its certified gap
    ``gap_check``: such a suite is read in today's names (``eps``, ``tol``), with a
    ``FutureWarning`` naming the file and the line."""
    text = GOOD.replace(
        'solvers = ["clarabel"]',
        'solvers = ["dcd", { name = "osqp", tol = 1e-9, gap_check = 1e-8 }]\n'
        "[options.clarabel]\ngap_check = 1e-7",
    )
    path = _write(tmp_path, text)
    with pytest.warns(FutureWarning, match=r"line 3: .*'gap_check' is now 'tol'") as caught:
        suite = load_suite(str(path))
    assert len(caught) == 1 and str(path) in str(caught[0].message)
    assert suite["solvers"] == ["dcd", {"name": "osqp", "eps": 1e-9, "tol": 1e-8}]
    assert suite["options"] == {"clarabel": {"tol": 1e-7}}
    cases, _ = expand({**suite, "solvers": [*suite["solvers"], "clarabel"]})
    options = {c.solver: c.solver_options for c in cases}
    assert options["osqp"]["eps"] == 1e-9 and options["osqp"]["tol"] == 1e-8
    assert options["clarabel"]["tol"] == 1e-7 and "eps" not in options["clarabel"]
    # a suite of today's names loads without a warning, unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_suite(str(_write(tmp_path, GOOD)))["solvers"] == ["clarabel"]
