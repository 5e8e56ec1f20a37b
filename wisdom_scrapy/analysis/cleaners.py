"""Page cleaners selectable per crawl (``WISDOM_CLEANER``), all producing the same ArticleItem.

=================  =========================================================================
cleaner            what decides which parts of a page are kept
=================  =========================================================================
``wisdom``         WISDOM's k-MIB article structure (:mod:`wisdom_scrapy.analysis.page_analysis`),
                   default
``sst``            the site style tree: MapSST with MarkNoise/MarkMeaningful and the site's
                   automatic threshold t (:mod:`wisdom_scrapy.mining.styletree`)
``cst``            the compressed structure tree's feature weights (MapCST); a virtual leaf's
                   text is kept when its mean feature weight passes the site's Otsu split
``infodiscoverer`` InfoDiscoverer's informative content blocks, with its greedy per-site
                   entropy threshold (:mod:`wisdom_scrapy.mining.infodiscoverer`)
``template``       Bar-Yossef's template pagelets (k = 3) removed (:mod:`.mining.template`)
=================  =========================================================================

Every cleaner turns a page into a **keep mask** (nodes whose own text is kept) and a
**feature vector** ``{term: weight}``: the term counts of the kept text, or, for ``cst``, the
weighted features of eq. (5-10) summed per term over the page (MapCST). The mask gives the
ArticleItem's ``text`` and ``html`` exactly as WISDOM's article does (the lowest common
ancestor of the kept nodes, without the sub-trees that keep nothing); the vector is the item's
``features`` field (as ``{"term", "weight"}`` records, :func:`~wisdom_scrapy.items.
feature_records`), a sparse vector for ``sklearn.feature_extraction.DictVectorizer``.

Page roles stay WISDOM's: the cleaner replaces the body of the pages WISDOM calls articles (a
TOC page is a TocItem, an "other" page a PageItem, whatever the cleaner), so every cleaner
emits the same set of ArticleItems and only their bodies differ; an article page of which the
cleaner keeps no text becomes "other".

Site-level cleaners learn from the crawl's pages as they are fed
(:meth:`~wisdom_scrapy.engine.cleaning.Cleaners.observe`, before the page is analysed) and keep
what they learned in the store's keyed records (``put_records(site, "cleaner-<name>", ...)``)
when the crawl stops, so a restarted crawl of the site starts from it. A style tree takes at
most ``sample_pages`` pages (the thesis's k = 500); it is saved as soon as it is full and again
at close.
"""

from __future__ import annotations

import json
import logging
import weakref
import zlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from wisdom_scrapy.analysis.page_analysis import (
    Block,
    clean_features,
    owner_of,
    term_weights,
)
from wisdom_scrapy.mining.infodiscoverer import (
    PageFeatures,
    informative_mask,
    lowest_block_entropy,
    split_threshold,
)
from wisdom_scrapy.mining.styletree import (
    CST_PARAMS,
    SST_PARAMS,
    CstWeights,
    PageMap,
    SstMarks,
    StyleTree,
    map_page,
)
from wisdom_scrapy.mining.template import TemplateDetector
from wisdom_scrapy.page.terms import stable_hash

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.analysis.page_analysis import PageAnalysis
    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.store import EntropySnapshot

__all__ = ["CLEANERS", "Cleaned", "SiteCleaner", "apply_cleaned", "site_cleaner"]

logger = logging.getLogger(__name__)

#: Values of ``WISDOM_CLEANER``.
CLEANERS = ("wisdom", "sst", "cst", "infodiscoverer", "template")
#: A cached importance is recomputed when the tree has grown by this factor (or got full).
_GROWTH = 1.1


@dataclass
class Cleaned:
    """One cleaned page: ``keep`` (own text kept, per node), ``features`` (term → weight)."""

    keep: NDArray[np.bool_]
    features: dict[str, float]
    figures: dict[str, float] = field(default_factory=dict)


class SiteCleaner:
    """What one site's cleaner learns and how it cleans a page (subclasses per method)."""

    name = ""

    def observe(self, url: str, model: PageModel) -> bool:
        """Learn from one fetched page; True if something changed."""
        return False

    def see(self, snapshot: EntropySnapshot) -> None:
        """The site's entropies the next pages are cleaned with (before :meth:`clean`)."""

    def clean(self, url: str, model: PageModel, entropy: NDArray[np.float64] | None) -> Cleaned:
        raise NotImplementedError

    @property
    def full(self) -> bool:
        return False

    def to_bytes(self) -> bytes:
        return b""

    def load(self, blob: bytes) -> None:
        """Restore what an earlier crawl saved (:meth:`to_bytes`)."""


