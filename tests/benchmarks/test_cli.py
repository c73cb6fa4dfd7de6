"""The first commands: ``svmbench list``, ``solve`` and ``run``, through ``main(argv)``."""

from __future__ import annotations

import json
import re
import sqlite3
import time

import numpy as np
import pytest

from svmbench import SVMClassifier
from svmbench.benchmarks.cli import main as cli
from svmbench.benchmarks.harness.cases import expand
from svmbench.benchmarks.harness.suite_files import load_suite
from svmbench.problems.datasets import load as load_dataset
from svmbench.problems.model_files import save_model


def run(capsys, *argv):
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def fail(capsys, *argv):
    """A command that must fail: its exit code and its one line on stderr (``error: ...``)."""
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    assert code != 0, captured.out
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    assert "error" not in captured.out
    return code, captured.err


def test_list_names_problems_solvers_and_datasets(capsys):
    code, out = run(capsys, "list")
    assert code == 0
    for name in ("soft_margin_primal", "kernel_dual", "multiclass_hinge", "osqp", "clarabel"):
        assert name in out
    for name in ("gaussian", "quadrant", "breast_cancer", "digits", "libsvm"):
        assert name in out


def test_solve_prints_the_certified_record(capsys):
    code, out = run(
        capsys,
        "solve",
        "--problem", "soft_margin_primal",
        "--data", "gaussian:n=100,d=3,sep=1,seed=0",
        "--solver", "clarabel",
        "--C", "0.5",
    )  # fmt: skip
    assert code == 0
    assert "optimal" in out
    gap = float(re.search(r"relative gap\s*│?\s*([-0-9.e+]+)", out).group(1))
    assert abs(gap) <= 1e-8
    assert "True" in out  # certified


def test_solve_reports_bad_input_as_an_error(capsys):
    code, err = fail(
        capsys, "solve", "--problem", "kernel_dual", "--data", "iris", "--solver", "osqp"
    )
    assert code == 2
    assert "y must contain only -1 and +1" in err
    code, err = fail(capsys, "solve", "--problem", "soft_margin_primal", "--data", "nosuch",
                     "--solver", "osqp")  # fmt: skip
    assert code == 2 and "nosuch" in err


def test_run_on_a_small_suite_prints_a_row_per_case(capsys, tmp_path):
    suite = tmp_path / "tiny.toml"
    suite.write_text(
        """
name = "tiny"
data = ["gaussian:n=60,d=3,sep=1,seed=0", "iris"]
solvers = ["osqp", "clarabel"]
[[problems]]
kind = "soft_margin_primal"
C = [0.5, 1.0]
[[problems]]
kind = "multiclass_hinge"
"""
    )
    db, report = tmp_path / "tiny.sqlite", tmp_path / "report"
    argv = ["run", str(suite), "-v", "--db", str(db), "--report", str(report), "--in-process"]
    code, out = run(capsys, *argv)
    assert code == 0
    assert "6 cases" in out and "6 to run" in out
    assert out.count("done:") == 6
    assert "skipped" in out and "multiclass data set" in out
    assert (report / "README.md").exists()
    code, out = run(capsys, *argv)  # everything is in the database already
    assert code == 0 and "6 already in" in out and "0 to run" in out
    assert "done:" not in out and "6 records" in out


def test_suite_expansion_is_a_product_with_reasons():
    suite = {
        "data": ["gaussian:n=40,d=2,sep=1,seed=0", "iris"],
        "solvers": ["osqp", {"name": "clarabel", "tol": [1e-8, 1e-10]}],
        "problems": [
            {"kind": "soft_margin_primal", "C": [0.1, 1.0], "bias": ["free", "none"]},
            {"kind": "kernel_dual", "kernel": "sigmoid", "gamma": 1.0},
        ],
    }
    cases, skipped = expand(suite)
    primal = [c for c in cases if c.problem_kind == "soft_margin_primal"]
    assert len(primal) == 4 * 3  # 2 C × 2 bias on the binary set, 3 solver settings
    assert len({c.key for c in cases}) == len(cases)
    reasons = " ".join(s.reason for s in skipped)
    assert "indefinite" in reasons  # the references refuse the sigmoid kernel
    assert "multiclass data set" in reasons


