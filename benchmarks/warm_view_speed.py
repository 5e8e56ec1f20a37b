"""CPU time of a warm page's site view and k-MIB (``SiteView.of``, ``node_features``, ``mine``).

Every page of ``--root`` (default the Python 3.11 docs) is modelled and fed into a SQLite store
as :mod:`benchmarks.fed_outputs` does, so the site is warm; then each part is timed over all
pages (CPU time of this process, ``--repeat`` passes, min and median of the ms a page):

* **view**: ``SiteView.of`` of each page (the site's template, its boxes, the list entries);
* **features**: ``node_features`` of each page that runs a k-MIB search, with the fetched
  pages' terms for the pages whose TOC search runs (as ``analyze_page``'s warm path);
* **mine**: ``node_features`` and the page's searches (``mine``), as the warm path runs them.

To compare two checkouts run the script from each, back to back (``PYTHONPATH=<checkout>``)::

    python benchmarks/warm_view_speed.py [--root DIR] [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# appended, not put first: ``PYTHONPATH=<checkout>`` chooses the code timed
sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.fed_outputs import BASE, DEFAULT_ROOT, model_of
from wisdom_scrapy.analysis.page_analysis import SiteView, _article_of, _searches
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.mining.repetition import stored_repetition
from wisdom_scrapy.mining.wisdom import DEFAULT_PARAMS, mine, node_features, toc_feature
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store import open_store


def warm_parts(root: Path, store_dir: Path) -> dict[str, Callable[[], None]]:
    """The timed parts over every page of ``root``, fed into a store under ``store_dir``."""
    files = sorted(root.rglob("*.html"))
    if not files:
        sys.exit(f"no pages under {root} (apt-get install python3.11-doc)")
    site = host_key(BASE)
    store = open_store(f"sqlite:///{store_dir / 'fed.db'}")
    models = {}
    for f in files:
        url = BASE + f.relative_to(root).as_posix()
        models[url] = model = model_of(url, f.read_bytes())
        feed_model(store, model, site=site)
    snapshot, repetition = store.snapshot(site), stored_repetition(store, site)
    n_pages = store.page_count(site)
    terms = {url: frozenset(m.vocab) for url, m in models.items()}
    pages = []  # (model, entropy, view, (article search, TOC search))
    for model in models.values():
        model.links()  # computed at feed in a crawl
        view = SiteView.of(model, repetition)
        is_list = view is not None and view.is_list
        found = _article_of(model, view) if view is not None and not is_list else None
        pages.append((model, snapshot.entropy(model.vocab), view,
                      _searches(view, found is not None, False)))  # fmt: skip

    def view() -> None:
        for model, _, _, _ in pages:
            SiteView.of(model, repetition)

    def features(search: bool = False) -> None:
        for model, entropy, view, (article, toc) in pages:
            if not (article or toc):
                continue
            f = node_features(model, entropy, n_pages=n_pages,
                              target_terms=terms.get if toc else None)  # fmt: skip
            if search and article:
                mine(f, "article", DEFAULT_PARAMS, repeated=None if view is None else view.boxes)
            if search and toc:
                mine(f, "toc", DEFAULT_PARAMS, feature=toc_feature(f, DEFAULT_PARAMS)[0])

    return {"view": view, "features": features, "mine": lambda: features(search=True)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        parts = warm_parts(args.root, Path(tmp))
        n = len(list(args.root.rglob("*.html")))
        for name, part in parts.items():
            times = []
            for _ in range(max(1, args.repeat)):
                started = time.process_time()
                part()
                times.append(1000 * (time.process_time() - started) / n)
            print(f"{name}: min {min(times):.3f}  median {statistics.median(times):.3f} "
                  "ms a page (CPU)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
