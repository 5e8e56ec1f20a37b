"""Tests of the single-page article fallback (wisdom_scrapy.mining.density).

Quality is checked on real pages: 27 pages of scrapinghub's article-extraction benchmark (news and
blog pages, each from another site, MIT licence) vendored in
``tests/fixtures/article-extraction-benchmark`` (its README says which), with the benchmark's own
token-shingle metric.
Behaviour is checked on hand-written pages (each one a general boilerplate pattern), and
robustness on hostile and generated inputs.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wisdom_scrapy.analysis.evaluation import corpus_shingle_prf, shingle_prf
from wisdom_scrapy.mining.density import (
    DensityParams,
    SinglePageArticle,
    single_page_article,
)
from wisdom_scrapy.page.model import PageModel

BENCHMARK = Path(__file__).resolve().parent / "fixtures" / "article-extraction-benchmark"


@cache
def _truth() -> dict[str, dict]:
    return json.loads((BENCHMARK / "ground-truth.json").read_text("utf-8"))


def benchmark_page(prefix: str) -> tuple[str, str, str]:
    """(html, url, gold article body) of the vendored benchmark page whose id starts with
    ``prefix``."""
    truth = _truth()
    (page_id,) = [page_id for page_id in truth if page_id.startswith(prefix)]
    with gzip.open(BENCHMARK / "html" / f"{page_id}.html.gz", "rt", encoding="utf8") as f:
        html = f.read()
    entry = truth[page_id]
    return html, entry.get("url", ""), entry.get("articleBody") or ""


def extract(html: str | bytes, url: str = "http://example.com/a") -> str:
    """The article text of a page ("" when there is none)."""
    model = PageModel.from_html(html, url)
    article = single_page_article(model)
    return article.text(model) if article else ""


def check_result(model: PageModel, article: SinglePageArticle) -> None:
    """Invariants of every result: indices in range, exclusions only inside the body."""
    n = model.n
    assert 0 <= article.body < n
    assert article.exclude.shape == (n,) and article.exclude.dtype == np.bool_
    inside = np.zeros(n, bool)
    inside[article.body + 1 : model.subtree_end[article.body]] = True
    assert not (article.exclude & ~inside).any()
    assert all(0 <= m < n for m in article.metadata)
    assert article.metadata == sorted(set(article.metadata))
    assert np.isfinite(article.score)


# ------------------------------------------------------------------------ real pages


#: 20 pages spread evenly over the benchmark (every 9th of its sorted ids): not picked by result.
SUBSET = [
    "042bb7b5", "0dd13570", "1f765c48", "2f42ef1d", "374ac9a5", "4219d096", "57b4dafd",
    "5fa5679d", "686bb170", "7a457a4f", "833caf3b", "8cad00dc", "9e8c9f08", "abd9d629",
    "b6906ca0", "c467d507", "c90731f0", "dc7ccccc", "e7994d55", "ef4e67b6",
]  # fmt: skip


def test_benchmark_subset_f1() -> None:
    results = []
    for page in SUBSET:
        html, url, gold = benchmark_page(page)
        model = PageModel.from_html(html, url)
        article = single_page_article(model)
        assert article is not None, page
        check_result(model, article)
        results.append((article.text(model), gold))
    scores = corpus_shingle_prf(results)
    assert scores["f1"] >= 0.9, scores
    assert scores["n_predicted"] == len(SUBSET)


@pytest.mark.parametrize(
    ("page", "what"),
    [
        ("06e5123e", "English news (AP story on a newspaper site)"),
        ("57b4dafd", "German blog post"),
        ("8cad00dc", "Korean blog post"),
        ("b6906ca0", "fact-check article with many in-text links"),
        ("f105de6e", "Japanese blog post (CJK punctuation)"),
        ("fde930b0", "list of ten news items, each led by a headline link"),
    ],
)
def test_real_pages_where_it_works(page: str, what: str) -> None:
    html, url, gold = benchmark_page(page)
    model = PageModel.from_html(html, url)
    article = single_page_article(model)
    assert article is not None
    check_result(model, article)
    assert shingle_prf(article.text(model), gold).f1 >= 0.8, what


def test_real_page_title_is_metadata_not_body() -> None:
    html, url, _ = benchmark_page("3cb22bfa")  # slashgear: h1 title, then "author - date" line
    model = PageModel.from_html(html, url)
    article = single_page_article(model)
    assert article is not None
    tags = [model.tag[m] for m in article.metadata]
    assert "h1" in tags
    title = model.text_of(article.metadata[tags.index("h1")])
    assert title.startswith("2020 Audi e-tron Sportback")
    assert title not in article.text(model)
    assert any("Nov 19, 2019" in model.text_of(m) for m in article.metadata)


# ------------------------------------------------------------------------ behaviour

PARAGRAPHS = [
    "The city council approved the new budget on Tuesday, after a debate that lasted "
    "more than six hours and ended with a narrow vote of five to four.",
    "Supporters said the plan, which raises spending on schools and public transport, "
    "was overdue; critics warned that it relied on optimistic forecasts of tax revenue.",
    "The mayor, who had proposed a smaller increase in March, said she would sign it. "
    "Work on the first projects, including two new bus lines, could begin next spring.",
    "Residents who spoke at the meeting were divided. Several praised the investment in "
    "schools, while others asked why road repairs had been postponed for another year.",
]

NAV = (
    '<nav class="site-nav"><ul>'
    + "".join(
        f'<li><a href="/{s}">{s.title()}</a></li>'
        for s in ["news", "sport", "business", "culture", "opinion", "weather"]
    )
    + "</ul></nav>"
)
FOOTER = (
    '<footer class="site-footer"><p>© 2024 Example Gazette. All rights reserved.</p>'
    '<p><a href="/about">About us</a> <a href="/contact">Contact</a> '
    '<a href="/privacy">Privacy policy</a></p></footer>'
)
SHARE = (
    '<div class="share-bar"><a href="https://twitter.com/x">Tweet this story</a>'
    '<a href="https://facebook.com/x">Share on Facebook</a><a href="mailto:x">Email</a></div>'
)
RELATED = (
    '<div class="related-stories"><h3>Related stories</h3><ul>'
    '<li><a href="/r1">Council delays vote on parking fees</a></li>'
    '<li><a href="/r2">School board names new superintendent</a></li>'
    '<li><a href="/r3">Bus fares to rise in January</a></li></ul></div>'
)
COMMENTS = (
    '<section id="comments"><h3>3 comments</h3>'
    '<div class="comment"><p>About time, the buses in my area are always late and crowded, '
    "and nobody in city hall seems to care about it at all.</p></div>"
    '<div class="comment"><p>Optimistic forecasts again. We have seen this movie before, '
    "and it never ends well for the taxpayers of this city.</p></div></section>"
)


def page(body: str, head: str = "<title>Budget approved - Example Gazette</title>") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


def article_page(inner: str) -> str:
    paragraphs = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    return page(
        f'{NAV}<div class="wrapper"><main><article class="story">'
        f"<h1>Council approves budget after long debate</h1>"
        f'<p class="byline">By Jane Doe</p><time datetime="2024-03-05">March 5, 2024</time>'
        f'<div class="story-body">{inner.replace("PARAGRAPHS", paragraphs)}</div>'
        f"</article>{RELATED}{COMMENTS}</main>"
        f'<aside class="sidebar"><h3>Most read</h3><ol><li><a href="/m1">A story</a></li>'
        f'<li><a href="/m2">Another story</a></li></ol></aside></div>{FOOTER}'
    )


def assert_only_paragraphs(text: str) -> None:
    for p in PARAGRAPHS:
        assert p in text
    for noise in ("Weather", "Tweet this", "Related stories", "Bus fares", "comments",
                  "About time", "Most read", "All rights reserved", "By Jane Doe",
                  "Council approves budget"):  # fmt: skip
        assert noise not in text, noise


def test_article_body_without_page_boilerplate() -> None:
    text = extract(article_page("PARAGRAPHS"))
    assert_only_paragraphs(text)


def test_data_table_inside_the_body_is_kept_and_navigation_table_removed() -> None:
    rows = [("gnome-shell", 124, 288, "desktop shell of GNOME"),
            ("xfce4-panel", 35, 97, "panel of the Xfce desktop"),
            ("lxpanel", 12, 40, "lightweight panel"),
            ("tint2", 8, 22, "taskbar for any window manager")]  # fmt: skip
    data = "<table><tr><th>package</th><th>popcon</th><th>size</th><th>description</th></tr>"
    data += "".join(
        f'<tr><td><a href="/pkg/{name}">{name}</a></td><td>V:{v}, I:{i}</td><td>{v * i}</td>'
        f"<td>{desc}</td></tr>"
        for name, v, i, desc in rows
    )
    nav = "<table>" + "".join(
        f'<tr><td><a href="/{a}">{a.title()} pages</a></td><td><a href="/{b}">{b}</a></td></tr>'
        for a, b in [("news", "Archive"), ("sport", "Scores"), ("opinion", "Letters")]
    )
    text = extract(article_page(f"PARAGRAPHS<div>{data}</table></div><div>{nav}</table></div>"))
    assert_only_paragraphs(text)
    for name, v, i, desc in rows:
        for cell in (name, f"V:{v}, I:{i}", desc):
            assert cell in text, cell
    for cell in ("News pages", "Archive", "Opinion pages", "Letters"):
        assert cell not in text, cell


def test_share_bar_and_related_list_inside_the_body_are_excluded() -> None:
    inner = f"{SHARE}PARAGRAPHS{RELATED.replace('related-stories', 'inline-box')}"
    model = PageModel.from_html(article_page(inner), "http://example.com/a")
    article = single_page_article(model)
    assert article is not None
    check_result(model, article)
    text = article.text(model)
    assert_only_paragraphs(text)
    assert article.exclude.any()


def test_title_and_byline_are_metadata() -> None:
    model = PageModel.from_html(article_page("PARAGRAPHS"), "http://example.com/a")
    article = single_page_article(model)
    assert article is not None
    meta = {model.tag[m]: model.text_of(m) for m in article.metadata}
    assert meta["h1"] == "Council approves budget after long debate"
    assert meta["time"] == "March 5, 2024"
    assert "By Jane Doe" in meta.values()


def test_title_inside_the_body_is_excluded_from_its_text() -> None:
    paragraphs = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    model = PageModel.from_html(
        page(f"{NAV}<div><h1>Council approves budget</h1>{paragraphs}</div>{FOOTER}"), "x"
    )
    article = single_page_article(model)
    assert article is not None
    assert "Council approves budget" not in article.text(model)
    assert any(model.tag[m] == "h1" for m in article.metadata)


def test_teaser_list_next_to_a_short_article_is_not_the_body() -> None:
    teasers = "".join(
        f'<li><a href="/t{i}">Headline number {i} about another matter</a>'
        f"<span>{PARAGRAPHS[i % 4][:120]} more text, and even more text here.</span></li>"
        for i in range(8)
    )
    body = (
        f'{NAV}<div class="main"><div class="latest"><ul>{teasers}</ul></div>'
        f'<div class="post">{"".join(f"<p>{p}</p>" for p in PARAGRAPHS[:3])}</div></div>'
    )
    text = extract(page(body))
    for p in PARAGRAPHS[:3]:
        assert p in text
    assert "Headline number" not in text


def test_schema_org_article_body_is_preferred() -> None:
    """A prior, not a rule: the marked node wins over an ancestor holding a third more prose
    (which it would lose to without the mark)."""
    story = "".join(f"<p>{p}</p>" for p in PARAGRAPHS[:3])
    body = f"<div><div>{story}</div><div>{PARAGRAPHS[3]}</div></div>"
    text = extract(page(body))
    assert PARAGRAPHS[3] in text
    text = extract(page(body.replace("<div><div>", '<div><div itemprop="articleBody">')))
    assert PARAGRAPHS[0] in text and PARAGRAPHS[2] in text
    assert PARAGRAPHS[3] not in text


def test_hidden_blocks_inside_the_body_are_excluded() -> None:
    inner = 'PARAGRAPHS<div style="display: none"><p>Subscribe now, only today, for $1.</p></div>'
    text = extract(article_page(inner))
    assert_only_paragraphs(text)
    assert "Subscribe" not in text


def test_wrapper_with_a_boilerplate_name_is_not_dropped() -> None:
    """``<body class="single sidebar-right">`` or ASP.NET's page-wide ``<form>`` hold the
    article: a marked subtree holding most of the prose is not boilerplate."""
    paragraphs = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    html = page(f'<form id="aspnetForm"><div class="sidebar-layout">{paragraphs}</div></form>')
    text = extract(html)
    for p in PARAGRAPHS:
        assert p in text


def test_data_table_in_the_article_is_kept() -> None:
    rows = "".join(
        f"<tr><td>{i}</td><td>Driver {name}</td><td>{5000 - 7 * i}</td></tr>"
        for i, name in enumerate(["Busch", "Truex", "Harvick", "Hamlin", "Logano"], 1)
    )
    body = (
        f"{NAV}<div class='entry'><p>{PARAGRAPHS[0]}</p>"
        f"<table><tr><th>Pos.</th><th>Driver</th><th>Points</th></tr>{rows}</table>"
        f"<p>{PARAGRAPHS[1]}</p></div>{FOOTER}"
    )
    text = extract(page(body))
    assert "Driver Hamlin" in text and PARAGRAPHS[1] in text


def test_heading_slug_ids_carry_no_cue() -> None:
    """``id="getting-a-little-more-advanced"`` is the slug of a heading (Sphinx, Markdown,
    MediaWiki), not a template name: its words ("more") are no boilerplate cue."""
    sections = "".join(
        f'<section id="{slug}"><h2>{slug.replace("-", " ")}</h2><p>{p}</p><p>{p}</p></section>'
        for slug, p in zip(
            ["the-basics", "getting-a-little-more-advanced", "related-work-and-next-steps"],
            PARAGRAPHS,
            strict=False,
        )
    )
    text = extract(page(f"{NAV}<div class='body'>{sections}</div>{FOOTER}"))
    for p in PARAGRAPHS[:3]:
        assert p in text
    assert "related work and next steps" in text


def test_sections_headed_by_back_references_are_not_teasers() -> None:
    """FAQ pages link each question back to the page's contents (``href="#id3"``): sections
    that start with an in-page link are the article, not a list of teasers."""
    sections = "".join(
        f'<section id="q{i}"><h2><a class="toc-backref" href="#toc{i}">Question {i}?</a></h2>'
        f"<p>{p}</p></section>"
        for i, p in enumerate(PARAGRAPHS)
    )
    text = extract(page(f"{NAV}<div class='body'>{sections}</div>{FOOTER}"))
    for p in PARAGRAPHS:
        assert p in text


@pytest.mark.parametrize("name", ["bugs.html", "library-zipapp.html", "tutorial-appetite.html"])
def test_sphinx_documentation_pages(name: str) -> None:
    """Another kind of site: the Python documentation (gold: ``div[role=main]``, the body
    Sphinx writes), with code blocks, definition lists and in-page links."""
    html = (Path(__file__).parent / "fixtures" / "pydoc" / name).read_bytes()
    model = PageModel.from_html(html, f"http://docs.local/{name}")
    main = next(
        i for i in np.flatnonzero(model.tag == "div").tolist()
        if model.element(i).get("role") == "main"
    )  # fmt: skip
    article = single_page_article(model)
    assert article is not None
    check_result(model, article)
    assert shingle_prf(article.text(model), model.text_of(main)).f1 >= 0.95


def test_index_page_of_link_lists_has_no_article() -> None:
    """The FAQ index of the Python documentation is a list of links: no article, and in
    particular not its footer's licence notice (the only prose on the page)."""
    html = (Path(__file__).parent / "fixtures" / "pydoc" / "faq-index.html").read_bytes()
    assert single_page_article(PageModel.from_html(html, "http://docs.local/faq/")) is None


