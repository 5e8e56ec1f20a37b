"""The site-crawl benchmark's gold and scoring (benchmarks/site_crawl.py) on fixture pages.

The benchmark itself crawls whole Debian documentation sites (minutes); these checks make sure
the measuring instrument reads the markup and scores as its README says, in a second.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.site_crawl import (
    Crawl,
    article_score,
    cjk_as_tokens,
    gold_for_page,
    integrity,
    mean_prf,
    parse_ms_per_page,
    role_prf,
    speed_summary,
    text_score,
    toc_anchor_score,
    toc_links,
    toc_score,
    url_to_file,
)
from wisdom_scrapy.analysis.evaluation import PRF

PYDOC = Path(__file__).parent / "fixtures" / "pydoc"
BASE = "http://127.0.0.1:8000/"


def page(name: str) -> bytes:
    return (PYDOC / name).read_bytes()


def test_sphinx_toc_page_gold_links() -> None:
    url = BASE + "tutorial/index.html"
    gold = gold_for_page(page("tutorial-index.html"), url)
    assert gold.role == "toc"
    assert "toctree-wrapper" in gold.rule
    # absolute, fragment removed, one URL per page, only links of the main part
    assert BASE + "tutorial/appetite.html" in gold.links
    assert BASE + "tutorial/classes.html" in gold.links
    assert not any("#" in link for link in gold.links)
    assert len(gold.anchors) > len(gold.links)  # sections of one page: one URL, many anchors
    assert url not in gold.links  # permalinks ("#the-python-tutorial") are the page itself
    assert BASE + "copyright.html" not in gold.links  # footer, outside div[role=main]
    assert BASE + "_static/pygments.css" not in gold.links  # <link>, not <a>


def test_sphinx_article_gold_text() -> None:
    gold = gold_for_page(page("tutorial-appetite.html"), BASE + "tutorial/appetite.html")
    assert gold.role == "article"
    assert "If you do much work on computers" in " ".join(gold.text.split())
    assert "¶" not in gold.text
    assert "Navigation" not in gold.text  # the related bar is outside the main part
    bugs = gold_for_page(page("bugs.html"), BASE + "bugs.html")
    assert bugs.role == "article"
    assert bugs.links == frozenset()


def test_docbook_gold() -> None:
    chapter = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<html><body>'
        '<div class="navheader"><a href="ch01.html">上一页</a></div>'
        '<div class="chapter"><h1>第 2 章 软件包</h1>'
        '<div class="toc"><dl class="toc"><dt><a href="#a">2.1. 基础</a></dt></dl></div>'
        "<p>Debian 是一个组织。</p></div>"
        '<div class="navfooter"><a href="index.html">起始页</a></div></body></html>'
    )
    gold = gold_for_page(chapter.encode(), BASE + "ch02.html")
    assert gold.role == "article"
    assert gold.text.splitlines() == ["第 2 章 软件包", "Debian 是一个组织。"]
    book = (
        '<html><body><div class="book"><div class="toc">'
        '<a href="ch01.html#x">1</a><a href="ch01.html">1</a><a href="ch02.html">2</a>'
        '</div></div></body></html>'
    )
    toc = gold_for_page(book, BASE + "index.html")
    assert toc.role == "toc"
    assert toc.links == {BASE + "ch01.html", BASE + "ch02.html"}
    other = gold_for_page("<html><body><p>Pick a language</p></body></html>", BASE)
    assert other.role == "other"


def test_article_score() -> None:
    gold = "one two three four five six seven eight"
    assert article_score({"role": "article", "text": gold}, gold) == (1.0, 1.0, 1.0)
    half = article_score({"role": "article", "text": "one two three four five"}, gold)
    assert half.precision == 1.0
    assert 0 < half.recall < 1
    # another role, or no item at all: zero for the article metric
    assert article_score({"role": "toc", "text": gold}, gold) == (0.0, 0.0, 0.0)
    assert article_score(None, gold) == (0.0, 0.0, 0.0)
    assert text_score(None, gold) == (0.0, 0.0, 0.0)


def test_cjk_tokens() -> None:
    assert cjk_as_tokens("软件包 apt").split() == ["软", "件", "包", "apt"]
    gold = "第二章软件包管理很重要"
    # one \w+ token each: no shared shingle; character tokens: a large overlap
    assert text_score("第二章软件包管理", gold) == (0.0, 0.0, 0.0)
    assert text_score("第二章软件包管理", gold, cjk=True).precision == 1.0


def test_toc_score() -> None:
    url = BASE + "library/index.html"
    gold = {BASE + "library/a.html", BASE + "library/b.html"}
    item = {
        "role": "toc",
        "links": [
            {"url": BASE + "library/a.html#section"},
            {"url": BASE + "library/a.html"},
            {"url": url + "#top"},  # the page itself: left out, as in the gold
            {"url": BASE + "library/c.html"},
        ],
    }
    assert toc_links(item, url) == {BASE + "library/a.html", BASE + "library/c.html"}
    score = toc_score(item, gold, url)
    assert score.precision == pytest.approx(0.5)
    assert score.recall == pytest.approx(0.5)
    assert toc_score({"role": "article", "links": item["links"]}, gold, url) == (0, 0, 0)
    assert toc_score(None, gold, url) == (0.0, 0.0, 0.0)
    # anchors: a.html twice on both sides, b.html once in the gold only, c.html once emitted only
    anchors = toc_anchor_score(item, [BASE + "library/a.html"] * 2 + [BASE + "library/b.html"],
                               url)
    assert anchors.precision == pytest.approx(2 / 3)
    assert anchors.recall == pytest.approx(2 / 3)
    assert toc_anchor_score(None, [BASE + "library/a.html"], url) == (0.0, 0.0, 0.0)


def test_role_prf_and_means() -> None:
    gold = {"a": "article", "b": "article", "c": "toc", "d": None}
    predicted = {"a": "article", "c": "article", "d": "article"}  # b has no item
    art = role_prf(gold, predicted, "article")
    assert (art["gold"], art["predicted"], art["correct"]) == (2, 2, 1)  # d is unlabelled
    assert art["precision"] == 0.5 and art["recall"] == 0.5
    toc = role_prf(gold, predicted, "toc")
    assert toc["precision"] == 0.0 and toc["recall"] == 0.0
    means = mean_prf([PRF(1.0, 0.5, 2 / 3), PRF(0.0, 0.0, 0.0)])
    assert means["n"] == 2 and means["precision"] == 0.5 and means["f1"] == pytest.approx(1 / 3)


def test_integrity_finds_duplicates_and_missing_items(tmp_path: Path) -> None:
    def response(path: str) -> dict[str, object]:
        return {"url": BASE + path, "status": 200, "html": True, "content_type": "text/html"}

    crawl = Crawl("on", [], 0, 1.0, tmp_path / "log", 0.0)
    crawl.responses = [response("a.html"), response("b.html"), response("c.html"),
                       {"url": "data:,", "status": 200, "html": False, "content_type": ""}]
    crawl.items = [{"url": BASE + "a.html", "role": "article"},
                   {"url": BASE + "a.html", "role": "toc"},
                   {"url": BASE + "b.html", "role": "other"},
                   {"site": "127.0.0.1:8000", "tocs": [], "articles": []}]
    crawl.events = [
        {"type": "ArticleItem", "url": BASE + "a.html", "response_url": BASE + "a.html"},
        {"type": "TocItem", "url": BASE + "a.html", "response_url": BASE + "a.html"},
        {"type": "PageItem", "url": BASE + "b.html", "response_url": "data:,"},
        {"type": "SiteStructureItem", "url": None, "response_url": "data:,"},
    ]
    pages = [BASE + "a.html", BASE + "b.html", BASE + "c.html"]
    report = integrity(crawl, pages, BASE)
    assert report["page_items"] == 3
    assert report["site_level_items"] == {"SiteStructureItem": 1}
    assert report["duplicate_urls"] == [BASE + "a.html"]
    assert report["pages_without_item"] == [BASE + "c.html"]
    assert report["items_without_page"] == []
    assert report["items_emitted_late"] == 1  # page items only
    assert report["non_site_responses"] == 1


def test_url_to_file() -> None:
    site = PYDOC
    assert url_to_file(BASE + "bugs.html", BASE, site) == site / "bugs.html"
    assert url_to_file(BASE + "missing.html", BASE, site) is None
    assert url_to_file("http://elsewhere/bugs.html", BASE, site) is None


def test_speed_summary_cpu_per_page() -> None:
    runs = [
        {"mode": "off", "pages_per_second": 4.0, "cpu_ms_per_page": 20.0},
        {"mode": "on", "pages_per_second": 2.0, "cpu_ms_per_page": 50.0},
        {"mode": "off", "pages_per_second": 6.0, "cpu_ms_per_page": 30.0},
        {"mode": "on", "pages_per_second": 1.0, "cpu_ms_per_page": 70.0},
    ]
    summary = speed_summary(runs)
    assert summary["median_pages_per_second"] == {"on": 1.5, "off": 5.0}
    assert summary["median_cpu_ms_per_page"] == {"on": 60.0, "off": 25.0}
    assert summary["cpu_ratio_of_medians"] == pytest.approx(2.4)
    assert parse_ms_per_page(sorted(PYDOC.glob("*.html"))[:3], runs=1) > 0
