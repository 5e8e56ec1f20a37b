"""Feed-speed benchmark: time to feed a parsed page into the term-entropy store, as a ratio to
lxml's parse time of the same page, per store backend, with a breakdown and the store's size.

Runs over every page of the Python 3.11 documentation (``/usr/share/doc/python3.11/html``, the
``python3.11-doc`` package, ~530 Sphinx pages) read from disk as bytes: no HTTP, no Scrapy engine.
One run prints everything; ``--json OUT`` writes all figures, per page included.

    python benchmarks/feed_speed.py
    python benchmarks/feed_speed.py --pages 100 --backends memory,sqlite --json fs.json
    python benchmarks/feed_speed.py --profile 25          # + cProfile of the SQLite feed

What is timed (``time.perf_counter``, one page at a time):

* **parse**: ``lxml.etree.fromstring(body, parser=lxml.html.HTMLParser(recover=True,
  encoding="utf-8", huge_tree=True), base_url=url)`` — exactly what ``parsel.Selector`` (and so
  Scrapy's ``response.selector``) does to a response's text (parsel ``create_root_node``; the
  NUL-stripping and re-encoding it does before are done once, outside the clock).
* **feed**: ``wisdom_scrapy.engine.writes.feed_tree(store, root, url)`` on the tree just parsed: the
  page model (one walk of the tree), its terms and out-links, one ``store.add_page``.

Noise (the machine is shared): every pass parses and feeds page by page, interleaved, so load
spikes hit both; the whole thing is repeated ``--runs`` times (default 3) and each page keeps
the *minimum* of its runs (noise only ever adds time). Every pass starts from the same state —
a fresh store (new SQLite file, flushed Redis database, new memory store) and cleared
stemming/URL-join caches — so page i meets the same warm-up in every run: the figures are those
of a cold first crawl of the site, caches warming as it goes.

Passes per run: one ``feed_tree`` pass per backend (the headline figures), then one breakdown
pass that calls the feed's steps one by one (page model, its term counts, its links, then
``add_page`` on every backend with the same counts), then one store-write pass per backend: the
pages' updates (counts, links, block fingerprints: what a crawl writes), computed beforehand,
written page by page (``PageUpdate.apply``) and then written behind as a crawl does
(:class:`~wisdom_scrapy.engine.writes.WriteBehind`, ``WISDOM_STORE_BATCH_PAGES`` per transaction; a
batch's write is timed with the page that fills it; both figures are the best run's totals).
The parse time of a page is its minimum over all passes. A last, untimed pass measures the
store's size after 100, 300 and all pages.

Pages are fed in crawl order (breadth-first from ``index.html``, as a spider would reach them;
pages no link reaches come last, sorted), so the 100- and 300-page sizes are those of a crawl.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import io
import os
import pstats
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import lxml.html
from _common import dist_version, environment, markdown_table, write_json
from lxml import etree

from wisdom_scrapy.engine import writes as feed_module
from wisdom_scrapy.engine.writes import PageUpdate, WriteBehind, feed_tree
from wisdom_scrapy.page import terms as text_module
from wisdom_scrapy.page import urls as urls_module
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.terms import count_terms
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.settings import DEFAULTS
from wisdom_scrapy.store import TermStore, open_store
from wisdom_scrapy.store.base import encode_links, page_digest

DOCS_DIR = Path("/usr/share/doc/python3.11/html")
BASE_URL = "http://127.0.0.1:8000/"
ALL_BACKENDS = ("memory", "sqlite", "redis")
SIZE_CHECKPOINTS = (100, 300)
TARGET_RATIO = 1.0  # feed / parse with SQLite (DESIGN.md, "Speed")
BATCH_PAGES = DEFAULTS["WISDOM_STORE_BATCH_PAGES"]

clock = time.perf_counter
cpu_clock = time.thread_time  # CPU time of this thread: blind to other processes' load


# --------------------------------------------------------------------------------------------
# Pages


@dataclass(frozen=True)
class Page:
    url: str
    body: bytes  # what parsel hands to lxml: NULs removed, stripped, UTF-8


def _prepare(raw: bytes) -> bytes:
    """The bytes parsel passes to lxml for a response's text (``create_root_node``)."""
    text = raw.decode("utf-8", "replace")
    return text.strip().replace("\x00", "").encode("utf-8") or b"<html/>"


