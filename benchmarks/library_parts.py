"""Issue 34: the page model's three home-made parts against the library made for each job.

1. CSS: :func:`wisdom_scrapy.page.css._display_rules` (the ``display`` rules of a
   ``<style>`` sheet) against the same rules read with ``tinycss2``.
2. innerText: :meth:`PageModel.text_of` against ``html_text.extract_text``.
3. Paragraph repair: :func:`close_paragraphs` (HTML's "a block start tag closes the open
   ``<p>``" on libxml2's tree) against a tree built by an HTML5 parser (``html5lib``, lxml tree
   builder; ``html5-parser`` does not load next to lxml's wheels: different libxml2 builds).

Correctness is counted on the vendored fixture pages (tests/fixtures) and the benchmark pages
(../shared/data): pages whose output differs from the home-made part's. Speed is the least CPU
time of this thread over ``--repeat`` runs, per page, on ``--pages`` pages of the Python
documentation (/usr/share/doc/python3.11/html), as benchmarks/dom_speed.py measures: the
add-on's budget is ≤ 15 ms per page for everything (issue 33). Needs
``pip install tinycss2 html-text html5lib`` (benchmark-only: none is a dependency).

    python benchmarks/library_parts.py [--pages 200] [--repeat 3] [--limit 0] [--seed 0]
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._common import SHARED_DATA, environment, markdown_table, write_json  # noqa: E402
from benchmarks.dom_speed import cpu_time  # noqa: E402
from wisdom_scrapy.page.css import _display_rules  # noqa: E402
from wisdom_scrapy.page.model import PageModel  # noqa: E402
from wisdom_scrapy.page.parse import close_paragraphs, parse_html  # noqa: E402

URL = "http://127.0.0.1/page.html"


def cpu_ms(fn: Callable[[], object], repeat: int) -> float:
    """Least CPU time of this thread over ``repeat`` runs of ``fn``, in ms."""
    return cpu_time(fn, repeat) * 1000


def css_ms(sheets: list[str], repeat: int) -> tuple[float, float]:
    """CPU ms to read a page's sheets: home-made, tinycss2."""
    return (
        cpu_ms(lambda: [home_rules(s) for s in sheets], repeat),
        cpu_ms(lambda: [tinycss2_display_rules(s) for s in sheets], repeat),
    )


def corpus_pages(limit: int, seed: int) -> list[Path]:
    """The fixture pages and the benchmark pages (``limit`` > 0: a sample of that many)."""
    found = sorted((ROOT / "tests" / "fixtures").rglob("*.html"))
    found += sorted(SHARED_DATA.rglob("*.html")) if SHARED_DATA.is_dir() else []
    if limit and len(found) > limit:
        found = sorted(random.Random(seed).sample(found, limit))
    return found


def speed_pages(count: int, seed: int) -> list[Path]:
    docs = sorted(Path("/usr/share/doc/python3.11/html").rglob("*.html"))
    return sorted(random.Random(seed).sample(docs, min(count, len(docs))))


# ------------------------------------------------------------------ 1. CSS display rules


def tinycss2_display_rules(sheet: str) -> tuple[tuple[str, str, int], ...]:
    """``_display_rules`` written with tinycss2: top-level qualified rules, last ``display``
    declaration of each, one entry per selector of the rule's prelude."""
    import tinycss2

    out: list[tuple[str, str, int]] = []
    for rule in tinycss2.parse_stylesheet(sheet, skip_comments=True, skip_whitespace=True):
        if rule.type != "qualified-rule":
            continue
        found = None
        for decl in tinycss2.parse_blocks_contents(rule.content, skip_comments=True,
                                                    skip_whitespace=True):  # fmt: skip
            if decl.type == "declaration" and decl.lower_name == "display":
                idents = [t for t in decl.value if t.type == "ident"]
                if idents:
                    found = (idents[0].lower_value, int(decl.important))
        if found is not None:
            prelude = tinycss2.serialize(rule.prelude).strip()
            out += [(t.strip(), found[0], found[1]) for t in prelude.split(",")]
    return tuple(out)


def sheets_of(root: etree._Element) -> list[str]:
    """The page's ``<style>`` sheets that mention ``display`` (the only ones either reads)."""
    return [s.text for s in root.iter("style") if s.text and "display" in s.text]


def home_rules(sheet: str) -> tuple[tuple[str, str, int], ...]:
    return _display_rules.__wrapped__(sheet)  # uncached: each page pays its own parse


# ------------------------------------------------------------------ 2. innerText


def library_text(root: etree._Element) -> str:
    """html-text with its defaults (punctuation and layout guessed: closest to a browser)."""
    import html_text

    return html_text.extract_text(root)


def without_title(text: str, title: str) -> str:
    """html-text reads ``<head><title>``, which the page model hides: not a difference."""
    return text.strip()[len(title) :] if title and text.strip().startswith(title) else text


def paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


# ------------------------------------------------------------------ 3. paragraph repair


def html5_tree(html: str) -> etree._Element:
    import html5lib

    return html5lib.parse(html, treebuilder="lxml", namespaceHTMLElements=False).getroot()


def paragraph_texts(root: etree._Element) -> list[str]:
    """The text of every ``<p>`` with text, in document order: what a reshaped paragraph
    changes. (An HTML5 parser also makes empty ones, for an orphan ``</p>``: no text.)"""
    texts = (" ".join(" ".join(p.itertext()).split()) for p in root.iter("p"))
    return [text for text in texts if text]


