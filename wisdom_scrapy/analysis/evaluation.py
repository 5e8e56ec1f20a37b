"""Evaluation measures used by the tests and the benchmarks.

* **Token-shingle precision/recall/F1** of the article-extraction benchmark
  (github.com/scrapinghub/article-extraction-benchmark):
  :func:`shingle_prf` for one page, :func:`corpus_shingle_prf` for the benchmark's averages.
* **SNC and IC** of WISDOM §4.1 (Table 3): :func:`snc_ic` on lxml trees, or
  :func:`weighted_match` on any node identifiers with weights.
* **Feature-based recall/precision** of InfoDiscoverer §5 (Figure 4): :func:`feature_prf`.
* **Overlap-based precision/recall of a page partition**, SMG §5.1 eqs. (6)–(8), Fig. 13:
  :func:`partition_prf`.

All measures share one convention for empty sides (the benchmark's ``precision_score`` /
``recall_score``): when nothing was expected *and* nothing was found, precision and recall are
1.0; a ratio whose denominator is zero while the other side is not empty is 0.0. F1 is the
harmonic mean of precision and recall, 0.0 when both are 0.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "PRF",
    "Match",
    "SncIc",
    "corpus_shingle_prf",
    "feature_prf",
    "partition_prf",
    "shingle_counts",
    "shingle_prf",
    "shingles",
    "snc_ic",
    "text_length",
    "tokenize",
    "weighted_match",
]


# --------------------------------------------------------------------------------------------
# Common result types
# --------------------------------------------------------------------------------------------


def _f1(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall (0.0 when both are 0)."""
    total = precision + recall
    return 2.0 * precision * recall / total if total > 0 else 0.0


class PRF(NamedTuple):
    """Precision, recall and their harmonic mean. A tuple: ``p, r, f = shingle_prf(...)``."""

    precision: float
    recall: float
    f1: float

    @classmethod
    def of(cls, precision: float, recall: float) -> PRF:
        """The triple with F1 computed from ``precision`` and ``recall``."""
        return cls(float(precision), float(recall), _f1(precision, recall))


