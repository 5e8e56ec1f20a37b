"""InfoDiscoverer (Lin & Ho, §4): informative content blocks by feature entropy.

The paper's pipeline, per page cluster (a site, or pages of one template):

1. **Content blocks** (§4.1). A page is partitioned along its ``<TABLE>`` tree: every table is
   a content block (CB) holding the content strings that are in it *but not in a nested table*
   (Figure 2: CB1 = S2 + S5, its child tables' strings belong to them). Pages have long since
   moved from layout tables to ``div``/``section``/``nav`` …, so :data:`CONTAINER_TAGS`
   generalises ``<TABLE>`` to the block-level containers real pages use, with the paper's own
   ownership rule: **a string belongs to its nearest container ancestor**, and a container that
   owns no string is not a block. Blocks therefore never overlap (each string is in exactly
   one), and a block's subtree text minus its child blocks' text is the block's content.
   Paragraph-level tags (``p``, ``li``, ``tr``, ``td``, headings, inline tags) are *not*
   containers, as table rows and cells are not blocks in the paper: a list is one block, as a
   table is. The paper's optional second phase (re-splitting ambiguous blocks) is omitted, as it
   is in the paper ("we omit the detail").
2. **Features** (§4.2) are the block's terms (:mod:`wisdom_scrapy.page.terms`: stemmed, stop words
   removed), taken from the page model (``term_ids``/``term_start``).
3. **Feature entropy** (§4.3) comes from the site's term-entropy store, as a per-vocabulary
   array aligned with ``model.vocab`` (e.g. ``snapshot.entropy(model.vocab)`` of an
   :class:`~wisdom_scrapy.store.base.EntropySnapshot`): WISDOM's entropy, which is the paper's
   eq. (2) with the logarithm base the number of pages.
4. **Block entropy** (§4.4, eq. 5): H(CB) = mean entropy of the block's features. The paper
   counts each feature of the block once (a feature is a keyword *of* the block), so repeated
   terms are counted once. A block without features (only numbers, stop words or symbols) has
   no H and is never informative.
5. **Classification** (§4.5): a block is redundant if H(CB) > threshold, informative otherwise.
   :func:`choose_threshold` is the paper's greedy search on a 0.1 grid (SMG's block
   identification uses it); the cleaner uses :func:`split_threshold`, the same boundary found
   in a way that does not depend on which pages were sampled.

Everything is vectorised over the page arrays: one pointer-jumping pass finds every node's
container, one ``np.unique`` over (block, term) pairs gives every block's distinct features.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from wisdom_scrapy.page.model import nearest_marked

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = [
    "CONTAINER_TAGS",
    "SPLIT_BINS",
    "BlockEntropy",
    "PageFeatures",
    "block_entropy",
    "block_text",
    "choose_threshold",
    "choose_threshold_from_lowest",
    "content_blocks",
    "feature_counts",
    "informative_blocks",
    "informative_features",
    "informative_mask",
    "lowest_block_entropy",
    "split_threshold",
]

#: Tags that make a content block: the paper's ``<TABLE>``, generalised to the block-level
#: containers of current pages. Rows, cells, list items, paragraphs and headings are not
#: containers: their strings belong to the table, list or division they are in.
CONTAINER_TAGS: frozenset[str] = frozenset(
    {
        "html", "body", "table", "div", "section", "article", "aside", "nav", "header",
        "footer", "main", "ul", "ol", "dl", "menu", "form", "fieldset", "blockquote", "figure",
        "center", "details", "dialog",
    }
)  # fmt: skip


def _is_container(model: PageModel) -> NDArray[np.bool_]:
    """Per node: its tag is in :data:`CONTAINER_TAGS` (the root always is: every string has
    a block)."""
    table = np.fromiter((t in CONTAINER_TAGS for t in model.tag_names), bool, len(model.tag_names))
    out = table[model.tag_id] if len(table) else np.zeros(model.n, bool)
    if model.n:
        out[0] = True
    return out


def _block_of(model: PageModel) -> NDArray[np.int64]:
    """For every node, its nearest container ancestor-or-self (its content block)."""
    return nearest_marked(_is_container(model), model.parent)


def content_blocks(model: PageModel) -> NDArray[np.int64]:
    """The content blocks of a page (§4.1 generalised): container nodes that own visible text,
    in document order. See the module docstring for the partition rule."""
    if model.n == 0:
        return np.zeros(0, np.int64)
    owner = _block_of(model)
    own = np.bincount(owner, weights=model.own_len, minlength=model.n)
    return np.flatnonzero(own > 0)


def block_text(model: PageModel, block: int) -> str:
    """The content strings of one block: its subtree's text without its child blocks."""
    start, stop = block + 1, int(model.subtree_end[block])
    inner = np.zeros(model.n, bool)
    inner[start:stop] = _is_container(model)[start:stop]
    return model.text_of(block, exclude=inner)