def home_repair_ms(root: etree._Element, repeat: int) -> float:
    """What the repair costs a page: the check on every page, copy + reshape + a second
    model where the check finds a block inside a paragraph."""
    model = PageModel._from_element(root, URL, False)

    def repair() -> None:
        if model._block_in_paragraph():
            shaped = copy.deepcopy(root)
            if close_paragraphs(shaped):
                PageModel._from_element(shaped, URL, False)

    return cpu_ms(repair, repeat)


# ------------------------------------------------------------------ runs


def correctness(pages: list[Path]) -> dict[str, float]:
    counts: dict[str, float] = dict.fromkeys(
        ("pages", "css_pages", "css_differ", "text_words_differ", "text_paras_differ", "p_pages",
         "p_html5_equal", "p_plain_equal", "css_home_ms", "css_tinycss2_ms"), 0)  # fmt: skip
    examples: dict[str, list[str]] = {"css": [], "words": [], "paras": []}
    for path in pages:
        html = path.read_text("utf-8", "replace")
        root = parse_html(html, URL)
        if root is None:
            continue
        counts["pages"] += 1
        sheets = sheets_of(root)
        if sheets:
            counts["css_pages"] += 1
            # the pydoc pages link their sheets: the CSS speed is measured here, per page
            home, library = css_ms(sheets, 3)
            counts["css_home_ms"] += home
            counts["css_tinycss2_ms"] += library
            if any(home_rules(s) != tinycss2_display_rules(s) for s in sheets):
                counts["css_differ"] += 1
                examples["css"].append(str(path))
        model = PageModel.from_tree(root, URL)
        mine, theirs = model.text_of(0), without_title(library_text(root), model.title)
        if mine.split() != theirs.split():
            counts["text_words_differ"] += 1
            examples["words"].append(str(path))
        if paragraphs(mine) != paragraphs(theirs):
            counts["text_paras_differ"] += 1
            examples["paras"].append(str(path))
        plain = PageModel._from_element(root, URL, False)
        if plain._block_in_paragraph():
            counts["p_pages"] += 1
            shaped = copy.deepcopy(root)
            close_paragraphs(shaped)
            theirs_p = paragraph_texts(html5_tree(html))
            counts["p_html5_equal"] += paragraph_texts(shaped) == theirs_p
            counts["p_plain_equal"] += paragraph_texts(root) == theirs_p
    for key in ("css_home_ms", "css_tinycss2_ms"):  # mean per page with a sheet
        counts[key] = round(counts[key] / max(counts["css_pages"], 1), 3)
    for key, paths in examples.items():
        print(f"  first {key} differences: {paths[:3]}", file=sys.stderr)
    return counts


def page_times(html: str, repeat: int) -> dict[str, float] | None:
    """CPU ms of each part on one page, home-made and library (None: no content)."""
    root = parse_html(html, URL)
    if root is None:
        return None
    model = PageModel.from_tree(root, URL)
    css_home, css_library = css_ms(sheets_of(root), repeat)
    return {
        "parse": cpu_ms(lambda: parse_html(html, URL), repeat),
        "css_home": css_home,
        "css_tinycss2": css_library,
        "text_home": cpu_ms(lambda: model.text_of(0), repeat),
        "text_html_text": cpu_ms(lambda: library_text(root), repeat),
        "p_home": home_repair_ms(root, repeat),
        "p_html5lib": cpu_ms(lambda: html5_tree(html), 1),  # ~100× the rest: once is enough
    }


def speed(pages: list[Path], repeat: int) -> dict[str, float]:
    rows: dict[str, list[float]] = {}
    for path in pages:
        times = page_times(path.read_text("utf-8", "replace"), repeat)
        for key, value in (times or {}).items():
            rows.setdefault(key, []).append(value)
    return {k: statistics.fmean(v) for k, v in rows.items()} | {
        f"{k}_p95": float(np.percentile(v, 95)) for k, v in rows.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=200, help="pages of the speed run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="sample of the correctness pages")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write all figures here")
    args = ap.parse_args()
    counts = correctness(corpus_pages(args.limit, args.seed))
    times = speed(speed_pages(args.pages, args.seed), args.repeat)
    n = int(counts["pages"])

    def ms(key: str) -> str:
        return f"{times[key]:.3f} ({times[key + '_p95']:.3f})"

    rows = [
        ("1. CSS display rules", "tinycss2", f"{counts['css_differ']:.0f} of "
         f"{counts['css_pages']:.0f} pages with a sheet", f"{counts['css_home_ms']:.3f}",
         f"{counts['css_tinycss2_ms']:.3f}"),
        ("2. innerText", "html-text", f"{counts['text_words_differ']:.0f} of {n} (words), "
         f"{counts['text_paras_differ']:.0f} (paragraphs)", ms("text_home"),
         ms("text_html_text")),
        ("3. paragraph repair", "html5lib", f"{counts['p_pages'] - counts['p_html5_equal']:.0f}"
         f" of {counts['p_pages']:.0f} pages with a block in a <p> (unrepaired: "
         f"{counts['p_pages'] - counts['p_plain_equal']:.0f})", ms("p_home"), ms("p_html5lib")),
    ]  # fmt: skip
    print(markdown_table(("part", "library", "outputs that differ", "home-made ms/page",
                          "library ms/page"), rows))  # fmt: skip
    print(
        f"\n{n} correctness pages; speed: mean (p95) CPU ms per page over {args.pages} pydoc"
        f" pages (CSS: per correctness page with a sheet, the pydoc pages link theirs);"
        f" libxml2's parse of a pydoc page: {ms('parse')}"
    )
    if args.json:
        write_json(args.json, {"counts": counts, "times": times, "environment": environment()})


if __name__ == "__main__":
    main()
