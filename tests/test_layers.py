"""Two floors: the engine (mining, analysis, store …) knows nothing of Scrapy, the Scrapy
components sit on top of it, and no modules of the package import each other in a circle.

The import graph is read from the source (``ast``): every ``import`` and ``from … import``
counts, at module level or inside a function (a lazy import is still a dependency, and a
circle of lazy imports still ties the modules together); only imports under
``if TYPE_CHECKING:`` are left out (they never run).
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
# The engine floor: these modules and every module under these packages.
ENGINE_MODULES = {"items"}
ENGINE_PACKAGES = {"analysis", "engine", "mining", "page", "segment", "store"}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _is_engine(module: str) -> bool:
    parts = module.split(".")[1:]
    return bool(parts) and (parts[0] in ENGINE_PACKAGES or ".".join(parts) in ENGINE_MODULES)


ENGINE = sorted(m for m in MODULES if _is_engine(m))


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def _imports(module: str) -> Iterator[str]:
    """Every module name ``module`` imports (outside ``TYPE_CHECKING``); ``from a import b``
    yields ``a.b`` when that is a module of the package, else ``a``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
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


def test_no_import_cycle_in_the_package() -> None:
    assert _cycles(_graph()) == []


def test_engine_modules_import_no_scrapy_layer_module() -> None:
    """Dependencies point one way: an engine module imports engine modules only, and nothing
    of Scrapy (nor itemadapter, which imports Scrapy), not even inside a function."""
    assert len(ENGINE) > 20, ENGINE  # the lists above still name the package's modules
    wrong = {}
    for module in ENGINE:
        names = set(_imports(module))
        bad = sorted(n for n in names if n.split(".")[0] in SCRAPY)
        bad += sorted(t for n in names if (t := _own(n)) and t != module and not _is_engine(t)
                      and t != "wisdom_scrapy")  # fmt: skip
        if bad:
            wrong[module] = bad
    assert wrong == {}


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
