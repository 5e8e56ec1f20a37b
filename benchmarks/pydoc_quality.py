"""WISDOM on a real site: the Python 3.11 documentation (Debian package ``python3.11-doc``).

Every page of /usr/share/doc/python3.11/html (~530 Sphinx pages) is fed into one memory store
(``feed_page``, URLs ``http://127.0.0.1:8000/<relpath>``, as a crawl of a local server would
name them), then each page is analysed with ``analyze_page`` and that store (an entropy snapshot
taken once after feeding, as the crawl pipeline does, and ``target_terms`` = the terms of every
fed page, so WISDOM's anchor precision index can be computed).

Gold (the extractor sees none of it: no role="main", no Sphinx class is used by the analysis)
    The page's ``div[role=main]``. Pages whose main part holds a ``toctree-wrapper``, the
    general/module index table (``indextable``, ``modindextable``) or the index's letter jump box
    (``genindex-jumpbox``) are TOC pages; every other page is an article page whose gold text is
    the text of the main part (``PageModel.text_of``).

Scores
    * Article pages: token-shingle P/R/F1 (``evaluation.shingle_prf``, the article-extraction
      benchmark's metric) of ``article_text`` against the gold text, averaged over pages
      ("mean" columns), and the benchmark's corpus figures (``corpus_shingle_prf``).
      trafilatura (``extract(html, include_comments=False)``) on the same pages, same run.
    * TOC pages: SNC-style P/R/F1 of ``toc_links`` against the links inside the main part,
      matched by URL as multisets (an anchor node of each side counts once per occurrence; URLs
      without fragment, as ``PageModel.links`` gives them), averaged over pages.
    * Role accuracy over all pages: article pages should be "article", TOC pages "toc".
    * Speed (``--speed-pages`` pages, best of ``--repeat`` runs each): per page, the time of
      ``analyze_page`` as a ratio to lxml's parse time of the same bytes (parsel's parser, what
      Scrapy hands over), mean over pages. "analysis" starts from the page model the feed built
      (terms already extracted: the spider middleware computes them once for the store);
      "from bytes" includes parsing and building the model.

    python benchmarks/pydoc_quality.py [--root DIR] [--limit N] [--speed-pages 100]
                                       [--repeat 3] [--no-trafilatura] [--json OUT]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from lxml import etree
from lxml import html as lxml_html

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (
    dist_version,
    environment,
    markdown_table,
    write_json,
)
from wisdom_scrapy.analysis.evaluation import PRF, corpus_shingle_prf, shingle_prf
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.writes import feed_page
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store import EntropySnapshot
from wisdom_scrapy.store.memory import MemoryStore

DEFAULT_ROOT = Path("/usr/share/doc/python3.11/html")
BASE = "http://127.0.0.1:8000/"
_TOC_XPATH = etree.XPath(
    './/*[contains(concat(" ", normalize-space(@class), " "), " toctree-wrapper ")'
    ' or contains(concat(" ", normalize-space(@class), " "), " indextable ")'
    ' or contains(concat(" ", normalize-space(@class), " "), " modindextable ")'
    ' or contains(concat(" ", normalize-space(@class), " "), " genindex-jumpbox ")]'
)


def gold_of(model: PageModel) -> tuple[str, str, Counter[str]] | None:
    """(kind, gold text, gold link URLs) from the page's ``div[role=main]``; None without one."""
    root = model.element(0).getroottree()
    mains = root.xpath('//div[@role="main"]')
    if not mains:
        return None
    main = mains[0]
    node = next(i for i in range(model.n) if model.element(i) is main)
    kind = "toc" if _TOC_XPATH(main) else "article"
    end = int(model.subtree_end[node])
    links = Counter(link.url for link in model.links() if node <= link.node < end)
    return kind, model.text_of(node), links


def multiset_prf(found: Counter[str], gold: Counter[str]) -> PRF:
    """SNC-style P/R/F1 of two URL multisets (both empty: 1, 1, 1)."""
    if not found and not gold:
        return PRF.of(1.0, 1.0)
    common = sum((found & gold).values())
    p = common / sum(found.values()) if found else 0.0
    r = common / sum(gold.values()) if gold else 0.0
    return PRF.of(p, r)


def mean_prf(rows: list[PRF]) -> PRF:
    if not rows:
        return PRF(0.0, 0.0, 0.0)
    return PRF(*(statistics.fmean(r[i] for r in rows) for i in range(3)))


def best_of(fn: Any, repeat: int, setup: Any = None) -> float:
    best = float("inf")
    for _ in range(repeat):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t0)
    return best


