"""Security of a real crawl: page content is never evaluated (no script runs, no XML entity is
expanded, the parser fetches nothing), the report carries page text only escaped, and a store
password never reaches the log, the stats, the items or the report."""

from __future__ import annotations

import json
import time
from pathlib import Path

import lxml.html
import parsel
import pytest

from tests.crawling import run_crawl
from tests.reliability._server import serve_pages
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.parse import parse_html

PASSWORD = "s3cr3t-Pa55word"
SECRET_FILE_TEXT = "TOP-SECRET-FILE-CONTENT"
HTML = "text/html; charset=utf-8"


def _xxe(base: str, secret: Path) -> str:
    """External entities (a local file, a URL on the test server) and a billion-laughs bomb."""
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    return f"""<?xml version="1.0"?>
<!DOCTYPE html [
  <!ENTITY file SYSTEM "file://{secret}">
  <!ENTITY remote SYSTEM "{base}entity.txt">
  <!ENTITY % dtd SYSTEM "{base}evil.dtd"> %dtd;
  <!ENTITY l0 "lol">{laughs}
]>
<html><head><title>entities</title></head><body>
<p>file: &file; remote: &remote; bomb: &l9;</p>
<p>Some ordinary text so that the page has an article body to extract.</p></body></html>"""


PAYLOADS = """<html><head><title>payloads <script>alert('title')</script></title>
<script>fetch('/beacon-script')</script><script src="/beacon-src.js"></script>
<link rel="prefetch" href="/beacon-prefetch"><link rel="stylesheet" href="/beacon.css">
<style>@import url(/beacon-import.css); body { background: url(/beacon-bg.png) }</style>
</head><body onload="fetch('/beacon-onload')">
<h1>Payloads &lt;script&gt;alert('escaped')&lt;/script&gt;</h1>
<p>First paragraph with enough words to count as an article of this small hostile site, and a
<a href="javascript:fetch('/beacon-js-link')">javascript link</a> inside it.</p>
<p onclick="fetch('/beacon-onclick')">Second paragraph <img src="/beacon.png"
 onerror="fetch('/beacon-onerror')"> with <iframe src="/beacon-frame.html"></iframe> more
 text <object data="/beacon-object"></object> and <svg><script>fetch('/beacon-svg')</script>
 </svg> even more words of ordinary prose to read.</p>
<form action="/beacon-form"><input name="q"></form>
<a href="JaVaScRiPt:alert(1)">mixed case</a> <a href="  javascript:alert(2)">spaced</a>
<a href="data:text/html,<script>alert(3)</script>">data url</a>
<a href="/page-1.html">a real page</a>
</body></html>"""


def _page(i: int) -> bytes:
    words = " ".join(f"word{i}x{j}" for j in range(60))
    return (f"<html><head><title>page {i}</title></head><body><nav><a href='/index.html'>home"
            f"</a></nav><p>{words}</p></body></html>").encode()


@pytest.fixture(scope="module")
def secure_crawl(tmp_path_factory: pytest.TempPathFactory, redis_server_factory_module):
    tmp = tmp_path_factory.mktemp("security")
    secret = tmp / "secret.txt"
    secret.write_text(SECRET_FILE_TEXT)
    server = redis_server_factory_module("--requirepass", PASSWORD)
    uri = f"redis://:{PASSWORD}@127.0.0.1:{server.port}/0"
    pages: dict[str, tuple[str, bytes]] = {
        "/payloads.html": (HTML, PAYLOADS.encode()),
        "/entity.txt": ("text/plain", b"REMOTE-ENTITY-CONTENT"),
        "/evil.dtd": ("application/xml-dtd", b'<!ENTITY remote2 "REMOTE-DTD-CONTENT">'),
        **{f"/page-{i}.html": (HTML, _page(i)) for i in range(8)},
    }
    with serve_pages(pages) as (base, requested):
        pages["/xxe.html"] = (HTML, _xxe(base, secret).encode())
        pages["/xxe.xhtml"] = ("application/xhtml+xml", _xxe(base, secret).encode())
        links = "".join(f"<a href='{p}'>{p}</a> " for p in pages if p.endswith(("html", "xhtml")))
        pages["/index.html"] = (HTML, f"<html><body><ul>{links}</ul></body></html>".encode())
        started = time.monotonic()
        result = run_crawl("site", tmp, args={"url": base + "index.html"},
                           settings={"WISDOM_STORE_URI": uri,
                                     "WISDOM_REPORT_URI": str(tmp / "report.html"),
                                     "LOG_LEVEL": "DEBUG",
                                     "WISDOM_ITEM_FIELDS": "html,blocks,features"})
        seconds = time.monotonic() - started
    return result, requested, tmp, seconds


