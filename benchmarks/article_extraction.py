"""Article-extraction benchmark: token-shingle P/R/F1 and speed of article-body extractors.

Runs every selected extractor over the 181 pages of scrapinghub's article-extraction benchmark
(``../shared/data/article-extraction-benchmark``) in one process and prints one table. The
metric is the benchmark's own (:func:`wisdom_scrapy.analysis.evaluation.corpus_shingle_prf`); speed
is pages per second of extraction time only (decompression and file reading are outside the clock,
one untimed warm-up call per extractor).

    python benchmarks/article_extraction.py
    python benchmarks/article_extraction.py --only trafilatura,readability --json out.json
    python benchmarks/article_extraction.py --data /path/to/article-extraction-benchmark
    python benchmarks/article_extraction.py --only density,readability --half odd

Extractors:

* ``trafilatura``: ``trafilatura.extract(html, include_comments=False)``, as the benchmark's
  ``run_trafilatura.py`` calls it.
* ``readability``: readability-lxml ``Document(html).summary(html_partial=True)``, its HTML turned
  into text by ``_common.html_to_text`` (the benchmark uses ``html_text``, not installed here).
* ``wisdom``: ``wisdom_scrapy.analyze_page(html, url, store=None).article_text``: single
  pages, no site context, so no warm entropy store (a cold start, the hardest case for us).
* ``density``: ``wisdom_scrapy.mining.density.single_page_article`` on the page model
  (``PageModel.from_html``), text = ``model.text_of(body, exclude=exclude)``: the structural
  single-page fallback, no entropy (parse, model, extraction and text all on the clock).
* ``fulltext``: every visible text of the page (lxml parse + ``_common.html_to_text``), the
  benchmark's ``html-text`` baseline: a floor for quality and a reference for speed.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import (
    ARTICLE_BENCHMARK_DIR,
    ArticlePage,
    dist_version,
    environment,
    html_to_text,
    load_article_benchmark,
    markdown_table,
    timed_map,
    write_json,
)

from wisdom_scrapy.analysis.evaluation import corpus_shingle_prf, shingle_prf

Extractor = Callable[[str, str], str | None]  # (html, url) -> article text


class Unavailable(Exception):
    """The extractor cannot run here (missing package or API); the reason is its message."""


def _trafilatura() -> tuple[Extractor, str | None]:
    try:
        import trafilatura
    except ImportError as exc:
        raise Unavailable(f"trafilatura not installed ({exc})") from exc

    def extract(html: str, url: str) -> str | None:
        return trafilatura.extract(html, include_comments=False)

    return extract, dist_version("trafilatura")


def _readability() -> tuple[Extractor, str | None]:
    try:
        from readability import Document
    except ImportError as exc:
        raise Unavailable(f"readability-lxml not installed ({exc})") from exc

    def extract(html: str, url: str) -> str | None:
        return html_to_text(Document(html).summary(html_partial=True))

    return extract, dist_version("readability-lxml")


def _wisdom() -> tuple[Extractor, str | None]:
    try:
        from wisdom_scrapy import analyze_page
    except ImportError as exc:
        raise Unavailable(f"wisdom_scrapy.analyze_page not available ({exc})") from exc

    def extract(html: str, url: str) -> str | None:
        return analyze_page(html, url, store=None).article_text

    import wisdom_scrapy

    return extract, getattr(wisdom_scrapy, "__version__", None) or dist_version("wisdom_scrapy")


def _density() -> tuple[Extractor, str | None]:
    try:
        from wisdom_scrapy.mining.density import single_page_article
        from wisdom_scrapy.page.model import PageModel
    except ImportError as exc:
        raise Unavailable(f"wisdom_scrapy.mining.density not available ({exc})") from exc

    def extract(html: str, url: str) -> str | None:
        model = PageModel.from_html(html, url)
        article = single_page_article(model)
        return article.text(model) if article is not None else ""

    import wisdom_scrapy

    return extract, getattr(wisdom_scrapy, "__version__", None) or dist_version("wisdom_scrapy")


def _fulltext() -> tuple[Extractor, str | None]:
    def extract(html: str, url: str) -> str | None:
        return html_to_text(html)

    return extract, dist_version("lxml")


EXTRACTORS: dict[str, Callable[[], tuple[Extractor, str | None]]] = {
    "trafilatura": _trafilatura,
    "readability": _readability,
    "wisdom": _wisdom,
    "density": _density,
    "fulltext": _fulltext,
}

#: Figures published by the benchmark (F1), for the comparison column.
PUBLISHED_F1 = {"trafilatura": 0.958, "readability": 0.922, "fulltext": 0.665}


def run_extractor(name: str, pages: list[ArticlePage]) -> dict[str, Any]:
    """Scores and speed of one extractor over ``pages`` (or why it could not run)."""
    try:
        extract, version = EXTRACTORS[name]()
    except Unavailable as exc:
        return {"available": False, "reason": str(exc)}
    if pages:
        # untimed warm-up: lazy imports, caches, models (a failing page counts in the timed run)
        with contextlib.suppress(Exception):
            extract(pages[0].html, pages[0].url)
    results, seconds, errors = timed_map(extract, ((page.html, page.url) for page in pages))
    predictions = [result or "" for result in results]
    scores = corpus_shingle_prf(
        (prediction, page.gold) for prediction, page in zip(predictions, pages, strict=True)
    )
    total = sum(seconds)
    report: dict[str, Any] = {
        "available": True,
        "version": version,
        **scores,
        "seconds": total,
        "pages_per_s": len(pages) / total if total > 0 else None,
        "errors": len(errors),
        "empty": sum(1 for prediction in predictions if not prediction.strip()),
        "per_page_f1": {
            page.id: round(shingle_prf(prediction, page.gold).f1, 4)
            for prediction, page in zip(predictions, pages, strict=True)
        },
    }
    if errors:
        first = errors[0]
        report["first_error"] = f"{type(first).__name__}: {first}"
    return report


def density_breakdown(pages: list[ArticlePage], passes: int = 5) -> dict[str, float]:
    """CPU milliseconds per page of each stage of the ``density`` row — lxml parse, page
    model, ``single_page_article``, ``text_of`` — and the extraction time as a ratio to the
    parse time (DESIGN.md's speed measure).

    Each stage's time is the minimum over ``passes`` passes, page by page (robust to other
    load on the machine); ``extract_over_parse_cold`` uses the first pass's extraction time
    instead, which meets every page's class names for the first time, as a one-off page does
    (later pages of one site find them cached).
    """
    import time

    from wisdom_scrapy.mining.density import single_page_article
    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.page.parse import parse_html

    clock = time.process_time
    best = np.full((len(pages), 4), np.inf)
    cold = np.zeros(len(pages))
    for k in range(passes):
        for i, page in enumerate(pages):
            t0 = clock()
            root = parse_html(page.html, page.url)
            t1 = clock()
            model = PageModel.from_tree(root, page.url) if root is not None else PageModel.empty("")
            t2 = clock()
            article = single_page_article(model)
            t3 = clock()
            if article is not None:
                article.text(model)
            t4 = clock()
            best[i] = np.minimum(best[i], (t1 - t0, t2 - t1, t3 - t2, t4 - t3))
            if k == 0:
                cold[i] = t3 - t2
    count = max(len(pages), 1)
    totals = best.sum(axis=0) if len(pages) else np.zeros(4)
    report = {
        f"{key}_ms": 1000 * value / count
        for key, value in zip(("parse", "model", "extract", "text"), totals, strict=True)
    }
    parse = totals[0]
    report["extract_over_parse"] = float(totals[2] / parse) if parse else 0.0
    report["extract_over_parse_cold"] = float(cold.sum() / parse) if parse else 0.0
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=ARTICLE_BENCHMARK_DIR,
        help="benchmark directory with html/*.html.gz and ground-truth.json "
        f"(default: ../shared/data/{ARTICLE_BENCHMARK_DIR.name} next to the repo)",
    )
    parser.add_argument(
        "--only",
        default=",".join(EXTRACTORS),
        help=f"comma-separated extractors to run (default: all of {','.join(EXTRACTORS)})",
    )
    parser.add_argument("--limit", type=int, default=None, help="first N pages only (quick runs)")
    parser.add_argument(
        "--half",
        choices=("all", "even", "odd"),
        default="all",
        help="only the even- or odd-indexed pages (ids sorted): density was tuned on the even "
        "half, the odd half is held out (default: all)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the figures as JSON")
    parser.add_argument(
        "--density-breakdown",
        action="store_true",
        help="also time each stage of the density row (CPU time, 3 passes) against the parse",
    )
    args = parser.parse_args(argv)

    names = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in names if name not in EXTRACTORS]
    if unknown or not names:
        parser.error(f"unknown extractor(s) {unknown}; choose from {', '.join(EXTRACTORS)}")

    # The extractors log per-page parse trouble; failures are counted in the table instead.
    for logger in ("trafilatura", "readability", "htmldate", "courlan", "justext"):
        logging.getLogger(logger).setLevel(logging.CRITICAL)

    pages = load_article_benchmark(args.data, args.limit)
    if args.half != "all":
        pages = pages[0 if args.half == "even" else 1 :: 2]
    breakdown = None
    if args.density_breakdown:  # before the rows: its first pass meets cold caches
        print("timing the density stages ...", file=sys.stderr, flush=True)
        breakdown = density_breakdown(pages)

    results = {}
    for name in names:
        print(f"running {name} on {len(pages)} pages ...", file=sys.stderr, flush=True)
        results[name] = run_extractor(name, pages)
        if results[name].get("first_error"):
            print(f"  {name}: first error: {results[name]['first_error']}", file=sys.stderr)

    headers = [
        "extractor",
        "version",
        "precision",
        "recall",
        "F1",
        "exact",
        "published F1",
        "pages/s",
        "errors",
        "empty",
    ]
    rows = []
    notes = []
    for name, r in results.items():
        published = f"{PUBLISHED_F1[name]:.3f}" if name in PUBLISHED_F1 else "-"
        if not r["available"]:
            rows.append([name, "-", "not available", "-", "-", "-", published, "-", "-", "-"])
            notes.append(f"{name}: not available: {r['reason']}")
            continue
        rows.append(
            [
                name,
                r["version"] or "-",
                f"{r['precision']:.3f}",
                f"{r['recall']:.3f}",
                f"{r['f1']:.3f}",
                f"{r['accuracy']:.3f}",
                published,
                f"{r['pages_per_s']:.1f}",
                r["errors"],
                r["empty"],
            ]
        )
    half = "" if args.half == "all" else f" ({args.half}-indexed half)"
    print(f"article-extraction benchmark: {len(pages)} pages{half} from {args.data}")
    print(markdown_table(headers, rows))
    for note in notes:
        print(note)
    if breakdown is not None:
        print(
            "density stages, CPU ms per page: "
            + ", ".join(f"{k[:-3]} {v:.2f}" for k, v in breakdown.items() if k.endswith("_ms"))
            + f"; extraction / parse = {breakdown['extract_over_parse']:.2f}"
            + f" (first meeting of each page: {breakdown['extract_over_parse_cold']:.2f})"
        )

    if args.json:
        write_json(
            args.json,
            {
                "benchmark": "article_extraction",
                "data": str(args.data),
                "pages": len(pages),
                "half": args.half,
                "environment": environment(),
                "results": results,
                "density_breakdown": breakdown,
            },
        )
        print(f"figures written to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
