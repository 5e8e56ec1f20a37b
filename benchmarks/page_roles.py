"""Page roles from LAMIS link analysis: entropy-HITS vs plain HITS, in the same crawl.

The site is served on 127.0.0.1 and crawled once with the sample project's ``site`` spider and
the wisdom_scrapy add-on (``WISDOM_FOCUS=off`` by default, so every page is fetched). When the
spider closes, :class:`RolesDump` (this module, added to ``EXTENSIONS``) takes the crawl's
:class:`~wisdom_scrapy.engine.link_graph.StructureTracker` and runs
:func:`~wisdom_scrapy.engine.link_graph.analyse_site` on the same recorded pages in several
variants:

========================  ======================================================================
``entropy-HITS``          what the product does: template links removed, links weighted with
                          α = 1 − E(anchor text), terms with 1 − E(t); role from the hub mass
                          vs the content mass (:mod:`wisdom_scrapy.engine.link_graph`)
``plain HITS``            the same graph and rule with every entropy 0 (the paper's baseline:
                          every link and term weighs 1)
``plain HITS, all links``  plain HITS on the unreduced graph (template links kept)
``entropy-HITS, all``     entropy-HITS on the unreduced graph
``no link analysis``      entropy-weighted masses with every target counted as an average
                          authority (ã ≡ 1): what the role rule gets without HITS
``entropy h≥a``           HITS scores alone: TOC when the page's hub score (relative to the site
                          mean) is at least its authority score, article otherwise if ã > 0
``plain h≥a``             the same with plain HITS
========================  ======================================================================

Gold from the page markup, never used by the crawler (``python3.11-doc``): a page whose
``div[role=main]`` holds a ``toctree-wrapper`` or an ``indextable`` (general and module index)
is a TOC; any other page with a main part is an article. ``--site demo`` scores the demo news
site against its ``ground_truth.json`` instead (roles: toc = home and category pages, article,
other = tag/author/month archives, print, share, static and promo pages).

Precision and recall of "toc" and "article" are computed over the crawled pages; a page predicted
"other" (or without a role) counts as a miss for its gold role.

::

    python benchmarks/page_roles.py                       # python3.11-doc
    python benchmarks/page_roles.py --site demo --json roles-demo.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import environment, markdown_table, write_json
    from focus_crawl import gold_roles, prepare, run_crawl, url_path
else:
    from ._common import environment, markdown_table, write_json
    from .focus_crawl import gold_roles, prepare, run_crawl, url_path

from scrapy import signals
from scrapy.exceptions import NotConfigured

DUMP_SETTING = "PAGE_ROLES_DUMP"
VARIANTS: dict[str, dict[str, Any]] = {
    "entropy-HITS": {"entropy": True, "template": True, "link_analysis": True},
    "plain HITS": {"entropy": False, "template": True, "link_analysis": True},
    "plain HITS, all links": {"entropy": False, "template": False, "link_analysis": True},
    "entropy-HITS, all links": {"entropy": True, "template": False, "link_analysis": True},
    "no link analysis": {"entropy": True, "template": True, "link_analysis": False},
}
SCORE_ONLY = {"entropy h≥a": "entropy-HITS", "plain h≥a": "plain HITS"}


def score_roles(hub: np.ndarray, authority: np.ndarray) -> list[str]:
    """Roles from HITS scores alone: hub-dominant → toc, else article when pointed to."""
    return [
        "toc" if h > 0 and h >= a else ("article" if a > 0 else "other")
        for h, a in zip(hub.tolist(), authority.tolist(), strict=True)
    ]


class RolesDump:
    """Scrapy extension: at spider close, every variant's roles and scores as JSON."""

    def __init__(self, crawler: Any, path: str) -> None:
        self.crawler = crawler
        self.path = Path(path)

    @classmethod
    def from_crawler(cls, crawler: Any) -> RolesDump:
        path = crawler.settings.get(DUMP_SETTING)
        if not path:
            raise NotConfigured(f"{DUMP_SETTING} is not set")
        ext = cls(crawler, path)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_closed(self) -> None:
        from wisdom_scrapy.engine.link_graph import LINKS, analyse_site
        from wisdom_scrapy.extension import WisdomExtension

        tracker = WisdomExtension.of(self.crawler).tracker
        out: dict[str, Any] = {}
        for context in tracker.sites:
            site, state = context.site, LINKS.of(context)
            if state is None:
                continue
            snapshot = tracker.store.snapshot(site)
            records = tracker.records(site)
            site_out: dict[str, Any] = {}
            for name, variant in VARIANTS.items():
                started = time.perf_counter()
                analysis = analyse_site(
                    state.recorder,
                    entropies=snapshot.entropy if variant["entropy"] else None,
                    template=variant["template"],
                    link_analysis=variant["link_analysis"],
                    max_iter=tracker.max_iter,
                    records=records,
                )
                site_out[name] = {
                    "seconds": round(time.perf_counter() - started, 3),
                    "urls": analysis.urls,
                    "roles": analysis.roles,
                    "hub": analysis.hub.round(6).tolist(),
                    "authority": analysis.authority.round(6).tolist(),
                    "links": analysis.n_links,
                    "iterations": analysis.result.iterations,
                    "converged": analysis.result.converged,
                }
                if name in SCORE_ONLY.values():
                    label = next(k for k, v in SCORE_ONLY.items() if v == name)
                    site_out[label] = {
                        **site_out[name],
                        "roles": score_roles(analysis.hub, analysis.authority),
                    }
            out[site] = site_out
        self.path.write_text(json.dumps(out), "utf-8")


