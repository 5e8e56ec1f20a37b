"""Site-crawl benchmark: a whole local site crawled end to end, extension on vs off, in one run.

Serves a site directory on 127.0.0.1 and crawls it twice with the sample project's ``site``
spider, each crawl a ``scrapy crawl`` subprocess started from the repository root:

* **on**: the project as it is (``ADDONS = {"wisdom_scrapy.Addon": 500}``), a fresh SQLite store
  in a temporary directory: every page becomes an ArticleItem, a TocItem or a PageItem "other";
* **off**: ``-s ADDONS={}``: the plain crawl, PageItems only.

Both crawls carry :class:`StatsToJson` (this module, ``-s EXTENSIONS=...``), which writes Scrapy's
stats, every response in fetch order and every scraped item (type, URL, role, time) to JSON when
the engine stops. Then, in this process:

* **gold from the site's own markup** (the crawler never sees it): the role of each page (article,
  TOC, other), the article text, the TOC links; see :func:`gold_for_page` for the rules;
* **article bodies**: token-shingle P/R/F1 (:func:`wisdom_scrapy.analysis.evaluation.shingle_prf`)
  of each ArticleItem's ``text`` against the gold text; a gold article page that came out with
  another role, or without an item, scores P = R = F1 = 0; trafilatura and the page's full text on
  the same pages (from the files) beside it;
* **page roles**: precision/recall of "article" and "toc";
* **TOC links**: SNC-style P/R/F1 of each TocItem's link URLs against the links inside the
  page's main part (absolute, fragment removed, links to the page itself left out on both sides);
* **cold start**: the same figures for the first ``--early`` (20) pages by fetch order against
  the rest;
* **speed**: HTML pages per second of both crawls (pages / Scrapy's ``elapsed_time_seconds``),
  and the CPU seconds the crawl process spent per page (user + system, from spider open to
  engine stop: what a loaded machine's wall clock does not show);
* **item integrity**: one item per fetched HTML page, no duplicates, nothing lost.

::

    python benchmarks/site_crawl.py                       # pydoc (/usr/share/doc/python3.11/html)
    python benchmarks/site_crawl.py --site zh --json zh.json
    python benchmarks/site_crawl.py --site path/to/site --start index.html --keep /tmp/run

A crawl that fails (non-zero exit, no stats, no items file, finish reason other than
"finished") prints its log tail and the benchmark exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import REPO_ROOT, dist_version, environment, html_to_text, markdown_table
    from _common import write_json as _write_json
else:  # imported as ``benchmarks.site_crawl`` (the crawl subprocess, the tests)
    from ._common import REPO_ROOT, dist_version, environment, html_to_text, markdown_table
    from ._common import write_json as _write_json

import lxml.etree
import lxml.html
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse

from wisdom_scrapy.analysis.evaluation import PRF, feature_prf, shingle_prf, weighted_match

SITES = {
    "pydoc": Path("/usr/share/doc/python3.11/html"),
    "zh": Path("/usr/share/debian-reference"),
}
#: Setting that tells :class:`StatsToJson` where to write.
STATS_FILE_SETTING = "SITE_CRAWL_STATS_FILE"
ROLES = ("article", "toc", "other")

# ------------------------------------------------------------------------------------------
# The stats extension (runs inside the crawl subprocess)
# ------------------------------------------------------------------------------------------


class StatsToJson:
    """Scrapy extension: the crawl's stats, fetches and items as one JSON file.

    Enabled with ``-s EXTENSIONS='{"benchmarks.site_crawl.StatsToJson": 0}'`` and
    ``-s SITE_CRAWL_STATS_FILE=PATH``. Written at ``engine_stopped`` (after the stats collector
    closed, so ``elapsed_time_seconds`` and ``finish_reason`` are in):

    * ``stats``: every Scrapy stat (datetimes as strings);
    * ``cpu_seconds``: CPU time (user + system) of the crawl process from spider open to
      engine stop;
    * ``responses``: every response in the order it was received: URL, status, content type,
      whether Scrapy made it an :class:`~scrapy.http.HtmlResponse`, seconds since spider open;
    * ``items``: every scraped item in order: class name, ``url``, ``role``, ``single_page``,
      the URL of the response whose output carried it, seconds since spider open.
    """

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.started = time.monotonic()
        self.cpu_started = _cpu_seconds()
        self.responses: list[dict[str, Any]] = []
        self.items: list[dict[str, Any]] = []
        self.crawler: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> StatsToJson:
        path = crawler.settings.get(STATS_FILE_SETTING)
        if not path:
            raise NotConfigured(f"{STATS_FILE_SETTING} is not set")
        ext = cls(path)
        ext.crawler = crawler
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.response_received, signal=signals.response_received)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def _now(self) -> float:
        return round(time.monotonic() - self.started, 4)

    def spider_opened(self, spider: Any) -> None:
        self.started = time.monotonic()
        self.cpu_started = _cpu_seconds()

    def response_received(self, response: Any, request: Any, spider: Any) -> None:
        self.responses.append(
            {
                "url": response.url,
                "status": response.status,
                "content_type": response.headers.get(b"Content-Type", b"").decode("latin-1"),
                "html": isinstance(response, HtmlResponse),
                "t": self._now(),
            }
        )

    def item_scraped(self, item: Any, response: Any, spider: Any) -> None:
        get = item.get if isinstance(item, Mapping) else lambda k, d=None: getattr(item, k, d)
        self.items.append(
            {
                "type": type(item).__name__,
                "url": get("url"),
                "role": get("role"),
                "single_page": get("single_page"),
                "response_url": getattr(response, "url", None),
                "t": self._now(),
            }
        )

    def engine_stopped(self) -> None:
        data = {
            "cpu_seconds": _cpu_seconds() - self.cpu_started,
            "stats": self.crawler.stats.get_stats(),
            "responses": self.responses,
            "items": self.items,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(data, default=str, ensure_ascii=False), "utf-8")


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ------------------------------------------------------------------------------------------
# Gold from the page markup
# ------------------------------------------------------------------------------------------


@dataclass
class Gold:
    """What a page is, from its markup: ``role`` (None: no rule applies, not scored), the
    article's gold ``text``, the TOC's gold ``anchors`` (link URL of every anchor, in document
    order, repeats kept), their set ``links``, and the ``rule`` that decided."""

    role: str | None
    rule: str
    text: str = ""
    anchors: tuple[str, ...] = ()

    @property
    def links(self) -> frozenset[str]:
        return frozenset(self.anchors)


def _has_class(cls: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {cls} ')"


# Sphinx (python3.11-doc): what makes a main part a table of contents.
_SPHINX_TOC_MARKERS = (
    ("toctree-wrapper", f".//div[{_has_class('toctree-wrapper')}]"),
    ("indextable", f".//table[{_has_class('indextable')}]"),  # genindex-*, py-modindex
    ("contentstable", f".//table[{_has_class('contentstable')}]"),  # the front page
    ("genindex-jumpbox", f".//div[{_has_class('genindex-jumpbox')}]"),  # genindex.html
)
# DocBook HTML (debian-reference): the component that holds a page's content.
_DOCBOOK_ARTICLES = ("chapter", "appendix", "preface", "article", "glossary", "bibliography")
_DOCBOOK_TOCS = ("book", "part", "set")
# DocBook's generated in-page lists (section titles again, as links): not article text.
_DOCBOOK_GENERATED = ("toc", "list-of-tables", "list-of-figures", "list-of-examples")


def normalize_url(url: str, base: str | None = None) -> str | None:
    """Absolute http(s) URL without fragment, or None for other schemes (mailto:, javascript:)."""
    absolute = urljoin(base, url.strip()) if base else url.strip()
    absolute = urldefrag(absolute)[0]
    if urlsplit(absolute).scheme not in ("http", "https"):
        return None
    return absolute


def main_anchors(part: Any, page_url: str) -> tuple[str, ...]:
    """URLs of the ``<a href>`` inside ``part``, one per anchor: absolute, no fragment, http(s),
    not the page itself (permalinks and in-page links are left out)."""
    page = normalize_url(page_url)
    urls = []
    for anchor in part.iter("a"):
        href = anchor.get("href")
        if href is None:
            continue
        url = normalize_url(href, page_url)
        if url is not None and url != page:
            urls.append(url)
    return tuple(urls)


def main_links(part: Any, page_url: str) -> frozenset[str]:
    """The set of :func:`main_anchors`."""
    return frozenset(main_anchors(part, page_url))


def part_text(part: Any) -> str:
    """Text of an element (whitespace normalised, one line per block element)."""
    return html_to_text(lxml.html.tostring(part, encoding="unicode"))


def _sphinx_gold(main: Any, page_url: str) -> Gold:
    for name, xpath in _SPHINX_TOC_MARKERS:
        if main.xpath(xpath):
            rule = f"sphinx: div[role=main] holds {name}"
            return Gold("toc", rule, anchors=main_anchors(main, page_url))
    if main.xpath(".//form"):
        return Gold("other", "sphinx: div[role=main] holds a form (search page)")
    for permalink in main.xpath(f".//a[{_has_class('headerlink')}]"):
        permalink.drop_tree()  # the "¶" permalinks (not \w: no effect on the metric)
    return Gold("article", "sphinx: div[role=main], ordinary prose", text=part_text(main))


def _docbook_gold(component: Any, kind: str, page_url: str) -> Gold:
    if kind in _DOCBOOK_TOCS:
        return Gold("toc", f"docbook: div.{kind}", anchors=main_anchors(component, page_url))
    generated = " or ".join(_has_class(c) for c in _DOCBOOK_GENERATED)
    for part in component.xpath(f".//div[{generated}]"):
        part.drop_tree()
    rule = f"docbook: div.{kind} without its generated toc"
    return Gold("article", rule, text=part_text(component))


_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


def decode_page(raw: bytes | str) -> str:
    """A served page as text: UTF-8 (what the static server announces), without the XML
    declaration that XHTML pages (DocBook) start with and that lxml refuses in a str."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return _XML_DECLARATION.sub("", text, count=1)


