"""Blog and news sites: WISDOM's article text and page roles against single-page extractors.

For each real generated site of ``../shared/data/sites/`` (``sites.json`` there gives its theme's
body selector and the URL rules of its post and list pages), a static server on 127.0.0.1 serves
the site and the sample project's ``site`` spider crawls it from its start page twice, each crawl
a ``scrapy crawl`` subprocess with the add-on on and a fresh SQLite store
(:func:`benchmarks.site_crawl.run_crawl`):

* **on**: the add-on as configured (``WISDOM_FOCUS=drop``, the default): the product;
* **focus off**: ``WISDOM_FOCUS=off``: every link is followed (only the "posts reached" column).

Gold, from the files (the crawler never sees it): a page whose URL path matches the site's post
rule is a **post** (role "article"), one matching the list rule a **list** page (role "toc"),
any other page has no gold role; meta-refresh alias stubs are left out. A post's gold text is
its theme's body element (``body_css``) without script/style, text joined with a space at block
boundaries (:func:`benchmarks._common.html_to_text`).

Scores on the same pages, every gold post (token-shingle P/R/F1,
:func:`wisdom_scrapy.analysis.evaluation.shingle_prf`, per page, then the mean; on a Chinese site
every CJK character is a token, :func:`benchmarks.site_crawl.cjk_as_tokens`):

* **wisdom**: the post's ArticleItem ``text``; a post emitted with another role, or never
  reached, scores as empty text (P = R = F1 = 0);
* **single-page**: ``analyze_page(html, url)`` with no store: the package's own single-page
  extractor, the ablation of the site-level analysis (another role scores as empty too);
* **trafilatura**: ``trafilatura.extract(html, include_comments=False)``;
* **readability**: readability-lxml ``Document(html).summary()`` → text (``html_to_text``);
* **roles**: precision/recall of "article" for posts and of "toc" for list pages, over the pages
  the "on" crawl fetched that have a gold role;
* **reach**: gold posts (and list pages) fetched by the crawl with focusing on vs off, and the
  posts the "off" crawl fetched that the "on" crawl did not (**posts lost to focusing**).

The figures issue 30 sets targets for are in the table: **list recall** (the "toc" recall over
every list page reached, archives that list one post included), **article-role precision over
posts and lists** (the "article" precision: pages emitted as articles that are posts), post text
F1 (the wisdom column) against trafilatura and readability, and the posts lost to focusing.

The demo news site is measured by ``benchmarks/demo_articles.py`` (same metric, its own gold).

::

    python benchmarks/blog_sites.py                          # all sites, ~10 min
    python benchmarks/blog_sites.py --site erikmcclure --site ctripfe --json blogs.json
    python benchmarks/blog_sites.py --site ctripfe --keep /tmp/blogs --worst 10
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import lxml.etree
import lxml.html

from benchmarks._common import (
    SHARED_DATA,
    dist_version,
    environment,
    html_to_text,
    markdown_table,
    write_json,
)
from benchmarks.site_crawl import (
    ZERO,
    Crawl,
    article_score,
    decode_page,
    html_pages,
    mean_prf,
    role_prf,
    run_crawl,
    text_score,
)
from wisdom_scrapy.analysis.evaluation import PRF
from wisdom_scrapy.analysis.page_analysis import analyze_page

SITES_DIR = SHARED_DATA / "sites"
EXTRACTORS = ("wisdom", "single-page", "trafilatura", "readability")
_REFRESH = re.compile(r"<meta[^>]+http-equiv=[\"']?refresh", re.I)


@dataclass(frozen=True)
class BlogSite:
    """One site of ``sites.json``."""

    name: str
    directory: Path
    body_css: str
    post_re: re.Pattern[str]
    list_re: re.Pattern[str]
    start: str
    language: str
    truth: Path | None = None
    """A ground-truth file in the demo site's format (its gold roles and texts win)."""

    def role_of(self, path: str) -> str | None:
        """Gold role of a URL path: "article" (a post), "toc" (a list page) or None."""
        if self.post_re.search(path):
            return "article"
        return "toc" if self.list_re.search(path) else None

    @property
    def cjk(self) -> bool:
        return self.language in ("zh", "ja", "ko")


