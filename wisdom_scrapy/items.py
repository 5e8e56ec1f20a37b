"""Items wisdom_scrapy emits. Dataclasses, read through ``itemadapter`` like any Scrapy item,
so feed exports (``FEEDS`` with ``item_classes``) can split them into separate files."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PageItem"]


@dataclass
class PageItem:
    """One fetched HTML page, as a spider yields it for the analysis pipeline.

    ``url`` is the response URL; ``title`` the page's ``<title>``. The pipeline turns it into the
    cleaned items of later stages; without that pipeline it is exported as it is.
    """

    url: str
    title: str = ""
