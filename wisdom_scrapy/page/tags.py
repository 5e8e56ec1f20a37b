"""The page model's tag tables: which elements hide their text, which are layout-only, which
separate paragraphs, cells or lines, and the separation codes :meth:`PageModel.text_of
<wisdom_scrapy.page.model.PageModel.text_of>` and the CSS reader share.

Rules: tag names are lower-case local names (:func:`local_name`); the tables are per distinct
tag, never per node (:func:`tag_tables`); nothing here reads a tree or a page, so every other
module of ``page/`` may import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import NDArray

#: Elements whose text is never content; their whole subtree is ``hidden``.
HIDDEN_TAGS: frozenset[str] = frozenset(
    {"head", "script", "style", "noscript", "template", "iframe"}
)
#: Layout-only tags kept as nodes but ignored by SII (WISDOM §3.1.3), besides hidden nodes.
DUMMY_TAGS: frozenset[str] = frozenset({"br", "wbr", "hr", "spacer"})
#: Elements that start and end a paragraph in ``text_of``.
BLOCK_TAGS: frozenset[str] = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
        "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li",
        "listing", "main", "menu", "nav", "ol", "p", "plaintext", "pre", "section", "summary",
        "table", "tbody", "tfoot", "thead", "tr", "ul", "xmp",
    }
)  # fmt: skip
#: Elements separated from their neighbours by a space in ``text_of`` (cells).
_SPACED_TAGS: frozenset[str] = frozenset({"td", "th", "option", "button", "input", "img"})
#: Elements whose text keeps its lines (``text_of``): one listing, not paragraphs.
VERBATIM_TAGS: frozenset[str] = frozenset({"pre", "listing", "plaintext", "xmp"})


# text_of event codes
SPACE, LINE, PARA, PRE_START, PRE_END = 1, 2, 3, 4, 5


def local_name(tag: str) -> str:
    """``{ns}Name`` → ``name``: XHTML trees and HTML trees get the same tag names."""
    if tag[:1] == "{":
        tag = tag.rpartition("}")[2]
    return tag.lower()


def tag_kind(name: str) -> int:
    if name in VERBATIM_TAGS:
        return PRE_START
    if name in BLOCK_TAGS:
        return PARA
    if name == "br":
        return LINE
    if name in _SPACED_TAGS:
        return SPACE
    return 0


def tag_tables(
    keys: Iterable[object],
) -> tuple[dict[str, int], NDArray[np.int32], NDArray[np.bool_], NDArray[np.bool_]]:
    """Tables over a page's lxml tag codes (code ``k``: the ``k``-th of ``keys``, its ``.tag``
    values: strings for elements, the Comment and PI factories otherwise), plus a spare code
    so that no table is empty: the tag ids (name → id, in order of first meeting), each code's
    tag id (−1 for a non-element), whether it is hidden, whether it is dummy."""
    keys = list(keys)
    name_code: dict[str, int] = {}
    ncodes = len(keys) + 1  # + a spare code, so that code tables are never empty
    code_tid = np.full(ncodes, -1, dtype=np.int32)
    code_hidden = np.zeros(ncodes, dtype=bool)
    code_dummy = np.zeros(ncodes, dtype=bool)
    for code, key in enumerate(keys):
        if isinstance(key, str):
            name = local_name(key)
            code_tid[code] = name_code.setdefault(name, len(name_code))
            code_hidden[code] = name in HIDDEN_TAGS
            code_dummy[code] = name in DUMMY_TAGS
    return name_code, code_tid, code_hidden, code_dummy
