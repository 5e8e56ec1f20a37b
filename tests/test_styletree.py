"""Site style tree and compressed structure tree: the thesis's worked examples (Lan Yi,
ch. 4.2–4.3), MarkNoise / MapSST / MapCST on a synthetic site, the automatic threshold, and
persistence."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from wisdom_scrapy.mining.styletree import (
    CST_PARAMS,
    LEAF,
    SST_PARAMS,
    StyleTree,
    StyleTreeParams,
    map_page,
    otsu_threshold,
)
from wisdom_scrapy.page.model import PageModel

WORDS = [
    "harbour",
    "council",
    "budget",
    "museum",
    "trustee",
    "student",
    "energy",
    "climate",
    "housing",
    "transport",
    "election",
    "theatre",
    "railway",
    "library",
    "garden",
    "festival",
    "orchestra",
    "bakery",
    "stadium",
    "hospital",
    "airport",
    "bridge",
    "river",
    "forest",
    "mountain",
    "valley",
    "village",
    "market",
    "school",
    "factory",
]


def _model(html: str, i: int) -> PageModel:
    return PageModel.from_html(html, f"http://site.test/{i}.html")


def _element(tree: StyleTree, parent: int, key: str) -> list[int]:
    kid = tree._key_ids[key]
    return tree.siblings(parent, kid)


def _style_counts(tree: StyleTree, e: int) -> dict[tuple[str, ...], int]:
    out = {}
    for keys, sid in tree.styles_of(e).items():
        names = tuple("LEAF" if k == LEAF else tree.key_names[k] for k in keys)
        out[names] = int(tree.st_count.view[sid])
    return out


# --------------------------------------------------------------------------------------------
# Figure 4-3: two DOM trees and their style tree (basic algorithm: actual leaves)
# --------------------------------------------------------------------------------------------

D1 = (
    "<html><body><table width=800><tr><td>harbour</td></tr></table><img src=a.gif>"
    "<table bgcolor=red><p>museum</p><img src=b.gif><p>council</p><a href=x>budget</a>"
    "</table></body></html>"
)
D2 = (
    "<html><body><table width=800><tr><td>harbour</td></tr></table><img src=a.gif>"
    "<table bgcolor=red><p>theatre</p><br><p>railway</p></table></body></html>"
)


def test_figure_4_3_style_tree():
    tree = StyleTree(StyleTreeParams(leaf_height=0))
    for i, html in enumerate((D1, D2)):
        assert tree.add_page(_model(html, i), f"u{i}")
    assert tree.pages == 2
    (body,) = _element(tree, 0, "body")
    assert tree.el_m.view[body] == 2  # both pages start with BODY
    # below BODY both pages have the style <TABLE, IMG, TABLE>: one style node, n = 2
    assert _style_counts(tree, body) == {("table|width=800", "img", "table|bgcolor=red"): 2}
    (right,) = _element(tree, body, "table|bgcolor=red")
    # below the right-most TABLE the pages diverge: P-IMG-P-A and P-BR-P, n = 1 each
    assert _style_counts(tree, right) == {("p", "img", "p", "a"): 1, ("p", "br", "p"): 1}
    assert tree.add_page(_model(D1, 0), "u0") is False  # the same URL never counts twice


# --------------------------------------------------------------------------------------------
# Figure 4-4 / eq. (5-1): NodeImp of the double-lined Table = 0.292, of Body = 0
# --------------------------------------------------------------------------------------------

STYLES = {  # the Table's child styles and their page counts in 100 pages (p = .35 .25 .25 .15)
    ("section", "figure", "aside"): 35,
    ("section", "aside"): 25,
    ("figure", "section", "section"): 25,
    ("section", "section", "figure", "aside"): 15,
}


def _fig44_pages() -> list[str]:
    pages = []
    k = 0
    for style, count in STYLES.items():
        for _ in range(count):
            kids = "".join(
                f"<{tag}><p>{WORDS[(k + j) % len(WORDS)]} {k}</p></{tag}>"
                for j, tag in enumerate(style)
            )
            pages.append(
                "<html><body><div class=nav><ul><li>home</li><li>news</li></ul></div>"
                f"<div class=main>{kids}</div><div class=foot><p>copyright</p></div>"
                "</body></html>"
            )
            k += 1
    return pages


@pytest.fixture(scope="module")
def fig44() -> StyleTree:
    tree = StyleTree(SST_PARAMS)
    for i, html in enumerate(_fig44_pages()):
        tree.add_page(_model(html, i), f"http://site.test/{i}.html")
    return tree


def test_node_importance_worked_example(fig44):
    marks = fig44.sst_marks()
    (body,) = _element(fig44, 0, "body")
    (main,) = _element(fig44, body, "div|class=main")
    assert fig44.el_m.view[main] == 100
    # −0.35 log100 0.35 − 2·0.25 log100 0.25 − 0.15 log100 0.15 = 0.292
    assert marks.node_imp[main] == pytest.approx(0.292, abs=5e-4)
    assert marks.node_imp[body] == 0.0  # l = 1: one presentation style below Body


def test_composite_importance_follows_eqs_5_2_to_5_5(fig44):
    marks = fig44.sst_marks()
    a = marks.arrays
    (body,) = _element(fig44, 0, "body")
    (main,) = _element(fig44, body, "div|class=main")
    (foot,) = _element(fig44, body, "div|class=foot")
    # (5-4)/(5-5): the footer's text is the same on all 100 pages: H = 1, CompImp = 0
    assert marks.comp_imp[foot] == pytest.approx(0.0, abs=1e-9)
    # (5-2)/(5-3) by hand for the Table: l = 4 styles, γ = 0.9
    styles = [sid for sid, p in enumerate(a.st_parent.tolist()) if p == main]
    mix = 0.0
    for sid in styles:
        elems = fig44.st_elems[sid]
        mean = sum(marks.comp_imp[e] for e in elems) / len(elems)
        mix += fig44.st_count.view[sid] / 100 * mean
    g = 0.9 ** len(styles)
    expected = (1 - g) * marks.node_imp[main] + g * mix
    assert marks.comp_imp[main] == pytest.approx(expected, rel=1e-12)
    # each section's paragraph is unique to its page (words differ per page): H ≈ 0
    sec = _element(fig44, main, "section")[0]
    assert marks.comp_imp[sec] > 0.5
    assert marks.comp_imp[foot] <= marks.threshold < marks.comp_imp[sec]


def test_mark_noise_and_meaningful(fig44):
    marks = fig44.sst_marks()
    (body,) = _element(fig44, 0, "body")
    (main,) = _element(fig44, body, "div|class=main")
    (nav,) = _element(fig44, body, "div|class=nav")
    (foot,) = _element(fig44, body, "div|class=foot")
    assert marks.noisy[nav] and marks.noisy[foot]
    assert marks.meaningful[main] and not marks.noisy[main]
    assert not marks.noisy[body] and not marks.meaningful[body]  # holds both kinds
    # a smaller t than every importance: nothing is noisy
    assert not fig44.sst_marks(threshold=-1.0).noisy.any()


def test_map_sst_drops_the_noisy_parts_of_a_new_page(fig44):
    from wisdom_scrapy.analysis.cleaners import SstCleaner

    cleaner = SstCleaner(SST_PARAMS)
    cleaner.tree = fig44
    html = (
        "<html><body><div class=nav><ul><li>home</li><li>news</li></ul></div>"
        "<div class=main><section><p>orchestra premiere tonight</p></section>"
        "<aside><p>bakery opening</p></aside></div>"
        "<div class=foot><p>copyright</p></div></body></html>"
    )
    model = _model(html, 999)
    cleaned = cleaner.clean("http://site.test/new.html", model, None)
    kept = model.text_of(0, exclude=np.flatnonzero(~cleaned.keep & (model.own_len > 0)))
    assert "orchestra premiere tonight" in kept and "bakery opening" in kept
    assert "copyright" not in kept and "home" not in kept
    assert "orchestra" in cleaned.features and "copyright" not in cleaned.features


# --------------------------------------------------------------------------------------------
# Figure 4-9 / eqs. (5-6) … (5-10): the compressed structure tree
# --------------------------------------------------------------------------------------------

C1 = (
    "<html><body bgcolor=white><table width=800><tr><td>harbour council</td></tr></table>"
    "<span>museum trustee</span><table bgcolor=red><tr><td>student energy</td></tr></table>"
    "</body></html>"
)
C2 = (
    "<html><body bgcolor=white><table width=800><tr><td>harbour council</td></tr></table>"
    "<table bgcolor=red><tr><td>student energy</td></tr></table></body></html>"
)


def test_figure_4_9_cst_node_importance_and_merging():
    tree = StyleTree(StyleTreeParams(leaf_height=1))
    for i, html in enumerate((C1, C2)):
        tree.add_page(_model(html, i), f"u{i}")
    w = tree.cst_weights()
    (body,) = _element(tree, 0, "body|bgcolor=white")
    assert w.node_imp[0] == 0.0  # NodeImp(root) = −1 log2 1 = 0
    assert w.node_imp[body] == pytest.approx(1.0)  # −(0.5 log2 0.5 + 0.5 log2 0.5) = 1
    # every tag node of d2 is merged with its counterpart in d1 (same tag, attributes and
    # content), only SPAN stays alone: one element per table, on both pages
    tables = _element(tree, body, "table|width=800") + _element(tree, body, "table|bgcolor=red")
    assert len(tables) == 2
    assert [int(tree.el_m.view[t]) for t in tables] == [2, 2]
    (span,) = _element(tree, body, "span")
    assert tree.el_m.view[span] == 1
    # PathImp (5-9) is monotone along a path and in [0, 1]
    for e in range(1, tree.n_elements):
        assert 0.0 <= w.path_imp[tree.el_parent.view[e]] <= w.path_imp[e] <= 1.0


def test_feature_weight_eq_5_10():
    pages = [
        "<html><body><div class=nav><ul><li><a href=/>home news</a></li></ul></div>"
        f"<div class=text><div><p>{WORDS[i]} {WORDS[i + 1]} report</p></div></div>"
        "</body></html>"
        for i in range(20)
    ]
    tree = StyleTree(CST_PARAMS)
    for i, html in enumerate(pages):
        tree.add_page(_model(html, i), f"u{i}")
    w = tree.cst_weights()
    a = w.arrays
    term = {t: i for i, t in enumerate(tree.terms)}
    for code, weight in zip(w.code.tolist(), w.weight.tolist(), strict=True):
        e, t = code >> 32, code & 0xFFFFFFFF
        row = np.flatnonzero((a.code_elem == e) & (a.code_term == t))[0]
        raw = w.path_imp[e] * (1.0 - a.code_h[row])
        expected = 0.0 if raw < w.m else (raw if raw < w.u else 1.0)
        assert weight == pytest.approx(expected)
    # "home" is in the navigation of every page: H = 1, weight 0; a page's own word weighs more
    weight_of = dict(zip((w.code & 0xFFFFFFFF).tolist(), w.weight.tolist(), strict=True))
    assert weight_of[term["home"]] == 0.0
    assert weight_of[term["harbour"]] > 0.5
    assert "report" in term and weight_of[term["report"]] < weight_of[term["harbour"]]
    # MapCST on a page never seen: its unknown words weigh 1, the navigation 0
    page = map_page(tree, _model(pages[0].replace("harbour council", "orchestra bakery"), 99))
    assert page.leaves and not page.unmatched


def test_otsu_threshold_splits_two_populations():
    values = np.array([0.0, 0.02, 0.05, 0.9, 0.95, 1.0])
    assert otsu_threshold(values, np.ones(6)) == 0.05
    assert otsu_threshold(np.array([0.3, 0.3]), np.ones(2)) == 0.0  # no boundary
    # weights move the split: a heavy low-importance block pulls it down
    assert otsu_threshold(np.array([0.0, 0.4, 1.0]), np.array([1.0, 1.0, 50.0])) == 0.4


def test_tree_round_trips_through_bytes(fig44):
    copy = StyleTree.from_bytes(fig44.to_bytes())
    a, b = fig44.sst_marks(), copy.sst_marks()
    assert copy.pages == fig44.pages and copy.n_elements == fig44.n_elements
    np.testing.assert_allclose(a.comp_imp, b.comp_imp)
    assert a.threshold == b.threshold
    with pytest.raises(ValueError, match="style tree"):
        StyleTree.from_bytes(b"not a tree")


def test_sample_size_bounds_the_tree():
    tree = StyleTree(StyleTreeParams(sample_pages=3))
    for i, html in enumerate(_fig44_pages()[:5]):
        tree.add_page(_model(html, i), f"u{i}")
    assert tree.pages == 3 and tree.full


def test_deep_pages_need_no_recursion():
    depth = 5000  # far beyond Python's recursion limit
    html = "<html><body>" + "<div>" * depth + "<p>harbour</p>" + "</div>" * depth + "</body></html>"
    tree = StyleTree(SST_PARAMS)
    assert tree.add_page(_model(html, 0), "u0")
    assert tree.add_page(_model(html.replace("harbour", "museum"), 1), "u1")
    marks = tree.sst_marks()
    assert math.isfinite(marks.threshold)


def _varied_site(seed: int, pages: int) -> list[str]:
    """Pages whose main column holds a varying sequence of blocks of two presentation
    styles: recurring blocks (one word of 20 swapped per page: similar, not equal) and
    page-unique ones, so new style nodes keep offering merge candidates."""
    import random

    rng = random.Random(seed)
    recurring = [[f"r{b}w{i}" for i in range(20)] for b in range(6)]
    out = []
    for p in range(pages):
        blocks = []
        for _ in range(rng.randint(2, 7)):
            b = rng.randrange(len(recurring))
            if rng.random() < 0.6:
                words = list(recurring[b])
                words[rng.randrange(len(words))] = f"x{p}"
            else:
                words = [f"u{p}w{rng.randrange(40)}" for _ in range(rng.randint(3, 20))]
            half = len(words) // 2
            first, second = " ".join(words[:half]), " ".join(words[half:])
            style = ("item", "box")[b % 2]
            blocks.append(f"<div class={style}><p>{first}</p><p>{second}</p></div>")
        out.append(f"<html><body><div class=main>{''.join(blocks)}</div></body></html>")
    return out


def test_prefix_index_merges_exactly_as_a_scan_of_every_sibling(monkeypatch):
    """The prefix index only narrows the candidates: the tree is the one a scan of every
    sibling of the same key builds (the thesis's step 3, §4.3.1), merges included."""
    from wisdom_scrapy.mining import styletree

    pages = _varied_site(7, 60)
    merges = []
    target = StyleTree._merge_target

    def counted(self, *args):
        chosen = target(self, *args)
        merges.append(chosen)
        return chosen

    monkeypatch.setattr(StyleTree, "_merge_target", counted)
    indexed = StyleTree(SST_PARAMS)
    for i, html in enumerate(pages):
        indexed.add_page(_model(html, i), f"u{i}")
    assert sum(c >= 0 for c in merges) >= 5  # the site really merges similar blocks
    assert sum(c < 0 for c in merges) >= 5  # … and keeps page-unique ones apart

    def every_sibling(self, group, mine):
        return self.members(group)

    monkeypatch.setattr(styletree._CharacteristicSets, "candidates", every_sibling)
    scanned = StyleTree(SST_PARAMS)
    for i, html in enumerate(pages):
        scanned.add_page(_model(html, i), f"u{i}")
    a, b = np.load(io.BytesIO(indexed.to_bytes())), np.load(io.BytesIO(scanned.to_bytes()))
    for name in a.files:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    # characteristic sets hold only features with document frequency ≥ γ·m in the element
    codes, df = indexed.cs.codes()
    m = indexed.el_m.view[codes >> 32]
    assert len(codes) and (df >= SST_PARAMS.merge_gamma * m).all()
    # a saved tree keeps its sets and index: it goes on merging as the original does
    copy = StyleTree.from_bytes(indexed.to_bytes())
    extra = _varied_site(8, 5)
    for i, html in enumerate(extra):
        indexed.add_page(_model(html, 100 + i), f"v{i}")
        copy.add_page(_model(html, 100 + i), f"v{i}")
    a, b = np.load(io.BytesIO(indexed.to_bytes())), np.load(io.BytesIO(copy.to_bytes()))
    for name in a.files:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
