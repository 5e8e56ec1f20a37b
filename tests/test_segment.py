"""SMG §4.1–4.2: H2S translation, SEG and the R_SEG page partitioner, on the paper's examples
and on sequences whose answer is known."""

from __future__ import annotations

import math
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest

from wisdom_scrapy.analysis.evaluation import partition_prf
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.segment import SegParams, partition, r_seg, seg_segments, translate
from wisdom_scrapy.segment.seg import (
    PROTEIN_EXPECTED,
    expected_complexity,
    log_probability,
    optimal_subsequence,
)


def _model(body: str) -> PageModel:
    return PageModel.from_html(f"<html><body>{body}</body></html>", "http://example.org/")


def test_fig5_table_translates_to_the_papers_sequence() -> None:
    rows = "<tr><td>a</td><td>b</td></tr>" * 3
    model = _model(f"<table>{rows}</table>")
    seq = translate(model)
    table = model.tag_code("table")
    node = int(np.flatnonzero(model.tag_id == table)[0])
    assert seq.of(node) == "EKNTNNTNKKNTNNTNKKNTNNTNKE"
    # the body tag is not in the table: the page's sequence is the table's
    assert seq.symbols == "EKNTNNTNKKNTNNTNKKNTNNTNKE"


def test_symbols_decided_per_element() -> None:
    model = _model(
        '<div><a href="/x">link</a><a name="top">named</a>'
        '<a href="/y"><img src="i.png" alt="Logo"></a><img src="j.png">'
        "<script>var x = 1;</script><font>styled</font> tail<br><!-- c -->after<hr></div>"
    )
    assert translate(model).symbols == "DATAZTZBGGBMMQTQTWWTRRD"


def test_document_events_are_the_serialisation() -> None:
    model = _model("<div>a<b>x</b>y<!--c-->z<script>q</script>w</div>t")
    nodes, kinds, lengths = model.document_events()
    names = [(str(model.tag[n]), int(k)) for n, k in zip(nodes, kinds, strict=True)]
    assert names == [
        ("html", 0), ("body", 0), ("div", 0), ("div", 2), ("b", 0), ("b", 2), ("b", 1),
        ("div", 2), ("div", 2), ("script", 0), ("script", 1), ("div", 2), ("div", 1),
        ("body", 2), ("body", 1), ("html", 1),
    ]  # fmt: skip
    assert lengths.sum() == model.tlen[0]


def test_subtree_ranges_nest() -> None:
    model = _model("<ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li></ul><p>text</p>")
    seq = translate(model)
    assert seq.symbols == "LIATAIIATAILPTP"
    ul = model.tag_code("ul")
    node = int(np.flatnonzero(model.tag_id == ul)[0])
    assert seq.of(node) == "LIATAIIATAIL"
    assert (seq.start <= seq.end).all()


def test_seg_finds_the_prion_repeat_of_fig6() -> None:
    """Fig. 6 (Wootton & Federhen 1993): PRIO_HUMAN 1-112, residues 50-94 low complexity."""
    prion = (
        "MANLGCWMLVLFVATWSDLGLCKKRPKPGGWNTGGSRYPGQGSPGGNRYPPQGGGGWGQPHGGGWGQPHGGGWGQPHGGGWGQP"
        "HGGGWGQFHSQWNKPSKPKTNMKHM"
    )
    segments = seg_segments(prion)
    low = [(a, b) for a, b, is_low in segments if is_low]
    assert len(low) == 1
    a, b = low[0]
    paper = (49, 94)
    overlap = min(b, paper[1]) - max(a, paper[0])
    assert overlap >= 0.95 * (paper[1] - paper[0])
    assert b - a <= (paper[1] - paper[0]) + 12  # stage 1 only: at most a window wider
    assert segments[0] == (0, a, False) and segments[-1] == (b, len(prion), False)


def test_seg_stage2_trims_to_the_optimal_subsequence() -> None:
    prion = (
        "MANLGCWMLVLFVATWSDLGLCKKRPKPGGWNTGGSRYPGQGSPGGNRYPPQGGGGWGQPHGGGWGQPHGGGWGQPHGGGWGQP"
        "HGGGWGQFHSQWNKPSKPKTNMKHM"
    )
    raw = [(a, b) for a, b, low in seg_segments(prion) if low]
    trimmed = [(a, b) for a, b, low in seg_segments(prion, SegParams(trim=True)) if low]
    paper = (49, 94)  # Fig. 6: residues 50-94
    assert len(raw) == len(trimmed) == 1
    (ra, rb), (ta, tb) = raw[0], trimmed[0]
    assert ra <= ta and tb <= rb and (ta, tb) != (ra, rb)  # stage 2 only takes flanks off
    assert abs(ta - paper[0]) + abs(tb - paper[1]) < abs(ra - paper[0]) + abs(rb - paper[1])
    # a pure repeat between varied flanks: the repeat alone is the least probable part
    codes = np.frombuffer(b"ACDEFGHIK" + b"Q" * 30 + b"LMNPRSTVW", np.uint8)
    assert optimal_subsequence(codes, 20) == (9, 39)


