"""WISDOM (Kao, Ho, Chen): intra-page informative structure over a :class:`PageModel`.

Everything here works on the page model's node arrays (pre-order, ``subtree_end`` ranges, CSR
children): aggregation is a prefix sum (all five aggregated features in one), SII is one
``np.add.reduceat`` over the CSR children per feature (:func:`child_summary`), and the only
Python loops are the k-MIB best-first search (it visits a path of the tree, not the tree), the
merging walk up the skeleton's ancestors, and the look-up of each distinct (anchor, term) pair
in the linked page's terms.

Phase 1 — node features (§3.1)
    * Term weight ``W = 1 − EN`` (§3.1), EN from the site's term-entropy store.
    * **CII** (§3.1.1): mean W over the terms of a node's innerText
      (:meth:`PageModel.subtree_term_mean`); a node without terms has CII 0.
    * **API** (§3.1.2) of an anchor node: ``Σ 1/EN(t)`` over the distinct terms t of its anchor
      text that also occur in the *linked* page. Only anchors whose target has been fetched have
      an API (``target_terms(url)`` is not None); the others are "unknown" and take no part in
      averages. EN is clipped from below at ``log_N 2 = ln 2 / ln N`` (:func:`entropy_floor`):
      the paper argues EN > 0 because a matched term is in ≥ 2 pages (the anchor's page and the
      target); by Appendix A relationship (1), a term spread evenly over 2 of N pages has
      EN = log_N 2, the least entropy a two-page term has unless one page repeats it. Repetition
      in one page (or a store that has not seen the target yet: EN = 0) must not make a single
      matched term worth hundreds of anchors, so 1/EN is capped at ``log_2 N``, the weight of the
      rarest term that can match at all.
    * **SII** (§3.1.3) of node N for an aggregated feature f_A: the normalised entropy
      ``−Σ w_j log_m w_j`` of f_A over N's m non-dummy children. *Dummy* children are the page
      model's ``dummy`` nodes (hidden: script, style, head …; layout-only: br, hr, wbr) and
      nodes without any visible text (TLEN_A = 0: empty spans, images, inputs), which "provide no
      useful information". The paper's DOM has text nodes as children; this model has elements
      only, so a node's *own* value ``f_A(N) − Σ f_A(children)`` (the text directly in N) takes
      part as one more child when it is positive. Convention for m ≤ 1 (a leaf, or one child
      holding everything): SII = 0 — the entropy of a point mass; the paper defines SII only
      "for any node with more than one child". All children at 0: SII = 0 (nothing to spread).

Phase 2 — information coverage tree and k-MIB (§3.2)
    * **ICT** (§3.2.1): ``f_A(N) = f(N) + Σ f_A(children)``, computed for all nodes at once as
      prefix-sum differences over the pre-order ``subtree_end`` ranges (:func:`ict_aggregate`).
      ALEN_A, CLEN_A, TLEN_A come aggregated from the page model; API_A is aggregated here.
    * **k-MIB(k, f_A, ST)** (§3.2.2): the paper gives no pseudocode. Our reading of its text and
      Fig. 8 (:func:`k_mib`): a best-first, top-down search from the root ordered by f_A. The
      popped node N is a *candidate* when SII(N, f_A) ≥ ST (its information is spread evenly
      over its children: the root of a block), when it is a leaf for f_A (no non-dummy child with
      f_A > 0), or when its own text outweighs every child (in the paper's DOM the search would
      go down to that text node, whose element is N). A candidate that satisfies the type
      constraint is accepted into the skeleton. One that does not is a pseudo-informative block:
      it is not selected, and (``explore_rejected``, default) its children are searched in turn —
      a candidate that mixes a block with template (a two-child container of sidebar and
      content has SII ≈ 1 whenever the two happen to weigh the same) fails the constraint as a
      whole but holds a block. With ``explore_rejected=False`` its sub-tree is dropped instead
      (the paper's "uninformative sub-trees are removed"). A non-candidate is split: its
      non-dummy children with f_A > 0 enter the queue. The search stops after k accepted nodes,
      which are never ancestors of one another, as the paper notes.
    * **Type constraints** (:func:`type_constraint`): article ``CII(N) ≥ 1 − TC_article``;
      TOC ``API_A(N) / #anchors(N) ≥ TC_TOC``, #anchors counting the anchors of T(N) whose API is
      known (an anchor whose target has not been fetched says nothing either way). TC_TOC
      defaults to ``1 / TC_article`` = 1.25, the paper's own derivation: "each basic informative
      link contains one matching term with entropy 0.8". That derivation presupposes that the
      matched terms have entropy ≤ 0.8, so a TOC block must also have a LAMIS link entropy (mean
      EN of the terms of its links' anchor texts, [16]) of at most TC_article: otherwise a box
      of long, site-wide anchors ("Most read" with full headlines on every page) passes on sheer
      anchor length, each template term adding ≈ 1 to API. Link entropy counts anchors that link
      to another page (:func:`link_anchors`), not in-page "#" anchors.

Phase 3 — expanding and condensing (§3.3)
    * **DSTM** merges every sibling S' of a skeleton node S that is not a dummy (f_A(S') > 0,
      the §3.3 definition) and satisfies the type constraint, if ``f_A(S') < f_A(S)``. The paper
      skips larger siblings because "they are checked in the previous searching paths of the
      k-MIB algorithm and have been either selected into the skeleton set or removed"; a larger
      sibling that the search *split* (not a candidate, children queued) was neither, so it
      qualifies too.
    * **k-CSTM** applies DSTM to P_k, the k-th *non-singleton* ancestor of S: walking up from
      S's parent, the ancestors that have at least one non-dummy sibling (we read "has more than
      one non-dummy sibling node" as "is not the only non-dummy child of its parent"; Fig. 9's
      P_1 has two P_1' siblings either way). The default is the paper's DSTM + 1-CSTM.
    * **Expansion depth from the page** (``cstm_extend``, default on): the paper's news
      articles sit one or two levels below their block root, so 1-CSTM reaches it; documents
      with sections in sections put the skeleton deeper. After the listed levels, k-CSTM goes on
      to the next level for as long as the previous one was *complete*: its qualified siblings
      carry at least as much f_A as the non-qualified ones (a small heading or note failing the
      type constraint does not end a section, a menu or footer outweighing what qualifies does).
      The first incomplete level is the block's boundary and the last level applied.
    * **Siblings without terms** (a listing's line numbers, the symbol spans of highlighted
      code) are no evidence in an article, as in condensing: they never make a level
      incomplete, and they join the block when they lie between merged siblings or when every
      other sibling qualified: otherwise the gutter beside a listing would stop the expansion at
      the listing, and a post would shrink to its code.
    * **Condensing** (:func:`condense`) removes, inside every merged tree, the maximal sub-trees
      that fail the type constraint ("dummy sub-trees … mainly tags for the page layout").
      Nothing inside the text flow of a node with text of its own is removed (:func:`text_flow`):
      cutting an inline link, emphasis or a code span out of a sentence would cut the sentence.
      In an article only block-level elements (HTML's block tags, :func:`layout_nodes`) are
      units — the inline spans of a highlighted line of code have no text around them but make
      up one line; in a TOC, whose units are links, any element outside a text flow is one (an
      icon link in a navigation bar). Sub-trees without any term (code symbols, "¶") carry no
      evidence for the type constraint and stay. CII is a mean over few terms in small
      sub-trees ("when the size of IBs is divided into smaller ones, the number of extracted
      terms in each small block decreases, so does the accuracy of corresponding CII", §4.2),
      so a sub-tree fails only when it is below the line by more than one standard error
      (:func:`type_constraint` with ``tolerant``; ``tolerance`` parameter): for articles
      ``CII + σ_W/√k < 1 − TC_article`` with σ_W the standard deviation of the page's term
      weights and k the sub-tree's number of terms — a two-word "Next topic" of site-wide terms
      goes, a two-word heading of common but not site-wide words stays; for TOCs the same on
      the mean API (over scored anchors) and the link entropy (over link terms), so one index
      entry of common words is not cut out of an index. k-MIB and the merging qualification
      keep the paper's strict constraint: with the doubt, navigation bars of half-common words
      would qualify as siblings. With ``condense_dummies`` (default on), §3.3 dummies go too
      (:func:`dummies`): link lists in an article, link-less paragraphs in a TOC.

TOC blocks without API (§4.4, Fig. 21)
    When most anchors cannot be scored by API (targets not fetched yet, or no common terms),
    TOC blocks are mined with f_A = ALEN_A and SII(ALEN_A) instead. The choice is made per page
    by :func:`toc_feature`: the ratio of zero-API anchors among *meaningful* anchors, those
    whose anchor text has at least one term (only such an anchor can match its target at all,
    so this is the page's own length threshold: an anchor without a term is as short as anchor
    text gets). An anchor with an unfetched target counts as zero-API. Above
    ``zero_api_ratio`` (default 0.5: API decides only if it scores most anchors that could be
    scored) the ALEN criterion is used. In ALEN mode the API part of the TOC type constraint
    cannot be evaluated, and the link-entropy part is the whole constraint.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = [
    "FEATURES",
    "ChildSummary",
    "InformativeStructure",
    "MibSearch",
    "MinedBlock",
    "NodeFeatures",
    "TermIds",
    "WisdomParams",
    "anchor_precision",
    "child_summary",
    "condense",
    "dummies",
    "entropy_floor",
    "ict_aggregate",
    "k_mib",
    "layout_nodes",
    "link_anchors",
    "link_targets",
    "merge_siblings",
    "mine",
    "node_features",
    "parse_merge",
    "structure_information_index",
    "term_weights",
    "text_flow",
    "toc_feature",
    "type_constraint",
]

#: Aggregated features k-MIB can search by (WISDOM Table 1).
FEATURES: tuple[str, ...] = ("alen", "clen", "tlen", "api")

BlockKind = Literal["article", "toc"]
TargetTerms = Callable[[str], "Collection[str] | None"]


class TermIdSpace(Protocol):
    """A vocabulary shared by many pages' :class:`TermIds`: a term's id, None for one it lacks."""

    def term_id(self, term: str) -> int | None: ...


class TermIds(AbstractSet[str]):
    """A page's terms held compactly: their sorted distinct ids into a vocabulary ``space``
    shared by many pages (the crawl's index of fetched pages' terms). :func:`anchor_precision`
    tests every (anchor, term) pair of a page against such sets in one search over their ids
    (:func:`_pairs_held`) instead of one membership test a pair. A subclass lists the terms
    (``__iter__``: the space's strings of :attr:`ids`)."""

    __slots__ = ("ids", "space")

    def __init__(self, ids: NDArray[np.int64], space: TermIdSpace) -> None:
        self.ids = ids
        self.space = space

    def __contains__(self, term: object) -> bool:
        i = self.space.term_id(term) if isinstance(term, str) else None
        if i is None:
            return False
        at = int(np.searchsorted(self.ids, i))
        return at < self.ids.size and int(self.ids[at]) == i

    def __len__(self) -> int:
        return int(self.ids.size)


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


def parse_merge(spec: str | Sequence[str]) -> tuple[bool, tuple[int, ...]]:
    """``"dstm,1-cstm"`` → ``(True, (1,))``: whether DSTM runs and which k-CSTM levels.

    Accepts a comma-separated string or a sequence of items; ``""``/``"none"`` merges nothing.
    """
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    dstm = False
    levels: list[int] = []
    for raw in items:
        item = raw.strip().lower()
        if not item or item == "none":
            continue
        if item == "dstm":
            dstm = True
            continue
        head, sep, tail = item.partition("-")
        if sep and tail == "cstm" and head.isdigit() and int(head) >= 1:
            levels.append(int(head))
            continue
        raise ValueError(f"unknown merging method {raw!r}: use 'dstm' and 'k-cstm' (k ≥ 1)")
    return dstm, tuple(sorted(set(levels)))


@lru_cache(maxsize=64)
def _parse_merge_cached(spec: str) -> tuple[bool, tuple[int, ...]]:
    return parse_merge(spec)


@dataclass(frozen=True)
class WisdomParams:
    """WISDOM's parameters, with the paper's defaults (§4.4: k=1, ST=0.8, TC=(0.8, 1.25),
    DSTM + 1-CSTM); the module docstring explains each choice.

    ``tc_toc``: TC_TOC; ``None`` derives it from TC_article (:attr:`toc_threshold`, 1.25).
    ``merge``: merging methods, e.g. ``"dstm,1-cstm"`` or ``"dstm,1-cstm,2-cstm"``.
    ``cstm_extend``: continue k-CSTM past the listed levels while a level is complete (the
    expansion depth taken from the page). ``condense`` / ``condense_dummies``: block
    condensing, and whether it removes §3.3 dummies too. ``tolerance``: condensing removes
    only what fails the type constraint by more than one standard error.
    ``explore_rejected``: k-MIB searches the children of a candidate that fails the type
    constraint (default) instead of dropping its sub-tree.
    ``min_pages``: fewest pages the site's store must know for entropy-based mining; below it
    :func:`wisdom_scrapy.analysis.page_analysis.analyze_page` uses the single-page extractor.
    ``None`` derives it from ``tc_article`` (:attr:`warm_pages`).
    ``zero_api_ratio``: above this share of zero-API meaningful anchors, TOC blocks are mined by
    ALEN instead of API (:func:`toc_feature`); ``toc_feature`` forces "api" or "alen".
    """

    k: int = 1
    st: float = 0.8
    tc_toc: float | None = None
    tc_article: float = 0.8
    merge: str = "dstm,1-cstm"
    cstm_extend: bool = True
    condense: bool = True
    condense_dummies: bool = True
    tolerance: bool = True
    toc_feature: Literal["auto", "api", "alen"] = "auto"
    zero_api_ratio: float = 0.5
    min_pages: int | None = None
    explore_rejected: bool = True

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be ≥ 1, got {self.k}")
        if not 0.0 <= self.st <= 1.0:
            raise ValueError(f"ST must be in [0, 1], got {self.st}")
        if not 0.0 < self.tc_article <= 1.0:
            raise ValueError(f"TC_article must be in (0, 1], got {self.tc_article}")
        if self.tc_toc is not None and self.tc_toc < 0:
            raise ValueError(f"TC_TOC must be ≥ 0, got {self.tc_toc}")
        if not 0.0 <= self.zero_api_ratio <= 1.0:
            raise ValueError(f"zero_api_ratio must be in [0, 1], got {self.zero_api_ratio}")
        if self.toc_feature not in ("auto", "api", "alen"):
            raise ValueError(f"toc_feature must be auto, api or alen, got {self.toc_feature!r}")
        if self.min_pages is not None and self.min_pages < 2:
            raise ValueError(f"min_pages must be ≥ 2, got {self.min_pages}")
        parse_merge(self.merge)

    @property
    def merging(self) -> tuple[bool, tuple[int, ...]]:
        """:func:`parse_merge` of :attr:`merge`."""
        return _parse_merge_cached(self.merge)

    @property
    def toc_threshold(self) -> float:
        """TC_TOC: ``tc_toc`` if set, else ``1 / TC_article`` (1.25 for the default 0.8).

        The paper's own derivation (§4.2): "we assume that each basic informative link contains
        one matching term with entropy 0.8, and its API value is 1.25" — the TOC threshold is
        the API of one matched term at the article threshold's entropy, so the two move together.
        """
        if self.tc_toc is not None:
            return self.tc_toc
        return 1.0 / self.tc_article

    @property
    def warm_pages(self) -> int:
        """Fewest site pages for entropy to mean something under the article type constraint.

        ``min_pages`` if set, else ``⌈2^(1/(1 − TC_article))⌉`` (32 for the default 0.8): a term
        spread evenly over half of a site's N pages has EN = log_N(N/2), i.e. W = ln 2 / ln N.
        Only from N = 2^(1/(1−TC_article)) pages on is such a half-the-site term below the
        article constraint's line W = 1 − TC_article, i.e. can entropy tell a block made of
        semi-template words (a sidebar shared by half the pages) from content at all. With fewer
        pages every term but the ubiquitous ones looks informative.
        """
        if self.min_pages is not None:
            return self.min_pages
        return math.ceil(2.0 ** (1.0 / (1.0 - self.tc_article)) - 1e-9)

    def is_warm(self, site_pages: int) -> bool:
        """Whether a site of ``site_pages`` known pages is *warm*: its term entropies mean
        something (:attr:`warm_pages`). The package's one definition of warm: the analysis
        mines with entropy from here on, the link analysis and the focusing start here, and
        the cold-start hold (``WISDOM_WARMUP_PAGES``) ends here at the latest."""
        return site_pages >= self.warm_pages


DEFAULT_PARAMS = WisdomParams()


# --------------------------------------------------------------------------------------------
# Phase 1: node features
# --------------------------------------------------------------------------------------------


def term_weights(entropy: ArrayLike) -> NDArray[np.float64]:
    """W = 1 − EN for every term (WISDOM §3.1), clipped to [0, 1]."""
    return np.clip(1.0 - np.asarray(entropy, dtype=np.float64), 0.0, 1.0)


def entropy_floor(n_pages: int) -> float:
    """The least EN a matched term is credited with in API: ``log_N 2`` (1 for N ≤ 2).

    See the module docstring: the entropy of a term spread evenly over two of N pages, the
    minimum for a term that is in both the anchor's page and the linked page (Appendix A,
    relationship (1)), so that 1/EN ≤ log_2 N.
    """
    if n_pages <= 2:
        return 1.0
    return math.log(2.0) / math.log(n_pages)


def ict_aggregate(values: ArrayLike, subtree_end: ArrayLike) -> NDArray[np.float64]:
    """Information coverage tree (§3.2.1): ``f_A(N) = f(N) + Σ f_A(children)`` for all nodes.

    ``values`` are per-node own values in pre-order (or one column per feature) and
    ``subtree_end[i]`` ends node i's range (PageModel conventions), so each sum is a prefix-sum
    difference: O(n), no recursion.
    """
    v = np.asarray(values, dtype=np.float64)
    end = np.asarray(subtree_end, dtype=np.int64)
    csum = np.zeros((len(v) + 1, *v.shape[1:]), dtype=np.float64)
    np.cumsum(v, axis=0, out=csum[1:])
    return csum[end] - csum[:-1]


def _sii_children(model: PageModel) -> NDArray[np.bool_]:
    """Nodes that count as children for SII: not dummy and with visible text (TLEN_A > 0)."""
    return ~model.dummy & (model.tlen > 0)


class ChildSummary(NamedTuple):
    """Per node, sums over its CSR children for one aggregated feature f (one reduceat).

    ``own``: f(N) − Σ f(children), the node's own value. ``total``/``slog``/``m``: Σ v, Σ v ln v
    and the number of SII children (not dummy, TLEN_A > 0) with v their f. ``count``/``best``:
    number and largest f of the non-dummy children with f > 0 (what k-MIB searches);
    ``kid_slot`` marks those children in the CSR child list (``model.child_index``).
    """

    own: NDArray[np.float64]
    total: NDArray[np.float64]
    slog: NDArray[np.float64]
    m: NDArray[np.float64]
    kids: NDArray[np.float64]
    best: NDArray[np.float64]
    kid_slot: NDArray[np.bool_]


def child_summary(
    model: PageModel, f_a: ArrayLike, *, counted: NDArray[np.bool_] | None = None
) -> ChildSummary:
    """:class:`ChildSummary` of ``f_a``: one ``np.add.reduceat`` of a five-column matrix over
    the CSR children and one ``np.maximum.reduceat``; no Python loop over nodes."""
    f = np.asarray(f_a, dtype=np.float64)
    n = model.n
    cs, ci = model.child_start, model.child_index
    if counted is None:
        counted = _sii_children(model)
    fc = f[ci]
    ok = counted[ci]
    v = np.where(ok, fc, 0.0)
    vlogv = np.zeros_like(v)
    pos = v > 0
    vlogv[pos] = v[pos] * np.log(v[pos])
    kid = ~model.dummy[ci] & (fc > 0)
    cols = np.zeros((len(ci) + 1, 5), dtype=np.float64)  # the pad row makes every start valid
    cols[:-1, 0] = fc
    cols[:-1, 1] = v
    cols[:-1, 2] = vlogv
    cols[:-1, 3] = ok
    cols[:-1, 4] = kid
    starts = np.asarray(cs[:-1], dtype=np.intp)
    leaf = cs[1:] == cs[:-1]
    sums = np.add.reduceat(cols, starts, axis=0) if n else np.zeros((0, 5))
    sums[leaf] = 0.0
    best = np.maximum.reduceat(np.append(np.where(kid, fc, 0.0), 0.0), starts) if n else sums[:, 0]
    best[leaf] = 0.0
    own = np.maximum(f - sums[:, 0], 0.0)
    own[own < 1e-9 * np.maximum(f, 1.0)] = 0.0  # float noise of the aggregation
    return ChildSummary(own, sums[:, 1], sums[:, 2], sums[:, 3], sums[:, 4], best, kid)


def structure_information_index(
    model: PageModel,
    f_a: ArrayLike,
    *,
    counted: NDArray[np.bool_] | None = None,
    summary: ChildSummary | None = None,
) -> NDArray[np.float64]:
    """SII(N, f_A) for every node N at once (WISDOM §3.1.3; conventions in the module docstring).

    ``counted`` marks the nodes that count as children (default: not dummy, TLEN_A > 0). The
    node's own value ``f_A(N) − Σ f_A(children)`` is one more child when positive. Vectorised
    over the CSR children (:func:`child_summary`); no Python loop over nodes.
    """
    n = model.n
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    c = summary if summary is not None else child_summary(model, f_a, counted=counted)
    has_own = c.own > 0
    total = c.total + c.own
    slog = c.slog.copy()
    slog[has_own] += c.own[has_own] * np.log(c.own[has_own])
    m = c.m + has_own
    sii = np.zeros(n, dtype=np.float64)
    good = (m >= 2) & (total > 0)
    t = total[good]
    sii[good] = (np.log(t) - slog[good] / t) / np.log(m[good])
    return np.clip(sii, 0.0, 1.0, out=sii)


def anchor_precision(
    model: PageModel,
    entropy: ArrayLike,
    target_terms: TargetTerms | None,
    *,
    n_pages: int,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """API of every anchor node (§3.1.2) and whether it is known (its target was fetched).

    ``entropy`` has one EN per ``model.vocab`` term; ``target_terms(url)`` returns the linked
    page's terms, or None when that page has not been fetched. API = Σ 1/max(EN(t), floor) over
    the distinct terms t of the anchor text found in the target's terms (floor:
    :func:`entropy_floor`). Non-anchor nodes and anchors without a crawlable target (fragment
    links, mailto:, javascript: …) have API 0 and are not known. The (anchor, term) pairs are
    gathered for all anchors at once; only the look-up of each distinct pair in its target's
    terms is Python.
    """
    n = model.n
    api = np.zeros(n, dtype=np.float64)
    known = np.zeros(n, dtype=bool)
    if target_terms is None or n == 0:
        return api, known
    nodes, urls = link_targets(model)
    cache: dict[str, Collection[str] | None] = {}
    targets: list[Collection[str]] = []
    keep: list[int] = []
    for k, url in enumerate(urls):
        if url not in cache:
            got = target_terms(url)
            # Anything with fast membership is used as it is; a plain sequence becomes a set.
            cache[url] = got if got is None or isinstance(got, AbstractSet | Mapping) else set(got)
        target = cache[url]
        if target is not None:
            keep.append(k)
            targets.append(target)
    if not keep:
        return api, known
    sel = nodes[keep]
    known[sel] = True
    ts = model.term_start
    lo = ts[sel]
    cnt = ts[model.subtree_end[sel]] - lo
    total = int(cnt.sum())
    if total == 0:
        return api, known
    owner = np.repeat(np.arange(len(sel)), cnt)
    first = np.cumsum(cnt) - cnt
    pos = np.repeat(lo, cnt) + (np.arange(total) - np.repeat(first, cnt))
    vocab_size = len(model.vocab)
    pairs = np.unique(owner * vocab_size + model.term_ids[pos].astype(np.int64))
    a, t = np.divmod(pairs, vocab_size)
    hit = _pairs_held(targets, a, t, model.vocab)
    inv = 1.0 / np.maximum(np.asarray(entropy, dtype=np.float64), entropy_floor(n_pages))
    api[sel] = np.bincount(a[hit], weights=inv[t[hit]], minlength=len(sel))
    return api, known


def _pairs_held(
    targets: list[Collection[str]], a: NDArray[np.int64], t: NDArray[np.int64], vocab: list[str]
) -> NDArray[np.bool_]:
    """Whether ``vocab[t[k]] in targets[a[k]]``, for every pair k.

    When every target is a :class:`TermIds` of one space (a crawl's fetched pages), each
    distinct term is looked up in the space once and all pairs are searched at once: the
    targets' sorted ids, each offset by its place among the distinct targets times a bound
    on the ids, make one sorted array (0.6 ms a pydoc page of membership tests in a crawl).
    Other collections are asked pair by pair."""
    first = targets[0]
    space = first.space if isinstance(first, TermIds) else None
    if space is None or not all(
        isinstance(target, TermIds) and target.space is space for target in targets
    ):
        return np.fromiter(
            (vocab[ti] in targets[ai] for ai, ti in zip(a.tolist(), t.tolist(), strict=True)),
            dtype=bool,
            count=len(a),
        )
    place: dict[int, int] = {}  # id(target) -> its place among the distinct targets
    group = np.fromiter((place.setdefault(id(x), len(place)) for x in targets), np.int64,
                        len(targets))  # fmt: skip
    distinct = [x for x in {id(x): x for x in targets}.values() if isinstance(x, TermIds)]
    used = np.unique(t)
    found = [space.term_id(vocab[ti]) for ti in used.tolist()]
    term_of = np.full(len(vocab), -1, dtype=np.int64)
    term_of[used] = [-1 if i is None else i for i in found]
    sizes = [x.ids.size for x in distinct]
    bound = 1 + max([int(term_of.max()), *(int(x.ids[-1]) for x in distinct if x.ids.size)])
    keys = np.concatenate([np.zeros(0, np.int64)] + [x.ids.astype(np.int64) for x in distinct])
    keys += np.repeat(np.arange(len(distinct), dtype=np.int64) * bound, sizes)
    ids = term_of[t]
    wanted = group[a] * bound + ids
    at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    return (ids >= 0) & (keys[at] == wanted) if len(keys) else np.zeros(len(a), dtype=bool)


def link_targets(model: PageModel) -> tuple[NDArray[np.int64], list[str]]:
    """The anchor nodes that link to another page and their target URLs, from
    :meth:`PageModel.links` (one definition of a page's links, shared with the store's feed,
    which has computed them on the model already when the crawl pipeline analyses a page).
    The nodes are the model's own read-only array (:attr:`PageModel.link_nodes`)."""
    return model.link_nodes, [lk.url for lk in model.links()]


def link_anchors(model: PageModel) -> NDArray[np.int64]:
    """The anchor nodes that link to another page (:func:`link_targets`). LAMIS's link entropy
    is a property of links between pages, so in-page "#" anchors take no part in it. The
    model's own read-only array (:attr:`PageModel.link_nodes`)."""
    return model.link_nodes


def _standard_error(values: NDArray[np.float64], k: NDArray[np.float64]) -> NDArray[np.float64]:
    """σ(values) / √k per node (k clipped to ≥ 1; σ = 0 for fewer than two values)."""
    sigma = float(values.std()) if len(values) > 1 else 0.0
    return sigma / np.sqrt(np.maximum(k, 1.0))


@dataclass
class NodeFeatures:
    """Every WISDOM feature of one page's nodes (arrays over nodes unless said otherwise).

    ``entropy``/``weight``: EN and W = 1 − EN per ``model.vocab`` term. ``cii``: CII.
    ``api``/``api_known``: per-anchor API and whether its target was fetched; ``api_a``,
    ``known_a``: their ICT aggregates (API_A and the number of scored anchors in T(N)).
    ``link_entropy_sum``/``link_terms``: Σ EN and number of anchor-text terms in T(N) (LAMIS
    link entropy = their ratio); ``link_entropy_sd``: standard deviation of EN over the page's
    link-text term occurrences. ``context_terms``: terms of T(N) outside anchors.
    ``alen``/``clen``/``tlen``: ALEN_A, CLEN_A, TLEN_A.
    ``n_pages``: pages of the site the entropies come from.

    CII, the API aggregates, the link-entropy sums and the context terms are computed when
    first asked: a page's article search reads no link entropy, its TOC search no CII, and
    each column of the information coverage tree is its own running sum, so computing them
    apart gives the same numbers. So ``weight``, ``api`` and ``api_known`` are read when a
    search first asks, not at construction: they must not be changed in place after it.
    """

    model: PageModel
    entropy: NDArray[np.float64]
    weight: NDArray[np.float64]
    api: NDArray[np.float64]
    api_known: NDArray[np.bool_]
    n_pages: int
    _sii: dict[str, NDArray[np.float64]] = field(default_factory=dict, repr=False)
    _summary: dict[str, ChildSummary] = field(default_factory=dict, repr=False)

    @cached_property
    def cii(self) -> NDArray[np.float64]:
        """CII of every node: the mean term weight of T(N)."""
        return self.model.subtree_term_mean(self.weight) if self.model.n else np.zeros(0)

    @cached_property
    def _link_stats(self) -> tuple[NDArray[np.float64], float]:
        """:func:`_link_statistics` of the page (what its TOC search reads)."""
        return _link_statistics(self.model, self.entropy, self.api, self.api_known)

    @property
    def api_a(self) -> NDArray[np.float64]:
        return self._link_stats[0][:, 0]

    @property
    def known_a(self) -> NDArray[np.float64]:
        return self._link_stats[0][:, 1]

    @property
    def link_entropy_sum(self) -> NDArray[np.float64]:
        return self._link_stats[0][:, 2]

    @property
    def link_terms(self) -> NDArray[np.float64]:
        return self._link_stats[0][:, 3]

    @property
    def link_entropy_sd(self) -> float:
        return self._link_stats[1]

    @cached_property
    def context_terms(self) -> NDArray[np.float64]:
        """Terms of T(N) outside every anchor."""
        m = self.model
        return ict_aggregate(np.diff(m.term_start).astype(np.float64) * ~m.in_anchor,
                             m.subtree_end)  # fmt: skip

    @property
    def alen(self) -> NDArray[np.int64]:
        return self.model.alen

    @property
    def clen(self) -> NDArray[np.int64]:
        return self.model.clen

    @property
    def tlen(self) -> NDArray[np.int64]:
        return self.model.tlen

    def feature(self, name: str) -> NDArray[np.float64]:
        """The aggregated feature f_A named ``alen``, ``clen``, ``tlen`` or ``api``."""
        if name == "api":
            return self.api_a
        if name in ("alen", "clen", "tlen"):
            return self._int_features[name]
        raise ValueError(f"unknown feature {name!r}: one of {', '.join(FEATURES)}")

    @cached_property
    def _int_features(self) -> dict[str, NDArray[np.float64]]:
        m = self.model
        return {
            "alen": m.alen.astype(np.float64),
            "clen": m.clen.astype(np.float64),
            "tlen": m.tlen.astype(np.float64),
        }

    def summary(self, name: str) -> ChildSummary:
        """:func:`child_summary` of the feature ``name`` (computed once per feature)."""
        if name not in self._summary:
            self._summary[name] = child_summary(self.model, self.feature(name))
        return self._summary[name]

    def sii(self, name: str) -> NDArray[np.float64]:
        """SII(N, f_A) for every node (computed once per feature)."""
        if name not in self._sii:
            self._sii[name] = structure_information_index(
                self.model, self.feature(name), summary=self.summary(name)
            )
        return self._sii[name]

    @cached_property
    def in_flow(self) -> NDArray[np.bool_]:
        """:func:`text_flow` of the page (computed once)."""
        return text_flow(self.model)

    @cached_property
    def layout(self) -> NDArray[np.bool_]:
        """:func:`layout_nodes` of the page (computed once)."""
        return layout_nodes(self.model, self.in_flow)

    @cached_property
    def link_entropy(self) -> NDArray[np.float64]:
        """LAMIS link entropy of T(N): mean EN of its anchor-text terms (1 when it has none)."""
        out = np.ones(self.model.n, dtype=np.float64)
        np.divide(self.link_entropy_sum, self.link_terms, out=out, where=self.link_terms > 0)
        return out

    @cached_property
    def se_weight(self) -> NDArray[np.float64]:
        """Standard error of CII: σ(term weights of the page) / √(terms of T(N))."""
        m = self.model
        w = self.weight[m.term_ids] if len(m.term_ids) else np.zeros(0)
        k = (m.term_start[m.subtree_end] - m.term_start[:-1]).astype(np.float64)
        return _standard_error(w, k)

    @cached_property
    def se_api(self) -> NDArray[np.float64]:
        """Standard error of the mean API: σ(API of the page's scored anchors) / √(scored
        anchors of T(N))."""
        return _standard_error(self.api[self.api_known], self.known_a)

    @cached_property
    def se_link_entropy(self) -> NDArray[np.float64]:
        """Standard error of the link entropy: σ(EN of the page's link terms) / √(link terms of
        T(N))."""
        return self.link_entropy_sd / np.sqrt(np.maximum(self.link_terms, 1.0))

    @cached_property
    def mean_api(self) -> NDArray[np.float64]:
        """API_A(N) / #scored anchors in T(N) (0 where no anchor of T(N) is scored)."""
        out = np.zeros(self.model.n, dtype=np.float64)
        np.divide(self.api_a, self.known_a, out=out, where=self.known_a > 0)
        return out

    @cached_property
    def meaningful_anchors(self) -> NDArray[np.bool_]:
        """Anchor nodes whose anchor text has at least one term (could match a target)."""
        m = self.model
        mask = np.zeros(m.n, dtype=bool)
        if m.n == 0:
            return mask
        a = m.anchor_nodes
        ts = m.term_start
        mask[a] = ts[m.subtree_end[a]] > ts[a]
        return mask


def node_features(
    model: PageModel,
    entropy: ArrayLike,
    *,
    n_pages: int,
    target_terms: TargetTerms | None = None,
) -> NodeFeatures:
    """Phase 1 of WISDOM for one page: API now; CII, API_A, the link-entropy sums and the
    context terms when a search first reads them (:class:`NodeFeatures`).

    ``entropy`` gives EN for each ``model.vocab`` term (e.g. ``snapshot.entropy(model.vocab)``);
    ``n_pages`` is the number of site pages those entropies come from (for the API floor).
    """
    en = np.asarray(entropy, dtype=np.float64)
    if en.shape != (len(model.vocab),):
        raise ValueError(f"entropy needs one value per vocab term ({len(model.vocab)})")
    api, known = anchor_precision(model, en, target_terms, n_pages=n_pages)
    return NodeFeatures(model=model, entropy=en, weight=term_weights(en), api=api,
                        api_known=known, n_pages=n_pages)  # fmt: skip


def _link_statistics(
    model: PageModel, en: NDArray[np.float64], api: NDArray[np.float64],
    known: NDArray[np.bool_],
) -> tuple[NDArray[np.float64], float]:
    """For :class:`NodeFeatures`: the ICT aggregates of ``api``, of ``known`` (the scored
    anchors), of Σ EN of the link-text terms and of their number, as four columns; and the
    standard deviation of EN over the page's link-text term occurrences."""
    end, ts = model.subtree_end, model.term_start
    # own terms per node: all of a node's own terms are link text when the node is inside a
    # link anchor, context when it is outside every anchor (term_start groups terms by owner)
    own_terms = np.diff(ts).astype(np.float64)
    links = model.link_nodes
    in_link = _range_mask(links, end[links], model.n)
    e = en[model.term_ids]
    csum = np.zeros((len(e) + 1, 2), dtype=np.float64)
    np.cumsum(np.stack([e, e * e], axis=1), axis=0, out=csum[1:])
    own_en = csum[ts[1:]] - csum[ts[:-1]]  # Σ EN, Σ EN² of each node's own terms
    link_cnt = own_terms * in_link
    n_link = float(link_cnt.sum())
    if n_link > 1:
        mean = float(own_en[in_link, 0].sum()) / n_link
        sd = math.sqrt(max(float(own_en[in_link, 1].sum()) / n_link - mean * mean, 0.0))
    else:
        sd = 0.0
    own = np.stack([api, known, own_en[:, 0] * in_link, link_cnt], axis=1)
    return ict_aggregate(own, end), sd


# --------------------------------------------------------------------------------------------
# Type constraints and the TOC feature choice
# --------------------------------------------------------------------------------------------


def toc_feature(features: NodeFeatures, params: WisdomParams = DEFAULT_PARAMS) -> tuple[str, float]:
    """Which feature mines TOC blocks on this page, "api" or "alen" (§4.4, Fig. 21), and the
    zero-API ratio it was chosen by (share of meaningful anchors with API 0 or unknown; 1.0
    when the page has no meaningful anchor). See the module docstring."""
    meaningful = features.meaningful_anchors
    total = int(meaningful.sum())
    if total == 0:
        ratio = 1.0
    else:
        scored = meaningful & features.api_known & (features.api > 0)
        ratio = 1.0 - float(scored.sum()) / total
    if params.toc_feature != "auto":
        return params.toc_feature, ratio
    return ("alen" if ratio > params.zero_api_ratio else "api"), ratio


def type_constraint(
    features: NodeFeatures,
    kind: BlockKind,
    params: WisdomParams = DEFAULT_PARAMS,
    *,
    mode: str = "api",
    tolerant: bool = False,
) -> NDArray[np.bool_]:
    """Per node: does T(N) satisfy the type constraint of ``kind`` (§3.2.2)?

    article: ``CII ≥ 1 − TC_article``. toc, ``mode="api"``: ``API_A / #scored anchors ≥ TC_TOC``
    and LAMIS link entropy ≤ TC_article (no scored anchor, no link term: fails). toc,
    ``mode="alen"``: the link-entropy part only.

    ``tolerant``: each mean gets one standard error of the benefit of the doubt — ``σ/√k``
    with σ the standard deviation of the averaged quantity over the page (term weights, API of
    the scored anchors, entropies of link terms) and k the number of values T(N) averages —
    so that a sub-tree fails only when it is *surely* on the wrong side: a mean over two terms
    says little (the module docstring, condensing).
    """
    if kind not in ("article", "toc"):
        raise ValueError(f"unknown block kind {kind!r}")
    if mode not in ("api", "alen"):
        raise ValueError(f"unknown TOC mode {mode!r}: api or alen")
    eps = 1e-12
    if kind == "article":
        doubt = features.se_weight if tolerant else 0.0
        return features.cii + doubt >= 1.0 - params.tc_article - eps
    doubt_en = features.se_link_entropy if tolerant else 0.0
    informative_links = (features.link_terms > 0) & (
        features.link_entropy - doubt_en <= params.tc_article + eps
    )
    if mode == "alen":
        return informative_links
    doubt_api = features.se_api if tolerant else 0.0
    return (
        informative_links
        & (features.known_a > 0)
        & (features.mean_api + doubt_api >= params.toc_threshold - eps)
    )


# --------------------------------------------------------------------------------------------
# Phase 2: k-MIB
# --------------------------------------------------------------------------------------------


def _non_dummy_children(
    model: PageModel, node: int, f: NDArray[np.float64], summary: ChildSummary | None = None
) -> NDArray[np.int32]:
    """The children of ``node`` that are not dummy and have f > 0."""
    lo, hi = model.child_start[node], model.child_start[node + 1]
    kids = model.child_index[lo:hi]
    if summary is not None:
        return kids[summary.kid_slot[lo:hi]]
    return kids[~model.dummy[kids] & (f[kids] > 0)]


@dataclass(frozen=True)
class MibSearch:
    """What one k-MIB search found and decided.

    ``skeleton``: accepted nodes, best f_A first. ``split``: node mask of the nodes the search
    split (popped, not a candidate, children queued). ``rejected``: node mask of the candidates
    that failed the type constraint (removed with their subtree).
    """

    skeleton: list[int]
    split: NDArray[np.bool_]
    rejected: NDArray[np.bool_]


def k_mib(
    model: PageModel,
    f_a: NDArray[np.float64],
    sii: NDArray[np.float64],
    passes: NDArray[np.bool_],
    *,
    k: int = 1,
    st: float = 0.8,
    explore_rejected: bool = False,
    root: int = 0,
    summary: ChildSummary | None = None,
) -> MibSearch:
    """k-maximum informative blocks (§3.2.2): the skeleton nodes, best f_A first.

    Best-first top-down search from ``root`` by ``f_a`` (see the module docstring for the
    reading): a node is a candidate when ``sii ≥ st``, when it has no non-dummy child with
    f_A > 0, or when its own value is at least that of its best child; an accepted candidate
    satisfies ``passes`` (the type constraint); a rejected one is removed with its subtree
    (or split, with ``explore_rejected``). Stops at ``k`` accepted nodes.
    """
    n = model.n
    split = np.zeros(n, dtype=bool)
    rejected = np.zeros(n, dtype=bool)
    out: list[int] = []
    if n == 0 or f_a[root] <= 0:
        return MibSearch(out, split, rejected)
    c = summary if summary is not None else child_summary(model, f_a)
    # the search visits a few nodes of the page: each is read where it is, no page-wide list
    heap: list[tuple[float, int]] = [(-float(f_a[root]), root)]
    while heap and len(out) < k:
        _, node = heapq.heappop(heap)
        leaf = c.kids[node] == 0
        if leaf or sii[node] >= st or c.own[node] >= c.best[node]:  # a candidate
            if passes[node]:
                out.append(node)
                continue
            rejected[node] = True
            if not explore_rejected or leaf:
                continue
        split[node] = True
        kids = _non_dummy_children(model, node, f_a, c)
        for key, kid in zip((-f_a[kids]).tolist(), kids.tolist(), strict=True):
            heapq.heappush(heap, (key, kid))
    return MibSearch(out, split, rejected)


# --------------------------------------------------------------------------------------------
# Phase 3: expanding and condensing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MinedBlock:
    """One informative block: the sub-tree of ``node``.

    ``origin``: "skeleton" (found by k-MIB), "dstm" (a merged direct sibling of ``skeleton``) or
    "cstm<k>" (a merged sibling of the k-th non-singleton ancestor of ``skeleton``).
    """

    node: int
    kind: BlockKind
    origin: str
    skeleton: int


def _non_singleton_ancestors(
    model: PageModel,
    node: int,
    f_a: NDArray[np.float64],
    upto: int,
    count: NDArray[np.float64] | None = None,
) -> list[int]:
    """The first ``upto`` ancestors of ``node`` that have a non-dummy sibling (§3.3)."""
    out: list[int] = []
    parent = model.parent
    count = child_summary(model, f_a).kids if count is None else count
    p = int(parent[node])
    while p >= 0 and len(out) < upto:
        pp = int(parent[p])
        if pp >= 0 and count[pp] > 1 and f_a[p] > 0:
            out.append(p)
        p = pp
    return out


def _dstm(
    model: PageModel,
    node: int,
    f_a: NDArray[np.float64],
    passes: NDArray[np.bool_],
    split: NDArray[np.bool_] | None,
    summary: ChildSummary | None = None,
    neutral: NDArray[np.bool_] | None = None,
) -> tuple[list[int], bool]:
    """Qualified siblings of ``node`` (non-dummy, type constraint, and f_A smaller than node's or
    split — undecided — by the k-MIB search), and whether every non-dummy sibling qualified.

    A ``neutral`` sibling (no term: code symbols, punctuation, a listing's line numbers) is no
    evidence either way, as in condensing: it never counts against the level, and it joins the
    block when it lies between ``node`` and qualified siblings or when every other sibling
    qualified (the block spans the whole parent)."""
    p = int(model.parent[node])
    if p < 0:
        return [], False
    kids = _non_dummy_children(model, p, f_a, summary)
    sib = kids[kids != node]
    smaller = f_a[sib] < f_a[node]
    if split is not None:
        smaller |= split[sib]
    ok = passes[sib] & smaller
    against = ~ok
    if neutral is not None and len(sib):
        none = neutral[sib]
        against = ~ok & ~none
        run = np.append(sib[ok], node)  # the block's span over the siblings
        ok |= none & ((sib > run.min()) & (sib < run.max()) | ~against.any())
    return sib[ok].tolist(), bool(f_a[sib[ok]].sum() >= f_a[sib[against]].sum())


def merge_siblings(
    model: PageModel,
    skeleton: Sequence[int],
    f_a: NDArray[np.float64],
    passes: NDArray[np.bool_],
    kind: BlockKind,
    *,
    dstm: bool = True,
    cstm: Sequence[int] = (1,),
    extend: bool = False,
    split: NDArray[np.bool_] | None = None,
    summary: ChildSummary | None = None,
) -> list[MinedBlock]:
    """Expand the skeleton with DSTM and k-CSTM (§3.3, Fig. 9); blocks in document order.

    ``cstm`` lists the k of the k-CSTM steps. With ``extend``, k-CSTM goes on past the highest
    listed level (DSTM is level 0) for as long as the previous level merged *every* non-dummy
    sibling — the block evidently spans that whole parent, so the parent's siblings are the next
    collateral candidates — and merges a further level only when all of its siblings qualify
    too. The first level with a sibling that does not qualify (a menu, a footer: the block's
    boundary) ends the expansion and merges nothing. Blocks inside another block are dropped
    (a merged ancestor already covers them).
    """
    blocks: dict[int, MinedBlock] = {}
    for s in skeleton:
        blocks.setdefault(s, MinedBlock(s, kind, "skeleton", s))
    levels = sorted(set(cstm))
    top = levels[-1] if levels else 0
    count: NDArray[np.float64] | None = None
    ts = model.term_start
    neutral = ts[model.subtree_end] == ts[:-1] if kind == "article" else None
    for s in skeleton:
        complete = False
        if dstm:
            merged, complete = _dstm(model, s, f_a, passes, split, summary, neutral)
            for sib in merged:
                blocks.setdefault(sib, MinedBlock(sib, kind, "dstm", s))
        if not levels and not (extend and dstm and complete):
            continue
        if count is None:
            count = child_summary(model, f_a).kids if summary is None else summary.kids
        ancestors = _non_singleton_ancestors(model, s, f_a, model.n if extend else top, count)
        for level, p_k in enumerate(ancestors, start=1):
            if level in levels or (level > top and extend and complete):
                merged, complete = _dstm(model, p_k, f_a, passes, split, summary, neutral)
            elif level > top:
                break
            else:
                continue
            for sib in merged:
                blocks.setdefault(sib, MinedBlock(sib, kind, f"cstm{level}", s))
    nodes = np.array(sorted(blocks), dtype=np.int64)
    if len(nodes) == 0:
        return []
    end = model.subtree_end[nodes]
    covered_until = np.maximum.accumulate(end)
    inside = np.zeros(len(nodes), dtype=bool)
    inside[1:] = nodes[1:] < covered_until[:-1]
    return [blocks[int(i)] for i in nodes[~inside]]


def condense(
    model: PageModel,
    roots: Sequence[int],
    passes: NDArray[np.bool_],
    *,
    dummy: NDArray[np.bool_] | None = None,
    layout: NDArray[np.bool_] | None = None,
) -> NDArray[np.bool_]:
    """Block condensing (§3.3): mask of the nodes removed from the merged trees ``roots``.

    Inside each root (never the root itself), every layout node (:func:`layout_nodes`: a
    block-level element outside any text flow; ``layout`` overrides the units) that has terms
    and fails ``passes`` (WISDOM's :func:`mine` passes the tolerant type constraint), or is
    marked in ``dummy``, is removed with its subtree. Vectorised over the node ranges.
    """
    n = model.n
    removed = np.zeros(n, dtype=bool)
    if not len(roots) or n == 0:
        return removed
    starts = np.asarray(roots, dtype=np.int64)
    inside = _range_mask(starts + 1, model.subtree_end[starts], n)
    structural = layout_nodes(model) if layout is None else layout
    has_terms = model.term_start[model.subtree_end] > model.term_start[:-1]
    bad = ~passes & has_terms  # no term, no evidence: punctuation, code symbols, "¶"
    if dummy is not None:
        bad = bad | dummy
    # nodes without visible text are nothing to remove (and removing them changes no text)
    hit = np.flatnonzero(inside & structural & bad & (model.tlen > 0))
    return _range_mask(hit, model.subtree_end[hit], n)


def text_flow(model: PageModel) -> NDArray[np.bool_]:
    """Nodes inside the text flow of an ancestor with text of its own (a link or an emphasis in
    a sentence, a code span in a line of code): cutting them out would cut that text."""
    texty = np.flatnonzero(model.own_len > 0)
    return _range_mask(texty + 1, model.subtree_end[texty], model.n)


def layout_nodes(model: PageModel, in_flow: NDArray[np.bool_] | None = None) -> NDArray[np.bool_]:
    """Nodes that are page layout rather than a piece of running text: block-level elements
    (HTML's block tags, :data:`wisdom_scrapy.page.model.BLOCK_TAGS`, and table cells) outside any
    text flow (:func:`text_flow`). Inline elements with no text around them (the spans of
    highlighted code, an icon link) belong to the line they make up."""
    from wisdom_scrapy.page.model import BLOCK_TAGS

    block_tag = np.array([t in BLOCK_TAGS or t in ("td", "th") for t in model.tag_names] + [False])
    if in_flow is None:
        in_flow = text_flow(model)
    return block_tag[model.tag_id] & ~in_flow


def _range_mask(starts: NDArray, ends: NDArray, n: int) -> NDArray[np.bool_]:
    """Mask of the union of the ranges ``[starts[k], ends[k])`` (nesting allowed)."""
    if len(starts) == 0:
        return np.zeros(n, dtype=bool)
    diff = np.bincount(starts, minlength=n + 1) - np.bincount(ends, minlength=n + 1)
    return np.cumsum(diff[:n]) > 0


# --------------------------------------------------------------------------------------------
# All phases
# --------------------------------------------------------------------------------------------


@dataclass
class InformativeStructure:
    """The informative structure of one block type on one page (WISDOM's IS).

    ``blocks``: merged blocks in document order (skeleton first found by k-MIB, then DSTM/CSTM
    siblings). ``removed``: node mask of the sub-trees condensing took out of them.
    ``feature``: the f_A it was mined by ("clen" for articles; "api" or "alen" for TOCs).
    """

    kind: BlockKind
    feature: str
    blocks: list[MinedBlock]
    removed: NDArray[np.bool_]
    skeleton: list[int]

    def region(self, model: PageModel) -> NDArray[np.bool_]:
        """Node mask of the blocks' sub-trees (condensed parts included)."""
        roots = np.array([b.node for b in self.blocks], dtype=np.int64)
        return _range_mask(roots, model.subtree_end[roots], model.n)

    def covered(self, model: PageModel) -> NDArray[np.bool_]:
        """Node mask of the structure: inside some block and not removed."""
        return self.region(model) & ~self.removed


def dummies(features: NodeFeatures, kind: BlockKind) -> NDArray[np.bool_]:
    """§3.3's dummy nodes (f_A = 0) for condensing, counted in terms rather than characters.

    Article: terms in anchor text and none outside anchors — a link list, also when "»", "|"
    or "·" separate its links (CLEN_A > 0 but no context). A sub-tree without any term carries
    no evidence either way and stays, as in the type constraint: code or symbols without
    links, a "[1]" reference in a table cell. TOC: no term in link text (paragraphs,
    abstracts, in-page anchors).
    """
    if kind == "article":
        m = features.model
        terms = (m.term_start[m.subtree_end] - m.term_start[:-1]).astype(np.float64)
        return (features.context_terms <= 0) & (terms > 0)
    return features.link_terms <= 0


def mine(
    features: NodeFeatures,
    kind: BlockKind,
    params: WisdomParams = DEFAULT_PARAMS,
    *,
    feature: str | None = None,
    repeated: NDArray[np.bool_] | None = None,
) -> InformativeStructure:
    """k-MIB + merging + condensing for one block type (WISDOM §3.2–3.3).

    Articles are mined by CLEN_A, TOCs by API_A or ALEN_A (``feature``, default
    :func:`toc_feature`'s choice); the type constraint follows the feature. ``repeated``
    marks the nodes whose exact text the site repeats on several pages
    (:mod:`wisdom_scrapy.mining.repetition`): condensing gives them no benefit of the doubt
    (a sub-tree failing the strict type constraint goes).
    """
    model = features.model
    if feature is None:
        feature = "clen" if kind == "article" else toc_feature(features, params)[0]
    mode = "api" if feature == "api" else "alen"
    passes = type_constraint(features, kind, params, mode=mode)
    qualifies = (
        type_constraint(features, kind, params, mode=mode, tolerant=True)
        if params.tolerance
        else passes
    )
    if repeated is not None:
        qualifies = qualifies & (passes | ~repeated)
    f_a = features.feature(feature)
    search = k_mib(
        model,
        f_a,
        features.sii(feature),
        passes,
        k=params.k,
        st=params.st,
        explore_rejected=params.explore_rejected,
        summary=features.summary(feature),
    )
    dstm, cstm = params.merging
    skeleton = search.skeleton
    blocks = merge_siblings(
        model,
        skeleton,
        f_a,
        passes,
        kind,
        dstm=dstm,
        cstm=cstm,
        extend=params.cstm_extend,
        split=search.split,
        summary=features.summary(feature),
    )
    if params.condense and blocks:
        removed = condense(
            model,
            [b.node for b in blocks],
            qualifies,
            dummy=dummies(features, kind) if params.condense_dummies else None,
            # an article is condensed by blocks; a TOC by anything outside a text flow: an
            # icon link or a label in a navigation bar is a unit of a link list
            layout=features.layout if kind == "article" else ~features.in_flow,
        )
    else:
        removed = np.zeros(model.n, dtype=bool)
    return InformativeStructure(kind, feature, blocks, removed, skeleton)
