"""SMG: sitemap generation from blocks (Lin, Chu, Chiu; §4.3–4.6), without Scrapy; the crawl's
side is :mod:`wisdom_scrapy.sitemap`.

*Automatic sitemaps generation: Exploring website structures using block extraction and
hyperlink analysis*, Expert Systems with Applications. The page-level stages (H2S
translation, SEG, R_SEG partitioning) live in :mod:`wisdom_scrapy.segment`; this module keeps
what a page's blocks need for the site-level stages (:func:`page_blocks`, a compact record
that the store keeps across restarts and processes) and runs those stages:

Block Identifier (§4.3, Fig. 8)
    ACR = |T_A| / |T_C| (anchor text over block text; an image link counts its ``alt`` text,
    or the page's average anchor length when it has none). ACR ≤ 0.1 → content block (CB),
    ACR ≥ 0.5 → link block (LB); in between InfoDiscoverer decides (H(CB) = mean entropy of
    the block's distinct terms, threshold by InfoDiscoverer's greedy choice over the site's
    blocks): informative → CB, redundant → LB. Revisions: a CB InfoDiscoverer kept that is
    low-complexity dominant becomes a structure block (SB); an LB becomes SB when it holds
    intra-site links (for the in-between band only when it is high-complexity dominant, as
    the paper says), otherwise it is a redundant block (RB, e.g. a box of outside links).
Block Cluster (§4.4)
    SBs are compared by local alignment (Smith–Waterman, parasail) of their H2S sequences with
    the paper's substitution matrix (Table 2) and BLAST's default gap costs (open 11, extend
    1); a score is normalised by the larger self-score of the two sequences (the "maximal"
    score: a block aligned with itself), and pairs scoring ≥ θ = 0.9 are semantically
    identical. Clusters are the connected groups of such pairs; a block's occurrence frequency
    |b| is the number of blocks in its cluster when the block is repeated on a page it links
    to (steps 5–6, :meth:`_Analyzer.occurrence`), else 1. Identical sequences are grouped
    first (most template blocks repeat verbatim), and a MinHash index over 4-mers proposes the
    pairs worth aligning, so a site of 10⁴ pages is not aligned all-pairs.
Hyperlink Analyzer (§4.5, eqs. 3–5)
    Block-to-block EN-HITS: a link of block p (page u) to page v with LAMIS weight α_uv is
    expanded to every block q of v with β_pq = α_uv · (1 − EN(q) / Σ_{b∈v} EN(b)) (a page of
    one block, or of blocks without entropy, passes α on unchanged); hubs and authorities come
    from :func:`wisdom_scrapy.mining.lamis.hits` (the site-structure stage's power iteration).
SiteMap Analyzer (§4.6)
    Level by level from the home page: on each page, among its SBs that do not start in the
    last 20 % of the page's text and whose cluster was not used on an upper level, the one with
    the highest |b| × hub is the sitemap block (SMB); its intra-site links (anchor text as
    title) are the next level's entries. Clusters used at a level are not reused below.
    Two deviations keep the site's own hierarchy where an SMB has nested lists (a table of
    contents): only the outermost list level of an SMB gives entries
    (:meth:`BlockInfo.top_links`), and a page that some SMB of the same level nests under
    another page (:meth:`BlockInfo.nested_parents`) is left for below that page instead of
    being promoted by a flat index, and an entry so nested under a sibling entry moves below
    it (:func:`build_sitemap`). Below level 1 a block's score counts only the share of its
    links that its siblings' blocks of the same cluster do not also hold
    (:meth:`_Analyzer.shared_links`). A link whose anchor text holds no word (page numbers,
    an alphabet bar) is no entry (:func:`names_a_page`).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import scipy.sparse as sp

from wisdom_scrapy.mining.infodiscoverer import choose_threshold_from_lowest
from wisdom_scrapy.mining.lamis import hits, link_weights
from wisdom_scrapy.page.terms import extract_terms
from wisdom_scrapy.segment import SegParams, partition, translate

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.segment import H2SSequence

__all__ = [
    "ACR_CONTENT",
    "ACR_LINK",
    "BOTTOM_SHARE",
    "H2S_MATRIX",
    "THETA",
    "BlockInfo",
    "PageBlocks",
    "Sitemap",
    "build_sitemap",
    "cluster_blocks",
    "identify_blocks",
    "names_a_page",
    "page_blocks",
    "similarity",
]

ACR_CONTENT, ACR_LINK = 0.1, 0.5  # §4.3
THETA = 0.9  # §4.4 / §5.3
BOTTOM_SHARE = 0.2  # §4.6: blocks in the last k % of a page are ignored (k = 20)
GAP_OPEN, GAP_EXTEND = 11, 1  # BLAST's blastp defaults, which the paper used
ALIGN_CAP = 1000  # symbols of a block aligned (from its start): bounds the O(n·m) alignment
KMER, MINHASHES, BANDS = 4, 64, 16

# SMG Table 2 in the order the paper prints it (the protein alphabet); '*' is never emitted by
# H2S. The transcription is not symmetric in two cells (T/B, T/Z: 4 in the B and Z rows, −1 in
# the T row) and lost a few (read as −1): the matrix is made symmetric with the larger value.
_ORDER = "ARNDCQEGHILKMFPSTWYVBZX*"
_DIAG_SCORES = (7, 6, 9, 9, 7, 4, 9, 7, 7, 7, 7, 9, 7, 4, 6, 7, 7, 6, 6, 7, 7, 7, 6, 1)
_DIAG = dict(zip(_ORDER, _DIAG_SCORES, strict=True))
_PAIRS = {
    ("R", "P"): 4, ("R", "W"): 2, ("R", "Y"): 4, ("P", "W"): 2, ("P", "Y"): 4, ("W", "Y"): 2,
    ("D", "S"): 2, ("G", "M"): 5, ("H", "V"): 4, ("T", "B"): 4, ("T", "Z"): 4,
    ("T", "*"): 1, ("B", "*"): 1, ("Z", "*"): 1,
}  # fmt: skip


def _matrix() -> dict[tuple[str, str], int]:
    out = {(a, b): (_DIAG[a] if a == b else -1) for a in _ORDER for b in _ORDER}
    for a in _ORDER:
        out[(a, "*")] = out[("*", a)] = -4 if a != "*" else 1
    for (a, b), v in _PAIRS.items():
        out[(a, b)] = out[(b, a)] = v
    return out


#: SMG Table 2 as ``{(a, b): score}`` (symmetric).
H2S_MATRIX: dict[tuple[str, str], int] = _matrix()


# ------------------------------------------------------------------------------ page records


@dataclass
class BlockInfo:
    """What the site-level stages need of one block of a page.

    ``seq``: H2S sequence; ``pos``: where the block starts in the page's text (0–1);
    ``text`` / ``anchor``: |T_C| and |T_A|; ``low``: share of low-complexity symbols;
    ``links``: intra-site ``(url, anchor text)`` pairs in order; ``external``: links to other
    sites; ``terms``: the block's distinct terms; ``depth``: for each link, the number of lists
    (``ul``, ``ol``, ``dl``, ``menu``) around it on the page.
    """

    seq: str
    pos: float
    text: int
    anchor: float
    low: float
    links: list[tuple[str, str]] = field(default_factory=list)
    external: int = 0
    terms: list[str] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)

    def top_links(self) -> list[tuple[str, str]]:
        """The block's links without those of nested lists: links outside any list, and
        those of the outermost list level the block's lists have.

        A block holding a nested list (a table of contents with sections inside chapters)
        is a hierarchy of its own: its top level is this sitemap level's entries, the nested
        entries are not promoted beside their parents (they belong below them, where their
        parent's page lists them). SMG takes every link of the SMB; with nested tables of
        contents that puts third-level pages on the second level."""
        if not self.depth or len(self.depth) != len(self.links):
            return list(self.links)
        in_lists = [d for d in self.depth if d > 0]
        top = min(in_lists, default=0)
        return [link for link, d in zip(self.links, self.depth, strict=True) if d in (0, top)]

    def nested_parents(self) -> dict[str, set[str]]:
        """For every link :meth:`top_links` leaves out (a nested list level's), the URLs of the
        links it is nested under: the nearest earlier link of a shallower list level."""
        top = {url for url, _ in self.top_links()}
        out: dict[str, set[str]] = {}
        stack: list[tuple[int, str]] = []  # (depth, url) of the open ancestors
        for (url, _), d in zip(self.links, self.depth, strict=False):
            while stack and stack[-1][0] >= d:
                stack.pop()
            parent = next((u for _, u in reversed(stack) if u != url), None)
            if url not in top and parent is not None:
                out.setdefault(url, set()).add(parent)
            stack.append((d, url))
        return out

    @property
    def acr(self) -> float:
        """Eq. (2): |T_A| / |T_C| (a block without text but with links is all anchor)."""
        if self.text > 0:
            return self.anchor / self.text
        return float("inf") if (self.links or self.external) else 0.0


@dataclass
class PageBlocks:
    """A page's blocks, in document order, and its title."""

    url: str
    title: str
    blocks: list[BlockInfo]

    def encode(self) -> bytes:
        rows = [
            [b.seq, round(b.pos, 4), b.text, round(b.anchor, 2), round(b.low, 4),
             [list(link) for link in b.links], b.external, b.terms, b.depth]
            for b in self.blocks
        ]  # fmt: skip
        data = json.dumps({"u": self.url, "t": self.title, "b": rows}, ensure_ascii=False)
        return zlib.compress(data.encode("utf-8"), 6)

    @classmethod
    def decode(cls, blob: bytes) -> PageBlocks:
        data = json.loads(zlib.decompress(blob).decode("utf-8"))
        blocks = [
            BlockInfo(seq, pos, text, anchor, low, [(u, t) for u, t in links], ext, terms, depth)
            for seq, pos, text, anchor, low, links, ext, terms, depth in data["b"]
        ]
        return cls(data["u"], data["t"], blocks)


def page_blocks(
    model: PageModel,
    params: SegParams,
    same_site: Callable[[str], bool],
    seq: H2SSequence | None = None,
) -> PageBlocks:
    """Translate (unless ``seq`` is the page's translation already), partition and describe
    one page (SMG §4.1–4.3's per-page part)."""
    seq = translate(model) if seq is None else seq
    blocks = partition(model, seq, params)
    if not blocks:
        return PageBlocks(model.url, model.title, [])
    starts = np.array([b.start for b in blocks], np.int64)
    ends = np.array([b.end for b in blocks], np.int64)
    cum = np.concatenate([[0], np.cumsum(seq.length)])
    total = max(int(cum[-1]), 1)
    # text and anchor text per block: each T symbol belongs to the block that holds it
    # (symbols outside every block, the containers' own tags, go to an extra bin n)
    n = len(blocks)
    sym_block = np.searchsorted(starts, np.arange(len(seq)), side="right") - 1
    outside = (sym_block < 0) | (np.arange(len(seq)) >= ends[np.maximum(sym_block, 0)])
    sym_block[outside] = n
    in_anchor = model.in_anchor[seq.owner] & (seq.length > 0)
    text = np.bincount(sym_block, weights=seq.length, minlength=n + 1)[:n]
    anchor: NDArray[np.float64] = np.bincount(
        sym_block[in_anchor], weights=seq.length[in_anchor], minlength=n + 1
    )[:n].astype(np.float64)
    anchor += _image_anchor_lengths(model, seq, sym_block, len(blocks))
    terms = _block_terms(model, seq, sym_block, len(blocks))
    links: list[list[tuple[str, str]]] = [[] for _ in blocks]
    depths: list[list[int]] = [[] for _ in blocks]
    list_depth = _list_depth(model)
    external = np.zeros(len(blocks), np.int64)
    for link in model.links():
        k = int(np.searchsorted(starts, seq.start[link.node], side="right")) - 1
        if k < 0 or seq.start[link.node] >= ends[k]:
            continue
        if same_site(link.url):
            links[k].append((link.url, link.text))
            depths[k].append(int(list_depth[link.node]))
        else:
            external[k] += 1
    infos = [
        BlockInfo(
            seq.symbols[b.start : b.end],
            float(cum[b.start]) / total,
            int(text[k]),
            float(anchor[k]),
            b.low,
            links[k],
            int(external[k]),
            terms[k],
            depths[k],
        )
        for k, b in enumerate(blocks)
    ]
    return PageBlocks(model.url, model.title, infos)


_LIST_TAGS = ("ul", "ol", "dl", "menu")


def _list_depth(model: PageModel) -> NDArray[np.int64]:
    """Per node: how many list elements enclose it (one difference array over subtree ranges)."""
    codes = [model.tag_code(t) for t in _LIST_TAGS]
    lists = np.flatnonzero(np.isin(model.tag_id, [c for c in codes if c >= 0]))
    diff = np.zeros(model.n + 1, np.int64)
    np.add.at(diff, lists + 1, 1)
    np.add.at(diff, model.subtree_end[lists], -1)
    return np.cumsum(diff)[: model.n]


def _image_anchor_lengths(
    model: PageModel, seq: Any, sym_block: NDArray[np.int64], n: int
) -> NDArray[np.float64]:
    """|T_A| of image links (H2S ``B``): their ``alt`` text, else the page's mean anchor
    length (§4.3)."""
    out = np.zeros(n)
    codes = np.frombuffer(seq.symbols.encode("ascii"), np.uint8)
    image_links = np.flatnonzero((codes == ord("B")) & seq.opening)
    if not len(image_links):
        return out
    textual = int(np.count_nonzero(model.alen[model.anchor_nodes] > 0))
    mean = float(model.alen[0]) / textual if textual else 0.0
    for i in image_links.tolist():
        if sym_block[i] >= n:
            continue
        alt = model.anchor_text(int(seq.owner[i]))
        out[sym_block[i]] += len("".join(alt.split())) if alt else mean
    return out


def _block_terms(
    model: PageModel, seq: Any, sym_block: NDArray[np.int64], n: int
) -> list[list[str]]:
    """Distinct terms of each block: the terms of the nodes whose text the block holds."""
    is_text = (seq.length > 0) & (sym_block < n)
    owners, blocks = seq.owner[is_text], sym_block[is_text]
    pairs = np.unique(owners * n + blocks)
    owners, blocks = pairs // n, pairs % n
    term_start = model.term_start
    counts = term_start[owners + 1] - term_start[owners]
    if not counts.sum():
        return [[] for _ in range(n)]
    first = np.repeat(term_start[owners] - np.cumsum(counts) + counts, counts)
    idx = first + np.arange(int(counts.sum()))
    term_block = np.repeat(blocks, counts)
    ids = model.term_ids[idx]
    nv = max(len(model.vocab), 1)
    uniq = np.unique(term_block * nv + ids)
    vocab = model.vocab
    out: list[list[str]] = [[] for _ in range(n)]
    for b, t in zip((uniq // nv).tolist(), (uniq % nv).tolist(), strict=True):
        out[b].append(vocab[t])
    return out


# ------------------------------------------------------------------------- block identifier


class _Entropies(Protocol):
    def entropy(self, terms: Iterable[str]) -> NDArray[np.float64]: ...


CB, SB, RB = "CB", "SB", "RB"


def block_entropies(
    pages: list[PageBlocks], entropies: _Entropies
) -> list[NDArray[np.float64]]:
    """EN(block) = mean entropy of its distinct terms (InfoDiscoverer's H(CB)); 1 (redundant)
    for a block without terms."""
    flat = [t for p in pages for b in p.blocks for t in b.terms]
    values = np.asarray(entropies.entropy(flat), float) if flat else np.zeros(0)
    out, k = [], 0
    for page in pages:
        row = np.ones(len(page.blocks))
        for j, block in enumerate(page.blocks):
            m = len(block.terms)
            if m:
                row[j] = float(values[k : k + m].mean())
                k += m
        out.append(row)
    return out


def identify_blocks(
    pages: list[PageBlocks], entropy: list[NDArray[np.float64]]
) -> tuple[list[list[str]], float]:
    """Each block's type (CB, SB or RB; §4.3, Fig. 8) and the InfoDiscoverer threshold used."""
    lowest = []
    for page, ent in zip(pages, entropy, strict=True):
        best: dict[str, float] = {}
        for block, h in zip(page.blocks, ent.tolist(), strict=True):
            for t in block.terms:
                best[t] = min(best.get(t, 1.0), h)
        lowest.append(np.fromiter(best.values(), float, len(best)))
    threshold = choose_threshold_from_lowest(lowest) if lowest else 0.5
    kinds = []
    for page, ent in zip(pages, entropy, strict=True):
        row = []
        for block, h in zip(page.blocks, ent.tolist(), strict=True):
            acr, low = block.acr, block.low > 0.5
            if acr <= ACR_CONTENT:
                kind = CB
            elif acr >= ACR_LINK:
                kind = SB if block.links else RB
            elif h <= threshold:  # InfoDiscoverer: informative
                kind = SB if low else CB
            else:  # InfoDiscoverer: redundant
                kind = SB if (not low and block.links) else RB
            row.append(kind)
        kinds.append(row)
    return kinds, threshold


# ---------------------------------------------------------------------------- block cluster


def _parasail() -> Any:
    """parasail, the ``sitemap`` extra: an ImportError naming the extra when it is missing."""
    try:
        import parasail
    except ModuleNotFoundError as exc:
        if exc.name != "parasail":
            raise
        raise ModuleNotFoundError(
            "the sitemap's block alignment needs parasail, an optional dependency:"
            " pip install 'wisdom_scrapy[sitemap]'", name="parasail"
        ) from exc
    return parasail


_PARASAIL_MATRIX: Any = None


def _alignment_matrix() -> Any:
    """Table 2 as a parasail matrix (built once)."""
    global _PARASAIL_MATRIX
    if _PARASAIL_MATRIX is None:
        parasail = _parasail()
        m = parasail.matrix_create(_ORDER, 0, 0)
        for i, a in enumerate(_ORDER):
            for j, b in enumerate(_ORDER):
                m[i, j] = H2S_MATRIX[(a, b)]
        _PARASAIL_MATRIX = m
    return _PARASAIL_MATRIX


def self_score(seq: str) -> int:
    """Score of a sequence aligned with itself (its best local alignment: every symbol on its
    diagonal, all of Table 2's diagonal entries being positive)."""
    return sum(_DIAG[c] for c in seq[:ALIGN_CAP])


def similarity(a: str, b: str) -> float:
    """Normalised local-alignment score of two H2S sequences (§4.4): the Smith–Waterman score
    with Table 2 and gap costs 11/1, over the larger of the two self-scores."""
    a, b = a[:ALIGN_CAP], b[:ALIGN_CAP]
    top = max(self_score(a), self_score(b))
    if not a or not b or top <= 0:
        return 0.0
    result = _parasail().sw_striped_sat(a, b, GAP_OPEN, GAP_EXTEND, _alignment_matrix())
    return float(result.score) / top


def _kmers(seq: str) -> NDArray[np.uint64]:
    s = seq[:ALIGN_CAP]
    if len(s) < KMER:
        s = s.ljust(KMER, "*")
    codes = np.frombuffer(s.encode("ascii"), np.uint8).astype(np.uint64)
    k = np.zeros(len(codes) - KMER + 1, np.uint64)
    for j in range(KMER):
        k = k * np.uint64(131) + codes[j : len(codes) - KMER + 1 + j]
    return np.unique(k)


_MH_RNG = np.random.default_rng(7)
_MH_A = _MH_RNG.integers(1, 2**61 - 1, MINHASHES, dtype=np.uint64) | np.uint64(1)
_MH_B = _MH_RNG.integers(0, 2**61 - 1, MINHASHES, dtype=np.uint64)


def minhash(seq: str) -> NDArray[np.uint64]:
    """MinHash signature of the sequence's 4-mer set (``MINHASHES`` hash functions)."""
    k = _kmers(seq)
    with np.errstate(over="ignore"):
        h = k[None, :] * _MH_A[:, None] + _MH_B[:, None]
    return h.min(axis=1)


def candidate_pairs(seqs: list[str]) -> set[tuple[int, int]]:
    """Pairs of sequences sharing a MinHash band (LSH: ``BANDS`` bands of
    ``MINHASHES / BANDS`` rows): the pairs whose 4-mer sets are similar enough to align."""
    rows = MINHASHES // BANDS
    sigs = [minhash(s) for s in seqs]
    pairs: set[tuple[int, int]] = set()
    for band in range(BANDS):
        buckets: dict[bytes, list[int]] = {}
        for i, sig in enumerate(sigs):
            buckets.setdefault(sig[band * rows : (band + 1) * rows].tobytes(), []).append(i)
        for members in buckets.values():
            for x in range(len(members)):
                for y in range(x + 1, len(members)):
                    pairs.add((members[x], members[y]))
    return pairs


@dataclass(frozen=True)
class Clusters:
    """Cluster id and occurrence frequency |b| of every block (flattened page by page);
    ``aligned``: alignments run; ``distinct``: distinct sequences."""

    label: NDArray[np.int64]
    size: NDArray[np.int64]
    aligned: int
    distinct: int


def cluster_blocks(
    seqs: list[str], *, theta: float = THETA, use_index: bool = True
) -> Clusters:
    """Group semantically identical blocks (§4.4): identical sequences, then pairs of distinct
    sequences with :func:`similarity` ≥ ``theta`` (all pairs, or the MinHash candidates)."""
    distinct: dict[str, int] = {}
    of_block = np.fromiter((distinct.setdefault(s, len(distinct)) for s in seqs), np.int64)
    uniq = list(distinct)
    n = len(uniq)
    selfs = [self_score(u) for u in uniq]
    if use_index:
        pairs: Iterable[tuple[int, int]] = sorted(candidate_pairs(uniq))
    else:
        pairs = ((i, j) for i in range(n) for j in range(i + 1, n))
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    aligned = 0
    for i, j in pairs:
        # a local alignment scores at most the smaller self-score: θ is out of reach when
        # that is below θ × the larger one (an exact filter, no alignment needed)
        if min(selfs[i], selfs[j]) < theta * max(selfs[i], selfs[j]):
            continue
        ri, rj = find(i), find(j)
        if ri == rj:
            continue
        aligned += 1
        if similarity(uniq[i], uniq[j]) >= theta:
            parent[ri] = rj
    roots = np.fromiter((find(i) for i in range(n)), np.int64, n)
    label = roots[of_block] if n else np.zeros(0, np.int64)
    size = np.bincount(label, minlength=max(n, 1))[label] if n else np.zeros(0, np.int64)
    return Clusters(label, size.astype(np.int64), aligned, n)


# ------------------------------------------------------------------------ hyperlink analyzer


def block_hits(
    pages: list[PageBlocks],
    entropy: list[NDArray[np.float64]],
    entropies: _Entropies,
    *,
    max_iter: int = 100,
) -> NDArray[np.float64]:
    """Hub value of every block (flattened) by block-to-block EN-HITS (eqs. 3–5)."""
    offsets = np.concatenate([[0], np.cumsum([len(p.blocks) for p in pages])]).astype(np.int64)
    index = {p.url: i for i, p in enumerate(pages)}
    nblocks = int(offsets[-1])
    # β share of each block of its page: 1 − EN(q) / Σ_b EN(b); α unchanged on a page of one
    share = np.ones(nblocks)
    for i, ent in enumerate(entropy):
        total = float(ent.sum())
        if len(ent) > 1 and total > 0:
            share[offsets[i] : offsets[i + 1]] = 1.0 - ent / total
    texts: dict[str, int] = {}
    src, dst_page, text_id = [], [], []
    for i, page in enumerate(pages):
        for j, block in enumerate(page.blocks):
            seen = set()
            for url, text in block.links:
                v = index.get(url)
                if v is None or v == i or v in seen:
                    continue
                seen.add(v)
                src.append(int(offsets[i]) + j)
                dst_page.append(v)
                text_id.append(texts.setdefault(text, len(texts)))
    if not src:
        return np.zeros(nblocks)
    alpha = link_weights([extract_terms(t) for t in texts], entropies)[np.asarray(text_id)]
    dst_page_a = np.asarray(dst_page, np.int64)
    counts = offsets[dst_page_a + 1] - offsets[dst_page_a]
    rows = np.repeat(np.asarray(src, np.int64), counts)
    first = np.repeat(offsets[dst_page_a] - np.cumsum(counts) + counts, counts)
    cols = first + np.arange(int(counts.sum()))
    beta = np.repeat(alpha, counts) * share[cols]
    matrix = sp.csr_matrix((beta, (rows, cols)), shape=(nblocks, nblocks))
    return hits(matrix, max_iter=max_iter).hub


# --------------------------------------------------------------------------- sitemap analyzer


@dataclass
class Sitemap:
    """A generated sitemap: the home page, the tree below it and figures of the analysis."""

    home: str
    title: str
    tree: list[dict[str, Any]]
    levels: int
    pages: int = 0
    blocks: int = 0
    structure_blocks: int = 0
    clusters: int = 0
    aligned: int = 0
    threshold: float = 0.0

    def entries(self) -> list[int]:
        """Entries per level (level 1 first)."""
        counts: list[int] = []
        frontier = self.tree
        while frontier:
            counts.append(len(frontier))
            frontier = [c for e in frontier for c in e["children"]]
        return counts

    def urls(self, level: int) -> list[str]:
        """URLs of the entries of one level (1-based)."""
        frontier = self.tree
        for _ in range(level - 1):
            frontier = [c for e in frontier for c in e["children"]]
        return [e["url"] for e in frontier]


def choose_home(urls: Iterable[str]) -> str:
    """A home page when none is known: the shallowest URL, a folder or ``index.*`` page first,
    then the shortest."""
    from urllib.parse import urlsplit

    def key(url: str) -> tuple[int, bool, int, str]:
        path = urlsplit(url).path or "/"
        last = path.rsplit("/", 1)[-1]
        folder_page = last == "" or last.startswith("index.")
        return path.rstrip("/").count("/"), not folder_page, len(url), url

    return min(urls, key=key)


def build_sitemap(
    records: Mapping[str, PageBlocks],
    entropies: _Entropies,
    *,
    levels: int = 2,
    home: str | None = None,
    theta: float = THETA,
    use_index: bool = True,
    hits_max_iter: int = 100,
) -> Sitemap:
    """The sitemap of a site from its pages' block records (SMG §4.3–4.6).

    Level by level, every page of the level gets its SMB first; then the SMBs' links become
    the next level's entries, except a link that one of the level's SMBs nests in a list
    under another page: it may only enter under a page it is nested under. The same holds
    for the level's own entries: one that an SMB of the level nests under a sibling entry
    leaves the level (:func:`_moved_down`) and enters below that sibling if the sibling's SMB
    lists it (the Python docs' home table lists "What's new in 3.11" beside "all What's new
    documents", which the complete table of contents puts it under). SMG puts every
    link of an SMB on the next level, so one flat list (a module index, a "what's new" page
    citing modules) promotes a whole lower level beside its parents; a nested table of
    contents among the same level's SMBs says where those pages belong (measured on the
    Python docs, ``benchmarks/sitemap_quality.py``: level-2 F1 0.47 → 0.93, and 0.88 with
    the site's complete table of contents removed from the records; the move: level-1 F1
    0.842 → 0.865). Sites whose SMBs hold no nested lists are unaffected.
    """
    pages = [p for p in records.values() if p.blocks]
    if not pages:
        root = home or (choose_home(records) if records else "")
        return Sitemap(root, "", [], levels)
    entropy = block_entropies(pages, entropies)
    kinds, threshold = identify_blocks(pages, entropy)
    offsets = np.concatenate([[0], np.cumsum([len(p.blocks) for p in pages])]).astype(np.int64)
    blocks = [b for p in pages for b in p.blocks]
    flat_kinds = [k for row in kinds for k in row]
    cand = [i for i, b in enumerate(blocks) if _candidate(b, flat_kinds[i])]
    clusters = cluster_blocks([blocks[i].seq for i in cand], theta=theta, use_index=use_index)
    label = np.full(len(blocks), -1, np.int64)
    label[cand] = clusters.label
    size = np.zeros(len(blocks), np.int64)
    size[cand] = clusters.size
    hub = block_hits(pages, entropy, entropies, max_iter=hits_max_iter)
    index = {p.url: i for i, p in enumerate(pages)}
    labels_of = [set(label[offsets[i] : offsets[i + 1]].tolist()) - {-1} for i in range(len(pages))]
    root = home if home in index else choose_home(index)
    sitemap = Sitemap(
        root,
        pages[index[root]].title if root in index else "",
        [],
        levels,
        pages=len(pages),
        blocks=len(blocks),
        structure_blocks=sum(k == SB for k in flat_kinds),
        clusters=len(set(clusters.label.tolist())),
        aligned=clusters.aligned,
        threshold=threshold,
    )
    analyzer = _Analyzer(pages, offsets, label, hub, index, labels_of, size)
    used: set[int] = set()
    placed = {root}
    frontier: list[_Entry] = [({"url": root, "children": sitemap.tree}, [])]
    for _ in range(levels):
        smbs: list[tuple[_Entry, BlockInfo, int]] = []
        shared = analyzer.shared_links([index[e["url"]] for e, _ in frontier if e["url"] in index])
        for entry, siblings in frontier:
            i = index.get(entry["url"])
            best = None if i is None else analyzer.sitemap_block(i, used, shared)
            if i is not None and best is not None:
                k = int(offsets[i]) + best
                smbs.append(((entry, siblings), pages[i].blocks[best], int(label[k])))
        nested: dict[str, set[str]] = {}
        for _, block, _ in smbs:
            for u, parents in block.nested_parents().items():
                nested.setdefault(u, set()).update(parents)
        moved = _moved_down(frontier, nested)
        for entry, siblings in moved:
            siblings.remove(entry)
            placed.discard(entry["url"])
        smbs = [s for s in smbs if s[0][0]["url"] not in {e["url"] for e, _ in moved}]
        frontier = []
        for (entry, _), block, _ in smbs:
            url, children = entry["url"], entry["children"]
            for link_url, text in block.top_links():
                if link_url in placed or url not in nested.get(link_url, {url}):
                    continue
                if not names_a_page(text):
                    continue
                placed.add(link_url)
                child: dict[str, Any] = {"title": text, "url": link_url, "children": []}
                children.append(child)
                frontier.append((child, children))
        used |= {lab for _, _, lab in smbs}
    return sitemap


_WORD = re.compile(r"[^\W\d_]{2,}")


def names_a_page(anchor: str) -> bool:
    """Whether a link's anchor text can title a sitemap entry: it holds a word (two letters or
    more), or it is empty (an image link without ``alt``: nothing to judge, kept as SMG keeps
    every link of the SMB).

    The entries' titles are the anchor texts (SMG Fig. 12). Page numbers ("2", "3"), an
    alphabet bar ("A" … "Z", "_") and arrows name no page of the hierarchy: they walk
    through one list (a paginated section, an index split by letter) that sits inside an
    SMB next to the entries proper. Such anchors have no terms, so their EN-HITS weight
    α (eq. 3) is 0: they gave their block nothing of the hub it was chosen for. A deviation
    from §4.6 (every link of the SMB is an entry), measured with
    ``benchmarks/sitemap_quality.py`` on one crawl's records: pydoc level 2 F1 0.839 → 0.927
    (the general index's letter pages), demo level 2 0.714 → 0.741 (page numbers)."""
    return not anchor.strip() or _WORD.search(anchor) is not None


#: A sitemap entry (``{"title", "url", "children"}``) and the list of its parent it sits in.
_Entry = tuple[dict[str, Any], list[dict[str, Any]]]


def _moved_down(frontier: list[_Entry], nested: dict[str, set[str]]) -> list[_Entry]:
    """The level's entries that one of the level's own SMBs nests under another entry of the
    level (a page the site's table of contents puts below a sibling): they leave this level
    and may come back under that sibling, if its SMB lists them. A pair nested under each
    other stays."""
    urls = {e["url"] for e, _ in frontier}
    out = []
    for entry, siblings in frontier:
        url = entry["url"]
        parents = (nested.get(url, set()) & urls) - {url}
        if any(url not in nested.get(p, set()) for p in parents) and siblings:
            out.append((entry, siblings))
    return out


def _candidate(block: BlockInfo, kind: str) -> bool:
    """A block the SiteMap Analyzer may pick: an SB, or a CB whose links are more than a
    trace (ACR above the content bound). The paper restricts SMA to SBs and names the cost
    (§5.3: level-2 sitemap links "are even located in different kinds of blocks (CB instead
    of SB) … level-2 SM links should not be restricted in SBs"): a table of links with a line
    of description each (a documentation home page) is informative, high-complexity and so a
    CB by Fig. 8, yet it is the site's main menu."""
    if not block.links:
        return False
    return kind == SB or (kind == CB and block.acr > ACR_CONTENT)


@dataclass
class _Analyzer:
    """SMA's choice of a page's sitemap block (§4.4 step 5, §4.6)."""

    pages: list[PageBlocks]
    offsets: NDArray[np.int64]
    label: NDArray[np.int64]
    hub: NDArray[np.float64]
    index: dict[str, int]
    labels_of: list[set[int]]
    size: NDArray[np.int64]

    def occurrence(self, k: int, block: BlockInfo) -> int:
        """|b| (§4.4 steps 5–6): 1 unless the block is repeated on the pages it links to.

        Step 5 forms a block's cluster from the semantically identical blocks of the pages
        the block links to (Fig. 10: a menu repeated on the pages it links to; a block that
        finds none there is no cluster, |b| = 1). Step 6 then updates the cluster's size to the
        block's *total* occurrence frequency in the site: for a block that passed step 5, |b|
        is its whole cluster. Reading step 6 without step 5 (every block counted site-wide)
        makes any page-template bar whose targets do not repeat it (previous / next topic,
        "report a bug") outweigh a section's own table of contents; reading step 5 without
        step 6 leaves a site's main menu (on every page, but linking to only a handful of
        them) with an |b| of ~10 against a list of stories whose informative anchors give it a
        hub two orders of magnitude higher (measured on the demo site:
        ``benchmarks/sitemap_quality.py``)."""
        lab = int(self.label[k])
        targets = {self.index[u] for u, _ in block.links if u in self.index}
        if not any(lab in self.labels_of[v] for v in targets):
            return 1
        return int(self.size[k])

    def sitemap_block(
        self, i: int, used: set[int], shared: Mapping[int, float] | None = None
    ) -> int | None:
        """The page's SMB: the candidate with the highest |b| × hub that does not start in the
        page's last 20 % and whose cluster was not used above; None when none qualifies.
        ``shared``: block (flat index) → share of its links its siblings' blocks of the same
        cluster also hold (:meth:`shared_links`); the score counts the rest."""
        best, best_score = None, 0.0
        offset = int(self.offsets[i])
        for j, block in enumerate(self.pages[i].blocks):
            k = offset + j
            lab = int(self.label[k])
            if lab < 0 or lab in used or block.pos >= 1.0 - BOTTOM_SHARE:
                continue
            score = self.occurrence(k, block) * float(self.hub[k])
            score *= 1.0 - (shared or {}).get(k, 0.0)
            if score > best_score:
                best, best_score = j, score
        return best

    def shared_links(self, level: list[int]) -> dict[int, float]:
        """For every candidate block of the level's pages: the share of its distinct links
        that a block of the same cluster on another page of the level holds too.

        A box that every sibling holds with the same links ("most read", a tag cloud, a
        sidebar of archive months) would give each of them the same children: the first
        sibling would take them all and the others nothing, whatever their own lists hold.
        SMG's "clusters used above are not reused below" keeps the level-1 menu out of the
        lower levels for the same reason; this extends it to a level's siblings, with the
        score scaled by the share of the block's links that are its own (level 1, one page,
        is unaffected; a menu whose highlighted entry changes keeps its own share). A
        deviation from §4.6, measured with ``benchmarks/sitemap_quality.py`` on one crawl's
        records: demo level 2 F1 0.649 → 0.714 (the opinion section's story list instead of
        the sidebar); pydoc level 2 0.989 → 0.890, all of it below the general index, an
        extra level-1 page, whose letter pages are now listed (its template bars were
        picked before and added nothing)."""
        holders: dict[tuple[int, str], set[int]] = {}
        blocks: list[tuple[int, int, set[str]]] = []
        for i in level:
            offset = int(self.offsets[i])
            for j, block in enumerate(self.pages[i].blocks):
                lab = int(self.label[offset + j])
                if lab < 0:
                    continue
                urls = {u for u, _ in block.links}
                blocks.append((offset + j, i, urls))
                for u in urls:
                    holders.setdefault((lab, u), set()).add(i)
        out = {}
        for k, i, urls in blocks:
            lab = int(self.label[k])
            common = sum(1 for u in urls if holders[(lab, u)] - {i})
            out[k] = common / len(urls) if urls else 0.0
        return out
