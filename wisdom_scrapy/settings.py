"""Every ``WISDOM_*`` setting: its default, its meaning and its validation, in one place.

Settings are read once per crawl into a frozen :class:`WisdomSettings`. A wrong value is a
:class:`SettingsError` that names the setting, never a silent fallback to the default.

=========================  =======================  =============================================
setting                    default                  meaning
=========================  =======================  =============================================
WISDOM_ENABLED             True                     turn every wisdom_scrapy component off
WISDOM_STORE_URI           derived                  term-entropy store: ``memory://``,
                                                    ``sqlite:///path``, ``redis://host:port/db``;
                                                    by default ``wisdom.db`` in the project
                                                    data directory (``.scrapy/``, as Scrapy's
                                                    HTTP cache), see :func:`default_store_uri`
WISDOM_STORE_BATCH_PAGES   32                       pages written to the store per transaction
                                                    (write-behind; 1: each page at once); a
                                                    distributed worker and a Redis store write
                                                    each page at once
WISDOM_SITE_KEY            ``host``                 how pages are grouped into sites: ``host``
                                                    (host and port) or the import path of a
                                                    function ``url -> str``
WISDOM_KEEP_NUMBERS        False                    count digit-only tokens as terms
WISDOM_MAX_PAGE_BYTES      10485760 (10 MiB)        larger bodies are skipped (counted); also
                                                    Scrapy's DOWNLOAD_MAXSIZE unless set
WISDOM_MAX_PAGE_NODES      150000                   pages of more elements, or of more than a
                                                    quarter as many distinct words, are skipped
                                                    (counted: ``too_complex``): ~3 × the largest
                                                    real page measured (pydoc contents.html)
WISDOM_WARMUP_PAGES        derived (≤ 32)           pages of a new site held until the store
                                                    knows this many (cold start). Not set: held
                                                    until the site's template shows (a menu on 3
                                                    pages, typically), at most
                                                    ⌈2^(1/(1 − TC_article))⌉ = 32 (the fewest
                                                    pages for which entropy can pass the article
                                                    constraint, which it joins in from there)
WISDOM_KMIB_K              1                        WISDOM k-MIB: informative blocks per page
WISDOM_KMIB_ST             0.8                      k-MIB SII threshold ST
WISDOM_TC_TOC              derived (1.25)           TOC type constraint (default 1/TC_article)
WISDOM_TC_ARTICLE          0.8                      article type constraint (CII ≥ 1 − this)
WISDOM_MERGE               ``dstm,1-cstm``          sibling-tree merging methods (WISDOM §3.3)
WISDOM_TOC_TARGETS_RATIO   0.5                      share of a TOC page's links fetched before
                                                    its TocItem is finished
WISDOM_MAX_PENDING_TOCS    50                       TOC pages waiting for targets at once
WISDOM_MAX_HELD_PAGES      256                      pages held (warm-up) or pending (TOC) at once,
                                                    all sites together; past it the oldest is
                                                    released with the analysis there is (counted)
WISDOM_SITE_HORIZON        1024                     pages of the crawl without one of a site's
                                                    before the crawl has left it: it lets go of
                                                    the counts the store holds (read back if it
                                                    comes back; its horizon then doubles);
                                                    0: never
WISDOM_FOCUS               ``drop``                 what the spider's requests for links found
                                                    only in redundant (template) blocks become:
                                                    ``drop``, ``deprioritize`` or ``off``
WISDOM_FOCUS_MIN_PAGES     5                        pages a block path must be seen on before its
                                                    links can be judged redundant (cold start)
WISDOM_FOCUS_PRIORITY      100                      scale of the priority changes of focusing
WISDOM_STRUCTURE_GROWTH    1.5                      the site's link analysis (HITS) is redone when
                                                    the site has grown by this factor (and at idle)
WISDOM_HITS_MAX_ITER       100                      bound on HITS power iterations
WISDOM_FOLLOW_TOC_LINKS    False                    the item pipeline requests the links of every
                                                    TocItem (the site's informative paths), with
                                                    the spider's default callback, whatever links
                                                    the spider follows itself
WISDOM_SITEMAP             False                    build the site's sitemap (SMG) and emit a
                                                    SitemapItem at spider idle (on by itself
                                                    when WISDOM_SITEMAP_URI is set)
WISDOM_SITEMAP_URI         ``""``                   where the sitemap is written at spider close:
                                                    ``<uri>.xml`` (sitemaps.org) and ``<uri>.json``
                                                    (tree); a path or any URI Scrapy's feed
                                                    storages accept (``file://``, ``s3://`` …)
WISDOM_SITEMAP_LEVELS      2                        levels of the sitemap below the home page
WISDOM_REPORT_URI          None                     where the site report (self-contained HTML) is
                                                    written at spider close: a path or ``file://``
                                                    URI; None writes no file
WISDOM_CLEANER             ``wisdom``               the article cleaner: ``wisdom``, ``sst``,
                                                    ``cst``, ``infodiscoverer`` or ``template``
WISDOM_ITEM_FIELDS         derived (none)           which large item fields are filled: any of
                                                    ``html``, ``blocks``, ``features`` (the
                                                    others stay empty); by default none, and
                                                    ``features`` with the ``cst`` cleaner
WISDOM_STYLETREE_PAGES     500                      pages a site's style tree is built from
                                                    (the thesis's k, §5.3; later pages are cleaned)
WISDOM_TUNE_GC             True                     freeze what is alive at spider open, raise
                                                    the young-generation threshold, collect in
                                                    full every 32 responses (:mod:`.collector`)
WISDOM_WORKER_TIMEOUT      60.0                     seconds a worker may stay silent before it
                                                    is taken for dead: a distributed crawl's
                                                    (no heartbeat: its in-flight requests are
                                                    crawled again), a ``WISDOM_WORKERS`` process
                                                    (no answer: killed, its page left unanalysed)
WISDOM_WORKERS             0                        worker processes the page analyses run in
                                                    (:mod:`wisdom_scrapy.engine.offload`), off the
                                                    crawl's thread; ``"auto"``: one per core
                                                    but one, at most 4; 0: in the crawl process
=========================  =======================  =============================================
"""

