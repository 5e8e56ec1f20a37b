"""Speed of the page model: ``PageModel.from_tree`` time as a ratio to lxml's parse time.

For ~100 pages of the Python documentation (``python3.11-doc``, /usr/share/doc/python3.11/html),
parse the bytes with a fresh ``lxml.html.HTMLParser`` per page (what parsel, and so Scrapy's
``response.selector.root``, does) and time ``PageModel.from_tree`` on that tree. Each page is
measured ``--repeat`` times and the least CPU time of the thread is kept for both (CPU time, not
wall-clock time: on a shared machine the wall clock also counts other processes' turns, which is
noise for a ratio of two computations). The headline is the mean over pages of
from_tree / parse. Also shown, same method: from_tree plus the lazily computed terms
(``page_counts()``, which the pipeline needs for every page) and plus ``links()``; and a "cold"
ratio, one run per page right after its parse, as a crawl sees it.

    python benchmarks/dom_speed.py [--pages 100] [--repeat 7] [--seed 0] [--root DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree
from lxml import html as lxml_html

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wisdom_scrapy.page.model import PageModel


def cpu_time(fn: Callable[[], object], repeat: int) -> float:
    """Least CPU time of this thread over ``repeat`` runs of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def parse(data: bytes) -> etree._Element:
    return etree.fromstring(data, lxml_html.HTMLParser(recover=True, encoding="utf-8"))


def measure(data: bytes, url: str, repeat: int) -> dict[str, float]:
    t_parse = cpu_time(lambda: parse(data), repeat)
    # cold: the first model of a freshly parsed page, once
    root = parse(data)
    t0 = time.thread_time()
    PageModel.from_tree(root, url)
    t_cold = time.thread_time() - t0
    root = parse(data)
    return {
        "parse": t_parse,
        "model": cpu_time(lambda: PageModel.from_tree(root, url), repeat),
        "terms": cpu_time(lambda: PageModel.from_tree(root, url).page_counts(), repeat),
        "links": cpu_time(lambda: PageModel.from_tree(root, url).links(), repeat),
        "cold": t_cold,
        "nodes": len(PageModel.from_tree(root, url)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default="/usr/share/doc/python3.11/html")
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    files = sorted(Path(args.root).rglob("*.html"))
    if not files:
        sys.exit(f"no pages under {args.root} (apt-get install python3.11-doc)")
    random.Random(args.seed).shuffle(files)
    files = files[: args.pages]
    # warm what a running crawl has warm (the stemmer's and the link resolver's caches)
    PageModel.from_tree(parse(files[0].read_bytes()), "http://localhost/").page_counts()

    rows = []
    size = 0
    for path in files:
        data = path.read_bytes()
        size += len(data)
        rows.append(measure(data, f"http://localhost/{path.relative_to(args.root)}", args.repeat))

    def ratio(key: str, extra: str | None = None) -> str:
        values = [(r[key] + (r[extra] - r["model"] if extra else 0)) / r["parse"] for r in rows]
        return f"{statistics.mean(values):.2f}x (median {statistics.median(values):.2f}x)"

    k = len(rows)
    print(
        f"pages: {k}, mean size {size / k / 1024:.1f} KiB, "
        f"mean nodes {statistics.mean(r['nodes'] for r in rows):.0f}"
    )
    for label, key in (("lxml.html parse", "parse"), ("from_tree", "model")):
        print(f"mean {label + ' time:':28s} {statistics.mean(r[key] for r in rows) * 1e3:.3f} ms")
    print(f"from_tree / parse:                {ratio('model')}")
    print(f"from_tree / parse, cold (1 run):  {ratio('cold')}")
    print(f"+ page_counts() / parse:          {ratio('terms')}")
    print(f"+ page_counts() + links() / parse: {ratio('terms', 'links')}")


if __name__ == "__main__":
    main()
