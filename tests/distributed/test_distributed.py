"""Several real Scrapy workers on one scrapy-redis frontier and one Redis store (issue 7).

The demo news site is served on 127.0.0.1 and crawled three ways with the ``site`` spider: by one
process (the reference), by two workers at once, and by two workers one of which is killed with
SIGKILL mid-crawl and restarted. Every crawl keeps every link (``WISDOM_FOCUS =
"deprioritize"``: with ``"drop"`` the set of pages would depend on the order pages arrive in,
which differs between any two crawls), so all three must end with the same store: the same pages,
link graph and term-entropy table, and the same page roles and sitemap from the one site-level
analysis (done by one worker, the finaliser).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from sample_project.demo_site import build_demo_site
from tests.distributed.workers import Worker, distributed_settings, start_worker
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store import open_store
from wisdom_scrapy.testing import StaticServer

pytestmark = pytest.mark.crawl

COMMON = {"WISDOM_FOCUS": "deprioritize"}
# The killed worker's requests are crawled again this long after its last heartbeat. A live worker
# starved of CPU that long would count as dead too (its requests fetched twice, harmless to the
# store): the two-worker test, which forbids double fetches, keeps the default (60 s).
KILL_TIMEOUT = 10


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start URL of the demo site, served for the whole module."""
    server = StaticServer(build_demo_site(tmp_path_factory.mktemp("demo")))
    server.start()
    try:
        yield server.url + "index.html"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def reference(
    site_url: str, redis_server: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """One process crawling the whole site into its own store (prefix ``single``)."""
    out = tmp_path_factory.mktemp("single")
    uri = f"{redis_server}?prefix=single"
    settings = {**COMMON, "WISDOM_STORE_URI": uri, "WISDOM_SITEMAP_URI": str(out / "sitemap")}
    worker = start_worker("site", out, "single", args={"url": site_url}, settings=settings)
    result = worker.wait()
    assert result.returncode == 0, result.log[-3000:]
    fetched = worker.fetched()
    assert len(fetched) == len(set(fetched)) > 500
    return {"fetched": set(fetched), "store": store_tables(uri, site_url),
            "site_level": site_level([result.items]),
            "sitemap_json": (out / "sitemap.json").read_text()}


def store_tables(uri: str, site_url: str) -> dict[str, Any]:
    """A site's pages, link graph and term table (TF, S, entropy) as the store has them."""
    site = host_key(site_url)
    with open_store(uri) as store:
        terms, tf, s = store.all_term_sums(site)
        snapshot = store.snapshot(site)
        links = store.links(site)
    return {
        "pages": snapshot.n_pages,
        "links": {url: sorted(out) for url, out in links.items()},
        "tf": dict(zip(terms, tf.tolist(), strict=True)),
        "s": dict(zip(terms, s.tolist(), strict=True)),
        "entropy": dict(snapshot.values),
    }


def assert_same_store(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["pages"] == want["pages"]
    assert got["links"] == want["links"]
    assert got["tf"] == want["tf"]  # integer sums: exact
    assert got["s"].keys() == want["s"].keys()
    for table in ("s", "entropy"):
        worst = max(abs(got[table][t] - want[table][t]) for t in want[table])
        assert worst <= 1e-9, f"{table} differs by {worst}"


def site_level(item_lists: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """What the crawl's site-level end work produced: page roles and TOC → articles of its last
    SiteStructureItem and the tree of its last SitemapItem, asserting that each came from one
    process only."""
    out: dict[str, Any] = {}
    for name, key in (("structure", "tocs"), ("sitemap", "tree")):
        emitting = [items for items in item_lists if any(key in i for i in items)]
        assert len(emitting) == 1, f"{len(emitting)} processes emitted {name} items"
        out[name] = [i for i in emitting[0] if key in i][-1]
    structure, sitemap = out["structure"], out["sitemap"]
    return {
        "roles": structure["roles"],
        "tocs": {t["url"]: sorted(t["articles"]) for t in structure["tocs"]},
        "articles": sorted(a["url"] for a in structure["articles"]),
        "sitemap": {k: sitemap[k] for k in ("url", "title", "tree", "entries", "pages")},
    }


def wait_for(condition: Any, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def frontier_url(redis_uri: str) -> str:
    """The frontier's database (1) on the store's server (database 0)."""
    return redis_uri.rsplit("/", 1)[0] + "/1"


def worker_settings(redis_uri: str, out: Path, **extra: Any) -> dict[str, Any]:
    """Settings of every worker: one frontier, one store, one sitemap path (the finaliser alone
    writes it)."""
    return distributed_settings(
        frontier_url(redis_uri), f"{redis_uri}?prefix=dist", **COMMON,
        WISDOM_SITEMAP_URI=str(out / "sitemap"), **extra,
    )


def start_workers(
    names: list[str], out: Path, site_url: str, redis_uri: str, **extra: Any
) -> list[Worker]:
    with redis.Redis.from_url(frontier_url(redis_uri)) as client:
        client.flushdb()
    return [start_worker("site", out, n, args={"url": site_url},
                         settings=worker_settings(redis_uri, out, **extra)) for n in names]


def finish(workers: list[Worker]) -> list[dict[str, Any]]:
    results = [w.wait() for w in workers]
    for w, r in zip(workers, results, strict=True):
        assert r.returncode == 0, f"{w.name}: {r.log[-3000:]}"
    return [r.__dict__ for r in results]


def test_two_workers_crawl_the_site_once(
    site_url: str, redis_uri: str, reference: dict[str, Any], tmp_path: Path
) -> None:
    workers = start_workers(["w0", "w1"], tmp_path, site_url, redis_uri)
    results = finish(workers)
    fetched = [w.fetched() for w in workers]
    everything = [url for urls in fetched for url in urls]
    assert len(everything) == len(set(everything)), "a page was fetched twice"
    assert set(everything) == reference["fetched"]
    assert all(len(urls) > 50 for urls in fetched), [len(urls) for urls in fetched]
    assert_same_store(store_tables(f"{redis_uri}?prefix=dist", site_url), reference["store"])
    assert site_level([r["items"] for r in results]) == reference["site_level"]
    assert (tmp_path / "sitemap.json").read_text() == reference["sitemap_json"]
    # the shared frontier is gone once the last worker closed (SCHEDULER_PERSIST is off)
    with redis.Redis.from_url(frontier_url(redis_uri)) as client:
        assert client.keys("site:*") == []


def test_killed_worker_restarts_and_the_store_is_complete(
    site_url: str, redis_uri: str, reference: dict[str, Any], tmp_path: Path
) -> None:
    workers = start_workers(["w0", "w1"], tmp_path, site_url, redis_uri,
                            WISDOM_WORKER_TIMEOUT=KILL_TIMEOUT)
    victim = workers[1]
    frontier = redis.Redis.from_url(frontier_url(redis_uri))

    def victim_busy() -> bool:  # mid-crawl, with requests in flight
        if len(victim.fetched()) < 100:
            return False
        keys = frontier.keys("site:requests:inflight:*")
        mine = [k for k in keys if f":{victim.process.pid}:".encode() in k]
        return bool(mine) and frontier.zcard(mine[0]) > 0

    wait_for(victim_busy, "worker w1 to be mid-crawl")
    victim.kill()
    frontier.close()
    restarted = start_worker("site", tmp_path, "w1-restarted", args={"url": site_url},
                             settings=worker_settings(
                                 redis_uri, tmp_path, WISDOM_WORKER_TIMEOUT=KILL_TIMEOUT))
    results = finish([workers[0], restarted])
    fetched = [url for w in (*workers, restarted) for url in w.fetched()]
    assert set(fetched) == reference["fetched"]
    recovered = sum(r["stats"].get("wisdom/distributed/recovered", 0) for r in results)
    assert recovered > 0, "the killed worker's in-flight requests were not put back"
    assert_same_store(store_tables(f"{redis_uri}?prefix=dist", site_url), reference["store"])
    assert site_level([r["items"] for r in results]) == reference["site_level"]
    assert (tmp_path / "sitemap.json").read_text() == reference["sitemap_json"]


def test_a_page_leaves_the_in_flight_set_only_once_its_links_are_queued(
    redis_uri: str, tmp_path: Path
) -> None:
    """A worker killed right after a page left its in-flight set must not lose the page's links
    (they are fetched again by nobody: the page is done, its URL dupe-filtered). Scrapy keeps a
    response's output in a queue of its own and schedules the requests from there; an item
    waiting for a slow pipeline holds them there, so they must be scheduled before the page
    leaves the in-flight set."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        '<html><body><a href="a.html">A</a> <a href="b.html">B</a></body></html>')
    for name in ("a", "b"):
        (site / f"{name}.html").write_text(f"<html><body><p>Page {name}.</p></body></html>")
    frontier = redis.Redis.from_url(frontier_url(redis_uri))
    frontier.flushdb()
    settings = distributed_settings(
        frontier_url(redis_uri), f"{redis_uri}?prefix=stall", ADDONS={},
        SPIDER_MIDDLEWARES={"wisdom_scrapy.distributed.DistributedMiddleware": 5},
        ITEM_PIPELINES={"tests.distributed.workers.StallingPipeline": 100},
        CONCURRENT_ITEMS=1, TEST_STALL_SECONDS=600,
    )
    with StaticServer(site) as server:
        base = server.url
        start = base + "index.html"
        worker = start_worker("site", tmp_path, "stalled", args={"url": start}, settings=settings)

        def settled() -> bool:  # the start page fetched, nothing queued or in flight
            if start not in worker.fetched() or frontier.zcard("site:requests"):
                return False
            return not any(frontier.zcard(k) for k in frontier.keys("site:requests:inflight:*"))

        try:
            wait_for(settled, "the start page to be done")
        finally:
            worker.kill()
        # in flight counts as kept too: a dead worker's in-flight requests are put back
        queued = [data for key in ["site:requests", *frontier.keys("site:requests:inflight:*")]
                  for data in frontier.zrange(key, 0, -1)]
    frontier.close()
    for name in ("a", "b"):
        url = base + f"{name}.html"
        assert url in worker.fetched() or any(url.encode() in data for data in queued), (
            f"{url} was lost with the killed worker")
