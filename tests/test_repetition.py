"""Article text without template leftovers: repeated template boxes, orphan headings.

Small built pages for the rules (``wisdom_scrapy.mining.repetition``, the analysis' heading
rule); the demo site's real article pages through the real extractor are in test_extraction.
"""

from __future__ import annotations

import numpy as np
import pytest

from wisdom_scrapy.analysis.page_analysis import _orphan_headings
from wisdom_scrapy.mining.repetition import (
    BlockRepetition,
    block_fingerprints,
    block_nodes,
    page_blocks,
    repeated_blocks,
)
from wisdom_scrapy.page.model import PageModel

AD = '<div class="promo"><span>Advertisement</span> <a href="/x">Buy a boat</a> today.</div>'


def _page(i: int, ad: str = AD) -> PageModel:
    html = (f"<html><body><div><p>Story number {i} about topic{i} and word{i}.</p>{ad}"
            f"<p>Another paragraph {i} on subject{i}.</p></div></body></html>")
    return PageModel.from_html(html, f"http://s.test/{i}.html")


def _node(model: PageModel, text: str) -> int:
    return next(i for i in range(model.n) if " ".join(model.text_of(i).split()) == text)


def test_fingerprints_match_the_same_text_on_different_pages() -> None:
    a, b = _page(1), _page(2)
    ad_a = _node(a, "Advertisement Buy a boat today.")
    ad_b = _node(b, "Advertisement Buy a boat today.")
    assert block_fingerprints(a)[ad_a] == block_fingerprints(b)[ad_b] != 0
    para_a = _node(a, "Story number 1 about topic1 and word1.")
    para_b = _node(b, "Story number 2 about topic2 and word2.")
    assert block_fingerprints(a)[para_a] != block_fingerprints(b)[para_b]


def test_block_repetition_counts_pages_once_per_url() -> None:
    rep = BlockRepetition()
    for i in range(3):
        rep.add(f"http://s.test/{i}.html", _page(i))
    rep.add("http://s.test/0.html", _page(0))  # the same URL again: not counted twice
    assert rep.n_pages == 3
    page = _page(7)
    pages = rep.pages_of(page)
    ad = _node(page, "Advertisement Buy a boat today.")
    para = _node(page, "Story number 7 about topic7 and word7.")
    assert pages[ad] == 3 and pages[para] == 0
    repeated = repeated_blocks(page, rep)  # 3 pages of 4 > √4, and the ad links elsewhere
    assert repeated[ad] and not repeated[para]
    rep.add("http://s.test/8.html", _page(8, ad=AD.replace('href="/x"', 'href="#x"')))
    rep.add("http://s.test/9.html", _page(9, ad=""))
    assert rep.pages_of(page)[ad] == 4  # the text counts, with or without its link
    # an in-page link leads nowhere else: the same block with it is no template box
    local = _page(10, ad=AD.replace('href="/x"', 'href="#x"'))
    assert not repeated_blocks(local, rep)[_node(local, "Advertisement Buy a boat today.")]
    # 4 pages of 16 is not more than √16: not "many"
    for i in range(11, 22):
        rep.add(f"http://s.test/{i}.html", _page(i, ad=""))
    assert rep.n_pages == 16 and not repeated_blocks(page, rep)[ad]
    # a page fetched again with other blocks: its earlier ones are not kept (a digest is), so
    # the repetition cannot take them back; the extractor counts the site again from the store
    changed = page_blocks(_page(0, ad=""))
    assert rep.takes_back("http://s.test/0.html", changed)
    assert not rep.takes_back("http://s.test/0.html", page_blocks(_page(0)))
    with pytest.raises(ValueError, match=r"earlier blocks of \S+/0\.html are not kept"):
        rep.add_blocks("http://s.test/0.html", changed)
    assert rep.n_pages == 16 and rep.pages_of(page)[ad] == 4  # unchanged
    # a page whose blocks are kept takes them back when it changes
    kept = "http://s.test/kept.html"
    rep.add_blocks(kept, page_blocks(_page(40)), keep=True)
    assert rep.pages_of(page)[ad] == 5 and not rep.takes_back(kept, changed)
    assert rep.add_blocks(kept, page_blocks(_page(40, ad="")), keep=True)
    assert rep.n_pages == 17 and rep.pages_of(page)[ad] == 4
    first = _page(40)
    story = _node(first, "Story number 40 about topic40 and word40.")
    assert rep.pages_of(first)[story] == 1
    assert rep.add_blocks(kept, page_blocks(_page(30, ad="")))  # none of its text left
    assert rep.pages_of(first)[story] == 0
    assert not rep.add_blocks(kept, page_blocks(_page(30, ad="")))  # the same: nothing changed
    assert rep.takes_back(kept, changed)  # added without keep: no longer kept
    assert rep.keep_blocks(kept, page_blocks(_page(30, ad="")))  # read from the store
    assert not rep.takes_back(kept, changed)
    assert rep.add_blocks(kept, page_blocks(_page(31, ad="")), keep=True)
    assert not rep.takes_back(kept, changed)
    rep.forget_blocks(kept)  # the store took them: read from there should the page change
    assert rep.takes_back(kept, changed)
    # the earlier blocks read from the store are kept if they are the counted ones
    assert not rep.keep_blocks("http://s.test/0.html", changed)
    assert rep.keep_blocks("http://s.test/0.html", page_blocks(_page(0)))
    assert rep.add_blocks("http://s.test/0.html", changed)
    assert rep.n_pages == 17 and rep.pages_of(page)[ad] == 3


