"""One site's state in a crawl, in one place: :class:`SiteContext`, one per site, kept by
:class:`Sites`.

A crawl learns each site as it goes, and several stages need what it learned: the extractor
(warm-up and TOC waits, the block repetition an article's text depends on), the link structure
(page records, HITS scores) and the cleaner (what a thesis cleaner learned). Each stage keeps its
part of a site here, under the site's context, rather than in a table of its own, so that

* the site's **entropy snapshot** is read once and re-read by one rule (:meth:`SiteContext.
  snapshot`): the analysis, the link weights of focusing and the site's HITS analysis see the
  same entropies, and a snapshot is read from the store O(log N) times per site;
* what a crawl holds of a site is found in one place, listed by site.

The parts are typed here but built by their stages (each knows how to load its part from the
store), so this module imports none of them at run time: it sits below them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wisdom_scrapy.cleaners import SiteCleaner
    from wisdom_scrapy.extraction import SiteWaits
    from wisdom_scrapy.store import EntropySnapshot, TermStore
    from wisdom_scrapy.structure import SiteLinks

__all__ = ["SNAPSHOT_GROWTH", "SiteContext", "Sites"]

#: A site's entropy snapshot is re-read once the store knows this factor more of its pages:
#: entropies drift as pages arrive, and re-reads then total O(N log N) per site, not O(N²).
SNAPSHOT_GROWTH = 1.1


@dataclass(eq=False)
class SiteContext:
    """What the crawl knows of one site (module docstring). ``waits``, ``links`` and
    ``cleaner`` are the extractor's, the link structure's and the cleaner's parts, None until
    that stage first sees the site."""

    site: str
    store: TermStore | None  # None: a registry of cleaners only (no snapshots)
    growth: float = SNAPSHOT_GROWTH
    #: called with a stat name each time the snapshot is read from the store
    count: Callable[[str], None] = field(default=lambda name: None, repr=False)
    waits: SiteWaits | None = field(default=None, repr=False)
    links: SiteLinks | None = field(default=None, repr=False)
    cleaner: SiteCleaner | None = field(default=None, repr=False)
    _snapshot: EntropySnapshot | None = field(default=None, repr=False)

    def snapshot(self, *, fresh: bool = False, n_pages: int | None = None) -> EntropySnapshot:
        """The site's entropies: read from the store the first time, and again once the site
        has :attr:`growth` times the pages of the snapshot held — or, ``fresh``, as soon as it
        has any page the snapshot lacks (the site-level results at idle and close: final
        entropies, the same in every process). A fresh read replaces the one every stage uses.

        ``n_pages``: the site's page count when the caller knows it (saves a store call);
        counted in the store otherwise. Raises :class:`~wisdom_scrapy.store.StoreError` when
        the store fails."""
        if self.store is None:
            raise ValueError(f"no store to read the entropies of {self.site} from")
        snap = self._snapshot
        if snap is None or self._grown(snap, self.growth if not fresh else 1.0, n_pages):
            snap = self._snapshot = self.store.snapshot(self.site)
            self.count("wisdom/snapshots")
        return snap

    def _grown(self, snap: EntropySnapshot, factor: float, n_pages: int | None) -> bool:
        assert self.store is not None
        n = self.store.page_count(self.site) if n_pages is None else n_pages
        return n > snap.n_pages * factor


class Sites:
    """The crawl's :class:`SiteContext` per site, created on first use."""

    def __init__(
        self,
        store: TermStore | None,
        *,
        growth: float = SNAPSHOT_GROWTH,
        count: Callable[[str], None] = lambda name: None,
    ) -> None:
        self.store = store
        self.growth = growth
        self.count = count
        self._contexts: dict[str, SiteContext] = {}

    def get(self, site: str) -> SiteContext:
        context = self._contexts.get(site)
        if context is None:
            context = self._contexts[site] = SiteContext(
                site, self.store, self.growth, self.count
            )
        return context

    def find(self, site: str) -> SiteContext | None:
        """The site's context if the crawl has seen the site, else None (nothing created)."""
        return self._contexts.get(site)

    def __iter__(self) -> Iterator[SiteContext]:
        return iter(list(self._contexts.values()))

    def __len__(self) -> int:
        return len(self._contexts)
