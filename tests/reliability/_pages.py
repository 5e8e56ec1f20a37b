"""The hostile pages of the reliability tests, generated (deterministically) in memory.

Each entry: path -> (content type, body, expected outcome). The outcome is ``"item"`` (the page
leaves as one analysed item) or ``"skip:<reason>"`` (counted under ``wisdom/skipped/<reason>``
and passed on unanalysed).
"""

from __future__ import annotations

import random
from collections.abc import Callable

HTML = "text/html; charset=utf-8"
BIG_BODY_BYTES = 50 * 1024 * 1024


def _doc(body: str, head: str = "<title>hostile</title>") -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>".encode()


def _binary() -> bytes:
    return random.Random(9).randbytes(64 * 1024)


def _wide() -> bytes:  # 10^5 element nodes, flat
    rows = "".join(f"<p>row {i} <b>x</b></p>" for i in range(50_000))
    return _doc(rows)


def _deep() -> bytes:  # 10^4 nested elements, closed
    return _doc("<div>" * 10_000 + "deep text at the bottom" + "</div>" * 10_000)


def _deep_unclosed() -> bytes:  # 10^4 unclosed inline elements and table cells
    return _doc("<span><b>" * 5_000 + "never closed" + "<table><tr><td>" * 2_000 + "cell")


def _link_list() -> bytes:  # one giant list of 20,000 links (binary targets: not followed)
    items = "".join(f'<li><a href="files/doc{i}.pdf">document number {i}</a></li>'
                    for i in range(20_000))
    return _doc(f"<ul>{items}</ul>")


def _huge() -> bytes:  # 50 MB of text: above WISDOM_MAX_PAGE_BYTES (10 MiB)
    line = b"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n"
    head = b"<html><head><title>huge</title></head><body><pre>"
    return head + line * ((BIG_BODY_BYTES - len(head)) // len(line) + 1)


def _long_token() -> bytes:  # one 5 MB "word" among ordinary ones
    return _doc(f"<p>ordinary words before {'q' * 5_000_000} and ordinary words after</p>")


def _long_href() -> bytes:  # one 5 MB link among ordinary ones
    return _doc(f'<p>a page of links</p><a href="/{"h" * 5_000_000}">huge</a> '
                '<a href="/index.html">home</a>')


def _attributes() -> bytes:  # one element with 10^4 attributes, long attribute values
    attrs = " ".join(f'data-a{i}="{"v" * 50}"' for i in range(10_000))
    return _doc(f'<div {attrs}><a href="/index.html" title="{"t" * 100_000}">home</a></div>')


Body = bytes | Callable[[], bytes]

PAGES: dict[str, tuple[str, Body, str]] = {
    "/empty.html": (HTML, b"", "skip:empty"),
    "/blank.html": (HTML, b"  \r\n\t \n ", "skip:empty"),
    "/binary.html": (HTML, _binary, "skip:not_html"),
    "/pdf.html": (HTML, lambda: b"%PDF-1.7\n%\xb5\xed\xae\xfb\n" + _binary(), "skip:not_html"),
    "/nul.html": (HTML, b"\x00" * 4096 + _doc("<p>after the NULs</p>") + b"\x00\xff\xfe", "item"),
    "/bad-utf8.html": (HTML, _doc("<p>caf\xe9 na\xefve r\xe9sum\xe9</p>").replace(
        b"\xc3\xa9", b"\xe9").replace(b"\xc3\xaf", b"\xef"), "item"),
    "/mixed-encodings.html": (
        HTML,
        _doc("<p>utf8 caf\u00e9</p>") + "<p>latin1 caf\u00e9</p>".encode("latin-1")
        + "<p>\u65e5\u672c\u8a9e</p>".encode("shift_jis") + b"<p>\xed\xa0\x80 surrogate</p>",
        "item"),
    "/unknown-charset.html": ("text/html; charset=x-no-such-charset-9",
                              _doc("<p>unknown charset</p>"), "item"),
    "/utf16-bom.html": (HTML, _doc("<p>sixteen bits</p>").decode().encode("utf-16"), "item"),
    "/meta-utf16.html": ("text/html", _doc("<p>ascii</p>", '<meta charset="utf-16">'), "item"),
    "/entities.html": (HTML, _doc("<p>&#0; &#xD800; &#x110000; &#99999999999; &bogus; &amp</p>"),
                       "item"),
    "/wide.html": (HTML, _wide, "item"),
    "/deep.html": (HTML, _deep, "item"),
    "/deep-unclosed.html": (HTML, _deep_unclosed, "item"),
    "/unclosed.html": (HTML, b"<html><body><table><tr><td><p><b><i><a href='/x.html'>x"
                       b"<div><ul><li>one<li>two<select><option>z", "item"),
    "/frameset.html": (HTML, b"<html><head><title>frames</title></head><frameset cols='50%,50%'>"
                       b"<frame src='/deep.html'><frame src='/wide.html'>"
                       b"<noframes><p>no frames</p></noframes></frameset></html>", "item"),
    "/no-text.html": (HTML, _doc("<div><img src='a.png'><span></span><br><hr></div>"), "item"),
    "/comment-only.html": (HTML, b"<!-- nothing but a comment -->", "item"),
    "/script-only.html": (HTML, b"<script>document.write('<p>hi</p>'); fetch('/beacon');</script>"
                          b"<style>p{}</style><noscript>enable js</noscript>", "item"),
    "/links.html": (HTML, _link_list, "item"),
    "/attributes.html": (HTML, _attributes, "item"),
    "/svg.html": (HTML, _doc("<svg xmlns='http://www.w3.org/2000/svg'><text>in svg</text>"
                             "<a href='/index.html'><text>svg link</text></a></svg>"
                             "<math><mi>x</mi></math><?php echo 1 ?>"), "item"),
    "/huge.html": (HTML, _huge, "skip:too_large"),
    "/long-token.html": (HTML, _long_token, "item"),
    "/long-href.html": (HTML, _long_href, "item"),
    "/bad-ipv6.html": (HTML, _doc('<p>a malformed link first</p><a href="http://[zz/">bad</a> '
                                  '<a href="/after-ipv6.html">the next page</a>'), "item"),
    "/control-chars.html": (HTML, _doc("<p>terminal \x1b[31mred\x1b[0m output, a form feed \x0c"
                                       " and a bell \x07 in the middle of the text</p>"), "item"),
}

#: Pages no index links to: reached only through a hostile page (a link after a malformed one).
LINKED_ONLY: dict[str, tuple[str, Body, str]] = {
    "/after-ipv6.html": (HTML, _doc("<p>reached past a malformed link</p>"), "item"),
}

#: What the model of a hostile page leaves out, counted per page (``wisdom/<stat>``).
LOSSES: dict[str, str] = {
    "/deep.html": "truncated/too_deep",
    "/deep-unclosed.html": "truncated/too_deep",
    "/long-token.html": "dropped/long_terms",
    "/long-href.html": "dropped/long_links",
}


def index_page() -> bytes:
    """The start page: links to every hostile page."""
    links = "".join(f'<li><a href="{path}">{path}</a></li>' for path in PAGES)
    return _doc(f"<h1>Hostile pages</h1><ul>{links}</ul>")
