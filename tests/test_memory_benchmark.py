"""The memory benchmark's endless site (benchmarks/memory.py ``--endless``): new pages and new
terms forever, so every per-page table of a crawl shows as growth; and a broad crawl of such
sites, whose sites the crawl has left let go of their counts."""

from __future__ import annotations

import contextlib
import re
import urllib.request
from pathlib import Path

import pytest

from benchmarks.memory import EndlessSite, _letters, endless_page

from .crawling import CrawlResult, run_crawl


def test_endless_pages_link_new_pages_and_hold_their_own_terms() -> None:
    page = endless_page(7).decode()
    links = set(re.findall(r'href="(/a/\d+\.html)"', page))
    assert {"/a/22.html", "/a/23.html", "/a/24.html"} <= links  # 3n+1 … 3n+3: never seen
    words = set(re.findall(r"\w+", page))
    next_words = set(re.findall(r"\w+", endless_page(8).decode()))
    own = {f"zz{_letters(8 * 7 + k)}" for k in range(8)}  # page 7's own terms
    assert own <= words and not own & next_words
    assert endless_page(7) == endless_page(7)  # the same page every time


def test_endless_site_serves_pages() -> None:
    with EndlessSite() as start, urllib.request.urlopen(start, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/html")
        assert response.read() == endless_page(0)


def _broad_crawl(tmp_path: Path, starts: list[str], horizon: int) -> CrawlResult:
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(starts) + "\n")
    return run_crawl("site", tmp_path / str(horizon), args={"urls": str(urls)}, settings={
        "DEPTH_LIMIT": 1, "CONCURRENT_REQUESTS": 1, "WISDOM_SITE_HORIZON": horizon,
        "WISDOM_STORE_BATCH_PAGES": 4})


@pytest.mark.crawl
def test_a_broad_crawl_lets_the_sites_it_left_go_and_makes_the_same_items(
    tmp_path: Path,
) -> None:
    """A real broad crawl, one site after the other (``CONCURRENT_REQUESTS=1``): the sites it
    left let go of their counts (stats), and its items are the items of a crawl that keeps
    every site's counts."""
    with contextlib.ExitStack() as stack:
        starts = [stack.enter_context(EndlessSite(k + 1)) for k in range(6)]
        (tmp_path / "0").mkdir()
        (tmp_path / "4").mkdir()
        kept = _broad_crawl(tmp_path, starts, 0)
        left = _broad_crawl(tmp_path, starts, 4)
    for result in (kept, left):
        assert result.returncode == 0, result.log[-3000:]
        assert " ERROR: " not in result.log and "Traceback" not in result.log, result.log[-3000:]
    assert "wisdom/sites/left" not in kept.stats
    assert left.stats["wisdom/sites/left"] >= 4, left.stats  # the sites crawled before the last
    assert left.stats["wisdom/structure/let_go"] >= 4, left.stats
    assert left.stats["wisdom/repetition/let_go"] >= 4, left.stats
    pages = {item["url"]: item for item in kept.items if "url" in item}
    structures = [item for item in kept.items if "url" not in item]  # one per site
    assert len(pages) >= 6 * 8 and len(structures) == 6
    assert len(left.items) == len(kept.items)
    for item in left.items:
        assert item == (pages[item["url"]] if "url" in item else structures.pop(0))
