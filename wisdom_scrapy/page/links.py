"""A page's out-links: the :class:`Link` record, the document's base URL, and the resolution
of its ``href``s as a browser does it (whitespace, fragments, schemes), cached per base.

Rules: only http(s) URLs are links; fragments are dropped and URLs percent-encoded as Scrapy
does for requests; a URL longer than :data:`MAX_LINK_CHARS` is no link (it is counted).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urldefrag, urljoin, urlsplit

from w3lib.url import safe_url_string

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from lxml import etree

_LINK_SCHEMES = ("http://", "https://")
#: Longest link URL kept: Scrapy's default ``URLLENGTH_LIMIT`` (the old browsers' limit), so a
#: link a crawl would refuse to follow is no out-link of the page either. Longer ones are
#: dropped (:attr:`~wisdom_scrapy.page.model.PageModel.overlong_links`; a crawl counts them).
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


def document_base(root: etree._Element | None, url: str) -> str:
    """The URL relative links of the document around ``root`` resolve against: ``url`` joined
    with the document's first ``<base href>`` (HTML's rule), else ``url``."""
    if root is None:
        return url
    doc_root = root.getroottree().getroot()
    for base in doc_root.iter("base", "{http://www.w3.org/1999/xhtml}base"):
        href = base.get("href")
        if href and href.strip():
            try:
                return urljoin(url, _clean_href(href))
            except ValueError:
                break
    return url


def series_nodes(anchors: list[int], rels: Sequence[str | None]) -> frozenset[int]:
    """The ``anchors`` whose ``rel`` names the next or previous page of a series."""
    return frozenset(
        node for node, rel in zip(anchors, rels, strict=True)
        if rel and not _SERIES_RELS.isdisjoint(rel.lower().split()))


#: :func:`_href_outcome` of an href longer than :data:`MAX_LINK_CHARS` (once resolved)
_OVERLONG = "\x00overlong"

#: Characters of a plain path segment: RFC 3986's unreserved ones, sub-delimiters but ``;``
#: (``urlparse``'s parameters), ``@`` and ``%`` — every one left as it is by ``urljoin``,
#: ``urldefrag`` and ``safe_url_string``'s path quoting, none a delimiter of a relative path.
_SEGMENT = r"(?!\.\.?(?:[/?#]|\Z))[A-Za-z0-9._~!$&'()*+,=@%-]+"
#: Characters of a plain query: those ``safe_url_string`` leaves as they are in the query of
#: an http(s) URL (not ``'``), but ``#`` and brackets.
_QUERY = r"[A-Za-z0-9._~!$&()*+,;=:@/?%-]+"
#: A plain href (:func:`_plain_outcome`): a lead (an http(s) origin and ``/``, a ``/``, or a
#: run of ``../`` and ``./``, maybe none), then plain segments, not ``.`` nor ``..``, with no
#: empty one but a trailing ``/``, maybe a plain query; then its end or its fragment.
_PLAIN_HREF = re.compile(
    rf"((?i:https?)://[A-Za-z0-9.-]+(?::[0-9]+)?/|/|(?:\.\.?/)*)"
    rf"({_SEGMENT}(?:/{_SEGMENT})*/?(?:\?{_QUERY})?)(?=#|\Z)")
#: Most keys of :data:`_PREFIXES` kept before it starts over (a site has a few folders).
_PREFIXES_SIZE = 1 << 12
#: (context, lead, fragment stand-in) → the resolved prefix of every plain href of that key
_PREFIXES: dict[tuple[str, str, str], str] = {}


def _plain_outcome(plain: re.Match[str], origin: str, folder: str) -> str | None:
    """:func:`_resolve_link`'s URL of a plain href (:data:`_PLAIN_HREF`): the prefix its
    lead's first href resolved to, then its own segments.

    Why it is the same string: for a plain rest ``r`` (a path of no ``:``, ``;``, ``\\``,
    whitespace or non-ASCII, no dot or empty segment, and maybe a non-empty query),
    ``urljoin`` of a context and lead + ``r`` appends ``r``'s segments to the path the context
    and the lead give (the context's segments resolved, the lead's ``..`` popping them) and
    keeps ``r``'s query, so it gives P + ``r`` for a P that does not depend on ``r``;
    ``urldefrag`` re-splits that at the scheme, the host (which ends at P's ``/``), a ``#``
    and the first ``?``, and ``safe_url_string`` quotes its path and query byte by byte,
    leaving ``r``'s characters as they are; so the URL is Q + ``r``, Q found from any one href
    of the key. A resolution that does not end with its rest teaches nothing.
    ``tests/test_dom.py`` checks this against :func:`_resolve_link` on generated hrefs."""
    lead, rest = plain.group(1, 2)
    end = plain.end()
    href = plain.string
    fragment = "" if end == len(href) else ("#f" if href[end + 1 :].strip() else "#")
    context = folder if not lead or lead[0] == "." else origin if lead == "/" else ""
    key = (context, lead, fragment)
    prefix = _PREFIXES.get(key)
    if prefix is not None:
        return prefix + rest
    url = _resolve_link(context, href[:end] + fragment)
    if url is not None and url.endswith(rest):
        if len(_PREFIXES) >= _PREFIXES_SIZE:
            _PREFIXES.clear()
        _PREFIXES[key] = url[: len(url) - len(rest)]
    return url


def _href_outcome(href: str, base: str, origin: str, folder: str) -> str | None:
    """What one ``href`` of a page whose base is ``base`` (its ``origin`` and ``folder``)
    gives: its absolute URL, None (no link: empty, in-page, another scheme, unresolvable) or
    :data:`_OVERLONG` (counted, not kept). Most hrefs of a site are plain
    (:func:`_plain_outcome`); the others take :func:`_general_outcome`."""
    if len(href) > MAX_LINK_CHARS and len(href.strip()) > MAX_LINK_CHARS:
        return _OVERLONG
    plain = _PLAIN_HREF.match(href)
    if plain is None:
        return _general_outcome(href, base, origin, folder)
    url = _plain_outcome(plain, origin, folder)
    return _OVERLONG if url is not None and len(url) > MAX_LINK_CHARS else url


def _general_outcome(href: str, base: str, origin: str, folder: str) -> str | None:
    """:func:`_href_outcome` of any href (not overlong before its resolution), through
    :func:`_resolve_link`."""
    start = href.lstrip()[:8].lower()
    if start.startswith("#"):  # in-page: what _resolve_link answers, without its look-up
        return None
    if start.startswith(_LINK_SCHEMES):
        context = ""
    elif start.startswith("/"):
        context = origin  # "/path" and "//host/path" need only scheme and host
    elif start.startswith("?"):
        context = base
    else:
        context = folder  # relative paths ("a.html", "../b/") need only the folder
    url = _resolve_link(context, _defragmented(href))
    return _OVERLONG if url is not None and len(url) > MAX_LINK_CHARS else url


def _contexts(base: str) -> tuple[str, str]:
    """The origin and the folder of ``base``: hrefs are resolved against the least of the
    base each needs, so that the caches of resolved links serve every page of a folder (or
    of the site), not only this page."""
    parts = urlsplit(base)
    origin = f"{parts.scheme}://{parts.netloc}"
    folder = origin + parts.path[: parts.path.rfind("/") + 1] if parts.path else origin + "/"
    return origin, folder


def resolve_links(
    base: str, anchors: list[int], hrefs: Sequence[str],
    anchor_texts: Callable[[list[int]], list[str]],
) -> tuple[tuple[Link, ...], int]:
    """The :class:`Link` of every anchor (node, ``href``) that resolves against ``base``, in
    order, and how many were dropped for being longer than :data:`MAX_LINK_CHARS`.

    ``anchor_texts`` gives the texts of the kept anchors' nodes, all at once. Each distinct
    href of the page is resolved once (a page repeats its hrefs: an index's entries, the
    headings' permalinks), the others take its outcome from a dict."""
    origin, folder = _contexts(base)
    outcome = {href: _href_outcome(href, base, origin, folder) for href in dict.fromkeys(hrefs)}
    urls = list(map(outcome.__getitem__, hrefs))
    kept = [k for k, url in enumerate(urls) if url is not None and url is not _OVERLONG]
    overlong = urls.count(_OVERLONG)
    nodes = [anchors[k] for k in kept]
    texts = anchor_texts(nodes)
    links = zip([urls[k] for k in kept], texts, nodes, strict=True)
    return tuple(map(tuple.__new__, repeat(Link), links)), overlong