from __future__ import annotations

import asyncio
import difflib
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.utils.misc import load_object
from scrapy.utils.project import data_path

from wisdom_scrapy.engine.worker_pool import default_workers
from wisdom_scrapy.items import HEAVY_FIELDS
from wisdom_scrapy.mining.wisdom import WisdomParams
from wisdom_scrapy.page.urls import host_key

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = [
    "DEFAULTS",
    "SettingsError",
    "WisdomSettings",
    "crawl_does_not_start",
    "default_store_uri",
]

logger = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    "WISDOM_ENABLED": True,
    "WISDOM_STORE_URI": None,  # default_store_uri()
    "WISDOM_STORE_BATCH_PAGES": 32,
    "WISDOM_SITE_KEY": "host",
    "WISDOM_KEEP_NUMBERS": False,
    "WISDOM_MAX_PAGE_BYTES": 10 * 1024 * 1024,
    "WISDOM_MAX_PAGE_NODES": 150_000,
    "WISDOM_WARMUP_PAGES": None,
    "WISDOM_KMIB_K": 1,
    "WISDOM_KMIB_ST": 0.8,
    "WISDOM_TC_TOC": None,
    "WISDOM_TC_ARTICLE": 0.8,
    "WISDOM_MERGE": "dstm,1-cstm",
    "WISDOM_TOC_TARGETS_RATIO": 0.5,
    "WISDOM_MAX_PENDING_TOCS": 50,
    "WISDOM_MAX_HELD_PAGES": 256,
    "WISDOM_SITE_HORIZON": 1024,
    "WISDOM_FOCUS": "drop",
    "WISDOM_FOCUS_MIN_PAGES": 5,
    "WISDOM_FOCUS_PRIORITY": 100,
    "WISDOM_STRUCTURE_GROWTH": 1.5,
    "WISDOM_HITS_MAX_ITER": 100,
    "WISDOM_FOLLOW_TOC_LINKS": False,
    "WISDOM_SITEMAP": False,
    "WISDOM_SITEMAP_URI": "",
    "WISDOM_SITEMAP_LEVELS": 2,
    "WISDOM_REPORT_URI": None,
    "WISDOM_CLEANER": "wisdom",
    "WISDOM_ITEM_FIELDS": None,  # derived from WISDOM_CLEANER, see _item_fields
    "WISDOM_STYLETREE_PAGES": 500,
    "WISDOM_TUNE_GC": True,
    "WISDOM_WORKER_TIMEOUT": 60.0,
    "WISDOM_WORKERS": 0,  # "auto": default_workers(), from the machine's cores
}