class _TreeCleaner(SiteCleaner):
    def __init__(self, params: Any) -> None:
        self.tree = StyleTree(params)
        self._cached: Any = None
        self._cached_pages = 0

    @property
    def full(self) -> bool:
        return self.tree.full

    def observe(self, url: str, model: PageModel) -> bool:
        return self.tree.add_page(model, url)

    def _importance(self) -> Any:
        pages = self.tree.pages
        stale = self._cached is None or pages > self._cached_pages * _GROWTH
        if stale or (self.tree.full and self._cached_pages != pages):
            self._cached, self._cached_pages = self._compute(), pages
        return self._cached

    def _compute(self) -> Any:
        raise NotImplementedError

    def to_bytes(self) -> bytes:
        return self.tree.to_bytes()

    def load(self, blob: bytes) -> None:
        self.tree = StyleTree.from_bytes(blob)
        self._cached = None


class SstCleaner(_TreeCleaner):
    """MapSST (Fig. 4-7) over the site style tree, with the §4.2.5 enhancements."""

    name = "sst"

    def _compute(self) -> tuple[SstMarks, NDArray[np.int64]]:
        marks = self.tree.sst_marks()
        return marks, marks.local_noise(self.tree.params.epsilon)

    def clean(self, url: str, model: PageModel, entropy: NDArray[np.float64] | None) -> Cleaned:
        marks, local = self._importance()
        page = map_page(self.tree, model, stop=marks.noisy, known=marks.arrays.n)
        n, end = model.n, model.subtree_end
        # unmatched sub-trees (a style the site never showed here: possibly meaningful) and
        # the own text of matched internal nodes are kept
        unmatched = np.asarray(page.unmatched, np.int64)
        keep = _ranges(unmatched, end[unmatched], n)
        keep[[d for _, d in page.internal]] = True
        owner = owner_of(model)
        occ_keep = np.zeros(len(owner), bool)
        if page.leaves:  # every virtual leaf at once
            le, ld, lens, which, occ, codes = _leaf_occurrences(page, model)
            noisy = np.isin(codes, local) if len(local) else np.zeros(len(codes), bool)
            all_noisy = (lens > 0) & (np.bincount(which, noisy, len(ld)) == lens)
            a = marks.arrays
            # a leaf whose element's leaf content is noise on the site, or that holds nothing
            # but locally noisy features (§4.2.5 (3)), is dropped
            dropped = ((a.leaf_m[le] > 0) & (marks.leaf_imp[le] <= marks.threshold)) | all_noisy
            keep |= _ranges(ld[~dropped], end[ld[~dropped]], n)
            in_leaf = _ranges(ld, end[ld], n)
            occ_keep[occ] = ~noisy & ~dropped[which]
        else:
            in_leaf = np.zeros(n, bool)
        keep &= ~model.hidden
        occ_keep |= keep[owner] & ~in_leaf[owner]
        figures = {"sst_threshold": marks.threshold, "sst_pages": float(self.tree.pages)}
        return Cleaned(keep, term_weights(model, occ_keep), figures)


def _leaf_occurrences(page: PageMap, model: PageModel) -> tuple[NDArray[np.int64], ...]:
    """The virtual leaves a page met, all at once: their elements ``le`` and tag nodes
    ``ld``, how many term occurrences each holds (``lens``), and per occurrence its leaf
    (``which``), its index in the page's term arrays (``occ``) and its pair code
    element << 32 | term (``codes``)."""
    end, ts = model.subtree_end, model.term_start
    le = np.fromiter((e for e, _ in page.leaves), np.int64, len(page.leaves))
    ld = np.fromiter((d for _, d in page.leaves), np.int64, len(page.leaves))
    lo, hi = ts[ld], ts[end[ld]]
    lens = hi - lo
    which = np.repeat(np.arange(len(ld)), lens)
    occ = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens) + lo[which]
    codes = (le[which] << 32) | page.view.terms[occ]
    return le, ld, lens, which, occ, codes


