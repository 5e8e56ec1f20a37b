"""A site's informative structure while it is crawled: template links, LAMIS link analysis, page
roles and the TOC → article structure (TKDE 2004 §1, §3.1, §3.3; WISDOM §1).

Per site, :class:`SiteRecorder` keeps what the crawl taught about the site's pages, and
:func:`analyse_site` turns it into hub / authority scores, page roles and the informative
structure. :class:`StructureTracker` runs the analysis as the site grows and at spider idle;
:class:`~wisdom_scrapy.extension.WisdomExtension` feeds it and
:class:`~wisdom_scrapy.focus.WisdomFocusMiddleware` uses it to focus the crawl.

Template (redundant) links — the site's own statistics, no tag or class names
    A link's *block path* (its slot) is the tag path of its ``<a>`` from the root without sibling
    positions (``html/body/div/div/ul/li/a``): the place a template puts it, the same on every
    page made from that template, whatever the number of items around it. For every slot the
    recorder counts the pages that have it (n_S) and, per anchor text t and per target URL v,
    the pages on which the slot holds a link with that text (n_S,t) or to that target (n_S,v).
    A link occurrence is a *template* link when its slot is known (n_S ≥ ``min_pages``) and the
    template rather than the page's content decides it: ``max(n_S,t, n_S,v) ≥ n_S / 2``, i.e.
    on at least half of the pages with that slot, the slot holds the same link or the same
    anchor text. Menus, footers, sidebars repeated on every page (same target), per-page
    utility links ("Print", "Share", "next", page numbers: same text, varying target) are
    template links; story lists, tables of contents, related-article lists and cross
    references (text and target change with the content) are not. A slot seen on fewer than
    ``min_pages`` pages is unknown, and its links count as informative (cold start). Taking
    half of the slot's pages as the line is a majority vote, the same for every site.

Page turns: pagination is navigation through content, not template
    A list's "next" / "Older posts" / page-number links are template links by their text, yet
    they are the only path to the list's later pages and to old posts reachable from nothing
    else. The focusing middleware therefore follows a template occurrence that is a *page
    turn* (:meth:`SiteRecorder.page_turns`): its target is not the template's (the slot holds
    that target on fewer than half of its pages: the target changes from page to page, unlike a
    menu's), and its URL is another page of the same list
    (:func:`~wisdom_scrapy.page.urls.is_page_turn`: it differs from the page's URL only in
    numbers, ``/blog/page/5/`` → ``/blog/page/6``, ``/page5/`` → ``/page12/``, ``?p=3`` →
    ``?p=4``, or extends it with one numbered step, ``/blog/`` → ``/blog/page/2/``,
    ``/tag/x/`` → ``/tag/x/page-2.html``), or the page says so itself: the
    ``<a>`` has ``rel="next"`` or ``rel="prev"`` (HTML's link types for the next and previous
    page of a series, whatever its URLs look like: cursors, dates, the next post). Per-page
    utility links whose target is another kind of page (print, share, login) stay template.

The informative link graph and HITS (TKDE §3.1, §3.3)
    Nodes are the site's fetched pages: those this process recorded, plus pages other processes
    (or an earlier crawl) left in the store's link graph, :meth:`TermStore.links`, whose links
    enter with their anchor-text weights but without template information. Edges are the
    non-template links between fetched pages, weighted with the LAMIS link weight
    α = 1 − E(anchor text) (:mod:`wisdom_scrapy.mining.lamis`); removing template links is the
    graph reduction of §3.1 with the redundancy judged from the site's block statistics instead
    of one entropy threshold. Entropy-weighted HITS gives every page a hub score h and an
    authority score a; items carry them relative to the site mean (h̃ = h / mean h, same for a).
    *Plain* HITS, the paper's baseline, is the same computation with every entropy set to 0
    (every link weight 1, every term weight 1).

Page roles: hub → TOC, authority → article, other
    On a documentation or news site, a page whose prose is full of cross-references is as much a
    hub as a table of contents is (it links to many authorities), so HITS scores alone do not
    separate TOC pages from link-rich articles (measured in ``benchmarks/page_roles.py``). The
    role therefore weighs the page's two kinds of information in the same unit, the LAMIS
    feature weight W(T) = 1 − E(T) (TKDE §3.3):

    * link mass L(u) = Σ over u's informative links of (Σ of the anchor's term weights) ·
      min(ã(target), 1): what the page's links carry, each counted in full when it points to at
      least an average authority of the site and in proportion below (links to print pages,
      share pages or login forms have no authority and count for nothing);
    * content mass C(u) = Σ over the terms outside anchors of tf · W(T);
    * copied share κ(u): the part of that text copied from the pages u's informative links point
      to — the abstracts and teasers of a news TOC (WISDOM §1, Fig. 2: a TOC block "containing
      the abstracts of news and anchors"). Measured with sampled 4-term shingles (1 in 8, the
      same ones on every page, so containment is estimated exactly on the sample), each shingle
      weighted like a feature spread evenly over the df pages that have it, 1 − ln df / ln N
      (TKDE §3.3, Relationship 1), so the template's own text (on every page) counts for
      nothing. Each target's contribution is capped at an equal share of the page (1/k for k
      targets copied from), and a page copying from fewer than three targets gets κ = 0: a
      list of abstracts copies a little from each of many pages, a near-duplicate of one or
      two pages (two versions of one document linking each other) is not a list.

    A page is a **TOC** when it links informatively to at least two pages and
    L(u) + κ(u)·C(u) ≥ (1 − κ(u))·C(u) (what its links and their abstracts carry is at least
    what its own text carries), an **article** when it is not a TOC, has text of its own and
    some informative link points to it (ã > 0), and **other** otherwise (pages reached only
    through template links — login, print, share pages — or without informative content). This
    is the page-level counterpart of WISDOM's type constraints (TOC blocks: anchors; article
    blocks: context; WISDOM §3.3), with entropy-weighted lengths and no tuned threshold. Pages
    known only from the store (no record here) get scores but no role.

Scores during the crawl
    The analysis is redone when a site's fetched pages have grown by ``growth`` since the last
    one (from the cold-start size on), so its total cost is O(N log N) link reads, and once
    more at spider idle. Items leaving before a site's first analysis carry no scores; later
    ones carry the latest. For a page that has no score yet (just fetched), the focusing
    middleware estimates its hub score with one HITS step: Σ α · ã(target) over its informative
    links, with the latest authorities (1, the site mean, for targets not scored yet), over the
    mean of the same sum in the latest analysis.

Persistence (restarts, several processes)
    Every recorded page is also written to the store as a keyed record (kind
    :data:`RECORD_KIND`, key = URL; URLs and terms as strings, block hashes as they are: every
    hash here is :func:`stable_hash`, the same in every process). A tracker starts a site with
    the records already in the store, and reloads the ones it lacks before each analysis when
    the store knows more pages than it does, so a restarted crawl knows the template before its
    first page and workers sharing a store (Redis) analyse every worker's pages. About 6 KB
    per page (zlib) on the Python documentation.

Memory
    A record (about 40 bytes per link occurrence, 8 per distinct term outside anchors and 1
    per term of its text: 4.6 KB per page of a generated news site) is needed only by the
    page's own focusing, when it is observed, and by the analyses, a few times in a crawl
    (every ``growth``): once the store holds it, the tracker lets it go
    (:meth:`SiteRecorder.release`), and each analysis reads the site's records back from the
    store in one read and decodes them (:meth:`StructureTracker.records`; decoded records equal
    the observed ones, so the analysis is the same). Only records the store refused stay in
    memory. What stays per site grows with what the site shows, not with its pages' records:
    one count per distinct (slot, text) and (slot, target) pair, 12 bytes each
    (:class:`KeyCounts`), the site's URL table, and per page its URL and scores. The sampled
    shingles' counts, which only the analyses read, are counted by each analysis from the
    records it reads anyway (:attr:`SiteRecorder.shingle_pages`), not kept.
    The records' terms are ids into the crawl's vocabulary, one for all sites; it and the URL
    tables are each a :class:`~wisdom_scrapy.store.strings.StringTable` (about 30 bytes a string
    over its text). The counts of a site the crawl has left are let go and counted again from
    the stored records when it comes back (:meth:`StructureTracker.let_go`,
    :class:`~wisdom_scrapy.engine.sites.Sites`): a broad crawl holds those of the sites it is
    crawling. So with the decoded records kept between analyses (:class:`DecodedRecords`): a
    bounded amount for the crawl, of the sites it has not left.
"""

