"""Real ``scrapy crawl`` runs against sites served on 127.0.0.1: every page goes into the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from sample_project.demo_site import build_demo_site
from wisdom_scrapy import open_store
from wisdom_scrapy.testing import serve_directory

from .crawling import run_crawl

pytestmark = pytest.mark.crawl


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    build_demo_site(out)
    return out


@pytest.fixture(scope="module")
def demo_url(demo_dir):
    with serve_directory(demo_dir / "site") as base:
        yield base + "index.html"


def test_crawl_feeds_every_page_once_and_recrawl_changes_nothing(demo_dir, demo_url, tmp_path):
    uri = f"sqlite:///{tmp_path}/store.db"
    n_pages = len(list((demo_dir / "site").rglob("*.html")))
    first = run_crawl(
        "site",
        tmp_path,
        args={"url": demo_url},
        settings={"WISDOM_STORE_URI": uri, "WISDOM_FOCUS": "off"},
    )
    assert first.returncode == 0, first.log[-3000:]
    # a crawl with the defaults logs no warning (components that are off by default are quiet)
    assert [line for line in first.log.splitlines() if "WARNING" in line] == []
    page_items = [item for item in first.items if "role" in item]  # not the site's structure
    assert first.stats["wisdom/pages_fed"] == n_pages == len(page_items)
    assert first.stats["wisdom/terms"] > 50 * n_pages
    assert "wisdom/store_errors" not in first.stats
    with open_store(uri) as store:
        (site,) = store.sites()
        assert site == demo_url.split("/")[2]  # host:port
        assert store.page_count(site) == n_pages
        graph = store.links(site)
        assert len(graph) == n_pages
        assert sum(len(links) for links in graph.values()) == first.stats["wisdom/links"]
        before = store.snapshot(site)

    again = run_crawl(
        "site",
        tmp_path,
        args={"url": demo_url},
        settings={"WISDOM_STORE_URI": uri, "WISDOM_FOCUS": "off"},
    )
    assert again.returncode == 0, again.log[-3000:]
    assert again.stats["wisdom/pages_unchanged"] == n_pages
    assert "wisdom/pages_fed" not in again.stats
    with open_store(uri) as store:
        assert store.page_count(site) == n_pages
        assert store.snapshot(site) == before


def test_non_html_responses_are_skipped_and_counted(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text(
        '<html><body><p>Index page words</p><a href="data.json">data</a>'
        '<a href="notes.txt">notes</a><a href="page.html">page</a>'
        '<a href="empty.html">empty</a></body></html>'
    )
    (root / "page.html").write_text("<html><body><p>Another page</p></body></html>")
    (root / "empty.html").write_text("")
    (root / "data.json").write_text('{"a": 1}')
    (root / "notes.txt").write_text("plain text notes")
    uri = f"sqlite:///{tmp_path}/store.db"
    with serve_directory(root) as base:
        result = run_crawl(
            "site",
            tmp_path,
            args={"url": base + "index.html"},
            settings={"WISDOM_STORE_URI": uri, "WISDOM_FOCUS": "off"},
        )
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats["wisdom/pages_fed"] == 2
    assert result.stats["wisdom/skipped/empty"] == 1
    assert result.stats["wisdom/skipped/not_html"] == 2
    with open_store(uri) as store:
        assert store.page_count(store.sites()[0]) == 2


def test_unusable_store_uri_fails_the_crawl_with_a_message_naming_the_setting(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run_crawl("demo", tmp_path, settings={"WISDOM_STORE_URI": f"sqlite:///{blocker}/w.db"})
    assert result.returncode != 0
    assert "WISDOM_STORE_URI" in result.log