def load_sites(directory: Path = SITES_DIR) -> dict[str, BlogSite]:
    """The sites described by ``directory/sites.json``."""
    index = directory / "sites.json"
    if not index.is_file():
        raise SystemExit(f"no {index}: the blog sites are missing from ../shared/data")
    return {
        name: BlogSite(name, directory / name, entry["body_css"], re.compile(entry["post_url_re"]),
                       re.compile(entry["list_url_re"]), entry["start"], entry["language"])
        for name, entry in json.loads(index.read_text("utf-8")).items()
    }  # fmt: skip


def url_path(file: Path, site_dir: Path) -> str:
    """The URL path a static server serves ``file`` at (``x/index.html`` is ``/x/``)."""
    relative = file.relative_to(site_dir).as_posix()
    if relative == "index.html" or relative.endswith("/index.html"):
        relative = relative.removesuffix("index.html")
    return "/" + relative


def gold_text(html: str, body_css: str) -> str | None:
    """Text of the first element matching ``body_css`` (script/style left out, one line per
    block element), or None when nothing matches."""
    try:
        root = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return None
    found = root.cssselect(body_css)
    return html_to_text(lxml.html.tostring(found[0], encoding="unicode")) if found else None


@dataclass
class GoldPage:
    """A page of the site with a gold role: ``role`` "article" (a post) or "toc" (a list)."""

    path: str
    role: str
    html: str
    text: str = ""


def demo_site(workdir: Path) -> BlogSite:
    """The demo news site, built in ``workdir`` (:func:`sample_project.demo_site.build_demo_site`);
    its ground truth gives the roles (article, toc; "other" has no gold role here) and texts."""
    from sample_project.demo_site import GROUND_TRUTH_FILE, build_demo_site

    directory = build_demo_site(workdir / "demo")
    never = re.compile(r"(?!)")
    return BlogSite("demo", directory, "", never, never, "/index.html", "en",
                    workdir / "demo" / GROUND_TRUTH_FILE)  # fmt: skip


def _truth_gold(site: BlogSite, truth: Path) -> dict[str, GoldPage]:
    pages = json.loads(truth.read_text("utf-8"))["pages"]
    gold = {}
    for path, page in sorted(pages.items()):
        if page["role"] in ("article", "toc"):
            html = (site.directory / path.lstrip("/")).read_text("utf-8")
            gold[path] = GoldPage(path, page["role"], html, page["text"])
    return gold


def site_gold(site: BlogSite) -> dict[str, GoldPage]:
    """Gold posts and list pages by URL path (alias stubs that only redirect are left out)."""
    if site.truth is not None:
        return _truth_gold(site, site.truth)
    pages: dict[str, GoldPage] = {}
    for file in sorted(site.directory.rglob("*.html")):
        path = url_path(file, site.directory)
        role = site.role_of(path)
        if role is None:
            continue
        html = decode_page(file.read_bytes())
        if _REFRESH.search(html[:4096]):
            continue
        page = GoldPage(path, role, html)
        if role == "article":
            text = gold_text(html, site.body_css)
            if text is None:
                raise SystemExit(f"{site.name}: {path}: body_css {site.body_css!r} matches nothing")
            page.text = text
        pages[path] = page
    return pages


def _extractors() -> dict[str, Callable[[str, str], str]]:
    """text(html, url) of the baselines: the single-page ablation, trafilatura, readability."""
    import trafilatura
    from readability import Document

    def single_page(html: str, url: str) -> str:
        analysis = analyze_page(html, url)
        return analysis.article_text if analysis.role == "article" else ""

    return {
        "single-page": single_page,
        "trafilatura": lambda html, url: trafilatura.extract(html, include_comments=False) or "",
        "readability": lambda html, url: html_to_text(Document(html).summary()),
    }


