"""Same outputs, byte for byte: the items and HITS scores of a docs site fed in-process (issue 33).

A change that only cuts redundant work must leave every output as it was. This script gives
those outputs one fingerprint: every page of ``--root`` (default the Python 3.11 docs,
``/usr/share/doc/python3.11/html``) is modelled from Scrapy's ``HtmlResponse`` tree as in a
crawl, fed into a SQLite store and recorded by a :class:`StructureTracker`; the site is then
analysed once (HITS), and each page is analysed with the store's snapshot and block repetition
(``target_terms`` = every fed page's terms, as the crawl's TOC index) and its item made with
every heavy field (``blocks``, ``html``, ``features``). Items (sorted keys) and each page's
(hub, authority) are written as JSON lines; the sha256 of those bytes is printed with the CPU
of each part (``time.process_time``, ms a page), so the same run measures both.

    python benchmarks/fed_outputs.py [--root DIR] [--out lines.jsonl] [--passes 2]

Run it on two checkouts (``PYTHONPATH=<checkout>``) and compare the hashes; ``--out`` keeps
the lines for a ``diff`` when they differ. ``--passes 2`` analyses every page twice, the
second pass with the models' cached parts warm (the hash is the first pass').
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from itemadapter import ItemAdapter
from scrapy.http import HtmlResponse

from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.link_graph import StructureTracker
from wisdom_scrapy.engine.waits import HEAVY_FIELDS, items_from_analysis
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.mining.repetition import stored_repetition
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store import open_store

DEFAULT_ROOT = Path("/usr/share/doc/python3.11/html")
BASE = "http://127.0.0.1:8000/"


def model_of(url: str, body: bytes) -> PageModel:
    """The page's model as the crawl builds it: from the tree of Scrapy's response."""
    root = HtmlResponse(url, body=body, encoding="utf-8").selector.root
    model = PageModel.from_tree(root, url)
    model.vocab  # noqa: B018  (the terms, as the crawl computes them before feeding)
    return model


def item_line(url: str, item: Any, scores: tuple[float, float] | None) -> str:
    """One page's output as a JSON line: the item's class and fields, and its HITS scores."""
    record = {"class": type(item).__name__, "item": ItemAdapter(item).asdict(), "hits": scores}
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=repr)


def run(root: Path, passes: int) -> tuple[list[str], dict[str, float]]:
    """(JSON lines, CPU ms a page of each part) of every page under ``root``."""
    files = sorted(root.rglob("*.html"))
    if not files:
        sys.exit(f"no pages under {root} (apt-get install python3.11-doc)")
    pages = [(BASE + f.relative_to(root).as_posix(), f.read_bytes()) for f in files]
    site = host_key(BASE)
    cpu: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'fed.db'}")
        tracker = StructureTracker(store)
        started = time.process_time()
        models = {}
        for url, body in pages:
            models[url] = model = model_of(url, body)
            feed_model(store, model, site=site)
            tracker.observe(site, url, model)
        tracker.analyse(site)
        cpu["feed and record"] = time.process_time() - started
        snapshot = store.snapshot(site)
        repetition = stored_repetition(store, site)
        terms = {url: frozenset(m.vocab) for url, m in models.items()}
        lines: list[str] = []
        for n in range(passes):
            started = time.process_time()
            out = []
            for url, model in models.items():
                analysis = analyze_page(None, url, store, site=site, model=model,
                                        snapshot=snapshot, target_terms=terms.get,
                                        repetition=repetition)  # fmt: skip
                item = items_from_analysis(analysis, url, model, snapshot, fields=HEAVY_FIELDS)
                out.append(item_line(url, item, tracker.scores(site, url)))
            cpu[f"analysis and item, pass {n + 1}"] = time.process_time() - started
            lines = lines or out
        store.close()
    return lines, {k: 1000 * v / len(pages) for k, v in cpu.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--out", type=Path, help="write the JSON lines here")
    ap.add_argument("--passes", type=int, default=1)
    args = ap.parse_args(argv)
    lines, cpu = run(args.root, max(1, args.passes))
    data = "\n".join(lines).encode("utf-8") + b"\n"
    if args.out:
        args.out.write_bytes(data)
    print(f"pages {len(lines)}  sha256 {hashlib.sha256(data).hexdigest()}")
    for part, ms in cpu.items():
        print(f"  {part}: {ms:.2f} ms a page (CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
