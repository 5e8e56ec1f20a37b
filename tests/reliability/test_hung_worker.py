"""A hung worker process (``WISDOM_WORKERS``): one that reads and answers nothing, as a worker
stuck in an endless loop on a hostile page would. The crawl must neither block on it nor wait
for it forever: after ``WISDOM_WORKER_TIMEOUT`` it is killed, a new one takes the pages queued
behind, and every page still leaves once."""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.reliability.conftest import children_of, crawl, doc_pages, process_gone, wait_until

pytestmark = pytest.mark.crawl


def test_a_stopped_worker_costs_time_not_pages(doc_site: Path, doc_url: str,
                                               tmp_path: Path) -> None:  # fmt: skip
    """The worker is stopped (SIGSTOP) once it has answered: an analysed item was scraped. The
    crawl is slowed down (``DOWNLOAD_DELAY``) so that most pages are still to be analysed."""
    settings = {"WISDOM_WORKERS": 1, "WISDOM_WORKER_TIMEOUT": 3, "DOWNLOAD_DELAY": 0.05,
                "LOG_LEVEL": "DEBUG"}  # fmt: skip
    run = crawl(tmp_path, doc_url, f"sqlite:///{tmp_path / 'store.db'}", **settings).start()
    assert run.process is not None

    def analysed() -> bool:
        return "role='article'" in run.log_path.read_text(errors="replace")

    wait_until(analysed, timeout=240, what="a page analysed by the worker")
    (stopped,) = children_of(run.process.pid)
    os.kill(stopped, signal.SIGSTOP)
    result = run.wait(300)
    assert result.returncode == 0, result.log[-3000:]
    assert process_gone(stopped)
    stats = result.stats
    assert stats["wisdom/workers/timed_out"] >= 1 and stats["wisdom/workers/restarted"] >= 1
    assert "answered nothing for 3 s: killed" in result.log
    urls = Counter(item["url"] for item in result.items if "role" in item)
    assert len(urls) == doc_pages(doc_site) == stats["wisdom/pages_fed"]
    assert max(urls.values()) == 1, "a page left twice"