@pytest.fixture(scope="module")
def redis_server_factory_module(tmp_path_factory: pytest.TempPathFactory):
    from tests.conftest import RedisServer

    servers: list[RedisServer] = []

    def factory(*args: str) -> RedisServer:
        server = RedisServer(tmp_path_factory.mktemp("redis"), *args)
        servers.append(server)
        server.start()
        return server

    yield factory
    for server in servers:
        server.stop()


@pytest.mark.crawl
def test_crawl_of_hostile_pages_completes(secure_crawl) -> None:
    result, _, _, seconds = secure_crawl
    assert result.returncode == 0, result.log[-3000:]
    assert not [k for k in result.stats if k.startswith("wisdom/errors")]
    assert result.stats["wisdom/pages_fed"] >= 11
    assert seconds < 120  # the entity bomb was not expanded


@pytest.mark.crawl
def test_nothing_is_fetched_that_only_a_browser_or_an_xml_parser_would_fetch(secure_crawl) -> None:
    _, requested, _, _ = secure_crawl
    assert not [p for p in requested if "beacon" in p], requested
    assert "/entity.txt" not in requested and "/evil.dtd" not in requested


@pytest.mark.crawl
def test_no_entity_or_script_content_in_items(secure_crawl) -> None:
    result, *_ = secure_crawl
    dumped = json.dumps(result.items)
    # "fetch(" is only in scripts, handlers and javascript: URLs of the payloads, never in text
    # a browser shows ("alert(" is: the page's escaped <h1>, its title's RCDATA)
    for leaked in (SECRET_FILE_TEXT, "REMOTE-ENTITY-CONTENT", "REMOTE-DTD-CONTENT", "lollollol",
                   "fetch(", "beacon-object", "data:text/html"):
        assert leaked not in dumped, leaked
    for item in result.items:
        if item.get("html"):
            doc = lxml.html.fromstring(item["html"])
            assert not doc.xpath("//script | //iframe | //object | //embed | //style")
            assert not [a for el in doc.iter() if isinstance(el.tag, str)
                        for a in el.attrib if a.lower().startswith("on")]
            assert not [v for el in doc.iter() if isinstance(el.tag, str)
                        for v in el.attrib.values() if "script:" in v.lower()]
        for link in item.get("links") if isinstance(item.get("links"), list) else []:
            assert link["url"].startswith(("http://", "https://"))


@pytest.mark.crawl
def test_report_is_inert(secure_crawl) -> None:
    _, _, tmp, _ = secure_crawl
    report = (tmp / "report.html").read_text()
    doc = lxml.html.fromstring(report)
    assert not doc.xpath("//script | //iframe | //object | //embed | //img | //link")
    for el in doc.iter():
        if isinstance(el.tag, str):
            assert not [a for a in el.attrib if a.lower().startswith("on")]
            assert not el.get("href", "").strip().lower().startswith(("javascript:", "data:"))
    assert "default-src 'none'" in report


@pytest.mark.crawl
def test_store_password_never_written_anywhere(secure_crawl) -> None:
    result, _, tmp, _ = secure_crawl
    assert "redis://:***@127.0.0.1" in result.log  # the store was named, redacted
    for path in tmp.rglob("*"):
        if path.is_file() and path.name != "secret.txt":
            assert PASSWORD not in path.read_text(errors="replace"), path
    assert PASSWORD not in result.log


@pytest.mark.crawl
def test_wrong_password_fails_at_start_without_showing_it(tmp_path, redis_server_factory) -> None:
    server = redis_server_factory("--requirepass", PASSWORD)
    wrong = "Wr0ng-" + PASSWORD[::-1]
    for uri in (f"redis://:{wrong}@127.0.0.1:{server.port}/0",
                f"redis://user:{wrong}@127.0.0.1:{server.port}/0?password={wrong}"):
        result = run_crawl("site", tmp_path, args={"url": "http://127.0.0.1:9/"},
                           settings={"WISDOM_STORE_URI": uri})
        assert result.returncode != 0
        assert "WISDOM_STORE_URI" in result.log and "***" in result.log
        assert wrong not in result.log


def test_parsers_expand_no_entity_and_fetch_nothing(tmp_path: Path) -> None:
    """The parsers themselves: wisdom_scrapy's parse_html and parsel's (the crawl's tree)."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_FILE_TEXT)
    page = _xxe("http://127.0.0.1:9/", secret)
    for root in (parse_html(page, "http://x.test/"), parsel.Selector(text=page).root,
                 parse_html(page.encode(), "http://x.test/")):
        assert root is not None
        text = PageModel.from_tree(root, "http://x.test/").text_of(0)
        assert SECRET_FILE_TEXT not in text and "lollol" not in text
