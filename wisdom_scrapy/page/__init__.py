"""One page as every stage reads it, built once per page.

* :mod:`~wisdom_scrapy.page.model`: :class:`~wisdom_scrapy.page.model.PageModel`, one walk of
  the lxml tree into numpy arrays over its element nodes (text, links, visibility, CSS boxes);
  its parts, pure functions over arrays and elements that know nothing of the model:
  :mod:`~wisdom_scrapy.page.parse` (body → tree, paragraph repair),
  :mod:`~wisdom_scrapy.page.tags` (tag tables), :mod:`~wisdom_scrapy.page.arrays` (tree
  arithmetic), :mod:`~wisdom_scrapy.page.tokens` (terms of the text pieces),
  :mod:`~wisdom_scrapy.page.text` (innerText), :mod:`~wisdom_scrapy.page.css` (the page's CSS
  boxes), :mod:`~wisdom_scrapy.page.links` (out-links), :mod:`~wisdom_scrapy.page.markup`
  (cleaned HTML);
* :mod:`~wisdom_scrapy.page.terms`: a page's terms (what the entropy store counts);
* :mod:`~wisdom_scrapy.page.urls`: URL helpers (a URL's site key, page turns).

Rules: the lowest floor: imports nothing of the package outside ``page``, and no Scrapy;
``model`` imports its parts, never the other way round (no cycle).
"""
