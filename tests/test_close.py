"""Nothing lost at any close: whatever stops a crawl (it finished, ``CLOSESPIDER_*``, Ctrl-C,
SIGTERM), every page the spider yielded leaves as exactly one cleaned item through the feed,
and each URL leaves once. Real ``scrapy crawl demo`` runs on a cold store whose warm-up holds
every page (``WISDOM_WARMUP_PAGES`` set larger than the crawl), so nothing leaves before the
close unless the close emits it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sample_project.demo_site import build_demo_site
from tests.crawling import Crawl, CrawlResult, run_crawl
from wisdom_scrapy.resume import KIND
from wisdom_scrapy.store import open_store

pytestmark = pytest.mark.crawl

#: larger than any crawl here: every page is held until the close (or idle) emits it
HOLD_ALL = {"WISDOM_WARMUP_PAGES": 100_000}


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    build_demo_site(root)
    return root


def _args(site_dir: Path) -> dict[str, str]:
    return {"site_dir": str(site_dir), "port": "0"}


def _page_items(result: CrawlResult) -> list[dict[str, Any]]:
    return [i for i in result.items if "role" in i]


def _assert_one_item_per_page(result: CrawlResult, reason: str) -> list[dict[str, Any]]:
    """Every page fed leaves once, cleaned (a role), the held ones counted as flushed at close."""
    assert result.returncode == 0, result.log[-3000:]
    stats = result.stats
    assert stats["finish_reason"] == reason
    pages = _page_items(result)
    urls = [i["url"] for i in pages]
    assert len(urls) == len(set(urls)), "a URL left twice"
    assert len(pages) == stats["wisdom/pages_fed"] > 0
    assert all(i["role"] in ("article", "toc", "other") for i in pages)
    assert stats.get("wisdom/analysis/unanalysed", 0) == 0
    # the site structure leaves too, before the feed closed, stating the items' roles
    (structure,) = [i for i in result.items if "roles" in i]
    assert structure["item_roles"] == dict(Counter(i["role"] for i in pages))
    return pages


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"CLOSESPIDER_PAGECOUNT": 20}, "closespider_pagecount"),
        # slowed down so the timeout comes well before the end of the site
        ({"CLOSESPIDER_TIMEOUT": 2, "DOWNLOAD_DELAY": 0.1, "CONCURRENT_REQUESTS": 1},
         "closespider_timeout"),
    ],
)
def test_early_close_exports_one_cleaned_item_per_page(
    site_dir: Path, tmp_path: Path, settings: dict[str, Any], reason: str
) -> None:
    result = run_crawl("demo", tmp_path, args=_args(site_dir), settings={**HOLD_ALL, **settings},
                       timeout=60)
    pages = _assert_one_item_per_page(result, reason)
    stats = result.stats
    assert stats["wisdom/items/flushed_at_close"] == len(pages)
    # analysed cold, with what the store knew at the close: the items say so
    assert all(i["single_page"] for i in pages if i["role"] != "other")
    if reason == "closespider_pagecount":
        assert len(pages) >= 20


def test_itemcount_close_loses_no_held_or_pending_page(site_dir: Path, tmp_path: Path) -> None:
    """Items flow after a short warm-up; the crawl stops at an item count while pages are in
    flight, held or waiting for their TOC targets: those leave at the close."""
    result = run_crawl("demo", tmp_path, args=_args(site_dir), timeout=60,
                       settings={"WISDOM_WARMUP_PAGES": 10, "CLOSESPIDER_ITEMCOUNT": 15})
    _assert_one_item_per_page(result, "closespider_itemcount")


def test_finished_crawl_emits_at_idle_and_each_url_once(site_dir: Path, tmp_path: Path) -> None:
    """A crawl that runs to its end emits the held pages at idle (late items): nothing is left
    for the close. Its start URL is fetched twice (the second request ``dont_filter``, as the
    requests of Scrapy's default ``start()``): the second PageItem is dropped and counted."""
    result = run_crawl("demo_twice", tmp_path, args=_args(site_dir), timeout=60,
                       settings={**HOLD_ALL, "DEPTH_LIMIT": 1,
                                 "SPIDER_MODULES": "sample_project.spiders,tests.close_spiders"})
    _assert_one_item_per_page(result, "finished")
    stats = result.stats
    assert stats.get("wisdom/items/flushed_at_close", 0) == 0
    assert stats["wisdom/items/late"] >= stats["wisdom/pages_fed"]
    assert stats["wisdom/skipped/duplicate_url"] == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_shutdown_exports_one_cleaned_item_per_page(
    site_dir: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    """Ctrl-C (SIGINT) or SIGTERM to a running ``scrapy crawl``: Scrapy closes the spider
    (reason "shutdown"); the pages held for warm-up leave before the feed closes."""
    crawl = Crawl("demo", tmp_path, args=_args(site_dir),
                  settings={**HOLD_ALL, "DOWNLOAD_DELAY": 0.2, "CONCURRENT_REQUESTS": 1,
                            "LOG_LEVEL": "DEBUG"}).start()  # DEBUG: "Crawled" lines
    assert crawl.process is not None
    deadline = time.monotonic() + 30
    while crawl.log_path.read_text(errors="replace").count("Crawled (200)") < 5:
        assert crawl.process.poll() is None and time.monotonic() < deadline, "crawl did not run"
        time.sleep(0.1)
    crawl.process.send_signal(sig)
    result = crawl.wait(timeout=60)
    pages = _assert_one_item_per_page(result, "shutdown")
    assert result.stats["wisdom/items/flushed_at_close"] == len(pages) >= 5


@pytest.mark.parametrize(
    "settings",
    [
        {"WISDOM_FOCUS": "off"},
        {"SPIDER_MIDDLEWARES": {"wisdom_scrapy.focus.WisdomFocusMiddleware": None}},
    ],
    ids=["WISDOM_FOCUS=off", "focus middleware None"],
)
def test_crawl_without_focusing_keeps_the_site_structure(
    site_dir: Path, tmp_path: Path, settings: dict[str, Any]
) -> None:
    """The site's link structure is the crawl's (the feed records it), not the focus
    middleware's: without focusing, the SiteStructureItem still leaves, stating the items'
    roles, and the items still get their hub and authority scores."""
    result = run_crawl("demo", tmp_path, args=_args(site_dir), timeout=120,
                       settings={**settings, "DEPTH_LIMIT": 2})
    pages = _assert_one_item_per_page(result, "finished")
    assert "wisdom/focus/kept" not in result.stats  # nothing was focused
    assert sum(i["hub"] is not None for i in pages) >= 0.8 * len(pages)


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({}, "finished"),
        ({**HOLD_ALL, "CLOSESPIDER_PAGECOUNT": 20}, "closespider_pagecount"),
    ],
    ids=["finished", "closespider_pagecount"],
)
def test_worker_processes_lose_no_page_at_any_close(
    site_dir: Path, tmp_path: Path, settings: dict[str, Any], reason: str
) -> None:
    """``WISDOM_WORKERS``: the analyses run in two worker processes, each page leaves once,
    cleaned, whether the crawl finishes (pages analysed as they arrive, their items leaving
    with later responses or at idle) or closes early (every page analysed at the close)."""
    result = run_crawl("demo", tmp_path, args=_args(site_dir), timeout=180,
                       settings={**settings, "WISDOM_WORKERS": 2})
    pages = _assert_one_item_per_page(result, reason)
    stats = result.stats
    assert stats["wisdom/workers/analysed"] >= len(pages)
    assert stats.get("wisdom/workers/analysed_here", 0) == 0
    assert stats["wisdom/workers/cpu_seconds"] > 0 and stats["wisdom/workers/restarted"] == 0
    assert "page analyses in 2 worker processes" in result.log