from __future__ import annotations

import logging
import struct
import sys
import time
import weakref
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from wisdom_scrapy.engine.sites import Part, SiteContext, Sites
from wisdom_scrapy.items import SiteStructureItem
from wisdom_scrapy.mining.lamis import HitsResult, LinkGraph, hits
from wisdom_scrapy.mining.wisdom import DEFAULT_PARAMS, WisdomParams
from wisdom_scrapy.page.terms import extract_terms, stable_hash
from wisdom_scrapy.page.urls import is_page_turn
from wisdom_scrapy.store import StoreError, TermStore
from wisdom_scrapy.store.counts import KeyCounts
from wisdom_scrapy.store.strings import StringTable, TableSubset, utf8_sizes

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = [
    "KeyCounts",
    "PageLinks",
    "SiteAnalysis",
    "SiteRecorder",
    "StructureTracker",
    "analyse_site",
    "anchor_weights",
    "slot_hashes",
]

logger = logging.getLogger(__name__)

_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constant: path hash = parent * MIX + tag
_MIX_INT, _U64 = int(_MIX), (1 << 64) - 1  # its powers, wrapped as numpy wraps
_SHINGLE = 4  # words per shingle
_SAMPLE_BITS = np.uint64(61)  # keep shingles whose mixed hash has its top 3 bits 0: 1 in 8
RECORD_KIND = "structure"  # TermStore.put_records kind of the recorders' page records
_RECORD_VERSION = 1
_RECORD_HEAD = struct.Struct("<B12I")  # version, byte sizes of the 12 sections of encode()