def gold_for_page(html: str | bytes, page_url: str) -> Gold:
    """The gold of one page, from its markup; the rules, first match wins:

    * **Sphinx** (a ``div[role=main]``): TOC when the main part holds a ``div.toctree-wrapper``,
      the general/module index table (``table.indextable``), the front page's
      ``table.contentstable`` or the index-by-letter ``div.genindex-jumpbox``; "other" when it
      holds a form (the search page); otherwise an article, whose gold text is the main part's
      text (headings, paragraphs, lists, tables, code; the "¶" permalinks removed).
    * **DocBook** (a top-level ``div.chapter|appendix|preface|article|glossary|bibliography``):
      an article, gold text = that div without DocBook's generated in-page ``div.toc`` /
      ``div.list-of-*`` (section titles repeated as links; the headings stay in the text);
      ``div.book|part|set``: a TOC, gold links = links inside it.
    * anything else: "other" when the page has a body (e.g. debian-reference's language
      selector), None when it cannot be parsed.

    TOC gold links: :func:`main_links` of the main part / component.
    """
    try:
        root = lxml.html.fromstring(decode_page(html))
    except (lxml.etree.ParserError, ValueError):
        return Gold(None, "unparsable")
    main = root.xpath("//div[@role='main']")
    if main:
        return _sphinx_gold(main[0], page_url)
    for kind in (*_DOCBOOK_ARTICLES, *_DOCBOOK_TOCS):
        found = root.xpath(f"/html/body/div[{_has_class(kind)}]")
        if found:
            return _docbook_gold(found[0], kind, page_url)
    if root.find(".//body") is not None:
        return Gold("other", "no main part, no DocBook component")
    return Gold(None, "no body")


# ------------------------------------------------------------------------------------------
# Scoring (pure functions: the tests call them)
# ------------------------------------------------------------------------------------------

