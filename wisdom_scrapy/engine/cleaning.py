"""The crawl's cleaner (``WISDOM_CLEANER``): one :class:`~wisdom_scrapy.analysis.cleaners.
SiteCleaner` per site, kept in the site's context, learned from the crawl's pages and saved in
the store's records.

The cleaners themselves (what each keeps of a page) are :mod:`wisdom_scrapy.analysis.cleaners`;
this is the crawl's side of them: which site's cleaner a page goes to, when it is loaded and
saved. The crawl's extractor and ``scrapy wisdom-show`` analyse pages through
:meth:`Cleaners.analyzer`, so they give a page the same item.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from wisdom_scrapy.analysis.cleaners import CLEANERS, SiteCleaner, apply_cleaned, site_cleaner
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.sites import Part, Sites
from wisdom_scrapy.mining.wisdom import DEFAULT_PARAMS, WisdomParams

if TYPE_CHECKING:
    from wisdom_scrapy.analysis.page_analysis import PageAnalysis
    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.store import EntropySnapshot, TermStore

__all__ = ["CLEANER", "Cleaners"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class SiteCleaning:
    """The cleaner's part of a site's context: its cleaner and when it is saved."""

    cleaner: SiteCleaner
    #: learnt from pages since it was last saved (:meth:`Cleaners.save` writes it)
    dirty: bool = False
    #: saved once its sample was full (a full cleaner learns no more: saved once then)
    saved_full: bool = False


#: the cleaner's part of each site's context
CLEANER: Part[SiteCleaning] = Part("cleaner")


class Cleaners:
    """The cleaner of a crawl, one instance per site, persisted in the store's records."""

    def __init__(
        self,
        name: str,
        store: TermStore | None,
        *,
        sample_pages: int = 500,
        count: Callable[[str], None] = lambda name: None,
        sites: Sites | None = None,
    ) -> None:
        if name not in CLEANERS:
            raise ValueError(f"unknown cleaner {name!r}: use one of {', '.join(CLEANERS)}")
        self.name = name
        self.store = store
        self.sample_pages = sample_pages
        self.count = count
        #: each site's cleaner lives in its context (the crawl's, or a new registry)
        self.sites = sites if sites is not None else Sites(store)

    @property
    def kind(self) -> str:
        """The store record kind of this cleaner ("cleaner-sst" …)."""
        return f"cleaner-{self.name}"

    def site(self, site: str) -> SiteCleaner:
        return self._cleaning(site).cleaner

    def _cleaning(self, site: str) -> SiteCleaning:
        context = self.sites.get(site)
        cleaning = CLEANER.of(context)
        if cleaning is None:
            cleaner = site_cleaner(self.name, sample_pages=self.sample_pages)
            cleaning = CLEANER.put(context, SiteCleaning(cleaner))
            if self.store is not None:
                blob = self.store.records(site, self.kind).get("state")
                if blob:
                    try:
                        cleaner.load(blob)
                        self.count(f"wisdom/cleaner/{self.name}/loaded")
                    except ValueError:
                        logger.warning("wisdom_scrapy: stored %s state of %s unreadable; "
                                       "learning it again", self.kind, site)  # fmt: skip
                        self.count(f"wisdom/cleaner/{self.name}/unreadable")
        return cleaning

    def observe(self, site: str, url: str, model: PageModel) -> None:
        """Learn from a fetched page (nothing for ``wisdom``)."""
        if self.name == "wisdom":
            return
        cleaning = self._cleaning(site)
        if cleaning.cleaner.observe(url, model):
            cleaning.dirty = True
            self.count(f"wisdom/cleaner/{self.name}/pages")
            if cleaning.cleaner.full and not cleaning.saved_full:
                cleaning.saved_full = True
                self.save(site)

    def apply(
        self,
        analysis: PageAnalysis,
        site: str,
        model: PageModel,
        snapshot: EntropySnapshot | None,
    ) -> PageAnalysis:
        """Replace ``analysis``'s article with this cleaner's (``wisdom``: the analysis' own,
        unchanged)."""
        if self.name == "wisdom":
            return analysis
        cleaner = self.site(site)
        entropy = None
        if snapshot is not None and snapshot.n_pages >= 2:
            entropy = snapshot.entropy(model.vocab)
            cleaner.see(snapshot)
        apply_cleaned(analysis, model, cleaner.clean(analysis.url, model, entropy), self.name)
        return analysis

    def analyzer(self, params: WisdomParams = DEFAULT_PARAMS, *,
                 every_block: bool = False) -> Callable[..., PageAnalysis]:
        """The page analysis of a crawl with this cleaner:
        :func:`~wisdom_scrapy.analysis.page_analysis.analyze_page` (same signature) with WISDOM's
        ``params`` and ``every_block`` (the crawl's items have a ``blocks`` field), then
        :meth:`apply`. The crawl's extractor and ``scrapy wisdom-show`` both call this one, so
        they give a page the same role, text, metadata and links (the view asks for every
        block, with its figures). With ``wisdom`` (the default) it is ``analyze_page`` itself:
        the same analysis as the benchmarks' and :func:`~wisdom_scrapy.analyze_page`'s."""
        analyze = partial(analyze_page, params=params, every_block=every_block)
        if self.name == "wisdom":
            return analyze

        def analyze_and_clean(html: Any, url: str, store: Any = None, **kwargs: Any) -> Any:
            analysis = analyze(html, url, store, **kwargs)
            model = analysis.model or kwargs.get("model")
            if model is None:
                return analysis
            site = kwargs.get("site") or url
            return self.apply(analysis, site, model, kwargs.get("snapshot"))

        return analyze_and_clean

    def save(self, site: str | None = None) -> None:
        """Write what changed to the store (one site, or every changed site)."""
        if self.store is None:
            return
        if site:
            context = self.sites.find(site)
            found = None if context is None else CLEANER.of(context)
            changed = [] if found is None else [(site, found)]
        else:
            dirty = [(s, c) for s, c in self.sites.having(CLEANER) if c.dirty]
            changed = sorted(dirty, key=lambda pair: pair[0])
        for s, cleaning in changed:
            blob = cleaning.cleaner.to_bytes()
            if blob:
                self.store.put_records(s, self.kind, {"state": blob})
            cleaning.dirty = False
