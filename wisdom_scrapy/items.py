"""Items wisdom_scrapy emits. Dataclasses, read through ``itemadapter`` like any Scrapy item,
so feed exports (``FEEDS`` with ``item_classes``) can split them into separate files::

    FEEDS = {
        "articles.jsonl": {"format": "jsonlines", "item_classes": ["wisdom_scrapy.ArticleItem"]},
        "tocs.jsonl": {"format": "jsonlines", "item_classes": ["wisdom_scrapy.TocItem"]},
    }

Every page item carries ``url`` and ``role`` ("article", "toc" or "other"), and ``hub`` /
``authority``: the page's entropy-weighted HITS scores in the site's informative link graph
(LAMIS, TKDE §3.3; see :mod:`wisdom_scrapy.engine.link_graph`), relative to the site's mean (1.0 =
an average page of the site). They are the scores known when the item leaves: ``None`` before the
site's first link analysis (cold start), then the latest analysis (recomputed as the site grows,
and once more at spider idle, before the late items go out). :class:`SiteStructureItem`, emitted
at spider idle, holds the site's informative structure with the final scores.

Spider fields. A spider can put its own fields on the page it yields,
``PageItem(url=response.url, category="news")``: they are kept in the item's ``extra`` dict and
carried over to the cleaned item (ArticleItem, TocItem or the PageItem "other"), including
pages that leave later (warm-up, TOC pages waiting for their targets). Read through
``itemadapter`` — as feed exports, pipelines, ``scrapy parse`` and contracts read items — they
are top-level fields (``{"url": …, "category": "news", "text": …}``), and a pipeline can add
more with ``ItemAdapter(item)["name"] = value``. A spider field may not reuse the name of a
field the cleaned items fill (``text``, ``links`` …): that is a ``TypeError`` at the yield,
rather than a value silently replaced later.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ArticleItem", "PageItem", "SiteStructureItem", "SitemapItem", "TocItem"]  # item classes

#: The large fields of ArticleItem / TocItem that ``WISDOM_ITEM_FIELDS`` chooses from (the
#: others are always filled): the article's HTML, the blocks' paths and figures, the term vector.
HEAVY_FIELDS = frozenset({"html", "blocks", "features"})

#: The meta key of the request the add-on schedules at spider idle to emit its late items (held
#: pages, site-level items): the runtime sets it, the log formatter reads it without loading
#: the runtime.
LATE_ITEMS_META = "wisdom_late_items"

# Characters XML 1.0 forbids (C0 controls but tab and newlines, U+FFFE/U+FFFF): a page may
# hold a stray one, and in an item it would make Scrapy's XML feed unreadable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def feature_records(features: Mapping[str, float]) -> list[dict[str, Any]]:
    """A ``{term: weight}`` vector as the ``features`` field: ``[{"term": t, "weight": w}, …]``
    in term order, valid in every feed format. A mapping keyed by the terms is not: Scrapy's
    XML exporter makes each key an element name, and a term may start with a digit ("3d",
    "2nd"), which XML forbids. ``{f["term"]: f["weight"] for f in item["features"]}`` gives
    the mapping back (e.g. for scikit-learn's ``DictVectorizer``)."""
    return [{"term": xml_safe(t), "weight": w} for t, w in sorted(features.items())]


def xml_safe(value: Any) -> Any:
    """``value`` (strings, lists and dicts of them) without the characters XML forbids."""
    if isinstance(value, str):
        return _NOT_XML.sub("", value) if _NOT_XML.search(value) else value
    if isinstance(value, list):
        return [xml_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: xml_safe(v) for k, v in value.items()}
    return value


def xml_safe_strings(values: list[str]) -> list[str]:
    """:func:`xml_safe` of each of ``values``: one search of them all joined (a forbidden
    character is one code point, so the join holds one exactly where a string does), each
    string cleaned only then, where a search a string cost a TOC's hundreds of links more.
    Returns ``values`` itself when none needs cleaning (callers give a fresh list)."""
    if not _NOT_XML.search("".join(values)):
        return values
    return [xml_safe(value) for value in values]


@dataclass(init=False)
class PageItem:
    """One fetched HTML page: what a spider yields to have the page analysed.

    ``url`` is the response URL; ``title`` the page's ``<title>``. The analysis replaces it with
    an :class:`ArticleItem`, a :class:`TocItem`, or this item with ``role`` "other" (a page with
    neither an article nor a table of contents: login, tag archives…). ``role`` is "" until then.
    Any other keyword is a spider field (module docstring), kept in ``extra``.
    """

    url: str
    title: str = ""
    role: str = ""
    hub: float | None = None
    authority: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        url: str,
        title: str = "",
        role: str = "",
        hub: float | None = None,
        authority: float | None = None,
        extra: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        self.url, self.title, self.role = url, title, role
        self.hub, self.authority = hub, authority
        self.extra = {**(extra or {}), **fields}
        taken = sorted(set(self.extra) & _CLEANED_FIELDS)
        if taken:
            raise TypeError(
                f"PageItem: {', '.join(taken)} named like a field of the cleaned items (the "
                "analysis fills it); give the spider field another name"
            )


@dataclass
class ArticleItem:
    """An article page reduced to its informative content (WISDOM's article block + metadata).

    ``title`` is the page's headline (the heading the page names in its ``<title>``, else the
    ``<title>`` without the affixes the site's titles repeat); ``author``, ``published`` (ISO
    8601) and ``language`` (a BCP 47 tag) as the page states them, "" where it does not
    (:mod:`wisdom_scrapy.mining.fields` says where each is read).
    ``text`` is the cleaned body, paragraphs separated by blank lines; ``html`` the body's HTML
    with the removed blocks taken out; ``metadata`` the short informative blocks merged into the
    article (date, author, place…); ``blocks`` each informative block's path and figures;
    ``entropy`` page-level figures (mean term entropy of the page and of the body, pages the
    site's store knew when the page was analysed); ``single_page`` is True when the store knew too
    few pages of the site for entropy and the body was found from structure alone.
    ``features``: the cleaned page as a sparse feature vector, a list of ``{"term", "weight"}``
    records in term order (stemmed terms as in the store; :func:`feature_records`): term
    counts of the kept text, or the compressed structure tree's weights (eq. 5-10) with
    ``WISDOM_CLEANER = "cst"``. ``{f["term"]: f["weight"] for f in item["features"]}`` is the
    ``{term: weight}`` mapping scikit-learn's ``DictVectorizer`` takes for clustering or
    classification. See :mod:`wisdom_scrapy.analysis.cleaners` for what each cleaner keeps.
    """

    url: str
    title: str
    text: str
    author: str = ""
    published: str = ""
    language: str = ""
    role: str = "article"
    html: str = ""
    metadata: list[str] = field(default_factory=list)
    blocks: list[dict[str, Any]] = field(default_factory=list)
    entropy: dict[str, float] = field(default_factory=dict)
    single_page: bool = False
    hub: float | None = None
    authority: float | None = None
    features: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TocItem:
    """A table-of-contents page reduced to its informative link lists.

    ``links`` are the links the page lists (a list's entry titles, not their bylines or tags,
    no pagination: :func:`wisdom_scrapy.analysis.page_analysis.toc_links_of`), each ``{"url",
    "text", "weight", "block"}`` (absolute URL, anchor text, link weight 1 − E(anchor text), the
    index in ``blocks`` of the TOC block it lies in, None outside them); ``page_turns`` the
    URLs of the list's other pages the page links to (its pager, ``rel="next|prev"``), which
    ``WISDOM_FOLLOW_TOC_LINKS`` follows too; ``blocks`` each block's path and figures.
    """

    url: str
    title: str
    links: list[dict[str, Any]] = field(default_factory=list)
    page_turns: list[str] = field(default_factory=list)
    role: str = "toc"
    blocks: list[dict[str, Any]] = field(default_factory=list)
    entropy: dict[str, float] = field(default_factory=dict)
    single_page: bool = False
    hub: float | None = None
    authority: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class SiteStructureItem:
    """A site's informative structure (TKDE §1, §3.1): its TOC pages and the article pages their
    informative (non-template) links point to, from the site-level link analysis at spider idle.

    ``tocs``: ``{"url", "hub", "authority", "articles": [url, ...]}`` per TOC page, best hub
    first; ``articles``: ``{"url", "authority"}`` per article page, best authority first;
    ``roles``: pages per role ("toc", "article", "other") as the link analysis sees them (a
    strong hub is a TOC page, a strong authority an article); ``item_roles``: pages per role of
    the page items emitted for the site (each page's own analysis: its body and its lists),
    the roles the feed holds. The two differ where a page's links and its content disagree: an
    article whose "related" links make it a hub, a list page few informative links reach, a
    page the link graph has no record of; ``pages`` and ``links``: the size of the analysed
    graph (fetched pages, informative links); ``method``: the link analysis ("entropy-hits");
    ``iterations`` / ``converged``: how its power iteration ended.
    """

    site: str
    pages: int
    links: int
    tocs: list[dict[str, Any]] = field(default_factory=list)
    articles: list[dict[str, Any]] = field(default_factory=list)
    roles: dict[str, int] = field(default_factory=dict)
    item_roles: dict[str, int] = field(default_factory=dict)
    method: str = "entropy-hits"
    iterations: int = 0
    converged: bool = True


@dataclass
class SitemapItem:
    """A site's generated sitemap (SMG §4.6), emitted at spider idle.

    ``site``: the site key; ``url``: the home page (level 0, the tree's root); ``title``: its
    title; ``tree``: the levels below it, each entry ``{"title", "url", "children": [...]}``
    (``title`` = the anchor text of the sitemap link, ``children`` the next level's entries
    found from that page; ``[]`` at the last level); ``levels``: how many levels were asked
    for (``WISDOM_SITEMAP_LEVELS``); ``entries``: number of entries per level (``[level 1,
    level 2, ...]``); ``pages``: pages analysed; ``blocks``: structure blocks analysed;
    ``uri``: where the XML/JSON files went (``""`` when ``WISDOM_SITEMAP_URI`` is unset).
    """

    site: str
    url: str
    title: str = ""
    tree: list[dict[str, Any]] = field(default_factory=list)
    levels: int = 2
    entries: list[int] = field(default_factory=list)
    pages: int = 0
    blocks: int = 0
    uri: str = ""


#: Items whose ``extra`` dict holds spider fields, shown as top-level fields by
#: :class:`wisdom_scrapy.adapter.PageItemAdapter`.
PAGE_ITEMS = (PageItem, ArticleItem, TocItem)
# Names a spider field may not take: every field some cleaned page item fills.
_CLEANED_FIELDS = frozenset(f.name for cls in PAGE_ITEMS for f in dataclasses.fields(cls))
