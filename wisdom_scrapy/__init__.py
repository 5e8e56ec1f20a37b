"""wisdom_scrapy: mine the informative structure of web sites while Scrapy crawls them.

Turn it on with one setting: ``ADDONS = {"wisdom_scrapy.Addon": 500}``.
"""

from __future__ import annotations

from wisdom_scrapy.addon import Addon
from wisdom_scrapy.feed import feed_page
from wisdom_scrapy.items import PageItem
from wisdom_scrapy.settings import SettingsError
from wisdom_scrapy.store import StoreError, TermStore, open_store
from wisdom_scrapy.text import count_terms, extract_terms

__version__ = "0.1.0"

__all__ = [
    "Addon",
    "PageItem",
    "SettingsError",
    "StoreError",
    "TermStore",
    "__version__",
    "count_terms",
    "extract_terms",
    "feed_page",
    "open_store",
]
