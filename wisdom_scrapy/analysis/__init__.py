"""One page analysed: its article, metadata, TOC links and role, as the crawl's items state them.

* :mod:`~wisdom_scrapy.analysis.page_analysis`: ``analyze_page`` (``wisdom_scrapy.analyze_page``)
  and the site view it corrects a page with; the article finder it starts from is
  :mod:`wisdom_scrapy.mining.density`;
* :mod:`~wisdom_scrapy.analysis.cleaners`: the other cleaners (``WISDOM_CLEANER``): what each
  keeps of a page;
* :mod:`~wisdom_scrapy.analysis.annotated`: one page's annotated HTML view
  (``scrapy wisdom-show``; the whole site's report is :mod:`wisdom_scrapy.report`);
* :mod:`~wisdom_scrapy.analysis.evaluation`: the measures the tests and benchmarks score with.

Rules: no Scrapy; imports ``mining``, ``segment``, ``store`` and ``page`` only — never the
engine, which calls it.
"""
