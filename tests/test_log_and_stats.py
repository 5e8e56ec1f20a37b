"""Real crawls of the demo site with the reproducible settings of docs/getting-started.md: two
cold crawls give the same feed (issue 35 item 10), and the log says what the stats say (item 8),
on a fresh store and again on the store the first crawl left."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from sample_project.demo_site import build_demo_site

from .conftest import free_port
from .crawling import CrawlResult, run_crawl

pytestmark = pytest.mark.crawl

#: the reproducible crawl (docs/getting-started.md): one request at a time, so pages arrive in
#: the scheduler's order, and the analyses in the crawl process (the default WISDOM_WORKERS)
REPRODUCIBLE = {"CONCURRENT_REQUESTS": 1, "WISDOM_WORKERS": 0}


@dataclass
class Crawls:
    cold: CrawlResult
    again: CrawlResult  # another cold crawl, on a store of its own
    warm: CrawlResult  # on the store the cold crawl left


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Crawls:
    root = tmp_path_factory.mktemp("reproducible")
    build_demo_site(root / "demo")
    args = {"site_dir": str(root / "demo"), "port": str(free_port())}  # one site key for all
    done = {}
    for name, store in (("cold", "a"), ("again", "b"), ("warm", "a")):
        settings = {**REPRODUCIBLE, "WISDOM_STORE_URI": f"sqlite:///{root / store}.db",
                    "LOG_LEVEL": "DEBUG", "LOGSTATS_INTERVAL": 0.5}  # fmt: skip
        done[name] = run_crawl("demo", root / name, args=args, settings=settings)
        assert done[name].returncode == 0, done[name].log[-3000:]
    return Crawls(**done)


def test_two_cold_crawls_with_the_reproducible_settings_give_the_same_feed(crawls: Crawls) -> None:
    assert len(crawls.cold.items) > 250
    assert crawls.again.items == crawls.cold.items  # the same items, in the same order
    # the warm store changes what the crawl finds (docs/getting-started.md says so)
    assert crawls.warm.items != crawls.cold.items


def _messages(log: str, text: str) -> list[str]:
    return [line.split("] ", 1)[1] for line in log.splitlines() if text in line and "] " in line]


def test_store_and_warm_up_lines_agree_with_the_crawl(crawls: Crawls) -> None:
    cold, warm = crawls.cold, crawls.warm
    assert _messages(cold.log, "pages from the store") == []  # a fresh store: none
    (read,) = _messages(warm.log, "pages from the store")
    # the warm crawl's first page is its own, not one of the store's
    assert read.endswith(f": {cold.stats['wisdom/pages_fed'] - 1} pages from the store")
    for result in (cold, warm):
        lines = result.log.splitlines()
        warm_at = next(i for i, line in enumerate(lines) if re.search(r"site \S+ warm \(", line))
        assert not [line for line in lines[warm_at:] if "warming up" in line]
    # the cold crawl held its first pages (the line above had something to rule on); whether a
    # progress tick fell inside the warm-up depends on the machine's speed, so no line is asked
    assert cold.stats.get("wisdom/warmup/held", 0) > 0


def test_progress_line_shows_the_stats(crawls: Crawls) -> None:
    for result in (crawls.cold, crawls.warm):
        final = _messages(result.log, "final), items")[-1]
        stats = result.stats
        fed, unchanged = stats.get("wisdom/pages_fed", 0), stats.get("wisdom/pages_unchanged", 0)
        expected = f"fed {fed} pages (+{unchanged} unchanged, final)" if unchanged else (
            f"fed {fed} pages (final)")
        assert expected in final
    assert crawls.warm.stats["wisdom/pages_unchanged"] > 0


def test_every_item_is_logged_as_scraped_from_its_own_page_or_site(crawls: Crawls) -> None:
    lines = crawls.cold.log.splitlines()
    sources = [(line.split("Scraped from ", 1)[1], lines[i + 1]) for i, line in enumerate(lines)
               if "Scraped from " in line]  # fmt: skip
    assert len(sources) == len(crawls.cold.items)
    held = 0
    for source, item in sources:
        assert "data:," not in source
        url = re.search(r"url='([^']+)'", item)
        if item.startswith(("SiteStructureItem(", "SitemapItem(")):
            assert source.startswith("site 127.0.0.1:") and source.endswith(" at spider idle")
        else:
            assert url is not None, (source, item)
            assert source.startswith((f"<200 {url[1]}>", f"<{url[1]}> (")), (source, item)
            held += source.startswith(f"<{url[1]}> (held; emitted with <200 ")
    assert held > 0  # the warm-up held some pages, emitted with a later page's output
    assert "<GET data:,>" not in crawls.cold.log
    assert _messages(crawls.cold.log, "emitting the items left at spider idle")
