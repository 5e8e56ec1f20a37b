"""Tree arithmetic over pre-order arrays: subtree ends from child counts, depths, parents,
CSR children, range masks, subtree sums and the nearest marked ancestor.

Rules: every function is vectorised numpy over whole arrays (no per-node Python, no
recursion, so a page nested thousands of levels deep costs what a flat one does) and pure:
arrays in, new arrays out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray


def nearest_marked(marked: NDArray[np.bool_], parent: NDArray[np.integer]) -> NDArray[np.int64]:
    """For every node, its nearest ancestor-or-self with ``marked`` (a root is its own answer).

    Pointer jumping: ``up[i]`` is i if marked, else its parent; ``up = up[up]`` doubles the
    distance covered each pass, so O(n log depth) vectorised work and no recursion.
    """
    n = len(parent)
    idx = np.arange(n)
    par = np.asarray(parent, dtype=np.int64).copy()
    par[par < 0] = idx[par < 0]
    up = np.where(marked, idx, par)
    while True:
        nxt = up[up]
        if np.array_equal(nxt, up):
            return up
        up = nxt


def _stable_order(values: NDArray[np.int64], bound: int) -> NDArray[np.intp]:
    """Stable argsort of small non-negative integers (< ``bound``): radix sort when they fit
    in 16 bits, which is the common case (values are depths or open-slot counts)."""
    if bound < 1 << 15:
        return np.argsort(values.astype(np.int16), kind="stable")
    return np.argsort(values, kind="stable")


def subtree_ends(nchild: NDArray[np.intp]) -> NDArray[np.intp]:
    """Subtree end of every position, from pre-order child counts (Łukasiewicz path).

    ``L[0] = 1``, ``L[k+1] = L[k] + nchild[k] − 1``: open child slots before position k. The
    subtree of k ends where the slot k took is gone for good, the first j > k with
    ``L[j] = L[k] − 1`` (L falls by at most 1 per step, so it cannot skip that value).
    With positions sorted by (L, position), the queries (L[k] − 1, k) come in the same order,
    so one sorted ``searchsorted`` answers all of them.
    """
    N = len(nchild)
    luk = np.empty(N + 1, dtype=np.int64)
    luk[0] = 1
    np.cumsum(nchild, out=luk[1:])
    luk[1:] -= np.arange(N, dtype=np.int64)  # 1 + Σ (nchild − 1)
    order = _stable_order(luk, N + 2)
    keys = luk[order] * (N + 1) + order  # sorted (L, position)
    queried = order[order < N]  # positions 0..N-1 in (L, position) order
    found = np.searchsorted(keys, (luk[queried] - 1) * (N + 1) + queried)
    end = np.empty(N, dtype=np.intp)
    end[queried] = order[found]
    return end


def depths_from_ends(end: NDArray[np.intp]) -> NDArray[np.intp]:
    """Depth of every position: how many ranges ``[j+1, end[j])`` contain it."""
    N = len(end)
    diff = np.ones(N + 1, dtype=np.intp)
    diff[0] = 0
    diff -= np.bincount(end, minlength=N + 1)
    return np.cumsum(diff)[:N]


def parents_from_depths(depth: NDArray[np.intp]) -> NDArray[np.intp]:
    """Parent of every position: the last earlier position one level up (−1 for the root)."""
    N = len(depth)
    if N == 0:
        return np.zeros(0, dtype=np.intp)
    order = _stable_order(depth, N + 1)
    keys = depth[order] * N + order  # sorted (depth, position)
    # the last key below (depth − 1, k), asked in sorted order
    found = np.searchsorted(keys, (depth[order] - 1) * N + order) - 1
    parent = np.empty(N, dtype=np.intp)
    parent[order] = order[np.maximum(found, 0)]
    parent[depth == 0] = -1
    return parent


def csr_children(parent: NDArray[np.int32]) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """CSR children lists (document order) from the parent array of a pre-order tree."""
    n = len(parent)
    child_start = np.zeros(n + 1, dtype=np.int32)
    if n > 1:
        np.cumsum(np.bincount(parent[1:], minlength=n), out=child_start[1:])
    child_index = (np.argsort(parent[1:], kind="stable") + 1).astype(np.int32)
    return child_start, child_index


def range_mask(starts: NDArray, ends: NDArray, n: int) -> NDArray[np.bool_]:
    """Boolean mask of the union of the ranges ``[starts[k], ends[k])`` (nesting allowed)."""
    if len(starts) == 0:
        return np.zeros(n, dtype=bool)
    diff = np.bincount(starts, minlength=n + 1) - np.bincount(ends, minlength=n + 1)
    return np.cumsum(diff[:n]) > 0


def subtree_sums(values: NDArray, subtree_end: NDArray) -> NDArray[np.int64]:
    """Σ ``values`` over every node's subtree: the ICT aggregation f_A (WISDOM §3.2.1)."""
    csum = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=csum[1:])
    return csum[subtree_end] - csum[:-1]


