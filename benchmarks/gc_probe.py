"""What Python's cyclic garbage collector does during a crawl with the add-on.

    python benchmarks/gc_probe.py --site pydoc --marks 500
    python benchmarks/gc_probe.py --endless 3000 --marks 1000,3000

Crawls the served Python docs (``--site``, a directory or ``pydoc``) or the endless site of
:mod:`benchmarks.memory` (``--endless N``: one site never left, every per-page table grows)
with an extension, :class:`CollectorProbe`, that

* times every collection through :data:`gc.callbacks` (CPU of the crawl process from its
  start to its stop) and keeps what it found (``collected``), by generation;
* at each mark (HTML pages), counts the objects the collector tracks and does not keep frozen
  (:func:`gc.get_objects`), by type and by which part of the add-on's state reaches them (the
  parts of :func:`benchmarks.memory_probe.parts_of`; an object reached from two parts counts
  for the first), then saves the cyclic garbage waiting (one full collection with
  :data:`gc.DEBUG_SAVEALL`: its count and types) and times one more full collection, which
  then finds nothing: the walk alone.

``--work`` also counts, before every collection, the objects and references of the generations
it walks (slow, but a measure of its work that the machine's load does not change). Prints the
totals by generation, each full collection (page, ms, objects freed), and each mark's tables.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.memory import REPO_ROOT, EndlessSite
from benchmarks.memory_probe import _followed, parts_of

MARKS_SETTING = "GC_PROBE_MARKS"
OUT_SETTING = "GC_PROBE_OUT"
WORK_SETTING = "GC_PROBE_WORK"
TOP = 15


def tracked_by_part(extension: Any, alive: set[int]) -> dict[str, dict[str, int]]:
    """How many of the ``alive`` objects (ids) each part of the add-on's state reaches first, and
    the references a collection follows from them (``visits``: what a walk costs)."""
    seen: set[int] = {id(extension.crawler)}
    counts: dict[str, dict[str, int]] = {}
    for name, root in parts_of(extension):
        found, visits, stack = 0, 0, [root]
        while stack:
            obj = stack.pop()
            if id(obj) in seen or not _followed(obj) or not gc.is_tracked(obj):
                continue
            seen.add(id(obj))
            referents = gc.get_referents(obj)
            if id(obj) in alive:
                found += 1
                visits += len(referents)
            stack.extend(referents)
        if found:
            counts[name] = {"objects": found, "visits": visits}
    return counts


def largest(objects: list[Any], n: int = 8) -> list[str]:
    """The ``n`` objects with the most references (type, length, the type of their items)."""
    sized = sorted(objects, key=lambda o: len(gc.get_referents(o)), reverse=True)[:n]
    out = []
    for obj in sized:
        items = gc.get_referents(obj)
        kinds = collections.Counter(type(i).__qualname__ for i in items[:1000]).most_common(2)
        out.append(f"{type(obj).__qualname__}[{len(items)}] of {kinds}")
    return out


def walked(generation: int) -> tuple[int, int]:
    """The objects a collection of ``generation`` walks and the references it follows from
    them (each is visited a few times: a measure of its work that the machine's load does not
    change)."""
    objects = [o for g in range(generation + 1) for o in gc.get_objects(g)]
    return len(objects), sum(len(gc.get_referents(o)) for o in objects)


def census(extension: Any) -> dict[str, Any]:
    """The tracked objects not frozen: by type, the references they hold by type, the largest,
    and by the part of the add-on's state that reaches them."""
    objects = gc.get_objects()
    by_type = collections.Counter(type(o).__qualname__ for o in objects)
    visits: collections.Counter[str] = collections.Counter()
    for obj in objects:
        visits[type(obj).__qualname__] += len(gc.get_referents(obj))
    alive = {id(o) for o in objects}
    big = largest(objects)
    del objects
    parts = tracked_by_part(extension, alive)
    return {"tracked": len(alive), "frozen": gc.get_freeze_count(), "by_type": _top(by_type),
            "visits": _top(visits), "visits_total": sum(visits.values()), "largest": big,
            "by_part": dict(sorted(parts.items(), key=lambda p: -p[1]["visits"])[:TOP])}


