"""wisdom_scrapy.distributed.RedisScheduler against a real redis-server, without crawling:
process-local requests, the in-flight set, dead workers, the end of the crawl, the finaliser."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from scrapy import Request, Spider
from scrapy.dupefilters import BaseDupeFilter
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from wisdom_scrapy.addon import Addon
from wisdom_scrapy.distributed import (
    FINALISER,
    FINISHED,
    OTHERS_BUSY,
    WORK_QUEUED,
    DistributedMiddleware,
    RedisScheduler,
)
from wisdom_scrapy.settings import SettingsError, WisdomSettings


class _Spider(Spider):
    name = "t"

    def parse(self, response: Any) -> None:
        return None


@pytest.fixture
def workers(redis_uri: str) -> Iterator[Callable[..., RedisScheduler]]:
    """Opens schedulers (workers) on one frontier in the session's redis-server."""
    opened: list[RedisScheduler] = []

    def open_worker(**settings: Any) -> RedisScheduler:
        crawler = get_crawler(_Spider, settings_dict={
            "REDIS_URL": redis_uri, "WISDOM_STORE_URI": "memory://",
            "WISDOM_WORKER_TIMEOUT": 60, **settings,
        })
        scheduler = RedisScheduler.from_crawler(crawler)
        crawler.stats.open_spider()
        scheduler.open(_Spider.from_crawler(crawler))
        opened.append(scheduler)
        return scheduler

    yield open_worker
    for scheduler in opened:
        if scheduler.heartbeat.running:
            scheduler.heartbeat.stop()


def request(scheduler: RedisScheduler, path: str) -> Request:
    return Request(f"http://127.0.0.1/{path}", callback=scheduler.spider.parse)


def stat(scheduler: RedisScheduler, name: str) -> Any:
    return scheduler.stats.get_value(name)


def test_requests_of_this_process_stay_local(workers: Callable[..., RedisScheduler]) -> None:
    a = workers()
    late = Request("data:,", callback=lambda response: [], dont_filter=True)
    assert a.enqueue_request(late)
    assert len(a.queue) == 0  # not pickled into the shared queue (plain scrapy-redis fails)
    assert a.has_pending_requests()
    assert a.next_request() is late
    assert stat(a, "wisdom/distributed/local_requests") == 1


def test_dupefilter_and_priority_are_shared(workers: Callable[..., RedisScheduler]) -> None:
    a, b = workers(), workers()
    assert a.enqueue_request(request(a, "low"))
    high = request(a, "high")
    high.priority = 50
    assert a.enqueue_request(high)
    assert not b.enqueue_request(request(b, "low"))  # seen by a
    assert b.next_request().url.endswith("/high")
    assert a.next_request().url.endswith("/low")


def test_seen_and_queued_together_and_unfiltered_requests_pass(
    workers: Callable[..., RedisScheduler],
) -> None:
    """A new link is marked seen and queued by one script; a request that is not filtered
    (``dont_filter``) is queued even when its URL was seen, and is not marked seen."""
    a, b = workers(), workers()
    assert a.enqueue_request(request(a, "1"))
    assert a.server.sismember(a.df.key, a.df.request_fingerprint(request(a, "1")))
    again = request(b, "1")
    again.dont_filter, again.priority = True, 5
    assert b.enqueue_request(again)
    assert not b.enqueue_request(request(b, "1"))
    assert len(a.queue) == 2 and a.server.scard(a.df.key) == 1
    assert (stat(a, "scheduler/enqueued/redis"), stat(b, "scheduler/enqueued/redis")) == (1, 1)


def test_done_and_idle_empty_the_in_flight_set(workers: Callable[..., RedisScheduler]) -> None:
    a = workers()
    client = a.server
    for path in ("1", "2"):
        a.enqueue_request(request(a, path))
    first, second = a.next_request(), a.next_request()
    assert client.zcard(a.inflight_key) == 2
    a.done(first)
    assert client.zcard(a.inflight_key) == 1
    assert a.settle() == FINALISER  # idle: everything popped is done, nobody else is busy
    assert client.zcard(a.inflight_key) == 0
    assert second is not None


