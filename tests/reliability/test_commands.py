"""Commands and settings under misuse, each a real ``scrapy`` process: ``wisdom-show`` never
touches what the project's crawls write and refuses what a crawl would skip, the read-only
commands never create a store, and a bad setting or an unusable path stops the crawl at start
with an error naming it (non-zero exit), before any page is fetched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.crawling import REPO, run_crawl
from tests.reliability._server import serve_pages
from wisdom_scrapy.engine.writes import feed_page
from wisdom_scrapy.store import open_store

pytestmark = pytest.mark.crawl

HTML = "text/html; charset=utf-8"


def _doc(body: str) -> bytes:
    return f"<html><head><title>t</title></head><body>{body}</body></html>".encode()


SITE = {
    "/index.html": (HTML, _doc('<h1>Index</h1><p>The index of the site.</p>'
                               '<a href="/a.html">first page</a> <a href="/b.html">second</a>')),
    "/a.html": (HTML, _doc('<p>First page text about gardens.</p><a href="/index.html">up</a>')),
    "/b.html": (HTML, _doc("<p>A page with no link at all, only words about rivers.</p>")),
    "/doc.pdf.html": (HTML, b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Length 9 >>\nstream\n"
                      + bytes(range(256)) * 8 + b"\nendstream\nendobj\n%%EOF\n"),
    "/random.html": (HTML, bytes((i * 7919 + 13) % 256 for i in range(32768))),
    "/real.pdf": ("application/pdf", b"%PDF-1.4\n%%EOF\n"),
}


def scrapy(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=180, check=False)


def project(root: Path, **settings: Any) -> Path:
    """A Scrapy project in ``root`` with the add-on and ``settings`` (its settings module)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj_settings\n")
    lines = ['ADDONS = {"wisdom_scrapy.Addon": 500}',
             *(f"{name} = {value!r}" for name, value in settings.items())]
    (root / "proj_settings.py").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
def site():
    with serve_pages(SITE) as (base, requested):
        yield base, requested


@pytest.fixture
def store_uri(tmp_path: Path) -> str:
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(uri) as store:
        for path in ("/index.html", "/a.html"):
            feed_page(store, SITE[path][1], "http://127.0.0.1/" + path)
    return uri


def test_show_leaves_the_projects_feeds_alone(site, store_uri: str, tmp_path: Path) -> None:
    base, _ = site
    feeds = {"articles.jsonl": {"format": "jsonlines", "overwrite": True}}  # as -O would
    root = project(tmp_path / "proj", FEEDS=feeds, WISDOM_STORE_URI=store_uri)
    feed = root / "articles.jsonl"
    feed.write_text('{"url": "kept"}\n' * 1000)
    before = feed.read_bytes()
    done = scrapy("wisdom-show", base + "a.html", "-o", str(tmp_path / "view.html"), cwd=root)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "view.html").stat().st_size > 0
    assert feed.read_bytes() == before


@pytest.mark.parametrize(("path", "reason"), [
    ("/missing.html", "HTTP 404"),
    ("/doc.pdf.html", "not an HTML page"),
    ("/random.html", "not an HTML page"),
    ("/real.pdf", "not an HTML page"),
])  # fmt: skip
def test_show_refuses_what_the_crawl_skips(site, store_uri: str, tmp_path: Path, path: str,
                                           reason: str) -> None:
    base, _ = site
    out = tmp_path / "view.html"
    done = scrapy("wisdom-show", base + path.lstrip("/"), "--store", store_uri, "-o", str(out))
    assert done.returncode != 0
    assert reason in done.stderr, done.stderr[-2000:]
    assert not out.exists()


def test_show_refuses_a_binary_file(store_uri: str, tmp_path: Path) -> None:
    page = tmp_path / "saved.html"
    page.write_bytes(SITE["/doc.pdf.html"][1])
    out = tmp_path / "view.html"
    done = scrapy("wisdom-show", str(page), "--url", "http://127.0.0.1/doc.html",
                  "--store", store_uri, "-o", str(out))
    assert done.returncode != 0 and "not an HTML page" in done.stderr
    assert not out.exists()


