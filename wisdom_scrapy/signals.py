"""wisdom_scrapy's own Scrapy signals: the points where another component joins the crawl's
analysis, connected as any Scrapy signal is (``crawler.signals.connect(receiver, signal=…)``).

* :data:`page_analysed` — each page's final analysis, before its item is made (the site report
  counts the page's redundant blocks there);
* :data:`site_items` — at spider idle and close: the site-level items to emit (the site
  structure, the sitemap);
* :data:`store_closing` — at spider close, the store checked and still open: the last writes
  (the sitemap's files, the site report).

The senders catch a failing receiver, count it under ``wisdom/errors/<stage>`` (each signal's
stage is in its description) and log it with its traceback, as wisdom_scrapy's own failures
(Scrapy does not log it again); the other receivers still run. A receiver takes the keyword
arguments it names, as with Scrapy's own signals.

The engine knows nothing of Scrapy: it is given one :class:`AnalysisSignal` when it is built
(:class:`~wisdom_scrapy.engine.waits.AnalysisListener`), which sends :data:`page_analysed`.
"""

from __future__ import annotations

import inspect
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from pydispatch.dispatcher import getAllReceivers, liveReceivers
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.signalmanager import SignalManager

    from wisdom_scrapy.analysis.page_analysis import PageAnalysis
    from wisdom_scrapy.engine.waits import RemoteAnalysis

    #: called as ``failed(error=exception)`` for a failing receiver
    Failed = Callable[..., None]

__all__ = ["AnalysisSignal", "page_analysed", "send", "send_async", "site_items",
           "store_closing"]  # fmt: skip

#: Sent for each page's final analysis, before its item is made, with ``site`` (the site key)
#: and ``analysis``: a :class:`~wisdom_scrapy.analysis.page_analysis.PageAnalysis` made in the
#: crawl process (its ``model`` set) or a :class:`~wisdom_scrapy.engine.waits.RemoteAnalysis`
#: made in a worker process (``WISDOM_WORKERS``), whose ``redundant`` lists the page's
#: redundant blocks ``(path, characters, sample, name)``: sample and name are empty for a
#: path whose sample an earlier worker analysis of the site brought (keep a path's first).
#: While no receiver is connected the workers leave ``redundant`` out (None), which saves them
#: time. A receiver returns nothing; its failure counts under ``wisdom/errors/report``.
page_analysed = object()

#: Sent at spider idle and at spider close (in a distributed crawl by its finaliser only, once
#: the whole crawl is done; never for a spider that did not ask for the analysis) with
#: ``stage`` (``"idle"`` or ``"close"``). Each receiver returns a list of the site-level items
#: it adds now (usually for the sites that grew since its last call); they leave through the
#: item pipelines after the pages still held and the grown sites'
#: :class:`~wisdom_scrapy.items.SiteStructureItem`, in the order the receivers were connected
#: (Scrapy builds the extensions first, lowest ``EXTENSIONS`` value first, then the spider
#: middlewares: the sitemap's). A failure counts under ``wisdom/errors/site_items``; the other
#: receivers' items still leave.
site_items = object()

#: Sent at spider close with ``reason`` (Scrapy's close reason), after the last items left and
#: the store was checked, before the store is closed (when the engine stops): a receiver may
#: still read and write the store, and write files; an awaitable it returns is awaited, the
#: receivers running side by side. A failure counts under ``wisdom/errors/close``.
store_closing = object()


def send(signals: SignalManager, signal: object, failed: Failed, **kwargs: Any) -> list[Any]:
    """Send ``signal``; the results of the receivers that returned, in the order they were
    connected. ``failed(error=…)`` is called with each receiver's exception (traceback
    attached): wisdom_scrapy counts and logs it as the failure of a stage
    (:meth:`WisdomRuntime.failed <wisdom_scrapy.crawl_state.WisdomRuntime.failed>`), so
    Scrapy is told not to log it a second time."""
    sent = signals.send_catch_log(signal, dont_log=Exception, **kwargs)
    return _results([(receiver, _not_awaitable(result)) for receiver, result in sent], failed)


def _not_awaitable(result: Any) -> Any:
    """``result``, or a TypeError for an awaitable or Deferred (an ``async def`` receiver):
    nothing would await it, so its work would never run (it is closed)."""
    if not (inspect.isawaitable(result) or isinstance(result, Deferred)):
        return result
    if inspect.iscoroutine(result):
        result.close()
    return TypeError(f"a receiver returned {type(result).__name__}: this signal awaits "
                     "nothing, its receivers must do their work before they return")


async def send_async(
    signals: SignalManager, signal: object, failed: Failed, **kwargs: Any
) -> list[Any]:
    """:func:`send` for receivers that may return awaitables (they run side by side)."""
    sent = await signals.send_catch_log_async(signal, dont_log=Exception, **kwargs)
    return _results(sent, failed)


def _results(sent: list[Any], failed: Failed) -> list[Any]:
    """The receivers' results with their failures (a Failure from a plain send, the exception
    from an asynchronous one) passed to ``failed``."""
    results = []
    for entry in sent:
        if isinstance(entry, BaseException):  # a receiver cancelled: not a result
            if not isinstance(entry, Exception):
                raise entry
            failed(error=entry)
            continue
        result = entry[1]
        if isinstance(result, Failure):
            error = cast("BaseException", result.value)  # a Failure caught holds one
            failed(error=error.with_traceback(result.getTracebackObject()))
        elif isinstance(result, Exception):
            failed(error=result)
        else:
            results.append(result)
    return results


class AnalysisSignal:
    """The engine's :class:`~wisdom_scrapy.engine.waits.AnalysisListener` in a crawl: sends
    :data:`page_analysed` through the crawler's signals. ``failed(url, error=…)`` counts and
    logs a failing receiver."""

    def __init__(self, signals: SignalManager, failed: Callable[..., None]) -> None:
        self.signals = signals
        self.failed = failed

    def listening(self) -> bool:
        """Whether a receiver is connected to :data:`page_analysed` now (Scrapy's signal
        manager keeps its receivers in PyDispatcher's tables, which it reads the same way)."""
        receivers = getAllReceivers(self.signals.sender, page_analysed)
        return next(iter(liveReceivers(receivers)), None) is not None

    def __call__(self, site: str, analysis: PageAnalysis | RemoteAnalysis) -> None:
        send(self.signals, page_analysed, partial(self.failed, analysis.url), site=site,
             analysis=analysis)  # fmt: skip
