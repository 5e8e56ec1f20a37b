"""Feeding pages into the term-entropy store: what the spider middleware does for each response.

A page's terms and out-links come from its :class:`~wisdom_scrapy.dom.PageModel`, the model the
analysis works on, so there is one definition of a page's visible text and it is computed once
per page. In a crawl the model is built from the tree Scrapy already parsed
(``response.selector.root``): the page is parsed once however many stages look at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wisdom_scrapy.dom import PageModel
from wisdom_scrapy.urls import host_key

if TYPE_CHECKING:
    from lxml import etree

    from wisdom_scrapy.store.base import TermStore

__all__ = ["FeedResult", "feed_model", "feed_page", "feed_tree"]


@dataclass(frozen=True)
class FeedResult:
    """What feeding one page did: ``changed`` is False for an unchanged, already stored page."""

    site: str
    changed: bool
    terms: int
    links: int


def feed_model(store: TermStore, model: PageModel, *, site: str | None = None) -> FeedResult:
    """Add a modelled page's term counts and out-links to ``store`` under ``site``.

    ``site`` defaults to the page's host (with port). Pages with no visible term still count as
    pages of the site (N grows, as WISDOM's entropy over the site's pages requires).
    """
    site = site or host_key(model.url)
    counts = model.page_counts()
    links = [(link.url, link.text) for link in model.links()]
    changed = store.add_page(site, model.url, counts, links)
    return FeedResult(site, changed, sum(counts.values()), len(links))


def feed_tree(
    store: TermStore,
    root: etree._Element,
    url: str,
    *,
    site: str | None = None,
    keep_numbers: bool = False,
) -> FeedResult:
    """Feed one parsed page (an lxml tree, e.g. ``response.selector.root``)."""
    model = PageModel.from_tree(root, url, keep_numbers=keep_numbers)
    return feed_model(store, model, site=site)


def feed_page(
    store: TermStore,
    html: str | bytes,
    url: str,
    *,
    site: str | None = None,
    keep_numbers: bool = False,
) -> bool:
    """Feed a saved page (what the middleware does for a response). False if unchanged or empty.

    An empty or unparsable page is not fed (a crawl counts it under ``wisdom/skipped/empty``).
    """
    model = PageModel.from_html(html, url, keep_numbers=keep_numbers)
    if model.n == 0:
        return False
    return feed_model(store, model, site=site).changed
