"""wisdom_scrapy: mine the informative structure of web sites while Scrapy crawls them.

Turn it on with one setting: ``ADDONS = {"wisdom_scrapy.Addon": 500}``.

Importing the package (or any engine module: mining, analysis, store …) imports no Scrapy;
the Scrapy names (:class:`Addon`, :class:`SettingsError`, :class:`WisdomExtension`,
:class:`WisdomPipeline`) load it on first use.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from wisdom_scrapy.analysis import PageAnalysis, analyze_page
from wisdom_scrapy.feed import feed_page
from wisdom_scrapy.items import ArticleItem, PageItem, SitemapItem, SiteStructureItem, TocItem
from wisdom_scrapy.store import StoreError, TermStore, open_store
from wisdom_scrapy.text import count_terms, extract_terms

if TYPE_CHECKING:
    from wisdom_scrapy.addon import Addon
    from wisdom_scrapy.extension import WisdomExtension
    from wisdom_scrapy.pipeline import WisdomPipeline
    from wisdom_scrapy.settings import SettingsError

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

# Public names of the Scrapy layer, imported when first asked for (PEP 562).
_SCRAPY_NAMES = {
    "Addon": "wisdom_scrapy.addon",
    "SettingsError": "wisdom_scrapy.settings",
    "WisdomExtension": "wisdom_scrapy.extension",
    "WisdomPipeline": "wisdom_scrapy.pipeline",
}


def __getattr__(name: str) -> Any:
    module = _SCRAPY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
