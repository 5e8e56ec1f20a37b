"""Real ``scrapy crawl`` workers on one scrapy-redis frontier, for the distributed tests and
``benchmarks/distributed.py``: started as subprocesses (each a Twisted reactor of its own), each
with its own items feed, stats dump, log and fetch log."""

from __future__ import annotations

import asyncio
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response

from tests.crawling import REPO, CrawlResult, crawl_command, read_result


class FetchLog:
    """Test-only extension: appends ``STATUS TIME URL`` of every response (TIME: seconds since
    the epoch) to ``TEST_FETCH_LOG``,
    line by line, so a worker killed with SIGKILL leaves what it had fetched."""

    def __init__(self, crawler: Crawler) -> None:
        self.file: IO[str] = open(crawler.settings["TEST_FETCH_LOG"], "a", buffering=1)  # noqa: SIM115
        crawler.signals.connect(self.received, signal=signals.response_received)
        crawler.signals.connect(self.closed, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FetchLog:
        return cls(crawler)

    def received(self, response: Response) -> None:
        self.file.write(f"{response.status} {time.time():.3f} {response.url}\n")

    def closed(self) -> None:
        self.file.close()


class StallingPipeline:
    """Test-only item pipeline: every item waits ``TEST_STALL_SECONDS`` (without blocking the
    reactor), as an item waits for a slow pipeline, while the rest of its response's output
    waits behind it in Scrapy's queue."""

    def __init__(self, crawler: Crawler) -> None:
        self.seconds = crawler.settings.getfloat("TEST_STALL_SECONDS")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StallingPipeline:
        return cls(crawler)

    async def process_item(self, item: Any) -> Any:
        await asyncio.sleep(self.seconds)
        return item


def distributed_settings(redis_url: str, store_uri: str, **extra: Any) -> dict[str, Any]:
    """The settings of a distributed crawl (README: "Several crawler processes")."""
    return {
        "SCHEDULER": "wisdom_scrapy.distributed.RedisScheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "REDIS_URL": redis_url,
        "WISDOM_STORE_URI": store_uri,
        **extra,
    }


@dataclass
class Worker:
    """One running (or finished) ``scrapy crawl`` subprocess."""

    name: str
    process: subprocess.Popen[bytes]
    items_path: Path
    stats_path: Path
    fetch_path: Path
    log_path: Path

    def wait(self, timeout: float = 300) -> CrawlResult:
        returncode = self.process.wait(timeout=timeout)
        log = self.log_path.read_text(errors="replace")
        return read_result(returncode, log, self.items_path, self.stats_path)

    def fetched(self) -> list[str]:
        """URLs of the 200 http(s) responses this worker received, in order (repeats kept);
        wisdom_scrapy's own ``data:`` request for late items is not a fetch."""
        return [url for _, url in self.fetch_times() if url.startswith("http")]

    def fetch_times(self) -> list[tuple[float, str]]:
        """(time, URL) of the 200 responses this worker received, in order."""
        if not self.fetch_path.exists():
            return []
        rows = (line.split(" ", 2) for line in self.fetch_path.read_text().splitlines())
        return [(float(t), url) for status, t, url in rows if status == "200"]

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


def start_worker(
    spider: str,
    tmp_path: Path,
    name: str,
    *,
    args: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
) -> Worker:
    """Start ``scrapy crawl SPIDER`` from the repo root; files in ``tmp_path`` named ``name-*``."""
    fetch_path = tmp_path / f"{name}-fetched.txt"
    all_settings = {
        "EXTENSIONS": {"tests.crawling.StatsDump": 0, "tests.distributed.workers.FetchLog": 0},
        "TEST_FETCH_LOG": str(fetch_path),
        **(settings or {}),
    }
    cmd, items_path, stats_path = crawl_command(
        spider, tmp_path, args=args, settings=all_settings, name=name
    )
    log_path = tmp_path / f"{name}.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    return Worker(name, process, items_path, stats_path, fetch_path, log_path)