#: Values of ``WISDOM_FOCUS``.
FOCUS_POLICIES = ("drop", "deprioritize", "off")


def default_store_uri() -> str:
    """``sqlite:///`` + ``wisdom.db`` in the project data directory (``.scrapy/`` beside
    ``scrapy.cfg``; ``./.scrapy/`` outside a project), where Scrapy keeps its HTTP cache: data
    the crawl keeps between runs, out of the project's source files."""
    return "sqlite:///" + data_path("wisdom.db")


class SettingsError(ValueError):
    """A ``WISDOM_*`` setting has a value wisdom_scrapy cannot use; the message names it."""


def _check_names(settings: BaseSettings) -> None:
    """Every ``WISDOM_*`` name set must be one of :data:`DEFAULTS`: a misspelled one
    (``WISDOM_FOCSU``) would otherwise leave its setting at the default without a word. The
    error names it and the known setting closest to it (:func:`difflib.get_close_matches`)."""
    unknown = sorted(n for n in settings if str(n).startswith("WISDOM_") and n not in DEFAULTS)
    if not unknown:
        return
    prefix = len("WISDOM_")  # compared after it: the shared prefix made any name look close
    known = [name[prefix:] for name in DEFAULTS]
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name[prefix:], known, n=1, cutoff=0.6)
        hint = f": did you mean WISDOM_{close[0]}?" if close else ""
        parts.append(f"{name} is not a wisdom_scrapy setting{hint}")
    raise SettingsError("; ".join(parts) + " (every setting: docs/settings.md)")


def _get(settings: BaseSettings, name: str, kind: str) -> Any:
    """Read a typed setting, turning Scrapy's bare ValueError into one that names it."""
    getter = getattr(settings, f"get{kind}")
    try:
        return getter(name, DEFAULTS[name])
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"{name}={settings.get(name)!r} is not a valid {kind}: {exc}") from exc


def _positive(settings: BaseSettings, name: str, *, allow_zero: bool = False) -> int:
    value: int = _get(settings, name, "int")
    if value < 0 or (value == 0 and not allow_zero):
        raise SettingsError(
            f"{name}={value!r} must be a {'non-negative' if allow_zero else 'positive'} int"
        )
    return value


def _focus_policy(settings: BaseSettings) -> str:
    value = settings.get("WISDOM_FOCUS", DEFAULTS["WISDOM_FOCUS"])
    if value is False or value is None:
        return "off"
    policy = str(value).strip().lower()
    if policy not in FOCUS_POLICIES:
        raise SettingsError(
            f"WISDOM_FOCUS={value!r}: use one of {', '.join(repr(p) for p in FOCUS_POLICIES)}"
        )
    return policy


def _cleaner(settings: BaseSettings) -> str:
    from wisdom_scrapy.analysis.cleaners import CLEANERS

    value = settings.get("WISDOM_CLEANER", DEFAULTS["WISDOM_CLEANER"])
    name = str(value).strip().lower()
    if name not in CLEANERS:
        raise SettingsError(
            f"WISDOM_CLEANER={value!r}: use one of {', '.join(repr(c) for c in CLEANERS)}"
        )
    return name


