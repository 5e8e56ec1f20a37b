import sqlite3
from collections import Counter

import pytest

from wisdom_scrapy import feed_page, open_store
from wisdom_scrapy.engine.writes import PageUpdate, PageWrites, WriteBehind, feed_model
from wisdom_scrapy.mining.repetition import RECORD_KIND as BLOCKS_KIND
from wisdom_scrapy.mining.repetition import encode_blocks
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.terms import count_terms
from wisdom_scrapy.store.base import EntropyMirror, Link


def page_counts(html):
    return PageModel.from_html(html, "http://example.org/docs/page.html").page_counts()

PAGE = b"""<!DOCTYPE html><html><head><title>Crawling entropy</title>
<base href="http://example.org/docs/">
<script>var hidden = "javascript terms";</script><style>.menu { color: red }</style></head>
<body><!-- a comment about comments -->
<div id="menu"><a href="index.html">Home</a> <a href="/news/">News</a>
 <a href="javascript:void(0)">Print</a> <a href="mailto:a@b.org">Mail</a>
 <a href="#top">Top</a></div>
<div class="article"><h1>Crawling entropy</h1><p>Entropy measures how spread a term is.</p>
<p><a href="http://other.org/x.html#frag"><img src="x.png" alt="Other site"></a></p>
<noscript><p>Enable scripts</p></noscript></div></body></html>"""


def test_page_counts_are_the_visible_text_terms():
    # The title is in <head>: not shown in the page, not counted (it repeats the <h1> anyway).
    visible = "Home News Print Mail Top Crawling entropy Entropy measures how spread a term is."
    counts = page_counts(PAGE)
    assert counts == count_terms([visible])
    assert "javascript" not in counts  # script text is not content
    assert "comment" not in counts


def test_visible_text_equal_to_a_script_is_still_counted():
    html = b"<html><body><script>alpha</script><p>alpha</p><p>alpha</p></body></html>"
    assert page_counts(html) == Counter({"alpha": 2})


def test_fed_links_resolve_against_base_and_skip_non_pages():
    store = open_store("memory://")
    url = "http://example.org/docs/page.html"
    feed_model(store, PageModel.from_html(PAGE, url))
    assert store.links("example.org")[url] == [
        Link("http://example.org/docs/index.html", "Home"),
        Link("http://example.org/news/", "News"),
        Link("http://other.org/x.html", "Other site"),  # image link: its alt text
    ]


def test_str_input_is_utf8_whatever_its_meta_charset_says():
    html = '<html><head><meta charset="gbk"></head><body><p>网站结构</p></body></html>'
    assert page_counts(html) == Counter({"网站": 1, "结构": 1})


def test_feed_page_is_idempotent_and_replaces_changed_pages():
    store = open_store("memory://")
    url = "http://example.org/a.html"
    assert feed_page(store, "<p>first version words</p>", url)
    assert not feed_page(store, "<p>first version words</p>", url)
    assert feed_page(store, "<p>second version</p>", url)
    assert store.page_count("example.org") == 1
    assert store.entropy("example.org", ["word", "second"]) == {"word": 0.0, "second": 0.0}
    tf, _ = store.term_sums("example.org", ["word", "second"])
    assert tf.tolist() == [0.0, 1.0]


def test_feed_page_groups_pages_by_host_and_port():
    store = open_store("memory://")
    feed_page(store, "<p>x</p>", "http://127.0.0.1:8001/a")
    feed_page(store, "<p>x</p>", "http://127.0.0.1:8002/a")
    assert sorted(store.sites()) == ["127.0.0.1:8001", "127.0.0.1:8002"]


def test_feed_page_rejects_empty_and_binary_input_without_raising():
    store = open_store("memory://")
    assert not feed_page(store, b"", "http://example.org/e")
    assert not feed_page(store, "   ", "http://example.org/e")
    feed_page(store, bytes(range(256)) * 40, "http://example.org/bin")
    assert store.page_count("example.org") <= 1


def _doc_updates(python_doc_pages, n):
    models = [PageModel.from_html(html, url) for url, html in python_doc_pages[:n]]
    return [PageUpdate.of(model) for model in models]


def assert_same_snapshot(one, other):
    assert one.n_pages == other.n_pages
    assert one.values == pytest.approx(other.values, abs=1e-12)


