"""What every term-entropy store shares: the entropy formula, page records and the interface.

Entropy (WISDOM §3.1, Appendix A). For a term t of a site with N pages, let tf_j be its frequency
in page j, TF = Σ_j tf_j and w_j = tf_j / TF. WISDOM's entropy is

    EN(t) = −Σ_j w_j · log_N w_j

Expanding w_j gives the closed form this module uses:

    EN(t) = (ln TF − S / TF) / ln N,  with  S = Σ_j tf_j · ln tf_j

so a store only keeps two sums per term, TF and S. Adding a page adds to them (O(1) per term);
replacing a page subtracts its old contribution first. Because they are plain sums, updates
commute: several processes (or Redis) can apply them in any order and reach the same numbers.
This is WISDOM's incremental recursion in closed form: a new page without t leaves TF and S
alone and only N grows, so E_{k+1} = E_k · ln k / ln(k+1) = E_k / log_k(k+1).

Conventions the papers leave open:

* N ≤ 1: every term occurs in one page only, so it is as specific as a term can be: E = 0.
* A term the site has never seen (TF = 0) gets E = 0 for the same reason (weight 1 − E = 1).
* Rounding can push E a hair outside [0, 1]; it is clipped.

Page records. Idempotence (the same URL with the same content counts once) and replacement (a
changed page swaps its old contribution for the new one) need each page's last counts. They are
kept compactly as sorted term ids and frequencies (zlib over delta-coded little-endian
integers), with a 16-byte digest of the counts and out-links to detect an unchanged page cheaply.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import lt
from typing import NamedTuple, cast
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from wisdom_scrapy.store.strings import StringTable, StringValues, TableValues

__all__ = [
    "EntropyMirror",
    "EntropySnapshot",
    "Link",
    "StoreError",
    "StoreLost",
    "TermChanges",
    "TermStore",
    "decode_links",
    "decode_record",
    "encode_links",
    "encode_record",
    "entropy_from_sums",
    "entropy_numerators",
    "entropy_of_numerators",
    "page_digest",
    "positive_counts",
    "redact_uri",
]


class StoreError(RuntimeError):
    """A store cannot be opened or an operation on it failed."""


class StoreLost(StoreError):
    """The store's data is gone, not just out of reach: its file was deleted or replaced while
    it was open. Every page stored since it was opened is lost."""


class Link(NamedTuple):
    """An out-link of a page: absolute target URL and anchor text."""

    url: str
    text: str


_QUERY_PASSWORD = re.compile(r"(?i)(password=)[^&#]*")


def redact_uri(uri: str) -> str:
    """``uri`` with any password (user-info or ``?password=``) replaced by ``***``.

    Store URIs are logged and shown in errors; their passwords never are.
    """
    uri = _QUERY_PASSWORD.sub(r"\1***", uri)
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def entropy_from_sums(tf: np.ndarray, s: np.ndarray, n_pages: int) -> np.ndarray:
    """Vectorised EN = (ln TF − S/TF) / ln N with the conventions in the module docstring."""
    if n_pages <= 1:
        return np.zeros(np.shape(tf), dtype=np.float64)
    return entropy_of_numerators(entropy_numerators(tf, s), n_pages)


def entropy_numerators(tf: np.ndarray, s: np.ndarray) -> np.ndarray:
    """ln TF − S/TF per term (0 where TF = 0): the part of EN that does not depend on N, so a
    term's stays valid while only N changes (:class:`EntropyMirror`)."""
    tf = np.asarray(tf, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    out = np.zeros(tf.shape, dtype=np.float64)
    seen = tf > 0
    out[seen] = np.log(tf[seen]) - s[seen] / tf[seen]
    return out


def entropy_of_numerators(numerators: np.ndarray, n_pages: int) -> np.ndarray:
    """EN from :func:`entropy_numerators` and N: the same floating-point operations as the
    whole formula, so the same numbers to the last bit."""
    if n_pages <= 1:
        return np.zeros(numerators.shape, dtype=np.float64)
    out = numerators / np.log(n_pages)
    return np.clip(out, 0.0, 1.0, out=out)


def tf_log_tf(counts: np.ndarray) -> np.ndarray:
    """tf · ln tf per entry (the page's contribution to S)."""
    c = np.asarray(counts, dtype=np.float64)
    return c * np.log(np.maximum(c, 1.0))


def page_digest(counts: Mapping[str, int], links: Sequence[tuple[str, str]] = ()) -> bytes:
    """16-byte digest of a page's term counts (in any order) and out-links.

    The terms are sorted alone, each count read after: the order of the (term, count) pairs
    sorted, since no term repeats, for a sort of strings, the costlier half of the digest,
    where one of tuples compared them a pair at a time."""
    h = hashlib.blake2b(digest_size=16)
    for term in sorted(counts):
        h.update(f"{term}\x00{counts[term]}\x01".encode())
    h.update(b"\x02")
    for url, text in links:
        h.update(f"{url}\x00{text}\x01".encode())
    return h.digest()


def positive_counts(counts: Mapping[str, int]) -> tuple[list[str], np.ndarray]:
    """The terms of ``counts`` with a count above 0, in its order, and those counts (int64):
    what a store adds of a page. One C-level filter, where a look-up a term cost a store's
    write as much again. The counts are compared as given, before any conversion, so that a
    count the int64 array cannot hold or a fraction is kept or dropped as a term-by-term
    ``n > 0`` (the memory store's) would."""
    kept = list(map(lt, repeat(0), counts.values()))
    terms = list(compress(counts, kept))
    return terms, np.fromiter(compress(counts.values(), kept), dtype=np.int64, count=len(terms))


def encode_record(ids: np.ndarray, tfs: np.ndarray) -> bytes:
    """Pack a page's (term id, tf) pairs: ids sorted and delta-coded, then zlib."""
    order = np.argsort(ids, kind="stable")
    ids = np.asarray(ids, dtype=np.int64)[order]
    deltas = np.diff(ids, prepend=0)
    packed = np.concatenate([deltas, np.asarray(tfs, dtype=np.int64)[order]]).astype("<u4")
    return zlib.compress(packed.tobytes(), 6)


def decode_record(blob: bytes | None) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`encode_record`: (ids, tfs) as int64 arrays (empty for ``None``)."""
    if not blob:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    packed = np.frombuffer(zlib.decompress(blob), dtype="<u4").astype(np.int64)
    half = packed.size // 2
    return np.cumsum(packed[:half]), packed[half:]


def encode_links(links: Sequence[tuple[str, str]]) -> bytes:
    return zlib.compress(json.dumps(list(links)).encode(), 1)  # tuples serialise as lists


def decode_links(blob: bytes | None) -> list[Link]:
    if not blob:
        return []
    return [Link(url, text) for url, text in json.loads(zlib.decompress(blob))]


def count_links(blob: bytes | None) -> int:
    """How many links :func:`decode_links` would give, without building them (a third of
    its time: the named tuples are the rest)."""
    return len(json.loads(zlib.decompress(blob))) if blob else 0


@dataclass(frozen=True)
class EntropySnapshot:
    """A site's entropies at one moment, for many fast look-ups without store round trips.

    ``values`` leaves out the terms of entropy 0 (a term seen on one page only), which read as
    0 all the same, like unseen terms: they are a third to most of a site's vocabulary (each
    new article's own words), and a crawl holds a snapshot per site: it keeps them packed (a
    :class:`~wisdom_scrapy.store.strings.StringValues`, made of any mapping given). ``n_terms``:
    every term of the site, those included (0: not counted). ``key``: this snapshot's number in the
    process that made it (never reused, unlike ``id``: what a worker is told to analyse with).
    """

    site: str
    n_pages: int
    values: Mapping[str, float]
    n_terms: int = 0
    key: int = field(default_factory=count().__next__, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.values, StringValues):  # one given as a dict: packed too
            values = self.values
            object.__setattr__(self, "values", StringValues(list(values), list(values.values())))

    def entropy(self, terms: Iterable[str]) -> np.ndarray:
        """Entropies of ``terms`` in order; unseen terms get 0 (see the module docstring)."""
        values = cast(StringValues, self.values)  # packed by __post_init__
        return values.values_of(terms if isinstance(terms, Sequence) else list(terms))


class TermChanges(NamedTuple):
    """What :meth:`TermStore.term_changes` read: the (TF, S) of some of a site's terms and its N,
    at the store's change ``version`` of the site. ``full``: every live term of the site (a term
    not listed has TF 0); otherwise only the terms changed since the version asked about (TF
    may be 0: a replaced page took the term away). ``version`` None: the store keeps no change
    versions, and every read is a full one."""

    version: int | None
    n_pages: int
    terms: list[str]
    tf: np.ndarray
    s: np.ndarray
    full: bool


class EntropyMirror:
    """A site's entropies kept in step with the store, reading only the terms changed since the
    last read (:meth:`TermStore.term_changes`) instead of the site's whole term table.

    The site's entropy snapshot was read whole every time the site grew by a tenth, and again
    for each link analysis: O(N log N) rows per site, 39 reads of up to 30,000 rows in a crawl
    of the Python docs. N changes every entropy, but only through the divisor ln N: the mirror
    keeps each term's numerator ln TF − S/TF (:func:`entropy_numerators`), updates those of
    the changed terms, and divides them all by the new ln N, bit for bit the numbers a whole
    read gives (:func:`entropy_of_numerators`). Terms whose numerator is 0 (a term on one page
    only: entropy 0 whatever N) are not held until a later page gives them another.

    The snapshots it makes share its string table (append-only, so a snapshot made earlier
    still finds its own terms; its values array ends where the table ended then), so a read
    costs the changed rows, not a new table of every term.
    """

    def __init__(self, site: str) -> None:
        self.site = site
        #: the store's change version of the site the mirror is at (None: no read yet, or a
        #: store without versions)
        self.version: int | None = None
        self._table = StringTable()
        self._numerators = np.zeros(0, dtype=np.float64)

    @property
    def n_terms(self) -> int:
        """Terms held (the snapshots' budget counts them)."""
        return len(self._table)

    def read(self, store: TermStore) -> EntropySnapshot:
        """The site's entropies now: the changes since the last read applied, then a snapshot."""
        changes = store.term_changes(self.site, self.version)
        self._apply(changes)
        self.version = changes.version
        values = entropy_of_numerators(self._numerators, changes.n_pages)
        return EntropySnapshot(self.site, changes.n_pages, TableValues(self._table, values))

    def _apply(self, changes: TermChanges) -> None:
        numerators = entropy_numerators(changes.tf, changes.s)
        if changes.full:  # a table of its own: the earlier snapshots keep theirs
            kept = np.flatnonzero(numerators > 0)
            self._table = StringTable.of([changes.terms[i] for i in kept.tolist()])
            self._numerators = numerators[kept]
            return
        known = self._table.lookup(changes.terms)
        # held terms take their new numerators; others join only with one above 0
        wanted = np.flatnonzero((known >= 0) | (numerators > 0))
        ids = self._table.ids([changes.terms[i] for i in wanted.tolist()])
        self._table.settle()
        grown = np.zeros(len(self._table), dtype=np.float64)
        grown[: len(self._numerators)] = self._numerators
        grown[ids] = numerators[wanted]
        self._numerators = grown


class TermStore(ABC):
    """The term-entropy store of one or more sites (see the module docstring for the maths).

    Backends implement the five primitives below; everything else is shared.
    """

    uri: str

    @abstractmethod
    def add_page(
        self,
        site: str,
        url: str,
        counts: Mapping[str, int],
        links: Sequence[tuple[str, str]] = (),
    ) -> bool:
        """Add (or replace) one page's term counts and out-links, atomically.

        Returns False, changing nothing, when the URL was stored with the same counts and links.
        """

    @abstractmethod
    def term_sums(self, site: str, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(TF, S) arrays for ``terms`` in order, zeros for unseen terms; one round trip."""

    @abstractmethod
    def all_term_sums(self, site: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Every term of the site with its (TF, S)."""

    @abstractmethod
    def page_count(self, site: str) -> int:
        """Number of distinct pages (URLs) stored for ``site``."""

    @abstractmethod
    def links(self, site: str) -> dict[str, list[Link]]:
        """The site's link graph: page URL -> its out-links, as last stored."""

    def link_count(self, site: str) -> int:
        """How many out-links the site's pages hold, as last stored (the report's and
        ``wisdom-stats``' figure). This default decodes the link graph; the stores count the
        stored blobs without building the links (at the close of a crawl of a large site,
        its whole graph once more)."""
        return sum(len(links) for links in self.links(site).values())

    @abstractmethod
    def sites(self) -> list[str]:
        """Every site key with at least one page."""

    @abstractmethod
    def page_terms(self, site: str,
                   urls: Sequence[str] | None = None) -> dict[str, list[str]]:
        """The terms (TF > 0) of those of ``urls`` (None: every page) stored for ``site``, as
        last stored, by URL: what a
        crawl keeps of its pages' terms in memory can go when it leaves the site and be read
        back here in one batch when it needs them again."""

    @abstractmethod
    def put_records(self, site: str, kind: str, records: Mapping[str, bytes]) -> None:
        """Store (or replace) keyed blobs of one ``kind`` for ``site``, all in one atomic write.

        The later stages keep what they learn about a site here (the structure tracker's page
        records, the style tree, sitemap inputs), so that it survives restarts and every
        process sharing the store sees it. ``kind`` names the stage; keys are usually URLs.
        """

    @abstractmethod
    def records(self, site: str, kind: str) -> dict[str, bytes]:
        """Every blob of ``kind`` stored for ``site`` (empty when none)."""

    def record(self, site: str, kind: str, key: str) -> bytes | None:
        """The blob of ``kind`` stored for ``site`` under ``key`` (None when none): a page
        that comes back changed has its earlier blocks record read, one of the site's many.
        This default reads them all; the stores read the one."""
        return self.records(site, kind).get(key)

    def missing_pages(self, site: str, urls: Iterable[str]) -> list[str]:
        """Those of ``urls`` that have no page stored for ``site`` (in order).

        A crawl checks with it that the pages it stored are still there (a store can lose data
        behind its back: a Redis without persistence restarted, a deleted file). This default
        reads the whole link graph; backends answer from the page keys alone.
        """
        stored = self.links(site)
        return [url for url in urls if url not in stored]

    #: Whether :meth:`batch` groups writes into one atomic write. A store that does not gains
    #: nothing from pages written behind, only a later write: the crawl writes each page at once.
    batches_writes: bool = False

    def batch(self) -> AbstractContextManager[None]:
        """Group the writes made inside into fewer, larger atomic writes where the backend can
        (SQLite: one transaction; a failure stores none of them). This default writes each
        on its own, as outside a batch."""
        return nullcontext()

    def persistence_warning(self) -> str | None:
        """Why this store may lose what it is given without any call failing (None when it
        will not): checked at crawl start."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections; the store's data stays where it is."""

    def entropy(self, site: str, terms: Iterable[str]) -> dict[str, float]:
        """EN of each of ``terms`` (in [0, 1]) for ``site``, in one round trip."""
        unique = list(dict.fromkeys(terms))
        if not unique:
            return {}
        tf, s = self.term_sums(site, unique)
        values = entropy_from_sums(tf, s, self.page_count(site))
        return dict(zip(unique, values.tolist(), strict=True))

    def term_changes(self, site: str, since: int | None) -> TermChanges:
        """The (TF, S) of the site's terms changed since its change version ``since`` (all live
        terms when ``since`` is None, or when the store was reset to an earlier version), with
        N and the version now, read at one moment (:class:`EntropyMirror`). This default keeps
        no versions: every read is a full one (exact, as costly as :meth:`snapshot`)."""
        n = self.page_count(site)
        terms, tf, s = self.all_term_sums(site)
        return TermChanges(None, n, terms, tf, s, full=True)

    def snapshot(self, site: str) -> EntropySnapshot:
        """All of a site's entropies, for analysis passes that look up many terms."""
        n = self.page_count(site)
        terms, tf, s = self.all_term_sums(site)
        values = entropy_from_sums(tf, s, n)
        kept = np.flatnonzero(values)
        entropies = StringValues([terms[i] for i in kept.tolist()], values[kept])
        return EntropySnapshot(site, n, entropies, len(terms))

    def __enter__(self) -> TermStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({redact_uri(self.uri)!r})"
