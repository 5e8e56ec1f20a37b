"""A TocItem's links are what its page lists (issue 35, item 7): the titles of the list's
entries, never an entry's byline or tags, a pagination link or the site's menus; an index of
archives lists its archives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

from wisdom_scrapy.analysis.page_analysis import (
    Block,
    PageAnalysis,
    SiteView,
    analyze_page,
    toc_links_of,
)
from wisdom_scrapy.engine.waits import _toc_links
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.items import xml_safe, xml_safe_strings
from wisdom_scrapy.mining.lamis import link_weights
from wisdom_scrapy.mining.listing import list_entries, not_own_text
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.terms import extract_terms
from wisdom_scrapy.store import open_store

_ENTRY = ('<li><h2><a href="/posts/{n}.html">Post number {n} about gardens</a></h2>'
          "<p>A teaser of the post with a few words of its own, number {n}.</p>"
          '<p class="meta">March {n} · <a href="/author/jane.html">Jane Doe</a> · '
          '<a href="/tag/roses.html">roses</a></p></li>')


def _list_page() -> PageModel:
    entries = "".join(_ENTRY.format(n=n) for n in range(1, 6))
    toc = ('<li><a href="/docs/a.html">Chapter A</a><ul><li><a href="/docs/a.html#one">'
           "Section one</a></li></ul></li>")
    html = (f"<html><body><ul class='posts'>{entries}{toc}</ul>"
            '<div class="pages"><a rel="prev" href="/page/1.html">« Newer</a> '
            '<a href="/page/3.html">3</a></div></body></html>')
    return PageModel.from_html(html, "http://blog.test/page/2.html")


def test_a_list_lists_its_entries_titles_and_sub_entries() -> None:
    model = _list_page()
    items, listed = list_entries(model, template=model.tag_mask(()))
    view = SiteView(model.tag_mask(()), model.tag_mask(()), items, 1.0, listed)
    cover = model.subtree_mask(model.tag_mask(("body",)))
    links = [urlsplit(lk.url).path + (f"#{lk.text}" if "#" in lk.url else "")
             for lk in toc_links_of(model, cover, model.subtree_mask(view.items), view.listed)]
    assert links == [f"/posts/{n}.html" for n in range(1, 6)] + ["/docs/a.html"] * 2


def test_without_entries_the_toc_structure_keeps_all_but_page_turns() -> None:
    model = _list_page()
    cover = model.subtree_mask(model.tag_mask(("body",)))
    paths = [urlsplit(lk.url).path for lk in toc_links_of(model, cover)]
    assert "/author/jane.html" in paths
    assert "/page/1.html" not in paths and "/page/3.html" not in paths  # rel=prev, a number


def test_an_analysis_without_a_toc_has_no_toc_links() -> None:
    assert PageAnalysis("http://s/", "article", "t").toc_links == []


# ------------------------------------------------------------------------------------------
# A real crawl of the demo site
# ------------------------------------------------------------------------------------------


@pytest.mark.crawl
def test_demo_toc_items_link_the_listed_articles(tmp_path: Path) -> None:
    """Every TocItem of the demo (sample ``demo`` spider, the add-on on) links articles only
    (no author, tag, pagination or menu link) and every story its gold list shows; an
    archive index emitted as a TOC links its month archives."""
    from sample_project.demo_site import GROUND_TRUTH_FILE, build_demo_site
    from tests.crawling import run_crawl

    site = build_demo_site(tmp_path / "demo")
    pages = json.loads((tmp_path / "demo" / GROUND_TRUTH_FILE).read_text("utf-8"))["pages"]
    result = run_crawl("demo", tmp_path, args={"site_dir": str(site.parent)},
                       settings={"WISDOM_STORE_URI": "memory://"})  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    tocs: dict[str, list[str]] = {
        urlsplit(i["url"]).path: [urlsplit(lk["url"]).path for lk in i["links"]]
        for i in result.items if i.get("role") == "toc"}  # fmt: skip
    assert len(tocs) >= 50
    kinds: dict[str, Any] = {path: page["kind"] for path, page in pages.items()}
    for path, links in tocs.items():
        if kinds.get(path) == "archive":
            months = {p for p, kind in kinds.items() if kind == "month" and "page-" not in p}
            assert links and set(links) <= months, (path, links)
            continue
        assert links, path
        assert {kinds.get(link) for link in links} <= {"article", "column"}, (path, links)
        assert set(pages[path]["links"]) <= set(links), path


def test_early_in_the_site_its_rotating_box_is_no_toc_link() -> None:
    """The demo's list pages fed in-process, early (34 pages: the home page, every category and
    author index, the first articles): the site's rotating box of one link (a third of the
    pages show each of its variants) is repeated past √N, so it is the template's, while its
    anchors' entropy still rates them informative for k-MIB's TOC search. No TocItem links
    it; each still links every story its list shows (the flaky crawl above saw it 1 run in
    10, as the crawl's order let the box reach a list page's TOC that early)."""
    from sample_project.demo_site import generate_demo_site

    files, truth = generate_demo_site()
    kinds = {path: page["kind"] for path, page in truth["pages"].items()}
    lists = sorted(p for p, kind in kinds.items()
                   if kind in ("home", "category", "author") and "page-" not in p)
    stories = sorted(p for p, kind in kinds.items() if kind in ("article", "column"))
    fed = lists + stories[: 34 - len(lists)]
    base = "http://demo.test"
    models = {p: PageModel.from_html(files[p], base + p) for p in fed}
    store = open_store("memory://")
    for model in models.values():
        feed_model(store, model, site="demo.test")
    snapshot = store.snapshot("demo.test")
    terms = {model.url: frozenset(model.vocab) for model in models.values()}
    for path in lists:
        analysis = analyze_page(None, base + path, store, site="demo.test", model=models[path],
                                snapshot=snapshot, target_terms=terms.get)  # fmt: skip
        assert analysis.role == "toc", path
        links = {urlsplit(url).path for url, _ in analysis.toc_links}
        assert {kinds.get(link) for link in links} <= {"article", "column"}, (path, links)
        assert set(truth["pages"][path]["links"]) <= links, path


def test_a_repeated_entry_of_the_list_keeps_its_toc_block() -> None:
    """The site's repetition fingerprints text alone: a short entry of the page's own list
    ("open()", each page's leading elsewhere) is as repeated as the rotating box. A TOC block
    in a template box goes only outside the page's list entries."""
    from wisdom_scrapy.analysis.page_analysis import _outside_template
    from wisdom_scrapy.mining.wisdom import InformativeStructure, MinedBlock

    model = PageModel.from_html(
        '<html><body><div class="ad"><a href="/ads/1">Test-ride the new bikes</a></div>'
        '<ul class="toc"><li><a href="/lib/codecs.html#open">open()</a></li>'
        '<li><a href="/lib/codecs.html#lookup">lookup() of a codec</a></li></ul></body></html>',
        "http://docs.test/lib/binary.html")
    ad = int(np.flatnonzero(model.tag_mask(("div",)))[0])
    first = int(np.flatnonzero(model.tag_mask(("li",)))[0])
    boxes = np.zeros(model.n, bool)
    boxes[[ad, first]] = True  # both repeated past √N, with a link elsewhere
    items = model.tag_mask(("li",))
    view = SiteView(boxes, boxes, items, 1.0, model.tag_mask(("a",)) & model.subtree_mask(items))
    blocks = [MinedBlock(node, "toc", "skeleton", node) for node in (ad, first)]
    toc = InformativeStructure("toc", "alen", blocks, np.zeros(model.n, bool), [ad, first])
    kept = _outside_template(model, toc, view)
    assert [b.node for b in kept.blocks] == [first] and kept.skeleton == [first]


# ------------------------------------------------------------------------------------------
# Pagination needs the page's evidence, never the URL's shape alone
# ------------------------------------------------------------------------------------------


def _paths(html: str, url: str, *, listed: bool = False) -> list[str]:
    model = PageModel.from_html(html, url)
    cover = model.subtree_mask(model.tag_mask(("body",)))
    if not listed:
        return [urlsplit(lk.url).path for lk in toc_links_of(model, cover)]
    items, marks = list_entries(model, template=model.tag_mask(()))
    view = SiteView(model.tag_mask(()), model.tag_mask(()), items, 1.0, marks)
    return [urlsplit(lk.url).path
            for lk in toc_links_of(model, cover, model.subtree_mask(view.items), view.listed)]


def test_a_book_toc_keeps_chapters_and_modules_shaped_like_page_turns() -> None:
    names = ["chapter1", "chapter2", "chapter3", "sqlite3", "intro"]
    toc = "".join(f'<li><a href="{n}.html">{n.title()}: a part of the book</a></li>'
                  for n in names)
    paths = _paths(f"<html><body><ul class='toc'>{toc}</ul></body></html>",
                   "http://docs.test/book/")
    assert paths == [f"/book/{n}.html" for n in names]
    lone = _paths('<html><body><p><a href="/docs/ipv6.html">IPv6</a></p><div><p>Text.</p>'
                  '<a href="/blog/post-42/">Post 42</a> <a href="/blog/about/">About</a></div>'
                  "</body></html>", "http://docs.test/docs/")
    assert "/docs/ipv6.html" in lone and "/blog/post-42/" in lone


def test_a_numbered_pager_is_left_out_on_every_page() -> None:
    pager = ('<div class="pages"><a href="/blog/">1</a> <span>2</span> '
             '<a href="/blog/page/3/">3</a> <a href="/blog/page/4/">4</a> '
             '<a href="/blog/page/3/">Next »</a></div>')
    posts = "".join(f'<li><a href="/blog/post-{n}/">Post {n} on roses</a></li>' for n in (7, 8))
    paths = _paths(f"<html><body><ul>{posts}</ul>{pager}</body></html>",
                   "http://blog.test/blog/page/2/")
    assert paths == ["/blog/post-7/", "/blog/post-8/"]
    first = _paths('<html><body><ul>' + posts + '</ul><p><a href="/blog/page/2/">Older »</a>'
                   "</p></body></html>", "http://blog.test/blog/")
    assert first == ["/blog/post-7/", "/blog/post-8/"]


def test_a_year_archive_index_lists_its_years() -> None:
    years = "".join(f'<li><h2><a href="/archive/{y}/">{y}</a></h2><p>Posts written in the '
                    f"year {y}, a dozen of them.</p></li>" for y in range(2023, 2017, -1))
    html = f"<html><body><ul class='years'>{years}</ul></body></html>"
    expected = [f"/archive/{y}/" for y in range(2023, 2017, -1)]
    assert _paths(html, "http://blog.test/archive/") == expected
    assert _paths(html, "http://blog.test/archive/", listed=True) == expected


def test_byline_and_tag_lines_led_by_a_link_are_not_listed() -> None:
    """A line whose first text is a link lists its links (an index line) unless that link is
    no title's size ("roses, tulips") or its URL, or URL pattern, recurs in other entries
    (every teaser's author, tag pages) while no title's does."""
    entry = ('<li><h2><a href="/posts/{n}.html">Post number {n} about gardens</a></h2>'
             '<p><a href="/author/{who}">{name}</a> on March {n}</p>'
             '<p class="tags"><a href="/tag/{tag}">{tag}</a>, <a href="/tag/tulips">tulips</a>'
             "</p></li>")
    people = [("jane", "Jane Doe"), ("ann", "Ann Lee"), ("jane", "Jane Doe")]
    body = "".join(entry.format(n=n, who=who, name=name, tag=["roses", "lilies", "irises"][n])
                   for n, (who, name) in enumerate(people))
    paths = _paths(f"<html><body><ul>{body}</ul></body></html>", "http://blog.test/",
                   listed=True)
    assert paths == [f"/posts/{n}.html" for n in range(3)]


def test_toc_link_weights_and_blocks_are_each_links_own() -> None:
    """A TocItem's links (each distinct anchor text weighed once, the blocks found in one
    search) carry what each link alone gives: α of its own text's terms, and the TOC block
    whose subtree holds it. On the vendored Sphinx index pages, analysed with their site's
    entropies."""
    pages = sorted((Path(__file__).parent / "fixtures" / "pydoc").glob("*.html"))
    store = open_store("memory://")
    models = {f"http://docs.test/{p.name}": PageModel.from_html(p.read_bytes(),
                                                               f"http://docs.test/{p.name}")
              for p in pages}  # fmt: skip
    for model in models.values():
        feed_model(store, model, site="docs.test")
    snapshot = store.snapshot("docs.test")
    tocs = 0
    for url, model in models.items():
        analysis = analyze_page(None, url, store, site="docs.test", model=model,
                                snapshot=snapshot)  # fmt: skip
        if analysis.role != "toc":
            continue
        tocs += 1
        # the page's TOC links, then again in reverse (texts repeat) and links of its menus
        # and two holding characters XML forbids (one text repeated clean)
        first, at = analysis.toc_anchor_links[0], len(analysis.toc_anchor_links)
        stray = [first._replace(url=first.url + "\x0b", text=first.text + "\x01\uffff"),
                 first._replace(text="\x08" + first.text)]
        chosen = analysis._toc_links = [*analysis.toc_anchor_links, *stray,
                                         *analysis.toc_anchor_links[::-1], *model.links()[:3]]
        # and TOC blocks (out of document order) around two of them
        analysis.blocks += [Block("toc", chosen[2].node, ""), Block("toc", chosen[0].node, "")]
        toc = [(k, b.node) for k, b in enumerate(analysis.blocks) if b.kind == "toc"]
        want = xml_safe([
            {"url": link.url, "text": link.text,
             "weight": round(float(link_weights([extract_terms(link.text)], snapshot)[0]), 6),
             "block": next((k for k, node in toc
                            if node <= link.node < model.subtree_end[node]), None)}
            for link in chosen
        ])  # fmt: skip
        assert {d["block"] for d in want} > {None}
        # the stray links: clean in the item
        assert [(d["url"], d["text"]) for d in want[at : at + 2]] == [(first.url, first.text)] * 2
        assert _toc_links(analysis, model, snapshot) == want
        assert [d["weight"] for d in _toc_links(analysis, model, None)] == [0.0] * len(chosen)
    assert tocs


@pytest.mark.parametrize("values", [
    [], [""], ["plain", "text"], ["a\x00b", "clean", "\ufffe", "tab\tand\nnewline\r"],
    ["\x0b\x0c", "\x1f"], ["only one stray\x0e"],
])  # fmt: skip
def test_xml_safe_strings_is_xml_safe_of_each(values: list[str]) -> None:
    """One search of the strings joined finds a forbidden character exactly where a search of
    each would (tab, newlines and others kept)."""
    assert xml_safe_strings(values) == [xml_safe(v) for v in values]


def test_a_sidebar_of_the_sites_posts_is_no_toc_link_of_a_list_page():
    """flink-web's list pages carry a sidebar (``aside > nav``) listing every post of the blog;
    in the 14-page fixture only 3 pages carry it, fewer than √14, so it is no template box yet.
    Their TocItems still name their own teasers only: the page's navigation is no list entry
    (``listing.not_own_text``), the ``main`` around the teasers is the list, not one lone
    entry that would carry the sidebar in, and k-MIB's TOC blocks in the navigation go."""
    from benchmarks.blog_sites import FIXTURE_SITES, fed_analyses, load_sites

    site = load_sites(FIXTURE_SITES)["flink-web"]
    lists = 0
    for _path, page, analysis, model, _snapshot in fed_analyses(site):
        if page.role != "toc":
            continue
        in_navigation = not_own_text(model, np.zeros(model.n, dtype=bool))
        own = {link.url for link in model.links() if not in_navigation[link.node]}
        sidebar_only = {link.url for link in model.links() if in_navigation[link.node]} - own
        linked = {url for url, _ in analysis.toc_links}
        assert analysis.role == "toc" and linked and sidebar_only
        assert not linked & sidebar_only, f"{model.url}: the sidebar's posts as TOC links"
        lists += 1
    assert lists >= 2


@pytest.mark.parametrize("order", [1, -1])
def test_a_one_teaser_home_page_fed_with_two_pages_is_a_list(order: int) -> None:
    """erikmcclure's home page shows one teaser (a linked ``h5`` title, a paragraph, a
    "comments" line linking the same post) and the site's projects. Fed with only two other
    pages, the comments line is no template yet; its title and comments line are one entry's
    parts, not two entries, so the teaser's wrappers hold no other entry and the page is a
    list, as it is once the site is warm (before: an article, until more pages were fed)."""
    from benchmarks.blog_sites import FIXTURE_SITES, fed_analyses, load_sites

    site = load_sites(FIXTURE_SITES)["erikmcclure"]
    paths = ["/", "/blog/", "/categories/project/"][::order]
    found = {path: analysis for path, _page, analysis, _model, _snapshot
             in fed_analyses(site, "warm", paths=paths)}  # fmt: skip
    home = found["/"]
    assert home.role == "toc"
    assert "http://127.0.0.1:8000/blog/software-is-shit-eating-contest/" in {
        url for url, _ in home.toc_links}


def _entry_tags(body: str) -> list[str]:
    model = PageModel.from_html(f"<html><body>{body}</body></html>", "http://blog.test/")
    items = list_entries(model, template=model.tag_mask(())).items
    return [str(model.tag[i]) for i in np.flatnonzero(items)]


def test_a_teasers_title_and_comments_line_are_one_entry_an_indexs_rows_many() -> None:
    """Sibling lines led by links are items when they are different entries: a teaser's
    title and its "comments" line (a part of the post the title links whole) or a repeated
    cross-reference are one, the rows of an API index (parts of one page) are many."""
    teaser = ('<article><h5><a href="/blog/post/">A post of the blog</a></h5>'
              "<p>The teaser of the post, a few sentences of its own text.</p>"
              '<div><a href="/blog/post/#comments">comments</a></div></article>')
    tags = _entry_tags(teaser)  # the teaser and its wrappers are lone entries (nested)
    assert "article" in tags and "div" not in tags
    rows = "".join(f'<tr><td><p><a href="/api.html#f{k}">f{k}()</a></p></td>'
                   f"<td><p>Does {k}.</p></td></tr>" for k in range(3))  # as the Python docs
    assert _entry_tags(f"<table><tbody>{rows}</tbody></table>") == ["tr"] * 3
    same = "".join('<p><a href="/intro.html#availability">Availability</a>: POSIX</p>'
                   for _ in range(3))  # fmt: skip
    assert _entry_tags(f"<div>{same}<p>Text of the section.</p></div>") == []