def test_write_behind_reads_see_the_queued_pages(python_doc_pages, tmp_path):
    """Pages written behind, 8 per transaction, read exactly as pages written one by one, at
    every step: the page count (answered without writing the queue, re-fed and changed URLs
    counted once), the entropies and the link graph (the queue written first)."""
    updates = _doc_updates(python_doc_pages, 20)
    changed = PageUpdate(updates[0].site, updates[3].url, {"changed": 2}, [], updates[3].blocks)
    # page 1 again, unchanged (stored by then), then page 3 changed
    sequence = [*updates[:12], updates[1], changed, *updates[12:]]
    outcomes = []
    behind = WriteBehind(open_store(f"sqlite:///{tmp_path / 'behind.db'}"), 8,
                         lambda batch, outcome: outcomes.append((len(batch), outcome)))
    direct = open_store("memory://")
    site = updates[0].site
    mirror = EntropyMirror(site)
    for k, update in enumerate(sequence):
        behind.add(update)
        update.apply(direct)
        assert behind.page_count(site) == direct.page_count(site)
        if k in (4, 15):
            assert len(behind)
            # kept in step from the changed terms (the second read: page 3's replacement too)
            assert_same_snapshot(mirror.read(behind), direct.snapshot(site))
            assert not len(behind)  # the read wrote the queue
            assert_same_snapshot(behind.snapshot(site), direct.snapshot(site))
    # written: at the read of k = 4, when full (k = 12), at the read of k = 15
    assert [n for n, _ in outcomes] == [5, 8, 3] and len(behind) == len(sequence) - 16
    assert all(isinstance(outcome, list) for _, outcome in outcomes)
    changes = [r.changed for _, outcome in outcomes for r in outcome]
    assert changes.count(False) == 1  # the unchanged re-feed
    behind.add(updates[-1])  # counted with the queued page, which the count writes first
    assert behind.link_count(site) == direct.link_count(site) > 0 and not len(behind)
    assert behind.links(site) == direct.links(site) and not len(behind)
    assert_same_snapshot(behind.snapshot(site), direct.snapshot(site))
    assert dict(mirror.read(behind).values) == dict(behind.snapshot(site).values)
    behind.add(updates[5])  # a site's block records: the queue is written for its own only
    assert behind.records("other.test", BLOCKS_KIND) == {} and len(behind) == 1
    # one page's: the queued page's as it will be written, else the store's; nothing written
    assert behind.record(site, BLOCKS_KIND, updates[5].url) == encode_blocks(updates[5].blocks)
    stored = direct.record(site, BLOCKS_KIND, updates[3].url)
    assert stored is not None and behind.record(site, BLOCKS_KIND, updates[3].url) == stored
    assert len(behind) == 1
    assert behind.records(site, BLOCKS_KIND) == direct.records(site, BLOCKS_KIND)
    assert not len(behind)
    behind.add(updates[6])  # a site's page terms likewise: its own queued pages written first
    assert behind.page_terms("other.test") == {} and len(behind) == 1
    assert ({url: sorted(terms) for url, terms in behind.page_terms(site).items()}
            == {url: sorted(terms) for url, terms in direct.page_terms(site).items()})
    assert not len(behind)
    behind.close()


def test_write_behind_one_page_per_batch_writes_at_once(python_doc_pages):
    """``limit`` 1 (a distributed worker): each page is in the store when add returns."""
    store = open_store("memory://")
    behind = WriteBehind(store, 32, lambda batch, outcome: None)
    for n, update in enumerate(_doc_updates(python_doc_pages, 3), 1):
        behind.add(update, limit=1)
        assert store.page_count(update.site) == n and not len(behind)


class _Host:
    """What a crawl hands :class:`PageWrites`: its stats, the pages stored, its stop."""

    def __init__(self) -> None:
        self.stats: Counter[str] = Counter()
        self.stored: list[str] = []
        self.stops = 0

    def writes(self, uri: str) -> PageWrites:
        return PageWrites(open_store(uri), 1, count=self.count,
                          stored=lambda site, url: self.stored.append(url),
                          stop=self.stop)  # fmt: skip

    def count(self, name: str, n: int) -> None:
        self.stats[name] += n

    def stop(self) -> None:
        self.stops += 1


def test_page_writes_retry_what_a_locked_store_refused(python_doc_pages, tmp_path):
    """Another connection holds the SQLite store's write lock (``?timeout=0``: refused at once):
    the page is counted as a store error and kept; the next successful write retries it, and
    at the end nothing is lost."""
    path = tmp_path / "store.db"
    host = _Host()
    writes = host.writes(f"sqlite:///{path}?timeout=0")
    first, refused, last = _doc_updates(python_doc_pages, 3)
    writes.add(first)
    locker = sqlite3.connect(path)
    locker.execute("BEGIN EXCLUSIVE")
    writes.add(refused)
    assert host.stats["wisdom/store_errors"] == 1 and writes.retry_queue.urls() == [refused.url]
    locker.rollback()
    locker.close()
    writes.add(last)
    writes.finish()
    assert host.stored == [first.url, last.url, refused.url]
    assert (host.stats["wisdom/pages_fed"], host.stats["wisdom/store/retried"]) == (3, 1)
    assert "wisdom/pages_lost" not in host.stats and host.stops == 0
    writes.store.close()


def test_page_writes_count_a_deleted_store_lost_and_stop(python_doc_pages, tmp_path, caplog):
    """The store file deleted mid-crawl: every page stored and the one refused are counted
    lost once each and named at ERROR, and the host is asked once to stop."""
    path = tmp_path / "store.db"
    host = _Host()
    writes = host.writes(f"sqlite:///{path}")
    *stored, refused = _doc_updates(python_doc_pages, 4)
    for update in stored:
        writes.add(update)
    path.unlink()
    writes.add(refused)
    writes.finish()
    assert host.stats["wisdom/pages_lost"] == 4 and host.stops == 1
    named = [url for r in caplog.records if r.levelname == "ERROR"
             for url in r.getMessage().rsplit(": ", 1)[1].split()]  # fmt: skip
    assert sorted(named) == sorted(u.url for u in [*stored, refused])
    writes.store.close()
