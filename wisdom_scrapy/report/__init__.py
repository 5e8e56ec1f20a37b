"""The site report: one self-contained HTML page per crawl (``WISDOM_REPORT_URI``), rebuilt at any
time from the store with ``scrapy wisdom-report``.

Per site it shows

* the **informative structure**: the items the crawl emitted per role, and for the TOC pages
  (TocItems, best hub first) how many of the emitted article pages (ArticleItems) their links
  list, and how many of those no other TOC page lists, drawn as stacked bars and listed — one
  source for every figure of the page, readable at any site size (47 TOC pages over 707
  articles is 47 numbers, not a graph of 700 edges); a TOC page's hub score is the final one of
  the :class:`~wisdom_scrapy.items.SiteStructureItem` (TKDE §1/§3.3) when its link analysis
  classed the page as a TOC too, else the TocItem's when it left;
* the **sitemap** tree (the :class:`~wisdom_scrapy.items.SitemapItem`, SMG §4.6) when the crawl
  produced one;
* the **most redundant blocks**: the maximal sub-trees with text that no cleaned item kept
  (:func:`wisdom_scrapy.analysis.annotated.redundant_roots`), grouped by tag path over the site's
  pages and named by the page's own id/class (``div#sidebar``, ``nav.menu``:
  :func:`wisdom_scrapy.analysis.annotated.block_name`), with how many pages had them, how much text
  they removed and a sample of it;
* **entropy histograms**: the site's term entropies (WISDOM §3.1, from the store) and, per
  analysed page, the mean entropy of the page's terms and of its article's terms;
* the **crawl's figures**: pages fed, items per role (the site's items, as above), links
  dropped by focusing, bytes of HTML fed against bytes kept in items (``bytes saved`` = fed −
  kept).

Collection. :class:`WisdomReportExtension` (inserted by the add-on) receives the analysis of each
page (:data:`wisdom_scrapy.signals.page_analysed`) and the items leaving the crawl; at spider
close (:data:`wisdom_scrapy.signals.store_closing`) it stores each site's report data in the
store (``put_records(site, "report", …)``, one JSON blob, so another process or a later
``scrapy wisdom-report`` can rebuild the report), and writes the HTML when
``WISDOM_REPORT_URI`` is set. A site's report data is the report's part of the site's context
(:data:`REPORT`, on :class:`~wisdom_scrapy.engine.sites.SiteContext`), kept for the whole
crawl. Memory per site: one counter and a 160-character sample per
distinct redundant block path (at most :data:`MAX_PATHS`), two floats per analysed page, the
link targets of each TOC item (at most :data:`MAX_TOCS`) and the URLs of the article items.

Safety. Everything that comes from pages — URLs, titles, anchor texts, block samples — is
HTML-escaped; links are only made for ``http(s)`` URLs; the page loads nothing (inline CSS and
SVG, a Content-Security-Policy that forbids scripts and every external resource).
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import NotConfigured

from wisdom_scrapy.analysis.annotated import ROLE_COLOURS, redundant_summary
from wisdom_scrapy.engine.sites import Part
from wisdom_scrapy.engine.waits import RemoteAnalysis
from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.items import ArticleItem, SitemapItem, SiteStructureItem, TocItem
from wisdom_scrapy.report.svg import bars_svg, histogram_svg
from wisdom_scrapy.settings import SettingsError, WisdomSettings
from wisdom_scrapy.signals import page_analysed, store_closing
from wisdom_scrapy.store import StoreError, TermStore, redact_uri
from wisdom_scrapy.store.strings import SeenStrings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from wisdom_scrapy.analysis.page_analysis import PageAnalysis
    from wisdom_scrapy.crawl_state import WisdomRuntime

__all__ = [
    "REPORT",
    "REPORT_KIND",
    "SiteReportData",
    "WisdomReportExtension",
    "load_report_data",
    "render_report",
    "report_path",
    "write_report",
]

logger = logging.getLogger(__name__)

#: ``kind`` of the store records holding each site's report data.
REPORT_KIND = "report"
#: Distinct redundant block paths remembered per site (later new paths are counted, not kept).
MAX_PATHS = 5000
#: TOC items whose link targets are remembered per site (later ones are counted, not listed).
MAX_TOCS = 5000
#: TOC pages kept in the stored report data (the best hubs).
_STORED_TOCS = 200
_SHOWN_TOCS = 30
_CHARTED_TOCS = 20
_TOP_REDUNDANT = 15
#: Stats shown as the crawl's figures, in this order, with their labels.
CRAWL_FIGURES = (
    ("wisdom/pages_fed", "pages fed (new or changed)"),
    ("wisdom/pages_unchanged", "pages unchanged (already in the store)"),
    ("wisdom/items/article", "article items"),
    ("wisdom/items/toc", "TOC items"),
    ("wisdom/items/other", "other pages"),
    ("wisdom/items/site_structure", "site structure items"),
    ("wisdom/focus/kept", "links kept by focusing"),
    ("wisdom/focus/dropped", "links dropped by focusing"),
    ("wisdom/focus/deprioritized", "links deprioritised by focusing"),
    ("wisdom/bytes/fed", "bytes of HTML fed"),
    ("wisdom/bytes/kept", "bytes kept in items"),
    ("wisdom/bytes/saved", "bytes saved (fed − kept)"),
)


@dataclass
class SiteReportData:
    """What the report shows of one site beyond the store's own figures (JSON round trip)."""

    site: str
    pages_analysed: int = 0
    # path -> [pages, chars, sample, name]
    redundant: dict[str, list[Any]] = field(default_factory=dict)
    paths_dropped: int = 0
    page_entropy: list[float] = field(default_factory=list)
    article_entropy: list[float] = field(default_factory=list)
    structure: dict[str, Any] | None = None
    sitemap: dict[str, Any] | None = None
    crawl: dict[str, float] = field(default_factory=dict)
    finished: str = ""
    items: dict[str, int] = field(default_factory=dict)  # items emitted per role
    # per TOC item, best hub first: {"url", "hub", "articles", "only"} (see finish())
    tocs: list[dict[str, Any]] = field(default_factory=list)
    articles_listed: int = 0  # article items that some TOC item lists

    def __post_init__(self) -> None:
        # gathered during the crawl and summed up by finish(); not stored
        self._toc_targets: dict[str, tuple[float | None, frozenset[str]]] = {}
        self._article_urls = SeenStrings()
        #: sites whose data the crawl's report made before this one's: its place in the report
        self.rank = -1

    def observe(self, analysis: PageAnalysis | RemoteAnalysis) -> None:
        """Count one analysed page's redundant blocks (once per path and page); a page analysed
        in a worker process brings them
        (:func:`~wisdom_scrapy.analysis.annotated.redundant_summary`)."""
        if isinstance(analysis, RemoteAnalysis):
            summary = analysis.redundant
        else:
            summary = (redundant_summary(analysis, self.redundant)
                       if analysis.model is not None else None)  # fmt: skip
        if summary is None:
            return
        self.pages_analysed += 1
        for path, chars, sample, name in summary:
            entry = self.redundant.get(path)
            if entry is None:
                if len(self.redundant) >= MAX_PATHS:
                    self.paths_dropped += 1
                    continue
                entry = self.redundant[path] = [0, 0, sample, name]
            entry[0] += 1
            entry[1] += chars

    def observe_item(self, item: Any) -> None:
        role = _ROLE_OF.get(type(item)) or getattr(item, "role", "")
        if role:
            self.items[role] = self.items.get(role, 0) + 1
        if isinstance(item, TocItem) and len(self._toc_targets) < MAX_TOCS:
            targets = frozenset(str(link.get("url", "")) for link in item.links)
            self._toc_targets[item.url] = (item.hub, targets)
        elif isinstance(item, ArticleItem):
            self._article_urls.add(item.url)
        if isinstance(item, (ArticleItem, TocItem)):
            figures = item.entropy or {}
            self.page_entropy.append(float(figures.get("page_entropy", float("nan"))))
            if isinstance(item, ArticleItem):
                self.article_entropy.append(float(figures.get("article_entropy", float("nan"))))
        elif isinstance(item, SiteStructureItem):
            self.structure = ItemAdapter(item).asdict()
        elif isinstance(item, SitemapItem):
            self.sitemap = ItemAdapter(item).asdict()

    def finish(self) -> None:
        """Sum up the TOC items' lists (at spider close): per TOC page, the article items its
        links reach and how many of them no other TOC page lists; best hub first (the site
        structure's final scores when there is one, else the item's)."""
        if not self._toc_targets:
            return
        final = {t.get("url"): t.get("hub") for t in (self.structure or {}).get("tocs") or []}
        listed = {url: {t for t in targets if t in self._article_urls}
                  for url, (_, targets) in self._toc_targets.items()}  # fmt: skip
        lists = Counter(a for articles in listed.values() for a in articles)
        rows = [
            (final.get(url, hub), len(listed[url]), sum(1 for a in listed[url] if lists[a] == 1),
             url)
            for url, (hub, _) in self._toc_targets.items()
        ]  # fmt: skip
        rows.sort(key=lambda r: (-(r[0] or 0.0), -r[1], r[3]))
        self.tocs = [{"url": url, "hub": hub, "articles": n, "only": only}
                     for hub, n, only, url in rows[:_STORED_TOCS]]  # fmt: skip
        self.articles_listed = len(lists)

    def top_redundant(self, n: int = _TOP_REDUNDANT) -> list[tuple[str, int, int, str, str]]:
        """(path, pages, chars removed, sample, name) of the blocks on most pages, then most
        text (name: the path in data stored before blocks had names)."""
        rows = [(p, int(v[0]), int(v[1]), str(v[2]), str(v[3]) if len(v) > 3 else p)
                for p, v in self.redundant.items()]  # fmt: skip
        rows.sort(key=lambda r: (-r[1], -r[2], r[0]))
        return rows[:n]

    def to_bytes(self) -> bytes:
        data = asdict(self)
        # keep the stored record bounded: the most frequent paths only
        data["redundant"] = {p: [n, c, s, name] for p, n, c, s, name in self.top_redundant(200)}
        return zlib.compress(json.dumps(data, allow_nan=True).encode(), 6)

    @classmethod
    def from_bytes(cls, blob: bytes) -> SiteReportData:
        data = json.loads(zlib.decompress(blob))
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


