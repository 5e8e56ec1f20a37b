"""The folders are the architecture: the engine's floors (``page``, ``store``, ``segment``,
``mining``, ``analysis``, ``engine``) know nothing of Scrapy, each imports only the floors below
it, the package root and ``report/`` are the Scrapy layer on top, and no modules of the package
import each other in a circle.

The import graph is read from the source (``ast``): every ``import`` and ``from … import``
counts, at module level, inside a function (a lazy import is still a dependency) or under ``if
TYPE_CHECKING:`` (a type named across modules ties them together as much as a call: a cycle of
such imports is a cycle of modules that cannot be understood, or moved, one without the other).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wisdom_scrapy"
SCRAPY = ("scrapy", "twisted", "itemadapter", "scrapy_redis")  # itemadapter imports Scrapy
#: The engine's floors, lowest first: a module of one imports its own floor's and those before.
FLOORS = ("page", "store", "segment", "mining", "analysis", "engine")
#: Root modules the floors may import: the item records both layers share (no Scrapy in them).
SHARED = {"items"}
#: Root modules without Scrapy that still belong at the root: the shared records, and the test
#: helpers shipped for spiders' tests (a static HTTP server).
ROOT_WITHOUT_SCRAPY = {"items", "testing"}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _folder(module: str) -> str | None:
    """The module's folder under the package (``engine`` …), None for a module at the root."""
    parts = module.split(".")[1:]
    is_package = MODULES[module].name == "__init__.py"
    return parts[0] if len(parts) > 1 or (parts and is_package) else None


def _floor(module: str) -> int | None:
    """The module's floor (index in FLOORS), None for the Scrapy layer."""
    folder = _folder(module)
    return FLOORS.index(folder) if folder in FLOORS else None


ENGINE = sorted(m for m in MODULES if _floor(m) is not None)


def _imports(module: str) -> Iterator[str]:
    """Every module name ``module`` imports; ``from a import b`` yields ``a.b`` when that is a
    module of the package, else ``a``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield full if full in MODULES else base


def _own(name: str) -> str | None:
    """The package module ``name`` is (or lies in), None for another distribution's."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        graph[module] = {t for name in _imports(module) if (t := _own(name)) not in (None, module)}
    return graph


GRAPH = _graph()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _run_fresh(code: str) -> None:
    """Run ``code`` in a fresh interpreter (this checkout first on its path); it must succeed."""
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr or result.stdout


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_type_checking_imports_are_edges() -> None:
    """An import under ``if TYPE_CHECKING:`` is read as one (the graph hides no cycle)."""
    tree = ast.parse("if TYPE_CHECKING:\n    from wisdom_scrapy.store import TermStore\n")
    names = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert names == ["wisdom_scrapy.store"]
    assert "wisdom_scrapy.store" in GRAPH["wisdom_scrapy.engine.sites"]  # typed only


def test_no_import_cycle_in_the_package() -> None:
    assert _cycles(GRAPH) == []


def test_every_folder_is_a_floor_or_the_scrapy_layer() -> None:
    """A new folder is placed on purpose: a floor of the engine, or the Scrapy layer's."""
    folders = {f for m in MODULES if (f := _folder(m)) is not None}
    assert folders - set(FLOORS) == {"report"}, folders


def test_the_floors_import_no_scrapy_and_only_the_floors_below() -> None:
    """Dependencies point down: a module of a floor imports modules of its own floor or of the
    floors before it in FLOORS (and the shared item records), and nothing of Scrapy (nor
    itemadapter, which imports Scrapy), not even inside a function."""
    assert len(ENGINE) > 30, ENGINE  # FLOORS still names the package's folders
    wrong = {}
    for module in ENGINE:
        floor = _floor(module)
        assert floor is not None
        names = set(_imports(module))
        bad = sorted(n for n in names if n.split(".")[0] in SCRAPY)
        for target in sorted(GRAPH[module]):
            target_floor = _floor(target)
            if target.split(".")[-1] in SHARED and _folder(target) is None:
                continue
            if target_floor is None or target_floor > floor:
                bad.append(target)
        if bad:
            wrong[module] = bad
    assert wrong == {}


def test_the_shared_records_import_nothing() -> None:
    """The item records the floors import from the root import no Scrapy and no module of the
    package: they stay below everything that uses them."""
    for name in SHARED:
        module = f"wisdom_scrapy.{name}"
        assert GRAPH[module] == set(), GRAPH[module]
        assert not [n for n in _imports(module) if n.split(".")[0] in SCRAPY]


def test_the_root_holds_the_scrapy_layer() -> None:
    """A module at the root that needs no Scrapy is engine code in the wrong place (a floor is
    its home), but for the few listed in ROOT_WITHOUT_SCRAPY."""
    root = [m for m in MODULES if m.count(".") == 1 and _folder(m) is None]
    without = {
        m.split(".")[1] for m in root if not any(n.split(".")[0] in SCRAPY for n in _imports(m))
    }
    assert without == ROOT_WITHOUT_SCRAPY


@pytest.mark.crawl
def test_importing_the_engine_loads_no_scrapy() -> None:
    """The package itself and every engine module, imported in a fresh interpreter: Scrapy
    (and Twisted) stay out of ``sys.modules``; the first module that pulls one in is named."""
    code = (
        "import importlib, sys\n"
        f"for name in {['wisdom_scrapy', *ENGINE]!r}:\n"
        "    importlib.import_module(name)\n"
        "    loaded = [m for m in ('scrapy', 'twisted', 'itemadapter') if m in sys.modules]\n"
        "    if loaded:\n"
        "        sys.exit(f'{name} imports {loaded}')\n"
    )
    _run_fresh(code)


@pytest.mark.crawl
def test_scrapy_names_of_the_package_load_on_use() -> None:
    """``wisdom_scrapy.Addon`` / ``SettingsError`` still work, loading the Scrapy layer."""
    code = (
        "import sys, wisdom_scrapy\n"
        "assert 'scrapy' not in sys.modules\n"
        "from wisdom_scrapy import Addon, SettingsError\n"
        "from itemadapter import ItemAdapter\n"
        "item = wisdom_scrapy.ArticleItem('u', 't', 'body', extra={'category': 'x'})\n"
        "assert ItemAdapter(item)['category'] == 'x', dict(ItemAdapter(item))\n"
        "assert Addon.__module__ == 'wisdom_scrapy.addon'\n"
        "assert issubclass(SettingsError, ValueError)\n"
    )
    _run_fresh(code)
