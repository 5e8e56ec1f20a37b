"""Readable text of a subtree, as a browser's innerText gives it: the walks behind
:meth:`PageModel.text_of <wisdom_scrapy.page.model.PageModel.text_of>` (paragraphs and lines)
and its anchor texts (one line), over the page's per-position lists (:class:`TextWalk`).

Rules: the walks use an explicit stack (no recursion, any depth) and skip hidden elements,
comments and processing instructions, keeping their tails; blocks make paragraphs
(``"\\n\\n"``), ``<br>`` a line, cells a space; whitespace collapses except inside a verbatim
element (``<pre>``), whose lines are kept right-stripped.
"""

from __future__ import annotations

from typing import NamedTuple

from wisdom_scrapy.page.tags import LINE, PARA, PRE_END, PRE_START, SPACE


class TextWalk(NamedTuple):
    """A page's nodes by position (all lxml nodes in document order, comments included), as
    tuples: the walks read one entry per visited node, and tuple indexing beats numpy's (tuples
    of atoms, unlike lists, drop out of the cyclic garbage collector's walks)."""

    end: tuple[int, ...]  # the position after the subtree
    kinds: tuple[int, ...]  # its separation: 0 (inline), SPACE, LINE, PARA or PRE_START
    skip: tuple[bool, ...]  # no text of its own (comment, processing instruction, hidden element)
    texts: tuple[str | None, ...]  # its .text
    tails: tuple[str | None, ...]  # its .tail (text of its parent)


def text_in(walk: TextWalk, p0: int, excluded: set[int] | tuple[()]) -> str:
    """Readable text of the subtree at position ``p0`` (neither skipped nor ``excluded``):
    its pieces and separation events, in document order, joined by :func:`_assemble`. An
    excluded or skipped subtree's tail is kept."""
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
    return _assemble(events)


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
