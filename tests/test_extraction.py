"""Cold start and TOC completion, on the demo site's real pages with the real analysis."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sample_project.demo_site import build_demo_site
from wisdom_scrapy import open_store
from wisdom_scrapy.analysis.evaluation import shingle_prf
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.link_graph import (
    LINKS,
    RECORD_KIND,
    DecodedRecords,
    SiteRecorder,
    StructureTracker,
)
from wisdom_scrapy.engine.sites import SiteContext, Sites
from wisdom_scrapy.engine.waits import (
    WAITS,
    ExtractionParams,
    Extractor,
    TermIndex,
    WaitingPage,
    run_sync,
)
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.items import ArticleItem, PageItem, TocItem
from wisdom_scrapy.mining.repetition import BlockRepetition, page_blocks
from wisdom_scrapy.mining.wisdom import anchor_precision
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store.redis import RedisStore
from wisdom_scrapy.testing import serve_directory

from .crawling import run_crawl

BASE = "http://demo.test/"
SITE = "demo.test"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("demo")
    site = build_demo_site(out)
    truth = json.loads((out / "ground_truth.json").read_text())["pages"]
    return site, truth


def _model(site: Path, path: str) -> PageModel:
    return PageModel.from_html((site / path.lstrip("/")).read_bytes(), BASE + path.lstrip("/"))


def test_term_index_answers_membership_compactly():
    index = TermIndex()
    index.add("http://a/1", ["alpha", "beta"])
    index.add("http://a/2", ["beta", "gamma"])
    first = index.get("http://a/1")
    assert "alpha" in first and "beta" in first and "gamma" not in first
    assert "nothing" not in first and len(first) == 2
    assert index.get("http://a/3") is None and "http://a/2" in index


def test_term_index_holds_about_a_byte_per_term_of_a_page():
    """A page's terms are held as varint gaps between sorted ids: whatever the number of pages
    and the size of the vocabulary, under 1.5 bytes a term for pages drawing on a common
    vocabulary plus a few terms of their own (the shape of a site), and exactly the terms."""
    rng = np.random.default_rng(3)
    common = [f"w{k}" for k in range(3000)]
    index = TermIndex()
    pages = {}
    for n in range(600):
        terms = {*rng.choice(common, 300).tolist(), *(f"own{n}x{k}" for k in range(8))}
        pages[f"http://a/{n}"] = terms
        index.add(f"http://a/{n}", list(terms))
        if n in (99, 599):
            held = sum(map(len, pages.values()))
            assert index.nbytes() < 1.5 * held
    for url in ("http://a/0", "http://a/599"):
        got = index.get(url)
        assert got is not None and set(got) == pages[url] and len(got) == len(pages[url])
        assert all(t in got for t in pages[url]) and "own1x0" not in got


def test_term_index_holds_a_page_without_terms():
    index = TermIndex()
    index.add("http://a/empty", [])
    got = index.get("http://a/empty")
    assert got is not None and len(got) == 0 and "alpha" not in got and list(got) == []


PYDOC_FIXTURES = sorted((Path(__file__).parent / "fixtures" / "pydoc").glob("*.html"))


@pytest.mark.parametrize("page", PYDOC_FIXTURES, ids=lambda p: p.stem)
def test_anchor_precision_over_the_term_index_is_that_over_plain_sets(page: Path):
    """Issue 33: anchor precision searches all (anchor, term) pairs in the index's ids at once
    when every linked page's terms come from one TermIndex; the figures are those of asking
    plain sets pair by pair, and of a mix (one target from another index: pair by pair)."""
    model = PageModel.from_html(page.read_bytes(), "https://docs.python.org/3/" + page.name)
    rng = np.random.default_rng(7)
    vocab = model.vocab
    urls = list(dict.fromkeys(link.url for link in model.links()))
    assert len(urls) > 10
    index, other, plain = TermIndex(), TermIndex(), {}
    index.add("http://unrelated/", ["zzz", *vocab[:50]])  # ids of terms no anchor holds
    for k, url in enumerate(urls):
        if k % 5 == 4:
            continue  # not fetched: unknown
        terms = [] if k % 7 == 3 else [*rng.choice(vocab, min(len(vocab), 40)).tolist(), "q1"]
        index.add(url, terms)
        plain[url] = frozenset(terms)
    other.add(urls[0], list(plain[urls[0]]))
    entropy = rng.random(len(vocab))

    def mixed(url: str) -> Any:
        return other.get(url) if url == urls[0] else index.get(url)

    want = anchor_precision(model, entropy, plain.get, n_pages=64)
    assert want[1].any() and (want[0] > 0).any()
    for targets in (index.get, mixed):
        got = anchor_precision(model, entropy, targets, n_pages=64)
        assert np.array_equal(got[1], want[1])
        assert np.array_equal(got[0], want[0])  # the same sums, in the same order


def _items(extractor: Extractor, ready: list[WaitingPage]) -> list[Any]:
    """The items of the pages that left the waits, made as the item pipeline makes them."""
    return [run_sync(extractor.item(page)) for page in ready]


def _submit(extractor: Extractor, *args: Any, **kwargs: Any) -> list[Any]:
    return run_sync(extractor.submit(*args, **kwargs))


def _flush(extractor: Extractor) -> list[WaitingPage]:
    return run_sync(extractor.flush())


def _fetched(extractor: Extractor, site: str, url: str, model: PageModel) -> list[WaitingPage]:
    """Record a fetched page, and the pending TOC pages it completes, analysed (as the crawl's
    spider middleware does)."""
    extractor.page_fetched(site, url, model)
    return run_sync(extractor.finish_completed())


def test_pages_are_held_until_the_site_is_warm_then_all_come_out(demo):
    site_dir, truth = demo
    store = open_store("memory://")
    counts: Counter[str] = Counter()
    extractor = Extractor(
        store,
        ExtractionParams(warmup_pages=8, until_template=False),
        analyze_page,
        lambda name: counts.update([name]),
    )
    articles = [p for p, page in truth.items() if page["role"] == "article"][:12]
    emitted = []
    for i, path in enumerate(articles):
        model = _model(site_dir, path)
        feed_model(store, model, site=SITE)
        extractor.page_fetched(SITE, model.url, model)
        out = _items(extractor, _submit(extractor, SITE, model.url, model))
        if i < 7:
            assert out == [], "held while the store knows fewer than 8 pages"
        assert extractor.sites.get(SITE).cold_start_over == (i >= 7)  # the site object says so
        emitted.extend(out)
    assert extractor.waiting() == 0
    assert sorted(item.url for item in emitted) == sorted(BASE + p.lstrip("/") for p in articles)
    assert all(isinstance(item, ArticleItem) for item in emitted)
    assert counts["wisdom/warmup/held"] == 7


def test_a_new_site_is_held_only_until_its_template_shows(demo):
    """Derived warm-up: the demo's pages share a menu, which the site's block repetition
    counts as template from its third page (MIN_PAGES) on; the first two wait for it, the rest
    leave at once, all analysed with the site's view, long before 32 pages."""
    site_dir, truth = demo
    store = open_store("memory://")
    counts: Counter[str] = Counter()
    extractor = Extractor(
        store, ExtractionParams(warmup_pages=32), analyze_page, lambda name: counts.update([name])
    )
    articles = [p for p, page in truth.items() if page["role"] == "article"][:12]
    emitted: list[list] = []
    for path in articles:
        model = _model(site_dir, path)
        feed_model(store, model, site=SITE)
        extractor.page_fetched(SITE, model.url, model)
        emitted.append(_items(extractor, _submit(extractor, SITE, model.url, model)))
    assert [len(out) for out in emitted[:3]] == [0, 0, 3]
    assert all(len(out) == 1 for out in emitted[3:])
    assert counts["wisdom/warmup/held"] == 2 and extractor.waiting() == 0
    items = [item for out in emitted for item in out]
    assert all(isinstance(item, ArticleItem) for item in items)
    texts = [shingle_prf(item.text, truth[item.url[len(BASE) - 1 :]]["text"]).f1 for item in items]
    assert float(np.mean(texts)) >= 0.95


