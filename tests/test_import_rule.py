"""The import rule of docs/ARCHITECTURE.md §1, read from the installed sources with ``ast``.

Data flows one way: problems ← solvers (methods and anchors) ← the estimators and model selection
(the ``svmbench`` package itself) ← the harness ← the command line; the studies may use anything
below the command line. Every import counts, at module level and inside functions, and so does a
module path written as a string (registry tables, ``import_module`` calls); docstrings do not.
Cycles are refused except through imports under ``if TYPE_CHECKING:``. A name that another
module imports is public in its own module. Library modules stay under 600 lines.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: The subpackages whose folders hold the sources, and the layer of each (higher sees lower).
ROOTS = ("svmbench", "svmbench.problems", "svmbench.solvers", "svmbench.benchmarks")
LAYERS = (
    ("svmbench.problems", 0),
    ("svmbench.solvers", 1),
    ("svmbench.benchmarks.harness", 3),
    ("svmbench.benchmarks.cli", 4),
    ("svmbench.benchmarks.studies", 5),
    ("svmbench.benchmarks", 3),
    ("svmbench", 2),
)
NAMES = {0: "problems", 1: "solvers", 2: "estimators", 3: "harness", 4: "the CLI", 5: "studies"}
MAX_LINES = 600
MODULE_PATH = re.compile(r"^svmbench(\.[A-Za-z_]\w*)+$")


def layer(module: str) -> int:
    for prefix, rank in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return rank
    raise AssertionError(f"{module} is in no layer")


def allowed(importer: str, imported: str) -> bool:
    """Whether ``importer`` may import ``imported``: lower layers, its own layer, and the studies
    anything below the command line."""
    a, b = layer(importer), layer(imported)
    if a == 5:
        return b != 4
    return b <= a


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module = field(repr=False)

    @property
    def lines(self) -> int:
        return len(self.path.read_text().splitlines())


def _sources() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for root in ROOTS:
        package = importlib.import_module(root)
        folder = Path(package.__path__[0])
        files = folder.glob("*.py") if root == "svmbench" else folder.rglob("*.py")
        for path in files:
            parts = [*path.relative_to(folder).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            name = ".".join([root, *parts])
            found[name] = Module(name, path, is_package, ast.parse(path.read_text(), str(path)))
    return found


SOURCES = _sources()


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    base = base if module.is_package else base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int
    how: str  # "import", "type-checking" or "string"
    names: tuple[str, ...] = ()


def _known(name: str) -> str | None:
    """The longest prefix of ``name`` that is one of the package's modules."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in SOURCES:
            return candidate
        parts.pop()
    return None


def _edges(module: Module) -> list[Edge]:
    guarded = _type_checking_blocks(module.tree)
    docs = _docstrings(module.tree)
    out = []
    for node in ast.walk(module.tree):
        how = "type-checking" if id(node) in guarded else "import"
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name)
                if target:
                    out.append(Edge(module.name, target, node.lineno, how))
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node)
            if not base.startswith("svmbench"):
                continue
            plain = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in SOURCES:
                    out.append(Edge(module.name, sub, node.lineno, how))
                else:
                    plain.append(alias.name)
            if plain and _known(base):
                out.append(Edge(module.name, _known(base), node.lineno, how, tuple(plain)))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and MODULE_PATH.match(node.value)
        ):
            target = _known(node.value)
            if target:
                out.append(Edge(module.name, target, node.lineno, "string"))
    return out


EDGES = [edge for module in SOURCES.values() for edge in _edges(module)]


def _where(edge: Edge) -> str:
    return f"{SOURCES[edge.importer].path.name}:{edge.line} ({edge.importer} -> {edge.imported})"


def test_the_sources_are_found():
    for expected in (
        "svmbench.estimators",
        "svmbench.problems.kernel_dual",
        "svmbench.solvers.registry",
        "svmbench.solvers.anchors.libsvm",
        "svmbench.benchmarks.harness.cases",
        "svmbench.benchmarks.cli.main",
        "svmbench.benchmarks.studies.bench_auto",
    ):
        assert expected in SOURCES
    assert any(e.how == "string" for e in EDGES)  # the registry's table is seen


def test_imports_point_down_the_layers():
    upward = [
        f"{_where(e)}: {NAMES[layer(e.importer)]} may not use {NAMES[layer(e.imported)]}"
        for e in EDGES
        if not allowed(e.importer, e.imported)
    ]
    assert not upward, "\n".join(upward)


def _cycles(edges) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.importer != e.imported:
            graph.setdefault(e.importer, set()).add(e.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    cycles = _cycles(e for e in EDGES if e.how == "import")
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    edges = [Edge("a", "b", 1, "import"), Edge("b", "c", 1, "import"), Edge("c", "a", 1, "import")]
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles(edges[:2]) == []


def test_imported_names_are_public():
    private = [
        f"{_where(e)} imports {name}"
        for e in EDGES
        if e.how != "string"
        for name in e.names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert not private, "\n".join(private)


def test_no_private_attribute_of_another_module():
    """``module._name`` where ``module`` was imported from the package."""
    crossings = []
    for module in SOURCES.values():
        aliases = {}
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(module, node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in SOURCES:
                        aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in SOURCES:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(module.tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and f"{aliases[node.value.id]}.{node.attr}" not in SOURCES
            ):
                crossings.append(
                    f"{module.path.name}:{node.lineno} uses {node.value.id}.{node.attr}"
                )
    assert not crossings, "\n".join(crossings)


def _is_library(module: Module) -> bool:
    return ".studies." not in module.name and "._jit" not in module.name


@pytest.mark.parametrize(
    "name", sorted(n for n, m in SOURCES.items() if _is_library(m)), ids=lambda n: n
)
def test_library_modules_stay_under_600_lines(name):
    assert SOURCES[name].lines < MAX_LINES, f"{SOURCES[name].path}: {SOURCES[name].lines} lines"


def test_the_rule_would_catch_an_upward_import():
    tree = ast.parse("def f():\n    from svmbench.benchmarks.harness.cases import expand\n")
    fake = Module("svmbench.solvers.fake", Path("fake.py"), False, tree)
    (edge,) = _edges(fake)
    assert edge.imported == "svmbench.benchmarks.harness.cases" and not allowed(
        edge.importer, edge.imported
    )
    tree = ast.parse('"""svmbench.benchmarks.cli"""\nTABLE = ("svmbench.benchmarks.cli.main",)\n')
    fake = Module("svmbench.problems.fake", Path("fake.py"), False, tree)
    assert [e.how for e in _edges(fake)] == ["string"]
