"""Store faults that used to corrupt or lose data while the crawl reported success (issue 17):
a COMMIT that fails on a full disk, the store file deleted mid-crawl, a Redis without
persistence restarted empty, many processes creating one new SQLite file, a damaged WAL.

The rule: each page is stored exactly once and correctly, or its loss is counted
(``wisdom/pages_lost``) and its URL logged at ERROR. After each fault the store equals a
fault-free store of the pages it still holds, and the pages it lacks are exactly those counted.
"""

from __future__ import annotations

import functools
import mimetypes
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawling import REPO, CrawlResult
from tests.reliability._server import Page, serve_pages
from tests.reliability.conftest import (
    SmallDisk,
    _state,
    assert_clean,
    assert_same_store,
    crawl,
    fault_free_state,
    store_state,
    wait_until,
)
from tests.reliability.test_stores import _redis_pages, _sqlite_pages, lost
from wisdom_scrapy.engine.writes import FeedResult, Outcome, PageUpdate, WriteBehind
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store import StoreError, open_store


def lost_urls(result: CrawlResult) -> list[str]:
    """The URLs the crawl's ERROR lines name as lost (each line ends with them)."""
    urls: list[str] = []
    for line in result.log.splitlines():
        if "ERROR: wisdom_scrapy:" in line and " pages " in line:
            urls += [w for w in line.rsplit(": ", 1)[1].split() if w.startswith("http")]
    return urls


def crawled(result: CrawlResult) -> set[str]:
    """URLs the crawl fetched (HTML pages of the doc site: every one is fed to the store); from
    the DEBUG log."""
    # a request may carry the fragment of the link it was made from; the page is fed without
    return {url.split("#")[0] for url in re.findall(r"Crawled \(200\) <GET (http\S+)>",
                                                    result.log)}


def doc_models(pages: list[tuple[str, bytes]]) -> list[tuple[str, dict[str, int], list[Any]]]:
    models = [PageModel.from_html(html, url) for url, html in pages]
    return [(m.url, m.page_counts(), [(link.url, link.text) for link in m.links()])
            for m in models]


# -- 1. a COMMIT that fails -----------------------------------------------------------------


@pytest.mark.crawl
def test_failed_commit_then_retry_stores_each_page_once(roomy_disk: SmallDisk,
                                                        python_doc_pages) -> None:
    """The disk is full when pages with new terms are committed (SQLITE_FULL at COMMIT: the
    transaction's writes stay in memory until then), then space comes back and the refused
    pages are given again. They must be stored once and correctly: the term ids handed out in
    the failed transactions were rolled back with them and must not be reused from a cache."""
    pages = doc_models(python_doc_pages[:30])
    site = "docs.python.org"
    with open_store(f"sqlite:///{roomy_disk.path / 'store.db'}") as store:
        for page in pages[:5]:
            assert store.add_page(site, *page)
        roomy_disk.fill()
        refused = []
        for page in pages[5:15]:
            try:
                store.add_page(site, *page)
            except StoreError:
                refused.append(page)
        roomy_disk.free()
        assert len(refused) >= 5, "the full disk refused too few pages to test anything"
        for page in [*refused, *pages[15:]]:
            assert store.add_page(site, *page) is True
        state = _state(store)
    with open_store("memory://") as fault_free:
        for page in pages:
            fault_free.add_page(site, *page)
        assert_same_store(state, _state(fault_free))


@pytest.mark.crawl
def test_failed_batch_commit_then_retry_stores_each_page_once(roomy_disk: SmallDisk,
                                                              python_doc_pages) -> None:
    """The same with pages written behind, 4 per transaction (what a crawl does): a batch
    refused at COMMIT stores none of its pages and keeps no term id of theirs; given again,
    each is stored once and correctly."""
    updates = [PageUpdate.of(PageModel.from_html(html, url)) for url, html in python_doc_pages[:30]]
    refused: list[PageUpdate] = []
    stored: list[FeedResult] = []

    def report(batch: list[PageUpdate], outcome: Outcome) -> None:
        if isinstance(outcome, StoreError):
            refused.extend(batch)
        else:
            stored.extend(outcome)

    with WriteBehind(open_store(f"sqlite:///{roomy_disk.path / 'store.db'}"), 4,
                     report) as store:
        for update in updates[:8]:
            store.add(update)
        roomy_disk.fill()
        for update in updates[8:20]:
            store.add(update)
        roomy_disk.free()
        assert len(refused) >= 4, "the full disk refused too few batches to test anything"
        for update in [*refused, *updates[20:]]:
            store.add(update)
        store.flush()
        state = _state(store)
    assert sorted(r.url for r in stored) == sorted(u.url for u in updates)  # each once
    assert all(r.changed for r in stored)
    with open_store("memory://") as fault_free:
        for update in updates:
            update.apply(fault_free)
        assert_same_store(state, _state(fault_free))