def garbage_waiting() -> dict[str, Any]:
    """The cyclic garbage a full collection would free now: its count and types."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        types = collections.Counter(type(o).__qualname__ for o in gc.garbage)
        waiting = len(gc.garbage)
        gc.garbage.clear()
    finally:
        gc.set_debug(0)
    return {"garbage_waiting": waiting, "garbage_types": _top(types)}


def walk_alone() -> float:
    """CPU seconds of a full collection that finds nothing (the one before freed it all)."""
    gc.collect()
    started = time.process_time()
    gc.collect()
    return time.process_time() - started


def _top(counter: collections.Counter[str]) -> dict[str, int]:
    return dict(counter.most_common(TOP))


class CollectorProbe:
    """The collections of one crawl and the tracked objects at the marks, as JSON at stop."""

    def __init__(self, crawler: Any) -> None:
        from scrapy import signals

        self.crawler = crawler
        self.marks = [int(m) for m in crawler.settings.get(MARKS_SETTING).split(",")]
        self.out = Path(crawler.settings.get(OUT_SETTING))
        self.pages = 0
        self.started = 0.0
        self.collections: list[dict[str, Any]] = []
        self.at_marks: dict[int, dict[str, Any]] = {}
        self.measuring = False
        self.closed = False
        self.work = crawler.settings.getbool(WORK_SETTING)
        self.walked = (0, 0)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.response_received, signal=signals.response_received)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)
        gc.callbacks.append(self.timed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> CollectorProbe:
        return cls(crawler)

    def timed(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            if self.work and not self.measuring and not self.closed:
                self.walked = walked(info["generation"])
            self.started = time.process_time()
        elif not self.measuring and not self.closed:
            self.collections.append({
                "gen": info["generation"], "page": self.pages, "collected": info["collected"],
                "cpu": time.process_time() - self.started, "walked": self.walked,
            })  # fmt: skip

    def response_received(self, response: Any) -> None:
        if b"html" not in (response.headers.get("Content-Type") or b""):
            return
        self.pages += 1
        if self.pages in self.marks:
            self.measuring = True
            try:
                self.at_marks[self.pages] = self.measure()
            finally:
                self.measuring = False

    def measure(self) -> dict[str, Any]:
        """The tracked objects now (:func:`census`), the garbage waiting, one walk alone."""
        from wisdom_scrapy.extension import WisdomExtension

        figures = census(WisdomExtension.of(self.crawler))
        figures.update(garbage_waiting())
        figures["walk_s"] = walk_alone()
        return figures

    def spider_closed(self) -> None:
        """The collections of the crawl end here (the tuning's last one may count or not)."""
        self.closed = True

    def engine_stopped(self) -> None:
        gc.callbacks.remove(self.timed)
        self.out.write_text(json.dumps({"pages": self.pages, "collections": self.collections,
                                        "marks": self.at_marks}))  # fmt: skip


def report(data: dict[str, Any]) -> None:
    """The collections by generation, then each mark's tables."""
    pages, runs = data["pages"], data["collections"]
    print(f"{pages} HTML pages")
    print("| generation | collections | CPU s | ms a collection | ms a page | found a collection |")
    print("| --- | --- | --- | --- | --- | --- |")
    for gen in (0, 1, 2):
        mine = [c for c in runs if c["gen"] == gen]
        cpu = sum(c["cpu"] for c in mine)
        found = sum(c["collected"] for c in mine)
        n = max(len(mine), 1)
        print(f"| {gen} | {len(mine)} | {cpu:.2f} | {1e3 * cpu / n:.1f} | {1e3 * cpu / pages:.2f}"
              f" | {found / n:.0f} |")
    if any(c["walked"][0] for c in runs):
        for gen in (0, 1, 2):
            mine = [c["walked"] for c in runs if c["gen"] == gen]
            print(f"generation {gen} walked: {sum(w[0] for w in mine)} objects, "
                  f"{sum(w[1] for w in mine)} references")
    total = sum(c["cpu"] for c in runs)
    print(f"all collections: {total:.2f} s, {1e3 * total / pages:.2f} ms a page")
    full = [c for c in runs if c["gen"] == 2]
    print("full collections (page, ms, found):",
          ", ".join(f"{c['page']}:{1e3 * c['cpu']:.0f}:{c['collected']}" for c in full))
    report_marks(data["marks"])


def report_marks(marks: dict[str, dict[str, Any]]) -> None:
    """Each mark's tracked objects, garbage waiting and walk."""
    for mark, m in marks.items():
        print(f"\nat {mark} pages: {m['tracked']} tracked (not frozen), {m['frozen']} frozen; "
              f"one full collection (nothing to free) {1e3 * m['walk_s']:.1f} ms; "
              f"cyclic garbage waiting: {m['garbage_waiting']} objects")
        print(f"  {m['visits_total']} references from them")
        print("  largest: " + "; ".join(m["largest"]))
        for title in ("by_type", "visits", "by_part", "garbage_types"):
            print(f"  {title}: " + ", ".join(f"{k} {v}" for k, v in m[title].items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--site", default="pydoc", help="pydoc or a directory to serve")
    target.add_argument("--endless", type=int, metavar="N", help="the endless site, N pages")
    parser.add_argument("--marks", default="500", help="HTML pages at which to count")
    parser.add_argument("--work", action="store_true",
                        help="count the objects and references each collection walks (slow)")
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        settings = [
            "-s", f"WISDOM_STORE_URI=sqlite:///{out / 'probe.db'}",
            "-s", 'EXTENSIONS={"benchmarks.gc_probe.CollectorProbe": 0}',
            "-s", f"{MARKS_SETTING}={args.marks}", "-s", f"{OUT_SETTING}={out / 'gc.json'}",
            "-s", f"{WORK_SETTING}={args.work}",
            "-s", "LOG_LEVEL=WARNING", *[a for value in args.set for a in ("-s", value)],
        ]  # fmt: skip
        if args.endless:
            with EndlessSite() as start:
                (out / "start.txt").write_text(start + "\n")
                _crawl(["-a", f"urls={out / 'start.txt'}",
                        "-s", f"CLOSESPIDER_PAGECOUNT={args.endless}", *settings])  # fmt: skip
        else:
            from benchmarks.site_crawl import SITES
            from wisdom_scrapy.testing import serve_directory

            with serve_directory(SITES.get(args.site, Path(args.site)).resolve()) as base:
                _crawl(["-a", f"url={base}index.html", *settings])
        data = json.loads((out / "gc.json").read_text())
    if args.json:
        args.json.write_text(json.dumps(data))
    report(data)


def _crawl(arguments: list[str]) -> None:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "site", *arguments]
    subprocess.run(cmd, cwd=REPO_ROOT, check=True)


if __name__ == "__main__":
    main()