def test_projects_own_item_processor_is_warned_and_its_held_pages_named(
    site_dir: Path, tmp_path: Path
) -> None:
    """A project ``ITEM_PROCESSOR`` that is not ``WisdomItemProcessor`` wins over the add-on's,
    so a close before idle cannot emit the held pages: the crawl warns at start, and at the
    close counts and names every one of them (nothing silent)."""
    result = run_crawl("demo", tmp_path, args=_args(site_dir), timeout=60,
                       settings={**HOLD_ALL, "CLOSESPIDER_PAGECOUNT": 10,
                                 "ITEM_PROCESSOR": "scrapy.pipelines.ItemPipelineManager"})
    assert result.returncode == 0, result.log[-3000:]
    assert "ITEM_PROCESSOR='scrapy.pipelines.ItemPipelineManager' is not" in result.log
    assert not _page_items(result)
    fed = result.stats["wisdom/pages_fed"]
    assert result.stats["wisdom/pages_lost"] == fed >= 10
    assert f"ERROR: wisdom_scrapy: {fed} pages are fetched but their items never passed" in (
        result.log)


def test_a_page_whose_item_a_later_pipeline_converts_is_no_longer_pending(
    site_dir: Path, tmp_path: Path
) -> None:
    """A project pipeline after the add-on's returns each item as a dict: the pages still pass
    (the processor marks them by the item that went in), so with ``JOBDIR`` no page stays
    pending in the store after the close, and nothing is named lost."""
    store = tmp_path / "demo.wisdom.db"
    settings = {**HOLD_ALL, "CLOSESPIDER_PAGECOUNT": 15, "JOBDIR": str(tmp_path / "job"),
                "WISDOM_STORE_URI": f"sqlite:///{store}",
                "ITEM_PIPELINES": {"tests.close_spiders.DictPipeline": 900}}
    result = run_crawl("demo", tmp_path, args=_args(site_dir), settings=settings, timeout=60)
    pages = _assert_one_item_per_page(result, "closespider_pagecount")
    assert result.stats.get("wisdom/pages_lost", 0) == 0
    with open_store(f"sqlite:///{store}") as opened:
        (site,) = opened.sites()
        pending = [url for url, value in opened.records(site, KIND).items() if value]
    assert not pending and len(pages) >= 15


