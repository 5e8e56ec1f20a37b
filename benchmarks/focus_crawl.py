"""Focused vs plain crawl, both in one run: pages and bytes fetched, article pages reached, speed.

For each site, a static server on 127.0.0.1 serves the site's files and the sample project's
``site`` spider crawls it from its start page twice, each crawl a ``scrapy crawl`` subprocess
with the wisdom_scrapy add-on and a fresh SQLite store (so both crawls do the same analysis work):

* **plain**: ``WISDOM_FOCUS=off``: every link the spider yields is followed;
* **focused**: ``WISDOM_FOCUS=drop`` (the default): requests for links found only in template
  blocks are dropped (:mod:`wisdom_scrapy.focus`).

``--policies`` adds ``deprioritize`` (fetches everything, informative links first).

Gold (never seen by the crawler):

* ``demo``: the demo news site built by :func:`sample_project.demo_site.build_demo_site` and its
  ``ground_truth.json`` (150 article pages, among tag/author/month archives, print and share
  pages, static pages and ad redirects);
* ``pydoc``: ``/usr/share/doc/python3.11/html`` (Debian ``python3.11-doc``); a page whose
  ``div[role=main]`` holds a ``toctree-wrapper`` or an ``indextable`` is a TOC, any other page
  with a main part is an article.

Figures per crawl: HTML pages and all responses fetched, response bytes, article pages reached
(fetched with status 200), and throughput (responses / Scrapy's ``elapsed_time_seconds``); for the
focused crawl, its share of the plain crawl's article pages and the reduction of pages and bytes.
Throughput compares crawls of one run on one machine; ``--repeat N`` runs each crawl N times
(alternating) and reports the median throughput. On a shared machine throughput is noisy, so the
focus middleware's own cost is also measured inside the crawl (``wisdom/focus/microseconds``:
its time per response, the site analyses it triggers included) beside the crawl's wall time per
response.

::

    python benchmarks/focus_crawl.py                      # demo and pydoc
    python benchmarks/focus_crawl.py --site demo --json focus.json
    python benchmarks/focus_crawl.py --site pydoc --policies off,drop,deprioritize
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urlsplit

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import REPO_ROOT, environment, markdown_table, write_json
else:
    from ._common import REPO_ROOT, environment, markdown_table, write_json

import lxml.html
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse

PYDOC = Path("/usr/share/doc/python3.11/html")
RECORD_SETTING = "FOCUS_CRAWL_RECORD"


class CrawlRecorder:
    """Scrapy extension: every response (URL, status, bytes, HTML or not) and the final stats,
    written as JSON to ``FOCUS_CRAWL_RECORD`` when the engine stops."""

    def __init__(self, crawler: Any, path: str) -> None:
        self.crawler = crawler
        self.path = Path(path)
        self.responses: list[dict[str, Any]] = []

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlRecorder:
        path = crawler.settings.get(RECORD_SETTING)
        if not path:
            raise NotConfigured(f"{RECORD_SETTING} is not set")
        ext = cls(crawler, path)
        crawler.signals.connect(ext.response_received, signal=signals.response_received)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def response_received(self, response: Any, request: Any, spider: Any) -> None:
        self.responses.append(
            {
                "url": response.url,
                "status": response.status,
                "bytes": len(response.body),
                "html": isinstance(response, HtmlResponse),
            }
        )

    def engine_stopped(self) -> None:
        data = {"stats": self.crawler.stats.get_stats(), "responses": self.responses}
        self.path.write_text(json.dumps(data, default=str), "utf-8")


@dataclass
class Crawl:
    name: str
    returncode: int
    stats: dict[str, Any] = field(default_factory=dict)
    responses: list[dict[str, Any]] = field(default_factory=list)
    log: str = ""

    @property
    def elapsed(self) -> float:
        return float(self.stats.get("elapsed_time_seconds") or 0.0)

    @property
    def n_responses(self) -> int:
        return int(self.stats.get("downloader/response_count", 0))

    @property
    def bytes(self) -> int:
        return int(self.stats.get("downloader/response_bytes", 0))

    def html_pages(self) -> set[str]:
        return {
            urldefrag(r["url"])[0] for r in self.responses if r["status"] == 200 and r["html"]
        }

    @property
    def pages_per_second(self) -> float:
        return self.n_responses / self.elapsed if self.elapsed else 0.0


def run_crawl(
    name: str,
    start_url: str,
    workdir: Path,
    settings: dict[str, Any],
    *,
    extra_extensions: dict[str, int] | None = None,
    timeout: float = 3600,
) -> Crawl:
    """``scrapy crawl site -a url=START`` from the repository root, with a fresh SQLite store."""
    record = workdir / f"{name}.record.json"
    record.unlink(missing_ok=True)
    extensions = {"benchmarks.focus_crawl.CrawlRecorder": 0, **(extra_extensions or {})}
    all_settings = {
        "EXTENSIONS": json.dumps(extensions),
        RECORD_SETTING: str(record),
        "WISDOM_STORE_URI": f"sqlite:///{workdir / f'{name}.db'}",
        "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": 3600,
        **settings,
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"url={start_url}"]
    for key, value in all_settings.items():
        command += ["-s", f"{key}={value}"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
        check=False,
    )
    crawl = Crawl(name, proc.returncode, log=proc.stderr[-4000:])
    if record.is_file():
        data = json.loads(record.read_text("utf-8"))
        crawl.stats, crawl.responses = data["stats"], data["responses"]
    if proc.returncode != 0 or crawl.stats.get("finish_reason") != "finished":
        raise SystemExit(f"crawl {name} failed (exit {proc.returncode}):\n{crawl.log}")
    return crawl


# ------------------------------------------------------------------------------------------
# Gold
# ------------------------------------------------------------------------------------------


def pydoc_role(path: Path) -> str:
    """Role of a python3.11-doc page from its markup (module docstring)."""
    root = lxml.html.parse(str(path)).getroot()
    main = root.xpath('//div[@role="main"]')
    if not main:
        return "other"
    if main[0].xpath(
        './/div[contains(concat(" ", normalize-space(@class), " "), " toctree-wrapper ")]'
        ' | .//table[contains(concat(" ", normalize-space(@class), " "), " indextable ")]'
    ):
        return "toc"
    return "article"


def gold_roles(site: str, site_dir: Path, truth: Path | None) -> dict[str, str]:
    """Path (``/x/y.html``) → role for every page of the site."""
    if truth is not None:
        pages = json.loads(truth.read_text("utf-8"))["pages"]
        return {path: info["role"] for path, info in pages.items()}
    return {
        "/" + p.relative_to(site_dir).as_posix(): pydoc_role(p) for p in site_dir.rglob("*.html")
    }


def url_path(url: str) -> str:
    return unquote(urlsplit(url).path)


# ------------------------------------------------------------------------------------------


def prepare(site: str, tmp: Path) -> tuple[Path, Path | None, str]:
    """(served directory, ground-truth file or None, start path)."""
    if site == "pydoc":
        if not PYDOC.is_dir():
            raise SystemExit(f"{PYDOC} missing: apt-get install python3.11-doc")
        return PYDOC, None, "index.html"
    if site == "demo":
        from sample_project.demo_site import GROUND_TRUTH_FILE, SITE_DIR, build_demo_site

        build_demo_site(tmp / "demo")
        return tmp / "demo" / SITE_DIR, tmp / "demo" / GROUND_TRUTH_FILE, "index.html"
    raise SystemExit(f"unknown site {site!r}: use demo or pydoc")


def bench_site(site: str, policies: list[str], repeat: int, tmp: Path) -> dict[str, Any]:
    from wisdom_scrapy.testing import StaticServer

    site_dir, truth, start = prepare(site, tmp)
    gold = gold_roles(site, site_dir, truth)
    articles = {p for p, role in gold.items() if role == "article"}
    server = StaticServer(site_dir)
    base = server.start()
    crawls: dict[str, list[Crawl]] = {p: [] for p in policies}
    try:
        for r in range(repeat):
            for policy in policies:
                name = f"{site}-{policy}-{r}"
                crawls[policy].append(
                    run_crawl(name, base + start, tmp, {"WISDOM_FOCUS": policy})
                )
    finally:
        server.stop()
    rows: dict[str, dict[str, Any]] = {}
    for policy, runs in crawls.items():
        first = runs[0]
        pages = {url_path(u) for u in first.html_pages()}
        reached = pages & articles
        rows[policy] = {
            "html_pages": len(pages),
            "responses": first.n_responses,
            "bytes": first.bytes,
            "articles_reached": len(reached),
            "toc_reached": len({p for p in pages if gold.get(p) == "toc"}),
            "pages_per_second": round(statistics.median(c.pages_per_second for c in runs), 2),
            "pages_per_second_runs": [round(c.pages_per_second, 2) for c in runs],
            "elapsed_seconds": round(statistics.median(c.elapsed for c in runs), 2),
            "focus": {
                k.rsplit("/", 1)[1]: v
                for k, v in first.stats.items()
                if k.startswith("wisdom/focus/")
            },
            # time in the focus middleware (analyses during the crawl included) and in all
            # link analyses (the one at idle included), per response, median over runs
            "focus_ms_per_page": round(statistics.median(
                c.stats.get("wisdom/focus/microseconds", 0) / 1000 / max(c.n_responses, 1)
                for c in runs), 3),
            "analysis_ms_per_page": round(statistics.median(
                c.stats.get("wisdom/structure/microseconds", 0) / 1000 / max(c.n_responses, 1)
                for c in runs), 3),
            "crawl_ms_per_page": round(statistics.median(
                1000 * c.elapsed / max(c.n_responses, 1) for c in runs), 1),
            "reached": sorted(reached),
        }
    plain = rows[policies[0]]
    plain_reached = set(plain["reached"])
    for row in rows.values():
        reached = set(row["reached"])
        row["article_share"] = (
            round(len(reached & plain_reached) / len(plain_reached), 4) if plain_reached else 1.0
        )
        row["missed"] = sorted(plain_reached - reached)
        row["fewer_pages"] = round(1 - row["responses"] / plain["responses"], 4)
        row["fewer_bytes"] = round(1 - row["bytes"] / plain["bytes"], 4)
        row["speed_ratio"] = (
            round(row["pages_per_second"] / plain["pages_per_second"], 3)
            if plain["pages_per_second"]
            else None
        )
    return {
        "site": site,
        "gold_articles": len(articles),
        "gold_tocs": sum(1 for r in gold.values() if r == "toc"),
        "rows": rows,
    }


def report(results: list[dict[str, Any]]) -> str:
    headers = [
        "site", "crawl", "responses", "MB", "articles reached", "article share",
        "fewer pages", "fewer bytes", "pages/s", "pages/s ratio", "focus ms/page",
        "crawl ms/page", "dropped", "kept",
    ]
    rows = []
    for res in results:
        for policy, row in res["rows"].items():
            focus = row["focus"]
            rows.append([
                res["site"], policy, row["responses"], f"{row['bytes'] / 1e6:.2f}",
                f"{row['articles_reached']} / {res['gold_articles']}",
                f"{row['article_share']:.3f}", f"{row['fewer_pages']:.1%}",
                f"{row['fewer_bytes']:.1%}", f"{row['pages_per_second']:.1f}",
                f"{row['speed_ratio']:.2f}" if row["speed_ratio"] is not None else "-",
                f"{row['focus_ms_per_page']:.2f}", f"{row['crawl_ms_per_page']:.0f}",
                focus.get("dropped", 0), focus.get("kept", 0),
            ])  # fmt: skip
    return markdown_table(headers, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", default="demo,pydoc", help="comma-separated: demo, pydoc")
    parser.add_argument("--policies", default="off,drop",
                        help="WISDOM_FOCUS values; the first is the baseline (default off,drop)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per crawl (median pages/s)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--keep", type=Path, help="keep crawl files (stores, logs) here")
    args = parser.parse_args(argv)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    started = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="focus-crawl-") as tmpdir:
        tmp = args.keep or Path(tmpdir)
        tmp.mkdir(parents=True, exist_ok=True)
        for site in [s.strip() for s in args.site.split(",") if s.strip()]:
            results.append(bench_site(site, policies, args.repeat, tmp))
    print(report(results))
    for res in results:
        for policy, row in res["rows"].items():
            if row["missed"]:
                print(f"\n{res['site']} {policy}: {len(row['missed'])} article pages of the "
                      f"baseline not reached: {', '.join(row['missed'][:10])}")
    print(f"\n({time.time() - started:.0f} s)")
    if args.json:
        write_json(args.json, {"environment": environment(), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
