"""The sitemap while Scrapy crawls: the spider middleware and its export. The algorithm (SMG)
is :mod:`wisdom_scrapy.mining.sitemap`.

:class:`WisdomSitemapMiddleware` (enabled by ``WISDOM_SITEMAP`` or ``WISDOM_SITEMAP_URI``)

* partitions every fetched HTML page into blocks as it arrives (H2S + SEG + R_SEG, from the
  page model the runtime already built: the page is not parsed again) and keeps the blocks'
  record in the store (``put_records(site, "sitemap", …)``, in batches of ``FLUSH_PAGES`` and
  before every build; page by page in a distributed crawl, where the finaliser builds from the
  other workers' records and a worker may be killed at any time), so a restarted crawl or another
  process sharing the store builds the sitemap from every page any of them fetched;
* at spider idle builds each grown site's sitemap from all its records and emits a
  :class:`~wisdom_scrapy.items.SitemapItem` through the normal item flow (a site-level item,
  :data:`wisdom_scrapy.signals.site_items`: at idle, or at close when the spider closed before
  going idle);
* at spider close (:data:`wisdom_scrapy.signals.store_closing`) writes the sitemap to
  ``WISDOM_SITEMAP_URI``: ``<uri>.xml`` (sitemaps.org ``urlset``: the home page and every entry,
  ``priority`` falling by level) and ``<uri>.json`` (``{"url", "title", "children": [...]}``
  from the home page down; a list of such trees when the crawl covered several sites). A plain
  path is written directly; any other URI goes through the feed storage Scrapy's
  ``FEED_STORAGES`` names for its scheme.

SEG's complexity cuts are derived from the symbol frequencies of the site's pages seen so far
(:meth:`~wisdom_scrapy.segment.SegParams.for_background`); they are re-derived whenever the
site's symbols grew by a tenth. What the middleware keeps of a site (those symbol frequencies,
the records not written yet, its home page, its last sitemap) is its part of the site's context
(:data:`SITEMAP`, on :class:`~wisdom_scrapy.engine.sites.SiteContext`), kept for the whole crawl:
a site built once is built again at close only when it grew. Stats: ``wisdom/sitemap/pages``,
``wisdom/sitemap/microseconds`` (per-page partitioning time), ``wisdom/sitemap/entries``,
``wisdom/items/sitemap``, ``wisdom/sitemap/files``.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler, load_object

from wisdom_scrapy import signals
from wisdom_scrapy.engine.sites import Part
from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.items import SitemapItem, xml_safe
from wisdom_scrapy.mining.sitemap import PageBlocks, Sitemap, build_sitemap, page_blocks
from wisdom_scrapy.segment import SegParams, translate
from wisdom_scrapy.store import StoreError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from wisdom_scrapy.page.model import PageModel

__all__ = ["RECORD_KIND", "SITEMAP", "WisdomSitemapMiddleware", "sitemap_json", "sitemap_xml"]

logger = logging.getLogger(__name__)
#: ``kind`` of the store records holding each page's blocks.
RECORD_KIND = "sitemap"
#: Page records are written to the store in batches of this many (one transaction each), and
#: whenever the sitemap is built.
FLUSH_PAGES = 32
#: ``kind`` of the record naming the site's home page: the first page fetched of the site
#: (a crawl starts there), kept from the site's first crawl on.
HOME_KIND = "sitemap_home"


class _Background:
    """A site's H2S symbol frequencies and the SEG cuts derived from them."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.params: SegParams | None = None
        self._derived_at = 0

    def observe(self, symbols: str) -> SegParams:
        self.counts.update(symbols)
        total = sum(self.counts.values())
        if self.params is None or total > 1.1 * self._derived_at:
            self.params = SegParams.for_background(self.counts)
            self._derived_at = total
        return self.params


@dataclass(slots=True, eq=False)
class _SiteSitemap:
    """The sitemap's part of one site's context (module docstring)."""

    background: _Background = field(default_factory=_Background)
    #: pages observed since the site's last sitemap; None until the first page was observed
    #: whole (or the sitemap built): until then the site has no sitemap to build
    grown: int | None = None
    #: sites counted before this one (:meth:`WisdomSitemapMiddleware._counted`): the order of
    #: the sites' items
    rank: int = -1
    home: str | None = None
    pending: dict[str, bytes] = field(default_factory=dict)  # page records not yet written
    sitemap: Sitemap | None = None


#: The sitemap's part of a site's context.
SITEMAP: Part[_SiteSitemap] = Part("sitemap")


