"""Pages of another site never enter the store: a real crawl of a local site whose pages redirect
(HTTP 302 and ``<meta refresh>``) to a second local site — another host (127.0.0.2) or another
port — while the crawl keeps to its start site.

The ``site`` spider's host rule is the crawl's offsite policy, so the redirects are dropped before
anything is downloaded from the other site. A spider with ``allowed_domains`` whose start request
(``dont_filter``, as Scrapy's default start requests are) is redirected off-site still receives
the other site's page; the feed applies the offsite policy to where the redirect landed and skips
it (``wisdom/skipped/offsite``)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawling import REPO, crawl_command, read_result, run_crawl
from tests.reliability._server import Page, Redirect, serve_pages
from wisdom_scrapy.store import open_store

pytestmark = pytest.mark.crawl

HTML = "text/html; charset=utf-8"


def _doc(body: str, head: str = "") -> bytes:
    return f"<html><head><title>t</title>{head}</head><body>{body}</body></html>".encode()


def _other_site(base: str) -> dict[str, Page]:
    return {
        "/landing.html": (HTML, _doc('<p>the other site, reached by a redirect</p>'
                                     '<a href="/deeper.html">deeper</a>')),
        "/refreshed.html": (HTML, _doc("<p>the other site, reached by a meta refresh</p>")),
        "/deeper.html": (HTML, _doc("<p>deeper in the other site</p>")),
    }


def _start_site(other: str) -> dict[str, Page]:
    return {
        "/index.html": (HTML, _doc('<p>the start site</p><a href="/a.html">a page</a> '
                                   '<a href="/moved.html">moved</a> '
                                   '<a href="/refresh.html">refresh</a>')),
        "/a.html": (HTML, _doc('<p>a page of the start site</p><a href="/index.html">home</a>')),
        "/moved.html": Redirect(other + "landing.html"),
        "/refresh.html": (HTML, _doc("<p>moved</p>", f'<meta http-equiv="refresh" '
                                     f'content="0; url={other}refreshed.html">')),
    }


@pytest.fixture(params=["other host", "other port"])
def two_sites(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str], list[str]]]:
    """(start site's base URL, paths requested from it, paths requested from the other site)."""
    start_pages: dict[str, Page] = {}
    other_pages: dict[str, Page] = {}
    host = "127.0.0.2" if request.param == "other host" else "127.0.0.1"
    with serve_pages(start_pages) as (base, requested), \
            serve_pages(other_pages, host=host) as (other, other_requested):
        start_pages.update(_start_site(other))
        other_pages.update(_other_site(other))
        yield base, requested, other_requested


def _check_store(db: Path, base: str, stats: dict) -> None:
    with open_store(f"sqlite:///{db}") as store:
        (site,) = store.sites()
        assert base.startswith(f"http://{site}/")
        assert store.page_count(site) == stats["wisdom/pages_fed"]


def test_site_spider_never_fetches_nor_stores_the_other_site(two_sites, tmp_path: Path) -> None:
    base, requested, other_requested = two_sites
    db = tmp_path / "store.db"
    result = run_crawl("site", tmp_path, args={"url": base + "index.html"},
                       settings={"WISDOM_STORE_URI": f"sqlite:///{db}"})
    assert result.returncode == 0, result.log[-3000:]
    assert {"/index.html", "/a.html", "/moved.html", "/refresh.html"} <= set(requested)
    assert other_requested == []
    assert result.stats["offsite/filtered"] == 2  # the redirect and the meta refresh
    assert result.stats["wisdom/pages_fed"] == 2  # index and a (a meta refresh is followed)
    assert all(item["url"].startswith(base) for item in result.items if "url" in item)
    assert [item["site"] for item in result.items if "tocs" in item] == [base[7:-1]]
    _check_store(db, base, result.stats)


SPIDER = '''
import scrapy
from wisdom_scrapy.items import PageItem



class Allowed(scrapy.Spider):
    """allowed_domains, and Scrapy's default start requests (dont_filter)."""
    name = "allowed"

    def __init__(self, start, host, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = start.split(",")
        self.allowed_domains = [host]

    def parse(self, response):
        yield PageItem(url=response.url, title="")
'''


@pytest.mark.parametrize("two_sites", ["other host"], indirect=True)
def test_feed_skips_a_redirect_that_lands_off_site(two_sites, tmp_path: Path) -> None:
    """(Another port of an allowed host is on-site for ``allowed_domains``, which names hosts.)"""
    base, _, other_requested = two_sites
    spider = tmp_path / "allowed.py"
    spider.write_text(SPIDER)
    db = tmp_path / "store.db"
    cmd, items, stats = crawl_command(
        "allowed", tmp_path, args={"start": f"{base}index.html,{base}moved.html",
                                   "host": "127.0.0.1"},
        settings={"WISDOM_STORE_URI": f"sqlite:///{db}"})
    at = cmd.index("crawl")
    cmd[at:at + 2] = ["runspider", str(spider)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240,
                          check=False)
    result = read_result(proc.returncode, proc.stderr + proc.stdout, items, stats)
    assert result.returncode == 0, result.log[-3000:]
    assert other_requested == ["/landing.html"]  # dont_filter passed Scrapy's offsite filter
    assert result.stats["wisdom/skipped/offsite"] == 1
    assert result.stats["wisdom/pages_fed"] == 1  # the start site's index
    assert not [item for item in result.items if "tocs" in item and base[7:-1] not in item["site"]]
    _check_store(db, base, result.stats)
