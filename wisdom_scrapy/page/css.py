"""The page's own CSS, read only for what changes its text: which elements a ``display``
rule or ``style`` attribute turns into a box (:func:`css_boxes`, which
:meth:`PageModel.text_of <wisdom_scrapy.page.model.PageModel.text_of>` separates).

Rules: the cascade is HTML's (importance, specificity, order; a ``style`` attribute above any
selector); at-rules and selectors with pseudo-classes do not apply to the page as first shown;
sheets and selectors are parsed once per process (LRU caches): a site's pages share them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np
from lxml import etree

from wisdom_scrapy.page.arrays import range_mask
from wisdom_scrapy.page.tags import PARA, SPACE, tag_kind

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

#: CSS ``display`` values → the separation of :meth:`~wisdom_scrapy.page.model.PageModel.text_of`.
_DISPLAY_KIND: dict[str, int] = {
    **dict.fromkeys(
        ("block", "flex", "grid", "list-item", "table", "flow-root", "table-row",
         "table-row-group", "table-header-group", "table-footer-group", "table-caption",
         "-webkit-box", "-ms-flexbox"),
        PARA,
    ),
    **dict.fromkeys(
        ("inline-block", "inline-flex", "inline-grid", "inline-table", "table-cell",
         "-webkit-inline-box", "-ms-inline-flexbox"),
        SPACE,
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
# The elements whose ``style`` attribute names ``display``, found through the attribute axis:
# libxml2 lists the ``style`` attributes faster than it tests a predicate on every element
# (0.5 against 1.0 ms a pydoc page); the same elements, in document order.
_STYLED = etree.XPath("descendant-or-self::*/@style[contains(., 'display')]/..")


class StyledPage(Protocol):
    """What the CSS reader reads of a page model (:class:`~wisdom_scrapy.page.model.PageModel`
    has it): node arrays, and the elements' attributes."""

    n: int
    tag_names: list[str]
    tag_id: NDArray[np.int32]
    parent: NDArray[np.int32]
    subtree_end: NDArray[np.int32]
    tlen: NDArray[np.int64]
    hidden: NDArray[np.bool_]

    def tag_code(self, name: str) -> int: ...

    def children(self, node: int) -> NDArray[np.int32]: ...

    def attributes(self, names: Sequence[str]) -> dict[str, list[str | None]]: ...


def css_boxes(
    page: StyledPage,
    root: etree._Element,
    sheets: list[str],
    element_nodes: Callable[[], dict[etree._Element, int]],
    styled: list[tuple[int, str]] | None = None,
) -> dict[int, int]:
    """Nodes the page's own CSS (``<style>`` ``sheets`` and ``style`` attributes under
    ``root``) displays as a box: ``PARA`` for a block-level box, ``SPACE`` for an inline box
    (inline-block, table cell) or an item of a flex or grid container. A browser separates such
    boxes (``<span class=label>Advertisement</span><a>Spring sale</a>`` with ``.label
    {display:block}`` reads "Advertisement / Spring sale"); tags alone glue them.

    The cascade is HTML's: the winning ``display`` of an element is the one of highest
    (``!important``, specificity, order), a ``style`` attribute above any selector.
    Rules in ``@media`` and other at-rules, and selectors with pseudo-classes or
    pseudo-elements, do not apply to the page as first shown and are skipped. A sheet
    serves a whole site, so a rule is only evaluated when its subject (tag, classes, ids)
    is on an element of this page whose separation it can change (:func:`_css_matches`).
    ``element_nodes`` maps the tree's elements to nodes; it is only called when a ``style``
    attribute or an XPath-evaluated selector needs it. ``styled``: (node, ``style``) of the
    elements whose ``style`` attribute names ``display``, in document order, when the caller
    has read them (:func:`_styled_nodes` finds them in the tree otherwise).
    """
    rules = [r for sheet in sheets if "display" in sheet for r in _display_rules(sheet)]
    if styled is None:
        styled = _styled_nodes(root, element_nodes)
    if not rules and not styled:
        return {}
    best: dict[int, tuple[tuple[int, ...], str]] = {}
    matches = _css_matches(page, root, rules, element_nodes)
    for order, (node, selector, value, important) in enumerate(matches):
        key = (important, 0, *selector.specificity, order)
        if node not in best or best[node][0] < key:
            best[node] = (key, value)
    for at, style in styled:
        display, weight = _inline_display(style)
        key = (weight, 1, 0, 0, 0, 0)  # above every selector's
        if display and (at not in best or best[at][0] < key):
            best[at] = (key, display)
    return _boxes(page, {i: value for i, (_, value) in best.items()})


def _styled_nodes(
    root: etree._Element, element_nodes: Callable[[], dict[etree._Element, int]]
) -> list[tuple[int, str]]:
    """(node, ``style``) of the elements under ``root`` whose ``style`` names ``display``."""
    found = _STYLED(root)
    if not found:
        return []
    where = element_nodes()
    return [(at, el.get("style") or "") for el in found if (at := where.get(el)) is not None]


