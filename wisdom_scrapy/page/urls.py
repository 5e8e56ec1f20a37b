"""URL helpers shared by every stage: a URL's site key, and whether a link turns a list's page.

Link resolution itself lives in :mod:`wisdom_scrapy.page.model`. These read URLs only, never a
page, so the page analysis and the link graph share one definition of a page turn.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["host_key", "is_page_turn", "page_turn_numbers"]


def host_key(url: str) -> str:
    """Default site key: the lower-cased host with its port, if any (``example.org:8080``).

    The port is part of it because different local servers are different sites.

    >>> host_key("http://Example.org:8080/a/b.html")
    'example.org:8080'
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return f"{host}:{parts.port}" if parts.port else host


_INDEX = re.compile(r"/index\.[a-z]{2,5}$|/$")  # a folder's index page is the folder
_EXTENSION = re.compile(r"\.[A-Za-z]{2,5}$")
_NUMBER = re.compile(r"\d+")
#: what one page-turn step adds or changes: an optional word and a number, with separators
_STEP = re.compile(r"\W*[^\W\d]*\W*\d+\W*")


@lru_cache(maxsize=1 << 14)
def _list_key(url: str) -> tuple[str, str]:
    """(scheme://host, path and query) of ``url``, its folder index and extension removed, so
    that ``/news/index.html``, ``/news/`` and ``/news`` are one page and ``/news/page-2.html``
    extends it with ``/page-2``. Cached: a site's pages link the same URLs over and over, and
    every link of a TOC page is asked about (a crawl of the Python docs asked 613,680 times
    about 1,032 URLs)."""
    parts = urlsplit(url)
    path = _EXTENSION.sub("", _INDEX.sub("", parts.path))
    return f"{parts.scheme}://{parts.netloc}", path + (f"?{parts.query}" if parts.query else "")


def _digit_at(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isdigit()


def is_page_turn(page: str, target: str) -> bool:
    """Whether ``target`` is another page of the list ``page`` is on (the page turns of
    :mod:`wisdom_scrapy.engine.link_graph`).

    The two URLs' common beginning and end are removed, never cutting a number in two; what is
    left must be one step, an optional word and a number (:data:`_STEP`), on the target's side,
    and on the page's side either nothing (``page`` is the list's first page, so the target's
    number must be at least 2: ``?print=1`` is not a page turn) or the same step with another
    number. A post's next post (``/2020/01/02/a/`` → ``/2020/01/05/b/``) changes a slug too and
    is not a page turn.
    """
    return page_turn_numbers(page, target) is not None


def page_turn_numbers(page: str, target: str) -> tuple[int, int] | None:
    """(the page's number, the target's number) when ``target`` is another page of the list
    ``page`` is on (:func:`is_page_turn`), else None; a list's first page, whose URL has no
    step, is number 1. A pager shows the page's neighbours (its number ± 1): that, not the
    URL's shape alone, tells page turns from a chapter list or a year index."""
    (origin_a, a), (origin_b, b) = _list_key(page), _list_key(target)
    if origin_a != origin_b or a == b:
        return None
    n = min(len(a), len(b))
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    while p and a[p - 1].isdigit() and _digit_at(a, p) | _digit_at(b, p):
        p -= 1
    s = 0
    while s < n - p and a[-1 - s] == b[-1 - s]:
        s += 1
    while s and a[-s].isdigit() and _digit_at(a, len(a) - s - 1) | _digit_at(b, len(b) - s - 1):
        s -= 1
    step_a, step_b = a[p : len(a) - s], b[p : len(b) - s]
    if not _STEP.fullmatch(step_b):
        return None
    number_b = max(map(int, _NUMBER.findall(step_b)))
    if not step_a:
        return (1, number_b) if number_b >= 2 else None
    if not _STEP.fullmatch(step_a) or _NUMBER.sub("", step_a) != _NUMBER.sub("", step_b):
        return None
    return max(map(int, _NUMBER.findall(step_a))), number_b