_CJK = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af])")


def cjk_as_tokens(text: str | None) -> str:
    """Each CJK character as a token of its own (the benchmark's ``\\w+`` makes a whole run of
    Chinese characters, often a clause, one token; this variant counts characters)."""
    return _CJK.sub(r" \1 ", text or "")


ZERO = PRF(0.0, 0.0, 0.0)


def article_score(item: Mapping[str, Any] | None, gold_text: str, cjk: bool = False) -> PRF:
    """Shingle P/R/F1 of one gold article page: ``item`` is the page's emitted item (a dict as
    the feed wrote it) or None when the page has none. An item of another role than "article"
    scores (0, 0, 0); so does a missing item."""
    if item is None or item.get("role") != "article":
        return ZERO
    text = item.get("text") or ""
    if cjk:
        return shingle_prf(cjk_as_tokens(text), cjk_as_tokens(gold_text))
    return shingle_prf(text, gold_text)


def text_score(prediction: str | None, gold_text: str, cjk: bool = False) -> PRF:
    """Shingle P/R/F1 of any extracted text (trafilatura, full text) against the gold."""
    if cjk:
        return shingle_prf(cjk_as_tokens(prediction), cjk_as_tokens(gold_text))
    return shingle_prf(prediction, gold_text)


def toc_anchors(item: Mapping[str, Any], page_url: str) -> list[str]:
    """A TocItem's link URLs, one per link, normalised as the gold is (:func:`main_anchors`)."""
    page = normalize_url(page_url)
    urls = []
    for link in item.get("links") or []:
        url = normalize_url(str(link.get("url") or ""), page_url)
        if url is not None and url != page:
            urls.append(url)
    return urls


def toc_links(item: Mapping[str, Any], page_url: str) -> frozenset[str]:
    """The set of :func:`toc_anchors`."""
    return frozenset(toc_anchors(item, page_url))


def toc_score(item: Mapping[str, Any] | None, gold_links: Iterable[str], page_url: str) -> PRF:
    """SNC-style P/R/F1 of a gold TOC page: the item's link URLs against the gold links (sets,
    each URL counted once: which pages the TOC leads to). Another role, or no item, scores
    (0, 0, 0)."""
    if item is None or item.get("role") != "toc":
        return ZERO
    return weighted_match(frozenset(gold_links), toc_links(item, page_url)).prf


def toc_anchor_score(item: Mapping[str, Any] | None, gold_anchors: Iterable[str],
                     page_url: str) -> PRF:
    """The anchor-counting variant, nearer WISDOM's SNC (matched anchor nodes): link URLs as
    multisets, common = Σ min(count) (an anchor is matched by its target URL, not its node).
    Another role, or no item, scores (0, 0, 0)."""
    if item is None or item.get("role") != "toc":
        return ZERO
    return feature_prf(Counter(toc_anchors(item, page_url)), Counter(gold_anchors)).prf


def role_prf(gold: Mapping[str, str | None], predicted: Mapping[str, str], role: str
             ) -> dict[str, float]:
    """Precision/recall/F1 of one role over the pages in ``gold`` (URL -> gold role; None =
    unlabelled, ignored). ``predicted`` maps URL -> emitted role (a page without an item is
    simply not predicted as anything)."""
    labelled = {u for u, r in gold.items() if r is not None}
    want = {u for u in labelled if gold[u] == role}
    got = {u for u in labelled if predicted.get(u) == role}
    both = len(want & got)
    m = weighted_match(want, got)
    return {
        "gold": len(want),
        "predicted": len(got),
        "correct": both,
        "precision": m.precision,
        "recall": m.recall,
        "f1": m.f1,
    }


def mean_prf(scores: Iterable[PRF]) -> dict[str, float]:
    """Mean of per-page precision, recall and F1 (F1 is the mean of per-page F1)."""
    scores = list(scores)
    if not scores:
        return {"n": 0, "precision": float("nan"), "recall": float("nan"), "f1": float("nan")}
    return {
        "n": len(scores),
        "precision": statistics.fmean(s.precision for s in scores),
        "recall": statistics.fmean(s.recall for s in scores),
        "f1": statistics.fmean(s.f1 for s in scores),
    }


# ------------------------------------------------------------------------------------------
# Running the crawls
# ------------------------------------------------------------------------------------------


@dataclass
class Crawl:
    """One ``scrapy crawl`` subprocess and what it left behind."""

    name: str
    command: list[str]
    returncode: int
    wall_seconds: float
    log: Path
    load_before: float  # 1-minute load average when the crawl started (a shared machine shows)
    stats: dict[str, Any] = field(default_factory=dict)
    cpu_seconds: float = float("nan")  # the crawl process' CPU time, spider open to stop
    responses: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)  # item_scraped, in order
    items: list[dict[str, Any]] = field(default_factory=list)  # the feed file's items
    problem: str = ""

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(text[-lines:])


def crawl_command(name: str, start_url: str, workdir: Path, settings: list[str]) -> list[str]:
    """``scrapy crawl site ...`` as :func:`run_crawl` runs it (with ``python -m`` in front)."""
    return [
        "scrapy", "crawl", "site",
        "-a", f"url={start_url}",
        "-O", str(workdir / f"{name}.items.jsonl"),
        "-s", "EXTENSIONS=" + json.dumps({"benchmarks.site_crawl.StatsToJson": 0}),
        "-s", f"{STATS_FILE_SETTING}={workdir / f'{name}.stats.json'}",
        "-s", "LOG_LEVEL=INFO",
        *settings,
    ]