# whitespace as str.split() sees it, as a lookup table over code points below U+3001
_WS_TABLE = np.array([chr(c).isspace() for c in range(0x3001)] + [False], dtype=bool)
_WS_TABLE[0] = False  # NUL: the piece separator of joined_nonspace_len, never whitespace here
# what joined_nonspace_len does not count: whitespace and the separator (code points past the
# table are clipped to its last entry, which is False)
_DROPPED_TABLE = _WS_TABLE.copy()
_DROPPED_TABLE[0] = True


def joined_nonspace_len(pieces: Sequence[str]) -> tuple[str, NDArray[np.int64]]:
    """``("\\x00".join(pieces), number of non-whitespace characters of each piece)``.

    Vectorised over the joined text instead of ``len("".join(s.split()))`` per piece, which
    allocates every word. NUL separates pieces: libxml2 strings cannot contain it. With
    ``D(x)`` the whitespace and separators before offset ``x``, ``x − D(x)`` counts the
    characters kept before ``x``, so each piece's count is the difference of that count at the
    separators around it (one ``searchsorted`` of the separators into the dropped offsets).
    """
    joined = "\x00".join(pieces)
    k = len(pieces)
    if not k:
        return joined, np.zeros(0, np.int64)
    if joined.isascii():
        codes = np.frombuffer(joined.encode("ascii"), np.uint8)
        cand = np.flatnonzero(codes <= 32)
    else:
        codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
        cand = np.flatnonzero((codes <= 32) | (codes >= 0x85))
    c = codes[cand]
    dropped = cand[np.take(_DROPPED_TABLE, c, mode="clip")]
    bounds = np.empty(k + 1, np.int64)  # the separators, and the text's end
    bounds[0] = 0
    bounds[1:-1] = cand[c == 0]
    bounds[-1] = len(codes)
    kept_before = bounds - np.searchsorted(dropped, bounds)  # 0 at offset 0
    return joined, np.diff(kept_before)


def sibling_ranks(parent: NDArray[np.int32], tag_id: NDArray[np.int32]) -> NDArray[np.int32]:
    """1-based position of each node among its parent's children with the same tag (one
    lexsort by parent, tag and node; the root is 1)."""
    n = len(parent)
    rank = np.ones(n, np.int32)
    if n > 1:
        idx = np.arange(1, n)
        par, tid = parent[1:], tag_id[1:]
        order = np.lexsort((idx, tid, par))
        sp, st = par[order], tid[order]
        new = np.ones(n - 1, dtype=bool)
        new[1:] = (sp[1:] != sp[:-1]) | (st[1:] != st[:-1])
        group_first = np.maximum.accumulate(np.where(new, np.arange(n - 1), 0))
        rank[idx[order]] = np.arange(n - 1) - group_first + 1
    return rank


