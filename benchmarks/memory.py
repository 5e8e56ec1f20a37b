"""Memory benchmark: peak RSS of a long crawl against the number of pages crawled.

Serves Debian documentation sites on 127.0.0.1, each copy on its own port (so each copy is a
site of its own, as several sites of one crawl are), and crawls all of them in one
``scrapy crawl site`` subprocess with the project's settings (the add-on on, a fresh SQLite
store). :class:`MemorySampler`, a Scrapy extension inside the crawl, samples the process' resident
set size (``VmRSS``) and its peak (``VmHWM``) from ``/proc/self/status`` every ``--every`` HTML
responses, and writes the samples with the crawl's stats when the engine stops.

It reports RSS at checkpoints against pages crawled, the peak, and the growth per 1,000 pages
after warm-up (least squares over the samples past the first ``--warmup`` pages), beside the
store's file size. ``--baseline`` also runs the same crawl with the extension off
(``-s ADDONS={}``), whose growth is Scrapy's own (duplicate filter, scheduler, stats).

::

    python benchmarks/memory.py                                 # pydoc:1,django:2,postgres:3
    python benchmarks/memory.py --sites pydoc:1 --every 50      # a quick run (530 pages)
    python benchmarks/memory.py --baseline --json memory.json
    python benchmarks/memory.py --endless 5000 --baseline     # a generated site, 5,000 pages
    python benchmarks/memory.py --broad 400 --baseline        # 400 generated sites: per site

``--endless N`` crawls, instead of the documentation sites, an endless site generated on the fly
(:class:`EndlessSite`): every page a templated article with new terms and links to pages never
seen, so nothing stops growing but the crawl; the crawl ends after N responses
(``CLOSESPIDER_PAGECOUNT``).

``--broad K`` crawls K endless sites, each on its own port with words of its own beside the
common ones, to depth 1 (``DEPTH_LIMIT=1``: each site's start page and the ~14 pages it links
to), as a broad crawl meets many sites a few pages each; besides the growth per 1,000 pages it
reports the growth per site (least squares of RSS over the sites seen, past ``--warmup`` pages).

The documentation packages are installed by ``--install`` (``apt-get install python3.11-doc
python-django-doc postgresql-doc-15``) when missing.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import REPO_ROOT, environment, markdown_table, write_json
else:
    from ._common import REPO_ROOT, environment, markdown_table, write_json

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse

#: name -> (Debian package, served directory, start page)
SITES = {
    "pydoc": ("python3.11-doc", Path("/usr/share/doc/python3.11/html"), "index.html"),
    "django": ("python-django-doc", Path("/usr/share/doc/python-django-doc/html"), "index.html"),
    "postgres": ("postgresql-doc-15", Path("/usr/share/doc/postgresql-doc-15/html"), "index.html"),
}
SAMPLES_SETTING = "MEMORY_SAMPLES_FILE"
EVERY_SETTING = "MEMORY_SAMPLE_EVERY"


def _status_kib(field: str) -> int:
    """A ``/proc/self/status`` field in KiB (VmRSS: resident now, VmHWM: peak resident)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


