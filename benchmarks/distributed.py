"""Distributed-crawl benchmark: pages/s with 1, 2 and 4 worker processes on one local site.

Serves a site directory (default: the Python 3.11 documentation of the ``python3.11-doc``
package, 530 pages) on 127.0.0.1 from this process, starts a private ``redis-server`` on a Unix
socket (database 0: the term-entropy store, database 1: the scrapy-redis frontier), and crawls
the site once per worker count with the sample project's ``site`` spider, each worker a
``scrapy crawl`` subprocess with ``SCHEDULER = "wisdom_scrapy.distributed.RedisScheduler"``.
A first row crawls with Scrapy's own scheduler in one process (same Redis store): the price of
the shared frontier.

Every crawl keeps every link (``WISDOM_FOCUS = "deprioritize"``), so every row fetches the same
pages. Per row:

* **pages**: distinct HTML pages fetched (200 responses, all workers), **dup** pages fetched
  twice (must be 0) and the store's page count (must equal pages);
* **pages/s (wall)**: pages / time from starting the first worker to the exit of the last one
  (process start-up, the store warm-up and the end-of-crawl wait included);
  **pages/s (crawl)**: pages / time from the first to the last fetch;
* **store RT/page**, **frontier RT/page**: Redis round trips per page (a pipeline or a script
  call is one), counted in every worker by :class:`RoundTrips` (this module) per database;
* **server CPU**: CPU time of this process (it only serves the site) over the wall time: the
  server is not the bottleneck when this is far below one core.

::

    python benchmarks/distributed.py                      # 1, 2, 4 workers on python3.11-doc
    python benchmarks/distributed.py --workers 1,2 --json out.json
    python benchmarks/distributed.py --site path/to/site --start index.html
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis
from redis.connection import AbstractConnection
from scrapy import signals
from scrapy.crawler import Crawler

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import environment, markdown_table, write_json
from tests.distributed.workers import distributed_settings, start_worker
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.store import open_store
from wisdom_scrapy.testing import StaticServer

PYDOC = Path("/usr/share/doc/python3.11/html")


class RoundTrips:
    """Benchmark-only extension: counts this process's Redis round trips per database (one per
    ``send_packed_command``: a command, a pipeline or a script call) and writes them as JSON to
    ``BENCH_ROUND_TRIPS`` when the engine stops."""

    def __init__(self, crawler: Crawler) -> None:
        self.path = Path(crawler.settings["BENCH_ROUND_TRIPS"])
        self.counts: Counter[int] = Counter()
        counts, send = self.counts, AbstractConnection.send_packed_command

        def counting(conn: Any, command: Any, check_health: bool = True) -> None:
            counts[int(conn.db)] += 1
            send(conn, command, check_health)

        AbstractConnection.send_packed_command = counting  # type: ignore[method-assign]
        crawler.signals.connect(self.stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RoundTrips:
        return cls(crawler)

    def stopped(self) -> None:
        self.path.write_text(json.dumps(self.counts))


def run(n_workers: int, base: str, socket: Path, out: Path, *, scrapy_scheduler: bool
        ) -> dict[str, Any]:
    """One crawl of the site by ``n_workers`` workers; its figures."""
    for db in (0, 1):
        with redis.Redis.from_url(f"unix://{socket}?db={db}") as client:
            client.flushdb()
    store_uri = f"unix://{socket}?db=0"
    settings: dict[str, Any] = {"WISDOM_FOCUS": "deprioritize", "LOG_LEVEL": "INFO"}
    if scrapy_scheduler:
        settings["WISDOM_STORE_URI"] = store_uri
    else:
        settings.update(distributed_settings(f"unix://{socket}?db=1", store_uri))
    out.mkdir(parents=True)
    extensions = {"tests.crawling.StatsDump": 0, "tests.distributed.workers.FetchLog": 0,
                  "benchmarks.distributed.RoundTrips": 0}
    cpu, started = time.process_time(), time.perf_counter()
    workers = []
    for i in range(n_workers):
        trips = out / f"w{i}-round-trips.json"
        workers.append(start_worker(
            "site", out, f"w{i}", args={"url": base + "index.html"},
            settings={**settings, "EXTENSIONS": extensions, "BENCH_ROUND_TRIPS": str(trips)},
        ))
    results = [w.wait(timeout=3600) for w in workers]
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu
    for w, r in zip(workers, results, strict=True):
        if r.returncode != 0 or r.stats.get("finish_reason") != "finished":
            print(r.log[-3000:], file=sys.stderr)
            raise SystemExit(f"worker {w.name} failed (exit {r.returncode})")
    times = [t for w in workers for t, url in w.fetch_times() if url.startswith("http")]
    fetched = [url for w in workers for url in w.fetched()]
    trips: Counter[str] = Counter()
    for i in range(n_workers):
        counts = json.loads((out / f"w{i}-round-trips.json").read_text())
        trips.update({"store" if db == "0" else "frontier": n for db, n in counts.items()})
    pages = len(set(fetched))
    with open_store(store_uri) as store:
        stored = store.page_count(host_key(base))
    return {
        "workers": n_workers,
        "scheduler": "scrapy" if scrapy_scheduler else "redis",
        "pages": pages,
        "duplicates": len(fetched) - pages,
        "stored": stored,
        "per_worker": [len(w.fetched()) for w in workers],
        "wall_seconds": round(wall, 2),
        "crawl_seconds": round(max(times) - min(times), 2),
        "pages_per_second_wall": round(pages / wall, 2),
        "pages_per_second_crawl": round(pages / (max(times) - min(times)), 2),
        "store_round_trips_per_page": round(trips["store"] / pages, 2),
        "frontier_round_trips_per_page": round(trips["frontier"] / pages, 2),
        "server_cpu_share": round(cpu / wall, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--site", type=Path, default=PYDOC, help="directory to serve")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the one-process crawl with Scrapy's scheduler")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument("--keep", type=Path, help="keep logs, items and stats in this directory")
    args = parser.parse_args()
    if not args.site.is_dir():
        raise SystemExit(f"{args.site} is not a directory (apt-get install python3.11-doc)")
    counts = [int(n) for n in args.workers.split(",")]
    work = args.keep or Path(tempfile.mkdtemp(prefix="wisdom-distributed-"))
    redis_dir = work / "redis"
    redis_dir.mkdir(parents=True, exist_ok=True)
    socket = redis_dir / "redis.sock"
    executable = shutil.which("redis-server")
    if executable is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    # a private server on a Unix socket only (no TCP port), without persistence
    server = subprocess.Popen(
        [executable, "--port", "0", "--unixsocket", str(socket), "--save", "",
         "--appendonly", "no", "--dir", str(redis_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    rows: list[dict[str, Any]] = []
    try:
        deadline = time.monotonic() + 10
        while not socket.exists():
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("redis-server did not start")
            time.sleep(0.05)
        with StaticServer(args.site) as site:
            plan = [(1, True)] if not args.no_baseline else []
            plan += [(n, False) for n in counts]
            for n, scrapy_scheduler in plan:
                label = f"{n}-{'scrapy' if scrapy_scheduler else 'redis'}"
                rows.append(run(n, site.url, socket, work / label,
                                scrapy_scheduler=scrapy_scheduler))
                print(f"{label}: {rows[-1]}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(markdown_table(
        ["workers", "scheduler", "pages", "dup", "stored", "pages/worker", "wall s",
         "pages/s (wall)", "pages/s (crawl)", "store RT/page", "frontier RT/page", "server CPU"],
        [[r["workers"], r["scheduler"], r["pages"], r["duplicates"], r["stored"],
          "/".join(map(str, r["per_worker"])), r["wall_seconds"], r["pages_per_second_wall"],
          r["pages_per_second_crawl"], r["store_round_trips_per_page"],
          r["frontier_round_trips_per_page"], f"{100 * r['server_cpu_share']:.0f} %"]
         for r in rows],
    ))
    if args.json:
        write_json(args.json, {"environment": environment(), "rows": rows})


if __name__ == "__main__":
    main()
