"""The Scrapy add-on: one settings line turns wisdom_scrapy on.

``ADDONS = {"wisdom_scrapy.Addon": 500}`` is the same as listing the components yourself::

    SPIDER_MIDDLEWARES = {
        "wisdom_scrapy.middlewares.WisdomFeedMiddleware": 950,
        "wisdom_scrapy.focus.WisdomFocusMiddleware": 940,
        "wisdom_scrapy.sitemap.WisdomSitemapMiddleware": 930,
    }
    ITEM_PIPELINES = {
        "wisdom_scrapy.pipeline.WisdomPipeline": 100,
    }
    ITEM_PROCESSOR = "wisdom_scrapy.pipeline.WisdomItemProcessor"
    EXTENSIONS = {
        "wisdom_scrapy.extension.WisdomExtension": 100,
        "wisdom_scrapy.report.WisdomReportExtension": 500,
        "wisdom_scrapy.progress.WisdomProgress": 500,
    }

With ``SCHEDULER = "wisdom_scrapy.distributed.RedisScheduler"`` (a distributed crawl) it also
inserts ``"wisdom_scrapy.distributed.DistributedMiddleware": 5``.

It also registers, at the add-on priority (so a value the project, the spider or the command
line sets always wins):

* every ``WISDOM_*`` setting's default (:data:`wisdom_scrapy.settings.DEFAULTS`; the store URI
  resolved in the project data directory), so ``scrapy wisdom-settings --get WISDOM_FOCUS``
  shows it;
* ``LOG_FORMATTER = "wisdom_scrapy.logformatter.WisdomLogFormatter"`` (items logged as a
  summary, not in full);
* ``FEED_EXPORTERS["csv"] = "wisdom_scrapy.exporters.WisdomCsvItemExporter"``: one CSV of all
  items keeps every field (:mod:`wisdom_scrapy.exporters`);
* ``ITEM_PROCESSOR = "wisdom_scrapy.pipeline.WisdomItemProcessor"``: Scrapy's item pipeline
  manager, which also sends the pages still held through the pipelines when the spider closes
  before going idle (``CLOSESPIDER_*``, Ctrl-C, SIGTERM), before the pipelines and the feeds
  close. A project's own ``ITEM_PROCESSOR`` wins; the crawl warns unless it subclasses this one;
* ``SPIDER_CONTRACTS``: :class:`wisdom_scrapy.contracts.UrlContract`, so ``scrapy check``
  contracts test the cleaned items;
* ``DOWNLOAD_MAXSIZE = WISDOM_MAX_PAGE_BYTES``: a body the add-on would skip as too large is
  not downloaded at all (Scrapy cancels it, and a compressed body as soon as it inflates past
  the limit: a small gzip bomb never reaches memory whole). Scrapy's own default (1 GiB) lets a
  crawl buffer gigabytes for a page the analysis would refuse.
"""

from __future__ import annotations

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from wisdom_scrapy.contracts import UrlContract
from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.focus import WisdomFocusMiddleware
from wisdom_scrapy.middlewares import WisdomFeedMiddleware
from wisdom_scrapy.pipeline import WisdomPipeline
from wisdom_scrapy.progress import WisdomProgress
from wisdom_scrapy.report import WisdomReportExtension
from wisdom_scrapy.settings import DEFAULTS, default_store_uri
from wisdom_scrapy.sitemap import WisdomSitemapMiddleware

__all__ = ["COMPONENTS", "Addon"]