def _href_targets(body: bytes, url: str) -> Iterator[str]:
    root = etree.fromstring(body, parser=lxml.html.HTMLParser(recover=True, encoding="utf-8"))
    if root is None:
        return
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        if href and not href.startswith(("#", "mailto:", "javascript:")):
            yield urljoin(url, href).split("#", 1)[0].split("?", 1)[0]


def load_pages(docs: Path, limit: int | None) -> list[Page]:
    """Every ``*.html`` under ``docs``, in breadth-first crawl order from ``index.html``."""
    files = sorted(p for p in docs.rglob("*.html") if p.is_file())
    if not files:
        raise SystemExit(f"no HTML pages under {docs}: install python3.11-doc or pass --docs")
    bodies = {BASE_URL + p.relative_to(docs).as_posix(): _prepare(p.read_bytes()) for p in files}
    start = BASE_URL + "index.html"
    order: list[str] = []
    seen: set[str] = set()
    queue = deque([start] if start in bodies else [])
    seen.update(queue)
    while queue:
        url = queue.popleft()
        order.append(url)
        for target in _href_targets(bodies[url], url):
            if target in bodies and target not in seen:
                seen.add(target)
                queue.append(target)
    order.extend(url for url in bodies if url not in seen)  # unreachable: sorted, last
    return [Page(url, bodies[url]) for url in order[:limit]]


def parse(page: Page) -> Any:
    """Parse as ``parsel.Selector`` does (see the module docstring)."""
    parser = lxml.html.HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    return etree.fromstring(page.body, parser=parser, base_url=page.url)


# --------------------------------------------------------------------------------------------
# Backends


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A private ``redis-server`` on a free loopback port, no persistence, stopped on close."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            raise RuntimeError("redis-server not found")
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        import redis

        self.client = redis.Redis(host="127.0.0.1", port=self.port, db=0)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.version = str(self.client.info("server").get("redis_version", "?"))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Backends:
    """Makes fresh stores of each backend under test."""

    names: list[str]
    tmp: Path
    redis: RedisServer | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    _serial: int = 0

    def fresh(self, name: str) -> TermStore:
        if name == "memory":
            return open_store("memory://")
        if name == "sqlite":
            self._serial += 1
            path = self.tmp / f"store-{self._serial}.db"
            return open_store(f"sqlite:///{path}")
        if name == "redis":
            assert self.redis is not None
            self.redis.client.flushall()
            return open_store(self.redis.url)
        raise ValueError(name)

    def discard(self, name: str, store: TermStore) -> None:
        store.close()
        path = getattr(store, "path", None)
        if name == "sqlite" and path:
            for suffix in ("", "-wal", "-shm"):
                Path(path + suffix).unlink(missing_ok=True)


def setup_backends(wanted: Sequence[str], tmp: Path) -> Backends:
    backends = Backends([], tmp)
    for name in wanted:
        if name == "redis":
            if importlib.util.find_spec("wisdom_scrapy.store.redis") is None:
                backends.skipped[name] = "wisdom_scrapy.store.redis does not exist yet"
                continue
            try:
                backends.redis = RedisServer(tmp)
                backends.fresh("redis").close()  # the backend opens against our server
            except Exception as exc:
                if backends.redis is not None:
                    backends.redis.close()
                    backends.redis = None
                backends.skipped[name] = f"{type(exc).__name__}: {exc}"
                continue
        backends.names.append(name)
    return backends


# --------------------------------------------------------------------------------------------
# Timed passes


def clear_caches() -> None:
    """Forget every memo the feed keeps between pages, so each pass starts cold."""
    for module in (text_module, urls_module, feed_module):
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


Stamp = tuple[float, float]


def stamp() -> Stamp:
    """Wall clock and this thread's CPU time, in seconds."""
    return clock(), cpu_clock()


