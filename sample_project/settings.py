"""Scrapy settings of the sample project (``scrapy.cfg`` at the repository root points here).

Defaults are tuned for crawling local or friendly sites quickly; raise ``DOWNLOAD_DELAY`` and turn
``ROBOTSTXT_OBEY`` on before pointing the ``site`` spider at someone else's server.
"""

from pathlib import Path

BOT_NAME = "sample_project"

SPIDER_MODULES = ["sample_project.spiders"]
NEWSPIDER_MODULE = "sample_project.spiders"

# wisdom_scrapy in one line: the add-on inserts its spider middlewares and extensions.
# Run without it with `-s ADDONS={}`.
ADDONS = {"wisdom_scrapy.Addon": 500}

# The persistent term-entropy store is the add-on's default: .scrapy/wisdom.db in the
# project data directory (beside scrapy.cfg), where Scrapy keeps its HTTP cache.
# The site report (self-contained HTML) written at the end of every crawl, beside it (whatever
# folder of the checkout the crawl runs in); rebuild it later with `scrapy wisdom-report`, list
# the store with `scrapy wisdom-stats`.
WISDOM_REPORT_URI = str(Path(__file__).resolve().parent.parent / ".scrapy" / "wisdom-report.html")

# The demo site lives on 127.0.0.1 and has no robots.txt.
ROBOTSTXT_OBEY = False

# Polite but fast local defaults.
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 16
DOWNLOAD_DELAY = 0
AUTOTHROTTLE_ENABLED = False
TELNETCONSOLE_ENABLED = False

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
