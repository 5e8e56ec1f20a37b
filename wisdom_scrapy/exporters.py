"""A CSV feed of every item the crawl emits, losing nothing.

Scrapy's ``CsvItemExporter`` takes its columns from the first item when ``FEED_EXPORT_FIELDS``
(or the feed's ``fields``) does not name them, so in one CSV of articles, TOC pages and the site
structure the fields of the later classes are dropped ("CSVExporter dropped fields ['links']")
and a spider field first set on a later item too; it writes a list of records or a dict as its
Python ``repr``. Without named fields, :class:`WisdomCsvItemExporter` writes the rows to a
temporary file as they come and the header at the end, with the union of the fields the items
had (in the order first seen): no field is dropped and memory does not grow with the feed.
Lists and dicts are JSON. The large fields ``WISDOM_ITEM_FIELDS`` leaves unfilled (``html``,
``blocks``, ``features``) are no columns, since they are empty on every row. Named fields keep
Scrapy's behaviour, streamed, with the same JSON values.

The add-on makes it the ``csv`` exporter (``FEED_EXPORTERS``) unless the project sets its own.
"""

from __future__ import annotations

import json
import tempfile
from typing import IO, TYPE_CHECKING, Any

from scrapy.exporters import CsvItemExporter

from wisdom_scrapy.items import HEAVY_FIELDS
from wisdom_scrapy.settings import WisdomSettings

if TYPE_CHECKING:
    from collections.abc import Mapping
    from io import BytesIO

    from scrapy.crawler import Crawler

__all__ = ["WisdomCsvItemExporter"]


def json_cell(value: Any) -> Any:
    """A list, tuple or dict as JSON (UTF-8 text as it is); any other value unchanged."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


class WisdomCsvItemExporter(CsvItemExporter):
    """``CsvItemExporter`` whose columns are every field any item had (module docstring)."""

    def __init__(self, file: BytesIO, *, unfilled: frozenset[str] = frozenset(),
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(file, **kwargs)
        #: fields that are empty on every item (the large fields the settings leave unfilled)
        self.unfilled = unfilled
        self._columns: dict[str, None] = {}
        self._spool: IO[str] | None = None

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, file: BytesIO, **kwargs: Any
    ) -> WisdomCsvItemExporter:
        filled = WisdomSettings.from_settings(crawler.settings).item_fields
        return cls(file, unfilled=frozenset(HEAVY_FIELDS - filled), **kwargs)

    def serialize_field(self, field: Mapping[str, Any], name: str, value: Any) -> Any:
        serializer = field.get("serializer")
        return serializer(value) if serializer else json_cell(value)

    def export_item(self, item: Any) -> None:
        if self.fields_to_export:  # named columns: Scrapy's streamed rows
            super().export_item(item)
            return
        fields = self.get_serialized_fields(item, default_value="", include_empty=True)
        row = {name: value for name, value in fields if name not in self.unfilled}
        self._columns.update(dict.fromkeys(row))
        if self._spool is None:
            self._spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._spool.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")

    def finish_exporting(self) -> None:
        if self._spool is not None:
            self._write_spooled(self._spool)
            self._spool.close()
            self._spool = None
        super().finish_exporting()

    def _write_spooled(self, spool: IO[str]) -> None:
        columns = list(self._columns)
        if self.include_headers_line:
            self.csv_writer.writerow(columns)
        spool.seek(0)
        for line in spool:
            row = json.loads(line)
            self.csv_writer.writerow(list(self._build_row(row.get(c, "") for c in columns)))
