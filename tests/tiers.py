"""The two test tiers: ``pytest -m "not crawl"`` is the fast one (units, real stores, in-process
analyses); tests marked ``crawl`` start processes (``scrapy crawl``, analysis workers, a fresh
interpreter, a browser).

The mark is checked, not trusted: an audit hook sees every process a test (or its fixtures)
starts (``subprocess``, ``os.posix_spawn``, ``os.system``, ``os.fork``). An unmarked test's
process is refused (the fast tier stays fast) and the test fails with the command it tried,
even where the code under test survives the refusal (a worker pool falls back to analysing
in-process), so the fast tier cannot slowly fill with crawls nobody marked. The session's
``redis-server`` is a fixture every store test shares, not a crawl: it may start under any
test.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

# processes any tier may start (shared servers, not crawls)
SERVERS = frozenset({"redis-server"})

# the tests running now (setup or call), innermost last, with the processes refused to each
_running: list[tuple[pytest.Item, list[str]]] = []


def _program(args: Any) -> str:
    """The program a ``subprocess.Popen`` audit event starts, without its folder."""
    argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
    return os.path.basename(os.fsdecode(argv[0])) if argv else ""


#: audit events that start a process, and where each names the program it runs
STARTS = {
    "subprocess.Popen": lambda args: _program(args[1]),
    "os.posix_spawn": lambda args: _program(args[1]),  # Twisted's spawnProcess, multiprocessing
    "os.system": lambda args: _program(os.fsdecode(args[0]).split(maxsplit=1) or [""]),
    "os.fork": lambda args: "a fork",
}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in STARTS or not _running:
        return
    item, refused = _running[-1]
    program = STARTS[event](args)
    if item.get_closest_marker("crawl") is None and program not in SERVERS:
        refused.append(program)
        raise RuntimeError(f"{item.nodeid} is not marked crawl: it may not start {program}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "crawl: starts processes (scrapy crawls, workers, fresh interpreters, a browser)"
    )
    sys.addaudithook(_audit)


@contextlib.contextmanager
def _inside(item: pytest.Item) -> Iterator[None]:
    refused: list[str] = []
    _running.append((item, refused))
    try:
        yield
    finally:
        _running.pop()
    if refused:
        pytest.fail(
            f"starts processes ({', '.join(sorted(set(refused)))}) but is not marked crawl: add "
            "@pytest.mark.crawl (or a module's pytestmark) so `pytest -m 'not crawl'` stays fast",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _inside(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _inside(item):
        return (yield)