@dataclass
class Timings:
    """Every (wall, CPU) sample in seconds, per measurement name and page."""

    n: int
    samples: dict[str, list[list[Stamp]]] = field(default_factory=dict)

    def add(self, name: str, i: int, start: Stamp, end: Stamp) -> None:
        rows = self.samples.setdefault(name, [[] for _ in range(self.n)])
        rows[i].append((end[0] - start[0], end[1] - start[1]))

    def __contains__(self, name: str) -> bool:
        return name in self.samples

    def min(self, name: str, cpu: bool = False) -> list[float]:
        """Per page, the least of its samples (noise only ever adds time)."""
        k = int(cpu)
        return [min(x[k] for x in row) for row in self.samples[name]]

    def median(self, name: str, cpu: bool = False) -> list[float]:
        k = int(cpu)
        return [statistics.median(x[k] for x in row) for row in self.samples[name]]

    def total(self, name: str, cpu: bool = False) -> float:
        return sum(self.min(name, cpu))

    def best_run(self, name: str, cpu: bool = False) -> float:
        """The least total of one run (for batches: a page's minimum would pick the runs whose
        batch writes were not interrupted, page by page, over runs that each were)."""
        rows, k = self.samples[name], int(cpu)
        return min(sum(row[run][k] for row in rows) for run in range(len(rows[0])))


def feed_pass(pages: Sequence[Page], store: TermStore, timings: Timings, name: str) -> None:
    """Parse and ``feed_tree`` page by page; both timed."""
    clear_caches()
    gc.collect()
    for i, page in enumerate(pages):
        t0 = stamp()
        root = parse(page)
        t1 = stamp()
        feed_tree(store, root, page.url)
        t2 = stamp()
        timings.add("parse", i, t0, t1)
        timings.add(f"feed:{name}", i, t1, t2)


def write_pass(updates: Sequence[PageUpdate], backends: Backends, timings: Timings) -> None:
    """Each backend: the updates written page by page, then behind (module docstring)."""
    for name in backends.names:
        store = backends.fresh(name)
        for i, update in enumerate(updates):
            t0 = stamp()
            update.apply(store)
            timings.add(f"write:{name}", i, t0, stamp())
        backends.discard(name, store)
        behind = WriteBehind(backends.fresh(name), BATCH_PAGES, lambda *_: None)
        for i, update in enumerate(updates):
            t0 = stamp()
            behind.add(update)
            if i == len(updates) - 1:
                behind.flush()
            timings.add(f"write_behind:{name}", i, t0, stamp())
        backends.discard(name, behind.store)


@dataclass
class PageFacts:
    terms: int = 0  # term occurrences (Σ tf)
    distinct: int = 0
    links: int = 0
    text_chars: int = 0


def breakdown_pass(
    pages: Sequence[Page],
    stores: dict[str, TermStore],
    timings: Timings,
    facts: list[PageFacts],
) -> None:
    """The steps of ``feed_tree`` one by one, timed; ``add_page`` on every backend in turn.

    The steps: the page model (one walk of the tree), its term counts, its links. The counts
    run cold, as in the feed (the stemming cache holds the words of the pages before). Last, a
    floor: the least a Python feed can do to count a page's words (text and counting in C).
    """
    clear_caches()
    gc.collect()
    names = list(stores)
    for i, page in enumerate(pages):
        t0 = stamp()
        root = parse(page)
        t1 = stamp()
        timings.add("parse", i, t0, t1)
        site = host_key(page.url)
        model = PageModel.from_tree(root, page.url)
        t2 = stamp()
        counts = model.page_counts()
        t3 = stamp()
        links = [(link.url, link.text) for link in model.links()]
        t4 = stamp()
        timings.add("page_model", i, t1, t2)
        timings.add("page_counts", i, t2, t3)
        timings.add("links", i, t3, t4)
        texts = model.texts()
        t4 = stamp()
        count_terms(texts)  # the same text again, every word already stemmed
        timings.add("count_terms (warm)", i, t4, stamp())
        t4 = stamp()
        k = i % len(names) if names else 0  # rotate which store writes first
        for name in names[k:] + names[:k]:
            t6 = stamp()
            stores[name].add_page(site, page.url, counts, links)
            timings.add(f"add_page:{name}", i, t6, stamp())
        # Inside every add_page: the digest and (SQLite, Redis) the links blob, again on their own.
        t7 = stamp()
        page_digest(counts, links)
        t8 = stamp()
        if links:
            encode_links(links)
        timings.add("in add_page: page_digest", i, t7, t8)
        timings.add("in add_page: encode_links", i, t8, stamp())
        # A lower bound for any Python feed: the tree's text in one C call, its words counted by
        # a C Counter (no model, no script/style exclusion, no stemming, no links, no store).
        t9 = stamp()
        Counter(etree.tostring(root, method="text", encoding=str).lower().split())
        timings.add("floor: words", i, t9, stamp())
        facts[i] = PageFacts(
            sum(counts.values()), len(counts), len(links), sum(len(t) for t in texts)
        )