class WisdomSitemapMiddleware:
    """Builds and exports the crawled sites' sitemaps; see the module docstring."""

    def __init__(self, crawler: Crawler, wisdom: WisdomExtension) -> None:
        runtime = wisdom.runtime
        settings = runtime.settings
        if not settings.sitemap:
            # Off by default: a bare NotConfigured, so Scrapy logs no "Disabled" warning.
            raise NotConfigured
        self.crawler = crawler
        self.runtime = runtime
        self.uri = settings.sitemap_uri
        self.levels = settings.sitemap_levels
        self._n_counted = 0  # sites whose sitemap is built when they grew (_counted)
        crawler.signals.connect(self.site_items, signal=signals.site_items)
        crawler.signals.connect(self.on_closed, signal=signals.store_closing)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WisdomSitemapMiddleware:
        return cls(crawler, WisdomExtension.of(crawler))

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        model = self.runtime.in_flight.model(response)
        if model is not None:
            try:
                self._observe(model)
            except Exception:  # the sitemap must never cost the spider its page
                self.runtime.failed("sitemap", response.url)
        async for obj in result:
            yield obj

    def _observe(self, model: PageModel) -> None:
        started = time.perf_counter()
        site = self.runtime.site_of(model.url)
        part = self._part(site)
        seq = translate(model)
        params = part.background.observe(seq.symbols)

        def same_site(url: str) -> bool:
            return self.runtime.site_of(url) == site

        record = page_blocks(model, params, same_site, seq)
        part.pending[model.url] = record.encode()
        if len(part.pending) >= (1 if self.runtime.distributed else FLUSH_PAGES):
            self._flush(site)
        if part.home is None:
            stored = self.runtime.store.records(site, HOME_KIND).get("home")
            part.home = stored.decode("utf-8") if stored else model.url
            if not stored:
                self.runtime.store.put_records(site, HOME_KIND, {"home": model.url.encode()})
        self._counted(part)
        part.grown = (part.grown or 0) + 1
        self.runtime.inc("wisdom/sitemap/pages")
        self.runtime.inc(
            "wisdom/sitemap/microseconds", round((time.perf_counter() - started) * 1e6)
        )

    def _part(self, site: str) -> _SiteSitemap:
        context = self.runtime.sites.get(site)
        return SITEMAP.of(context) or SITEMAP.put(context, _SiteSitemap())

    def _counted(self, part: _SiteSitemap) -> None:
        """The site's sitemap is built from now on when it grew: its items follow those of the
        sites counted before it."""
        if part.grown is None:
            part.grown, part.rank = 0, self._n_counted
            self._n_counted += 1

    def _flush(self, site: str) -> None:
        """Write the site's pending page records to the store in one atomic write."""
        part = self._part(site)
        pending, part.pending = part.pending, {}
        if not pending:
            return
        try:
            self.runtime.store.put_records(site, RECORD_KIND, pending)
        except StoreError as exc:
            self.runtime.inc("wisdom/store_errors")
            self.runtime.inc("wisdom/sitemap/records_lost", len(pending))
            logger.warning(
                "wisdom_scrapy: sitemap blocks of %d page(s) of %s not stored: %s",
                len(pending), site, exc,
            )

    # -- site level --------------------------------------------------------------------------

    def build(self, site: str) -> Sitemap:
        """The site's sitemap from every page record the store holds for it."""
        self._flush(site)
        part = self._part(site)
        blobs = self.runtime.store.records(site, RECORD_KIND)
        records = {url: PageBlocks.decode(blob) for url, blob in blobs.items()}
        snapshot = self.runtime.sites.get(site).current()
        sitemap = build_sitemap(
            records,
            snapshot,
            levels=self.levels,
            home=part.home,
            hits_max_iter=self.runtime.settings.hits_max_iter,
        )
        self._counted(part)
        part.sitemap, part.grown = sitemap, 0
        self.runtime.inc("wisdom/sitemap/entries", sum(sitemap.entries()))
        return sitemap

    def _build_grown(self, stage: str) -> list[tuple[str, Sitemap]]:
        out = []
        for site, part in self._counted_sites():
            if part.grown or part.sitemap is None:
                try:
                    out.append((site, self.build(site)))
                except Exception:
                    self.runtime.failed("sitemap", f"({stage}: {site})")
        return out

    def _counted_sites(self) -> list[tuple[str, _SiteSitemap]]:
        """The sites counted (:meth:`_counted`), in the order they were."""
        having = self.runtime.sites.having(SITEMAP)
        return sorted([(s, p) for s, p in having if p.grown is not None], key=lambda s: s[1].rank)

    def site_items(self, stage: str) -> list[SitemapItem]:
        """SitemapItems of the sites that grew since their last one, at idle and at close
        (:data:`wisdom_scrapy.signals.site_items`; in a distributed crawl, in the finaliser
        only)."""
        built = self._build_grown(stage)
        if built:
            self.runtime.inc("wisdom/items/sitemap", len(built))
        return [self.item(site, sitemap) for site, sitemap in built]

    def item(self, site: str, sitemap: Sitemap) -> SitemapItem:
        return SitemapItem(
            site=site,
            url=sitemap.home,
            title=xml_safe(sitemap.title),  # anchor texts: a page's stray control characters
            tree=xml_safe(sitemap.tree),
            levels=sitemap.levels,
            entries=sitemap.entries(),
            pages=sitemap.pages,
            blocks=sitemap.blocks,
            uri=self.uri,
        )

    async def on_closed(self) -> None:
        """Write the sitemaps (building those not built at idle) to ``WISDOM_SITEMAP_URI``
        (in a distributed crawl, the finaliser only)."""
        if not self.runtime.may_finalise():
            return
        self._build_grown("close")
        built = sorted((site, p.sitemap) for site, p in self.runtime.sites.having(SITEMAP)
                       if p.sitemap is not None)  # fmt: skip
        if not self.uri or not built:
            return
        sitemaps = [sitemap for _, sitemap in built]
        files = {".xml": sitemap_xml(sitemaps), ".json": sitemap_json(sitemaps)}
        await self._write(files)

    async def _write(self, files: dict[str, bytes]) -> None:
        scheme = urlsplit(self.uri).scheme
        if len(scheme) <= 1:  # a plain path (or a Windows drive letter)
            for suffix, data in files.items():
                path = Path(self.uri + suffix)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            self.runtime.inc("wisdom/sitemap/files", len(files))
            logger.info("wisdom_scrapy: sitemap written to %s.{xml,json}", self.uri)
            return
        storages = self.crawler.settings.getwithbase("FEED_STORAGES")
        if scheme not in storages or storages[scheme] is None:
            logger.error(
                "WISDOM_SITEMAP_URI=%r: no FEED_STORAGES entry for scheme %r; sitemap not written",
                self.uri, scheme,
            )
            self.runtime.inc("wisdom/sitemap/write_errors")
            return
        await _store_all(self, load_object(storages[scheme]), files)


