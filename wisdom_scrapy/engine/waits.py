"""The extractor: from fed pages to cleaned items during a crawl, with the pages that wait (cold
start, TOC completion). The analysis of one page is :mod:`wisdom_scrapy.analysis.page_analysis`.

The papers analyse a site that has been crawled; a crawler has to analyse while it crawls. Two
things the analysis needs arrive late, and this module waits for them without stalling the crawl
and without holding more than a bounded number of pages:

* **The site's template** (cold start). A page is held (its :class:`PageModel`, not the
  response) until the site shows its template — a page arrives one of whose boxes with a link
  (menu, navigation) the site's block repetition already counts on more than √N of its N pages
  and on 3 (:func:`~wisdom_scrapy.mining.repetition.repeated_blocks`): a handful of pages on a
  templated site, derived from the site, not a constant — or until the store knows
  ``warmup_pages`` pages (a site with no repeated box). Then every held page is analysed with
  the site's repetition: the article body and list pages come from it
  (:class:`~wisdom_scrapy.analysis.page_analysis.SiteView`); term entropy, which needs more pages to
  mean anything (``WisdomParams.warm_pages``), joins in when the store has them. A store that is
  already warm from an earlier crawl (or another process) holds nothing. At spider idle/close
  the held pages are analysed with what there is.
* **Link targets** (WISDOM's anchor precision index compares an anchor with the page it links
  to). A page whose first analysis finds TOC blocks is kept pending until a share
  ``toc_targets_ratio`` of its TOC links have been fetched (or at idle/close), then analysed
  again and emitted. At most ``max_pending_tocs`` wait at once; past that the oldest is finished
  with what is known.

Both waits share one global bound, ``max_held_pages`` pages held or pending across all sites
(a broad crawl warms up many sites at once): past it the oldest waiting page, whatever its site,
is released with the best analysis there is now — with the entropies the store has (single-page
mode below ``WisdomParams.warm_pages``) and the site's repetition so far, or a pending TOC page
with the targets fetched so far — counted under ``wisdom/held/released_early``.

A waiting page given a ``source`` (the crawl gives one that re-parses the response's body) is
kept compact: its body, not its model with the lxml tree (about 2.2 MiB per page of the Python
documentation, of which the tree is nine tenths). It is modelled again, identically, when it
is analysed: one more parse for the few pages that wait.

What travels is one record per page, a :class:`WaitingPage`, from :meth:`Extractor.submit` to
its item: held in its site's list (cold start), in no list while its analysis is under way
(``analysing``: begun with the site's snapshot, here or as a worker's job), pending in its
site's list of TOC pages with its ``targets``, queued (``completed``) once a fetched page
completes them, and, when it leaves the waits, the ticket the crawl keeps: the crawl's spider
middleware lets its PageItem go on, and the item pipeline makes its item
(:meth:`Extractor.item`), analysing it then when it left without an analysis (at idle and close,
or released early). A page analysed to decide whether it waits (a page of a warm site: is it a
TOC page whose targets are not fetched yet?) leaves with that analysis, so it is analysed once.
The extractor's one table of pages is its waiting records in the order they came (the global
bound releases the oldest); the site lists and the queue hold the same records, none keyed by
URL.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Collection, Coroutine, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from parsel import Selector

from wisdom_scrapy.engine.sites import Part, SiteContext, Sites
from wisdom_scrapy.items import (
    HEAVY_FIELDS,
    ArticleItem,
    PageItem,
    TocItem,
    feature_records,
    xml_safe,
    xml_safe_strings,
)
from wisdom_scrapy.mining.fields import SiteTitles, article_fields
from wisdom_scrapy.mining.lamis import link_weights
from wisdom_scrapy.mining.repetition import (
    RECORD_KIND as BLOCKS_KIND,
)
from wisdom_scrapy.mining.repetition import (
    BlockRepetition,
    decode_blocks,
    merge_stored,
    page_blocks,
    repeated_blocks,
)
from wisdom_scrapy.mining.wisdom import TermIds
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.terms import extract_terms
from wisdom_scrapy.store import StoreError
from wisdom_scrapy.store.strings import StringBytes, StringTable

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.analysis.page_analysis import PageAnalysis
    from wisdom_scrapy.store import EntropySnapshot, TermStore

__all__ = [
    "ExtractionParams",
    "Extractor",
    "PageSource",
    "RemoteAnalysis",
    "SiteWaits",
    "TermIndex",
    "TocTargets",
    "WaitingPage",
    "items_from_analysis",
    "run_sync",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExtractionParams:
    """Cold-start and TOC-completion bounds (settings ``WISDOM_WARMUP_PAGES`` …)."""

    warmup_pages: int = 32
    #: stop holding a site's pages as soon as its template shows (module docstring); False:
    #: hold exactly until the store knows ``warmup_pages`` pages (an explicit setting)
    until_template: bool = True
    toc_targets_ratio: float = 0.5
    max_pending_tocs: int = 50
    #: pages held or pending at once, all sites together (module docstring)
    max_held_pages: int = 256
    #: which of :data:`HEAVY_FIELDS` the items get (``WISDOM_ITEM_FIELDS``); the others are empty
    item_fields: frozenset[str] = HEAVY_FIELDS


def _pack_ids(ids: NDArray[np.int64]) -> bytes:
    """Sorted distinct non-negative ids as the LEB128 varints of their gaps: a page's terms are
    a few hundred ids into a vocabulary of many thousands, most gaps under 128 (one byte)."""
    gaps = np.diff(ids, prepend=0).astype(np.uint64)
    size = np.ones(len(gaps), dtype=np.int64)
    for k in range(1, 10):
        size += gaps >= np.uint64(1) << np.uint64(7 * k)
    start = np.cumsum(size) - size
    out = np.zeros(int(size.sum()), dtype=np.uint8)
    for k in range(int(size.max()) if len(size) else 0):
        at = size > k
        byte = (gaps[at] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = np.where(size[at] > k + 1, 0x80, 0).astype(np.uint64)
        out[start[at] + k] = (byte | more).astype(np.uint8)
    return out.tobytes()


def _unpack_ids(blob: bytes) -> NDArray[np.int64]:
    """The ids :func:`_pack_ids` packed."""
    data = np.frombuffer(blob, dtype=np.uint8)
    if not data.size:
        return np.zeros(0, dtype=np.int64)
    last = (data & 0x80) == 0  # the last byte of each gap
    owner = np.cumsum(last) - last  # which gap each byte belongs to
    first = np.flatnonzero(np.concatenate([[True], last[:-1]]))
    shift = (np.arange(len(data)) - first[owner]) * 7
    # each gap's bytes are one run: summed by runs (np.add.at, unbuffered, cost 3x as much)
    return np.cumsum(np.add.reduceat((data & 0x7F).astype(np.int64) << shift, first))


#: most term ids :meth:`TermIndex.term_id` keeps at hand (a site's anchor vocabulary fits)
_RECENT_TERM_IDS = 1 << 14
#: Pages fetched lately whose blocks :attr:`Extractor._fetched_blocks` keeps: a page fed comes
#: as a page item moments later, or never (then its blocks go, oldest first)
_FETCHED_BLOCKS = 256
#: Redundant block paths per site whose sample a worker's analysis brought and later jobs leave
#: out (:attr:`SiteWaits.sampled`): the site report keeps as many paths (``MAX_PATHS``)
MAX_SAMPLED_PATHS = 5000


class _PageTerms(TermIds):
    """The set of a fetched page's terms, compact: sorted ids into the index's vocabulary
    (anchor precision tests a page's anchor terms against many of them at once)."""

    __slots__ = ()
    space: TermIndex

    def __iter__(self) -> Iterator[str]:
        return iter(self.space.vocab.strings(self.ids.tolist()))


class TermIndex:
    """Which terms each fetched page holds, for the anchor precision index (WISDOM §3.1.2).

    About 1 byte per distinct term of a page (its sorted ids into the index's vocabulary as
    varint gaps: :func:`_pack_ids`; a Python set of strings would take ~60, an id array 4) and
    24 per page (:class:`~wisdom_scrapy.store.strings.StringBytes`); :meth:`get` unpacks a
    page's ids (a few µs). The pages of a site the crawl has left (:meth:`let_go`) keep only a
    mark of their site, a few bytes: their terms are read back from the store, the site's
    pages in one batch, when one of them is looked up again (a TOC page of the site coming
    back), so what the index holds grows with the sites the crawl is on, not all it met.
    """

    def __init__(self, vocab: StringTable | None = None) -> None:
        self.vocab = vocab if vocab is not None else StringTable()
        self._pages = StringBytes()
        self._recent_ids: dict[str, int] = {}  # term -> id, the terms anchors look up lately
        self._left = StringTable()  # the sites let go: a mark names one by its id here
        self._store: TermStore | None = None  # where the let-go pages' terms are read back

    def term_id(self, term: str) -> int | None:
        """The vocabulary's id of ``term`` (None: never seen). Anchor precision looks up every
        anchor term of a page, and a site's anchors repeat theirs on every page: the ids looked
        up lately answer in a dict look-up, not the vocabulary's array search (up to
        :data:`_RECENT_TERM_IDS` of them, forgotten all at once past that)."""
        i = self._recent_ids.get(term)
        if i is None:
            i = self.vocab.get(term)
            if i is not None:
                if len(self._recent_ids) >= _RECENT_TERM_IDS:
                    self._recent_ids.clear()
                self._recent_ids[term] = i
        return i

    def add(self, url: str, terms: Collection[str], *, owner: object | None = None) -> None:
        """Note the page's ``terms``; ``owner``: the object holding them for good (the page's
        model), whose ids the vocabulary then keeps for the link structure's record of the
        page (:meth:`~wisdom_scrapy.store.strings.StringTable.owned_ids`)."""
        self._pages[url] = self._packed(terms, owner)

    def _packed(self, terms: Collection[str], owner: object | None = None) -> bytes:
        if owner is not None and isinstance(terms, Sequence):
            ids = self.vocab.owned_ids(owner, terms)
        else:
            ids = self.vocab.ids(terms)
        return _pack_ids(np.unique(ids.astype(np.int64)))

    def get(self, url: str) -> Collection[str] | None:
        ids = self.ids(url)
        return None if ids is None else _PageTerms(ids, self)

    def ids(self, url: str) -> NDArray[np.int64] | None:
        """The page's term ids (sorted, into :attr:`vocab`), or None for a page not added (or
        let go and no longer in the store). StoreError when a let-go page's read fails."""
        blob = self._pages.get(url)
        left = None if blob is None else _left_site(blob)
        if left is not None:
            self._read_back(left)
            blob = self._pages.get(url)
            if blob is None or _left_site(blob) is not None:
                return None
        return None if blob is None else _unpack_ids(blob)

    def let_go(self, site: str, store: TermStore) -> int:
        """Let go of the terms of ``site``'s pages that ``store`` holds as they are here (the
        crawl left the site: :meth:`Extractor.let_go`),
        each kept as a mark of its site, so that they are read back the same (:meth:`ids`);
        how many went. A page stored in another version stays (one another process stored
        again meanwhile reads its new terms back, as the store has them). StoreError: none
        went."""
        stored = store.page_terms(site)
        mark = _left_mark(self._left.id(site))
        went = 0
        for url, terms in stored.items():
            blob = self._pages.get(url)
            if blob is not None and _left_site(blob) is None and self._packed(terms) == blob:
                self._pages[url] = mark
                went += 1
        if went:
            self._store = store
        return went

    def _read_back(self, site_id: int) -> None:
        """The terms of a let-go site's pages, read back from the store in one batch."""
        assert self._store is not None
        mark = _left_mark(site_id)
        stored = self._store.page_terms(self._left.strings([site_id])[0])
        for url, terms in stored.items():
            if self._pages.get(url) == mark:
                self._pages[url] = self._packed(terms)

    def __contains__(self, url: str) -> bool:
        return url in self._pages

    def __len__(self) -> int:
        return len(self._pages)

    def nbytes(self) -> int:
        """Bytes of the pages' packed ids and marks (what the index holds per page, besides
        URLs)."""
        return self._pages.nbytes()


def _left_mark(site_id: int) -> bytes:
    """What a let-go page keeps (:meth:`TermIndex.let_go`): its site's id as a varint and a
    byte 0x80, which no packing ends with (:func:`_pack_ids`: a varint's last byte is < 0x80)."""
    return _pack_ids(np.array([site_id], np.int64)) + b"\x80"


def _left_site(blob: bytes) -> int | None:
    """The site id of a let-go page's mark (:func:`_left_mark`), None for packed ids."""
    if not blob or blob[-1] != 0x80:
        return None
    return int(_unpack_ids(blob[:-1])[0])


def run_sync(step: Coroutine[Any, Any, Any]) -> Any:
    """The result of one of the :class:`Extractor`'s steps run where nothing can wait for a
    worker process (no ``remote``, or ``now``): such a step never suspends, so it is driven
    to its end here without an event loop (tools, tests). RuntimeError if it did suspend."""
    try:
        step.send(None)
    except StopIteration as done:
        return done.value
    step.close()
    raise RuntimeError("an extractor step waited for a worker: await it in the event loop")


@dataclass(frozen=True, slots=True)
class PageSource:
    """What a page's model is rebuilt from, as the crawl built it: the response's text and
    base URL, parsed as Scrapy parses it (``response.selector``: parsel's HTML parser with the
    response's base URL), so the model is identical. A waiting page keeps this, not its model
    and parsed tree (a tenth of the memory: module docstring), and a worker process
    (:mod:`wisdom_scrapy.engine.offload`) models the page from it."""

    url: str
    text: str
    base_url: str
    keep_numbers: bool = False

    def __call__(self) -> PageModel:
        root = Selector(text=self.text, type="html", base_url=self.base_url).root
        return PageModel.from_tree(root, self.url, keep_numbers=self.keep_numbers)


@dataclass(slots=True)
class RemoteAnalysis:
    """A page's analysis made in a worker process (:mod:`wisdom_scrapy.engine.offload`): what the
    waits read of a :class:`~wisdom_scrapy.analysis.page_analysis.PageAnalysis` and the item made
    from it there, with no title of the spider's and no fields of its own yet
    (:meth:`finished_item`). ``redundant``: the page's redundant blocks for the site report
    (:func:`~wisdom_scrapy.analysis.annotated.redundant_summary`), when it asked for them."""

    url: str
    role: str
    title: str
    toc_links: list[tuple[str, str]]
    item: ArticleItem | TocItem | PageItem
    redundant: list[tuple[str, int, str, str]] | None = None

    def finished_item(
        self, title: str, extra: dict[str, Any]
    ) -> ArticleItem | TocItem | PageItem:
        """The item as :func:`items_from_analysis` makes it here: the spider's title when
        the page has none, the spider's fields."""
        item = self.item
        if not item.title and title:
            item.title = xml_safe(title)
        item.extra = dict(extra)
        return item


@dataclass(slots=True)
class TocTargets:
    """A pending TOC page's distinct link targets, and those of them that were not fetched
    when it last counted them (:meth:`Extractor._targets_ready`). Every fetched page looks
    itself up in each pending TOC page of its site: a set look-up, where a scan of the
    targets' list cost a pending page's whole list per fetch; the count at its pending prunes
    the targets the term index holds (a page it holds stays in it), and from then on each
    fetched page prunes itself (:class:`AwaitedTargets`)."""

    all: frozenset[str]
    unfetched: set[str]

    @classmethod
    def of(cls, urls: Collection[str]) -> TocTargets:
        return cls(frozenset(urls), set(urls))


class AwaitedTargets:
    """The unfetched targets of every pending TOC page (:class:`TocTargets`), by target URL:
    a fetched page prunes itself from the targets that wait for it, whatever their site, so
    that a pending page's ``unfetched`` stays what the term index would answer (it holds every
    fetched page for good, and only :meth:`Extractor.page_fetched` adds one) without testing
    each of its unfetched targets again on every fetch of one of them."""

    __slots__ = ("_by_url",)

    def __init__(self) -> None:
        #: target URL -> the pending pages' targets waiting for it, by their ``id`` (each
        #: pending page has its own :class:`TocTargets`, equal ones included)
        self._by_url: dict[str, dict[int, TocTargets]] = {}

    def wait(self, targets: TocTargets) -> None:
        """A pending page's ``targets`` wait for their unfetched URLs."""
        for url in targets.unfetched:
            self._by_url.setdefault(url, {})[id(targets)] = targets

    def leave(self, targets: TocTargets) -> None:
        """A page's ``targets`` no longer wait (it left the pending list)."""
        for url in targets.unfetched:
            waiting = self._by_url.get(url)
            if waiting is not None:
                waiting.pop(id(targets), None)
                if not waiting:
                    del self._by_url[url]

    def fetched(self, url: str) -> None:
        """``url`` is fetched: no target waits for it any more."""
        for targets in self._by_url.pop(url, {}).values():
            targets.unfetched.discard(url)

    def __len__(self) -> int:
        """Target URLs some pending page waits for."""
        return len(self._by_url)


@dataclass(slots=True, eq=False)
class WaitingPage:
    """One page in the extractor's waits, the same record from :meth:`Extractor.submit` to its
    item (:meth:`Extractor.item`): held for its site's cold start, being analysed
    (``analysing``), pending for its TOC links' targets (``targets``), and at last ready, the
    ticket the crawl keeps until its item is made (with its ``analysis`` when the wait was
    decided with one: None, analysed when its item is made). Each stage sets its fields and
    clears them as the page leaves it, so a page waiting keeps no analysis (nor its tree).
    Compared and hashed as itself (``eq=False``): the extractor's table of waiting pages holds
    the records themselves."""

    site: str
    url: str
    model: PageModel | None  # None while compact: rebuilt by ``source`` when analysed
    title: str
    extra: dict[str, Any] = field(default_factory=dict)  # the spider's fields (items module)
    #: rebuilds the page's model (a :class:`PageSource`, or any function) so that a waiting
    #: page keeps its body, not its model and parsed tree (a tenth of the memory)
    source: Callable[[], PageModel] | None = None
    #: the distinct URLs the page links to (:func:`~wisdom_scrapy.mining.wisdom.link_targets`),
    #: kept when its analysis may run in a worker process, which needs their terms
    links: list[str] | None = None
    #: its blocks (:func:`~wisdom_scrapy.mining.repetition.page_blocks`), kept when its
    #: analysis may run in a worker process, which needs their counts
    blocks: NDArray[np.uint64] | None = None
    #: its TOC links' distinct targets while it is pending (in its site's
    #: :attr:`SiteWaits.pending_tocs`); None when it is not
    targets: TocTargets | None = None
    #: a fetched page completed its targets: it is queued for :meth:`Extractor.finish_completed`
    #: (once, in the order they were completed)
    completed: bool = False
    #: its analysis is under way (begun, not settled): it is neither held nor pending, and
    #: cannot be released
    analysing: bool = False
    #: the site's entropy snapshot its analysis began with (the item states it)
    snapshot: EntropySnapshot | None = None
    #: its analysis, made here when it began or back from a worker once settled
    analysis: PageAnalysis | RemoteAnalysis | None = None
    #: its analysis sent to a worker (:meth:`~wisdom_scrapy.engine.offload.RemoteAnalyzer.job`),
    #: until it is back
    job: Any = None
    #: what its analysis raised as it began (it leaves unanalysed)
    error: Exception | None = None

    def page(self) -> PageModel:
        if self.model is None:
            assert self.source is not None
            self.model = self.source()
        return self.model

    def compact(self) -> None:
        """Let the model (and its lxml tree) go while the page waits, if it can be rebuilt."""
        if self.source is not None:
            self.model = None

    def begin(
        self,
        snapshot: EntropySnapshot | None,
        analysis: PageAnalysis | None = None,
        job: Any = None,
        error: Exception | None = None,
    ) -> None:
        """Its analysis begun (:meth:`Extractor._start`): made here (``analysis``), sent to a
        worker (``job``) or failed before it could be (``error``). Out of the held and
        pending lists until it is settled: nothing else lets it go."""
        self.snapshot, self.analysis, self.job, self.error = snapshot, analysis, job, error
        self.analysing = True

    def settle(self, analysis: PageAnalysis | RemoteAnalysis | None = None) -> None:
        """Its analysis is over: ``analysis`` kept with the snapshot it began with, or none
        (waiting again, or leaving to be analysed when its item is made)."""
        if analysis is None:
            self.snapshot = None
        self.analysis, self.job, self.error = analysis, None, None
        self.analysing = False


@dataclass
class SiteWaits:
    """The extractor's part of a site's :class:`~wisdom_scrapy.engine.sites.SiteContext`: its pages
    waiting, whether its cold start is over, its block repetition."""

    #: its pages held for the cold start, oldest first
    held: list[WaitingPage] = field(default_factory=list)
    #: its TOC pages pending for their targets (:attr:`WaitingPage.targets`), oldest first
    pending_tocs: list[WaitingPage] = field(default_factory=list)
    #: the read of the site context's snapshot last analysed with (SiteContext.reads)
    snapshot_read: int = 0
    repetition: BlockRepetition = field(default_factory=BlockRepetition)
    #: store pages the repetition lacked when last merged (pages stored without a blocks
    #: record, by an older wisdom_scrapy): only more than that means other processes' pages
    unmerged: int = 0
    #: the repetition was let go (the crawl left the site): read back from the store for use
    repetition_let_go: bool = False
    #: the affixes of its pages' titles, which article titles lose (issue 31)
    titles: SiteTitles = field(default_factory=SiteTitles)
    #: the redundant block paths whose sample a worker's analysis brought already, in the
    #: order they came (the list only grows; at most MAX_SAMPLED_PATHS): later jobs leave
    #: their samples out (:meth:`Extractor._note_samples`)
    sampled: dict[str, None] = field(default_factory=dict)
    #: its page items made, per role (the SiteStructureItem states them: ``item_roles``)
    item_roles: Counter[str] = field(default_factory=Counter)

    def pend(self, page: WaitingPage, targets: TocTargets) -> None:
        """The TOC page waits for its ``targets`` to be fetched."""
        page.targets = targets
        self.pending_tocs.append(page)

    def unpend(self, page: WaitingPage) -> None:
        """The TOC page no longer waits for its targets."""
        self.pending_tocs.remove(page)
        page.targets = None


#: the extractor's part of each site's context
WAITS: Part[SiteWaits] = Part("waits")


def _figures(figures: dict[str, Any] | None) -> dict[str, float]:
    """Rounded figures without the undefined ones (NaN, e.g. the article entropy of a page that
    has no article): NaN is not JSON, and feed exports would write it anyway."""
    return {k: round(float(v), 6) for k, v in (figures or {}).items() if math.isfinite(v)}


def _block_dict(block: Any) -> dict[str, Any]:
    return {"kind": block.kind, "path": block.path, **_figures(getattr(block, "figures", {}))}


def items_from_analysis(
    analysis: PageAnalysis,
    url: str,
    model: PageModel,
    snapshot: EntropySnapshot | None,
    extra: dict[str, Any] | None = None,
    fields: AbstractSet[str] = HEAVY_FIELDS,
) -> ArticleItem | TocItem | PageItem:
    """The item for one analysed page: ArticleItem, TocItem, or a PageItem with role "other";
    its text holds no character XML forbids (:func:`~wisdom_scrapy.items.xml_safe`).

    ``extra``: the spider's fields, carried over; ``fields``: which of :data:`HEAVY_FIELDS` to
    fill (the others stay empty, and the article HTML is then never built)."""
    extra = dict(extra or {})
    blocks = [_block_dict(b) for b in analysis.blocks] if "blocks" in fields else []
    entropy = _figures(analysis.figures)
    if snapshot is not None:
        entropy["site_pages"] = float(snapshot.n_pages)
    # A page's analysis reads its tree; what leaves in the item is plain data.
    if analysis.role == "article":
        meta_nodes = [b.node for b in analysis.blocks if b.kind == "metadata"]
        found = article_fields(model, analysis.article_node, metadata=meta_nodes)
        return ArticleItem(
            url=url,
            title=xml_safe(found.title or analysis.title),
            text=xml_safe(analysis.article_text),
            author=xml_safe(found.author),
            published=found.published,
            language=xml_safe(found.language),
            html=xml_safe(analysis.article_html) if "html" in fields else "",
            metadata=xml_safe(list(analysis.metadata)),
            blocks=blocks,
            entropy=entropy,
            single_page=analysis.single_page,
            features=feature_records(analysis.features) if "features" in fields else [],
            extra=extra,
        )
    if analysis.role == "toc":
        return TocItem(
            url=url,
            title=xml_safe(analysis.title),
            links=_toc_links(analysis, model, snapshot),
            page_turns=xml_safe(analysis.page_turn_urls),
            blocks=blocks,
            entropy=entropy,
            single_page=analysis.single_page,
            extra=extra,
        )
    return PageItem(url=url, title=xml_safe(analysis.title), role="other", extra=extra)


def _toc_links(
    analysis: PageAnalysis, model: PageModel, snapshot: EntropySnapshot | None
) -> list[dict[str, Any]]:
    """The page's TOC links (:attr:`PageAnalysis.toc_anchor_links`: a list's entry titles, or
    the TOC blocks' links), each with its LAMIS weight and the index in ``analysis.blocks`` of
    the TOC block it lies in (None for an entry the list analysis found outside them); their
    URLs and texts XML-safe (:func:`~wisdom_scrapy.items.xml_safe_strings`: each distinct
    text once, all in a few searches, where the item's walk searched each string alone)."""
    chosen = analysis.toc_anchor_links
    blocks = _toc_blocks(analysis, model, [link.node for link in chosen])
    # LAMIS α = 1 − E(link): a link's weight is its anchor text's (its terms' mean entropy),
    # so each distinct text is tokenised and weighed once (a TOC repeats its entries' texts)
    texts = dict.fromkeys(link.text for link in chosen)
    if snapshot is None:
        weight = dict.fromkeys(texts, 0.0)
    else:  # all anchors in one look-up
        alpha = link_weights([extract_terms(text) for text in texts], snapshot)
        weight = dict(zip(texts, [round(w, 6) for w in alpha.tolist()], strict=True))
    urls = xml_safe_strings([link.url for link in chosen])
    safe_text = dict(zip(texts, xml_safe_strings(list(texts)), strict=True))
    return [
        {"url": url, "text": safe_text[link.text], "weight": weight[link.text], "block": block}
        for url, link, block in zip(urls, chosen, blocks, strict=True)
    ]


def _toc_blocks(analysis: PageAnalysis, model: PageModel, nodes: list[int]) -> list[int | None]:
    """For each of ``nodes``, the index in ``analysis.blocks`` of the TOC block it lies in, or
    None. Blocks do not overlap: a node belongs to the last block starting at or before it,
    if it lies inside that block's subtree (one search for all nodes)."""
    toc_at = [k for k, b in enumerate(analysis.blocks) if b.kind == "toc"]
    if not toc_at or not nodes:
        return [None] * len(nodes)
    roots = np.asarray([analysis.blocks[k].node for k in toc_at], dtype=np.int64)
    order = np.argsort(roots)
    starts = roots[order]
    at = np.searchsorted(starts, np.asarray(nodes, dtype=np.int64), side="right") - 1
    inside = (at >= 0) & (np.asarray(nodes) < model.subtree_end[starts][np.maximum(at, 0)])
    block_of = np.asarray(toc_at, dtype=np.int64)[order][np.maximum(at, 0)]
    return [b if ok else None for b, ok in zip(block_of.tolist(), inside.tolist(), strict=True)]


class AnalysisListener(Protocol):
    """Who hears of each page's final analysis: given to the :class:`Extractor` when it is
    built (in a crawl, :class:`wisdom_scrapy.signals.AnalysisSignal` sends Scrapy's signal
    :data:`wisdom_scrapy.signals.page_analysed`; the engine knows nothing of it)."""

    def listening(self) -> bool:
        """Whether anyone listens now: only then does an analysis in a worker bring the page's
        redundant blocks (:attr:`RemoteAnalysis.redundant`), which costs the worker time."""
        ...

    def __call__(self, site: str, analysis: PageAnalysis | RemoteAnalysis) -> None:
        """The page's final analysis, before its item is made; never raises."""
        ...


class Offload(Protocol):
    """What the extractor asks of the crawl's worker processes (``WISDOM_WORKERS``): a page's
    job, its analysis awaited. :class:`~wisdom_scrapy.engine.offload.RemoteAnalyzer` is the
    one; it builds on this module's records (:class:`PageSource`, :class:`RemoteAnalysis`,
    :func:`items_from_analysis`), so this module names it by what it does, not by import."""

    def links_of(self, model: PageModel) -> list[str]:
        """The distinct URLs the page links to, kept while it waits (its job carries them)."""
        ...

    def job(self, page: WaitingPage, snapshot: EntropySnapshot, repetition: BlockRepetition,
            *, report: bool, known: Sequence[str] = ()) -> Any:
        """The page's job, or None: the page is analysed here."""
        ...

    async def run(self, job: Any) -> RemoteAnalysis | None:
        """The job's analysis made by a worker; None: no worker could start."""
        ...


class Extractor:
    """Turns a crawl's pages into items, per site, with the waits the module docstring explains.

    ``analyze`` is :func:`wisdom_scrapy.analysis.page_analysis.analyze_page` (a parameter so the
    waits can be tested on their own); ``count`` receives stat names to increment. With ``remote``
    (a :class:`~wisdom_scrapy.engine.offload.RemoteAnalyzer`, ``WISDOM_WORKERS``) the analyses run
    in worker processes, each sent what it reads of the site's state, so the items are the ones
    made here.

    The steps that may analyse a page (:meth:`submit`, :meth:`finish_completed`,
    :meth:`flush`, :meth:`item`) are coroutines that change the waits under one lock. An
    analysis begins under it, with the site's state at that moment (:meth:`_start`), and is
    awaited without it, so other steps go on and several pages are analysed at once; the page
    is marked ``analysing`` meanwhile (neither held nor pending: no other step can let it go)
    and its result is applied under the lock again. The waits decide with what they know when
    the analysis is back (a TOC page's fetched targets). Without ``remote`` nothing waits
    (:func:`run_sync` runs a step outside an event loop).

    A site's block repetition starts from the store's (:func:`~wisdom_scrapy.mining.repetition.
    stored_repetition`: a resumed crawl, a worker of a distributed one, a warm store) and takes
    in the pages other processes store as the site grows (when the entropy snapshot is re-read).
    Each site's part (:class:`SiteWaits`) lives in its context in ``sites`` (the crawl's
    :class:`~wisdom_scrapy.engine.sites.Sites`, whose snapshots the analysis uses; a new one by
    default).
    """

    def __init__(
        self,
        store: TermStore,
        params: ExtractionParams,
        analyze: Callable[..., PageAnalysis],
        count: Callable[[str], None] = lambda name: None,
        sites: Sites | None = None,
        remote: Offload | None = None,
        terms: TermIndex | None = None,
        listener: AnalysisListener | None = None,
    ) -> None:
        self.store = store
        self.sites = sites if sites is not None else Sites(store, count=count)
        self.params = params
        self.analyze = analyze
        self.count = count
        self.remote = remote
        #: the fetched pages' terms (given: the one ``remote`` was built with, so both sides
        #: of a page's analysis read the same term ids)
        self.terms = terms if terms is not None else TermIndex()
        #: told of each page's final analysis, before its item is made (the site report counts
        #: the page's redundant blocks there)
        self.listener = listener
        #: every page held, pending or being analysed, all sites, oldest first (the records
        #: themselves, in the order they came: a dict as an ordered set); a page leaves it
        #: when it leaves the waits (:meth:`_ready`)
        self._waiting: dict[WaitingPage, None] = {}
        #: pending TOC pages whose targets a fetched page completed, in that order
        #: (:meth:`finish_completed`; each once: :attr:`WaitingPage.completed`)
        self._completed: deque[WaitingPage] = deque()
        #: the pending TOC pages' unfetched targets, by URL (pruned as pages are fetched)
        self._targets = AwaitedTargets()
        #: with worker processes, the blocks of the pages fetched lately (the repetition keeps
        #: a digest of them), taken by their analysis when they come as page items: URL ->
        #: (the id of the page's model, its blocks). Keyed by URL: a page is fetched before
        #: it is submitted, so before its record exists (the crawl's record of a page in
        #: flight lives in the crawl layer, which the engine does not know)
        self._fetched_blocks: OrderedDict[str, tuple[int, NDArray[np.uint64]]] = OrderedDict()
        self._lock = asyncio.Lock()

    # -- pages arriving ---------------------------------------------------------------------

    def page_fetched(
        self, site: str, url: str, model: PageModel, blocks: NDArray[np.uint64] | None = None
    ) -> None:
        """Record a fetched page's terms and blocks (its :func:`~wisdom_scrapy.mining.
        repetition.page_blocks`, computed when not given), and which pending TOC pages it
        completes: :meth:`finish_completed` analyses them."""
        self.terms.add(url, model.vocab, owner=model)
        self._targets.fetched(url)  # with the term index, whatever fails below
        state = self._state(site, fetched=url)
        prints = page_blocks(model) if blocks is None else blocks
        self._count_blocks(state, url, prints)
        if self.remote is not None:
            self._fetched_blocks[url] = (id(model), prints)
            while len(self._fetched_blocks) > _FETCHED_BLOCKS:
                self._fetched_blocks.popitem(last=False)
        for page in state.pending_tocs:
            assert page.targets is not None
            if (not page.completed and url in page.targets.all
                    and self._enough_fetched(page.targets)):
                page.completed = True
                self._completed.append(page)

    def _forget_completed(self) -> None:
        """None of the pending TOC pages is queued as completed any more."""
        for page in self._completed:
            page.completed = False
        self._completed.clear()

    async def finish_completed(self) -> list[WaitingPage]:
        """The pending TOC pages fetched pages completed (:meth:`page_fetched`), analysed again
        with their targets; a store failure leaves the rest pending."""
        if not self._completed:  # as a rule: no wait for the steps under way
            return []
        async with self._lock:
            started = []
            while self._completed:
                page = self._completed.popleft()
                page.completed = False
                if page.targets is None:  # it left meanwhile
                    continue
                if not self._begin(page):  # it stays pending, and so do the others
                    self._forget_completed()
                    break
                started.append(page)
                self._unpend(self._waits(page.site), page)
        if not started:
            return []
        results = await self._awaited(started)
        async with self._lock:
            for page, result in zip(started, results, strict=True):
                self._settled(page, result)
                if page.analysis is not None:
                    self.count("wisdom/toc/completed")
            return started

    async def submit(
        self,
        site: str,
        url: str,
        model: PageModel,
        title: str = "",
        extra: dict[str, Any] | None = None,
        *,
        now: bool = False,
        source: Callable[[], PageModel] | None = None,
    ) -> list[Any]:
        """Analyse a page of ``site`` now, or hold it; return the pages ready now
        (:class:`WaitingPage`).

        ``title`` and ``extra`` come from the spider's PageItem: its title (used when the page
        has none) and its own fields, carried to the item.

        Never raises :class:`StoreError`: when the store fails, the page is held (counted under
        ``wisdom/analysis/store_errors``) and analysed with a later page of its site or at idle.
        With ``now`` (tools that show one page's item), the page's item itself at once, analysed
        in this process with the entropies the store has (single-page mode when it knows too
        few pages of the site), nothing held and no wait for TOC targets; a store failure raises.
        ``source`` rebuilds ``model``: while the page waits only it is kept (:class:`WaitingPage`).
        """
        async with self._lock:
            state = self._state(site)
            state.titles.add(model.title)
            if url not in state.repetition:  # page_fetched counted it, as a rule
                state.repetition.add(url, model)
            page = WaitingPage(site, url, model, title, dict(extra or {}), source)
            if now:
                self._start(page, here=True)
                assert page.analysis is not None
                return [self._item(page)]
            if self.remote is not None:
                page.links = self.remote.links_of(model)
                fed, prints = self._fetched_blocks.pop(url, (None, None))
                # not fed lately, or fed again since (another version of the page)
                page.blocks = prints if fed == id(model) else page_blocks(model)
            state.held.append(page)
            self._waiting[page] = None
            started = self._start_held(state) if self._hold_over(site, state, page) else []
        results = await self._awaited(started)  # outside the lock: other steps go on
        async with self._lock:
            ready: list[Any] = []
            for begun, result in zip(started, results, strict=True):
                ready += await self._decide(begun, result)
            if page in self._waiting and not page.analysing:  # one that left keeps its model
                page.compact()
            return ready + self._release_oldest()

    def _hold_over(self, site: str, state: SiteWaits, page: WaitingPage) -> bool:
        """Whether the site's held pages can be analysed now: the store knows ``warmup_pages``
        of its pages (with the crawl's settings, no later than the site is warm:
        :meth:`WisdomParams.is_warm <wisdom_scrapy.mining.wisdom.WisdomParams.is_warm>`) or,
        ``until_template``, its template shows."""
        context = self.sites.get(site)
        if context.cold_start_over:
            return True
        if state.repetition_let_go:  # not read back (the store failing): a later page judges
            return False
        try:
            n = self.store.page_count(site)
        except StoreError as exc:
            self._store_failed(page.url, exc)
            return False
        shows_template = self.params.until_template and bool(
            repeated_blocks(page.page(), state.repetition).any()
        )
        if n < self.params.warmup_pages and not shows_template:
            self.count("wisdom/warmup/held")
            return False
        context.cold_start_over = True
        logger.info("wisdom_scrapy: site %s warm (%d pages in the store%s)", site, n,
                    ", its template shows" if shows_template else "")  # fmt: skip
        return True

    def _release_oldest(self) -> list[WaitingPage]:
        """Past ``max_held_pages`` waiting pages, the oldest leave, to be analysed with what
        is known when their items are made (module docstring); a page being analysed leaves
        when its analysis is back."""
        waiting = [page for page in self._waiting if not page.analysing]
        released = waiting[: max(0, len(waiting) - self.params.max_held_pages)]
        for page in released:
            state = self._waits(page.site)
            if page.targets is not None:
                self._unpend(state, page)
            else:  # held for the cold start
                state.held = [h for h in state.held if h is not page]
            self._ready(page)
            self.count("wisdom/held/released_early")
        return released

    async def flush(self) -> list[WaitingPage]:
        """At idle/close: everything still held or pending, each to be analysed with what is
        known when its item is made (:meth:`item`)."""
        async with self._lock:
            ready: list[WaitingPage] = []
            for state in self._all_waits():
                ready += state.held
                state.held = []
                for page in list(state.pending_tocs):  # each as any page leaves pending
                    self._unpend(state, page)
                    ready.append(page)
            for page in ready:
                self._ready(page)
            self._forget_completed()
            return ready

    def _start_held(self, state: SiteWaits) -> list[WaitingPage]:
        """Begin the analyses of the held pages of a warm site, in order, up to the first store
        failure (the rest stay held); they leave the held list."""
        started: list[WaitingPage] = []
        while state.held and self._begin(state.held[0]):
            started.append(state.held.pop(0))
        return started

    def _begin(self, page: WaitingPage) -> bool:
        """:meth:`_start`; False when the store failed (counted, logged: the page waits on).
        An analysis that raised is the page's alone (it leaves unanalysed: :meth:`_settled`)."""
        try:
            self._start(page)
        except StoreError as exc:
            self._store_failed(page.url, exc)
            page.compact()
            return False
        except Exception as exc:
            page.begin(None, error=exc)
        return True

    def _store_failed(self, url: str, exc: StoreError) -> None:
        self.count("wisdom/analysis/store_errors")
        logger.warning("wisdom_scrapy: analysis of %s postponed, the store failed: %s", url, exc)

    def item_roles(self, site: str) -> dict[str, int]:
        """The page items made for ``site`` so far, per role (none for a site never seen)."""
        context = self.sites.find(site)
        state = WAITS.of(context) if context is not None else None
        return {} if state is None else dict(state.item_roles)

    def waiting_urls(self) -> dict[str, list[str]]:
        """URLs of the pages held, pending or being analysed, per site."""
        urls: dict[str, list[str]] = {}
        for page in self._waiting:
            urls.setdefault(page.site, []).append(page.url)
        return urls

    def waiting(self) -> int:
        """Pages held, pending or being analysed (what :meth:`flush` would emit, and those on
        their way)."""
        return len(self._waiting)

    # -- site state ----------------------------------------------------------------------------

    def _state(self, site: str, *, fetched: str | None = None) -> SiteWaits:
        """The site's state; a new one starts with the block repetition the store holds, and
        a left site's (:meth:`let_go`), or one counted again (:meth:`_count_blocks`), is read
        back. Until that read succeeds (the store failing), the site's new pages are counted
        alone, analyses wait (:meth:`_start`), and the read adds the others."""
        context = self.sites.get(site)
        state = WAITS.of(context)
        if state is None:
            state = WAITS.put(context, SiteWaits())
            self._merge_stored(site, state, fetched=fetched)
        elif state.repetition_let_go and self.sites.may_read(site):
            if self._merge_stored(site, state):
                state.repetition_let_go = False
                self.count("wisdom/repetition/read_back")
                self.sites.read_back(site)
            else:
                self.sites.read_failed(site)
        return state

    def page_storing(self, site: str, url: str, prints: NDArray[np.uint64],
                     unstored: NDArray[np.uint64] | None = None) -> None:
        """A fetched page is about to be stored, with its blocks ``prints``: should it come
        back with other blocks than its site's repetition counted for it, the earlier ones are
        read (one record) while the store still holds them, so that :meth:`page_fetched` takes
        them back (:meth:`BlockRepetition.keep_blocks`). ``unstored``: the blocks of its
        earlier version the store failed to take (waiting for a retry, which this one
        replaces), tried first."""
        state = WAITS.of(self.sites.get(site))
        if state is None or not state.repetition.takes_back(url, prints):
            return
        if unstored is not None and state.repetition.keep_blocks(url, unstored):
            return
        try:
            blob = self.store.record(site, BLOCKS_KIND, url)
            if blob is not None:
                state.repetition.keep_blocks(url, decode_blocks(blob))
        except StoreError as exc:  # the site is counted again (page_fetched)
            self.count("wisdom/store_errors")
            logger.warning("wisdom_scrapy: earlier blocks of %s not read: %s", url, exc)
        except ValueError:  # damaged: likewise
            pass

    def page_stored(self, site: str, url: str) -> None:
        """The store took a page: the blocks its site's repetition kept for it, if any, can be
        read from the store should it come back changed (:meth:`page_storing`)."""
        state = WAITS.of(self.sites.get(site))
        if state is not None:
            state.repetition.forget_blocks(url)

    def _count_blocks(self, state: SiteWaits, url: str, prints: NDArray[np.uint64]) -> None:
        """Count a fetched page's blocks in its site's repetition. A page that comes back with
        other blocks than its earlier version, which the repetition did not keep nor could
        read (:meth:`page_storing`: the store failing, or holding another version than the
        counted one, another process'), has the site's repetition counted again: the pages it
        keeps, this one, and the store's others, read back as for a left site
        (:meth:`_state`). This page's blocks are kept until the store takes them
        (:meth:`page_stored`)."""
        repetition = state.repetition
        again = repetition.takes_back(url, prints)
        if again:
            state.repetition = repetition.only_kept()
            state.repetition_let_go = True
            self.count("wisdom/repetition/counted_again")
        state.repetition.add_blocks(url, prints, keep=again)

    def _waits(self, site: str) -> SiteWaits:
        """The site's state, its repetition as it is (let go or not): for the steps that only
        move its pages between its lists, which need no read-back."""
        return WAITS.of(self.sites.get(site)) or self._state(site)

    def let_go(self, context: SiteContext) -> bool:
        """Let go of what a left site holds here that the store can give back exactly: its
        block repetition and its pages' terms (:meth:`Sites.fed
        <wisdom_scrapy.engine.sites.Sites.fed>` offers it); whether any went."""
        return any([self._let_repetition_go(context), self._let_terms_go(context)])

    def _let_repetition_go(self, context: SiteContext) -> bool:
        """Let a left site's block repetition go when the store holds exactly the pages it
        counts, so that reading it back (:meth:`_state`) gives the same counts; whether it went. Its
        pages waiting here need not stay: each analysis reads the state when it starts."""
        state, site = WAITS.of(context), context.site
        if state is None or state.repetition_let_go:
            return False
        try:
            stored = self.store.records(site, BLOCKS_KIND)
        except StoreError as exc:  # kept: let go when the site is left next
            self.count("wisdom/store_errors")
            logger.warning("wisdom_scrapy: block records of %s not read: %s", site, exc)
            return False
        if not state.repetition.counts_exactly(stored):
            return False
        state.repetition = BlockRepetition()
        state.repetition_let_go = True
        self.count("wisdom/repetition/let_go")
        return True

    def _let_terms_go(self, context: SiteContext) -> bool:
        """Let go of a left site's pages' terms (:meth:`TermIndex.let_go`); whether any went.
        A store failure keeps them (counted, logged: tried again when the site is left next)."""
        try:
            went = self.terms.let_go(context.site, self.store)
        except StoreError as exc:
            self.count("wisdom/store_errors")
            logger.warning("wisdom_scrapy: page terms of %s not read: %s", context.site, exc)
            return False
        if went:
            self.count("wisdom/terms/let_go")
        return bool(went)

    def _all_waits(self) -> list[SiteWaits]:
        return [waits for c in self.sites if (waits := WAITS.of(c)) is not None]

    def _merge_stored(self, site: str, state: SiteWaits, *, fetched: str | None = None) -> bool:
        """Add to the site's repetition the stored pages it lacks (other processes', earlier
        crawls'); a store failure leaves it as it is (counted, logged: False). ``fetched``: the
        page being fetched, already in the store (written behind): not one "from the store"."""
        repetition = state.repetition
        skipped = repetition.skipped
        try:
            added = merge_stored(repetition, self.store, site)
            n = self.store.page_count(site)
        except StoreError as exc:
            self.count("wisdom/store_errors")
            logger.warning("wisdom_scrapy: block records of %s not read: %s", site, exc)
            return False
        if fetched is not None and fetched in repetition:
            added -= 1
        if added:  # a left site's read-back is counted, not logged (a broad crawl has many)
            logger.log(logging.DEBUG if state.repetition_let_go else logging.INFO,
                       "wisdom_scrapy: block repetition of %s: %d pages from the store", site,
                       added)  # fmt: skip
        for _ in range(repetition.skipped - skipped):  # logged by merge_stored
            self.count("wisdom/repetition/bad_records")
        state.unmerged = max(0, n - state.repetition.n_pages)
        return True

    # -- analysis ------------------------------------------------------------------------------

    def _snapshot(self, site: str, state: SiteWaits) -> EntropySnapshot:
        context = self.sites.get(site)
        snap = context.snapshot()
        if context.reads != state.snapshot_read:  # re-read: the store may hold other
            if snap.n_pages - state.repetition.n_pages > state.unmerged:  # processes' pages
                self._merge_stored(site, state)
            state.snapshot_read = context.reads
        return snap

    def _start(self, page: WaitingPage, *, here: bool = False) -> None:
        """Begin the page's analysis with the site's state now (the caller holds the lock):
        a job for a worker process when there are some (unless ``here``; :meth:`_results`
        awaits it, without the lock), else the analysis itself. StoreError (the page as it
        was) when the site's snapshot or, the crawl having left it, its repetition cannot be
        read. The state is looked up here, never kept across an await by a caller: a left
        site's repetition is let go and read back (:meth:`let_go`)."""
        state = self._analysable(page.site)
        snapshot = self._snapshot(page.site, state)
        if self.remote is not None and not here:
            job = self.remote.job(page, snapshot, state.repetition,
                                  report=self.listener is not None and self.listener.listening(),
                                  known=list(state.sampled))  # fmt: skip
            if job is not None:
                page.begin(snapshot, job=job)
                return
        page.begin(snapshot, self._analyse_here(page, snapshot))

    @staticmethod
    def _note_samples(state: SiteWaits, summary: list[tuple[str, int, str, str]]) -> None:
        """The block paths of a worker's redundant summary have their sample out: a listener
        keeps a path's first sample (the report does), so later jobs of the site leave the
        samples of these paths out (finding a block's element and text is most of the summary's
        work, and a site repeats its blocks on every page). Bounded by MAX_SAMPLED_PATHS: past
        it, the samples of new paths come every time (the report keeps as many paths)."""
        sampled = state.sampled
        for path, *_ in summary:
            if len(sampled) >= MAX_SAMPLED_PATHS:
                return
            sampled.setdefault(path)

    def _analysable(self, site: str) -> SiteWaits:
        """The site's state with its repetition (:meth:`_state`); StoreError when the crawl
        left the site and the read-back failed (counted, logged): the analysis waits."""
        state = self._state(site)
        if state.repetition_let_go:
            raise StoreError(f"the block repetition of {site} could not be read back")
        return state

    def _analyse_here(self, page: WaitingPage, snapshot: EntropySnapshot) -> PageAnalysis:
        state = self._analysable(page.site)
        return self.analyze(
            None,
            page.url,
            self.store,
            site=page.site,
            model=page.page(),
            snapshot=snapshot,
            target_terms=self.terms.get,
            repetition=state.repetition,
        )

    async def _results(self, started: list[WaitingPage]) -> list[Any]:
        """The analyses begun (:meth:`_start`), in order, the workers' all at once; a failed
        one is its exception. Awaited without the lock."""
        if all(page.job is None for page in started):  # made here: nothing to wait for
            return [page.error or page.analysis for page in started]
        return await asyncio.gather(*map(self._result, started), return_exceptions=True)

    async def _awaited(self, started: list[WaitingPage]) -> list[Any]:
        """:meth:`_results`, for pages out of the waits; should the wait itself fail (the step
        cancelled), they go back to the head of their sites' held lists, never lost in
        between."""
        try:
            return await self._results(started)
        except BaseException:
            for page in reversed(started):
                page.settle()
                self._waits(page.site).held.insert(0, page)
            raise

    async def _result(self, page: WaitingPage) -> PageAnalysis | RemoteAnalysis:
        if page.error is not None:
            raise page.error
        if page.job is None:
            assert page.analysis is not None
            return page.analysis
        assert self.remote is not None and page.snapshot is not None
        remote = await self.remote.run(page.job)
        if remote is None:  # no worker can start: analysed here, with the site's state now
            return self._analyse_here(page, page.snapshot)
        page.compact()
        return remote

    def _settled(self, page: WaitingPage, result: Any) -> None:
        """The page of an analysis that is back leaves the waits: with it, or without it
        when it failed (counted, logged; its item tries again)."""
        if isinstance(result, StoreError):  # analysed here after all, and the store failed
            self._store_failed(page.url, result)
            result = None
        elif isinstance(result, BaseException):
            self.count("wisdom/errors/analysis")
            logger.error("wisdom_scrapy: analysis of %s failed (its item tries again): %r",
                         page.url, result)  # fmt: skip
            result = None
        self._ready(page, result)

    def _targets_ready(self, targets: TocTargets) -> bool:
        """Whether a share ``toc_targets_ratio`` of the targets is fetched (counted against
        the term index, which holds every page fetched: the unfetched ones are pruned)."""
        targets.unfetched = {t for t in targets.unfetched if t not in self.terms}
        return self._enough_fetched(targets)

    def _enough_fetched(self, targets: TocTargets) -> bool:
        """:meth:`_targets_ready` of a pending page's targets, whose ``unfetched`` the fetched
        pages keep pruned (:class:`AwaitedTargets`)."""
        fetched = len(targets.all) - len(targets.unfetched)
        return fetched >= self.params.toc_targets_ratio * len(targets.all)

    def _pend(self, state: SiteWaits, page: WaitingPage, targets: TocTargets) -> None:
        """The TOC page waits for its targets' fetch (:meth:`SiteWaits.pend`)."""
        state.pend(page, targets)
        self._targets.wait(targets)

    def _unpend(self, state: SiteWaits, page: WaitingPage) -> None:
        """The TOC page waits no more (:meth:`SiteWaits.unpend`)."""
        assert page.targets is not None
        self._targets.leave(page.targets)
        state.unpend(page)

    async def _decide(self, page: WaitingPage, result: Any) -> list[WaitingPage]:
        """The page whose analysis is back (:meth:`submit`) leaves, or waits when it is a TOC
        page whose targets are not fetched yet (the caller holds the lock)."""
        state = self._waits(page.site)
        targets = TocTargets.of(())
        if not isinstance(result, BaseException) and result.role == "toc":
            targets = TocTargets.of({u for u, _ in result.toc_links})  # distinct pages
        if not targets.all or self._targets_ready(targets):
            self._settled(page, result)
            return [page]
        page.settle()
        self._pend(state, page, targets)
        page.compact()
        self.count("wisdom/toc/pending")
        ready = []
        while len(state.pending_tocs) > self.params.max_pending_tocs:
            oldest = state.pending_tocs[0]
            if not await self._finish(oldest):  # the store failed: the oldest stays pending
                break
            self._unpend(state, oldest)
            ready.append(oldest)
        return ready

    async def _finish(self, page: WaitingPage) -> bool:
        """Analyse a pending TOC page again, now with its fetched targets, and let it go
        (False when the store fails: the caller keeps it pending). The caller holds the lock:
        for the rare TOC page past ``max_pending_tocs``."""
        if not self._begin(page):
            return False
        (result,) = await self._results([page])
        self._settled(page, result)
        if page.analysis is not None:
            self.count("wisdom/toc/completed")
        return True

    def _ready(
        self, page: WaitingPage, analysis: PageAnalysis | RemoteAnalysis | None = None
    ) -> None:
        """The page leaves the waits (no longer counted by :meth:`waiting`), with its analysis
        and the snapshot it began with, or none (compact until its item is made)."""
        self._waiting.pop(page, None)
        page.settle(analysis)
        if analysis is None:
            page.compact()

    async def item(
        self, page: WaitingPage, title: str | None = None, extra: dict[str, Any] | None = None
    ) -> ArticleItem | TocItem | PageItem:
        """The item of a page that left the waits: ArticleItem, TocItem or a PageItem with
        role "other", analysed now when it left without an analysis.

        ``title`` and ``extra``: the page item's title and own fields as they are now (a
        pipeline before the analysis may have changed them); the ones the spider yielded when
        not given. A page the store fails for leaves unanalysed (its PageItem with role ""),
        counted under ``wisdom/analysis/unanalysed``: it is never dropped; an analysis that
        fails raises."""
        if page.analysis is None:
            try:
                async with self._lock:  # the analysis begins with the site's state now
                    self._start(page)
                try:  # a worker that cannot start: analysed here, which may read the store
                    analysis = await self._result(page)
                except BaseException:
                    page.settle()
                    raise
            except StoreError as exc:
                self._store_failed(page.url, exc)
                self.count("wisdom/analysis/unanalysed")
                return PageItem(url=page.url, title=page.title if title is None else title,
                                extra=page.extra if extra is None else extra)  # fmt: skip
            page.settle(analysis)
        return self._item(page, title, extra)

    def _item(
        self, page: WaitingPage, title: str | None = None, extra: dict[str, Any] | None = None
    ) -> ArticleItem | TocItem | PageItem:
        site, analysis = page.site, page.analysis
        assert analysis is not None
        title = page.title if title is None else title
        extra = page.extra if extra is None else extra
        if self.listener is not None:
            self.listener(site, analysis)
        if isinstance(analysis, RemoteAnalysis) and analysis.redundant:
            self._note_samples(self._waits(site), analysis.redundant)
        if isinstance(analysis, RemoteAnalysis):
            item = analysis.finished_item(title, extra)
        else:
            if not analysis.title and title:  # the spider's title when the page has none
                analysis.title = title
            model = analysis.model if analysis.model is not None else page.page()  # no re-parse
            item = items_from_analysis(analysis, page.url, model, page.snapshot, extra,
                                       self.params.item_fields)  # fmt: skip
        if isinstance(item, ArticleItem):  # without the affixes the site's titles repeat
            item.title = self._waits(site).titles.without_affixes(item.title)
        self.count(f"wisdom/items/{item.role}")
        self._waits(site).item_roles[item.role] += 1
        return item
