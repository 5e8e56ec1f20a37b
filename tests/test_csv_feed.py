"""One CSV feed of every item a crawl emits loses nothing (issue 35): a real crawl of the demo
news site writes the same items as JSON lines and as CSV, and every CSV row holds its item's
fields, lists and dicts as JSON."""

from __future__ import annotations

import csv
import json
from typing import Any

import pytest

from sample_project.demo_site import build_demo_site
from tests.crawling import run_crawl
from wisdom_scrapy.exporters import json_cell
from wisdom_scrapy.testing import serve_directory


def _cell(value: Any) -> str:
    """What a CSV cell holds for ``value`` read back from the JSON-lines feed."""
    if value is None:
        return ""
    return str(json_cell(value))


@pytest.fixture(scope="module")
def feeds(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, list[str], list[dict], str]:
    tmp_path = tmp_path_factory.mktemp("csv")
    with serve_directory(build_demo_site(tmp_path)) as base:
        result = run_crawl(
            "site_fields",
            tmp_path,
            args={"url": base + "index.html"},
            settings={
                "SPIDER_MODULES": "sample_project.spiders,tests.feed_spiders",
                "WISDOM_STORE_URI": f"sqlite:///{tmp_path}/w.db",
                "WISDOM_FOCUS": "off",
                "WISDOM_ITEM_FIELDS": "html",
            },
            feeds=(f"{tmp_path / 'items.csv'}:csv",),
        )
    assert result.returncode == 0, result.log[-3000:]
    with open(tmp_path / "items.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        header = list(reader.fieldnames or [])
    return result.items, header, rows, result.log


@pytest.mark.crawl
def test_every_item_is_a_row_with_all_its_fields(feeds) -> None:
    items, header, rows, log = feeds
    assert "CSVExporter dropped fields" not in log
    roles = {i.get("role") for i in items}
    assert {"article", "toc"} <= roles and any("tocs" in i for i in items)  # and the structure
    assert len(rows) == len(items)
    for item, row in zip(items, rows, strict=True):
        # no column is lost but the large fields WISDOM_ITEM_FIELDS leaves empty
        assert all(not item[n] for n in set(item) - set(header)), item.get("url")
        assert set(item) - set(header) <= {"blocks", "features"}
        for name in header:
            assert row[name] == (_cell(item[name]) if name in item else ""), (name, item.get("url"))


@pytest.mark.crawl
def test_toc_links_and_dict_fields_are_json(feeds) -> None:
    _, _, rows, _ = feeds
    tocs = [r for r in rows if r["role"] == "toc"]
    links = [json.loads(r["links"]) for r in tocs]
    assert all(isinstance(x, list) for x in links) and sum(map(len, links)) >= 10
    assert all({"url", "text", "weight", "block"} == set(link) for x in links for link in x)
    articles = [r for r in rows if r["role"] == "article"]
    assert all(isinstance(json.loads(r["metadata"]), list) for r in articles)
    # a spider field the first item lacks is a column all the same, its dict as JSON
    assert rows[0]["where"] == ""
    later = [r for r in rows if r["where"]]
    assert later and all(json.loads(r["where"])["depth"] == int(r["depth"]) for r in later)


@pytest.mark.crawl
def test_only_the_large_fields_the_settings_fill_are_columns(feeds) -> None:
    _, header, rows, _ = feeds
    assert "html" in header and "blocks" not in header and "features" not in header
    assert all(r["html"].startswith("<") for r in rows if r["role"] == "article")


def test_the_addon_sets_the_csv_exporter_unless_the_project_has_one() -> None:
    from scrapy.settings import Settings

    from wisdom_scrapy.addon import CSV_EXPORTER, Addon

    settings = Settings()
    Addon().update_settings(settings)
    assert settings.getdict("FEED_EXPORTERS")["csv"] == CSV_EXPORTER
    own = Settings({"FEED_EXPORTERS": {"csv": "my.Exporter", "x": "my.X"}})
    Addon().update_settings(own)
    assert own.getdict("FEED_EXPORTERS") == {"csv": "my.Exporter", "x": "my.X"}
