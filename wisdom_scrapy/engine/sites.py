"""One site's state in a crawl, in one place: :class:`SiteContext`, one per site, kept by
:class:`Sites`.

A crawl learns each site as it goes, and several stages need what it learned: the extractor
(warm-up and TOC waits, the block repetition an article's text depends on), the link structure
(page records, HITS scores) and the cleaner (what a thesis cleaner learned). Each stage keeps its
part of a site here, under the site's context, rather than in a table of its own, so that

* the site's **entropy snapshot** is kept once and re-read by one rule (:meth:`SiteContext.
  snapshot`): the page analysis and the link weights of focusing see the same entropies, and a
  snapshot is read from the store O(log N) times per site; the site-level analyses (HITS, the
  sitemap) read the store's current entropies (:meth:`SiteContext.current`);
* what a crawl holds of a site is found in one place, listed by site;
* the snapshots together stay within a budget (:data:`SNAPSHOT_TERMS`): a broad crawl's
  thousands of sites each have a vocabulary of their own, and a site crawled a while ago need
  not keep its snapshot in memory (it is read again if the site's pages come back);
* a site the crawl has left lets go of what its stages can read back from the store exactly
  (:meth:`Sites.fed`, :data:`SITE_HORIZON`): a broad crawl holds the counts of the sites it is
  crawling, not of every site it has crawled.

Each stage declares its part (a :class:`Part`, typed with the stage's own class), builds it
and loads it from the store; this module names none of them, so it sits below every stage.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from wisdom_scrapy.store.base import EntropyMirror

if TYPE_CHECKING:
    from collections.abc import Iterable

    from wisdom_scrapy.store import EntropySnapshot, TermStore

__all__ = [
    "SITE_HORIZON",
    "SNAPSHOT_GROWTH",
    "SNAPSHOT_TERMS",
    "LetsGoOfSites",
    "Part",
    "SiteContext",
    "Sites",
]

_P = TypeVar("_P")

#: A site's entropy snapshot is re-read once the store knows this factor more of its pages:
#: entropies drift as pages arrive, and re-reads then total O(N log N) per site, not O(N²).
SNAPSHOT_GROWTH = 1.1

#: Terms the snapshots of all sites may hold together (~45 bytes a term: ~12 MB); past it the
#: least recently used sites' snapshots are let go (counted under ``wisdom/snapshots/released``).
#: The site in use keeps its snapshot whatever its size.
SNAPSHOT_TERMS = 1 << 18

#: A site none of whose pages the crawl fed in its last this many pages is left: its stages let
#: go of what they can read back from the store exactly (the link and block counts, about a
#: quarter of what a small site holds), and read it back if the site is used again. Each time a
#: left site's pages come back, its horizon doubles, so a crawl that keeps returning to a site
#: (one that takes its sites in turns) soon stops paying for the read-backs.
SITE_HORIZON = 1024


class LetsGoOfSites(Protocol):
    """A stage holding parts of sites that it can read back from the store exactly: offered
    each site the crawl has left (:meth:`Sites.fed`)."""

    def let_go(self, context: SiteContext) -> bool:
        """Let go of the stage's part of the left site ``context`` if it can be read back
        exactly; whether anything went (a part kept is offered again when the site is left
        next)."""
        ...


class Part(Generic[_P]):
    """One stage's part of every site's context, declared by the stage with its type
    (``WAITS: Part[SiteWaits] = Part("waits")``): :meth:`of` a context is None until the stage
    :meth:`put` it there, when it first sees the site."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def of(self, context: SiteContext) -> _P | None:
        return context.parts.get(self)

    def put(self, context: SiteContext, part: _P) -> _P:
        context.parts[self] = part
        return part

    def __repr__(self) -> str:
        return f"Part({self.name!r})"