def _item_fields(settings: BaseSettings, cleaner: str) -> frozenset[str]:
    """WISDOM_ITEM_FIELDS: the large item fields to fill. The default keeps the feed lean: the
    text, title, metadata, links and figures a reader or an index needs, not the article's HTML
    (as large again as its text), the block diagnostics (``scrapy wisdom-show`` and the report
    show them) or the term vector (``extract_terms(text)`` rebuilds it) — except the ``cst``
    cleaner's weighted vector, which is that cleaner's product."""
    if settings.get("WISDOM_ITEM_FIELDS") is None:
        return frozenset({"features"} if cleaner == "cst" else ())
    try:
        names = {str(n).strip().lower() for n in settings.getlist("WISDOM_ITEM_FIELDS")} - {""}
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"WISDOM_ITEM_FIELDS={settings.get('WISDOM_ITEM_FIELDS')!r}: "
                            f"{exc}") from exc  # fmt: skip
    unknown = sorted(names - HEAVY_FIELDS)
    if unknown:
        raise SettingsError(
            f"WISDOM_ITEM_FIELDS: unknown field(s) {', '.join(unknown)}; choose among "
            f"{', '.join(sorted(HEAVY_FIELDS))}"
        )
    return frozenset(names)


def _growth(settings: BaseSettings) -> float:
    value: float = _get(settings, "WISDOM_STRUCTURE_GROWTH", "float")
    if not value > 1.0:
        raise SettingsError(f"WISDOM_STRUCTURE_GROWTH={value!r} must be greater than 1")
    return value


def _sitemap(settings: BaseSettings) -> dict[str, Any]:
    """WISDOM_SITEMAP, WISDOM_SITEMAP_URI (a URI turns the sitemap on), WISDOM_SITEMAP_LEVELS."""
    uri = settings.get("WISDOM_SITEMAP_URI") or ""
    if not isinstance(uri, str):
        raise SettingsError(f"WISDOM_SITEMAP_URI={uri!r} must be a path or URI string")
    uri = uri.strip()
    if uri.endswith(("/", "\\")):
        raise SettingsError(
            f"WISDOM_SITEMAP_URI={uri!r} names a folder; name the files' stem (…/sitemap)"
        )
    sitemap = bool(uri) or _get(settings, "WISDOM_SITEMAP", "bool")
    if sitemap and not sitemap_available():
        name = "WISDOM_SITEMAP_URI" if uri else "WISDOM_SITEMAP"
        raise SettingsError(f"{name} turns the sitemap on, which needs parasail, an optional"
                            " dependency: pip install 'wisdom_scrapy[sitemap]'")  # fmt: skip
    return {
        "sitemap": sitemap,
        "sitemap_uri": uri,
        "sitemap_levels": _positive(settings, "WISDOM_SITEMAP_LEVELS"),
    }


def sitemap_available() -> bool:
    """Whether parasail (the ``sitemap`` extra: its block alignment) can be imported. Asked at
    the crawl's start, so that a crawl with the sitemap on stops there, naming the extra,
    rather than failing at its first sitemap after hours of crawling."""
    try:
        return importlib.util.find_spec("parasail") is not None
    except ImportError:
        return False
def _report_uri(settings: BaseSettings) -> str:
    """WISDOM_REPORT_URI: "" (no report), a file path or a ``file://`` URI."""
    value = settings.get("WISDOM_REPORT_URI")
    if value is None or value == "":
        return ""
    text = str(value)
    parts = urlsplit(text) if "://" in text else None
    if parts is not None and (
        parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost") or not parts.path
    ):
        raise SettingsError(
            f"WISDOM_REPORT_URI={value!r}: use a file path or a file:///absolute/path URI (the "
            "report is one HTML file)"
        )
    return text


def _worker_timeout(settings: BaseSettings) -> float:
    value: float = _get(settings, "WISDOM_WORKER_TIMEOUT", "float")
    if not value >= 1.0:
        raise SettingsError(f"WISDOM_WORKER_TIMEOUT={value!r} must be at least 1 (seconds)")
    return value


def _workers(settings: BaseSettings) -> int:
    """``WISDOM_WORKERS``: 0 by default, while the crawl process still models every page for
    the feed (a worker takes the analysis off it, not the modelling: see docs/settings.md);
    ``"auto"`` derives it from the machine's cores."""
    if str(settings.get("WISDOM_WORKERS", 0)).strip().lower() == "auto":
        return default_workers()
    try:
        return _positive(settings, "WISDOM_WORKERS", allow_zero=True)
    except SettingsError as exc:
        raise SettingsError(f'{exc}, or "auto"') from exc


