"""An article's clean fields: headline, author, publication date, language.

WISDOM merges the short blocks around an article (title, date, author, place) into it and
reports them as ``metadata`` texts; a reader or an index wants them as fields. This module reads
them from what the page itself states, in this order of trust:

* **title**: the page's headline. A heading (``h1``–``h6``) whose text is the ``<title>`` (or
  the ``og:title``/``twitter:title``), whole or as one side of a separator (``" | "``,
  ``" - "``, ``" :: "``…), is the headline: the page names it twice. Among several, one the
  title spells sign for sign, then one that shares the deepest container with the article
  body (a site logo heading shares only the page's frame with it), then the first. With
  none, the article block's opening heading (the body's text starts with it); with none
  either, the ``<title>`` without the site name where the page states that name
  (``og:site_name``, ``application-name``). :class:`SiteTitles` then removes what the
  site's other titles show is a repeated affix (" | The Lakeside Courier"): no word list, the
  site's own titles decide.
* **author**: JSON-LD ``author`` of the page's article object, the ``author`` /
  ``article:author`` / ``dc.creator`` meta tags (not a URL), an ``itemprop="author"`` element,
  a ``rel="author"`` link near the article (sharing a container with it below ``<body>``).
* **published**: JSON-LD ``datePublished``, the ``article:published_time`` /
  ``date`` / ``dc.date(.issued)`` meta tags, an ``itemprop="datePublished"`` element, a
  ``<time datetime>`` near the article (one marked ``pubdate`` first; never one marked
  ``dateModified``). Written as ISO 8601 (:func:`iso_date`); a value that is no date is passed
  over for the next source.
* **language**: ``<html lang>``, the ``content-language`` meta tag, ``og:locale``; else the
  script of the article text where a script names one language (Han without kana: "zh", kana:
  "ja", Hangul: "ko", Greek, Hebrew, Thai…); "" where the page does not tell (Latin, Cyrillic
  and Arabic script are written in many languages).

No Scrapy import: the pipeline calls :func:`article_fields` on the page model the analysis read.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from datetime import date, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
from lxml import etree

from wisdom_scrapy.page.model import HIDDEN_TAGS
from wisdom_scrapy.page.terms import uncached_hash
from wisdom_scrapy.store.counts import KeyCounts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from wisdom_scrapy.page.model import PageModel

__all__ = ["ArticleFields", "SiteTitles", "article_fields", "iso_date", "text_language"]

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: A title separator: punctuation between spaces (" | ", " - ", " :: ", " — "), or a
#: full-width bar, which CJK titles write without spaces.
_SEPARATOR = re.compile(r"\s+[^\w\s]{1,3}\s+|\s*｜\s*")
_AUTHOR_META = ("author", "article:author", "dc.creator", "dcterms.creator", "twitter:creator")
_DATE_META = ("article:published_time", "og:published_time", "datepublished", "date",
              "dc.date.issued", "dc.date", "dcterms.issued", "dcterms.created")  # fmt: skip
_TITLE_META = ("og:title", "twitter:title")
#: The elements that may state an author or a date (``*[@itemprop]``, ``a[@rel]``, ``time``):
#: one query (a listing of every element of a large page would cost as much as its
#: analysis), which reaches the first two through their attributes: libxml2 walks an
#: attribute step faster than it tests a predicate on every element (0.6 against 1.0 ms on a
#: page of the Python docs), and the parent of an ``itemprop`` attribute is exactly an
#: element with one.
_MARKED = etree.XPath("//@itemprop/..|//a/@rel/..|//time")
_SITE_META = ("og:site_name", "application-name")
_LANG_META = ("content-language", "og:locale", "dc.language")
#: Scripts whose letters name one language (Unicode character names start with the script).
_SCRIPT_LANGUAGE = {"HIRAGANA": "ja", "KATAKANA": "ja", "HANGUL": "ko", "GREEK": "el",
                    "HEBREW": "he", "THAI": "th", "GEORGIAN": "ka", "ARMENIAN": "hy",
                    "KHMER": "km", "LAO": "lo", "TIBETAN": "bo", "ETHIOPIC": "am"}  # fmt: skip


class ArticleFields(NamedTuple):
    """What :func:`article_fields` finds: ``title`` (the headline), ``author`` (names joined
    with ", "), ``published`` (ISO 8601), ``language`` (a BCP 47 tag); "" where the page does
    not state it. ``title_from``: "heading" when a heading of the page gave the title (the
    site's affixes are then not removed from it), else "title"."""

    title: str
    author: str
    published: str
    language: str
    title_from: str = "title"


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def article_fields(
    model: PageModel, article: int | None, *, metadata: Sequence[int] = ()
) -> ArticleFields:
    """The fields of the article whose body is node ``article`` of ``model`` (None: the page
    has no body found) with its merged ``metadata`` blocks (nodes): module docstring."""
    if model.n == 0 or model.root is None:
        return ArticleFields("", "", "", "")
    page = _Page(model, article, metadata)
    title, title_from = page.title()
    return ArticleFields(title, page.author(), page.published(), page.language(), title_from)


class _Page:
    """One page's sources for the fields, read once from its lxml tree (a few queries: no
    per-node listing of the page, which would cost as much as the analysis of a large page)."""

    def __init__(self, model: PageModel, article: int | None, metadata: Sequence[int]) -> None:
        self.model, self.article = model, article
        self.doc: etree._Element = model.root.getroottree().getroot()  # type: ignore[union-attr]
        tagged = _by_kind(self.doc)
        #: the visible headings (``h1``–``h6``), in document order
        self.headings = [el for el in tagged["heading"] if not _hidden(el)]
        self.meta: dict[str, list[str]] = {}
        for el in tagged["meta"]:
            key = (el.get("property") or el.get("name") or el.get("itemprop")
                   or el.get("http-equiv") or "").strip().lower()  # fmt: skip
            content = _norm(el.get("content"))
            if key and content:
                self.meta.setdefault(key, []).append(content)
        self.ld = list(_ld_objects(tagged["script"]))
        anchors = ([article] if article is not None else []) + list(metadata)
        #: the article's and its metadata blocks' ancestors-or-self, with their depths
        self.containers: dict[etree._Element, int] = {}
        #: the anchors' elements, each found once (one XPath query a node)
        self.elements = {node: model.element(node) for node in anchors}
        for node in anchors:
            el = self.elements[node]
            for depth, up in enumerate(reversed([el, *el.iterancestors()])):
                self.containers[up] = depth

    @property
    def article_element(self) -> etree._Element | None:
        return self.elements.get(self.article) if self.article is not None else None

    @cached_property
    def marked(self) -> _Marks:
        """The elements the author and date may be read from (``itemprop``, ``a rel``,
        ``<time>``), in document order; listed only when neither JSON-LD nor a meta tag
        states them: from the model where it holds the whole document (:func:`_model_marks`),
        else by a query of the tree."""
        marks = _model_marks(self.model, self.doc)
        if marks is not None:
            return marks
        found = [el for el in _MARKED(self.doc) if not _hidden(el)]
        return _Marks([el.tag for el in found], {}, found.__getitem__)

    # --------------------------------------------------------- where an element sits
    def closeness(self, el: etree._Element) -> int:
        """Depth of the deepest container ``el`` shares with the article body (and its
        metadata blocks): the article's own elements score highest, the page frame lowest."""
        for up in (el, *el.iterancestors()):
            if up in self.containers:
                return self.containers[up]
        return 0

    def near(self, el: etree._Element) -> bool:
        """``el`` shares a container below ``<body>`` with the article (or no article)."""
        return not self.containers or self.closeness(el) >= 2

    def with_word(self, name: str, value: str) -> list[etree._Element]:
        """The marked elements whose attribute ``name`` holds the word ``value``."""
        marks = self.marked
        values = marks.values(name)
        return [marks.reach(k) for k, v in enumerate(values) if value in (v or "").lower().split()]

    def first_meta(self, keys: Sequence[str]) -> Iterator[str]:
        for key in keys:
            yield from self.meta.get(key, ())

    # --------------------------------------------------------- title
    def title(self) -> tuple[str, str]:
        page_title = self.model.title
        stated = [page_title, *self.first_meta(_TITLE_META)]
        sides = [_TitleSides.of(t) for t in stated]
        best: tuple[tuple[bool, int, int, int], str] | None = None
        headings = [(el, _norm(el.text_content())) for el in self.headings]
        for order, (el, text) in enumerate(headings):
            rank = max(side.match(text) for side in sides)
            if rank:
                # the title's own words and signs first (a section heading may echo the title
                # in other signs: "Flink + Pulsar #" for "Flink & Pulsar"), then the closest
                # to the body, then the first
                literal = any(text.casefold() in _norm(t).casefold() for t in stated)
                key = (literal, rank, self.closeness(el), -order)
                best = (key, text) if best is None or key > best[0] else best
        if best is not None:
            return best[1], "heading"
        opening = self.opening_heading()
        if opening:
            return opening, "heading"
        return _strip_site_name(page_title, list(self.first_meta(_SITE_META))), "title"

    def opening_heading(self) -> str:
        """The heading the article body starts with, if it starts with one."""
        body = self.article_element
        if body is None:
            return ""
        first = next((h for h in body.iter(*_HEADINGS) if not _hidden(h)), None)
        text = _norm(first.text_content()) if first is not None else ""
        return text if text and _norm(body.text_content()).startswith(text) else ""

    # --------------------------------------------------------- author
    def author(self) -> str:
        for obj in self.ld:
            name = _names(obj.get("author"))
            if name:
                return name
        for value in self.first_meta(_AUTHOR_META):
            if not re.match(r"[a-z][\w+.-]*://|@", value, re.I):
                return value
        for attr in ("itemprop", "rel"):
            found = [el for el in self.with_word(attr, "author") if self.near(el)]
            if found:
                order = {id(el): i for i, el in enumerate(found)}
                el = max(found, key=lambda e: (self.closeness(e), -order[id(e)]))
                text = _stated_value(el)
                if text:
                    return text
        return ""

    # --------------------------------------------------------- published
    def published(self) -> str:
        for obj in self.ld:
            value = obj.get("datePublished")
            if isinstance(value, str) and iso_date(value):
                return iso_date(value)
        for value in self.first_meta(_DATE_META):
            if iso_date(value):
                return iso_date(value)
        for el in self.with_word("itemprop", "datepublished"):
            value = iso_date(el.get("datetime") or el.get("content") or "")
            if value:
                return value
        return self.time_element()

    def time_element(self) -> str:
        """The ``<time datetime>`` nearest the article (module docstring)."""
        found = []
        marks = self.marked
        for order, tag in enumerate(marks.tags):
            if tag != "time":
                continue
            el = marks.reach(order)
            value = iso_date(el.get("datetime") or "")
            modified = "datemodified" in (el.get("itemprop") or "").lower().split()
            if value and not modified and self.near(el):
                marked = el.get("pubdate") is not None
                found.append((marked, self.closeness(el), -order, value))
        return max(found)[3] if found else ""

    # --------------------------------------------------------- language
    def language(self) -> str:
        for el in (self.doc, self.model.root):
            if el is None:
                continue
            lang = el.get("lang") or el.get("{http://www.w3.org/XML/1998/namespace}lang")
            if lang and _norm(lang):
                return _norm(lang).replace("_", "-")
        for value in self.first_meta(_LANG_META):
            return value.split(",")[0].strip().replace("_", "-")
        return text_language(self.model.text_of(self.article or 0))


#: Stands for a mark's attribute value the model did not read in its build (its element is
#: reached for it); the values the build read need no element.
_UNKNOWN = object()


class _Marks(NamedTuple):
    """The marked elements (:attr:`_Page.marked`), in document order: their tags, the values
    of the attributes known without reaching them (``_UNKNOWN`` where not), and ``reach``,
    the element of the k-th mark (on a page of the Python docs, the two marks are ``Show
    Source`` links with ``rel="nofollow"``: their ``rel`` says no author, no element is
    needed)."""

    tags: list[str]
    known: dict[str, list[object]]
    reach: Callable[[int], etree._Element]

    def values(self, name: str) -> list[str | None]:
        """Each mark's attribute ``name``."""
        known = self.known.get(name, [_UNKNOWN] * len(self.tags))
        return [self.reach(k).get(name) if v is _UNKNOWN else cast("str | None", v)
                for k, v in enumerate(known)]  # fmt: skip


def _model_marks(model: PageModel, doc: etree._Element) -> _Marks | None:
    """The marks :data:`_MARKED` finds, from the model: the nodes with an ``itemprop`` (read
    in the build), the ``a`` nodes with a ``rel`` (read in the build) and the ``time`` nodes,
    outside hidden subtrees, their ``itemprop`` and the ``a`` nodes' ``rel`` known; None where
    the model cannot stand for the query: a model of part of the document, or tags an XPath
    name test reads otherwise (namespaced or upper-case: :attr:`PageModel.names_are_tags`).
    Spares the query's walk of the whole tree (~0.6 ms a pydoc page)."""
    if model.root is not doc or not model.names_are_tags:
        return None
    a_nodes, rels = model.rel_anchors()
    times = np.flatnonzero(model.tag_id == model.tag_code("time"))
    nodes = np.concatenate([model.nodes_with("itemprop"), a_nodes, times])
    nodes = np.unique(nodes)
    nodes = nodes[~model.hidden[nodes]]
    rel_of = dict(zip(a_nodes.tolist(), rels, strict=True))
    listed = nodes.tolist()
    known: dict[str, list[object]] = {
        "itemprop": list(model.attribute_at("itemprop", nodes)),
        "rel": [rel_of.get(node, _UNKNOWN) for node in listed],
    }
    reached: dict[int, etree._Element] = {}

    def reach(k: int) -> etree._Element:
        if k not in reached:
            reached[k] = model.element(listed[k])
        return reached[k]

    return _Marks([model.tag_names[t] for t in model.tag_id[nodes].tolist()], known, reach)


#: The kinds of element the fields read from every page, by tag (:func:`_by_kind`).
_KIND_OF_TAG = {"meta": "meta", "script": "script", **dict.fromkeys(_HEADINGS, "heading")}


def _by_kind(doc: etree._Element) -> dict[str, list[etree._Element]]:
    """The page's ``meta``, ``script`` and heading elements, each kind in document order:
    one walk of the tree, filtered in C (a walk costs as much on a large page as reading
    every element found, and each kind had one of its own)."""
    found: dict[str, list[etree._Element]] = {kind: [] for kind in _KIND_OF_TAG.values()}
    for el in doc.iter(*_KIND_OF_TAG):
        found[_KIND_OF_TAG[el.tag.rpartition("}")[2]]].append(el)
    return found


def _hidden(el: etree._Element) -> bool:
    """``el`` is in a part of the page a browser does not show (``noscript``, ``template`` …)."""
    return el.tag in HIDDEN_TAGS or any(True for _ in el.iterancestors(*HIDDEN_TAGS))


def _stated_value(el: etree._Element) -> str:
    """An element's stated value: its ``content``, an inner ``itemprop="name"`` element's
    text, or its own text."""
    if _norm(el.get("content")):
        return _norm(el.get("content"))
    for inner in el.iter():
        if "name" in (inner.get("itemprop") or "").lower().split():
            return _norm(inner.text_content())
    return _norm(el.text_content())


class _TitleSides(NamedTuple):
    """A title's words (:func:`_key`) whole and on either side of each of its separators."""

    whole: str
    sides: frozenset[str]

    @classmethod
    def of(cls, title: str) -> _TitleSides:
        parts = _split_title(title)
        sides = [" ".join(parts[:k]) for k in range(1, len(parts))]
        sides += [" ".join(parts[k:]) for k in range(1, len(parts))]
        return cls(_key(title), frozenset(map(_key, sides)))

    def match(self, heading: str) -> int:
        """2: ``heading`` is the whole title; 1: the parts on one side of a separator in it;
        0: neither. Compared by words (case, punctuation and quote styles aside: a heading
        writes “curly” quotes where its ``<title>`` has straight ones)."""
        h = _key(heading)
        if not h:
            return 0
        return 2 if h == self.whole else int(h in self.sides)


def _key(text: str) -> str:
    """``text``'s words, lower-case, without punctuation."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def _split_title(title: str) -> list[str]:
    """The title's parts between separators (one part: no separator)."""
    return [p for p in _SEPARATOR.split(_norm(title)) if p]


def _strip_site_name(title: str, names: Sequence[str]) -> str:
    """``title`` without a first or last part that is the site's stated name."""
    parts = _split_title(title)
    if len(parts) < 2:
        return _norm(title)
    names_cf = {_norm(n).casefold() for n in names}
    if parts[-1].casefold() in names_cf:
        return _cut(title, len(parts) - 1, end=True)
    if parts[0].casefold() in names_cf:
        return _cut(title, 1, end=False)
    return _norm(title)


def _cut(title: str, keep: int, *, end: bool) -> str:
    """``title`` without its last part (``end``) or first part, separators kept inside."""
    title = _norm(title)
    seps = list(_SEPARATOR.finditer(title))
    seps = [m for m in seps if m.start() > 0 and m.end() < len(title)]
    if not seps:
        return title
    return title[: seps[-1].start()] if end else title[seps[0].end() :]


class SiteTitles:
    """A site's ``<title>`` affixes, learnt from its pages' titles as they arrive: the first
    and the last part of each title (parts split at separators) are counted, and an affix is
    the site's when at least two titles and a quarter of those seen carry it (the site name,
    "| The Lakeside Courier" on 182 of 183 demo pages), which :meth:`without_affixes` removes.
    Bounded: past ``max_parts`` distinct parts, the ones seen once are forgotten.

    A part is counted under a 64-bit hash of its side and text (:func:`_part_key`) in a
    :class:`~wisdom_scrapy.store.counts.KeyCounts`, ~12 bytes a part where a ``Counter`` of
    (side, text) held ~200: a headline is a new part on every page of a news site, and a broad
    crawl keeps this for each of its sites. Two parts share a count only if their hashes
    collide (about n²/2⁶⁵ for n parts)."""

    def __init__(self, max_parts: int = 4096) -> None:
        self.titles = 0
        self.parts = KeyCounts()
        self.max_parts = max_parts

    def add(self, title: str) -> None:
        """Count one page's title."""
        parts = _split_title(title)
        self.titles += 1
        if len(parts) < 2:
            return
        self.parts.add(np.array([_part_key("first", parts[0]), _part_key("last", parts[-1])],
                                dtype=np.int64))
        if len(self.parts) > self.max_parts:
            keys, counts = self.parts.arrays()
            self.parts.remove(keys[counts == 1])

    def _repeated(self, side: str, part: str) -> bool:
        count = self.parts.value(_part_key(side, part), 0)
        return count >= 2 and 4 * count >= self.titles

    def without_affixes(self, title: str) -> str:
        """``title`` without the site's repeated first/last parts (never all of it)."""
        title = _norm(title)
        while True:
            parts = _split_title(title)
            if len(parts) < 2:
                return title
            if self._repeated("last", parts[-1]):
                title = _cut(title, len(parts) - 1, end=True)
            elif self._repeated("first", parts[0]):
                title = _cut(title, 1, end=False)
            else:
                return title


def _part_key(side: str, part: str) -> int:
    """The count key of a title's ``side`` ("first" or "last") part, whatever its case (not
    cached: a part seldom repeats within the cache's reach, and would push out the terms)."""
    return uncached_hash(f"{side}\x00{part.casefold()}")


# ------------------------------------------------------------------ JSON-LD


def _ld_objects(scripts: Iterable[etree._Element]) -> Iterator[dict[str, Any]]:
    """The JSON-LD objects of the page's ``scripts`` (its ``<script>`` elements) that describe
    a work (with an ``author`` or a ``datePublished``), in document order; unreadable blocks
    are passed over."""
    for script in scripts:
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        stack = [data]
        while stack:
            obj = stack.pop(0)
            if isinstance(obj, list):
                stack[:0] = obj
            elif isinstance(obj, dict):
                if "author" in obj or "datePublished" in obj:
                    yield obj
                if "@graph" in obj:
                    stack[:0] = [obj["@graph"]]


def _names(value: Any) -> str:
    """A JSON-LD ``author``: a name, a Person/Organization, or a list of them."""
    if isinstance(value, str):
        return "" if re.match(r"[a-z][\w+.-]*://", value, re.I) else _norm(value)
    if isinstance(value, dict):
        return _names(value.get("name"))
    if isinstance(value, list):
        return ", ".join(n for n in map(_names, value) if n)
    return ""


# ------------------------------------------------------------------ dates, language

_DATE_ONLY = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})\s*$")


