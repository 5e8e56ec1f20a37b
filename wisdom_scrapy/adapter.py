"""The ``itemadapter`` view of the page items: spider fields (``extra``) as top-level fields.

Kept out of :mod:`wisdom_scrapy.items`: ``itemadapter`` imports Scrapy, and the items belong to
the engine, which imports none. The package registers it the moment ``itemadapter`` is imported
(at once when it already is; otherwise a finder in ``wisdom_scrapy/__init__.py`` waits for it),
so every reader — feed exports, pipelines, contracts, a user's own ``ItemAdapter`` — sees the
same fields whatever the import order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, KeysView
from types import MappingProxyType
from typing import Any

from itemadapter import ItemAdapter
from itemadapter.adapter import DataclassAdapter

from wisdom_scrapy.items import PAGE_ITEMS

__all__ = ["PageItemAdapter"]


class PageItemAdapter(DataclassAdapter):
    """``itemadapter`` view of the page items with their spider fields at the top level.

    The dataclass fields come first, then the entries of ``extra`` (the ``extra`` field itself
    is not shown); setting a name the dataclass lacks adds it to ``extra``. Registered first in
    ``ItemAdapter.ADAPTER_CLASSES`` (itemadapter's documented extension point) when this module
    is imported; it only claims the page items.
    """

    @classmethod
    def is_item(cls, item: Any) -> bool:
        return isinstance(item, PAGE_ITEMS)

    @classmethod
    def is_item_class(cls, item_class: type) -> bool:
        return isinstance(item_class, type) and issubclass(item_class, PAGE_ITEMS)

    @classmethod
    def get_field_names_from_class(cls, item_class: type) -> list[str] | None:
        return [f.name for f in dataclasses.fields(item_class) if f.name != "extra"]

    def _own(self, name: str) -> bool:
        return name in self._fields_dict and name != "extra"

    def get_field_meta(self, name: str) -> MappingProxyType[str, Any]:
        """A dataclass field's metadata; a spider field has none (feed exporters ask)."""
        return super().get_field_meta(name) if self._own(name) else MappingProxyType({})

    def field_names(self) -> KeysView[str]:
        names = [n for n in self._fields_dict if n != "extra"]
        return KeysView(dict.fromkeys([*names, *self.item.extra]))

    def __getitem__(self, name: str) -> Any:
        if self._own(name):
            return getattr(self.item, name)
        return self.item.extra[name]

    def __setitem__(self, name: str, value: Any) -> None:
        if self._own(name):
            setattr(self.item, name, value)
        elif name == "extra":
            raise KeyError("extra holds the spider fields; set them by their own names")
        else:
            self.item.extra[name] = value

    def __delitem__(self, name: str) -> None:
        if self._own(name):
            super().__delitem__(name)
        else:
            del self.item.extra[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.field_names())

    def __len__(self) -> int:
        return len(self.field_names())


if PageItemAdapter not in ItemAdapter.ADAPTER_CLASSES:
    ItemAdapter.ADAPTER_CLASSES.appendleft(PageItemAdapter)  # type: ignore[attr-defined]