def _ranges(starts: NDArray[Any], stops: NDArray[Any], n: int) -> NDArray[np.bool_]:
    """Node mask of the union of the ranges [start, stop) (sub-trees)."""
    diff = np.zeros(n + 1, np.int64)
    np.add.at(diff, starts, 1)
    np.add.at(diff, stops, -1)
    return np.cumsum(diff[:n]) > 0


class CstCleaner(_TreeCleaner):
    """MapCST (Fig. 4-10): weighted features; text of the virtual leaves that weigh enough."""

    name = "cst"

    def _compute(self) -> CstWeights:
        return self.tree.cst_weights()

    def clean(self, url: str, model: PageModel, entropy: NDArray[np.float64] | None) -> Cleaned:
        w: CstWeights = self._importance()
        page = map_page(self.tree, model, known=w.arrays.n)
        end, ts = model.subtree_end, model.term_start
        owner = owner_of(model)
        weight = np.ones(len(owner))  # unmatched sub-trees: weight 1 (MapCST line 18)
        keep = np.ones(model.n, bool)
        for e, d in page.internal:  # own text of matched internal nodes: structure only
            weight[ts[d] : ts[d + 1]] = w.path_imp[e]
        if page.leaves:  # every virtual leaf at once: weights, and the leaves too light
            _, ld, lens, which, occ, codes = _leaf_occurrences(page, model)
            values = w.lookup(codes)
            weight[occ] = values
            with np.errstate(divide="ignore", invalid="ignore"):
                mean = np.bincount(which, values, len(ld)) / lens
            light = ld[(lens > 0) & (mean < w.leaf_threshold)]
            keep &= ~_ranges(light, end[light], model.n)
        keep &= ~model.hidden
        figures = {
            "cst_leaf_threshold": w.leaf_threshold,
            "cst_m": w.m,
            "cst_pages": float(self.tree.pages),
        }
        return Cleaned(keep, term_weights(model, ~model.hidden[owner], weight), figures)


class TemplateCleaner(SiteCleaner):
    """Bar-Yossef's local template detection (pagelets, k = 3)."""

    name = "template"

    def __init__(self) -> None:
        self.detector = TemplateDetector()

    def observe(self, url: str, model: PageModel) -> bool:
        return self.detector.add_page(model, url)

    def clean(self, url: str, model: PageModel, entropy: NDArray[np.float64] | None) -> Cleaned:
        keep = self.detector.keep_mask(model, url) & ~model.hidden
        figures = {"template_pages": float(self.detector.pages)}
        return Cleaned(keep, clean_features(model, keep), figures)

    def to_bytes(self) -> bytes:
        return self.detector.to_bytes()

    def load(self, blob: bytes) -> None:
        self.detector = TemplateDetector.from_bytes(blob)


