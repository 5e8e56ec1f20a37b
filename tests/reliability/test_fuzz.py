"""Property-based fuzzing of the page model and every mining stage (hypothesis).

Pages are generated tag soup (unbalanced tags, hostile attributes and hrefs, control characters,
entities, random encodings) and real Python documentation pages mutated at the byte level
(truncated, cut, duplicated, spliced with random bytes). For each page: the model's invariants
hold, and every stage runs without an exception escaping and returns the documented shape.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability._shape import check_shape
from wisdom_scrapy.analysis.cleaners import CLEANERS, site_cleaner
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.waits import items_from_analysis
from wisdom_scrapy.mining import density, infodiscoverer, lamis, sitemap, wisdom
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.terms import extract_terms
from wisdom_scrapy.segment import h2s
from wisdom_scrapy.segment.partition import partition
from wisdom_scrapy.segment.seg import SegParams
from wisdom_scrapy.store import EntropySnapshot

URL = "http://fuzz.example/dir/page.html"
TAGS = ["html", "head", "title", "body", "div", "p", "span", "a", "ul", "li", "table", "tr",
        "td", "th", "h1", "script", "style", "noscript", "iframe", "template", "br", "hr", "pre",
        "frameset", "frame", "svg", "math", "form", "select", "option", "base", "meta", "img"]
HREFS = ["/", "a.html", "../../../../x", "javascript:alert(1)", "http://[::1", "http://h:99999/",
         "mailto:x@y", "  spaced.html  ", "#frag", "?q=1", "//other.example/p", "data:,x",
         "http://例え.テスト/パス", "\x00nul", "%zz", "http://a.example/" + "x" * 3000]
CHARSETS = ["utf-8", "latin-1", "cp1252", "utf-16", "shift_jis", "gb18030", "koi8-r"]

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
attribute = st.tuples(st.sampled_from(["href", "class", "id", "onclick", "style", "src",
                                       "charset", "xmlns"]),
                      st.one_of(st.sampled_from(HREFS), text))
token = st.one_of(
    st.builds(lambda t, a: f"<{t} {' '.join(f'{k}={v!r}' for k, v in a)}>",
              st.sampled_from(TAGS), st.lists(attribute, max_size=3)),
    st.builds(lambda t: f"</{t}>", st.sampled_from(TAGS)),
    text,
    st.sampled_from(["&amp;", "&#0;", "&#xD800;", "&#x110000;", "&nbsp", "<!--", "-->",
                     "<![CDATA[x]]>", "<!DOCTYPE html>", "<?xml version='1.0'?>", "\x00",
                     "\r", "\ufeff", "<", ">", "</", "<a href=", "\u2028"]),
)
soup = st.lists(token, max_size=120).map("".join)


@st.composite
def encoded_soup(draw: st.DrawFn) -> bytes | str:
    html = draw(soup)
    if draw(st.booleans()):
        return html
    return html.encode(draw(st.sampled_from(CHARSETS)), errors="replace")


SNIPPETS = [b"<div>" * 300, b"</div>" * 50, b"<table>", b"<a href='javascript:x'>",
            b"</body></html>", b"<html><body>", b"<!--", b"\xff\xfe", b"\xed\xa0\x80"]
mutation = st.tuples(st.sampled_from(["truncate", "cut", "duplicate", "insert", "snippet"]),
                     st.integers(0, 2**31), st.integers(1, 20000),
                     st.binary(min_size=1, max_size=64),
                     st.sampled_from(SNIPPETS))


def mutate(page: bytes, mutations: list[tuple[str, int, int, bytes, bytes]]) -> bytes:
    """Apply byte-level mutations (positions taken modulo the current length)."""
    out = bytearray(page)
    for op, position, size, noise, snippet in mutations:
        at = position % (len(out) + 1)
        if op == "truncate":
            del out[at:]
        elif op == "cut":
            del out[at : at + size]
        elif op == "duplicate":
            out[at:at] = out[at : at + size]
        else:
            out[at:at] = noise if op == "insert" else snippet
    return bytes(out)


def check_model(model: PageModel) -> None:
    """The page model's documented invariants (page/model.py's module docstring)."""
    n = model.n
    idx = np.arange(n)
    assert model.parent.shape == model.depth.shape == model.subtree_end.shape == (n,)
    if n == 0:
        assert model.links() == [] and model.page_counts() == {}
        return
    assert model.parent[0] == -1 and (model.parent[1:] < idx[1:]).all()
    assert (model.parent[1:] >= 0).all()
    assert (model.subtree_end > idx).all() and (model.subtree_end <= n).all()
    assert (model.depth[1:] == model.depth[model.parent[1:]] + 1).all()
    assert (model.tlen == model.alen + model.clen).all() and (model.clen >= 0).all()
    assert model.tlen[0] == len("".join(model.text_of(0).split()))
    assert sum(model.page_counts().values()) == model.term_ids.size
    for link in model.links():
        assert link.url.startswith(("http://", "https://")) and "#" not in link.url
        assert model.is_anchor[link.node]
    assert isinstance(model.html_of(0), str) and isinstance(model.title, str)


def run_stages(model: PageModel, seed: int) -> None:
    """Every mining stage on one page, cold and warm, with entropies drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    entropy = rng.random(len(model.vocab))
    snapshot = EntropySnapshot("fuzz", 200, dict(zip(model.vocab, entropy.tolist(), strict=True)))
    urls = {link.url for link in model.links()}
    for snap in (None, snapshot):
        result = analyze_page(None, model.url, None, model=model, snapshot=snap,
                              target_terms=lambda u: model.vocab if u in urls else None)
        assert result.role in ("article", "toc", "other")
        assert isinstance(result.article_text, str) and isinstance(result.article_html, str)
        check_shape(items_from_analysis(result, model.url, model, snap))
    density.single_page_article(model)
    blocks = infodiscoverer.content_blocks(model)
    assert ((blocks >= 0) & (blocks < max(model.n, 1))).all()
    infodiscoverer.block_entropy(model, entropy)
    infodiscoverer.informative_blocks(model, entropy, 0.5)
    infodiscoverer.choose_threshold([(model, entropy)])
    features = wisdom.node_features(model, entropy, n_pages=200,
                                    target_terms=lambda u: model.vocab if u in urls else None)
    for kind in ("article", "toc"):
        wisdom.mine(features, kind)
    graph = lamis.LinkGraph.build({model.url: [(lk.url, lk.text) for lk in model.links()],
                                   **{u: [(model.url, "back")] for u in urls}},
                                  snapshot, extract_terms)
    for scores in (lamis.hits(graph.weights), lamis.salsa(graph.weights)):
        assert np.isfinite(scores.hub).all() and np.isfinite(scores.authority).all()
    run_smg(model, snapshot)
    run_cleaners(model, entropy)


