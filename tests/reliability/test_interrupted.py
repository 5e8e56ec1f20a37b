"""Interrupted crawls: a crawl with ``JOBDIR`` stopped by SIGINT (graceful) or SIGKILL, then
resumed with the same JOBDIR and store. The store must equal an uninterrupted crawl's, no page
may be counted twice, and the late work (pages held for warm-up, TOC pages waiting for their
targets) must not be lost."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.crawling import CrawlResult
from tests.reliability.conftest import (
    assert_clean,
    assert_same_store,
    children_of,
    crawl,
    process_gone,
    store_state,
    wait_until,
)
from tests.reliability.freeze import (
    AT_ITEM_SETTING,
    NOTE_SETTING,
    STORE_SETTING,
    FreezeAtUnwrittenItem,
)
from wisdom_scrapy.resume import KIND
from wisdom_scrapy.store import open_store

pytestmark = pytest.mark.crawl
FREEZE = f"{FreezeAtUnwrittenItem.__module__}.{FreezeAtUnwrittenItem.__qualname__}"


def _pages(result: CrawlResult) -> list[str]:
    return [i["url"] for i in result.items if "tocs" not in i]


def _recorded(path: Path) -> tuple[set[str], set[str]]:
    """(URLs recorded as waiting, URLs stored) in the SQLite store at ``path``, read while the
    crawl writes it; empty sets while it cannot be read."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1) as db:
            recorded = {u for (u,) in db.execute(
                "SELECT key FROM records WHERE kind = ? AND value != x''", (KIND,))}
            return recorded, {u for (u,) in db.execute("SELECT url FROM pages")}
    except sqlite3.Error:
        return set(), set()


def _fed(path: Path) -> int:
    """Pages fed: those stored and those recorded as not written yet (or waiting)."""
    recorded, stored = _recorded(path)
    return len(recorded | stored)


def _interrupted(tmp_path: Path, doc_url: str, sig: int) -> tuple[str, CrawlResult]:
    """A JOBDIR crawl sent ``sig`` once 15 pages are fed (during warm-up: pages are held in
    memory then): (store URI, its result)."""
    path = tmp_path / "store.db"
    first = crawl(tmp_path, doc_url, f"sqlite:///{path}", name="first", **_jobdir(tmp_path))
    first.start()
    wait_until(lambda: _fed(path) >= 15, what="15 pages fed")
    assert first.process is not None
    first.process.send_signal(sig)
    return f"sqlite:///{path}", first.wait(120)


def _jobdir(tmp_path: Path) -> dict[str, str]:
    # a fixed warm-up: the derived one ends at the site's third page, and these tests need
    # pages held in memory when the signal comes
    return {"JOBDIR": str(tmp_path / "job"), "WISDOM_WARMUP_PAGES": "32"}


def test_sigint_then_resume(reference, doc_url, tmp_path: Path) -> None:
    """Ctrl-C during warm-up (pages held in memory), then the same command again: the items of
    both runs together are the uninterrupted crawl's, each once, and so is the store."""
    uri, one = _interrupted(tmp_path, doc_url, signal.SIGINT)
    assert one.returncode == 0, one.log[-3000:]
    assert "shutdown" in one.log
    two = crawl(tmp_path, doc_url, uri, name="second", **_jobdir(tmp_path)).start().wait(300)
    assert_clean(two)
    both = Counter(_pages(one) + _pages(two))
    assert max(both.values()) == 1, [u for u, n in both.items() if n > 1]  # none twice
    assert sorted(both) == sorted(_pages(reference[0]))  # none lost
    assert_same_store(store_state(uri), reference[1])


def _recrawl(tmp_path: Path, doc_url: str, uri: str) -> None:
    """After a SIGKILL, Scrapy's own JOBDIR state is torn: its seen-requests file is buffered
    (a part of it reaches the disk) and its queue is saved only at close, so requests queued but
    not yet fetched are lost to the resumed crawl, while their fingerprints may be marked seen.
    Scrapy does not promise more; wisdom_scrapy's part is the pages it fed. So a plain crawl of
    the site (no JOBDIR) with the same store completes it: the pages stored already are fed again
    unchanged (never counted twice), the rest for the first time; then the store must equal an
    uninterrupted crawl's."""
    third = crawl(tmp_path, doc_url, uri, name="third").start().wait(300)
    assert_clean(third)


