"""Run real ``scrapy crawl`` commands from tests, in a subprocess (Twisted's reactor runs once
per process), and read back what they produced: exit code, items, stats and log."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

REPO = Path(__file__).resolve().parent.parent


class StatsDump:
    """Test-only extension: writes the crawl's final stats as JSON to ``TEST_STATS_PATH``
    (when the engine stops: after every spider_closed handler has counted its last figures)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.path = crawler.settings.get("TEST_STATS_PATH")
        crawler.signals.connect(self.closed, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsDump:
        return cls(crawler)

    def closed(self) -> None:
        assert self.crawler.stats is not None
        stats = self.crawler.stats.get_stats()
        Path(self.path).write_text(json.dumps(stats, default=str))


@dataclass
class CrawlResult:
    returncode: int
    log: str
    stats: dict[str, Any] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)


def crawl_command(
    spider: str,
    tmp_path: Path,
    *,
    args: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    name: str | None = None,
    feeds: tuple[str, ...] = (),
) -> tuple[list[str], Path, Path]:
    """(``scrapy crawl SPIDER`` command, items path, stats path); files are named after
    ``name`` (default: the spider), so several crawls can share ``tmp_path``. The store and
    the report are in ``tmp_path`` unless ``settings`` name others: a test crawl never writes
    into the checkout. ``feeds``: more ``-O`` outputs (``PATH:FORMAT``) beside the items'."""
    name = name or spider
    items_path = tmp_path / f"{name}-items.jsonl"
    stats_path = tmp_path / f"{name}-stats.json"
    all_settings: dict[str, Any] = {
        "EXTENSIONS": {"tests.crawling.StatsDump": 0},
        "TEST_STATS_PATH": str(stats_path),
        "LOG_LEVEL": "INFO",
        # the sample project keeps its store and report in the checkout: a test's go elsewhere
        "WISDOM_STORE_URI": f"sqlite:///{tmp_path / f'{name}.wisdom.db'}",
        "WISDOM_REPORT_URI": str(tmp_path / f"{name}-report.html"),
    }
    all_settings.update(settings or {})
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-O", f"{items_path}:jsonlines"]
    for feed in feeds:
        cmd += ["-O", feed]
    for key, value in (args or {}).items():
        cmd += ["-a", f"{key}={value}"]
    for key, value in all_settings.items():
        text = json.dumps(value) if isinstance(value, (dict, list, bool)) else str(value)
        cmd += ["-s", f"{key}={text}"]
    return cmd, items_path, stats_path


def read_result(returncode: int, log: str, items_path: Path, stats_path: Path) -> CrawlResult:
    """What a finished crawl left: its exit code, log, stats and items."""
    result = CrawlResult(returncode, log)
    if stats_path.exists():
        result.stats = json.loads(stats_path.read_text())
    if items_path.exists():
        # split on "\n" only: str.splitlines() also splits on U+2028, U+0085 … that a UTF-8
        # feed keeps raw inside strings (page text can hold them)
        text = items_path.read_text(encoding="utf-8")
        result.items = [json.loads(line) for line in text.split("\n") if line]
    return result


def run_crawl(
    spider: str,
    tmp_path: Path,
    *,
    args: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    timeout: float = 240,
    feeds: tuple[str, ...] = (),
) -> CrawlResult:
    """``scrapy crawl SPIDER`` from the repo root, items to a JSON-lines feed in ``tmp_path``
    (and to ``feeds``, see :func:`crawl_command`)."""
    cmd, items_path, stats_path = crawl_command(spider, tmp_path, args=args, settings=settings,
                                                feeds=feeds)  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )
    return read_result(proc.returncode, proc.stderr + proc.stdout, items_path, stats_path)


class Crawl:
    """A crawl (:func:`crawl_command`) run as a background subprocess, log to
    ``tmp_path/NAME.log``: :meth:`start` it, signal it (``process``), then :meth:`wait` for its
    :class:`CrawlResult`."""

    def __init__(
        self,
        spider: str,
        tmp_path: Path,
        *,
        args: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        self.cmd, self.items_path, self.stats_path = crawl_command(
            spider, tmp_path, args=args, settings=settings, name=name
        )
        self.log_path = tmp_path / f"{name or spider}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Crawl:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.cmd, cwd=REPO, stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT)
        return self

    def wait(self, timeout: float = 240) -> CrawlResult:
        assert self.process is not None, "start() first"
        try:
            returncode = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        log = self.log_path.read_text(errors="replace")
        return read_result(returncode, log, self.items_path, self.stats_path)