# (setting, component, order). The feed runs after Scrapy's built-in spider middlewares
# (HttpError 50 … Depth 900), so only pages the spider really receives are counted, and nearest
# the spider, so it sees the spider's PageItems first; the focus sees the spider's requests.
# The cleaning pipeline comes early, so the project's own pipelines see cleaned items (one
# ordered before it sees the PageItem).
COMPONENTS = (
    ("SPIDER_MIDDLEWARES", WisdomFeedMiddleware, 950),
    ("SPIDER_MIDDLEWARES", WisdomFocusMiddleware, 940),
    ("SPIDER_MIDDLEWARES", WisdomSitemapMiddleware, 930),  # off unless WISDOM_SITEMAP(_URI)
    # the crawl's state, its idle and close: built first, the others find it
    ("EXTENSIONS", WisdomExtension, 100),
    # the site report (WISDOM_REPORT_URI) and the progress lines in the log
    ("EXTENSIONS", WisdomReportExtension, 500),
    ("EXTENSIONS", WisdomProgress, 500),
    ("ITEM_PIPELINES", WisdomPipeline, 100),
)

LOG_FORMATTER = "wisdom_scrapy.logformatter.WisdomLogFormatter"
ITEM_PROCESSOR = "wisdom_scrapy.pipeline.WisdomItemProcessor"
CSV_EXPORTER = "wisdom_scrapy.exporters.WisdomCsvItemExporter"


def register_defaults(settings: BaseSettings) -> None:
    """The ``WISDOM_*`` defaults at the add-on priority: a setting set anywhere else is kept."""
    for name, value in DEFAULTS.items():
        if name == "WISDOM_STORE_URI" and value is None:
            value = default_store_uri()
        settings.set(name, value, priority="addon")


def _bound_downloads(settings: BaseSettings) -> None:
    """``DOWNLOAD_MAXSIZE`` from ``WISDOM_MAX_PAGE_BYTES``, at the add-on priority (a value the
    project, spider or command line sets wins). A bad value is left for
    :meth:`WisdomSettings.from_settings` to report, naming the setting."""
    try:
        limit = settings.getint("WISDOM_MAX_PAGE_BYTES")
    except (TypeError, ValueError):
        return
    if limit > 0:
        settings.set("DOWNLOAD_MAXSIZE", limit, priority="addon")


def _csv_exporter(settings: BaseSettings) -> None:
    """``FEED_EXPORTERS["csv"]``: the CSV exporter that keeps every item's fields
    (:mod:`wisdom_scrapy.exporters`), at the add-on priority: a project's own wins."""
    exporters = settings.get("FEED_EXPORTERS")
    if isinstance(exporters, BaseSettings):  # Scrapy's settings: a per-key priority dict
        exporters.set("csv", CSV_EXPORTER, priority="addon")
    else:
        settings.set("FEED_EXPORTERS", {"csv": CSV_EXPORTER, **(exporters or {})}, "addon")


class Addon:
    """Enables wisdom_scrapy's components without replacing ones the project already lists.

    A component the project lists itself (by class or import path, any order, or ``None`` to
    disable it) is left as the project set it.
    """

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Before any crawler (so ``scrapy wisdom-settings`` shows them too): the defaults, and the
        contract ``scrapy check`` reads from the process' settings."""
        register_defaults(settings)
        # after Scrapy's UrlContract (order 1), so it takes the name "url"
        settings.setdefault_in_component_priority_dict("SPIDER_CONTRACTS", UrlContract, 10)

    def update_settings(self, settings: BaseSettings) -> None:
        register_defaults(settings)
        settings.set("LOG_FORMATTER", LOG_FORMATTER, priority="addon")
        settings.set("ITEM_PROCESSOR", ITEM_PROCESSOR, priority="addon")
        _csv_exporter(settings)
        if settings.getbool("WISDOM_ENABLED"):
            _bound_downloads(settings)
        for name, component, order in COMPONENTS:
            settings.setdefault_in_component_priority_dict(name, component, order)
        scheduler = settings.get("SCHEDULER")
        if scheduler and getattr(load_object(scheduler), "wisdom_distributed", False):
            from wisdom_scrapy.distributed import DistributedMiddleware

            # nearest the engine: it sees the spider output after every other middleware
            settings.setdefault_in_component_priority_dict(
                "SPIDER_MIDDLEWARES", DistributedMiddleware, 5
            )
