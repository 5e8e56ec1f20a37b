"""Cleaning a copied subtree for :meth:`PageModel.html_of
<wisdom_scrapy.page.model.PageModel.html_of>`: removing elements while keeping their tail
text, keeping the page's CSS boxes as ``style`` attributes, and defusing what could run
(``on*`` handlers, ``javascript:`` URLs, ``srcdoc``, plugin elements).

Rules: only copies are changed, never the page's tree; text moved onto a neighbour is kept
XML-safe (lxml refuses some characters libxml2's HTML parser lets through).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lxml import etree
from lxml import html as lxml_html

from wisdom_scrapy.page.tags import PARA

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

# characters lxml refuses in text it is given (libxml2's HTML parser lets some through)
_NOT_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# Elements carrying an event-handler attribute (onclick, onload, …), the node itself included.
_WITH_EVENT_HANDLERS = etree.XPath(
    "descendant-or-self::*[@*[starts-with(translate(local-name(), 'ON', 'on'), 'on')]]"
)


# Elements with an attribute that may hold a URL with a scheme, or HTML (srcdoc); plugin elements.
_WITH_URL_SCHEME = etree.XPath("descendant-or-self::*[@*[contains(., ':')] or @srcdoc]")
_PLUGINS = etree.XPath("descendant::*[self::object or self::embed or self::applet]")
_URL_ATTRIBUTES = frozenset({
    "href", "src", "action", "formaction", "data", "poster", "background", "lowsrc", "dynsrc",
    "cite", "codebase", "longdesc", "ping", "srcset", "xlink:href",
    "{http://www.w3.org/1999/xlink}href",
})  # fmt: skip
_ACTIVE_SCHEMES = ("javascript:", "vbscript:", "data:")
_URL_IGNORED = re.compile(r"[\x00-\x20\x7f]+")  # browsers skip these inside a scheme


def defuse(root: etree._Element) -> None:
    """Make a copied subtree safe to show: drop URL attributes with an active scheme
    (``javascript:``, ``vbscript:``, ``data:``, however spaced or cased, as browsers read them),
    ``srcdoc`` (a whole document), and plugin elements (``object``, ``embed``, ``applet``)."""
    for el in _WITH_URL_SCHEME(root):
        for name, value in list(el.attrib.items()):
            if name.lower() == "srcdoc" or (
                name.lower() in _URL_ATTRIBUTES
                and _URL_IGNORED.sub("", value).lower().startswith(_ACTIVE_SCHEMES)
            ):
                del el.attrib[name]
    for el in _PLUGINS(root):
        drop_keep_tail(el)


def drop_keep_tail(el: etree._Element) -> None:
    """Remove ``el`` and its subtree, keeping its tail text in place."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = _NOT_XML_CHARS.sub("", (prev.tail or "") + el.tail)
        else:
            parent.text = _NOT_XML_CHARS.sub("", (parent.text or "") + el.tail)
    parent.remove(el)


def dropped_positions(
    end: Sequence[int], skip: Sequence[bool], p0: int, excluded: Collection[int]
) -> list[int]:
    """The positions of the subtrees the copy of position ``p0``'s subtree leaves out (skipped
    or ``excluded`` ones, outermost only), in document order; ``end``: the subtree ends."""
    drop: list[int] = []
    q, stop = p0 + 1, end[p0]
    while q < stop:
        if skip[q] or q in excluded:
            drop.append(q)
            q = end[q]
        else:
            q += 1
    return drop


def clean_copy(
    clone: etree._Element,
    drops: list[etree._Element],
    boxes: list[tuple[etree._Element, int]],
) -> str:
    """The HTML of ``clone`` (a deep copy, changed in place) once its CSS ``boxes`` (element,
    ``PARA`` or ``SPACE``) carry their ``display`` in a ``style`` attribute (unless it sets
    one), the ``drops`` (in document order) are removed with their tails kept, and event
    handlers and active URLs are gone."""
    for el, kind in boxes:
        if "display" not in (el.get("style") or ""):
            box = "display:block" if kind == PARA else "display:inline-block"
            el.set("style", f"{el.get('style')};{box}" if el.get("style") else box)
    for el in drops:  # document order: a removed node's tail moves onto what precedes it
        drop_keep_tail(el)
    for el in _WITH_EVENT_HANDLERS(clone):  # XPath: only elements that have one are visited
        for attr in [a for a in el.attrib if a.lower().startswith("on")]:
            del el.attrib[attr]
    defuse(clone)
    return lxml_html.tostring(clone, encoding="unicode")
