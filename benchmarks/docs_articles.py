"""Article text on more documentation sites: WISDOM against trafilatura.

Sites beside ``pydoc_quality`` (Sphinx, python3.11-doc) built with other templates, so that a
rule tuned on pydoc or on the demo shows its cost on a layout it was not made on:

* ``postgres`` — PostgreSQL 15's manual (``postgresql-doc-15``, DocBook XSL). Gold: the page's
  one content ``div``, the child of ``<body>`` that is neither ``div.navheader`` nor
  ``div.navfooter``; a page whose content is mostly a ``div.toc`` is a TOC page.
* ``handbook`` — the Debian Administrator's Handbook (``debian-handbook``, DocBook through
  Publican), English: 420 ``div.sidebar`` boxes ("BACK TO BASICS", "IN PRACTICE" …) inside the
  chapters, a quarter of their text. Gold: the child ``div`` of ``<body>`` that is not the
  ``#banner`` (the chapter or section); a page mostly ``div.toc`` is a TOC page.
* ``django`` — Django's documentation (``python-django-doc``, Sphinx with Django's own
  theme). Gold: ``div#yui-main``; a page whose main part is mostly a ``toctree-wrapper`` is a
  TOC page. ``_modules/`` (highlighted source code) is left out.
* ``debref-zh`` — the Debian Reference in Chinese (``debian-reference-zh-cn``, DocBook XSL, one
  page per chapter: 14 pages). Gold as ``postgres`` (the same generator). Chinese has no spaces:
  a shingle token (a run of word characters) is then a run of Han characters up to punctuation,
  so a lost sentence costs a few tokens where English loses tens.
* ``sqlite`` — SQLite's documentation (``sqlite3-doc``): the pages write their content straight
  into ``<body>``, no container, after the generator's ``div.nosearch`` header (the C-API
  pages add a second with the page's heading). Gold: ``<body>`` without its ``nosearch`` parts,
  the parts the site's own search indexer leaves out, and without scripts; a page mostly
  ``div.fancy_toc`` is a TOC page.

Every page of the site is fed into one ``memory://`` store (and the site's block repetition),
then analysed with that store's snapshot, as ``pydoc_quality`` does; the analysis never sees
the gold markup. TOC pages are counted apart with the role WISDOM gives them; pages with
another layout or fewer than 50 gold words are skipped. Score: token-shingle P/R/F1
(``evaluation.shingle_prf``), mean over article pages, and the number of pages below F1 0.9;
a page WISDOM does not call an article scores with empty text. trafilatura
(``extract(html, include_comments=False)``) on the same files. ``--worst N`` lists WISDOM's N
lowest pages (low recall: text lost; low precision: text gained).

::

    apt-get install postgresql-doc-15 python-django-doc debian-handbook \
        debian-reference-zh-cn sqlite3-doc
    python benchmarks/docs_articles.py                       # the five sites, ~3 min
    python benchmarks/docs_articles.py --site django --no-trafilatura
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.pydoc_quality import mean_prf
from wisdom_scrapy import open_store
from wisdom_scrapy.analysis.evaluation import PRF, shingle_prf
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.mining.repetition import stored_repetition
from wisdom_scrapy.page.model import PageModel

BASE = "http://127.0.0.1:8000/"
SITE = "127.0.0.1:8000"


class MainPart(NamedTuple):
    """A page's gold main element, the XPath of its tables of contents and the XPath (from the
    element) of the generator's chrome inside it, left out of the gold text ("": none)."""

    element: etree._Element
    toc: str
    chrome: str = ""


def _docbook_main(root: etree._Element) -> MainPart | None:
    """DocBook XSL's chunked pages: the one ``div`` child of ``<body>`` beside the generator's
    ``div.navheader`` and ``div.navfooter`` (PostgreSQL, the Debian Reference)."""
    body = root.xpath("//body")
    if not body:
        return None
    nav = ("navheader", "navfooter")
    parts = [c for c in body[0] if c.tag == "div" and c.get("class") not in nav]
    return MainPart(parts[0], ".//div[@class='toc']") if len(parts) == 1 else None


def _handbook_main(root: etree._Element) -> MainPart | None:
    body = root.xpath("//body")
    if not body:
        return None
    parts = [c for c in body[0] if c.tag == "div" and c.get("id") != "banner"]
    return MainPart(parts[0], ".//div[@class='toc']") if len(parts) == 1 else None


def _django_main(root: etree._Element) -> MainPart | None:
    mains = root.xpath("//div[@id='yui-main']")
    return MainPart(mains[0], ".//div[contains(@class, 'toctree-wrapper')]") if mains else None


def _sqlite_main(root: etree._Element) -> MainPart | None:
    """SQLite's pages put their content straight into ``<body>``, after the generator's
    ``div.nosearch`` header (logo, menus, search form; the C-API pages add a second one with the
    API group and the page's heading): the body without its ``nosearch`` parts, the parts the
    site's own search indexer leaves out, and its scripts. Pages with a table of contents have
    it in ``div.fancy_toc``."""
    body = root.xpath("//body")
    if not body or not body[0].xpath("./div[@class='nosearch']"):
        return None
    return MainPart(body[0], ".//div[@class='fancy_toc']",
                    "./div[@class='nosearch'] | .//script | .//style")  # fmt: skip


