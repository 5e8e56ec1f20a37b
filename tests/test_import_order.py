"""``ItemAdapter`` gives a page item the same shape whatever was imported first (issue 35):
each order runs in a fresh interpreter, since an import happens once per process."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

pytestmark = pytest.mark.crawl  # each test starts a fresh interpreter

ORDERS = {
    "package, then itemadapter": ["from wisdom_scrapy import PageItem, TocItem",
                                  "from itemadapter import ItemAdapter"],
    "itemadapter, then package": ["from itemadapter import ItemAdapter",
                                  "from wisdom_scrapy import PageItem, TocItem"],
    "package, scrapy, itemadapter": ["import wisdom_scrapy.items",
                                     "import scrapy",
                                     "from wisdom_scrapy import PageItem, TocItem",
                                     "from itemadapter import ItemAdapter"],
}  # fmt: skip

SHOW = """
print(repr(dict(ItemAdapter(PageItem(url="http://a.test/", category="news")))))
print(repr(sorted(ItemAdapter(TocItem(url="http://a.test/t", title="t", extra={"section": "s"})))))
"""


def _shapes(lines: list[str]) -> list[object]:
    out = subprocess.run(
        [sys.executable, "-c", "\n".join(lines) + SHOW], capture_output=True, text=True, check=True
    ).stdout
    return [ast.literal_eval(line) for line in out.splitlines()]


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_spider_fields_are_top_level_whatever_the_import_order(order: str) -> None:
    page, toc_fields = _shapes(ORDERS[order])
    assert page == {
        "url": "http://a.test/", "title": "", "role": "", "hub": None, "authority": None,
        "category": "news",
    }  # fmt: skip
    assert "section" in toc_fields and "extra" not in toc_fields


def test_the_package_alone_still_imports_no_scrapy() -> None:
    """The registration waits for itemadapter: importing the package does not pull it in."""
    (loaded,) = _shapes([
        "import sys, wisdom_scrapy",
        "print(repr(sorted(m for m in ('scrapy', 'itemadapter') if m in sys.modules)))",
        "raise SystemExit",
    ])  # fmt: skip
    assert loaded == []
