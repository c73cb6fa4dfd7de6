"""tests/BAD_INPUT.md: at least 80 rows, each naming a test that exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

HERE = Path(__file__).parent


def _tests_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def test_every_row_names_an_existing_test():
    rows = [line for line in (HERE / "BAD_INPUT.md").read_text().splitlines()
            if re.match(r"\| \d+ \|", line)]  # fmt: skip
    assert len(rows) >= 80
    last_file = None
    for row in rows:
        cell = row.rstrip(" |").split("|")[-1]
        for ref in re.findall(r"([\w/]+\.py)?::(test_\w+)", cell):
            file, name = ref
            last_file = file or last_file
            assert last_file is not None, row
            assert name in _tests_of(HERE / last_file), f"{last_file}::{name} (row: {row[:60]})"
        if "::" not in cell:  # "the same" or "…[id]": the test of the row above
            assert last_file is not None, row