def child_ranks(end: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Per position of a pre-order tree given by its subtree ends: its parent position and its
    0-based index among the parent's children (the root: −1 and 0)."""
    parent = parents_from_depths(depths_from_ends(end))
    n = len(parent)
    order = np.argsort(parent, kind="stable")
    grouped = parent[order]
    new = np.ones(n, dtype=bool)
    new[1:] = grouped[1:] != grouped[:-1]
    first = np.maximum.accumulate(np.where(new, np.arange(n), 0))
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n) - first
    return parent, rank


def event_stream(
    end_all: NDArray[np.intp],
    el_pos: NDArray[np.intp],
    ppos: NDArray[np.intp],
    ptail: NDArray[np.bool_],
    powner: NDArray[np.intp],
    plen: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[np.int8], NDArray[np.int64]]:
    """The ``(node, kind, length)`` event stream of :meth:`PageModel.document_events
    <wisdom_scrapy.page.model.PageModel.document_events>`, from the subtree ends of all
    positions, the elements' positions, and the text pieces to report (their position, whether
    each is a tail, its owner node and its length): one lexsort, no walk."""
    n = len(el_pos)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, np.int64)
    depth_all = depths_from_ends(end_all)
    # key1: position in the all-nodes order; key2: closes (0) before opens (1);
    # key3: deeper closes first; key4: an event before the text piece that follows it
    k1 = np.concatenate([el_pos, end_all[el_pos], np.where(ptail, end_all[ppos], ppos)])
    k2 = np.concatenate([np.ones(n), np.zeros(n), np.where(ptail, 0, 1)])
    k3 = np.concatenate([np.zeros(n), -depth_all[el_pos], np.where(ptail, -depth_all[ppos], 0)])
    k4 = np.concatenate([np.zeros(2 * n), np.ones(len(ppos))])
    order = np.lexsort((k4, k3, k2, k1))
    nodes = np.concatenate([np.arange(n), np.arange(n), powner]).astype(np.int64)
    kinds = np.concatenate(
        [np.zeros(n, np.int8), np.ones(n, np.int8), np.full(len(ppos), 2, np.int8)]
    )
    lengths = np.concatenate([np.zeros(2 * n, np.int64), plen])
    return nodes[order], kinds[order], lengths[order]


def first_piece_owner(
    end_all: NDArray[np.intp],
    el_pos: NDArray[np.intp],
    ppos: NDArray[np.intp],
    ptail: NDArray[np.bool_],
    powner: NDArray[np.intp],
    subtree_end: NDArray[np.integer],
) -> NDArray[np.int64]:
    """Per element: the owner of the first text piece of its sub-tree in the order of
    :func:`event_stream` (``len(el_pos)`` when it has none), with one sort of the pieces
    alone: that stream's order of the pieces is one integer key. A text follows its element's
    open (``2p + 1``), a tail its element's close, before what opens there (``2 end[p]``),
    the deeper close (the later position) first; so an element's first piece is the first
    piece keyed at or after its own text's key, if its owner lies inside the element (its
    node range ends at ``subtree_end``)."""
    n, big = len(el_pos), len(end_all) + 1
    owner = np.full(n, n, dtype=np.int64)
    if not len(ppos) or not n:
        return owner
    ppos = np.asarray(ppos, dtype=np.int64)
    at = np.where(ptail, 2 * np.asarray(end_all, dtype=np.int64)[ppos], 2 * ppos + 1)
    key = at * big + np.where(ptail, big - 1 - ppos, 0)
    order = np.argsort(key)
    k = np.searchsorted(key[order], (2 * np.asarray(el_pos, dtype=np.int64) + 1) * big)
    first = np.asarray(powner, dtype=np.int64)[order[np.minimum(k, len(order) - 1)]]
    node = np.arange(n)
    inside = (k < len(order)) & (first >= node)
    inside &= first < subtree_end
    owner[inside] = first[inside]
    return owner