def shingles(term_ids: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
    """Sampled hashes of the 4-term shingles of a term sequence (sorted, unique).

    Sampling keeps a shingle when its (mixed) hash falls in a fixed 1/8 of the hash space, so two
    pages keep the *same* shingles of a shared passage: the share of a page's sampled shingles
    found in other pages estimates the share of its text copied from them (containment), at
    1/8 of the memory.
    """
    ids = np.asarray(term_ids, dtype=np.uint64) + np.uint64(1)
    n = len(ids) - _SHINGLE + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    h = np.zeros(n, dtype=np.uint64)
    for k in range(_SHINGLE):
        h = h * _MIX + ids[k : k + n]
    h ^= h >> np.uint64(29)
    h *= _MIX
    h ^= h >> np.uint64(32)
    # sorted as int64 too, as :func:`_copied_amounts` needs: the kept hashes are below 2**61
    return np.unique(h[(h >> _SAMPLE_BITS) == 0]).view(np.int64)


def _pair_keys(
    slots: NDArray[np.int64], hashes: Iterable[int], n: int, salt: int
) -> NDArray[np.int64]:
    """Keys of (slot, anchor text) or (slot, target) pairs from the parts' stable hashes
    (``salt`` keeps the two kinds apart), mixed like :func:`shingles`."""
    h = np.fromiter(hashes, np.int64, n).view(np.uint64)
    k = (slots.view(np.uint64) * _MIX + h) * _MIX + np.uint64(salt)
    k ^= k >> np.uint64(29)
    k *= _MIX
    k ^= k >> np.uint64(32)
    return k.view(np.int64)


def _pack_strings(strings: list[str]) -> tuple[bytes, bytes]:
    """(UTF-8 byte lengths as uint32, concatenated UTF-8): exact for any string. Encoded
    joined, in one call; the lengths are the strings' own when they are all ASCII (the two
    sums agree), else each one's encoded (:func:`~wisdom_scrapy.store.strings.utf8_sizes`)."""
    joined = "".join(strings).encode()
    return utf8_sizes(strings, len(joined)).astype("<u4").tobytes(), joined


def _unpack_strings(lengths: bytes, blob: bytes) -> list[str]:
    ends = np.cumsum(np.frombuffer(lengths, "<u4")).tolist()
    if (ends[-1] if ends else 0) != len(blob):
        raise ValueError("string section of the wrong size")
    return [blob[a:b].decode() for a, b in zip([0, *ends][:-1], ends, strict=True)]


def slot_hashes(model: PageModel, nodes: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
    """64-bit hash of the position-free tag path (root … node) of each of ``nodes``.

    ``h(node) = h(parent) · MIX + code(tag)`` (wrapping 64-bit), where a tag's code is the
    :func:`stable_hash` of its name, so the same path hashes the same on every page, in every
    process. Unrolled, ``h(node)`` is the sum of each ancestor's code times MIX to the power of
    its distance up: summed by walking up from ``nodes`` only, one step per level (vectorised,
    no recursion), a root's parent being a sentinel of code 0. That reads the ancestors of the
    page's links alone, where hashing every node level by level sorted the whole page by depth
    (0.14 → 0.05 ms a pydoc page).
    """
    n = model.n
    if n == 0 or len(nodes) == 0:
        return np.zeros(len(nodes), dtype=np.int64)
    codes = np.array([stable_hash(name) for name in model.tag_names], dtype=np.int64)
    node_code = np.append(codes.view(np.uint64)[model.tag_id], np.uint64(0))  # sentinel n
    parent = np.append(model.parent, n)
    parent[parent < 0] = n  # a root's parent: the sentinel, its own parent
    at = np.asarray(nodes, dtype=np.intp)
    h = node_code[at]
    power = 1
    for _ in range(int(model.depth[at].max())):
        power = power * _MIX_INT & _U64
        at = parent[at]
        h += node_code[at] * np.uint64(power)
    return h.view(np.int64)


def _page_terms(vocab: Sequence[str], local_to_site: NDArray[np.int32],
                local_ids: NDArray[np.integer[Any]]) -> tuple[NDArray[np.uint32], list[str]]:
    """A record's terms as :meth:`SiteRecorder.encode` numbers them, from the page's own term
    ids (``local_ids``: its anchor terms then its content terms, each an index of ``vocab``,
    the page's vocabulary, whose crawl ids are ``local_to_site``, all distinct): the place of
    each among the distinct ones in crawl-id order, and their strings. Marked by page id, where
    ``np.unique`` sorted every occurrence and each string's page id was searched for."""
    used = np.zeros(len(local_to_site), dtype=bool)
    used[local_ids] = True
    kept = np.flatnonzero(used)
    kept = kept[np.argsort(local_to_site[kept])]
    place = np.empty(len(local_to_site), dtype="<u4")
    place[kept] = np.arange(len(kept), dtype="<u4")
    return place[local_ids], [vocab[i] for i in kept.tolist()]


def _compact(counts: NDArray[np.integer[Any]]) -> NDArray[np.unsignedinteger[Any]]:
    """Non-negative ``counts`` in the smallest unsigned type that holds them (same values)."""
    top = int(counts.max()) if len(counts) else 0
    return counts.astype(np.min_scalar_type(top))


@dataclass(slots=True)
class PageLinks:
    """One recorded page: its link occurrences (in document order) and its content terms.

    Per occurrence: ``url_id`` (into the site's URL table), ``slot`` / ``text_key`` /
    ``url_key`` (hashes: the slot, (slot, text) and (slot, target)), and its anchor's terms
    ``term_ids[term_start[k]:term_start[k + 1]]`` (ids into the site's vocabulary).
    ``content_ids`` / ``content_tf``: the page's terms outside anchors and their frequencies
    (in the smallest unsigned type that holds them: most fit a byte, a page's record is kept);
    ``shingles``: sampled shingles of that text (:func:`shingles`).
    """

    url: str
    url_id: NDArray[np.int32]
    slot: NDArray[np.int64]
    text_key: NDArray[np.int64]
    url_key: NDArray[np.int64]
    term_start: NDArray[np.int64]
    term_ids: NDArray[np.int32]
    content_ids: NDArray[np.int32]
    content_tf: NDArray[np.unsignedinteger[Any]]
    shingles: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.url_id)


@dataclass
class SiteRecorder:
    """What the crawl has taught about one site: block statistics and page records (term ids
    into ``vocab``, its own unless given one)."""

    min_pages: int = 5
    slot_pages: KeyCounts = field(default_factory=KeyCounts)
    pair_pages: KeyCounts = field(default_factory=KeyCounts)
    #: on how many pages each sampled shingle is; None: not kept, counted by each analysis
    #: from the records it reads anyway (:func:`analyse_site`: the same counts while no page
    #: was recorded twice; a tracker counts them from the store before a page is recorded
    #: again, :meth:`count_shingles`). Only the analysis reads them, and they were the
    #: largest count a site kept (~40 new keys a page of new text: 0.5 KB)
    shingle_pages: KeyCounts | None = field(default_factory=KeyCounts)
    #: the page records held in memory: every recorded page's, unless they are :meth:`release`\ d
    #: once the store holds them (a tracker's recorders: module docstring, Memory)
    records: dict[str, PageLinks] = field(default_factory=dict)
    #: every URL the recorded pages link to (and theirs), by id
    urls: StringTable = field(default_factory=StringTable)
    vocab: StringTable = field(default_factory=StringTable)
    #: every recorded page (counted in the block statistics), its record held or not: a
    #: byte per URL of :attr:`urls`, where a set of strings took ~150 a page
    pages: TableSubset = field(init=False)
    #: the block statistics were let go (:meth:`let_go_counts`): counted again from the
    #: stored records (:meth:`count_again`) before they are read
    counts_let_go: bool = False
    #: a page was recorded again: its first record's counts stay, the store holds its last,
    #: so the statistics can no longer be counted again from the store exactly
    recorded_again: bool = False

    def __post_init__(self) -> None:
        self.pages = TableSubset(self.urls)

    def observe(self, url: str, model: PageModel) -> PageLinks:
        """Record a fetched page; its block statistics count once per URL (a re-fetch of the
        same URL replaces the record but is not counted again)."""
        return self._observe(url, model)[0]

    def observe_encoded(self, url: str, model: PageModel) -> tuple[PageLinks, bytes]:
        """:meth:`observe` and the record's :meth:`encode`, its strings taken from the page
        (its links' URLs, its vocabulary) rather than read back from the tables."""
        record, urls, terms = self._observe(url, model)
        return record, self._encode(record, urls, *terms())

    def _observe(
        self, url: str, model: PageModel
    ) -> tuple[PageLinks, list[str], Callable[[], tuple[NDArray[np.uint32], list[str]]]]:
        """The page's record (recorded), its links' URLs, and a way to its terms as
        :meth:`_encode` takes them, from the page's own ids and vocabulary
        (:func:`_page_terms`)."""
        links = model.links()
        n_links = len(links)
        urls, texts, node_list = zip(*links, strict=True) if links else ((), (), ())
        nodes = np.fromiter(node_list, np.int64, n_links)
        slots = slot_hashes(model, nodes)
        text_keys = _pair_keys(slots, map(stable_hash, texts), n_links, 1)
        url_keys = _pair_keys(slots, map(stable_hash, urls), n_links, 2)
        # anchor terms (the model's own tokenisation) and terms outside anchors, in crawl ids
        local_to_site = self.vocab.owned_ids(model, model.vocab)  # the TOC index's too
        ts = model.term_start
        starts = ts[nodes]
        ends = ts[model.subtree_end[nodes]] if len(nodes) else starts
        lengths = ends - starts
        term_start = np.zeros(len(nodes) + 1, dtype=np.int64)
        np.cumsum(lengths, out=term_start[1:])
        total = int(term_start[-1])
        within = np.arange(total) - np.repeat(term_start[:-1], lengths)
        anchor_local = model.term_ids[np.repeat(starts, lengths) + within]
        outside = (model.term_ids[np.repeat(~model.in_anchor, np.diff(ts))] if model.n
                   else np.zeros(0, np.int32))  # each term's node's flag, repeated in place
        term_hashes = model.vocab_hashes
        tf = np.bincount(outside, minlength=len(local_to_site))
        present = np.flatnonzero(tf)
        record = PageLinks(
            url=url,
            url_id=self._url_ids(urls),
            slot=slots,
            text_key=text_keys,
            url_key=url_keys,
            term_start=term_start,
            term_ids=local_to_site[anchor_local] if total else np.zeros(0, np.int32),
            content_ids=local_to_site[present] if len(present) else np.zeros(0, np.int32),
            content_tf=_compact(tf[present]),
            shingles=shingles(term_hashes[outside] if len(outside) else outside),
        )
        self._register(record)
        return record, list(urls), lambda: _page_terms(
            model.vocab, local_to_site, np.concatenate([anchor_local, present]))

    def _url_ids(self, urls: Sequence[str]) -> NDArray[np.int32]:
        """:attr:`urls`' ids of ``urls``, each distinct URL looked up once (a page links to
        some of its targets many times), new ones given ids in order of first sight."""
        distinct = list(dict.fromkeys(urls))
        if len(distinct) == len(urls):
            return self.urls.ids(distinct)
        at = dict(zip(distinct, self.urls.ids(distinct).tolist(), strict=True))
        return np.fromiter(map(at.__getitem__, urls), np.int32, len(urls))

    def _register(self, record: PageLinks) -> None:
        if self.pages.add(record.url):
            if not self.counts_let_go:  # else counted with the others when read back
                self._count(record)
        else:
            self.recorded_again = True
        self.records[record.url] = record

    def _count(self, record: PageLinks) -> None:
        self.slot_pages.add(np.unique(record.slot))
        # each kind's keys once a page, both kinds in one count (KeyCounts.add counts a key
        # listed twice twice: what two calls did)
        self.pair_pages.add(np.concatenate([np.unique(record.text_key),
                                            np.unique(record.url_key)]))
        if self.shingle_pages is not None:
            self.shingle_pages.add(record.shingles)

    def let_go_counts(self) -> None:
        """Let the block statistics go (the crawl has left the site, its records stored); the
        pages stay recorded, with their URL ids."""
        self.slot_pages, self.pair_pages = KeyCounts(), KeyCounts()
        if self.shingle_pages is not None:
            self.shingle_pages = KeyCounts()
        self.counts_let_go = True

    def count_shingles(self, records: Iterable[PageLinks]) -> None:
        """Keep the shingle counts from now on, counted from the records of every recorded page
        (read back from the store): a recorder that did not keep them (:attr:`shingle_pages`
        None) and is about to record a page again, whose first record they count."""
        counts = KeyCounts()
        for record in records:
            counts.add(record.shingles)
        self.shingle_pages = counts

    def count_again(self, records: Iterable[PageLinks]) -> None:
        """The block statistics again, from the records of every recorded page (read back from
        the store, :meth:`decode`): equal to the ones let go."""
        for record in records:
            self._count(record)
        self.counts_let_go = False

    @property
    def n_pages(self) -> int:
        """Pages recorded (their records held in memory or not)."""
        return len(self.pages)

    def release(self, url: str) -> None:
        """Stop holding ``url``'s record in memory (the store holds it: :meth:`decode` reads it
        back); the page stays recorded and counted."""
        self.records.pop(url, None)

    def encode(self, record: PageLinks) -> bytes:
        """``record`` in the store's form (:data:`RECORD_KIND`): URLs and terms as strings
        (this recorder's ids mean nothing to another process), hashes as they are (stable)."""
        used, local = np.unique(np.concatenate([record.term_ids, record.content_ids]),
                                return_inverse=True)
        return self._encode(record, self.urls.strings(record.url_id.tolist()),
                            local.astype("<u4"), self.vocab.strings(used.tolist()))

    def _encode(self, record: PageLinks, urls: list[str], local: NDArray[np.uint32],
                terms: list[str]) -> bytes:
        """:meth:`encode` with the strings of the record's URL ids (``urls``), and its terms:
        the strings of its distinct term ids in id order (``terms``) and the place among them
        of each of its anchor then content term ids (``local``)."""
        k = len(record.term_ids)
        parts = [
            *_pack_strings(urls),
            *_pack_strings(terms),
            record.slot.astype("<i8").tobytes(),
            record.text_key.astype("<i8").tobytes(),
            record.url_key.astype("<i8").tobytes(),
            np.diff(record.term_start).astype("<u4").tobytes(),
            local[:k].tobytes(),
            local[k:].tobytes(),
            record.content_tf.astype("<u4").tobytes(),
            record.shingles.astype("<i8").tobytes(),
        ]
        head = _RECORD_HEAD.pack(_RECORD_VERSION, *map(len, parts))
        return zlib.compress(head + b"".join(parts), 1)

    def load(self, url: str, blob: bytes) -> PageLinks:
        """Record a page from its stored form (:meth:`encode`), as :meth:`observe` would have.

        Raises ValueError for a blob that is not a record of this version."""
        record = self.decode(url, blob)
        self._register(record)
        return record

    def decode(self, url: str, blob: bytes) -> PageLinks:
        """The record of a page from its stored form (:meth:`encode`), in this recorder's ids,
        without recording it (the block statistics unchanged): equal to the one :meth:`observe`
        made of the page. Raises ValueError for a blob that is not a record of this version."""
        try:
            data = zlib.decompress(blob)
            version, *sizes = _RECORD_HEAD.unpack_from(data)
        except (zlib.error, struct.error) as exc:
            raise ValueError(f"not a structure record: {exc}") from exc
        if version != _RECORD_VERSION or _RECORD_HEAD.size + sum(sizes) != len(data):
            raise ValueError(f"structure record of version {version} or wrong size")
        bounds = np.cumsum([_RECORD_HEAD.size, *sizes]).tolist()
        part = [data[a:b] for a, b in pairwise(bounds)]
        urls = _unpack_strings(part[0], part[1])
        terms = _unpack_strings(part[2], part[3])
        slot, text_key, url_key = (np.frombuffer(p, "<i8").astype(np.int64) for p in part[4:7])
        lengths, anchor, content, content_tf = (
            np.frombuffer(p, "<u4").astype(np.int64) for p in part[7:11]
        )
        n = len(urls)
        if not (len(slot) == len(text_key) == len(url_key) == len(lengths) == n
                and int(lengths.sum()) == len(anchor) and len(content) == len(content_tf)
                and max(anchor.max(initial=-1), content.max(initial=-1)) < len(terms)):
            raise ValueError("inconsistent structure record")
        site_ids = self.vocab.ids(terms)
        term_start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=term_start[1:])
        return PageLinks(
            url=url,
            url_id=self.urls.ids(urls),
            slot=slot,
            text_key=text_key,
            url_key=url_key,
            term_start=term_start,
            term_ids=site_ids[anchor] if len(anchor) else np.zeros(0, np.int32),
            content_ids=site_ids[content] if len(content) else np.zeros(0, np.int32),
            content_tf=_compact(content_tf),
            shingles=np.frombuffer(part[11], "<i8").astype(np.int64),
        )

    def template_mask(self, record: PageLinks) -> NDArray[np.bool_]:
        """Which occurrences of ``record`` are template links now (module docstring)."""
        if not len(record):
            return np.zeros(0, dtype=bool)
        n_s = self.slot_pages.lookup(record.slot)
        n_t = self.pair_pages.lookup(record.text_key)
        n_u = self.pair_pages.lookup(record.url_key)
        return (n_s >= self.min_pages) & (2 * np.maximum(n_t, n_u) >= n_s)

    def template_masks(self, records: list[PageLinks]) -> list[NDArray[np.bool_]]:
        """:meth:`template_mask` of many records at once (sorted-array look-ups)."""
        if not records:
            return []
        sizes = [len(r) for r in records]
        slots = np.concatenate([r.slot for r in records])
        n_s = self.slot_pages.lookup(slots)
        n_t = self.pair_pages.lookup(np.concatenate([r.text_key for r in records]))
        n_u = self.pair_pages.lookup(np.concatenate([r.url_key for r in records]))
        mask = (n_s >= self.min_pages) & (2 * np.maximum(n_t, n_u) >= n_s)
        return np.split(mask, np.cumsum(sizes)[:-1])

    def page_turns(
        self, record: PageLinks, template: NDArray[np.bool_], model: PageModel | None = None
    ) -> NDArray[np.bool_]:
        """Which template occurrences of ``record`` (``template``: :meth:`template_mask`) are
        page turns: a target the slot holds on fewer than half of its pages, and a URL that
        :func:`~wisdom_scrapy.page.urls.is_page_turn` of the page's or, with the page's
        ``model`` (the one ``record`` was observed from), an ``<a rel="next|prev">`` (module
        docstring)."""
        turns = np.zeros(len(record), dtype=bool)
        urls = self.urls
        links, series = (
            (model.links(), model.series_anchors()) if model is not None else ([], frozenset()))
        at = np.flatnonzero(template)
        usual = 2 * self.pair_pages.lookup(record.url_key[at]) >= self.slot_pages.lookup(
            record.slot[at])
        for k in at[~usual].tolist():  # not the slot's usual target (a menu)
            turns[k] = (bool(series) and links[k].node in series) or is_page_turn(
                record.url, urls[record.url_id[k]])
        return turns

    def known_slots(self, record: PageLinks) -> NDArray[np.bool_]:
        """Occurrences whose slot has been seen on at least ``min_pages`` pages."""
        return self.slot_pages.lookup(record.slot) >= self.min_pages


