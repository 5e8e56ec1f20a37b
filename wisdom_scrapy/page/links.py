"""A page's out-links: the :class:`Link` record and the resolution of an ``href`` against the
page's base URL as a browser does it (whitespace, fragments, schemes), cached per base.

Rules: only http(s) URLs are links; fragments are dropped and URLs percent-encoded as Scrapy
does for requests; a URL longer than :data:`MAX_LINK_CHARS` is no link (it is counted).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple
from urllib.parse import urldefrag, urljoin

from w3lib.url import safe_url_string

_LINK_SCHEMES = ("http://", "https://")
#: Longest link URL kept: Scrapy's default ``URLLENGTH_LIMIT`` (the old browsers' limit), so a
#: link a crawl would refuse to follow is no out-link of the page either. Longer ones are
#: dropped (:attr:`PageModel.overlong_links`; a crawl counts them).
MAX_LINK_CHARS = 2083


#: ``rel`` link types of the next and previous document of a series (HTML §4.6.7.15)
_SERIES_RELS = frozenset({"next", "prev", "previous"})


class Link(NamedTuple):
    """An out-link of a page: absolute URL (no fragment), anchor text, and the ``<a>`` node."""

    url: str
    text: str
    node: int


def _clean_href(href: str) -> str:
    """Strip surrounding whitespace and remove tabs/newlines inside, as browsers do."""
    href = href.strip()
    if "\n" in href or "\t" in href or "\r" in href:
        href = href.replace("\n", "").replace("\t", "").replace("\r", "")
    return href


def _defragmented(href: str) -> str:
    """``href`` with its fragment replaced by a stand-in that resolves alike.

    A resolved link drops its fragment, and what :func:`_resolve_link` makes of the rest
    depends only on the part before the first ``#`` and on whether a ``#`` and a non-blank
    fragment follow it (``urldefrag`` re-serialises a URL that holds a ``#``, and ``urljoin``
    keeps an empty fragment out of its result). So the links of a page to the many fragments of
    one page (an index, a table of contents) share one cache entry instead of one each.
    """
    head, sep, fragment = href.partition("#")
    if not sep:
        return href
    return head + ("#f" if _clean_href(fragment) else "#")


@lru_cache(maxsize=1 << 12)  # LRU: the navigation links every page repeats stay in
def _resolve_link(base: str, href: str) -> str | None:
    """Absolute, fragment-free, percent-encoded http(s) URL of ``href``, or None to skip it.

    Cached: a site's pages repeat their navigation links, and relative hrefs repeat per base.
    """
    href = _clean_href(href)
    if not href or href.startswith("#"):
        return None  # in-page navigation (or the page itself), not a link to another page
    try:
        url = urldefrag(urljoin(base, href))[0]
    except ValueError:  # e.g. an invalid IPv6 host
        return None
    if not url[:8].lower().startswith(_LINK_SCHEMES):
        return None  # javascript:, mailto:, tel:, data:, ftp: … are not crawlable pages
    try:
        return safe_url_string(url)
    except ValueError:
        return None