def test_show_of_a_large_page_writes_a_bounded_view(store_uri: str, tmp_path: Path) -> None:
    """8 MB of tiny blocks: every block outlined and labelled would make a view ~15 times the
    page; the view stops at WISDOM_MAX_PAGE_BYTES of markup and says so."""
    page = tmp_path / "big.html"
    page.write_bytes(_doc("<div><p>w</p></div>" * 420_000))
    out = tmp_path / "view.html"
    done = scrapy("wisdom-show", str(page), "--url", "http://127.0.0.1/big.html",
                  "--store", store_uri, "-o", str(out), "-s", "WISDOM_MAX_PAGE_BYTES=9000000")
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size < 9_000_000 + 100_000
    assert "view truncated after" in out.read_text()


@pytest.mark.parametrize("command", ["wisdom-stats", "wisdom-report", "wisdom-show"])
def test_read_only_commands_create_no_store(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "sub" / "none.db"
    page = tmp_path / "p.html"
    page.write_bytes(SITE["/a.html"][1])
    args = [str(page), "--url", "http://127.0.0.1/a.html"] if command == "wisdom-show" else []
    out = ["-o", str(tmp_path / "out.html")] if command != "wisdom-stats" else []
    done = scrapy(command, *args, *out, "--store", f"sqlite:///{missing}")
    assert done.returncode != 0
    assert f"no SQLite store at {str(missing)!r}" in done.stderr, done.stderr[-2000:]
    assert not missing.parent.exists()
    # the project's own store (no --store) is not created either
    root = project(tmp_path / "proj", WISDOM_STORE_URI="sqlite:///.wisdom/wisdom.db")
    done = scrapy(command, *args, *out, cwd=root)
    assert done.returncode != 0 and "no SQLite store" in done.stderr
    assert not (root / ".wisdom").exists()


def _start_failure(tmp_path: Path, site, **settings: Any) -> str:
    """Run a crawl that must stop at start; its log (nothing fetched, non-zero exit)."""
    base, requested = site
    requested.clear()
    result = run_crawl("site", tmp_path, args={"url": base + "index.html"},
                       settings={"WISDOM_STORE_URI": f"sqlite:///{tmp_path / 's.db'}", **settings})
    assert result.returncode != 0, result.log[-3000:]
    assert requested == []
    return result.log


def test_bad_warmup_pages_is_named(site, tmp_path: Path) -> None:
    log = _start_failure(tmp_path, site, WISDOM_WARMUP_PAGES="abc")
    assert "WISDOM_WARMUP_PAGES='abc' is not a valid int" in log
    assert "WISDOM_KMIB_K" not in log


def test_store_in_a_missing_folder_fails_instead_of_creating_it(site, tmp_path: Path) -> None:
    db = tmp_path / "nonexistent" / "dir" / "x.db"
    log = _start_failure(tmp_path, site, WISDOM_STORE_URI=f"sqlite:///{db}")
    assert "WISDOM_STORE_URI" in log and "No such file or directory" in log
    assert not (tmp_path / "nonexistent").exists()


@pytest.mark.parametrize("where", ["under a file", "a folder"])
def test_unwritable_report_uri_fails_at_start(site, tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "blocker"
    if where == "a folder":
        blocker.mkdir()
        uri = str(blocker)
    else:
        blocker.write_text("a file, not a folder")
        uri = str(blocker / "report.html")
    log = _start_failure(tmp_path, site, WISDOM_REPORT_URI=uri)
    assert f"WISDOM_REPORT_URI={uri!r} is not writable" in log


def test_page_without_links_is_stored_readably(site, tmp_path: Path) -> None:
    """A page with no link is a page record like any other: the next crawl of the store reads
    every record back (no 'unreadable page records')."""
    base, _ = site
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    for k in range(2):
        (tmp_path / str(k)).mkdir()
    results = [run_crawl("site", tmp_path / str(k), args={"url": base + "index.html"},
                         settings={"WISDOM_STORE_URI": uri}) for k in range(2)]
    for result in results:
        assert result.returncode == 0, result.log[-3000:]
        assert "unreadable" not in result.log
        assert "wisdom/structure/bad_records" not in result.stats
    assert results[1].stats["wisdom/structure/records_loaded"] == 3  # index, a and b
