"""The page's own CSS, read only for what changes its text: which elements a ``display``
rule or ``style`` attribute turns into a box (:attr:`PageModel._css_boxes
<wisdom_scrapy.page.model.PageModel>`).

Rules: the cascade is HTML's (importance, specificity, order; a ``style`` attribute above any
selector); at-rules and selectors with pseudo-classes do not apply to the page as first shown;
sheets and selectors are parsed once per process (LRU caches): a site's pages share them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from lxml import etree

from wisdom_scrapy.page.tags import _PARA, _SPACE

#: CSS ``display`` values → the separation of :meth:`PageModel.text_of`.
_DISPLAY_KIND: dict[str, int] = {
    **dict.fromkeys(
        ("block", "flex", "grid", "list-item", "table", "flow-root", "table-row",
         "table-row-group", "table-header-group", "table-footer-group", "table-caption",
         "-webkit-box", "-ms-flexbox"),
        _PARA,
    ),
    **dict.fromkeys(
        ("inline-block", "inline-flex", "inline-grid", "inline-table", "table-cell",
         "-webkit-inline-box", "-ms-inline-flexbox"),
        _SPACE,
    ),
}  # fmt: skip
_CONTAINER_DISPLAY = frozenset(
    {"flex", "grid", "inline-flex", "inline-grid", "-webkit-box", "-ms-flexbox"}
)
_NOT_A_BOX = frozenset({"inline", "contents", "none"})
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_DISPLAY_WORD = re.compile(rb"display\s*:", re.IGNORECASE)
_SUBJECT_NAMES = re.compile(r"([.#])((?:[-\w]|\\.)+)")
_CSS_DISPLAY = re.compile(r"(?:^|[;{\s])display\s*:\s*([-a-z]+)\s*(!\s*important)?", re.IGNORECASE)
_STYLED = etree.XPath("descendant-or-self::*[contains(@style, 'display')]")


class _Compound(NamedTuple):
    """One compound selector of tag, classes and ids (``div.a.b#c``)."""

    tag: str | None
    classes: frozenset[str]
    ids: frozenset[str]


class _Selector(NamedTuple):
    """A parsed CSS selector and its specificity. ``subject``: what the matched element
    must carry. ``chain``: when the selector is only compounds joined by descendant (" ") and
    child (">") combinators, the subject and then each (combinator, compound) to its left,
    matched over the page arrays; otherwise None, and its XPath (:func:`_css_xpath`)
    decides."""

    text: str
    specificity: tuple[int, int, int]
    subject: _Compound
    chain: tuple[tuple[str, _Compound], ...] | None


_Rule = tuple[str, str, int]


@lru_cache(maxsize=64)  # the pages of a site share their sheets
def _display_rules(sheet: str) -> tuple[_Rule, ...]:
    """The ``display`` rules of a style sheet's top level, one per selector of a rule:
    (selector text, value, important). Rules inside at-rule blocks are skipped.

    Only the blocks holding a ``display`` declaration are read: brace depths come from one
    cumulative sum over the sheet, so a large framework sheet costs no Python loop per rule.
    Not tinycss2 (issue 34): it finds the same rules on all 475 sheet-carrying pages of the
    fixtures and ../shared/data but takes 7.3 ms a page against 0.17 ms, half the add-on's
    15 ms budget (``python benchmarks/library_parts.py``).
    """
    sheet = _CSS_COMMENT.sub(" ", sheet) if "/*" in sheet else sheet
    raw = sheet.encode("utf-8", "surrogatepass")  # byte offsets: braces are ASCII
    hits = [m.start() for m in _DISPLAY_WORD.finditer(raw)]  # a literal: a fast scan
    if not hits:
        return ()
    codes = np.frombuffer(raw, np.uint8)
    opening = codes == ord("{")
    braces = np.flatnonzero(opening | (codes == ord("}")))
    depth = np.cumsum(opening[braces].astype(np.int64) * 2 - 1)  # depth after each brace
    out: list[_Rule] = []
    for k in sorted(set((np.searchsorted(braces, hits, side="right") - 1).tolist())):
        if k < 0 or not opening[braces[k]] or depth[k] != 1 or k + 1 >= len(braces):
            continue  # not inside a top-level rule (an at-rule's block, stray text)
        start = int(braces[k - 1]) + 1 if k else 0
        prelude = raw[start : braces[k]].decode("utf-8", "replace").rsplit(";", 1)[-1].strip()
        found = _CSS_DISPLAY.findall(raw[braces[k] + 1 : braces[k + 1]].decode("utf-8", "replace"))
        if not found or prelude.startswith("@"):
            continue  # after @import …; an at-rule
        value, important = found[-1]
        out += [(t.strip(), value.lower(), int(bool(important))) for t in prelude.split(",")]
    return tuple(out)


@lru_cache(maxsize=1 << 12)
def _css_selector(text: str) -> _Selector | None:
    """A selector compiled to XPath, or None for one that does not apply to the page at rest
    (pseudo-classes, pseudo-elements) or that cssselect cannot read."""
    from cssselect import SelectorError, parse
    from cssselect.parser import CombinedSelector

    if not text or ":" in text:
        return None
    try:
        parsed = parse(text)
        if len(parsed) != 1:
            return None
    except (SelectorError, ValueError):
        return None
    steps: list[tuple[str, _Compound]] = []
    node: object = parsed[0].parsed_tree
    combinator, plain = "", True
    while node is not None:
        part = node.subselector if isinstance(node, CombinedSelector) else node
        compound, ok = _compound(part)
        steps.append((combinator, compound))
        plain = plain and ok
        if not isinstance(node, CombinedSelector):
            break
        combinator, plain = node.combinator, plain and node.combinator in (" ", ">")
        node = node.selector
    chain = tuple(steps) if plain else None
    return _Selector(text, parsed[0].specificity(), steps[0][1], chain)


@lru_cache(maxsize=1 << 10)
def _css_xpath(text: str) -> etree.XPath | None:
    """The XPath of a selector (compiled when a page first needs it), None if it has none."""
    from cssselect import GenericTranslator, SelectorError

    try:
        xpath = GenericTranslator().css_to_xpath(text, prefix="descendant-or-self::")
        return etree.XPath(xpath)
    except (SelectorError, etree.XPathSyntaxError, ValueError):
        return None


def _compound(node: object) -> tuple[_Compound, bool]:
    """The tag, classes and ids of a cssselect compound, and whether that is all it has."""
    from cssselect.parser import Class, Element, Hash

    classes: set[str] = set()
    ids: set[str] = set()
    plain = True
    while node is not None and not isinstance(node, Element):
        if isinstance(node, Class):
            classes.add(node.class_name)
        elif isinstance(node, Hash):
            ids.add(node.id)
        else:
            plain = False  # [attr], :not() …
        node = getattr(node, "selector", None)
    tag = node.element.lower() if isinstance(node, Element) and node.element else None
    return _Compound(tag, frozenset(classes), frozenset(ids)), plain


def _inline_display(style: str) -> tuple[str, int]:
    """The ``display`` value of a ``style`` attribute (last one wins) and its importance."""
    found = _CSS_DISPLAY.findall(";" + style)
    if not found:
        return "", 0
    value, important = found[-1]
    return value.lower(), int(bool(important))
