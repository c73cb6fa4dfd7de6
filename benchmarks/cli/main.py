"""The ``svmbench`` command line: ``list``, ``solve``, ``predict``, ``select``, ``compare``,
``run``, ``results``, ``report``, ``check``.

The entry point and the one-problem commands (``list``, ``solve``, ``predict``) live here; what
every command shares (the console, number formatting, the problem flags) is in
:mod:`benchmarks.cli.common`. ``select`` and ``compare`` register themselves from their own
modules (:mod:`benchmarks.cli.select`, :mod:`benchmarks.cli.compare`), and so do the suite
commands (``run``, ``results``, ``report``, ``check``: :mod:`benchmarks.cli.runs`). Only the
command line prints.
"""

from __future__ import annotations

import argparse
import math
import numbers
import os
import sys
import warnings

import numpy as np
from rich.table import Table

import svmbench
from svmbench.benchmarks.cli import compare, runs, select
from svmbench.benchmarks.cli.common import (
    add_problem_flags,
    configured_solver,
    console,
    fmt,
    load_data,
    print_error,
    problem_params,
    spec_paths,
)
from svmbench.benchmarks.harness.files import check_output, replaced_atomically
from svmbench.problems import PROBLEMS
from svmbench.problems.datasets import describe as describe_datasets


def cmd_list(args: argparse.Namespace) -> int:
    from svmbench.solvers import registry

    table = Table(title="Problems")
    table.add_column("kind")
    table.add_column("description")
    for kind, cls in PROBLEMS.items():
        table.add_row(kind, (cls.__doc__ or "").strip().splitlines()[0])
    console.print(table)

    table = Table(title="Solvers (✓ = accepts the problem kind with at least one setting)")
    table.add_column("solver")
    table.add_column("iterations in")
    for kind in PROBLEMS:
        table.add_column(kind)
    for name in registry.names():
        cls = registry.solver_class(name)
        marks = ["✓" if PROBLEMS[k] in cls.supported else "" for k in PROBLEMS]
        table.add_row(name, cls.iteration_unit, *marks)
    console.print(table)

    table = Table(title="Anchors (official LIBSVM/LIBLINEAR bindings, scikit-learn, oneDAL)")
    table.add_column("anchor")
    table.add_column("installed")
    for kind in PROBLEMS:
        table.add_column(kind)
    for name, why in registry.available_anchors().items():
        cls = registry.solver_class(name)
        marks = ["✓" if PROBLEMS[k] in cls.supported else "" for k in PROBLEMS]
        table.add_row(name, "yes" if why is None else f"no: {why}", *marks)
    console.print(table)
    console.print(
        "chain_structured_hinge: sequences, built by svmbench.problems.structured."
        "digit_sequences (solver ssvm_sgd); ranking: svmbench.problems.ranking turns preference "
        "pairs into a soft_margin_primal problem"
    )

    table = Table(title="Data sets (spec: name:key=value,...)")
    table.add_column("name")
    table.add_column("description")
    for name, text in describe_datasets():
        table.add_row(name, text)
    console.print(table)
    return 0


def _parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--option must be KEY=VALUE, got {pair!r}")
        key, text = pair.split("=", 1)
        for convert in (int, float):
            try:
                options[key] = convert(text)
                break
            except ValueError:
                continue
        else:
            options[key] = {"true": True, "false": False}.get(text.lower(), text)
    return options


