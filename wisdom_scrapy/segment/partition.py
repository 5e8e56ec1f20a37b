"""SMG's Page Partitioner (§4.2): top-down splitting of a page by sequence complexity.

Given the page's H2S sequence (:mod:`.h2s`) and SEG (:mod:`.seg`), the partitioner starts at
``<body>`` and, for each node's subtree sequence S, computes the SEG rate (eq. 1)::

    R_SEG(S) = | Σ|L_i| − Σ|H_j| | / |S|

(L, H: the low- and high-complexity segments SEG finds *in S*). ``R_SEG ≥ TH_R`` (0.2) means
S is dominated by one kind: the node is a block. The root itself (``<body>``, or the
page-wide wrapper it holds) is always split: the partitioner's job is to split a page, and a
whole page dominated by one kind (a home page of links) would otherwise come out as one block.
Otherwise the node is ambiguous and each of its children is analysed in turn, "until the
sequence can not be partitioned by SEG": a sequence shorter than SEG's window cannot be judged,
and is left unresolved. Finally the
unresolved pieces between two identified blocks (including a node's own text between its
children) are merged into one block ("identified blocks are applied to separate remaining
segments as isolated blocks"); a gap holding nothing but container tags is no block.

Repeated siblings (before step 3). Testing whole subtrees only, the recursion splits a node
that holds a run of instances of one element (the sections of an article, the entries of a
reference list, the paragraphs of a text) as soon as something of the other kind sits beside
the run, and then splits every instance that mixes both kinds, down to its parts. So, bottom-up
over the split nodes, a run of neighbouring children that are the same element (same tag, same
``class``: the markup a template or a writer repeats) is identified as one block while the
run's sequence is still a block by eq. (1) (SEG on the run): the run is then dominated by one
kind of segment, the paper's definition of a block, whatever its instances were split into.
Different elements side by side (a content column beside a menu column) stay apart even where
eq. (1) would accept their union, and so do the root's children (the root is always split).
Children too short for SEG's window were never judged, hence never split: a run of only those
is left to step 3, which merges them as unresolved pieces anyway.

SEG on a subtree only sees the windows inside it, and those windows have the same complexity
as in the whole page's sequence; so the window complexities are computed once per page and
every subtree's SEG is a slice (no quadratic re-scan). The traversal is an explicit stack.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from wisdom_scrapy.segment.seg import SegParams, low_complexity_mask, window_complexity

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.segment.h2s import H2SSequence

__all__ = ["TH_R", "Block", "partition", "r_seg"]

#: SMG's R_SEG threshold ("based on experiments, the threshold is set to 0.2").
TH_R = 0.2


@dataclass(frozen=True)
class Block:
    """One block of a page: the half-open range ``[start, end)`` of the page's H2S sequence.

    ``node`` is the subtree the block is (−1 for a block merged from unresolved pieces or from
    a run of repeated siblings);
    ``low`` the share of its symbols in SEG's low-complexity segments; ``rseg`` its R_SEG.
    """

    start: int
    end: int
    node: int
    low: float
    rseg: float

    @property
    def low_dominant(self) -> bool:
        """Dominated by low-complexity segments (link lists, table rows …)."""
        return self.low > 0.5


def r_seg(low_symbols: int, length: int) -> float:
    """Eq. (1): |Σ|L| − Σ|H|| / |S| from the number of low-complexity symbols of S."""
    return abs(2 * low_symbols - length) / length if length else 0.0


class _Seg:
    """SEG restricted to any range of one page's sequence."""

    def __init__(self, seq: H2SSequence, params: SegParams) -> None:
        self.codes = np.frombuffer(seq.symbols.encode("ascii"), np.uint8)
        self.params = params
        self.complexity = window_complexity(self.codes, params.window)

    def low_count(self, start: int, end: int) -> int | None:
        """Low-complexity symbols SEG finds in ``[start, end)``; None if shorter than a window."""
        w = self.params.window
        if end - start < w:
            return None
        windows = self.complexity[start : end - w + 1]
        mask = low_complexity_mask(windows, end - start, self.params, self.codes[start:end])
        return int(mask.sum())


def _body(model: PageModel) -> int:
    body = model.tag_code("body")
    nodes = np.flatnonzero(model.tag_id == body) if body >= 0 else np.zeros(0, np.int64)
    return int(nodes[0]) if len(nodes) else 0


def _unwrap(model: PageModel, seq: H2SSequence, node: int) -> int:
    """Descend through wrappers: while all of the node's content is one child's (a page-wide
    ``<div id="page">``), that child is the page to split."""
    while True:
        children = model.children(node)
        full = children[seq.end[children] > seq.start[children]]
        if len(full) != 1:
            return node
        child = int(full[0])
        own = (seq.end[node] - seq.start[node]) - (seq.end[child] - seq.start[child])
        if own > 2:  # the node has symbols (text) of its own besides the child's and its tags
            return node
        node = child


