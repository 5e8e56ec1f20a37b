"""Hostile pages through the whole pipeline, in a real ``scrapy crawl``: the feed middleware,
the analysis middleware, focusing and the late items at idle. Nothing may crash the crawl, every
page leaves as one item of the documented shape, and every skip is counted."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

import pytest

from tests.crawling import run_crawl
from tests.reliability._pages import HTML, PAGES, index_page
from tests.reliability._server import serve_pages
from tests.reliability._shape import check_shape
from wisdom_scrapy.store import open_store


@pytest.fixture(scope="module")
def hostile_crawl(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("hostile")
    pages = {path: (ctype, body) for path, (ctype, body, _) in PAGES.items()}
    pages["/index.html"] = (HTML, index_page())
    with serve_pages(pages) as (base, requested):
        result = run_crawl("site", tmp, args={"url": base + "index.html"},
                           settings={"WISDOM_STORE_URI": f"sqlite:///{tmp / 'store.db'}"},
                           timeout=600)
    return result, requested, tmp / "store.db"


def test_crawl_survives_every_hostile_page(hostile_crawl) -> None:
    result, requested, _ = hostile_crawl
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log, result.log[-5000:]
    assert not [k for k in result.stats if k.startswith(("wisdom/errors", "spider_exceptions"))]
    assert result.stats.get("wisdom/store_errors", 0) == 0
    # Every hostile page was fetched once.
    counts = Counter(requested)
    assert all(counts[path] == 1 for path in PAGES), counts


def test_every_page_leaves_as_one_item_of_the_documented_shape(hostile_crawl) -> None:
    result, *_ = hostile_crawl
    pages = [check_shape(item) for item in result.items if "tocs" not in item]
    by_path = Counter(urlsplit(p["url"]).path for p in pages)
    assert by_path == Counter([*PAGES, "/index.html"]), by_path  # one item per page
    for item in pages:
        outcome = PAGES.get(urlsplit(item["url"]).path, (None, None, "item"))[2]
        if outcome == "item":
            assert item["role"] in ("article", "toc", "other"), item["url"]
        else:  # skipped: passed on unanalysed
            assert item["role"] == "", item["url"]


def test_skips_are_counted(hostile_crawl) -> None:
    result, *_ = hostile_crawl
    expected = Counter(o.split(":", 1)[1] for _, _, o in PAGES.values() if o.startswith("skip:"))
    for reason, n in expected.items():
        assert result.stats.get(f"wisdom/skipped/{reason}") == n, reason
    fed = result.stats.get("wisdom/pages_fed", 0)
    analysed = sum(1 for _, _, o in PAGES.values() if o == "item") + 1  # + index
    assert fed == analysed
    # the items of analysed pages: on time, or late (held for warm-up / TOC targets)
    roles = Counter(f"wisdom/items/{r}" for r in ("article", "toc", "other"))
    assert sum(result.stats.get(k, 0) for k in roles) == analysed


def test_store_holds_exactly_the_analysed_pages(hostile_crawl) -> None:
    result, _, db = hostile_crawl
    with open_store(f"sqlite:///{db}") as store:
        (site,) = store.sites()
        assert store.page_count(site) == result.stats["wisdom/pages_fed"]