def test_a_dead_workers_requests_go_back_to_the_queue(
    workers: Callable[..., RedisScheduler],
) -> None:
    a, b = workers(), workers()
    for path in ("1", "2", "3"):
        a.enqueue_request(request(a, path))
    b.settle()
    popped = {a.next_request().url, a.next_request().url}
    assert len(b.queue) == 1
    assert b.settle() == WORK_QUEUED
    # a dies: its heartbeat stops and its key expires
    a.heartbeat.stop()
    a.server.delete(f"{a.base}:alive:{a.worker}")
    assert b.settle() == WORK_QUEUED
    assert stat(b, "wisdom/distributed/recovered") == 2
    assert len(b.queue) == 3
    got = {b.next_request().url for _ in range(3)}
    assert popped < got
    assert b.settle() == FINALISER  # a is gone from the busy workers


def test_a_busy_worker_holds_the_others_and_one_finalises(
    workers: Callable[..., RedisScheduler],
) -> None:
    a, b = workers(), workers()
    c = workers()  # busy until its first idle (it may not have queued its start requests)
    assert a.settle() == OTHERS_BUSY
    assert b.settle() == OTHERS_BUSY
    assert c.settle() == FINALISER
    assert a.settle() == FINISHED
    assert b.settle() == FINISHED
    assert c.settle() == FINALISER  # idempotent
    assert not a.may_finalise()
    assert c.may_finalise()


def test_the_last_worker_to_close_removes_the_frontier(
    workers: Callable[..., RedisScheduler], redis_uri: str
) -> None:
    a, b = workers(), workers()
    a.enqueue_request(request(a, "1"))
    a.next_request()
    a.settle()
    b.settle()
    a.close("finished")
    client = redis.Redis.from_url(redis_uri)
    assert client.exists(b.df.key)  # b still crawls: the fingerprints stay
    b.close("finished")
    assert client.keys("t:*") == []
    client.close()


def test_a_closing_worker_puts_its_in_flight_requests_back(
    workers: Callable[..., RedisScheduler],
) -> None:
    a, b = workers(), workers()
    a.enqueue_request(request(a, "1"))
    a.next_request()
    a.close("shutdown")  # e.g. Ctrl-C: the request was not crawled
    assert len(b.queue) == 1


def test_worker_timeout_is_validated() -> None:
    with pytest.raises(SettingsError, match="WISDOM_WORKER_TIMEOUT"):
        WisdomSettings.from_settings(Settings({"WISDOM_WORKER_TIMEOUT": 0}))


def test_addon_inserts_the_middleware_for_the_distributed_scheduler() -> None:
    settings = Settings({"SCHEDULER": "wisdom_scrapy.distributed.RedisScheduler"})
    Addon().update_settings(settings)
    assert settings.getdict("SPIDER_MIDDLEWARES").get(DistributedMiddleware) == 5
    plain = Settings()
    Addon().update_settings(plain)
    assert DistributedMiddleware not in plain.getdict("SPIDER_MIDDLEWARES")


def test_scrapys_own_dupefilter_becomes_the_shared_one(
    workers: Callable[..., RedisScheduler],
) -> None:
    a = workers(DUPEFILTER_CLASS="scrapy.dupefilters.RFPDupeFilter")  # Scrapy's default
    b = workers()
    assert a.enqueue_request(request(a, "1"))
    assert not b.enqueue_request(request(b, "1"))


class _ProcessFilter(BaseDupeFilter):
    pass


def test_a_per_process_dupefilter_is_an_error_naming_it(
    workers: Callable[..., RedisScheduler],
) -> None:
    with pytest.raises(NotConfigured, match=r"DUPEFILTER_CLASS=.*_ProcessFilter"):
        workers(DUPEFILTER_CLASS=_ProcessFilter)


def test_after_close_the_finaliser_is_what_the_last_idle_found(
    workers: Callable[..., RedisScheduler],
) -> None:
    a, b = workers(), workers()
    b.settle()
    assert a.settle() == FINALISER
    assert b.settle() == FINISHED
    a.close("finished")
    b.close("finished")
    assert a.may_finalise()  # spider_closed handlers (sitemap files) run in the finaliser only
    assert not b.may_finalise()
    assert a.server.keys("t:*") == []  # asking did not register the closed workers again
