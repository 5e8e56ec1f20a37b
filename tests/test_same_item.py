"""The same page with the same store gives the same item in any process (issue 15).

What changes an article's text beyond the term entropies — the site's block repetition (on how
many pages each layout block's exact text is) — is kept in the store (records of kind
``blocks``), so a real ``scrapy crawl demo`` over a store the site is already in, ``analyze_page``
with that store and a real ``scrapy wisdom-show`` subprocess with it all see the site the same
way: same role, same article text. A blocks record of another version is skipped and counted.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import lxml.html
import pytest

from sample_project.demo_site import build_demo_site
from tests.conftest import free_port
from tests.crawling import CrawlResult, run_crawl
from tests.test_report import scrapy
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.waits import ExtractionParams, Extractor, run_sync
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.items import xml_safe
from wisdom_scrapy.mining.repetition import (
    RECORD_KIND,
    RECORD_VERSION,
    BlockRepetition,
    decode_blocks,
    encode_blocks,
    page_blocks,
    stored_repetition,
)
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store import open_store


class Crawled:
    def __init__(self, root: Path, store_uri: str, first: CrawlResult, second: CrawlResult):
        self.root, self.store_uri, self.first, self.second = root, store_uri, first, second
        (structure,) = [i for i in second.items if "tocs" in i]
        self.site: str = structure["site"]
        self.pages = {i["url"]: i for i in second.items if i.get("role") in ("article", "toc")}

    def local_file(self, url: str) -> Path:
        return self.root / "demo" / "site" / url.split(self.site, 1)[1].lstrip("/")


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    """The demo crawled twice into one SQLite store (same port, so the same URLs): the second
    crawl starts with the site in the store, as a resumed crawl or another worker does."""
    root = tmp_path_factory.mktemp("same-item")
    build_demo_site(root / "demo")
    store_uri = f"sqlite:///{root / 'wisdom.db'}"
    args = {"site_dir": str(root / "demo"), "port": str(free_port())}
    runs = []
    for name in ("first", "second"):
        out = root / name
        out.mkdir()
        run = run_crawl("demo", out, args=args, settings={"WISDOM_STORE_URI": store_uri})
        assert run.returncode == 0, run.log[-3000:]
        runs.append(run)
    return Crawled(root, store_uri, *runs)


def _words(text: str) -> list[str]:
    return text.split()


@pytest.mark.crawl
def test_crawl_and_analyze_page_give_the_same_item(crawled: Crawled) -> None:
    """Every article and TOC page of the warm crawl: analyze_page with the store (its block
    repetition read from there by default) gives the crawl's role and article text."""
    assert crawled.second.stats.get("wisdom/repetition/bad_records", 0) == 0
    assert crawled.second.stats.get("wisdom/pages_unchanged", 0) > 0  # the site was stored
    assert {"article", "toc"} <= {i["role"] for i in crawled.pages.values()}
    with open_store(crawled.store_uri, create=False) as store:
        repetition = stored_repetition(store, crawled.site)
        assert repetition is not None
        assert repetition.n_pages == store.page_count(crawled.site)  # one record per page
        for url, item in sorted(crawled.pages.items()):
            html = crawled.local_file(url).read_bytes()
            analysis = analyze_page(html, url, store, site=crawled.site)
            assert analysis.role == item["role"], url
            if item["role"] == "article":
                assert xml_safe(analysis.article_text) == item["text"], url


def _view(crawled: Crawled, url: str, out: Path) -> lxml.html.HtmlElement:
    done = scrapy("wisdom-show", str(crawled.local_file(url)), "--url", url,
                  "--store", crawled.store_uri, "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    return lxml.html.parse(str(out)).getroot()


def _kept_article_words(view: lxml.html.HtmlElement) -> list[str]:
    """The words the view shows kept (not struck out) inside its article block, labels left
    out: what the ArticleItem's text holds."""
    (block,) = view.xpath("//*[contains(@class, 'wb-article')]")
    for dropped in block.xpath(".//*[contains(@class, 'wl') or contains(@class, 'wx')]"):
        dropped.drop_tree()
    return _words(block.text_content())


@pytest.mark.crawl
def test_crawl_and_wisdom_show_give_the_same_role_and_text(
    crawled: Crawled, tmp_path: Path
) -> None:
    article = next(i for _, i in sorted(crawled.pages.items()) if i["role"] == "article")
    toc = next(i for _, i in sorted(crawled.pages.items()) if i["role"] == "toc")
    for item in (article, toc):
        view = _view(crawled, item["url"], tmp_path / "view.html")
        head = " ".join(view.xpath("//div[@class='wv-head']")[0].text_content().split())
        assert f"role {item['role']}" in head, (item["url"], head)
    view = _view(crawled, article["url"], tmp_path / "article.html")
    assert _kept_article_words(view) == _words(article["text"])


def test_refed_page_replaces_its_blocks() -> None:
    """Counts are distinct URLs holding a block's text: the same URL fed twice counts once, a
    changed page's old blocks stop counting (a page whose blocks are kept; the extractor
    counts the site again from the store for the others:
    ``test_a_page_fetched_again_with_other_blocks_takes_its_earlier_ones_back``)."""
    old = PageModel.from_html("<div><p>First text here</p><p>Shared box</p></div>", "http://s/a")
    new = PageModel.from_html("<div><p>Other words now</p><p>Shared box</p></div>", "http://s/a")
    rep = BlockRepetition()
    assert rep.add_blocks("http://s/a", page_blocks(old), keep=True)
    assert not rep.add("http://s/a", old)
    assert rep.add("http://s/a", new)
    assert rep.n_pages == 1
    assert rep.pages_of(old).max() == 1 and rep.pages_of(old).min() == 0  # "First text" gone
    with open_store("memory://") as store:
        feed_model(store, old, site="s")
        feed_model(store, new, site="s")
        stored = stored_repetition(store, "s")
        assert stored is not None and stored.n_pages == 1
        assert stored.pages_of(new).tolist() == rep.pages_of(new).tolist()


def test_blocks_record_of_another_version_is_skipped_and_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    site, models = "s", [
        PageModel.from_html(f"<div><p>Page {i} words{i}</p><p>Menu box</p></div>", f"http://s/{i}")
        for i in range(4)
    ]
    with open_store("memory://") as store:
        for model in models:
            feed_model(store, model, site=site)
        good = encode_blocks(page_blocks(models[0]))
        assert decode_blocks(good).tolist() == page_blocks(models[0]).tolist()
        with pytest.raises(ValueError, match="sorted and unique"):  # damaged: skipped too
            decode_blocks(good[:9] + good[1:])
        newer = bytes([RECORD_VERSION + 1]) + good[1:]  # a later wisdom_scrapy wrote it
        store.put_records(site, RECORD_KIND, {models[1].url: newer, models[2].url: b"\x01abc"})
        with caplog.at_level(logging.WARNING):
            repetition = stored_repetition(store, site)
        assert repetition is not None
        assert (repetition.n_pages, repetition.skipped) == (2, 2)
        assert "2 block records of s skipped" in caplog.text
        # the crawl's extractor counts them in its stats
        counted: list[Any] = []
        extractor = Extractor(store, ExtractionParams(), analyze_page, count=counted.append)
        run_sync(extractor.submit(site, models[3].url, models[3], now=True))
        assert counted.count("wisdom/repetition/bad_records") == 2