def iso_date(value: str) -> str:
    """``value`` as ISO 8601 ("2024-03-05T14:20:00", with its offset when it states one;
    "2024-03-05" for a date alone), or "" when it is no ISO 8601 date.

    >>> iso_date("2024-03-05T14:20Z")
    '2024-03-05T14:20:00+00:00'
    >>> iso_date("2024-03-05"), iso_date("March 5")
    ('2024-03-05', '')
    """
    value = (value or "").strip()
    found = _DATE_ONLY.match(value)
    try:
        if found:
            return date(*map(int, found.groups())).isoformat()
        if not re.match(r"\d{4}-\d{2}-\d{2}[T ]\d", value):
            return ""
        return datetime.fromisoformat(value).isoformat()
    except ValueError:
        return ""


def text_language(text: str) -> str:
    """The language the script of ``text``'s letters names, or "" (module docstring).

    >>> text_language("技术周刊"), text_language("ひらがなと漢字"), text_language("plain")
    ('zh', 'ja', '')
    """
    scripts: Counter[str] = Counter()
    for ch in text[:4000]:
        if ch.isalpha():
            scripts[unicodedata.name(ch, "?").split(" ", 1)[0]] += 1
    if not scripts:
        return ""
    letters = sum(scripts.values())
    kana = scripts["HIRAGANA"] + scripts["KATAKANA"]
    if kana * 20 >= letters:
        return "ja"
    script, count = scripts.most_common(1)[0]
    if script == "CJK" and count * 2 >= letters:
        return "zh"
    return _SCRIPT_LANGUAGE.get(script, "") if count * 2 >= letters else ""
