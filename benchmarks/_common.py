"""Helpers shared by the benchmark scripts: data locations, loading, HTML to text, timing,
tables and JSON output. Standard library + lxml only, so every benchmark can import it."""

from __future__ import annotations

import gzip
import json
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import lxml.etree
import lxml.html

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Shared data directory (``../shared/data`` relative to the repository).
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()
ARTICLE_BENCHMARK_DIR = SHARED_DATA / "article-extraction-benchmark"

if str(REPO_ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(REPO_ROOT))


@dataclass(frozen=True)
class ArticlePage:
    """One page of the article-extraction benchmark."""

    id: str
    url: str
    html: str
    gold: str


def load_article_benchmark(
    path: Path = ARTICLE_BENCHMARK_DIR, limit: int | None = None
) -> list[ArticlePage]:
    """Pages of the article-extraction benchmark (``html/<id>.html.gz`` + ``ground-truth.json``),
    sorted by id. The HTML is decoded as UTF-8, as the benchmark's own extractors read it."""
    path = Path(path)
    truth_file = path / "ground-truth.json"
    if not truth_file.is_file():
        raise SystemExit(f"no ground-truth.json in {path}: pass the data directory with --data")
    truth = json.loads(truth_file.read_text("utf-8"))
    pages = []
    for page_id in sorted(truth)[:limit]:
        with gzip.open(path / "html" / f"{page_id}.html.gz", "rt", encoding="utf8") as f:
            html = f.read()
        entry = truth[page_id]
        pages.append(
            ArticlePage(page_id, entry.get("url", ""), html, entry.get("articleBody") or "")
        )
    return pages


_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)
_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "head", "title"})
_SPACES = re.compile(r"[ \t\r\f\v\xa0]+")


def html_to_text(html: str) -> str:
    """Visible text of an HTML fragment or page, one line per block element.

    A small stand-in for ``html_text.extract_text`` (which the benchmark applies to
    readability's output but is not installed here): block elements become line breaks, so
    words of adjacent blocks never run together; script/style/head text is left out.
    """
    if not html or not html.strip():
        return ""
    try:
        root = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return ""
    parts: list[str] = []
    skipping = 0
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else None
        if event == "start":
            if tag in _SKIP_TAGS:
                skipping += 1
            if tag in _BLOCK_TAGS:
                parts.append("\n")
            if tag is not None and not skipping and element.text:
                parts.append(element.text)
        else:
            if tag in _SKIP_TAGS:
                skipping -= 1
            if tag in _BLOCK_TAGS:
                parts.append("\n")
            if element is not root and not skipping and element.tail:
                parts.append(element.tail)
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(parts).splitlines())
    return "\n".join(line for line in lines if line)


def timed_map(
    function: Callable[..., Any], arguments: Iterable[Sequence[Any]]
) -> tuple[list[Any], list[float], list[BaseException]]:
    """Call ``function(*args)`` for every argument tuple; results (None on error), per-call
    seconds and the exceptions raised (the run goes on: one bad page must not hide the rest)."""
    results: list[Any] = []
    seconds: list[float] = []
    errors: list[BaseException] = []
    clock = time.perf_counter
    for args in arguments:
        start = clock()
        try:
            result = function(*args)
        except Exception as exc:
            result = None
            errors.append(exc)
        seconds.append(clock() - start)
        results.append(result)
    return results, seconds, errors


def dist_version(name: str) -> str | None:
    """Installed version of a distribution, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, str]:
    """Where the figures were measured."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table (pastes straight into benchmarks/README.md)."""
    text_rows = [[str(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in text_rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return (
            "| " + " | ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)) + " |"
        )

    separator = "| " + " | ".join("-" * w for w in widths) + " |"
    return "\n".join([line(headers), separator, *(line(row) for row in text_rows)])


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON (parent directories created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", "utf-8")