@dataclass(eq=False)
class SiteContext:
    """What the crawl knows of one site (module docstring). ``parts``: each stage's part (the
    extractor's waits, the link structure's links, the cleaner's state), by its :class:`Part`."""

    site: str
    store: TermStore | None  # None: a registry of cleaners only (no snapshots)
    growth: float = SNAPSHOT_GROWTH
    #: called with a stat name each time a snapshot is read from the store
    count: Callable[[str], None] = field(default=lambda name: None, repr=False)
    #: called with the context each time its snapshot is used (the registry's budget)
    used: Callable[[SiteContext], None] = field(default=lambda context: None, repr=False)
    #: snapshots read from the store for the analysis: a new value means a new snapshot
    reads: int = 0
    parts: dict[Part[Any], Any] = field(default_factory=dict, repr=False)
    _snapshot: EntropySnapshot | None = field(default=None, repr=False)
    #: the site's entropies kept in step with the store (None: released, or not read yet)
    _mirror: EntropyMirror | None = field(default=None, repr=False)
    #: pages of the crawl without one of this site's before it is left (:data:`SITE_HORIZON`)
    horizon: int = SITE_HORIZON
    #: the crawl's page count when the site's last page was fed (:meth:`Sites.fed`)
    last_fed: int = 0
    #: whether the site is waiting for its horizon in :class:`Sites`' heap
    armed: bool = False
    #: whether a stage let go of a part of the site since its last page (:meth:`Sites.fed`)
    left: bool = False
    #: the crawl's page count when a read-back of the site last failed (:meth:`Sites.may_read`)
    read_failed_at: int = -1
    #: pages of the site the crawl fed (:meth:`Sites.feeding`: the progress line, the report)
    fed_pages: int = 0
    #: how many sites had pages fed before this one's first (:meth:`Sites.most_fed`)
    fed_rank: int = -1
    #: Whether the site's cold-start hold is over, for good: may its pages be analysed as they
    #: arrive, none held for the warm-up (``WISDOM_WARMUP_PAGES``, or until its template
    #: shows)? The extractor decides it (:meth:`~wisdom_scrapy.engine.waits.Extractor.
    #: _hold_over`; its log line "site … warm" says so); the progress line reads it. Not
    #: whether the site's entropies mean something yet: that is *warm*
    #: (:meth:`WisdomParams.is_warm <wisdom_scrapy.mining.wisdom.WisdomParams.is_warm>`),
    #: which the hold ends at the latest but may end before.
    cold_start_over: bool = False

    def snapshot(self) -> EntropySnapshot:
        """The entropies the site's pages are analysed with: read from the store the first
        time, and again once the site has :attr:`growth` times the pages of the snapshot held.
        Only the page analysis refreshes it; other readers take :meth:`latest` or
        :meth:`current`, so when it is refreshed does not depend on them. Raises
        :class:`~wisdom_scrapy.store.StoreError` when the store fails."""
        snap = self._snapshot
        if snap is None or self._store().page_count(self.site) > snap.n_pages * self.growth:
            snap = self._snapshot = self.current()
            self.reads += 1
        self.used(self)
        return snap

    def latest(self) -> EntropySnapshot:
        """The snapshot the site's pages are analysed with now (read when none is held yet),
        never re-read here: readers alongside the analysis (the focusing's link weights) see
        its entropies without changing when it is refreshed."""
        if self._snapshot is None:
            return self.snapshot()
        self.used(self)
        return self._snapshot

    @property
    def held_terms(self) -> int:
        """Terms of the entropies held (0: none): the mirror's, which its snapshots share."""
        if self._mirror is not None:
            return self._mirror.n_terms
        return 0 if self._snapshot is None else len(self._snapshot.values)

    def release_snapshot(self) -> None:
        """Let the snapshot go: the next use reads the store's entropies again (whole)."""
        self._snapshot = self._mirror = None

    def current(self) -> EntropySnapshot:
        """The store's entropies of every page of the site now, read for a site-level analysis
        (the link structure's HITS, the sitemap: O(log N) times a crawl) and not kept. Read
        through the site's :class:`~wisdom_scrapy.store.base.EntropyMirror`: only the terms
        changed since the last read come from the store. The mirror is held, so it counts
        against the snapshots' budget like a snapshot."""
        self.count("wisdom/snapshots")
        if self._mirror is None:
            self._mirror = EntropyMirror(self.site)
        try:
            snap = self._mirror.read(self._store())
        except BaseException:  # half applied, maybe: the next read is a whole one
            self._mirror = None
            raise
        self.used(self)
        return snap

    def _store(self) -> TermStore:
        if self.store is None:
            raise ValueError(f"no store to read the entropies of {self.site} from")
        return self.store