def _headings_page() -> PageModel:
    html = ("<html><body><div id='a'><h2>Story</h2><p>Body text here.</p>"
            "<h3>Related stories</h3><ul><li><a href='/1'>One</a></li></ul>"
            "<h3>Notes</h3><h4>Sub</h4><p>A note.</p>"
            "<h3>Empty section</h3><h4>Empty sub</h4><ul><li><a href='/2'>Two</a></li></ul>"
            "</div></body></html>")  # fmt: skip
    return PageModel.from_html(html, "http://s.test/h.html")


def test_a_heading_whose_section_lost_its_content_is_an_orphan() -> None:
    m = _headings_page()
    body = next(i for i in range(m.n) if m.element(i).get("id") == "a")
    exclude = np.zeros(m.n, dtype=bool)
    for i in range(m.n):  # condensing took the link lists out
        if m.tag_names[m.tag_id[i]] == "ul":
            exclude[i : m.subtree_end[i]] = True
    orphans = _orphan_headings(m, body, exclude)
    found = {" ".join(m.text_of(i).split()) for i in np.flatnonzero(orphans)
             if m.tag_names[m.tag_id[i]].startswith("h")}  # fmt: skip
    # "Notes" keeps its subsection's content; the empty section and its sub-heading go
    assert found == {"Related stories", "Empty section", "Empty sub"}
    # with nothing excluded every heading labels something
    assert not _orphan_headings(m, body, np.zeros(m.n, dtype=bool)).any()


EDITORS = [f'<p><a href="https://team.test/{name}">@{name}</a> {role}</p>' for name, role in
           (("ann", "editor"), ("bob", "writer"), ("cy", "tester"), ("di", "reader"))]


def _post(i: int, rotate: bool) -> str:
    items = "".join(f'<h4><a href="https://ext.test/{i}/{k}">Link {i} {k} word{i}x{k}</a></h4>'
                    f"<p>Summary {k} of issue {i}: why topic{i}x{k} matters, and how subject{k}"
                    f"y{i} works in practice.</p>" for k in range(6))
    # every post names the team and editors; rotating, three of four by turns, so the
    # signature as a whole is on few pages while each of its lines is on most
    editors = [e for k, e in enumerate(EDITORS) if not rotate or k != i % 4][:3]
    signature = ('<blockquote><p>Weekly digest by <a href="https://team.test/">the team</a>.</p>'
                 + "".join(editors) + "</blockquote>")
    return (f'<html><body><header><nav><ul><li><a href="/a.html">Archive</a></li>'
            f'<li><a href="/b.html">About us</a></li></ul></nav></header>'
            f'<div class="post"><section><a href="/weekly.html">Filed in Weekly</a></section>'
            f"<article>{items}{signature}</article>"
            f'<section><p><a href="/feed.xml">Subscribe via RSS</a></p></section></div>'
            f"</body></html>")


