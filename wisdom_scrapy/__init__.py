"""wisdom_scrapy: mine the informative structure of web sites while Scrapy crawls them.

Turn it on with one setting: ``ADDONS = {"wisdom_scrapy.Addon": 500}``.
"""

from __future__ import annotations

from wisdom_scrapy.addon import Addon
from wisdom_scrapy.analysis import PageAnalysis, analyze_page
from wisdom_scrapy.feed import feed_page
from wisdom_scrapy.items import ArticleItem, PageItem, SitemapItem, SiteStructureItem, TocItem
from wisdom_scrapy.settings import SettingsError
from wisdom_scrapy.store import StoreError, TermStore, open_store
from wisdom_scrapy.text import count_terms, extract_terms

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
    "__version__",
    "analyze_page",
    "count_terms",
    "extract_terms",
    "feed_page",
    "open_store",
]
