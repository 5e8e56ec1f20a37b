"""Page analyses in worker processes (``WISDOM_WORKERS``) make the items the crawl process makes:
the same pages replayed in one order through an extractor analysing here and one analysing in
real worker processes, on the demo site and on the Python documentation, give identical items
(every heavy field) and identical site-report observations; a worker killed mid-replay changes
nothing but the stats."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sample_project.demo_site import build_demo_site
from wisdom_scrapy import open_store
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.offload import WORKER_SNAPSHOT_SITES, RemoteAnalyzer, analyse_job
from wisdom_scrapy.engine.waits import ExtractionParams, Extractor, PageSource, TermIndex
from wisdom_scrapy.engine.worker_pool import (
    MAX_START_FAILURES,
    WARM_UP,
    WorkerHung,
    WorkerLost,
    WorkerPool,
    default_workers,
)
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.items import HEAVY_FIELDS
from wisdom_scrapy.report import SiteReportData

from .conftest import PYTHON_DOC

SITE = "site.test"


def _sources(root: Path, base: str, paths: list[str]) -> list[PageSource]:
    return [PageSource(base + p, (root / p).read_bytes().decode("utf-8"), base + p) for p in paths]


@pytest.fixture(scope="module")
def demo_pages(tmp_path_factory: pytest.TempPathFactory) -> list[PageSource]:
    root = build_demo_site(tmp_path_factory.mktemp("demo"))
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    return _sources(root, "http://demo.test/", paths)


@pytest.fixture(scope="module")
def pydoc_pages() -> list[PageSource]:
    """The library index and its first chapters' pages, index pages first: TOC pages wait for
    their targets and are completed by later pages."""
    library = PYTHON_DOC / "library"
    if not library.is_dir():
        pytest.fail(f"{PYTHON_DOC} is missing: apt-get install python3.11-doc", pytrace=False)
    first = ["index.html", "text.html", "datatypes.html", "numeric.html"]
    rest = sorted(p.name for p in library.glob("*.html") if p.name not in first)[:90]
    return _sources(library, "https://docs.python.org/3.11/library/", first + rest)


class _Observing:
    """The extractor's listener as a crawl's site report is one (the signal's only receiver)."""

    def __init__(self, report: SiteReportData) -> None:
        self.report = report

    def listening(self) -> bool:
        return True

    def __call__(self, site: str, analysis: Any) -> None:
        self.report.observe(analysis)


def _replay(
    pages: list[PageSource], workers: int, kill_after: int | None = None, *,
    until_template: bool = True, in_flight: bool = False, handler: Any = analyse_job,
    warmup: int = 12, site_of: Callable[[int], str] = lambda n: SITE, feed_first: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, list[Any]], Counter[str]]:
    """The items and report observations of ``pages`` fed and submitted in order, as the
    crawl's middleware and pipeline do; analysed in ``workers`` processes (0: here). The
    counts include ``calls/N``: the calls worker N got. Without ``until_template`` the first
    12 pages are held, then analysed together. Worker 0 is killed before page ``kill_after``;
    ``in_flight``: stopped then, and killed a second later, with the page's analyses sent to
    it (those of all 12 held pages when that page releases them). Page ``n`` is a page of
    site ``site_of(n)``, each site holding its first ``warmup`` pages. ``feed_first``: the
    k-th site's store knows pages ``k:`` before (each site warm, with entropies of its own)."""
    counts: Counter[str] = Counter()

    async def run() -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
        store = open_store("memory://")
        params = ExtractionParams(warmup_pages=warmup, until_template=until_template,
                                  max_pending_tocs=3, item_fields=HEAVY_FIELDS)  # fmt: skip
        def count(name: str) -> None:
            counts[name] += 1

        terms = TermIndex()
        pool = WorkerPool(workers, handler) if workers else None
        remote = (RemoteAnalyzer(pool, terms, analyze_page, HEAVY_FIELDS, count=count)
                  if pool is not None else None)  # fmt: skip
        report = SiteReportData(SITE)  # as the site report observes the analyses
        extractor = Extractor(store, params, analyze_page, count=count, remote=remote,
                              terms=terms, listener=_Observing(report))  # fmt: skip
        items = []
        if feed_first:
            models = [source() for source in pages]
            for k, site in enumerate(dict.fromkeys(map(site_of, range(len(pages))))):
                for model in models[k:]:
                    feed_model(store, model, site=site)
        try:
            for n, source in enumerate(pages):
                if pool is not None and n == kill_after:
                    pool.pick()  # started, should no page have been analysed yet
                    pid = pool._workers[0].process.pid
                    if in_flight:
                        os.kill(pid, signal.SIGSTOP)
                        threading.Timer(1.0, os.kill, (pid, signal.SIGKILL)).start()
                    else:
                        os.kill(pid, signal.SIGKILL)
                model, site = source(), site_of(n)
                feed_model(store, model, site=site)
                extractor.page_fetched(site, source.url, model)
                ready = await extractor.finish_completed()
                ready += await extractor.submit(site, source.url, model, source=source)
                items += [await extractor.item(page) for page in ready]
            items += [await extractor.item(page) for page in await extractor.flush()]
        finally:
            if pool is not None:
                pool.close()
                counts.update({f"calls/{i}": n for i, n in enumerate(pool.calls)})
                counts["restarts"] = pool.restarts
        return [dataclasses.asdict(item) for item in items], report.redundant

    items, redundant = asyncio.run(run())
    return items, redundant, counts


