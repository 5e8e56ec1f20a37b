"""CPU time of the link bookkeeping each fetched page costs (issue 33, ninth round), in isolation.

Every page of ``--root`` (default the Python 3.11 docs) is modelled once as the crawl models it
(its terms, links and blocks computed); then the parts are timed over all pages, ``--passes``
times, each pass with fresh state (CPU time of this thread, ms a page, min and median):

* **fetched**: :meth:`Extractor.page_fetched` with the 50 pages of most distinct link targets
  pending as TOC pages (``max_pending_tocs``), each page's blocks given (as the feed does);
* **record**: :meth:`SiteRecorder.observe_encoded` (the page's record and its stored form),
  then its :meth:`~SiteRecorder.template_mask`, the page's vocabulary ids looked up before
  (the TOC term index does it first in a crawl);
* **analysis**: :func:`analyse_site` of every page's record (plain HITS: no entropies), ms a
  page of the site, what each of the tracker's analyses as the site grows costs.

To compare two checkouts run it from each, back to back (``PYTHONPATH=<checkout>``)::

    python benchmarks/fetch_bookkeeping.py --passes 7 [--part analysis|fetched|record]
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

from scrapy.http import HtmlResponse

from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.link_graph import SiteRecorder, analyse_site
from wisdom_scrapy.engine.waits import ExtractionParams, Extractor, TocTargets, WaitingPage
from wisdom_scrapy.mining.repetition import page_blocks
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store import open_store

DEFAULT_ROOT = Path("/usr/share/doc/python3.11/html")
BASE = "http://127.0.0.1:8000/"
SITE = "127.0.0.1:8000"
PENDING = 50  # ExtractionParams.max_pending_tocs


def models_of(root: Path) -> list[PageModel]:
    """Every page's model as the crawl builds it, its terms, links and blocks computed."""
    models = []
    for f in sorted(root.rglob("*.html")):
        url = BASE + f.relative_to(root).as_posix()
        response = HtmlResponse(url, body=f.read_bytes(), encoding="utf-8")
        model = PageModel.from_tree(response.selector.root, url)
        model.vocab  # noqa: B018  (computed before the feed, as in a crawl)
        model.links()
        page_blocks(model)
        models.append(model)
    return models


def fetched_pass(models: list[PageModel]) -> float:
    """ms a page of :meth:`Extractor.page_fetched`, the most linking pages pending."""
    extractor = Extractor(open_store("memory://"), ExtractionParams(), analyze_page)
    state = extractor._state(SITE)
    tocs = sorted(models, key=lambda m: -len({link.url for link in m.links()}))[:PENDING]
    for model in tocs:
        targets = TocTargets.of({link.url for link in model.links()})
        extractor._targets_ready(targets)
        page = WaitingPage(SITE, model.url, None, "")
        pend = getattr(extractor, "_pend", None)  # older checkouts: the site's list only
        pend(state, page, targets) if pend is not None else state.pend(page, targets)
    blocks = [page_blocks(model) for model in models]
    started = time.thread_time()
    for model, prints in zip(models, blocks, strict=True):
        extractor.page_fetched(SITE, model.url, model, prints)
    return (time.thread_time() - started) / len(models) * 1e3


def record_pass(models: list[PageModel]) -> float:
    """ms a page of recording the page's links, encoding the record, judging its template."""
    recorder = SiteRecorder()
    for model in models:
        recorder.vocab.owned_ids(model, model.vocab)
    started = time.thread_time()
    for model in models:
        record, _ = recorder.observe_encoded(model.url, model)
        recorder.template_mask(record)
    return (time.thread_time() - started) / len(models) * 1e3


def analysis_pass(models: list[PageModel]) -> float:
    """ms a page of one analysis of the site, every page recorded."""
    recorder = SiteRecorder(shingle_pages=None)  # as a tracker's: counted by the analysis
    for model in models:
        recorder.observe(model.url, model)
    started = time.thread_time()
    analyse_site(recorder, entropies=None)
    return (time.thread_time() - started) / len(models) * 1e3


PARTS: dict[str, Callable[[list[PageModel]], float]] = {
    "analysis": analysis_pass, "fetched": fetched_pass, "record": record_pass}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--part", choices=sorted(PARTS), action="append")
    args = ap.parse_args(argv)
    models = models_of(args.root)
    for name in args.part or sorted(PARTS):
        times = [PARTS[name](models) for _ in range(max(1, args.passes))]
        print(f"{name}: min {min(times):.3f}  median {statistics.median(times):.3f} ms a page "
              f"({len(models)} pages, {len(times)} passes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