def test_params_change_the_result() -> None:
    """The knobs are live (e.g. with no block cost every label counts as content)."""
    html = article_page("PARAGRAPHS")
    model = PageModel.from_html(html, "x")
    default = single_page_article(model)
    costly = single_page_article(model, params=DensityParams(block_cost=400.0))
    assert default is not None
    assert costly is None or costly.score < default.score


def test_deterministic() -> None:
    html, url, _ = benchmark_page("0dd13570")
    a = single_page_article(PageModel.from_html(html, url))
    b = single_page_article(PageModel.from_html(html, url))
    assert a is not None and b is not None
    assert a.body == b.body and (a.exclude == b.exclude).all() and a.metadata == b.metadata


def test_trees_keep_their_element_classes() -> None:
    """Attribute reads use plain lxml proxies only inside the model's build (see
    ``page.model._all_nodes``): afterwards the tree hands out ``lxml.html`` elements as before, and
    new documents of the same parser too."""
    from lxml import etree
    from lxml import html as lxml_html

    from wisdom_scrapy.page.parse import parse_html

    root = parse_html(article_page("PARAGRAPHS"))
    model = PageModel.from_tree(root, "http://example.com/a")
    assert single_page_article(model) is not None
    assert all(isinstance(el, lxml_html.HtmlElement) for el in root.iter(etree.Element))
    parser = root.getroottree().parser
    assert isinstance(etree.fromstring(b"<p>x</p>", parser)[0][0], lxml_html.HtmlElement)
    shared = lxml_html.fromstring(article_page("PARAGRAPHS"))  # lxml.html's own parser
    text = single_page_article(model := PageModel.from_tree(shared, "x"))
    assert text is not None and PARAGRAPHS[0] in text.text(model)
    assert all(isinstance(el, lxml_html.HtmlElement) for el in shared.iter(etree.Element))