# --------------------------------------------------------------------------------------------
# Store size


def sqlite_size(path: str) -> dict[str, Any]:
    """File size after checkpoint + VACUUM and table sizes from ``dbstat`` (if compiled in)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        n_terms = db.execute("SELECT COUNT(*) FROM terms").fetchone()[0]
        n_pages = db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        blobs = db.execute(
            "SELECT COALESCE(SUM(LENGTH(record)), 0), COALESCE(SUM(LENGTH(links)), 0),"
            " COALESCE(SUM(LENGTH(url)), 0) FROM pages"
        ).fetchone()
        tables: dict[str, int] | None
        try:
            tables = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
        except sqlite3.Error:
            tables = None
    finally:
        db.close()
    file_bytes = os.path.getsize(path)
    out: dict[str, Any] = {
        "file_bytes": file_bytes,
        "terms": n_terms,
        "pages": n_pages,
        "record_blob_bytes": blobs[0],
        "links_blob_bytes": blobs[1],
        "url_bytes": blobs[2],
        "dbstat": tables,
    }
    if tables is not None:
        term_bytes = sum(v for k, v in tables.items() if k == "terms" or "autoindex_terms" in k)
        page_bytes = sum(v for k, v in tables.items() if k == "pages" or "autoindex_pages" in k)
        out["term_table_bytes"] = term_bytes
        out["page_table_bytes"] = page_bytes
        out["other_bytes"] = file_bytes - term_bytes - page_bytes
    else:  # no dbstat: split the file by blob sizes (pages) and the rest (terms)
        page_bytes = blobs[0] + blobs[1] + blobs[2] + 16 * n_pages
        out["term_table_bytes"] = file_bytes - page_bytes
        out["page_table_bytes"] = page_bytes
        out["other_bytes"] = 0
    out["bytes_per_term"] = out["term_table_bytes"] / max(n_terms, 1)
    out["bytes_per_page"] = out["page_table_bytes"] / max(n_pages, 1)
    return out


# Redis key layout of wisdom_scrapy.store.redis (version 1): ``prefix:{site}:<part>``. The parts
# that grow with the vocabulary are charged to terms, those that grow with pages to pages.
_REDIS_PARTS = {
    "ids": "terms",
    "tf": "terms",
    "s": "terms",
    "pages": "pages",
    "links": "pages",
    "meta": "site",
    "sites": "site",
}


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def redis_size(server: RedisServer) -> dict[str, Any]:
    """``MEMORY USAGE key SAMPLES 0`` (exact) of every key, by key part and by kind.

    Per-term bytes = the parts that hold the term ids and the sums (``ids``, ``tf``, ``s``);
    per-page bytes = the parts that hold page records and links (``pages``, ``links``). A key
    whose last part is unknown (a later layout) is reported as ``other``, never dropped.
    """
    client = server.client
    by_part: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    keys: dict[str, dict[str, Any]] = {}
    for raw in client.scan_iter(count=1000):
        key = _text(raw)
        part = key.rsplit(":", 1)[-1]
        kind = _REDIS_PARTS.get(part, "other")
        usage = int(client.memory_usage(raw, samples=0) or 0)
        by_part[part] = by_part.get(part, 0) + usage
        by_kind[kind] = by_kind.get(kind, 0) + usage
        ktype = _text(client.type(raw))
        size = {"hash": client.hlen, "zset": client.zcard, "set": client.scard}.get(ktype)
        keys[key] = {"type": ktype, "kind": kind, "bytes": usage}
        if size is not None:
            keys[key]["entries"] = int(size(raw))
        if ktype == "hash":
            keys[key]["encoding"] = _text(client.object("encoding", raw))
    return {
        "keys": keys,
        "by_part": by_part,
        "by_kind": by_kind,
        "key_bytes": sum(by_kind.values()),
        "used_memory": int(client.info("memory")["used_memory"]),
    }


def size_pass(
    pages: Sequence[Page], backends: Backends, checkpoints: Sequence[int]
) -> dict[str, dict[int, dict[str, Any]]]:
    """Untimed: feed fresh SQLite/Redis stores and measure them at each checkpoint."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    stores = {n: backends.fresh(n) for n in backends.names if n in ("sqlite", "redis")}
    for name in stores:
        out[name] = {}
    baseline = None
    if "redis" in stores and backends.redis is not None:
        baseline = int(backends.redis.client.info("memory")["used_memory"])
    for i, page in enumerate(pages, 1):
        root = parse(page)
        for store in stores.values():
            feed_tree(store, root, page.url)
        if i in checkpoints:
            for name, store in stores.items():
                if name == "sqlite":
                    out[name][i] = sqlite_size(store.path)  # type: ignore[attr-defined]
                else:
                    assert backends.redis is not None
                    figures = redis_size(backends.redis)
                    figures["used_memory_delta"] = figures["used_memory"] - (baseline or 0)
                    site = host_key(page.url)
                    figures["pages"] = store.page_count(site)
                    figures["terms"] = len(store.all_term_sums(site)[0])
                    out[name][i] = figures
    for name, store in stores.items():
        backends.discard(name, store)
    return out