@dataclass
class SiteAnalysis:
    """The result of :func:`analyse_site`, aligned with ``urls``.

    ``hub`` / ``authority``: scores relative to the site mean; ``raw_hub_mean``: mean of
    ``W @ authority`` and ``raw_authority_mean`` of ``Wᵀ @ hub`` (for the one-step estimates
    of a new page's scores); ``link_mass`` /
    ``content_mass``: L and C of the module docstring (NaN for pages without a record);
    ``copied_share``: share of the page's text copied from the pages its informative links
    point to (teasers, abstracts); ``roles``: "toc", "article", "other" ("" without a record);
    ``src`` / ``dst``: the informative links (source and target indices).
    """

    urls: list[str]
    hub: NDArray[np.float64]
    authority: NDArray[np.float64]
    roles: list[str]
    link_mass: NDArray[np.float64]
    content_mass: NDArray[np.float64]
    copied_share: NDArray[np.float64]
    src: NDArray[np.intp]
    dst: NDArray[np.intp]
    raw_hub_mean: float
    raw_authority_mean: float
    result: HitsResult
    n_links: int

    def index(self) -> dict[str, int]:
        return {u: i for i, u in enumerate(self.urls)}

    def role_counts(self) -> dict[str, int]:
        counts = Counter(r for r in self.roles if r)
        return {role: counts.get(role, 0) for role in ("toc", "article", "other")}

    def structure(self) -> dict[str, list[str]]:
        """TOC page → the article pages its informative links point to (document order)."""
        out: dict[str, list[str]] = {}
        roles = self.roles
        for s, d in zip(self.src.tolist(), self.dst.tolist(), strict=True):
            if roles[s] == "toc" and roles[d] == "article":
                targets = out.setdefault(self.urls[s], [])
                if self.urls[d] not in targets:
                    targets.append(self.urls[d])
        for s, role in enumerate(roles):
            if role == "toc":
                out.setdefault(self.urls[s], [])
        return out


def _relative(v: NDArray[np.float64]) -> NDArray[np.float64]:
    mean = float(v.mean()) if v.size else 0.0
    return v / mean if mean > 0 else np.zeros_like(v)