def test_scrapy_response_tree() -> None:
    from scrapy.http import HtmlResponse

    html = article_page(f"{SHARE}PARAGRAPHS")
    response = HtmlResponse("http://example.com/a", body=html.encode(), encoding="utf-8")
    model = PageModel.from_tree(response.selector.root, response.url)
    article = single_page_article(model)
    assert article is not None
    assert_only_paragraphs(article.text(model))


def test_subtree_and_xhtml_trees() -> None:
    from lxml import etree

    from wisdom_scrapy.page.parse import parse_html

    root = parse_html(article_page("PARAGRAPHS"))
    wrapper = root.xpath("//div[@class='wrapper']")[0]
    model = PageModel.from_tree(wrapper, "http://example.com/a")
    article = single_page_article(model)
    assert article is not None
    assert_only_paragraphs(article.text(model))
    paragraphs = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    xhtml = etree.fromstring(
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><div class="share">'
        '<a href="/t">Tweet</a><a href="/f">Share</a></div>'
        f'<div class="entry-content">{paragraphs}</div></body></html>'
    )
    model = PageModel.from_tree(xhtml, "http://example.com/x")
    article = single_page_article(model)
    assert article is not None
    text = article.text(model)
    assert PARAGRAPHS[3] in text and "Tweet" not in text


