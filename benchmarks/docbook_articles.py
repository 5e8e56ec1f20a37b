"""Article text on a DocBook site (PostgreSQL's manual): WISDOM against trafilatura.

A second documentation site beside ``pydoc_quality`` (Sphinx), built by a different tool
(DocBook XSL), so that a rule tuned on one template shows on another. Every page of the site
is fed into one ``memory://`` store (and the site's block repetition), then analysed with the
store's snapshot, as ``pydoc_quality`` does. Gold: the page's one content ``div`` — the child
of ``<body>`` that is neither ``div.navheader`` nor ``div.navfooter`` (DocBook's page layout;
the analysis never sees it). A page whose content is mostly a ``div.toc`` (DocBook's table of
contents of a part or chapter: more than half of the text) is a TOC page, counted apart with
the role WISDOM gives it; pages with another layout or with fewer than 50 gold words are
skipped. Score: token-shingle P/R/F1 (``evaluation.shingle_prf``), mean over article pages;
a page WISDOM does not call an article scores with empty text.

::

    apt-get install postgresql-doc-15
    python benchmarks/docbook_articles.py                        # WISDOM and trafilatura
    python benchmarks/docbook_articles.py --no-trafilatura --limit 300
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

from wisdom_scrapy import open_store
from wisdom_scrapy.analysis import analyze_page
from wisdom_scrapy.dom import PageModel
from wisdom_scrapy.evaluation import PRF, shingle_prf
from wisdom_scrapy.feed import feed_model
from wisdom_scrapy.mining.repetition import BlockRepetition

SITE_DIR = Path("/usr/share/doc/postgresql-doc-15/html")
BASE = "http://127.0.0.1:8000/"
SITE = "127.0.0.1:8000"


def gold_text(model: PageModel) -> tuple[str, str] | None:
    """(kind, text) of the body's one content div: kind "toc" when a ``div.toc`` holds most of
    its text, else "article"; None for another layout."""
    body = model.element(0).getroottree().xpath("//body")
    if not body:
        return None
    nav = ("navheader", "navfooter")
    parts = [c for c in body[0] if c.tag == "div" and c.get("class") not in nav]
    if len(parts) != 1:
        return None
    node = next(i for i in range(model.n) if model.element(i) is parts[0])
    text = model.text_of(node)
    toc = sum(len(t.text_content()) for t in parts[0].xpath(".//div[@class='toc']"))
    return ("toc" if toc > len(text) / 2 else "article"), text


def mean_prf(rows: list[PRF]) -> tuple[float, float, float]:
    return tuple(round(statistics.fmean(getattr(r, k) for r in rows), 3)  # type: ignore[return-value]
                 for k in ("precision", "recall", "f1"))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site-dir", type=Path, default=SITE_DIR)
    parser.add_argument("--limit", type=int, default=0, help="first N pages (by name) only")
    parser.add_argument("--no-trafilatura", action="store_true")
    args = parser.parse_args(argv)
    files = sorted(args.site_dir.glob("*.html"))
    if not files:
        parser.error(f"no pages in {args.site_dir} (apt-get install postgresql-doc-15)")
    files = files[: args.limit] if args.limit else files
    store, repetition, models = open_store("memory://"), BlockRepetition(), {}
    for path in files:
        model = models[path] = PageModel.from_html(path.read_bytes(), BASE + path.name)
        feed_model(store, model, site=SITE)
        repetition.add(model.url, model)
    snapshot = store.snapshot(SITE)
    extract = None
    if not args.no_trafilatura:
        import trafilatura

        extract = trafilatura.extract
    scores: dict[str, list[PRF]] = {"wisdom": [], "trafilatura": []}
    roles: Counter[str] = Counter()
    for path, model in models.items():
        found_gold = gold_text(model)
        if found_gold is None or len(found_gold[1].split()) < 50:
            continue
        kind, gold = found_gold
        analysis = analyze_page(None, model.url, model=model, snapshot=snapshot,
                                repetition=repetition)  # fmt: skip
        roles[f"{kind} -> {analysis.role}"] += 1
        if kind == "toc":
            continue
        text = analysis.article_text if analysis.role == "article" else ""
        scores["wisdom"].append(shingle_prf(text, gold))
        if extract is not None:
            html = path.read_text(encoding="utf-8", errors="replace")
            found = extract(html, include_comments=False) or ""
            scores["trafilatura"].append(shingle_prf(found, gold))
    print(f"{len(models)} pages fed, {len(scores['wisdom'])} article pages scored "
          f"({args.site_dir}); roles: {dict(sorted(roles.items()))}\n")  # fmt: skip
    print("| extractor   | mean P | mean R | mean F1 |")
    print("| ----------- | ------ | ------ | ------- |")
    for name, rows in scores.items():
        if rows:
            p, r, f = mean_prf(rows)
            print(f"| {name:<11} | {p:.3f}  | {r:.3f}  | {f:.3f}   |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