def test_flush_emits_held_pages_of_a_site_smaller_than_the_warm_up(demo):
    site_dir, truth = demo
    store = open_store("memory://")
    extractor = Extractor(
        store, ExtractionParams(warmup_pages=1000, until_template=False), analyze_page
    )
    paths = list(truth)[:5]
    for path in paths:
        model = _model(site_dir, path)
        feed_model(store, model, site=SITE)
        assert _submit(extractor, SITE, model.url, model) == []
    assert extractor.waiting() == 5
    items = _items(extractor, _flush(extractor))
    assert len(items) == 5 and extractor.waiting() == 0
    assert all(isinstance(i, (ArticleItem, TocItem, PageItem)) for i in items)


@pytest.mark.crawl
def test_crawl_emits_one_item_per_page_including_late_ones(demo, tmp_path):
    site_dir, truth = demo
    with serve_directory(site_dir) as base:
        result = run_crawl(
            "site",
            tmp_path,
            args={"url": base + "index.html"},
            settings={
                "WISDOM_STORE_URI": f"sqlite:///{tmp_path}/w.db",
                "WISDOM_FOCUS": "off",  # every page fetched, so every page has an item
                # Larger than the site: every item waits for idle and leaves as a late item.
                "WISDOM_WARMUP_PAGES": 10_000,
                "WISDOM_MAX_HELD_PAGES": 10_000,  # and no early release (test_bounds.py)
            },
        )
    assert result.returncode == 0, result.log[-3000:]
    assert "wisdom/errors/analysis" not in result.stats
    page_items = [item for item in result.items if "role" in item]  # not the site's structure
    urls = [item["url"] for item in page_items]
    assert len(urls) == len(set(urls)) == len(truth)
    assert result.stats["wisdom/items/late"] >= len(truth)  # + the site structure item
    assert all(item["role"] in ("article", "toc", "other") for item in page_items)


@pytest.mark.crawl
def test_a_crawl_into_an_earlier_crawls_store_takes_changed_pages_blocks_back(demo, tmp_path):
    """A second crawl of a site whose every page changed a little (a timestamp), into the
    store of the first: each page's earlier blocks are read from the store (one record)
    before its new ones are written behind, so the site's block repetition is never counted
    again (its whole records read back per changed page, as a first version of this did)."""
    site_dir = shutil.copytree(demo[0], tmp_path / "site")
    store_uri = f"sqlite:///{tmp_path}/w.db"
    with serve_directory(site_dir) as base:
        results = []
        for crawl in ("first", "second"):
            results.append(run_crawl("site", tmp_path / crawl, args={"url": base + "index.html"},
                                     settings={"WISDOM_STORE_URI": store_uri,
                                               "WISDOM_FOCUS": "off"}))  # fmt: skip
            for k, page in enumerate(sorted(site_dir.rglob("*.html"))):
                html = page.read_text().replace("</body>",
                                                f"<div><p>Generated {k} s ago</p></div></body>")
                page.write_text(html)
    first, second = results
    assert first.returncode == second.returncode == 0, second.log[-3000:]
    assert second.stats["wisdom/pages_fed"] == first.stats["wisdom/pages_fed"] > 100  # changed
    assert "wisdom/repetition/counted_again" not in second.stats
    assert "wisdom/repetition/read_back" not in second.stats


def _warm_home(demo: tuple[Path, dict]) -> tuple[Extractor, list[str]]:
    """An extractor of a warm store of the demo site (its template known) and the URLs the
    home page's TOC links go to."""
    site_dir, truth = demo
    store = open_store("memory://")
    extractor = Extractor(store, ExtractionParams(warmup_pages=0), analyze_page)
    for path in list(truth)[:40]:
        feed_model(store, _model(site_dir, path), site=SITE)
    home = _model(site_dir, "/index.html")
    feed_model(store, home, site=SITE)
    links = analyze_page(None, home.url, store, site=SITE, model=home).toc_links
    return extractor, [url for url, _ in links]


def _fetch_until_released(
    extractor: Extractor, site_dir: Path, urls: list[str]
) -> tuple[list[Any], int]:
    """Fetch ``urls`` in turn until pending pages leave: their items, and the pages fetched."""
    for fetched, url in enumerate(urls, 1):
        model = _model(site_dir, url[len(BASE) - 1 :])
        released = _items(extractor, _fetched(extractor, SITE, url, model))
        if released:
            return released, fetched
    return [], len(urls)


def test_toc_page_waits_for_its_link_targets(demo):
    site_dir, truth = demo
    extractor, waited_for = _warm_home(demo)
    home = _model(site_dir, "/index.html")
    assert _submit(extractor, SITE, home.url, home) == []  # waiting for its articles
    assert extractor.waiting() == 1
    stories = {BASE + p.lstrip("/") for p in truth["/index.html"]["links"]}
    # The home page's story list is (mostly) among its TOC links.
    assert len(stories & set(waited_for)) >= 0.8 * len(stories)
    released, fetched = _fetch_until_released(extractor, site_dir, waited_for)
    assert fetched >= 5  # released once enough of its TOC links were fetched, not at once
    assert len(released) == 1 and isinstance(released[0], TocItem)
    assert extractor.waiting() == 0
    assert len(stories & {link["url"] for link in released[0].links}) >= 0.8 * len(stories)