# ------------------------------------------------------------------------ hostile inputs


@pytest.mark.parametrize(
    "html",
    [
        "",
        "   \n\t ",
        "<!-- only a comment -->",
        "<html><head><title>Only a title</title></head></html>",
        "<script>var text = 'not content, even if long enough to count, really';</script>",
        b"\x00\xff\xfe\x00\x01",
        "<ul>" + "".join(f'<li><a href="/{i}">link {i}</a></li>' for i in range(200)) + "</ul>",
    ],
)
def test_pages_without_an_article(html: str | bytes) -> None:
    model = PageModel.from_html(html, "http://example.com/")
    assert single_page_article(model) is None


def test_empty_model() -> None:
    assert single_page_article(PageModel.empty("http://example.com/")) is None


def test_text_without_markup() -> None:
    text = extract(PARAGRAPHS[0])
    assert text == PARAGRAPHS[0]


def test_fragment_without_html_or_body() -> None:
    text = extract("".join(f"<p>{p}</p>" for p in PARAGRAPHS))
    assert_only_paragraphs(text)


def test_deep_nesting() -> None:
    depth = 3000  # libxml2 keeps 2048 levels (huge_tree): the text must survive or be absent
    html = "<div>" * depth + f"<p>{PARAGRAPHS[0]}</p>" + "</div>" * depth
    model = PageModel.from_html(f"<p>{PARAGRAPHS[1]}</p>" + html, "x")
    article = single_page_article(model)
    assert article is not None
    check_result(model, article)
    assert PARAGRAPHS[1] in article.text(model) or PARAGRAPHS[0] in article.text(model)


