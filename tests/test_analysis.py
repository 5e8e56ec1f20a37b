"""Tests of ``analyze_page`` (wisdom_scrapy.analysis.page_analysis): the page-level result of
WISDOM.

On the hand-built news site of ``test_wisdom`` (40 pages through ``feed_page`` into a
``memory://`` store): roles, article text without menu, footer and the site-wide ad, metadata,
TOC links, the same result from str, bytes, a model, a store or a snapshot and the store's
block repetition; cold start (too few
pages, or no store) goes to the single-page extractor. On the Python documentation (60 pages of
/usr/share/doc/python3.11/html in a store): article pages come out as articles whose text matches
the main part, TOC pages as TOCs whose links are the main part's links.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from tests.test_wisdom import AUTHORS, BASE, SITE, build_site, html_trees
from wisdom_scrapy.analysis.evaluation import shingle_prf
from wisdom_scrapy.analysis.page_analysis import Block, PageAnalysis, analyze_page
from wisdom_scrapy.engine.writes import feed_page
from wisdom_scrapy.mining.repetition import stored_repetition
from wisdom_scrapy.mining.wisdom import WisdomParams
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store import TermStore, open_store

PYDOC_ROOT = Path("/usr/share/doc/python3.11/html")


@pytest.fixture(scope="module")
def site():
    pages = build_site()
    store = open_store("memory://")
    for url, (_, html) in pages.items():
        feed_page(store, html, url, site=SITE)
    terms = {
        url: frozenset(PageModel.from_html(html, url).vocab) for url, (_, html) in pages.items()
    }
    yield pages, store, terms
    store.close()


def article_paragraphs(html: str) -> list[str]:
    model = PageModel.from_html(html, "http://x.test/")
    body = next(i for i in range(model.n) if model.element(i).get("id") == "body")
    return [
        model.text_of(i)
        for i in model.children(body).tolist()
        if model.element(i).get("id") != "ad"
    ]


def test_article_page(site) -> None:
    pages, store, terms = site
    url = f"{BASE}story-4.html"
    html = pages[url][1]
    result = analyze_page(html, url, store, target_terms=terms.get)
    assert isinstance(result, PageAnalysis)
    assert result.role == "article" and not result.single_page
    assert result.title.endswith("- The Daily Example")
    text = result.article_text
    for para in article_paragraphs(html):
        assert para in text
    assert "SuperWidget" not in text and "Contact us" not in text and "Copyright" not in text
    assert "\n\n" in text  # paragraphs
    byline = next(m for m in result.metadata if m.startswith("By "))
    assert AUTHORS[4 % len(AUTHORS)] in byline
    kinds = Counter(b.kind for b in result.blocks)
    assert kinds["article"] >= 1 and kinds["metadata"] >= 1
    assert all(isinstance(b, Block) and b.path.startswith("html/body") for b in result.blocks)
    assert all(isinstance(v, float) for b in result.blocks for v in b.figures.values())
    assert "<p>" in result.article_html and "SuperWidget" not in result.article_html
    assert result.figures["site_pages"] == len(pages)
    assert 0.0 <= result.figures["page_entropy"] <= 1.0
    assert result.figures["article_entropy"] < result.figures["page_entropy"]


def test_toc_page(site) -> None:
    pages, store, terms = site
    url = f"{BASE}toc-0.html"
    result = analyze_page(pages[url][1], url, store, target_terms=terms.get)
    assert result.role == "toc"
    assert result.figures["toc_by_api"] == 1.0
    model = PageModel.from_html(pages[url][1], url)
    expected = [(lk.url, lk.text) for lk in model.links() if "story-" in lk.url]
    assert result.toc_links == expected and len(expected) == 9
    assert [b.kind for b in result.blocks if b.origin == "skeleton"].count("toc") == 1
    # without fetched targets: the ALEN criterion finds the same list
    cold = analyze_page(pages[url][1], url, store)
    assert cold.role == "toc" and cold.figures["toc_by_api"] == 0.0
    assert cold.toc_links == expected


def test_same_result_from_every_input(site) -> None:
    pages, store, _ = site
    url = f"{BASE}story-11.html"
    html = pages[url][1]
    snapshot = store.snapshot(SITE)
    # with a store, its block repetition by default (the crawl's); without, as an argument
    repetition = stored_repetition(store, SITE)
    assert repetition is not None and repetition.n_pages == len(pages)
    results = [
        analyze_page(html, url, store),
        analyze_page(html.encode("utf-8"), url, store, site=SITE),
        analyze_page(None, url, model=PageModel.from_html(html, url), snapshot=snapshot,
                     repetition=repetition),
        analyze_page(html, url, None, snapshot=snapshot, repetition=repetition),
    ]
    first = results[0]
    for other in results[1:]:
        assert other.role == first.role == "article"
        assert other.article_text == first.article_text
        assert other.metadata == first.metadata
        assert [(b.kind, b.node, b.origin) for b in other.blocks] == [
            (b.kind, b.node, b.origin) for b in first.blocks
        ]


def test_one_finder_a_page_gives_the_items_of_both(site) -> None:
    """Issue 33: with the site view deciding, k-MIB's searches run only where the item uses
    them (the TOC search on a list page, the article search on an article page); what the
    items take is the same as with both searches (``every_block``), and blocks are dropped
    only where they were a search's unused answer."""
    pages, store, terms = site
    toc_blocks_skipped = article_blocks_skipped = 0
    for url, (_, html) in pages.items():
        lean = analyze_page(html, url, store, target_terms=terms.get)
        full = analyze_page(html, url, store, target_terms=terms.get, every_block=True)
        assert not lean.single_page
        assert (lean.role, lean.title, lean.metadata) == (full.role, full.title, full.metadata)
        assert lean.page_turn_urls == full.page_turn_urls
        if lean.role == "toc":  # only a TOC item has links
            assert lean.toc_links == full.toc_links
        if lean.role == "article":
            assert lean.article_text == full.article_text
            assert lean.article_html == full.article_html
            assert lean.figures["article_entropy"] == full.figures["article_entropy"]
        kept = [(b.kind, b.node, b.origin) for b in lean.blocks]
        every = [(b.kind, b.node, b.origin) for b in full.blocks]
        assert set(kept) <= set(every) and all(not b.figures for b in lean.blocks)
        assert all(b.figures for b in full.blocks)
        used = {"article": {"article", "metadata"}, "toc": {"toc"}}.get(lean.role, set())
        assert [k for k in every if k[0] in used] == kept, url
        toc_blocks_skipped += lean.role == "article" and any(k[0] == "toc" for k in every)
        article_blocks_skipped += lean.role == "toc" and any(k[0] == "article" for k in every)
    assert toc_blocks_skipped and article_blocks_skipped  # both searches were left out