def test_toc_page_leaves_at_the_fetch_that_reaches_its_share_of_targets(demo):
    """The pending TOC page leaves exactly when a share ``toc_targets_ratio`` of its distinct
    targets is fetched: counted over every page the crawl fetched (one recorded under another
    site name counts at the next fetch of a target), a page fetched again or not a target
    completes nothing."""
    site_dir = demo[0]
    extractor, waited_for = _warm_home(demo)
    home = _model(site_dir, "/index.html")
    assert _submit(extractor, SITE, home.url, home) == []
    targets = list(dict.fromkeys(waited_for))
    need = math.ceil(extractor.params.toc_targets_ratio * len(targets))
    assert need >= 3
    other = _model(site_dir, targets[0][len(BASE) - 1 :])
    extractor.page_fetched("elsewhere.example", targets[0], other)  # another site's record
    for i, url in enumerate(targets[1:need - 1], 2):
        model = _model(site_dir, url[len(BASE) - 1 :])
        assert _fetched(extractor, SITE, url, model) == [], f"left after {i} of {need} targets"
        assert _fetched(extractor, SITE, url, model) == []  # the same page again
    assert _fetched(extractor, SITE, BASE + "not-a-target.html", home) == []
    last = targets[need - 1]
    last_model = _model(site_dir, last[len(BASE) - 1 :])
    released = _items(extractor, _fetched(extractor, SITE, last, last_model))
    assert [type(item) for item in released] == [TocItem]


def test_pending_targets_are_pruned_by_every_fetch_whatever_its_site(demo):
    """A fetched page prunes itself from the unfetched targets of every pending TOC page
    (``AwaitedTargets``), so that they always equal what the term index answers, the count
    the pages were completed by before (each target tested again on every fetch of one of
    them); two pending pages with equal targets each keep theirs, and nothing stays waiting
    once no page is pending (every way out: completed, flushed)."""
    site_dir = demo[0]
    extractor, waited_for = _warm_home(demo)
    for _ in range(2):
        assert _submit(extractor, SITE, BASE + "index.html", _model(site_dir, "/index.html")) == []
    targets = list(dict.fromkeys(waited_for))
    pending = list(extractor._waits(SITE).pending_tocs)
    assert len(pending) == 2 and pending[0].targets is not pending[1].targets
    for i, url in enumerate(targets):
        site = "elsewhere.example" if i % 3 == 1 else SITE  # another site's record of it
        extractor.page_fetched(site, url, _model(site_dir, url[len(BASE) - 1 :]))
        for page in extractor._waits(SITE).pending_tocs:
            assert page.targets is not None
            assert page.targets.unfetched == {
                t for t in page.targets.all if t not in extractor.terms}
        if i == 2:  # one completed and let go, its targets no longer waiting
            run_sync(extractor.finish_completed())
    _flush(extractor)
    assert len(extractor._targets) == 0


def test_two_fetches_of_one_toc_page_wait_and_leave_each(demo):
    """A TOC page submitted twice to the engine waits twice: each record waits for its targets
    and leaves on its own (pending TOC pages were a table by URL, where the second took the
    first's place and the first no longer waited for its targets). A crawl never submits a
    URL twice (its second PageItem is a ``duplicate_url``): this is the engine's API."""
    site_dir = demo[0]
    extractor, waited_for = _warm_home(demo)
    url = BASE + "index.html"
    for _ in range(2):
        assert _submit(extractor, SITE, url, _model(site_dir, "/index.html")) == []
    assert extractor.waiting() == 2 and extractor.waiting_urls() == {SITE: [url] * 2}
    released, _ = _fetch_until_released(extractor, site_dir, waited_for)
    assert [type(item) for item in released] == [TocItem, TocItem]
    assert extractor.waiting() == 0 and _flush(extractor) == []


def test_demo_articles_leave_ads_and_orphan_headings_out(demo) -> None:
    """Orphan headings and most inline ads leave the article text (see test_repetition)."""
    site_dir, truth = demo
    store = open_store("memory://")
    extractor = Extractor(store, ExtractionParams(warmup_pages=40), analyze_page)
    paths = sorted(truth)[::3]  # every third page of every kind: ~190 pages
    items, models, repetition = [], {}, BlockRepetition()
    for path in paths:
        model = models[path] = _model(site_dir, path)
        url = model.url
        feed_model(store, model, site=SITE)
        repetition.add(url, model)
        items += _items(extractor, _fetched(extractor, SITE, url, model))
        items += _items(extractor, _submit(extractor, SITE, url, model, ""))
    items += _items(extractor, _flush(extractor))
    articles = {it.url[len(BASE) - 1 :]: it for it in items if isinstance(it, ArticleItem)}
    gold = {p: truth[p] for p in articles if truth[p]["role"] == "article"}
    assert len(gold) >= 30
    f1 = []
    for path, page in gold.items():
        text = articles[path].text
        assert not text.rstrip().endswith(("Related stories", "More opinion")), path
        f1.append(shingle_prf(text, page["text"]).f1)
    assert float(np.mean(f1)) >= 0.95
    # the inline ads: the same pages analysed with the same entropies, with and without the
    # site's block repetition (an ad whose words are rare enough passes WISDOM's constraint;
    # the site's view leaves every ad out)
    snapshot = store.snapshot(SITE)

    def ads(rep: BlockRepetition | None) -> int:
        return sum("Advertisement" in analyze_page(None, models[p].url, model=models[p],
                   snapshot=snapshot, repetition=rep).article_text for p in gold)  # fmt: skip

    without, with_ = ads(None), ads(repetition)
    assert without >= 10 and with_ == 0, (without, with_)


def test_an_article_whose_text_condensing_removed_entirely_is_no_article(demo) -> None:
    """The demo's promo pages are a heading and one line; on some, mining keeps only the
    heading, which orphan-heading removal then drops. Such a page is "other", never an
    ArticleItem with empty text (and empty features)."""
    site_dir, truth = demo
    store, repetition, models = open_store("memory://"), BlockRepetition(), {}
    for path in sorted(truth):
        model = models[path] = _model(site_dir, path)
        feed_model(store, model, site=SITE)
        repetition.add(model.url, model)
    snapshot = store.snapshot(SITE)
    promos = [p for p in truth if p.startswith("/promo/")]
    assert len(promos) >= 4
    roles = Counter()
    for path in promos:
        analysis = analyze_page(None, models[path].url, model=models[path], snapshot=snapshot,
                                repetition=repetition)  # fmt: skip
        assert analysis.role != "article" or analysis.article_text.strip(), path
        roles[analysis.role] += 1
    assert roles["other"] >= 2, roles


