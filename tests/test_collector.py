"""The garbage collector's tuning during a crawl (``WISDOM_TUNE_GC``): applied at spider open,
a full collection every FULL_EVERY responses, everything put back at spider close."""

from __future__ import annotations

import gc

import pytest
from scrapy import Spider, signals
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


def test_tuned_from_open_to_close(full_collections):
    before = gc.get_threshold()
    crawler, _tuning = _tuned()
    try:
        _send(crawler, signals.spider_opened)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
        del full_collections[:]
        for _ in range(FULL_EVERY - 1):
            _send(crawler, signals.response_received, response=None, request=None)
        assert not full_collections  # the young threshold keeps CPython's own ones away
        _send(crawler, signals.response_received, response=None, request=None)
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