class MemorySampler:
    """Scrapy extension: (HTML pages, responses, RSS, peak RSS, seconds) every N HTML pages.

    Enabled with ``-s EXTENSIONS='{"benchmarks.memory.MemorySampler": 0}'`` and
    ``-s MEMORY_SAMPLES_FILE=PATH``; writes ``{"samples": [...], "stats": {...}}`` at
    ``engine_stopped``.
    """

    def __init__(self, crawler: Any, path: str, every: int) -> None:
        self.crawler = crawler
        self.path = Path(path)
        self.every = every
        self.pages = self.responses = 0
        self.sites: set[str] = set()
        self.started = time.monotonic()
        self.samples: list[dict[str, float]] = []

    @classmethod
    def from_crawler(cls, crawler: Any) -> MemorySampler:
        path = crawler.settings.get(SAMPLES_SETTING)
        if not path:
            raise NotConfigured(f"{SAMPLES_SETTING} is not set")
        ext = cls(crawler, path, crawler.settings.getint(EVERY_SETTING, 100))
        crawler.signals.connect(ext.response_received, signal=signals.response_received)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        ext.sample()
        return ext

    def sample(self) -> None:
        self.samples.append({
            "pages": self.pages,
            "responses": self.responses,
            "sites": len(self.sites),
            "rss_mib": _status_kib("VmRSS") / 1024,
            "peak_mib": _status_kib("VmHWM") / 1024,
            "seconds": round(time.monotonic() - self.started, 1),
        })

    def response_received(self, response: Any) -> None:
        self.responses += 1
        if isinstance(response, HtmlResponse) and response.status == 200:
            self.pages += 1
            self.sites.add(urlsplit(response.url).netloc)
            if self.pages % self.every == 0:
                self.sample()

    def engine_stopped(self) -> None:
        self.sample()
        stats = self.crawler.stats.get_stats()
        self.path.write_text(json.dumps({"samples": self.samples, "stats": stats}, default=str))


_RNG = random.Random(0)
_WORDS = [  # the generated site's common words: letters only (digits are not terms)
    "".join(_RNG.choices("abcdefghijklmnopqrstuvwxyz", k=3 + i % 7)) for i in range(3000)
]


def _letters(n: int) -> str:
    """``n`` in base 26 with letters (a term of its own for every ``n``, no digits)."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out = "abcdefghijklmnopqrstuvwxyz"[r] + out
        if not n:
            return out


def endless_page(n: int, site: int = 0) -> bytes:
    """Page ``n`` of the endless site: a site template (menu, sidebar, footer) around an
    article of ~400 words drawn from a common vocabulary plus 8 terms of its own (the site's
    vocabulary grows forever), a list of links to pages ``3n+1 … 3n+3`` (new pages forever)
    and to 3 earlier ones, and a previous / next page turn. Sites of another ``site`` number
    have terms of their own too (a broad crawl's sites share common words, not all)."""
    rng = random.Random(n)
    prefix = f"zz{_letters(site)}q" if site else "zz"
    own = [f"{prefix}{_letters(8 * n + k)}" for k in range(8)]
    paragraphs = []
    for _ in range(6):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(50, 80))]
        words[rng.randrange(len(words))] = own[len(paragraphs)]
        paragraphs.append("<p>" + " ".join(words) + ".</p>")
    menu = "".join(f'<li><a href="/section/{k}.html">Section {_WORDS[k]}</a></li>'
                   for k in range(8))
    children = "".join(f'<li><a href="/a/{c}.html">{" ".join(rng.sample(_WORDS, 4))} '
                       f'{own[6 + c % 2]}</a></li>' for c in range(3 * n + 1, 3 * n + 4))
    earlier = "".join(f'<li><a href="/a/{rng.randrange(n)}.html">{rng.choice(_WORDS)}</a></li>'
                      for _ in range(3 if n else 0))
    title = " ".join(rng.sample(_WORDS, 5)) + " " + own[0]
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>{title} - Endless</title>"
        f"</head><body><header><a href='/'>Endless</a><nav><ul>{menu}</ul></nav></header>"
        f"<main><article><h1>{title}</h1><p class=meta>by {rng.choice(_WORDS)} on day {n}</p>"
        f"{''.join(paragraphs)}<h2>Read next</h2><ul class=related>{children}</ul>"
        f"<h2>From the archive</h2><ul>{earlier}</ul></article>"
        f"<div class=pager><a rel=prev href='/a/{max(n - 1, 0)}.html'>Previous</a> "
        f"<a rel=next href='/a/{n + 1}.html'>Next</a></div></main>"
        f"<aside><h2>About</h2><p>{' '.join(_WORDS[100:140])}</p></aside>"
        f"<footer><p>Copyright Endless</p><a href='/about.html'>About</a> "
        f"<a href='/contact.html'>Contact</a></footer></body></html>"
    ).encode()


