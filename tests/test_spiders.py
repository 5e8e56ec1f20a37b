"""The sample project's spiders, crawling for real: ``scrapy crawl`` runs in a subprocess from the
repository root (a Twisted reactor runs once per process), against sites served on 127.0.0.1.

The crawls run with ``ADDONS={}``: they check the plain spiders (the add-on's focused crawl is
tested with the add-on)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sample_project.demo_site import GROUND_TRUTH_FILE, build_demo_site
from sample_project.spiders.site import SiteSpider, site_key
from wisdom_scrapy.testing import serve_directory

REPO_ROOT = Path(__file__).resolve().parents[1]


def _crawl(spider: str, out: Path, *args: str) -> list[dict]:
    command = [sys.executable, "-W", "error", "-m", "scrapy", "crawl", spider, *args,
               "-O", str(out), "-s", "ADDONS={}", "-s", "LOG_LEVEL=WARNING"]
    proc = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    assert "ERROR" not in proc.stderr, proc.stderr[-4000:]
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.crawl
def test_demo_spider_fetches_every_page(tmp_path: Path) -> None:
    site = build_demo_site(tmp_path / "demo")
    truth = json.loads((tmp_path / "demo" / GROUND_TRUTH_FILE).read_text(encoding="utf-8"))
    items = _crawl("demo", tmp_path / "demo.jsonl", "-a", f"site_dir={tmp_path / 'demo'}")
    html_files = {"/" + p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    paths = [urlsplit(item["url"]).path for item in items]
    assert len(paths) == len(set(paths))  # one item per page
    assert set(paths) == html_files == set(truth["pages"])
    hosts = {urlsplit(item["url"]).netloc for item in items}
    assert len(hosts) == 1 and hosts.pop().startswith("127.0.0.1:")
    for item in items:
        gold = truth["pages"][urlsplit(item["url"]).path]
        assert item["title"].startswith(gold["title"])


@pytest.mark.crawl
def test_site_spider_stays_on_host_and_port(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "index.html").write_text("<title>Other site</title><p>not ours</p>")
    main = tmp_path / "main"
    (main / "docs").mkdir(parents=True)
    (main / "data.json").write_text('{"not": "html"}')
    (main / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (main / "docs" / "b.html").write_text(
        "<title>B</title><a href='../index.html'>home</a> <a href='c.html?x=1#top'>c</a>")
    (main / "docs" / "c.html").write_text("<title> C \n page </title><p>leaf</p>")
    with serve_directory(other) as other_url:
        (main / "index.html").write_text(
            "<html><head><title>Home</title></head><body>"
            "<a href='docs/b.html'>b</a> <a href='/data.json'>data</a>"
            "<a href='logo.png'>logo</a> <a href='mailto:me@example.invalid'>mail</a>"
            f"<a href='{other_url}index.html'>other port</a>"
            "<a href='http://example.invalid/'>elsewhere</a>"
            "<a href='javascript:void(0)'>js</a></body></html>")
        with serve_directory(main) as main_url:
            items = _crawl("site", tmp_path / "site.jsonl", "-a", f"url={main_url}index.html")
    by_path = {urlsplit(item["url"]).path + ("?" + urlsplit(item["url"]).query
                                            if urlsplit(item["url"]).query else ""): item
               for item in items}
    assert set(by_path) == {"/index.html", "/docs/b.html", "/docs/c.html?x=1"}
    assert {urlsplit(item["url"]).netloc for item in items} == {urlsplit(main_url).netloc}
    assert by_path["/docs/c.html?x=1"]["title"] == "C page"
    assert by_path["/index.html"]["title"] == "Home"


def test_site_spider_reads_a_urls_file(tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("# start here\nhttp://127.0.0.1:8001/a.html\n\n  https://Example.org/x  \n")
    spider = SiteSpider(urls=str(urls))
    assert spider.start_urls == ["http://127.0.0.1:8001/a.html", "https://Example.org/x"]
    assert spider.is_allowed("http://127.0.0.1:8001/other/page.html")
    assert not spider.is_allowed("http://127.0.0.1:8002/a.html")  # another port, another site
    assert spider.is_allowed("http://example.org/y")  # default ports: one site
    assert not spider.is_allowed("ftp://example.org/y")
    both = SiteSpider(url="http://127.0.0.1:9000/", urls=str(urls))
    assert len(both.start_urls) == 3


def test_site_key() -> None:
    assert site_key("http://127.0.0.1:8000/a") == ("127.0.0.1", 8000)
    assert site_key("https://EXAMPLE.org:443/") == ("example.org", None)
    assert site_key("http://example.org/") == site_key("https://example.org/x")
    assert site_key("mailto:a@b.c") is None
    assert site_key("http://h:notaport/") is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "-a url=URL or -a urls=FILE"),
        ({"url": "  "}, "-a url=URL"),
        ({"url": "not a url"}, "-a url"),
        ({"url": "file:///etc/passwd"}, "-a url"),
        ({"urls": "/nonexistent/urls.txt"}, "-a urls="),
    ],
)
def test_site_spider_needs_start_urls(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        SiteSpider(**kwargs)
    assert "site spider" in str(info.value)


def test_site_spider_empty_urls_file(tmp_path: Path) -> None:
    empty = tmp_path / "urls.txt"
    empty.write_text("# nothing yet\n\n")
    with pytest.raises(ValueError, match="-a urls="):
        SiteSpider(urls=str(empty))


@pytest.mark.crawl
def test_site_spider_error_from_the_command_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "site", "-s", "ADDONS={}", "-O",
         str(tmp_path / "x.jsonl")],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "-a url=URL or -a urls=FILE" in proc.stderr