def _by_path(crawl: Crawl, base_url: str) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """URL paths of the HTML pages a crawl fetched, and its first page item by path."""
    fetched = {urlsplit(u).path for u in html_pages(crawl, base_url)}
    items: dict[str, dict[str, Any]] = {}
    for item in crawl.items:
        if "url" in item:
            items.setdefault(urlsplit(str(item["url"])).path, item)
    return fetched, items


def evaluate(site: BlogSite, gold: dict[str, GoldPage], on: Crawl, off: Crawl, base_url: str
             ) -> dict[str, Any]:
    """Every figure of one site, and per page."""
    fetched_on, items = _by_path(on, base_url)
    fetched_off, _ = _by_path(off, base_url)
    posts = [p for p in gold.values() if p.role == "article"]
    extractors = _extractors()
    scores: dict[str, dict[str, PRF]] = {name: {} for name in EXTRACTORS}
    for post in posts:
        item = items.get(post.path) if post.path in fetched_on else None
        scores["wisdom"][post.path] = article_score(item, post.text, site.cjk) if item else ZERO
        for name, extract in extractors.items():
            try:
                text = extract(post.html, base_url.rstrip("/") + post.path)
            except Exception:  # one failing page must not hide the rest: scored as empty
                text = ""
            scores[name][post.path] = text_score(text, post.text, site.cjk)
    emitted = [p.path for p in posts if (items.get(p.path) or {}).get("role") == "article"]
    articles = {name: mean_prf(s.values()) for name, s in scores.items()}
    articles["wisdom, emitted as articles"] = mean_prf(scores["wisdom"][p] for p in emitted)

    gold_roles = {p.path: p.role for p in gold.values() if p.path in fetched_on}
    predicted = {p: str(items[p].get("role")) for p in gold_roles if p in items}
    roles = {"posts": role_prf(gold_roles, predicted, "article"),
             "lists": role_prf(gold_roles, predicted, "toc")}  # fmt: skip

    def reached(role: str, fetched: set[str]) -> int:
        return sum(1 for p in gold.values() if p.role == role and p.path in fetched)

    reach = {f"{role}_{mode}": reached(gold_role, fetched)
             for role, gold_role in (("posts", "article"), ("lists", "toc"))
             for mode, fetched in (("on", fetched_on), ("off", fetched_off))}  # fmt: skip
    reach["posts_lost_to_focus"] = sorted(
        p.path for p in posts if p.path in fetched_off and p.path not in fetched_on)
    per_page = {
        page.path: {
            "gold_role": page.role,
            "emitted": (items.get(page.path) or {}).get("role") if page.path in fetched_on
            else "not reached",
            **{name: s[page.path]._asdict() for name, s in scores.items() if page.path in s},
        }
        for page in gold.values()
    }
    tocs = [([str(link["url"]) for link in items[p.path].get("links", [])], p.html,
             base_url.rstrip("/") + p.path)
            for p in gold.values() if p.role == "toc" and (items.get(p.path) or {}).get("role")
            == "toc"]  # fmt: skip
    return {"posts": len(posts), "lists": sum(1 for p in gold.values() if p.role == "toc"),
            "articles": articles, "roles": roles, "reach": reach, "pages": per_page,
            "toc_links": toc_link_figures(site, tocs)}  # fmt: skip


def post_paths(site: BlogSite, urls: Iterable[str]) -> list[str]:
    """The URL paths of ``urls`` that are posts of ``site`` (its post rule), in order."""
    return [path for path in (urlsplit(u).path for u in urls) if site.role_of(path) == "article"]


def toc_link_figures(site: BlogSite, tocs: Iterable[tuple[list[str], str, str]]
                     ) -> dict[str, float]:
    """TOC links of list pages, pooled: ``tocs`` gives per list page emitted as a TOC its TOC
    link URLs, its HTML and URL. Precision = share of the TOC links that lead to a post (not to
    an author, tag or category list, a page number, a menu); recall = share of the posts the
    page links to anywhere that its TOC links name (a sidebar listing every post, as
    erikmcclure's, keeps it low by design: compare before and after, not with 1)."""
    from wisdom_scrapy.page.model import PageModel

    found = right = listed = named = 0
    for links, html, url in tocs:
        found += len(links)
        right += len(post_paths(site, links))
        linked = set(post_paths(site, (lk.url for lk in PageModel.from_html(html, url).links())))
        listed += len(linked)
        named += len(linked & set(post_paths(site, links)))
    return {"toc_link_precision": right / found if found else 0.0,
            "toc_link_recall": named / listed if listed else 0.0}  # fmt: skip