def prf(gold: dict[str, str], predicted: dict[str, str], role: str) -> dict[str, float]:
    g = {u for u, r in gold.items() if r == role}
    p = {u for u, r in predicted.items() if r == role}
    tp = len(g & p)
    precision = tp / len(p) if p else 0.0
    recall = tp / len(g) if g else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
            "gold": len(g), "predicted": len(p)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", default="pydoc", help="pydoc (default) or demo")
    parser.add_argument("--focus", default="off", help="WISDOM_FOCUS of the crawl (default off)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--keep", type=Path, help="keep crawl files here")
    args = parser.parse_args(argv)
    started = time.time()
    from wisdom_scrapy.testing import StaticServer

    with tempfile.TemporaryDirectory(prefix="page-roles-") as tmpdir:
        tmp = args.keep or Path(tmpdir)
        tmp.mkdir(parents=True, exist_ok=True)
        site_dir, truth, start = prepare(args.site, tmp)
        gold_all = gold_roles(args.site, site_dir, truth)
        dump = tmp / "roles.json"
        server = StaticServer(site_dir)
        base = server.start()
        try:
            crawl = run_crawl(
                f"roles-{args.site}", base + start, tmp,
                {"WISDOM_FOCUS": args.focus, DUMP_SETTING: str(dump)},
                extra_extensions={"benchmarks.page_roles.RolesDump": 10},
            )  # fmt: skip
        finally:
            server.stop()
        data = json.loads(dump.read_text("utf-8"))
    (site_key, variants), *_ = data.items()
    crawled = {url_path(u) for u in crawl.html_pages()}
    gold = {p: gold_all[p] for p in crawled if p in gold_all}
    rows, figures = [], {}
    for name, v in variants.items():
        predicted = {url_path(u): r for u, r in zip(v["urls"], v["roles"], strict=True)}
        predicted = {p: predicted.get(p, "") for p in gold}
        toc, article = prf(gold, predicted, "toc"), prf(gold, predicted, "article")
        figures[name] = {"toc": toc, "article": article, "links": v["links"],
                         "iterations": v["iterations"], "converged": v["converged"],
                         "seconds": v["seconds"]}
        rows.append([
            name, toc["precision"], toc["recall"], article["precision"], article["recall"],
            f"{toc['predicted']} / {article['predicted']}", v["links"],
            f"{v['iterations']}{'' if v['converged'] else ' (not converged)'}",
        ])  # fmt: skip
    counts = {r: sum(1 for x in gold.values() if x == r) for r in ("toc", "article", "other")}
    print(f"site {args.site} ({site_key}): {len(gold)} crawled pages with gold roles: "
          f"{counts['toc']} toc, {counts['article']} article, {counts['other']} other")
    print(markdown_table(
        ["method", "TOC P", "TOC R", "article P", "article R", "predicted toc / article",
         "graph links", "HITS iterations"],
        rows,
    ))  # fmt: skip
    errors = {}
    main_variant = variants["entropy-HITS"]
    predicted = {url_path(u): r for u, r in zip(main_variant["urls"], main_variant["roles"],
                                                strict=True)}
    for p, g in sorted(gold.items()):
        if predicted.get(p, "") != g:
            errors[p] = {"gold": g, "predicted": predicted.get(p, "")}
    print(f"\nentropy-HITS errors ({len(errors)}): "
          + ", ".join(f"{p} ({e['gold']}→{e['predicted'] or '-'})" for p, e in errors.items()))
    print(f"\n({time.time() - started:.0f} s, crawl {crawl.elapsed:.0f} s)")
    if args.json:
        write_json(args.json, {"environment": environment(), "site": args.site,
                               "gold_counts": counts, "variants": figures, "errors": errors})
    return 0


if __name__ == "__main__":
    sys.exit(main())
