"""Shared pytest fixtures.

Redis: store tests run against a REAL ``redis-server`` (Debian package ``redis-server``) started on
a free loopback port, never a mock. If it is not installed the Redis fixtures FAIL (they never
skip): a green run must mean that the Redis backend was tested.

Stores: ``store_uri`` is parametrised over every backend (memory, sqlite, redis), so a test that
takes it (or ``store`` / ``new_store``) runs once per backend.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import socket
import subprocess
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from tests.tiers import pytest_configure, pytest_runtest_call, pytest_runtest_setup  # noqa: F401
from wisdom_scrapy.store import TermStore, open_store

# When a hypothesis test fails, hypothesis' pytest plugin imports libcst to suggest a patch, and
# that import warns (DeprecationWarning from mypy_extensions): under filterwarnings = error this
# becomes an INTERNALERROR that hides the failure. Import it once here with warnings ignored.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with contextlib.suppress(ImportError):
        import hypothesis.extra._patching  # noqa: F401

# ------------------------------------------------------------------------------------------
# redis-server
# ------------------------------------------------------------------------------------------

REDIS_MISSING = "redis-server is not installed: run .ci/run or apt-get install redis-server"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1 (no persistence unless ``extra_args`` asks).

    ``stop()`` and ``start()`` again reuse the same port and directory, which is how tests
    simulate a restart during a crawl.
    """

    def __init__(self, directory: Path, *extra_args: str, port: int | None = None) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            pytest.fail(REDIS_MISSING, pytrace=False)
        self.executable = executable
        self.directory = directory
        self.extra_args = extra_args
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        assert self.process is None, "already running"
        self.directory.mkdir(parents=True, exist_ok=True)
        log = self.directory / "redis.log"
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.directory),
                "--logfile", str(log),
                "--daemonize", "no",
                *self.extra_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self.ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                text = log.read_text(errors="replace") if log.exists() else "(no log)"
                pytest.fail(f"redis-server on port {self.port} did not start:\n{text[-2000:]}")
            time.sleep(0.02)

    def ping(self) -> bool:
        """True when the server answers PING (+PONG, or -NOAUTH when it wants a password)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and wait for it; a no-op if it is not running."""
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL (``redis://127.0.0.1:PORT/0``) of a redis-server shared by the whole session."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def redis_uri(redis_server: str) -> str:
    """The session server's URL with database 0 emptied for this test."""
    with redis.Redis.from_url(redis_server) as client:
        client.flushdb()
    return redis_server


@pytest.fixture
def redis_server_factory(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """Starts private redis-servers (for tests that stop or reconfigure one); stops them at the end.

    ``factory(*extra_args)`` returns a running :class:`RedisServer`.
    """
    servers: list[RedisServer] = []

    def factory(*extra_args: str) -> RedisServer:
        server = RedisServer(tmp_path / f"redis-{len(servers)}", *extra_args)
        servers.append(server)
        server.start()
        return server

    try:
        yield factory
    finally:
        for server in servers:
            server.stop()


# ------------------------------------------------------------------------------------------
# Term-entropy stores
# ------------------------------------------------------------------------------------------

STORE_BACKENDS = ["memory", "sqlite", "redis"]


@pytest.fixture(params=STORE_BACKENDS)
def store_uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """URI of an empty store, once per backend (the redis one needs a running redis-server)."""
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("redis_uri"))


@pytest.fixture
def new_store(store_uri: str, tmp_path: Path) -> Iterator[Callable[[], TermStore]]:
    """Opens fresh, empty stores of ``store_uri``'s backend (each call a new one); closes them."""
    opened: list[TermStore] = []
    counter = itertools.count()

    def factory() -> TermStore:
        n = next(counter)
        uri = store_uri
        if n and uri.startswith("sqlite:"):
            uri = f"sqlite:///{tmp_path / f'store-{n}.db'}"
        elif n and uri.startswith("redis:"):
            uri = f"{uri}?prefix=wisdom-test-{n}"
        store = open_store(uri)
        opened.append(store)
        return store

    try:
        yield factory
    finally:
        for store in opened:
            store.close()


@pytest.fixture
def store(new_store: Callable[[], TermStore]) -> TermStore:
    """An empty store, once per backend."""
    return new_store()


# ------------------------------------------------------------------------------------------
# Real pages
# ------------------------------------------------------------------------------------------

PYTHON_DOC = Path("/usr/share/doc/python3.11/html")
PYTHON_DOC_URL = "https://docs.python.org/3.11/"


@pytest.fixture(scope="session")
def python_doc_pages() -> list[tuple[str, bytes]]:
    """60 pages of the Python 3.11 documentation (python3.11-doc) as (url, html), spread evenly."""
    files = sorted(PYTHON_DOC.rglob("*.html")) if PYTHON_DOC.is_dir() else []
    if len(files) < 60:
        pytest.fail(f"{PYTHON_DOC} is missing: apt-get install python3.11-doc", pytrace=False)
    chosen = files[:: len(files) // 60][:60]
    return [(PYTHON_DOC_URL + p.relative_to(PYTHON_DOC).as_posix(), p.read_bytes()) for p in chosen]
