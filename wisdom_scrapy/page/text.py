"""Readable text of a subtree, as a browser's innerText gives it: the walks behind
:meth:`PageModel.text_of <wisdom_scrapy.page.model.PageModel.text_of>` (paragraphs and lines)
and its anchor texts (one line), over the page's per-position lists (:class:`TextWalk`).

Rules: the walks use an explicit stack (no recursion, any depth; a large subtree's text
events are ordered by array operations instead, the same events) and skip hidden elements,
comments and processing instructions, keeping their tails; blocks make paragraphs
(``"\\n\\n"``), ``<br>`` a line, cells a space; whitespace collapses except inside a verbatim
element (``<pre>``), whose lines are kept right-stripped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from wisdom_scrapy.page.arrays import range_mask
from wisdom_scrapy.page.tags import LINE, PARA, PRE_END, PRE_START, SPACE

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import NDArray


class TextWalk(NamedTuple):
    """A page's nodes by position (all lxml nodes in document order, comments included), as
    tuples: the walks read one entry per visited node, and tuple indexing beats numpy's (tuples
    of atoms, unlike lists, drop out of the cyclic garbage collector's walks)."""

    end: tuple[int, ...]  # the position after the subtree
    kinds: tuple[int, ...]  # its separation: 0 (inline), SPACE, LINE, PARA or PRE_START
    skip: tuple[bool, ...]  # no text of its own (comment, processing instruction, hidden element)
    texts: tuple[str | None, ...]  # its .text
    tails: tuple[str | None, ...]  # its .tail (text of its parent)


class TextArrays(NamedTuple):
    """The walk's per-position facts as arrays, for :func:`_subtree_events` (numeric arrays,
    which the cyclic collector never walks)."""

    end: NDArray[np.intp]  # the position after the subtree
    kinds: NDArray[np.int8]  # as TextWalk.kinds
    skip: NDArray[np.bool_]  # as TextWalk.skip
    has_text: NDArray[np.bool_]  # a visible element with a (non-empty) .text
    has_tail: NDArray[np.bool_]  # a (non-empty) .tail of a visible parent


#: A subtree of at least this many positions gets its events from array operations
#: (:func:`_subtree_events`, a fixed cost of some 25 numpy calls); a smaller one is walked.
VECTOR_MIN_POSITIONS = 256


def text_in(
    walk: TextWalk, p0: int, excluded: set[int] | tuple[()],
    arrays: Callable[[], TextArrays] | None = None,
) -> str:
    """Readable text of the subtree at position ``p0`` (neither skipped nor ``excluded``):
    its pieces and separation events, in document order, joined by :func:`_assemble`. An
    excluded or skipped subtree's tail is kept. With ``arrays`` (called only then, so a page
    that asks for small subtrees alone never builds them), a subtree of at least
    :data:`VECTOR_MIN_POSITIONS` positions is ordered by :func:`_subtree_events`."""
    if arrays is not None and walk.end[p0] - p0 >= VECTOR_MIN_POSITIONS:
        return _assemble(_subtree_events(walk, arrays(), p0, excluded))
    return _assemble(_walked_events(walk, p0, excluded))


def _walked_events(walk: TextWalk, p0: int, excluded: set[int] | tuple[()]) -> list[str | int]:
    """The events of :func:`text_in`, by a walk with an explicit stack: a Python step a
    position, the cheapest way for a small subtree."""
    end, kinds, skip, texts, tails = walk
    events: list[str | int] = []
    stack: list[int] = []
    stop = end[p0]
    q = p0
    while True:
        while stack and end[stack[-1]] <= q:
            r = stack.pop()
            kind = kinds[r]
            if kind and kind != LINE:
                events.append(PRE_END if kind == PRE_START else kind)
            tail = tails[r]
            if tail and r != p0:
                events.append(tail)
        if q >= stop:
            break
        if skip[q] or q in excluded:
            tail = tails[q]
            if tail:
                events.append(tail)
            q = end[q]
            continue
        if kinds[q]:
            events.append(kinds[q])
        text = texts[q]
        if text:
            events.append(text)
        stack.append(q)
        q += 1
    return events


