"""The card's shape in real crawls: the add-on's feed spider middleware holds the pages that wait,
the item pipeline ``wisdom_scrapy.WisdomPipeline`` cleans them, and holding large pages never
stalls Scrapy's scraper (it stops downloading while the responses it processes exceed
``SCRAPER_SLOT_MAX_ACTIVE_SIZE``, 5 MB by default)."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from wisdom_scrapy.testing import serve_directory

from .crawling import run_crawl

pytestmark = pytest.mark.crawl

PAGES = 20
PAGE_BYTES = 1024 * 1024
WORDS = ["harbour", "council", "budget", "river", "school", "station", "festival", "market",
         "bridge", "library", "museum", "tram", "garden", "election", "forecast", "theatre",
         "hospital", "ferry", "archive", "stadium", "orchard"]


def _large_site(root: Path) -> Path:
    """A home page linking to ``PAGES`` article pages of about 1 MiB each (a menu, a heading,
    paragraphs of words drawn at random, a footer): 20 MiB of pages, four times the scraper's
    default active size."""
    rng = random.Random(15)
    menu = "".join(f'<li><a href="/{w}.html">{w.title()}</a></li>' for w in WORDS[:6])
    template = ("<html><head><title>{title}</title></head><body><ul class='menu'>" + menu
                + "</ul><div class='story'><h1>{title}</h1>{body}</div>"
                "<div class='footer'><p>Copyright the Town Gazette</p></div></body></html>")
    links = "".join(f'<li><a href="/story-{i}.html">Story {i}</a></li>' for i in range(PAGES))
    root.mkdir()
    (root / "index.html").write_text(
        template.format(title="Town Gazette", body=f"<ul>{links}</ul>"), "utf-8")
    for i in range(PAGES):
        paragraphs = []
        size = 0
        while size < PAGE_BYTES:
            text = " ".join(rng.choice(WORDS) for _ in range(80))
            paragraphs.append(f"<p>{text}.</p>")
            size += len(text) + 8
        (root / f"story-{i}.html").write_text(
            template.format(title=f"Story {i}", body="".join(paragraphs)), "utf-8")
    return root


@pytest.fixture(scope="module")
def large_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _large_site(tmp_path_factory.mktemp("large") / "site")


def test_large_pages_held_for_warm_up_do_not_stall_the_crawl(
    large_site: Path, tmp_path: Path
) -> None:
    """Every page is held until spider idle (a warm-up larger than the site), with Scrapy's
    default ``SCRAPER_SLOT_MAX_ACTIVE_SIZE``: a hold that kept the responses in the scraper
    would stop the downloads after five pages and the crawl would never go idle. The crawl
    ends, each page leaves as one cleaned item, all through the pipeline at idle."""
    with serve_directory(large_site) as base:
        result = run_crawl("site", tmp_path, args={"url": base + "index.html"}, timeout=300,
                           settings={"WISDOM_WARMUP_PAGES": 1000, "WISDOM_FOCUS": "off"})
    assert result.returncode == 0, result.log[-3000:]
    stats = result.stats
    assert stats["finish_reason"] == "finished"
    assert "SCRAPER_SLOT_MAX_ACTIVE_SIZE" not in result.log  # Scrapy's default
    assert stats["downloader/response_bytes"] > 4 * 5_000_000
    pages = [i for i in result.items if "role" in i]
    assert sorted(i["url"] for i in pages) == sorted(
        [base + "index.html"] + [f"{base}story-{i}.html" for i in range(PAGES)])
    assert all(i["role"] in ("article", "toc", "other") for i in pages)
    assert stats["wisdom/held/peak"] == PAGES + 1  # all held at once, the crawl going on
    assert stats["wisdom/items/late"] >= PAGES + 1
    stories = [i for i in pages if i["url"].endswith(".html") and "story-" in i["url"]]
    assert sum(i["role"] == "article" and len(i["text"]) > 0.5 * PAGE_BYTES
               for i in stories) >= 0.9 * PAGES  # fmt: skip


def _enabled(log: str, what: str) -> str:
    """The component list Scrapy logs at crawl start ("Enabled item pipelines: [...]")."""
    found = re.search(rf"Enabled {what}:\n(\[.*?\])", log, re.S)
    assert found, log[:3000]
    return found.group(1)


def test_a_crawl_with_the_addon_cleans_in_the_item_pipeline(
    large_site: Path, tmp_path: Path
) -> None:
    """The sample project enables the add-on: its crawl lists the feed among its spider
    middlewares, WisdomPipeline among its item pipelines and WisdomExtension among its
    extensions; a pipeline before WisdomPipeline sees PageItems, one after it cleaned items."""
    settings: dict[str, Any] = {
        "WISDOM_FOCUS": "off",
        "ITEM_PIPELINES": {"tests.test_pipeline.RoleSeen": 50,
                           "tests.test_pipeline.DropStoryThree": 60,
                           "tests.test_pipeline.FailOnStoryFour": 70,
                           "tests.test_pipeline.RoleSeenAfter": 900},
        "DEPTH_LIMIT": 1,
    }
    with serve_directory(large_site) as base:
        result = run_crawl("site", tmp_path, args={"url": base + "index.html"}, timeout=300,
                           settings=settings)
    assert result.returncode == 0, result.log[-3000:]
    assert "wisdom_scrapy.middlewares.WisdomFeedMiddleware" in _enabled(
        result.log, "spider middlewares")
    assert "WisdomAnalysisMiddleware" not in result.log
    assert "wisdom_scrapy.pipeline.WisdomPipeline" in _enabled(result.log, "item pipelines")
    assert "wisdom_scrapy.extension.WisdomExtension" in _enabled(result.log, "extensions")
    pages = [i for i in result.items if "role" in i]
    # story 3 was dropped before the cleaning, story 4 failed there: their analyses let go
    assert len(pages) == PAGES - 1
    assert not any(i["url"].endswith(("/story-3.html", "/story-4.html")) for i in pages)
    assert result.stats.get("wisdom/skipped/dropped_before_cleaning") == 1
    assert result.stats.get("wisdom/skipped/failed_before_cleaning") == 1
    # before the cleaning: the spider's PageItem (no role yet); after: the cleaned item's role
    assert {i["seen_before"] for i in pages} == {""}
    assert {i["seen_after"] for i in pages} == {i["role"] for i in pages} - {""}
    assert all(i["seen_after"] == i["role"] for i in pages)


class RoleSeen:
    """A project's pipeline ordered before WisdomPipeline: records the role it sees."""

    field = "seen_before"

    def process_item(self, item: Any) -> Any:
        from itemadapter import ItemAdapter

        from wisdom_scrapy import PageItem

        if isinstance(item, PageItem) or hasattr(item, "role"):
            adapter = ItemAdapter(item)
            adapter[self.field] = item.role
        return item