def test_default_suite_is_shipped_and_covers_every_problem_kind():
    suite = load_suite("default")
    from svmbench.problems import PROBLEMS

    kinds = {p["kind"] for p in suite["problems"]}
    assert kinds == set(PROBLEMS)  # every kind a suite can build
    with pytest.raises(ValueError, match="unknown suite 'nosuch'.*default"):
        load_suite("nosuch")


# ---- models: solve --save, predict ------------------------------------------------------------
def _accuracy(out: str, which: str) -> float:
    return float(re.search(rf"{which} accuracy\s*│?\s*([0-9.]+)", out).group(1))


@pytest.mark.parametrize(
    ("problem", "data", "solver", "extra"),
    [
        ("soft_margin_primal", "gaussian:n=120,d=3,sep=1,seed=0,split=0.3", "dcd",
         ["--bias", "regularized"]),
        ("kernel_dual", "circles:n=120,seed=0,split=0.3", "smo", ["--kernel", "rbf"]),
        ("multiclass_hinge", "blobs:n=150,d=3,k=3,seed=0,split=0.3", "cs_dcd", []),
        ("soft_margin_primal", "gaussian:n=120,d=3,sep=1,seed=0,split=0.3", "liblinear",
         ["--bias", "regularized"]),
    ],
    ids=["linear", "kernel", "multiclass", "anchor"],
)  # fmt: skip
def test_solve_save_then_predict_gives_the_same_test_accuracy(
    capsys, tmp_path, problem, data, solver, extra
):
    model = tmp_path / "model.npz"
    code, out = run(
        capsys, "solve", "--problem", problem, "--data", data, "--solver", solver, *extra,
        "--save", str(model),
    )  # fmt: skip
    assert code == 0, out
    test = _accuracy(out, "test")
    assert "wall time" in out and "certify time" in out
    code, out = run(capsys, "predict", str(model), "--data", data, "--part", "test")
    assert code == 0, out
    assert float(re.search(r"accuracy: ([0-9.]+)", out).group(1)) == pytest.approx(test, abs=1e-4)
    assert "confusion matrix" in out


def test_predict_refuses_a_model_that_does_not_fit_the_data(capsys, tmp_path):
    model = tmp_path / "m.npz"
    data = "blobs:n=90,d=3,k=3,seed=0"
    assert run(capsys, "solve", "--problem", "multiclass_hinge", "--data", data,
               "--solver", "cs_dcd", "--save", str(model))[0] == 0  # fmt: skip
    code, err = fail(capsys, "predict", str(model), "--data", "gaussian:n=40,d=3,sep=1")
    assert code == 2 and "multiclass but the data set is binary" in err
    code, err = fail(capsys, "predict", str(model), "--data", "blobs:n=90,d=5,k=3,seed=0")
    assert code == 2 and "X must have 3 features" in err
    code, err = fail(capsys, "predict", str(tmp_path / "missing.npz"), "--data", data)
    assert code == 2 and "no such model file" in err
    (tmp_path / "bad.npz").write_text("not a model")
    code, err = fail(capsys, "predict", str(tmp_path / "bad.npz"), "--data", data)
    assert code == 2 and "not an svmbench model file" in err


def _fit_and_save(path, spec, labels=None, **params):
    """An SVMClassifier fitted on the data set of ``spec`` (its labels mapped through
    ``labels(dataset, y)``, by default the data set's class names), saved to ``path``."""
    dataset = load_dataset(spec)
    if labels is None:
        labels = _names
    params = {"kernel": "linear", "bias": "regularized", **params}
    model = SVMClassifier(**params).fit(dataset.X, labels(dataset, dataset.y))
    save_model(model, path)
    return dataset, model


def _names(dataset, y):
    index = (y > 0).astype(int) if dataset.is_binary else y
    return np.asarray(dataset.classes)[index]


