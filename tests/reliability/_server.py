"""A local HTTP server for hostile pages: each path answers exact bytes with exact headers.

:class:`wisdom_scrapy.testing.StaticServer` serves files and always declares HTML as UTF-8; the
reliability tests need wrong charsets, binary bodies under ``text/html`` and a record of what
was requested (a page must never make the crawler fetch what only a browser or an XML parser
with network access would fetch).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Redirect:
    """An HTTP redirect answer: ``status`` with ``Location: location``."""

    location: str
    status: int = 302


#: A page: (content type header, body) or a callable producing the body (large pages), optionally
#: with more headers (``Content-Encoding`` of a compressed body), or a redirect.
Body = bytes | Callable[[], bytes]
Page = tuple[str, Body] | tuple[str, Body, dict[str, str]] | Redirect


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    pages: dict[str, Page]
    requested: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.requested.append(path)
        page = self.pages.get(path)
        if page is None or isinstance(page, Redirect):
            self.send_response(404 if page is None else page.status)
            if page is not None:
                self.send_header("Location", page.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        content_type, body, *headers = page
        data = body() if callable(body) else body
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        for name, value in (headers[0] if headers else {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


@contextmanager
def serve_pages(pages: dict[str, Page], host: str = "127.0.0.1"
                ) -> Iterator[tuple[str, list[str]]]:
    """Serve ``pages`` (path -> page; the dict may change while served) on ``host`` (any
    127.x.y.z: a second local host); yields (base URL, list of requested paths)."""
    requested: list[str] = []
    handler = type("Handler", (_Handler,), {"pages": pages, "requested": requested})
    server = _Server((host, 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_port}/", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
