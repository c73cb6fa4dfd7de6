"""The README's command lines run as written.

Every fenced block that follows a ``<!-- runnable -->`` line in README.md is run, line by line,
in a fresh folder: a line starting with ``svmbench`` goes through the command's entry point in
this process (the same parser and code as the console script, without starting an interpreter
per line); any other line through the shell. The blocks left unmarked are the install lines,
the full suites (minutes) and ``--cluster`` (a Dask scheduler).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- runnable -->"
#: Seconds one marked line may take on small data (the README promises about a minute).
LINE_BUDGET = 60.0


def runnable_blocks(text: str) -> list[list[str]]:
    """The command lines of each fenced block right after a :data:`MARKER` line."""
    blocks = []
    pattern = re.escape(MARKER) + r"\s*\n```[a-z]*\n(.*?)\n```"
    for body in re.findall(pattern, text, flags=re.DOTALL):
        lines = [line.strip() for line in body.splitlines()]
        blocks.append([line for line in lines if line and not line.startswith("#")])
    return blocks


def test_the_marker_finds_blocks_and_leaves_the_others():
    text = f"```bash\npip install .\n```\n{MARKER}\n```bash\n# a comment\nsvmbench list\n```\n"
    assert runnable_blocks(text) == [["svmbench list"]]


@pytest.mark.skipif(not README.exists(), reason="the tests run outside a checkout")
def test_the_readme_marks_blocks_without_install_lines_or_a_cluster():
    blocks = runnable_blocks(README.read_text(encoding="utf-8"))
    assert blocks, f"README.md marks no block with {MARKER}"
    for line in (line for block in blocks for line in block):
        assert "pip install" not in line and "--cluster" not in line, line


@pytest.mark.skipif(not README.exists(), reason="the tests run outside a checkout")
def test_the_marked_readme_blocks_run_as_written(tmp_path, monkeypatch, capsys):
    from svmbench.benchmarks.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    for block in runnable_blocks(README.read_text(encoding="utf-8")):
        for line in block:
            tic = time.perf_counter()
            if line.startswith("svmbench "):
                code = main(shlex.split(line)[1:])
                err = capsys.readouterr().err
            else:
                done = subprocess.run(line, shell=True, capture_output=True, text=True, timeout=120)
                code, err = done.returncode, done.stderr
            seconds = time.perf_counter() - tic
            assert code == 0, f"{line}\n{err[-2000:]}"
            assert seconds < LINE_BUDGET, f"{line} took {seconds:.0f} s"
    assert (tmp_path / "svmbench-report" / "all" / "report.html").exists()
