"""Test-only extension: freezes the crawl (SIGSTOP to its own process) the first time an item
leaves while its page is not in the SQLite store yet (fed, analysed and emitted, but still in
the write-behind queue), or at the ``TEST_FREEZE_AT_ITEM``-th item, whichever comes first. A
test then finds the crawl in that state whatever the machine's load, instead of polling for
it, and kills it there. The URL of every item that left is appended to ``TEST_FREEZE_NOTE``.

With analysis workers no item leaves before its page is written (the worker's analysis reads
the store, which writes the queue first), so those crawls freeze at an item count."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: Settings: the store's file, the file item URLs are appended to, the item count to freeze at.
STORE_SETTING, NOTE_SETTING, AT_ITEM_SETTING = (
    "TEST_FREEZE_STORE", "TEST_FREEZE_NOTE", "TEST_FREEZE_AT_ITEM")


class FreezeAtUnwrittenItem:
    def __init__(self, store: Path, note: Path, at_item: int) -> None:
        self.store, self.note, self.at_item = store, note, at_item
        self.items = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FreezeAtUnwrittenItem:
        store, note = crawler.settings.get(STORE_SETTING), crawler.settings.get(NOTE_SETTING)
        if not (store and note):
            raise NotConfigured(f"{STORE_SETTING} and {NOTE_SETTING} are both needed")
        at_item = crawler.settings.getint(AT_ITEM_SETTING, 0)
        extension = cls(Path(store), Path(note), at_item)
        crawler.signals.connect(extension.scraped, signal=signals.item_scraped)
        return extension

    def scraped(self, item: Any) -> None:
        fields = ItemAdapter(item)
        url = fields.get("url")
        if not url or "tocs" in fields:
            return
        with self.note.open("a") as note:
            note.write(url + "\n")
        self.items += 1
        if self.items == self.at_item or not self._stored(url):
            os.kill(os.getpid(), signal.SIGSTOP)

    def _stored(self, url: str) -> bool:
        """Whether the store holds ``url``'s page (True while it cannot be read: no freeze)."""
        try:
            with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=1) as db:
                row = db.execute("SELECT 1 FROM pages WHERE url = ?", (url,)).fetchone()
                return row is not None
        except sqlite3.Error:
            return True
