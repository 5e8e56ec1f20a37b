"""The reference pages of the documentation (``docs/``) cannot drift from the code.

Each test reads what the code defines — the settings' defaults, the stats it sets, the item
classes' fields, the request meta keys, the commands' options, the add-on's components — and
fails when a page misses one, or names one the code no longer has. The pages themselves are
built by ``./scripts/test`` (``sphinx-build -W``); these tests only read their Markdown source.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from itemadapter import ItemAdapter
from scrapy.commands import ScrapyCommand
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

import wisdom_scrapy.items
from wisdom_scrapy.addon import COMPONENTS
from wisdom_scrapy.settings import DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "wisdom_scrapy"

# a stat name: ``wisdom/`` and path segments (no space: a docstring that mentions one is no name)
STAT = re.compile(r"wisdom/[a-z0-9_]+(?:/[a-z0-9_]+)*")
# the first cell of a Markdown table row that names a stat, e.g. "| `wisdom/skipped/<reason>` |"
STAT_ROW = re.compile(r"^\| `(wisdom/[^`]+)` \|.*$", re.M)


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _sections(text: str, marker: str) -> dict[str, str]:
    """Heading text -> body up to the next heading of the same level (``marker``: "##", "###"),
    skipping fenced code blocks (a ``# comment`` in a shell example is no heading)."""
    sections: dict[str, str] = {}
    current: str | None = None
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith(marker + " "):
            current = line[len(marker) + 1 :].strip()
            sections[current] = ""
        elif not fenced and re.match(rf"#{{1,{len(marker)}}} ", line):
            current = None  # a higher-level heading ends the section
        elif current is not None:
            sections[current] += line + "\n"
    return sections


def _modules() -> Iterator[ast.Module]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


# -- settings -------------------------------------------------------------------------------


def test_settings_page_lists_every_setting_with_its_default() -> None:
    sections = {
        name: body for name, body in _sections(_page("settings.md"), "###").items()
        if name.startswith("WISDOM_")
    }
    assert sorted(set(DEFAULTS) - set(sections)) == [], "settings missing from docs/settings.md"
    assert sorted(set(sections) - set(DEFAULTS)) == [], "docs/settings.md names unknown settings"
    for name, body in sections.items():
        default = re.search(r"^Default: `([^`]*)`", body, re.M)
        assert default, f"docs/settings.md: {name} has no 'Default: `…`' line"
        assert ast.literal_eval(default.group(1)) == DEFAULTS[name], name


def _readme_value(text: str) -> object:
    """A default as the README's table writes it: a Python literal, or a bare string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def test_readme_settings_table_shows_the_defaults() -> None:
    """The README's short table of the usual settings shows each one's real default."""
    rows = re.findall(r"^\| `(WISDOM_[A-Z_]+)` \| `([^`]*)` \|", _readme(), re.M)
    assert rows, "no settings table in README.md"
    for name, default in rows:
        assert name in DEFAULTS, f"README.md names an unknown setting {name}"
        assert _readme_value(default) == DEFAULTS[name], name


# -- stats ----------------------------------------------------------------------------------


def _stats_in_code() -> tuple[set[str], set[str]]:
    """(literal stat names, f-string families with ``{…}`` as ``<>``) the package sets."""
    names: set[str] = set()
    families: set[str] = set()
    for tree in _modules():
        parts: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                parts.update(id(v) for v in node.values)
                text = "".join(
                    v.value if isinstance(v, ast.Constant) else "<>" for v in node.values
                )
                if text.startswith("wisdom/"):
                    families.add(text)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in parts
                and STAT.fullmatch(node.value)
            ):
                names.add(node.value)
    return names, families


def _family_regex(family: str) -> str:
    return "<[a-z_]+>".join(re.escape(part) for part in family.split("<>"))


def _call_arguments(method: str) -> set[str]:
    """First arguments (string constants) of every ``….method("…")`` call in the package."""
    found: set[str] = set()
    for tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == method
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return found


def _stat_rows() -> dict[str, str]:
    """Stat name (or family, ``wisdom/skipped/<reason>``) -> its table row in docs/stats.md."""
    return {m.group(1): m.group(0) for m in STAT_ROW.finditer(_page("stats.md"))}


def _listed_in_family(name: str, rows: dict[str, str]) -> bool:
    """A family's row lists ``name``'s value: ``wisdom/items/article`` in the row of
    ``wisdom/items/<role>`` that names `` `article` ``."""
    for family, row in rows.items():
        regex = re.sub(r"<[a-z_]+>", "([a-z0-9_]+)", re.escape(family))
        match = re.fullmatch(regex, name)
        if match and all(f"`{value}" in row for value in match.groups()):
            return True
    return False


def test_stats_page_names_every_stat_the_code_sets() -> None:
    names, families = _stats_in_code()
    assert len(names) > 30 and families, "the scan of the package found no stats"
    rows = _stat_rows()
    missing = sorted(n for n in names if n not in rows and not _listed_in_family(n, rows))
    assert missing == [], "stats missing from docs/stats.md"
    missing = sorted(f for f in families if not any(re.fullmatch(_family_regex(f), d)
                                                    for d in rows))
    assert missing == [], "stat families missing from docs/stats.md (as wisdom/…/<name>)"
    stale = sorted(d for d in rows if d not in names and not any(
        re.fullmatch(_family_regex(f), d) for f in families))
    assert stale == [], "docs/stats.md names stats the code does not set"


@pytest.mark.parametrize(
    ("method", "family"), [("skip", "wisdom/skipped/<reason>"), ("failed", "wisdom/errors/<stage>")]
)
def test_stats_page_lists_every_value_of_a_counted_family(method: str, family: str) -> None:
    """``runtime.skip("not_html")`` counts ``wisdom/skipped/not_html``: each reason (and each
    stage of ``runtime.failed``) is listed in its family's row."""
    values = _call_arguments(method)
    assert values, f"no .{method}(…) call found"
    row = _stat_rows()[family]
    assert sorted(v for v in values if f"`{v}`" not in row) == [], family


# -- items ----------------------------------------------------------------------------------


def test_items_page_lists_every_field_of_every_item_class() -> None:
    sections = _sections(_page("items.md"), "##")
    for name in wisdom_scrapy.items.__all__:
        cls = getattr(wisdom_scrapy.items, name)
        fields = ItemAdapter.get_field_names_from_class(cls)
        assert fields, f"{name} declares no fields"
        assert name in sections, f"docs/items.md has no '## {name}' section"
        documented = set(re.findall(r"^\| `([a-z_]+)` \|", sections[name], re.M))
        assert sorted(set(fields) - documented) == [], f"{name} fields missing from docs/items.md"
        assert sorted(documented - set(fields)) == [], f"docs/items.md: {name} has no such field"


# -- request meta keys ----------------------------------------------------------------------


def _meta_keys_in_code() -> set[str]:
    """``wisdom_…`` strings the package uses as request meta keys: constants named ``*_META``,
    ``meta.get("…")`` / ``meta["…"]`` reads and ``meta={"…": …}`` keyword arguments."""
    keys: set[str] = set()
    for tree in _modules():
        for node in ast.walk(tree):
            keys.update(_meta_keys_of(node))
    return {k for k in keys if k.startswith("wisdom_")}


def _is_meta(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "meta"


def _meta_keys_of(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id.endswith("_META") for t in node.targets
    ):
        return _constants([node.value])
    if isinstance(node, ast.Subscript) and _is_meta(node.value):
        return _constants([node.slice])
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return set()
    keys: set[str] = set()
    if _is_meta(node.func.value) and node.func.attr in ("get", "setdefault", "pop") and node.args:
        keys |= _constants(node.args[:1])
    for kw in node.keywords:
        if kw.arg == "meta" and isinstance(kw.value, ast.Dict):
            keys |= _constants([k for k in kw.value.keys if k is not None])
    return keys


def _constants(nodes: list[ast.expr]) -> set[str]:
    return {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_meta_page_names_every_request_meta_key() -> None:
    keys = _meta_keys_in_code()
    assert "wisdom_follow" in keys, "the scan of the package found no meta keys"
    documented = set(_sections(_page("meta.md"), "##"))
    assert sorted(keys - documented) == [], "meta keys missing from docs/meta.md"
    assert sorted(documented - keys) == [], "docs/meta.md names meta keys the code does not use"


# -- commands -------------------------------------------------------------------------------


class _PlainCommand(ScrapyCommand):
    """Scrapy's common options, which every command has (not documented per command)."""

    def short_desc(self) -> str:
        return ""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        pass


def _options(command: ScrapyCommand) -> set[str]:
    """The long option strings a command accepts (as Scrapy's own parser builds them)."""
    parser = argparse.ArgumentParser(conflict_handler="resolve")
    command.settings = Settings()
    command.add_options(parser)
    return {
        action.option_strings[-1]
        for action in parser._actions
        if action.option_strings and action.help != argparse.SUPPRESS
    }


def _scrapy_options(cls: type[ScrapyCommand]) -> set[str]:
    """The options of the Scrapy command ``cls`` builds on (``scrapy fetch``'s for wisdom-show;
    Scrapy's common ones for a plain command): Scrapy documents those."""
    base = next(c for c in cls.__mro__ if c.__module__.startswith("scrapy."))
    return _options(_PlainCommand() if inspect.isabstract(base) else base())


def test_commands_page_documents_every_command_and_option() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    commands = pyproject["project"]["entry-points"]["scrapy.commands"]
    sections = _sections(_page("commands.md"), "##")
    assert sorted(sections) == sorted(commands)
    for name, path in commands.items():
        cls = load_object(path.replace(":", "."))
        options = _options(cls()) - _scrapy_options(cls)
        body = sections[name]
        missing = [o for o in sorted(options) if not re.search(rf"`{re.escape(o)}[ `]", body)]
        assert missing == [], f"docs/commands.md: {name} options missing"


# -- the add-on's components ----------------------------------------------------------------


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", DOCS / "getting-started.md", PACKAGE / "addon.py"]
)
def test_manual_setup_lists_every_component_the_addon_inserts(page: Path) -> None:
    """A project that lists the components itself gets what the add-on line gives it."""
    text = page.read_text(encoding="utf-8")
    for _setting, component, order in COMPONENTS:
        entry = f'"{component.__module__}.{component.__qualname__}": {order}'
        assert entry in text, f"{page.name}: {entry} missing from the manual setup"