_RUNNER_SCRIPT = """
import sys
from scrapy.crawler import CrawlerRunner
from scrapy.utils.log import configure_logging
from scrapy.utils.reactor import install_reactor
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
from twisted.internet import reactor, defer
from sample_project.spiders.demo import DemoSpider
from wisdom_scrapy.crawl_state import WisdomRuntime

def ours():
    before = reactor._eventTriggers["shutdown"].before
    return sum(isinstance(getattr(f, "__self__", None), WisdomRuntime) for f, _, _ in before)

@defer.inlineCallbacks
def main():
    runner = CrawlerRunner({"ADDONS": {"wisdom_scrapy.Addon": 500},
                            "WISDOM_STORE_URI": "memory://", "LOG_LEVEL": "ERROR",
                            "CLOSESPIDER_PAGECOUNT": 5, "TELNETCONSOLE_ENABLED": False})
    for _ in range(2):
        yield runner.crawl(DemoSpider, site_dir=sys.argv[1], port="0")
        print("left", ours(), flush=True)
    reactor.stop()

configure_logging({"LOG_LEVEL": "ERROR"})
reactor.callWhenRunning(main)
reactor.run()
"""


def test_crawls_in_one_runner_leave_no_shutdown_trigger(site_dir: Path) -> None:
    """A crawl that closed normally lets go of its forced-stop trigger: in a long-lived
    ``CrawlerRunner`` process every crawl's trigger would keep its runtime alive."""
    done = subprocess.run([sys.executable, "-c", _RUNNER_SCRIPT, str(site_dir)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["left", "0", "left", "0"], done.stderr[-3000:]