def _optional_float(settings: BaseSettings, name: str) -> float | None:
    return None if settings.get(name) is None else float(_get(settings, name, "float"))


def _wisdom_params(settings: BaseSettings) -> WisdomParams:
    """WISDOM's parameters; WISDOM_WARMUP_PAGES, when set, is also the analysis' warm line."""
    values = {
        "WISDOM_KMIB_K": _get(settings, "WISDOM_KMIB_K", "int"),
        "WISDOM_KMIB_ST": _get(settings, "WISDOM_KMIB_ST", "float"),
        "WISDOM_TC_TOC": _optional_float(settings, "WISDOM_TC_TOC"),
        "WISDOM_TC_ARTICLE": _get(settings, "WISDOM_TC_ARTICLE", "float"),
        "WISDOM_MERGE": str(settings.get("WISDOM_MERGE", DEFAULTS["WISDOM_MERGE"])),
    }
    warmup = None
    if settings.get("WISDOM_WARMUP_PAGES") is not None:  # validated alone: the error names it
        warmup = _positive(settings, "WISDOM_WARMUP_PAGES", allow_zero=True)
    try:
        return WisdomParams(
            k=values["WISDOM_KMIB_K"],
            st=values["WISDOM_KMIB_ST"],
            tc_toc=values["WISDOM_TC_TOC"],
            tc_article=values["WISDOM_TC_ARTICLE"],
            merge=values["WISDOM_MERGE"],
            min_pages=None if warmup is None else max(warmup, 2),
        )
    except (TypeError, ValueError) as exc:
        shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
        raise SettingsError(f"invalid WISDOM parameters ({shown}): {exc}") from exc


def _site_key_function(value: Any) -> Callable[[str], str]:
    if value == "host":
        return host_key
    if callable(value):
        return value
    try:
        func = load_object(value)
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        raise SettingsError(
            f"WISDOM_SITE_KEY={value!r}: use 'host' or the import path of a function url -> str"
            f" ({exc})"
        ) from exc
    if not callable(func):
        raise SettingsError(f"WISDOM_SITE_KEY={value!r} does not name a callable")
    return func


