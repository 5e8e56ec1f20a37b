"""The table of pages in flight (:mod:`wisdom_scrapy.in_flight`): one record a URL through the
steps of a page's life, the model let go with its response, a record gone once its page is done.
Real Scrapy responses and real page models; the garbage collector's own timing is taken out
(``gc.collect()``) where a response is let go."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from scrapy.http import HtmlResponse

from sample_project.demo_site import build_demo_site
from wisdom_scrapy import in_flight
from wisdom_scrapy.engine.link_graph import PageLinks
from wisdom_scrapy.engine.waits import WaitingPage
from wisdom_scrapy.in_flight import LinkedPage, PagesInFlight
from wisdom_scrapy.items import PageItem
from wisdom_scrapy.page.model import PageModel

URL = "http://site.test/a.html"
BODY = b"<html><body><h1>A</h1><p>Some words of the page.</p></body></html>"


def _fetch(url: str = URL) -> tuple[HtmlResponse, PageModel]:
    response = HtmlResponse(url, body=BODY, encoding="utf-8")
    return response, PageModel.from_tree(response.selector.root, url)


def _ready(url: str = URL) -> WaitingPage:
    return WaitingPage("site.test", url, None, "A")


def test_a_response_let_go_inside_a_step_loses_no_other_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A collection may run at any allocation of a step, and let another response of the same
    URL go then (a URL requested with ``dont_filter``): here while the second response's
    entry is made. Its model stays; the first one's goes."""
    table = PagesInFlight()
    first = [_fetch()]
    table.fetched(*first[0])
    gone = weakref.ref(first[0][1])
    made = in_flight._Fetch

    def collecting(*args: object) -> object:
        first.clear()
        gc.collect()
        return made(*args)

    monkeypatch.setattr(in_flight, "_Fetch", collecting)
    response, model = _fetch()
    table.fetched(response, model)
    assert gone() is None
    assert table.model(response) is model and table.modelled_urls() == [URL]


def test_the_model_lives_as_long_as_its_response_and_no_longer() -> None:
    table = PagesInFlight()
    response, model = _fetch()
    table.fetched(response, model)
    assert table.model(response) is model
    assert table.modelled_urls() == [URL]
    other, _ = _fetch()  # the same URL, another response: not modelled
    assert table.model(other) is None
    gone = weakref.ref(model)
    del response, model
    gc.collect()
    assert gone() is None  # the table kept it no longer than its response
    assert table.modelled_urls() == []
    assert len(table) == 0  # the table's next step lets the record go


def test_the_linked_page_lives_with_its_model_and_only_for_a_modelled_response() -> None:
    table = PagesInFlight()
    response, model = _fetch()
    other, _ = _fetch()  # the same URL, not modelled: it keeps nothing
    none = np.zeros(0, np.int64)
    record = PageLinks(URL, none.astype(np.int32), *[none] * 4, *[none.astype(np.int32)] * 2,
                       none.astype(np.uint8), none)
    linked = LinkedPage("site.test", record, np.zeros(0), np.zeros(0, bool), 0.0)
    assert table.linked(response) is None
    table.fetched(response, model)
    assert table.link(response, linked) is linked and table.linked(response) is linked
    table.link(other, linked)
    assert table.linked(other) is None
    gone = weakref.ref(linked.alpha)  # (a slotted LinkedPage takes no weak reference)
    del response, model, linked
    gc.collect()
    assert gone() is None  # let go with its response, as the model
    assert len(table) == 0


def test_two_responses_of_one_url_each_keep_their_own_model() -> None:
    table = PagesInFlight()
    first, first_model = _fetch()
    second, second_model = _fetch()
    table.fetched(first, first_model)
    table.fetched(second, second_model)
    assert table.model(first) is first_model and table.model(second) is second_model
    del second
    gc.collect()
    assert table.model(first) is first_model
    assert table.modelled_urls() == [URL]


def test_a_page_goes_through_its_steps_and_leaves_once_its_item_passed() -> None:
    table = PagesInFlight()
    response, model = _fetch()
    table.fetched(response, model)
    item = PageItem(url=URL, title="A")
    table.taken(item)
    del response
    gc.collect()
    assert URL in table  # the spider's item is held: still in flight
    ready = _ready()
    assert table.released(ready) is item
    assert table.released(_ready("http://site.test/c.html")) is None  # never taken
    assert table.unfinished() == [URL, "http://site.test/c.html"]
    assert table.ticket(URL) is ready
    assert table.ticket(URL) is None  # given once
    assert URL in table  # its item has not passed the pipelines yet
    assert table.passed(URL)
    assert not table.passed(URL)
    assert URL not in table
    assert table.unfinished() == ["http://site.test/c.html"]


def test_pages_being_submitted_are_counted_and_listed_in_the_order_they_began() -> None:
    async def main() -> None:
        table = PagesInFlight()
        urls = ["http://site.test/z.html", "http://site.test/a.html"]
        for url in urls:
            table.taken(PageItem(url=url))
        done = asyncio.get_running_loop().create_future()
        for url in reversed(urls):
            table.submit(url, done)
        assert table.submitting == 2
        assert table.unfinished() == urls[::-1]
        assert table.submitting_tasks() == [done, done]
        assert table.untaken(urls[0]) is not None
        table.submitted(urls[0])
        table.submitted(urls[0])  # once only
        assert table.submitting == 1
        assert urls[0] not in table
        done.cancel()

    asyncio.run(main())


_CRAWLS = """
import gc, sys
from scrapy.crawler import CrawlerRunner
from scrapy.utils.reactor import install_reactor
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
from twisted.internet import reactor, defer
from sample_project.spiders.demo import DemoSpider
from wisdom_scrapy.extension import WisdomExtension

@defer.inlineCallbacks
def main():
    runner = CrawlerRunner({"ADDONS": {"wisdom_scrapy.Addon": 500}, "LOG_LEVEL": "ERROR",
                            "WISDOM_STORE_URI": "memory://", "TELNETCONSOLE_ENABLED": False})
    for stop in ({}, {"CLOSESPIDER_ITEMCOUNT": 3}):  # to its end; closed before going idle
        crawler = runner.create_crawler(DemoSpider)
        crawler.settings.setdict(stop)
        yield runner.crawl(crawler, site_dir=sys.argv[1], port="0")
        gc.collect()
        runtime = crawler.get_extension(WisdomExtension).runtime
        print(crawler.stats.get_value("item_scraped_count", 0) > 0, len(runtime.in_flight),
              flush=True)
    reactor.stop()

reactor.callWhenRunning(main)
reactor.run()
"""


@pytest.mark.crawl
def test_a_crawl_leaves_no_page_in_flight(tmp_path: Path) -> None:
    """Real crawls of the demo site, one to its end and one closed before going idle: once it
    closed, every page's record has left the table (its item passed the pipelines, its
    response was let go): nothing in flight is kept past its page."""
    build_demo_site(tmp_path)
    done = subprocess.run([sys.executable, "-c", _CRAWLS, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "0", "True", "0"], done.stderr[-3000:]