def test_unclosed_tags_and_broken_markup() -> None:
    html = "<div><p>" + "<p>".join(PARAGRAPHS) + "<div><a href=x>unclosed <b>bold <i>it"
    text = extract(html)
    for p in PARAGRAPHS:
        assert p in text


def test_hundred_thousand_nodes() -> None:
    """A page of 100,000 paragraphs is one article (its speed is the benchmarks' to measure:
    ``benchmarks/article_extraction.py --density-breakdown``)."""
    html = "<div>" + "".join(f"<p>Line {i}, with a comma. </p>" for i in range(100_000)) + "</div>"
    model = PageModel.from_html(html, "x")
    article = single_page_article(model)
    assert model.n > 100_000
    assert article is not None and model.tag[article.body] == "div"
    check_result(model, article)


@given(
    st.lists(
        st.text(
            alphabet="ab ,.;:!?\u3002\uff0c\u3001\uff1b\uff1a\uff01\uff1f"
            "\u4e2d\u3000\uff21\u00e9\U0001f600"
        ),
        min_size=1,
        max_size=8,
    )
)
def test_punctuation_count_on_utf8_bytes(pieces: list[str]) -> None:
    """The byte-level count (``_piece_punctuation``) equals counting the characters."""
    from wisdom_scrapy.mining.density import _piece_punctuation

    counts = _piece_punctuation("\x00".join(pieces), len(pieces))
    assert counts is not None
    marks = set(",.;:!?\u3002\uff0c\u3001\uff1b\uff1a\uff01\uff1f")
    assert counts.tolist() == [sum(c in marks for c in piece) for piece in pieces]


# ------------------------------------------------------------------------ generated pages

_TAGS = ["div", "p", "span", "ul", "li", "a", "nav", "footer", "h1", "h2", "section", "table",
         "tr", "td", "article", "aside", "br", "script", "b", "time"]  # fmt: skip
_CLASSES = ["", "content", "sidebar", "share", "related-posts", "comment", "entry-content",
            "nav", "adSlot", "byline", "x"]  # fmt: skip
_WORDS = st.text(alphabet="abcdefghij ,.;!?\u4e2d\u6587\u3002", min_size=0, max_size=40)


@st.composite
def html_pages(draw: st.DrawFn) -> str:
    """Random trees of the tags and class names the extractor reacts to."""
    parts: list[str] = []
    stack: list[str] = []
    for _ in range(draw(st.integers(1, 60))):
        action = draw(st.integers(0, 3))
        if action == 0 and stack:
            parts.append(f"</{stack.pop()}>")
        elif action == 1:
            parts.append(draw(_WORDS))
        else:
            tag = draw(st.sampled_from(_TAGS))
            cls = draw(st.sampled_from(_CLASSES))
            attrs = f' class="{cls}"' if cls else ""
            if tag == "a":
                attrs += ' href="/x"'
            if draw(st.booleans()) and tag == "div":
                hiding = draw(st.booleans())
                attrs += ' style="display:none"' if hiding else ' itemprop="articleBody"'
            parts.append(f"<{tag}{attrs}>")
            stack.append(tag)
    return "".join(parts)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(html_pages())
