"""Article fields: ArticleItem ``title``, ``author`` and ``published`` against the sites' gold,
beside trafilatura's metadata on the same pages.

For the demo news site (its ground truth states each article's headline, author and date) and
every site of ``../shared/data/sites/`` (gold headline: the post's heading, :func:`gold_heading`),
one crawl with the add-on on (the sample project's ``site`` spider, a fresh SQLite store,
:func:`benchmarks.site_crawl.run_crawl`) gives the ArticleItems; on every gold post:

* **title exact**: the item's ``title`` equals the gold headline (whitespace-normalised), over
  the posts that left as an ArticleItem; **before**: the raw ``<title>`` (what the field held
  before issue 31); **cold**: :func:`~wisdom_scrapy.mining.fields.article_fields` on the page
  alone (single-page analysis, no site titles: a cold site's first page); **trafilatura**:
  ``bare_extraction(html, with_metadata=True)``'s title; **affixes only**: the ``<title>``
  without the affixes the site's titles repeat (:class:`~wisdom_scrapy.mining.fields.
  SiteTitles` fed every page's ``<title>``), the fallback for a page whose headline is no
  heading;
* **author / date precision** (demo only, where the gold states them): of the posts given a
  value, the share equal to the gold (a date compares as the day, and for WISDOM also to the
  minute); **coverage**: the share of posts given one.

::

    python benchmarks/fields.py                       # demo + four sites, ~6 min
    python benchmarks/fields.py --site demo --keep /tmp/fields --json fields.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import lxml.etree
import lxml.html

from benchmarks._common import environment, markdown_table, write_json
from benchmarks.blog_sites import BlogSite, demo_site, load_sites, site_gold
from benchmarks.site_crawl import decode_page, run_crawl
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.mining.fields import SiteTitles, article_fields

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def gold_heading(html: str, body_css: str) -> str:
    """A post's headline as its theme shows it: the last heading before the body inside the
    body's parent or grandparent (the post's header), else the body's first heading; "" when
    there is neither."""
    root = lxml.html.fromstring(html)
    body = root.cssselect(body_css)[0]
    ancestors = list(body.iterancestors())[:2]
    before = ""
    for el in root.iter():
        if el is body:
            break
        if el.tag in _HEADINGS and any(a in el.iterancestors() for a in ancestors):
            before = _norm(el.text_content())
    if before:
        return before
    first = next(body.iter(*_HEADINGS), None)
    return _norm(first.text_content()) if first is not None else ""


def _raw_title(html: str) -> str:
    try:
        root = lxml.html.fromstring(html)
    except lxml.etree.ParserError:  # an empty file
        return ""
    found = root.find(".//title")
    return _norm(found.text_content()) if found is not None else ""


def _day(value: str | None) -> str:
    return (value or "")[:10]


def _minute(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(value or "").replace(second=0, tzinfo=None)
    except ValueError:
        return None


def _cold(html: str, url: str) -> str:
    analysis = analyze_page(html, url)
    if analysis.model is None or analysis.role != "article":
        return ""
    meta = [b.node for b in analysis.blocks if b.kind == "metadata"]
    return article_fields(analysis.model, analysis.article_node, metadata=meta).title


def _share(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def score_site(site: BlogSite, workdir: Path, timeout: float) -> dict[str, Any]:
    """Crawl ``site`` once and score its posts' fields (module docstring)."""
    import trafilatura

    from wisdom_scrapy.testing import serve_directory

    gold = {p: g for p, g in site_gold(site).items() if g.role == "article"}
    truth: dict[str, dict[str, Any]] = {}
    if site.truth is not None:
        truth = json.loads(site.truth.read_text("utf-8"))["pages"]
    with serve_directory(site.directory) as base_url:
        store = workdir / f"{site.name}.wisdom.db"
        for leftover in workdir.glob(f"{site.name}.wisdom.db*"):
            leftover.unlink()
        print(f"crawl {site.name} ...", flush=True)
        crawl = run_crawl(site.name, base_url + site.start.lstrip("/"), workdir,
                          ["-s", f"WISDOM_STORE_URI=sqlite:///{store}"], timeout)  # fmt: skip
        if crawl.problem:
            raise SystemExit(f"crawl {site.name} failed: {crawl.problem}\n{crawl.log_tail()}")
    items = {urlsplit(i["url"]).path: i for i in crawl.items if i.get("role") == "article"}
    titles = SiteTitles()
    for file in sorted(site.directory.rglob("*.html")):
        titles.add(_raw_title(decode_page(file.read_bytes())))
    rows: list[dict[str, Any]] = []
    for path, page in sorted(gold.items()):
        headline = truth[path]["title"] if truth else gold_heading(page.html, site.body_css)
        found = trafilatura.bare_extraction(page.html, with_metadata=True)
        meta = found.as_dict() if found is not None else {}
        item = items.get(path)
        rows.append({
            "path": path, "gold": headline, "gold_author": truth.get(path, {}).get("author"),
            "gold_date": truth.get(path, {}).get("date"), "before": _raw_title(page.html),
            "affixes": titles.without_affixes(_raw_title(page.html)),
            "cold": _cold(page.html, "http://127.0.0.1" + path),
            "wisdom": item["title"] if item else None,
            "author": item.get("author") if item else None,
            "published": item.get("published") if item else None,
            "language": item.get("language") if item else None,
            "trafilatura": meta.get("title"), "t_author": meta.get("author"),
            "t_date": meta.get("date"),
        })  # fmt: skip
    return {"site": site.name, "rows": rows, "figures": figures(rows)}


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Title exact-match shares and author/date precision and coverage (module docstring)."""
    items = [r for r in rows if r["wisdom"] is not None]
    out: dict[str, Any] = {"posts": len(rows), "article_items": len(items)}
    for name in ("before", "affixes", "cold", "wisdom", "trafilatura"):
        over = items if name == "wisdom" else rows
        out[f"title_{name}"] = _share(sum(_norm(r[name]) == r["gold"] for r in over), len(over))
    stated = [r for r in items if r["gold_author"]]
    if stated:
        for who, key in (("wisdom", "author"), ("trafilatura", "t_author")):
            given = [r for r in stated if r[key]]
            out[f"author_{who}_precision"] = _share(
                sum(_norm(r[key]) == r["gold_author"] for r in given), len(given))
            out[f"author_{who}_coverage"] = _share(len(given), len(stated))
        for who, key in (("wisdom", "published"), ("trafilatura", "t_date")):
            given = [r for r in stated if r[key]]
            out[f"date_{who}_precision"] = _share(
                sum(_day(r[key]) == _day(r["gold_date"]) for r in given), len(given))
            out[f"date_{who}_coverage"] = _share(len(given), len(stated))
        given = [r for r in stated if r["published"]]
        out["date_wisdom_minute_precision"] = _share(
            sum(_minute(r["published"]) == _minute(r["gold_date"]) for r in given), len(given))
    return out


def main(argv: list[str] | None = None) -> int:
    sites = load_sites()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", action="append", choices=["demo", *sorted(sites)],
                        help="only these sites (repeatable; default: all)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per crawl")
    parser.add_argument("--keep", type=Path, help="keep items, stats and logs here")
    parser.add_argument("--json", type=Path, help="write every figure (and per page) here")
    parser.add_argument("--misses", type=int, default=3, help="list this many title misses")
    args = parser.parse_args(argv)
    names = args.site or ["demo", *sorted(sites)]
    with tempfile.TemporaryDirectory(prefix="wisdom-fields-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        results = []
        for name in names:
            site = demo_site(workdir) if name == "demo" else sites[name]
            results.append(score_site(site, workdir, args.timeout))
    print()
    print(markdown_table(
        ["site", "posts", "items", "title before", "affixes only", "title cold", "title wisdom",
         "trafilatura"],
        [[r["site"], f["posts"], f["article_items"], f["title_before"], f["title_affixes"],
          f["title_cold"],
          f["title_wisdom"], f["title_trafilatura"]] for r in results for f in [r["figures"]]]))
    for r in results:
        f = r["figures"]
        if "author_wisdom_precision" in f:
            print()
            print(markdown_table(["field", "wisdom P", "wisdom cov.", "trafilatura P",
                                  "trafilatura cov."], [
                ["author", f["author_wisdom_precision"], f["author_wisdom_coverage"],
                 f["author_trafilatura_precision"], f["author_trafilatura_coverage"]],
                ["date (day)", f["date_wisdom_precision"], f["date_wisdom_coverage"],
                 f["date_trafilatura_precision"], f["date_trafilatura_coverage"]],
                ["date (minute)", f["date_wisdom_minute_precision"], "", "", ""]]))  # fmt: skip
        misses = [x for x in r["rows"]
                  if x["wisdom"] is not None and _norm(x["wisdom"]) != x["gold"]]
        for x in misses[: args.misses]:
            print(f"  {r['site']} {x['path']}: {x['wisdom']!r} (gold {x['gold']!r})")
    if args.json:
        write_json(args.json, {"environment": environment(), "results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
