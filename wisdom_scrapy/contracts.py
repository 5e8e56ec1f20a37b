"""Scrapy's tools that run a spider callback themselves see the cleaned items.

``scrapy check`` (contracts) and ``scrapy parse`` take a callback's output straight from the
callback, before the spider middlewares where a crawl replaces each :class:`PageItem` with its
cleaned item. So a contract ``@scrapes url title text`` would test the raw PageItem. Here the
callback they call is wrapped by :func:`cleaned_callback`, which hands the output to the crawl's
:meth:`~wisdom_scrapy.crawl_state.WisdomRuntime.clean_now`: the page was fed to the store by the
feed middleware (as in a crawl), and its item is analysed at once with what the store knows.

* contracts: :class:`UrlContract` takes the name ``url`` from Scrapy's own (every contract-tested
  callback has ``@url``) and wraps the callback in ``adjust_request_args``, before the other
  contracts wrap it; the add-on lists it in ``SPIDER_CONTRACTS``;
* ``scrapy wisdom-parse``: :class:`wisdom_scrapy.commands.ParseCommand`, Scrapy's ``parse``
  registered under its own name by the package's entry points (Scrapy's ``parse`` is left as it
  is: it prints what the callback yields).

Without wisdom_scrapy's components in the crawl (``WISDOM_ENABLED = False``, no add-on) the
wrapper passes the output through unchanged.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy.contracts.default import UrlContract as ScrapyUrlContract
from scrapy.utils.misc import arg_to_iter

from wisdom_scrapy.extension import WisdomExtension

if TYPE_CHECKING:
    from scrapy.http import Response

__all__ = ["UrlContract", "cleaned_callback"]


def _clean(callback: Callable[..., Any], response: Response, output: list[Any]) -> list[Any]:
    spider = getattr(callback, "__self__", None)
    crawler = getattr(spider, "crawler", None)
    wisdom = WisdomExtension.active(crawler) if crawler is not None else None
    return output if wisdom is None else wisdom.runtime.clean_now(response, output)


def cleaned_callback(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` (a bound spider method, sync or async) with its output's PageItems replaced
    by their cleaned items; the output becomes a list (async callbacks: a coroutine of one)."""
    if inspect.iscoroutinefunction(callback) or inspect.isasyncgenfunction(callback):

        @functools.wraps(callback)
        async def async_wrapper(response: Response, **kwargs: Any) -> list[Any]:
            result = callback(response, **kwargs)
            if inspect.isasyncgen(result):
                output = [x async for x in result]
            else:
                output = list(arg_to_iter(await result))
            return _clean(callback, response, output)

        return async_wrapper

    @functools.wraps(callback)
    def wrapper(response: Response, **kwargs: Any) -> list[Any]:
        return _clean(callback, response, list(arg_to_iter(callback(response, **kwargs))))

    return wrapper


class UrlContract(ScrapyUrlContract):
    """Scrapy's ``@url`` contract, which also makes the tested callback return cleaned items
    (module docstring)."""

    def adjust_request_args(self, args: dict[str, Any]) -> dict[str, Any]:
        args = super().adjust_request_args(args)
        if args.get("callback") is not None:
            args["callback"] = cleaned_callback(args["callback"])
        return args