def test_generated_pages_never_break(html: str) -> None:
    model = PageModel.from_html(html, "http://example.com/")
    article = single_page_article(model)
    if article is None:
        return
    check_result(model, article)
    text = article.text(model)
    assert isinstance(text, str)
    assert len("".join(text.split())) <= model.tlen[0]


def test_code_listing_does_not_outweigh_the_prose_around_it() -> None:
    # a highlighted listing (one span per line, as Hexo/Hugo/Prism write it), nested in the
    # paragraph that introduces it (no </p>), holds most of the text: its evenly long lines
    # are not paragraphs, so the body is the post, not the listing
    lines = "".join(
        f'<span class="line"><span class="k">let</span> total{i} = sum(rows{i}, '
        f"{{ limit: {i} }});</span><br>"
        for i in range(150)
    )
    listing = (f'<figure class="highlight js"><table><tr><td class="code"><pre>{lines}</pre>'
               "</td></tr></table></figure>")  # fmt: skip
    inner = f"<p>The totals are computed like this:<br>{listing}</p>PARAGRAPHS"
    text = extract(article_page(inner))
    assert_only_paragraphs(text)
    assert "total149 = sum(rows149, { limit: 149 });" in text
    assert "The totals are computed like this:" in text


def test_highlighter_classes_inside_a_listing_are_no_boilerplate_cues() -> None:
    # highlight.js as Hexo writes it: class="comment", "meta", "tag" are syntax classes there,
    # the same words that mark a comment section or a tag list elsewhere on a page
    listing = (
        '<figure class="highlight js"><table><tr><td class="code"><pre>'
        '<span class="line"><span class="comment">// compute the totals first</span></span><br>'
        '<span class="line"><span class="keyword">let</span> x = sum(rows);</span><br>'
        '<span class="line"><span class="tag">&lt;div&gt;</span> '
        '<span class="meta">#include</span></span></pre></td></tr></table></figure>'
    )
    text = extract(article_page(f"PARAGRAPHS{listing}"))
    assert_only_paragraphs(text)
    assert "// compute the totals first\nlet x = sum(rows);\n<div> #include" in text


HANDBOOK = Path(__file__).parent / "fixtures" / "handbook"


def test_boxes_named_like_template_are_content_where_the_site_shows_it() -> None:
    """DocBook's ``div.sidebar`` boxes ("TIP …") hold text no other page of the site repeats:
    with the site's pages known they stay in the body; a page alone drops them by their name
    (issue 31)."""
    from wisdom_scrapy import open_store
    from wisdom_scrapy.analysis.page_analysis import analyze_page
    from wisdom_scrapy.engine.writes import feed_model
    from wisdom_scrapy.mining.repetition import stored_repetition

    store, site, models = open_store("memory://"), "127.0.0.1:8000", []
    for path in sorted(HANDBOOK.glob("*.html")):
        model = PageModel.from_html(path.read_bytes(), "http://127.0.0.1:8000/" + path.name)
        feed_model(store, model, site=site)
        models.append(model)
    repetition = stored_repetition(store, site)
    kept = alone = 0
    for model in models:
        root = model.element(0).getroottree().getroot()
        box = root.xpath("//div[@class='sidebar']")[0]
        words = " ".join(box.xpath("string(.//div[@class='para'][1])").split()[:8])
        analysis = analyze_page(None, model.url, model=model, repetition=repetition,
                                snapshot=store.snapshot(site))  # fmt: skip
        kept += words in " ".join(analysis.article_text.split())
        found = single_page_article(model)
        assert found is not None
        alone += words in " ".join(model.text_of(found.body, exclude=found.exclude).split())
    assert kept == len(models) == 7
    assert alone <= 1  # on a page alone the name decides (one page is all box, and keeps it)


def test_site_view_keeps_own_captions_and_drops_named_boxes_holding_template() -> None:
    """With a site view, a caption or a box named like boilerplate inside the body stays when
    it holds none of the site's template; a comment box holding the site's repeated "Reply"
    link stays out (issue 31)."""
    prose = "The harbour reopened this week after a long winter of repairs and delays. " * 4
    html = (f"<html><body><nav><a href='/'>Home</a> <a href='/news'>News</a></nav><div id='m'>"
            f"<p>{prose}</p><figure><img src='a.jpg'><figcaption>Boats at dawn in the old "
            f"harbour, seen from the pier.</figcaption></figure><p>{prose}</p>"
            f"<div class='comments'><p>Great story, thanks for writing it up so well.</p>"
            f"<a href='/reply'>Reply</a></div></div></body></html>")  # fmt: skip
    model = PageModel.from_html(html, "http://127.0.0.1/a")
    # the site repeats the menu and the "Reply" link
    template = np.array([t == "nav" or (t == "a" and model.text_of(i) == "Reply")
                         for i, t in enumerate(model.tag)])  # fmt: skip
    alone = single_page_article(model)
    seen = single_page_article(model, template=template)
    assert alone is not None and seen is not None
    text_alone = model.text_of(alone.body, exclude=alone.exclude)
    text_seen = model.text_of(seen.body, exclude=seen.exclude)
    assert "Boats at dawn" not in text_alone and "Boats at dawn" in text_seen
    assert "Great story" not in text_seen