def _copied_share(
    recorder: SiteRecorder,
    page_shingles: list[NDArray[np.int64] | None],
    n_records: int,
    src: NDArray[np.intp],
    dst: NDArray[np.intp],
    n: int,
    weighted: bool,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Per page: the share of its sampled text shingles found in the text of the pages its
    informative links point to, and the number of distinct such targets.

    Each shingle weighs like a uniformly spread feature, W = 1 − ln df / ln N (TKDE §3.3,
    Relationship 1: the entropy weight of a feature spread evenly over df of N pages), so text
    the template repeats on every page (df ≈ N) counts for nothing; unweighted (plain) when
    ``weighted`` is False.
    """
    copied = np.zeros(n)
    if not len(src):
        return copied, np.zeros(n, dtype=np.int64)
    pairs = np.unique(src.astype(np.int64) * max(n, 1) + dst)
    p_src, p_dst = pairs // max(n, 1), pairs % max(n, 1)
    n_targets = np.bincount(p_src, minlength=n)
    bounds = np.searchsorted(p_src, np.arange(n + 1))
    # document frequency of every sampled shingle, as sorted arrays for vectorised look-ups
    df_keys, df_counts = _shingle_counts(recorder, page_shingles[:n_records])
    df_vals = df_counts.astype(np.float64)
    log_n = float(np.log(max(n_records, 2)))
    for i in np.flatnonzero(n_targets >= 3).tolist():
        mine = page_shingles[i]
        if mine is None or not len(mine):
            continue
        pool = [
            r
            for j in p_dst[bounds[i] : bounds[i + 1]].tolist()
            if (r := page_shingles[j]) is not None and len(r)
        ]
        if len(pool) < 3:
            continue
        if weighted:
            at = np.minimum(np.searchsorted(df_keys, mine), max(len(df_keys) - 1, 0))
            df = np.where(df_keys[at] == mine, df_vals[at], 1.0) if len(df_keys) else 1.0
            w = np.clip(1.0 - np.log(df) / log_n, 0.0, 1.0) * np.ones(len(mine))
        else:
            w = np.ones(len(mine))
        total = float(w.sum())
        if total <= 0:
            continue
        # a target's share is capped at an equal share of the page: a list of abstracts
        # copies a little from each of many pages, a near-duplicate of one or two pages (two
        # versions of a document linking each other) is not a list of abstracts
        amounts = _copied_amounts(mine, w, pool)
        amounts = amounts[amounts > 0]
        if len(amounts) >= 3:
            copied[i] = float(np.minimum(amounts, total / len(amounts)).sum()) / total
    return copied, n_targets


def _copied_amounts(
    mine: NDArray[np.int64], weights: NDArray[np.float64], pool: list[NDArray[np.int64]]
) -> NDArray[np.float64]:
    """Per target of ``pool`` (each its sorted shingles): the weight of the page's shingles
    ``mine`` (sorted, distinct; ``weights`` theirs) it is the first target to hold. ``mine``
    must be sorted and distinct as int64 (:func:`shingles` makes them so): a repeated shingle
    would be counted once.

    The targets' shingles are looked up in ``mine`` (sorted already) rather than sorted
    together to look ``mine`` up in them: a page is a few hundred shingles, its targets
    thousands. A shingle's first holder is the target of its first occurrence in the targets'
    concatenation; the weights are summed in the page's shingle order, as a look-up of each
    shingle in turn sums them."""
    cat = np.concatenate(pool)
    pos = np.minimum(np.searchsorted(mine, cat), len(mine) - 1)
    hit = np.flatnonzero(mine[pos] == cat)
    held, first = np.unique(pos[hit], return_index=True)
    ends = np.cumsum(np.fromiter(map(len, pool), np.int64, len(pool)))
    holder = np.searchsorted(ends, hit[first], side="right")
    return np.asarray(np.bincount(holder, weights=weights[held], minlength=len(pool)), np.float64)


def _shingle_counts(
    recorder: SiteRecorder, page_shingles: list[NDArray[np.int64] | None]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(shingles sorted, on how many pages each is): the recorder's counts, or, when it does
    not keep them, those of the records of the analysis (``page_shingles``, every recorded
    page's: the same keys and counts as :meth:`KeyCounts.arrays` of them)."""
    if recorder.shingle_pages is not None:
        return recorder.shingle_pages.arrays()
    present = [s for s in page_shingles if s is not None and len(s)]
    if not present:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys, counts = np.unique(np.concatenate(present), return_counts=True)
    return keys.astype(np.int64), counts.astype(np.int64)


_ANALYSIS_CHUNK = 256  # records an analysis holds at once (decoded from the store)


def anchor_weights(
    record: PageLinks, weights: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per link occurrence of ``record``: the information of its anchor text (Σ W(T) over the
    anchor's terms) and its LAMIS link weight α (that sum over the anchor's term count; 0 for
    an anchor without terms). ``weights``: W(T) of each entry of ``record.term_ids``. One
    definition for the site analysis and the crawl's per-page estimate, so the two agree."""
    lengths = np.diff(record.term_start)
    owner = np.repeat(np.arange(len(record)), lengths)
    info = np.asarray(np.bincount(owner, weights=weights, minlength=len(record)), np.float64)
    alpha = np.divide(info, lengths, out=np.zeros(len(record)), where=lengths > 0)
    return info, alpha


def _term_weights(
    records: list[PageLinks],
    vocab: StringTable,
    entropies: Callable[[list[str]], NDArray[np.float64]] | None,
) -> Callable[[NDArray[np.int32]], NDArray[np.float64]]:
    """W(T) = 1 − E(T) by term id (every W 1 without ``entropies``), for the terms of
    ``records`` only: the vocabulary is every site's."""
    if entropies is None:
        return lambda ids: np.ones(len(ids))
    parts = [part for rec in records for part in (rec.term_ids, rec.content_ids)]
    used = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int32)
    weights = (1.0 - np.asarray(entropies(vocab.strings(used.tolist())), dtype=np.float64)
               if len(used) else np.zeros(0))  # fmt: skip
    return lambda ids: weights[np.searchsorted(used, ids)]


def analyse_site(
    recorder: SiteRecorder,
    *,
    entropies: Callable[[list[str]], NDArray[np.float64]] | None,
    store_links: Mapping[str, Iterable[tuple[str, str]]] | None = None,
    template: bool = True,
    link_analysis: bool = True,
    max_iter: int = 100,
    tol: float = 1e-8,
    records: Mapping[str, PageLinks] | None = None,
) -> SiteAnalysis:
    """Informative link graph, (entropy-)HITS, masses and roles of one site (module docstring).

    ``entropies`` maps terms to their entropies in the site (e.g. ``snapshot.entropy``);
    ``None`` is plain HITS (every entropy 0). ``store_links`` is the store's link graph of the
    site, for the pages the recorder has no record of. ``template=False`` keeps template links
    (the unreduced graph of the paper's plain HITS). ``link_analysis=False`` weighs every link's
    information in full in the hub mass (ã ≡ 1: the roles without HITS, for comparison).

    Pages are taken in URL order, not in the order they were recorded: floating-point sums
    depend on their order, and roles near the TOC/article line flipped with it, so two crawls
    of one site (or one process and several) found different roles for the same pages.

    ``records``: the record of every recorded page (:attr:`SiteRecorder.pages`), for a recorder
    that does not hold them all in memory (default: the ones it holds).
    """
    records = recorder.records if records is None else records
    urls = sorted(records)
    extra = sorted(u for u in (store_links or {}) if u not in records)
    urls += extra
    index = {u: i for i, u in enumerate(urls)}
    n = len(urls)
    # page URL id (site table) -> node index, -1 when the target was never fetched
    node_of_url = np.full(len(recorder.urls), -1, dtype=np.int64)
    uids = recorder.urls.lookup(urls)
    node_of_url[uids[uids >= 0]] = np.flatnonzero(uids >= 0)
    srcs, dsts, infos, alphas = [], [], [], []
    content = np.full(n, np.nan)
    n_records = len(records)
    page_shingles: list[NDArray[np.int64] | None] = [None] * n
    # records taken a chunk at a time: a tracker's come from the store, decoded as they are
    # read, so an analysis never holds every page's record at once (module docstring, Memory)
    for start in range(0, n_records, _ANALYSIS_CHUNK):
        chunk = [records[u] for u in urls[start : min(start + _ANALYSIS_CHUNK, n_records)]]
        masks = recorder.template_masks(chunk) if template else [None] * len(chunk)
        weight = _term_weights(chunk, recorder.vocab, entropies)
        for i, rec, tmask in zip(range(start, start + len(chunk)), chunk, masks, strict=True):
            page_shingles[i] = rec.shingles
            content[i] = float((rec.content_tf * weight(rec.content_ids)).sum())
            if not len(rec):
                continue
            occ_info, occ_alpha = anchor_weights(rec, weight(rec.term_ids))
            if entropies is None:
                occ_alpha = np.ones(len(rec))
            # a record decoded now may add targets to the URL table: never fetched, no node
            fetched = rec.url_id < len(node_of_url)
            occ_dst = np.full(len(rec), -1, dtype=np.int64)
            occ_dst[fetched] = node_of_url[rec.url_id[fetched]]
            keep = (occ_dst >= 0) & (occ_dst != i)
            if tmask is not None:
                keep &= ~tmask
            srcs.append(np.full(int(keep.sum()), i, dtype=np.intp))
            dsts.append(occ_dst[keep].astype(np.intp))
            infos.append(occ_info[keep])
            alphas.append(occ_alpha[keep])
    cache: dict[str, list[str]] = {}
    for u in extra:
        i = index[u]
        for target, text in (store_links or {})[u]:
            j = index.get(target)
            if j is None or j == i:
                continue
            terms = cache.get(text)
            if terms is None:
                terms = cache[text] = extract_terms(text)
            if entropies is not None and terms:
                info_k = float((1.0 - np.asarray(entropies(terms))).sum())
            else:
                info_k = float(len(terms))
            srcs.append(np.array([i], dtype=np.intp))
            dsts.append(np.array([j], dtype=np.intp))
            infos.append(np.array([info_k]))
            alpha_k = 1.0 if entropies is None else (info_k / len(terms) if terms else 0.0)
            alphas.append(np.array([alpha_k]))
    src: NDArray[np.intp] = np.concatenate(srcs) if srcs else np.zeros(0, dtype=np.intp)
    dst: NDArray[np.intp] = np.concatenate(dsts) if dsts else np.zeros(0, dtype=np.intp)
    info: NDArray[np.float64] = np.concatenate(infos) if infos else np.zeros(0)
    alpha: NDArray[np.float64] = np.concatenate(alphas) if alphas else np.zeros(0)
    graph = LinkGraph.from_edges(urls, src, dst, alpha)
    result = hits(graph.weights, max_iter=max_iter, tol=tol)
    authority = _relative(result.authority)
    hub = _relative(result.hub)
    raw_hub = graph.weights @ authority
    reach = np.minimum(authority[dst], 1.0) if link_analysis else np.ones(len(dst))
    link_mass = np.bincount(src, weights=info * reach, minlength=n).astype(np.float64)
    link_mass[n_records:] = np.nan
    copied, n_targets = _copied_share(recorder, page_shingles, n_records, src, dst, n,
                                      entropies is not None)  # fmt: skip
    roles = []
    for i in range(n):
        c = content[i]
        if np.isnan(c):
            roles.append("")
            continue
        own = c * (1.0 - copied[i])
        hub_mass = link_mass[i] + c * copied[i]
        if n_targets[i] >= 2 and hub_mass >= own and hub_mass > 0:
            roles.append("toc")
        elif own > 0 and authority[i] > 0:
            roles.append("article")
        else:
            roles.append("other")
    return SiteAnalysis(
        urls=urls,
        hub=hub,
        authority=authority,
        roles=roles,
        link_mass=link_mass,
        content_mass=content,
        copied_share=copied,
        src=src,
        dst=dst,
        raw_hub_mean=float(raw_hub.mean()) if n else 0.0,
        raw_authority_mean=float((graph.weights.T @ hub).mean()) if n else 0.0,
        result=result,
        n_links=graph.n_links,
    )


#: Bytes of decoded page records (and the stored forms they came from, with their objects'
#: own sizes) a tracker keeps between analyses (:class:`DecodedRecords`): ~20 KB a page of the
#: Python docs (12 decoded, 8.5 stored), so a site of ~800 such pages is decoded once, not at
#: each of its analyses; a fixed amount for the crawl, not per site, and only for the sites it
#: is crawling (a left site's go: :meth:`StructureTracker.let_go`), so a broad crawl's memory
#: does not grow with its sites, nor hold this much for sites it will not analyse again soon.
DECODED_RECORD_BYTES = 16 << 20


class DecodedRecords:
    """A bounded working set of decoded page records, so that a site's re-analysis decodes
    only the records stored since the last one (decoding was half of an analysis' time).

    An entry is taken only for the same recorder (its URL ids) and the same stored bytes
    (what :meth:`SiteRecorder.decode` would decode now): a record stored again, by this process
    or another, is decoded again, so an analysis sees exactly the records it would decode.
    Least recently used entries go first past ``max_bytes``, and a site's all at once when the
    crawl has left it (:meth:`forget`).
    """

    def __init__(self, max_bytes: int = DECODED_RECORD_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[
            tuple[str, str], tuple[weakref.ref[SiteRecorder], bytes, PageLinks, int]
        ] = OrderedDict()
        self._urls: dict[str, set[str]] = {}  # site -> the URLs of its entries

    def get(self, site: str, recorder: SiteRecorder, blob: bytes, url: str) -> PageLinks | None:
        """The record decoded from ``blob`` by ``recorder``, if kept."""
        entry = self._entries.get((site, url))
        if entry is None or entry[0]() is not recorder or entry[1] != blob:
            return None
        self._entries.move_to_end((site, url))
        return entry[2]

    def put(self, site: str, recorder: SiteRecorder, blob: bytes, record: PageLinks) -> None:
        """Keep ``record`` (what ``recorder`` decodes ``blob`` into), evicting the oldest."""
        self._drop(site, record.url)
        size = _held_bytes(blob, record)
        if size > self.max_bytes:
            return
        self._entries[site, record.url] = (weakref.ref(recorder), blob, record, size)
        self._urls.setdefault(site, set()).add(record.url)
        self.bytes += size
        while self.bytes > self.max_bytes:
            self._drop(*next(iter(self._entries)))

    def forget(self, site: str) -> None:
        """Let go of every record of ``site`` (the crawl has left it: its next analysis, if
        any, is far off, and decodes them again, the same)."""
        for url in list(self._urls.get(site, ())):
            self._drop(site, url)

    def _drop(self, site: str, url: str) -> None:
        entry = self._entries.pop((site, url), None)
        if entry is None:
            return
        self.bytes -= entry[3]
        urls = self._urls[site]
        urls.discard(url)
        if not urls:
            del self._urls[site]

    def __len__(self) -> int:
        return len(self._entries)


def _held_bytes(blob: bytes, record: PageLinks) -> int:
    """What keeping ``record`` and its stored form holds: the arrays and objects with their
    headers (about 1.5 KB a record over the arrays' data and the stored bytes: a quarter of a
    small page's, which a count of those alone missed)."""
    arrays = sum(getattr(record, name).nbytes + _ARRAY_HEADER for name in _RECORD_ARRAYS)
    return sys.getsizeof(blob) + arrays + sys.getsizeof(record) + _ENTRY_BYTES


#: An entry's own objects in :class:`DecodedRecords`: its key and value tuples, the ordered
#: dict's node and the site's URL set slot.
_ENTRY_BYTES = 300
#: An array's own object, besides its data (a view's data is its base's, counted as its own)
_ARRAY_HEADER = sys.getsizeof(np.zeros(0))

_RECORD_ARRAYS = ("url_id", "slot", "text_key", "url_key", "term_start", "term_ids",
                  "content_ids", "content_tf", "shingles")


class _StoredRecords(Mapping[str, PageLinks]):
    """The records of a recorder's pages for one analysis: those it holds, the others decoded
    from their stored form when asked for (:func:`analyse_site` takes them a chunk at a
    time), or taken from ``decoded`` when it kept them. A stored record that does not decode
    counts as a page without links or text (``bad(1)``)."""

    def __init__(self, recorder: SiteRecorder, blobs: Mapping[str, bytes],
                 bad: Callable[[int], None],
                 decoded: tuple[str, DecodedRecords] | None = None) -> None:
        self.recorder, self.blobs, self.bad, self.decoded = recorder, blobs, bad, decoded
        held = recorder.records
        self.urls = [u for u in recorder.pages if u in held or u in blobs]

    def __getitem__(self, url: str) -> PageLinks:
        record = self.recorder.records.get(url)
        if record is not None:
            return record
        blob = self.blobs[url]
        if self.decoded is not None:
            site, kept = self.decoded
            record = kept.get(site, self.recorder, blob, url)
            if record is not None:
                return record
        try:
            record = self.recorder.decode(url, blob)
        except ValueError:
            self.bad(1)
            logger.warning("wisdom_scrapy: the stored page record of %s is unreadable", url)
            return _empty_record(url)
        if self.decoded is not None:
            self.decoded[1].put(self.decoded[0], self.recorder, blob, record)
        return record

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and url in self.recorder.pages and (
            url in self.recorder.records or url in self.blobs)

    def __iter__(self) -> Iterator[str]:
        return iter(self.urls)

    def __len__(self) -> int:
        return len(self.urls)


def _empty_record(url: str) -> PageLinks:
    ints = np.zeros(0, dtype=np.int64)
    return PageLinks(url, np.zeros(0, np.int32), ints, ints, ints, np.zeros(1, np.int64),
                     np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.uint8), ints)


class _UrlValues:
    """A number per URL id of a site's URL table (0 until set): 8 bytes a URL, where a dict
    entry takes about 100, and the table grows with every link target the crawl sees."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values = np.zeros(0)

    def get(self, uid: int) -> float:
        return float(self._values[uid]) if uid < len(self._values) else 0.0

    def set(self, uid: int, value: float) -> None:
        if uid >= len(self._values):
            grown = np.zeros(max(2 * len(self._values), uid + 1, 64))
            grown[: len(self._values)] = self._values
            self._values = grown
        self._values[uid] = value


@dataclass
class SiteLinks:
    """The link structure's part of a site's :class:`~wisdom_scrapy.engine.sites.SiteContext`: its
    page records, its latest analysis and scores, and the one-step estimates since."""

    recorder: SiteRecorder
    analysis: SiteAnalysis | None = None
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    analysed_pages: int = 0
    emitted_pages: int = -1
    hub_estimates: _UrlValues = field(default_factory=_UrlValues)  # by URL id
    inbound: _UrlValues = field(default_factory=_UrlValues)  # by URL id


#: the link structure's part of each site's context
LINKS: Part[SiteLinks] = Part("links")


class StructureTracker:
    """Per-site recorders and analyses of one crawl (see the module docstring); the crawl's
    tracker is its :class:`~wisdom_scrapy.extension.WisdomExtension`'s ``tracker``.

    ``store`` provides entropies and the shared link graph; ``params`` the crawl's WISDOM
    parameters, whose :meth:`~wisdom_scrapy.mining.wisdom.WisdomParams.is_warm` says when a
    site is warm (no analysis before it has records of that many pages); ``growth`` the
    factor by which a site must grow before it is analysed again; ``in_flight(site)`` the URLs
    this process has fed into the store but not observed yet (not fetched from the store).
    Each site's part (:class:`SiteLinks`) lives in its context in ``sites`` (the crawl's
    :class:`~wisdom_scrapy.engine.sites.Sites`, whose snapshot the analysis uses; a new one by
    default). ``keep_shingles``: keep every site's shingle counts in memory as a standalone
    :class:`SiteRecorder` does, instead of counting them from the records at each analysis
    (the same analyses: for comparisons).
    """

    def __init__(
        self,
        store: TermStore,
        *,
        min_pages: int = 5,
        params: WisdomParams = DEFAULT_PARAMS,
        growth: float = 1.5,
        max_iter: int = 100,
        count: Callable[[str, int], None] = lambda name, n: None,
        timer: Callable[[str, float], None] = lambda name, seconds: None,
        in_flight: Callable[[str], Iterable[str]] = lambda site: (),
        sites: Sites | None = None,
        vocab: StringTable | None = None,
        keep_shingles: bool = False,
    ) -> None:
        self.store = store
        self.keep_shingles = keep_shingles
        self.timer = timer
        self.in_flight = in_flight
        self.min_pages = min_pages
        self.params = params
        self.growth = growth
        self.max_iter = max_iter
        self.count = count
        self.sites = sites if sites is not None else Sites(store)
        #: the page records' terms, every site's (the crawl's TOC term index's, given it)
        self.vocab = vocab if vocab is not None else StringTable()
        #: decoded page records kept between analyses (bounded, exact: :class:`DecodedRecords`)
        self.decoded = DecodedRecords()

    def warm(self, site: str) -> bool:
        """Whether the site is *warm* (:meth:`WisdomParams.is_warm
        <wisdom_scrapy.mining.wisdom.WisdomParams.is_warm>`: its entropies mean something, so
        its links may be weighted and its pages focused on) by the pages this tracker has records
        of (its own and the store's, :meth:`state`). Not whether its cold-start hold is over
        (:attr:`SiteContext.cold_start_over <wisdom_scrapy.engine.sites.SiteContext.
        cold_start_over>`)."""
        return self.params.is_warm(self.state(site).recorder.n_pages)

    def link_weights(self, site: str, record: PageLinks) -> NDArray[np.float64]:
        """LAMIS link weight of each occurrence of ``record`` with the site's current
        entropies (all 0 before the site is warm): the snapshot its pages are analysed with
        now (:func:`anchor_weights`)."""
        if not self.warm(site) or not len(record):
            return np.zeros(len(record))
        # each distinct term read and looked up once (anchors repeat theirs: a menu's words)
        ids, at = np.unique(record.term_ids, return_inverse=True)
        terms = self.state(site).recorder.vocab.strings(ids.tolist())
        weights = 1.0 - np.asarray(self.sites.get(site).latest().entropy(terms), np.float64)
        return anchor_weights(record, weights[at])[1]

    def state(self, site: str) -> SiteLinks:
        """The site's state, starting with the page records already in the store; a left
        site's block statistics are counted again first (:meth:`let_go`). Should that read
        fail (counted, logged), they stay let go until a later call: no slot is known yet, so
        no link is taken for a template link, and :meth:`analyse` waits."""
        state = self._recording(site)
        if state.recorder.counts_let_go and self.sites.may_read(site):
            self._count_again(site, state.recorder)
        return state

    def _recording(self, site: str) -> SiteLinks:
        """The site's state, its statistics as they are (let go or not): enough to record a
        page, which a left site counts when it reads them back."""
        context = self.sites.get(site)
        links = LINKS.of(context)
        if links is None:
            recorder = SiteRecorder(min_pages=self.min_pages, vocab=self.vocab,
                                    shingle_pages=KeyCounts() if self.keep_shingles else None)
            links = LINKS.put(context, SiteLinks(recorder))
            self._load(site, recorder)
        return links

    def let_go(self, context: SiteContext) -> bool:
        """Let a left site's block statistics go (:meth:`Sites.fed
        <wisdom_scrapy.engine.sites.Sites.fed>` offers it) when the store holds, for every page they
        count, the record they counted (none held back by a store failure, none recorded twice), so
        that counting them again from it gives the same statistics; whether they went. Its
        URL table, scores and estimates stay: they are numbered by URL id. In a distributed
        crawl, a record another worker stored again for one of its pages is the one counted
        back. Its decoded records kept between analyses go in any case
        (:meth:`DecodedRecords.forget`): a cache, decoded again the same when needed."""
        self.decoded.forget(context.site)
        state = LINKS.of(context)
        if state is None or state.recorder.counts_let_go:
            return False
        recorder = state.recorder
        if recorder.records or recorder.recorded_again:
            return False
        recorder.let_go_counts()
        self.count("wisdom/structure/let_go", 1)
        return True

    def _count_again(self, site: str, recorder: SiteRecorder) -> None:
        try:
            blobs = self.store.records(site, RECORD_KIND)
        except StoreError as exc:
            self.count("wisdom/store_errors", 1)
            logger.warning("wisdom_scrapy: cannot read the page records of %s back: %s", site,
                           exc)  # fmt: skip
            self.sites.read_failed(site)
            return
        # pages gone from the store meanwhile are counted as lost, unreadable ones as bad
        recorder.count_again(self._records(site, recorder, blobs).values())
        self.count("wisdom/structure/read_back", 1)
        self.sites.read_back(site)

    def _count_shingles(self, site: str, recorder: SiteRecorder) -> None:
        """Keep the site's shingle counts from now on, counted from the stored records, before
        one of its pages is recorded again (its first record's count stays, the store keeps
        its last: :attr:`SiteRecorder.shingle_pages`). Should that read fail (counted, logged),
        the analyses go on counting them from the records, the page's last one included."""
        try:
            records = self._records(site, recorder, None)
            recorder.count_shingles(records[url] for url in records)
        except StoreError as exc:
            self.count("wisdom/store_errors", 1)
            logger.warning("wisdom_scrapy: cannot read the page records of %s back: %s", site,
                           exc)  # fmt: skip

    def _known(self, site: str) -> SiteLinks | None:
        """The site's state if this tracker has one (nothing created)."""
        context = self.sites.find(site)
        return None if context is None else LINKS.of(context)

    def _load(self, site: str, recorder: SiteRecorder) -> dict[str, bytes] | None:
        """Add the page records that other processes (or earlier crawls) stored for the site
        and this recorder lacks: a restarted crawl starts warm, and workers sharing a store
        analyse every worker's pages. Returns the stored records read (None: the store failed).
        """
        try:
            blobs = self.store.records(site, RECORD_KIND)
        except StoreError as exc:
            self.count("wisdom/store_errors", 1)
            logger.warning("wisdom_scrapy: cannot read the page records of %s: %s", site, exc)
            return None
        loaded = bad = 0
        for url, blob in blobs.items():
            if url in recorder.pages:
                continue
            try:
                recorder.load(url, blob)
                recorder.release(url)  # the store has it
                loaded += 1
            except ValueError:
                bad += 1
        if loaded:
            self.count("wisdom/structure/records_loaded", loaded)
        if bad:
            self.count("wisdom/structure/bad_records", bad)
            logger.warning("wisdom_scrapy: %d unreadable page records of %s skipped", bad, site)
        return blobs

    def records(self, site: str) -> Mapping[str, PageLinks]:
        """The record of every page of ``site`` recorded here (what :func:`analyse_site`
        takes), read back from the store where the recorder does not hold them."""
        return self._records(site, self.state(site).recorder, None)

    def _records(
        self, site: str, recorder: SiteRecorder, blobs: Mapping[str, bytes] | None
    ) -> Mapping[str, PageLinks]:
        """The record of every recorded page for an analysis: those the recorder holds (not
        stored: the store failed), the others decoded from the store's, read at once (``blobs``,
        when just read). StoreError when the store cannot be read."""
        held = recorder.records
        if len(held) >= recorder.n_pages:
            return held
        if blobs is None:
            blobs = self.store.records(site, RECORD_KIND)
        lost = sum(1 for url in recorder.pages if url not in held and url not in blobs)
        if lost:  # gone from the store (deleted, or a store that lost data)
            self.count("wisdom/structure/records_lost", lost)
            logger.warning("wisdom_scrapy: %d page records of %s gone from the store", lost,
                           site)  # fmt: skip
        return _StoredRecords(recorder, blobs, lambda n: self.count(
            "wisdom/structure/bad_records", n), decoded=(site, self.decoded))

    def observe(self, site: str, url: str, model: PageModel) -> PageLinks:
        """Record a fetched page (and store its record), re-analysing the site when it has
        grown enough. A left site's new page is recorded without its statistics (counted when
        they are read back: for the analysis, or the page's template links); a page fetched
        again reads them back first, so that its first record's counts stay."""
        state = self._recording(site)
        if url in state.recorder.pages:
            if state.recorder.counts_let_go:
                state = self.state(site)
            if state.recorder.shingle_pages is None:
                self._count_shingles(site, state.recorder)
        record, blob = state.recorder.observe_encoded(url, model)
        try:
            self.store.put_records(site, RECORD_KIND, {url: blob})
        except StoreError as exc:  # the crawl goes on; this process still has the record
            self.count("wisdom/store_errors", 1)
            logger.warning("wisdom_scrapy: page record of %s not stored: %s", url, exc)
        else:  # read back from the store by the analyses: not held per page in memory, but
            state.recorder.release(url)  # kept decoded while the working set has room
            self.decoded.put(site, state.recorder, blob, record)
        n = state.recorder.n_pages
        due = self.params.is_warm(n) and n >= state.analysed_pages * self.growth
        if due and not self.state(site).recorder.counts_let_go:  # else a later page's turn
            self.analyse(site)
        return record

    def analyse(self, site: str) -> SiteAnalysis:
        """Run the site's entropy-HITS analysis now, with the entropies of every page the store
        holds (:meth:`~wisdom_scrapy.engine.sites.SiteContext.current`), and keep its scores."""
        started = time.perf_counter()
        state = self.state(site)
        recorder = state.recorder
        if recorder.counts_let_go:  # counted and logged by state()
            raise StoreError(f"the link statistics of {site} could not be read back")
        snapshot = self.sites.get(site).current()
        store_links = blobs = None
        if self._unrecorded(site, recorder):
            blobs = self._load(site, recorder)
        if self._unrecorded(site, recorder):  # pages fed without records
            store_links = self.store.links(site)
        analysis = analyse_site(
            recorder,
            entropies=lambda terms: snapshot.entropy(terms),
            store_links=store_links,
            max_iter=self.max_iter,
            records=self._records(site, recorder, blobs),
        )
        state.analysis = analysis
        state.analysed_pages = recorder.n_pages
        state.scores = {
            u: (round(float(h), 6), round(float(a), 6))
            for u, h, a in zip(analysis.urls, analysis.hub, analysis.authority, strict=True)
        }
        self.count("wisdom/structure/analyses", 1)
        self.timer("wisdom/structure/microseconds", time.perf_counter() - started)
        logger.debug(
            "wisdom_scrapy: %s analysed: %d pages, %d informative links, HITS %d iterations",
            site, len(analysis.urls), analysis.n_links, analysis.result.iterations,
        )
        return analysis

    def _unrecorded(self, site: str, recorder: SiteRecorder) -> bool:
        """Whether the store holds pages of ``site`` the recorder has no record of, other than
        this process's own pages in flight (fed, not yet observed: recorded moments later).

        Reading every stored record or link list of the site is O(site) per analysis; in a
        single crawl the only such pages are usually the ones in flight, so that read is
        skipped for them.
        """
        missing = self.store.page_count(site) - recorder.n_pages
        if missing <= 0:
            return False
        pages = recorder.pages
        in_flight = {u for u in self.in_flight(site) if u not in pages}
        return missing > len(in_flight)

    def scores(self, site: str, url: str) -> tuple[float, float] | None:
        """(hub, authority) of ``url``: from the site's latest analysis, else the one-step
        estimates (module docstring); None before the site's first analysis."""
        state = self._known(site)
        if state is None or state.analysis is None:
            return None
        known = state.scores.get(url)
        if known is not None:
            return known
        uid = state.recorder.urls.get(url)
        mean = state.analysis.raw_authority_mean
        if uid is None:
            return 0.0, 0.0
        authority = state.inbound.get(uid) / mean if mean > 0 else 0.0
        return round(state.hub_estimates.get(uid), 6), round(authority, 6)

    def note(
        self,
        site: str,
        record: PageLinks,
        alpha: NDArray[np.float64],
        informative: NDArray[np.bool_],
        hub: float,
    ) -> None:
        """Remember a page's estimated hub score and add its informative links to their
        targets' estimated authority (Σ α · h over in-links, one HITS step)."""
        state = self.state(site)
        state.hub_estimates.set(state.recorder.urls.id(record.url), hub)
        if hub <= 0 or not informative.any():
            return
        best: dict[int, float] = {}
        for uid, a in zip(record.url_id[informative].tolist(), alpha[informative].tolist(),
                          strict=True):
            if a > best.get(uid, 0.0):
                best[uid] = a
        for uid, a in best.items():
            state.inbound.set(uid, state.inbound.get(uid) + a * hub)

    def estimate_hub(
        self,
        site: str,
        record: PageLinks,
        alpha: NDArray[np.float64],
        informative: NDArray[np.bool_],
    ) -> float:
        """The page's hub score: its latest one, else one HITS step (module docstring)."""
        state = self._known(site)
        if state is None or state.analysis is None:
            return 0.0
        known = state.scores.get(record.url)
        if known is not None:
            return known[0]
        analysis = state.analysis
        if analysis.raw_hub_mean <= 0 or not informative.any():
            return 0.0
        best: dict[int, float] = {}
        for uid, a in zip(record.url_id[informative].tolist(), alpha[informative].tolist(),
                          strict=True):
            if a > best.get(uid, -1.0):
                best[uid] = a
        total = 0.0
        for url, a in zip(state.recorder.urls.strings(best), best.values(), strict=True):
            score = state.scores.get(url)
            total += a * (score[1] if score is not None else 1.0)
        return total / analysis.raw_hub_mean

    def structure_items(self, *, only_changed: bool = True) -> list[SiteStructureItem]:
        """A fresh analysis and :class:`SiteStructureItem` per site (at idle); with
        ``only_changed``, only for sites that grew since their last item."""
        items = []
        for context in self.sites:
            site, state = context.site, LINKS.of(context)
            if state is None:
                continue
            n = state.recorder.n_pages
            if not n or (only_changed and n == state.emitted_pages):
                continue
            try:
                analysis = self.analyse(site)
            except StoreError as exc:  # the other sites' items go on; this one's comes later
                if not state.recorder.counts_let_go:  # else counted by the read-back
                    self.count("wisdom/store_errors", 1)
                logger.warning("wisdom_scrapy: structure of %s not analysed: %s", site, exc)
                continue
            items.append(structure_item(site, analysis))
            # the analysis may have loaded other processes' records: count them as emitted
            state.emitted_pages = state.recorder.n_pages
            if context.left:  # counted again for the analysis: let go again at once
                self.let_go(context)
        return items


def structure_item(site: str, analysis: SiteAnalysis) -> SiteStructureItem:
    """The :class:`SiteStructureItem` of an analysis."""
    index = analysis.index()

    def scores(url: str) -> dict[str, float]:
        i = index[url]
        return {
            "hub": round(float(analysis.hub[i]), 6),
            "authority": round(float(analysis.authority[i]), 6),
        }

    tocs: list[dict[str, Any]] = [
        {"url": url, **scores(url), "articles": articles}
        for url, articles in analysis.structure().items()
    ]
    tocs.sort(key=lambda t: -float(t["hub"]))
    articles: list[dict[str, Any]] = [
        {"url": u, "authority": round(float(analysis.authority[i]), 6)}
        for i, u in enumerate(analysis.urls)
        if analysis.roles[i] == "article"
    ]
    articles.sort(key=lambda a: -float(a["authority"]))
    return SiteStructureItem(
        site=site,
        pages=len(analysis.urls),
        links=analysis.n_links,
        tocs=tocs,
        articles=articles,
        roles=analysis.role_counts(),
        method="entropy-hits",
        iterations=analysis.result.iterations,
        converged=analysis.result.converged,
    )