def run_crawl(name: str, start_url: str, workdir: Path, settings: list[str],
              timeout: float) -> Crawl:
    """Run ``scrapy crawl site`` from the repository root; never raises on a failed crawl
    (``problem`` says what went wrong)."""
    items_file = workdir / f"{name}.items.jsonl"
    stats_file = workdir / f"{name}.stats.json"
    log_file = workdir / f"{name}.log"
    for stale in (items_file, stats_file):
        stale.unlink(missing_ok=True)
    command = [sys.executable, "-m", *crawl_command(name, start_url, workdir, settings)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
    )
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with log_file.open("w", encoding="utf-8") as log:
        try:
            proc = subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, timeout=timeout, check=False)
            returncode = proc.returncode
        except subprocess.TimeoutExpired:
            returncode = -9
    crawl = Crawl(name, command, returncode, time.perf_counter() - started, log_file, load)
    if returncode == -9:
        crawl.problem = f"timed out after {timeout:.0f} s"
        return crawl
    if returncode != 0:
        crawl.problem = f"exit status {returncode}"
    if not stats_file.is_file():
        crawl.problem = crawl.problem or "no stats file (StatsToJson did not run)"
        return crawl
    data = json.loads(stats_file.read_text("utf-8"))
    crawl.stats, crawl.responses, crawl.events = data["stats"], data["responses"], data["items"]
    crawl.cpu_seconds = data.get("cpu_seconds", float("nan"))
    if not items_file.is_file():
        crawl.problem = crawl.problem or "no items file"
        return crawl
    with items_file.open(encoding="utf-8") as f:
        crawl.items = [json.loads(line) for line in f if line.strip()]
    reason = crawl.stats.get("finish_reason")
    if not crawl.problem and reason != "finished":
        crawl.problem = f"finish_reason {reason!r}"
    return crawl


def html_pages(crawl: Crawl, base_url: str) -> list[str]:
    """URLs of the site's HTML pages the crawl fetched (status 200, HtmlResponse), in fetch
    order, each once (a URL fetched twice is counted by :func:`integrity`)."""
    seen: dict[str, None] = {}
    for r in crawl.responses:
        if r["status"] == 200 and r["html"] and r["url"].startswith(base_url):
            seen.setdefault(urldefrag(r["url"])[0], None)
    return list(seen)