class _EndlessHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    site = 0  # set per server (EndlessSite)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/":
            path = "/a/0.html"
        name = path.rsplit("/", 1)[-1].removesuffix(".html")
        n = int(name) if name.isdigit() else 0
        body = endless_page(n if path.startswith("/a/") else 10**9 + n + len(path), self.site)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class EndlessSite:
    """An endless site generated on the fly on 127.0.0.1 (:func:`endless_page`), in a thread;
    a context manager whose value is the start URL. ``site``: which site's own terms."""

    def __init__(self, site: int = 0) -> None:
        self.site = site

    def __enter__(self) -> str:
        handler = type("_Handler", (_EndlessHandler,), {"site": self.site})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_port}/a/0.html"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def close_all(sites: list[EndlessSite]) -> None:
    """Stop the sites' servers at once: each takes up to its poll interval (0.5 s) to stop,
    which one after the other made a 400-site run wait minutes at its end."""
    with ThreadPoolExecutor(max_workers=64) as pool:
        list(pool.map(lambda site: site.__exit__(None, None, None), sites))


def ensure_installed(names: list[str], install: bool) -> None:
    missing = [SITES[n][0] for n in names if not SITES[n][1].is_dir()]
    if not missing:
        return
    if not install:
        raise SystemExit(f"missing {', '.join(missing)}: rerun with --install (apt-get install)")
    subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True)


def parse_sites(spec: str) -> list[str]:
    """``pydoc:3,django:2`` -> one name per served copy."""
    names = []
    for part in spec.split(","):
        name, _, count = part.strip().partition(":")
        if name not in SITES:
            raise SystemExit(f"--sites: unknown site {name!r} (known: {', '.join(SITES)})")
        names += [name] * int(count or 1)
    return names


def crawl(urls_file: Path, out: Path, label: str, every: int, extra: list[str]) -> dict[str, Any]:
    samples = out / f"{label}.json"
    cmd = [
        sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"urls={urls_file}",
        "-s", f"WISDOM_STORE_URI=sqlite:///{out / f'{label}.db'}",
        "-s", 'EXTENSIONS={"benchmarks.memory.MemorySampler": 0}',
        "-s", f"{SAMPLES_SETTING}={samples}", "-s", f"{EVERY_SETTING}={every}",
        "-s", "LOG_LEVEL=INFO", "-s", "LOGSTATS_INTERVAL=600", *extra,
    ]  # fmt: skip
    print("$", " ".join(cmd), file=sys.stderr)
    with (out / f"{label}.log").open("wb") as log:
        done = subprocess.run(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                              check=False)
    if done.returncode or not samples.exists():
        tail = (out / f"{label}.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"{label} crawl failed ({done.returncode}):\n{tail}")
    data: dict[str, Any] = json.loads(samples.read_text())
    db = out / f"{label}.db"
    data["store_mib"] = db.stat().st_size / 2**20 if db.exists() else 0.0
    return data


def growth_per_1000(samples: list[dict[str, float]], warmup: int, per: str = "pages") -> float:
    """Least-squares slope of RSS (MiB) per 1,000 pages (or ``per`` sites) over the samples
    past ``warmup`` pages."""
    points = [(s[per], s["rss_mib"]) for s in samples if s["pages"] >= warmup]
    if len(points) < 2:
        return float("nan")
    n = len(points)
    mx = sum(p for p, _ in points) / n
    my = sum(r for _, r in points) / n
    var = sum((p - mx) ** 2 for p, _ in points)
    cov = sum((p - mx) * (r - my) for p, r in points)
    return 1000 * cov / var if var else float("nan")


def checkpoints(samples: list[dict[str, float]], marks: list[int]) -> list[dict[str, float]]:
    """The first sample at or past each mark (and the last sample)."""
    chosen = [next((s for s in samples if s["pages"] >= m), None) for m in marks]
    picked = [s for s in chosen if s is not None] + [samples[-1]]
    return list({s["pages"]: s for s in picked}.values())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", default="pydoc:1,django:2,postgres:3",
                        help="name:copies,... (each copy served on its own port)")
    parser.add_argument("--every", type=int, default=100, help="sample every N HTML pages")
    parser.add_argument("--warmup", type=int, default=1000, help="pages before the slope")
    parser.add_argument("--endless", type=int, metavar="N",
                        help="crawl a generated endless site for N pages instead of --sites")
    parser.add_argument("--broad", type=int, metavar="K",
                        help="crawl K generated sites (each an endless site on its own port) "
                             "to depth 1 instead of --sites: memory per site")
    parser.add_argument("--baseline", action="store_true", help="also crawl with ADDONS={}")
    parser.add_argument("--install", action="store_true", help="apt-get missing doc packages")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a Scrapy setting for the crawls (repeatable)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--keep", type=Path, help="keep logs, stores and samples here")
    args = parser.parse_args(argv)
    from wisdom_scrapy.testing import StaticServer

    names = [] if args.endless or args.broad else parse_sites(args.sites)
    ensure_installed(sorted(set(names)), args.install)
    extra = [a for value in args.set for a in ("-s", value)]
    with ExitStack() as stack:
        out = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        out.mkdir(parents=True, exist_ok=True)
        starts = []
        for name in names:
            server = stack.enter_context(StaticServer(SITES[name][1]))
            starts.append(server.url + SITES[name][2])
        if args.endless:
            args.sites = f"endless:{args.endless}"
            starts.append(stack.enter_context(EndlessSite()))
            extra += ["-s", f"CLOSESPIDER_PAGECOUNT={args.endless}"]
        if args.broad:
            args.sites = f"broad:{args.broad}"
            sites = [EndlessSite(k + 1) for k in range(args.broad)]
            starts += [site.__enter__() for site in sites]
            stack.callback(close_all, sites)
            extra += ["-s", "DEPTH_LIMIT=1"]
        urls_file = out / "start-urls.txt"
        urls_file.write_text("\n".join(starts) + "\n")
        runs = {"on": crawl(urls_file, out, "on", args.every, extra)}
        if args.baseline:
            runs["off"] = crawl(urls_file, out, "off", args.every, [*extra, "-s", "ADDONS={}"])
    report(runs, names, args)


