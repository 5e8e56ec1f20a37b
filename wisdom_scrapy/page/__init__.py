"""One page as every stage reads it, built once per page.

* :mod:`~wisdom_scrapy.page.model`: :class:`~wisdom_scrapy.page.model.PageModel`, one walk of
  the lxml tree into numpy arrays over its element nodes (text, links, visibility, CSS boxes);
* :mod:`~wisdom_scrapy.page.terms`: a page's terms (what the entropy store counts);
* :mod:`~wisdom_scrapy.page.urls`: URL helpers (a URL's site key, page turns).

Rules: the lowest floor: imports nothing of the package outside ``page``, and no Scrapy.
"""