async def _store_all(mw: WisdomSitemapMiddleware, cls: Any, files: dict[str, bytes]) -> None:
    """Write each file through a feed storage of ``cls`` (``open`` → write → ``store``)."""
    for suffix, data in files.items():
        try:
            storage = build_from_crawler(cls, mw.crawler, mw.uri + suffix, feed_options={})
            handle = storage.open(mw.crawler.spider)
            handle.write(data)
            result = storage.store(handle)
            if result is not None:
                await maybe_deferred_to_future(result)
        except Exception:
            mw.runtime.failed("sitemap", mw.uri + suffix)
            continue
        mw.runtime.inc("wisdom/sitemap/files")
    logger.info("wisdom_scrapy: sitemap written to %s.{xml,json}", mw.uri)


def _walk(tree: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(level, entry) of every entry, level 1 first, each level in order (no recursion)."""
    out: list[tuple[int, dict[str, Any]]] = []
    frontier, level = tree, 1
    while frontier:
        out.extend((level, e) for e in frontier)
        frontier = [c for e in frontier for c in e["children"]]
        level += 1
    return out


def sitemap_xml(sitemaps: list[Sitemap]) -> bytes:
    """The sitemaps as one sitemaps.org ``urlset``: each home page (priority 1.0) and every
    entry (priority 1.0 − 0.2 × level, at least 0.1), each URL once."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ]
    seen: set[str] = set()
    for sitemap in sitemaps:
        rows = [(0, sitemap.home), *((lv, e["url"]) for lv, e in _walk(sitemap.tree))]
        for level, url in rows:
            if url in seen or not url:
                continue
            seen.add(url)
            priority = max(1.0 - 0.2 * level, 0.1)
            lines.append(
                f"  <url><loc>{escape(url)}</loc><priority>{priority:.1f}</priority></url>"
            )
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


def sitemap_json(sitemaps: list[Sitemap]) -> bytes:
    """The sitemaps as JSON trees ``{"url", "title", "children": [...]}`` from the home page
    down (entries' titles are their anchor texts); one object for one site, else a list."""
    trees = [{"url": s.home, "title": s.title, "children": s.tree} for s in sitemaps]
    data: Any = trees[0] if len(trees) == 1 else trees
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")