def _block_features(model: PageModel) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Distinct (block node, term id) pairs of the page, sorted by block then term."""
    term_start = model.term_start
    term_ids = model.term_ids
    if model.n == 0 or len(term_ids) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = _block_of(model)
    per_node = np.diff(term_start)
    term_block = np.repeat(owner, per_node)
    nvocab = max(len(model.vocab), 1)
    pairs = np.unique(term_block * nvocab + term_ids.astype(np.int64))
    return pairs // nvocab, pairs % nvocab


@dataclass(frozen=True)
class BlockEntropy:
    """H(CB) of every content block of a page that has features.

    ``blocks``: block nodes (document order); ``entropy``: H(CB) (eq. 5); ``features``: number of
    distinct features of each block.
    """

    blocks: NDArray[np.int64]
    entropy: NDArray[np.float64]
    features: NDArray[np.int64]

    def informative(self, threshold: float) -> NDArray[np.int64]:
        """Blocks with H(CB) ≤ ``threshold`` (the paper: above it a block is redundant)."""
        return self.blocks[self.entropy <= threshold]


def _check_entropy(model: PageModel, entropy: ArrayLike) -> NDArray[np.float64]:
    values = np.asarray(entropy, dtype=np.float64)
    if values.shape != (len(model.vocab),):
        raise ValueError(
            f"entropy must have one value per vocabulary term of the page ({len(model.vocab)}),"
            f" got shape {values.shape}"
        )
    return values


def _entropies(
    model: PageModel, entropy: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64], BlockEntropy]:
    """(block of each distinct (block, feature) pair, its feature, every block's H(CB))."""
    values = _check_entropy(model, entropy)
    block, term = _block_features(model)
    if len(block) == 0:
        empty = np.zeros(0, np.int64)
        return block, term, BlockEntropy(empty, np.zeros(0), empty)
    blocks, first, counts = np.unique(block, return_index=True, return_counts=True)
    sums = np.add.reduceat(values[term], first)
    return block, term, BlockEntropy(blocks, sums / counts, counts.astype(np.int64))


def block_entropy(model: PageModel, entropy: ArrayLike) -> BlockEntropy:
    """H(CB) = mean entropy of the block's distinct features, for every block with features.

    ``entropy`` holds one value in [0, 1] per term of ``model.vocab`` (the site's feature
    entropies; e.g. ``snapshot.entropy(model.vocab)``).
    """
    return _entropies(model, entropy)[2]


def informative_blocks(model: PageModel, entropy: ArrayLike, threshold: float) -> list[int]:
    """Content blocks of ``model`` whose H(CB) is at most ``threshold``, in document order.

    ``entropy`` is the per-vocabulary feature entropy array (see :func:`block_entropy`).
    """
    return block_entropy(model, entropy).informative(threshold).tolist()


def informative_mask(model: PageModel, entropy: ArrayLike, threshold: float) -> NDArray[np.bool_]:
    """Per node: its text belongs to an informative block (H(CB) ≤ ``threshold``): what a
    cleaner keeps of the page."""
    informative = np.zeros(model.n, bool)
    informative[block_entropy(model, entropy).informative(threshold)] = True
    return informative[_block_of(model)] if model.n else informative


def informative_features(model: PageModel, entropy: ArrayLike, threshold: float) -> set[str]:
    """The distinct features (terms) of the informative blocks: what §5 measures recall and
    precision on (:func:`wisdom_scrapy.analysis.evaluation.feature_prf`)."""
    block, term, h = _entropies(model, entropy)
    if len(block) == 0:
        return set()
    keep = np.isin(block, h.informative(threshold))
    vocab = model.vocab
    return {vocab[t] for t in np.unique(term[keep]).tolist()}


def _lowest(
    block: NDArray[np.int64], term: NDArray[np.int64], values: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Per distinct term of the (block, term) pairs (sorted by block), the lowest H(CB) of a
    block holding it; ``values`` are the entropies indexed by term."""
    if len(block) == 0:
        return np.zeros(0)
    _, first, counts = np.unique(block, return_index=True, return_counts=True)
    pair_h = np.repeat(np.add.reduceat(values[term], first) / counts, counts)
    order = np.lexsort((pair_h, term))
    term, pair_h = term[order], pair_h[order]
    first = np.flatnonzero(np.r_[True, term[1:] != term[:-1]])
    return pair_h[first]


def lowest_block_entropy(model: PageModel, entropy: ArrayLike) -> NDArray[np.float64]:
    """For every distinct feature of the page, the lowest H(CB) of a block holding it: the
    feature is among the informative blocks' features exactly when threshold ≥ that value."""
    values = _check_entropy(model, entropy)
    return _lowest(*_block_features(model), values)


@dataclass(frozen=True)
class PageFeatures:
    """What the threshold search needs of one page, without its model (a site's sample of
    pages is kept in memory and in the store): the distinct features of each of its content
    blocks. ``terms`` are the page's features; ``block`` and ``term`` hold one entry per
    distinct (block, feature) pair, sorted by block: the block's rank on the page and the
    feature's index in ``terms``."""

    terms: tuple[str, ...]
    block: NDArray[np.int64]
    term: NDArray[np.int64]

    @classmethod
    def of(cls, model: PageModel) -> PageFeatures:
        block, term = _block_features(model)
        used, term_index = np.unique(term, return_inverse=True)
        _, block_rank = np.unique(block, return_inverse=True)
        vocab = model.vocab
        return cls(tuple(vocab[t] for t in used.tolist()), block_rank.astype(np.int64),
                   term_index.astype(np.int64))  # fmt: skip

    @classmethod
    def from_blocks(cls, blocks: Sequence[Sequence[str]]) -> PageFeatures:
        """The page whose content blocks have these distinct features (:meth:`blocks`)."""
        terms = sorted({t for b in blocks for t in b})
        index = {t: i for i, t in enumerate(terms)}
        block = np.repeat(np.arange(len(blocks)), [len(set(b)) for b in blocks])
        term = np.fromiter((index[t] for b in blocks for t in sorted(set(b))), np.int64)
        return cls(tuple(terms), block.astype(np.int64), term)

    def blocks(self) -> list[list[str]]:
        """Each content block's distinct features (sorted), in block order."""
        n = int(self.block.max()) + 1 if len(self.block) else 0
        out: list[list[str]] = [[] for _ in range(n)]
        for b, t in zip(self.block.tolist(), self.term.tolist(), strict=True):
            out[b].append(self.terms[t])
        return [sorted(b) for b in out]

    def lowest(self, entropy: ArrayLike) -> NDArray[np.float64]:
        """Per feature (``terms`` order), the lowest H(CB) of a block holding it, with
        ``entropy`` aligned with ``terms`` (e.g. ``snapshot.entropy(features.terms)``)."""
        return _lowest(self.block, self.term, np.asarray(entropy, dtype=np.float64))


def feature_counts(
    pages: Sequence[tuple[PageModel, ArrayLike]], thresholds: ArrayLike
) -> NDArray[np.int64]:
    """Number of features in the informative blocks of ``pages`` at each of ``thresholds``:
    Σ over pages of the distinct features of the blocks with H(CB) ≤ threshold (the curve of
    the paper's Figure 5, before normalising by the answer set)."""
    return _counts_from_lowest((lowest_block_entropy(m, e) for m, e in pages), thresholds)


def _counts_from_lowest(
    lowest_per_page: Iterable[ArrayLike], thresholds: ArrayLike
) -> NDArray[np.int64]:
    """:func:`feature_counts` from each page's per-feature lowest block entropy."""
    grid = np.asarray(thresholds, dtype=np.float64)
    total = np.zeros(len(grid), np.int64)
    for lowest in lowest_per_page:
        total += np.searchsorted(np.sort(np.asarray(lowest, float)), grid + _EPS, side="right")
    return total


_EPS = 1e-9  # thresholds on a 0.1 grid are not exact binary fractions


def choose_threshold(
    pages: Sequence[tuple[PageModel, ArrayLike]],
    *,
    start: float = 0.1,
    stop: float = 0.9,
    step: float = 0.1,
    min_gain: float = 0.05,
) -> float:
    """The paper's greedy choice of the H(CB) threshold for one site (§4.5, §5).

    ``pages`` are a sample of the site's pages (the paper uses ten), each with its
    per-vocabulary entropy array. The threshold rises from ``start`` to ``stop`` by ``step``
    (0.1 … 0.9 by 0.1, as in the paper); each rise adds the features of the blocks whose H(CB)
    it passes. "If the increase of the threshold never includes more features, the boundary
    between informative and redundant blocks is reached": the result is the first threshold
    whose next step adds (almost) no features — the optimum of the paper's Figure 5, e.g. 0.2
    for ET and CTV "since it is converged after this point". Thresholds at which no block is
    informative yet are never a boundary. If the features keep growing up to ``stop``, the
    result is ``stop``.

    "No more features" is relaxed to "fewer new features than ``min_gain`` × those already
    included" (``min_gain=0`` is the paper's literal rule). The paper's news sites had a clean
    gap between informative blocks (H ≈ 0.1–0.3) and redundant ones (H ≈ 1); on real sites a
    few small in-between blocks (a "previous/next topic" box naming other pages, a "related"
    list) keep the count creeping up, so the literal rule runs to ``stop``. Measured on nine
    sections of the Python documentation (7–200 pages each, ten sampled, gold = the Sphinx
    body): the steps up to the knee add 7–3000 % features, the steps after it 0.3–6 %; the
    first step under 5 % gives a feature F1 within 0.025 of the best threshold's on eight
    sections (0.876 against 0.976 on the FAQ), the literal rule gives 0.9 on all nine.
    """
    lowest = [lowest_block_entropy(m, e) for m, e in pages]
    return choose_threshold_from_lowest(
        lowest, start=start, stop=stop, step=step, min_gain=min_gain
    )


def choose_threshold_from_lowest(
    lowest_per_page: Sequence[ArrayLike],
    *,
    start: float = 0.1,
    stop: float = 0.9,
    step: float = 0.1,
    min_gain: float = 0.05,
) -> float:
    """:func:`choose_threshold` for blocks that are not InfoDiscoverer's own (e.g. SMG's
    partitioner's): one array per page holding, for every distinct feature of the page, the
    lowest H(CB) of a block that has it (the feature is included from that threshold on)."""
    if step <= 0 or start > stop:
        raise ValueError("need step > 0 and start <= stop")
    grid = np.round(np.arange(start, stop + step / 2, step), 10)
    counts = _counts_from_lowest(lowest_per_page, grid)
    for k in range(len(grid) - 1):
        if counts[k] > 0 and counts[k + 1] - counts[k] <= min_gain * counts[k]:
            return float(grid[k])
    return float(grid[-1])


#: Resolution of :func:`split_threshold`'s histogram of H(CB) (one bin per 0.01).
SPLIT_BINS = 100


def split_threshold(lowest_per_page: Sequence[ArrayLike]) -> float:
    """The H(CB) threshold of a site from a sample of its pages, as a set: where the
    redundant blocks begin, found without needing the curve to flatten.

    ``lowest_per_page``: for every sampled page, the lowest H(CB) of a block holding each of
    its distinct features (:func:`lowest_block_entropy`, :meth:`PageFeatures.lowest`): the
    feature is among the informative blocks' features from that threshold on, so their
    histogram is the slope of the paper's Figure 5 curve. The paper's greedy rule raises the
    threshold until the curve stops rising: a gap in that histogram below the redundant
    blocks (H near 1). It keeps what lies below the gap, the blocks the paper calls
    ambiguous included (TTimes' "related news", §5, was kept at its optimal 0.7). Real sites
    have no empty gap: the informative blocks' H spreads widely (0.35–0.75 on
    python3.11-doc), and blocks that list other pages ("related", "most read", archives) lie
    in between, so the curve creeps up to the end or has small plateaus anywhere, and the
    first step "that adds little" depends on which pages were sampled (on the demo news
    site, ten pages gave anything from 0.1 to 0.9; too low a threshold keeps no article).

    The features are therefore split into the paper's **three kinds of block by H(CB)** —
    informative, ambiguous, redundant — with Otsu's criterion (the two cuts that maximise
    the between-group variance of H, on a histogram of :data:`SPLIT_BINS` bins over
    [0, 1]), and the threshold is the lower cut of the redundant group: the point the greedy
    search converges to. Two groups would not do: when the redundant blocks are few, the
    best two-way cut falls inside the informative blocks' spread. Nothing is fitted to a
    site: the cuts come from the sample's own H values, so the threshold follows the site's
    entropy scale (H rises with the number of pages N, as log N), and it is a function of
    the multiset of values: the order of the pages does not matter. With fewer than three
    occupied bins the lowest occupied bin is the informative group; with no feature, 1.0
    (nothing can be judged redundant).

    Measured (benchmarks/README.md, "cleaners"): on python3.11-doc, with stores of 32, 128
    and 530 pages, within 0.02 of the best threshold's article F1, and on the demo news site
    0.78–0.81 (the best 0.94–0.98, the greedy rule 0.61–0.77 on the same stores); over random
    samples of 100 pages of one store the threshold moves by at most 0.06 (30 pages: 0.08;
    ten pages: up to 0.26, which on python3.11-doc cuts into the articles).
    """
    values = [np.asarray(v, dtype=np.float64).ravel() for v in lowest_per_page]
    allv = np.clip(np.concatenate(values), 0.0, 1.0) if values else np.zeros(0)
    edges = np.linspace(0.0, 1.0, SPLIT_BINS + 1)
    hist = np.histogram(allv, bins=edges)[0].astype(np.float64)
    occupied = np.flatnonzero(hist)
    if len(occupied) == 0:
        return 1.0
    if len(occupied) < 3:
        return float(edges[occupied[0] + 1])
    centre = (edges[:-1] + edges[1:]) / 2
    w = np.r_[0.0, np.cumsum(hist)]  # w[k]: features in bins < k
    m = np.r_[0.0, np.cumsum(hist * centre)]
    n = SPLIT_BINS
    i, j = np.triu_indices(n + 1, k=1)  # groups [0, i), [i, j), [j, n)
    keep = (i > 0) & (j < n)
    i, j = i[keep], j[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        score = sum(
            np.where(w[b] > w[a], (m[b] - m[a]) ** 2 / (w[b] - w[a]), 0.0)
            for a, b in ((np.zeros_like(i), i), (i, j), (j, np.full_like(j, n)))
        )
    return float(edges[j[int(np.argmax(score))]])
