"""What the add-on's tables grow by per page: deep sizes of each part of the crawl's state.

    python benchmarks/memory_probe.py --pages 6000 --marks 3000,6000

Crawls the endless site of :mod:`benchmarks.memory` (one site, never left: every per-page
table shows as growth) with an extension, :class:`TableProbe`, that measures at each mark
the deep size of each part of the add-on's state — the site's parts (link structure, waits,
report, sitemap …), the crawl's vocabulary, the TOC term index, the store's in-memory
parts — and prints, per part, its size at each mark and its growth in bytes a page between
the first and last mark. A part's size counts every object reachable from it that an earlier
part did not reach (numpy arrays with their data); functions, classes, modules and Scrapy's
objects are not followed, so the scheduler's queue is not counted. RSS is not measured here:
``benchmarks/memory.py`` does.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.memory import REPO_ROOT, EndlessSite

MARKS_SETTING = "PROBE_MARKS"
OUT_SETTING = "PROBE_OUT"
_NOT_FOLLOWED = (type, types.ModuleType, types.FunctionType, types.MethodType,
                 types.BuiltinFunctionType, types.FrameType, types.CodeType)


def _followed(obj: Any) -> bool:
    if isinstance(obj, _NOT_FOLLOWED):
        return False
    module = type(obj).__module__ or ""
    return not module.startswith(("scrapy", "twisted", "asyncio", "logging", "_asyncio"))


def deep_size(root: Any, seen: set[int]) -> int:
    """Bytes of every object reachable from ``root`` not in ``seen`` (which it fills)."""
    total, stack = 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or not _followed(obj):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def _fields(obj: Any) -> dict[str, Any]:
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if n not in names]
    return {n: getattr(obj, n) for n in names if hasattr(obj, n)}


def parts_of(extension: Any) -> list[tuple[str, Any]]:
    """The named parts measured, most specific first (a part shares nothing with a later one:
    what two parts share counts for the first)."""
    runtime, tracker = extension.runtime, extension.tracker
    named: list[tuple[str, Any]] = []
    for context in runtime.sites:
        for part, value in context.parts.items():
            named += [(f"site.{part.name}.{k}", v) for k, v in _fields(value).items()
                      if k != "recorder"]
            recorder = getattr(value, "recorder", None)
            if recorder is not None:
                named += [(f"site.{part.name}.recorder.{k}", v)
                          for k, v in _fields(recorder).items() if k != "vocab"]
        named += [(f"site.context.{k}", v) for k, v in _fields(context).items()
                  if k not in ("parts", "store")]
    extractor = runtime.extractor
    named += [(f"extractor.terms.{k}", v) for k, v in _fields(extractor.terms).items()]
    named += [("tracker.vocab", tracker.vocab), ("tracker.decoded", tracker.decoded)]
    named += [(f"extractor.{k}", v) for k, v in _fields(extractor).items()
              if k not in ("terms", "sites", "store")]
    named += [(f"store.{k}", v) for k, v in _fields(runtime.store).items()]
    named += [(f"runtime.{k}", v) for k, v in _fields(runtime).items()
              if k not in ("crawler", "stats", "extractor", "sites", "store")]
    named += [(f"extension.{k}", v) for k, v in _fields(extension).items()
              if k not in ("runtime", "tracker", "crawler")]
    return named


class TableProbe:
    """Deep sizes of the add-on's parts at the marks (HTML pages), written as JSON at close."""

    def __init__(self, crawler: Any) -> None:
        from scrapy import signals

        self.crawler = crawler
        self.marks = [int(m) for m in crawler.settings.get(MARKS_SETTING).split(",")]
        self.out = Path(crawler.settings.get(OUT_SETTING))
        self.pages = 0
        self.sizes: dict[int, dict[str, int]] = {}
        crawler.signals.connect(self.response_received, signal=signals.response_received)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Any) -> TableProbe:
        return cls(crawler)

    def response_received(self, response: Any) -> None:
        if b"html" not in (response.headers.get("Content-Type") or b""):
            return
        self.pages += 1
        if self.pages in self.marks:
            self.measure()

    def measure(self) -> None:
        from wisdom_scrapy.extension import WisdomExtension

        extension = WisdomExtension.of(self.crawler)
        seen: set[int] = {id(extension.crawler)}
        sizes = {name: deep_size(value, seen) for name, value in parts_of(extension)}
        sizes["(everything measured)"] = sum(sizes.values())
        self.sizes[self.pages] = sizes

    def engine_stopped(self) -> None:
        self.out.write_text(json.dumps(self.sizes))


def report(sizes: dict[str, dict[str, int]], top: int) -> None:
    marks = sorted(sizes, key=int)
    first, last = sizes[marks[0]], sizes[marks[-1]]
    pages = int(marks[-1]) - int(marks[0])
    growth = {k: (v - first.get(k, 0)) / pages for k, v in last.items()}
    rows = sorted(growth, key=lambda k: -abs(growth[k]))[:top]
    print("| part | " + " | ".join(f"KB at {m}" for m in marks) + " | bytes a page |")
    print("| --- | " + " | ".join("---" for _ in marks) + " | --- |")
    for name in rows:
        cells = " | ".join(f"{sizes[m].get(name, 0) / 1e3:.1f}" for m in marks)
        print(f"| {name} | {cells} | {growth[name]:.0f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=6000)
    parser.add_argument("--marks", default="3000,6000")
    parser.add_argument("--top", type=int, default=25, help="parts shown (largest growth)")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, EndlessSite() as start:
        out = Path(tmp)
        (out / "start.txt").write_text(start + "\n")
        cmd = [
            sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"urls={out / 'start.txt'}",
            "-s", f"WISDOM_STORE_URI=sqlite:///{out / 'probe.db'}",
            "-s", 'EXTENSIONS={"benchmarks.memory_probe.TableProbe": 0}',
            "-s", f"{MARKS_SETTING}={args.marks}", "-s", f"{OUT_SETTING}={out / 'sizes.json'}",
            "-s", f"CLOSESPIDER_PAGECOUNT={args.pages}", "-s", "LOG_LEVEL=WARNING",
            *[a for value in args.set for a in ("-s", value)],
        ]  # fmt: skip
        subprocess.run(cmd, cwd=REPO_ROOT, check=True)
        report(json.loads((out / "sizes.json").read_text()), args.top)


if __name__ == "__main__":
    main()