@pytest.mark.parametrize(
    ("spec", "labels", "shown"),
    [
        ("gaussian:n=120,d=3,sep=1,seed=0,split=0.3", None, ["-u", "+u"]),
        ("gaussian:n=120,d=3,sep=1,seed=0,split=0.3", lambda d, y: y.astype(int), ["-1", "1"]),
        ("iris:split=0.3,seed=0", None, ["setosa", "versicolor", "virginica"]),
    ],
    ids=["names", "numbers", "multiclass-names"],
)
def test_predict_with_a_saved_estimator_compares_its_labels_with_the_data_sets(
    capsys, tmp_path, spec, labels, shown
):
    path = tmp_path / "clf.npz"
    dataset, model = _fit_and_save(path, spec, labels)
    truth = (labels or _names)(dataset, dataset.y_test)
    expected = model.score(dataset.X_test, truth)
    assert 0.5 < expected < 1.0  # a figure the comparison can get wrong
    out_csv = tmp_path / "pred.csv"
    code, out = run(
        capsys, "predict", str(path), "--data", spec, "--part", "test", "--out", str(out_csv)
    )
    assert code == 0, out
    assert float(re.search(r"accuracy: ([0-9.]+)", out).group(1)) == pytest.approx(
        expected, abs=1e-4
    )
    assert f"with labels {model.classes_.tolist()}" in out
    table = out[out.index("confusion matrix") :]
    assert all(label in table for label in shown)
    written = out_csv.read_text().split()
    assert written == [str(v) for v in model.predict(dataset.X_test).tolist()]


def test_predict_with_a_saved_estimator_of_other_labels_gives_no_accuracy(capsys, tmp_path):
    spec = "gaussian:n=60,d=3,sep=1,seed=0"
    path = tmp_path / "clf.npz"
    _fit_and_save(path, spec, lambda d, y: np.where(y > 0, "yes", "no"))
    code, out = run(capsys, "predict", str(path), "--data", spec)
    assert code == 0, out
    assert "no accuracy: the model's labels ['no', 'yes'] are not the data set's labels" in out
    assert re.search(r"accuracy: [0-9]", out) is None and "confusion matrix" not in out
    _fit_and_save(path, spec, lambda d, y: (y > 0).astype(int))  # 0/1 against -1/+1
    code, out = run(capsys, "predict", str(path), "--data", spec)
    assert code == 0 and "no accuracy: the model's labels [0, 1]" in out
    _fit_and_save(path, "iris", None)
    code, err = fail(capsys, "predict", str(path), "--data", "gaussian:n=40,d=4,sep=1")
    assert code == 2 and "multiclass but the data set is binary" in err
    _fit_and_save(path, "iris")
    code, err = fail(capsys, "predict", str(path), "--data", "blobs:n=90,d=4,k=4,seed=0")
    assert code == 2 and "the model has 3 classes but the data set has 4" in err


def test_list_shows_every_problem_kind_and_the_anchors(capsys):
    code, out = run(capsys, "list")
    assert code == 0
    assert "Anchors" in out and "liblinear" in out and "libsvm" in out
    assert "chain_structured_hinge" in out and "ranking" in out


def test_select_marks_the_chosen_C(capsys, tmp_path):
    plot = tmp_path / "select.png"
    code, out = run(
        capsys, "select", "--data", "gaussian:n=60,d=3,sep=1.5,seed=0", "--C-grid",
        "1e-2:1e1:4", "--cv", "loo", "--bias", "regularized", "--plot", str(plot),
    )  # fmt: skip
    assert code == 0, out
    chosen = float(re.search(r"chosen: C = ([0-9.e+-]+)", out).group(1))
    assert any(line.startswith("│ →") and f"{chosen:.4g}" in line for line in out.splitlines())
    assert "folds skipped by the certified margin" in out and plot.stat().st_size > 0


