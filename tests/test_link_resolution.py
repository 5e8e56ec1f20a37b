"""The plain hrefs' shortcut of :mod:`wisdom_scrapy.page.links` against the general path.

:func:`~wisdom_scrapy.page.links._plain_outcome` resolves a plain href as the prefix the first
href of its kind resolved to, then its own segments; it must give every href exactly what
the link resolution gave before it: the overlong check, then
:func:`~wisdom_scrapy.page.links._general_outcome` (``urljoin``, ``urldefrag``,
``safe_url_string``). Checked on generated hrefs of every character class against bases of
every shape, in an order where each kind's prefix is learnt from one href and used for the
others, and on every href of the vendored pages.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from tests.fixtures_data import erikmcclure_blog
from wisdom_scrapy.page import links
from wisdom_scrapy.page.links import (
    MAX_LINK_CHARS,
    _contexts,
    _general_outcome,
    _href_outcome,
)
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.parse import parse_html

BASES = [
    "http://ex.com/a/b.html", "https://Ex.COM:8080/a//b/c", "http://ex.com", "http://ex.com/",
    "http://ex.com/a/./b/../c/", "http://xn--caf-dma.example/d/", "http://café.example/d/e",
    "http://[::1]:8000/x/", "http://user:pw@ex.com/p/q", "https://ex.com/a;p/b?q=1#f",
    "ftp://ex.com/a/", "http://ex.com/%7Euser/x", "http://ex.com/a b/c", "http:ex.com/a",
    "HTTP://EX.com/A/", "http://ex.com:80/../x", "http://ex.com/a/..", "http://EX.com:/x/y",
    "http://ex.com/a\\b/c", "http://ex.com:99999/a/", "https://ex.com/中文/页.html",
    "http://ex.com/" + "d" * 2070 + "/",
]  # fmt: skip

#: pieces generated hrefs are made of: plain segments, every delimiter, dot segments,
#: whitespace, escapes, non-ASCII, schemes, hosts (IDNA, ports, IPv6, userinfo)
PIECES = [
    "a", "b.html", "x-y_z~1", "A%20B", "%", "%zz", "!$&'()*+,=@", "é", "中", "ß",
    "/", "//", "./", "../", ".", "..", "...", ".a", "?", "?q=1&r=2", "?'", "?x/y?z:w;v",
    "#", "#frag", "# ", "#\n", "\\", " ", "\t", "\n", "\r", "\x0c", "\u3000", ":", ";", "@",
    "[", "]", "<>", '"', "^`{|}", "http://", "HTTPS://", "https:", "mailto:", "javascript:",
    "ex.com", "EX.com:8080", "xn--caf-dma.example", "münchen.de", "ex.com:99999", "[::1]",
    "user:pw@", "", "l" * 2100,
]  # fmt: skip


#: plain segments (and look-alikes of dot segments), and segments that are not plain
SEGMENTS = ["a", "b.html", "x-y_z~1", "A%20B", "%", "%zz", "!$&'()*+,=@", ".a", "...", "a.", "..b"]
ODD_SEGMENTS = [".", "..", "", "é", "a b", "a;b", "a:b", "a\\b", "a[1]"]


def _generated(rng: random.Random, count: int) -> list[str]:
    """``count`` hrefs: half of them plain-looking (a lead and segments), half any pieces."""
    hrefs = []
    for _ in range(count):
        if rng.random() < 0.5:
            lead = rng.choice(["", "/", "../", "./", "../../", "./../", "http://ex.com/",
                               "HTTPS://EX.com:8080/", "http://münchen.de/", "http://[::1]/"])
            segments = [rng.choice(SEGMENTS if rng.random() < 0.9 else ODD_SEGMENTS)
                        for _ in range(rng.randint(1, 4))]
            tail = rng.choice(["", "", "/", "?q=1", "?a/b?c", "?'", "#f", "# ", "#", "?q#f"])
            hrefs.append(lead + "/".join(segments) + tail)
        else:
            hrefs.append("".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))))
    return hrefs


def _old_outcome(href: str, base: str, origin: str, folder: str) -> str | None:
    """``_href_outcome`` before the shortcut: the overlong check, then the general path."""
    if len(href) > MAX_LINK_CHARS and len(href.strip()) > MAX_LINK_CHARS:
        return links._OVERLONG
    return _general_outcome(href, base, origin, folder)


def _assert_same_outcomes(base: str, hrefs: list[str]) -> None:
    """Every href's outcome with the shortcut equals the general path's, the shortcut's
    prefixes learnt afresh from these hrefs, in this order."""
    origin, folder = _contexts(base)
    links._PREFIXES.clear()
    for href in hrefs:
        fast = _href_outcome(href, base, origin, folder)
        assert fast == _old_outcome(href, base, origin, folder), (base, href)


@pytest.mark.parametrize("base", BASES)
def test_plain_hrefs_resolve_as_the_general_path(base: str) -> None:
    _assert_same_outcomes(base, _generated(random.Random(base), 2000))


def test_the_generated_hrefs_reach_the_shortcut_and_its_learnt_prefixes() -> None:
    """A third of the generated hrefs are plain, and nearly all of those are resolved from a
    prefix learnt from another href (a few dozen kinds): the check above tests the shortcut,
    not only the general path."""
    hrefs = _generated(random.Random(0), 2000)
    plain = sum(links._PLAIN_HREF.match(h) is not None for h in hrefs)
    _assert_same_outcomes("http://ex.com/a/b.html", hrefs)
    assert plain > 600 and len(links._PREFIXES) < plain / 10


def test_a_learnt_prefix_serves_hrefs_of_its_kind() -> None:
    links._PREFIXES.clear()
    origin, folder = "http://ex.com", "http://ex.com/a/b/"
    assert _href_outcome("../c.html#x", "", origin, folder) == "http://ex.com/a/c.html"
    assert ("http://ex.com/a/b/", "../", "#f") in links._PREFIXES
    assert _href_outcome("../d/e.html#y", "", origin, folder) == "http://ex.com/a/d/e.html"
    assert _href_outcome("../d/e.html?q=%27'", "", origin, folder) == (
        "http://ex.com/a/d/e.html?q=%27%27")  # not plain: "'" is quoted in a query


def _vendored_pages() -> list[tuple[str, bytes]]:
    root = Path(__file__).parent / "fixtures"
    pages = []
    for path in sorted([*root.rglob("*.html"), *root.rglob("*.html.gz")]):
        body = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        pages.append((path.relative_to(root).as_posix(), body))
    pages += [(f"sites/erikmcclure/{name}", body) for name, body in erikmcclure_blog().items()]
    return pages


@pytest.mark.parametrize("host", ["http://site.test/", "https://Fixtures.Example:8443/x/"])
def test_every_vendored_href_resolves_as_the_general_path(host: str) -> None:
    """Every href of the vendored pages (each page at its own path under ``host``), in page
    order with the prefixes learnt along the way, as a crawl meets them."""
    links._PREFIXES.clear()
    for name, body in _vendored_pages():
        url = host + name
        model = PageModel.from_tree(parse_html(body, url), url)
        base = model.base_url
        origin, folder = _contexts(base)
        for href in dict.fromkeys(model._hrefs):
            fast = _href_outcome(href, base, origin, folder)
            assert fast == _old_outcome(href, base, origin, folder), (url, href)
