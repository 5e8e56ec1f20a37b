"""Readable text of a subtree: turning :meth:`PageModel.text_of
<wisdom_scrapy.page.model.PageModel.text_of>`'s stream of text pieces and separation codes into
paragraphs and lines, as a browser's innerText does.

Rules: blocks make paragraphs (``"\\n\\n"``), ``<br>`` a line, cells a space; whitespace
collapses except inside a verbatim element (``<pre>``), whose lines are kept right-stripped.
"""

from __future__ import annotations

from wisdom_scrapy.page.tags import _LINE, _PARA, _PRE_END, _PRE_START, _SPACE


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
        elif ev == _SPACE:
            (pre if pre_depth else buf).append(" ")
        elif ev == _LINE:
            if pre_depth:
                pre.append("\n")
            else:
                end_line()
        elif ev == _PARA:
            if pre_depth:
                pre.append("\n")
            else:
                end_para()
        elif ev == _PRE_START:
            if not pre_depth:
                end_para()
            pre_depth += 1
        elif ev == _PRE_END:
            pre_depth -= 1
            if not pre_depth:
                text = "\n".join(line.rstrip() for line in "".join(pre).split("\n")).strip("\n")
                if text.strip():
                    paras.append(text)
                pre.clear()
    end_para()
    return "\n\n".join(paras)