@pytest.mark.parametrize(
    "argv",
    [
        ["select", "--data", "gaussian:n=40", "--C-grid", "1:0.1:3"],
        ["select", "--data", "gaussian:n=40", "--C-grid", "a:b:c"],
        ["select", "--data", "gaussian:n=40", "--cv", "1"],
        ["run", "--jobs", "0"],
        ["run", "--memory-limit", "-5"],
        ["check", "--rtol", "-1"],
        ["run", "--tol", "nan"],
        ["results", "--db", "typo-does-not-exist.sqlite"],
    ],
    ids=["grid-decreasing", "grid-text", "cv-one", "jobs-0", "memory-negative", "rtol-negative",
         "tol-nan", "results-missing-db"],
)  # fmt: skip
def test_bad_flags_are_one_line_errors(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, err = fail(capsys, *argv)
    assert code == 2 and err.startswith("error:")
    assert not (tmp_path / "typo-does-not-exist.sqlite").exists()


def test_ctrl_c_is_one_line(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    parser = cli.build_parser()
    parser.set_defaults(func=interrupted)  # every command is interrupted at once
    parser._subparsers._group_actions[0].choices["list"].set_defaults(func=interrupted)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    code = cli.main(["list"])
    captured = capsys.readouterr()
    assert code == 130 and captured.err == "interrupted\n" and captured.out == ""


# ---- no command destroys what it did not create (issue 26) --------------------------------------
def _store_traced_records(db, n: int = 2) -> list[str]:
    """``n`` records with a trace (each report draws one gap figure per data set), stored
    without solving; their data specs."""
    from svmbench.benchmarks.harness.cases import Case
    from svmbench.benchmarks.harness.evaluation import Record
    from svmbench.benchmarks.harness.store import Store
    from svmbench.solvers.base import Checkpoint, SolveResult, Status

    trace = (Checkpoint(1, 0.01, 5.0, 1.0, 4.0, 0.01), Checkpoint(2, 0.02, 4.0, 3.9, 0.1, 0.02))
    specs = [f"gaussian:n={20 + i},d=3,sep=1,seed=0" for i in range(n)]
    with Store(db) as store:
        for spec in specs:
            result = SolveResult(
                "dcd", "soft_margin_primal", "k", Status.OPTIMAL, 4.0, 3.9, 0.1, 0.02, True, 2,
                "epochs", 0.02, trace=trace,
            )  # fmt: skip
            case = Case({"kind": "soft_margin_primal", "C": 1.0}, spec, "dcd", {}, 0)
            store.add(Record(case, result, status="optimal"), suite="t")
    return specs


def test_a_report_replaces_only_the_files_it_wrote(capsys, tmp_path):
    db, out = tmp_path / "r.sqlite", tmp_path / "figures"
    _store_traced_records(db, n=2)
    out.mkdir()
    mine = {"photo.png": b"not svmbench's", "notes.txt": b"mine"}
    for name, content in mine.items():
        (out / name).write_bytes(content)
    code, _ = run(capsys, "report", "--db", str(db), "--out", str(out))
    assert code == 0
    first = {p.name for p in out.glob("gap_*.png")}
    assert len(first) == 2
    # the next report, on fewer records, removes its own stale figure and nothing else, even
    # where its list was edited to name a file it cannot have written
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM records WHERE data LIKE '%n=21,%'")
    manifest = out / ".svmbench-report.json"
    listed = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**listed, "files": [*listed["files"], "notes.txt"]}))
    code, out_text = run(capsys, "report", "--db", str(db), "--out", str(out))
    assert code == 0 and "(1 figures)" in out_text
    assert {p.name for p in out.glob("gap_*.png")} == {n for n in first if "n=20" in n}
    assert {name: (out / name).read_bytes() for name in mine} == mine
    assert not [p for p in out.iterdir() if p.name.startswith(".svmbench-report-")]


def test_a_report_never_replaces_a_file_it_did_not_write(capsys, tmp_path):
    db, out = tmp_path / "r.sqlite", tmp_path / "docs"
    _store_traced_records(db, n=1)
    out.mkdir()
    (out / "README.md").write_text("# my project\n")
    code, err = fail(capsys, "report", "--db", str(db), "--out", str(out))
    assert code == 2 and "README.md that svmbench report did not write" in err
    code, err = fail(capsys, "run", "--problem", "soft_margin_primal", "--data", "gaussian:n=30",
                     "--solver", "dcd", "--db", str(db), "--report", str(out))  # fmt: skip
    assert code == 2 and err.startswith("error: --report")  # refused before anything runs
    assert (out / "README.md").read_text() == "# my project\n"
    # a figure of the same name that the report did not write is refused, nothing changed
    other = tmp_path / "other"
    assert run(capsys, "report", "--db", str(db), "--out", str(other))[0] == 0
    figure = next(other.glob("gap_*.png"))
    (other / ".svmbench-report.json").unlink()  # the report forgets its files
    (other / "README.md").unlink()
    figure.write_bytes(b"a user's figure")
    code, err = fail(capsys, "report", "--db", str(db), "--out", str(other))
    assert code == 2 and "was not written by svmbench report" in err
    assert figure.read_bytes() == b"a user's figure" and not (other / "README.md").exists()


