"""Bounded cost per page, in real crawls: what Scrapy never downloads (``DOWNLOAD_MAXSIZE``, set
by the add-on from ``WISDOM_MAX_PAGE_BYTES``)."""

from __future__ import annotations

import gzip
from pathlib import Path
from urllib.parse import urlsplit

from tests.crawling import run_crawl
from tests.reliability._pages import HTML, _doc
from tests.reliability._server import Page, serve_pages

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
