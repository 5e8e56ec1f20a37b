"""CPU time of the page model's parts a page's feed computes (issue 33, tenth round).

Every page of ``--root`` (default the Python 3.11 docs) is modelled from Scrapy's response tree
as :mod:`benchmarks.fed_outputs` does; then each part is timed over all pages in path order
(CPU time of this process, ``--repeat`` passes, min and median of the ms a page):

* **links**: :func:`~wisdom_scrapy.page.links.resolve_links` of each page's anchors (the URLs
  only: anchor texts stubbed), the caches of resolved links emptied before each pass, so each
  pass meets the site's hrefs as a crawl's first pass does;
* **build**: ``PageModel.from_tree`` of each page's response tree (parsed once);
* **css**: the page's CSS boxes (``PageModel._css_boxes``, which the text walk needs first),
  computed afresh on each pass;
* **build+css**: both, as a fed page's model computes them.

To compare two checkouts run the script from each, back to back (``PYTHONPATH=<checkout>``)::

    python benchmarks/feed_parts_speed.py [--root DIR] [--repeat 9] [--parts links]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

# appended, not put first: ``PYTHONPATH=<checkout>`` chooses the code timed
sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.fed_outputs import BASE, DEFAULT_ROOT, model_of
from wisdom_scrapy.page import links
from wisdom_scrapy.page.model import PageModel


def _links_part(models: list[PageModel]) -> Callable[[], None]:
    pages = [(m.base_url, m.anchor_nodes.tolist(), m._hrefs) for m in models]

    def no_texts(nodes: list[int]) -> list[str]:
        return [""] * len(nodes)

    def run() -> None:
        links._resolve_link.cache_clear()
        getattr(links, "_PREFIXES", {}).clear()  # (a checkout without the plain hrefs' prefixes)
        for base, anchors, hrefs in pages:
            links.resolve_links(base, anchors, hrefs, no_texts)

    return run


def _build_part(models: list[PageModel]) -> Callable[[], None]:
    trees = [(m.url, m.root) for m in models]

    def run() -> None:
        for url, root in trees:
            PageModel.from_tree(root, url)

    return run


def _css_part(models: list[PageModel]) -> Callable[[], None]:
    boxes = PageModel._css_boxes.func  # type: ignore[attr-defined]

    def run() -> None:
        for model in models:
            boxes(model)

    return run


def _build_css_part(models: list[PageModel]) -> Callable[[], None]:
    trees = [(m.url, m.root) for m in models]

    def run() -> None:
        for url, root in trees:
            PageModel.from_tree(root, url)._css_boxes  # noqa: B018

    return run


PARTS = {"links": _links_part, "build": _build_part, "css": _css_part,
         "build+css": _build_css_part}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated: " + ", ".join(PARTS))
    args = ap.parse_args(argv)
    files = sorted(args.root.rglob("*.html"))
    if not files:
        sys.exit(f"no pages under {args.root} (apt-get install python3.11-doc)")
    models = [model_of(BASE + f.relative_to(args.root).as_posix(), f.read_bytes()) for f in files]
    for name in args.parts.split(","):
        run = PARTS[name](models)
        times = []
        for _ in range(args.repeat):
            started = time.process_time()
            run()
            times.append(1000 * (time.process_time() - started) / len(models))
        print(f"{name}: min {min(times):.3f} median {statistics.median(times):.3f} ms a page"
              f" ({len(models)} pages, {args.repeat} passes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
