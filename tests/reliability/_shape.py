"""The documented shape of wisdom_scrapy's items (items.py), checked on exported JSON and on
item objects alike."""

from __future__ import annotations

import math
from typing import Any

from itemadapter import ItemAdapter

from wisdom_scrapy.items import ArticleItem, PageItem, SiteStructureItem, TocItem

_BY_ROLE = {"article": ArticleItem, "toc": TocItem, "other": PageItem, "": PageItem}


def item_class(data: dict[str, Any]) -> type:
    if "tocs" in data:
        return SiteStructureItem
    return _BY_ROLE[data["role"]]


def check_shape(item: Any) -> dict[str, Any]:
    """Assert that ``item`` (an item object or its exported dict) has its class' documented
    fields, of the documented types; return it as a dict."""
    data = dict(ItemAdapter(item)) if not isinstance(item, dict) else item
    cls = item_class(data) if isinstance(item, dict) else type(item)
    # the class' fields as itemadapter shows them (a page item's "extra" dict is not one: its
    # entries, the spider's fields, are; these spiders set none)
    assert set(data) == set(ItemAdapter.get_field_names_from_class(cls) or ()), (cls, sorted(data))
    if cls is SiteStructureItem:
        assert isinstance(data["pages"], int) and isinstance(data["tocs"], list)
        return data
    assert isinstance(data["url"], str) and data["url"].startswith(("http://", "https://"))
    assert isinstance(data["title"], str)
    for score in ("hub", "authority"):
        assert data[score] is None or (isinstance(data[score], float)
                                       and math.isfinite(data[score]) and data[score] >= 0)
    if cls in (ArticleItem, TocItem):
        assert isinstance(data["single_page"], bool)
        assert all(isinstance(v, float) and math.isfinite(v) for v in data["entropy"].values())
        for block in data["blocks"]:
            assert block["kind"] in ("article", "toc", "metadata")
            assert isinstance(block["path"], str)
    if cls is ArticleItem:
        assert isinstance(data["text"], str) and isinstance(data["html"], str)
        assert all(isinstance(m, str) for m in data["metadata"])
    if cls is TocItem:
        for link in data["links"]:
            assert set(link) == {"url", "text", "weight", "block"}
            assert 0.0 <= link["weight"] <= 1.0 and 0 <= link["block"] < len(data["blocks"])
    return data