def crawl_site(site: BlogSite, workdir: Path, timeout: float) -> dict[str, Any]:
    """Serve the site, crawl it with focusing on and off, and score it."""
    from wisdom_scrapy.testing import serve_directory

    crawls: dict[str, Crawl] = {}
    with serve_directory(site.directory) as base_url:
        for mode in ("on", "off"):
            name = f"{site.name}-{mode}"
            store = workdir / f"{name}.wisdom.db"
            for leftover in workdir.glob(f"{name}.wisdom.db*"):
                leftover.unlink()
            settings = ["-s", f"WISDOM_STORE_URI=sqlite:///{store}",
                        "-s", f"WISDOM_REPORT_URI={workdir / f'{name}.report.html'}",
                        *(["-s", "WISDOM_FOCUS=off"] if mode == "off" else [])]  # fmt: skip
            print(f"crawl {name} ...", flush=True)
            crawl = run_crawl(name, base_url + site.start.lstrip("/"), workdir, settings, timeout)
            if crawl.problem:
                raise SystemExit(f"crawl {name} failed: {crawl.problem}\n{crawl.log_tail()}")
            print(f"  {len(crawl.items)} items in {crawl.wall_seconds:.0f} s", flush=True)
            crawls[mode] = crawl
    result = evaluate(site, site_gold(site), crawls["on"], crawls["off"], base_url)
    result["commands"] = {mode: crawl.command for mode, crawl in crawls.items()}
    return result


# ------------------------------------------------------------------------------------------
# The accuracy gate (tests/test_accuracy_gate.py): fixture subsets, fed rather than crawled
# ------------------------------------------------------------------------------------------

FIXTURE_SITES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sites"
FLOORS_FILE = FIXTURE_SITES.parent / "accuracy_floors.json"
#: How far below the measured figures the floors are pinned.
FLOOR_MARGIN = 0.01
GATE_MODES = ("default", "warm")
"""``default``: the package's parameters (a subset smaller than the warm-up size is analysed
page by page, as a crawl of so small a site would be); ``warm``: the site-level analysis forced
on the subset (``min_pages`` = its page count), so a regression there shows too."""


def fed_analyses(site: BlogSite, mode: str = "default", titles: Any = None,
                 paths: Sequence[str] | None = None) -> Iterator[tuple[str, Any, Any, Any, Any]]:
    """(path, gold page, analysis, model, snapshot) of every gold page of ``site``, every HTML
    page of ``site.directory`` fed first in path order into one ``memory://`` store, block
    repetition and term index (for the anchor precision index of the links between fed pages)
    and each gold page analysed with that store's snapshot, as the crawl's extractor does once
    the site is fed. ``titles`` (a ``SiteTitles``) learns every page's title up front.
    ``paths``: only these URL paths, fed in this order (a site's first few pages, as a crawl
    meets them), and only their gold pages analysed."""
    from wisdom_scrapy import open_store
    from wisdom_scrapy.engine.waits import TermIndex
    from wisdom_scrapy.engine.writes import feed_model
    from wisdom_scrapy.mining.repetition import stored_repetition
    from wisdom_scrapy.mining.wisdom import DEFAULT_PARAMS, WisdomParams
    from wisdom_scrapy.page.model import PageModel

    base, host = "http://127.0.0.1:8000", "127.0.0.1:8000"
    store, terms, models = open_store("memory://"), TermIndex(), {}
    files = {url_path(f, site.directory): f for f in sorted(site.directory.rglob("*.html"))}
    for path in files if paths is None else paths:
        raw = files[path].read_bytes()
        if _REFRESH.search(decode_page(raw[:4096])):
            continue
        model = models[path] = PageModel.from_html(raw, base + path)
        feed_model(store, model, site=host)
        terms.add(model.url, model.vocab)
        if titles is not None:
            titles.add(model.title)  # every title up front: a best case (a crawl learns as it goes)
    snapshot = store.snapshot(host)
    repetition = stored_repetition(store, host)  # the crawl's block repetition
    params = WisdomParams(min_pages=max(2, len(models))) if mode == "warm" else DEFAULT_PARAMS
    for path, page in site_gold(site).items():
        if path not in models:
            continue
        analysis = analyze_page(None, base + path, model=models[path], snapshot=snapshot,
                                target_terms=terms.get, params=params,
                                repetition=repetition)  # fmt: skip
        yield path, page, analysis, models[path], snapshot


