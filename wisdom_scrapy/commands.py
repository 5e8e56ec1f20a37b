"""Scrapy commands ``wisdom-show``, ``wisdom-report``, ``wisdom-stats``, ``wisdom-parse`` and
``wisdom-settings``.

They are registered through the package's entry points (``[project.entry-points."scrapy.commands"]``
in ``pyproject.toml``; Scrapy loads every command of that group), so any project — or no project
at all — where wisdom_scrapy is installed has them. Each reads the store from ``--store`` or the
project's ``WISDOM_STORE_URI`` and prints what it wrote; none opens a browser.

``wisdom-parse`` is Scrapy's ``parse`` printing the cleaned items when wisdom_scrapy runs in
the crawl (:mod:`wisdom_scrapy.contracts`); Scrapy's own ``parse`` is left as it is and prints
what the callback yields. ``wisdom-settings`` is Scrapy's ``settings`` showing the values a
crawl uses, the project's add-ons applied (the ``WISDOM_*`` defaults, ``DOWNLOAD_MAXSIZE``,
``LOG_FORMATTER`` …), which Scrapy's command, creating no crawler, leaves out (see
:class:`SettingsCommand`). No Scrapy command is replaced: Scrapy's own stay as they are.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.addons import AddonManager
from scrapy.commands import ScrapyCommand, ScrapyHelpFormatter, fetch, parse
from scrapy.commands import settings as settings_command
from scrapy.exceptions import UsageError
from scrapy.http import HtmlResponse
from scrapy.utils.conf import arglist_to_dict
from scrapy.utils.project import data_path

if TYPE_CHECKING:
    from scrapy.http import Response

    from wisdom_scrapy.settings import WisdomSettings
    from wisdom_scrapy.store import TermStore

__all__ = [
    "HelpFormatter",
    "ParseCommand",
    "ReportCommand",
    "SettingsCommand",
    "ShowCommand",
    "StatsCommand",
]


class HelpFormatter(ScrapyHelpFormatter):
    """Scrapy's help formatter, without its mistake: Scrapy makes a section heading of every
    part of the help that ends with a colon, so an option's help wrapped right after
    "default:" came out title-cased and underlined. Here only a part that starts a line,
    unindented (argparse's own "options:" …), can be a heading; an option's help lines are
    indented or follow the option on its line."""

    def format_part_strings(self, part_strings: list[str]) -> list[str]:
        held = {
            i: part
            for i, part in enumerate(part_strings)
            if part[:1].isspace() or (i and not part_strings[i - 1].endswith("\n"))
        }
        marked = [f"\0{i}" if i in held else part for i, part in enumerate(part_strings)]
        done = super().format_part_strings(marked)
        return [held[int(part[1:])] if part.startswith("\0") else part for part in done]


def _add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = HelpFormatter  # every wisdom command has this option
    parser.add_argument(
        "--store",
        metavar="URI",
        help="term-entropy store to read (memory://, sqlite:///path, redis://host:port/db); "
        "default: the project's WISDOM_STORE_URI",
    )


def _wisdom_settings(command: ScrapyCommand) -> WisdomSettings:
    from wisdom_scrapy.settings import SettingsError, WisdomSettings

    assert command.settings is not None
    try:
        return WisdomSettings.from_settings(command.settings)
    except SettingsError as exc:
        raise UsageError(str(exc), print_help=False) from exc


def _open(command: ScrapyCommand, opts: argparse.Namespace) -> TermStore:
    """The store the command reads; never a new one (a command must not leave a store file
    behind where there was none, e.g. after a typo in ``--store``)."""
    from wisdom_scrapy.store import StoreError, open_store

    uri = opts.store or _wisdom_settings(command).store_uri
    try:
        return open_store(uri, create=False)
    except StoreError as exc:
        raise UsageError(f"--store / WISDOM_STORE_URI: {exc}", print_help=False) from exc


def _not_a_page(body: bytes, text: str | None, limit: int) -> str:
    """Why the crawl would skip this body instead of analysing it ("" when it would not):
    ``wisdom-show`` refuses what the crawl skips rather than show it as a page. ``limit``:
    ``WISDOM_MAX_PAGE_BYTES``."""
    from wisdom_scrapy.page.parse import looks_binary

    if len(body) > limit:
        return f"is larger than WISDOM_MAX_PAGE_BYTES ({len(body):,} > {limit:,} bytes)"
    if not body.strip():
        return "is empty"
    if looks_binary(body, text):
        return "is not an HTML page (binary content)"
    return ""


def _sites(store: TermStore, wanted: list[str] | None) -> list[str]:
    known = store.sites()
    if not wanted:
        return known
    missing = [s for s in wanted if s not in known]
    if missing:
        raise UsageError(
            f"--site {', '.join(missing)}: not in the store (it knows: "
            f"{', '.join(known) or 'no site'})",
            print_help=False,
        )
    return wanted


class ShowCommand(fetch.Command):
    """``scrapy wisdom-show URL|FILE``: the annotated view of one page (see
    :mod:`wisdom_scrapy.analysis.annotated`)."""

    requires_project = False

    def syntax(self) -> str:
        return "[options] <url|file>"

    def short_desc(self) -> str:
        return "Write the annotated view of a page (blocks outlined by role) as HTML"

    def long_desc(self) -> str:
        return (
            "Analyse one page with its site's term entropies from the store and write an HTML "
            "file showing the page with its blocks outlined and coloured by role (article, TOC, "
            "metadata, redundant), each block's figures (CII, API, SII, entropy) on hover, and "
            "the text no cleaned item keeps struck out. A URL is downloaded with Scrapy's "
            "downloader and the project's settings (like 'scrapy fetch'; the page is not added "
            "to the store); a FILE is read from disk. The file loads nothing external. Prints "
            "the path of the file written; opens nothing."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        from wisdom_scrapy.analysis.cleaners import CLEANERS

        super().add_options(parser)
        parser.add_argument("--headers", help=argparse.SUPPRESS)
        _add_store_option(parser)
        parser.add_argument(
            "--url",
            metavar="URL",
            help="with a FILE: the URL the page was served from (resolves its links and "
            "names its site); default: the file:// URI of the file",
        )
        parser.add_argument(
            "--site",
            metavar="KEY",
            help="the site key in the store whose entropies to use; default: the page URL's "
            "site (WISDOM_SITE_KEY), or for a FILE without --url the store's only site",
        )
        parser.add_argument(
            "-o",
            "--output",
            metavar="PATH",
            help="HTML file to write; default: wisdom-view-<hash of the URL>.html in the "
            "project data directory (.scrapy/)",
        )
        parser.add_argument(
            "--cleaner",
            choices=sorted(CLEANERS),
            help="the cleaner whose removals are struck out (its state learned by the crawl is "
            "read from the store); default: the project's WISDOM_CLEANER",
        )
        parser.add_argument(
            "--encoding",
            metavar="NAME",
            help="with a FILE: its character encoding; default: detected from the file",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        # the page is fetched to be shown, not learned from: keep wisdom_scrapy's components off,
        # and nothing the project's crawls write (feeds, pipelines, job state) is opened
        for name, value in (("WISDOM_ENABLED", False), ("FEEDS", {}), ("ITEM_PIPELINES", {}),
                            ("JOBDIR", None)):
            self.settings.set(name, value, priority="cmdline")
        if not (opts.loglevel or opts.nolog or "LOG_LEVEL" in dict(arglist_to_dict(opts.set))):
            # only errors: the crawl's INFO lines and the "Disabled …" notices are noise here
            self.settings.set("LOG_LEVEL", "ERROR", priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError
        target = args[0]
        path = Path(target)
        if path.is_file():
            url = opts.url or path.resolve().as_uri()
            body = path.read_bytes()
            problem = _not_a_page(body, None, _wisdom_settings(self).max_page_bytes)
            if problem:
                raise UsageError(f"{target} {problem}; nothing written", print_help=False)
            self._show(body, url, opts, encoding=opts.encoding)
            return
        if urlsplit(target).scheme not in ("http", "https", "file", "data"):
            raise UsageError(f"{target!r} is neither a file nor a URL", print_help=False)
        self.shown: Path | None = None
        super().run(args, opts)
        if self.shown is None and not self.exitcode:
            print(f"error: {target} was not fetched; nothing written (see the log)",
                  file=sys.stderr)  # fmt: skip
            self.exitcode = 1

    def _print_response(self, response: Response, opts: argparse.Namespace) -> None:
        if response.status >= 400:
            problem = f"answered HTTP {response.status}"
        elif not isinstance(response, HtmlResponse):  # the crawl skips it too (not_html)
            problem = "is not an HTML page"
        else:
            limit = _wisdom_settings(self).max_page_bytes
            problem = _not_a_page(response.body, response.text, limit)
        if problem:
            print(f"error: {response.url} {problem}; nothing written", file=sys.stderr)
            self.exitcode = 1
            return
        assert isinstance(response, HtmlResponse)
        self._show(response.body, response.url, opts, encoding=response.encoding)

    def _show(
        self, body: bytes, url: str, opts: argparse.Namespace, *, encoding: str | None
    ) -> None:
        from wisdom_scrapy.analysis.annotated import page_view
        from wisdom_scrapy.engine.cleaning import Cleaners

        ws = _wisdom_settings(self)
        store = _open(self, opts)
        try:
            site = opts.site
            if site:
                _sites(store, [site])  # a clear error for a site the store does not know
            elif url.startswith("file:") and not opts.url:
                known = store.sites()
                if len(known) != 1:
                    raise UsageError(
                        "a FILE needs --url or --site when the store does not hold exactly one "
                        f"site (it holds: {', '.join(known) or 'none'})",
                        print_help=False,
                    )
                site = known[0]
            else:
                site = ws.site_key(url)
            cleaners = Cleaners(
                opts.cleaner or ws.cleaner, store, sample_pages=ws.styletree_pages
            )
            html = page_view(
                body, url, store, site=site, encoding=encoding,
                analyze=cleaners.analyzer(ws.wisdom), cleaner=cleaners.name,
                max_chars=ws.max_page_bytes,
            )
        finally:
            store.close()
        digest = hashlib.sha1(url.encode()).hexdigest()[:10]
        # by default beside the site report, in Scrapy's project data directory (.scrapy/ by
        # scrapy.cfg; ./.scrapy/ outside a project): not among the project's source files
        out = Path(opts.output or data_path(f"wisdom-view-{digest}.html"))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(html, encoding="utf-8")
        self.shown = out.resolve()
        print(self.shown)


class ParseCommand(parse.Command):
    """``scrapy wisdom-parse``: Scrapy's ``parse``, printing the cleaned items of the pages the
    callback yields (analysed at once with what the store knows) when wisdom_scrapy's
    components are in the crawl. A command of its own name: Scrapy's ``parse`` shows what the
    callback yields, which a spider's author debugging the callback may want to see."""

    def short_desc(self) -> str:
        return "Parse URL with its spider's callback and print the cleaned items (wisdom_scrapy)"

    def run_callback(self, response: Response, callback: Any,
                     cb_kwargs: dict[str, Any] | None = None) -> Any:  # fmt: skip
        from wisdom_scrapy.contracts import cleaned_callback

        return super().run_callback(response, cleaned_callback(callback), cb_kwargs)


class SettingsCommand(settings_command.Command):
    """``scrapy wisdom-settings``: Scrapy's ``settings`` showing the values a crawl of the
    project uses, the project's add-ons applied as a crawl applies them.

    Scrapy's command prints the project's settings before any add-on ran (add-ons apply when a
    crawler is built: Scrapy issue #7010, a fix proposed in Scrapy PR #7828), so there
    ``--get DOWNLOAD_MAXSIZE`` prints 1 GiB and ``--get LOG_FORMATTER`` Scrapy's formatter while
    every crawl with the add-on uses 10 MiB and :class:`~wisdom_scrapy.logformatter.
    WisdomLogFormatter`. A command of its own rather than Scrapy's replaced: a package that
    replaces a Scrapy command changes it for every project it is installed in, and two packages
    doing so would fight over the name. The change is the one Scrapy's fix makes, through
    Scrapy's public add-on API in a crawl's order: :meth:`AddonManager.load_pre_crawler_settings`
    (what ``CrawlerProcess`` does), then a :class:`~scrapy.crawler.Crawler` of the base
    ``Spider`` and its ``crawler.addons.load_settings`` (what ``Crawler.crawl`` does first); no
    spider's ``custom_settings`` (no spider is named)."""

    def short_desc(self) -> str:
        return "Get settings values as a crawl uses them, the project's add-ons applied"

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from scrapy import Spider
        from scrapy.crawler import Crawler

        assert self.settings is not None
        AddonManager.load_pre_crawler_settings(self.settings)
        crawler = Crawler(Spider, self.settings)  # a copy of the settings, as a crawl's
        crawler.addons.load_settings(crawler.settings)
        self.settings = crawler.settings
        super().run(args, opts)


class _StoreCommand(ScrapyCommand):
    """A command over the sites of a store: ``--store`` and ``--site``, no positional argument,
    no crawl (so it runs in any folder, in a project or not)."""

    requires_project = False
    requires_crawler_process = False

    def syntax(self) -> str:
        return "[options]"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        _add_store_option(parser)
        parser.add_argument(
            "--site",
            action="append",
            metavar="KEY",
            help="only this site of the store (repeat for several); default: every site",
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}")
        store = _open(self, opts)
        try:
            self.run_on(store, _sites(store, opts.site), opts)
        finally:
            store.close()

    def run_on(self, store: TermStore, sites: list[str], opts: argparse.Namespace) -> None:
        raise NotImplementedError


class ReportCommand(_StoreCommand):
    """``scrapy wisdom-report``: the site report rebuilt from a store (see
    :mod:`wisdom_scrapy.report`)."""

    def short_desc(self) -> str:
        return "Rebuild the site report (self-contained HTML) from a store"

    def long_desc(self) -> str:
        return (
            "Write the site report of the store's sites as one self-contained HTML file: the "
            "informative structure (TOC pages -> article pages, as an SVG graph), the sitemap "
            "tree, the most redundant blocks, entropy histograms and the last crawl's figures. "
            "The structure, sitemap, blocks and figures are those the last crawl with "
            "wisdom_scrapy stored; the entropies and sizes are read from the store now. "
            "Prints the path of the file written."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "-o",
            "--output",
            metavar="PATH",
            help="HTML file to write; default: the project's WISDOM_REPORT_URI, else "
            "wisdom-report.html in the project data directory (.scrapy/)",
        )

    def run_on(self, store: TermStore, sites: list[str], opts: argparse.Namespace) -> None:
        from wisdom_scrapy.report import load_report_data, render_report, write_report

        uri = opts.output or _wisdom_settings(self).report_uri or data_path("wisdom-report.html")
        html = render_report([load_report_data(store, site) for site in sites], store)
        print(write_report(uri, html).resolve())


class StatsCommand(_StoreCommand):
    """``scrapy wisdom-stats``: what a store holds, per site."""

    def short_desc(self) -> str:
        return "List the store's sites with their pages, vocabulary and links"

    def long_desc(self) -> str:
        return (
            "Print one line per site of the term-entropy store: pages stored, vocabulary "
            "(distinct terms), links in the link graph, mean term entropy, and whether a crawl "
            "stored report data for it (what 'scrapy wisdom-report' draws)."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--json",
            action="store_true",
            help="print one JSON object per site instead of a table",
        )

    def run_on(self, store: TermStore, sites: list[str], opts: argparse.Namespace) -> None:
        rows = [site_stats(store, site) for site in sites]
        if opts.json:
            for row in rows:
                print(json.dumps(row))
            return
        print(f"{'site':<32} {'pages':>8} {'vocabulary':>11} {'links':>9} {'mean H':>7} report")
        for r in rows:
            print(
                f"{r['site']:<32} {r['pages']:>8} {r['vocabulary']:>11} {r['links']:>9} "
                f"{r['mean_entropy']:>7.3f} {'yes' if r['report'] else 'no'}"
            )
        if not rows:
            print("(no site in the store)")


def site_stats(store: TermStore, site: str) -> dict[str, Any]:
    """Pages, vocabulary, links, mean term entropy and report presence of one site."""
    from wisdom_scrapy.report import load_report_data

    snapshot = store.snapshot(site)
    terms = snapshot.n_terms  # the snapshot's values leave out the terms of entropy 0
    return {
        "site": site,
        "pages": snapshot.n_pages,
        "vocabulary": terms,
        "links": store.link_count(site),
        "mean_entropy": round(sum(snapshot.values.values()) / terms, 6) if terms else 0.0,
        "report": bool(load_report_data(store, site).pages_analysed),
    }