def test_an_output_that_is_an_input_is_refused(capsys, tmp_path):
    db = tmp_path / "r.sqlite"
    _store_traced_records(db, n=1)
    before = db.read_bytes()
    (tmp_path / "link.sqlite").symlink_to(db)
    for target in (db, tmp_path / "." / "r.sqlite", tmp_path / "link.sqlite"):
        code, err = fail(capsys, "results", "--db", str(db), "--csv", str(target))
        assert code == 2 and "is the database of --db: refusing to overwrite an input" in err
    assert db.read_bytes() == before
    model = tmp_path / "m.npz"
    data = "gaussian:n=60,d=3,sep=1,seed=0"
    _fit_and_save(model, data)
    saved = model.read_bytes()
    code, err = fail(capsys, "predict", str(model), "--data", data, "--out", str(model))
    assert code == 2 and "--out" in err and "is the model file" in err
    assert model.read_bytes() == saved


def test_files_are_written_aside_and_renamed_into_place(capsys, tmp_path):
    from svmbench.benchmarks.harness.files import replaced_atomically

    target = tmp_path / "kept.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), replaced_atomically(target) as temp:
        temp.write_text("half")
        raise RuntimeError("interrupted mid-write")
    assert target.read_text() == "old\n" and sorted(tmp_path.iterdir()) == [target]
    # the commands: each write is a new file (a new inode) renamed over the old one
    db, csv_path, pred = tmp_path / "r.sqlite", tmp_path / "r.csv", tmp_path / "p.csv"
    _store_traced_records(db, n=1)
    model = tmp_path / "m.npz"
    data = "gaussian:n=60,d=3,sep=1,seed=0"
    _fit_and_save(model, data)
    for path in (csv_path, pred):
        path.write_text("previous\n")
    inodes = {p: p.stat().st_ino for p in (csv_path, pred)}
    assert run(capsys, "results", "--db", str(db), "--csv", str(csv_path))[0] == 0
    assert run(capsys, "predict", str(model), "--data", data, "--out", str(pred))[0] == 0
    assert all(p.stat().st_ino != inode for p, inode in inodes.items())
    assert csv_path.read_text().startswith("id,suite") and len(pred.read_text().split()) == 60
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["solve", "--problem", "soft_margin_primal", "--data", "gaussian:n=30", "--solver", "dcd",
          "--bias", "regularized", "--save", "{tmp}/no/such/dir/m.npz"],
         "--save {tmp}/no/such/dir/m.npz: the folder {tmp}/no/such/dir does not exist"),
        (["results", "--db", "{tmp}/r.sqlite", "--csv", "{tmp}/no/x.csv"],
         "--csv {tmp}/no/x.csv: the folder {tmp}/no does not exist"),
        (["results", "--db", "{tmp}/r.sqlite", "--csv", "{tmp}"], "--csv {tmp}: a directory"),
        (["report", "--db", "{tmp}/r.sqlite", "--out", "{tmp}/r.sqlite"],
         "--out {tmp}/r.sqlite: not a directory"),
        (["report", "--db", "{tmp}/r.sqlite", "--out", "{tmp}/r.sqlite/sub"],
         "the folder {tmp}/r.sqlite is not a directory"),
        (["predict", "{tmp}/m.npz", "--data", "gaussian:n=30", "--out", "{tmp}/no/p.csv"],
         "--out {tmp}/no/p.csv: the folder {tmp}/no does not exist"),
        (["select", "--data", "gaussian:n=40", "--plot", "{tmp}"], "--plot {tmp}: a directory"),
        (["select", "--data", "gaussian:n=40", "--plot", "{tmp}/plot"],
         "--plot {tmp}/plot: give a file name ending in .png"),
    ],
    ids=["save", "csv-folder", "csv-directory", "report-file", "report-under-file", "predict",
         "plot-directory", "plot-no-suffix"],
)  # fmt: skip
def test_an_output_that_cannot_be_written_is_refused_before_any_work(
    capsys, tmp_path, argv, message
):
    _store_traced_records(tmp_path / "r.sqlite", n=1)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, err = fail(capsys, *argv)
    assert code == 2 and message.replace("{tmp}", str(tmp_path)) in err


