"""Tests of wisdom_scrapy.analysis.evaluation: the papers' worked examples, edge cases,
properties."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wisdom_scrapy.analysis.evaluation import (
    PRF,
    Match,
    corpus_shingle_prf,
    feature_prf,
    partition_prf,
    shingle_counts,
    shingle_prf,
    shingles,
    snc_ic,
    text_length,
    tokenize,
    weighted_match,
)

# ------------------------------------------------------------------------------------------
# Token shingles (article-extraction benchmark)
# ------------------------------------------------------------------------------------------


def test_tokenize_keeps_case_and_drops_punctuation() -> None:
    assert tokenize("Hello, world! It's 2024_x.") == ["Hello", "world", "It", "s", "2024_x"]
    assert tokenize(None) == []
    assert tokenize("中文 text") == ["中文", "text"]


def test_shingles_are_four_token_windows() -> None:
    assert shingles("a b c d e") == Counter({("a", "b", "c", "d"): 1, ("b", "c", "d", "e"): 1})
    assert shingles("a b c d a b c d") == Counter(
        {
            ("a", "b", "c", "d"): 2,
            ("b", "c", "d", "a"): 1,
            ("c", "d", "a", "b"): 1,
            ("d", "a", "b", "c"): 1,
        }
    )


def test_short_text_is_one_short_shingle() -> None:
    # The benchmark's _ngrams: fewer than n tokens give one shingle of all the tokens.
    assert shingles("hello world") == Counter({("hello", "world"): 1})
    assert shingles("") == Counter()
    with pytest.raises(ValueError):
        shingles("a", n=0)


def test_shingle_prf_partial_prediction() -> None:
    # gold: abcd, bcde; prediction: abcd -> tp=1, fp=0, fn=1, normalised by 2.
    assert shingle_counts("a b c d", "a b c d e") == (0.5, 0.0, 0.5)
    p, r, f = shingle_prf("a b c d", "a b c d e")
    assert (p, r) == (1.0, 0.5)
    assert f == pytest.approx(2 / 3)


def test_shingle_prf_extra_text_lowers_precision() -> None:
    gold = "one two three four five six"
    prediction = "menu home " + gold  # 2 extra shingles, 3 right
    p, r, _ = shingle_prf(prediction, gold)
    assert r == 1.0
    assert p == pytest.approx(3 / 5)


def test_shingle_prf_is_case_sensitive_and_ignores_punctuation() -> None:
    assert shingle_prf("a, b. c! d?", "a b c d") == (1.0, 1.0, 1.0)
    assert shingle_prf("Hello world foo bar", "hello world foo bar") == (0.0, 0.0, 0.0)


def test_shingle_prf_short_texts() -> None:
    assert shingle_prf("hello world", "hello world") == (1.0, 1.0, 1.0)
    assert shingle_prf("hello", "hello world") == (0.0, 0.0, 0.0)


def test_shingle_prf_empty_sides() -> None:
    assert shingle_prf("", "") == (1.0, 1.0, 1.0)
    assert shingle_prf(None, None) == (1.0, 1.0, 1.0)
    assert shingle_prf("", "some gold text here") == (0.0, 0.0, 0.0)
    assert shingle_prf("some predicted text here", "") == (0.0, 0.0, 0.0)
    assert shingle_prf("...", "  ") == (1.0, 1.0, 1.0)  # no tokens on either side


def test_shingle_prf_returns_named_triple() -> None:
    result = shingle_prf("a b c d", "a b c d")
    assert isinstance(result, tuple) and isinstance(result, PRF)
    assert result.precision == result.recall == result.f1 == 1.0


def test_corpus_averages_follow_the_benchmark() -> None:
    pairs = [
        ("a b c d", "a b c d"),  # P 1, R 1
        ("", "w x y z"),  # empty prediction: left out of precision, R 0
        ("w x y z", ""),  # empty gold: left out of recall, P 0
    ]
    result = corpus_shingle_prf(pairs)
    assert result["n"] == 3
    assert result["n_predicted"] == 2
    assert result["n_gold"] == 2
    assert result["precision"] == pytest.approx(0.5)
    assert result["recall"] == pytest.approx(0.5)
    assert result["f1"] == pytest.approx(0.5)
    assert result["accuracy"] == pytest.approx(1 / 3)


def test_corpus_f1_is_harmonic_mean_of_averages() -> None:
    pairs = [
        ("a b c d", "a b c d e f g"),  # P 1, R 1/4
        ("a b c d e f g", "d e f g"),  # P 1/4, R 1
    ]
    result = corpus_shingle_prf(pairs)
    assert result["precision"] == pytest.approx(0.625)
    assert result["recall"] == pytest.approx(0.625)
    assert result["f1"] == pytest.approx(0.625)  # the mean of per-page F1 would be 0.4


def test_corpus_of_nothing() -> None:
    assert corpus_shingle_prf([]) == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "accuracy": 0.0,
        "n": 0,
        "n_predicted": 0,
        "n_gold": 0,
    }


_words = st.lists(
    st.sampled_from(["the", "cat", "sat", "on", "mat", "a", "dog", "Ran"]), max_size=30
)
_texts = _words.map(" ".join)


@given(_texts)
def test_identical_texts_score_one(text: str) -> None:
    assert shingle_prf(text, text) == (1.0, 1.0, 1.0)


@given(_texts, _texts)
def test_shingle_prf_bounds_and_swap_symmetry(prediction: str, gold: str) -> None:
    p, r, f = shingle_prf(prediction, gold)
    assert 0.0 <= p <= 1.0 and 0.0 <= r <= 1.0
    assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12
    p2, r2, f2 = shingle_prf(gold, prediction)
    assert (p2, r2) == pytest.approx((r, p))
    assert f2 == pytest.approx(f)


@given(st.lists(st.tuples(_texts, _texts), max_size=8))
def test_corpus_bounds(pairs: list[tuple[str, str]]) -> None:
    result = corpus_shingle_prf(pairs)
    for key in ("precision", "recall", "f1", "accuracy"):
        assert 0.0 <= result[key] <= 1.0
    assert result["n"] == len(pairs)


# ------------------------------------------------------------------------------------------
# WISDOM §4.1, Table 3
# ------------------------------------------------------------------------------------------

# Figure 10 is not in the transcription: this page is built so that its counts reproduce
# every cell of Table 3. The TOC answer block holds six anchors; the extracted TOC block is the
# first three (text 3+3+3 = 9 of 15). The article answer block holds ten paragraphs; the
# extracted article block is the first five (text 4+4+3+3+3 = 17 of 25).
_TABLE3_PAGE = """
<html><body>
  <div id="toc-answer">
    <ul id="toc-extracted">
      <li><a href="/1">abc</a></li><li><a href="/2">def</a></li><li><a href="/3">ghi</a></li>
    </ul>
    <ul>
      <li><a href="/4">jk</a></li><li><a href="/5">lm</a></li><li><a href="/6">no</a></li>
    </ul>
  </div>
  <div id="article-answer">
    <div id="article-extracted">
      <p>abcd</p><p>efgh</p><p>ijk</p><p>lmn</p><p>opq</p>
    </div>
    <p>rs</p><p>tu</p><p>vw</p><p>x</p><p>y</p>
  </div>
  <div id="footer"><a href="/about">About us</a></div>