def partition(
    model: PageModel,
    seq: H2SSequence,
    params: SegParams,
    *,
    th_r: float = TH_R,
    root: int | None = None,
) -> list[Block]:
    """The blocks of a page in document order (SMG §4.2, steps 1–3 of the module docstring).

    ``root`` defaults to the first ``<body>`` (the page's root without one).
    """
    if model.n == 0 or len(seq) == 0:
        return []
    seg = _Seg(seq, params)
    top = _unwrap(model, seq, _body(model) if root is None else root)
    found: list[Block] = []
    split: list[int] = []  # the ambiguous nodes below the root, in document (pre-)order
    stack = [top]
    while stack:
        node = stack.pop()
        start, end = int(seq.start[node]), int(seq.end[node])
        if end <= start:
            continue
        low = seg.low_count(start, end)
        if low is not None and node != top:
            rate = r_seg(low, end - start)
            if rate >= th_r:
                found.append(Block(start, end, node, low / (end - start), rate))
                continue
        if node != top:
            split.append(node)
        children = model.children(node)
        # reversed, so that the stack pops them in document order
        stack.extend(reversed(children[seq.end[children] > seq.start[children]].tolist()))
    found.sort(key=lambda b: b.start)
    if split:
        found = _merge_repeated(found, split, model, seq, seg, th_r)
    return _merge_unresolved(found, int(seq.start[top]), int(seq.end[top]), seg)


_CONTENT = np.zeros(256, bool)
_CONTENT[[ord("T"), ord("A"), ord("B"), ord("G"), ord("M"), ord("X")]] = True


def _has_content(codes: NDArray[np.uint8]) -> bool:
    """A gap is a block only when it shows something (text, a link, an image, an object), not
    when it is only the tags of the containers around the blocks."""
    return bool(_CONTENT[codes].any())


def _merge_unresolved(found: list[Block], start: int, end: int, seg: _Seg) -> list[Block]:
    """The identified blocks plus one block for every gap between them (step 3)."""
    out: list[Block] = []
    cursor = start
    for block in [*found, None]:
        stop = end if block is None else block.start
        if stop > cursor and _has_content(seg.codes[cursor:stop]):
            low = seg.low_count(cursor, stop)
            n = stop - cursor
            share = 0.0 if low is None else low / n
            out.append(Block(cursor, stop, -1, share, 0.0 if low is None else r_seg(low, n)))
        if block is not None:
            out.append(block)
            cursor = block.end
    return out


def _element_codes(model: PageModel) -> NDArray[np.int64]:
    """One code per node, equal for nodes that are the same element: same tag and same set of
    ``class`` names."""
    values = model.attribute_values("class")
    raw: dict[str | None, int] = {}  # each distinct attribute value once
    value_id = np.fromiter((raw.setdefault(v, len(raw)) for v in values), np.int64, len(values))
    sets: dict[frozenset[str], int] = {}
    set_id = np.array([sets.setdefault(frozenset((v or "").split()), len(sets)) for v in raw])
    return np.asarray(model.tag_id, np.int64) * len(sets) + set_id[value_id]


def _repeated_runs(
    kids: NDArray[np.int32], code: NDArray[np.int64], seq: H2SSequence, seg: _Seg, th_r: float
) -> list[tuple[int, int, int]]:
    """``(start, end, low symbols)`` of the runs of same-element neighbours among ``kids`` (one
    node's children with content, in order) whose sequence is a block by eq. (1).

    A run grows from its first child to the right; the child that would make it ambiguous
    starts the next. A run of children that are all shorter than SEG's window is left alone:
    none of them was judged, so none was split, and step 3 merges them as unresolved pieces.
    """
    runs: list[tuple[int, int, int]] = []
    starts, ends = seq.start[kids], seq.end[kids]
    judged = ends - starts >= seg.params.window
    # a run can only cross the boundary between two adjacent instances of one element
    join = (code[kids[1:]] == code[kids[:-1]]) & (starts[1:] == ends[:-1])
    i, n = 0, len(kids)
    while i < n - 1:
        start, j, low = int(starts[i]), i, None
        while j < n - 1 and join[j]:
            got = seg.low_count(start, int(ends[j + 1]))
            if got is None or r_seg(got, int(ends[j + 1]) - start) < th_r:
                break
            j, low = j + 1, got
        if low is not None and judged[i : j + 1].any():
            runs.append((start, int(ends[j]), low))
        i = j + 1
    return runs


def _replace(blocks: list[Block], start: int, end: int, low: int) -> list[Block]:
    """``blocks`` with the ones inside ``[start, end)`` replaced by one block (a run of whole
    subtrees: no identified block crosses its ends)."""
    starts = [b.start for b in blocks]
    lo, hi = bisect_left(starts, start), bisect_left(starts, end)
    n = end - start
    return [*blocks[:lo], Block(start, end, -1, low / n, r_seg(low, n)), *blocks[hi:]]


def _merge_repeated(
    blocks: list[Block],
    split: list[int],
    model: PageModel,
    seq: H2SSequence,
    seg: _Seg,
    th_r: float,
) -> list[Block]:
    """The identified ``blocks`` with the runs of repeated siblings (module docstring) in place
    of the blocks inside them: the runs among the children of every split node, deeper nodes
    first (reverse document order visits descendants before their ancestors), so a run of
    sections takes in the runs found inside them."""
    code = _element_codes(model)
    for node in reversed(split):
        kids = model.children(node)
        kids = kids[seq.end[kids] > seq.start[kids]]
        if len(kids) < 2:
            continue
        for start, end, low in _repeated_runs(kids, code, seq, seg, th_r):
            blocks = _replace(blocks, start, end, low)
    return blocks