def _near_empty_post(own: str) -> tuple[PageModel, np.ndarray]:
    """A post of ``own`` text beside a sidebar of prose and links that the site repeats."""
    about = ("This blog is written by a retired ferry captain who writes about boats, harbours "
             "and the weather on the coast, and answers every letter. ")  # fmt: skip
    archive = "".join(f"<li><a href='/c/{name}'>{name}, {count} posts</a></li>"
                      for name, count in (("boats", 12), ("sea", 30), ("May 2024", 8)))  # fmt: skip
    post = f"<div id='main'><article><h1>Sunday</h1><iframe src='v.mp4'></iframe>{own}</article>"
    sidebar = f"<div id='aside-box'><p>{about * 3}</p><ul>{archive}</ul></div>"
    html = f"<html><body><div id='page'>{post}</div>{sidebar}</div></body></html>"
    return _with_template_box(html, "http://127.0.0.1/sunday", "id", "aside-box")


def _with_template_box(html: str, url: str, attr: str, value: str) -> tuple[PageModel, np.ndarray]:
    """The page's model and, as the site's template, the subtree of its element whose ``attr``
    is ``value``."""
    model = PageModel.from_html(html, url)
    box = int(np.flatnonzero([model.element(i).get(attr) == value
                              for i in range(model.n)])[0])  # fmt: skip
    template = np.zeros(model.n, bool)
    template[box : model.subtree_end[box]] = True
    return model, template


def test_site_view_makes_a_near_empty_post_short_never_its_sidebar() -> None:
    """A post that is a video and one line is a one-line article, and a post with no text of
    its own none, with the site view; the sidebar the site repeats is never the article, however
    much prose it holds (issue 31). A page alone cannot tell: its sidebar wins."""
    line = "<p>The view from the pier this morning, filmed at seven.</p>"
    model, template = _near_empty_post(line)
    alone = single_page_article(model)
    assert alone is not None and "retired ferry captain" in alone.text(model)
    seen = single_page_article(model, template=template)
    assert seen is not None
    assert "filmed at seven" in seen.text(model) and "ferry captain" not in seen.text(model)
    model, template = _near_empty_post("")
    assert single_page_article(model, template=template) is None


def _named_box_page(own: str) -> tuple[PageModel, np.ndarray]:
    """A page whose prose outside the site's header and footer (its template) is ``own``, in a
    box named ``login``: every prose block is marked, by the site or by a name."""
    menu = "<header id='top'><ul><li><a href='/login'>Sign in</a></li></ul></header>"
    footer = (
        "<footer id='bottom'><p>© 2024 The Lakeside Courier Ltd., 12 Harbour Street, "
        "Lakeside. All rights reserved.</p><a href='/about'>About</a></footer>"
    )
    box = f"<div id='main'><div class='login'>{own}</div></div>"
    html = f"<html><body>{menu}{box}{footer}</body></html>"
    model = PageModel.from_html(html, "http://127.0.0.1/login")
    ids = [model.element(i).get("id") for i in range(model.n)]
    template = np.zeros(model.n, bool)
    for name in ("top", "bottom"):
        start = ids.index(name)
        template[start : model.subtree_end[start]] = True
    return model, template


def test_site_view_decides_the_role_before_it_sets_its_template_aside() -> None:
    """Every prose block marked, by the site's template or by a name (a box named ``login``):
    the names give way, and the page has an article of its own only if its densest prose is
    not the site's template. A sign-in page, whose one line is less prose than the footer's
    notice, has none (issue 30's "other" role), never its one line; a page whose unluckily
    named box holds most of its prose keeps it, without the footer (issue 31)."""
    form = "<form><label>Email</label><input></form>"
    model, template = _named_box_page(f"<h1>Sign in</h1><p>Sign in to comment.</p>{form}")
    alone = single_page_article(model)
    assert alone is not None and "All rights reserved" in alone.text(model)
    assert single_page_article(model, template=template) is None
    prose = "<p>The ferry leaves at seven, and the harbour master counts the boats.</p>"
    model, template = _named_box_page(f"<h1>Boats</h1>{prose * 3}")
    seen = single_page_article(model, template=template)
    assert seen is not None
    assert "harbour master" in seen.text(model) and "rights" not in seen.text(model)


