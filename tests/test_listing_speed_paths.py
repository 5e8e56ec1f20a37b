"""The list analysis's shortcuts (issue 33, ninth round) against the plain reading they
replace, on every vendored page and on edge cases: the first text owner from one sort of the
text pieces equals the one read off the whole event stream; the template by the counts of
the block nodes alone equals the one by the counts of all nodes."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np

from wisdom_scrapy.mining.repetition import MIN_PAGES, BlockRepetition, block_nodes, repeated_text
from wisdom_scrapy.page.model import PageModel
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