class HeldDocSite:
    """The doc site served with some answers held until the test lets them go, so a crawl's
    course follows the test's, however loaded the machine: the pages under ``/using/`` wait
    for :attr:`full` (they are fetched, and written, only once the disk is full), one tutorial
    page waits for :attr:`freed` (the crawl cannot end before)."""

    def __init__(self, root: Path) -> None:
        self.full = threading.Event()
        self.freed = threading.Event()
        self.pages: dict[str, Page] = {}
        for path in root.rglob("*"):
            if path.is_file():
                name = "/" + path.relative_to(root).as_posix()
                gate = (self.full if name.startswith("/using/")
                        else self.freed if name == "/tutorial/whatnow.html" else None)
                content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
                body = path.read_bytes()
                self.pages[name] = (content_type, body if gate is None
                                    else functools.partial(self._held, gate, body))

    @staticmethod
    def _held(gate: threading.Event, body: bytes) -> bytes:
        gate.wait(120)
        return body

    def release(self) -> None:
        self.full.set()
        self.freed.set()

    def hold(self) -> None:
        self.full.clear()
        self.freed.clear()


@pytest.fixture
def held_doc_site(doc_site: Path) -> Iterator[tuple[str, HeldDocSite]]:
    """Start URL of the doc site served with held answers (:class:`HeldDocSite`, all let go at
    the end)."""
    site = HeldDocSite(doc_site)
    try:
        with serve_pages(site.pages) as (base, _):
            yield base + "index.html", site
    finally:
        site.release()


@pytest.mark.crawl
def test_disk_full_for_a_while_mid_crawl(roomy_disk: SmallDisk, held_doc_site, tmp_path
                                         ) -> None:
    """The store's disk is full for a few seconds mid-crawl: the refused updates are retried
    once there is room, nothing is lost, and the store equals the uninterrupted crawl's (no
    term's counts land on another term).

    Pages are held (:class:`HeldDocSite`) so that some are fetched while the disk is full and
    the crawl is still running when it is freed (unheld, it could end first, its last write
    refused by the full disk: those pages are counted lost, rightly, and no retry is tested)."""
    roomy_disk.require_mount()
    start, site = held_doc_site
    reference = crawl(tmp_path, start, f"sqlite:///{tmp_path / 'reference.db'}",
                      name="reference")
    site.release()
    assert_clean(reference.start().wait(300))
    site.hold()
    path = roomy_disk.path / "store.db"
    run = crawl(tmp_path, start, f"sqlite:///{path}").start()
    wait_until(lambda: _sqlite_pages(path) >= 10, what="10 pages in the store")
    roomy_disk.fill()
    site.full.set()
    wait_until(lambda: "not stored yet" in run.log_path.read_text(errors="replace"),
               what="a page refused by the full disk")
    time.sleep(1.0)
    roomy_disk.free()
    site.freed.set()
    result = run.wait(300)
    assert_clean(result)
    assert result.stats["wisdom/store_errors"] >= 1 and result.stats["wisdom/store/retried"] >= 1
    assert lost(result) == 0
    assert_same_store(store_state(f"sqlite:///{path}"),
                      store_state(f"sqlite:///{tmp_path / 'reference.db'}"))


# -- 2. the store file deleted ------------------------------------------------------------


@pytest.mark.crawl
def test_store_file_deleted_mid_crawl(reference, doc_url, tmp_path) -> None:
    """The store file (with its WAL) is deleted mid-crawl. SQLite would go on writing to the
    unlinked file and everything would vanish at close: instead the crawl stops (reason
    ``wisdom_store_lost``) and every page it fed is counted lost and named at ERROR."""
    path = tmp_path / "store.db"
    run = crawl(tmp_path, doc_url, f"sqlite:///{path}", LOG_LEVEL="DEBUG").start()
    wait_until(lambda: _sqlite_pages(path) >= 10, what="10 pages in the store")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    result = run.wait(300)
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats["finish_reason"] == "wisdom_store_lost"
    named = lost_urls(result)
    assert len(named) == len(set(named)) == lost(result)
    assert set(named) == crawled(result)  # every page fed, and only those
    assert not path.exists()  # nothing pretends to be the store


# -- 3. Redis without persistence restarted empty -------------------------------------------


@pytest.mark.crawl
def test_redis_without_persistence_restarted_empty(redis_server_factory, reference, doc_url,
                                                   tmp_path) -> None:
    """A Redis with neither snapshots nor an append-only file restarts mid-crawl and comes back
    empty; no call fails. The crawl warns at start that the store persists nothing, finds at
    close the pages it stored that are gone, counts them and names them; the store holds
    exactly the other pages, as a fault-free store of them would."""
    server = redis_server_factory("--save", "", "--appendonly", "no")
    site = host_key(doc_url)
    run = crawl(tmp_path, doc_url, server.url).start()
    wait_until(lambda: _redis_pages(server.url, site) >= 10, what="10 pages in Redis")
    server.stop()
    server.start()
    result = run.wait(300)
    assert_clean(result)
    assert "persists nothing (save '', appendonly no)" in result.log
    state = store_state(server.url)
    named = lost_urls(result)
    assert len(named) >= 10 and len(named) == len(set(named)) == lost(result)
    assert set(named) == set(reference[1]["links"]) - set(state["links"])
    assert_same_store(state, fault_free_state(reference, set(state["links"])))