def fed_figures(site: BlogSite, mode: str = "default") -> dict[str, float]:
    """Article F1/P/R (mean over gold posts; another role scores as empty text) and role P/R of
    posts and list pages, for every HTML page of ``site.directory`` fed and analysed as
    :func:`fed_analyses` does: no crawl, no server, the same figures on every run."""
    from benchmarks.fields import gold_heading
    from wisdom_scrapy.engine.waits import items_from_analysis
    from wisdom_scrapy.mining.fields import SiteTitles

    gold = site_gold(site)
    predicted, scores, titled, tocs = {}, [], [], []
    titles = SiteTitles()
    analysed = list(fed_analyses(site, mode, titles))
    for path, page, analysis, model, snapshot in analysed:
        predicted[path] = analysis.role
        if page.role == "toc" and analysis.role == "toc":
            tocs.append(([u for u, _ in analysis.toc_links], page.html, model.url))
        if page.role == "article":
            text = analysis.article_text if analysis.role == "article" else ""
            scores.append(text_score(text, page.text, site.cjk))
            title = ""
            if analysis.role == "article":  # the item's title, as the crawl's extractor sets it
                item = items_from_analysis(analysis, model.url, model, snapshot,
                                           fields=frozenset())  # fmt: skip
                title = titles.without_affixes(item.title)
            titled.append(" ".join(title.split()) == gold_heading(page.html, site.body_css))
    roles = {p: g.role for p, g in gold.items()}
    articles = mean_prf(scores)
    figures = {"article_f1": articles["f1"], "article_precision": articles["precision"],
               "article_recall": articles["recall"],
               # issue 31: the headline, exactly (a post with another role has none)
               "title_exact": sum(titled) / len(titled) if titled else 1.0}  # fmt: skip
    for name, role in (("post", "article"), ("list", "toc")):
        found = role_prf(roles, predicted, role)
        figures[f"{name}_role_precision"] = found["precision"]
        figures[f"{name}_role_recall"] = found["recall"]
    return {**figures, **toc_link_figures(site, tocs)}


def write_floors(path: Path = FLOORS_FILE) -> dict[str, Any]:
    """Measure every fixture site in every gate mode and pin the floors FLOOR_MARGIN below."""
    sites = load_sites(FIXTURE_SITES)
    floors: dict[str, Any] = {
        "how": "tests/test_accuracy_gate.py fails when a figure of a fixture subset "
               "(tests/fixtures/sites) falls below its floor. Floors = figures measured "
               f"minus {FLOOR_MARGIN}, pinned with: python benchmarks/blog_sites.py "
               "--write-floors (re-pin after a change that improves them, and say so in "
               "the commit).",
        "measured": environment()["time"],
        "margin": FLOOR_MARGIN,
        "sites": {},
    }  # fmt: skip
    for name, site in sorted(sites.items()):
        floors["sites"][name] = {}
        for mode in GATE_MODES:
            measured = fed_figures(site, mode)
            floors["sites"][name][mode] = {
                key: round(max(0.0, value - FLOOR_MARGIN), 3) for key, value in measured.items()}
            print(f"{name} {mode}: " + ", ".join(f"{k} {v:.3f}" for k, v in measured.items()))
    write_json(path, floors)
    return floors


