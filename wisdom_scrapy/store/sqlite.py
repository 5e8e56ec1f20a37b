"""``sqlite:///path``: the default store, an embedded file that persists across crawls.

Safe with concurrent writers (several crawler processes on one machine): the file is in WAL mode
and every page update is one ``BEGIN IMMEDIATE`` transaction, so a page is counted entirely or
not at all, even if the process is killed mid-update (:meth:`SQLiteStore.batch` makes one
transaction of several pages' updates: all of them or none). Term ids are assigned by the
database and never change, so each connection caches them and resolves a page's known terms
without a query.

Schema (version 2)::

    meta(key PRIMARY KEY, value)                      -- schema version
    sites(id PRIMARY KEY, name UNIQUE, pages, version)  -- N per site, its change version
    terms(id PRIMARY KEY, site, term, tf, s, version) -- the sums TF and S, UNIQUE(site, term)
    pages(site, url, digest, record, links)           -- last counts (term ids) and out-links
    records(site, kind, key, value)                   -- keyed blobs of the later stages

Change versions: every transaction that changes a site's term sums adds 1 to the site's
``version`` and stamps the terms it changes with it, so a reader that knows the version it last
read asks for the terms changed since (:meth:`SQLiteStore.term_changes`) instead of the whole
table. A version-1 file gets the two columns when opened (its terms read as changed at version
0); a version-1 reader refuses a version-2 file, since its writes would stamp nothing.
The changed terms are found by the site's rows inside SQLite (no index on ``version``: it
would cost every write); what a change read saves is the rows returned and decoded in Python.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from itertools import filterfalse
from pathlib import Path
from urllib.parse import parse_qsl

import numpy as np

from wisdom_scrapy.store.base import (
    Link,
    StoreError,
    StoreLost,
    TermChanges,
    TermStore,
    count_links,
    decode_links,
    decode_record,
    encode_links,
    encode_record,
    page_digest,
    positive_counts,
    tf_log_tf,
)

__all__ = ["SQLiteStore", "sqlite_path"]

SCHEMA_VERSION = "2"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sites (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, pages INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS terms (
    id INTEGER PRIMARY KEY, site INTEGER NOT NULL, term TEXT NOT NULL,
    tf INTEGER NOT NULL DEFAULT 0, s REAL NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 0,
    UNIQUE (site, term));
CREATE TABLE IF NOT EXISTS pages (
    site INTEGER NOT NULL, url TEXT NOT NULL, digest BLOB NOT NULL, record BLOB NOT NULL,
    links BLOB, PRIMARY KEY (site, url)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
    site INTEGER NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (site, kind, key)) WITHOUT ROWID;
"""
#: What a version-1 file needs to become a version-2 one (:meth:`SQLiteStore._check_version`).
_MIGRATE_1_TO_2 = """
ALTER TABLE sites ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE terms ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
UPDATE meta SET value = '2' WHERE key = 'schema';
"""
# SQLite's default limit on host parameters is 999 in old builds: stay below it.
_CHUNK = 900
#: Term ids a connection caches, all sites together (~100 bytes a term): a site's vocabulary grows
#: with its pages, and a broad crawl has thousands of sites, each with a vocabulary of its own.
#: The least recently written sites' caches go first; a site alone past it starts over, since a
#: page's terms are mostly the common ones the next pages bring back (ids never change: only a
#: query more, same ids).
_TERM_ID_CACHE = 1 << 16


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _retry_busy(statement: Callable[[], object], deadline: float) -> None:
    """Run ``statement`` again while SQLite answers "database is locked" (or busy), until
    ``deadline`` (``time.monotonic()``); for the statements SQLite does not wait for itself."""
    pause = 0.005
    while True:
        try:
            statement()
            return
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
            if code not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or (
                    time.monotonic() + pause > deadline):
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


_WAL_MAGIC = (0x377F0682, 0x377F0683)  # the low bit: checksums over big-endian words
_WAL_HEADER = 32
_FRAME_HEADER = 24


def _wal_checksum(data: bytes, big_endian: bool, s0: int = 0, s1: int = 0) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), continuing from (s0, s1)."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    mask = 0xFFFFFFFF
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & mask
        s1 = (s1 + words[i + 1] + s0) & mask
    return s0, s1