def test_waiting_pages_are_compact_and_give_the_same_items(demo):
    """With a ``source`` (the crawl's re-parse of the body), a waiting page keeps no model, and
    its item, built from the rebuilt model, equals the item of a page held with its model."""
    site_dir, truth = demo
    paths = list(truth)[:12]
    outputs = []
    for compact in (False, True):
        store = open_store("memory://")
        extractor = Extractor(
            store, ExtractionParams(warmup_pages=1000, until_template=False), analyze_page
        )
        for path in paths:
            model = _model(site_dir, path)
            feed_model(store, model, site=SITE)
            extractor.page_fetched(SITE, model.url, model)
            source = partial(_model, site_dir, path) if compact else None
            assert _submit(extractor, SITE, model.url, model, source=source) == []
        held_models = [held.model for held in WAITS.of(extractor.sites.get(SITE)).held]
        assert all(m is None for m in held_models) == compact
        outputs.append([dataclasses.asdict(item) for item in _items(extractor, _flush(extractor))])
    assert len(outputs[0]) == len(paths) and outputs[0] == outputs[1]


def test_one_snapshot_per_site_refreshed_by_one_rule(demo):
    """One :class:`SiteContext` per site: the extractor's analysis and the focusing's link
    weights read the site's entropies through it — a snapshot read once and re-read only when
    the store knows a tenth more pages — while the site-level HITS analysis reads the store's
    current entropies without changing that schedule."""
    site_dir, truth = demo
    store = open_store("memory://")
    counts: Counter[str] = Counter()
    sites = Sites(store, count=lambda name: counts.update([name]))
    extractor = Extractor(store, ExtractionParams(warmup_pages=8, until_template=False),
                          analyze_page, sites=sites)  # fmt: skip
    tracker = StructureTracker(store, sites=sites)
    pages = sorted(truth)[:40]
    for path in pages[:30]:
        model = _model(site_dir, path)
        feed_model(store, model, site=SITE)
        tracker.observe(SITE, model.url, model)
        extractor.page_fetched(SITE, model.url, model)
        _items(extractor, _submit(extractor, SITE, model.url, model))
    context = sites.get(SITE)
    snapshot = context.snapshot()
    reads = counts["wisdom/snapshots"]
    assert reads >= 1 and WAITS.of(context) is not None and LINKS.of(context) is not None
    assert WAITS.of(extractor.sites.get(SITE)) is WAITS.of(context)  # one state per site
    assert context.latest() is snapshot and counts["wisdom/snapshots"] == reads
    limit = int(snapshot.n_pages * 1.1)  # the store may know this many pages: no re-read
    more = iter(pages[30:])
    while store.page_count(SITE) < limit:
        feed_model(store, _model(site_dir, next(more)), site=SITE)
    assert context.snapshot() is snapshot
    tracker.analyse(SITE)  # the site-level analysis: every page's entropies, read now
    assert counts["wisdom/snapshots"] == reads + 1
    assert context.snapshot() is snapshot and context.latest() is snapshot
    feed_model(store, _model(site_dir, next(more)), site=SITE)  # a tenth more: read again
    fresh = context.snapshot()
    assert fresh is not snapshot and fresh.n_pages == limit + 1 and context.latest() is fresh
    assert counts["wisdom/snapshots"] == reads + 2