def _loose_page(after_body: str) -> tuple[PageModel, np.ndarray]:
    """A page writing its heading, paragraphs and list straight into ``<body>`` after the
    site's header (its template), as SQLite's documentation does, then ``after_body``."""
    menu = ("Home", "About", "Documentation", "Download", "License", "Support", "Purchase")
    links = "".join(f"<li><a href='/{name.lower()}'>{name}</a></li>" for name in menu)
    header = f"<div class='nosearch'><ul>{links}</ul></div>"
    lead = "<p>The reset function puts a prepared statement back at its start.</p>"
    rule = "Its bindings keep their values, and the next step runs the program again. " * 8
    items = "<ul><li>It returns the last error code.</li></ul>"
    html = f"<html><body>{header}<h1>Reset</h1>{lead}<p>{rule}</p>{items}{after_body}</body></html>"
    return _with_template_box(html, "http://127.0.0.1/reset", "class", "nosearch")


def test_site_view_takes_the_loose_paragraphs_around_a_body_without_container() -> None:
    """Content with no container of its own (paragraphs straight in ``<body>`` beside the site's
    header): the article is the run of loose text blocks around the densest paragraph, up to
    the template or a box, not that paragraph alone (issue 31: SQLite's docs kept one
    paragraph of a page)."""
    model, template = _loose_page("<div><a href='/next'>Next page</a> of the guide</div>")
    seen = single_page_article(model, template=template)
    assert seen is not None
    text = seen.text(model)
    assert "puts a prepared statement back" in text and "last error code" in text
    assert "Reset" in text and "Home" not in text and "Next page" not in text
    assert model.tag[seen.body] == "body"


def test_loose_text_outside_the_run_keeps_the_body_as_it_was() -> None:
    """The run is given as ``<body>`` minus its children outside it; text ``<body>`` holds of
    its own outside the run (a copyright line after the footer's box) would stay in the
    article, so the run is not taken then: the article is never the page frame's loose line."""
    model, template = _loose_page(
        "<div><a href='/next'>Next page</a> of the guide</div> Copyright 2024, all rights reserved")
    seen = single_page_article(model, template=template)
    assert seen is not None
    text = seen.text(model)
    assert "Copyright" not in text and "Next page" not in text and "Home" not in text
    assert "the next step runs the program again" in text


@pytest.mark.parametrize("name", ["library-zipapp.html", "tutorial-appetite.html"])
def test_attribute_cues_equal_reading_every_element(name: str) -> None:
    """The cues from the attributes the model's build read equal the cues read from every
    tagged element's own attributes."""
    from operator import methodcaller

    from wisdom_scrapy.mining import density

    path = Path(__file__).parent / "fixtures" / "pydoc" / name
    html = path.read_bytes().replace(b"<section ", b"<section style='display:none' ", 1)
    model = PageModel.from_html(html, "http://d/")
    cues, read, classes = density._attribute_cues(model)
    els = [model.element(i) for i in read.tolist()]
    assert classes == [el.get("class") for el in els]
    expected = np.zeros(model.n, np.int64)
    for node, el in zip(read.tolist(), els, strict=True):
        expected[node] = density._name_cue(el.get("class"))
        for attr, fn, min_len in density._CUE_ATTRIBUTES:
            if model.tlen[node] >= min_len:
                expected[node] |= fn(methodcaller("get", attr)(el))
    assert (cues == expected).all() and (cues & density._HIDE).any()


def _vendored_pages() -> list[Path]:
    """Every HTML page vendored under tests/fixtures (plain and gzipped)."""
    root = Path(__file__).parent / "fixtures"
    return sorted([*root.rglob("*.html"), *root.rglob("*.html.gz")])


@pytest.mark.parametrize("page", _vendored_pages(), ids=lambda p: p.name[:24])
def test_attribute_cues_equal_reading_every_listed_element(page: Path) -> None:
    """On every vendored page, parsed by a parser of its own (plain proxies, attributes read
    by lxml's unbound ``get``) and by lxml.html's shared one (the tree's own classes), the cues
    asked once per distinct value equal each listed element's own cues, and the metadata
    names likewise (the per-distinct look-ups and the reads must not change a bit)."""
    from lxml import html as lxml_html

    from wisdom_scrapy.mining import density
    from wisdom_scrapy.page.parse import parse_html

    body = gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
    for root in (parse_html(body, "http://d/"), lxml_html.document_fromstring(body)):
        model = PageModel.from_tree(root, "http://d/")
        cues, read, classes = density._attribute_cues(model)
        listed = [el for el in model.element(0).iter() if isinstance(el.tag, str)]
        expected = np.zeros(model.n, np.int64)
        for node in read.tolist():
            el = listed[node]
            expected[node] = density._name_cue(el.get("class"))
            for attr, fn, min_len in density._CUE_ATTRIBUTES:
                if model.tlen[node] >= min_len:
                    expected[node] |= fn(el.get(attr))
        assert classes == [listed[node].get("class") for node in read.tolist()]
        assert (cues == expected).all()
        names = density._per_distinct(density._meta_name, classes, bool)
        assert names.tolist() == [density._meta_name(c) for c in classes]