def test_sigkill_then_resume(reference, doc_url, tmp_path: Path) -> None:
    """SIGKILL leaves no chance to save anything. The pages that were waiting at the kill
    (recorded in the store as they started waiting) are fetched again by the resumed crawl and
    leave as items, each item once; the store counts no page twice (:func:`_recrawl`)."""
    uri, one = _interrupted(tmp_path, doc_url, signal.SIGKILL)
    assert one.returncode == -signal.SIGKILL
    with open_store(uri) as store:
        (site,) = store.sites()
        waiting = {u for u, v in store.records(site, KIND).items() if v}
    assert waiting  # the kill came during warm-up: pages were held
    two = crawl(tmp_path, doc_url, uri, name="second", **_jobdir(tmp_path)).start().wait(300)
    assert_clean(two)
    assert two.stats["wisdom/resumed_pages"] == len(waiting)
    pages = Counter(_pages(two))
    assert max(pages.values()) == 1 and waiting <= set(pages)
    _recrawl(tmp_path, doc_url, uri)
    assert_same_store(store_state(uri), reference[1])


def _stopped(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` is stopped (SIGSTOP); a crawl that ended without stopping fails."""
    assert process.poll() is None, "the crawl ended: no item left before its page was written"
    return Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


@pytest.mark.parametrize("workers", ["0", "2"], ids=["in process", "WISDOM_WORKERS=2"])
def test_sigkill_mid_batch_then_resume(reference, doc_url, tmp_path: Path, workers: str) -> None:
    """SIGKILL while pages whose items have left are fed but not written to the store yet (the
    store writes pages in batches: ``WISDOM_STORE_BATCH_PAGES``). Each such page was recorded
    as fed: the resumed crawl fetches it again, and the store ends equal to an uninterrupted
    crawl's. A test extension freezes the crawl (SIGSTOP) the moment an item leaves in that state
    (:mod:`tests.reliability.freeze`), whatever the machine's load; it is killed there. With
    worker processes analysing, no item leaves before its page is written: the kill comes at
    the 15th item, with pages in flight in the workers; the same holds, and the workers end
    with the crawl."""
    path, uri = tmp_path / "store.db", f"sqlite:///{tmp_path / 'store.db'}"
    # the derived warm-up: items leave early
    job = {"JOBDIR": str(tmp_path / "job"), "WISDOM_WORKERS": workers}
    note = tmp_path / "frozen-at.txt"
    # in process, an item leaves before its page is written; with workers none does: the
    # crawl is killed at its 15th item, analyses in flight in the workers (see freeze.py)
    freeze = {"EXTENSIONS": {"tests.crawling.StatsDump": 0, FREEZE: 0},
              STORE_SETTING: str(path), NOTE_SETTING: str(note),
              AT_ITEM_SETTING: 0 if workers == "0" else 15}
    first = crawl(tmp_path, doc_url, uri, name="first", **job, **freeze).start()
    assert first.process is not None
    wait_until(lambda: _stopped(first.process), timeout=240, what="the crawl to freeze")
    recorded, stored = _recorded(path)
    unwritten = set(note.read_text().split()) - stored
    helpers = children_of(first.process.pid)
    first.process.send_signal(signal.SIGKILL)
    first.process.send_signal(signal.SIGCONT)
    assert first.wait(60).returncode == -signal.SIGKILL
    if workers == "0":
        assert unwritten, "frozen with no page left unwritten: nothing tested"
    else:
        assert len(helpers) >= 2, "the worker processes were running"
        wait_until(lambda: all(map(process_gone, helpers)), timeout=30, what="the workers to end")
    assert unwritten <= recorded  # every page fed is stored or recorded
    two = crawl(tmp_path, doc_url, uri, name="second", **job).start().wait(300)
    assert_clean(two)
    assert two.stats["wisdom/resumed_pages"] == len(recorded)
    _recrawl(tmp_path, doc_url, uri)
    assert_same_store(store_state(uri), reference[1])