def test_an_error_of_the_file_system_is_one_line_with_exit_1(capsys, monkeypatch, tmp_path):
    from svmbench.benchmarks.harness import store as store_module

    db = tmp_path / "r.sqlite"
    _store_traced_records(db, n=1)

    def refused(self, file=None, **filters):
        raise PermissionError(13, "Permission denied", str(tmp_path / "x.csv"))

    monkeypatch.setattr(store_module.Store, "to_csv", refused)
    code, err = fail(capsys, "results", "--db", str(db), "--csv", str(tmp_path / "x.csv"))
    assert code == 1 and err == f"error: {tmp_path / 'x.csv'}: Permission denied\n"


@pytest.mark.parametrize(
    ("where", "seeds", "message"),
    [
        ("flags", ["-1"], "--seeds must be integers from 0 to 2**63 - 1"),
        ("flags", ["99999999999999999999"], "--seeds must be integers from 0 to 2**63 - 1"),
        ("file", "[99999999999999999999]", "seeds must be integers from 0 to 2**63 - 1"),
        ("file", "[-3]", "seeds must be integers from 0 to 2**63 - 1"),
        ("file", "[]", "seeds is empty: the grid has no cases"),
        ("check", ["-1"], "--seeds must be integers from 0 to 2**63 - 1"),
    ],
    ids=["negative", "beyond-64-bits", "file-beyond-64-bits", "file-negative", "file-empty",
         "check"],
)  # fmt: skip
def test_seeds_that_cannot_seed_or_be_stored_are_refused_before_any_case(
    capsys, tmp_path, where, seeds, message
):
    db = tmp_path / "r.sqlite"
    flags = ["--problem", "soft_margin_primal", "--data", "gaussian:n=30,d=2,sep=1,seed={seed}",
             "--solver", "dcd", "--bias", "regularized"]  # fmt: skip
    common = ["--db", str(db), "--in-process"]
    if where == "file":
        suite = tmp_path / "s.toml"
        suite.write_text(
            f'name = "s"\ndata = ["gaussian:n=30,d=2,sep=1,seed={{seed}}"]\nsolvers = ["dcd"]\n'
            f'seeds = {seeds}\n[[problems]]\nkind = "soft_margin_primal"\nbias = "regularized"\n'
        )
        argv = ["run", str(suite), *common, "--report", "none"]
    elif where == "check":
        argv = ["check", "ci", *common, "--seeds", *seeds]
    else:
        argv = ["run", *flags, *common, "--report", "none", "--seeds", *seeds]
    code, err = fail(capsys, *argv)
    assert code == 2 and message in err
    assert not db.exists()  # nothing ran, nothing was stored


def test_compare_refuses_unknown_solver_names_with_the_closest(capsys):
    base = ["compare", "--problem", "soft_margin_primal", "--data", "gaussian:n=40,d=3,sep=1",
            "--bias", "regularized", "--repeat", "1", "--no-reference"]  # fmt: skip
    code, err = fail(capsys, *base, "--solvers", "dcd,nosuch")
    assert code == 2 and err.startswith("error: --solvers: unknown solver 'nosuch'")
    code, err = fail(capsys, *base, "--solvers", "dcd", "--set", "dcdd.tol=1e-9")
    assert code == 2 and "--set: unknown solver 'dcdd' (did you mean 'dcd'" in err
    code, err = fail(capsys, *base, "--solvers", "dcd", "--set", "pegasos.max_iter=5")
    assert code == 2 and "'pegasos' is not one of --solvers (dcd)" in err


