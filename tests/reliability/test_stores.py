"""Failing stores during real crawls: a Redis restart, a SQLite file locked by another process,
a full disk, a corrupted store file. The crawl goes on; every failure is counted
(``wisdom/store_errors``), refused page updates are retried (``wisdom/store/retried``), and a
page that never gets into the store is counted under ``wisdom/pages_lost`` and named in the log
— never silently lost."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.crawling import CrawlResult
from tests.reliability.conftest import (
    SmallDisk,
    assert_clean,
    assert_same_store,
    crawl,
    reference_path,
    store_state,
    wait_until,
)
from wisdom_scrapy.page.urls import host_key

pytestmark = pytest.mark.crawl


def fed(result: CrawlResult) -> int:
    return int(result.stats.get("wisdom/pages_fed", 0))


def lost(result: CrawlResult) -> int:
    return int(result.stats.get("wisdom/pages_lost", 0))


def faults(result: CrawlResult) -> int:
    return int(result.stats.get("wisdom/store_errors", 0))


def assert_nothing_lost(result: CrawlResult, reference: tuple[CrawlResult, dict[str, Any]],
                        state: dict[str, Any]) -> None:
    """The store failed (counted), yet every page got in: the store equals the uninterrupted
    crawl's, and one item left per page."""
    assert faults(result) >= 1 and lost(result) == 0
    assert_same_store(state, reference[1])
    pages = [i["url"] for i in result.items if "tocs" not in i]
    assert sorted(pages) == sorted(i["url"] for i in reference[0].items if "tocs" not in i)


# -- Redis ---------------------------------------------------------------------------------------


def _redis_pages(server_url: str, site: str) -> int:
    try:
        with redis.Redis.from_url(server_url, socket_timeout=1) as client:
            return int(client.hlen(f"wisdom:{{{site}}}:pages"))
    except redis.RedisError:
        return -1


def test_redis_restart_mid_crawl(redis_server_factory, reference, doc_url, tmp_path) -> None:
    """Redis stops (SIGTERM, data saved to its append-only file) with part of the site stored
    and comes back 2 s later: the store's retries bridge the gap, nothing is lost, and the store
    equals the uninterrupted crawl's."""
    server = redis_server_factory("--appendonly", "yes", "--appendfsync", "always")
    site = host_key(doc_url)
    run = crawl(tmp_path, doc_url, server.url).start()
    wait_until(lambda: _redis_pages(server.url, site) >= 10, what="10 pages in Redis")
    server.stop()
    time.sleep(2.0)
    server.start()
    at_restart = _redis_pages(server.url, site)
    result = run.wait(300)
    assert_clean(result)
    state = store_state(server.url)
    assert at_restart < state["pages"]  # the crawl went on after the restart
    assert lost(result) == 0
    assert_same_store(state, reference[1])


def test_redis_outage_longer_than_retries_is_counted(redis_server_factory, reference, doc_url,
                                                     tmp_path) -> None:
    """Redis is away for longer than the store's own retries (~7 s, for which each call blocks
    the crawl): the failures are counted and logged, the refused page updates and analyses are
    retried once Redis is back, and nothing is lost."""
    server = redis_server_factory("--appendonly", "yes", "--appendfsync", "always")
    site = host_key(doc_url)
    run = crawl(tmp_path, doc_url, server.url).start()
    wait_until(lambda: _redis_pages(server.url, site) >= 10, what="10 pages in Redis")
    server.stop()
    # down until a page update has failed (each store call retries ~7 s; a page's feed,
    # structure record and analysis calls follow each other)
    wait_until(lambda: "not stored yet" in run.log_path.read_text(errors="replace"),
               timeout=180, what="a refused page update")
    server.start()
    result = run.wait(600)
    assert_clean(result)
    assert result.stats["wisdom/store/retried"] >= 1
    assert "not stored yet" in result.log
    assert_nothing_lost(result, reference, store_state(server.url))


# -- SQLite ----------------------------------------------------------------------------------


_HOLD_LOCK = """
import sqlite3, sys, time

db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


def _sqlite_pages(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1) as db:
            row = db.execute("SELECT sum(pages) FROM sites").fetchone()
        return int(row[0] or 0)
    except sqlite3.Error:
        return -1


def _lock(path: Path, seconds: float) -> subprocess.Popen[str]:
    locker = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(path), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
    return locker


@pytest.mark.parametrize("hold, timeout", [(3.0, 30.0), (6.0, 1.0)], ids=["wait", "give-up"])
def test_sqlite_locked_by_another_process(reference, doc_url, tmp_path, hold, timeout) -> None:
    """Another process holds an exclusive lock on the store for ``hold`` seconds mid-crawl. Within
    the store's lock timeout the crawl waits; past it the updates fail (counted) and are retried
    after the lock is gone. Either way the store equals the uninterrupted crawl's."""
    path = tmp_path / "store.db"
    run = crawl(tmp_path, doc_url, f"sqlite:///{path}?timeout={timeout}").start()
    wait_until(lambda: _sqlite_pages(path) >= 10, what="10 pages in the store")
    with _lock(path, hold) as locker:
        assert locker.wait(60) == 0
    result = run.wait(300)
    assert_clean(result)
    state = store_state(f"sqlite:///{path}")
    if timeout > hold:
        assert faults(result) == 0
        assert_same_store(state, reference[1])
    else:
        assert_nothing_lost(result, reference, state)


def test_disk_full(small_disk: SmallDisk, reference, doc_url, tmp_path) -> None:
    """The store's file system fills up mid-crawl (SQLITE_FULL): the pages that do not fit are
    counted as lost and named in the log, the crawl finishes with one item per page, and the
    store file is intact afterwards, holding exactly the pages counted as fed."""
    small_disk.require_mount()
    uri = f"sqlite:///{small_disk.path / 'store.db'}"
    result = crawl(tmp_path, doc_url, uri).start().wait(300)
    assert result.returncode == 0, result.log[-3000:]
    assert lost(result) >= 1
    assert fed(result) + lost(result) == fed(reference[0])
    state = store_state(uri)
    assert state["pages"] == fed(result)
    never = result.log.split("pages were never stored: ", 1)[1].split("\n", 1)[0].split()
    assert len(never) == lost(result) and not set(never) & set(state["links"])
    pages = [i["url"] for i in result.items if "tocs" not in i]
    assert sorted(pages) == sorted(i["url"] for i in reference[0].items if "tocs" not in i)
    with sqlite3.connect(small_disk.path / "store.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "page"])
def test_corrupted_store_file_at_start(reference, doc_url, tmp_path, damage) -> None:
    """A store file that is not a usable SQLite database stops the crawl at start, with an error
    naming the file (no page is crawled into a store that cannot hold it); so does a malformed
    one whose header is intact but one of its pages is garbage."""
    path = tmp_path / "store.db"
    data = bytearray(reference_path(reference).read_bytes())
    if damage == "garbage":
        path.write_bytes(b"this is not a database\n" * 1000)
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        page_size = int.from_bytes(data[16:18], "big")
        middle = len(data) // page_size // 2 * page_size
        data[middle : middle + page_size] = random.Random(5).randbytes(page_size)
        path.write_bytes(data)
    result = crawl(tmp_path, doc_url, f"sqlite:///{path}").start().wait(120)
    assert result.returncode != 0
    assert str(path) in result.log
    assert result.stats.get("wisdom/pages_fed", 0) == 0