def test_decoded_records_kept_between_analyses_give_the_same_analysis(demo, tmp_path):
    """A re-analysis takes the records it decoded (or observed) before from the tracker's
    working set and decodes only the others: every kept record equals its decoding (values
    and types), the analysis is the one of decoding everything, a record stored again is
    decoded again, and the working set keeps within its bytes."""
    site_dir, truth = demo
    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    sites = Sites(store)
    tracker = StructureTracker(store, sites=sites, min_pages=3)
    paths = sorted(truth)[:24]
    for path in paths:
        model = _model(site_dir, path)
        feed_model(store, model, site=SITE)
        tracker.observe(SITE, model.url, model)
    recorder = LINKS.of(sites.get(SITE)).recorder
    assert not recorder.records and len(tracker.decoded) == len(paths)  # released, kept
    blobs = store.records(SITE, RECORD_KIND)
    for url, blob in blobs.items():
        kept = tracker.decoded.get(SITE, recorder, blob, url)
        decoded = recorder.decode(url, blob)
        assert kept is not None and kept.url == decoded.url
        for name in (f.name for f in dataclasses.fields(decoded) if f.name != "url"):
            a, b = getattr(kept, name), getattr(decoded, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    with_kept = tracker.analyse(SITE)
    tracker.decoded = DecodedRecords(max_bytes=0)  # nothing kept: every record decoded
    decoded_all = tracker.analyse(SITE)
    assert len(tracker.decoded) == 0 and with_kept.urls == decoded_all.urls
    for name in ("hub", "authority"):
        assert np.array_equal(getattr(with_kept, name), getattr(decoded_all, name))
    # another process stores a page's record again: the kept one is not taken
    url = next(iter(blobs))
    other = DecodedRecords()
    other.put(SITE, recorder, blobs[url], recorder.decode(url, blobs[url]))
    assert other.get(SITE, recorder, blobs[url] + b"x", url) is None
    assert other.get(SITE, SiteRecorder(), blobs[url], url) is None
    assert other.get(SITE, recorder, blobs[url], url) is not None
    small = DecodedRecords(max_bytes=other.bytes * 2)
    for url, blob in blobs.items():
        small.put(SITE, recorder, blob, recorder.decode(url, blob))
        assert small.bytes <= small.max_bytes
    assert 1 <= len(small) < len(blobs)


def test_a_left_sites_decoded_records_go_and_its_analysis_is_the_same(demo, tmp_path):
    """The decoded records kept between analyses are those of the sites the crawl is crawling:
    once it has left a site (its horizon passed), the site's records go, the other site's stay,
    the bytes counted are the remaining entries', and the left site's next analysis, decoding
    them again, is the one it had before."""
    site_dir, truth = demo
    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    horizon = 8
    sites = Sites(store, horizon=horizon)
    tracker = StructureTracker(store, sites=sites, min_pages=3)
    paths = sorted(truth)[: 2 * horizon]
    other = "other.test"
    for site in (SITE, other):  # one site, then the other: the first is left
        for path in paths:
            model = _model(site_dir, path)
            feed_model(store, model, site=site)
            tracker.observe(site, model.url, model)
            sites.fed(site, (tracker,))
        if site == SITE:
            before = tracker.analyse(SITE)
    assert sites.get(SITE).left and not sites.get(other).left
    kept = tracker.decoded
    assert len(kept) == len(paths) and kept.bytes > 0
    blobs = store.records(SITE, RECORD_KIND)
    recorder = LINKS.of(sites.get(SITE)).recorder
    assert all(kept.get(SITE, recorder, blob, url) is None for url, blob in blobs.items())
    again = tracker.analyse(SITE)
    assert again.urls == before.urls and again.roles == before.roles
    for name in ("hub", "authority"):
        assert np.array_equal(getattr(again, name), getattr(before, name))
    kept.forget(SITE)
    kept.forget(other)
    assert len(kept) == 0 and kept.bytes == 0


def test_a_left_sites_toc_reads_its_page_terms_back_the_same(demo, tmp_path):
    """The TOC term index keeps the terms of the sites the crawl is crawling: once it has left
    a site, its pages keep a mark, not their terms (a tenth of the bytes at most), and a TOC
    page of the site analysed then reads them back from the store (a real SQLite one): the
    same terms, the same anchor precision, TOC links and blocks as with every page's kept."""
    site_dir, truth = demo
    store = open_store(f"sqlite:///{tmp_path / 't.db'}")
    counts: Counter[str] = Counter()
    sites = Sites(store, count=lambda name: counts.update([name]), horizon=4)
    extractor = Extractor(store, ExtractionParams(warmup_pages=0), analyze_page, sites=sites,
                          count=lambda name: counts.update([name]))
    kept = TermIndex()
    paths = sorted(p for p in truth if p != "/index.html")[:40]
    for path in paths:
        model = _model(site_dir, path)
        feed_model(store, model, site=SITE)
        extractor.page_fetched(SITE, model.url, model)
        kept.add(model.url, model.vocab)
        sites.fed(SITE, (extractor,))
    held = extractor.terms.nbytes()
    for k in range(5):  # another site's pages: the demo site is left
        other = PageModel.from_html(b"<p>elsewhere %d</p>" % k, f"http://other.test/{k}")
        feed_model(store, other, site="other.test")
        extractor.page_fetched("other.test", other.url, other)
        sites.fed("other.test", (extractor,))
    assert sites.get(SITE).left and counts["wisdom/terms/let_go"] == 1
    assert extractor.terms.nbytes() < held / 10 and len(extractor.terms) == len(paths) + 5
    home = _model(site_dir, "/index.html")
    feed_model(store, home, site=SITE)
    analyses = [analyze_page(None, home.url, store, site=SITE, model=home, target_terms=terms)
                for terms in (kept.get, extractor.terms.get, None)]
    assert analyses[0].role == analyses[1].role == "toc" and analyses[0].toc_links
    assert analyses[1].toc_links == analyses[0].toc_links
    assert repr(analyses[1].figures) == repr(analyses[0].figures)  # NaN == NaN
    assert repr(analyses[1].blocks) == repr(analyses[0].blocks)
    # the terms are used: without them no anchor has a precision
    assert analyses[2].figures["zero_api_ratio"] > analyses[0].figures["zero_api_ratio"]
    assert extractor.terms.nbytes() >= held  # read back: the site's pages, in one batch
    for path in paths:
        url = BASE + path.lstrip("/")
        got, want = extractor.terms.get(url), kept.get(url)
        assert got is not None and want is not None and set(got) == set(want)


def test_the_sites_snapshots_keep_within_their_budget(
    demo: tuple[Path, dict[str, Any]],
) -> None:
    """A broad crawl's sites: their snapshots hold at most the budget's terms together (the
    one in use whatever its size); the least recently used let theirs go, and read the same
    entropies again when their pages come back."""
    site_dir, truth = demo
    store = open_store("memory://")
    models = [_model(site_dir, path) for path in sorted(truth)[:12]]
    names = [f"s{k}.example" for k in range(6)]
    for k, site in enumerate(names):  # each site its own pages: entropies of its own
        for model in models[k : k + 6]:
            feed_model(store, model, site=site)
    counts: Counter[str] = Counter()
    sizes = {site: len(store.snapshot(site).values) for site in names}
    budget = 2 * max(sizes.values())
    sites = Sites(store, count=lambda name: counts.update([name]), max_terms=budget)
    first = {site: sites.get(site).snapshot() for site in names}
    held = [site for site in names if sites.get(site).held_terms]
    assert 1 <= len(held) < len(names) and held[-1] == names[-1]  # the most recent kept
    assert sum(sizes[site] for site in held) <= budget
    assert counts["wisdom/snapshots/released"] == len(names) - len(held)
    again = sites.get(names[0]).latest()  # let go: read again, the same entropies
    assert again is not first[names[0]] and again.values == first[names[0]].values
    assert sites.get(names[0]).held_terms == sizes[names[0]]
    assert counts["wisdom/snapshots"] == len(names) + 1


SITES = ["a.example", "b.example", "c.example"]


def test_a_site_is_offered_when_left_and_again_after_a_read_back() -> None:
    """The crawl's page count decides when a site is left: each stage is offered it once its
    horizon of other sites' pages has passed; a site whose pages come back doubles it; a
    stage's read-back (a waiting page, an analysis at idle) arms the site again, whether it
    was let go or kept (a part that could not go yet)."""
    sites = Sites(None, horizon=2)
    offered: list[tuple[str, int]] = []
    answer = {"a": False}

    class Stage:
        """A stage that lets go of its part of a site when ``answer`` says so."""

        def let_go(self, context: SiteContext) -> bool:
            offered.append((context.site, sites._fed))
            return answer.get(context.site, True)

    stages = (Stage(),)
    for site in ["a", "b", "b", "b"]:
        sites.fed(site, stages)
    assert offered == [("a", 3)] and not sites.get("a").left  # kept: nothing let go
    sites.read_back("a")  # read back (or kept) by a stage: armed again
    sites.fed("b", stages)
    sites.fed("b", stages)
    assert offered == [("a", 3), ("a", 6)]
    answer["a"] = True
    sites.read_back("a")
    for site in ["b", "b", "a"]:
        sites.fed(site, stages)
    assert offered[-1] == ("a", 8) and sites.get("a").horizon == 4  # left, then back
    assert ("b", 8) not in offered
    # never left (horizon 0), a site's part can still need a read-back (a page that came back
    # changed): a failed one is tried again from the crawl's next page
    kept = Sites(None, horizon=0)
    kept.read_failed("a")
    assert not kept.may_read("a")
    kept.fed("b", ())
    assert kept.may_read("a")


def test_the_pages_fed_are_counted_on_each_site_object() -> None:
    """Each site's fed pages live on its context; the most fed come first, the first fed first
    among equals (as the progress line lists them), and a site only looked up is not fed."""
    sites = Sites(None)
    sites.get("z")  # a stage's look-up: no page fed
    for site in ["b", "a", "a", "c", "b", "z"]:
        sites.feeding(site)
    assert [(c.site, c.fed_pages) for c in sites.most_fed(3)] == [("b", 2), ("a", 2), ("c", 1)]
    assert [c.site for c in sites.most_fed(9)] == ["b", "a", "c", "z"]
    assert sites.n_fed == 4 and sites.get("q").fed_pages == 0


class _BroadCrawl:
    """The steps the crawl's middlewares and pipeline take for each page of a broad crawl,
    with the sites' parts let go after ``horizon`` pages (0: never): the items, the template
    mask of every page and the counts."""

    def __init__(self, site_dir: Path, store: Any, horizon: int,
                 keep_shingles: bool = False) -> None:
        self.site_dir, self.store = site_dir, store
        self.counts: Counter[str] = Counter()
        self.sites = Sites(store, count=self._count, horizon=horizon)
        self.extractor = Extractor(store, ExtractionParams(warmup_pages=3, until_template=False),
                                   analyze_page, sites=self.sites, count=self._count)
        self.tracker = StructureTracker(store, sites=self.sites, min_pages=3,
                                        count=lambda name, n: self.counts.update({name: n}),
                                        keep_shingles=keep_shingles)
        self.items: list[Any] = []
        self.seen: dict[str, Any] = {}

    def _count(self, name: str) -> None:
        self.counts[name] += 1

    def page(self, site: str, path: str, *, stored: bool = True) -> None:
        """Fetch ``path`` of ``site`` (``stored``: fed, else the store failed)."""
        model = _model(self.site_dir, path)
        if stored:
            feed_model(self.store, model, site=site)
        record = self.tracker.observe(site, model.url, model)
        mask = self.tracker.state(site).recorder.template_mask(record)
        self.seen[f"{site} {model.url}"] = mask.tolist()
        self.items += _items(self.extractor, _fetched(self.extractor, site, model.url, model))
        self.items += _items(self.extractor, _submit(self.extractor, site, model.url, model))
        self.sites.fed(site, (self.extractor, self.tracker))


def _interleaved_replay(
    site_dir: Path, paths: list[str], store_path: Path, horizon: int,
    keep_shingles: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any], Counter[str], Sites]:
    """Three sites (the demo site's pages under three names) crawled in turns of five pages,
    with a real SQLite store, then as many pages of a fourth: the items, the template masks of
    every page, each site's structure item at the end, and the counts."""
    store = open_store(f"sqlite:///{store_path}")
    crawl = _BroadCrawl(site_dir, store, horizon, keep_shingles)
    for turn in range(0, len(paths), 5):
        for site in SITES:
            for path in paths[turn : turn + 5]:
                crawl.page(site, path)
    crawl.items += _items(crawl.extractor, _flush(crawl.extractor))
    for path in paths:
        crawl.page("d.example", path)
    for item in crawl.tracker.structure_items(only_changed=False):
        crawl.seen[item.site] = dataclasses.asdict(item)
    store.close()
    items = [dataclasses.asdict(item) for item in crawl.items]
    return items, crawl.seen, crawl.counts, crawl.sites