@dataclass(frozen=True, slots=True)
class WisdomSettings:
    """The validated ``WISDOM_*`` settings of one crawl (see the module docstring)."""

    enabled: bool
    store_uri: str
    store_batch_pages: int
    site_key: Callable[[str], str]
    keep_numbers: bool
    max_page_bytes: int
    max_page_nodes: int
    warmup_pages: int
    wisdom: WisdomParams
    toc_targets_ratio: float
    max_pending_tocs: int
    max_held_pages: int = 256
    site_horizon: int = 1024
    focus: str = "drop"
    focus_min_pages: int = 5
    focus_priority: int = 100
    structure_growth: float = 1.5
    hits_max_iter: int = 100
    follow_toc_links: bool = False
    sitemap: bool = False
    sitemap_uri: str = ""
    sitemap_levels: int = 2
    report_uri: str = ""
    cleaner: str = "wisdom"
    item_fields: frozenset[str] = frozenset()
    styletree_pages: int = 500
    tune_gc: bool = True
    worker_timeout: float = 60.0
    workers: int = 0
    #: WISDOM_WARMUP_PAGES not set: a site's pages are held only until its template shows
    warmup_derived: bool = True

    @classmethod
    def for_crawl(cls, settings: BaseSettings) -> WisdomSettings:
        """:meth:`from_settings` for a crawler being built: a :class:`SettingsError` is logged
        as one ERROR line ("the crawl does not start") and then raised as ever (Scrapy counts
        the crawl as failed: exit code 1), without asyncio logging it a second time as "Task
        exception was never retrieved" with the traceback of Scrapy's start-up."""
        try:
            return cls.from_settings(settings)
        except SettingsError as exc:
            crawl_does_not_start(exc)
            raise

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> WisdomSettings:
        _check_names(settings)
        store_uri = settings.get("WISDOM_STORE_URI")
        if store_uri is None:
            store_uri = default_store_uri()
        if not isinstance(store_uri, str) or ":" not in store_uri:
            raise SettingsError(
                f"WISDOM_STORE_URI={store_uri!r}: expected memory://, sqlite:///path or "
                "redis://host:port/db"
            )
        ratio = _get(settings, "WISDOM_TOC_TARGETS_RATIO", "float")
        if not 0.0 <= ratio <= 1.0:
            raise SettingsError(f"WISDOM_TOC_TARGETS_RATIO={ratio!r} must be between 0 and 1")
        wisdom = _wisdom_params(settings)
        warmup = wisdom.warm_pages
        if settings.get("WISDOM_WARMUP_PAGES") is not None:
            warmup = _positive(settings, "WISDOM_WARMUP_PAGES", allow_zero=True)
        return cls(
            enabled=_get(settings, "WISDOM_ENABLED", "bool"),
            store_uri=store_uri,
            store_batch_pages=_positive(settings, "WISDOM_STORE_BATCH_PAGES"),
            site_key=_site_key_function(settings.get("WISDOM_SITE_KEY", "host")),
            keep_numbers=_get(settings, "WISDOM_KEEP_NUMBERS", "bool"),
            max_page_bytes=_positive(settings, "WISDOM_MAX_PAGE_BYTES"),
            max_page_nodes=_positive(settings, "WISDOM_MAX_PAGE_NODES"),
            warmup_pages=warmup,
            warmup_derived=settings.get("WISDOM_WARMUP_PAGES") is None,
            wisdom=wisdom,
            toc_targets_ratio=ratio,
            max_pending_tocs=_positive(settings, "WISDOM_MAX_PENDING_TOCS", allow_zero=True),
            max_held_pages=_positive(settings, "WISDOM_MAX_HELD_PAGES", allow_zero=True),
            site_horizon=_positive(settings, "WISDOM_SITE_HORIZON", allow_zero=True),
            focus=_focus_policy(settings),
            focus_min_pages=_positive(settings, "WISDOM_FOCUS_MIN_PAGES"),
            focus_priority=_positive(settings, "WISDOM_FOCUS_PRIORITY", allow_zero=True),
            structure_growth=_growth(settings),
            hits_max_iter=_positive(settings, "WISDOM_HITS_MAX_ITER"),
            follow_toc_links=_get(settings, "WISDOM_FOLLOW_TOC_LINKS", "bool"),
            **_sitemap(settings),
            report_uri=_report_uri(settings),
            cleaner=(cleaner := _cleaner(settings)),
            item_fields=_item_fields(settings, cleaner),
            styletree_pages=_positive(settings, "WISDOM_STYLETREE_PAGES"),
            tune_gc=_get(settings, "WISDOM_TUNE_GC", "bool"),
            worker_timeout=_worker_timeout(settings),
            workers=_workers(settings),
        )


#: set on an exception :func:`crawl_does_not_start` logged, and on the loop handler that skips it
_LOGGED = "_wisdom_logged_as_not_starting"


def crawl_does_not_start(exc: BaseException) -> None:
    """Log a setting's error (the message names the setting) as the one line that says why the
    crawl does not start, before ``exc`` is raised out of a component's ``from_crawler``; the
    running asyncio loop (Scrapy's, when a crawler is built inside it) then does not log it
    again as an unretrieved task exception with Scrapy's start-up traceback. Every other
    exception goes to the loop's handler as before. The exception is marked, not held: one
    handler per loop skips every marked exception, so a long-lived loop whose crawls fail
    again and again neither chains handlers nor keeps the failed crawlers alive."""
    logger.error("wisdom_scrapy: %s; the crawl does not start", exc)
    setattr(exc, _LOGGED, True)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop (a crawler built outside one): nothing logs it twice
        return
    previous = loop.get_exception_handler()
    if getattr(previous, _LOGGED, False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if getattr(context.get("exception"), _LOGGED, False):
            return
        if previous is None:
            loop.default_exception_handler(context)
        else:
            previous(loop, context)

    setattr(handler, _LOGGED, True)
    loop.set_exception_handler(handler)