def _subtree_events(
    walk: TextWalk, arrays: TextArrays, p0: int, excluded: set[int] | tuple[()]
) -> list[str | int]:
    """The events :func:`_walked_events` gives, ordered by array operations.

    A position opens with its separation and text at its place, and closes with its
    separation and tail at the end of its subtree, after the closings of the deeper
    positions ending there and before the next opening: so every event has a sort key
    (place, closing or opening, depth, separation or text). A skipped or excluded position
    only closes, with its tail; nothing inside it happens. The events are then picked from
    one tuple of the subtree's texts, tails and codes in key order (C-level look-ups)."""
    stop = int(arrays.end[p0])
    n = stop - p0
    end = arrays.end[p0:stop] - p0  # local places: the subtree is 0 .. n-1
    kind = arrays.kinds[p0:stop].astype(np.int64)
    root = arrays.skip[p0:stop].copy()
    root[0] = False  # p0 is neither skipped nor excluded (text_of checks)
    if excluded:
        local = np.fromiter(excluded, np.int64, len(excluded)) - p0
        root[local[(local > 0) & (local < n)]] = True
    roots = np.flatnonzero(root)
    inside = range_mask(roots + 1, end[roots], n)  # nothing happens there
    whole = ~root & ~inside
    closing = root & ~inside
    has_text = arrays.has_text[p0:stop]
    has_tail = arrays.has_tail[p0:stop].copy()
    has_tail[0] = False  # p0's tail is its parent's text
    places = np.arange(n)
    separated = whole & (kind != 0)
    # (which positions, their place, 1 for an opening (after the closings at its place),
    # separation 0 / text or tail 1, index of the event in ``pool`` below)
    parts = (
        (separated, places, 1, 0, 2 * n + kind),
        (whole & has_text, places, 1, 1, places),
        (separated & (kind != LINE), end, 0, 0, 2 * n + np.where(kind == PRE_START, PRE_END, kind)),
        ((whole | closing) & has_tail, end, 0, 1, n + places),
    )
    keys, picks = [], []
    for mask, place, opening, sub, pick in parts:
        at = np.flatnonzero(mask)
        depth = 0 if opening else n - at  # deeper closings (later openings) first
        keys.append(((place[at] * 2 + opening) * (n + 1) + depth) * 2 + sub)
        picks.append(pick[at])
    order = np.argsort(np.concatenate(keys))
    pool = (*walk.texts[p0:stop], *walk.tails[p0:stop], 0, SPACE, LINE, PARA, PRE_START, PRE_END)
    event_at = cast("Callable[[int], str | int]", pool.__getitem__)  # a picked text: never None
    return list(map(event_at, np.concatenate(picks)[order].tolist()))


def flat_text(walk: TextWalk, p0: int) -> str:
    """Visible text of the subtree at position ``p0`` on one line (whitespace-normalised,
    a space around block and cell elements): :func:`text_in` without paragraphs, cheap
    enough to run for every anchor of a page."""
    end, kinds, skip, texts, tails = walk
    if skip[p0]:
        return ""
    stop = end[p0]
    if stop == p0 + 1:  # no children: most anchors
        text = texts[p0]
        return " ".join(text.split()) if text else ""
    parts: list[str] = []
    stack: list[int] = []
    q = p0
    while True:
        while stack and end[stack[-1]] <= q:
            r = stack.pop()
            if kinds[r]:
                parts.append(" ")
            tail = tails[r]
            if tail:
                parts.append(tail)
        if q >= stop:
            break
        if skip[q]:
            tail = tails[q]
            if tail and q != p0:
                parts.append(tail)
            q = end[q]
            continue
        if kinds[q]:
            parts.append(" ")
        text = texts[q]
        if text:
            parts.append(text)
        if q != p0:
            stack.append(q)
        q += 1
    return " ".join("".join(parts).split())


def _assemble(events: list[str | int]) -> str:
    """Join text_of events (strings and separator codes) into paragraphs and lines."""
    paras: list[str] = []
    lines: list[str] = []
    buf: list[str] = []
    pre: list[str] = []
    pre_depth = 0

    def end_line() -> None:
        line = " ".join("".join(buf).split())
        if line:
            lines.append(line)
        buf.clear()

    def end_para() -> None:
        end_line()
        if lines:
            paras.append("\n".join(lines))
            lines.clear()

    for ev in events:
        if type(ev) is str:
            (pre if pre_depth else buf).append(ev)
        elif ev == SPACE:
            (pre if pre_depth else buf).append(" ")
        elif ev == LINE:
            if pre_depth:
                pre.append("\n")
            else:
                end_line()
        elif ev == PARA:
            if pre_depth:
                pre.append("\n")
            else:
                end_para()
        elif ev == PRE_START:
            if not pre_depth:
                end_para()
            pre_depth += 1
        elif ev == PRE_END:
            pre_depth -= 1
            if not pre_depth:
                text = "\n".join(line.rstrip() for line in "".join(pre).split("\n")).strip("\n")
                if text.strip():
                    paras.append(text)
                pre.clear()
    end_para()
    return "\n\n".join(paras)
