"""Hostile pages through the whole pipeline, in a real ``scrapy crawl``: the feed middleware,
the analysis middleware, focusing and the late items at idle. Nothing may crash the crawl, every
page leaves as one item of the documented shape, and every skip is counted."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from urllib.parse import urlsplit

import pytest
from lxml import etree

from tests.crawling import REPO, crawl_command, read_result
from tests.reliability._pages import HTML, LINKED_ONLY, LOSSES, PAGES, index_page
from tests.reliability._server import serve_pages
from tests.reliability._shape import check_shape
from wisdom_scrapy.page.links import MAX_LINK_CHARS
from wisdom_scrapy.page.terms import MAX_TERM_CHARS
from wisdom_scrapy.store import open_store

pytestmark = pytest.mark.crawl

ALL_PAGES = {**PAGES, **LINKED_ONLY}


@pytest.fixture(scope="module")
def hostile_crawl(tmp_path_factory: pytest.TempPathFactory):
    """The crawl of every hostile page; its items also go to an XML feed (``items.xml``)."""
    tmp = tmp_path_factory.mktemp("hostile")
    pages = {path: (ctype, body) for path, (ctype, body, _) in ALL_PAGES.items()}
    pages["/index.html"] = (HTML, index_page())
    with serve_pages(pages) as (base, requested):
        cmd, items, stats = crawl_command(
            "site", tmp, args={"url": base + "index.html"},
            settings={"WISDOM_STORE_URI": f"sqlite:///{tmp / 'store.db'}",
                      "WISDOM_ITEM_FIELDS": "html,blocks,features",
                      # no download limit: /huge.html reaches the add-on, which skips it (the
                      # add-on's default DOWNLOAD_MAXSIZE: test_bounds.py)
                      "DOWNLOAD_MAXSIZE": 0})
        proc = subprocess.run([*cmd, "-O", f"{tmp / 'items.xml'}:xml"], cwd=REPO,
                              capture_output=True, text=True, timeout=600, check=False)
    result = read_result(proc.returncode, proc.stderr + proc.stdout, items, stats)
    return result, requested, tmp / "store.db"


def test_crawl_survives_every_hostile_page(hostile_crawl) -> None:
    result, requested, _ = hostile_crawl
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log, result.log[-5000:]
    assert not [k for k in result.stats if k.startswith(("wisdom/errors", "spider_exceptions"))]
    assert result.stats.get("wisdom/store_errors", 0) == 0
    # Every hostile page was fetched once.
    counts = Counter(requested)
    assert all(counts[path] == 1 for path in ALL_PAGES), counts  # past a malformed link too


def test_every_page_leaves_as_one_item_of_the_documented_shape(hostile_crawl) -> None:
    result, *_ = hostile_crawl
    pages = [check_shape(item) for item in result.items if "tocs" not in item]
    by_path = Counter(urlsplit(p["url"]).path for p in pages)
    assert by_path == Counter([*ALL_PAGES, "/index.html"]), by_path  # one item per page
    for item in pages:
        outcome = ALL_PAGES.get(urlsplit(item["url"]).path, (None, None, "item"))[2]
        if outcome == "item":
            assert item["role"] in ("article", "toc", "other"), item["url"]
        else:  # skipped: passed on unanalysed
            assert item["role"] == "", item["url"]


def test_skips_are_counted(hostile_crawl) -> None:
    result, *_ = hostile_crawl
    expected = Counter(o.split(":", 1)[1] for _, _, o in PAGES.values() if o.startswith("skip:"))
    for reason, n in expected.items():
        assert result.stats.get(f"wisdom/skipped/{reason}") == n, reason
    fed = result.stats.get("wisdom/pages_fed", 0)
    analysed = sum(1 for _, _, o in ALL_PAGES.values() if o == "item") + 1  # + index
    assert fed == analysed
    # the items of analysed pages: on time, or late (held for warm-up / TOC targets)
    roles = Counter(f"wisdom/items/{r}" for r in ("article", "toc", "other"))
    assert sum(result.stats.get(k, 0) for k in roles) == analysed


def test_store_holds_exactly_the_analysed_pages(hostile_crawl) -> None:
    result, _, db = hostile_crawl
    with open_store(f"sqlite:///{db}") as store:
        (site,) = store.sites()
        assert store.page_count(site) == result.stats["wisdom/pages_fed"]


def test_what_hostile_pages_lose_is_counted_and_logged_once(hostile_crawl) -> None:
    result, *_ = hostile_crawl
    pages = Counter(LOSSES.values())
    assert result.stats.get("wisdom/truncated/too_deep") == pages["truncated/too_deep"]
    for stat in ("dropped/long_terms", "dropped/long_links"):  # occurrences, on these pages
        assert result.stats.get(f"wisdom/{stat}", 0) >= pages[stat], stat
    for stat in set(LOSSES.values()):
        logged = re.findall(rf"WARNING: wisdom_scrapy: (\S+) .*under wisdom/{stat}\)", result.log)
        assert len(logged) == 1 and logged[0].endswith(tuple(LOSSES)), (stat, logged)


def test_store_holds_no_overlong_term_or_link(hostile_crawl) -> None:
    _, _, db = hostile_crawl
    with open_store(f"sqlite:///{db}") as store:
        (site,) = store.sites()
        terms, _, _ = store.all_term_sums(site)  # every term (a snapshot leaves out some)
        links = store.links(site)
    assert "ordinari" in terms and max(map(len, terms)) <= MAX_TERM_CHARS
    assert max(len(link.url) for out in links.values() for link in out) <= MAX_LINK_CHARS
    assert any(urlsplit(link.url).path == "/index.html"
               for url, out in links.items() if url.endswith("/long-href.html") for link in out)


def test_xml_feed_and_items_hold_no_control_character(hostile_crawl) -> None:
    """Binary bodies are skipped, and a stray control character of a real page never reaches
    an item, nor so Scrapy's XML feed of the crawl (where XML forbids it): the feed parses."""
    result, _, db = hostile_crawl
    controls = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
    xml = (db.parent / "items.xml").read_text(encoding="utf-8")
    assert len(etree.fromstring(xml.encode()).findall("item")) == len(result.items)
    assert not controls.search(xml)
    for item in result.items:
        assert not [s for s in _strings(item) if controls.search(s)], item["url"]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []
