"""wisdom_scrapy's own signals (:mod:`wisdom_scrapy.signals`) as a third party uses them: on
Scrapy's real signal manager, and in a real ``scrapy crawl demo`` whose receivers (one of them
failing on every signal) are a test-only extension (:mod:`tests.signal_receivers`)."""

from __future__ import annotations

import gc
import logging
import warnings
from pathlib import Path
from typing import Any

import pytest
from scrapy.signalmanager import SignalManager
from twisted.internet.defer import Deferred

from tests.crawling import run_crawl
from tests.signal_receivers import FAILURE
from wisdom_scrapy.signals import AnalysisSignal, page_analysed, send, site_items


class _Receiver:
    def __init__(self, result: Any) -> None:
        self.result = result

    def __call__(self, stage: str) -> Any:
        if isinstance(self.result, Exception):
            raise self.result
        return [self.result, stage]


def test_send_returns_results_in_connection_order_and_hands_failures_over(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each receiver runs, in the order connected; a failing one is handed to ``failed`` with
    its traceback, and Scrapy does not log it (wisdom_scrapy logs it as a stage's failure)."""
    manager = SignalManager()
    receivers = [_Receiver("a"), _Receiver(ValueError("b fails")), _Receiver("c")]
    for receiver in receivers:
        manager.connect(receiver, signal=site_items)
    errors: list[BaseException] = []
    with caplog.at_level(logging.DEBUG):
        results = send(manager, site_items, lambda error: errors.append(error), stage="idle")
    assert results == [["a", "idle"], ["c", "idle"]]
    assert [str(e) for e in errors] == ["b fails"]
    assert errors[0].__traceback__ is not None
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_async_receiver_of_a_plain_signal_is_a_counted_failure() -> None:
    """``send`` awaits nothing: an ``async def`` receiver (or one returning a Deferred) would
    never run its work, so it counts as a failure (its coroutine closed, no warning left)."""
    manager = SignalManager(object())  # receivers of its own (PyDispatcher's tables are global)

    async def later(stage: str) -> list[str]:
        return [stage]

    def deferred(stage: str) -> Any:
        return Deferred()

    for receiver in (later, _Receiver("a"), deferred):
        manager.connect(receiver, signal=site_items, weak=False)
    errors: list[BaseException] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would fail here
        results = send(manager, site_items, lambda error: errors.append(error), stage="idle")
        gc.collect()
    assert results == [["a", "idle"]]
    assert [type(e) for e in errors] == [TypeError, TypeError]
    assert "coroutine" in str(errors[0]) and "Deferred" in str(errors[1])


def test_analysis_signal_listens_while_a_receiver_is_connected() -> None:
    """The workers bring the pages' redundant blocks only while someone listens; a receiver
    connected weakly (a bound method, Scrapy's default) stops listening when its object goes."""
    manager = SignalManager()
    signal = AnalysisSignal(manager, lambda url, error: None)
    assert not signal.listening()
    seen: list[tuple[str, str]] = []

    class Listener:
        def on_analysis(self, site: str, analysis: Any) -> None:
            seen.append((site, analysis.url))

    listener = Listener()
    manager.connect(listener.on_analysis, signal=page_analysed)
    assert signal.listening()

    class Analysis:
        url = "http://example.com/a"

    signal("example.com", Analysis())
    assert seen == [("example.com", "http://example.com/a")]
    del listener
    gc.collect()
    assert not signal.listening()


@pytest.mark.crawl
def test_third_party_receivers_in_a_crawl(tmp_path: Path) -> None:
    """A third party's receivers get each signal: every analysis, the site-level items (its
    item leaves after the site structure, before the sitemap's middleware's), the close with
    the store still open. Its failing receivers are counted under the stage of each signal and
    logged once, as wisdom_scrapy's own failures are, and so is a receiver of site_items that
    returns no list; the crawl's items and report do not suffer."""
    result = run_crawl(
        "demo",
        tmp_path,
        args={"site_dir": str(tmp_path / "demo"), "port": "0"},
        settings={
            "EXTENSIONS": {"tests.crawling.StatsDump": 0, "tests.signal_receivers.ThirdParty": 600},
            "TEST_SIGNALS_FAIL": True,
            "WISDOM_SITEMAP": True,
        },
    )
    assert result.returncode == 0, result.log[-3000:]
    stats = result.stats
    analysed = sum(stats.get(f"wisdom/items/{role}", 0) for role in ("article", "toc", "other"))
    assert analysed > 100
    assert stats["test/page_analysed"] == analysed == stats["wisdom/errors/report"]
    assert stats["wisdom/errors/site_items"] >= 1  # at each idle
    assert stats["wisdom/errors/close"] == 1
    assert stats["test/store_closing"] == "finished" and stats["test/store_sites"] == 1
    kinds = [("structure" if "roles" in i else "sitemap" if "levels" in i
              else "third_party" if "third_party" in i else None) for i in result.items]
    assert [k for k in kinds if k] == ["structure", "third_party", "sitemap"]
    assert [i["third_party"] for i in result.items if "third_party" in i] == ["idle"]
    articles = sum(1 for i in result.items if i.get("role") == "article")
    assert stats["wisdom/items/article"] == articles > 0
    assert "wisdom_scrapy: site_items failed on (idle)" in result.log
    assert "wisdom_scrapy: close failed on (finished)" in result.log
    # a receiver returning None where items are due: a failure of its own at each call
    nothing = result.log.count("returned NoneType, not a list of items")
    assert nothing >= 1
    assert result.log.count(FAILURE) + nothing == stats["wisdom/errors/report"] + stats[
        "wisdom/errors/site_items"] + 1  # each failure logged once, with its traceback
    assert "Error caught on signal handler" not in result.log
    assert (tmp_path / "demo-report.html").stat().st_size > 0  # the report's receivers ran
