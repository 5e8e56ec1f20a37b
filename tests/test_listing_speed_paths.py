"""The list analysis's shortcuts (issue 33, ninth round) against the plain reading they
replace, on every vendored page and on edge cases: the first text owner from one sort of the
text pieces equals the one read off the whole event stream; the template by the counts of
the block nodes alone equals the one by the counts of all nodes; the link masks and the
entries' repeated URL patterns equal a loop over the links."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np

from wisdom_scrapy.mining.listing import _host_page, _link_masks, _repeated_across, _url_pattern
from wisdom_scrapy.mining.repetition import MIN_PAGES, BlockRepetition, block_nodes, repeated_text
from wisdom_scrapy.page.model import PageModel, nearest_marked
from wisdom_scrapy.page.parse import parse_html

FIXTURES = Path(__file__).parent / "fixtures"


def _vendored_models() -> list[PageModel]:
    pages = sorted([*FIXTURES.rglob("*.html"), *FIXTURES.rglob("*.html.gz")])
    assert len(pages) > 50
    out = []
    for page in pages:
        body = gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
        out.append(PageModel.from_tree(parse_html(body, "http://site.test/a/"),
                                       "http://site.test/a/"))  # fmt: skip
    return out


def _first_text_owner_by_events(model: PageModel) -> np.ndarray:
    """The reference: the first piece event after each node's open event, if its owner lies
    inside the node."""
    n = model.n
    node, kind, _ = model.document_events()
    opens = np.flatnonzero(kind == 0)
    open_at = np.zeros(n, dtype=np.int64)
    open_at[node[opens]] = opens
    pieces = np.flatnonzero(kind == 2)
    owner = np.full(n, n, dtype=np.int64)
    if not len(pieces):
        return owner
    k = np.searchsorted(pieces, open_at)
    found = k < len(pieces)
    first = node[pieces[np.minimum(k, len(pieces) - 1)]]
    inside = found & (first >= np.arange(n)) & (first < model.subtree_end)
    owner[inside] = first[inside]
    return owner


EDGE_CASES = [
    "<div><b><em></em>deep tail</b>outer tail<p>x</p></div>",
    "<div><!-- c -->after comment<p></p><p> </p>tail</div>",
    "<ul><li><a href='/x'>x</a> <span>date</span></li><li>only text</li></ul>",
    "<div><script>hidden()</script>shown<style>p{}</style><p><i><b></b></i></p></div>",
    "<p></p>",
    "<div><p>a<b>b</b>c</p>d</div>e",
]


def test_first_text_owner_equals_the_event_stream_reading() -> None:
    models = _vendored_models() + [PageModel.from_html(html, "http://x/") for html in EDGE_CASES]
    for model in models:
        assert np.array_equal(model.first_text_owner(), _first_text_owner_by_events(model))


def test_repeated_text_looks_up_only_blocks_and_answers_as_for_all_nodes() -> None:
    """repeated_text reads the counts of the block nodes alone: the same mask as the counts
    of every node and-ed with the blocks, on the vendored pydoc pages counted as one site."""
    pages = sorted((FIXTURES / "pydoc").glob("*.html"))
    models = [PageModel.from_html(p.read_bytes(), f"http://docs.test/{p.name}") for p in pages]
    rep = BlockRepetition()
    for model in models:
        rep.add(model.url, model)
    some = 0
    for model in models:
        full = rep.pages_of(model)
        blocks = block_nodes(model)
        want = (full >= MIN_PAGES) & (full > math.sqrt(rep.n_pages)) & blocks
        got = repeated_text(model, rep)
        assert np.array_equal(got, want)
        assert np.array_equal(rep.pages_of(model, np.flatnonzero(blocks)), full[blocks])
        some += int(got.sum())
    assert some > 0


def _link_masks_by_loop(model: PageModel) -> tuple[np.ndarray, np.ndarray]:
    me = _host_page(model.url)
    site, elsewhere = np.zeros(model.n, dtype=bool), np.zeros(model.n, dtype=bool)
    for link in model.links():
        there = _host_page(link.url)
        elsewhere[link.node] |= there != me
        site[link.node] |= there != me and there[0] == me[0]
    return site, elsewhere


def _repeated_across_by_loop(model: PageModel, entries: np.ndarray, titles: np.ndarray,
                             candidates: np.ndarray) -> np.ndarray:
    entry_of = nearest_marked(entries, model.parent)
    seen: dict[str, set[int]] = {}
    title_patterns: set[str] = set()
    pattern_of: dict[int, str] = {}
    for link in model.links():
        entry = int(entry_of[link.node])
        if entries[entry]:
            pattern = pattern_of[link.node] = _url_pattern(link.url)
            seen.setdefault(pattern, set()).add(entry)
            if titles[link.node]:
                title_patterns.add(pattern)
    out = np.zeros(model.n, dtype=bool)
    for node in np.flatnonzero(candidates).tolist():
        found = pattern_of.get(node)
        out[node] = found is not None and len(seen[found]) >= 2 and found not in title_patterns
    return out


def test_link_masks_and_repeated_patterns_equal_a_loop_over_the_links() -> None:
    """The mapped link masks and the entries' repeated URL patterns answer as a plain loop
    over the links, on every vendored page with its blocks, list items or anchors as entries
    (pages of one host: site links, other hosts' links and self links all occur)."""
    for model in _vendored_models():
        site, elsewhere = _link_masks(model)
        assert (site.tolist(), elsewhere.tolist()) == tuple(
            mask.tolist() for mask in _link_masks_by_loop(model))
        anchors = model.is_anchor
        for entries in (model.tag_mask(("li",)), model.tag_mask(("p", "div", "td")), anchors):
            entries = entries.copy()
            entries[0] = False
            titles = anchors & (np.arange(model.n) % 3 == 0)
            got = _repeated_across(model, entries, titles, anchors)
            assert np.array_equal(got, _repeated_across_by_loop(model, entries, titles, anchors))
