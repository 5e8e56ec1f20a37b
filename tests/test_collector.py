"""The garbage collector's tuning during a crawl (``WISDOM_TUNE_GC``): applied at spider open,
a full collection every FULL_EVERY responses, everything put back at spider close. Real Scrapy
responses; the signals are sent by hand."""

from __future__ import annotations

import gc
import weakref

import pytest
from scrapy import Spider, signals
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from wisdom_scrapy.collector import FULL_EVERY, YOUNG_THRESHOLD, CollectorTuning
from wisdom_scrapy.extension import WisdomExtension


@pytest.fixture
def full_collections():
    """The generation-2 collections counted while the test runs."""
    seen: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "stop" and info["generation"] == 2:
            seen.append(1)

    gc.callbacks.append(count)
    yield seen
    gc.callbacks.remove(count)


def _tuned():
    """A crawler and its tuning (the one WisdomExtension makes), its signals sent by hand."""
    crawler = get_crawler(Spider)
    crawler.spider = crawler._create_spider("s")
    return crawler, CollectorTuning(crawler)


def _send(crawler, signal, **kwargs):
    crawler.signals.send_catch_log(signal, spider=crawler.spider, **kwargs)


def _page(size: int, n: int = 0) -> HtmlResponse:
    """A response of a ``size``-byte body, its selector made: the response and the selector it
    caches hold each other (a cycle only a full collection frees)."""
    head, tail = f"<html><body><p>{n} ".encode(), b"</p></body></html>"
    body = head + b"w" * (size - len(head) - len(tail)) + tail
    response = HtmlResponse(f"http://site.test/{n}.html", body=body, encoding="utf-8")
    assert response.selector.root is not None
    return response


def _receive(crawler, response: HtmlResponse) -> None:
    _send(crawler, signals.response_received, response=response, request=response.request)


def test_tuned_from_open_to_close(full_collections):
    before = gc.get_threshold()
    crawler, _tuning = _tuned()
    try:
        _send(crawler, signals.spider_opened)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
        del full_collections[:]
        page = _page(1024)
        for _ in range(FULL_EVERY - 1):
            _receive(crawler, page)
        assert not full_collections  # the young threshold keeps CPython's own ones away
        _receive(crawler, page)
        assert full_collections
        _send(crawler, signals.spider_closed, reason="finished")
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_two_crawlers_share_one_tuning():
    before = gc.get_threshold()
    (first, _one), (second, _two) = _tuned(), _tuned()
    try:
        _send(first, signals.spider_opened)
        _send(second, signals.spider_opened)
        _send(first, signals.spider_closed, reason="finished")
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD  # the second crawl still runs
        _send(second, signals.spider_closed, reason="finished")
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


@pytest.mark.parametrize("value", [True, False])
def test_setting(value):
    crawler = get_crawler(Spider, settings_dict={"WISDOM_STORE_URI": "memory://",
                                                 "WISDOM_TUNE_GC": value})  # fmt: skip
    extension = WisdomExtension.from_crawler(crawler)
    try:
        assert isinstance(extension.collector, CollectorTuning) is value
    finally:
        extension.runtime.close()


@pytest.mark.parametrize("size", [1024, 256 * 1024])
def test_garbage_waiting_is_bounded_by_the_responses_received(size):
    """Responses caught in cycles, as in a crawl: never more than FULL_EVERY of them wait for a
    full collection, however many are received and whatever their size. In a crawl
    a response is in flight long enough to reach the oldest generation, where only a full
    collection finds it: here CPython's own collections are off, so no young one frees it."""
    before = gc.get_threshold()
    crawler, _tuning = _tuned()
    waiting: weakref.WeakSet[HtmlResponse] = weakref.WeakSet()
    try:
        _send(crawler, signals.spider_opened)
        gc.disable()
        most = 0
        for n in range(8 * FULL_EVERY):
            response = _page(size, n)
            waiting.add(response)
            _receive(crawler, response)
            del response
            most = max(most, len(waiting))
        assert most == FULL_EVERY
        _send(crawler, signals.spider_closed, reason="finished")
        assert not waiting
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*before)
