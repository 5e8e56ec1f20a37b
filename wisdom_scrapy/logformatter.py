"""A log formatter that logs wisdom_scrapy's items as a short summary.

At Scrapy's default log level (DEBUG) every scraped item is logged in full: an ArticleItem's
text, HTML and term vector, a TocItem's hundreds of links, the site structure of a whole site.
That made the log larger than the pages crawled. :class:`WisdomLogFormatter` is Scrapy's
:class:`~scrapy.logformatter.LogFormatter` with wisdom_scrapy's items (scraped, dropped or
failed in a pipeline) written as their class and fields with every long value cut to its size:
``ArticleItem(url='…', title='…', text=<5,120 chars>, metadata=[…], features=<312 entries>)``.
Other items are logged as Scrapy logs them. The add-on sets it as ``LOG_FORMATTER`` unless the
project sets its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.logformatter import LogFormatter, LogFormatterResult

import wisdom_scrapy.adapter  # noqa: F401  (registers the page items' ItemAdapter)
from wisdom_scrapy.items import PAGE_ITEMS, SitemapItem, SiteStructureItem

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.http import Response
    from twisted.python.failure import Failure

__all__ = ["WisdomLogFormatter", "item_summary"]

# wisdom_scrapy's items; a value whose repr is longer than _SHORT is shown by its size
_ITEMS = (*PAGE_ITEMS, SiteStructureItem, SitemapItem)
_SHORT = 80


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
    fields = ", ".join(f"{k}={_value(v)}" for k, v in ItemAdapter(item).items())
    return f"{type(item).__name__}({fields})"


def _summarised(result: LogFormatterResult, item: Any) -> LogFormatterResult:
    args = result["args"]
    if isinstance(item, _ITEMS) and isinstance(args, dict):
        result["args"] = {**args, "item": _Summary(item)}
    return result


class WisdomLogFormatter(LogFormatter):
    """Scrapy's LogFormatter, with wisdom_scrapy's items summarised (module docstring)."""

    def scraped(self, item: Any, response: Response | Failure | None,
                spider: Spider) -> LogFormatterResult:  # fmt: skip
        return _summarised(super().scraped(item, response, spider), item)

    def dropped(self, item: Any, exception: BaseException, response: Response | Failure | None,
                spider: Spider) -> LogFormatterResult:  # fmt: skip
        return _summarised(super().dropped(item, exception, response, spider), item)

    def item_error(self, item: Any, exception: BaseException, response: Response | Failure | None,
                   spider: Spider) -> LogFormatterResult:  # fmt: skip
        return _summarised(super().item_error(item, exception, response, spider), item)