def _cell(s: dict[str, float]) -> str:
    return f"{s['f1']:.3f} ({s['precision']:.2f}/{s['recall']:.2f})" if s["n"] else "-"


def _pr(r: dict[str, float]) -> str:
    return f"{r['precision']:.2f}/{r['recall']:.2f}"


def table(results: dict[str, dict[str, Any]]) -> str:
    """One row per site: article F1 (P/R) of every extractor, roles, reach."""
    headers = ["site", "posts", "wisdom F1 (P/R)", "single-page", "trafilatura", "readability",
               "wisdom, emitted as articles", "post role P/R", "list role P/R",
               "posts reached on/off", "lists reached on/off", "posts lost",
               "TOC links P/R"]  # fmt: skip
    rows = []
    for name, r in results.items():
        a, reach = r["articles"], r["reach"]
        emitted = a["wisdom, emitted as articles"]
        rows.append([name, r["posts"], *(_cell(a[e]) for e in EXTRACTORS),
                     f"{_cell(emitted)} on {emitted['n']}",
                     _pr(r["roles"]["posts"]), _pr(r["roles"]["lists"]),
                     f"{reach['posts_on']}/{reach['posts_off']}",
                     f"{reach['lists_on']}/{reach['lists_off']}",
                     len(reach["posts_lost_to_focus"]),
                     "{toc_link_precision:.2f}/{toc_link_recall:.2f}".format(**r["toc_links"])])
    return markdown_table(headers, rows)


def worst_pages(result: dict[str, Any], limit: int) -> Iterable[str]:
    """The posts where WISDOM scores lowest, and the pages emitted with a wrong role."""
    pages = result["pages"]
    posts = sorted((p for p in pages if pages[p]["gold_role"] == "article"),
                   key=lambda p: pages[p]["wisdom"]["f1"])  # fmt: skip
    for p in posts[:limit]:
        w, t = pages[p]["wisdom"], pages[p]["trafilatura"]
        yield (f"  post {w['f1']:.3f} (P {w['precision']:.2f} R {w['recall']:.2f}) "
               f"traf {t['f1']:.3f} emitted {pages[p]['emitted']}: {p}")  # fmt: skip
    wrong = [p for p in pages if pages[p]["gold_role"] == "toc" and pages[p]["emitted"] != "toc"]
    for p in wrong[:limit]:
        yield f"  list emitted {pages[p]['emitted']}: {p}"


def main(argv: list[str] | None = None) -> int:
    sites = load_sites()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", action="append", choices=[*sorted(sites), "demo"],
                        help="this site only (repeatable; default: all, demo included)")
    parser.add_argument("--worst", type=int, default=5, help="list this many worst pages a site")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per crawl")
    parser.add_argument("--keep", type=Path, help="keep items, stats, logs and stores here")
    parser.add_argument("--json", type=Path, help="write every figure (and per page) here")
    parser.add_argument("--write-floors", action="store_true",
                        help=f"measure the fixture subsets ({FIXTURE_SITES}) and pin the "
                             f"accuracy gate's floors in {FLOORS_FILE} (no crawl)")
    args = parser.parse_args(argv)
    if args.write_floors:
        write_floors()
        print(f"floors written to {FLOORS_FILE}")
        return 0
    with contextlib.ExitStack() as stack:
        workdir = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        workdir.mkdir(parents=True, exist_ok=True)
        results = {}
        for name in args.site or [*sorted(sites), "demo"]:
            site = demo_site(workdir) if name == "demo" else sites[name]
            results[name] = crawl_site(site, workdir, args.timeout)
            print(f"\n{name}: worst pages (WISDOM F1, trafilatura F1, emitted role)")
            print("\n".join(worst_pages(results[name], args.worst)), flush=True)
    print()
    print(table(results))
    if args.keep:
        print(f"items, stats, logs and stores kept in {workdir}")
    if args.json:
        versions = {n: dist_version(n) for n in ("scrapy", "trafilatura", "readability-lxml")}
        write_json(args.json, {"environment": environment(), "versions": versions,
                               "sites": results})  # fmt: skip
        print(f"figures written to {args.json}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
