"""The add-on changes only the spiders that ask for the analysis (issue 32, item 5): a plain
spider that yields dicts crawls the same pages and yields the same items with the add-on as
without it (no request dropped by the focus, no SiteStructureItem in its feed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.crawling import run_crawl

pytestmark = pytest.mark.crawl


def _plain_crawl(tmp_path: Path, site: Path, name: str, addons: dict[str, int] | None,
                 spider: str = "demo_plain") -> tuple[list[dict[str, str]], dict[str, int]]:
    settings: dict[str, object] = {"SPIDER_MODULES": "sample_project.spiders,tests.feed_spiders"}
    if addons is not None:
        settings["ADDONS"] = addons
    result = run_crawl(spider, tmp_path / name, args={"site_dir": str(site)},
                       settings=settings)  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    return sorted(result.items, key=lambda i: str(i.get("url"))), result.stats


def test_a_plain_spider_crawls_alike_with_and_without_the_addon(tmp_path: Path) -> None:
    from sample_project.demo_site import build_demo_site

    build_demo_site(tmp_path / "demo")
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    on, on_stats = _plain_crawl(tmp_path, tmp_path / "demo", "on", None)  # the project's add-on
    off, off_stats = _plain_crawl(tmp_path, tmp_path / "demo", "off", {})
    assert on_stats["response_received_count"] == off_stats["response_received_count"]
    assert [i["url"] for i in on] == [i["url"] for i in off]
    assert on == off  # the same dicts: no SiteStructureItem, nothing cleaned
    assert all(set(i) == {"url", "title"} for i in on)
    assert on_stats.get("wisdom/focus/dropped", 0) == 0
    assert len(on) > 500  # the print and share pages a focused crawl drops are there


def test_a_spider_that_declares_it_is_focused_without_yielding_page_items(tmp_path: Path) -> None:
    from sample_project.demo_site import build_demo_site

    build_demo_site(tmp_path / "demo")
    (tmp_path / "declared").mkdir()
    items, stats = _plain_crawl(tmp_path, tmp_path / "demo", "declared", None, "demo_declared")
    assert stats["wisdom/focus/dropped"] > 0
    assert sum(1 for i in items if "tocs" in i) == 1  # its SiteStructureItem
