"""Bounded cost per page, in real crawls: what Scrapy never downloads (``DOWNLOAD_MAXSIZE``, set
by the add-on from ``WISDOM_MAX_PAGE_BYTES``) and what is too complex to analyse
(``WISDOM_MAX_PAGE_NODES``)."""

from __future__ import annotations

import gzip
import random
import string
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.crawling import run_crawl
from tests.reliability._pages import HTML, _doc
from tests.reliability._server import Page, serve_pages

pytestmark = pytest.mark.crawl

LIMIT = 200_000  # WISDOM_MAX_PAGE_BYTES of these crawls


def _sized_pages() -> dict[str, Page]:
    """A page over the limit, a gzip bomb (a few KB that inflate to 25 × the limit) and a small
    page, all linked from the index."""
    bomb = gzip.compress(_doc("<p>" + " zero" * (5 * LIMIT) + "</p>"), 9)
    assert len(bomb) < LIMIT // 10
    pages: dict[str, Page] = {
        "/big.html": (HTML, _doc("<p>" + "many words here " * LIMIT + "</p>")),
        "/bomb.html": (HTML, bomb, {"Content-Encoding": "gzip"}),
        "/small.html": (HTML, _doc("<p>a small page of a few words</p>")),
    }
    links = "".join(f'<a href="{path}">{path}</a> ' for path in pages)
    pages["/index.html"] = (HTML, _doc(f"<h1>Sized pages</h1><p>{links}</p>"))
    return pages


def _crawl_sized(tmp_path: Path, **settings: object) -> tuple[set[str], dict[str, object], str]:
    with serve_pages(_sized_pages()) as (base, _):
        result = run_crawl("site", tmp_path, args={"url": base + "index.html"},
                           settings={"WISDOM_MAX_PAGE_BYTES": LIMIT, **settings})
    assert result.returncode == 0, result.log[-3000:]
    # (Scrapy logs the cancelled download with its traceback: no error of the crawl's own)
    assert not [k for k in result.stats if k.startswith(("wisdom/errors", "spider_exceptions"))]
    paths = {urlsplit(item["url"]).path for item in result.items if "url" in item}  # pages
    return paths, result.stats, result.log


def test_download_maxsize_defaults_to_the_page_limit(tmp_path: Path) -> None:
    """Scrapy cancels the large download and the gzip bomb (counted in its stats and log):
    neither reaches the spider, the other pages are crawled as usual."""
    paths, stats, log = _crawl_sized(tmp_path)
    assert paths == {"/index.html", "/small.html"}
    assert "wisdom/skipped/too_large" not in stats  # never downloaded whole
    assert stats["downloader/exception_type_count/scrapy.exceptions.DownloadCancelledError"] == 1
    assert f"larger than download max size ({LIMIT})" in log
    assert f"exceeded DOWNLOAD_MAXSIZE ({LIMIT} B) during decompression" in log


def test_the_projects_download_maxsize_wins(tmp_path: Path) -> None:
    """With the project's own (larger) DOWNLOAD_MAXSIZE both bodies are downloaded; the add-on
    then skips them as too large (counted), never analysing them."""
    paths, stats, _ = _crawl_sized(tmp_path, DOWNLOAD_MAXSIZE=100 * LIMIT)
    assert paths == {"/index.html", "/small.html", "/big.html", "/bomb.html"}
    assert stats["wisdom/skipped/too_large"] == 2


def _distinct_words() -> bytes:  # 9 MB of a million distinct words
    rng = random.Random(16)
    words = " ".join("".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(1_000_000))
    return _doc(f"<p>{words}</p>")


def _many_nodes() -> bytes:  # 500k sibling elements, 250k nested pairs
    return _doc("<div><span>x</span></div>" * 250_000)