def _wal_damage(wal: bytes) -> str | None:
    """What is wrong with a WAL file's contents, or None.

    SQLite replays a WAL's frames up to the first one whose salts or checksum do not match
    and silently drops the rest, so a damaged frame loses every transaction committed after it
    without an error. A file with frames needs a valid header; after a frame that fails its
    checksum, a later frame of the same WAL generation (same salts) that verifies means the
    damage is in the middle, not a torn tail (frames of an older generation, left after the WAL
    was restarted, never match the header's salts).
    """
    if len(wal) < _WAL_HEADER:
        return None
    magic, version, page_size, _, salt1, salt2, c0, c1 = struct.unpack(">8I", wal[:_WAL_HEADER])
    big = magic & 1 == 1
    if (magic not in _WAL_MAGIC or version != 3007000
            or _wal_checksum(wal[:24], big) != (c0, c1)):
        return "its header is damaged"
    size = _FRAME_HEADER + page_size
    seed, broken = (c0, c1), None
    for k, start in enumerate(range(_WAL_HEADER, len(wal) - size + 1, size)):
        head = wal[start : start + _FRAME_HEADER]
        _, _, f_salt1, f_salt2, f0, f1 = struct.unpack(">6I", head)
        page = wal[start + _FRAME_HEADER : start + size]
        valid = ((f_salt1, f_salt2) == (salt1, salt2)
                 and _wal_checksum(head[:8] + page, big, *seed) == (f0, f1))
        if not valid and broken is None:
            broken = k + 1
        elif valid and broken is not None:
            return f"frame {broken} is damaged, and later frames would be dropped"
        seed = (f0, f1)
    return None


def _check_wal(path: str) -> None:
    """Raise :class:`StoreError` when the store's WAL file is damaged (see :func:`_wal_damage`);
    read twice, so that a frame another process was writing during the first read is not
    taken for damage."""
    wal = Path(path + "-wal")
    try:
        damage = _wal_damage(wal.read_bytes()) and _wal_damage(wal.read_bytes())
    except FileNotFoundError:
        return
    if damage:
        raise StoreError(f"its write-ahead log {str(wal)!r} is corrupted ({damage}); committed "
                         "pages would be silently dropped")


def sqlite_path(uri: str) -> str:
    """File path of a ``sqlite:///relative`` or ``sqlite:////absolute`` URI."""
    return _parse_uri(uri)[0]


def _parse_uri(uri: str) -> tuple[str, float | None]:
    """(file path, ``?timeout=`` seconds or None) of a SQLite store URI."""
    prefix = "sqlite:///"
    path, _, query = uri.partition("?")
    if not path.startswith(prefix) or len(path) == len(prefix):
        raise StoreError(f"not a sqlite URI with a path: {uri!r} (use sqlite:///path/to/file.db)")
    timeout = None
    for name, value in parse_qsl(query, keep_blank_values=True):
        try:
            if name != "timeout":
                raise ValueError(f"unknown option {name!r}")
            timeout = float(value)
            if not timeout >= 0:
                raise ValueError("timeout must be a non-negative number of seconds")
        except ValueError as exc:
            raise StoreError(f"SQLite store URI {uri!r}: {exc} (option: ?timeout=SECONDS)") from exc
    return path[len(prefix) :], timeout


