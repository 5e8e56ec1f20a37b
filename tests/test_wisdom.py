"""Tests of WISDOM (wisdom_scrapy.mining.wisdom) against the paper's examples and real sites.

* §3.2.1 Fig. 7: the information coverage tree's bottom-up aggregation (6 = 3 + (3 + 0),
  8 = 1 + (1 + 6)), and the ICT constraint f_A(N) ≥ Σ f_A(children) on generated trees.
* §3.1.3 SII on hand examples (uniform and skewed children, the ≤ 1 child convention, dummy
  children, a node's own text), §3.1.2 API with the entropy floor, §4.2 defaults.
* A hand-built news site (40 pages sharing a menu, a footer and an advertisement, with articles
  of real prose from Python's own help texts, bylines, and TOC pages listing the articles) fed
  through ``feed_page`` into a ``memory://`` store: k-MIB finds the article body on article pages
  and the story list on TOC pages and never the menu; DSTM merges the byline; condensing removes
  the site-wide ad inside the article; without fetched link targets TOC blocks are mined by ALEN.
* Real pages of the Python documentation (/usr/share/doc/python3.11/html, Debian package
  python3.11-doc) with a store of 60 pages of that site: the article block covers the page's main
  text (token-shingle F1 ≥ 0.9 against ``div[role=main]``, which the miner never looks at).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wisdom_scrapy.analysis.evaluation import shingle_prf
from wisdom_scrapy.engine.writes import feed_page
from wisdom_scrapy.mining.wisdom import (
    WisdomParams,
    anchor_precision,
    condense,
    entropy_floor,
    ict_aggregate,
    k_mib,
    link_targets,
    merge_siblings,
    mine,
    node_features,
    parse_merge,
    structure_information_index,
    term_weights,
    toc_feature,
    type_constraint,
)
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store import EntropySnapshot, open_store

PYDOC_ROOT = Path("/usr/share/doc/python3.11/html")
SITE = "news.test"
BASE = "http://news.test/"


def node_by_id(model: PageModel, ident: str) -> int:
    """The node whose element has ``id=ident``."""
    for i in range(model.n):
        if model.element(i).get("id") == ident:
            return i
    raise LookupError(ident)


def inside(model: PageModel, node: int, ancestor: int) -> bool:
    return ancestor <= node < model.subtree_end[ancestor]


# ------------------------------------------------------------------------------------------
# §3.2.1 information coverage tree
# ------------------------------------------------------------------------------------------

# Fig. 7: node ** (own value 1) has a child (own 1) and the child * (own 3), whose children have
# own values 3 and 0. Own text lengths play the values: "a" = 1, "bbb" = 3.
FIG7 = (
    '<html><body><div id="top">a<p id="leaf1">a</p>'
    '<div id="star">bbb<p id="leaf3">bbb</p><p id="leaf0"></p></div></div></body></html>'
)


def test_fig7_aggregation() -> None:
    model = PageModel.from_html(FIG7, "http://x.test/")
    own = model.own_len
    agg = ict_aggregate(own, model.subtree_end)
    star, top = node_by_id(model, "star"), node_by_id(model, "top")
    assert own[star] == 3 and own[top] == 1
    assert agg[node_by_id(model, "leaf3")] == 3 and agg[node_by_id(model, "leaf0")] == 0
    assert agg[star] == 6 == 3 + (3 + 0)
    assert agg[top] == 8 == 1 + (1 + 6)
    np.testing.assert_array_equal(agg, model.tlen)  # TLEN_A is the ICT of own text lengths


@st.composite
def html_trees(draw: st.DrawFn) -> str:
    """Random nested markup with random text (an iterative builder: no recursion)."""
    parts: list[str] = ["<html><body>"]
    depth = 0
    for _ in range(draw(st.integers(1, 60))):
        action = draw(st.sampled_from(["open", "close", "text", "br"]))
        if action == "open" and depth < 30:
            parts.append(f"<{draw(st.sampled_from(['div', 'p', 'span', 'ul', 'li', 'a']))}>")
            depth += 1
        elif action == "close" and depth:
            parts.append("</div>" if draw(st.booleans()) else "</span>")
            depth -= 1
        elif action == "br":
            parts.append("<br>")
        else:
            parts.append(draw(st.text("ab c\n", max_size=8)))
    return "".join(parts) + "</body></html>"


@settings(max_examples=60, deadline=None)
@given(html_trees(), st.lists(st.floats(0, 100), min_size=1, max_size=1))
def test_ict_constraint(html: str, scale: list[float]) -> None:
    """f_A(N) ≥ Σ f_A(children) for any non-negative own values (§3.2.1), and = when own is 0."""
    model = PageModel.from_html(html, "http://x.test/")
    rng = np.random.default_rng(len(html))
    own = rng.random(model.n) * scale[0]
    agg = ict_aggregate(own, model.subtree_end)
    for i in range(model.n):
        kids = model.children(i)
        assert agg[i] >= agg[kids].sum() - 1e-9
        assert math.isclose(agg[i], own[i] + agg[kids].sum(), rel_tol=1e-9, abs_tol=1e-9)


# ------------------------------------------------------------------------------------------
# §3.1.3 SII, §3.1.2 API, parameters
# ------------------------------------------------------------------------------------------


def test_sii_hand_examples() -> None:
    html = (
        "<html><body>"
        '<div id="even"><p>aaaaaaaaaa</p><p>bbbbbbbbbb</p><p>cccccccccc</p><p>dddddddddd</p></div>'
        '<div id="skew"><p>' + "a" * 30 + "</p><p>" + "b" * 10 + "</p></div>"
        '<div id="one"><p>only child</p></div>'
        '<div id="dummies"><p>xxxxx</p><br><script>var long = "ignored text";</script>'
        "<span></span><p>yyyyy</p></div>"
        '<div id="own">' + "o" * 20 + "<b>" + "b" * 20 + "</b></div>"
        "</body></html>"
    )
    model = PageModel.from_html(html, "http://x.test/")
    sii = structure_information_index(model, model.clen)
    assert sii[node_by_id(model, "even")] == pytest.approx(1.0)
    # w = (0.75, 0.25): −(0.75 log2 0.75 + 0.25 log2 0.25) = 0.8113
    assert sii[node_by_id(model, "skew")] == pytest.approx(0.811278, abs=1e-6)
    one = node_by_id(model, "one")
    assert sii[one] == 0.0  # one child holds everything: the entropy of a point mass
    assert sii[model.children(one)[0]] == 0.0  # a leaf
    # <br>, <script> and the empty <span> are dummy children: two equal <p> remain
    assert sii[node_by_id(model, "dummies")] == pytest.approx(1.0)
    # the text directly in a node is one more child (the DOM's text node): 20 vs 20
    assert sii[node_by_id(model, "own")] == pytest.approx(1.0)


def test_defaults_and_derived_parameters() -> None:
    p = WisdomParams()
    assert (p.k, p.st, p.tc_article, p.merge) == (1, 0.8, 0.8, "dstm,1-cstm")
    assert p.toc_threshold == pytest.approx(1.25)  # §4.2: one matched term of entropy 0.8
    assert p.warm_pages == 32  # 2^(1/(1 − 0.8))
    assert WisdomParams(tc_toc=2.2).toc_threshold == 2.2
    assert WisdomParams(min_pages=5).warm_pages == 5
    assert parse_merge("dstm,1-cstm") == (True, (1,))
    assert parse_merge("2-cstm, dstm,1-cstm") == (True, (1, 2))
    assert parse_merge("none") == (False, ())
    with pytest.raises(ValueError, match="unknown merging method"):
        WisdomParams(merge="dstm,cstm")
    with pytest.raises(ValueError, match="ST"):
        WisdomParams(st=1.5)
    # the floor of EN in API: a term evenly in 2 of N pages, so 1/EN ≤ log2 N
    assert entropy_floor(1024) == pytest.approx(0.1)
    assert entropy_floor(2) == 1.0
    np.testing.assert_allclose(term_weights([0.0, 0.25, 1.0, 1.2]), [1.0, 0.75, 0.0, 0.0])


def test_api_hand_example() -> None:
    html = (
        '<html><body><a href="/json.html">JSON encoder and decoder</a>'
        '<a href="/cold.html">JSON</a> <a href="#top">JSON</a>'
        '<a href="/other.html">unrelated words</a></body></html>'
    )
    model = PageModel.from_html(html, "http://x.test/index.html")
    vocab = model.vocab
    entropy = np.array([{"json": 0.5, "encod": 0.8, "decod": 0.01}.get(t, 0.9) for t in vocab])
    targets = {
        "http://x.test/json.html": {"json", "decod", "other"},
        "http://x.test/other.html": {"json"},
    }
    api, known = anchor_precision(model, entropy, targets.get, n_pages=1024)
    nodes, urls = link_targets(model)
    assert urls == [
        "http://x.test/json.html",
        "http://x.test/cold.html",
        "http://x.test/other.html",
    ]
    a_json, a_cold, a_other = nodes.tolist()
    # "json" matches: 1/0.5; "decod" matches but EN 0.01 is floored at log_1024 2 = 0.1
    assert api[a_json] == pytest.approx(2.0 + 10.0)
    assert known[a_json] and known[a_other] and not known[a_cold]
    assert api[a_other] == 0.0 and api[a_cold] == 0.0
    fragment = int(model.anchor_nodes[2])
    assert not known[fragment]  # "#top" is in-page navigation, not a link


# ------------------------------------------------------------------------------------------
# a hand-built news site
# ------------------------------------------------------------------------------------------

AUTHORS = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov"]
MENU = (
    '<ul id="menu"><li><a href="/index.html">Home</a></li><li><a href="/world.html">World</a></li>'
    '<li><a href="/politics.html">Politics</a></li><li><a href="/sport.html">Sport</a></li>'
    '<li><a href="/weather.html">Weather</a></li><li><a href="/contact.html">Contact us</a></li>'
    "</ul>"
)
FOOTER = '<div id="footer"><p>Copyright The Daily Example. All rights reserved.</p></div>'
AD = '<div class="ad" id="ad">Advertisement: buy the SuperWidget today at MegaStore</div>'


def _paragraphs() -> list[str]:
    """Real English prose: the help texts that ship with Python, split into paragraphs."""
    out = []
    for key in sorted(topics):
        for para in topics[key].split("\n\n"):
            text = " ".join(para.split())
            if 200 <= len(text) <= 700 and text[0].isalpha() and "*" not in text:
                out.append(text)
    return out


def _page(title: str, main: str) -> str:
    return (
        f"<html><head><title>{title} - The Daily Example</title></head><body>"
        f'<div id="header"><p>The Daily Example</p>{MENU}</div>'
        f'<div id="content">{main}</div>{FOOTER}</body></html>'
    )


def build_site(n_articles: int = 36, n_tocs: int = 4) -> dict[str, tuple[str, str]]:
    """url → (kind, html): article pages with a byline, the site-wide ad inside the body and
    prose paragraphs; TOC pages listing articles by title (the anchor text is the title)."""
    rng = random.Random(7)
    paras = _paragraphs()
    rng.shuffle(paras)
    pages: dict[str, tuple[str, str]] = {}
    titles = []
    for i in range(n_articles):
        body = paras[5 * i : 5 * i + 5]
        title = " ".join(body[0].split()[:6]).rstrip(".,:;")
        titles.append((f"{BASE}story-{i}.html", title))
        byline = f"By {AUTHORS[i % len(AUTHORS)]}, {1 + i % 28} March 2024"
        main = (
            f'<div id="story"><h1 id="headline">{title}</h1>'
            f'<p id="byline">{byline}</p><div id="body">'
            f"<p>{body[0]}</p><p>{body[1]}</p>{AD}<p>{body[2]}</p><p>{body[3]}</p>"
            f"<p>{body[4]}</p></div></div>"
        )
        if i % 4 == 0 and i:  # a sidebar with the previous stories: a TOC list on the page
            items = "".join(f'<li><a href="{u}">{t}</a></li>' for u, t in titles[i - 4 : i])
            main += f'<div id="sidebar"><h3>Earlier stories</h3><ul id="latest">{items}</ul></div>'
        pages[f"{BASE}story-{i}.html"] = ("article", _page(title, main))
    per = math.ceil(n_articles / n_tocs)
    for t in range(n_tocs):
        items = "".join(
            f'<li><a href="{url}">{title}</a></li>'
            for url, title in titles[t * per : (t + 1) * per]
        )
        main = f'<h2 id="section">Latest stories, page {t + 1}</h2><ul id="stories">{items}</ul>'
        pages[f"{BASE}toc-{t}.html"] = ("toc", _page(f"Latest stories {t + 1}", main))
    return pages


@pytest.fixture(scope="module")
def news_site() -> tuple[dict[str, tuple[str, str]], EntropySnapshot, dict[str, frozenset[str]]]:
    pages = build_site()
    with open_store("memory://") as store:
        for url, (_, html) in pages.items():
            assert feed_page(store, html, url, site=SITE)
        snapshot = store.snapshot(SITE)
    terms = {
        url: frozenset(PageModel.from_html(html, url).vocab) for url, (_, html) in pages.items()
    }
    assert snapshot.n_pages == len(pages) >= WisdomParams().warm_pages
    return pages, snapshot, terms


def features_of(
    site: tuple[dict[str, tuple[str, str]], EntropySnapshot, dict[str, frozenset[str]]],
    url: str,
    *,
    with_targets: bool = True,
):
    pages, snapshot, terms = site
    model = PageModel.from_html(pages[url][1], url)
    target_terms: Callable[[str], frozenset[str] | None] | None = (
        terms.get if with_targets else None
    )
    return model, node_features(
        model, snapshot.entropy(model.vocab), n_pages=snapshot.n_pages, target_terms=target_terms
    )


def test_kmib_finds_article_not_menu(news_site) -> None:
    model, f = features_of(news_site, f"{BASE}story-3.html")
    passes = type_constraint(f, "article")
    assert not passes[node_by_id(model, "menu")] and not passes[node_by_id(model, "footer")]
    search = k_mib(model, f.feature("clen"), f.sii("clen"), passes)
    assert len(search.skeleton) == 1
    skeleton = search.skeleton[0]
    body = node_by_id(model, "body")
    assert inside(model, skeleton, body) or skeleton == node_by_id(model, "story")
    assert not inside(model, skeleton, node_by_id(model, "header"))


def test_kmib_finds_toc_list_not_menu(news_site) -> None:
    model, f = features_of(news_site, f"{BASE}toc-1.html")
    mode, ratio = toc_feature(f)
    assert mode == "api" and ratio < 0.5  # every story link's target was fetched
    passes = type_constraint(f, "toc", mode="api")
    stories, menu = node_by_id(model, "stories"), node_by_id(model, "menu")
    assert passes[stories] and not passes[menu]
    search = k_mib(model, f.feature("api"), f.sii("api"), passes)
    assert search.skeleton == [stories]


def test_one_page_with_menu_article_and_toc(news_site) -> None:
    """A page with all three: the article miner finds the article, the TOC miner the list of
    earlier stories, neither the menu."""
    model, f = features_of(news_site, f"{BASE}story-12.html")
    article = mine(f, "article")
    body = node_by_id(model, "body")
    skeleton = [b.node for b in article.blocks if b.origin == "skeleton"]
    assert len(skeleton) == 1 and inside(model, skeleton[0], body)
    latest, menu = node_by_id(model, "latest"), node_by_id(model, "menu")
    # the menu's targets are not pages of this site, so most meaningful anchors have no API
    # here and the ALEN criterion is chosen; forced to API the list is found as well
    assert toc_feature(f)[0] == "alen"
    assert mine(f, "toc", feature="api").skeleton == [latest]
    toc = mine(f, "toc")
    assert toc.skeleton == [latest]
    art_cover, toc_cover = article.covered(model), toc.covered(model)
    assert not art_cover[menu] and not toc_cover[menu]
    assert not art_cover[latest]  # a link list is a dummy for the article (no context)
    links = [i for i in model.anchor_nodes.tolist() if inside(model, i, latest)]
    assert len(links) == 4 and toc_cover[links].all()


def test_dstm_merges_byline_and_condensing_removes_ad(news_site) -> None:
    model, f = features_of(news_site, f"{BASE}story-5.html")
    structure = mine(f, "article")
    byline, headline, ad = (node_by_id(model, x) for x in ("byline", "headline", "ad"))
    by_node = {b.node: b for b in structure.blocks}
    assert by_node[byline].origin == "dstm" and by_node[headline].origin == "dstm"
    body = node_by_id(model, "body")
    skeleton = [b.node for b in structure.blocks if b.origin == "skeleton"]
    assert len(skeleton) == 1 and inside(model, skeleton[0], body)
    covered = structure.covered(model)
    assert covered[byline] and covered[headline]
    assert structure.removed[ad] and not covered[ad]
    assert not covered[node_by_id(model, "menu")] and not covered[node_by_id(model, "footer")]


def test_merge_and_condense_directly(news_site) -> None:
    """The building blocks on their own: DSTM only vs. DSTM + 1-CSTM, condensing with and
    without the type constraint failing for the ad."""
    model, f = features_of(news_site, f"{BASE}story-8.html")
    passes = type_constraint(f, "article")
    f_a = f.feature("clen")
    body = node_by_id(model, "body")
    byline = node_by_id(model, "byline")
    only_dstm = merge_siblings(model, [body], f_a, passes, "article", dstm=True, cstm=())
    assert {b.node for b in only_dstm} >= {body, byline}
    assert all(b.origin in ("skeleton", "dstm") for b in only_dstm)
    ad = node_by_id(model, "ad")
    assert condense(model, [body], passes)[ad]
    assert not condense(model, [body], np.ones(model.n, dtype=bool))[ad]


def test_siblings_without_terms_are_no_evidence_for_merging() -> None:
    """Line numbers beside a listing and the symbol spans of highlighted code hold no term:
    they neither stop the block's expansion nor get dropped from it (defect: a post shrank
    to its code listing, and ``initialize(info = {})`` lost its symbols)."""
    code = "\n".join(f"total{i} = sum(rows{i}, limit{i})" for i in range(8))
    html = (
        '<html><body><div id="post"><p id="before">Prose before explains the listing.</p>'
        '<figure><table><tr><td id="gutter"><pre>1\n2\n3\n4\n5\n6\n7\n8</pre></td>'
        f'<td><pre id="listing">{code}</pre></td></tr></table></figure>'
        '<p id="after">Prose after it.</p></div><div id="footer">Footer words here</div>'
        '<pre><span id="fn">initialize</span><span id="open">(</span>info '
        '<span id="eq">=</span> <span id="brace">{})</span></pre></body></html>'
    )
    model = PageModel.from_html(html, BASE)
    ts = model.term_start
    passes = ts[model.subtree_end] > ts[:-1]  # what has terms qualifies …
    footer = node_by_id(model, "footer")
    passes[footer] = False  # … except the footer
    f_a = model.clen.astype(np.float64)
    listing = node_by_id(model, "listing")
    blocks = {b.node for b in merge_siblings(model, [listing], f_a, passes, "article",
                                             extend=True)}  # fmt: skip
    assert {node_by_id(model, x) for x in ("gutter", "before", "after")} <= blocks
    assert footer not in blocks
    # a TOC is judged by link text: there a sibling without terms still counts against
    toc = {b.node for b in merge_siblings(model, [listing], f_a, passes, "toc", extend=True)}
    assert node_by_id(model, "gutter") not in toc
    spans = merge_siblings(model, [node_by_id(model, "fn")], f_a, passes, "article", cstm=())
    assert {b.node for b in spans} == {node_by_id(model, x) for x in ("fn", "open", "eq", "brace")}


def test_toc_by_alen_without_targets(news_site) -> None:
    model, f = features_of(news_site, f"{BASE}toc-2.html", with_targets=False)
    mode, ratio = toc_feature(f)
    assert (mode, ratio) == ("alen", 1.0)  # no target fetched: API scores nothing
    structure = mine(f, "toc")
    assert structure.feature == "alen"
    stories = node_by_id(model, "stories")
    assert [b.node for b in structure.blocks if b.origin == "skeleton"] == [stories]
    covered = structure.covered(model)
    assert covered[stories] and not covered[node_by_id(model, "menu")]


# ------------------------------------------------------------------------------------------
# real pages: the Python documentation
# ------------------------------------------------------------------------------------------

PYDOC_PAGES = ["library/json.html", "library/heapq.html", "library/keyword.html",
               "tutorial/controlflow.html", "howto/sorting.html"]  # fmt: skip


@pytest.fixture(scope="module")
def pydoc_site() -> tuple[EntropySnapshot, dict[str, frozenset[str]], str]:
    if not PYDOC_ROOT.is_dir():
        pytest.fail("python3.11-doc is not installed: apt-get install python3.11-doc", False)
    base = "http://127.0.0.1:8000/"
    chosen = sorted(PYDOC_ROOT.glob("library/*.html"))[:50]
    chosen += [PYDOC_ROOT / p for p in PYDOC_PAGES]
    chosen += sorted(PYDOC_ROOT.glob("tutorial/*.html"))[:5]
    files = list(dict.fromkeys(chosen))
    assert len(files) >= 58
    terms = {}
    with open_store("memory://") as store:
        for path in files:
            url = base + path.relative_to(PYDOC_ROOT).as_posix()
            html = path.read_bytes()
            feed_page(store, html, url)
            terms[url] = frozenset(PageModel.from_html(html, url).vocab)
        snapshot = store.snapshot("127.0.0.1:8000")
    return snapshot, terms, base


@pytest.mark.parametrize("rel", PYDOC_PAGES)
def test_pydoc_article_block_covers_main_text(pydoc_site, rel: str) -> None:
    snapshot, terms, base = pydoc_site
    model = PageModel.from_html((PYDOC_ROOT / rel).read_bytes(), base + rel)
    f = node_features(
        model, snapshot.entropy(model.vocab), n_pages=snapshot.n_pages, target_terms=terms.get
    )
    structure = mine(f, "article")
    main = next(i for i in range(model.n) if model.element(i).get("role") == "main")
    covered = structure.covered(model)
    roots = [b.node for b in structure.blocks]
    # the article structure's text, block by block, against the main part's text
    text = "\n\n".join(model.text_of(r, exclude=structure.removed) for r in roots if covered[r])
    score = shingle_prf(text, model.text_of(main))
    assert score.f1 >= 0.9, (rel, score)
    assert not covered[0]  # never the whole page
