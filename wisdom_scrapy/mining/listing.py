"""List pages: a page whose content is a list of titled items leading to other pages of its site.

Home pages, ``page/N`` pagination, category, tag and archive pages of blogs and news portals
show the site's articles as *items* — a title linking to the article, then a teaser, the whole
article, or only a date. WISDOM's page role compares anchor text with context, and a list of
teasers or of whole articles holds far more context than anchor text, so it reads as an article.
What makes it a list is its shape: sibling items that each *begin* with a link to another page of
the same site, and that together hold most of the page's own text.

The rule (:func:`item_share`), every part measured on the page and its site:

* an **item** is a node whose first text (in document order) lies inside an anchor linking to
  another page of the page's host (not the page itself, not an in-page ``#`` anchor) that is
  its title — at least half of the first block's own text (a heading, a list line without its
  sub-list) — and whose
  parent has at least two such children that are different entries (items come in lists; a
  teaser's title and its "comments" line lead to one post, :func:`_sibling_entries`) — or a
  list item (``li``), or a
  *lone entry*: a node titled by a heading, whose every heading links to another page,
  holding no menu or share bar of the site's template (an archive that lists one post under
  the post's linked title, :func:`_lone_entries`; a post has a title of its own that links
  nowhere else, a wrapper of the page holds its menus). It needs nothing but the page and the
  template known when the page is analysed: a held page of a cold site, analysed as soon as
  the template shows, is judged as a page of a warm one. A tag page listing one post is still
  a list. Nested items count once;
* the site's **template** (nodes whose text its other pages repeat:
  :func:`~wisdom_scrapy.mining.repetition.repeated_text`, e.g. an archive sidebar listing every
  post) and the page's navigation (``nav``, ``aside``, ``menu``) are neither items nor part of
  the page's own text;
* the **share** is the text of the items over the page's own (non-template) text; an item's
  text is the page's own even where the site repeats it (a post's title is on every archive
  that lists it: among a site's first pages, on more than √N of them). A page is a
  list when the share is at least one half: its items are most of what it says. An article's
  "part 2" links, a related box or a prev/next pair are a small part of its text.

A list of links to *other sites* (a link digest, a bibliography) is content, not a list page of
this site, and does not count.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import compress
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

import numpy as np

from wisdom_scrapy.mining.repetition import template_boxes
from wisdom_scrapy.page.model import BLOCK_TAGS, nearest_marked

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = ["LIST_SHARE", "Entries", "item_share", "list_entries", "titled_items"]

#: a page whose titled items hold at least this share of its own text is a list page
LIST_SHARE = 0.5
#: headings: a lone item titled by one is a list entry (:func:`titled_items`)
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: the page's own navigation: neither items nor own text
NAVIGATION_TAGS = frozenset({"nav", "aside", "menu"})


def _same_page(url: str) -> str:
    """A URL as the page it names: no query, fragment, trailing slash or directory index
    (``/x/``, ``/x`` and ``/x/index.html`` are one page of a static site)."""
    path = urlsplit(url).path
    for index in ("index.html", "index.htm", "index.php"):
        path = path.removesuffix(index)
    return path.rstrip("/")


#: URLs whose page keys are cached: a site's pages link the same URLs on every page
_URL_CACHE_SIZE = 1 << 14


@lru_cache(maxsize=_URL_CACHE_SIZE)
def _host_page(url: str) -> tuple[str, str]:
    """(host, :func:`_same_page`) of ``url``. Cached: every analysis of a page asks it of
    each of the page's links two or three times (336,000 times for ~1,000 URLs in a crawl of
    the Python docs)."""
    return urlsplit(url).netloc, _same_page(url)


class LinkMasks(NamedTuple):
    """Per node, what its ``<a>`` links to (:func:`_link_masks`): ``site``, another page of
    the page's host; ``elsewhere``, another page of any host; ``page``, a number per page
    linked (:func:`_host_page`: ``/x/`` and ``/x/#comments`` are one), -1 for no link."""

    site: NDArray[np.bool_]
    elsewhere: NDArray[np.bool_]
    page: NDArray[np.int64]


def _link_masks(model: PageModel) -> LinkMasks:
    """:class:`LinkMasks` of the page, from one pass over its links (the list analysis asks
    both of every link)."""
    me = _host_page(model.url)
    site = np.zeros(model.n, dtype=bool)
    elsewhere = np.zeros(model.n, dtype=bool)
    page = np.full(model.n, -1, dtype=np.int64)
    pages: dict[tuple[str, str], int] = {}
    for link in model.links():
        there = _host_page(link.url)
        page[link.node] = pages.setdefault(there, len(pages))
        if there != me:
            elsewhere[link.node] = True
            if there[0] == me[0]:
                site[link.node] = True
    return LinkMasks(site, elsewhere, page)


def _heading_text(
    model: PageModel, template: NDArray[np.bool_], in_heads: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """The nodes of ``template`` whose whole text lies in headings (``h1``–``h6``;
    ``in_heads``: the nodes inside one)."""
    count = np.concatenate([[0], np.cumsum(np.where(in_heads, model.own_len, 0))])
    heading_len = count[model.subtree_end] - count[np.arange(model.n)]
    return template & (model.tlen > 0) & (heading_len == model.tlen)


def _holds_another(model: PageModel, items: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Per node: its subtree holds an item other than itself. A node around list entries is
    the list (or a wrapper of it), never a lone entry: without this, a page wrapper whose
    first text is the first teaser's heading (``main``) passes as one entry and carries
    whatever else it holds (a sidebar listing the site's posts) into the page's list."""
    held = np.zeros(model.n + 1, dtype=np.int64)
    np.cumsum(items, out=held[1:])
    return held[model.subtree_end] - held[: model.n] > items


def _lone_entries(
    model: PageModel, boxes: NDArray[np.bool_], titles: NDArray[np.bool_],
    elsewhere: NDArray[np.bool_],
) -> NDArray[np.bool_]:
    """Per node: it may be a titled item with no sibling item (an archive listing one post,
    whose title links to the post) when its title is a heading's: its sub-tree holds a heading
    (``h1``–``h6``), each of its headings holds a link to another page (of this site or not),
    and it holds none of the
    site's template boxes (:func:`~wisdom_scrapy.mining.repetition.template_boxes`) with two
    links or more (menus, a share bar; an entry's own "comments" or author link is one) but
    its title. A post keeps a heading of its own that links nowhere else
    (its title), even when a kicker or a breadcrumb above it is a link; a wrapper of the page
    (whose first text may be the site's name, linked in a heading) holds its menus.

    ``boxes``: the template boxes; ``titles``: the template's heading text
    (:func:`_heading_text`); ``elsewhere``: the anchors linking to another page
    (:class:`LinkMasks`)."""
    n = model.n
    heads = model.tag_mask(HEADING_TAGS)
    boxes = boxes & ~titles
    boxes &= model.n_anchors >= 2  # a menu, a share bar; not an entry's "comments" link
    box_count = np.concatenate([[0], np.cumsum(boxes)])
    below = np.concatenate([[0], np.cumsum(elsewhere)])  # [j] - [i]: linking among i..j-1
    start, end = np.arange(n), model.subtree_end
    bare = np.zeros(n + 1, dtype=np.int64)
    bare[1:] = heads & (below[end] == below[start])
    bare = np.cumsum(bare)
    count = np.concatenate([[0], np.cumsum(heads)])
    return ((count[end] > count[start]) & (bare[end] == bare[start])
            & (box_count[end] == box_count[start]))  # fmt: skip


def _sibling_entries(
    model: PageModel, lead: NDArray[np.bool_], page: NDArray[np.int64],
    title_of: NDArray[np.int64],
) -> NDArray[np.int64]:
    """Per node: how many entries its ``lead`` children are, one per part of a page their
    titles (``title_of``) link (``page``: :class:`LinkMasks`; a part: the ``#fragment`` of
    the title's ``href``; the rows of an API index lead to the parts of one page, each an
    entry), where a link into a page that a sibling links whole is that sibling's entry: a
    teaser's linked title and the "comments" line below it (``/post/#comments``) or its
    "read more" are one entry's parts, not two entries. As two, the teaser around them held
    other entries (:func:`_holds_another`) and was no lone entry: a home page showing one
    teaser read as an article until the site repeated the comments line as template."""
    n = model.n
    nodes = np.flatnonzero(lead & (model.parent >= 0))
    title = title_of[nodes]
    parts: dict[tuple[int, str], int] = {}
    part = np.fromiter(  # -1: the page whole (no fragment)
        (parts.setdefault((k, f), len(parts)) if (f := (href or "").partition("#")[2]) else -1
         for k, href in zip(page[title].tolist(), model.attribute_at("href", title),
                            strict=True)), np.int64, len(nodes))  # fmt: skip
    under = model.parent[nodes].astype(np.int64) * (n + 1)  # numbers below the link count ≤ n
    entry = 2 * (under + page[title])  # the page whole
    whole = part < 0
    apart = ~whole & ~np.isin(entry, entry[whole])  # a part of a page no sibling links whole
    entry[apart] = 2 * (under[apart] + part[apart]) + 1
    return np.bincount(np.unique(entry) // 2 // (n + 1), minlength=n)


def not_own_text(model: PageModel, template: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Node mask of what is not the page's own text: the site's template and the page's
    navigation (``nav``, ``aside``, ``menu``: a sidebar listing every post is no list page)."""
    return model.subtree_mask(template | model.tag_mask(NAVIGATION_TAGS))


class Entries(NamedTuple):
    """A page's list entries (:func:`list_entries`): ``items``, the node mask of its outermost
    titled items (:func:`titled_items`); ``listed``, the node mask of the anchors inside them
    that the list lists (:func:`list_entries`)."""

    items: NDArray[np.bool_]
    listed: NDArray[np.bool_]


def titled_items(model: PageModel, template: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Node mask of the outermost titled items of the page outside its template and its
    navigation (module docstring)."""
    return list_entries(model, template).items


def list_entries(
    model: PageModel, template: NDArray[np.bool_], boxes: NDArray[np.bool_] | None = None
) -> Entries:
    """The page's titled items and the links it lists (:class:`Entries`; module docstring).

    A list page's links are the titles of its entries: the links to what it lists. An
    entry's other links (its author's byline, its date, its tags: "Mar 3 · Jane Doe", "Tags:
    x, y") stand on a line of their own that a link does not lead, and lead to other lists, so
    they are not listed. A line of an entry *led* by a link of the site (its first text lies
    in the link) is listed, with every link on it: a nested sub-entry of a table of contents
    (which the site may repeat on its other tables of contents, so it is no item), an index
    line ("tab, [1]"). What a table of contents holds beside its entries (an introduction's
    links, a pagination bar) is the TOC structure's to say
    (:func:`wisdom_scrapy.analysis.page_analysis.toc_links_of`).

    ``boxes``: the page's :func:`~wisdom_scrapy.mining.repetition.template_boxes` of
    ``template``, if the caller has them."""
    n = model.n
    items = np.zeros(n, dtype=bool)
    links = _link_masks(model)
    anchors = links.site
    if not anchors.any():
        return Entries(items, items.copy())
    first = model.first_text_owner()  # a heading's link before the date that trails it
    idx = np.flatnonzero(first < n)
    fn = first[idx]
    a = nearest_marked(anchors, model.parent)[fn]  # nearest site-anchor ancestor-or-self
    # the first text is inside a site anchor that lies within the node, and that anchor is
    # the title: at least half of the first block's own text (a heading, a list line), not a
    # word of a sentence or of a signature that happens to be linked
    block_of = nearest_marked(model.tag_mask(BLOCK_TAGS), model.parent)
    block_text = np.bincount(block_of, weights=model.own_len, minlength=n)  # nested blocks apart
    titled = 2 * model.tlen[a] >= block_text[block_of[fn]]
    titled_lead = np.zeros(n, dtype=bool)
    titled_lead[idx] = anchors[a] & (a >= idx) & titled
    title_of = np.full(n, n, dtype=np.int64)  # n: no title (a dummy slot below)
    title_of[idx] = a
    lead = titled_lead & ~not_own_text(model, template)
    siblings = _sibling_entries(model, lead, links.page, title_of)
    items = lead & ((siblings[np.maximum(model.parent, 0)] >= 2) | model.tag_mask(("li",)))
    # a lone entry's title may be repeated text: a post's title is on its page and on every
    # archive that lists it, on more than √N pages of a site's first few
    in_heads = model.subtree_mask(model.tag_mask(HEADING_TAGS))
    titles = _heading_text(model, template, in_heads)
    headed = np.zeros(n, dtype=bool)  # the title is a heading's
    headed[idx] = in_heads[fn]
    lone = titled_lead & headed
    if lone.any():  # else no lone entry, whatever _lone_entries says
        lone &= ~not_own_text(model, template & ~titles)
        boxes = template_boxes(model, template) if boxes is None else boxes
        lone &= _lone_entries(model, boxes, titles, links.elsewhere)
        items |= lone & ~_holds_another(model, items)
    items[0] = False
    inner = model.subtree_mask(items) & ~items  # strictly inside another item
    listed = np.zeros(n + 1, dtype=bool)
    listed[title_of[items]] = True
    lead_of = title_of[block_of]  # per node: the link its line begins in (n: none)
    led = lead_of < n
    led &= anchors[np.minimum(lead_of, n - 1)]
    # a link line's size: its links hold at least half its text (an index line "tab, [1]", a
    # sub-entry), not a sentence or a signature that begins with a link
    linked = np.bincount(block_of[anchors], weights=model.tlen[anchors], minlength=n)
    led &= 2 * linked[block_of] >= block_text[block_of]
    led &= model.subtree_mask(items)
    led &= ~_repeated_across(model, items & ~inner, listed[:n], led & anchors)
    return Entries(items & ~inner, listed[:n] | led)


def _repeated_across(
    model: PageModel, entries: NDArray[np.bool_], titles: NDArray[np.bool_],
    candidates: NDArray[np.bool_],
) -> NDArray[np.bool_]:
    """Which ``candidates`` anchors link a URL pattern (:func:`_url_pattern`; a URL that
    recurs has one too) that two or more ``entries`` link and no entry's title (``titles``)
    does: every teaser's byline names ``/author/…``, its tag line ``/tag/…``, while the titles
    name the posts' folder. An index line's links ("tab, [1]") lead into the folder of the
    index's titles, however often they recur, and stay."""
    out = np.zeros(model.n, dtype=bool)
    if not candidates.any():
        return out
    entry_of = nearest_marked(entries, model.parent)
    nodes = model.link_nodes
    entry = entry_of[nodes]
    inside = np.flatnonzero(entries[entry])  # the links inside an entry, in order
    links = model.links()
    patterns = [_url_pattern(links[k].url) for k in inside.tolist()]
    seen: dict[str, set[int]] = {}
    for pattern, owner in zip(patterns, entry[inside].tolist(), strict=True):
        seen.setdefault(pattern, set()).add(owner)
    title_patterns = set(compress(patterns, titles[nodes[inside]].tolist()))
    pattern_of = dict(zip(nodes[inside].tolist(), patterns, strict=True))
    for node in np.flatnonzero(candidates).tolist():
        found = pattern_of.get(node)
        out[node] = found is not None and len(seen[found]) >= 2 and found not in title_patterns
    return out


@lru_cache(maxsize=_URL_CACHE_SIZE)
def _url_pattern(url: str) -> str:
    """A URL's folder and query names (``/tag/roses`` → ``/tag/*``; ``/?tag=x`` → ``/*?tag``):
    what the links of one kind (a site's tag or author pages) share (cached as
    :func:`_host_page`)."""
    parts = urlsplit(url)
    folder = _host_page(url)[1].rpartition("/")[0]
    names = sorted({kv.partition("=")[0] for kv in parts.query.split("&") if kv})
    return f"{folder}/*?{'&'.join(names)}"


def item_share(
    model: PageModel, template: NDArray[np.bool_], items: NDArray[np.bool_] | None = None
) -> float:
    """Share of the page's own text (:func:`not_own_text` left out) held by its titled
    ``items`` (default: :func:`titled_items`; module docstring); 0.0 for a page without text."""
    if model.n == 0:
        return 0.0
    own = model.own_len
    if items is None:
        items = titled_items(model, template)
    in_items = model.subtree_mask(items)
    outside = not_own_text(model, template) & ~in_items  # an item's title may be repeated
    total = float(own[~outside].sum())
    if total <= 0:
        return 0.0
    return float(own[in_items & ~outside].sum()) / total