class DropStoryThree:
    """A project's pipeline before WisdomPipeline that drops one page's PageItem."""

    def process_item(self, item: Any) -> Any:
        from scrapy.exceptions import DropItem

        if str(getattr(item, "url", "")).endswith("/story-3.html"):
            raise DropItem("story 3 is not wanted")
        return item


class FailOnStoryFour:
    """A project's pipeline before WisdomPipeline that fails on one page's PageItem."""

    def process_item(self, item: Any) -> Any:
        if str(getattr(item, "url", "")).endswith("/story-4.html"):
            raise ValueError("story 4 breaks this pipeline")
        return item


class RoleSeenAfter(RoleSeen):
    field = "seen_after"


def test_follow_toc_links_reaches_the_pages_the_spider_does_not_follow(tmp_path: Path) -> None:
    """``WISDOM_FOLLOW_TOC_LINKS``: the pipeline requests each TocItem's links and page turns, so
    a spider that follows only its home page's links still crawls on along the site's TOCs
    (section and archive pages, and their pages 2..N) to the articles they list; without it the
    crawl stops one link deep."""
    from sample_project.demo_site import build_demo_site

    site_dir = build_demo_site(tmp_path / "demo")
    args = {"site_dir": str(site_dir), "port": "0"}
    settings = {"SPIDER_MODULES": "sample_project.spiders,tests.close_spiders"}
    plain = run_crawl("demo_home_links", tmp_path / "off", args=args, settings=settings)
    assert plain.returncode == 0, plain.log[-3000:]
    followed = run_crawl("demo_home_links", tmp_path / "on", args=args, timeout=300,
                         settings={**settings, "WISDOM_FOLLOW_TOC_LINKS": True})
    assert followed.returncode == 0, followed.log[-3000:]
    before = {_path(i["url"]) for i in plain.items if "role" in i}  # each crawl its own port
    pages = {_path(i["url"]): i for i in followed.items if "role" in i}
    tocs = [i for i in pages.values() if i["role"] == "toc"]
    toc_links = {_path(link["url"]) for i in tocs for link in i["links"]}
    turns = {_path(url) for i in tocs for url in i["page_turns"]}
    reached = set(pages) - before
    assert before <= set(pages) and reached <= toc_links | turns  # from TOC links, page turns
    articles = [u for u in reached if pages[u]["role"] == "article"]
    assert len(articles) >= 20, (len(before), len(reached), len(articles))
    assert any("page-" in u for u in reached & turns), sorted(turns)  # a list's pages 2..N
    assert followed.stats["wisdom/follow/toc_links"] + followed.stats.get(
        "wisdom/follow/page_turns", 0) >= len(reached)
    assert "wisdom/follow/toc_links" not in plain.stats


def _path(url: str) -> str:
    return url.split("/", 3)[-1]