@pytest.mark.parametrize("rotate", [False, True])
def test_a_block_repeated_among_a_posts_own_paragraphs_is_its_text(rotate: bool) -> None:
    """An editors' signature the site repeats in its posts stands among a post's own
    paragraphs and stays in its article, whether the site repeats it whole or line by line;
    the theme's boxes beside the content do not."""
    from wisdom_scrapy.analysis.page_analysis import analyze_page
    from wisdom_scrapy.mining.repetition import embedded_lines, repeated_text

    rep = BlockRepetition()
    for i in range(8):
        url = f"http://s.test/{i}.html"
        rep.add(url, PageModel.from_html(_post(i, rotate), url))
    html, url = _post(9, rotate), "http://s.test/9.html"
    page = PageModel.from_html(html, url)
    template = repeated_text(page, rep)
    embedded = embedded_lines(page, template)
    signature = next(i for i in range(page.n) if page.tag_names[page.tag_id[i]] == "blockquote")
    ann, rss = _node(page, "@ann editor"), _node(page, "Subscribe via RSS")
    filed = _node(page, "Filed in Weekly")
    assert template[signature] != rotate  # whole, or only its lines
    assert template[ann] and template[rss] and template[filed]
    assert embedded[ann] and embedded[signature] == template[signature]  # inside the content
    assert not embedded[rss] and not embedded[filed]  # the theme's boxes beside it
    analysis = analyze_page(html, url, repetition=rep)
    assert analysis.role == "article"
    text = " ".join(analysis.article_text.split())
    assert "the team. @ann editor" in text and "@cy tester" in text
    assert "Summary 0 of issue 9" in text
    assert "Subscribe via RSS" not in text and "Filed in Weekly" not in text


def test_a_template_less_page_whose_text_is_a_repeated_box_part_is_other(tmp_path) -> None:
    """The demo's promotion pages (a layout of their own: headline, one line, a link back)
    say only what the site's advertisement box says beside its label, in inline pieces (a
    headline link, a line ``span``) that no block of the site holds alone: a copy, "other".
    Its articles, whose paragraphs no box repeats, stay articles."""
    import json

    from sample_project.demo_site import build_demo_site
    from wisdom_scrapy.analysis.page_analysis import analyze_page
    from wisdom_scrapy.engine.writes import feed_page
    from wisdom_scrapy.store import open_store

    site = build_demo_site(tmp_path)
    truth = json.loads((tmp_path / "ground_truth.json").read_text("utf-8"))["pages"]
    articles = sorted(p for p, t in truth.items() if t["role"] == "article")[:24]
    promos = sorted(p for p, t in truth.items() if t["kind"] == "promo")
    store = open_store("memory://")
    base = "http://127.0.0.1:8000"
    for path in articles:
        feed_page(store, (site / path.lstrip("/")).read_text("utf-8"), base + path)
    rep = BlockRepetition()
    for path in articles:
        html = (site / path.lstrip("/")).read_text("utf-8")
        rep.add(base + path, PageModel.from_html(html, base + path))
    assert promos
    for path in promos:
        html = (site / path.lstrip("/")).read_text("utf-8")
        model = PageModel.from_html(html, base + path)
        line = _node(model, truth_line(html))
        assert rep.pages_of(model)[line] == 0  # no block of the site holds the line alone
        assert rep.part_pages_of(model)[line] >= 3  # the ad box's pieces do
        assert analyze_page(html, base + path, store).role == "other", path
    for path in articles[:3]:
        html = (site / path.lstrip("/")).read_text("utf-8")
        assert analyze_page(html, base + path, store).role == "article", path


def truth_line(html: str) -> str:
    """The promotion's line: the text of its first paragraph."""
    import lxml.html

    return " ".join(lxml.html.fromstring(html).xpath("string(//p[1])").split())


def test_a_page_view_reads_box_parts_as_the_whole_repetition() -> None:
    """A worker's :class:`PageRepetition` of a page gives the pages holding each of its
    blocks' texts as a box part, as the whole repetition does."""
    rep = BlockRepetition()
    for i in range(6):
        rep.add(f"http://s.test/{i}.html", _page(i))
    line = PageModel.from_html('<html><body><p>Advertisement</p><p>Buy a boat</p></body></html>',
                               "http://s.test/promo.html")  # fmt: skip
    rep.add("http://s.test/promo.html", line)
    view = rep.page_view("http://s.test/promo.html", page_blocks(line))
    assert view is not None
    blocks = block_nodes(line)
    assert (view.part_pages_of(line)[blocks] == rep.part_pages_of(line)[blocks]).all()
    assert rep.part_pages_of(line)[_node(line, "Buy a boat")] == 6
