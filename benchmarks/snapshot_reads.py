"""Snapshot-read benchmark: what re-reading a site's entropies costs as the site grows, read
whole (``TermStore.snapshot``, as before issue 33) and kept in step from the changed terms
(``EntropyMirror``, what a crawl does now), on the same store at the same moments.

    python benchmarks/snapshot_reads.py                       # pydoc, SQLite and memory
    python benchmarks/snapshot_reads.py --pages 200 --json sr.json

The pages of the Python 3.11 documentation (``python3.11-doc``) are modelled and fed into a
fresh store in breadth-first crawl order (``feed_speed.load_pages``), no HTTP. Each time the
site has grown by a tenth (``wisdom_scrapy.engine.sites.SNAPSHOT_GROWTH``, the page analysis' rule)
both reads run, one after the other, and are timed with the process's CPU clock; the two snapshots
must hold the same numbers (checked, bit for bit). The feeding is not timed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import environment, markdown_table, write_json
from feed_speed import DOCS_DIR, load_pages, parse

from wisdom_scrapy.engine.sites import SNAPSHOT_GROWTH
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store import TermStore, open_store
from wisdom_scrapy.store.base import EntropyMirror

SITE = "docs.python.org"


def _timed(read: Any) -> tuple[Any, float]:
    started = time.process_time()
    got = read()
    return got, time.process_time() - started


def measure(store: TermStore, pages: list[Any]) -> dict[str, Any]:
    """Feed ``pages`` into ``store``; at every growth step read both ways; the figures."""
    mirror = EntropyMirror(SITE)
    whole_s = mirror_s = 0.0
    rows_read = rows_whole = 0
    reads = 0
    held = 0
    for page in pages:
        feed_model(store, PageModel.from_tree(parse(page), page.url), site=SITE)
        n = store.page_count(SITE)
        if held and n <= held * SNAPSHOT_GROWTH:
            continue
        since = mirror.version
        whole, t_whole = _timed(lambda: store.snapshot(SITE))
        kept, t_mirror = _timed(lambda: mirror.read(store))
        if dict(kept.values) != dict(whole.values) or kept.n_pages != whole.n_pages:
            raise SystemExit(f"the mirror's entropies differ from a whole read at {n} pages")
        rows_read += len(store.term_changes(SITE, since).terms)  # untimed: how many rows
        rows_whole += whole.n_terms
        whole_s, mirror_s, reads, held = whole_s + t_whole, mirror_s + t_mirror, reads + 1, n
    terms = store.snapshot(SITE).n_terms
    return {"pages": len(pages), "reads": reads, "terms": terms, "rows_whole": rows_whole,
            "rows_changed": rows_read,
            "whole_ms": 1000 * whole_s, "mirror_ms": 1000 * mirror_s}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=DOCS_DIR, help="site folder (%(default)s)")
    parser.add_argument("--pages", type=int, default=None, help="only the first N (crawl order)")
    parser.add_argument("--backends", default="sqlite,memory", help="sqlite,memory (both)")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="write figures")
    args = parser.parse_args(argv)
    pages = load_pages(args.docs, args.pages)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends.split(","):
            uri = f"sqlite:///{tmp}/{backend}.db" if backend == "sqlite" else "memory://"
            with open_store(uri) as store:
                results[backend] = measure(store, pages)
    rows = [(name, r["pages"], r["reads"], r["terms"], r["rows_whole"], r["rows_changed"],
             f"{r['whole_ms']:.1f}", f"{r['mirror_ms']:.1f}",
             f"{r['whole_ms'] / r['pages']:.2f}", f"{r['mirror_ms'] / r['pages']:.2f}")
            for name, r in results.items()]
    print(markdown_table(["store", "pages", "reads", "terms at the end", "rows read whole",
                          "rows read (changed)",
                          "whole reads ms", "mirror reads ms", "whole ms/page",
                          "mirror ms/page"], rows))
    if args.json:
        write_json(args.json, {"environment": environment(), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