def report(runs: dict[str, dict[str, Any]], names: list[str], args: argparse.Namespace) -> None:
    marks = [500, 1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000]
    rows, figures = [], {}
    for label, data in runs.items():
        samples = data["samples"]
        last = samples[-1]
        slope = growth_per_1000(samples, args.warmup)
        figures[label] = {
            "pages": last["pages"],
            "responses": last["responses"],
            "peak_rss_mib": round(last["peak_mib"], 1),
            "growth_mib_per_1000_pages": round(slope, 2),
            "sites": last.get("sites", 0),
            "growth_kib_per_site": round(1024 * growth_per_1000(samples, args.warmup, "sites")
                                         / 1000, 1),
            "store_mib": round(data["store_mib"], 1),
            "seconds": last["seconds"],
            "checkpoints": checkpoints(samples, marks),
            "wisdom_stats": {k: v for k, v in data["stats"].items() if k.startswith("wisdom/")},
        }
        for s in checkpoints(samples, marks):
            rows.append([label, int(s["pages"]), f"{s['rss_mib']:.0f}", f"{s['peak_mib']:.0f}",
                         f"{s['seconds']:.0f}"])
    print(f"sites: {args.sites} ({len(names)} served copies); samples every {args.every} pages\n")
    print(markdown_table(["crawl", "HTML pages", "RSS MiB", "peak RSS MiB", "seconds"], rows))
    print()
    print(markdown_table(
        ["crawl", "pages", "sites", "peak RSS MiB",
         f"growth MiB / 1000 pages (after {args.warmup})", "growth KiB / site",
         "store file MiB", "seconds"],
        [[k, f["pages"], f["sites"], f["peak_rss_mib"], f["growth_mib_per_1000_pages"],
          f["growth_kib_per_site"], f["store_mib"], f["seconds"]] for k, f in figures.items()],
    ))
    if args.json:
        write_json(args.json, {"environment": environment(), "sites": args.sites, **figures})


if __name__ == "__main__":
    main()
