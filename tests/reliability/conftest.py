"""Fixtures of the reliability tests: a real documentation site served on 127.0.0.1, crawls of
it, and the comparison of term-entropy stores."""

from __future__ import annotations

import errno
import resource
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import PYTHON_DOC
from tests.crawling import Crawl, CrawlResult
from wisdom_scrapy.store import TermStore, open_store
from wisdom_scrapy.store.base import decode_record
from wisdom_scrapy.testing import serve_directory

# 42 pages of the Python documentation: enough for a crawl to be interrupted in the middle.
DOC_SECTIONS = ("tutorial", "faq", "using", "extending")

#: Settings of the crawls whose stores are compared: a deterministic page set (no focusing).
CRAWL_SETTINGS: dict[str, Any] = {"WISDOM_FOCUS": "off", "LOG_LEVEL": "INFO",
                                  # every field, so the shape checks see them all
                                  "WISDOM_ITEM_FIELDS": "html,blocks,features"}


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


def children_of(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def process_gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie not reaped yet counts as gone)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


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


def reference_path(reference: tuple[CrawlResult, dict[str, Any]]) -> Path:
    """The SQLite file of the :func:`reference` crawl."""
    return Path(reference[0].log.split("sqlite:///", 1)[1].split("'", 1)[0])


def fault_free_state(reference: tuple[CrawlResult, dict[str, Any]], urls: set[str]
                     ) -> dict[str, Any]:
    """What a fault-free store of only the pages ``urls`` holds: those pages' term counts and
    links, as the reference crawl stored them, fed into a fresh store."""
    with sqlite3.connect(reference_path(reference)) as db:
        names = dict(db.execute("SELECT id, term FROM terms"))
        records = dict(db.execute("SELECT url, record FROM pages"))
    links = reference[1]["links"]
    with open_store("memory://") as store:
        for url in sorted(urls):
            ids, tfs = decode_record(records[url])
            counts = {names[i]: n for i, n in zip(ids.tolist(), tfs.tolist(), strict=True)}
            store.add_page("site", url, counts, links[url])
        return _state(store)


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


class SmallDisk:
    """A real file system that fills up: a tmpfs of ``size`` mounted by the test (it needs root,
    which the test machines and CI have), filled by a ballast file and freed by deleting it.
    Where mounting is refused, a plain directory whose "disk" is this process' RLIMIT_FSIZE
    (files cannot grow past their size at :meth:`fill`): only for the tests that write from
    their own process (``mounted`` False; crawl tests skip)."""

    def __init__(self, path: Path, size: str) -> None:
        self.path = path
        path.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                              capture_output=True, text=True, check=False)
        self.mounted = done.returncode == 0
        self.why_not = done.stderr.strip()
        self._limit = resource.getrlimit(resource.RLIMIT_FSIZE)

    def require_mount(self) -> None:
        if not self.mounted:
            pytest.skip(f"cannot mount a tmpfs for a full disk ({self.why_not}), and "
                        "RLIMIT_FSIZE cannot limit another process' writes alone")

    def fill(self) -> None:
        if not self.mounted:
            largest = max((f.stat().st_size for f in self.path.iterdir()), default=0)
            resource.setrlimit(resource.RLIMIT_FSIZE, (largest, self._limit[1]))
            return
        block = b"\0" * 4096
        with (self.path / "ballast").open("wb", buffering=0) as ballast:
            try:
                while True:
                    ballast.write(block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc

    def free(self) -> None:
        if not self.mounted:
            resource.setrlimit(resource.RLIMIT_FSIZE, self._limit)
            return
        (self.path / "ballast").unlink(missing_ok=True)

    def __enter__(self) -> SmallDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A 256 KiB real file system (see :class:`SmallDisk`)."""
    with SmallDisk(tmp_path / "disk", "256k") as disk:
        yield disk


@pytest.fixture
def roomy_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A 16 MiB real file system, room for a whole crawl's store until it is filled."""
    with SmallDisk(tmp_path / "disk", "16m") as disk:
        yield disk
