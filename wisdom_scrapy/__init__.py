"""wisdom_scrapy: mine the informative structure of web sites while Scrapy crawls them.

Turn it on with one setting: ``ADDONS = {"wisdom_scrapy.Addon": 500}``.

Importing the package imports nothing else: every public name loads its module on first use
(PEP 562), so ``scrapy version`` and the other commands, which import the package through its
``scrapy.commands`` entry points, do not pay for numpy, scipy or lxml. The engine names
(:func:`analyze_page`, :class:`TermStore` …) import no Scrapy; the Scrapy names
(:class:`Addon`, :class:`SettingsError`, :class:`WisdomExtension`, :class:`WisdomPipeline`) do.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wisdom_scrapy.addon import Addon
    from wisdom_scrapy.analysis import PageAnalysis, analyze_page
    from wisdom_scrapy.extension import WisdomExtension
    from wisdom_scrapy.feed import feed_page
    from wisdom_scrapy.items import ArticleItem, PageItem, SitemapItem, SiteStructureItem, TocItem
    from wisdom_scrapy.pipeline import WisdomPipeline
    from wisdom_scrapy.settings import SettingsError
    from wisdom_scrapy.store import StoreError, TermStore, open_store
    from wisdom_scrapy.text import count_terms, extract_terms

if "itemadapter" in sys.modules:  # Scrapy is loaded already: ItemAdapter shows spider fields
    import wisdom_scrapy.adapter  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "Addon",
    "ArticleItem",
    "PageAnalysis",
    "PageItem",
    "SettingsError",
    "SiteStructureItem",
    "SitemapItem",
    "StoreError",
    "TermStore",
    "TocItem",
    "WisdomExtension",
    "WisdomPipeline",
    "__version__",
    "analyze_page",
    "count_terms",
    "extract_terms",
    "feed_page",
    "open_store",
]

# Each public name's module, imported when the name is first asked for (PEP 562).
_MODULES = {
    "Addon": "wisdom_scrapy.addon",
    "ArticleItem": "wisdom_scrapy.items",
    "PageAnalysis": "wisdom_scrapy.analysis",
    "PageItem": "wisdom_scrapy.items",
    "SettingsError": "wisdom_scrapy.settings",
    "SiteStructureItem": "wisdom_scrapy.items",
    "SitemapItem": "wisdom_scrapy.items",
    "StoreError": "wisdom_scrapy.store",
    "TermStore": "wisdom_scrapy.store",
    "TocItem": "wisdom_scrapy.items",
    "WisdomExtension": "wisdom_scrapy.extension",
    "WisdomPipeline": "wisdom_scrapy.pipeline",
    "analyze_page": "wisdom_scrapy.analysis",
    "count_terms": "wisdom_scrapy.text",
    "extract_terms": "wisdom_scrapy.text",
    "feed_page": "wisdom_scrapy.feed",
    "open_store": "wisdom_scrapy.store",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
