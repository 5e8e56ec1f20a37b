"""Demo-site article benchmark: WISDOM's ArticleItem text against trafilatura, page by page.

Builds the demo news site (:mod:`sample_project.demo_site`, 150 article pages with their gold
body text), crawls it once with the sample project's ``demo`` spider and the add-on on (a
``scrapy crawl`` subprocess from the repository root, a fresh SQLite store), then scores every
gold article page with token-shingle P/R/F1 (:func:`wisdom_scrapy.analysis.evaluation.shingle_prf`):

* **wisdom**: the page's ArticleItem ``text``; a gold article page without an ArticleItem
  scores P = R = F1 = 0;
* **trafilatura**: ``trafilatura.extract(html, include_comments=False)`` on the served file.

It also counts the last line of every WISDOM text (what the body ends with shows the template
noise that stays: orphan headings, pagination, footers) and lists the worst pages.

**Roles** (issue 30: the feed holds articles and nothing else under that role): over every page
the crawl emitted an item for, the precision and recall of the role "article" and of "toc"
against the gold roles (tag, author and month archives are lists; print, share, static, promo
and the archive index are "other"), and the pages emitted as articles that are not. The crawl
is a *cold* one (a fresh store); then the site is crawled a second time with the same store
(warm), and the pages whose role differs between the two crawls are counted: the first crawl
of a site must be as clean as the second.

::

    python benchmarks/demo_articles.py
    python benchmarks/demo_articles.py --keep /tmp/demo_q --json demo.json
    python benchmarks/demo_articles.py --site-dir /tmp/demo_q --items /tmp/demo_q/items.jsonl

``--site-dir`` with ``--items`` scores an existing build and crawl without crawling again (and
``--items2`` a second, warm crawl's items).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import REPO_ROOT, dist_version, environment, markdown_table, write_json
else:
    from ._common import REPO_ROOT, dist_version, environment, markdown_table, write_json

from wisdom_scrapy.analysis.evaluation import PRF, shingle_prf


def build_and_crawl(workdir: Path, timeout: float) -> tuple[Path, Path]:
    """Build the demo site in ``workdir`` and crawl it twice with one store, fresh before the
    first crawl (cold) and kept for the second (warm); return both items files."""
    from sample_project.demo_site import build_demo_site

    build_demo_site(workdir)
    store = workdir / "wisdom.db"
    for leftover in workdir.glob("wisdom.db*"):
        leftover.unlink()
    return (_crawl(workdir, store, workdir / "items.jsonl", timeout),
            _crawl(workdir, store, workdir / "items-warm.jsonl", timeout))  # fmt: skip


def _crawl(workdir: Path, store: Path, items: Path, timeout: float) -> Path:
    """One crawl of the demo site built in ``workdir`` into ``items``, with ``store``."""
    items.unlink(missing_ok=True)
    command = [sys.executable, "-m", "scrapy", "crawl", "demo", "-a", f"site_dir={workdir}",
               "-a", "port=0", "-O", str(items), "-s", f"WISDOM_STORE_URI=sqlite:///{store}",
               "-s", "LOG_LEVEL=WARNING"]  # fmt: skip
    print("crawl:", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip
    if done.returncode != 0 or not items.is_file():
        raise SystemExit(f"crawl failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return items


def load_items(path: Path) -> dict[str, dict[str, Any]]:
    """ArticleItems by URL path (the demo server's host and port vary from run to run)."""
    from urllib.parse import urlsplit

    found: dict[str, dict[str, Any]] = {}
    for line in path.read_text("utf-8").splitlines():
        item = json.loads(line)
        if item.get("role") == "article" and "text" in item and "url" in item:
            found[urlsplit(item["url"]).path] = item
    return found


def load_roles(path: Path) -> dict[str, str]:
    """The role of every page item (article, toc, other) by URL path."""
    from urllib.parse import urlsplit

    roles: dict[str, str] = {}
    for line in path.read_text("utf-8").splitlines():
        item = json.loads(line)
        if "url" in item and item.get("role") in ("article", "toc", "other"):
            roles.setdefault(urlsplit(item["url"]).path, item["role"])
    return roles


def role_figures(site_dir: Path, cold: dict[str, str], warm: dict[str, str] | None
                 ) -> dict[str, Any]:
    """Precision/recall of "article" and "toc" over every page with an item (module docstring),
    the non-articles emitted as articles (by gold kind), and the roles the warm crawl changed."""
    pages = json.loads((site_dir / "ground_truth.json").read_text("utf-8"))["pages"]
    gold = {path: pages[path]["role"] for path in cold if path in pages}
    figures: dict[str, Any] = {"pages": len(gold)}
    for role in ("article", "toc"):
        emitted = [p for p in gold if cold[p] == role]
        right = sum(1 for p in emitted if gold[p] == role)
        wanted = sum(1 for p in gold if gold[p] == role)
        figures[role] = {"precision": right / len(emitted) if emitted else 0.0,
                         "recall": right / wanted if wanted else 0.0,
                         "emitted": len(emitted), "gold": wanted}  # fmt: skip
    figures["false_articles"] = dict(Counter(
        pages[p]["kind"] for p in gold if cold[p] == "article" and gold[p] != "article"))
    if warm is not None:
        changed = sorted(p for p in cold if p in warm and warm[p] != cold[p])
        figures["changed_on_warm_crawl"] = len(changed)
        figures["changed_examples"] = [f"{p}: {cold[p]} -> {warm[p]}" for p in changed[:10]]
    return figures


def toc_link_figures(site_dir: Path, items: Path) -> dict[str, Any]:
    """How well the TocItems' links name what their pages list, pooled over the TocItems of
    gold list pages: precision = share of their links that lead to an article page, recall =
    share of the stories the gold lists (``links``) that are among them; the kinds of page the
    other links lead to (author, tag, pagination: the page's own kind); TocItems without a
    link; and what an emitted TOC that is no gold list links to (the archive index: months)."""
    from urllib.parse import urlsplit

    pages = json.loads((site_dir / "ground_truth.json").read_text("utf-8"))["pages"]
    kinds = {path: page["kind"] for path, page in pages.items()}
    found = listed = right = reached = 0
    wrong: Counter[str] = Counter()
    empty, not_lists = [], {}
    for line in items.read_text("utf-8").splitlines():
        item = json.loads(line)
        if item.get("role") != "toc" or "links" not in item:
            continue
        path = urlsplit(item["url"]).path
        links = [urlsplit(link["url"]).path for link in item["links"]]
        if not links:
            empty.append(path)
        if path not in pages or pages[path]["role"] != "toc":
            not_lists[path] = dict(Counter(kinds.get(link, "?") for link in links))
            continue
        gold = set(pages[path]["links"])
        found += len(links)
        right += sum(1 for link in links if kinds.get(link) in ("article", "column"))
        wrong.update(kinds.get(link, "?") for link in links
                     if kinds.get(link) not in ("article", "column"))  # fmt: skip
        listed += len(gold)
        reached += len(gold & set(links))
    return {"links": found, "precision": right / found if found else 0.0,
            "recall": reached / listed if listed else 0.0, "other_links_by_kind": dict(wrong),
            "without_links": sorted(empty), "tocs_not_lists": not_lists}  # fmt: skip


def _trafilatura() -> Any:
    import trafilatura

    return lambda html: trafilatura.extract(html, include_comments=False)


def evaluate(site_dir: Path, items: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per gold article page: WISDOM's and trafilatura's P/R/F1, and the means."""
    truth = json.loads((site_dir / "ground_truth.json").read_text("utf-8"))
    extract = _trafilatura()
    rows = []
    for path, page in sorted(truth["pages"].items()):
        if page.get("role") != "article":
            continue
        gold = page["text"]
        item = items.get(path)
        html = (site_dir / "site" / path.lstrip("/")).read_text("utf-8")
        wisdom = shingle_prf(item["text"], gold) if item else PRF(0.0, 0.0, 0.0)
        traf = shingle_prf(extract(html) or "", gold)
        last = item["text"].rstrip().rsplit("\n", 1)[-1].strip() if item else ""
        rows.append({"path": path, "wisdom": wisdom._asdict(), "trafilatura": traf._asdict(),
                     "item": item is not None, "last_line": last})  # fmt: skip

    def mean(name: str, key: str) -> float:
        return statistics.fmean(r[name][key] for r in rows) if rows else 0.0

    summary = {name: {k: mean(name, k) for k in ("precision", "recall", "f1")}
               for name in ("wisdom", "trafilatura")}  # fmt: skip
    last_lines = Counter(r["last_line"] for r in rows).most_common()
    return {"pages": len(rows), "with_item": sum(r["item"] for r in rows), "summary": summary,
            "last_lines": last_lines, "rows": rows}  # fmt: skip


def report(result: dict[str, Any], worst: int) -> str:
    s = result["summary"]
    lines = [f"gold article pages: {result['pages']}, with an ArticleItem: {result['with_item']}",
             "", markdown_table(["extractor", "P", "R", "F1"],
                                [[n, f"{s[n]['precision']:.3f}", f"{s[n]['recall']:.3f}",
                                  f"{s[n]['f1']:.3f}"] for n in ("wisdom", "trafilatura")]),
             "", "last line of WISDOM's text (most common):"]  # fmt: skip
    lines += [f"  {n:4d} × {text[:90]!r}" for text, n in result["last_lines"][:8]]
    lines += ["", f"worst {worst} pages (WISDOM F1, trafilatura F1):"]
    rows = sorted(result["rows"], key=lambda r: r["wisdom"]["f1"])[:worst]
    lines += [f"  {r['wisdom']['f1']:.3f} {r['trafilatura']['f1']:.3f} {r['path']}" for r in rows]
    roles = result.get("roles")
    if roles:
        lines += ["", f"roles over the {roles['pages']} pages with an item (cold crawl):"]
        lines += [f"  {role}: precision {roles[role]['precision']:.3f} ({roles[role]['emitted']} "
                  f"emitted), recall {roles[role]['recall']:.3f} ({roles[role]['gold']} gold)"
                  for role in ("article", "toc")]  # fmt: skip
        lines.append(f"  emitted as articles, not articles (by kind): {roles['false_articles']}")
        if "changed_on_warm_crawl" in roles:
            lines.append(f"  roles changed on the warm crawl: {roles['changed_on_warm_crawl']} "
                         f"{roles['changed_examples']}")
    toc = result.get("toc_links")
    if toc:
        lines += ["", f"TOC links of the gold list pages (cold crawl): {toc['links']} links, "
                  f"precision {toc['precision']:.3f} (lead to articles), recall "
                  f"{toc['recall']:.3f} (listed stories named)",
                  f"  other links by the kind of page they lead to: {toc['other_links_by_kind']}",
                  f"  TocItems without links: {toc['without_links']}",
                  f"  TocItems of pages no gold list, links by kind: {toc['tocs_not_lists']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build and crawl here (kept afterwards)")
    parser.add_argument("--site-dir", type=Path, help="score this existing build (with --items)")
    parser.add_argument("--items", type=Path, help="items of an existing crawl of --site-dir")
    parser.add_argument("--items2", type=Path, help="items of a second (warm) crawl of it")
    parser.add_argument("--worst", type=int, default=5, help="list this many worst pages")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for the crawl")
    parser.add_argument("--json", type=Path, help="write every figure (and per page) here")
    args = parser.parse_args(argv)
    if (args.site_dir is None) != (args.items is None):
        parser.error("--site-dir and --items go together")
    if args.site_dir is not None:
        site_dir, items_file, warm_file = args.site_dir, args.items, args.items2
    else:
        site_dir = args.keep or Path(tempfile.mkdtemp(prefix="demo_articles-"))
        site_dir.mkdir(parents=True, exist_ok=True)
        items_file, warm_file = build_and_crawl(site_dir, args.timeout)
    result = evaluate(site_dir, load_items(items_file))
    result["roles"] = role_figures(site_dir, load_roles(items_file),
                                   load_roles(warm_file) if warm_file else None)
    result["toc_links"] = toc_link_figures(site_dir, items_file)
    print(report(result, args.worst))
    if args.json:
        result["environment"] = {**environment(), "trafilatura": dist_version("trafilatura")}
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