def test_redis_with_persistence_is_not_warned_about(redis_server_factory) -> None:
    server = redis_server_factory("--appendonly", "yes")
    with open_store(server.url) as store:
        assert store.persistence_warning() is None
    bare = redis_server_factory("--save", "", "--appendonly", "no")
    with open_store(bare.url) as store:
        assert "persists nothing" in (store.persistence_warning() or "")


# -- 4. many processes creating one new file ------------------------------------------------

_OPEN_AT_ONCE = """
import sys, time
from pathlib import Path
from wisdom_scrapy.store import open_store
folder, me, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
(folder / f"ready-{me}").touch()
go = folder / "go"
while not go.exists():
    time.sleep(0.001)
time.sleep(0.05)
start = float(go.read_text())
for r in range(rounds):
    time.sleep(max(0.0, start + 0.15 * r - time.time()))
    with open_store(f"sqlite:///{folder}/new-{r}.db") as store:
        store.add_page("site", "http://site/" + me, {"shared": 1, "own" + me: 2})
"""


@pytest.mark.crawl
def test_new_file_opened_by_many_processes_at_once(tmp_path: Path) -> None:
    """Eight processes open the same new SQLite file at the same moment, 40 times over: all
    open it (switching a new file to WAL mode needs a lock SQLite does not wait for) and every
    page is stored once."""
    n, rounds = 8, 40
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_AT_ONCE, str(tmp_path), str(i),
                               str(rounds)], cwd=REPO, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
             for i in range(n)]
    wait_until(lambda: len(list(tmp_path.glob("ready-*"))) == n, what="the processes")
    (tmp_path / "go").write_text(repr(time.time() + 0.2))
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * n, "\n".join(errors)
    for r in range(rounds):
        with open_store(f"sqlite:///{tmp_path}/new-{r}.db") as store:
            assert store.page_count("site") == n
            assert store.term_sums("site", ["shared"])[0].tolist() == [n]


# -- 5. a damaged WAL, a malformed file ---------------------------------------------------

_KILLED_WRITER = """
import os, sys
from wisdom_scrapy.store import open_store
store = open_store(sys.argv[1])
for i in range(20):
    store.add_page("site", f"http://site/{i}", {f"t{i}": 1, f"u{i}": 2, "shared": 1})
os._exit(0)  # no close: the WAL stays, as after a crash
"""


def damaged_wal_store(tmp_path: Path, where: str = "frame") -> tuple[Path, int]:
    """A store whose writer died leaving its WAL (20 commits), with one byte flipped in a frame
    in the middle of the WAL or in its header (``where``): (store path, pages written)."""
    path = tmp_path / "store.db"
    subprocess.run([sys.executable, "-c", _KILLED_WRITER, f"sqlite:///{path}"], cwd=REPO,
                   check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    wal = Path(f"{path}-wal")
    data = bytearray(wal.read_bytes())
    page_size = int.from_bytes(data[8:12], "big")
    frames = (len(data) - 32) // (24 + page_size)
    assert frames >= 20
    middle = 32 + (frames // 2) * (24 + page_size) + 24 + page_size // 2
    data[middle if where == "frame" else 20] ^= 0xFF  # header byte 20: a salt
    wal.write_bytes(bytes(data))
    return path, 20


@pytest.mark.parametrize("where", ["frame", "header"])
@pytest.mark.crawl
def test_damaged_wal_is_found_at_open(tmp_path: Path, where: str) -> None:
    """SQLite alone replays a WAL up to its damaged frame (or ignores it all when its header is
    damaged) and silently drops the transactions after it; the store refuses to open it,
    naming the file."""
    path, written = damaged_wal_store(tmp_path, where)
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in ("", "-wal"):
        shutil.copy(f"{path}{suffix}", f"{copy / 'store.db'}{suffix}")
    with sqlite3.connect(copy / "store.db") as db:  # what plain SQLite makes of it
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        pages = db.execute("SELECT count(*) FROM pages").fetchone()[0] if "pages" in tables else 0
    assert pages < written
    with pytest.raises(StoreError, match=re.escape(str(path))):
        open_store(f"sqlite:///{path}")


@pytest.mark.crawl
def test_damaged_wal_stops_the_crawl_at_start(doc_url, tmp_path: Path) -> None:
    path, _ = damaged_wal_store(tmp_path)
    result = crawl(tmp_path, doc_url, f"sqlite:///{path}").start().wait(120)
    assert result.returncode != 0
    assert f"{path}-wal" in result.log and "corrupted" in result.log
    assert result.stats.get("wisdom/pages_fed", 0) == 0
