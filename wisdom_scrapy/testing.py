"""Test helpers shipped with the package: a quiet, threaded static HTTP server on 127.0.0.1.

Tests, benchmarks and the sample project's ``demo`` spider crawl local fixture sites through it::

    from wisdom_scrapy.testing import serve_directory

    with serve_directory("path/to/site") as base_url:   # "http://127.0.0.1:PORT/"
        ...  # crawl base_url + "index.html"

What the server does beyond :class:`http.server.SimpleHTTPRequestHandler`:

* binds 127.0.0.1 on a free port (port 0) and runs in a daemon thread, one thread per connection,
  HTTP/1.1 keep-alive (so a crawler can reuse connections);
* never logs to stderr, and ignores clients that hang up mid-response;
* answers ``.html``/``.htm`` as ``text/html; charset=utf-8``;
* looks files up by path only (query string and fragment are ignored);
* answers a path listed in ``_redirects.json`` at the served root (``{"/path": "/target"}``) with
  ``302 Found`` and ``Location: target``; the map itself is never served (404);
* never generates directory listings: a directory without ``index.html`` is a 404, so every page
  a crawl sees is a real file of the fixture.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["REDIRECTS_FILE", "StaticServer", "serve_directory"]

#: Name of the redirect map at the root of a served directory.
REDIRECTS_FILE = "_redirects.json"

_HTML_TYPE = "text/html; charset=utf-8"


class _QuietHandler(SimpleHTTPRequestHandler):
    """Static file handler with redirects, utf-8 HTML, no listings and no logging."""

    protocol_version = "HTTP/1.1"
    #: Seconds an idle keep-alive connection is kept open.
    timeout = 30

    def __init__(self, *args: Any, directory: str, redirects: dict[str, str], **kwargs: Any):
        self._redirects = redirects
        super().__init__(*args, directory=directory, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        if str(path).lower().endswith((".html", ".htm")):
            return _HTML_TYPE
        return super().guess_type(path)

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")
        return None

    def _redirect_or_hidden(self) -> bool:
        """Answer redirects and the hidden redirect map; True when the request is answered."""
        path = unquote(urlsplit(self.path).path)
        target = self._redirects.get(path)
        if target is not None:
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True
        if path.lstrip("/") == REDIRECTS_FILE:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return True
        return False

    def do_GET(self) -> None:
        if not self._redirect_or_hidden():
            super().do_GET()

    def do_HEAD(self) -> None:
        if not self._redirect_or_hidden():
            super().do_HEAD()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A crawler that closes a connection early is normal; anything else stays silent too
        # (the test or benchmark sees the failed response on its side).
        return


class StaticServer:
    """A static HTTP server over ``directory``, started and stopped explicitly.

    ``url`` is the base URL with a trailing slash (``http://127.0.0.1:PORT/``), available after
    :meth:`start`. ``start``/``stop`` are idempotent; the object is also a context manager.
    """

    def __init__(self, directory: str | os.PathLike[str], host: str = "127.0.0.1", port: int = 0):
        self.directory = Path(directory).resolve()
        if not self.directory.is_dir():
            raise ValueError(f"StaticServer: {str(directory)!r} is not a directory")
        self.host = host
        self.port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def _load_redirects(self) -> dict[str, str]:
        path = self.directory / REDIRECTS_FILE
        if not path.is_file():
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise ValueError(f"{path}: expected a JSON object mapping paths to redirect targets")
        return {("/" + k.lstrip("/")): v for k, v in data.items()}

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("StaticServer.url: the server is not running (call start())")
        return f"http://{self.host}:{self._server.server_port}/"

    def start(self) -> str:
        """Start serving (the redirect map is read now); returns the base URL."""
        if self._server is None:
            handler = partial(
                _QuietHandler, directory=str(self.directory), redirects=self._load_redirects()
            )
            server = _Server((self.host, self.port), handler)
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"StaticServer({self.directory.name})",
                daemon=True,
            )
            thread.start()
            self._server, self._thread = server, thread
        return self.url

    def stop(self) -> None:
        """Stop serving and release the port."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> StaticServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def serve_directory(path: str | os.PathLike[str]) -> Iterator[str]:
    """Serve ``path`` on 127.0.0.1 (free port) while the block runs; yields the base URL."""
    server = StaticServer(path)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
