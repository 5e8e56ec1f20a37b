"""The crawl's engine: what the Scrapy layer calls for each page and each site, without Scrapy.

* :mod:`~wisdom_scrapy.engine.writes`: what a fetched page writes into the term-entropy store
  (the store feed: write-behind, retries, pages lost);
* :mod:`~wisdom_scrapy.engine.waits`: the extractor, from fed pages to cleaned items: the pages
  that wait (a cold site's warm-up, a TOC page's targets) and the items made from an analysis;
* :mod:`~wisdom_scrapy.engine.link_graph`: each site's link structure (template links, HITS,
  page roles, the TOC → article structure);
* :mod:`~wisdom_scrapy.engine.sites`: one site's state, each stage's part of it in one place;
* :mod:`~wisdom_scrapy.engine.cleaning`: the crawl's ``WISDOM_CLEANER``, one cleaner per site;
* :mod:`~wisdom_scrapy.engine.offload` and :mod:`~wisdom_scrapy.engine.worker_pool`: page
  analyses sent to worker processes (``WISDOM_WORKERS``), and the processes themselves.

Rules: no Scrapy (nor Twisted, nor itemadapter); imports go down only, to ``analysis``,
``mining``, ``segment``, ``store``, ``page`` and the item records (``wisdom_scrapy.items``);
tests/test_layers.py checks both.
"""