# --------------------------------------------------------------------------------------------
# Profile


def profile_pass(pages: Sequence[Page], store: TermStore, top: int) -> tuple[str, list[dict]]:
    """cProfile of ``feed_tree`` over all pages (parse outside the profiler)."""
    clear_caches()
    profiler = cProfile.Profile()
    for page in pages:
        root = parse(page)
        profiler.enable()
        feed_tree(store, root, page.url)
        profiler.disable()
    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream)
    stats.sort_stats("tottime").print_stats(top)
    rows = []
    for (filename, line, func), (cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append(
            {
                "function": f"{Path(filename).name}:{line}({func})",
                "calls": nc,
                "primitive_calls": cc,
                "tottime": tt,
                "cumtime": ct,
            }
        )
    rows.sort(key=lambda r: -r["tottime"])
    return stream.getvalue(), rows[:top]


# --------------------------------------------------------------------------------------------
# Report


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def _kib(n: float) -> str:
    return f"{n / 1024:.1f} KiB"


def ratio_stats(feed: Sequence[float], parse_times: Sequence[float]) -> dict[str, float]:
    """Per-page feed/parse ratios summarised, and the ratio of the totals."""
    ratios = sorted(f / p for f, p in zip(feed, parse_times, strict=True) if p > 0)
    return {
        "mean_of_ratios": statistics.fmean(ratios),
        "median_ratio": statistics.median(ratios),
        "p90_ratio": ratios[min(len(ratios) - 1, int(0.9 * len(ratios)))],
        "ratio_of_totals": sum(feed) / sum(parse_times),
    }


def _backend_version(name: str, backends: Backends) -> str:
    if name == "sqlite":
        return f"SQLite {sqlite3.sqlite_version}"
    if name == "redis" and backends.redis is not None:
        return f"Redis {backends.redis.version}"
    return "-"


@dataclass
class Measured:
    """Everything one benchmark run measured."""

    pages: list[Page]
    runs: int
    backends: Backends
    timings: Timings
    facts: list[PageFacts]
    sizes: dict[str, dict[int, dict[str, Any]]]
    profile_text: str = ""
    profile_rows: list[dict] = field(default_factory=list)


def measure(pages: list[Page], backends: Backends, args: argparse.Namespace) -> Measured:
    """All timed passes, then the size and profile passes (see the module docstring)."""
    n = len(pages)
    names = backends.names
    timings = Timings(n)
    facts = [PageFacts() for _ in range(n)]
    for page in pages[: min(n, 20)]:  # untimed warm-up: imports, first calls, CPU caches
        feed_tree(open_store("memory://"), parse(page), page.url)
    for run in range(args.runs):
        order = names[run % len(names) :] + names[: run % len(names)]
        for name in order:
            store = backends.fresh(name)
            t0 = clock()
            feed_pass(pages, store, timings, name)
            print(f"run {run + 1}/{args.runs}: feed_tree → {name:6} {clock() - t0:6.1f} s")
            backends.discard(name, store)
        stores = {name: backends.fresh(name) for name in order}
        t0 = clock()
        breakdown_pass(pages, stores, timings, facts)
        print(f"run {run + 1}/{args.runs}: breakdown          {clock() - t0:6.1f} s")
        for name, store in stores.items():
            backends.discard(name, store)
        t0 = clock()
        write_pass([PageUpdate.of(PageModel.from_tree(parse(p), p.url)) for p in pages],
                   backends, timings)
        print(f"run {run + 1}/{args.runs}: store writes       {clock() - t0:6.1f} s")
    sizes: dict[str, dict[int, dict[str, Any]]] = {}
    if not args.no_size:
        checkpoints = sorted({c for c in SIZE_CHECKPOINTS if c < n} | {n})
        sizes = size_pass(pages, backends, checkpoints)
    measured = Measured(pages, args.runs, backends, timings, facts, sizes)
    if args.profile:
        name = "sqlite" if "sqlite" in names else names[0]
        store = backends.fresh(name)
        measured.profile_text, measured.profile_rows = profile_pass(pages, store, args.profile)
        backends.discard(name, store)
    return measured


def speed_table(m: Measured) -> tuple[str, dict[str, Any]]:
    n = len(m.pages)
    t = m.timings
    parse_times = t.min("parse")
    parse_total = sum(parse_times)
    parse_cpu = t.total("parse", cpu=True)
    figures: dict[str, Any] = {
        "parse": {
            "total_s": parse_total,
            "total_cpu_s": parse_cpu,
            "total_median_s": sum(t.median("parse")),
            "pages_per_s": n / parse_total,
        }
    }
    rows = [["parse (lxml, as parsel)", "-", f"{n / parse_total:.1f}", _ms(parse_total / n)]]
    rows[0] += ["-"] * 5
    for name in m.backends.names:
        feed = t.min(f"feed:{name}")
        feed_cpu = t.total(f"feed:{name}", cpu=True)
        stats = ratio_stats(feed, parse_times)
        figures[name] = {
            "pages_per_s": n / sum(feed),
            "total_s": sum(feed),
            "total_cpu_s": feed_cpu,
            "total_median_s": sum(t.median(f"feed:{name}")),
            "cpu_ratio_of_totals": feed_cpu / parse_cpu,
            **stats,
        }
        verdict = ""
        if name == "sqlite":
            verdict = " ✓" if stats["ratio_of_totals"] <= TARGET_RATIO else " ✗"
        cpu_note = " (client only)" if name == "redis" else ""
        rows.append(
            [
                f"feed_tree → {name}",
                _backend_version(name, m.backends),
                f"{n / sum(feed):.1f}",
                _ms(sum(feed) / n),
                f"{stats['mean_of_ratios']:.2f}",
                f"{stats['median_ratio']:.2f}",
                f"{stats['p90_ratio']:.2f}",
                f"**{stats['ratio_of_totals']:.2f}**{verdict}",
                f"{feed_cpu / parse_cpu:.2f}{cpu_note}",
            ]
        )
    for name, reason in m.backends.skipped.items():
        rows.append([f"feed_tree → {name}", f"skipped: {reason}", *["-"] * 7])
    headers = ["step", "store", "pages/s", "ms/page"]
    headers += ["feed/parse: mean", "median", "p90", "Σfeed/Σparse", "same, CPU time"]
    title = (
        f"### Feed speed ({n} pages, each page the min of {m.runs} runs; "
        f"target: Σfeed/Σparse ≤ {TARGET_RATIO} with SQLite)"
    )
    return f"{title}\n\n{markdown_table(headers, rows)}", figures


def breakdown_table(m: Measured) -> tuple[str, dict[str, Any]]:
    n = len(m.pages)
    t = m.timings
    parse_total = t.total("parse")
    steps = ["page_model", "page_counts", "links"]
    common = {step: t.total(step) for step in steps}
    writes = {name: t.total(f"add_page:{name}") for name in m.backends.names}
    wholes = {name: sum(common.values()) + w for name, w in writes.items()}

    def shares(seconds: float, only: str | None = None) -> str:
        return " / ".join(
            f"{100 * seconds / whole:.0f} %" if only in (None, name) else "-"
            for name, whole in wholes.items()
        )

    def row(label: str, name: str, seconds: float, share: str, best_run: bool = False
            ) -> list[str]:
        cpu = ""
        if name in t:
            cpu = _ms((t.best_run(name, cpu=True) if best_run else t.total(name, cpu=True)) / n)
        return [label, _ms(seconds / n), cpu, f"{seconds / parse_total:.2f}", share]

    rows = [row(step, step, sec, shares(sec)) for step, sec in common.items()]
    for name, sec in writes.items():
        rows.append(row(f"add_page ({name})", f"add_page:{name}", sec, shares(sec, name)))
    for name in m.backends.names:
        for key, how in (("write", "page by page"), ("write_behind", f"{BATCH_PAGES} per batch")):
            sec = t.best_run(f"{key}:{name}")
            rows.append(row(f"store write with blocks, {how} ({name}; best run)",
                            f"{key}:{name}", sec, "", best_run=True))
    for step in ("in add_page: page_digest", "in add_page: encode_links"):
        rows.append(
            row(f"…{step[12:]} (in every / SQLite, Redis add_page)", step, t.total(step), "")
        )
    if "floor: words" in t:
        floor = t.total("floor: words")
        rows.append(row("floor: tostring(method=text) + Counter of its words", "floor: words",
                        floor, ""))
        for name, sec in writes.items():
            rows.append(row(f"floor + add_page ({name})", "", floor + sec, ""))
    for name, whole in wholes.items():
        feed = t.total(f"feed:{name}")
        rows.append(row(f"Σ steps, {name} (feed_tree: {_ms(feed / n)} ms)", "", whole, ""))
    title = (
        f"### Where the feed's time goes (per page; ×parse = Σstep / Σparse; "
        f"share of Σ steps with {' / '.join(m.backends.names)})"
    )
    headers = ["step", "ms/page", "CPU ms/page", "×parse", "share"]
    figures = {
        name: {"total_s": t.total(name), "total_cpu_s": t.total(name, cpu=True)}
        for name in t.samples
        if not name.startswith(("feed:", "parse"))
    }
    return f"{title}\n\n{markdown_table(headers, rows)}", figures


def count_table(m: Measured) -> tuple[str, dict[str, Any]]:
    n = len(m.pages)
    occurrences = sum(f.terms for f in m.facts)
    chars = sum(f.text_chars for f in m.facts)
    figures: dict[str, Any] = {
        "term_occurrences": occurrences,
        "text_chars": chars,
        "distinct_terms_per_page": statistics.fmean(f.distinct for f in m.facts),
    }
    rows = []
    labels = {
        "page_counts": "page model's terms, as in a first crawl (stemming cache filling)",
        "count_terms (warm)": "warm: the same text again (every word already stemmed)",
    }
    for key, label in labels.items():
        if key in m.timings:
            secs = m.timings.total(key)
            figures[key] = {
                "seconds": secs,
                "terms_per_s": occurrences / secs,
                "chars_per_s": chars / secs,
            }
            rows.append(
                [
                    label,
                    f"{occurrences / secs / 1e6:.2f} M",
                    f"{chars / secs / 1e6:.1f} M",
                    _ms(secs / n),
                ]
            )
    if not rows:
        return "", figures
    title = (
        f"### term extraction ({occurrences} term occurrences in "
        f"{chars / 1e6:.1f} M characters of visible text)"
    )
    return f"{title}\n\n{markdown_table(['cache', 'terms/s', 'chars/s', 'ms/page'], rows)}", figures


def size_table(m: Measured) -> str:
    rows = []
    for count, fig in m.sizes.get("sqlite", {}).items():
        pages = max(fig["pages"], 1)
        detail = (
            f"terms+index {_kib(fig['term_table_bytes'])}, pages {_kib(fig['page_table_bytes'])}, "
            f"other {_kib(fig['other_bytes'])}; per page: record blob "
            f"{fig['record_blob_bytes'] / pages:.0f} B, links blob "
            f"{fig['links_blob_bytes'] / pages:.0f} B, url {fig['url_bytes'] / pages:.0f} B"
        )
        rows.append(
            [
                "sqlite (file)",
                count,
                fig["terms"],
                _kib(fig["file_bytes"]),
                f"{fig['bytes_per_term']:.0f}",
                f"{fig['bytes_per_page']:.0f}",
                detail,
            ]
        )
    for count, fig in m.sizes.get("redis", {}).items():
        kinds = fig["by_kind"]
        detail = ", ".join(f"{k} {_kib(v)}" for k, v in fig["by_part"].items())
        detail += f"; used_memory +{_kib(fig['used_memory_delta'])}"
        rows.append(
            [
                "redis (MEMORY USAGE)",
                count,
                fig["terms"],
                _kib(fig["key_bytes"]),
                f"{kinds.get('terms', 0) / max(fig['terms'], 1):.0f}",
                f"{kinds.get('pages', 0) / max(fig['pages'], 1):.0f}",
                detail,
            ]
        )
    if not rows:
        return ""
    title = (
        "### Store size (SQLite: file after checkpoint + VACUUM, tables by dbstat; "
        "Redis: MEMORY USAGE of every key)"
    )
    headers = ["store", "pages", "distinct terms", "size", "B/term", "B/page", "detail"]
    return f"{title}\n\n{markdown_table(headers, rows)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=DOCS_DIR, help="site folder (%(default)s)")
    parser.add_argument("--pages", type=int, default=None, help="only the first N (crawl order)")
    parser.add_argument(
        "--backends", default=",".join(ALL_BACKENDS), help="%(default)s or a subset"
    )
    parser.add_argument("--runs", type=int, default=3, help="repetitions, min per page (3)")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="TOP", help="cProfile the SQLite feed, print TOP"
    )
    parser.add_argument("--no-size", action="store_true", help="skip the store-size pass")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="write figures")
    args = parser.parse_args(argv)

    wanted = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(wanted) - set(ALL_BACKENDS))
    if unknown:
        parser.error(f"unknown backend(s) {', '.join(unknown)}: use {', '.join(ALL_BACKENDS)}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    started = clock()
    pages = load_pages(args.docs, args.pages)
    html_bytes = sum(len(p.body) for p in pages)
    print(f"{len(pages)} pages, {html_bytes / 1e6:.1f} MB of HTML from {args.docs}, crawl order")
    # On SIGTERM too, stop our redis-server and remove the temporary stores (finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    tmp = Path(tempfile.mkdtemp(prefix="wisdom-feed-speed-"))
    backends = setup_backends(wanted, tmp)
    try:
        for name, reason in backends.skipped.items():
            print(f"skipping backend {name}: {reason}")
        if not backends.names:
            print("no backend to measure")
            return 1
        m = measure(pages, backends, args)
    finally:
        if backends.redis is not None:
            backends.redis.close()
        shutil.rmtree(tmp, ignore_errors=True)

    speed, speed_figures = speed_table(m)
    breakdown, breakdown_figures = breakdown_table(m)
    counting, count_figures = count_table(m)
    sections = [speed, breakdown, counting, size_table(m)]
    if m.profile_text:
        sections.append(
            f"### cProfile of feed_tree (SQLite, {len(pages)} pages, top {args.profile} by "
            f"own time)\n\n```\n{m.profile_text.strip()}\n```"
        )
    versions = {
        "python": sys.version.split()[0],
        "lxml": dist_version("lxml"),
        "numpy": dist_version("numpy"),
        "sqlite": sqlite3.sqlite_version,
        "redis_server": backends.redis.version if backends.redis else None,
    }
    print()
    print("\n\n".join(s for s in sections if s))
    print()
    measured_with = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    print(f"({clock() - started:.0f} s; {measured_with})")
    if args.json:
        write_json(
            args.json,
            {
                "environment": environment() | versions,
                "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                "pages": len(pages),
                "html_bytes": html_bytes,
                "runs": args.runs,
                "skipped": backends.skipped,
                "speed": speed_figures,
                "breakdown_s": breakdown_figures,
                "count_terms": count_figures,
                "sizes": {k: {str(c): f for c, f in v.items()} for k, v in m.sizes.items()},
                "profile_top": m.profile_rows,
                "per_page": {
                    "url": [p.url for p in pages],
                    "html_bytes": [len(p.body) for p in pages],
                    "term_occurrences": [f.terms for f in m.facts],
                    "links": [f.links for f in m.facts],
                    **{
                        f"{name} ({kind})": m.timings.min(name, cpu=kind == "cpu")
                        for name in m.timings.samples
                        for kind in ("wall", "cpu")
                    },
                },
            },
        )
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