_ROLE_OF = {ArticleItem: "article", TocItem: "toc", SiteStructureItem: "site_structure",
            SitemapItem: "sitemap"}  # fmt: skip  (a PageItem: its own role, "" when unanalysed)


def load_report_data(store: TermStore, site: str) -> SiteReportData:
    """The site's stored report data (empty data when the site was never reported on)."""
    blob = store.records(site, REPORT_KIND).get("latest")
    if not blob:
        return SiteReportData(site)
    try:
        return SiteReportData.from_bytes(blob)
    except (ValueError, TypeError, zlib.error) as exc:
        logger.warning("wisdom_scrapy: report data of %s unreadable (%s); ignored", site, exc)
        return SiteReportData(site)


# --------------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 sans-serif;margin:0;color:#111;background:#fafafa}
header{background:#263238;color:#fff;padding:12px 20px}
main{padding:8px 20px 40px;max-width:1100px}
section.site{background:#fff;border:1px solid #ddd;padding:8px 16px;margin:16px 0}
table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.sample{color:#666;max-width:520px}
.tree ul{margin:2px 0 2px 18px;padding:0}
.muted{color:#777}
.path{color:#999;font-size:11px}
a{color:#0645ad}
"""


_LIGHT_ARTICLE = "#a5e8bf"  # the article colour, lighter: articles other TOC pages list too


def _link(url: str, text: str | None = None) -> str:
    """An anchor for http(s) URLs, plain escaped text for anything else."""
    label = escape(text if text else unquote(url))
    scheme = urlsplit(url).scheme.lower() if url else ""
    if scheme in ("http", "https"):
        return f'<a href="{escape(url, quote=True)}">{label}</a>'
    return label


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.3f}"


def _crawl_table(crawl: Mapping[str, float], items: Mapping[str, int]) -> str:
    """The crawl's stats; the items per role are the site's (``items``, counted as they left),
    the source of every role count in the report, when the data has them."""
    figures = dict(crawl)
    if items:
        figures.update({f"wisdom/items/{role}": n for role, n in items.items()})
    rows = [
        f'<tr><td>{escape(label)}</td><td class="n">{_number(figures[key])}</td></tr>'
        for key, label in CRAWL_FIGURES
        if key in figures
    ]
    if not rows:
        return '<p class="muted">No crawl figures recorded.</p>'
    return f'<table class="crawl">{"".join(rows)}</table>'


def _tree_html(entries: Iterable[Mapping[str, Any]]) -> str:
    """Nested lists of a sitemap tree, built with an explicit stack (no recursion)."""
    out: list[str] = ["<ul>"]
    stack: list[Any] = [iter(entries)]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            out.append("</ul></details></li>" if stack else "</ul>")
            continue
        title = str(entry.get("title") or entry.get("url") or "")
        out.append(f"<li>{_link(str(entry.get('url', '')), title)}")
        children = entry.get("children") or []
        if children:  # folded (no script needed): the first level stays short to read
            out.append(f"<details><summary>{len(children)} entries</summary><ul>")
            stack.append(iter(children))
        else:
            out.append("</li>")
    return "".join(out)


def _short_url(url: str, site: str) -> str:
    rest = url.split(site, 1)[1] if site and site in url else url
    return rest or "/"


def _structure_html(site: str, data: SiteReportData) -> str:
    """Items per role, then the TOC items' lists of article items (stacked bars and a table),
    then what the site-level link analysis that scored the hubs worked on."""
    items = data.items
    roles = ", ".join(f"{items.get(r, 0):,} {label}" for r, label in
                      (("article", "article"), ("toc", "TOC"), ("other", "other")))  # fmt: skip
    head = f"<p>Items emitted: {roles} pages"
    if items.get("toc"):
        head += (f"; the {items['toc']:,} TOC pages list {data.articles_listed:,} of the "
                 f"{items.get('article', 0):,} article pages")  # fmt: skip
    head += ".</p>"
    structure = data.structure
    if structure:
        head += (
            f'<p class="muted">Hub scores: {escape(str(structure.get("method", "")))} over '
            f"{int(structure.get('pages', 0)):,} pages and {int(structure.get('links', 0)):,} "
            f"informative links, {int(structure.get('iterations', 0))} iterations"
            + ("" if structure.get("converged", True) else " (not converged)")
            + ".</p>"
        )
        link_roles = structure.get("roles") or {}
        if any(link_roles.get(r, 0) != items.get(r, 0) for r in ("article", "toc", "other")):
            called = ", ".join(f"{int(link_roles.get(r, 0)):,} {label}" for r, label in
                               (("article", "article"), ("toc", "TOC"), ("other", "other")))
            head += (f'<p class="muted">From its links alone the analysis calls {called} '
                     "pages (a strong hub a TOC page, a strong authority an article); the items' "
                     "roles come from each page's content, which can say otherwise.</p>")
    tocs = data.tocs
    if not tocs:
        return head + '<p class="muted">No TOC pages found.</p>'
    charted = tocs[:_CHARTED_TOCS]
    chart = bars_svg(
        [_short_url(str(t.get("url", "")), site) for t in charted],
        [(int(t["only"]), int(t["articles"]) - int(t["only"])) for t in charted],
        title=f"Article pages listed by the {len(charted)} best hubs of the "
        f"{items.get('toc', len(tocs)):,} TOC pages",
        parts={"listed by this TOC page only": ROLE_COLOURS["article"],
               "also listed by another": _LIGHT_ARTICLE},
        width=900,
        label_width=380,
    )
    rows = "".join(
        f'<tr><td>{_link(str(t.get("url", "")))}</td>'
        f'<td class="n">{_number(float(t["hub"])) if t.get("hub") is not None else "–"}</td>'
        f'<td class="n">{int(t["articles"]):,}</td><td class="n">{int(t["only"]):,}</td></tr>'
        for t in tocs[:_SHOWN_TOCS]
    )
    more = len(tocs) - _SHOWN_TOCS
    return (
        head
        + f'<div class="graph">{chart}</div>'
        + '<table class="tocs"><tr><th>TOC page</th><th>hub</th><th>article pages listed</th>'
        + f"<th>listed only here</th></tr>{rows}</table>"
        + (f'<p class="muted">… and {more:,} more TOC pages.</p>' if more > 0 else "")
    )


def _redundant_html(data: SiteReportData) -> str:
    top = data.top_redundant()
    if not top:
        return '<p class="muted">No redundant blocks recorded for this site.</p>'
    n = max(data.pages_analysed, 1)
    chart = bars_svg(
        [name for *_, name in top],
        [round(100.0 * pages / n, 1) for _, pages, *_ in top],
        title=f"Share of the {data.pages_analysed} analysed pages with the block",
        colour=ROLE_COLOURS["redundant"],
        unit=" %",
    )
    rows = "".join(
        f'<tr><td><code title="{escape(path)}">{escape(name)}</code>'
        + (f'<div class="path">{escape(path)}</div>' if name != path else "")
        + f'</td><td class="n">{pages}</td>'
        f'<td class="n">{chars:,}</td><td class="sample">{escape(sample)}</td></tr>'
        for path, pages, chars, sample, name in top
    )
    return (
        chart
        + '<table class="redundant"><tr><th>block (the page\'s id/class; tag path)</th>'
        + "<th>pages</th>"
        + f"<th>characters removed</th><th>text (sample)</th></tr>{rows}</table>"
    )


def _site_html(store: TermStore | None, data: SiteReportData) -> str:
    site = data.site
    facts = []
    term_entropy: list[float] = []
    if store is not None:
        snapshot = store.snapshot(site)
        # the snapshot leaves out the terms of entropy 0 (on one page): they count here
        zeros = max(0, snapshot.n_terms - len(snapshot.values))
        term_entropy = [*snapshot.values.values(), *[0.0] * zeros]
        n_links = store.link_count(site)
        facts = [
            f"{snapshot.n_pages:,} pages in the store",
            f"{len(term_entropy):,} distinct terms",
            f"{n_links:,} links in the link graph",
        ]
    facts.append(f"{data.pages_analysed:,} pages analysed by the last crawl")
    sitemap = data.sitemap
    if sitemap and sitemap.get("tree"):
        sitemap_html = (
            f"<p>Home: {_link(str(sitemap.get('url', '')), str(sitemap.get('title') or ''))}; "
            f"entries per level: {escape(str(sitemap.get('entries', [])))}</p>"
            f'<div class="tree">{_tree_html(sitemap["tree"])}</div>'
        )
    else:
        sitemap_html = '<p class="muted">No sitemap was produced for this site.</p>'
    histograms = histogram_svg(
        {"terms of the site": term_entropy},
        title="Term entropy EN(t) over the site's pages",
        xlabel="entropy (0: specific to one page, 1: spread evenly over all pages)",
    ) + histogram_svg(
        {"whole page": data.page_entropy, "article text": data.article_entropy},
        title="Mean term entropy per analysed page",
        xlabel="mean entropy of the page's terms",
    )
    return (
        f'<section class="site" id="site-{escape(site)}"><h2>{escape(site)}</h2>'
        f"<p>{' · '.join(escape(f) for f in facts)}</p>"
        f'<h3>Informative structure</h3><div class="structure">'
        f"{_structure_html(site, data)}</div>"
        f'<h3>Most redundant blocks</h3><div class="redundant-blocks">{_redundant_html(data)}</div>'
        f'<h3>Entropy</h3><div class="histograms">{histograms}</div>'
        f'<h3>Crawl figures</h3><div class="crawl-figures">'
        f"{_crawl_table(data.crawl, data.items)}</div>"
        f'<h3>Sitemap</h3><div class="sitemap">{sitemap_html}</div>'
        "</section>"
    )


def render_report(
    sites: Iterable[SiteReportData],
    store: TermStore | None = None,
    *,
    title: str = "wisdom_scrapy site report",
) -> str:
    """The report as a complete, self-contained HTML document (module docstring)."""
    sites = list(sites)
    store_name = escape(redact_uri(store.uri)) if store is not None else "(none)"
    toc = "".join(
        f'<li><a href="#site-{escape(d.site)}">{escape(d.site)}</a></li>' for d in sites
    )
    body = "".join(_site_html(store, d) for d in sites) or "<p>No site in the store.</p>"
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">"
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape(title)}</h1>store {store_name} · generated "
        f"{escape(time.strftime('%Y-%m-%d %H:%M:%S %Z'))}</header>"
        f"<main><ul class=\"sites\">{toc}</ul>{body}</main></body></html>\n"
    )


def report_path(uri: str) -> Path:
    """The file a ``WISDOM_REPORT_URI`` (a path or a ``file://`` URI) names."""
    if uri.startswith("file://"):
        return Path(unquote(urlsplit(uri).path))
    return Path(uri)


def check_report_uri(uri: str) -> None:
    """Raise :class:`SettingsError` now when the report cannot be written where ``uri`` says
    (a crawl finds out at start, not after hours at close): the path is a folder, or a file
    there cannot be opened for writing, or the nearest existing folder above it (the rest is
    created at close) is not one or takes no new file. The check writes for real (a temporary
    file): permission bits say nothing for root or a read-only mount."""
    path = report_path(uri)
    problem = ""
    if path.is_dir():
        problem = f"{path} is a folder"
    elif path.exists():
        try:
            path.open("ab").close()  # no truncation
        except OSError as exc:
            problem = str(exc)
    else:
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        try:
            tempfile.TemporaryFile(dir=folder).close()
        except OSError as exc:
            problem = f"cannot create a file in {folder}: {exc}"
    if problem:
        raise SettingsError(f"WISDOM_REPORT_URI={uri!r} is not writable: {problem}")


def write_report(uri: str, html: str) -> Path:
    """Write the report where ``uri`` says (folders created); returns the path."""
    path = report_path(uri)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# the extension
# --------------------------------------------------------------------------------------------


#: The report's part of a site's context: the site's report data.
REPORT: Part[SiteReportData] = Part("report")


class WisdomReportExtension:
    """Collects each site's report data during the crawl; at close, stores it and writes the
    report to ``WISDOM_REPORT_URI`` when set (module docstring). Also counts
    ``wisdom/bytes/kept`` (bytes of the cleaned items) and ``wisdom/bytes/saved``."""

    def __init__(self, crawler: Crawler, uri: str) -> None:
        self.crawler = crawler
        self.uri = uri
        if uri:
            check_report_uri(uri)
        self._n_sites = 0  # sites with report data (their ranks)
        # the crawl's runtime, reachable once every extension is built (find_runtime)
        self.runtime: WisdomRuntime = None  # type: ignore[assignment]
        crawler.signals.connect(self.find_runtime, signal=signals.spider_opened)
        crawler.signals.connect(self.on_analysis, signal=page_analysed)
        crawler.signals.connect(self.on_item, signal=signals.item_scraped)
        crawler.signals.connect(self.on_closed, signal=store_closing)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomReportExtension:
        settings = WisdomSettings.for_crawl(crawler.settings)
        if not settings.enabled:
            raise NotConfigured  # bare: the WisdomExtension logs it once
        return cls(crawler, settings.report_uri)

    def find_runtime(self) -> None:
        """The crawl's runtime, from its :class:`WisdomExtension` (at spider open, before any
        page: the extension is reachable once every extension is built)."""
        self.runtime = WisdomExtension.of(self.crawler).runtime

    def data(self, site: str) -> SiteReportData:
        context = self.runtime.sites.get(site)
        found = REPORT.of(context)
        if found is None:
            found = REPORT.put(context, SiteReportData(site))
            found.rank, self._n_sites = self._n_sites, self._n_sites + 1
        return found

    def sites(self) -> list[SiteReportData]:
        """The sites' report data, in the order the crawl made it."""
        having = self.runtime.sites.having(REPORT)
        return sorted((data for _, data in having), key=lambda data: data.rank)

    def on_analysis(self, site: str, analysis: PageAnalysis | RemoteAnalysis) -> None:
        """A page's final analysis (a failure costs the crawl no page: its sender counts it
        under ``wisdom/errors/report`` and logs it)."""
        self.data(site).observe(analysis)

    def on_item(self, item: Any) -> None:
        site_key = getattr(item, "site", None) or getattr(item, "url", None)
        if not isinstance(site_key, str):
            return
        site = site_key if isinstance(item, (SiteStructureItem, SitemapItem)) else (
            self.runtime.site_of(site_key)
        )
        self.data(site).observe_item(item)
        self.runtime.inc("wisdom/bytes/kept", _kept_bytes(item))
        self._bytes_saved()

    def _bytes_saved(self) -> None:
        """``wisdom/bytes/saved`` = fed − kept, kept current with every item (so it is right
        for whoever reads the stats at close, before or after this extension's close)."""
        stats = self.runtime.stats
        if stats is not None:
            fed = int(stats.get_value("wisdom/bytes/fed", 0))
            kept = int(stats.get_value("wisdom/bytes/kept", 0))
            stats.set_value("wisdom/bytes/saved", max(fed - kept, 0))

    def on_closed(self, reason: str) -> None:
        stats = self.runtime.stats
        if stats is None:
            return
        self._bytes_saved()
        crawl = {key: float(stats.get_value(key)) for key, _ in CRAWL_FIGURES
                 if stats.get_value(key) is not None}  # fmt: skip
        finished = time.strftime("%Y-%m-%d %H:%M:%S")
        sites = self.sites()
        for data in sites:
            data.crawl, data.finished = crawl, finished
            data.finish()
            try:
                self.runtime.store.put_records(data.site, REPORT_KIND, {"latest": data.to_bytes()})
            except StoreError as exc:
                self.runtime.inc("wisdom/store_errors")
                logger.warning("wisdom_scrapy: report data of %s not stored: %s", data.site, exc)
        if self.uri:
            html = render_report(sites, self.runtime.store)
            path = write_report(self.uri, html)
            logger.info("wisdom_scrapy: site report written to %s", path)


def _kept_bytes(item: Any) -> int:
    if isinstance(item, ArticleItem):  # the body as HTML, or as text when html is not filled
        body = item.html or item.text
        return len(body.encode()) + sum(len(m.encode()) for m in item.metadata)
    if isinstance(item, TocItem):
        return sum(len(str(lk.get("url", ""))) + len(str(lk.get("text", "")).encode())
                   for lk in item.links)  # fmt: skip
    return 0