def measure_speed(
    sample: list[tuple[str, bytes]],
    snapshot: EntropySnapshot,
    terms: dict[str, frozenset[str]],
    repeat: int,
    with_trafilatura: bool,
) -> dict[str, dict[str, float]]:
    """Per page, best-of-``repeat`` times as ratios to lxml's parse time of the same bytes:
    mean and median of the per-page ratios and the ratio of the totals.

    "analysis" starts from a fresh page model on which the feed's work is done (terms and
    links: ``feed_model`` computes both for the store before the page is analysed).
    """
    parser = lxml_html.HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    times: dict[str, list[float]] = {"parse": [], "analysis": [], "full": []}
    if with_trafilatura:
        import trafilatura

        times["trafilatura"] = []
    gc.disable()
    try:
        for url, html in sample:

            def fed_model(html: bytes = html, url: str = url) -> PageModel:
                model = PageModel.from_html(html, url)
                model.page_counts()  # what feed_model does before the analysis
                model.links()
                return model

            times["parse"].append(best_of(lambda _, h=html: etree.fromstring(h, parser), repeat))
            times["analysis"].append(
                best_of(
                    lambda m, u=url: analyze_page(
                        None, u, model=m, snapshot=snapshot, target_terms=terms.get
                    ),
                    repeat,
                    setup=fed_model,
                )
            )
            times["full"].append(
                best_of(
                    lambda _, h=html, u=url: analyze_page(
                        h, u, snapshot=snapshot, target_terms=terms.get
                    ),
                    repeat,
                )
            )
            if with_trafilatura:
                text = html.decode("utf-8")
                times["trafilatura"].append(
                    best_of(
                        lambda _, t=text: trafilatura.extract(t, include_comments=False), repeat
                    )
                )
            gc.collect()
    finally:
        gc.enable()
    parse = times.pop("parse")
    out = {}
    for name, values in times.items():
        ratios = [v / p for v, p in zip(values, parse, strict=True)]
        out[name] = {
            "mean": statistics.fmean(ratios),
            "median": statistics.median(ratios),
            "total": sum(values) / sum(parse),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--limit", type=int, default=0, help="analyse only the first N pages")
    ap.add_argument("--speed-pages", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-trafilatura", action="store_true")
    ap.add_argument("--no-repetition", action="store_true",
                    help="analyse without the site's block repetition (entropy only)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--worst", type=int, default=0, help="list the N worst article pages")
    args = ap.parse_args(argv)

    files = sorted(args.root.rglob("*.html"))
    if not files:
        sys.exit(f"no pages under {args.root} (apt-get install python3.11-doc)")
    pages = [(BASE + f.relative_to(args.root).as_posix(), f.read_bytes()) for f in files]
    site = host_key(BASE)

    # --- feed every page (what the crawl's middleware does), untimed
    t0 = time.perf_counter()
    store = MemoryStore()
    terms: dict[str, frozenset[str]] = {}
    for url, html in pages:
        feed_page(store, html, url)  # also stores its blocks: the crawl's block repetition
        terms[url] = frozenset(PageModel.from_html(html, url).vocab)
    snapshot = store.snapshot(site)
    feed_seconds = time.perf_counter() - t0

    # --- analyse
    analysed = pages[: args.limit] if args.limit else pages
    articles: list[tuple[str, PRF, PRF | None, str, str]] = []
    toc_rows: list[PRF] = []
    roles: Counter[tuple[str, str]] = Counter()
    traf_pairs: list[tuple[str | None, str]] = []
    ours_pairs: list[tuple[str | None, str]] = []
    traf_errors = 0
    if not args.no_trafilatura:
        import trafilatura
    for url, html in analysed:
        model = PageModel.from_html(html, url)
        gold = gold_of(model)
        if gold is None:
            continue
        kind, gold_text, gold_links = gold
        # with the store, its block repetition (as the crawl); without, entropy only
        result = analyze_page(
            None, url, None if args.no_repetition else store, site=site, model=model,
            snapshot=snapshot, target_terms=terms.get,
        )
        roles[(kind, result.role)] += 1
        if kind == "article":
            ours = shingle_prf(result.article_text, gold_text)
            ours_pairs.append((result.article_text, gold_text))
            traf = None
            if not args.no_trafilatura:
                try:
                    text = trafilatura.extract(html.decode("utf-8"), include_comments=False)
                except Exception:  # counted, scored as empty
                    text, traf_errors = None, traf_errors + 1
                traf = shingle_prf(text, gold_text)
                traf_pairs.append((text, gold_text))
            articles.append((url, ours, traf, result.role, gold_text))
        else:
            found = Counter(u for u, _ in result.toc_links)
            toc_rows.append(multiset_prf(found, gold_links))

    ours_mean = mean_prf([a[1] for a in articles])
    traf_mean = mean_prf([a[2] for a in articles if a[2] is not None])
    toc_mean = mean_prf(toc_rows)
    n_pages = sum(roles.values())
    correct = roles[("article", "article")] + roles[("toc", "toc")]

    # --- speed
    rng = random.Random(args.seed)
    sample = rng.sample(analysed, min(args.speed_pages, len(analysed)))
    speed = measure_speed(sample, snapshot, terms, args.repeat, not args.no_trafilatura)

    # --- report
    corpus_ours = corpus_shingle_prf(ours_pairs)
    corpus_traf = corpus_shingle_prf(traf_pairs) if traf_pairs else None
    rows = [
        [
            "wisdom (analyze_page)",
            f"{ours_mean.precision:.3f}",
            f"{ours_mean.recall:.3f}",
            f"{ours_mean.f1:.3f}",
            f"{corpus_ours['f1']:.3f}",
            len(articles),
        ]
    ]
    if corpus_traf is not None:
        rows.append(
            [
                f"trafilatura {dist_version('trafilatura')}",
                f"{traf_mean.precision:.3f}",
                f"{traf_mean.recall:.3f}",
                f"{traf_mean.f1:.3f}",
                f"{corpus_traf['f1']:.3f}",
                len(traf_pairs),
            ]
        )
    print(f"pages: {len(pages)} fed ({feed_seconds:.1f} s), {n_pages} analysed")
    print()
    print("Article pages (token-shingle P/R/F1 against div[role=main]):")
    print()
    print(markdown_table(["extractor", "mean P", "mean R", "mean F1", "corpus F1", "pages"], rows))
    print()
    print("TOC pages and roles:")
    print()
    print(
        markdown_table(
            ["measure", "value"],
            [
                ["TOC pages", len(toc_rows)],
                ["TOC links mean P", f"{toc_mean.precision:.3f}"],
                ["TOC links mean R", f"{toc_mean.recall:.3f}"],
                ["TOC links mean F1", f"{toc_mean.f1:.3f}"],
                ["role accuracy", f"{correct / max(1, n_pages):.3f} ({correct}/{n_pages})"],
                ["article pages → article/toc/other",
                 "/".join(str(roles[("article", r)]) for r in ("article", "toc", "other"))],
                ["TOC pages → toc/article/other",
                 "/".join(str(roles[("toc", r)]) for r in ("toc", "article", "other"))],
            ],
        )
    )  # fmt: skip
    print()
    print(f"Speed ({len(sample)} pages, best of {args.repeat} runs each, ratio to lxml parse):")
    print()
    labels = {
        "analysis": "analyze_page on the fed page model (terms, links known)",
        "full": "analyze_page from bytes (parse, model, terms, links)",
        "trafilatura": "trafilatura.extract from text",
    }
    print(
        markdown_table(
            ["time / lxml parse time", "mean", "median", "total"],
            [
                [labels[name], f"{r['mean']:.2f}x", f"{r['median']:.2f}x", f"{r['total']:.2f}x"]
                for name, r in speed.items()
            ],
        )
    )
    if args.worst:
        print()
        print("Worst article pages:")
        for url, ours, traf, role, _ in sorted(articles, key=lambda a: a[1].f1)[: args.worst]:
            t = f"{traf.f1:.2f}" if traf else "-"
            print(f"  {url[len(BASE):]:50s} F1 {ours.f1:.2f} (P {ours.precision:.2f} "
                  f"R {ours.recall:.2f}) role {role:7s} trafilatura {t}")  # fmt: skip

    if args.json:
        write_json(
            args.json,
            {
                "environment": environment(),
                "pages": len(pages),
                "analysed": n_pages,
                "articles": {
                    "pages": len(articles),
                    "wisdom": ours_mean._asdict(),
                    "wisdom_corpus": corpus_ours,
                    "trafilatura": traf_mean._asdict() if corpus_traf else None,
                    "trafilatura_corpus": corpus_traf,
                    "trafilatura_errors": traf_errors,
                },
                "toc": {"pages": len(toc_rows), **toc_mean._asdict()},
                "roles": {f"{g}->{r}": n for (g, r), n in sorted(roles.items())},
                "role_accuracy": correct / max(1, n_pages),
                "speed": {"pages": len(sample), "repeat": args.repeat, **speed},
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