def test_solver_names_and_options_are_refused_naming_the_flag(capsys):
    """An unknown option was Python's "__init__() got an unexpected keyword argument", and a
    refused value named no flag."""
    base = ["solve", "--problem", "soft_margin_primal", "--data", "gaussian:n=30,d=2,sep=1",
            "--bias", "regularized"]  # fmt: skip
    for argv, message in [
        (["--solver", "dcd", "--option", "tl=1"],
         "--option: solver 'dcd' takes no option 'tl' (did you mean 'tol'?); its options: "),
        (["--solver", "dcd", "--option", "tol=-1"], "--option: tol must be"),
        (["--solver", "dcdd", "--option", "tol=1"], "--solver: unknown solver 'dcdd'"),
    ]:  # fmt: skip
        code, err = fail(capsys, *base, *argv)
        assert code == 2 and err.startswith(f"error: {message}"), err
        assert "__init__" not in err
    code, err = fail(capsys, "compare", "--problem", "soft_margin_primal", "--data",
                     "gaussian:n=30,d=2,sep=1", "--solvers", "dcd",
                     "--set", "dcd.nosuch=3")  # fmt: skip
    assert code == 2 and err.startswith("error: --set: solver 'dcd' takes no option 'nosuch'")


def test_compare_takes_a_gamma_by_name(capsys):
    """``--gamma scale`` was refused by the numeric check with Python's own TypeError text."""
    code, out = run(
        capsys, "compare", "--problem", "kernel_dual", "--kernel", "rbf", "--gamma", "scale",
        "--data", "gaussian:n=40,d=3,sep=1,seed=0", "--solvers", "smo", "--repeat", "1",
        "--no-reference",
    )  # fmt: skip
    assert code == 0, out
    X = load_dataset("gaussian:n=40,d=3,sep=1,seed=0").X
    gamma = float(re.search(r"gamma=([0-9.e+-]+)", out).group(1))
    assert gamma == pytest.approx(1.0 / (3 * X.var()), rel=1e-12)  # scikit-learn's "scale"
    assert re.search(r"^smo\s+optimal", out, re.MULTILINE)


def test_damaged_rows_are_skipped_with_one_warning(capsys, tmp_path):
    db = tmp_path / "r.sqlite"
    specs = _store_traced_records(db, n=3)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE records SET problem = NULL WHERE data = ?", (specs[0],))
        deep = "[" * 100_000 + "]" * 100_000
        conn.execute("UPDATE records SET info = ? WHERE data = ?", (deep, specs[1]))
    for argv in (["results", "--db", str(db)], ["report", "--db", str(db), "--out",
                                                 str(tmp_path / "rep")]):  # fmt: skip
        code = cli.main(argv)
        captured = capsys.readouterr()
        assert code == 0 and "Traceback" not in captured.err
        assert captured.err.count("\n") == 1 and captured.err.startswith("warning: ")
        assert "2 damaged records skipped" in captured.err and "problem is NULL" in captured.err
        assert "JSON nested too deeply" in captured.err
    assert "1 records in" in run(capsys, "results", "--db", str(db))[1]
    assert specs[2] in (tmp_path / "rep" / "README.md").read_text()