def test_sites_the_crawl_left_let_go_of_their_counts_and_read_them_back_equal(
    demo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A broad crawl holds the counts of the sites it is crawling: a site none of whose pages
    came in the last ``horizon`` lets go of its link statistics and block repetition (the
    store holds every page they count) and reads them back when its pages come back, its
    horizon doubled. The items, the template masks and the link analyses are those of a crawl
    that kept every count."""
    site_dir, truth = demo
    paths = sorted(truth)[:20]
    kept, kept_seen, kept_counts, _ = _interleaved_replay(site_dir, paths, tmp_path / "k.db", 0)
    items, seen, counts, sites = _interleaved_replay(site_dir, paths, tmp_path / "i.db", 2)
    assert kept_counts["wisdom/sites/left"] == 0
    # 10 pages of the others between a site's turns: left at horizons 2, 4 and 8, not 16
    assert counts["wisdom/sites/left"] == counts["wisdom/sites/back"] + 3 == 3 * 3 + 3, counts
    assert counts["wisdom/structure/read_back"] >= 3 * 3, counts
    assert counts["wisdom/repetition/read_back"] >= 3, counts
    assert counts["wisdom/structure/let_go"] == counts["wisdom/sites/left"] + 3  # at close
    assert counts["wisdom/repetition/let_go"] >= counts["wisdom/repetition/read_back"]
    assert [sites.get(site).horizon for site in SITES] == [16, 16, 16]
    # at the end, the fourth site's pages leave the three: what the analyses at close read
    # back is let go again
    for site in SITES:
        context = sites.get(site)
        links, waits = LINKS.of(context), WAITS.of(context)
        assert context.left and links is not None and waits is not None
        assert links.recorder.counts_let_go and not len(links.recorder.pair_pages)
        assert waits.repetition_let_go and not waits.repetition.n_pages
    assert [item["url"] for item in items] == [item["url"] for item in kept]
    assert len(items) >= 3 * len(paths) and items == kept
    assert seen.keys() == kept_seen.keys() and seen == kept_seen


def test_shingle_counts_counted_by_each_analysis_give_the_same_items(
    demo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A tracker keeps no shingle counts (what a site kept most of per page): each analysis
    counts them from the records it reads. The items, template masks and structure items of a
    broad crawl, its sites left and read back, are those of a tracker that keeps them."""
    site_dir, truth = demo
    paths = sorted(truth)[:20]
    kept, kept_seen, _, _ = _interleaved_replay(site_dir, paths, tmp_path / "k.db", 2,
                                                keep_shingles=True)  # fmt: skip
    items, seen, counts, sites = _interleaved_replay(site_dir, paths, tmp_path / "c.db", 2)
    assert counts["wisdom/structure/read_back"] >= 3, counts
    assert all(LINKS.of(sites.get(site)).recorder.shingle_pages is None for site in SITES)
    assert len(items) >= 3 * len(paths) and items == kept
    assert seen == kept_seen


def test_a_page_recorded_again_keeps_its_first_shingles_counted(demo, tmp_path):
    """Before a page is recorded again, the tracker counts the shingles from the stored
    records and keeps them (the first record's count stays, the store keeps the last): the
    counts and the analysis (copied shares included, with TOCs copying from three or more
    pages) are those of a tracker that kept them from the start."""
    site_dir, truth = demo
    paths = sorted(truth)[:30]
    words = " ".join(f"word{chr(97 + k % 26)}{chr(97 + k // 26)}" for k in range(120))
    got = []
    for keep in (True, False):
        store = open_store(f"sqlite:///{tmp_path / f'{keep}.db'}")
        tracker = StructureTracker(store, min_pages=3, keep_shingles=keep)
        for path in paths:
            model = _model(site_dir, path)
            feed_model(store, model, site=SITE)
            tracker.observe(SITE, model.url, model)
        before = tracker.analyse(SITE)
        html = (site_dir / paths[0].lstrip("/")).read_text()
        again = PageModel.from_html(html.replace("</body>", f"<p>{words}</p></body>"),
                                    BASE + paths[0].lstrip("/"))  # fmt: skip
        tracker.observe(SITE, again.url, again)
        recorder = tracker.state(SITE).recorder
        assert recorder.shingle_pages is not None
        got.append((before, tracker.analyse(SITE), dict(recorder.shingle_pages)))
        store.close()
    (kept_before, kept_after, kept_counts), (before, after, counts) = got
    assert counts == kept_counts and (kept_before.copied_share > 0).any()
    for want, analysis in ((kept_before, before), (kept_after, after)):
        assert analysis.urls == want.urls and analysis.roles == want.roles
        for name in ("hub", "authority", "copied_share", "link_mass", "content_mass"):
            assert np.array_equal(getattr(analysis, name), getattr(want, name),
                                  equal_nan=True), name


def test_a_site_lets_go_only_of_counts_the_store_holds(
    demo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A site whose counts the store could not give back equal keeps them: a page the block
    repetition counted but the store lacks, a page recorded twice (the store holds its last
    record only). A page waiting for its analysis keeps nothing: the analysis reads the
    repetition back when it starts."""
    site_dir, truth = demo
    store = open_store(f"sqlite:///{tmp_path / 'w.db'}")
    counts: Counter[str] = Counter()
    sites = Sites(store, count=lambda name: counts.update([name]), horizon=1)
    extractor = Extractor(store, ExtractionParams(warmup_pages=100, until_template=False),
                          analyze_page, sites=sites, count=lambda name: counts.update([name]))
    tracker = StructureTracker(store, sites=sites)
    paths = sorted(truth)[:4]
    for site in SITES:
        for path in paths[:3]:
            model = _model(site_dir, path)
            feed_model(store, model, site=site)
            tracker.observe(site, model.url, model)
            extractor.page_fetched(site, model.url, model)
    unstored = _model(site_dir, paths[3])
    extractor.page_fetched("a.example", unstored.url, unstored)  # counted, never stored
    again = _model(site_dir, paths[0])
    tracker.observe("b.example", again.url, again)  # recorded twice
    held = _model(site_dir, paths[1])
    assert _submit(extractor, "c.example", held.url, held) == []  # held: warm-up
    for site in [*SITES, "d.example", "d.example"]:
        sites.fed(site, (extractor, tracker))
    assert counts["wisdom/sites/left"] == 3  # a and b let go of one part only
    a, b, c = (sites.get(site) for site in SITES)
    assert WAITS.of(a) and not WAITS.of(a).repetition_let_go
    assert LINKS.of(a) and LINKS.of(a).recorder.counts_let_go
    assert LINKS.of(b) and not LINKS.of(b).recorder.counts_let_go
    assert WAITS.of(b) and WAITS.of(b).repetition_let_go
    assert WAITS.of(c) and WAITS.of(c).repetition_let_go and WAITS.of(c).held
    assert LINKS.of(c) and LINKS.of(c).recorder.counts_let_go
    (item,) = _items(extractor, _flush(extractor))
    assert item.url == held.url and not WAITS.of(c).repetition_let_go
    assert counts["wisdom/repetition/read_back"] == 1


def test_pages_that_waited_read_a_left_site_back_and_it_lets_go_again(
    demo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Sites crawled one after the other, with few pages allowed to wait: the TOC pages of a
    site the crawl has left are analysed when later sites' pages push them out, and read its
    repetition back for that; the site then lets it go again after its horizon, as if its
    pages had come back. Only the last sites' counts stay."""
    site_dir, truth = demo
    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    counts: Counter[str] = Counter()
    sites = Sites(store, count=lambda name: counts.update([name]), horizon=3)
    extractor = Extractor(
        store, ExtractionParams(warmup_pages=3, until_template=False, max_held_pages=4),
        analyze_page, sites=sites, count=lambda name: counts.update([name]))  # fmt: skip
    names = [f"s{k}.example" for k in range(6)]
    for site in names:
        for path in sorted(truth)[:5]:
            model = _model(site_dir, path)
            feed_model(store, model, site=site)
            _items(extractor, _fetched(extractor, site, model.url, model))
            _items(extractor, _submit(extractor, site, model.url, model))
            sites.fed(site, (extractor,))
    assert counts["wisdom/held/released_early"] >= 4, counts  # TOC pages pushed out
    assert counts["wisdom/repetition/read_back"] >= 2, counts
    assert counts["wisdom/repetition/let_go"] > len(names) - 1, counts  # some again
    kept = [site for site in names if not WAITS.of(sites.get(site)).repetition_let_go]
    # the last site, and the one before it when the last site's pages pushed out one of its
    # TOC pages (waiting for its entries' targets) and read its repetition back just now
    assert names[-1] in kept and set(kept) <= set(names[-2:]), kept


def _store_down_on_return(
    site_dir: Path, paths: list[str], server: Any, horizon: int
) -> tuple[Counter[str], list[Any], list[dict[int, int]]]:
    """Two sites in turn, then the first again with the Redis ``server`` stopped for one
    page (not fed), then started: the counts, the items and the first site's counts tables.
    One retry per call: it fails fast while the server is down, and survives the connection
    the restart broke."""
    store = RedisStore(server.url, retries=1)
    crawl = _BroadCrawl(site_dir, store, horizon)
    for site in SITES[:2]:
        for path in paths[:6]:
            crawl.page(site, path)
    server.stop()
    crawl.page(SITES[0], paths[6], stored=False)  # back to a site it left: the store is down
    server.start()
    for path in paths[7:]:
        crawl.page(SITES[0], path)
    crawl.items += _items(crawl.extractor, _flush(crawl.extractor))
    recorder = crawl.tracker.state(SITES[0]).recorder
    waits = WAITS.of(crawl.sites.get(SITES[0]))
    assert waits is not None
    tables = [dict(recorder.slot_pages), dict(recorder.pair_pages),
              _shingle_counts(crawl.tracker, SITES[0]), dict(waits.repetition._counts)]
    store.close()
    return crawl.counts, crawl.items, tables


def _shingle_counts(tracker: StructureTracker, site: str) -> dict[int, int]:
    """The site's shingle counts: kept by its recorder, or those its next analysis counts
    from the records."""
    kept = tracker.state(site).recorder.shingle_pages
    if kept is not None:
        return dict(kept)
    records = tracker.records(site)
    return dict(Counter(int(k) for url in records for k in records[url].shingles))


def test_a_left_site_whose_store_fails_records_its_pages_and_reads_them_back_later(
    demo: tuple[Path, dict[str, Any]], redis_server_factory: Any
) -> None:
    """The store (Redis) is stopped when the crawl comes back to a site it has left: the page
    is recorded and counted all the same (the read-back fails, counted), no step raises, and
    once the store is back the site's counts and items equal a crawl's that kept them."""
    site_dir, truth = demo
    paths = sorted(truth)[:14]
    _, kept, kept_tables = _store_down_on_return(
        site_dir, paths, redis_server_factory("--appendonly", "yes"), 0)
    counts, items, tables = _store_down_on_return(
        site_dir, paths, redis_server_factory("--appendonly", "yes"), 2)
    assert counts["wisdom/sites/left"] >= 1 and counts["wisdom/sites/back"] >= 1, counts
    assert counts["wisdom/store_errors"] >= 2, counts  # the record and a read-back, at least
    assert counts["wisdom/structure/read_back"] >= 1, counts
    assert tables == kept_tables
    assert [item.url for item in items] == [item.url for item in kept] and items == kept


class _ChangingSite:
    """Six demo articles fed to an extractor over a SQLite store, then pages of it fetched
    again as other articles (``version``: an index into :attr:`paths`)."""

    def __init__(self, demo: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
        self.site_dir, truth = demo
        self.paths = sorted(p for p, page in truth.items() if page["role"] == "article")[:10]
        self.store = open_store(f"sqlite:///{tmp_path / 'w.db'}")
        self.counts: Counter[str] = Counter()
        self.extractor = Extractor(self.store, ExtractionParams(warmup_pages=4), analyze_page,
                                   lambda name, n=1: self.counts.update({name: n}))
        #: each page's latest version, by URL
        self.latest = {BASE + p.lstrip("/"): _model(self.site_dir, p) for p in self.paths[:6]}
        for model in self.latest.values():
            feed_model(self.store, model, site=SITE)
            self.extractor.page_fetched(SITE, model.url, model)

    def version(self, url: str, version: int) -> PageModel:
        html = (self.site_dir / self.paths[version].lstrip("/")).read_bytes()
        return PageModel.from_html(html, url)

    def assert_counted_once(self, *others: PageModel) -> None:
        """The site's repetition counts each page once, in its latest version (looked up with
        those and ``others``)."""
        repetition = WAITS.of(self.extractor.sites.get(SITE)).repetition
        fetched_once = BlockRepetition()
        for model in self.latest.values():
            fetched_once.add(model.url, model)
        assert repetition.n_pages == fetched_once.n_pages == len(self.latest)
        for model in [*self.latest.values(), *others]:
            assert repetition.pages_of(model).tolist() == fetched_once.pages_of(model).tolist()


def test_a_page_fetched_again_with_other_blocks_takes_its_earlier_ones_back(
    demo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """The block repetition keeps a digest of a page's blocks, not the blocks. A page that
    comes back with other blocks has its earlier ones read from the store (one record) before
    its new ones are stored, and taken back; when the store holds another version (another
    process'), the site is counted again from the store, and that page's blocks are kept,
    through later counts, to be taken back in memory. Either way the counts are those of each
    page fetched once in its latest version."""
    site = _ChangingSite(demo, tmp_path)
    extractor, store = site.extractor, site.store
    first, second, third = list(site.latest)[:3]
    # (page, the HTML it comes back with, whether its counted blocks are still stored)
    steps = [(first, 6, True), (first, 7, True), (second, 8, False), (third, 9, False),
             (second, 6, False)]
    for url, version, stored in steps:
        again = site.version(url, version)
        if not stored:
            feed_model(store, again, site=SITE)
        extractor.page_storing(SITE, url, page_blocks(again))
        if stored:
            feed_model(store, again, site=SITE)
        extractor.page_fetched(SITE, url, again)
        _submit(extractor, SITE, url, again)  # its analysis reads the repetition back
        site.latest[url] = again
        site.assert_counted_once()
    # counted again for the second and third pages' first changes only: the second's blocks,
    # kept, went through the third's count
    assert (site.counts["wisdom/repetition/counted_again"],
            site.counts["wisdom/repetition/read_back"]) == (2, 2)  # fmt: skip
    store.close()


def test_a_page_whose_earlier_version_waits_for_a_retry_takes_its_blocks_back(
    demo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """The store failed to take a page's changed version (its write waits for a retry, which
    the next version replaces): the next version takes that one's blocks back from the
    retried update, where the store holds an older version, and the site is not counted
    again."""
    site = _ChangingSite(demo, tmp_path)
    extractor = site.extractor
    url = next(iter(site.latest))
    original, failed, retried = site.latest[url], site.version(url, 6), site.version(url, 7)
    extractor.page_storing(SITE, url, page_blocks(failed))  # its write fails: not stored
    extractor.page_fetched(SITE, url, failed)
    extractor.page_storing(SITE, url, page_blocks(retried), page_blocks(failed))
    feed_model(site.store, retried, site=SITE)
    extractor.page_fetched(SITE, url, retried)
    site.latest[url] = retried
    assert "wisdom/repetition/counted_again" not in site.counts
    site.assert_counted_once(original, failed)
    site.store.close()


def test_a_page_fetched_again_once_its_site_was_left_keeps_its_first_counts(
    demo: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A page of a left site is fetched again with a new link: its first record's counts
    stay, as in a crawl that kept the site's counts (the store holds its new record)."""
    site_dir, truth = demo
    paths = sorted(truth)[:6]
    tables = []
    for horizon in (0, 1):
        store = open_store(f"sqlite:///{tmp_path / f'{horizon}.db'}")
        sites = Sites(store, horizon=horizon)
        tracker = StructureTracker(store, sites=sites, min_pages=3)
        for site in SITES[:2]:
            for path in paths:
                model = _model(site_dir, path)
                tracker.observe(site, model.url, model)
                sites.fed(site, (tracker,))
        assert sites.get(SITES[0]).left == bool(horizon)
        html = (site_dir / paths[0].lstrip("/")).read_text()
        again = PageModel.from_html(html.replace("</body>", '<a href="/new.html">New</a></body>'),
                                    BASE + paths[0].lstrip("/"))  # fmt: skip
        tracker.observe(SITES[0], again.url, again)
        recorder = tracker.state(SITES[0]).recorder
        tables.append([dict(recorder.slot_pages), dict(recorder.pair_pages),
                       dict(recorder.shingle_pages)])
        store.close()
    assert tables[0] == tables[1]