class Match(NamedTuple):
    """Matched amounts between an answer set A and an extracted (system) set W.

    The names are WISDOM Table 3's: ``aw`` = amount in A ∩ W, ``ao`` = amount in A only,
    ``wo`` = amount in W only; P = AW / (AW + WO), R = AW / (AW + AO). The amounts are counts
    (SNC, feature sets) or lengths (IC).
    """

    aw: float
    ao: float
    wo: float

    @property
    def precision(self) -> float:
        """AW / (AW + WO); 1.0 when both sets are empty, 0.0 when only W is empty."""
        found = self.aw + self.wo
        if found > 0:
            return self.aw / found
        return 1.0 if self.ao == 0 else 0.0

    @property
    def recall(self) -> float:
        """AW / (AW + AO); 1.0 when both sets are empty, 0.0 when only A is empty."""
        expected = self.aw + self.ao
        if expected > 0:
            return self.aw / expected
        return 1.0 if self.wo == 0 else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of :attr:`precision` and :attr:`recall`."""
        return _f1(self.precision, self.recall)

    @property
    def prf(self) -> PRF:
        """(precision, recall, f1)."""
        return PRF(self.precision, self.recall, self.f1)

    def as_dict(self) -> dict[str, float]:
        """AW, AO, WO, P, R and F as a plain dict (for JSON output)."""
        return {
            "aw": self.aw,
            "ao": self.ao,
            "wo": self.wo,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


# --------------------------------------------------------------------------------------------
# Token-shingle P/R/F1 (article-extraction benchmark)
# --------------------------------------------------------------------------------------------

# The benchmark's tokenizer: maximal runs of Unicode word characters, case kept as it is (its
# regex carries IGNORECASE, which changes nothing for ``\w``). No stemming, no lower-casing.
_TOKEN_RE = re.compile(r"\w+")

#: Shingle size of the benchmark.
SHINGLE_N = 4


def tokenize(text: str | None) -> list[str]:
    """Tokens as the article-extraction benchmark counts them: runs of ``\\w`` characters."""
    return _TOKEN_RE.findall(text or "")


def shingles(text: str | None, n: int = SHINGLE_N) -> Counter[tuple[str, ...]]:
    """Multiset of the ``n``-token shingles of ``text`` (benchmark semantics).

    A text with fewer than ``n`` tokens (but at least one) has exactly one, shorter shingle:
    all its tokens. That is how the benchmark's ``_ngrams`` behaves, and it matters for pages
    whose prediction or gold is a couple of words.
    """
    if n < 1:
        raise ValueError(f"shingle size must be >= 1, got {n}")
    tokens = tokenize(text)
    if not tokens:
        return Counter()
    if len(tokens) < n:
        return Counter([tuple(tokens)])
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def shingle_counts(
    prediction: str | None, gold: str | None, n: int = SHINGLE_N
) -> tuple[float, float, float]:
    """Normalised (TP, FP, FN) shingle counts of one page.

    TP = Σ min(pred, gold) over shingles, FP = Σ max(0, pred − gold), FN = Σ max(0, gold − pred);
    the three are then divided by their sum (when it is positive) "so that longer texts do not
    have more weight" in the corpus averages.
    """
    pred = shingles(prediction, n)
    true = shingles(gold, n)
    tp = fp = fn = 0
    for key in pred.keys() | true.keys():
        p, t = pred[key], true[key]
        if p >= t:
            tp += t
            fp += p - t
        else:
            tp += p
            fn += t - p
    total = tp + fp + fn
    if total == 0:
        return (0.0, 0.0, 0.0)
    return (tp / total, fp / total, fn / total)


def _precision_score(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fp == 0:
        return 0.0
    return tp / (tp + fp)


def _recall_score(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fn == 0:
        return 0.0
    return tp / (tp + fn)


def shingle_prf(prediction: str | None, gold: str | None, n: int = SHINGLE_N) -> PRF:
    """Shingle precision, recall and F1 of one extracted text against its gold text.

    Exactly the per-page scores of the article-extraction benchmark: ``n`` = 4 token
    shingles (see :func:`shingles`), matched as multisets. Both texts without tokens score
    (1, 1, 1); an empty prediction for a non-empty gold scores (0, 0, 0), as does a non-empty
    prediction for an empty gold. Symmetric: ``shingle_prf(a, b)`` is
    ``shingle_prf(b, a)`` with precision and recall swapped.
    """
    tp, fp, fn = shingle_counts(prediction, gold, n)
    return PRF.of(_precision_score(tp, fp, fn), _recall_score(tp, fp, fn))


def corpus_shingle_prf(
    pairs: Iterable[tuple[str | None, str | None]], n: int = SHINGLE_N
) -> dict[str, float]:
    """Benchmark averages over ``(prediction, gold)`` pairs, one pair per page.

    As the article-extraction benchmark's ``evaluate.py`` computes them: precision is the mean
    of per-page precision over pages with a non-empty prediction (TP + FP > 0), recall the mean of
    per-page recall over pages with a non-empty gold (TP + FN > 0), and F1 the harmonic mean of
    these two averages (not the mean of per-page F1). ``accuracy`` is the benchmark's exact-match
    rate (identical token sequences).

    Returns ``precision``, ``recall``, ``f1``, ``accuracy``, ``n`` (pages), ``n_predicted``
    (pages averaged for precision) and ``n_gold`` (pages averaged for recall). A corpus without
    any predicted (gold) page has precision (recall) 0.0.
    """
    precisions: list[float] = []
    recalls: list[float] = []
    exact = 0
    count = 0
    for prediction, gold in pairs:
        count += 1
        tp, fp, fn = shingle_counts(prediction, gold, n)
        if tp + fp > 0:
            precisions.append(_precision_score(tp, fp, fn))
        if tp + fn > 0:
            recalls.append(_recall_score(tp, fp, fn))
        exact += tokenize(prediction) == tokenize(gold)
    precision = float(np.mean(precisions)) if precisions else 0.0
    recall = float(np.mean(recalls)) if recalls else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": _f1(precision, recall),
        "accuracy": exact / count if count else 0.0,
        "n": count,
        "n_predicted": len(precisions),
        "n_gold": len(recalls),
    }


# --------------------------------------------------------------------------------------------
# WISDOM §4.1: significant node coverage (SNC) and information coverage (IC)
# --------------------------------------------------------------------------------------------


def _as_weights(items: Mapping[Any, float] | Iterable[Hashable]) -> dict[Any, float]:
    if isinstance(items, Mapping):
        weights: dict[Any, float] = {}
        for key, value in items.items():
            if value < 0:
                raise ValueError(f"negative weight {value!r} for {key!r}")
            weights[key] = float(value)
        return weights
    return dict.fromkeys(items, 1.0)


def weighted_match(
    answer: Mapping[Any, float] | Iterable[Hashable],
    extracted: Mapping[Any, float] | Iterable[Hashable],
) -> Match:
    """AW, AO, WO between an answer set A and an extracted set W of weighted items.

    Items are anything hashable (node indices of a page model, lxml elements, terms). A plain
    iterable gives every item weight 1 (counting, as SNC does); a mapping gives its weights
    (lengths, as IC does). An item present on both sides counts with the weight the answer
    gives it (the weights are properties of the page, so both sides normally agree).
    """
    a = _as_weights(answer)
    w = _as_weights(extracted)
    aw = sum(weight for key, weight in a.items() if key in w)
    ao = sum(weight for key, weight in a.items() if key not in w)
    wo = sum(weight for key, weight in w.items() if key not in a)
    return Match(aw, ao, wo)


class SncIc(NamedTuple):
    """SNC (significant nodes, counted) and IC (text, by length) of one comparison."""

    snc: Match
    ic: Match


_NO_TEXT_TAGS = frozenset({"script", "style", "noscript", "template"})


def text_length(text: str | None) -> int:
    """Length of a text as IC measures it: its number of non-whitespace characters.

    Counting characters suits Chinese as well as English; leaving whitespace out makes the
    length independent of indentation and of how text is split across nodes.
    """
    if not text:
        return 0
    return len("".join(text.split()))


def _is_anchor(element: Any) -> bool:
    return element.tag == "a" and element.get("href") is not None


def _subtree_units(
    roots: Iterable[Any], significant: Callable[[Any], bool]
) -> tuple[set[Any], dict[tuple[int, Any], int]]:
    """Significant elements and text pieces (with their lengths) under the given roots.

    A text piece is an element's ``.text`` (owned by the element) or ``.tail`` (owned by the
    element's parent, so it belongs to a root's subtree only when the element is strictly
    inside the root). The union over roots is taken, so nested roots are not counted twice.
    """
    nodes: set[Any] = set()
    texts: dict[tuple[int, Any], int] = {}
    for root in roots:
        for element in root.iter():  # lxml iterates in C: no Python recursion
            is_element = isinstance(element.tag, str)
            if is_element:
                if significant(element):
                    nodes.add(element)
                if element.tag not in _NO_TEXT_TAGS:
                    length = text_length(element.text)
                    if length:
                        texts[(0, element)] = length
            if element is not root:
                length = text_length(element.tail)
                if length:
                    texts[(1, element)] = length
    return nodes, texts


def snc_ic(
    extracted: Iterable[Any],
    answer: Iterable[Any],
    *,
    significant: Callable[[Any], bool] = _is_anchor,
) -> SncIc:
    """WISDOM §4.1: SNC and IC between extracted blocks W and answer blocks A of one page.

    ``extracted`` and ``answer`` are root elements (lxml) of blocks in the *same* tree; a
    block is the sub-tree under its root.

    * **SNC**, significant node coverage: "we count the matched anchor nodes in sub-trees rooted
      by nodes in the answer set and our output". AW = significant nodes under both some answer
      root and some extracted root, AO = under answer roots only, WO = under extracted roots
      only. Significant nodes are ``<a href>`` elements by default (TOC blocks); pass
      ``significant`` to count other nodes.
    * **IC**, information coverage: "the ratio of the matched context contained in each
      sub-tree by length". The same three amounts, summed over the text of the sub-trees
      (element text and tails, script/style excluded), each piece by :func:`text_length`.

    P = AW/(AW+WO), R = AW/(AW+AO), F = 2PR/(P+R), as in Table 3. The paper reports SNC for TOC
    blocks and IC for article blocks but its Table 3 works out both measures for both block
    types, so both are always returned. Figure 10 (the tree of the worked example) is not in the
    transcription; the tests build a tree that reproduces every cell of Table 3.

    For a page model other than lxml, build the node/text weights and use
    :func:`weighted_match`.
    """
    a_nodes, a_texts = _subtree_units(answer, significant)
    w_nodes, w_texts = _subtree_units(extracted, significant)
    return SncIc(weighted_match(a_nodes, w_nodes), weighted_match(a_texts, w_texts))


# --------------------------------------------------------------------------------------------
# InfoDiscoverer §5: feature-based recall and precision
# --------------------------------------------------------------------------------------------


def feature_prf(
    extracted_features: Mapping[Any, float] | Iterable[Hashable],
    gold_features: Mapping[Any, float] | Iterable[Hashable],
) -> Match:
    """InfoDiscoverer §5 (Figure 4): recall and precision of discovered features.

    "Recall rate = Common features / Desired features, Precision rate = Common features /
    Discovered features", where the desired features are those of the hand-labelled informative
    blocks and the discovered features those of the blocks the system judged informative.

    Features (terms) given as plain iterables are compared as sets, which is the paper's
    wording. Mappings (e.g. ``collections.Counter`` of term frequencies) are compared as
    multisets: common = Σ min(count), so repeated terms count as often as they occur.
    The result's ``aw`` is the common amount, ``ao`` the desired-but-missed, ``wo`` the
    discovered-but-not-desired; read ``.precision``, ``.recall``, ``.f1``.
    """
    if isinstance(extracted_features, Mapping) or isinstance(gold_features, Mapping):
        found = _as_weights(extracted_features)
        desired = _as_weights(gold_features)
        common = sum(min(value, found.get(key, 0.0)) for key, value in desired.items())
        return Match(
            common,
            sum(desired.values()) - common,
            sum(found.values()) - common,
        )
    found_set = set(extracted_features)
    desired_set = set(gold_features)
    common_set = len(found_set & desired_set)
    return Match(
        float(common_set),
        float(len(desired_set) - common_set),
        float(len(found_set) - common_set),
    )


# --------------------------------------------------------------------------------------------
# SMG §5.1: overlap-based precision/recall of a page partition
# --------------------------------------------------------------------------------------------


def _segments_array(segments: Iterable[tuple[float, float]], name: str) -> np.ndarray:
    array = np.asarray(list(segments), dtype=float).reshape(-1, 2)
    if np.any(array[:, 1] < array[:, 0]):
        raise ValueError(f"{name}: every segment must have start <= end")
    return array


def _union_length(segments: np.ndarray) -> float:
    if len(segments) == 0:
        return 0.0
    order = np.argsort(segments[:, 0], kind="stable")
    total = 0.0
    current_start, current_end = segments[order[0]]
    for start, end in segments[order[1:]]:
        if start > current_end:
            total += current_end - current_start
            current_start, current_end = start, end
        elif end > current_end:
            current_end = end
    return float(total + current_end - current_start)


def _max_overlaps(rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """For every row segment, its largest overlap with any column segment."""
    if len(rows) == 0:
        return np.zeros(0)
    if len(columns) == 0:
        return np.zeros(len(rows))
    overlap = np.minimum(rows[:, 1:2], columns[:, 1]) - np.maximum(rows[:, 0:1], columns[:, 0])
    return np.clip(overlap, 0.0, None).max(axis=1)


def partition_prf(
    system_segments: Iterable[tuple[float, float]],
    answer_segments: Iterable[tuple[float, float]],
    page_length: float | None = None,
) -> PRF:
    """SMG §5.1, eqs. (6)–(8): overlap-based precision and recall of a page partition.

    Segments are half-open ``(start, end)`` ranges over the page's text (character offsets, so
    lengths are text lengths). Each system block s_i is credited with its largest overlap with
    any answer block, each answer block a_j with its largest overlap with any system block::

        P_{S→A}(p) = Σ_i max_j |a_j ∩ s_i| / |p|      (6, precision)
        P_{A→S}(p) = Σ_j max_i |a_j ∩ s_i| / |p|      (7, recall)
        F1(p)      = 2·P·R / (P + R)                  (8)

    |p| is "the total text length of the page": pass ``page_length``; by default it is the
    length of the union of all segments of both sides (in Fig. 13 both partitions cover the
    whole page, so the two agree). A page of length 0 scores (1, 1, 1). Fig. 13's example
    (page length 100, five system and four answer blocks) gives P = 0.85, R = 0.80,
    F1 = 0.824; the tests rebuild it.
    """
    system = _segments_array(system_segments, "system_segments")
    answer = _segments_array(answer_segments, "answer_segments")
    if page_length is None:
        page_length = _union_length(np.concatenate([system, answer]))
    elif page_length < 0:
        raise ValueError(f"page_length must be >= 0, got {page_length}")
    if page_length == 0:
        return PRF(1.0, 1.0, 1.0)
    precision = float(_max_overlaps(system, answer).sum()) / page_length
    recall = float(_max_overlaps(answer, system).sum()) / page_length
    return PRF.of(precision, recall)
