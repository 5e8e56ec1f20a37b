"""Feeding pages into the term-entropy store: what the spider middleware does for each response.

It works on the lxml tree Scrapy already parsed (``response.selector.root``), so a page is parsed
once however many stages look at it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import lxml.html
from lxml import etree

from wisdom_scrapy.store.base import Link
from wisdom_scrapy.text import count_terms
from wisdom_scrapy.urls import absolute_url, document_base, host_key

if TYPE_CHECKING:
    from wisdom_scrapy.dom import PageModel
    from wisdom_scrapy.store.base import TermStore

__all__ = [
    "FeedResult",
    "feed_model",
    "feed_page",
    "feed_tree",
    "page_counts",
    "page_links",
    "parse_html",
]

# Elements whose text is code or markup, never shown to a reader.
HIDDEN_TAGS = ("script", "style", "noscript", "template")


# All text nodes, as plain strings: lxml's XPath creates no element proxies (``itertext`` does).
_ALL_TEXT = etree.XPath("//text()", smart_strings=False)


def parse_html(html: str | bytes, url: str = "") -> lxml.html.HtmlElement | None:
    """Parse a saved page with a parser that fetches nothing (HTML has no external entities).

    Returns None for input with no element (empty, whitespace, binary noise lxml rejects).
    """
    encoding = None
    if isinstance(html, str):
        # lxml refuses str input that declares an encoding: parse its UTF-8 bytes as UTF-8,
        # whatever a <meta charset> says. Bytes are decoded as they declare.
        html, encoding = html.encode("utf-8", "surrogatepass"), "utf-8"
    if not html.strip():
        return None
    parser = lxml.html.HTMLParser(encoding=encoding, no_network=True, huge_tree=True)
    try:
        return lxml.html.document_fromstring(html, parser=parser, base_url=url or None)
    except (etree.ParserError, ValueError):
        return None


def _visible_texts(root: lxml.html.HtmlElement) -> list[str]:
    """Text pieces a reader sees: all text nodes (C-speed XPath) less hidden elements'.

    Only the multiset of pieces matters for term counts, so hidden pieces are taken out of the
    list of all pieces by value (C-speed list scans) instead of walking the tree in Python; a
    visible piece that happens to equal a hidden one is put back as often as it occurs.
    """
    pieces = _ALL_TEXT(root)
    hidden = Counter(
        piece
        for el in root.iter(*HIDDEN_TAGS)
        for piece in el.itertext(with_tail=False)
        if not piece.isspace()
    )
    if not hidden:
        return pieces
    visible = [piece for piece in pieces if piece not in hidden]
    for piece, n in hidden.items():
        visible.extend([piece] * (pieces.count(piece) - n))
    return visible


def page_counts(root: lxml.html.HtmlElement, keep_numbers: bool = False) -> Counter[str]:
    """Term frequencies of a page's visible text (WISDOM §3.1: the root node's innerText)."""
    return count_terms(_visible_texts(root), keep_numbers)


def page_links(root: lxml.html.HtmlElement, url: str) -> list[Link]:
    """Out-links of a page: absolute URL (no fragment) and whitespace-normalised anchor text.

    Image links take their text from the images' alt attributes.
    """
    base = document_base(root, url)
    links = []
    for a in root.iter("a"):
        target = absolute_url(base, a.get("href"))
        if target is None:
            continue
        # Most anchors hold plain text only: skip the subtree walk for them.
        raw = (a.text or "") if len(a) == 0 else "".join(a.itertext())
        text = " ".join(raw.split())
        if not text:
            text = " ".join(img.get("alt", "").strip() for img in a.iter("img")).strip()
        links.append(Link(target, text))
    return links


@dataclass(frozen=True)
class FeedResult:
    """What feeding one page did: ``changed`` is False for an unchanged, already stored page."""

    site: str
    changed: bool
    terms: int
    links: int


def feed_tree(
    store: TermStore,
    root: lxml.html.HtmlElement,
    url: str,
    *,
    site: str | None = None,
    keep_numbers: bool = False,
) -> FeedResult:
    """Add one parsed page's terms and out-links to ``store`` under ``site`` (default: its host)."""
    site = site or host_key(url)
    counts = page_counts(root, keep_numbers)
    links = page_links(root, url)
    changed = store.add_page(site, url, counts, links)
    return FeedResult(site, changed, sum(counts.values()), len(links))


def feed_model(store: TermStore, model: PageModel, *, site: str | None = None) -> FeedResult:
    """Add a modelled page's terms and out-links: the same data as :func:`feed_tree`, taken from
    the :class:`~wisdom_scrapy.dom.PageModel` the analysis builds anyway."""
    site = site or host_key(model.url)
    counts = model.page_counts()
    links = [(link.url, link.text) for link in model.links()]
    changed = store.add_page(site, model.url, counts, links)
    return FeedResult(site, changed, sum(counts.values()), len(links))


def feed_page(
    store: TermStore,
    html: str | bytes,
    url: str,
    *,
    site: str | None = None,
    keep_numbers: bool = False,
) -> bool:
    """Feed a saved page (what the middleware does for a response). False if unchanged or empty."""
    root = parse_html(html, url)
    if root is None:
        return False
    return feed_tree(store, root, url, site=site, keep_numbers=keep_numbers).changed
