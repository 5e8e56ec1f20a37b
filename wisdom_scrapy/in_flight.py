"""The pages in flight in one crawl process: one record per URL (:class:`PageInFlight`), in one
table (:class:`PagesInFlight`), from the response the feed middleware modelled to the item that
passed the item pipelines.

A page is in flight while any of these holds:

* **fetched**: a response of it that the feed modelled is still being processed: its
  :class:`~wisdom_scrapy.page.model.PageModel` serves the spider's output (the link structure,
  the focusing, the sitemap, the page's analysis), so its terms are computed once, and what the
  site's link structure learnt of it (:class:`LinkedPage`) is judged
  once for the feed and the focus middleware. Neither outlives its response: the record keeps
  the response weakly and lets both go the moment Scrapy lets the response go (a crawl holds the
  models of the responses in its scraper, not of every page it fetched);
* **taken**: the spider's PageItem of it, until the page leaves the extractor's waits;
* **submitting**: its analysis runs in a worker process, the crawl not waiting for it;
* **ticket**: it left the waits, until the item pipeline makes its cleaned item;
* **leaving**: it left the waits, until its item passed the item pipelines (scraped, dropped or
  failed): still pending for a resume (``JOBDIR``) and for the losses named at a forced stop.

A record whose page is none of these any more leaves the table. What a crawl keeps of a URL
after that (that it was taken once: ``WisdomRuntime.taken_urls``) is not in flight.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np
    from numpy.typing import NDArray
    from scrapy.http import Response

    from wisdom_scrapy.engine.link_graph import PageLinks
    from wisdom_scrapy.engine.waits import WaitingPage
    from wisdom_scrapy.items import PageItem
    from wisdom_scrapy.page.model import PageModel

__all__ = ["LinkedPage", "PageInFlight", "PagesInFlight"]


@dataclass(slots=True)
class LinkedPage:
    """What the site's link structure learnt of one fed page (the focus decides with it): kept
    with the page's model while its response is (:meth:`PagesInFlight.link`)."""

    site: str
    record: PageLinks
    alpha: NDArray[np.float64]  # LAMIS link weight of each link occurrence
    template: NDArray[np.bool_]  # occurrences in the site's template blocks
    hub: float  # the page's hub score relative to the site mean (estimated until analysed)


@dataclass(slots=True, eq=False)
class _Fetch:
    """A response of the page the feed modelled (weakly: the entry dies with the response), its
    model and, once the link structure recorded it, its linked page."""

    response: weakref.ref[Response]
    model: PageModel | None  # None: the response was let go, the entry leaves at the next step
    linked: LinkedPage | None = None


@dataclass(slots=True, eq=False)
class PageInFlight:
    """One page in flight (module docstring): what each stage between the feed and the item
    pipelines keeps of it."""

    url: str
    #: the responses of it the feed modelled, while Scrapy holds them (one, as a rule: a URL
    #: requested with ``dont_filter`` may be fetched twice at once)
    fetches: list[_Fetch] = field(default_factory=list)
    #: the spider's PageItem, until the page leaves the waits
    item: PageItem | None = None
    #: the task submitting its analysis to a worker process, until it is back
    submitting: asyncio.Future[None] | None = None
    #: the page left the waits: what its item is made from, until the item pipeline makes it
    ticket: WaitingPage | None = None
    #: the page left the waits and its item has not passed the item pipelines yet
    leaving: bool = False

    def fetch_of(self, response: Response) -> _Fetch | None:
        for fetch in self.fetches:
            if fetch.response() is response:
                return fetch
        return None

    @property
    def done(self) -> bool:
        """Whether the page is no longer in flight (module docstring)."""
        return not (self.fetches or self.item is not None or self.submitting is not None
                    or self.ticket is not None or self.leaving)  # fmt: skip