@dataclass(frozen=True)
class DocSite:
    directory: Path
    main: Callable[[etree._Element], MainPart | None]
    """The page's gold main part (None: another layout)."""

    def pages(self) -> list[Path]:
        return sorted(p for p in self.directory.rglob("*.html")
                      if "_modules" not in p.relative_to(self.directory).parts)  # fmt: skip


SITES = {
    "postgres": DocSite(Path("/usr/share/doc/postgresql-doc-15/html"), _docbook_main),
    "django": DocSite(Path("/usr/share/doc/python-django-doc/html"), _django_main),
    "handbook": DocSite(Path("/usr/share/doc/debian-handbook/html/en-US"), _handbook_main),
    "debref-zh": DocSite(Path("/usr/share/debian-reference"), _docbook_main),
    "sqlite": DocSite(Path("/usr/share/doc/sqlite3"), _sqlite_main),
}


def gold_of(site: DocSite, model: PageModel) -> tuple[str, str] | None:
    """(kind, text) of the page's main element: "toc" when its tables of contents hold more
    than half of its text, else "article"; None for another layout."""
    found = site.main(model.element(0).getroottree().getroot())
    if found is None:
        return None
    node_of = {model.element(i): i for i in range(model.n)}  # the proxies stay alive: same objects
    chrome = found.element.xpath(found.chrome) if found.chrome else []
    text = model.text_of(node_of[found.element],
                         exclude=[node_of[c] for c in chrome if c in node_of])  # fmt: skip
    toc = sum(len(t.text_content()) for t in found.element.xpath(found.toc))
    return ("toc" if toc > len(text) / 2 else "article"), text


def run_site(name: str, site: DocSite, limit: int, with_trafilatura: bool, worst: int) -> None:
    files = site.pages()
    if not files:
        sys.exit(f"no pages in {site.directory}: apt-get install the {name} documentation")
    files = files[:limit] if limit else files
    store, models = open_store("memory://"), {}
    for path in files:
        url = BASE + path.relative_to(site.directory).as_posix()
        model = models[path] = PageModel.from_html(path.read_bytes(), url)
        feed_model(store, model, site=SITE)
    snapshot = store.snapshot(SITE)
    repetition = stored_repetition(store, SITE)  # the crawl's block repetition
    extract = None
    if with_trafilatura:
        import trafilatura

        extract = trafilatura.extract
    scores: dict[str, list[PRF]] = {"wisdom": [], "trafilatura": []}
    scored: list[tuple[PRF, str]] = []  # WISDOM's score and the page's path, for the worst pages
    roles: Counter[str] = Counter()
    for path, model in models.items():
        gold = gold_of(site, model)
        if gold is None or len(gold[1].split()) < 50:
            continue
        analysis = analyze_page(None, model.url, model=model, snapshot=snapshot,
                                repetition=repetition)  # fmt: skip
        roles[f"{gold[0]} -> {analysis.role}"] += 1
        if gold[0] == "toc":
            continue
        text = analysis.article_text if analysis.role == "article" else ""
        scores["wisdom"].append(shingle_prf(text, gold[1]))
        scored.append((scores["wisdom"][-1], path.relative_to(site.directory).as_posix()))
        if extract is not None:
            html = path.read_text(encoding="utf-8", errors="replace")
            found = extract(html, include_comments=False) or ""
            scores["trafilatura"].append(shingle_prf(found, gold[1]))
    print(f"\n{name}: {len(models)} pages fed, {len(scores['wisdom'])} article pages scored "
          f"({site.directory}); roles: {dict(sorted(roles.items()))}\n")  # fmt: skip
    print("| extractor   | mean P | mean R | mean F1 | < 0.9 |")
    print("| ----------- | ------ | ------ | ------- | ----- |")
    for extractor, rows in scores.items():
        if rows:
            p, r, f = mean_prf(rows)
            low = sum(row.f1 < 0.9 for row in rows)
            print(f"| {extractor:<11} | {p:.3f}  | {r:.3f}  | {f:.3f}   | {low:>5} |")
    print_worst(scored, worst)


def print_worst(scored: list[tuple[PRF, str]], worst: int) -> None:
    """WISDOM's ``worst`` lowest-F1 pages: low recall is text lost, low precision text gained."""
    if worst:
        print(f"\nworst {worst} pages (WISDOM):")
    for prf, page in sorted(scored, key=lambda s: s[0].f1)[:worst]:
        print(f"  F1 {prf.f1:.3f}  P {prf.precision:.3f}  R {prf.recall:.3f}  {page}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", choices=[*SITES, "all"], default="all")
    parser.add_argument("--limit", type=int, default=0, help="first N pages (by path) only")
    parser.add_argument("--no-trafilatura", action="store_true")
    parser.add_argument("--worst", type=int, default=5, help="list WISDOM's N worst pages")
    args = parser.parse_args(argv)
    for name, site in SITES.items():
        if args.site in (name, "all"):
            run_site(name, site, args.limit, not args.no_trafilatura, args.worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
