"""A log formatter that logs wisdom_scrapy's items as a short summary.

At Scrapy's default log level (DEBUG) every scraped item is logged in full: an ArticleItem's
text, HTML and term vector, a TocItem's hundreds of links, the site structure of a whole site.
Such a log is larger than the pages crawled. :class:`WisdomLogFormatter` is Scrapy's
:class:`~scrapy.logformatter.LogFormatter` with wisdom_scrapy's items (scraped, dropped or
failed in a pipeline) written as their class and fields with every long value cut to its size
(but the ``url`` and ``site``, which tell the item):
``ArticleItem(url='…', title='…', text=<5,120 chars>, metadata=[…], features=<312 entries>)``.
Other items are logged as Scrapy logs them. The add-on sets it as ``LOG_FORMATTER`` unless the
project sets its own.

The items wisdom_scrapy emits at spider idle (pages held until then, the site-level items) come
out of one request for an empty ``data:,`` URL (:meth:`~wisdom_scrapy.crawl_state.WisdomRuntime.
on_idle`): Scrapy would log them "Scraped from <200 data:,>". They are logged as scraped from
their page (``<url>``) or their site (``site <key>``), "at spider idle", and the request itself
as what it is. Likewise a page's item that leaves with a later page's output (held for the
warm-up or for its TOC targets: :mod:`wisdom_scrapy.engine.waits`) is logged as scraped from its
own page, "held; emitted with" the response it left with; the items the close emits (no
response) as scraped from their page or site "at spider close".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.logformatter import LogFormatter, LogFormatterResult

import wisdom_scrapy.adapter  # noqa: F401  (registers the page items' ItemAdapter)
from wisdom_scrapy.items import LATE_ITEMS_META, PAGE_ITEMS, SitemapItem, SiteStructureItem

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.http import Request, Response
    from twisted.python.failure import Failure

__all__ = ["WisdomLogFormatter", "item_summary"]

# wisdom_scrapy's items; a value whose repr is longer than _SHORT is shown by its size
_ITEMS = (*PAGE_ITEMS, SiteStructureItem, SitemapItem)
_SHORT = 80
#: fields shown whole, whatever their length: what tells one item from another
_WHOLE = frozenset({"url", "site"})


class _Summary:
    """Formats as the summary of an item (lazily: only when the log record is emitted)."""

    def __init__(self, item: Any) -> None:
        self.item = item

    def __str__(self) -> str:
        return item_summary(self.item)


def _value(value: Any) -> str:
    text = repr(value)
    if len(text) <= _SHORT:
        return text
    if isinstance(value, str):
        return f"<{len(value):,} chars>"
    if hasattr(value, "__len__"):
        return f"<{len(value):,} entries>"
    return text[: _SHORT - 1] + "…"


def item_summary(item: Any) -> str:
    """``Class(field=value, …)`` with each long value replaced by its size (module docstring)."""
    fields = ", ".join(f"{k}={repr(v) if k in _WHOLE else _value(v)}"
                       for k, v in ItemAdapter(item).items())  # fmt: skip
    return f"{type(item).__name__}({fields})"


def _source(item: Any, response: Response | Failure | None, src: Any) -> Any:
    """Where an item comes from, for "Scraped from …": its page (``<url>``) or its site when
    it left with another response's output (module docstring), else Scrapy's ``src``."""
    request = getattr(response, "request", None)
    url = getattr(item, "url", None) if isinstance(item, PAGE_ITEMS) else None
    where = f"<{url}>" if url else f"site {getattr(item, 'site', None)}"
    if request is not None and request.meta.get(LATE_ITEMS_META):
        return f"{where} at spider idle"
    if response is None and isinstance(item, _ITEMS):  # emitted by the close flush
        return f"{where} at spider close"
    if url and url != getattr(response, "url", url):  # held, then emitted with a later page
        return f"<{url}> (held; emitted with {src})"
    return src


def _summarised(result: LogFormatterResult, item: Any,
                response: Response | Failure | None = None) -> LogFormatterResult:  # fmt: skip
    args = result["args"]
    if isinstance(item, _ITEMS) and isinstance(args, dict):
        src = {"src": _source(item, response, args["src"])} if "src" in args else {}
        result["args"] = {**args, "item": _Summary(item), **src}
    return result


class WisdomLogFormatter(LogFormatter):
    """Scrapy's LogFormatter, with wisdom_scrapy's items summarised (module docstring)."""

    def scraped(self, item: Any, response: Response | Failure | None,
                spider: Spider) -> LogFormatterResult:  # fmt: skip
        return _summarised(super().scraped(item, response, spider), item, response)

    def crawled(self, request: Request, response: Response, spider: Spider) -> LogFormatterResult:
        if request.meta.get(LATE_ITEMS_META):
            return {"level": logging.DEBUG, "args": {},
                    "msg": "wisdom_scrapy: emitting the items left at spider idle"}  # fmt: skip
        return super().crawled(request, response, spider)

    def dropped(self, item: Any, exception: BaseException, response: Response | Failure | None,
                spider: Spider) -> LogFormatterResult:  # fmt: skip
        return _summarised(super().dropped(item, exception, response, spider), item)

    def item_error(self, item: Any, exception: BaseException, response: Response | Failure | None,
                   spider: Spider) -> LogFormatterResult:  # fmt: skip
        return _summarised(super().item_error(item, exception, response, spider), item)