@pytest.mark.parametrize(
    ("fixture", "until_template"), [("demo_pages", False), ("pydoc_pages", True)]
)
@pytest.mark.crawl
def test_workers_make_the_items_made_here(
    fixture: str, until_template: bool, request: pytest.FixtureRequest
) -> None:
    pages = request.getfixturevalue(fixture)
    here, observed_here, counts_here = _replay(pages, workers=0, until_template=until_template)
    remote, observed_remote, counts = _replay(pages, workers=2, until_template=until_template)
    assert len(here) == len(pages)
    roles = Counter(item["role"] for item in here)
    assert roles["article"] > 10 and roles["toc"] >= 2, roles
    assert counts_here["wisdom/toc/completed"] >= 1, "a TOC page waited for its targets"
    assert [item["url"] for item in remote] == [item["url"] for item in here]
    for mine, theirs in zip(remote, here, strict=True):
        assert mine == theirs, mine["url"]
    assert observed_remote == observed_here  # the site report's redundant blocks
    assert observed_here and all(name for *_, name in observed_here.values())
    analyses = counts["wisdom/workers/analysed"]
    assert analyses >= len(pages) and counts["wisdom/workers/analysed_here"] == 0
    if not until_template:  # the held pages leave together: their analyses go to both workers
        assert min(counts["calls/0"], counts["calls/1"]) >= 5, counts
    assert counts["wisdom/toc/completed"] == counts_here["wisdom/toc/completed"]


@pytest.mark.crawl
def test_a_worker_keeps_few_sites_snapshots_and_is_sent_the_others_again(
    pydoc_pages: list[PageSource],
) -> None:
    """A broad crawl: warm sites, each with entropies of its own, analysed in turn, more of
    them than a worker keeps snapshots of. The crawl process knows which ones the worker let
    go, and sends them again: the items are the ones made here."""
    sites = WORKER_SNAPSHOT_SITES + 4

    def site_of(n: int) -> str:
        return f"s{n % sites}.example"

    def replay(workers: int) -> tuple[list[dict[str, Any]], Counter[str]]:
        items, _, counts = _replay(pydoc_pages, workers, warmup=1, until_template=False,
                                   site_of=site_of, feed_first=True)  # fmt: skip
        return items, counts

    (here, _), (remote, counts) = replay(0), replay(1)
    assert [item["url"] for item in remote] == [item["url"] for item in here]
    for mine, theirs in zip(remote, here, strict=True):
        assert mine == theirs, mine["url"]
    assert counts["wisdom/workers/analysed"] >= len(pydoc_pages)
    assert counts["wisdom/workers/analysed_here"] == 0
    # a site's snapshot is read once (the store hardly grows), and sent again on each of its
    # pages: the sites analysed since took it out of the worker's list
    assert counts["wisdom/snapshots"] <= 2 * sites < counts["wisdom/workers/snapshots_sent"]


