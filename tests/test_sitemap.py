"""SMG §4.3–4.6: block identification, block clustering (Table 2 alignment), block-level
EN-HITS, the SiteMap Analyzer, and a real crawl of the demo site with the sitemap exported."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np
import pytest
import scipy.sparse as sp

from tests.crawling import CrawlResult, run_crawl
from wisdom_scrapy.engine.sites import SITE_HORIZON
from wisdom_scrapy.mining.lamis import hits, link_weights
from wisdom_scrapy.mining.sitemap import (
    GAP_EXTEND,
    GAP_OPEN,
    H2S_MATRIX,
    BlockInfo,
    PageBlocks,
    block_hits,
    build_sitemap,
    cluster_blocks,
    identify_blocks,
    names_a_page,
    self_score,
    similarity,
)
from wisdom_scrapy.page.terms import extract_terms
from wisdom_scrapy.store.base import EntropySnapshot

SYMBOLS = "ECKNDSAZHLIVTQRYPWFMGBX"  # what H2S emits


def test_substitution_matrix_table2() -> None:
    m = H2S_MATRIX
    assert all(m[(a, b)] == m[(b, a)] for a in SYMBOLS for b in SYMBOLS)
    diag = {"A": 7, "N": 9, "D": 9, "E": 9, "K": 9, "T": 7, "Q": 4, "F": 4, "P": 6, "X": 6}
    assert all(m[(s, s)] == v for s, v in diag.items())
    similar = {("D", "S"): 2, ("G", "M"): 5, ("H", "V"): 4, ("P", "R"): 4, ("P", "Y"): 4,
               ("R", "Y"): 4, ("P", "W"): 2, ("T", "B"): 4, ("T", "Z"): 4}  # fmt: skip
    assert all(m[pair] == v for pair, v in similar.items())
    assert m[("A", "T")] == -1 and m[("E", "K")] == -1


def _smith_waterman(a: str, b: str) -> int:
    """Textbook Smith-Waterman with affine gaps (Gotoh), gap of length k costs open + k·extend
    (BLAST's convention), to check the library's scores."""
    neg = -(10**9)
    h = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    e = [[neg] * (len(b) + 1) for _ in range(len(a) + 1)]
    f = [[neg] * (len(b) + 1) for _ in range(len(a) + 1)]
    best = 0
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            e[i][j] = max(e[i][j - 1] - GAP_EXTEND, h[i][j - 1] - GAP_OPEN - GAP_EXTEND)
            f[i][j] = max(f[i - 1][j] - GAP_EXTEND, h[i - 1][j] - GAP_OPEN - GAP_EXTEND)
            h[i][j] = max(0, h[i - 1][j - 1] + H2S_MATRIX[(a[i - 1], b[j - 1])], e[i][j], f[i][j])
            best = max(best, h[i][j])
    return best


def test_alignment_scores_match_a_textbook_smith_waterman() -> None:
    rng = random.Random(3)
    pairs = [("LIATAIIATAIL", "LIATAIIATAIIATAIL"), ("DSSD", "DDDD"), ("PTWTP", "YTRTY")]
    for _ in range(20):
        a = "".join(rng.choice(SYMBOLS) for _ in range(rng.randint(5, 40)))
        b = "".join(rng.choice(SYMBOLS) for _ in range(rng.randint(5, 40)))
        pairs.append((a, b))
    for a, b in pairs:
        top = max(self_score(a), self_score(b))
        assert similarity(a, b) == pytest.approx(_smith_waterman(a, b) / top)
    assert similarity("LIATAIIATAIL", "LIATAIIATAIL") == 1.0
    # a menu with one more item is semantically identical (θ = 0.9), a table is not
    menu = "LIATAI" + "IATAI" * 9 + "L"
    assert similarity(menu, menu[:-6] + "IATAIL") >= 0.9
    assert similarity(menu, "EKNTNNTNKKNTNNTNKE") < 0.2
    assert self_score("ATA") == 7 + 7 + 7


def test_clusters_with_and_without_the_index_agree() -> None:
    rng = random.Random(5)
    # a menu of 25 items, the current one highlighted (Fig. 9: "different clicked" items);
    # with 12 items the highlight alone costs 11 % of the score, below θ
    menus = []
    for _ in range(6):
        k = rng.randrange(25)
        menus.append("D" + "IATAI" * k + "IAQTQAI" + "IATAI" * (24 - k) + "D")
    tables = ["E" + "KNTNK" * rng.randint(6, 7) + "E" for _ in range(5)]
    noise = ["".join(rng.choice(SYMBOLS) for _ in range(30)) for _ in range(8)]
    seqs = menus + tables + noise + menus[:2]
    with_index = cluster_blocks(seqs)
    all_pairs = cluster_blocks(seqs, use_index=False)
    def same(c):  # the partition the labels make, whatever their names
        return [[c.label[i] == c.label[j] for j in range(len(seqs))] for i in range(len(seqs))]

    assert same(with_index) == same(all_pairs)
    assert with_index.aligned <= all_pairs.aligned
    assert len({with_index.label[i] for i in range(6)}) == 1  # the menus are one block kind
    assert with_index.size[0] == 8  # six menus and the two repeats
    assert with_index.label[0] != with_index.label[6]


def _snapshot(entropy: dict[str, float]) -> EntropySnapshot:
    return EntropySnapshot("s", 10, entropy)


def _block(text: int, anchor: float, low: float, links=(), terms=(), external=0) -> BlockInfo:
    return BlockInfo("IATAI", 0.0, text, anchor, low, list(links), external, list(terms))


def test_block_identifier_fig8() -> None:
    link = [("http://s/a", "A")]
    blocks = [
        _block(100, 5, 0.9, link, ["news"]),  # ACR 0.05 → CB (even low-complexity)
        _block(100, 60, 0.9, link, ["menu"]),  # ACR 0.6 with intra-site links → SB
        _block(100, 60, 0.9, [], ["ad"], external=3),  # ACR 0.6, only outside links → RB
        _block(100, 30, 0.2, link, ["news"]),  # band, informative, high complexity → CB
        _block(100, 30, 0.9, link, ["news"]),  # band, informative, low complexity → SB
        _block(100, 30, 0.2, link, ["boiler"]),  # band, redundant, high, intra-site → SB
        _block(100, 30, 0.9, link, ["boiler"]),  # band, redundant, low → RB
    ]
    entropy = [np.array([0.1, 0.9, 0.9, 0.1, 0.1, 0.95, 0.95])]
    kinds, threshold = identify_blocks([PageBlocks("http://s/", "", blocks)], entropy)
    assert 0.1 <= threshold < 0.95
    assert kinds == [["CB", "SB", "RB", "CB", "SB", "SB", "RB"]]


def test_block_hits_shares_link_weight_by_block_entropy() -> None:
    """Eqs. (3)–(5) on three pages: p1's single block links to p2 (two blocks, EN 0.2 and 0.6)
    and to p3 (one block: α passes unchanged)."""
    snap = _snapshot({"alpha": 0.25, "beta": 0.5, "x": 0.2, "y": 0.6})
    pages = [
        PageBlocks("http://s/1", "", [_block(9, 9, 1, [("http://s/2", "alpha"),
                                                        ("http://s/3", "beta")], ["x"])]),
        PageBlocks("http://s/2", "", [_block(9, 0, 0, [], ["x"]), _block(9, 0, 0, [], ["y"])]),
        PageBlocks("http://s/3", "", [_block(9, 0, 0, [], ["y"])]),
    ]
    entropy = [np.array([0.2]), np.array([0.2, 0.6]), np.array([0.6])]
    hub = block_hits(pages, entropy, snap)
    a12, a13 = link_weights([extract_terms("alpha"), extract_terms("beta")], snap)
    assert (a12, a13) == (pytest.approx(0.75), pytest.approx(0.5))
    expected = np.zeros((4, 4))
    expected[0, 1] = a12 * (1 - 0.2 / 0.8)
    expected[0, 2] = a12 * (1 - 0.6 / 0.8)
    expected[0, 3] = a13
    assert hub == pytest.approx(hits(sp.csr_matrix(expected)).hub)


def _site() -> dict[str, PageBlocks]:
    """A home page with a menu of three sections (repeated on each section page), each section
    with a list of its articles and page numbers; a footer on every page."""
    base = "http://s/"
    menu_links = [(f"{base}sec{i}.html", f"Section {i}") for i in range(3)]
    menu = "D" + "IATAI" * 3 + "D"
    footer = BlockInfo("DTATAD", 0.95, 20, 15, 1.0, [(f"{base}about.html", "About")], 0, ["about"])

    def menu_block() -> BlockInfo:
        return BlockInfo(menu, 0.0, 30, 30, 1.0, list(menu_links), 0, ["section"])

    pages = {base + "index.html": PageBlocks(base + "index.html", "Home", [
        menu_block(),
        BlockInfo("PTPTQTP", 0.3, 500, 0, 0.1, [], 0, ["welcom", "site"]),
        footer,
    ])}  # fmt: skip
    for i in range(3):
        arts = [(f"{base}s{i}/a{k}.html", f"Story {i} {k} headline") for k in range(4)]
        pager = [(f"{base}sec{i}-{n}.html", str(n)) for n in (2, 3)]  # page numbers
        terms = [f"stori{i}", "headlin", f"topic{i}"]
        pages[f"{base}sec{i}.html"] = PageBlocks(f"{base}sec{i}.html", f"Section {i}", [
            menu_block(),
            BlockInfo("L" + "IATAI" * 4 + "LATAATA", 0.2, 80, 70, 1.0, arts + pager, 0, terms),
            footer,
        ])  # fmt: skip
        for url, _ in arts:
            pages[url] = PageBlocks(url, "Story", [
                menu_block(),
                BlockInfo("PTQTQTPTP", 0.2, 900, 0, 0.0, [], 0, [url[-7:-5], "prose"]),
                footer,
            ])  # fmt: skip
    pages[base + "about.html"] = PageBlocks(base + "about.html", "About", [menu_block(), footer])
    return pages


def test_sitemap_analyzer_builds_two_levels() -> None:
    pages = _site()
    terms = {t for p in pages.values() for b in p.blocks for t in b.terms}
    entropy = dict.fromkeys(terms, 0.2) | {"section": 0.9, "about": 0.95}
    sitemap = build_sitemap(pages, _snapshot(entropy))
    assert sitemap.home == "http://s/index.html" and sitemap.title == "Home"
    assert sitemap.urls(1) == [f"http://s/sec{i}.html" for i in range(3)]
    assert [e["title"] for e in sitemap.tree] == ["Section 0", "Section 1", "Section 2"]
    # level 2: the article lists, not the menu again (its cluster was used at level 1), nor
    # the page numbers beside them
    assert sitemap.urls(2) == [f"http://s/s{i}/a{k}.html" for i in range(3) for k in range(4)]
    assert sitemap.entries() == [3, 12]
    assert sitemap.tree[1]["children"][0] == {
        "title": "Story 1 0 headline", "url": "http://s/s1/a0.html", "children": []
    }
    assert build_sitemap(pages, _snapshot(entropy), levels=1).entries() == [3]


def _news_site() -> dict[str, PageBlocks]:
    """A news site: a menu of four sections on every page (template words for anchors), a
    home page with a list of the latest stories (informative anchors) under a link to their
    section, section pages listing their stories, stories citing their section, and on
    section and story pages a "help" bar made from one template whose links go to help pages
    (cited in the stories' text) that do not hold it."""
    base = "http://s/"
    menu_links = [(f"{base}sec{i}.html", f"Section {i}") for i in range(4)]
    bar_seq = "DTATATAD"

    def menu() -> BlockInfo:
        return BlockInfo("D" + "IATAI" * 4 + "D", 0.0, 30, 30, 1.0, list(menu_links), 0,
                         ["section"])  # fmt: skip

    def bar(i: int) -> BlockInfo:
        links = [(f"{base}help{i}.html", f"Help topic {i}"), (f"{base}faq{i}.html", f"FAQ {i}")]
        return BlockInfo(bar_seq, 0.1, 30, 25, 1.0, links, 0, [f"help{i}"])

    stories = {i: [(f"{base}s{i}/a{k}.html", f"Story {i} {k} headline") for k in range(10)]
               for i in range(4)}  # fmt: skip
    every = [link for i in range(4) for link in [(f"{base}sec{i}.html", f"Latest on topic {i}"),
                                                  *stories[i][:3]]]  # fmt: skip
    pages = {base + "index.html": PageBlocks(base + "index.html", "Home", [
        menu(),
        BlockInfo("L" + "IATAI" * len(every) + "L", 0.2, 400, 300, 0.9, every, 0,
                  ["stori", "headlin"]),
    ])}  # fmt: skip
    for i in range(4):
        pages[f"{base}sec{i}.html"] = PageBlocks(f"{base}sec{i}.html", f"Section {i}", [
            menu(),
            bar(i),
            BlockInfo("L" + "IATAI" * 10 + "L", 0.3, 80, 70, 1.0, stories[i], 0, [f"topic{i}"]),
        ])  # fmt: skip
        for k, (url, _) in enumerate(stories[i]):
            cited = [
                (f"{base}sec{i}.html", f"More on topic {i}"),
                (f"{base}help{10 * i + k}.html", "Help topic guide"),
            ]
            pages[url] = PageBlocks(url, "Story", [
                menu(),
                bar(10 * i + k),
                BlockInfo("PTQTAPTAP", 0.2, 900, 40, 0.0, cited, 0, [url[-7:-5], "prose"]),
            ])  # fmt: skip
    for url in {u for p in list(pages.values()) for b in p.blocks[1:2] for u, _ in b.links}:
        pages.setdefault(url, PageBlocks(url, "Help", [menu()]))
    return pages


def test_sitemap_menu_outranks_a_home_story_list() -> None:
    """§4.4 steps 5–6: the menu repeats on the pages it links to, so its |b| is its whole
    cluster (every page) and it beats the home page's story list, whose informative anchors
    give it a hub ~50× the menu's (before, with |b| from step 5 alone, the story list won);
    below, each section's own story list, not the menu again nor the help bar."""
    pages = _news_site()
    anchors = {t for p in pages.values() for b in p.blocks for _, a in b.links
               for t in extract_terms(a)}  # fmt: skip
    terms = anchors | {t for p in pages.values() for b in p.blocks for t in b.terms}
    entropy = dict.fromkeys(terms, 0.1) | {"section": 0.95}
    sitemap = build_sitemap(pages, _snapshot(entropy))
    assert sitemap.urls(1) == [f"http://s/sec{i}.html" for i in range(4)]
    assert sitemap.urls(2) == [f"http://s/s{i}/a{k}.html" for i in range(4) for k in range(10)]


def test_a_box_every_sibling_holds_is_not_their_sitemap_block() -> None:
    """Level 2: every section page holds a "most read" box, the same three stories
    everywhere (a frequent block with informative anchors: a higher |b| × hub than a section's
    own short list); it would give every section the same children, so each section's SMB is
    its own list."""
    base = "http://s/"
    menu = [(f"{base}sec{i}.html", f"Section {i}") for i in range(3)]
    popular = [(f"{base}p{i}.html", f"Popular story {i} headline") for i in range(3)]

    def menu_block() -> BlockInfo:
        return BlockInfo("D" + "IATAI" * 3 + "D", 0.0, 30, 30, 1.0, list(menu), 0, ["menu"])

    def box() -> BlockInfo:
        return BlockInfo("L" + "IATAI" * 3 + "L", 0.5, 40, 38, 1.0, list(popular), 0, ["popular"])

    def prose(name: str) -> BlockInfo:
        return BlockInfo("PTQTQTPTP", 0.2, 900, 0, 0.0, [], 0, [name, "prose"])

    own = {i: [(f"{base}s{i}/a{k}.html", f"Story {i} {k}") for k in range(2)] for i in range(3)}
    pages = {base + "index.html": PageBlocks(base + "index.html", "Home", [menu_block()])}
    for i in range(3):
        pages[menu[i][0]] = PageBlocks(menu[i][0], f"Section {i}", [
            menu_block(),
            BlockInfo("L" + "IATAI" * 2 + "L", 0.2, 30, 28, 1.0, own[i], 0, [f"topic{i}"]),
            box(),
        ])  # fmt: skip
        for url, _ in own[i]:
            pages[url] = PageBlocks(url, "Story", [menu_block(), prose(url[-7:-5]), box()])
    for url, _ in popular:
        pages[url] = PageBlocks(url, "Story", [menu_block(), prose(url[-7:-5]), box()])
    terms = {t for p in pages.values() for b in p.blocks for t in b.terms}
    terms |= {t for p in pages.values() for b in p.blocks for _, a in b.links
              for t in extract_terms(a)}  # fmt: skip
    sitemap = build_sitemap(pages, _snapshot(dict.fromkeys(terms, 0.1) | {"menu": 0.9}))
    assert sitemap.urls(1) == [u for u, _ in menu]
    assert [[c["url"] for c in e["children"]] for e in sitemap.tree] == [
        [u for u, _ in own[i]] for i in range(3)
    ]


def test_anchors_that_name_no_page() -> None:
    assert [names_a_page(t) for t in ("2", "A", "_", "»", "12 »", "Ü")] == [False] * 6
    assert all(map(names_a_page, ("Next »", "13. What Now?", "May 2024", "東京", "", " ")))


def test_nested_lists_keep_their_top_level() -> None:
    links = [("http://s/a", "A"), ("http://s/a1", "A.1"), ("http://s/b", "B")]
    links.append(("http://s/n", "Next"))
    block = BlockInfo("LIATAI", 0.0, 10, 9, 1.0, links, 0, [], [1, 2, 1, 0])
    assert block.top_links() == [links[0], links[2], links[3]]
    assert BlockInfo("IATAI", 0.0, 10, 9, 1.0, links[:2], 0, [], []).top_links() == links[:2]


def test_nested_parents() -> None:
    u = {k: f"http://s/{k}" for k in ("a", "b", "b1", "b2", "c")}
    links = [(u["a"], "A"), (u["a"], "A §1"), (u["b"], "B"), (u["b1"], "B.1"), (u["b2"], "B.1.1")]
    links.append((u["c"], "C"))
    block = BlockInfo("LIATAI", 0.0, 10, 9, 1.0, links, 0, [], [1, 2, 1, 2, 3, 1])
    # a section of a page under the page itself is not nested under anything else
    assert block.nested_parents() == {u["b1"]: {u["b"]}, u["b2"]: {u["b1"]}}


def test_flat_index_does_not_promote_pages_a_table_of_contents_nests() -> None:
    """Level 2: the chapter index nests x1–x3 under its chapters, so the flat index beside
    it (one level up in no list) keeps only y; the chapters' own pages stay under the
    chapter index."""
    base = "http://s/"
    menu = [(f"{base}A.html", "Chapters"), (f"{base}B.html", "Index")]
    names = ["c1", "x1", "x2", "c2", "x3", "y"]
    url = {n: f"{base}{n}.html" for n in names}

    def menu_block() -> BlockInfo:
        return BlockInfo("DIATAIIATAID", 0.0, 20, 20, 1.0, list(menu), 0, ["menu"])

    toc = [(url[n], f"Part {n}") for n in ("c1", "x1", "x2", "c2", "x3")]
    flat = [(url[n], f"Entry {n}") for n in ("x1", "x2", "x3", "y")]
    pages = {
        base + "index.html": PageBlocks(base + "index.html", "Home", [menu_block()]),
        menu[0][0]: PageBlocks(menu[0][0], "Chapters", [
            menu_block(),
            BlockInfo("L" + "IATAI" * 5 + "L", 0.2, 50, 45, 1.0, toc, 0, ["part"],
                      [1, 2, 2, 1, 2]),
        ]),
        menu[1][0]: PageBlocks(menu[1][0], "Index", [
            menu_block(),
            BlockInfo("P" + "QATAQ" * 4 + "P", 0.2, 50, 45, 1.0, flat, 0, ["entri"],
                      [0, 0, 0, 0]),
        ]),
    }  # fmt: skip
    for n in names:
        pages[url[n]] = PageBlocks(url[n], n, [
            menu_block(), BlockInfo("PTQTQTPTP", 0.2, 900, 0, 0.0, [], 0, [n, "prose"]),
        ])  # fmt: skip
    terms = {t for p in pages.values() for b in p.blocks for t in b.terms}
    terms |= {t for p in pages.values() for b in p.blocks for _, a in b.links
              for t in extract_terms(a)}  # fmt: skip
    sitemap = build_sitemap(pages, _snapshot(dict.fromkeys(terms, 0.1)))
    assert sitemap.urls(1) == [menu[0][0], menu[1][0]]
    chapters, index = sitemap.tree
    assert [e["url"] for e in chapters["children"]] == [url["c1"], url["c2"]]
    assert [e["url"] for e in index["children"]] == [url["y"]]


def test_entry_a_sibling_table_of_contents_nests_moves_below_it() -> None:
    """The home menu lists a guide and its 2nd edition beside it; the table of contents (also
    on the menu) nests the 2nd edition under the guide: it moves to level 2, under the guide,
    whose own list holds it."""
    base = "http://s/"
    url = {n: f"{base}{n}.html" for n in ("toc", "guide", "guide2", "intro")}
    menu = [(url["toc"], "Contents"), (url["guide"], "Guide"), (url["guide2"], "Guide 2")]

    def menu_block() -> BlockInfo:
        return BlockInfo("DIATAIIATAIIATAID", 0.0, 20, 20, 1.0, list(menu), 0, ["menu"])

    def page(name: str, *extra: BlockInfo) -> PageBlocks:
        return PageBlocks(url[name], name, [menu_block(), *extra])

    toc = [(url["guide"], "The guide"), (url["guide2"], "Second edition")]
    pages = {
        base + "index.html": PageBlocks(base + "index.html", "Home", [menu_block()]),
        url["toc"]: page("toc", BlockInfo("LIATAILIATAILL", 0.2, 40, 35, 1.0, toc, 0, ["toc"],
                                          [1, 2])),
        url["guide"]: page("guide", BlockInfo("LIATAIIATAIL", 0.2, 40, 35, 1.0,
                                              [(url["guide2"], "Second edition"),
                                               (url["intro"], "Introduction")], 0, ["guid"],
                                              [1, 1])),
        url["guide2"]: page("guide2", BlockInfo("PTQTQTP", 0.2, 900, 0, 0.0, [], 0, ["prose"])),
        url["intro"]: page("intro", BlockInfo("PTQTQTP", 0.2, 900, 0, 0.0, [], 0, ["prose"])),
    }  # fmt: skip
    terms = {t for p in pages.values() for b in p.blocks for t in b.terms}
    terms |= {t for p in pages.values() for b in p.blocks for _, a in b.links
              for t in extract_terms(a)}  # fmt: skip
    sitemap = build_sitemap(pages, _snapshot(dict.fromkeys(terms, 0.1)))
    assert sitemap.urls(1) == [url["toc"], url["guide"]]
    assert sitemap.tree[1]["children"] == [
        {"title": "Second edition", "url": url["guide2"], "children": []},
        {"title": "Introduction", "url": url["intro"], "children": []},
    ]


def test_page_blocks_of_a_real_page_nest_lists() -> None:
    from wisdom_scrapy.mining.sitemap import page_blocks
    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.segment import SegParams

    html = (
        "<html><body><div><p>intro text here and there</p></div><div><ul>"
        + "".join(
            f"<li><a href='/c{i}.html'>Chapter {i}</a><ul><li><a href='/c{i}s.html'>Sec</a></li>"
            "</ul></li>"
            for i in range(6)
        )
        + "</ul></div><div><a href='http://other.org/'>elsewhere</a> and text</div></body></html>"
    )
    model = PageModel.from_html(html, "http://s/index.html")
    page = page_blocks(model, SegParams(12, 1.5, 1.75), lambda u: u.startswith("http://s/"))
    toc = next(b for b in page.blocks if b.links)
    assert [u for u, _ in toc.top_links()] == [f"http://s/c{i}.html" for i in range(6)]
    assert len(toc.links) == 12 and toc.acr > 0.5
    assert sum(b.external for b in page.blocks) == 1
    again = PageBlocks.decode(page.encode())  # figures are rounded in the record
    assert again.blocks[1].links == toc.links and again.blocks[1].depth == toc.depth


def test_page_blocks_round_trip() -> None:
    page = _site()["http://s/index.html"]
    assert PageBlocks.decode(page.encode()) == page


def _demo_crawl(tmp_path: Path, **settings: object) -> CrawlResult:
    """``scrapy crawl demo`` on a fresh build, free port, a SQLite store in ``tmp_path``."""
    return run_crawl(
        "demo",
        tmp_path,
        args={"site_dir": str(tmp_path / "demo"), "port": "0"},
        settings={"WISDOM_STORE_URI": f"sqlite:///{tmp_path / 'w.db'}", **settings},
    )


@pytest.mark.crawl
def test_demo_crawl_exports_the_sitemap(tmp_path: Path) -> None:
    uri = tmp_path / "out" / "sitemap"
    result = _demo_crawl(tmp_path, WISDOM_SITEMAP_URI=str(uri))
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats.get("wisdom/errors/sitemap") is None
    assert result.stats["wisdom/sitemap/pages"] > 100
    items = [i for i in result.items if "tree" in i and "levels" in i]
    assert len(items) == 1
    item = items[0]
    assert item["url"].endswith("/index.html") and item["levels"] == 2
    assert item["entries"][0] == len(item["tree"]) > 0
    tree = json.loads(Path(f"{uri}.json").read_text())
    assert tree == {"url": item["url"], "title": item["title"], "children": item["tree"]}
    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    xml = ElementTree.parse(f"{uri}.xml").getroot()
    assert xml.tag == f"{ns}urlset"
    locs = [u.findtext(f"{ns}loc") for u in xml]
    assert locs[0] == item["url"]
    assert {e["url"] for e in item["tree"]} <= set(locs)
    # the sitemap's pages are the site's own
    assert all(loc.startswith(item["url"].rsplit("/", 1)[0]) for loc in locs)


@pytest.mark.crawl
def test_closed_before_idle_writes_through_a_feed_storage(tmp_path: Path) -> None:
    """A spider stopped early (CLOSESPIDER_PAGECOUNT) emits its SitemapItem at the close and
    writes the files, here through Scrapy's file:// feed storage; the records stay in the
    store."""
    out = tmp_path / "out"
    result = _demo_crawl(
        tmp_path, WISDOM_SITEMAP_URI=(out / "map").as_uri(), CLOSESPIDER_PAGECOUNT=30
    )
    assert result.returncode == 0, result.log[-3000:]
    assert len([i for i in result.items if "tree" in i]) == 1
    tree = json.loads((out / "map.json").read_text())
    assert tree["url"].endswith("/index.html") and tree["children"]
    assert ElementTree.parse(out / "map.xml").getroot().tag.endswith("urlset")
    from wisdom_scrapy.sitemap import RECORD_KIND
    from wisdom_scrapy.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'w.db'}")
    try:
        (site,) = store.sites()
        assert len(store.records(site, RECORD_KIND)) >= 30
    finally:
        store.close()


def test_sitemap_settings_are_validated() -> None:
    from scrapy.settings import Settings

    from wisdom_scrapy.settings import SettingsError, WisdomSettings

    assert not WisdomSettings.from_settings(Settings()).sitemap
    on = WisdomSettings.from_settings(Settings({"WISDOM_SITEMAP_URI": "out/map"}))
    assert on.sitemap and on.sitemap_uri == "out/map" and on.sitemap_levels == 2
    with pytest.raises(SettingsError, match="WISDOM_SITEMAP_URI"):
        WisdomSettings.from_settings(Settings({"WISDOM_SITEMAP_URI": "out/"}))
    with pytest.raises(SettingsError, match="WISDOM_SITEMAP_LEVELS"):
        WisdomSettings.from_settings(Settings({"WISDOM_SITEMAP_LEVELS": 0}))


_WITHOUT_PARASAIL = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "parasail":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
from scrapy.settings import Settings
from wisdom_scrapy.settings import SettingsError, WisdomSettings
from wisdom_scrapy.mining.sitemap import _ORDER, similarity
assert not WisdomSettings.from_settings(Settings()).sitemap  # off: parasail not asked for
for name, value in (("WISDOM_SITEMAP", True), ("WISDOM_SITEMAP_URI", "out/map")):
    try:
        WisdomSettings.from_settings(Settings({name: value}))
    except SettingsError as exc:
        print("settings:", exc)
try:
    similarity(_ORDER[:3], _ORDER[:3])
except ModuleNotFoundError as exc:
    print("engine:", exc)
"""


@pytest.mark.crawl  # a fresh interpreter
def test_sitemap_without_the_sitemap_extra_names_the_extra() -> None:
    """parasail is the ``sitemap`` extra: turning the sitemap on without it stops the crawl at
    its start with a settings error naming the extra (not a ModuleNotFoundError at the first
    sitemap, hours in); the engine's alignment names it too. A crawl without the sitemap never
    asks for it."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PARASAIL], capture_output=True, text=True, check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.splitlines()
    extra = "needs parasail, an optional dependency: pip install 'wisdom_scrapy[sitemap]'"
    assert out == [
        f"settings: WISDOM_SITEMAP turns the sitemap on, which {extra}",
        f"settings: WISDOM_SITEMAP_URI turns the sitemap on, which {extra}",
        f"engine: the sitemap's block alignment {extra}",
    ]


def _leave(sites: Any, stages: Any, *names: str) -> None:
    """The crawl leaves ``names``: a site's pages are fed for longer than their horizon, the
    crawl's stages offered each site left."""
    for name in names:
        sites.fed(name, stages)
    for _ in range(SITE_HORIZON + 1):
        sites.fed("elsewhere.test", stages)


def test_a_sites_sitemap_state_is_its_part_of_the_site_context_for_the_whole_crawl() -> None:
    """What the middleware keeps of a site (symbols, home, records, last sitemap) is its part of
    the site's context: the sites' items come in the order their first page was observed (not
    the order the crawl first saw the sites), and leaving a site does not drop it."""
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    from wisdom_scrapy.extension import WisdomExtension
    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.sitemap import SITEMAP, WisdomSitemapMiddleware

    crawler = get_crawler(settings_dict={"WISDOM_STORE_URI": "memory://", "WISDOM_SITEMAP": True})
    extension = WisdomExtension.from_crawler(crawler)
    try:
        middleware = WisdomSitemapMiddleware(crawler, extension)
        sites = extension.runtime.sites
        sites.get("a.test")  # the crawl sees a.test first, the sitemap b.test
        for site in ("b.test", "a.test"):
            url = f"http://{site}/"
            body = f"<html><body><h1>{site}</h1><p>words of {site}</p></body></html>"
            response = HtmlResponse(url, body=body.encode(), encoding="utf-8")
            middleware._observe(PageModel.from_tree(response.selector.root, url))
        assert [item.site for item in middleware.site_items("idle")] == ["b.test", "a.test"]
        part = SITEMAP.of(sites.get("a.test"))
        assert part is not None and part.home == "http://a.test/" and part.sitemap is not None
        _leave(sites, extension.runtime.letting_go, "a.test", "b.test")
        assert SITEMAP.of(sites.get("a.test")) is part  # kept: a left site is not rebuilt
        assert middleware.site_items("close") == []
    finally:
        extension.runtime.close()
