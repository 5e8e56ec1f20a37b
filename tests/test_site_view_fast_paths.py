"""The site view's and k-MIB's shortcuts (issue 33, ninth round) against the plain reading
they replace, on every vendored page and on edge cases: the first text owner from one sort of the
text pieces equals the one read off the whole event stream; the template by the counts of
the block nodes alone equals the one by the counts of all nodes; the link masks and the
entries' repeated URL patterns equal a loop over the links; WISDOM's features computed when
first read equal those of one eager aggregation."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np

from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.mining.listing import _host_page, _link_masks, _repeated_across, _url_pattern
from wisdom_scrapy.mining.repetition import MIN_PAGES, BlockRepetition, block_nodes, repeated_text
from wisdom_scrapy.mining.wisdom import _range_mask, ict_aggregate, node_features, term_weights
from wisdom_scrapy.page.model import PageModel, nearest_marked
from wisdom_scrapy.page.parse import parse_html
from wisdom_scrapy.store import open_store

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


def _repeated_across_by_loop(
    model: PageModel, entries: np.ndarray, titles: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
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
    """The mapped link masks (and page numbers) and the entries' repeated URL patterns answer
    as a plain loop over the links, on every vendored page with its blocks, list items or
    anchors as entries (pages of one host: site links, other hosts' links and self links all
    occur)."""
    for model in _vendored_models():
        site, elsewhere, page = _link_masks(model)
        assert (site.tolist(), elsewhere.tolist()) == tuple(
            mask.tolist() for mask in _link_masks_by_loop(model)
        )
        linked = {link.node: _host_page(link.url) for link in model.links()}
        numbers = page[list(linked)].tolist()  # one number per page linked, none elsewhere
        assert len(set(numbers)) == len(set(linked.values())) == len(
            set(zip(numbers, linked.values(), strict=True)))
        assert (page >= 0).sum() == len(linked)
        anchors = model.is_anchor
        for entries in (model.tag_mask(("li",)), model.tag_mask(("p", "div", "td")), anchors):
            entries = entries.copy()
            entries[0] = False
            titles = anchors & (np.arange(model.n) % 3 == 0)
            got = _repeated_across(model, entries, titles, anchors)
            assert np.array_equal(got, _repeated_across_by_loop(model, entries, titles, anchors))


def _eager_features(model: PageModel, en: np.ndarray, known_api: tuple) -> dict[str, object]:
    """node_features as it was before its fields turned lazy: every column of the
    information coverage tree in one aggregation."""
    api, known = known_api
    end, ts, n = model.subtree_end, model.term_start, model.n
    own_terms = np.diff(ts).astype(np.float64)
    links = model.link_nodes
    in_link = _range_mask(links, end[links], n)
    e = en[model.term_ids]
    csum = np.zeros((len(e) + 1, 2), dtype=np.float64)
    np.cumsum(np.stack([e, e * e], axis=1), axis=0, out=csum[1:])
    own_en = csum[ts[1:]] - csum[ts[:-1]]
    link_cnt = own_terms * in_link
    n_link = float(link_cnt.sum())
    sd = 0.0
    if n_link > 1:
        mean = float(own_en[in_link, 0].sum()) / n_link
        sd = math.sqrt(max(float(own_en[in_link, 1].sum()) / n_link - mean * mean, 0.0))
    own = np.stack([api, known, own_en[:, 0] * in_link, link_cnt, own_terms * ~model.in_anchor],
                   axis=1)  # fmt: skip
    agg = ict_aggregate(own, end)
    return {"cii": model.subtree_term_mean(term_weights(en)), "api_a": agg[:, 0],
            "known_a": agg[:, 1], "link_entropy_sum": agg[:, 2], "link_terms": agg[:, 3],
            "context_terms": agg[:, 4], "link_entropy_sd": sd}  # fmt: skip


def test_lazy_node_features_equal_the_eager_ones() -> None:
    """Each lazily computed feature (CII, API_A, the link-entropy sums and deviation, the
    context terms) has the very bits of the one aggregation of all columns, on the vendored
    pydoc pages with their site's entropies and one another as fetched targets; read in
    either order (an article search first, or a TOC search first)."""
    pages = sorted((FIXTURES / "pydoc").glob("*.html"))
    models = {f"http://docs.test/{p.name}": PageModel.from_html(p.read_bytes(),
                                                               f"http://docs.test/{p.name}")
              for p in pages}  # fmt: skip
    store = open_store("memory://")
    for model in models.values():
        feed_model(store, model, site="docs.test")
    snapshot = store.snapshot("docs.test")
    terms = {url: frozenset(model.vocab) for url, model in models.items()}
    scored = 0
    for model in models.values():
        en = snapshot.entropy(model.vocab)
        want = None
        for names in (list(LAZY), list(LAZY)[::-1]):
            f = node_features(model, en, n_pages=len(models), target_terms=terms.get)
            want = want or _eager_features(model, f.entropy, (f.api, f.api_known))
            for name in names:
                assert np.array_equal(getattr(f, name), want[name]), name
        scored += int(f.known_a[0])
    assert scored > 0


LAZY = (
    "cii",
    "api_a",
    "known_a",
    "link_entropy_sum",
    "link_terms",
    "context_terms",
    "link_entropy_sd",
)