@pytest.mark.crawl
def test_a_killed_worker_costs_time_not_items(demo_pages: list[PageSource]) -> None:
    here, _, _ = _replay(demo_pages, workers=0)
    remote, _, counts = _replay(demo_pages, workers=1, kill_after=len(demo_pages) // 2)
    assert remote == here
    assert counts["wisdom/workers/lost"] >= 1
    assert counts["wisdom/workers/analysed"] >= len(demo_pages) // 2


@pytest.mark.crawl
def test_a_worker_killed_with_many_analyses_in_flight_costs_time_not_items(
    demo_pages: list[PageSource],
) -> None:
    """The 12 held pages are sent to the worker at once, and it dies with all of them: each is
    sent again to the new worker, which must get the site's vocabulary once, in order (the
    later pages' link targets are term ids into it)."""
    here, _, _ = _replay(demo_pages, workers=0, until_template=False)
    remote, _, counts = _replay(demo_pages, workers=1, kill_after=11, until_template=False,
                                in_flight=True)  # fmt: skip
    assert remote == here
    assert counts["wisdom/workers/lost"] >= 12
    assert counts["wisdom/workers/analysed"] >= len(demo_pages)


@pytest.mark.crawl
def test_workers_that_cannot_start_leave_the_analyses_here(
    demo_pages: list[PageSource],
) -> None:
    """A worker that dies before it is ready (here: its handler cannot be found) read no page:
    the pages are analysed in the crawl process, and after MAX_START_FAILURES such workers in a
    row no more are started."""
    pages = demo_pages[:30]
    here, _, _ = _replay(pages, workers=0)
    remote, _, counts = _replay(pages, workers=1, handler=lambda state, job: None)
    assert remote == here
    assert counts["wisdom/workers/analysed_here"] >= len(pages)  # analyses: a TOC page may wait
    assert counts["restarts"] == MAX_START_FAILURES - 1  # then none is started again
    assert counts["wisdom/workers/lost"] >= MAX_START_FAILURES
    assert counts.get("wisdom/workers/analysed", 0) == 0


@pytest.mark.crawl
def test_a_new_worker_warms_up_before_its_first_call() -> None:
    """The handler module's ``warm_up`` runs before the worker says it is ready, so what the
    first call would load lazily (the analysis' stemmer: a second of CPU) does not count
    against a short ``WISDOM_WORKER_TIMEOUT``; the analysis handler's module has one."""
    from tests.warm_handler import was_warmed

    pool = WorkerPool(1, was_warmed)
    try:
        assert pool.call(pool.pick(), None).result(timeout=60) is True
    finally:
        pool.close()
    assert callable(getattr(importlib.import_module(analyse_job.__module__), WARM_UP))


@pytest.mark.crawl
def test_a_worker_exception_reaches_the_caller() -> None:
    pool = WorkerPool(1, analyse_job)
    try:
        future = pool.call(pool.pick(), "not a job")
        with pytest.raises(AttributeError):
            future.result(timeout=60)
        assert pool.call(pool.pick(), "again").exception(timeout=60) is not None
    finally:
        pool.close()
    with pytest.raises(WorkerLost):
        pool.pick()


@pytest.mark.crawl
def test_a_stopped_worker_neither_blocks_nor_hangs_its_caller() -> None:
    """A worker that reads nothing (SIGSTOP: as busy as can be) does not block the caller, even
    with payloads far beyond a socket's buffer; one that answers nothing for the timeout is
    killed: the call it was on fails as hung, the one queued behind as lost, and the next call
    goes to a new worker."""
    pool = WorkerPool(1, analyse_job)
    try:
        index = pool.pick()
        assert isinstance(pool.call(index, "start").exception(timeout=60), AttributeError)
        pool.timeout = 2.0  # short for the stopped worker alone: no test of a live one's speed
        stopped = pool._workers[index].process.pid
        os.kill(stopped, signal.SIGSTOP)
        big = "x" * (8 << 20)
        calls: list[Any] = []
        caller = threading.Thread(target=lambda: calls.extend(pool.call(index, big)
                                                              for _ in range(2)))  # fmt: skip
        caller.start()
        caller.join(30)
        assert not caller.is_alive(), "a call waited for the stopped worker"
        with pytest.raises(WorkerHung):
            calls[0].result(timeout=60)
        assert type(calls[1].exception(timeout=60)) is WorkerLost
        pool.timeout = 60.0
        assert isinstance(pool.call(pool.pick(), "again").exception(timeout=60), AttributeError)
        assert pool.restarts == 1 and pool._workers[index].process.pid != stopped
    finally:
        pool.close()


def test_default_workers_leave_a_core_to_the_crawl() -> None:
    assert [default_workers(n) for n in (1, 2, 4, 16)] == [0, 1, 3, 4]