def _article(i: int) -> bytes:
    menu = "".join(f'<li><a href="/page{j}.html">page {j}</a></li>' for j in range(4))
    text = " ".join(f"sentence {i} about topic number {k} with ordinary words" for k in range(30))
    return _doc(f"<ul class='menu'>{menu}<li><a href='/words.html'>words</a></li>"
                f"<li><a href='/nodes.html'>nodes</a></li></ul><h1>Page {i}</h1><p>{text}</p>")


def test_a_too_complex_page_is_skipped_and_counted_the_others_analysed(tmp_path: Path) -> None:
    """A page of a million distinct words and one of 500k elements (default settings) leave as
    their unanalysed PageItem, counted under wisdom/skipped/too_complex; the crawl finishes and
    every other page is analysed as usual."""
    pages: dict[str, Page] = {"/words.html": (HTML, _distinct_words),
                              "/nodes.html": (HTML, _many_nodes)}
    pages.update({f"/page{i}.html": (HTML, _article(i)) for i in range(4)})
    pages["/index.html"] = pages["/page0.html"]
    with serve_pages(pages) as (base, _):
        result = run_crawl("site", tmp_path, args={"url": base + "index.html"},
                           settings={"WISDOM_FOCUS": "off"})
    assert result.returncode == 0, result.log[-3000:]
    assert not [k for k in result.stats if k.startswith(("wisdom/errors", "spider_exceptions"))]
    roles = {urlsplit(item["url"]).path: item["role"] for item in result.items if "url" in item}
    assert roles.keys() == set(pages), roles
    assert roles["/words.html"] == roles["/nodes.html"] == ""  # passed on unanalysed
    normal = [p for p in pages if p not in ("/words.html", "/nodes.html")]
    assert all(roles[p] in ("article", "toc", "other") for p in normal), roles
    assert result.stats["wisdom/skipped/too_complex"] == 2
    assert result.stats["wisdom/pages_fed"] == len(pages) - 2
    assert len(result.log.split("WISDOM_MAX_PAGE_NODES")) == 2  # logged once, then counted


def site_of_path(url: str) -> str:
    """WISDOM_SITE_KEY of the many-sites crawl: the first path segment (``/s7/…`` is site s7)."""
    return urlsplit(url).path.split("/")[1]


def test_held_pages_stay_under_one_cap_across_many_sites(tmp_path: Path) -> None:
    """50 sites of 3 pages, none of which warms up (no template, too few pages): each page is
    held, and WISDOM_MAX_HELD_PAGES bounds them all together; the oldest leave early, analysed,
    and every page still leaves as exactly one item."""
    cap, sites = 10, 50
    pages: dict[str, Page] = {
        f"/s{k}/p{j}.html": (HTML, _doc(f"<div><h1>Site {k} page {j}</h1><p>{k} {j} words of "
                                        f"its own, about subject {k * 3 + j}</p></div>"))
        for k in range(sites) for j in range(3)
    }
    links = "".join(f'<a href="{path}">{path}</a> ' for path in pages)
    pages["/index.html"] = (HTML, _doc(f"<p>{links}</p>"))
    with serve_pages(pages) as (base, _):
        result = run_crawl("site", tmp_path, args={"url": base + "index.html"},
                           settings={"WISDOM_FOCUS": "off", "WISDOM_MAX_HELD_PAGES": cap,
                                     "WISDOM_SITE_KEY": f"{__name__}.site_of_path"})
    assert result.returncode == 0, result.log[-3000:]
    assert not [k for k in result.stats if k.startswith(("wisdom/errors", "spider_exceptions"))]
    urls = Counter(urlsplit(item["url"]).path for item in result.items if "url" in item)
    assert urls == Counter(list(pages))  # one item per page
    assert {item["role"] for item in result.items if "url" in item} <= {"article", "toc", "other"}
    stats = result.stats
    assert stats["wisdom/held/peak"] == cap
    assert stats["wisdom/warmup/held"] == len(pages)  # every page waited …
    assert stats["wisdom/held/released_early"] == len(pages) - cap  # … the cap's last at idle