def _boxes(page: StyledPage, display: dict[int, str]) -> dict[int, int]:
    """The separation the winning ``display`` of each node gives it (flex and grid items are
    boxes too), where that adds one to what its tag gives."""
    boxes: dict[int, int] = {}
    containers = [i for i, v in display.items() if v in _CONTAINER_DISPLAY]
    for i in containers:  # flex and grid items are boxes whatever their own display
        for kid in page.children(i).tolist():
            boxes[kid] = SPACE
    for i, value in display.items():
        kind = _DISPLAY_KIND.get(value, 0)
        if kind:
            boxes[i] = max(boxes.get(i, 0), kind)
        elif value in _NOT_A_BOX:
            boxes.pop(i, None)
    # a box only adds a separation, never removes one (nor turns a <br> or <pre> into one)
    kind_of_tid = [tag_kind(name) for name in page.tag_names]
    tids = page.tag_id
    return {
        i: kind
        for i, kind in boxes.items()
        if kind_of_tid[tids[i]] in (0, SPACE) and kind > kind_of_tid[tids[i]]
    }


def _class_id_index(page: StyledPage) -> dict[tuple[str, str], list[int]]:
    """``("class", name)`` / ``("id", name)`` → the nodes carrying it, in node order."""
    attrs = page.attributes(("class", "id"))
    names: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for name in ("class", "id"):
        for i, v in enumerate(attrs[name]):
            if v:
                for token in v.split() if name == "class" else (v,):
                    names[name, token].append(i)
    return names


def _css_matches(
    page: StyledPage,
    root: etree._Element,
    rules: list[_Rule],
    element_nodes: Callable[[], dict[etree._Element, int]],
) -> list[tuple[int, _Selector, str, int]]:
    """(node, selector, value, important) for every node a rule applies to, in rule order.

    Only nodes whose separation the value can change count: inline elements with text,
    or for a flex or grid container the parents of such elements. Selectors of compounds
    (tag, classes, ids) joined by descendant and child combinators are matched over the
    page arrays (:class:`_PageIndex`); others are evaluated as XPath, and only when their
    subject's classes and ids are on the page.
    """
    names = _class_id_index(page)
    index = _PageIndex(page, names)
    kind_of_tid = np.array([tag_kind(name) for name in page.tag_names], dtype=np.int8)
    inline = np.isin(kind_of_tid[page.tag_id], (0, SPACE)) & (page.tlen > 0) & ~page.hidden
    parents = np.zeros(page.n, dtype=bool)
    parents[page.parent[np.flatnonzero(inline)]] = True
    out: list[tuple[int, _Selector, str, int]] = []
    for text, value, important in rules:
        # most rules of a site's sheet name classes this page lacks: no parse for them
        subject = re.split(r"[\s>+~]+", text)[-1]
        if any(
            ("class" if mark == "." else "id", name) not in names
            for mark, name in _SUBJECT_NAMES.findall(subject)
        ):
            continue
        sel = _css_selector(text)
        if sel is None:
            continue
        pool = parents if value in _CONTAINER_DISPLAY else inline
        if sel.chain is not None:
            found = index.matching(sel.chain)
        else:
            found = index.carrying(sel.subject)
            if found is not None and (found & pool).any():
                found = _xpath_matches(page.n, root, sel.text, element_nodes)
        if found is not None:
            hit = np.flatnonzero(found & pool).tolist()
            out.extend((i, sel, value, important) for i in hit)
    return out


def _xpath_matches(
    n: int,
    root: etree._Element,
    selector: str,
    element_nodes: Callable[[], dict[etree._Element, int]],
) -> NDArray[np.bool_] | None:
    """Node mask of the elements a CSS selector's XPath finds (None if it has none)."""
    xpath = _css_xpath(selector)
    if xpath is None:
        return None
    where = element_nodes()
    found = np.zeros(n, dtype=bool)
    found[[i for i in map(where.get, xpath(root)) if i is not None]] = True
    return found


class _PageIndex:
    """Node masks of a page's tags, classes and ids, to match CSS selectors over the arrays."""

    def __init__(self, model: StyledPage, names: dict[tuple[str, str], list[int]]) -> None:
        self.model = model
        self.names = names
        self._masks: dict[tuple[str, str], NDArray[np.bool_]] = {}

    def _mask(self, key: tuple[str, str]) -> NDArray[np.bool_]:
        mask = self._masks.get(key)
        if mask is None:
            mask = self._masks[key] = np.zeros(self.model.n, dtype=bool)
            mask[self.names[key]] = True
        return mask

    def carrying(self, c: _Compound) -> NDArray[np.bool_] | None:
        """Nodes that carry compound ``c`` (None when none can: a class or id not on it)."""
        keys = [("class", x) for x in c.classes] + [("id", x) for x in c.ids]
        if any(k not in self.names for k in keys):
            return None
        m = self.model
        out = np.ones(m.n, dtype=bool)
        if c.tag is not None:
            out = m.tag_id == m.tag_code(c.tag)
        for key in keys:
            out = out & self._mask(key)
        return out

    def matching(self, chain: tuple[tuple[str, _Compound], ...]) -> NDArray[np.bool_] | None:
        """Nodes matching a chain of compounds joined by " " and ">", found left to right:
        the nodes of each compound that are children (">") or descendants (" ") of a node
        matching the part to its left — exactly CSS's right-to-left search, for all at once."""
        m = self.model
        found = self.carrying(chain[-1][1])
        for k in range(len(chain) - 2, -1, -1):
            here = self.carrying(chain[k][1])
            if found is None or here is None or not found.any():
                return None
            if chain[k + 1][0] == ">":
                below = np.zeros(m.n, dtype=bool)
                below[1:] = found[m.parent[1:]]
            else:
                starts = np.flatnonzero(found)
                below = range_mask(starts + 1, m.subtree_end[starts], m.n)
            found = here & below
        return found


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