def cmd_solve(args: argparse.Namespace) -> int:
    from svmbench.benchmarks.harness.cases import (
        case_over_budget,
        default_memory_budget_mb,
        make_problem,
    )
    from svmbench.benchmarks.harness.evaluation import accuracy, r2

    options = _parse_options(args.option)
    solver = configured_solver(args.solver, options, "--option", name_flag="--solver")
    if args.save:
        check_output(
            args.save,
            "--save",
            inputs=[("the data file of --data", p) for p in spec_paths(args.data)],
        )
    budget = args.memory_limit or default_memory_budget_mb()
    dataset = load_data(args.data, budget)
    problem = make_problem(problem_params(args), dataset)
    why = case_over_budget(problem, args.solver, options, None, budget)  # as `run` checks a case
    if why is not None:
        raise ValueError(f"--solver {args.solver}: {why} (--memory-limit MB to change the budget)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solver.solve(problem)
    table = Table(title=f"{args.solver} on {problem.describe()}", show_header=False)
    rows = []
    if "auto" in result.info:  # auto says which method it ran and why
        chosen = result.info["auto"]
        rows.append(("auto chose", f"{chosen['chose']}: {chosen['why']}"))
    rows += [
        ("status", result.status.value),
        ("message", result.message),
        ("primal objective", fmt(result.primal, ".10g")),
        ("dual objective", fmt(result.dual, ".10g")),
        ("duality gap", fmt(result.gap)),
        ("relative gap", fmt(result.rel_gap)),
        ("certified", str(result.certified)),
        ("iterations", f"{result.iterations} {result.iteration_unit}"),
        ("wall time", f"{result.wall_time:.4f} s (what a stopwatch shows; JIT excluded)"),
        ("solve time", f"{result.solve_time:.4f} s (the method and its stopping tests)"),
        ("certify time", f"{result.certify_time:.4f} s (trace and final certificates)"),
        ("compile time", f"{result.compile_time:.4f} s"),
    ]
    if dataset.is_regression:  # R², the coefficient of determination, instead of accuracy
        rows.append(("training R²", fmt(r2(result, problem.X, problem.y), ".4f")))
        if dataset.X_test is not None:
            test = r2(result, dataset.X_test, dataset.y_test)
            rows.append(("test R²", f"{fmt(test, '.4f')} ({dataset.X_test.shape[0]} points)"))
    else:
        y = getattr(problem, "y", dataset.y)  # a one-class model is scored against the labels
        rows.append(("training accuracy", fmt(accuracy(problem, result, problem.X, y), ".4f")))
    if dataset.X_test is not None and not dataset.is_regression:
        test = accuracy(problem, result, dataset.X_test, dataset.y_test)
        rows.append(("test accuracy", f"{fmt(test, '.4f')} ({dataset.X_test.shape[0]} points)"))
    if args.save:
        from svmbench.problems.model_files import save_model

        if result.model is None:
            raise ValueError(f"--save: the result has no model (status {result.status.value})")
        with replaced_atomically(args.save) as temp:
            save_model(result.model, temp)
        rows.append(("model saved to", args.save))
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    return 0


def _label_text(value) -> str:
    """A label for the confusion matrix: numbers as ``%g``, strings and booleans as they are."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        return f"{value:g}"
    return str(value)


def _truth(classes, dataset, y):
    """The data set's labels ``y`` in the terms of a classifier's ``classes`` (its names when
    the classes are strings, else its numbers), or None when the two sets of labels differ: an
    accuracy then compares nothing like with like."""
    if classes.dtype.kind == "U":
        index = (y > 0).astype(int) if dataset.is_binary else y
        truth = np.asarray(dataset.classes)[index]
        known = list(dataset.classes)
    else:
        truth = y
        known = [-1.0, 1.0] if dataset.is_binary else list(range(dataset.n_classes))
    numbered = _integer_names(dataset.classes)
    if set(classes.tolist()) != set(known) and numbered and set(numbered) == set(classes.tolist()):
        # integer labels named in the file (LIBSVM's own, e.g. 10, 20, 30): compare with those
        index = (y > 0).astype(int) if dataset.is_binary else np.asarray(y, dtype=int)
        return np.asarray(numbered)[index]
    if set(classes.tolist()) != set(known):
        console.print(
            f"no accuracy: the model's labels {classes.tolist()} are not the data set's "
            f"labels {known}"
        )
        return None
    return truth


def _integer_names(names) -> list[int] | None:
    """The data set's class names as integers, when they all are (an svmlight file's)."""
    try:
        numbers = [int(name) for name in names]
    except (TypeError, ValueError):
        return None
    return numbers if [str(n) for n in numbers] == list(names) else None


def _is_libsvm_model(path: str) -> bool:
    """Whether ``path`` is a regular file starting as LIBSVM's model files do."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as fh:
        return fh.read(9) == b"svm_type "