class Sites:
    """The crawl's :class:`SiteContext` per site, created on first use; their snapshots hold
    at most ``max_terms`` terms together, beside the one in use (module docstring).

    A site none of whose pages the crawl :meth:`fed` in the last ``horizon`` pages (doubled for
    each time the site came back; 0: never) is left: it is offered to the stages the caller of
    :meth:`fed` names, which let go of their part of the site (read back on the site's next use)
    and say whether they did. The stages are named at each call rather than registered here:
    they are built with this registry, and the one that feeds the pages knows them all.
    """

    def __init__(
        self,
        store: TermStore | None,
        *,
        growth: float = SNAPSHOT_GROWTH,
        count: Callable[[str], None] = lambda name: None,
        max_terms: int = SNAPSHOT_TERMS,
        horizon: int = SITE_HORIZON,
    ) -> None:
        self.store = store
        self.growth = growth
        self.count = count
        self.max_terms = max_terms
        self.horizon = horizon
        self._contexts: dict[str, SiteContext] = {}
        self._fed = 0  # pages fed in the crawl
        #: (page count at which the site may be left, site): one entry per armed site
        self._due: list[tuple[int, str]] = []
        #: sites holding a snapshot, least recently used first, with its terms
        self._holding: OrderedDict[str, int] = OrderedDict()
        self._held_terms = 0
        self._fed_sites = 0  # sites with pages fed

    def get(self, site: str) -> SiteContext:
        context = self._contexts.get(site)
        if context is None:
            context = self._contexts[site] = SiteContext(
                site, self.store, self.growth, self.count, used=self._used,
                horizon=self.horizon,
            )
        return context

    def fed(self, site: str, stages: Iterable[LetsGoOfSites] = ()) -> None:
        """A page of ``site`` was fed: the crawl's page count goes on, and the sites it left are
        offered to each of ``stages`` (a heap entry per site: O(log sites) a page)."""
        self._fed += 1  # whatever the horizon: a failed read-back is tried again by it
        if not self.horizon:
            return
        context = self.get(site)
        if context.left:  # back: its parts are read again as they are used
            context.left = False
            context.horizon *= 2
            self.count("wisdom/sites/back")
        context.last_fed = self._fed
        self._arm(context)
        while self._due and self._due[0][0] <= self._fed:
            self._offer(heapq.heappop(self._due)[1], stages)

    def feeding(self, site: str) -> None:
        """A page of ``site`` is being fed: counted in its :attr:`SiteContext.fed_pages`."""
        context = self.get(site)
        if not context.fed_pages:
            context.fed_rank = self._fed_sites
            self._fed_sites += 1
        context.fed_pages += 1

    def most_fed(self, n: int) -> list[SiteContext]:
        """The ``n`` sites with the most pages fed, among equals the first fed first."""
        fed = [context for context in self._contexts.values() if context.fed_pages]
        return heapq.nsmallest(n, fed, key=lambda c: (-c.fed_pages, c.fed_rank))

    @property
    def n_fed(self) -> int:
        """Sites with pages fed."""
        return self._fed_sites

    def read_back(self, site: str) -> None:
        """A stage read a part of ``site`` back, maybe without a page of it coming back (its
        analysis at idle, a page of it that waited): it is let go again after its horizon."""
        context = self.get(site)
        if not context.armed:
            context.last_fed = self._fed
            self._arm(context)

    def may_read(self, site: str) -> bool:
        """Whether a stage may try to read a part of ``site`` back now: once a read failed
        (:meth:`read_failed`, the store failing), not before the crawl's next page, so that a
        page's steps do not each try, warn and count again."""
        return self.get(site).read_failed_at != self._fed

    def read_failed(self, site: str) -> None:
        self.get(site).read_failed_at = self._fed

    def _arm(self, context: SiteContext) -> None:
        if not context.armed and self.horizon:
            context.armed = True
            heapq.heappush(self._due, (context.last_fed + context.horizon, context.site))

    def _offer(self, site: str, stages: Iterable[LetsGoOfSites]) -> None:
        """``site``'s horizon may be over: offer it to each of ``stages`` if so."""
        context = self._contexts[site]
        context.armed = False
        if context.last_fed + context.horizon > self._fed:  # fed since: it waits again
            self._arm(context)
        elif any([stage.let_go(context) for stage in stages]):  # all offered
            context.left = True
            self.count("wisdom/sites/left")

    def _used(self, context: SiteContext) -> None:
        """``context``'s snapshot was used: it becomes the most recently used, and the least
        recently used others let theirs go while the snapshots hold over ``max_terms`` terms."""
        holding = self._holding
        self._held_terms += context.held_terms - holding.pop(context.site, 0)
        holding[context.site] = context.held_terms
        while self._held_terms > self.max_terms and len(holding) > 1:
            site, terms = holding.popitem(last=False)
            self._held_terms -= terms
            self._contexts[site].release_snapshot()
            self.count("wisdom/snapshots/released")

    def having(self, part: Part[_P]) -> list[tuple[str, _P]]:
        """Each site that has ``part``, with it (in the order the sites were first seen): the
        stage's view of its sites, for the stages that act on all of them (at idle, at close)."""
        return [(context.site, found) for context in self._contexts.values()
                if (found := part.of(context)) is not None]  # fmt: skip

    def find(self, site: str) -> SiteContext | None:
        """The site's context if the crawl has seen the site, else None (nothing created)."""
        return self._contexts.get(site)

    def __iter__(self) -> Iterator[SiteContext]:
        return iter(list(self._contexts.values()))

    def __len__(self) -> int:
        return len(self._contexts)