class InfoDiscovererCleaner(SiteCleaner):
    """InfoDiscoverer's informative blocks, with a threshold that depends on the site's pages
    as a set, not on the order the crawl met them.

    * **Which pages.** The paper chooses the threshold on a random sample of the page cluster
      (ten pages, §5). The sample here is the ``SAMPLE`` observed pages whose URLs hash lowest
      (a bottom-k sample: a random-like subset that is the same whatever the crawl order, and
      every page of a site of up to ``SAMPLE`` pages); ten pages left the threshold to chance
      (see :func:`~wisdom_scrapy.mining.infodiscoverer.split_threshold`). Each sampled page
      is kept as its blocks' features (:class:`~wisdom_scrapy.mining.infodiscoverer.
      PageFeatures`), not as its model.
    * **With which entropies.** H(CB) is a mean of entropies whose logarithm base is the
      site's page count, so a block's H rises as the site grows: a threshold chosen on the
      first snapshot of a crawl (32 pages) is too low for the pages cleaned with the snapshot
      of 500 pages, which then keep nothing. The threshold is chosen again for every new
      snapshot the pages are cleaned with (:meth:`see`; the crawl re-reads it as the site
      grows by 10 %), from the sample's H(CB) under that snapshot: the same snapshot and the
      same sample give the same threshold.
    * **The rule**: :func:`~wisdom_scrapy.mining.infodiscoverer.split_threshold`.

    The sample is what is stored for a restarted crawl (its blocks' features, as JSON).
    """

    name = "infodiscoverer"
    #: Pages in the sample the threshold is chosen from.
    SAMPLE = 100

    def __init__(self) -> None:
        #: url -> (rank of its hash, its blocks' features): the bottom-``SAMPLE`` sample
        self.sample: dict[str, tuple[int, PageFeatures]] = {}
        self.threshold: float | None = None
        #: the snapshot the threshold was chosen with (weakly: the crawl lets snapshots go)
        self._snapshot: weakref.ref[EntropySnapshot] | None = None

    def observe(self, url: str, model: PageModel) -> bool:
        if not model.n:
            return False
        rank = stable_hash(url)
        if url not in self.sample and len(self.sample) >= self.SAMPLE:
            last = max(self.sample, key=lambda u: self.sample[u][0])
            if rank >= self.sample[last][0]:
                return False
            del self.sample[last]
        self.sample[url] = (rank, PageFeatures.of(model))
        return True

    def see(self, snapshot: EntropySnapshot) -> None:
        if self._snapshot is not None and self._snapshot() is snapshot:
            return
        self._snapshot = weakref.ref(snapshot)
        lowest = [f.lowest(snapshot.entropy(f.terms)) for _, f in self.sample.values()]
        self.threshold = split_threshold(lowest) if lowest else None

    def clean(self, url: str, model: PageModel, entropy: NDArray[np.float64] | None) -> Cleaned:
        if entropy is None:  # no site entropy yet: nothing can be judged redundant
            keep = ~model.hidden
            return Cleaned(keep, clean_features(model, keep), {})
        threshold = self.threshold
        if threshold is None:  # no sample (a page cleaned on its own): the page is the sample
            threshold = split_threshold([lowest_block_entropy(model, entropy)])
        keep = informative_mask(model, entropy, threshold) & ~model.hidden
        figures = {"infodiscoverer_threshold": threshold}
        return Cleaned(keep, clean_features(model, keep), figures)

    def to_bytes(self) -> bytes:
        if not self.sample:
            return b""
        pages = {url: f.blocks() for url, (_, f) in sorted(self.sample.items())}
        return zlib.compress(json.dumps({"pages": pages}, sort_keys=True).encode())

    def load(self, blob: bytes) -> None:
        if not blob:
            return
        try:
            pages = json.loads(zlib.decompress(blob))["pages"]
            sample = {url: (stable_hash(url), PageFeatures.from_blocks(blocks))
                      for url, blocks in pages.items()}  # fmt: skip
        except (zlib.error, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"unreadable InfoDiscoverer sample: {exc}") from exc
        self.sample, self.threshold, self._snapshot = sample, None, None


def site_cleaner(name: str, *, sample_pages: int = 500) -> SiteCleaner:
    """A fresh cleaner of one site for ``WISDOM_CLEANER`` = ``name`` (not "wisdom")."""
    if name == "sst":
        return SstCleaner(replace(SST_PARAMS, sample_pages=sample_pages))
    if name == "cst":
        return CstCleaner(replace(CST_PARAMS, sample_pages=sample_pages))
    if name == "template":
        return TemplateCleaner()
    if name == "infodiscoverer":
        return InfoDiscovererCleaner()
    raise ValueError(f"unknown cleaner {name!r}: use one of {', '.join(CLEANERS)}")


def apply_cleaned(analysis: PageAnalysis, model: PageModel, cleaned: Cleaned, name: str) -> None:
    """Put a cleaner's result in ``analysis`` (article text, html, block, features, role)."""
    analysis.features = cleaned.features
    analysis.figures.update(cleaned.figures)
    if analysis.role != "article":
        return
    texty = np.flatnonzero(cleaned.keep & (model.own_len > 0))
    analysis.blocks = [b for b in analysis.blocks if b.kind == "toc"]
    analysis._html = None
    if not len(texty):
        analysis.role, analysis.article_text = "other", ""
        analysis.article_node = analysis.article_exclude = None
        return
    body = model.lca(texty)
    end = model.subtree_end
    csum = np.concatenate([[0], np.cumsum(cleaned.keep & (model.own_len > 0))])
    has_kept = csum[end] - csum[np.arange(model.n)] > 0
    exclude = ~has_kept
    exclude[:body] = False
    exclude[end[body] :] = False
    top = exclude.copy()
    top[1:] &= ~exclude[model.parent[1:]]
    analysis.article_node, analysis.article_exclude = body, exclude
    analysis.article_text = model.text_of(body, exclude=np.flatnonzero(top))
    analysis.role = "article" if analysis.article_text.strip() else "other"
    analysis.metadata = []
    analysis.blocks.insert(0, Block("article", body, model.path(body), name, {}))
