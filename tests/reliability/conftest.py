"""Fixtures of the reliability tests: a real documentation site served on 127.0.0.1, crawls of
it, and the comparison of term-entropy stores."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import PYTHON_DOC
from tests.crawling import Crawl, CrawlResult
from wisdom_scrapy.store import TermStore, open_store
from wisdom_scrapy.testing import serve_directory

# 42 pages of the Python documentation: enough for a crawl to be interrupted in the middle.
DOC_SECTIONS = ("tutorial", "faq", "using", "extending")

#: Settings of the crawls whose stores are compared: a deterministic page set (no focusing).
CRAWL_SETTINGS: dict[str, Any] = {"WISDOM_FOCUS": "off", "LOG_LEVEL": "INFO"}


@pytest.fixture(scope="session")
def doc_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not PYTHON_DOC.is_dir():
        pytest.fail(f"{PYTHON_DOC} is missing: apt-get install python3.11-doc", pytrace=False)
    root = tmp_path_factory.mktemp("pydoc")
    for name in ("index.html", "contents.html"):
        shutil.copy(PYTHON_DOC / name, root / name)
    for section in DOC_SECTIONS:
        shutil.copytree(PYTHON_DOC / section, root / section)
    return root


@pytest.fixture(scope="session")
def doc_url(doc_site: Path) -> Iterator[str]:
    """Start URL of the served site; one server for the session, so every crawl of it has the
    same site key (host and port) and their stores compare."""
    with serve_directory(doc_site) as base:
        yield base + "index.html"


def doc_pages(doc_site: Path) -> int:
    return sum(1 for _ in doc_site.rglob("*.html"))


def crawl(tmp_path: Path, start: str, store_uri: str, name: str = "site",
          **settings: Any) -> Crawl:
    """A crawl of ``start`` with the compared-crawl settings (not started)."""
    return Crawl("site", tmp_path, args={"url": start}, name=name,
                 settings={**CRAWL_SETTINGS, "WISDOM_STORE_URI": store_uri, **settings})


def wait_until(condition: Callable[[], bool], timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what or condition}")
        time.sleep(0.05)


def store_state(uri: str) -> dict[str, Any]:
    """Everything a store holds for its one site: N, TF and S per term, the link graph."""
    with open_store(uri) as store:
        return _state(store)


def _state(store: TermStore) -> dict[str, Any]:
    (site,) = store.sites()
    terms, tf, s = store.all_term_sums(site)
    return {
        "pages": store.page_count(site),
        "tf": dict(zip(terms, tf.tolist(), strict=True)),
        "s": dict(zip(terms, np.round(s, 6).tolist(), strict=True)),
        "links": store.links(site),
    }


def assert_same_store(state: dict[str, Any], reference: dict[str, Any]) -> None:
    assert state["pages"] == reference["pages"]
    assert set(state["links"]) == set(reference["links"])
    assert state["links"] == reference["links"]
    assert state["tf"] == reference["tf"]
    assert state["s"] == pytest.approx(reference["s"], rel=1e-9)


def assert_clean(result: CrawlResult) -> None:
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log, result.log[-5000:]
    assert not [k for k in result.stats if k.startswith("wisdom/errors")], result.stats


@pytest.fixture(scope="session")
def reference(doc_url: str, tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[CrawlResult, dict[str, Any]]:
    """An uninterrupted crawl of the site, nothing failing: its result and its store."""
    tmp = tmp_path_factory.mktemp("reference")
    uri = f"sqlite:///{tmp / 'store.db'}"
    result = crawl(tmp, doc_url, uri).start().wait(300)
    assert_clean(result)
    return result, store_state(uri)
