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
import importlib.abc
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from wisdom_scrapy.addon import Addon
    from wisdom_scrapy.analysis.page_analysis import PageAnalysis, analyze_page
    from wisdom_scrapy.engine.writes import feed_page
    from wisdom_scrapy.extension import WisdomExtension
    from wisdom_scrapy.items import ArticleItem, PageItem, SitemapItem, SiteStructureItem, TocItem
    from wisdom_scrapy.page.terms import count_terms, extract_terms
    from wisdom_scrapy.pipeline import WisdomPipeline
    from wisdom_scrapy.settings import SettingsError
    from wisdom_scrapy.store import StoreError, TermStore, open_store


class _AdapterOnImport(importlib.abc.MetaPathFinder):
    """Registers :class:`wisdom_scrapy.adapter.PageItemAdapter` the moment ``itemadapter`` is
    imported, whenever that is.

    ``ItemAdapter`` shows a page item's spider fields (``extra``) as top-level fields only once
    the adapter is in its ``ADAPTER_CLASSES``, and the adapter module imports ``itemadapter``,
    which imports Scrapy — which this package does not import (an engine user needs neither).
    Registering only when ``itemadapter`` happened to be loaded first made the items' shape
    depend on import order; this finder, on ``sys.meta_path`` until ``itemadapter`` is found,
    runs the registration right after ``itemadapter``'s own module has run.
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name != "itemadapter":
            return None
        sys.meta_path.remove(self)  # once, and not asked again by the look-up below
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        if loader is not None and hasattr(loader, "exec_module"):
            run = loader.exec_module

            def exec_then_register(module: ModuleType) -> None:
                run(module)
                importlib.import_module("wisdom_scrapy.adapter")

            loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


if "itemadapter" in sys.modules:  # Scrapy is loaded already: register now
    import wisdom_scrapy.adapter  # noqa: F401
elif not any(isinstance(finder, _AdapterOnImport) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AdapterOnImport())

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
    "PageAnalysis": "wisdom_scrapy.analysis.page_analysis",
    "PageItem": "wisdom_scrapy.items",
    "SettingsError": "wisdom_scrapy.settings",
    "SiteStructureItem": "wisdom_scrapy.items",
    "SitemapItem": "wisdom_scrapy.items",
    "StoreError": "wisdom_scrapy.store",
    "TermStore": "wisdom_scrapy.store",
    "TocItem": "wisdom_scrapy.items",
    "WisdomExtension": "wisdom_scrapy.extension",
    "WisdomPipeline": "wisdom_scrapy.pipeline",
    "analyze_page": "wisdom_scrapy.analysis.page_analysis",
    "count_terms": "wisdom_scrapy.page.terms",
    "extract_terms": "wisdom_scrapy.page.terms",
    "feed_page": "wisdom_scrapy.engine.writes",
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
