"""The demo news site generator (sample_project.demo_site) and the static test server
(wisdom_scrapy.testing): determinism, ground truth against the rendered HTML, link integrity,
trap share, and what the server answers."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections import Counter, deque
from pathlib import Path
from urllib.parse import urljoin, urlsplit
from urllib.request import urlopen

import lxml.html
import pytest

from sample_project.demo_site import (
    GROUND_TRUTH_FILE,
    build_demo_site,
    generate_demo_site,
)
from wisdom_scrapy.testing import REDIRECTS_FILE, StaticServer, serve_directory

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("demo")
    site = build_demo_site(root)
    truth = json.loads((root / GROUND_TRUTH_FILE).read_text(encoding="utf-8"))
    return site, truth


def _files(site: Path) -> dict[str, bytes]:
    return {"/" + p.relative_to(site).as_posix(): p.read_bytes()
            for p in sorted(site.rglob("*")) if p.is_file()}


def _doc(site: Path, path: str) -> lxml.html.HtmlElement:
    return lxml.html.fromstring((site / path.lstrip("/")).read_bytes())


def _hrefs(doc: lxml.html.HtmlElement) -> list[str]:
    return [a.get("href") for a in doc.iter("a") if a.get("href") is not None]


def _local_path(href: str, page: str) -> str | None:
    """Absolute path of a same-site link (the site has no host of its own), else None."""
    url = urljoin("http://site.invalid" + page, href)
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.netloc != "site.invalid":
        return None
    return parts.path


# --------------------------------------------------------------------------- generator


def test_two_builds_are_identical(tmp_path: Path, demo: tuple[Path, dict]) -> None:
    site, _ = demo
    again = build_demo_site(tmp_path / "again")
    assert _files(again) == _files(site)
    assert (tmp_path / "again" / GROUND_TRUTH_FILE).read_bytes() == \
        (site.parent / GROUND_TRUTH_FILE).read_bytes()
    # rebuilding over an earlier build replaces it
    assert _files(build_demo_site(tmp_path / "again")) == _files(site)


def test_seed_changes_the_site() -> None:
    files_a, truth_a = generate_demo_site(1)
    files_b, truth_b = generate_demo_site(2)
    assert files_a != files_b
    texts_a = {p["text"] for p in truth_a["pages"].values() if p["role"] == "article"}
    texts_b = {p["text"] for p in truth_b["pages"].values() if p["role"] == "article"}
    assert texts_a != texts_b


def test_refuses_to_replace_a_foreign_site_folder(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "mine.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        build_demo_site(tmp_path)
    assert (tmp_path / "site" / "mine.txt").read_text() == "keep me"


def test_ground_truth_is_not_served(demo: tuple[Path, dict]) -> None:
    site, truth = demo
    files = _files(site)
    assert (site.parent / GROUND_TRUTH_FILE).is_file()
    assert not any(path.endswith(GROUND_TRUTH_FILE) for path in files)
    assert set(files) == set(truth["pages"]) | {"/" + REDIRECTS_FILE}
    assert all(path.endswith(".html") for path in truth["pages"])
    assert json.loads(files["/" + REDIRECTS_FILE]) == truth["redirects"]


def test_shape_of_the_site(demo: tuple[Path, dict]) -> None:
    _, truth = demo
    pages = truth["pages"]
    roles = Counter(p["role"] for p in pages.values())
    kinds = Counter(p["kind"] for p in pages.values())
    assert roles["article"] == 150
    # home + 6 categories of 3 pages + the tag, author and month archives (lists too)
    archives = sum(kinds[kind] for kind in ("tag", "author", "month"))
    assert roles["toc"] == 1 + 6 * 3 + archives
    assert all(p["role"] == "toc" for p in pages.values()
               if p["kind"] in ("tag", "author", "month"))
    assert all(p["role"] == "other" for p in pages.values()
               if p["kind"] in ("print", "share", "static", "promo", "archive"))
    assert kinds["print"] == kinds["share"] == 150
    assert kinds["column"] > 0 and kinds["article"] > 0  # two article templates
    for kind in ("tag", "author", "month", "static", "promo"):
        assert kinds[kind] > 0, kind
    assert "/index.html" in pages and pages["/index.html"]["role"] == "toc"
    assert pages["/news/world/page-2.html"]["role"] == "toc"
    assert 300 <= len(pages) <= 800
    for page in pages.values():
        assert set(page) >= {"role", "kind", "title", "text", "links"}
        assert page["role"] in {"article", "toc", "other"}
        assert page["title"]
        assert (page["text"] != "") == (page["role"] == "article")
    # archive listings are paginated too
    assert any(path.startswith("/tag/") and "/page-2" in path for path in pages)
    assert any(path.startswith("/archive/") and "/page-2" in path for path in pages)


def test_articles_are_distinct_prose(demo: tuple[Path, dict]) -> None:
    _, truth = demo
    articles = [p for p in truth["pages"].values() if p["role"] == "article"]
    paragraphs = [para for a in articles for para in a["text"].split("\n\n")]
    assert len(paragraphs) == len(set(paragraphs))  # no paragraph is used twice
    assert all(3 <= len(a["text"].split("\n\n")) <= 6 for a in articles)
    assert len({a["title"] for a in articles}) == len(articles)
    assert all(len(a["text"]) > 500 for a in articles)
    for a in articles:
        assert set(a) >= {"category", "author", "date", "place", "tags"}


def test_gold_article_text_is_the_rendered_body(demo: tuple[Path, dict]) -> None:
    site, truth = demo
    for path, page in truth["pages"].items():
        if page["role"] != "article":
            continue
        doc = _doc(site, path)
        bodies = doc.cssselect("#story-body, section.column-body")
        assert len(bodies) == 1, path
        paragraphs = [p.text_content() for p in bodies[0] if p.tag == "p"]
        assert "\n\n".join(paragraphs) == page["text"], path
        inline = [a.get("href") for p in bodies[0] if p.tag == "p" for a in p.iter("a")]
        assert inline == page["links"], path
        page_text = doc.text_content()
        assert all(para in page_text for para in page["text"].split("\n\n"))


def test_gold_titles_are_the_headlines(demo: tuple[Path, dict]) -> None:
    site, truth = demo
    for path, page in truth["pages"].items():
        doc = _doc(site, path)
        h1 = doc.findall(".//h1")
        assert [h.text_content() for h in h1] == [page["title"]], path
        assert doc.findtext(".//title").startswith(page["title"]), path


def test_gold_toc_links_are_the_main_lists(demo: tuple[Path, dict]) -> None:
    site, truth = demo
    pages = truth["pages"]
    tocs = {path: p for path, p in pages.items() if p["role"] == "toc"}
    listed: set[str] = set()
    for path, page in tocs.items():
        assert page["links"], path
        for link in page["links"]:
            assert (site / link.lstrip("/")).is_file(), link
            assert pages[link]["role"] == "article"
        main_list = _doc(site, path).cssselect("ul.story-list")
        assert len(main_list) == 1
        assert [a.get("href") for a in main_list[0].cssselect("h2 a")] == page["links"]
        listed.update(page["links"])
    # the category pages together list every article: a TOC-only crawl reaches them all
    assert listed == {path for path, p in pages.items() if p["role"] == "article"}
    assert len(pages["/index.html"]["links"]) == 20
    assert len(pages["/news/world/index.html"]["links"]) == 10
    assert len(pages["/news/world/page-3.html"]["links"]) == 5


def test_every_page_is_reachable_and_no_link_is_broken(demo: tuple[Path, dict]) -> None:
    site, truth = demo
    pages, redirects = truth["pages"], truth["redirects"]
    seen = {"/index.html"}
    queue = deque(seen)
    while queue:
        path = queue.popleft()
        for href in _hrefs(_doc(site, path)):
            target = _local_path(href, path)
            if target is None:
                continue
            target = redirects.get(target, target)
            assert target in pages, f"broken link {href!r} on {path}"
            if target not in seen:
                seen.add(target)
                queue.append(target)
    assert seen == set(pages)


def test_trap_pages_dominate_a_plain_crawl(demo: tuple[Path, dict]) -> None:
    site, truth = demo
    pages = truth["pages"]
    sizes = {path: (site / path.lstrip("/")).stat().st_size for path in pages}
    # the pages a focused crawl skips: everything but stories, the home and category pages
    other = [path for path, p in pages.items()
             if p["kind"] not in ("article", "column", "home", "category")]
    assert len(other) / len(pages) >= 0.4
    assert sum(sizes[p] for p in other) / sum(sizes.values()) >= 0.4
    # and the template carries them on every article page
    for path, page in pages.items():
        if page["role"] == "article":
            hrefs = set(_hrefs(_doc(site, path)))
            assert any(h.startswith("/print/") for h in hrefs)
            assert any(h.startswith("/share/") for h in hrefs)
            assert any(h.startswith("/ads/click/") for h in hrefs)
            assert any(h.startswith("/tag/") for h in hrefs)
            assert any(h.startswith("/author/") for h in hrefs)
            assert "/login.html" in hrefs


def test_realistic_markup(demo: tuple[Path, dict]) -> None:
    site, truth = demo
    path = next(p for p, g in truth["pages"].items() if g["kind"] == "article")
    raw = (site / path.lstrip("/")).read_text(encoding="utf-8")
    for needle in ("<script>", "<style>", "<!--", "<br>", '<ul class="menu">', 'id="sidebar"',
                   'class="ad ', "<footer", "<time "):
        assert needle in raw, needle


@pytest.mark.crawl
def test_cli_builds_the_site(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    proc = subprocess.run([sys.executable, "-m", "sample_project.demo_site", str(out)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "150 article" in proc.stdout
    assert (out / "site" / "index.html").is_file()
    assert (out / GROUND_TRUTH_FILE).is_file()


# --------------------------------------------------------------------------- static server


@pytest.fixture()
def small_dir(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text("<html><title>Hé</title><a href='a.html'>a</a></html>",
                                         encoding="utf-8")
    (tmp_path / "a.html").write_text("<p>A</p>", encoding="utf-8")
    (tmp_path / "data.json").write_text('{"x": 1}', encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / REDIRECTS_FILE).write_text(json.dumps({"/go/1": "/a.html"}), encoding="utf-8")
    return tmp_path


def _get(base: str, path: str) -> http.client.HTTPResponse:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


def test_serve_directory(small_dir: Path) -> None:
    with serve_directory(small_dir) as base:
        assert base.startswith("http://127.0.0.1:") and base.endswith("/")
        with urlopen(base + "index.html", timeout=10) as r:
            assert r.headers["Content-Type"] == "text/html; charset=utf-8"
            assert "Hé" in r.read().decode("utf-8")
        with urlopen(base + "a.html?utm=1&page=2#x", timeout=10) as r:  # query ignored
            assert r.read() == b"<p>A</p>"
        with urlopen(base + "data.json", timeout=10) as r:
            assert r.headers["Content-Type"] == "application/json"
        redirect = _get(base, "/go/1?from=/index.html")
        assert redirect.status == 302
        assert redirect.getheader("Location") == "/a.html"
        with urlopen(base + "go/1", timeout=10) as r:  # followed by a client
            assert r.url == base + "a.html"
        assert _get(base, "/" + REDIRECTS_FILE).status == 404  # the map is never served
        assert _get(base, "/empty/").status == 404  # no directory listings
        assert _get(base, "/missing.html").status == 404
    with pytest.raises(OSError):
        urlopen(base + "index.html", timeout=2)  # stopped: the port is closed


def test_static_server_start_stop(small_dir: Path) -> None:
    server = StaticServer(small_dir)
    assert not server.running
    with pytest.raises(RuntimeError):
        _ = server.url
    url = server.start()
    assert server.start() == url == server.url  # idempotent
    with urlopen(url + "a.html", timeout=10) as r:
        assert r.status == 200
    server.stop()
    server.stop()
    assert not server.running
    with StaticServer(small_dir) as other, urlopen(other.url, timeout=10) as r:
        assert "Hé" in r.read().decode("utf-8")  # "/" serves index.html
    with pytest.raises(ValueError):
        StaticServer(small_dir / "index.html")
