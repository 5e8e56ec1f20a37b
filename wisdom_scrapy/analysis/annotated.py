"""The annotated page view: one page as the analysis saw it, as a self-contained HTML file
(``scrapy wisdom-show``; the whole site's is :mod:`wisdom_scrapy.report`).

Every block the analysis found is outlined in its role's colour — article, TOC, metadata — and so
is every *redundant* block: a maximal sub-tree with text that no cleaned item keeps (menus,
footers, ads, "related" boxes, condensed parts of a block). Each outlined block has a label with
its role; hovering it shows its figures (WISDOM §3.1–3.2: CII, mean API, SII of the feature the
block was mined by, and the mean term entropy of its text), also in the block's ``title``
tooltip. Text that no item keeps is struck out and dimmed.

Safety. The page is *rebuilt*, not copied: its elements are walked once (``lxml.etree.iterwalk``,
no recursion) and re-emitted from an allow-list of text and structure tags without any of the
page's attributes (so no ``href="javascript:…"``, no event handlers, no ``style``, no ``src``);
every text, URL and label is HTML-escaped. Scripts, styles, frames, embedded objects and images
are not rendered (an image becomes ``[image: alt text]``). The file loads nothing: no script, no
font, no image, no style sheet outside itself, so it works offline and shows nothing the page
could inject.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Container, Iterable
from dataclasses import dataclass, field
from functools import partial
from html import escape
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

from wisdom_scrapy.analysis.page_analysis import PageAnalysis, analyze_page
from wisdom_scrapy.mining.wisdom import DEFAULT_PARAMS, WisdomParams, node_features
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.tags import BLOCK_TAGS
from wisdom_scrapy.page.urls import host_key

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.store import EntropySnapshot, TermStore

__all__ = [
    "ROLE_COLOURS",
    "VIEW_MAX_CHARS",
    "ViewBlock",
    "block_name",
    "element_name",
    "page_view",
    "redundant_summary",
    "removed_mask",
    "render_page_view",
]

#: Outline colour of each block role (also the report's legend). Pure, saturated colours that
#: page content rarely uses, so a screenshot test can count them.
ROLE_COLOURS: dict[str, str] = {
    "article": "#00c853",
    "toc": "#2962ff",
    "metadata": "#ff9100",
    "redundant": "#d50000",
}

# Tags re-emitted as themselves; everything else that is not skipped becomes a div or a span.
_KEEP_TAGS = frozenset(
    BLOCK_TAGS - {"html", "body", "form", "fieldset", "legend", "dialog", "plaintext", "xmp"}
    | {
        "a", "abbr", "b", "bdi", "br", "cite", "code", "del", "dfn", "em", "i", "ins", "kbd",
        "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "td", "th", "time",
        "tt", "u", "var", "wbr",
    }
)  # fmt: skip
# Not rendered (nor their text): embedded content and hidden elements (dom.HIDDEN_TAGS).
_SKIP_TAGS = frozenset(
    {"object", "embed", "applet", "svg", "math", "video", "audio", "canvas", "picture", "map",
     "select", "textarea", "input", "button"}
)  # fmt: skip
_VOID_TAGS = frozenset({"br", "wbr", "hr"})
# Elements whose content model has no room for a label element (the HTML parser would move it).
_NO_LABEL_TAGS = frozenset({"table", "thead", "tbody", "tfoot", "tr"})

_FIGURE_NAMES = (("cii", "CII"), ("api", "API"), ("sii", "SII"), ("entropy", "H"))

#: Default bound on the rebuilt page's markup, in characters: the crawl's default
#: ``WISDOM_MAX_PAGE_BYTES`` (the largest page it analyses). Outlines and labels make a view of
#: many tiny blocks some 15 times its page; past the bound the view stops, and says so.
VIEW_MAX_CHARS = 10 * 1024 * 1024

_CSS = """
body{font:15px/1.45 sans-serif;margin:0;color:#111;background:#fff}
.wv-head{background:#263238;color:#fff;padding:10px 16px;font-size:14px}
.wv-head b{font-size:16px}
.wv-legend span{display:inline-block;margin-right:14px}
.wv-legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.wv-page{padding:12px 16px;overflow-wrap:anywhere;overflow-x:auto}
.wv-page pre{white-space:pre-wrap}
.wv-page a{color:#0645ad;text-decoration:underline}
.wx{color:#9e9e9e;text-decoration:line-through}
.wimg{color:#607d8b;font-style:italic}
.wb{outline-style:solid;outline-width:3px;outline-offset:-3px;display:block;padding:3px;
  margin:4px 0}
td.wb,th.wb{display:table-cell}tr.wb{display:table-row}table.wb{display:table}
tbody.wb,thead.wb,tfoot.wb{display:table-row-group}li.wb{display:list-item}
.wl{display:inline-block;font:bold 11px/1.3 monospace;color:#fff;padding:1px 5px;
  margin:0 6px 2px 0;text-decoration:none}
.wl .wf{display:none;font-weight:normal}
.wb:hover>.wl .wf{display:inline}
"""


@dataclass
class ViewBlock:
    """One outlined block: ``kind`` (a key of :data:`ROLE_COLOURS`), its node and figures."""

    kind: str
    node: int
    path: str
    figures: dict[str, float] = field(default_factory=dict)


def kept_mask(analysis: PageAnalysis) -> NDArray[np.bool_]:
    """Nodes whose own text a cleaned item keeps: the article body without its excluded
    sub-trees (ArticleItem.text/html), the metadata blocks (ArticleItem.metadata) and the TOC
    structure (TocItem.links). An excluded node leaves out its whole sub-tree, as in the item's
    text (:meth:`~wisdom_scrapy.page.model.PageModel.text_of`)."""
    model = analysis.model
    assert model is not None
    kept = np.zeros(model.n, dtype=bool)
    if analysis.article_node is not None:
        body = analysis.article_node
        kept[body : model.subtree_end[body]] = True
        if analysis.article_exclude is not None:
            roots = np.flatnonzero(analysis.article_exclude)
            inside = np.bincount(roots, minlength=model.n + 1) - np.bincount(
                model.subtree_end[roots], minlength=model.n + 1
            )
            kept &= np.cumsum(inside[: model.n]) == 0
    for b in analysis.blocks:
        if b.kind == "metadata":
            kept[b.node : model.subtree_end[b.node]] = True
    if analysis.toc_cover is not None:
        kept |= analysis.toc_cover
    return kept


def removed_mask(analysis: PageAnalysis) -> NDArray[np.bool_]:
    """Nodes no cleaned item keeps and that hold no kept node (their sub-tree is all removed)."""
    model = analysis.model
    assert model is not None
    kept = kept_mask(analysis)
    # a node holds a kept node when the count of kept nodes in its range is positive
    counts = np.concatenate([[0], np.cumsum(kept)])
    nodes = np.arange(model.n)
    holds = counts[model.subtree_end] - counts[nodes] > 0
    return ~holds & ~model.hidden


def redundant_roots(analysis: PageAnalysis) -> list[int]:
    """Roots of the redundant blocks: maximal removed sub-trees that hold text (TLEN > 0).

    A maximal removed sub-tree is the whole page when nothing was kept; then (and for any root
    that is the document or its body) the block-level children are taken instead, so a page
    without informative blocks shows its template's parts rather than one box.
    """
    model = analysis.model
    assert model is not None
    if model.n == 0:
        return []
    removed = removed_mask(analysis)
    top = removed.copy()
    top[1:] &= ~removed[model.parent[1:]]
    roots: list[int] = []
    queue = [int(i) for i in np.flatnonzero(top & (model.tlen > 0))]
    tags = model.tag
    while queue:
        node = queue.pop()
        if tags[node] in ("html", "body") or model.depth[node] == 0:
            queue.extend(int(c) for c in model.children(node) if model.tlen[c] > 0)
        else:
            roots.append(node)
    return sorted(roots)


#: Characters of a redundant block's text kept as its sample (:func:`redundant_summary`).
SAMPLE_CHARS = 160


def redundant_summary(
    analysis: PageAnalysis, known: Container[str] = frozenset()
) -> list[tuple[str, int, str, str]]:
    """The page's redundant blocks (:func:`redundant_roots`) as the site report counts them,
    once per block path: ``(path, characters, sample text, block name)``, the sample and name
    those of the path's first block, and empty for a path in ``known`` (the report has them
    from an earlier page: finding a block's element and text is most of this work, and a
    site repeats its blocks on every page). Plain data: a worker process sends it back."""
    model = analysis.model
    assert model is not None
    first: dict[str, list[int]] = {}  # path -> [characters, first root]
    for root in redundant_roots(analysis):
        entry = first.setdefault(model.path(root), [0, root])
        entry[0] += int(model.tlen[root])
    return [
        (path, chars, "", "") if path in known else
        (path, chars, " ".join(model.text_of(root).split())[:SAMPLE_CHARS],
         block_name(model, root))
        for path, (chars, root) in first.items()
    ]  # fmt: skip


_NAME_PART = re.compile(r"[^\w-]+")


def _css_part(value: str | None, limit: int = 2) -> list[str]:
    """Up to ``limit`` words of an id or class value, reduced to CSS-name characters."""
    words = [_NAME_PART.sub("", w)[:30] for w in (value or "").split()]
    return [w for w in words if w][:limit]


def element_name(el: etree._Element, *, max_steps: int = 2) -> str:
    """The name a person knows a box by, from the page's own markup: the nearest element at or
    above ``el`` with an id or a class, written as in CSS (``div#sidebar``, ``nav.menu``), then
    the tags from there down to ``el`` (``div#sidebar › ul``; ``…`` for more than ``max_steps``).
    "" when no element up to the body has either."""
    below: list[str] = []  # tags from el up to the named element, el's first
    node: etree._Element | None = el
    while node is not None and isinstance(node.tag, str):
        tag = etree.QName(node).localname.lower()
        if tag in ("body", "html"):
            break
        ids, classes = _css_part(node.get("id"), 1), _css_part(node.get("class"))
        if ids or classes:
            steps = below[::-1]
            if len(steps) > max_steps:
                steps = ["…", *steps[len(steps) - max_steps + 1 :]]
            name = tag + "".join("#" + i for i in ids) + "".join("." + c for c in classes)
            return " › ".join([name, *steps])
        below.append(tag)
        node = node.getparent()
    return ""


def block_name(model: PageModel, node: int) -> str:
    """:func:`element_name` of a node of the model; its tag path when the page names no box
    around it (or its tree is gone)."""
    try:
        name = element_name(model.element(node))
    except (IndexError, ValueError, TypeError):
        name = ""
    return name or model.path(node)


def _entropy_array(model: PageModel, snapshot: EntropySnapshot | None) -> NDArray[np.float64]:
    if snapshot is None:
        return np.zeros(len(model.vocab))
    return snapshot.entropy(model.vocab)


def view_blocks(
    analysis: PageAnalysis,
    snapshot: EntropySnapshot | None = None,
) -> list[ViewBlock]:
    """The informative blocks of the analysis and the page's redundant blocks, with figures.

    Figures come from WISDOM's node features over the snapshot's entropies (none in
    single-page mode, where entropy says nothing): CII, mean API over scored anchors (only
    when some anchor of the block could be scored), SII of
    the block's mining feature (CLEN for article and metadata blocks, the TOC's feature for TOC
    blocks, CLEN for redundant ones) and the mean entropy H of the block's terms.
    """
    model = analysis.model
    assert model is not None
    blocks = [ViewBlock(b.kind, b.node, b.path) for b in analysis.blocks]
    blocks += [ViewBlock("redundant", r, model.path(r)) for r in redundant_roots(analysis)]
    if analysis.single_page or snapshot is None or model.n == 0:
        return blocks
    entropy = _entropy_array(model, snapshot)
    features = node_features(model, entropy, n_pages=snapshot.n_pages)
    mean_h = model.subtree_term_mean(entropy, empty=float("nan"))
    toc_feature = "api" if analysis.figures.get("toc_by_api") else "alen"
    for b in blocks:
        name = toc_feature if b.kind == "toc" else "clen"
        b.figures = {
            "cii": float(features.cii[b.node]),
            "sii": float(features.sii(name)[b.node]),
            "entropy": float(mean_h[b.node]),
        }
        if features.known_a[b.node] > 0:  # API only where a linked page's terms were known
            b.figures["api"] = float(features.mean_api[b.node])
    return blocks


def _figure_text(figures: dict[str, float]) -> str:
    if not figures:
        return "single-page mode: no entropy figures"
    return " ".join(f"{label} {figures[key]:.2f}" for key, label in _FIGURE_NAMES if key in figures)


def _open_tag(el: etree._Element, tag: str, block: ViewBlock | None) -> str:
    """The start tag to emit for a page element: its allowed attributes and our classes."""
    classes = []
    attrs = ""
    if block is not None:
        classes.append(f"wb wb-{block.kind}")
        # the box by the page's own id/class (its tag path when it has none)
        tip = f"{block.kind} {element_name(el) or block.path}: {_figure_text(block.figures)}"
        attrs += f' style="outline-color:{ROLE_COLOURS[block.kind]}" title="{escape(tip)}"'
    if tag == "a":
        href = el.get("href")
        if href:
            attrs += f' title="{escape(href)}"' if block is None else ""
    if tag in ("td", "th"):
        for name in ("colspan", "rowspan"):
            value = el.get(name, "")
            if value.isdigit() and 0 < int(value) < 100:
                attrs += f' {name}="{int(value)}"'
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<{tag}{cls}{attrs}>"


def _label(block: ViewBlock) -> str:
    colour = ROLE_COLOURS[block.kind]
    return (
        f'<span class="wl" style="background:{colour}">{escape(block.kind)}'
        f' <span class="wf">{escape(_figure_text(block.figures))}</span></span>'
    )


def _text(text: str | None, removed: bool) -> str:
    if not text:
        return ""
    safe = escape(text, quote=False)
    return f'<span class="wx">{safe}</span>' if removed and text.strip() else safe


def _body_html(analysis: PageAnalysis, blocks: Iterable[ViewBlock], max_chars: int) -> str:
    """The page's body rebuilt from its elements (module docstring), blocks outlined; at most
    about ``max_chars`` characters (then the open elements are closed and a note says so)."""
    model = analysis.model
    assert model is not None
    if model.n == 0 or model.root is None:
        return "<p><i>(empty page)</i></p>"
    by_node = {b.node: b for b in blocks}
    kept = kept_mask(analysis)
    hidden, tags = model.hidden, model.tag
    out: list[str] = []
    stack: list[str | None] = []  # emitted closing tag per open element (None: nothing)
    parents_removed: list[bool] = []
    node = -1
    size = 0  # characters in out[:checked]
    checked = 0
    walker = etree.iterwalk(model.root, events=("start", "end", "comment", "pi"))
    for event, el in walker:
        if len(out) - checked > 256:  # check the size now and then, not per piece
            size += sum(map(len, out[checked:]))
            checked = len(out)
            if size > max_chars:
                out.extend(reversed([tag for tag in stack if tag and tag.startswith("</")]))
                out.append(f'<p class="wimg">[view truncated after {size:,} characters: '
                           "the rest of the page is not shown]</p>")
                break
        if event in ("comment", "pi"):
            out.append(_text(el.tail, bool(parents_removed and parents_removed[-1])))
            continue
        if event == "end":
            closing = stack.pop()
            parents_removed.pop()
            if closing:
                out.append(closing)
            if stack:  # the tail belongs to the parent
                out.append(_text(el.tail, parents_removed[-1]))
            continue
        node += 1
        tag = str(tags[node])
        removed = not kept[node]
        parents_removed.append(removed)
        if hidden[node] or tag in _SKIP_TAGS:
            walker.skip_subtree()
            node = int(model.subtree_end[node]) - 1  # its descendants are nodes too
            stack.append(f'<span class="wimg">[{escape(tag)}]</span>' if tag in _SKIP_TAGS
                         and tag not in ("select", "input", "textarea", "button") else None)
            continue
        if tag == "img":
            walker.skip_subtree()
            node = int(model.subtree_end[node]) - 1
            alt = " ".join((el.get("alt") or "").split())
            out.append(f'<span class="wimg">[image{": " + escape(alt) if alt else ""}]</span>')
            stack.append(None)
            continue
        block = by_node.get(node)
        if tag in ("html", "body"):
            out_tag = "div"
        elif tag in _KEEP_TAGS:
            out_tag = tag
        else:
            out_tag = "div" if tag in BLOCK_TAGS or block is not None else "span"
        if out_tag in _VOID_TAGS:
            out.append(f"<{out_tag}>")
            stack.append(None)
            continue
        out.append(_open_tag(el, out_tag, block))
        if block is not None and out_tag not in _NO_LABEL_TAGS:
            out.append(_label(block))
        out.append(_text(el.text, removed))
        stack.append(f"</{out_tag}>")
    return "".join(out)


def render_page_view(
    analysis: PageAnalysis,
    snapshot: EntropySnapshot | None = None,
    *,
    site: str = "",
    cleaner: str = "wisdom",
    max_chars: int = VIEW_MAX_CHARS,
) -> str:
    """The annotated view of an analysed page (``analysis.model`` must be set): a complete,
    self-contained HTML document. ``cleaner``: the cleaner whose removals are struck out;
    ``max_chars``: bound on the rebuilt page (:data:`VIEW_MAX_CHARS`)."""
    blocks = view_blocks(analysis, snapshot)
    counts: dict[str, int] = {}
    for b in blocks:
        counts[b.kind] = counts.get(b.kind, 0) + 1
    legend = "".join(
        f'<span><i style="background:{c}"></i>{escape(k)} ({counts.get(k, 0)})</span>'
        for k, c in ROLE_COLOURS.items()
    )
    pages = int(snapshot.n_pages) if snapshot is not None else 0
    mode = "single-page mode (too few pages of the site known)" if analysis.single_page else (
        f"site entropies from {pages} pages"
    )
    head = (
        f'<div class="wv-head"><b>{escape(analysis.title or analysis.url)}</b><br>'
        f"{escape(analysis.url)} · site {escape(site)} · role <b>{escape(analysis.role)}</b> · "
        f"{escape(mode)} · cleaner {escape(cleaner)}<div class=\"wv-legend\">{legend}"
        "<span>struck out: text no item keeps</span></div></div>"
    )
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">"
        f"<title>wisdom view: {escape(analysis.title or analysis.url)}</title>"
        f"<style>{_CSS}</style></head><body>{head}"
        f'<div class="wv-page">{_body_html(analysis, blocks, max_chars)}</div></body></html>\n'
    )


def page_view(
    html: str | bytes,
    url: str,
    store: TermStore | None = None,
    *,
    site: str | None = None,
    params: WisdomParams | None = None,
    encoding: str | None = None,
    target_terms: Callable[[str], Collection[str] | None] | None = None,
    analyze: Callable[..., PageAnalysis] | None = None,
    cleaner: str = "wisdom",
    max_chars: int = VIEW_MAX_CHARS,
) -> str:
    """Analyse a page with its site's entropies from ``store`` and render its annotated view.

    With ``analyze`` (a crawl's page analysis with its ``WISDOM_CLEANER``, named ``cleaner``:
    :meth:`~wisdom_scrapy.engine.cleaning.Cleaners.analyzer`, its learned state read from the
    store) the struck-out text is what that cleaner removes, as in the crawl's ArticleItem; the
    outlined blocks stay WISDOM's. Without it, WISDOM's own analysis with ``params``.

    ``site`` defaults to the URL's host (the default ``WISDOM_SITE_KEY``). Without
    ``target_terms`` (the terms of a linked page, as in
    :func:`~wisdom_scrapy.analysis.page_analysis.analyze_page`) the linked pages are unknown, so TOC
    blocks are mined by anchor length (WISDOM §4.4's fallback when API cannot score a page's
    anchors) and no API is shown.
    """
    params = params or DEFAULT_PARAMS
    site = site or host_key(url)
    model = PageModel.from_html(html, url, encoding=encoding)
    snapshot = store.snapshot(site) if store is not None else None
    if analyze is None:
        analyze = partial(analyze_page, params=params)
    analysis = analyze(  # the view shows every block with its figures
        None, url, store, site=site, model=model, snapshot=snapshot, target_terms=target_terms,
        every_block=True,
    )
    return render_page_view(analysis, snapshot, site=site, cleaner=cleaner, max_chars=max_chars)
