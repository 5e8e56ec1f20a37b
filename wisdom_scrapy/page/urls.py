"""URL helpers shared by every stage (link resolution itself lives in
:mod:`wisdom_scrapy.page.model`)."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["host_key"]


def host_key(url: str) -> str:
    """Default site key: the lower-cased host with its port, if any (``example.org:8080``).

    The port is part of it because different local servers are different sites.

    >>> host_key("http://Example.org:8080/a/b.html")
    'example.org:8080'
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return f"{host}:{parts.port}" if parts.port else host