def run_cleaners(model: PageModel, entropy: np.ndarray) -> None:
    """Every site cleaner (site style tree, compressed structure tree, template pagelets,
    InfoDiscoverer): learn the page beside a plain page of its site, clean it, save and load."""
    plain = PageModel.from_html("<div class='nav'><a href='/'>home</a></div><p>plain text</p>",
                                "http://fuzz.example/plain.html")
    for name in CLEANERS:
        if name == "wisdom":
            continue
        cleaner = site_cleaner(name, sample_pages=2)
        for page in (plain, model, plain):
            cleaner.observe(page.url, page)
        cleaned = cleaner.clean(model.url, model, entropy)
        assert cleaned is not None
        site_cleaner(name, sample_pages=2).load(cleaner.to_bytes())


def run_smg(model: PageModel, snapshot: EntropySnapshot) -> None:
    """SMG: H2S translation, SEG partitioning, block records and a sitemap of the page, alone
    and beside a well-formed page of the same site."""
    seq = h2s.translate(model)
    assert len(seq.symbols) == len(seq.length)
    blocks = partition(model, seq, SegParams())
    assert all(0 <= b.start <= b.end <= len(seq) for b in blocks)
    record = sitemap.page_blocks(model, SegParams(), same_site=lambda u: True, seq=seq)
    home = PageModel.from_html(f"<ul><li><a href='{model.url}'>the fuzzed page</a></li></ul>",
                               "http://fuzz.example/")
    records = {model.url: record,
               home.url: sitemap.page_blocks(home, SegParams(), same_site=lambda u: True)}
    result = sitemap.build_sitemap(records, snapshot)
    assert result.pages >= 0 and isinstance(result.tree, list)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(html=encoded_soup(), seed=st.integers(0, 2**32 - 1))
def test_generated_pages(html: bytes | str, seed: int) -> None:
    model = PageModel.from_html(html, URL)
    check_model(model)
    run_stages(model, seed)


class _Pages(list[bytes]):
    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return f"<{len(self)} Python documentation pages>"


@pytest.fixture(scope="module")
def real_pages(python_doc_pages: list[tuple[str, bytes]]) -> list[bytes]:
    # the smaller half: mutations duplicate slices, and examples must stay quick
    return _Pages(sorted((body for _, body in python_doc_pages), key=len)[:30])


@settings(FUZZ, max_examples=60, suppress_health_check=list(HealthCheck))
@given(which=st.integers(0, 29), mutations=st.lists(mutation, min_size=1, max_size=4),
       seed=st.integers(0, 2**32 - 1))
def test_mutated_real_pages(real_pages: list[bytes], which: int,
                            mutations: list[tuple[str, int, int, bytes, bytes]], seed: int) -> None:
    model = PageModel.from_html(mutate(real_pages[which], mutations), URL)
    check_model(model)
    run_stages(model, seed)