class PagesInFlight:
    """The table of the pages in flight, by URL, with the steps of a page's life in it: each
    step sets or clears one field of its record, and a record whose page is :attr:`done
    <PageInFlight.done>` leaves.

    A response let go calls back at any moment (a garbage collection may run at any
    allocation): the callback only lets the model go; the record itself leaves at the table's
    next step, so no step ever writes to a record that has just left."""

    def __init__(self) -> None:
        self._pages: dict[str, PageInFlight] = {}
        #: URLs whose responses were let go since the last step: their records may be done
        self._let_go: list[str] = []
        #: pages whose analysis is being submitted to a worker (the crawl waits past a bound)
        self.submitting = 0

    def __len__(self) -> int:
        self._prune()
        return len(self._pages)

    def __contains__(self, url: str) -> bool:
        return url in self._pages

    def get(self, url: str) -> PageInFlight | None:
        return self._pages.get(url)

    def _record(self, url: str) -> PageInFlight:
        self._prune()
        page = self._pages.get(url)
        if page is None:
            page = self._pages[url] = PageInFlight(url)
        return page

    def _left(self, page: PageInFlight) -> None:
        """``page`` changed: it leaves the table when it is done."""
        if page.done and self._pages.get(page.url) is page:
            del self._pages[page.url]

    def _prune(self) -> None:
        while self._let_go:
            page = self._pages.get(self._let_go.pop())
            if page is not None:
                page.fetches = [fetch for fetch in page.fetches if fetch.model is not None]
                self._left(page)

    # -- the steps of a page's life -----------------------------------------------------------

    def fetched(self, response: Response, model: PageModel) -> None:
        """The feed modelled ``response``: its model is kept until Scrapy lets it go."""
        url = response.url
        page = self._record(url)
        ref = weakref.ref(response, partial(self._response_gone, url))
        page.fetches.append(_Fetch(ref, model))

    def _response_gone(self, url: str, ref: weakref.ref[Response]) -> None:
        """The weak reference's callback: the model goes with its response; the entry and the
        record leave at the next step (class docstring). It changes no list: it may run
        while a step holds one (an ``append`` whose argument's allocation collected)."""
        page = self._pages.get(url)
        if page is not None:
            for fetch in page.fetches:
                if fetch.response is ref:
                    fetch.model = fetch.linked = None
            self._let_go.append(url)

    def _fetch(self, response: Response) -> _Fetch | None:
        page = self._pages.get(response.url)
        return None if page is None else page.fetch_of(response)

    def model(self, response: Response) -> PageModel | None:
        """The model the feed made of ``response``, while Scrapy holds it; None for a response
        it did not model."""
        fetch = self._fetch(response)
        return None if fetch is None else fetch.model

    def linked(self, response: Response) -> LinkedPage | None:
        """What the link structure learnt of ``response``'s page (:meth:`link`), while Scrapy
        holds the response; None before, or for a response the feed did not model."""
        fetch = self._fetch(response)
        return None if fetch is None else fetch.linked

    def link(self, response: Response, linked: LinkedPage) -> LinkedPage:
        """``response``'s page recorded in its site's link structure: kept with its model, as
        long as the response (a response the feed did not model keeps nothing)."""
        fetch = self._fetch(response)
        if fetch is not None:
            fetch.linked = linked
        return linked

    def taken(self, item: PageItem) -> None:
        """The spider's PageItem of the page, held until the page leaves the waits."""
        self._record(item.url).item = item

    def submit(self, url: str, task: asyncio.Future[None]) -> None:
        """The page's analysis is being submitted to a worker by ``task``. The page goes last
        in the table's order: :meth:`unfinished` lists the pages submitting as they began."""
        page = self._record(url)
        self._pages[url] = self._pages.pop(url)
        page.submitting = task
        self.submitting += 1

    def submitted(self, url: str) -> None:
        """The task submitting the page's analysis is over (its items are ready, or it failed)."""
        page = self._pages.get(url)
        if page is not None and page.submitting is not None:
            page.submitting = None
            self.submitting -= 1
            self._left(page)

    def submitting_tasks(self) -> list[asyncio.Future[None]]:
        return [p.submitting for p in list(self._pages.values()) if p.submitting is not None]

    def released(self, ready: WaitingPage) -> PageItem | None:
        """The page left the waits (``ready``): it is leaving, its ticket kept for the item
        pipeline; the spider's PageItem it was taken with, no longer held (None: none was)."""
        page = self._record(ready.url)
        item, page.item = page.item, None
        page.ticket = ready
        page.leaving = True
        return item

    def untaken(self, url: str) -> PageItem | None:
        """The spider's PageItem of a page that goes on unanalysed, no longer held."""
        page = self._pages.get(url)
        if page is None:
            return None
        item, page.item = page.item, None
        self._left(page)
        return item

    def ticket(self, url: str) -> WaitingPage | None:
        """The page's ticket, given once: its item is being made, or it was dropped before the
        item pipeline could make it."""
        page = self._pages.get(url)
        if page is None or page.ticket is None:
            return None
        ticket, page.ticket = page.ticket, None
        self._left(page)
        return ticket

    def passed(self, url: str) -> bool:
        """The page's item passed the item pipelines: whether the page was leaving (then it no
        longer is)."""
        page = self._pages.get(url)
        if page is None or not page.leaving:
            return False
        page.leaving = False
        self._left(page)
        self._prune()
        return True

    # -- reading the table --------------------------------------------------------------------

    def __iter__(self) -> Iterator[PageInFlight]:
        self._prune()
        return iter(list(self._pages.values()))  # a response let go may change it meanwhile

    def modelled_urls(self) -> list[str]:
        """URLs of the pages whose responses the feed modelled and Scrapy still holds."""
        return [page.url for page in self for fetch in page.fetches if fetch.model is not None]

    def unfinished(self) -> list[str]:
        """URLs of the pages whose items have not passed the item pipelines yet though they
        are not in the waits: being submitted to a worker (in the order they began), then
        leaving (by URL)."""
        pages = list(self)
        submitting = [page.url for page in pages if page.submitting is not None]
        return submitting + sorted(page.url for page in pages if page.leaving)