def page_items(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items about one page (they carry a ``url``); site-level items (SiteStructureItem) do not."""
    return [i for i in items if "url" in i]


def integrity(crawl: Crawl, pages: list[str], base_url: str) -> dict[str, Any]:
    """Items against fetched HTML pages: one page item per page, nothing duplicated or lost."""
    fetched = Counter(
        urldefrag(r["url"])[0] for r in crawl.responses
        if r["status"] == 200 and r["html"] and r["url"].startswith(base_url)
    )
    per_page = page_items(crawl.items)
    per_url = Counter(urldefrag(str(i.get("url")))[0] for i in per_page)
    page_set = set(pages)
    roles = Counter(str(i.get("role") or "(none)") for i in per_page)
    site_level = Counter(str(e.get("type")) for e in crawl.events if e.get("url") is None)
    late = [e for e in crawl.events if e.get("url") is not None
            and not str(e.get("response_url") or "").startswith("http")]
    stats = crawl.stats
    errors = {k: v for k, v in stats.items()
              if k in ("log_count/ERROR", "log_count/CRITICAL")
              or k.startswith(("spider_exceptions/", "wisdom/errors/"))}
    return {
        "html_pages": len(pages),
        "html_pages_fetched_twice": sorted(u for u, n in fetched.items() if n > 1),
        "responses": stats.get("response_received_count", len(crawl.responses)),
        "non_site_responses": sum(1 for r in crawl.responses if not r["url"].startswith("http")),
        "items_in_feed": len(crawl.items),
        "items_scraped_signal": len(crawl.events),
        "item_scraped_count": stats.get("item_scraped_count", 0),
        "page_items": len(per_page),
        "items_by_role": dict(sorted(roles.items())),
        "site_level_items": dict(sorted(site_level.items())),
        "duplicate_urls": sorted(u for u, n in per_url.items() if n > 1),
        "pages_without_item": sorted(page_set - set(per_url)),
        "items_without_page": sorted(set(per_url) - page_set),
        "items_emitted_late": len(late),
        "single_page_items": sum(1 for i in per_page if i.get("single_page")),
        "errors": errors,
        "item_dropped_count": stats.get("item_dropped_count", 0),
    }


# ------------------------------------------------------------------------------------------
# Evaluation
# ------------------------------------------------------------------------------------------


def url_to_file(url: str, base_url: str, site_dir: Path) -> Path | None:
    """The served file behind a URL of the site (the static server maps paths to files)."""
    if not url.startswith(base_url):
        return None
    path = unquote(urlsplit(url).path).lstrip("/")
    candidate = site_dir / path
    if not path or path.endswith("/") or candidate.is_dir():
        candidate = candidate / "index.html"
    return candidate if candidate.is_file() else None


def _trafilatura() -> tuple[Any, str | None]:
    try:
        import trafilatura
    except ImportError:
        return None, None

    def extract(html: str) -> str | None:
        return trafilatura.extract(html, include_comments=False)

    return extract, dist_version("trafilatura")


def evaluate(on: Crawl, off: Crawl, base_url: str, site_dir: Path, early: int, cjk: bool
             ) -> dict[str, Any]:
    """Every figure of the run, as plain data."""
    on_pages = html_pages(on, base_url)
    off_pages = html_pages(off, base_url)

    # Gold of every page either crawl fetched.
    gold: dict[str, Gold] = {}
    html_of: dict[str, str] = {}
    for url in dict.fromkeys([*on_pages, *off_pages]):
        path = url_to_file(url, base_url, site_dir)
        if path is None:
            gold[url] = Gold(None, "no file behind the URL")
            continue
        html_of[url] = decode_page(path.read_bytes())
        gold[url] = gold_for_page(html_of[url], url)

    items_by_url: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in page_items(on.items):
        items_by_url[urldefrag(str(item.get("url")))[0]].append(item)

    def item_of(url: str) -> dict[str, Any] | None:
        found = items_by_url.get(url)
        return found[0] if found else None

    predicted = {u: str(item_of(u).get("role")) for u in on_pages if item_of(u) is not None}
    gold_roles = {u: gold[u].role for u in on_pages}
    rules = Counter(gold[u].rule for u in on_pages)

    # Article bodies.
    articles = [u for u in on_pages if gold[u].role == "article"]
    extract, traf_version = _trafilatura()
    rows: dict[str, dict[str, Any]] = {}
    wisdom_scores = {u: article_score(item_of(u), gold[u].text, cjk) for u in articles}
    outcome = Counter(
        (item_of(u) or {}).get("role") or "no item" for u in articles
    )
    traf_scores: dict[str, PRF] = {}
    traf_seconds = 0.0
    traf_errors = 0
    if extract is not None:
        if articles:
            extract(html_of[articles[0]])  # untimed warm-up (imports, caches)
        for u in articles:
            t0 = time.perf_counter()
            try:
                text = extract(html_of[u])
            except Exception:  # counted and scored as empty
                text, traf_errors = None, traf_errors + 1
            traf_seconds += time.perf_counter() - t0
            traf_scores[u] = text_score(text, gold[u].text, cjk)
    full_scores = {u: text_score(html_to_text(html_of[u]), gold[u].text, cjk) for u in articles}
    emitted = [u for u in articles if (item_of(u) or {}).get("role") == "article"]
    rows["wisdom, all gold article pages"] = mean_prf(wisdom_scores.values())
    rows["wisdom, pages emitted as articles"] = mean_prf(wisdom_scores[u] for u in emitted)
    if extract is not None:
        rows[f"trafilatura {traf_version}, all gold article pages"] = {
            **mean_prf(traf_scores.values()),
            "pages_per_second": len(articles) / traf_seconds if traf_seconds else None,
            "errors": traf_errors,
        }
        rows[f"trafilatura {traf_version}, pages emitted as articles"] = mean_prf(
            traf_scores[u] for u in emitted)
    rows["full page text, all gold article pages"] = mean_prf(full_scores.values())

    # Page roles.
    role_table = {role: role_prf(gold_roles, predicted, role) for role in ROLES}
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for u in on_pages:
        confusion[str(gold[u].role)][predicted.get(u, "no item")] += 1

    # TOC links.
    tocs = [u for u in on_pages if gold[u].role == "toc"]
    toc_scores = {u: toc_score(item_of(u), gold[u].links, u) for u in tocs}
    toc_emitted = [u for u in tocs if (item_of(u) or {}).get("role") == "toc"]
    anchor_scores = {u: toc_anchor_score(item_of(u), gold[u].anchors, u) for u in tocs}
    toc_rows = {
        "all gold TOC pages": mean_prf(toc_scores.values()),
        "pages emitted as TOCs": mean_prf(toc_scores[u] for u in toc_emitted),
        "all gold TOC pages, anchors (multiset)": mean_prf(anchor_scores.values()),
    }
    # Links pooled over the gold TOC pages (a page emitted with another role contributes its
    # gold links as missed): large index pages weigh more than in the per-page mean.
    micro = weighted_match(
        {(u, link) for u in tocs for link in gold[u].links},
        {(u, link) for u in toc_emitted for link in toc_links(item_of(u) or {}, u)},
    )

    # Cold start: the first pages by fetch order against the rest.
    groups = {f"first {early} fetched": on_pages[:early], "the rest": on_pages[early:]}
    early_rows = {}
    for name, urls in groups.items():
        arts = [u for u in urls if gold[u].role == "article"]
        labelled = [u for u in urls if gold[u].role is not None]
        tocs_in = [u for u in urls if gold[u].role == "toc"]
        early_rows[name] = {
            "pages": len(urls),
            "gold_articles": len(arts),
            "wisdom": mean_prf(wisdom_scores[u] for u in arts),
            "trafilatura": mean_prf(traf_scores[u] for u in arts) if traf_scores else None,
            "gold_tocs": len(tocs_in),
            "toc_links": mean_prf(toc_scores[u] for u in tocs_in),
            "role_accuracy": (sum(predicted.get(u) == gold[u].role for u in labelled)
                              / len(labelled)) if labelled else float("nan"),
        }

    # The site-level structure item(s), if the product emits any: the TOC and article pages
    # they list against the gold roles of the fetched pages.
    structure = []
    for item in on.items:
        if "url" in item or not isinstance(item.get("tocs"), list):
            continue
        listed = {
            "toc": {normalize_url(str(t.get("url"))) for t in item.get("tocs") or []},
            "article": {normalize_url(str(a.get("url"))) for a in item.get("articles") or []},
        }
        entry: dict[str, Any] = {"site": item.get("site"), "pages": item.get("pages"),
                                 "links": item.get("links")}
        for role in ("toc", "article"):
            listed_role = {u: role for u in listed[role] if u is not None}
            entry[role] = role_prf(gold_roles, listed_role, role)
            # listed with this role here, emitted with another role as a page item
            entry[role]["page_item_disagrees"] = sorted(
                u for u in listed_role if u in predicted and predicted[u] != role)
        structure.append(entry)

    per_page = {
        u: {
            "gold_role": gold[u].role,
            "rule": gold[u].rule,
            "emitted": [i.get("role") for i in items_by_url.get(u, [])],
            "fetch_rank": rank,
            **({"wisdom": wisdom_scores[u]._asdict()} if u in wisdom_scores else {}),
            **({"trafilatura": traf_scores[u]._asdict()} if u in traf_scores else {}),
            **({"toc_links": toc_scores[u]._asdict(), "gold_links": len(gold[u].links),
                "toc_anchors": anchor_scores[u]._asdict(), "gold_anchors": len(gold[u].anchors)}
               if u in toc_scores else {}),
        }
        for rank, u in enumerate(on_pages)
    }
    gold_files = Counter()
    for path in sorted(p for p in site_dir.rglob("*") if p.suffix in (".html", ".htm")):
        url = base_url + path.relative_to(site_dir).as_posix()
        g = gold[url] if url in gold else gold_for_page(path.read_bytes(), url)
        gold_files[str(g.role)] += 1
    return {
        "gold": {
            "files": dict(gold_files),
            "fetched_on": dict(Counter(str(r) for r in gold_roles.values())),
            "rules": dict(rules),
        },
        "reach": {
            "html_pages_on": len(on_pages),
            "html_pages_off": len(off_pages),
            "only_on": sorted(set(on_pages) - set(off_pages)),
            "only_off": sorted(set(off_pages) - set(on_pages)),
            "gold_articles_only_off": sorted(
                u for u in set(off_pages) - set(on_pages) if gold[u].role == "article"),
        },
        "articles": {"outcome": dict(outcome), "rows": rows},
        "roles": {"table": role_table,
                  "confusion": {k: dict(v) for k, v in sorted(confusion.items())}},
        "toc_links": {"rows": toc_rows, "micro": micro.as_dict()},
        "early": early_rows,
        "site_structure": structure,
        "integrity": {"on": integrity(on, on_pages, base_url),
                      "off": integrity(off, off_pages, base_url)},
        "pages": per_page,
    }


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return "-" if x != x else f"{x:.{digits}f}"
    return str(x)


def _list(urls: list[str], base_url: str, limit: int = 8) -> str:
    if not urls:
        return "0"
    shown = ", ".join(u.removeprefix(base_url) for u in urls[:limit])
    more = f", … (+{len(urls) - limit})" if len(urls) > limit else ""
    return f"{len(urls)}: {shown}{more}"


def report(result: dict[str, Any], base_url: str, early: int) -> str:
    out: list[str] = []
    runs = result["speed_runs"]
    out.append("### Crawl speed (same server, same run; pages = HTML pages fetched)\n")
    out.append(markdown_table(
        ["crawl", "extension", "HTML pages", "responses", "page items", "elapsed s", "pages/s",
         "CPU ms/page", "worker CPU ms/page", "wall s", "load avg before"],
        [[r["crawl"], r["mode"], r["html_pages"], r["responses"], r["page_items"],
          _f(r["elapsed_time_seconds"], 1), _f(r["pages_per_second"], 1),
          _f(r["cpu_ms_per_page"], 1), _f(r.get("worker_cpu_ms_per_page", 0.0), 1),
          _f(r["wall_seconds"], 1), _f(r["load_before"], 2)]
         for r in runs]))
    summary = result["speed_summary"]
    medians = summary["median_pages_per_second"]
    label = "pages/s" if len(runs) == 2 else f"median pages/s over {len(runs) // 2} runs each"
    out.append(f"\n{label}: on {_f(medians['on'], 1)}, off {_f(medians['off'], 1)}; "
               f"on/off throughput ratio {_f(summary['ratio_of_medians'], 2)}; CPU ms per page "
               f"of the crawl process: on {_f(summary['median_cpu_ms_per_page']['on'], 1)}, off "
               f"{_f(summary['median_cpu_ms_per_page']['off'], 1)}, on/off "
               f"{_f(summary['cpu_ratio_of_medians'], 2)}; worker processes' CPU ms per page "
               f"{_f(summary.get('median_worker_cpu_ms_per_page', {}).get('on', 0.0), 1)}; "
               f"the extension's CPU per page (on − off + workers) / lxml parse per page "
               f"({_f(summary.get('parse_ms_per_page'), 2)} ms): "
               f"{_f(_extension_over_parse(summary), 1)}\n")

    g = result["gold"]
    out.append("### Gold (from the page markup)\n")
    out.append(markdown_table(
        ["", *ROLES, "None"],
        [["HTML files in the site", *(g["files"].get(r, 0) for r in (*ROLES, "None"))],
         ["pages fetched (on)", *(g["fetched_on"].get(r, 0) for r in (*ROLES, "None"))]]))
    out.append("\nrules (pages fetched): " + "; ".join(
        f"{k}: {v}" for k, v in sorted(g["rules"].items())) + "\n")

    a = result["articles"]
    out.append("### Article bodies (token-shingle P/R/F1, mean over pages)\n")
    out.append("A gold article page emitted as another role or without an item scores "
               "P = R = F1 = 0 in the \"all gold article pages\" rows. Outcome of the gold "
               "article pages: " + ", ".join(f"{k}: {v}" for k, v in sorted(a["outcome"].items()))
               + ".\n")
    out.append(markdown_table(
        ["extractor, pages", "n", "P", "R", "F1"],
        [[name, r["n"], _f(r["precision"]), _f(r["recall"]), _f(r["f1"])]
         for name, r in a["rows"].items()]))
    if "cjk_rows" in a:
        out.append("\nSame, each CJK character a token (the `\\w+` tokens above make a whole run "
                   "of Chinese characters one token):\n")
        out.append(markdown_table(
            ["extractor, pages", "n", "P", "R", "F1"],
            [[name, r["n"], _f(r["precision"]), _f(r["recall"]), _f(r["f1"])]
             for name, r in a["cjk_rows"].items()]))

    ro = result["roles"]
    out.append("\n### Page roles (pages fetched by the crawl with the extension on)\n")
    out.append(markdown_table(
        ["role", "gold", "emitted", "correct", "P", "R", "F1"],
        [[role, t["gold"], t["predicted"], t["correct"], _f(t["precision"]), _f(t["recall"]),
          _f(t["f1"])] for role, t in ro["table"].items()]))
    cols = ["article", "toc", "other", "no item"]
    cols += sorted({c for row in ro["confusion"].values() for c in row} - set(cols))
    out.append("\nconfusion (rows gold, columns emitted):\n")
    out.append(markdown_table(
        ["gold \\ emitted", *cols],
        [[gr, *(row.get(c, 0) for c in cols)] for gr, row in ro["confusion"].items()]))

    t = result["toc_links"]
    out.append("\n### TOC links (SNC-style P/R/F1 of link URLs, mean over pages)\n")
    out.append("Link URLs as sets (which pages the TOC leads to) unless marked \"anchors\" "
               "(one count per anchor). A gold TOC page emitted as another role or without an "
               "item scores 0.\n")
    rows = [[name, r["n"], _f(r["precision"]), _f(r["recall"]), _f(r["f1"])]
            for name, r in t["rows"].items()]
    m = t["micro"]
    rows.append(["gold TOC pages, links pooled (micro)", t["rows"]["all gold TOC pages"]["n"],
                 _f(m["precision"]),
                 _f(m["recall"]), _f(m["f1"])])
    out.append(markdown_table(["pages", "n", "P", "R", "F1"], rows))

    out.append(f"\n### Cold start: first {early} pages by fetch order vs the rest\n")
    out.append(markdown_table(
        ["pages", "n", "gold articles", "wisdom P", "wisdom R", "wisdom F1", "trafilatura F1",
         "gold TOCs", "TOC links F1", "role accuracy"],
        [[name, r["pages"], r["gold_articles"], _f(r["wisdom"]["precision"]),
          _f(r["wisdom"]["recall"]), _f(r["wisdom"]["f1"]),
          _f(r["trafilatura"]["f1"]) if r["trafilatura"] else "-", r["gold_tocs"],
          _f(r["toc_links"]["f1"]), _f(r["role_accuracy"])]
         for name, r in result["early"].items()]))

    if result["site_structure"]:
        out.append("\n### Site-level structure item (pages it lists as TOC / article vs gold)\n")
        out.append(markdown_table(
            ["site", "role", "gold", "listed", "correct", "P", "R", "F1",
             "page item says otherwise"],
            [[st["site"], role, st[role]["gold"], st[role]["predicted"], st[role]["correct"],
              _f(st[role]["precision"]), _f(st[role]["recall"]), _f(st[role]["f1"]),
              _list(st[role]["page_item_disagrees"], base_url, 3)]
             for st in result["site_structure"] for role in ("toc", "article")]))

    i_on, i_off = result["integrity"]["on"], result["integrity"]["off"]
    out.append("\n### Item integrity\n")
    checks = [
        ("HTML pages fetched", "html_pages", None),
        ("HTML pages fetched twice", "html_pages_fetched_twice", "list"),
        ("responses (all)", "responses", None),
        ("items in the feed file", "items_in_feed", None),
        ("item_scraped signals", "items_scraped_signal", None),
        ("page items (with a url)", "page_items", None),
        ("page items by role", "items_by_role", "dict"),
        ("site-level items (no url)", "site_level_items", "dict"),
        ("URLs with more than one item", "duplicate_urls", "list"),
        ("fetched HTML pages without an item", "pages_without_item", "list"),
        ("items whose URL was not fetched", "items_without_page", "list"),
        ("page items emitted at idle (late-items request)", "items_emitted_late", None),
        ("items with single_page", "single_page_items", None),
        ("items dropped", "item_dropped_count", None),
        ("errors logged / counted", "errors", "dict"),
    ]

    def cell(value: Any, kind: str | None) -> str:
        if kind == "list":
            return _list(value, base_url, 4)
        if kind == "dict":
            return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
        return _f(value)

    out.append(markdown_table(
        ["check", "extension on", "extension off"],
        [[label, cell(i_on[key], kind), cell(i_off[key], kind)] for label, key, kind in checks]))
    reach = result["reach"]
    out.append(f"\npages fetched only with the extension off: "
               f"{_list(reach['only_off'], base_url)} (gold articles among them: "
               f"{len(reach['gold_articles_only_off'])}); only with it on: "
               f"{_list(reach['only_on'], base_url)}")
    return "\n".join(out)


# ------------------------------------------------------------------------------------------
# Main
# ------------------------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return ""


def crawl_speed(crawl: Crawl, base_url: str) -> dict[str, Any]:
    """Throughput of one crawl: HTML pages fetched / Scrapy's ``elapsed_time_seconds``."""
    pages = html_pages(crawl, base_url)
    elapsed = crawl.stats.get("elapsed_time_seconds") or float("nan")
    return {
        "crawl": crawl.name,
        "html_pages": len(pages),
        "responses": crawl.stats.get("response_received_count"),
        "elapsed_time_seconds": elapsed,
        "pages_per_second": len(pages) / elapsed if elapsed else float("nan"),
        "cpu_seconds": crawl.cpu_seconds,
        "cpu_ms_per_page": 1000 * crawl.cpu_seconds / len(pages) if pages else float("nan"),
        # WISDOM_WORKERS: the add-on's CPU outside the crawl process
        "worker_cpu_ms_per_page": (1000 * float(crawl.stats.get("wisdom/workers/cpu_seconds", 0))
                                   / len(pages) if pages else float("nan")),
        "wall_seconds": crawl.wall_seconds,
        "load_before": crawl.load_before,
        "items": len(crawl.items),
        "page_items": len(page_items(crawl.items)),
    }


def speed_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median pages/s and CPU ms per page of the on and off crawls over all runs, and their
    ratios (on/off)."""
    medians, cpu, workers = {}, {}, {}
    for mode in ("on", "off"):
        values = [r["pages_per_second"] for r in runs if r["mode"] == mode]
        medians[mode] = statistics.median(values) if values else float("nan")
        values = [r["cpu_ms_per_page"] for r in runs if r["mode"] == mode]
        cpu[mode] = statistics.median(values) if values else float("nan")
        values = [r.get("worker_cpu_ms_per_page", 0.0) for r in runs if r["mode"] == mode]
        workers[mode] = statistics.median(values) if values else float("nan")
    return {"median_pages_per_second": medians,
            "ratio_of_medians": medians["on"] / medians["off"] if medians["off"] else None,
            "median_cpu_ms_per_page": cpu,
            "median_worker_cpu_ms_per_page": workers,
            "cpu_ratio_of_medians": cpu["on"] / cpu["off"] if cpu["off"] else None}


def _extension_over_parse(summary: Mapping[str, Any]) -> float:
    """The add-on's CPU per page, in the crawl process and its workers, over the lxml parse."""
    cpu, parse = summary["median_cpu_ms_per_page"], summary.get("parse_ms_per_page")
    workers = summary.get("median_worker_cpu_ms_per_page", {}).get("on", 0.0)
    return (cpu["on"] - cpu["off"] + workers) / parse if parse else float("nan")


def parse_ms_per_page(files: list[Path], runs: int = 3) -> float:
    """CPU milliseconds per page of the lxml parse Scrapy makes of each file (a parsel
    ``Selector``'s tree from the decoded text, as ``response.selector`` builds it), the best of
    ``runs`` passes: the unit the extension's own CPU per page is measured in."""
    import parsel

    texts = [decode_page(f.read_bytes()) for f in files]
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        for text in texts:
            parsel.Selector(text=text, type="html").root  # noqa: B018
        best = min(best, time.process_time() - started)
    return 1000 * best / len(texts) if texts else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", default="pydoc",
                        help="pydoc, zh, or a directory to serve (default: pydoc)")
    parser.add_argument("--start", default="index.html", help="start page, relative to the site")
    parser.add_argument("--early", type=int, default=20,
                        help="cold-start group: the first N pages by fetch order (default 20)")
    parser.add_argument("--cjk", choices=("auto", "yes", "no"), default="auto",
                        help="also score with CJK characters as tokens (auto: for --site zh)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="crawl pairs for the speed figures (order alternates: off,on then "
                             "on,off …; medians reported); quality is scored on the first pair")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per crawl")
    parser.add_argument("--keep", type=Path, help="keep items, stats, logs and stores here")
    parser.add_argument("--json", type=Path, help="write every figure (and per page) here")
    parser.add_argument("-s", dest="extra", action="append", default=[], metavar="NAME=VALUE",
                        help="extra Scrapy setting for the crawls with the extension on")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    site_dir = SITES.get(args.site, Path(args.site)).resolve()
    if not site_dir.is_dir():
        parser.error(f"--site {args.site}: {site_dir} is not a directory")
    cjk = args.cjk == "yes" or (args.cjk == "auto" and args.site == "zh")

    from wisdom_scrapy.testing import serve_directory

    # The product is whatever the checkout holds when the crawls start (others may be editing).
    head = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--", "wisdom_scrapy")
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="site_crawl-"))
    workdir.mkdir(parents=True, exist_ok=True)
    crawls: dict[str, Crawl] = {}  # by name, in run order
    speed_runs: list[dict[str, Any]] = []
    with serve_directory(site_dir) as base_url:
        start_url = base_url + args.start
        for i in range(args.repeat):
            for mode in ("off", "on") if i % 2 == 0 else ("on", "off"):
                name = mode if args.repeat == 1 else f"{mode}{i + 1}"
                if mode == "off":
                    settings = ["-s", "ADDONS={}"]
                else:  # a fresh, cold store for every crawl
                    store = workdir / f"{name}.wisdom.db"
                    for leftover in workdir.glob(f"{name}.wisdom.db*"):
                        leftover.unlink()
                    settings = ["-s", f"WISDOM_STORE_URI=sqlite:///{store}",
                                *(x for e in args.extra for x in ("-s", e))]
                command = crawl_command(name, start_url, workdir, settings)
                print(f"crawl {name}: {shlex.join(command)}", flush=True)
                crawl = run_crawl(name, start_url, workdir, settings, args.timeout)
                crawls[name] = crawl
                if crawl.problem:
                    print(f"\ncrawl {name} FAILED: {crawl.problem}\ncommand: "
                          f"{shlex.join(crawl.command)}\n--- log tail ({crawl.log}; the work "
                          f"dir {workdir} is kept) ---\n{crawl.log_tail()}", file=sys.stderr)
                    return 2
                speed_runs.append({"mode": mode, **crawl_speed(crawl, base_url)})
                print(f"  done in {crawl.wall_seconds:.1f} s, {len(crawl.items)} items",
                      flush=True)
        first_on = crawls["on" if args.repeat == 1 else "on1"]
        first_off = crawls["off" if args.repeat == 1 else "off1"]
        result = evaluate(first_on, first_off, base_url, site_dir, args.early, cjk=False)
        if cjk:
            cjk_result = evaluate(first_on, first_off, base_url, site_dir, args.early, cjk=True)
            result["articles"]["cjk_rows"] = cjk_result["articles"]["rows"]
            result["early_cjk"] = cjk_result["early"]
        result["speed_runs"] = speed_runs
        result["speed_summary"] = speed_summary(speed_runs)
        result["speed_summary"]["parse_ms_per_page"] = parse_ms_per_page(
            [p for p in (url_to_file(u, base_url, site_dir) for u in html_pages(first_on, base_url))
             if p is not None])

    print()
    print(report(result, base_url, args.early))
    for name, crawl in crawls.items():
        errors = [line for line in crawl.log.read_text("utf-8", "replace").splitlines()
                  if "] ERROR:" in line or "] CRITICAL:" in line]
        if errors:
            print(f"\nfirst ERROR lines of crawl {name} ({len(errors)} in all, log {crawl.log}):")
            print("\n".join(errors[:5]))
    print("\ncommands (from the repository root; <base> = the served site's URL, "
          f"here {base_url}):")
    for name, crawl in crawls.items():
        print(f"  {name}: {shlex.join(crawl.command)}")
    print(f"\nproduct: wisdom_scrapy at {head}"
          + (f" with {len(dirty.splitlines())} uncommitted file(s) under wisdom_scrapy/"
             if dirty else " (clean)")
          + f" when the crawls started; site {site_dir}; scrapy {dist_version('scrapy')}")
    if args.json:
        _write_json(args.json, {
            "site": str(site_dir),
            "base_url": base_url,
            "commands": {n: c.command for n, c in crawls.items()},
            "git": {"head": head, "dirty_wisdom_scrapy": dirty.splitlines()},
            "environment": environment(),
            "versions": {n: dist_version(n) for n in ("scrapy", "trafilatura", "lxml")},
            "stats": {n: c.stats for n, c in crawls.items()},
            **result,
        })
        print(f"figures written to {args.json}")
    if args.keep:
        print(f"items, stats, logs and stores kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
