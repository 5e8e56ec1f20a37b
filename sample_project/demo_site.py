"""A deterministic local news site with its ground truth, for demos, tests and benchmarks.

``python -m sample_project.demo_site DIR`` (or :func:`build_demo_site`) writes

* ``DIR/site/`` — the static site, served by :func:`wisdom_scrapy.testing.serve_directory`
  (``DIR/site/_redirects.json`` maps the ad-click paths to their landing pages, answered with 302);
* ``DIR/ground_truth.json`` — what every page *is*, outside the served tree.

The site ("The Lakeside Courier") is built like a real template-generated news portal: a home page
with the latest stories, six paginated category pages (25 articles each, 10 per page), article
pages in two templates (a standard story and an opinion-column variant) with title/date/author/place
metadata, a shared header menu, sidebar boxes ("Most read", topics, archives, ads), a footer, and
the redundant links real templates repeat on every page: tag, author and month archives (real,
paginated listing pages), a print version and a share page per article, sign-in/subscribe and
other static pages, and ad-click links that redirect to promotion pages. Article text is real
English prose cut from the help texts that ship with Python (``pydoc_data.topics``); no paragraph
is used twice.

Ground truth format::

    {"site": {...}, "redirects": {"/ads/click/1": "/promo/....html", ...},
     "pages": {"/news/world/some-story.html": {
         "role": "article" | "toc" | "other",
         "kind": "article" | "column" | "home" | "category" | "tag" | "author" | "month"
                 | "archive" | "print" | "share" | "static" | "promo",
         "title": "...",   # the page's <h1> (the <title> is "<title> | The Lakeside Courier")
         "text": "...",    # articles: the body text exactly as rendered, paragraphs joined by
                           #   "\\n\\n", without headline, standfirst, metadata, pull quote or ads;
                           #   "" for every other page
         "links": [...],   # absolute paths of article links in the page's main content, in
                           #   order: toc and archive listings: their main story list; articles:
                           #   the inline links inside the body text; [] otherwise
         # articles only: "category", "author", "date" (ISO), "place", "tags"
     }}}

``role`` is ``toc`` for the pages that list stories (the home page, the category pages and the
tag, author and month archives, however few stories they list), ``article`` for article pages
and ``other`` for everything else (the archive index of months, print and share copies, static
and promo pages): what a user crawling for articles expects each to be.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import shutil
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from pydoc_data.topics import topics as _PYDOC_TOPICS

__all__ = [
    "DEFAULT_SEED",
    "GROUND_TRUTH_FILE",
    "SITE_DIR",
    "SITE_NAME",
    "build_demo_site",
    "generate_demo_site",
    "main",
]

SITE_NAME = "The Lakeside Courier"
DEFAULT_SEED = 1887
SITE_DIR = "site"
GROUND_TRUTH_FILE = "ground_truth.json"
REDIRECTS_FILE = "_redirects.json"  # same name as wisdom_scrapy.testing.REDIRECTS_FILE

PER_PAGE = 10
ARTICLES_PER_CATEGORY = 25
HOME_LATEST = 20
RELATED = 4
MOST_READ = 5

CATEGORIES = [
    ("world", "World", "Reports from our correspondents around the globe."),
    ("politics", "Politics", "Parliament, councils, elections and the people who run them."),
    ("business", "Business", "Markets, companies, jobs and the regional economy."),
    ("technology", "Technology", "Software, gadgets, networks and the firms that build them."),
    ("science", "Science", "Research, discoveries and the scientists behind them."),
    ("opinion", "Opinion", "Columns and comment from our writers and guest contributors."),
]
COLUMN_CATEGORY = "opinion"

REPORTERS = [
    "Amira Haddad", "Jonas Lindqvist", "Priya Natarajan", "Tomás Ferreira", "Grace Okafor",
    "Henrik Vogel", "Mei Chen",
]
COLUMNISTS = ["Eleanor Whitfield", "Samuel Adeyemi", "Ines Moreau"]

TAGS = [
    "Elections", "Climate", "Housing", "Transport", "Energy", "Health", "Education", "Trade",
    "Startups", "Privacy", "Courts", "Culture", "Space", "Agriculture", "Labour", "Finance",
]

PLACES = [
    "Lakeside", "Lisbon", "Nairobi", "Osaka", "Montreal", "Tallinn", "Valparaíso", "Dundee",
    "Pune", "Graz", "Hobart", "Accra",
]

SUBJECTS = [
    "City council", "Regional court", "Port authority", "Union leaders", "Central bank",
    "Researchers", "Local startups", "Farmers", "Rail operator", "Museum trustees",
    "Hospital board", "Teachers", "Energy regulator", "Parliament", "Chip makers",
    "Fishing fleet", "Student groups", "The mayor", "Health ministry", "Water utility",
]
#: Subjects that take a plural verb ("Farmers back ..." but "The mayor backs ...").
PLURAL_SUBJECTS = {
    "Union leaders", "Researchers", "Local startups", "Farmers", "Museum trustees", "Teachers",
    "Chip makers", "Student groups",
}
VERBS = [
    "approve", "reject", "debate", "delay", "unveil", "question", "back", "review", "expand",
    "cut", "defend", "revisit", "pause", "fast-track",
]
OBJECTS = [
    "new budget", "housing plan", "tram extension", "data rules", "tax reform", "solar project",
    "school funding", "harbour expansion", "privacy law", "trade deal", "flood defences",
    "museum wing", "rent controls", "broadband rollout", "climate targets", "pension changes",
    "bridge repairs", "vaccine programme", "satellite launch", "wage talks",
]
COLUMN_PATTERNS = [  # {is}/{s}: verb agreement with the object ("rent controls are")
    "Why the {o} matter{s} more than ever",
    "The case against the {o}",
    "What {p} can teach us about the {o}",
    "Nobody asked voters about the {o}",
    "The {o} {is} a test we cannot fail",
    "Let us be honest about the {o}",
]

ADS = [
    ("spring-sale", "Spring sale: 40% off garden furniture", "Everything for your terrace."),
    ("fibre-deal", "Fibre broadband for 19.99 a month", "Switch today, no installation fee."),
    ("lake-cruise", "Sunset cruises on the lake", "Book a table on the evening boat."),
    ("city-bank", "City Bank savings account", "A rate that keeps up with you."),
    ("book-fair", "Lakeside Book Fair this weekend", "Two hundred authors, one harbour."),
    ("e-bikes", "Test-ride the new e-bikes", "Free rides at the market square."),
]

STATIC_PAGES = [
    ("about", "About us", "The Lakeside Courier is an independent regional newspaper."),
    ("contact", "Contact the newsroom", "Send tips, corrections and letters to the editors."),
    ("privacy", "Privacy policy", "How we handle your data, cookies and subscriptions."),
    ("terms", "Terms of use", "The rules for using this site and its content."),
    ("advertise", "Advertise with us", "Reach readers across the region with our campaigns."),
    ("subscribe", "Subscribe", "Support independent journalism from 2.99 a week."),
    ("login", "Sign in", "Sign in to comment and to manage your newsletters."),
]

_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

CSS = """
body{margin:0;font-family:Georgia,'Times New Roman',serif;color:#1b1b1b;background:#fff}
a{color:#0b4f8a;text-decoration:none}a:hover{text-decoration:underline}
.page-wrap{max-width:1180px;margin:0 auto}
.site-header{border-bottom:3px solid #0b4f8a;padding:8px 16px}
.top-bar{display:flex;justify-content:space-between;font:13px/1.4 Arial,sans-serif;color:#666}
.top-bar ul{list-style:none;margin:0;padding:0;display:flex;gap:12px}
.brand .logo{font-size:42px;font-weight:bold;color:#111;letter-spacing:-1px}
.brand .tagline{display:block;font-style:italic;color:#777}
.nav .menu{list-style:none;margin:8px 0 0;padding:0;display:flex;gap:18px;font:bold 15px Arial}
.nav .menu li.active a{color:#c0392b}.search{float:right;margin-top:-24px}
.ad{background:#f4f4f4;border:1px dashed #bbb;padding:10px;margin:12px 16px;font:13px Arial}
.ad .ad-label{display:block;text-transform:uppercase;font-size:10px;color:#999}
.container{display:flex;gap:32px;padding:0 16px}.main-column{flex:1 1 auto;min-width:0}
.sidebar{flex:0 0 300px}.widget{margin-bottom:24px}.widget-title{border-bottom:1px solid #ddd}
.story-list{list-style:none;padding:0}.story-teaser{border-bottom:1px solid #eee;padding:12px 0}
.story-teaser h2{font-size:22px;margin:0 0 6px}.story-teaser.lead h2{font-size:32px}
.summary{color:#444;margin:0 0 6px}.teaser-meta{font:12px Arial;color:#888}
.pagination{margin:24px 0;font:14px Arial}.pagination a,.pagination span{padding:4px 8px}
.pagination .current{background:#0b4f8a;color:#fff}
.headline,.column-title{font-size:40px;line-height:1.1;margin:8px 0}
.standfirst{font-size:20px;color:#333}.article-meta{font:13px Arial;color:#666;margin:8px 0}
.article-meta .place:before{content:' \\2014  '}
.article-tools ul{list-style:none;padding:0;display:flex;gap:10px}
.story-body p,.column-body p{font-size:18px;line-height:1.6}
.pullquote{font-size:26px;font-style:italic;border-left:4px solid #c0392b;padding-left:16px}
.columnist{font:14px Arial;margin:12px 0}.columnist-role{color:#888}
.tags ul{display:inline;list-style:none;padding:0}.tags li{display:inline;margin-right:8px}
.related ul{padding-left:18px}.breadcrumb{font:12px Arial;color:#999}
.site-footer{background:#222;color:#ccc;padding:24px 16px;margin-top:40px;font:13px Arial}
.site-footer a{color:#eee}.footer-links ul{list-style:none;padding:0;display:flex;gap:16px}
@media (max-width:800px){.container{display:block}.sidebar{width:auto}}
""".strip()

PRINT_CSS = """
body{font-family:Georgia,serif;max-width:42em;margin:2em auto;color:#000}
.print-header{font:12px Arial;border-bottom:1px solid #000;margin-bottom:1em}
.print-meta{font-style:italic}.print-footer{font-size:11px;border-top:1px solid #000}
@media print{a{color:#000}}
""".strip()

HEAD_SCRIPT = """
window.dataLayer = window.dataLayer || [];
function gtag(){dataLayer.push(arguments);}
gtag('js', new Date()); gtag('config', 'LC-000000');
""".strip()

FOOT_SCRIPT = """
(function () {
  var menu = document.querySelector('#main-nav .menu');
  if (!menu) { return; }
  document.querySelectorAll('.ad a').forEach(function (a) {
    a.addEventListener('click', function () { dataLayer.push({event: 'ad_click'}); });
  });
  var consent = document.cookie.indexOf('consent=1') < 0;
  if (consent) { console.log('cookie banner'); }
})();
""".strip()


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _attr(text: str) -> str:
    return html.escape(text, quote=True)


def _slugify(text: str) -> str:
    table = str.maketrans("áàâãäéèêëíìîïóòôõöúùûüçñ", "aaaaaeeeeiiiiooooouuuucn")
    return re.sub(r"[^a-z0-9]+", "-", text.lower().translate(table)).strip("-")


def _date_text(dt: datetime) -> str:
    return f"{_DAYS[dt.weekday()]} {dt.day} {_MONTHS[dt.month - 1]} {dt.year}, {dt:%H:%M}"


def _short_date(dt: datetime) -> str:
    return f"{dt.day} {_MONTHS[dt.month - 1][:3]} {dt.year}"


def _split_long(text: str, limit: int = 700) -> list[str]:
    """Cut an over-long help paragraph into sentence groups of at most ~``limit`` characters."""
    if len(text) <= limit:
        return [text]
    out: list[str] = []
    current = ""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z\"“])", text):
        if current and len(current) + 1 + len(sentence) > limit:
            out.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        out.append(current)
    return out


def paragraph_pool() -> list[str]:
    """Distinct prose paragraphs (single-spaced, 80+ characters) from Python's help topics."""
    seen: set[str] = set()
    pool: list[str] = []
    for key in sorted(_PYDOC_TOPICS):
        for block in re.split(r"\n\s*\n", _PYDOC_TOPICS[key]):
            # single-spaced, without the help texts' *emphasis* asterisks
            text = re.sub(r"\*(\S[^*]*?)\*", r"\1", " ".join(block.split()))
            if not text or "::=" in text or ">>>" in text or not text[0].isupper():
                continue
            if not text.endswith((".", ":")):
                continue
            for part in _split_long(text):
                if len(part) >= 80 and part not in seen:
                    seen.add(part)
                    pool.append(part)
    return pool


def _teaser(paragraph: str, limit: int = 160) -> str:
    first = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


@dataclass
class _Article:
    index: int
    category: str
    title: str
    slug: str
    date: datetime
    author: str
    place: str
    tags: list[str]
    paragraphs: list[str]
    variant: str  # "article" or "column"
    inline: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    emphasis: dict[int, int] = field(default_factory=dict)
    pullquote: str = ""

    @property
    def path(self) -> str:
        return f"/news/{self.category}/{self.slug}.html"

    @property
    def print_path(self) -> str:
        return f"/print/{self.category}/{self.slug}.html"

    @property
    def share_path(self) -> str:
        return f"/share/{self.slug}.html"

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


def _author_path(name: str) -> str:
    return f"/author/{_slugify(name)}/index.html"


def _tag_path(tag: str) -> str:
    return f"/tag/{_slugify(tag)}/index.html"


def _month_path(year: int, month: int) -> str:
    return f"/archive/{year}/{month:02d}/index.html"


def _page_path(first: str, number: int) -> str:
    """Path of page ``number`` (1-based) of a listing whose first page is ``first``."""
    if number == 1:
        return first
    return first.rsplit("/", 1)[0] + f"/page-{number}.html"


class _SiteBuilder:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seed = seed
        self.files: dict[str, str] = {}
        self.gold: dict[str, dict] = {}
        self.ad_paths = {f"/ads/click/{i + 1}": f"/promo/{slug}.html" for i, (slug, _, _) in
                         enumerate(ADS)}
        self._page_counter = 0
        self.articles = self._make_articles()
        self.by_path = {a.path: a for a in self.articles}
        self.latest = sorted(self.articles, key=lambda a: a.date, reverse=True)
        picks = self.rng.sample(self.articles, MOST_READ)
        self.most_read = picks
        self.months = sorted({(a.date.year, a.date.month) for a in self.articles}, reverse=True)

    # ------------------------------------------------------------------ content
    def _make_articles(self) -> list[_Article]:
        rng = self.rng
        pool = paragraph_pool()
        rng.shuffle(pool)
        n = len(CATEGORIES) * ARTICLES_PER_CATEGORY
        counts = [rng.randint(4, 6) for _ in range(n)]
        while sum(counts) > len(pool):  # never reuse a paragraph
            counts[counts.index(max(counts))] -= 1
        titles: set[str] = set()
        start = datetime(2024, 1, 1, 6, 0)
        span_minutes = int((datetime(2024, 6, 30, 22, 0) - start).total_seconds() // 60)
        articles: list[_Article] = []
        offset = 0
        for ci, (cat, _, _) in enumerate(CATEGORIES):
            for j in range(ARTICLES_PER_CATEGORY):
                index = ci * ARTICLES_PER_CATEGORY + j
                place = rng.choice(PLACES)
                while True:
                    if cat == COLUMN_CATEGORY:
                        obj = rng.choice(OBJECTS)
                        plural = obj.endswith("s")
                        title = rng.choice(COLUMN_PATTERNS).format(
                            o=obj, p=place, s="" if plural else "s", **{"is": "are" if plural
                                                                        else "is"})
                    else:
                        subject, verb = rng.choice(SUBJECTS), rng.choice(VERBS)
                        if subject not in PLURAL_SUBJECTS:
                            verb += "es" if verb.endswith(("sh", "ch", "s", "x")) else "s"
                        title = f"{subject} {verb} {rng.choice(OBJECTS)} in {place}"
                    title = title[0].upper() + title[1:]
                    if title not in titles:
                        titles.add(title)
                        break
                paragraphs = pool[offset:offset + counts[index]]
                offset += counts[index]
                minute = rng.randrange(span_minutes)
                articles.append(_Article(
                    index=index,
                    category=cat,
                    title=title,
                    slug=_slugify(title),
                    date=start + timedelta(minutes=minute),
                    author=rng.choice(COLUMNISTS if cat == COLUMN_CATEGORY else REPORTERS),
                    place=place,
                    tags=sorted(rng.sample(TAGS, rng.randint(2, 3)), key=TAGS.index),
                    paragraphs=paragraphs,
                    variant="column" if cat == COLUMN_CATEGORY else "article",
                ))
        # every tag is used at least once (so each tag page lists something)
        for tag in TAGS:
            if not any(tag in a.tags for a in articles):
                chosen = rng.choice(articles)
                chosen.tags = sorted([*chosen.tags, tag], key=TAGS.index)
        # inline links to other articles, emphasis and pull quotes
        for art in articles:
            if rng.random() < 0.55:
                for _ in range(rng.randint(1, 2)):
                    target = rng.choice(articles)
                    if target is art:
                        continue
                    p = rng.randrange(len(art.paragraphs))
                    words = art.paragraphs[p].split(" ")
                    if len(words) < 8 or p in art.inline:
                        continue
                    length = rng.randint(2, 4)
                    begin = rng.randrange(1, len(words) - length - 1)
                    art.inline[p] = [(begin, begin + length, target.path)]
            for p, para in enumerate(art.paragraphs):
                words = para.split(" ")
                if p not in art.inline and len(words) > 10 and rng.random() < 0.2:
                    art.emphasis[p] = rng.randrange(len(words))
            art.links = [art.inline[p][0][2] for p in sorted(art.inline)]
            if art.variant == "column":
                art.pullquote = _teaser(art.paragraphs[len(art.paragraphs) // 2], 140)
        return articles

    # ------------------------------------------------------------------ shared blocks
    def _ads(self) -> tuple[str, str]:
        """(path, ad) pairs for the next page, rotating so every ad appears somewhere."""
        i = self._page_counter
        self._page_counter += 1
        return (f"/ads/click/{i % len(ADS) + 1}", f"/ads/click/{(i + 3) % len(ADS) + 1}")

    @staticmethod
    def _ad_block(href: str, css: str) -> str:
        _, headline, text = ADS[int(href.rsplit("/", 1)[1]) - 1]
        return (f'<div class="ad {css}"><span class="ad-label">Advertisement</span>'
                f'<a href="{href}" rel="sponsored nofollow" target="_blank">'
                f'<strong>{_esc(headline)}</strong></a> <span class="ad-text">{_esc(text)}'
                f"</span></div>")

    def _header(self, active: str) -> str:
        items = [('home', "/index.html", "Home")]
        items += [(cat, f"/news/{cat}/index.html", name) for cat, name, _ in CATEGORIES]
        items.append(("archive", "/archive/index.html", "Archive"))
        menu = "\n".join(
            f'    <li class="menu-item{" active" if key == active else ""}">'
            f'<a href="{href}">{name}</a></li>' for key, href, name in items)
        return f"""<header id="masthead" class="site-header">
  <div class="top-bar">
    <span class="edition">Lakeside edition</span>
    <ul class="account">
     <li><a href="/login.html">Sign in</a></li>
     <li><a href="/subscribe.html">Subscribe</a></li>
    </ul>
  </div>
  <div class="brand"><a class="logo" href="/index.html">{SITE_NAME}</a>
    <span class="tagline">Independent news since 1887</span></div>
  <nav id="main-nav" class="nav">
   <ul class="menu">
{menu}
   </ul>
   <form class="search" action="/search.html" method="get">
    <input type="search" name="q" placeholder="Search the Courier">
    <button type="submit">Search</button>
   </form>
  </nav>
</header>"""

    def _sidebar(self, ad_href: str) -> str:
        most = "\n".join(f'      <li><a href="{a.path}">{_esc(a.title)}</a></li>'
                         for a in self.most_read)
        tags = " ".join(f'<li><a href="{_tag_path(t)}">{t}</a></li>' for t in TAGS)
        months = "\n".join(
            f'      <li><a href="{_month_path(y, m)}">{_MONTHS[m - 1]} {y}</a></li>'
            for y, m in self.months)
        return f"""<aside id="sidebar" class="sidebar">
  <div class="widget most-read">
    <h3 class="widget-title">Most read</h3>
    <ol>
{most}
    </ol>
  </div>
  {self._ad_block(ad_href, "ad-box widget")}
  <div class="widget tag-cloud">
    <h3 class="widget-title">Topics</h3>
    <ul>{tags}</ul>
  </div>
  <div class="widget archives">
    <h3 class="widget-title">Archives</h3>
    <ul>
{months}
    </ul>
  </div>
</aside>"""

    @staticmethod
    def _footer() -> str:
        links = "".join(f'<li><a href="/{slug}.html">{name}</a></li>'
                        for slug, name, _ in STATIC_PAGES if slug not in ("login", "subscribe"))
        return f"""<footer id="footer" class="site-footer">
  <div class="footer-links"><ul>{links}</ul></div>
  <div class="social">Follow us:
    <a href="https://www.facebook.com/lakesidecourier" rel="noopener">Facebook</a>
    <a href="https://twitter.com/lakesidecourier" rel="noopener">X</a>
    <a href="https://www.instagram.com/lakesidecourier" rel="noopener">Instagram</a>
  </div>
  <p class="copyright">&copy; 2024 {SITE_NAME} Ltd.<br>12 Harbour Street, Lakeside<br>
   All rights reserved.</p>
</footer>"""

    def _page(self, path: str, title: str, body_class: str, active: str, main: str,
              description: str) -> None:
        top_ad, side_ad = self._ads()
        self.files[path] = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_esc(title)} | {SITE_NAME}</title>
<meta name="description" content="{_attr(description)}">
<style>
{CSS}
</style>
<script>
{HEAD_SCRIPT}
</script>
</head>
<body class="{body_class}">
<!-- header: shared by every template -->
<div id="page" class="page-wrap">
{self._header(active)}
{self._ad_block(top_ad, "ad-leaderboard")}
<div id="wrapper" class="container">
<div id="content" class="main-column">
{main}
</div><!-- /#content -->
{self._sidebar(side_ad)}
</div>
{self._footer()}
</div>
<script>
{FOOT_SCRIPT}
</script>
</body>
</html>
"""

    def _gold(self, path: str, role: str, kind: str, title: str, text: str = "",
              links: list[str] | None = None, **extra: object) -> None:
        self.gold[path] = {"role": role, "kind": kind, "title": title, "text": text,
                           "links": list(links or []), **extra}

    # ------------------------------------------------------------------ listings
    def _teaser_item(self, art: _Article, lead: bool = False) -> str:
        summary = _teaser(art.paragraphs[0], 260 if lead else 160)
        return (f'  <li class="story-teaser{" lead" if lead else ""}">'
                f'<h2><a href="{art.path}">{_esc(art.title)}</a></h2>'
                f'<p class="summary">{_esc(summary)}</p>'
                f'<div class="teaser-meta"><time datetime="{art.date:%Y-%m-%dT%H:%M}">'
                f"{_short_date(art.date)}</time> · "
                f'<a href="{_author_path(art.author)}">{_esc(art.author)}</a></div></li>')

    def _listing(self, first: str, heading: str, intro: str, items: list[_Article],
                 role: str, kind: str, active: str, extra_top: str = "") -> None:
        pages = max(1, -(-len(items) // PER_PAGE))
        for number in range(1, pages + 1):
            path = _page_path(first, number)
            chunk = items[(number - 1) * PER_PAGE:number * PER_PAGE]
            nav = []
            if number > 1:
                nav.append(f'<a class="prev" rel="prev" href="{_page_path(first, number - 1)}">'
                           "« Previous</a>")
            for k in range(1, pages + 1):
                nav.append(f'<span class="current">{k}</span>' if k == number else
                           f'<a href="{_page_path(first, k)}">{k}</a>')
            if number < pages:
                nav.append(f'<a class="next" rel="next" href="{_page_path(first, number + 1)}">'
                           "Next »</a>")
            teasers = "\n".join(self._teaser_item(a) for a in chunk)
            info = f'<p class="page-info">Page {number} of {pages}</p>' if pages > 1 else ""
            main = f"""<div class="section-page listing {kind}-listing">
 <h1 class="section-title">{_esc(heading)}</h1>
 {extra_top}<p class="section-intro">{_esc(intro)}</p>
 {info}
 <ul class="story-list">
{teasers}
 </ul>
 <div class="pagination">{" ".join(nav)}</div>
</div>"""
            title = heading if number == 1 else f"{heading} – page {number}"
            self._page(path, title, f"listing {kind}", active, main, intro)
            self._gold(path, role, kind, heading, links=[a.path for a in chunk])

    # ------------------------------------------------------------------ articles
    @staticmethod
    def _paragraph_html(art: _Article, p: int) -> str:
        words = [_esc(w) for w in art.paragraphs[p].split(" ")]
        for begin, end, href in art.inline.get(p, []):
            words[begin] = f'<a href="{href}">' + words[begin]
            words[end - 1] = words[end - 1] + "</a>"
        if p in art.emphasis:
            w = art.emphasis[p]
            words[w] = f"<em>{words[w]}</em>"
        return "<p>" + " ".join(words) + "</p>"

    def _body_html(self, art: _Article, indent: str) -> str:
        out = []
        ad_href = f"/ads/click/{art.index % len(ADS) + 1}"
        for p in range(len(art.paragraphs)):
            out.append(indent + self._paragraph_html(art, p))
            if p == 1:
                if art.variant == "column":
                    out.append(f'{indent}<blockquote class="pullquote">{_esc(art.pullquote)}'
                               "</blockquote>")
                else:
                    out.append(indent + self._ad_block(ad_href, "ad-inline"))
        return "\n".join(out)

    def _related(self, art: _Article) -> list[_Article]:
        same = [a for a in self.latest if a.category == art.category]
        i = same.index(art)
        around = same[max(0, i - 2):i] + same[i + 1:i + 1 + RELATED]
        return around[:RELATED]

    def _tools(self, art: _Article) -> str:
        url = f"https://lakeside-courier.example{art.path}"
        return (f'<ul class="article-tools">'
                f'<li><a class="print" href="{art.print_path}">Print</a></li>'
                f'<li><a class="share" href="{art.share_path}">Share</a></li>'
                f'<li><a class="share-fb" href="https://www.facebook.com/sharer/sharer.php?u={url}"'
                f' rel="noopener">Facebook</a></li>'
                f'<li><a class="share-mail" href="mailto:?subject={_attr(art.slug)}">Email</a>'
                "</li></ul>")

    def _tags_html(self, art: _Article) -> str:
        items = "".join(f'<li><a href="{_tag_path(t)}">{t}</a></li>' for t in art.tags)
        return f'<div class="tags"><span class="tags-label">Tags:</span> <ul>{items}</ul></div>'

    def _article(self, art: _Article) -> None:
        cat_name = dict((c, n) for c, n, _ in CATEGORIES)[art.category]
        related = "\n".join(f'    <li><a href="{a.path}">{_esc(a.title)}</a></li>'
                            for a in self._related(art))
        iso = f"{art.date:%Y-%m-%dT%H:%M}"
        author = f'<a class="author" rel="author" href="{_author_path(art.author)}">' \
                 f"{_esc(art.author)}</a>"
        if art.variant == "column":
            main = f"""<div class="column-page" id="column-{art.index}">
 <div class="column-header">
  <span class="kicker"><a href="/news/{art.category}/index.html">{cat_name}</a></span>
  <h1 class="column-title">{_esc(art.title)}</h1>
  <div class="columnist">{author}<br><span class="columnist-role">Columnist</span>
   <div class="dateline"><time datetime="{iso}">{_date_text(art.date)}</time>
    <span class="place">{_esc(art.place)}</span></div>
  </div>
 </div>
 <section class="column-body">
{self._body_html(art, "  ")}
 </section>
 <div class="column-footer">
  {self._tools(art)}
  {self._tags_html(art)}
 </div>
</div>
<section class="related more-columns">
  <h3>More opinion</h3>
  <ul>
{related}
  </ul>
</section>"""
        else:
            main = f"""<article class="story" id="article-{art.index}">
 <nav class="breadcrumb"><a href="/index.html">Home</a> ›
  <a href="/news/{art.category}/index.html">{cat_name}</a></nav>
 <h1 class="headline">{_esc(art.title)}</h1>
 <p class="standfirst">{_esc(_teaser(art.paragraphs[0]))}</p>
 <div class="article-meta meta">
  <span class="byline">By {author}</span>
  <time class="published" datetime="{iso}">{_date_text(art.date)}</time>
  <span class="place">{_esc(art.place)}</span>
 </div>
 {self._tools(art)}
 <div class="story-body" id="story-body">
{self._body_html(art, "  ")}
 </div>
 {self._tags_html(art)}
</article>
<!-- related stories are picked by section and date -->
<section class="related">
  <h3>Related stories</h3>
  <ul>
{related}
  </ul>
</section>"""
        self._page(art.path, art.title, f"{art.variant}-page section-{art.category}",
                   art.category, main, _teaser(art.paragraphs[0]))
        self._gold(art.path, "article", art.variant, art.title, art.text, art.links,
                   category=art.category, author=art.author, date=iso, place=art.place,
                   tags=list(art.tags))

    def _print(self, art: _Article) -> None:
        body = "\n".join("  <p>" + _esc(p) + "</p>" for p in art.paragraphs)
        self.files[art.print_path] = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{_esc(art.title)} (print) | {SITE_NAME}</title>
<meta name="robots" content="noindex">
<style>
{PRINT_CSS}
</style>
</head>
<body class="print-version">
<div class="print-header">{SITE_NAME} — printer-friendly version</div>
<h1>{_esc(art.title)}</h1>
<p class="print-meta">By {_esc(art.author)} · {_date_text(art.date)} · {_esc(art.place)}</p>
<div class="print-body">
{body}
</div>
<p class="print-footer">Original article: <a href="{art.path}">{_esc(art.title)}</a><br>
&copy; 2024 {SITE_NAME}</p>
<script>window.print();</script>
</body>
</html>
"""
        self._gold(art.print_path, "other", "print", art.title)

    def _share(self, art: _Article) -> None:
        url = f"https://lakeside-courier.example{art.path}"
        targets = [
            ("Facebook", f"https://www.facebook.com/sharer/sharer.php?u={url}"),
            ("X", f"https://twitter.com/intent/tweet?url={url}"),
            ("LinkedIn", f"https://www.linkedin.com/sharing/share-offsite/?url={url}"),
            ("Reddit", f"https://www.reddit.com/submit?url={url}"),
            ("Email", f"mailto:?subject={art.slug}&body={url}"),
        ]
        items = "\n".join(f'  <li><a href="{_attr(h)}" rel="noopener">{n}</a></li>'
                          for n, h in targets)
        heading = f"Share: {art.title}"
        main = f"""<div class="share-page">
 <h1>{_esc(heading)}</h1>
 <p>Send this story to a friend or post it on your favourite network.</p>
 <ul class="share-targets">
{items}
 </ul>
 <p class="share-back">Back to <a href="{art.path}">{_esc(art.title)}</a></p>
</div>"""
        self._page(art.share_path, heading, "share-page", art.category, main, heading)
        self._gold(art.share_path, "other", "share", heading)

    # ------------------------------------------------------------------ other pages
    def _home(self) -> None:
        latest = self.latest[:HOME_LATEST]
        items = "\n".join(self._teaser_item(a, lead=(i == 0)) for i, a in enumerate(latest))
        sections = "\n".join(
            f'  <li><a href="/news/{cat}/index.html">{name}</a> <span>{_esc(desc)}</span></li>'
            for cat, name, desc in CATEGORIES)
        main = f"""<div class="home-page">
<section id="latest" class="latest-news">
 <h1 class="section-title">Latest news</h1>
 <ul class="story-list">
{items}
 </ul>
</section>
<!-- sections box: same on every edition -->
<section class="sections-teaser">
 <h2>Sections</h2>
 <ul>
{sections}
 </ul>
</section>
</div>"""
        self._page("/index.html", "Latest news", "home", "home", main,
                   "Regional and world news from the Lakeside Courier.")
        self._gold("/index.html", "toc", "home", "Latest news", links=[a.path for a in latest])

    def _static(self) -> None:
        for slug, title, text in STATIC_PAGES:
            extra = ""
            if slug == "login":
                extra = ('<form class="login-form" action="/login.html" method="post">'
                         '<label>Email<br><input type="email" name="email"></label><br>'
                         '<label>Password<br><input type="password" name="password"></label><br>'
                         '<button type="submit">Sign in</button></form>'
                         '<p>No account yet? <a href="/subscribe.html">Subscribe</a>.</p>')
            main = (f'<div class="static-page {slug}">\n <h1>{_esc(title)}</h1>\n'
                    f" <p>{_esc(text)}</p>\n {extra}\n</div>")
            self._page(f"/{slug}.html", title, f"static {slug}", slug, main, text)
            self._gold(f"/{slug}.html", "other", "static", title)

    def _promos(self) -> None:
        for slug, headline, text in ADS:
            path = f"/promo/{slug}.html"
            self.files[path] = f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{_esc(headline)}</title>
<style>
body{{font-family:Arial,sans-serif;background:#ffe;text-align:center}}
.promo-box{{margin:4em auto;max-width:30em}}
</style>
</head>
<body class="promo">
<div class="promo-box">
 <h1>{_esc(headline)}</h1>
 <p>{_esc(text)}</p>
 <p><a href="/index.html">Back to {SITE_NAME}</a></p>
</div>
</body>
</html>
"""
            self._gold(path, "other", "promo", headline)

    def _archives(self) -> None:
        for tag in TAGS:
            items = [a for a in self.latest if tag in a.tags]
            self._listing(_tag_path(tag), f"Topic: {tag}",
                          f"All our stories about {tag.lower()}.", items, "toc", "tag", "")
        for name in REPORTERS + COLUMNISTS:
            items = [a for a in self.latest if a.author == name]
            role = "Columnist" if name in COLUMNISTS else "Reporter"
            bio = (f'<div class="author-bio"><p class="author-role">{role}</p>'
                   f"<p>{_esc(name)} writes for the Courier.<br>"
                   f'Contact: <a href="mailto:{_slugify(name)}@lakeside-courier.example">'
                   f"email</a></p></div>\n ")
            self._listing(_author_path(name), name, f"Stories by {name}.", items, "toc",
                          "author", "", extra_top=bio)
        month_items = []
        for year, month in self.months:
            items = [a for a in self.latest if (a.date.year, a.date.month) == (year, month)]
            label = f"{_MONTHS[month - 1]} {year}"
            month_items.append(f'  <li><a href="{_month_path(year, month)}">{label}</a> '
                               f"({len(items)} stories)</li>")
            self._listing(_month_path(year, month), f"Archive: {label}",
                          f"Everything we published in {label}.", items, "toc", "month",
                          "archive")
        main = ('<div class="archive-index">\n <h1>Archive</h1>\n <ul class="months">\n'
                + "\n".join(month_items) + "\n </ul>\n</div>")
        self._page("/archive/index.html", "Archive", "archive-index", "archive", main,
                   "Browse the Courier by month.")
        self._gold("/archive/index.html", "other", "archive", "Archive")

    def build(self) -> tuple[dict[str, str], dict]:
        self._home()
        for cat, name, desc in CATEGORIES:
            items = [a for a in self.latest if a.category == cat]
            self._listing(f"/news/{cat}/index.html", name, desc, items, "toc", "category", cat)
        for art in self.articles:
            self._article(art)
            self._print(art)
            self._share(art)
        self._archives()
        self._static()
        self._promos()
        truth = {
            "site": {"name": SITE_NAME, "generator": "sample_project.demo_site",
                     "seed": self.seed, "start": "/index.html"},
            "redirects": dict(self.ad_paths),
            "pages": dict(sorted(self.gold.items())),
        }
        return dict(sorted(self.files.items())), truth


def generate_demo_site(seed: int = DEFAULT_SEED) -> tuple[dict[str, str], dict]:
    """The site in memory: ``({"/path": html}, ground_truth)``; same seed, same bytes."""
    return _SiteBuilder(seed).build()


def build_demo_site(directory: str | Path, seed: int = DEFAULT_SEED) -> Path:
    """Write the site into ``directory/site`` and its ground truth into
    ``directory/ground_truth.json``; returns the site directory (the one to serve).

    An existing ``directory/site`` from an earlier build (recognised by its ground-truth file) is
    replaced; any other existing ``site`` folder is an error, never deleted.
    """
    root = Path(directory)
    site = root / SITE_DIR
    truth_path = root / GROUND_TRUTH_FILE
    if site.exists():
        if not truth_path.is_file() and any(site.iterdir()):
            raise FileExistsError(f"{site} exists and is not a demo-site build; not replacing it")
        shutil.rmtree(site)
    files, truth = generate_demo_site(seed)
    site.mkdir(parents=True)
    made: set[Path] = set()
    for path, text in files.items():
        target = site / path.lstrip("/")
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        target.write_text(text, encoding="utf-8", newline="\n")
    (site / REDIRECTS_FILE).write_text(json.dumps(truth["redirects"], indent=1) + "\n",
                                       encoding="utf-8", newline="\n")
    truth_path.write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8", newline="\n")
    return site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sample_project.demo_site",
        description="Build the demo news site into DIR/site and its ground truth into "
                    "DIR/ground_truth.json.")
    parser.add_argument("dir", help="output directory")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    args = parser.parse_args(argv)
    site = build_demo_site(args.dir, seed=args.seed)
    truth = json.loads((Path(args.dir) / GROUND_TRUTH_FILE).read_text(encoding="utf-8"))
    roles: dict[str, int] = {}
    for page in truth["pages"].values():
        roles[page["role"]] = roles.get(page["role"], 0) + 1
    size = sum(p.stat().st_size for p in site.rglob("*.html"))
    summary = ", ".join(f"{n} {r}" for r, n in sorted(roles.items()))
    print(f"{site}: {len(truth['pages'])} pages ({summary}), {size} bytes of HTML")
    return 0


if __name__ == "__main__":
    sys.exit(main())
