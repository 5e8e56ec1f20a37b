"""CPU time of a page model's terms (``PageModel._terms``: tokens, codes, terms, arrays) a page.

Each page of ``--root`` is parsed and modelled once; then only the terms are timed (CPU time
of this thread), two ways:

* **crawl**: one pass over the pages in file order, every per-word cache of the term modules
  emptied first, so each page meets the words earlier pages left (stemming of new words
  included, as in a crawl); ``--passes`` passes, min and median of the ms a page.
* **hot**: each page ``--repeat`` times in a row, least time kept (every word cached): the
  per-page work alone. Mean over pages, min and median over ``--passes // 2`` rounds.

jieba's dictionary (if any page has Han text) is loaded before timing. To compare two checkouts
run the script from each, back to back (``PYTHONPATH=<checkout>``)::

    python benchmarks/terms_speed.py --root /usr/share/doc/python3.11/html --passes 6 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# appended, not put first: ``PYTHONPATH=<checkout>`` chooses the code timed
sys.path.append(str(Path(__file__).resolve().parents[1]))

from wisdom_scrapy.page import terms, tokens
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.parse import parse_html


def clear_caches() -> None:
    """Empty every ``lru_cache`` of the term and token modules (also those kept in a dict)."""
    for module in (terms, tokens):
        for value in vars(module).values():
            for fn in value.values() if isinstance(value, dict) else (value,):
                clear = getattr(fn, "cache_clear", None)
                if callable(clear):
                    clear()


def page_terms(model: PageModel) -> Any:
    """The model's terms computed afresh (the cached property's own function)."""
    return PageModel._terms.func(model)  # type: ignore[attr-defined]


def crawl_pass(models: list[PageModel]) -> float:
    clear_caches()
    t0 = time.thread_time()
    for model in models:
        page_terms(model)
    return (time.thread_time() - t0) / len(models) * 1e3


def hot_pass(models: list[PageModel], repeat: int) -> float:
    total = 0.0
    for model in models:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.thread_time()
            page_terms(model)
            best = min(best, time.thread_time() - t0)
        total += best
    return total / len(models) * 1e3


def models_of(root: Path) -> list[PageModel]:
    """A model of every page under ``root``, its terms computed once (imports, the stemmer's
    and jieba's start happen here, not in the timed passes)."""
    url = "http://localhost/"
    models = [PageModel.from_tree(parse_html(f.read_bytes(), url), url)
              for f in sorted(root.rglob("*.html"))]
    for model in models:
        page_terms(model)
    return models


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, help="write the ms a page of every pass here")
    args = ap.parse_args()
    models = models_of(args.root)
    if not models:
        sys.exit(f"no pages under {args.root}")
    crawl = [crawl_pass(models) for _ in range(args.passes)]
    hot = [hot_pass(models, args.repeat) for _ in range(max(1, args.passes // 2))]
    print("| site | pages | timing | min ms a page | median ms a page |")
    print("| --- | --- | --- | --- | --- |")
    for name, ms in (("crawl", crawl), ("hot", hot)):
        low, mid = min(ms), statistics.median(ms)
        print(f"| {args.root} | {len(models)} | {name} | {low:.3f} | {mid:.3f} |")
    if args.json:
        figures = {"root": str(args.root), "pages": len(models), "crawl": crawl, "hot": hot}
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
