"""Signals while the spider closes: every page a crawl fetched leaves as exactly one item, in
the run itself or in its ``JOBDIR`` resume, or it is counted and named in an ERROR line and the
exit status is non-zero. Nothing silent.

Each test crawls the 42-page documentation site with every page held for the warm-up
(``WISDOM_WARMUP_PAGES`` larger than the site), so nothing leaves before the close, which
``CLOSESPIDER_PAGECOUNT`` starts; the test's own slow pipeline (``TEST_ITEM_SECONDS`` an item)
makes the close flush last ~8 s. The signal is sent once the log shows the first item of the
close passing the pipelines (and the second Ctrl-C once the log shows the first): no test
depends on a time.
"""

from __future__ import annotations

import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.crawling import Crawl, CrawlResult
from tests.reliability.conftest import crawl, wait_until

pytestmark = pytest.mark.crawl

#: every page held until the close, at 30 answers (~15 pages, the rest 404s); 0.5 s an item
CLOSE_FLUSH: dict[str, Any] = {
    "WISDOM_WARMUP_PAGES": 100_000,
    "CLOSESPIDER_PAGECOUNT": 30,
    "ITEM_PIPELINES": {"tests.close_spiders.SlowPipeline": 900},
    "TEST_ITEM_SECONDS": 0.5,
    "LOG_LEVEL": "DEBUG",  # the "Crawled" and "Scraped from" lines the tests count
}

SCENARIOS = {
    "SIGTERM": (signal.SIGTERM,),
    "SIGINT": (signal.SIGINT,),
    "SIGINT twice": (signal.SIGINT, signal.SIGINT),
    "SIGKILL": (signal.SIGKILL,),
}

_PAGE_ITEM = r"(?:ArticleItem|TocItem|PageItem)\(url='([^']*)'"


def fetched(log: str) -> set[str]:
    """The pages the crawl fetched: its HTML answers (every one reaches the spider, which
    yields its PageItem), by URL without fragment (the URL of the page and of its item)."""
    return {url.split("#")[0] for url in re.findall(r"Crawled \(200\) <GET (\S+)>", log)}


def passed(log: str) -> list[str]:
    """URLs of the page items that passed the item pipelines, as the log shows them."""
    return re.findall(r"Scraped from [^\n]*\n" + _PAGE_ITEM, log)


def in_feed(result: CrawlResult) -> list[str]:
    return [i["url"] for i in result.items if "role" in i]


def named_lost(log: str) -> set[str]:
    """The URLs the ERROR lines of pages not emitted name."""
    lines = re.findall(r"ERROR: wisdom_scrapy: \d+ pages (?:were|are) fetched[^\n]*: (.*)", log)
    return {url for line in lines for url in line.split()}


def _log_shows(run: Crawl, pattern: str) -> bool:
    assert run.process is not None
    return bool(re.search(pattern, run.log_path.read_text(errors="replace"), re.S)) or (
        run.process.poll() is not None)


def _signal_during_close(run: Crawl, signals: tuple[int, ...]) -> None:
    """Send ``signals`` once the close flush passes its first item, a second one once the log
    shows the first was received."""
    assert run.process is not None
    wait_until(lambda: _log_shows(run, r"Closing spider.*slow pipeline: item 1\b"), timeout=240,
               what="the close flush")
    for i, sig in enumerate(signals):
        if i:
            wait_until(lambda: _log_shows(run, r"Received SIG\w+, shutting down"), timeout=60,
                       what="the first signal handled")
        if run.process.poll() is None:
            run.process.send_signal(sig)


def _run(tmp_path: Path, doc_url: str, name: str, jobdir: bool, **settings: Any) -> Crawl:
    job = {"JOBDIR": str(tmp_path / "job")} if jobdir else {}
    return crawl(tmp_path, doc_url, f"sqlite:///{tmp_path / 'store.db'}", name=name,
                 **{**CLOSE_FLUSH, **job, **settings})


@pytest.mark.parametrize("jobdir", [False, True], ids=["no JOBDIR", "JOBDIR"])
@pytest.mark.parametrize("signals", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_signal_during_the_close_flush_loses_nothing_silently(
    doc_url: str, tmp_path: Path, signals: tuple[int, ...], jobdir: bool
) -> None:
    _check_signals_during_close(doc_url, tmp_path, signals, jobdir)


def test_forced_stop_without_a_reactor(doc_url: str, tmp_path: Path) -> None:
    """Without Twisted's reactor (``TWISTED_REACTOR_ENABLED`` off) Scrapy forces a stop by
    cancelling its tasks, the close flush among them, not by stopping a reactor: the pages not
    emitted are named all the same, and the resume emits them."""
    _check_signals_during_close(doc_url, tmp_path, SCENARIOS["SIGINT twice"], True,
                                TWISTED_REACTOR_ENABLED=False)


def _check_signals_during_close(doc_url: str, tmp_path: Path, signals: tuple[int, ...],
                                jobdir: bool, **settings: Any) -> None:
    """A run signalled during its close flush, then (``jobdir``) its resume: each page fetched
    leaves once across both, or is named with a non-zero exit (module docstring)."""
    first = _run(tmp_path, doc_url, "first", jobdir, **settings).start()
    _signal_during_close(first, signals)
    one = first.wait(240)
    left = _check_run(one, signals)
    if jobdir:
        second = _run(tmp_path, doc_url, "second", jobdir, **settings, TEST_ITEM_SECONDS=0)
        two = second.start().wait(240)
        assert two.returncode == 0, two.log[-3000:]
        both = Counter(left + passed(two.log))
        assert [u for u, n in both.items() if n > 1] == []  # none twice
        assert fetched(one.log) <= set(both), sorted(fetched(one.log) - set(both))  # none lost


def _check_run(one: CrawlResult, signals: tuple[int, ...]) -> list[str]:
    """What the signalled run itself must show; the URLs of the page items that left."""
    pages, left, lost = fetched(one.log), passed(one.log), named_lost(one.log)
    assert pages and len(left) == len(set(left)), one.log[-3000:]
    assert set(left) <= pages and not set(left) & lost
    if signals == (signal.SIGKILL,):
        assert one.returncode == -signal.SIGKILL
    elif len(signals) == 1:  # a graceful stop: everything leaves in the run, through the feed
        assert one.returncode == 0 and not lost, one.log[-3000:]
        assert sorted(in_feed(one)) == sorted(pages) == sorted(left)
        assert "Spider closed (closespider_pagecount)" in one.log
        # the flush said how far it was: every page was held, so it emitted them all
        assert f"wisdom_scrapy: {len(pages)} of {len(pages)} held pages emitted" in one.log
    else:  # forced: what did not leave is counted, named, and the exit status says so
        assert lost and one.returncode != 0, one.log[-3000:]
        assert set(left) | lost == pages
    return left
