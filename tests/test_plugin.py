"""wisdom_scrapy as a Scrapy plugin, seen from a new project: real ``scrapy`` commands (crawl,
parse, check, settings) in a project made from scratch in a temporary folder, against the demo
site served on 127.0.0.1.

The project is what a user writes: ``scrapy.cfg``, a settings module with the add-on line and
nothing else of wisdom_scrapy's, and a spider that puts its own field (``category``) on each
PageItem and has a contract on its callback.
"""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import setuptools
from itemadapter import ItemAdapter
from scrapy.cmdline import ScrapyArgumentParser
from scrapy.commands import ScrapyHelpFormatter
from scrapy.exporters import CsvItemExporter
from scrapy.settings import Settings

from sample_project.demo_site import GROUND_TRUTH_FILE, build_demo_site
from wisdom_scrapy import Addon, ArticleItem, PageItem, TocItem
from wisdom_scrapy.commands import ReportCommand, ShowCommand, StatsCommand
from wisdom_scrapy.logformatter import WisdomLogFormatter, item_summary
from wisdom_scrapy.testing import serve_directory

from .crawling import REPO, run_crawl

SPIDER = '''
import scrapy
from wisdom_scrapy import PageItem

BASE = {base!r}


class PagesSpider(scrapy.Spider):
    name = "pages"
    start_urls = [BASE + "index.html"]

    def parse(self, response):
        yield from self.parse_page(response)
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if url.startswith(BASE):
                yield response.follow(url, self.parse)

    def parse_page(self, response):
        """One page's item, with the spider's own field.

        @url {article}
        @returns items 1 1
        @returns requests 0 0
        @scrapes url title text category
        """
        yield PageItem(url=response.url, title=response.css("title::text").get(""),
                       category=response.url[len(BASE):].rpartition("/")[0])
'''

SETTINGS = """
BOT_NAME = "newproject"
SPIDER_MODULES = ["newproject.spiders"]
ADDONS = {"wisdom_scrapy.Addon": 500}
ROBOTSTXT_OBEY = False
TELNETCONSOLE_ENABLED = False
WISDOM_KMIB_K = 1
"""


def category(url: str, base: str) -> str:
    """The spider's field: the page's folder under the site's root."""
    return url[len(base):].rpartition("/")[0]


@dataclass
class Project:
    root: Path
    base: str
    truth: dict[str, Any]

    def scrapy(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=self.root,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def url(self, kind: str) -> str:
        path = next(p for p, g in sorted(self.truth["pages"].items()) if g["kind"] == kind)
        return self.base + path.lstrip("/")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("newproject")
    build_demo_site(root / "demo")
    truth = json.loads((root / "demo" / GROUND_TRUTH_FILE).read_text(encoding="utf-8"))
    with serve_directory(root / "demo" / "site") as base:
        (root / "scrapy.cfg").write_text("[settings]\ndefault = newproject.settings\n")
        package = root / "newproject"
        (package / "spiders").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "settings.py").write_text(SETTINGS)
        project = Project(root, base, truth)
        (package / "spiders" / "__init__.py").write_text(
            SPIDER.format(base=base, article=project.url("article")))
        yield project