class SQLiteStore(TermStore):
    """Term-entropy store in one SQLite file (see the module docstring).

    ``timeout`` (the URI's ``?timeout=SECONDS`` wins) bounds the wait for a lock another
    process holds; past it the update fails with :class:`StoreError` (a crawl counts the page
    under ``wisdom/store_errors``).
    """

    def __init__(self, uri: str, *, timeout: float = 30.0, create: bool = True) -> None:
        self.uri = uri
        self.path, uri_timeout = _parse_uri(uri)
        timeout = timeout if uri_timeout is None else uri_timeout
        if not create and not Path(self.path).is_file():
            raise StoreError(f"no SQLite store at {self.path!r} (nothing crawled into it yet?)")
        self._lock = threading.RLock()  # reentrant: the writes inside a batch() take it again
        self._batching = False  # inside batch(): writes join its transaction
        # inside batch(): the term-sum changes of its pages, (site id, ids, d_tf, d_s) per page
        self._deltas: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        self._site_ids: dict[str, int] = {}
        self._term_ids: OrderedDict[int, dict[str, int]] = OrderedDict()  # least recent first
        self._cached_ids = 0  # entries of every cache of _term_ids
        try:
            parent = Path(self.path).parent
            parent.mkdir(exist_ok=True)  # its own folder only (open_store)
            _check_wal(self.path)
            self._db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._set_up(time.monotonic() + timeout)
            self._file = _identity(self.path)
        except (sqlite3.Error, OSError, StoreError) as exc:
            raise StoreError(f"cannot open SQLite store {self.path!r}: {exc}") from exc
        if not os.access(self.path, os.W_OK):
            raise StoreError(f"SQLite store {self.path!r} is not writable")

    def _set_up(self, deadline: float) -> None:
        """WAL mode, schema, version and a structural check of the file.

        Switching a new file to WAL needs an exclusive lock, and SQLite gives up on it at once
        (without its busy handler) when another process opens the same new file at that moment:
        it is retried until ``deadline``. The schema is created in one ``BEGIN IMMEDIATE``
        transaction, which does wait for the lock. ``PRAGMA quick_check`` reads every page once
        (0.4 s for an 80 MB store, warm) so that a malformed file stops the crawl at start
        instead of failing (or being trusted) page after page.
        """
        _retry_busy(lambda: self._db.execute("PRAGMA journal_mode=WAL"), deadline)
        self._db.execute("PRAGMA synchronous=NORMAL")
        problems = [row[0] for row in self._db.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise StoreError("the file is corrupted (PRAGMA quick_check: "
                             + "; ".join(problems) + ")")
        self._db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")
        self._check_version()

    def _check_version(self) -> None:
        """Set a new file's schema version, bring a version-1 file to version 2 (one
        transaction: another process opening it at the same time waits, then finds it done)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
            )
            (version,) = self._db.execute(
                "SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if version == "1":
                for statement in filter(str.strip, _MIGRATE_1_TO_2.split(";")):
                    self._db.execute(statement)
                version = SCHEMA_VERSION
            self._db.execute("COMMIT")
        finally:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        if version != SCHEMA_VERSION:
            raise StoreError(f"schema version {version}, this wisdom_scrapy reads {SCHEMA_VERSION}")

    batches_writes = True

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction for every write and read inside: a batch of
        pages costs one commit instead of one per page, and one update of each term's sums
        (:meth:`_add_batch_sums`) instead of one per page that holds it. Nothing of it is
        stored if anything inside raises or COMMIT fails; the term-id cache is then cleared
        (:meth:`_abandon`), as for a single page."""
        with self._transaction() as db:
            self._batching = True
            try:
                yield
                self._add_batch_sums(db)
            finally:
                self._batching = False
                self._deltas = []

    @contextmanager
    def _transaction(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._batching:  # inside batch(): its transaction, committed or abandoned there
                if mode == "DEFERRED":  # a read: it sees the batch's term sums
                    self._add_batch_sums(self._db)
                yield self._db
                return
            try:
                self._check_file()
                self._db.execute(f"BEGIN {mode}")
                committed = False
                try:
                    yield self._db
                    self._db.execute("COMMIT")
                    committed = True
                finally:
                    if not committed:
                        self._abandon()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path!r}: {exc}") from exc

    def _abandon(self) -> None:
        """A transaction that did not commit (its body raised, or COMMIT itself failed, e.g. on a
        full disk): roll it back if SQLite has not, and forget the site and term ids cached
        during it, which were rolled back with it (kept, they would send a later page's counts
        to no term or to another one)."""
        self._site_ids.clear()
        self._term_ids.clear()
        self._cached_ids = 0
        if self._db.in_transaction:
            with suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")

    def _check_file(self) -> None:
        """Raise :class:`StoreLost` when the store file was deleted or replaced since it was
        opened: SQLite would go on writing to the unlinked file, and all would vanish at close."""
        try:
            now = _identity(self.path)
        except OSError:
            now = None
        if now != self._file:
            raise StoreLost(
                f"SQLite store {self.path!r} was deleted or replaced while open: what was "
                "written to it since it was opened is gone"
            )

    def _site_id(self, db: sqlite3.Connection, site: str, create: bool) -> int | None:
        sid = self._site_ids.get(site)
        if sid is None:
            if create:
                db.execute("INSERT OR IGNORE INTO sites (name) VALUES (?)", (site,))
            row = db.execute("SELECT id FROM sites WHERE name = ?", (site,)).fetchone()
            if row is None:
                return None
            sid = self._site_ids[site] = row[0]
        return sid

    def _ids(self, db: sqlite3.Connection, sid: int, terms: Sequence[str]) -> np.ndarray:
        """Term ids of ``terms`` (creating the missing ones) in order."""
        cache = self._site_term_ids(sid)
        missing = list(filterfalse(cache.__contains__, terms))
        self._make_room(sid, len(missing))
        if len(cache) + len(missing) > _TERM_ID_CACHE:  # the site alone: its cache starts over
            self._cached_ids -= len(cache)
            cache.clear()
            missing = list(terms)
        if missing:
            before = len(cache)
            db.executemany(
                "INSERT OR IGNORE INTO terms (site, term) VALUES (?, ?)",
                ((sid, t) for t in missing),
            )
            for i in range(0, len(missing), _CHUNK):
                chunk = missing[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                cache.update(
                    db.execute(
                        f"SELECT term, id FROM terms WHERE site = ? AND term IN ({marks})",
                        (sid, *chunk),
                    )
                )
            self._cached_ids += len(cache) - before
        return np.fromiter(map(cache.__getitem__, terms), dtype=np.int64, count=len(terms))

    def _site_term_ids(self, sid: int) -> dict[str, int]:
        """Site ``sid``'s term-id cache, now the most recently used."""
        cache = self._term_ids.get(sid)
        if cache is None:
            cache = self._term_ids[sid] = {}
        self._term_ids.move_to_end(sid)
        return cache

    def _make_room(self, sid: int, n: int) -> None:
        """Drop the least recently used other sites' caches until ``n`` more ids fit."""
        caches = self._term_ids
        while self._cached_ids + n > _TERM_ID_CACHE and next(iter(caches)) != sid:
            self._cached_ids -= len(caches.popitem(last=False)[1])

    def add_page(
        self,
        site: str,
        url: str,
        counts: Mapping[str, int],
        links: Sequence[tuple[str, str]] = (),
    ) -> bool:
        digest = page_digest(counts, links)
        terms, tfs = positive_counts(counts)
        with self._transaction() as db:
            sid = self._site_id(db, site, create=True)
            old = db.execute(
                "SELECT digest, record FROM pages WHERE site = ? AND url = ?", (sid, url)
            ).fetchone()
            if old is not None and old[0] == digest:
                return False
            assert sid is not None
            ids = self._ids(db, sid, terms)
            old_ids, old_tfs = decode_record(old[1] if old else None)
            all_ids = np.concatenate([ids, old_ids])
            d_tf = np.concatenate([tfs, -old_tfs])
            d_s = np.concatenate([tf_log_tf(tfs), -tf_log_tf(old_tfs)])
            if self._batching:  # summed over the batch's pages, applied at its end
                self._deltas.append((sid, all_ids, d_tf, d_s))
            else:
                self._add_sums(db, all_ids, d_tf, d_s, self._next_version(db, sid), url)
            db.execute(
                "INSERT OR REPLACE INTO pages (site, url, digest, record, links) "
                "VALUES (?, ?, ?, ?, ?)",
                (sid, url, digest, encode_record(ids, tfs), encode_links(links) if links else None),
            )
            if old is None:
                db.execute("UPDATE sites SET pages = pages + 1 WHERE id = ?", (sid,))
        return True

    @staticmethod
    def _next_version(db: sqlite3.Connection, sid: int) -> int:
        """The site's change version, one up, for the terms this transaction changes."""
        db.execute("UPDATE sites SET version = version + 1 WHERE id = ?", (sid,))
        return int(db.execute("SELECT version FROM sites WHERE id = ?", (sid,)).fetchone()[0])

    def _add_sums(self, db: sqlite3.Connection, ids: np.ndarray, d_tf: np.ndarray,
                  d_s: np.ndarray, versions: np.ndarray | int, what: str) -> None:
        """Add ``d_tf`` and ``d_s`` to the sums of the terms ``ids``, stamping each with its
        site's new change version (``versions``: one per term, or one for all)."""
        stamps = np.broadcast_to(np.asarray(versions, dtype=np.int64), ids.shape)
        updated = db.executemany(
            "UPDATE terms SET tf = tf + ?, s = s + ?, version = ? WHERE id = ?",
            zip(d_tf.tolist(), d_s.tolist(), stamps.tolist(), ids.tolist(), strict=True),
        ).rowcount
        if updated != len(ids):  # a cached id that is not in the file: never store
            raise StoreError(f"SQLite store {self.path!r}: {len(ids) - updated} term "
                             f"ids of {what} not found; the page is retried")

    def _add_batch_sums(self, db: sqlite3.Connection) -> None:
        """The term-sum changes of the batch's pages so far, one UPDATE per distinct term (the
        terms a site's pages share, its template's, are updated once per batch, not per page)."""
        if not self._deltas:
            return
        deltas, self._deltas = self._deltas, []
        version = {sid: self._next_version(db, sid) for sid in dict.fromkeys(d[0] for d in deltas)}
        page_version = np.array([version[d[0]] for d in deltas], dtype=np.int64)
        ids, d_tf, d_s = (np.concatenate(part) for part in zip(*(d[1:] for d in deltas),
                                                               strict=True))
        stamps = np.repeat(page_version, [len(d[1]) for d in deltas])
        terms, first, where = np.unique(ids, return_index=True, return_inverse=True)
        tf = np.zeros(len(terms), np.int64)
        np.add.at(tf, where, d_tf)
        s = np.bincount(where, weights=d_s, minlength=len(terms))
        self._add_sums(db, terms, tf, s, stamps[first], f"a batch of {len(deltas)} pages")

    def term_sums(self, site: str, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        found: dict[str, tuple[int, float]] = {}
        with self._transaction("DEFERRED") as db:
            sid = self._site_id(db, site, create=False)
            for i in range(0, len(terms) if sid is not None else 0, _CHUNK):
                chunk = list(terms[i : i + _CHUNK])
                marks = ",".join("?" * len(chunk))
                for term, tf, s in db.execute(
                    f"SELECT term, tf, s FROM terms WHERE site = ? AND term IN ({marks})",
                    (sid, *chunk),
                ):
                    found[term] = (tf, s)
        sums = np.array([found.get(t, (0, 0.0)) for t in terms], dtype=np.float64).reshape(-1, 2)
        return sums[:, 0], sums[:, 1]

    def all_term_sums(self, site: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        with self._transaction("DEFERRED") as db:
            rows = db.execute(
                "SELECT term, tf, s FROM terms JOIN sites ON sites.id = terms.site "
                "WHERE sites.name = ? AND tf > 0",
                (site,),
            ).fetchall()
        terms = [r[0] for r in rows]
        sums = np.array([r[1:] for r in rows], dtype=np.float64).reshape(-1, 2)
        return terms, sums[:, 0], sums[:, 1]

    def term_changes(self, site: str, since: int | None) -> TermChanges:
        """Read with the site's N and change version in one transaction (module docstring).
        Inside :meth:`batch` the version read is not committed yet: a rolled-back batch would
        give it again to other changes, so such a read is a whole one and names no version
        (the next read is whole too)."""
        if self._batching:
            return self._whole_terms(site)
        with self._transaction("DEFERRED") as db:
            row = db.execute("SELECT id, pages, version FROM sites WHERE name = ?",
                             (site,)).fetchone()
            if row is None:
                empty = np.zeros(0)
                return TermChanges(0, 0, [], empty, empty, full=True)
            sid, n_pages, version = row
            full = since is None or since > version  # a store reset: read it whole
            rows = db.execute(
                "SELECT term, tf, s FROM terms WHERE site = ? AND tf > 0" if full else
                "SELECT term, tf, s FROM terms WHERE site = ? AND version > ?",
                (sid,) if full else (sid, since),
            ).fetchall()
        terms = [r[0] for r in rows]
        sums = np.array([r[1:] for r in rows], dtype=np.float64).reshape(-1, 2)
        return TermChanges(int(version), int(n_pages), terms, sums[:, 0], sums[:, 1], full)

    def _whole_terms(self, site: str) -> TermChanges:
        terms, tf, s = self.all_term_sums(site)
        return TermChanges(None, self.page_count(site), list(terms), tf, s, full=True)

    def page_count(self, site: str) -> int:
        with self._transaction("DEFERRED") as db:
            row = db.execute("SELECT pages FROM sites WHERE name = ?", (site,)).fetchone()
        return int(row[0]) if row else 0

    def links(self, site: str) -> dict[str, list[Link]]:
        return {url: decode_links(blob) for url, blob in self._link_blobs(site)}

    def link_count(self, site: str) -> int:
        return sum(count_links(blob) for _, blob in self._link_blobs(site))

    def _link_blobs(self, site: str) -> list[tuple[str, bytes | None]]:
        with self._transaction("DEFERRED") as db:
            return db.execute(
                "SELECT url, links FROM pages JOIN sites ON sites.id = pages.site "
                "WHERE sites.name = ?",
                (site,),
            ).fetchall()

    def missing_pages(self, site: str, urls: Iterable[str]) -> list[str]:
        wanted = list(urls)
        found: set[str] = set()
        with self._transaction("DEFERRED") as db:
            sid = self._site_id(db, site, create=False)
            for i in range(0, len(wanted) if sid is not None else 0, _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                found.update(url for (url,) in db.execute(
                    f"SELECT url FROM pages WHERE site = ? AND url IN ({marks})", (sid, *chunk)))
        return [url for url in wanted if url not in found]

    def page_terms(self, site: str,
                   urls: Sequence[str] | None = None) -> dict[str, list[str]]:
        names: dict[int, str] = {}
        with self._transaction("DEFERRED") as db:
            sid = self._site_id(db, site, create=False)
            if sid is None:
                return {}
            if urls is None:
                rows: Iterable[tuple[str, bytes]] = db.execute(
                    "SELECT url, record FROM pages WHERE site = ?", (sid,)).fetchall()
            else:
                rows = self._page_rows(db, sid, urls)
            records = {url: decode_record(record)[0] for url, record in rows}
            wanted = np.unique(np.concatenate([np.zeros(0, np.int64), *records.values()]))
            for i in range(0, len(wanted), _CHUNK):
                chunk_ids = wanted[i : i + _CHUNK].tolist()
                marks = ",".join("?" * len(chunk_ids))
                names.update(db.execute(f"SELECT id, term FROM terms WHERE id IN ({marks})",
                                        chunk_ids))
        return {url: [names[i] for i in ids.tolist()] for url, ids in records.items()}

    @staticmethod
    def _page_rows(db: sqlite3.Connection, sid: int,
                   urls: Sequence[str]) -> list[tuple[str, bytes]]:
        """(URL, record) of those of ``urls`` stored for the site ``sid``."""
        rows = []
        for i in range(0, len(urls), _CHUNK):
            chunk = list(urls[i : i + _CHUNK])
            marks = ",".join("?" * len(chunk))
            rows += db.execute(f"SELECT url, record FROM pages WHERE site = ? AND url IN ({marks})",
                               (sid, *chunk)).fetchall()
        return rows

    def sites(self) -> list[str]:
        with self._transaction("DEFERRED") as db:
            return [r[0] for r in db.execute("SELECT name FROM sites WHERE pages > 0")]

    def put_records(self, site: str, kind: str, records: Mapping[str, bytes]) -> None:
        if not records:
            return
        with self._transaction() as db:
            sid = self._site_id(db, site, create=True)
            db.executemany(
                "INSERT OR REPLACE INTO records (site, kind, key, value) VALUES (?, ?, ?, ?)",
                ((sid, kind, key, bytes(value)) for key, value in records.items()),
            )

    def records(self, site: str, kind: str) -> dict[str, bytes]:
        with self._transaction("DEFERRED") as db:
            rows = db.execute(
                "SELECT key, value FROM records JOIN sites ON sites.id = records.site "
                "WHERE sites.name = ? AND kind = ?",
                (site, kind),
            ).fetchall()
        return {key: bytes(value) for key, value in rows}

    def record(self, site: str, kind: str, key: str) -> bytes | None:
        with self._transaction("DEFERRED") as db:
            row = db.execute(
                "SELECT value FROM records JOIN sites ON sites.id = records.site "
                "WHERE sites.name = ? AND kind = ? AND key = ?",
                (site, kind, key),
            ).fetchone()
        return None if row is None else bytes(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