def test_cold_start_is_single_page(site) -> None:
    pages, _, _ = site
    url = f"{BASE}story-2.html"
    html = pages[url][1]
    few: TermStore = open_store("memory://")
    with few:
        for u in list(pages)[:5]:
            feed_page(few, pages[u][1], u, site=SITE)
        warm = WisdomParams().warm_pages
        assert few.page_count(SITE) < warm
        for result in (analyze_page(html, url, few), analyze_page(html, url)):
            assert result.single_page
            assert result.role == "article"
            for para in article_paragraphs(html)[1:]:
                assert para in result.article_text
            assert "Contact us" not in result.article_text
            assert result.toc_links == []
        # the minimum is a parameter
        forced = analyze_page(html, url, few, params=WisdomParams(min_pages=5))
        assert not forced.single_page


def test_empty_and_invalid_input() -> None:
    for html in ("", "   ", b"\x00\x00"):
        result = analyze_page(html, "http://x.test/")
        assert result.role == "other" and result.article_text == "" and result.blocks == []
        assert result.article_html == "" and result.toc_links == []
    with pytest.raises(ValueError, match="html or a model"):
        analyze_page(None, "http://x.test/")


# ------------------------------------------------------------------------------------------
# the Python documentation
# ------------------------------------------------------------------------------------------

ARTICLES = ["library/json.html", "library/heapq.html", "library/bisect.html"]
TOCS = ["library/index.html", "library/text.html", "library/datatypes.html"]


@pytest.fixture(scope="module")
def pydoc():
    if not PYDOC_ROOT.is_dir():
        pytest.fail("python3.11-doc is not installed: apt-get install python3.11-doc", False)
    base = "http://127.0.0.1:8000/"
    files = sorted(PYDOC_ROOT.glob("library/*.html"))[:54]
    files += [PYDOC_ROOT / p for p in ARTICLES + TOCS]
    files = list(dict.fromkeys(files))
    assert len(files) >= 58
    store = open_store("memory://")
    terms = {}
    for path in files:
        url = base + path.relative_to(PYDOC_ROOT).as_posix()
        html = path.read_bytes()
        feed_page(store, html, url)
        terms[url] = frozenset(PageModel.from_html(html, url).vocab)
    yield store, terms, base
    store.close()


def main_node(model: PageModel) -> int:
    return next(i for i in range(model.n) if model.element(i).get("role") == "main")


@pytest.mark.parametrize("rel", ARTICLES)
def test_pydoc_article_pages(pydoc, rel: str) -> None:
    store, terms, base = pydoc
    html = (PYDOC_ROOT / rel).read_bytes()
    result = analyze_page(html, base + rel, store, target_terms=terms.get)
    assert result.role == "article"
    model = PageModel.from_html(html, base + rel)
    score = shingle_prf(result.article_text, model.text_of(main_node(model)))
    assert score.f1 >= 0.95, score


@pytest.mark.parametrize("rel", TOCS)
def test_pydoc_toc_pages(pydoc, rel: str) -> None:
    store, terms, base = pydoc
    html = (PYDOC_ROOT / rel).read_bytes()
    result = analyze_page(html, base + rel, store, target_terms=terms.get)
    assert result.role == "toc"
    model = PageModel.from_html(html, base + rel)
    main = main_node(model)
    end = int(model.subtree_end[main])
    gold = Counter(lk.url for lk in model.links() if main <= lk.node < end)
    found = Counter(url for url, _ in result.toc_links)
    common = sum((gold & found).values())
    assert common / sum(found.values()) >= 0.9  # precision
    assert common / sum(gold.values()) >= 0.8  # recall


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(html_trees())
def test_any_markup_with_a_warm_store(site, html: str) -> None:
    """Whatever the markup, a warm analysis returns a well-formed result (and no warning:
    pytest turns warnings into errors)."""
    _, store, terms = site
    result = analyze_page(html, f"{BASE}random.html", store, target_terms=terms.get)
    assert not result.single_page
    assert result.role in ("article", "toc", "other")
    assert isinstance(result.article_text, str) and isinstance(result.article_html, str)
    assert all(url.startswith("http") for url, _ in result.toc_links)
    assert all(np.isfinite(v) or np.isnan(v) for v in result.figures.values())