@pytest.fixture(scope="module")
def crawl(project: Project) -> tuple[list[dict[str, Any]], str]:
    """The project's crawl of the demo site at Scrapy's default log level (DEBUG)."""
    out = project.root / "items.jsonl"
    proc = project.scrapy("crawl", "pages", "-O", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    return items, proc.stderr


# ------------------------------------------------------------------------------ spider fields


@pytest.mark.crawl
def test_spider_fields_reach_every_cleaned_item_as_top_level_feed_fields(project, crawl):
    items, _ = crawl
    pages = [i for i in items if "role" in i]
    roles = {i["role"] for i in pages}
    assert {"article", "toc", "other"} <= roles
    # every page item, held ones included (warm-up, TOC pages), carries the spider's field
    assert all(i["category"] == category(i["url"], project.base) for i in pages)
    assert "extra" not in pages[0]
    articles = [i for i in pages if i["role"] == "article"]
    assert any(a["category"] == "news/world" for a in articles), {a["category"] for a in articles}


def test_a_spider_field_may_not_take_a_cleaned_items_name():
    item = PageItem(url="http://a.org/", category="x", extra={"lang": "en"})
    assert item.extra == {"category": "x", "lang": "en"}
    for name in ("text", "links", "features", "blocks"):
        with pytest.raises(TypeError, match=name):
            PageItem(url="http://a.org/", **{name: "mine"})
    adapter = ItemAdapter(ArticleItem("u", "t", "body", extra={"category": "x"}))
    adapter["score"] = 3  # a pipeline adds a field
    assert adapter.asdict()["category"] == "x" and adapter["score"] == 3
    assert "extra" not in adapter and list(adapter)[-2:] == ["category", "score"]
    with pytest.raises(KeyError):
        adapter["extra"] = {}
    out = io.BytesIO()
    exporter = CsvItemExporter(out)  # a column per field: Scrapy asks each field's metadata
    exporter.start_exporting()
    exporter.export_item(adapter.item)
    exporter.finish_exporting()
    assert out.getvalue().decode().splitlines()[0].endswith("features,category,score")


# ------------------------------------------------------------------------------ data directory


@pytest.mark.crawl
def test_the_store_defaults_to_the_project_data_directory(project, crawl):
    assert (project.root / ".scrapy" / "wisdom.db").is_file()
    assert not list(project.root.glob("wisdom.db*"))
    listing = project.scrapy("wisdom-stats", "--json")
    assert listing.returncode == 0, listing.stderr[-2000:]
    (site,) = [json.loads(line) for line in listing.stdout.splitlines()]
    assert site["site"] == urlsplit(project.base).netloc and site["pages"] > 100
    report = project.scrapy("wisdom-report")
    assert report.returncode == 0, report.stderr[-2000:]
    assert Path(report.stdout.strip()) == project.root / ".scrapy" / "wisdom-report.html"


@pytest.mark.crawl
def test_test_crawls_leave_the_checkout_alone(project, tmp_path):
    watched = [REPO / ".scrapy" / name for name in ("wisdom.db", "wisdom-report.html")]
    watched += [REPO / ".wisdom" / name for name in ("wisdom.db", "report.html")]
    before = {p: p.stat().st_mtime_ns for p in watched if p.exists()}
    result = run_crawl("site", tmp_path, args={"url": project.base + "index.html"},
                       settings={"CLOSESPIDER_PAGECOUNT": 40})
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats["wisdom/pages_fed"] >= 40
    assert {p: p.stat().st_mtime_ns for p in watched if p.exists()} == before
    assert (tmp_path / "site-report.html").is_file()


# ------------------------------------------------------------------------------ log and feed


@pytest.mark.crawl
def test_items_are_logged_as_a_summary_and_the_feed_is_lean(crawl):
    items, log = crawl
    scraped = log.count("Scraped from")
    assert scraped == len(items)
    articles = [i for i in items if i.get("role") == "article"]
    # nothing of an article's body reaches the log, only its size
    assert sum("ArticleItem(" in line for line in log.splitlines()) == len(articles)
    longest = max(articles, key=lambda a: len(a["text"]))
    assert longest["text"][:200] not in log and f"<{len(longest['text']):,} chars>" in log
    # the lean default: no article HTML, block list or term vector
    assert all(a["html"] == "" and a["blocks"] == [] and a["features"] == [] for a in articles)
    assert all(a["text"] and a["entropy"] for a in articles)


def test_item_summary_and_the_users_log_formatter():
    text = "word " * 1000
    summary = item_summary(ArticleItem("http://a.org/x", "A title", text, extra={"c": "x"}))
    assert summary.startswith("ArticleItem(url='http://a.org/x', title='A title', text=<5,000")
    assert "c='x'" in summary and len(summary) < 400
    toc = TocItem("http://a.org/", "Home", links=[{"url": f"http://a.org/{i}"} for i in range(99)])
    assert "links=<99 entries>" in item_summary(toc)
    settings = Settings()
    Addon().update_settings(settings)
    assert settings["LOG_FORMATTER"] == "wisdom_scrapy.logformatter.WisdomLogFormatter"
    own = Settings({"LOG_FORMATTER": "my.Formatter"}, priority="project")
    Addon().update_settings(own)
    assert own["LOG_FORMATTER"] == "my.Formatter"
    assert issubclass(WisdomLogFormatter, __import__("scrapy").logformatter.LogFormatter)


# ------------------------------------------------------------------------------ scrapy tooling


def _printed_items(stdout: str) -> list[dict[str, Any]]:
    printed = stdout.split("# Scraped Items", 1)[1].split("\n", 1)[1]
    return list(ast.literal_eval(printed.split("# Requests", 1)[0].strip()))


@pytest.mark.crawl
def test_wisdom_parse_prints_the_cleaned_item(project, crawl, tmp_path):
    url = project.url("article")
    proc = project.scrapy("wisdom-parse", "--spider", "pages", "-c", "parse_page", "--nocolour",
                          "--nolinks", url)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (item,) = _printed_items(proc.stdout)
    assert item["role"] == "article" and item["url"] == url
    assert item["category"] == category(url, project.base) != ""
    assert not item["single_page"] and len(item["text"]) > 500  # with what the store knows
    gold = project.truth["pages"][urlsplit(url).path]
    assert gold["title"] in item["title"]
    # an empty store: the page alone (single-page mode), still the cleaned item
    cold = project.scrapy("wisdom-parse", "--spider", "pages", "-c", "parse_page", "--nocolour",
                          "--nolinks", "-s", f"WISDOM_STORE_URI=sqlite:///{tmp_path / 'e.db'}",
                          url)
    assert cold.returncode == 0, cold.stderr[-3000:]
    (item,) = _printed_items(cold.stdout)
    assert item["role"] == "article" and item["single_page"] and item["text"]
    # Scrapy's own command is not replaced: it prints what the callback yields
    raw = project.scrapy("parse", "--spider", "pages", "-c", "parse_page", "--nocolour",
                         "--nolinks", url)
    assert raw.returncode == 0, raw.stderr[-3000:]
    (item,) = _printed_items(raw.stdout)
    assert item["url"] == url and not item.get("role") and not item.get("text"), item


@pytest.mark.crawl
def test_scrapy_check_contracts_test_the_cleaned_item(project, crawl):
    proc = project.scrapy("check", "pages")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Ran 3 contracts" in proc.stderr and "OK" in proc.stderr
    # the control: without the add-on the callback's raw PageItem has no text
    raw = project.scrapy("check", "pages", "-s", "ADDONS={}")
    assert raw.returncode == 1 and "Missing fields: text" in raw.stderr, raw.stderr[-2000:]


@pytest.mark.crawl
def test_wisdom_settings_shows_the_defaults_and_keeps_the_users(project):
    def get(name: str, *args: str) -> str:
        proc = project.scrapy("wisdom-settings", "--get", name, *args)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.strip()

    assert get("WISDOM_FOCUS") == "drop"
    assert get("WISDOM_KMIB_ST") == "0.8"
    assert get("WISDOM_STORE_URI") == f"sqlite:///{project.root / '.scrapy/wisdom.db'}"
    assert get("WISDOM_FOCUS", "-s", "WISDOM_FOCUS=off") == "off"
    assert get("WISDOM_KMIB_K") == "1"  # the project's own value (here the default's equal)
    own = Settings({"WISDOM_FOCUS": "deprioritize"}, priority="project")
    Addon().update_settings(own)
    assert own["WISDOM_FOCUS"] == "deprioritize"


@pytest.mark.crawl
def test_a_disabled_add_on_logs_one_info_line(project, tmp_path):
    proc = project.scrapy("crawl", "pages", "-s", "WISDOM_ENABLED=False", "-s",
                          "CLOSESPIDER_PAGECOUNT=5", "-O", str(tmp_path / "x.jsonl"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if "wisdom" in line.lower()
             and "Enabled" not in line and "Overridden" not in line]
    assert [line.split("] ", 1)[1] for line in lines if "] " in line] == [
        "INFO: wisdom_scrapy: disabled (WISDOM_ENABLED is False)"]
    assert "WARNING" not in proc.stderr


def _headings(help_text: str) -> list[str]:
    lines = help_text.splitlines()
    return [lines[i - 1] for i, line in enumerate(lines) if i and line and set(line) <= {"=", "-"}]


@pytest.mark.parametrize("command", [ShowCommand, ReportCommand, StatsCommand])
def test_command_help_has_only_its_own_headings(command, monkeypatch):
    """Scrapy underlines any help part ending in a colon as a heading: a wrapped "default:"
    did, at some terminal widths. At every width: the three real headings only."""
    for columns in range(60, 141, 2):
        monkeypatch.setenv("COLUMNS", str(columns))
        cmd = command()
        cmd.settings = Settings()
        parser = ScrapyArgumentParser(formatter_class=ScrapyHelpFormatter, usage="scrapy x",
                                      conflict_handler="resolve", description=cmd.long_desc())
        cmd.add_options(parser)
        assert _headings(parser.format_help()) == ["Usage", "Options", "Global Options"], columns


@pytest.mark.crawl
def test_wisdom_show_help_from_the_command_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "scrapy", "wisdom-show", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "COLUMNS": "80"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _headings(proc.stdout) == ["Usage", "Options", "Global Options"]
    assert "default: the project's WISDOM_CLEANER" in " ".join(proc.stdout.split())


# ------------------------------------------------------------------------------ packaging


def test_the_wheel_installs_no_sample_project():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    found = setuptools.find_packages(REPO, **config["tool"]["setuptools"]["packages"]["find"])
    assert "wisdom_scrapy" in found and "wisdom_scrapy.store" in found
    assert not [p for p in found if not p.startswith("wisdom_scrapy")]
    # the checkout still is a Scrapy project whose settings scrapy finds (scrapy.cfg)
    assert "sample_project.settings" in (REPO / "scrapy.cfg").read_text()