def test_log_probability_matches_the_formula() -> None:
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 5, (20, 6))
    got = log_probability(counts, 9)
    for row, value in zip(counts.tolist(), got.tolist(), strict=True):
        full = [*row, 0, 0, 0]  # three symbols of the alphabet absent
        length = sum(full)
        arrangements = math.factorial(length) / math.prod(math.factorial(c) for c in full)
        states = math.factorial(9) / math.prod(
            math.factorial(r) for r in Counter(full).values()
        )
        assert value == pytest.approx(math.log(states * arrangements / 9**length))


def test_seg_known_answers() -> None:
    params = SegParams(window=12, locut=2.2, hicut=2.5)
    assert seg_segments("IATAI" * 10, params) == [(0, 50, True)]
    varied = "ACDEFGHIKLMNPQRSTVWY" * 3
    assert seg_segments(varied, params) == [(0, 60, False)]
    assert seg_segments("AAA", params) == [(0, 3, False)]  # shorter than a window
    mixed = varied + "Q" * 30 + varied
    kinds = [(b - a, low) for a, b, low in seg_segments(mixed, params)]
    assert kinds[1][1] and kinds[1][0] >= 30 and not kinds[0][1] and not kinds[2][1]


def test_cuts_are_relative_to_the_background() -> None:
    # Robinson & Robinson amino-acid frequencies give back SEG's protein defaults
    aa = [78.05, 51.29, 44.87, 53.64, 19.25, 42.64, 62.95, 73.77, 21.99, 51.42, 90.19, 57.44,
          22.43, 38.56, 52.03, 71.20, 58.41, 13.30, 32.16, 64.41]  # fmt: skip
    assert expected_complexity(np.array(aa)) == pytest.approx(PROTEIN_EXPECTED, abs=0.02)
    protein = SegParams.for_background(np.array(aa))
    assert protein.locut == pytest.approx(2.2, abs=0.02)
    assert protein.hicut == pytest.approx(2.5, abs=0.02)
    # a skewed HTML-like alphabet has lower cuts, in the same proportion
    html = SegParams.for_background({"T": 40, "A": 20, "I": 10, "P": 10, "Q": 10, "D": 10})
    assert html.locut < protein.locut and html.locut / html.hicut == pytest.approx(2.2 / 2.5)
    assert expected_complexity({"T": 5}) == 0.0


def test_r_seg_eq1() -> None:
    assert r_seg(30, 100) == pytest.approx(0.4)
    assert r_seg(50, 100) == 0.0
    assert r_seg(100, 100) == 1.0
    assert r_seg(0, 0) == 0.0


def _page() -> PageModel:
    menu = "".join(f"<li><a href='/c{i}.html'>Category {i}</a></li>" for i in range(12))
    para = (
        "<p>Some <b>long</b> prose with <i>styled</i> words, a <a href='/x'>link</a>, "
        "<code>code</code> and <em>emphasis</em>; then <span>more</span> text.</p><h2>Head</h2>"
    )
    foot = "".join(f"<a href='/f{i}'>F{i}</a> | " for i in range(8))
    return _model(
        f"<div id='page'><div id='nav'><ul>{menu}</ul></div>"
        f"<div id='main'>{para * 6}</div><div id='footer'>{foot}</div></div>"
    )


def test_partition_splits_menu_content_and_footer() -> None:
    model = _page()
    seq = translate(model)
    blocks = partition(model, seq, SegParams(window=12, locut=1.5, hicut=1.75))
    paths = [model.path(b.node) for b in blocks]
    assert paths == ["html/body/div/div", "html/body/div/div[2]", "html/body/div/div[3]"]
    nav, main, footer = blocks
    assert nav.low_dominant and footer.rseg == 1.0 and main.rseg >= 0.2
    # the blocks are the three subtrees, between the wrapper's own tags
    assert [(b.start, b.end) for b in blocks] == [
        (1, main.start), (main.start, footer.start), (footer.start, len(seq) - 1)
    ]
    # overlap P/R (SMG §5.1) against the markup's blocks: a perfect partition
    cum = np.concatenate([[0], np.cumsum(seq.length)])
    system = [(cum[b.start], cum[b.end]) for b in blocks]
    assert partition_prf(system, system, page_length=float(cum[-1])).f1 == 1.0


