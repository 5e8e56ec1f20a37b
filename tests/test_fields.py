"""Article fields (issue 31): headline, author, publication date and language, on real pages
(the vendored blog fixtures and one WordPress post, tests/fixtures), and in a crawl's feed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.crawling import run_crawl
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.mining.fields import (
    ArticleFields,
    SiteTitles,
    _part_key,
    article_fields,
    iso_date,
    text_language,
)
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.testing import serve_directory

FIXTURES = Path(__file__).parent / "fixtures"
SITES = FIXTURES / "sites"


def fields_of(path: Path) -> ArticleFields:
    """The fields of a page analysed alone (a cold site's first page)."""
    analysis = analyze_page(path.read_bytes(), "http://127.0.0.1/" + path.name)
    assert analysis.role == "article" and analysis.model is not None
    meta = [b.node for b in analysis.blocks if b.kind == "metadata"]
    return article_fields(analysis.model, analysis.article_node, metadata=meta)


def test_wordpress_post_headline_without_site_name_published_not_modified() -> None:
    found = fields_of(FIXTURES / "fields" / "paraguayos-post.html")
    # <title> is "… - Paraguayos.ORG": the h1 the title names is the headline
    assert found.title == "Camaristas ratifican arresto y tobillera para Thiago Gorostiaga"
    assert found.title_from == "heading"
    assert found.author == "Redacción"  # the itemprop="author" card's name, not its link URL
    # the dateModified <time> comes first on the page; datePublished is the date
    assert found.published == "2026-04-29T15:59:27-03:00"
    assert found.language == "es-AR"


def test_hugo_post_headline_is_the_h4_not_the_logo_h1() -> None:
    found = fields_of(SITES / "erikmcclure" / "blog" / "aurora-theory-released" / "index.html")
    assert found.title == "Aurora Theory Released!"
    assert found.author == "Erik McClure"  # article:author meta
    assert found.published == "2013-07-11T19:27:00+00:00"


def test_chinese_post_language_and_title() -> None:
    found = fields_of(SITES / "ctripfe" / "team" / "2017" / "06" / "05" / "remove-strict-node.html")
    assert found.title == "移除在 ESM 模式生成的严格模式"
    assert found.language.startswith("zh")


def test_title_site_affix_from_the_site_titles() -> None:
    titles = SiteTitles()
    for name in ("Harbour opens", "Rates rise", "Budget passed"):
        titles.add(f"{name} | The Lakeside Courier")
    titles.add("About us")
    assert titles.without_affixes("Fair this weekend | The Lakeside Courier") == "Fair this weekend"
    # a part no other title repeats is the headline's own
    assert titles.without_affixes("Storm - Part two | The Lakeside Courier") == "Storm - Part two"
    assert titles.without_affixes("The Lakeside Courier") == "The Lakeside Courier"  # never all
    # one page is no evidence: a cold site keeps its titles
    cold = SiteTitles()
    cold.add("Harbour opens | The Lakeside Courier")
    title = "Harbour opens | The Lakeside Courier"
    assert cold.without_affixes(title) == title
    # a spider's own title may hold a lone surrogate (from JSON, say): counted, never refused
    odd = SiteTitles()
    for name in ("Harbour opens", "Rates rise"):
        odd.add(f"{name} | The Lakeside Courier \ud83d")
    assert odd.without_affixes("Fair | The Lakeside Courier \ud83d") == "Fair"


def test_site_titles_forget_parts_seen_once_past_their_bound_and_stay_small() -> None:
    """Past ``max_parts`` distinct parts the ones seen once are forgotten (headlines), the
    repeated ones stay: each part's count is the one a Counter of (side, part) forgetting the
    same way keeps, so titles lose the same affixes; and a site of headlines takes a few
    dozen bytes a part, not a Counter's ~200."""
    titles, reference = SiteTitles(max_parts=8), Counter()
    for k in range(60):
        title = f"Headline {k} | Sports | The Courier" if k % 3 else f"Note {k % 7} | Lake Log"
        titles.add(title)
        first, *_, last = (part.strip() for part in title.split("|"))
        reference.update({("first", first.casefold()): 1, ("last", last.casefold()): 1})
        if len(reference) > 8:
            reference = Counter({key: n for key, n in reference.items() if n > 1})
    assert len(titles.parts) == len(reference) <= 9
    for (side, part), n in reference.items():
        assert titles.parts.value(_part_key(side, part), 0) == n
    assert titles.without_affixes("Another | Sports | THE COURIER") == "Another | Sports"
    assert titles.without_affixes("Note 3 | Lake Log") == "Note 3"  # 20 of 60, and "Note 3" 3
    assert titles.without_affixes("Lone | Nowhere") == "Lone | Nowhere"
    many = SiteTitles()
    for k in range(2000):
        many.add(f"Headline number {k} of the day | The Courier")
    parts = many.parts
    assert parts._keys.nbytes + parts._values.nbytes + 100 * len(parts._recent) < 20 * 2001
    assert many.without_affixes("Headline number 7 of the day | The Courier") == (
        "Headline number 7 of the day")


def test_title_without_heading_drops_the_stated_site_name() -> None:
    html = ("<html><head><title>Quiet night on the lake :: Lake Log</title>"
            '<meta property="og:site_name" content="Lake Log"></head><body>'
            "<div><p>Menu</p></div><div><p>" + "The lake was quiet all night long. " * 20
            + "</p></div></body></html>")  # fmt: skip
    model = PageModel.from_html(html, "http://127.0.0.1/a")
    assert article_fields(model, None).title == "Quiet night on the lake"


def test_json_ld_and_meta_sources() -> None:
    html = """<html><head><title>T</title>
    <script type="application/ld+json">{"@graph": [{"@type": "WebSite", "name": "S"},
      {"@type": "NewsArticle", "datePublished": "2024-03-05T14:20Z",
       "author": [{"@type": "Person", "name": "Ana Ruiz"}, {"name": "Li Wei"}]}]}</script>
    <meta name="author" content="https://example.org/ana"></head>
    <body><h1>T</h1><p>Body text here.</p></body></html>"""
    found = article_fields(PageModel.from_html(html, "http://127.0.0.1/a"), None)
    assert (found.author, found.published) == ("Ana Ruiz, Li Wei", "2024-03-05T14:20:00+00:00")
    assert found.language == ""  # Latin script names no language, and no lang is stated


def test_iso_date_and_script_language() -> None:
    assert iso_date("2024-03-05T14:20") == "2024-03-05T14:20:00"
    assert iso_date("not a date") == iso_date("05/03/2024") == ""
    assert text_language("한국어 문장") == "ko"
    assert text_language("Привет") == ""  # Cyrillic: many languages


@pytest.mark.crawl
def test_crawl_feed_shows_the_fields(tmp_path: Path) -> None:
    """A real crawl of the erikmcclure fixture subset: its ArticleItems carry the headline
    (not the logo's h1), the author, the date and the language in the feed."""
    with serve_directory(SITES / "erikmcclure") as base:
        result = run_crawl("site", tmp_path, args={"url": base})
    assert result.returncode == 0, result.log[-3000:]
    articles = [i for i in result.items if i.get("role") == "article"]
    posts = {i["url"].rsplit("/", 2)[-2]: i for i in articles}
    post = posts["aurora-theory-released"]
    assert post["title"] == "Aurora Theory Released!"
    assert post["author"] == "Erik McClure"
    assert post["published"] == "2013-07-11T19:27:00+00:00"
    assert post["language"] == "en-US"  # og:locale: the page has no lang attribute
    blog = [i for i in articles if "/blog/" in i["url"]]
    assert len(blog) >= 8
    assert all(i["title"] != "Erik McClure" and i["published"] for i in blog)


def test_marked_elements_are_those_of_the_element_tests() -> None:
    """The marked elements are found through their attributes (``//@itemprop/..``): the same
    elements, in document order, as testing every element (``*[@itemprop]``, ``a[@rel]``,
    ``time``), on the vendored pages and on markup that mixes the cases."""
    from lxml import etree
    from lxml import html as lxml_html

    from wisdom_scrapy.mining.fields import _MARKED

    by_element = etree.XPath("//*[@itemprop]|//a[@rel]|//time")
    mixed = (b"<html><head><link rel='author' href='/a'><meta itemprop='name' content='x'>"
             b"</head><body><a rel='author' itemprop='author' href='/b'>B</a><a href='/c'>C</a>"
             b"<time datetime='2020-01-02'>then</time><time itemprop='datePublished'>x</time>"
             b"<div ITEMPROP='articleBody'><a rel=''>e</a><span itemprop=''>s</span></div>"
             b"<x:a xmlns:x='urn:x' rel='r'>ns</x:a></body></html>")
    pages = [mixed, *(p.read_bytes() for p in sorted(SITES.rglob("*.html"))[:40])]
    assert len(pages) > 1
    for page in pages:
        doc = lxml_html.fromstring(page).getroottree().getroot()
        assert _MARKED(doc) == by_element(doc)
    assert len(_MARKED(lxml_html.fromstring(mixed))) == 7


def test_one_walk_finds_each_kind_as_its_own_walk() -> None:
    """The meta, script and heading elements come from one walk of the tree, each kind in
    document order: the elements separate walks give, headings of every rank interleaved."""
    from lxml import html as lxml_html

    from wisdom_scrapy.mining.fields import _HEADINGS, _by_kind

    mixed = (b"<html><head><meta name='a' content='1'><script>x</script></head><body>"
             b"<h2>b</h2><h1>a</h1><script type='application/ld+json'>{}</script><h3>c</h3>"
             b"<div><meta itemprop='x' content='2'><h6>d</h6></div><h2>e</h2></body></html>")
    pages = [mixed, *(p.read_bytes() for p in sorted(SITES.rglob("*.html"))[:40])]
    for page in pages:
        doc = lxml_html.fromstring(page).getroottree().getroot()
        found = _by_kind(doc)
        assert found["meta"] == list(doc.iter("meta"))
        assert found["script"] == list(doc.iter("script"))
        assert found["heading"] == list(doc.iter(*_HEADINGS))
    headings = _by_kind(lxml_html.fromstring(mixed))["heading"]
    assert [h.text for h in headings] == ["b", "a", "c", "d", "e"]


MIXED_MARKS = (
    b"<html><head><link rel='author' href='/a'><meta itemprop='name' content='x'></head><body>"
    b"<a rel='author' itemprop='author' href='/b'>B</a><a href='/c'>C</a><a rel='x'>no href</a>"
    b"<time datetime='2020-01-02' rel='author'>then</time><time itemprop='datePublished'>x</time>"
    b"<div ITEMPROP='articleBody'><a rel=''>e</a><span itemprop=''>s</span></div>"
    b"<span rel='author' itemprop='name'>Ann</span><noscript><span itemprop=author>N</span>"
    b"</noscript><template><time datetime='2021-01-01'>t</time></template>"
    b"<x:a xmlns:x='urn:x' rel='r'>ns</x:a><p itemprop='datePublished' content='2022-02-02'>"
    b"p</p></body></html>"
)


def _all_vendored_pages() -> list[bytes]:
    """Every HTML page vendored under tests/fixtures (plain and gzipped)."""
    import gzip

    paths = sorted([*FIXTURES.rglob("*.html"), *FIXTURES.rglob("*.html.gz")])
    return [gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
            for p in paths]  # fmt: skip


def test_marks_from_the_model_are_those_of_the_query(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the model holds the whole document with plain tags, the marks come from it (the
    build's ``itemprop`` and ``rel`` reads, its ``time`` nodes and hidden subtrees): the same
    elements, tags and attribute values, in document order, as the tree's query, and the same
    fields, on every vendored page parsed by a parser of its own and by lxml.html's shared one
    (the build's reads, then the kept node list), and on markup that mixes the cases; a model
    of part of the document, or of an XHTML tree, keeps the query."""
    from lxml import etree
    from lxml import html as lxml_html

    from wisdom_scrapy.mining import fields
    from wisdom_scrapy.page.parse import parse_html

    pages = [MIXED_MARKS, *_all_vendored_pages()]
    assert len(pages) > 90
    for page in pages:
        for root in (parse_html(page, "http://d/"), lxml_html.document_fromstring(page)):
            model = PageModel.from_tree(root, "http://d/")
            doc = root.getroottree().getroot()
            marks = fields._model_marks(model, doc)
            assert marks is not None
            queried = [el for el in fields._MARKED(doc) if not fields._hidden(el)]
            assert [marks.reach(k) for k in range(len(marks.tags))] == queried
            assert marks.tags == [el.tag for el in queried]
            for name in ("itemprop", "rel", "datetime"):
                assert marks.values(name) == [el.get(name) for el in queried]
            body = int(np.argmax(model.tlen * (model.depth > 1)))
            with_model = article_fields(model, body, metadata=[0])
            with monkeypatch.context() as patched:  # the query's marks
                patched.setattr(fields, "_model_marks", lambda model, doc: None)
                assert article_fields(model, body, metadata=[0]) == with_model
    mixed = PageModel.from_tree(parse_html(MIXED_MARKS, "http://d/"), "http://d/")
    found = fields._Page(mixed, None, [])
    assert [el.text for el in found.with_word("rel", "author")] == ["B", "then", "Ann"]
    assert [el.text for el in found.with_word("itemprop", "datepublished")] == ["x", "p"]
    assert found.author() == "B" and found.published() == "2022-02-02"
    part = parse_html(MIXED_MARKS, "http://d/").find("body")
    doc = part.getroottree().getroot()
    assert fields._model_marks(PageModel.from_tree(part, "http://d/"), doc) is None
    xhtml = etree.fromstring(b'<html xmlns="http://www.w3.org/1999/xhtml"><body><time>t</time>'
                             b"</body></html>")
    assert fields._model_marks(PageModel.from_tree(xhtml, "http://d/"), xhtml) is None