def test_a_read_only_or_locked_database_is_one_line(capsys, monkeypatch, tmp_path):
    from svmbench.benchmarks.harness import store as store_module

    db = tmp_path / "r.sqlite"
    _store_traced_records(db, n=1)
    before = db.read_bytes()
    argv = ["run", "--problem", "soft_margin_primal", "--data", "gaussian:n=30,d=2,sep=1",
            "--solver", "dcd", "--bias", "regularized", "--db", str(db), "--report", "none",
            "--in-process"]  # fmt: skip
    connect = sqlite3.connect

    def read_only(path, *args, **kwargs):  # what SQLite does with a file it cannot write
        return connect(f"file:{path}?mode=ro", *args, uri=True, **kwargs)

    monkeypatch.setattr(store_module.sqlite3, "connect", read_only)
    code, err = fail(capsys, *argv)
    assert code == 2 and "read-only" in err and str(db) in err
    monkeypatch.setattr(store_module.sqlite3, "connect", connect)
    assert db.read_bytes() == before
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT", 0.2)
    holder = connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the wait
    try:
        for command in (argv, ["results", "--db", str(db)]):
            code, err = fail(capsys, *command)
            assert code == 2 and "locked by another process" in err
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_an_unreachable_cluster_is_one_line_naming_it(capsys, monkeypatch, tmp_path):
    pytest.importorskip("distributed", reason="the optional extra 'dask'")
    from svmbench.benchmarks.harness import execution

    monkeypatch.setattr(execution, "CONNECT_TIMEOUT", 1.0)
    started = time.monotonic()
    code, err = fail(capsys, "run", "--problem", "soft_margin_primal", "--data", "gaussian:n=30",
                     "--solver", "dcd", "--db", str(tmp_path / "r.sqlite"), "--cluster",
                     "tcp://127.0.0.1:1")  # fmt: skip
    assert code == 1 and "cannot reach a Dask scheduler at tcp://127.0.0.1:1 within 1 s" in err
    assert time.monotonic() - started < 15
    code, err = fail(capsys, "run", "--problem", "soft_margin_primal", "--data", "gaussian:n=30",
                     "--solver", "dcd", "--cluster", "nonsense")  # fmt: skip
    assert code == 2 and "cluster address 'nonsense'" in err


def test_solve_takes_a_gamma_by_name_and_refuses_another_word(capsys):
    """``solve --gamma scale`` was refused as "invalid float value" while ``compare`` took it."""
    code, out = run(
        capsys, "solve", "--problem", "kernel_dual", "--kernel", "rbf", "--gamma", "scale",
        "--data", "gaussian:n=40,d=3,sep=1,seed=0", "--solver", "smo",
    )  # fmt: skip
    assert code == 0 and "optimal" in out, out
    with pytest.raises(SystemExit) as exited:
        cli.main(["solve", "--problem", "kernel_dual", "--gamma", "big", "--data", "x"])
    assert exited.value.code == 2
    assert "expected a number, 'scale' or 'auto', got 'big'" in capsys.readouterr().err


def test_the_csv_export_carries_the_users_clock_beside_the_solvers(capsys, tmp_path):
    import csv

    from svmbench.benchmarks.harness.cases import Case
    from svmbench.benchmarks.harness.evaluation import Record
    from svmbench.benchmarks.harness.store import Store
    from svmbench.solvers.base import SolveResult, Status

    db, csv_path = tmp_path / "r.sqlite", tmp_path / "r.csv"
    result = SolveResult(
        "dcd", "soft_margin_primal", "k", Status.OPTIMAL, 4.0, 3.9, 0.1, 0.02, True, 2, "epochs",
        0.02, wall_time=0.05, certify_time=0.01,
    )  # fmt: skip
    case = Case({"kind": "soft_margin_primal", "C": 1.0}, "gaussian:n=20,d=3,sep=1", "dcd", {}, 0)
    with Store(db) as store:
        store.add(Record(case, result, status="optimal", wall_time=0.05), suite="t")
    assert run(capsys, "results", "--db", str(db), "--csv", str(csv_path))[0] == 0
    (row,) = list(csv.DictReader(csv_path.open()))
    assert float(row["wall_time"]) == 0.05 and float(row["certify_time"]) == 0.01


def test_compare_runs_every_solver_of_repeated_flags(capsys):
    """``--solver a --solver b`` ran only b (argparse read it as the last ``--solvers``)."""
    code, out = run(
        capsys, "compare", "--problem", "soft_margin_primal", "--bias", "regularized",
        "--data", "gaussian:n=40,d=3,sep=1,seed=0", "--solver", "dcd", "--solver", "clarabel",
        "--solvers", "osqp", "--repeat", "1", "--no-reference",
    )  # fmt: skip
    assert code == 0, out
    for name in ("dcd", "clarabel", "osqp"):
        assert re.search(rf"^{name}\s+optimal", out, re.MULTILINE), out