</body></html>
"""


def _table3_tree() -> lxml.html.HtmlElement:
    return lxml.html.fromstring(_TABLE3_PAGE)


def _by_id(tree: lxml.html.HtmlElement, ident: str) -> lxml.html.HtmlElement:
    return tree.get_element_by_id(ident)


def test_table3_toc_column() -> None:
    tree = _table3_tree()
    result = snc_ic([_by_id(tree, "toc-extracted")], [_by_id(tree, "toc-answer")])
    assert result.snc[:3] == (3, 3, 0)
    assert (result.snc.precision, round(result.snc.recall, 2), round(result.snc.f1, 2)) == (
        1.0,
        0.50,
        0.67,
    )
    assert result.ic[:3] == (9, 6, 0)
    assert (result.ic.precision, round(result.ic.recall, 2), round(result.ic.f1, 2)) == (
        1.0,
        0.60,
        0.75,
    )


def test_table3_article_column() -> None:
    tree = _table3_tree()
    result = snc_ic(
        [_by_id(tree, "article-extracted")],
        [_by_id(tree, "article-answer")],
        significant=lambda element: element.tag == "p",
    )
    assert result.snc[:3] == (5, 5, 0)
    assert (result.snc.precision, round(result.snc.recall, 2), round(result.snc.f1, 2)) == (
        1.0,
        0.50,
        0.67,
    )
    assert result.ic[:3] == (17, 8, 0)
    assert (result.ic.precision, round(result.ic.recall, 2), round(result.ic.f1, 2)) == (
        1.0,
        0.68,
        0.81,
    )


def test_snc_ic_counts_extra_extracted_nodes_and_text() -> None:
    tree = _table3_tree()
    result = snc_ic(
        [_by_id(tree, "toc-extracted"), _by_id(tree, "footer")], [_by_id(tree, "toc-answer")]
    )
    assert result.snc[:3] == (3, 3, 1)
    assert result.ic[:3] == (9, 6, len("Aboutus"))


def test_snc_ic_nested_roots_count_once() -> None:
    tree = _table3_tree()
    answer = [_by_id(tree, "toc-answer"), _by_id(tree, "toc-extracted")]
    result = snc_ic(answer, answer)
    assert result.snc[:3] == (6, 0, 0)
    assert result.ic[:3] == (15, 0, 0)


def test_snc_ic_tail_text_belongs_to_the_parent() -> None:
    tree = lxml.html.fromstring("<div><p>ab<b>cd</b>ef</p><script>var x</script>gh</div>")
    p = tree.find("p")
    b = p.find("b")
    # the <b> sub-tree holds "cd" only; its tail "ef" is in <p>; script text never counts.
    assert snc_ic([b], [p]).ic[:3] == (2, 4, 0)
    assert snc_ic([tree], [tree]).ic[:3] == (8, 0, 0)


def test_snc_ic_empty_sides() -> None:
    tree = _table3_tree()
    nothing = snc_ic([], [])
    assert nothing.snc.prf == (1.0, 1.0, 1.0)
    missed = snc_ic([], [_by_id(tree, "toc-answer")])
    assert missed.snc.prf == (0.0, 0.0, 0.0)
    assert missed.ic.prf == (0.0, 0.0, 0.0)
    spurious = snc_ic([_by_id(tree, "footer")], [])
    assert spurious.snc.prf == (0.0, 0.0, 0.0)


def test_weighted_match_for_any_page_model() -> None:
    # node index -> text length, as a page model with node arrays would provide
    answer = {1: 10, 2: 5, 3: 5}
    extracted = {2: 5, 3: 5, 7: 20}
    match = weighted_match(answer, extracted)
    assert match == Match(10, 10, 20)
    assert match.precision == pytest.approx(1 / 3)
    assert match.recall == pytest.approx(1 / 2)
    assert weighted_match([1, 2, 3], [2, 3, 7]) == Match(2, 1, 1)
    with pytest.raises(ValueError):
        weighted_match({1: -1}, {})


def test_match_as_dict() -> None:
    assert Match(3, 3, 0).as_dict() == {
        "aw": 3,
        "ao": 3,
        "wo": 0,
        "precision": 1.0,
        "recall": 0.5,
        "f1": pytest.approx(2 / 3),
    }


def test_text_length_ignores_whitespace() -> None:
    assert text_length(" a b\n\tc ") == 3
    assert text_length("中文 字") == 3
    assert text_length(None) == 0


# ------------------------------------------------------------------------------------------
# InfoDiscoverer §5
# ------------------------------------------------------------------------------------------


def test_feature_prf_sets() -> None:
    desired = {"entropy", "block", "table", "news"}
    discovered = ["entropy", "block", "menu", "block"]  # duplicates: a set
    match = feature_prf(discovered, desired)
    assert match[:3] == (2, 2, 1)
    assert match.recall == pytest.approx(2 / 4)  # common / desired
    assert match.precision == pytest.approx(2 / 3)  # common / discovered


def test_feature_prf_multisets() -> None:
    match = feature_prf(Counter({"a": 3, "b": 1}), Counter({"a": 2, "c": 2}))
    assert match[:3] == (2, 2, 2)


def test_feature_prf_empty() -> None:
    assert feature_prf([], []).prf == (1.0, 1.0, 1.0)
    assert feature_prf([], ["a"]).prf == (0.0, 0.0, 0.0)
    assert feature_prf(["a"], []).prf == (0.0, 0.0, 0.0)


@given(st.sets(st.integers(0, 20)), st.sets(st.integers(0, 20)))
def test_feature_prf_bounds(extracted: set[int], gold: set[int]) -> None:
    match = feature_prf(extracted, gold)
    assert 0.0 <= match.precision <= 1.0 and 0.0 <= match.recall <= 1.0
    assert feature_prf(gold, gold).prf == (1.0, 1.0, 1.0)


# ------------------------------------------------------------------------------------------
# SMG §5.1, eqs. (6)-(8), Fig. 13
# ------------------------------------------------------------------------------------------

# Fig. 13 rebuilt from its text: page length 100; answer blocks a1..a4, system blocks s1..s5.
# s3 (length 35) overlaps a2 by 20 and a3 by 15; a1 overlaps s1 by 20 and s2 by 5; a3 overlaps
# s3 by 15 and s4 by 20. System match lengths 20, 5, 20, 20, 20; answer ones 20, 20, 20, 20.
_FIG13_ANSWER = [(0, 25), (25, 45), (45, 80), (80, 100)]
_FIG13_SYSTEM = [(0, 20), (20, 25), (25, 60), (60, 80), (80, 100)]


def test_fig13_example() -> None:
    p, r, f = partition_prf(_FIG13_SYSTEM, _FIG13_ANSWER)
    assert p == pytest.approx(0.85)
    assert r == pytest.approx(0.80)
    assert round(f, 3) == 0.824
    assert partition_prf(_FIG13_SYSTEM, _FIG13_ANSWER, page_length=100) == (p, r, f)


def test_partition_prf_uncovered_text_and_empty_sides() -> None:
    # answer labels only half of a 100-character page: recall is bounded by |p|, as in eq. (7)
    assert partition_prf([(0, 50)], [(0, 50)], page_length=100) == (0.5, 0.5, 0.5)
    assert partition_prf([], [(0, 10)]) == (0.0, 0.0, 0.0)
    assert partition_prf([], []) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        partition_prf([(5, 1)], [])
    with pytest.raises(ValueError):
        partition_prf([], [], page_length=-1)


@st.composite
def _partitions(draw: st.DrawFn) -> list[tuple[int, int]]:
    cuts = sorted(draw(st.sets(st.integers(1, 99), max_size=10)))
    bounds = [0, *cuts, 100]
    return list(pairwise(bounds))


@given(_partitions(), _partitions())
def test_partition_prf_properties(
    system: list[tuple[int, int]], answer: list[tuple[int, int]]
) -> None:
    p, r, f = partition_prf(system, answer)
    assert 0.0 < p <= 1.0 and 0.0 < r <= 1.0
    assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12
    assert partition_prf(answer, system) == pytest.approx((r, p, f))
    assert partition_prf(answer, answer) == (1.0, 1.0, 1.0)