def _predict_regression(args: argparse.Namespace, model, X, y) -> int:
    """``svmbench predict`` of a regression model: the values, written as asked, and R²."""
    pred = model.predict(X)
    if args.out:
        with replaced_atomically(args.out) as temp:
            if args.out.endswith(".npy"):
                with open(temp, "wb") as fh:
                    np.save(fh, pred, allow_pickle=False)
            else:
                np.savetxt(temp, pred, fmt="%.17g", delimiter=",")
        console.print(f"wrote {pred.shape[0]} predictions to {args.out}")
    console.print(f"{type(model).__name__} on {args.data} ({args.part}: {X.shape[0]} points)")
    spread = float(np.sum((y - np.mean(y)) ** 2))
    if spread > 0:
        console.print(f"R²: {1.0 - float(np.sum((y - pred) ** 2)) / spread:.4f}")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from svmbench.problems.linear_regression_model import LinearRegressionModel
    from svmbench.problems.loaded_classifier import LoadedClassifier
    from svmbench.problems.model_files import load_model
    from svmbench.problems.models import MulticlassModel
    from svmbench.problems.regression_model import KernelRegressionModel

    if args.out:
        inputs = [
            ("the model file", args.model),
            *(("the data file of --data", p) for p in spec_paths(args.data)),
        ]
        check_output(args.out, "--out", inputs=inputs)
    dataset = load_data(args.data, args.memory_limit)
    if args.part == "test":
        if dataset.X_test is None:
            raise ValueError("--part test: the data spec has no split (add split=0.3)")
        X, y = dataset.X_test, dataset.y_test
    else:
        X, y = dataset.X, dataset.y
    if _is_libsvm_model(args.model):  # svm-train's text file: its widths are the data's
        from svmbench.problems.libsvm_model_files import read_libsvm_model

        model = read_libsvm_model(args.model, n_features=X.shape[1])
    else:
        model = load_model(args.model)
    regression = isinstance(model, KernelRegressionModel | LinearRegressionModel)
    if regression != dataset.is_regression:
        raise ValueError(
            f"the model is {'a regression' if regression else 'a classifier'} but the data set "
            f"is {'a regression' if dataset.is_regression else 'a classification'}"
        )
    if regression:
        return _predict_regression(args, model, X, y)
    labelled = isinstance(model, LoadedClassifier)
    n_classes = model.classes_.size if labelled else None
    multiclass = n_classes > 2 if labelled else isinstance(model, MulticlassModel)
    if multiclass == dataset.is_binary:
        raise ValueError(
            f"the model is {'multiclass' if multiclass else 'binary'} but the data set is "
            f"{'binary' if dataset.is_binary else 'multiclass'}"
        )
    if labelled and n_classes != dataset.n_classes:
        raise ValueError(
            f"the model has {n_classes} classes but the data set has {dataset.n_classes}"
        )
    pred = model.predict(X)
    if args.out:
        with replaced_atomically(args.out) as temp:
            if args.out.endswith(".npy"):
                with open(temp, "wb") as fh:
                    np.save(fh, pred, allow_pickle=False)
            else:
                fmt = "%g" if pred.dtype.kind in "iuf" else "%s"
                np.savetxt(temp, pred, fmt=fmt, delimiter=",")
        console.print(f"wrote {pred.shape[0]} predictions to {args.out}")
    name = (
        f"{type(model.model_).__name__} with labels {model.classes_.tolist()}"
        if labelled
        else type(model).__name__
    )
    console.print(f"{name} on {args.data} ({args.part}: {X.shape[0]} points)")
    if y is not None and labelled:
        y = _truth(model.classes_, dataset, y)
    if y is not None:
        console.print(f"accuracy: {np.mean(pred == y):.4f}")
        labels = np.unique(np.concatenate([np.asarray(y), pred]))
        table = Table(title="confusion matrix (rows: true, columns: predicted)")
        table.add_column("")
        for label in labels:
            table.add_column(_label_text(label))
        for true in labels:
            counts = [int(np.sum((y == true) & (pred == p))) for p in labels]
            table.add_row(_label_text(true), *map(str, counts))
        console.print(table)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="svmbench", description="Train SVMs by many methods and benchmark them honestly."
    )
    parser.add_argument("--version", action="version", version=f"svmbench {svmbench.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="problems, solvers, data sets, and which solver accepts what")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("solve", help="solve one problem with one solver and print the result")
    add_problem_flags(p, required=True)
    p.add_argument("--data", required=True, help="data spec, e.g. gaussian:n=200,d=5,sep=1")
    p.add_argument(
        "--solver",
        default="auto",
        help="solver name (default: auto, which picks the fastest certified method and says why)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="solver option, e.g. --option tol=1e-8 (repeatable)",
    )
    p.add_argument("--save", metavar="MODEL", help="save the model (.npz, svmbench format)")
    p.add_argument(
        "--memory-limit",
        dest="memory_limit",
        type=float,
        help="MB the data and the solver may take (default: 80%% of what is free)",
    )
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("predict", help="predict with a saved model on a data spec")
    p.add_argument("model", help="a model file written by solve --save, or by LIBSVM's svm-train")
    p.add_argument("--data", required=True, help="data spec (labels: accuracy and confusion)")
    p.add_argument("--part", choices=["all", "test"], default="all",
                   help="the whole data set (default) or its test split")  # fmt: skip
    p.add_argument("--out", help="write the predictions (.npy, or CSV otherwise)")
    p.add_argument("--memory-limit", dest="memory_limit", type=float,
                   help="MB the data may take (default: 80%% of what is free)")  # fmt: skip
    p.set_defaults(func=cmd_predict)

    select.add_parser(sub)
    compare.add_parser(sub)
    runs.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. Every failure is one line on stderr: 2 for what the
    user asked (a ``ValueError``/``TypeError``: a bad flag, file or value), 1 for what went
    wrong while doing it (a file that cannot be written, an unreachable cluster, memory), 130
    for Ctrl-C."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_numbers(args)
        return args.func(args)
    except (ValueError, TypeError) as exc:
        print_error(exc)
        return 2
    except OSError as exc:
        print_error(_os_message(exc))
        return 1
    except MemoryError as exc:
        print_error(f"out of memory ({exc or 'MemoryError'}); try --memory-limit or less data")
        return 1
    except KeyboardInterrupt as exc:
        print(str(exc) or "interrupted", file=sys.stderr)
        return 130


def _os_message(exc: OSError) -> str:
    """An ``OSError`` as one phrase naming the file: ``out/r.csv: Permission denied``."""
    if exc.filename is None:
        return str(exc)
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}"


#: Numeric flags and the smallest value each takes (every one must be finite).
_POSITIVE_FLAGS = {"jobs": 1, "repeat": 1, "threads": 1}
_STRICTLY_POSITIVE_FLAGS = ("tol", "time_limit", "memory_limit", "C", "bias_scale", "gamma",
                            "rtol", "stochastic_rtol")  # fmt: skip


def _check_numbers(args: argparse.Namespace) -> None:
    """Refuse ``--jobs 0``, ``--memory-limit -5``, ``--rtol -1``, ``--tol nan`` at once."""
    for name, low in _POSITIVE_FLAGS.items():
        value = getattr(args, name, None)
        if value is not None and value < low:
            raise ValueError(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
    for name in _STRICTLY_POSITIVE_FLAGS:
        value = getattr(args, name, None)
        if isinstance(value, str):  # compare --gamma scale: its own parser judges it
            continue
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number > 0, got {value}")
    split = getattr(args, "split", None)
    if split is not None and not 0 < split < 1:
        raise ValueError(f"--split must be a fraction in (0, 1), got {split}")


if __name__ == "__main__":
    sys.exit(main())
