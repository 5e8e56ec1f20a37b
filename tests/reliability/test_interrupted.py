"""Interrupted crawls: a crawl with ``JOBDIR`` stopped by SIGINT (graceful) or SIGKILL, then
resumed with the same JOBDIR and store. The store must equal an uninterrupted crawl's, no page
may be counted twice, and the late work (pages held for warm-up, TOC pages waiting for their
targets) must not be lost."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

from tests.crawling import CrawlResult
from tests.reliability.conftest import (
    assert_clean,
    assert_same_store,
    crawl,
    store_state,
    wait_until,
)
from tests.reliability.test_stores import _sqlite_pages
from wisdom_scrapy.resume import KIND
from wisdom_scrapy.store import open_store


def _pages(result: CrawlResult) -> list[str]:
    return [i["url"] for i in result.items if "tocs" not in i]


def _interrupted(tmp_path: Path, doc_url: str, sig: int) -> tuple[str, CrawlResult]:
    """A JOBDIR crawl sent ``sig`` once 15 pages are stored (during warm-up: pages are held in
    memory then): (store URI, its result)."""
    path = tmp_path / "store.db"
    first = crawl(tmp_path, doc_url, f"sqlite:///{path}", name="first", **_jobdir(tmp_path))
    first.start()
    wait_until(lambda: _sqlite_pages(path) >= 15, what="15 pages in the store")
    assert first.process is not None
    first.process.send_signal(sig)
    return f"sqlite:///{path}", first.wait(120)


def _jobdir(tmp_path: Path) -> dict[str, str]:
    # a fixed warm-up: the derived one ends at the site's third page, and these tests need
    # pages held in memory when the signal comes
    return {"JOBDIR": str(tmp_path / "job"), "WISDOM_WARMUP_PAGES": "32"}


def test_sigint_then_resume(reference, doc_url, tmp_path: Path) -> None:
    """Ctrl-C during warm-up (pages held in memory), then the same command again: the items of
    both runs together are the uninterrupted crawl's, each once, and so is the store."""
    uri, one = _interrupted(tmp_path, doc_url, signal.SIGINT)
    assert one.returncode == 0, one.log[-3000:]
    assert "shutdown" in one.log
    two = crawl(tmp_path, doc_url, uri, name="second", **_jobdir(tmp_path)).start().wait(300)
    assert_clean(two)
    both = Counter(_pages(one) + _pages(two))
    assert max(both.values()) == 1, [u for u, n in both.items() if n > 1]  # none twice
    assert sorted(both) == sorted(_pages(reference[0]))  # none lost
    assert_same_store(store_state(uri), reference[1])


def test_sigkill_then_resume(reference, doc_url, tmp_path: Path) -> None:
    """SIGKILL leaves no chance to save anything: Scrapy's own JOBDIR state is partly lost
    (its seen-requests file is buffered), so the resumed crawl fetches the site again. The store
    counts no page twice, the pages that were waiting at the kill (recorded in the store as
    they started waiting) are fetched again and leave as items, each item once."""
    uri, one = _interrupted(tmp_path, doc_url, signal.SIGKILL)
    assert one.returncode == -signal.SIGKILL
    with open_store(uri) as store:
        (site,) = store.sites()
        waiting = {u for u, v in store.records(site, KIND).items() if v}
    assert waiting  # the kill came during warm-up: pages were held
    two = crawl(tmp_path, doc_url, uri, name="second", **_jobdir(tmp_path)).start().wait(300)
    assert_clean(two)
    assert two.stats["wisdom/resumed_pages"] == len(waiting)
    pages = Counter(_pages(two))
    assert max(pages.values()) == 1 and waiting <= set(pages)
    assert_same_store(store_state(uri), reference[1])