def test_unresolved_pieces_between_blocks_are_merged() -> None:
    model = _model("<div>" + "<p>a b</p>" + "<ul>" + "<li><a href='/a'>A</a></li>" * 10 + "</ul>"
                   + "x<b>y</b>z" + "<table>" + "<tr><td>1</td></tr>" * 8 + "</table></div>")
    seq = translate(model)
    blocks = partition(model, seq, SegParams(window=12, locut=1.5, hicut=1.75))
    # the closing tag of the div alone is no block
    assert blocks[0].start == 0 and blocks[-1].end == len(seq) - 1
    assert all(a.end == b.start for a, b in pairwise(blocks))
    merged = [b for b in blocks if b.node < 0]
    assert merged  # the short paragraph and the loose text are unresolved pieces
    assert all(len(seq.symbols[b.start : b.end]) < 12 for b in merged)


def test_empty_page() -> None:
    model = PageModel.from_html("", "http://example.org/")
    assert partition(model, translate(model), SegParams()) == []


_PROSE = (
    "<p>Some <a href='/x'>link</a> then <code><span>code</span></code> and <b>bold</b>, "
    "<br>a <span>span</span> <em>word</em> <a href='/y'>more</a></p>"
)
_TABLE = "<table>" + "<tr><td>1</td><td>2</td></tr>" * 6 + "</table>"


def _links(n: int) -> str:
    items = "".join(f"<li><a href='/c{i}.html'>Category {i}</a></li>" for i in range(n))
    return f"<ul>{items}</ul>"


def _entries_page(classes: list[str]) -> PageModel:
    """A menu, then a main part holding a long link list and a run of entries (prose, and a
    table in every other one), then a footer."""
    entries = "".join(
        f"<div class='{c}'><h2>Entry {k}</h2>{_PROSE * 2}{_TABLE if k % 2 else ''}</div>"
        for k, c in enumerate(classes)
    )
    return _model(
        f"<div id='page'><div>{_links(12)}</div><div>{_links(30)}{entries}</div>"
        f"<div>{_PROSE}</div></div>"
    )


def test_a_run_of_repeated_siblings_is_one_block() -> None:
    params = SegParams(window=12, locut=1.5, hicut=1.75)
    model = _entries_page(["entry"] * 6)
    seq = translate(model)
    blocks = partition(model, seq, params)
    # the main part mixes its link list with the entries: it is split; the entries' run is
    # dominated by high-complexity segments and comes back as one block
    main = model.children(model.children(_body_node(model))[0])[1]
    first, last = model.children(main)[1], model.children(main)[-1]
    run = [b for b in blocks if b.start == seq.start[first]]
    assert len(run) == 1 and run[0].end == seq.end[last] and run[0].node == -1
    assert run[0].rseg == pytest.approx(_rseg_of(seq.symbols[run[0].start : run[0].end], params))
    assert run[0].rseg >= 0.2
    # the link list beside the run, the menu and the footer stay blocks of their own, and so do
    # the root's children although they are the same element (plain divs)
    paths = [model.path(b.node) for b in blocks if b.node >= 0]
    assert paths == ["html/body/div/div", "html/body/div/div[2]/ul", "html/body/div/div[3]"]


def test_different_or_mixed_siblings_are_not_merged() -> None:
    params = SegParams(window=12, locut=1.5, hicut=1.75)
    # the same entries, but no two neighbours are the same element
    model = _entries_page(["a", "b"] * 3)
    seq = translate(model)
    assert not [b for b in partition(model, seq, params) if b.end - b.start > 300]
    # two instances of one element of opposite kinds (a table, prose): their union is ambiguous
    # by eq. (1), so they stay apart; the paragraphs after them are one run
    model = _model(f"<div>{_links(40)}</div><div>{_links(30)}<section>{_TABLE * 2}</section>"
                   f"<section><h2>Prose</h2>{_PROSE * 4}</section>{_PROSE * 6}</div>")
    seq = translate(model)
    blocks = partition(model, seq, params)
    paths = [model.path(b.node) if b.node >= 0 else "run" for b in blocks]
    assert paths == ["html/body/div", "html/body/div[2]/ul", "html/body/div[2]/section",
                     "html/body/div[2]/section[2]", "run"]  # fmt: skip
    table, prose, paragraphs = blocks[2:]
    assert table.low_dominant and not prose.low_dominant
    assert _rseg_of(seq.symbols[table.start : prose.end], params) < 0.2
    main = model.children(model.children(_body_node(model))[1])
    assert (paragraphs.start, paragraphs.end) == (seq.start[main[3]], seq.end[main[-1]])


def _rseg_of(symbols: str, params: SegParams) -> float:
    """Eq. (1) with SEG run on ``symbols`` alone."""
    low = sum(b - a for a, b, is_low in seg_segments(symbols, params) if is_low)
    return r_seg(low, len(symbols))


def _body_node(model: PageModel) -> int:
    return int(np.flatnonzero(model.tag == "body")[0])
